//! Roots and norms in `f32`: `sqrtf`, `rsqrtf`, `cbrtf`, `rcbrtf`, `hypotf`, `rhypotf`,
//! `norm3df`/`norm4df` and their reciprocals, and the norms of vectors of any length
//! (`normf`, `rnormf`).

use super::basic::{ilogbf, ldexpf, scalbnf};
use crate::math::prim::{fmaf, sqrtf as p_sqrt};

/// Square root, correctly rounded (`sqrt.rn.f32`; CUDA `sqrtf`, 0 ulp). `sqrtf(-0) =
/// -0`, negative → NaN. Every target.
#[inline(always)]
pub fn sqrtf(x: f32) -> f32 {
    p_sqrt(x)
}

/// `1/√x` (CUDA `rsqrtf`, bound 2 ulp): +∞ for +0, −∞ for −0, NaN for negative `x`.
/// An integer seed and Newton steps in FMAs (no division, no square root), the last
/// on the exact residual. Every target.
#[inline]
pub fn rsqrtf(x: f32) -> f32 {
    // 2^-126 <= x < 2^126 keeps y² normal.
    if !(f32::MIN_POSITIVE..8.507_059e37).contains(&x) {
        return rsqrt_special(x);
    }
    rsqrt_normal(x)
}

/// [`rsqrtf`] of `x` in [2^-126, 2^126).
#[inline(always)]
fn rsqrt_normal(x: f32) -> f32 {
    let hx = 0.5 * x;
    let mut y = f32::from_bits(0x5f37_5a86u32.wrapping_sub(x.to_bits() >> 1)); // 2^-8.2
    y = y * fmaf(-hx, y * y, 1.5); // 2^-15.4
    y = y * fmaf(-hx, y * y, 1.5); // 2^-29
                                   // Last step on e = 1 − x·y², with y² as head and tail.
    let yy = y * y;
    let yyl = fmaf(y, y, -yy);
    let e = fmaf(-x, yy, 1.0) - x * yyl;
    fmaf(0.5 * y, e, y)
}

/// [`rsqrtf`] of 0, subnormals, `x >= 2^126`, ∞, negatives and NaN.
#[inline(never)]
fn rsqrt_special(x: f32) -> f32 {
    if x > 0.0 && x < f32::MIN_POSITIVE {
        // rsqrt(x) = rsqrt(x·2^64)·2^32.
        return rsqrt_normal(x * f32::from_bits(0x5f80_0000)) * f32::from_bits(0x4f80_0000);
    }
    if (8.507_059e37..f32::INFINITY).contains(&x) {
        // rsqrt(x) = rsqrt(x·2^-64)·2^-32.
        return rsqrt_normal(x * f32::from_bits(0x1f80_0000)) * f32::from_bits(0x2f80_0000);
    }
    if x == 0.0 {
        return f32::INFINITY.copysign(x);
    }
    if x == f32::INFINITY {
        return 0.0;
    }
    f32::NAN
}

/// `a = |x|` scaled by 2^72 below 2^-54 (so that the residuals of the last steps
/// stay normal), `t = a^(-1/3)` to about 2^-15.8 relative, and whether `a` was
/// scaled. An integer seed (`bits/3` from a magic constant, 2^-4.9) and two Newton
/// steps on `t^-3 = a`, all FMA: no division, no exponent arithmetic. Garbage for 0,
/// ∞ and NaN.
#[inline(always)]
fn rcbrt_rough(x: f32) -> (f32, f32, bool) {
    let a = x.abs();
    let sub = a < f32::from_bits(0x2480_0000); // 2^-54
    let a = if sub {
        a * f32::from_bits(0x6380_0000)
    } else {
        a
    }; // 2^72
    let mut t = f32::from_bits(0x54a2_32a3u32.wrapping_sub(a.to_bits() / 3));
    // t += t(1 − a t³)/3, with a/3 once (its rounding is far below the error here).
    let a3 = a * (1.0 / 3.0);
    for _ in 0..2 {
        t = fmaf(t, fmaf(-(a3 * t), t * t, 1.0 / 3.0), t);
    }
    (a, t, sub)
}

/// `∛x` (CUDA `cbrtf`, bound 1 ulp); odd, exact for cubes of small integers. Every
/// target.
#[inline]
pub fn cbrtf(x: f32) -> f32 {
    let (a, t, sub) = rcbrt_rough(x);
    // c = a·t² ≈ a^(1/3); one Newton step on c with the exact residual c³ − a, its
    // derivative 3c² ≈ 3/t².
    let t2 = t * t;
    let c = (a * t) * t;
    let c2 = c * c;
    let res = fmaf(fmaf(c, c, -c2), c, fmaf(c2, c, -a));
    let c = fmaf(-res * (1.0 / 3.0), t2, c);
    let c = if sub {
        c * f32::from_bits(0x3380_0000)
    } else {
        c
    }; // 2^-24, exact
    if x == 0.0 || !x.is_finite() {
        x + x
    } else {
        c.copysign(x)
    }
}

/// `1/∛x` (CUDA `rcbrtf`, bound 1 ulp): ±∞ for ±0, ±0 for ±∞. Every target.
#[inline]
pub fn rcbrtf(x: f32) -> f32 {
    let (a, t, sub) = rcbrt_rough(x);
    // One more Newton step on t, the residual 1 − a·t³ from a·t² as head and tails.
    let p = a * t;
    let pl = fmaf(a, t, -p);
    let p2 = p * t;
    let p2l = fmaf(p, t, -p2);
    let res = fmaf(-fmaf(pl, t, p2l), t, fmaf(-p2, t, 1.0));
    let t = fmaf(t * (1.0 / 3.0), res, t);
    let t = if sub { t * 16_777_216.0 } else { t }; // 2^24, exact
    if x == 0.0 {
        f32::INFINITY.copysign(x)
    } else if x.is_nan() {
        x
    } else if x.is_infinite() {
        0.0f32.copysign(x)
    } else {
        t.copysign(x)
    }
}

/// `√(x² + y²)` without undue overflow or underflow (CUDA `hypotf`, bound 3 ulp): +∞
/// if either is ±∞, even with a NaN. Every target.
#[inline]
pub fn hypotf(x: f32, y: f32) -> f32 {
    let (ax, ay) = (x.abs(), y.abs());
    if ax == f32::INFINITY || ay == f32::INFINITY {
        return f32::INFINITY;
    }
    if ax.is_nan() || ay.is_nan() {
        return x + y;
    }
    let (a, b) = if ax >= ay { (ax, ay) } else { (ay, ax) };
    if a == 0.0 {
        return 0.0;
    }
    if a > 8.673_617e-19 && a < 1.152_921_5e18 {
        // 2^-60 < a < 2^60: no scaling (a² stays normal, b² below 2^-126 does not
        // matter beside it).
        let (p, pl) = (a * a, fmaf(a, a, -(a * a)));
        let (q, ql) = (b * b, fmaf(b, b, -(b * b)));
        return p_sqrt(p + (q + (pl + ql)));
    }
    // Scale a to [1, 2) exactly (b by the same power of two).
    let k = ilogbf(a);
    let (a, b) = (ldexpf(a, -k), ldexpf(b, -k));
    let (p, pl) = (a * a, fmaf(a, a, -(a * a)));
    let (q, ql) = (b * b, fmaf(b, b, -(b * b)));
    let s = p + (q + (pl + ql));
    let r = p_sqrt(s);
    ldexpf(r, k)
}

/// `1/√(x² + y²)` (CUDA `rhypotf`, bound 2 ulp). Every target.
#[inline]
pub fn rhypotf(x: f32, y: f32) -> f32 {
    1.0 / hypotf(x, y)
}

/// `√(a² + b² + c²)` (CUDA `norm3df`, bound 3 ulp). Every target.
#[inline]
pub fn norm3df(a: f32, b: f32, c: f32) -> f32 {
    norm_core(&[a, b, c])
}

/// `1/√(a² + b² + c²)` (CUDA `rnorm3df`, bound 2 ulp). Every target.
#[inline]
pub fn rnorm3df(a: f32, b: f32, c: f32) -> f32 {
    1.0 / norm_core(&[a, b, c])
}

/// `√(a² + b² + c² + d²)` (CUDA `norm4df`, bound 3 ulp). Every target.
#[inline]
pub fn norm4df(a: f32, b: f32, c: f32, d: f32) -> f32 {
    norm_core(&[a, b, c, d])
}

/// `1/√(a² + b² + c² + d²)` (CUDA `rnorm4df`, bound 2 ulp). Every target.
#[inline]
pub fn rnorm4df(a: f32, b: f32, c: f32, d: f32) -> f32 {
    1.0 / norm_core(&[a, b, c, d])
}

/// The Euclidean norm of up to four values, scaled by the largest exponent.
#[inline(always)]
fn norm_core<const N: usize>(v: &[f32; N]) -> f32 {
    let mut big = 0.0f32;
    let mut nan = false;
    for &x in v {
        if x.is_infinite() {
            return f32::INFINITY;
        }
        nan |= x.is_nan();
        big = big.max(x.abs());
    }
    if nan {
        return f32::NAN;
    }
    if big == 0.0 {
        return 0.0;
    }
    let k = ilogbf(big);
    let mut s = 0.0f32;
    let mut sl = 0.0f32;
    for &x in v {
        let a = ldexpf(x.abs(), -k);
        let p = a * a;
        sl += fmaf(a, a, -p);
        s += p;
    }
    ldexpf(p_sqrt(s + sl), k)
}

// ---------------------------------------------------------------------------------
// Norms of vectors of any length.

/// `Σ (aᵢ·2^−e)²` for the exponent `e` of the largest `|aᵢ|`, and `e`; or the result
/// itself for the special cases (`Err`): `+∞` when an element is infinite (NaNs too,
/// as `hypotf`), NaN when one is NaN, and `zero` when all are zero (or `a` is empty).
#[inline(always)]
fn scaled_sum_of_squares(a: &[f32], zero: f32, inf: f32) -> Result<(f32, i32), f32> {
    let mut m = 0.0f32;
    let mut nan = false;
    for &v in a {
        let av = v.abs();
        if av == f32::INFINITY {
            return Err(inf);
        }
        nan |= av.is_nan();
        m = if av > m { av } else { m };
    }
    if nan {
        return Err(f32::NAN);
    }
    if m == 0.0 {
        return Err(zero);
    }
    let e = ilogbf(m);
    let mut s = 0.0f32;
    for &v in a {
        let t = scalbnf(v, -e); // exact: a power of two, the largest element in [1, 2)
        s = fmaf(t, t, s);
    }
    Ok((s, e))
}

/// The Euclidean norm `√(Σ aᵢ²)` of `a` (CUDA `normf(dim, p)`, the length taken from
/// the slice), without overflow or underflow in between: the squares are summed
/// scaled by the largest element's power of two. `+∞` when an element is infinite
/// (even beside NaNs), NaN when one is NaN, 0 for an empty or all-zero `a`. Error:
/// the sum's `n` roundings, at most about `n/2` ulp of the sum before the square root
/// halves them (CUDA documents no bound). Every target. Source: CUDA Math API `normf`.
#[inline]
pub fn normf(a: &[f32]) -> f32 {
    match scaled_sum_of_squares(a, 0.0, f32::INFINITY) {
        Ok((s, e)) => scalbnf(sqrtf(s), e),
        Err(v) => v,
    }
}

/// `1/√(Σ aᵢ²)` (CUDA `rnormf(dim, p)`), scaled as [`normf`]: `+0` when an element is
/// infinite, NaN when one is NaN, `+∞` for an empty or all-zero `a`. Error as
/// [`normf`], plus the division's rounding. Every target. Source: CUDA Math API
/// `rnormf`.
#[inline]
pub fn rnormf(a: &[f32]) -> f32 {
    match scaled_sum_of_squares(a, f32::INFINITY, 0.0) {
        Ok((s, e)) => scalbnf(1.0 / sqrtf(s), -e),
        Err(v) => v,
    }
}
