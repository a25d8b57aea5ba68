// The op policy of uint16/uint32/uint64 and the float8 dtypes (ops/uint_fp8.h): which kernels take
// them, and the pointwise rows they run. Storage and conversions: kernel/dtype_uint_fp8.cpp.
#include "ops/uint_fp8.h"

#include <cstring>
#include <string>

#include "ops/common.h"
#include "ops/pointwise.h"

namespace webgpu::ops {
namespace {

thread_local bool t_allow = false;

bool starts_with_any(const std::string& s, std::initializer_list<const char*> prefixes) {
  for (const char* p : prefixes)
    if (s.rfind(p, 0) == 0) return true;
  return false;
}

// Kernels (by the op name they check under, or their key's prefix) that take the new dtypes: those
// that move bits without computing (creation, copies, fills, cat/stack, the remap engine: flip, roll,
// pad; gather/scatter/index without accumulation), and the reductions, scans and sorts CPU has for
// the unsigned types (sum/prod/cumsum/cumprod into int64, any/all, sort, unique, random_(from, to))
// or float8 (any/all, eye).
bool allowed_op(const char* op, at::ScalarType t) {
  const std::string s(op ? op : "");
  if (starts_with_any(s, {"empty", "copy", "fill", "cat", "remap", "index:", "flip", "roll", "constant_pad_nd", "any",
                          "all", "reduce:"}))
    return true;
  if (is_fp8(t) && s == "eye") return true;  // zeros and a filled diagonal; CPU has eye for float8
  return is_uint_wide(t) && starts_with_any(s, {"sum", "nansum", "prod", "cumsum", "cumprod", "scan:", "sort",
                                                "argsort", "msort", "unique", "_unique", "random:random"});
}

// The raw bits of scalar v stored as dtype t (CPU's cast).
ScalarBits raw_bits_of(const c10::Scalar& v, at::ScalarType t) {
  at::Tensor h = at::scalar_tensor(v, at::TensorOptions().dtype(t));
  uint64_t u = 0;
  std::memcpy(&u, h.data_ptr(), h.element_size());
  return {uint32_t(u), uint32_t(u >> 32)};
}

}  // namespace

AllowUintFp8::AllowUintFp8() : prev_(t_allow) { t_allow = true; }
AllowUintFp8::~AllowUintFp8() { t_allow = prev_; }

void check_uint_fp8(at::ScalarType t, const char* op) {
  if (t_allow || allowed_op(op, t)) return;
  TORCH_CHECK_NOT_IMPLEMENTED(false, "\"", op, "\" not implemented for '", c10::toString(t), "' on webgpu");
}

void run_row_uint_fp8(const Row& r, at::TensorIteratorBase& iter, std::initializer_list<c10::Scalar> scalars,
                      at::ScalarType dt) {
  const std::string n = r.name;
  auto refuse = [&] {
    TORCH_CHECK_NOT_IMPLEMENTED(false, "\"", r.name, "\" not implemented for '", c10::toString(dt), "' on webgpu");
  };
  AllowUintFp8 allow;
  // where / masked_fill move the chosen operand's bits (RAW; uint64 through the int64 row, which
  // keeps them too). CPU has where for all of them and masked_fill for none; the device has both.
  if (n == "where" || n == "masked_fill") {
    if (c10::elementSize(dt) == 8) {
      std::vector<ScalarBits> s;
      for (const auto& x : scalars) s.push_back(scalar_bits(cast_scalar(x, dt), CT::I64));
      return run_elementwise(iter, r.name, r.l, r.libs, CT::I64, s, dt);
    }
    std::vector<ScalarBits> s;
    for (const auto& x : scalars) s.push_back(raw_bits_of(x, dt));
    const char* e = n == "where" ? "select(x3, x2, x1 != 0u)" : "select(x1, s0, x2 != 0u)";
    return run_elementwise(iter, r.name, e, lib::None, CT::RAW, s, dt);
  }
  if (is_fp8(dt)) {
    // CPU's float8 kernels: products and abs in float32, rounded back once; comparisons.
    if (n != "mul" && n != "abs" && n != "eq" && n != "ne") refuse();
    // CPU takes a one-element second operand through its reduced-float path, which float8 lacks.
    const bool scalar_operand = iter.ntensors() == 3 && iter.is_scalar(2);
    TORCH_CHECK_NOT_IMPLEMENTED(scalars.size() == 0 && !(n == "mul" && scalar_operand), "\"", r.name,
                                "\" not implemented for '", c10::toString(dt), "' on webgpu");
    if (n == "abs" && iter.dtype(0) == dt && iter.input_dtype(0) == dt) {
      // CPU's float8 abs is `x < 0 ? -x : x` on the value: -0.0 and NaNs keep their bits.
      const std::string e = "select(x1, x1 ^ 0x80u, " + std::string(dtype_tag(dt)) + "_to_f32(x1) < 0.0)";
      return run_elementwise(iter, r.name, e, lib::None, CT::RAW, {}, dt);
    }
    return run_elementwise(iter, r.name, r.f, r.libs, CT::F32, {}, dt);
  }
  // uint16 computes in the int32 column, uint32 and uint64 in the int64 one: the ops CPU has for
  // them (products, equality, bitwise, identity roundings) keep exact low bits there.
  if (n != "mul" && n != "eq" && n != "ne" && n != "bitwise_and" && n != "bitwise_or" && n != "bitwise_xor" &&
      n != "floor" && n != "ceil" && n != "trunc" && n != "round")
    refuse();
  const CT ct = dt == at::kUInt16 ? CT::I32 : CT::I64;
  std::vector<ScalarBits> s;
  for (const auto& x : scalars) s.push_back(scalar_bits(cast_scalar(x, dt), ct));
  run_elementwise(iter, r.name, ct == CT::I32 ? r.i : r.l, r.libs, ct, s, dt);
}

}  // namespace webgpu::ops
