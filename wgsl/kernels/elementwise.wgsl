// The elementwise engine's kernel. The C++ side (engines/elementwise.cpp) fills the ACCESSORS, BODY and WG slots:
// per-operand loads/stores for their dtypes, the op expression, the workgroup size.
// Parameters (named, set by the engine): count (invocations), aux (Word mode's first word), numel,
// shape, the operands' offs and strides, scalars s<k> and CPU-scalar operands c<i>.

{{ACCESSORS}}

@compute @workgroup_size({{WG}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let idx = linear_id(wid, nwg, lid, {{WG}}u);
  if (idx >= P.count) { return; }
{{BODY}}
}
