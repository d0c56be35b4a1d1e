//! Unified (managed) memory: written by the host, updated by a kernel, read back by the
//! host, written again, with advice and prefetches; and an over-subscription refused.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use cudarc::driver::{CudaContext, CudaStream};
use example_support::random_f32;
use host_loader::for_num_elems;
use host_loader::memory::{Advice, Location, ManagedBuffer, MemoryCaps, MemoryError};
use rand::rngs::StdRng;

use crate::kernels::Kernels;
use crate::report::Report;

/// Runs the managed-memory chapter on `n` f32 values.
pub fn run(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    k: &Kernels,
    rng: &mut StdRng,
    n: usize,
    report: &mut Report,
) -> Result<()> {
    println!("\n== unified (managed) memory ==");
    let caps = MemoryCaps::query(ctx)?;
    let data = random_f32(rng, n, -1000.0, 1000.0);
    let mut m = ManagedBuffer::from_host(stream, &data)?;
    let cfg = for_num_elems(n as u32, 256)?;
    if caps.concurrent_managed_access {
        m.advise(Advice::PreferredLocation(Location::Device))?;
        m.prefetch(stream, Location::Device)?;
    }
    let t = Instant::now();
    // SAFETY: add_one touches v[i] for i < v.len() only.
    unsafe { k.add_one.launch(stream, cfg, (&mut m,)) }?;
    let first_ok = m.as_slice()?.iter().zip(&data).all(|(&g, &x)| g == x + 1.0);
    let first = t.elapsed();

    // The host writes in place, the kernel reads and writes again.
    for v in m.as_mut_slice()?.iter_mut() {
        *v *= 2.0;
    }
    if caps.concurrent_managed_access {
        m.prefetch(stream, Location::Device)?;
    }
    // SAFETY: as above.
    unsafe { k.add_one.launch(stream, cfg, (&mut m,)) }?;
    if caps.concurrent_managed_access {
        m.prefetch(stream, Location::Host)?;
    }
    let second_ok = m
        .as_slice()?
        .iter()
        .zip(&data)
        .all(|(&g, &x)| g == (x + 1.0) * 2.0 + 1.0);
    report.check(
        "managed memory, both sides",
        first_ok && second_ok,
        format!(
            "{n} f32: host wrote, kernel added 1, host doubled in place, kernel added 1 \
             (first kernel + host read {:.2} ms; prefetch and advice {})",
            first.as_secs_f64() * 1e3,
            if caps.concurrent_managed_access {
                "used"
            } else {
                "unavailable"
            }
        ),
    );

    // Over-subscription is refused before anything is allocated.
    let too_much = caps.free_bytes + (1 << 30);
    match ManagedBuffer::<u8>::zeroed(stream, too_much) {
        Err(e @ MemoryError::ManagedBudget { .. }) => {
            report.check("managed over-subscription refused", true, e.to_string())
        }
        Err(e) => report.check(
            "managed over-subscription refused",
            false,
            format!("wrong error: {e}"),
        ),
        Ok(_) => report.check(
            "managed over-subscription refused",
            false,
            format!("a managed allocation of {too_much} bytes was accepted"),
        ),
    }
    Ok(())
}
