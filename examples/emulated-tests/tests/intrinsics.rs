//! The `intrinsics` example's kernels under the emulator: coordinates,
//! index spaces, warp operations (shuffles with segment widths too),
//! atomics, barriers, dynamic shared memory and message passing, each
//! against the CPU model `intrinsics-host` uses on the GPU
//! (`intrinsics_kernels::reference`, shared by both).

use device_std::emulator::{self, GlobalMut, LaunchConfig};
use example_support::rng;
use intrinsics_kernels::reference;
use intrinsics_kernels::*;
use rand::rngs::StdRng;
use rand::Rng;

const POISON32: u32 = 0xFFFF_FFFF;
const POISON64: u64 = 0xAAAA_AAAA_AAAA_AAAA;

fn cfg(grid: (u32, u32, u32), block: (u32, u32, u32)) -> LaunchConfig {
    LaunchConfig::new(grid, block)
}

fn check_thread_ids(grid: (u32, u32, u32), block: (u32, u32, u32)) {
    let bs = block.0 * block.1 * block.2;
    let total = (grid.0 * grid.1 * grid.2 * bs) as usize;
    let mut got = vec![POISON32; total * ID_WORDS];
    let out = GlobalMut::new(&mut got);
    // SAFETY: `out` holds 16 words per thread of the launch.
    emulator::launch(cfg(grid, block), || unsafe { thread_ids(out.as_mut_ptr()) }).unwrap();
    let want = reference::thread_ids(grid, block);
    assert_eq!(got.len(), want.len());
    for (k, (g, w)) in got.chunks(ID_WORDS).zip(want.chunks(ID_WORDS)).enumerate() {
        assert_eq!(g, w, "thread {k}");
    }
}

#[test]
fn thread_coordinates_in_1d_2d_and_3d_launches() {
    check_thread_ids((7, 1, 1), (96, 1, 1));
    check_thread_ids((3, 5, 1), (16, 4, 1));
    check_thread_ids((2, 3, 4), (8, 4, 2));
}

fn check_index_2d(grid: (u32, u32, u32), runtime_stride: Option<u32>) {
    let block = (32u32, 8u32, 1u32);
    let stride = runtime_stride.map_or(STRIDE_2D, |s| s as usize);
    let len = (grid.1 * block.1 * grid.2) as usize * stride;
    let mut got = vec![POISON32; len];
    let out = GlobalMut::new(&mut got);
    match runtime_stride {
        None => emulator::launch(cfg(grid, block), || index_2d_fill(out.disjoint())),
        Some(s) => emulator::launch(cfg(grid, block), || {
            index_2d_runtime_fill(out.disjoint(), s)
        }),
    }
    .unwrap();
    assert_eq!(got, reference::index_2d(grid, block, stride, POISON32));
}

#[test]
fn index_2d_witnesses_fill_their_matrix() {
    check_index_2d((4, 3, 1), None);
    check_index_2d((4, 3, 2), None);
    check_index_2d((3, 2, 1), Some(77));
}

#[test]
fn warp_shuffles_votes_match_redux_and_activemask() {
    let mut r = rng(21);
    let (blocks, threads) = (8u32, 128u32);
    let total = (blocks * threads) as usize;
    let input: Vec<u32> = (0..total)
        .map(|i| match (i / 32) % 4 {
            0 => 0x1234_5678,
            1 => r.random_range(0..4) * 64,
            2 => r.random::<u32>() & !0x0808,
            _ => r.random(),
        })
        .collect();
    let mut got = vec![POISON64; total * WARP_WORDS];
    let out = GlobalMut::new(&mut got);
    let input_ref = &input;
    let stats = emulator::launch(cfg((blocks, 1, 1), (threads, 1, 1)), || {
        // SAFETY: `out` holds 48 words per thread; `input` one per thread.
        unsafe { warp_ops(input_ref, out.as_mut_ptr()) }
    })
    .unwrap();
    // 24 shuffles (64-bit ones count twice: 36) + 16 other collectives on
    // every lane, 2 more on half the lanes.
    assert_eq!(
        stats.warp_collectives,
        total as u64 * (36 + 15) + total as u64 / 2 * 2
    );
    let want = reference::warp_ops(&input, threads as usize);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "thread {} word {}", i / WARP_WORDS, i % WARP_WORDS);
    }
}

#[test]
fn warp_shuffles_with_segment_widths() {
    let mut r = rng(26);
    // Six blocks: every runtime width `1 << (block % 6)`.
    let (blocks, threads) = (6u32, 64u32);
    let total = (blocks * threads) as usize;
    let input: Vec<u64> = (0..total).map(|_| r.random()).collect();
    let mut got = vec![POISON64; total * WIDTH_WORDS];
    let out = GlobalMut::new(&mut got);
    let input_ref = &input;
    let stats = emulator::launch(cfg((blocks, 1, 1), (threads, 1, 1)), || {
        // SAFETY: `out` holds 60 words per thread; `input` one per thread.
        unsafe { warp_shuffle_widths(input_ref, out.as_mut_ptr()) }
    })
    .unwrap();
    // Per width 4 shuffles of u32 and 4 of i64 (two each): 72, plus 5 with
    // b >= 32 and 4 with the runtime width on every lane, 3 more on half
    // the lanes.
    assert_eq!(
        stats.warp_collectives,
        total as u64 * (WIDTHS as u64 * 12 + 9) + total as u64 / 2 * 3
    );
    let want = reference::warp_shuffle_widths(&input, threads as usize);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "thread {} word {}", i / WIDTH_WORDS, i % WIDTH_WORDS);
    }
}

fn atomics_case(r: &mut StdRng) {
    let (blocks, threads) = (16u32, 256u32);
    let n = (blocks * threads) as usize;
    let vals: Vec<u32> = (0..n).map(|_| r.random()).collect();
    let init = reference::atomics_init();
    let mut got = init.clone();
    let counters = GlobalMut::new(&mut got);
    let vals_ref = &vals;
    emulator::launch(cfg((blocks, 1, 1), (threads, 1, 1)), || {
        // SAFETY: 40 slots, accessed only atomically during the launch.
        unsafe { atomics(vals_ref, counters.as_mut_ptr()) }
    })
    .unwrap();

    let mut want = reference::atomics(&vals);
    // Swaps: the final value is some thread's k; Σ returned + final is exact.
    assert!(reference::int_swaps_ok(&got, n));
    assert!(reference::float_swaps_ok(&got, n));
    for i in reference::INT_SWAP_SLOTS
        .into_iter()
        .chain(reference::FLOAT_SWAP_SLOTS)
    {
        want[i] = got[i];
    }
    // Slot 5 sums f64s in whatever order the threads ran: exact here, since
    // every partial sum of integers below 2^53 is exact.
    assert_eq!(got, want);
}

#[test]
fn atomics_are_atomic_under_contention_global_and_shared() {
    atomics_case(&mut rng(22));
}

#[test]
fn barriers_count_and_or_and_mirror_through_shared_memory() {
    let mut r = rng(23);
    let (blocks, threads) = (12usize, 256usize);
    let n = blocks * threads;
    let vals: Vec<u32> = (0..n)
        .map(|i| {
            let v: u32 = if r.random_bool(0.01) {
                1000 * r.random_range(0..1000)
            } else {
                r.random()
            };
            if (i / threads) % 2 == 0 {
                v & 0x7FFF_FFFF
            } else {
                v
            }
        })
        .collect();
    let mut per_block = vec![POISON32; blocks * BARRIER_WORDS];
    let (mut mirrored, mut lane_mirrored) = (vec![POISON32; n], vec![POISON32; n]);
    let (pb, m, lm) = (
        GlobalMut::new(&mut per_block),
        GlobalMut::new(&mut mirrored),
        GlobalMut::new(&mut lane_mirrored),
    );
    let vals_ref = &vals;
    let stats = emulator::launch(cfg((blocks as u32, 1, 1), (threads as u32, 1, 1)), || {
        // SAFETY: 3 words per block; the slices hold one word per thread.
        unsafe { barriers(vals_ref, pb.as_mut_ptr(), m.disjoint(), lm.disjoint()) }
    })
    .unwrap();
    assert_eq!(stats.barriers, 4 * blocks as u64);
    let want = reference::barriers(&vals, threads);
    let per_block_want = want.per_block.chunks(BARRIER_WORDS);
    for (b, (g, w)) in per_block
        .chunks(BARRIER_WORDS)
        .zip(per_block_want)
        .enumerate()
    {
        assert_eq!(g, w, "block {b}");
    }
    assert_eq!(mirrored, want.mirrored);
    assert_eq!(lane_mirrored, want.lane_mirrored);
}

fn check_dyn_shared(bytes: u32) {
    let (blocks, threads) = (3usize, 128usize);
    let per_block = DYN_HEADER + 3 * threads;
    let mut got = vec![POISON32; blocks * per_block];
    let out = GlobalMut::new(&mut got);
    let c = cfg((blocks as u32, 1, 1), (threads as u32, 1, 1)).with_dynamic_shared(bytes);
    // SAFETY: `out` is sized as the kernel documents; `bytes >= 4096 + 128`.
    emulator::launch(c, || unsafe { dyn_shared(out.as_mut_ptr()) }).unwrap();
    assert_eq!(got, reference::dyn_shared(blocks, threads, bytes));
}

#[test]
fn dynamic_shared_memory_at_alignments_16_128_1024() {
    check_dyn_shared(4096 + 1024);
    check_dyn_shared(40 * 1024);
}

#[test]
fn fences_and_release_acquire_message_passing_between_blocks() {
    let mut data = vec![0u32; MESSAGE_LEN];
    let mut flag = vec![0u32];
    let mut result = vec![POISON32; 3];
    let (d, f, res) = (
        GlobalMut::new(&mut data),
        GlobalMut::new(&mut flag),
        GlobalMut::new(&mut result),
    );
    // SAFETY: buffers sized as the kernel documents; 2 blocks of 1 thread.
    emulator::launch(cfg((2, 1, 1), (1, 1, 1)), || unsafe {
        message_passing(d.as_mut_ptr(), f.as_mut_ptr(), res.as_mut_ptr())
    })
    .unwrap();
    assert_eq!((result[0], result[2]), (reference::message_sum(), 0));
}

#[test]
fn block_leader_witness_in_a_3d_grid() {
    let mut got = vec![POISON32; 30];
    let out = GlobalMut::new(&mut got);
    emulator::launch(cfg((5, 3, 2), (64, 1, 1)), || block_ids(out.disjoint())).unwrap();
    assert_eq!(got, (0..30).collect::<Vec<u32>>());
}
