//! `black_scholes`: European call and put prices under the Black–Scholes model, one
//! option per thread — the algorithm of NVIDIA's CUDA sample `BlackScholes`
//! (`cuda-samples/Samples/5_Domain_Specific/BlackScholes`, `BlackScholesBodyGPU`),
//! written with std's float method names (`.ln()`, `.sqrt()`, `.exp()`, through
//! `device_std::prelude`) and the normal CDF under its CUDA name, [`normcdff`](device_std::math::normcdff)
//! (`Φ(x) = ½·erfc(−x/√2)`, bound 5 ulp).
//!
//! For spot `S`, strike `X`, years to expiry `T`, riskless rate `r` and volatility `v`:
//!
//! ```text
//! d1 = (ln(S/X) + (r + v²/2)·T) / (v·√T)      d2 = d1 − v·√T
//! call = S·N(d1) − X·e^(−rT)·N(d2)            put = X·e^(−rT)·N(−d2) − S·N(−d1)
//! ```
//!
//! The sample computes `N(−d)` as `1 − N(d)` with a polynomial CDF; this kernel calls
//! the CDF at `−d`, which keeps the put accurate where `N(d)` is close to 1.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::math::normcdff;
// On the GPU `.ln()`, `.sqrt()` and `.exp()` are device-std's (`FloatMath`). A host
// build (the emulator tests) links std, whose inherent `f32` methods win over the
// trait's, so there the import goes unused and the methods are std's.
#[cfg_attr(not(target_arch = "nvptx64"), allow(unused_imports))]
use device_std::prelude::*;
use device_std::{kernel, thread, DisjointSlice};

/// Threads per block the host program launches with (the sample's 128).
pub const BLOCK: u32 = 128;

/// `(call, put)` for spot `s`, strike `x`, `t` years, rate `r` and volatility `v`
/// (both per year, `r = 0.02` is 2 %), in `f32`. `s`, `x`, `t` and `v` must be
/// positive. The body of [`black_scholes`]; it builds for the host too.
#[inline(always)]
pub fn price(s: f32, x: f32, t: f32, r: f32, v: f32) -> (f32, f32) {
    let v_sqrt_t = v * t.sqrt();
    let d1 = ((s / x).ln() + (r + 0.5 * v * v) * t) / v_sqrt_t;
    let d2 = d1 - v_sqrt_t;
    let discounted = x * (-r * t).exp();
    let call = s * normcdff(d1) - discounted * normcdff(d2);
    let put = discounted * normcdff(-d2) - s * normcdff(-d1);
    (call, put)
}

/// Prices `call.len()` options: option `i` has spot `spot[i]`, strike `strike[i]` and
/// `years[i]` years to expiry (all positive); `rate` and `volatility` are shared, per
/// year. Writes `call[i]` and `put[i]`. `call` and `put` have the same length; the
/// inputs are at least as long (a shorter one traps).
///
/// Launch: 1D, at least `call.len()` threads (the host uses blocks of [`BLOCK`]).
#[kernel]
pub fn black_scholes(
    spot: &[f32],
    strike: &[f32],
    years: &[f32],
    rate: f32,
    volatility: f32,
    mut call: DisjointSlice<f32>,
    mut put: DisjointSlice<f32>,
) {
    let i = thread::index_1d();
    let k = i.get();
    if let (Some(c), Some(p)) = (call.get_mut(&i), put.get_mut(&i)) {
        (*c, *p) = price(spot[k], strike[k], years[k], rate, volatility);
    }
}
