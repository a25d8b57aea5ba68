// torch.special's Bessel, Airy and orthogonal-polynomial functions (ops/special_bessel.cpp), computed
// in float32 the way PyTorch's CPU kernels compute them: Cephes' rational and Chebyshev-series
// approximations with the same coefficients, branches and order of operations, so results agree to
// float32 rounding. Needs pointwise.wgsl (is_nan, f_log, f_sin, f_cos, f_acos, f_exp) and
// bessel_i.wgsl (bi_chbevl, f_bessel_i0, f_bessel_i1: I0 and I1 are shared with ops/special.cpp).
// CPU's kernels are built with floating-point contraction: `a * b + c` and `a * b - c * d` are fused
// multiply-adds, fma(a, b, c) and fma(a, b, -(c * d)). The polynomial, Clenshaw and recurrence steps
// here use fma() the same way, which reproduces CPU's bits where the adapter fuses it (GPUs with FMA
// units). Vulkan lets fma() be a multiply and an add (lavapipe's is), and the recurrences'
// cancellations magnify that rounding difference: Hermite H_7(-2.65) then differs by 2e-5 relative.

// Cephes' coefficients (float32-rounded, as CPU's `static const float` tables hold them).
const BS_AI_AN = array<f32, 11>(3.46538101525629032477e-01, 1.20075952739645805542e+01,
  7.62796053615234516538e+01, 1.68089224934630576269e+02, 1.59756391350164413639e+02,
  7.05360906840444183113e+01, 1.40264691163389668864e+01, 9.99999999999999995305e-01, 0.0, 0.0, 0.0);
const BS_AI_AD = array<f32, 11>(5.67594532638770212846e-01, 1.47562562584847203173e+01,
  8.45138970141474626562e+01, 1.77318088145400459522e+02, 1.64234692871529701831e+02,
  7.14778400825575695274e+01, 1.40959135607834029598e+01, 1.00000000000000000470e+00, 0.0, 0.0, 0.0);
const BS_AI_AFN = array<f32, 11>(-1.31696323418331795333e-01, -6.26456544431912369773e-01,
  -6.93158036036933542233e-01, -2.79779981545119124951e-01, -4.91900132609500318020e-02,
  -4.06265923594885404393e-03, -1.59276496239262096340e-04, -2.77649108155232920844e-06,
  -1.67787698489114633780e-08, 0.0, 0.0);
const BS_AI_AFD = array<f32, 11>(1.33560420706553243746e+01, 3.26825032795224613948e+01,
  2.67367040941499554804e+01, 9.18707402907259625840e+00, 1.47529146771666414581e+00,
  1.15687173795188044134e-01, 4.40291641615211203805e-03, 7.54720348287414296618e-05,
  4.51850092970580378464e-07, 0.0, 0.0);
const BS_AI_AGN = array<f32, 11>(1.97339932091685679179e-02, 3.91103029615688277255e-01,
  1.06579897599595591108e+00, 9.39169229816650230044e-01, 3.51465656105547619242e-01,
  6.33888919628925490927e-02, 5.85804113048388458567e-03, 2.82851600836737019778e-04,
  6.98793669997260967291e-06, 8.11789239554389293311e-08, 3.41551784765923618484e-10);
const BS_AI_AGD = array<f32, 11>(9.30892908077441974853e+00, 1.98352928718312140417e+01,
  1.55646628932864612953e+01, 5.47686069422975497931e+00, 9.54293611618961883998e-01,
  8.64580826352392193095e-02, 4.12656523824222607191e-03, 1.01259085116509135510e-04,
  1.17166733214413521882e-06, 4.91834570062930015649e-09, 0.0);
const BS_J0_PP = array<f32, 11>(7.96936729297347051624e-04, 8.28352392107440799803e-02,
  1.23953371646414299388e+00, 5.44725003058768775090e+00, 8.74716500199817011941e+00,
  5.30324038235394892183e+00, 9.99999999999999997821e-01, 0.0, 0.0, 0.0, 0.0);
const BS_J0_PQ = array<f32, 11>(9.24408810558863637013e-04, 8.56288474354474431428e-02,
  1.25352743901058953537e+00, 5.47097740330417105182e+00, 8.76190883237069594232e+00,
  5.30605288235394617618e+00, 1.00000000000000000218e+00, 0.0, 0.0, 0.0, 0.0);
const BS_J0_QP = array<f32, 11>(-1.13663838898469149931e-02, -1.28252718670509318512e+00,
  -1.95539544257735972385e+01, -9.32060152123768231369e+01, -1.77681167980488050595e+02,
  -1.47077505154951170175e+02, -5.14105326766599330220e+01, -6.05014350600728481186e+00, 0.0, 0.0, 0.0);
const BS_J0_QQ = array<f32, 11>(6.43178256118178023184e+01, 8.56430025976980587198e+02,
  3.88240183605401609683e+03, 7.24046774195652478189e+03, 5.93072701187316984827e+03,
  2.06209331660327847417e+03, 2.42005740240291393179e+02, 0.0, 0.0, 0.0, 0.0);
const BS_J0_RP = array<f32, 11>(-4.79443220978201773821e+09, 1.95617491946556577543e+12,
  -2.49248344360967716204e+14, 9.70862251047306323952e+15, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
const BS_J0_RQ = array<f32, 11>(4.99563147152651017219e+02, 1.73785401676374683123e+05,
  4.84409658339962045305e+07, 1.11855537045356834862e+10, 2.11277520115489217587e+12,
  3.10518229857422583814e+14, 3.18121955943204943306e+16, 1.71086294081043136091e+18, 0.0, 0.0, 0.0);
const BS_J1_PP = array<f32, 11>(7.62125616208173112003e-04, 7.31397056940917570436e-02,
  1.12719608129684925192e+00, 5.11207951146807644818e+00, 8.42404590141772420927e+00,
  5.21451598682361504063e+00, 1.00000000000000000254e+00, 0.0, 0.0, 0.0, 0.0);
const BS_J1_PQ = array<f32, 11>(5.71323128072548699714e-04, 6.88455908754495404082e-02,
  1.10514232634061696926e+00, 5.07386386128601488557e+00, 8.39985554327604159757e+00,
  5.20982848682361821619e+00, 9.99999999999999997461e-01, 0.0, 0.0, 0.0, 0.0);
const BS_J1_QP = array<f32, 11>(5.10862594750176621635e-02, 4.98213872951233449420e+00,
  7.58238284132545283818e+01, 3.66779609360150777800e+02, 7.10856304998926107277e+02,
  5.97489612400613639965e+02, 2.11688757100572135698e+02, 2.52070205858023719784e+01, 0.0, 0.0, 0.0);
const BS_J1_QQ = array<f32, 11>(7.42373277035675149943e+01, 1.05644886038262816351e+03,
  4.98641058337653607651e+03, 9.56231892404756170795e+03, 7.99704160447350683650e+03,
  2.82619278517639096600e+03, 3.36093607810698293419e+02, 0.0, 0.0, 0.0, 0.0);
const BS_J1_RP = array<f32, 11>(-8.99971225705559398224e+08, 4.52228297998194034323e+11,
  -7.27494245221818276015e+13, 3.68295732863852883286e+15, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
const BS_J1_RQ = array<f32, 11>(6.20836478118054335476e+02, 2.56987256757748830383e+05,
  8.35146791431949253037e+07, 2.21511595479792499675e+10, 4.74914122079991414898e+12,
  7.84369607876235854894e+14, 8.95222336184627338078e+16, 5.32278620332680085395e+18, 0.0, 0.0, 0.0);
const BS_Y0_YP = array<f32, 11>(1.55924367855235737965e+04, -1.46639295903971606143e+07,
  5.43526477051876500413e+09, -9.82136065717911466409e+11, 8.75906394395366999549e+13,
  -3.46628303384729719441e+15, 4.42733268572569800351e+16, -1.84950800436986690637e+16, 0.0, 0.0, 0.0);
const BS_Y0_YQ = array<f32, 11>(1.04128353664259848412e+03, 6.26107330137134956842e+05,
  2.68919633393814121987e+08, 8.64002487103935000337e+10, 2.02979612750105546709e+13,
  3.17157752842975028269e+15, 2.50596256172653059228e+17, 0.0, 0.0, 0.0, 0.0);
const BS_Y1_YP = array<f32, 11>(1.26320474790178026440e+09, -6.47355876379160291031e+11,
  1.14509511541823727583e+14, -8.12770255501325109621e+15, 2.02439475713594898196e+17,
  -7.78877196265950026825e+17, 0.0, 0.0, 0.0, 0.0, 0.0);
const BS_Y1_YQ = array<f32, 11>(5.94301592346128195359e+02, 2.35564092943068577943e+05,
  7.34811944459721705660e+07, 1.87601316108706159478e+10, 3.88231277496238566008e+12,
  6.20557727146953693363e+14, 6.87141087355300489866e+16, 3.97270608116560655612e+18, 0.0, 0.0, 0.0);
const BS_K0_A = array<f32, 30>(1.37446543561352307156e-16, 4.25981614279661018399e-14,
  1.03496952576338420167e-11, 1.90451637722020886025e-09, 2.53479107902614945675e-07,
  2.28621210311945178607e-05, 1.26461541144692592338e-03, 3.59799365153615016266e-02,
  3.44289899924628486886e-01, -5.35327393233902768720e-01, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
const BS_K0_B = array<f32, 30>(5.30043377268626276149e-18, -1.64758043015242134646e-17,
  5.21039150503902756861e-17, -1.67823109680541210385e-16, 5.51205597852431940784e-16,
  -1.84859337734377901440e-15, 6.34007647740507060557e-15, -2.22751332699166985548e-14,
  8.03289077536357521100e-14, -2.98009692317273043925e-13, 1.14034058820847496303e-12,
  -4.51459788337394416547e-12, 1.85594911495471785253e-11, -7.95748924447710747776e-11,
  3.57739728140030116597e-10, -1.69753450938905987466e-09, 8.57403401741422608519e-09,
  -4.66048989768794782956e-08, 2.76681363944501510342e-07, -1.83175552271911948767e-06,
  1.39498137188764993662e-05, -1.28495495816278026384e-04, 1.56988388573005337491e-03,
  -3.14481013119645005427e-02, 2.44030308206595545468e+00, 0.0, 0.0, 0.0, 0.0, 0.0);
const BS_K1_A = array<f32, 30>(-7.02386347938628759343e-18, -2.42744985051936593393e-15,
  -6.66690169419932900609e-13, -1.41148839263352776110e-10, -2.21338763073472585583e-08,
  -2.43340614156596823496e-06, -1.73028895751305206302e-04, -6.97572385963986435018e-03,
  -1.22611180822657148235e-01, -3.53155960776544875667e-01, 1.52530022733894777053e+00, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
const BS_K1_B = array<f32, 30>(-5.75674448366501715755e-18, 1.79405087314755922667e-17,
  -5.68946255844285935196e-17, 1.83809354436663880070e-16, -6.05704724837331885336e-16,
  2.03870316562433424052e-15, -7.01983709041831346144e-15, 2.47715442448130437068e-14,
  -8.97670518232499435011e-14, 3.34841966607842919884e-13, -1.28917396095102890680e-12,
  5.13963967348173025100e-12, -2.12996783842756842877e-11, 9.21831518760500529508e-11,
  -4.19035475934189648750e-10, 2.01504975519703286596e-09, -1.03457624656780970260e-08,
  5.74108412545004946722e-08, -3.50196060308781257119e-07, 2.40648494783721712015e-06,
  -1.93619797416608296024e-05, 1.95215518471351631108e-04, -2.85781685962277938680e-03,
  1.03923736576817238437e-01, 2.72062619048444266945e+00, 0.0, 0.0, 0.0, 0.0, 0.0);

const BS_PIO4 = 0.785398163397448309615660845819875721;
const BS_3PIO4 = 2.356194490192344928846982537459627163;
const BS_SQ2OPI = 0.797884560802865355879892119868763737;  // sqrt(2 / pi)
const BS_TWOOPI = 0.636619772367581343075535053490057448;  // 2 / pi

// log x for x >= 0, subnormal x included: GPUs may flush subnormal operands to zero, so their
// significand is read from the bits (x = m 2^-149).
fn bs_log(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  if (b > 0u && b < 0x00800000u) { return f_log(f32(b)) - 103.27892990343185; }
  return f_log(x);
}

// log(0.5 * x) with the product rounded to float32 as CPU's K1, K0e and K1e compute it (K0 forms it in
// double): below 2^-125, x = b 2^-149 for its bits b, and half of it rounds to even, to 0 at b = 1.
fn bs_log_half(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  if (b > 0u && b < 0x01000000u) { return bs_log(bitcast<f32>((b >> 1u) + (b & (b >> 1u) & 1u))); }
  return f_log(0.5 * x);
}

// ---- Bessel functions of the first and second kind, orders 0 and 1 -----------------------------

// The asymptotic forms past x = 5 share P(w)/Q(w) and 5/x * (P'(w)/Q'(w)): (p, q) for order 0
// (w = 25/x^2) and order 1 (w = (5/x)^2, rounded as CPU's j1 does). J = (p cos - q sin)(xn),
// Y = (p sin + q cos)(xn), both times sqrt(2/pi)/sqrt(x).
fn bs_pq(x: f32, w: f32, pp: array<f32, 11>, pq: array<f32, 11>, qp: array<f32, 11>, qq: array<f32, 11>)
    -> vec2<f32> {
  return vec2<f32>(bs_polevl(w, pp, 7u) / bs_polevl(w, pq, 7u), 5.0 / x * (bs_polevl(w, qp, 8u) / bs_polevl(w, qq, 7u)));
}
fn bs_pq0(x: f32) -> vec2<f32> { return bs_pq(x, 25.0 / (x * x), BS_J0_PP, BS_J0_PQ, BS_J0_QP, BS_J0_QQ); }
fn bs_pq1(x: f32) -> vec2<f32> { return bs_pq(x, 5.0 / x * (5.0 / x), BS_J1_PP, BS_J1_PQ, BS_J1_QP, BS_J1_QQ); }
// J and Y past x = 5 from (p, q) and the phase x - shift (pi/4 for order 0, 3pi/4 for order 1).
fn bs_j_asym(x: f32, pq: vec2<f32>, shift: f32) -> f32 {
  let xn = x - shift;
  return (pq.x * f_cos(xn) - pq.y * f_sin(xn)) * BS_SQ2OPI / sqrt(x);
}
fn bs_y_asym(x: f32, pq: vec2<f32>, shift: f32) -> f32 {
  let xn = x - shift;
  return (pq.x * f_sin(xn) + pq.y * f_cos(xn)) * BS_SQ2OPI / sqrt(x);
}

fn bs_j0_pos(x: f32) -> f32 {  // x >= 0, finite
  if (x <= 5.0) {
    if (x < 0.00001) { return 1.0 - x * x / 4.0; }
    let z = x * x;
    var rp = bs_polevl(z, BS_J0_RP, 4u);
    var rq = bs_polevl(z, BS_J0_RQ, 8u);
    return (z - 5.78318596294678452118) * (z - 30.4712623436620863991) * rp / rq;
  }
  return bs_j_asym(x, bs_pq0(x), BS_PIO4);
}

fn f_bessel_j0(x: f32) -> f32 {
  if (!is_finite(x)) { return f_nan(); }
  return bs_j0_pos(abs(x));
}

fn bs_j1_pos(x: f32) -> f32 {  // x >= 0 (or -0), finite
  if (x <= 5.0) {
    let z = x * x;
    var rp = bs_polevl(z, BS_J1_RP, 4u);
    var rq = bs_polevl(z, BS_J1_RQ, 8u);
    return rp / rq * x * (z - 14.6819706421238932572) * (z - 49.2184563216946036703);
  }
  return bs_j_asym(x, bs_pq1(x), BS_3PIO4);
}

fn f_bessel_j1(x: f32) -> f32 {
  if (!is_finite(x)) { return f_nan(); }
  if (x < 0.0) { return -bs_j1_pos(-x); }
  return bs_j1_pos(x);
}

fn f_bessel_y0(x: f32) -> f32 {
  if (is_nan(x) || is_inf(x)) { return f_nan(); }
  if (x <= 5.0) {
    if (x == 0.0) { return -f_inf(); }
    if (x < 0.0) { return f_nan(); }
    let z = x * x;
    var yp = bs_polevl(z, BS_Y0_YP, 8u);
    var yq = bs_polevl(z, BS_Y0_YQ, 7u);
    return yp / yq + (BS_TWOOPI * bs_log(x) * bs_j0_pos(x));
  }
  return bs_y_asym(x, bs_pq0(x), BS_PIO4);
}

fn f_bessel_y1(x: f32) -> f32 {
  if (is_nan(x) || is_inf(x)) { return f_nan(); }
  if (x <= 5.0) {
    if (x == 0.0) { return -f_inf(); }
    if (x < 0.0) { return f_nan(); }
    let z = x * x;
    var yp = bs_polevl(z, BS_Y1_YP, 6u);
    var yq = bs_polevl(z, BS_Y1_YQ, 8u);
    return x * (yp / yq) + (BS_TWOOPI * (bs_j1_pos(x) * bs_log(x) - 1.0 / x));
  }
  return bs_y_asym(x, bs_pq1(x), BS_3PIO4);
}

// sin(x) / x, by its Taylor series below 1/2.
fn f_spherical_bessel_j0(x: f32) -> f32 {
  if (is_nan(x)) { return x; }
  if (is_inf(x)) { return 0.0; }
  if (abs(x) < 0.5) {
    let z = x * x;
    return 1.0 + z * (-1.0 / 6.0 + z * (1.0 / 120.0 + z * (-1.0 / 5040.0 + z * (1.0 / 362880.0 +
           z * (-1.0 / 39916800.0 + z * (1.0 / 6227020800.0))))));
  }
  return f_sin(x) / x;
}

// ---- modified Bessel functions K0 and K1: Chebyshev series summed by Clenshaw's recurrence, as
// Cephes' chbevl (bessel_i.wgsl: bi_chbevl, with I0 and I1) --------------------------------------

// Horner's rule over the first n coefficients of c, highest power first (tables padded to 11
// with zeros past their length).
fn bs_polevl(x: f32, c: array<f32, 11>, n: u32) -> f32 {
  var r = 0.0;
  for (var i = 0u; i < n; i = i + 1u) { r = fma(r, x, c[i]); }
  return r;
}

// K0 and K1 below 2: the series in x^2 - 2 (exp(x) K(x) past 2, in 8/x - 2).
fn bs_k0_series(x: f32) -> f32 {
  if (x <= 2.0) { return bi_chbevl(x * x - 2.0, BS_K0_A, 10u); }
  return bi_chbevl(8.0 / x - 2.0, BS_K0_B, 25u);
}

fn bs_k1_series(x: f32) -> f32 {
  if (x <= 2.0) { return bi_chbevl(x * x - 2.0, BS_K1_A, 11u); }
  return bi_chbevl(8.0 / x - 2.0, BS_K1_B, 25u);
}

// K0 (scaled: exp(x) K0(x)); NaN below 0, +inf at 0, 0 at +inf.
fn bs_k0(x: f32, scaled: bool) -> f32 {
  if (is_nan(x) || x < 0.0) { return f_nan(); }
  if (x == 0.0) { return f_inf(); }
  if (is_inf(x)) { return 0.0; }
  if (x <= 2.0) {
    let lh = select(bs_log(x) - 0.6931471805599453, bs_log_half(x), scaled);
    let r = bs_k0_series(x) - lh * f_bessel_i0(x);
    return select(r, r * f_exp(x), scaled);
  }
  if (scaled) { return bs_k0_series(x) / sqrt(x); }
  return f_exp(-x) * bs_k0_series(x) / sqrt(x);
}

fn bs_k1(x: f32, scaled: bool) -> f32 {
  if (is_nan(x) || x < 0.0) { return f_nan(); }
  if (x == 0.0) { return f_inf(); }
  if (is_inf(x)) { return 0.0; }
  if (x <= 2.0) {
    let r = bs_log_half(x) * f_bessel_i1(x) + bs_k1_series(x) / x;
    return select(r, r * f_exp(x), scaled);
  }
  if (scaled) { return bs_k1_series(x) / sqrt(x); }
  return f_exp(-x) * bs_k1_series(x) / sqrt(x);
}

fn f_modified_bessel_k0(x: f32) -> f32 { return bs_k0(x, false); }
fn f_modified_bessel_k1(x: f32) -> f32 { return bs_k1(x, false); }
fn f_scaled_modified_bessel_k0(x: f32) -> f32 { return bs_k0(x, true); }
fn f_scaled_modified_bessel_k1(x: f32) -> f32 { return bs_k1(x, true); }

// ---- Airy Ai ------------------------------------------------------------------------------------

// Asymptotic expansions past |x| = 2.09 (oscillating below, decaying above), the Maclaurin series
// in between; 0 past 103.892, NaN at +-inf.
fn f_airy_ai(x: f32) -> f32 {
  if (is_nan(x) || is_inf(x)) { return f_nan(); }
  if (x > 103.892) { return 0.0; }
  if (x < -2.09) {
    let zi = -2.0 * x * sqrt(-x) / 3.0;
    let z = 1.0 / zi;
    let zz = z * z;
    var afn = bs_polevl(zz, BS_AI_AFN, 9u);
    var afd = bs_polevl(zz, BS_AI_AFD, 9u);
    var agn = bs_polevl(zz, BS_AI_AGN, 11u);
    var agd = bs_polevl(zz, BS_AI_AGD, 10u);
    let t = zi + 0.25 * 3.14159265358979323846;
    return 5.64189583547756286948e-01 / sqrt(sqrt(-x)) * (f_sin(t) * (1.0 + zz * afn / afd) - f_cos(t) * (z * agn / agd));
  }
  if (x >= 2.09) {
    let zeta = 2.0 * x * sqrt(x) / 3.0;
    var an = bs_polevl(1.0 / zeta, BS_AI_AN, 8u);
    var ad = bs_polevl(1.0 / zeta, BS_AI_AD, 8u);
    return 5.64189583547756286948e-01 * (an / ad) / (2.0 * sqrt(sqrt(x)) * f_exp(zeta));
  }
  var f = 1.0;
  var g = x;
  var k = 1.0;
  var m = 1.0;
  var n = x;
  var t = 1.0;
  let z = x * x * x;
  // |x| < 2.09 converges in about 15 rounds; the bound only guards the loop.
  for (var it = 0; it < 200 && t > 1.1920928955078125e-07; it = it + 1) {
    m = m * z;
    k = k + 1.0;
    m = m / k;
    n = n * z;
    k = k + 1.0;
    n = n / k;
    m = m / k;
    f = f + m;
    k = k + 1.0;
    n = n / k;
    g = g + n;
    t = abs(m / f);
  }
  return 0.355028053887817239260 * f - 0.258819403792806798405 * g;
}

// ---- orthogonal polynomials P_n(x) -------------------------------------------------------------

// n arrives as float32 and is truncated to int64 as CPU's static_cast does on x86 (NaN, +-inf and
// |n| >= 2^63 give INT64_MIN, so 0); integers that CPU forms in int64 (n + 1, 2n + 1, the recurrence
// index k) are formed exactly and rounded to float32 once. The recurrences run n steps as on CPU and
// CUDA, stopping early once a value is NaN.

fn bs_neg(n: vec2<u32>) -> bool { return (n.y >> 31u) == 1u; }
fn bs_even(n: vec2<u32>) -> bool { return (n.x & 1u) == 0u; }
fn bs_is(n: vec2<u32>, v: u32) -> bool { return n.y == 0u && n.x == v; }
fn bs_gt(n: vec2<u32>, v: u32) -> bool { return n.y != 0u || n.x > v; }  // n >= 0
fn bs_lt(a: vec2<u32>, b: vec2<u32>) -> bool { return a.y < b.y || (a.y == b.y && a.x < b.x); }
fn bs_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {  // wraps as int64 does on CPU
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}
fn bs_f(a: vec2<u32>) -> f32 { return i64_to_f32(a); }
fn bs_np1(n: vec2<u32>) -> vec2<u32> { return bs_add(n, vec2<u32>(1u, 0u)); }
fn bs_2np1(n: vec2<u32>) -> vec2<u32> { return bs_add(bs_add(n, n), vec2<u32>(1u, 0u)); }
fn bs_pm(v: vec2<u32>, neg: bool) -> f32 { return bs_f(select(v, i64_neg(v), neg)); }  // (float)(+-v)

// The three-term recurrence r = y q - p shared by the Chebyshev families, from (p, q) = (1, q1) at
// k = 2 up to k = n (n >= 2).
fn bs_cheb_rec(y: f32, q1: f32, n: vec2<u32>) -> f32 {
  var p = 1.0;
  var q = q1;
  var r = q1;  // CPU leaves r unset when q1 is NaN (garbage); NaN here
  var k = vec2<u32>(2u, 0u);
  loop {
    if (bs_lt(n, k) || is_nan(q)) { break; }
    r = fma(y, q, -p);
    p = q;
    q = r;
    k = bs_np1(k);
  }
  return r;
}

// The recurrence's start (P0 = 1, P1 = q1) and its run to n, in y (x or the shifted 2x - 1).
fn bs_cheb_tail(y: f32, q1: f32, n: vec2<u32>) -> f32 {
  if (bs_is(n, 0u)) { return 1.0; }
  if (bs_is(n, 1u)) { return q1; }
  return bs_cheb_rec(y + y, q1, n);
}

// The closed forms of U and V inside (-1, 1), with their limits where the division degenerates.
fn bs_cheb_u_closed(y: f32, n: vec2<u32>) -> f32 {
  let a = f_acos(y);
  let n1 = bs_f(bs_np1(n));
  if (f_sin(a) != 0.0) { return f_sin(n1 * a) / f_sin(a); }
  return n1 * f_cos(n1 * a) / y;
}

fn bs_cheb_v_closed(y: f32, n: vec2<u32>) -> f32 {
  let a = f_acos(y);
  if (f_sin(a / 2.0) != 1.0) { return f_cos((bs_f(n) + 0.5) * a) / f_cos(a / 2.0); }
  return bs_pm(bs_2np1(n), !bs_even(n));
}

fn f_chebyshev_t(x: f32, nf: f32) -> f32 {
  let n = f32_to_i64(nf);
  if (bs_neg(n)) { return 0.0; }
  if (abs(x) == 1.0) { return select(-1.0, 1.0, x > 0.0 || bs_even(n)); }
  if (bs_gt(n, 6u) && abs(x) < 1.0) { return f_cos(bs_f(n) * f_acos(x)); }
  return bs_cheb_tail(x, x, n);
}

fn f_chebyshev_u(x: f32, nf: f32) -> f32 {
  let n = f32_to_i64(nf);
  if (bs_neg(n)) { return 0.0; }
  if (abs(x) == 1.0) { return bs_pm(bs_np1(n), !(x > 0.0 || bs_even(n))); }
  if (bs_gt(n, 8u) && abs(x) < 1.0) {
    return bs_cheb_u_closed(x, n);
  }
  return bs_cheb_tail(x, x + x, n);
}

fn f_chebyshev_v(x: f32, nf: f32) -> f32 {
  let n = f32_to_i64(nf);
  if (bs_neg(n)) { return 0.0; }
  if (abs(x) == 1.0) {
    if (x > 0.0) { return 1.0; }
    return bs_pm(bs_2np1(n), !bs_even(n));
  }
  if (bs_gt(n, 8u) && abs(x) < 1.0) {
    return bs_cheb_v_closed(x, n);
  }
  return bs_cheb_tail(x, x + x - 1.0, n);
}

fn f_chebyshev_w(x: f32, nf: f32) -> f32 {
  let n = f32_to_i64(nf);
  if (bs_neg(n)) { return 0.0; }
  if (abs(x) == 1.0) {
    if (x > 0.0) { return bs_f(bs_2np1(n)); }
    return select(-1.0, 1.0, bs_even(n));
  }
  if (bs_gt(n, 8u) && abs(x) < 1.0) {
    let a = f_acos(x);
    if (f_cos(a / 2.0) != 1.0) { return f_sin((bs_f(n) + 0.5) * a) / f_sin(a / 2.0); }
    if (x > 0.0) { return bs_f(bs_2np1(n)); }
    return select(-1.0, 1.0, bs_even(n));
  }
  return bs_cheb_tail(x, x + x + 1.0, n);
}

// The shifted families: the same in y = 2x - 1, with their own special points (x = 0, 1) and
// closed-form thresholds.
fn f_shifted_chebyshev_t(x: f32, nf: f32) -> f32 {
  let n = f32_to_i64(nf);
  if (bs_neg(n)) { return 0.0; }
  if (x == 1.0) { return 1.0; }
  if (x == 0.0) { return select(-1.0, 1.0, bs_even(n)); }
  let y = x + x - 1.0;
  if (bs_gt(n, 6u) && abs(y) < 1.0) { return f_cos(bs_f(n) * f_acos(y)); }
  return bs_cheb_tail(y, y, n);
}

fn f_shifted_chebyshev_u(x: f32, nf: f32) -> f32 {
  let n = f32_to_i64(nf);
  if (bs_neg(n)) { return 0.0; }
  if (x == 1.0) { return bs_f(bs_np1(n)); }
  if (x == 0.0) { return bs_pm(bs_np1(n), !bs_even(n)); }
  let y = x + x - 1.0;
  if (bs_gt(n, 6u) && abs(y) < 1.0) {
    return bs_cheb_u_closed(y, n);
  }
  return bs_cheb_tail(y, y + y, n);
}

fn f_shifted_chebyshev_v(x: f32, nf: f32) -> f32 {
  let n = f32_to_i64(nf);
  if (bs_neg(n)) { return 0.0; }
  if (x == 1.0) { return 1.0; }
  if (x == 0.0) { return bs_pm(bs_2np1(n), !bs_even(n)); }
  let y = x + x - 1.0;
  if (bs_gt(n, 6u) && abs(y) < 1.0) {
    return bs_cheb_v_closed(y, n);
  }
  return bs_cheb_tail(y, y + y - 1.0, n);
}

fn f_shifted_chebyshev_w(x: f32, nf: f32) -> f32 {
  let n = f32_to_i64(nf);
  if (bs_neg(n)) { return 0.0; }
  if (x == 1.0) { return bs_f(bs_2np1(n)); }
  if (x == 0.0) { return select(-1.0, 1.0, bs_even(n)); }
  let y = x + x - 1.0;
  if (bs_gt(n, 4u) && abs(y) < 1.0) {
    let a = f_acos(y);
    if (f_cos(a / 2.0) != 1.0) { return f_sin((bs_f(n) + 0.5) * a) / f_sin(a / 2.0); }
    return select(-1.0, 1.0, bs_even(n));
  }
  return bs_cheb_tail(y, y + y + 1.0, n);
}

// Hermite: NaN past n = 128, CPU's float32 limit.
fn f_hermite_polynomial_h(x: f32, nf: f32) -> f32 {
  let n = f32_to_i64(nf);
  if (bs_neg(n)) { return 0.0; }
  if (bs_is(n, 0u)) { return 1.0; }
  if (bs_is(n, 1u)) { return x + x; }
  if (bs_gt(n, 128u)) { return f_nan(); }
  var p = 1.0;
  var q = x + x;
  var r = 0.0;
  for (var k = 2u; k < n.x + n.x; k = k + 2u) {
    r = fma(x + x, q, -(f32(k) * p));
    p = q;
    q = r;
  }
  return r;
}

fn f_hermite_polynomial_he(x: f32, nf: f32) -> f32 {
  let n = f32_to_i64(nf);
  if (bs_neg(n)) { return 0.0; }
  if (bs_is(n, 0u)) { return 1.0; }
  if (bs_is(n, 1u)) { return x; }
  if (bs_gt(n, 128u)) { return f_nan(); }
  var p = 1.0;
  var q = x;
  var r = x;
  for (var k = 1u; k < n.x; k = k + 1u) {
    r = fma(x, q, -(f32(k) * p));
    p = q;
    q = r;
  }
  return r;
}

fn f_laguerre_polynomial_l(x: f32, nf: f32) -> f32 {
  let n = f32_to_i64(nf);
  if (bs_neg(n)) { return 0.0; }
  if (abs(x) == 0.0) { return 1.0; }
  if (bs_is(n, 0u)) { return 1.0; }
  if (bs_is(n, 1u)) { return 1.0 - x; }
  var p = 1.0;
  var q = 1.0 - x;
  var r = q;  // CPU leaves r unset when x is NaN (garbage); NaN here
  var k = vec2<u32>(1u, 0u);
  loop {
    if (!bs_lt(k, n) || is_nan(q)) { break; }
    r = fma(bs_f(bs_add(k, k)) + (1.0 - x), q, -(bs_f(k) * p)) / bs_f(bs_np1(k));
    p = q;
    q = r;
    k = bs_np1(k);
  }
  return r;
}

fn f_legendre_polynomial_p(x: f32, nf: f32) -> f32 {
  let n = f32_to_i64(nf);
  if (bs_neg(n)) { return 0.0; }
  if (abs(x) == 1.0) { return select(-1.0, 1.0, x > 0.0 || bs_even(n)); }
  if (bs_is(n, 0u)) { return 1.0; }
  if (bs_is(n, 1u)) { return x; }
  var p = 1.0;
  var q = x;
  var r = x;  // CPU leaves r unset when x is NaN (garbage); NaN here
  var k = vec2<u32>(1u, 0u);
  loop {
    if (!bs_lt(k, n) || is_nan(q)) { break; }
    r = fma(bs_f(bs_2np1(k)) * x, q, -(bs_f(k) * p)) / bs_f(bs_np1(k));
    p = q;
    q = r;
    k = bs_np1(k);
  }
  return r;
}
