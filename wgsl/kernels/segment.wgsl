// torch.segment_reduce and its backward (ops/segment_reduce.cpp), in CPU's order and arithmetic:
// data [outer, A, inner] (contiguous), offsets [outer, S + 1] (segment s of row o covers
// [off(o, s), off(o, s + 1)) along A), output and grad [outer, S, inner]. Values compute in f32 and
// are rounded to the data's dtype after every step (rnd, defined by the host), as CPU's scalar_t
// arithmetic rounds. Reductions: 0 max, 1 mean, 2 min, 3 sum, 4 prod (ATen's ReductionType).
// Uses the pointwise library (is_nan, f_nan). Parameters: n (invocations), S, A, inner, red, init,
// *_off (operand offsets); forward also has_init.
// Each section defines run(t) for element t < P.n; the host adds the entry point main.

// Row o's offset j, clamped into [0, A] (unsafe lengths may run past the data).
fn off(o: u32, j: u32) -> u32 { return u32(clamp(ld1(P.offs_off + o * (P.S + 1u) + j), 0, i32(P.A))); }

fn at_data(o: u32, k: u32, i: u32) -> f32 { return ld0(P.data_off + (o * P.A + k) * P.inner + i); }

//== forward
// Operands: 0 data, 1 offsets (i32), 2 output.
fn run(t: u32) {
  let i = t % P.inner;
  let s = (t / P.inner) % P.S;
  let o = t / (P.inner * P.S);
  let b = off(o, s);
  let e = max(b, off(o, s + 1u));
  var acc = P.init;
  for (var k = b; k < e; k++) {
    let v = at_data(o, k, i);
    switch P.red {
      case 0u: { acc = select(select(acc, v, acc < v), v, is_nan(v)); }
      case 2u: { acc = select(select(acc, v, v < acc), v, is_nan(v)); }
      case 4u: { acc = rnd(acc * v); }
      default: { acc = rnd(acc + v); }
    }
  }
  if (P.red == 1u) {
    if (e == b && P.has_init == 0u) {
      acc = f_nan();
    } else if (e > b && !is_nan(acc)) {
      acc = rnd(acc / f32(e - b));
    }
  }
  st2(P.out_off + t, acc);
}

//== backward
// Operands: 0 data, 1 offsets (i32), 2 grad, 3 output, 4 grad_input. One invocation per data element.
fn run(t: u32) {
  let i = t % P.inner;
  let k = (t / P.inner) % P.A;
  let o = t / (P.inner * P.A);
  if (P.S == 0u) {
    st4(P.gin_off + t, 0.0);
    return;
  }
  // The last segment starting at or before k (binary search over the row's offsets).
  var lo = 0u;
  var hi = P.S;
  while (lo + 1u < hi) {
    let mid = (lo + hi) / 2u;
    if (off(o, mid) <= k) { lo = mid; } else { hi = mid; }
  }
  let b = off(o, lo);
  let e = off(o, lo + 1u);
  var g = 0.0;
  if (b <= k && k < e) {
    let oi = (o * P.S + lo) * P.inner + i;
    let gr = ld2(P.grad_off + oi);
    let out = ld3(P.outv_off + oi);
    let x = at_data(o, k, i);
    switch P.red {
      case 0u, 2u: {
        if (is_nan(x) || x == out) {
          g = gr;
          var count = 0u;
          for (var j = b; j < e; j++) {
            let y = at_data(o, j, i);
            if (is_nan(y) || y == out) { count++; }
          }
          if (count >= 2u && g > 0.0) { g = rnd(g / f32(count)); }
        }
      }
      case 1u: { g = rnd(gr / f32(e - b)); }
      case 4u: {
        if (is_nan(x) || x == 0.0) {
          var excl = P.init;
          for (var j = b; j < e; j++) {
            if (j != k) { excl = rnd(excl * at_data(o, j, i)); }
          }
          g = rnd(gr * excl);
        } else {
          g = rnd(rnd(gr * out) / x);
        }
      }
      default: { g = gr; }
    }
  }
  st4(P.gin_off + t, g);
}
