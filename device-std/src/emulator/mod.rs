//! The CPU emulator: runs a `#[kernel]`, unchanged, on the host with CUDA
//! semantics, so kernels are tested in CI without a GPU (feature `emulator`).
//!
//! ```ignore
//! use device_std::emulator::{self, GlobalMut, LaunchConfig};
//!
//! let (a, b) = (vec![1.0f32; 1000], vec![2.0f32; 1000]);
//! let mut c = vec![f32::NAN; 1000];
//! let out = GlobalMut::new(&mut c);
//! emulator::launch(LaunchConfig::for_num_elems(1000, 256), || {
//!     vecadd(&a, &b, out.disjoint())
//! })?;
//! assert!(c.iter().all(|&x| x == 3.0));
//! ```
//!
//! # Arguments
//!
//! The closure is called once per GPU thread, so it builds the arguments each
//! time: `&[T]` inputs are captured by reference, scalars and
//! [`KernelStruct`](crate::KernelStruct)s by copy, and every output lives in a
//! [`GlobalMut`] (the launch's "global memory"), which hands each thread its
//! [`DisjointSlice`](crate::DisjointSlice) (`disjoint()`) or a raw pointer
//! (`as_mut_ptr()`, for kernels that take `*mut T`).
//!
//! # What is modelled
//!
//! | GPU | emulator |
//! |---|---|
//! | a thread | a stackful coroutine ([`corosensei`]) with its own stack; its coordinates in a thread-local |
//! | a block | its threads, run on one OS thread, switched only where CUDA makes threads wait for each other: barriers, warp collectives, `nanosleep` |
//! | the grid | blocks spread over `Options::workers` OS threads (all cores by default), in increasing linear order |
//! | `sync_threads*` | a real barrier over the block's threads, with `__syncthreads_count/and/or` |
//! | shuffles, votes, match, `redux`, `sync_warp` | an exchange among the lanes of the warp in `mask` (lanes = `thread_in_block % 32`); exited lanes count as absent, as on sm_70+ |
//! | `activemask` | the lanes of the warp that wait at the same `activemask` call once the warp cannot go on |
//! | `SharedArray` | per block, one allocation per declaration site (`#[track_caller]`), aligned as asked, in a per-block arena |
//! | `DynamicSharedArray` | per block, `dynamic_shared_bytes` of the launch, 1024-aligned |
//! | atomics | `core::sync::atomic` on the same addresses (sequentially consistent, whatever the ordering and scope); `f32`/`f64` via compare-exchange loops |
//! | fences | `core::sync::atomic::fence(SeqCst)` |
//! | `nanosleep` | yields the coroutine and the OS thread |
//! | `device_println!` | C `printf` formatting to stdout (or [`Options::capture_output`]) |
//! | `math` | the same Rust code as on the GPU: identical bits (`math::prim`'s fma, sqrt and rounding are correctly rounded on both) |
//! | `math::fast` | the full-precision function instead of the hardware's approximation (`exp2f`, `expf`, `exp10f` flush subnormals as `.ftz` does): the last bits differ |
//!
//! Why coroutines: a thread must stop at a barrier and resume after every
//! other thread of its block got there, with its whole call stack intact.
//! An OS thread per GPU thread does that too, but creating and switching
//! 2^20 of them costs seconds; a coroutine switch is a few nanoseconds, a
//! thread that never waits costs one creation and one switch, and a block
//! needs no locks (its threads share one OS thread).
//!
//! # Checks the GPU does not make
//!
//! Each is an [`EmulatorError`] naming the block and thread, returned by
//! [`launch`], which stops the launch:
//!
//! - a barrier that not every thread of the block reaches (a thread exited,
//!   or waits elsewhere), or two threads waiting at different `sync_threads`
//!   calls;
//! - a warp collective that cannot complete, or mixes operations, or reads a
//!   lane outside its mask;
//! - two threads taking the same element through
//!   [`DisjointSlice::get_unchecked_mut`](crate::DisjointSlice::get_unchecked_mut)
//!   (or an index past its end);
//! - shared memory: an access outside every allocation (each is surrounded
//!   by a red zone), a misaligned one, a read of bytes no thread of the block
//!   wrote, and a data race: two threads accessing the same byte, one of them
//!   writing, with no `sync_threads` (or `sync_warp`, for two lanes of a warp)
//!   in between. The tracking covers accesses through `read`/`write`,
//!   [`SharedPtr`](crate::SharedPtr) and shared atomics; once a generic
//!   pointer to an allocation is taken (`as_mut_ptr`, `to_generic`), plain
//!   Rust accesses through it are not seen, so the allocation is only
//!   bounds-checked for the rest of the block;
//! - a panic in the kernel (a failed bounds check, `assert!`), with its
//!   message and location.
//!
//! # Limits
//!
//! - Forward progress between blocks exists only among blocks running at
//!   once (one per worker): a block that waits for a later block on the same
//!   worker spins forever, as it may on a GPU that cannot hold both.
//! - A spin loop inside a block must call `nanosleep` (or reach a barrier)
//!   for the other threads of its block to run.
//! - Writes through a witness (`DisjointSlice::get_mut`) are not tracked: the
//!   witness already makes them disjoint.
//! - Floating-point results match the GPU bit for bit where both do the same
//!   IEEE operations in the same order (rustc emits `add.rn`/`mul.rn`, which
//!   ptxas does not fuse): all of `math` does; `math::fast` differs in the last
//!   bits, and so does a float `%` (LLVM lowers `frem` inexactly on nvptx64) and
//!   `x.sin()` method syntax, which under the emulator is std's own.

pub(crate) mod block;
pub(crate) mod cluster;
pub(crate) mod context;
pub(crate) mod cp_async;
mod error;
mod executor;
pub(crate) mod global;
pub(crate) mod mbarrier;
pub(crate) mod printf;
pub(crate) mod shared_mem;
pub(crate) mod texture;
pub(crate) mod tma;
pub(crate) mod warp;
pub(crate) mod wgmma;

pub use error::{EmulatorError, RaceKind, ThreadCoords};
pub use executor::{
    launch, launch_cooperative, launch_with, LaunchConfig, LaunchStats, Options,
    MAX_COOPERATIVE_THREADS, MAX_DYNAMIC_SHARED_BYTES, MAX_STATIC_SHARED_BYTES,
};
pub use global::GlobalMut;
pub use texture::{SurfaceDesc, TextureDesc};
pub use tma::TensorMapDesc;

pub(crate) use block::BarrierKind;
pub(crate) use executor::{
    check_dynamic_shared, check_launch_dims, check_max_threads, check_slice_align,
};
