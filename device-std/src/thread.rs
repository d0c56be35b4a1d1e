//! Thread, block and grid coordinates, and CTA barriers.
//!
//! Names follow CUDA C++ (`threadIdx.x` is [`threadIdx_x`]); each reads one
//! PTX special register (PTX ISA 9.0 §10: `%tid`, `%ntid`, `%ctaid`,
//! `%nctaid`, `%laneid`, `%warpid`). All values are in threads or blocks.
#![allow(non_snake_case)]

use crate::index::{BlockIndex1D, Index1D, ThreadIndex};
use core::arch::nvptx;

macro_rules! sreg {
    ($($name:ident => $intrinsic:ident, $doc:literal;)*) => {$(
        #[doc = $doc]
        #[inline(always)]
        pub fn $name() -> u32 {
            // SAFETY: reading a special register has no preconditions.
            unsafe { nvptx::$intrinsic() }
        }
    )*};
}

sreg! {
    threadIdx_x => _thread_idx_x, "`threadIdx.x`: the thread's x index in its block (`%tid.x`), `0..blockDim_x()`.";
    threadIdx_y => _thread_idx_y, "`threadIdx.y`: the thread's y index in its block (`%tid.y`), `0..blockDim_y()`.";
    threadIdx_z => _thread_idx_z, "`threadIdx.z`: the thread's z index in its block (`%tid.z`), `0..blockDim_z()`.";
    blockIdx_x => _block_idx_x, "`blockIdx.x`: the block's x index in the grid (`%ctaid.x`), `0..gridDim_x()`.";
    blockIdx_y => _block_idx_y, "`blockIdx.y`: the block's y index in the grid (`%ctaid.y`), `0..gridDim_y()`.";
    blockIdx_z => _block_idx_z, "`blockIdx.z`: the block's z index in the grid (`%ctaid.z`), `0..gridDim_z()`.";
    blockDim_x => _block_dim_x, "`blockDim.x`: threads per block along x (`%ntid.x`).";
    blockDim_y => _block_dim_y, "`blockDim.y`: threads per block along y (`%ntid.y`).";
    blockDim_z => _block_dim_z, "`blockDim.z`: threads per block along z (`%ntid.z`).";
    gridDim_x => _grid_dim_x, "`gridDim.x`: blocks per grid along x (`%nctaid.x`).";
    gridDim_y => _grid_dim_y, "`gridDim.y`: blocks per grid along y (`%nctaid.y`).";
    gridDim_z => _grid_dim_z, "`gridDim.z`: blocks per grid along z (`%nctaid.z`).";
}

/// The thread's lane in its warp (`%laneid`), `0..32`.
#[inline(always)]
pub fn lane_id() -> u32 {
    let lane: u32;
    // SAFETY: reads a special register; touches no memory.
    unsafe {
        core::arch::asm!("mov.u32 {0}, %laneid;", out(reg32) lane, options(nomem, nostack, pure))
    };
    lane
}

/// The thread's warp within its block, computed as the linear thread index
/// in the block divided by 32 (the CUDA C++ idiom; `%warpid` itself is
/// volatile and may change during execution).
#[inline(always)]
pub fn warp_id() -> u32 {
    thread_in_block() / 32
}

/// Linear index of the thread inside its block, x fastest:
/// `(threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x`.
#[inline(always)]
pub fn thread_in_block() -> u32 {
    (threadIdx_z() * blockDim_y() + threadIdx_y()) * blockDim_x() + threadIdx_x()
}

/// Threads per block: `blockDim.x * blockDim.y * blockDim.z`.
#[inline(always)]
pub fn block_size() -> u32 {
    blockDim_x() * blockDim_y() * blockDim_z()
}

/// Linear index of the block inside the grid, x fastest.
#[inline(always)]
pub fn block_in_grid() -> u64 {
    (blockIdx_z() as u64 * gridDim_y() as u64 + blockIdx_y() as u64) * gridDim_x() as u64
        + blockIdx_x() as u64
}

/// The calling thread's global linear index as a witness.
///
/// The index linearises the whole launch, x fastest:
/// `block_in_grid() * block_size() + thread_in_block()`. In a 1D launch this
/// is `blockIdx.x * blockDim.x + threadIdx.x`; in a 2D or 3D launch it is
/// still unique per thread, so a 1D witness never aliases another thread's.
#[inline(always)]
pub fn index_1d<'kernel>() -> ThreadIndex<'kernel, Index1D> {
    let linear = block_in_grid() * block_size() as u64 + thread_in_block() as u64;
    ThreadIndex::new(linear as usize)
}

/// The block's linear index in the grid as a witness, given only to the
/// block's leader thread (`threadIdx == (0, 0, 0)`); `None` on every other
/// thread. One witness per block, so per-block outputs never alias.
#[inline(always)]
pub fn block_leader_index<'kernel>() -> Option<ThreadIndex<'kernel, BlockIndex1D>> {
    if thread_in_block() == 0 {
        Some(ThreadIndex::new(block_in_grid() as usize))
    } else {
        None
    }
}

/// `__syncthreads()`: waits until every thread of the CTA reaches this
/// barrier, and makes their prior shared- and global-memory writes visible to
/// each other (`bar.sync 0`, PTX ISA 9.0 §9.7.13.1).
///
/// Every thread of the block must reach the same call; calling it from
/// divergent code that not all threads reach is undefined behaviour on the GPU.
#[inline(always)]
pub fn sync_threads() {
    // SAFETY: `llvm.nvvm.barrier0` is convergent; LLVM keeps it out of
    // divergent code it creates itself. Callers keep the source convergent.
    #[allow(deprecated)]
    unsafe {
        nvptx::_syncthreads()
    }
}
