"""torch.compile for webgpu: an Inductor backend that generates WGSL (docs/design.md, "torch.compile").

- wgsl.py: the kernel code generator (pointwise and reduction nodes, fused by Inductor's SIMD
  scheduler) and its scheduling class;
- runtime.py: what the generated wrapper calls: compiled-once kernel objects that launch through
  torch_webgpu._C._launch_wgsl (the pipeline cache and Stream of the eager kernels);
- backend.py: registration for the "webgpu" device and the compile entry with its fallback.
"""

from .backend import compile_fx_webgpu, register  # noqa: F401
