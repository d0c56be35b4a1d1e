//! [`GraphError`], the graph module's own error type, and what a capture's driver error
//! codes mean. Uses nothing of this crate but [`crate::message`], so the crate's
//! [`Error`](crate::Error) can wrap it without an import circle.

use cudarc::driver::{sys, DriverError};

use crate::message::DriverMsg;

/// What went wrong while capturing, instantiating, launching or updating a graph.
///
/// Inside [`Error::Graph`](crate::Error::Graph). Each message names the driver call and,
/// for a failed capture, the operation that broke it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// The stream is the legacy default stream (`NULL` or `CU_STREAM_LEGACY`, what
    /// [`open_device`](crate::open_device) returns), which CUDA cannot capture
    /// (`cuStreamBeginCapture` returns `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`).
    #[error(
        "the legacy default stream cannot be captured (cuStreamBeginCapture refuses it); \
         capture on a stream made with CudaContext::new_stream() or CudaStream::fork()"
    )]
    LegacyStream,

    /// The stream is already being captured (by another [`capture`](super::capture), or
    /// directly).
    #[error("the stream is already being captured (cuStreamIsCapturing): captures do not nest")]
    AlreadyCapturing,

    /// A driver call refused the capture, or the capture was invalidated by an earlier
    /// operation on the capturing stream.
    #[error(
        "graph capture failed: {call}: {} — {cause}{}",
        DriverMsg(source),
        refused_suffix(refused)
    )]
    CaptureFailed {
        /// The call that reported it, e.g. "cuStreamEndCapture".
        call: String,
        /// The driver's error code.
        source: DriverError,
        /// What that code means for a capture, and the usual cause.
        cause: &'static str,
        /// An error cudarc recorded during the capture without returning it (its event
        /// waits and records report errors that way; it keeps the last one, and its next
        /// `bind_to_thread` returns it), when there was one.
        refused: Option<DriverError>,
    },

    /// The captured graph has nodes the recorder did not make: work issued on the
    /// capturing stream through cudarc's stream methods or
    /// [`Kernel::launch`](crate::Kernel::launch). The graph holds no borrow of their
    /// buffers, so it could outlive them.
    #[error(
        "the captured graph has {} node{} not made through the Recorder ({}): work issued on \
         the capturing stream directly (cudarc stream methods, Kernel::launch) holds no \
         borrow of its buffers, so the graph could outlive them; register the buffers \
         (Recorder::read/write) and use Recorder::launch, memset_zeros, copy",
        kinds.len(),
        if kinds.len() == 1 { "" } else { "s" },
        kinds.join(", ")
    )]
    ForeignNodes {
        /// The node type of each foreign node (`CUgraphNodeType`, e.g. "kernel",
        /// "mem free").
        kinds: Vec<String>,
    },

    /// A [`Buf`](super::Buf), [`BufMut`](super::BufMut) or
    /// [`KernelNode`](super::KernelNode) of another graph, or of a
    /// [`sequence`](crate::sequence) (graphs and sequences number their tokens from one
    /// counter).
    #[error(
        "{what} belongs to graph or sequence #{token_graph}, not to this one (#{graph}): \
         tokens and nodes are only valid in the capture or sequence that made them"
    )]
    ForeignToken {
        /// "buffer" or "kernel node".
        what: &'static str,
        /// The graph or sequence that made the token.
        token_graph: u64,
        /// This graph or sequence.
        graph: u64,
    },

    /// A launch passes one buffer writable and, in another parameter, overlapping: the
    /// kernel's `&[T]` and `DisjointSlice<T>` (or `*mut T`) must not alias.
    #[error(
        "kernel `{kernel}`: parameters {first} and {second} name overlapping device memory \
         and at least one is writable; a kernel's `&[T]` may not alias its writable \
         parameters (use a different buffer)"
    )]
    Aliased {
        /// The kernel.
        kernel: String,
        /// 0-based index of the first parameter.
        first: usize,
        /// 0-based index of the second parameter.
        second: usize,
    },

    /// [`Recorder::copy`](super::Recorder::copy) between buffers of different lengths, or
    /// one buffer to itself.
    #[error("copy from a buffer of {src} elements to one of {dst}: {reason}")]
    BadCopy {
        /// Source length in elements.
        src: u64,
        /// Destination length in elements.
        dst: u64,
        /// What is wrong.
        reason: &'static str,
    },

    /// A buffer of another CUDA context than the stream being captured.
    #[error(
        "a buffer of the context of device {buffer_device} was registered with a graph \
         captured on device {graph_device}"
    )]
    WrongContext {
        /// The buffer's device ordinal.
        buffer_device: usize,
        /// The graph's device ordinal.
        graph_device: usize,
    },

    /// `cuGraphExecUpdate` refused the new graph: its shape differs from the one the
    /// executable graph was instantiated from.
    #[error(
        "cuGraphExecUpdate refused the new graph ({result}): {reason}; instantiate it \
         instead (Graph::instantiate)"
    )]
    UpdateRefused {
        /// The `CUgraphExecUpdateResult` name.
        result: &'static str,
        /// What it means.
        reason: &'static str,
    },
}

fn refused_suffix(refused: &Option<DriverError>) -> String {
    match refused {
        Some(e) => format!(
            "; cudarc also recorded, without returning it, an error of a call during the \
             capture: {}",
            DriverMsg(e)
        ),
        None => String::new(),
    }
}

/// What a capture-related `CUresult` means, and its usual cause.
pub(super) fn capture_cause(code: sys::CUresult) -> &'static str {
    use sys::CUresult as R;
    match code {
        R::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED => {
            "the operation is not permitted while a stream is capturing: a synchronize or \
             query of the stream, the context or an event, a synchronous copy, cuMemAlloc / \
             cuMemFree, or use of the legacy stream"
        }
        R::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED => {
            "an earlier operation on the capturing stream was refused (a synchronize, a \
             synchronous allocation or copy, or cudarc's event tracking waiting on an event \
             recorded outside the capture), which invalidated the whole capture"
        }
        R::CUDA_ERROR_STREAM_CAPTURE_MERGE => {
            "the operation would merge two independent captures (waiting on an event \
             captured in another graph)"
        }
        R::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED => "the capture was not begun on this stream",
        R::CUDA_ERROR_STREAM_CAPTURE_UNJOINED => {
            "a stream forked into the capture (it waited on an event recorded on the \
             capturing stream) was not joined back into it"
        }
        R::CUDA_ERROR_STREAM_CAPTURE_ISOLATION => {
            "the operation would make the capture depend on work outside it: waiting on an \
             event recorded outside the capture, which cudarc's event tracking does when a \
             CudaSlice is used on the capturing stream"
        }
        R::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT => {
            "the operation would make the capture depend on the legacy stream implicitly"
        }
        R::CUDA_ERROR_CAPTURED_EVENT => {
            "the operation is not permitted on an event last recorded in a capturing stream"
        }
        R::CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD => {
            "the capture was begun in another thread (thread-local or global capture mode)"
        }
        _ => "the driver refused the call during capture",
    }
}
