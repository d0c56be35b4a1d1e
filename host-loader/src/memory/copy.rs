//! Transfers between host and device memory, on any device slice cudarc knows
//! ([`CudaSlice`](cudarc::driver::CudaSlice), [`CudaView`](cudarc::driver::CudaView),
//! [`CudaViewMut`](cudarc::driver::CudaViewMut)) and on this module's buffers.
//!
//! | function | CUDA call | returns when |
//! |---|---|---|
//! | [`copy_to_host`] | `cuMemcpyDtoHAsync` + `cuStreamSynchronize` | the data is in `dst` |
//! | [`to_host_vec`] | `cuMemcpyDtoHAsync` + `cuStreamSynchronize` | the data is in the new `Vec` |
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
use cudarc::driver::{result, sys, CudaStream, DevicePtr, DevicePtrMut};
use device_std::PlainData;

use super::error::{driver, MemoryError};
use super::pinned::PinnedBuffer;
use super::size::{byte_len, resolve_range, same_len};

/// Copies device memory `src` into the host slice `dst` and waits for the copy
/// (`cuMemcpyDtoHAsync` on `stream`, then `cuStreamSynchronize`); like `cudaMemcpy`
/// with `cudaMemcpyDeviceToHost`.
///
/// `T` is any [`PlainData`] type: a primitive, an array of them, or a
/// `#[derive(KernelStruct)]` struct, padding included (the driver copies the bytes; every
/// field accepts any bit pattern). `stream` first waits for earlier writes of `src` on
/// other streams.
///
/// Errors: [`MemoryError::LengthMismatch`] when the lengths (in elements) differ, before
/// any CUDA call; [`MemoryError::ContextMismatch`] when `src` lives in another context;
/// [`MemoryError::Driver`] when the copy or the synchronization fails (including errors
/// of earlier asynchronous work on `stream`).
pub fn copy_to_host<T: PlainData, Src: DevicePtr<T> + ?Sized>(
    stream: &CudaStream,
    src: &Src,
    dst: &mut [T],
) -> Result<(), MemoryError> {
    same_len("copy_to_host", dst.len(), src.len())?;
    // SAFETY: `dst` is `src.len()` writable elements, borrowed for the whole call.
    unsafe { dtoh_into("copy_to_host", stream, src, dst.as_mut_ptr()) }
}

/// A new `Vec` holding the contents of device memory `src` (a
/// [`DeviceBuffer`](super::DeviceBuffer), a `CudaSlice`, a view), copied as
/// [`copy_to_host`] copies: the readback for every [`PlainData`] element type, structs
/// with padding included, where cudarc's `clone_dtoh` needs `T: DeviceRepr`.
///
/// ```no_run
/// # fn demo(stream: &std::sync::Arc<host_loader::cudarc::driver::CudaStream>) -> Result<(), Box<dyn std::error::Error>> {
/// use host_loader::memory::{to_host_vec, DeviceBuffer};
/// let buf = DeviceBuffer::from_host(stream, &[1u32, 2, 3, 4])?;
/// assert_eq!(to_host_vec(stream, &buf.view(1..3)?)?, [2, 3]);
/// # Ok(()) }
/// ```
///
/// Errors: as [`copy_to_host`].
pub fn to_host_vec<T: PlainData, Src: DevicePtr<T> + ?Sized>(
    stream: &CudaStream,
    src: &Src,
) -> Result<Vec<T>, MemoryError> {
    let len = src.len();
    let mut out = Vec::<T>::with_capacity(len);
    // SAFETY: `out` has room for `len == src.len()` elements. On success the driver has
    // written all `len * size_of::<T>()` bytes and the stream is synchronized; each field
    // of a `PlainData` type accepts any bit pattern, so the elements are initialized
    // values (padding bytes are not part of the value).
    unsafe {
        dtoh_into("to_host_vec", stream, src, out.as_mut_ptr())?;
        out.set_len(len);
    }
    Ok(out)
}

/// Copies `src.len()` elements of device memory `src` to `dst` and waits.
///
/// # Safety
///
/// `dst` is valid for writing `src.len()` elements of `T` and nothing else reads or
/// writes them during the call.
unsafe fn dtoh_into<T: PlainData, Src: DevicePtr<T> + ?Sized>(
    op: &'static str,
    stream: &CudaStream,
    src: &Src,
    dst: *mut T,
) -> Result<(), MemoryError> {
    same_context(op, "the source", stream, src.stream())?;
    let bytes = byte_len::<T>(src.len())?;
    if bytes == 0 {
        return Ok(());
    }
    bind(stream)?;
    let (ptr, record) = src.device_ptr(stream);
    // SAFETY: `ptr` addresses `bytes` bytes in this stream's context, and `dst` as many
    // (the caller's promise); the stream is synchronized below, so the DMA has finished
    // writing `dst` before this returns. The driver writes through the pointer: no Rust
    // reference to the bytes exists while they are being written.
    let res =
        unsafe { sys::cuMemcpyDtoHAsync_v2(dst.cast(), ptr, bytes, stream.cu_stream()).result() };
    drop(record);
    let failed = |context: String| move |source| MemoryError::Driver { context, source };
    res.map_err(failed(format!("cuMemcpyDtoHAsync ({op})")))?;
    stream
        .synchronize()
        .map_err(failed(format!("cuStreamSynchronize after {op}")))
}

/// Copies the host slice `src` into device memory `dst` and waits for the copy
/// (`cuMemcpyHtoDAsync` on `stream`, then `cuStreamSynchronize`); like `cudaMemcpy` with
/// `cudaMemcpyHostToDevice`.
///
/// `T` is any [`PlainData`] type, as for [`copy_to_host`]: the driver reads the bytes of
/// `src` through its pointer, padding included (those bytes are never read as values on
/// either side). `stream` first waits for earlier reads and writes of `dst` on other
/// streams.
///
/// Errors: [`MemoryError::LengthMismatch`] when the lengths differ, before any CUDA
/// call; [`MemoryError::ContextMismatch`]; [`MemoryError::Driver`].
pub fn copy_from_host<T: PlainData, Dst: DevicePtrMut<T> + ?Sized>(
    stream: &CudaStream,
    dst: &mut Dst,
    src: &[T],
) -> Result<(), MemoryError> {
    same_len("copy_from_host", dst.len(), src.len())?;
    same_context("copy_from_host", "the destination", stream, dst.stream())?;
    let bytes = byte_len::<T>(src.len())?;
    if bytes == 0 {
        return Ok(());
    }
    bind(stream)?;
    let (ptr, record) = dst.device_ptr_mut(stream);
    // SAFETY: `ptr` addresses `src.len()` elements in this stream's context; the driver
    // reads `bytes` bytes from `src`'s pointer (no Rust reference to padding bytes is
    // made); the stream is synchronized below, so the DMA has finished reading `src`
    // before the borrow ends.
    let res = unsafe {
        sys::cuMemcpyHtoDAsync_v2(ptr, src.as_ptr().cast(), bytes, stream.cu_stream()).result()
    };
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
