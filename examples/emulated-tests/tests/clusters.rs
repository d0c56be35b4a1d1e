//! Thread-block clusters under the emulator: the registers, the cluster barrier,
//! distributed shared memory (the benchmark's `cluster_histogram` against the CPU), and
//! the misuse the GPU would hang on or corrupt.

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

#[test]
fn cluster_histogram_matches_the_cpu() {
    let mut r = rng(31);
    for n in [100_003usize, 4096, 17] {
        let data: Vec<u8> = (0..n)
            .map(|_| if r.random_bool(0.25) { 7 } else { r.random() })
            .collect();
        let mut want = vec![0u32; 256];
        for &b in &data {
            want[b as usize] += 1;
        }
        let mut bins = vec![0u32; 256];
        let o = GlobalMut::new(&mut bins);
        emulator::launch(
            LaunchConfig::new((6, 1, 1), (64, 1, 1)).with_cluster(
                bench_kernels::CLUSTER_CTAS,
                1,
                1,
            ),
            || bench_kernels::cluster_histogram(&data, o.as_mut_ptr()),
        )
        .unwrap();
        assert_eq!(bins, want, "n = {n}");
    }
}

#[test]
fn a_cluster_launch_that_does_not_tile_the_grid_is_refused() {
    let mut bins = vec![0u32; 256];
    let o = GlobalMut::new(&mut bins);
    let err = emulator::launch(
        LaunchConfig::new((5, 1, 1), (64, 1, 1)).with_cluster(2, 1, 1),
        || bench_kernels::cluster_histogram(&[], o.as_mut_ptr()),
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
