//! Runs example kernels on the GPU and under device-std's CPU emulator on the
//! same random inputs (outputs poisoned first), and compares the two bit for
//! bit where both do the same IEEE operations in the same order: `vecadd`,
//! `transpose`, `histogram`, `block_sum` (an f32 tree of additions) and
//! `warp_reduce` (shuffles and additions). `softmax` uses the hardware's
//! approximate `ex2` on the GPU and `f32::exp2` in the emulator, so it is
//! compared with a tolerance and its largest difference in ulps reported.
//! Each kernel is also checked against its CPU reference.
//!
//! Prints one PASS/FAIL line per kernel and `N passed, M failed` last; exits
//! 1 on any failure.
//!
//! ```sh
//! emulator-compare --ptx-dir target/ptx --n 1048576 --seed 7
//! ```

use anyhow::{Context, Result};
use clap::Parser;
use emulated_tests::{emulate, inputs, reference};
use example_support::{random_f32, rng};
use host_loader::{for_num_elems, open_device, LaunchConfig, Module, PtrMut, Slice, SliceMut};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

#[derive(Parser, Debug)]
struct Args {
    /// Folder holding `<kernel crate>.ptx` (from `cargo xtask build-ptx`).
    #[arg(long, default_value = "target/ptx")]
    ptx_dir: PathBuf,
    /// Elements of the 1D inputs (the matrices have about as many).
    #[arg(long, default_value_t = 1 << 20)]
    n: usize,
    /// Seed of the random inputs (default: the clock; printed).
    #[arg(long)]
    seed: Option<u64>,
}

/// A kernel's verdict.
struct Verdict {
    name: &'static str,
    passed: bool,
    detail: String,
}

fn load(
    ctx: &Arc<cudarc::driver::CudaContext>,
    dir: &std::path::Path,
    krate: &str,
) -> Result<Module> {
    let path = dir.join(format!("{krate}.ptx"));
    Module::from_ptx_file(ctx, &path).with_context(|| format!("loading {}", path.display()))
}

/// Elements whose bits differ.
fn bit_diffs<T: bytemuck::Pod>(a: &[T], b: &[T]) -> usize {
    let (a, b): (&[u8], &[u8]) = (bytemuck::cast_slice(a), bytemuck::cast_slice(b));
    let size = std::mem::size_of::<T>();
    a.chunks(size)
        .zip(b.chunks(size))
        .filter(|(x, y)| x != y)
        .count()
        + a.len().abs_diff(b.len()) / size
}

/// `identical` when GPU and emulator agree bit for bit and both match the
/// CPU reference (`ref_bad` elements differ from it).
fn exact(name: &'static str, diffs: usize, n: usize, ref_bad: usize) -> Verdict {
    Verdict {
        name,
        passed: diffs == 0 && ref_bad == 0,
        detail: format!(
            "{diffs} of {n} elements differ between GPU and emulator (bit for bit); {ref_bad} differ from the CPU reference"
        ),
    }
}

fn ulps(a: f32, b: f32) -> u32 {
    let key = |x: f32| {
        let i = x.to_bits() as i32;
        if i < 0 {
            i32::MIN - i
        } else {
            i
        }
    };
    key(a).abs_diff(key(b))
}

fn main() -> Result<()> {
    let args = Args::parse();
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    let n = args.n;
    let mut r = rng(seed);
    let (ctx, stream) = open_device(0)?;
    let mut verdicts = Vec::new();
    let t0 = Instant::now();

    // vecadd
    {
        let m = load(&ctx, &args.ptx_dir, "vecadd-kernels")?;
        let k = m.kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")?;
        let (a, b) = (
            random_f32(&mut r, n, -1000.0, 1000.0),
            random_f32(&mut r, n, -1000.0, 1000.0),
        );
        let (ad, bd) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
        let mut cd = stream.clone_htod(&vec![emulate::POISON; n])?;
        // SAFETY: vecadd writes c[i] for i < c.len() only; inputs are bounds-checked.
        unsafe {
            k.launch(
                &stream,
                for_num_elems(u32::try_from(n)?, emulate::BLOCK_1D)?,
                (&ad, &bd, &mut cd),
            )
        }?;
        let gpu = stream.clone_dtoh(&cd)?;
        let emu = emulate::vecadd(&a, &b)?;
        let bad = bit_diffs(&gpu, &reference::vecadd(&a, &b));
        verdicts.push(exact("vecadd", bit_diffs(&gpu, &emu), n, bad));
    }

    // transpose: sides not multiples of the tile
    {
        use transpose_kernels::{BLOCK_ROWS, TILE};
        let rows = ((n as f64).sqrt() as usize | 1) + 2;
        let cols = (n / rows).max(1) + 1;
        let m = load(&ctx, &args.ptx_dir, "transpose-kernels")?;
        let k = m.kernel::<(Slice<f32>, SliceMut<f32>, u32, u32)>("transpose")?;
        let input = random_f32(&mut r, rows * cols, -1000.0, 1000.0);
        let id = stream.clone_htod(&input)?;
        let mut od = stream.clone_htod(&vec![emulate::POISON; rows * cols])?;
        let cfg = LaunchConfig {
            grid_dim: (
                u32::try_from(cols.div_ceil(TILE))?,
                u32::try_from(rows.div_ceil(TILE))?,
                1,
            ),
            block_dim: (TILE as u32, BLOCK_ROWS as u32, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: each in-bounds output element is written by one thread.
        unsafe {
            k.launch(
                &stream,
                cfg,
                (&id, &mut od, u32::try_from(rows)?, u32::try_from(cols)?),
            )
        }?;
        let gpu = stream.clone_dtoh(&od)?;
        let emu = emulate::transpose(&input, rows, cols)?;
        let bad = bit_diffs(&gpu, &reference::transpose(&input, rows, cols));
        verdicts.push(exact("transpose", bit_diffs(&gpu, &emu), rows * cols, bad));
    }

    // histogram
    {
        let m = load(&ctx, &args.ptx_dir, "histogram-kernels")?;
        let k = m.kernel::<(Slice<u8>, PtrMut<u32>)>("histogram")?;
        let data = inputs::histogram_bytes(&mut r, n);
        let offsets = inputs::histogram_offsets();
        let dd = stream.clone_htod(&data)?;
        let mut bd = stream.clone_htod(&offsets)?;
        let cfg = LaunchConfig {
            grid_dim: (emulate::histogram_blocks(n), 1, 1),
            block_dim: (histogram_kernels::BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: `bins` holds 256 u32s, written only atomically.
        unsafe { k.launch(&stream, cfg, (&dd, &mut bd)) }?;
        let gpu = stream.clone_dtoh(&bd)?;
        let emu = emulate::histogram(&data, &offsets)?;
        let bad = bit_diffs(&gpu, &reference::histogram(&data, &offsets));
        verdicts.push(exact("histogram", bit_diffs(&gpu, &emu), gpu.len(), bad));
    }

    // block_sum
    {
        let m = load(&ctx, &args.ptx_dir, "block_sum-kernels")?;
        let k = m.kernel::<(Slice<f32>, SliceMut<f32>)>("block_sum")?;
        let input = random_f32(&mut r, n, -1.0, 1.0);
        let blocks = n.div_ceil(block_sum_kernels::ITEMS_PER_BLOCK);
        let id = stream.clone_htod(&input)?;
        let mut pd = stream.clone_htod(&vec![emulate::POISON; blocks])?;
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(blocks)?, 1, 1),
            block_dim: (block_sum_kernels::BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: block b's leader writes partial[b] only.
        unsafe { k.launch(&stream, cfg, (&id, &mut pd)) }?;
        let gpu = stream.clone_dtoh(&pd)?;
        let emu = emulate::block_sum(&input)?;
        let bad = bit_diffs(&gpu, &reference::block_sum_tree(&input));
        verdicts.push(exact("block_sum", bit_diffs(&gpu, &emu), blocks, bad));
    }

    // warp_reduce
    {
        let m = load(&ctx, &args.ptx_dir, "warp_reduce-kernels")?;
        let k = m.kernel::<(
            Slice<f32>,
            Slice<u32>,
            Slice<i64>,
            SliceMut<f32>,
            SliceMut<u32>,
            SliceMut<i64>,
        )>("warp_reduce")?;
        let (xs, keys, big) = inputs::warp_reduce_inputs(&mut r, n);
        let warps = n.div_ceil(32);
        let (xd, kd, bd) = (
            stream.clone_htod(&xs)?,
            stream.clone_htod(&keys)?,
            stream.clone_htod(&big)?,
        );
        let mut sd = stream.clone_htod(&vec![emulate::POISON; warps])?;
        let mut md = stream.clone_htod(&vec![emulate::POISON_U32; warps])?;
        let mut td = stream.clone_htod(&vec![emulate::POISON_I64; warps])?;
        // SAFETY: inputs bounds-checked; each output element has one warp leader.
        unsafe {
            k.launch(
                &stream,
                for_num_elems(u32::try_from(n)?, emulate::BLOCK_1D)?,
                (&xd, &kd, &bd, &mut sd, &mut md, &mut td),
            )
        }?;
        let (gs, gm, gt) = (
            stream.clone_dtoh(&sd)?,
            stream.clone_dtoh(&md)?,
            stream.clone_dtoh(&td)?,
        );
        let (es, em, et) = emulate::warp_reduce(&xs, &keys, &big)?;
        let (_, wm, wt) = reference::warp_reduce(&xs, &keys, &big);
        let diffs = bit_diffs(&gs, &es) + bit_diffs(&gm, &em) + bit_diffs(&gt, &et);
        let bad = bit_diffs(&gs, &reference::warp_sums_tree(&xs))
            + bit_diffs(&gm, &wm)
            + bit_diffs(&gt, &wt);
        verdicts.push(exact("warp_reduce", diffs, 3 * warps, bad));
    }

    // softmax: approximate exp on the GPU
    {
        let cols = 4096;
        let rows = (n / cols).max(1);
        let m = load(&ctx, &args.ptx_dir, "softmax-kernels")?;
        let k = m.kernel::<(Slice<f32>, SliceMut<f32>, u32)>("softmax")?;
        let input = random_f32(&mut r, rows * cols, -10.0, 10.0);
        let id = stream.clone_htod(&input)?;
        let mut od = stream.clone_htod(&vec![emulate::POISON; rows * cols])?;
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(rows)?, 1, 1),
            block_dim: (softmax_kernels::BLOCK, 1, 1),
            shared_mem_bytes: u32::try_from(softmax_kernels::shared_bytes(cols))?,
        };
        // SAFETY: block b writes row b only, each element from one thread.
        unsafe { k.launch(&stream, cfg, (&id, &mut od, cols as u32)) }?;
        let gpu = stream.clone_dtoh(&od)?;
        let emu = emulate::softmax(&input, cols)?;
        let want = reference::softmax_f64(&input, cols);
        let worst_ulps = gpu
            .iter()
            .zip(&emu)
            .map(|(&g, &e)| ulps(g, e))
            .max()
            .unwrap_or(0);
        let (rg, re) = (
            reference::worst_relative_error(&gpu, &want),
            reference::worst_relative_error(&emu, &want),
        );
        let identical = bit_diffs(&gpu, &emu);
        verdicts.push(Verdict {
            name: "softmax",
            passed: rg < 2e-5 && re < 2e-5 && gpu.iter().all(|x| x.is_finite()),
            detail: format!(
                "{identical} of {} elements differ (approximate ex2 on the GPU), at most {worst_ulps} ulps; relative error vs f64: GPU {rg:.2e}, emulator {re:.2e} (limit 2e-5)",
                gpu.len()
            ),
        });
    }

    let failed = verdicts.iter().filter(|v| !v.passed).count();
    for v in &verdicts {
        println!(
            "{} {}: {}",
            if v.passed { "PASS" } else { "FAIL" },
            v.name,
            v.detail
        );
    }
    println!("seed {seed}, n {n}, {:.1} s", t0.elapsed().as_secs_f64());
    println!("{} passed, {failed} failed", verdicts.len() - failed);
    if failed != 0 {
        std::process::exit(1);
    }
    Ok(())
}
