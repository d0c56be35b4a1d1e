//! Thread, block and grid coordinates, index witnesses, barriers, fences and
//! `nanosleep`.
//!
//! Names follow CUDA C++ (`threadIdx.x` is [`threadIdx_x`]); each reads one
//! PTX special register (PTX ISA 9.0 §10: `%tid`, `%ntid`, `%ctaid`,
//! `%nctaid`, `%laneid`). Values are in threads or blocks.
//!
//! On the host these functions exist so that device crates type-check;
//! calling one panics, except under the emulator (feature `emulator`),
//! where they read the emulated thread's coordinates and barriers are real.
#![allow(non_snake_case)]

use crate::host::on_device;
use crate::index::{BlockIndex1D, Index1D, Index2D, Runtime2DIndex, ThreadIndex, WarpIndex1D};
#[cfg(target_arch = "nvptx64")]
use crate::intrinsics as llvm;

macro_rules! sreg {
    ($($name:ident => $intrinsic:ident, $emu:ident($i:literal), $doc:literal;)*) => {$(
        #[doc = $doc]
        #[inline(always)]
        pub fn $name() -> u32 {
            on_device!(
                "thread::special_register",
                // SAFETY: reading a special register has no preconditions.
                { unsafe { core::arch::nvptx::$intrinsic() } },
                emulated: { crate::emulator::context::$emu($i) }
            )
        }
    )*};
}

sreg! {
    threadIdx_x => _thread_idx_x, tid(0), "`threadIdx.x`: the thread's x index in its block (`%tid.x`), `0..blockDim_x()`.";
    threadIdx_y => _thread_idx_y, tid(1), "`threadIdx.y`: the thread's y index in its block (`%tid.y`), `0..blockDim_y()`.";
    threadIdx_z => _thread_idx_z, tid(2), "`threadIdx.z`: the thread's z index in its block (`%tid.z`), `0..blockDim_z()`.";
    blockIdx_x => _block_idx_x, ctaid(0), "`blockIdx.x`: the block's x index in the grid (`%ctaid.x`), `0..gridDim_x()`.";
    blockIdx_y => _block_idx_y, ctaid(1), "`blockIdx.y`: the block's y index in the grid (`%ctaid.y`), `0..gridDim_y()`.";
    blockIdx_z => _block_idx_z, ctaid(2), "`blockIdx.z`: the block's z index in the grid (`%ctaid.z`), `0..gridDim_z()`.";
    blockDim_x => _block_dim_x, ntid(0), "`blockDim.x`: threads per block along x (`%ntid.x`).";
    blockDim_y => _block_dim_y, ntid(1), "`blockDim.y`: threads per block along y (`%ntid.y`).";
    blockDim_z => _block_dim_z, ntid(2), "`blockDim.z`: threads per block along z (`%ntid.z`).";
    gridDim_x => _grid_dim_x, nctaid(0), "`gridDim.x`: blocks per grid along x (`%nctaid.x`).";
    gridDim_y => _grid_dim_y, nctaid(1), "`gridDim.y`: blocks per grid along y (`%nctaid.y`).";
    gridDim_z => _grid_dim_z, nctaid(2), "`gridDim.z`: blocks per grid along z (`%nctaid.z`).";
}

/// The thread's lane in its warp (`%laneid`), `0..32`.
#[inline(always)]
pub fn lane_id() -> u32 {
    // SAFETY: reads a special register.
    on_device!("thread::lane_id", { unsafe { llvm::laneid() } }, emulated: {
        crate::emulator::context::lane_id()
    })
}

/// The thread's warp within its block: [`thread_in_block`]` / 32` (the CUDA
/// C++ idiom; the `%warpid` register may change during execution).
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

/// Global x coordinate: `blockIdx.x * blockDim.x + threadIdx.x`, in threads.
#[inline(always)]
pub fn global_x() -> usize {
    blockIdx_x() as usize * blockDim_x() as usize + threadIdx_x() as usize
}

/// Global y coordinate: `blockIdx.y * blockDim.y + threadIdx.y`, in threads.
#[inline(always)]
pub fn global_y() -> usize {
    blockIdx_y() as usize * blockDim_y() as usize + threadIdx_y() as usize
}

/// Global z coordinate: `blockIdx.z * blockDim.z + threadIdx.z`, in threads.
#[inline(always)]
pub fn global_z() -> usize {
    blockIdx_z() as usize * blockDim_z() as usize + threadIdx_z() as usize
}

/// The 2D row of the thread: global y, with the z planes of a 3D launch
/// stacked below each other (`global_z * grid height + global_y`), so that
/// `(row, global_x)` is unique per thread in any launch.
#[inline(always)]
fn global_row() -> usize {
    global_z() * (gridDim_y() as usize * blockDim_y() as usize) + global_y()
}

/// The calling thread's global linear index as a witness.
///
/// The index linearises the whole launch, x fastest:
/// `block_in_grid() * block_size() + thread_in_block()`. In a 1D launch this
/// is `blockIdx.x * blockDim.x + threadIdx.x`; in a 2D or 3D launch it is
/// still a bijection onto `0..total threads`, so a 1D witness never aliases
/// another thread's.
///
/// Cost: the general form reads the y and z special registers too (about 20 more
/// SASS instructions than CUDA's 1D expression). In a kernel declared
/// `#[kernel(dims = 1)]` the linker folds them to their constants, and what is left is
/// CUDA's `blockIdx.x * blockDim.x + threadIdx.x` in 64 bits.
#[inline(always)]
pub fn index_1d<'kernel>() -> ThreadIndex<'kernel, Index1D> {
    // The general form without a branch: `blockIdx.x * blockDim.x + threadIdx.x` plus the
    // terms a 1D launch makes zero. A branch on the launch shape ahead of the first load
    // cost a one-block kernel 30 ns per launch, this form half that; `grid_stride` loops
    // gain once per loop (benches/LOG.md, "One small kernel as a graph node").
    let (tx, bx, nx) = (
        threadIdx_x() as u64,
        blockIdx_x() as u64,
        blockDim_x() as u64,
    );
    let block_size = nx * blockDim_y() as u64 * blockDim_z() as u64;
    let higher_blocks =
        gridDim_x() as u64 * (blockIdx_y() as u64 + gridDim_y() as u64 * blockIdx_z() as u64);
    let higher_threads = nx * (threadIdx_y() as u64 + blockDim_y() as u64 * threadIdx_z() as u64);
    // = block_in_grid() * block_size() + thread_in_block(), block_in_grid = bx + higher_blocks.
    let linear =
        bx * nx + tx + bx * (block_size - nx) + higher_blocks * block_size + higher_threads;
    ThreadIndex::new(linear as usize, 0)
}

/// The calling thread's element of a row-major matrix with `ROW_STRIDE`
/// elements per row: column = [`global_x`], row = [`global_y`] (plus
/// `global_z * grid height` in a 3D launch).
///
/// `None` for threads whose column is `>= ROW_STRIDE`: their index would
/// alias an element of the next row. A grid rounded up past the matrix
/// width therefore needs no extra guard for the columns.
#[inline(always)]
pub fn index_2d<'kernel, const ROW_STRIDE: usize>(
) -> Option<ThreadIndex<'kernel, Index2D<ROW_STRIDE>>> {
    let col = global_x();
    if col < ROW_STRIDE {
        Some(ThreadIndex::new(
            global_row() * ROW_STRIDE + col,
            ROW_STRIDE,
        ))
    } else {
        None
    }
}

/// Like [`index_2d`], with the row stride (elements per row) given at run
/// time. `None` for threads whose column is `>= row_stride`, and when
/// `row_stride == 0`.
///
/// # Safety
/// Every thread of the launch that calls this passes the same `row_stride`
/// (a kernel parameter, say). Two different strides could map two threads
/// to one element, and two `&mut` to one element would alias.
#[inline(always)]
pub unsafe fn index_2d_runtime<'kernel>(
    row_stride: usize,
) -> Option<ThreadIndex<'kernel, Runtime2DIndex>> {
    let col = global_x();
    if col < row_stride {
        Some(ThreadIndex::new(
            global_row() * row_stride + col,
            row_stride,
        ))
    } else {
        None
    }
}

/// The block's linear index in the grid as a witness, given only to the
/// block's leader thread (`thread_in_block() == 0`); `None` on every other
/// thread. One witness per block, so per-block outputs never alias.
#[inline(always)]
pub fn block_leader_index<'kernel>() -> Option<ThreadIndex<'kernel, BlockIndex1D>> {
    if thread_in_block() == 0 {
        Some(ThreadIndex::new(block_in_grid() as usize, 0))
    } else {
        None
    }
}

/// The warp's linear index in the launch as a witness, given only to the
/// warp's first thread (`thread_in_block() % 32 == 0`); `None` on the other
/// lanes. The value is `block_in_grid() * ceil(block_size() / 32) +
/// warp_id()`: one witness per warp, so per-warp outputs never alias.
#[inline(always)]
pub fn warp_leader_index<'kernel>() -> Option<ThreadIndex<'kernel, WarpIndex1D>> {
    let t = thread_in_block();
    if t & 31 == 0 {
        let warps_per_block = block_size().div_ceil(32) as u64;
        Some(ThreadIndex::new(
            (block_in_grid() * warps_per_block + (t / 32) as u64) as usize,
            0,
        ))
    } else {
        None
    }
}

/// `__syncthreads()`: waits until every thread of the CTA reaches this
/// barrier, and makes their prior shared- and global-memory writes visible
/// to each other (`bar.sync 0`, PTX ISA 9.0 "`bar`, `barrier`").
///
/// Every thread of the block must reach the same call; calling it from
/// divergent code that not all threads reach is undefined behaviour on the
/// GPU. The intrinsic is `convergent`, so the compiler never moves it into
/// divergent code itself (device crates also build with
/// `-Zmir-enable-passes=-JumpThreading`, see TOOLCHAIN.md).
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn sync_threads() {
    // SAFETY: a CTA barrier; the caller keeps the call convergent (above).
    on_device!("thread::sync_threads", { unsafe { llvm::barrier0() } }, emulated: {
        emulated_barrier(crate::emulator::BarrierKind::Plain, false);
    })
}

/// `__syncthreads_count(pred)`: a [`sync_threads`] that also returns the
/// number of threads of the CTA for which `pred` is true
/// (`bar.red.popc.u32`, PTX ISA 9.0 "`bar`, `barrier`"). Same convergence rule.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn sync_threads_count(pred: bool) -> u32 {
    // SAFETY: as for `sync_threads`.
    on_device!("thread::sync_threads_count", {
        unsafe { llvm::barrier0_popc(pred as i32) as u32 }
    }, emulated: {
        emulated_barrier(crate::emulator::BarrierKind::Count, pred)
    })
}

/// `__syncthreads_and(pred)`: a [`sync_threads`] that returns whether `pred`
/// is true on every thread of the CTA (`bar.red.and.pred`). Same convergence rule.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn sync_threads_and(pred: bool) -> bool {
    // SAFETY: as for `sync_threads`.
    on_device!("thread::sync_threads_and", {
        unsafe { llvm::barrier0_and(pred as i32) != 0 }
    }, emulated: {
        emulated_barrier(crate::emulator::BarrierKind::And, pred) != 0
    })
}

/// `__syncthreads_or(pred)`: a [`sync_threads`] that returns whether `pred`
/// is true on any thread of the CTA (`bar.red.or.pred`). Same convergence rule.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn sync_threads_or(pred: bool) -> bool {
    // SAFETY: as for `sync_threads`.
    on_device!("thread::sync_threads_or", {
        unsafe { llvm::barrier0_or(pred as i32) != 0 }
    }, emulated: {
        emulated_barrier(crate::emulator::BarrierKind::Or, pred) != 0
    })
}

/// A barrier of `kind` at the caller's call site (emulator).
#[cfg(emulated)]
#[track_caller]
fn emulated_barrier(kind: crate::emulator::BarrierKind, pred: bool) -> u32 {
    crate::emulator::context::barrier(kind, pred, core::panic::Location::caller())
}

/// `__syncwarp(mask)`: waits until every lane in `mask` (bit `i` = lane `i`)
/// reaches it, and orders their memory accesses (`bar.warp.sync`, PTX ISA 9.0
/// "`bar.warp.sync`"). The calling lane must be in `mask`, and every lane in `mask`
/// must execute a `sync_warp` with the same mask.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn sync_warp(mask: u32) {
    // SAFETY: a warp barrier; the caller's lanes follow the rule above.
    on_device!("thread::sync_warp", {
        unsafe { llvm::bar_warp_sync(mask) }
    }, emulated: {
        crate::emulator::warp::collective(
            crate::emulator::warp::WarpOp::SyncWarp,
            mask,
            0,
            0,
            core::panic::Location::caller(),
        );
    })
}

/// `__threadfence_block()`: orders this thread's memory accesses as seen by
/// the threads of its CTA (`membar.cta` = `fence.sc.cta`, PTX ISA 9.0 "`membar`, `fence`").
#[inline(always)]
pub fn threadfence_block() {
    // SAFETY: a fence has no preconditions.
    on_device!("thread::threadfence_block", {
        unsafe { llvm::membar_cta() }
    }, emulated: {
        std::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst)
    })
}

/// `__threadfence()`: orders this thread's memory accesses as seen by every
/// thread of the GPU (`membar.gl` = `fence.sc.gpu`).
#[inline(always)]
pub fn threadfence() {
    // SAFETY: a fence has no preconditions.
    on_device!("thread::threadfence", { unsafe { llvm::membar_gl() } }, emulated: {
        std::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst)
    })
}

/// `__threadfence_system()`: orders this thread's memory accesses as seen by
/// every thread of the system, host and peer GPUs included (`membar.sys` =
/// `fence.sc.sys`).
#[inline(always)]
pub fn threadfence_system() {
    // SAFETY: a fence has no preconditions.
    on_device!("thread::threadfence_system", {
        unsafe { llvm::membar_sys() }
    }, emulated: {
        std::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst)
    })
}

/// `__nanosleep(ns)`: suspends the thread for about `ns` nanoseconds (the
/// hardware picks a delay in `[0, 2 * ns]`, at most 1 ms; PTX ISA 9.0
/// "Miscellaneous Instructions: `nanosleep`", sm_70+).
#[inline(always)]
pub fn nanosleep(ns: u32) {
    // SAFETY: a sleep has no preconditions.
    on_device!("thread::nanosleep", { unsafe { llvm::nanosleep(ns) } }, emulated: {
        crate::emulator::context::nanosleep()
    })
}
