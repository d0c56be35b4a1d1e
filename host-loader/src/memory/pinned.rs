//! [`PinnedBuffer`]: page-locked host memory (`cuMemHostAlloc`), the source and target of
//! truly asynchronous copies.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

use bytemuck::Pod;
use cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream, PinnedHostSlice};

use super::error::{alloc_error, driver, MemoryError};
use super::size::{alloc_bytes, byte_len};

/// Options of a pinned allocation (the `Flags` of `cuMemHostAlloc`). The default (all
/// off) is what `cudaMallocHost` gives.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PinnedFlags {
    /// `CU_MEMHOSTALLOC_WRITECOMBINED`: faster host-to-device transfers on some systems,
    /// but host reads become very slow (uncached). Only for buffers the host only writes.
    pub write_combined: bool,
    /// `CU_MEMHOSTALLOC_PORTABLE`: pinned for every context, not just this one.
    pub portable: bool,
}

impl PinnedFlags {
    /// The `cuMemHostAlloc` flag bits.
    pub fn bits(self) -> u32 {
        let mut bits = 0;
        if self.write_combined {
            bits |= sys::CU_MEMHOSTALLOC_WRITECOMBINED;
        }
        if self.portable {
            bits |= sys::CU_MEMHOSTALLOC_PORTABLE;
        }
        bits
    }
}

/// `len` elements of `T` in page-locked host memory, usable by asynchronous copies.
///
/// The CUDA C++ counterpart is `cudaMallocHost` / `cudaFreeHost`. The allocation itself is
/// cudarc's [`PinnedHostSlice`] (made with `cuMemHostAlloc`, freed with `cuMemFreeHost`);
/// this type adds a `Pod` element type, zero-initialization, checked sizes, and an event
/// that is recorded after **every** asynchronous copy (cudarc records only when several
/// streams exist), so host access can never race a copy still in flight:
///
/// - [`as_slice`](Self::as_slice) and [`as_mut_slice`](Self::as_mut_slice) first wait for
///   the last copy that used the buffer (`cuEventSynchronize`);
/// - dropping it waits for that copy too, then frees the memory (**a drop blocks** until
///   the copies that use it have finished).
///
/// Copies: [`copy_from_pinned_async`](super::copy_from_pinned_async),
/// [`copy_to_pinned_async`](super::copy_to_pinned_async), or the methods of
/// [`DeviceBuffer`](super::DeviceBuffer) that wrap them.
pub struct PinnedBuffer<T> {
    ptr: *mut T,
    len: usize,
    /// Recorded after every asynchronous copy that reads or writes this buffer.
    event: CudaEvent,
    /// Owns the page-locked bytes; dropped (freed) after `Drop::drop` has waited.
    _host: PinnedHostSlice<u8>,
    _elem: PhantomData<T>,
}

// SAFETY: the buffer owns its memory like a `Vec<T>`; `&self` gives only shared reads and
// `&mut self` exclusive access, each after the event wait; `CudaEvent` is Send + Sync.
unsafe impl<T: Send> Send for PinnedBuffer<T> {}
// SAFETY: as above; shared references only read.
unsafe impl<T: Sync> Sync for PinnedBuffer<T> {}

impl<T> fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("ptr", &self.ptr)
            .finish()
    }
}

impl<T: Pod> PinnedBuffer<T> {
    /// `len` zeroed elements of pinned memory (`cuMemHostAlloc` with no flags, then a host
    /// fill with zeros, which also touches every page).
    ///
    /// Errors: [`MemoryError::SizeOverflow`] when `len * size_of::<T>()` overflows;
    /// [`MemoryError::OutOfMemory`] when the driver cannot pin that much;
    /// [`MemoryError::Driver`] for other failures.
    pub fn zeroed(ctx: &Arc<CudaContext>, len: usize) -> Result<Self, MemoryError> {
        Self::zeroed_with_flags(ctx, len, PinnedFlags::default())
    }

    /// Like [`zeroed`](Self::zeroed) with `cuMemHostAlloc` `flags`.
    pub fn zeroed_with_flags(
        ctx: &Arc<CudaContext>,
        len: usize,
        flags: PinnedFlags,
    ) -> Result<Self, MemoryError> {
        let bytes = byte_len::<T>(len)?;
        let event = ctx.new_event(None).map_err(driver("cuEventCreate"))?;
        // SAFETY: the bytes are zero-filled below before anything reads them.
        let mut host =
            unsafe { ctx.alloc_pinned_with_flags::<u8>(alloc_bytes(bytes), flags.bits()) }
                .map_err(|e| {
                    alloc_error("pinned host allocation (cuMemHostAlloc)", bytes, false, e)
                })?;
        let base = host
            .as_mut_ptr()
            .map_err(driver("cuEventSynchronize (new pinned buffer)"))?;
        // SAFETY: `base` points at `alloc_bytes(bytes) >= bytes` writable bytes that
        // nothing else references yet.
        unsafe { std::ptr::write_bytes(base, 0, bytes) };
        let ptr = base.cast::<T>();
        if !ptr.is_aligned() {
            // cuMemHostAlloc returns page-aligned memory; this guards the cast anyway.
            return Err(MemoryError::Unsupported {
                ordinal: ctx.ordinal(),
                feature: "pinned memory aligned for the element type",
                attribute: "cuMemHostAlloc alignment",
            });
        }
        Ok(PinnedBuffer {
            ptr,
            len,
            event,
            _host: host,
            _elem: PhantomData,
        })
    }

    /// Pinned memory holding a copy of `src`.
    ///
    /// Errors: as [`zeroed`](Self::zeroed).
    pub fn from_slice(ctx: &Arc<CudaContext>, src: &[T]) -> Result<Self, MemoryError> {
        let mut buf = Self::zeroed(ctx, src.len())?;
        buf.as_mut_slice()?.copy_from_slice(src);
        Ok(buf)
    }

    /// The contents, after waiting for the last asynchronous copy that used the buffer
    /// (`cuEventSynchronize`; immediate when none is pending).
    ///
    /// Errors: [`MemoryError::Driver`] when the wait fails (e.g. an earlier kernel
    /// faulted).
    pub fn as_slice(&self) -> Result<&[T], MemoryError> {
        self.sync()?;
        // SAFETY: `ptr` is valid for `len` initialized elements (zero-filled at creation,
        // `T: Pod`), aligned; no copy is in flight (event waited) and none can start
        // while `&self` is borrowed immutably except reads (copies to device only read).
        Ok(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }

    /// The contents for writing, after waiting for the last asynchronous copy.
    ///
    /// Errors: as [`as_slice`](Self::as_slice).
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], MemoryError> {
        self.sync()?;
        // SAFETY: as in `as_slice`; `&mut self` excludes every other access.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }
}

impl<T> PinnedBuffer<T> {
    /// Length in elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes (`len * size_of::<T>()`).
    pub fn num_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// The context the memory is pinned for.
    pub fn context(&self) -> &Arc<CudaContext> {
        self.event.context()
    }

    /// Waits until no asynchronous copy uses the buffer any more (`cuEventSynchronize`).
    ///
    /// Errors: [`MemoryError::Driver`].
    pub fn sync(&self) -> Result<(), MemoryError> {
        self.event
            .synchronize()
            .map_err(driver("cuEventSynchronize (pinned buffer)"))
    }

    /// Makes `stream` wait for the last recorded use (`cuStreamWaitEvent`).
    pub(crate) fn wait_on(&self, stream: &CudaStream) -> Result<(), MemoryError> {
        stream
            .wait(&self.event)
            .map_err(driver("cuStreamWaitEvent (pinned buffer)"))
    }

    /// Records `stream`'s current work as the last use (`cuEventRecord`).
    pub(crate) fn record_on(&self, stream: &CudaStream) -> Result<(), MemoryError> {
        self.event
            .record(stream)
            .map_err(driver("cuEventRecord (pinned buffer)"))
    }

    /// The bytes of elements `range`, for an enqueued copy. Reading them is sound only for
    /// the DMA engine; the host must not look before the event.
    ///
    /// `range` must lie inside `0..len` (callers resolve it first).
    pub(crate) fn raw_range(&self, range: &Range<usize>) -> &[u8] {
        let size = std::mem::size_of::<T>();
        // SAFETY: `range` is inside the allocation (caller), so the byte range is too;
        // the slice is only handed to the driver, which reads it as plain bytes.
        unsafe {
            std::slice::from_raw_parts(
                self.ptr.cast::<u8>().add(range.start * size),
                range.len() * size,
            )
        }
    }

    /// Like [`raw_range`](Self::raw_range), writable, for a device-to-host copy.
    pub(crate) fn raw_range_mut(&mut self, range: &Range<usize>) -> &mut [u8] {
        let size = std::mem::size_of::<T>();
        // SAFETY: as in `raw_range`; `&mut self` makes this the only reference.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.ptr.cast::<u8>().add(range.start * size),
                range.len() * size,
            )
        }
    }
}

impl<T> Drop for PinnedBuffer<T> {
    /// Waits for the last asynchronous copy that uses the buffer, then frees it
    /// (`cuMemFreeHost`, through cudarc). An error of the wait is stored in the context
    /// (see `CudaContext::check_err`).
    fn drop(&mut self) {
        let ctx = self.event.context().clone();
        ctx.record_err(self.event.synchronize());
    }
}
