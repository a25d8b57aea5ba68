// Ops through the ATen C++ API on webgpu tensors, against CPU results. Grows with every op issue.
#include <ATen/ATen.h>

#include <cstring>

#include "harness.h"

namespace {
const at::Device kDev(c10::DeviceType::PrivateUse1, 0);

bool bit_equal(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  auto x = a.contiguous(), y = b.contiguous();
  return std::memcmp(x.data_ptr(), y.data_ptr(), x.numel() * x.element_size()) == 0;
}
}  // namespace

TEST(ops_roundtrip_every_dtype) {
  for (auto dt :
       {at::kFloat, at::kHalf, at::kBFloat16, at::kLong, at::kInt, at::kShort, at::kChar, at::kByte, at::kBool}) {
    at::Tensor x = at::randint(-100, 100, {7, 9}).to(dt);
    at::Tensor d = x.to(kDev);
    EXPECT(d.device() == kDev);
    EXPECT(bit_equal(d.cpu(), x));
    EXPECT(bit_equal(d.t().cpu(), x.t().contiguous()));
    EXPECT(bit_equal(d.slice(1, 1, 8, 3).cpu(), x.slice(1, 1, 8, 3).contiguous()));
  }
}

TEST(ops_add_float32_against_cpu) {
  at::Tensor a = at::randn({64, 33}), b = at::randn({33});
  at::Tensor r = at::add(a.to(kDev), b.to(kDev)).cpu();
  EXPECT(at::equal(r, a + b));
  at::Tensor c = a.to(kDev);
  c.add_(b.to(kDev), 2.0);
  EXPECT(at::allclose(c.cpu(), at::add(a, b, 2.0)));
  at::Tensor out = at::empty({64, 33}, at::TensorOptions().device(kDev));
  at::add_out(out, a.to(kDev).t().t(), b.to(kDev));
  EXPECT(at::equal(out.cpu(), a + b));
}

TEST(ops_fill_zero_item_conversion) {
  at::Tensor d = at::empty({5, 6}, at::TensorOptions().device(kDev).dtype(at::kHalf));
  d.fill_(1.5);
  d.select(1, 2).zero_();
  at::Tensor e = at::full({5, 6}, 1.5, at::kHalf);
  e.select(1, 2).zero_();
  EXPECT(bit_equal(d.cpu(), e));
  EXPECT(d[0][0].item<float>() == 1.5f);
  at::Tensor as_long = at::empty({5, 6}, at::TensorOptions().device(kDev).dtype(at::kLong));
  as_long.copy_(d);
  EXPECT(bit_equal(as_long.cpu(), e.to(at::kLong)));
}

TEST(ops_float64_is_stored) {
  // Emulated float64 (tests/test_float64.py): stored and copied bit-exactly; an op without a float64
  // kernel says so (TORCH_WEBGPU_FLOAT64=0 restores the refusal of empty).
  at::Tensor h = at::tensor({1.5, -0.0, 1e-310, -3.0}, at::kDouble);
  at::Tensor d = h.to(kDev);
  EXPECT(d.scalar_type() == at::kDouble);
  EXPECT(at::equal(d.cpu().view(at::kLong), h.view(at::kLong)));
  EXPECT_THROWS(at::logcumsumexp(d, 0), "float64");  // needs exp/log: no exact float64 kernel
}

// ops/kernel.h: typed accessors over every dtype, sub-word outputs written by neighbouring
// invocations (atomics), an operand aliasing the output's block, and parameters.
#include "kernel/kernel.h"

TEST(kernel_launch_typed_accessors) {
  using webgpu::ops::CT;
  for (auto dt :
       {at::kFloat, at::kHalf, at::kBFloat16, at::kLong, at::kInt, at::kShort, at::kChar, at::kByte, at::kBool}) {
    at::Tensor x = at::randint(-50, 50, {37}).to(dt);
    at::Tensor base = at::zeros({80}, at::TensorOptions().dtype(dt)).to(kDev);
    at::Tensor out = base.slice(0, 3, 77, 2);  // stride 2, offset 3: neighbours share words
    at::Tensor xd = x.to(kDev);
    const CT ct = dt == at::kLong                                                ? CT::I64
                  : (dt == at::kFloat || dt == at::kHalf || dt == at::kBFloat16) ? CT::F32
                                                                                 : CT::I32;
    webgpu::ops::Kernel k(std::string("test:reverse_scale"));
    k.in(xd, ct);
    k.out(out, ct);
    k.param("n", 37);
    k.param("out_off", uint32_t(out.storage_offset()));
    k.launch(1, [&] {
      const std::string two = ct == CT::F32 ? "2.0" : ct == CT::I32 ? "2i" : "";
      const std::string v = ct == CT::I64 ? "i64_add(ld0(36u - i), ld0(36u - i))" : "ld0(36u - i) * " + two;
      return "@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {\n"
             "  if (i >= P.n) { return; }\n  st1(P.out_off + 2u * i, " +
             v + ");\n}\n";
    });
    at::Tensor want = at::zeros({80}, at::TensorOptions().dtype(dt));
    want.slice(0, 3, 77, 2).copy_(x.flip(0) * 2);
    EXPECT(bit_equal(base.cpu(), want));
  }
}

// kernel/params.h: parameters by name of every type, including an array and an int64 that needs
// alignment padding; a misspelled name and a name the WGSL never reads raise at pipeline build.
TEST(kernel_named_parameters) {
  using webgpu::ops::CT;
  at::Tensor x = at::arange(10, at::kFloat);
  at::Tensor y = at::empty({10}, at::TensorOptions().device(kDev));
  auto run = [&](const std::string& key, const std::string& read_scale, bool extra) {
    webgpu::ops::Kernel k(key);
    k.in(x.to(kDev), CT::F32);
    k.out(y, CT::F32);
    k.param("n", 10);
    k.param_i64("big", int64_t(3) << 33);
    k.param_f32("scale", 2.5f);
    k.param_array("shift", std::vector<uint32_t>{0, 1, 2, 3, 4, 7});
    k.param_i32("neg", -4);
    if (extra) k.param("extra", 1);
    k.launch(1, [&] {
      return "@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {\n"
             "  if (i >= P.n || P.big.y != 6u || P.big.x != 0u) { return; }\n"
             "  st1(i, ld0(i) * " +
             read_scale + " + f32(P_shift(5u)) + f32(P.neg));\n}\n";
    });
  };
  run("test:named", "P.scale", false);
  EXPECT(at::allclose(y.cpu(), x * 2.5 + 3));
  EXPECT_THROWS(run("test:named_misspelled", "P.scael", false), "unknown kernel parameter 'scael'");
  EXPECT_THROWS(run("test:named_extra", "P.scale", true), "unused kernel parameter 'extra'");
}
