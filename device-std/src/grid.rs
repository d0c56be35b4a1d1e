//! Grid-wide synchronization for cooperative launches: [`sync`], CUDA's
//! `cooperative_groups::this_grid().sync()`.
//!
//! A cooperative launch (`host_loader::LaunchAttributes::cooperative`,
//! `cuLaunchCooperativeKernel`; under the emulator `emulator::launch_cooperative`)
//! keeps every block of the grid resident at once, which the host checks against the
//! kernel's occupancy before launching. Only then can one block wait for all others.
//!
//! The barrier is a counter in the module (`__DEVICE_STD_GRID_BARRIER`, a
//! [`global!`](crate::global) `u32`): thread 0 of each block adds 1, block 0 adds
//! `2^31 − (blocks − 1)`, so the top bit flips exactly when every block has arrived,
//! and each waits for that flip. The counter needs no reset between launches. One
//! cooperative launch per module at a time: two running at once (two streams) share
//! the counter.
//!
//! Source: CUDA C++ Programming Guide, "Grid Synchronization" (cooperative groups);
//! PTX ISA 9.0 `atom`, `ld.acquire`, `fence`.

crate::global! {
    /// The grid barrier's counter ([`sync`]).
    static __DEVICE_STD_GRID_BARRIER: u32;
}

/// Waits until every thread of the grid has reached this call, and makes the memory
/// writes of all of them visible to all (`grid.sync()`). Every thread of the grid must
/// call it, as with [`sync_threads`](crate::thread::sync_threads) within a block.
///
/// Only in a cooperative launch: otherwise blocks that are not resident can never
/// arrive and the grid hangs on the GPU; the emulator reports the misuse. Minimum
/// `sm_XX`: sm_70 (the `.acquire`/`.release` atomics).
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn sync() {
    crate::host::on_device!("grid::sync", {
        use crate::thread;
        thread::sync_threads();
        let first_thread = thread::threadIdx_x() == 0 && thread::threadIdx_y() == 0 && thread::threadIdx_z() == 0;
        if first_thread {
            let blocks = thread::gridDim_x() * thread::gridDim_y() * thread::gridDim_z();
            let first_block = thread::blockIdx_x() == 0 && thread::blockIdx_y() == 0 && thread::blockIdx_z() == 0;
            let add = if first_block { 0x8000_0000u32.wrapping_sub(blocks - 1) } else { 1 };
            let counter = __DEVICE_STD_GRID_BARRIER.ptr() as u64;
            let old: u32;
            // SAFETY: an atomic add on the module's counter; release: this block's
            // writes are visible before its arrival.
            unsafe {
                core::arch::asm!("atom.add.release.gpu.u32 {o}, [{c}], {a};",
                    o = out(reg32) old, c = in(reg64) counter, a = in(reg32) add,
                    options(nostack));
            }
            loop {
                let now: u32;
                // SAFETY: an acquire load of the counter: the other blocks' writes are
                // visible once their arrivals are. Not `pure`: each read must happen.
                unsafe {
                    core::arch::asm!("ld.acquire.gpu.u32 {n}, [{c}];",
                        n = out(reg32) now, c = in(reg64) counter, options(nostack));
                }
                if (old ^ now) & 0x8000_0000 != 0 {
                    break;
                }
            }
        }
        thread::sync_threads();
    }, emulated: {
        crate::emulator::cluster::grid_sync(core::panic::Location::caller());
    })
}
