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
//! Maximum errors in ulps of the exact result, beside CUDA's documented bounds (CUDA C++
//! Programming Guide, "Mathematical Functions" appendix, which counts from the correctly
//! rounded result). `f32`: every one of the 2^32 inputs on an H100 (`benches/math`),
//! against CUDA's `f64` function. `f64`: the host
//! against mpmath on ~20k–40k inputs each, hard cases included
//! (`tests/math_f64_accuracy.py`); for `exp`, `exp2`, `exp10`, `log`, `log2`, `log10`,
//! `sin`, `cos`, `asin`, `acos`, `atan` and `hypot`, the worst of that and of 10^7–10^8
//! further random and boundary inputs against a double-double reference, the maxima
//! confirmed with mpmath (2026-12-06). Exact (0 ulp): `sqrtf`/`sqrt`, `fmodf`/`fmod`,
//! `remainderf`/`remainder`, `remquof`/`remquo`, `fdimf`/`fdim`, the rounding functions
//! (`lrint`, `llrint`, `lround`, `llround` too), `frexp`, `ldexp`, `scalbn`, `scalbln`,
//! `ilogb`, `logb`, `modf`, `nextafter`, `fma`, `nan`. The norms of vectors of any
//! length, `normf`/`norm` and `rnormf`/`rnorm` (a slice where CUDA takes `dim` and a
//! pointer), carry the rounding of their sums, for which CUDA documents no bound. Details and
//! speed against nvcc: `BENCHMARKS.md`, "Math library, every function".
//!
//! | function (`f32` / `f64`) | `f32` max ulp | CUDA `f32` bound | `f64` max ulp | CUDA `f64` bound |
//! |---|---|---|---|---|
//! | `sqrtf` / `sqrt` | 0.500 | 0 | 0.500 | 0 |
//! | `cbrtf` / `cbrt` | 0.514 | 1 | 0.586 | 1 |
//! | `rcbrtf` / `rcbrt` | 0.503 | 1 | 0.500 | 1 |
//! | `rsqrtf` / `rsqrt` | 0.748 | 2 | 0.500 | 1 |
//! | `expf` / `exp` | 0.979 | 2 | 0.896 | 1 |
//! | `exp2f` / `exp2` | 1.021 | 2 | 0.898 | 1 |
//! | `exp10f` / `exp10` | 1.211 | 2 | 0.920 | 1 |
//! | `expm1f` / `expm1` | 0.854 | 1 | 0.633 | 1 |
//! | `logf` / `log` | 0.945 | 1 | 0.545 | 1 |
//! | `log2f` / `log2` | 0.977 | 1 | 0.573 | 1 |
//! | `log10f` / `log10` | 0.960 | 2 | 0.543 | 1 |
//! | `log1pf` / `log1p` | 1.021 | 1 | 0.500 | 1 |
//! | `sinf` / `sin` | 0.883 | 2 | 0.726 | 2 |
//! | `cosf` / `cos` | 0.881 | 2 | 0.750 | 2 |
//! | `tanf` / `tan` | 1.961 | 4 | 0.820 | 2 |
//! | `sinpif` / `sinpi` | 0.874 | 1 | 0.901 | 2 |
//! | `cospif` / `cospi` | 0.874 | 1 | 0.643 | 2 |
//! | `asinf` / `asin` | 0.640 | 2 | 0.678 | 2 |
//! | `acosf` / `acos` | 0.614 | 2 | 0.649 | 2 |
//! | `atanf` / `atan` | 1.213 | 2 | 1.081 | 2 |
//! | `atan2f` / `atan2` | 1.543 | 3 | 0.664 | 2 |
//! | `sinhf` / `sinh` | 1.619 | 3 | 0.582 | 2 |
//! | `coshf` / `cosh` | 1.446 | 2 | 0.590 | 1 |
//! | `tanhf` / `tanh` | 1.057 | 2 | 0.624 | 1 |
//! | `asinhf` / `asinh` | 1.903 | 3 | 0.500 | 3 |
//! | `acoshf` / `acosh` | 2.124 | 4 | 0.500 | 3 |
//! | `atanhf` / `atanh` | 2.112 | 3 | 0.500 | 2 |
//! | `erff` / `erf` | 1.271 | 2 | 0.785 | 2 |
//! | `erfcf` / `erfc` | 3.567 | 4 | 2.136 | 5 |
//! | `normcdff` / `normcdf` | 4.139 | 5 | 2.033 | 5 |
//! | `erfinvf` / `erfinv` | 1.372 | 2 | 2.112 | 5 |
//! | `erfcinvf` / `erfcinv` | 2.810 | 4 | 1.968 | 6 |
//! | `normcdfinvf` / `normcdfinv` | 2.733 | 5 | 2.507 | 8 |
//! | `erfcxf` / `erfcx` | 2.418 | 4 | 1.984 | 4 |
//! | `cyl_bessel_i0f` / `cyl_bessel_i0` | 4.636 | 6 | 4.842 | 6 |
//! | `cyl_bessel_i1f` / `cyl_bessel_i1` | 4.905 | 6 | 4.680 | 6 |
//! | `j0f` / `j0` (`\|x\| < 8`²) | 5.240 | 9 | 3.522 | 7 |
//! | `j1f` / `j1` (`\|x\| < 8`²) | 2.238 | 9 | 2.406 | 7 |
//! | `y0f` / `y0` (`x < 8`²) | 5.278 | 9 | 2.562 | 7 |
//! | `y1f` / `y1` (`x < 8`²) | 4.643 | 9 | 3.625 | 7 |
//! | `lgammaf` / `lgamma` (outside CUDA's unbounded interval¹) | 4.823 | 6 | 2.317 | 4 |
//! | `tgammaf` / `tgamma` | 3.950 | 5 | 3.265 | 10 |
//! | `powf` / `pow` | 0.796 | 4 | 1.116 | 2 |
//! | `hypotf` / `hypot` | 1.027 | 3 | 0.750 | 2 |
//!
//! ¹ `lgamma` has zeros between its negative poles; CUDA documents no bound inside
//! [−10.001, −2.264] (`f32`) and [−23.0001, −2.2637] (`f64`), nor do we.
//!
//! ² Above 8 CUDA bounds the Bessel functions absolutely (2.2e-6 for `f32`, 5e-12 for
//! `f64`): ours stay below 8e-8 and 1e-15 there (`tests/math_bessel.rs`, mpmath).
//! `jnf`/`jn` are bounded absolutely (ours: 5.7e-7 at n = 128 for `f32`; 10.2 ulp for
//! `jnf(5, x)` over every `f32` in [2^-80, 5)); `ynf` by ⌈2 + 2.5n⌉ ulp below `x = n`
//! (ours: 8.95 at n = 5 over every `f32`, 108.6 at n = 128 sampled).
//!
//! Source: CUDA Math API 13.0 (names, special values, bounds); PTX ISA 9.0 §9.7.3
//! (the instructions).

mod bessel;
mod bessel_coeffs;
mod double;
pub mod fast;
mod float;
pub mod prim;
mod single;

pub use bessel::*;
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
