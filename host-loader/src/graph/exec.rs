//! Running a graph: [`Graph`] (the captured template) is instantiated into a
//! [`GraphExec`], which launches, uploads, gives registered buffers back to the host
//! between launches, and changes one kernel node ([`GraphExec::set_kernel_args`]) or every
//! node ([`GraphExec::update`]).

use std::fmt;

use cudarc::driver::{sys, CudaSlice, CudaStream, LaunchConfig, SyncOnDrop};

use super::error::GraphError;
use super::params::GraphSignature;
use super::parts::{driver, Parts};
use super::tokens::{Buf, BufMut, KernelNode};
use crate::error::Error;
use crate::kernel::Kernel;

/// A captured CUDA graph (`CUgraph`): the template [`instantiate`](Self::instantiate)
/// turns into an executable [`GraphExec`].
///
/// Holds the borrows of its registered buffers for `'a` and a reference to every
/// kernel's module. Dropping it destroys the graph (`cuGraphDestroy`). Not `Send`: CUDA
/// graph objects are not thread-safe.
pub struct Graph<'a> {
    pub(super) parts: Parts<'a>,
    pub(super) graph: sys::CUgraph,
    pub(super) node_count: usize,
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
    pub(super) fn nodes(&self) -> Result<Vec<sys::CUgraphNode>, Error> {
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

    /// The kernel nodes, one per [`Recorder::launch`](super::Recorder::launch).
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

    /// Registers one more buffer for reading, for
    /// [`set_kernel_args`](Self::set_kernel_args); as
    /// [`Recorder::read`](super::Recorder::read).
    ///
    /// Errors: [`GraphError::WrongContext`].
    pub fn read<T>(&mut self, buf: &'a CudaSlice<T>) -> Result<Buf<T>, Error> {
        self.graph.parts.read(buf)
    }

    /// Registers one more buffer for writing, for
    /// [`set_kernel_args`](Self::set_kernel_args); as
    /// [`Recorder::write`](super::Recorder::write).
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
    /// The obligations of [`Recorder::launch`](super::Recorder::launch), for the new
    /// configuration and arguments.
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
        let res = kernel.with_graph_params(args, &parts.table, |params| {
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

pub(super) fn update_result(code: u32) -> (&'static str, &'static str) {
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
