// Sorting and order statistics (csrc/ops/sort.cpp). The file holds several kernels, one per section
// (kernel::section); sort.cpp prepends the definitions a section uses (key type K and its order, the
// pair order lt, operand accessors, constants) and compiles one section at a time.
//
// Sorting: every row is padded to npad = 2^m elements and the rows are laid end to end in one flat
// array of (key, index) pairs; keys map values to unsigned words whose order is the value order
// (floats: sign-magnitude flip, -0 as +0, NaN above +inf; int64: two words, high first; descending:
// all bits inverted). Pairs compare by key, then by index, so the bitonic network sorts stably.
// Padding pairs are (all ones, 0xffffffff): they sort after every real element.
// `local` sorts/merges tiles of 1024 pairs in shared memory; `global` is one compare-exchange step
// of the bitonic network at a distance j >= 1024 for rows longer than a tile.

// The bitonic network's compare-exchange t at distance j of stage k: its lower position i (the upper
// is i + j) and whether the pair sorts ascending (from i's place in its padded row of npad).
fn bitonic_lo(t: u32, j: u32) -> u32 { return ((t & ~(j - 1u)) << 1u) | (t & (j - 1u)); }
fn bitonic_asc(i: u32, npad: u32, k: u32) -> bool { return ((i & (npad - 1u)) & k) == 0u; }

//== local
// Parameters: npad (padded row length), n (row length), rows, k_first / k_last (first and last stage).
const TILE: u32 = 1024u;
var<workgroup> sk: array<K, 1024>;
var<workgroup> si: array<u32, 1024>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let g = linear_id(wid, nwg, 0u, 1u);
  let npad = P.npad;
  let n = P.n;
  let rows = P.rows;
  // A grid folded past 65535 workgroups has spares past the last tile (uniform: one id per workgroup).
  if (g * TILE >= rows * npad) { return; }
  let kstart = P.k_first;
  let kend = P.k_last;
  for (var q = 0u; q < 4u; q = q + 1u) {
    let l = lid + q * 256u;
    let p = g * TILE + l;
    if (FIRST) {
      let row = p / npad;
      let i = p % npad;
      if (row < rows && i < n) {
        sk[l] = make_key(row * n + i);
        si[l] = i;
      } else {
        sk[l] = kmax();
        si[l] = 0xffffffffu;
      }
    } else {
      sk[l] = load_key(p);
      si[l] = load_idx(p);
    }
  }
  workgroupBarrier();
  for (var k = kstart; k <= kend; k = k << 1u) {
    var j = min(k >> 1u, TILE >> 1u);
    loop {
      if (j == 0u) { break; }
      for (var q = 0u; q < 2u; q = q + 1u) {
        let t = lid + q * 256u;
        let i = bitonic_lo(t, j);
        let l = i + j;
        let asc = bitonic_asc(g * TILE + i, npad, k);
        let a = sk[i];
        let b = sk[l];
        let ai = si[i];
        let bi = si[l];
        if (lt(b, bi, a, ai) == asc) {
          sk[i] = b;
          sk[l] = a;
          si[i] = bi;
          si[l] = ai;
        }
      }
      workgroupBarrier();
      j = j >> 1u;
    }
  }
  for (var q = 0u; q < 4u; q = q + 1u) {
    let l = lid + q * 256u;
    let p = g * TILE + l;
    store_key(p, sk[l]);
    store_idx(p, si[l]);
  }
}

//== global
// Parameters: npad, stage k, distance j, n (pairs: one invocation each).

fn run(t: u32) {
  let npad = P.npad;
  let k = P.k;
  let j = P.j;
  let i = bitonic_lo(t, j);
  let l = i + j;
  let asc = bitonic_asc(i, npad, k);
  let a = load_key(i);
  let b = load_key(l);
  let ai = load_idx(i);
  let bi = load_idx(l);
  if (lt(b, bi, a, ai) == asc) {
    store_key(i, b);
    store_key(l, a);
    store_idx(i, bi);
    store_idx(l, ai);
  }
}

//== gather
// Writes cnt sorted elements of every row: values (the input's raw bits) and int64 indices.
// MODE 0: positions p0 .. p0 + cnt; 1: torch.median (the first NaN if any, else (n - 1) / 2);
// 2: nanmedian (the lower middle of the non-NaN elements). The NaN count comes from a binary search
// for the first NaN key (ascending float keys: 0xffffffff).
// Parameters: npad, n, cnt, p0, total (outputs).
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = linear_id(wid, nwg, lid, 256u);
  if (t >= P.total) { return; }
  let npad = P.npad;
  let n = P.n;
  let cnt = P.cnt;
  let r = t / cnt;
  var pos = P.p0 + t % cnt;
  if (MODE != 0u) {
    var lo = 0u;
    var hi = n;
    while (lo < hi) {
      let mid = (lo + hi) >> 1u;
      if (is_nan_key(load_key(r * npad + mid))) { hi = mid; } else { lo = mid + 1u; }
    }
    if (MODE == 1u) {
      pos = select((n - 1u) / 2u, lo, lo < n);
    } else {
      pos = select(0u, (lo - 1u) / 2u, lo > 0u);
    }
  }
  let s = load_idx(r * npad + pos);
  store_val(t, load_val(r * n + s));
  store_ind(t, s);
}

//== mode
// One workgroup per row of the sorted pairs: the longest run of equal values (NaNs never equal),
// the smallest value among equally long runs, and the index of its last element (CPU's choice).
// Parameters: npad, n, rows.
var<workgroup> ws: array<u32, 256>;
var<workgroup> wc: array<u32, 256>;
var<workgroup> wp: array<u32, 256>;

fn same(a: K, b: K) -> bool { return keq(a, b) && !is_nan_key(a); }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let r = linear_id(wid, nwg, 0u, 1u);
  // A grid folded past 65535 workgroups has spares past the last row (uniform: one id per workgroup).
  if (r >= P.rows) { return; }
  let npad = P.npad;
  let n = P.n;
  let base = r * npad;
  var carry = 0u;
  var best_c = 0u;
  var best_e = 0u;
  let chunks = (n + 255u) / 256u;
  for (var c = 0u; c < chunks; c = c + 1u) {
    let p = c * 256u + lid;
    let valid = p < n;
    var key = kmax();
    if (valid) { key = load_key(base + p); }
    var st = 0u;
    if (valid && (p == 0u || !same(load_key(base + p - 1u), key))) { st = p; }
    ws[lid] = st;
    workgroupBarrier();
    for (var off = 1u; off < 256u; off = off << 1u) {
      var m = ws[lid];
      if (lid >= off) { m = max(m, ws[lid - off]); }
      workgroupBarrier();
      ws[lid] = m;
      workgroupBarrier();
    }
    let s = max(ws[lid], carry);
    var cn = 0u;
    var e = 0u;
    if (valid && (p == n - 1u || !same(load_key(base + p + 1u), key))) {
      cn = p - s + 1u;
      e = p;
    }
    wc[lid] = cn;
    wp[lid] = e;
    workgroupBarrier();
    for (var off = 128u; off > 0u; off = off >> 1u) {
      if (lid < off) {
        let oc = wc[lid + off];
        let oe = wp[lid + off];
        if (oc > wc[lid] || (oc == wc[lid] && oc > 0u && oe < wp[lid])) {
          wc[lid] = oc;
          wp[lid] = oe;
        }
      }
      workgroupBarrier();
    }
    if (wc[0] > best_c) {
      best_c = wc[0];
      best_e = wp[0];
    }
    carry = max(carry, ws[255]);
    workgroupBarrier();
  }
  if (lid == 0u) {
    let s = load_idx(base + best_e);
    store_val(r, load_val(r * n + s));
    store_ind(r, s);
  }
}

//== uflag
// Unique: flag[p] = 1 where sorted (or, for unique_consecutive, original) position p starts a new
// value; a value is a row of r elements (unique_consecutive along a dim), 1 otherwise.
// Parameters: n, r.
fn run(p: u32) {
  let r = P.r;
  var f = p == 0u;
  if (!f) {
    let a = src(p) * r;
    let b = src(p - 1u) * r;
    for (var k = 0u; k < r; k = k + 1u) {
      if (!veq(xval(a + k), xval(b + k))) {
        f = true;
        break;
      }
    }
  }
  store_flag(p, select(0u, 1u, f));
}

//== uscatter
// pos: inclusive scan of the flags (int64). Writes the unique values, their first sorted positions,
// and the inverse indices. Parameters: n, r (elements per value).
fn run(p: u32) {
  let j = load_pos(p) - 1u;
  let s = src(p);
  if (p == 0u || load_pos(p - 1u) != j + 1u) {
    let r = P.r;
    for (var k = 0u; k < r; k = k + 1u) { store_val(j * r + k, load_val(s * r + k)); }
    store_start(j, p);
  }
  store_inv(s, j);
}

//== ucount
// counts[j] = start[j + 1] - start[j] (the last one ends at `end`, the element count); per_element's
// entry point runs j < n (the number of uniques). Parameters: n, end.
fn run(j: u32) {
  var e = P.end;
  if (j + 1u < P.n) { e = load_start(j + 1u); }
  store_count(j, e - load_start(j));
}

//== search
// searchsorted/bucketize: one invocation per value, a binary search in its row of boundaries (through
// the sorter when given), with CPU's predicates: left finds the first boundary b with b >= v, right
// the first with b > v. Parameters: n (values), inner (values per boundary row; 0: one row),
// bn (boundary row length).
fn run(t: u32) {
  let inner = P.inner;
  let bn = P.bn;
  var row = 0u;
  if (inner != 0u) { row = t / inner; }
  let base = row * bn;
  let v = load_v(t);
  var lo = 0u;
  var hi = bn;
  while (lo < hi) {
    let mid = (lo + hi) >> 1u;
    let b = load_b(base, mid);
    if (RIGHT) {
      if (!gt(b, v)) { lo = mid + 1u; } else { hi = mid; }
    } else {
      if (!ge(b, v)) { lo = mid + 1u; } else { hi = mid; }
    }
  }
  store_out(t, lo);
}

//== hist
// histc / bincount: one invocation per input element adds into its bin. The counts operand is the
// kernel's first binding (b1) and bound atomically (sort.cpp allocates it with a 16-bit dtype so
// kernel.h binds it as atomic<u32>); bin_of(t) returns the bin or 0xffffffff to skip.
// Parameters: n (elements).
fn run(t: u32) {
  let b = bin_of(t);
  if (b == 0xffffffffu) { return; }
  if (WEIGHTED) {
    let w = weight_of(t);
    loop {
      let old = atomicLoad(&b1[b]);
      let r = atomicCompareExchangeWeak(&b1[b], old, bitcast<u32>(bitcast<f32>(old) + w));
      if (r.exchanged) { break; }
    }
  } else {
    atomicAdd(&b1[b], 1u);
  }
}

//== ucol_gather
// unique along a dim, sorted: the rows are ordered by stable sorts of their columns, last column
// first (LSD). col[p] = x[perm[p] * r + c] gathers column c in the current order (ucol_perm then
// composes the column's sort into the order). Parameters: n, r, col (c).
fn run(p: u32) {
  store_col(p, load_val(load_perm(p) * P.r + P.col));
}

//== ucol_perm
// next[p] = perm[order[p]]: composes a column's sort into the row order. Parameters: n.
fn run(p: u32) {
  store_perm(p, load_perm(load_order(p)));
}

//== histl
// The unweighted histogram for up to 2048 bins: each workgroup counts a run of elements into a
// shared-memory histogram and adds its non-zero bins to the global one, so the global atomics are
// per bin and workgroup, not per element. Parameters: n (elements), bins, per (elements per workgroup).
var<workgroup> lh: array<atomic<u32>, 2048>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let nb = P.bins;
  for (var b = lid; b < nb; b = b + 256u) { atomicStore(&lh[b], 0u); }
  workgroupBarrier();
  let g = linear_id(wid, nwg, 0u, 1u);
  let per = P.per;
  let start = g * per;
  let end = min(start + per, P.n);
  for (var t = start + lid; t < end; t = t + 256u) {
    let b = bin_of(t);
    if (b != 0xffffffffu) { atomicAdd(&lh[b], 1u); }
  }
  workgroupBarrier();
  for (var b = lid; b < nb; b = b + 256u) {
    let c = atomicLoad(&lh[b]);
    if (c != 0u) { atomicAdd(&b1[b], c); }
  }
}
