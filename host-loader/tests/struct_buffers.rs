//! Kernel data of a `#[derive(KernelStruct)]` type with padding (the fixture's
//! `Particle`: 24 bytes, 9 of them padding, not `bytemuck::Pod`) through the one documented
//! form, `DeviceBuffer`: uploaded, allocated, read back, and passed to a kernel through the
//! generated bindings and a launch tuple.
//!
//! Without a GPU: the record of the padded struct and its exact check, and (at compile
//! time) that `DeviceBuffer<Particle>` has the whole API and is the argument the bindings
//! take. The `gpu_*` test needs a CUDA GPU and is `#[ignore]`d:
//! `cargo test -p host-loader --test struct_buffers -- --ignored`.

use std::mem::{align_of, offset_of, size_of};
use std::sync::Arc;

use cudarc::driver::CudaStream;
use host_loader::memory::{copy_to_host, to_host_vec, DeviceBuffer, MemoryError};
use host_loader::{
    for_num_elems, include_ptx, open_device, AbiKind, EmbeddedPtx, Error, Kernel, KernelStruct,
    Module, Signatures, Slice, SliceMut, Struct, ValueClass,
};
use host_loader_fixture_kernels::Particle;

static FIXTURE: EmbeddedPtx = include_ptx!("fixture", dir = "tests/data");

/// The bindings generated for the fixture crate (see bindings.rs).
#[allow(dead_code)]
mod generated {
    include!("data/fixture_bindings.rs");
}

type Advance = (Slice<Particle>, Struct<Particle>, SliceMut<Particle>);

/// `Particle` with `id` widened to `u32`: the same size and alignment, `pos`, `vel` and
/// `alive` at the same offsets; only the record's first field tells them apart.
#[repr(C)]
#[derive(Clone, Copy, device_std::KernelStruct)]
struct ParticleWideId {
    id: u32,
    pos: f64,
    vel: f32,
    alive: u8,
}

#[test]
fn particle_has_padding_and_is_recorded_exactly() {
    assert_eq!((size_of::<Particle>(), align_of::<Particle>()), (24, 8));
    let fields = [
        offset_of!(Particle, id),
        offset_of!(Particle, pos),
        offset_of!(Particle, vel),
        offset_of!(Particle, alive),
    ];
    assert_eq!(fields, [0, 8, 16, 20]); // padding at 2..8 and 21..24
    let sizes: u32 = Particle::LAYOUT.fields.iter().map(|f| f.size).sum();
    assert_eq!(size_of::<Particle>() as u32 - sizes, 9);

    let sigs = Signatures::parse("fixture.ptx", FIXTURE.ptx).unwrap();
    sigs.check::<Advance>("advance").unwrap();
    let record = sigs.record("advance").unwrap().unwrap();
    assert_eq!(record.params[0].kind, AbiKind::Slice);
    assert_eq!(record.params[0].elem_size, 24);
    assert_eq!(record.params[1].kind, AbiKind::Struct);
    let got: Vec<(u32, u32, ValueClass)> = record.params[1]
        .fields
        .iter()
        .map(|f| (f.offset, f.size, f.class))
        .collect();
    use ValueClass::{Float, Unsigned};
    assert_eq!(
        got,
        [
            (0, 2, Unsigned),
            (8, 8, Float),
            (16, 4, Float),
            (20, 1, Unsigned)
        ]
    );
    assert_eq!(record.params[2].kind, AbiKind::DisjointSlice);
    assert_eq!(record.params[2].elem_size, 24);
}

#[test]
fn a_lookalike_with_the_same_size_is_refused() {
    assert_eq!(size_of::<ParticleWideId>(), size_of::<Particle>());
    let sigs = Signatures::parse("fixture.ptx", FIXTURE.ptx).unwrap();
    let e = sigs
        .check::<(Slice<Particle>, Struct<ParticleWideId>, SliceMut<Particle>)>("advance")
        .unwrap_err();
    assert!(matches!(e, Error::AbiMismatch(_)), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("field 0"), "{msg}");
    assert!(msg.contains("ParticleWideId"), "{msg}");
}

/// Never called: it compiles, which is the test. A padded `KernelStruct` has the whole
/// `DeviceBuffer` API (upload, allocate, read back, into a slice or a new `Vec`, views),
/// and `&buf` / `&mut buf` are the arguments of the generated bindings and of a launch
/// tuple.
#[allow(dead_code)]
fn the_one_form_compiles_for_a_padded_struct(
    stream: &Arc<CudaStream>,
    kernels: &generated::HostLoaderFixtureKernels,
    k: &Kernel<Advance>,
    host: &[Particle],
) -> Result<Vec<Particle>, Box<dyn std::error::Error>> {
    let ps = DeviceBuffer::from_host(stream, host)?;
    let mut out = DeviceBuffer::<Particle>::zeroed(stream, host.len())?;
    let step = host[0];
    let cfg = for_num_elems(host.len() as u32, 128)?;
    // SAFETY: never executed.
    unsafe {
        kernels.advance(stream, cfg, &ps, step, &mut out)?;
        k.launch(stream, cfg, (&ps, step, &mut out))?;
    }
    let mut into = host.to_vec();
    out.copy_to_host(stream, &mut into)?;
    copy_to_host(stream, &out.view(1..)?, &mut into[1..])?;
    let _part: Vec<Particle> = to_host_vec(stream, &ps.view(..2)?)?;
    out.copy_from_host(stream, host)?;
    Ok(out.to_host_vec(stream)?)
}

/// Deterministic pseudo-random particles with every field's bits varied (finite floats:
/// the GPU's NaN results need not keep a payload).
fn particles(seed: u64, n: usize) -> Vec<Particle> {
    let mut s = seed;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s
    };
    (0..n)
        .map(|_| {
            let (a, b, c) = (next(), next(), next());
            Particle {
                id: (a >> 48) as u16,
                pos: ((b >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 1e6,
                vel: ((c >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 64.0,
                alive: (a & 1) as u8,
            }
        })
        .collect()
}

/// The fields' bits: what "bit-exact" means for a struct whose padding is no part of
/// its value.
fn bits(p: &Particle) -> (u16, u64, u32, u8) {
    (p.id, p.pos.to_bits(), p.vel.to_bits(), p.alive)
}

fn assert_same_bits(got: &[Particle], want: &[Particle], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(bits(g), bits(w), "{what}: element {i}");
    }
}

/// The kernel's rule on the host: one IEEE operation per float field.
fn advance_ref(p: &Particle, step: &Particle) -> Particle {
    Particle {
        id: p.id.wrapping_add(step.id),
        pos: p.pos + step.pos,
        vel: p.vel * step.vel,
        alive: p.alive & step.alive,
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_padded_structs_round_trip_and_launch() {
    let (ctx, stream) = open_device(0).expect("open device 0");
    let module = Module::from_embedded(&ctx, &FIXTURE).expect("load the fixture");
    let kernels = generated::HostLoaderFixtureKernels::load(&module).expect("bindings load");
    let n = (1 << 18) + 5;
    let host = particles(11, n);

    // Upload, read back: every field's bits.
    let ps = DeviceBuffer::from_host(&stream, &host).unwrap();
    assert_eq!(ps.len(), n);
    assert_eq!(ps.num_bytes(), 24 * n);
    assert_same_bits(&ps.to_host_vec(&stream).unwrap(), &host, "to_host_vec");
    let mut into = particles(99, n);
    ps.copy_to_host(&stream, &mut into).unwrap();
    assert_same_bits(&into, &host, "copy_to_host");
    let mid = to_host_vec(&stream, &ps.view(1000..1010).unwrap()).unwrap();
    assert_same_bits(&mid, &host[1000..1010], "to_host_vec of a view");

    // Allocate: zeroed reads back as zeros; a wrong length is refused before any copy.
    let zeros = DeviceBuffer::<Particle>::zeroed(&stream, n).unwrap();
    let zero = Particle {
        id: 0,
        pos: 0.0,
        vel: 0.0,
        alive: 0,
    };
    assert_same_bits(
        &zeros.to_host_vec(&stream).unwrap(),
        &vec![zero; n],
        "zeroed",
    );
    let mut short = vec![zero; n - 1];
    assert!(matches!(
        zeros.copy_to_host(&stream, &mut short),
        Err(MemoryError::LengthMismatch { .. })
    ));

    // Through the bindings: `&buf` for `&[Particle]`, `&mut buf` for the DisjointSlice, a
    // Particle by value. The output is poisoned first, so a skipped element shows.
    let poison = Particle {
        id: 0xdead,
        pos: f64::from_bits(0x7ff8_dead_dead_dead),
        vel: f32::from_bits(0x7fc0_dead),
        alive: 0xee,
    };
    let mut out = DeviceBuffer::from_host(&stream, &vec![poison; n]).unwrap();
    let step = Particle {
        id: 40_000,
        pos: -0.125,
        vel: 1.5,
        alive: 1,
    };
    let cfg = for_num_elems(n as u32, 128).unwrap();
    // SAFETY: advance writes out[i] for i < out.len() only and reads ps[i]; same lengths.
    unsafe { kernels.advance(&stream, cfg, &ps, step, &mut out) }.unwrap();
    let want: Vec<Particle> = host.iter().map(|p| advance_ref(p, &step)).collect();
    assert_same_bits(
        &out.to_host_vec(&stream).unwrap(),
        &want,
        "advance (bindings)",
    );

    // And through a launch tuple, into a zeroed buffer.
    let k = module.kernel::<Advance>("advance").unwrap();
    let mut out2 = DeviceBuffer::<Particle>::zeroed(&stream, n).unwrap();
    // SAFETY: as above.
    unsafe { k.launch(&stream, cfg, (&out, step, &mut out2)) }.unwrap();
    let want2: Vec<Particle> = want.iter().map(|p| advance_ref(p, &step)).collect();
    assert_same_bits(
        &out2.to_host_vec(&stream).unwrap(),
        &want2,
        "advance (tuple)",
    );

    // An empty buffer round-trips too.
    let empty = DeviceBuffer::<Particle>::from_host(&stream, &[]).unwrap();
    assert!(empty.to_host_vec(&stream).unwrap().is_empty());
    ctx.check_err().unwrap();
    eprintln!("{n} padded particles: round trip and two launches bit-exact");
}
