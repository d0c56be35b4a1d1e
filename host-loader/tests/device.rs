//! Driver start-up and real launches.
//!
//! `no_driver_is_an_error` runs everywhere. The `gpu_*` tests need a CUDA GPU and are
//! `#[ignore]`d; run them with `cargo test -p host-loader --test device -- --ignored`.
//! They load `data/gpu.ptx` (rustc nightly output for `data/gpu.rs`), poison every
//! output buffer, and compare with a CPU reference on pseudo-random inputs.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use cudarc::driver::{CudaContext, CudaStream};
use host_loader::{
    for_num_elems, open_device, EntrySignature, Error, LaunchConfig, Module, Param, ParamKind, Ptr,
    PtrMut, Signatures, Slice, SliceMut, Struct,
};

const GPU_PTX: &str = include_str!("data/gpu.ptx");
const PROBE_PTX: &str = include_str!("data/probe.ptx");

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, device_std::KernelStruct)]
struct P {
    n: u32,
    scale: f32,
    off: u64,
}

#[test]
fn no_driver_is_an_error() {
    // SAFETY: only probes `dlopen` on libcuda's candidate names.
    let present = unsafe { cudarc::driver::sys::is_culib_present() };
    match open_device(0) {
        Ok(_) => assert!(present),
        Err(Error::NoDriver { detail }) => {
            assert!(!present);
            assert!(
                detail.starts_with("libcuda.so not found: install the NVIDIA driver"),
                "{detail}"
            );
        }
        // A driver without a GPU: cuInit reports it.
        Err(e @ Error::Driver { .. }) => assert!(present, "{e}"),
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// Hand-written signatures of `gpu.ptx`, so these tests do not depend on the PTX parser.
fn gpu_signatures() -> Signatures {
    fn p(k: &str, i: usize, kind: ParamKind, size: u32, align: u32) -> Param {
        Param {
            name: format!("{k}_param_{i}"),
            kind,
            size,
            align,
        }
    }
    let ptr = || ParamKind::Pointer {
        space: None,
        pointee_align: 1,
    };
    let agg = || ParamKind::Aggregate { elem: "b8".into() };
    let sc = |t: &str| ParamKind::Scalar { ty: t.into() };
    let echo = vec![
        p("echo", 0, ptr(), 8, 8),
        p("echo", 1, sc("u8"), 1, 1),
        p("echo", 2, sc("u16"), 2, 2),
        p("echo", 3, sc("u32"), 4, 4),
        p("echo", 4, sc("f32"), 4, 4),
        p("echo", 5, sc("f64"), 8, 8),
        p("echo", 6, sc("u64"), 8, 8),
        p("echo", 7, sc("u8"), 1, 1),
        p("echo", 8, agg(), 16, 8),
        p("echo", 9, agg(), 16, 8),
        p("echo", 10, sc("u8"), 1, 1),
    ];
    let entry = |name: &str, line, params| EntrySignature {
        name: name.into(),
        line,
        params,
    };
    Signatures::new(
        "tests/data/gpu.ptx",
        vec![
            entry("echo", 25, echo),
            entry(
                "scale",
                104,
                vec![p("scale", 0, ptr(), 8, 8), p("scale", 1, agg(), 16, 8)],
            ),
            entry(
                "vecadd",
                140,
                (0..3).map(|i| p("vecadd", i, agg(), 16, 8)).collect(),
            ),
        ],
    )
}

fn setup() -> (Arc<CudaContext>, Arc<CudaStream>, Module) {
    let (ctx, stream) = open_device(0).expect("open device 0");
    let module =
        Module::from_ptx_with_signatures(&ctx, gpu_signatures(), GPU_PTX).expect("load gpu.ptx");
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
fn gpu_vecadd_matches_cpu() {
    let (_ctx, stream, module) = setup();
    let k = module
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap();
    for n in [1usize, 1000, 1 << 20, (1 << 20) + 17] {
        let a = randoms(1, n);
        let b = randoms(2, n);
        let da = stream.clone_htod(&a).unwrap();
        let db = stream.clone_htod(&b).unwrap();
        let mut dc = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
        let cfg = for_num_elems(n as u32, 256).unwrap();
        // SAFETY: vecadd writes c[i] for i < c.len() and reads a[i], b[i]; all have n
        // elements.
        unsafe { k.launch(&stream, cfg, (&da, &db, &mut dc)) }.unwrap();
        let c = stream.clone_dtoh(&dc).unwrap();
        for i in 0..n {
            assert_eq!(c[i], a[i] + b[i], "n={n} i={i}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_struct_and_pointer_by_value() {
    let (_ctx, stream, module) = setup();
    let k = module.kernel::<(PtrMut<f32>, Struct<P>)>("scale").unwrap();
    let x0 = randoms(3, 4096);
    let mut dx = stream.clone_htod(&x0).unwrap();
    let p = P {
        n: 1000,
        scale: 3.5,
        off: 17,
    };
    // SAFETY: scale touches x[off + i] for i < n: 17 + 999 < 4096.
    unsafe { k.launch(&stream, for_num_elems(2048, 128).unwrap(), (&mut dx, p)) }.unwrap();
    let x = stream.clone_dtoh(&dx).unwrap();
    for (i, (&got, &orig)) in x.iter().zip(&x0).enumerate() {
        let want = if (17..1017).contains(&i) {
            orig * 3.5
        } else {
            orig
        };
        assert_eq!(got, want, "i={i}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_every_scalar_arrives_intact() {
    let (_ctx, stream, module) = setup();
    type Sig = (
        PtrMut<u64>,
        u8,
        u16,
        i32,
        f32,
        f64,
        u64,
        bool,
        Slice<u32>,
        Struct<P>,
        i8,
    );
    let k = module.kernel::<Sig>("echo").unwrap();
    let mut out = stream.clone_htod(&[u64::MAX; 13]).unwrap();
    let s = stream.clone_htod(&[5u32, 6, 7, 0xdead_beef]).unwrap();
    let p = P {
        n: 0x1234_5678,
        scale: -2.25,
        off: 0x0123_4567_89ab_cdef,
    };
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: echo writes out[0..13] from thread 0 and reads s[len - 1].
    unsafe {
        k.launch(
            &stream,
            cfg,
            (
                &mut out,
                0xabu8,
                0xbeefu16,
                -123456i32,
                1.5f32,
                -0.1f64,
                0xfedc_ba98_7654_3210u64,
                true,
                &s,
                p,
                -7i8,
            ),
        )
    }
    .unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let want = [
        0xab,
        0xbeef,
        (-123456i64) as u64,
        1.5f32.to_bits() as u64,
        (-0.1f64).to_bits(),
        0xfedc_ba98_7654_3210,
        1,
        4,
        0xdead_beef,
        0x1234_5678,
        (-2.25f32).to_bits() as u64,
        0x0123_4567_89ab_cdef,
        (-7i64) as u64,
    ];
    assert_eq!(got, want);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_two_streams_are_ordered() {
    let (ctx, s1, module) = setup();
    let s2 = ctx.new_stream().unwrap();
    let k = module
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap();
    let n = 1 << 22;
    let a = randoms(4, n);
    let da = s1.clone_htod(&a).unwrap();
    let mut dc = s1.clone_htod(&vec![f32::NAN; n]).unwrap();
    let mut dd = s2.clone_htod(&vec![f32::NAN; n]).unwrap();
    let cfg = for_num_elems(n as u32, 1024).unwrap();
    // SAFETY: in bounds as in gpu_vecadd_matches_cpu.
    unsafe {
        k.launch(&s1, cfg, (&da, &da, &mut dc)).unwrap(); // c = 2a on s1
        k.launch(&s2, cfg, (&dc, &da, &mut dd)).unwrap(); // d = c + a on s2, after s1
    }
    let d = s2.clone_dtoh(&dd).unwrap();
    for i in 0..n {
        assert_eq!(d[i], (a[i] + a[i]) + a[i], "i={i}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_bad_launches_are_errors() {
    let (_ctx, stream, module) = setup();
    let k = module
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap();
    assert!(
        k.max_threads_per_block() >= 256,
        "{}",
        k.max_threads_per_block()
    );
    let a = stream.clone_htod(&[1.0f32; 4]).unwrap();
    let mut c = stream.alloc_zeros::<f32>(4).unwrap();
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (2048, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: rejected before the launch.
    let err = unsafe { k.launch(&stream, cfg, (&a, &a, &mut c)) }.unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch { .. }), "{err}");
    assert!(
        err.to_string().starts_with("invalid launch of `vecadd`"),
        "{err}"
    );

    // A wrong signature is refused when the handle is made.
    let err = module
        .kernel::<(Ptr<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("tests/data/gpu.ptx:140: kernel `vecadd` parameter 0"),
        "{err}"
    );
    let err = module.kernel::<()>("nope").unwrap_err();
    assert!(matches!(err, Error::NoSuchKernel { .. }), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_unresolved_extern_gives_jit_log() {
    let (ctx, _stream) = open_device(0).unwrap();
    // probe.ptx calls core's panic_bounds_check, declared `.extern` and never defined.
    let err = Module::from_ptx_with_signatures(
        &ctx,
        Signatures::new("tests/data/probe.ptx", vec![]),
        PROBE_PTX,
    )
    .unwrap_err();
    match &err {
        Error::ModuleLoad { module, .. } => assert_eq!(module, "tests/data/probe.ptx"),
        other => panic!("{other}"),
    }
    eprintln!("{err}");
    let err = Module::from_ptx(&ctx, "nul.ptx", "abc\0def").unwrap_err();
    assert_eq!(
        err.to_string(),
        "nul.ptx: PTX text contains a NUL byte at byte offset 3"
    );
}

#[test]
fn hand_written_signatures_match_parser() {
    let parsed = Signatures::parse("tests/data/gpu.ptx", GPU_PTX).unwrap();
    assert_eq!(parsed.entries(), gpu_signatures().entries());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_from_ptx_parses_signatures() {
    let (ctx, stream) = open_device(0).unwrap();
    let module = Module::from_ptx(&ctx, "tests/data/gpu.ptx", GPU_PTX).unwrap();
    assert_eq!(module.name(), "tests/data/gpu.ptx");
    assert_eq!(module.signatures().entries(), gpu_signatures().entries());
    let k = module
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap();
    let a = stream.clone_htod(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut c = stream.clone_htod(&[f32::NAN; 3]).unwrap();
    // SAFETY: in bounds: 3 elements each, one thread per element.
    unsafe { k.launch(&stream, for_num_elems(3, 32).unwrap(), (&a, &a, &mut c)) }.unwrap();
    assert_eq!(stream.clone_dtoh(&c).unwrap(), [2.0, 4.0, 6.0]);

    let err = Module::from_ptx_file(&ctx, "no/such/file.ptx").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot read `no/such/file.ptx`: "),
        "{err}"
    );
}
