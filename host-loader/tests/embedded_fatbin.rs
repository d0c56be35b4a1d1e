//! `include_ptx!` of a multi-architecture build (`data/multi/`: the fixture kernels for
//! sm_80 and sm_90 in one fatbin, made by `data/regen-fixture.sh`) and
//! `Module::from_embedded` of it. The `gpu_*` tests need a CUDA GPU (sm_80 or sm_90 runs
//! a cubin; a newer one JIT-compiles sm_90's PTX) and are `#[ignore]`d; run them with
//! `cargo test -p host-loader --test embedded_fatbin -- --ignored`.

use host_loader::{
    for_num_elems, include_ptx, open_device, EmbeddedArch, EmbeddedFatbin, EmbeddedPtx, Error,
    Module, Slice, SliceMut,
};

static MULTI: EmbeddedPtx = include_ptx!("host-loader-fixture-kernels", dir = "tests/data/multi");

#[test]
fn include_ptx_embeds_the_fatbin_and_every_architecture() {
    let fatbin = MULTI.fatbin.expect("a fatbin build embeds its fatbin");
    assert_eq!(MULTI.name, "host-loader-fixture-kernels");
    assert_eq!(
        fatbin.image,
        include_bytes!("data/multi/host-loader-fixture-kernels.fatbin")
    );
    assert_eq!(
        fatbin.manifest,
        include_str!("data/multi/host-loader-fixture-kernels.fatbin.json")
    );
    let archs: Vec<&str> = fatbin.archs.iter().map(|a| a.arch).collect();
    assert_eq!(archs, ["sm_80", "sm_90"], "the manifest's order");
    assert_eq!(
        fatbin.archs[1].ptx,
        include_str!("data/multi/sm_90/host-loader-fixture-kernels.ptx")
    );
    assert_eq!(
        fatbin.archs[0].map,
        include_str!("data/multi/sm_80/host-loader-fixture-kernels.map.json")
    );
    // The PTX and map fields are the first architecture's.
    assert_eq!(MULTI.ptx, fatbin.archs[0].ptx);
    assert_eq!(MULTI.map, Some(fatbin.archs[0].map));
    assert!(fatbin.image.starts_with(&0xBA55_ED50u32.to_le_bytes()));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_embedded_fatbin_launches_the_device_image() {
    let (ctx, stream) = open_device(0).unwrap();
    let m = Module::from_embedded(&ctx, &MULTI).unwrap();
    let k = m
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap();
    // The device image's map carries `#[kernel(dims = 1)]`, as the PTX's does.
    let flat = m
        .kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd_flat")
        .unwrap();
    assert_eq!(flat.launch_dims(), Some(1));
    assert_eq!(k.launch_dims(), None);
    let n = 70_001;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let a: Vec<f32> = (0..n).map(|_| next()).collect();
    let b: Vec<f32> = (0..n).map(|_| next()).collect();
    let (da, db) = (
        stream.clone_htod(&a).unwrap(),
        stream.clone_htod(&b).unwrap(),
    );
    let mut dc = stream.clone_htod(&vec![f32::NAN; n]).unwrap();
    // SAFETY: n elements each, bounds-checked by the kernel.
    unsafe {
        k.launch(
            &stream,
            for_num_elems(n as u32, 256).unwrap(),
            (&da, &db, &mut dc),
        )
    }
    .unwrap();
    let c = stream.clone_dtoh(&dc).unwrap();
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "i={i}");
    }
    // A wrong signature is refused as for PTX: the checks come from the device's image.
    let e = m
        .kernel::<(Slice<f32>, SliceMut<f32>)>("vecadd")
        .unwrap_err();
    assert!(matches!(e, Error::ArgCount { .. }), "{e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_embedded_fatbin_with_a_changed_module_is_refused() {
    let (ctx, _stream) = open_device(0).unwrap();
    let fatbin = MULTI.fatbin.unwrap();
    // Both architectures' maps changed (so whichever the device runs): the hash no longer
    // matches the one packed with the fatbin.
    let changed: &'static [EmbeddedArch] = Box::leak(
        fatbin
            .archs
            .iter()
            .map(|a| EmbeddedArch {
                map: Box::leak(a.map.replace("vecadd", "vecaad").into_boxed_str()),
                ..*a
            })
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    let tampered = EmbeddedPtx {
        fatbin: Some(EmbeddedFatbin {
            archs: changed,
            ..fatbin
        }),
        ..MULTI
    };
    let e = Module::from_embedded(&ctx, &tampered).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidPtx { reason, .. } if reason.contains("changed after")),
        "{e}"
    );
}
