// Integer GEMM (ops/linalg.cpp, through ops/kernel.h): O[b] = alpha * A[b] @ B[b] (+ beta * C[b]),
// exact with CPU's wrap-around: int8..int32 and uint8 accumulate in i32 (a ring homomorphism of
// the narrow type's arithmetic, so the stored low bits equal CPU's), int64 in the emulated
// vec2<u32> arithmetic of wgsl/int64.wgsl. 16x16 output tiles, A and B staged in workgroup memory.
// Operands: 0 A, 1 B, 2 O, 3 C (when beta != 0).
// Parameters: 0 M, 1 N, 2 K, 3 tiles_m, 4 tiles_n, 5 offA, 6 sAb, 7 sAm, 8 sAk, 9 offB, 10 sBb,
//   11 sBk, 12 sBn, 13 offC, 14 sCb, 15 sCm, 16 sCn, 17 offO, 18 sOb, 19 sOm, 20 sOn,
//   21-22 alpha, 23-24 beta (one word each for i32, lo/hi for i64).

alias ACC = {{ACC}};
fn zero() -> ACC { return {{ZERO}}; }
fn add(a: ACC, b: ACC) -> ACC { return {{ADD}}; }
fn mul(a: ACC, b: ACC) -> ACC { return {{MUL}}; }
fn scalar(i: u32) -> ACC { return {{SCALAR}}; }

var<workgroup> As: array<ACC, 256>;
var<workgroup> Bs: array<ACC, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let M = prm(0u);
  let N = prm(1u);
  let K = prm(2u);
  let g = (wid.z * nwg.y + wid.y) * nwg.x + wid.x;
  let per = prm(3u) * prm(4u);
  let b = g / per;
  let r = g % per;
  let tx = lid % 16u;
  let ty = lid / 16u;
  let m = (r / prm(4u)) * 16u + ty;
  let n = (r % prm(4u)) * 16u + tx;
  let abase = prm(5u) + b * prm(6u) + m * prm(7u);
  let bbase = prm(9u) + b * prm(10u) + n * prm(12u);
  var acc = zero();
  let nk = (K + 15u) / 16u;
  for (var t = 0u; t < nk; t = t + 1u) {
    let ka = t * 16u + tx;
    var av = zero();
    if (m < M && ka < K) { av = ld0(abase + ka * prm(8u)); }
    As[lid] = av;
    let kb = t * 16u + ty;
    var bv = zero();
    if (kb < K && n < N) { bv = ld1(bbase + kb * prm(11u)); }
    Bs[lid] = bv;
    workgroupBarrier();
    for (var kk = 0u; kk < 16u; kk = kk + 1u) {
      acc = add(acc, mul(As[ty * 16u + kk], Bs[kk * 16u + tx]));
    }
    workgroupBarrier();
  }
  if (m < M && n < N) {
    var v = mul(scalar(21u), acc);
    {{C_TERM}}
    st2(prm(17u) + b * prm(18u) + m * prm(19u) + n * prm(20u), v);
  }
}
