//! Thread-block clusters (sm_90): the CTAs of a cluster run at once on one GPC,
//! synchronise with each other, and read and write each other's shared memory
//! (distributed shared memory). A launch sets the cluster shape with
//! `host_loader::LaunchAttributes::cluster_dim`; without it every CTA is a
//! cluster of one, and everything here still works.
//!
//! | here | PTX (PTX ISA 9.0) | CUDA C++ (cooperative groups) |
//! |---|---|---|
//! | [`cluster_id`], [`cluster_count`] | `%clusterid`, `%nclusterid` (§10 "Special Registers") | `cluster.block_index()`'s grid-level peers |
//! | [`cta_id`], [`cluster_dim`] | `%cluster_ctaid`, `%cluster_nctaid` | `cluster.block_index()`, `cluster.dim_blocks()` |
//! | [`cta_rank`], [`cta_count`] | `%cluster_ctarank`, `%cluster_nctarank` | `cluster.block_rank()`, `cluster.num_blocks()` |
//! | [`arrive`], [`wait`], [`sync`] | `barrier.cluster.arrive`, `barrier.cluster.wait` (§9.7.13.3) | `cluster.sync()` |
//! | [`SharedArray::in_cta`] | `mapa.shared::cluster.u32` (§9.7.9.22) | `cluster.map_shared_rank()` |
//! | [`ClusterSharedArray`] | `ld/st.shared::cluster`, `atom.shared::cluster.add` | |
//! | [`elect_one`] | `elect.sync` (§9.7.13.11, PTX 8.0) | `cg::invoke_one` |
//!
//! Rules the GPU does not check and the emulator does: every thread of every
//! CTA of the cluster (that has not exited) arrives at each cluster barrier
//! before any waits past it; a thread arrives once per barrier and waits
//! after arriving; a CTA reads another's shared memory only while that CTA
//! still runs, which a [`sync`] before the reading CTA's last access to it and
//! before the owner exits guarantees.
//!
//! Under the emulator, launches take a cluster shape
//! (`LaunchConfig::with_cluster`); the CTAs of a cluster run on one OS thread,
//! switching at barriers, so cluster barriers and distributed shared memory
//! behave as on the GPU. Accesses to another CTA's shared memory are checked
//! for bounds and alignment, not for races.

use crate::host::on_device;
use crate::shared::SharedArray;
use core::marker::PhantomData;

macro_rules! cluster_register {
    ($(#[$doc:meta])* $name:ident, $reg:literal, $emu:expr) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> u32 {
            on_device!("a cluster special register", {
                let v: u32;
                // SAFETY: reads a special register that is constant for the CTA.
                unsafe {
                    core::arch::asm!(concat!("mov.u32 {v}, ", $reg, ";"), v = out(reg32) v,
                        options(pure, nomem, nostack, preserves_flags));
                }
                v
            }, emulated: { $emu })
        }
    };
}

/// One component (0 = x, 1 = y, 2 = z) of a register triple, read by `f`.
macro_rules! triple {
    ($x:ident, $y:ident, $z:ident) => {
        [$x(), $y(), $z()]
    };
}

cluster_register!(
    /// `%clusterid.x`: the cluster's x index in the grid, in clusters.
    cluster_id_x, "%clusterid.x", crate::emulator::cluster::cluster_id(0));
cluster_register!(
    /// `%clusterid.y`.
    cluster_id_y, "%clusterid.y", crate::emulator::cluster::cluster_id(1));
cluster_register!(
    /// `%clusterid.z`.
    cluster_id_z, "%clusterid.z", crate::emulator::cluster::cluster_id(2));
cluster_register!(
    /// `%nclusterid.x`: clusters in the grid along x.
    cluster_count_x, "%nclusterid.x", crate::emulator::cluster::cluster_count(0));
cluster_register!(
    /// `%nclusterid.y`.
    cluster_count_y, "%nclusterid.y", crate::emulator::cluster::cluster_count(1));
cluster_register!(
    /// `%nclusterid.z`.
    cluster_count_z, "%nclusterid.z", crate::emulator::cluster::cluster_count(2));
cluster_register!(
    /// `%cluster_ctaid.x`: this CTA's x index within its cluster.
    cta_id_x, "%cluster_ctaid.x", crate::emulator::cluster::cta_id(0));
cluster_register!(
    /// `%cluster_ctaid.y`.
    cta_id_y, "%cluster_ctaid.y", crate::emulator::cluster::cta_id(1));
cluster_register!(
    /// `%cluster_ctaid.z`.
    cta_id_z, "%cluster_ctaid.z", crate::emulator::cluster::cta_id(2));
cluster_register!(
    /// `%cluster_nctaid.x`: CTAs per cluster along x (the launch's cluster shape).
    cluster_dim_x, "%cluster_nctaid.x", crate::emulator::cluster::cluster_dim(0));
cluster_register!(
    /// `%cluster_nctaid.y`.
    cluster_dim_y, "%cluster_nctaid.y", crate::emulator::cluster::cluster_dim(1));
cluster_register!(
    /// `%cluster_nctaid.z`.
    cluster_dim_z, "%cluster_nctaid.z", crate::emulator::cluster::cluster_dim(2));
cluster_register!(
    /// `%cluster_ctarank`: this CTA's linear rank in its cluster, `0..cta_count()`
    /// (x fastest).
    cta_rank, "%cluster_ctarank", crate::emulator::cluster::cta_rank());
cluster_register!(
    /// `%cluster_nctarank`: CTAs in the cluster.
    cta_count, "%cluster_nctarank", crate::emulator::cluster::cta_count());

/// `[x, y, z]` of [`cluster_id_x`] and its peers.
#[inline(always)]
pub fn cluster_id() -> [u32; 3] {
    triple!(cluster_id_x, cluster_id_y, cluster_id_z)
}

/// `[x, y, z]` of [`cluster_count_x`] and its peers.
#[inline(always)]
pub fn cluster_count() -> [u32; 3] {
    triple!(cluster_count_x, cluster_count_y, cluster_count_z)
}

/// `[x, y, z]` of [`cta_id_x`] and its peers.
#[inline(always)]
pub fn cta_id() -> [u32; 3] {
    triple!(cta_id_x, cta_id_y, cta_id_z)
}

/// `[x, y, z]` of [`cluster_dim_x`] and its peers.
#[inline(always)]
pub fn cluster_dim() -> [u32; 3] {
    triple!(cluster_dim_x, cluster_dim_y, cluster_dim_z)
}

/// `barrier.cluster.arrive` (release): this thread has arrived at the cluster
/// barrier; its earlier writes, shared memory of any CTA of the cluster
/// included, are visible to threads that [`wait`] past this barrier.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn arrive() {
    on_device!("cluster::arrive", {
        // SAFETY: a barrier arrival; no operands.
        unsafe { core::arch::asm!("barrier.cluster.arrive;", options(nostack, preserves_flags)) }
    }, emulated: {
        crate::emulator::cluster::arrive(core::panic::Location::caller())
    })
}

/// `barrier.cluster.wait` (acquire): waits until every (non-exited) thread of
/// every CTA of the cluster has [`arrive`]d at the barrier this thread arrived at.
/// Call it once after each `arrive`.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn wait() {
    on_device!("cluster::wait", {
        // SAFETY: waits; not `nomem`, so memory accesses stay on their side.
        unsafe { core::arch::asm!("barrier.cluster.wait;", options(nostack, preserves_flags)) }
    }, emulated: {
        crate::emulator::cluster::wait(core::panic::Location::caller())
    })
}

/// [`arrive`] then [`wait`]: a barrier over every thread of the cluster
/// (`cluster.sync()` in CUDA C++). Every thread of every CTA must reach it.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn sync() {
    arrive();
    wait();
}

/// `elect.sync` over the full warp: `true` in exactly one active lane of the
/// calling warp (the same lane for all), `false` in the others. Every lane of
/// the warp must call it together. sm_90, PTX ISA 8.0.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn elect_one() -> bool {
    on_device!("cluster::elect_one", {
        let elected: u32;
        // SAFETY: a warp-collective with the full mask; no memory.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred %p; .reg .b32 %lane; elect.sync %lane|%p, 0xffffffff; selp.u32 {e}, 1, 0, %p; }}",
                e = out(reg32) elected,
                options(nostack, preserves_flags),
            );
        }
        elected != 0
    }, emulated: {
        crate::emulator::cluster::elect_one(core::panic::Location::caller())
    })
}

/// A [`SharedArray`] of another CTA of the cluster (or this one), addressed in
/// the `.shared::cluster` window; made by [`SharedArray::in_cta`]. Elements of 4
/// or 8 bytes (a compile error otherwise). Reads and writes are
/// `ld/st.shared::cluster`: order them with the cluster barrier ([`sync`]),
/// and access a CTA's memory only while it runs.
#[derive(Debug)]
pub struct ClusterSharedArray<T, const N: usize> {
    /// `.shared::cluster` address of element 0.
    addr: u32,
    _not_send_sync: PhantomData<*mut T>,
}

impl<T: Copy, const N: usize, const ALIGN: usize> SharedArray<T, N, ALIGN> {
    /// The same array in the CTA of rank `rank` of this cluster
    /// (`mapa.shared::cluster.u32`): each CTA that declared it at this site has its
    /// own copy. Panics (traps) when `rank >= cta_count()`. sm_90.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn in_cta(&self, rank: u32) -> ClusterSharedArray<T, N> {
        const {
            let size = core::mem::size_of::<T>();
            assert!(
                size == 4 || size == 8,
                "ClusterSharedArray: elements of 4 or 8 bytes"
            );
        }
        assert!(
            rank < cta_count(),
            "SharedArray::in_cta: rank past the cluster"
        );
        let local = self.ptr(0).addr();
        let addr: u32 = on_device!("SharedArray::in_cta", {
            let a: u32;
            // SAFETY: address arithmetic in the cluster window; rank checked above.
            unsafe {
                core::arch::asm!("mapa.shared::cluster.u32 {a}, {l}, {r};",
                    a = out(reg32) a, l = in(reg32) local, r = in(reg32) rank,
                    options(pure, nomem, nostack, preserves_flags));
            }
            a
        }, emulated: {
            crate::emulator::cluster::map(local, rank)
        });
        ClusterSharedArray {
            addr,
            _not_send_sync: PhantomData,
        }
    }
}

impl<T: Copy, const N: usize> ClusterSharedArray<T, N> {
    /// Reads element `i` (`ld.shared::cluster`). Panics (traps) when `i >= N`.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn read(&self, i: usize) -> T {
        assert!(i < N, "ClusterSharedArray index out of bounds");
        let a = self.addr + (i * core::mem::size_of::<T>()) as u32;
        on_device!("ClusterSharedArray::read", {
            // SAFETY: in bounds of the mapped array; T is 4 or 8 bytes (checked when
            // the array was mapped) and every bit pattern read came from a T.
            unsafe {
                if core::mem::size_of::<T>() == 4 {
                    let v: u32;
                    core::arch::asm!("ld.shared::cluster.b32 {v}, [{a}];", v = out(reg32) v, a = in(reg32) a, options(nostack, readonly, preserves_flags));
                    core::mem::transmute_copy(&v)
                } else {
                    let v: u64;
                    core::arch::asm!("ld.shared::cluster.b64 {v}, [{a}];", v = out(reg64) v, a = in(reg32) a, options(nostack, readonly, preserves_flags));
                    core::mem::transmute_copy(&v)
                }
            }
        }, emulated: {
            crate::emulator::cluster::load::<T>(a)
        })
    }

    /// Writes element `i` (`st.shared::cluster`). Panics (traps) when `i >= N`.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn write(&self, i: usize, value: T) {
        assert!(i < N, "ClusterSharedArray index out of bounds");
        let a = self.addr + (i * core::mem::size_of::<T>()) as u32;
        on_device!("ClusterSharedArray::write", {
            // SAFETY: in bounds of the mapped array; T is 4 or 8 bytes.
            unsafe {
                if core::mem::size_of::<T>() == 4 {
                    let v: u32 = core::mem::transmute_copy(&value);
                    core::arch::asm!("st.shared::cluster.b32 [{a}], {v};", v = in(reg32) v, a = in(reg32) a, options(nostack, preserves_flags));
                } else {
                    let v: u64 = core::mem::transmute_copy(&value);
                    core::arch::asm!("st.shared::cluster.b64 [{a}], {v};", v = in(reg64) v, a = in(reg32) a, options(nostack, preserves_flags));
                }
            }
        }, emulated: {
            crate::emulator::cluster::store::<T>(a, value)
        })
    }
}

impl<const N: usize> ClusterSharedArray<u32, N> {
    /// `atom.shared::cluster.add.u32` (relaxed, GPU scope) on element `i`; returns
    /// the old value. Panics (traps) when `i >= N`.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn atomic_add(&self, i: usize, value: u32) -> u32 {
        assert!(i < N, "ClusterSharedArray index out of bounds");
        let a = self.addr + (i * 4) as u32;
        on_device!("ClusterSharedArray::atomic_add", {
            let old: u32;
            // SAFETY: in bounds of the mapped array of u32.
            unsafe {
                core::arch::asm!("atom.shared::cluster.add.u32 {o}, [{a}], {v};",
                    o = out(reg32) old, a = in(reg32) a, v = in(reg32) value,
                    options(nostack, preserves_flags));
            }
            old
        }, emulated: {
            crate::emulator::cluster::atomic_add(a, value)
        })
    }
}
