"""The CPU fallback for operators with no ``webgpu`` kernel: call counts and the on/off switch.

An operator without a ``webgpu`` kernel runs on the CPU (inputs copied there, results copied back)
with a one-time ``UserWarning`` naming it. ``TORCH_WEBGPU_FALLBACK=0`` makes it a
``NotImplementedError`` instead; ``fallback_enabled(False)`` does the same for a block of code.
"""

import contextlib

import torch

__all__ = ["fallback_counts", "reset_fallback_counts", "fallback_enabled", "is_fallback_enabled"]


def fallback_counts():
    """Calls that went through the CPU fallback since the last reset: {"aten::igamma.out": 3, ...}."""
    names, counts = torch.ops.webgpu.fallback_counts()
    return dict(zip(names, counts))


def reset_fallback_counts():
    """Clears the counts; each operator's next fallback warns again."""
    torch.ops.webgpu.reset_fallback_counts()


def is_fallback_enabled():
    """Whether an operator with no webgpu kernel runs on the CPU now (else it raises)."""
    return bool(torch.ops.webgpu.fallback_enabled())


@contextlib.contextmanager
def fallback_enabled(enabled):
    """Turns the CPU fallback on or off inside the block, over ``TORCH_WEBGPU_FALLBACK``.

    ``None`` follows the environment variable. The previous setting comes back on exit. The switch
    is process-wide, not per thread.
    """
    previous = torch.ops.webgpu.fallback_override()
    torch.ops.webgpu.set_fallback_enabled(None if enabled is None else bool(enabled))
    try:
        yield
    finally:
        torch.ops.webgpu.set_fallback_enabled(previous)
