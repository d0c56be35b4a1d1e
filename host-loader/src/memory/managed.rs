//! [`ManagedBuffer`]: unified (managed) memory, readable and writable from host and
//! kernels, with prefetch and advice; every allocation checked against free device
//! memory first.

use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use bytemuck::Pod;
use cudarc::driver::{
    result, sys, CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DriverError,
};

use super::copy::bind;
use super::error::{alloc_error, driver, MemoryError};
use super::size::{alloc_bytes, byte_len};

/// The smallest amount of device memory a managed allocation leaves free: 1 GiB.
pub const MIN_MANAGED_RESERVE: usize = 1 << 30;

/// Device memory, in bytes, that managed allocations must leave free on a device with
/// `total` bytes: the larger of [`MIN_MANAGED_RESERVE`] and `total / 16` (8.8 GB on a
/// 141 GB H200).
pub fn managed_reserve(total: usize) -> usize {
    MIN_MANAGED_RESERVE.max(total / 16)
}

/// Decides whether a managed allocation of `requested` bytes fits: it must not exceed
/// `free - managed_reserve(total)`. Pure arithmetic; [`ManagedBuffer`] calls it with the
/// numbers from `cuMemGetInfo` before `cuMemAllocManaged`.
///
/// Managed memory is not limited by free device memory: the driver accepts requests far
/// larger and pages on demand. Over-subscribing a GPU that way makes pages thrash between
/// host and device, and on a shared machine it can stall the GPU for everyone, so this
/// crate refuses it.
///
/// Errors: [`MemoryError::ManagedBudget`] with the numbers.
///
/// ```
/// use host_loader::memory::check_managed_budget;
/// const GB: usize = 1 << 30;
/// assert!(check_managed_budget(2 * GB, 40 * GB, 80 * GB).is_ok());
/// assert!(check_managed_budget(39 * GB, 40 * GB, 80 * GB).is_err()); // reserve is 5 GiB
/// ```
pub fn check_managed_budget(
    requested: usize,
    free: usize,
    total: usize,
) -> Result<(), MemoryError> {
    let reserve = managed_reserve(total);
    let allowed = free.saturating_sub(reserve);
    if requested <= allowed {
        Ok(())
    } else {
        Err(MemoryError::ManagedBudget {
            requested,
            free,
            reserve,
            allowed,
        })
    }
}

/// Where managed pages should live, for [`ManagedBuffer::prefetch`] and [`Advice`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// The buffer's own device (`CU_MEM_LOCATION_TYPE_DEVICE`, its ordinal).
    Device,
    /// Host memory (`CU_MEM_LOCATION_TYPE_HOST`).
    Host,
}

/// A hint to the unified-memory driver (`cuMemAdvise`), see [`ManagedBuffer::advise`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    /// `CU_MEM_ADVISE_SET_READ_MOSTLY`: reads make local read-only copies of pages.
    ReadMostly,
    /// `CU_MEM_ADVISE_UNSET_READ_MOSTLY`.
    UnsetReadMostly,
    /// `CU_MEM_ADVISE_SET_PREFERRED_LOCATION`: pages prefer to live there.
    PreferredLocation(Location),
    /// `CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION`.
    UnsetPreferredLocation,
    /// `CU_MEM_ADVISE_SET_ACCESSED_BY`: keep the pages mapped for that processor.
    AccessedBy(Location),
    /// `CU_MEM_ADVISE_UNSET_ACCESSED_BY`.
    UnsetAccessedBy(Location),
}

/// `len` elements of `T` in managed memory (`cuMemAllocManaged`, attached globally):
/// one address valid on the host and in every kernel of the context.
///
/// It derefs to a cudarc [`CudaSlice<T>`], so `&buf` / `&mut buf` are
/// [`Slice<T>`](crate::Slice) / [`SliceMut<T>`](crate::SliceMut) launch arguments and
/// work with every cudarc copy; launches record their reads and writes on the slice's
/// events like any device buffer.
///
/// Host access goes through [`as_slice`](Self::as_slice) and
/// [`as_mut_slice`](Self::as_mut_slice), which first wait for the GPU work that uses the
/// buffer (so the host never reads a page a kernel is still writing).
///
/// Every constructor checks the request against free device memory first
/// ([`check_managed_budget`]) and never over-subscribes the GPU.
///
/// **Dropping blocks**: it waits for the work that uses the buffer (its allocation stream
/// after the recorded reads and writes), then calls `cuMemFree`, which is not stream
/// ordered for managed memory.
#[derive(Debug)]
pub struct ManagedBuffer<T> {
    slice: ManuallyDrop<CudaSlice<T>>,
    /// The managed address, valid on the host and on the device.
    addr: u64,
    concurrent_access: bool,
}

impl<T: Pod> ManagedBuffer<T> {
    /// `len` zeroed elements of managed memory, associated with `stream` (the stream
    /// whose synchronization host access and drop use). The zeros are written by the
    /// host, so the pages start out resident in host memory.
    ///
    /// Errors: [`MemoryError::SizeOverflow`]; [`MemoryError::ManagedBudget`] when the
    /// request does not fit in free device memory minus the reserve (checked before any
    /// allocation); [`MemoryError::Unsupported`] when the device has no managed memory
    /// (`CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY` = 0); [`MemoryError::OutOfMemory`];
    /// [`MemoryError::Driver`].
    pub fn zeroed(stream: &Arc<CudaStream>, len: usize) -> Result<Self, MemoryError> {
        let mut buf = Self::alloc(stream, len)?;
        let ptr = buf.host_ptr();
        // SAFETY: a fresh allocation of at least `num_bytes` bytes that no GPU work uses;
        // managed memory is host-accessible.
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, buf.num_bytes()) };
        Ok(buf)
    }

    /// Managed memory holding a copy of `src` (written by the host).
    ///
    /// Errors: as [`zeroed`](Self::zeroed).
    pub fn from_host(stream: &Arc<CudaStream>, src: &[T]) -> Result<Self, MemoryError> {
        let mut buf = Self::alloc(stream, src.len())?;
        let ptr = buf.host_ptr();
        // SAFETY: `src.len()` elements fit (allocated for exactly that many); no GPU work
        // uses the fresh allocation; the ranges cannot overlap (new allocation).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), ptr, src.len()) };
        Ok(buf)
    }

    /// The contents, for the host, after waiting for the GPU writes of the buffer: with
    /// several streams, the allocation stream waits for the recorded write and is
    /// synchronized; with one stream (or event tracking off) the whole context is
    /// synchronized, as CUDA C++ code calls `cudaDeviceSynchronize` before touching
    /// managed memory.
    ///
    /// Errors: [`MemoryError::Driver`] when the wait fails.
    pub fn as_slice(&self) -> Result<&[T], MemoryError> {
        if self.tracked() {
            let (_, record) = self.slice.device_ptr(self.slice.stream());
            drop(record);
        }
        self.host_sync()?;
        // SAFETY: managed memory is valid on the host for `len` elements, aligned (the
        // driver aligns to at least 256 bytes), initialized (zeroed or copied at creation,
        // `T: Pod`); the GPU writes recorded so far have finished, and a new write needs
        // `&mut self`.
        Ok(unsafe { std::slice::from_raw_parts(self.slice_ptr(), self.slice.len()) })
    }

    /// The contents for writing from the host, after waiting for the recorded GPU reads
    /// and writes of the buffer (as [`as_slice`](Self::as_slice) does for writes).
    ///
    /// Errors: [`MemoryError::Driver`].
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], MemoryError> {
        if self.tracked() {
            let stream = self.slice.stream().clone();
            let (_, record) = self.slice.device_ptr_mut(&stream);
            drop(record);
        }
        self.host_sync()?;
        let len = self.slice.len();
        // SAFETY: as in `as_slice`; every recorded GPU access has finished and
        // `&mut self` excludes new ones.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.host_ptr(), len) })
    }

    fn alloc(stream: &Arc<CudaStream>, len: usize) -> Result<Self, MemoryError> {
        let bytes = byte_len::<T>(len)?;
        let ctx = stream.context();
        bind(stream)?;
        let attr = |a, name| {
            ctx.attribute(a).map_err(|source| MemoryError::Driver {
                context: format!("cuDeviceGetAttribute({name})"),
                source,
            })
        };
        use sys::CUdevice_attribute as A;
        if attr(A::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, "MANAGED_MEMORY")? == 0 {
            return Err(MemoryError::Unsupported {
                ordinal: ctx.ordinal(),
                feature: "managed memory",
                attribute: "CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY",
            });
        }
        let concurrent_access = attr(
            A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
            "CONCURRENT_MANAGED_ACCESS",
        )? != 0;
        let (free, total) = ctx.mem_get_info().map_err(driver("cuMemGetInfo"))?;
        check_managed_budget(bytes, free, total)?;
        // SAFETY: the context is current; the caller initializes the memory before it is
        // read.
        let ptr = unsafe {
            result::malloc_managed(
                alloc_bytes(bytes),
                sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL,
            )
        }
        .map_err(|e| alloc_error("managed allocation (cuMemAllocManaged)", bytes, true, e))?;
        // SAFETY: `ptr` is a live managed allocation of at least `bytes` bytes; the
        // `CudaSlice` made from it is never dropped as such (`ManuallyDrop`): `Drop` takes
        // the pointer back with `leak` and frees it with `cuMemFree`.
        let slice = catch_unwind(AssertUnwindSafe(|| unsafe {
            stream.upgrade_device_ptr::<T>(ptr, len)
        }));
        if (ptr as usize) & (std::mem::align_of::<T>() - 1) != 0 {
            // cuMemAllocManaged aligns to at least 256 bytes; a stricter element
            // alignment cannot be honoured for host access.
            if let Ok(slice) = slice {
                let _ = slice.leak();
            }
            // SAFETY: `ptr` is ours alone and nothing has used it.
            let _ = unsafe { result::memory_free(ptr) };
            return Err(MemoryError::Unsupported {
                ordinal: ctx.ordinal(),
                feature: "managed memory aligned for the element type",
                attribute: "cuMemAllocManaged alignment",
            });
        }
        match slice {
            Ok(slice) => Ok(ManagedBuffer {
                slice: ManuallyDrop::new(slice),
                addr: ptr,
                concurrent_access,
            }),
            Err(_) => {
                // SAFETY: `ptr` is ours alone and nothing has used it.
                let _ = unsafe { result::memory_free(ptr) };
                Err(MemoryError::Driver {
                    context: "cuEventCreate for a new ManagedBuffer".into(),
                    source: DriverError(sys::CUresult::CUDA_ERROR_UNKNOWN),
                })
            }
        }
    }
}

impl<T> ManagedBuffer<T> {
    /// Length in elements.
    pub fn len(&self) -> usize {
        self.slice.len()
    }

    /// `true` when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.slice.is_empty()
    }

    /// Size in bytes.
    pub fn num_bytes(&self) -> usize {
        self.slice.num_bytes()
    }

    /// The stream the buffer is associated with (host access and drop synchronize it).
    pub fn stream(&self) -> &Arc<CudaStream> {
        self.slice.stream()
    }

    /// The context the buffer lives in.
    pub fn context(&self) -> &Arc<CudaContext> {
        self.slice.context()
    }

    /// Migrates the pages to `to`, asynchronously on `stream` (`cuMemPrefetchAsync`,
    /// ordered after the earlier recorded writes of the buffer). Prefetching before a
    /// kernel avoids its page faults; prefetching to the host before host access avoids
    /// the host's.
    ///
    /// Errors: [`MemoryError::Unsupported`] when the device cannot take part in
    /// concurrent managed access (`CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS` = 0:
    /// prefetching is not available there); [`MemoryError::Driver`].
    pub fn prefetch(&self, stream: &CudaStream, to: Location) -> Result<(), MemoryError> {
        if !self.concurrent_access {
            return Err(self.no_concurrent_access("prefetching managed memory"));
        }
        if self.num_bytes() == 0 {
            return Ok(());
        }
        bind(stream)?;
        let location = self.location(to);
        let (ptr, record) = self.slice.device_ptr(stream);
        // SAFETY: `ptr` and `num_bytes` describe (part of) this managed allocation; the
        // context is current. Migration does not change the contents.
        let res = unsafe {
            result::mem_prefetch_async(ptr, self.num_bytes(), location, stream.cu_stream())
        };
        drop(record);
        res.map_err(driver("cuMemPrefetchAsync"))
    }

    /// Gives the unified-memory driver a hint about the whole buffer (`cuMemAdvise`;
    /// takes effect immediately, not in stream order).
    ///
    /// Errors: [`MemoryError::Unsupported`] for [`Location::Host`] preferences or
    /// accessed-by hints on a device without concurrent managed access;
    /// [`MemoryError::Driver`].
    pub fn advise(&self, advice: Advice) -> Result<(), MemoryError> {
        use sys::CUmem_advise as M;
        let (code, to) = match advice {
            Advice::ReadMostly => (M::CU_MEM_ADVISE_SET_READ_MOSTLY, Location::Device),
            Advice::UnsetReadMostly => (M::CU_MEM_ADVISE_UNSET_READ_MOSTLY, Location::Device),
            Advice::PreferredLocation(l) => (M::CU_MEM_ADVISE_SET_PREFERRED_LOCATION, l),
            Advice::UnsetPreferredLocation => {
                (M::CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, Location::Device)
            }
            Advice::AccessedBy(l) => (M::CU_MEM_ADVISE_SET_ACCESSED_BY, l),
            Advice::UnsetAccessedBy(l) => (M::CU_MEM_ADVISE_UNSET_ACCESSED_BY, l),
        };
        if to == Location::Host && !self.concurrent_access {
            return Err(self.no_concurrent_access("managed-memory advice for the host"));
        }
        if self.num_bytes() == 0 {
            return Ok(());
        }
        self.context()
            .bind_to_thread()
            .map_err(driver("cuCtxSetCurrent"))?;
        let location = self.location(to);
        // SAFETY: the range is this managed allocation; advice never changes contents.
        unsafe { result::mem_advise(self.addr, self.num_bytes(), code, location) }
            .map_err(driver("cuMemAdvise"))
    }

    /// Whether cudarc records this buffer's reads and writes on events (several streams
    /// exist and event tracking is on).
    fn tracked(&self) -> bool {
        self.slice.context().is_managing_stream_synchronization()
    }

    /// The wait before host access. With event tracking, the allocation stream has just
    /// been made to wait for the buffer's recorded accesses (by `device_ptr` for reads,
    /// `device_ptr_mut` for writes), so synchronizing that stream suffices. Without it
    /// (one stream, or tracking off) the whole context is synchronized, as CUDA C++ code
    /// calls `cudaDeviceSynchronize` before touching managed memory.
    fn host_sync(&self) -> Result<(), MemoryError> {
        if self.tracked() {
            self.slice
                .stream()
                .synchronize()
                .map_err(driver("cuStreamSynchronize (managed host access)"))
        } else {
            self.slice
                .context()
                .synchronize()
                .map_err(driver("cuCtxSynchronize (managed host access)"))
        }
    }

    fn location(&self, to: Location) -> sys::CUmemLocation {
        match to {
            Location::Device => sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: self.slice.context().ordinal() as i32,
            },
            Location::Host => sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
                id: 0,
            },
        }
    }

    fn no_concurrent_access(&self, feature: &'static str) -> MemoryError {
        MemoryError::Unsupported {
            ordinal: self.slice.context().ordinal(),
            feature,
            attribute: "CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS",
        }
    }

    fn slice_ptr(&self) -> *const T {
        self.addr as usize as *const T
    }

    fn host_ptr(&mut self) -> *mut T {
        self.addr as usize as *mut T
    }
}

super::forward_to_cuda_slice!(ManagedBuffer);

impl<T> Drop for ManagedBuffer<T> {
    /// Waits for the recorded uses, synchronizes the allocation stream, then `cuMemFree`.
    /// Errors are stored in the context (`CudaContext::check_err`).
    fn drop(&mut self) {
        // SAFETY: `slice` is taken exactly once, here, and never used again.
        let slice = unsafe { ManuallyDrop::take(&mut self.slice) };
        let stream = slice.stream().clone();
        let ctx = stream.context().clone();
        // `leak` makes the allocation stream wait for the recorded reads and writes and
        // releases the events without freeing the memory.
        let ptr = slice.leak();
        ctx.record_err(ctx.bind_to_thread());
        ctx.record_err(stream.synchronize());
        if !ctx.is_managing_stream_synchronization() {
            ctx.record_err(ctx.synchronize());
        }
        // SAFETY: `ptr` came from `cuMemAllocManaged`; every use has completed (the stream
        // waited for the recorded ones and was synchronized); it is freed once.
        ctx.record_err(unsafe { result::memory_free(ptr) });
    }
}
