//! The device-std intrinsics suite: runs each kernel of `intrinsics-kernels`
//! on random input with poisoned outputs, compares everything it wrote with a
//! CPU model (`intrinsics_kernels::reference`), and prints one PASS/FAIL line
//! per test. `--n` is unused (each test has its own size); `--seed` repeats a
//! run.

use anyhow::Result;
use clap::Parser;
use cudarc::driver::CudaStream;
use example_support::{rng, Options};
use host_loader::{open_device, LaunchConfig, Module, PtrMut, Slice, SliceMut};
use intrinsics_kernels::reference;
use intrinsics_kernels::*;
use rand::rngs::StdRng;
use rand::Rng;
use std::sync::Arc;

const POISON32: u32 = 0xFFFF_FFFF;
const POISON64: u64 = 0xAAAA_AAAA_AAAA_AAAA;

/// One test's verdict: the number of wrong values out of those checked.
struct Outcome {
    name: String,
    bad: usize,
    checked: usize,
}

fn cfg(grid: (u32, u32, u32), block: (u32, u32, u32), shared: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: grid,
        block_dim: block,
        shared_mem_bytes: shared,
    }
}

fn compare<T: PartialEq + std::fmt::Debug>(name: &str, got: &[T], want: &[T]) -> Outcome {
    let mut bad = 0;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g != w {
            if bad < 5 {
                eprintln!("{name}[{i}]: got {g:?}, want {w:?}");
            }
            bad += 1;
        }
    }
    bad += got.len().abs_diff(want.len());
    Outcome {
        name: name.to_string(),
        bad,
        checked: want.len(),
    }
}

fn thread_ids(
    module: &Module,
    stream: &Arc<CudaStream>,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    name: &str,
) -> Result<Outcome> {
    let k = module.kernel::<(PtrMut<u32>,)>("thread_ids")?;
    let bs = block.0 * block.1 * block.2;
    let total = (grid.0 * grid.1 * grid.2 * bs) as usize;
    let mut out = stream.clone_htod(&vec![POISON32; total * ID_WORDS])?;
    // SAFETY: `out` holds 16 words per thread of the launch.
    unsafe { k.launch(stream, cfg(grid, block, 0), (&mut out,)) }?;
    let got = stream.clone_dtoh(&out)?;
    let want = reference::thread_ids(grid, block);
    Ok(compare(name, &got, &want))
}

fn index_2d(
    module: &Module,
    stream: &Arc<CudaStream>,
    grid: (u32, u32, u32),
    runtime_stride: Option<u32>,
    name: &str,
) -> Result<Outcome> {
    let block = (32u32, 8u32, 1u32);
    let stride = runtime_stride.map_or(STRIDE_2D, |s| s as usize);
    let rows = (grid.1 * block.1 * grid.2) as usize;
    let len = rows * stride;
    let mut out = stream.clone_htod(&vec![POISON32; len])?;
    let c = cfg(grid, block, 0);
    match runtime_stride {
        None => {
            let k = module.kernel::<(SliceMut<u32>,)>("index_2d_fill")?;
            // SAFETY: each in-bounds element is written by one thread.
            unsafe { k.launch(stream, c, (&mut out,)) }?;
        }
        Some(s) => {
            let k = module.kernel::<(SliceMut<u32>, u32)>("index_2d_runtime_fill")?;
            // SAFETY: as above.
            unsafe { k.launch(stream, c, (&mut out, s)) }?;
        }
    }
    let got = stream.clone_dtoh(&out)?;
    // Every (row, col < stride) is written; columns past the stride are not.
    let want = reference::index_2d(grid, block, stride, POISON32);
    Ok(compare(name, &got, &want))
}

fn warp_ops(module: &Module, stream: &Arc<CudaStream>, rng: &mut StdRng) -> Result<Outcome> {
    let k = module.kernel::<(Slice<u32>, PtrMut<u64>)>("warp_ops")?;
    let (blocks, threads) = (8u32, 128u32);
    let total = (blocks * threads) as usize;
    let input: Vec<u32> = (0..total)
        .map(|i| match (i / 32) % 4 {
            0 => 0x1234_5678,                   // a warp of equal values (match.all)
            1 => rng.random_range(0..4) * 64,   // many multiples of 64 (vote.any)
            2 => rng.random::<u32>() & !0x0808, // no 0xF nibble at the bottom (vote.all)
            _ => rng.random(),
        })
        .collect();
    let input_dev = stream.clone_htod(&input)?;
    let mut out = stream.clone_htod(&vec![POISON64; total * WARP_WORDS])?;
    let c = cfg((blocks, 1, 1), (threads, 1, 1), 0);
    // SAFETY: `out` holds 48 words per thread; `input` one value per thread.
    unsafe { k.launch(stream, c, (&input_dev, &mut out)) }?;
    let got = stream.clone_dtoh(&out)?;

    let want = reference::warp_ops(&input, threads as usize);
    Ok(compare("warp shuffles/votes/match/redux", &got, &want))
}

/// `warp_shuffle_widths` on random 64-bit inputs; four outcomes: the
/// shuffles at every constant width, those with `b >= 32`, those under a
/// partial mask, and those with a runtime width (word groups of
/// `reference::warp_shuffle_widths`).
fn warp_shuffle_widths(
    module: &Module,
    stream: &Arc<CudaStream>,
    rng: &mut StdRng,
) -> Result<Vec<Outcome>> {
    let k = module.kernel::<(Slice<u64>, PtrMut<u64>)>("warp_shuffle_widths")?;
    let (blocks, threads) = (8u32, 128u32);
    let total = (blocks * threads) as usize;
    let input: Vec<u64> = (0..total).map(|_| rng.random()).collect();
    let input_dev = stream.clone_htod(&input)?;
    let mut out = stream.clone_htod(&vec![POISON64; total * WIDTH_WORDS])?;
    let c = cfg((blocks, 1, 1), (threads, 1, 1), 0);
    // SAFETY: `out` holds 60 words per thread; `input` one value per thread.
    unsafe { k.launch(stream, c, (&input_dev, &mut out)) }?;
    let got = stream.clone_dtoh(&out)?;
    let want = reference::warp_shuffle_widths(&input, threads as usize);
    let words = |v: &[u64], range: std::ops::Range<usize>| -> Vec<u64> {
        v.chunks_exact(WIDTH_WORDS)
            .flat_map(|t| t[range.clone()].to_vec())
            .collect()
    };
    let groups = [
        (
            "warp shuffles with width 1..32 (idx/up/down/xor, u32 + i64)",
            0..WIDTH_HIGH_B_AT,
        ),
        (
            "warp shuffles with delta/lane mask >= 32 (PTX uses b % 32)",
            WIDTH_HIGH_B_AT..WIDTH_PARTIAL_AT,
        ),
        (
            "warp shuffles with width under a partial mask",
            WIDTH_PARTIAL_AT..WIDTH_RUNTIME_AT,
        ),
        (
            "warp shuffles with a runtime width (1 << blockIdx % 6)",
            WIDTH_RUNTIME_AT..WIDTH_WORDS,
        ),
    ];
    Ok(groups
        .into_iter()
        .map(|(name, range)| compare(name, &words(&got, range.clone()), &words(&want, range)))
        .collect())
}

fn atomics(module: &Module, stream: &Arc<CudaStream>, rng: &mut StdRng) -> Result<Outcome> {
    let k = module.kernel::<(Slice<u32>, PtrMut<u64>)>("atomics")?;
    let (blocks, threads) = (64u32, 256u32);
    let n = (blocks * threads) as usize;
    let vals: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let init = reference::atomics_init();
    let vals_dev = stream.clone_htod(&vals)?;
    let mut counters = stream.clone_htod(&init)?;
    let c = cfg((blocks, 1, 1), (threads, 1, 1), 0);
    // SAFETY: `counters` holds 40 u64 slots accessed only atomically.
    unsafe { k.launch(stream, c, (&vals_dev, &mut counters)) }?;
    let got = stream.clone_dtoh(&counters)?;

    let mut want = reference::atomics(&vals);
    // Swaps: the final value is some thread's k; Σ returned + final is exact.
    let mut got_cmp = got.clone();
    let swap_ok = reference::int_swaps_ok(&got, n);
    let fswap_ok = reference::float_swaps_ok(&got, n);
    let int_swaps = reference::INT_SWAP_SLOTS.map(|i| (i, swap_ok));
    let float_swaps = reference::FLOAT_SWAP_SLOTS.map(|i| (i, fswap_ok));
    for (i, ok) in int_swaps.into_iter().chain(float_swaps) {
        got_cmp[i] = if ok { 0 } else { u64::MAX };
        want[i] = 0;
    }
    Ok(compare(
        "atomics under contention (global + shared)",
        &got_cmp,
        &want,
    ))
}

fn barriers(module: &Module, stream: &Arc<CudaStream>, rng: &mut StdRng) -> Result<Outcome> {
    let k = module.kernel::<(Slice<u32>, PtrMut<u32>, SliceMut<u32>, SliceMut<u32>)>("barriers")?;
    let (blocks, threads) = (40usize, 256usize);
    let n = blocks * threads;
    let vals: Vec<u32> = (0..n)
        .map(|i| {
            let v: u32 = if rng.random_bool(0.01) {
                1000 * rng.random_range(0..1000)
            } else {
                rng.random()
            };
            if (i / threads) % 2 == 0 {
                v & 0x7FFF_FFFF
            } else {
                v
            }
        })
        .collect();
    let vals_dev = stream.clone_htod(&vals)?;
    let mut per_block = stream.clone_htod(&vec![POISON32; blocks * BARRIER_WORDS])?;
    let mut mirrored = stream.clone_htod(&vec![POISON32; n])?;
    let mut lane_mirrored = stream.clone_htod(&vec![POISON32; n])?;
    let c = cfg((blocks as u32, 1, 1), (threads as u32, 1, 1), 0);
    // SAFETY: `per_block` holds 3 words per block; the slices one per thread.
    unsafe {
        k.launch(
            stream,
            c,
            (&vals_dev, &mut per_block, &mut mirrored, &mut lane_mirrored),
        )
    }?;
    let mut got = stream.clone_dtoh(&per_block)?;
    got.extend(stream.clone_dtoh(&mirrored)?);
    got.extend(stream.clone_dtoh(&lane_mirrored)?);
    let want = reference::barriers(&vals, threads);
    let want = [want.per_block, want.mirrored, want.lane_mirrored].concat();
    Ok(compare(
        "barriers: sync_threads(_count/_and/_or), sync_warp",
        &got,
        &want,
    ))
}

fn dyn_shared(module: &Module, stream: &Arc<CudaStream>, bytes: u32) -> Result<Outcome> {
    let k = module.kernel::<(PtrMut<u32>,)>("dyn_shared")?;
    let (blocks, threads) = (3usize, 128usize);
    let per_block = DYN_HEADER + 3 * threads;
    let mut out = stream.clone_htod(&vec![POISON32; blocks * per_block])?;
    let c = cfg((blocks as u32, 1, 1), (threads as u32, 1, 1), bytes);
    // SAFETY: `out` is sized as the kernel documents; `bytes >= 4096 + 128`.
    unsafe { k.launch(stream, c, (&mut out,)) }?;
    let got = stream.clone_dtoh(&out)?;
    let want = reference::dyn_shared(blocks, threads, bytes);
    Ok(compare(
        &format!("dynamic shared memory, align 16/128/1024, {bytes} bytes"),
        &got,
        &want,
    ))
}

fn message_passing(module: &Module, stream: &Arc<CudaStream>) -> Result<Outcome> {
    let k = module.kernel::<(PtrMut<u32>, PtrMut<u32>, PtrMut<u32>)>("message_passing")?;
    let mut data = stream.clone_htod(&vec![0u32; MESSAGE_LEN])?;
    let mut flag = stream.clone_htod(&[0u32])?;
    let mut result = stream.clone_htod(&[POISON32; 3])?;
    // SAFETY: buffers sized as the kernel documents; two blocks of one thread.
    unsafe {
        k.launch(
            stream,
            cfg((2, 1, 1), (1, 1, 1), 0),
            (&mut data, &mut flag, &mut result),
        )
    }?;
    let got = stream.clone_dtoh(&result)?;
    let sum = reference::message_sum();
    println!("message passing: consumer spun {} times", got[1]);
    Ok(compare(
        "fences + release/acquire message passing",
        &[got[0], got[2]],
        &[sum, 0],
    ))
}

fn block_ids(module: &Module, stream: &Arc<CudaStream>) -> Result<Outcome> {
    let k = module.kernel::<(SliceMut<u32>,)>("block_ids")?;
    let mut out = stream.clone_htod(&vec![POISON32; 30])?;
    // SAFETY: one leader per block writes its own element.
    unsafe { k.launch(stream, cfg((5, 3, 2), (64, 1, 1), 0), (&mut out,)) }?;
    let got = stream.clone_dtoh(&out)?;
    Ok(compare(
        "block leader witness, 3D grid",
        &got,
        &(0..30).collect::<Vec<u32>>(),
    ))
}

/// Options: the examples' common ones, plus the panic demonstration.
#[derive(clap::Parser)]
struct Args {
    #[command(flatten)]
    common: Options,
    /// Only launch `hello` with tag 13, which panics: shows the device panic message
    /// (a `--panic abort` build prints it) and the launch error the host gets.
    #[arg(long)]
    panic_demo: bool,
    /// Only launch `shared_index` in bounds, then one past the end: shows the index,
    /// the length and the kernel's line printed before the trap, in any build.
    #[arg(long)]
    oob_demo: bool,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let opts = args.common;
    if args.panic_demo {
        return panic_demo(&opts);
    }
    if args.oob_demo {
        return oob_demo(&opts);
    }
    let seed = opts.seed();
    let mut rng = rng(seed);
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, opts.ptx_path("intrinsics-kernels"))?;
    let mut outcomes = vec![
        thread_ids(
            &module,
            &stream,
            (7, 1, 1),
            (96, 1, 1),
            "thread ids, 1D launch",
        )?,
        thread_ids(
            &module,
            &stream,
            (3, 5, 1),
            (16, 4, 1),
            "thread ids, 2D launch",
        )?,
        thread_ids(
            &module,
            &stream,
            (2, 3, 4),
            (8, 4, 2),
            "thread ids, 3D launch",
        )?,
        index_2d(
            &module,
            &stream,
            (4, 3, 1),
            None,
            "index_2d::<100>, 2D launch",
        )?,
        index_2d(
            &module,
            &stream,
            (4, 3, 2),
            None,
            "index_2d::<100>, 3D launch",
        )?,
        index_2d(
            &module,
            &stream,
            (3, 2, 1),
            Some(77),
            "index_2d_runtime(77), 2D launch",
        )?,
        warp_ops(&module, &stream, &mut rng)?,
        atomics(&module, &stream, &mut rng)?,
        barriers(&module, &stream, &mut rng)?,
        dyn_shared(&module, &stream, 4096 + 1024)?,
        dyn_shared(&module, &stream, 40 * 1024)?,
        message_passing(&module, &stream)?,
        block_ids(&module, &stream)?,
    ];
    outcomes.extend(warp_shuffle_widths(&module, &stream, &mut rng)?);
    let mut failed = 0;
    for o in &outcomes {
        let word = if o.bad == 0 { "PASS" } else { "FAIL" };
        println!(
            "{word} {}: {} of {} values differ (seed {seed})",
            o.name, o.bad, o.checked
        );
        failed += usize::from(o.bad != 0);
    }
    // device_println!: three blocks each print one line (scripts/gpu-device-std.sh
    // checks that all three appear).
    let hello = module.kernel::<(u32,)>("hello")?;
    let cfg = cudarc::driver::LaunchConfig {
        grid_dim: (3, 1, 1),
        block_dim: (64, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: `hello` only prints.
    unsafe { hello.launch(&stream, cfg, (42u32,)) }?;
    stream.synchronize()?;
    println!("{} passed, {} failed", outcomes.len() - failed, failed);
    if failed != 0 {
        std::process::exit(1);
    }
    Ok(())
}

/// Launches `hello(13)`, whose assertion fails, and reports the launch error; the
/// context is unusable afterwards, so this runs alone.
fn panic_demo(opts: &Options) -> Result<()> {
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, opts.ptx_path("intrinsics-kernels"))?;
    let hello = module.kernel::<(u32,)>("hello")?;
    let cfg = cudarc::driver::LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: `hello` only prints, or traps.
    let launched = unsafe { hello.launch(&stream, cfg, (13u32,)) };
    let outcome = launched
        .map_err(anyhow::Error::from)
        .and_then(|()| Ok(stream.synchronize()?));
    match outcome {
        Err(e) => {
            println!("PASS panic demo: the launch failed as it must: {e}");
            Ok(())
        }
        Ok(()) => anyhow::bail!("hello(13) should have trapped"),
    }
}

fn oob_demo(opts: &Options) -> Result<()> {
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, opts.ptx_path("intrinsics-kernels"))?;
    let k = module.kernel::<(u32, SliceMut<u32>)>("shared_index")?;
    let cfg = cudarc::driver::LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (64, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut out = stream.alloc_zeros::<u32>(64)?;
    // SAFETY: one output per thread of the one block.
    unsafe { k.launch(&stream, cfg, (5u32, &mut out)) }?;
    let got = stream.clone_dtoh(&out)?;
    anyhow::ensure!(got.iter().all(|&v| v == 5), "shared_index(5): {got:?}");
    // SAFETY: as above; index 64 traps.
    let launched = unsafe { k.launch(&stream, cfg, (64u32, &mut out)) };
    let outcome = launched
        .map_err(anyhow::Error::from)
        .and_then(|()| Ok(stream.synchronize()?));
    match outcome {
        Err(e) => {
            println!("PASS oob demo: shared_index(5) read 5; shared_index(64) failed: {e}");
            Ok(())
        }
        Ok(()) => anyhow::bail!("shared_index(64) should have trapped"),
    }
}
