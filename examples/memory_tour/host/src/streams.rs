//! Streams and events (fork, join, cross-stream dependencies) and stream-ordered frees:
//! a drop does not wait for a kernel running on another stream, not even one that uses
//! the buffer, and the memory is not reused before that kernel is done.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use cudarc::driver::{result, CudaContext, CudaStream};
use host_loader::for_num_elems;
use host_loader::memory::{pool_usage, DeviceBuffer};

use crate::kernels::Kernels;
use crate::report::Report;

/// How long the spinning kernel holds its stream.
const SPIN: Duration = Duration::from_millis(300);
/// A drop that takes longer than this counts as blocking.
const DROP_LIMIT: Duration = Duration::from_millis(10);

/// Runs the streams-and-frees chapter.
pub fn run(ctx: &Arc<CudaContext>, k: &Kernels, report: &mut Report) -> Result<()> {
    println!("\n== streams, events, stream-ordered frees ==");
    let main = ctx.new_stream()?;
    fork_join(&main, k, report)?;
    ordered_free(ctx, &main, k, report)
}

/// A child stream forked from `main` writes a buffer; `main` joins it and reads.
fn fork_join(main: &Arc<CudaStream>, k: &Kernels, report: &mut Report) -> Result<()> {
    const N: usize = 1 << 16;
    let mut buf = DeviceBuffer::from_host(main, &vec![f32::NAN; N])?;
    let child = main.fork()?; // child waits for main's work so far
    let cfg = for_num_elems(N as u32, 256)?;
    // SAFETY: spin_fill writes out[i] for i < out.len() only.
    unsafe {
        k.spin_fill
            .launch(&child, cfg, (20_000_000u64, 7.0f32, &mut buf))
    }?;
    let done = child.record_event(None)?; // an explicit cross-stream dependency ...
    main.wait(&done)?;
    main.join(&child)?; // ... and the same through join
    let host = buf.to_host_vec(main)?;
    report.check(
        "fork/join and events",
        host.iter().all(|&x| x == 7.0),
        format!("{N} elements written on a forked stream after a 20 ms spin, read on the parent after join"),
    );
    Ok(())
}

fn ordered_free(
    ctx: &Arc<CudaContext>,
    main: &Arc<CudaStream>,
    k: &Kernels,
    report: &mut Report,
) -> Result<()> {
    let other = ctx.new_stream()?;
    let cfg = for_num_elems(1024, 256)?;
    const BIG: usize = 16 << 20; // 64 MiB of f32

    // 1. A buffer the busy stream does not use.
    let victim = DeviceBuffer::<f32>::zeroed(main, BIG)?;
    let mut busy = DeviceBuffer::<f32>::zeroed(&other, 1024)?;
    main.synchronize()?;
    other.synchronize()?;
    let used_before = pool_usage(ctx)?.used;
    // SAFETY: spin_fill writes out[i] for i < 1024 = out.len() only.
    unsafe {
        k.spin_fill
            .launch(&other, cfg, (SPIN.as_nanos() as u64, 1.0f32, &mut busy))
    }?;
    let t = Instant::now();
    drop(victim);
    let unrelated = t.elapsed();

    // 2. A buffer the spinning kernel itself writes, queued behind the first spin.
    let mut in_use = DeviceBuffer::<f32>::from_host(main, &vec![f32::NAN; 1024])?;
    // SAFETY: as above.
    unsafe {
        k.spin_fill
            .launch(&other, cfg, (SPIN.as_nanos() as u64, 2.0f32, &mut in_use))
    }?;
    let kernel_done = other.record_event(None)?;
    let t = Instant::now();
    drop(in_use);
    let used = t.elapsed();
    let still_running = !kernel_done.try_is_complete()?;

    // 3. New memory on `main` is ordered after that free: its contents must survive the
    //    kernel's late write into the freed buffer (which the pool might hand out again).
    let after = DeviceBuffer::<f32>::zeroed(main, 1024)?;
    let t = Instant::now();
    ctx.synchronize()?;
    let waited = t.elapsed();
    let after_host = after.to_host_vec(main)?;
    let used_after = pool_usage(ctx)?.used;

    println!(
        "drop of a 64 MiB buffer while another stream runs a {} ms kernel: {:.1} µs",
        SPIN.as_millis(),
        unrelated.as_secs_f64() * 1e6
    );
    println!(
        "drop of a buffer that kernel still writes: {:.1} µs (kernel still running: {still_running}); \
         the host then waited {:.0} ms in cuCtxSynchronize",
        used.as_secs_f64() * 1e6,
        waited.as_secs_f64() * 1e3
    );
    println!("pool bytes in use: {used_before} before, {used_after} after the frees ran");
    report.figure("drop_unrelated_us", unrelated.as_secs_f64() * 1e6, "us");
    report.figure("drop_in_use_us", used.as_secs_f64() * 1e6, "us");
    report.check(
        "stream-ordered free does not block",
        unrelated < DROP_LIMIT && used < DROP_LIMIT && still_running,
        format!(
            "drops took {:.1} and {:.1} µs (limit {} ms) while a {} ms kernel ran",
            unrelated.as_secs_f64() * 1e6,
            used.as_secs_f64() * 1e6,
            DROP_LIMIT.as_millis(),
            SPIN.as_millis()
        ),
    );
    report.check(
        "freed memory not reused early",
        after_host.iter().all(|&x| x == 0.0) && used_after < used_before,
        format!(
            "a buffer allocated after the free still holds its zeros; pool use fell by {} bytes",
            used_before.saturating_sub(used_after)
        ),
    );

    // For contrast: cuMemFree, which is not stream ordered.
    let mut busy2 = DeviceBuffer::<f32>::zeroed(&other, 1024)?;
    other.synchronize()?;
    ctx.bind_to_thread()?;
    // SAFETY: the context is current (bound just above); the pointer is freed below,
    // once, and never used.
    let raw = unsafe { result::malloc_sync(64 << 20) }?;
    // SAFETY: as above.
    unsafe {
        k.spin_fill
            .launch(&other, cfg, (SPIN.as_nanos() as u64, 3.0f32, &mut busy2))
    }?;
    let t = Instant::now();
    // SAFETY: `raw` came from cuMemAlloc and nothing uses it.
    unsafe { result::free_sync(raw) }?;
    let sync_free = t.elapsed();
    other.synchronize()?;
    println!(
        "for contrast, cuMemFree of an unrelated 64 MiB allocation during the same kind of \
         kernel: {:.1} ms",
        sync_free.as_secs_f64() * 1e3
    );
    report.figure(
        "cumemfree_during_kernel_ms",
        sync_free.as_secs_f64() * 1e3,
        "ms",
    );
    Ok(())
}
