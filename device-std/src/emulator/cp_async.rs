//! `cp.async` under the emulator: each thread's copies wait in its own groups
//! (`ThreadCtx::cp_async`) with their bytes read at issue and their destination
//! pending (no access by anyone); `wait_group` lands the retired groups as that
//! thread's writes, so the race checks want a barrier before other threads read.

use super::context::{self, Site};
use super::shared_mem::{self, Access, Pending, PendingRange};
use std::collections::VecDeque;
use std::vec::Vec;

/// One copy in flight: destination and the bytes read at issue.
struct Copy {
    dst: u32,
    data: Vec<u8>,
}

/// A thread's groups: the open one and the committed ones, oldest first.
#[derive(Default)]
pub(crate) struct CpGroups {
    open: Vec<Copy>,
    committed: VecDeque<Vec<Copy>>,
}

/// `cp.async` of `size` bytes from `src` to shared `dst` by the calling thread.
#[track_caller]
pub(crate) fn copy(dst: u32, src: *const u8, size: usize) {
    let site: Site = core::panic::Location::caller();
    // Bounds and alignment of the destination, as a write by this thread.
    shared_mem::check_only(dst, size, size, Access::Write);
    // SAFETY: `cp_async::copy` bounds-checked `src` against the caller's slice.
    let data = unsafe { core::slice::from_raw_parts(src, size) }.to_vec();
    context::with(|ctx| {
        ctx.cp_async.borrow_mut().open.push(Copy { dst, data });
        ctx.block().mem.borrow_mut().pending.push(PendingRange {
            start: dst as usize,
            end: dst as usize + size,
            what: Pending::CpAsync {
                thread: ctx.linear,
                site,
            },
        });
    });
}

/// `cp.async.commit_group`.
pub(crate) fn commit_group() {
    context::with(|ctx| {
        let mut g = ctx.cp_async.borrow_mut();
        let open = core::mem::take(&mut g.open);
        g.committed.push_back(open);
    });
}

/// `cp.async.wait_group n`: lands all but the newest `n` committed groups.
#[track_caller]
pub(crate) fn wait_group(n: u32) {
    let landing: Vec<Copy> = context::with(|ctx| {
        let mut g = ctx.cp_async.borrow_mut();
        let mut out = Vec::new();
        while g.committed.len() > n as usize {
            out.extend(g.committed.pop_front().unwrap());
        }
        out
    });
    for c in landing {
        let (start, size) = (c.dst as usize, c.data.len());
        context::with(|ctx| {
            let t = ctx.linear;
            let mut mem = ctx.block().mem.borrow_mut();
            if let Some(i) = mem.pending.iter().position(|p| {
                p.start == start && matches!(p.what, Pending::CpAsync { thread, .. } if thread == t)
            }) {
                mem.pending.remove(i);
            }
        });
        // The landing is this thread's write (races with unordered accesses show).
        let p = shared_mem::access(c.dst, size, size, Access::Write);
        // SAFETY: `access` checked `size` bytes at `p` in a live allocation.
        unsafe { core::ptr::copy_nonoverlapping(c.data.as_ptr(), p, size) };
    }
}
