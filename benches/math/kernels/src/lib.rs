//! Accuracy and throughput kernels for [`device_std::math`], run by the CUDA C++
//! harness `benches/math/reference.cu` (`scripts/gpu-math.sh`), which holds the
//! CUDA twins and the error kernels.
//!
//! Per function `f` (CUDA's name), two kernels, 1D grid, any block size:
//! - `acc_f`: `out[i] = f(input i)`. f32 unary: input `i` is the bit pattern
//!   `base + i * stride` (wrapping), so chunks of the 2^32 inputs need no input
//!   buffer; f32 binary and all f64: inputs from `xs` (and `ys`).
//! - `thr_f`: thread `g` evaluates `f` on [`K`] inputs in `[lo, hi)` made by
//!   [`step`] and [`unit_f32`]/[`unit_f64`] from `g`, adds the results and writes
//!   the sum to `out[g]`: compute-bound. `reference.cu` generates the same
//!   inputs with the same operations.
//!
//! Each list below (one per signature) is the set of functions built. A line is
//! `f: acc_f, thr_f;`; the kernel names are checked against `f` at compile time.
//! `benches/math/functions.def` lists every target function for the CUDA side; the
//! harness skips (and reports as missing) those whose kernels are not in the PTX.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

// Used only by the list entries: unused while a list is empty.
#[allow(unused_imports)]
use device_std::{kernel, thread, DisjointSlice};

/// `device_std::math`, plus the fixed-order Bessel functions the harness measures as
/// unary ones (`jn5f(x) = jnf(5, x)`; CUDA's twins in `reference.cu`).
mod ours {
    pub use device_std::math::*;

    pub fn jn5f(x: f32) -> f32 {
        jnf(5, x)
    }
    pub fn yn5f(x: f32) -> f32 {
        ynf(5, x)
    }
    pub fn jn5(x: f64) -> f64 {
        jn(5, x)
    }
    pub fn yn5(x: f64) -> f64 {
        yn(5, x)
    }
}

#[cfg(not(target_arch = "nvptx64"))]
pub mod sample;

/// Inputs per thread of a `thr_` kernel.
pub const K: u32 = 16;

/// `$body` [`K`] times in a row: the `thr_` loop unrolled in the source, as nvcc
/// unrolls its twin's (LLVM keeps a loop whose body is a whole function rolled,
/// which would add a counter, a branch and no cross-iteration scheduling to ours).
macro_rules! unroll_k {
    ($body:block) => {{
        const _: () = assert!(K == 16, "unroll_k! writes out 16 copies");
        $body $body $body $body $body $body $body $body
        $body $body $body $body $body $body $body $body
    }};
}

/// Seed of thread `g`'s input sequence in a `thr_` kernel.
#[inline(always)]
pub fn seed(g: u32) -> u32 {
    g.wrapping_mul(0x9E37_79B9)
}

/// One LCG step (Numerical Recipes' constants): one `mad.lo.u32`.
///
/// On the GPU it is that instruction in `asm!`, so that LLVM cannot rewrite the unrolled
/// steps of a `thr_` kernel into `seed × a^k + c_k` each (a constant move and a multiply
/// per step where nvcc's twin has one `IMAD`): the harness then costs both sides the same.
#[inline(always)]
pub fn step(s: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let next: u32;
        // SAFETY: register arithmetic only.
        unsafe {
            core::arch::asm!(
                "mad.lo.u32 {n}, {s}, 1664525, 1013904223;",
                n = out(reg32) next,
                s = in(reg32) s,
                options(pure, nomem, nostack)
            );
        }
        next
    }
    #[cfg(not(target_arch = "nvptx64"))]
    s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223)
}

/// The top 23 bits of `s` as an `f32` in `[1, 2)`.
#[inline(always)]
pub fn unit_f32(s: u32) -> f32 {
    f32::from_bits(0x3f80_0000 | (s >> 9))
}

/// The 32 bits of `s` as the top of an `f64` mantissa in `[1, 2)`.
#[inline(always)]
pub fn unit_f64(s: u32) -> f64 {
    f64::from_bits(0x3ff0_0000_0000_0000 | ((s as u64) << 20))
}

/// `true` when `kernel` is `prefix` followed by `f`.
const fn named(kernel: &str, prefix: &str, f: &str) -> bool {
    let (k, p, f) = (kernel.as_bytes(), prefix.as_bytes(), f.as_bytes());
    if k.len() != p.len() + f.len() {
        return false;
    }
    let mut i = 0;
    while i < k.len() {
        let want = if i < p.len() { p[i] } else { f[i - p.len()] };
        if k[i] != want {
            return false;
        }
        i += 1;
    }
    true
}

/// Fails the build unless the kernels of `f` are `acc_f` and `thr_f`.
macro_rules! check_names {
    ($f:ident, $acc:ident, $thr:ident) => {
        const _: () = assert!(
            named(stringify!($acc), "acc_", stringify!($f))
                && named(stringify!($thr), "thr_", stringify!($f)),
            concat!(
                "kernels of ",
                stringify!($f),
                " must be acc_",
                stringify!($f),
                ", thr_",
                stringify!($f)
            )
        );
    };
}

/// An f32 unary accuracy kernel as a host function: `(base, stride, out)`.
#[cfg(not(target_arch = "nvptx64"))]
pub type AccF32Unary = for<'a> fn(u32, u32, DisjointSlice<'a, f32>);

/// `f32 -> f32` functions: kernels and the host table [`F32_UNARY`].
macro_rules! f32_unary {
    ($($f:ident: $acc:ident, $thr:ident;)*) => {
        $(
            check_names!($f, $acc, $thr);

            #[doc = concat!("`out[i] = ", stringify!($f), "(f32::from_bits(base + i * stride))`.")]
            #[kernel(dims = 1)]
            pub fn $acc(base: u32, stride: u32, mut out: DisjointSlice<f32>) {
                let i = thread::index_1d();
                let bits = base.wrapping_add((i.get() as u32).wrapping_mul(stride));
                if let Some(o) = out.get_mut(&i) {
                    *o = ours::$f(f32::from_bits(bits));
                }
            }

            #[doc = concat!("Sum of `", stringify!($f), "` over `K` inputs in `[lo, hi)`.")]
            #[kernel(dims = 1)]
            pub fn $thr(lo: f32, hi: f32, mut out: DisjointSlice<f32>) {
                let i = thread::index_1d();
                let (w, mut s) = (hi - lo, seed(i.get() as u32));
                let c = lo - w;
                let mut acc = 0.0f32;
                unroll_k!({
                    s = step(s);
                    acc += ours::$f(ours::fmaf(w, unit_f32(s), c));
                });
                if let Some(o) = out.get_mut(&i) {
                    *o = acc;
                }
            }
        )*

        /// The f32 unary functions built, for host tests.
        #[cfg(not(target_arch = "nvptx64"))]
        pub const F32_UNARY: &[(&str, fn(f32) -> f32)] = &[$((stringify!($f), ours::$f)),*];

        /// The f32 unary accuracy kernels, for runs under the emulator.
        #[cfg(not(target_arch = "nvptx64"))]
        pub const F32_UNARY_KERNELS: &[(&str, AccF32Unary)] =
            &[$((stringify!($f), $acc as AccF32Unary)),*];
    };
}

/// `(f32, f32) -> f32` functions: kernels and the host table [`F32_BINARY`].
macro_rules! f32_binary {
    ($($f:ident: $acc:ident, $thr:ident;)*) => {
        $(
            check_names!($f, $acc, $thr);

            #[doc = concat!("`out[i] = ", stringify!($f), "(xs[i], ys[i])`.")]
            #[kernel(dims = 1)]
            pub fn $acc(xs: &[f32], ys: &[f32], mut out: DisjointSlice<f32>) {
                let i = thread::index_1d();
                let k = i.get();
                if let (Some(o), Some(&x), Some(&y)) = (out.get_mut(&i), xs.get(k), ys.get(k)) {
                    *o = ours::$f(x, y);
                }
            }

            #[doc = concat!("Sum of `", stringify!($f), "` over `K` pairs in `[xlo, xhi) × [ylo, yhi)`.")]
            #[kernel(dims = 1)]
            pub fn $thr(xlo: f32, xhi: f32, ylo: f32, yhi: f32, mut out: DisjointSlice<f32>) {
                let i = thread::index_1d();
                let (wx, wy, mut s) = (xhi - xlo, yhi - ylo, seed(i.get() as u32));
                let (cx, cy) = (xlo - wx, ylo - wy);
                let mut acc = 0.0f32;
                unroll_k!({
                    s = step(s);
                    let x = ours::fmaf(wx, unit_f32(s), cx);
                    s = step(s);
                    let y = ours::fmaf(wy, unit_f32(s), cy);
                    acc += ours::$f(x, y);
                });
                if let Some(o) = out.get_mut(&i) {
                    *o = acc;
                }
            }
        )*

        /// The f32 binary functions built, for host tests.
        #[cfg(not(target_arch = "nvptx64"))]
        pub const F32_BINARY: &[(&str, fn(f32, f32) -> f32)] = &[$((stringify!($f), ours::$f)),*];
    };
}

/// `f64 -> f64` functions: kernels and the host table [`F64_UNARY`].
macro_rules! f64_unary {
    ($($f:ident: $acc:ident, $thr:ident;)*) => {
        $(
            check_names!($f, $acc, $thr);

            #[doc = concat!("`out[i] = ", stringify!($f), "(xs[i])`.")]
            #[kernel(dims = 1)]
            pub fn $acc(xs: &[f64], mut out: DisjointSlice<f64>) {
                let i = thread::index_1d();
                let k = i.get();
                if let (Some(o), Some(&x)) = (out.get_mut(&i), xs.get(k)) {
                    *o = ours::$f(x);
                }
            }

            #[doc = concat!("Sum of `", stringify!($f), "` over `K` inputs in `[lo, hi)`.")]
            #[kernel(dims = 1)]
            pub fn $thr(lo: f64, hi: f64, mut out: DisjointSlice<f64>) {
                let i = thread::index_1d();
                let (w, mut s) = (hi - lo, seed(i.get() as u32));
                let c = lo - w;
                let mut acc = 0.0f64;
                unroll_k!({
                    s = step(s);
                    acc += ours::$f(ours::fma(w, unit_f64(s), c));
                });
                if let Some(o) = out.get_mut(&i) {
                    *o = acc;
                }
            }
        )*

        /// The f64 unary functions built, for host tests.
        #[cfg(not(target_arch = "nvptx64"))]
        pub const F64_UNARY: &[(&str, fn(f64) -> f64)] = &[$((stringify!($f), ours::$f)),*];
    };
}

/// `(f64, f64) -> f64` functions: kernels and the host table [`F64_BINARY`].
macro_rules! f64_binary {
    ($($f:ident: $acc:ident, $thr:ident;)*) => {
        $(
            check_names!($f, $acc, $thr);

            #[doc = concat!("`out[i] = ", stringify!($f), "(xs[i], ys[i])`.")]
            #[kernel(dims = 1)]
            pub fn $acc(xs: &[f64], ys: &[f64], mut out: DisjointSlice<f64>) {
                let i = thread::index_1d();
                let k = i.get();
                if let (Some(o), Some(&x), Some(&y)) = (out.get_mut(&i), xs.get(k), ys.get(k)) {
                    *o = ours::$f(x, y);
                }
            }

            #[doc = concat!("Sum of `", stringify!($f), "` over `K` pairs in `[xlo, xhi) × [ylo, yhi)`.")]
            #[kernel(dims = 1)]
            pub fn $thr(xlo: f64, xhi: f64, ylo: f64, yhi: f64, mut out: DisjointSlice<f64>) {
                let i = thread::index_1d();
                let (wx, wy, mut s) = (xhi - xlo, yhi - ylo, seed(i.get() as u32));
                let (cx, cy) = (xlo - wx, ylo - wy);
                let mut acc = 0.0f64;
                unroll_k!({
                    s = step(s);
                    let x = ours::fma(wx, unit_f64(s), cx);
                    s = step(s);
                    let y = ours::fma(wy, unit_f64(s), cy);
                    acc += ours::$f(x, y);
                });
                if let Some(o) = out.get_mut(&i) {
                    *o = acc;
                }
            }
        )*

        /// The f64 binary functions built, for host tests.
        #[cfg(not(target_arch = "nvptx64"))]
        pub const F64_BINARY: &[(&str, fn(f64, f64) -> f64)] = &[$((stringify!($f), ours::$f)),*];
    };
}

// The lists. A commented-out line is a target function not yet in
// `device_std::math`: uncomment it once it exists (and add its hash to
// `benches/math/gpu-hashes.txt`, see `tests/identity.rs`).

f32_unary! {
    sqrtf: acc_sqrtf, thr_sqrtf;
    cbrtf: acc_cbrtf, thr_cbrtf;
    rcbrtf: acc_rcbrtf, thr_rcbrtf;
    rsqrtf: acc_rsqrtf, thr_rsqrtf;
    expf: acc_expf, thr_expf;
    exp2f: acc_exp2f, thr_exp2f;
    exp10f: acc_exp10f, thr_exp10f;
    expm1f: acc_expm1f, thr_expm1f;
    logf: acc_logf, thr_logf;
    log2f: acc_log2f, thr_log2f;
    log10f: acc_log10f, thr_log10f;
    log1pf: acc_log1pf, thr_log1pf;
    sinf: acc_sinf, thr_sinf;
    cosf: acc_cosf, thr_cosf;
    tanf: acc_tanf, thr_tanf;
    sinpif: acc_sinpif, thr_sinpif;
    cospif: acc_cospif, thr_cospif;
    asinf: acc_asinf, thr_asinf;
    acosf: acc_acosf, thr_acosf;
    atanf: acc_atanf, thr_atanf;
    sinhf: acc_sinhf, thr_sinhf;
    coshf: acc_coshf, thr_coshf;
    tanhf: acc_tanhf, thr_tanhf;
    asinhf: acc_asinhf, thr_asinhf;
    acoshf: acc_acoshf, thr_acoshf;
    atanhf: acc_atanhf, thr_atanhf;
    erff: acc_erff, thr_erff;
    erfcf: acc_erfcf, thr_erfcf;
    normcdff: acc_normcdff, thr_normcdff;
    erfinvf: acc_erfinvf, thr_erfinvf;
    erfcinvf: acc_erfcinvf, thr_erfcinvf;
    normcdfinvf: acc_normcdfinvf, thr_normcdfinvf;
    erfcxf: acc_erfcxf, thr_erfcxf;
    cyl_bessel_i0f: acc_cyl_bessel_i0f, thr_cyl_bessel_i0f;
    cyl_bessel_i1f: acc_cyl_bessel_i1f, thr_cyl_bessel_i1f;
    j0f: acc_j0f, thr_j0f;
    j1f: acc_j1f, thr_j1f;
    y0f: acc_y0f, thr_y0f;
    y1f: acc_y1f, thr_y1f;
    jn5f: acc_jn5f, thr_jn5f;
    yn5f: acc_yn5f, thr_yn5f;
    lgammaf: acc_lgammaf, thr_lgammaf;
    tgammaf: acc_tgammaf, thr_tgammaf;
    floorf: acc_floorf, thr_floorf;
    ceilf: acc_ceilf, thr_ceilf;
    truncf: acc_truncf, thr_truncf;
    roundf: acc_roundf, thr_roundf;
    rintf: acc_rintf, thr_rintf;
    logbf: acc_logbf, thr_logbf;
}

f32_binary! {
    powf: acc_powf, thr_powf;
    atan2f: acc_atan2f, thr_atan2f;
    hypotf: acc_hypotf, thr_hypotf;
    fmodf: acc_fmodf, thr_fmodf;
    remainderf: acc_remainderf, thr_remainderf;
    fdimf: acc_fdimf, thr_fdimf;
}

f64_unary! {
    sqrt: acc_sqrt, thr_sqrt;
    cbrt: acc_cbrt, thr_cbrt;
    rcbrt: acc_rcbrt, thr_rcbrt;
    rsqrt: acc_rsqrt, thr_rsqrt;
    exp: acc_exp, thr_exp;
    exp2: acc_exp2, thr_exp2;
    exp10: acc_exp10, thr_exp10;
    expm1: acc_expm1, thr_expm1;
    log: acc_log, thr_log;
    log2: acc_log2, thr_log2;
    log10: acc_log10, thr_log10;
    log1p: acc_log1p, thr_log1p;
    sin: acc_sin, thr_sin;
    cos: acc_cos, thr_cos;
    tan: acc_tan, thr_tan;
    sinpi: acc_sinpi, thr_sinpi;
    cospi: acc_cospi, thr_cospi;
    asin: acc_asin, thr_asin;
    acos: acc_acos, thr_acos;
    atan: acc_atan, thr_atan;
    sinh: acc_sinh, thr_sinh;
    cosh: acc_cosh, thr_cosh;
    tanh: acc_tanh, thr_tanh;
    asinh: acc_asinh, thr_asinh;
    acosh: acc_acosh, thr_acosh;
    atanh: acc_atanh, thr_atanh;
    erf: acc_erf, thr_erf;
    erfc: acc_erfc, thr_erfc;
    normcdf: acc_normcdf, thr_normcdf;
    erfinv: acc_erfinv, thr_erfinv;
    erfcinv: acc_erfcinv, thr_erfcinv;
    normcdfinv: acc_normcdfinv, thr_normcdfinv;
    erfcx: acc_erfcx, thr_erfcx;
    cyl_bessel_i0: acc_cyl_bessel_i0, thr_cyl_bessel_i0;
    cyl_bessel_i1: acc_cyl_bessel_i1, thr_cyl_bessel_i1;
    j0: acc_j0, thr_j0;
    j1: acc_j1, thr_j1;
    y0: acc_y0, thr_y0;
    y1: acc_y1, thr_y1;
    jn5: acc_jn5, thr_jn5;
    yn5: acc_yn5, thr_yn5;
    lgamma: acc_lgamma, thr_lgamma;
    tgamma: acc_tgamma, thr_tgamma;
    floor: acc_floor, thr_floor;
    ceil: acc_ceil, thr_ceil;
    trunc: acc_trunc, thr_trunc;
    round: acc_round, thr_round;
    rint: acc_rint, thr_rint;
}

f64_binary! {
    pow: acc_pow, thr_pow;
    atan2: acc_atan2, thr_atan2;
    hypot: acc_hypot, thr_hypot;
    fmod: acc_fmod, thr_fmod;
    remainder: acc_remainder, thr_remainder;
    fdim: acc_fdim, thr_fdim;
}
