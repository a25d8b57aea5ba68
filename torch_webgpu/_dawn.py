"""Hands the Dawn runtime of the ``wgpudawn`` package over to the native module.

wgpudawn links Dawn statically into its cffi module ``wgpudawn._lib._wgpu_dawn`` and exports no C
symbols, so the native side cannot dlopen it: it gets function addresses from here instead
(``ffi.addressof``), the entry point ``wgpuGetProcAddress`` among them (docs/design.md, "Dawn").

This file imports nothing from torch_webgpu, so the C++ test program can load it by path.
"""

import importlib.machinery
import importlib.util
import os
import sys

PIN = "wgpudawn==0.32.0.4"
_MODULE = "wgpudawn._lib._wgpu_dawn"


def _load_cffi_module():
    """The compiled cffi module, without running wgpudawn's package __init__ (its high-level API
    costs ~130 ms to import and is not needed). Registered under its own name, so a later
    ``import wgpudawn`` reuses it and both share one Dawn."""
    mod = sys.modules.get(_MODULE)
    if mod is not None:
        return mod
    spec = importlib.util.find_spec("wgpudawn")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"torch_webgpu: the Dawn runtime package is missing; `pip install {PIN}`")
    for root in spec.submodule_search_locations:
        libdir = os.path.join(root, "_lib")
        if not os.path.isdir(libdir):
            continue
        for name in sorted(os.listdir(libdir)):
            if name.startswith("_wgpu_dawn.") and name.endswith((".so", ".pyd")):
                loader = importlib.machinery.ExtensionFileLoader(_MODULE, os.path.join(libdir, name))
                mod = importlib.util.module_from_spec(importlib.util.spec_from_loader(_MODULE, loader))
                loader.exec_module(mod)
                sys.modules[_MODULE] = mod
                return mod
    raise ImportError(
        f"torch_webgpu: wgpudawn has no compiled Dawn module; reinstall it with `pip install --force-reinstall {PIN}`"
    )


def dawn_procs(names):
    """{name: address} for each C function in ``names`` that the installed Dawn module has."""
    mod = _load_cffi_module()
    ffi, lib = mod.ffi, mod.lib
    out = {}
    for n in names:
        try:
            out[n] = int(ffi.cast("uintptr_t", ffi.addressof(lib, n)))
        except (AttributeError, TypeError, ffi.error):
            pass
    return out


def dawn_version():
    """The Dawn release the installed wgpudawn was built from ("" if unknown)."""
    spec = importlib.util.find_spec("wgpudawn")
    for root in (spec.submodule_search_locations if spec else None) or []:
        try:
            with open(os.path.join(root, "_lib", "__init__.py")) as f:
                for line in f:
                    if line.startswith("dawn_version"):
                        return line.split("=", 1)[1].strip().strip("\"'")
        except OSError:
            pass
    return ""
