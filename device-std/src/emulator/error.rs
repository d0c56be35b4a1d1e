//! [`EmulatorError`]: everything a launch can report, each with the block
//! and thread it concerns.

use std::fmt;
use std::string::String;

/// A thread of an emulated launch: its block's `blockIdx` and its own
/// `threadIdx`, as `(x, y, z)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadCoords {
    /// `blockIdx` of the thread's block.
    pub block: (u32, u32, u32),
    /// `threadIdx` of the thread in its block.
    pub thread: (u32, u32, u32),
}

impl fmt::Display for ThreadCoords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (b, t) = (self.block, self.thread);
        write!(
            f,
            "block ({}, {}, {}) thread ({}, {}, {})",
            b.0, b.1, b.2, t.0, t.1, t.2
        )
    }
}

/// Which accesses of a shared-memory data race came first and second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaceKind {
    /// A read of a byte another thread wrote since the last barrier.
    ReadAfterWrite,
    /// A write of a byte another thread wrote since the last barrier.
    WriteAfterWrite,
    /// A write of a byte another thread read since the last barrier.
    WriteAfterRead,
    /// A plain access to a byte other threads updated atomically since the
    /// last barrier.
    PlainAfterAtomic,
}

impl fmt::Display for RaceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RaceKind::ReadAfterWrite => "read after write",
            RaceKind::WriteAfterWrite => "write after write",
            RaceKind::WriteAfterRead => "write after read",
            RaceKind::PlainAfterAtomic => "plain access after atomic",
        })
    }
}

/// Why an emulated launch failed. The launch stops at the first error
/// (blocks already running on other workers finish their current step).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmulatorError {
    /// The launch configuration is one CUDA would refuse
    /// (`CUDA_ERROR_INVALID_VALUE`): a zero dimension, more than 1024
    /// threads per block, more than a `#[kernel(max_threads = N)]` kernel's
    /// `N` (reported when its threads start, before its body runs), a
    /// dimension past its limit, too much dynamic shared memory, or a launch
    /// from inside a kernel.
    #[error("invalid launch: {0}")]
    InvalidLaunch(String),

    /// The kernel panicked: a failed bounds check, `assert!`, or misuse of
    /// [`GlobalMut`](super::GlobalMut).
    #[error("{at}: kernel panicked{}: {message}", location.as_deref().map(|l| std::format!(" at {l}")).unwrap_or_default())]
    Panic {
        /// The thread that panicked.
        at: ThreadCoords,
        /// The panic message.
        message: String,
        /// `file:line:col` of the panic, when known.
        location: Option<String>,
    },

    /// A barrier that not every thread of the block reached: `waiting`
    /// threads wait at `site` while `exited` has returned from the kernel.
    #[error("divergent barrier: {waiting} of {threads} threads of block {block:?} wait at sync_threads ({site}), but {exited} exited without reaching it")]
    DivergentBarrier {
        /// `blockIdx`.
        block: (u32, u32, u32),
        /// `file:line:col` of the barrier the threads wait at.
        site: String,
        /// Threads waiting there.
        waiting: u32,
        /// Threads in the block.
        threads: u32,
        /// A thread that exited.
        exited: ThreadCoords,
    },

    /// Two threads of one block wait at different barrier calls
    /// (`sync_threads` at two sites, or `sync_threads` and `sync_threads_count`).
    #[error("mismatched barriers: {first} waits at {first_site}, {second} at {second_site}")]
    BarrierMismatch {
        /// The first thread to arrive.
        first: ThreadCoords,
        /// Its barrier's `file:line:col`.
        first_site: String,
        /// The thread that arrived elsewhere.
        second: ThreadCoords,
        /// Its barrier's `file:line:col`.
        second_site: String,
    },

    /// A warp collective (shuffle, vote, match, redux, `sync_warp`) used
    /// wrongly: the caller outside `mask`, two operations under one mask, or
    /// a shuffle reading a lane outside `mask`.
    #[error("{at}: {message}")]
    WarpCollective {
        /// The lane at fault (or the last to arrive).
        at: ThreadCoords,
        /// What went wrong, with the call site.
        message: String,
    },

    /// No thread of the block can go on: `detail` names who waits where.
    #[error("deadlock in block {block:?}: {detail}")]
    Deadlock {
        /// `blockIdx`.
        block: (u32, u32, u32),
        /// Who waits for what.
        detail: String,
    },

    /// Two threads took element `index` of one output through
    /// `DisjointSlice::get_unchecked_mut`.
    #[error("duplicate DisjointSlice write: {second} took element {index} through get_unchecked_mut, which {first} already took")]
    DuplicateWrite {
        /// Element index in the slice.
        index: usize,
        /// The thread that took it first.
        first: ThreadCoords,
        /// The thread that took it again.
        second: ThreadCoords,
    },

    /// `DisjointSlice::get_unchecked_mut(index)` with `index >= len`.
    #[error("{at}: DisjointSlice::get_unchecked_mut({index}) is out of bounds (len {len})")]
    DisjointOutOfBounds {
        /// The thread.
        at: ThreadCoords,
        /// The index it asked for.
        index: usize,
        /// The slice's length in elements.
        len: usize,
    },

    /// A shared-memory access outside every allocation of the block, or
    /// misaligned for its type.
    #[error("{at}: out-of-bounds shared-memory access: {bytes} bytes at shared address {addr:#x}, {detail}")]
    SharedOutOfBounds {
        /// The thread.
        at: ThreadCoords,
        /// Shared-window address of the access.
        addr: u32,
        /// Bytes accessed.
        bytes: u32,
        /// Where that is relative to the nearest allocation.
        detail: String,
    },

    /// A read of shared memory no thread of the block has written.
    #[error("{at}: reads uninitialised shared memory: {bytes} bytes at shared address {addr:#x} ({allocation})")]
    UninitSharedRead {
        /// The thread.
        at: ThreadCoords,
        /// Shared-window address of the first unwritten byte.
        addr: u32,
        /// Bytes read.
        bytes: u32,
        /// The allocation (declaration site and offset).
        allocation: String,
    },

    /// Two threads of a block accessed one byte of shared memory, at least
    /// one writing, with no barrier between them.
    #[error("{at}: shared-memory data race ({kind}) at shared address {addr:#x} ({allocation}) with {other}: no sync_threads between the two accesses")]
    SharedRace {
        /// The second access's thread.
        at: ThreadCoords,
        /// The first access's thread (for an atomic, the launch's thread
        /// `(0, 0, 0)` of the block stands for "some thread").
        other: ThreadCoords,
        /// Which accesses.
        kind: RaceKind,
        /// Shared-window address of the byte.
        addr: u32,
        /// The allocation (declaration site and offset).
        allocation: String,
    },

    /// The static shared memory of a block (every `SharedArray` declared)
    /// exceeds what CUDA allows without opt-in, 48 KiB, or more than 64
    /// arrays were declared.
    #[error("{at}: static shared memory exceeds 48 KiB or 64 arrays: {detail}")]
    StaticSharedTooLarge {
        /// The thread that declared the array past the limit.
        at: ThreadCoords,
        /// Sizes and the declaration site.
        detail: String,
    },

    /// An mbarrier or asynchronous copy used in a way the GPU would hang on or
    /// corrupt: a barrier not initialised, more arrivals than expected, a
    /// transaction count driven past what was announced, an access to bytes a
    /// copy has not finished writing (or still reads), or a CTA exiting while
    /// a bulk store still reads its shared memory.
    #[error("{at}: {message}")]
    AsyncCopy {
        /// The thread at fault.
        at: ThreadCoords,
        /// What went wrong, with the call site and the barrier's state.
        message: String,
    },

    /// A thread-block cluster used in a way the GPU would hang on or corrupt: a
    /// cluster barrier arrived at twice or waited at without arriving, distributed
    /// shared memory accessed out of bounds, misaligned, or in a CTA that has exited.
    #[error("{at}: {message}")]
    Cluster {
        /// The thread at fault.
        at: ThreadCoords,
        /// What went wrong, with the call site.
        message: String,
    },

    /// A tensor-core instruction (`wgmma`) used in a way the library does not
    /// model or the GPU would refuse: a warpgroup without all 128 threads, or a
    /// shared-memory descriptor of a layout other than `wgmma::KMajorTile`'s.
    #[error("{at}: {message}")]
    TensorCore {
        /// The thread at fault.
        at: ThreadCoords,
        /// What went wrong, with the descriptor.
        message: String,
    },

    /// The host could not give the emulator what it needs (a coroutine
    /// stack).
    #[error("emulator resources: {0}")]
    Resources(String),
}
