//! Inputs, the `f64` reference and the check of `examples/black_scholes` (NVIDIA's
//! CUDA sample `BlackScholes`), shared by its host program and the emulator test.

use rand::Rng;

/// The riskless rate, per year (the sample's `RISKFREE`).
pub const RATE: f32 = 0.02;
/// The volatility, per year (the sample's `VOLATILITY`).
pub const VOLATILITY: f32 = 0.30;
/// Range of the spot price `S` (the sample's `RandFloat(5.0f, 30.0f)`).
pub const SPOT: (f32, f32) = (5.0, 30.0);
/// Range of the strike `X` (the sample's `RandFloat(1.0f, 100.0f)`).
pub const STRIKE: (f32, f32) = (1.0, 100.0);
/// Range of the time to expiry `T` in years (the sample's `RandFloat(0.25f, 10.0f)`).
pub const YEARS: (f32, f32) = (0.25, 10.0);

/// Per-element tolerance, relative: `|got − want| ≤ max(REL_TOL·|want|, ABS_TOL_PER_SPOT·S)`.
pub const REL_TOL: f64 = 1e-4;
/// Per-element tolerance, absolute in units of the option's spot price `S`: a price
/// that is a small difference of two terms of size `S` (a deep out-of-the-money call,
/// say) keeps an absolute error of a few `f32` ulps of `S`, not of itself.
pub const ABS_TOL_PER_SPOT: f64 = 1e-4;
/// NVIDIA's sample's own criterion: the L1 norm `Σ|got − want| / Σ|want|` (over calls
/// and puts here; calls only in the sample) must not exceed `1e-6`.
pub const L1_TOL: f64 = 1e-6;

/// `n` options: spot, strike and years, each uniform in its range.
pub fn inputs(rng: &mut impl Rng, n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut draw =
        |(lo, hi): (f32, f32)| -> Vec<f32> { (0..n).map(|_| rng.random_range(lo..hi)).collect() };
    let spot = draw(SPOT);
    let strike = draw(STRIKE);
    let years = draw(YEARS);
    (spot, strike, years)
}

/// The standard normal CDF in `f64`: `½·erfc(−x/√2)` (`libm::erfc`; std has no erfc).
pub fn normcdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x * std::f64::consts::FRAC_1_SQRT_2)
}

/// `(call, put)` in `f64` for spot `s`, strike `x`, `t` years, rate `r`, volatility `v`
/// (the sample's `BlackScholesBodyCPU`, which works in `double`).
pub fn price(s: f64, x: f64, t: f64, r: f64, v: f64) -> (f64, f64) {
    let v_sqrt_t = v * t.sqrt();
    let d1 = ((s / x).ln() + (r + 0.5 * v * v) * t) / v_sqrt_t;
    let d2 = d1 - v_sqrt_t;
    let discounted = x * (-r * t).exp();
    let call = s * normcdf(d1) - discounted * normcdf(d2);
    let put = discounted * normcdf(-d2) - s * normcdf(-d1);
    (call, put)
}

/// What [`check`] found.
#[derive(Debug, Clone, Copy, Default)]
pub struct Check {
    /// Prices (calls and puts) beyond the per-element tolerance, NaN included.
    pub bad: usize,
    /// Prices checked: twice the options.
    pub total: usize,
    /// `Σ|got − want| / Σ|want|` over all prices.
    pub l1: f64,
    /// The largest `|got − want|`.
    pub max_abs: f64,
}

impl Check {
    /// Both criteria hold: no element beyond its tolerance, L1 norm within [`L1_TOL`].
    pub fn passed(&self) -> bool {
        self.bad == 0 && self.l1 <= L1_TOL
    }
}

/// Compares the kernel's `call` and `put` with [`price`] at `rate` and `volatility`,
/// every element (split over the CPU's threads); prints the first few mismatches.
pub fn check(
    spot: &[f32],
    strike: &[f32],
    years: &[f32],
    rate: f32,
    volatility: f32,
    call: &[f32],
    put: &[f32],
) -> Check {
    let n = call.len();
    assert!(put.len() == n && spot.len() >= n && strike.len() >= n && years.len() >= n);
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let chunk = n.div_ceil(threads).max(1);
    // Per chunk: (bad, Σ|err|, Σ|want|, max |err|).
    let parts: Vec<(usize, f64, f64, f64)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .step_by(chunk)
            .map(|start| {
                scope.spawn(move || {
                    let (mut bad, mut err_sum, mut ref_sum, mut max_abs) = (0, 0.0, 0.0, 0.0f64);
                    for i in start..(start + chunk).min(n) {
                        let s = f64::from(spot[i]);
                        let want = price(
                            s,
                            f64::from(strike[i]),
                            f64::from(years[i]),
                            f64::from(rate),
                            f64::from(volatility),
                        );
                        for (what, got, want) in
                            [("call", call[i], want.0), ("put", put[i], want.1)]
                        {
                            let err = (f64::from(got) - want).abs();
                            let tol = (REL_TOL * want.abs()).max(ABS_TOL_PER_SPOT * s);
                            // NaN (a poisoned output) compares false: a mismatch.
                            if err.is_nan() || err > tol {
                                if bad < 5 {
                                    eprintln!(
                                        "{what}[{i}] (S {s}, X {}, T {}): got {got}, want {want}",
                                        strike[i], years[i]
                                    );
                                }
                                bad += 1;
                            }
                            err_sum += err;
                            ref_sum += want.abs();
                            max_abs = max_abs.max(err);
                        }
                    }
                    (bad, err_sum, ref_sum, max_abs)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let (bad, err_sum, ref_sum, max_abs) = parts.iter().fold((0, 0.0, 0.0, 0.0f64), |a, p| {
        (a.0 + p.0, a.1 + p.1, a.2 + p.2, a.3.max(p.3))
    });
    Check {
        bad,
        total: 2 * n,
        // NaN (a poisoned output) makes the norm NaN, which fails `passed`.
        l1: if err_sum.is_nan() {
            f64::INFINITY
        } else {
            err_sum / ref_sum
        },
        max_abs,
    }
}
