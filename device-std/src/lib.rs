//! `device-std`: a `#![no_std]` device runtime for the stock
//! `nvptx64-nvidia-cuda` target.
//!
//! | module | what it gives | follows |
//! |---|---|---|
//! | [`thread`] | special registers (`%tid`, `%ctaid`, `%ntid`, `%nctaid`, `%laneid`), index witnesses, barriers (`sync_threads*`, `sync_warp`), fences, `nanosleep` | PTX ISA 9.0 §10 "Special Registers", `bar.sync`/`bar.red`, `bar.warp.sync`, `membar` |
//! | [`index`] | [`ThreadIndex`], an unforgeable witness of the calling thread's index; the spaces [`Index1D`], [`Index2D`], [`Runtime2DIndex`], [`WarpIndex1D`], [`BlockIndex1D`] | — |
//! | [`disjoint`] | [`DisjointSlice`], an output slice each thread writes only at its own index | — |
//! | [`shared`] | [`SharedArray`], one static `.shared` allocation per declaration; [`SharedPtr`] | PTX ISA 9.0 §5.1.5 "Shared State Space" |
//! | [`dynamic_shared`] | [`DynamicSharedArray`], the launch-sized shared memory split by byte offset | CUDA `extern __shared__` |
//! | [`warp`] | shuffles, votes, match, `redux.sync`, `activemask` | `shfl.sync`, `vote.sync`, `match.sync`, `redux.sync` |
//! | [`atomic`] | scoped atomics with orderings, on global and shared memory; reductions that return nothing ([`atomic::global::add`]) | `atom` and `red` with `.sem` and `.scope` |
//! | [`cp_async`] | per-thread 4/8/16-byte asynchronous copies global → shared, in groups | `cp.async` (sm_80) |
//! | [`mma`] | tensor-core `m16n8k16` multiply-accumulate with typed fragments ([`mma::FragA`], [`mma::FragB`], [`mma::Accum`]) for `bf16`/`f16` in, `f32` out | `mma.sync` (sm_80) |
//! | [`fp8`] | the FP8 types [`F8E4M3`], [`F8E5M2`] and their paired conversions to and from `f32` ([`fp8::Fp8`]) | `cvt.rn.satfinite.e4m3x2.f32`, `cvt.rn.f16x2.e4m3x2` (sm_89) |
//! | [`mbarrier`] | [`Mbarrier`], the transaction barrier copies complete on, with its [`Phase`] | `mbarrier` (sm_80; `expect_tx` sm_90) |
//! | [`bulk`] | bulk asynchronous copies global ↔ shared, their groups, the async-proxy fence | `cp.async.bulk` (sm_90, PTX 8.0) |
//! | [`cluster`] | thread-block clusters: their registers, the cluster barrier, distributed shared memory ([`SharedArray::in_cta`]), `elect.sync` | `%cluster_*`, `barrier.cluster`, `mapa`, `ld/st/atom.shared::cluster` (sm_90) |
//! | [`tma`] | [`tma::TensorMap`]: 1D–5D tensor copies global ↔ shared, the box and the shared-memory swizzle in the type | `cp.async.bulk.tensor` (sm_90, PTX 8.0) |
//! | [`wgmma`] | warpgroup tensor-core multiply-accumulate from shared-memory tiles: typed descriptors ([`wgmma::KMajorTile`]) for `bf16`, `f16` and FP8 inputs, accumulators ([`wgmma::Accum`]), fence/commit/wait, `setmaxnreg` | `wgmma.mma_async` (sm_90a) |
//! | [`grid`] | [`grid::sync`], the grid-wide barrier of a cooperative launch | cooperative groups' `grid.sync()` |
//! | [`module_var`] | module-scope variables by name: constant memory ([`constant!`]: `ld.const`) and device globals ([`global!`]), typed records the host checks | CUDA `__constant__`, `__device__`; `.const`, `.global` |
//! | [`texture`] | bindless texture objects ([`texture::Texture`]: filtered reads, normalized coordinates, address modes) and surface objects ([`texture::Surface`]: typed texel reads and writes), 1D–3D | `tex`, `suld`, `sust`; CUDA texture/surface objects |
//! | [`print`] | [`device_println!`] through `vprintf` | CUDA device `printf` |
//! | [`math`] | the CUDA Math API for `f32` and `f64` under CUDA's names (`sinf`, `exp`, `rsqrtf`, `erf`, …), std's float methods through [`math::FloatMath`], CUDA's fast intrinsics apart in [`math::fast`]; the same bits on the GPU and the host | CUDA Math API 13.0; `fma.rn`, `sqrt.rn`, `cvt.rni` |
//! | [`prelude`] | `use device_std::prelude::*;`: [`math::FloatMath`], so `x.sin()`, `x.sqrt()` work in `#![no_std]` kernels | std's float methods |
//! | [`abi`] | [`KernelParam`], the parameter ABI and the ABI record `#[kernel]` emits | rustc's `extern "ptx-kernel"` callconv |
//! | [`layout`] | [`PlainData`], [`ValueClass`], [`KernelStruct`] and its derive, [`StructLayout`] | `#[repr(C)]` |
//! | `emulator` (feature `emulator`, host only) | runs kernels on the CPU with CUDA semantics and checks the GPU does not make | CUDA's execution model |
//!
//! # Writing a kernel
//!
//! ```ignore
//! #![no_std]
//! #![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]
//! use device_std::{kernel, thread, DisjointSlice};
//!
//! #[kernel]
//! pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
//!     let i = thread::index_1d();
//!     let k = i.get();
//!     if let Some(out) = c.get_mut(&i) {
//!         *out = a[k] + b[k];
//!     }
//! }
//! ```
//!
//! [`#[kernel]`](macro@kernel) writes the `#[no_mangle] extern "ptx-kernel"`
//! function on nvptx64 (the crate enables `feature(abi_ptx)` for it, as above)
//! and an ordinary function on the host, so a device crate also builds and
//! tests on stable. Parameters keep rustc's calling convention:
//!
//! - scalars arrive as PTX scalars (`.param .u32`, `.f32`, …), raw pointers as
//!   `.param .u64 .ptr .align 1`;
//! - `&[T]`, `&mut [T]` and `DisjointSlice<T>` arrive as **one**
//!   `.param .align 8 .b8 NAME[16]` holding `(ptr: u64, len: u64)`, `len` in
//!   elements;
//! - a `#[derive(KernelStruct)]` struct arrives as `.param .align A .b8 NAME[S]`
//!   with its own size `S` and alignment `A` (at most 16).
//!
//! A parameter type outside that list is a compile error that names it
//! ([`KernelParam`]). Next to each kernel `K` the macro writes the ABI record
//! `__kernel_abi_K` into the module ([`abi`] documents its words), which the
//! host loader reads to check parameter kinds, element sizes and value
//! classes ([`ValueClass`]: `f32` vs `u32` vs `i32`), and struct field
//! offsets, sizes and classes.
//!
//! Build kernels with `cargo xtask build-ptx`, which compiles, links and
//! validates the PTX.
//!
//! # Invariants
//!
//! **The crate has no allocator** on the device. On the host (any target
//! other than `nvptx64`) every type, trait and function exists, so device
//! crates type-check and their `#[kernel]`s compile as plain functions on
//! stable; a device function called there panics, unless the `emulator`
//! feature is on: then `emulator::launch` runs a kernel over a grid on the
//! CPU (with `std`), and every device function has a CPU model. The feature
//! changes nothing on nvptx64.
//!
//! Panics: `cargo xtask build-ptx` builds with `-Cpanic=immediate-abort` by
//! default, so a failed bounds check becomes `trap;` in place. With
//! `--panic abort`, the `#[panic_handler]` here prints
//! `panicked at FILE:LINE:COL: MESSAGE` through `vprintf`, then traps.
#![no_std]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        stdarch_nvptx,
        asm_experimental_arch,
        link_llvm_intrinsics,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem
    ),
    allow(internal_features)
)]
#![cfg_attr(not(target_arch = "nvptx64"), allow(unused_variables))]
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(emulated)]
extern crate std;

pub mod abi;
pub mod atomic;
mod bounds;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod bulk;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod cluster;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod cp_async;
pub mod disjoint;
pub mod dynamic_shared;
#[cfg(emulated)]
pub mod emulator;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_89"))]
pub mod fp8;
pub mod grid;
pub mod grid_dependency;
mod host;
pub mod index;
#[cfg(target_arch = "nvptx64")]
mod intrinsics;
pub mod layout;
pub mod ldg;
pub mod math;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mbarrier;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod mma;
pub mod module_var;
#[cfg(target_arch = "nvptx64")]
mod panic;
pub mod prelude;
pub mod print;
pub mod shared;
pub mod texture;
pub mod thread;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod tma;
pub mod vector;
pub mod warp;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
pub mod wgmma;

pub use abi::KernelParam;
pub use disjoint::{AsThreadIndex, DisjointSlice};
pub use dynamic_shared::DynamicSharedArray;
/// The 8-bit float element types (from the `float8` crate, `no_std`): `F8E4M3` and
/// `F8E5M2`, plain data with value classes of their own; conversions in [`fp8`] (sm_89).
pub use float8::{F8E4M3, F8E5M2};
/// The 16-bit float element types (from the `half` crate, `no_std`): `bf16` (bfloat16)
/// and `f16` (IEEE binary16), plain data with value classes of their own.
pub use half::{bf16, f16};
pub use index::{
    BlockIndex1D, Index1D, Index2D, IndexSpace, Runtime2DIndex, ThreadIndex, WarpIndex1D,
};
pub use layout::{FieldLayout, HasValueClass, KernelStruct, PlainData, StructLayout, ValueClass};
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub use mbarrier::{Mbarrier, Mbarriers, Phase, Phases};
pub use shared::{SharedArray, SharedPtr, SharedRegion};

/// Turns a function into a PTX kernel.
///
/// ```ignore
/// #[device_std::kernel]
/// pub fn scale(factor: f32, xs: &[f32], mut out: DisjointSlice<f32>) { ... }
/// ```
///
/// On nvptx64 this becomes `#[no_mangle] pub extern "ptx-kernel" fn scale(...)`
/// with the same body (the crate needs
/// `#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]`), plus the ABI
/// record `#[no_mangle] #[used] static __kernel_abi_scale: [u32; W]` described in
/// [`abi`]. On the host it is a plain `pub fn` with the same body, so the crate
/// type-checks on stable, and with the `emulator` feature `emulator::launch`
/// runs it over a grid on the CPU.
///
/// The attribute takes any of these arguments, comma-separated, in any order, each at
/// most once; rustc cannot write the directives they stand for, so `#[kernel]` emits a
/// `#[no_mangle]` static per kernel and ptx-linker turns it into them on the `.entry`:
///
/// - `cluster = (x, y, z)` fixes the kernel's thread-block cluster shape, in CTAs
///   (sm_90, PTX ISA 7.8; each extent 1..=8, at most 8 CTAs; static
///   `__kernel_cluster_K: [u32; 3]`): ptx-linker writes `.explicitcluster` and
///   `.reqnctapercluster x, y, z` (PTX ISA 9.0 §11.4.11-12), every launch runs in
///   clusters of that shape, and `host_loader` refuses a launch with another shape or
///   a grid that is not whole clusters.
/// - `max_threads = N` and `max_threads = N, min_blocks = M` are CUDA's
///   `__launch_bounds__(N, M)` (every target; static `__kernel_bounds_K: [u32; 2]`
///   holding `[N, M]`, `M` 0 when not given): `N`, in threads per block, is 1..=1024
///   and ptx-linker writes `.maxntid N, 1, 1` (PTX ISA 9.0 §11.4.2); `M`, in CTAs per
///   SM, is at least 1, needs `N`, and becomes `.minnctapersm M` (§11.4.4). ptxas then
///   budgets registers for blocks of `N` threads (and `M` resident CTAs per SM), which
///   also gives the kernel the register cap at entry that Hopper's `setmaxnreg`
///   (sm_90a) needs. A launch with more than `N` threads per block is refused: by the
///   driver, by `host_loader` before it (`Error::ExceedsMaxThreads`, naming the
///   kernel, the block and the bound), and by the emulator (feature `emulator`: the
///   host function first checks its block, failing the launch with
///   `EmulatorError::InvalidLaunch`).
///
/// ```ignore
/// #[device_std::kernel(max_threads = 384, min_blocks = 1, cluster = (2, 1, 1))]
/// pub fn producer_consumer(xs: &[f32], mut out: DisjointSlice<f32>) { ... }
/// ```
///
/// - `instances(NAME = <ARGS>, ...)` makes a generic kernel (type and const parameters,
///   CUDA's `template <class T, unsigned blockSize>`) emit one kernel per instance: an
///   entry `NAME` with the parameter types the arguments give, its own ABI record, and
///   a host function `NAME` for the emulator, each calling the generic function (which
///   stays an ordinary, inlined Rust function) with `ARGS`. The bindings and
///   `Module::kernel` see the instances as the kernels they are. A generic kernel
///   without `instances`, an instance with the wrong number of arguments, and
///   `instances` on a kernel that is not generic are compile errors. The other
///   arguments apply to every instance.
///
/// ```ignore
/// #[device_std::kernel(instances(block_reduce_f32 = <f32, 256>, block_reduce_u32 = <u32, 128>))]
/// pub fn block_reduce<T: Copy + Default + core::ops::Add<Output = T>, const BLOCK: usize>(
///     xs: &[T],
///     mut out: DisjointSlice<T, BlockIndex1D>,
/// ) { ... } // SharedArray::<T, BLOCK>::new() inside: one static allocation per instance
/// ```
///
/// - `dynamic_shared = N` and `dynamic_shared_per_thread = M` (either or both; every
///   target) declare the kernel's dynamic shared memory: `N + M × threads per block`
///   bytes (static `__kernel_dynamic_shared_K: [u32; 2]` holding `[N, M]`). `host_loader`
///   reads it from the PTX: a launch (`Kernel::launch`, the bindings, graphs,
///   sequences) with `shared_mem_bytes == 0` gets that size, one with less is refused
///   with the numbers (`Error::InvalidLaunch`), one with more keeps its own. Under the
///   emulator a launch with less fails with `EmulatorError::InvalidLaunch` (set
///   `LaunchConfig::with_dynamic_shared`). More than 227 KiB for the block (`max_threads`
///   threads, or one) is a compile error.
///
/// ```ignore
/// // Two f32 per thread of staging, plus a 256-byte header.
/// #[device_std::kernel(dynamic_shared = 256, dynamic_shared_per_thread = 8)]
/// pub fn stage(xs: &[f32], mut out: DisjointSlice<f32>) { ... }
/// ```
///
/// - `dims = 1` or `dims = 2` (every target; static `__kernel_dims_K: [u32; 1]`) declares
///   that every launch of the kernel is one-dimensional (grid and block extents 1 in y
///   and z) or two-dimensional (1 in z). ptx-linker then reads the special registers of
///   the other dimensions in the kernel's `.entry` as the constants they are
///   (`%tid.y` as 0, `%ntid.y` as 1, and so on; PTX ISA 9.0 §10), so that
///   [`thread::index_1d`] and `grid_stride` cost what CUDA's
///   `blockIdx.x * blockDim.x + threadIdx.x` costs, and `host_loader` refuses any launch
///   with another shape (`Error::InvalidLaunch`, naming the kernel, the grid, the block
///   and the declaration), as does the emulator (`EmulatorError::InvalidLaunch`). Use it
///   on kernels that are always launched 1D (or 2D): the index stays unique only
///   because no other launch can run. `host_loader` knows the declaration from the link
///   map or the PTX; a launch it does not check (a raw `cuLaunchKernel` of
///   `Kernel::cu_function`, another program loading the PTX) must keep the shape
///   itself.
///
/// ```ignore
/// #[device_std::kernel(dims = 1)]
/// pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) { ... }
/// ```
///
/// - `slice_align = N` (a power of two from 2 to 256; every target; static
///   `__kernel_slice_align_K: [u32; 1]`) declares that every slice parameter (`&[T]`,
///   `&mut [T]`, `DisjointSlice<T>` and their `Option`s) starts at a multiple of `N`
///   bytes, as CUDA C++ kernels that `reinterpret_cast` a `float*` to `float4*` assume.
///   On nvptx64 the kernel's code may rely on it (the entry tells the compiler, so
///   [`vector::split_vectors`] and `split_vectors_mut` of such a slice test nothing; on
///   the host, outside an emulated launch or for an empty slice, nothing is checked or
///   assumed, so `unsafe` code there must not rely on it), and
///   `host_loader` checks it at every launch it makes (`Kernel::launch`, the bindings,
///   graphs, sequences), refusing one whose non-empty slice argument starts elsewhere with
///   `Error::InvalidLaunch` (naming the kernel, the argument and its address) before the
///   driver sees it; the emulator does the same (`EmulatorError::InvalidLaunch`). An empty
///   slice always passes: `host_loader` hands every empty slice to the kernel at an
///   aligned address. Every parameter is then a plain name, not a pattern. A launch the
///   loader does not check (a raw `cuLaunchKernel` of `Kernel::cu_function`, another
///   program loading the PTX) must keep the alignment itself: a misaligned slice
///   is undefined behaviour. Source: the alignment `ld.v4`/`st.v4` need, PTX ISA 9.0
///   §9.7.9.8.
///
/// ```ignore
/// #[device_std::kernel(dims = 1, slice_align = 16)]
/// pub fn vecadd(a: &[f32], b: &[f32], c: DisjointSlice<f32>) { ... }
/// ```
///
/// Out-of-range or repeated arguments, an unknown name, a non-literal value, `dims` other than
/// 1 or 2, `slice_align` other than a power of two from 2 to 256, a `cluster` with an extent
/// above 1 past `dims` (no launch could have both), and `min_blocks` without `max_threads`
/// are compile errors at the argument.
///
/// It refuses, with a compile error: generic functions without `instances`, `async`,
/// `const`, variadic functions, an explicit `extern` ABI, a return type other than `()`, and
/// every parameter type that is not a [`KernelParam`]:
///
/// ```compile_fail
/// #[device_std::kernel]
/// pub fn bad(xs: (u32, u32)) {} // a tuple has no stable layout
/// ```
pub use device_std_macros::kernel;

/// What `#[kernel]`'s expansion calls; not an API.
#[doc(hidden)]
pub mod __private {
    /// Called first on the host by a kernel declared with `#[kernel(max_threads = N)]`:
    /// under the emulator, a block of more than `max_threads` threads fails the launch
    /// with `EmulatorError::InvalidLaunch`
    /// (the driver refuses such a launch on the GPU); otherwise, and outside an
    /// emulated launch, it does nothing.
    #[inline]
    pub fn check_max_threads(kernel: &'static str, max_threads: u32) {
        #[cfg(emulated)]
        crate::emulator::check_max_threads(kernel, max_threads);
        #[cfg(not(emulated))]
        let _ = (kernel, max_threads);
    }

    /// Called first on the host by a kernel declared with `#[kernel(dims = N)]`: under
    /// the emulator, a launch whose grid or block has an extent other than 1 past the
    /// first `N` dimensions fails with `EmulatorError::InvalidLaunch` (`host_loader`
    /// refuses it on the GPU); otherwise it does nothing.
    #[inline]
    pub fn check_launch_dims(kernel: &'static str, dims: u32) {
        #[cfg(emulated)]
        crate::emulator::check_launch_dims(kernel, dims);
        #[cfg(not(emulated))]
        let _ = (kernel, dims);
    }

    /// Called first on nvptx64, once per parameter, by every kernel whose parameters are
    /// plain names: tells the compiler that a slice parameter (`&[T]`, `DisjointSlice`,
    /// a present optional one) has a non-null start, as the ABI promises (an empty one
    /// arrives at an aligned dangling address), and, with `#[kernel(slice_align = N)]`,
    /// that it starts at a multiple of `align` bytes, which `host_loader` and the
    /// emulator check at every launch they accept. `align` is 1 without
    /// `slice_align`. Nothing for other parameters.
    ///
    /// LLVM loses `NonNull` for an address read from a `.param` aggregate, and would
    /// otherwise test it against null wherever an `Option<&T>` is built from it
    /// (`DisjointSlice::get_mut`, `<[T]>::get`).
    ///
    /// # Safety
    /// `param`, if a slice, starts at a non-null multiple of `align` (a power of two).
    #[inline(always)]
    pub unsafe fn assume_slice_param<P: crate::KernelParam>(param: &P, align: usize) {
        // An empty slice too: host_loader passes every empty slice at an aligned address.
        if let Some((start, _)) = param.slice_span() {
            // SAFETY: the caller's contract.
            unsafe { core::hint::assert_unchecked(start != 0 && start & (align - 1) == 0) };
        }
    }

    /// Called first on the host, once per parameter, by a kernel declared with
    /// `#[kernel(slice_align = N)]`: under the emulator, a non-empty slice parameter
    /// (number `index`, from 0) that does not start at a multiple of `align` bytes fails
    /// the launch with `EmulatorError::InvalidLaunch` (`host_loader` refuses it on the
    /// GPU); otherwise it does nothing.
    #[inline]
    pub fn check_slice_align<P: crate::KernelParam>(
        kernel: &'static str,
        index: usize,
        name: &'static str,
        param: &P,
        align: usize,
    ) {
        // An empty slice is let through, as on the GPU, where host_loader passes every
        // empty slice at an aligned address.
        #[cfg(emulated)]
        if let Some((start, _)) = param.slice_span().filter(|&(_, len)| len > 0) {
            crate::emulator::check_slice_align(kernel, index, name, start, align);
        }
        #[cfg(not(emulated))]
        let _ = (kernel, index, name, param, align);
    }

    /// Called first on the host by a kernel declared with `#[kernel(dynamic_shared = N,
    /// dynamic_shared_per_thread = M)]`: under the emulator, a launch whose dynamic shared
    /// memory is less than `N + M × threads per block` fails with
    /// `EmulatorError::InvalidLaunch` naming the numbers; otherwise it does nothing.
    #[inline]
    pub fn check_dynamic_shared(kernel: &'static str, bytes: u32, per_thread: u32) {
        #[cfg(emulated)]
        crate::emulator::check_dynamic_shared(kernel, bytes, per_thread);
        #[cfg(not(emulated))]
        let _ = (kernel, bytes, per_thread);
    }
}

/// Derives [`KernelStruct`] (and [`PlainData`], [`HasValueClass`], [`KernelParam`]) for a
/// `#[repr(C)]` struct of plain data; see the trait.
pub use device_std_macros::KernelStruct;
