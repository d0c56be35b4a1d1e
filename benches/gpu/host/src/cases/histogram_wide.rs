//! The 65,536-bin histogram of `u16` values, three ways, Rust and nvcc each: the bins
//! split over a thread-block cluster of two CTAs (distributed shared memory, the input
//! read once), one half of the bins at a time in each block without a cluster (two
//! passes over the input), and straight into global memory (one atomic per value).
//! 256 KiB of `u32` bins do not fit one CTA's shared memory: the cluster is what lets the
//! input be read once while every count stays on-chip.

use anyhow::{bail, Result};
use cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as MAX_DYN;
use cudarc::driver::{CudaSlice, LaunchConfig};
use host_loader::{PtrMut, Slice};
use rand::Rng;

use super::{launch_in_out, persistent, rng, size, timed, Env, Launch, Row};
use bench_kernels::{WIDE_BINS, WIDE_SHARED_BYTES};

pub(super) fn histogram_wide(env: &Env) -> Result<Vec<Row>> {
    use cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT as SMS;
    let n = size(env, 1 << 27, (1 << 20) + 5);
    let mut r = rng(env, 21);
    let data: Vec<u16> = (0..n).map(|_| r.random()).collect();
    let mut want = vec![0u32; WIDE_BINS];
    for &v in &data {
        want[v as usize] += 1;
    }
    let d = env.stream.clone_htod(&data)?;
    // One 1024-thread block per SM (128 KiB of bins each), an even count for the clusters.
    let sms = env.ctx.attribute(SMS)? as u32;
    let blocks = sms & !1;
    let one_per_sm = |grid: (u32, u32, u32), shared: u32| LaunchConfig {
        grid_dim: grid,
        block_dim: (1024, 1, 1),
        shared_mem_bytes: shared,
    };
    // The Rust kernels declare their dynamic shared memory: 0 here gets it.
    let cfg = one_per_sm((blocks, 1, 1), 0);
    let cfg_ref = one_per_sm((blocks, 1, 1), WIDE_SHARED_BYTES);
    let cfg_global = persistent(env)?;
    type Sig = (Slice<u16>, PtrMut<u32>);
    let k_cluster = env.rust.kernel::<Sig>("cluster_histogram_wide")?;
    let k_halves = env.rust.kernel::<Sig>("histogram_wide_halves")?;
    let k_global = env.rust.kernel::<Sig>("histogram_wide_global")?;
    let f_cluster = env.reference.load_function("cluster_histogram_wide_ref")?;
    let f_halves = env.reference.load_function("histogram_wide_halves_ref")?;
    let f_global = env.reference.load_function("histogram_wide_global_ref")?;
    for f in [&f_cluster, &f_halves] {
        f.set_attribute(MAX_DYN, WIDE_SHARED_BYTES as i32)?;
    }
    let n64 = n as u64;
    let mut bins = env.stream.alloc_zeros::<u32>(WIDE_BINS)?;
    let zero = |b: &mut CudaSlice<u32>| -> Result<()> { Ok(env.stream.memset_zeros(b)?) };
    // SAFETY (all six): each kernel reads data[..n] and atomically adds into
    // bins[..WIDE_BINS]; the shared memory is the kernels' own 128 KiB.
    let rust_cluster = |b: &mut CudaSlice<u32>| -> Result<()> {
        Ok(unsafe { k_cluster.launch(env.stream, cfg, (&d, b)) }?)
    };
    let rust_halves = |b: &mut CudaSlice<u32>| -> Result<()> {
        Ok(unsafe { k_halves.launch(env.stream, cfg, (&d, b)) }?)
    };
    let rust_global = |b: &mut CudaSlice<u32>| -> Result<()> {
        Ok(unsafe { k_global.launch(env.stream, cfg_global, (&d, b)) }?)
    };
    let nvcc_cluster =
        |b: &mut CudaSlice<u32>| unsafe { launch_in_out(env, &f_cluster, cfg_ref, &d, b, &n64) };
    let nvcc_halves =
        |b: &mut CudaSlice<u32>| unsafe { launch_in_out(env, &f_halves, cfg_ref, &d, b, &n64) };
    let nvcc_global =
        |b: &mut CudaSlice<u32>| unsafe { launch_in_out(env, &f_global, cfg_global, &d, b, &n64) };
    let variants: [(&'static str, Launch<'_, CudaSlice<u32>>); 6] = [
        ("rust cluster", &rust_cluster),
        ("nvcc cluster", &nvcc_cluster),
        ("rust halves", &rust_halves),
        ("nvcc halves", &nvcc_halves),
        ("rust global", &rust_global),
        ("nvcc global", &nvcc_global),
    ];
    // The kernels add into bins the host zeroes; every bin of `want` is far from zero
    // (2^27 values over 2^16 bins; 2^20 with --quick), so a kernel that writes nothing
    // fails the check.
    for (who, launch) in &variants {
        zero(&mut bins)?;
        launch(&mut bins)?;
        let got = env.stream.clone_dtoh(&bins)?;
        if let Some(i) = (0..WIDE_BINS).find(|&i| got[i] != want[i]) {
            bail!(
                "histogram_wide {who}: bin {i} = {}, want {}",
                got[i],
                want[i]
            );
        }
    }
    timed(
        env,
        "histogram_wide",
        (2.0 * n as f64, 0.0),
        &mut bins,
        |x| zero(x),
        &variants,
    )
}
