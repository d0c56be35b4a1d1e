//! The benchmark cases. Each checks the Rust kernel and its CUDA C++
//! reference against a CPU reference (outputs poisoned first), then times
//! both, and the vendor library where there is one.

use anyhow::{bail, ensure, Context, Result};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr,
    LaunchConfig, PushKernelArg,
};
use host_loader::{Module, PtrMut, Slice, SliceMut};
use rand::Rng;
use std::sync::Arc;

use crate::timing::{interleaved_medians, median_ms, Launch, Row};
use crate::Options;

mod attention;
mod fp8_gemm;
mod gemm_sweep;
mod histogram_wide;
mod softmax_wide;

/// What every case needs.
pub struct Env<'a> {
    pub ctx: &'a Arc<CudaContext>,
    pub stream: &'a Arc<CudaStream>,
    pub rust: &'a Module,
    /// `examples/mma_gemm`'s kernels (sm_90a), when given.
    pub gemm: Option<&'a Module>,
    /// `examples/attention`'s kernels, when given.
    pub attention: Option<&'a Module>,
    pub reference: &'a Arc<CudaModule>,
    pub vendor: &'a str,
    pub opts: &'a Options,
    pub seed: u64,
}

/// A named benchmark.
pub struct Case {
    pub name: &'static str,
    pub run: fn(&Env) -> Result<Vec<Row>>,
}

/// Every case, in table order.
pub const ALL: &[Case] = &[
    Case {
        name: "vecadd",
        run: vecadd,
    },
    Case {
        name: "saxpy",
        run: saxpy,
    },
    Case {
        name: "bulk_scale",
        run: bulk_scale,
    },
    Case {
        name: "reduce_sum",
        run: reduce_sum,
    },
    Case {
        name: "transpose",
        run: transpose,
    },
    Case {
        name: "transpose_tma",
        run: transpose_tma,
    },
    Case {
        name: "histogram",
        run: histogram,
    },
    Case {
        name: "histogram_wide",
        run: histogram_wide::histogram_wide,
    },
    Case {
        name: "softmax",
        run: softmax,
    },
    Case {
        name: "softmax_wide",
        run: softmax_wide::softmax_wide,
    },
    Case {
        name: "sgemm",
        run: sgemm,
    },
    Case {
        name: "gemm_bf16",
        run: gemm_bf16,
    },
    Case {
        name: "gemm_fp8",
        run: fp8_gemm::gemm_fp8,
    },
    Case {
        name: "gemm_sweep",
        run: gemm_sweep::gemm_sweep,
    },
    Case {
        name: "attention",
        run: attention::attention,
    },
];

const POISON: f32 = f32::NAN;

fn size(env: &Env, full: usize, quick: usize) -> usize {
    if env.opts.quick {
        quick
    } else {
        full
    }
}

fn rng(env: &Env, salt: u64) -> rand::rngs::StdRng {
    example_support::rng(env.seed ^ salt)
}

fn row(name: &str, by: &'static str, ms: f64, bytes: f64, flops: f64) -> Row {
    Row {
        name: name.to_string(),
        by,
        ms,
        bytes,
        flops,
    }
}

/// One row per variant `(by, launch)` of kernel `name`, the variants timed
/// interleaved on one shared `state` (`timing::interleaved_medians`).
fn timed<S>(
    env: &Env,
    name: &str,
    (bytes, flops): (f64, f64),
    state: &mut S,
    before: impl FnMut(&mut S) -> Result<()>,
    variants: &[(&'static str, Launch<'_, S>)],
) -> Result<Vec<Row>> {
    let launches: Vec<Launch<'_, S>> = variants.iter().map(|v| v.1).collect();
    let ms = interleaved_medians(env.stream, env.opts.runs, state, before, &launches)?;
    Ok(variants
        .iter()
        .zip(ms)
        .map(|(v, ms)| row(name, v.0, ms, bytes, flops))
        .collect())
}

/// Launches the CUDA C++ kernel `f(input, output, scalar)` on the stream:
/// the shape of reduce_sum, transpose, histogram and softmax.
///
/// # Safety
/// `f` takes exactly these three parameters, and reads and writes only
/// within `input` and `output` for `cfg`.
unsafe fn launch_in_out<I: DeviceRepr, O: DeviceRepr, A: DeviceRepr>(
    env: &Env,
    f: &CudaFunction,
    cfg: LaunchConfig,
    input: &CudaSlice<I>,
    output: &mut CudaSlice<O>,
    scalar: &A,
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe {
        env.stream
            .launch_builder(f)
            .arg(input)
            .arg(output)
            .arg(scalar)
            .launch(cfg)
    }?;
    Ok(())
}

fn linear(n: usize, per_thread: usize) -> Result<LaunchConfig> {
    let blocks = u32::try_from(n.div_ceil(per_thread * 256))?;
    Ok(LaunchConfig {
        grid_dim: (blocks.max(1), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// The device's multiprocessors (`CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`).
fn sm_count(env: &Env) -> Result<u32> {
    use cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT as SMS;
    Ok(u32::try_from(env.ctx.attribute(SMS)?)?)
}

fn persistent(env: &Env) -> Result<LaunchConfig> {
    let sms = sm_count(env)?;
    Ok(LaunchConfig {
        grid_dim: (sms * 8, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// `gemm_wgmma`'s tensor maps of `a` and `b` (`WG_BK`-element rows of `WG_BM` and
/// `WG_BN`-row boxes, 128-byte swizzle), as `examples/mma_gemm` makes them.
type WgmmaMapA<'a> = host_loader::tma::TensorMap<
    'a,
    device_std::bf16,
    2,
    { mma_gemm_kernels::WG_BK },
    { mma_gemm_kernels::WG_BM },
    1,
    1,
    1,
    128,
>;
type WgmmaMapB<'a> = host_loader::tma::TensorMap<
    'a,
    device_std::bf16,
    2,
    { mma_gemm_kernels::WG_BK },
    { mma_gemm_kernels::WG_BN },
    1,
    1,
    1,
    128,
>;

/// `gemm_wgmma`'s parameters: `(map_a, map_b, c, m, n, k, group_m)`; `MapB` another
/// width's map for `gemm_wgmma_128x128`.
type WgmmaSig<MapB = WgmmaMapB<'static>> = (
    WgmmaMapA<'static>,
    MapB,
    SliceMut<device_std::bf16>,
    u32,
    u32,
    u32,
    u32,
);

/// `gemm_wgmma` of `--gemm-ptx`, its signature checked.
fn gemm_wgmma_kernel(module: &Module) -> Result<host_loader::Kernel<WgmmaSig>> {
    Ok(module.kernel("gemm_wgmma")?)
}

/// `gemm_wgmma_tma_store`'s parameters: `(map_a, map_b, map_c, m, n, k, group_m)`.
type StoreSig = (
    WgmmaMapA<'static>,
    WgmmaMapB<'static>,
    MapC<'static>,
    u32,
    u32,
    u32,
    u32,
);

/// `gemm_wgmma_tma_store` from the `--gemm-ptx` module.
fn gemm_wgmma_tma_store_kernel(module: &Module) -> Result<host_loader::Kernel<StoreSig>> {
    Ok(module.kernel("gemm_wgmma_tma_store")?)
}

/// cuBLAS's call for our row-major `c = a · bᵀ` in `bf16` (`a` `m × k`, `b` stored
/// `n × k`, `c` `m × n`): row-major `C` is column-major `Cᵀ = B Aᵀ`, so cuBLAS's `A` is
/// our `b` (`k × n` column-major, transposed) and its `B` our `a` (`k × m` column-major);
/// pass `b` first to `gemm`.
fn cublas_bt_bf16(m: usize, n: usize, k: usize) -> cudarc::cublas::GemmConfig<device_std::bf16> {
    use cudarc::cublas::sys::cublasOperation_t::{CUBLAS_OP_N, CUBLAS_OP_T};
    cudarc::cublas::GemmConfig {
        transa: CUBLAS_OP_T,
        transb: CUBLAS_OP_N,
        m: n as i32,
        n: m as i32,
        k: k as i32,
        alpha: device_std::bf16::ONE,
        lda: k as i32,
        ldb: k as i32,
        beta: device_std::bf16::ZERO,
        ldc: n as i32,
    }
}

/// [`gemm_samples`] of the `bf16` product `a · bᵀ` (`a` `m × k`, `bt` `n × k`), exact
/// `f64` dot products, no allowance.
fn bf16_gemm_samples(
    r: &mut impl Rng,
    (a, bt): (&[device_std::bf16], &[device_std::bf16]),
    (m, n, k): (usize, usize, usize),
) -> Vec<(usize, usize, f64, f64)> {
    gemm_samples(r, (m, n), |i, j| {
        let dot = (0..k)
            .map(|p| a[i * k + p].to_f64() * bt[j * k + p].to_f64())
            .sum();
        (dot, 0.0)
    })
}

/// 2048 random elements `(i, j)` of an `m × n` product, each with its reference and
/// an absolute error allowance beyond [`check_gemm_samples`]'s own, `want(i, j)`,
/// computed once for every variant the case checks.
fn gemm_samples(
    r: &mut impl Rng,
    (m, n): (usize, usize),
    want: impl Fn(usize, usize) -> (f64, f64),
) -> Vec<(usize, usize, f64, f64)> {
    (0..2048)
        .map(|_| {
            let (i, j) = (r.random_range(0..m), r.random_range(0..n));
            let (w, allowance) = want(i, j);
            (i, j, w, allowance)
        })
        .collect()
}

/// The tensor map of `c` that the `*_tma_store` GEMMs write through: boxes of 64 columns
/// × 16 rows, 128-byte swizzle.
type MapC<'a> = host_loader::tma::TensorMap<'a, device_std::bf16, 2, 64, 16, 1, 1, 1, 128>;

/// The map of the `m × n` row-major `c` (`n` a multiple of 8).
fn map_c<'c>(
    env: &Env,
    c: &'c CudaSlice<device_std::bf16>,
    m: usize,
    n: usize,
) -> Result<MapC<'c>> {
    Ok(MapC::tiled(
        env.stream,
        c,
        [n as u64, m as u64],
        &[2 * n as u64],
    )?)
}

/// Runs `launch` into an `n × n` `bf16` output poisoned with NaN and checks it: every
/// element written, each sample within 2^-7 relative (the `bf16` output's rounding is
/// 2^-9) plus 1e-3·√n of the accumulation's error plus the sample's own allowance.
fn check_gemm_samples(
    env: &Env,
    what: &str,
    (m, n, k): (usize, usize, usize),
    launch: Launch<'_, CudaSlice<device_std::bf16>>,
    samples: &[(usize, usize, f64, f64)],
) -> Result<()> {
    let mut c = poisoned_bf16(env, m * n)?;
    launch(&mut c)?;
    check_written(env, what, (m, n, k), &c, samples)
}

/// Reads back `c`, an `m × n` output poisoned before it was written, and tests it as
/// [`check_gemm_samples`] does: the check of the map-store kernels, which write their own
/// buffer, after their first launch and again after the timing.
fn check_written(
    env: &Env,
    what: &str,
    shape: (usize, usize, usize),
    c: &CudaSlice<device_std::bf16>,
    samples: &[(usize, usize, f64, f64)],
) -> Result<()> {
    check_gemm_output(what, shape, &env.stream.clone_dtoh(c)?, samples)
}

/// `n` NaNs in device memory: an output nothing has written yet.
fn poisoned_bf16(env: &Env, n: usize) -> Result<CudaSlice<device_std::bf16>> {
    Ok(env.stream.clone_htod(&vec![device_std::bf16::NAN; n])?)
}

/// [`check_gemm_samples`]'s test of an `m × n` output `got` (read back from the device):
/// every element written, the sampled ones within the bound.
fn check_gemm_output(
    what: &str,
    (m, n, k): (usize, usize, usize),
    got: &[device_std::bf16],
    samples: &[(usize, usize, f64, f64)],
) -> Result<()> {
    ensure!(
        got.len() == m * n,
        "{what}: {} elements, want {}",
        got.len(),
        m * n
    );
    ensure!(
        got.iter().all(|v| v.is_finite()),
        "{what}: an output element was not written"
    );
    for &(i, j, want, allowance) in samples {
        let g = got[i * n + j].to_f64();
        ensure!(
            (g - want).abs() <= want.abs() / 128.0 + 1e-3 * (k as f64).sqrt() + allowance,
            "{what}: C[{i}][{j}] = {g}, want {want}"
        );
    }
    Ok(())
}

/// Elementwise check with relative tolerance; NaN never passes.
fn check(what: &str, got: &[f32], want: &[f32], tol: f32) -> Result<()> {
    ensure!(
        got.len() == want.len(),
        "{what}: {} elements, want {}",
        got.len(),
        want.len()
    );
    let bad = example_support::count_mismatches(what, got, want, tol);
    ensure!(
        bad == 0,
        "{what}: {bad} of {} elements differ from the CPU reference",
        got.len()
    );
    Ok(())
}

fn poisoned(env: &Env, n: usize) -> Result<CudaSlice<f32>> {
    Ok(env.stream.clone_htod(&vec![POISON; n])?)
}

/// Device-to-device copy bandwidth (bytes read + written per second, GB/s).
pub fn copy_bandwidth(env: &Env) -> Result<f64> {
    let n = size(env, 1 << 28, 1 << 20);
    let src = env.stream.clone_htod(&vec![1.0f32; n])?;
    let mut dst = env.stream.alloc_zeros::<f32>(n)?;
    let ms = median_ms(
        env.stream,
        env.opts.runs,
        &mut dst,
        |_| Ok(()),
        |d| Ok(env.stream.memcpy_dtod(&src, d)?),
    )?;
    Ok(2.0 * (n * 4) as f64 / ms / 1e6)
}

fn vecadd(env: &Env) -> Result<Vec<Row>> {
    let n = size(env, 1 << 28, (1 << 20) + 3);
    let mut r = rng(env, 1);
    let a: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let b: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let (a_d, b_d) = (env.stream.clone_htod(&a)?, env.stream.clone_htod(&b)?);
    let mut c = poisoned(env, n)?;
    let cfg = linear(n, 4)?;
    let k = env
        .rust
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")?;
    let f = env.reference.load_function("vecadd_ref")?;
    let n64 = n as u64;
    // SAFETY (both launches): each kernel writes c[i] for i < n only and reads a, b there.
    let rust = |c: &mut CudaSlice<f32>| -> Result<()> {
        Ok(unsafe { k.launch(env.stream, cfg, (&a_d, &b_d, c)) }?)
    };
    let nvcc = |c: &mut CudaSlice<f32>| -> Result<()> {
        unsafe {
            env.stream
                .launch_builder(&f)
                .arg(&a_d)
                .arg(&b_d)
                .arg(c)
                .arg(&n64)
                .launch(cfg)
        }?;
        Ok(())
    };
    rust(&mut c)?;
    check("vecadd rust", &env.stream.clone_dtoh(&c)?, &want, 0.0)?;
    let mut c2 = poisoned(env, n)?;
    nvcc(&mut c2)?;
    check("vecadd nvcc", &env.stream.clone_dtoh(&c2)?, &want, 0.0)?;
    // `#[kernel(slice_align = 16)]`: `a` from element 1 starts 4 bytes past a 16-byte
    // boundary, so the loader refuses the launch before the driver sees it (had it
    // launched, the kernel would read `a` as if aligned).
    let mut c3 = poisoned(env, n)?;
    let a_off = a_d.slice(1..);
    let b_short = b_d.slice(..n - 1);
    let mut c_short = c3.slice_mut(..n - 1);
    // SAFETY: refused before any launch (checked below); had it run, every index is
    // below n - 1, the length of all three.
    match unsafe { k.launch(env.stream, cfg, (&a_off, &b_short, &mut c_short)) } {
        Err(host_loader::Error::InvalidLaunch { reason, .. })
            if reason.contains("slice_align = 16") => {}
        other => bail!("vecadd with a misaligned `a` was not refused: {other:?}"),
    }
    let untouched = env.stream.clone_dtoh(&c3)?;
    ensure!(
        untouched.iter().all(|v| v.to_bits() == POISON.to_bits()),
        "vecadd: a refused launch wrote its output"
    );
    let bytes = 3.0 * (n * 4) as f64;
    timed(
        env,
        "vecadd",
        (bytes, 0.0),
        &mut c,
        |_| Ok(()),
        &[("rust", &rust), ("nvcc", &nvcc)],
    )
}

fn saxpy(env: &Env) -> Result<Vec<Row>> {
    let n = size(env, 1 << 28, (1 << 20) + 3);
    let mut r = rng(env, 2);
    let alpha = r.random_range(-2.0f32..2.0);
    let x: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let y: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let want: Vec<f32> = x
        .iter()
        .zip(&y)
        .map(|(x, y)| alpha.mul_add(*x, *y))
        .collect();
    let x_d = env.stream.clone_htod(&x)?;
    let cfg = linear(n, 4)?;
    let k = env
        .rust
        .kernel::<(f32, Slice<f32>, SliceMut<f32>)>("saxpy")?;
    let f = env.reference.load_function("saxpy_ref")?;
    let n64 = n as u64;
    // SAFETY: each kernel updates y[i] for i < n only.
    let rust = |y: &mut CudaSlice<f32>| -> Result<()> {
        Ok(unsafe { k.launch(env.stream, cfg, (alpha, &x_d, y)) }?)
    };
    let nvcc = |y: &mut CudaSlice<f32>| -> Result<()> {
        unsafe {
            env.stream
                .launch_builder(&f)
                .arg(&alpha)
                .arg(&x_d)
                .arg(y)
                .arg(&n64)
                .launch(cfg)
        }?;
        Ok(())
    };
    let mut y_rust = env.stream.clone_htod(&y)?;
    rust(&mut y_rust)?;
    check("saxpy rust", &env.stream.clone_dtoh(&y_rust)?, &want, 1e-6)?;
    let mut y_nvcc = env.stream.clone_htod(&y)?;
    nvcc(&mut y_nvcc)?;
    check("saxpy nvcc", &env.stream.clone_dtoh(&y_nvcc)?, &want, 1e-6)?;
    let bytes = 3.0 * (n * 4) as f64;
    timed(
        env,
        "saxpy",
        (bytes, 0.0),
        &mut y_rust,
        |_| Ok(()),
        &[("rust", &rust), ("nvcc", &nvcc)],
    )
}

/// 4 KiB rounds per block of `bulk_scale` (3-stage 12 KiB rings): a one-shot grid of
/// `n / 4096` blocks that the block scheduler retires and refills in address order, the
/// fastest shape measured (benches/LOG.md, "Fourth round: the grid, not the ring");
/// persistent grids of 3 blocks per SM reach 96% of the copy, this one 99-100%.
const BULK_ROUNDS_PER_BLOCK: usize = 4;

fn bulk_scale(env: &Env) -> Result<Vec<Row>> {
    let n = size(env, 1 << 28, (1 << 20) + 3);
    let mut r = rng(env, 8);
    let alpha = r.random_range(-2.0f32..2.0);
    let x: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let want: Vec<f32> = x.iter().map(|x| alpha * x).collect();
    let x_d = env.stream.clone_htod(&x)?;
    // 16-byte vectors, 256 per round.
    let blocks = (n / 4).div_ceil(256 * BULK_ROUNDS_PER_BLOCK).max(1);
    let cfg = LaunchConfig {
        grid_dim: (u32::try_from(blocks)?, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let k = env
        .rust
        .kernel::<(f32, Slice<f32>, SliceMut<f32>)>("bulk_scale")?;
    let f = env.reference.load_function("bulk_scale_ref")?;
    let n64 = n as u64;
    // SAFETY (both launches): each kernel writes y[i] for i < n only and reads x there.
    let rust = |y: &mut CudaSlice<f32>| -> Result<()> {
        Ok(unsafe { k.launch(env.stream, cfg, (alpha, &x_d, y)) }?)
    };
    let nvcc = |y: &mut CudaSlice<f32>| -> Result<()> {
        unsafe {
            env.stream
                .launch_builder(&f)
                .arg(&alpha)
                .arg(&x_d)
                .arg(y)
                .arg(&n64)
                .launch(cfg)
        }?;
        Ok(())
    };
    let plain = env
        .rust
        .kernel::<(f32, Slice<f32>, SliceMut<f32>)>("scale")?;
    let plain_cfg = linear(n, 4)?;
    // SAFETY: writes y[i] for i < n only and reads x there.
    let rust_plain = |y: &mut CudaSlice<f32>| -> Result<()> {
        Ok(unsafe { plain.launch(env.stream, plain_cfg, (alpha, &x_d, y)) }?)
    };
    let mut y_plain = poisoned(env, n)?;
    rust_plain(&mut y_plain)?;
    check("scale rust", &env.stream.clone_dtoh(&y_plain)?, &want, 0.0)?;
    let mut y_rust = poisoned(env, n)?;
    rust(&mut y_rust)?;
    check(
        "bulk_scale rust",
        &env.stream.clone_dtoh(&y_rust)?,
        &want,
        0.0,
    )?;
    let mut y_nvcc = poisoned(env, n)?;
    nvcc(&mut y_nvcc)?;
    check(
        "bulk_scale nvcc",
        &env.stream.clone_dtoh(&y_nvcc)?,
        &want,
        0.0,
    )?;
    let bytes = 2.0 * (n * 4) as f64;
    timed(
        env,
        "bulk_scale",
        (bytes, 0.0),
        &mut y_rust,
        |_| Ok(()),
        &[
            ("rust", &rust),
            ("nvcc", &nvcc),
            ("rust plain", &rust_plain),
        ],
    )
}

fn reduce_sum(env: &Env) -> Result<Vec<Row>> {
    let n = size(env, 1 << 28, (1 << 20) + 3);
    let mut r = rng(env, 3);
    let x: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let want: f64 = x.iter().map(|&v| f64::from(v)).sum();
    let abs: f64 = x.iter().map(|&v| f64::from(v).abs()).sum();
    let x_d = env.stream.clone_htod(&x)?;
    let cfg = persistent(env)?;
    let k = env.rust.kernel::<(Slice<f32>, PtrMut<f32>)>("reduce_sum")?;
    let f = env.reference.load_function("reduce_sum_ref")?;
    let n64 = n as u64;
    let mut out = env.stream.alloc_zeros::<f32>(1)?;
    let zero = |out: &mut CudaSlice<f32>| -> Result<()> { Ok(env.stream.memset_zeros(out)?) };
    // SAFETY: each kernel reads x[..n] and atomically adds into out[0].
    let rust = |out: &mut CudaSlice<f32>| -> Result<()> {
        Ok(unsafe { k.launch(env.stream, cfg, (&x_d, out)) }?)
    };
    let nvcc = |out: &mut CudaSlice<f32>| unsafe { launch_in_out(env, &f, cfg, &x_d, out, &n64) };
    for (who, launch) in [
        ("rust", &rust as &dyn Fn(&mut CudaSlice<f32>) -> Result<()>),
        ("nvcc", &nvcc),
    ] {
        env.stream.memcpy_htod(&[POISON], &mut out)?;
        zero(&mut out)?;
        launch(&mut out)?;
        let got = f64::from(env.stream.clone_dtoh(&out)?[0]);
        // f32 accumulation in a different order: allow 1e-5 of the sum of magnitudes.
        ensure!(
            (got - want).abs() <= 1e-5 * abs,
            "reduce_sum {who}: got {got}, want {want}"
        );
    }
    let bytes = (n * 4) as f64;
    let mut rows = timed(
        env,
        "reduce_sum",
        (bytes, 0.0),
        &mut out,
        |x| zero(x),
        &[("rust", &rust), ("nvcc", &nvcc)],
    )?;
    if let Some(ms) = vendor_ms(env, "cub_reduce_sum")? {
        rows.push(row("reduce_sum", "CUB", ms, bytes, 0.0));
    }
    Ok(rows)
}

fn vendor_ms(env: &Env, name: &str) -> Result<Option<f64>> {
    if env.opts.quick {
        return Ok(None);
    }
    for line in env.vendor.lines() {
        if let Some(rest) = line.strip_prefix(name) {
            return Ok(Some(
                rest.trim()
                    .parse()
                    .with_context(|| format!("vendor line `{line}`"))?,
            ));
        }
    }
    Ok(None)
}

fn transpose(env: &Env) -> Result<Vec<Row>> {
    let n = size(env, 8192, 256);
    let mut r = rng(env, 4);
    let input: Vec<f32> = (0..n * n).map(|_| r.random_range(-1.0..1.0)).collect();
    let mut want = vec![0.0f32; n * n];
    for y in 0..n {
        for x in 0..n {
            want[x * n + y] = input[y * n + x];
        }
    }
    let in_d = env.stream.clone_htod(&input)?;
    let nb = u32::try_from(n / 32)?;
    let cfg = LaunchConfig {
        grid_dim: (nb, nb, 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    let k = env
        .rust
        .kernel::<(Slice<f32>, SliceMut<f32>, u32)>("transpose")?;
    let f = env.reference.load_function("transpose_ref")?;
    let n32 = n as u32;
    // SAFETY: each kernel writes out[j * n + i] for its tile, inside n * n.
    let rust = |o: &mut CudaSlice<f32>| -> Result<()> {
        Ok(unsafe { k.launch(env.stream, cfg, (&in_d, o, n32)) }?)
    };
    let nvcc = |o: &mut CudaSlice<f32>| unsafe { launch_in_out(env, &f, cfg, &in_d, o, &n32) };
    let mut o1 = poisoned(env, n * n)?;
    rust(&mut o1)?;
    check("transpose rust", &env.stream.clone_dtoh(&o1)?, &want, 0.0)?;
    let mut o2 = poisoned(env, n * n)?;
    nvcc(&mut o2)?;
    check("transpose nvcc", &env.stream.clone_dtoh(&o2)?, &want, 0.0)?;
    let bytes = 2.0 * (n * n * 4) as f64;
    timed(
        env,
        "transpose",
        (bytes, 0.0),
        &mut o1,
        |_| Ok(()),
        &[("rust", &rust), ("nvcc", &nvcc)],
    )
}

/// A `CUtensorMap` passed by value, as a `__grid_constant__` parameter (128 bytes,
/// aligned to 64).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct GridConstantMap(cudarc::driver::sys::CUtensorMap);
// SAFETY: plain bytes; the kernel's parameter is a `CUtensorMap` of the same size.
unsafe impl DeviceRepr for GridConstantMap {}

/// `transpose_tma` of a `rows × cols` matrix: Rust, nvcc with the maps in global memory,
/// nvcc with `__grid_constant__` maps; each checked against the CPU first (outputs
/// poisoned), at a ragged size and then at the timed one, then timed interleaved.
fn transpose_tma(env: &Env) -> Result<Vec<Row>> {
    use host_loader::tma::TensorMap;
    type Map = TensorMap<'static, f32, 2, 64, 64>;
    let k = env.rust.kernel::<(Map, Map)>("transpose_tma")?;
    let f_ptr = env.reference.load_function("transpose_tma_ref")?;
    let f_param = env.reference.load_function("transpose_tma_param_ref")?;
    let n = size(env, 8192, 256);
    let mut r = rng(env, 9);
    let mut result = Vec::new();
    for (rows, cols, timed_size) in [(1004, 700, false), (n, n, true)] {
        let input: Vec<f32> = (0..rows * cols)
            .map(|_| r.random_range(-1.0..1.0))
            .collect();
        let mut want = vec![0.0f32; rows * cols];
        for y in 0..rows {
            for x in 0..cols {
                want[x * rows + y] = input[y * cols + x];
            }
        }
        let in_d = env.stream.clone_htod(&input)?;
        let out_d = poisoned(env, rows * cols)?;
        let (r64, c64) = (rows as u64, cols as u64);
        let in_map = TensorMap::<f32, 2, 64, 64>::tiled(env.stream, &in_d, [c64, r64], &[c64 * 4])?;
        let out_map =
            TensorMap::<f32, 2, 64, 64>::tiled(env.stream, &out_d, [r64, c64], &[r64 * 4])?;
        let cfg = LaunchConfig {
            grid_dim: (
                u32::try_from(cols.div_ceil(64))?,
                u32::try_from(rows.div_ceil(64))?,
                1,
            ),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let (in_addr, out_addr) = (
            in_map.device_address(env.stream),
            out_map.device_address(env.stream),
        );
        let (in_gc, out_gc) = (
            GridConstantMap(in_map.as_cu_tensor_map()),
            GridConstantMap(out_map.as_cu_tensor_map()),
        );
        // SAFETY (all three): each block writes only its own output tile through the map
        // of `out_d`, which lives to the end of this scope.
        let rust = |_: &mut ()| -> Result<()> {
            Ok(unsafe { k.launch(env.stream, cfg, (&in_map, &out_map)) }?)
        };
        let nvcc = |_: &mut ()| -> Result<()> {
            unsafe {
                env.stream
                    .launch_builder(&f_ptr)
                    .arg(&in_addr)
                    .arg(&out_addr)
                    .launch(cfg)
            }?;
            Ok(())
        };
        let nvcc_param = |_: &mut ()| -> Result<()> {
            unsafe {
                env.stream
                    .launch_builder(&f_param)
                    .arg(&in_gc)
                    .arg(&out_gc)
                    .launch(cfg)
            }?;
            Ok(())
        };
        let variants: [(&'static str, Launch<'_, ()>); 3] = [
            ("rust", &rust),
            ("nvcc", &nvcc),
            ("nvcc param", &nvcc_param),
        ];
        let out_raw = out_d.device_ptr(env.stream).0;
        for (by, launch) in &variants {
            // Poison (0xFF bytes: NaN) through the raw address: the map borrows `out_d`.
            // SAFETY: `out_raw` holds rows * cols f32s; the stream orders the memset
            // before the launch.
            unsafe {
                cudarc::driver::result::memset_d8_async(
                    out_raw,
                    0xFF,
                    rows * cols * 4,
                    env.stream.cu_stream(),
                )
            }?;
            launch(&mut ())?;
            check(
                &format!("transpose_tma {by} {rows}x{cols}"),
                &env.stream.clone_dtoh(&out_d)?,
                &want,
                0.0,
            )?;
        }
        if timed_size {
            let bytes = 2.0 * (rows * cols * 4) as f64;
            result = timed(
                env,
                "transpose_tma",
                (bytes, 0.0),
                &mut (),
                |_| Ok(()),
                &variants,
            )?;
        }
    }
    Ok(result)
}

fn histogram(env: &Env) -> Result<Vec<Row>> {
    let n = size(env, 1 << 28, (1 << 20) + 5);
    let mut r = rng(env, 5);
    // Skewed bytes, so some bins are hot as in real data.
    let data: Vec<u8> = (0..n)
        .map(|_| if r.random_bool(0.25) { 7 } else { r.random() })
        .collect();
    let mut want = vec![0u32; 256];
    for &b in &data {
        want[b as usize] += 1;
    }
    let d = env.stream.clone_htod(&data)?;
    let cfg = persistent(env)?;
    let k = env.rust.kernel::<(Slice<u8>, PtrMut<u32>)>("histogram")?;
    let f = env.reference.load_function("histogram_ref")?;
    let n64 = n as u64;
    let mut bins = env.stream.alloc_zeros::<u32>(256)?;
    let zero = |b: &mut CudaSlice<u32>| -> Result<()> { Ok(env.stream.memset_zeros(b)?) };
    // SAFETY: each kernel reads data[..n] and atomically adds into bins[..256].
    let rust = |b: &mut CudaSlice<u32>| -> Result<()> {
        Ok(unsafe { k.launch(env.stream, cfg, (&d, b)) }?)
    };
    let nvcc = |b: &mut CudaSlice<u32>| unsafe { launch_in_out(env, &f, cfg, &d, b, &n64) };
    for (who, launch) in [
        ("rust", &rust as &dyn Fn(&mut CudaSlice<u32>) -> Result<()>),
        ("nvcc", &nvcc),
    ] {
        env.stream.memcpy_htod(&[u32::MAX; 256], &mut bins)?;
        zero(&mut bins)?;
        launch(&mut bins)?;
        let got = env.stream.clone_dtoh(&bins)?;
        if got != want {
            let i = (0..256).find(|&i| got[i] != want[i]).unwrap_or(0);
            bail!("histogram {who}: bin {i} = {}, want {}", got[i], want[i]);
        }
    }
    let bytes = n as f64;
    timed(
        env,
        "histogram",
        (bytes, 0.0),
        &mut bins,
        |x| zero(x),
        &[("rust", &rust), ("nvcc", &nvcc)],
    )
}

fn softmax(env: &Env) -> Result<Vec<Row>> {
    let cols = 4096usize;
    let rows = size(env, 1 << 16, 64);
    let mut r = rng(env, 6);
    let input: Vec<f32> = (0..rows * cols)
        .map(|_| r.random_range(-8.0..8.0))
        .collect();
    let in_d = env.stream.clone_htod(&input)?;
    let cfg = LaunchConfig {
        grid_dim: (u32::try_from(rows)?, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: (cols * 4) as u32,
    };
    let k = env
        .rust
        .kernel::<(Slice<f32>, SliceMut<f32>, u32)>("softmax")?;
    let f = env.reference.load_function("softmax_ref")?;
    let c32 = cols as u32;
    // SAFETY: each kernel writes row blockIdx.x of out only.
    let rust = |o: &mut CudaSlice<f32>| -> Result<()> {
        Ok(unsafe { k.launch(env.stream, cfg, (&in_d, o, c32)) }?)
    };
    let nvcc = |o: &mut CudaSlice<f32>| unsafe { launch_in_out(env, &f, cfg, &in_d, o, &c32) };
    // CPU reference in f64 on a sample of rows (every row when quick).
    let sample: Vec<usize> = if env.opts.quick {
        (0..rows).collect()
    } else {
        (0..512).map(|_| r.random_range(0..rows)).collect()
    };
    let reference = |row: usize| softmax_f64(&input[row * cols..(row + 1) * cols]);
    for (who, launch) in [
        ("rust", &rust as &dyn Fn(&mut CudaSlice<f32>) -> Result<()>),
        ("nvcc", &nvcc),
    ] {
        let mut o = poisoned(env, rows * cols)?;
        launch(&mut o)?;
        let got = env.stream.clone_dtoh(&o)?;
        ensure!(
            got.iter().all(|v| v.is_finite()),
            "softmax {who}: an output element was not written"
        );
        for &row in &sample {
            check(
                &format!("softmax {who} row {row}"),
                &got[row * cols..(row + 1) * cols],
                &reference(row),
                1e-5,
            )?;
        }
    }
    let bytes = 2.0 * (rows * cols * 4) as f64;
    let mut out = env.stream.alloc_zeros::<f32>(rows * cols)?;
    timed(
        env,
        "softmax",
        (bytes, 0.0),
        &mut out,
        |_| Ok(()),
        &[("rust", &rust), ("nvcc", &nvcc)],
    )
}

/// Softmax of one row in f64, rounded to f32: the CPU reference of the softmax cases.
fn softmax_f64(x: &[f32]) -> Vec<f32> {
    let m = x
        .iter()
        .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
    let s: f64 = x.iter().map(|&v| (f64::from(v) - m).exp()).sum();
    x.iter()
        .map(|&v| ((f64::from(v) - m).exp() / s) as f32)
        .collect()
}

fn sgemm(env: &Env) -> Result<Vec<Row>> {
    use cudarc::cublas::{sys::cublasOperation_t::CUBLAS_OP_N, CudaBlas, Gemm, GemmConfig};
    let n = size(env, 4096, 256);
    let mut r = rng(env, 7);
    let a: Vec<f32> = (0..n * n).map(|_| r.random_range(-1.0..1.0)).collect();
    let b: Vec<f32> = (0..n * n).map(|_| r.random_range(-1.0..1.0)).collect();
    let (a_d, b_d) = (env.stream.clone_htod(&a)?, env.stream.clone_htod(&b)?);
    let nb = u32::try_from(n / 128)?;
    let cfg = LaunchConfig {
        grid_dim: (nb, nb, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let k = env
        .rust
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>, u32)>("sgemm")?;
    let f = env.reference.load_function("sgemm_ref")?;
    let n32 = n as u32;
    // SAFETY: each kernel writes its 128x128 tile of c, inside n * n.
    let rust = |c: &mut CudaSlice<f32>| -> Result<()> {
        Ok(unsafe { k.launch(env.stream, cfg, (&a_d, &b_d, c, n32)) }?)
    };
    let nvcc = |c: &mut CudaSlice<f32>| -> Result<()> {
        unsafe {
            env.stream
                .launch_builder(&f)
                .arg(&a_d)
                .arg(&b_d)
                .arg(c)
                .arg(&n32)
                .launch(cfg)
        }?;
        Ok(())
    };
    let blas = CudaBlas::new(env.stream.clone())?;
    // Row-major C = A B is column-major C^T = B^T A^T: pass B first.
    let gemm_cfg = GemmConfig {
        transa: CUBLAS_OP_N,
        transb: CUBLAS_OP_N,
        m: n as i32,
        n: n as i32,
        k: n as i32,
        alpha: 1.0f32,
        lda: n as i32,
        ldb: n as i32,
        beta: 0.0f32,
        ldc: n as i32,
    };
    // SAFETY: all three buffers hold n * n elements.
    let cublas = |c: &mut CudaSlice<f32>| -> Result<()> {
        Ok(unsafe { blas.gemm(gemm_cfg, &b_d, &a_d, c) }?)
    };
    // Check a sample of entries against f64 dot products.
    let sample: Vec<(usize, usize)> = (0..2048)
        .map(|_| (r.random_range(0..n), r.random_range(0..n)))
        .collect();
    for (who, launch) in [
        ("rust", &rust as &dyn Fn(&mut CudaSlice<f32>) -> Result<()>),
        ("nvcc", &nvcc),
        ("cuBLAS", &cublas),
    ] {
        let mut c = poisoned(env, n * n)?;
        launch(&mut c)?;
        let got = env.stream.clone_dtoh(&c)?;
        ensure!(
            got.iter().all(|v| v.is_finite()),
            "sgemm {who}: an output element was not written"
        );
        for &(i, j) in &sample {
            let want: f64 = (0..n)
                .map(|p| f64::from(a[i * n + p]) * f64::from(b[p * n + j]))
                .sum();
            let g = f64::from(got[i * n + j]);
            ensure!(
                (g - want).abs() <= 1e-4 * (n as f64).sqrt(),
                "sgemm {who}: C[{i}][{j}] = {g}, want {want}"
            );
        }
    }
    let flops = 2.0 * (n as f64).powi(3);
    let mut c = env.stream.alloc_zeros::<f32>(n * n)?;
    timed(
        env,
        "sgemm",
        (0.0, flops),
        &mut c,
        |_| Ok(()),
        &[("rust", &rust), ("nvcc", &nvcc), ("cuBLAS", &cublas)],
    )
}

/// The tensor-core GEMM: `examples/mma_gemm`'s `gemm_wgmma`, its portable `mma.sync`
/// form `gemm_mma` and `gemm_mma_tma` (the same fed by tensor copies) against cuBLAS
/// (`cublasGemmEx`, BF16 in and out, FP32 compute) at 4096³ and 8192³, `c = a · bᵀ` with
/// `a` `m × k` and `b` `n × k` row-major (cuBLAS's "TN" form). Needs `--gemm-ptx`.
fn gemm_bf16(env: &Env) -> Result<Vec<Row>> {
    use cudarc::cublas::{CudaBlas, Gemm};
    use device_std::bf16;
    use host_loader::tma::TensorMap;
    use mma_gemm_kernels::{MMA, MMA_THREADS, WG_BM, WG_BN};
    // gemm_mma_tma's maps: one MMA stage per box, 64-byte swizzle.
    type MapA32<'a> = TensorMap<'a, bf16, 2, { MMA.bk }, { MMA.bm }, 1, 1, 1, 64>;
    type MapB32<'a> = TensorMap<'a, bf16, 2, { MMA.bk }, { MMA.bn }, 1, 1, 1, 64>;
    let Some(module) = env.gemm else {
        bail!("gemm_bf16 needs --gemm-ptx (examples/mma_gemm built with --arch sm_90a)");
    };
    let gemm = gemm_wgmma_kernel(module)?;
    let gemm_store = gemm_wgmma_tma_store_kernel(module)?;
    type MmaSig = (Slice<bf16>, Slice<bf16>, SliceMut<bf16>, u32, u32, u32);
    let mma = module.kernel::<MmaSig>("gemm_mma")?;
    let mma_tma = module.kernel::<(
        MapA32<'static>,
        MapB32<'static>,
        SliceMut<bf16>,
        u32,
        u32,
        u32,
    )>("gemm_mma_tma")?;
    let blas = CudaBlas::new(env.stream.clone())?;
    let mut rows = Vec::new();
    let sizes: &[usize] = if env.opts.quick {
        &[512]
    } else {
        &[4096, 8192]
    };
    for &n in sizes {
        let mut r = rng(env, 11 + n as u64);
        let a = example_support::random_bf16(&mut r, n * n);
        let bt = example_support::random_bf16(&mut r, n * n);
        let (a_d, b_d) = (env.stream.clone_htod(&a)?, env.stream.clone_htod(&bt)?);
        let dims = [n as u64, n as u64];
        let stride = [2 * n as u64];
        let map_a = WgmmaMapA::tiled(env.stream, &a_d, dims, &stride)?;
        let map_b = WgmmaMapB::tiled(env.stream, &b_d, dims, &stride)?;
        let map_a32 = MapA32::tiled(env.stream, &a_d, dims, &stride)?;
        let map_b32 = MapB32::tiled(env.stream, &b_d, dims, &stride)?;
        let n32 = n as u32;
        let tiles = u32::try_from(n.div_ceil(WG_BN) * n.div_ceil(WG_BM))?;
        let sms = sm_count(env)?;
        let cfg = |blocks: u32| LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (384, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the blocks write the 128 x 256 tiles of c, inside n * n, each tile
        // once; the maps describe a_d and b_d, which outlive every launch.
        let launch_on = |c: &mut CudaSlice<bf16>, group: u32, blocks: u32| -> Result<()> {
            Ok(unsafe {
                gemm.launch(
                    env.stream,
                    cfg(blocks),
                    (&map_a, &map_b, c, n32, n32, n32, group),
                )
            }?)
        };
        let launch = |c: &mut CudaSlice<bf16>, group: u32| launch_on(c, group, tiles);
        let rust_persistent = |c: &mut CudaSlice<bf16>| launch_on(c, 8, tiles.min(sms));
        let cfg_mma = LaunchConfig {
            grid_dim: (u32::try_from(MMA.blocks(n, n))?, 1, 1),
            block_dim: (MMA_THREADS as u32, 1, 1),
            shared_mem_bytes: u32::try_from(MMA.smem_bytes())?,
        };
        // SAFETY: each block writes its tile of c, inside n * n; a_d and b_d hold n * n
        // elements.
        let rust_mma = |c: &mut CudaSlice<bf16>| -> Result<()> {
            Ok(unsafe { mma.launch(env.stream, cfg_mma, (&a_d, &b_d, c, n32, n32, n32)) }?)
        };
        // SAFETY: as rust_mma; the maps describe a_d and b_d, which outlive every launch.
        let rust_mma_tma = |c: &mut CudaSlice<bf16>| -> Result<()> {
            Ok(unsafe {
                mma_tma.launch(env.stream, cfg_mma, (&map_a32, &map_b32, c, n32, n32, n32))
            }?)
        };
        let rust = |c: &mut CudaSlice<bf16>| launch(c, 8);
        let rust_g1 = |c: &mut CudaSlice<bf16>| launch(c, 1);
        let rust_g16 = |c: &mut CudaSlice<bf16>| launch(c, 16);
        let gemm_cfg = cublas_bt_bf16(n, n, n);
        // SAFETY: all three buffers hold n * n elements.
        let cublas = |c: &mut CudaSlice<bf16>| -> Result<()> {
            Ok(unsafe { blas.gemm(gemm_cfg, &b_d, &a_d, c) }?)
        };
        // c through its map: the kernel writes its own poisoned buffer, mapped once (no
        // map is encoded inside the timing), checked after its first launch and after
        // the timing.
        let store_into = |map: &MapC<'_>| -> Result<()> {
            // SAFETY: as `launch_on`; the blocks write c only through its map, each box
            // once.
            Ok(unsafe {
                gemm_store.launch(
                    env.stream,
                    cfg(tiles.min(sms)),
                    (&map_a, &map_b, map, n32, n32, n32, 8),
                )
            }?)
        };
        let c_store = poisoned_bf16(env, n * n)?;
        let map_store = map_c(env, &c_store, n, n)?;
        let store_timed = |_: &mut CudaSlice<bf16>| store_into(&map_store);
        let samples = bf16_gemm_samples(&mut r, (&a, &bt), (n, n, n));
        let store_name = "gemm_bf16 rust tma-store persistent";
        store_into(&map_store)?;
        check_written(env, store_name, (n, n, n), &c_store, &samples)?;
        for (who, launch) in [
            ("rust", &rust as Launch<'_, CudaSlice<bf16>>),
            ("rust persistent", &rust_persistent),
            ("rust g1", &rust_g1),
            ("rust mma.sync", &rust_mma),
            ("rust mma.sync tma", &rust_mma_tma),
            ("cuBLAS", &cublas),
        ] {
            check_gemm_samples(
                env,
                &format!("gemm_bf16 {who}"),
                (n, n, n),
                launch,
                &samples,
            )?;
        }
        let mut c = env.stream.alloc_zeros::<bf16>(n * n)?;
        rows.append(&mut timed(
            env,
            &format!("gemm_bf16 {n}³"),
            (0.0, 2.0 * (n as f64).powi(3)),
            &mut c,
            |_| Ok(()),
            &[
                ("rust", &rust),
                ("rust persistent", &rust_persistent),
                ("rust tma-store persistent", &store_timed),
                ("rust g1", &rust_g1),
                ("rust g16", &rust_g16),
                ("rust mma.sync", &rust_mma),
                ("rust mma.sync tma", &rust_mma_tma),
                ("cuBLAS", &cublas),
            ],
        )?);
        // The timed tma-store launches wrote their own buffer: check it again.
        check_written(
            env,
            &format!("{store_name} (timed)"),
            (n, n, n),
            &c_store,
            &samples,
        )?;
    }
    Ok(rows)
}
