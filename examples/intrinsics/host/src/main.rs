//! The device-std intrinsics suite: runs each kernel of `intrinsics-kernels`
//! on random input with poisoned outputs, compares everything it wrote with a
//! CPU model, and prints one PASS/FAIL line per test. `--n` is unused (each
//! test has its own size); `--seed` repeats a run.

use anyhow::Result;
use clap::Parser;
use cudarc::driver::CudaStream;
use example_support::{rng, Options};
use host_loader::{open_device, LaunchConfig, Module, PtrMut, Slice, SliceMut};
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
    let mut want = vec![POISON32; total * ID_WORDS];
    for bz in 0..grid.2 {
        for by in 0..grid.1 {
            for bx in 0..grid.0 {
                for tz in 0..block.2 {
                    for ty in 0..block.1 {
                        for tx in 0..block.0 {
                            let tib = (tz * block.1 + ty) * block.0 + tx;
                            let bid = (bz * grid.1 + by) * grid.0 + bx;
                            let linear = (bid * bs + tib) as usize;
                            let words = [
                                tx,
                                ty,
                                tz,
                                bx,
                                by,
                                bz,
                                block.0,
                                block.1,
                                block.2,
                                grid.0,
                                grid.1,
                                grid.2,
                                tib % 32,
                                tib / 32,
                                tib,
                                0xC0FFEE,
                            ];
                            want[linear * ID_WORDS..(linear + 1) * ID_WORDS]
                                .copy_from_slice(&words);
                        }
                    }
                }
            }
        }
    }
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
    let want: Vec<u32> = (0..len)
        .map(|i| {
            let (r, c) = (i / stride, i % stride);
            if c < (grid.0 * block.0) as usize {
                ((r as u32) << 16) | c as u32
            } else {
                POISON32
            }
        })
        .collect();
    Ok(compare(name, &got, &want))
}

fn shuffle_model(vs: &[u32; 32], lane: usize, map: impl Fn(u32) -> u64) -> [u64; 4] {
    let src = (lane * 7 + 3) % 32;
    let up = if lane >= 3 { lane - 3 } else { lane };
    let down = if lane + 5 <= 31 { lane + 5 } else { lane };
    [map(vs[src]), map(vs[up]), map(vs[down]), map(vs[lane ^ 9])]
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

    let mut want = vec![0u64; total * WARP_WORDS];
    for w in 0..total / 32 {
        let vs: [u32; 32] = input[w * 32..w * 32 + 32].try_into()?;
        let same = |f: &dyn Fn(u32) -> u64, l: usize| -> u64 {
            (0..32)
                .filter(|&j| f(vs[j]) == f(vs[l]))
                .fold(0, |m, j| m | 1 << j)
        };
        for l in 0..32 {
            let o = &mut want[(w * 32 + l) * WARP_WORDS..(w * 32 + l + 1) * WARP_WORDS];
            o[0..4].copy_from_slice(&shuffle_model(&vs, l, |v| v as u64));
            o[4..8].copy_from_slice(&shuffle_model(&vs, l, |v| v as u64));
            o[8..12].copy_from_slice(&shuffle_model(&vs, l, |v| {
                (v as f32 / 3.0).to_bits() as u64
            }));
            o[12..16].copy_from_slice(&shuffle_model(&vs, l, |v| {
                ((v as u64) << 32) | (v as u64 * 7)
            }));
            o[16..20].copy_from_slice(&shuffle_model(&vs, l, |v| (-(v as i64) * 1_000_003) as u64));
            o[20..24].copy_from_slice(&shuffle_model(&vs, l, |v| {
                (v as f64 * 0.5 + 0.25).to_bits()
            }));
            o[24] = vs.iter().all(|v| v & 0xF != 0xF) as u64;
            o[25] = vs.iter().any(|v| v % 64 == 0) as u64;
            o[26] = (0..32)
                .filter(|&j| vs[j] & 1 == 1)
                .fold(0, |m, j| m | 1 << j);
            o[27] = same(&|v| (v % 4) as u64, l);
            o[28] = same(&|v| v as u64 % 3, l);
            let all_same = vs.iter().all(|&v| v == vs[0]);
            o[29] = if all_same { 0xFFFF_FFFF } else { 0xDEAD };
            o[30] = o[29];
            o[31] = vs.iter().fold(0u32, |a, &v| a.wrapping_add(v)) as u64;
            o[32] = *vs.iter().min().unwrap_or(&0) as u64;
            o[33] = *vs.iter().max().unwrap_or(&0) as u64;
            o[34] = vs.iter().fold(!0u32, |a, &v| a & v) as u64;
            o[35] = vs.iter().fold(0u32, |a, &v| a | v) as u64;
            o[36] = vs.iter().fold(0u32, |a, &v| a ^ v) as u64;
            o[37] = vs.iter().map(|&v| v as i32).min().unwrap_or(0) as u32 as u64;
            o[38] = vs.iter().map(|&v| v as i32).max().unwrap_or(0) as u32 as u64;
            o[39] = 0xFFFF_FFFF;
            o[40] = if l < 10 { 0x3FF } else { 0 };
            o[41] = l as u64;
            o[42] = ((w * 32) % threads as usize / 32) as u64;
            if l < 16 {
                o[43] = vs[..16].iter().fold(0u32, |a, &v| a.wrapping_add(v)) as u64;
                o[44] = vs[l ^ 1] as u64;
            }
        }
    }
    Ok(compare("warp shuffles/votes/match/redux", &got, &want))
}

fn atomics(module: &Module, stream: &Arc<CudaStream>, rng: &mut StdRng) -> Result<Outcome> {
    let k = module.kernel::<(Slice<u32>, PtrMut<u64>)>("atomics")?;
    let (blocks, threads) = (64u32, 256u32);
    let n = (blocks * threads) as usize;
    let vals: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let f32s = |x: f32| x.to_bits() as u64;
    let mut init = vec![0u64; ATOMIC_SLOTS];
    init[0] = 5;
    init[1] = 7;
    init[2] = (-3i32) as u32 as u64;
    init[3] = 11;
    init[4] = f32s(0.5);
    init[5] = 0.25f64.to_bits();
    init[6] = u32::MAX as u64;
    init[8] = i32::MAX as u32 as u64;
    init[9] = i32::MIN as u32 as u64;
    init[10] = u64::MAX;
    init[12] = i64::MAX as u64;
    init[13] = i64::MIN as u64;
    init[14] = f32s(f32::INFINITY);
    init[15] = f32s(f32::NEG_INFINITY);
    init[16] = f64::INFINITY.to_bits();
    init[17] = f64::NEG_INFINITY.to_bits();
    init[19] = 0xFFFF_FFFF;
    init[20] = 0x1234;
    init[23] = 100;
    init[24] = 999;
    init[31] = 0.5f64.to_bits();
    init[30] = 0f64.to_bits();
    init[33] = 0f64.to_bits();
    let vals_dev = stream.clone_htod(&vals)?;
    let mut counters = stream.clone_htod(&init)?;
    let c = cfg((blocks, 1, 1), (threads, 1, 1), 0);
    // SAFETY: `counters` holds 40 u64 slots accessed only atomically.
    unsafe { k.launch(stream, c, (&vals_dev, &mut counters)) }?;
    let got = stream.clone_dtoh(&counters)?;

    let lo = |x: u64| x as u32;
    let mut want = init.clone();
    let sum_k: u64 = (0..n as u64).sum();
    want[0] = 5 + n as u64;
    want[1] = 7 + vals.iter().map(|&v| v as u64).sum::<u64>();
    want[2] = vals
        .iter()
        .fold(-3i32, |a, &v| a.wrapping_sub((v % 100) as i32)) as u32 as u64;
    want[3] = vals.iter().fold(11i64, |a, &v| a + (v as i64 - (1 << 31))) as u64;
    want[4] = f32s(0.5 + n as f32);
    want[5] = (0.25 + vals.iter().map(|&v| v as f64).sum::<f64>()).to_bits();
    want[6] = *vals.iter().min().unwrap_or(&0) as u64;
    want[7] = *vals.iter().max().unwrap_or(&0) as u64;
    want[8] = vals.iter().map(|&v| v as i32).min().unwrap_or(0) as u32 as u64;
    want[9] = vals.iter().map(|&v| v as i32).max().unwrap_or(0) as u32 as u64;
    want[10] = vals.iter().map(|&v| v as u64 * 3 + 1).min().unwrap_or(0);
    want[11] = vals.iter().map(|&v| v as u64 * 3 + 1).max().unwrap_or(0);
    want[12] = vals.iter().map(|&v| -(v as i64)).min().unwrap_or(0) as u64;
    want[13] = vals.iter().map(|&v| -(v as i64)).max().unwrap_or(0) as u64;
    want[14] = f32s(
        vals.iter()
            .map(|&v| v as f32 / 7.0)
            .fold(f32::INFINITY, f32::min),
    );
    want[15] = f32s(
        vals.iter()
            .map(|&v| v as f32 / 7.0)
            .fold(f32::NEG_INFINITY, f32::max),
    );
    want[16] = vals
        .iter()
        .map(|&v| v as f64 / 7.0)
        .fold(f64::INFINITY, f64::min)
        .to_bits();
    want[17] = vals
        .iter()
        .map(|&v| v as f64 / 7.0)
        .fold(f64::NEG_INFINITY, f64::max)
        .to_bits();
    want[18] = vals.iter().fold(0u32, |a, &v| a | 1 << (v % 32)) as u64;
    want[19] = vals.iter().fold(!0u32, |a, &v| a & !(1 << (v % 29))) as u64;
    want[20] = vals.iter().fold(0x1234u32, |a, &v| a ^ v) as u64;
    want[21] = vals.iter().fold(0u64, |a, &v| a | 1 << (v % 61));
    want[22] = vals.iter().fold(0i64, |a, &v| a ^ ((v as i64) << 20)) as u64;
    want[23] = 100 + n as u64;
    want[26] = n as u64;
    want[27] = want[7];
    want[28] = want[18];
    want[29] = vals.iter().fold(0u32, |a, &v| a ^ v) as u64;
    want[32] = 2 * n as u64;
    want[33] = (0.5 * n as f64).to_bits();
    // Swaps: the final value is some thread's k; Σ returned + final is exact.
    let mut got_cmp = got.clone();
    let swap_ok = lo(got[24]) < n as u32 && got[25] + lo(got[24]) as u64 == 999 + sum_k;
    let fswap = f64::from_bits(got[31]);
    let fswap_ok = fswap < n as f64 && f64::from_bits(got[30]) + fswap == 0.5 + sum_k as f64;
    for (i, ok) in [(24, swap_ok), (25, swap_ok), (30, fswap_ok), (31, fswap_ok)] {
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
    let mut want = Vec::new();
    for b in vals.chunks(threads) {
        want.push(b.iter().filter(|&&v| v % 2 == 1).count() as u32);
        want.push(b.iter().all(|&v| v < 1 << 31) as u32);
        want.push(b.iter().any(|&v| v % 1000 == 0) as u32);
    }
    for i in 0..n {
        want.push(vals[i - i % threads + (threads - 1 - i % threads)]);
    }
    for i in 0..n {
        want.push(vals[i - i % 32 + (31 - i % 32)] ^ 0x5555);
    }
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
    let b = bytes as usize;
    let mut want = Vec::new();
    for _ in 0..blocks {
        want.extend([
            0,
            0,
            0,
            0,
            (b / 4) as u32,
            ((b - DYN_OFFSET_B) / 8) as u32,
            (b - DYN_OFFSET_C) as u32,
            bytes,
        ]);
        for t in 0..threads {
            let m = threads - 1 - t;
            want.extend([m as u32 * 3, m as u32, (m as u8 ^ 0xA5) as u32]);
        }
    }
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
    let sum: u32 = (0..MESSAGE_LEN as u32).map(|i| 3 * i + 1).sum();
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
}

fn main() -> Result<()> {
    let args = Args::parse();
    let opts = args.common;
    if args.panic_demo {
        return panic_demo(&opts);
    }
    let seed = opts.seed();
    let mut rng = rng(seed);
    let (ctx, stream) = open_device(0)?;
    let module = Module::from_ptx_file(&ctx, opts.ptx_path("intrinsics-kernels"))?;
    let outcomes = vec![
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
