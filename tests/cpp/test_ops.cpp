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
  for (auto dt : {at::kFloat, at::kHalf, at::kBFloat16, at::kLong, at::kInt, at::kShort, at::kChar, at::kByte,
                  at::kBool}) {
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

TEST(ops_float64_is_refused) {
  EXPECT_THROWS(at::empty({2}, at::TensorOptions().device(kDev).dtype(at::kDouble)), "float64");
}
