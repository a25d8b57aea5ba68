// torch._int_mm (ops/int_mm.cpp, through kernel/kernel.h): O = A @ B with A int8 or uint8 (M x K),
// B int8 (K x N), O int32 (M x N), exact with CPU's int32 wrap-around.
//
// Operands: 0 A, 1 B (raw words, 4 bytes each), 2 O.
// Parameters: M, N, K, tiles_n, tiles (tiles_m * tiles_n), a_off, a_sm, a_sk, b_off, b_sn, b_sk,
//   o_off, o_sm, o_sn (element offsets and strides).
//
// One workgroup computes a 64 x 64 tile of O, each of its 256 invocations a 4 x 4 block. K goes in
// steps of 32: both operands are staged in workgroup memory as packed words of 4 consecutive k
// values (byte j = k0 + j), k-word-major (index kw * 64 + row), so a product of two words is a
// 4-term dot product: dot4I8Packed where WGSL has it, else the DOT4 spelled out below.
// A k-packed word is read as one funnel-shifted pair of words where the operand's k stride is 1
// (any storage offset); where its row stride is 1, 4 rows x 4 k are read as 4 such words and
// transposed; otherwise bytes are gathered one by one through the strides. Past K and past M/N the
// staged bytes are zero, so ragged sizes need no special case in the product loop.
//
// uint8 A with dot4I8Packed: A's bytes are staged as a - 128 (x ^ 0x80) and the product is
// corrected by 128 * sum(b) = -dot4I8Packed(0x80808080, b) per column.

// How each operand's k-packed words are read (ops/int_mm.cpp: Mode): 0 k stride 1, one funnel-
// shifted pair of words per packed word; 1 row stride 1 (rows along m for A, n for B), a 4-row x
// 4-k block read as 4 funnel-shifted words and transposed; 2 anything else, byte by byte.
const MODE_A: u32 = {{MODE_A}};
const MODE_B: u32 = {{MODE_B}};
const A_FLIP: u32 = {{A_FLIP}};

fn dot4(a: u32, b: u32) -> i32 { return {{DOT4}}; }

// Spelled-out 4-term dot products (exact: each term fits 16 bits, the sum 18).
fn dot4_ss(a: u32, b: u32) -> i32 {
  let x = bitcast<i32>(a);
  let y = bitcast<i32>(b);
  return extractBits(x, 0u, 8u) * extractBits(y, 0u, 8u) + extractBits(x, 8u, 8u) * extractBits(y, 8u, 8u) +
         extractBits(x, 16u, 8u) * extractBits(y, 16u, 8u) + extractBits(x, 24u, 8u) * extractBits(y, 24u, 8u);
}
fn dot4_us(a: u32, b: u32) -> i32 {
  let y = bitcast<i32>(b);
  return i32(extractBits(a, 0u, 8u)) * extractBits(y, 0u, 8u) + i32(extractBits(a, 8u, 8u)) * extractBits(y, 8u, 8u) +
         i32(extractBits(a, 16u, 8u)) * extractBits(y, 16u, 8u) + i32(extractBits(a, 24u, 8u)) * extractBits(y, 24u, 8u);
}

fn word(x: u32, w: u32) -> u32 {
  if (x == 0u) { return wd0(w); }
  return wd1(w);
}

// The nv (1..4) bytes at elements e, e + sk, e + 2 sk, ... of operand x, packed low byte first;
// the bytes past nv are zero.
fn pack4(x: u32, contig: bool, e: u32, sk: u32, nv: u32) -> u32 {
  if (contig) {
    let w = e >> 2u;
    let sh = (e & 3u) * 8u;
    var v = word(x, w) >> sh;
    // The next word only when one of its bytes is wanted (so it lies inside the tensor).
    if (sh != 0u && nv > 4u - sh / 8u) { v = v | (word(x, w + 1u) << (32u - sh)); }
    if (nv < 4u) { v = v & ((1u << (8u * nv)) - 1u); }
    return v;
  }
  var v = 0u;
  for (var j = 0u; j < nv; j = j + 1u) {
    let ej = e + j * sk;
    v = v | (((word(x, ej >> 2u) >> ((ej & 3u) * 8u)) & 0xffu) << (8u * j));
  }
  return v;
}

var<workgroup> As: array<u32, 512>;
var<workgroup> Bs: array<u32, 512>;

fn put(x: u32, i: u32, v: u32) {
  if (x == 0u) { As[i] = v; } else { Bs[i] = v; }
}

// Stages k-step t (32 k values) of rows row0 .. row0 + 63 of operand x (the row is m for A, n for B;
// element (row, k) at off + row * s_row + k * s_k) into As or Bs: word kw * 64 + r holds
// k = 32 t + 4 kw .. + 3 of row row0 + r, zero past K and past `rows`, then xor `flip`.
fn stage(x: u32, mode: u32, t: u32, row0: u32, rows: u32, K: u32, off: u32, s_row: u32, s_k: u32, lid: u32,
         flip: u32) {
  if (mode == 1u) {
    // 128 blocks of 4 rows x 4 k; neighbouring invocations take neighbouring rows.
    if (lid < 128u) {
      let r = (lid % 16u) * 4u;
      let kw = lid / 16u;
      let k0 = t * 32u + kw * 4u;
      let nr = min(4u, rows - min(row0 + r, rows));
      var w = vec4<u32>();
      if (nr > 0u) {
        for (var j = 0u; j < 4u; j = j + 1u) {
          if (k0 + j < K) { w[j] = pack4(x, true, off + row0 + r + (k0 + j) * s_k, 1u, nr); }
        }
      }
      for (var i = 0u; i < 4u; i = i + 1u) {
        let v = extractBits(w.x, 8u * i, 8u) | (extractBits(w.y, 8u * i, 8u) << 8u) |
                (extractBits(w.z, 8u * i, 8u) << 16u) | (extractBits(w.w, 8u * i, 8u) << 24u);
        put(x, kw * 64u + r + i, v ^ flip);
      }
    }
    return;
  }
  for (var s = 0u; s < 2u; s = s + 1u) {
    let idx = lid + s * 256u;
    let kw = idx % 8u;
    let r = idx / 8u;
    let k0 = t * 32u + kw * 4u;
    let nv = min(4u, K - min(k0, K));
    var v = 0u;
    if (row0 + r < rows && nv > 0u) { v = pack4(x, mode == 0u, off + (row0 + r) * s_row + k0 * s_k, s_k, nv); }
    put(x, kw * 64u + r, v ^ flip);
  }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = linear_id(wid, nwg, 0u, 1u);
  if (g >= P.tiles) { return; }  // padding of a folded grid (uniform per workgroup)
  let M = P.M;
  let N = P.N;
  let K = P.K;
  let m0 = (g / P.tiles_n) * 64u;
  let n0 = (g % P.tiles_n) * 64u;
  let tx = lid % 16u;
  let ty = lid / 16u;
  var acc0 = vec4<i32>();
  var acc1 = vec4<i32>();
  var acc2 = vec4<i32>();
  var acc3 = vec4<i32>();
  let nt = (K + 31u) / 32u;
  for (var t = 0u; t < nt; t = t + 1u) {
    stage(0u, MODE_A, t, m0, M, K, P.a_off, P.a_sm, P.a_sk, lid, A_FLIP);
    stage(1u, MODE_B, t, n0, N, K, P.b_off, P.b_sn, P.b_sk, lid, 0u);
    workgroupBarrier();
    for (var kw = 0u; kw < 8u; kw = kw + 1u) {
      let ai = kw * 64u + ty * 4u;
      let bi = kw * 64u + tx * 4u;
      let bw0 = Bs[bi];
      let bw1 = Bs[bi + 1u];
      let bw2 = Bs[bi + 2u];
      let bw3 = Bs[bi + 3u];
      let aw0 = As[ai];
      let aw1 = As[ai + 1u];
      let aw2 = As[ai + 2u];
      let aw3 = As[ai + 3u];
      acc0 = acc0 + vec4<i32>(dot4(aw0, bw0), dot4(aw0, bw1), dot4(aw0, bw2), dot4(aw0, bw3));
      acc1 = acc1 + vec4<i32>(dot4(aw1, bw0), dot4(aw1, bw1), dot4(aw1, bw2), dot4(aw1, bw3));
      acc2 = acc2 + vec4<i32>(dot4(aw2, bw0), dot4(aw2, bw1), dot4(aw2, bw2), dot4(aw2, bw3));
      acc3 = acc3 + vec4<i32>(dot4(aw3, bw0), dot4(aw3, bw1), dot4(aw3, bw2), dot4(aw3, bw3));
      {{CORRECT}}
    }
    workgroupBarrier();
  }
  let mb = m0 + ty * 4u;
  let nb = n0 + tx * 4u;
  for (var i = 0u; i < 4u; i = i + 1u) {
    let m = mb + i;
    if (m >= M) { break; }
    var v = acc0;
    if (i == 1u) { v = acc1; } else if (i == 2u) { v = acc2; } else if (i == 3u) { v = acc3; }
    let base = P.o_off + m * P.o_sm;
    for (var j = 0u; j < 4u; j = j + 1u) {
      if (nb + j < N) { st2(base + (nb + j) * P.o_sn, v[j]); }
    }
  }
}
