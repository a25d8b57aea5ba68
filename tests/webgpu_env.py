"""What the test files share about the device under test (tests/conftest.py puts this folder on
sys.path, so ``from webgpu_env import DEV`` works under ``--import-mode=importlib`` from any folder).

- ``DEV``: the device name the tests run on; ``DTYPES``: the dtypes the device holds.
- ``fallback_off()``: turns the CPU fallback off for this process (``TORCH_WEBGPU_FALLBACK=0``), so a
  passing op test means a native kernel; conftest.py calls it before any test module is imported.
- ``native_env(**extra)``: the environment for a child interpreter, with the fallback off there too.
- ``flushes_subnormal_operands()``: whether the adapter flushes float32 subnormals (``TINY`` the least
  normal float32).
"""

import functools
import os

import torch

DEV = "webgpu"

# The dtypes the webgpu device holds (DESIGN.md: no float64, no complex), widest float first.
DTYPES = (
    torch.float32,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
)

# Held too, with few ops (CPU's own coverage of them is small): uint16/32/64 and the float8 dtypes.
# Kept out of DTYPES so the tests sweeping every op over DTYPES stay as they are; tests/test_uint_fp8.py
# covers them, and the OpInfo harness adds them in TORCH_WEBGPU_OPINFO=full mode.
UINT_FP8_DTYPES = (
    torch.uint16,
    torch.uint32,
    torch.uint64,
    torch.float8_e4m3fn,
    torch.float8_e5m2,
    torch.float8_e4m3fnuz,
    torch.float8_e5m2fnuz,
)
# complex64 (pairs of float32): stored, copied and converted like the dtypes above, with a subset of
# ops native (docs/design.md, "Dtype storage"); not in DTYPES, whose users sweep every op over it.
COMPLEX_DTYPES = (torch.complex64,)


TINY = 2.0**-126  # the least normal float32


@functools.cache
def flushes_subnormal_operands():
    """Whether the adapter's float arithmetic reads subnormal operands as zero and flushes subnormal
    results (NVIDIA's Vulkan driver does, and Dawn offers no way to ask otherwise; lavapipe keeps
    them): a property of the adapter that kernels do not work around, beyond the results built from
    bits (docs/design.md, "Subnormals"). Tests of subnormal inputs restrict themselves there. Probed
    once per process."""
    return (torch.tensor([2.0**-140], device=DEV) * 2.0).cpu().item() == 0.0


def fallback_off():
    """Makes every operator without a webgpu kernel raise NotImplementedError in this process."""
    os.environ["TORCH_WEBGPU_FALLBACK"] = "0"


def native_env(**extra):
    """os.environ for a subprocess, with the CPU fallback off and ``extra`` added."""
    return dict(os.environ, TORCH_WEBGPU_FALLBACK="0", **extra)
