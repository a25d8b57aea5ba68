// Batched complex64 FFTs in workgroup memory (ops/fft.cpp). One workgroup transforms G rows of
// length N: the Stockham passes (radix 2, 3, 4, 5, 7, 8, 16, one pass per radix of the plan,
// ping-ponging between two workgroup arrays), the first reading its butterflies' inputs from x and
// the last storing its outputs to y, optionally times the four-step twiddle W_n^(i k) and a scale. Twiddles come from a table computed on the host in double:
// W[m] = exp(-2 pi i m / n); a sub-transform of length N reads W[m * tstride] (n = N * tstride;
// tstride 1 for the four-step passes, which get their own length's table).
// With G rows side by side (four-step passes, ops/fft.cpp) consecutive invocations of the first
// and last passes load and store the same element of consecutive rows; in place (SB empty) each pass keeps its results in registers
// across a barrier. Rows: g = b * inner + i; element e of row g is x[x_off + b x_bs + i x_is + e x_es],
// output k goes to y[y_off + b y_bs + i y_is + k y_es]; with three levels (the last pass of a
// three-pass transform) b = c bn + b', adding c x_cs and c y_cs. Rows lie NP >= N points apart in
// workgroup memory. Placeholders: G rows per workgroup, T invocations, the passes, ROW_AT, IX.
var<workgroup> sa: array<vec2<f32>, {{CAP}}>;
{{SB}}

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
// W^m of the full table, conjugated for inverse transforms (P.sg = -1).
fn twid(m: u32) -> vec2<f32> {
  let w = bitcast<vec2<f32>>(ld1(m));
  return vec2<f32>(w.x, P.sg * w.y);
}
// The four-step twiddle W_n^m (operand 3, the whole length's table) as W^(m - m % 1024) W^(m % 1024):
// the twiddles W^(i e) of neighbouring rows lie far apart in a long table, while these two factors
// come from 2 x 1024 entries that stay in cache (one more rounding: about 1 ulp). twm, twid2:
{{MID_FN}}
fn tws(m: u32) -> vec2<f32> { return twid(m * P.tstride); }
// Multiplication by -i (forward) or +i (inverse): the radix-4 butterfly's quarter turn.
fn qturn(a: vec2<f32>) -> vec2<f32> { return vec2<f32>(P.sg * a.y, -P.sg * a.x); }
// Where point a of the workgroup's rows lies in workgroup memory (IX: a, or a + a / 16 to spread
// the strided stores of the first passes over the banks).
fn ix(a: u32) -> u32 { return {{IX}}; }
// Where row `row` starts in x (.x) and in y (.y).
fn row_at(row: u32) -> vec2<u32> {
{{ROW_AT}}
}

@compute @workgroup_size({{T}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g0 = linear_id(wid, nwg, 0u, 1u) * {{G}}u;
{{PASSES}}
}
