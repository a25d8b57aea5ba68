// Row scans (cumsum, cumprod, cummax/cummin with indices, logcumsumexp) over a contiguous
// [rows, n] work tensor. One workgroup scans one tile of TILE = WG * IT elements of one row: each
// invocation scans IT consecutive elements in registers, the workgroup scans the invocations' totals
// in shared memory (Hillis-Steele), then every invocation applies its exclusive prefix.
// Long rows take three passes (scan.cpp): REDUCE writes each tile's total, the totals are scanned
// recursively, and the final pass folds the previous tile's scanned total in as a carry.
//
// The including C++ prepends: `alias T`, `struct S { v: T, i: u32 }`, ident() -> S,
// comb(a: S, b: S) -> S (associative, a before b), load_x(e) -> T, load_xi(e, p) -> u32 (the
// element's index; p is its position in the row), load_c(e) -> S (carry), store_y(e, s: S),
// and the constants REDUCE, CARRY, SEG (1: a segment of a row past the binding limit, whose carries
// start one tile before it, so its first tile takes one too).
// Parameters: n (row length), rows, tiles (tiles per row, `tile` only); the loaders
// read the operands' storage offsets (x_off, xi_off, c_off, ci_off, y_off, yi_off).
// Two kernels, one per section (scan.cpp compiles one): `tile` as above, and `rows` for short rows
// (n <= 16), one invocation per row, so a tensor of many short rows does not leave most of a
// workgroup idle.

//== tile
const WG: u32 = 256u;
const IT: u32 = 4u;
const EMPTY: u32 = 0xffffffffu;

var<workgroup> sh: array<S, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = linear_id(wid, nwg, 0u, 1u);
  let n = P.n;
  let nb = P.tiles;
  let row = g / nb;
  // A grid folded past 65535 workgroups has spares past the last row (uniform: one id per workgroup).
  if (row >= P.rows) { return; }
  let blk = g % nb;
  let base = row * n;
  let start = blk * (WG * IT) + lid * IT;
  var loc: array<S, 4>;
  var acc = ident();
  for (var k = 0u; k < IT; k = k + 1u) {
    let p = start + k;
    if (p < n) {
      acc = comb(acc, S(load_x(base + p), load_xi(base + p, p)));
    }
    loc[k] = acc;
  }
  sh[lid] = acc;
  workgroupBarrier();
  for (var off = 1u; off < WG; off = off << 1u) {
    var t = sh[lid];
    if (lid >= off) { t = comb(sh[lid - off], t); }
    workgroupBarrier();
    sh[lid] = t;
    workgroupBarrier();
  }
  if (REDUCE) {
    if (lid == WG - 1u) { store_y(g, sh[WG - 1u]); }
    return;
  }
  var pre = ident();
  if (lid > 0u) { pre = sh[lid - 1u]; }
  if (CARRY && blk + SEG > 0u) { pre = comb(load_c(row * nb + blk + SEG - 1u), pre); }
  for (var k = 0u; k < IT; k = k + 1u) {
    let p = start + k;
    if (p < n) { store_y(base + p, comb(pre, loc[k])); }
  }
}

//== rows
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let row = linear_id(wid, nwg, lid, 256u);
  if (row >= P.rows) { return; }
  let n = P.n;
  let base = row * n;
  var acc = ident();
  for (var p = 0u; p < n; p = p + 1u) {
    acc = comb(acc, S(load_x(base + p), load_xi(base + p, p)));
    store_y(base + p, acc);
  }
}
