"""``torch.webgpu``: the device module, mirroring ``torch.cuda`` and ``torch.mps``.

Nothing here opens the adapter at import: the device is created at its first use (a tensor on it,
``init()``, ``synchronize()``, ...), so ``is_initialized()`` is False until then.
"""

from typing import Any, Dict, List, Optional, Union

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
    """True once a webgpu device has been created in this process (its first use)."""
    return bool(_C._is_initialized())


def _is_in_bad_fork() -> bool:
    """True in a process forked after its parent had used the webgpu device: the device cannot be
    used there (use the 'spawn' or 'forkserver' start method)."""
    return _C._in_bad_fork()


def init() -> None:
    """Creates the current device now rather than at its first use."""
    _C._init(-1)


def _lazy_init() -> None:
    # Called by PyTorch before the first webgpu tensor is created; raises in a bad fork.
    if _is_in_bad_fork():
        _C._device_count()
    if not is_initialized():
        init()


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


def get_rng_state_all() -> List[torch.Tensor]:
    """The RNG state of every webgpu device, in device order."""
    return [get_rng_state(i) for i in range(max(device_count(), 1))]


def set_rng_state_all(new_states) -> None:
    """Sets each device's RNG state from ``get_rng_state_all()``'s list."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# ---- memory (the caching pool, runtime/allocator.cpp) ----------------------------------------------

OutOfMemoryError = torch.OutOfMemoryError  # what an allocation that does not fit raises, as on CUDA


def memory_stats(device: _Device = None) -> Dict[str, int]:
    """The pool's statistics under ``torch.cuda.memory_stats()``'s keys (``"allocated_bytes.all.current"``,
    ``"reserved_bytes.large_pool.peak"``, ``"num_ooms"``, ...; small_pool is blocks of at most 1 MiB),
    sorted, plus ``cache_hits`` (allocations served from the cache). Each block counts its rounded size,
    so ``requested_bytes`` equals ``allocated_bytes``; nothing is split, so ``inactive_split*`` stay 0."""
    return dict(sorted(_C._memory_stats(_index(device)).items()))


def memory_stats_as_nested_dict(device: _Device = None) -> Dict[str, Any]:
    """``memory_stats()`` as nested dicts (``["allocated_bytes"]["all"]["current"]``), as torch.cuda's."""
    nested: Dict[str, Any] = {}
    for key, value in memory_stats(device).items():
        *path, leaf = key.split(".")
        d = nested
        for part in path:
            d = d.setdefault(part, {})
        d[leaf] = value
    return nested


def memory_allocated(device: _Device = None) -> int:
    """Bytes held by live tensors (block sizes, as the caching allocator hands them out)."""
    return _C._memory_stats(_index(device))["allocated_bytes.all.current"]


def max_memory_allocated(device: _Device = None) -> int:
    """The peak of ``memory_allocated()`` since the start or ``reset_peak_memory_stats()``."""
    return _C._memory_stats(_index(device))["allocated_bytes.all.peak"]


def memory_reserved(device: _Device = None) -> int:
    """Bytes of the buffers the pool holds: live tensors' and cached ones."""
    return _C._memory_stats(_index(device))["reserved_bytes.all.current"]


def max_memory_reserved(device: _Device = None) -> int:
    return _C._memory_stats(_index(device))["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device: _Device = None) -> None:
    """Every ``*.peak`` statistic starts again from its current value."""
    _C._reset_peak_memory_stats(_index(device))


def reset_accumulated_memory_stats(device: _Device = None) -> None:
    """Every ``*.allocated`` and ``*.freed`` sum, ``num_ooms``, ``num_alloc_retries`` and ``cache_hits``
    start again from 0."""
    _C._reset_accumulated_memory_stats(_index(device))


def reset_max_memory_allocated(device: _Device = None) -> None:
    """Deprecated in torch.cuda as here: ``reset_peak_memory_stats()``."""
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device: _Device = None) -> None:
    """Deprecated in torch.cuda as here: ``reset_peak_memory_stats()``."""
    reset_peak_memory_stats(device)


def memory_cached(device: _Device = None) -> int:
    """Deprecated in torch.cuda as here: ``memory_reserved()``."""
    return memory_reserved(device)


def max_memory_cached(device: _Device = None) -> int:
    """Deprecated in torch.cuda as here: ``max_memory_reserved()``."""
    return max_memory_reserved(device)


def mem_get_info(device: _Device = None) -> tuple:
    """(free, total) bytes of the device. total is the adapter's device-local memory heaps as WebGPU
    reports them; free is total less what this process's pool holds (WebGPU does not report other
    processes' use). NotImplementedError where the adapter reports no memory heaps."""
    return tuple(_C._mem_get_info(_index(device)))


def _bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)


def memory_summary(device: _Device = None, abbreviated: bool = False) -> str:
    """A readable table of ``memory_stats()``, as ``torch.cuda.memory_summary()`` prints: current,
    peak, allocated and freed, for all blocks and (unless abbreviated) small and large ones."""
    stats = memory_stats(device)
    rows = [
        ("Allocated memory", "allocated_bytes", True),
        ("Active memory", "active_bytes", True),
        ("Requested memory", "requested_bytes", True),
        ("GPU reserved memory", "reserved_bytes", True),
        ("Allocations", "allocation", False),
        ("Active allocs", "active", False),
        ("GPU reserved segments", "segment", False),
    ]
    kinds = ("all",) if abbreviated else ("all", "large_pool", "small_pool")
    index = device if isinstance(device, int) else current_device() if device is None else _index(device)
    width = 75
    lines = [
        "=" * width,
        f" webgpu memory summary, device {index}, {stats['num_ooms']} OOMs, "
        f"{stats['num_alloc_retries']} retries after emptying the cache",
        "-" * width,
        f" {'Metric':<24}| {'Cur Usage':>11} | {'Peak Usage':>11} | {'Tot Alloc':>11} | {'Tot Freed':>11}",
        "-" * width,
    ]
    for title, key, in_bytes in rows:
        for kind in kinds:
            fmt = _bytes if in_bytes else str
            label = title if kind == "all" else f"  from {kind.replace('_pool', '')} pool"
            vals = [fmt(stats[f"{key}.{kind}.{m}"]) for m in ("current", "peak", "allocated", "freed")]
            lines.append(f" {label:<24}| " + " | ".join(f"{v:>11}" for v in vals))
        lines.append("-" * width)
    lines.append("=" * width)
    return "\n".join(lines) + "\n"


def empty_cache() -> None:
    """Releases cached, unused device buffers."""
    _C._empty_cache()


# ---- the adapter --------------------------------------------------------------------------------


class _DeviceProperties:
    """``torch.webgpu.get_device_properties()``: what ``torch.cuda``'s properties say that WebGPU can
    tell (name, total_memory, is_integrated), and the adapter's own facts (vendor, backend, driver,
    subgroup sizes, features, limits)."""

    def __init__(self, info: Dict[str, Any]):
        self.name = info["adapter"]
        self.total_memory = int(info.get("memory_bytes", 0))  # 0 where the adapter does not report it
        self.type = info["adapter_type"]
        self.is_integrated = int(info["adapter_type"] in ("integrated-gpu", "cpu"))
        self.vendor = info["vendor"]
        self.architecture = info["architecture"]
        self.driver = info["driver"]
        self.backend = info["backend"]
        self.subgroup_min_size = info["subgroup_min_size"]
        self.subgroup_max_size = info["subgroup_max_size"]
        self.features = list(info["features"])
        self.limits = dict(info["limits"])
        self.subgroup_matrix_configs = list(info["subgroup_matrix_configs"])

    def __repr__(self):
        return (
            f"_WebGPUDeviceProperties(name='{self.name}', backend='{self.backend}', type='{self.type}', "
            f"total_memory={self.total_memory // (1024 * 1024)}MB, subgroup_size={self.subgroup_min_size}-"
            f"{self.subgroup_max_size}, features={self.features})"
        )


def get_device_properties(device: _Device = None) -> _DeviceProperties:
    return _DeviceProperties(info(device))


def get_device_name(device: _Device = None) -> str:
    """The adapter's name, as the driver reports it (e.g. "NVIDIA H100 80GB HBM3")."""
    return info(device)["adapter"]


def is_tf32_supported() -> bool:
    """False: float32 matmuls and convolutions compute in float32 (no TF32 path)."""
    return False


def get_arch_list() -> List[str]:
    """[]: WGSL is compiled for the adapter at run time; the package has no per-architecture code."""
    return []


def can_device_access_peer(device: _Device, peer_device: _Device) -> bool:
    """False: copies between webgpu devices go through host memory."""
    _index(device), _index(peer_device)
    return False


class device_of(device):
    """Context manager that makes the device of ``obj`` (a tensor) current; a no-op for a tensor on
    another device type, as ``torch.cuda.device_of``."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == "webgpu" else -1)


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


# ---- Mixed precision ---------------------------------------------------------------------------
#
# torch.autocast("webgpu") asks the device module only for get_amp_supported_dtype(); the cast policy
# itself (which ops run in the autocast dtype, which in float32) is registered in C++ on the
# AutocastPrivateUse1 key (csrc/core/autocast.cpp). The per-device state lives in torch itself; the
# functions below read and set it, as the device modules of older torch releases had to.


def get_amp_supported_dtype() -> List[torch.dtype]:
    """The dtypes ``torch.autocast("webgpu", dtype=...)`` accepts. Both compute in float32 inside
    kernels and are stored as 16-bit halves (bfloat16 is emulated, float16 converts in hardware where
    the adapter has shader-f16)."""
    return [torch.float16, torch.bfloat16]


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """bfloat16 tensors and autocast work on every adapter (emulated: stored packed, computed in f32)."""
    return True


def is_autocast_enabled() -> bool:
    return torch.is_autocast_enabled("webgpu")


def set_autocast_enabled(enabled: bool) -> None:
    torch.set_autocast_enabled("webgpu", enabled)


def get_autocast_dtype() -> torch.dtype:
    return torch.get_autocast_dtype("webgpu")


def set_autocast_dtype(dtype: torch.dtype) -> None:
    torch.set_autocast_dtype("webgpu", dtype)


# ---- Streams and events ----------------------------------------------------------------------
#
# Each webgpu device has one in-order queue. New streams get ids of their own, but all of a
# device's streams alias that queue: work runs in the order it is recorded whatever the stream,
# ``wait_stream``/``wait_event`` are then already satisfied, and synchronizing one stream waits
# for all. Events mark a point in the queue (recording submits the work before it); with
# ``enable_timing=True`` they also hold a GPU timestamp, so ``elapsed_time`` measures GPU time
# (where the adapter has timestamp-query).


class _WebGPUType(type):
    """isinstance(x, torch.webgpu.Stream) holds for any webgpu torch.Stream (and likewise Event):
    the objects themselves are plain torch.Stream/torch.Event, because their C methods
    (elapsed_time, wait_stream) accept only exactly those types."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls._base) and obj.device.type == "webgpu"


class Stream(metaclass=_WebGPUType):
    """``torch.webgpu.Stream(device=None, priority=0)``: a new ``torch.Stream`` on a webgpu device
    (an alias of the device's one queue; see the notes above)."""

    _base = torch.Stream

    def __new__(cls, device: _Device = None, priority: int = 0, **kwargs):
        if "stream_id" in kwargs:
            return torch.Stream(priority=priority, **kwargs)
        idx = _index(device)
        return torch.Stream(device=torch.device("webgpu", idx if idx >= 0 else current_device()), priority=priority)


class Event(metaclass=_WebGPUType):
    """``torch.webgpu.Event(enable_timing=False)``: a ``torch.Event`` on webgpu, a point in the
    device's queue with a GPU timestamp if ``enable_timing``."""

    _base = torch.Event

    def __new__(cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False):
        return torch.Event(device="webgpu", enable_timing=enable_timing, blocking=blocking, interprocess=interprocess)


def current_stream(device: _Device = None) -> torch.Stream:
    """The calling thread's current stream on the device (the default stream unless set)."""
    idx = _index(device)
    return torch.accelerator.current_stream(idx if idx >= 0 else current_device())


def default_stream(device: _Device = None) -> torch.Stream:
    """The device's default stream (id 0)."""
    idx = _index(device)
    s = torch.accelerator.current_stream(idx if idx >= 0 else current_device())
    return torch.Stream(stream_id=0, device_index=s.device_index, device_type=s.device_type)


def set_stream(stream: torch.Stream) -> None:
    if stream is not None:
        torch.accelerator.set_stream(stream)


class StreamContext:
    """Makes ``stream`` the current stream inside the block (``torch.webgpu.stream(s)``)."""

    def __init__(self, stream: Optional[torch.Stream]):
        self.stream = stream
        self.prev = None

    def __enter__(self):
        if self.stream is None:
            return None
        self.prev = torch.accelerator.current_stream(self.stream.device_index)
        torch.accelerator.set_stream(self.stream)
        return self.stream

    def __exit__(self, *args):
        if self.stream is not None:
            torch.accelerator.set_stream(self.prev)
        return False


def stream(stream: Optional[torch.Stream]) -> StreamContext:
    return StreamContext(stream)
