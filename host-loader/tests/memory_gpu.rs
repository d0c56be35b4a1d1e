//! The memory chapter on a GPU. Every test here is `#[ignore]`d: run them on a machine
//! with a CUDA GPU, one at a time (the drop timings must not share the GPU):
//!
//! ```sh
//! cargo xtask build-ptx -p memory_tour-kernels
//! cargo test -p host-loader --test memory_gpu -- --ignored --test-threads=1 --nocapture
//! ```
//!
//! The kernels are `examples/memory_tour/kernels`, loaded from `$MEMORY_TOUR_PTX` or
//! `target/ptx/memory_tour-kernels.ptx`. Inputs are seeded pseudo-random (`$SEED`, default
//! 1); outputs are poisoned before each run and compared with a CPU reference.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytemuck::{Pod, Zeroable};
use cudarc::driver::{CudaContext, CudaStream};
use host_loader::memory::{
    copy_device, copy_from_host, copy_from_pinned_async, copy_to_host, pageable_memory_access,
    pool_usage, set_release_threshold, Advice, DeviceBuffer, HostPtr, HostRef, Location,
    ManagedBuffer, MemoryCaps, MemoryError, PinnedBuffer, PinnedFlags, Pipeline,
};
use host_loader::{for_num_elems, open_device, Kernel, Module, Slice, SliceMut};

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
struct AffineConfig {
    scale: f32,
    offset: f32,
}

// SAFETY: opaque, the default: the ABI record compares its size only.
unsafe impl host_loader::HasValueClass for AffineConfig {}

/// A struct element that is not a primitive (cudarc's own API needs `DeviceRepr`):
/// plain data through `KernelStruct`, as a device crate's struct is.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, device_std::KernelStruct)]
struct Particle {
    pos: [f32; 3],
    id: u32,
}

/// `iterate(x: &[u32], y: DisjointSlice<u32>, iters: u32, a: u32, b: u32)`.
type Iterate = Kernel<(Slice<u32>, SliceMut<u32>, u32, u32, u32)>;

struct Tour {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    spin_fill: Kernel<(u64, f32, SliceMut<f32>)>,
    iterate: Iterate,
    add_one: Kernel<(SliceMut<f32>,)>,
    hmm_affine: Kernel<(HostPtr<AffineConfig>, Slice<f32>, SliceMut<f32>)>,
}

fn tour() -> Tour {
    let (ctx, stream) = open_device(0).expect("a CUDA device");
    let path = std::env::var("MEMORY_TOUR_PTX").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../target/ptx/memory_tour-kernels.ptx"
        )
        .into()
    });
    let module = Module::from_ptx_file(&ctx, &path).expect("memory_tour-kernels PTX");
    Tour {
        spin_fill: module.kernel("spin_fill").unwrap(),
        iterate: module.kernel("iterate").unwrap(),
        add_one: module.kernel("add_one").unwrap(),
        hmm_affine: module.kernel("hmm_affine").unwrap(),
        ctx,
        stream,
    }
}

/// xorshift64*, seeded from `$SEED` (default 1) and a per-test salt.
struct Rng(u64);
impl Rng {
    fn new(salt: u64) -> Self {
        let seed: u64 = std::env::var("SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        Rng((seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn f32s(&mut self, n: usize) -> Vec<f32> {
        (0..n)
            .map(|_| (self.next() >> 40) as f32 / (1u64 << 24) as f32 * 2000.0 - 1000.0)
            .collect()
    }
    fn u32s(&mut self, n: usize) -> Vec<u32> {
        (0..n).map(|_| (self.next() >> 32) as u32).collect()
    }
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_capabilities() {
    let t = tour();
    let caps = MemoryCaps::query(&t.ctx).unwrap();
    println!("{caps}");
    assert!(caps.total_bytes > 0 && caps.free_bytes <= caps.total_bytes);
    assert!(caps.async_engines >= 1);
    assert_eq!(caps.memory_pools, t.ctx.has_async_alloc());
    assert_eq!(
        caps.pageable_memory_access,
        pageable_memory_access(&t.ctx).unwrap()
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_device_buffer_round_trips() {
    let t = tour();
    let s = &t.stream;
    let mut rng = Rng::new(1);
    let n = (1 << 20) + 17;
    let data = rng.f32s(n);

    // from_host -> to_host_vec, and copy_to_host into a poisoned slice.
    let mut dev = DeviceBuffer::from_host(s, &data).unwrap();
    assert!(same_bits(&dev.to_host_vec(s).unwrap(), &data));
    let mut back = vec![f32::NAN; n];
    dev.copy_to_host(s, &mut back).unwrap();
    assert!(same_bits(&back, &data));

    // zeroed really is zero, even after the pool hands out used memory.
    drop(DeviceBuffer::from_host(s, &vec![f32::NAN; n]).unwrap());
    let z = DeviceBuffer::<f32>::zeroed(s, n).unwrap();
    assert!(z.to_host_vec(s).unwrap().iter().all(|&x| x.to_bits() == 0));

    // Writable view: overwrite the middle from the host, read it all back.
    let patch = rng.f32s(1000);
    copy_from_host(s, &mut dev.view_mut(5000..6000).unwrap(), &patch).unwrap();
    let mut want = data.clone();
    want[5000..6000].copy_from_slice(&patch);
    assert!(same_bits(&dev.to_host_vec(s).unwrap(), &want));

    // Read-only view to host, and device-to-device from a view.
    let mut part = vec![f32::NAN; 777];
    copy_to_host(s, &dev.view(n - 777..).unwrap(), &mut part).unwrap();
    assert!(same_bits(&part, &want[n - 777..]));
    let mut copy = DeviceBuffer::<f32>::zeroed(s, 4096).unwrap();
    copy_device(s, &mut copy, &dev.view(4000..8096).unwrap()).unwrap();
    assert!(same_bits(&copy.to_host_vec(s).unwrap(), &want[4000..8096]));
    let mut whole = DeviceBuffer::<f32>::zeroed(s, n).unwrap();
    whole.copy_from_device(s, &dev).unwrap();
    assert!(same_bits(&whole.to_host_vec(s).unwrap(), &want));

    // A struct element and an empty buffer.
    let ps: Vec<Particle> = (0..1000u32)
        .map(|i| Particle {
            pos: [i as f32, -(i as f32), 0.5],
            id: i ^ 0xABCD,
        })
        .collect();
    let pd = DeviceBuffer::from_host(s, &ps).unwrap();
    assert_eq!(pd.to_host_vec(s).unwrap(), ps);
    let empty = DeviceBuffer::<f32>::from_host(s, &[]).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.to_host_vec(s).unwrap(), Vec::<f32>::new());
    t.ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_cu_deviceptr_is_the_buffer_for_ffi() {
    let t = tour();
    let s = &t.stream;
    let data = Rng::new(4).f32s(4099);
    let dev = DeviceBuffer::from_host(s, &data).unwrap();
    let ptr = dev.cu_deviceptr();
    assert_ne!(ptr, 0);
    // An element's address, as a C++ library would form it, read back through the raw
    // driver call: the very bytes from_host wrote.
    let mut x = [f32::NAN; 3];
    s.synchronize().unwrap();
    // SAFETY: ptr + 4*4096 .. + 12 lies inside the buffer (4099 elements), which lives
    // until the end of the test; `x` has room for 12 bytes; the stream is synchronized.
    unsafe {
        cudarc::driver::result::memcpy_dtoh_sync(&mut x, ptr + 4 * 4096).unwrap();
    }
    assert!(same_bits(&x, &data[4096..]));
    // And a driver-side write through it shows in the buffer.
    let patch = [1.5f32, -2.5];
    // SAFETY: 8 bytes at element 10, inside the buffer.
    unsafe { cudarc::driver::result::memcpy_htod_sync(ptr + 40, &patch).unwrap() };
    let mut want = data.clone();
    want[10..12].copy_from_slice(&patch);
    assert!(same_bits(&dev.to_host_vec(s).unwrap(), &want));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_bad_sizes_are_typed_errors() {
    let t = tour();
    let s = &t.stream;
    let dev = DeviceBuffer::from_host(s, &[1.0f32, 2.0, 3.0]).unwrap();
    let mut short = [f32::NAN; 2];
    match dev.copy_to_host(s, &mut short) {
        Err(MemoryError::LengthMismatch { dst: 2, src: 3, .. }) => {}
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    assert!(short.iter().all(|x| x.is_nan()), "nothing may be written");
    assert!(matches!(
        dev.view(2..4),
        Err(MemoryError::OutOfBounds { .. })
    ));
    assert!(matches!(
        DeviceBuffer::<f64>::zeroed(s, usize::MAX),
        Err(MemoryError::SizeOverflow { .. })
    ));
    let total = t.ctx.total_mem().unwrap();
    match DeviceBuffer::<u8>::zeroed(s, 2 * total) {
        Err(e @ MemoryError::OutOfMemory { .. }) => println!("as expected: {e}"),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    match ManagedBuffer::<u8>::zeroed(s, t.ctx.mem_get_info().unwrap().0 + (1 << 30)) {
        Err(e @ MemoryError::ManagedBudget { .. }) => println!("as expected: {e}"),
        other => panic!("expected ManagedBudget, got {other:?}"),
    }
    // The device still works.
    assert_eq!(dev.to_host_vec(s).unwrap(), vec![1.0, 2.0, 3.0]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_pinned_round_trips() {
    let t = tour();
    let s = t.ctx.new_stream().unwrap();
    let mut rng = Rng::new(2);
    let n = 3 << 20;
    let data = rng.f32s(n);
    let input = PinnedBuffer::from_slice(&t.ctx, &data).unwrap();
    let mut out = PinnedBuffer::from_slice(&t.ctx, &vec![f32::NAN; n]).unwrap();
    let dev = DeviceBuffer::from_pinned_async(&s, &input).unwrap();
    dev.copy_to_pinned_async(&s, &mut out).unwrap();
    assert!(same_bits(out.as_slice().unwrap(), &data)); // waits for the copy's event

    // Ranges: pinned [1000, 2000) into device [0, 1000).
    let mut small = DeviceBuffer::<f32>::zeroed(&s, 1000).unwrap();
    copy_from_pinned_async(&s, &mut small, &input, 1000..2000).unwrap();
    assert!(same_bits(
        &small.to_host_vec(&s).unwrap(),
        &data[1000..2000]
    ));
    assert!(matches!(
        copy_from_pinned_async(&s, &mut small, &input, 0..999),
        Err(MemoryError::LengthMismatch { .. })
    ));
    assert!(matches!(
        copy_from_pinned_async(&s, &mut small, &input, n - 10..n + 990),
        Err(MemoryError::OutOfBounds { .. })
    ));

    // Write-combined pinned memory is a valid copy source.
    let mut wc = PinnedBuffer::<f32>::zeroed_with_flags(
        &t.ctx,
        n,
        PinnedFlags {
            write_combined: true,
            portable: false,
        },
    )
    .unwrap();
    wc.as_mut_slice().unwrap().copy_from_slice(&data);
    let dev2 = DeviceBuffer::from_pinned_async(&s, &wc).unwrap();
    assert!(same_bits(&dev2.to_host_vec(&s).unwrap(), &data));
    t.ctx.check_err().unwrap();
}

/// With only the default stream, cudarc records no events; the pinned buffer's own event
/// must still make `as_slice` wait for a copy queued behind a slow kernel.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_pinned_waits_in_single_stream_mode() {
    let t = tour();
    assert!(!t.ctx.is_in_multi_stream_mode());
    let n = 4096;
    let mut dev = DeviceBuffer::from_host(&t.stream, &vec![f32::NAN; n]).unwrap();
    let mut out = PinnedBuffer::from_slice(&t.ctx, &vec![f32::NAN; n]).unwrap();
    let cfg = for_num_elems(n as u32, 256).unwrap();
    // SAFETY: spin_fill writes out[i] for i < out.len() only.
    unsafe {
        t.spin_fill
            .launch(&t.stream, cfg, (100_000_000u64, 5.0f32, &mut dev))
    }
    .unwrap();
    dev.copy_to_pinned_async(&t.stream, &mut out).unwrap();
    let start = Instant::now();
    let host = out.as_slice().unwrap();
    assert!(
        host.iter().all(|&x| x == 5.0),
        "as_slice returned before the copy finished"
    );
    println!(
        "as_slice waited {:.1} ms for the spin and the copy",
        start.elapsed().as_secs_f64() * 1e3
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_fork_join_and_events() {
    let t = tour();
    let main = t.ctx.new_stream().unwrap();
    let n = 1 << 16;
    let mut buf = DeviceBuffer::from_host(&main, &vec![f32::NAN; n]).unwrap();
    let child = main.fork().unwrap();
    let cfg = for_num_elems(n as u32, 256).unwrap();
    // SAFETY: spin_fill writes out[i] for i < out.len() only.
    unsafe {
        t.spin_fill
            .launch(&child, cfg, (30_000_000u64, 9.0f32, &mut buf))
    }
    .unwrap();
    let ev = child.record_event(None).unwrap();
    main.wait(&ev).unwrap();
    main.join(&child).unwrap();
    assert!(buf.to_host_vec(&main).unwrap().iter().all(|&x| x == 9.0));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_drop_is_stream_ordered_and_does_not_block() {
    let t = tour();
    if !t.ctx.has_async_alloc() {
        println!("no memory pools on this device: drops synchronize (documented); skipping");
        return;
    }
    set_release_threshold(&t.ctx, u64::MAX).unwrap();
    let a = t.ctx.new_stream().unwrap();
    let b = t.ctx.new_stream().unwrap();
    let spin = Duration::from_millis(500);
    let cfg = for_num_elems(1024, 256).unwrap();

    let unrelated = DeviceBuffer::<f32>::zeroed(&a, 16 << 20).unwrap();
    let mut busy = DeviceBuffer::<f32>::zeroed(&b, 1024).unwrap();
    let mut in_use = DeviceBuffer::from_host(&a, &vec![f32::NAN; 1024]).unwrap();
    t.ctx.synchronize().unwrap();
    let used_before = pool_usage(&t.ctx).unwrap().used;

    // SAFETY: spin_fill writes out[i] for i < 1024 = out.len() only.
    unsafe {
        t.spin_fill
            .launch(&b, cfg, (spin.as_nanos() as u64, 1.0f32, &mut busy))
    }
    .unwrap();
    // SAFETY: as above.
    unsafe {
        t.spin_fill
            .launch(&b, cfg, (spin.as_nanos() as u64, 2.0f32, &mut in_use))
    }
    .unwrap();
    let kernels_done = b.record_event(None).unwrap();

    let t0 = Instant::now();
    drop(unrelated);
    let d_unrelated = t0.elapsed();
    let t0 = Instant::now();
    drop(in_use); // written by the second spin, 0.5 to 1 s from now
    let d_in_use = t0.elapsed();
    let running = !kernels_done.try_is_complete().unwrap();
    println!(
        "drop while another stream spins: unrelated {:.1} µs, in use {:.1} µs, kernels still running: {running}",
        d_unrelated.as_secs_f64() * 1e6,
        d_in_use.as_secs_f64() * 1e6
    );
    assert!(
        running,
        "the spin kernels finished before the drops were timed"
    );
    assert!(d_unrelated < Duration::from_millis(10), "{d_unrelated:?}");
    assert!(d_in_use < Duration::from_millis(10), "{d_in_use:?}");

    // Ordered after the free of `in_use`: may get its memory, must keep its own contents.
    let fresh = DeviceBuffer::<f32>::zeroed(&a, 1024).unwrap();
    t.ctx.synchronize().unwrap();
    assert!(fresh.to_host_vec(&a).unwrap().iter().all(|&x| x == 0.0));
    assert_eq!(busy.to_host_vec(&b).unwrap(), vec![1.0; 1024]);
    let used_after = pool_usage(&t.ctx).unwrap().used;
    assert!(
        used_after + (60 << 20) <= used_before,
        "pool use {used_before} -> {used_after}: the 64 MiB free did not run"
    );
    t.ctx.check_err().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_managed_memory_both_sides() {
    for multi_stream in [false, true] {
        let t = tour();
        let s = if multi_stream {
            t.ctx.new_stream().unwrap()
        } else {
            t.stream.clone()
        };
        assert_eq!(t.ctx.is_in_multi_stream_mode(), multi_stream);
        let caps = MemoryCaps::query(&t.ctx).unwrap();
        let mut rng = Rng::new(3 + multi_stream as u64);
        let n = (1 << 20) + 3;
        let data = rng.f32s(n);
        let mut m = ManagedBuffer::from_host(&s, &data).unwrap();
        assert!(same_bits(m.as_slice().unwrap(), &data));
        if caps.concurrent_managed_access {
            m.advise(Advice::ReadMostly).unwrap();
            m.advise(Advice::UnsetReadMostly).unwrap();
            m.advise(Advice::PreferredLocation(Location::Device))
                .unwrap();
            m.prefetch(&s, Location::Device).unwrap();
        }
        let cfg = for_num_elems(n as u32, 256).unwrap();
        // SAFETY: add_one touches v[i] for i < v.len() only.
        unsafe { t.add_one.launch(&s, cfg, (&mut m,)) }.unwrap();
        let want: Vec<f32> = data.iter().map(|x| x + 1.0).collect();
        assert!(
            same_bits(m.as_slice().unwrap(), &want),
            "kernel write seen by host"
        );
        for v in m.as_mut_slice().unwrap() {
            *v = -*v;
        }
        if caps.concurrent_managed_access {
            m.prefetch(&s, Location::Device).unwrap();
        }
        // SAFETY: as above.
        unsafe { t.add_one.launch(&s, cfg, (&mut m,)) }.unwrap();
        if caps.concurrent_managed_access {
            m.prefetch(&s, Location::Host).unwrap();
        }
        let want: Vec<f32> = want.iter().map(|x| -x + 1.0).collect();
        assert!(
            same_bits(m.as_slice().unwrap(), &want),
            "host write seen by kernel"
        );
        // A managed buffer is an ordinary copy source too.
        let mut v = vec![f32::NAN; n];
        copy_to_host(&s, &*m, &mut v).unwrap();
        assert!(same_bits(&v, &want));
        drop(m);
        t.ctx.check_err().unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_hmm_host_reference() {
    let t = tour();
    let supported = pageable_memory_access(&t.ctx).unwrap();
    println!(
        "CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = {}",
        supported as u8
    );
    let cfg_value = AffineConfig {
        scale: 1.5,
        offset: -4.0,
    };
    if !supported {
        match HostRef::new(&t.ctx, &cfg_value) {
            Err(e @ MemoryError::PageableAccessUnsupported { .. }) => println!("as expected: {e}"),
            other => panic!("expected PageableAccessUnsupported, got {other:?}"),
        }
        return;
    }
    let mut rng = Rng::new(5);
    let n = 100_003;
    let x_host = rng.f32s(n);
    let x = DeviceBuffer::from_host(&t.stream, &x_host).unwrap();
    let mut y = DeviceBuffer::from_host(&t.stream, &vec![f32::NAN; n]).unwrap();
    let cfg = for_num_elems(n as u32, 256).unwrap();
    let r = HostRef::new(&t.ctx, &cfg_value).unwrap();
    // SAFETY: hmm_affine reads *cfg and x[i], writes y[i] for i < y.len() = x.len().
    unsafe { t.hmm_affine.launch(&t.stream, cfg, (r, &x, &mut y)) }.unwrap();
    let got = y.to_host_vec(&t.stream).unwrap();
    let bad = got
        .iter()
        .zip(&x_host)
        .filter(|(&g, &v)| {
            let w = v * cfg_value.scale + cfg_value.offset;
            (g - w).abs() > 1e-6 * w.abs().max(1.0)
        })
        .count();
    assert_eq!(bad, 0, "{bad} of {n} elements differ");
    t.ctx.check_err().unwrap();
}

fn lcg_ref(x: u32, iters: u32, a: u32, b: u32) -> u32 {
    (0..iters).fold(x, |v, _| v.wrapping_mul(a).wrapping_add(b))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_pipeline_matches_cpu() {
    let t = tour();
    let parent = t.ctx.new_stream().unwrap();
    let mut rng = Rng::new(6);
    let (iters, a, b) = (9u32, 1_664_525u32, 1_013_904_223u32);
    let total = 1_000_003;
    let data = rng.u32s(total);
    let want: Vec<u32> = data.iter().map(|&x| lcg_ref(x, iters, a, b)).collect();
    let input = PinnedBuffer::from_slice(&t.ctx, &data).unwrap();
    for depth in [1, 2, 3] {
        let mut out = PinnedBuffer::from_slice(&t.ctx, &vec![u32::MAX; total]).unwrap();
        let mut pipe = Pipeline::<u32, u32>::new(&parent, depth, 65_536).unwrap();
        assert_eq!(pipe.depth(), depth);
        let mut launches = 0;
        pipe.run(&parent, &input, &mut out, |s, x, y, n| {
            launches += 1;
            assert!(n <= 65_536 && n > 0);
            let cfg = for_num_elems(x.len() as u32, 256)?;
            // SAFETY: iterate reads x[i], writes y[i] for i < y.len() = x.len().
            unsafe { t.iterate.launch(s, cfg, (x, y, iters, a, b)) }
        })
        .unwrap();
        assert_eq!(launches, total.div_ceil(65_536));
        let got = out.as_slice().unwrap();
        let bad = got.iter().zip(&want).filter(|(g, w)| g != w).count();
        assert_eq!(bad, 0, "depth {depth}: {bad} of {total} elements differ");
    }
    let mut wrong = PinnedBuffer::<u32>::zeroed(&t.ctx, total - 1).unwrap();
    let mut pipe = Pipeline::<u32, u32>::new(&parent, 2, 1024).unwrap();
    assert!(matches!(
        pipe.run(&parent, &input, &mut wrong, |_, _, _, _| Ok(())),
        Err(MemoryError::LengthMismatch { .. })
    ));
    t.ctx.check_err().unwrap();
}
