//! `transpose`: `out = inᵀ` for a row-major `rows × cols` matrix of `f32`,
//! through a padded shared-memory tile so that both the global reads and the
//! global writes are coalesced.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use device_std::{kernel, thread, DisjointSlice, SharedArray};

/// Tile edge, in elements: a block transposes one `TILE × TILE` tile.
pub const TILE: usize = 32;
/// Threads per block along y; each thread moves `TILE / BLOCK_ROWS` elements.
pub const BLOCK_ROWS: usize = 8;
/// Row stride of the shared tile: one element of padding per row, so the
/// column reads of the second phase hit 32 different banks.
pub const TILE_STRIDE: usize = TILE + 1;

/// Launch: block `(TILE, BLOCK_ROWS, 1)`, grid
/// `(ceil(cols / TILE), ceil(rows / TILE), 1)`. `input` holds `rows * cols`
/// elements, `output` (`cols × rows`) as many; `out[c * rows + r] = in[r * cols + c]`.
#[kernel]
pub fn transpose(input: &[f32], mut output: DisjointSlice<f32>, rows: u32, cols: u32) {
    let tile = SharedArray::<f32, { TILE * TILE_STRIDE }>::new();
    let (rows, cols) = (rows as usize, cols as usize);
    let (tx, ty) = (
        thread::threadIdx_x() as usize,
        thread::threadIdx_y() as usize,
    );
    let (bx, by) = (
        thread::blockIdx_x() as usize * TILE,
        thread::blockIdx_y() as usize * TILE,
    );

    // Phase 1: read a tile row by row (coalesced along x).
    let mut j = 0;
    while j < TILE {
        let (r, c) = (by + ty + j, bx + tx);
        if r < rows && c < cols {
            tile.write((ty + j) * TILE_STRIDE + tx, input[r * cols + c]);
        }
        j += BLOCK_ROWS;
    }
    thread::sync_threads();

    // Phase 2: write the transposed tile, again coalesced along x.
    let mut j = 0;
    while j < TILE {
        let (r, c) = (bx + ty + j, by + tx); // in the output (cols × rows)
        let at = r * rows + c;
        if r < cols && c < rows && at < output.len() {
            // SAFETY: in bounds (checked). (block, thread, j) ↦ (r, c) is a
            // bijection onto the output tile of this block (the input tile's
            // mirror), so no two threads of the launch write element `at`.
            unsafe { *output.get_unchecked_mut(at) = tile.read(tx * TILE_STRIDE + ty + j) };
        }
        j += BLOCK_ROWS;
    }
}
