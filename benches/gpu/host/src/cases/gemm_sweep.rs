//! The persistent `gemm_wgmma` (one block per SM) against cuBLAS on a sweep of shapes,
//! square from 512 to 16384, wide, tall, deep and ragged (`k` a multiple of 8, as the
//! tensor maps' 16-byte row stride needs): issue 32 asks for at least 0.95× cuBLAS on
//! such a sweep. `gemm_wgmma_128x128` (the same kernel with 128 × 128 tiles, for outputs
//! whose 128 × 256 tiles leave SMs idle) runs beside it, and `gemm_wgmma_tma_store` (the
//! 128 × 256 kernel storing `c` through a tensor map) and `gemm_wgmma_128x128_tma_store`
//! where `n` is a multiple of 8. Each shape and variant is checked
//! first on 2048 sampled elements against an `f64` dot product (output poisoned). Needs
//! `--gemm-ptx`.

use anyhow::{bail, Result};
use cudarc::cublas::{CudaBlas, Gemm};
use cudarc::driver::{CudaSlice, LaunchConfig};
use device_std::bf16;
use mma_gemm_kernels::{WG_BK, WG_BM, WG_BN, WG_BN_128};

use super::{
    bf16_gemm_samples, check_gemm_samples, check_written, cublas_bt_bf16, gemm_wgmma_kernel,
    gemm_wgmma_tma_store_kernel, map_c, poisoned_bf16, rng, sm_count, timed, Env, Launch, MapC,
    Row, WgmmaMapA, WgmmaMapB, WgmmaSig,
};

pub(super) fn gemm_sweep(env: &Env) -> Result<Vec<Row>> {
    let Some(module) = env.gemm else {
        bail!("gemm_sweep needs --gemm-ptx (examples/mma_gemm built with --arch sm_90a)");
    };
    let gemm = gemm_wgmma_kernel(module)?;
    let gemm128 = module.kernel::<WgmmaSig<MapB128<'static>>>("gemm_wgmma_128x128")?;
    let gemm_store = gemm_wgmma_tma_store_kernel(module)?;
    let gemm_store128 = module.kernel::<StoreSig128<'static>>("gemm_wgmma_128x128_tma_store")?;
    let blas = CudaBlas::new(env.stream.clone())?;
    let sms = sm_count(env)?;
    use host_loader::tma::L2Promotion;
    let promotion = match env.opts.gemm_l2_promotion {
        0 => L2Promotion::None,
        64 => L2Promotion::B64,
        128 => L2Promotion::B128,
        256 => L2Promotion::B256,
        other => bail!("--gemm-l2-promotion {other}: expected 0, 64, 128 or 256"),
    };
    let asked = env
        .opts
        .gemm_shapes
        .as_deref()
        .map(parse_shapes)
        .transpose()?;
    let shapes: &[(usize, usize, usize)] = if let Some(asked) = &asked {
        asked
    } else if env.opts.quick {
        &[(512, 512, 512), (300, 700, 136)]
    } else {
        &[
            (512, 512, 512),
            (1024, 1024, 1024),
            (2048, 2048, 2048),
            (6144, 6144, 6144),
            (16384, 16384, 16384),
            (8192, 1024, 8192),
            (1024, 8192, 8192),
            (4096, 16384, 2048),
            (2048, 2048, 16384),
            (3000, 5000, 4104),
            (777, 4444, 1000),
        ]
    };
    let mut rows = Vec::new();
    for &(m, n, k) in shapes {
        let mut r = rng(env, 23 + (m * 31 + n * 7 + k) as u64);
        let a = example_support::random_bf16(&mut r, m * k);
        let bt = example_support::random_bf16(&mut r, n * k);
        let (a_d, b_d) = (env.stream.clone_htod(&a)?, env.stream.clone_htod(&bt)?);
        let stride = [2 * k as u64];
        let (dims_a, dims_b) = ([k as u64, m as u64], [k as u64, n as u64]);
        let map_a = WgmmaMapA::tiled_with_promotion(env.stream, &a_d, dims_a, &stride, promotion)?;
        let map_b = WgmmaMapB::tiled_with_promotion(env.stream, &b_d, dims_b, &stride, promotion)?;
        let tiles = u32::try_from(m.div_ceil(WG_BM) * n.div_ceil(WG_BN))?;
        let cfg = LaunchConfig {
            grid_dim: (tiles.min(sms), 1, 1),
            block_dim: (384, 1, 1),
            shared_mem_bytes: 0,
        };
        let (m32, n32, k32) = (u32::try_from(m)?, u32::try_from(n)?, u32::try_from(k)?);
        // SAFETY: the blocks write the 128 x 256 tiles of c (m x n), each once, masked;
        // the maps describe a_d and b_d, which outlive every launch.
        let rust = |c: &mut CudaSlice<bf16>| -> Result<()> {
            Ok(unsafe { gemm.launch(env.stream, cfg, (&map_a, &map_b, c, m32, n32, k32, 8)) }?)
        };
        let map_b128 = MapB128::tiled_with_promotion(env.stream, &b_d, dims_b, &stride, promotion)?;
        let tiles128 = u32::try_from(m.div_ceil(WG_BM) * n.div_ceil(WG_BN_128))?;
        let cfg128 = LaunchConfig {
            grid_dim: (tiles128.min(sms), 1, 1),
            ..cfg
        };
        // SAFETY: as `rust`, with 128 x 128 tiles.
        let rust128 = |c: &mut CudaSlice<bf16>| -> Result<()> {
            Ok(unsafe {
                gemm128.launch(env.stream, cfg128, (&map_a, &map_b128, c, m32, n32, k32, 8))
            }?)
        };
        let gemm_cfg = cublas_bt_bf16(m, n, k);
        // SAFETY: a_d holds m x k, b_d n x k and c m x n elements.
        let cublas = |c: &mut CudaSlice<bf16>| -> Result<()> {
            Ok(unsafe { blas.gemm(gemm_cfg, &b_d, &a_d, c) }?)
        };
        // c through a tensor map (rows a multiple of 16 bytes only). Each map-store
        // kernel writes its own poisoned buffer, mapped once (no map is encoded inside
        // the timing), checked after its first launch and after the timing.
        let stores = n.is_multiple_of(8);
        // SAFETY: as `rust`; the blocks write c only through its map, each box once.
        let store_into = |map: &MapC<'_>| -> Result<()> {
            Ok(unsafe {
                gemm_store.launch(env.stream, cfg, (&map_a, &map_b, map, m32, n32, k32, 8))
            }?)
        };
        let outputs = if stores { m * n } else { 1 };
        let (c_store, c_store128) = (poisoned_bf16(env, outputs)?, poisoned_bf16(env, outputs)?);
        let (map_store, map_store128) = if stores {
            (
                Some(map_c(env, &c_store, m, n)?),
                Some(map_c(env, &c_store128, m, n)?),
            )
        } else {
            (None, None)
        };
        let store_timed = |_: &mut CudaSlice<bf16>| -> Result<()> {
            store_into(map_store.as_ref().expect("timed only where n % 8 == 0"))
        };
        // The same with 128 x 128 tiles and six stages.
        // SAFETY: as `store_into`, with 128 x 128 tiles.
        let store128_into = |map: &MapC<'_>| -> Result<()> {
            Ok(unsafe {
                gemm_store128.launch(
                    env.stream,
                    cfg128,
                    (&map_a, &map_b128, map, m32, n32, k32, 8),
                )
            }?)
        };
        let store128_timed = |_: &mut CudaSlice<bf16>| -> Result<()> {
            store128_into(map_store128.as_ref().expect("timed only where n % 8 == 0"))
        };
        let samples = bf16_gemm_samples(&mut r, (&a, &bt), (m, n, k));
        let mut variants: Vec<(&'static str, Launch<'_, CudaSlice<bf16>>)> = vec![
            ("rust persistent", &rust),
            ("cuBLAS", &cublas),
            ("rust 128x128 persistent", &rust128),
        ];
        for &(who, launch) in &variants {
            check_gemm_samples(
                env,
                &format!("gemm_sweep {m}x{n}x{k} {who}"),
                (m, n, k),
                launch,
                &samples,
            )?;
        }
        // The map-store kernels, named as the timing names them, with their buffers.
        let stored = [
            ("rust tma-store persistent", &c_store),
            ("rust 128x128 tma-store persistent", &c_store128),
        ];
        if let (Some(map), Some(map128)) = (&map_store, &map_store128) {
            store_into(map)?;
            store128_into(map128)?;
            for (who, c) in stored {
                check_written(
                    env,
                    &format!("gemm_sweep {m}x{n}x{k} {who}"),
                    (m, n, k),
                    c,
                    &samples,
                )?;
            }
        }
        if stores {
            variants.push(("rust tma-store persistent", &store_timed));
            variants.push(("rust 128x128 tma-store persistent", &store128_timed));
        }
        let mut c = env.stream.alloc_zeros::<bf16>(m * n)?;
        rows.append(&mut timed(
            env,
            &format!("gemm {m}x{n}x{k}"),
            (0.0, 2.0 * (m * n * k) as f64),
            &mut c,
            |_| Ok(()),
            &variants,
        )?);
        // The timed map-store launches wrote their own buffers: check them again.
        if stores {
            for (who, c) in stored {
                let what = format!("gemm_sweep {m}x{n}x{k} {who} (timed)");
                check_written(env, &what, (m, n, k), c, &samples)?;
            }
        }
    }
    Ok(rows)
}

/// `--gemm-shapes`: comma-separated `MxNxK`, each extent positive and `k` a multiple of 8.
fn parse_shapes(list: &str) -> Result<Vec<(usize, usize, usize)>> {
    list.split(',')
        .map(|shape| {
            let dims: Vec<usize> = shape
                .trim()
                .split('x')
                .map(str::parse)
                .collect::<Result<_, _>>()
                .map_err(|e| anyhow::anyhow!("--gemm-shapes: {shape:?}: {e}"))?;
            match dims[..] {
                [m, n, k] if m > 0 && n > 0 && k > 0 && k.is_multiple_of(8) => Ok((m, n, k)),
                _ => bail!("--gemm-shapes: {shape:?} is not MxNxK with positive extents and k a multiple of 8"),
            }
        })
        .collect()
}

/// `gemm_wgmma_128x128_tma_store`'s parameters: `(map_a, map_b, map_c, m, n, k, group_m)`.
type StoreSig128<'a> = (WgmmaMapA<'a>, MapB128<'a>, MapC<'a>, u32, u32, u32, u32);

/// The tensor map of `b` that `gemm_wgmma_128x128` takes: boxes of 64 (`k`) × 128 rows.
type MapB128<'a> = host_loader::tma::TensorMap<'a, bf16, 2, WG_BK, WG_BN_128, 1, 1, 1, 128>;
