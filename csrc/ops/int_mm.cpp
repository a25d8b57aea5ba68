// torch._int_mm (and _int_mm.out): int8/uint8 (M x K) @ int8 (K x N) -> int32 (M x N), exact with
// the int32 wrap-around of CPU and CUDA. The checks and their order are CPU's (_int_mm_out_cpu in
// torch 2.13, which is looser than CUDA's: any M, K and N, uint8 as the first operand); a rejected
// input raises RuntimeError naming _int_mm.
//
// Kernel choice lives in one place, plan(): the variant of the workgroup-tiled packed-dot kernel
// (wgsl/kernels/matmul_i8.wgsl). A subgroup-matrix path (i8 x i8 -> i32 16x16x32 on NVIDIA) would be
// another Path there; a first one loading i8 matrices straight from storage gave wrong sums on an
// H100 and was taken out (see the tensor-core issue's closing note).
#include <torch/library.h>

#include <cstdlib>
#include <string>

#include "kernel/device.h"
#include "kernel/kernel.h"
#include "kernel/wgsl.h"
#include "ops/register.h"

namespace webgpu::ops {
namespace {

using at::Tensor;

// One operand as the kernels see it: element offset and strides along (row, k); for B the row is n.
struct Operand {
  Tensor t;
  int64_t off, s_row, s_k;
};

enum class Path { Tiled };

// How the tiled kernel reads an operand's words of 4 consecutive k values (MODE_A/MODE_B in
// wgsl/kernels/matmul_i8.wgsl).
enum class Mode : int {
  KContig = 0,  // k stride 1: one funnel-shifted pair of words each (any storage offset)
  RowContig = 1,  // row stride 1 (A transposed, B = a contiguous K x N): 4x4 blocks, transposed
  Gather = 2,  // any other strides: byte by byte
};

Mode mode_of(const Operand& o, int64_t K) {
  if (o.s_k == 1 || K == 1) return Mode::KContig;
  if (o.s_row == 1) return Mode::RowContig;
  return Mode::Gather;
}

struct Plan {
  Path path = Path::Tiled;
  bool dot4 = false;  // WGSL dot4I8Packed, else the spelled-out dot product
  Mode mode_a = Mode::Gather, mode_b = Mode::Gather;
};

// The one place that picks a kernel for these operands on this device. TORCH_WEBGPU_NO_DOT4=1
// takes the spelled-out dot product even where WGSL has dot4I8Packed (read per call, so tests can
// run both).
Plan plan(const Operand& a, const Operand& b, int64_t K) {
  Plan p;
  const char* no_dot4 = std::getenv("TORCH_WEBGPU_NO_DOT4");
  p.dot4 = kernel::device_info(a.t).packed_dot4 && !(no_dot4 && *no_dot4 && std::string(no_dot4) != "0");
  p.mode_a = mode_of(a, K);
  p.mode_b = mode_of(b, K);
  return p;
}

constexpr uint32_t kTile = 64;  // output tile of wgsl/kernels/matmul_i8.wgsl (both dims)

void run_tiled(const Plan& p, const Operand& a, const Operand& b, const Tensor& out, int64_t M, int64_t N, int64_t K) {
  const bool a_u8 = a.t.scalar_type() == at::kByte;
  Kernel k(std::string("int_mm:tiled:") + (p.dot4 ? "d" : "s") + std::to_string(int(p.mode_a)) +
           std::to_string(int(p.mode_b)));
  k.in(a.t, CT::RAW);
  k.in(b.t, CT::RAW);
  k.out(out, CT::I32);
  const int64_t tiles_m = grid(M, kTile), tiles_n = grid(N, kTile);
  k.param_index("M", M);
  k.param_index("N", N);
  k.param_index("K", K);
  k.param_index("tiles_n", tiles_n);
  k.param_index("tiles", tiles_m * tiles_n);
  k.param_index("a_off", a.off);
  k.param_index("a_sm", a.s_row);
  k.param_index("a_sk", a.s_k);
  k.param_index("b_off", b.off);
  k.param_index("b_sn", b.s_row);
  k.param_index("b_sk", b.s_k);
  k.param_index("o_off", out.storage_offset());
  k.param_index("o_sm", out.stride(0));
  k.param_index("o_sn", out.stride(1));
  k.launch(uint64_t(tiles_m * tiles_n), [&] {
    const bool flip = p.dot4 && a_u8;  // uint8 A through the signed builtin (see the WGSL)
    return kernel::fill(
        kernel::library("matmul_i8"),
        {{"MODE_A", std::to_string(int(p.mode_a)) + "u"},
         {"MODE_B", std::to_string(int(p.mode_b)) + "u"},
         {"A_FLIP", flip ? "0x80808080u" : "0u"},
         {"DOT4", p.dot4 ? "dot4I8Packed(a, b)"
                  : a_u8 ? "dot4_us(a, b)"
                         : "dot4_ss(a, b)"},
         {"CORRECT", flip ? "let c = vec4<i32>(dot4I8Packed(0x80808080u, bw0), dot4I8Packed(0x80808080u, bw1), "
                            "dot4I8Packed(0x80808080u, bw2), dot4I8Packed(0x80808080u, bw3));\n"
                            "      acc0 = acc0 - c; acc1 = acc1 - c; acc2 = acc2 - c; acc3 = acc3 - c;"
                          : ""}});
  });
}

// The largest element index an operand's kernel reads, which must fit the kernels' u32 indexing.
void check_extent(const Tensor& t, const char* what) {
  int64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  TORCH_CHECK(last <= int64_t(UINT32_MAX), "_int_mm: ", what, " spans ", last + 1,
              " elements of its storage; webgpu kernels index in 32 bits");
}

void check_devices(const Tensor& self, const Tensor& mat2, const Tensor* out) {
  const c10::Device d = self.device();
  auto same = [&](const Tensor& t, const char* name) {
    TORCH_CHECK(t.device() == d, "_int_mm: expected all tensors to be on the same device, but found self on ", d,
                " and ", name, " on ", t.device());
  };
  same(mat2, "mat2");
  if (out) same(*out, "out");
  TORCH_CHECK(d.type() == c10::DeviceType::PrivateUse1, "_int_mm: expected webgpu tensors, but got self on ", d);
}

Tensor& int_mm_out_impl(const Tensor& self, const Tensor& mat2, Tensor& result) {
  // CPU's checks, in CPU's order and with its wording.
  TORCH_CHECK(self.dim() == 2, "_int_mm: Expected self to be of dimension 2 but got ", self.dim());
  TORCH_CHECK(mat2.dim() == 2, "_int_mm: Expected mat2 to be of dimension 2 but got ", mat2.dim());
  TORCH_CHECK(self.size(1) == mat2.size(0), "_int_mm: self.size(1) needs to match mat2.size(0) but got ", self.size(1),
              " and ", mat2.size(0));
  TORCH_CHECK(self.dtype() == at::kChar || self.dtype() == at::kByte,
              "_int_mm: Expected self dtype to be int8 or uint8 but got ", self.dtype());
  TORCH_CHECK(mat2.dtype() == at::kChar, "_int_mm: Expected mat2 dtype to be of type int8 but got ", mat2.dtype());
  TORCH_CHECK(result.dtype() == at::kInt, "_int_mm: Expected result dtype to be of type kInt but got ", result.dtype());
  TORCH_CHECK(result.size(0) == self.size(0), "_int_mm: Expected result.size(0) to be ", self.size(0), " but got ",
              result.size(0));
  TORCH_CHECK(result.size(1) == mat2.size(1), "_int_mm: Expected result.size(1) to be ", mat2.size(1), " but got ",
              result.size(1));
  TORCH_CHECK(result.dim() == 2, "_int_mm: Expected result to be of dimension 2 but got ", result.dim());
  TORCH_CHECK(result.is_contiguous(), "_int_mm: Expected result to be contiguous.");

  const int64_t M = self.size(0), K = self.size(1), N = mat2.size(1);
  if (result.numel() == 0) return result;
  if (K == 0) return result.zero_();
  check_extent(self, "self");
  check_extent(mat2, "mat2");
  check_extent(result, "result");
  const Operand a{self, self.storage_offset(), self.stride(0), self.stride(1)};
  const Operand b{mat2, mat2.storage_offset(), mat2.stride(1), mat2.stride(0)};
  const Plan p = plan(a, b, K);
  switch (p.path) {
    case Path::Tiled: run_tiled(p, a, b, result, M, N, K); break;
  }
  return result;
}

Tensor& int_mm_out(const Tensor& self, const Tensor& mat2, Tensor& result) {
  check_devices(self, mat2, &result);
  return int_mm_out_impl(self, mat2, result);
}

Tensor int_mm(const Tensor& self, const Tensor& mat2) {
  check_devices(self, mat2, nullptr);
  // As CPU: the result is sized from self.size(0) and mat2.size(1) before any check (a 1-d mat2
  // raises IndexError here, as on CPU).
  Tensor result = at::empty({self.size(0), mat2.size(1)}, self.options().dtype(at::kInt));
  return int_mm_out_impl(self, mat2, result);
}

}  // namespace

WEBGPU_LIBRARY_IMPL(m) { WEBGPU_IMPL_OUT(m, "_int_mm", "out", int_mm); }

}  // namespace webgpu::ops
