// Pooling kernels (ops/pool.cpp), one invocation per output element (forward) or per input element
// (backward, gathering from the windows that cover it: no atomics). Tensors are contiguous
// [planes, D, H, W]; 1d/2d pools have leading spatial sizes of 1. The host keeps one section
// (from its "//==" marker line to the next) and prepends the value type V with v_* helpers.
// Parameters: 0 count, 1-3 input D,H,W, 4-6 output D,H,W, 7-9 kernel, 10-12 stride, 13-15 padding,
// 16-18 dilation, 19-21 operand offsets (0, 1, 2), 22 count_include_pad, 23 divisor_override (i32, 0: none).

fn isz() -> vec3<i32> { return vec3<i32>(i32(prm(1u)), i32(prm(2u)), i32(prm(3u))); }
fn osz() -> vec3<i32> { return vec3<i32>(i32(prm(4u)), i32(prm(5u)), i32(prm(6u))); }
fn ksz() -> vec3<i32> { return vec3<i32>(i32(prm(7u)), i32(prm(8u)), i32(prm(9u))); }
fn strd() -> vec3<i32> { return vec3<i32>(i32(prm(10u)), i32(prm(11u)), i32(prm(12u))); }
fn padd() -> vec3<i32> { return vec3<i32>(i32(prm(13u)), i32(prm(14u)), i32(prm(15u))); }
fn dila() -> vec3<i32> { return vec3<i32>(i32(prm(16u)), i32(prm(17u)), i32(prm(18u))); }
fn vol(s: vec3<i32>) -> u32 { return u32(s.x * s.y * s.z); }
fn split3(i: u32, s: vec3<i32>) -> vec3<i32> {
  let u = vec3<u32>(s);
  return vec3<i32>(vec3<u32>(i / (u.y * u.z), (i / u.z) % u.y, i % u.z));
}
fn flat3(p: vec3<i32>, s: vec3<i32>) -> u32 { return u32((p.x * s.y + p.y) * s.z + p.z); }
// Adaptive windows, as ATen's start_index / end_index.
fn a_start(o: i32, osz: i32, isz: i32) -> i32 { return (o * isz) / osz; }
fn a_end(o: i32, osz: i32, isz: i32) -> i32 { return ((o + 1) * isz + osz - 1) / osz; }
// Outputs of a dilated window (size k, stride s, padding p, dilation d) that may cover input i.
fn cover_lo(i: i32, k: i32, s: i32, p: i32, d: i32) -> i32 {
  let span = (k - 1) * d + 1;
  return select((i + p - span) / s + 1, 0, i + p < span);
}
fn cover_hi(i: i32, s: i32, p: i32, o: i32) -> i32 { return min((i + p) / s + 1, o); }

//== max_fwd
// Operands: 0 input (V), 1 output (V), 2 indices (int64).
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let O = osz(); let I = isz(); let OV = vol(O);
  let plane = t / OV;
  let o = split3(t % OV, O);
  var i0 = o * strd() - padd();
  let i1 = min(i0 + (ksz() - vec3<i32>(1)) * dila() + vec3<i32>(1), I);
  let d = dila();
  while (i0.x < 0) { i0.x = i0.x + d.x; }
  while (i0.y < 0) { i0.y = i0.y + d.y; }
  while (i0.z < 0) { i0.z = i0.z + d.z; }
  let base = prm(19u) + plane * vol(I);
  var best = v_lowest();
  var bi = flat3(i0, I);
  for (var a = i0.x; a < i1.x; a = a + d.x) {
    for (var b = i0.y; b < i1.y; b = b + d.y) {
      for (var c = i0.z; c < i1.z; c = c + d.z) {
        let idx = flat3(vec3<i32>(a, b, c), I);
        let v = ld0(base + idx);
        if (v_better(v, best)) { best = v; bi = idx; }
      }
    }
  }
  st1(prm(20u) + t, best);
  st2(prm(21u) + t, vec2<u32>(bi, 0u));
}

//== adaptive_max_fwd
// Operands: 0 input (V), 1 output (V), 2 indices (int64).
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let O = osz(); let I = isz(); let OV = vol(O);
  let plane = t / OV;
  let o = split3(t % OV, O);
  let i0 = vec3<i32>(a_start(o.x, O.x, I.x), a_start(o.y, O.y, I.y), a_start(o.z, O.z, I.z));
  let i1 = vec3<i32>(a_end(o.x, O.x, I.x), a_end(o.y, O.y, I.y), a_end(o.z, O.z, I.z));
  let base = prm(19u) + plane * vol(I);
  var best = v_lowest();
  var bi = flat3(i0, I);
  for (var a = i0.x; a < i1.x; a = a + 1) {
    for (var b = i0.y; b < i1.y; b = b + 1) {
      for (var c = i0.z; c < i1.z; c = c + 1) {
        let idx = flat3(vec3<i32>(a, b, c), I);
        let v = ld0(base + idx);
        if (v_better(v, best)) { best = v; bi = idx; }
      }
    }
  }
  st1(prm(20u) + t, best);
  st2(prm(21u) + t, vec2<u32>(bi, 0u));
}

//== max_bwd
// Operands: 0 grad_output (f32), 1 indices (int64), 2 grad_input (f32). One invocation per input
// element; ADAPTIVE (prepended) picks adaptive windows.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let O = osz(); let I = isz(); let IV = vol(I);
  let plane = t / IV;
  let ii = t % IV;
  let p = split3(ii, I);
  var lo: vec3<i32>; var hi: vec3<i32>;
  if (ADAPTIVE) {
    lo = (p * O) / I;
    hi = min(((p + vec3<i32>(1)) * O + I - vec3<i32>(1)) / I, O);
  } else {
    let k = ksz(); let s = strd(); let pd = padd(); let d = dila();
    lo = vec3<i32>(cover_lo(p.x, k.x, s.x, pd.x, d.x), cover_lo(p.y, k.y, s.y, pd.y, d.y), cover_lo(p.z, k.z, s.z, pd.z, d.z));
    hi = vec3<i32>(cover_hi(p.x, s.x, pd.x, O.x), cover_hi(p.y, s.y, pd.y, O.y), cover_hi(p.z, s.z, pd.z, O.z));
  }
  let base = plane * vol(O);
  var acc = 0.0;
  for (var a = lo.x; a < hi.x; a = a + 1) {
    for (var b = lo.y; b < hi.y; b = b + 1) {
      for (var c = lo.z; c < hi.z; c = c + 1) {
        let o = base + flat3(vec3<i32>(a, b, c), O);
        let idx = ld1(prm(20u) + o);
        if (idx.x == ii && idx.y == 0u) { acc = acc + ld0(prm(19u) + o); }
      }
    }
  }
  st2(prm(21u) + t, acc);
}

//== avg_fwd
// Operands: 0 input (V), 1 output (V).
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let O = osz(); let I = isz(); let OV = vol(O);
  let plane = t / OV;
  let o = split3(t % OV, O);
  var s0 = o * strd() - padd();
  var e0 = min(s0 + ksz(), I + padd());
  let pool = (e0.x - s0.x) * (e0.y - s0.y) * (e0.z - s0.z);
  s0 = max(s0, vec3<i32>(0));
  e0 = min(e0, I);
  if (any(s0 >= e0)) { st1(prm(20u) + t, v_zero()); return; }
  let base = prm(19u) + plane * vol(I);
  var acc = v_zero();
  for (var a = s0.x; a < e0.x; a = a + 1) {
    for (var b = s0.y; b < e0.y; b = b + 1) {
      for (var c = s0.z; c < e0.z; c = c + 1) {
        acc = v_add(acc, ld0(base + flat3(vec3<i32>(a, b, c), I)));
      }
    }
  }
  var div = bitcast<i32>(prm(23u));
  if (div == 0) { div = select((e0.x - s0.x) * (e0.y - s0.y) * (e0.z - s0.z), pool, prm(22u) != 0u); }
  st1(prm(20u) + t, v_div(acc, div));
}

//== avg_bwd
// Operands: 0 grad_output (f32), 1 grad_input (f32). One invocation per input element.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let O = osz(); let I = isz(); let IV = vol(I);
  let plane = t / IV;
  let p = split3(t % IV, I);
  let k = ksz(); let s = strd(); let pd = padd();
  let lo = vec3<i32>(cover_lo(p.x, k.x, s.x, pd.x, 1), cover_lo(p.y, k.y, s.y, pd.y, 1), cover_lo(p.z, k.z, s.z, pd.z, 1));
  let hi = vec3<i32>(cover_hi(p.x, s.x, pd.x, O.x), cover_hi(p.y, s.y, pd.y, O.y), cover_hi(p.z, s.z, pd.z, O.z));
  let base = prm(19u) + plane * vol(O);
  var acc = 0.0;
  for (var a = lo.x; a < hi.x; a = a + 1) {
    for (var b = lo.y; b < hi.y; b = b + 1) {
      for (var c = lo.z; c < hi.z; c = c + 1) {
        let o = vec3<i32>(a, b, c);
        var s0 = o * s - pd;
        var e0 = min(s0 + k, I + pd);
        let pool = (e0.x - s0.x) * (e0.y - s0.y) * (e0.z - s0.z);
        s0 = max(s0, vec3<i32>(0));
        e0 = min(e0, I);
        if (any(p < s0) || any(p >= e0)) { continue; }
        var div = bitcast<i32>(prm(23u));
        if (div == 0) { div = select((e0.x - s0.x) * (e0.y - s0.y) * (e0.z - s0.z), pool, prm(22u) != 0u); }
        acc = acc + ld0(base + flat3(o, O)) / f32(div);
      }
    }
  }
  st1(prm(20u) + t, acc);
}

//== adaptive_avg_fwd
// Operands: 0 input (f32), 1 output (f32).
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let O = osz(); let I = isz(); let OV = vol(O);
  let plane = t / OV;
  let o = split3(t % OV, O);
  let i0 = vec3<i32>(a_start(o.x, O.x, I.x), a_start(o.y, O.y, I.y), a_start(o.z, O.z, I.z));
  let i1 = vec3<i32>(a_end(o.x, O.x, I.x), a_end(o.y, O.y, I.y), a_end(o.z, O.z, I.z));
  let base = prm(19u) + plane * vol(I);
  var acc = 0.0;
  for (var a = i0.x; a < i1.x; a = a + 1) {
    for (var b = i0.y; b < i1.y; b = b + 1) {
      for (var c = i0.z; c < i1.z; c = c + 1) {
        acc = acc + ld0(base + flat3(vec3<i32>(a, b, c), I));
      }
    }
  }
  let n = (i1.x - i0.x) * (i1.y - i0.y) * (i1.z - i0.z);
  st1(prm(20u) + t, acc / f32(n));
}

//== adaptive_avg_bwd
// Operands: 0 grad_output (f32), 1 grad_input (f32). One invocation per input element.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= prm(0u)) { return; }
  let O = osz(); let I = isz(); let IV = vol(I);
  let plane = t / IV;
  let p = split3(t % IV, I);
  let lo = (p * O) / I;
  let hi = min(((p + vec3<i32>(1)) * O + I - vec3<i32>(1)) / I, O);
  let base = prm(19u) + plane * vol(O);
  var acc = 0.0;
  for (var a = lo.x; a < hi.x; a = a + 1) {
    for (var b = lo.y; b < hi.y; b = b + 1) {
      for (var c = lo.z; c < hi.z; c = c + 1) {
        let o = vec3<i32>(a, b, c);
        let i0 = vec3<i32>(a_start(o.x, O.x, I.x), a_start(o.y, O.y, I.y), a_start(o.z, O.z, I.z));
        let i1 = vec3<i32>(a_end(o.x, O.x, I.x), a_end(o.y, O.y, I.y), a_end(o.z, O.z, I.z));
        if (any(p < i0) || any(p >= i1)) { continue; }
        let n = (i1.x - i0.x) * (i1.y - i0.y) * (i1.z - i0.z);
        acc = acc + ld0(base + flat3(o, O)) / f32(n);
      }
    }
  }
  st1(prm(20u) + t, acc);
}
