//! CUDA's fast intrinsics: one approximate hardware instruction each (or two),
//! with the error bounds the PTX ISA gives, what `-use_fast_math` turns the
//! full-precision functions into. Nothing outside this module uses them.
//!
//! | function | CUDA | PTX (ISA 9.0 §9.7.3) | error (PTX ISA) |
//! |---|---|---|---|
//! | [`sinf`], [`cosf`] | `__sinf`, `__cosf` | `sin.approx.f32`, `cos.approx.f32` | 2^-20.5 absolute on −100π..100π; grows outside |
//! | [`tanf`] | `__tanf` | `sin.approx` / `cos.approx` (`div.approx`) | that of the quotient; large near the poles |
//! | [`exp2f`] | `exp2f` with `-use_fast_math` | `ex2.approx.ftz.f32` | 2^-22 relative; subnormals flushed |
//! | [`expf`], [`exp10f`] | `__expf`, `__exp10f` | `ex2.approx.ftz.f32` of `x·log2(e)`, `x·log2(10)` | 2^-22 relative plus about `\|x\|·2^-24` from the product |
//! | [`log2f`] | `__log2f` | `lg2.approx.f32` | 2^-22 absolute |
//! | [`logf`], [`log10f`] | `__logf`, `__log10f` | `lg2.approx.f32` times a constant | 2^-22 absolute, scaled |
//! | [`powf`] | `__powf` | `ex2.approx(y · lg2.approx(x))` | grows with `\|y·log2 x\|` |
//! | [`fdividef`] | `__fdividef` | `div.approx.f32` | 2 ulp for `\|y\|` in 2^-126..2^126; 0 for larger `\|y\|` |
//! | [`tanhf`] | `tanh.approx` (`__tanhf`) | `tanh.approx.f32` (sm_75) | 2^-10.987 relative |
//! | [`rsqrtf`] | `rsqrt.approx` | `rsqrt.approx.f32` | 2^-22.9 relative |
//! | [`rcpf`] | `rcp.approx` | `rcp.approx.f32` | 1 ulp |
//!
//! Under the emulator (and in any host build) each computes the full-precision
//! function of [`math`](super) instead, so results there differ from the GPU's in
//! the last bits; [`exp2f`], [`expf`] and [`exp10f`] also flush subnormals as the
//! GPU does.

#[cfg(target_arch = "nvptx64")]
macro_rules! approx {
    ($op:literal, $($x:ident),+) => {{
        let r: f32;
        // SAFETY: a pure arithmetic instruction on registers.
        unsafe {
            core::arch::asm!(
                concat!($op, " {r}, ", approx!(@ops $($x),+), ";"),
                r = out(reg32) r,
                $($x = in(reg32) $x,)+
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        r
    }};
    (@ops $a:ident) => { concat!("{", stringify!($a), "}") };
    (@ops $a:ident, $b:ident) => { concat!("{", stringify!($a), "}, {", stringify!($b), "}") };
}

/// Flushes a subnormal `x` to zero of the same sign, as `.ftz` does.
#[cfg(not(target_arch = "nvptx64"))]
fn ftz(x: f32) -> f32 {
    if x.is_subnormal() {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// `sin(x)`, `x` in radians (`__sinf`: `sin.approx.f32`; absolute error 2^-20.5 on
/// −100π..100π). Every target.
#[inline(always)]
pub fn sinf(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return approx!("sin.approx.f32", x);
    #[cfg(not(target_arch = "nvptx64"))]
    super::sinf(x)
}

/// `cos(x)`, `x` in radians (`__cosf`: `cos.approx.f32`; absolute error 2^-20.5 on
/// −100π..100π). Every target.
#[inline(always)]
pub fn cosf(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return approx!("cos.approx.f32", x);
    #[cfg(not(target_arch = "nvptx64"))]
    super::cosf(x)
}

/// `tan(x)` as [`sinf`]`(x)` [`fdividef`] [`cosf`]`(x)` (`__tanf`). Every target.
#[inline(always)]
pub fn tanf(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return fdividef(sinf(x), cosf(x));
    #[cfg(not(target_arch = "nvptx64"))]
    super::tanf(x)
}

/// `2^x` (`ex2.approx.ftz.f32`: relative error 2^-22; subnormal inputs and results
/// flushed to zero). Every target.
#[inline(always)]
pub fn exp2f(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return approx!("ex2.approx.ftz.f32", x);
    #[cfg(not(target_arch = "nvptx64"))]
    ftz(super::exp2f(ftz(x)))
}

/// `e^x` as `2^(x·log2 e)` (`__expf`). The rounding of the product adds a relative
/// error of about `|x|·2^-24` to [`exp2f`]'s. Every target.
#[inline(always)]
pub fn expf(x: f32) -> f32 {
    exp2f(x * core::f32::consts::LOG2_E)
}

/// `10^x` as `2^(x·log2 10)` (`__exp10f`); errors as [`expf`]. Every target.
#[inline(always)]
pub fn exp10f(x: f32) -> f32 {
    exp2f(x * core::f32::consts::LOG2_10)
}

/// `log2(x)` (`__log2f`: `lg2.approx.f32`, absolute error 2^-22). Every target.
#[inline(always)]
pub fn log2f(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return approx!("lg2.approx.f32", x);
    #[cfg(not(target_arch = "nvptx64"))]
    super::log2f(x)
}

/// `ln(x)` as `lg2.approx(x)·ln 2` (`__logf`). Every target.
#[inline(always)]
pub fn logf(x: f32) -> f32 {
    log2f(x) * core::f32::consts::LN_2
}

/// `log10(x)` as `lg2.approx(x)·log10 2` (`__log10f`). Every target.
#[inline(always)]
pub fn log10f(x: f32) -> f32 {
    log2f(x) * core::f32::consts::LOG10_2
}

/// `x^y` as `2^(y·log2 x)` (`__powf`): [`exp2f`] of the product of `y` and
/// [`log2f`]`(x)`, so the error grows with `|y·log2 x|`; negative `x` gives NaN.
/// Every target.
#[inline(always)]
pub fn powf(x: f32, y: f32) -> f32 {
    exp2f(y * log2f(x))
}

/// `x / y` (`__fdividef`: `div.approx.f32`; 2 ulp for `|y|` in 2^-126..2^126, and 0
/// when `|y|` is above 2^126 whatever `x`). Every target; the host divides exactly.
#[inline(always)]
pub fn fdividef(x: f32, y: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return approx!("div.approx.f32", x, y);
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x / y
    }
}

/// `tanh(x)` (`tanh.approx.f32`, sm_75, PTX ISA 7.0: relative error 2^-10.987).
/// Every target.
#[inline(always)]
pub fn tanhf(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return approx!("tanh.approx.f32", x);
    #[cfg(not(target_arch = "nvptx64"))]
    super::tanhf(x)
}

/// `1/sqrt(x)` (`rsqrt.approx.f32`: relative error 2^-22.9). Every target.
#[inline(always)]
pub fn rsqrtf(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return approx!("rsqrt.approx.f32", x);
    #[cfg(not(target_arch = "nvptx64"))]
    super::rsqrtf(x)
}

/// `1/x` (`rcp.approx.f32`: 1 ulp). Every target; the host divides exactly.
#[inline(always)]
pub fn rcpf(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    return approx!("rcp.approx.f32", x);
    #[cfg(not(target_arch = "nvptx64"))]
    {
        1.0 / x
    }
}
