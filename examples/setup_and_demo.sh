#!/usr/bin/env bash
# One command from a fresh Debian/Ubuntu machine to a result on the `webgpu` device: installs a
# Vulkan driver and build tools, builds torch-webgpu into .venv and runs examples/demo.py.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# mesa-vulkan-drivers provides lavapipe, a CPU Vulkan adapter, so this works without a GPU; with a
# GPU, its vendor's Vulkan driver is picked first. g++/python3-dev build the extension.
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  mesa-vulkan-drivers libvulkan1 g++ make python3-dev python3-venv

"$PY" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
# torch is pinned exactly: the extension is compiled against the torch it runs with.
python -m pip install -q torch==2.13.0 dawn-python==0.3.0 scikit-build-core pybind11 ninja cmake \
  numpy pytest expecttest hypothesis scikit-learn
# No build isolation: an isolated build would compile against a different torch fetched for the build.
python -m pip install --no-build-isolation --no-deps .

python examples/demo.py
