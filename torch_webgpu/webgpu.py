"""``torch.webgpu``: the device module, mirroring ``torch.cuda`` and ``torch.mps``."""
from typing import Any, Dict, Optional, Union

import torch

from . import _C

_Device = Optional[Union[int, str, torch.device]]


def _index(device: _Device = None) -> int:
    if device is None:
        return -1
    if isinstance(device, int):
        return device
    device = torch.device(device)
    if device.type != "webgpu":
        raise ValueError(f"torch.webgpu: expected a webgpu device, got {device}")
    return -1 if device.index is None else device.index


def is_available() -> bool:
    """True when Dawn loads and finds a WebGPU adapter."""
    if _is_in_bad_fork():  # the parent had one (as torch.cuda, though it cannot be used here)
        return True
    try:
        _C._load_dawn()
    except RuntimeError:
        return False
    return _C._is_available()


def device_count() -> int:
    """Number of webgpu devices."""
    if _is_in_bad_fork():
        from . import _integration
        return _integration._parent_device_count
    try:
        _C._load_dawn()
    except RuntimeError:
        return 0
    return _C._device_count()


def is_initialized() -> bool:
    return True


def _is_in_bad_fork() -> bool:
    """True in a process forked after its parent had used the webgpu device: the device cannot be
    used there (use the 'spawn' or 'forkserver' start method)."""
    return _C._in_bad_fork()


def _lazy_init() -> None:
    # Called by PyTorch before the first webgpu tensor is created; raises in a bad fork.
    if _is_in_bad_fork():
        _C._device_count()


def init() -> None:
    _C._init(-1)


def current_device() -> int:
    return _C._current_device()


def set_device(device: _Device) -> None:
    index = _index(device)
    if index >= 0:
        _C._set_device(index)


class device:
    """Context manager that changes the current webgpu device."""

    def __init__(self, device: _Device):
        self.idx = _index(device)
        self.prev = -1

    def __enter__(self):
        self.prev = current_device()
        if self.idx >= 0:
            _C._set_device(self.idx)

    def __exit__(self, *args):
        _C._set_device(self.prev)
        return False


def synchronize(device: _Device = None) -> None:
    """Waits for all work recorded on the device to finish."""
    _C._synchronize(_index(device))


def default_generator(device: _Device = None) -> torch.Generator:
    return _C._default_generator(_index(device))


def manual_seed(seed: int) -> None:
    default_generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    for i in range(max(device_count(), 1)):
        default_generator(i).manual_seed(int(seed))


def seed() -> None:
    default_generator().seed()


def seed_all() -> None:
    for i in range(max(device_count(), 1)):
        default_generator(i).seed()


def initial_seed() -> int:
    return default_generator().initial_seed()


def get_rng_state(device: _Device = None) -> torch.Tensor:
    return default_generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: _Device = None) -> None:
    default_generator(device).set_state(new_state)


def memory_stats(device: _Device = None) -> Dict[str, int]:
    return dict(_C._memory_stats(_index(device)))


def memory_allocated(device: _Device = None) -> int:
    """Bytes held by live tensors (block sizes, as the caching allocator hands them out)."""
    return _C._memory_stats(_index(device))["allocated_bytes"]


def max_memory_allocated(device: _Device = None) -> int:
    return _C._memory_stats(_index(device))["max_allocated_bytes"]


def memory_reserved(device: _Device = None) -> int:
    return _C._memory_stats(_index(device))["reserved_bytes"]


def max_memory_reserved(device: _Device = None) -> int:
    return _C._memory_stats(_index(device))["max_reserved_bytes"]


def reset_peak_memory_stats(device: _Device = None) -> None:
    _C._reset_peak_memory_stats(_index(device))


def empty_cache() -> None:
    """Releases cached, unused device buffers."""
    _C._empty_cache()


def info(device: _Device = None) -> Dict[str, Any]:
    """Adapter, backend, driver, limits, features (with subgroup-matrix configurations), the Dawn
    toggles asked for and in effect, and the Dawn runtime in use."""
    from . import _dawn
    d = dict(_C._info(_index(device)))
    d["dawn_version"] = _dawn.dawn_version()
    return d


def stream_counters(device: _Device = None) -> Dict[str, int]:
    """Submits, waits, dispatches, pipeline compiles, ... since the last reset (for tests, benchmarks)."""
    return dict(_C._stream_counters(_index(device)))


def reset_stream_counters(device: _Device = None) -> None:
    _C._reset_stream_counters(_index(device))
