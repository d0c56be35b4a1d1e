//! The memory chapter without a GPU: size arithmetic, the managed-memory budget, error
//! messages, and the launch ABI accepting `DeviceBuffer`, `ManagedBuffer` and `HostRef`
//! arguments (checked against the PTX rustc emits for `memory_tour-kernels`, and at
//! compile time). The GPU side is `memory_gpu.rs`.

use bytemuck::{Pod, Zeroable};
use cudarc::driver::CudaStream;
use host_loader::memory::{
    byte_len, check_managed_budget, chunks, managed_reserve, resolve_range, DeviceBuffer, HostPtr,
    HostRef, ManagedBuffer, MemoryError, PinnedFlags, MIN_MANAGED_RESERVE,
};
use host_loader::{
    check_signature, for_num_elems, Error, Kernel, KernelParam, ParamLayout, Signatures, Slice,
    SliceMut,
};

const GIB: usize = 1 << 30;

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct AffineConfig {
    scale: f32,
    offset: f32,
}

// SAFETY: opaque, the default: the ABI record compares its size only.
unsafe impl host_loader::HasValueClass for AffineConfig {}

/// The `.entry` headers of `target/ptx/memory_tour-kernels.ptx` as rustc (nightly,
/// sm_90) emitted them, with the bodies cut to `ret;`.
const TOUR_PTX: &str = r#"
.version 7.8
.target sm_90
.address_size 64

.visible .entry add_one(
	.param .align 8 .b8 add_one_param_0[16]
)
{
	ret;
}

.visible .entry hmm_affine(
	.param .u64 .ptr .align 1 hmm_affine_param_0,
	.param .align 8 .b8 hmm_affine_param_1[16],
	.param .align 8 .b8 hmm_affine_param_2[16]
)
{
	ret;
}

.visible .entry iterate(
	.param .align 8 .b8 iterate_param_0[16],
	.param .align 8 .b8 iterate_param_1[16],
	.param .u32 iterate_param_2,
	.param .u32 iterate_param_3,
	.param .u32 iterate_param_4
)
{
	ret;
}

.visible .entry spin_fill(
	.param .u64 spin_fill_param_0,
	.param .f32 spin_fill_param_1,
	.param .align 8 .b8 spin_fill_param_2[16]
)
{
	ret;
}
"#;

fn tour() -> Signatures {
    Signatures::parse("memory_tour-kernels.ptx", TOUR_PTX).expect("the PTX parses")
}

#[test]
fn byte_sizes_are_checked() {
    assert_eq!(byte_len::<f32>(256 << 20).unwrap(), 1 << 30);
    assert_eq!(byte_len::<AffineConfig>(3).unwrap(), 24);
    for (len, size) in [(usize::MAX, 4usize), (isize::MAX as usize / 4 + 1, 4)] {
        match byte_len::<f32>(len) {
            Err(MemoryError::SizeOverflow {
                len: l,
                elem_size,
                ty,
            }) => {
                assert_eq!((l, elem_size, ty), (len, size, "f32"));
            }
            other => panic!("len {len}: expected SizeOverflow, got {other:?}"),
        }
    }
    // The largest f32 count that fits is accepted, one more is not.
    let max = isize::MAX as usize / 4;
    assert_eq!(byte_len::<f32>(max).unwrap(), max * 4);
    assert!(byte_len::<f32>(max + 1).is_err());
}

#[test]
fn ranges_and_chunks() {
    assert_eq!(resolve_range("view", 3..=7, 8).unwrap(), 3..8);
    let e = resolve_range("DeviceBuffer::view", 3..9, 8).unwrap_err();
    assert_eq!(
        e.to_string(),
        "DeviceBuffer::view: range 3..9 is out of bounds for 8 elements"
    );
    let plan = chunks(64 << 20, 2 << 20).unwrap();
    assert_eq!(plan.len(), 32);
    assert_eq!(plan[31], (62 << 20)..(64 << 20));
    assert_eq!(chunks(10, 3).unwrap().last().unwrap().clone(), 9..10);
}

#[test]
fn managed_budget_keeps_a_reserve() {
    // H200: 141 GB total -> reserve total / 16; a small GPU: at least 1 GiB.
    let h200 = 150_754_820_096usize;
    assert_eq!(managed_reserve(h200), h200 / 16);
    assert_eq!(managed_reserve(8 * GIB), MIN_MANAGED_RESERVE);
    assert!(check_managed_budget(4 * GIB, 100 * GIB, h200).is_ok());
    let free = 10 * GIB;
    let allowed = free - h200 / 16;
    assert!(check_managed_budget(allowed, free, h200).is_ok());
    match check_managed_budget(allowed + 1, free, h200) {
        Err(MemoryError::ManagedBudget {
            requested,
            free: f,
            reserve,
            allowed: a,
        }) => {
            assert_eq!(
                (requested, f, reserve, a),
                (allowed + 1, free, h200 / 16, allowed)
            );
        }
        other => panic!("expected ManagedBudget, got {other:?}"),
    }
    // Less free memory than the reserve: nothing is allowed, not even one byte.
    assert!(check_managed_budget(1, GIB / 2, 8 * GIB).is_err());
    assert!(check_managed_budget(0, GIB / 2, 8 * GIB).is_ok());
    assert_eq!(
        check_managed_budget(3 * GIB, 2 * GIB, 8 * GIB)
            .unwrap_err()
            .to_string(),
        "managed allocation of 3221225472 bytes refused: 2147483648 bytes of device memory \
         are free and 1073741824 are kept in reserve, so at most 1073741824 bytes may be \
         managed; managed memory beyond free device memory over-subscribes the GPU (pages \
         thrash between host and device and a shared GPU can stall); allocate less or free \
         memory"
    );
}

#[test]
fn error_messages_say_what_to_do() {
    let e = MemoryError::LengthMismatch {
        op: "copy_to_host",
        dst: 3,
        src: 4,
    };
    assert_eq!(
        e.to_string(),
        "copy_to_host: the destination holds 3 elements and the source 4; a copy needs equal \
         lengths (take a view of the longer one)"
    );
    let e = MemoryError::OutOfMemory {
        what: "device allocation (cuMemAllocAsync)",
        requested: 1 << 50,
        free: Some(1000),
        total: Some(2000),
    };
    assert_eq!(
        e.to_string(),
        "out of memory: device allocation (cuMemAllocAsync) of 1125899906842624 bytes failed \
         (1000 of 2000 bytes of device memory are free)"
    );
    let e = MemoryError::PageableAccessUnsupported {
        ordinal: 0,
        name: "NVIDIA H200".into(),
    };
    let msg = e.to_string();
    assert!(
        msg.starts_with(
            "device 0 (NVIDIA H200) cannot read pageable host memory: \
             CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS is 0"
        ),
        "{msg}"
    );
    assert!(msg.ends_with("or copy it into a DeviceBuffer"), "{msg}");
    // A launch error inside a pipeline stage keeps its message.
    let launch = for_num_elems(0, 256).unwrap_err();
    let e = MemoryError::from(launch);
    assert!(
        matches!(&e, MemoryError::Launch(inner) if matches!(**inner, Error::InvalidLaunch { .. }))
    );
    assert!(
        e.to_string()
            .starts_with("pipeline stage: invalid launch: 0 elements"),
        "{e}"
    );
}

#[test]
fn pinned_flags_map_to_cu_mem_host_alloc_bits() {
    use cudarc::driver::sys;
    assert_eq!(PinnedFlags::default().bits(), 0);
    let wc = PinnedFlags {
        write_combined: true,
        ..Default::default()
    };
    assert_eq!(wc.bits(), sys::CU_MEMHOSTALLOC_WRITECOMBINED);
    let both = PinnedFlags {
        write_combined: true,
        portable: true,
    };
    assert_eq!(
        both.bits(),
        sys::CU_MEMHOSTALLOC_WRITECOMBINED | sys::CU_MEMHOSTALLOC_PORTABLE
    );
}

#[test]
fn host_ptr_is_a_pointer_parameter() {
    assert_eq!(
        <HostPtr<AffineConfig> as KernelParam>::LAYOUT,
        ParamLayout::pointer()
    );
    assert_eq!(
        <HostPtr<AffineConfig> as KernelParam>::type_name(),
        "HostPtr<AffineConfig>"
    );
    let abi = <HostPtr<AffineConfig> as KernelParam>::ABI;
    assert_eq!(abi.kind, host_loader::AbiKind::Pointer);
    assert_eq!(abi.elem_size, 8);
    assert_eq!(abi.elem_class, host_loader::ValueClass::Opaque);
    assert_eq!(
        <HostPtr<f32> as KernelParam>::ABI.elem_class,
        host_loader::ValueClass::Float
    );
}

#[test]
fn tour_signatures_accept_the_buffer_types() {
    let sigs = tour();
    check_signature::<(SliceMut<f32>,)>(sigs.get("add_one").unwrap()).unwrap();
    check_signature::<(HostPtr<AffineConfig>, Slice<f32>, SliceMut<f32>)>(
        sigs.get("hmm_affine").unwrap(),
    )
    .unwrap();
    check_signature::<(Slice<u32>, SliceMut<u32>, u32, u32, u32)>(sigs.get("iterate").unwrap())
        .unwrap();
    check_signature::<(u64, f32, SliceMut<f32>)>(sigs.get("spin_fill").unwrap()).unwrap();
}

#[test]
fn tour_signatures_refuse_wrong_kinds() {
    let sigs = tour();
    // A host pointer where the kernel takes a slice.
    match check_signature::<(HostPtr<AffineConfig>,)>(sigs.get("add_one").unwrap()) {
        Err(Error::LayoutMismatch(m)) => {
            assert_eq!(m.param_index, 0);
            assert_eq!(m.expected, ParamLayout::aggregate(16, 8));
            assert_eq!(m.found, ParamLayout::pointer());
        }
        other => panic!("expected LayoutMismatch, got {other:?}"),
    }
    // A slice where the kernel takes the config pointer.
    match check_signature::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>(
        sigs.get("hmm_affine").unwrap(),
    ) {
        Err(Error::LayoutMismatch(m)) => {
            assert_eq!(m.param_index, 0);
            assert_eq!(m.expected.class, ParamLayout::pointer().class);
        }
        other => panic!("expected LayoutMismatch, got {other:?}"),
    }
    // The config passed by value (8-byte struct) is not a pointer either: wrong count
    // is reported first when the arity differs.
    assert!(matches!(
        check_signature::<(Slice<u32>, SliceMut<u32>, u32, u32)>(sigs.get("iterate").unwrap()),
        Err(Error::ArgCount {
            expected: 5,
            found: 4,
            ..
        })
    ));
}

/// Never called: it compiles, which is the test. `&DeviceBuffer<T>` and
/// `&ManagedBuffer<T>` coerce to the `&CudaSlice<T>` a `Slice<T>` takes, `&mut` ones to
/// the `&mut CudaSlice<T>` of a `SliceMut<T>`, and a `HostRef<T>` is a `HostPtr<T>`
/// argument.
#[allow(dead_code)]
unsafe fn launch_abi_accepts_memory_types(
    k: &Kernel<(HostPtr<AffineConfig>, Slice<f32>, SliceMut<f32>)>,
    add: &Kernel<(SliceMut<f32>,)>,
    s: &CudaStream,
    cfg: &AffineConfig,
    x: &DeviceBuffer<f32>,
    y: &mut DeviceBuffer<f32>,
    m: &mut ManagedBuffer<f32>,
) -> Result<(), Box<dyn std::error::Error>> {
    let lc = for_num_elems(1, 1)?;
    let r = HostRef::new(s.context(), cfg)?;
    // SAFETY: never executed.
    unsafe {
        k.launch(s, lc, (r, x, y))?;
        k.launch(s, lc, (r, &*m, y))?;
        add.launch(s, lc, (m,))?;
        add.launch(s, lc, (y,))?;
    }
    Ok(())
}
