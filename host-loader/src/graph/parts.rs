//! What a recorder, a graph and an executable graph share ([`Parts`]): the binding
//! table, the borrowed buffers behind it (ordered on each replay's stream), and the
//! kernel nodes with the kernels they run.

use std::sync::Arc;

use cudarc::driver::{
    sys, CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DriverError, SyncOnDrop,
};

use super::error::GraphError;
use super::tokens::{Binding, BindingTable, Buf, BufMut};
use crate::error::Error;
use crate::kernel::Shared;

/// Maps a driver error to [`Error::Driver`] with `context` (the call and its subject).
pub(super) fn driver(context: impl Into<String>) -> impl FnOnce(DriverError) -> Error {
    let context = context.into();
    move |source| Error::Driver { context, source }
}

/// A borrowed, registered buffer: orders a replay on a stream (cudarc's event tracking)
/// and gives the `CudaSlice` back to the host between replays.
pub(super) trait Held {
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
pub(super) struct KernelRecord {
    pub(super) node: sys::CUgraphNode,
    pub(super) kernel: Arc<Shared>,
}

/// What a recorder, a graph and an executable graph share.
pub(super) struct Parts<'a> {
    pub(super) id: u64,
    pub(super) ctx: Arc<CudaContext>,
    /// Where buffer addresses are read: a private stream, so cudarc's event waits never
    /// reach a capturing stream (the legacy stream, never used, when tracking is off).
    pub(super) addr_stream: Arc<CudaStream>,
    pub(super) table: BindingTable,
    /// `held[i]` is the borrow behind `table.bindings[i]`.
    pub(super) held: Vec<Box<dyn Held + 'a>>,
    pub(super) kernels: Vec<KernelRecord>,
}

impl<'a> Parts<'a> {
    pub(super) fn check_context(&self, ctx: &CudaContext) -> Result<(), Error> {
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

    pub(super) fn read<T>(&mut self, buf: &'a CudaSlice<T>) -> Result<Buf<T>, Error> {
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

    pub(super) fn write<T>(&mut self, buf: &'a mut CudaSlice<T>) -> Result<BufMut<T>, Error> {
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

    pub(super) fn check_token(&self, what: &'static str, graph: u64) -> Result<(), Error> {
        if graph != self.id {
            return Err(Error::Graph(GraphError::ForeignToken {
                what,
                token_graph: graph,
                graph: self.id,
            }));
        }
        Ok(())
    }

    pub(super) fn bind_ctx(&self) -> Result<(), Error> {
        self.ctx.bind_to_thread().map_err(driver(
            "making the graph's context current (cuCtxSetCurrent)",
        ))
    }
}
