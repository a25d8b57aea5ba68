"""torch-webgpu: a PyTorch device backend, ``webgpu``, over Google Dawn.

Importing this package loads the native module (which registers the ``webgpu`` kernels with the
dispatcher), renames PrivateUse1 to ``webgpu`` and installs ``torch.webgpu``.
"""
import torch

from . import _dawn
from . import _C  # noqa: E402  (registers kernels, guard, allocator, hooks)

try:
    _C._set_dawn_procs(_dawn.dawn_procs(_C._dawn_proc_names()))
except ImportError as _e:  # the first use raises a clear error naming the package
    _dawn_error = _e

# Wait for the GPU before the interpreter and the driver tear down (csrc/runtime/device.h).
import atexit as _atexit  # noqa: E402

_atexit.register(_C._shutdown)

torch.utils.rename_privateuse1_backend("webgpu")

from . import webgpu as _webgpu_module  # noqa: E402

torch._register_device_module("webgpu", _webgpu_module)
torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)

from .webgpu import info  # noqa: E402,F401
from . import fallback  # noqa: E402,F401  (fallback_counts, fallback_enabled, ...)
from . import _integration  # noqa: E402

_integration.install()  # printing, fork safety, multiprocessing queues, torch.compile

from . import distributed  # noqa: E402

distributed.register()  # torch.distributed backend "webgpu" (collectives staged through gloo)

__all__ = ["info", "fallback", "distributed"]
__version__ = "0.1.0"
