//! Typed CUDA graphs: stream capture of typed launches, replay, and typed updates of a
//! captured kernel node.
//!
//! A chain of small dependent kernels is bound by launch cost (about 4 µs per launch on
//! an H200 through the driver API), often more than the kernels run. A CUDA graph records
//! the chain once and replays it with one `cuGraphLaunch`. This module builds graphs from
//! the same typed [`Kernel`] handles as [`Kernel::launch`]: each node's arguments are
//! checked against the kernel's signature at compile time (element types, `Slice` vs
//! `SliceMut`) and were checked against the PTX and the ABI record once, when the handle
//! was made.
//!
//! | step | here | CUDA driver API |
//! |---|---|---|
//! | record | [`capture`] / [`capture_with_mode`], [`Recorder::launch`], [`Recorder::memset_zeros`], [`Recorder::copy`] | `cuStreamBeginCapture`, `cuLaunchKernel` / `cuLaunchKernelEx`, `cuMemsetD8Async`, `cuMemcpyDtoDAsync`, `cuStreamGetCaptureInfo`, `cuStreamEndCapture` |
//! | instantiate | [`Graph::instantiate`] | `cuGraphInstantiateWithFlags` |
//! | replay | [`GraphExec::launch`], [`GraphExec::upload`] | `cuGraphLaunch`, `cuGraphUpload` |
//! | change one node | [`GraphExec::set_kernel_args`] | `cuGraphExecKernelNodeSetParams` |
//! | change every node | [`GraphExec::update`] (a graph recaptured with the same shape) | `cuGraphExecUpdate` |
//!
//! Needs CUDA 12.3 or newer (the driver's `cuStreamGetCaptureInfo_v3`; this crate is built
//! for CUDA 13) and any GPU CUDA 13 supports (sm_75+).
//!
//! # Buffers: registered once, borrowed for the graph's life
//!
//! A graph replays raw device addresses, so every buffer it touches must outlive it.
//! Buffers are **registered** with the recorder: [`Recorder::read`] borrows a
//! `&'a CudaSlice<T>` and gives a [`Buf<T>`], [`Recorder::write`] borrows a
//! `&'a mut CudaSlice<T>` and gives a [`BufMut<T>`]. These tokens (small `Copy` values)
//! are the graph's launch arguments: a `Slice<T>` parameter takes a `Buf<T>`
//! ([`BufMut::read`] turns a writable one into one), a `SliceMut<T>` or `PtrMut<T>`
//! parameter only a `BufMut<T>`. The borrows last for `'a`, the lifetime of the
//! [`Graph<'a>`] and [`GraphExec<'a>`], so the borrow checker refuses to drop a buffer
//! while a graph that uses it exists:
//!
//! ```compile_fail,E0505
//! # use host_loader::*;
//! # fn f(k: &Kernel<(Slice<f32>, Slice<f32>, SliceMut<f32>)>, s: &cudarc::driver::CudaStream,
//! #      a: cudarc::driver::CudaSlice<f32>, mut c: cudarc::driver::CudaSlice<f32>) -> Result<(), Error> {
//! let cfg = for_num_elems(1024, 256)?;
//! let (graph, ()) = graph::capture(s, |r| {
//!     let (a, c) = (r.read(&a)?, r.write(&mut c)?);
//!     // SAFETY: vecadd stays within its buffers.
//!     unsafe { r.launch(k, cfg, (a, a, c)) }?;
//!     Ok(())
//! })?;
//! let mut exec = graph.instantiate()?;
//! drop(a); // error[E0505]: cannot move out of `a` because it is borrowed
//! exec.launch(s)?;
//! # Ok(()) }
//! ```
//!
//! nor write it while the graph exists, except through the executable graph
//! ([`GraphExec::slice_mut`]):
//!
//! ```compile_fail,E0499
//! # use host_loader::*;
//! # fn f(k: &Kernel<(Slice<f32>, Slice<f32>, SliceMut<f32>)>, s: &std::sync::Arc<cudarc::driver::CudaStream>,
//! #      a: cudarc::driver::CudaSlice<f32>, mut c: cudarc::driver::CudaSlice<f32>) -> Result<(), Box<dyn std::error::Error>> {
//! let cfg = for_num_elems(1024, 256)?;
//! let (graph, c_tok) = graph::capture(s, |r| {
//!     let (a, c) = (r.read(&a)?, r.write(&mut c)?);
//!     // SAFETY: vecadd stays within its buffers.
//!     unsafe { r.launch(k, cfg, (a, a, c)) }?;
//!     Ok(c)
//! })?;
//! let mut exec = graph.instantiate()?;
//! s.memcpy_htod(&[0.0f32; 1024], &mut c)?; // error[E0499]: `c` is borrowed by the graph
//! s.memcpy_htod(&[0.0f32; 1024], exec.slice_mut(c_tok)?)?; // this is the way
//! exec.launch(s)?;
//! # Ok(()) }
//! ```
//!
//! A read-only token where the kernel writes is refused by the compiler, as a `&` for a
//! `&mut` is for a launch:
//!
//! ```compile_fail,E0308
//! # use host_loader::*;
//! # fn f(k: &Kernel<(Slice<f32>, Slice<f32>, SliceMut<f32>)>, s: &cudarc::driver::CudaStream,
//! #      a: &cudarc::driver::CudaSlice<f32>, c: &mut cudarc::driver::CudaSlice<f32>) -> Result<(), Error> {
//! let cfg = for_num_elems(1024, 256)?;
//! graph::capture(s, |r| {
//!     let (a, c) = (r.read(a)?, r.write(c)?);
//!     // error[E0308]: expected `BufMut<f32>`, found `Buf<f32>`
//!     unsafe { r.launch(k, cfg, (a, a, c.read())) }
//! })?;
//! # Ok(()) }
//! ```
//!
//! A buffer is registered once and used by any number of nodes, so a chain that reads
//! what the previous node wrote (ping-pong between two buffers) is one registration per
//! buffer. Between replays the host reaches a registered buffer through the executable
//! graph: [`GraphExec::slice`] and [`GraphExec::slice_mut`] give the `CudaSlice` back
//! (to read results, or write the next inputs) while the graph is not being launched.
//!
//! # Stream ordering and frees
//!
//! [`GraphExec::launch`] orders the graph like a kernel launch: before `cuGraphLaunch`
//! the launch stream waits for earlier writes of every registered buffer (and earlier
//! reads of every writable one) on other streams; after it, the graph is recorded as a
//! read of every `Buf` and a write of every `BufMut` (cudarc's event tracking, one wait
//! and one record per registered buffer, not per node). A buffer dropped after the graph
//! is therefore freed (`cuMemFreeAsync`, on its allocation stream) only after the last
//! replay that uses it has finished, whichever stream it ran on.
//!
//! # cudarc's event tracking during capture
//!
//! With more than one stream in a context (`CudaContext::new_stream`, `fork`), cudarc
//! makes every use of a `CudaSlice` wait on the buffer's last write event and record a
//! new event (`DevicePtr::device_ptr`). Inside a capture both go wrong: waiting on an
//! event recorded outside the capture is refused by the driver and invalidates the
//! capture, and an event recorded inside it can no longer be waited on by ordinary
//! streams. The recorder never does either on the capturing stream: it reads each
//! buffer's address once, at registration, on a private non-capturing stream, and
//! moves the ordering to each replay (above). Work issued on the capturing stream
//! *outside* the recorder (cudarc's stream methods, [`Kernel::launch`]) either
//! invalidates the capture ([`GraphError::CaptureFailed`], naming the refused call) or,
//! with tracking off, adds nodes whose buffers the graph does not hold; [`capture`]
//! refuses such a graph ([`GraphError::ForeignNodes`]).
//!
//! # Example
//!
//! ```no_run
//! use host_loader::{for_num_elems, graph, memory, DeviceBuffer, Module, Slice, SliceMut};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let (ctx, _legacy) = host_loader::open_device(0)?;
//! let stream = ctx.new_stream()?; // the legacy default stream cannot be captured
//! let module = Module::from_ptx_file(&ctx, "target/ptx/vecadd-kernels.ptx")?;
//! let vecadd = module.kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>)>("vecadd")?;
//! let n = 1024;
//! let b = DeviceBuffer::from_host(&stream, &vec![1.0f32; n])?;
//! let mut x = [
//!     DeviceBuffer::<f32>::zeroed(&stream, n)?,
//!     DeviceBuffer::<f32>::zeroed(&stream, n)?,
//! ];
//! let cfg = for_num_elems(n as u32, 256)?;
//! let [x0, x1] = &mut x;
//! // x1 = x0 + b, x0 = x1 + b, ... 100 dependent launches.
//! let (graph, first) = graph::capture(&stream, |r| {
//!     let (b, x) = (r.read(&b)?, [r.write(x0)?, r.write(x1)?]);
//!     let mut first = None;
//!     for i in 0..100 {
//!         // SAFETY: vecadd reads a[i], b[i] and writes c[i] for i < c.len() only.
//!         let node = unsafe { r.launch(&vecadd, cfg, (x[i % 2].read(), b, x[(i + 1) % 2])) }?;
//!         first.get_or_insert(node);
//!     }
//!     Ok((first.unwrap(), x))
//! })?;
//! let mut exec = graph.instantiate()?;
//! for _ in 0..10 {
//!     exec.launch(&stream)?; // 100 kernels, one cuGraphLaunch
//! }
//! let x0_now = memory::to_host_vec(&stream, exec.slice(first.1[0].read())?)?;
//! assert!(x0_now.iter().all(|&v| v == 1000.0));
//! # Ok(()) }
//! ```

use std::collections::HashSet;
use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use cudarc::driver::sys;
use cudarc::driver::{
    CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DriverError, LaunchConfig,
    SyncOnDrop,
};

use crate::error::Error;
use crate::kernel::{Kernel, Shared};
use crate::launch::LaunchAttributes;
use crate::message::DriverMsg;
use crate::param::{
    KernelParam, OptSlice, OptSliceMut, Ptr, PtrMut, RawSlice, Slice, SliceMut, Struct,
};
use crate::signature::KernelSignature;

/// What went wrong while capturing, instantiating, launching or updating a graph.
///
/// Inside [`Error::Graph`]. Each message names the driver call and, for a failed
/// capture, the operation that broke it.
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

    /// The stream is already being captured (by another [`capture`], or directly).
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
    /// capturing stream through cudarc's stream methods or [`Kernel::launch`]. The graph
    /// holds no borrow of their buffers, so it could outlive them.
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

    /// A [`Buf`], [`BufMut`] or [`KernelNode`] of another graph, or of a
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

    /// [`Recorder::copy`] between buffers of different lengths, or one buffer to itself.
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
fn capture_cause(code: sys::CUresult) -> &'static str {
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

fn capture_failed(
    call: impl Into<String>,
    source: DriverError,
    refused: Option<DriverError>,
) -> Error {
    Error::Graph(GraphError::CaptureFailed {
        call: call.into(),
        cause: capture_cause(source.0),
        source,
        refused,
    })
}

fn driver(context: impl Into<String>) -> impl FnOnce(DriverError) -> Error {
    let context = context.into();
    move |source| Error::Driver { context, source }
}

/// Which other threads' CUDA calls a capture forbids while it runs
/// (`CUstreamCaptureMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CaptureMode {
    /// `CU_STREAM_CAPTURE_MODE_THREAD_LOCAL` (the default): this thread may not make
    /// calls that are unsafe during capture (`cuMemAlloc`, synchronous copies,
    /// synchronizing); other threads are unaffected.
    #[default]
    ThreadLocal,
    /// `CU_STREAM_CAPTURE_MODE_GLOBAL`: no thread may make such calls while the capture
    /// runs (CUDA's default).
    Global,
    /// `CU_STREAM_CAPTURE_MODE_RELAXED`: no call is forbidden because of the capture.
    Relaxed,
}

impl CaptureMode {
    fn raw(self) -> sys::CUstreamCaptureMode {
        use sys::CUstreamCaptureMode as M;
        match self {
            CaptureMode::ThreadLocal => M::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            CaptureMode::Global => M::CU_STREAM_CAPTURE_MODE_GLOBAL,
            CaptureMode::Relaxed => M::CU_STREAM_CAPTURE_MODE_RELAXED,
        }
    }
}

static NEXT_GRAPH: AtomicU64 = AtomicU64::new(1);

/// A new id for a capture or a [`sequence`](crate::sequence): the tokens of one are
/// foreign to every other.
pub(crate) fn next_id() -> u64 {
    NEXT_GRAPH.fetch_add(1, Ordering::Relaxed)
}

macro_rules! token {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        pub struct $name<T> {
            graph: u64,
            index: u32,
            _t: PhantomData<fn() -> T>,
        }

        impl<T> Clone for $name<T> {
            fn clone(&self) -> Self {
                *self
            }
        }

        impl<T> Copy for $name<T> {}

        impl<T> fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(
                    f,
                    "{}<{}>(graph #{}, buffer {})",
                    stringify!($name),
                    crate::layout::short_type_name(std::any::type_name::<T>()),
                    self.graph,
                    self.index
                )
            }
        }

        impl<T> $name<T> {
            pub(crate) fn new(graph: u64, index: u32) -> Self {
                $name {
                    graph,
                    index,
                    _t: PhantomData,
                }
            }
        }
    };
}

token!(
    /// A buffer of `T` registered read-only with a graph ([`Recorder::read`]), or a
    /// writable one read ([`BufMut::read`]): the launch argument of a [`Slice<T>`] or
    /// [`Ptr<T>`] parameter in a graph.
    ///
    /// A small `Copy` token (graph id, buffer index); valid only with the graph that made
    /// it ([`GraphError::ForeignToken`] otherwise).
    Buf
);
token!(
    /// A buffer of `T` registered writable with a graph ([`Recorder::write`]): the launch
    /// argument of a [`SliceMut<T>`] or [`PtrMut<T>`] parameter (and, through
    /// [`read`](BufMut::read), of a [`Slice<T>`] one) in a graph.
    ///
    /// A small `Copy` token; valid only with the graph that made it.
    BufMut
);

impl<T> BufMut<T> {
    /// The same buffer as a read-only argument (for a `Slice<T>` or `Ptr<T>` parameter).
    pub fn read(self) -> Buf<T> {
        Buf::new(self.graph, self.index)
    }
}

impl<T> From<BufMut<T>> for Buf<T> {
    fn from(b: BufMut<T>) -> Self {
        b.read()
    }
}

/// A kernel node of a captured graph, made by [`Recorder::launch`]: names the node for
/// [`GraphExec::set_kernel_args`], which takes arguments of the same signature `S`.
pub struct KernelNode<S> {
    graph: u64,
    index: usize,
    _sig: PhantomData<fn(S)>,
}

impl<S> Clone for KernelNode<S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for KernelNode<S> {}

impl<S> fmt::Debug for KernelNode<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "KernelNode(graph #{}, launch {}, {})",
            self.graph,
            self.index,
            std::any::type_name::<S>()
        )
    }
}

impl<S> KernelNode<S> {
    /// The position of this launch among the graph's kernel launches (0-based, in
    /// capture order).
    pub fn index(&self) -> usize {
        self.index
    }
}

/// One registered buffer: what a token stands for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Binding {
    pub(crate) ptr: u64,
    pub(crate) len: u64,
    pub(crate) bytes: u64,
    pub(crate) writable: bool,
}

/// The buffers a graph has registered; the lowering of graph arguments reads it.
///
/// Not constructible outside this crate; it appears in [`GraphParam`]'s hidden method.
#[doc(hidden)]
#[derive(Debug)]
pub struct BindingTable {
    graph: u64,
    bindings: Vec<Binding>,
}

impl BindingTable {
    /// An empty table for the capture or sequence `id` ([`next_id`]).
    pub(crate) fn new(id: u64) -> Self {
        BindingTable {
            graph: id,
            bindings: Vec::new(),
        }
    }

    /// Adds `binding`; returns its index.
    pub(crate) fn push(&mut self, binding: Binding) -> u32 {
        let index = self.bindings.len() as u32;
        self.bindings.push(binding);
        index
    }

    /// How many buffers are registered.
    pub(crate) fn len(&self) -> usize {
        self.bindings.len()
    }

    #[inline]
    fn get(&self, graph: u64, index: u32) -> Result<Binding, Error> {
        if graph != self.graph {
            return Err(Error::Graph(GraphError::ForeignToken {
                what: "buffer",
                token_graph: graph,
                graph: self.graph,
            }));
        }
        // Tokens of this graph are only made with an index of this table.
        Ok(self.bindings[index as usize])
    }
}

/// The device memory one graph argument names, for the aliasing check.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Access {
    start: u64,
    end: u64,
    writable: bool,
}

/// A [`KernelParam`] that can be a graph node's argument: what the recorder takes for
/// it ([`GraphArg`](Self::GraphArg)).
///
/// | parameter | graph argument |
/// |---|---|
/// | scalars (`u8` … `u64`, `i8` … `i64`, `usize`, `isize`, `bool`, `f32`, `f64`) | the value |
/// | [`Struct<T>`] | `T` by value |
/// | [`Slice<T>`], [`Ptr<T>`] | [`Buf<T>`] |
/// | [`SliceMut<T>`], [`PtrMut<T>`] | [`BufMut<T>`] |
///
/// [`HostPtr`](crate::memory::HostPtr) (pageable host memory) is not a graph parameter.
///
/// # Safety
///
/// [`lower_graph`](Self::lower_graph) returns the bytes [`KernelParam::lower`] would for
/// the registered buffer or value, and names in its [`Access`] every byte of device
/// memory the parameter gives the kernel.
pub unsafe trait GraphParam: KernelParam {
    /// What the recorder takes for this parameter.
    type GraphArg: Copy;

    /// The parameter's bytes, and the device memory it names.
    #[doc(hidden)]
    fn lower_graph(
        arg: Self::GraphArg,
        table: &BindingTable,
    ) -> Result<(Self::Raw, Option<Access>), Error>;
}

macro_rules! scalar_graph_params {
    ($($t:ty),*) => {$(
        // SAFETY: a scalar's bytes are its value, as in `KernelParam::lower`; no memory.
        unsafe impl GraphParam for $t {
            type GraphArg = $t;
            #[inline]
            fn lower_graph(arg: $t, _: &BindingTable) -> Result<($t, Option<Access>), Error> {
                Ok((arg, None))
            }
        }
    )*};
}

scalar_graph_params!(u8, i8, u16, i16, u32, i32, u64, i64, usize, isize, bool, f32, f64);

// SAFETY: a struct's bytes are its value, as in `KernelParam::lower`; it names no memory.
unsafe impl<T: device_std::KernelStruct> GraphParam for Struct<T> {
    type GraphArg = T;
    #[inline]
    fn lower_graph(arg: T, _: &BindingTable) -> Result<(T, Option<Access>), Error> {
        Ok((arg, None))
    }
}

fn access(b: &Binding, writable: bool) -> Option<Access> {
    Some(Access {
        start: b.ptr,
        end: b.ptr + b.bytes,
        writable,
    })
}

// SAFETY: `(ptr, len)` of the registered slice, as `Slice<T>::lower` builds it; the whole
// buffer is named.
unsafe impl<T: device_std::HasValueClass> GraphParam for Slice<T> {
    type GraphArg = Buf<T>;
    #[inline]
    fn lower_graph(arg: Buf<T>, table: &BindingTable) -> Result<(RawSlice, Option<Access>), Error> {
        let b = table.get(arg.graph, arg.index)?;
        Ok((RawSlice::present::<T>(b.ptr, b.len), access(&b, false)))
    }
}

// SAFETY: as for `Slice<T>`; a `BufMut` is only made for a writable registration.
unsafe impl<T: device_std::HasValueClass> GraphParam for SliceMut<T> {
    type GraphArg = BufMut<T>;
    #[inline]
    fn lower_graph(
        arg: BufMut<T>,
        table: &BindingTable,
    ) -> Result<(RawSlice, Option<Access>), Error> {
        let b = table.get(arg.graph, arg.index)?;
        debug_assert!(b.writable);
        Ok((RawSlice::present::<T>(b.ptr, b.len), access(&b, true)))
    }
}

// SAFETY: a present buffer as for `Slice<T>`, an absent one as `OptSlice<T>::lower`.
unsafe impl<T: device_std::HasValueClass> GraphParam for OptSlice<T> {
    type GraphArg = Option<Buf<T>>;
    #[inline]
    fn lower_graph(
        arg: Option<Buf<T>>,
        table: &BindingTable,
    ) -> Result<(RawSlice, Option<Access>), Error> {
        match arg {
            Some(arg) => <Slice<T> as GraphParam>::lower_graph(arg, table),
            None => Ok((RawSlice::ABSENT, None)),
        }
    }
}

// SAFETY: as for `OptSlice<T>`, writable.
unsafe impl<T: device_std::HasValueClass> GraphParam for OptSliceMut<T> {
    type GraphArg = Option<BufMut<T>>;
    #[inline]
    fn lower_graph(
        arg: Option<BufMut<T>>,
        table: &BindingTable,
    ) -> Result<(RawSlice, Option<Access>), Error> {
        match arg {
            Some(arg) => <SliceMut<T> as GraphParam>::lower_graph(arg, table),
            None => Ok((RawSlice::ABSENT, None)),
        }
    }
}

// SAFETY: the registered buffer's first address, as `Ptr<T>::lower`.
unsafe impl<T: device_std::HasValueClass> GraphParam for Ptr<T> {
    type GraphArg = Buf<T>;
    #[inline]
    fn lower_graph(arg: Buf<T>, table: &BindingTable) -> Result<(u64, Option<Access>), Error> {
        let b = table.get(arg.graph, arg.index)?;
        Ok((b.ptr, access(&b, false)))
    }
}

// SAFETY: as for `Ptr<T>`, writable.
unsafe impl<T: device_std::HasValueClass> GraphParam for PtrMut<T> {
    type GraphArg = BufMut<T>;
    #[inline]
    fn lower_graph(arg: BufMut<T>, table: &BindingTable) -> Result<(u64, Option<Access>), Error> {
        let b = table.get(arg.graph, arg.index)?;
        debug_assert!(b.writable);
        Ok((b.ptr, access(&b, true)))
    }
}

#[inline]
fn check_aliasing(kernel: &str, uses: &[Option<Access>]) -> Result<(), Error> {
    for (i, a) in uses.iter().enumerate() {
        let Some(a) = a else { continue };
        for (j, b) in uses.iter().enumerate().skip(i + 1) {
            let Some(b) = b else { continue };
            let empty = a.start >= a.end || b.start >= b.end;
            if (a.writable || b.writable) && !empty && a.start < b.end && b.start < a.end {
                return Err(Error::Graph(GraphError::Aliased {
                    kernel: kernel.to_string(),
                    first: i,
                    second: j,
                }));
            }
        }
    }
    Ok(())
}

mod sealed {
    pub trait Sealed {}
}

/// A kernel signature whose every parameter is a [`GraphParam`]: what
/// [`Recorder::launch`] and [`GraphExec::set_kernel_args`] take arguments for.
///
/// [`GraphArgs`](Self::GraphArgs) is the tuple of [`GraphParam::GraphArg`]s: for
/// `(Slice<f32>, Slice<f32>, SliceMut<f32>, u32)` it is
/// `(Buf<f32>, Buf<f32>, BufMut<f32>, u32)`. Sealed: implemented for tuples only.
///
/// # Safety
///
/// [`with_params`](Self::with_params) hands `f` one pointer per parameter, in order, each
/// to bytes of the parameter's [`KernelParam::Raw`] type.
pub unsafe trait GraphSignature: KernelSignature + sealed::Sealed {
    /// The graph argument tuple.
    type GraphArgs: Copy;

    /// Lowers `args` (checking their tokens and that no writable buffer aliases another
    /// argument) and calls `f` with the parameter pointer array.
    #[doc(hidden)]
    fn with_params<R>(
        args: Self::GraphArgs,
        table: &BindingTable,
        kernel: &str,
        f: impl FnOnce(&mut [*mut c_void]) -> R,
    ) -> Result<R, Error>;
}

macro_rules! graph_signature {
    ($n:literal; $($T:ident $arg:ident $raw:ident $acc:ident),*) => {
        impl<$($T: GraphParam),*> sealed::Sealed for ($($T,)*) {}

        // SAFETY: one slot per tuple element, in order, each lowered by its own
        // `GraphParam::lower_graph`; the slots live until `f` returns.
        unsafe impl<$($T: GraphParam),*> GraphSignature for ($($T,)*) {
            type GraphArgs = ($($T::GraphArg,)*);

            #[inline]
            #[allow(unused_variables, clippy::unused_unit)]
            fn with_params<R>(
                args: Self::GraphArgs,
                table: &BindingTable,
                kernel: &str,
                f: impl FnOnce(&mut [*mut c_void]) -> R,
            ) -> Result<R, Error> {
                let ($($arg,)*) = args;
                $(let ($raw, $acc) = $T::lower_graph($arg, table)?;)*
                check_aliasing(kernel, &[$($acc),*])?;
                let mut params: [*mut c_void; $n] =
                    [$(&$raw as *const $T::Raw as *mut c_void),*];
                Ok(f(&mut params))
            }
        }
    };
}

graph_signature!(0;);
graph_signature!(1; A a ra xa);
graph_signature!(2; A a ra xa, B b rb xb);
graph_signature!(3; A a ra xa, B b rb xb, C c rc xc);
graph_signature!(4; A a ra xa, B b rb xb, C c rc xc, D d rd xd);
graph_signature!(5; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe);
graph_signature!(6; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf);
graph_signature!(7; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf,
    G g rg xg);
graph_signature!(8; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf,
    G g rg xg, H h rh xh);
graph_signature!(9; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf,
    G g rg xg, H h rh xh, I i ri xi);
graph_signature!(10; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf,
    G g rg xg, H h rh xh, I i ri xi, J j rj xj);
graph_signature!(11; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf,
    G g rg xg, H h rh xh, I i ri xi, J j rj xj, K k rk xk);
graph_signature!(12; A a ra xa, B b rb xb, C c rc xc, D d rd xd, E e re xe, F f rf xf,
    G g rg xg, H h rh xh, I i ri xi, J j rj xj, K k rk xk, L l rl xl);

/// A borrowed, registered buffer: orders a replay on a stream (cudarc's event tracking)
/// and gives the `CudaSlice` back to the host between replays.
trait Held {
    /// Waits for earlier conflicting uses on other streams; the guard records this use.
    fn track<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s>;
    /// The `&CudaSlice<T>` this holds, erased.
    fn slice(&self) -> *const ();
    /// The `&mut CudaSlice<T>` this holds, erased; null for a read-only one.
    fn slice_mut(&mut self) -> *mut ();
}

struct ReadHeld<'a, T>(&'a CudaSlice<T>);
struct WriteHeld<'a, T>(&'a mut CudaSlice<T>);

impl<T> Held for ReadHeld<'_, T> {
    fn track<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s> {
        self.0.device_ptr(stream).1
    }
    fn slice(&self) -> *const () {
        (self.0 as *const CudaSlice<T>).cast()
    }
    fn slice_mut(&mut self) -> *mut () {
        std::ptr::null_mut()
    }
}

impl<T> Held for WriteHeld<'_, T> {
    fn track<'s>(&'s mut self, stream: &'s CudaStream) -> SyncOnDrop<'s> {
        self.0.device_ptr_mut(stream).1
    }
    fn slice(&self) -> *const () {
        (&*self.0 as *const CudaSlice<T>).cast()
    }
    fn slice_mut(&mut self) -> *mut () {
        (&mut *self.0 as *mut CudaSlice<T>).cast()
    }
}

/// Drops a cudarc guard without recording its event: the address was only read.
fn disarm(mut guard: SyncOnDrop<'_>) {
    match &mut guard {
        SyncOnDrop::Record(target) => *target = None,
        SyncOnDrop::Sync(target) => *target = None,
    }
}

/// A kernel node and the kernel it runs (kept alive, with its module, by the graph).
struct KernelRecord {
    node: sys::CUgraphNode,
    kernel: Arc<Shared>,
}

/// What a recorder, a graph and an executable graph share.
struct Parts<'a> {
    id: u64,
    ctx: Arc<CudaContext>,
    /// Where buffer addresses are read: a private stream, so cudarc's event waits never
    /// reach a capturing stream (the legacy stream, never used, when tracking is off).
    addr_stream: Arc<CudaStream>,
    table: BindingTable,
    /// `held[i]` is the borrow behind `table.bindings[i]`.
    held: Vec<Box<dyn Held + 'a>>,
    kernels: Vec<KernelRecord>,
}

impl<'a> Parts<'a> {
    fn check_context(&self, ctx: &CudaContext) -> Result<(), Error> {
        if ctx.cu_ctx() != self.ctx.cu_ctx() {
            return Err(Error::Graph(GraphError::WrongContext {
                buffer_device: ctx.ordinal(),
                graph_device: self.ctx.ordinal(),
            }));
        }
        Ok(())
    }

    fn bind(&mut self, binding: Binding, held: Box<dyn Held + 'a>) -> u32 {
        self.held.push(held);
        self.table.push(binding)
    }

    fn read<T>(&mut self, buf: &'a CudaSlice<T>) -> Result<Buf<T>, Error> {
        self.check_context(buf.context())?;
        let (ptr, guard) = buf.device_ptr(&self.addr_stream);
        disarm(guard);
        let binding = Binding {
            ptr,
            len: buf.len() as u64,
            bytes: buf.num_bytes() as u64,
            writable: false,
        };
        let index = self.bind(binding, Box::new(ReadHeld(buf)));
        Ok(Buf::new(self.id, index))
    }

    fn write<T>(&mut self, buf: &'a mut CudaSlice<T>) -> Result<BufMut<T>, Error> {
        self.check_context(buf.context())?;
        let (ptr, guard) = buf.device_ptr_mut(&self.addr_stream);
        disarm(guard);
        let binding = Binding {
            ptr,
            len: buf.len() as u64,
            bytes: buf.num_bytes() as u64,
            writable: true,
        };
        let index = self.bind(binding, Box::new(WriteHeld(buf)));
        Ok(BufMut::new(self.id, index))
    }

    fn check_token(&self, what: &'static str, graph: u64) -> Result<(), Error> {
        if graph != self.id {
            return Err(Error::Graph(GraphError::ForeignToken {
                what,
                token_graph: graph,
                graph: self.id,
            }));
        }
        Ok(())
    }

    fn bind_ctx(&self) -> Result<(), Error> {
        self.ctx.bind_to_thread().map_err(driver(
            "making the graph's context current (cuCtxSetCurrent)",
        ))
    }
}

/// Records typed launches and buffer operations into a graph; handed to the closure of
/// [`capture`].
///
/// `'a` is how long the registered buffers stay borrowed (the life of the resulting
/// [`Graph`] / [`GraphExec`]); `'s` is the capture's borrow of the stream.
pub struct Recorder<'a, 's> {
    stream: &'s CudaStream,
    parts: Parts<'a>,
    /// Every node the recorder made (kernel, memset, copy), by handle.
    own_nodes: HashSet<usize>,
}

impl fmt::Debug for Recorder<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recorder")
            .field("graph", &self.parts.id)
            .field("buffers", &self.parts.table.bindings.len())
            .field("nodes", &self.own_nodes.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Recorder<'a, '_> {
    /// Registers `buf` for reading by the graph's nodes, borrowing it for `'a`.
    ///
    /// Reads its device address without touching the capturing stream (see the module
    /// docs on event tracking). The graph's nodes may read it; the host may read it too
    /// while the graph exists, but not write or free it.
    ///
    /// Errors: [`GraphError::WrongContext`] for a buffer of another context.
    pub fn read<T>(&mut self, buf: &'a CudaSlice<T>) -> Result<Buf<T>, Error> {
        self.parts.read(buf)
    }

    /// Registers `buf` for reading and writing by the graph's nodes, borrowing it
    /// mutably for `'a`; between replays, reach it through [`GraphExec::slice`] and
    /// [`GraphExec::slice_mut`].
    ///
    /// Errors: [`GraphError::WrongContext`] for a buffer of another context.
    pub fn write<T>(&mut self, buf: &'a mut CudaSlice<T>) -> Result<BufMut<T>, Error> {
        self.parts.write(buf)
    }

    /// Captures a launch of `kernel` with `cfg` and `args` as a kernel node, after the
    /// previous operation of this recorder (`cuLaunchKernel` on the capturing stream).
    ///
    /// Checks what [`Kernel::launch`] checks (the configuration against the device and
    /// the kernel; the argument types at compile time through `S`), plus: every token
    /// belongs to this graph, and no writable buffer overlaps another argument. Returns
    /// the node, for [`GraphExec::set_kernel_args`].
    ///
    /// Errors: [`Error::InvalidLaunch`] and [`Error::ExceedsMaxThreads`] as for
    /// [`Kernel::launch`];
    /// [`GraphError::ForeignToken`], [`GraphError::Aliased`];
    /// [`GraphError::CaptureFailed`] when the driver refuses the launch (usually because
    /// an earlier operation invalidated the capture).
    ///
    /// # Safety
    ///
    /// The obligations of [`Kernel::launch`], for every replay of the graph: the
    /// kernel stays within the registered buffers it is given with the grid of `cfg`,
    /// writes only through `BufMut` arguments, has no races between its threads, and
    /// its other preconditions hold.
    pub unsafe fn launch<S: GraphSignature>(
        &mut self,
        kernel: &Kernel<S>,
        cfg: LaunchConfig,
        args: S::GraphArgs,
    ) -> Result<KernelNode<S>, Error> {
        // SAFETY: the caller's contract.
        unsafe { self.launch_with(kernel, cfg, &LaunchAttributes::default(), args) }
    }

    /// [`launch`](Self::launch) with launch attributes (`cuLaunchKernelEx`): with
    /// programmatic stream serialization the node gets a programmatic dependency on the
    /// previous kernel node (CUDA 12.3+, sm_90+).
    ///
    /// Errors: those of [`launch`](Self::launch).
    ///
    /// # Safety
    ///
    /// The obligations of [`launch`](Self::launch) and of [`Kernel::launch_with`].
    pub unsafe fn launch_with<S: GraphSignature>(
        &mut self,
        kernel: &Kernel<S>,
        cfg: LaunchConfig,
        attrs: &LaunchAttributes,
        args: S::GraphArgs,
    ) -> Result<KernelNode<S>, Error> {
        let cfg = kernel.prepare(self.stream, &cfg)?;
        if attrs.is_cooperative() {
            kernel.check_cooperative(self.stream, &cfg)?;
        }
        let func = kernel.cu_function();
        let stream = self.stream;
        let res = S::with_params(args, &self.parts.table, kernel.name(), |params| {
            // SAFETY: `S` was checked against `func`'s signature when `kernel` was made;
            // `cfg` was validated by `prepare`, which made the stream's (the kernel's)
            // context current; `params` points at one lowered slot per parameter, each
            // naming registered buffers that outlive the graph; the caller upholds the
            // kernel's own obligations.
            unsafe { crate::launch::launch_kernel(func, stream, &cfg, attrs, params) }
        })?;
        res.map_err(|source| {
            let call = format!(
                "cuLaunchKernel(`{}`) on the capturing stream",
                kernel.name()
            );
            capture_failed(call, source, None)
        })?;
        let node = self.last_node("cuLaunchKernel")?;
        self.parts.kernels.push(KernelRecord {
            node,
            kernel: kernel.shared().clone(),
        });
        Ok(KernelNode {
            graph: self.parts.id,
            index: self.parts.kernels.len() - 1,
            _sig: PhantomData,
        })
    }

    /// Captures zeroing every byte of `dst` (`cuMemsetD8Async`) as a memset node. A
    /// buffer of 0 bytes adds no node.
    ///
    /// Errors: [`GraphError::ForeignToken`]; [`GraphError::CaptureFailed`].
    pub fn memset_zeros<T>(&mut self, dst: BufMut<T>) -> Result<(), Error> {
        let b = self.parts.table.get(dst.graph, dst.index)?;
        if b.bytes == 0 {
            return Ok(());
        }
        self.parts.bind_ctx()?;
        // SAFETY: `b` is a registered buffer of this context, borrowed mutably for the
        // graph's life; the memset covers exactly its bytes.
        unsafe { sys::cuMemsetD8Async(b.ptr, 0, b.bytes as usize, self.stream.cu_stream()) }
            .result()
            .map_err(|e| capture_failed("cuMemsetD8Async on the capturing stream", e, None))?;
        self.last_node("cuMemsetD8Async").map(drop)
    }

    /// Captures a device-to-device copy of all of `src` into `dst`
    /// (`cuMemcpyDtoDAsync`) as a memcpy node. Buffers of 0 bytes add no node.
    ///
    /// Errors: [`GraphError::BadCopy`] when the lengths differ or `src` is `dst`;
    /// [`GraphError::ForeignToken`]; [`GraphError::CaptureFailed`].
    pub fn copy<T>(&mut self, src: Buf<T>, dst: BufMut<T>) -> Result<(), Error> {
        let s = self.parts.table.get(src.graph, src.index)?;
        let d = self.parts.table.get(dst.graph, dst.index)?;
        let bad = |reason| {
            Error::Graph(GraphError::BadCopy {
                src: s.len,
                dst: d.len,
                reason,
            })
        };
        if s.len != d.len {
            return Err(bad("the lengths must be equal"));
        }
        if src.index == dst.index {
            return Err(bad("source and destination are the same buffer"));
        }
        if s.bytes == 0 {
            return Ok(());
        }
        self.parts.bind_ctx()?;
        // SAFETY: both are registered buffers of this context with `s.bytes` bytes,
        // distinct registrations of memory borrowed for the graph's life (`dst` mutably,
        // so it overlaps no other registration).
        unsafe {
            sys::cuMemcpyDtoDAsync_v2(d.ptr, s.ptr, s.bytes as usize, self.stream.cu_stream())
        }
        .result()
        .map_err(|e| capture_failed("cuMemcpyDtoDAsync on the capturing stream", e, None))?;
        self.last_node("cuMemcpyDtoDAsync").map(drop)
    }

    /// The node the last operation on the capturing stream added
    /// (`cuStreamGetCaptureInfo`: after one operation on one stream, the capture's
    /// dependency set is exactly that node).
    fn last_node(&mut self, after: &str) -> Result<sys::CUgraphNode, Error> {
        let mut status = 0u32;
        let mut deps: *const sys::CUgraphNode = std::ptr::null();
        let mut edges: *const sys::CUgraphEdgeData = std::ptr::null();
        let mut n = 0usize;
        // SAFETY: the stream is live; every out-pointer is valid (the status as its
        // `u32` representation, so an unknown value is no invalid enum); id and graph
        // are optional and not asked for.
        unsafe {
            sys::cuStreamGetCaptureInfo_v3(
                self.stream.cu_stream(),
                (&mut status as *mut u32).cast(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut deps,
                &mut edges,
                &mut n,
            )
        }
        .result()
        .map_err(|e| capture_failed(format!("cuStreamGetCaptureInfo after {after}"), e, None))?;
        let active = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE as u32;
        if status != active {
            let code = sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
            return Err(capture_failed(
                format!("cuStreamGetCaptureInfo after {after}"),
                DriverError(code),
                self.parts.ctx.check_err().err(),
            ));
        }
        if n != 1 || deps.is_null() {
            return Err(Error::Driver {
                context: format!(
                    "cuStreamGetCaptureInfo after {after}: {n} capture dependencies, expected \
                     the one node just added (did another stream join the capture?)"
                ),
                source: DriverError(sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_UNJOINED),
            });
        }
        // SAFETY: the driver returned `n == 1` valid entries at `deps`, alive until the
        // next call on this stream.
        let node = unsafe { *deps };
        self.own_nodes.insert(node as usize);
        Ok(node)
    }
}

/// Ends a capture when the closure panics, so the stream is not left capturing.
struct EndOnUnwind {
    stream: sys::CUstream,
    armed: bool,
}

impl Drop for EndOnUnwind {
    fn drop(&mut self) {
        if self.armed {
            let mut g: sys::CUgraph = std::ptr::null_mut();
            // SAFETY: the stream is live and capturing; the partial graph, if any, is
            // destroyed at once. Errors are ignored: a panic is already unwinding.
            unsafe {
                let _ = sys::cuStreamEndCapture(self.stream, &mut g);
                if !g.is_null() {
                    let _ = sys::cuGraphDestroy(g);
                }
            }
        }
    }
}

/// Captures the operations `f` records on `stream` into a [`Graph`], in thread-local
/// capture mode ([`capture_with_mode`] for the others).
///
/// `f` gets a [`Recorder`]: register buffers ([`Recorder::read`], [`Recorder::write`]),
/// then record launches and copies in the order they run; each depends on the previous
/// one (one stream, so a chain). Whatever `f` returns is passed back beside the graph
/// (typically the [`KernelNode`]s and buffer tokens needed later). Nothing runs on the
/// GPU: the graph runs when an instantiated [`GraphExec`] is launched.
///
/// `stream` must not be the legacy default stream (what
/// [`open_device`](crate::open_device) returns): make one with `CudaContext::new_stream`.
/// With cudarc's event tracking on (its default), the capture creates one private
/// stream (`cuStreamCreate`) to read buffer addresses on, which puts the context in
/// cudarc's multi-stream mode; the first time, cudarc synchronizes the context.
///
/// Errors: [`GraphError::LegacyStream`], [`GraphError::AlreadyCapturing`] before
/// capturing; whatever `f` returns (the capture is ended and discarded);
/// [`GraphError::CaptureFailed`] when `cuStreamBeginCapture` or `cuStreamEndCapture`
/// fails, naming the cause (an operation on the capturing stream that a capture does not
/// permit, such as a synchronize, or cudarc's event waits); [`GraphError::ForeignNodes`]
/// when work was issued on the stream outside the recorder. If `f` panics, the capture
/// is ended and discarded before the panic continues.
///
/// CUDA Driver API: `cuStreamIsCapturing`, `cuStreamBeginCapture`, `cuStreamEndCapture`,
/// `cuGraphGetNodes`, `cuGraphNodeGetType`. CUDA 12.3+.
pub fn capture<'a, R>(
    stream: &CudaStream,
    f: impl for<'s> FnOnce(&mut Recorder<'a, 's>) -> Result<R, Error>,
) -> Result<(Graph<'a>, R), Error> {
    capture_with_mode(stream, CaptureMode::ThreadLocal, f)
}

/// [`capture`] with another [`CaptureMode`].
///
/// Errors: those of [`capture`].
pub fn capture_with_mode<'a, R>(
    stream: &CudaStream,
    mode: CaptureMode,
    f: impl for<'s> FnOnce(&mut Recorder<'a, 's>) -> Result<R, Error>,
) -> Result<(Graph<'a>, R), Error> {
    let raw = stream.cu_stream();
    // `NULL` and `CU_STREAM_LEGACY` (0x1) are the legacy stream; `0x2` is the per-thread
    // default stream, which can be captured.
    if raw.is_null() || raw as usize == 1 {
        return Err(Error::Graph(GraphError::LegacyStream));
    }
    let ctx = stream.context().clone();
    ctx.bind_to_thread().map_err(driver(
        "making the stream's context current (cuCtxSetCurrent)",
    ))?;
    let mut status = 0u32;
    // SAFETY: a live stream; the status is written as its `u32` representation.
    unsafe { sys::cuStreamIsCapturing(raw, (&mut status as *mut u32).cast()) }
        .result()
        .map_err(driver("cuStreamIsCapturing"))?;
    if status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE as u32 {
        return Err(Error::Graph(GraphError::AlreadyCapturing));
    }
    let addr_stream = if ctx.is_event_tracking() {
        ctx.new_stream().map_err(driver(
            "creating the capture's address stream (cuStreamCreate)",
        ))?
    } else {
        ctx.default_stream()
    };
    // Errors cudarc recorded before the capture are put back afterwards; those recorded
    // during it are reported with a failed capture.
    let earlier = ctx.check_err();
    // SAFETY: a live stream of the current context, not capturing.
    if let Err(e) = unsafe { cudarc::driver::result::stream::begin_capture(raw, mode.raw()) } {
        ctx.record_err(earlier);
        return Err(capture_failed("cuStreamBeginCapture", e, None));
    }
    let mut guard = EndOnUnwind {
        stream: raw,
        armed: true,
    };
    let id = next_id();
    let mut rec = Recorder {
        stream,
        parts: Parts {
            id,
            ctx: ctx.clone(),
            addr_stream,
            table: BindingTable::new(id),
            held: Vec::new(),
            kernels: Vec::new(),
        },
        own_nodes: HashSet::new(),
    };
    let out = f(&mut rec);
    guard.armed = false;
    // Taken before binding: cudarc's `bind_to_thread` returns (and clears) a recorded
    // error as its own.
    let during = ctx.check_err().err();
    let _ = ctx.bind_to_thread();
    let mut g: sys::CUgraph = std::ptr::null_mut();
    // SAFETY: the stream is live and was capturing (unless `f` ended it, which the
    // driver reports).
    let ended = unsafe { sys::cuStreamEndCapture(raw, &mut g) }.result();
    ctx.record_err(earlier);
    let destroy = |g: sys::CUgraph| {
        if !g.is_null() {
            // SAFETY: a graph this capture made and nothing else refers to.
            ctx.record_err(unsafe { sys::cuGraphDestroy(g) }.result());
        }
    };
    let r = match out {
        Ok(r) => r,
        Err(e) => {
            destroy(g);
            return Err(e);
        }
    };
    if let Err(e) = ended {
        destroy(g);
        return Err(capture_failed("cuStreamEndCapture", e, during));
    }
    if g.is_null() {
        return Err(capture_failed(
            "cuStreamEndCapture",
            DriverError(sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
            during,
        ));
    }
    let mut graph = Graph {
        parts: rec.parts,
        graph: g,
        node_count: 0,
    };
    let nodes = graph.nodes()?;
    let mut foreign = Vec::new();
    for node in &nodes {
        let kind = node_type(*node)?;
        let harmless = kind == sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY as u32
            || kind == sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EVENT_RECORD as u32
            || kind == sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_WAIT_EVENT as u32;
        if !harmless && !rec.own_nodes.contains(&(*node as usize)) {
            foreign.push(node_type_name(kind).to_string());
        }
    }
    if !foreign.is_empty() {
        return Err(Error::Graph(GraphError::ForeignNodes { kinds: foreign }));
    }
    graph.node_count = nodes.len();
    Ok((graph, r))
}

fn node_type(node: sys::CUgraphNode) -> Result<u32, Error> {
    let mut kind = u32::MAX;
    // SAFETY: a node of a live graph; the type is written as its `u32` representation,
    // so a type newer than these bindings is no invalid enum.
    unsafe { sys::cuGraphNodeGetType(node, (&mut kind as *mut u32).cast()) }
        .result()
        .map_err(driver("cuGraphNodeGetType"))?;
    Ok(kind)
}

fn node_type_name(kind: u32) -> &'static str {
    match kind {
        0 => "kernel",
        1 => "memcpy",
        2 => "memset",
        3 => "host function",
        4 => "child graph",
        5 => "empty",
        6 => "event wait",
        7 => "event record",
        8 => "external semaphore signal",
        9 => "external semaphore wait",
        10 => "mem alloc",
        11 => "mem free",
        12 => "batch mem op",
        13 => "conditional",
        _ => "unknown",
    }
}

/// A captured CUDA graph (`CUgraph`): the template [`instantiate`](Self::instantiate)
/// turns into an executable [`GraphExec`].
///
/// Holds the borrows of its registered buffers for `'a` and a reference to every
/// kernel's module. Dropping it destroys the graph (`cuGraphDestroy`). Not `Send`: CUDA
/// graph objects are not thread-safe.
pub struct Graph<'a> {
    parts: Parts<'a>,
    graph: sys::CUgraph,
    node_count: usize,
}

impl fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Graph")
            .field("id", &self.parts.id)
            .field("nodes", &self.node_count)
            .field("kernel_nodes", &self.parts.kernels.len())
            .field("buffers", &self.parts.table.bindings.len())
            .finish_non_exhaustive()
    }
}

impl Drop for Graph<'_> {
    fn drop(&mut self) {
        if !self.graph.is_null() {
            let ctx = &self.parts.ctx;
            ctx.record_err(ctx.bind_to_thread());
            // SAFETY: this graph owns `graph`; executable graphs made from it are
            // independent of it.
            ctx.record_err(unsafe { sys::cuGraphDestroy(self.graph) }.result());
        }
    }
}

impl<'a> Graph<'a> {
    fn nodes(&self) -> Result<Vec<sys::CUgraphNode>, Error> {
        let mut n = 0usize;
        // SAFETY: a live graph; with a null array the call only writes the count.
        unsafe { sys::cuGraphGetNodes(self.graph, std::ptr::null_mut(), &mut n) }
            .result()
            .map_err(driver("cuGraphGetNodes"))?;
        let mut nodes = vec![std::ptr::null_mut(); n];
        // SAFETY: `nodes` has room for the `n` nodes the graph has.
        unsafe { sys::cuGraphGetNodes(self.graph, nodes.as_mut_ptr(), &mut n) }
            .result()
            .map_err(driver("cuGraphGetNodes"))?;
        nodes.truncate(n);
        Ok(nodes)
    }

    /// Every node of the graph (kernel, memset, memcpy and any empty or event nodes the
    /// driver added).
    pub fn node_count(&self) -> usize {
        self.node_count
    }

    /// The kernel nodes, one per [`Recorder::launch`].
    pub fn kernel_node_count(&self) -> usize {
        self.parts.kernels.len()
    }

    /// This graph's id, which its tokens and nodes carry.
    pub fn id(&self) -> u64 {
        self.parts.id
    }

    /// The raw `CUgraph`, valid while `self` lives. Do not destroy it.
    pub fn cu_graph(&self) -> sys::CUgraph {
        self.graph
    }

    /// Makes the executable graph (`cuGraphInstantiateWithFlags`, no flags). Takes the
    /// template along: it keeps the buffer borrows and the kernels' modules.
    ///
    /// Instantiation costs time in proportion to the node count (roughly a microsecond
    /// per node); launch the result many times.
    ///
    /// Errors: [`Error::Driver`] when the driver refuses (e.g. out of memory).
    pub fn instantiate(self) -> Result<GraphExec<'a>, Error> {
        self.parts.bind_ctx()?;
        let mut exec: sys::CUgraphExec = std::ptr::null_mut();
        // SAFETY: a live graph of the current context; `exec` is a valid out-pointer.
        unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, self.graph, 0) }
            .result()
            .map_err(driver("cuGraphInstantiateWithFlags"))?;
        Ok(GraphExec { graph: self, exec })
    }
}

/// An executable graph (`CUgraphExec`): launch it any number of times, on any stream of
/// its context.
///
/// Owns the [`Graph`] it came from, and with it the borrows of the registered buffers
/// for `'a`. Dropping it destroys the executable graph (`cuGraphExecDestroy`; a launch
/// still running finishes first, on the GPU). Not `Send`.
pub struct GraphExec<'a> {
    graph: Graph<'a>,
    exec: sys::CUgraphExec,
}

impl fmt::Debug for GraphExec<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphExec")
            .field("graph", &self.graph)
            .finish_non_exhaustive()
    }
}

impl Drop for GraphExec<'_> {
    fn drop(&mut self) {
        let ctx = &self.graph.parts.ctx;
        ctx.record_err(ctx.bind_to_thread());
        // SAFETY: this value owns `exec`; the driver frees it after any launch in flight.
        ctx.record_err(unsafe { sys::cuGraphExecDestroy(self.exec) }.result());
    }
}

impl<'a> GraphExec<'a> {
    /// Enqueues one run of the whole graph on `stream` (`cuGraphLaunch`) and returns;
    /// synchronize the stream (or copy from it) to wait.
    ///
    /// Ordered like a kernel launch: `stream` first waits for earlier writes (and, for
    /// writable buffers, reads) of every registered buffer on other streams, and the run
    /// is recorded as a read or write of each afterwards (cudarc's event tracking: one
    /// `cuStreamWaitEvent` and one `cuEventRecord` per registered buffer, none when the
    /// context has a single stream). Runs of one executable graph never overlap each
    /// other: CUDA orders them.
    ///
    /// Errors: [`Error::InvalidLaunch`] for a stream of another context; [`Error::Driver`]
    /// when `cuGraphLaunch` fails (errors of the kernels themselves appear at the next
    /// synchronizing call).
    pub fn launch(&mut self, stream: &CudaStream) -> Result<(), Error> {
        self.check_stream(stream)?;
        let parts = &mut self.graph.parts;
        parts.bind_ctx()?;
        let guards: Vec<SyncOnDrop<'_>> = parts.held.iter_mut().map(|h| h.track(stream)).collect();
        // SAFETY: a live executable graph and a live stream of its context, which is
        // current; every buffer its nodes name is borrowed by `self` for `'a`.
        let res = unsafe { sys::cuGraphLaunch(self.exec, stream.cu_stream()) }.result();
        drop(guards); // records the run on each buffer, after the launch is enqueued
        res.map_err(driver(format!(
            "cuGraphLaunch (graph #{})",
            self.graph.parts.id
        )))
    }

    /// Uploads the executable graph's work descriptors to the device in `stream`'s order
    /// (`cuGraphUpload`), so the first [`launch`](Self::launch) does not pay for it.
    ///
    /// Errors: [`Error::InvalidLaunch`] for a stream of another context;
    /// [`Error::Driver`].
    pub fn upload(&mut self, stream: &CudaStream) -> Result<(), Error> {
        self.check_stream(stream)?;
        self.graph.parts.bind_ctx()?;
        // SAFETY: a live executable graph and a live stream of its current context.
        unsafe { sys::cuGraphUpload(self.exec, stream.cu_stream()) }
            .result()
            .map_err(driver("cuGraphUpload"))
    }

    fn check_stream(&self, stream: &CudaStream) -> Result<(), Error> {
        let ctx = &self.graph.parts.ctx;
        if stream.context().cu_ctx() != ctx.cu_ctx() {
            return Err(Error::InvalidLaunch {
                kernel: None,
                reason: format!(
                    "graph #{} belongs to the context of device {}, the stream to device {}",
                    self.graph.parts.id,
                    ctx.ordinal(),
                    stream.context().ordinal()
                ),
            });
        }
        Ok(())
    }

    /// The graph this was instantiated from.
    pub fn graph(&self) -> &Graph<'a> {
        &self.graph
    }

    /// The raw `CUgraphExec`, valid while `self` lives. Do not destroy it.
    pub fn cu_graph_exec(&self) -> sys::CUgraphExec {
        self.exec
    }

    /// Registers one more buffer for reading, for [`set_kernel_args`](Self::set_kernel_args);
    /// as [`Recorder::read`].
    ///
    /// Errors: [`GraphError::WrongContext`].
    pub fn read<T>(&mut self, buf: &'a CudaSlice<T>) -> Result<Buf<T>, Error> {
        self.graph.parts.read(buf)
    }

    /// Registers one more buffer for writing, for [`set_kernel_args`](Self::set_kernel_args);
    /// as [`Recorder::write`].
    ///
    /// Errors: [`GraphError::WrongContext`].
    pub fn write<T>(&mut self, buf: &'a mut CudaSlice<T>) -> Result<BufMut<T>, Error> {
        self.graph.parts.write(buf)
    }

    /// The registered buffer `buf` names, for the host to read between launches (e.g.
    /// `host_loader::memory::to_host_vec(&stream, exec.slice(out.read())?)`;
    /// stream-ordered after the last launch by cudarc's event tracking).
    ///
    /// Errors: [`GraphError::ForeignToken`].
    pub fn slice<T>(&self, buf: Buf<T>) -> Result<&CudaSlice<T>, Error> {
        let parts = &self.graph.parts;
        parts.check_token("buffer", buf.graph)?;
        let p = parts.held[buf.index as usize]
            .slice()
            .cast::<CudaSlice<T>>();
        // SAFETY: tokens of this graph are made only by `read::<T>`/`write::<T>` with
        // the index of a `CudaSlice<T>` borrowed for `'a`; `&self` keeps it from being
        // used mutably meanwhile.
        Ok(unsafe { &*p })
    }

    /// The registered writable buffer `buf` names, for the host to write between
    /// launches (e.g. the next inputs, `stream.memcpy_htod(&x, exec.slice_mut(x_buf)?)`).
    ///
    /// Errors: [`GraphError::ForeignToken`].
    pub fn slice_mut<T>(&mut self, buf: BufMut<T>) -> Result<&mut CudaSlice<T>, Error> {
        let parts = &mut self.graph.parts;
        parts.check_token("buffer", buf.graph)?;
        let p = parts.held[buf.index as usize]
            .slice_mut()
            .cast::<CudaSlice<T>>();
        debug_assert!(!p.is_null());
        // SAFETY: a `BufMut<T>` of this graph is made only by `write::<T>`, whose
        // registration holds a `&'a mut CudaSlice<T>`; `&mut self` makes this borrow
        // unique.
        Ok(unsafe { &mut *p })
    }

    /// Changes the configuration and arguments of one captured kernel node in this
    /// executable graph (`cuGraphExecKernelNodeSetParams`); later launches use them. The
    /// template [`Graph`] keeps the captured ones.
    ///
    /// The arguments have the node's own signature `S` (the compiler refuses others, as
    /// for a launch); buffers must be registered with this graph, at capture or with
    /// [`read`](Self::read) / [`write`](Self::write). The kernel stays the same (CUDA
    /// allows a node's function to change only within limits; a node is typed by its
    /// kernel here). For changes beyond one node's parameters, recapture and
    /// [`update`](Self::update).
    ///
    /// Errors: [`GraphError::ForeignToken`] for a node or buffer of another graph;
    /// [`Error::InvalidLaunch`] for a configuration the kernel or device refuses
    /// ([`Error::ExceedsMaxThreads`] for a block over the kernel's bound);
    /// [`GraphError::Aliased`]; [`Error::Driver`] when the driver refuses.
    ///
    /// # Safety
    ///
    /// The obligations of [`Recorder::launch`], for the new configuration and arguments.
    pub unsafe fn set_kernel_args<S: GraphSignature>(
        &mut self,
        node: KernelNode<S>,
        cfg: LaunchConfig,
        args: S::GraphArgs,
    ) -> Result<(), Error> {
        let parts = &self.graph.parts;
        parts.check_token("kernel node", node.graph)?;
        let record = &parts.kernels[node.index];
        // The node was made from a `Kernel<S>` over this `Shared` (same `S`: the node's
        // type parameter).
        let kernel = Kernel::<S>::from_shared(record.kernel.clone());
        let cfg = kernel.prepare_config(&cfg)?;
        parts.bind_ctx()?;
        let exec = self.exec;
        let node_handle = record.node;
        let res = S::with_params(args, &parts.table, kernel.name(), |params| {
            let p = sys::CUDA_KERNEL_NODE_PARAMS {
                func: kernel.cu_function(),
                gridDimX: cfg.grid_dim.0,
                gridDimY: cfg.grid_dim.1,
                gridDimZ: cfg.grid_dim.2,
                blockDimX: cfg.block_dim.0,
                blockDimY: cfg.block_dim.1,
                blockDimZ: cfg.block_dim.2,
                sharedMemBytes: cfg.shared_mem_bytes,
                kernelParams: params.as_mut_ptr(),
                extra: std::ptr::null_mut(),
                kern: std::ptr::null_mut(),
                ctx: std::ptr::null_mut(),
            };
            // SAFETY: `exec` and `node_handle` are live and belong together; `func` is the
            // node's own function (its module is held); `params` has one slot per
            // parameter of the checked signature `S`, naming registered buffers; the
            // driver copies the parameters before returning.
            unsafe { sys::cuGraphExecKernelNodeSetParams_v2(exec, node_handle, &p) }.result()
        })?;
        res.map_err(driver(format!(
            "cuGraphExecKernelNodeSetParams(`{}`, launch {} of graph #{})",
            kernel.name(),
            node.index,
            parts.id
        )))
    }

    /// Replaces every node's parameters with those of `new`, a graph captured with the
    /// same shape (the same operations in the same order, kernels unchanged), without
    /// instantiating again (`cuGraphExecUpdate`). Returns the executable graph for
    /// `new`: its borrows and nodes replace the old ones, whose tokens and
    /// [`KernelNode`]s stop being valid.
    ///
    /// Use it when many arguments change at once (recapturing is cheap next to
    /// instantiating); [`set_kernel_args`](Self::set_kernel_args) changes one node.
    ///
    /// Errors: [`GraphError::UpdateRefused`] with the driver's reason when the shapes
    /// differ (the executable graph is destroyed then; instantiate `new` instead);
    /// [`Error::Driver`].
    pub fn update<'b>(self, new: Graph<'b>) -> Result<GraphExec<'b>, Error> {
        new.parts.check_context(&self.graph.parts.ctx)?;
        new.parts.bind_ctx()?;
        let mut info = sys::CUgraphExecUpdateResultInfo {
            result: sys::CUgraphExecUpdateResult::CU_GRAPH_EXEC_UPDATE_SUCCESS,
            errorNode: std::ptr::null_mut(),
            errorFromNode: std::ptr::null_mut(),
        };
        // SAFETY: a live executable graph and a live graph of the same, current context;
        // `info` is a valid out-pointer.
        let res = unsafe { sys::cuGraphExecUpdate_v2(self.exec, new.graph, &mut info) }.result();
        // `info.result` is read as its `u32` representation (an unknown value is no
        // invalid enum).
        // SAFETY: `CUgraphExecUpdateResult` is a `#[repr(u32)]` enum.
        let code: u32 = unsafe { std::ptr::addr_of!(info.result).cast::<u32>().read() };
        match res {
            Ok(()) => {
                let mut old = std::mem::ManuallyDrop::new(self);
                let exec = old.exec;
                // SAFETY: `old` is never used again; its graph is dropped here (the
                // template and the old borrows), its executable graph moves on.
                unsafe { std::ptr::drop_in_place(&mut old.graph) };
                Ok(GraphExec { graph: new, exec })
            }
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE => {
                let (result, reason) = update_result(code);
                Err(Error::Graph(GraphError::UpdateRefused { result, reason }))
            }
            Err(e) => Err(driver("cuGraphExecUpdate")(e)),
        }
    }
}

fn update_result(code: u32) -> (&'static str, &'static str) {
    match code {
        1 => ("CU_GRAPH_EXEC_UPDATE_ERROR", "an invalid value"),
        2 => (
            "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED",
            "the graph has other nodes or dependencies",
        ),
        3 => (
            "CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED",
            "a node's type changed (e.g. a kernel where a copy was)",
        ),
        4 => (
            "CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED",
            "a kernel node's function changed in a way that cannot be updated",
        ),
        5 => (
            "CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED",
            "a node's parameters changed in a way that cannot be updated (e.g. a copy's \
             memory moved to another device)",
        ),
        6 => (
            "CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED",
            "something about a node is not supported by updates",
        ),
        7 => (
            "CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE",
            "a kernel node's function changed in an unsupported way",
        ),
        8 => (
            "CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED",
            "a node's attributes changed in a way that cannot be updated",
        ),
        _ => (
            "unknown CUgraphExecUpdateResult",
            "the driver gave no known reason",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(bindings: &[(u64, u64, bool)]) -> BindingTable {
        BindingTable {
            graph: 7,
            bindings: bindings
                .iter()
                .map(|&(ptr, len, writable)| Binding {
                    ptr,
                    len,
                    bytes: len * 4,
                    writable,
                })
                .collect(),
        }
    }

    #[test]
    fn lowering_builds_the_launch_bytes() {
        let t = table(&[(0x1000, 16, false), (0x2000, 8, true)]);
        let a = Buf::<f32>::new(7, 0);
        let c = BufMut::<f32>::new(7, 1);
        let (raw, acc) = <Slice<f32> as GraphParam>::lower_graph(a, &t).unwrap();
        assert_eq!(
            raw,
            RawSlice {
                ptr: 0x1000,
                len: 16
            }
        );
        let acc = acc.unwrap();
        assert_eq!((acc.start, acc.end, acc.writable), (0x1000, 0x1040, false));
        let (raw, acc) = <SliceMut<f32> as GraphParam>::lower_graph(c, &t).unwrap();
        assert_eq!(
            raw,
            RawSlice {
                ptr: 0x2000,
                len: 8
            }
        );
        assert!(acc.unwrap().writable);
        let (p, _) = <PtrMut<f32> as GraphParam>::lower_graph(c, &t).unwrap();
        assert_eq!(p, 0x2000);
        let (p, _) = <Ptr<f32> as GraphParam>::lower_graph(c.read(), &t).unwrap();
        assert_eq!(p, 0x2000);
        assert_eq!(
            <u32 as GraphParam>::lower_graph(5, &t).unwrap().0,
            5,
            "scalars pass by value"
        );
    }

    #[test]
    fn params_point_at_the_lowered_bytes() {
        let t = table(&[(0x1000, 16, false), (0x2000, 16, true)]);
        let args = (
            Buf::<f32>::new(7, 0),
            Buf::new(7, 0),
            BufMut::new(7, 1),
            9u32,
        );
        let seen = <(Slice<f32>, Slice<f32>, SliceMut<f32>, u32) as GraphSignature>::with_params(
            args,
            &t,
            "k",
            |params| {
                assert_eq!(params.len(), 4);
                // SAFETY: the slots are the lowered `RawSlice`s and the `u32`, alive
                // during the callback.
                unsafe {
                    (
                        *(params[0] as *const RawSlice),
                        *(params[2] as *const RawSlice),
                        *(params[3] as *const u32),
                    )
                }
            },
        )
        .unwrap();
        assert_eq!(
            seen.0,
            RawSlice {
                ptr: 0x1000,
                len: 16
            }
        );
        assert_eq!(
            seen.1,
            RawSlice {
                ptr: 0x2000,
                len: 16
            }
        );
        assert_eq!(seen.2, 9);
        // The empty signature lowers to no parameters.
        let n = <() as GraphSignature>::with_params((), &t, "empty", |p| p.len()).unwrap();
        assert_eq!(n, 0);
    }

    #[test]
    fn foreign_tokens_are_refused() {
        let t = table(&[(0x1000, 16, false)]);
        let e = <Slice<f32> as GraphParam>::lower_graph(Buf::new(8, 0), &t).unwrap_err();
        assert_eq!(
            e.to_string(),
            "buffer belongs to graph or sequence #8, not to this one (#7): tokens and nodes \
             are only valid in the capture or sequence that made them"
        );
    }

    #[test]
    fn a_writable_buffer_may_not_alias_another_argument() {
        let t = table(&[(0x1000, 16, false), (0x2000, 16, true), (0x1020, 4, false)]);
        let sig = |a, b, c| {
            <(Slice<f32>, Slice<f32>, SliceMut<f32>) as GraphSignature>::with_params(
                (a, b, c),
                &t,
                "vecadd",
                |_| (),
            )
        };
        let (a, c) = (Buf::<f32>::new(7, 0), BufMut::<f32>::new(7, 1));
        // Reading one buffer twice is fine; reading the written one is not.
        sig(a, a, c).unwrap();
        let e = sig(c.read(), a, c).unwrap_err();
        assert!(matches!(
            e,
            Error::Graph(GraphError::Aliased {
                first: 0,
                second: 2,
                ..
            })
        ));
        assert!(e.to_string().starts_with(
            "kernel `vecadd`: parameters 0 and 2 name overlapping device memory and at least \
             one is writable"
        ));
        // Overlapping ranges of read-only registrations are fine.
        sig(a, Buf::new(7, 2), c).unwrap();
        // Empty ranges overlap nothing.
        check_aliasing(
            "k",
            &[
                Some(Access {
                    start: 5,
                    end: 5,
                    writable: true,
                }),
                Some(Access {
                    start: 0,
                    end: 10,
                    writable: true,
                }),
            ],
        )
        .unwrap();
    }

    #[test]
    fn capture_failures_name_their_cause() {
        use sys::CUresult as R;
        let e = capture_failed(
            "cuStreamEndCapture",
            DriverError(R::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
            Some(DriverError(R::CUDA_ERROR_STREAM_CAPTURE_ISOLATION)),
        );
        let msg = e.to_string();
        assert!(
            msg.starts_with("graph capture failed: cuStreamEndCapture: "),
            "{msg}"
        );
        assert!(msg.contains("invalidated the whole capture"), "{msg}");
        assert!(
            msg.contains("cudarc also recorded, without returning it"),
            "{msg}"
        );
        for code in [
            R::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
            R::CUDA_ERROR_STREAM_CAPTURE_MERGE,
            R::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
            R::CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
            R::CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
            R::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
            R::CUDA_ERROR_CAPTURED_EVENT,
            R::CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
        ] {
            assert_ne!(
                capture_cause(code),
                capture_cause(R::CUDA_ERROR_UNKNOWN),
                "{code:?}"
            );
        }
        assert_eq!(
            GraphError::LegacyStream.to_string(),
            "the legacy default stream cannot be captured (cuStreamBeginCapture refuses it); \
             capture on a stream made with CudaContext::new_stream() or CudaStream::fork()"
        );
        let foreign = GraphError::ForeignNodes {
            kinds: vec!["kernel".into(), "mem free".into()],
        };
        assert!(foreign.to_string().starts_with(
            "the captured graph has 2 nodes not made through the Recorder (kernel, mem free)"
        ));
    }

    #[test]
    fn update_results_are_named() {
        for code in 1..=8 {
            assert!(update_result(code)
                .0
                .starts_with("CU_GRAPH_EXEC_UPDATE_ERROR"));
        }
        assert_eq!(update_result(99).0, "unknown CUgraphExecUpdateResult");
        assert_eq!(node_type_name(11), "mem free");
        assert_eq!(node_type_name(0), "kernel");
    }

    #[test]
    fn tokens_are_small_copy_values() {
        assert_eq!(std::mem::size_of::<Buf<f64>>(), 16);
        let c = BufMut::<u8>::new(3, 4);
        let r: Buf<u8> = c.into();
        assert_eq!((r.graph, r.index), (3, 4));
        assert_eq!(format!("{c:?}"), "BufMut<u8>(graph #3, buffer 4)");
    }
}
