//! Real launches of the `#[kernel]`-built fixture (`data/fixture.ptx`, with ABI records
//! and a link map): the verdict matrix on a GPU, a pointer table of `u64` device
//! addresses with `bool` and untyped (`c_void`) pointees, dynamic shared memory above
//! 48 KiB, the `cuFuncGetParamInfo` cross-check, JIT options and cubin loading.
//!
//! The `gpu_*` tests need a CUDA GPU and are `#[ignore]`d; run them with
//! `cargo test -p host-loader --test gpu_fixture -- --ignored --test-threads=1`. Every
//! output is poisoned (NaN) first and compared with a CPU reference on pseudo-random
//! inputs. `gpu_cubin` needs a cubin of `data/fixture.ptx` for the GPU: the path in
//! `HOST_LOADER_TEST_CUBIN`, else it runs `ptxas` from `PATH` for sm_90.

#![allow(clippy::needless_range_loop)] // outputs, inputs and references share an index

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use host_loader::{
    for_num_elems, include_ptx, open_device, EmbeddedPtx, Error, LaunchConfig, LoadOptions, Module,
    Param, ParamKind, Ptr, PtrMut, Signatures, Slice, SliceMut, Struct,
};
use host_loader_fixture_kernels::{Cubic, Params};

static FIXTURE: EmbeddedPtx = include_ptx!("fixture", dir = "tests/data");

/// The bindings `host_loader::build` generated for the fixture crate (see bindings.rs).
#[allow(dead_code)]
mod generated {
    include!("data/fixture_bindings.rs");
}

/// `Params` with `off` first: refused through the record.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, device_std::KernelStruct)]
struct ParamsSwapped {
    off: u64,
    n: u32,
    scale: f32,
}

/// `Params` with the two 4-byte fields swapped: refused through the record's classes.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, device_std::KernelStruct)]
struct ParamsSameSizeSwap {
    scale: f32,
    n: u32,
    off: u64,
}

/// `Cubic` without `align(16)`: refused through the PTX.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable, device_std::KernelStruct)]
struct CubicPacked {
    c: [f32; 4],
    bias: f32,
    pad: [u32; 3],
}

#[test]
fn include_ptx_embeds_ptx_and_map() {
    assert_eq!(FIXTURE.name, "fixture");
    assert_eq!(FIXTURE.ptx, include_str!("data/fixture.ptx"));
    assert_eq!(FIXTURE.map, Some(include_str!("data/fixture.map.json")));
}

fn setup() -> (Arc<CudaContext>, Arc<CudaStream>, Module) {
    let (ctx, stream) = open_device(0).expect("open device 0");
    let module = Module::from_embedded(&ctx, &FIXTURE).expect("load the fixture");
    (ctx, stream, module)
}

/// Deterministic pseudo-random floats in [-1, 1).
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_matrix_mismatches_refused() {
    let (_ctx, _stream, m) = setup();
    let refused: Vec<(&str, Error)> = vec![
        (
            "wrong size",
            m.kernel::<(Slice<f64>, u64, SliceMut<f32>)>("widen")
                .unwrap_err(),
        ),
        (
            "wrong alignment",
            m.kernel::<(Struct<CubicPacked>, Slice<f32>, SliceMut<f32>)>("cubic")
                .unwrap_err(),
        ),
        (
            "swapped fields",
            m.kernel::<(PtrMut<f32>, Struct<ParamsSwapped>)>("scale")
                .unwrap_err(),
        ),
        (
            "missing parameter",
            m.kernel::<(Slice<f32>, Slice<f32>)>("vecadd").unwrap_err(),
        ),
        (
            "extra parameter",
            m.kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>, u32)>("vecadd")
                .unwrap_err(),
        ),
        (
            "slice for a pointer",
            m.kernel::<(Slice<f32>, Struct<Params>)>("scale")
                .unwrap_err(),
        ),
        (
            "read-only slice for a DisjointSlice",
            m.kernel::<(Slice<f32>, Slice<f32>, Slice<f32>)>("vecadd")
                .unwrap_err(),
        ),
        (
            "element type",
            m.kernel::<(Slice<f32>, u32, SliceMut<f32>)>("widen")
                .unwrap_err(),
        ),
        (
            "u32 elements for f32",
            m.kernel::<(Slice<u32>, Slice<f32>, SliceMut<f32>)>("vecadd")
                .unwrap_err(),
        ),
        (
            "equal-size fields swapped",
            m.kernel::<(PtrMut<f32>, Struct<ParamsSameSizeSwap>)>("scale")
                .unwrap_err(),
        ),
        (
            "u8 buffer for *mut bool",
            m.kernel::<(Ptr<u64>, PtrMut<u8>, PtrMut<u32>, SliceMut<f32>)>("gather")
                .unwrap_err(),
        ),
        (
            "i64 pointer table",
            m.kernel::<(Ptr<i64>, PtrMut<bool>, PtrMut<u32>, SliceMut<f32>)>("gather")
                .unwrap_err(),
        ),
    ];
    for (what, e) in &refused {
        eprintln!("{what}: {e}");
    }
    let kinds: Vec<&str> = refused
        .iter()
        .map(|(_, e)| match e {
            Error::LayoutMismatch(_) => "layout",
            Error::ArgCount { .. } => "count",
            Error::AbiMismatch(_) => "abi",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "layout", "layout", "abi", "count", "count", "layout", "abi", "abi", "abi", "abi",
            "abi", "abi"
        ]
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_matrix_matches_compute() {
    let (_ctx, stream, m) = setup();
    let n = (1 << 20) + 3;
    let cfg = for_num_elems(n as u32, 256).unwrap();
    let a = randoms(1, n);
    let b = randoms(2, n);
    let da = stream.clone_htod(&a).unwrap();
    let db = stream.clone_htod(&b).unwrap();

    // vecadd: slices and a DisjointSlice.
    let k = m
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap();
    // Signatures parsed from the very PTX the driver compiled need no driver cross-check.
    assert!(!k.param_info_checked());
    let mut dc = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    // SAFETY: vecadd writes c[i] for i < c.len() through its DisjointSlice; a, b as long.
    unsafe { k.launch(&stream, cfg, (&da, &db, &mut dc)) }.unwrap();
    let c = stream.clone_dtoh(&dc).unwrap();
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "vecadd i={i}");
    }

    // scale: a raw pointer and a 16-byte struct.
    let k = m.kernel::<(PtrMut<f32>, Struct<Params>)>("scale").unwrap();
    let mut dx = stream.clone_htod(&a).unwrap();
    let p = Params {
        n: 100_000,
        scale: -1.75,
        off: 333,
    };
    // SAFETY: scale touches x[off + i] for i < n: 333 + 99_999 < n.
    unsafe { k.launch(&stream, cfg, (&mut dx, p)) }.unwrap();
    let x = stream.clone_dtoh(&dx).unwrap();
    for i in 0..n {
        let want = if (333..100_333).contains(&i) {
            a[i] * -1.75
        } else {
            a[i]
        };
        assert_eq!(x[i], want, "scale i={i}");
    }

    // cubic: a 32-byte struct aligned to 16 with an array field.
    let k = m
        .kernel::<(Struct<Cubic>, Slice<f32>, SliceMut<f32>)>("cubic")
        .unwrap();
    let q = Cubic {
        c: [0.5, -1.25, 2.0, 0.75],
        bias: -3.0,
        pad: [0; 3],
    };
    let mut dout = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    // SAFETY: cubic writes out[i] for i < out.len(); xs as long.
    unsafe { k.launch(&stream, cfg, (q, &da, &mut dout)) }.unwrap();
    let out = stream.clone_dtoh(&dout).unwrap();
    for i in 0..n {
        let x = a[i];
        let want = ((q.c[3] * x + q.c[2]) * x + q.c[1]) * x + q.c[0] + q.bias;
        assert!(
            (out[i] - want).abs() <= 1e-5 * want.abs().max(1.0),
            "cubic i={i}: {} vs {want}",
            out[i]
        );
    }

    // widen: an f64 slice and a u32 scalar.
    let k = m
        .kernel::<(Slice<f64>, u32, SliceMut<f32>)>("widen")
        .unwrap();
    let w: Vec<f64> = a.iter().map(|&v| v as f64 * 1e3).collect();
    let dw = stream.clone_htod(&w).unwrap();
    let mut dout = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    // SAFETY: widen writes out[i] for i < out.len(); xs as long.
    unsafe { k.launch(&stream, cfg, (&dw, 7, &mut dout)) }.unwrap();
    let out = stream.clone_dtoh(&dout).unwrap();
    for i in 0..n {
        assert_eq!(out[i], w[i] as f32 * 7.0, "widen i={i}");
    }
}

/// The device addresses of `src[j]` for each `j` in `picks`, each from `a` (even
/// positions) or `b` (odd), as `gather`'s pointer table: `u64`s, the host's form of a
/// device address (`CUdeviceptr`).
fn address_table(
    stream: &CudaStream,
    a: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    picks: &[usize],
) -> Vec<u64> {
    let (pa, _ga) = a.device_ptr(stream);
    let (pb, _gb) = b.device_ptr(stream);
    picks
        .iter()
        .enumerate()
        .map(|(i, &j)| (if i % 2 == 0 { pa } else { pb }) + 4 * j as u64)
        .collect()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_pointer_table_bools_and_untyped() {
    let (_ctx, stream, m) = setup();
    let n = (1 << 18) + 5;
    let cfg = for_num_elems(n as u32, 256).unwrap();
    let a = randoms(21, n);
    let b = randoms(22, n);
    let da = stream.clone_htod(&a).unwrap();
    let db = stream.clone_htod(&b).unwrap();
    let picks: Vec<usize> = (0..n).map(|i| (i * 7919 + 13) % n).collect();
    let want: Vec<f32> = picks
        .iter()
        .enumerate()
        .map(|(i, &j)| if i % 2 == 0 { a[j] } else { b[j] })
        .collect();
    let table = stream
        .clone_htod(&address_table(&stream, &da, &db, &picks))
        .unwrap();

    // `*const *const f32` as `Ptr<u64>`, `*mut bool` as `PtrMut<bool>`, `*mut c_void` as
    // `PtrMut<u32>` (any element type).
    let k = m
        .kernel::<(Ptr<u64>, PtrMut<bool>, PtrMut<u32>, SliceMut<f32>)>("gather")
        .unwrap();
    let mut flags = stream.alloc_zeros::<bool>(n).unwrap();
    let mut tags = stream.clone_htod(&vec![u32::MAX; n]).unwrap();
    let mut out = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    // SAFETY: gather reads *table[i] (addresses inside da and db) and writes flags[i],
    // tags[i] and out[i] for i < out.len() = n; every buffer has n elements.
    unsafe { k.launch(&stream, cfg, (&table, &mut flags, &mut tags, &mut out)) }.unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    let flags = stream.clone_dtoh(&flags).unwrap();
    let tags = stream.clone_dtoh(&tags).unwrap();
    for i in 0..n {
        assert_eq!(out[i], want[i], "gather out i={i}");
        assert_eq!(flags[i], want[i] > 0.0, "gather flags i={i}");
        assert_eq!(tags[i], i as u32, "gather tags i={i}");
    }
    assert!(flags.iter().any(|&f| f) && flags.iter().any(|&f| !f));

    // The generated bindings: the table as `&CudaSlice<u64>`, the untyped tags as bytes.
    let kernels = generated::HostLoaderFixtureKernels::load(&m).unwrap();
    let mut flags = stream.alloc_zeros::<bool>(n).unwrap();
    let mut tag_bytes = stream.clone_htod(&vec![0xAAu8; 4 * n]).unwrap();
    let mut out = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    // SAFETY: as above; tag_bytes holds n `u32`s.
    unsafe { kernels.gather(&stream, cfg, &table, &mut flags, &mut tag_bytes, &mut out) }.unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    let tag_bytes = stream.clone_dtoh(&tag_bytes).unwrap();
    for i in 0..n {
        assert_eq!(out[i], want[i], "generated gather out i={i}");
        let tag = u32::from_le_bytes(tag_bytes[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(tag, i as u32, "generated gather tags i={i}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_dynamic_shared_above_48k() {
    let (ctx, stream, m) = setup();
    let k = m
        .kernel::<(Slice<f32>, SliceMut<f32>)>("smem_ends")
        .unwrap();
    assert_eq!(k.dynamic_shared_align(), Some(128));
    let optin = m.device_limits().max_shared_per_block_optin;
    assert!(optin >= 100 * 1024, "device opt-in limit {optin}");
    assert_eq!(
        k.max_dynamic_shared_bytes(),
        optin - k.static_shared_bytes()
    );

    let n = 1 << 20;
    let xs = randoms(5, n);
    let dxs = stream.clone_htod(&xs).unwrap();
    for bytes in [1024u32, 100 * 1024, 64 * 1024, k.max_dynamic_shared_bytes()] {
        let len = (bytes / 4) as usize;
        let block = 256usize;
        let cfg = LaunchConfig {
            grid_dim: ((n / block) as u32, 1, 1),
            block_dim: (block as u32, 1, 1),
            shared_mem_bytes: bytes,
        };
        let mut dout = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
        // SAFETY: smem_ends reads xs modulo its length, shared memory within the launch's
        // allocation, and writes out[i] for i < out.len().
        unsafe { k.launch(&stream, cfg, (&dxs, &mut dout)) }.unwrap();
        let out = stream.clone_dtoh(&dout).unwrap();
        for i in 0..n {
            let (b, t) = (i / block, i % block);
            let t = t % len;
            let want = xs[(b * len + t) % n] + xs[(b * len + len - 1 - t) % n];
            assert_eq!(out[i], want, "{bytes} bytes, i={i}");
        }
    }
    // One byte past what the device allows: refused before the driver sees it.
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: k.max_dynamic_shared_bytes() + 1,
    };
    let mut dout = stream.alloc_zeros::<f32>(32).unwrap();
    // SAFETY: refused before the launch.
    let e = unsafe { k.launch(&stream, cfg, (&dxs, &mut dout)) }.unwrap_err();
    assert!(
        e.to_string()
            .contains("bytes of dynamic shared memory asked"),
        "{e}"
    );
    ctx.synchronize().unwrap();
}

/// The bindings record a kernel into a CUDA graph with the kernel's own signature
/// (`record_vecadd`, issue 31 point 1): two nodes chained through `c`, replayed twice.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_bindings_record_into_a_graph() {
    let (ctx, _, m) = setup();
    // Stream capture needs a stream of its own (not the legacy default stream).
    let stream = ctx.new_stream().unwrap();
    let k = generated::HostLoaderFixtureKernels::load(&m).unwrap();
    let n = 10_000;
    let (xs, ys) = (randoms(21, n), randoms(22, n));
    let (a, b) = (
        stream.clone_htod(&xs).unwrap(),
        stream.clone_htod(&ys).unwrap(),
    );
    let mut c = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    let mut d = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    let cfg = for_num_elems(n as u32, 128).unwrap();
    {
        let (g, _) = host_loader::graph::capture(&stream, |r| {
            let (a_t, b_t) = (r.read(&a)?, r.read(&b)?);
            let (c_t, d_t) = (r.write(&mut c)?, r.write(&mut d)?);
            // SAFETY: vecadd stays within its n-element buffers.
            unsafe { k.record_vecadd(r, cfg, a_t, b_t, c_t) }?;
            // SAFETY: as above; c is read after the node that writes it.
            unsafe { k.record_vecadd(r, cfg, c_t.read(), a_t, d_t) }
        })
        .unwrap();
        let mut exec = g.instantiate().unwrap();
        exec.launch(&stream).unwrap();
        exec.launch(&stream).unwrap();
    }
    let got = stream.clone_dtoh(&d).unwrap();
    for i in 0..n {
        assert_eq!(got[i], (xs[i] + ys[i]) + xs[i], "i={i}");
    }
}

/// `vecadd_flat` is declared one-dimensional (`#[kernel(dims = 1)]`): 1D launches of it
/// (directly, through the bindings and in a captured graph) add like the CPU; a launch
/// with a y or z extent is refused before the driver sees it, and writes nothing.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_one_dimensional_kernel() {
    let (ctx, _, m) = setup();
    let stream = ctx.new_stream().unwrap();
    let k = m
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd_flat")
        .unwrap();
    assert_eq!(k.launch_dims(), Some(1));
    let bindings = generated::HostLoaderFixtureKernels::load(&m).unwrap();
    let n = 100_003;
    let (xs, ys) = (randoms(31, n), randoms(32, n));
    let (a, b) = (
        stream.clone_htod(&xs).unwrap(),
        stream.clone_htod(&ys).unwrap(),
    );
    for (block, route) in [(256u32, "launch"), (96, "bindings"), (1024, "graph")] {
        let mut c = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
        let cfg = for_num_elems(n as u32, block).unwrap();
        match route {
            // SAFETY: vecadd_flat reads a[i], b[i] (checked) and writes c[i] for i < n.
            "launch" => unsafe { k.launch(&stream, cfg, (&a, &b, &mut c)) }.unwrap(),
            // SAFETY: as above.
            "bindings" => unsafe { bindings.vecadd_flat(&stream, cfg, &a, &b, &mut c) }.unwrap(),
            _ => {
                let (g, _) = host_loader::graph::capture(&stream, |r| {
                    let (a_t, b_t, c_t) = (r.read(&a)?, r.read(&b)?, r.write(&mut c)?);
                    // SAFETY: as above.
                    unsafe { bindings.record_vecadd_flat(r, cfg, a_t, b_t, c_t) }
                })
                .unwrap();
                g.instantiate().unwrap().launch(&stream).unwrap();
            }
        }
        let got = stream.clone_dtoh(&c).unwrap();
        for i in 0..n {
            assert_eq!(got[i], xs[i] + ys[i], "{route}, block {block}, i={i}");
        }
    }
    let mut c = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    for (grid, block) in [((400, 2, 1), (128, 1, 1)), ((400, 1, 1), (64, 2, 1))] {
        let cfg = LaunchConfig {
            grid_dim: grid,
            block_dim: block,
            shared_mem_bytes: 0,
        };
        // SAFETY: refused before the launch.
        let e = unsafe { k.launch(&stream, cfg, (&a, &b, &mut c)) }.unwrap_err();
        assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
        assert!(e.to_string().contains("`#[kernel(dims = 1)]`"), "{e}");
        let e = host_loader::graph::capture(&stream, |r| {
            let (a_t, b_t, c_t) = (r.read(&a)?, r.read(&b)?, r.write(&mut c)?);
            // SAFETY: refused before the node is added.
            unsafe { bindings.record_vecadd_flat(r, cfg, a_t, b_t, c_t) }
        })
        .map(|_| ())
        .unwrap_err();
        assert!(e.to_string().contains("one-dimensional"), "{e}");
    }
    let got = stream.clone_dtoh(&c).unwrap();
    assert!(got.iter().all(|v| v.is_nan()), "a refused launch wrote");
}

/// The other launch paths of `vecadd_flat` (`#[kernel(dims = 1)]`) check its shape too:
/// a sequence launch, an executable graph's node update (which keeps the node's earlier
/// configuration), launches with attributes (cooperative, cluster), and the handle of
/// the same kernel from a module loaded with its signatures built by hand (the
/// declaration read back from the module). Each refusal is an `InvalidLaunch` naming the declaration,
/// and nothing is written.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_one_dimensional_kernel_every_launch_path() {
    use host_loader::{graph, sequence, LaunchAttributes};
    let (ctx, _, m) = setup();
    // A stream of its own: the legacy default stream cannot be captured.
    let stream = ctx.new_stream().unwrap();
    let k = m
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd_flat")
        .unwrap();
    let n = 4099;
    let (xs, ys) = (randoms(41, n), randoms(42, n));
    let (a, b) = (
        stream.clone_htod(&xs).unwrap(),
        stream.clone_htod(&ys).unwrap(),
    );
    let mut c = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    let good = for_num_elems(n as u32, 128).unwrap();
    let bad = LaunchConfig {
        grid_dim: (17, 2, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 0,
    };
    let refused = |what: &str, e: Error| {
        assert!(matches!(e, Error::InvalidLaunch { .. }), "{what}: {e}");
        assert!(
            e.to_string().contains("`#[kernel(dims = 1)]`"),
            "{what}: {e}"
        );
    };
    // A sequence.
    let e = sequence::run(&stream, |seq| {
        let (a_t, b_t, c_t) = (seq.read(&a)?, seq.read(&b)?, seq.write(&mut c)?);
        // SAFETY: refused before the launch.
        unsafe { seq.launch(&k, bad, (a_t, b_t, c_t)) }
    })
    .unwrap_err();
    refused("sequence", e);
    // Attributes: cooperative, cluster.
    for attrs in [
        LaunchAttributes::new().cooperative(true),
        LaunchAttributes::new().cluster_dim(1, 1, 1),
    ] {
        // SAFETY: refused before the launch.
        let e = unsafe { k.launch_with(&stream, bad, &attrs, (&a, &b, &mut c)) }.unwrap_err();
        refused(&format!("launch_with({attrs:?})"), e);
    }
    stream.synchronize().unwrap();
    let got = stream.clone_dtoh(&c).unwrap();
    assert!(got.iter().all(|v| v.is_nan()), "a refused launch wrote");
    // An executable graph's node: the update is refused, the node keeps its 1D launch.
    let (g, (node, a_t, b_t, c_t)) = graph::capture(&stream, |r| {
        let (a_t, b_t, c_t) = (r.read(&a)?, r.read(&b)?, r.write(&mut c)?);
        // SAFETY: vecadd_flat reads a[i], b[i] (checked) and writes c[i] for i < n.
        let node = unsafe { r.launch(&k, good, (a_t, b_t, c_t)) }?;
        Ok((node, a_t, b_t, c_t))
    })
    .unwrap();
    let mut exec = g.instantiate().unwrap();
    // SAFETY: refused before the driver sees it.
    let e = unsafe { exec.set_kernel_args(node, bad, (a_t, b_t, c_t)) }.unwrap_err();
    refused("set_kernel_args", e);
    exec.launch(&stream).unwrap();
    let got = stream.clone_dtoh(exec.slice(c_t.read()).unwrap()).unwrap();
    for i in 0..n {
        assert_eq!(got[i], xs[i] + ys[i], "graph after a refused update, i={i}");
    }
    drop(exec);
    // Signatures built by hand know nothing of the declarations; the handle reads them
    // from the loaded module (`__kernel_dims_K`, `__kernel_slice_align_K`).
    type V = (Slice<f32>, Slice<f32>, SliceMut<f32>);
    let sigs = Signatures::new("by hand", m.signatures().entries().to_vec());
    let hand = Module::from_ptx_with_signatures(&ctx, sigs, FIXTURE.ptx).unwrap();
    let hk = hand.kernel::<V>("vecadd_flat").unwrap();
    assert_eq!(hk.launch_dims(), Some(1));
    // SAFETY: refused before the launch.
    let e = unsafe { hk.launch(&stream, bad, (&a, &b, &mut c)) }.unwrap_err();
    refused("by hand", e);
    let ha = hand.kernel::<V>("vecadd_aligned").unwrap();
    assert_eq!((ha.launch_dims(), ha.slice_align()), (Some(1), Some(16)));
    let hv = hand.kernel::<V>("vecadd").unwrap();
    assert_eq!((hv.launch_dims(), hv.slice_align()), (None, None));
}

/// `smem_declared` declares 8 bytes of dynamic shared memory per thread: a launch with
/// `shared_mem_bytes: 0` gets them (through `Kernel::launch` and the generated bindings,
/// at two block sizes), one with less is refused with the numbers.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_declared_dynamic_shared_is_filled_in() {
    let (ctx, stream, m) = setup();
    let k = m
        .kernel::<(Slice<f32>, SliceMut<f32>)>("smem_declared")
        .unwrap();
    assert_eq!(
        k.dynamic_shared(),
        Some(host_loader::DynamicShared {
            bytes: 0,
            per_thread: 8
        })
    );
    let bindings = generated::HostLoaderFixtureKernels::load(&m).unwrap();
    let n = 100_000;
    let xs = randoms(11, n);
    let dxs = stream.clone_htod(&xs).unwrap();
    for (block, through_bindings) in [(256usize, false), (1024, true), (96, true)] {
        let cfg = for_num_elems(n as u32, block as u32).unwrap();
        assert_eq!(cfg.shared_mem_bytes, 0);
        let mut dout = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
        if through_bindings {
            // SAFETY: smem_declared reads xs[i] (checked) and shared memory within
            // 8 bytes per thread, which the launch fills in; writes out[i] for i < n.
            unsafe { bindings.smem_declared(&stream, cfg, &dxs, &mut dout) }.unwrap();
        } else {
            // SAFETY: as above.
            unsafe { k.launch(&stream, cfg, (&dxs, &mut dout)) }.unwrap();
        }
        let out = stream.clone_dtoh(&dout).unwrap();
        for i in 0..n {
            let (b, t) = (i / block, i % block);
            let j = b * block + (block - 1 - t);
            let want = if j < n { 3.0 * xs[j] } else { 0.0 };
            assert_eq!(out[i], want, "block {block}, i={i}");
        }
    }
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (128, 1, 1),
        shared_mem_bytes: 1023,
    };
    let mut dout = stream.alloc_zeros::<f32>(128).unwrap();
    // SAFETY: refused before the launch.
    let e = unsafe { k.launch(&stream, cfg, (&dxs, &mut dout)) }.unwrap_err();
    assert!(
        e.to_string().contains("1024 bytes for block (128, 1, 1)"),
        "{e}"
    );
    ctx.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_param_info_cross_check() {
    let (ctx, _stream) = open_device(0).unwrap();
    let sigs = Signatures::parse("fixture.ptx", FIXTURE.ptx).unwrap();
    // True signatures: checked against the driver, and agree.
    let m = Module::from_ptx_with_signatures(&ctx, sigs.clone(), FIXTURE.ptx).unwrap();
    let k = m
        .kernel::<(Struct<Cubic>, Slice<f32>, SliceMut<f32>)>("cubic")
        .unwrap();
    assert!(k.param_info_checked());

    // Signatures that lie about the loaded code: vecadd "takes" three u32 and a pointer.
    let lie = |params: Vec<Param>| {
        let mut entries = sigs.entries().to_vec();
        let v = entries.iter_mut().find(|e| e.name == "vecadd").unwrap();
        v.params = params;
        Signatures::new("fixture.ptx", entries)
    };
    let scalar = |i: usize| Param {
        name: format!("vecadd_param_{i}"),
        kind: ParamKind::Scalar { ty: "u32".into() },
        size: 4,
        align: 4,
    };
    let agg = |i: usize| Param {
        name: format!("vecadd_param_{i}"),
        kind: ParamKind::Aggregate { elem: "b8".into() },
        size: 16,
        align: 8,
    };
    let m = Module::from_ptx_with_signatures(
        &ctx,
        lie(vec![scalar(0), scalar(1), scalar(2)]),
        FIXTURE.ptx,
    )
    .unwrap();
    let e = m.kernel::<(u32, u32, u32)>("vecadd").unwrap_err();
    assert_eq!(
        e.to_string(),
        "kernel `vecadd` parameter 0: the loaded module has it at byte offset 0 with 16 bytes \
         (cuFuncGetParamInfo), the signature the handle was checked against has offset 0 with \
         4 bytes"
    );
    let m = Module::from_ptx_with_signatures(&ctx, lie(vec![agg(0), agg(1)]), FIXTURE.ptx).unwrap();
    let e = m.kernel::<(Slice<f32>, Slice<f32>)>("vecadd").unwrap_err();
    assert!(
        matches!(
            e,
            Error::ParamCountMismatch {
                expected: 2,
                driver: 3,
                ..
            }
        ),
        "{e}"
    );
    let m = Module::from_ptx_with_signatures(
        &ctx,
        lie(vec![agg(0), agg(1), agg(2), agg(3)]),
        FIXTURE.ptx,
    )
    .unwrap();
    let e = m
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>, SliceMut<f32>)>("vecadd")
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::ParamCountMismatch {
                expected: 4,
                driver: 3,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_jit_options_and_log() {
    let (ctx, stream) = open_device(0).unwrap();
    let opts = LoadOptions::new().opt_level(0).max_registers(32);
    let m = Module::from_ptx_with_options(&ctx, "fixture.ptx", FIXTURE.ptx, &opts).unwrap();
    let k = m
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap();
    let a = stream.clone_htod(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut c = stream.clone_htod(&[f32::NAN; 3]).unwrap();
    // SAFETY: 3 elements each, one thread per element, bounds-checked.
    unsafe { k.launch(&stream, for_num_elems(3, 32).unwrap(), (&a, &a, &mut c)) }.unwrap();
    assert_eq!(stream.clone_dtoh(&c).unwrap(), [2.0, 4.0, 6.0]);

    // A PTX error: the JIT log names it.
    let bad = FIXTURE.ptx.replacen("ld.param.b64", "ld.param.b64x", 1);
    let e = Module::from_ptx(&ctx, "bad.ptx", &bad).unwrap_err();
    match &e {
        Error::ModuleLoad { jit_log, .. } => assert!(!jit_log.trim().is_empty(), "{e}"),
        other => panic!("{other}"),
    }
    eprintln!("{e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_cubin() {
    let path = match std::env::var("HOST_LOADER_TEST_CUBIN") {
        Ok(p) => std::path::PathBuf::from(p),
        Err(_) => {
            let dir = std::env::temp_dir().join(format!("hl-cubin-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let ptx = dir.join("fixture.ptx");
            std::fs::write(&ptx, FIXTURE.ptx).unwrap();
            let cubin = dir.join("fixture.cubin");
            let st = std::process::Command::new("ptxas")
                .args(["-arch=sm_90", "-o"])
                .arg(&cubin)
                .arg(&ptx)
                .status()
                .expect("set HOST_LOADER_TEST_CUBIN or put ptxas on PATH");
            assert!(st.success());
            cubin
        }
    };
    let image = std::fs::read(&path).unwrap();
    let (ctx, stream) = open_device(0).unwrap();
    let map = serde_json::from_str(FIXTURE.map.unwrap()).unwrap();
    let sigs = Signatures::from_link_map("fixture.cubin", &map, FIXTURE.ptx).unwrap();
    let m = Module::from_image(&ctx, sigs, &image, &LoadOptions::new()).unwrap();
    let k = m
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap();
    assert!(k.param_info_checked());
    // Signatures built by hand: the declarations come from the cubin's globals.
    let hand = Signatures::new("fixture.cubin", m.signatures().entries().to_vec());
    let hm = Module::from_image(&ctx, hand, &image, &LoadOptions::new()).unwrap();
    type V = (Slice<f32>, Slice<f32>, SliceMut<f32>);
    let ha = hm.kernel::<V>("vecadd_aligned").unwrap();
    assert_eq!((ha.launch_dims(), ha.slice_align()), (Some(1), Some(16)));
    let hf = hm.kernel::<V>("vecadd_flat").unwrap();
    assert_eq!((hf.launch_dims(), hf.slice_align()), (Some(1), None));
    let a = randoms(9, 5000);
    let da = stream.clone_htod(&a).unwrap();
    let mut dc = stream.clone_htod(&vec![f32::NAN; 5000]).unwrap();
    // SAFETY: 5000 elements each, bounds-checked.
    unsafe {
        k.launch(
            &stream,
            for_num_elems(5000, 128).unwrap(),
            (&da, &da, &mut dc),
        )
    }
    .unwrap();
    let c = stream.clone_dtoh(&dc).unwrap();
    for i in 0..5000 {
        assert_eq!(c[i], a[i] + a[i], "i={i}");
    }
    // Garbage and a truncated cubin are refused before the driver sees them (the
    // driver takes no length: it segfaulted on the truncated one).
    let sigs = Signatures::new("junk.cubin", vec![]);
    let e =
        Module::from_image(&ctx, sigs.clone(), b"not a cubin", &LoadOptions::new()).unwrap_err();
    assert!(matches!(e, Error::InvalidPtx { .. }), "{e}");
    let e = Module::from_image(&ctx, sigs, &image[..64], &LoadOptions::new()).unwrap_err();
    assert!(matches!(e, Error::InvalidPtx { .. }), "{e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_generated_bindings() {
    let (_ctx, stream, m) = setup();
    let kernels = generated::HostLoaderFixtureKernels::load(&m).unwrap();
    let n = 100_003;
    let a = randoms(11, n);
    let b = randoms(12, n);
    let da = stream.clone_htod(&a).unwrap();
    let db = stream.clone_htod(&b).unwrap();
    let mut dc = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    let cfg = for_num_elems(n as u32, 256).unwrap();
    // SAFETY: vecadd writes c[i] for i < c.len() through its DisjointSlice.
    unsafe { kernels.vecadd(&stream, cfg, &da, &db, &mut dc) }.unwrap();
    let c = stream.clone_dtoh(&dc).unwrap();
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "i={i}");
    }
    // SAFETY: `empty` touches no memory.
    unsafe { kernels.empty(&stream, cfg) }.unwrap();
    stream.synchronize().unwrap();
}

/// Optional buffers (issue 31, point 12): `optional_axpy` through the bindings with each
/// of `bias` and `lens` present or absent, a present but empty `bias` (told apart from an
/// absent one on the device), `bias` as a view of part of a buffer, and a graph node with
/// `bias` absent.
#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_optional_buffers() {
    let (ctx, stream, m) = setup();
    let k = generated::HostLoaderFixtureKernels::load(&m).unwrap();
    let n = 50_001;
    let a = 1.5f32;
    let xs = randoms(31, n);
    let bs = randoms(32, n + 7);
    let dx = stream.clone_htod(&xs).unwrap();
    let db = stream.clone_htod(&bs).unwrap();
    let empty = stream.alloc_zeros::<f32>(0).unwrap();
    let cfg = for_num_elems(n as u32, 256).unwrap();
    // (bias given as: 0 absent, 1 whole buffer from 0, 2 a view from element 7, 3 empty)
    for bias_form in 0..4 {
        for with_lens in [false, true] {
            let mut dy = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
            let mut dl = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
            let view = db.slice(7..);
            let bias: Option<&dyn DevicePtr<f32>> = match bias_form {
                0 => None,
                1 => Some(&db),
                2 => Some(&view),
                _ => Some(&empty),
            };
            let lens: Option<&mut dyn cudarc::driver::DevicePtrMut<f32>> =
                if with_lens { Some(&mut dl) } else { None };
            // SAFETY: optional_axpy reads xs[i], bias[i] (checked) and writes y[i] and
            // lens[i] for i < their lengths.
            unsafe { k.optional_axpy(&stream, cfg, a, &dx, bias, &mut dy, lens) }.unwrap();
            let (y, l) = (
                stream.clone_dtoh(&dy).unwrap(),
                stream.clone_dtoh(&dl).unwrap(),
            );
            let (want_len, bias_at): (f32, &dyn Fn(usize) -> f32) = match bias_form {
                0 => (-1.0, &|_| 0.0),
                1 => ((n + 7) as f32, &|i| bs[i]),
                2 => (n as f32, &|i| bs[i + 7]),
                _ => (0.0, &|_| 1000.0),
            };
            for i in 0..n {
                assert_eq!(y[i], a * xs[i] + bias_at(i), "bias {bias_form}, i={i}");
                if with_lens {
                    assert_eq!(l[i], want_len, "bias {bias_form}, i={i}");
                } else {
                    assert!(l[i].is_nan(), "lens absent but written at {i}");
                }
            }
        }
    }
    // A graph node with bias absent and lens present.
    let gs = ctx.new_stream().unwrap();
    let mut dy = gs.clone_htod(&vec![f32::NAN; n]).unwrap();
    let mut dl = gs.clone_htod(&vec![f32::NAN; n]).unwrap();
    {
        let (g, _) = host_loader::graph::capture(&gs, |r| {
            let x_t = r.read(&dx)?;
            let (y_t, l_t) = (r.write(&mut dy)?, r.write(&mut dl)?);
            // SAFETY: as above.
            unsafe { k.record_optional_axpy(r, cfg, a, x_t, None, y_t, Some(l_t)) }
        })
        .unwrap();
        g.instantiate().unwrap().launch(&gs).unwrap();
    }
    let (y, l) = (gs.clone_dtoh(&dy).unwrap(), gs.clone_dtoh(&dl).unwrap());
    for i in 0..n {
        assert_eq!((y[i], l[i]), (a * xs[i], -1.0), "graph, i={i}");
    }
    ctx.synchronize().unwrap();
}
