//! Fused attention forward: `examples/attention`'s `attention_d64`/`_d128`
//! (FlashAttention-2's algorithm on `mma.sync`) and `attention_wgmma_d64`/`_d128` (on
//! `wgmma`, tensor-copy fed; the module must be built for sm_90a): head dimension 128
//! at 16 (batch, head) pairs × 4096 and 8 × 8192, head dimension 64 at 16 × 4096,
//! non-causal and causal. The bar compares the TFLOP/s with the same run's
//! cuBLAS BF16 GEMM at 8192³ (the `gemm_bf16` case). Each variant is checked first on
//! sampled query rows against an `f64` reference (outputs poisoned). Needs
//! `--attention-ptx`.

use anyhow::{bail, ensure, Result};
use cudarc::driver::{CudaSlice, LaunchConfig};
use device_std::bf16;
use host_loader::{Slice, SliceMut};
use rand::Rng;

use super::{rng, timed, Env, Launch, Row};
use attention_kernels::reference::attention_row;

/// `attention_d128`'s parameters.
type MmaSig = (
    Slice<bf16>,
    Slice<bf16>,
    Slice<bf16>,
    SliceMut<bf16>,
    u32,
    f32,
    u32,
);

pub(super) fn attention(env: &Env) -> Result<Vec<Row>> {
    let Some(module) = env.attention else {
        bail!("attention needs --attention-ptx (examples/attention's kernels)");
    };
    let shapes: &[(usize, usize, usize)] = if env.opts.quick {
        &[(2, 256, 128)]
    } else {
        &[(16, 4096, 128), (8, 8192, 128), (16, 4096, 64)]
    };
    let mut rows = Vec::new();
    for &(bh, seq, d) in shapes {
        rows.append(&mut shape(env, module, bh, seq, d)?);
    }
    Ok(rows)
}

/// Both kernels at `bh` (batch, head) pairs of `seq` × `d`, non-causal and causal.
fn shape(
    env: &Env,
    module: &host_loader::Module,
    bh: usize,
    seq: usize,
    d: usize,
) -> Result<Vec<Row>> {
    let kernel = module.kernel::<MmaSig>(&format!("attention_d{d}"))?;
    let n = bh * seq * d;
    let mut r = rng(env, 17 + seq as u64);
    let mut draw = |len: usize| example_support::random_bf16(&mut r, len);
    let (q, k, v) = (draw(n), draw(n), draw(n));
    let (q_d, k_d, v_d) = (
        env.stream.clone_htod(&q)?,
        env.stream.clone_htod(&k)?,
        env.stream.clone_htod(&v)?,
    );
    let cfg = LaunchConfig {
        grid_dim: (
            u32::try_from(seq.div_ceil(attention_kernels::BQ))?,
            u32::try_from(bh)?,
            1,
        ),
        block_dim: (attention_kernels::THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let (seq32, scale) = (u32::try_from(seq)?, 1.0 / (d as f32).sqrt());
    let launch = |o: &mut CudaSlice<bf16>, causal: u32| -> Result<()> {
        ensure!(o.len() >= n);
        // SAFETY: each block writes only its own 64 rows of one (batch, head), inside o;
        // q, k and v hold n elements each.
        Ok(unsafe { kernel.launch(env.stream, cfg, (&q_d, &k_d, &v_d, o, seq32, scale, causal)) }?)
    };
    // The wgmma kernel: tensor maps of [bh][seq][128], boxes of 64 (d) x rows.
    use attention_kernels::wgmma as fa3;
    type MapQ<'a> = host_loader::tma::TensorMap<'a, bf16, 3, 64, 64, 1, 1, 1, 128>;
    type MapKV<'a> = host_loader::tma::TensorMap<'a, bf16, 3, 64, 128, 1, 1, 1, 128>;
    let wgmma = module.kernel::<(
        MapQ<'static>,
        MapKV<'static>,
        MapKV<'static>,
        SliceMut<bf16>,
        u32,
        f32,
        u32,
    )>(&format!("attention_wgmma_d{d}"))?;
    let dims = [d as u64, seq as u64, bh as u64];
    let strides = [2 * d as u64, 2 * (seq * d) as u64];
    let map_q = MapQ::tiled(env.stream, &q_d, dims, &strides)?;
    let map_k = MapKV::tiled(env.stream, &k_d, dims, &strides)?;
    let map_v = MapKV::tiled(env.stream, &v_d, dims, &strides)?;
    let cfg_wgmma = LaunchConfig {
        grid_dim: (u32::try_from(seq.div_ceil(fa3::BQ))?, u32::try_from(bh)?, 1),
        block_dim: (fa3::THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let launch_wgmma = |o: &mut CudaSlice<bf16>, causal: u32| -> Result<()> {
        ensure!(o.len() >= n);
        // SAFETY: each block writes only its own 128 rows of one (batch, head), inside
        // o; the maps describe q_d, k_d and v_d, which outlive every launch.
        Ok(unsafe {
            wgmma.launch(
                env.stream,
                cfg_wgmma,
                (&map_q, &map_k, &map_v, o, seq32, scale, causal),
            )
        }?)
    };
    let full = |o: &mut CudaSlice<bf16>| launch(o, 0);
    let causal = |o: &mut CudaSlice<bf16>| launch(o, 1);
    let full_wgmma = |o: &mut CudaSlice<bf16>| launch_wgmma(o, 0);
    let causal_wgmma = |o: &mut CudaSlice<bf16>| launch_wgmma(o, 1);
    let mut rows = Vec::new();
    let flops_full = 4.0 * (bh * seq * seq * d) as f64;
    let (full_name, causal_name) = (
        format!("attention d{d} {bh}x{seq} full"),
        format!("attention d{d} {bh}x{seq} causal"),
    );
    type Variants<'a> = [(&'static str, Launch<'a, CudaSlice<bf16>>); 2];
    let cases: [(&str, bool, f64, Variants<'_>); 2] = [
        (
            &full_name,
            false,
            flops_full,
            [("rust wgmma", &full_wgmma), ("rust mma.sync", &full)],
        ),
        (
            &causal_name,
            true,
            flops_full / 2.0,
            [("rust wgmma", &causal_wgmma), ("rust mma.sync", &causal)],
        ),
    ];
    // The f32 GPU reference (examples/attention's check module), every element.
    use attention_kernels::check::ROWS_PER_BLOCK;
    let reference = module.kernel::<(
        Slice<bf16>,
        Slice<bf16>,
        Slice<bf16>,
        SliceMut<f32>,
        u32,
        u32,
        u32,
        f32,
        u32,
    )>("attention_reference_f32")?;
    let cfg_ref = LaunchConfig {
        grid_dim: (
            u32::try_from((bh * seq).div_ceil(ROWS_PER_BLOCK as usize))?,
            1,
            1,
        ),
        block_dim: (32 * ROWS_PER_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    for (name, is_causal, flops, variants) in cases {
        let mut want_d = env.stream.clone_htod(&vec![f32::NAN; n])?;
        let dims = (u32::try_from(bh)?, seq32, u32::try_from(d)?);
        // SAFETY: one warp per row writes that row of want_d (n elements); q, k and v
        // hold n elements each.
        unsafe {
            reference.launch(
                env.stream,
                cfg_ref,
                (
                    &q_d,
                    &k_d,
                    &v_d,
                    &mut want_d,
                    dims.0,
                    dims.1,
                    dims.2,
                    scale,
                    u32::from(is_causal),
                ),
            )
        }?;
        let want_all: Vec<f64> = env
            .stream
            .clone_dtoh(&want_d)?
            .into_iter()
            .map(f64::from)
            .collect();
        for (who, run) in &variants {
            let mut o = env.stream.clone_htod(&vec![bf16::NAN; n])?;
            run(&mut o)?;
            let got = env.stream.clone_dtoh(&o)?;
            ensure!(
                got.iter().all(|x| x.is_finite()),
                "{name} {who}: an output element was not written"
            );
            for _ in 0..8 {
                let (h, i) = (r.random_range(0..bh), r.random_range(0..seq));
                let want = attention_row((&q, &k, &v), (seq, d), h, i, is_causal);
                let row = &got[(h * seq + i) * d..][..d];
                let (err, _) = example_support::frobenius(row.iter().map(|x| x.to_f64()), &want);
                ensure!(
                    err < 1e-2,
                    "{name} {who}: row {i} of head {h}: relative error {err:e}"
                );
            }
            let (err, unwritten) =
                example_support::frobenius(got.iter().map(|x| x.to_f64()), &want_all);
            ensure!(
                unwritten == 0 && err < 1e-2,
                "{name} {who}: against the f32 GPU reference, relative Frobenius error {err:e}, {unwritten} not finite"
            );
            println!("check {name} {who}: every element against the f32 GPU reference, relative Frobenius error {err:.2e}");
        }
        let mut o = env.stream.alloc_zeros::<bf16>(n)?;
        rows.append(&mut timed(
            env,
            name,
            (0.0, flops),
            &mut o,
            |_| Ok(()),
            &variants,
        )?);
    }
    Ok(rows)
}
