// Helpers shared by the NN op families (pool, upsample, unpool, fold, grid_sample, distance).
#pragma once
#include <ATen/ATen.h>

#include <string>

namespace webgpu::ops {

// A meta tensor of t's sizes and strides: running an op's own meta function on it gives CPU's
// argument checks and output sizes without touching the device.
inline at::Tensor meta_of(const at::Tensor& t) {
  return at::empty_strided(t.sizes(), t.strides(), t.options().device(at::kMeta));
}

// The entry point of the one-invocation-per-element kernels of wgsl/kernels/pool.wgsl, upsample.wgsl,
// unpool.wgsl, fold.wgsl, grid_sample.wgsl and distance.wgsl, added before their section: invocation
// t < P.n runs the section's run(t).
inline std::string per_element_main() {
  return "@compute @workgroup_size(256)\n"
         "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,\n"
         "        @builtin(local_invocation_index) lid: u32) {\n"
         "  let t = linear_id(wid, nwg, lid, 256u);\n"
         "  if (t < P.n) { run(t); }\n"
         "}\n";
}

}  // namespace webgpu::ops
