//! Bessel functions of the first and second kind of integer order (`j0f`, `j1f`, `jnf`,
//! `y0f`, `y1f`, `ynf` and the `f64` ones): one body for both precisions, written once
//! in [`bessel_body`] and instantiated per float type.
//!
//! Forms (coefficients from `scripts/bessel_coeffs.py`, in `bessel_coeffs.rs`):
//! - below the asymptotic threshold `A` (7 or 8), pieces that each hold at most one zero
//!   `z` of the function: `F(x) = ((x − z_hi) − z_lo) · P(x − centre)`, so the relative
//!   error stays small next to the zeros, where CUDA's ulp bounds (`|x| < 8`) need it;
//! - `Y0` and `Y1` near 0: `(2/π) ln(x) J0(x) + R0(x²)` and
//!   `(2/π) ln(x) J1(x) − 2/(πx) + x R1(x²)`;
//! - `x ≥ A`: Hankel's form `√(2/(πx)) (P cos χ ∓ Q sin χ)` with `cos χ`, `sin χ` from
//!   the full-precision `sin x`, `cos x` (χ = x − π/4 or x − 3π/4);
//! - order `n`: the forward recurrence `C_{k+1} = (2k/x) C_k − C_{k−1}` for `Y` and for
//!   `J` when `n ≤ |x|`; Miller's backward recurrence for `J` when `n > |x|`, normalised
//!   by `J0 + 2 (J2 + J4 + …) = 1`.

// `!(x >= y)` is true for NaN on purpose.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

/// The six functions for one float type `$F`, from that type's `fma`, `log`, `sincos`,
/// `rsqrt` and coefficient tables (the `_F32` or `_F64` ones of `bessel_coeffs`), and four
/// thresholds: `small` (below it J0 and J1 are their series), `miller_acc` (the start of
/// Miller's recurrence is `n + √(miller_acc·n)`), `series_below` (below it `Jₙ` is the
/// series' first two terms) and `rescale` (the backward recurrence's overflow guard).
macro_rules! bessel_body {
    ($F:ident, $fma:path, $log:path, $sincos:path, $rsqrt:path,
     tables: $J0:ident $J0B:ident $J0A:ident, $J1:ident $J1B:ident $J1A:ident,
     $Y0:ident $Y0B:ident $Y0A:ident, $Y1:ident $Y1B:ident $Y1A:ident,
     $R0:ident, $R1:ident, $P0:ident, $Q0:ident, $P1:ident, $Q1:ident,
     small: $SMALL:expr, miller_acc: $ACC:expr, series_below: $TINY:expr, rescale: $BIG:expr) => {
        use super::super::bessel_coeffs::*;

        const TWO_OVER_PI: $F = core::$F::consts::FRAC_2_PI;
        /// `1/√π`.
        const INV_SQRT_PI: $F = core::$F::consts::FRAC_2_SQRT_PI * 0.5;

        /// Horner's rule over `c`, one `fma` a step.
        #[inline(always)]
        fn horner(v: $F, c: &[$F]) -> $F {
            let Some((&last, rest)) = c.split_last() else {
                return 0.0;
            };
            let mut acc = last;
            for &ci in rest.iter().rev() {
                acc = $fma(acc, v, ci);
            }
            acc
        }

        /// The piece of `table` that `x` (`0 ≤ x <` the asymptotic threshold, or NaN)
        /// falls in: `((x − z_hi) − z_lo) · P(x − centre)`.
        #[inline(always)]
        fn piece<const W: usize, const N: usize, const B: usize>(
            x: $F,
            table: &[[$F; W]; N],
            breaks: &[$F; B],
        ) -> $F {
            let mut i = 0;
            for &b in breaks {
                if x >= b {
                    i += 1;
                }
            }
            let row = &table[i.min(N - 1)];
            ((x - row[0]) - row[1]) * horner(x - row[2], &row[3..])
        }

        /// `(P(w), Q(x), 1/√(πx), sin x, cos x)` of Hankel's form, `w = 1/x²`, for
        /// finite `x ≥ 7`.
        #[inline(always)]
        fn hankel(x: $F, p: &[$F], q: &[$F]) -> ($F, $F, $F, $F, $F) {
            let w = 1.0 / (x * x);
            let (s, c) = $sincos(x);
            (
                horner(w, p),
                horner(w, q) / x,
                $rsqrt(x) * INV_SQRT_PI,
                s,
                c,
            )
        }

        #[inline(always)]
        pub(in super::super) fn j0(x: $F) -> $F {
            let a = x.abs();
            if a < $SMALL {
                // The series 1 − t/4 + t²/64 − t³/2304, t = x² (the next term is far
                // below an ulp): exactly 1 at 0.
                let t = a * a;
                return $fma(t, $fma(t, $fma(t, -1.0 / 2304.0, 1.0 / 64.0), -0.25), 1.0);
            }
            if !(a >= $J0A) {
                return piece(a, &$J0, &$J0B);
            }
            if a == $F::INFINITY {
                return 0.0;
            }
            let (p, q, k, s, c) = hankel(a, &$P0, &$Q0);
            k * $fma(p + q, c, (p - q) * s)
        }

        #[inline(always)]
        pub(in super::super) fn j1(x: $F) -> $F {
            let a = x.abs();
            let r = if a < $SMALL {
                // (x/2)(1 − t/8 + t²/192 − t³/9216), t = x².
                let (h, t) = (0.5 * a, a * a);
                $fma(
                    h * t,
                    $fma(t, $fma(t, -1.0 / 9216.0, 1.0 / 192.0), -0.125),
                    h,
                )
            } else if !(a >= $J1A) {
                piece(a, &$J1, &$J1B)
            } else if a == $F::INFINITY {
                0.0
            } else {
                let (p, q, k, s, c) = hankel(a, &$P1, &$Q1);
                k * $fma(p + q, s, -((p - q) * c))
            };
            // Odd: J1(−x) = −J1(x), so −0 at −0 (r itself changes sign at the zeros).
            if x.is_sign_negative() {
                -r
            } else {
                r
            }
        }

        #[inline(always)]
        pub(in super::super) fn y0(x: $F) -> $F {
            if !(x > 0.0) {
                return if x == 0.0 { $F::NEG_INFINITY } else { $F::NAN };
            }
            // The logarithmic form up to the first piece (its centre less its half-width).
            if x < $Y0[0][2] * 2.0 - $Y0B[0] {
                return $fma(TWO_OVER_PI * $log(x), j0(x), horner(x * x, &$R0));
            }
            if x < $Y0A {
                return piece(x, &$Y0, &$Y0B);
            }
            if x == $F::INFINITY {
                return 0.0;
            }
            let (p, q, k, s, c) = hankel(x, &$P0, &$Q0);
            k * $fma(p + q, s, -((p - q) * c))
        }

        #[inline(always)]
        pub(in super::super) fn y1(x: $F) -> $F {
            if !(x > 0.0) {
                return if x == 0.0 { $F::NEG_INFINITY } else { $F::NAN };
            }
            if x < $Y1[0][2] * 2.0 - $Y1B[0] {
                let tail = $fma(x, horner(x * x, &$R1), -(TWO_OVER_PI / x));
                return $fma(TWO_OVER_PI * $log(x), j1(x), tail);
            }
            if x < $Y1A {
                return piece(x, &$Y1, &$Y1B);
            }
            if x == $F::INFINITY {
                return 0.0;
            }
            let (p, q, k, s, c) = hankel(x, &$P1, &$Q1);
            -(k * $fma(p + q, c, (p - q) * s))
        }

        #[inline(always)]
        pub(in super::super) fn jn(n: i32, x: $F) -> $F {
            match n {
                i32::MIN..=-1 => return $F::NAN,
                0 => return j0(x),
                1 => return j1(x),
                _ => {}
            }
            let a = x.abs();
            if x.is_nan() {
                return x;
            }
            // J_n(−x) = (−1)^n J_n(x).
            let sign: $F = if x < 0.0 && n & 1 == 1 { -1.0 } else { 1.0 };
            if a == $F::INFINITY || a == 0.0 {
                return sign * 0.0;
            }
            let nf = n as $F;
            if a >= nf {
                // Forward recurrence, stable while k < a.
                let (mut prev, mut cur) = (j0(a), j1(a));
                let two_over_a = 2.0 / a;
                for k in 1..n {
                    let next = $fma((k as $F) * two_over_a, cur, -prev);
                    prev = cur;
                    cur = next;
                }
                return sign * cur;
            }
            if a < $TINY {
                // J_n(a) = (a/2)^n / n! · (1 − (a/2)²/(n+1) + …): two terms.
                let h = 0.5 * a;
                let mut r: $F = 1.0;
                for k in 1..=n {
                    r *= h / (k as $F);
                }
                return sign * $fma(-r, h * h / (nf + 1.0), r);
            }
            // Miller: from an even m well above n down to 0, rescaled on the way.
            let n = n as i64;
            let mut k = 2 * ((n + ($ACC * n as u64).isqrt() as i64) / 2);
            let two_over_a = 2.0 / a;
            let (mut next, mut cur): ($F, $F) = (0.0, 1.0);
            let (mut sum, mut result): ($F, $F) = (0.0, 0.0);
            while k > 0 {
                let prev = $fma((k as $F) * two_over_a, cur, -next);
                next = cur;
                cur = prev;
                if cur.abs() > $BIG {
                    cur *= 1.0 / $BIG;
                    next *= 1.0 / $BIG;
                    sum *= 1.0 / $BIG;
                    result *= 1.0 / $BIG;
                }
                k -= 1;
                if k & 1 == 0 && k > 0 {
                    sum += cur;
                }
                if k == n {
                    result = cur;
                }
            }
            // `cur` is now C·J0 and `sum` C·(J2 + J4 + …).
            sign * (result / $fma(2.0, sum, cur))
        }

        #[inline(always)]
        pub(in super::super) fn yn(n: i32, x: $F) -> $F {
            match n {
                i32::MIN..=-1 => return $F::NAN,
                0 => return y0(x),
                1 => return y1(x),
                _ => {}
            }
            if !(x > 0.0) {
                return if x == 0.0 { $F::NEG_INFINITY } else { $F::NAN };
            }
            if x == $F::INFINITY {
                return 0.0;
            }
            let (mut prev, mut cur) = (y0(x), y1(x));
            let two_over_x = 2.0 / x;
            for k in 1..n {
                if cur.is_infinite() {
                    break;
                }
                let next = $fma((k as $F) * two_over_x, cur, -prev);
                prev = cur;
                cur = next;
            }
            cur
        }
    };
}

mod single {
    use crate::math::{fmaf, logf, rsqrtf, sincosf};
    bessel_body!(f32, fmaf, logf, sincosf, rsqrtf,
        tables: J0_F32 J0_F32_BREAKS J0_F32_ASYMPTOTIC, J1_F32 J1_F32_BREAKS J1_F32_ASYMPTOTIC,
        Y0_F32 Y0_F32_BREAKS Y0_F32_ASYMPTOTIC, Y1_F32 Y1_F32_BREAKS Y1_F32_ASYMPTOTIC,
        R0_F32, R1_F32, P0_F32, Q0_F32, P1_F32, Q1_F32,
        small: 1.0 / 16.0, miller_acc: 40, series_below: 1.0 / 32.0, rescale: 1.0e12);
}

mod double {
    use crate::math::{fma, log, rsqrt, sincos};
    bessel_body!(f64, fma, log, sincos, rsqrt,
        tables: J0_F64 J0_F64_BREAKS J0_F64_ASYMPTOTIC, J1_F64 J1_F64_BREAKS J1_F64_ASYMPTOTIC,
        Y0_F64 Y0_F64_BREAKS Y0_F64_ASYMPTOTIC, Y1_F64 Y1_F64_BREAKS Y1_F64_ASYMPTOTIC,
        R0_F64, R1_F64, P0_F64, Q0_F64, P1_F64, Q1_F64,
        small: 1.0 / 64.0, miller_acc: 160, series_below: 1.0 / 4096.0, rescale: 1.0e100);
}

macro_rules! public {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $t:ty),*) -> $r:ty = $inner:path;)*) => {$(
        $(#[$doc])*
        #[inline]
        pub fn $name($($arg: $t),*) -> $r {
            $inner($($arg),*)
        }
    )*};
}

public! {
    /// The Bessel function of the first kind of order 0, `J₀(x)` (CUDA `j0f`; bound: 9 ulp
    /// for `|x| < 8`, else an absolute error of 2.2e-6). Even; 1 at 0; +0 at ±∞; NaN in,
    /// NaN out. Every target. Source: CUDA Math API `j0f`.
    j0f(x: f32) -> f32 = single::j0;
    /// The Bessel function of the first kind of order 1, `J₁(x)` (CUDA `j1f`; bound: 9 ulp
    /// for `|x| < 8`, else an absolute error of 2.2e-6). Odd; ±0 at ±0 and at ±∞.
    /// Every target. Source: CUDA Math API `j1f`.
    j1f(x: f32) -> f32 = single::j1;
    /// The Bessel function of the first kind of order `n`, `Jₙ(x)` (CUDA `jnf`; bound: an
    /// absolute error of 2.2e-6 for `n = 128`). NaN for `n < 0` (as CUDA); `(−1)ⁿ Jₙ(−x)`
    /// for `x < 0`. Takes O(`n`) steps of a recurrence. Every target. Source: CUDA Math
    /// API `jnf`.
    jnf(n: i32, x: f32) -> f32 = single::jn;
    /// The Bessel function of the second kind of order 0, `Y₀(x)` (CUDA `y0f`; bound: 9 ulp
    /// for `|x| < 8`, else an absolute error of 2.2e-6). −∞ at ±0; NaN for `x < 0`; +0 at
    /// +∞. Every target. Source: CUDA Math API `y0f`.
    y0f(x: f32) -> f32 = single::y0;
    /// The Bessel function of the second kind of order 1, `Y₁(x)` (CUDA `y1f`; bound: 9 ulp
    /// for `|x| < 8`, else an absolute error of 2.2e-6). −∞ at ±0 and as `x` → 0 (it
    /// overflows below about 1.9e-39); NaN for `x < 0`; +0 at +∞. Every target. Source:
    /// CUDA Math API `y1f`.
    y1f(x: f32) -> f32 = single::y1;
    /// The Bessel function of the second kind of order `n`, `Yₙ(x)` (CUDA `ynf`; bound:
    /// `⌈2 + 2.5n⌉` ulp for `|x| < n`, else an absolute error of 2.2e-6). NaN for `n < 0` (as
    /// CUDA) and for `x < 0`; −∞ at ±0 and where it overflows. Takes O(`n`) steps of a
    /// recurrence. Every target. Source: CUDA Math API `ynf`.
    ynf(n: i32, x: f32) -> f32 = single::yn;
    /// `J₀(x)` in `f64` (CUDA `j0`; bound: 7 ulp for `|x| < 8`, else an absolute error of
    /// 5e-12). Special values as [`j0f`]. Every target. Source: CUDA Math API `j0`.
    j0(x: f64) -> f64 = double::j0;
    /// `J₁(x)` in `f64` (CUDA `j1`; bound: 7 ulp for `|x| < 8`, else an absolute error of
    /// 5e-12). Special values as [`j1f`]. Every target. Source: CUDA Math API `j1`.
    j1(x: f64) -> f64 = double::j1;
    /// `Jₙ(x)` in `f64` (CUDA `jn`; bound: an absolute error of 5e-12 for `n = 128`).
    /// Special values as [`jnf`]. Every target. Source: CUDA Math API `jn`.
    jn(n: i32, x: f64) -> f64 = double::jn;
    /// `Y₀(x)` in `f64` (CUDA `y0`; bound: 7 ulp for `|x| < 8`, else an absolute error of
    /// 5e-12). Special values as [`y0f`]. Every target. Source: CUDA Math API `y0`.
    y0(x: f64) -> f64 = double::y0;
    /// `Y₁(x)` in `f64` (CUDA `y1`; bound: 7 ulp for `|x| < 8`, else an absolute error of
    /// 5e-12). Special values as [`y1f`] (overflow below about 3.5e-309). Every target.
    /// Source: CUDA Math API `y1`.
    y1(x: f64) -> f64 = double::y1;
    /// `Yₙ(x)` in `f64` (CUDA `yn`; bound: an absolute error of 5e-12 for `|x| > 1.5n`).
    /// Special values as [`ynf`]. Every target. Source: CUDA Math API `yn`.
    yn(n: i32, x: f64) -> f64 = double::yn;
}
