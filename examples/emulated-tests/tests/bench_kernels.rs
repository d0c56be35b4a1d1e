//! The GPU benchmark suite's Rust kernels (`benches/gpu/kernels`) under the
//! emulator, at shapes the benchmark itself never runs: partial edge tiles,
//! a wrong block shape, softmax rows that are not all alike.

use device_std::emulator::{self, EmulatorError, GlobalMut, LaunchConfig};
use emulated_tests::{emulate::POISON, reference};
use example_support::{count_mismatches, random_f32, rng};

/// `bench_kernels::transpose` of an `n × n` matrix, launched as `gpu-bench`
/// does but with `block` threads.
fn transpose(input: &[f32], n: usize, block: (u32, u32, u32)) -> Result<Vec<f32>, EmulatorError> {
    let mut t = vec![POISON; n * n];
    let out = GlobalMut::new(&mut t);
    let tiles = n.div_ceil(32) as u32;
    let cfg = LaunchConfig::new((tiles, tiles, 1), block);
    emulator::launch(cfg, || {
        bench_kernels::transpose(input, out.disjoint(), n as u32)
    })?;
    Ok(t)
}

#[test]
fn transpose_matches_the_cpu_with_whole_and_partial_tiles() {
    for (n, seed) in [(64, 41), (70, 42), (33, 43), (5, 44)] {
        let input = random_f32(&mut rng(seed), n * n, -1000.0, 1000.0);
        let got = transpose(&input, n, (32, 8, 1)).unwrap();
        let want = reference::transpose(&input, n, n);
        assert_eq!(
            count_mismatches("bench transpose", &got, &want, 0.0),
            0,
            "n = {n}"
        );
    }
}

#[test]
fn transpose_refuses_a_block_that_is_not_32_by_8_by_1() {
    let n = 64;
    let input = random_f32(&mut rng(45), n * n, -1.0, 1.0);
    // A z extent fails the launch first: the kernel is declared `dims = 2`.
    match transpose(&input, n, (32, 8, 2)) {
        Err(EmulatorError::InvalidLaunch(message)) => {
            assert!(message.contains("`#[kernel(dims = 2)]`"), "{message}")
        }
        other => panic!("expected InvalidLaunch, got {:?}", other.map(|_| ())),
    }
    for block in [(16, 8, 1), (32, 4, 1)] {
        match transpose(&input, n, block) {
            Err(EmulatorError::Panic { message, .. }) => {
                assert!(
                    message.contains("block_is_tile_shaped"),
                    "{block:?}: {message}"
                )
            }
            other => panic!("{block:?}: expected a panic, got {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn softmax_matches_the_f64_reference_on_rows_of_different_scales() {
    let cols = 4096;
    let mut r = rng(46);
    // Row k spans ±2^k, so the running maximum moves a lot in some rows.
    let input: Vec<f32> = (0..5)
        .flat_map(|k| random_f32(&mut r, cols, -(1 << k) as f32, (1 << k) as f32))
        .collect();
    let mut y = vec![POISON; input.len()];
    let out = GlobalMut::new(&mut y);
    let cfg = LaunchConfig::new((5, 1, 1), (256, 1, 1)).with_dynamic_shared((cols * 4) as u32);
    emulator::launch(cfg, || {
        bench_kernels::softmax(&input, out.disjoint(), cols as u32)
    })
    .unwrap();
    let want = reference::softmax_f64(&input, cols);
    let worst = reference::worst_relative_error(&y, &want);
    assert!(worst < 2e-5, "worst relative error {worst:e}");
}

/// Asserts that an emulated launch ended in a kernel panic; `what` names the case.
fn assert_panicked<T>(got: Result<T, EmulatorError>, what: &str) {
    assert!(
        matches!(got, Err(EmulatorError::Panic { .. })),
        "{what}: expected a panic, got {:?}",
        got.map(|_| ())
    );
}

/// Sixteen-byte-aligned storage, so a slice of it at offset `k` floats starts
/// 16-byte aligned exactly when `k % 4 == 0` (a host `Vec<f32>` is only 4-aligned).
#[repr(C, align(16))]
struct Aligned([f32; 4096]);

/// `bench_kernels::vecadd` on `a[ao..][..n] + b[bo..][..n]` into `c[co..][..n]`, with
/// `grid` blocks of 64 threads: `(got, want)`, or the launch's error.
fn vecadd_at(
    n: usize,
    (ao, bo, co): (usize, usize, usize),
    grid: u32,
    seed: u64,
) -> Result<(Vec<f32>, Vec<f32>), EmulatorError> {
    let mut r = rng(seed);
    let (mut a, mut b, mut c) = (
        Aligned([0.0; 4096]),
        Aligned([0.0; 4096]),
        Aligned([POISON; 4096]),
    );
    a.0[..ao + n].copy_from_slice(&random_f32(&mut r, ao + n, -100.0, 100.0));
    b.0[..bo + n].copy_from_slice(&random_f32(&mut r, bo + n, -100.0, 100.0));
    let (a, b) = (&a.0[ao..ao + n], &b.0[bo..bo + n]);
    let out = GlobalMut::new(&mut c.0[co..co + n]);
    emulator::launch(LaunchConfig::new((grid, 1, 1), (64, 1, 1)), || {
        bench_kernels::vecadd(a, b, out.disjoint())
    })?;
    let want: Vec<f32> = a.iter().zip(b).map(|(x, y)| x + y).collect();
    Ok((c.0[co..co + n].to_vec(), want))
}

#[test]
fn vecadd_matches_the_cpu_and_refuses_misaligned_buffers() {
    // (0, 0, 0): vectors and a tail; the others: a buffer not 16-byte aligned, which
    // `#[kernel(slice_align = 16)]` refuses unless it is empty.
    let offsets = [
        (0, 0, 0),
        (1, 1, 1),
        (0, 1, 0),
        (0, 0, 3),
        (2, 0, 2),
        (3, 1, 2),
    ];
    for (k, &o) in offsets.iter().enumerate() {
        for (n, grid) in [
            (0, 1),
            (1, 1),
            (3, 1),
            (4, 1),
            (1023, 1),
            (1024, 2),
            (3001, 3),
        ] {
            let what = format!("n = {n}, offsets (a, b, c) = {o:?}, grid {grid}");
            match vecadd_at(n, o, grid, 700 + k as u64) {
                Ok((got, want)) => {
                    assert!(o == (0, 0, 0) || n == 0, "{what}: ran misaligned");
                    assert_eq!(
                        count_mismatches("bench vecadd", &got, &want, 0.0),
                        0,
                        "{what}"
                    );
                }
                Err(EmulatorError::InvalidLaunch(m)) => {
                    assert!(o != (0, 0, 0) && n > 0, "{what}: refused: {m}");
                    assert!(m.contains("slice_align = 16"), "{what}: {m}");
                }
                Err(e) => panic!("{what}: {e:?}"),
            }
        }
    }
}

#[test]
fn vecadd_panics_on_a_short_input() {
    // `a` one element shorter than `c` (n = 66), with as many whole vectors (16): only
    // the length assertion keeps the vector loop from leaving element 65 unwritten.
    let (a, b) = (Aligned([1.0; 4096]), Aligned([2.0; 4096]));
    let mut c = Aligned([POISON; 4096]);
    let out = GlobalMut::new(&mut c.0[..66]);
    let got = emulator::launch(LaunchConfig::new((1, 1, 1), (64, 1, 1)), || {
        bench_kernels::vecadd(&a.0[..65], &b.0[..66], out.disjoint())
    });
    assert_panicked(got, "vecadd, `a` one element short");
}

/// `bench_kernels::saxpy` on `y[yo..][..n] += alpha · x[xo..][..n]` with `grid` blocks of
/// 64 threads, against the CPU bit for bit (`alpha * x + y`, two roundings: Rust does
/// not contract it into an `fma`, on the GPU either): at the aligned path's offsets
/// `(0, 0)` and the general path's.
#[test]
fn saxpy_matches_the_cpu_aligned_and_misaligned() {
    let alpha = 1.75f32;
    for (k, (xo, yo)) in [(0, 0), (1, 1), (0, 2), (3, 0)].into_iter().enumerate() {
        for (n, grid) in [(0, 1), (1, 1), (4, 1), (1023, 1), (3001, 3)] {
            let mut r = rng(800 + k as u64);
            let (mut x, mut y) = (Aligned([0.0; 4096]), Aligned([POISON; 4096]));
            x.0[..xo + n].copy_from_slice(&random_f32(&mut r, xo + n, -100.0, 100.0));
            y.0[yo..yo + n].copy_from_slice(&random_f32(&mut r, n, -100.0, 100.0));
            let want: Vec<f32> = (0..n).map(|i| alpha * x.0[xo + i] + y.0[yo + i]).collect();
            let xs = &x.0[xo..xo + n];
            let out = GlobalMut::new(&mut y.0[yo..yo + n]);
            emulator::launch(LaunchConfig::new((grid, 1, 1), (64, 1, 1)), || {
                bench_kernels::saxpy(alpha, xs, out.disjoint())
            })
            .unwrap();
            assert_eq!(
                count_mismatches("bench saxpy", &y.0[yo..yo + n], &want, 0.0),
                0,
                "n = {n}, offsets (x, y) = ({xo}, {yo}), grid {grid}"
            );
        }
    }
}

#[test]
fn saxpy_panics_on_a_short_input() {
    // `x` one element shorter than `y` (n = 66) with as many whole vectors: only the
    // length guard keeps the aligned path from leaving element 65 unwritten.
    let x = Aligned([1.0; 4096]);
    let mut y = Aligned([2.0; 4096]);
    let out = GlobalMut::new(&mut y.0[..66]);
    let got = emulator::launch(LaunchConfig::new((1, 1, 1), (64, 1, 1)), || {
        bench_kernels::saxpy(3.0, &x.0[..65], out.disjoint())
    });
    assert_panicked(got, "saxpy, `x` one element short");
}

/// `bench_kernels::reduce_sum` of `x[o..][..n]` with `grid` blocks of `block` threads.
/// The values are small integers, so every order of the additions gives the same sum
/// exactly.
fn reduce_sum_at(n: usize, o: usize, grid: u32, block: u32) -> (f32, f32) {
    let mut x = Aligned([0.0; 4096]);
    for (k, v) in x.0.iter_mut().enumerate() {
        *v = ((k * 7919) % 23) as f32 - 11.0;
    }
    let xs = &x.0[o..o + n];
    let mut sum = [0.0f32];
    let out = GlobalMut::new(&mut sum);
    emulator::launch(LaunchConfig::new((grid, 1, 1), (block, 1, 1)), || {
        // `out` is one f32 that the kernel touches only atomically.
        bench_kernels::reduce_sum(xs, out.as_mut_ptr())
    })
    .unwrap();
    (sum[0], xs.iter().sum())
}

#[test]
fn reduce_sum_matches_the_cpu_aligned_and_misaligned() {
    // Offset 0: 16-byte vectors and a tail; 1..=3: every element in the scalar tail.
    for o in 0..4 {
        for (n, grid, block) in [
            (0, 1, 32),
            (1, 1, 32),
            (3, 1, 64),
            (4, 1, 64),
            (5, 2, 32),
            (1023, 1, 1024),
            (3001, 3, 96),
            (4092, 7, 256),
        ] {
            let (got, want) = reduce_sum_at(n, o, grid, block);
            assert_eq!(got, want, "n = {n}, offset {o}, grid {grid}, block {block}");
        }
    }
}

/// `bench_kernels::histogram` of `data` with `grid` blocks of `block` threads.
fn bench_histogram(data: &[u8], grid: u32, block: u32) -> Vec<u32> {
    let mut bins = vec![0u32; 256];
    let out = GlobalMut::new(&mut bins);
    emulator::launch(LaunchConfig::new((grid, 1, 1), (block, 1, 1)), || {
        // `bins` holds 256 u32s that the kernel touches only atomically.
        bench_kernels::histogram(data, out.as_mut_ptr())
    })
    .unwrap();
    bins
}

#[test]
fn histogram_matches_the_cpu_at_every_16_byte_offset() {
    #[repr(C, align(16))]
    struct Bytes([u8; 4096]);
    let mut data = Bytes([0; 4096]);
    for (k, b) in data.0.iter_mut().enumerate() {
        *b = (k * 131 % 251) as u8 ^ (k >> 4) as u8;
    }
    // Offset 0: vectors and a tail; the others: counted byte by byte.
    for o in 0..16 {
        for (n, grid, block) in [
            (0, 1, 64),
            (15, 1, 64),
            (16, 1, 32),
            (1000, 2, 96),
            (4000, 3, 256),
        ] {
            let s = &data.0[o..o + n.min(4096 - o)];
            let mut want = vec![0u32; 256];
            for &b in s {
                want[b as usize] += 1;
            }
            assert_eq!(
                bench_histogram(s, grid, block),
                want,
                "n = {}, offset {o}, grid {grid}, block {block}",
                s.len()
            );
        }
    }
}

/// `bench_kernels::sgemm` of two `n × n` matrices starting `o` floats into 16-byte
/// aligned storage.
fn bench_sgemm(a: &[f32], b: &[f32], n: usize) -> Result<Vec<f32>, EmulatorError> {
    let mut c = vec![POISON; n * n];
    let out = GlobalMut::new(&mut c);
    let tiles = (n / 128).max(1) as u32;
    emulator::launch(LaunchConfig::new((tiles, tiles, 1), (256, 1, 1)), || {
        bench_kernels::sgemm(a, b, out.disjoint(), n as u32)
    })?;
    Ok(c)
}

#[test]
fn sgemm_matches_the_cpu_and_refuses_misaligned_or_short_inputs() {
    #[repr(C, align(16))]
    struct Matrix([f32; 128 * 128 + 4]);
    let n = 128;
    let mut r = rng(47);
    let (mut a, mut b) = (
        Box::new(Matrix([0.0; 128 * 128 + 4])),
        Box::new(Matrix([0.0; 128 * 128 + 4])),
    );
    a.0.copy_from_slice(&random_f32(&mut r, n * n + 4, -1.0, 1.0));
    b.0.copy_from_slice(&random_f32(&mut r, n * n + 4, -1.0, 1.0));
    let got = bench_sgemm(&a.0[..n * n], &b.0[..n * n], n).unwrap();
    let (a0, b0) = (&a.0[..n * n], &b.0[..n * n]);
    let mut worst = 0.0f64;
    for i in 0..n {
        for j in 0..n {
            let want: f64 = (0..n)
                .map(|k| a0[i * n + k] as f64 * b0[k * n + j] as f64)
                .sum();
            worst = worst.max((got[i * n + j] as f64 - want).abs());
        }
    }
    assert!(worst < 1e-4, "worst absolute error {worst:e}");
    // A misaligned input (every element in the scalar rest), a short one, and a
    // ragged one (whole vectors but a rest): each a panic, not a wrong product.
    for (ao, alen, bo) in [
        (1, n * n, 0),
        (0, n * n, 2),
        (0, n * n - 4, 0),
        (0, n * n + 1, 0),
    ] {
        assert_panicked(
            bench_sgemm(&a.0[ao..ao + alen], &b.0[bo..bo + n * n], n),
            &format!("a at {ao} ({alen} long), b at {bo}"),
        );
    }
}

#[test]
fn softmax_panics_on_a_short_input() {
    // Two rows of 256 columns but 511 floats: row 1 reads no row at all (its slice
    // is empty), and the check after the loop must panic.
    let cols = 256;
    let input = Aligned([0.5; 4096]);
    let mut y = Aligned([POISON; 4096]);
    let out = GlobalMut::new(&mut y.0[..2 * cols]);
    let cfg = LaunchConfig::new((2, 1, 1), (256, 1, 1)).with_dynamic_shared((cols * 4) as u32);
    let got = emulator::launch(cfg, || {
        bench_kernels::softmax(&input.0[..2 * cols - 1], out.disjoint(), cols as u32)
    });
    assert_panicked(got, "softmax, `input` one element short");
}

#[test]
fn softmax_refuses_misaligned_buffers() {
    // Rows are whole vectors from element 0: an input or output one float past a
    // 16-byte boundary would shift every row if a head were split off; the kernel
    // must panic instead of writing shifted rows.
    let cols = 256;
    let input = Aligned([0.5; 4096]);
    let cfg = LaunchConfig::new((2, 1, 1), (256, 1, 1)).with_dynamic_shared((cols * 4) as u32);
    for (io, oo) in [(1, 0), (0, 1)] {
        let mut y = Aligned([POISON; 4096]);
        let out = GlobalMut::new(&mut y.0[oo..oo + 2 * cols]);
        let got = emulator::launch(cfg, || {
            bench_kernels::softmax(&input.0[io..io + 2 * cols], out.disjoint(), cols as u32)
        });
        assert_panicked(got, &format!("offsets (input, output) = ({io}, {oo})"));
    }
}
