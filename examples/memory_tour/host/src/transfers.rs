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

/// Pageable copies of `bytes` bytes, in `rounds` interleaved rounds (order flipped each
/// round) in this one process: host-loader's `copy_from_host` / `copy_to_host`
/// (`cuMemcpyHtoDAsync` / `cuMemcpyDtoHAsync` on `stream`, then a stream synchronize)
/// against the synchronous `cuMemcpyHtoD` / `cuMemcpyDtoH` that `cudaMemcpy` makes; the
/// same buffers, host wall clock; prints each path's median GB/s.
pub fn pageable_ab(stream: &Arc<CudaStream>, bytes: usize, rounds: usize) -> Result<()> {
    use cudarc::driver::{sys, DevicePtr};
    let mut dev = DeviceBuffer::<u8>::zeroed(stream, bytes)?;
    let mut host = vec![1u8; bytes];
    let dptr = dev.device_ptr(stream).0;
    let ours_h2d = |dev: &mut DeviceBuffer<u8>, host: &mut Vec<u8>| -> Result<()> {
        Ok(dev.copy_from_host(stream, host)?)
    };
    let ours_d2h = |dev: &mut DeviceBuffer<u8>, host: &mut Vec<u8>| -> Result<()> {
        Ok(dev.copy_to_host(stream, host)?)
    };
    let sync_h2d = |_: &mut DeviceBuffer<u8>, host: &mut Vec<u8>| -> Result<()> {
        stream.synchronize()?;
        // SAFETY: `dptr` holds `bytes` bytes, `host` as many; a synchronous copy.
        unsafe { sys::cuMemcpyHtoD_v2(dptr, host.as_ptr().cast(), bytes) }.result()?;
        Ok(())
    };
    let sync_d2h = |_: &mut DeviceBuffer<u8>, host: &mut Vec<u8>| -> Result<()> {
        stream.synchronize()?;
        // SAFETY: as above.
        unsafe { sys::cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), dptr, bytes) }.result()?;
        Ok(())
    };
    type Path<'a> = &'a dyn Fn(&mut DeviceBuffer<u8>, &mut Vec<u8>) -> Result<()>;
    let paths: [(&str, Path<'_>); 4] = [
        ("h2d host-loader (async + sync)", &ours_h2d),
        ("h2d cuMemcpyHtoD (cudaMemcpy's)", &sync_h2d),
        ("d2h host-loader (async + sync)", &ours_d2h),
        ("d2h cuMemcpyDtoH (cudaMemcpy's)", &sync_d2h),
    ];
    for (_, p) in &paths {
        p(&mut dev, &mut host)?;
    }
    let mut times = vec![Vec::new(); paths.len()];
    for round in 0..rounds {
        for j in 0..paths.len() {
            let i = if round % 2 == 0 {
                j
            } else {
                paths.len() - 1 - j
            };
            let t = Instant::now();
            paths[i].1(&mut dev, &mut host)?;
            times[i].push(t.elapsed().as_secs_f64());
        }
    }
    println!(
        "pageable copies, {} MiB, median of {rounds} interleaved rounds, one process:",
        bytes >> 20
    );
    for ((name, _), t) in paths.iter().zip(&mut times) {
        println!("  {name:34} {:8.2} GB/s", gbps(bytes, median(t)));
    }
    Ok(())
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
