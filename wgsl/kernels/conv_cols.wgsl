// Columns of a convolution's input for the GEMM form of a convolution (ops/conv.cpp, cols_gemm):
// COLS[n, ci * KS + k, y] = X[n, ci, y * stride - pad + k * dilation] (0 in the padding), a
// [N, Ci*KS, YS] tensor. The host's run(t) writes float16 columns two elements (one word) per
// invocation (YS and the columns' element offset are even, so a word never spans two rows), other
// dtypes one element per invocation. X is read through the host's ld0 (f32).
// The geometry is compiled in (the host puts the constants first: per spatial dim, depth, height,
// width, leading ones 1 / 0 below 3-d: X0..X2 input sizes, Y0..Y2 output sizes, K0..K2 kernel
// sizes, S0..S2 strides, D0..D2 padding, L0..L2 dilation), so that the index arithmetic divides by
// constants: with the sizes as parameters the divisions made this kernel ALU-bound on an H200.
// Parameters: n (invocations), x_off (X's element offset), and cols_word (float16: the columns'
// first word) or cols_off (their first element).

const YS: u32 = Y0 * Y1 * Y2;
const KS: u32 = K0 * K1 * K2;

fn cols_value(e: u32) -> f32 {
  let y = e % YS;
  let r = e / YS;            // n * (Ci * KS) + ci * KS + k
  let k = r % KS;
  let c = r / KS;            // n * Ci + ci
  let yp = vec3<i32>(i32(y / (Y1 * Y2)), i32((y / Y2) % Y1), i32(y % Y2));
  let kp = vec3<i32>(i32(k / (K1 * K2)), i32((k / K2) % K1), i32(k % K2));
  let x = yp * vec3<i32>(S0, S1, S2) - vec3<i32>(D0, D1, D2) + kp * vec3<i32>(L0, L1, L2);
  if (any(x < vec3<i32>(0)) || any(x >= vec3<i32>(i32(X0), i32(X1), i32(X2)))) { return 0.0; }
  let xu = vec3<u32>(x);
  return ld0(P.x_off + ((c * X0 + xu.x) * X1 + xu.y) * X2 + xu.z);
}
