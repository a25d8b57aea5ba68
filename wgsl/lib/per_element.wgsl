// The entry point of the one-invocation-per-element kernels (the NN families through ops/nn_common.h's
// per_element_main(), sort.wgsl's per-element sections, embedding_bag.wgsl), included before the
// kernel: invocation t < P.n of a 256-wide workgroup grid runs the kernel's run(t).
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t < P.n) { run(t); }
}
