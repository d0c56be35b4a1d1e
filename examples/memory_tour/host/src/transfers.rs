//! Explicit copies: pageable and pinned host memory, views and device-to-device copies,
//! each checked on random data, plus the bandwidth of each host path.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use cudarc::driver::{CudaContext, CudaStream};
use example_support::random_f32;
use host_loader::memory::{copy_device, copy_to_host, DeviceBuffer, PinnedBuffer};
use rand::rngs::StdRng;

use crate::report::{gbps, median, Report};

/// Bytes per transfer and repetitions of the bandwidth measurement.
pub struct Sizes {
    pub bytes: usize,
    pub reps: usize,
}

/// Runs the explicit-copy chapter.
pub fn run(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    rng: &mut StdRng,
    sizes: &Sizes,
    report: &mut Report,
) -> Result<()> {
    println!("\n== explicit copies: pageable and pinned host memory ==");
    let n = sizes.bytes / 4;
    let data = random_f32(rng, n, -1e6, 1e6);

    // Pageable: DeviceBuffer::from_host, then back into a poisoned Vec.
    let dev = DeviceBuffer::from_host(stream, &data)?;
    let mut back = vec![f32::NAN; n];
    dev.copy_to_host(stream, &mut back)?;
    report.check(
        "pageable round trip",
        bits_equal(&back, &data),
        format!("{n} f32 host -> device -> host, bit-exact"),
    );

    // Pinned: PinnedBuffer -> device -> poisoned PinnedBuffer, all asynchronous.
    let pinned_in = PinnedBuffer::from_slice(ctx, &data)?;
    let mut pinned_out = PinnedBuffer::from_slice(ctx, &vec![f32::NAN; n])?;
    let mut dev2 = DeviceBuffer::<f32>::zeroed(stream, n)?;
    dev2.copy_from_pinned_async(stream, &pinned_in)?;
    dev2.copy_to_pinned_async(stream, &mut pinned_out)?;
    // as_slice waits for the copy's event; no explicit synchronize needed.
    report.check(
        "pinned async round trip",
        bits_equal(pinned_out.as_slice()?, &data),
        format!("{n} f32 pinned -> device -> pinned, bit-exact"),
    );

    // Views and device-to-device: copy the middle half of `dev` into a new buffer.
    let (lo, hi) = (n / 4, n / 4 + n / 2);
    let mut mid = DeviceBuffer::<f32>::zeroed(stream, hi - lo)?;
    copy_device(stream, &mut mid, &dev.view(lo..hi)?)?;
    let mut tail = vec![f32::NAN; n - hi];
    copy_to_host(stream, &dev.view(hi..)?, &mut tail)?;
    let mid_host = mid.to_host_vec(stream)?;
    report.check(
        "views and device-to-device copy",
        bits_equal(&mid_host, &data[lo..hi]) && bits_equal(&tail, &data[hi..]),
        format!("elements {lo}..{hi} copied device-to-device through a view, {hi}..{n} read back through a view"),
    );

    // Bad lengths are typed errors, and nothing was written.
    let mut short = vec![f32::NAN; n - 1];
    let refused = dev.copy_to_host(stream, &mut short);
    report.check(
        "length mismatch refused",
        refused.is_err() && short.iter().all(|x| x.is_nan()),
        match refused {
            Err(e) => e.to_string(),
            Ok(()) => "accepted a copy into a shorter slice".into(),
        },
    );

    bandwidth(ctx, stream, sizes, report)
}

/// Host-to-device and device-to-host bandwidth, pageable and pinned: the median of
/// `reps` timed copies of `bytes` bytes each, after one warm-up, host wall clock around
/// the copy and its synchronization (as `cudaMemcpy` would be timed).
fn bandwidth(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    sizes: &Sizes,
    report: &mut Report,
) -> Result<()> {
    let bytes = sizes.bytes;
    let mut dev = DeviceBuffer::<u8>::zeroed(stream, bytes)?;
    let mut pageable = vec![1u8; bytes];
    let mut pinned = PinnedBuffer::<u8>::zeroed(ctx, bytes)?;
    pinned.as_mut_slice()?.fill(1);

    let time = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        f()?;
        let mut s = Vec::with_capacity(sizes.reps);
        for _ in 0..sizes.reps {
            let t = Instant::now();
            f()?;
            s.push(t.elapsed().as_secs_f64());
        }
        Ok(median(&mut s))
    };
    let h2d_pageable = time(&mut || Ok(dev.copy_from_host(stream, &pageable)?))?;
    let d2h_pageable = time(&mut || Ok(dev.copy_to_host(stream, &mut pageable)?))?;
    let h2d_pinned = time(&mut || {
        dev.copy_from_pinned_async(stream, &pinned)?;
        Ok(stream.synchronize()?)
    })?;
    let d2h_pinned = time(&mut || {
        dev.copy_to_pinned_async(stream, &mut pinned)?;
        Ok(stream.synchronize()?)
    })?;
    let mib = bytes >> 20;
    println!(
        "bandwidth, {mib} MiB per copy, median of {} (GB/s = 1e9 B/s):",
        sizes.reps
    );
    for (name, secs) in [
        ("h2d_pageable", h2d_pageable),
        ("d2h_pageable", d2h_pageable),
        ("h2d_pinned", h2d_pinned),
        ("d2h_pinned", d2h_pinned),
    ] {
        println!(
            "  {name:13} {:8.2} GB/s  ({:.3} ms)",
            gbps(bytes, secs),
            secs * 1e3
        );
        report.figure(&format!("{name}_gbps"), gbps(bytes, secs), "GB/s");
    }
    Ok(())
}

/// `got` and `want` hold the same bits (NaN poison never matches a finite input).
pub fn bits_equal(got: &[f32], want: &[f32]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| g.to_bits() == w.to_bits())
}
