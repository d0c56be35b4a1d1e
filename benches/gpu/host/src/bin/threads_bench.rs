//! `threads-bench`: N host threads, each launching a chain of `--steps` dependent tiny
//! kernels (`x[(i+1)%2] = x[i%2] + b` over `--n` floats) into a stream of its own, for
//! N in `--threads` (issue 30, point 3). Three ways, one `Kernel` shared by every thread
//! without a lock:
//!
//! | way | kernel | how |
//! |---|---|---|
//! | `rust launch` | Rust `vecadd` (bench-kernels) | `Kernel::launch` one by one (cudarc's event tracking per launch) |
//! | `rust sequence` | Rust `vecadd` | one `host_loader::sequence` per thread, `Sequence::launch` one by one |
//! | `c++ <<<>>>` | nvcc `vecadd_ref` | `graphref_loop` of `graph_reference.cu`, called from each thread |
//!
//! Each thread's chain is first checked bit for bit against the CPU (its second buffer
//! poisoned with NaN). Timing: the threads wait at a barrier, the clock starts when it
//! opens and stops when every thread has synchronized its stream and returned; each
//! round times every way once, starting at a different one; median of `--runs` rounds.
//! The result is launches per second over all threads, and its ratio to C++'s.

#![allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV

#[path = "../chain.rs"]
mod chain;

use std::ffi::c_void;
use std::path::PathBuf;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use anyhow::{ensure, Context, Result};
use clap::Parser;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use host_loader::{for_num_elems, sequence, Kernel, LaunchConfig, Module, Slice, SliceMut};
use rand::{Rng, SeedableRng};

/// Command-line options.
#[derive(Parser, Debug)]
struct Options {
    /// Linked Rust PTX (from `cargo xtask build-ptx -p bench-kernels`).
    #[arg(long, default_value = "target/ptx/bench-kernels.ptx")]
    rust_ptx: PathBuf,
    /// nvcc-built shared library of `benches/gpu/graph_reference.cu`.
    #[arg(long)]
    ref_lib: PathBuf,
    /// Elements per vector.
    #[arg(long, default_value_t = 1024)]
    n: usize,
    /// Dependent launches per thread.
    #[arg(long, default_value_t = 2000)]
    steps: usize,
    /// Host thread counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8")]
    threads: Vec<usize>,
    /// Timed rounds (the median is reported).
    #[arg(long, default_value_t = 9)]
    runs: usize,
    /// Seed for the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

type LoopFn =
    unsafe extern "C" fn(*mut c_void, *const f32, *mut f32, *mut f32, u64, i32, u32, u32) -> i32;
type RustSig = (Slice<f32>, Slice<f32>, SliceMut<f32>);

/// One thread's stream and buffers.
struct Lane {
    stream: Arc<CudaStream>,
    b: CudaSlice<f32>,
    x: [CudaSlice<f32>; 2],
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Way {
    RustLaunch,
    RustSequence,
    Cpp,
}

impl Way {
    fn name(self) -> &'static str {
        match self {
            Way::RustLaunch => "rust launch",
            Way::RustSequence => "rust sequence",
            Way::Cpp => "c++ <<<>>>",
        }
    }
}

struct Setup<'a> {
    ctx: &'a Arc<CudaContext>,
    vecadd: &'a Kernel<RustSig>,
    cpp_loop: LoopFn,
    cfg: LaunchConfig,
    n: usize,
    steps: usize,
}

/// One lane's chain, the way `way` launches it; returns when its stream is idle.
fn chain(s: &Setup<'_>, way: Way, lane: &mut Lane) -> Result<()> {
    let Lane { stream, b, x } = lane;
    let [x0, x1] = x;
    match way {
        Way::RustLaunch => {
            for i in 0..s.steps {
                let (src, dst) = if i % 2 == 0 {
                    (&*x0, &mut *x1)
                } else {
                    (&*x1, &mut *x0)
                };
                // SAFETY: vecadd reads a[k], b[k] and writes c[k] for k < c.len() = n.
                unsafe { s.vecadd.launch(stream, s.cfg, (src, &*b, dst)) }?;
            }
        }
        Way::RustSequence => {
            sequence::run(stream, |seq| {
                let (bt, xt) = (seq.read(b)?, [seq.write(x0)?, seq.write(x1)?]);
                for i in 0..s.steps {
                    // SAFETY: as above.
                    unsafe {
                        seq.launch(s.vecadd, s.cfg, (xt[i % 2].read(), bt, xt[(i + 1) % 2]))
                    }?;
                }
                Ok(())
            })?;
        }
        Way::Cpp => {
            let p = |v: &CudaSlice<f32>| v.device_ptr(stream).0;
            let (pb, p0, p1) = (p(b), p(x0), p(x1));
            let raw = stream.cu_stream() as *mut c_void;
            // SAFETY: live n-float buffers of this stream's context.
            let rc = unsafe {
                (s.cpp_loop)(
                    raw,
                    pb as *const f32,
                    p0 as *mut f32,
                    p1 as *mut f32,
                    s.n as u64,
                    s.steps as i32,
                    s.cfg.grid_dim.0,
                    s.cfg.block_dim.0,
                )
            };
            ensure!(rc == 0, "graphref_loop: cudaError {rc}");
        }
    }
    stream.synchronize()?;
    Ok(())
}

/// Runs every lane's chain on a thread of its own; seconds from the barrier's opening
/// to the last thread's return.
fn timed(s: &Setup<'_>, way: Way, lanes: &mut [Lane]) -> Result<f64> {
    let barrier = Barrier::new(lanes.len() + 1);
    let mut start = None;
    let results: Vec<Result<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = lanes
            .iter_mut()
            .map(|lane| {
                let barrier = &barrier;
                scope.spawn(move || -> Result<()> {
                    s.ctx.bind_to_thread()?;
                    barrier.wait();
                    chain(s, way, lane)
                })
            })
            .collect();
        barrier.wait();
        start = Some(Instant::now());
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("thread panicked")))
            })
            .collect()
    });
    let secs = start.map_or(0.0, |t| t.elapsed().as_secs_f64());
    for r in results {
        r?;
    }
    Ok(secs)
}

fn main() -> Result<()> {
    let o = Options::parse();
    let (ctx, _legacy) = host_loader::open_device(0)?;
    let module = Module::from_ptx_file(&ctx, &o.rust_ptx)?;
    let vecadd = module.kernel::<RustSig>("vecadd")?;
    // SAFETY: the library is ours (graph_reference.cu); its initializers only set up the
    // CUDA runtime.
    let lib = unsafe { libloading::Library::new(&o.ref_lib) }
        .with_context(|| format!("loading {}", o.ref_lib.display()))?;
    // SAFETY: the symbol has this signature in graph_reference.cu.
    let cpp_loop = unsafe { *lib.get::<LoopFn>(b"graphref_loop")? };
    let (n, steps) = (o.n, o.steps);
    let cfg = for_num_elems(n.div_ceil(4) as u32, 256)?;
    let setup = Setup {
        ctx: &ctx,
        vecadd: &vecadd,
        cpp_loop,
        cfg,
        n,
        steps,
    };
    let mut r = rand::rngs::StdRng::seed_from_u64(o.seed);
    let x0: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let b: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let nan = vec![f32::NAN; n];
    let want = chain::chain_ref(&x0, &nan, &b, steps);
    let ways = [Way::RustLaunch, Way::RustSequence, Way::Cpp];
    println!(
        "chains of {steps} dependent vecadd launches over {n} floats, one stream per host \
         thread; {} rounds (median), seed {}",
        o.runs, o.seed
    );
    let mut summary = Vec::new();
    for &threads in &o.threads {
        let mut lanes = Vec::new();
        for _ in 0..threads {
            let stream = ctx.new_stream()?;
            let (bd, x) = (
                stream.clone_htod(&b)?,
                [stream.clone_htod(&x0)?, stream.clone_htod(&nan)?],
            );
            lanes.push(Lane { stream, b: bd, x });
        }
        // Correctness first: every lane's chain from fresh buffers, every way.
        for way in ways {
            for lane in lanes.iter_mut() {
                lane.stream.memcpy_htod(&x0, &mut lane.x[0])?;
                lane.stream.memcpy_htod(&nan, &mut lane.x[1])?;
            }
            timed(&setup, way, &mut lanes)?;
            for (t, lane) in lanes.iter().enumerate() {
                for (k, want) in want.iter().enumerate() {
                    let got = lane.stream.clone_dtoh(&lane.x[k])?;
                    let bad = chain::mismatches(&got, want);
                    ensure!(
                        bad == 0,
                        "{} with {threads} threads: thread {t}, x{k}: {bad} of {n} elements differ",
                        way.name()
                    );
                }
            }
        }
        println!("PASS {threads} threads: every way's chains equal the CPU reference");
        let mut times = vec![Vec::new(); ways.len()];
        for round in 0..o.runs.max(1) + 1 {
            for k in 0..ways.len() {
                let w = (round + k) % ways.len();
                let t = timed(&setup, ways[w], &mut lanes)?;
                if round > 0 {
                    times[w].push(t);
                }
            }
        }
        let med: Vec<f64> = times
            .into_iter()
            .map(|mut t| {
                t.sort_by(f64::total_cmp);
                t[t.len() / 2]
            })
            .collect();
        let rate = |k: usize| (threads * steps) as f64 / med[k];
        let cpp = rate(2);
        for (k, way) in ways.iter().enumerate() {
            println!(
                "THREADS {threads} {:<14} {:>10.3} ms {:>12.0} launches/s {:>7.3}x c++",
                way.name(),
                med[k] * 1e3,
                rate(k),
                rate(k) / cpp
            );
        }
        summary.push((threads, rate(0) / cpp, rate(1) / cpp));
    }
    let worst = |f: fn(&(usize, f64, f64)) -> f64| {
        summary
            .iter()
            .map(|s| (f(s), s.0))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap_or((0.0, 0))
    };
    let (seq, seq_n) = worst(|s| s.2);
    let (launch, launch_n) = worst(|s| s.1);
    println!(
        "threads bar (>= 0.95x c++ at every N): rust sequence {seq:.3}x (worst N = {seq_n}), \
         rust launch {launch:.3}x (worst N = {launch_n})"
    );
    Ok(())
}
