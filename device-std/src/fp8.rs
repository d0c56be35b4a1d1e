//! 8-bit floats (FP8) and their conversions, sm_89: [`F8E4M3`] (sign, 4 exponent bits,
//! 3 mantissa bits, largest finite ±448, no infinities, NaN `0x7F`/`0xFF`) and
//! [`F8E5M2`] (sign, 5 exponent bits, 2 mantissa bits, largest finite ±57344, IEEE-style
//! infinities and NaNs), the OCP FP8 formats CUDA calls `__nv_fp8_e4m3` and
//! `__nv_fp8_e5m2`. The types come from the `float8` crate (`no_std`), the ones cudarc's
//! `f8` feature implements `DeviceRepr` for; they are plain data with value classes of
//! their own ([`ValueClass::Float8E4M3`](crate::ValueClass::Float8E4M3),
//! [`Float8E5M2`](crate::ValueClass::Float8E5M2)).
//!
//! | here | PTX (PTX ISA 9.0 §9.7.9.21 "cvt") |
//! |---|---|
//! | [`Fp8::pack2`] | `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32` (sm_89, PTX 7.8) |
//! | [`Fp8::unpack2`] | `cvt.rn.f16x2.{e4m3x2,e5m2x2}` then `cvt.f32.f16` (sm_89, PTX 7.8) |
//!
//! Conversions to FP8 round to nearest even and saturate: a finite value beyond the
//! largest finite one becomes it (±448, ±57344), an infinity too (CUDA's
//! `__NV_SATFINITE`), a NaN stays a NaN. The type's own `from_f32` computes the same
//! bits in software (CUDA's host path, `cuda_fp8.hpp`); [`Fp8::pack2`] is the one
//! instruction for two values. Every FP8 value is exact in `f16` and `f32`, so the
//! conversions back are exact.
//!
//! Off the GPU (host code, the emulator) both directions are the `float8` crate's
//! conversions.

pub use float8::{F8E4M3, F8E5M2};

/// An FP8 element type: [`F8E4M3`] or [`F8E5M2`]. Sealed.
pub trait Fp8: Copy + sealed::Sealed {
    /// The PTX type name (`"e4m3"`, `"e5m2"`).
    const PTX: &'static str;

    /// `lo` and `hi` as two FP8 values in one `u16`, `lo` in the low byte: round to
    /// nearest even, saturating to the largest finite value; NaN stays NaN
    /// (`cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`, sm_89).
    fn pack2(lo: f32, hi: f32) -> u16;

    /// The two FP8 values in `bits` (low byte first) as `f32`, exactly
    /// (`cvt.rn.f16x2.{e4m3x2,e5m2x2}`, sm_89).
    fn unpack2(bits: u16) -> [f32; 2];

    /// Four values as four FP8 bytes in one `u32`, `v[0]` in the low byte: two
    /// [`pack2`](Self::pack2)s. Ready for one 4-byte store.
    #[inline(always)]
    fn pack4(v: [f32; 4]) -> u32 {
        u32::from(Self::pack2(v[0], v[1])) | u32::from(Self::pack2(v[2], v[3])) << 16
    }

    /// The element's bits.
    fn to_bits(self) -> u8;

    /// The element from its bits (every byte is a value).
    fn from_bits(bits: u8) -> Self;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::F8E4M3 {}
    impl Sealed for super::F8E5M2 {}
}

/// [`Fp8`] for one type: `$x2` the PTX pair type.
macro_rules! fp8_type {
    ($t:ty, $name:literal, $x2:literal) => {
        impl Fp8 for $t {
            const PTX: &'static str = $name;

            #[inline(always)]
            fn pack2(lo: f32, hi: f32) -> u16 {
                #[cfg(target_arch = "nvptx64")]
                {
                    let out: u16;
                    // SAFETY: a conversion between registers (`a` to the upper half).
                    unsafe {
                        core::arch::asm!(
                            concat!("cvt.rn.satfinite.", $x2, ".f32 {d}, {hi}, {lo};"),
                            d = out(reg16) out, hi = in(reg32) hi, lo = in(reg32) lo,
                            options(pure, nomem, nostack, preserves_flags),
                        )
                    };
                    out
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    u16::from(<$t>::from_f32(lo).to_bits())
                        | u16::from(<$t>::from_f32(hi).to_bits()) << 8
                }
            }

            #[inline(always)]
            fn unpack2(bits: u16) -> [f32; 2] {
                #[cfg(target_arch = "nvptx64")]
                {
                    let (lo, hi): (f32, f32);
                    // SAFETY: conversions between registers.
                    unsafe {
                        core::arch::asm!(
                            "{{",
                            ".reg .b32 h2;",
                            ".reg .b16 l, h;",
                            concat!("cvt.rn.f16x2.", $x2, " h2, {b};"),
                            "mov.b32 {{l, h}}, h2;",
                            "cvt.f32.f16 {lo}, l;",
                            "cvt.f32.f16 {hi}, h;",
                            "}}",
                            b = in(reg16) bits, lo = out(reg32) lo, hi = out(reg32) hi,
                            options(pure, nomem, nostack, preserves_flags),
                        )
                    };
                    [lo, hi]
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    [
                        <$t>::from_bits(bits as u8).to_f32(),
                        <$t>::from_bits((bits >> 8) as u8).to_f32(),
                    ]
                }
            }

            #[inline(always)]
            fn to_bits(self) -> u8 {
                <$t>::to_bits(&self)
            }

            #[inline(always)]
            fn from_bits(bits: u8) -> Self {
                <$t>::from_bits(bits)
            }
        }
    };
}
fp8_type!(F8E4M3, "e4m3", "e4m3x2");
fp8_type!(F8E5M2, "e5m2", "e5m2x2");

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;

    #[test]
    fn pack_rounds_saturates_and_orders_bytes() {
        // 1.0 is 0x38 in e4m3 (bias 7) and 0x3C in e5m2 (bias 15); lo in the low byte.
        assert_eq!(F8E4M3::pack2(1.0, -2.0), 0xC0_38);
        assert_eq!(F8E5M2::pack2(1.0, -2.0), 0xC0_3C);
        // Saturation: beyond the largest finite value, infinities included.
        assert_eq!(F8E4M3::pack2(1e6, f32::NEG_INFINITY), 0xFE_7E);
        assert_eq!(F8E5M2::pack2(1e6, f32::INFINITY), 0x7B_7B);
        // Ties to even: 1.0625 lies halfway between 1.0 and 1.125 (e4m3's spacing 1/8).
        assert_eq!(F8E4M3::pack2(1.0625, 1.1875), 0x3A_38);
        assert!(F8E4M3::unpack2(F8E4M3::pack2(f32::NAN, 0.0))[0].is_nan());
        assert_eq!(F8E4M3::pack4([1.0, 2.0, 0.5, -0.0]), 0x80_30_40_38);
    }

    #[test]
    fn every_value_round_trips() {
        for bits in 0..=u16::MAX {
            for (v, byte) in F8E4M3::unpack2(bits).into_iter().zip(bits.to_le_bytes()) {
                if v.is_nan() {
                    assert_eq!(byte & 0x7F, 0x7F, "{byte:#04x}");
                } else {
                    // The value is exact, so converting it back gives the same byte.
                    assert_eq!(F8E4M3::from_f32(v).to_bits(), byte, "{byte:#04x} = {v}");
                }
            }
            for (v, byte) in F8E5M2::unpack2(bits).into_iter().zip(bits.to_le_bytes()) {
                if !v.is_nan() && v.is_finite() {
                    assert_eq!(F8E5M2::from_f32(v).to_bits(), byte, "{byte:#04x} = {v}");
                }
            }
        }
    }
}
