// The modified Bessel functions of the first kind, I0 and I1, and their exponentially scaled forms,
// as Cephes (and PyTorch's CPU kernels: calc_i0, calc_i0e, calc_i1, calc_i1e and
// modified_bessel_i0/i1_forward) compute them: Chebyshev series in x/2 - 2 up to 8 and in 32/x - 2
// past it, summed by Clenshaw's recurrence, with Cephes' float32-rounded coefficients. One
// implementation serves torch.i0, special.i0e, i1, i1e (ops/special.cpp) and
// special.modified_bessel_i0/i1 (ops/special_bessel.cpp); bessel.wgsl's K0/K1 build on it.
// Needs pointwise.wgsl (is_nan, is_finite, f_nan, f_exp) and f64.wgsl (bi_chbevl_acc).

const BI_I0_A = array<f32, 30>(-4.41534164647933937950e-18, 3.33079451882223809783e-17,
  -2.43127984654795469359e-16, 1.71539128555513303061e-15, -1.16853328779934516808e-14,
  7.67618549860493561688e-14, -4.85644678311192946090e-13, 2.95505266312963983461e-12,
  -1.72682629144155570723e-11, 9.67580903537323691224e-11, -5.18979560163526290666e-10,
  2.65982372468238665035e-09, -1.30002500998624804212e-08, 6.04699502254191894932e-08,
  -2.67079385394061173391e-07, 1.11738753912010371815e-06, -4.41673835845875056359e-06,
  1.64484480707288970893e-05, -5.75419501008210370398e-05, 1.88502885095841655729e-04,
  -5.76375574538582365885e-04, 1.63947561694133579842e-03, -4.32430999505057594430e-03,
  1.05464603945949983183e-02, -2.37374148058994688156e-02, 4.93052842396707084878e-02,
  -9.49010970480476444210e-02, 1.71620901522208775349e-01, -3.04682672343198398683e-01,
  6.76795274409476084995e-01);

const BI_I0_B = array<f32, 30>(-7.23318048787475395456e-18, -4.83050448594418207126e-18,
  4.46562142029675999901e-17, 3.46122286769746109310e-17, -2.82762398051658348494e-16,
  -3.42548561967721913462e-16, 1.77256013305652638360e-15, 3.81168066935262242075e-15,
  -9.55484669882830764870e-15, -4.15056934728722208663e-14, 1.54008621752140982691e-14,
  3.85277838274214270114e-13, 7.18012445138366623367e-13, -1.79417853150680611778e-12,
  -1.32158118404477131188e-11, -3.14991652796324136454e-11, 1.18891471078464383424e-11,
  4.94060238822496958910e-10, 3.39623202570838634515e-09, 2.26666899049817806459e-08,
  2.04891858946906374183e-07, 2.89137052083475648297e-06, 6.88975834691682398426e-05,
  3.36911647825569408990e-03, 8.04490411014108831608e-01, 0.0, 0.0, 0.0, 0.0, 0.0);

const BI_I1_A = array<f32, 30>(2.77791411276104639959e-18, -2.11142121435816608115e-17,
  1.55363195773620046921e-16, -1.10559694773538630805e-15, 7.60068429473540693410e-15,
  -5.04218550472791168711e-14, 3.22379336594557470981e-13, -1.98397439776494371520e-12,
  1.17361862988909016308e-11, -6.66348972350202774223e-11, 3.62559028155211703701e-10,
  -1.88724975172282928790e-09, 9.38153738649577178388e-09, -4.44505912879632808065e-08,
  2.00329475355213526229e-07, -8.56872026469545474066e-07, 3.47025130813767847674e-06,
  -1.32731636560394358279e-05, 4.78156510755005422638e-05, -1.61760815825896745588e-04,
  5.12285956168575772895e-04, -1.51357245063125314899e-03, 4.15642294431288815669e-03,
  -1.05640848946261981558e-02, 2.47264490306265168283e-02, -5.29459812080949914269e-02,
  1.02643658689847095384e-01, -1.76416518357834055153e-01, 2.52587186443633654823e-01, 0.0);

const BI_I1_B = array<f32, 30>(7.51729631084210481353e-18, 4.41434832307170791151e-18,
  -4.65030536848935832153e-17, -3.20952592199342395980e-17, 2.96262899764595013876e-16,
  3.30820231092092828324e-16, -1.88035477551078244854e-15, -3.81440307243700780478e-15,
  1.04202769841288027642e-14, 4.27244001671195135429e-14, -2.10154184277266431302e-14,
  -4.08355111109219731823e-13, -7.19855177624590851209e-13, 2.03562854414708950722e-12,
  1.41258074366137813316e-11, 3.25260358301548823856e-11, -1.89749581235054123450e-11,
  -5.58974346219658380687e-10, -3.83538038596423702205e-09, -2.63146884688951950684e-08,
  -2.51223623787020892529e-07, -3.88256480887769039346e-06, -1.10588938762623716291e-04,
  -9.76109749136146840777e-03, 7.78576235018280120474e-01, 0.0, 0.0, 0.0, 0.0, 0.0);

// Cephes' chbevl: the first n coefficients of c (tables padded to 30 with zeros past their length).
fn bi_chbevl(t: f32, c: array<f32, 30>, n: u32) -> f32 {
  var a = c[0];
  var p = 0.0;
  var q = 0.0;
  for (var i = 1u; i < n; i = i + 1u) { p = q; q = a; a = fma(t, q, -p) + c[i]; }
  return 0.5 * (a - p);
}

// bi_chbevl in binary64 (f64.wgsl), rounded once. In float32 the recurrence itself is 6 ulps off
// at worst with a fused fma (CPU's, NVIDIA's) and 9 without one (lavapipe's WGSL fma is unfused):
// I1 near |x| = 8 then missed PyTorch's reference-numerics tolerance (1.3e-6 relative) there.
fn bi_chbevl_acc(t: f32, c: array<f32, 30>, n: u32) -> f32 {
  let tt = f64_from_f32_bits(bitcast<u32>(t));
  var a = f64_from_f32_bits(bitcast<u32>(c[0]));
  var p = f64_zero(0u);
  var q = f64_zero(0u);
  for (var i = 1u; i < n; i = i + 1u) {
    p = q;
    q = a;
    a = f64_add(f64_fma(tt, q, f64_neg(p)), f64_from_f32_bits(bitcast<u32>(c[i])));
  }
  return 0.5 * f64_to_f32(f64_sub(a, p));
}

// exp(-|x|) I0(|x|) (times sqrt(|x|) past 8).
fn bi_i0_series(ax: f32) -> f32 {
  if (ax <= 8.0) { return bi_chbevl_acc(ax / 2.0 - 2.0, BI_I0_A, 30u); }
  return bi_chbevl_acc(32.0 / ax - 2.0, BI_I0_B, 25u);
}

// exp(-|x|) I1(|x|) / |x| up to 8, exp(-|x|) I1(|x|) sqrt(|x|) past it.
fn bi_i1_series(ax: f32) -> f32 {
  if (ax <= 8.0) { return bi_chbevl_acc(ax / 2.0 - 2.0, BI_I1_A, 29u); }
  return bi_chbevl_acc(32.0 / ax - 2.0, BI_I1_B, 25u);
}

// I0; NaN at +-inf (CPU's e^x * series / sqrt(x) is inf / inf there).
fn f_bessel_i0(x: f32) -> f32 {
  if (!is_finite(x)) { return f_nan(); }
  let ax = abs(x);
  if (ax <= 8.0) { return f_exp(ax) * bi_i0_series(ax); }
  return f_exp(ax) * bi_i0_series(ax) / sqrt(ax);
}

// exp(-|x|) I0(x); 0 at +-inf.
fn f_bessel_i0e(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  let ax = abs(x);
  if (ax <= 8.0) { return bi_i0_series(ax); }
  return bi_i0_series(ax) / sqrt(ax);
}

// I1, odd (-0 gives +0, as CPU's `x < 0 ? -r : r`); NaN at +-inf.
fn f_bessel_i1(x: f32) -> f32 {
  if (!is_finite(x)) { return f_nan(); }
  let ax = abs(x);
  var r: f32;
  if (ax <= 8.0) { r = bi_i1_series(ax) * ax * f_exp(ax); }
  else { r = f_exp(ax) * bi_i1_series(ax) / sqrt(ax); }
  return select(r, -r, x < 0.0);
}

// exp(-|x|) I1(x), odd; +-0 at +-inf.
fn f_bessel_i1e(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  let ax = abs(x);
  var r: f32;
  if (ax <= 8.0) { r = bi_i1_series(ax) * ax; }
  else { r = bi_i1_series(ax) / sqrt(ax); }
  return select(r, -r, x < 0.0);
}
