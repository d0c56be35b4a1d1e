//! Shared memory of an emulated block: one arena per worker, reused block
//! after block, and a shadow byte for every arena byte that catches reads of
//! unwritten memory and data races.
//!
//! # Layout
//!
//! | shared address | what |
//! |---|---|
//! | `0..1024` | red zone (never allocated) |
//! | `1024..1024 + D` | the launch's `D` bytes of dynamic shared memory |
//! | then, per `SharedArray` declaration site in first-use order | a 256-byte red zone, then the array, aligned to `max(ALIGN, 16)` |
//!
//! A `SharedPtr` holds a shared address; its generic pointer is the arena's
//! base plus that address. Bytes are filled with `0xFF` when allocated (a
//! NaN for floats), so a read the shadow does not see still looks wrong.
//!
//! # The shadow
//!
//! Time is a counter that moves at every block barrier and every completed
//! `sync_warp`. Each byte remembers when it was last written and read, and
//! by whom. An access is *ordered* after an earlier one when a barrier came
//! between them, when the same thread made both, or when both threads are
//! in one warp and it completed a `sync_warp` in between. An unordered pair
//! with a write in it is a data race; a read of a byte not written since the
//! block started reads uninitialised memory.

use super::context::{self, same_site, Site, ThreadCtx};
use super::error::{EmulatorError, RaceKind};
use core::mem::{align_of, size_of};
use std::alloc::{alloc, dealloc, Layout};
use std::format;
use std::string::String;
use std::vec::Vec;

/// Shared address of the dynamic shared memory.
pub(crate) const DYN_BASE: usize = 1024;
/// Red zone before each static array, in bytes.
const RED_ZONE: usize = 256;
/// Most `SharedArray` declarations a block may use.
const MAX_ARRAYS: usize = 64;
/// Alignment of the arena's base, in bytes (at least the largest `ALIGN`).
const ARENA_ALIGN: usize = 4096;

/// `writer` of a byte last written by an atomic.
const ATOMIC: u16 = 0xFFFF;
/// `writer` of a byte written by an asynchronous copy whose completion the
/// block has observed: ordered before every later access.
const ASYNC: u16 = 0xFFFE;
/// `reader` of a byte read by threads of several warps.
const MANY: u16 = 0xFFFF;
/// `reader` flag: read by several threads of the warp in the low bits.
const MANY_IN_WARP: u16 = 0x8000;
/// `writer`/`reader` of a byte accessed by a thread of another CTA of the cluster
/// (distributed shared memory), that CTA's rank in the low bits.
const REMOTE: u16 = 0xF000;

/// Whether `who` is a thread of another CTA ([`REMOTE`] plus a rank below 16).
const fn is_remote(who: u16) -> bool {
    who >= REMOTE && who < REMOTE + 16
}

/// What one byte of shared memory saw last.
#[derive(Debug, Clone, Copy, Default)]
struct Shadow {
    write_time: u32,
    read_time: u32,
    writer: u16,
    reader: u16,
    /// One bit per warp that read the byte since `reader` last restarted (a thread
    /// ordered after every earlier read): which warps a `MANY` stands for.
    reader_warps: u32,
}

/// A worker's arena and shadow, reused by the blocks it runs.
pub(crate) struct Arena {
    base: *mut u8,
    layout: Layout,
    shadow: Vec<Shadow>,
    now: u32,
    check: bool,
    /// Most static shared bytes a block may declare.
    static_limit: usize,
}

// SAFETY: the arena owns its allocation; it moves between OS threads only
// between blocks, when nothing points into it.
unsafe impl Send for Arena {}

impl Arena {
    /// An arena for blocks with `dynamic` bytes of dynamic shared memory;
    /// `check` enables the shadow.
    ///
    /// Errors: the allocation fails.
    pub(crate) fn new(dynamic: usize, static_limit: usize, check: bool) -> Result<Self, String> {
        let cap = DYN_BASE + dynamic + MAX_ARRAYS * (RED_ZONE + 1024) + static_limit;
        let layout = Layout::from_size_align(cap, ARENA_ALIGN).map_err(|e| format!("{e}"))?;
        // SAFETY: `layout` has a non-zero size.
        let base = unsafe { alloc(layout) };
        if base.is_null() {
            return Err(format!("cannot allocate {cap} bytes of shared memory"));
        }
        // SAFETY: `base` is valid for `cap` bytes.
        unsafe { base.write_bytes(0xFF, cap) };
        Ok(Arena {
            base,
            layout,
            static_limit,
            shadow: if check {
                std::vec![Shadow::default(); cap]
            } else {
                Vec::new()
            },
            now: 0,
            check,
        })
    }

    /// The shared memory of a new block with `dynamic` bytes of dynamic
    /// shared memory and `warps` warps.
    pub(crate) fn block(&mut self, dynamic: usize, warps: usize) -> SharedMem<'_> {
        if self.now > u32::MAX - (1 << 24) {
            self.shadow.fill(Shadow::default());
            self.now = 0;
        }
        self.now += 1;
        let mut allocs = Vec::new();
        if dynamic > 0 {
            allocs.push(Alloc {
                start: DYN_BASE,
                end: DYN_BASE + dynamic,
                site: None,
                align: 16,
                escaped: false,
                key: 0,
            });
            // SAFETY: the arena holds DYN_BASE + dynamic bytes and more.
            unsafe { self.base.add(DYN_BASE).write_bytes(0xFF, dynamic) };
        }
        SharedMem {
            base: self.base,
            cap: self.layout.size(),
            check: self.check,
            block_start: self.now,
            barrier_time: self.now,
            cluster_barrier_time: 0,
            now: &mut self.now,
            shadow: &mut self.shadow,
            warp_sync: std::vec![0; warps],
            acquired: if self.check {
                std::vec![0; 32 * warps * warps]
            } else {
                Vec::new()
            },
            acquired_threads: if self.check {
                std::vec![Vec::new(); 32 * warps]
            } else {
                Vec::new()
            },
            allocs,
            top: DYN_BASE + dynamic,
            static_bytes: 0,
            static_limit: self.static_limit,
            dynamic,
            pending: Vec::new(),
            landed: Vec::new(),
            proxy_fenced: std::vec![0; 32 * warps],
            wgmma_reads: Vec::new(),
            wgmma_groups: Vec::new(),
            operand_reads: Vec::new(),
        }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.base, self.layout) };
    }
}

/// One allocation: `start..end` in the shared window.
struct Alloc {
    start: usize,
    end: usize,
    /// Declaration site; `None` for the dynamic shared memory.
    site: Option<Site>,
    /// The alignment it was declared with.
    align: usize,
    /// A generic pointer to it was taken: accesses are no longer all seen.
    escaped: bool,
    /// The host address of its `static` (static shared form), else 0.
    key: usize,
}

impl Alloc {
    fn describe(&self) -> String {
        match self.site {
            Some(site) => format!(
                "the {}-byte SharedArray declared at {site} (shared {:#x}..{:#x})",
                self.end - self.start,
                self.start,
                self.end
            ),
            None => format!(
                "the {} bytes of dynamic shared memory (shared {:#x}..{:#x})",
                self.end - self.start,
                self.start,
                self.end
            ),
        }
    }
}

/// What kind of access [`SharedMem::check`] checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// A plain load.
    Read,
    /// A `wgmma` operand read on behalf of the issuing thread: checked as a load, but
    /// recorded per warp for the operand's whole range ([`SharedMem::wgmma_issue`]), not
    /// in each byte's shadow (whose one read time would order every reading warp after
    /// the latest one).
    OperandRead,
    /// A plain store.
    Write,
    /// An atomic read-modify-write.
    Atomic,
}

/// Why [`SharedMem::check`] refused an access.
#[derive(Debug)]
pub(crate) enum Fault {
    /// Outside every allocation, or misaligned; the text says where.
    OutOfBounds(String),
    /// A byte nobody wrote; the allocation and offset.
    Uninit { addr: u32, allocation: String },
    /// A race with thread `other` of the block (`None`: an atomic, or
    /// several threads).
    Race {
        kind: RaceKind,
        other: Option<u32>,
        addr: u32,
        allocation: String,
    },
    /// A race with an access by another CTA of the cluster (distributed shared memory),
    /// of rank `rank`, that no cluster barrier orders.
    RemoteRace {
        kind: RaceKind,
        rank: u32,
        addr: u32,
        allocation: String,
    },
    /// The static arrays exceed 48 KiB or 64 declarations.
    TooLarge(String),
    /// Bytes an asynchronous copy has not finished with.
    AsyncPending(String),
}

/// Shared bytes an asynchronous copy has not finished with.
#[derive(Debug, Clone)]
pub(crate) struct PendingRange {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) what: Pending,
}

/// Who holds a [`PendingRange`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pending {
    /// A `bulk::load` into these bytes that completes on the mbarrier at
    /// this shared address; no access until its phase completes.
    Load { bar: u32, site: Site },
    /// A `bulk::store` of thread `thread` reads these bytes; no write until
    /// that thread's `wait_group_read` covers it.
    StoreRead { thread: u32, site: Site },
    /// A `cp_async::copy` of thread `thread` writes these bytes; no access until
    /// that thread's `cp_async::wait_group` retires it.
    CpAsync { thread: u32, site: Site },
}

/// Shared bytes a `bulk::load` wrote (it landed), visible only to the
/// threads that observed the completion of its mbarrier phase
/// (`Mbarrier::wait`/`test_wait`), to their warps after a `sync_warp`, and
/// to every thread after the next block barrier.
#[derive(Debug, Clone)]
pub(crate) struct Landed {
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// The mbarrier it completed on, and the phase it counted in.
    pub(crate) bar: u32,
    pub(crate) phase: u64,
    pub(crate) site: Site,
    /// One bit per thread, one word per warp: who observed it.
    pub(crate) observers: Vec<u32>,
    /// Other barrier phases `(barrier, phase)` that an observer arrived on: a thread
    /// that sees one of them complete is ordered after the load too (the consumer that
    /// read a stage releases it to the producer through an `empty` barrier).
    pub(crate) via: Vec<(u32, u64)>,
}

/// A block's view of its worker's arena.
pub(crate) struct SharedMem<'a> {
    base: *mut u8,
    cap: usize,
    check: bool,
    now: &'a mut u32,
    shadow: &'a mut [Shadow],
    block_start: u32,
    barrier_time: u32,
    /// The last cluster barrier: what orders accesses by other CTAs of the cluster
    /// (0: none yet).
    cluster_barrier_time: u32,
    warp_sync: Vec<u32>,
    /// Ordering through mbarriers, one row of `warps` times per thread: accesses by
    /// warp `w` before time `acquired[t * warps + w]` happen before thread `t`'s next
    /// access (a warp's rendezvous orders its lanes; an arrival releases what the
    /// arriving thread has acquired, a wait on the phase acquires it).
    acquired: Vec<u32>,
    /// The same per thread: accesses by thread `u` before `acquired_threads[t][u]`
    /// happen before thread `t`'s next access (an arrival releases the arriving
    /// thread's own accesses). Empty until `t` first acquires something.
    acquired_threads: Vec<Vec<u32>>,
    allocs: Vec<Alloc>,
    top: usize,
    static_bytes: usize,
    /// Most static bytes (the launch's `static_shared_limit`).
    static_limit: usize,
    dynamic: usize,
    /// Bytes asynchronous copies are still writing or reading.
    pub(crate) pending: Vec<PendingRange>,
    /// Bytes loads wrote that not every thread is ordered after yet.
    pub(crate) landed: Vec<Landed>,
    /// Each thread's last `fence.proxy.async` (a `now` value; 0: none).
    proxy_fenced: Vec<u32>,
    /// Shared bytes issued `wgmma` multiplies read and no `wait` has retired yet (the
    /// tensor cores read them asynchronously until then): no write until then.
    wgmma_reads: Vec<WgmmaRead>,
    /// Per thread: the operand ranges of its open and committed `wgmma` groups.
    wgmma_groups: Vec<WgmmaGroups>,
    /// `wgmma` operand reads by warp: a write to the range must be ordered after each
    /// (checked by the write, which drops the bytes it wrote from the records).
    operand_reads: Vec<OperandRead>,
}

/// The latest time warp `warp` read `start..end` as a `wgmma` operand.
struct OperandRead {
    start: usize,
    end: usize,
    warp: usize,
    time: u32,
}

/// Operand bytes of `wgmma` multiplies in flight: `holders` (thread, group) pairs.
struct WgmmaRead {
    start: usize,
    end: usize,
    site: Site,
    holders: u32,
}

/// A thread's `wgmma` groups, as operand ranges.
#[derive(Default)]
struct WgmmaGroups {
    open: Vec<(usize, usize)>,
    committed: std::collections::VecDeque<Vec<(usize, usize)>>,
}

impl SharedMem<'_> {
    /// Marks `start..start + bytes` as written by an asynchronous copy that
    /// has completed (ordered before every later access of the block).
    pub(crate) fn async_written(&mut self, start: usize, bytes: usize) {
        if self.check {
            let now = *self.now;
            for s in &mut self.shadow[start..start + bytes] {
                s.writer = ASYNC;
                s.write_time = now;
            }
        }
    }

    /// The generic pointer of shared address `addr`, without checks or
    /// escape marking (for the emulator's own copies, checked before).
    pub(crate) fn raw(&self, addr: u32) -> *mut u8 {
        self.base.wrapping_add(addr as usize)
    }

    /// The pending range an `access` of `start..end` collides with.
    fn pending_conflict(&self, start: usize, end: usize, access: Access) -> Option<String> {
        let p = self.pending.iter().find(|p| {
            p.start < end
                && start < p.end
                && (!matches!(access, Access::Read | Access::OperandRead)
                    || matches!(p.what, Pending::Load { .. } | Pending::CpAsync { .. }))
        })?;
        Some(match p.what {
            Pending::Load { bar, site } => format!(
                "shared {:#x}..{:#x} is the destination of the bulk::load at {site}, which completes on the mbarrier at shared {bar:#x}: wait on that barrier's phase (Mbarrier::wait) before accessing it",
                p.start, p.end
            ),
            Pending::CpAsync { thread, site } => format!(
                "shared {:#x}..{:#x} is the destination of the cp_async::copy at {site} by thread {thread} of the block, still in flight: that thread's cp_async::wait_group (then a barrier, for other threads) comes first",
                p.start, p.end
            ),
            Pending::StoreRead { thread, site } => format!(
                "shared {:#x}..{:#x} is the source of the bulk::store at {site} by thread {thread} of the block, which may still read it: that thread must call bulk::wait_group_read before the source is written again",
                p.start, p.end
            ),
        })
    }
    /// A landed load of `start..end` that thread `t` has not observed.
    fn unobserved_load(&self, t: u32, start: usize, end: usize) -> Option<String> {
        let (w, bit) = ((t / 32) as usize, 1u32 << (t % 32));
        let l = self.landed.iter().find(|l| {
            l.start < end && start < l.end && l.observers.get(w).is_none_or(|m| m & bit == 0)
        })?;
        Some(format!(
            "shared {:#x}..{:#x} was written by the bulk::load at {}, which completed on the mbarrier at shared {:#x} in its phase {}, and this thread has not waited on that phase (Mbarrier::wait) nor passed a sync_threads after a thread that did: on the GPU it may see the bytes before the copy lands",
            l.start, l.end, l.site, l.bar, l.phase
        ))
    }

    /// A block barrier completed: every thread is ordered after the landed
    /// loads some thread observed.
    pub(crate) fn barrier_released(&mut self) {
        *self.now += 1;
        self.barrier_time = *self.now;
        self.landed.retain(|l| l.observers.iter().all(|&m| m == 0));
    }

    /// A cluster barrier completed: as [`barrier_released`](Self::barrier_released),
    /// and the accesses of the cluster's other CTAs so far are ordered too.
    pub(crate) fn cluster_barrier_released(&mut self) {
        self.barrier_released();
        self.cluster_barrier_time = self.barrier_time;
    }

    /// The lanes `lanes` of warp `w` completed a `sync_warp`; `full` when they are
    /// every live lane of the warp. A partial mask orders the accesses of its lanes
    /// among themselves only (`bar.warp.sync`), through their rows of
    /// [`acquired_threads`](Self::acquired_threads); only a full one moves the warp's
    /// clock.
    pub(crate) fn warp_synced(&mut self, w: usize, lanes: u32, full: bool) {
        *self.now += 1;
        let now = *self.now;
        if full {
            self.warp_sync[w] = now;
        }
        let warps = self.warp_sync.len();
        let members: Vec<usize> = if full {
            (32 * w..32 * (w + 1)).collect()
        } else {
            (0..32)
                .filter(|l| lanes & (1 << l) != 0)
                .map(|l| 32 * w + l)
                .collect()
        };
        if !self.acquired.is_empty() {
            // The lanes meet: each acquires what any of them had, and (a full warp) the
            // warp's own accesses so far.
            let mut merged = std::vec![0u32; warps];
            for &t in &members {
                for (m, &a) in merged
                    .iter_mut()
                    .zip(&self.acquired[t * warps..(t + 1) * warps])
                {
                    *m = (*m).max(a);
                }
            }
            if full {
                merged[w] = now;
            }
            for &t in &members {
                self.acquired[t * warps..(t + 1) * warps].copy_from_slice(&merged);
            }
            if full || !members.is_empty() {
                let rows = &self.acquired_threads;
                if !full || members.iter().any(|&t| !rows[t].is_empty()) {
                    let mut merged = std::vec![0u32; 32 * warps];
                    for &t in &members {
                        for (m, &a) in merged.iter_mut().zip(&rows[t]) {
                            *m = (*m).max(a);
                        }
                    }
                    if !full {
                        // Each member's accesses so far come before the others' next.
                        for &t in &members {
                            merged[t] = now;
                        }
                    }
                    for &t in &members {
                        self.acquired_threads[t].clone_from(&merged);
                    }
                }
            }
        }
        for l in &mut self.landed {
            if let Some(m) = l.observers.get_mut(w) {
                if full && *m != 0 {
                    *m = !0;
                } else if *m & lanes != 0 {
                    *m |= lanes;
                }
            }
        }
    }

    /// Thread `t` ran `fence.proxy.async`: its ordinary writes so far are
    /// visible to the copy engine.
    pub(crate) fn proxy_fence(&mut self, t: u32) {
        *self.now += 1;
        self.proxy_fenced[t as usize] = *self.now;
    }

    /// The first byte of `start..end` (an asynchronous store's source, issued
    /// by thread `t`) written by an ordinary store that neither its writer nor
    /// `t` fenced for the copy engine (`fence.proxy.async`) afterwards: the
    /// byte and its writer. Bytes whose writer is not one known thread
    /// (atomics, copies) and unchecked allocations are not judged.
    pub(crate) fn unfenced_write(&self, t: u32, start: usize, end: usize) -> Option<(usize, u32)> {
        if !self.check
            || self
                .allocs
                .iter()
                .any(|a| a.escaped && a.start < end && start < a.end)
        {
            return None;
        }
        let fenced_after = |who: u32, time: u32| {
            self.proxy_fenced
                .get(who as usize)
                .is_some_and(|&f| f > time)
        };
        (start..end).find_map(|b| {
            let s = self.shadow[b];
            let w = u32::from(s.writer);
            (s.write_time >= self.block_start
                && s.writer < MANY_IN_WARP
                && !fenced_after(w, s.write_time)
                && !fenced_after(t, s.write_time))
            .then_some((b, w))
        })
    }

    /// Thread `t` issued a `wgmma` at `site` reading `start..end`: held until the wait
    /// that retires its current group.
    pub(crate) fn wgmma_issue(&mut self, t: u32, start: usize, end: usize, site: Site) {
        let t = t as usize;
        if self.check {
            let (warp, now) = (t / 32, *self.now);
            match self
                .operand_reads
                .iter_mut()
                .find(|r| (r.start, r.end, r.warp) == (start, end, warp))
            {
                Some(r) => r.time = now,
                None => self.operand_reads.push(OperandRead {
                    start,
                    end,
                    warp,
                    time: now,
                }),
            }
        }
        if self.wgmma_groups.len() <= t {
            self.wgmma_groups.resize_with(t + 1, WgmmaGroups::default);
        }
        let open = &mut self.wgmma_groups[t].open;
        if open.contains(&(start, end)) {
            return;
        }
        open.push((start, end));
        match self
            .wgmma_reads
            .iter_mut()
            .find(|r| (r.start, r.end) == (start, end))
        {
            Some(r) => r.holders += 1,
            None => self.wgmma_reads.push(WgmmaRead {
                start,
                end,
                site,
                holders: 1,
            }),
        }
    }

    /// `wgmma.commit_group` by thread `t`.
    pub(crate) fn wgmma_commit(&mut self, t: u32) {
        if let Some(g) = self.wgmma_groups.get_mut(t as usize) {
            let open = core::mem::take(&mut g.open);
            g.committed.push_back(open);
        }
    }

    /// `wgmma.wait_group pending` by thread `t`: retires all but its newest `pending`
    /// committed groups.
    pub(crate) fn wgmma_retire(&mut self, t: u32, pending: usize) {
        let Some(g) = self.wgmma_groups.get_mut(t as usize) else {
            return;
        };
        while g.committed.len() > pending {
            for range in g.committed.pop_front().unwrap_or_default() {
                if let Some(i) = self
                    .wgmma_reads
                    .iter()
                    .position(|r| (r.start, r.end) == range)
                {
                    self.wgmma_reads[i].holders -= 1;
                    if self.wgmma_reads[i].holders == 0 {
                        self.wgmma_reads.swap_remove(i);
                    }
                }
            }
        }
    }

    /// The number of warps of the block (words of a [`Landed`]'s observers).
    pub(crate) fn warps(&self) -> usize {
        self.warp_sync.len()
    }

    /// The shared address of the static-form array keyed by its `static`'s host
    /// address, allocating it on the block's first use (at `site`).
    pub(crate) fn static_alloc_keyed(
        &mut self,
        key: usize,
        site: Site,
        bytes: usize,
        align: usize,
    ) -> Result<u32, Fault> {
        if let Some(a) = self.allocs.iter().find(|a| a.key == key) {
            return Ok(a.start as u32);
        }
        let start = self.fresh_alloc(site, bytes, align)?;
        if let Some(a) = self.allocs.last_mut() {
            a.key = key;
        }
        Ok(start)
    }

    /// The shared address of the array declared at `site`, allocating it on
    /// the block's first use.
    pub(crate) fn static_alloc(
        &mut self,
        site: Site,
        bytes: usize,
        align: usize,
    ) -> Result<u32, Fault> {
        if let Some(a) = self.allocs.iter().find(|a| {
            a.key == 0 && a.site.is_some_and(|s| same_site(s, site)) && a.end - a.start == bytes
        }) {
            return Ok(a.start as u32);
        }
        self.fresh_alloc(site, bytes, align)
    }

    /// A new array of `bytes` aligned to `align`, named by `site` in messages.
    fn fresh_alloc(&mut self, site: Site, bytes: usize, align: usize) -> Result<u32, Fault> {
        let arrays = self.allocs.iter().filter(|a| a.site.is_some()).count();
        if arrays >= MAX_ARRAYS || self.static_bytes + bytes > self.static_limit {
            return Err(Fault::TooLarge(format!(
                "{} bytes in {arrays} arrays, plus {bytes} bytes declared at {site}, past the \
                 launch's {} bytes (LaunchConfig::with_static_shared_limit; 232448 for sm_90a)",
                self.static_bytes, self.static_limit
            )));
        }
        let start = (self.top + RED_ZONE).next_multiple_of(align.max(16));
        let end = start + bytes;
        assert!(end <= self.cap, "emulator: shared arena too small");
        // SAFETY: `start..end` lies in the arena (checked above).
        unsafe { self.base.add(start).write_bytes(0xFF, bytes) };
        self.allocs.push(Alloc {
            start,
            end,
            site: Some(site),
            align,
            escaped: false,
            key: 0,
        });
        self.top = end;
        self.static_bytes += bytes;
        Ok(start as u32)
    }

    /// The `SharedArray` holding shared address `addr`: its declaration site,
    /// size, alignment, and `addr`'s offset in it (`None` outside every array).
    pub(crate) fn static_site_of(&self, addr: u32) -> Option<(Site, usize, usize, usize)> {
        let a = addr as usize;
        self.allocs.iter().find_map(|x| {
            let site = x.site?;
            (x.start <= a && a < x.end).then(|| (site, x.end - x.start, x.align, a - x.start))
        })
    }

    /// Generic pointer and length in bytes of the dynamic shared memory.
    pub(crate) fn dynamic(&self) -> (*mut u8, usize) {
        (self.base.wrapping_add(DYN_BASE), self.dynamic)
    }

    /// The generic pointer of shared address `addr`; the allocation holding
    /// it is no longer shadow-checked.
    pub(crate) fn generic_of(&mut self, addr: u32) -> *mut u8 {
        let a = addr as usize;
        if let Some(alloc) = self.allocs.iter_mut().find(|x| x.start <= a && a <= x.end) {
            alloc.escaped = true;
        }
        self.base.wrapping_add(a)
    }

    /// The shared address of generic pointer `ptr` (meaningless outside the
    /// arena, and then refused by every access).
    pub(crate) fn shared_addr_of(&self, ptr: *mut u8) -> u32 {
        (ptr as usize).wrapping_sub(self.base as usize) as u32
    }

    /// The generic pointer of shared address `addr` for an `access` of
    /// `bytes` bytes aligned to `align`, by thread `t` of the block, after
    /// checking bounds, alignment, initialisation and races.
    pub(crate) fn check(
        &mut self,
        t: u32,
        addr: u32,
        bytes: usize,
        align: usize,
        access: Access,
    ) -> Result<*mut u8, Fault> {
        let i = self.check_bounds(addr, bytes, align, access)?;
        let (start, end) = (addr as usize, addr as usize + bytes);
        let ptr = self.base.wrapping_add(start);
        if !self.landed.is_empty() {
            if let Some(detail) = self.unobserved_load(t, start, end) {
                return Err(Fault::AsyncPending(detail));
            }
        }
        if !self.check || self.allocs[i].escaped {
            return Ok(ptr);
        }
        let now = *self.now;
        if !matches!(access, Access::Read | Access::OperandRead) {
            self.check_operand_reads(t, start, end)
                .map_err(|(b, warp)| Fault::Race {
                    kind: RaceKind::WriteAfterRead,
                    other: Some(32 * warp as u32),
                    addr: b as u32,
                    allocation: self.at(i, b),
                })?;
        }
        for b in start..end {
            if let Err(f) = self.shadow_access(t, b, now, access) {
                return Err(match f {
                    ShadowFault::Uninit => Fault::Uninit {
                        addr: b as u32,
                        allocation: self.at(i, b),
                    },
                    ShadowFault::Race(kind, other) => Fault::Race {
                        kind,
                        other,
                        addr: b as u32,
                        allocation: self.at(i, b),
                    },
                    ShadowFault::RemoteRace(kind, rank) => Fault::RemoteRace {
                        kind,
                        rank,
                        addr: b as u32,
                        allocation: self.at(i, b),
                    },
                });
            }
        }
        Ok(ptr)
    }

    /// Bounds, alignment and pending asynchronous copies of an `access` of `bytes`
    /// bytes aligned to `align` at `addr`; no shadow check, nothing recorded. Returns the
    /// index of the allocation holding it ([`check`](Self::check) goes on from there).
    pub(crate) fn check_bounds(
        &self,
        addr: u32,
        bytes: usize,
        align: usize,
        access: Access,
    ) -> Result<usize, Fault> {
        let (start, end) = (addr as usize, addr as usize + bytes);
        let Some(i) = self
            .allocs
            .iter()
            .position(|a| a.start <= start && end <= a.end)
        else {
            return Err(Fault::OutOfBounds(self.locate(start, end)));
        };
        #[allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV
        if start % align != 0 {
            return Err(Fault::OutOfBounds(format!(
                "misaligned for its {align}-byte alignment, in {}",
                self.allocs[i].describe()
            )));
        }
        if !matches!(access, Access::Read | Access::OperandRead) {
            if let Some(r) = self
                .wgmma_reads
                .iter()
                .find(|r| r.start < end && start < r.end)
            {
                return Err(Fault::AsyncPending(format!(
                    "shared {:#x}..{:#x} is an operand of the wgmma::Accum::mma_async at {}, which the tensor cores may still read: {} issuing thread(s) have not retired its group with Accum::wait (release or overwrite a stage only after the wait that retires the multiplies reading it)",
                    r.start, r.end, r.site, r.holders
                )));
            }
        }
        match self.pending_conflict(start, end, access) {
            Some(detail) => Err(Fault::AsyncPending(detail)),
            None => Ok(i),
        }
    }

    /// The pointer for an access of `bytes` bytes aligned to `align` at `addr` by a
    /// thread of *another* block of the cluster, of rank `rank`:
    /// [`check_bounds`](Self::check_bounds), then the race shadow, in which only a
    /// cluster barrier orders it against this block's threads and other CTAs.
    pub(crate) fn check_remote(
        &mut self,
        rank: u32,
        addr: u32,
        bytes: usize,
        align: usize,
        access: Access,
    ) -> Result<*mut u8, String> {
        self.check_bounds(addr, bytes, align, access)
            .map_err(|f| match f {
                Fault::OutOfBounds(d) => format!("out of bounds or misaligned: {d}"),
                Fault::AsyncPending(d) => d,
                other => format!("{other:?}"),
            })?;
        if self.check {
            if !matches!(access, Access::Read | Access::OperandRead) {
                self.check_remote_operand_reads(rank, addr as usize, addr as usize + bytes)?;
            }
            let now = *self.now;
            for b in addr as usize..addr as usize + bytes {
                self.shadow_remote(rank, b, now, access)?;
            }
        }
        Ok(self.base.wrapping_add(addr as usize))
    }

    /// A write by a thread of the CTA of rank `rank` to `start..end` against this block's
    /// `wgmma` operand reads of it: only a cluster barrier orders it after them.
    fn check_remote_operand_reads(
        &self,
        rank: u32,
        start: usize,
        end: usize,
    ) -> Result<(), String> {
        match self
            .operand_reads
            .iter()
            .find(|r| r.start < end && start < r.end && r.time >= self.cluster_barrier_time)
        {
            Some(r) => Err(format!(
                "data race (write after read) on shared bytes {:#x}..{:#x}: a thread of CTA \
                 rank {rank} writes them, which warp {} of this CTA read as a wgmma operand \
                 since the last cluster barrier, and nothing orders the two (cluster::sync \
                 between them)",
                r.start.max(start),
                r.end.min(end),
                r.warp
            )),
            None => Ok(()),
        }
    }

    /// The race shadow of a `.shared::cluster` access to byte `b` by a thread of the CTA
    /// of rank `rank`: only a cluster barrier orders it against this block's threads or
    /// another CTA's (accesses from one CTA are taken as ordered among themselves; the
    /// shadow does not see that CTA's own barriers).
    fn shadow_remote(
        &mut self,
        rank: u32,
        b: usize,
        now: u32,
        access: Access,
    ) -> Result<(), String> {
        let s = self.shadow[b];
        let me = REMOTE | rank as u16;
        let cluster_time = self.cluster_barrier_time;
        let ordered = |time: u32, who: u16| who == ASYNC || who == me || time < cluster_time;
        let written = s.write_time >= self.block_start;
        let read = s.read_time >= self.block_start;
        let race = |kind: RaceKind, who: u16| {
            let by = match who {
                w if is_remote(w) => format!("a thread of CTA rank {}", w - REMOTE),
                w if w < MANY_IN_WARP => format!("thread {w} of the owner"),
                ATOMIC => "an atomic".into(),
                _ => "several threads".into(),
            };
            Err(format!(
                "data race ({kind}) on shared byte {b:#x}: {by} accessed it since the last \
                 cluster barrier, and nothing orders the two (cluster::sync between them)"
            ))
        };
        if access != Access::Write && !written {
            return Err(format!(
                "reads shared byte {b:#x}, which no thread of its CTA has written (uninitialised)"
            ));
        }
        let fresh_atomic = written && s.writer == ATOMIC && s.write_time >= cluster_time;
        match access {
            Access::Read | Access::OperandRead => {
                if fresh_atomic {
                    return race(RaceKind::PlainAfterAtomic, ATOMIC);
                }
                if s.writer != ATOMIC && !ordered(s.write_time, s.writer) {
                    return race(RaceKind::ReadAfterWrite, s.writer);
                }
                let e = &mut self.shadow[b];
                e.reader = if !read || ordered(s.read_time, s.reader) {
                    me
                } else {
                    MANY
                };
                e.reader_warps = 0;
                e.read_time = now;
            }
            Access::Write | Access::Atomic => {
                if written && s.writer == ATOMIC {
                    if access == Access::Write && fresh_atomic {
                        return race(RaceKind::PlainAfterAtomic, ATOMIC);
                    }
                } else if written && !ordered(s.write_time, s.writer) {
                    return race(RaceKind::WriteAfterWrite, s.writer);
                }
                if read && !ordered(s.read_time, s.reader) {
                    return race(RaceKind::WriteAfterRead, s.reader);
                }
                let e = &mut self.shadow[b];
                e.writer = if access == Access::Atomic { ATOMIC } else { me };
                e.write_time = now;
            }
        }
        Ok(())
    }

    /// "offset N in <allocation>".
    fn at(&self, i: usize, b: usize) -> String {
        let a = &self.allocs[i];
        format!("offset {} in {}", b - a.start, a.describe())
    }

    /// Where `start..end` lies relative to the nearest allocation.
    fn locate(&self, start: usize, end: usize) -> String {
        let near = self.allocs.iter().min_by_key(|a| {
            if start >= a.end {
                start - a.end
            } else {
                a.start.saturating_sub(end)
            }
        });
        match near {
            None => "and the block has no shared memory".into(),
            Some(a) if start >= a.end => {
                format!("{} bytes past the end of {}", start - a.end, a.describe())
            }
            Some(a) if end <= a.start => {
                format!("{} bytes before {}", a.start - end, a.describe())
            }
            Some(a) if start < a.start => {
                format!("starting {} bytes before {}", a.start - start, a.describe())
            }
            Some(a) => format!(
                "running {} bytes past the end of {}",
                end - a.end,
                a.describe()
            ),
        }
    }

    /// Advances the block's clock: accesses so far are before the returned time.
    pub(crate) fn tick(&mut self) -> u32 {
        *self.now += 1;
        *self.now
    }

    /// What thread `t` releases when it arrives on an mbarrier at time `now`: its rows of
    /// [`acquired`](Self::acquired) and [`acquired_threads`](Self::acquired_threads),
    /// the latter with its own accesses so far. `None` when the shadow is off.
    pub(crate) fn release_of(&self, t: u32, now: u32) -> Option<(Vec<u32>, Vec<u32>)> {
        let warps = self.warp_sync.len();
        let row = self
            .acquired
            .get(t as usize * warps..(t as usize + 1) * warps)?;
        let mut threads = self.acquired_threads[t as usize].clone();
        threads.resize(32 * warps, 0);
        threads[t as usize] = now;
        Some((row.to_vec(), threads))
    }

    /// Thread `t` is now ordered after what a barrier phase's arrivals released.
    pub(crate) fn acquire(&mut self, t: u32, warps_row: &[u32], threads_row: &[u32]) {
        let warps = self.warp_sync.len();
        let t = t as usize;
        if let Some(own) = self.acquired.get_mut(t * warps..(t + 1) * warps) {
            for (a, &r) in own.iter_mut().zip(warps_row) {
                *a = (*a).max(r);
            }
        }
        if let Some(own) = self.acquired_threads.get_mut(t) {
            if own.len() < threads_row.len() {
                own.resize(threads_row.len(), 0);
            }
            for (a, &r) in own.iter_mut().zip(threads_row) {
                *a = (*a).max(r);
            }
        }
    }

    /// Whether thread `u`'s accesses at `time` come before thread `t`'s through mbarrier
    /// arrivals and waits (its warp's, or its own).
    fn acquired_thread(&self, t: u32, u: usize, time: u32) -> bool {
        self.acquired_warp(t, u / 32, time)
            || self.acquired_threads[t as usize]
                .get(u)
                .is_some_and(|&a| time < a)
    }

    /// Whether the accesses of every thread of warp `w` at `time` come before thread
    /// `t`'s through mbarrier arrivals and waits.
    fn acquired_from(&self, t: u32, w: usize, time: u32) -> bool {
        self.acquired_warp(t, w, time)
            || (32 * w..32 * (w + 1)).all(|u| self.acquired_thread(t, u, time))
    }

    /// Whether warp `w`'s accesses at `time` come before thread `t`'s as a whole (a
    /// rendezvous of the warp was released to `t`).
    fn acquired_warp(&self, t: u32, w: usize, time: u32) -> bool {
        let warps = self.warp_sync.len();
        self.acquired
            .get(t as usize * warps + w)
            .is_some_and(|&a| time < a)
    }

    /// A write by thread `t` to `start..end` against the `wgmma` operand reads of it:
    /// each must come before the write (the reading warp's rendezvous acquired by `t`,
    /// or `t`'s own warp synced since). The written bytes are then dropped from the
    /// records (a later write to them meets this one in the byte shadow); the rest of a
    /// record it overlaps stays, since nothing orders a later write to those bytes after
    /// this one. Err: the first byte and the reading warp.
    fn check_operand_reads(
        &mut self,
        t: u32,
        start: usize,
        end: usize,
    ) -> Result<(), (usize, usize)> {
        if self.operand_reads.is_empty() {
            return Ok(());
        }
        let w = (t / 32) as usize;
        for r in self
            .operand_reads
            .iter()
            .filter(|r| r.start < end && start < r.end)
        {
            let ordered = r.time < self.barrier_time
                || (r.warp == w && self.warp_sync[w] > r.time)
                || self.acquired_from(t, r.warp, r.time);
            if !ordered {
                return Err((r.start.max(start), r.warp));
            }
        }
        let mut kept = Vec::with_capacity(self.operand_reads.len());
        for r in self.operand_reads.drain(..) {
            if !(r.start < end && start < r.end) {
                kept.push(r);
                continue;
            }
            if r.start < start {
                kept.push(OperandRead { end: start, ..r });
            }
            if end < r.end {
                kept.push(OperandRead { start: end, ..r });
            }
        }
        self.operand_reads = kept;
        Ok(())
    }

    /// Whether an access by `who` (of the warps in `warps_mask` when `who` is
    /// `MANY`) at `time` comes before the current one by thread `t`.
    fn ordered(&self, time: u32, who: u16, warps_mask: u32, t: u32) -> bool {
        if is_remote(who) {
            // Only a cluster barrier orders another CTA's access before this block's.
            return time < self.cluster_barrier_time;
        }
        let w = (t / 32) as usize;
        let warp_synced = self.warp_sync[w] > time;
        let single = who < MANY_IN_WARP;
        let in_warp = who != MANY && who & MANY_IN_WARP != 0 && who != ASYNC && who != ATOMIC;
        who == ASYNC
            || time < self.barrier_time
            || who as u32 == t
            || (single && who as usize / 32 == w && warp_synced)
            || (in_warp && (who & !MANY_IN_WARP) as usize == w && warp_synced)
            || (single && self.acquired_thread(t, who as usize, time))
            || (in_warp && self.acquired_from(t, (who & !MANY_IN_WARP) as usize, time))
            || (who == MANY
                && warps_mask != 0
                && (0..32)
                    .filter(|v| warps_mask & (1 << v) != 0)
                    .all(|v| self.acquired_from(t, v, time) || (v == w && warp_synced)))
    }

    fn shadow_access(
        &mut self,
        t: u32,
        b: usize,
        now: u32,
        access: Access,
    ) -> Result<(), ShadowFault> {
        let s = self.shadow[b];
        let written = s.write_time >= self.block_start;
        let read = s.read_time >= self.block_start;
        let fresh_atomic = written && s.writer == ATOMIC && s.write_time >= self.barrier_time;
        let race = |kind: RaceKind, who: u16| {
            if is_remote(who) {
                ShadowFault::RemoteRace(kind, u32::from(who - REMOTE))
            } else {
                ShadowFault::Race(kind, (who < MANY_IN_WARP).then_some(who as u32))
            }
        };
        if access != Access::Write && !written {
            return Err(ShadowFault::Uninit);
        }
        match access {
            Access::Read | Access::OperandRead => {
                if fresh_atomic {
                    return Err(ShadowFault::Race(RaceKind::PlainAfterAtomic, None));
                }
                if s.writer != ATOMIC && !self.ordered(s.write_time, s.writer, 0, t) {
                    return Err(race(RaceKind::ReadAfterWrite, s.writer));
                }
                if access == Access::OperandRead {
                    // Recorded per warp and range by `wgmma_issue`.
                    return Ok(());
                }
                let restart = !read || self.ordered(s.read_time, s.reader, s.reader_warps, t);
                let reader = if restart {
                    t as u16
                } else if s.reader < MANY_IN_WARP && s.reader as u32 / 32 == t / 32 {
                    MANY_IN_WARP | (t / 32) as u16
                } else if s.reader != MANY
                    && s.reader & MANY_IN_WARP != 0
                    && (s.reader & !MANY_IN_WARP) as u32 == t / 32
                {
                    s.reader
                } else {
                    MANY
                };
                let e = &mut self.shadow[b];
                e.reader = reader;
                e.read_time = now;
                let bit = 1u32 << (t / 32);
                e.reader_warps = if restart { bit } else { s.reader_warps | bit };
            }
            Access::Write | Access::Atomic => {
                if written && s.writer == ATOMIC {
                    if access == Access::Write && fresh_atomic {
                        return Err(ShadowFault::Race(RaceKind::PlainAfterAtomic, None));
                    }
                } else if written && !self.ordered(s.write_time, s.writer, 0, t) {
                    return Err(race(RaceKind::WriteAfterWrite, s.writer));
                }
                if read && !self.ordered(s.read_time, s.reader, s.reader_warps, t) {
                    return Err(race(RaceKind::WriteAfterRead, s.reader));
                }
                let e = &mut self.shadow[b];
                e.writer = if access == Access::Atomic {
                    ATOMIC
                } else {
                    t as u16
                };
                e.write_time = now;
            }
        }
        Ok(())
    }
}

enum ShadowFault {
    Uninit,
    Race(RaceKind, Option<u32>),
    /// With another CTA's access (its rank).
    RemoteRace(RaceKind, u32),
}

/// Turns `fault` into the launch's error at the calling thread, and unwinds.
pub(crate) fn raise(ctx: &ThreadCtx, fault: Fault, addr: u32, bytes: usize) -> ! {
    let block = ctx.block();
    let at = block.coords(ctx.linear);
    context::fail(match fault {
        Fault::OutOfBounds(detail) => EmulatorError::SharedOutOfBounds {
            at,
            addr,
            bytes: bytes as u32,
            detail,
        },
        Fault::Uninit { addr, allocation } => EmulatorError::UninitSharedRead {
            at,
            addr,
            bytes: bytes as u32,
            allocation,
        },
        Fault::Race {
            kind,
            other,
            addr,
            allocation,
        } => EmulatorError::SharedRace {
            at,
            other: block.coords(other.unwrap_or(0)),
            kind,
            addr,
            allocation,
        },
        Fault::RemoteRace {
            kind,
            rank,
            addr,
            allocation,
        } => EmulatorError::Cluster {
            at,
            message: format!(
                "data race ({kind}) at shared address {addr:#x} ({allocation}) with an access \
                 by a thread of CTA rank {rank} of the cluster (distributed shared memory): no \
                 cluster barrier between the two (cluster::sync)"
            ),
        },
        Fault::TooLarge(detail) => EmulatorError::StaticSharedTooLarge { at, detail },
        Fault::AsyncPending(detail) => EmulatorError::AsyncCopy {
            at,
            message: format!("accesses {bytes} bytes at shared address {addr:#x}, but {detail}"),
        },
    })
}

/// The checked generic pointer for an `access` of `bytes` bytes aligned to
/// `align` at shared address `addr` by the calling thread.
pub(crate) fn access(addr: u32, bytes: usize, align: usize, access: Access) -> *mut u8 {
    context::with(|ctx| {
        let result = ctx
            .block()
            .mem
            .borrow_mut()
            .check(ctx.linear, addr, bytes, align, access);
        result.unwrap_or_else(|fault| raise(ctx, fault, addr, bytes))
    })
}

/// Checks an `access` of `bytes` bytes at `addr` for bounds, alignment and pending
/// copies only (an asynchronous copy's destination at issue), raising the error.
pub(crate) fn check_only(addr: u32, bytes: usize, align: usize, access: Access) {
    context::with(|ctx| {
        let result = ctx
            .block()
            .mem
            .borrow()
            .check_bounds(addr, bytes, align, access);
        if let Err(fault) = result {
            raise(ctx, fault, addr, bytes)
        }
    })
}

/// A `wgmma` operand's `T` at `addr`, read for the calling thread's multiply: checked as
/// a load ([`Access::OperandRead`]).
pub(crate) fn load_operand<T: Copy>(addr: u32) -> T {
    let p = access(addr, size_of::<T>(), align_of::<T>(), Access::OperandRead);
    // SAFETY: as in `load`.
    unsafe { p.cast::<T>().read() }
}

/// `ld.shared` of a `T` at `addr`, checked.
pub(crate) fn load<T: Copy>(addr: u32) -> T {
    let p = access(addr, size_of::<T>(), align_of::<T>(), Access::Read);
    // SAFETY: `check` found `size_of::<T>()` bytes at `p` inside one live
    // allocation of the arena, aligned for `T`; the arena's bytes are always
    // initialised (0xFF until written), and the caller of the device
    // function promised they hold a valid `T`.
    unsafe { p.cast::<T>().read() }
}

/// `st.shared` of a `T` at `addr`, checked.
pub(crate) fn store<T: Copy>(addr: u32, value: T) {
    let p = access(addr, size_of::<T>(), align_of::<T>(), Access::Write);
    // SAFETY: as in `load`; the emulated threads of a block share one OS
    // thread, so no other access runs during this write.
    unsafe { p.cast::<T>().write(value) }
}

/// The shared address of the `SharedArray` declared at `site` in the
/// calling thread's block.
pub(crate) fn static_alloc(site: Site, bytes: usize, align: usize) -> u32 {
    context::with(|ctx| {
        let result = ctx
            .block()
            .mem
            .borrow_mut()
            .static_alloc(site, bytes, align);
        result.unwrap_or_else(|fault| raise(ctx, fault, 0, bytes))
    })
}

/// The shared address of the static-form `SharedArray` whose `static` lives at
/// host address `key` (`SharedArray::UNINIT`), in the calling thread's block;
/// `site` (its first use) names it in messages.
pub(crate) fn static_alloc_keyed(key: usize, site: Site, bytes: usize, align: usize) -> u32 {
    context::with(|ctx| {
        let result = ctx
            .block()
            .mem
            .borrow_mut()
            .static_alloc_keyed(key, site, bytes, align);
        result.unwrap_or_else(|fault| raise(ctx, fault, 0, bytes))
    })
}

/// Generic pointer and length in bytes of the calling block's dynamic
/// shared memory.
pub(crate) fn dynamic() -> (*mut u8, usize) {
    context::with(|ctx| ctx.block().mem.borrow().dynamic())
}

/// `fence.proxy.async.shared::cta` by the calling thread.
pub(crate) fn proxy_fence() {
    context::with(|ctx| ctx.block().mem.borrow_mut().proxy_fence(ctx.linear))
}

/// `cvta.shared`: the generic pointer of shared address `addr`.
pub(crate) fn to_generic(addr: u32) -> *mut u8 {
    context::with(|ctx| ctx.block().mem.borrow_mut().generic_of(addr))
}

/// `cvta.to.shared`: the shared address of a generic pointer.
pub(crate) fn from_generic(ptr: *mut u8) -> u32 {
    context::with(|ctx| ctx.block().mem.borrow().shared_addr_of(ptr))
}
