# Shared pytest setup: the CPU fallback is off for every test (a passing op test means a native
# kernel), and the package under test is the installed one.
import os

os.environ.setdefault("TORCH_WEBGPU_FALLBACK", "0")

import pytest  # noqa: E402
import torch  # noqa: E402
import torch_webgpu  # noqa: E402,F401

DEVICE = "webgpu"

