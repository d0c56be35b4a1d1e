//! The emulated thread that is running on this OS thread: a thread-local
//! pointer the block scheduler sets before it resumes a coroutine, read by
//! every device function (`threadIdx_x()`, barriers, shared memory, ...).

use super::block::Block;
use super::error::EmulatorError;
use core::cell::{Cell, RefCell};
use core::panic::Location;
use core::ptr;
use corosensei::Yielder;
use std::string::String;
use std::vec::Vec;

/// A call site of a device function (`#[track_caller]`).
pub(crate) type Site = &'static Location<'static>;

/// Whether two call sites are the same place in the source.
pub(crate) fn same_site(a: Site, b: Site) -> bool {
    a.line() == b.line() && a.column() == b.column() && a.file() == b.file()
}

/// The payload a thread unwinds with after recording an error in its block
/// (never shown: `resume_unwind` skips the panic hook).
pub(crate) struct Abort;

/// One emulated thread: its coordinates and how to suspend it.
pub(crate) struct ThreadCtx {
    /// The block; outlives every coroutine of the block.
    block: *const Block<'static>,
    /// `threadIdx`.
    pub(crate) tid: [u32; 3],
    /// Linear index in the block, x fastest.
    pub(crate) linear: u32,
    /// Set when the coroutine starts; valid while it lives.
    pub(crate) yielder: Cell<*const Yielder<(), ()>>,
    /// `GlobalMut`s this thread took a `DisjointSlice` from (their addresses).
    pub(crate) handles: RefCell<Vec<usize>>,
    /// The thread's `cp.async` groups.
    pub(crate) cp_async: RefCell<super::cp_async::CpGroups>,
}

impl ThreadCtx {
    /// The context of thread `linear` of `block`.
    pub(crate) fn new(block: &Block<'_>, linear: u32) -> Self {
        let n = block.launch.block;
        ThreadCtx {
            block: core::ptr::from_ref(block).cast::<Block<'static>>(),
            tid: [
                linear % n[0],
                (linear / n[0]) % n[1],
                linear / (n[0] * n[1]),
            ],
            linear,
            yielder: Cell::new(ptr::null()),
            handles: RefCell::new(Vec::new()),
            cp_async: RefCell::new(Default::default()),
        }
    }

    /// The thread's block. Its lifetime parameter claims `'static` (the
    /// type is invariant in it); the references inside live as long as the
    /// block, which outlives every use made through a thread context.
    pub(crate) fn block(&self) -> &Block<'static> {
        // SAFETY: the block outlives every coroutine that can reach this
        // context (`block::run_block` drops the coroutines first), and no
        // reference obtained here is kept past the block.
        unsafe { &*self.block }
    }

    /// Suspends the coroutine until the scheduler resumes it.
    pub(crate) fn suspend(&self) {
        let y = self.yielder.get();
        assert!(
            !y.is_null(),
            "emulator: suspend before the coroutine started"
        );
        // SAFETY: set by the coroutine body at its start; the yielder lives
        // on the coroutine's stack for as long as the coroutine runs, and
        // only the coroutine itself calls this.
        unsafe { &*y }.suspend(())
    }
}

std::thread_local! {
    static CURRENT: Cell<*const ThreadCtx> = const { Cell::new(ptr::null()) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Makes `ctx` the running thread (null: none) and returns the previous one.
pub(crate) fn set_current(ctx: *const ThreadCtx) -> *const ThreadCtx {
    CURRENT.with(|c| c.replace(ctx))
}

/// Whether an emulated thread runs on this OS thread right now.
pub(crate) fn in_kernel() -> bool {
    CURRENT.with(|c| !c.get().is_null())
}

/// Runs `f` with the running emulated thread. Panics outside a launch: a
/// device function called from plain host code.
#[inline]
#[track_caller]
pub(crate) fn with<R>(f: impl FnOnce(&ThreadCtx) -> R) -> R {
    let ctx = CURRENT.with(|c| c.get());
    if ctx.is_null() {
        outside_launch();
    }
    // SAFETY: the scheduler sets CURRENT to a context that lives until the
    // coroutine ends, and clears it when the coroutine suspends; `f` runs on
    // the coroutine, so the context outlives it.
    f(unsafe { &*ctx })
}

#[cold]
#[track_caller]
fn outside_launch() -> ! {
    panic!(
        "a device_std device function was called outside an emulated launch \
         (call kernels through device_std::emulator::launch)"
    )
}

/// Records `err` as the block's error (the first one wins) and unwinds the
/// calling emulated thread; the scheduler then stops the launch.
#[cold]
pub(crate) fn fail(err: EmulatorError) -> ! {
    with(|ctx| ctx.block().record_error(err));
    std::panic::resume_unwind(std::boxed::Box::new(Abort))
}

/// The thread's coordinates as an error reports them.
pub(crate) fn coords(ctx: &ThreadCtx) -> super::ThreadCoords {
    ctx.block().coords(ctx.linear)
}

/// Remembers where the last kernel panic on this OS thread happened (the
/// panic hook calls this).
pub(crate) fn record_panic_location(location: String) {
    LAST_PANIC.with(|p| *p.borrow_mut() = Some(location));
}

/// The location [`record_panic_location`] stored, taken.
pub(crate) fn take_panic_location() -> Option<String> {
    LAST_PANIC.with(|p| p.borrow_mut().take())
}

/// `%tid` of the running thread, component `i` (0 = x).
pub(crate) fn tid(i: usize) -> u32 {
    with(|c| c.tid[i])
}

/// `%ctaid` of the running thread's block, component `i`.
pub(crate) fn ctaid(i: usize) -> u32 {
    with(|c| c.block().ctaid[i])
}

/// `%ntid` of the launch, component `i`.
pub(crate) fn ntid(i: usize) -> u32 {
    with(|c| c.block().launch.block[i])
}

/// `%nctaid` of the launch, component `i`.
pub(crate) fn nctaid(i: usize) -> u32 {
    with(|c| c.block().launch.grid[i])
}

/// `%laneid` of the running thread.
pub(crate) fn lane_id() -> u32 {
    with(|c| c.linear % 32)
}

/// A block barrier of `kind` at `site`.
pub(crate) fn barrier(kind: super::block::BarrierKind, pred: bool, site: Site) -> u32 {
    with(|c| c.block().barrier(c, kind, pred, site))
}

/// `nanosleep`: lets the other threads of the block (and of the machine) run.
pub(crate) fn nanosleep() {
    std::thread::yield_now();
    with(|c| c.block().yield_now(c));
}

/// `%dynamic_smem_size` of the launch, in bytes.
pub(crate) fn dynamic_smem_size() -> u32 {
    with(|c| c.block().launch.dynamic)
}
