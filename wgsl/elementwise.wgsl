// The elementwise engine's kernel. The C++ side (ops/elementwise.cpp) fills the {{...}} slots:
// storage bindings, per-operand loads/stores for their dtypes, the op expression, and the rank.
// Parameters: [0] count, [1] aux, [2] numel, [3..3+R) shape (fastest dim first), then per operand its
// element offset and R strides, then scalars.

{{BINDINGS}}

{{ACCESSORS}}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let idx = linear_id(wid, nwg, lid, {{WG}}u);
  if (idx >= prm(0u)) { return; }
{{BODY}}
}
