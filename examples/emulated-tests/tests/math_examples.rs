//! The math-library examples under the emulator, on random inputs with poisoned
//! outputs, against the `f64` references and tolerances their host programs use
//! (`example_support::black_scholes`, `example_support::nbody`).

use emulated_tests::emulate;
use example_support::black_scholes::{self as bs, RATE, VOLATILITY};
use example_support::nbody::{self, DT, SOFTENING_SQ};
use example_support::rng;

#[test]
fn black_scholes_matches_the_f64_prices() {
    let mut r = rng(21);
    let n = 4096 + 77; // the last block partial
    let (spot, strike, years) = bs::inputs(&mut r, n);
    let (call, put) = emulate::black_scholes(&spot, &strike, &years, RATE, VOLATILITY).unwrap();
    let check = bs::check(&spot, &strike, &years, RATE, VOLATILITY, &call, &put);
    assert!(check.passed(), "{check:?}");
    assert_eq!(check.total, 2 * n);
}

#[test]
fn black_scholes_check_refuses_poison_and_a_wrong_price() {
    let mut r = rng(22);
    let (spot, strike, years) = bs::inputs(&mut r, 256);
    let (mut call, put) = emulate::black_scholes(&spot, &strike, &years, RATE, VOLATILITY).unwrap();
    // A call is at most its spot, so 1 % of S is beyond both tolerances.
    call[7] += 0.01 * spot[7];
    call[9] = f32::NAN;
    let check = bs::check(&spot, &strike, &years, RATE, VOLATILITY, &call, &put);
    assert!(!check.passed());
    assert_eq!(check.bad, 2, "{check:?}");
    assert!(
        check.l1.is_infinite(),
        "NaN must fail the L1 norm: {check:?}"
    );
}

#[test]
fn nbody_step_matches_the_f64_all_pairs_step() {
    // One full tile, then a ragged count: a zero-mass pad in the last tile and idle
    // threads that still meet every barrier.
    for (seed, n) in [(23, 256), (24, 300)] {
        let mut r = rng(seed);
        let (pos, vel) = nbody::bodies(&mut r, n);
        for fast in [false, true] {
            let (new_pos, new_vel) =
                emulate::nbody_step(&pos, &vel, DT, SOFTENING_SQ, fast).unwrap();
            let check = nbody::check(&pos, &vel, DT, SOFTENING_SQ, &new_pos, &new_vel);
            assert!(check.passed(), "n = {n}, fast = {fast}: {check:?}");
        }
    }
}

#[test]
fn nbody_check_refuses_a_wrong_acceleration_and_poison() {
    let mut r = rng(25);
    let (pos, vel) = nbody::bodies(&mut r, 256);
    let (mut new_pos, mut new_vel) =
        emulate::nbody_step(&pos, &vel, DT, SOFTENING_SQ, false).unwrap();
    // Body 3's velocity change 1 % too large, body 5's position never written.
    for c in 0..3 {
        new_vel[3][c] = vel[3][c] + 1.01 * (new_vel[3][c] - vel[3][c]);
        new_pos[3][c] = pos[3][c] + new_vel[3][c] * DT;
    }
    new_pos[5] = [f32::NAN; 4];
    let check = nbody::check(&pos, &vel, DT, SOFTENING_SQ, &new_pos, &new_vel);
    assert_eq!(check.bad, 2, "{check:?}");
}
