//! The copy/compute overlap pipeline: pinned input → device → `iterate` kernel → pinned
//! output, in chunks, serially (one stream) and over 2 and 3 streams.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{ensure, Result};
use cudarc::driver::{CudaContext, CudaStream};
use host_loader::for_num_elems;
use host_loader::memory::{DeviceBuffer, PinnedBuffer, Pipeline};
use rand::rngs::StdRng;
use rand::Rng;

use crate::kernels::{iterate_ref, Kernels, LCG};
use crate::report::{median, Report};

/// Sizes of the pipeline run.
pub struct Sizes {
    /// Total elements (u32).
    pub total: usize,
    /// Elements per chunk.
    pub chunk: usize,
    /// Timed repetitions per depth.
    pub reps: usize,
}

/// `iterate` applied `iters` times is the affine map `v -> v * A + B` (mod 2^32); this is
/// (A, B), so the CPU reference costs one multiply-add per element.
fn composed(iters: u32) -> (u32, u32) {
    let (a, b) = LCG;
    let (mut ma, mut mb) = (1u32, 0u32);
    for _ in 0..iters {
        ma = ma.wrapping_mul(a);
        mb = mb.wrapping_mul(a).wrapping_add(b);
    }
    (ma, mb)
}

/// Runs the overlap chapter.
pub fn run(
    ctx: &Arc<CudaContext>,
    k: &Kernels,
    rng: &mut StdRng,
    sizes: &Sizes,
    report: &mut Report,
) -> Result<()> {
    println!("\n== overlapping copies and compute across streams ==");
    let parent = ctx.new_stream()?;
    let iters = calibrate(ctx, &parent, k, sizes, report)?;

    let data: Vec<u32> = (0..sizes.total).map(|_| rng.random()).collect();
    let input = PinnedBuffer::from_slice(ctx, &data)?;
    let (ma, mb) = composed(iters);
    ensure!(
        data.iter()
            .take(64)
            .all(|&x| x.wrapping_mul(ma).wrapping_add(mb) == iterate_ref(x, iters, LCG.0, LCG.1)),
        "the composed LCG map disagrees with the step-by-step reference"
    );
    let want: Vec<u32> = data
        .iter()
        .map(|&x| x.wrapping_mul(ma).wrapping_add(mb))
        .collect();

    let mut serial = 0.0;
    for depth in [1usize, 2, 3] {
        let mut out = PinnedBuffer::from_slice(ctx, &vec![u32::MAX; sizes.total])?;
        let mut pipe = Pipeline::<u32, u32>::new(&parent, depth, sizes.chunk)?;
        let mut once = |out: &mut PinnedBuffer<u32>| -> Result<f64> {
            let t = Instant::now();
            pipe.run(&parent, &input, out, |s, x, y, _n| {
                let cfg = for_num_elems(x.len() as u32, 256)?;
                // SAFETY: iterate reads x[i] and writes y[i] for i < y.len() = x.len().
                unsafe { k.iterate.launch(s, cfg, (x, y, iters, LCG.0, LCG.1)) }
            })?;
            parent.synchronize()?;
            Ok(t.elapsed().as_secs_f64())
        };
        once(&mut out)?; // warm-up, and the run that is checked
        let bad = out
            .as_slice()?
            .iter()
            .zip(&want)
            .filter(|(g, w)| g != w)
            .count();
        let mut times = Vec::new();
        for _ in 0..sizes.reps {
            times.push(once(&mut out)?);
        }
        let secs = median(&mut times);
        if depth == 1 {
            serial = secs;
        }
        let speedup = serial / secs;
        report.check(
            &format!("pipeline depth {depth} result"),
            bad == 0,
            format!(
                "{bad} of {} elements differ from the CPU reference",
                sizes.total
            ),
        );
        println!(
            "depth {depth}: {:.2} ms for {} chunks of {} elements, speed-up over serial {speedup:.2}x",
            secs * 1e3,
            sizes.total.div_ceil(sizes.chunk),
            sizes.chunk
        );
        report.figure(&format!("pipeline_depth{depth}_ms"), secs * 1e3, "ms");
        if depth > 1 {
            report.figure(&format!("pipeline_speedup_depth{depth}"), speedup, "x");
        }
    }
    Ok(())
}

/// Picks `iters` so one chunk's kernel takes about as long as its host-to-device copy,
/// and reports the three per-chunk times.
fn calibrate(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    k: &Kernels,
    sizes: &Sizes,
    report: &mut Report,
) -> Result<u32> {
    let n = sizes.chunk;
    let mut host = PinnedBuffer::<u32>::zeroed(ctx, sizes.total.max(n))?;
    let x = DeviceBuffer::<u32>::zeroed(stream, n)?;
    let mut y = DeviceBuffer::<u32>::zeroed(stream, n)?;
    let mut dev_in = DeviceBuffer::<u32>::zeroed(stream, n)?;
    let cfg = for_num_elems(n as u32, 256)?;
    let time = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        f()?;
        stream.synchronize()?;
        let mut s = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            f()?;
            stream.synchronize()?;
            s.push(t.elapsed().as_secs_f64());
        }
        Ok(median(&mut s))
    };
    let h2d = time(&mut || {
        host_loader::memory::copy_from_pinned_async(stream, &mut dev_in, &host, 0..n)?;
        Ok(())
    })?;
    let d2h = time(&mut || {
        host_loader::memory::copy_to_pinned_async(stream, &x, &mut host, 0..n)?;
        Ok(())
    })?;
    let probe = 256u32;
    let mut kernel_time = |iters: u32| {
        time(&mut || {
            // SAFETY: iterate reads x[i] and writes y[i] for i < n.
            unsafe {
                k.iterate
                    .launch(stream, cfg, (&x, &mut y, iters, LCG.0, LCG.1))
            }?;
            Ok(())
        })
    };
    let t_probe = kernel_time(probe)?;
    let iters = ((probe as f64 * h2d / t_probe).round() as u32).max(1);
    let t_kernel = kernel_time(iters)?;
    println!(
        "per chunk of {n} u32 ({} MiB): H2D {:.3} ms, D2H {:.3} ms; kernel {:.3} ms at {probe} \
         iterations -> {iters} iterations, {:.3} ms",
        (n * 4) >> 20,
        h2d * 1e3,
        d2h * 1e3,
        t_probe * 1e3,
        t_kernel * 1e3
    );
    report.figure("pipeline_iters", iters as f64, "iterations");
    report.figure("chunk_h2d_ms", h2d * 1e3, "ms");
    report.figure("chunk_kernel_ms", t_kernel * 1e3, "ms");
    report.figure("chunk_d2h_ms", d2h * 1e3, "ms");
    Ok(iters)
}
