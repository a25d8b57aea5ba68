// WGSL language features of the instance (not device features: WGSL has its own list, e.g. the
// packed 4x8 integer dot products), so kernels can choose a builtin or a portable spelling.
#pragma once

namespace webgpu::rt {

// Whether WGSL's packed_4x8_integer_dot_product (dot4I8Packed, dot4U8Packed, pack4xI8, ...) is
// available. Read once from the instance.
bool wgsl_has_packed_dot4();

}  // namespace webgpu::rt
