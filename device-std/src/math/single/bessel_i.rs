//! Modified Bessel functions of the first kind in `f32`: `cyl_bessel_i0f`,
//! `cyl_bessel_i1f` (the Bessel functions of integer order are in `math/bessel.rs`).

use super::arith::{poly, poly_from1};
use super::exp_log::exp_dd_times;
use super::roots::rsqrtf;
use crate::math::prim::fmaf;

// remez.py BESSEL_I0_SMALL: degree 9 on [0, 60.07], weighted error 7.835e-9 (2^-26.93)
const BESSEL_I0_SMALL: [f32; 10] = [
    0.25,
    0.015625,
    0.00043402769370004535,
    6.781717274861876e-06,
    6.781179706649709e-08,
    4.713432422143171e-10,
    2.3853130842049763e-12,
    9.8464005639275e-15,
    2.1952197206326304e-17,
    1.2795367382368392e-19,
];
// remez.py BESSEL_I1_SMALL: degree 9 on [0, 60.07], weighted error 1.706e-10 (2^-32.45)
const BESSEL_I1_SMALL: [f32; 10] = [
    0.125,
    0.0052083334885537624,
    0.00010850685794139281,
    1.356354346171429e-06,
    1.1301028557397785e-08,
    6.73809411044779e-11,
    2.9681511697250695e-13,
    1.117092991222981e-15,
    1.983230038683663e-18,
    1.2439495865154753e-20,
];
// remez.py BESSEL_I0_LARGE: degree 7 on [0, 0.12904], weighted error 3.523e-10 (2^-31.4)
const BESSEL_I0_LARGE: [f32; 8] = [
    0.3989422917366028,
    0.04986775666475296,
    0.028051231056451797,
    0.02934681437909603,
    0.0371938981115818,
    0.25690916180610657,
    -1.446000099182129,
    7.4846014976501465,
];
const BESSEL_I0_LARGE_LO: f32 = -1.1259656318429734e-08;
// remez.py BESSEL_I1_LARGE: degree 7 on [0, 0.12904], weighted error 1.397e-9 (2^-29.41)
const BESSEL_I1_LARGE: [f32; 8] = [
    0.3989422917366028,
    -0.14960333704948425,
    -0.04675035923719406,
    -0.04111931473016739,
    -0.047426484525203705,
    -0.31658127903938293,
    1.7175471782684326,
    -8.647225379943848,
];
const BESSEL_I1_LARGE_LO: f32 = -1.1414783784857718e-08;

/// `e^a/√a · (c0 + c0_lo + w·Q(w))`, `w = 1/a`, for `a` held to [7.75, 92] (above 92
/// both functions overflow).
#[inline(always)]
fn bessel_i_large(a: f32, c: &[f32; 8], c0_lo: f32) -> f32 {
    let a = a.clamp(7.75, 92.0);
    let w = 1.0 / a;
    let h = fmaf(w, poly_from1(w, c), c0_lo) + c[0];
    exp_dd_times(a, 0.0, h * rsqrtf(a))
}

/// The modified Bessel function of the first kind of order 0, `I₀(x)` (CUDA
/// `cyl_bessel_i0f`, bound 6 ulp): even, 1 at 0, `+∞` at ±∞ and for `|x|` above about
/// 91.9 (overflow). Every target. Source: CUDA Math API `cyl_bessel_i0f`.
#[inline]
pub fn cyl_bessel_i0f(x: f32) -> f32 {
    // 1 + t·P(t), t = x², up to 7.75; e^x/√x·H(1/x) above. A branch, not both and a
    // select: computing both in every call let ptxas interleave the 16 calls of the
    // benchmark kernel in 137 registers.
    let a = x.abs();
    if a <= 7.75 || x.is_nan() {
        let t = a * a;
        fmaf(t, poly(t, &BESSEL_I0_SMALL), 1.0)
    } else {
        bessel_i_large(a, &BESSEL_I0_LARGE, BESSEL_I0_LARGE_LO)
    }
}

/// The modified Bessel function of the first kind of order 1, `I₁(x)` (CUDA
/// `cyl_bessel_i1f`, bound 6 ulp): odd, `±∞` at ±∞ and for `|x|` above about 91.9.
/// Every target. Source: CUDA Math API `cyl_bessel_i1f`.
#[inline]
pub fn cyl_bessel_i1f(x: f32) -> f32 {
    // (x/2)(1 + t·P(t)), t = x², up to 7.75; e^x/√x·H(1/x) above.
    // A branch, as in `cyl_bessel_i0f`.
    let a = x.abs();
    let r = if a <= 7.75 || x.is_nan() {
        let t = a * a;
        (0.5 * a) * fmaf(t, poly(t, &BESSEL_I1_SMALL), 1.0)
    } else {
        bessel_i_large(a, &BESSEL_I1_LARGE, BESSEL_I1_LARGE_LO)
    };
    r.copysign(x)
}
