// Shape-building kernels (ops/shape_ops.cpp, ops/pad.cpp). Each section below, from its `//@@ name`
// line to the next, is one kernel body; ops fill the {{PLACEHOLDERS}} with per-dimension code that
// they unroll for the kernel's rank (index arithmetic stays in registers, no runtime mode switches).
// Every kernel is one invocation per output element, 256 per workgroup, over a folded grid.

//@@ main_element
// Entry point, one invocation per output element: elem(i) gives its storage index and raw value.
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, 256u);
  if (i >= prm(0u)) { return; }
  let x = elem(i);
  st{{OUT}}(x.oe, x.v);
}

//@@ main_word
// Entry point for a contiguous, word-aligned output of a sub-word dtype that owns its last word:
// one invocation per 32-bit word packs its PER elements and stores the word once (no read-modify-
// write atomics). prm(1) is the output's storage offset in elements (a multiple of PER).
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let w = linear_id(wid, nwg, lid, 256u);
  let n = prm(0u);
  if (w * {{PER}}u >= n) { return; }
  var word = 0u;
  for (var k = 0u; k < {{PER}}u; k = k + 1u) {
    let e = w * {{PER}}u + k;
    if (e < n) { word = word | ((elem(e).v & {{MASK}}) << (k * {{WIDTH}}u)); }
  }
  wr{{OUT}}(prm(1u) / {{PER}}u + w, word);
}

//@@ remap
// out[o] = in[map(o)] per dimension (identity, flip, roll, reflect, replicate, constant pad).
// Parameters: [0] elements, [1] out offset, [2] in offset, [3..4] pad value bits, then per dim
// (innermost first): out size, out stride, in size, in stride, a (shift or left pad, as i32).
struct EV { oe: u32, v: {{T}}, };
fn elem(i: u32) -> EV {
  var r = i;
  var oe = prm(1u);
  var ie = prm(2u);
  var pad = false;
{{DIMS}}
  if (pad) { return EV(oe, {{PADVALUE}}); }
  return EV(oe, ld0(ie));
}

//@@ cat
// Concatenation of up to K inputs in one dispatch. The element's output coordinate along the cat
// dim picks the input (a short unrolled compare chain over the inputs' start offsets).
// Parameters: [0] elements, [1] out offset, then per dim (innermost first): size, out stride, then
// per input: start along the cat dim, storage offset, strides (innermost first).
struct EV { oe: u32, v: {{T}}, };
fn elem(i: u32) -> EV {
  var r = i;
  var oe = prm(1u);
  var c: array<u32, {{RANK}}>;
  for (var d = 0u; d < {{RANK}}u; d = d + 1u) {
    let n = prm(2u + 2u * d);
    c[d] = r % n;
    r = r / n;
    oe = oe + c[d] * prm(3u + 2u * d);
  }
  let j = c[{{CATDIM}}u];
{{PICK}}
}

//@@ tri
// tril/triu: keeps elements whose column - row compares with the diagonal offset, zeroes the rest.
// Parameters: [0] elements, [1] out offset, [2] in offset, [3] diagonal (i32), then per dim
// (innermost first): size, out stride, in stride.
struct EV { oe: u32, v: {{T}}, };
fn elem(i: u32) -> EV {
  var r = i;
  var oe = prm(1u);
  var ie = prm(2u);
  var col = 0u;
  var row = 0u;
  for (var d = 0u; d < {{RANK}}u; d = d + 1u) {
    let n = prm(4u + 3u * d);
    let x = r % n;
    r = r / n;
    oe = oe + x * prm(5u + 3u * d);
    ie = ie + x * prm(6u + 3u * d);
    if (d == 0u) { col = x; }
    if (d == 1u) { row = x; }
  }
  let k = i32(col) - i32(row);
  if ({{KEEP}}) { return EV(oe, ld0(ie)); }
  return EV(oe, {{ZERO}});
}

//@@ one_hot
// out[p, k] = (in[p] == k), int64; the output is contiguous. Parameters: [0] elements, [1] classes,
// [2] in offset, then per input dim (innermost first): size, stride.
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, 256u);
  if (i >= prm(0u)) { return; }
  let k = i % prm(1u);
  var r = i / prm(1u);
  var ie = prm(2u);
  for (var d = 0u; d < {{RANK}}u; d = d + 1u) {
    let n = prm(3u + 2u * d);
    ie = ie + (r % n) * prm(4u + 2u * d);
    r = r / n;
  }
  let v = ld0(ie);
  st1(i, vec2<u32>(select(0u, 1u, v.x == k && v.y == 0u), 0u));
}

//@@ pad_backward
// Gradient of reflection / replication padding over the last D dims, gathered: each grad_input
// element sums the grad_output elements its value was copied to (at most 3 per dim for reflect, a
// run of the pad's width at an edge for replicate), in f32, in a fixed order.
// Parameters: [0] elements, [1] grad_output offset, [2] grad_input offset (both contiguous), then
// per padded dim (innermost first): input size, output size, left pad.
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, 256u);
  if (i >= prm(0u)) { return; }
  var r = i;
  var obase = 1u;  // elements of one output plane so far (innermost dims)
  var cand: array<vec3<i32>, {{D}}>;  // reflect: up to 3 positions (-1: none); replicate: (first, count, -)
  var ostr: array<u32, {{D}}>;
  for (var d = 0u; d < {{D}}u; d = d + 1u) {
    let n = prm(3u + 3u * d);
    let on = prm(4u + 3u * d);
    let pl = bitcast<i32>(prm(5u + 3u * d));
    let c = i32(r % n);
    r = r / n;
    ostr[d] = obase;
    obase = obase * on;
{{PERDIM}}
  }
  let ob = prm(1u) + r * obase;  // r is now the batch index
  var acc = 0.0;
{{LOOPS}}
  st1(prm(2u) + i, acc);
}

//@@ ri_scan
// repeat_interleave(repeats): inclusive prefix sums of the repeats (one workgroup, 256 at a time
// with a carry), written as u32 to out[0..n); out[n] gets flags: 1 a negative repeat, 2 a sum past
// 32 bits. Parameters: [0] n, [1] repeats offset, [2] repeats stride.
var<workgroup> sh: array<u32, 256>;
var<workgroup> flags: atomic<u32>;
@compute @workgroup_size(256) fn main(@builtin(local_invocation_index) lid: u32) {
  let n = prm(0u);
  var carry = 0u;
  var fl = 0u;
  for (var base = 0u; base < n; base = base + 256u) {
    let idx = base + lid;
    var v = 0u;
    if (idx < n) {
      let r = ld0(prm(1u) + idx * prm(2u));
      if ((r.y & 0x80000000u) != 0u) { fl = fl | 1u; } else if (r.y != 0u) { fl = fl | 2u; } else { v = r.x; }
    }
    sh[lid] = v;
    workgroupBarrier();
    for (var o = 1u; o < 256u; o = o << 1u) {
      var t = 0u;
      if (lid >= o) { t = sh[lid - o]; }
      workgroupBarrier();
      if (sh[lid] + t < t) { fl = fl | 2u; }
      sh[lid] = sh[lid] + t;
      workgroupBarrier();
    }
    let total = sh[255];
    if (carry + total < carry) { fl = fl | 2u; }
    if (idx < n) { st1(idx, carry + sh[lid]); }
    carry = carry + total;
    workgroupBarrier();
  }
  atomicOr(&flags, fl);
  workgroupBarrier();
  if (lid == 0u) { st1(n, atomicLoad(&flags)); }
}

//@@ ri_fill
// out[p] = the first i with cumsum[i] > p. Parameters: [0] total, [1] n.
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let p = linear_id(wid, nwg, lid, 256u);
  if (p >= prm(0u)) { return; }
  var lo = 0u;
  var hi = prm(1u) - 1u;
  while (lo < hi) {
    let mid = (lo + hi) / 2u;
    if (ld0(mid) > p) { hi = mid; } else { lo = mid + 1u; }
  }
  st1(p, {{VALUE}});
}

//@@ tri_indices
// tril_indices / triu_indices: index t of the 2 x N result -> (row, col), by a binary search over
// rows of the closed-form count of elements before each row. Parameters: [0] N, [1] rows, [2] cols,
// [3] offset (i32; triu passes offset - 1 and counts the complement), [4] result offset.
fn tril_before(r: i32, k: i32, cols: i32) -> u32 {  // sum over i < r of clamp(i + k + 1, 0, cols)
  let i0 = clamp(-k, 0, r);
  let i1 = clamp(cols - k - 1, i0, r);
  let a = u32(i0 + k + 1);
  let b = u32(i1 + k);
  let cnt = u32(i1 - i0);
  var part = 0u;
  if (cnt > 0u) { part = select(cnt * ((a + b) / 2u), (cnt / 2u) * (a + b), cnt % 2u == 0u); }
  return part + u32(r - i1) * u32(cols);
}
fn before(r: i32) -> u32 {
  let k = bitcast<i32>(prm(3u));
  let cols = i32(prm(2u));
  if ({{UPPER}}) { return u32(r) * u32(cols) - tril_before(r, k, cols); }
  return tril_before(r, k, cols);
}
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  let n = prm(0u);
  if (t >= n) { return; }
  var lo = 0i;
  var hi = i32(prm(1u)) - 1;
  while (lo < hi) {
    let mid = (lo + hi + 1) / 2;
    if (before(mid) <= t) { lo = mid; } else { hi = mid - 1; }
  }
  var c = i32(t - before(lo));
  if ({{UPPER}}) { c = c + max(lo + bitcast<i32>(prm(3u)) + 1, 0); }
  st0(prm(4u) + t, {{CONV}}(lo));
  st0(prm(4u) + n + t, {{CONV}}(c));
}
