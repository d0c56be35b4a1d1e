//! Tensor-core `mma.sync` under the emulator: the fragment layouts of the PTX ISA
//! (checked element by element), the `ldmatrix` loads against element-wise loads, and
//! `mma_gemm`'s `gemm_bf16`, `gemm_mma` and `gemm_mma_tma` against an `f64` CPU reference
//! at square and ragged sizes, output poisoned first.

use device_std::emulator::{self, GlobalMut, LaunchConfig};
use device_std::fp8::Fp8;
use device_std::mma::{Accum, FragA, FragB};
use device_std::{bf16, f16, kernel, thread, DisjointSlice, SharedArray};
use emulated_tests::emulate::POISON;
use example_support::{frobenius, matmul_bt_f64, matmul_f64, random_bf16, rng};
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
    let a = random_bf16(&mut r, m * k);
    let b = random_bf16(&mut r, k * n);
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
    (c, matmul_f64(&a, &b, m, n, k))
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
        let (err, unwritten) = frobenius(got.iter().map(|&x| f64::from(x)), &want);
        assert_eq!(unwritten, 0, "{m}x{n}x{k}: unwritten elements");
        assert!(err < 1e-5, "{m}x{n}x{k}: relative Frobenius error {err:e}");
    }
}

/// An emulated tensor map of the row-major `rows × k` matrix `x` (K-major), copied in
/// boxes of `box_k × box_rows` with the 128-byte swizzle, as the wgmma kernels read it.
fn kmajor_map<T: device_std::PlainData>(
    x: &[T],
    rows: usize,
    k: usize,
    box_k: usize,
    box_rows: usize,
    swizzle: u32,
) -> device_std::emulator::TensorMapDesc {
    assert_eq!(x.len(), rows * k);
    // SAFETY: `x` holds rows * k elements; the callers keep it alive while launches use
    // the map, which they only read through.
    unsafe {
        device_std::emulator::TensorMapDesc::new_swizzled(
            x.as_ptr().cast_mut(),
            rows * k,
            &[k as u64, rows as u64],
            &[(core::mem::size_of::<T>() * k) as u64],
            &[box_k as u32, box_rows as u32],
            swizzle,
        )
    }
    .unwrap()
}

/// The inputs of a `c = a · bᵀ` test: random `a` (`m × k`) and `bt` (`b` stored `n × k`),
/// drawn in that order from `rng(seed)`, and their `f64` reference `want` (`m × n`).
struct GemmOperands {
    a: Vec<bf16>,
    bt: Vec<bf16>,
    want: Vec<f64>,
}

impl GemmOperands {
    fn new(m: usize, n: usize, k: usize, seed: u64) -> Self {
        let mut r = rng(seed);
        let a = random_bf16(&mut r, m * k);
        let bt = random_bf16(&mut r, n * k);
        let want = matmul_bt_f64(&a, &bt, m, n, k);
        GemmOperands { a, bt, want }
    }
}

/// The launch of `gemm_wgmma`, `gemm_wgmma_128x128` and `gemm_wgmma_fp8` for an `m × n`
/// output in tiles `bn` wide: blocks of 384 threads, one per 128 × `bn` tile (`blocks`
/// `None`) or `blocks` of them taking the tiles in turn (persistent), with the static
/// shared memory the kernels (built for sm_90a) declare.
fn gemm_wgmma_launch(m: usize, n: usize, bn: usize, blocks: Option<usize>) -> LaunchConfig {
    use mma_gemm_kernels::WG_BM;
    let tiles = m.div_ceil(WG_BM) * n.div_ceil(bn);
    LaunchConfig::new((blocks.unwrap_or(tiles) as u32, 1, 1), (384, 1, 1))
        .with_static_shared_limit(emulator::MAX_STATIC_SHARED_BYTES)
}

/// The emulated tensor map through which the `*_tma_store` GEMMs write the `m × n`
/// row-major `c`: boxes of 64 columns × 16 rows, 128-byte swizzle. The caller keeps `c`
/// alive, and accesses it otherwise, only after the launches that use the map.
fn c_map(c: &mut [bf16], m: usize, n: usize) -> device_std::emulator::TensorMapDesc {
    assert_eq!(c.len(), m * n);
    // SAFETY: `c` holds m * n elements; the caller's contract above.
    unsafe {
        device_std::emulator::TensorMapDesc::new_swizzled(
            c.as_mut_ptr(),
            m * n,
            &[n as u64, m as u64],
            &[2 * n as u64],
            &[64, 16],
            128,
        )
    }
    .unwrap()
}

/// Which persistent `wgmma` GEMM kernel a test runs.
#[derive(Clone, Copy, PartialEq)]
enum Wgmma {
    /// `gemm_wgmma`: 128 × 256 tiles, each thread stores its elements.
    Wide,
    /// `gemm_wgmma_128x128`.
    Narrow,
    /// `gemm_wgmma_tma_store`: 128 × 256 tiles stored through `c`'s tensor map.
    TmaStore,
    /// `gemm_wgmma_128x128_tma_store`: 128 × 128 tiles, six stages, stored through `c`'s map.
    NarrowTmaStore,
}

/// One of the persistent `wgmma` GEMMs (`c = a · bᵀ`, `bf16` out) under the emulator:
/// tensor copies with the 128-byte swizzle into a 4-stage mbarrier ring, wgmma
/// descriptors reading through the same swizzle. Returns `c` (poisoned first) and the
/// `f64` reference.
fn gemm_wgmma(
    (m, n, k): (usize, usize, usize),
    seed: u64,
    blocks: Option<usize>,
    kernel: Wgmma,
) -> (Vec<bf16>, Vec<f64>) {
    use mma_gemm_kernels::{WG_BK, WG_BM, WG_BN, WG_BN_128};
    let narrow = matches!(kernel, Wgmma::Narrow | Wgmma::NarrowTmaStore);
    let bn = if narrow { WG_BN_128 } else { WG_BN };
    let g = GemmOperands::new(m, n, k, seed);
    let map_a = kmajor_map(&g.a, m, k, WG_BK, WG_BM, 128);
    let map_b = kmajor_map(&g.bt, n, k, WG_BK, bn, 128);
    let mut c = vec![bf16::NAN; m * n];
    let (mm, nn, kk) = (m as u32, n as u32, k as u32);
    let cfg = gemm_wgmma_launch(m, n, bn, blocks);
    if matches!(kernel, Wgmma::TmaStore | Wgmma::NarrowTmaStore) {
        let map_c = c_map(&mut c, m, n);
        emulator::launch(cfg, || {
            let (a, c) = (map_a.as_param(), map_c.as_param());
            if narrow {
                mma_gemm_kernels::gemm_wgmma_128x128_tma_store(
                    a,
                    map_b.as_param(),
                    c,
                    mm,
                    nn,
                    kk,
                    8,
                )
            } else {
                mma_gemm_kernels::gemm_wgmma_tma_store(a, map_b.as_param(), c, mm, nn, kk, 8)
            }
        })
        .unwrap();
    } else {
        let out = GlobalMut::new(&mut c);
        emulator::launch(cfg, || {
            // The map of `b` takes each kernel's box type, so each branch converts it.
            let (a, c) = (map_a.as_param(), out.disjoint());
            if kernel == Wgmma::Narrow {
                mma_gemm_kernels::gemm_wgmma_128x128(a, map_b.as_param(), c, mm, nn, kk, 8)
            } else {
                mma_gemm_kernels::gemm_wgmma(a, map_b.as_param(), c, mm, nn, kk, 8)
            }
        })
        .unwrap();
    }
    (c, g.want)
}

#[test]
fn gemm_wgmma_matches_the_f64_reference_at_whole_and_ragged_tiles() {
    // One whole tile; a ragged one (edges masked, k short of a stage); two tiles of
    // rows with more k-stages than the ring holds (the ring wraps); six ragged tiles
    // taken by two persistent blocks (the ring runs on across tiles).
    for (m, n, k, seed, blocks) in [
        (128, 256, 64, 81, None),
        (77, 45, 40, 82, None),
        (200, 256, 320, 83, None),
        (300, 500, 136, 84, Some(2)),
    ] {
        let (got, want) = gemm_wgmma((m, n, k), seed, blocks, Wgmma::Wide);
        let (err, unwritten) = frobenius(got.iter().map(|x| x.to_f64()), &want);
        assert_eq!(unwritten, 0, "{m}x{n}x{k}: unwritten elements");
        // The bf16 rounding of the output is about 2e-3.
        assert!(err < 1e-2, "{m}x{n}x{k}: relative Frobenius error {err:e}");
    }
}

#[test]
fn the_tma_store_gemms_match_the_f64_reference_at_whole_and_ragged_tiles() {
    // One whole tile; a ragged one (the stores clipped at m and n); two tiles of rows
    // with more stages than the ring holds; six ragged tiles taken by two persistent
    // blocks, so each warp's two staging boxes are refilled many times. `n` is a
    // multiple of 8 (c's map has a 16-byte row stride).
    for (m, n, k, seed, blocks) in [
        (128, 256, 64, 121, None),
        (77, 48, 40, 122, None),
        (200, 256, 320, 123, None),
        (300, 504, 136, 124, Some(2)),
    ] {
        for kernel in [Wgmma::TmaStore, Wgmma::NarrowTmaStore] {
            let (got, want) = gemm_wgmma((m, n, k), seed, blocks, kernel);
            let (err, unwritten) = frobenius(got.iter().map(|x| x.to_f64()), &want);
            assert_eq!(unwritten, 0, "{m}x{n}x{k}: unwritten elements");
            assert!(err < 1e-2, "{m}x{n}x{k}: relative Frobenius error {err:e}");
        }
    }
}

#[test]
fn the_128x128_tiles_are_chosen_for_grids_that_leave_half_the_sms_idle() {
    use mma_gemm_kernels::prefers_128x128;
    // The H100's 132 SMs: 512³ (8 wide tiles) and 1024³ (32) take the narrow tiles;
    // 2048³ (128) and 777 × 4444 (126) keep the wide ones, as does every larger shape.
    assert!(prefers_128x128(512, 512, 132));
    assert!(prefers_128x128(1024, 1024, 132));
    assert!(prefers_128x128(1024, 2048, 132)); // 64 tiles: half of 132 or fewer
    assert!(!prefers_128x128(2048, 2048, 132));
    assert!(!prefers_128x128(777, 4444, 132));
    assert!(!prefers_128x128(8192, 1024, 132));
    assert!(!prefers_128x128(1024, 1024, 63)); // 32 tiles fill more than half of 63 SMs
}

#[test]
fn gemm_wgmma_128x128_matches_the_f64_reference_at_whole_and_ragged_tiles() {
    // One whole tile; a ragged one; two tiles of rows with more stages than the ring
    // holds; nine ragged tiles taken by two persistent blocks.
    for (m, n, k, seed, blocks) in [
        (128, 128, 64, 111, None),
        (77, 45, 40, 112, None),
        (200, 128, 320, 113, None),
        (300, 300, 136, 114, Some(2)),
    ] {
        let (got, want) = gemm_wgmma((m, n, k), seed, blocks, Wgmma::Narrow);
        let (err, unwritten) = frobenius(got.iter().map(|x| x.to_f64()), &want);
        assert_eq!(unwritten, 0, "{m}x{n}x{k}: unwritten elements");
        assert!(err < 1e-2, "{m}x{n}x{k}: relative Frobenius error {err:e}");
    }
}

/// `n` random FP8 values: `f32`s uniform in (-range, range) rounded to the type
/// (saturating), as a scaled tensor is quantised.
fn random_fp8<T: Fp8>(r: &mut impl Rng, n: usize, range: f32) -> Vec<T> {
    (0..n)
        .map(|_| T::from_bits(T::pack2(r.random_range(-range..range), 0.0) as u8))
        .collect()
}

/// `c = scale · a · bᵀ` in `f64` for FP8 `a` (`m × k`) and `bt` (`n × k`).
fn matmul_bt_fp8<T: Fp8>(a: &[T], bt: &[T], m: usize, n: usize, k: usize, scale: f64) -> Vec<f64> {
    let f = |x: T| f64::from(T::unpack2(x.to_bits().into())[0]);
    (0..m * n)
        .map(|e| {
            let (i, j) = (e / n, e % n);
            scale
                * (0..k)
                    .map(|p| f(a[i * k + p]) * f(bt[j * k + p]))
                    .sum::<f64>()
        })
        .collect()
}

#[test]
fn gemm_wgmma_fp8_matches_the_f64_reference_at_whole_and_ragged_tiles() {
    use device_std::F8E4M3;
    use mma_gemm_kernels::{WG_BK_FP8, WG_BM, WG_BN};
    // One whole tile; a ragged one (edges masked, k short of a stage, a multiple of 16
    // as the maps need); two tiles of rows with more k-stages than the ring holds.
    // And five tiles taken by two persistent blocks, `n` off and on a multiple of 8.
    // Where `n` is a multiple of 8, the kernel that stores through c's map runs too.
    for (m, n, k, seed, blocks) in [
        (128, 256, 128, 91, None),
        (77, 45, 48, 92, None),
        (200, 256, 640, 93, None),
        (300, 300, 272, 94, Some(2)),
        (300, 304, 272, 95, Some(2)),
    ] {
        let mut r = rng(seed);
        // Values up to ±400 (e4m3's range is ±448), as per-tensor scaling leaves them.
        let a = random_fp8::<F8E4M3>(&mut r, m * k, 400.0);
        let bt = random_fp8::<F8E4M3>(&mut r, n * k, 400.0);
        let scale = 1.0 / (400.0 * 400.0);
        let want = matmul_bt_fp8(&a, &bt, m, n, k, f64::from(scale));
        let map_a = kmajor_map(&a, m, k, WG_BK_FP8, WG_BM, 128);
        let map_b = kmajor_map(&bt, n, k, WG_BK_FP8, WG_BN, 128);
        let mut c = vec![bf16::NAN; m * n];
        let out = GlobalMut::new(&mut c);
        let (mm, nn, kk) = (m as u32, n as u32, k as u32);
        emulator::launch(gemm_wgmma_launch(m, n, WG_BN, blocks), || {
            mma_gemm_kernels::gemm_wgmma_fp8(
                map_a.as_param(),
                map_b.as_param(),
                out.disjoint(),
                mm,
                nn,
                kk,
                8,
                scale,
            )
        })
        .unwrap();
        let mut outputs = vec![("gemm_wgmma_fp8", c)];
        if n % 8 == 0 {
            let mut c = vec![bf16::NAN; m * n];
            let map_c = c_map(&mut c, m, n);
            emulator::launch(gemm_wgmma_launch(m, n, WG_BN, blocks), || {
                let (a, b, c) = (map_a.as_param(), map_b.as_param(), map_c.as_param());
                mma_gemm_kernels::gemm_wgmma_fp8_tma_store(a, b, c, mm, nn, kk, 8, scale)
            })
            .unwrap();
            outputs.push(("gemm_wgmma_fp8_tma_store", c));
        }
        for (kernel, c) in outputs {
            let (err, unwritten) = frobenius(c.iter().map(|x| x.to_f64()), &want);
            assert_eq!(unwritten, 0, "{kernel} {m}x{n}x{k}: unwritten elements");
            // The products are exact in f32 and the sums short: the bf16 output
            // rounding (about 2e-3) dominates.
            assert!(
                err < 1e-2,
                "{kernel} {m}x{n}x{k}: relative Frobenius error {err:e}"
            );
        }
    }
}

/// One `wgmma.m64n64k32` step with FP8 inputs of type `T` (A 64 × 32, B 64 × 32, both
/// K-major, loaded by tensor copies with the 32-byte swizzle) under the emulator, each
/// accumulator element against the exact `f64` dot product: the values are small
/// integers, so every product and partial sum is exact in `f32` and the comparison is
/// bit for bit.
fn wgmma_fp8_step<T: Fp8 + device_std::wgmma::WgmmaInput + device_std::PlainData>(seed: u64) {
    use device_std::tma::TensorMap;
    use device_std::wgmma::{commit_group, Accum64, KMajorTile};
    use device_std::{Mbarrier, Phase};
    let mut r = rng(seed);
    let round = |v: Vec<T>| -> Vec<T> {
        v.into_iter()
            .map(|x| {
                let f = T::unpack2(x.to_bits().into())[0].round();
                T::from_bits(T::pack2(f, 0.0) as u8)
            })
            .collect()
    };
    let a = round(random_fp8::<T>(&mut r, 64 * 32, 8.0));
    let bt = round(random_fp8::<T>(&mut r, 64 * 32, 8.0));
    let want = matmul_bt_fp8(&a, &bt, 64, 64, 32, 1.0);
    let map_a = kmajor_map(&a, 64, 32, 32, 64, 32);
    let map_b = kmajor_map(&bt, 64, 32, 32, 64, 32);
    let mut c = vec![f32::NAN; 64 * 64];
    let out = GlobalMut::new(&mut c);
    emulator::launch(LaunchConfig::new((1, 1, 1), (128, 1, 1)), || {
        let (ma, mb): (
            TensorMap<T, 2, 32, 64, 1, 1, 1, 32>,
            TensorMap<T, 2, 32, 64, 1, 1, 1, 32>,
        ) = (map_a.as_param(), map_b.as_param());
        let (sa, sb) = (
            SharedArray::<T, { 64 * 32 }, 256>::new(),
            SharedArray::<T, { 64 * 32 }, 256>::new(),
        );
        let bar = Mbarrier::new(1);
        if thread::thread_in_block() == 0 {
            bar.arrive_expect_tx(2 * TensorMap::<T, 2, 32, 64, 1, 1, 1, 32>::BOX_BYTES);
            ma.load(&sa, [0, 0], &bar);
            mb.load(&sb, [0, 0], &bar);
        }
        bar.wait(&mut Phase::new());
        let (ta, tb) = (
            KMajorTile::<T, 64, 32, 32>::of(&sa),
            KMajorTile::<T, 64, 32, 32>::of(&sb),
        );
        let mut acc = Accum64::zero();
        acc.fence();
        acc.mma_async(ta.descriptor(0, 0), tb.descriptor(0, 0), false);
        commit_group();
        acc.wait::<0>();
        let mut d: DisjointSlice<f32> = out.disjoint();
        acc.store(|row, col, v| {
            // SAFETY: each (row, col) of the 64 x 64 tile belongs to one thread.
            unsafe { *d.get_unchecked_mut(row * 64 + col) = v };
        });
    })
    .unwrap();
    for (i, (&g, &w)) in c.iter().zip(&want).enumerate() {
        assert_eq!(f64::from(g), w, "element ({}, {})", i / 64, i % 64);
    }
}

#[test]
fn wgmma_fp8_step_is_exact_for_e4m3_and_e5m2() {
    wgmma_fp8_step::<device_std::F8E4M3>(94);
    wgmma_fp8_step::<device_std::F8E5M2>(95);
}

/// `FragA::from_accum_pair`: every element of the `A` fragment built in registers from
/// two accumulators is the 16 × 16 block's element at `FragA::coords` (values exact in
/// `bf16`), in every lane.
#[test]
fn an_accumulator_pair_is_an_a_fragment_in_registers() {
    let mut wrong = vec![u32::MAX; 32];
    let out = GlobalMut::new(&mut wrong);
    emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
        let val = |r: usize, c: usize| (r * 16 + c) as f32;
        let pair = [Accum::load(val), Accum::load(|r, c| val(r, c + 8))];
        let a = FragA::<bf16>::from_accum_pair(&pair);
        let lane = thread::lane_id();
        let bad = (0..8)
            .filter(|&i| {
                let (r, c) = FragA::<bf16>::coords(lane, i);
                a.get(i).to_f32() != val(r, c)
            })
            .count() as u32;
        let mut d: DisjointSlice<u32> = out.disjoint();
        // SAFETY: lane l writes element l.
        unsafe { *d.get_unchecked_mut(lane as usize) = bad };
    })
    .unwrap();
    assert_eq!(wrong, vec![0; 32]);
}

/// `wgmma` misuse the emulator reports rather than computing a wrong result.
#[test]
fn wgmma_misuse_is_reported() {
    use device_std::emulator::EmulatorError;
    use device_std::wgmma::{Accum64, KMajorTile};
    use device_std::SharedArray;
    let step = || {
        let a = SharedArray::<bf16, { 64 * 64 }, 1024>::new();
        let b = SharedArray::<bf16, { 64 * 64 }, 1024>::new();
        let (at, bt) = (
            KMajorTile::<bf16, 64, 64, 128>::of(&a),
            KMajorTile::<bf16, 64, 64, 128>::of(&b),
        );
        let mut acc = Accum64::zero();
        acc.fence();
        acc.mma_async(at.descriptor(0, 0), bt.descriptor(0, 16), false);
        device_std::wgmma::commit_group();
        acc.wait::<0>();
    };
    // 64 threads: half a warpgroup.
    let err = emulator::launch(LaunchConfig::new((1, 1, 1), (64, 1, 1)), step).unwrap_err();
    assert!(
        matches!(&err, EmulatorError::TensorCore { message, .. } if message.contains("not a whole warpgroup")),
        "{err}"
    );
    // A whole warpgroup multiplying tiles nobody wrote: an uninitialised read.
    let err = emulator::launch(LaunchConfig::new((1, 1, 1), (128, 1, 1)), step).unwrap_err();
    assert!(
        matches!(err, EmulatorError::UninitSharedRead { .. }),
        "{err}"
    );
}

#[test]
fn wgmma_accumulator_coordinates_cover_the_tile_once() {
    use device_std::wgmma::{Accum128, Accum256, Accum64};
    fn cover(n: usize, regs: usize, coords: fn(u32, usize) -> (usize, usize)) {
        let mut seen = vec![0u8; 64 * n];
        for t in 0..128 {
            for i in 0..regs {
                let (r, c) = coords(t, i);
                seen[r * n + c] += 1;
            }
        }
        assert!(seen.iter().all(|&x| x == 1), "64 x {n}");
    }
    cover(64, 32, Accum64::coords);
    cover(128, 64, Accum128::coords);
    cover(256, 128, Accum256::coords);
    // The PTX ISA's figure: thread 37 (warp 1, lane 5) holds row 17, columns 2, 3
    // in d0, d1 and row 25 in d2, d3; d4 is 8 columns on.
    assert_eq!(Accum64::coords(37, 0), (17, 2));
    assert_eq!(Accum64::coords(37, 1), (17, 3));
    assert_eq!(Accum64::coords(37, 2), (25, 2));
    assert_eq!(Accum64::coords(37, 4), (17, 10));
}

/// A tensor copy with the 128-byte swizzle puts the 16-byte chunk `c` of box row `r` at
/// chunk `c ^ (r % 8)` of the row (what wgmma's descriptors read), and a store through
/// the same map puts every element back.
#[test]
fn swizzled_tensor_copies_place_chunks_as_the_hardware_does() {
    use device_std::emulator::TensorMapDesc;
    use device_std::tma::TensorMap;
    use device_std::{bulk, thread, Mbarrier, Phase, SharedArray};
    type Map = TensorMap<u32, 2, 32, 16, 1, 1, 1, 128>;
    let input: Vec<u32> = (0..32 * 40).collect();
    let mut seen = vec![u32::MAX; 32 * 16];
    let mut back = vec![u32::MAX; 32 * 40];
    let seen_out = GlobalMut::new(&mut seen);
    // SAFETY (both): the buffers hold 32 x 40 u32s and outlive the launch.
    let src = unsafe {
        TensorMapDesc::new_swizzled(
            input.as_ptr().cast_mut(),
            32 * 40,
            &[32, 40],
            &[128],
            &[32, 16],
            128,
        )
    }
    .unwrap();
    let dst = unsafe {
        TensorMapDesc::new_swizzled(
            back.as_mut_ptr(),
            32 * 40,
            &[32, 40],
            &[128],
            &[32, 16],
            128,
        )
    }
    .unwrap();
    emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
        let (src, dst): (Map, Map) = (src.as_param(), dst.as_param());
        let tile = SharedArray::<u32, { 32 * 16 }, 1024>::new();
        let bar = Mbarrier::new(1);
        let mut phase = Phase::new();
        let t = thread::thread_in_block() as usize;
        if t == 0 {
            bar.arrive_expect_tx(Map::BOX_BYTES);
            src.load(&tile, [0, 8], &bar);
        }
        bar.wait(&mut phase);
        let mut out = seen_out.disjoint::<device_std::Index1D>();
        for e in (t..32 * 16).step_by(32) {
            // SAFETY: each thread writes its own elements e.
            unsafe { *out.get_unchecked_mut(e) = tile.read(e) };
        }
        thread::sync_threads();
        if t == 0 {
            // SAFETY: only this thread stores, into rows 20..36 of `back`.
            unsafe { dst.store(&tile, [0, 20]) };
            bulk::commit_group();
            bulk::wait_group_read::<0>();
        }
    })
    .unwrap();
    for r in 0..16 {
        for c in 0..32 {
            // Element c of row r: chunk c / 4 lands at chunk (c / 4) ^ (r % 8).
            let at = r * 32 + 4 * ((c / 4) ^ (r % 8)) + c % 4;
            assert_eq!(seen[at], input[(8 + r) * 32 + c], "row {r} column {c}");
        }
    }
    for (i, &v) in back.iter().enumerate() {
        let want = if (20 * 32..36 * 32).contains(&i) {
            input[i - 12 * 32]
        } else {
            u32::MAX
        };
        assert_eq!(v, want, "element {i}");
    }
}

#[test]
fn wgmma_with_a_from_registers_matches_the_f64_reference() {
    let k = 192;
    let ops = GemmOperands::new(64, 64, k, 91);
    let map_b = kmajor_map(&ops.bt, 64, k, 64, 64, 128);
    let mut c = vec![POISON; 64 * 64];
    let out = GlobalMut::new(&mut c);
    emulator::launch(LaunchConfig::new((1, 1, 1), (128, 1, 1)), || {
        mma_gemm_kernels::wgmma_reg_a(&ops.a, map_b.as_param(), out.disjoint(), k as u32)
    })
    .unwrap();
    for (e, (g, want)) in c.iter().zip(&ops.want).enumerate() {
        let (i, j) = (e / 64, e % 64);
        assert!(
            (*g as f64 - want).abs() <= 1e-4,
            "c[{i}][{j}] = {g}, want {want}"
        );
    }
}

/// `wgmma_mn_b`: `A` from registers, `B` row-major (MN-major, read with the transpose-B
/// flag) through two tensor copies of 64 columns, against `f64` (exact products in
/// `f32`: 1e-4 absolute).
#[test]
fn wgmma_with_an_mn_major_b_matches_the_f64_reference() {
    let (k, n) = (64, 128);
    let mut r = rng(95);
    let a = random_bf16(&mut r, 64 * k);
    let b = random_bf16(&mut r, k * n); // row-major k x n
    let want: Vec<f64> = (0..64 * n)
        .map(|e| {
            let (i, j) = (e / n, e % n);
            (0..k)
                .map(|p| a[i * k + p].to_f64() * b[p * n + j].to_f64())
                .sum()
        })
        .collect();
    // The map's rows are rows of k, its inner dimension n: boxes of 64 columns x 64 rows.
    let map_b = kmajor_map(&b, k, n, 64, 64, 128);
    let mut c = vec![POISON; 64 * n];
    let out = GlobalMut::new(&mut c);
    emulator::launch(LaunchConfig::new((1, 1, 1), (128, 1, 1)), || {
        mma_gemm_kernels::wgmma_mn_b(&a, map_b.as_param(), out.disjoint())
    })
    .unwrap();
    for (e, (g, want)) in c.iter().zip(&want).enumerate() {
        let (i, j) = (e / n, e % n);
        assert!(
            (*g as f64 - want).abs() <= 1e-4,
            "c[{i}][{j}] = {g}, want {want}"
        );
    }
}

/// `wgmma_sw32` and `wgmma_sw64`: both operands through the 32- and 64-byte swizzles,
/// against `f64` (exact products in `f32`: 1e-4 absolute).
#[test]
fn wgmma_with_32_and_64_byte_swizzles_matches_the_f64_reference() {
    let k = 96;
    let GemmOperands { a, bt, want } = GemmOperands::new(64, 64, k, 92);
    for sw in [32u32, 64] {
        let box_k = sw as usize / 2;
        let (ma, mb) = (
            kmajor_map(&a, 64, k, box_k, 64, sw),
            kmajor_map(&bt, 64, k, box_k, 64, sw),
        );
        let mut c = vec![POISON; 64 * 64];
        let out = GlobalMut::new(&mut c);
        emulator::launch(LaunchConfig::new((1, 1, 1), (128, 1, 1)), || {
            if sw == 32 {
                mma_gemm_kernels::wgmma_sw32(ma.as_param(), mb.as_param(), out.disjoint(), k as u32)
            } else {
                mma_gemm_kernels::wgmma_sw64(ma.as_param(), mb.as_param(), out.disjoint(), k as u32)
            }
        })
        .unwrap();
        for (e, (g, want)) in c.iter().zip(&want).enumerate() {
            let (i, j) = (e / 64, e % 64);
            assert!(
                (*g as f64 - want).abs() <= 1e-4,
                "swizzle {sw}: c[{i}][{j}] = {g}, want {want}"
            );
        }
    }
}

/// One warp: a 32 × 32 `f16` tile in shared memory, element `(r, c)` = `r * 32 + c`
/// stored with the chunks of 8 XOR-swizzled by `r % 4`. Lane `l` writes 1 to `out[l]`
/// when every `ldmatrix` form gives what the element-wise `load` gives, else 0.
#[kernel]
pub fn ldmatrix_forms(mut out: DisjointSlice<u32>) {
    let tile = SharedArray::<f16, 1024>::new();
    let at = |r: usize, c: usize| r * 32 + ((c / 8) ^ (r % 4)) * 8 + c % 8;
    let lane = thread::lane_id() as usize;
    for e in (lane..1024).step_by(32) {
        tile.write(at(e / 32, e % 32), f16::from_f32((e % 1024) as f32));
    }
    thread::sync_threads();
    let val = |r: usize, c: usize| tile.read(at(r, c));
    let mut ok = true;
    for (r0, c0) in [(0, 0), (16, 8), (8, 16)] {
        // A: rows r0.., columns (k) c0..
        let want = FragA::<f16>::load(|r, c| val(r0 + r, c0 + c));
        let got = FragA::<f16>::load_shared_rows(&tile, at(r0 + lane % 16, c0 + 8 * (lane / 16)));
        ok &= (0..8).all(|i| got.get(i).to_bits() == want.get(i).to_bits());
        // B stored n x k: stored row = n, column = k. Fragment (k, n) = val(n0 + n, k0 + k).
        let (n0, k0) = (r0, c0);
        let want = FragB::<f16>::load(|k, n| val(n0 + n, k0 + k));
        let got =
            FragB::<f16>::load_shared_rows(&tile, at(n0 + lane % 8, k0 + 8 * ((lane / 8) % 2)));
        ok &= (0..4).all(|i| got.get(i).to_bits() == want.get(i).to_bits());
        let want_hi = FragB::<f16>::load(|k, n| val(n0 + 8 + n, k0 + k));
        let [lo, hi] = FragB::<f16>::load_shared_pair_rows(
            &tile,
            at(n0 + 8 * (lane / 16) + lane % 8, k0 + 8 * ((lane / 8) % 2)),
        );
        ok &= (0..4).all(|i| lo.get(i).to_bits() == want.get(i).to_bits());
        ok &= (0..4).all(|i| hi.get(i).to_bits() == want_hi.get(i).to_bits());
    }
    if let Some((o, _)) = out.get_mut_indexed() {
        *o = ok as u32;
    }
}

/// Runs a one-warp check kernel (each lane writes 1 when everything it compared agreed)
/// under the emulator, the output poisoned with 7 first, and asserts every lane's 1.
fn run_one_warp_check(kernel: impl Fn(DisjointSlice<u32>) + Sync) {
    let mut v = vec![7u32; 32];
    let out = GlobalMut::new(&mut v);
    emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
        kernel(out.disjoint())
    })
    .unwrap();
    assert_eq!(v, vec![1u32; 32]);
}

#[test]
fn ldmatrix_rows_forms_match_elementwise_loads_through_a_swizzled_tile() {
    run_one_warp_check(ldmatrix_forms);
}

/// `FragB::load_shared_trans_pair` (`ldmatrix.x4.trans`) against `load` of the transposed
/// view and against two `load_shared_trans`: 1 when all agree.
#[kernel]
pub fn ldmatrix_trans_pair(mut out: DisjointSlice<u32>) {
    const LD: usize = 40;
    let tile = SharedArray::<bf16, { 32 * LD }>::new();
    let lane = thread::lane_id() as usize;
    for e in (lane..32 * LD).step_by(32) {
        tile.write(e, bf16::from_f32(e as f32));
    }
    thread::sync_threads();
    let mut ok = true;
    for (r0, c0) in [(0, 0), (16, 8), (8, 24)] {
        let [lo, hi] = FragB::<bf16>::load_shared_trans_pair(&tile, r0, c0, LD);
        for (h, got) in [lo, hi].iter().enumerate() {
            let want = FragB::<bf16>::load(|k, n| tile.read((r0 + k) * LD + c0 + 8 * h + n));
            let single = FragB::<bf16>::load_shared_trans(&tile, r0, c0 + 8 * h, LD);
            ok &= (0..4).all(|i| got.get(i).to_bits() == want.get(i).to_bits());
            ok &= (0..4).all(|i| got.get(i).to_bits() == single.get(i).to_bits());
        }
    }
    if let Some((o, _)) = out.get_mut_indexed() {
        *o = ok as u32;
    }
}

#[test]
fn ldmatrix_trans_pair_matches_two_trans_loads_and_elementwise() {
    run_one_warp_check(ldmatrix_trans_pair);
}

/// `FragB::load_shared` (plain `n × k` layout, no transpose) against `load`.
#[kernel]
pub fn ldmatrix_plain_b(mut out: DisjointSlice<u32>) {
    let tile = SharedArray::<bf16, { 16 * 24 }>::new();
    let lane = thread::lane_id() as usize;
    for e in (lane..16 * 24).step_by(32) {
        tile.write(e, bf16::from_f32(e as f32));
    }
    thread::sync_threads();
    let got = FragB::<bf16>::load_shared(&tile, 8, 8, 24);
    let want = FragB::<bf16>::load(|k, n| tile.read((8 + n) * 24 + 8 + k));
    let ok = (0..4).all(|i| got.get(i).to_bits() == want.get(i).to_bits());
    if let Some((o, _)) = out.get_mut_indexed() {
        *o = ok as u32;
    }
}

#[test]
fn frag_b_load_shared_reads_a_k_major_tile_without_transposing() {
    run_one_warp_check(ldmatrix_plain_b);
}

/// `gemm_mma` (`c = a · bᵀ` with `b` stored `n × k`, `bf16` out) against `f64`:
/// (relative Frobenius error, unwritten elements). `c` starts 16-byte aligned, or 2 bytes
/// past that with `misaligned_c` (the kernel then writes whole tiles element by element).
fn gemm_bt(m: usize, n: usize, k: usize, seed: u64, misaligned_c: bool) -> (f64, usize) {
    use mma_gemm_kernels::{MMA, MMA_THREADS};
    let g = GemmOperands::new(m, n, k, seed);
    // 16-byte aligned copies (the kernel's cp.async reads 16-byte chunks).
    let aligned = |x: &[bf16]| {
        let mut buf = vec![bf16::from_bits(0); x.len() + 8];
        let off = buf.as_ptr().align_offset(16);
        buf[off..off + x.len()].copy_from_slice(x);
        (buf, off)
    };
    let (a_buf, a_off) = aligned(&g.a);
    let (b_buf, b_off) = aligned(&g.bt);
    let (a, bt) = (&a_buf[a_off..a_off + m * k], &b_buf[b_off..b_off + n * k]);
    let mut c_buf = vec![bf16::NAN; m * n + 16];
    let c_off = c_buf.as_ptr().align_offset(16) + misaligned_c as usize;
    let c = &mut c_buf[c_off..c_off + m * n];
    let out = GlobalMut::new(&mut *c);
    let (mm, nn, kk) = (m as u32, n as u32, k as u32);
    let cfg = LaunchConfig::new((MMA.blocks(m, n) as u32, 1, 1), (MMA_THREADS as u32, 1, 1))
        .with_dynamic_shared(MMA.smem_bytes() as u32);
    emulator::launch(cfg, || {
        mma_gemm_kernels::gemm_mma(a, bt, out.disjoint(), mm, nn, kk)
    })
    .unwrap();
    frobenius(c.iter().map(|x| x.to_f64()), &g.want)
}

#[test]
fn gemm_mma_matches_the_f64_reference_at_square_and_ragged_sizes() {
    // A whole tile (16-byte stores, and element by element into a misaligned c); one
    // step of k; ragged everything; several tiles with edges in both directions and more
    // k tiles than pipeline stages.
    for (m, n, k, seed, misaligned_c) in [
        (128, 256, 64, 81, false),
        (128, 256, 64, 85, true),
        (128, 256, 32, 82, false),
        (77, 45, 40, 83, false),
        (130, 264, 136, 84, false),
    ] {
        let (err, unwritten) = gemm_bt(m, n, k, seed, misaligned_c);
        assert_eq!(unwritten, 0, "{m}x{n}x{k}: unwritten elements");
        // bf16 output rounding alone is about 2e-3.
        assert!(err < 1e-2, "{m}x{n}x{k}: relative Frobenius error {err:e}");
        assert!(err > 0.0, "{m}x{n}x{k}: bf16 output cannot be exact");
    }
}

/// `gemm_mma_tma` (`gemm_mma`'s compute, the tiles brought in by tensor copies with the
/// 64-byte swizzle) on random inputs, `c` poisoned with NaN first: `c` and the `f64`
/// reference.
fn gemm_mma_tma(m: usize, n: usize, k: usize, seed: u64) -> (Vec<bf16>, Vec<f64>) {
    use mma_gemm_kernels::{MMA, MMA_THREADS};
    let g = GemmOperands::new(m, n, k, seed);
    let map_a = kmajor_map(&g.a, m, k, MMA.bk, MMA.bm, 64);
    let map_b = kmajor_map(&g.bt, n, k, MMA.bk, MMA.bn, 64);
    let mut c = vec![bf16::NAN; m * n];
    let out = GlobalMut::new(&mut c);
    let (mm, nn, kk) = (m as u32, n as u32, k as u32);
    let cfg = LaunchConfig::new((MMA.blocks(m, n) as u32, 1, 1), (MMA_THREADS as u32, 1, 1))
        .with_dynamic_shared(MMA.smem_bytes() as u32);
    emulator::launch(cfg, || {
        mma_gemm_kernels::gemm_mma_tma(
            map_a.as_param(),
            map_b.as_param(),
            out.disjoint(),
            mm,
            nn,
            kk,
        )
    })
    .unwrap();
    (c, g.want)
}

#[test]
fn gemm_mma_tma_matches_the_f64_reference_in_every_element() {
    // A whole tile; ragged everything (2 x 2 tiles, edges in both directions, the last
    // k-tile 8 wide); more k-tiles than stages (the ring wraps, every barrier's phase
    // flips).
    for (m, n, k, seed) in [(128, 256, 64, 86), (200, 300, 72, 87), (130, 264, 136, 88)] {
        let (got, want) = gemm_mma_tma(m, n, k, seed);
        for (e, (g, w)) in got.iter().zip(&want).enumerate() {
            let g = g.to_f64();
            // The bf16 rounding of the output is at most 2^-8 relative; the f32
            // accumulation of k exact products adds far less than 1e-4.
            assert!(
                (g - w).abs() <= w.abs() / 256.0 + 1e-4,
                "{m}x{n}x{k}: c[{}][{}] = {g}, want {w}",
                e / n,
                e % n
            );
        }
    }
}

#[test]
fn tf32_fragment_coordinates_cover_each_tile_once_and_rounding_ties_go_away_from_zero() {
    use device_std::mma::{to_tf32, FragATf32, FragBTf32};
    let mut a = [[0u32; 8]; 16];
    let mut b = [[0u32; 8]; 8];
    for lane in 0..32 {
        for i in 0..4 {
            let (r, c) = FragATf32::coords(lane, i);
            a[r][c] += 1;
        }
        for i in 0..2 {
            let (r, c) = FragBTf32::coords(lane, i);
            b[r][c] += 1;
        }
    }
    assert!(a.iter().flatten().all(|&x| x == 1));
    assert!(b.iter().flatten().all(|&x| x == 1));
    // The PTX ISA's m16n8k8 .tf32 figures: lane 5 is group 1, thread 1.
    assert_eq!(FragATf32::coords(5, 1), (9, 1));
    assert_eq!(FragATf32::coords(5, 2), (1, 5));
    assert_eq!(FragBTf32::coords(5, 1), (5, 1));
    // 10 mantissa bits: the ulp at 1.0 is 2^-10.
    let ulp = 2f32.powi(-10);
    assert_eq!(to_tf32(1.0 + ulp / 2.0), 1.0 + ulp); // a tie, away from zero
    assert_eq!(to_tf32(-(1.0 + ulp / 2.0)), -(1.0 + ulp));
    assert_eq!(to_tf32(1.0 + ulp / 4.0), 1.0);
    assert_eq!(to_tf32(1.0 + 0.75 * ulp), 1.0 + ulp);
    assert_eq!(to_tf32(3.5), 3.5);
    assert!(to_tf32(f32::NAN).is_nan());
    assert_eq!(to_tf32(f32::MAX), f32::INFINITY);
}

#[test]
fn mma_tf32_tile_matches_the_f64_reference_on_tf32_rounded_inputs() {
    use device_std::mma::to_tf32;
    let mut r = rng(95);
    let a: Vec<f32> = (0..128).map(|_| r.random_range(-1.0..1.0)).collect();
    let b: Vec<f32> = (0..64).map(|_| r.random_range(-1.0..1.0)).collect();
    let mut c = vec![POISON; 128];
    let out = GlobalMut::new(&mut c);
    emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
        mma_gemm_kernels::mma_tf32_tile(&a, &b, out.disjoint())
    })
    .unwrap();
    let (mut worst, mut moved) = (0f64, false);
    for i in 0..16 {
        for j in 0..8 {
            let want: f64 = (0..8)
                .map(|p| to_tf32(a[i * 8 + p]) as f64 * to_tf32(b[p * 8 + j]) as f64)
                .sum();
            // Against the unrounded inputs the tf32 rounding must show somewhere.
            let exact: f64 = (0..8)
                .map(|p| a[i * 8 + p] as f64 * b[p * 8 + j] as f64)
                .sum();
            moved |= (want - exact).abs() > 1e-7;
            worst = worst.max((c[i * 8 + j] as f64 - want).abs());
        }
    }
    // Exact products, 8 f32 additions of values below 8.
    assert!(worst < 1e-5, "largest error {worst:e}");
    assert!(moved, "the inputs were not rounded to tf32");
}

#[test]
fn stmatrix_stores_two_accumulators_as_bf16_in_the_ldmatrix_layout() {
    let mut r = rng(96);
    // Small integers (exact in bf16) show the placement; the random part the rounding.
    let x: Vec<f32> = (0..256)
        .map(|e| {
            if e % 3 == 0 {
                e as f32
            } else {
                r.random_range(-4.0..4.0)
            }
        })
        .collect();
    let mut out = vec![bf16::NAN; 256];
    let o = GlobalMut::new(&mut out);
    emulator::launch(LaunchConfig::new((1, 1, 1), (32, 1, 1)), || {
        mma_gemm_kernels::stmatrix_tile(&x, o.disjoint())
    })
    .unwrap();
    for (e, (got, want)) in out.iter().zip(&x).enumerate() {
        assert_eq!(
            got.to_bits(),
            bf16::from_f32(*want).to_bits(),
            "element ({}, {}): {got} for {want}",
            e / 16,
            e % 16
        );
    }
}

/// A ring of 64 x 64 `bf16` tiles of `A` (2 stages, 128-byte swizzle) that one producer
/// thread refills from `x` (64 rows, `5 * 64` columns) and one warpgroup multiplies
/// by a resident `B` (the first 64 columns of `x`), keeping one `wgmma` group in
/// flight; lane 0 of each warp releases a stage after `wait::<1>()`. `off_by_one`
/// releases the stage of the group still in flight (the tensor cores may still read it
/// when the producer refills it: PTX ISA, the shared memory a `wgmma.mma_async` reads
/// must not change until a `wgmma.wait_group` retires it) instead of the previous
/// one. Returns `c = Σ_r A_r B_0ᵀ` and the `f64` reference.
fn wgmma_ring(off_by_one: bool) -> Result<(Vec<f32>, Vec<f64>), emulator::EmulatorError> {
    use device_std::tma::TensorMap;
    use device_std::wgmma::{commit_group, Accum64, KMajorTile};
    use device_std::{Mbarrier, Mbarriers, Phase, Phases};
    type Map = TensorMap<bf16, 2, 64, 64, 1, 1, 1, 128>;
    const ROUNDS: usize = 5;
    let k = 64 * ROUNDS;
    let x = random_bf16(&mut rng(97), 64 * k);
    let map = kmajor_map(&x, 64, k, 64, 64, 128);
    let mut c = vec![POISON; 64 * 64];
    let out = GlobalMut::new(&mut c);
    // One warpgroup of consumers, one warp whose first thread produces.
    emulator::launch(LaunchConfig::new((1, 1, 1), (160, 1, 1)), || {
        let map: Map = map.as_param();
        let ring = SharedArray::<bf16, { 2 * 64 * 64 }, 1024>::new();
        let b = SharedArray::<bf16, { 64 * 64 }, 1024>::new();
        let full = Mbarriers::<2>::new(1);
        let empty = Mbarriers::<2>::new(4);
        let b_bar = Mbarrier::new(1);
        let t = thread::thread_in_block() as usize;
        if t >= 128 {
            if t == 128 {
                b_bar.arrive_expect_tx(Map::BOX_BYTES);
                map.load(&b, [0, 0], &b_bar);
                let mut phases = Phases::<2>::new();
                for r in 0..ROUNDS {
                    let s = r % 2;
                    if r >= 2 {
                        empty.wait(s, &mut phases);
                    }
                    full.get(s).arrive_expect_tx(Map::BOX_BYTES);
                    map.load(
                        &ring.part::<{ 64 * 64 }>(s),
                        [64 * r as i32, 0],
                        &full.get(s),
                    );
                }
            }
            return;
        }
        b_bar.wait(&mut Phase::new());
        let bt = KMajorTile::<bf16, 64, 64, 128>::of(&b);
        let mut acc = Accum64::zero();
        let mut phases = Phases::<2>::new();
        for r in 0..ROUNDS {
            let s = r % 2;
            full.wait(s, &mut phases);
            let at = KMajorTile::<bf16, 64, 64, 128>::of(&ring.part::<{ 64 * 64 }>(s));
            acc.fence();
            for kk in 0..4 {
                acc.mma_async(
                    at.descriptor(0, 16 * kk),
                    bt.descriptor(0, 16 * kk),
                    r > 0 || kk > 0,
                );
            }
            commit_group();
            acc.wait::<1>();
            let release = if off_by_one {
                Some(s)
            } else {
                r.checked_sub(1).map(|p| p % 2)
            };
            if let (Some(stage), 0) = (release, t % 32) {
                empty.get(stage).arrive();
            }
            // Let the producer run first (a schedule the GPU may take too).
            thread::nanosleep(1000);
        }
        acc.wait::<0>();
        let mut o = out.disjoint::<device_std::Index1D>();
        acc.store(|r, col, v| {
            // SAFETY: (thread, element) maps one-to-one onto (r, col) of the tile.
            unsafe { *o.get_unchecked_mut(r * 64 + col) = v };
        });
    })?;
    let want = (0..64 * 64)
        .map(|e| {
            let (i, j) = (e / 64, e % 64);
            (0..k)
                .map(|p| x[i * k + p].to_f64() * x[j * k + p % 64].to_f64())
                .sum()
        })
        .collect();
    Ok((c, want))
}

#[test]
fn a_wgmma_stage_released_before_its_multiplies_retire_is_reported() {
    let (got, want) = wgmma_ring(false).unwrap();
    for (e, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!((*g as f64 - w).abs() <= 1e-3, "c[{e}] = {g}, want {w}");
    }
    let Err(err) = wgmma_ring(true) else {
        panic!("a stage released while its multiplies are in flight was not reported");
    };
    assert!(
        matches!(&err, emulator::EmulatorError::AsyncCopy { message, .. }
            if message.contains("wgmma")),
        "{err}"
    );
}

/// One warpgroup multiplies a 64 × 64 `bf16` tile (loaded by a tensor copy) by itself
/// and, once the multiplies are retired, lane 0 of each warp arrives on `read`. Thread
/// 128 waits on `read` and then (when `ordered_write`) overwrites element 0 of the tile:
/// ordered after every read. Thread 129 waits only for the copy, lets the others run,
/// then overwrites element 1024 (inside the operand's range, away from element 0):
/// nothing orders it after the multiplies' reads, a race on the GPU either way.
fn wgmma_operand_overwritten(ordered_write: bool) -> Result<(), emulator::EmulatorError> {
    use device_std::tma::TensorMap;
    use device_std::wgmma::{commit_group, Accum64, KMajorTile};
    use device_std::{Mbarrier, Phase};
    type Map = TensorMap<bf16, 2, 64, 64, 1, 1, 1, 128>;
    let x = random_bf16(&mut rng(98), 64 * 64);
    let map = kmajor_map(&x, 64, 64, 64, 64, 128);
    emulator::launch(LaunchConfig::new((1, 1, 1), (160, 1, 1)), || {
        let map: Map = map.as_param();
        let tile = SharedArray::<bf16, { 64 * 64 }, 1024>::new();
        let full = Mbarrier::new(1);
        let read = Mbarrier::new(4);
        let t = thread::thread_in_block() as usize;
        if t >= 128 {
            if t == 128 {
                full.arrive_expect_tx(Map::BOX_BYTES);
                map.load(&tile, [0, 0], &full);
                full.wait(&mut Phase::new());
                read.wait(&mut Phase::new());
                if ordered_write {
                    tile.write(0, bf16::from_f32(0.0));
                }
            } else if t == 129 {
                full.wait(&mut Phase::new());
                for _ in 0..200 {
                    thread::nanosleep(100);
                }
                tile.write(1024, bf16::from_f32(0.0));
            }
            return;
        }
        full.wait(&mut Phase::new());
        let at = KMajorTile::<bf16, 64, 64, 128>::of(&tile);
        let mut acc = Accum64::zero();
        acc.fence();
        for kk in 0..4 {
            acc.mma_async(at.descriptor(0, 16 * kk), at.descriptor(0, 16 * kk), kk > 0);
        }
        commit_group();
        acc.wait::<0>();
        if t & 31 == 0 {
            read.arrive();
        }
    })
    .map(|_| ())
}

#[test]
fn an_unordered_write_to_a_wgmma_operand_is_reported_after_an_ordered_one() {
    for ordered_write in [false, true] {
        let Err(err) = wgmma_operand_overwritten(ordered_write) else {
            panic!(
                "ordered_write {ordered_write}: thread 129's write to the multiplies' \
                 operand, unordered after their reads, was not reported"
            );
        };
        assert!(
            matches!(
                &err,
                emulator::EmulatorError::SharedRace {
                    at,
                    kind: emulator::RaceKind::WriteAfterRead,
                    ..
                } if at.thread == (129, 0, 0)
            ),
            "ordered_write {ordered_write}: {err}"
        );
    }
}

/// In a cluster of two CTAs, CTA 0's warpgroup multiplies a 64 × 64 tile (a tensor copy)
/// by itself, then waits at a cluster barrier; CTA 1, which the emulator runs once CTA 0
/// waits (it schedules a cluster's CTAs in rank order), writes into that tile through
/// distributed shared memory before the barrier: nothing orders the write after the
/// multiplies' reads. With `ordered`, a cluster barrier after the reads comes before
/// the write.
fn remote_write_to_wgmma_operand(ordered: bool) -> Result<(), emulator::EmulatorError> {
    use device_std::tma::TensorMap;
    use device_std::wgmma::{commit_group, Accum64, KMajorTile};
    use device_std::{cluster, Mbarrier, Phase};
    type Map = TensorMap<bf16, 2, 64, 64, 1, 1, 1, 128>;
    let x = random_bf16(&mut rng(99), 64 * 64);
    let map = kmajor_map(&x, 64, 64, 64, 64, 128);
    let cfg = LaunchConfig::new((2, 1, 1), (128, 1, 1)).with_cluster(2, 1, 1);
    emulator::launch(cfg, || {
        let map: Map = map.as_param();
        let tile = SharedArray::<bf16, { 64 * 64 }, 1024>::new();
        let full = Mbarrier::new(1);
        let t = thread::thread_in_block();
        if cluster::cta_rank() == 0 {
            if t == 0 {
                full.arrive_expect_tx(Map::BOX_BYTES);
                map.load(&tile, [0, 0], &full);
            }
            full.wait(&mut Phase::new());
            let at = KMajorTile::<bf16, 64, 64, 128>::of(&tile);
            let mut acc = Accum64::zero();
            acc.fence();
            for kk in 0..4 {
                acc.mma_async(at.descriptor(0, 16 * kk), at.descriptor(0, 16 * kk), kk > 0);
            }
            commit_group();
            acc.wait::<0>();
            if ordered {
                cluster::sync();
            }
        } else {
            if ordered {
                cluster::sync();
            }
            if t == 0 {
                tile.cast::<u32, 2048>().in_cta(0).write(512, 0);
            }
        }
        // Keeps CTA 0 (and its shared memory) alive until CTA 1's write is done.
        cluster::sync();
    })
    .map(|_| ())
}

#[test]
fn a_remote_write_to_a_wgmma_operand_needs_a_cluster_barrier() {
    remote_write_to_wgmma_operand(true).expect("a write after a cluster barrier is ordered");
    let Err(err) = remote_write_to_wgmma_operand(false) else {
        panic!("CTA 1's write into CTA 0's multiplied tile, unordered, was not reported");
    };
    let msg = err.to_string();
    assert!(
        msg.contains("write after read") && msg.contains("wgmma operand"),
        "{msg}"
    );
}

/// One warpgroup writes columns 64..128 of a 64 × 128 accumulator holding
/// `(row * 128 + col) % 251` (exact in `bf16`) with `wgmma::Accum::store_bf16_swizzled`,
/// each warp into its own 16 × 64 box; every thread then copies 32 of the 4096 stored
/// elements out as bits, in shared-memory order.
#[kernel]
pub fn swizzled_store(mut out: DisjointSlice<u16>) {
    use device_std::wgmma::Accum128;
    let t = thread::thread_in_block();
    let mut acc = Accum128::zero();
    acc.map(|i, _| {
        let (r, c) = Accum128::coords(t, i);
        ((r * 128 + c) % 251) as f32
    });
    let boxes = SharedArray::<bf16, 4096, 1024>::new();
    acc.store_bf16_swizzled(64, &boxes.part::<1024>(t as usize / 32));
    thread::sync_threads();
    assert!(out.len() >= 4096);
    for e in (t as usize..4096).step_by(128) {
        // SAFETY: e < 4096 <= out.len(), and e % 128 = t: one thread per element.
        unsafe { *out.get_unchecked_mut(e) = boxes.read(e).to_bits() };
    }
}

#[test]
fn accum_store_bf16_swizzled_lays_out_a_tensor_map_box_with_the_128_byte_swizzle() {
    let mut v = vec![0xffffu16; 4096];
    let out = GlobalMut::new(&mut v);
    emulator::launch(LaunchConfig::new((1, 1, 1), (128, 1, 1)), || {
        swizzled_store(out.disjoint())
    })
    .unwrap();
    for warp in 0..4 {
        for r in 0..16 {
            for c in 0..64 {
                // The box's byte r * 128 + 2 c, its 16-byte chunk XORed with r % 8.
                let byte = r * 128 + 2 * c;
                let at = warp * 1024 + (byte ^ ((r % 8) << 4)) / 2;
                let (row, col) = (16 * warp + r, 64 + c);
                let want = bf16::from_f32(((row * 128 + col) % 251) as f32).to_bits();
                assert_eq!(v[at], want, "warp {warp}, box row {r}, column {c}");
            }
        }
    }
}
