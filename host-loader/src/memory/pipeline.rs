//! [`Pipeline`]: overlap host-to-device copies, kernels and device-to-host copies of
//! consecutive chunks across several streams (double buffering and deeper).

use std::fmt;
use std::sync::Arc;

use bytemuck::Pod;
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use device_std::PlainData;

use super::buffer::DeviceBuffer;
use super::copy::{bind, enqueue_dtoh, enqueue_htod};
use super::error::{driver, MemoryError};
use super::pinned::PinnedBuffer;
use super::size::{chunks, same_len};

/// One stage: a stream and the device buffers for the chunk it is working on.
struct Stage<I, O> {
    stream: Arc<CudaStream>,
    input: DeviceBuffer<I>,
    output: DeviceBuffer<O>,
}

/// A chunked copy-in → kernel → copy-out pipeline over `depth` streams.
///
/// Chunk `k` of the input goes to stage `k % depth`: its stream copies the chunk from
/// pinned host memory into the stage's input buffer (`cuMemcpyHtoDAsync`), runs the
/// caller's kernel, and copies the stage's output buffer back into the chunk's place in
/// pinned host memory (`cuMemcpyDtoHAsync`). Work on one stream is ordered, so a stage's
/// buffers are reused only after its previous chunk is done; work on different streams
/// overlaps: with `depth = 2` (double buffering) chunk `k + 1`'s copy in runs while chunk
/// `k` computes, and with `depth >= 3` and two copy engines, copy in, compute and copy
/// out all run at once. `depth = 1` is the serial baseline.
///
/// The streams are forked from the parent stream given to [`Pipeline::new`]; every
/// [`run`](Self::run) joins them back, so the parent stream (and the pinned buffers'
/// events) see the whole run as one operation.
pub struct Pipeline<I, O> {
    stages: Vec<Stage<I, O>>,
    chunk_len: usize,
}

impl<I, O> fmt::Debug for Pipeline<I, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pipeline")
            .field("depth", &self.stages.len())
            .field("chunk_len", &self.chunk_len)
            .finish()
    }
}

/// The chunks travel through [`PinnedBuffer`]s (`bytemuck::Pod` elements) and
/// [`DeviceBuffer`]s ([`PlainData`] elements), so both element types are both.
impl<I: Pod + PlainData, O: Pod + PlainData> Pipeline<I, O> {
    /// `depth` stages forked from `parent` (`CudaStream::fork`), each with a zeroed
    /// input buffer of `chunk_len` `I`s and output buffer of `chunk_len` `O`s.
    ///
    /// Errors: [`MemoryError::OutOfBounds`] when `depth` or `chunk_len` is 0;
    /// allocation errors of [`DeviceBuffer::zeroed`]; [`MemoryError::Driver`] when a
    /// stream cannot be created.
    pub fn new(
        parent: &Arc<CudaStream>,
        depth: usize,
        chunk_len: usize,
    ) -> Result<Self, MemoryError> {
        if depth == 0 || chunk_len == 0 {
            return Err(MemoryError::OutOfBounds {
                op: "Pipeline::new (depth and chunk length must be at least 1)",
                start: depth,
                end: chunk_len,
                len: 0,
            });
        }
        let mut stages = Vec::with_capacity(depth);
        for _ in 0..depth {
            let stream = parent
                .fork()
                .map_err(driver("cuStreamCreate (Pipeline::new)"))?;
            let input = DeviceBuffer::zeroed(&stream, chunk_len)?;
            let output = DeviceBuffer::zeroed(&stream, chunk_len)?;
            stages.push(Stage {
                stream,
                input,
                output,
            });
        }
        Ok(Pipeline { stages, chunk_len })
    }

    /// Number of stages (streams).
    pub fn depth(&self) -> usize {
        self.stages.len()
    }

    /// Elements per chunk.
    pub fn chunk_len(&self) -> usize {
        self.chunk_len
    }

    /// The stages' streams, in stage order.
    pub fn streams(&self) -> impl Iterator<Item = &Arc<CudaStream>> {
        self.stages.iter().map(|s| &s.stream)
    }

    /// Runs every chunk of `input` through `kernel` into `output`, asynchronously.
    ///
    /// `kernel(stream, input, output, n)` must enqueue the work for one chunk on `stream`
    /// (e.g. one [`Kernel::launch`](crate::Kernel::launch)), reading the first `n`
    /// elements of `input` and writing the first `n` of `output`; `n` is
    /// [`chunk_len`](Self::chunk_len) except for a shorter last chunk (the buffers always
    /// hold `chunk_len` elements; what the kernel writes past `n` is not copied back).
    ///
    /// Returns when everything is enqueued. `parent` then waits for all stages, and both
    /// pinned buffers' events are recorded on it: [`PinnedBuffer::as_slice`] on `output`
    /// waits for the last chunk, and `input` is not modified before its last copy. A
    /// failed enqueue stops the loop, but the join and the records still happen.
    ///
    /// Errors: [`MemoryError::LengthMismatch`] when `input` and `output` differ in
    /// length (before any work); [`MemoryError::Launch`] from `kernel`;
    /// [`MemoryError::Driver`].
    pub fn run(
        &mut self,
        parent: &CudaStream,
        input: &PinnedBuffer<I>,
        output: &mut PinnedBuffer<O>,
        mut kernel: impl FnMut(
            &Arc<CudaStream>,
            &DeviceBuffer<I>,
            &mut DeviceBuffer<O>,
            usize,
        ) -> Result<(), crate::Error>,
    ) -> Result<(), MemoryError> {
        same_len("Pipeline::run", output.len(), input.len())?;
        let plan = chunks(input.len(), self.chunk_len)?;
        bind(parent)?;
        input.wait_on(parent)?;
        output.wait_on(parent)?;
        for stage in &self.stages {
            stage
                .stream
                .join(parent)
                .map_err(driver("cuStreamWaitEvent (pipeline start)"))?;
        }
        let mut result = Ok(());
        let depth = self.stages.len();
        for (k, range) in plan.iter().enumerate() {
            let stage = &mut self.stages[k % depth];
            let n = range.len();
            let step = (|| -> Result<(), MemoryError> {
                let stream = &stage.stream;
                let (dst, record) = stage.input.device_ptr_mut(stream);
                // SAFETY: `dst` holds `chunk_len >= n` elements of `I`; the bytes of
                // `range` lie inside `input`, whose event is recorded on `parent` after
                // `parent` joins this stream below, so they stay alive and unmodified
                // until the copy is done.
                let res = unsafe { enqueue_htod(stream, dst, input.raw_range(range)) };
                drop(record);
                res?;
                kernel(stream, &stage.input, &mut stage.output, n)?;
                let (src, record) = stage.output.device_ptr(stream);
                // SAFETY: `src` holds at least `n` elements of `O`; the destination bytes
                // of `range` lie inside `output`, which is borrowed mutably for this run
                // and whose event (recorded on `parent` after the join) guards every later
                // host access and its drop.
                let res = unsafe { enqueue_dtoh(stream, output.raw_range_mut(range), src) };
                drop(record);
                res
            })();
            if let Err(e) = step {
                result = Err(e);
                break;
            }
        }
        for stage in &self.stages {
            let joined = parent
                .join(&stage.stream)
                .map_err(driver("cuStreamWaitEvent (pipeline end)"));
            if result.is_ok() {
                result = joined;
            }
        }
        let recorded = input.record_on(parent).and(output.record_on(parent));
        result.and(recorded)
    }
}
