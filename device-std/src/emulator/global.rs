//! Global memory of a launch: [`GlobalMut`], the host's output buffers as
//! the emulated threads see them, and the log that catches two threads
//! taking one `DisjointSlice` element.

use super::context;
use super::error::EmulatorError;
use crate::disjoint::DisjointSlice;
use crate::index::IndexSpace;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicU64, Ordering};
use rustc_hash::FxHashMap;
use std::sync::Mutex;
use std::vec::Vec;

/// A `&mut [T]` lent to emulated launches as their global memory, one launch at a
/// time (launches one after another reuse it, as they would a device buffer): every
/// thread gets its own [`DisjointSlice`] over it ([`disjoint`](Self::disjoint)),
/// or a raw pointer for kernels that take `*mut T`
/// ([`as_mut_ptr`](Self::as_mut_ptr)).
///
/// ```ignore
/// let mut c = vec![f32::NAN; n];
/// let out = GlobalMut::new(&mut c);
/// emulator::launch(cfg, || vecadd(&a, &b, out.disjoint()))?;
/// // `out` is no longer used: `c` is readable again
/// ```
///
/// It is `Sync` (blocks run on several OS threads), which is sound because
/// a `DisjointSlice` only hands out the element a thread's witness names,
/// and [`disjoint`](Self::disjoint) gives each thread of one launch at most
/// one slice.
#[derive(Debug)]
pub struct GlobalMut<'a, T> {
    ptr: *mut T,
    len: usize,
    /// The launch that used it last (0: none yet).
    launch: AtomicU64,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: threads of a launch reach the memory only through DisjointSlices
// (distinct elements per thread; `T: Send` lets an element be written from
// another OS thread) or raw pointers (whose use is `unsafe`).
unsafe impl<T: Send> Sync for GlobalMut<'_, T> {}
// SAFETY: as for `&mut [T]`.
unsafe impl<T: Send> Send for GlobalMut<'_, T> {}

impl<'a, T> GlobalMut<'a, T> {
    /// Lends `data` to a launch until the handle is dropped.
    pub fn new(data: &'a mut [T]) -> Self {
        GlobalMut {
            ptr: data.as_mut_ptr(),
            len: data.len(),
            launch: AtomicU64::new(0),
            _borrow: PhantomData,
        }
    }

    /// Length in elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The calling emulated thread's `DisjointSlice` over the whole buffer,
    /// in index space `S`.
    ///
    /// Panics (which the launch reports as a kernel panic of that thread)
    /// outside a launch, on a second call by the same thread, and while another
    /// launch that used the handle is still running (on another host thread).
    #[track_caller]
    pub fn disjoint<S: IndexSpace>(&self) -> DisjointSlice<'_, T, S> {
        context::with(|ctx| {
            let id = ctx.block().launch.id;
            // One launch at a time: a handle passes to the next launch once the one it
            // served has ended (launches one after another reuse it, as a device buffer).
            let mut current = self.launch.load(Ordering::Relaxed);
            while current != id {
                assert!(
                    current == 0 || !super::executor::is_running(current),
                    "GlobalMut::disjoint: this handle is in use by another launch running now \
                     (launches on several host threads need a handle each)"
                );
                match self.launch.compare_exchange(
                    current,
                    id,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => break,
                    Err(other) => current = other,
                }
            }
            let me = self as *const Self as usize;
            let mut handles = ctx.handles.borrow_mut();
            assert!(
                !handles.contains(&me),
                "GlobalMut::disjoint called twice by one thread: two DisjointSlices could alias"
            );
            handles.push(me);
        });
        // SAFETY: `ptr..ptr + len` is the `&'a mut [T]` this handle borrows
        // for `'a`, which outlives `&self`; every other slice over it belongs
        // to another thread of the same launch (checked above), and
        // DisjointSlice's safe accessors reach only the calling thread's own
        // element.
        unsafe { DisjointSlice::from_raw_parts(self.ptr, self.len) }
    }

    /// Raw pointer to element 0, for kernels that take `*mut T`
    /// (dereferencing it is the kernel's `unsafe` business).
    pub fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }
}

/// Which thread took which element of any `DisjointSlice` through
/// `get_unchecked_mut` in one launch: element address ↦ launch-wide thread id.
pub(crate) struct WriteLog {
    shards: Vec<Mutex<FxHashMap<usize, u64>>>,
}

impl WriteLog {
    pub(crate) fn new() -> Self {
        WriteLog {
            shards: (0..16).map(|_| Mutex::new(FxHashMap::default())).collect(),
        }
    }

    /// Records that thread `who` took the element at `addr`; `Err(first)`
    /// when another thread took it before.
    fn claim(&self, addr: usize, who: u64) -> Result<(), u64> {
        let shard = &self.shards[(addr >> 3) % self.shards.len()];
        let mut map = shard.lock().unwrap_or_else(|e| e.into_inner());
        match *map.entry(addr).or_insert(who) {
            first if first == who => Ok(()),
            first => Err(first),
        }
    }
}

/// `get_unchecked_mut(index)` on a slice of `len` elements of `elem` bytes
/// at `base`: checks the bound and that no other thread of the launch took
/// the element.
pub(crate) fn claim(base: usize, index: usize, elem: usize, len: usize) {
    context::with(|ctx| {
        let block = ctx.block();
        if index >= len {
            context::fail(EmulatorError::DisjointOutOfBounds {
                at: context::coords(ctx),
                index,
                len,
            });
        }
        if elem == 0 {
            return;
        }
        let who = block.linear * block.launch.block_size as u64 + ctx.linear as u64;
        if let Err(first) = block.launch.writes.claim(base + index * elem, who) {
            context::fail(EmulatorError::DuplicateWrite {
                index,
                first: block.launch.coords(first),
                second: context::coords(ctx),
            });
        }
    })
}
