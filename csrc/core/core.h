// PyTorch glue shared by core/ and ops/: the current device, the allocator, the generator.
#pragma once
#include <ATen/core/Generator.h>
#include <c10/core/Allocator.h>

namespace webgpu::core {

int current_device();
void set_current_device(int index);
c10::Allocator* allocator();
const at::Generator& default_generator(int index);

}  // namespace webgpu::core
