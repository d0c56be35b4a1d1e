//! Tensor-core `mma.sync` under the emulator: the fragment layouts of the PTX ISA
//! (checked element by element) and `mma_gemm`'s `gemm_bf16` against an `f64` CPU
//! reference at square and ragged sizes, output poisoned first.

use device_std::emulator::{self, GlobalMut, LaunchConfig};
use device_std::mma::{Accum, FragA, FragB};
use device_std::{bf16, f16};
use emulated_tests::emulate::POISON;
use example_support::rng;
use rand::Rng;

#[test]
fn fragment_coordinates_cover_each_tile_once() {
    let mut a = [[0u32; 16]; 16];
    let mut b = [[0u32; 8]; 16];
    let mut c = [[0u32; 8]; 16];
    for lane in 0..32 {
        for i in 0..8 {
            let (r, col) = FragA::<bf16>::coords(lane, i);
            a[r][col] += 1;
        }
        for i in 0..4 {
            let (r, col) = FragB::<f16>::coords(lane, i);
            b[r][col] += 1;
            let (r, col) = Accum::coords(lane, i);
            c[r][col] += 1;
        }
    }
    assert!(a.iter().flatten().all(|&x| x == 1));
    assert!(b.iter().flatten().all(|&x| x == 1));
    assert!(c.iter().flatten().all(|&x| x == 1));
    // Spot values from the PTX ISA's figures: lane 5 is group 1, thread 1.
    assert_eq!(FragA::<bf16>::coords(5, 0), (1, 2));
    assert_eq!(FragA::<bf16>::coords(5, 3), (9, 3));
    assert_eq!(FragA::<bf16>::coords(5, 6), (9, 10));
    assert_eq!(FragB::<bf16>::coords(5, 3), (11, 1));
    assert_eq!(Accum::coords(5, 2), (9, 2));
}

fn gemm(m: usize, n: usize, k: usize, seed: u64, smem: bool) -> (Vec<f32>, Vec<f64>) {
    let mut r = rng(seed);
    let a: Vec<bf16> = (0..m * k)
        .map(|_| bf16::from_f32(r.random_range(-1.0..1.0)))
        .collect();
    let b: Vec<bf16> = (0..k * n)
        .map(|_| bf16::from_f32(r.random_range(-1.0..1.0)))
        .collect();
    let mut c = vec![POISON; m * n];
    let out = GlobalMut::new(&mut c);
    let warps = m.div_ceil(16) * n.div_ceil(8);
    let (mm, nn, kk) = (m as u32, n as u32, k as u32);
    if smem {
        let grid = (n.div_ceil(16) as u32, m.div_ceil(32) as u32, 1);
        emulator::launch(LaunchConfig::new(grid, (128, 1, 1)), || {
            mma_gemm_kernels::gemm_bf16_smem(&a, &b, out.disjoint(), mm, nn, kk)
        })
        .unwrap();
    } else {
        let grid = (warps.div_ceil(2) as u32, 1, 1);
        emulator::launch(LaunchConfig::new(grid, (64, 1, 1)), || {
            mma_gemm_kernels::gemm_bf16(&a, &b, out.disjoint(), mm, nn, kk)
        })
        .unwrap();
    }
    let want = (0..m * n)
        .map(|e| {
            let (i, j) = (e / n, e % n);
            (0..k)
                .map(|p| a[i * k + p].to_f64() * b[p * n + j].to_f64())
                .sum()
        })
        .collect();
    (c, want)
}

#[test]
fn gemm_bf16_matches_the_f64_reference_at_square_and_ragged_sizes() {
    for (m, n, k, seed, smem) in [
        (32, 16, 16, 71, false),
        (64, 64, 64, 72, false),
        (77, 45, 35, 73, false),
        (5, 3, 7, 74, false),
        (64, 48, 64, 75, true),
        (77, 45, 35, 76, true),
    ] {
        let (got, want) = gemm(m, n, k, seed, smem);
        assert!(
            got.iter().all(|x| !x.is_nan()),
            "{m}x{n}x{k}: unwritten elements"
        );
        let num: f64 = got
            .iter()
            .zip(&want)
            .map(|(g, w)| (*g as f64 - w).powi(2))
            .sum();
        let den: f64 = want.iter().map(|w| w * w).sum();
        let err = (num / den).sqrt();
        assert!(err < 1e-5, "{m}x{n}x{k}: relative Frobenius error {err:e}");
    }
}
