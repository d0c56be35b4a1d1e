//! Constants shared by several `f32` modules, each the `f32` nearest the value and a
//! `_LO` tail the `f32` nearest the rest.

/// ln 2 with 16 significant bits, so `e * LN2_HI` is exact for any exponent `e`.
pub(super) const LN2_HI: f32 = f32::from_bits(0x3f31_7200);
pub(super) const LN2_HI_LO: f32 = f32::from_bits(0x35bf_be8e);
pub(super) const LN2: f32 = f32::from_bits(0x3f31_7218);
pub(super) const LN2_LO: f32 = f32::from_bits(0xb102_e308);
pub(super) const INV_LN2: f32 = f32::from_bits(0x3fb8_aa3b);

pub(super) const PI: f32 = f32::from_bits(0x4049_0fdb);
pub(super) const PI_LO: f32 = f32::from_bits(0xb3bb_bd2e);
pub(super) const PIO2: f32 = f32::from_bits(0x3fc9_0fdb);
pub(super) const PIO2_LO: f32 = f32::from_bits(0xb33b_bd2e);
