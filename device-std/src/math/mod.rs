//! The CUDA Math API for `f32` and `f64`, in Rust, the same bits on the GPU and
//! on the host.
//!
//! - Free functions under CUDA's names: `sinf`/`sin`, `expf`/`exp`, `rsqrtf`/`rsqrt`,
//!   `sinpif`/`sinpi`, `erff`/`erf`, … (CUDA Math API, "Single Precision Mathematical
//!   Functions" and "Double Precision Mathematical Functions"): the `f` suffix is the
//!   `f32` version.
//! - Std's method names through [`FloatMath`] (in [`prelude`](crate::prelude)):
//!   `x.sin()`, `x.sqrt()`, `x.powf(y)`, `x.ln_1p()`, … on `f32` and `f64`, with std's
//!   documented semantics, so code shared with the host reads as it does with std.
//! - CUDA's fast intrinsics (`__sinf`, `__expf`, `__fdividef`, `tanh.approx`, …) live
//!   apart in [`fast`], under names that say so; nothing else uses an approximate
//!   instruction.
//!
//! # One implementation everywhere
//!
//! Every function is written in Rust from a handful of operations IEEE 754 rounds
//! correctly: `+ - * /`, fused multiply-add, square root and the rounding functions
//! (`prim`: one PTX instruction each on the GPU — rustc emits `add.rn`, `mul.rn`,
//! `fma.rn`, `div.rn`, `sqrt.rn`, whose explicit rounding keeps ptxas from fusing
//! anything — and the `libm` crate's correctly rounded versions on the host). So a
//! function gives the same bits on the GPU, under the emulator and in a host test.
//! The `f32` functions use no `f64` arithmetic (consumer GPUs run `f64` at 1/32 to
//! 1/64 of the `f32` rate); extra precision comes from pairs of `f32` where needed.
//!
//! Special values follow CUDA's full-precision functions (and C99 Annex F): NaN in,
//! NaN out; ±∞ and ±0 where the standard puts them; subnormal inputs and results are
//! kept, never flushed; nothing panics or traps.
//!
//! **Method syntax under the emulator.** Rust prefers an inherent method over a trait
//! method, and a host build that links `std` anywhere in its crate graph (the emulator
//! does) sees std's own `f32::sin`. There `x.sin()` is std's (the host C library's),
//! not this module's, and can differ from the GPU in the last bits. Where the
//! emulator must match the GPU bit for bit, call the free function (`math::sinf(x)`)
//! or the trait by path (`FloatMath::sin(x)`): on the GPU all three are the same code.
//!
//! # Accuracy
//!
//! Maximum errors in ulps, measured on an H100 against a correctly rounded reference
//! (every `f32` input for unary `f32` functions), are in `BENCHMARKS.md` ("Math"),
//! each beside CUDA's documented bound (CUDA C++ Programming Guide, "Mathematical
//! Functions" appendix). The functions each docstring calls exact have no error.
//!
//! Source: CUDA Math API 13.0 (names, special values, bounds); PTX ISA 9.0 §9.7.3
//! (the instructions).

mod double;
pub mod fast;
mod float;
pub mod prim;
mod single;

pub use double::*;
pub use float::FloatMath;
pub use single::*;

/// `a * b + c` with one rounding (`fma.rn.f32`, PTX ISA 9.0 §9.7.3.6; CUDA `fmaf`).
/// Exact as IEEE 754 defines it (one rounding). Every target.
#[inline(always)]
pub fn fmaf(a: f32, b: f32, c: f32) -> f32 {
    prim::fmaf(a, b, c)
}

/// `a * b + c` with one rounding (`fma.rn.f64`; CUDA `fma`). Every target.
#[inline(always)]
pub fn fma(a: f64, b: f64, c: f64) -> f64 {
    prim::fma(a, b, c)
}
