//! Programmatic dependent launch (PDL): a kernel launched with
//! `host_loader::LaunchAttributes::programmatic_stream_serialization` may start while the
//! previous kernel on its stream still runs, so its prologue (index math, loads of data
//! no earlier kernel writes, shared-memory setup) overlaps that kernel's tail.
//!
//! | here | PTX (PTX ISA 9.0 "Parallel Synchronization and Communication Instructions: `griddepcontrol`", sm_90, PTX 7.8) | CUDA C++ |
//! |---|---|---|
//! | [`launch_dependents`] | `griddepcontrol.launch_dependents` | `cudaTriggerProgrammaticLaunchCompletion()` |
//! | [`wait`] | `griddepcontrol.wait` | `cudaGridDependencySynchronize()` |
//!
//! ```no_run
//! use device_std::{grid_dependency, thread, DisjointSlice};
//! // The second of two dependent kernels: set up, then wait for the first one's output.
//! fn consumer(produced: &[f32], mut out: DisjointSlice<f32>) {
//!     let idx = thread::index_1d();          // prologue: overlaps the producer
//!     grid_dependency::wait();               // the producer's writes are visible after this
//!     let x = produced[idx.get()];
//!     if let Some(o) = out.get_mut(idx) {
//!         *o = x + 1.0;
//!     }
//! }
//! ```
//!
//! Before sm_90 both compile to nothing: the driver ignores the attribute there and runs
//! the launches in stream order, which is what `wait` would wait for. Under the emulator
//! both do nothing for the same reason: launches run one after another.

use crate::host::on_device;

/// Lets the dependent launch (the next kernel on the stream, if it was launched with
/// programmatic stream serialization) start once every block of this grid has called
/// this or exited. Call it after the last write the dependent does not need to wait for
/// is *issued*; the dependent's [`wait`] still waits for this grid to complete and its
/// memory to be visible.
#[inline(always)]
pub fn launch_dependents() {
    on_device!("grid_dependency::launch_dependents", {
        #[cfg(target_feature = "sm_90")]
        // SAFETY: a scheduling hint with no operands and no preconditions.
        unsafe {
            core::arch::asm!("griddepcontrol.launch_dependents;", options(nostack))
        }
    }, emulated: {})
}

/// Waits until the grids this one depends on (the previous kernel on the stream, when
/// this one was launched with programmatic stream serialization) have completed and
/// their memory operations are visible. Without a programmatic launch it returns at
/// once. Call it before the first access to memory those grids write.
#[inline(always)]
pub fn wait() {
    on_device!("grid_dependency::wait", {
        #[cfg(target_feature = "sm_90")]
        // SAFETY: waits; no operands, no preconditions. Not `pure`/`nomem`: memory
        // accesses must not move across it.
        unsafe {
            core::arch::asm!("griddepcontrol.wait;", options(nostack))
        }
    }, emulated: {})
}
