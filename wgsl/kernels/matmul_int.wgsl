// Integer GEMM (engines/gemm.cpp, through kernel/kernel.h): O[b] = alpha * A[b] @ B[b] (+ beta * C[b]),
// exact with CPU's wrap-around: int8..int32 and uint8 accumulate in i32 (a ring homomorphism of
// the narrow type's arithmetic, so the stored low bits equal CPU's), int64 in the emulated
// vec2<u32> arithmetic of wgsl/lib/int64.wgsl. 16x16 output tiles, A and B staged in workgroup memory.
// Operands: 0 A, 1 B, 2 O, 3 C (when beta != 0).
// Parameters: M, N, K, tiles_m, tiles_n, batch, per operand x in a, b, c, o: x_off (element offset), x_sb
//   (batch stride), x_s<dim> (stride along m, n or k); alpha, beta of the accumulator's type.

alias ACC = {{ACC}};
fn zero() -> ACC { return {{ZERO}}; }
fn add(a: ACC, b: ACC) -> ACC { return {{ADD}}; }
fn mul(a: ACC, b: ACC) -> ACC { return {{MUL}}; }

var<workgroup> As: array<ACC, 256>;
var<workgroup> Bs: array<ACC, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let M = P.M;
  let N = P.N;
  let K = P.K;
  let g = linear_id(wid, nwg, 0u, 1u);
  let per = P.tiles_m * P.tiles_n;
  let b = g / per;
  if (b >= P.batch) { return; }  // a folded grid's spare workgroups (uniform: one id per workgroup)
  let r = g % per;
  let tx = lid % 16u;
  let ty = lid / 16u;
  let m = (r / P.tiles_n) * 16u + ty;
  let n = (r % P.tiles_n) * 16u + tx;
  let abase = P.a_off + b * P.a_sb + m * P.a_sm;
  let bbase = P.b_off + b * P.b_sb + n * P.b_sn;
  var acc = zero();
  let nk = (K + 15u) / 16u;
  for (var t = 0u; t < nk; t = t + 1u) {
    let ka = t * 16u + tx;
    var av = zero();
    if (m < M && ka < K) { av = ld0(abase + ka * P.a_sk); }
    As[lid] = av;
    let kb = t * 16u + ty;
    var bv = zero();
    if (kb < K && n < N) { bv = ld1(bbase + kb * P.b_sk); }
    Bs[lid] = bv;
    workgroupBarrier();
    for (var kk = 0u; kk < 16u; kk = kk + 1u) {
      acc = add(acc, mul(As[ty * 16u + kk], Bs[kk * 16u + tx]));
    }
    workgroupBarrier();
  }
  if (m < M && n < N) {
    var v = mul(P.alpha, acc);
    {{C_TERM}}
    st2(P.o_off + b * P.o_sb + m * P.o_sm + n * P.o_sn, v);
  }
}
