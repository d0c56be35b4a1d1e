//! The arithmetic every `f32` module builds on: Horner's rule ([`poly`]), head-and-tail
//! pairs (Fast2Sum, products with their FMA error), exact powers of two and scaling by
//! them, rounding to an integer without a conversion, and rough reciprocals for
//! correction terms.

use crate::math::prim::fmaf;

// RECIP_P: 1/m on [1, 2]; relative error 2^-6.6 (a start for Newton's method).
const RECIP_P: [f32; 3] = [2.121_212_2, -1.454_545_5, 0.323_232_3];

/// `c[0] + c[1] x + … + c[N-1] x^(N-1)` by Horner's rule with FMAs.
#[inline(always)]
pub(super) fn poly<const N: usize>(x: f32, c: &[f32; N]) -> f32 {
    let mut acc = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        acc = fmaf(acc, x, c[i]);
    }
    acc
}

/// `c[1] + c[2] x + … + c[N-1] x^(N-2)`: [`poly`] without its constant term.
#[inline(always)]
pub(super) fn poly_from1<const N: usize>(x: f32, c: &[f32; N]) -> f32 {
    let mut acc = c[N - 1];
    let mut i = N - 1;
    while i > 1 {
        i -= 1;
        acc = fmaf(acc, x, c[i]);
    }
    acc
}

/// `2^k` for `k` in -126..=127.
#[inline(always)]
pub(super) fn pow2i(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// `2^k · (1 + em)`, for `k` in -252..=254: `2^k1·(1 + em)` rounded once, then times
/// `2^k2` (`k1 + k2 = k`, both normal powers), exact unless the result is subnormal
/// (then rounded a second time: at most 2^-25 ulp more) or overflows. No branches.
#[inline(always)]
pub(super) fn scale_1p(k: i32, em: f32) -> f32 {
    let k1 = k >> 1;
    let t1 = pow2i(k1);
    fmaf(t1, em, t1) * pow2i(k - k1)
}

/// `2^k · (1 + em)` as [`scale_1p`], `k` given as the bits of [`round_magic`]'s sum
/// (`b` = MAGIC's bits + `k`): MAGIC's bits are even and leave nothing when shifted
/// by 23, so `2^(k>>1)` and `2^(k - (k>>1))` come from `b` without first taking `k`.
#[inline(always)]
pub(super) fn scale_1p_bits(b: u32, em: f32) -> f32 {
    let h = b >> 1; // MAGIC/2 + (k >> 1)
    let t1 = f32::from_bits((h << 23).wrapping_add(0x3f80_0000));
    let t2 = f32::from_bits((b.wrapping_sub(h) << 23).wrapping_add(0x3f80_0000));
    fmaf(t1, em, t1) * t2
}

/// [`round_magic`] with the integer left as the bits of the sum (for
/// [`scale_1p_bits`]).
#[inline(always)]
pub(super) fn round_magic_bits(x: f32) -> (f32, u32) {
    const MAGIC: f32 = 12_582_912.0; // 1.5·2^23
    let big = x + MAGIC;
    (big - MAGIC, big.to_bits())
}

/// `rint(x)` for `|x| < 2^22` as a float and as an integer, by the 1.5·2^23 trick: no
/// conversion instruction (and no saturation checks); a NaN `x` gives NaN and any
/// integer.
#[inline(always)]
pub(super) fn round_magic(x: f32) -> (f32, i32) {
    const MAGIC: f32 = 12_582_912.0; // 1.5·2^23
    let big = x + MAGIC;
    (
        big - MAGIC,
        big.to_bits().wrapping_sub(MAGIC.to_bits()) as i32,
    )
}

/// `a + b` as head and exact tail, for `|a| >= |b|` or `a == 0`.
#[inline(always)]
pub(super) fn fast_two_sum(a: f32, b: f32) -> (f32, f32) {
    let s = a + b;
    (s, (a - s) + b)
}

/// `(h + l)·(ch + cl)` as head and tail.
#[inline(always)]
pub(super) fn mul_dd(h: f32, l: f32, ch: f32, cl: f32) -> (f32, f32) {
    let ph = h * ch;
    let pl = fmaf(h, ch, -ph) + fmaf(h, cl, l * ch);
    (ph, pl)
}

/// `1/x` to about 2^-16 relative, for normal positive `x` below 2^125: an integer
/// seed and two Newton steps, all FMA (no division, no approximate instruction, so the
/// same bits everywhere). For correction terms that need only a few bits.
#[inline(always)]
pub(super) fn recip_rough(x: f32) -> f32 {
    let y = f32::from_bits(0x7ef3_11c3u32.wrapping_sub(x.to_bits()));
    let y = y * fmaf(-x, y, 2.0);
    y * fmaf(-x, y, 2.0)
}

/// `1/m` for `m` in [1, 2) to within 2^-23 relative: a quadratic start (RECIP_P,
/// 2^-6.6) and two Newton steps, all FMA.
#[inline(always)]
pub(in crate::math) fn recip_1_2(m: f32) -> f32 {
    let y = poly(m, &RECIP_P);
    let y = fmaf(y, fmaf(-m, y, 1.0), y);
    fmaf(y, fmaf(-m, y, 1.0), y)
}
