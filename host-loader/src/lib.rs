//! Load linked PTX through cudarc, check each kernel's argument layout once, launch.
//!
//! # Layers
//!
//! | layer | what it is | CUDA API |
//! |---|---|---|
//! | [`layout`] | [`ParamLayout`]: size, alignment, class of one parameter; the accept rule | none (pure data) |
//! | [`KernelParam`], [`KernelSignature`] | Rust parameter types and signature tuples; the lowering of launch arguments | none |
//! | [`check_signature`], [`Signatures`] | the verdict: Rust signature vs PTX `.entry`, no GPU needed | none |
//! | [`Module`], [`Kernel`] | load PTX, make checked handles, launch | `cuModuleLoadData`, `cuModuleGetFunction`, `cuLaunchKernel` |
//! | [`open_device`] | driver start-up that errors instead of panicking | `cuInit`, `cuDevicePrimaryCtxRetain` |
//! | `cudarc::driver` | safe/result/sys wrappers this crate builds on | all of the above |
//!
//! # Example
//!
//! ```no_run
//! use host_loader::{for_num_elems, open_device, Module, Slice, SliceMut};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let (ctx, stream) = open_device(0)?;
//! let module = Module::from_ptx_file(&ctx, "target/ptx/vecadd.ptx")?;
//! // Checked here, once: 3 parameters, each a 16-byte (ptr, len) aggregate aligned to 8.
//! let vecadd = module.kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")?;
//!
//! let a = stream.clone_htod(&[1.0f32; 1000])?;
//! let b = stream.clone_htod(&[2.0f32; 1000])?;
//! let mut c = stream.alloc_zeros::<f32>(1000)?;
//! // SAFETY: vecadd reads a[i], b[i] and writes c[i] for i < c.len() only.
//! unsafe { vecadd.launch(&stream, for_num_elems(1000, 256)?, (&a, &b, &mut c)) }?;
//! let c = stream.clone_dtoh(&c)?;
//! assert!(c.iter().all(|&x| x == 3.0));
//! # Ok(())
//! # }
//! ```
//!
//! # The ABI
//!
//! What rustc (nightly, `nvptx64-nvidia-cuda`) emits for each kernel parameter type, and
//! the Rust signature type that matches it:
//!
//! | device parameter | PTX | signature type | launch argument |
//! |---|---|---|---|
//! | `u8`/`i8`/`bool`, `u16`/`i16`, `u32`/`i32`, `u64`/`i64`/`usize` | `.u8`, `.u16`, `.u32`, `.u64` | the same type | by value |
//! | `f32`, `f64` | `.f32`, `.f64` | the same type | by value |
//! | `*const T`, `*mut T` | `.u64 .ptr .align 1` | [`Ptr<T>`], [`PtrMut<T>`] | `&CudaSlice<T>`, `&mut CudaSlice<T>` |
//! | `&[T]` | `.align 8 .b8 [16]` = `(ptr, len)` | [`Slice<T>`] | `&CudaSlice<T>` |
//! | `DisjointSlice<T>`, `&mut [T]` | `.align 8 .b8 [16]` = `(ptr, len)` | [`SliceMut<T>`] | `&mut CudaSlice<T>` |
//! | `#[repr(C)]` struct `S` by value | `.align A .b8 [S]` | `S: `[`KernelStruct`] | `S` by value |
//!
//! A slice's `len` counts elements, not bytes. What accepts what is spelled out in
//! [`ParamLayout::accepts`]: a `.u64 .ptr` takes only pointers, a plain `.u64` only
//! 8-byte integers, and a 16-byte aggregate aligned to 8 takes a slice or any 16-byte
//! `KernelStruct` aligned to 8 (the PTX cannot tell them apart).
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
#![deny(missing_docs)]
#![deny(missing_debug_implementations)]
#![deny(unsafe_op_in_unsafe_fn)]

mod error;
mod launch;
pub mod layout;
mod module;
mod param;
mod signature;

pub use error::{Error, LayoutMismatch};
pub use launch::{
    for_num_elems, validate_config, LaunchConfig, MAX_BLOCK_DIM_XY, MAX_BLOCK_DIM_Z,
    MAX_GRID_DIM_X, MAX_GRID_DIM_YZ, MAX_THREADS_PER_BLOCK,
};
pub use layout::{ParamClass, ParamLayout, ScalarKind};
pub use module::{open_device, Kernel, Module};
pub use param::{KernelParam, KernelStruct, Ptr, PtrMut, RawSlice, Slice, SliceMut};
pub use signature::{check_signature, verify_layouts, KernelSignature, Signatures};

/// The PTX-side types this crate reads signatures into, re-exported from `ptx_linker`.
pub use ptx_linker::{EntrySignature, Param, ParamKind};
