// What op code may know of the device behind a tensor, without the runtime's headers (docs/design.md,
// "Layers": ops/ sees kernel/, never runtime/): features and limits that choose kernels, storage
// identity for aliasing tests, and byte moves ordered on the device's Stream.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace webgpu::rt {
struct AsyncRead;
struct AsyncWrite;
}  // namespace webgpu::rt

namespace webgpu::kernel {

// One subgroup-matrix configuration of the adapter (operand and result component, M x N x K).
struct MatrixConfig {
  std::string component, result;
  uint32_t M, N, K, min_subgroup, max_subgroup;
};

struct DeviceInfo {
  bool f16 = false, subgroups = false, subgroup_matrix = false, packed_dot4 = false;
  uint32_t subgroup_min = 0, subgroup_max = 0;
  uint32_t max_invocations = 0;  // maxComputeInvocationsPerWorkgroup
  uint32_t max_workgroup_size_x = 0;  // maxComputeWorkgroupSizeX
  uint32_t max_workgroup_storage = 0;  // maxComputeWorkgroupStorageSize, bytes
  uint32_t max_storage_buffers = 0;  // maxStorageBuffersPerShaderStage
  uint32_t min_storage_offset_alignment = 0;
  uint64_t max_binding = 0;  // maxStorageBufferBindingSize, bytes
  std::vector<MatrixConfig> matrix_configs;
};
// The device holding t (a webgpu tensor); the same object for every tensor of that device.
const DeviceInfo& device_info(const at::TensorBase& t);

// Identity and size of the storage block behind t: equal ids mean the tensors may alias.
const void* block_id(const at::TensorBase& t);
uint64_t block_bytes(const at::TensorBase& t);

// Byte moves on t's device, ordered with every dispatch recorded before them (offsets are bytes in
// the storage blocks; copies and writes need multiples of 4).
void copy_bytes(const at::TensorBase& src, uint64_t src_off, const at::TensorBase& dst, uint64_t dst_off, uint64_t n);
void write_bytes(const at::TensorBase& dst, uint64_t off, const void* data, uint64_t n);
// A copy between two devices' storage (offsets and n multiples of 4) through host memory that both
// use as a buffer (host-mapped-pointer; docs/design.md, "Memory"): each GPU copies over PCIe, in
// chunks through two slots so that both work at once, and no CPU copies a byte. Returns when dst's
// device has the bytes; false (nothing done) where a device cannot import host memory, for copies
// under 1 MiB, or with TORCH_WEBGPU_PEER_BOUNCE=0: the caller then stages through a CPU tensor.
bool copy_across_devices(const at::TensorBase& src, uint64_t src_off, const at::TensorBase& dst, uint64_t dst_off,
                         uint64_t n);
// Blocks until the device has produced the bytes.
void read_bytes(const at::TensorBase& src, uint64_t off, void* out, uint64_t n);
// The same without blocking (rt::AsyncRead): start copies all of contiguous src into the ticket's
// staging buffer; ready polls; finish copies its bytes into contiguous host memory `out` of the
// same byte size (waiting if the GPU is not done).
void read_start(rt::AsyncRead& a, const at::TensorBase& src);
bool read_ready(rt::AsyncRead& a);
void read_finish(rt::AsyncRead& a, const at::TensorBase& out);
// An upload of contiguous host src into contiguous device dst (same byte size, a multiple of 4, at
// a 4-byte offset) through the ticket's own staging buffer (rt::AsyncWrite).
void write_with(rt::AsyncWrite& w, const at::TensorBase& dst, const at::TensorBase& src);

}  // namespace webgpu::kernel
