// The gathered operands of a convolution's implicit GEMMs (ops/conv.cpp, engines::gemm_gathered):
// loaders that the register-tiled GEMM (wgsl/kernels/matmul.wgsl) calls instead of its strided
// ones, so the input's columns are never written to memory. Each returns the 4 elements of one load
// unit, 0 outside the GEMM (k past the split's T.k1, m or n past P.M / P.N) and in the padding.
// Geometry as in wgsl/kernels/conv.wgsl: X the large side (a convolution's input), Y the small side
// (its output), x = y * stride - pad + k * dilation per spatial dim. It is compiled in (the host
// puts the constants first: X0..X2, Y0..Y2, K0..K2 sizes per dim (depth, height, width; leading
// ones 1 / 0 below 3-d), S0..S2 strides, D0..D2 padding, L0..L2 dilation), so the index arithmetic
// divides by constants. The bound operand is read through ela / elb (f32) with P.a_off, P.a_sb
// (P.b_off, P.b_sb): the element offset of the operand's first channel row and the elements between
// images (or between batches of the GEMM).

const XS: u32 = X0 * X1 * X2;
const YS: u32 = Y0 * Y1 * Y2;
const KS: u32 = K0 * K1 * K2;
const STR = vec3<i32>(S0, S1, S2);
const PAD = vec3<i32>(D0, D1, D2);
const DIL = vec3<i32>(L0, L1, L2);

fn split_y(y: u32) -> vec3<i32> { return vec3<i32>(i32(y / (Y1 * Y2)), i32((y / Y2) % Y1), i32(y % Y2)); }
fn split_x(x: u32) -> vec3<i32> { return vec3<i32>(i32(x / (X1 * X2)), i32((x / X2) % X1), i32(x % X2)); }
// The kernel offset of a column k = c * KS + kernel position.
fn split_k(k: u32) -> vec3<i32> {
  let r = k % KS;
  return vec3<i32>(i32(r / (K1 * K2)), i32((r / K2) % K1), i32(r % K2));
}

const XD = vec3<u32>(X0, X1, X2);
const YD = vec3<u32>(Y0, Y1, Y2);

// Position p of a grid of size `dims` (X's or Y's positions) in the channel whose first element is
// `row` (through elb), 0 outside the grid (the padding).
fn grid_at(row: u32, p: vec3<i32>, dims: vec3<u32>) -> f32 {
  if (any(p < vec3<i32>(0)) || any(p >= vec3<i32>(dims))) { return 0.0; }
  let u = vec3<u32>(p);
  return elb(row + (u.x * dims.y + u.y) * dims.z + u.z);
}

// X at position x.
fn x_at(row: u32, x: vec3<i32>) -> f32 { return grid_at(row, x, XD); }

// Y at y where y * stride = t, 0 where there is no such y (t not a multiple of the stride) or it is
// outside Y (a negative t that is a multiple gives a negative y).
fn y_at(row: u32, t: vec3<i32>) -> f32 {
  let y = t / STR;
  if (any(y * STR != t)) { return 0.0; }
  return grid_at(row, y, YD);
}

// One load unit within a row of the grid: at(row, p + c * (0, 0, step)) for c = 0..3, where `at`
// is the section's own (x_at or y_at). The one-row fast path of the loaders below.
fn run4(row: u32, p: vec3<i32>, step: i32) -> vec4<f32> {
  let s = vec3<i32>(0, 0, step);
  return vec4<f32>(at(row, p), at(row, p + s), at(row, p + 2 * s), at(row, p + 3 * s));
}

//== forward
fn at(row: u32, x: vec3<i32>) -> f32 { return x_at(row, x); }

// Forward, B[k, n] = X[image T.b, channel k / KS, x(y = n, kernel position of k)]: 4 along n.
fn load_b(k: u32, n: u32) -> vec4<f32> {
  var v = vec4<f32>(0.0);
  if (k >= T.k1) { return v; }
  let row = P.b_off + T.b * P.b_sb + (k / KS) * XS;
  let kd = split_k(k) * DIL - PAD;
  let p = split_y(n);
  if (n + 3u < YS && u32(p.z) + 3u < Y2) { return run4(row, p * STR + kd, S2); }  // one output row
  for (var c = 0u; c < 4u; c = c + 1u) {
    if (n + c < YS) { v[c] = x_at(row, split_y(n + c) * STR + kd); }
  }
  return v;
}

//== forward_nhwc
// Forward on the matrix units (half, engines::gemm_gathered with units8): X with its channels last
// ([image, position, XC channels], this group's first channel at P.b_off), W as [Co, kernel
// position, CI]: B[k, n] = X[image T.b, x(y = n, kernel position k / CI), channel k % CI], 8 along k
// (CI a multiple of 8) in one 16-byte load, zero in the padding and outside the GEMM.
fn at(row: u32, x: vec3<i32>) -> f32 { return x_at(row, x); }

fn gload8_b(n: u32, k: u32) -> vec4<u32> {
  if (n >= YS || k >= T.k1) { return vec4<u32>(0u); }
  let x = split_y(n) * STR - PAD + split_k(k / CI) * DIL;  // k / CI: the kernel position
  if (any(x < vec3<i32>(0)) || any(x >= vec3<i32>(XD))) { return vec4<u32>(0u); }
  let u = vec3<u32>(x);
  return Bm[(P.b_off + T.b * P.b_sb + ((u.x * X1 + u.y) * X2 + u.z) * XC + k % CI) >> 3u];
}

//== input_grad
// Input gradient (and transposed convolution), B[k, n] = Y[image T.b, channel k / KS, y] where
// y * stride = x(n) + pad - (kernel position of k) * dilation, 0 where no such y: 4 along n.
fn at(row: u32, t: vec3<i32>) -> f32 { return y_at(row, t); }

fn load_b(k: u32, n: u32) -> vec4<f32> {
  var v = vec4<f32>(0.0);
  if (k >= T.k1) { return v; }
  let row = P.b_off + T.b * P.b_sb + (k / KS) * YS;
  let kd = PAD - split_k(k) * DIL;
  let p = split_x(n);
  if (n + 3u < XS && u32(p.z) + 3u < X2) { return run4(row, p + kd, 1); }  // one row of x
  for (var c = 0u; c < 4u; c = c + 1u) {
    if (n + c < XS) { v[c] = y_at(row, split_x(n + c) + kd); }
  }
  return v;
}

//== weight_grad
// Weight gradient, a reduction over images and output positions k = image * YS + y:
// A[m, k] = Y[image, channel m, y] (through ela; P.a_sb: elements between images), 4 along k;
// B[k, n] = X[image, channel n / KS, x(y, kernel position of n)] (P.b_sb), 4 along k.
fn at(row: u32, x: vec3<i32>) -> f32 { return x_at(row, x); }

fn load_a(m: u32, k: u32) -> vec4<f32> {
  var v = vec4<f32>(0.0);
  if (m >= P.M) { return v; }
  let i = k / YS;
  let y = k % YS;
  let row = P.a_off + i * P.a_sb + m * YS;
  if (y + 3u < YS && k + 3u < T.k1) {  // one image
    return vec4<f32>(ela(row + y), ela(row + y + 1u), ela(row + y + 2u), ela(row + y + 3u));
  }
  for (var c = 0u; c < 4u; c = c + 1u) {
    let kk = k + c;
    if (kk < T.k1) { v[c] = ela(P.a_off + (kk / YS) * P.a_sb + m * YS + kk % YS); }
  }
  return v;
}

fn load_b(k: u32, n: u32) -> vec4<f32> {
  var v = vec4<f32>(0.0);
  if (n >= P.N) { return v; }
  let kd = split_k(n) * DIL - PAD;
  let ch = (n / KS) * XS;
  let i = k / YS;
  let y = k % YS;
  let p = split_y(y);
  if (y + 3u < YS && k + 3u < T.k1 && u32(p.z) + 3u < Y2) {  // one output row
    return run4(P.b_off + i * P.b_sb + ch, p * STR + kd, S2);
  }
  for (var c = 0u; c < 4u; c = c + 1u) {
    let kk = k + c;
    if (kk < T.k1) { v[c] = x_at(P.b_off + (kk / YS) * P.b_sb + ch, split_y(kk % YS) * STR + kd); }
  }
  return v;
}
