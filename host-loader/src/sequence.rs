//! Launch sequences: many launches on one stream, with the cross-stream ordering of their
//! buffers done once per buffer instead of once per launch.
//!
//! [`Kernel::launch`] takes `&CudaSlice` / `&mut CudaSlice` arguments, and the moment it
//! returns, any other code may use those buffers on any stream (cudarc's copies, another
//! launch, a drop). What orders that other use after this launch is cudarc's event
//! tracking, which every such use consults: each buffer carries a read event and a write
//! event, so in a context with more than one stream every launch makes its stream wait
//! (`cuStreamWaitEvent`) on the last write of each argument, and on the last read of each
//! writable one, and records (`cuEventRecord`) the read or the write after the launch.
//! For a kernel of three buffers that is 4 waits and 3 records beside one
//! `cuLaunchKernel`: most of the host time of a launch (benches/LOG.md, "Where the time went").
//! None of it can be skipped per launch: the loader cannot see what other code does with
//! a buffer between two launches.
//!
//! A sequence holds the buffers instead. [`run`] gives a closure a [`Sequence`] on one
//! stream; [`Sequence::read`] and [`Sequence::write`] register buffers (borrowing them,
//! shared or exclusive, until `run` returns), and [`Sequence::launch`] launches on the
//! sequence's stream with the registered buffers' tokens, the same [`Buf`] / [`BufMut`]
//! tokens a graph capture uses. While the sequence holds a buffer nothing else can write
//! it (nor read it, when it is registered writable), and every launch of the sequence is
//! on one stream, so launches are ordered among themselves by the stream: a launch is the
//! configuration checks, a `cuCtxGetCurrent` and one `cuLaunchKernel`, with no event
//! call.
//!
//! | when | what | CUDA driver API |
//! |---|---|---|
//! | [`Sequence::read`] | the stream waits for the buffer's last write on any stream | `cuStreamWaitEvent` (1) |
//! | [`Sequence::write`] | the stream waits for its last read and its last write | `cuStreamWaitEvent` (2) |
//! | [`Sequence::launch`] | checks, launch | `cuCtxGetCurrent`, `cuLaunchKernel` |
//! | end of [`run`] | every `read` buffer's read event and every `write` buffer's write event recorded on the stream | `cuEventRecord` (1 per buffer) |
//!
//! So what comes after the sequence, on any stream (a copy, a launch, a free on the
//! buffer's allocation stream), waits for every launch of the sequence that used the
//! buffer, as it would after the same launches made one by one with [`Kernel::launch`].
//! Without event tracking (one stream in the context, or tracking disabled) the waits and
//! records are skipped, as cudarc skips them.
//!
//! # Example
//!
//! ```no_run
//! use host_loader::{for_num_elems, sequence, DeviceBuffer, Module, Slice, SliceMut};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let (ctx, _legacy) = host_loader::open_device(0)?;
//! let stream = ctx.new_stream()?;
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
//! // x1 = x0 + b, x0 = x1 + b, ... 1000 dependent launches, no event call between them.
//! sequence::run(&stream, |seq| {
//!     let (b, x) = (seq.read(&b)?, [seq.write(x0)?, seq.write(x1)?]);
//!     for i in 0..1000 {
//!         // SAFETY: vecadd reads a[i], b[i] and writes c[i] for i < c.len() only.
//!         unsafe { seq.launch(&vecadd, cfg, (x[i % 2].read(), b, x[(i + 1) % 2])) }?;
//!     }
//!     Ok(())
//! })?;
//! // Ordered after the sequence by the buffers' events, on any stream.
//! let other = ctx.new_stream()?;
//! let x0_now = x[0].to_host_vec(&other)?;
//! assert!(x0_now.iter().all(|&v| v == 1000.0));
//! # Ok(()) }
//! ```
//!
//! A buffer registered writable cannot be touched otherwise until the sequence ends,
//!
//! ```compile_fail,E0499
//! # use host_loader::*;
//! # fn f(k: &Kernel<(Slice<f32>, Slice<f32>, SliceMut<f32>)>, s: &std::sync::Arc<cudarc::driver::CudaStream>,
//! #      a: &cudarc::driver::CudaSlice<f32>, c: &mut cudarc::driver::CudaSlice<f32>) -> Result<(), Box<dyn std::error::Error>> {
//! let cfg = for_num_elems(1024, 256)?;
//! sequence::run(s, |seq| {
//!     let (a, c_tok) = (seq.read(a)?, seq.write(&mut *c)?);
//!     // SAFETY: vecadd stays within its buffers.
//!     unsafe { seq.launch(k, cfg, (a, a, c_tok)) }?;
//!     s.memcpy_htod(&[0.0f32; 1024], &mut *c).unwrap(); // error[E0499]: held by the sequence
//!     Ok(())
//! })?;
//! # Ok(()) }
//! ```
//!
//! nor dropped while the sequence runs:
//!
//! ```compile_fail,E0505
//! # use host_loader::*;
//! # fn f(k: &Kernel<(Slice<f32>, Slice<f32>, SliceMut<f32>)>, s: &cudarc::driver::CudaStream,
//! #      a: cudarc::driver::CudaSlice<f32>, mut c: cudarc::driver::CudaSlice<f32>) -> Result<(), Error> {
//! let cfg = for_num_elems(1024, 256)?;
//! sequence::run(s, |seq| {
//!     let (a_tok, c_tok) = (seq.read(&a)?, seq.write(&mut c)?);
//!     // SAFETY: vecadd stays within its buffers.
//!     unsafe { seq.launch(k, cfg, (a_tok, a_tok, c_tok)) }?;
//!     drop(a); // error[E0505]: cannot move out of `a` because it is borrowed
//!     Ok(())
//! })?;
//! # Ok(()) }
//! ```
//!
//! # Limits
//!
//! One stream per sequence: work that moves a buffer to another stream ends the sequence
//! (start another on that stream; its registration waits for this one's launches). Two
//! sequences on two streams may share a buffer registered read-only in both, at the same
//! time; cudarc keeps one read event per buffer, so the last recorded read is the one a
//! later writer waits for — the same as for two [`Kernel::launch`]es reading one buffer
//! on two streams.

use std::fmt;

use cudarc::driver::{
    sys, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig, SyncOnDrop,
};

use crate::error::Error;
use crate::graph::{next_id, Binding, BindingTable, GraphSignature};
use crate::kernel::Kernel;
use crate::launch::{invalid, LaunchAttributes};

pub use crate::graph::{Buf, BufMut, GraphParam};

/// Launches on one stream with registered buffers; handed to the closure of [`run`].
///
/// `'a` is how long registered buffers (and the stream) stay borrowed: until `run`
/// returns.
pub struct Sequence<'a> {
    id: u64,
    stream: &'a CudaStream,
    /// The stream's context.
    cu_ctx: sys::CUcontext,
    table: BindingTable,
    /// cudarc's guard of each registration: its wait was made at registration; its event
    /// is recorded on the stream when the sequence ends ([`run`] records them; if its
    /// closure panics, dropping the guards records them, errors deferred to cudarc's
    /// context error).
    guards: Vec<SyncOnDrop<'a>>,
    launches: u64,
}

impl fmt::Debug for Sequence<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sequence")
            .field("id", &self.id)
            .field("stream", &self.stream.cu_stream())
            .field("buffers", &self.table.len())
            .field("launches", &self.launches)
            .finish()
    }
}

/// Runs `f` with a [`Sequence`] on `stream`: register buffers ([`Sequence::read`],
/// [`Sequence::write`]), launch with their tokens ([`Sequence::launch`]). Returns what `f`
/// returns, after recording every registered buffer's use on the stream (see the module
/// docs), also when `f` fails or panics.
///
/// Nothing here waits for the GPU: the launches are enqueued, as with
/// [`Kernel::launch`].
///
/// Errors: whatever `f` returns; else [`Error::Driver`] when recording a buffer's event
/// fails (`cuEventRecord`).
pub fn run<'a, R>(
    stream: &'a CudaStream,
    f: impl FnOnce(&mut Sequence<'a>) -> Result<R, Error>,
) -> Result<R, Error> {
    let id = next_id();
    let mut seq = Sequence {
        id,
        stream,
        cu_ctx: stream.context().cu_ctx(),
        table: BindingTable::new(id),
        guards: Vec::new(),
        launches: 0,
    };
    let out = f(&mut seq);
    let recorded = seq.finish();
    let r = out?;
    recorded.map(|()| r)
}

impl<'a> Sequence<'a> {
    /// The sequence's stream.
    pub fn stream(&self) -> &'a CudaStream {
        self.stream
    }

    /// How many launches the sequence has made so far.
    pub fn launches(&self) -> u64 {
        self.launches
    }

    fn check_context<T>(&self, buf: &CudaSlice<T>) -> Result<(), Error> {
        let ctx = self.stream.context();
        if buf.context().cu_ctx() != self.cu_ctx {
            return Err(invalid(
                None,
                format!(
                    "a buffer of the context of device {} registered with a sequence on a \
                     stream of device {}",
                    buf.context().ordinal(),
                    ctx.ordinal()
                ),
            ));
        }
        Ok(())
    }

    /// The error cudarc deferred while making the stream wait for a registered buffer's
    /// earlier uses (its event waits return none), if any.
    fn waited(&self) -> Result<(), Error> {
        self.stream
            .context()
            .check_err()
            .map_err(|source| Error::Driver {
                context: "making a launch sequence's stream wait for a registered buffer's \
                          earlier uses (cuStreamWaitEvent), or an earlier deferred error"
                    .into(),
                source,
            })
    }

    /// Registers `buf` for reading by the sequence's launches, borrowing it until [`run`]
    /// returns; the stream waits for its last write on any stream (cudarc's
    /// `DevicePtr::device_ptr`). Others may still read it meanwhile, but not write or
    /// free it.
    ///
    /// Errors: [`Error::InvalidLaunch`] for a buffer of another context; [`Error::Driver`]
    /// when the wait fails.
    pub fn read<T>(&mut self, buf: &'a CudaSlice<T>) -> Result<Buf<T>, Error> {
        self.check_context(buf)?;
        let (ptr, guard) = buf.device_ptr(self.stream);
        self.guards.push(guard);
        self.waited()?;
        let index = self.table.push(Binding {
            ptr,
            len: buf.len() as u64,
            bytes: buf.num_bytes() as u64,
            writable: false,
        });
        Ok(Buf::new(self.id, index))
    }

    /// Registers `buf` for reading and writing by the sequence's launches, borrowing it
    /// mutably until [`run`] returns; the stream waits for its last read and its last
    /// write on any stream (cudarc's `DevicePtrMut::device_ptr_mut`).
    ///
    /// Errors: [`Error::InvalidLaunch`] for a buffer of another context; [`Error::Driver`]
    /// when a wait fails.
    pub fn write<T>(&mut self, buf: &'a mut CudaSlice<T>) -> Result<BufMut<T>, Error> {
        self.check_context(buf)?;
        let len = buf.len() as u64;
        let bytes = buf.num_bytes() as u64;
        let (ptr, guard) = buf.device_ptr_mut(self.stream);
        self.guards.push(guard);
        self.waited()?;
        let index = self.table.push(Binding {
            ptr,
            len,
            bytes,
            writable: true,
        });
        Ok(BufMut::new(self.id, index))
    }

    /// Enqueues `kernel` with `cfg` and `args` on the sequence's stream (`cuLaunchKernel`),
    /// after everything enqueued on it before.
    ///
    /// Checks what [`Kernel::launch`] checks (the stream's context, the configuration
    /// against the device and the kernel; the argument types at compile time through
    /// `S`), plus: every token belongs to this sequence, and no writable buffer overlaps
    /// another argument (a kernel's `&[T]` may not alias its `DisjointSlice<T>`). No event
    /// call: the registered buffers' ordering was done at registration and is recorded
    /// when the sequence ends.
    ///
    /// Errors: those of [`Kernel::launch`];
    /// [`GraphError::ForeignToken`](crate::graph::GraphError::ForeignToken) for a token of
    /// another sequence or graph, [`GraphError::Aliased`](crate::graph::GraphError::Aliased).
    ///
    /// # Safety
    ///
    /// The obligations of [`Kernel::launch`]: the kernel stays within the registered
    /// buffers it is given with the grid of `cfg`, writes only through `BufMut`
    /// arguments, has no races between its threads, and its other preconditions hold.
    #[inline]
    pub unsafe fn launch<S: GraphSignature>(
        &mut self,
        kernel: &Kernel<S>,
        cfg: LaunchConfig,
        args: S::GraphArgs,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        unsafe { self.launch_with(kernel, cfg, &LaunchAttributes::default(), args) }
    }

    /// [`launch`](Self::launch) with launch attributes (`cuLaunchKernelEx`), as
    /// [`Kernel::launch_with`]: programmatic dependent launch, priority, clusters,
    /// cooperative launches (checked the same way).
    ///
    /// Errors: those of [`launch`](Self::launch) and [`Kernel::launch_with`].
    ///
    /// # Safety
    ///
    /// The obligations of [`launch`](Self::launch) and of [`Kernel::launch_with`].
    #[inline]
    pub unsafe fn launch_with<S: GraphSignature>(
        &mut self,
        kernel: &Kernel<S>,
        cfg: LaunchConfig,
        attrs: &LaunchAttributes,
        args: S::GraphArgs,
    ) -> Result<(), Error> {
        let stream = self.stream;
        let cfg = kernel.prepare_in_sequence(self.cu_ctx, stream, &cfg, attrs)?;
        let func = kernel.cu_function();
        let res = kernel.with_graph_params(args, &self.table, |params| {
            // SAFETY: `S` was checked against `func`'s signature when `kernel` was made;
            // `cfg` was validated by `prepare_in_sequence`, which made the stream's (the
            // kernel's) context current; `params` points at one lowered slot per
            // parameter, each naming a registered buffer of this context (checked at
            // registration) that stays borrowed until the sequence ends, or a value; the
            // caller upholds the kernel's own obligations.
            unsafe { crate::launch::launch_kernel(func, stream, &cfg, attrs, params) }
        })?;
        res.map_err(|source| kernel.launch_error(attrs, source))?;
        self.launches += 1;
        Ok(())
    }

    /// Records every registration's event on the stream (cudarc's guard, taken apart so
    /// that a failure is returned rather than deferred); the first failure is returned,
    /// the other records are still made.
    fn finish(&mut self) -> Result<(), Error> {
        let mut first = Ok(());
        for mut guard in self.guards.drain(..) {
            let SyncOnDrop::Record(target) = &mut guard else {
                continue;
            };
            let Some((event, stream)) = target.take() else {
                continue;
            };
            if !stream.context().is_managing_stream_synchronization() {
                continue;
            }
            if let Err(source) = event.record(stream) {
                if first.is_ok() {
                    first = Err(Error::Driver {
                        context: "recording a buffer's use at the end of a launch sequence \
                                  (cuEventRecord)"
                            .into(),
                        source,
                    });
                }
            }
        }
        first
    }
}
