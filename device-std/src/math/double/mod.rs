//! `f64` functions under the CUDA Math API's double-precision names (`sin`, `exp`,
//! `pow`, …), written from `+ - * /`, bit operations and [`prim`](super::prim)'s
//! correctly rounded `fma`, `sqrt` and rounding functions only, so the GPU, the
//! emulator and a host test give the same bits.
//!
//! Shape: a Cody–Waite or exact reduction, one table-free polynomial, a few
//! double-double (`hi + lo`) steps where the last bits need them, and a rarely taken
//! path for special or huge inputs (Payne–Hanek reduction for `sin`/`cos`/`tan` of
//! `|x| ≥ 2^30`, the integer long division of `fmod`/`remainder`).
//!
//! Polynomial coefficients come from `scripts/math_coeffs_f64.py` (Chebyshev
//! interpolation at 60 digits with mpmath; each table, beside the functions that use
//! it, names its entry). The "measured" error in each docstring is the largest seen
//! against mpmath at 120 bits by `device-std/tests/math_f64_accuracy.py` on random and
//! hard-case inputs; the CUDA bound is from the CUDA C++ Programming Guide,
//! "Mathematical Functions", double-precision table.
//!
//! | module | functions |
//! |---|---|
//! | `basic` | rounding, sign, min/max, `ldexp`, `frexp`, `ilogb`, `nextafter`, `nan`, … |
//! | `remainder` | `fmod`, `remainder`, `remquo` |
//! | `exp_log` | `exp`, `exp2`, `exp10`, `expm1`, `log`, `log2`, `log10`, `log1p`, `pow`, `powi` |
//! | `roots` | `sqrt`, `rsqrt`, `cbrt`, `rcbrt`, `hypot`, `norm3d`, `norm4d`, `norm`, their reciprocals |
//! | `trig` | `sin`, `cos`, `sincos`, `tan`, `sinpi`, `cospi`, `sincospi` |
//! | `inverse_trig` | `atan`, `atan2`, `asin`, `acos` |
//! | `hyperbolic` | `sinh`, `cosh`, `tanh`, `asinh`, `acosh`, `atanh` |
//! | `erf` | `erf`, `erfc`, `erfcx`, `normcdf` |
//! | `erfinv` | `erfinv`, `erfcinv`, `normcdfinv` |
//! | `bessel_i` | `cyl_bessel_i0`, `cyl_bessel_i1` |
//! | `gamma` | `lgamma`, `tgamma` |
//!
//! Beneath them `arith` (TwoSum, Fast2Sum, double-double products, powers of two,
//! Horner's rule) and `consts` (the constants several modules share).

// `x - x` is the NaN of an infinite argument; `!(x < y)` is true for NaN on purpose.
#![allow(clippy::eq_op, clippy::neg_cmp_op_on_partial_ord)]

mod arith;
mod basic;
mod bessel_i;
mod consts;
mod erf;
mod erfinv;
mod exp_log;
mod gamma;
mod hyperbolic;
mod inverse_trig;
mod remainder;
mod roots;
mod trig;

pub use basic::*;
pub use bessel_i::*;
pub use erf::*;
pub use erfinv::*;
pub use exp_log::*;
pub use gamma::*;
pub use hyperbolic::*;
pub use inverse_trig::*;
pub use remainder::*;
pub use roots::*;
pub use trig::*;
