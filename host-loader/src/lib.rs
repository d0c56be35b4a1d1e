//! Load linked PTX through cudarc, check each kernel's argument layout once, launch.
//!
//! # Layers
//!
//! | layer | what it is | CUDA API |
//! |---|---|---|
//! | [`layout`] | [`ParamLayout`]: size, alignment, class of one parameter; the accept rule | none (pure data) |
//! | [`abi_record`] | [`AbiRecord`]: the per-kernel record `#[kernel]` emits (kinds, element sizes and value classes, struct fields) | none |
//! | [`KernelParam`], [`KernelSignature`] | Rust parameter types and signature tuples; the lowering of launch arguments | none |
//! | [`check_signature`], [`Signatures`] | the verdict: Rust signature vs PTX `.entry` and ABI record, no GPU needed | none |
//! | [`Module`] | load PTX (file, embedded, with a link map), a cubin or a fatbin, with JIT options | `cuModuleLoadDataEx` |
//! | [`fatbin`] | a multi-architecture build (`build-ptx --arch sm_80,sm_90a`): the image the device runs, checked against its own PTX and link map | `cuDeviceGetAttribute`, `cuModuleLoadData` |
//! | [`Kernel`] | checked handle; launch with limits checked and the dynamic shared memory opt-in set | `cuModuleGetFunction`, `cuFuncGetAttribute`, `cuFuncGetParamInfo`, `cuFuncSetAttribute`, `cuLaunchKernel` |
//! | [`LaunchAttributes`] | programmatic dependent launch, launch priority, cluster shape (checked against the grid, the kernel's compiled shape and the device); stream priorities are cudarc's (`CudaContext::new_stream_with_priority`, range from `cudarc::driver::result::stream::get_priority_range`) | `cuLaunchKernelEx`, `cuOccupancyMaxPotentialClusterSize` |
//! | [`tma`] | tensor maps for the TMA, encoded after the driver's rules are checked, compared with the kernel's record | `cuTensorMapEncodeTiled` |
//! | [`sequence`] | many launches on one stream with registered buffers: cross-stream ordering once per buffer (at registration and at the end), not per launch | `cuStreamWaitEvent`, `cuLaunchKernel`, `cuEventRecord` |
//! | [`graph`] | typed CUDA graphs: stream capture of typed launches, replay, typed update of a kernel node | `cuStreamBeginCapture`, `cuStreamEndCapture`, `cuGraphInstantiateWithFlags`, `cuGraphLaunch`, `cuGraphExecKernelNodeSetParams`, `cuGraphExecUpdate` |
//! | [`open_device`] | driver start-up that errors instead of panicking | `cuInit`, `cuDevicePrimaryCtxRetain` |
//! | `cudarc::driver` | safe/result/sys wrappers this crate builds on (buffers, streams, events) | all of the above |
//!
//! # Example
//!
//! ```no_run
//! use host_loader::{for_num_elems, open_device, DeviceBuffer, Module, Slice, SliceMut};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let (ctx, stream) = open_device(0)?;
//! let module = Module::from_ptx_file(&ctx, "target/ptx/vecadd-kernels.ptx")?;
//! // Checked here, once: 3 parameters, each a 16-byte (ptr, len) aggregate aligned to 8,
//! // and, with the kernel's ABI record, two `&[f32]` and one `DisjointSlice<f32>`.
//! let vecadd = module.kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")?;
//!
//! let a = DeviceBuffer::from_host(&stream, &[1.0f32; 1000])?; // upload
//! let b = DeviceBuffer::from_host(&stream, &[2.0f32; 1000])?;
//! let mut c = DeviceBuffer::<f32>::zeroed(&stream, 1000)?; // allocate
//! // SAFETY: vecadd reads a[i], b[i] and writes c[i] for i < c.len() only.
//! unsafe { vecadd.launch(&stream, for_num_elems(1000, 256)?, (&a, &b, &mut c)) }?;
//! let c = c.to_host_vec(&stream)?; // read back
//! assert!(c.iter().all(|&x| x == 3.0));
//! # Ok(())
//! # }
//! ```
//!
//! # Device memory
//!
//! [`DeviceBuffer<T>`] is the one form for kernel data, for every element type a kernel's
//! slice or pointer takes: integers, floats, arrays of them and `#[derive(KernelStruct)]`
//! structs, padding included (device-std's [`PlainData`]). Upload with
//! [`DeviceBuffer::from_host`], allocate with [`DeviceBuffer::zeroed`], read back with
//! [`DeviceBuffer::to_host_vec`] (or [`copy_to_host`](DeviceBuffer::copy_to_host) into a
//! slice you have); pass `&buf` / `&mut buf` wherever a kernel takes `&CudaSlice<T>` /
//! `&mut CudaSlice<T>` (launch tuples, generated bindings, graph and sequence
//! registrations): the buffer derefs to cudarc's `CudaSlice<T>`.
//!
//! cudarc's `clone_htod`, `alloc_zeros` and `clone_dtoh` work for the primitives, but
//! need its `DeviceRepr` trait, which no host crate can implement for a struct defined in
//! its device crate (the orphan rule: both are foreign there). For such a struct the
//! compiler says ``the trait bound `Particle: DeviceRepr` is not satisfied``; the
//! [`DeviceBuffer`] calls above are the way:
//!
//! ```no_run
//! # fn demo(stream: &std::sync::Arc<host_loader::cudarc::driver::CudaStream>) -> Result<(), Box<dyn std::error::Error>> {
//! use host_loader::DeviceBuffer;
//! #[repr(C)]
//! #[derive(Clone, Copy, Debug, PartialEq, device_std::KernelStruct)]
//! struct Particle { id: u16, pos: f64 } // 6 bytes of padding after `id`
//!
//! let ps = DeviceBuffer::from_host(stream, &[Particle { id: 7, pos: 0.5 }; 256])?;
//! assert_eq!(ps.to_host_vec(stream)?[0], Particle { id: 7, pos: 0.5 });
//! # Ok(()) }
//! ```
//!
//! ```compile_fail
//! # fn demo(stream: &std::sync::Arc<host_loader::cudarc::driver::CudaStream>) -> Result<(), Box<dyn std::error::Error>> {
//! #[repr(C)]
//! #[derive(Clone, Copy, device_std::KernelStruct)]
//! struct Particle { id: u16, pos: f64 }
//! let ps = stream.clone_htod(&[Particle { id: 7, pos: 0.5 }; 256])?; // no DeviceRepr
//! # Ok(()) }
//! ```
//!
//! # The ABI
//!
//! What rustc (nightly, `nvptx64-nvidia-cuda`) emits for each kernel parameter type, and
//! the Rust signature type that matches it:
//!
//! | device parameter | PTX | record kind | signature type | launch argument |
//! |---|---|---|---|---|
//! | `u8`/`i8`, `u16`/`i16`, `u32`/`i32`, `u64`/`i64`/`usize` | `.u8`, `.u16`, `.u32`, `.u64` | 1 | the same type | by value |
//! | `f32`, `f64` | `.f32`, `.f64` | 1 | the same type | by value |
//! | `*const T`, `*mut T` | `.u64 .ptr .align 1` | 2 | [`Ptr<T>`], [`PtrMut<T>`] | `&CudaSlice<T>`, `&mut CudaSlice<T>` (`&buf`, `&mut buf` of a [`DeviceBuffer<T>`]) |
//! | `*const *const T` (a pointer table) | `.u64 .ptr .align 1` | 2 | [`Ptr<u64>`] | `&CudaSlice<u64>` of device addresses |
//! | `*mut c_void` (untyped) | `.u64 .ptr .align 1` | 2 | [`PtrMut<T>`], any `T` | `&mut CudaSlice<T>` |
//! | `&[T]` | `.align 8 .b8 [16]` = `(ptr, len)` | 3 | [`Slice<T>`] | `&CudaSlice<T>` (`&buf` of a [`DeviceBuffer<T>`]) |
//! | `DisjointSlice<T>`, `&mut [T]` | `.align 8 .b8 [16]` = `(ptr, len)` | 4 | [`SliceMut<T>`] | `&mut CudaSlice<T>` (`&mut buf`) |
//! | `#[derive(KernelStruct)]` struct `S` by value | `.align A .b8 [size]` | 5 | [`Struct<S>`] | `S` by value |
//! | `tma::TensorMap<T, RANK, B0, ...>` | `.u64 .ptr .align 1` (the map's address) | 6 | [`tma::TensorMap<'static, T, RANK, B0, ...>`](tma::TensorMap) | `&tma::TensorMap` |
//!
//! A slice's `len` counts elements, not bytes.
//!
//! # What is checked, and against what
//!
//! The PTX `.entry` shows byte sizes and alignments only: [`ParamLayout::accepts`] says
//! what it takes (a `.u64 .ptr` only pointers, a plain `.u64` only 8-byte integers, a
//! 16-byte aggregate aligned to 8 a slice or any 16-byte struct aligned to 8).
//!
//! Kernels built with `device_std`'s `#[kernel]` also carry an ABI record
//! ([`abi_record`]), and with it [`Module::kernel`] refuses what the PTX cannot tell
//! apart: a [`Slice<T>`] for a `DisjointSlice<T>` (or the reverse), a slice or pointer
//! whose element size differs (`Slice<f64>` for `&[f32]`) or whose element has another
//! value class of the same size (`Slice<u32>` or `Slice<i32>` for `&[f32]`, `u32` for
//! `i32`: [`ValueClass`]), and a [`Struct<T>`] whose fields sit at other offsets than the
//! device struct's or, at the same offsets and sizes, have other classes (two fields
//! swapped, `f32` for `i32`). Classes are compared only when both sides know theirs: a
//! nested struct, or a type whose [`HasValueClass`] says nothing, is opaque and compared
//! by size; an array has its element's class; `bool` is not `u8`; a kernel's raw-pointer
//! pointee accepts a host `u64` (a device address); a kernel's `c_void` pointee accepts
//! any (the class table is in [`abi_record`]). **PTX without records** (hand-written, or
//! built without `#[kernel]`) falls back to the PTX-only check, and [`Kernel::launch`]'s
//! safety contract then covers element types and field order.
//!
//! Launch argument types follow from the signature: the compiler rejects
//! `(&a, &b, &c)` for `(Slice<f32>, Slice<f32>, SliceMut<f32>)` because the last one
//! must be `&mut`:
//!
//! ```compile_fail
//! # use host_loader::*;
//! # fn f(k: &Kernel<(Slice<f32>, Slice<f32>, SliceMut<f32>)>, s: &cudarc::driver::CudaStream,
//! #      a: &cudarc::driver::CudaSlice<f32>, b: &cudarc::driver::CudaSlice<f32>,
//! #      c: &cudarc::driver::CudaSlice<f32>) {
//! let cfg = for_num_elems(1, 1).unwrap();
//! unsafe { k.launch(s, cfg, (a, b, c)) }.unwrap();
//! # }
//! ```
//!
//! and an `f64` buffer where the signature says `f32`:
//!
//! ```compile_fail
//! # use host_loader::*;
//! # fn f(k: &Kernel<(Slice<f32>, u32)>, s: &cudarc::driver::CudaStream,
//! #      a: &cudarc::driver::CudaSlice<f64>) {
//! let cfg = for_num_elems(1, 1).unwrap();
//! unsafe { k.launch(s, cfg, (a, 7u32)) }.unwrap();
//! # }
//! ```
//!
//! and a struct that does not derive `KernelStruct`:
//!
//! ```compile_fail
//! # use host_loader::*;
//! #[repr(C)]
//! #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
//! struct NotDerived { a: u32 }
//! let _ = <Struct<NotDerived> as KernelParam>::LAYOUT;
//! ```
//!
//! while the right types compile:
//!
//! ```no_run
//! # use host_loader::*;
//! # fn f(k: &Kernel<(Slice<f32>, Slice<f32>, SliceMut<f32>, u32)>, s: &cudarc::driver::CudaStream,
//! #      a: &cudarc::driver::CudaSlice<f32>, b: &cudarc::driver::CudaSlice<f32>,
//! #      c: &mut cudarc::driver::CudaSlice<f32>) {
//! let cfg = for_num_elems(1, 1).unwrap();
//! // SAFETY: the kernel stays within the buffers' lengths.
//! unsafe { k.launch(s, cfg, (a, b, c, 7)) }.unwrap();
//! # }
//! ```
//!
//! # Generated bindings
//!
//! A host crate's `build.rs` can generate one typed method per kernel from the kernel
//! crate's source (`gpu_build::BuildScript`, the build-time crate beside this one). With
//! the bindings of this repository's fixture kernel crate
//! (`tests/data/fixture_bindings.rs`, whose `vecadd` takes `&[f32]`, `&[f32]`,
//! `DisjointSlice<f32>`), the right buffers compile ([`DeviceBuffer`]s, as here, or
//! cudarc's `CudaSlice`s):
//!
//! ```no_run
//! mod generated {
//! #   #![allow(dead_code)]
//!     include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/fixture_bindings.rs"));
//! }
//! use host_loader::DeviceBuffer;
//! fn run(
//!     k: &generated::HostLoaderFixtureKernels,
//!     s: &cudarc::driver::CudaStream,
//!     a: &DeviceBuffer<f32>,
//!     c: &mut DeviceBuffer<f32>,
//! ) -> Result<(), host_loader::Error> {
//!     let cfg = host_loader::for_num_elems(1, 1)?;
//!     // SAFETY: vecadd stays within its buffers.
//!     unsafe { k.vecadd(s, cfg, a, a, c) }
//! }
//! ```
//!
//! and an `f64` buffer for a `&[f32]` parameter does not:
//!
//! ```compile_fail
//! mod generated {
//! #   #![allow(dead_code)]
//!     include!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/fixture_bindings.rs"));
//! }
//! fn run(
//!     k: &generated::HostLoaderFixtureKernels,
//!     s: &cudarc::driver::CudaStream,
//!     a: &cudarc::driver::CudaSlice<f64>,
//!     c: &mut cudarc::driver::CudaSlice<f32>,
//! ) -> Result<(), host_loader::Error> {
//!     let cfg = host_loader::for_num_elems(1, 1)?;
//!     unsafe { k.vecadd(s, cfg, a, a, c) }
//! }
//! ```
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod abi_record;
mod declared;
mod device;
mod error;
pub mod fatbin;
pub mod graph;
mod image;
mod kernel;
mod launch;
pub mod layout;
pub mod memory;
mod message;
mod module;
mod module_var;
mod param;
mod param_info;
mod record_check;
pub mod sequence;
mod signature;
pub mod texture;
pub mod tma;

pub use abi_record::{AbiField, AbiKind, AbiParam, AbiRecord, AbiRecordError, AbiRecordProblem};
/// The `cudarc` this crate is built on (0.19, driver API), re-exported so that a host crate
/// and generated bindings name the same `CudaSlice` and `CudaStream` types without
/// repeating its version and features.
pub use cudarc;
pub use device::open_device;
pub use error::Error;
pub use kernel::Kernel;
pub use launch::{
    for_num_elems, validate_config, DeviceLimits, DynamicShared, LaunchAttributes, LaunchConfig,
    RawLaunchError, DEFAULT_SHARED_MEMORY_PER_BLOCK, MAX_BLOCK_DIM_XY, MAX_BLOCK_DIM_Z,
    MAX_GRID_DIM_X, MAX_GRID_DIM_YZ, MAX_THREADS_PER_BLOCK,
};
pub use layout::{LayoutMismatch, ParamClass, ParamLayout, ScalarKind};
/// Device memory for kernel data: upload, allocate, read back (see [the crate
/// docs](crate#device-memory)).
pub use memory::DeviceBuffer;
pub use module::{EmbeddedArch, EmbeddedFatbin, EmbeddedPtx, LoadOptions, Module};
pub use module_var::{ModuleVar, VarSpace};
pub use param::{
    HostAbi, KernelParam, OptSlice, OptSliceMut, Ptr, PtrMut, RawSlice, Slice, SliceMut, Struct,
};
pub use record_check::{AbiMismatch, AbiMismatchDetail};
pub use signature::{
    check_signature, check_signature_with_record, verify_layouts, KernelSignature, Signatures,
};

/// The device-side struct trait, layout and value-class types, re-exported from
/// `device_std`: derive `device_std::KernelStruct` on a `#[repr(C)]` struct to pass it as
/// a [`Struct<T>`]; [`HasValueClass`] gives the element class of a [`Slice<T>`] or
/// [`Ptr<T>`]; [`PlainData`] is the element bound of a [`DeviceBuffer<T>`].
pub use device_std::{
    FieldLayout, HasValueClass, KernelStruct, PlainData, StructLayout, ValueClass,
};

/// Embeds a kernel crate's linked PTX in the binary, as an [`EmbeddedPtx`] for
/// [`Module::from_embedded`].
///
/// `include_ptx!("vecadd-kernels")` reads, at compile time, `vecadd-kernels.ptx` (and
/// `vecadd-kernels.map.json` when it is there) — or, from a build for several
/// architectures, `vecadd-kernels.fatbin.json` and the fatbin, PTX and link maps it names
/// ([`EmbeddedPtx::fatbin`]) — from the first of these folders that has either:
/// 1. `$HOST_LOADER_PTX_DIR`, when set (then only there);
/// 2. `$OUT_DIR`, where a build script using `gpu_build::BuildScript` writes;
/// 3. `$CARGO_TARGET_DIR/ptx`, when set;
/// 4. `target/ptx` in the calling crate's folder (`CARGO_MANIFEST_DIR`) or a folder above
///    it up to the workspace root (the first `Cargo.toml` with `[workspace]`), i.e. the
///    workspace's `target/ptx`, where `cargo xtask build-ptx` writes; never above the
///    workspace, so an unrelated module elsewhere is not picked up.
///
/// `include_ptx!("fixture", dir = "tests/data")` reads `tests/data/fixture.ptx` (and its
/// map) relative to the calling crate's `Cargo.toml` instead, for PTX committed with the
/// sources.
///
/// When no folder has it, compilation fails with a message that says where it looked,
/// names a module there whose name differs only in `-`/`_`, and how to build it:
///
/// ```compile_fail
/// static K: host_loader::EmbeddedPtx = host_loader::include_ptx!("no-such-kernels");
/// ```
///
/// The files are read with `include_str!`, so
/// cargo rebuilds the host crate when they change.
///
/// ```no_run
/// static KERNELS: host_loader::EmbeddedPtx =
///     host_loader::include_ptx!("fixture", dir = "tests/data");
/// # fn main() -> Result<(), host_loader::Error> {
/// let (ctx, _stream) = host_loader::open_device(0)?;
/// let module = host_loader::Module::from_embedded(&ctx, &KERNELS)?;
/// # Ok(()) }
/// ```
pub use host_loader_macros::include_ptx;

/// The PTX-side types this crate reads signatures into, re-exported from `ptx_linker`.
pub use ptx_linker::{EntrySignature, Param, ParamKind};
