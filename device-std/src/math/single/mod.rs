//! The `f32` functions, under CUDA's names (`sinf`, `expf`, …).
//!
//! Built from `f32` arithmetic only (no `f64` anywhere: consumer GPUs run it at 1/32
//! to 1/64 of the `f32` rate), the correctly rounded primitives of [`prim`](super::prim)
//! and integer bit operations, so every function gives the same bits on the GPU and
//! the host. Extra precision comes from pairs of `f32` (a head and a tail, summed
//! with Fast2Sum / the exact FMA product error). Polynomial coefficients are minimax
//! fits from `remez.py` in `math/`, named by their table, which sits beside the
//! functions that use it.
//!
//! | module | functions |
//! |---|---|
//! | `basic` | rounding, sign, min/max, `ldexpf`, `frexpf`, `ilogbf`, `nextafterf`, `nanf`, … |
//! | `remainder` | `fmodf`, `remainderf`, `remquof` |
//! | `exp_log` | `expf`, `exp2f`, `exp10f`, `expm1f`, `logf`, `log2f`, `log10f`, `log1pf`, `powf`, `powif` |
//! | `roots` | `sqrtf`, `rsqrtf`, `cbrtf`, `rcbrtf`, `hypotf`, `norm3df`, `norm4df`, `normf`, their reciprocals |
//! | `trig` | `sinf`, `cosf`, `sincosf`, `tanf`, `sinpif`, `cospif`, `sincospif` |
//! | `inverse_trig` | `atanf`, `atan2f`, `asinf`, `acosf` |
//! | `hyperbolic` | `sinhf`, `coshf`, `tanhf`, `asinhf`, `acoshf`, `atanhf` |
//! | `erf` | `erff`, `erfcf`, `erfcxf`, `normcdff` |
//! | `erfinv` | `erfinvf`, `erfcinvf`, `normcdfinvf` |
//! | `bessel_i` | `cyl_bessel_i0f`, `cyl_bessel_i1f` |
//! | `gamma` | `lgammaf`, `tgammaf` |
//!
//! Beneath them `arith` (Horner's rule, head-and-tail steps, powers of two) and
//! `consts` (the constants several modules share).

// Coefficients are written as remez.py prints them; `x - x` is the NaN of an infinite
// argument; `!(x < y)` is true for NaN on purpose.
#![allow(
    clippy::excessive_precision,
    clippy::eq_op,
    clippy::neg_cmp_op_on_partial_ord
)]

pub(in crate::math) mod arith;
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
