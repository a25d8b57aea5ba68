#!/usr/bin/env bash
# The whole test suite, against the installed torch_webgpu: pytest over tests/, then the C++ unit
# tests (shipped in the package as torch_webgpu/bin/webgpu_cpp_tests) through ctest.
# Usage: bash tests/run.sh [extra pytest args]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY="${PYTHON:-python}"
# Tests run with the CPU fallback off: a passing op test means a native kernel.
export TORCH_WEBGPU_FALLBACK=0
# CI systems set CI, and some of torch changes behaviour on it (Inductor's implicit fallbacks refuse
# ops that have a decomposition): a local run sets it too, so it meets what CI meets.
export CI="${CI:-1}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Run from an empty directory so the source tree's torch_webgpu/ can never shadow the installed one.
cd "$work"
"$PY" -c 'import torch_webgpu, sys; print("torch_webgpu from", torch_webgpu.__file__); sys.exit("torch_webgpu imported from the source tree" if "/site-packages/" not in torch_webgpu.__file__ and "/dist-packages/" not in torch_webgpu.__file__ else 0)'
"$PY" -m pytest "$here" -q -p no:cacheprovider --import-mode=importlib -rs "$@"

bin="$("$PY" -c 'import os, torch_webgpu; print(os.path.join(os.path.dirname(torch_webgpu.__file__), "bin", "webgpu_cpp_tests"))')"
# The C++ tests embed Python to load Dawn from wgpudawn: they need this environment's site-packages.
site="$("$PY" -c 'import os, wgpudawn; print(os.path.dirname(os.path.dirname(wgpudawn.__file__)))')"
[ -x "$bin" ] || { echo "C++ tests not found at $bin"; exit 1; }
mkdir -p "$work/ctest"
cat > "$work/ctest/CTestTestfile.cmake" <<CT
add_test(webgpu_cpp_tests "$bin")
set_tests_properties(webgpu_cpp_tests PROPERTIES ENVIRONMENT "PYTHONPATH=$site" TIMEOUT 600)
CT
ctest --test-dir "$work/ctest" --output-on-failure
