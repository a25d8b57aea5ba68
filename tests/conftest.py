# Shared pytest setup: the CPU fallback is off for every test (a passing op test means a native
# kernel), and the package under test is the installed one. The device name and the fallback helpers
# live in tests/webgpu_env.py, importable from every test module (this folder goes on sys.path).
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # works under --import-mode=importlib

import webgpu_env  # noqa: E402

webgpu_env.fallback_off()

import pytest  # noqa: E402,F401
import torch  # noqa: E402,F401

import torch_webgpu  # noqa: E402,F401
