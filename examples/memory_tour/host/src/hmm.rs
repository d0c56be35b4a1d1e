//! Pageable host memory read by a kernel (HMM): a small configuration value on the host
//! stack and on the heap passed by reference, where the device supports it; a clear
//! error where it does not.

use std::sync::Arc;

use anyhow::Result;
use cudarc::driver::{CudaContext, CudaStream};
use example_support::{count_mismatches, random_f32};
use host_loader::for_num_elems;
use host_loader::memory::{pageable_memory_access, DeviceBuffer, HostRef, MemoryError};
use rand::rngs::StdRng;

use crate::kernels::{AffineConfig, Kernels};
use crate::report::Report;

/// Runs the HMM chapter on `n` elements.
pub fn run(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    k: &Kernels,
    rng: &mut StdRng,
    n: usize,
    report: &mut Report,
) -> Result<()> {
    println!("\n== pageable host memory in a kernel (HMM) ==");
    let supported = pageable_memory_access(ctx)?;
    println!(
        "CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = {}",
        supported as u8
    );
    report.figure("pageable_memory_access", supported as u8 as f64, "flag");
    let on_stack = AffineConfig {
        scale: 2.5,
        offset: -1.0,
    };
    if !supported {
        match HostRef::new(ctx, &on_stack) {
            Err(e @ MemoryError::PageableAccessUnsupported { .. }) => {
                report.check("HMM refused with a clear error", true, e.to_string())
            }
            Err(e) => report.check(
                "HMM refused with a clear error",
                false,
                format!("wrong error: {e}"),
            ),
            Ok(_) => report.check(
                "HMM refused with a clear error",
                false,
                "HostRef::new accepted a device without pageable memory access",
            ),
        }
        return Ok(());
    }
    let x_host = random_f32(rng, n, -100.0, 100.0);
    let x = DeviceBuffer::from_host(stream, &x_host)?;
    let cfg = for_num_elems(n as u32, 256)?;
    let on_heap = Box::new(AffineConfig {
        scale: -0.5,
        offset: 3.0,
    });
    let mut all_ok = true;
    for (what, c) in [("stack", &on_stack), ("heap", &*on_heap)] {
        let mut y = DeviceBuffer::from_host(stream, &vec![f32::NAN; n])?;
        // SAFETY: hmm_affine reads *cfg and x[i], writes y[i] for i < y.len() = x.len().
        // The launch returns after the kernel (HostPtr arguments synchronize).
        unsafe {
            k.hmm_affine
                .launch(stream, cfg, (HostRef::new(ctx, c)?, &x, &mut y))
        }?;
        let got = y.to_host_vec(stream)?;
        let want: Vec<f32> = x_host.iter().map(|&v| v * c.scale + c.offset).collect();
        // The GPU may fuse the multiply-add (one rounding instead of two).
        let bad = count_mismatches(what, &got, &want, 1e-6);
        println!("config on the host {what}: {bad} of {n} elements differ");
        all_ok &= bad == 0;
    }
    report.check(
        "HMM config read in place",
        all_ok,
        format!("{n} elements, y = x * cfg.scale + cfg.offset with cfg in pageable host memory (stack and heap)"),
    );
    Ok(())
}
