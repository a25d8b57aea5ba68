"""What the linear-algebra test files share: moving nested inputs to the device, flattening nested
outputs, comparing them with CPU's, and running an OpInfo entry's float32 samples (values, and
gradients for the first few samples where the entry has them) against CPU."""

import torch
from torch.testing._internal.common_methods_invocations import op_db

DEV = "webgpu"
TOL = dict(rtol=1e-3, atol=1e-3)
OPS = {(o.name + ("." + o.variant_test_name if o.variant_test_name else "")): o for o in op_db}


def to_dev(x):
    if isinstance(x, torch.Tensor):
        return x.detach().to(DEV).requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(to_dev(y) for y in x)
    if isinstance(x, dict):
        return {k: to_dev(v) for k, v in x.items()}
    return x


def flat(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for y in x for t in flat(y)]
    return []


def assert_same(d, c, tol=TOL):
    d, c = flat(d), flat(c)
    assert len(d) == len(c)
    for a, b in zip(d, c):
        assert a.device.type == DEV
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
        torch.testing.assert_close(a.cpu(), b, equal_nan=True, **tol)


def check_opinfo_samples(name, generator, grad_samples=3):
    """Every float32 sample of OpInfo entry `name` on the device against CPU; the gradients of the
    first grad_samples samples against CPU's for the same random output weights."""
    op = OPS[name]
    n = 0
    for s in op.sample_inputs("cpu", torch.float32, requires_grad=op.supports_autograd):
        c = op(s.input, *s.args, **s.kwargs)
        di, da, dk = to_dev(s.input), to_dev(s.args), to_dev(s.kwargs)
        d = op(di, *da, **dk)
        assert_same(d, c)
        if op.supports_autograd and n < grad_samples:
            ins_c = [t for t in flat([s.input, s.args, s.kwargs]) if t.requires_grad]
            ins_d = [t for t in flat([di, da, dk]) if t.requires_grad]
            outs_c = [t for t in flat(c) if t.requires_grad]
            outs_d = [t for t in flat(d) if t.requires_grad]
            if ins_c and outs_c:
                ws = [torch.randn(t.shape, generator=generator) for t in outs_c]
                gc = torch.autograd.grad(outs_c, ins_c, ws, allow_unused=True)
                gd = torch.autograd.grad(outs_d, ins_d, [w.to(DEV) for w in ws], allow_unused=True)
                for a, b in zip(gd, gc):
                    if b is not None:
                        torch.testing.assert_close(a.cpu(), b, rtol=1e-2, atol=1e-2, equal_nan=True)
        n += 1
    assert n > 0
