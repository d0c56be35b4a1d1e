//! The in-place pair pattern of `DisjointSlice`'s docs (issue 31, point 13): a bitonic
//! sort whose compare-exchange steps take both elements of a pair with
//! `get_unchecked_mut`, the pairs' disjointness checked by the emulator's claim log on
//! every launch; and the same step with the ownership rule broken, reported.

use device_std::emulator::{self, EmulatorError, GlobalMut, LaunchConfig};
use device_std::{kernel, thread, DisjointSlice};

/// One compare-exchange step of a bitonic sort over `data` (length a power of two):
/// thread `i` owns the pair `(i, i ^ j)` when `i ^ j > i` and puts it in the order the
/// stage `k` asks for. With `both_sides`, the partner thread acts on the pair too (a
/// broken ownership rule).
#[kernel]
pub fn bitonic_step(mut data: DisjointSlice<u32>, j: u32, k: u32, both_sides: u32) {
    let i = thread::index_1d().get();
    let l = i ^ j as usize;
    let owner = l > i || (both_sides != 0 && l != i);
    if owner && l < data.len() && i < data.len() {
        let (lo, hi) = (i.min(l), i.max(l));
        // SAFETY: for one (j, k) the pairs (i, i ^ j) are disjoint, and (unless
        // `both_sides`, which the emulator must report) one thread handles each pair.
        unsafe {
            let (a, b) = (*data.get_unchecked_mut(lo), *data.get_unchecked_mut(hi));
            let ascending = lo & k as usize == 0;
            if (a > b) == ascending {
                *data.get_unchecked_mut(lo) = b;
                *data.get_unchecked_mut(hi) = a;
            }
        }
    }
}

#[test]
fn a_bitonic_sort_in_place_matches_the_cpu() {
    let n = 1024usize;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut data: Vec<u32> = (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as u32
        })
        .collect();
    let mut want = data.clone();
    want.sort_unstable();
    {
        let buf = GlobalMut::new(&mut data);
        let cfg = LaunchConfig::for_num_elems(n as u32, 256);
        let mut k = 2;
        while k <= n as u32 {
            let mut j = k / 2;
            while j > 0 {
                emulator::launch(cfg, || bitonic_step(buf.disjoint(), j, k, 0)).unwrap();
                j /= 2;
            }
            k *= 2;
        }
    }
    assert_eq!(data, want);
}

#[test]
fn two_threads_on_one_pair_are_reported() {
    let mut data: Vec<u32> = (0..64).rev().collect();
    let buf = GlobalMut::new(&mut data);
    let err = emulator::launch(LaunchConfig::for_num_elems(64, 64), || {
        bitonic_step(buf.disjoint(), 1, 2, 1)
    })
    .unwrap_err();
    assert!(
        !matches!(err, EmulatorError::Panic { .. }),
        "expected the claim log's report, got a panic: {err}"
    );
    let msg = format!("{err}");
    assert!(
        msg.contains("get_unchecked_mut") || msg.contains("same element"),
        "{msg}"
    );
}
