//! Typed CUDA graphs (`host_loader::graph`) on a GPU, with the `#[kernel]`-built fixture
//! (`data/fixture.ptx`): `vecadd(a: &[f32], b: &[f32], c: DisjointSlice<f32>)` and
//! `scale(x: *mut f32, p: Params)`.
//!
//! The `gpu_*` tests need a CUDA GPU and are `#[ignore]`d; run them with
//! `cargo test -p host-loader --test graph -- --ignored --test-threads=1 --nocapture`
//! (`scripts/gpu-graphs.sh` stages and runs them, under compute-sanitizer too). Inputs
//! are pseudo-random (`$SEED`, default the clock, printed), outputs poisoned (NaN)
//! first, results compared element by element with a CPU reference.

#![allow(clippy::needless_range_loop)] // inputs, outputs and references share an index

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use host_loader::graph::{self, GraphError, KernelNode};
use host_loader::memory::DeviceBuffer;
use host_loader::{
    for_num_elems, include_ptx, open_device, EmbeddedPtx, Error, Kernel, Module, PtrMut, Slice,
    SliceMut, Struct,
};
use host_loader_fixture_kernels::Params;

static FIXTURE: EmbeddedPtx = include_ptx!("fixture", dir = "tests/data");

type VecAdd = (Slice<f32>, Slice<f32>, SliceMut<f32>);
type Scale = (PtrMut<f32>, Struct<Params>);

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

/// Context, a capturable stream (the legacy default one is not), the fixture kernels.
fn setup() -> (
    Arc<CudaContext>,
    Arc<CudaStream>,
    Kernel<VecAdd>,
    Kernel<Scale>,
    Module,
) {
    let (ctx, _legacy) = open_device(0).expect("open device 0");
    let stream = ctx.new_stream().expect("a stream");
    let module = Module::from_embedded(&ctx, &FIXTURE).expect("load the fixture");
    let vecadd = module.kernel::<VecAdd>("vecadd").expect("vecadd");
    let scale = module.kernel::<Scale>("scale").expect("scale");
    (ctx, stream, vecadd, scale, module)
}

fn poisoned(stream: &Arc<CudaStream>, n: usize) -> CudaSlice<f32> {
    stream.clone_htod(&vec![f32::NAN; n]).unwrap()
}

/// `x` after `steps` launches of the ping-pong chain `x[(i+1)%2] = x[i%2] + b`, as the
/// GPU computes it (f32 adds, in order): returns both buffers.
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

/// Captures `steps` launches of the chain over `x` with `b`; returns the graph's first
/// and last nodes and the tokens.
#[allow(clippy::type_complexity)]
fn capture_chain<'a>(
    stream: &CudaStream,
    vecadd: &Kernel<VecAdd>,
    x: &'a mut [CudaSlice<f32>; 2],
    b: &'a CudaSlice<f32>,
    steps: usize,
) -> Result<
    (
        graph::Graph<'a>,
        (
            Vec<KernelNode<VecAdd>>,
            [graph::BufMut<f32>; 2],
            graph::Buf<f32>,
        ),
    ),
    Error,
> {
    let n = b.len() as u32;
    let cfg = for_num_elems(n, 256)?;
    let [x0, x1] = x;
    graph::capture(stream, |r| {
        let (b, x) = (r.read(b)?, [r.write(x0)?, r.write(x1)?]);
        let mut nodes = Vec::new();
        for i in 0..steps {
            // SAFETY: vecadd reads a[k], b[k] and writes c[k] for k < c.len() only; all
            // three have n elements.
            let node = unsafe { r.launch(vecadd, cfg, (x[i % 2].read(), b, x[(i + 1) % 2])) }?;
            nodes.push(node);
        }
        Ok((nodes, x, b))
    })
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_chain_replays_match_the_cpu() {
    let (_ctx, stream, vecadd, _, _m) = setup();
    let seed = seed();
    let n = 1024 * 37 + 5;
    let (steps, replays) = (64, 5);
    let x0 = randoms(seed, n);
    let b = randoms(seed ^ 0x9e37, n);
    let mut x = [stream.clone_htod(&x0).unwrap(), poisoned(&stream, n)];
    let b_d = stream.clone_htod(&b).unwrap();
    let (g, (nodes, xt, _)) = capture_chain(&stream, &vecadd, &mut x, &b_d, steps).unwrap();
    assert_eq!(g.kernel_node_count(), steps);
    assert_eq!(g.node_count(), steps);
    assert_eq!(nodes.len(), steps);
    let mut exec = g.instantiate().unwrap();
    // Nothing ran yet: capture records, it does not execute.
    assert!(stream
        .clone_dtoh(exec.slice(xt[1].read()).unwrap())
        .unwrap()
        .iter()
        .all(|v| v.is_nan()));
    exec.upload(&stream).unwrap();
    let mut want = [x0.clone(), vec![f32::NAN; n]];
    for k in 1..=replays {
        exec.launch(&stream).unwrap();
        want = chain_ref(&want[0], &want[1], &b, steps);
        let got0 = stream
            .clone_dtoh(exec.slice(xt[0].read()).unwrap())
            .unwrap();
        let got1 = stream
            .clone_dtoh(exec.slice(xt[1].read()).unwrap())
            .unwrap();
        assert_same(&format!("chain x0 after replay {k}"), &got0, &want[0]);
        assert_same(&format!("chain x1 after replay {k}"), &got1, &want[1]);
    }
    // The host writes new inputs between replays through the executable graph.
    let fresh = randoms(seed ^ 0x51, n);
    stream
        .memcpy_htod(&fresh, exec.slice_mut(xt[0]).unwrap())
        .unwrap();
    exec.launch(&stream).unwrap();
    let want = chain_ref(&fresh, &want[1], &b, steps);
    let got = stream
        .clone_dtoh(exec.slice(xt[0].read()).unwrap())
        .unwrap();
    assert_same("chain x0 after new inputs", &got, &want[0]);
    drop(exec);
    // The borrow ends with the graph: the buffers are the caller's again.
    let got = stream.clone_dtoh(&x[0]).unwrap();
    assert_same("chain x0 after the graph is gone", &got, &want[0]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_set_kernel_args_updates_one_node() {
    let (_ctx, stream, vecadd, scale, _m) = setup();
    let seed = seed();
    let n = 4096 + 17;
    let a = randoms(seed, n);
    let b = randoms(seed ^ 1, n);
    let a2 = randoms(seed ^ 2, n);
    let (a_d, b_d, a2_d) = (
        stream.clone_htod(&a).unwrap(),
        stream.clone_htod(&b).unwrap(),
        stream.clone_htod(&a2).unwrap(),
    );
    let mut c = poisoned(&stream, n);
    let mut y = stream.clone_htod(&a).unwrap();
    let cfg = for_num_elems(n as u32, 128).unwrap();
    let p = Params {
        n: (n - 3) as u32,
        scale: 2.0,
        off: 3,
    };
    // c = a + b, then y[3..] *= 2: two kernels of different signatures.
    let (g, (add, sc, (a_t, b_t, c_t, y_t))) = graph::capture(&stream, |r| {
        let (a_t, b_t, c_t, y_t) = (
            r.read(&a_d)?,
            r.read(&b_d)?,
            r.write(&mut c)?,
            r.write(&mut y)?,
        );
        // SAFETY: vecadd stays within its n-element buffers; scale touches y[3..n].
        let add = unsafe { r.launch(&vecadd, cfg, (a_t, b_t, c_t)) }?;
        let sc = unsafe { r.launch(&scale, cfg, (y_t, p)) }?;
        Ok((add, sc, (a_t, b_t, c_t, y_t)))
    })
    .unwrap();
    let mut exec = g.instantiate().unwrap();
    exec.launch(&stream).unwrap();
    let want_c: Vec<f32> = (0..n).map(|k| a[k] + b[k]).collect();
    let mut want_y = a.clone();
    for v in &mut want_y[3..] {
        *v *= 2.0;
    }
    assert_same(
        "captured c = a + b",
        &stream.clone_dtoh(exec.slice(c_t.read()).unwrap()).unwrap(),
        &want_c,
    );
    assert_same(
        "captured y[3..] *= 2",
        &stream.clone_dtoh(exec.slice(y_t.read()).unwrap()).unwrap(),
        &want_y,
    );

    // One node gets a buffer registered after capture and a new configuration; the
    // other a new struct argument.
    let a2_t = exec.read(&a2_d).unwrap();
    let cfg2 = for_num_elems(n as u32, 64).unwrap();
    // SAFETY: as at capture; a2 has n elements.
    unsafe { exec.set_kernel_args(add, cfg2, (a2_t, b_t, c_t)) }.unwrap();
    let p2 = Params {
        n: 100,
        scale: -0.5,
        off: 7,
    };
    // SAFETY: scale touches y[7..107].
    unsafe { exec.set_kernel_args(sc, cfg, (y_t, p2)) }.unwrap();
    stream
        .memcpy_htod(&vec![f32::NAN; n], exec.slice_mut(c_t).unwrap())
        .unwrap();
    exec.launch(&stream).unwrap();
    let want_c2: Vec<f32> = (0..n).map(|k| a2[k] + b[k]).collect();
    for v in &mut want_y[7..107] {
        *v *= -0.5;
    }
    assert_same(
        "updated c = a2 + b",
        &stream.clone_dtoh(exec.slice(c_t.read()).unwrap()).unwrap(),
        &want_c2,
    );
    assert_same(
        "updated y[7..107] *= -0.5",
        &stream.clone_dtoh(exec.slice(y_t.read()).unwrap()).unwrap(),
        &want_y,
    );

    // Refused before the driver: aliasing, a configuration the device refuses, a node of
    // another graph.
    // SAFETY (each): refused before reaching the driver.
    let e = unsafe { exec.set_kernel_args(add, cfg, (c_t.read(), b_t, c_t)) }.unwrap_err();
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
    println!("refused as expected: {e}");
    let mut bad = cfg;
    bad.block_dim = (2048, 1, 1);
    let e = unsafe { exec.set_kernel_args(add, bad, (a_t, b_t, c_t)) }.unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
    println!("refused as expected: {e}");
    let mut other_c = poisoned(&stream, n);
    let (g2, other) = graph::capture(&stream, |r| {
        let (a_t, c_t) = (r.read(&a_d)?, r.write(&mut other_c)?);
        // SAFETY: as above.
        unsafe { r.launch(&vecadd, cfg, (a_t, a_t, c_t)) }
    })
    .unwrap();
    let e = unsafe { exec.set_kernel_args(other, cfg, (a_t, b_t, c_t)) }.unwrap_err();
    assert!(
        matches!(
            e,
            Error::Graph(GraphError::ForeignToken {
                what: "kernel node",
                ..
            })
        ),
        "{e}"
    );
    println!("refused as expected: {e}");
    drop(g2);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_whole_graph_update() {
    let (_ctx, stream, vecadd, _, _m) = setup();
    let seed = seed();
    let (n, steps) = (2048 + 9, 10);
    let x0 = randoms(seed, n);
    let y0 = randoms(seed ^ 3, n);
    let b = randoms(seed ^ 4, n);
    let b_d = stream.clone_htod(&b).unwrap();
    let mut x = [stream.clone_htod(&x0).unwrap(), poisoned(&stream, n)];
    let mut y = [stream.clone_htod(&y0).unwrap(), poisoned(&stream, n)];
    let (g, _) = capture_chain(&stream, &vecadd, &mut x, &b_d, steps).unwrap();
    let mut exec = g.instantiate().unwrap();
    exec.launch(&stream).unwrap();
    // Same shape, other buffers: cuGraphExecUpdate, no new instantiation.
    let (g2, (_, yt, _)) = capture_chain(&stream, &vecadd, &mut y, &b_d, steps).unwrap();
    let mut exec = exec.update(g2).unwrap();
    exec.launch(&stream).unwrap();
    let want = chain_ref(&y0, &vec![f32::NAN; n], &b, steps);
    assert_same(
        "updated graph on y",
        &stream
            .clone_dtoh(exec.slice(yt[0].read()).unwrap())
            .unwrap(),
        &want[0],
    );
    // Another shape is refused with the driver's reason.
    let mut z = [poisoned(&stream, n), poisoned(&stream, n)];
    let (g3, _) = capture_chain(&stream, &vecadd, &mut z, &b_d, steps + 1).unwrap();
    let e = exec.update(g3).unwrap_err();
    assert!(
        matches!(e, Error::Graph(GraphError::UpdateRefused { .. })),
        "{e}"
    );
    println!("refused as expected: {e}");
    let got = stream.clone_dtoh(&x[0]).unwrap();
    assert_same(
        "x after its graph was updated away",
        &got,
        &chain_ref(&x0, &vec![f32::NAN; n], &b, steps)[0],
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_capture_errors_are_typed() {
    let (ctx, stream, vecadd, _, module) = setup();
    let n = 1024;
    let a = stream.clone_htod(&vec![1.0f32; n]).unwrap();
    let mut c = poisoned(&stream, n);
    let cfg = for_num_elems(n as u32, 256).unwrap();

    // The legacy default stream.
    let legacy = ctx.default_stream();
    let e = graph::capture(&legacy, |_| Ok(())).unwrap_err();
    assert!(matches!(e, Error::Graph(GraphError::LegacyStream)), "{e}");
    println!("refused as expected: {e}");

    // A synchronize inside the capture: the driver refuses it and invalidates the capture.
    let e = graph::capture(&stream, |_| {
        let refused = stream.synchronize();
        println!("  stream.synchronize() during capture: {refused:?}");
        Ok(())
    })
    .unwrap_err();
    assert!(
        matches!(e, Error::Graph(GraphError::CaptureFailed { .. })),
        "{e}"
    );
    println!("refused as expected: {e}");

    // cudarc's own tracked copy on the capturing stream: its event wait on an event
    // recorded outside the capture breaks the capture, or, should the driver accept it,
    // the copy is a node the recorder did not make. Either way the graph is refused.
    let host = vec![2.0f32; n];
    let mut d = poisoned(&stream, n);
    let e = graph::capture(&stream, |_| {
        let r = stream.memcpy_htod(&host, &mut d);
        println!("  cudarc memcpy_htod (event tracking on) during capture: {r:?}");
        Ok(())
    })
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Graph(GraphError::CaptureFailed { .. } | GraphError::ForeignNodes { .. })
        ),
        "{e}"
    );
    println!("refused as expected: {e}");
    let _ = ctx.check_err();

    // A plain Kernel::launch of a kernel without buffers is captured, but not by the
    // recorder: the graph is refused.
    let empty = module.kernel::<()>("empty").unwrap();
    let e = graph::capture(&stream, |_| {
        // SAFETY: `empty` does nothing.
        unsafe { empty.launch(&stream, cfg, ()) }
    })
    .unwrap_err();
    assert!(
        matches!(&e, Error::Graph(GraphError::ForeignNodes { kinds }) if kinds == &["kernel"]),
        "{e}"
    );
    println!("refused as expected: {e}");

    // Captures do not nest.
    let e = graph::capture(&stream, |_| graph::capture(&stream, |_| Ok(())).map(drop)).unwrap_err();
    assert!(
        matches!(e, Error::Graph(GraphError::AlreadyCapturing)),
        "{e}"
    );
    println!("refused as expected: {e}");

    // A panic inside the closure ends the capture.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = graph::capture(&stream, |_| -> Result<(), Error> {
            panic!("inside capture")
        });
    }));
    assert!(caught.is_err());
    assert_eq!(
        stream.capture_status().unwrap(),
        cudarc::driver::sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
    );

    // After all that the stream, the context and the buffers still work.
    let _ = ctx.check_err();
    // SAFETY: vecadd stays within its buffers.
    unsafe { vecadd.launch(&stream, cfg, (&a, &a, &mut c)) }.unwrap();
    assert_same(
        "a launch after the refused captures",
        &stream.clone_dtoh(&c).unwrap(),
        &vec![2.0; n],
    );
    let (g, ()) = graph::capture(&stream, |r| {
        let (a, c) = (r.read(&a)?, r.write(&mut c)?);
        r.memset_zeros(c)?;
        // SAFETY: as above.
        unsafe { r.launch(&vecadd, cfg, (a, a, c)) }?;
        Ok(())
    })
    .unwrap();
    assert_eq!(g.node_count(), 2);
    let mut exec = g.instantiate().unwrap();
    exec.launch(&stream).unwrap();
    drop(exec);
    assert_same(
        "a graph after the refused captures",
        &stream.clone_dtoh(&c).unwrap(),
        &vec![2.0; n],
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_copy_and_memset_nodes() {
    let (_ctx, stream, vecadd, _, _m) = setup();
    let seed = seed();
    let n = 3000;
    let a = randoms(seed, n);
    let a_d = stream.clone_htod(&a).unwrap();
    let (mut c, mut d, mut z) = (
        poisoned(&stream, n),
        poisoned(&stream, n),
        poisoned(&stream, n),
    );
    let short = stream.alloc_zeros::<f32>(n - 1).unwrap();
    let cfg = for_num_elems(n as u32, 256).unwrap();
    let (g, (c_t, d_t, z_t)) = graph::capture(&stream, |r| {
        let (a_t, c_t, d_t, z_t) = (
            r.read(&a_d)?,
            r.write(&mut c)?,
            r.write(&mut d)?,
            r.write(&mut z)?,
        );
        let s_t = r.read(&short)?;
        let e = r.copy(s_t, d_t).unwrap_err();
        assert!(matches!(e, Error::Graph(GraphError::BadCopy { .. })), "{e}");
        r.memset_zeros(z_t)?;
        // SAFETY: vecadd stays within its n-element buffers.
        unsafe { r.launch(&vecadd, cfg, (a_t, a_t, c_t)) }?;
        r.copy(c_t.read(), d_t)?;
        Ok((c_t, d_t, z_t))
    })
    .unwrap();
    assert_eq!(g.node_count(), 3);
    let mut exec = g.instantiate().unwrap();
    exec.launch(&stream).unwrap();
    let want: Vec<f32> = a.iter().map(|x| x + x).collect();
    assert_same(
        "kernel node c = a + a",
        &stream.clone_dtoh(exec.slice(c_t.read()).unwrap()).unwrap(),
        &want,
    );
    assert_same(
        "memcpy node d = c",
        &stream.clone_dtoh(exec.slice(d_t.read()).unwrap()).unwrap(),
        &want,
    );
    assert_same(
        "memset node z = 0",
        &stream.clone_dtoh(exec.slice(z_t.read()).unwrap()).unwrap(),
        &vec![0.0; n],
    );
}

/// A `DeviceBuffer` dropped right after the graph that uses it was launched on another
/// stream is freed only after that launch: memory allocated next on the buffer's stream
/// (the same address, from the pool) and filled there is not overwritten by the graph.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_frees_after_a_graph_are_stream_ordered() {
    let (ctx, alloc_stream, vecadd, _, _m) = setup();
    let launch_stream = ctx.new_stream().unwrap();
    let seed = seed();
    // Long enough that the graph is still running when the host drops the buffers:
    // 400 launches over 4 Mi elements, tens of milliseconds.
    let (n, steps) = (1 << 22, 400);
    let b = randoms(seed, n);
    let b_d = DeviceBuffer::from_host(&alloc_stream, &b).unwrap();
    let mut x = DeviceBuffer::from_host(&alloc_stream, &randoms(seed ^ 5, n)).unwrap();
    let mut y = DeviceBuffer::from_host(&alloc_stream, &vec![f32::NAN; n]).unwrap();
    alloc_stream.synchronize().unwrap();
    let (x_addr, y_addr) = (x.cu_deviceptr(), y.cu_deviceptr());
    let cfg = for_num_elems(n as u32, 256).unwrap();
    let (g, ()) = graph::capture(&alloc_stream, |r| {
        let (b, xs) = (r.read(&b_d)?, [r.write(&mut x)?, r.write(&mut y)?]);
        for i in 0..steps {
            // SAFETY: vecadd stays within its n-element buffers.
            unsafe { r.launch(&vecadd, cfg, (xs[i % 2].read(), b, xs[(i + 1) % 2])) }?;
        }
        Ok(())
    })
    .unwrap();
    let mut exec = g.instantiate().unwrap();
    exec.launch(&launch_stream).unwrap();
    let t = std::time::Instant::now();
    drop(exec);
    drop(x);
    drop(y);
    // The next allocations of this size on the allocation stream, filled with 0xFF bytes
    // there (NaN), which the graph never writes.
    let mut fresh = Vec::new();
    for _ in 0..2 {
        let mut f = DeviceBuffer::<f32>::zeroed(&alloc_stream, n).unwrap();
        {
            let (p, _rec) = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut *f, &alloc_stream);
            // SAFETY: `p` addresses the n f32s of `f`, in the stream's current context.
            unsafe {
                cudarc::driver::result::memset_d8_async(p, 0xFF, n * 4, alloc_stream.cu_stream())
            }
            .unwrap();
        }
        fresh.push(f);
    }
    let dropped_in = t.elapsed();
    let running = launch_stream.context().bind_to_thread().is_ok()
        && unsafe { cudarc::driver::sys::cuStreamQuery(launch_stream.cu_stream()) }
            == cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_READY;
    println!(
        "drops and two new allocations took {dropped_in:?} on the host; graph still running \
         then: {running}"
    );
    let reused = fresh
        .iter()
        .map(|f| f.cu_deviceptr())
        .filter(|p| *p == x_addr || *p == y_addr)
        .count();
    println!("{reused} of 2 new allocations reuse the freed addresses");
    launch_stream.synchronize().unwrap();
    alloc_stream.synchronize().unwrap();
    for (i, f) in fresh.iter().enumerate() {
        let got = f.to_host_vec(&alloc_stream).unwrap();
        let written = got.iter().filter(|v| v.to_bits() != u32::MAX).count();
        assert_eq!(
            written, 0,
            "new allocation {i}: {written} elements overwritten by the graph"
        );
    }
    println!("PASS no element of the new allocations was written by the graph");
    let _ = b_d.cu_deviceptr();
}

/// Compiles (never runs): the API as the module docs show it, for a `DeviceBuffer` too.
#[allow(dead_code)]
fn api_compiles(
    k: &Kernel<VecAdd>,
    s: &CudaStream,
    a: &DeviceBuffer<f32>,
    c: &mut DeviceBuffer<f32>,
) -> Result<(), Error> {
    let cfg = for_num_elems(1024, 256)?;
    let (graph, node) = graph::capture(s, |r| {
        let (a, c) = (r.read(a)?, r.write(c)?);
        // SAFETY: never run.
        unsafe { r.launch(k, cfg, (a, a, c)) }
    })?;
    let mut exec = graph.instantiate()?;
    exec.launch(s)?;
    let _ = node.index();
    let _ = a.device_ptr(s);
    Ok(())
}

#[test]
fn graph_errors_read_well_without_a_gpu() {
    let e = Error::from(GraphError::AlreadyCapturing);
    assert_eq!(
        e.to_string(),
        "the stream is already being captured (cuStreamIsCapturing): captures do not nest"
    );
    let e = Error::from(GraphError::BadCopy {
        src: 3,
        dst: 4,
        reason: "the lengths must be equal",
    });
    assert_eq!(
        e.to_string(),
        "copy from a buffer of 3 elements to one of 4: the lengths must be equal"
    );
}

/// `#[kernel(slice_align = 16)]` (`vecadd_aligned`): a non-empty slice that starts off a
/// 16-byte boundary is refused on every launch path (`Kernel::launch`, a captured node,
/// `set_kernel_args`, a sequence) before the driver sees it, leaving the output poisoned;
/// the same buffer through the undeclared `vecadd` computes the right sums, and aligned
/// launches of `vecadd_aligned` still do.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_slice_align_refuses_misaligned_buffers() {
    let (_ctx, stream, vecadd, _, module) = setup();
    let aligned = module.kernel::<VecAdd>("vecadd_aligned").unwrap();
    assert_eq!(aligned.slice_align(), Some(16));
    assert_eq!(vecadd.slice_align(), None);
    let seed = seed();
    let n = 4096 + 5;
    let (a, b) = (randoms(seed, n), randoms(seed ^ 1, n));
    let want: Vec<f32> = (0..n).map(|k| a[k] + b[k]).collect();
    let (a_d, b_d) = (
        stream.clone_htod(&a).unwrap(),
        stream.clone_htod(&b).unwrap(),
    );
    // `m`: n floats starting 4 bytes into a 256-byte-aligned allocation, holding values
    // of their own (a launch that wrongly ran on it would not give `want`). Never
    // dropped (a panic included): cudarc would free its interior address.
    let mv = randoms(seed ^ 2, n);
    let backing = stream.alloc_zeros::<f32>(n + 1).unwrap();
    let (base, _guard) = backing.device_ptr(&stream);
    drop(_guard);
    // SAFETY: `backing` lives until `m` is leaked below and has room for n floats at
    // byte 4; `m` is written before it is read.
    let mut m =
        std::mem::ManuallyDrop::new(unsafe { stream.upgrade_device_ptr::<f32>(base + 4, n) });
    stream.memcpy_htod(&mv, &mut *m).unwrap();
    let mut c = poisoned(&stream, n);
    let cfg = for_num_elems(n as u32, 256).unwrap();
    let refused = |what: &str, e: Error, param: &str| {
        let s = e.to_string();
        assert!(matches!(e, Error::InvalidLaunch { .. }), "{what}: {s}");
        assert!(s.contains("`vecadd_aligned`"), "{what}: {s}");
        assert!(s.contains(param), "{what}: {s}");
        assert!(s.contains(&format!("{:#x}", base + 4)), "{what}: {s}");
        println!("refused as expected ({what}): {s}");
    };

    // Kernel::launch, the buffer and a view of an aligned one.
    // SAFETY (each): refused before the driver sees it.
    let e = unsafe { aligned.launch(&stream, cfg, (&*m, &b_d, &mut c)) }.unwrap_err();
    refused("Kernel::launch", e, "parameter 0");
    let view = a_d.slice(1..);
    let e = unsafe { aligned.launch(&stream, cfg, (&b_d, &view, &mut c)) }.unwrap_err();
    let s = e.to_string();
    assert!(
        s.contains("parameter 1") && matches!(e, Error::InvalidLaunch { .. }),
        "{s}"
    );
    println!("refused as expected (a view 4 bytes in): {s}");

    // A captured node: the capture fails.
    let e = graph::capture(&stream, |r| {
        let (m_t, b_t, c_t) = (r.read(&*m)?, r.read(&b_d)?, r.write(&mut c)?);
        // SAFETY: refused before the driver sees it.
        unsafe { r.launch(&aligned, cfg, (b_t, m_t, c_t)) }
    })
    .unwrap_err();
    refused("graph capture", e, "parameter 1");
    assert!(
        stream.clone_dtoh(&c).unwrap().iter().all(|v| v.is_nan()),
        "a refused Kernel::launch wrote the output"
    );

    // set_kernel_args on an instantiated graph: refused, the node keeps its arguments.
    let (g, (node, b_t, c_t)) = graph::capture(&stream, |r| {
        let (a_t, b_t, c_t) = (r.read(&a_d)?, r.read(&b_d)?, r.write(&mut c)?);
        // SAFETY: all three have n elements, 256-byte aligned.
        let node = unsafe { r.launch(&aligned, cfg, (a_t, b_t, c_t)) }?;
        Ok((node, b_t, c_t))
    })
    .unwrap();
    let mut exec = g.instantiate().unwrap();
    let m_t = exec.read(&*m).unwrap();
    // SAFETY: refused before the driver sees it.
    let e = unsafe { exec.set_kernel_args(node, cfg, (m_t, b_t, c_t)) }.unwrap_err();
    refused("set_kernel_args", e, "parameter 0");
    exec.launch(&stream).unwrap();
    assert_same(
        "graph of vecadd_aligned after a refused update",
        &stream.clone_dtoh(exec.slice(c_t.read()).unwrap()).unwrap(),
        &want,
    );
    drop(exec);

    // A sequence: the launch into `c` is refused (`c` stays poisoned), the sequence
    // stays usable (a launch into `c2`).
    stream.memcpy_htod(&vec![f32::NAN; n], &mut c).unwrap();
    let mut c2 = poisoned(&stream, n);
    host_loader::sequence::run(&stream, |seq| {
        let (m_t, a_t, b_t, c_t, c2_t) = (
            seq.read(&*m)?,
            seq.read(&a_d)?,
            seq.read(&b_d)?,
            seq.write(&mut c)?,
            seq.write(&mut c2)?,
        );
        // SAFETY: refused before the driver sees it.
        let e = unsafe { seq.launch(&aligned, cfg, (a_t, m_t, c_t)) }.unwrap_err();
        refused("sequence", e, "parameter 1");
        assert_eq!(seq.launches(), 0);
        // SAFETY: all three have n elements, 256-byte aligned.
        unsafe { seq.launch(&aligned, cfg, (a_t, b_t, c2_t)) }?;
        assert_eq!(seq.launches(), 1);
        Ok(())
    })
    .unwrap();
    assert!(
        stream.clone_dtoh(&c).unwrap().iter().all(|v| v.is_nan()),
        "a refused sequence launch wrote the output"
    );
    assert_same(
        "sequence of vecadd_aligned",
        &stream.clone_dtoh(&c2).unwrap(),
        &want,
    );

    // The misaligned buffer is valid memory: the undeclared kernel reads it.
    // SAFETY: all three have n elements.
    unsafe { vecadd.launch(&stream, cfg, (&*m, &b_d, &mut c)) }.unwrap();
    let want_m: Vec<f32> = (0..n).map(|k| mv[k] + b[k]).collect();
    assert_same(
        "vecadd over the misaligned buffer",
        &stream.clone_dtoh(&c).unwrap(),
        &want_m,
    );
    stream.synchronize().unwrap();
    let _ = std::mem::ManuallyDrop::into_inner(m).leak();
    drop(backing);
}
