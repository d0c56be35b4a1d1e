//! Thread-block clusters under the emulator: the registers, the cluster barrier,
//! distributed shared memory (the benchmark's `cluster_histogram_wide` and
//! `softmax_cluster` against the CPU), and the misuse the GPU would hang on or corrupt.

// Kernels here take raw pointers; the launch is their contract, as on the GPU.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use device_std::emulator::{self, GlobalMut, LaunchConfig};
use device_std::{cluster, kernel, thread, DisjointSlice, SharedArray};
use example_support::rng;
use rand::Rng;

/// Per block, 8 words: cluster id x/y, cluster count x, CTA id x/y in the cluster,
/// cluster dim x, rank, CTA count.
#[kernel]
pub fn cluster_registers(out: *mut u32) {
    if thread::thread_in_block() == 0 {
        let b = (thread::blockIdx_y() * thread::gridDim_x() + thread::blockIdx_x()) as usize;
        let words = [
            cluster::cluster_id_x(),
            cluster::cluster_id_y(),
            cluster::cluster_count_x(),
            cluster::cta_id_x(),
            cluster::cta_id_y(),
            cluster::cluster_dim_x(),
            cluster::cta_rank(),
            cluster::cta_count(),
        ];
        for (k, w) in words.into_iter().enumerate() {
            // SAFETY: the test passes 8 words per block; block b writes its own.
            unsafe { out.add(8 * b + k).write(w) };
        }
    }
}

#[test]
fn cluster_registers_follow_the_launch_shape() {
    let (grid, cl) = ((4u32, 2u32), (2u32, 2u32));
    let blocks = (grid.0 * grid.1) as usize;
    let mut out = vec![u32::MAX; 8 * blocks];
    let o = GlobalMut::new(&mut out);
    emulator::launch(
        LaunchConfig::new((grid.0, grid.1, 1), (32, 1, 1)).with_cluster(cl.0, cl.1, 1),
        || cluster_registers(o.as_mut_ptr()),
    )
    .unwrap();
    for by in 0..grid.1 {
        for bx in 0..grid.0 {
            let b = (by * grid.0 + bx) as usize;
            let (cx, cy) = (bx % cl.0, by % cl.1);
            assert_eq!(
                out[8 * b..8 * b + 8],
                [
                    bx / cl.0,
                    by / cl.1,
                    grid.0 / cl.0,
                    cx,
                    cy,
                    cl.0,
                    cx + cy * cl.0,
                    cl.0 * cl.1
                ],
                "block ({bx}, {by})"
            );
        }
    }
}

/// The 65,536-bin histograms of `u16` values (bins over a cluster, in two passes, in
/// global memory) against the CPU, at lengths whose vector body starts unaligned
/// (a slice from element 1), is empty, or is all tail. Skewed data (a quarter one value)
/// puts many atomics on one bin of each half.
#[test]
fn wide_histograms_match_the_cpu() {
    use bench_kernels::{WIDE_BINS, WIDE_SHARED_BYTES};
    let mut r = rng(32);
    for n in [50_001usize, 9, 0] {
        let all: Vec<u16> = (0..n + 1)
            .map(|_| {
                if r.random_bool(0.25) {
                    40_000
                } else {
                    r.random()
                }
            })
            .collect();
        let data = &all[1..];
        let mut want = vec![0u32; WIDE_BINS];
        for &v in data {
            want[v as usize] += 1;
        }
        let cluster = LaunchConfig::new((4, 1, 1), (128, 1, 1))
            .with_cluster(2, 1, 1)
            .with_dynamic_shared(WIDE_SHARED_BYTES);
        let halves =
            LaunchConfig::new((2, 2, 1), (128, 1, 1)).with_dynamic_shared(WIDE_SHARED_BYTES);
        let global = LaunchConfig::new((3, 1, 1), (64, 1, 1));
        type K = fn(&[u16], *mut u32);
        let kernels: [(&str, LaunchConfig, K); 3] = [
            ("cluster", cluster, bench_kernels::cluster_histogram_wide),
            ("halves", halves, bench_kernels::histogram_wide_halves),
            ("global", global, bench_kernels::histogram_wide_global),
        ];
        for (name, cfg, kernel) in kernels {
            let mut bins = vec![0u32; WIDE_BINS];
            let o = GlobalMut::new(&mut bins);
            emulator::launch(cfg, || kernel(data, o.as_mut_ptr())).unwrap();
            assert!(bins == want, "{name}, n = {n}");
        }
    }
}

#[test]
fn a_cluster_launch_that_does_not_tile_the_grid_is_refused() {
    let mut bins = vec![0u32; bench_kernels::WIDE_BINS];
    let o = GlobalMut::new(&mut bins);
    let err = emulator::launch(
        LaunchConfig::new((5, 1, 1), (64, 1, 1))
            .with_cluster(2, 1, 1)
            .with_dynamic_shared(bench_kernels::WIDE_SHARED_BYTES),
        || bench_kernels::cluster_histogram_wide(&[], o.as_mut_ptr()),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid launch: grid (5, 1, 1) is not a whole number of clusters (2, 1, 1): each grid dimension must be a multiple of the cluster's"
    );
}

/// Fault `which`: 0 waits without arriving; 1 reads the other CTA's array after that
/// CTA exited (no cluster barrier before the owner's exit); 2 arrives twice.
#[kernel]
pub fn cluster_faults(which: u32, mut out: DisjointSlice<u32>) {
    let a = SharedArray::<u32, 32>::new();
    let t = thread::thread_in_block() as usize;
    a.write(t, t as u32);
    match which {
        0 => cluster::wait(),
        1 => {
            cluster::sync();
            if cluster::cta_rank() == 0 {
                // Rank 1 does not wait for this read: it may have exited.
                let v = a.in_cta(1).read(t);
                if let Some(o) = out.get_mut(thread::index_1d()) {
                    *o = v;
                }
            }
        }
        _ => {
            cluster::arrive();
            cluster::arrive();
        }
    }
}

fn run_fault(which: u32) -> String {
    let mut out = vec![0u32; 64];
    let o = GlobalMut::new(&mut out);
    emulator::launch(
        LaunchConfig::new((2, 1, 1), (32, 1, 1)).with_cluster(2, 1, 1),
        || cluster_faults(which, o.disjoint()),
    )
    .map(|_| ())
    .unwrap_err()
    .to_string()
}

#[test]
fn cluster_misuse_is_reported_with_the_thread() {
    let err = run_fault(0);
    assert!(
        err.starts_with("block (0, 0, 0) thread (0, 0, 0): ")
            && err.contains("waits at the cluster barrier without having arrived"),
        "{err}"
    );
    let err = run_fault(1);
    assert!(
        err.starts_with("block (0, 0, 0) thread (0, 0, 0): accesses shared memory of CTA rank 1 of its cluster, which has exited"),
        "{err}"
    );
    let err = run_fault(2);
    assert!(
        err.contains("arrives at the cluster barrier again without waiting"),
        "{err}"
    );
}

/// Each CTA writes its rank into the other's array after a barrier, then reads its own
/// after a second one: distributed shared memory in both directions.
#[kernel]
pub fn cluster_exchange(mut out: DisjointSlice<u32>) {
    let a = SharedArray::<u32, 64>::new();
    let t = thread::thread_in_block() as usize;
    let rank = cluster::cta_rank();
    let peer = (rank + 1) % cluster::cta_count();
    cluster::sync();
    a.in_cta(peer).write(t, 100 * rank + t as u32);
    cluster::sync();
    let v = a.read(t);
    if let Some(o) = out.get_mut(thread::index_1d()) {
        *o = v;
    }
    cluster::sync();
}

#[test]
fn distributed_shared_memory_moves_values_between_the_ctas_of_a_cluster() {
    let mut out = vec![u32::MAX; 4 * 64];
    let o = GlobalMut::new(&mut out);
    emulator::launch(
        LaunchConfig::new((4, 1, 1), (64, 1, 1)).with_cluster(4, 1, 1),
        || cluster_exchange(o.disjoint()),
    )
    .unwrap();
    for b in 0..4u32 {
        let writer = (b + 3) % 4;
        for t in 0..64u32 {
            assert_eq!(
                out[(64 * b + t) as usize],
                100 * writer + t,
                "block {b} thread {t}"
            );
        }
    }
}

#[test]
fn without_a_cluster_launch_every_cta_is_a_cluster_of_one() {
    let mut out = vec![u32::MAX; 8 * 3];
    let o = GlobalMut::new(&mut out);
    emulator::launch(LaunchConfig::new((3, 1, 1), (32, 1, 1)), || {
        cluster_registers(o.as_mut_ptr())
    })
    .unwrap();
    for b in 0..3u32 {
        assert_eq!(
            out[8 * b as usize..8 * b as usize + 8],
            [b, 0, 3, 0, 0, 1, 0, 1]
        );
    }
}

/// Thread 0 of rank 0 arrives at the cluster barrier and returns without waiting; thread 1
/// of rank 1 writes its own shared word before arriving, which thread 0 of rank 1 reads
/// after the barrier (so it must see 42: the barrier completes only when every thread
/// arrived, and the early leaver counts once).
#[kernel]
pub fn arrive_then_exit(out: *mut u32) {
    let a = SharedArray::<u32, 2>::new();
    let t = thread::thread_in_block();
    let rank = cluster::cta_rank();
    if rank == 0 && t == 0 {
        cluster::arrive();
        return;
    }
    if rank == 1 && t == 1 {
        a.write(1, 42);
    }
    cluster::sync();
    if rank == 1 && t == 0 {
        // SAFETY: the test passes one word; one thread writes it.
        unsafe { out.write(a.read(1)) };
    }
}

#[test]
fn a_thread_that_arrives_then_exits_counts_once_at_the_cluster_barrier() {
    let mut out = vec![0u32; 1];
    let o = GlobalMut::new(&mut out);
    emulator::launch(
        LaunchConfig::new((2, 1, 1), (2, 1, 1)).with_cluster(2, 1, 1),
        || arrive_then_exit(o.as_mut_ptr()),
    )
    .unwrap();
    assert_eq!(out, [42]);
}

/// Rank 0 declares a scratch array that rank 1 never reaches, then both declare `buf`
/// and read each other's: on the GPU static shared memory has one layout for every CTA,
/// so `buf.in_cta(peer)` is the peer's `buf` whatever each CTA declared first.
#[kernel]
pub fn dsmem_with_rank_dependent_declarations(out: *mut u32) {
    let t = thread::thread_in_block() as usize;
    let rank = cluster::cta_rank();
    if rank == 0 {
        let scratch = SharedArray::<u32, 64>::new();
        scratch.write(t, 7);
    }
    let buf = SharedArray::<u32, 32>::new();
    buf.write(t, 100 * rank + t as u32);
    cluster::sync();
    let v = buf.in_cta(1 - rank).read(t);
    cluster::sync();
    // SAFETY: the test passes 64 words; each thread writes its own.
    unsafe { out.add(32 * rank as usize + t).write(v) };
}

#[test]
fn distributed_shared_memory_finds_the_peer_array_whatever_the_declaration_order() {
    let mut out = vec![u32::MAX; 64];
    let o = GlobalMut::new(&mut out);
    emulator::launch(
        LaunchConfig::new((2, 1, 1), (32, 1, 1)).with_cluster(2, 1, 1),
        || dsmem_with_rank_dependent_declarations(o.as_mut_ptr()),
    )
    .unwrap();
    let want: Vec<u32> = (0..32).map(|t| 100 + t).chain(0..32).collect();
    assert_eq!(out, want);
}

/// Per block: rank, CTA id x/y/z in the cluster, cluster id x/y/z, and `rank` read back
/// from CTA (0, 0, 0) of the cluster through distributed shared memory.
#[kernel]
pub fn cluster_3d(out: *mut u32) {
    let a = SharedArray::<u32, 1>::new();
    let t = thread::thread_in_block();
    if t == 0 {
        a.write(0, cluster::cta_rank());
    }
    cluster::sync();
    let leader = a.in_cta(0).read(0);
    cluster::sync();
    if t == 0 {
        let b = ((thread::blockIdx_z() * thread::gridDim_y() + thread::blockIdx_y())
            * thread::gridDim_x()
            + thread::blockIdx_x()) as usize;
        let [cx, cy, cz] = cluster::cta_id();
        let [kx, ky, kz] = cluster::cluster_id();
        let words = [cluster::cta_rank(), cx, cy, cz, kx, ky, kz, leader];
        for (k, w) in words.into_iter().enumerate() {
            // SAFETY: 8 words per block; block b writes its own.
            unsafe { out.add(8 * b + k).write(w) };
        }
    }
}

#[test]
fn clusters_in_three_dimensions_rank_x_fastest() {
    let (g, c) = ([2u32, 4, 4], [1u32, 2, 4]);
    let blocks = (g[0] * g[1] * g[2]) as usize;
    let mut out = vec![u32::MAX; 8 * blocks];
    let o = GlobalMut::new(&mut out);
    emulator::launch(
        LaunchConfig::new((g[0], g[1], g[2]), (32, 1, 1)).with_cluster(c[0], c[1], c[2]),
        || cluster_3d(o.as_mut_ptr()),
    )
    .unwrap();
    for z in 0..g[2] {
        for y in 0..g[1] {
            for x in 0..g[0] {
                let b = ((z * g[1] + y) * g[0] + x) as usize;
                let (cx, cy, cz) = (x % c[0], y % c[1], z % c[2]);
                assert_eq!(
                    out[8 * b..8 * b + 8],
                    [
                        cx + c[0] * (cy + c[1] * cz),
                        cx,
                        cy,
                        cz,
                        x / c[0],
                        y / c[1],
                        z / c[2],
                        0
                    ],
                    "block ({x}, {y}, {z})"
                );
            }
        }
    }
}

/// The odd lanes of each warp call `elect_one` while the even ones go on to the block
/// barrier: `elect.sync` with the full mask waits for all 32 lanes, so on the GPU this
/// hangs (or is undefined); the emulator must say so rather than elect nobody.
#[kernel]
pub fn elect_in_a_branch(out: *mut u32) {
    let t = thread::thread_in_block();
    if t % 2 == 1 && cluster::elect_one() {
        // SAFETY: one word; the race is the point of the test.
        unsafe { out.write(t) };
    }
    thread::sync_threads();
}

#[test]
fn elect_one_from_divergent_lanes_is_reported() {
    let mut out = vec![u32::MAX; 1];
    let o = GlobalMut::new(&mut out);
    let err = emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
        elect_in_a_branch(o.as_mut_ptr())
    })
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("deadlock in block (0, 0, 0): ")
            && err.contains("wait at elect_one")
            && err.contains("lanes {0, 2, 4,"),
        "{err}"
    );
}

/// Lane 0 exits early; the 31 others of warp 0 elect one, the lowest of them (thread
/// 1); the partial warp 1 (8 lanes) elects thread 32. Each elected lane adds its
/// thread index to its warp's word, so a second election in a warp shows.
#[kernel]
pub fn elect_after_an_exit(out: *mut u32) {
    let t = thread::thread_in_block();
    if t == 0 {
        return;
    }
    if cluster::elect_one() {
        // SAFETY: two words, one per warp; the emulator runs the lanes of a block on
        // one OS thread, so the read-modify-write is not torn.
        unsafe {
            let w = out.add(t as usize / 32);
            w.write(w.read() + t);
        }
    }
}

#[test]
fn elect_one_elects_the_lowest_live_lane() {
    let mut out = vec![0u32; 2];
    let o = GlobalMut::new(&mut out);
    emulator::launch(LaunchConfig::new((1, 1, 1), (40, 1, 1)), || {
        elect_after_an_exit(o.as_mut_ptr())
    })
    .unwrap();
    assert_eq!(out, [1, 32]);
}

/// `cluster_exchange` with one of its cluster barriers replaced by a block barrier
/// (`skip` 1: the one between the remote writes and the local reads; 2: the one between
/// each CTA's own first write of its array and the peer's remote write; 0: none).
#[kernel]
pub fn cluster_exchange_racy(skip: u32, mut out: DisjointSlice<u32>) {
    let a = SharedArray::<u32, 64>::new();
    let t = thread::thread_in_block() as usize;
    let rank = cluster::cta_rank();
    let peer = (rank + 1) % cluster::cta_count();
    a.write(t, 7);
    if skip == 2 {
        thread::sync_threads();
    } else {
        cluster::sync();
    }
    a.in_cta(peer).write(t, 100 * rank + t as u32);
    if skip == 1 {
        thread::sync_threads();
    } else {
        cluster::sync();
    }
    let v = a.read(t);
    if let Some(o) = out.get_mut(thread::index_1d()) {
        *o = v;
    }
    cluster::sync();
}

#[test]
fn distributed_shared_memory_races_are_reported() {
    let run = |skip: u32| {
        let mut out = vec![u32::MAX; 2 * 64];
        let o = GlobalMut::new(&mut out);
        emulator::launch(
            LaunchConfig::new((2, 1, 1), (64, 1, 1)).with_cluster(2, 1, 1),
            || cluster_exchange_racy(skip, o.disjoint()),
        )
        .map(|_| out)
    };
    // Both cluster barriers: every value arrives, no race.
    let out = run(0).unwrap();
    for b in 0..2u32 {
        for t in 0..64u32 {
            assert_eq!(out[(64 * b + t) as usize], 100 * ((b + 1) % 2) + t);
        }
    }
    // A block barrier does not order the peer's remote write and the local read (the
    // shadow meets whichever comes second in the schedule: the read or the write).
    let err = run(1).unwrap_err().to_string();
    assert!(
        (err.contains("read after write") || err.contains("write after read"))
            && err.contains("CTA rank")
            && err.contains("cluster::sync"),
        "{err}"
    );
    // Nor the owner's own accesses before the peer's remote write (which one the shadow
    // meets first depends on the schedule: the owner's write or its later read).
    let err = run(2).unwrap_err().to_string();
    assert!(
        err.contains("data race (") && err.contains("CTA rank") && err.contains("cluster::sync"),
        "{err}"
    );
}

/// The wide-row softmax three ways (`bench_kernels::softmax_wide`: over a cluster of 8
/// through distributed shared memory, split in 8 without a cluster, one block per row)
/// against an f64 CPU reference, every element within 1e-5 relative, outputs and states
/// poisoned first. Rows of 256 floats: 8 vectors per part, blocks of 64 threads, so some
/// threads have no vector.
#[test]
fn wide_softmax_matches_the_cpu() {
    use bench_kernels::{
        softmax_cluster, softmax_split_finish, softmax_split_stats, SOFTMAX_CLUSTER_PARTS,
    };
    let (rows, cols) = (3usize, 256usize);
    let parts = SOFTMAX_CLUSTER_PARTS;
    let mut r = rng(33);
    let input: Vec<f32> = (0..rows * cols)
        .map(|_| r.random_range(-8.0..8.0))
        .collect();
    let want: Vec<f64> = input
        .chunks(cols)
        .flat_map(|x| {
            let m = x
                .iter()
                .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
            let s: f64 = x.iter().map(|&v| (f64::from(v) - m).exp()).sum();
            x.iter().map(move |&v| (f64::from(v) - m).exp() / s)
        })
        .collect();
    let check = |what: &str, got: &[f32]| {
        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (f64::from(g) - w).abs() <= 1e-5 * w,
                "{what}: element {i} = {g}, want {w}"
            );
        }
    };
    let c = cols as u32;

    let mut out = vec![f32::NAN; rows * cols];
    let o = GlobalMut::new(&mut out);
    let cfg = LaunchConfig::new((rows as u32 * parts, 1, 1), (64, 1, 1))
        .with_cluster(parts, 1, 1)
        .with_dynamic_shared(c / parts * 4);
    emulator::launch(cfg, || softmax_cluster(&input, o.disjoint(), c)).unwrap();
    check("cluster of 8", &out);

    for split in [parts, 1] {
        let states = rows * split as usize;
        let (mut maxes, mut sums) = (vec![f32::NAN; states], vec![f32::NAN; states]);
        let mut out = vec![f32::NAN; rows * cols];
        let cfg = LaunchConfig::new((states as u32, 1, 1), (64, 1, 1));
        {
            let (m, s) = (GlobalMut::new(&mut maxes), GlobalMut::new(&mut sums));
            emulator::launch(cfg, || {
                softmax_split_stats(&input, m.disjoint(), s.disjoint(), c, split)
            })
            .unwrap();
        }
        let o = GlobalMut::new(&mut out);
        emulator::launch(cfg, || {
            softmax_split_finish(&input, &maxes, &sums, o.disjoint(), c, split)
        })
        .unwrap();
        check(&format!("split in {split}"), &out);
    }
}
