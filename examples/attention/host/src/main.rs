//! Runs the fused attention kernels (`attention_d64`, `attention_d128`, and
//! `attention_wgmma_d64`/`_d128` when the module was built for sm_90a) on the GPU at whole and
//! ragged sequence lengths, causal and not, outputs poisoned first, and
//! compares every element with the `f64` CPU reference from the same `bf16` inputs:
//! relative Frobenius error below 1e-2 (`P` and `O` are rounded to `bf16`: ~2e-3).

use anyhow::{bail, Result};
use clap::Parser;
use example_support::{frobenius, random_bf16};
use half::bf16;
use host_loader::{open_device, LaunchConfig, Module, Slice, SliceMut};
use rand::SeedableRng;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "target/ptx/attention-kernels.ptx")]
    ptx: String,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, &args.ptx)?;
    type Sig = (
        Slice<bf16>,
        Slice<bf16>,
        Slice<bf16>,
        SliceMut<bf16>,
        u32,
        f32,
        u32,
    );
    let d64 = module.kernel::<Sig>("attention_d64")?;
    let d128 = module.kernel::<Sig>("attention_d128")?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    let mut failed = 0;
    for (bh, seq, d, causal) in [
        (2, 128, 64, false),
        (3, 300, 64, true),
        (1, 37, 64, false),
        (2, 256, 128, false),
        (2, 200, 128, true),
        (4, 512, 128, true),
    ] {
        let n = bh * seq * d;
        let (q, k, v) = (
            random_bf16(&mut rng, n),
            random_bf16(&mut rng, n),
            random_bf16(&mut rng, n),
        );
        let want = attention_kernels::reference::attention(&q, &k, &v, bh, seq, d, causal);
        let (q_d, k_d, v_d) = (
            stream.clone_htod(&q)?,
            stream.clone_htod(&k)?,
            stream.clone_htod(&v)?,
        );
        let mut o_d = stream.clone_htod(&vec![bf16::NAN; n])?;
        let cfg = LaunchConfig {
            grid_dim: (
                u32::try_from(seq.div_ceil(attention_kernels::BQ))?,
                u32::try_from(bh)?,
                1,
            ),
            block_dim: (attention_kernels::THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let kernel = if d == 64 { &d64 } else { &d128 };
        let (seq32, scale) = (u32::try_from(seq)?, 1.0 / (d as f32).sqrt());
        // SAFETY: each block writes only its own 64 rows of one (batch, head), inside o.
        unsafe {
            kernel.launch(
                &stream,
                cfg,
                (&q_d, &k_d, &v_d, &mut o_d, seq32, scale, causal as u32),
            )
        }?;
        let o = stream.clone_dtoh(&o_d)?;
        let (err, nan) = frobenius(o.iter().map(|x| x.to_f64()), &want);
        let ok = nan == 0 && err < 1e-2;
        println!(
            "{} attention d{d} bh {bh} seq {seq} causal {causal}: relative Frobenius error {err:.2e}, {nan} unwritten (seed {})",
            if ok { "PASS" } else { "FAIL" },
            args.seed
        );
        failed += !ok as usize;
    }
    failed += check_wgmma(&module, &stream, &mut rng, args.seed)?;
    if failed > 0 {
        bail!("{failed} case(s) failed");
    }
    Ok(())
}

/// `attention_wgmma_d64` and `_d128` (tensor maps of `[bh][seq][d]`) at whole, ragged,
/// long and causal shapes; the number of failed cases. Skipped, saying so, when the
/// module has no such kernel (built for another architecture than sm_90a).
fn check_wgmma(
    module: &Module,
    stream: &std::sync::Arc<host_loader::cudarc::driver::CudaStream>,
    rng: &mut rand::rngs::StdRng,
    seed: u64,
) -> Result<usize> {
    use attention_kernels::wgmma::{BQ, THREADS};
    use host_loader::tma::TensorMap;
    type MapQ<'a> = TensorMap<'a, bf16, 3, 64, 64, 1, 1, 1, 128>;
    type MapKV<'a> = TensorMap<'a, bf16, 3, 64, 128, 1, 1, 1, 128>;
    type Sig = (
        MapQ<'static>,
        MapKV<'static>,
        MapKV<'static>,
        SliceMut<bf16>,
        u32,
        f32,
        u32,
    );
    let (d64, d128) = match (
        module.kernel::<Sig>("attention_wgmma_d64"),
        module.kernel::<Sig>("attention_wgmma_d128"),
    ) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) if e.is_missing_kernel() => {
            println!("SKIP attention_wgmma_d64/_d128: not in this module (build it for sm_90a)");
            return Ok(0);
        }
        (Err(e), _) | (_, Err(e)) => return Err(e.into()),
    };
    let mut failed = 0;
    for (bh, seq, d, causal) in [
        (2, 256, 128, false),
        (2, 200, 128, true),
        (4, 512, 128, true),
        (1, 1000, 128, false),
        (3, 700, 128, true),
        (2, 256, 64, false),
        (3, 300, 64, true),
        (1, 1000, 64, false),
    ] {
        let kernel = if d == 64 { &d64 } else { &d128 };
        let n = bh * seq * d;
        let (q, k, v) = (
            random_bf16(rng, n),
            random_bf16(rng, n),
            random_bf16(rng, n),
        );
        let want = attention_kernels::reference::attention(&q, &k, &v, bh, seq, d, causal);
        let (q_d, k_d, v_d) = (
            stream.clone_htod(&q)?,
            stream.clone_htod(&k)?,
            stream.clone_htod(&v)?,
        );
        let dims = [d as u64, seq as u64, bh as u64];
        let strides = [2 * d as u64, 2 * (seq * d) as u64];
        let map_q = MapQ::tiled(stream, &q_d, dims, &strides)?;
        let map_k = MapKV::tiled(stream, &k_d, dims, &strides)?;
        let map_v = MapKV::tiled(stream, &v_d, dims, &strides)?;
        let mut o_d = stream.clone_htod(&vec![bf16::NAN; n])?;
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(seq.div_ceil(BQ))?, u32::try_from(bh)?, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let (seq32, scale) = (u32::try_from(seq)?, 1.0 / (d as f32).sqrt());
        // SAFETY: each block writes only its own 128 rows of one (batch, head), inside o;
        // the maps describe q_d, k_d and v_d, which outlive the launch.
        unsafe {
            kernel.launch(
                stream,
                cfg,
                (
                    &map_q,
                    &map_k,
                    &map_v,
                    &mut o_d,
                    seq32,
                    scale,
                    causal as u32,
                ),
            )
        }?;
        let o = stream.clone_dtoh(&o_d)?;
        let (err, nan) = frobenius(o.iter().map(|x| x.to_f64()), &want);
        let ok = nan == 0 && err < 1e-2;
        println!(
            "{} attention_wgmma d{d} bh {bh} seq {seq} causal {causal}: relative Frobenius error {err:.2e}, {nan} unwritten (seed {seed})",
            if ok { "PASS" } else { "FAIL" },
        );
        failed += !ok as usize;
    }
    Ok(failed)
}
