//! The `width` shuffles (`warp::shfl*_sync_width`) under the emulator,
//! against a direct CPU model of the CUDA rules (CUDA C++ Programming Guide,
//! "Warp Shuffle Functions", with PTX ISA `shfl.sync`'s `b[4:0]`), for
//! widths 1..=32, many lane/delta values and random 32- and 64-bit inputs;
//! and the emulator's mask checks on them.
//!
//! Needs the `emulator` feature (`cargo test -p device-std --features
//! emulator`; `cargo xtask test` has it through the workspace).
#![cfg(feature = "emulator")]

use device_std::emulator::{self, EmulatorError, GlobalMut, LaunchConfig};
use device_std::thread;
use device_std::warp::{self, Shuffle, FULL_MASK};

const WIDTHS: [u32; 6] = [1, 2, 4, 8, 16, 32];
/// Deltas / lane masks for up, down and xor: in range, past a segment, and
/// past 31 (only `b[4:0]` counts).
const DELTAS: [u32; 14] = [0, 1, 2, 3, 5, 7, 8, 13, 16, 31, 32, 33, 45, 0xFFFF_FFE3];
/// Offsets of idx's per-lane source `lane * 7 + s`.
const IDX_OFFSETS: [u32; 4] = [0, 3, 29, 1000];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Idx,
    Up,
    Down,
    Xor,
}

/// The CUDA rule: the lane whose value `lane` receives.
fn model(mode: Mode, lane: u32, b: u32, width: u32) -> u32 {
    let d = b % 32; // PTX reads b[4:0]
    match mode {
        Mode::Idx => (lane & !(width - 1)) + b % width,
        Mode::Up if lane % width < d => lane,
        Mode::Up => lane - d,
        Mode::Down if lane % width + d >= width => lane,
        Mode::Down => lane + d,
        Mode::Xor if (lane ^ d) / width > lane / width => lane,
        Mode::Xor => lane ^ d,
    }
}

/// `(mode, b for lane 0, width)`; idx cases vary `b` per lane.
fn cases() -> Vec<(Mode, u32, u32)> {
    let mut v = Vec::new();
    for w in WIDTHS {
        for s in IDX_OFFSETS {
            v.push((Mode::Idx, s, w));
        }
        for mode in [Mode::Up, Mode::Down, Mode::Xor] {
            for d in DELTAS {
                v.push((mode, d, w));
            }
        }
    }
    v
}

/// `b` of `lane` in a case whose lane-0 `b` is `b0`.
fn lane_b(mode: Mode, b0: u32, lane: u32) -> u32 {
    if mode == Mode::Idx {
        lane * 7 + b0
    } else {
        b0
    }
}

fn shuffle<T: Shuffle>(mode: Mode, v: T, b: u32, width: u32) -> T {
    match mode {
        Mode::Idx => warp::shfl_sync_width(FULL_MASK, v, b, width),
        Mode::Up => warp::shfl_up_sync_width(FULL_MASK, v, b, width),
        Mode::Down => warp::shfl_down_sync_width(FULL_MASK, v, b, width),
        Mode::Xor => warp::shfl_xor_sync_width(FULL_MASK, v, b, width),
    }
}

/// The plain (32-lane) function of `mode`.
fn plain<T: Shuffle>(mode: Mode, v: T, b: u32) -> T {
    match mode {
        Mode::Idx => warp::shfl_sync(FULL_MASK, v, b),
        Mode::Up => warp::shfl_up_sync(FULL_MASK, v, b),
        Mode::Down => warp::shfl_down_sync(FULL_MASK, v, b),
        Mode::Xor => warp::shfl_xor_sync(FULL_MASK, v, b),
    }
}

/// splitmix64: seeded random inputs without a dependency.
fn random(seed: u64, n: usize) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect()
}

/// Per thread and case: the width shuffle of the input's low word (`u32`),
/// of the whole input as `f64` bits, and (width 32 only) the plain
/// function's `u32` result, against the model.
#[test]
fn width_shuffles_match_the_cuda_rule_for_every_width() {
    let cases = cases();
    let (blocks, threads) = (2u32, 96u32);
    let n = (blocks * threads) as usize;
    let input = random(0x5EED, n);
    let words = 3 * cases.len();
    let mut got = vec![0xAAAA_AAAA_AAAA_AAAAu64; n * words];
    let out = GlobalMut::new(&mut got);
    let (input_ref, cases_ref) = (&input, &cases);
    emulator::launch(LaunchConfig::new((blocks, 1, 1), (threads, 1, 1)), || {
        let k = thread::index_1d().get();
        let lane = thread::lane_id();
        let x = input_ref[k];
        for (c, &(mode, b0, w)) in cases_ref.iter().enumerate() {
            let b = lane_b(mode, b0, lane);
            let r = [
                shuffle(mode, x as u32, b, w) as u64,
                shuffle(mode, f64::from_bits(x), b, w).to_bits(),
                if w == 32 {
                    plain(mode, x as u32, b) as u64
                } else {
                    0
                },
            ];
            for (i, r) in r.into_iter().enumerate() {
                // SAFETY: `k` is this thread's own; `got` holds `words` per thread.
                unsafe { out.as_mut_ptr().add(k * words + 3 * c + i).write(r) };
            }
        }
    })
    .unwrap();
    for k in 0..n {
        let (warp_base, lane) = (k - k % 32, (k % 32) as u32);
        for (c, &(mode, b0, w)) in cases.iter().enumerate() {
            let src = warp_base + model(mode, lane, lane_b(mode, b0, lane), w) as usize;
            let want = [
                input[src] as u32 as u64,
                input[src],
                if w == 32 { input[src] as u32 as u64 } else { 0 },
            ];
            let at = k * words + 3 * c;
            assert_eq!(
                got[at..at + 3],
                want,
                "thread {k}: {mode:?} b {} width {w}",
                lane_b(mode, b0, lane)
            );
        }
    }
}

/// Runs `kernel` on one warp of 32 threads and returns its error.
fn one_warp_error(kernel: impl Fn() + Sync) -> EmulatorError {
    emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), kernel).unwrap_err()
}

fn warp_collective_message(err: EmulatorError) -> (u32, String) {
    match err {
        EmulatorError::WarpCollective { at, message } => (at.thread.0, message),
        other => panic!("expected a warp-collective error, got {other}"),
    }
}

#[test]
fn a_width_that_is_not_a_power_of_two_up_to_32_panics() {
    for width in [0, 3, 12, 64] {
        let err = one_warp_error(|| {
            warp::shfl_xor_sync_width(FULL_MASK, 1u32, 1, width);
        });
        match err {
            EmulatorError::Panic {
                message, location, ..
            } => {
                assert!(
                    message.contains("shuffle width must be a power of two in 1..=32"),
                    "{message}"
                );
                // The caller's line, through `#[track_caller]`.
                assert!(location.is_some_and(|l| l.contains("warp_width.rs")));
            }
            other => panic!("width {width}: expected a panic, got {other}"),
        }
    }
}

/// Lanes 0..8 only, under mask 0xFF.
#[test]
fn the_mask_rules_apply_to_width_shuffles() {
    let launch = |f: &(dyn Fn(u32) -> u32 + Sync)| {
        let mut got = vec![0u32; 32];
        let out = GlobalMut::new(&mut got);
        emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
            let lane = thread::lane_id();
            if lane < 8 {
                // SAFETY: one word per thread.
                unsafe { out.as_mut_ptr().add(lane as usize).write(f(lane)) };
            }
        })
        .map(|_| got)
    };
    // Segments of 8: down 4 keeps lanes 4..8 to their own value, so no lane
    // reads outside the mask; the same with 32-lane segments reads lane 8.
    let got = launch(&|l| warp::shfl_down_sync_width(0xFF, l, 4, 8)).unwrap();
    assert_eq!(got[..8], [4, 5, 6, 7, 4, 5, 6, 7]);
    let (t, message) = warp_collective_message(
        launch(&|l| warp::shfl_down_sync_width(0xFF, l, 4, 32)).unwrap_err(),
    );
    assert_eq!(t, 4);
    assert!(
        message.contains("with mask 0x000000ff: lane 4 reads lane 8"),
        "{message}"
    );
    // Segments of 16: xor 8 reads lanes 8..16, outside the mask.
    let (t, message) = warp_collective_message(
        launch(&|l| warp::shfl_xor_sync_width(0xFF, l, 8, 16)).unwrap_err(),
    );
    assert_eq!(t, 0);
    assert!(
        message.contains("shfl_xor_sync_width (width 16)")
            && message.contains("lane 0 reads lane 8"),
        "{message}"
    );
    // The calling lane outside its mask.
    let (t, message) = warp_collective_message(one_warp_error(|| {
        warp::shfl_up_sync_width(0xFFFF_FFFE, 1u64, 1, 4);
    }));
    assert_eq!(t, 0);
    assert!(
        message.contains("the calling lane 0 is not in mask"),
        "{message}"
    );
    // Two operations under one mask.
    let (_, message) = warp_collective_message(one_warp_error(|| {
        let lane = thread::lane_id();
        if lane < 16 {
            warp::shfl_up_sync_width(FULL_MASK, lane, 1, 8);
        } else {
            warp::shfl_down_sync_width(FULL_MASK, lane, 1, 8);
        }
    }));
    assert!(
        message.contains("shfl_up_sync") && message.contains("shfl_down_sync"),
        "{message}"
    );
}

/// Width 32 is the plain function: one meeting, whatever form each lane
/// calls; lanes may also pass different widths (each lane's own `c`).
#[test]
fn plain_and_width_forms_meet_and_widths_are_per_lane() {
    let mut got = vec![0u32; 32];
    let out = GlobalMut::new(&mut got);
    emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
        let lane = thread::lane_id();
        let a = if lane & 1 == 0 {
            warp::shfl_down_sync(FULL_MASK, lane, 1)
        } else {
            warp::shfl_down_sync_width(FULL_MASK, lane, 1, 32)
        };
        let width = if lane < 16 { 4 } else { 16 };
        let b = warp::shfl_up_sync_width(FULL_MASK, lane * 100, 2, width);
        // SAFETY: one word per thread.
        unsafe { out.as_mut_ptr().add(lane as usize).write(a * 10_000 + b) };
    })
    .unwrap();
    for l in 0..32u32 {
        let a = if l == 31 { 31 } else { l + 1 };
        let w = if l < 16 { 4 } else { 16 };
        let b = 100 * model(Mode::Up, l, 2, w);
        assert_eq!(got[l as usize], a * 10_000 + b, "lane {l}");
    }
}
