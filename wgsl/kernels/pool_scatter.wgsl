// max_pool backward where the windows cannot overlap (ops/pool.cpp, max_backward): every input
// element lies in at most one window, so grad_input (zero-filled by the host) gets one write per
// output element, at the input position its index names. No window search, one invocation per
// output (a quarter of the gather's for 2x2 windows).
// Operands: 0 grad_output (f32), 1 indices (int64, positions within a plane), 2 grad_input (f32).
// Parameters: n (outputs), in_vol and out_vol (elements of one input / output plane), grad_off,
// idx_off, gi_off (element offsets).
fn run(t: u32) {
  let plane = t / P.out_vol;
  let i = ld1(P.idx_off + t);
  st2(P.gi_off + plane * P.in_vol + i.x, ld0(P.grad_off + t));
}
