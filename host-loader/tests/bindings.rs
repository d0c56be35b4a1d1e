//! Generated bindings (`gpu_build::bindings`) for the fixture kernel crate: the generated
//! text is the committed `data/fixture_bindings.rs`, which compiles here against the real
//! types, and a wrong argument type is a compile error (see the `compile_fail` example in
//! host-loader's crate docs and `wrong_type_does_not_compile` below).
//!
//! Regenerate with `HOST_LOADER_BLESS=1 cargo test -p host-loader --test bindings`.

use std::path::Path;

#[allow(dead_code)]
mod generated {
    include!("data/fixture_bindings.rs");
}

const SOURCE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/kernels/src/lib.rs"
);

#[test]
fn generated_bindings_are_current() {
    let text = gpu_build::bindings::generate("host-loader-fixture-kernels", SOURCE).unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fixture_bindings.rs");
    if std::env::var_os("HOST_LOADER_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(
        committed == text,
        "tests/data/fixture_bindings.rs is stale; regenerate it with \
         HOST_LOADER_BLESS=1 cargo test -p host-loader --test bindings"
    );
}

#[test]
fn generated_signatures_match_the_ptx() {
    // Loading needs a GPU; the check it does first does not. Every generated signature is
    // accepted by the PTX and the ABI records.
    let sigs =
        host_loader::Signatures::parse("fixture.ptx", include_str!("data/fixture.ptx")).unwrap();
    use host_loader::{Slice, SliceMut, Struct};
    use host_loader_fixture_kernels::{Cubic, Params, Quant};
    sigs.check::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap();
    sigs.check::<(Struct<Quant>, Slice<i32>, i32, SliceMut<f32>)>("dequantize")
        .unwrap();
    sigs.check::<(host_loader::PtrMut<f32>, Struct<Params>)>("scale")
        .unwrap();
    sigs.check::<(Struct<Cubic>, Slice<f32>, SliceMut<f32>)>("cubic")
        .unwrap();
    // A pointer table is `u64` device addresses, an untyped `*mut c_void` bytes.
    use host_loader::{Ptr, PtrMut};
    sigs.check::<(Ptr<u64>, PtrMut<bool>, PtrMut<u8>, SliceMut<f32>)>("gather")
        .unwrap();
    // And the generated type names exactly these signatures.
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fixture_bindings.rs"),
    )
    .unwrap();
    for line in [
        "    vecadd: ::host_loader::Kernel<(::host_loader::Slice<f32>, ::host_loader::Slice<f32>, ::host_loader::SliceMut<f32>)>,",
        "    scale: ::host_loader::Kernel<(::host_loader::PtrMut<f32>, ::host_loader::Struct<::host_loader_fixture_kernels::Params>)>,",
        "    cubic: ::host_loader::Kernel<(::host_loader::Struct<::host_loader_fixture_kernels::Cubic>, ::host_loader::Slice<f32>, ::host_loader::SliceMut<f32>)>,",
        "    widen: ::host_loader::Kernel<(::host_loader::Slice<f64>, u32, ::host_loader::SliceMut<f32>)>,",
        "    empty: ::host_loader::Kernel<()>,",
        "    gather: ::host_loader::Kernel<(::host_loader::Ptr<u64>, ::host_loader::PtrMut<bool>, ::host_loader::PtrMut<u8>, ::host_loader::SliceMut<f32>)>,",
        "    dequantize: ::host_loader::Kernel<(::host_loader::Struct<::host_loader_fixture_kernels::Quant>, ::host_loader::Slice<i32>, i32, ::host_loader::SliceMut<f32>)>,",
    ] {
        assert!(text.contains(line), "missing: {line}");
    }
}

#[test]
fn module_variables_get_typed_accessors() {
    let dir = std::env::temp_dir().join(format!("hl-bindings-vars-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("lib.rs");
    std::fs::write(
        &lib,
        "pub const TAPS_LEN: usize = 9;\n\
         device_std::constant! {\n    /// Taps.\n    pub static TAPS: [f32; TAPS_LEN];\n    static GAIN: f64 = 2.0;\n}\n\
         device_std::global! { pub static HITS: u32; static ODD: (u32, u32); }\n\
         #[kernel]\npub fn k(x: &[f32]) {}\n",
    )
    .unwrap();
    let text = gpu_build::bindings::generate("t-kernels", &lib).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    for line in [
        "    var_TAPS: ::host_loader::ModuleVar<[f32; ::t_kernels::TAPS_LEN]>,",
        "    var_GAIN: ::host_loader::ModuleVar<f64>,",
        "    var_HITS: ::host_loader::ModuleVar<u32>,",
        "            var_TAPS: module.constant(\"TAPS\")?,",
        "            var_HITS: module.global(\"HITS\")?,",
        "    pub fn TAPS(&self) -> &::host_loader::ModuleVar<[f32; ::t_kernels::TAPS_LEN]> {",
    ] {
        assert!(text.contains(line), "missing: {line}\n{text}");
    }
    // A type the generator cannot write is left to Module::global by hand.
    assert!(!text.contains("ODD"), "{text}");
}

#[test]
fn unsupported_types_and_missing_files_are_errors() {
    let dir = std::env::temp_dir().join(format!("hl-bindings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("lib.rs");
    std::fs::write(&lib, "#[kernel]\npub fn k(x: (u32, u32)) {}\n").unwrap();
    let e = gpu_build::bindings::generate("t-kernels", &lib).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: kernel `k` parameter 0 has type `(…)`, which host-loader cannot pass (use a \
             scalar, `&[T]`, `DisjointSlice<T>`, `&mut [T]`, a raw pointer, a \
             `tma::TensorMap` with literal or constant-path arguments or a \
             `#[derive(KernelStruct)]` struct)",
            lib.display()
        )
    );
    std::fs::write(&lib, "pub fn not_a_kernel() {}\n").unwrap();
    assert!(matches!(
        gpu_build::bindings::generate("t-kernels", &lib).unwrap_err(),
        gpu_build::bindings::BuildError::NoKernels { .. }
    ));
    std::fs::write(&lib, "pub fn broken( {}\n").unwrap();
    let e = gpu_build::bindings::generate("t-kernels", &lib).unwrap_err();
    assert!(
        e.to_string().starts_with(&format!("{}:1:", lib.display())),
        "{e}"
    );
    std::fs::write(&lib, "mod missing;\n").unwrap();
    let e = gpu_build::bindings::generate("t-kernels", &lib).unwrap_err();
    assert!(e.to_string().starts_with("cannot read `"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The generated method takes exactly the kernel's types; this compiles.
#[allow(dead_code)]
fn right_types_compile(
    k: &generated::HostLoaderFixtureKernels,
    stream: &cudarc::driver::CudaStream,
    a: &cudarc::driver::CudaSlice<f32>,
    c: &mut cudarc::driver::CudaSlice<f32>,
) -> Result<(), host_loader::Error> {
    let cfg = host_loader::for_num_elems(1, 1)?;
    // SAFETY: never called.
    unsafe { k.vecadd(stream, cfg, a, a, c) }
}

#[test]
fn tensor_maps_and_type_aliases_bind_to_host_tensor_maps() {
    let dir = std::env::temp_dir().join(format!("hl-bindings-tma-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("lib.rs");
    std::fs::write(
        &lib,
        "use device_std::{bf16, kernel, tma::TensorMap, DisjointSlice};\n\
         pub const BK: usize = 64;\n\
         pub type MapA = TensorMap<bf16, 2, BK, 128, 1, 1, 1, 128>;\n\
         #[kernel]\n\
         pub fn k(a: MapA, b: TensorMap<f32, 2, 32, 32>, c: DisjointSlice<f32>) {}\n",
    )
    .unwrap();
    let text = gpu_build::bindings::generate("t-kernels", &lib).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let sig = "::host_loader::tma::TensorMap<'static, ::device_std::bf16, 2, ::t_kernels::BK, \
               128, 1, 1, 1, 128>, ::host_loader::tma::TensorMap<'static, f32, 2, 32, 32>, \
               ::host_loader::SliceMut<f32>";
    assert!(text.contains(sig), "{text}");
    assert!(
        text.contains("a: &'a ::host_loader::tma::TensorMap<'a, ::device_std::bf16, 2, ::t_kernels::BK, 128, 1, 1, 1, 128>"),
        "{text}"
    );
    // The same types, written here, are what `Module::kernel` takes.
    type A = host_loader::tma::TensorMap<'static, device_std::bf16, 2, 64, 128, 1, 1, 1, 128>;
    type B = host_loader::tma::TensorMap<'static, f32, 2, 32, 32>;
    fn is_signature<S: host_loader::KernelSignature>() {}
    is_signature::<(A, B, host_loader::SliceMut<f32>)>();
}

/// The bindings' typed handle records into a graph with no signature written here
/// (issue 31, point 1): compiled, not run (capturing needs a GPU).
#[allow(dead_code)]
fn records_vecadd_into_a_graph<'a>(
    kernels: &generated::HostLoaderFixtureKernels,
    stream: &'a host_loader::cudarc::driver::CudaStream,
    a: &'a host_loader::cudarc::driver::CudaSlice<f32>,
    c: &'a mut host_loader::cudarc::driver::CudaSlice<f32>,
) -> Result<host_loader::graph::Graph<'a>, host_loader::Error> {
    let cfg = host_loader::for_num_elems(1024, 256)?;
    let (graph, ()) = host_loader::graph::capture(stream, |r| {
        let (a, c) = (r.read(a)?, r.write(c)?);
        // SAFETY: vecadd stays within its buffers.
        unsafe { r.launch(kernels.vecadd_kernel(), cfg, (a, a, c)) }?;
        Ok(())
    })?;
    Ok(graph)
}
