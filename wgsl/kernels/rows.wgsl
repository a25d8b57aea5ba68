// Workgroup folds of the row kernels (ops/rows.h: softmax, layer/group norm; a workgroup per row).
// The including kernel defines `const WG: u32` (its workgroup size, a power of two). Each fold
// combines one value per invocation in a fixed order (deterministic) and hands every invocation
// the result. Two sections with the same functions: `shared` (a tree in workgroup memory, any
// adapter) and `subgroup` (a subgroup fold, then the subgroups' results in order).

var<workgroup> wg_a: array<f32, WG>;
var<workgroup> wg_b: array<f32, WG>;

//== shared
fn wg_sum(lid: u32, v: f32) -> f32 {
  wg_a[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) { wg_a[lid] = wg_a[lid] + wg_a[lid + s]; }
    workgroupBarrier();
  }
  let r = wg_a[0];
  workgroupBarrier();
  return r;
}

// Two sums at once.
fn wg_sum2(lid: u32, v: vec2<f32>) -> vec2<f32> {
  wg_a[lid] = v.x;
  wg_b[lid] = v.y;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) {
      wg_a[lid] = wg_a[lid] + wg_a[lid + s];
      wg_b[lid] = wg_b[lid] + wg_b[lid + s];
    }
    workgroupBarrier();
  }
  let r = vec2<f32>(wg_a[0], wg_b[0]);
  workgroupBarrier();
  return r;
}

// The maximum (a NaN may be dropped: callers whose result must turn NaN also sum the values).
fn wg_max(lid: u32, v: f32) -> f32 {
  wg_a[lid] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) { wg_a[lid] = max(wg_a[lid], wg_a[lid + s]); }
    workgroupBarrier();
  }
  let r = wg_a[0];
  workgroupBarrier();
  return r;
}

//== subgroup
// Subgroup size and lane, set by the entry point. Lanes of a subgroup are consecutive invocations
// (as the reduction engine also assumes), so invocation lid is in subgroup lid / sg_n.
var<private> sg_n: u32;
var<private> sg_i: u32;

fn wg_sum(lid: u32, v: f32) -> f32 {
  let s = subgroupAdd(v);
  if (sg_i == 0u) { wg_a[lid / sg_n] = s; }
  workgroupBarrier();
  var r = wg_a[0];
  for (var i = 1u; i < WG / sg_n; i = i + 1u) { r = r + wg_a[i]; }
  workgroupBarrier();
  return r;
}

fn wg_sum2(lid: u32, v: vec2<f32>) -> vec2<f32> {
  let s = subgroupAdd(v);
  if (sg_i == 0u) {
    wg_a[lid / sg_n] = s.x;
    wg_b[lid / sg_n] = s.y;
  }
  workgroupBarrier();
  var r = vec2<f32>(wg_a[0], wg_b[0]);
  for (var i = 1u; i < WG / sg_n; i = i + 1u) { r = r + vec2<f32>(wg_a[i], wg_b[i]); }
  workgroupBarrier();
  return r;
}

fn wg_max(lid: u32, v: f32) -> f32 {
  let s = subgroupMax(v);
  if (sg_i == 0u) { wg_a[lid / sg_n] = s; }
  workgroupBarrier();
  var r = wg_a[0];
  for (var i = 1u; i < WG / sg_n; i = i + 1u) { r = max(r, wg_a[i]); }
  workgroupBarrier();
  return r;
}
