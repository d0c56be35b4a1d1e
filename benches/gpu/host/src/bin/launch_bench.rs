//! `launch-bench`: where the host time of one launch goes (issue 30, point 1).
//!
//! The chain of `graph-bench` (`x[(i+1)%2] = x[i%2] + b` over `--n` floats, one block of
//! 256 threads), launched in batches of `--batch` launches, each way in turn (the order
//! rotates every round), `--rounds` rounds. Only the enqueueing is timed (a host clock
//! around the batch; the batch is short enough that the driver's queue never fills),
//! then the context is synchronized outside the timed region. Every way runs on one
//! non-default stream of the primary context (cudarc's event tracking on) except where
//! its name says otherwise.
//!
//! | way | what one launch is |
//! |---|---|
//! | `c++ <<<>>>` | `vecadd_ref<<<>>>` in a loop in C++ (`graphref_loop`, CUDA runtime) |
//! | `c++ <<<>>> (legacy stream)` | the same on the legacy default stream |
//! | `c++ cuLaunchKernel` | the driver API from C++ linked against libcuda, on the function host-loader loaded (`graphref_driver_loop`) |
//! | `bare cuLaunchKernel (nvcc)` | `cudarc::driver::sys::cuLaunchKernel` (libcuda loaded at run time) from Rust, same function |
//! | `bare cuLaunchKernel (nvcc, cuGetProcAddress)` | the entry point `cuGetProcAddress_v2` gives, called from Rust |
//! | `Kernel::launch (nvcc)` | `Kernel::launch` of the nvcc kernel with `&CudaSlice` arguments |
//! | `sequence (nvcc)` | `Sequence::launch` of the nvcc kernel with registered buffers (registration counted) |
//! | `bare cuLaunchKernel (rust)`, `Kernel::launch (rust)`, `sequence (rust)` | the same three for the Rust `vecadd` (bench-kernels) |
//!
//! and, per call, what `Kernel::launch` adds: `cuCtxGetCurrent`, cudarc's
//! `bind_to_thread`, `cuStreamWaitEvent` on an event of the same stream, `cuEventRecord`,
//! and cudarc's `device_ptr` of one buffer with its guard dropped (one wait, one record).

#![allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV

use std::ffi::c_void;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};
use clap::Parser;
use cudarc::driver::{sys, CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use host_loader::{
    for_num_elems, sequence, Kernel, LaunchConfig, Module, Ptr, PtrMut, RawSlice, Slice, SliceMut,
};

/// Command-line options.
#[derive(Parser, Debug)]
struct Options {
    /// Linked Rust PTX (from `cargo xtask build-ptx -p bench-kernels`).
    #[arg(long, default_value = "target/ptx/bench-kernels.ptx")]
    rust_ptx: PathBuf,
    /// nvcc-built PTX of `benches/gpu/reference.cu`.
    #[arg(long)]
    ref_ptx: PathBuf,
    /// nvcc-built shared library of `benches/gpu/graph_reference.cu` (with `-lcuda`).
    #[arg(long)]
    ref_lib: PathBuf,
    /// Elements per vector.
    #[arg(long, default_value_t = 1024)]
    n: usize,
    /// Launches (or calls) per timed batch.
    #[arg(long, default_value_t = 200)]
    batch: usize,
    /// Timed rounds (every way once per round).
    #[arg(long, default_value_t = 100)]
    rounds: usize,
}

type LoopFn =
    unsafe extern "C" fn(*mut c_void, *const f32, *mut f32, *mut f32, u64, i32, u32, u32) -> i32;
type DriverLoopFn =
    unsafe extern "C" fn(*mut c_void, *mut c_void, u64, u64, u64, u64, i32, u32, u32) -> i32;
type LaunchKernelFn = unsafe extern "C" fn(
    sys::CUfunction,
    u32,
    u32,
    u32,
    u32,
    u32,
    u32,
    u32,
    sys::CUstream,
    *mut *mut c_void,
    *mut *mut c_void,
) -> sys::CUresult;

type RustSig = (Slice<f32>, Slice<f32>, SliceMut<f32>);
type NvccSig = (Ptr<f32>, Ptr<f32>, PtrMut<f32>, u64);

/// cudarc's `cuLaunchKernel` (the symbol `dlsym` found in libcuda), as a [`LaunchKernelFn`].
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn dlsym_launch(
    f: sys::CUfunction,
    gx: u32,
    gy: u32,
    gz: u32,
    bx: u32,
    by: u32,
    bz: u32,
    shared: u32,
    stream: sys::CUstream,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> sys::CUresult {
    // SAFETY: forwarded unchanged from a caller that upholds cuLaunchKernel's contract.
    unsafe { sys::cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra) }
}

fn addr(x: &CudaSlice<f32>, stream: &CudaStream) -> u64 {
    x.device_ptr(stream).0
}

/// A way to time: `run()` makes one batch of launches (or calls).
struct Way<'a> {
    name: &'static str,
    /// Launches (or calls) one `run` makes.
    per_batch: usize,
    run: Box<dyn FnMut() -> Result<()> + 'a>,
    batches: Vec<Duration>,
}

fn way<'a>(
    ways: &mut Vec<Way<'a>>,
    name: &'static str,
    per_batch: usize,
    run: Box<dyn FnMut() -> Result<()> + 'a>,
) {
    ways.push(Way {
        name,
        per_batch,
        run,
        batches: Vec::new(),
    });
}

fn main() -> Result<()> {
    let o = Options::parse();
    let (ctx, legacy) = host_loader::open_device(0)?;
    let stream = ctx.new_stream()?;
    let raw_stream = stream.cu_stream();
    let rust = Module::from_ptx_file(&ctx, &o.rust_ptx)?;
    let reference = Module::from_ptx_file(&ctx, &o.ref_ptx)?;
    let vecadd = rust.kernel::<RustSig>("vecadd")?;
    // Typed when nvcc's PTX marks the pointers `.ptr` (nvcc 12.8+ does); the bare ways
    // need only the function.
    let nvcc: Option<Kernel<NvccSig>> = match reference.kernel("vecadd_ref") {
        Ok(k) => Some(k),
        Err(e) => {
            println!(
                "vecadd_ref as (Ptr, Ptr, PtrMut, u64) refused ({e}): the nvcc ways pass raw \
                 addresses, with cudarc's waits and records made by hand (Kernel::launch) or \
                 the buffers registered for the ordering (sequence)"
            );
            None
        }
    };
    let nvcc_raw = reference.kernel::<(u64, u64, u64, u64)>("vecadd_ref")?;
    let nvcc_fn = nvcc_raw.cu_function();
    // SAFETY: the library is ours (graph_reference.cu); its initializers only set up the
    // CUDA runtime.
    let lib = unsafe { libloading::Library::new(&o.ref_lib) }
        .with_context(|| format!("loading {}", o.ref_lib.display()))?;
    // SAFETY: the symbols have these signatures in graph_reference.cu.
    let (cpp_loop, cpp_driver_loop) = unsafe {
        (
            *lib.get::<LoopFn>(b"graphref_loop")?,
            // Absent when the library was built without libcuda (-DGRAPHREF_NO_DRIVER).
            lib.get::<DriverLoopFn>(b"graphref_driver_loop")
                .ok()
                .map(|f| *f),
        )
    };
    let mut pfn: *mut c_void = std::ptr::null_mut();
    let mut status = sys::CUdriverProcAddressQueryResult::CU_GET_PROC_ADDRESS_SUCCESS;
    // SAFETY: a NUL-terminated name and valid out-pointers.
    let found = unsafe {
        sys::cuGetProcAddress_v2(
            c"cuLaunchKernel".as_ptr(),
            &mut pfn,
            13000,
            0, // CU_GET_PROC_ADDRESS_DEFAULT
            &mut status,
        )
    }
    .result();
    let proc_launch: Option<LaunchKernelFn> = if found.is_ok() && !pfn.is_null() {
        // SAFETY: the driver's `cuLaunchKernel` entry point for CUDA 13.0, of this type.
        Some(unsafe { std::mem::transmute::<*mut c_void, LaunchKernelFn>(pfn) })
    } else {
        println!("cuGetProcAddress(cuLaunchKernel): {found:?}, {status:?}: that way left out");
        None
    };

    let n = o.n;
    let n64 = n as u64;
    let batch = o.batch;
    let b_d = stream.clone_htod(&vec![0.5f32; n])?;
    let fresh = || -> Result<[CudaSlice<f32>; 2]> {
        Ok([
            stream.clone_htod(&vec![1.0f32; n])?,
            stream.clone_htod(&vec![0.0f32; n])?,
        ])
    };
    let cfg: LaunchConfig = for_num_elems(n.div_ceil(4) as u32, 256)?;
    let (grid, block) = (cfg.grid_dim.0, cfg.block_dim.0);
    let pb = addr(&b_d, &stream);
    println!(
        "{n} floats, grid {grid} x block {block}; batches of {batch}, {} rounds",
        o.rounds
    );

    let x_cpp = fresh()?;
    let x_cpp_legacy = fresh()?;
    let x_cdrv = fresh()?;
    let x_bare = fresh()?;
    let x_proc = fresh()?;
    let mut x_kl = fresh()?;
    let mut x_seq = fresh()?;
    let x_bare_r = fresh()?;
    let mut x_kl_r = fresh()?;
    let mut x_seq_r = fresh()?;
    let mut x_dp = fresh()?;
    let p = |x: &[CudaSlice<f32>; 2]| [addr(&x[0], &stream), addr(&x[1], &stream)];
    let (p_cpp, p_cpp_legacy, p_cdrv) = (p(&x_cpp), p(&x_cpp_legacy), p(&x_cdrv));
    let (p_bare, p_proc, p_bare_r) = (p(&x_bare), p(&x_proc), p(&x_bare_r));
    let p_seq = p(&x_seq);
    let event = stream.record_event(None)?;
    let rust_fn = vecadd.cu_function();

    // One bare launch of `func` with the nvcc kernel's parameters.
    let bare_nvcc = |launch: LaunchKernelFn, x: [u64; 2]| -> Result<()> {
        for i in 0..batch {
            let (mut a, mut bb, mut c, mut nn) = (x[i % 2], pb, x[(i + 1) % 2], n64);
            let mut params: [*mut c_void; 4] = [
                (&mut a as *mut u64).cast(),
                (&mut bb as *mut u64).cast(),
                (&mut c as *mut u64).cast(),
                (&mut nn as *mut u64).cast(),
            ];
            // SAFETY: a live function of the current context taking four 8-byte
            // parameters; addresses of live n-float buffers; vecadd_ref stays within n.
            let r = unsafe {
                launch(
                    nvcc_fn,
                    grid,
                    1,
                    1,
                    block,
                    1,
                    1,
                    0,
                    raw_stream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            };
            r.result()?;
        }
        Ok(())
    };

    let mut ways: Vec<Way<'_>> = Vec::new();
    way(
        &mut ways,
        "c++ <<<>>>",
        batch,
        Box::new(|| {
            let [x0, x1] = p_cpp;
            // SAFETY: live n-float buffers of this context.
            let rc = unsafe {
                cpp_loop(
                    raw_stream.cast(),
                    pb as *const f32,
                    x0 as *mut f32,
                    x1 as *mut f32,
                    n64,
                    batch as i32,
                    grid,
                    block,
                )
            };
            ensure!(rc == 0, "graphref_loop: cudaError {rc}");
            Ok(())
        }),
    );
    way(
        &mut ways,
        "c++ <<<>>> (legacy stream)",
        batch,
        Box::new(|| {
            let [x0, x1] = p_cpp_legacy;
            // SAFETY: as above, on the legacy default stream.
            let rc = unsafe {
                cpp_loop(
                    legacy.cu_stream().cast(),
                    pb as *const f32,
                    x0 as *mut f32,
                    x1 as *mut f32,
                    n64,
                    batch as i32,
                    grid,
                    block,
                )
            };
            ensure!(rc == 0, "graphref_loop (legacy): cudaError {rc}");
            Ok(())
        }),
    );
    if let Some(cpp_driver_loop) = cpp_driver_loop {
        way(
            &mut ways,
            "c++ cuLaunchKernel",
            batch,
            Box::new(move || {
                let [x0, x1] = p_cdrv;
                // SAFETY: a live function of the current context; live n-float buffers.
                let rc = unsafe {
                    cpp_driver_loop(
                        nvcc_fn.cast(),
                        raw_stream.cast(),
                        pb,
                        x0,
                        x1,
                        n64,
                        batch as i32,
                        grid,
                        block,
                    )
                };
                ensure!(rc == 0, "graphref_driver_loop: {rc}");
                Ok(())
            }),
        );
    }
    way(
        &mut ways,
        "bare cuLaunchKernel (nvcc)",
        batch,
        Box::new(|| bare_nvcc(dlsym_launch, p_bare)),
    );
    if let Some(proc_launch) = proc_launch {
        way(
            &mut ways,
            "bare cuLaunchKernel (nvcc, cuGetProcAddress)",
            batch,
            Box::new(move || bare_nvcc(proc_launch, p_proc)),
        );
    }
    if let Some(nvcc) = &nvcc {
        way(
            &mut ways,
            "Kernel::launch (nvcc)",
            batch,
            Box::new(|| {
                let [x0, x1] = &mut x_kl;
                for i in 0..batch {
                    let (src, dst) = if i % 2 == 0 {
                        (&*x0, &mut *x1)
                    } else {
                        (&*x1, &mut *x0)
                    };
                    // SAFETY: vecadd_ref stays within its n-float buffers.
                    unsafe { nvcc.launch(&stream, cfg, (src, &b_d, dst, n64)) }?;
                }
                Ok(())
            }),
        );
        way(
            &mut ways,
            "sequence (nvcc)",
            batch,
            Box::new(|| {
                let [x0, x1] = &mut x_seq;
                sequence::run(&stream, |seq| {
                    let (b, x) = (seq.read(&b_d)?, [seq.write(x0)?, seq.write(x1)?]);
                    for i in 0..batch {
                        // SAFETY: vecadd_ref stays within its n-float buffers.
                        unsafe {
                            seq.launch(nvcc, cfg, (x[i % 2].read(), b, x[(i + 1) % 2], n64))
                        }?;
                    }
                    Ok(())
                })?;
                Ok(())
            }),
        );
    } else {
        let nvcc_raw = &nvcc_raw;
        way(
            &mut ways,
            "Kernel::launch (nvcc)",
            batch,
            Box::new(|| {
                let [x0, x1] = &mut x_kl;
                for i in 0..batch {
                    let (src, dst) = if i % 2 == 0 {
                        (&*x0, &mut *x1)
                    } else {
                        (&*x1, &mut *x0)
                    };
                    // What a typed launch does through `KernelParam::lower`.
                    let (a, ga) = src.device_ptr(&stream);
                    let (bb, gb) = b_d.device_ptr(&stream);
                    let (c, gc) = dst.device_ptr_mut(&stream);
                    // SAFETY: vecadd_ref stays within its n-float buffers.
                    unsafe { nvcc_raw.launch(&stream, cfg, (a, bb, c, n64)) }?;
                    drop((ga, gb, gc));
                }
                Ok(())
            }),
        );
        way(
            &mut ways,
            "sequence (nvcc)",
            batch,
            Box::new(|| {
                let [x0, x1] = &mut x_seq;
                sequence::run(&stream, |seq| {
                    // Registered for the ordering; the kernel takes raw addresses.
                    let _held = (seq.read(&b_d)?, seq.write(x0)?, seq.write(x1)?);
                    for i in 0..batch {
                        let args = (p_seq[i % 2], pb, p_seq[(i + 1) % 2], n64);
                        // SAFETY: vecadd_ref stays within its n-float buffers.
                        unsafe { seq.launch(nvcc_raw, cfg, args) }?;
                    }
                    Ok(())
                })?;
                Ok(())
            }),
        );
    }
    way(
        &mut ways,
        "bare cuLaunchKernel (rust)",
        batch,
        Box::new(|| {
            let slice = |ptr| RawSlice { ptr, len: n64 };
            for i in 0..batch {
                let (mut a, mut bb, mut c) = (
                    slice(p_bare_r[i % 2]),
                    slice(pb),
                    slice(p_bare_r[(i + 1) % 2]),
                );
                let mut params: [*mut c_void; 3] = [
                    (&mut a as *mut RawSlice).cast(),
                    (&mut bb as *mut RawSlice).cast(),
                    (&mut c as *mut RawSlice).cast(),
                ];
                // SAFETY: a live function of the current context taking three (ptr, len)
                // slices; live n-float buffers; vecadd stays within len.
                unsafe {
                    sys::cuLaunchKernel(
                        rust_fn,
                        grid,
                        1,
                        1,
                        block,
                        1,
                        1,
                        0,
                        raw_stream,
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                }
                .result()?;
            }
            Ok(())
        }),
    );
    way(
        &mut ways,
        "Kernel::launch (rust)",
        batch,
        Box::new(|| {
            let [x0, x1] = &mut x_kl_r;
            for i in 0..batch {
                let (src, dst) = if i % 2 == 0 {
                    (&*x0, &mut *x1)
                } else {
                    (&*x1, &mut *x0)
                };
                // SAFETY: vecadd stays within its n-float buffers.
                unsafe { vecadd.launch(&stream, cfg, (src, &b_d, dst)) }?;
            }
            Ok(())
        }),
    );
    way(
        &mut ways,
        "sequence (rust)",
        batch,
        Box::new(|| {
            let [x0, x1] = &mut x_seq_r;
            sequence::run(&stream, |seq| {
                let (b, x) = (seq.read(&b_d)?, [seq.write(x0)?, seq.write(x1)?]);
                for i in 0..batch {
                    // SAFETY: vecadd stays within its n-float buffers.
                    unsafe { seq.launch(&vecadd, cfg, (x[i % 2].read(), b, x[(i + 1) % 2])) }?;
                }
                Ok(())
            })?;
            Ok(())
        }),
    );
    way(
        &mut ways,
        "call: cuCtxGetCurrent",
        batch,
        Box::new(|| {
            for _ in 0..batch {
                let mut c: sys::CUcontext = std::ptr::null_mut();
                // SAFETY: an out-pointer.
                unsafe { sys::cuCtxGetCurrent(&mut c) }.result()?;
                std::hint::black_box(c);
            }
            Ok(())
        }),
    );
    way(
        &mut ways,
        "call: CudaContext::bind_to_thread",
        batch,
        Box::new(|| {
            for _ in 0..batch {
                ctx.bind_to_thread()?;
            }
            Ok(())
        }),
    );
    way(
        &mut ways,
        "call: cuStreamWaitEvent (same stream)",
        batch,
        Box::new(|| {
            for _ in 0..batch {
                // SAFETY: a live stream and event of the current context.
                unsafe { sys::cuStreamWaitEvent(raw_stream, event.cu_event(), 0) }.result()?;
            }
            Ok(())
        }),
    );
    way(
        &mut ways,
        "call: cuEventRecord",
        batch,
        Box::new(|| {
            for _ in 0..batch {
                // SAFETY: a live event and stream of the current context.
                unsafe { sys::cuEventRecord(event.cu_event(), raw_stream) }.result()?;
            }
            Ok(())
        }),
    );
    way(
        &mut ways,
        "call: device_ptr + guard (1 wait, 1 record)",
        batch,
        Box::new(|| {
            for _ in 0..batch {
                let (p, g) = x_dp[0].device_ptr(&stream);
                std::hint::black_box(p);
                drop(g);
            }
            std::hint::black_box(&mut x_dp);
            Ok(())
        }),
    );

    // Warm-up: JIT, first launches, lazy loading of the C++ module, clocks.
    for w in ways.iter_mut() {
        for _ in 0..5 {
            (w.run)()?;
            ctx.synchronize()?;
        }
    }
    let count = ways.len();
    for round in 0..o.rounds {
        for k in 0..count {
            let w = &mut ways[(round + k) % count];
            let t = Instant::now();
            (w.run)()?;
            let took = t.elapsed();
            ctx.synchronize()?;
            w.batches.push(took);
        }
    }
    ctx.check_err()?;

    let ns = |w: &Way<'_>| -> (f64, f64) {
        let per: Vec<f64> = w
            .batches
            .iter()
            .map(|d| d.as_secs_f64() * 1e9 / w.per_batch as f64)
            .collect();
        let mean = per.iter().sum::<f64>() / per.len() as f64;
        let mut sorted = per.clone();
        sorted.sort_by(f64::total_cmp);
        (mean, sorted[sorted.len() / 2])
    };
    println!("\n{:<46} {:>12} {:>14}", "way", "mean ns", "median ns");
    let mut mean = std::collections::HashMap::new();
    for w in &ways {
        let (m, med) = ns(w);
        println!("{:<46} {m:>12.1} {med:>14.1}", w.name);
        mean.insert(w.name, (m, med));
    }
    let r = |a: &str, b: &str| match (mean.get(a), mean.get(b)) {
        (Some(x), Some(y)) => x.0 / y.0,
        _ => f64::NAN,
    };
    let rm = |a: &str, b: &str| match (mean.get(a), mean.get(b)) {
        (Some(x), Some(y)) => x.1 / y.1,
        _ => f64::NAN,
    };
    println!();
    for (a, b) in [
        ("sequence (rust)", "bare cuLaunchKernel (rust)"),
        ("sequence (nvcc)", "bare cuLaunchKernel (nvcc)"),
        ("Kernel::launch (rust)", "bare cuLaunchKernel (rust)"),
        ("Kernel::launch (nvcc)", "bare cuLaunchKernel (nvcc)"),
        ("bare cuLaunchKernel (nvcc)", "c++ cuLaunchKernel"),
        (
            "bare cuLaunchKernel (nvcc, cuGetProcAddress)",
            "bare cuLaunchKernel (nvcc)",
        ),
        ("c++ cuLaunchKernel", "c++ <<<>>>"),
        ("bare cuLaunchKernel (rust)", "bare cuLaunchKernel (nvcc)"),
        ("c++ <<<>>> (legacy stream)", "c++ <<<>>>"),
        ("bare cuLaunchKernel (nvcc)", "c++ <<<>>>"),
        ("sequence (nvcc)", "c++ <<<>>>"),
        ("Kernel::launch (nvcc)", "c++ <<<>>>"),
    ] {
        println!(
            "ratio {:<70} mean {:.4}  median {:.4}",
            format!("{a} / {b}"),
            r(a, b),
            rm(a, b)
        );
    }
    println!(
        "host bar: sequence / bare cuLaunchKernel = {:.4} (rust kernel), {:.4} (nvcc kernel) (bar <= 1.02)",
        r("sequence (rust)", "bare cuLaunchKernel (rust)"),
        r("sequence (nvcc)", "bare cuLaunchKernel (nvcc)")
    );
    drop(ways);
    stream.synchronize()?;
    Ok(())
}
