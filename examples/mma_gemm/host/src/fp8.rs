//! The FP8 checks (with `--wgmma`: the module is built for sm_90a): `fp8_convert`'s bits
//! against the host's conversions (the emulator's; NaNs as NaNs of their type), and
//! `gemm_wgmma_fp8` against an `f64` reference.

use anyhow::Result;
use float8::{F8E4M3, F8E5M2};
use half::bf16;
use host_loader::cudarc::driver::CudaStream;
use host_loader::{LaunchConfig, Module, Slice, SliceMut};
use rand::Rng;
use std::sync::Arc;

/// The inputs of the conversion check: every `f32` whose low 16 bits are one of the
/// rounding-relevant patterns (zero, one, just below and at and above the halves of the
/// 16 bits, all ones) under every high half (sign, exponent, 7 mantissa bits: every
/// binade and the ties of both FP8 types' mantissas), then `random` random bit patterns.
fn conversion_inputs(rng: &mut impl Rng, random: usize) -> Vec<f32> {
    let lows = [0u32, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF];
    let mut x: Vec<f32> = (0..=u16::MAX as u32)
        .flat_map(|hi| lows.map(|lo| f32::from_bits(hi << 16 | lo)))
        .collect();
    x.extend((0..random).map(|_| f32::from_bits(rng.random())));
    if x.len() % 2 == 1 {
        x.push(0.0);
    }
    x
}

/// `fp8_convert` on the GPU against `float8`'s conversions (what the emulator and host
/// code compute): every pair's bits for both types, and the values converted back
/// (NaN compared as NaN). Returns the number of mismatching elements (at most the first
/// five are printed).
fn conversions(stream: &Arc<CudaStream>, module: &Module, rng: &mut impl Rng) -> Result<usize> {
    type Sig = (Slice<f32>, SliceMut<u16>, SliceMut<u16>, SliceMut<f32>);
    let kernel = module.kernel::<Sig>("fp8_convert")?;
    let x = conversion_inputs(rng, 1 << 22);
    let pairs = x.len() / 2;
    let x_d = stream.clone_htod(&x)?;
    let mut e4_d = stream.clone_htod(&vec![0xFFFFu16; pairs])?;
    let mut e5_d = stream.clone_htod(&vec![0xFFFFu16; pairs])?;
    let mut back_d = stream.clone_htod(&vec![f32::NAN; 4 * pairs])?;
    let cfg = LaunchConfig {
        grid_dim: (u32::try_from(pairs.div_ceil(256))?, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: thread i writes e4[i], e5[i] and back[4 i .. 4 i + 4], inside the buffers.
    unsafe { kernel.launch(stream, cfg, (&x_d, &mut e4_d, &mut e5_d, &mut back_d)) }?;
    let (e4, e5, back) = (
        stream.clone_dtoh(&e4_d)?,
        stream.clone_dtoh(&e5_d)?,
        stream.clone_dtoh(&back_d)?,
    );
    let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    // PTX promises "NaN in, NaN out", not which NaN: a NaN byte matches any NaN byte of
    // its type (e4m3: `x111_1111`; e5m2: exponent all ones, mantissa not zero), and every
    // other byte bit for bit.
    let byte_eq = |got: u16, want: u16, nan: fn(u8) -> bool| {
        got.to_le_bytes()
            .into_iter()
            .zip(want.to_le_bytes())
            .all(|(g, w)| g == w || (nan(g) && nan(w)))
    };
    let nan4: fn(u8) -> bool = |b| b & 0x7F == 0x7F;
    let nan5: fn(u8) -> bool = |b| b & 0x7F > 0x7C;
    let mut bad = 0;
    for i in 0..pairs {
        let (lo, hi) = (x[2 * i], x[2 * i + 1]);
        let w4 = [F8E4M3::from_f32(lo), F8E4M3::from_f32(hi)];
        let w5 = [F8E5M2::from_f32(lo), F8E5M2::from_f32(hi)];
        let want4 = u16::from(w4[0].to_bits()) | u16::from(w4[1].to_bits()) << 8;
        let want5 = u16::from(w5[0].to_bits()) | u16::from(w5[1].to_bits()) << 8;
        let want_back = [
            w4[0].to_f32(),
            w4[1].to_f32(),
            w5[0].to_f32(),
            w5[1].to_f32(),
        ];
        let ok = byte_eq(e4[i], want4, nan4)
            && byte_eq(e5[i], want5, nan5)
            && (0..4).all(|j| same(back[4 * i + j], want_back[j]));
        if !ok {
            if bad < 5 {
                println!(
                    "  fp8_convert({lo:e} [{:#010x}], {hi:e} [{:#010x}]): e4m3 {:#06x} want \
                     {want4:#06x}, e5m2 {:#06x} want {want5:#06x}, back {:?} want {want_back:?}",
                    lo.to_bits(),
                    hi.to_bits(),
                    e4[i],
                    e5[i],
                    &back[4 * i..4 * i + 4],
                );
            }
            bad += 1;
        }
    }
    println!(
        "{} fp8_convert: {} values, {bad} pairs differ from the host's bits",
        if bad == 0 { "PASS" } else { "FAIL" },
        x.len()
    );
    Ok(bad)
}

/// `n` random e4m3 values from `f32`s uniform in (-400, 400), as per-tensor scaling
/// leaves a tensor.
fn random_e4m3(rng: &mut impl Rng, n: usize) -> Vec<F8E4M3> {
    (0..n)
        .map(|_| F8E4M3::from_f32(rng.random_range(-400.0..400.0)))
        .collect()
}

/// `gemm_wgmma_fp8` (`c = scale · a · bᵀ`, e4m3 in, `bf16` out), and
/// `gemm_wgmma_fp8_tma_store` where `n` is a multiple of 8, at square and ragged sizes (`k` a multiple of 16) against an `f64` reference: relative Frobenius error
/// below 1e-2, every element written (poisoned with NaN first). Returns the number of
/// failed runs.
fn gemm(stream: &Arc<CudaStream>, module: &Module, rng: &mut impl Rng, seed: u64) -> Result<usize> {
    use host_loader::tma::TensorMap;
    use mma_gemm_kernels::{WG_BK_FP8, WG_BM, WG_BN};
    type MapA<'a> = TensorMap<'a, F8E4M3, 2, WG_BK_FP8, WG_BM, 1, 1, 1, 128>;
    type MapB<'a> = TensorMap<'a, F8E4M3, 2, WG_BK_FP8, WG_BN, 1, 1, 1, 128>;
    type Sig = (
        MapA<'static>,
        MapB<'static>,
        SliceMut<bf16>,
        u32,
        u32,
        u32,
        u32,
        f32,
    );
    let kernel = module.kernel::<Sig>("gemm_wgmma_fp8")?;
    // `gemm_wgmma_fp8_tma_store` writes c through its map (boxes of 64 columns x 16 rows).
    type MapC<'a> = TensorMap<'a, bf16, 2, 64, 16, 1, 1, 1, 128>;
    type StoreSig = (
        MapA<'static>,
        MapB<'static>,
        MapC<'static>,
        u32,
        u32,
        u32,
        u32,
        f32,
    );
    let store = module.kernel::<StoreSig>("gemm_wgmma_fp8_tma_store")?;
    let scale = 1.0f32 / (400.0 * 400.0);
    let mut failed = 0;
    for (m, n, k) in [
        (128, 256, 128),
        (256, 512, 1024),
        (77, 45, 48),
        (1000, 1000, 1008),
        (300, 700, 4112),
    ] {
        let a = random_e4m3(rng, m * k);
        let bt = random_e4m3(rng, n * k);
        let want: Vec<f64> = (0..m * n)
            .map(|e| {
                let (i, j) = (e / n, e % n);
                let dot: f64 = (0..k)
                    .map(|p| f64::from(a[i * k + p].to_f32()) * f64::from(bt[j * k + p].to_f32()))
                    .sum();
                f64::from(scale) * dot
            })
            .collect();
        let (a_d, b_d) = (stream.clone_htod(&a)?, stream.clone_htod(&bt)?);
        let stride = [k as u64];
        let map_a = MapA::tiled(stream, &a_d, [k as u64, m as u64], &stride)?;
        let map_b = MapB::tiled(stream, &b_d, [k as u64, n as u64], &stride)?;
        let (m32, n32, k32) = (m as u32, n as u32, k as u32);
        let tiles = u32::try_from(m.div_ceil(WG_BM) * n.div_ceil(WG_BN))?;
        // One block per tile, then three persistent blocks taking the tiles in turn.
        for (name, blocks) in [
            ("gemm_wgmma_fp8", tiles),
            ("gemm_wgmma_fp8 persistent (3 blocks)", 3),
        ] {
            let mut c_d = stream.clone_htod(&vec![bf16::NAN; m * n])?;
            let cfg = LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (384, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: the blocks write the 128 x 256 tiles of c, masked to m x n, each
            // once; the maps describe a_d and b_d, which outlive the launch.
            unsafe {
                kernel.launch(
                    stream,
                    cfg,
                    (&map_a, &map_b, &mut c_d, m32, n32, k32, 8, scale),
                )
            }?;
            let c = stream.clone_dtoh(&c_d)?;
            failed += crate::report(
                name,
                &format!("{m}x{n}x{k}"),
                c.iter().map(|x| x.to_f64()),
                &want,
                1e-2,
                seed,
            );
            // The same through c's map, where its rows are a multiple of 16 bytes.
            if n % 8 != 0 {
                continue;
            }
            let c_d = stream.clone_htod(&vec![bf16::NAN; m * n])?;
            let map_c = MapC::tiled(stream, &c_d, [n as u64, m as u64], &[2 * n as u64])?;
            // SAFETY: as above; the blocks write c only through map_c, which describes
            // c_d (m x n), each box once.
            unsafe {
                store.launch(
                    stream,
                    cfg,
                    (&map_a, &map_b, &map_c, m32, n32, k32, 8, scale),
                )
            }?;
            drop(map_c);
            let c = stream.clone_dtoh(&c_d)?;
            failed += crate::report(
                &name.replace("gemm_wgmma_fp8", "gemm_wgmma_fp8_tma_store"),
                &format!("{m}x{n}x{k}"),
                c.iter().map(|x| x.to_f64()),
                &want,
                1e-2,
                seed,
            );
        }
    }
    Ok(failed)
}

/// Both FP8 checks; returns the number of failures.
pub fn check(
    stream: &Arc<CudaStream>,
    module: &Module,
    rng: &mut impl Rng,
    seed: u64,
) -> Result<usize> {
    Ok(conversions(stream, module, rng)? + gemm(stream, module, rng, seed)?)
}
