//! Host-side cost of one launch: a typed `Kernel::launch` against raw cudarc launches of
//! the same empty kernel (`empty()` in `tests/fixtures/kernels`), in the same run.
//!
//! Three ways, each 100 000 launches: host-loader's `Kernel<()>::launch`, cudarc's
//! `launch_builder` on a `CudaFunction` of the same PTX, and a bare
//! `cudarc::driver::result::launch_kernel`. The launches go in batches of `BATCH`
//! (below the driver's queue depth, so enqueueing does not wait for the GPU); only the
//! enqueue loop is timed, then the stream is synchronized. The three ways take turns
//! batch by batch, in a rotating order, so drift (clocks, other load) hits all alike.
//!
//! Prints the mean host time per launch of each way, and the ratios; the bar is
//! typed / cudarc `launch_builder` ≤ 1.02. Exit code 1 when a launch fails or the bar
//! is missed.
//!
//! Run on a GPU machine: `cargo run --release -p host-loader --example launch_overhead`.

use std::time::{Duration, Instant};

use cudarc::driver::{result, LaunchConfig};
use cudarc::nvrtc::Ptx;
use host_loader::{open_device, Module};

const PTX: &str = include_str!("../tests/data/fixture.ptx");
const LAUNCHES: usize = 100_000;
const BATCH: usize = 250;
const BAR: f64 = 1.02;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (ctx, _) = open_device(0)?;
    let stream = ctx.new_stream()?;
    let module = Module::from_ptx(&ctx, "fixture.ptx", PTX)?;
    let typed = module.kernel::<()>("empty")?;
    let raw_module = ctx.load_module(Ptx::from_src(PTX))?;
    let raw = raw_module.load_function("empty")?;
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };

    let names = [
        "host-loader Kernel::launch",
        "cudarc launch_builder",
        "bare cuLaunchKernel",
    ];
    let batch = |way: usize| -> Result<Duration, Box<dyn std::error::Error>> {
        let t = Instant::now();
        match way {
            0 => {
                for _ in 0..BATCH {
                    // SAFETY: `empty` touches no memory.
                    unsafe { typed.launch(&stream, cfg, ()) }?;
                }
            }
            1 => {
                for _ in 0..BATCH {
                    let mut b = stream.launch_builder(&raw);
                    // SAFETY: `empty` takes no parameters and touches no memory.
                    unsafe { b.launch(cfg) }?;
                }
            }
            _ => {
                for _ in 0..BATCH {
                    // SAFETY: `empty` takes no parameters; the context is current (bound
                    // by the warm-up below and never changed on this thread).
                    unsafe {
                        result::launch_kernel(
                            raw.cu_function(),
                            cfg.grid_dim,
                            cfg.block_dim,
                            0,
                            stream.cu_stream(),
                            &mut [],
                        )
                    }?;
                }
            }
        }
        let took = t.elapsed();
        stream.synchronize()?;
        Ok(took)
    };

    // Warm-up: JIT, first-launch costs, clocks.
    for way in 0..3 {
        for _ in 0..20 {
            batch(way)?;
        }
    }
    let mut total = [Duration::ZERO; 3];
    let rounds = LAUNCHES / BATCH;
    for round in 0..rounds {
        for k in 0..3 {
            let way = (round + k) % 3;
            total[way] += batch(way)?;
        }
    }
    let per = |d: Duration| d.as_secs_f64() * 1e9 / LAUNCHES as f64;
    for (name, t) in names.iter().zip(total) {
        println!("{name:<28} {:8.1} ns/launch ({LAUNCHES} launches)", per(t));
    }
    let vs_builder = per(total[0]) / per(total[1]);
    let vs_bare = per(total[0]) / per(total[2]);
    println!("ratio typed / cudarc launch_builder = {vs_builder:.4} (bar <= {BAR})");
    println!("ratio typed / bare cuLaunchKernel   = {vs_bare:.4}");
    let word = if vs_builder <= BAR { "PASS" } else { "FAIL" };
    println!("{word} launch overhead: typed / raw cudarc = {vs_builder:.4}");
    if vs_builder > BAR {
        std::process::exit(1);
    }
    Ok(())
}
