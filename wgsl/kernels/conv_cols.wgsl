// Columns of a convolution's input for the GEMM form of a float16 convolution (ops/conv.cpp,
// cols_gemm): COLS[n, ci * KS + k, y] = X[n, ci, y * stride - pad + k * dilation] (0 in the
// padding), a [N, Ci*KS, YS] tensor. The host's run(t) writes float16 columns two elements (one
// word) per invocation (YS and the columns' element offset are even, so a word never spans two
// rows), other dtypes one element per invocation. X is read through the host's ld0 (f32); the spatial sizes, strides, padding and dilation are arrays of 3 (depth, height,
// width; leading ones 1 / 0 below 3-d).
// Parameters: n (invocations), x_size, y_size, k_size, stride, pad, dilation, x_off (X's element
// offset), and cols_word (float16: the columns' first word) or cols_off (their first element).

fn cols_value(e: u32) -> f32 {
  let YS = P_y_size(0u) * P_y_size(1u) * P_y_size(2u);
  let KS = P_k_size(0u) * P_k_size(1u) * P_k_size(2u);
  let y = e % YS;
  let r = e / YS;            // n * (Ci * KS) + ci * KS + k
  let k = r % KS;
  let c = r / KS;            // n * Ci + ci
  let yp = vec3<u32>(y / (P_y_size(1u) * P_y_size(2u)), (y / P_y_size(2u)) % P_y_size(1u), y % P_y_size(2u));
  let kp = vec3<u32>(k / (P_k_size(1u) * P_k_size(2u)), (k / P_k_size(2u)) % P_k_size(1u), k % P_k_size(2u));
  let st = vec3<i32>(i32(P_stride(0u)), i32(P_stride(1u)), i32(P_stride(2u)));
  let pd = vec3<i32>(i32(P_pad(0u)), i32(P_pad(1u)), i32(P_pad(2u)));
  let dl = vec3<i32>(i32(P_dilation(0u)), i32(P_dilation(1u)), i32(P_dilation(2u)));
  let xs = vec3<i32>(i32(P_x_size(0u)), i32(P_x_size(1u)), i32(P_x_size(2u)));
  let x = vec3<i32>(yp) * st - pd + vec3<i32>(kp) * dl;
  if (any(x < vec3<i32>(0)) || any(x >= xs)) { return 0.0; }
  let xu = vec3<u32>(x);
  return ld0(P.x_off + ((c * P_x_size(0u) + xu.x) * P_x_size(1u) + xu.y) * P_x_size(2u) + xu.z);
}
