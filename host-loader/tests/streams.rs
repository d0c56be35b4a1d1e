//! Buffers that move between streams: written on one, read on another, freed on a third,
//! through `Kernel::launch` (cudarc's event tracking per launch) and through
//! `host_loader::sequence` (the ordering done once per buffer, at registration and at the
//! end), with the `#[kernel]`-built fixture (`data/fixture.ptx`):
//! `vecadd(a: &[f32], b: &[f32], c: DisjointSlice<f32>)`.
//!
//! The `gpu_*` tests need a CUDA GPU and are `#[ignore]`d; run them with
//! `cargo test -p host-loader --test streams -- --ignored --test-threads=1 --nocapture`
//! (`scripts/gpu-graphs.sh` stages and runs them, under compute-sanitizer too). Inputs are
//! pseudo-random (`$SEED`, default the clock, printed), outputs poisoned (NaN) first,
//! results compared element by element with a CPU reference. The chains are long (tens
//! of milliseconds of GPU work) so that a missing wait shows as a wrong element: the host
//! enqueues everything without waiting, and only stream ordering keeps the reader behind
//! the writer and the free behind both.

#![allow(clippy::needless_range_loop)] // inputs, outputs and references share an index
#![allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtrMut};
use host_loader::graph::GraphError;
use host_loader::memory::DeviceBuffer;
use host_loader::{
    for_num_elems, include_ptx, open_device, sequence, EmbeddedPtx, Error, Kernel, LaunchConfig,
    Module, Slice, SliceMut,
};

static FIXTURE: EmbeddedPtx = include_ptx!("fixture", dir = "tests/data");

type VecAdd = (Slice<f32>, Slice<f32>, SliceMut<f32>);

fn seed() -> u64 {
    let s = std::env::var("SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        });
    println!("SEED={s}");
    s
}

/// Pseudo-random floats in [-1, 1).
fn randoms(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// The context, three streams (so cudarc's event tracking is on) and the fixture.
fn setup() -> (
    Arc<CudaContext>,
    [Arc<CudaStream>; 3],
    Kernel<VecAdd>,
    Module,
) {
    let (ctx, _legacy) = open_device(0).expect("open device 0");
    let streams = [(); 3].map(|()| ctx.new_stream().expect("a stream"));
    let module = Module::from_embedded(&ctx, &FIXTURE).expect("load the fixture");
    let vecadd = module.kernel::<VecAdd>("vecadd").expect("vecadd");
    assert!(ctx.is_managing_stream_synchronization());
    (ctx, streams, vecadd, module)
}

/// `x` after `steps` launches of the ping-pong chain `x[(i+1)%2] = x[i%2] + b`, as the
/// GPU computes it (f32 adds, in order).
fn chain_ref(x0: &[f32], x1: &[f32], b: &[f32], steps: usize) -> [Vec<f32>; 2] {
    let mut x = [x0.to_vec(), x1.to_vec()];
    for i in 0..steps {
        let (src, dst) = (i % 2, (i + 1) % 2);
        for k in 0..b.len() {
            x[dst][k] = x[src][k] + b[k];
        }
    }
    x
}

fn assert_same(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let bad: Vec<usize> = (0..got.len())
        .filter(|&k| got[k].to_bits() != want[k].to_bits())
        .collect();
    assert!(
        bad.is_empty(),
        "{what}: {} of {} elements differ from the CPU reference; first at {}: got {}, want {}",
        bad.len(),
        got.len(),
        bad[0],
        got[bad[0]],
        want[bad[0]]
    );
    println!(
        "PASS {what}: {} elements equal the CPU reference",
        got.len()
    );
}

/// How the chain and the reader are launched.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Path {
    /// `Kernel::launch` one by one.
    Launch,
    /// One `sequence::run` per stream.
    Sequence,
}

/// `steps` launches of the chain over `x` on `stream`.
fn chain(
    path: Path,
    stream: &CudaStream,
    k: &Kernel<VecAdd>,
    cfg: LaunchConfig,
    x: &mut [DeviceBuffer<f32>; 2],
    b: &CudaSlice<f32>,
    steps: usize,
) -> Result<(), Error> {
    let [x0, x1] = x;
    match path {
        Path::Launch => {
            for i in 0..steps {
                let (src, dst) = if i % 2 == 0 {
                    (&**x0, &mut **x1)
                } else {
                    (&**x1, &mut **x0)
                };
                // SAFETY: vecadd writes c[k] for its own k < c.len() only; all have n
                // elements.
                unsafe { k.launch(stream, cfg, (src, b, dst)) }?;
            }
            Ok(())
        }
        Path::Sequence => sequence::run(stream, |seq| {
            let (b, x) = (seq.read(b)?, [seq.write(x0)?, seq.write(x1)?]);
            for i in 0..steps {
                // SAFETY: as above.
                unsafe { seq.launch(k, cfg, (x[i % 2].read(), b, x[(i + 1) % 2])) }?;
            }
            assert_eq!(seq.launches(), steps as u64);
            Ok(())
        }),
    }
}

/// `z = src + b` on `stream`, `times` times (the same result each time).
#[allow(clippy::too_many_arguments)]
fn add_into(
    path: Path,
    stream: &CudaStream,
    k: &Kernel<VecAdd>,
    cfg: LaunchConfig,
    src: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    z: &mut CudaSlice<f32>,
    times: usize,
) -> Result<(), Error> {
    match path {
        Path::Launch => {
            for _ in 0..times {
                // SAFETY: in bounds, as above.
                unsafe { k.launch(stream, cfg, (src, b, &mut *z)) }?;
            }
            Ok(())
        }
        Path::Sequence => sequence::run(stream, |seq| {
            let (s, b, z) = (seq.read(src)?, seq.read(b)?, seq.write(z)?);
            for _ in 0..times {
                // SAFETY: in bounds, as above.
                unsafe { seq.launch(k, cfg, (s, b, z)) }?;
            }
            Ok(())
        }),
    }
}

/// Two fresh buffers of `n` floats on `stream`, every byte 0xFF (a NaN no kernel here
/// writes).
fn fresh_ff(stream: &Arc<CudaStream>, n: usize) -> Vec<DeviceBuffer<f32>> {
    (0..2)
        .map(|_| {
            let mut f = DeviceBuffer::<f32>::zeroed(stream, n).unwrap();
            {
                let (p, _rec) = f.device_ptr_mut(stream);
                // SAFETY: `p` addresses the n f32s of `f`, in the stream's current context.
                unsafe {
                    cudarc::driver::result::memset_d8_async(p, 0xFF, n * 4, stream.cu_stream())
                }
                .unwrap();
            }
            f
        })
        .collect()
}

/// Written on stream 1 (a chain of `steps` launches), read on stream 2, freed on stream 3
/// (the buffers' allocation stream), the host waiting for none of it; then the result,
/// and memory allocated next on stream 3 (from the pool, often at the freed addresses),
/// are checked.
fn move_between_streams(writer: Path, reader: Path) {
    let (_ctx, [s1, s2, s3], vecadd, _m) = setup();
    let seed = seed();
    println!("writer {writer:?}, reader {reader:?}");
    // Tens of milliseconds of GPU work, enqueued in about one.
    let (n, steps) = (1 << 22, 200);
    let cfg = for_num_elems(n as u32, 256).unwrap();
    let x0 = randoms(seed, n);
    let b = randoms(seed ^ 0x9e37, n);
    let b_d = DeviceBuffer::from_host(&s3, &b).unwrap();
    let mut x = [
        DeviceBuffer::from_host(&s3, &x0).unwrap(),
        DeviceBuffer::from_host(&s3, &vec![f32::NAN; n]).unwrap(),
    ];
    let mut z = DeviceBuffer::from_host(&s3, &vec![f32::NAN; n]).unwrap();
    s3.synchronize().unwrap();
    let addrs = [x[0].cu_deviceptr(), x[1].cu_deviceptr()];

    chain(writer, &s1, &vecadd, cfg, &mut x, &b_d, steps).unwrap();
    // The last step wrote x[steps % 2]; z = that + b, four times, on stream 2.
    add_into(reader, &s2, &vecadd, cfg, &x[steps % 2], &b_d, &mut z, 4).unwrap();
    // Freed on stream 3 at once: cudarc makes it wait for the last write (stream 1) and
    // the last read (stream 2) of each buffer, on the GPU.
    let t = std::time::Instant::now();
    drop(x);
    let fresh = fresh_ff(&s3, n);
    let took = t.elapsed();
    let running = |s: &CudaStream| {
        // SAFETY: a live stream of the current context.
        let r = unsafe { cudarc::driver::sys::cuStreamQuery(s.cu_stream()) };
        r == cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_READY
    };
    println!(
        "drop and two new allocations took {took:?} on the host; stream 1 still running then: \
         {}, stream 2: {}",
        running(&s1),
        running(&s2)
    );
    let reused = fresh
        .iter()
        .filter(|f| addrs.contains(&f.cu_deviceptr()))
        .count();
    println!("{reused} of 2 new allocations reuse the freed addresses");

    let want = chain_ref(&x0, &vec![f32::NAN; n], &b, steps);
    let want_z: Vec<f32> = (0..n).map(|k| want[steps % 2][k] + b[k]).collect();
    // Read back on stream 3, without synchronizing streams 1 and 2 first: z's events
    // order the copy after stream 2's launches.
    let got = z.to_host_vec(&s3).unwrap();
    assert_same(
        "z read on stream 2 after the chain on stream 1",
        &got,
        &want_z,
    );
    for (i, f) in fresh.iter().enumerate() {
        let got = f.to_host_vec(&s3).unwrap();
        let written = got.iter().filter(|v| v.to_bits() != u32::MAX).count();
        assert_eq!(
            written, 0,
            "new allocation {i}: {written} elements overwritten after the free"
        );
    }
    println!("PASS no element of the new allocations was written after the free");
    s1.synchronize().unwrap();
    s2.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_launches_move_buffers_between_streams() {
    move_between_streams(Path::Launch, Path::Launch);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_sequences_move_buffers_between_streams() {
    move_between_streams(Path::Sequence, Path::Sequence);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_sequence_then_launches_on_another_stream() {
    move_between_streams(Path::Sequence, Path::Launch);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_launches_then_a_sequence_on_another_stream() {
    move_between_streams(Path::Launch, Path::Sequence);
}

/// A sequence and `Kernel::launch` compute the same chain, and a sequence's launches on
/// its stream are ordered among themselves without any event (checked against the CPU
/// at an odd size, so the tail block is partial).
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_sequence_chain_matches_the_cpu() {
    let (_ctx, [s1, s2, _], vecadd, _m) = setup();
    let seed = seed();
    let n = 1024 * 37 + 5;
    let steps = 101;
    let cfg = for_num_elems(n as u32, 256).unwrap();
    let x0 = randoms(seed, n);
    let b = randoms(seed ^ 0x51, n);
    let b_d = DeviceBuffer::from_host(&s1, &b).unwrap();
    let mk = || {
        [
            DeviceBuffer::from_host(&s1, &x0).unwrap(),
            DeviceBuffer::from_host(&s1, &vec![f32::NAN; n]).unwrap(),
        ]
    };
    let (mut xs, mut xl) = (mk(), mk());
    chain(Path::Sequence, &s1, &vecadd, cfg, &mut xs, &b_d, steps).unwrap();
    chain(Path::Launch, &s2, &vecadd, cfg, &mut xl, &b_d, steps).unwrap();
    let want = chain_ref(&x0, &vec![f32::NAN; n], &b, steps);
    for k in 0..2 {
        // Read on the other stream each time.
        assert_same(
            &format!("sequence x{k}"),
            &xs[k].to_host_vec(&s2).unwrap(),
            &want[k],
        );
        assert_same(
            &format!("Kernel::launch x{k}"),
            &xl[k].to_host_vec(&s1).unwrap(),
            &want[k],
        );
    }
}

/// A sequence whose closure fails, or panics, after launching still records its
/// buffers' uses: a read on another stream waits for its launches.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_sequence_records_even_when_its_closure_fails() {
    let (_ctx, [s1, s2, _], vecadd, _m) = setup();
    let seed = seed();
    let (n, steps) = (1 << 22, 100);
    let cfg = for_num_elems(n as u32, 256).unwrap();
    let x0 = randoms(seed, n);
    let b = randoms(seed ^ 0x77, n);
    let b_d = DeviceBuffer::from_host(&s1, &b).unwrap();
    let want = chain_ref(&x0, &vec![f32::NAN; n], &b, steps);
    for panics in [false, true] {
        let mut x = [
            DeviceBuffer::from_host(&s1, &x0).unwrap(),
            DeviceBuffer::from_host(&s1, &vec![f32::NAN; n]).unwrap(),
        ];
        s1.synchronize().unwrap();
        {
            let [x0d, x1d] = &mut x;
            let run = || {
                sequence::run(&s1, |seq| {
                    let (b, x) = (seq.read(&b_d)?, [seq.write(x0d)?, seq.write(x1d)?]);
                    for i in 0..steps {
                        // SAFETY: in bounds, as above.
                        unsafe { seq.launch(&vecadd, cfg, (x[i % 2].read(), b, x[(i + 1) % 2])) }?;
                    }
                    if panics {
                        panic!("on purpose, after {steps} launches");
                    }
                    Err::<(), _>(Error::InvalidLaunch {
                        kernel: None,
                        reason: "on purpose".into(),
                    })
                })
            };
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(run));
            match (panics, out) {
                (true, Err(_)) => {}
                (false, Ok(Err(Error::InvalidLaunch { reason, .. }))) => {
                    assert_eq!(reason, "on purpose")
                }
                (p, other) => panic!("panics = {p}: unexpected {:?}", other.map(|r| r.err())),
            }
        }
        let what = if panics { "panicked" } else { "failed" };
        for k in 0..2 {
            assert_same(
                &format!("x{k} read on stream 2 after a sequence that {what}"),
                &x[k].to_host_vec(&s2).unwrap(),
                &want[k],
            );
        }
    }
}

/// What a sequence refuses: a token of another sequence, a writable buffer aliasing
/// another argument, a configuration the device cannot run; a refused launch leaves the
/// sequence usable.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_sequence_refusals() {
    let (_ctx, [s1, _, _], vecadd, _m) = setup();
    let n = 1000;
    let cfg = for_num_elems(n as u32, 256).unwrap();
    let a = DeviceBuffer::from_host(&s1, &vec![1.0f32; n]).unwrap();
    let mut c = DeviceBuffer::from_host(&s1, &vec![f32::NAN; n]).unwrap();
    let old = sequence::run(&s1, |seq| seq.read(&a)).unwrap();
    sequence::run(&s1, |seq| {
        let (a_tok, c_tok) = (seq.read(&a)?, seq.write(&mut c)?);
        // SAFETY: refused before the driver sees it.
        let e = unsafe { seq.launch(&vecadd, cfg, (old, a_tok, c_tok)) }.unwrap_err();
        assert!(
            matches!(e, Error::Graph(GraphError::ForeignToken { .. })),
            "{e}"
        );
        println!("refused: {e}");
        // SAFETY: refused before the driver sees it.
        let e = unsafe { seq.launch(&vecadd, cfg, (c_tok.read(), a_tok, c_tok)) }.unwrap_err();
        assert!(
            matches!(
                e,
                Error::Graph(GraphError::Aliased {
                    first: 0,
                    second: 2,
                    ..
                })
            ),
            "{e}"
        );
        println!("refused: {e}");
        let bad = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (4096, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: refused before the driver sees it.
        let e = unsafe { seq.launch(&vecadd, bad, (a_tok, a_tok, c_tok)) }.unwrap_err();
        assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
        println!("refused: {e}");
        assert_eq!(seq.launches(), 0);
        // SAFETY: in bounds.
        unsafe { seq.launch(&vecadd, cfg, (a_tok, a_tok, c_tok)) }?;
        assert_eq!(seq.launches(), 1);
        Ok(())
    })
    .unwrap();
    assert_same("c = a + a", &c.to_host_vec(&s1).unwrap(), &vec![2.0; n]);
}

/// Compiles (never runs): a sequence over `DeviceBuffer`s, the result of the closure
/// returned, the stream and buffers usable again afterwards.
#[allow(dead_code)]
fn api_compiles(
    k: &Kernel<VecAdd>,
    s: &Arc<CudaStream>,
    a: &DeviceBuffer<f32>,
    c: &mut DeviceBuffer<f32>,
) -> Result<u64, Error> {
    let cfg = for_num_elems(1024, 256)?;
    let launches = sequence::run(s, |seq| {
        let (a, c) = (seq.read(a)?, seq.write(c)?);
        // SAFETY: never run.
        unsafe { seq.launch(k, cfg, (a, a, c)) }?;
        Ok(seq.launches())
    })?;
    // SAFETY: never run.
    unsafe { k.launch(s, cfg, (a, a, c)) }?;
    Ok(launches)
}

#[test]
fn foreign_token_message_names_sequences() {
    let e = Error::from(GraphError::ForeignToken {
        what: "buffer",
        token_graph: 3,
        graph: 4,
    });
    assert_eq!(
        e.to_string(),
        "buffer belongs to graph or sequence #3, not to this one (#4): tokens and nodes are \
         only valid in the capture or sequence that made them"
    );
}
