//! Runs the kernels of `standalone-kernels` on random inputs, on the GPU (the PTX that
//! build.rs embedded) or, with `--emulate`, on the CPU under device-std's emulator, and
//! checks every element against a CPU reference. Prints PASS or FAIL per kernel; exit
//! code 0 only when all pass.
//!
//! Usage: `standalone-host [--emulate] [--n N] [--seed S]`

use std::process::ExitCode;

use devlib::{Affine, Clamped};
use host_loader::{for_num_elems, include_ptx, open_device, DeviceBuffer, EmbeddedPtx, Module};

/// `OUT_DIR/standalone-kernels.ptx` (and its link map), written by build.rs; or, when
/// build.rs built several architectures, the fatbin and each one's PTX and link map.
static PTX: EmbeddedPtx = include_ptx!("standalone-kernels");

/// The typed bindings build.rs generated: `StandaloneKernels::load`, `.transform(..)`,
/// `.clamp_ints(..)`.
mod kernels {
    include!(concat!(env!("OUT_DIR"), "/standalone_kernels.rs"));
}

/// Written into every output element before a run, so an element the kernel skipped
/// shows.
const POISON_F32: f32 = f32::from_bits(0x7fc0_dead);
const POISON_CLAMPED: Clamped = Clamped {
    value: 0x5eed_dead,
    side: 0x5e,
};
const BLOCK: u32 = 256;

struct Inputs {
    p: Affine,
    xs: Vec<f32>,
    ints: Vec<i32>,
    lo: i32,
    hi: i32,
}

struct Outputs {
    transformed: Vec<f32>,
    clamped: Vec<Clamped>,
}

/// Command line (clap: what a user's copy would grow from).
#[derive(clap::Parser)]
#[command(about = "Runs standalone-kernels on random inputs and checks every element")]
struct Args {
    /// Run on the CPU under device-std's emulator instead of the GPU.
    #[arg(long)]
    emulate: bool,
    /// Number of elements.
    #[arg(long, default_value_t = 1_000_003)]
    n: usize,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 7)]
    seed: u64,
}

fn main() -> ExitCode {
    let Args { emulate, n, seed } = clap::Parser::parse();
    println!("embedded module: {} ({})", PTX.name, embedded_form());
    let inputs = random_inputs(n, seed);
    let (mode, result) = if emulate {
        ("emulator", run_emulated(&inputs))
    } else {
        ("gpu", run_gpu(&inputs))
    };
    let out = match result {
        Ok(out) => out,
        Err(e) => {
            eprintln!("error ({mode}): {e}");
            return ExitCode::FAILURE;
        }
    };
    let bad_f = count_transform_mismatches(&inputs, &out.transformed);
    let bad_i = count_clamp_mismatches(&inputs, &out.clamped);
    let mut ok = true;
    for (name, bad) in [("transform", bad_f), ("clamp_ints", bad_i)] {
        let verdict = if bad == 0 { "PASS" } else { "FAIL" };
        ok &= bad == 0;
        println!("{verdict} {name} ({mode}, n = {n}, seed = {seed}): {bad} mismatching elements");
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// A small xorshift generator: reproducible inputs without another dependency.
fn random_inputs(n: usize, seed: u64) -> Inputs {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut unit = || (next() >> 40) as f32 / (1u64 << 24) as f32; // [0, 1)
    let p = Affine {
        scale: 4.0 * unit() - 2.0,
        shift: 10.0 * unit() - 5.0,
        lo: -50.0,
        hi: 50.0,
    };
    let xs = (0..n).map(|_| 200.0 * unit() - 100.0).collect();
    let ints = (0..n).map(|_| (next() >> 32) as i32).collect();
    Inputs {
        p,
        xs,
        ints,
        lo: -1 << 20,
        hi: 1 << 24,
    }
}

/// What build.rs embedded: `PTX`, or `fatbin of sm_80, sm_90a`.
fn embedded_form() -> String {
    match &PTX.fatbin {
        Some(f) => {
            let archs: Vec<&str> = f.archs.iter().map(|a| a.arch).collect();
            format!("fatbin of {}", archs.join(", "))
        }
        None => "PTX".to_string(),
    }
}

fn run_gpu(inp: &Inputs) -> Result<Outputs, Box<dyn std::error::Error>> {
    let (ctx, stream) = open_device(0)?;
    // A build for one architecture embeds PTX, which the driver JIT-compiles here (cached
    // after the first run); one for several (GPU_BUILD_ARCH=sm_80,sm_90a) embeds a fatbin,
    // whose cubin for this GPU loads without compiling.
    let started = std::time::Instant::now();
    let module = Module::from_embedded(&ctx, &PTX)?;
    println!(
        "loaded {} in {:.3} ms",
        PTX.name,
        started.elapsed().as_secs_f64() * 1e3
    );
    let k = kernels::StandaloneKernels::load(&module)?;
    let n = inp.xs.len();
    // Device memory, one form for every element type (numbers and `KernelStruct`s):
    // `DeviceBuffer::from_host` uploads, `zeroed` allocates, `to_host_vec` reads back,
    // and `&buf` / `&mut buf` are the kernels' slice arguments.
    let xs = DeviceBuffer::from_host(&stream, &inp.xs)?;
    let ints = DeviceBuffer::from_host(&stream, &inp.ints)?;
    let mut transformed = DeviceBuffer::from_host(&stream, &vec![POISON_F32; n])?;
    let mut clamped = DeviceBuffer::from_host(&stream, &vec![POISON_CLAMPED; n])?;
    let cfg = for_num_elems(u32::try_from(n).expect("n fits in u32"), BLOCK)?;
    // SAFETY: both kernels write out[i] only for i < out.len() and read xs[i] through
    // bounds-checked slices of the same length.
    unsafe {
        k.transform(&stream, cfg, inp.p, &xs, &mut transformed)?;
        k.clamp_ints(&stream, cfg, &ints, inp.lo, inp.hi, &mut clamped)?;
    }
    Ok(Outputs {
        transformed: transformed.to_host_vec(&stream)?,
        clamped: clamped.to_host_vec(&stream)?,
    })
}

fn run_emulated(inp: &Inputs) -> Result<Outputs, Box<dyn std::error::Error>> {
    use device_std::emulator::{launch, GlobalMut, LaunchConfig};
    let n = inp.xs.len();
    let cfg = LaunchConfig::for_num_elems(n as u32, BLOCK);
    let mut transformed = vec![POISON_F32; n];
    let out = GlobalMut::new(&mut transformed);
    launch(cfg, || {
        standalone_kernels::transform(inp.p, &inp.xs, out.disjoint())
    })?;
    let mut clamped = vec![POISON_CLAMPED; n];
    let out = GlobalMut::new(&mut clamped);
    launch(cfg, || {
        standalone_kernels::clamp_ints(&inp.ints, inp.lo, inp.hi, out.disjoint())
    })?;
    Ok(Outputs {
        transformed,
        clamped,
    })
}

/// Elements that match neither the two-rounding nor the fused (`fma`) result.
fn count_transform_mismatches(inp: &Inputs, got: &[f32]) -> usize {
    let p = inp.p;
    let clamp = |y: f32| y.clamp(p.lo, p.hi);
    inp.xs
        .iter()
        .zip(got)
        .filter(|(&x, &y)| {
            let separate = clamp(p.scale * x + p.shift);
            let fused = clamp(p.scale.mul_add(x, p.shift));
            y.to_bits() != separate.to_bits() && y.to_bits() != fused.to_bits()
        })
        .count()
}

/// Elements whose value or side is wrong (padding is no part of the value).
fn count_clamp_mismatches(inp: &Inputs, got: &[Clamped]) -> usize {
    inp.ints
        .iter()
        .zip(got)
        .filter(|(&x, y)| {
            let side = match (x < inp.lo, x > inp.hi) {
                (true, _) => -1,
                (_, true) => 1,
                _ => 0,
            };
            (y.value, y.side) != (x.clamp(inp.lo, inp.hi), side)
        })
        .count()
}
