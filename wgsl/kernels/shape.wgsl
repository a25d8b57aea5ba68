// Shape-building kernels (engines/remap.cpp, ops/shape_ops.cpp; ops/pad.cpp through the remap
// engine). Each section below (kernel::section) is one kernel body; ops fill its placeholders
// (kernel::fill) with per-dimension code that they unroll for the kernel's rank (index arithmetic
// stays in registers, no runtime mode switches).
// Every kernel is one invocation per output element, 256 per workgroup, over a folded grid.

//== main_element
// Entry point, one invocation per output element: elem(i) gives its storage index and raw value.
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, 256u);
  if (i >= P.n) { return; }  // n: output elements
  let x = elem(i);
  st{{OUT}}(x.oe, x.v);
}

//== main_word
// Entry point for a contiguous, word-aligned output of a sub-word dtype that owns its last word:
// one invocation per 32-bit word packs its PER elements and stores the word once (no read-modify-
// write atomics). P.out_off is the output's storage offset in elements (a multiple of PER).
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let w = linear_id(wid, nwg, lid, 256u);
  let n = P.n;
  if (w * {{PER}}u >= n) { return; }
  var word = 0u;
  for (var k = 0u; k < {{PER}}u; k = k + 1u) {
    let e = w * {{PER}}u + k;
    if (e < n) { word = word | ((elem(e).v & {{MASK}}) << (k * {{WIDTH}}u)); }
  }
  wr{{OUT}}(P.out_off / {{PER}}u + w, word);
}

//== remap
// out[o] = in[map(o)] per dimension (identity, flip, roll, reflect, replicate, constant pad).
// Parameters: n elements, out_off / in_off storage offsets, pad (the pad value's bits), dims: per dim
// (innermost first) 5 words: out size, out stride, in size, in stride, a (shift or left pad, i32).
struct EV { oe: u32, v: VT, };
fn elem(i: u32) -> EV {
  var r = i;
  var oe = P.out_off;
  var ie = P.in_off;
  var pad = false;
{{DIMS}}
  if (pad) { return EV(oe, {{PADVALUE}}); }
  return EV(oe, ld0(ie));
}

//== cat
// Concatenation of up to K inputs in one dispatch. The element's output coordinate along the cat
// dim picks the input (a short unrolled compare chain over the inputs' start offsets).
// Parameters: n elements, out_off, per dim (innermost first) sizes and out_strides, per input q:
// start(q) along the cat dim, in_off(q) its storage offset, in_strides(q * RANK + d).
struct EV { oe: u32, v: VT, };
fn elem(i: u32) -> EV {
  var r = i;
  var oe = P.out_off;
  var c: array<u32, {{RANK}}>;
  for (var d = 0u; d < {{RANK}}u; d = d + 1u) {
    let n = P_sizes(d);
    c[d] = r % n;
    r = r / n;
    oe = oe + c[d] * P_out_strides(d);
  }
  let j = c[{{CATDIM}}u];
{{PICK}}
}

//== tri
// tril/triu: keeps elements whose column - row compares with the diagonal offset, zeroes the rest.
// Parameters: n elements, out_off, in_off, diag (the diagonal offset, i32), per dim (innermost
// first): sizes, out_strides, in_strides.
struct EV { oe: u32, v: VT, };
fn elem(i: u32) -> EV {
  var r = i;
  var oe = P.out_off;
  var ie = P.in_off;
  var col = 0u;
  var row = 0u;
  for (var d = 0u; d < {{RANK}}u; d = d + 1u) {
    let n = P_sizes(d);
    let x = r % n;
    r = r / n;
    oe = oe + x * P_out_strides(d);
    ie = ie + x * P_in_strides(d);
    if (d == 0u) { col = x; }
    if (d == 1u) { row = x; }
  }
  let k = i32(col) - i32(row);
  if ({{KEEP}}) { return EV(oe, ld0(ie)); }
  return EV(oe, {{ZERO}});
}

//== one_hot
// out[p, k] = (in[p] == k), int64; the output is contiguous. Parameters: n elements, classes,
// in_off, out_off, per input dim (innermost first): sizes, strides.
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let i = linear_id(wid, nwg, lid, 256u);
  if (i >= P.n) { return; }
  let k = i % P.classes;
  var r = i / P.classes;
  var ie = P.in_off;
  for (var d = 0u; d < {{RANK}}u; d = d + 1u) {
    let n = P_sizes(d);
    ie = ie + (r % n) * P_strides(d);
    r = r / n;
  }
  let v = ld0(ie);
  st1(P.out_off + i, vec2<u32>(select(0u, 1u, v.x == k && v.y == 0u), 0u));
}

//== ri_scan
// repeat_interleave(repeats): inclusive prefix sums of the repeats (one workgroup, 256 at a time
// with a carry), written as u32 to out[0..n); out[n] gets flags: 1 a negative repeat, 2 a sum past
// 32 bits. Parameters: n repeats, rep_off and rep_stride (the repeats' storage offset and stride).
var<workgroup> sh: array<u32, 256>;
var<workgroup> flags: atomic<u32>;
@compute @workgroup_size(256) fn main(@builtin(local_invocation_index) lid: u32) {
  let n = P.n;
  var carry = 0u;
  var fl = 0u;
  for (var base = 0u; base < n; base = base + 256u) {
    let idx = base + lid;
    var v = 0u;
    if (idx < n) {
      let r = ld0(P.rep_off + idx * P.rep_stride);
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

//== ri_fill
// out[p] = the first i with cumsum[i] > p. Parameters: total (output elements), n repeats.
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let p = linear_id(wid, nwg, lid, 256u);
  if (p >= P.total) { return; }
  var lo = 0u;
  var hi = P.n - 1u;
  while (lo < hi) {
    let mid = (lo + hi) / 2u;
    if (ld0(mid) > p) { hi = mid; } else { lo = mid + 1u; }
  }
  st1(p, {{VALUE}});
}

//== tri_indices
// tril_indices / triu_indices: index t of the 2 x N result -> (row, col), by a binary search over
// rows of the closed-form count of elements before each row. Parameters: n (N), rows, cols, offset
// (i32; triu passes offset - 1 and counts the complement), out_off (the result's storage offset).
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
  let k = P.offset;
  let cols = i32(P.cols);
  if ({{UPPER}}) { return u32(r) * u32(cols) - tril_before(r, k, cols); }
  return tril_before(r, k, cols);
}
@compute @workgroup_size(256) fn main(@builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  let n = P.n;
  if (t >= n) { return; }
  var lo = 0i;
  var hi = i32(P.rows) - 1;
  while (lo < hi) {
    let mid = (lo + hi + 1) / 2;
    if (before(mid) <= t) { lo = mid; } else { hi = mid - 1; }
  }
  var c = i32(t - before(lo));
  if ({{UPPER}}) { c = c + max(lo + P.offset + 1, 0); }
  st0(P.out_off + t, {{CONV}}(lo));
  st0(P.out_off + n + t, {{CONV}}(c));
}
