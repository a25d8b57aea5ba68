// PyTorch glue shared by core/ and ops/: the current device, the allocator, the generator.
#pragma once
#include <ATen/core/Generator.h>
#include <c10/core/Allocator.h>

#include <cstdint>
#include <optional>

namespace webgpu::core {

int current_device();
void set_current_device(int index);
c10::Allocator* allocator();
const at::Generator& default_generator(int index);

// The Philox key (seed) and counter offset for one random kernel on device `index`: `gen` (or the
// device's default generator) is locked, its offset read and advanced by `increment`, as CUDA's
// philox_cuda_state does. Raises if `gen` is not a webgpu generator.
struct PhiloxState {
  uint64_t seed = 0, offset = 0;
};
PhiloxState philox_state(const std::optional<at::Generator>& gen, int index, uint64_t increment);

}  // namespace webgpu::core
