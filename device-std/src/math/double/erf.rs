//! Error functions in `f64`: `erf`, `erfc`, `erfcx`, `normcdf`.

use super::arith::{fast_two_sum, poly, scale, scale_normal, two_prod, two_sum};
use super::exp_log::{exp_dd, exp_parts, exp_reduce, EXP_C};
use crate::math::prim::fma;

const ISQRT2_H: f64 = core::f64::consts::FRAC_1_SQRT_2;
const ISQRT2_L: f64 = -4.833646656726457e-17;

/// `scripts/math_coeffs_f64.py erfc`: P(t) = (1 + 2x) e^(x^2) erfc(x), t = (x - 3.75)/(x + 3.75) on [-0.7657058823529411, 0.7594541062801933], degree 22: max rel err 2^-61.3 (2^-53.2 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
const ERFC_C: [f64; 23] = [
    1.2375126308378275,
    -0.14024059858554702,
    0.0035854154854636526,
    0.08227673849015028,
    -0.10880393014170582,
    0.09230432116023247,
    -0.05869339859056174,
    0.028362277420788812,
    -0.009746579547915152,
    0.0017556258409901126,
    0.00029371360208992596,
    -0.0002901540408851427,
    5.164933913733198e-05,
    2.2384196250081335e-05,
    -1.1444684672389773e-05,
    -9.7371024106571e-07,
    1.7522430549429427e-06,
    -5.65570246956221e-08,
    -2.5863301218419176e-07,
    2.2147463620840913e-08,
    3.768568750339036e-08,
    -2.8191647083754087e-09,
    -4.05519164314062e-09,
];
/// `scripts/math_coeffs_f64.py erf`: G(z) = erf(sqrt z)/sqrt z - 1 on [0, 1], degree 12: max rel err 2^-62.6 (2^-55.5 with the coefficients rounded to f64).
#[allow(clippy::excessive_precision)]
const ERF_C: [f64; 13] = [
    0.1283791670955126,
    -0.3761263890318375,
    0.11283791670954879,
    -0.026866170645076792,
    0.0052239776248180145,
    -0.000854832698083379,
    0.0001205533111164271,
    -1.4925595266831182e-05,
    1.6461000484121368e-06,
    -1.6350312701054695e-07,
    1.4659775274047436e-08,
    -1.1372848856791674e-09,
    5.957176147748911e-11,
];

/// `scripts/math_coeffs_f64.py erf_q`: q(a) = (-ln(erfc a)/a - 2/sqrt(pi))/a on [0, 5.9219], degree 23: max rel err 2^-57.5 (2^-57.2 with the coefficients rounded to f64)
#[allow(clippy::excessive_precision)]
const ERF_Q_C: [f64; 24] = [
    0.6366197723675828,
    0.10277260330182025,
    -0.019128447005650435,
    -0.00020919468876778085,
    0.0016962063451867594,
    -0.00059012536734544,
    2.5877993462235735e-05,
    6.449335906997264e-05,
    -2.972685504825519e-05,
    3.4113676225695633e-06,
    2.830407979617054e-06,
    -1.737191597559773e-06,
    3.3314377684559343e-07,
    1.3910266102047208e-07,
    -1.426863694582203e-07,
    6.609196379193777e-08,
    -2.107405212920709e-08,
    5.025185239417008e-09,
    -9.135237689020384e-10,
    1.2562226200175825e-10,
    -1.2695833110195793e-11,
    8.909456260981838e-13,
    -3.8802880989716777e-14,
    7.898738940499594e-16,
];
/// `2/√π − 1`, the constant term of `p(a) = Q/a − 1 = (2/√π − 1) + a·q(a)`.
#[allow(clippy::excessive_precision)]
const ERF_P0: f64 = 0.128_379_167_095_512_573_9;

/// From here on `erf(x)` rounds to 1 (`erfc(x) < 2^-54` from 5.92159 on), and `erf`'s
/// path gives exactly 1 at it (a test holds it to that).
const ERF_ONE: f64 = 5.9219;

/// `e^(x²)·erfc(x) = P(t) / (1 + 2x)` for `x = ah + al`, `0.5 ≤ ah ≤ 27.3`, as head
/// and tail (`t = (ah − 3.75)/(ah + 3.75)`; the tail `al` only where it matters, in
/// `1 + 2x`).
#[inline(always)]
fn erfc_scaled(ah: f64, al: f64) -> (f64, f64) {
    let t = (ah - 3.75) / (ah + 3.75);
    let p = poly(t, &ERFC_C);
    let (dh, dl) = two_sum(1.0, 2.0 * ah);
    let inv = 1.0 / dh;
    let f = p * inv;
    (f, (fma(-f, dh, p) - f * (dl + 2.0 * al)) * inv)
}

/// `1/√π`.
const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;

/// The scaled complementary error function `erfcx(x) = e^(x²)·erfc(x)`: 1 at 0,
/// about `1/(x√π)` for large `x` (no overflow or underflow where the true value is
/// representable), `+∞` at `−∞` and below about −26.6, `+0` at `+∞`. Max error: see
/// BENCHMARKS.md (CUDA `erfcx`: 4 ulp). Every target. Source: CUDA Math API `erfcx`.
#[inline]
pub fn erfcx(x: f64) -> f64 {
    let a = x.abs();
    let large = if a > 27.3 {
        // (1/(a√π))·Σ (−1)^k (2k−1)!! / (2a²)^k, k ≤ 6: the next term is below 2^-56
        // from 27.3 on.
        let w2 = {
            let w = 1.0 / a;
            w * w
        };
        let c = [-0.5, 0.75, -1.875, 6.5625, -29.531_25, 162.421_875];
        let mut s = c[5];
        for &ck in c[..5].iter().rev() {
            s = fma(w2, s, ck);
        }
        FRAC_1_SQRT_PI * fma(w2, s, 1.0) / a
    } else {
        let (f, fl) = erfc_scaled(a.max(0.5), 0.0);
        f + fl
    };
    if x >= 0.5 {
        return large;
    }
    // e^(x²) from x² as head and tail; +∞ once x² passes ln(f64::MAX).
    let (sq, sqe) = two_prod(x, x);
    let e = if sq > 710.0 {
        f64::INFINITY
    } else {
        exp_dd(sq, sqe) // NaN stays NaN
    };
    if a < 0.5 {
        let (h, t) = erf_small(x);
        let (s, err) = two_sum(1.0, -h);
        e * (s + (err - t))
    } else {
        fma(2.0, e, -large)
    }
}

/// `erfc(ah + al) = 2^k · v` for `0.5 ≤ ah ≤ 27.3` (Shepherd & Laframboise's
/// `erfc(x) = e^(-x²) P(t) / (1 + 2x)`, `t = (x - 3.75)/(x + 3.75)`).
#[inline(always)]
fn erfc_parts(ah: f64, al: f64) -> (i32, f64) {
    let (f, fl) = erfc_scaled(ah, al);
    let (sq, sqe) = two_prod(ah, ah);
    let (k, r, u) = exp_parts(-sq, -(sqe + 2.0 * ah * al));
    let (eh, el) = fast_two_sum(1.0, r);
    (k, fma(eh, f, eh * fl + (el + u) * f))
}

/// `erf(x) = x + x G(x²)` for `|x| ≤ 1`: `(x, x·G)`.
#[inline(always)]
fn erf_small(x: f64) -> (f64, f64) {
    (x, x * poly(x * x, &ERF_C))
}

/// The error function. `erf(±0) = ±0`, `erf(±∞) = ±1`. Max error: 0.93 ulp
/// measured on the host against mpmath (CUDA `erf`: 2 ulp). Every target. Source: CUDA Math API `erf`; C99
/// F.9.5.1.
#[inline]
pub fn erf(x: f64) -> f64 {
    // One path for every |x|, as CUDA's: erf(a) = 1 - e^(-Q), where Q = -ln erfc(a)
    // = a + a·p(a) in head and tail (a - Qh is exact while p ≤ 1; beyond, e^(-Q) <
    // 0.06 shrinks its rounding). |x| above ERF_ONE is clamped to it, where the path
    // gives exactly 1; NaN passes the clamp and stays NaN. No branch: one here makes
    // ptxas load every coefficient again after it.
    let a = x.abs();
    let ac = if a > ERF_ONE { ERF_ONE } else { a };
    let p = fma(ac, poly(ac, &ERF_Q_C), ERF_P0);
    let qh = fma(ac, p, ac);
    let ql = fma(ac, p, ac - qh);
    // e^(-Q) = 2^k (1 + r + u), -54 ≤ k ≤ 0: 1 - 2^k is exact (it rounds to 1 at
    // k = -54, an error of 2^-54 against a result whose ulp is 2^-53), and so is
    // (1 - 2^k) - 2^k·r as head and tail, the larger first (|r| ≤ 0.35).
    // (exp_parts with r² in head and tail: where k = 0 the result is about r, and
    // the rounding of r² alone would cost it 0.15 ulp.)
    let (k, r, rl) = exp_reduce(-qh, -ql);
    let (z, ze) = two_prod(r, r);
    let e = poly(r, &EXP_C);
    let u = fma(z, e, fma(ze, e, fma(rl, r, rl)));
    let two_k = scale_normal(1.0, k);
    let one_minus = 1.0 - two_k;
    let h = fma(-two_k, r, one_minus);
    let l = fma(-two_k, r, one_minus - h);
    let v = h + fma(-two_k, u, l);
    v.copysign(x)
}

/// The complementary error function `1 - erf(x)`. `erfc(-∞) = 2`, `erfc(+∞) = +0`;
/// underflows to (subnormal, then) zero above 26.5. Max error: 2.01 ulp measured
/// (CUDA `erfc`: 5 ulp). Every target. Source: CUDA Math API `erfc`; C99 F.9.5.2.
#[inline]
pub fn erfc(x: f64) -> f64 {
    let a = x.abs();
    if a < 0.5 {
        let (h, t) = erf_small(x);
        let (s, e) = two_sum(1.0, -h);
        return s + (e - t);
    }
    if !(a < 27.3) {
        return if x > 0.0 {
            0.0
        } else if x < 0.0 {
            2.0
        } else {
            x + x
        };
    }
    let (k, v) = erfc_parts(a, 0.0);
    if x > 0.0 {
        scale(v, k)
    } else {
        2.0 - scale(v, k)
    }
}

/// The standard normal cumulative distribution function `erfc(-x/√2)/2`, with the
/// argument carried in double-double (so the left tail keeps its relative
/// accuracy). `normcdf(-∞) = +0`, `normcdf(+∞) = 1`. Max error: 1.99 ulp
/// measured (CUDA `normcdf`: 5 ulp). Every target. Source: CUDA Math API `normcdf`.
#[inline]
pub fn normcdf(x: f64) -> f64 {
    let h = -x * ISQRT2_H;
    let l = fma(-x, ISQRT2_H, -h) - x * ISQRT2_L;
    let a = h.abs();
    if a < 0.5 {
        // (1 - erf(h + l)) / 2, erf(h + l) ≈ erf(h) + l·2/√π
        let (eh, et) = erf_small(h);
        let et = fma(l, core::f64::consts::FRAC_2_SQRT_PI, et);
        let (s, e) = two_sum(1.0, -eh);
        return 0.5 * (s + (e - et));
    }
    if !(a < 27.3) {
        return if h > 0.0 {
            0.0
        } else if h < 0.0 {
            1.0
        } else {
            x + x
        };
    }
    // One erfc for both signs (two would be inlined twice, and a warp with both signs
    // runs both).
    let upper = h > 0.0;
    let (ah, al) = if upper { (h, l) } else { (-h, -l) };
    let (k, v) = erfc_parts(ah, al);
    let tail = scale(v, k - 1);
    if upper {
        tail
    } else {
        1.0 - tail
    }
}
