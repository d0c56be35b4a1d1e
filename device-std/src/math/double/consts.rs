//! Constants shared by several `f64` modules: head-and-tail splits of ln 2, π/2, π and
//! others (a head the `f64` nearest the value, a tail the `f64` nearest the rest), and
//! the thresholds more than one module tests.

pub(super) const TWO54: f64 = 18014398509481984.0;

pub(super) const MANT: u64 = (1 << 52) - 1;

pub(super) const LN2_H: f64 = core::f64::consts::LN_2;
pub(super) const LN2_L: f64 = 2.3190468138462996e-17;

pub(super) const PIO2_H: f64 = core::f64::consts::FRAC_PI_2;
pub(super) const PIO2_M: f64 = 6.123233995736766e-17;

pub(super) const PI_H: f64 = core::f64::consts::PI;
pub(super) const PI_L: f64 = 1.2246467991473532e-16;

/// 1.5·2^52: `(v + ROUND_MAGIC) - ROUND_MAGIC` is `v` rounded to an integer (ties to
/// even) for `|v| < 2^51`, and the low bits of the sum hold it as an integer.
pub(super) const ROUND_MAGIC: f64 = 6755399441055744.0;

/// `x` rounds to this and below for `sin`, `tan`, `asin`, … (2^-27).
pub(super) const TINY: f64 = 7.450580596923828e-9;
