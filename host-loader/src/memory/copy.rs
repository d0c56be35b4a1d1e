//! Transfers between host and device memory, on any device slice cudarc knows
//! ([`CudaSlice`](cudarc::driver::CudaSlice), [`CudaView`](cudarc::driver::CudaView),
//! [`CudaViewMut`](cudarc::driver::CudaViewMut)) and on this module's buffers.
//!
//! | function | CUDA call | returns when |
//! |---|---|---|
//! | [`copy_to_host`] | `cuMemcpyDtoHAsync` + `cuStreamSynchronize` | the data is in `dst` |
//! | [`copy_from_host`] | `cuMemcpyHtoDAsync` + `cuStreamSynchronize` | the copy is done |
//! | [`copy_device`] | `cuMemcpyDtoDAsync` (peer copy across contexts) | enqueued |
//! | [`copy_from_pinned_async`] | `cuMemcpyHtoDAsync` | enqueued |
//! | [`copy_to_pinned_async`] | `cuMemcpyDtoHAsync` | enqueued |
//!
//! The slice forms synchronize the stream before returning because the host slice is
//! only borrowed for the call: from pinned memory an asynchronous copy would still be
//! reading (or writing) it after the borrow ended. The pinned forms stay asynchronous;
//! the [`PinnedBuffer`] records an event and waits for it before the host touches it
//! again. On the device side every copy waits for earlier work on the buffer and records
//! its own (cudarc's `DevicePtr`/`DevicePtrMut` event tracking).

use std::ops::RangeBounds;
use std::sync::Arc;

use bytemuck::Pod;
use cudarc::driver::{result, CudaStream, DevicePtr, DevicePtrMut};

use super::error::{driver, MemoryError};
use super::pinned::PinnedBuffer;
use super::size::{byte_len, resolve_range, same_len};

/// Copies device memory `src` into the host slice `dst` and waits for the copy
/// (`cuMemcpyDtoHAsync` on `stream`, then `cuStreamSynchronize`); like `cudaMemcpy`
/// with `cudaMemcpyDeviceToHost`.
///
/// `stream` first waits for earlier writes of `src` on other streams.
///
/// Errors: [`MemoryError::LengthMismatch`] when the lengths (in elements) differ, before
/// any CUDA call; [`MemoryError::ContextMismatch`] when `src` lives in another context;
/// [`MemoryError::Driver`] when the copy or the synchronization fails (including errors
/// of earlier asynchronous work on `stream`).
pub fn copy_to_host<T: Pod, Src: DevicePtr<T> + ?Sized>(
    stream: &CudaStream,
    src: &Src,
    dst: &mut [T],
) -> Result<(), MemoryError> {
    same_len("copy_to_host", dst.len(), src.len())?;
    same_context("copy_to_host", "the source", stream, src.stream())?;
    if byte_len::<T>(dst.len())? == 0 {
        return Ok(());
    }
    bind(stream)?;
    let (ptr, record) = src.device_ptr(stream);
    // SAFETY: `ptr` addresses `src.len()` elements of `T` in this stream's context and
    // `dst` has exactly as many; `T: Pod` accepts any bytes; the stream is synchronized
    // below, so the DMA has finished writing `dst` before the borrow ends.
    let res = unsafe { result::memcpy_dtoh_async(dst, ptr, stream.cu_stream()) };
    drop(record);
    res.map_err(driver("cuMemcpyDtoHAsync (copy_to_host)"))?;
    stream
        .synchronize()
        .map_err(driver("cuStreamSynchronize after copy_to_host"))
}

/// Copies the host slice `src` into device memory `dst` and waits for the copy
/// (`cuMemcpyHtoDAsync` on `stream`, then `cuStreamSynchronize`); like `cudaMemcpy` with
/// `cudaMemcpyHostToDevice`.
///
/// `stream` first waits for earlier reads and writes of `dst` on other streams.
///
/// Errors: [`MemoryError::LengthMismatch`] when the lengths differ, before any CUDA
/// call; [`MemoryError::ContextMismatch`]; [`MemoryError::Driver`].
pub fn copy_from_host<T: Pod, Dst: DevicePtrMut<T> + ?Sized>(
    stream: &CudaStream,
    dst: &mut Dst,
    src: &[T],
) -> Result<(), MemoryError> {
    same_len("copy_from_host", dst.len(), src.len())?;
    same_context("copy_from_host", "the destination", stream, dst.stream())?;
    if byte_len::<T>(src.len())? == 0 {
        return Ok(());
    }
    bind(stream)?;
    let (ptr, record) = dst.device_ptr_mut(stream);
    // SAFETY: `ptr` addresses `src.len()` elements in this stream's context; the stream
    // is synchronized below, so the DMA has finished reading `src` before the borrow ends.
    let res = unsafe { result::memcpy_htod_async(ptr, src, stream.cu_stream()) };
    drop(record);
    res.map_err(driver("cuMemcpyHtoDAsync (copy_from_host)"))?;
    stream
        .synchronize()
        .map_err(driver("cuStreamSynchronize after copy_from_host"))
}

/// Copies device memory `src` into device memory `dst` on `stream`, asynchronously
/// (`cuMemcpyDtoDAsync`, or `cuMemcpyPeerAsync` when `src` lives in another context);
/// like `cudaMemcpyAsync` with `cudaMemcpyDeviceToDevice`. This is cudarc's
/// `CudaStream::memcpy_dtod` with the length check made an error instead of a panic.
///
/// Errors: [`MemoryError::LengthMismatch`] before any CUDA call; [`MemoryError::Driver`].
pub fn copy_device<T, Src: DevicePtr<T>, Dst: DevicePtrMut<T>>(
    stream: &Arc<CudaStream>,
    dst: &mut Dst,
    src: &Src,
) -> Result<(), MemoryError> {
    same_len("copy_device", dst.len(), src.len())?;
    if src.num_bytes() == 0 {
        return Ok(());
    }
    stream
        .memcpy_dtod(src, dst)
        .map_err(driver("cuMemcpyDtoDAsync (copy_device)"))
}

/// Enqueues a copy of `src[range]` (pinned host memory) into device memory `dst` on
/// `stream` (`cuMemcpyHtoDAsync`) and returns without waiting; like `cudaMemcpyAsync`
/// from `cudaMallocHost` memory.
///
/// Ordering: `stream` waits for earlier work on `src` (its event) and on `dst`; `src`'s
/// event is recorded after the copy, so [`PinnedBuffer::as_mut_slice`] and dropping
/// `src` wait for it.
///
/// Errors: [`MemoryError::OutOfBounds`] for a bad `range`,
/// [`MemoryError::LengthMismatch`] when `range` and `dst` differ in length (both before
/// any CUDA call); [`MemoryError::ContextMismatch`]; [`MemoryError::Driver`].
pub fn copy_from_pinned_async<T: Pod, Dst: DevicePtrMut<T> + ?Sized>(
    stream: &CudaStream,
    dst: &mut Dst,
    src: &PinnedBuffer<T>,
    range: impl RangeBounds<usize>,
) -> Result<(), MemoryError> {
    let range = resolve_range("copy_from_pinned_async", range, src.len())?;
    same_len("copy_from_pinned_async", dst.len(), range.len())?;
    same_context(
        "copy_from_pinned_async",
        "the destination",
        stream,
        dst.stream(),
    )?;
    same_context(
        "copy_from_pinned_async",
        "the source",
        stream,
        src.context(),
    )?;
    if byte_len::<T>(range.len())? == 0 {
        return Ok(());
    }
    bind(stream)?;
    src.wait_on(stream)?;
    let (ptr, record) = dst.device_ptr_mut(stream);
    // SAFETY: `range` lies inside `src` (checked) and `ptr` addresses as many elements;
    // `src`'s event is recorded below, and every host access to `src` and its drop wait
    // for that event, so the pinned bytes stay alive and unmodified until the DMA is done.
    let res = unsafe { enqueue_htod(stream, ptr, src.raw_range(&range)) };
    drop(record);
    res?;
    src.record_on(stream)
}

/// Enqueues a copy of device memory `src` into `dst[range]` (pinned host memory) on
/// `stream` (`cuMemcpyDtoHAsync`) and returns without waiting.
///
/// Ordering: `stream` waits for earlier writes of `src` and for earlier work on `dst`;
/// `dst`'s event is recorded after the copy, so [`PinnedBuffer::as_slice`] waits for the
/// data to arrive.
///
/// Errors: as [`copy_from_pinned_async`].
pub fn copy_to_pinned_async<T: Pod, Src: DevicePtr<T> + ?Sized>(
    stream: &CudaStream,
    src: &Src,
    dst: &mut PinnedBuffer<T>,
    range: impl RangeBounds<usize>,
) -> Result<(), MemoryError> {
    let range = resolve_range("copy_to_pinned_async", range, dst.len())?;
    same_len("copy_to_pinned_async", range.len(), src.len())?;
    same_context("copy_to_pinned_async", "the source", stream, src.stream())?;
    same_context(
        "copy_to_pinned_async",
        "the destination",
        stream,
        dst.context(),
    )?;
    if byte_len::<T>(range.len())? == 0 {
        return Ok(());
    }
    bind(stream)?;
    dst.wait_on(stream)?;
    let (ptr, record) = src.device_ptr(stream);
    // SAFETY: as in `copy_from_pinned_async`; the host cannot read `dst` before its event,
    // recorded below, has completed.
    let res = unsafe { enqueue_dtoh(stream, dst.raw_range_mut(&range), ptr) };
    drop(record);
    res?;
    dst.record_on(stream)
}

/// `cuMemcpyHtoDAsync` of `src` into `dst` on `stream`, nothing else.
///
/// # Safety
///
/// 1. `dst` addresses at least `src.len()` writable bytes in `stream`'s context;
/// 2. `src` stays valid and unmodified until the copy has completed on `stream`;
/// 3. `stream`'s context is current.
pub(crate) unsafe fn enqueue_htod(
    stream: &CudaStream,
    dst: u64,
    src: &[u8],
) -> Result<(), MemoryError> {
    // SAFETY: the caller's obligations 1-3.
    unsafe { result::memcpy_htod_async(dst, src, stream.cu_stream()) }
        .map_err(driver("cuMemcpyHtoDAsync (pinned)"))
}

/// `cuMemcpyDtoHAsync` of `dst.len()` bytes at `src` into `dst` on `stream`.
///
/// # Safety
///
/// 1. `src` addresses at least `dst.len()` readable bytes in `stream`'s context;
/// 2. nothing reads or writes `dst` until the copy has completed on `stream`, and `dst`
///    stays allocated until then;
/// 3. `stream`'s context is current.
pub(crate) unsafe fn enqueue_dtoh(
    stream: &CudaStream,
    dst: &mut [u8],
    src: u64,
) -> Result<(), MemoryError> {
    // SAFETY: the caller's obligations 1-3.
    unsafe { result::memcpy_dtoh_async(dst, src, stream.cu_stream()) }
        .map_err(driver("cuMemcpyDtoHAsync (pinned)"))
}

/// Makes `stream`'s context current on this thread (`cuCtxSetCurrent`).
pub(crate) fn bind(stream: &CudaStream) -> Result<(), MemoryError> {
    stream
        .context()
        .bind_to_thread()
        .map_err(driver("cuCtxSetCurrent"))
}

/// Errors unless `other` is `stream`'s context.
pub(crate) fn same_context(
    op: &'static str,
    what: &'static str,
    stream: &CudaStream,
    other_ctx_of: impl AsContext,
) -> Result<(), MemoryError> {
    let other = other_ctx_of.ctx();
    if stream.context().cu_ctx() == other.cu_ctx() {
        Ok(())
    } else {
        Err(MemoryError::ContextMismatch {
            op,
            what,
            expected: stream.context().ordinal(),
            found: other.ordinal(),
        })
    }
}

/// Something that names a CUDA context: a stream or a context.
pub(crate) trait AsContext {
    fn ctx(&self) -> &cudarc::driver::CudaContext;
}

impl AsContext for &Arc<CudaStream> {
    fn ctx(&self) -> &cudarc::driver::CudaContext {
        self.context()
    }
}

impl AsContext for &Arc<cudarc::driver::CudaContext> {
    fn ctx(&self) -> &cudarc::driver::CudaContext {
        self
    }
}
