"""torch_webgpu._C._launch_wgsl: one dispatch of a WGSL body given as text (the entry point for
generated kernels), against CPU, and its errors."""

import pytest
import torch
from webgpu_env import DEV

import torch_webgpu

C = torch_webgpu._C

BODY = """
@compute @workgroup_size(64) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, 64u);
  if (i >= P.n) { return; }
  b1[P.out_off + i] = b0[P.in_off + i] * P.s + P_add(i % 2u);
}"""


def params(n, s=2.0, in_off=0, out_off=0):
    return [
        ("n", "u32", n),
        ("s", "f32", s),
        ("add", "f32s", [0.5, -3.0]),
        ("in_off", "u32", in_off),
        ("out_off", "u32", out_off),
    ]


@pytest.mark.parametrize("n", [1, 63, 64, 1000, 70000])
def test_launch_matches_cpu(n):
    x = torch.randn(n + 5)
    y = torch.zeros(n + 3, device=DEV)
    xs = x.to(DEV)[5:]  # a view: the kernel indexes with its storage offset
    C._launch_wgsl(
        "test_affine",
        BODY,
        [(xs, "f32", False), (y, "f32", True)],
        params(n, 1.5, xs.storage_offset(), 3),
        (n + 63) // 64,
    )
    want = torch.zeros(n + 3)
    want[3:] = x[5:] * 1.5 + torch.tensor([0.5, -3.0]).repeat((n + 1) // 2)[:n]
    torch.testing.assert_close(y.cpu(), want)


def test_launch_errors_name_the_problem():
    x = torch.randn(8, device=DEV)
    y = torch.empty(8, device=DEV)
    args = [(x, "f32", False), (y, "f32", True)]
    with pytest.raises(RuntimeError, match="unknown kernel parameter 'q'"):
        C._launch_wgsl("test_err1", BODY.replace("P.s", "P.q"), args, params(8), 1)
    with pytest.raises(RuntimeError, match="unused kernel parameter 'extra'"):
        C._launch_wgsl("test_err2", BODY, args, params(8) + [("extra", "u32", 1)], 1)
    with pytest.raises(RuntimeError, match="unsupported storage element type"):
        C._launch_wgsl("test_err3", BODY, [(x, "double", False), (y, "f32", True)], params(8), 1)
    with pytest.raises(RuntimeError, match="not a webgpu device"):
        C._launch_wgsl("test_err4", BODY, [(x.cpu(), "f32", False), (y, "f32", True)], params(8), 1)
    with pytest.raises(RuntimeError, match="unknown type"):
        C._launch_wgsl("test_err5", BODY, args, params(8)[:-1] + [("out_off", "u64", 0)], 1)
    with pytest.raises(RuntimeError, match="test_err6"):  # WGSL that does not compile names the kernel
        C._launch_wgsl("test_err6", BODY.replace("b1[", "b9["), args, params(8), 1)
    # The device still works after each error.
    C._launch_wgsl("test_affine", BODY, args, params(8), 1)
    torch.testing.assert_close(y.cpu(), x.cpu() * 2 + torch.tensor([0.5, -3.0]).repeat(4))
