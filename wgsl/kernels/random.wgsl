// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"), counter-based: the
// key is the generator's seed, the counter is (thread, lane block, generator offset). Plus the
// conversions from random words to the distributions' inputs.

fn philox_mulhilo(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu; let a1 = a >> 16u;
  let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p00 = a0 * b0; let p01 = a0 * b1; let p10 = a1 * b0; let p11 = a1 * b1;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return vec2<u32>((p00 & 0xffffu) | (mid << 16u), p11 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}

fn philox(counter: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
  var c = counter;
  var k = key;
  for (var i = 0u; i < 10u; i = i + 1u) {
    let p0 = philox_mulhilo(0xD2511F53u, c.x);
    let p1 = philox_mulhilo(0xCD9E8D57u, c.z);
    c = vec4<u32>(p1.y ^ c.y ^ k.x, p1.x, p0.y ^ c.w ^ k.y, p0.x);
    k = k + vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
  }
  return c;
}

// A random word -> f32 in [0, 1) (24 random bits, exact).
fn rand_u01(x: u32) -> f32 { return f32(x >> 8u) * 5.9604644775390625e-8; }
// A random word -> f32 in (0, 1].
fn rand_u01_open0(x: u32) -> f32 { return f32((x >> 8u) + 1u) * 5.9604644775390625e-8; }

// Box-Muller: two words -> two standard normal values.
fn rand_normal2(a: u32, b: u32) -> vec2<f32> {
  let r = sqrt(-2.0 * log(rand_u01_open0(a)));
  let t = 6.283185307179586 * rand_u01(b);
  return vec2<f32>(r * cos(t), r * sin(t));
}
