//! Typed CUDA graphs: stream capture of typed launches, replay, and typed updates of a
//! captured kernel node.
//!
//! A chain of small dependent kernels is bound by launch cost (about 4 µs per launch on
//! an H200 through the driver API), often more than the kernels run. A CUDA graph records
//! the chain once and replays it with one `cuGraphLaunch`. This module builds graphs from
//! the same typed [`Kernel`](crate::Kernel) handles as
//! [`Kernel::launch`](crate::Kernel::launch): each node's arguments are checked against
//! the kernel's signature at compile time (element types, `Slice` vs `SliceMut`) and were
//! checked against the PTX and the ABI record once, when the handle was made.
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
//! buffer's address once, at registration, on a private non-capturing stream, and moves
//! the ordering to each replay (above). Work issued on the capturing stream *outside* the
//! recorder (cudarc's stream methods, [`Kernel::launch`](crate::Kernel::launch)) either
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

mod capture;
pub(crate) mod error;
mod exec;
mod params;
mod parts;
#[cfg(test)]
mod tests;
mod tokens;

pub use capture::{capture, capture_with_mode, CaptureMode, Recorder};
pub use error::GraphError;
pub use exec::{Graph, GraphExec};
pub use params::{Access, GraphParam, GraphSignature};
pub(crate) use tokens::{next_id, Binding};
pub use tokens::{BindingTable, Buf, BufMut, KernelNode};
