//! [`DeviceBuffer`]: device memory for `len` elements of a plain-data type (every kernel
//! slice element type, `#[derive(KernelStruct)]` structs included), on cudarc's
//! [`CudaSlice`], freed in stream order.

use std::ops::RangeBounds;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use bytemuck::Pod;
use cudarc::driver::{
    result, sys, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DriverError,
};
use device_std::PlainData;

use super::copy::{self, bind};
use super::error::{alloc_error, driver, MemoryError};
use super::pinned::PinnedBuffer;
use super::size::{alloc_bytes, byte_len, resolve_range};

/// `len` elements of `T` in device memory: the `Vec<T>` of the GPU.
///
/// The one way to upload, allocate and read back device data for kernels, for every
/// element type a kernel slice or pointer takes: primitives, arrays of them and
/// `#[derive(KernelStruct)]` structs, padding included ([`PlainData`]).
///
/// ```no_run
/// # fn demo(stream: &std::sync::Arc<host_loader::cudarc::driver::CudaStream>) -> Result<(), Box<dyn std::error::Error>> {
/// use host_loader::memory::DeviceBuffer;
///
/// #[repr(C)]
/// #[derive(Clone, Copy, Debug, PartialEq, device_std::KernelStruct)]
/// struct Particle {
///     id: u16, // then 6 bytes of padding
///     pos: f64,
///     alive: u8, // then 7 bytes of padding
/// }
///
/// let host = vec![Particle { id: 1, pos: 0.5, alive: 1 }; 1024];
/// let ps = DeviceBuffer::from_host(stream, &host)?; // upload
/// let mut out = DeviceBuffer::<Particle>::zeroed(stream, host.len())?; // allocate
/// // kernels.step(stream, cfg, &ps, &mut out)  (`&buf` is a `&CudaSlice<Particle>`)
/// let back: Vec<Particle> = out.to_host_vec(stream)?; // read back
/// # let _ = back; Ok(()) }
/// ```
///
/// A thin owner of cudarc's [`CudaSlice<T>`]: it derefs to it, so every cudarc API and
/// every [`Slice<T>`](crate::Slice) / [`SliceMut<T>`](crate::SliceMut) /
/// [`Ptr<T>`](crate::Ptr) / [`PtrMut<T>`](crate::PtrMut) parameter takes `&buf` /
/// `&mut buf`, in the generated bindings' arguments, in launch tuples, and in graph and
/// sequence registrations. What it adds: every [`PlainData`] element type (each field
/// accepts any bit pattern, so device bytes can always be read back; the driver copies
/// padding bytes through pointers, and no Rust reference ever reads them), sizes checked
/// before allocating, and typed errors instead of cudarc's panics for length mismatches.
///
/// A type whose bytes are not all valid values (`bool`, `char`, references, enums, a
/// struct without `#[derive(KernelStruct)]`) is refused at compile time ("`bool` is not
/// plain data"):
///
/// ```compile_fail
/// # fn demo(stream: &std::sync::Arc<host_loader::cudarc::driver::CudaStream>) -> Result<(), Box<dyn std::error::Error>> {
/// let flags = host_loader::DeviceBuffer::from_host(stream, &[true, false])?;
/// # Ok(()) }
/// ```
///
/// cudarc's own `clone_htod`, `alloc_zeros` and `clone_dtoh` need cudarc's `DeviceRepr`
/// (and `ValidAsZeroBits`), which a struct defined in your device crate cannot get: the
/// orphan rule keeps the host crate from implementing a foreign trait for a foreign type.
/// The compiler then says "the trait bound `Particle: DeviceRepr` is not satisfied"; use
/// this type instead ([`from_host`](Self::from_host), [`zeroed`](Self::zeroed),
/// [`to_host_vec`](Self::to_host_vec)).
///
/// | CUDA C++ | here |
/// |---|---|
/// | `cudaMallocAsync` + `cudaMemsetAsync(0)` | [`DeviceBuffer::zeroed`] |
/// | `cudaMallocAsync` + `cudaMemcpy` H→D | [`DeviceBuffer::from_host`] |
/// | `cudaMemcpy` D→H | [`DeviceBuffer::copy_to_host`], [`DeviceBuffer::to_host_vec`] |
/// | `cudaMemcpyAsync` with pinned memory | [`DeviceBuffer::copy_from_pinned_async`], [`DeviceBuffer::copy_to_pinned_async`] |
/// | `ptr + offset`, `n` | [`DeviceBuffer::view`], [`DeviceBuffer::view_mut`] (cudarc's `CudaView`/`CudaViewMut`) |
/// | `cudaFreeAsync` | `drop` |
///
/// # When a drop synchronizes
///
/// Dropping frees the memory **in stream order** (cudarc's `CudaSlice` drop):
/// 1. when several streams exist (cudarc's multi-stream mode, entered by
///    `CudaContext::new_stream` or `CudaStream::fork`), the allocation stream is made to
///    wait (`cuStreamWaitEvent`, on the GPU) for the last recorded read and write of the
///    buffer on any stream;
/// 2. `cuMemFreeAsync` is enqueued on the allocation stream ([`DeviceBuffer::stream`]).
///
/// Neither step blocks the host: a drop returns in microseconds even while a kernel that
/// uses the buffer is still running on another stream, and the memory goes back to the
/// pool only after that kernel. The host **does** block in one case: a device without
/// memory-pool support (`CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED` = 0), where cudarc
/// synchronizes the allocation stream and calls `cuMemFree`. Freed memory stays in the
/// device's pool up to its release threshold (0 by default: returned to the driver at the
/// next synchronization); see [`set_release_threshold`](super::set_release_threshold).
#[derive(Debug)]
pub struct DeviceBuffer<T> {
    slice: CudaSlice<T>,
}

impl<T: PlainData> DeviceBuffer<T> {
    /// `len` zeroed elements on `stream`'s device: `cuMemAllocAsync` (or `cuMemAlloc`
    /// without memory pools) and `cuMemsetD8Async` on `stream`; returns without waiting.
    ///
    /// Errors: [`MemoryError::SizeOverflow`] when `len * size_of::<T>()` overflows,
    /// before any CUDA call; [`MemoryError::OutOfMemory`]; [`MemoryError::Driver`].
    pub fn zeroed(stream: &Arc<CudaStream>, len: usize) -> Result<Self, MemoryError> {
        let mut buf = Self::alloc(stream, len)?;
        let bytes = buf.num_bytes();
        if bytes > 0 {
            let (ptr, record) = buf.slice.device_ptr_mut(stream);
            // SAFETY: `ptr` addresses `bytes` bytes of this allocation, in `stream`'s
            // context, which `alloc` made current.
            let res = unsafe { result::memset_d8_async(ptr, 0, bytes, stream.cu_stream()) };
            drop(record);
            res.map_err(driver("cuMemsetD8Async (DeviceBuffer::zeroed)"))?;
        }
        Ok(buf)
    }

    /// A device copy of `src`, allocated on `stream` and filled by
    /// [`copy_from_host`](Self::copy_from_host) (returns when the copy is done).
    ///
    /// Errors: as [`zeroed`](Self::zeroed) and [`copy_from_host`](Self::copy_from_host).
    pub fn from_host(stream: &Arc<CudaStream>, src: &[T]) -> Result<Self, MemoryError> {
        let mut buf = Self::alloc(stream, src.len())?;
        buf.copy_from_host(stream, src)?;
        Ok(buf)
    }

    /// A new `Vec` holding the buffer's contents, copied on `stream` after the work
    /// enqueued there (and, across streams, after the buffer's last recorded write), and
    /// waited for (`cuMemcpyDtoHAsync` + `cuStreamSynchronize`, into the `Vec`'s fresh
    /// memory: no zero fill first). The readback for every element type, where cudarc's
    /// `clone_dtoh` needs `T: DeviceRepr`.
    ///
    /// Errors: [`MemoryError::Driver`] (errors of earlier asynchronous work on `stream`
    /// included); see [`memory::to_host_vec`](super::to_host_vec).
    pub fn to_host_vec(&self, stream: &CudaStream) -> Result<Vec<T>, MemoryError> {
        copy::to_host_vec(stream, &self.slice)
    }

    /// Copies the buffer into `dst` on `stream` and waits (`cuMemcpyDtoHAsync` +
    /// `cuStreamSynchronize`), see [`copy_to_host`](super::copy_to_host).
    ///
    /// Errors: [`MemoryError::LengthMismatch`] when `dst.len() != self.len()`, before any
    /// CUDA call; [`MemoryError::Driver`].
    pub fn copy_to_host(&self, stream: &CudaStream, dst: &mut [T]) -> Result<(), MemoryError> {
        copy::copy_to_host(stream, &self.slice, dst)
    }

    /// Overwrites the buffer with `src` on `stream` and waits (`cuMemcpyHtoDAsync` +
    /// `cuStreamSynchronize`), see [`copy_from_host`](super::copy_from_host).
    ///
    /// Errors: [`MemoryError::LengthMismatch`] when `src.len() != self.len()`, before any
    /// CUDA call; [`MemoryError::Driver`].
    pub fn copy_from_host(&mut self, stream: &CudaStream, src: &[T]) -> Result<(), MemoryError> {
        copy::copy_from_host(stream, &mut self.slice, src)
    }

    /// Overwrites the buffer with device memory `src` (a buffer, `CudaSlice` or view) on
    /// `stream`, asynchronously (`cuMemcpyDtoDAsync`).
    ///
    /// Errors: [`MemoryError::LengthMismatch`]; [`MemoryError::Driver`].
    pub fn copy_from_device<Src: DevicePtr<T>>(
        &mut self,
        stream: &Arc<CudaStream>,
        src: &Src,
    ) -> Result<(), MemoryError> {
        copy::copy_device(stream, &mut self.slice, src)
    }

    /// Allocates `len` elements of uninitialized memory; every constructor fills them
    /// before handing the buffer out.
    fn alloc(stream: &Arc<CudaStream>, len: usize) -> Result<Self, MemoryError> {
        let bytes = byte_len::<T>(len)?;
        bind(stream)?;
        let pooled = stream.context().has_async_alloc();
        // SAFETY: the context is current; the memory is filled by the caller before it is
        // read. `has_async_alloc` picks the same allocator cudarc's `CudaSlice` drop frees
        // with (`cuMemFreeAsync` or `cuMemFree`).
        let ptr = unsafe {
            if pooled {
                result::malloc_async(stream.cu_stream(), alloc_bytes(bytes))
            } else {
                result::malloc_sync(alloc_bytes(bytes))
            }
        }
        .map_err(|e| {
            let what = if pooled {
                "device allocation (cuMemAllocAsync)"
            } else {
                "device allocation (cuMemAlloc)"
            };
            alloc_error(what, bytes, true, e)
        })?;
        // SAFETY: `ptr` is a live allocation of at least `len * size_of::<T>()` bytes made
        // by the allocator `CudaSlice`'s drop frees with, on `stream`.
        let slice = catch_unwind(AssertUnwindSafe(|| unsafe {
            stream.upgrade_device_ptr::<T>(ptr, len)
        }));
        match slice {
            Ok(slice) => Ok(DeviceBuffer { slice }),
            Err(_) => {
                // cudarc panicked creating the buffer's events; give the memory back.
                // SAFETY: `ptr` came from the allocator matched here and is not shared.
                let _ = unsafe {
                    if pooled {
                        result::free_async(ptr, stream.cu_stream())
                    } else {
                        result::free_sync(ptr)
                    }
                };
                Err(MemoryError::Driver {
                    context: "cuEventCreate for a new DeviceBuffer".into(),
                    source: DriverError(sys::CUresult::CUDA_ERROR_UNKNOWN),
                })
            }
        }
    }
}

/// The transfers through pinned memory, whose [`PinnedBuffer`] takes `bytemuck::Pod`
/// elements.
impl<T: PlainData + Pod> DeviceBuffer<T> {
    /// A device copy of the pinned buffer `src`, enqueued on `stream`
    /// ([`copy_from_pinned_async`](Self::copy_from_pinned_async)).
    ///
    /// Errors: as [`zeroed`](Self::zeroed) and
    /// [`copy_from_pinned_async`](Self::copy_from_pinned_async).
    pub fn from_pinned_async(
        stream: &Arc<CudaStream>,
        src: &PinnedBuffer<T>,
    ) -> Result<Self, MemoryError> {
        let mut buf = Self::alloc(stream, src.len())?;
        buf.copy_from_pinned_async(stream, src)?;
        Ok(buf)
    }

    /// Enqueues a copy of all of `src` (pinned) into the buffer on `stream`
    /// (`cuMemcpyHtoDAsync`), see [`copy_from_pinned_async`](super::copy_from_pinned_async).
    ///
    /// Errors: [`MemoryError::LengthMismatch`]; [`MemoryError::Driver`].
    pub fn copy_from_pinned_async(
        &mut self,
        stream: &CudaStream,
        src: &PinnedBuffer<T>,
    ) -> Result<(), MemoryError> {
        copy::copy_from_pinned_async(stream, &mut self.slice, src, ..)
    }

    /// Enqueues a copy of the buffer into all of `dst` (pinned) on `stream`
    /// (`cuMemcpyDtoHAsync`), see [`copy_to_pinned_async`](super::copy_to_pinned_async).
    ///
    /// Errors: [`MemoryError::LengthMismatch`]; [`MemoryError::Driver`].
    pub fn copy_to_pinned_async(
        &self,
        stream: &CudaStream,
        dst: &mut PinnedBuffer<T>,
    ) -> Result<(), MemoryError> {
        copy::copy_to_pinned_async(stream, &self.slice, dst, ..)
    }
}

impl<T> DeviceBuffer<T> {
    /// Length in elements.
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// `true` when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.slice.is_empty()
    }

    /// Size in bytes (`len * size_of::<T>()`).
    pub fn num_bytes(&self) -> usize {
        self.slice.num_bytes()
    }

    /// The stream the buffer was allocated on; its drop frees it there.
    pub fn stream(&self) -> &Arc<CudaStream> {
        self.slice.stream()
    }

    /// A read-only view of elements `range` (cudarc's [`CudaView`], which copies and
    /// [`copy_to_host`](super::copy_to_host) accept).
    ///
    /// Errors: [`MemoryError::OutOfBounds`] (cudarc's `slice` would panic).
    pub fn view(&self, range: impl RangeBounds<usize>) -> Result<CudaView<'_, T>, MemoryError> {
        let r = resolve_range("DeviceBuffer::view", range, self.len())?;
        self.slice
            .try_slice(r.clone())
            .ok_or(MemoryError::OutOfBounds {
                op: "DeviceBuffer::view",
                start: r.start,
                end: r.end,
                len: self.len(),
            })
    }

    /// A writable view of elements `range` (cudarc's [`CudaViewMut`]).
    ///
    /// Errors: [`MemoryError::OutOfBounds`].
    pub fn view_mut(
        &mut self,
        range: impl RangeBounds<usize>,
    ) -> Result<CudaViewMut<'_, T>, MemoryError> {
        let len = self.len();
        let r = resolve_range("DeviceBuffer::view_mut", range, len)?;
        self.slice
            .try_slice_mut(r.clone())
            .ok_or(MemoryError::OutOfBounds {
                op: "DeviceBuffer::view_mut",
                start: r.start,
                end: r.end,
                len,
            })
    }

    /// The buffer's device address, for FFI (a CUDA C++ library, a driver call):
    /// `cudaMalloc`'s pointer as the driver API's `CUdeviceptr`.
    ///
    /// Getting it orders the buffer's earlier writes on other streams before later
    /// work on [`stream`](Self::stream) (cudarc's event tracking, as a launch does).
    /// The address stays valid while the buffer lives; work the caller enqueues
    /// through it is not tracked: put it on [`stream`](Self::stream), or synchronize
    /// before the buffer is dropped (its free is stream-ordered on that stream).
    pub fn cu_deviceptr(&self) -> sys::CUdeviceptr {
        let (ptr, _record) = self.slice.device_ptr(self.slice.stream());
        ptr
    }

    /// The cudarc slice this buffer owns.
    pub fn as_cuda_slice(&self) -> &CudaSlice<T> {
        &self.slice
    }

    /// The cudarc slice this buffer owns, writable.
    pub fn as_cuda_slice_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.slice
    }

    /// Gives up the wrapper and returns cudarc's slice (which frees the same way).
    pub fn into_cuda_slice(self) -> CudaSlice<T> {
        self.slice
    }
}

impl<T: PlainData> From<CudaSlice<T>> for DeviceBuffer<T> {
    /// Adopts a slice allocated by cudarc.
    fn from(slice: CudaSlice<T>) -> Self {
        DeviceBuffer { slice }
    }
}

super::forward_to_cuda_slice!(DeviceBuffer);

impl<T> AsRef<CudaSlice<T>> for DeviceBuffer<T> {
    fn as_ref(&self) -> &CudaSlice<T> {
        &self.slice
    }
}

impl<T> AsMut<CudaSlice<T>> for DeviceBuffer<T> {
    fn as_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.slice
    }
}
