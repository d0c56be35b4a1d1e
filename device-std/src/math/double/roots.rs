//! Roots and norms in `f64`: `sqrt`, `rsqrt`, `cbrt`, `rcbrt`, `hypot`, `rhypot`,
//! `norm3d`/`norm4d` and their reciprocals, the norms of vectors of any length (`norm`,
//! `rnorm`), and the square root of a double-double.

use super::arith::{
    f32_truncated, f64_of_f32, fast_two_sum, high_word, normalize, pow2, scale, scale_normal,
    two_prod, two_sum, with_high_word,
};
use super::basic::{ilogb, scalbn};
use super::consts::TWO54;
use crate::math::prim;
use crate::math::prim::fma;

const THIRD: f64 = 1.0 / 3.0;

/// `sqrt(wh + wl)` as a double-double, `wh > 0`.
#[inline(always)]
pub(super) fn sqrt_dd(wh: f64, wl: f64) -> (f64, f64) {
    let q = prim::sqrt(wh);
    (q, (fma(-q, q, wh) + wl) * 0.5 / q)
}

/// `|x|^(-1/3)` to about 2^-60 for normal `a = |x|`, by 4 Newton steps from a bit
/// estimate (3.4% off).
#[inline(always)]
fn rcbrt_approx(a: f64) -> f64 {
    let mut r = f64::from_bits(0x553E_F0FB_54E0_0000 - a.to_bits() / 3);
    for _ in 0..4 {
        let t = fma(-(a * r), r * r, 1.0);
        r = fma(r * THIRD, t, r);
    }
    r
}

/// Cube root. `cbrt(±0) = ±0`, `cbrt(±∞) = ±∞`, negative `x` gives `-cbrt(-x)`.
/// Max error: 0.59 ulp measured (CUDA `cbrt`: 1 ulp). Every target. Source: CUDA
/// Math API `cbrt`; C99 F.9.4.1.
#[inline]
pub fn cbrt(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x + x;
    }
    let (a, sc) = normalize(x.abs());
    let r = rcbrt_approx(a);
    let y = a * r * r;
    // One Newton step on y³ = a with an exact residual.
    let (y2, y2e) = two_prod(y, y);
    let res = fma(y2, y, -a) + y2e * y;
    let y = fma(-res, r * r * THIRD, y);
    let y = if sc != 0 { y * 3.814697265625e-6 } else { y }; // 2^-18
    y.copysign(x)
}

/// Reciprocal cube root `1/cbrt(x)`. `rcbrt(±0) = ±∞`, `rcbrt(±∞) = ±0`. Max
/// error: 0.50 ulp measured (CUDA `rcbrt`: 1 ulp). Every target. Source: CUDA
/// Math API `rcbrt`.
#[inline]
pub fn rcbrt(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        // 1/(x + x) without the division, whose slow path would be the only `CALL` of a
        // caller's loop: ±∞ at ±0, ±0 at ±∞, NaN at NaN.
        return if x == 0.0 {
            f64::INFINITY.copysign(x)
        } else if x.is_nan() {
            x + x
        } else {
            0.0f64.copysign(x)
        };
    }
    let (a, sc) = normalize(x.abs());
    let r = rcbrt_approx(a);
    // 1 - a r³ with its rounding errors kept.
    let (ar, are) = two_prod(a, r);
    let (p, pe) = two_prod(ar, r);
    let res = -(fma(p, r, -1.0) + (pe + are * r) * r);
    let r = fma(r * THIRD, res, r);
    let r = if sc != 0 { r * 262144.0 } else { r }; // 2^18
    r.copysign(x)
}

/// Reciprocal square root `1/sqrt(x)`. `rsqrt(+0) = +∞`, `rsqrt(-0) = -∞`,
/// `rsqrt(x < 0) = NaN`, `rsqrt(+∞) = +0`. Max error: 0.50 ulp measured (CUDA
/// `rsqrt`: 1 ulp). Every target. Source: CUDA Math API `rsqrt`.
#[inline]
pub fn rsqrt(x: f64) -> f64 {
    // Positive normal: the high word in [0x0010_0000, 0x7FF0_0000), one unsigned compare.
    if high_word(x).wrapping_sub(0x0010_0000) < 0x7FE0_0000 {
        rsqrt_normal(x)
    } else {
        rsqrt_rare(x)
    }
}

/// [`rsqrt`] of a positive normal `x`. x = m·4^k with m in [1, 4); rsqrt(x) =
/// rsqrt(m)·2^-k, no division, square root or conversion instruction: an `f32`
/// estimate (`f32` runs at twice the `f64` rate or more), then one third-order step in
/// `f64`.
#[inline(always)]
fn rsqrt_normal(x: f64) -> f64 {
    let hi = high_word(x);
    let k = ((hi >> 20) as i32 - 1023) >> 1;
    let m = with_high_word(x, hi.wrapping_sub((k as u32) << 21));
    let r = f64_of_f32(rsqrt_f32_estimate(f32_truncated(m)));
    // t = m r² - 1 with the rounding of m·r kept; rsqrt(m) = r (1 + t)^(-1/2)
    // = r (1 - t/2 + 3t²/8 - …), |t| ≤ 2^-21, so the t³ term is below 2^-63.
    let (mr, mre) = two_prod(m, r);
    let t = fma(mr, r, -1.0) + mre * r;
    let u = t * fma(t, 0.375, -0.5);
    scale_normal(fma(r, u, r), -k)
}

/// [`rsqrt`] of a subnormal, zero, negative, infinite or NaN `x`, out of line.
#[inline(never)]
fn rsqrt_rare(x: f64) -> f64 {
    if x > 0.0 && x < f64::MIN_POSITIVE {
        return scale_normal(rsqrt_normal(x * TWO54), 27);
    }
    1.0 / prim::sqrt(x) // ±0, negative, +∞, NaN
}

/// `1/sqrt(m)` to about 2^-22 relative for a positive normal `m`: a bit estimate
/// (3.5% off) and three Newton steps, in `f32`.
#[inline(always)]
pub(super) fn rsqrt_f32_estimate(m: f32) -> f32 {
    let mut r = f32::from_bits(0x5f37_59df - (m.to_bits() >> 1));
    let h = 0.5 * m;
    for _ in 0..3 {
        let e = prim::fmaf(-(h * r), r, 0.5);
        r = prim::fmaf(r, e, r);
    }
    r
}

/// Square root, correctly rounded (`sqrt.rn.f64`). `sqrt(-0) = -0`,
/// `sqrt(x < 0) = NaN`. Max error: 0 ulp (CUDA `sqrt`: 0 ulp). Every target.
/// Source: CUDA Math API `sqrt`; C99 F.9.4.5.
#[inline]
pub fn sqrt(x: f64) -> f64 {
    prim::sqrt(x)
}

/// `(sqrt(Σ v²) = (h + l)·2^e)` for finite `v` with a nonzero largest `|v|`.
#[inline(always)]
fn norm_parts(v: [f64; 4]) -> (f64, f64, i32) {
    let m = v[0].abs().max(v[1].abs()).max(v[2].abs()).max(v[3].abs());
    let (mn, sc) = normalize(m);
    let e = ((mn.to_bits() >> 52) as i32 - 1023) + sc; // m in [2^e, 2^(e+1))
    let (s1, s2) = (pow2(-(e >> 1)), pow2(-(e - (e >> 1))));
    let (mut sh, mut sl) = (0.0, 0.0);
    for &vi in v.iter() {
        let w = vi * s1 * s2;
        let (p, pe) = two_prod(w, w);
        let (s, se) = two_sum(sh, p);
        sh = s;
        sl += se + pe;
    }
    let (sh, sl) = fast_two_sum(sh, sl);
    let (q, ql) = sqrt_dd(sh, sl);
    (q, ql, e)
}

/// `Some(result)` for inputs with an ∞ (+∞, even beside NaN), a NaN or all zeros.
#[inline(always)]
fn norm_special(v: [f64; 4], recip: bool) -> Option<f64> {
    let inf = v.iter().any(|c| c.is_infinite());
    let nan = v.iter().any(|c| c.is_nan());
    let zero = v.iter().all(|&c| c == 0.0);
    if inf {
        Some(if recip { 0.0 } else { f64::INFINITY })
    } else if nan {
        Some(f64::NAN)
    } else if zero {
        Some(if recip { f64::INFINITY } else { 0.0 })
    } else {
        None
    }
}

#[inline(always)]
fn norm_n(v: [f64; 4]) -> f64 {
    if let Some(r) = norm_special(v, false) {
        return r;
    }
    let (q, ql, e) = norm_parts(v);
    scale(q + ql, e)
}

#[inline(always)]
fn rnorm_n(v: [f64; 4]) -> f64 {
    if let Some(r) = norm_special(v, true) {
        return r;
    }
    let (q, ql, e) = norm_parts(v);
    let r = 1.0 / q;
    let rl = r * (fma(-r, q, 1.0) - r * ql);
    scale(r + rl, -e)
}

/// `sqrt(x² + y²)` without undue overflow or underflow. `hypot(±∞, y) = +∞` even
/// for NaN `y`; otherwise NaN in, NaN out. Max error: 0.50 ulp measured, 0.75 for
/// subnormal results (CUDA `hypot`: 2 ulp). Every target. Source: CUDA Math API
/// `hypot`; C99 F.9.4.3.
#[inline]
pub fn hypot(x: f64, y: f64) -> f64 {
    let (ax, ay) = (x.abs(), y.abs());
    if !(ax < f64::INFINITY && ay < f64::INFINITY) {
        return if ax == f64::INFINITY || ay == f64::INFINITY {
            f64::INFINITY
        } else {
            x + y // NaN
        };
    }
    let (a, b) = if ax >= ay { (ax, ay) } else { (ay, ax) };
    if b == 0.0 {
        return a; // also hypot(0, 0)
    }
    // a·2^-e in [1, 2) (an exponent subtraction), b·2^-e (two exact steps; an
    // underflow there is far below a's ulp).
    let (an, sc) = normalize(a);
    let e = (an.to_bits() >> 52) as i32 - 1023;
    let a1 = f64::from_bits(an.to_bits().wrapping_sub((e as i64 as u64) << 52));
    let b1 = b * pow2(-(e >> 1)) * pow2(-(e - (e >> 1)) - sc);
    let (p, pe) = two_prod(a1, a1);
    let (q, qe) = two_prod(b1, b1);
    let (wh, wl) = fast_two_sum(p, q);
    let v = sqrt_dd_round(wh, wl + (pe + qe));
    let e = e + sc;
    if e.abs() < 1000 {
        scale_normal(v, e)
    } else {
        scale(v, e)
    }
}

/// `sqrt(wh + wl)` rounded once (to about 2^-64 before the rounding), for
/// `1 ≤ wh < 16`, `|wl| ≤ ulp(wh)`: no square root or division instruction, an
/// `f32` reciprocal square root and two Newton steps `y + (w - y²)/(2 sqrt w)`.
#[inline(always)]
fn sqrt_dd_round(wh: f64, wl: f64) -> f64 {
    let hr = 0.5 * f64_of_f32(rsqrt_f32_estimate(f32_truncated(wh)));
    let y0 = wh * (2.0 * hr);
    let y1 = fma(fma(-y0, y0, wh) + wl, hr, y0);
    fma(fma(-y1, y1, wh) + wl, hr, y1)
}

/// `1 / sqrt(x² + y²)`. `rhypot(±∞, y) = +0`, `rhypot(0, 0) = +∞`. Max error:
/// 0.62 ulp measured (CUDA `rhypot`: 1 ulp). Every target. Source: CUDA Math API
/// `rhypot`.
#[inline]
pub fn rhypot(x: f64, y: f64) -> f64 {
    rnorm_n([x, y, 0.0, 0.0])
}

/// `sqrt(a² + b² + c²)`; special values as [`hypot`]. Max error: 0.50 ulp
/// measured (CUDA `norm3d`: 2 ulp). Every target. Source: CUDA Math API `norm3d`.
#[inline]
pub fn norm3d(a: f64, b: f64, c: f64) -> f64 {
    norm_n([a, b, c, 0.0])
}

/// `1 / sqrt(a² + b² + c²)`; special values as [`rhypot`]. Max error: 0.50 ulp
/// measured (CUDA `rnorm3d`: 1 ulp). Every target. Source: CUDA Math API `rnorm3d`.
#[inline]
pub fn rnorm3d(a: f64, b: f64, c: f64) -> f64 {
    rnorm_n([a, b, c, 0.0])
}

/// `sqrt(a² + b² + c² + d²)`; special values as [`hypot`]. Max error:
/// 0.50 ulp measured (CUDA `norm4d`: 2 ulp). Every target. Source: CUDA Math
/// API `norm4d`.
#[inline]
pub fn norm4d(a: f64, b: f64, c: f64, d: f64) -> f64 {
    norm_n([a, b, c, d])
}

/// `1 / sqrt(a² + b² + c² + d²)`; special values as [`rhypot`]. Max error:
/// 0.50 ulp measured (CUDA `rnorm4d`: 1 ulp). Every target. Source: CUDA Math
/// API `rnorm4d`.
#[inline]
pub fn rnorm4d(a: f64, b: f64, c: f64, d: f64) -> f64 {
    rnorm_n([a, b, c, d])
}

// ---------------------------------------------------------------- norms of any length

/// As `single/roots.rs`'s: the scaled sum of squares and the exponent, or the special
/// result.
#[inline(always)]
fn scaled_sum_of_squares(a: &[f64], zero: f64, inf: f64) -> Result<(f64, i32), f64> {
    let mut m = 0.0f64;
    let mut nan = false;
    for &v in a {
        let av = v.abs();
        if av == f64::INFINITY {
            return Err(inf);
        }
        nan |= av.is_nan();
        m = if av > m { av } else { m };
    }
    if nan {
        return Err(f64::NAN);
    }
    if m == 0.0 {
        return Err(zero);
    }
    let e = ilogb(m);
    let mut s = 0.0f64;
    for &v in a {
        let t = scalbn(v, -e); // exact: a power of two, the largest element in [1, 2)
        s = fma(t, t, s);
    }
    Ok((s, e))
}

/// The Euclidean norm `√(Σ aᵢ²)` of `a` (CUDA `norm(dim, p)`, the length taken from
/// the slice), without overflow or underflow in between (see [`normf`](crate::math::normf)).
/// `+∞` when an element is infinite, NaN when one is NaN, 0 for an empty or all-zero
/// `a`. Error: the sum's roundings (CUDA documents no bound). Every target. Source:
/// CUDA Math API `norm`.
#[inline]
pub fn norm(a: &[f64]) -> f64 {
    match scaled_sum_of_squares(a, 0.0, f64::INFINITY) {
        Ok((s, e)) => scalbn(sqrt(s), e),
        Err(v) => v,
    }
}

/// `1/√(Σ aᵢ²)` (CUDA `rnorm(dim, p)`), scaled as [`norm`]: `+0` when an element is
/// infinite, NaN when one is NaN, `+∞` for an empty or all-zero `a`. Every target.
/// Source: CUDA Math API `rnorm`.
#[inline]
pub fn rnorm(a: &[f64]) -> f64 {
    match scaled_sum_of_squares(a, f64::INFINITY, 0.0) {
        Ok((s, e)) => scalbn(1.0 / sqrt(s), -e),
        Err(v) => v,
    }
}
