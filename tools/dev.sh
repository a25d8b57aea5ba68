#!/usr/bin/env bash
# Incremental developer build without pip, for one checkout (or git worktree) at a time:
#   bash tools/dev.sh            configure once, build into build/dev, stage the package
#   bash tools/dev.sh py ARGS    run python with the staged package first on sys.path (from /tmp)
#   bash tools/dev.sh test ARGS  run pytest against the staged package (fallback off): over tests/,
#                                or over the ABSOLUTE test paths given first
#   bash tools/dev.sh cpp ARGS   run the C++ unit tests (tests/cpp) of this build
# The staged package (build/dev/stage/torch_webgpu) links the checkout's Python files and the fresh
# _C module, so several worktrees can build and test side by side without pip installs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
B="$ROOT/build/dev"
PY="${PYTHON:-python}"
stage_dir="$B/stage"

build() {
  if [ ! -f "$B/build.ninja" ]; then
    local launcher=()
    if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
    cmake -S "$ROOT" -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTORCH_WEBGPU_BUILD_TESTS=ON \
      -DPython_EXECUTABLE="$(command -v "$PY")" "${launcher[@]}" >/dev/null
  fi
  CCACHE_BASEDIR="$ROOT" cmake --build "$B" -j"${JOBS:-2}" "$@"
  rm -rf "$stage_dir" && mkdir -p "$stage_dir/torch_webgpu"
  for f in "$ROOT"/torch_webgpu/*.py; do ln -s "$f" "$stage_dir/torch_webgpu/"; done
  ln -s "$B"/_C*.so "$stage_dir/torch_webgpu/"
}

case "${1:-build}" in
  build) shift || true; build "$@" ;;
  py) shift; cd /tmp && PYTHONPATH="$stage_dir" exec "$PY" "$@" ;;
  test) shift; tests=("$ROOT/tests"); [ $# -gt 0 ] && [ -e "$1" ] && tests=()
        cd /tmp && TORCH_WEBGPU_FALLBACK=0 PYTHONPATH="$stage_dir" exec "$PY" -m pytest "${tests[@]}" \
          -q -p no:cacheprovider --import-mode=importlib "$@" ;;
  cpp) shift; PYTHONPATH="$(cd /tmp && "$PY" -c 'import os, wgpudawn; print(os.path.dirname(os.path.dirname(wgpudawn.__file__)))')" \
         exec "$B/webgpu_cpp_tests" "$@" ;;
  *) echo "usage: tools/dev.sh [build|py ARGS|test ARGS|cpp ARGS]" >&2; exit 2 ;;
esac
