//! `graph-bench`: a chain of `--steps` (1000) dependent tiny kernels — `x[(i+1)%2] =
//! x[i%2] + b` over `--n` (1024) floats — twelve ways, in one process, interleaved:
//!
//! | variant | kernel | how |
//! |---|---|---|
//! | `rust loop` | Rust `vecadd` (bench-kernels) | `Kernel::launch` one by one (cudarc's event tracking per launch) |
//! | `rust loop (nvcc kernel)` | nvcc `vecadd_ref`, loaded by host-loader | `Kernel::launch` one by one |
//! | `rust sequence` | Rust `vecadd` | `host_loader::sequence`: `Sequence::launch` one by one |
//! | `rust sequence (nvcc kernel)` | nvcc `vecadd_ref`, loaded by host-loader | `Sequence::launch` one by one |
//! | `c++ loop` | nvcc `vecadd_ref` (reference.cu) | `<<<>>>` one by one (graph_reference.cu) |
//! | `rust graph` | Rust `vecadd` | `host_loader::graph` capture, `GraphExec::launch` |
//! | `rust graph (nvcc kernel)` | nvcc `vecadd_ref`, loaded by host-loader | `host_loader::graph` |
//! | `c++ graph` | nvcc `vecadd_ref` | `cudaStreamBeginCapture` … `cudaGraphLaunch` (graph_reference.cu) |
//! | `rust sequence, pdl kernel` / `(PDL)` | Rust `vecadd_pdl`, one element per thread | `Sequence::launch_with`, without / with programmatic stream serialization |
//! | `c++ loop, pdl kernel` / `(PDL)` | nvcc `vecadd_pdl_ref` | `cudaLaunchKernelEx`, without / with the attribute (`graphref_pdl_loop`) |
//!
//! nvcc 13.0 writes `vecadd_ref`'s pointers as plain `.u64` parameters (no `.ptr`), which
//! `Ptr<T>` refuses; then the nvcc variants pass raw addresses (`u64`), the loop making
//! cudarc's waits and records by hand per launch as a typed launch would, the sequence
//! registering the buffers for the ordering.
//!
//! Every variant is first checked against a CPU reference of the whole chain (fresh
//! random inputs, the second buffer poisoned with NaN). Timing: CUDA events around one
//! whole chain per variant, every round times each variant once, starting at a different
//! one each round, 3 untimed rounds, median of `--runs` (`timing::interleaved_medians`).
//! All on one non-default stream of the device's primary context (so cudarc's event
//! tracking is on, as in any program with two streams).

#![allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV

#[allow(dead_code)]
#[path = "../timing.rs"]
mod timing;

#[path = "../chain.rs"]
mod chain;

use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{ensure, Context, Result};
use clap::Parser;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use host_loader::graph::{self, GraphExec};
use host_loader::sequence;
use host_loader::{
    for_num_elems, Kernel, LaunchAttributes, LaunchConfig, Module, Ptr, PtrMut, Slice, SliceMut,
};
use rand::{Rng, SeedableRng};

/// Command-line options.
#[derive(Parser, Debug)]
struct Options {
    /// Linked Rust PTX (from `cargo xtask build-ptx -p bench-kernels`).
    #[arg(long, default_value = "target/ptx/bench-kernels.ptx")]
    rust_ptx: PathBuf,
    /// nvcc-built PTX of `benches/gpu/reference.cu`.
    #[arg(long)]
    ref_ptx: PathBuf,
    /// nvcc-built shared library of `benches/gpu/graph_reference.cu`.
    #[arg(long)]
    ref_lib: PathBuf,
    /// Elements per vector.
    #[arg(long, default_value_t = 1024)]
    n: usize,
    /// Dependent launches in the chain.
    #[arg(long, default_value_t = 1000)]
    steps: usize,
    /// Timed rounds (the median is reported).
    #[arg(long, default_value_t = 21)]
    runs: usize,
    /// Seed for the random inputs (default: the clock).
    #[arg(long)]
    seed: Option<u64>,
    /// PTX with a plain one-element-per-thread `vecadd(&[f32], &[f32],
    /// DisjointSlice<f32>)` (host-loader's `tests/data/fixture.ptx`): adds the variant
    /// `rust graph (simple kernel)`, to tell the kernel's cost from the graph's.
    #[arg(long)]
    simple_ptx: Option<PathBuf>,
}

type LoopFn =
    unsafe extern "C" fn(*mut c_void, *const f32, *mut f32, *mut f32, u64, i32, u32, u32) -> i32;
type CaptureFn = unsafe extern "C" fn(
    *mut c_void,
    *const f32,
    *mut f32,
    *mut f32,
    u64,
    i32,
    u32,
    u32,
    *mut *mut c_void,
) -> i32;
type ExecFn = unsafe extern "C" fn(*mut c_void, *mut c_void) -> i32;
type PdlLoopFn = unsafe extern "C" fn(
    *mut c_void,
    *const f32,
    *mut f32,
    *mut f32,
    u64,
    i32,
    u32,
    u32,
    i32,
) -> i32;
type DestroyFn = unsafe extern "C" fn(*mut c_void) -> i32;

type RustSig = (Slice<f32>, Slice<f32>, SliceMut<f32>);
type NvccSig = (Ptr<f32>, Ptr<f32>, PtrMut<f32>, u64);
type NvccRawSig = (u64, u64, u64, u64);

fn check(
    what: &str,
    stream: &Arc<CudaStream>,
    x: [&CudaSlice<f32>; 2],
    want: &[Vec<f32>; 2],
) -> Result<()> {
    for k in 0..2 {
        let got = stream.clone_dtoh(x[k])?;
        let bad = chain::mismatches(&got, &want[k]);
        ensure!(
            bad == 0,
            "{what}: x{k}: {bad} of {} elements differ from the CPU",
            got.len()
        );
    }
    println!("PASS {what}: both buffers equal the CPU reference");
    Ok(())
}

fn addr(x: &CudaSlice<f32>, stream: &CudaStream) -> u64 {
    x.device_ptr(stream).0
}

/// Our graph of the nvcc kernel: typed pointers when the PTX marks its parameters
/// `.ptr`, else raw addresses (plain `.u64`), which the graph does not borrow.
enum NvccKernel {
    Typed(Kernel<NvccSig>),
    Raw(Kernel<NvccRawSig>),
}

struct State<'a> {
    rust_graph: GraphExec<'a>,
    nvcc_graph: GraphExec<'a>,
    simple_graph: Option<GraphExec<'a>>,
    x_loop: [CudaSlice<f32>; 2],
    x_loop_nvcc: [CudaSlice<f32>; 2],
    x_seq: [CudaSlice<f32>; 2],
    x_seq_nvcc: [CudaSlice<f32>; 2],
    /// The PDL chain: Rust plain, Rust PDL, C++ plain, C++ PDL.
    x_pdl: [[CudaSlice<f32>; 2]; 4],
}

/// The buffers of one step of the ping-pong chain: `(source, destination)`.
fn step(x: &mut [CudaSlice<f32>; 2], i: usize) -> (&CudaSlice<f32>, &mut CudaSlice<f32>) {
    let [x0, x1] = x;
    if i % 2 == 0 {
        (&*x0, x1)
    } else {
        (&*x1, x0)
    }
}

fn main() -> Result<()> {
    let o = Options::parse();
    let seed = o.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let (ctx, _legacy) = host_loader::open_device(0)?;
    let stream = ctx.new_stream()?;
    let raw_stream = stream.cu_stream() as *mut c_void;
    let rust = Module::from_ptx_file(&ctx, &o.rust_ptx)?;
    let reference = Module::from_ptx_file(&ctx, &o.ref_ptx)?;
    let vecadd = rust.kernel::<RustSig>("vecadd")?;
    let nvcc = match reference.kernel::<NvccSig>("vecadd_ref") {
        Ok(k) => NvccKernel::Typed(k),
        Err(e) => {
            println!("vecadd_ref as (Ptr, Ptr, PtrMut, u64) refused ({e}); using raw addresses");
            NvccKernel::Raw(reference.kernel::<NvccRawSig>("vecadd_ref")?)
        }
    };
    // SAFETY: the library is ours (graph_reference.cu); its initializers only set up the
    // CUDA runtime.
    let lib = unsafe { libloading::Library::new(&o.ref_lib) }
        .with_context(|| format!("loading {}", o.ref_lib.display()))?;
    // SAFETY: the symbols have these signatures in graph_reference.cu.
    let (cpp_loop, cpp_capture, cpp_launch, cpp_upload, cpp_destroy) = unsafe {
        (
            *lib.get::<LoopFn>(b"graphref_loop")?,
            *lib.get::<CaptureFn>(b"graphref_capture")?,
            *lib.get::<ExecFn>(b"graphref_launch")?,
            *lib.get::<ExecFn>(b"graphref_upload")?,
            *lib.get::<DestroyFn>(b"graphref_destroy")?,
        )
    };
    // SAFETY: the symbol has this signature in graph_reference.cu.
    let cpp_pdl_loop = unsafe { *lib.get::<PdlLoopFn>(b"graphref_pdl_loop")? };
    let vecadd_pdl = rust.kernel::<RustSig>("vecadd_pdl")?;

    let (n, steps) = (o.n, o.steps);
    let mut r = rand::rngs::StdRng::seed_from_u64(seed);
    let x0: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let b: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let nan = vec![f32::NAN; n];
    let want = chain::chain_ref(&x0, &nan, &b, steps);
    let b_d = stream.clone_htod(&b)?;
    let fresh = || -> Result<[CudaSlice<f32>; 2]> {
        Ok([stream.clone_htod(&x0)?, stream.clone_htod(&nan)?])
    };
    let mut x_sg = fresh()?;
    let (mut x_rg, mut x_ng, x_loop, x_cl, x_cg) =
        (fresh()?, fresh()?, fresh()?, fresh()?, fresh()?);
    let (x_loop_nvcc, x_seq, x_seq_nvcc) = (fresh()?, fresh()?, fresh()?);
    // Four floats per thread (the kernels' 16-byte vectors): 256 threads for 1024 floats.
    let cfg: LaunchConfig = for_num_elems(n.div_ceil(4) as u32, 256)?;
    let (grid, block) = (cfg.grid_dim.0, cfg.block_dim.0);
    println!(
        "chain of {steps} dependent launches, {n} floats, grid {grid} x block {block}; seed {seed}"
    );

    // Our graphs.
    let t = std::time::Instant::now();
    let (g, rg_tokens) = {
        let [x0r, x1r] = &mut x_rg;
        graph::capture(&stream, |rec| {
            let (b, x) = (rec.read(&b_d)?, [rec.write(x0r)?, rec.write(x1r)?]);
            for i in 0..steps {
                // SAFETY: vecadd reads a[k], b[k] and writes c[k] for k < c.len() = n.
                unsafe { rec.launch(&vecadd, cfg, (x[i % 2].read(), b, x[(i + 1) % 2])) }?;
            }
            Ok(x)
        })?
    };
    let captured = t.elapsed();
    let mut rust_graph = g.instantiate()?;
    println!(
        "rust graph: captured in {captured:?}, instantiated in {:?} ({} nodes)",
        t.elapsed() - captured,
        rust_graph.graph().node_count()
    );
    let n64 = n as u64;
    let ng_addr = [addr(&x_ng[0], &stream), addr(&x_ng[1], &stream)];
    let (g, ng_tokens) = match &nvcc {
        NvccKernel::Typed(k) => {
            let [x0n, x1n] = &mut x_ng;
            let (g, x) = graph::capture(&stream, |rec| {
                let (b, x) = (rec.read(&b_d)?, [rec.write(x0n)?, rec.write(x1n)?]);
                for i in 0..steps {
                    // SAFETY: vecadd_ref reads a[k], b[k] and writes c[k] for k < n.
                    unsafe { rec.launch(k, cfg, (x[i % 2].read(), b, x[(i + 1) % 2], n64)) }?;
                }
                Ok(x)
            })?;
            (g, Some(x))
        }
        NvccKernel::Raw(k) => {
            let (pb, p) = (addr(&b_d, &stream), ng_addr);
            let (g, ()) = graph::capture(&stream, |rec| {
                for i in 0..steps {
                    // SAFETY: as above; the addresses are of live n-float buffers that
                    // outlive the graph (declared before it in this function).
                    unsafe { rec.launch(k, cfg, (p[i % 2], pb, p[(i + 1) % 2], n64)) }?;
                }
                Ok(())
            })?;
            (g, None)
        }
    };
    let mut nvcc_graph = g.instantiate()?;

    // The simple Rust kernel, one element per thread.
    let simple_module = match &o.simple_ptx {
        Some(p) => Some(Module::from_ptx_file(&ctx, p)?),
        None => None,
    };
    let simple = match &simple_module {
        Some(m) => Some(m.kernel::<RustSig>("vecadd")?),
        None => None,
    };
    let mut simple_graph = None;
    let mut sg_tokens = None;
    if let Some(k) = &simple {
        let cfg1 = for_num_elems(n as u32, 256)?;
        let [x0s, x1s] = &mut x_sg;
        let (g, x) = graph::capture(&stream, |rec| {
            let (b, x) = (rec.read(&b_d)?, [rec.write(x0s)?, rec.write(x1s)?]);
            for i in 0..steps {
                // SAFETY: the simple vecadd writes c[k] for its own k < c.len() = n only.
                unsafe { rec.launch(k, cfg1, (x[i % 2].read(), b, x[(i + 1) % 2])) }?;
            }
            Ok(x)
        })?;
        let mut e = g.instantiate()?;
        e.upload(&stream)?;
        simple_graph = Some(e);
        sg_tokens = Some(x);
    }

    // The C++ graph.
    let cpp_ptrs = |x: &[CudaSlice<f32>; 2]| {
        (
            addr(&b_d, &stream) as *const f32,
            addr(&x[0], &stream) as *mut f32,
            addr(&x[1], &stream) as *mut f32,
        )
    };
    let (pb, pc0, pc1) = cpp_ptrs(&x_cg);
    let mut cpp_exec: *mut c_void = std::ptr::null_mut();
    stream.context().bind_to_thread()?;
    let t = std::time::Instant::now();
    // SAFETY: live buffers of n floats on this stream's context; `cpp_exec` is an out-pointer.
    let rc = unsafe {
        cpp_capture(
            raw_stream,
            pb,
            pc0,
            pc1,
            n64,
            steps as i32,
            grid,
            block,
            &mut cpp_exec,
        )
    };
    ensure!(rc == 0, "graphref_capture: cudaError {rc}");
    println!("c++ graph: captured and instantiated in {:?}", t.elapsed());
    let (lb, lc0, lc1) = cpp_ptrs(&x_cl);

    // Correctness of each variant, one chain each.
    rust_graph.upload(&stream)?;
    nvcc_graph.upload(&stream)?;
    // SAFETY: a live executable graph of this context.
    ensure!(
        unsafe { cpp_upload(cpp_exec, raw_stream) } == 0,
        "graphref_upload"
    );
    let mut state = State {
        rust_graph,
        nvcc_graph,
        simple_graph,
        x_loop,
        x_loop_nvcc,
        x_seq,
        x_seq_nvcc,
        x_pdl: [fresh()?, fresh()?, fresh()?, fresh()?],
    };
    let rust_loop = |s: &mut State| -> Result<()> {
        for i in 0..steps {
            let (src, dst) = step(&mut s.x_loop, i);
            // SAFETY: vecadd stays within its n-float buffers.
            unsafe { vecadd.launch(&stream, cfg, (src, &b_d, dst)) }?;
        }
        Ok(())
    };
    let nvcc_loop = |s: &mut State| -> Result<()> {
        for i in 0..steps {
            let (src, dst) = step(&mut s.x_loop_nvcc, i);
            match &nvcc {
                // SAFETY: vecadd_ref reads a[k], b[k] and writes c[k] for k < n only.
                NvccKernel::Typed(k) => unsafe { k.launch(&stream, cfg, (src, &b_d, dst, n64)) }?,
                NvccKernel::Raw(k) => {
                    // What the typed launch does through `KernelParam::lower`: cudarc's
                    // wait on each buffer's earlier uses, its record after the launch.
                    let (a, ga) = src.device_ptr(&stream);
                    let (pb, gb) = b_d.device_ptr(&stream);
                    let (c, gc) = dst.device_ptr_mut(&stream);
                    // SAFETY: as above, at the addresses of live n-float buffers.
                    unsafe { k.launch(&stream, cfg, (a, pb, c, n64)) }?;
                    drop((ga, gb, gc));
                }
            }
        }
        Ok(())
    };
    let rust_seq = |s: &mut State| -> Result<()> {
        let [x0, x1] = &mut s.x_seq;
        sequence::run(&stream, |seq| {
            let (b, x) = (seq.read(&b_d)?, [seq.write(x0)?, seq.write(x1)?]);
            for i in 0..steps {
                // SAFETY: vecadd stays within its n-float buffers.
                unsafe { seq.launch(&vecadd, cfg, (x[i % 2].read(), b, x[(i + 1) % 2])) }?;
            }
            Ok(())
        })?;
        Ok(())
    };
    let seq_nvcc_addr = [
        addr(&state.x_seq_nvcc[0], &stream),
        addr(&state.x_seq_nvcc[1], &stream),
    ];
    let b_addr = addr(&b_d, &stream);
    let nvcc_seq = |s: &mut State| -> Result<()> {
        let [x0, x1] = &mut s.x_seq_nvcc;
        match &nvcc {
            NvccKernel::Typed(k) => sequence::run(&stream, |seq| {
                let (b, x) = (seq.read(&b_d)?, [seq.write(x0)?, seq.write(x1)?]);
                for i in 0..steps {
                    // SAFETY: vecadd_ref reads a[k], b[k] and writes c[k] for k < n only.
                    unsafe { seq.launch(k, cfg, (x[i % 2].read(), b, x[(i + 1) % 2], n64)) }?;
                }
                Ok(())
            })?,
            NvccKernel::Raw(k) => {
                let (p, pb) = (seq_nvcc_addr, b_addr);
                sequence::run(&stream, |seq| {
                    // Registered for the ordering (waits now, records at the end); the
                    // kernel takes the same buffers' raw addresses.
                    let _held = (seq.read(&b_d)?, seq.write(x0)?, seq.write(x1)?);
                    for i in 0..steps {
                        // SAFETY: as above, at the addresses of live n-float buffers.
                        unsafe { seq.launch(k, cfg, (p[i % 2], pb, p[(i + 1) % 2], n64)) }?;
                    }
                    Ok(())
                })?
            }
        }
        Ok(())
    };
    let cpp_loop_run = |_: &mut State| -> Result<()> {
        // SAFETY: live n-float buffers on this stream's context.
        let rc = unsafe { cpp_loop(raw_stream, lb, lc0, lc1, n64, steps as i32, grid, block) };
        ensure!(rc == 0, "graphref_loop: cudaError {rc}");
        Ok(())
    };
    let rust_graph_run = |s: &mut State| -> Result<()> { Ok(s.rust_graph.launch(&stream)?) };
    let nvcc_graph_run = |s: &mut State| -> Result<()> { Ok(s.nvcc_graph.launch(&stream)?) };
    let cpp_graph_run = |_: &mut State| -> Result<()> {
        // SAFETY: a live executable graph of this context.
        let rc = unsafe { cpp_launch(cpp_exec, raw_stream) };
        ensure!(rc == 0, "graphref_launch: cudaError {rc}");
        Ok(())
    };
    let simple_graph_run = |s: &mut State| -> Result<()> {
        match &mut s.simple_graph {
            Some(g) => Ok(g.launch(&stream)?),
            None => Ok(()),
        }
    };
    // The PDL chain: one element per thread, the same kernel with and without the
    // programmatic stream serialization attribute, Rust (a sequence) and C++.
    let cfg_pdl = for_num_elems(n as u32, 256)?;
    let pdl_attrs = [
        LaunchAttributes::new(),
        LaunchAttributes::new().programmatic_stream_serialization(true),
    ];
    let rust_pdl = |s: &mut State, k: usize| -> Result<()> {
        let [x0, x1] = &mut s.x_pdl[k];
        sequence::run(&stream, |seq| {
            let (b, x) = (seq.read(&b_d)?, [seq.write(x0)?, seq.write(x1)?]);
            for i in 0..steps {
                // SAFETY: vecadd_pdl reads a[k], b[k] and writes c[k] for k < c.len() = n,
                // after waiting for the previous launch.
                unsafe {
                    seq.launch_with(
                        &vecadd_pdl,
                        cfg_pdl,
                        &pdl_attrs[k],
                        (x[i % 2].read(), b, x[(i + 1) % 2]),
                    )
                }?;
            }
            Ok(())
        })?;
        Ok(())
    };
    let pdl_addr: Vec<(u64, u64)> = (2..4)
        .map(|k| {
            (
                addr(&state.x_pdl[k][0], &stream),
                addr(&state.x_pdl[k][1], &stream),
            )
        })
        .collect();
    let cpp_pdl = |_: &mut State, k: usize| -> Result<()> {
        let (p0, p1) = pdl_addr[k];
        // SAFETY: live n-float buffers on this stream's context.
        let rc = unsafe {
            cpp_pdl_loop(
                raw_stream,
                b_addr as *const f32,
                p0 as *mut f32,
                p1 as *mut f32,
                n64,
                steps as i32,
                cfg_pdl.grid_dim.0,
                cfg_pdl.block_dim.0,
                k as i32,
            )
        };
        ensure!(rc == 0, "graphref_pdl_loop: cudaError {rc}");
        Ok(())
    };
    let rust_pdl_plain = |s: &mut State| rust_pdl(s, 0);
    let rust_pdl_on = |s: &mut State| rust_pdl(s, 1);
    let cpp_pdl_plain = |s: &mut State| cpp_pdl(s, 0);
    let cpp_pdl_on = |s: &mut State| cpp_pdl(s, 1);
    let mut variants: Vec<(&str, timing::Launch<'_, State>)> = vec![
        ("rust loop", &rust_loop),
        ("c++ loop", &cpp_loop_run),
        ("rust graph", &rust_graph_run),
        ("rust graph (nvcc kernel)", &nvcc_graph_run),
        ("c++ graph", &cpp_graph_run),
        ("rust loop (nvcc kernel)", &nvcc_loop),
        ("rust sequence", &rust_seq),
        ("rust sequence (nvcc kernel)", &nvcc_seq),
        ("rust sequence, pdl kernel", &rust_pdl_plain),
        ("rust sequence, pdl kernel (PDL)", &rust_pdl_on),
        ("c++ loop, pdl kernel", &cpp_pdl_plain),
        ("c++ loop, pdl kernel (PDL)", &cpp_pdl_on),
    ];
    if simple.is_some() {
        variants.push(("rust graph (simple kernel)", &simple_graph_run));
    }
    for (_, run) in &variants {
        run(&mut state)?;
    }
    stream.synchronize()?;
    check(
        "rust loop",
        &stream,
        [&state.x_loop[0], &state.x_loop[1]],
        &want,
    )?;
    check("c++ loop", &stream, [&x_cl[0], &x_cl[1]], &want)?;
    let x = &state.x_loop_nvcc;
    check("rust loop (nvcc kernel)", &stream, [&x[0], &x[1]], &want)?;
    let x = &state.x_seq;
    check("rust sequence", &stream, [&x[0], &x[1]], &want)?;
    let x = &state.x_seq_nvcc;
    check(
        "rust sequence (nvcc kernel)",
        &stream,
        [&x[0], &x[1]],
        &want,
    )?;
    for (k, what) in [
        "rust sequence, pdl kernel",
        "rust sequence, pdl kernel (PDL)",
        "c++ loop, pdl kernel",
        "c++ loop, pdl kernel (PDL)",
    ]
    .into_iter()
    .enumerate()
    {
        let x = &state.x_pdl[k];
        check(what, &stream, [&x[0], &x[1]], &want)?;
    }
    let g = &state.rust_graph;
    let xs = [g.slice(rg_tokens[0].read())?, g.slice(rg_tokens[1].read())?];
    check("rust graph", &stream, xs, &want)?;
    match ng_tokens {
        Some(t) => {
            let g = &state.nvcc_graph;
            let xs = [g.slice(t[0].read())?, g.slice(t[1].read())?];
            check("rust graph (nvcc kernel)", &stream, xs, &want)?;
        }
        None => check_raw("rust graph (nvcc kernel)", &stream, ng_addr, n, &want)?,
    }
    check("c++ graph", &stream, [&x_cg[0], &x_cg[1]], &want)?;
    if let (Some(g), Some(t)) = (&state.simple_graph, sg_tokens) {
        let xs = [g.slice(t[0].read())?, g.slice(t[1].read())?];
        check("rust graph (simple kernel)", &stream, xs, &want)?;
    }

    let launches: Vec<timing::Launch<'_, State>> = variants.iter().map(|v| v.1).collect();
    let ms = timing::interleaved_medians(&stream, o.runs, &mut state, |_| Ok(()), &launches)?;
    let us = |i: usize| ms[i] * 1e3 / steps as f64;
    println!(
        "\n{:<28} {:>12} {:>14}",
        "variant", "chain ms", "µs per kernel"
    );
    for (i, (name, _)) in variants.iter().enumerate() {
        println!("{name:<28} {:>12.4} {:>14.3}", ms[i], us(i));
    }
    let t = |name: &str| ms[variants.iter().position(|v| v.0 == name).unwrap()];
    println!();
    for (a, b) in [
        ("rust graph", "c++ graph"),
        ("rust graph (nvcc kernel)", "c++ graph"),
        ("rust graph (simple kernel)", "c++ graph"),
        ("rust loop", "c++ loop"),
        ("rust loop (nvcc kernel)", "c++ loop"),
        ("rust sequence", "c++ loop"),
        ("rust sequence (nvcc kernel)", "c++ loop"),
        ("rust loop", "rust sequence"),
        (
            "rust sequence, pdl kernel (PDL)",
            "rust sequence, pdl kernel",
        ),
        ("c++ loop, pdl kernel (PDL)", "c++ loop, pdl kernel"),
        (
            "rust sequence, pdl kernel (PDL)",
            "c++ loop, pdl kernel (PDL)",
        ),
    ] {
        if variants.iter().any(|v| v.0 == a) {
            println!("ratio {:<44} = {:.3}", format!("{a} / {b}"), t(a) / t(b));
        }
    }
    println!(
        "speedup rust loop / rust graph                     = {:.2}x",
        t("rust loop") / t("rust graph")
    );
    println!(
        "speedup c++ loop / c++ graph                       = {:.2}x",
        t("c++ loop") / t("c++ graph")
    );
    println!(
        "launch loop bar: rust sequence (nvcc kernel) / c++ loop = {:.3} (bar <= 1.05); \
         rust sequence / c++ loop = {:.3}",
        t("rust sequence (nvcc kernel)") / t("c++ loop"),
        t("rust sequence") / t("c++ loop")
    );
    drop(state);
    // SAFETY: the executable graph is no longer launched; the stream is synchronized
    // first so no run is in flight.
    stream.synchronize()?;
    unsafe { cpp_destroy(cpp_exec) };
    Ok(())
}

/// [`check`] for buffers known by address only (the graph of raw-address arguments).
fn check_raw(
    what: &str,
    stream: &CudaStream,
    x: [u64; 2],
    n: usize,
    want: &[Vec<f32>; 2],
) -> Result<()> {
    stream.synchronize()?;
    for k in 0..2 {
        let mut got = vec![0f32; n];
        // SAFETY: `x[k]` addresses n live floats of this (current) context; the stream is
        // synchronized, so nothing writes them meanwhile.
        unsafe {
            cudarc::driver::sys::cuMemcpyDtoH_v2(got.as_mut_ptr().cast(), x[k], n * 4).result()?
        };
        let bad = chain::mismatches(&got, &want[k]);
        ensure!(
            bad == 0,
            "{what}: x{k}: {bad} of {n} elements differ from the CPU"
        );
    }
    println!("PASS {what}: both buffers equal the CPU reference");
    Ok(())
}
