//! mbarriers and bulk asynchronous copies of an emulated block.
//!
//! Each barrier keeps its expected arrivals, the arrivals still pending in
//! the current phase, its transaction count and the number of completed
//! phases. A `bulk::load` copies nothing at issue: it is queued on its
//! barrier, its destination bytes are pending (any access is an error), and
//! it lands when a thread first tests or waits on that barrier, which is
//! also when its bytes count the transaction count down. Its bytes are then
//! visible only to the threads that observe the phase's completion (a
//! `wait`, or a `test_wait` that returns `true`), to their warps after a
//! `sync_warp`, and to every thread after the next `sync_threads`. So a
//! kernel that reads a destination without waiting is caught, whatever the
//! schedule. A phase that completes while a copy issued on it is in flight
//! with its bytes unannounced (the copy may land in this phase or the next
//! on the GPU), and a block that ends with a load in flight (the copy engine
//! would write shared memory the next block owns), are errors.
//!
//! A `bulk::store` reads its shared source at issue (checked like a read by
//! the issuing thread) and writes global memory at once; its source stays
//! pending for writes until the issuing thread's `wait_group_read` retires
//! the group, and a block that ends with such a group is an error (the GPU
//! would release shared memory the copy engine still reads).

use super::block::Block;
use super::context::{self, Site, ThreadCtx};
use super::error::EmulatorError;
use super::shared_mem::{self, Access, Landed, Pending, PendingRange};
use std::collections::VecDeque;
use std::format;
use std::string::String;
use std::vec::Vec;

/// One mbarrier object.
struct Mbar {
    addr: u32,
    site: Site,
    arrivals: u32,
    pending: u32,
    tx: i64,
    /// Completed phases; the current phase's parity is `phases % 2`.
    phases: u64,
    /// Loads issued in the current phase, not landed yet.
    queued: Vec<QueuedLoad>,
    /// What the current phase's arrivals release, for the race shadow.
    release: Release,
    /// The releases of the last two completed phases.
    released: [(u64, Release); 2],
}

/// What the arrivals of one phase order before its waiters: per warp and per thread,
/// the time before which their accesses are released (the arriving threads' own
/// accesses, and what they had acquired).
#[derive(Default, Clone)]
struct Release {
    warps: Vec<u32>,
    threads: Vec<u32>,
}

struct QueuedLoad {
    dst: u32,
    /// The bytes as read from global memory at issue.
    data: Vec<u8>,
    /// Where and by which thread it was issued.
    site: Site,
    thread: u32,
}

/// A thread's bulk groups of stores: ranges of shared memory they read.
#[derive(Default)]
struct Groups {
    open: Vec<(usize, usize)>,
    committed: VecDeque<Vec<(usize, usize)>>,
}

/// The block's barriers and bulk groups.
#[derive(Default)]
pub(crate) struct AsyncState {
    bars: Vec<Mbar>,
    groups: Vec<(u32, Groups)>,
}

impl AsyncState {
    fn bar(&mut self, addr: u32) -> Option<&mut Mbar> {
        self.bars.iter_mut().find(|b| b.addr == addr)
    }

    fn groups(&mut self, t: u32) -> &mut Groups {
        if let Some(i) = self.groups.iter().position(|(x, _)| *x == t) {
            return &mut self.groups[i].1;
        }
        self.groups.push((t, Groups::default()));
        &mut self.groups.last_mut().unwrap().1
    }

    /// What each thread blocked on a barrier waits for (for a deadlock report).
    pub(crate) fn describe(&self) -> Vec<String> {
        self.bars
            .iter()
            .filter(|b| b.pending != b.arrivals || b.tx != 0)
            .map(|b| {
                format!(
                    "the mbarrier declared at {} (shared {:#x}) is in phase {} with {} of {} arrivals and {} bytes of transactions pending",
                    b.site, b.addr, b.phases, b.pending, b.arrivals, b.tx
                )
            })
            .collect()
    }

    /// A load still in flight: its issuing thread and what to say.
    pub(crate) fn unfinished_load(&self) -> Option<(u32, String)> {
        self.bars.iter().find_map(|b| {
            let q = b.queued.first()?;
            Some((
                q.thread,
                format!(
                    "the block ends while the bulk::load at {} still writes shared {:#x}..{:#x}: nothing waited on the mbarrier declared at {} for its phase {}, and on the GPU the copy engine would write shared memory the next block on this SM owns",
                    q.site,
                    q.dst,
                    q.dst as usize + q.data.len(),
                    b.site,
                    b.phases
                ),
            ))
        })
    }

    /// The first thread whose bulk stores still read shared memory.
    pub(crate) fn unfinished_store(&self) -> Option<u32> {
        self.groups
            .iter()
            .find(|(_, g)| !g.open.is_empty() || !g.committed.is_empty())
            .map(|(t, _)| *t)
    }
}

fn fail(ctx: &ThreadCtx, message: String) -> ! {
    context::fail(EmulatorError::AsyncCopy {
        at: context::coords(ctx),
        message,
    })
}

/// `Mbarrier::new` / `Mbarriers::new`: allocates `n` objects at `site` and,
/// in thread 0, initialises them.
pub(crate) fn declare(site: Site, n: usize, arrivals: u32) -> u32 {
    let first = shared_mem::static_alloc(site, 8 * n, 8);
    context::with(|ctx| {
        if ctx.linear != 0 {
            return;
        }
        let mut s = ctx.block().asyncs.borrow_mut();
        for addr in (0..n as u32).map(|i| first + 8 * i) {
            s.bars.retain(|b| b.addr != addr);
            s.bars.push(Mbar {
                addr,
                site,
                arrivals,
                pending: arrivals,
                tx: 0,
                phases: 0,
                queued: Vec::new(),
                release: Release::default(),
                released: Default::default(),
            });
        }
    });
    first
}

/// Runs `f` on the barrier at `addr`, or reports an uninitialised one.
#[track_caller]
fn with_bar<R>(
    addr: u32,
    f: impl FnOnce(&ThreadCtx, &Block<'static>, &mut Mbar) -> Result<R, String>,
) -> R {
    let site = core::panic::Location::caller();
    context::with(|ctx| {
        let block = ctx.block();
        let result = {
            let mut s = block.asyncs.borrow_mut();
            match s.bar(addr) {
                Some(b) => f(ctx, block, b),
                None => Err(format!(
                    "{site}: no initialised mbarrier at shared address {addr:#x}"
                )),
            }
        };
        result.unwrap_or_else(|m| fail(ctx, m))
    })
}

/// Completes the current phase if nothing is pending; returns whether it did.
fn try_complete(block: &Block<'_>, b: &mut Mbar) -> bool {
    if b.pending != 0 || b.tx != 0 {
        return false;
    }
    b.released[(b.phases % 2) as usize] = (b.phases, core::mem::take(&mut b.release));
    b.phases += 1;
    b.pending = b.arrivals;
    for t in 0..block.size {
        block.wake(t);
    }
    true
}

/// `arrive` (with `tx` bytes announced first: `arrive.expect_tx`).
#[track_caller]
pub(crate) fn arrive(addr: u32, tx: u32) {
    let site = core::panic::Location::caller();
    with_bar(addr, |ctx, block, b| {
        if b.pending == 0 {
            return Err(format!(
                "{site}: arrives on the mbarrier declared at {} more often than its {} expected arrivals in phase {}",
                b.site, b.arrivals, b.phases
            ));
        }
        b.tx += i64::from(tx);
        b.pending -= 1;
        carry_observations(block, ctx.linear, b);
        if b.pending == 0 && b.tx == 0 && !b.queued.is_empty() {
            let bytes: usize = b.queued.iter().map(|q| q.data.len()).sum();
            return Err(format!(
                "{site}: this is the last arrival on the mbarrier declared at {}, so its phase {} completes while {bytes} bytes of copies issued on it are in flight and were never announced (arrive_expect_tx/expect_tx before the phase's last arrival): on the GPU they land in this phase or the next",
                b.site, b.phases
            ));
        }
        if b.pending == 0 && b.tx < 0 {
            return Err(format!(
                "{site}: this is the last arrival on the mbarrier declared at {}, whose copies wrote {} more bytes than its phase {} announced (arrive_expect_tx/expect_tx)",
                b.site, -b.tx, b.phases
            ));
        }
        try_complete(block, b);
        Ok(())
    })
}

/// `expect_tx`.
#[track_caller]
pub(crate) fn expect_tx(addr: u32, tx: u32) {
    with_bar(addr, |_, _, b| {
        b.tx += i64::from(tx);
        Ok(())
    })
}

/// Lands the loads queued on `b` (copy, shadow, transaction count).
fn land(block: &Block<'_>, b: &mut Mbar) -> Result<(), String> {
    if b.queued.is_empty() {
        return Ok(());
    }
    let mut mem = block.mem.borrow_mut();
    let warps = mem.warps();
    for q in b.queued.drain(..) {
        let start = q.dst as usize;
        mem.pending.retain(|p| {
            !(p.start == start && matches!(p.what, Pending::Load { bar, .. } if bar == b.addr))
        });
        let bytes = q.data.len();
        // SAFETY: the destination was bounds-checked for `bytes` bytes at issue.
        unsafe { core::ptr::copy_nonoverlapping(q.data.as_ptr(), mem.raw(q.dst), bytes) };
        mem.async_written(start, bytes);
        mem.landed.push(Landed {
            start,
            end: start + bytes,
            bar: b.addr,
            phase: b.phases,
            site: q.site,
            observers: std::vec![0; warps],
            via: Vec::new(),
        });
        b.tx -= bytes as i64;
    }
    drop(mem);
    if b.tx < 0 && b.pending == 0 {
        return Err(format!(
            "the copies completing on the mbarrier declared at {} wrote {} more bytes than its phase {} announced (arrive_expect_tx/expect_tx)",
            b.site, -b.tx, b.phases
        ));
    }
    try_complete(block, b);
    Ok(())
}

/// Lands every queued load of the block (a stuck block's last resort: the
/// copy engine finishes whether or not anyone waits). Whether any landed.
pub(crate) fn land_all(block: &Block<'_>) -> Result<bool, EmulatorError> {
    let mut s = block.asyncs.borrow_mut();
    let mut any = false;
    for b in &mut s.bars {
        if !b.queued.is_empty() {
            any = true;
            land(block, b).map_err(|message| EmulatorError::AsyncCopy {
                at: block.coords(0),
                message,
            })?;
        }
    }
    Ok(any)
}

/// Thread `t` arrives on `b`'s current phase: whoever observes that phase complete is
/// ordered after every load `t` has observed and, for the race shadow, after what `t`
/// acquired and its own accesses (release on arrive, acquire on wait).
fn carry_observations(block: &Block<'_>, t: u32, b: &mut Mbar) {
    let (w, bit) = ((t / 32) as usize, 1u32 << (t % 32));
    let mut mem = block.mem.borrow_mut();
    for l in &mut mem.landed {
        if l.observers.get(w).is_some_and(|m| m & bit != 0) {
            l.via.push((b.addr, b.phases));
        }
    }
    let now = mem.tick();
    let Some((warps, threads)) = mem.release_of(t, now) else {
        return;
    };
    let rel = &mut b.release;
    for (mine, theirs) in [(&mut rel.warps, warps), (&mut rel.threads, threads)] {
        if mine.len() < theirs.len() {
            mine.resize(theirs.len(), 0);
        }
        for (m, a) in mine.iter_mut().zip(theirs) {
            *m = (*m).max(a);
        }
    }
}

/// Thread `t` saw the phase of parity `parity` of `b` complete: the loads
/// that landed on `b` in that phase or before are visible to it, and those an
/// arriving thread carried into such a phase.
fn observe(block: &Block<'_>, b: &Mbar, parity: u32, t: u32) {
    // The most recent completed phase of that parity (none on a fresh barrier
    // asked for parity 1: "the phase before the first").
    let seen = match b.phases {
        0 => return,
        n if (n - 1) % 2 == u64::from(parity) => n - 1,
        1 => return,
        n => n - 2,
    };
    let (w, bit) = ((t / 32) as usize, 1u32 << (t % 32));
    let mut mem = block.mem.borrow_mut();
    for (phase, rel) in &b.released {
        if *phase <= seen && !rel.warps.is_empty() {
            mem.acquire(t, &rel.warps, &rel.threads);
        }
    }
    for l in &mut mem.landed {
        let carried = l.via.iter().any(|&(bar, p)| bar == b.addr && p <= seen);
        if (l.bar == b.addr && l.phase <= seen) || carried {
            if let Some(m) = l.observers.get_mut(w) {
                *m |= bit;
            }
        }
    }
}

/// `test_wait.parity`: lands queued loads, then whether the phase of parity
/// `parity` has completed.
#[track_caller]
pub(crate) fn test_wait(addr: u32, parity: u32) -> bool {
    with_bar(addr, |ctx, block, b| {
        land(block, b)?;
        let done = b.phases % 2 != u64::from(parity);
        if done {
            observe(block, b, parity, ctx.linear);
        }
        Ok(done)
    })
}

/// `wait`: blocks until the phase of parity `parity` has completed.
#[track_caller]
pub(crate) fn wait(addr: u32, parity: u32) {
    if test_wait(addr, parity) {
        return;
    }
    context::with(|ctx| {
        let block = ctx.block();
        block.wait(ctx, || {
            block
                .asyncs
                .borrow_mut()
                .bar(addr)
                .is_some_and(|b| b.phases % 2 != u64::from(parity))
        });
        if let Some(b) = block.asyncs.borrow_mut().bar(addr) {
            observe(block, b, parity, ctx.linear);
        }
    });
}

/// `inval`.
pub(crate) fn inval(addr: u32) {
    context::with(|ctx| {
        ctx.block()
            .asyncs
            .borrow_mut()
            .bars
            .retain(|b| b.addr != addr)
    });
}

/// `bulk::load` of `bytes` bytes from `src` to shared `dst`, completing on
/// the barrier at `bar`.
#[track_caller]
pub(crate) fn bulk_load(dst: u32, src: *const u8, bytes: u32, bar: u32) {
    // SAFETY: `bulk::load` checked that `src` is in bounds of the caller's slice.
    let data = unsafe { core::slice::from_raw_parts(src, bytes as usize) }.to_vec();
    queue_load(dst, data, 16, bar);
}

/// Queues an asynchronous copy of `data` into shared `dst` (aligned to
/// `align`) that completes on the barrier at `bar`.
#[track_caller]
pub(crate) fn queue_load(dst: u32, data: Vec<u8>, align: usize, bar: u32) {
    let site = core::panic::Location::caller();
    let bytes = data.len() as u32;
    // The copy engine writes the destination: checked as a write by the
    // issuing thread (bounds, and races with earlier unordered accesses).
    shared_mem::access(dst, bytes as usize, align, Access::Write);
    with_bar(bar, |ctx, block, b| {
        b.queued.push(QueuedLoad {
            dst,
            data,
            site,
            thread: ctx.linear,
        });
        block.mem.borrow_mut().pending.push(PendingRange {
            start: dst as usize,
            end: (dst + bytes) as usize,
            what: Pending::Load { bar, site },
        });
        Ok(())
    })
}

/// A multicast tensor load: `data` queued for shared `dst` on the barrier at `bar` in
/// every CTA of the cluster whose rank bit is set in `mask`; the issuing CTA's own copy
/// goes through [`queue_load`] (race-checked), the others' are checked for bounds,
/// alignment and pending copies.
#[track_caller]
pub(crate) fn queue_multicast(dst: u32, data: Vec<u8>, align: usize, bar: u32, mask: u16) {
    let site = core::panic::Location::caller();
    let (own, count) = context::with(|ctx| (ctx.block().rank, ctx.block().cluster().size()));
    if mask == 0 || u32::from(mask) >> count != 0 {
        context::with(|ctx| {
            fail(
                ctx,
                format!(
                    "{site}: the multicast mask {mask:#06x} names no CTA or a rank past the cluster's {count} CTAs"
                ),
            )
        });
    }
    for rank in (0..count).filter(|r| mask & (1 << r) != 0) {
        if rank == own {
            queue_load(dst, data.clone(), align, bar);
            continue;
        }
        context::with(|ctx| {
            let target = ctx.block().cluster().block(rank);
            let bytes = data.len();
            // The same arrays in the peer, found by declaration site.
            let (dst, bar) = match (
                super::cluster::peer_addr(ctx.block(), dst, rank),
                super::cluster::peer_addr(ctx.block(), bar, rank),
            ) {
                (Ok(d), Ok(b)) => (d, b),
                (Err(m), _) | (_, Err(m)) => fail(ctx, format!("{site}: {m}")),
            };
            let checked = target
                .mem
                .borrow()
                .check_bounds(dst, bytes, align, Access::Write);
            if let Err(fault) = checked {
                let why = match fault {
                    shared_mem::Fault::OutOfBounds(d) => format!(
                        "that CTA has no such array yet ({d}); declare the arrays and barriers, then cluster::sync, before the copy is issued"
                    ),
                    shared_mem::Fault::AsyncPending(d) => d,
                    other => format!("{other:?}"),
                };
                fail(
                    ctx,
                    format!("{site}: the multicast into CTA rank {rank} at shared {dst:#x}: {why}"),
                );
            }
            let mut s = target.asyncs.borrow_mut();
            let Some(b) = s.bar(bar) else {
                drop(s);
                fail(
                    ctx,
                    format!("{site}: the multicast into CTA rank {rank} completes on shared {bar:#x}, where that CTA has no initialised mbarrier (initialise it, then cluster::sync, before the copy is issued)"),
                );
            };
            b.queued.push(QueuedLoad {
                dst,
                data: data.clone(),
                site,
                thread: ctx.linear,
            });
            drop(s);
            target.mem.borrow_mut().pending.push(PendingRange {
                start: dst as usize,
                end: dst as usize + bytes,
                what: Pending::Load { bar, site },
            });
        });
    }
}

/// `bulk::store` of `bytes` bytes from shared `src` to global `dst`.
#[track_caller]
pub(crate) fn bulk_store(dst: *mut u8, src: u32, bytes: u32) {
    // SAFETY: the caller promised the destination is valid global memory for
    // `bytes` bytes; `store_from` checked the source.
    store_from(src, bytes, 16, |p| unsafe {
        core::ptr::copy_nonoverlapping(p, dst, bytes as usize)
    });
}

/// An asynchronous store of the `bytes` bytes at shared `src` (aligned to
/// `align`): checks them as a read, hands them to `write`, and keeps them
/// pending for writes in the calling thread's open bulk group.
#[track_caller]
pub(crate) fn store_from(src: u32, bytes: u32, align: usize, write: impl FnOnce(*const u8)) {
    let site = core::panic::Location::caller();
    let p = shared_mem::access(src, bytes as usize, align, Access::Read);
    context::with(|ctx| {
        let block = ctx.block();
        let (start, end) = (src as usize, (src + bytes) as usize);
        let unfenced = block.mem.borrow().unfenced_write(ctx.linear, start, end);
        if let Some((b, w)) = unfenced {
            let who = block.coords(w).thread;
            fail(
                ctx,
                format!(
                    "the bulk::store at {site} reads shared {b:#x}, which thread {who:?} wrote with no bulk::fence_proxy_async_shared after it: the copy engine may read the old bytes (every writing thread fences, then a barrier, then one thread issues the store)"
                ),
            );
        }
    });
    write(p);
    context::with(|ctx| {
        let block = ctx.block();
        let (start, end) = (src as usize, (src + bytes) as usize);
        block
            .asyncs
            .borrow_mut()
            .groups(ctx.linear)
            .open
            .push((start, end));
        block.mem.borrow_mut().pending.push(PendingRange {
            start,
            end,
            what: Pending::StoreRead {
                thread: ctx.linear,
                site,
            },
        });
    });
}

/// `cp.async.bulk.commit_group`.
pub(crate) fn commit_group() {
    context::with(|ctx| {
        let mut s = ctx.block().asyncs.borrow_mut();
        let g = s.groups(ctx.linear);
        let open = core::mem::take(&mut g.open);
        g.committed.push_back(open);
    });
}

/// `cp.async.bulk.wait_group[.read] n`: retires all but the newest `n`
/// committed groups of the calling thread (stores already wrote global
/// memory, so both forms free the sources). The copy engine's last read of a
/// retired source is recorded as a read by the calling thread, now: another
/// thread that writes the source next must be ordered after this wait by a
/// barrier (`sync_warp`, `sync_threads`), or the write is a race.
pub(crate) fn wait_group(n: u32, _read_only: bool) {
    context::with(|ctx| {
        let block = ctx.block();
        let mut s = block.asyncs.borrow_mut();
        let g = s.groups(ctx.linear);
        let mut retired = Vec::new();
        while g.committed.len() > n as usize {
            retired.extend(g.committed.pop_front().unwrap());
        }
        drop(s);
        if retired.is_empty() {
            return;
        }
        let t = ctx.linear;
        let mut mem = block.mem.borrow_mut();
        for (start, end) in retired {
            let mine = |p: &PendingRange| {
                p.start == start
                    && p.end == end
                    && matches!(p.what, Pending::StoreRead { thread, .. } if thread == t)
            };
            if let Some(i) = mem.pending.iter().position(mine) {
                mem.pending.remove(i);
                // The read completes here, for the race checks, as the caller's.
                let read = mem.check(t, start as u32, end - start, 1, Access::Read);
                if let Err(fault) = read {
                    drop(mem);
                    shared_mem::raise(ctx, fault, start as u32, end - start);
                }
            }
        }
    });
}
