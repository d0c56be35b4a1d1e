//! `softmax`: row-wise softmax of a row-major `rows × cols` matrix, one
//! block per row. One launch-sized `DynamicSharedArray` is split by `offset`
//! into the cached row and the block-reduction scratch.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::math::fast::expf;
use device_std::warp::{shfl_xor_sync, FULL_MASK};
use device_std::{kernel, thread, DisjointSlice, DynamicSharedArray};

/// Threads per block the kernel requires.
pub const BLOCK: u32 = 256;
/// Warps per block.
pub const WARPS: usize = BLOCK as usize / 32;

/// Dynamic shared memory a launch with `cols` columns needs, in bytes: the
/// row (`4 * cols`, rounded up to 16) then `WARPS` floats of scratch.
pub const fn shared_bytes(cols: usize) -> usize {
    scratch_offset(cols) + 4 * WARPS
}

/// Byte offset of the scratch array: after the row, aligned to 16.
pub const fn scratch_offset(cols: usize) -> usize {
    (4 * cols).next_multiple_of(16)
}

/// Reduces `v` over the block with `op`; every thread gets the result.
/// `scratch` holds `WARPS` floats. Called by every thread of the block.
#[inline(always)]
fn block_reduce(v: f32, scratch: &DynamicSharedArray<f32>, op: fn(f32, f32) -> f32) -> f32 {
    let mut v = v;
    let mut lane_mask = 16;
    while lane_mask > 0 {
        v = op(v, shfl_xor_sync(FULL_MASK, v, lane_mask));
        lane_mask /= 2;
    }
    let (warp, lane) = (thread::warp_id() as usize, thread::lane_id() as usize);
    if lane == 0 {
        scratch.write(warp, v);
    }
    thread::sync_threads();
    let mut total = scratch.read(0);
    let mut w = 1;
    while w < WARPS {
        total = op(total, scratch.read(w));
        w += 1;
    }
    // Everyone has read the scratch before anyone reuses it.
    thread::sync_threads();
    total
}

/// Launch: grid `(rows, 1, 1)`, block `(BLOCK, 1, 1)` (others trap),
/// `shared_mem_bytes = shared_bytes(cols)`. `input` and `output` hold
/// `rows * cols` elements; `out[r, c] = exp(in[r, c] - max_r) / Σ_c exp(...)`.
#[kernel]
pub fn softmax(input: &[f32], mut output: DisjointSlice<f32>, cols: u32) {
    assert!(thread::blockDim_x() == BLOCK);
    let cols = cols as usize;
    let row_vals = DynamicSharedArray::<f32>::get();
    let scratch = DynamicSharedArray::<f32>::offset(scratch_offset(cols));
    assert!(row_vals.len() >= cols && scratch.len() >= WARPS);

    let row = thread::blockIdx_x() as usize * cols;
    let tid = thread::threadIdx_x() as usize;
    let mut local_max = f32::NEG_INFINITY;
    let mut c = tid;
    while c < cols {
        let x = input[row + c];
        row_vals.write(c, x);
        local_max = local_max.max(x);
        c += BLOCK as usize;
    }
    let max = block_reduce(local_max, &scratch, f32::max);

    let mut local_sum = 0.0f32;
    let mut c = tid;
    while c < cols {
        let e = expf(row_vals.read(c) - max);
        row_vals.write(c, e); // each thread rewrites only its own columns
        local_sum += e;
        c += BLOCK as usize;
    }
    let sum = block_reduce(local_sum, &scratch, |a, b| a + b);

    let inv = 1.0 / sum;
    let mut c = tid;
    while c < cols {
        let at = row + c;
        if at < output.len() {
            // SAFETY: in bounds (checked); block `b` writes only row `b`,
            // thread `t` only the columns `t + k * BLOCK`, so no element is
            // written twice.
            unsafe { *output.get_unchecked_mut(at) = row_vals.read(c) * inv };
        }
        c += BLOCK as usize;
    }
}
