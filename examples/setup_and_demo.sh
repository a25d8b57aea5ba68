#!/usr/bin/env bash
# One command from a fresh Debian/Ubuntu machine to a result on the `webgpu` device: installs a
# Vulkan driver and build tools, builds torch-webgpu into .venv and runs examples/demo.py.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# A Vulkan driver current Dawn accepts (lavapipe from Mesa >= 25, a CPU adapter, so this works
# without a GPU; with a GPU, its vendor's driver is picked first) and the build tools.
bash tools/install_vulkan.sh

"$PY" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
# torch is pinned exactly: the extension is compiled against the torch it runs with.
# The examples' own dependencies (tqdm, matplotlib, scikit-learn, transformers) are in examples/requirements.txt.
python -m pip install -q torch==2.13.0 wgpudawn==0.32.0.4 scikit-build-core pybind11 ninja cmake \
  numpy pytest expecttest hypothesis -r examples/requirements.txt
# No build isolation: an isolated build would compile against a different torch fetched for the build.
python -m pip install --no-build-isolation --no-deps .

python examples/demo.py
