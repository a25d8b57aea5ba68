"""What Inductor's generated wrapper calls to run a WGSL kernel on webgpu.

A WGSLKernel is built once per generated kernel (at module load of the wrapper): the WGSL source,
its pipeline-cache key (a hash of the source) and, per storage argument, the element type and
whether it is written. A call passes the tensors and symbolic sizes in the order the code generator
fixed; the argument/parameter lists are assembled from precomputed parts.
"""

import hashlib

import torch

from .. import _C

KEY_PREFIX = "inductor_"

launches = 0  # generated-kernel launches in this process (tests check that compiled kernels ran)
launches_vec4 = 0  # of which through the vec4 variant (wgsl.py, _vec4_variant)


class WGSLKernel:
    __slots__ = (
        "name",
        "key",
        "source",
        "elems",
        "writable",
        "libraries",
        "_alias_check",
        "_n",
        "_err_op",
        "_vec4",
    )

    def __init__(
        self, name, source, elems, writable, libraries=("pointwise",), check_alias=True, index_errors=False, vec4=None
    ):
        self.name = name
        self.source = source
        self.key = KEY_PREFIX + hashlib.sha1(source.encode()).hexdigest()[:20]
        self.elems = tuple(elems)
        self.writable = tuple(writable)
        self.libraries = list(libraries)
        self._alias_check = check_alias and any(self.writable) and len(self.elems) > 1
        self._n = len(self.elems)
        # (key, source, element types, workgroups) of the variant moving 4 elements at a time as
        # vec4, where there is one (its length is static: the workgroup count is fixed at code generation)
        self._vec4 = None
        if vec4 is not None:
            src4, elems4, groups4 = vec4
            self._vec4 = (
                KEY_PREFIX + "vec4_" + hashlib.sha1(src4.encode()).hexdigest()[:20],
                src4,
                tuple(elems4),
                int(groups4),
            )
        # kernels that index through loaded values report bad indices as IndexError, as eager does
        self._err_op = "index (torch.compile kernel)" if index_errors else ""

    def __call__(self, groups, *args):
        """groups: the number of workgroups; args: the storage tensors, then the symbolic sizes.
        Runs once per kernel and call of a compiled graph, so it does as little as it can in Python:
        rows are zipped at C speed, and the vec4 check is a plain `any` where every offset is 0."""
        global launches, launches_vec4
        if groups <= 0:
            return
        n = self._n
        tensors = args if len(args) == n else args[:n]
        if self._alias_check:
            tensors = _unalias(self.name, tensors, self.writable)
        offs = [t.storage_offset() for t in tensors]
        vec4 = self._vec4 is not None and (not any(offs) or not any(o & 3 for o in offs))
        if vec4:
            key, source, elems, groups = self._vec4
        else:
            key, source, elems = self.key, self.source, self.elems
        params = [("off", "i32s", offs)]
        if len(args) > n:
            params.append(("ks", "i32s", [int(s) for s in args[n:]]))
        _C._launch_wgsl(
            key, source, list(zip(tensors, elems, self.writable)), params, groups, "", self.libraries, self._err_op
        )
        launches += 1
        launches_vec4 += vec4


def _unalias(name, tensors, writable):
    """A read-write binding may not alias another binding of the same dispatch: a read-only argument
    sharing its storage with a written one is read from a copy (the kernel reads values as they were
    before the launch, which is what Inductor assumes of distinct buffers)."""
    written = {tensors[i].untyped_storage().data_ptr() for i, w in enumerate(writable) if w}
    out = list(tensors)
    seen_w = set()
    for i, t in enumerate(tensors):
        p = t.untyped_storage().data_ptr()
        if writable[i]:
            if p in seen_w:
                raise RuntimeError(
                    f"webgpu: generated kernel {name} writes two arguments that share storage (argument {i})"
                )
            seen_w.add(p)
        elif p in written:
            out[i] = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device)
            out[i].copy_(t)
    return out
