# ruff: noqa: I001  (import order is load order: _dawn before _C, _C before the modules that use it)
"""torch-webgpu: a PyTorch device backend, ``webgpu``, over Google Dawn.

Importing this package loads the native module (which registers the ``webgpu`` kernels with the
dispatcher), renames PrivateUse1 to ``webgpu`` and installs ``torch.webgpu``.

Installing the package also registers it with PyTorch's device-backend autoload: ``import torch``
imports it through the ``torch.backends`` entry point (pyproject.toml), so ``device="webgpu"`` works
without ``import torch_webgpu``. ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` (PyTorch's variable) turns that
off. The package loads only the native module at import; the adapter is opened at first use.
"""

# Defined before anything else: when `import torch_webgpu` comes first, its `import torch` below runs
# torch's autoload, which finds this module half-imported in sys.modules and calls _autoload() on it.
_autoload_error = None


def _autoload():
    """The ``torch.backends`` entry point, called by ``import torch`` after importing this package.

    Importing did the work. If it failed (say, the native module was built for another torch), a
    warning tells so and the package is taken out of ``sys.modules``: ``import torch`` still works
    for programs that do not use webgpu, and a later ``import torch_webgpu`` raises the real error.
    When torch's import runs inside ``import torch_webgpu`` (that import came first), the package is
    still loading here and there is nothing to do."""
    import sys
    import warnings

    err = _autoload_error
    if err is None:
        return
    for name in [n for n in sys.modules if n == __name__ or n.startswith(__name__ + ".")]:
        if name != __name__ + "._C":  # an extension module cannot be imported twice
            del sys.modules[name]
    warnings.warn(
        f"torch_webgpu could not be loaded at `import torch` ({type(err).__name__}: {err}); the webgpu "
        "device is not available. `import torch_webgpu` raises the full error; set "
        "TORCH_DEVICE_BACKEND_AUTOLOAD=0 to skip loading device backends at `import torch`.",
        RuntimeWarning,
        stacklevel=2,
    )


def _in_torch_autoload():
    """Whether torch's `_import_device_backends` (run by `import torch`) is importing this module."""
    import sys

    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "_import_device_backends" and f.f_globals.get("__name__") == "torch":
            return True
        f = f.f_back
    return False


try:
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
except Exception as _e:
    if not _in_torch_autoload():
        raise
    _autoload_error = _e  # reported by _autoload(), which torch calls next

__all__ = ["info", "fallback", "distributed"]
__version__ = "0.1.0"
