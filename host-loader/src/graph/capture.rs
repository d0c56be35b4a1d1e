//! Recording a graph: [`capture`] / [`capture_with_mode`] run a closure with a
//! [`Recorder`] on a capturing stream, whose launches, memsets and copies become the
//! graph's nodes; nodes made outside the recorder are refused.

use std::collections::HashSet;
use std::fmt;
use std::marker::PhantomData;

use cudarc::driver::{sys, CudaSlice, CudaStream, DriverError, LaunchConfig};

use super::error::{capture_cause, GraphError};
use super::exec::Graph;
use super::params::GraphSignature;
use super::parts::{driver, KernelRecord, Parts};
use super::tokens::{next_id, BindingTable, Buf, BufMut, KernelNode};
use crate::error::Error;
use crate::kernel::Kernel;
use crate::launch::LaunchAttributes;

pub(super) fn capture_failed(
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

/// Records typed launches and buffer operations into a graph; handed to the closure of
/// [`capture`].
///
/// `'a` is how long the registered buffers stay borrowed (the life of the resulting
/// [`Graph`] / [`GraphExec`](super::GraphExec)); `'s` is the capture's borrow of the
/// stream.
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

    /// Registers `buf` for reading and writing by the graph's nodes, borrowing it mutably
    /// for `'a`; between replays, reach it through
    /// [`GraphExec::slice`](super::GraphExec::slice) and
    /// [`GraphExec::slice_mut`](super::GraphExec::slice_mut).
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
    /// the node, for [`GraphExec::set_kernel_args`](super::GraphExec::set_kernel_args).
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
        let res = kernel.with_graph_params(args, &self.parts.table, |params| {
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
/// GPU: the graph runs when an instantiated [`GraphExec`](super::GraphExec) is launched.
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

pub(super) fn node_type_name(kind: u32) -> &'static str {
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
