//! `node-bench`: what one small kernel costs as a node of a CUDA graph, kernel against
//! kernel (issue 30, point 2). Each `--variant` is a `vecadd` (`c = a + b` over `--n`
//! floats) from some PTX: a Rust kernel `(&[f32], &[f32], DisjointSlice<f32>)` or an nvcc
//! one `(const float*, const float*, float*, unsigned long long n)`, launched with one or
//! four elements per thread in blocks of `--block` threads. Every variant becomes a graph
//! of `--steps` (1000) dependent nodes, `x[(i+1)%2] = x[i%2] + b`, is checked bit for
//! bit against the CPU (the second buffer poisoned with NaN), then all graphs are timed
//! interleaved (CUDA events around one whole graph launch, median of `--runs` rounds).
//! The graph machinery is the same for every variant, so the differences are the
//! kernels'.
//!
//! `--cases saxpy,reduce_sum,...` adds the other benchmark kernels, each as a graph of
//! the same number of one-block nodes, Rust (`--rust-ptx`) against its nvcc twin from
//! `benches/gpu/reference.cu` (`--ref-ptx`), timed in the same interleaved rounds
//! (`node_cases.rs`).
//!
//! ```text
//! node-bench --variant 'nvcc=ref.ptx:vecadd_ref:raw:4' --variant 'rust=bench-kernels.ptx:vecadd:slices:4'
//! node-bench --cases all --rust-ptx bench-kernels.ptx --ref-ptx reference.ptx
//! ```

#![allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV

#[allow(dead_code)]
#[path = "../timing.rs"]
mod timing;

#[path = "../chain.rs"]
mod chain;

#[path = "../node_cases.rs"]
mod node_cases;

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{bail, ensure, Context, Result};
use clap::Parser;
use cudarc::driver::{CudaSlice, DevicePtr};
use host_loader::graph::{self, GraphExec};
use host_loader::{for_num_elems, Kernel, Module, Slice, SliceMut};
use rand::{Rng, SeedableRng};

/// Command-line options.
#[derive(Parser, Debug)]
struct Options {
    /// `LABEL=PTX:ENTRY:SIG:PER_THREAD`, SIG `slices` (Rust) or `raw` (nvcc's four
    /// parameters), PER_THREAD 1 or 4 elements. Repeat for each kernel to compare.
    #[arg(long = "variant")]
    variants: Vec<String>,
    /// Other benchmark kernels to compare as one-block nodes, comma-separated, or `all`
    /// (saxpy, reduce_sum, histogram, softmax, transpose, sgemm).
    #[arg(long)]
    cases: Option<String>,
    /// bench-kernels' linked PTX, for `--cases`.
    #[arg(long)]
    rust_ptx: Option<PathBuf>,
    /// `benches/gpu/reference.cu` built with `nvcc -ptx`, for `--cases`.
    #[arg(long)]
    ref_ptx: Option<PathBuf>,
    /// Elements per vector.
    #[arg(long, default_value_t = 1024)]
    n: usize,
    /// Threads per block.
    #[arg(long, default_value_t = 256)]
    block: u32,
    /// Dependent nodes in each graph.
    #[arg(long, default_value_t = 1000)]
    steps: usize,
    /// Timed rounds (the median is reported).
    #[arg(long, default_value_t = 31)]
    runs: usize,
    /// Seed for the random inputs.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

type RustSig = (Slice<f32>, Slice<f32>, SliceMut<f32>);
type RawSig = (u64, u64, u64, u64);

enum Sig {
    Slices(Kernel<RustSig>),
    Raw(Kernel<RawSig>),
}

struct Variant {
    label: String,
    kernel: Sig,
    per_thread: usize,
}

fn parse_variant(
    spec: &str,
    ctx: &std::sync::Arc<cudarc::driver::CudaContext>,
    modules: &mut HashMap<String, Module>,
) -> Result<Variant> {
    let (label, rest) = spec
        .split_once('=')
        .with_context(|| format!("--variant {spec}: expected LABEL=PTX:ENTRY:SIG:PER_THREAD"))?;
    let parts: Vec<&str> = rest.rsplitn(4, ':').collect();
    let [per_thread, sig, entry, path] = parts[..] else {
        bail!("--variant {spec}: expected LABEL=PTX:ENTRY:SIG:PER_THREAD");
    };
    if !modules.contains_key(path) {
        let m = Module::from_ptx_file(ctx, PathBuf::from(path))?;
        modules.insert(path.to_string(), m);
    }
    let m = &modules[path];
    let kernel = match sig {
        "slices" => Sig::Slices(m.kernel::<RustSig>(entry)?),
        "raw" => Sig::Raw(m.kernel::<RawSig>(entry)?),
        other => bail!("--variant {spec}: SIG is `slices` or `raw`, not `{other}`"),
    };
    let per_thread: usize = per_thread.parse().context("PER_THREAD")?;
    ensure!(
        per_thread == 1 || per_thread == 4,
        "--variant {spec}: PER_THREAD is 1 or 4"
    );
    Ok(Variant {
        label: label.to_string(),
        kernel,
        per_thread,
    })
}

fn main() -> Result<()> {
    let o = Options::parse();
    let (ctx, _legacy) = host_loader::open_device(0)?;
    let stream = ctx.new_stream()?;
    let mut modules = HashMap::new();
    let mut variants = Vec::new();
    for spec in &o.variants {
        variants.push(parse_variant(spec, &ctx, &mut modules)?);
    }
    let case_names: Vec<&str> = match o.cases.as_deref() {
        None => Vec::new(),
        Some("all") => node_cases::ALL.to_vec(),
        Some(list) => list.split(',').collect(),
    };
    ensure!(
        !variants.is_empty() || !case_names.is_empty(),
        "give at least one --variant or --cases"
    );
    let mut cases = Vec::new();
    for (i, name) in case_names.iter().enumerate() {
        cases.push(node_cases::Case::new(
            name,
            &stream,
            o.seed * 100 + i as u64,
        )?);
    }
    let case_modules = if cases.is_empty() {
        None
    } else {
        let (Some(rp), Some(np)) = (&o.rust_ptx, &o.ref_ptx) else {
            bail!("--cases needs --rust-ptx and --ref-ptx");
        };
        Some((
            Module::from_ptx_file(&ctx, rp.clone())?,
            Module::from_ptx_file(&ctx, np.clone())?,
        ))
    };
    let (n, steps) = (o.n, o.steps);
    let mut r = rand::rngs::StdRng::seed_from_u64(o.seed);
    let x0: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let b: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
    let nan = vec![f32::NAN; n];
    let want = chain::chain_ref(&x0, &nan, &b, steps);
    let b_d = stream.clone_htod(&b)?;
    let b_addr = b_d.device_ptr(&stream).0;
    let mut bufs = Vec::new();
    for _ in &variants {
        bufs.push([stream.clone_htod(&x0)?, stream.clone_htod(&nan)?]);
    }
    println!(
        "graphs of {steps} dependent vecadd nodes, {n} floats, blocks of {} threads",
        o.block
    );
    let n64 = n as u64;
    let mut execs: Vec<GraphExec<'_>> = Vec::new();
    let mut tokens = Vec::new();
    for (v, x) in variants.iter().zip(bufs.iter_mut()) {
        let cfg = for_num_elems(n.div_ceil(v.per_thread) as u32, o.block)?;
        let [x0d, x1d]: &mut [CudaSlice<f32>; 2] = x;
        let p = [x0d.device_ptr(&stream).0, x1d.device_ptr(&stream).0];
        let (g, xt) = graph::capture(&stream, |rec| {
            let (bt, xt) = (rec.read(&b_d)?, [rec.write(x0d)?, rec.write(x1d)?]);
            for i in 0..steps {
                let (src, dst) = (i % 2, (i + 1) % 2);
                match &v.kernel {
                    // SAFETY: vecadd reads a[k], b[k] and writes c[k] for k < c.len() = n.
                    Sig::Slices(k) => unsafe {
                        rec.launch(k, cfg, (xt[src].read(), bt, xt[dst]))
                            .map(drop)?
                    },
                    // SAFETY: as above, at the addresses of the registered n-float
                    // buffers (registered for the ordering, borrowed by the graph).
                    Sig::Raw(k) => unsafe {
                        rec.launch(k, cfg, (p[src], b_addr, p[dst], n64))
                            .map(drop)?
                    },
                }
            }
            Ok(xt)
        })?;
        let mut e = g.instantiate()?;
        e.upload(&stream)?;
        println!(
            "{}: grid {} x block {}",
            v.label, cfg.grid_dim.0, cfg.block_dim.0
        );
        execs.push(e);
        tokens.push(xt);
    }
    // Correctness: one graph launch each from the initial buffers.
    for ((v, e), xt) in variants.iter().zip(&mut execs).zip(&tokens) {
        e.launch(&stream)?;
        stream.synchronize()?;
        for k in 0..2 {
            let got = stream.clone_dtoh(e.slice(xt[k].read())?)?;
            let bad = chain::mismatches(&got, &want[k]);
            ensure!(bad == 0, "{}: x{k}: {bad} of {n} elements differ", v.label);
        }
        println!("PASS {}: both buffers equal the CPU reference", v.label);
    }
    let mut labels: Vec<String> = variants.iter().map(|v| v.label.clone()).collect();
    let case_names: Vec<&str> = cases.iter().map(|c| c.spec.name).collect();
    if let Some((rust, nvcc)) = &case_modules {
        for c in cases.iter_mut() {
            let name = c.spec.name;
            let [(mut er, or), (mut en, on)] =
                c.spec.graphs(&mut c.bufs, &stream, rust, nvcc, steps)?;
            er.launch(&stream)?;
            en.launch(&stream)?;
            stream.synchronize()?;
            c.spec
                .check([or.read(&er, &stream)?, on.read(&en, &stream)?], steps)?;
            println!("PASS {name}: rust and nvcc equal the CPU reference after {steps} nodes");
            execs.push(er);
            execs.push(en);
            labels.push(format!("rust {name} (one block)"));
            labels.push(format!("nvcc {name} (one block)"));
        }
    }
    type Run<'s, 'g> = Box<dyn Fn(&mut Vec<GraphExec<'g>>) -> Result<()> + 's>;
    let runs: Vec<Run<'_, '_>> = (0..execs.len())
        .map(|k| {
            let s = &stream;
            Box::new(move |e: &mut Vec<GraphExec<'_>>| Ok(e[k].launch(s)?)) as Run<'_, '_>
        })
        .collect();
    let launches: Vec<timing::Launch<'_, Vec<GraphExec<'_>>>> =
        runs.iter().map(|f| f.as_ref() as _).collect();
    let ms = timing::interleaved_medians(&stream, o.runs, &mut execs, |_| Ok(()), &launches)?;
    println!(
        "\n{:<40} {:>12} {:>10}",
        "variant", "µs per node", "/ first"
    );
    for (label, t) in labels.iter().zip(&ms) {
        println!(
            "NODE {:<35} {:>12.4} {:>10.4}",
            label,
            t * 1e3 / steps as f64,
            t / ms[0]
        );
    }
    let first_case = variants.len();
    for (k, name) in case_names.iter().enumerate() {
        let (r, n) = (ms[first_case + 2 * k], ms[first_case + 2 * k + 1]);
        println!("CASE {name:<12} rust/nvcc per node {:.4}", r / n);
    }
    Ok(())
}
