//! Host memory and data movement: device buffers, stream-ordered frees, pinned and
//! managed memory, pageable-memory access (HMM), and an overlapping copy/compute pipeline.
//!
//! Built on cudarc: allocation, views, streams, events and memory pools are cudarc's
//! (`CudaSlice`, `CudaView(Mut)`, `CudaStream::fork`/`join`, `CudaEvent`,
//! `PinnedHostSlice`); this module adds what cudarc lacks: device buffers of every kernel
//! element type (device-std's `PlainData`: primitives, arrays, `#[derive(KernelStruct)]`
//! structs with padding, where cudarc's copies need its `DeviceRepr`), checked
//! sizes and typed errors instead of panics, host access that can never race an
//! in-flight copy, managed memory with prefetch/advice and a free-memory budget, the
//! pageable-memory check, and the pipeline.
//!
//! # The chapter, CUDA C++ → here
//!
//! | CUDA C++ | here | CUDA API underneath |
//! |---|---|---|
//! | `cudaMallocAsync`, `cudaFreeAsync` | [`DeviceBuffer::zeroed`], `drop` | `cuMemAllocAsync`, `cuMemFreeAsync` |
//! | `cudaMemcpy` H→D / D→H | [`DeviceBuffer::from_host`], [`DeviceBuffer::to_host_vec`], [`DeviceBuffer::copy_to_host`], [`copy_from_host`], [`copy_to_host`], [`to_host_vec`] | `cuMemcpyHtoDAsync` / `cuMemcpyDtoHAsync` + `cuStreamSynchronize` |
//! | `cudaMemcpyAsync` D→D | [`copy_device`] | `cuMemcpyDtoDAsync` |
//! | `cudaMallocHost` | [`PinnedBuffer`] | `cuMemHostAlloc` |
//! | `cudaMemcpyAsync` with pinned memory | [`copy_from_pinned_async`], [`copy_to_pinned_async`] | `cuMemcpyHtoDAsync`, `cuMemcpyDtoHAsync` |
//! | `cudaStreamCreate`, default stream | `CudaContext::new_stream`, `CudaContext::default_stream` (cudarc) | `cuStreamCreate` |
//! | fork/join of streams, `cudaEventRecord`, `cudaStreamWaitEvent` | `CudaStream::fork`, `CudaStream::join`, `CudaStream::record_event`, `CudaStream::wait` (cudarc) | `cuEventRecord`, `cuStreamWaitEvent` |
//! | double-buffered copy/compute overlap | [`Pipeline`] | all of the above |
//! | `cudaMallocManaged` | [`ManagedBuffer`] (checked by [`check_managed_budget`]) | `cuMemGetInfo`, `cuMemAllocManaged` |
//! | `cudaMemPrefetchAsync`, `cudaMemAdvise` | [`ManagedBuffer::prefetch`], [`ManagedBuffer::advise`] | `cuMemPrefetchAsync`, `cuMemAdvise` |
//! | `cudaDevAttrPageableMemoryAccess`, a host pointer in a kernel | [`pageable_memory_access`], [`HostRef`] for a [`HostPtr`] parameter | `cuDeviceGetAttribute` |
//! | `cudaMemPoolSetAttribute(ReleaseThreshold)` | [`set_release_threshold`], [`pool_usage`] | `cuMemPoolSetAttribute` |
//! | `cudaDeviceGetAttribute` for all of the above | [`MemoryCaps::query`] | `cuDeviceGetAttribute`, `cuMemGetInfo` |
//!
//! # Launch arguments
//!
//! [`DeviceBuffer<T>`] and [`ManagedBuffer<T>`] deref to cudarc's `CudaSlice<T>`, so
//! `&buf` is the launch argument of a [`Slice<T>`](crate::Slice) or [`Ptr<T>`](crate::Ptr)
//! parameter and `&mut buf` of a [`SliceMut<T>`](crate::SliceMut) or
//! [`PtrMut<T>`](crate::PtrMut) parameter, with the same event tracking as a plain
//! `CudaSlice`. A [`HostPtr<T>`] parameter takes a [`HostRef<T>`] (host memory read in
//! place by the kernel, where the device supports it).
//!
//! ```no_run
//! use host_loader::memory::{DeviceBuffer, ManagedBuffer};
//! use host_loader::{for_num_elems, open_device, Module, Slice, SliceMut};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let (ctx, stream) = open_device(0)?;
//! let module = Module::from_ptx_file(&ctx, "target/ptx/vecadd-kernels.ptx")?;
//! let vecadd = module.kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")?;
//! let a = DeviceBuffer::from_host(&stream, &[1.0f32; 1000])?;
//! let b = ManagedBuffer::from_host(&stream, &[2.0f32; 1000])?;
//! let mut c = DeviceBuffer::<f32>::zeroed(&stream, 1000)?;
//! // SAFETY: vecadd reads a[i], b[i] and writes c[i] for i < c.len() only.
//! unsafe { vecadd.launch(&stream, for_num_elems(1000, 256)?, (&a, &b, &mut c)) }?;
//! assert_eq!(c.to_host_vec(&stream)?, vec![3.0; 1000]);
//! assert_eq!(b.as_slice()?[0], 2.0); // host access waits for the kernel
//! # Ok(())
//! # }
//! ```
//!
//! The element type and mutability are checked by the compiler: an `f64` buffer for a
//! `Slice<f32>` does not compile,
//!
//! ```compile_fail
//! # use host_loader::{memory::DeviceBuffer, *};
//! # fn f(k: &Kernel<(Slice<f32>,)>, s: &cudarc::driver::CudaStream, a: &DeviceBuffer<f64>) {
//! unsafe { k.launch(s, for_num_elems(1, 1).unwrap(), (a,)) }.unwrap();
//! # }
//! ```
//!
//! nor does a shared borrow for a `SliceMut<f32>`,
//!
//! ```compile_fail
//! # use host_loader::{memory::DeviceBuffer, *};
//! # fn f(k: &Kernel<(SliceMut<f32>,)>, s: &cudarc::driver::CudaStream, a: &DeviceBuffer<f32>) {
//! unsafe { k.launch(s, for_num_elems(1, 1).unwrap(), (a,)) }.unwrap();
//! # }
//! ```
//!
//! nor a host reference where the kernel takes a device slice:
//!
//! ```compile_fail
//! # use host_loader::{memory::HostRef, *};
//! # fn f(k: &Kernel<(Slice<f32>,)>, s: &cudarc::driver::CudaStream, r: HostRef<'_, f32>) {
//! unsafe { k.launch(s, for_num_elems(1, 1).unwrap(), (r,)) }.unwrap();
//! # }
//! ```
//!
//! # What blocks the host
//!
//! | operation | blocks until |
//! |---|---|
//! | drop of a [`DeviceBuffer`] | never, with memory pools (`cuMemFreeAsync` after GPU-side waits); without: its stream is done |
//! | drop of a [`PinnedBuffer`] | the last asynchronous copy that uses it is done |
//! | drop of a [`ManagedBuffer`] | its recorded uses and its stream are done (`cuMemFree` is not stream ordered) |
//! | [`copy_to_host`], [`copy_from_host`], [`to_host_vec`] and the `DeviceBuffer` methods on slices and `Vec`s | the copy is done |
//! | `*_pinned_async`, [`copy_device`], [`DeviceBuffer::zeroed`], [`Pipeline::run`] | nothing (enqueued) |
//! | [`PinnedBuffer::as_slice`] / [`as_mut_slice`](PinnedBuffer::as_mut_slice) | the last copy that uses it is done |
//! | [`ManagedBuffer::as_slice`] / [`as_mut_slice`](ManagedBuffer::as_mut_slice) | the GPU work that uses it is done |
//! | a launch with a [`HostPtr`] argument | the kernel is done |

/// `Deref`/`DerefMut` to the wrapped `CudaSlice` (field `slice`) and cudarc's
/// `DeviceSlice`, `DevicePtr`, `DevicePtrMut`, so a buffer is a launch and copy
/// argument wherever a `CudaSlice` is.
macro_rules! forward_to_cuda_slice {
    ($buffer:ident) => {
        impl<T> std::ops::Deref for $buffer<T> {
            type Target = cudarc::driver::CudaSlice<T>;
            fn deref(&self) -> &cudarc::driver::CudaSlice<T> {
                &self.slice
            }
        }

        impl<T> std::ops::DerefMut for $buffer<T> {
            fn deref_mut(&mut self) -> &mut cudarc::driver::CudaSlice<T> {
                &mut self.slice
            }
        }

        impl<T> cudarc::driver::DeviceSlice<T> for $buffer<T> {
            fn len(&self) -> usize {
                self.slice.len()
            }
            fn stream(&self) -> &std::sync::Arc<cudarc::driver::CudaStream> {
                self.slice.stream()
            }
        }

        impl<T> cudarc::driver::DevicePtr<T> for $buffer<T> {
            fn device_ptr<'a>(
                &'a self,
                stream: &'a cudarc::driver::CudaStream,
            ) -> (
                cudarc::driver::sys::CUdeviceptr,
                cudarc::driver::SyncOnDrop<'a>,
            ) {
                self.slice.device_ptr(stream)
            }
        }

        impl<T> cudarc::driver::DevicePtrMut<T> for $buffer<T> {
            fn device_ptr_mut<'a>(
                &'a mut self,
                stream: &'a cudarc::driver::CudaStream,
            ) -> (
                cudarc::driver::sys::CUdeviceptr,
                cudarc::driver::SyncOnDrop<'a>,
            ) {
                self.slice.device_ptr_mut(stream)
            }
        }
    };
}
use forward_to_cuda_slice;

mod buffer;
mod caps;
mod copy;
mod error;
mod hmm;
mod managed;
mod pinned;
mod pipeline;
mod pool;
mod size;

pub use buffer::DeviceBuffer;
pub use caps::MemoryCaps;
pub use copy::{
    copy_device, copy_from_host, copy_from_pinned_async, copy_to_host, copy_to_pinned_async,
    to_host_vec,
};
pub use error::MemoryError;
pub use hmm::{pageable_memory_access, HostPtr, HostRef};
pub use managed::{
    check_managed_budget, managed_reserve, Advice, Location, ManagedBuffer, MIN_MANAGED_RESERVE,
};
pub use pinned::{PinnedBuffer, PinnedFlags};
pub use pipeline::Pipeline;
pub use pool::{pool_usage, set_release_threshold, PoolUsage};
pub use size::{byte_len, chunks, resolve_range};
