//! The `intrinsics` example's kernels under the emulator: coordinates,
//! index spaces, warp operations, atomics, barriers, dynamic shared memory
//! and message passing, each against the CPU model `intrinsics-host` uses
//! on the GPU (restated here; the host program keeps its own copy).

use device_std::emulator::{self, GlobalMut, LaunchConfig};
use example_support::rng;
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
    for bz in 0..grid.2 {
        for by in 0..grid.1 {
            for bx in 0..grid.0 {
                for tz in 0..block.2 {
                    for ty in 0..block.1 {
                        for tx in 0..block.0 {
                            let tib = (tz * block.1 + ty) * block.0 + tx;
                            let bid = (bz * grid.1 + by) * grid.0 + bx;
                            let k = (bid * bs + tib) as usize;
                            let want = [
                                tx,
                                ty,
                                tz,
                                bx,
                                by,
                                bz,
                                block.0,
                                block.1,
                                block.2,
                                grid.0,
                                grid.1,
                                grid.2,
                                tib % 32,
                                tib / 32,
                                tib,
                                0xC0FFEE,
                            ];
                            assert_eq!(got[k * ID_WORDS..(k + 1) * ID_WORDS], want, "thread {k}");
                        }
                    }
                }
            }
        }
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
    let want: Vec<u32> = (0..len)
        .map(|i| {
            let (r, c) = (i / stride, i % stride);
            if c < (grid.0 * block.0) as usize {
                ((r as u32) << 16) | c as u32
            } else {
                POISON32
            }
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn index_2d_witnesses_fill_their_matrix() {
    check_index_2d((4, 3, 1), None);
    check_index_2d((4, 3, 2), None);
    check_index_2d((3, 2, 1), Some(77));
}

fn warp_model(input: &[u32], threads: usize) -> Vec<u64> {
    let total = input.len();
    let mut want = vec![0u64; total * WARP_WORDS];
    for w in 0..total / 32 {
        let vs: [u32; 32] = input[w * 32..w * 32 + 32].try_into().unwrap();
        let shuffles = |l: usize, map: &dyn Fn(u32) -> u64| -> [u64; 4] {
            let src = (l * 7 + 3) % 32;
            let up = if l >= 3 { l - 3 } else { l };
            let down = if l + 5 <= 31 { l + 5 } else { l };
            [map(vs[src]), map(vs[up]), map(vs[down]), map(vs[l ^ 9])]
        };
        let same = |f: &dyn Fn(u32) -> u64, l: usize| -> u64 {
            (0..32)
                .filter(|&j| f(vs[j]) == f(vs[l]))
                .fold(0, |m, j| m | 1 << j)
        };
        for l in 0..32 {
            let o = &mut want[(w * 32 + l) * WARP_WORDS..(w * 32 + l + 1) * WARP_WORDS];
            o[0..4].copy_from_slice(&shuffles(l, &|v| v as u64));
            o[4..8].copy_from_slice(&shuffles(l, &|v| v as u64));
            o[8..12].copy_from_slice(&shuffles(l, &|v| (v as f32 / 3.0).to_bits() as u64));
            o[12..16].copy_from_slice(&shuffles(l, &|v| ((v as u64) << 32) | (v as u64 * 7)));
            o[16..20].copy_from_slice(&shuffles(l, &|v| (-(v as i64) * 1_000_003) as u64));
            o[20..24].copy_from_slice(&shuffles(l, &|v| (v as f64 * 0.5 + 0.25).to_bits()));
            o[24] = vs.iter().all(|v| v & 0xF != 0xF) as u64;
            o[25] = vs.iter().any(|v| v % 64 == 0) as u64;
            o[26] = (0..32)
                .filter(|&j| vs[j] & 1 == 1)
                .fold(0, |m, j| m | 1 << j);
            o[27] = same(&|v| (v % 4) as u64, l);
            o[28] = same(&|v| v as u64 % 3, l);
            o[29] = if vs.iter().all(|&v| v == vs[0]) {
                0xFFFF_FFFF
            } else {
                0xDEAD
            };
            o[30] = o[29];
            o[31] = vs.iter().fold(0u32, |a, &v| a.wrapping_add(v)) as u64;
            o[32] = *vs.iter().min().unwrap() as u64;
            o[33] = *vs.iter().max().unwrap() as u64;
            o[34] = vs.iter().fold(!0u32, |a, &v| a & v) as u64;
            o[35] = vs.iter().fold(0u32, |a, &v| a | v) as u64;
            o[36] = vs.iter().fold(0u32, |a, &v| a ^ v) as u64;
            o[37] = vs.iter().map(|&v| v as i32).min().unwrap() as u32 as u64;
            o[38] = vs.iter().map(|&v| v as i32).max().unwrap() as u32 as u64;
            o[39] = 0xFFFF_FFFF;
            o[40] = if l < 10 { 0x3FF } else { 0 };
            o[41] = l as u64;
            o[42] = ((w * 32) % threads / 32) as u64;
            if l < 16 {
                o[43] = vs[..16].iter().fold(0u32, |a, &v| a.wrapping_add(v)) as u64;
                o[44] = vs[l ^ 1] as u64;
            }
        }
    }
    want
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
    let want = warp_model(&input, threads as usize);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "thread {} word {}", i / WARP_WORDS, i % WARP_WORDS);
    }
}

fn atomics_case(r: &mut StdRng) {
    let (blocks, threads) = (16u32, 256u32);
    let n = (blocks * threads) as usize;
    let vals: Vec<u32> = (0..n).map(|_| r.random()).collect();
    let f32s = |x: f32| x.to_bits() as u64;
    let mut init = vec![0u64; ATOMIC_SLOTS];
    init[0] = 5;
    init[1] = 7;
    init[2] = (-3i32) as u32 as u64;
    init[3] = 11;
    init[4] = f32s(0.5);
    init[5] = 0.25f64.to_bits();
    init[6] = u32::MAX as u64;
    init[8] = i32::MAX as u32 as u64;
    init[9] = i32::MIN as u32 as u64;
    init[10] = u64::MAX;
    init[12] = i64::MAX as u64;
    init[13] = i64::MIN as u64;
    init[14] = f32s(f32::INFINITY);
    init[15] = f32s(f32::NEG_INFINITY);
    init[16] = f64::INFINITY.to_bits();
    init[17] = f64::NEG_INFINITY.to_bits();
    init[19] = 0xFFFF_FFFF;
    init[20] = 0x1234;
    init[23] = 100;
    init[24] = 999;
    init[31] = 0.5f64.to_bits();
    let mut got = init.clone();
    let counters = GlobalMut::new(&mut got);
    let vals_ref = &vals;
    emulator::launch(cfg((blocks, 1, 1), (threads, 1, 1)), || {
        // SAFETY: 40 slots, accessed only atomically during the launch.
        unsafe { atomics(vals_ref, counters.as_mut_ptr()) }
    })
    .unwrap();

    let mut want = init.clone();
    let sum_k: u64 = (0..n as u64).sum();
    want[0] = 5 + n as u64;
    want[1] = 7 + vals.iter().map(|&v| v as u64).sum::<u64>();
    want[2] = vals
        .iter()
        .fold(-3i32, |a, &v| a.wrapping_sub((v % 100) as i32)) as u32 as u64;
    want[3] = vals.iter().fold(11i64, |a, &v| a + (v as i64 - (1 << 31))) as u64;
    want[4] = f32s(0.5 + n as f32);
    want[5] = (0.25 + vals.iter().map(|&v| v as f64).sum::<f64>()).to_bits();
    want[6] = *vals.iter().min().unwrap() as u64;
    want[7] = *vals.iter().max().unwrap() as u64;
    want[8] = vals.iter().map(|&v| v as i32).min().unwrap() as u32 as u64;
    want[9] = vals.iter().map(|&v| v as i32).max().unwrap() as u32 as u64;
    want[10] = vals.iter().map(|&v| v as u64 * 3 + 1).min().unwrap();
    want[11] = vals.iter().map(|&v| v as u64 * 3 + 1).max().unwrap();
    want[12] = vals.iter().map(|&v| -(v as i64)).min().unwrap() as u64;
    want[13] = vals.iter().map(|&v| -(v as i64)).max().unwrap() as u64;
    want[14] = f32s(
        vals.iter()
            .map(|&v| v as f32 / 7.0)
            .fold(f32::INFINITY, f32::min),
    );
    want[15] = f32s(
        vals.iter()
            .map(|&v| v as f32 / 7.0)
            .fold(f32::NEG_INFINITY, f32::max),
    );
    want[16] = vals
        .iter()
        .map(|&v| v as f64 / 7.0)
        .fold(f64::INFINITY, f64::min)
        .to_bits();
    want[17] = vals
        .iter()
        .map(|&v| v as f64 / 7.0)
        .fold(f64::NEG_INFINITY, f64::max)
        .to_bits();
    want[18] = vals.iter().fold(0u32, |a, &v| a | 1 << (v % 32)) as u64;
    want[19] = vals.iter().fold(!0u32, |a, &v| a & !(1 << (v % 29))) as u64;
    want[20] = vals.iter().fold(0x1234u32, |a, &v| a ^ v) as u64;
    want[21] = vals.iter().fold(0u64, |a, &v| a | 1 << (v % 61));
    want[22] = vals.iter().fold(0i64, |a, &v| a ^ ((v as i64) << 20)) as u64;
    want[23] = 100 + n as u64;
    want[26] = n as u64;
    want[27] = want[7];
    want[28] = want[18];
    want[29] = vals.iter().fold(0u32, |a, &v| a ^ v) as u64;
    want[32] = 2 * n as u64;
    want[33] = (0.5 * n as f64).to_bits();
    // Swaps: the final value is some thread's k; Σ returned + final is exact.
    let lo = |x: u64| x as u32 as u64;
    assert!(lo(got[24]) < n as u64 && got[25] + lo(got[24]) == 999 + sum_k);
    let fswap = f64::from_bits(got[31]);
    assert!(fswap < n as f64 && f64::from_bits(got[30]) + fswap == 0.5 + sum_k as f64);
    for i in [24, 25, 30, 31] {
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
    for (b, chunk) in vals.chunks(threads).enumerate() {
        let want = [
            chunk.iter().filter(|&&v| v % 2 == 1).count() as u32,
            chunk.iter().all(|&v| v < 1 << 31) as u32,
            chunk.iter().any(|&v| v % 1000 == 0) as u32,
        ];
        assert_eq!(per_block[b * 3..b * 3 + 3], want, "block {b}");
    }
    for i in 0..n {
        assert_eq!(
            mirrored[i],
            vals[i - i % threads + (threads - 1 - i % threads)]
        );
        assert_eq!(lane_mirrored[i], vals[i - i % 32 + (31 - i % 32)] ^ 0x5555);
    }
}

fn check_dyn_shared(bytes: u32) {
    let (blocks, threads) = (3usize, 128usize);
    let per_block = DYN_HEADER + 3 * threads;
    let mut got = vec![POISON32; blocks * per_block];
    let out = GlobalMut::new(&mut got);
    let c = cfg((blocks as u32, 1, 1), (threads as u32, 1, 1)).with_dynamic_shared(bytes);
    // SAFETY: `out` is sized as the kernel documents; `bytes >= 4096 + 128`.
    emulator::launch(c, || unsafe { dyn_shared(out.as_mut_ptr()) }).unwrap();
    let b = bytes as usize;
    let mut want = Vec::new();
    for _ in 0..blocks {
        want.extend([
            0,
            0,
            0,
            0,
            (b / 4) as u32,
            ((b - DYN_OFFSET_B) / 8) as u32,
            (b - DYN_OFFSET_C) as u32,
            bytes,
        ]);
        for t in 0..threads {
            let m = threads - 1 - t;
            want.extend([m as u32 * 3, m as u32, (m as u8 ^ 0xA5) as u32]);
        }
    }
    assert_eq!(got, want);
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
    let sum: u32 = (0..MESSAGE_LEN as u32).map(|i| 3 * i + 1).sum();
    assert_eq!((result[0], result[2]), (sum, 0));
}

#[test]
fn block_leader_witness_in_a_3d_grid() {
    let mut got = vec![POISON32; 30];
    let out = GlobalMut::new(&mut got);
    emulator::launch(cfg((5, 3, 2), (64, 1, 1)), || block_ids(out.disjoint())).unwrap();
    assert_eq!(got, (0..30).collect::<Vec<u32>>());
}
