// The online softmax state (ops/softmax.cpp): the column kernel folds a column with it; the streaming
// row kernel (section `rows`) merges the invocations' states with the workgroup arrays of
// wgsl/kernels/rows.wgsl.

// -inf as a run-time value (infinities cannot be WGSL constants).
fn ninf() -> f32 { var b = 0xff800000u; return bitcast<f32>(b); }

// Online softmax state: running max m and the sum s of exp(x - m).
struct MS { m: f32, s: f32, }

fn ms_add(a: MS, x: f32) -> MS {
  if (x > a.m) { return MS(x, a.s * exp(a.m - x) + 1.0); }
  // x == m == -inf adds nothing; a NaN x makes s NaN (the whole row is NaN, as on CPU).
  return MS(a.m, a.s + select(exp(x - a.m), 0.0, x == ninf()));
}

fn ms_merge(a: MS, b: MS) -> MS {
  let m = max(a.m, b.m);
  let sa = select(a.s * exp(a.m - m), 0.0, a.s == 0.0);
  let sb = select(b.s * exp(b.m - m), 0.0, b.s == 0.0);
  return MS(m, sa + sb);
}

//== columns

//== rows
fn wg_ms(lid: u32, v: MS) -> MS {
  wg_a[lid] = v.m;
  wg_b[lid] = v.s;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s >> 1u) {
    if (lid < s) {
      let r = ms_merge(MS(wg_a[lid], wg_b[lid]), MS(wg_a[lid + s], wg_b[lid + s]));
      wg_a[lid] = r.m;
      wg_b[lid] = r.s;
    }
    workgroupBarrier();
  }
  let r = MS(wg_a[0], wg_b[0]);
  workgroupBarrier();
  return r;
}
