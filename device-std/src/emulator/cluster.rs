//! Thread-block clusters under the emulator: the blocks of a cluster run on one
//! OS thread (`block::run_cluster`), so the cluster barrier and distributed
//! shared memory work as on the GPU.
//!
//! A `.shared::cluster` address is the owner's shared address with `rank + 1` in
//! its top byte (arena addresses stay below 2^24); the owner's own accesses go
//! through the race-checked path, other CTAs' are checked for bounds, alignment,
//! pending copies and the owner having exited.

use super::block::{Block, Status};
use super::context::{self, Site, ThreadCtx};
use super::error::EmulatorError;
use super::shared_mem::{self, Access};
use core::cell::{Cell, RefCell};
use core::mem::{align_of, size_of};
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

/// The cluster barrier and the cluster's blocks.
pub(crate) struct Cluster {
    size: u32,
    block_size: u32,
    blocks: RefCell<Vec<*const Block<'static>>>,
    /// Completed cluster barriers.
    generation: Cell<u64>,
    arrived: Cell<u32>,
    exited: Cell<u32>,
    /// Per thread (rank * block size + linear): the generation it arrived at and
    /// where, until it waits.
    arrivals: RefCell<Vec<Option<(u64, Site)>>>,
    /// The whole grid of a cooperative launch: the barrier is `grid::sync`'s, released
    /// only when every thread arrives (an exited thread never does).
    grid: bool,
}

impl Cluster {
    /// A cluster of `size` blocks of `block_size` threads; with `grid`, the grid of a
    /// cooperative launch.
    pub(crate) fn new(size: u32, block_size: u32, grid: bool) -> Self {
        Cluster {
            grid,
            size,
            block_size,
            blocks: RefCell::new(Vec::new()),
            generation: Cell::new(0),
            arrived: Cell::new(0),
            exited: Cell::new(0),
            arrivals: RefCell::new(std::vec![None; (size * block_size) as usize]),
        }
    }

    /// Records the blocks, in rank order (they outlive every use).
    pub(crate) fn set_blocks(&self, blocks: &[Block<'_>]) {
        *self.blocks.borrow_mut() = blocks
            .iter()
            .map(|b| core::ptr::from_ref(b).cast::<Block<'static>>())
            .collect();
    }

    /// CTAs in the cluster.
    pub(crate) fn size(&self) -> u32 {
        self.size
    }

    /// The block of rank `rank` (`< size`).
    pub(crate) fn block(&self, rank: u32) -> &Block<'static> {
        // SAFETY: `run_cluster` drops the blocks after every coroutine that can
        // reach this cluster.
        unsafe { &*self.blocks.borrow()[rank as usize] }
    }

    /// Completes the barrier once every live thread has arrived.
    fn try_release(&self) {
        if self.grid && self.exited.get() > 0 {
            return; // grid::sync waits for every thread of the grid
        }
        let live = self.size * self.block_size - self.exited.get();
        if self.arrived.get() == 0 || self.arrived.get() < live {
            return;
        }
        self.generation.set(self.generation.get() + 1);
        self.arrived.set(0);
        for r in 0..self.size {
            let b = self.block(r);
            // Accesses before the barrier are ordered before those after it, in
            // every CTA of the cluster.
            b.mem.borrow_mut().cluster_barrier_released();
            for t in 0..b.size {
                b.wake(t);
            }
        }
    }

    /// Thread `linear` of the CTA of rank `rank` returned: it counts as arrived
    /// from now on. An arrival it made at the current barrier without waiting is
    /// withdrawn, so that it counts once, as an exited thread.
    pub(crate) fn thread_exited(&self, rank: u32, linear: u32) {
        let me = (rank * self.block_size + linear) as usize;
        if let Some((generation, _)) = self.arrivals.borrow_mut()[me].take() {
            if generation == self.generation.get() {
                self.arrived.set(self.arrived.get() - 1);
            }
        }
        self.exited.set(self.exited.get() + 1);
        self.try_release();
    }

    /// What the cluster barrier waits for, when threads wait at it.
    pub(crate) fn describe(&self) -> Option<String> {
        let arrived = self.arrived.get();
        (arrived > 0).then(|| {
            let site = self
                .arrivals
                .borrow()
                .iter()
                .flatten()
                .map(|(_, s)| s.to_string())
                .next()
                .unwrap_or_default();
            if self.grid {
                return format!(
                    "{arrived} of the grid's {} threads arrived at grid::sync ({site}); {} returned without reaching it and the rest wait elsewhere: every thread of a cooperative launch must reach each grid::sync (CUDA's rule for grid.sync(); on the GPU a block that never arrives hangs the grid)",
                    self.size * self.block_size,
                    self.exited.get()
                );
            }
            format!(
                "{arrived} of {} live threads of the cluster of {} CTAs arrived at the cluster barrier ({site}); the others wait elsewhere",
                self.size * self.block_size - self.exited.get(),
                self.size
            )
        })
    }
}

fn fail(ctx: &ThreadCtx, message: String) -> ! {
    context::fail(EmulatorError::Cluster {
        at: context::coords(ctx),
        message,
    })
}

/// Fails a cluster function inside a cooperative launch, whose grid the emulator runs
/// as one cluster: cluster ids, ranks and barriers would describe that, not the GPU's.
fn refuse_in_cooperative(what: &str) {
    context::with(|ctx| {
        if ctx.block().launch.cooperative {
            fail(
                ctx,
                format!("{what} inside a cooperative launch: the emulator runs a cooperative grid as one cluster, so cluster functions are not emulated there"),
            )
        }
    })
}

/// `%clusterid` component `i`.
pub(crate) fn cluster_id(i: usize) -> u32 {
    refuse_in_cooperative("cluster::cluster_id");
    context::with(|c| c.block().ctaid[i] / c.block().launch.cluster[i])
}

/// `%nclusterid` component `i`.
pub(crate) fn cluster_count(i: usize) -> u32 {
    refuse_in_cooperative("cluster::cluster_count");
    context::with(|c| c.block().launch.grid[i] / c.block().launch.cluster[i])
}

/// `%cluster_ctaid` component `i`.
pub(crate) fn cta_id(i: usize) -> u32 {
    refuse_in_cooperative("cluster::cta_id");
    context::with(|c| c.block().ctaid[i] % c.block().launch.cluster[i])
}

/// `%cluster_nctaid` component `i`.
pub(crate) fn cluster_dim(i: usize) -> u32 {
    refuse_in_cooperative("cluster::cluster_dim");
    context::with(|c| c.block().launch.cluster[i])
}

/// `%cluster_ctarank`.
pub(crate) fn cta_rank() -> u32 {
    refuse_in_cooperative("cluster::cta_rank");
    context::with(|c| c.block().rank)
}

/// `%cluster_nctarank`.
pub(crate) fn cta_count() -> u32 {
    refuse_in_cooperative("cluster::cta_count");
    context::with(|c| c.block().cluster().size)
}

/// `barrier.cluster.arrive`.
pub(crate) fn arrive(site: Site) {
    refuse_in_cooperative("cluster::arrive");
    arrive_at(site)
}

/// The arrival, for `cluster::arrive` and `grid::sync`.
fn arrive_at(site: Site) {
    context::with(|ctx| {
        let block = ctx.block();
        let cluster = block.cluster();
        let me = (block.rank * cluster.block_size + ctx.linear) as usize;
        let previous = cluster.arrivals.borrow()[me];
        if let Some((_, at)) = previous {
            fail(
                ctx,
                format!("{site}: arrives at the cluster barrier again without waiting for the arrival at {at} (cluster::wait after each cluster::arrive)"),
            );
        }
        cluster.arrivals.borrow_mut()[me] = Some((cluster.generation.get(), site));
        cluster.arrived.set(cluster.arrived.get() + 1);
        cluster.try_release();
    })
}

/// `barrier.cluster.wait`.
pub(crate) fn wait(site: Site) {
    refuse_in_cooperative("cluster::wait");
    wait_at(site)
}

/// The wait, for `cluster::wait` and `grid::sync`.
fn wait_at(site: Site) {
    context::with(|ctx| {
        let block = ctx.block();
        let cluster = block.cluster();
        let me = (block.rank * cluster.block_size + ctx.linear) as usize;
        let Some((generation, _)) = cluster.arrivals.borrow()[me] else {
            fail(
                ctx,
                format!("{site}: waits at the cluster barrier without having arrived (cluster::arrive first, or cluster::sync)"),
            );
        };
        if cluster.generation.get() <= generation {
            block.wait(ctx, || cluster.generation.get() > generation);
        }
        cluster.arrivals.borrow_mut()[me] = None;
    })
}

/// `elect.sync` with the full mask: a warp collective (every live lane of the warp
/// calls it at the same site, or the emulator reports the divergence or the
/// deadlock); the lowest lane that took part is elected.
pub(crate) fn elect_one(site: Site) -> bool {
    let lanes = super::warp::collective(super::warp::WarpOp::Elect, u32::MAX, 1, 0, site) as u32;
    context::with(|ctx| lanes.trailing_zeros() == ctx.linear % 32)
}

/// `mapa.shared::cluster`: shared address `local` in the CTA of rank `rank`.
///
/// On the GPU every CTA of a kernel has the same static shared layout; the
/// emulator places a `SharedArray` when a CTA first reaches its declaration, so
/// the address of the peer's copy is found by declaration site (placing it in
/// the peer now if the peer has not reached it yet). Dynamic shared memory is at
/// the same address in every CTA.
pub(crate) fn map(local: u32, rank: u32) -> u32 {
    refuse_in_cooperative("cluster::map_shared");
    debug_assert!(local < 1 << 24, "emulator arena addresses stay below 2^24");
    let remote =
        context::with(|ctx| peer_addr(ctx.block(), local, rank).unwrap_or_else(|m| fail(ctx, m)));
    ((rank + 1) << 24) | remote
}

/// The shared address in CTA `rank` of the array (declaration site) that holds
/// `local` in `block`: every CTA has the same layout on the GPU, but the emulator
/// lays each CTA out in its own first-use order, so the peer's copy is found by site
/// (and placed now if the peer has not reached the declaration yet: on the GPU it
/// exists from launch). Dynamic shared memory and addresses outside every array map
/// to themselves. Errors: the peer has no room for the array.
pub(crate) fn peer_addr(block: &Block<'_>, local: u32, rank: u32) -> Result<u32, String> {
    if rank == block.rank {
        return Ok(local);
    }
    let Some((site, bytes, align, offset)) = block.mem.borrow().static_site_of(local) else {
        return Ok(local);
    };
    let owner = block.cluster().block(rank);
    let placed = owner.mem.borrow_mut().static_alloc(site, bytes, align);
    placed.map(|start| start + offset as u32).map_err(|_| {
        format!("maps the {bytes}-byte SharedArray declared at {site} into CTA rank {rank}, whose shared memory has no room for it")
    })
}

/// The owner's rank and shared address of a `.shared::cluster` address.
fn split(ctx: &ThreadCtx, addr: u32) -> (u32, u32) {
    let rank = addr >> 24;
    if rank == 0 || rank > ctx.block().cluster().size {
        fail(
            ctx,
            format!("the .shared::cluster address {addr:#x} was not made by SharedArray::in_cta"),
        );
    }
    (rank - 1, addr & 0x00FF_FFFF)
}

/// A checked pointer for an access of `bytes` bytes at `.shared::cluster` `addr`.
fn remote(addr: u32, bytes: usize, align: usize, access: Access) -> Result<*mut u8, u32> {
    context::with(|ctx| {
        let (rank, local) = split(ctx, addr);
        if rank == ctx.block().rank {
            return Err(local);
        }
        let owner = ctx.block().cluster().block(rank);
        if owner
            .sched
            .borrow()
            .status
            .iter()
            .all(|&s| s == Status::Done)
        {
            fail(
                ctx,
                format!("accesses shared memory of CTA rank {rank} of its cluster, which has exited (a cluster::sync before the owner's exit keeps it alive)"),
            );
        }
        let checked =
            owner
                .mem
                .borrow_mut()
                .check_remote(ctx.block().rank, local, bytes, align, access);
        match checked {
            Ok(p) => Ok(p),
            Err(detail) => fail(
                ctx,
                format!("{bytes}-byte access to shared {local:#x} of CTA rank {rank}: {detail}"),
            ),
        }
    })
}

/// `ld.shared::cluster`.
pub(crate) fn load<T: Copy>(addr: u32) -> T {
    match remote(addr, size_of::<T>(), align_of::<T>(), Access::Read) {
        // SAFETY: checked in bounds and aligned in the owner's arena, which lives
        // while the owner runs; the arena's bytes are always initialised.
        Ok(p) => unsafe { p.cast::<T>().read() },
        Err(local) => shared_mem::load::<T>(local),
    }
}

/// `st.shared::cluster`.
pub(crate) fn store<T: Copy>(addr: u32, value: T) {
    match remote(addr, size_of::<T>(), align_of::<T>(), Access::Write) {
        // SAFETY: as in `load`; the cluster's blocks share this OS thread.
        Ok(p) => unsafe { p.cast::<T>().write(value) },
        Err(local) => shared_mem::store::<T>(local, value),
    }
}

/// `atom.shared::cluster.add.u32`.
pub(crate) fn atomic_add(addr: u32, value: u32) -> u32 {
    match remote(addr, 4, 4, Access::Atomic) {
        Ok(p) => {
            // SAFETY: as in `load`.
            let old = unsafe { p.cast::<u32>().read() };
            // SAFETY: as in `store`.
            unsafe { p.cast::<u32>().write(old.wrapping_add(value)) };
            old
        }
        Err(local) => {
            let p = shared_mem::access(local, 4, 4, Access::Atomic);
            // SAFETY: checked by `access`; the block's threads share this OS thread.
            let old = unsafe { p.cast::<u32>().read() };
            // SAFETY: as above.
            unsafe { p.cast::<u32>().write(old.wrapping_add(value)) };
            old
        }
    }
}

/// `device_std::grid::sync` under the emulator: the cluster barrier of a cooperative
/// launch's grid-sized cluster; outside one, an error naming the fix.
pub(crate) fn grid_sync(site: Site) {
    let cooperative = context::with(|ctx| ctx.block().launch.cooperative);
    if !cooperative {
        context::with(|ctx| {
            fail(
                ctx,
                format!("{site}: grid::sync in a launch that is not cooperative: launch with emulator::launch_cooperative (on the GPU, LaunchAttributes::cooperative), which keeps every block resident"),
            )
        });
    }
    arrive_at(site);
    wait_at(site);
}
