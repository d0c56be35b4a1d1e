//! The throughput bar: a 2^20-thread vecadd and a 256×256
//! block-tiled sgemm finish in seconds (on 2 cores, in the test profile),
//! with every element checked.

use device_std::emulator::{self, GlobalMut, LaunchConfig};
use device_std::{kernel, thread, DisjointSlice, Index2D, SharedArray};
use emulated_tests::{emulate, reference};
use example_support::{random_f32, rng};
use std::time::{Duration, Instant};

/// Generous: the point is "seconds, not minutes"; both take well under 1 s
/// on the 2-core CI machine.
const LIMIT: Duration = Duration::from_secs(20);

#[test]
fn vecadd_of_2_pow_20_threads() {
    let mut r = rng(41);
    let n = 1 << 20;
    let (a, b) = (
        random_f32(&mut r, n, -1000.0, 1000.0),
        random_f32(&mut r, n, -1000.0, 1000.0),
    );
    let t = Instant::now();
    let c = emulate::vecadd(&a, &b).unwrap();
    let took = t.elapsed();
    println!("vecadd, 2^20 threads: {took:?}");
    assert_eq!(c, reference::vecadd(&a, &b));
    assert!(took < LIMIT, "{took:?}");
}

const N: usize = 256;
const T: usize = 16;

/// `c = a · b` for `N × N` row-major matrices, one `T × T` tile of `c` per
/// block of `T × T` threads, through two shared tiles.
#[kernel]
pub fn sgemm(a: &[f32], b: &[f32], mut c: DisjointSlice<f32, Index2D<N>>) {
    let at = SharedArray::<f32, { T * T }>::new();
    let bt = SharedArray::<f32, { T * T }>::new();
    let (tx, ty) = (
        thread::threadIdx_x() as usize,
        thread::threadIdx_y() as usize,
    );
    let (row, col) = (thread::global_y(), thread::global_x());
    let mut acc = 0.0f32;
    let mut k0 = 0;
    while k0 < N {
        at.write(ty * T + tx, a[row * N + k0 + tx]);
        bt.write(ty * T + tx, b[(k0 + ty) * N + col]);
        thread::sync_threads();
        for k in 0..T {
            acc += at.read(ty * T + k) * bt.read(k * T + tx);
        }
        thread::sync_threads();
        k0 += T;
    }
    if let Some(i) = thread::index_2d::<N>() {
        if let Some(out) = c.get_mut(&i) {
            *out = acc;
        }
    }
}

#[test]
fn block_tiled_sgemm_256() {
    let mut r = rng(42);
    let (a, b) = (
        random_f32(&mut r, N * N, -1.0, 1.0),
        random_f32(&mut r, N * N, -1.0, 1.0),
    );
    let mut c = vec![f32::NAN; N * N];
    let out = GlobalMut::new(&mut c);
    let cfg = LaunchConfig::new(((N / T) as u32, (N / T) as u32, 1), (T as u32, T as u32, 1));
    let t = Instant::now();
    let stats = emulator::launch(cfg, || sgemm(&a, &b, out.disjoint())).unwrap();
    let took = t.elapsed();
    println!(
        "sgemm 256x256, 65536 threads, {} barriers: {took:?}",
        stats.barriers
    );
    assert_eq!(
        stats.barriers,
        2 * (N / T) as u64 * ((N / T) * (N / T)) as u64
    );
    // The same sums in the same order: bit-identical.
    for i in 0..N {
        for j in 0..N {
            let mut acc = 0.0f32;
            for k in 0..N {
                acc += a[i * N + k] * b[k * N + j];
            }
            assert_eq!(c[i * N + j].to_bits(), acc.to_bits(), "c[{i}][{j}]");
        }
    }
    assert!(took < LIMIT, "{took:?}");
}
