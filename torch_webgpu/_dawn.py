"""Locates the Dawn runtime library shipped by the ``dawn-python`` package (module ``pydawn``)."""
import importlib.util
import os
import platform


def _library_name() -> str:
    system, machine = platform.system(), platform.machine()
    if system == "Linux":
        return f"libwebgpu_dawn_{machine}.so"
    if system == "Darwin":
        return f"libwebgpu_dawn_{machine}.dylib"
    if system == "Windows":
        return "libwebgpu_dawn.dll"
    raise RuntimeError(f"torch_webgpu: unsupported platform {system}")


def find_dawn_library() -> str:
    """Path of the Dawn library: TORCH_WEBGPU_DAWN_LIBRARY, else the one inside pydawn.

    Returns "" when neither exists; the native side then raises a clear error on first use.
    """
    env = os.environ.get("TORCH_WEBGPU_DAWN_LIBRARY")
    if env:
        return env
    # Find pydawn without importing it: its __init__ chain loads the library through ctypes.
    spec = importlib.util.find_spec("pydawn")
    if spec is None or not spec.submodule_search_locations:
        return ""
    for root in spec.submodule_search_locations:
        path = os.path.join(root, "lib", _library_name())
        if os.path.exists(path):
            return path
    return ""
