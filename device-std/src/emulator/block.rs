//! One block: its threads as coroutines on one OS thread, the scheduler that
//! runs them until they all return, and the block barrier.
//!
//! A thread runs until it returns or waits (barrier, warp collective,
//! `nanosleep`); the thread whose arrival completes a barrier or collective
//! wakes the others, which go back on the run queue. When the queue is empty
//! and threads are still waiting, the block is stuck: the scheduler resolves
//! pending `activemask` calls, or else reports what every thread waits for.

use super::cluster::Cluster;
use super::context::{self, same_site, Abort, Site, ThreadCtx};
use super::error::{EmulatorError, ThreadCoords};
use super::executor::Launch;
use super::shared_mem::SharedMem;
use super::warp::WarpState;
use core::cell::{Cell, RefCell};
use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::any::Any;
use std::boxed::Box;
use std::collections::VecDeque;
use std::format;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::string::{String, ToString};
use std::vec::Vec;

/// Where a thread is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// On the run queue.
    Runnable,
    /// Waiting for other threads.
    Blocked,
    /// Returned from the kernel.
    Done,
}

/// The run queue and each thread's status.
pub(crate) struct Sched {
    queue: VecDeque<u32>,
    pub(crate) status: Vec<Status>,
    done: u32,
}

/// Which `sync_threads` variant a barrier is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BarrierKind {
    /// `sync_threads`.
    Plain,
    /// `sync_threads_count`.
    Count,
    /// `sync_threads_and`.
    And,
    /// `sync_threads_or`.
    Or,
}

/// The block barrier (`bar.sync 0`).
struct Barrier {
    /// Completed barriers; a waiting thread leaves when it changes.
    generation: u64,
    arrived: u32,
    kind: BarrierKind,
    site: Option<Site>,
    first: u32,
    count: u32,
    all: bool,
    any: bool,
    /// What the last completed barrier returns.
    result: u32,
}

/// Counters a launch sums over its blocks.
#[derive(Default)]
pub(crate) struct BlockStats {
    pub(crate) barriers: Cell<u64>,
    pub(crate) collectives: Cell<u64>,
}

/// One running block.
pub(crate) struct Block<'a> {
    pub(crate) launch: &'a Launch,
    /// Linear index of the block in the grid, x fastest.
    pub(crate) linear: u64,
    pub(crate) ctaid: [u32; 3],
    pub(crate) size: u32,
    pub(crate) sched: RefCell<Sched>,
    barrier: RefCell<Barrier>,
    pub(crate) warps: RefCell<Vec<WarpState>>,
    pub(crate) mem: RefCell<SharedMem<'a>>,
    pub(crate) asyncs: RefCell<super::mbarrier::AsyncState>,
    /// The block's cluster (a cluster of one without a cluster launch); outlives it.
    cluster: *const Cluster,
    /// `%cluster_ctarank`.
    pub(crate) rank: u32,
    error: RefCell<Option<EmulatorError>>,
    pub(crate) stats: BlockStats,
}

/// How a thread's coroutine ended.
enum Outcome {
    Done,
    Panicked(Box<dyn Any + Send>),
}

impl<'a> Block<'a> {
    fn new(
        launch: &'a Launch,
        linear: u64,
        mem: SharedMem<'a>,
        cluster: &Cluster,
        rank: u32,
    ) -> Self {
        let g = launch.grid;
        let ctaid = [
            (linear % g[0] as u64) as u32,
            ((linear / g[0] as u64) % g[1] as u64) as u32,
            (linear / (g[0] as u64 * g[1] as u64)) as u32,
        ];
        let size = launch.block_size;
        let warps = size.div_ceil(32);
        Block {
            launch,
            linear,
            ctaid,
            size,
            sched: RefCell::new(Sched {
                queue: (0..size).collect(),
                status: std::vec![Status::Runnable; size as usize],
                done: 0,
            }),
            barrier: RefCell::new(Barrier {
                generation: 0,
                arrived: 0,
                kind: BarrierKind::Plain,
                site: None,
                first: 0,
                count: 0,
                all: true,
                any: false,
                result: 0,
            }),
            warps: RefCell::new((0..warps).map(|w| WarpState::new(size - 32 * w)).collect()),
            mem: RefCell::new(mem),
            asyncs: RefCell::new(Default::default()),
            cluster: core::ptr::from_ref(cluster),
            rank,
            error: RefCell::new(None),
            stats: BlockStats::default(),
        }
    }

    /// The block's cluster.
    pub(crate) fn cluster(&self) -> &Cluster {
        // SAFETY: `run_cluster` creates the cluster before its blocks and drops it
        // after them.
        unsafe { &*self.cluster }
    }

    /// Coordinates of thread `linear` of this block.
    pub(crate) fn coords(&self, linear: u32) -> ThreadCoords {
        let n = self.launch.block;
        ThreadCoords {
            block: (self.ctaid[0], self.ctaid[1], self.ctaid[2]),
            thread: (
                linear % n[0],
                (linear / n[0]) % n[1],
                linear / (n[0] * n[1]),
            ),
        }
    }

    /// `blockIdx` as a tuple.
    pub(crate) fn idx(&self) -> (u32, u32, u32) {
        (self.ctaid[0], self.ctaid[1], self.ctaid[2])
    }

    /// Keeps `err` unless an error is already recorded.
    pub(crate) fn record_error(&self, err: EmulatorError) {
        let mut e = self.error.borrow_mut();
        if e.is_none() {
            *e = Some(err);
        }
    }

    /// Suspends the calling thread until `ready()` holds; another thread's
    /// [`wake`](Self::wake) puts it back on the queue.
    pub(crate) fn wait(&self, ctx: &ThreadCtx, ready: impl Fn() -> bool) {
        loop {
            self.sched.borrow_mut().status[ctx.linear as usize] = Status::Blocked;
            ctx.suspend();
            if ready() {
                return;
            }
        }
    }

    /// Puts the calling thread at the back of the run queue and suspends it.
    pub(crate) fn yield_now(&self, ctx: &ThreadCtx) {
        {
            let mut s = self.sched.borrow_mut();
            s.queue.push_back(ctx.linear);
        }
        ctx.suspend();
    }

    /// Makes a waiting thread runnable.
    pub(crate) fn wake(&self, t: u32) {
        let mut s = self.sched.borrow_mut();
        if s.status[t as usize] == Status::Blocked {
            s.status[t as usize] = Status::Runnable;
            s.queue.push_back(t);
        }
    }

    /// `sync_threads*`: waits until every thread of the block arrives, then
    /// returns the reduction `kind` asks for of every thread's `pred`.
    pub(crate) fn barrier(
        &self,
        ctx: &ThreadCtx,
        kind: BarrierKind,
        pred: bool,
        site: Site,
    ) -> u32 {
        let generation = {
            let mut b = self.barrier.borrow_mut();
            if b.arrived == 0 {
                b.kind = kind;
                b.site = Some(site);
                b.first = ctx.linear;
                b.count = 0;
                b.all = true;
                b.any = false;
            } else if b.kind != kind || !b.site.is_some_and(|s| same_site(s, site)) {
                let err = EmulatorError::BarrierMismatch {
                    first: self.coords(b.first),
                    first_site: b.site.map_or_else(String::new, |s| s.to_string()),
                    second: self.coords(ctx.linear),
                    second_site: site.to_string(),
                };
                drop(b);
                context::fail(err);
            }
            b.count += pred as u32;
            b.all &= pred;
            b.any |= pred;
            b.arrived += 1;
            if b.arrived == self.size {
                b.result = match kind {
                    BarrierKind::Plain => 0,
                    BarrierKind::Count => b.count,
                    BarrierKind::And => b.all as u32,
                    BarrierKind::Or => b.any as u32,
                };
                b.generation += 1;
                b.arrived = 0;
                let result = b.result;
                drop(b);
                self.mem.borrow_mut().barrier_released();
                self.stats.barriers.set(self.stats.barriers.get() + 1);
                for t in 0..self.size {
                    if t != ctx.linear {
                        self.wake(t);
                    }
                }
                return result;
            }
            b.generation
        };
        self.wait(ctx, || self.barrier.borrow().generation != generation);
        self.barrier.borrow().result
    }

    /// The error of a block none of whose threads can go on.
    fn stuck(&self) -> EmulatorError {
        let sched = self.sched.borrow();
        let b = self.barrier.borrow();
        let site = b.site.map_or_else(|| "?".to_string(), |s| s.to_string());
        if b.arrived > 0 {
            if let Some(t) = sched.status.iter().position(|&s| s == Status::Done) {
                return EmulatorError::DivergentBarrier {
                    block: self.idx(),
                    site,
                    waiting: b.arrived,
                    threads: self.size,
                    exited: self.coords(t as u32),
                };
            }
        }
        let warps = self.warps.borrow();
        let mut detail = Vec::new();
        if b.arrived > 0 {
            detail.push(format!(
                "{} of {} threads wait at sync_threads ({site})",
                b.arrived, self.size
            ));
        }
        for (w, ws) in warps.iter().enumerate() {
            detail.extend(ws.describe_waits(w as u32));
        }
        let blocked = sched
            .status
            .iter()
            .filter(|&&s| s == Status::Blocked)
            .count();
        let bars = self.asyncs.borrow().describe();
        if !bars.is_empty() {
            detail.push(format!(
                "{blocked} threads wait on mbarriers that nothing will complete: {}",
                bars.join("; ")
            ));
        }
        if let Some(d) = self.cluster().describe() {
            detail.push(d);
        }
        if detail.is_empty() {
            detail.push("threads wait, but for nothing the emulator knows".to_string());
        }
        EmulatorError::Deadlock {
            block: self.idx(),
            detail: detail.join("; "),
        }
    }
}

/// Runs every thread of the blocks `linears` (one cluster, in rank order) to
/// completion on `stacks` (at least `launch.block_size` per block), each block on its
/// own shared memory from `mems`.
///
/// Errors: whatever a thread recorded (the first), a kernel panic with its
/// location, or a deadlock.
pub(crate) fn run_cluster<F: Fn() + Sync>(
    launch: &Launch,
    linears: &[u64],
    stacks: &mut [DefaultStack],
    mems: Vec<SharedMem<'_>>,
    kernel: &F,
) -> Result<(u64, u64), EmulatorError> {
    let cluster = Cluster::new(linears.len() as u32, launch.block_size, launch.cooperative);
    let blocks: Vec<Block<'_>> = linears
        .iter()
        .zip(mems)
        .enumerate()
        .map(|(rank, (&linear, mem))| Block::new(launch, linear, mem, &cluster, rank as u32))
        .collect();
    cluster.set_blocks(&blocks);
    let n = launch.block_size as usize;
    let ctxs: Vec<Vec<ThreadCtx>> = blocks
        .iter()
        .map(|b| (0..b.size).map(|t| ThreadCtx::new(b, t)).collect())
        .collect();
    let mut coros: Vec<Vec<Coro<'_>>> = Vec::with_capacity(blocks.len());
    for (block_ctxs, block_stacks) in ctxs.iter().zip(stacks.chunks_mut(n)) {
        let mut v = Vec::with_capacity(n);
        for (ctx, stack) in block_ctxs.iter().zip(block_stacks.iter_mut()) {
            let body = move |y: &Yielder<(), ()>, ()| -> Outcome {
                ctx.yielder.set(y);
                match catch_unwind(AssertUnwindSafe(kernel)) {
                    Ok(()) => Outcome::Done,
                    Err(payload) => Outcome::Panicked(payload),
                }
            };
            // SAFETY: the body borrows `ctxs`, the blocks and the cluster (through
            // the context) and `kernel`, which outlive `coros`: every coroutine is
            // dropped below (run to completion or force-unwound) before this function
            // returns, and `coros` is declared after what it borrows.
            v.push(unsafe { Coroutine::with_stack_unchecked(stack, body) });
        }
        coros.push(v);
    }

    let result = schedule(&blocks, &ctxs, &mut coros);

    // Unwind the threads still suspended (after an error), each with its
    // own context current, so that destructors in kernel code see it.
    for (block_ctxs, block_coros) in ctxs.iter().zip(coros.iter_mut()) {
        for (ctx, coro) in block_ctxs.iter().zip(block_coros.drain(..)) {
            let prev = context::set_current(ctx);
            drop(coro);
            context::set_current(prev);
        }
    }
    result.map(|()| {
        blocks.iter().fold((0, 0), |(b, c), block| {
            (
                b + block.stats.barriers.get(),
                c + block.stats.collectives.get(),
            )
        })
    })
}

type Coro<'s> = Coroutine<(), (), Outcome, &'s mut DefaultStack>;

/// Runs the blocks of one cluster round-robin, each until its run queue is empty,
/// until every thread has returned or none can go on.
fn schedule(
    blocks: &[Block<'_>],
    ctxs: &[Vec<ThreadCtx>],
    coros: &mut [Vec<Coro<'_>>],
) -> Result<(), EmulatorError> {
    loop {
        let mut ran = false;
        for (bi, block) in blocks.iter().enumerate() {
            loop {
                let next = block.sched.borrow_mut().queue.pop_front();
                let Some(t) = next else { break };
                ran = true;
                if block.launch.aborted(block.linear) {
                    // Another block failed; its error is the launch's.
                    return Ok(());
                }
                step(block, &ctxs[bi][t as usize], &mut coros[bi][t as usize], t)?;
            }
        }
        if ran {
            continue;
        }
        if blocks.iter().all(|b| b.sched.borrow().done == b.size) {
            for block in blocks {
                if let Some((t, message)) = block.asyncs.borrow().unfinished_load() {
                    return Err(EmulatorError::AsyncCopy {
                        at: block.coords(t),
                        message,
                    });
                }
                if let Some(t) = block.asyncs.borrow().unfinished_store() {
                    return Err(EmulatorError::AsyncCopy {
                        at: block.coords(t),
                        message: "the block ends while this thread's bulk::store may still read its shared memory: call bulk::commit_group and bulk::wait_group_read::<0>() before the kernel returns".to_string(),
                    });
                }
            }
            return Ok(());
        }
        let mut unstuck = false;
        for block in blocks {
            unstuck |= super::warp::resolve_activemask(block);
        }
        for block in blocks {
            unstuck |= super::mbarrier::land_all(block)?;
        }
        if !unstuck {
            let waiting = blocks
                .iter()
                .find(|b| b.sched.borrow().done < b.size)
                .unwrap_or(&blocks[0]);
            return Err(waiting.stuck());
        }
    }
}

/// Resumes thread `t` of `block` once.
fn step(
    block: &Block<'_>,
    ctx: &ThreadCtx,
    coro: &mut Coro<'_>,
    t: u32,
) -> Result<(), EmulatorError> {
    let prev = context::set_current(ctx);
    block.sched.borrow_mut().status[t as usize] = Status::Runnable;
    let step = coro.resume(());
    context::set_current(prev);
    match step {
        CoroutineResult::Yield(()) => {}
        CoroutineResult::Return(Outcome::Done) => {
            {
                let mut s = block.sched.borrow_mut();
                s.status[t as usize] = Status::Done;
                s.done += 1;
            }
            super::warp::thread_exited(block, t)?;
            block.cluster().thread_exited(block.rank, t);
        }
        CoroutineResult::Return(Outcome::Panicked(payload)) => {
            if let Some(err) = block.error.borrow_mut().take() {
                return Err(err);
            }
            if payload.is::<Abort>() {
                return Err(EmulatorError::Resources(
                    "a thread aborted without an error".to_string(),
                ));
            }
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(a non-string panic payload)".to_string());
            return Err(EmulatorError::Panic {
                at: block.coords(t),
                message,
                location: context::take_panic_location(),
            });
        }
    }
    if let Some(err) = block.error.borrow_mut().take() {
        return Err(err);
    }
    Ok(())
}
