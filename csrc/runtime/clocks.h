// Keeping an NVIDIA GPU's clocks up while only WebGPU (Vulkan) work runs on it.
//
// Measured on H100 and H200 (driver 580, Vulkan): after about 10 s without work the driver drops the
// SM clock to 345 MHz (from 1980; nvidia-smi's clock-event reason "Idle"), and with only Vulkan work
// in the system it does not raise it again: a memory-bound kernel then ran at 595 GB/s instead of
// 1800, for as long as the process lived. A CUDA primary context on the same GPU brings the clock
// back within one measurement and keeps it there (1980 MHz, 1790-1830 GB/s); cuInit alone does not.
// So a device on an NVIDIA adapter retains one, once per process, through the CUDA driver library
// when it is installed (docs/design.md, "GPU clocks"). TORCH_WEBGPU_CUDA_CLOCKS=0 turns this off.
#pragma once

#include <string>

namespace webgpu {

// Retains the CUDA primary context of CUDA device `ordinal` (the adapter's position among the NVIDIA
// adapters; -1: not an NVIDIA adapter) for the rest of the process. Returns what happened, for
// torch_webgpu.info(): "held", "off" (disabled), "no CUDA driver", "n/a" or a CUDA error.
std::string hold_cuda_clocks(int ordinal);

}  // namespace webgpu
