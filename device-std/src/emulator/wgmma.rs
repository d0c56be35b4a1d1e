//! `wgmma.mma_async` under the emulator: each thread computes its own accumulator
//! elements from the shared memory its descriptors name, at the call (the tiles must
//! be complete then: reading bytes a tensor copy has not landed is the usual
//! `AsyncCopy` error), and the operands' bytes stay held, as the tensor cores read them
//! until then, until the issuing thread's `wait` retires the group: any write to them
//! before that is an `AsyncCopy` error. Descriptors the library does not make (no swizzle, an odd
//! stride) are a `TensorCore` error, never a guess.

use super::context;
use super::shared_mem;
use super::EmulatorError;
use crate::mma::MmaInput;
use crate::wgmma::WgmmaInput;
use std::format;
use std::string::String;

/// What a descriptor says: start address, bytes between 8-row groups, swizzle bytes.
struct Operand {
    start: u32,
    stride: u32,
    swizzle: u32,
}

#[track_caller]
fn fail(message: String) -> ! {
    let at = context::with(context::coords);
    context::fail(EmulatorError::TensorCore { at, message })
}

/// A descriptor's fields (PTX ISA §9.7.15.5.1), the offsets in bytes.
struct Fields {
    start: u32,
    leading: u32,
    stride: u32,
    /// Swizzle bytes (128, 64, 32), `None` for no swizzle.
    swizzle: Option<u32>,
    base_offset: u64,
}

fn fields(bits: u64) -> Fields {
    Fields {
        start: ((bits & 0x3FFF) << 4) as u32,
        leading: (((bits >> 16) & 0x3FFF) << 4) as u32,
        stride: (((bits >> 32) & 0x3FFF) << 4) as u32,
        swizzle: match bits >> 62 {
            1 => Some(128),
            2 => Some(64),
            3 => Some(32),
            _ => None,
        },
        base_offset: (bits >> 49) & 7,
    }
}

/// Decodes `bits` (PTX ISA §9.7.15.5.1), accepting the K-major swizzled layouts
/// `wgmma::KMajorTile` describes.
#[track_caller]
fn decode(bits: u64, which: &str) -> Operand {
    let Fields {
        start,
        stride,
        swizzle,
        base_offset,
        ..
    } = fields(bits);
    let Some(swizzle) = swizzle else {
        fail(format!(
            "wgmma: the {which} descriptor {bits:#018x} has no swizzle; the emulator models \
             the swizzled K-major tiles of wgmma::KMajorTile only"
        ))
    };
    if stride != 8 * swizzle || base_offset != 0 {
        fail(format!(
            "wgmma: the {which} descriptor {bits:#018x} has a stride of {stride} bytes (or a \
             base offset); a {swizzle}-byte swizzled K-major tile has {}",
            8 * swizzle
        ));
    }
    Operand {
        start,
        stride,
        swizzle,
    }
}

impl Operand {
    /// The shared bytes of the operand's `rows` rows (whole swizzle rows).
    fn range(&self, rows: usize) -> (usize, usize) {
        let base = (self.start - self.start % self.swizzle) as usize;
        (base, base + rows / 8 * self.stride as usize)
    }

    /// Holds the operand's bytes for the calling thread's current `wgmma` group.
    #[track_caller]
    fn hold(&self, rows: usize) {
        let site = core::panic::Location::caller();
        let (start, end) = self.range(rows);
        context::with(|ctx| {
            ctx.block()
                .mem
                .borrow_mut()
                .wgmma_issue(ctx.linear, start, end, site)
        });
    }

    /// Element `(row, k)` of the operand, read through the swizzle.
    #[track_caller]
    fn get<T: WgmmaInput>(&self, row: usize, k: usize) -> f32 {
        let linear = self.start as usize
            + (row / 8) * self.stride as usize
            + (row % 8) * self.swizzle as usize
            + k * core::mem::size_of::<T>();
        let addr = swizzle(linear as u32, self.swizzle);
        if core::mem::size_of::<T>() == 1 {
            T::bits_to_f32(shared_mem::load_operand::<u8>(addr).into())
        } else {
            T::bits_to_f32(shared_mem::load_operand::<u16>(addr))
        }
    }
}

/// What an MN-major `B` descriptor says (`wgmma::MnMajorTile`): start address, bytes
/// from one box of columns to the next (the leading byte offset), swizzle bytes.
struct MnOperand {
    start: u32,
    lbo: u32,
    swizzle: u32,
}

/// Decodes an MN-major `bits`, accepting the layouts `wgmma::MnMajorTile` describes: a
/// swizzle, 8 rows of `K` per swizzle atom (stride byte offset `8 * swizzle`), no base
/// offset.
#[track_caller]
fn decode_mn(bits: u64) -> MnOperand {
    let Fields {
        start,
        leading: lbo,
        stride: sbo,
        swizzle,
        base_offset,
    } = fields(bits);
    let Some(swizzle) = swizzle else {
        fail(format!(
            "wgmma: the MN-major B descriptor {bits:#018x} has no swizzle; the emulator models \
             the swizzled tiles of wgmma::MnMajorTile only"
        ))
    };
    if sbo != 8 * swizzle || base_offset != 0 || lbo == 0 {
        fail(format!(
            "wgmma: the MN-major B descriptor {bits:#018x} has a stride byte offset of {sbo} \
             (or a base offset, or no leading byte offset); a {swizzle}-byte swizzled \
             MN-major tile has {}",
            8 * swizzle
        ));
    }
    MnOperand {
        start,
        lbo,
        swizzle,
    }
}

impl MnOperand {
    /// Elements of `N` per box (one swizzle span).
    fn width<T>(&self) -> usize {
        self.swizzle as usize / core::mem::size_of::<T>()
    }

    /// Holds the 16 rows of `K` of each of the boxes `n` columns span.
    #[track_caller]
    fn hold<T>(&self, n: usize) {
        let site = core::panic::Location::caller();
        for b in 0..n.div_ceil(self.width::<T>()) {
            let start = (self.start + b as u32 * self.lbo) as usize;
            let end = start + 16 * self.swizzle as usize;
            context::with(|ctx| {
                ctx.block()
                    .mem
                    .borrow_mut()
                    .wgmma_issue(ctx.linear, start, end, site)
            });
        }
    }

    /// Element `(k, col)` of the `K` × `N` operand, read through the swizzle.
    #[track_caller]
    fn get<T: WgmmaInput>(&self, k: usize, col: usize) -> f32 {
        let w = self.width::<T>();
        let linear = self.start as usize
            + (col / w) * self.lbo as usize
            + k * self.swizzle as usize
            + (col % w) * core::mem::size_of::<T>();
        T::bits_to_f32(shared_mem::load_operand::<u16>(swizzle(
            linear as u32,
            self.swizzle,
        )))
    }
}

/// Where the swizzle of `bytes` (32, 64, 128) puts linear shared address `a`: the
/// 16-byte chunk within each 128-byte line XORed with the line's index, over
/// `log2(bytes / 16)` bits (what the tensor copies write).
pub(crate) fn swizzle(a: u32, bytes: u32) -> u32 {
    let mask = bytes / 16 - 1;
    a ^ (((a >> 7) & mask) << 4)
}

/// The calling thread's warpgroup check: all 128 threads of it exist.
#[track_caller]
fn check_warpgroup() -> u32 {
    let size = crate::thread::block_size();
    let t = crate::thread::thread_in_block();
    if (t / 128 + 1) * 128 > size {
        fail(format!(
            "wgmma: thread {t} is in warpgroup {} of a {size}-thread block, which is not a \
             whole warpgroup (128 threads); wgmma needs all four warps",
            t / 128
        ));
    }
    t % 128
}

/// The most elements of `K` one instruction takes (FP8's 32).
const MAX_K: usize = 32;

/// `regs = A · B (+ regs)` for this thread's elements, `a_rows` its two rows of `A`
/// (rows `r0` and `r0 + 8`, the first `T::K_STEP` elements of each) and `b` the
/// descriptor of `B`.
#[track_caller]
fn multiply<T: WgmmaInput>(
    regs: &mut [f32],
    n: usize,
    t: u32,
    a_rows: &[[f32; MAX_K]; 2],
    b: u64,
    accumulate: bool,
) {
    let b = decode(b, "B");
    b.hold(n);
    multiply_with::<T>(regs, n, t, a_rows, |c, k| b.get::<T>(c, k), accumulate);
}

/// [`multiply`] with `B`'s element `(column c, k)` from `b_get`.
#[track_caller]
fn multiply_with<T: WgmmaInput>(
    regs: &mut [f32],
    n: usize,
    t: u32,
    a_rows: &[[f32; MAX_K]; 2],
    b_get: impl Fn(usize, usize) -> f32,
    accumulate: bool,
) {
    let coords = crate::wgmma::Accum128::coords;
    let (r0, _) = coords(t, 0);
    // Every `i % 4` pattern of columns repeats each 8 columns: n / 4 rows of B.
    let k_step = T::K_STEP;
    let b_rows: std::vec::Vec<[f32; MAX_K]> = (0..n / 4)
        .map(|q| {
            let (_, c) = coords(t, 4 * (q / 2) + q % 2);
            core::array::from_fn(|k| if k < k_step { b_get(c, k) } else { 0.0 })
        })
        .collect();
    for (i, reg) in regs.iter_mut().enumerate() {
        let (r, c) = coords(t, i);
        debug_assert!(c < n && (r == r0 || r == r0 + 8));
        let (ar, br) = (&a_rows[(r - r0) / 8], &b_rows[2 * (i / 4) + i % 2]);
        let mut sum = if accumulate { *reg } else { 0.0 };
        for k in 0..k_step {
            sum += ar[k] * br[k];
        }
        *reg = sum;
    }
}

/// `Accum::mma_async`: `regs` (this thread's part of the 64 × `n` accumulator) =
/// `A · B (+ regs)`, `A` 64 × `K_STEP` and `B` `n` × `K_STEP` from the descriptors. The
/// thread reads only the two rows of `A` and the `n / 4` rows of `B` its elements need.
#[track_caller]
pub(crate) fn mma_async<T: WgmmaInput>(
    regs: &mut [f32],
    n: usize,
    a: u64,
    b: u64,
    accumulate: bool,
) {
    let t = check_warpgroup();
    let a = decode(a, "A");
    a.hold(64);
    let (r0, _) = crate::wgmma::Accum128::coords(t, 0);
    let a_rows: [[f32; MAX_K]; 2] = core::array::from_fn(|h| {
        core::array::from_fn(|k| {
            if k < T::K_STEP {
                a.get::<T>(r0 + 8 * h, k)
            } else {
                0.0
            }
        })
    });
    multiply::<T>(regs, n, t, &a_rows, b, accumulate);
}

/// `Accum::mma_async_reg_a`: as [`mma_async`], `A`'s rows gathered from the warp's
/// fragments with shuffles (the lanes of a quad hold a row between them).
#[track_caller]
pub(crate) fn mma_async_reg_a<T: WgmmaInput + MmaInput>(
    regs: &mut [f32],
    n: usize,
    a: &crate::mma::FragA<T>,
    b: u64,
    accumulate: bool,
) {
    let t = check_warpgroup();
    let a_rows = gather_a_rows(t, a);
    multiply::<T>(regs, n, t, &a_rows, b, accumulate);
}

/// `Accum::mma_async_reg_a_mn`: as [`mma_async_reg_a`], `B` MN-major
/// (`wgmma::MnMajorTile`): element `(k, column)` of a row-major `K` × `N` operand.
#[track_caller]
pub(crate) fn mma_async_reg_a_mn<T: WgmmaInput + MmaInput>(
    regs: &mut [f32],
    n: usize,
    a: &crate::mma::FragA<T>,
    b: u64,
    accumulate: bool,
) {
    let t = check_warpgroup();
    let a_rows = gather_a_rows(t, a);
    let b = decode_mn(b);
    b.hold::<T>(n);
    multiply_with::<T>(regs, n, t, &a_rows, |c, k| b.get::<T>(k, c), accumulate);
}

/// Rows `r0` and `r0 + 8` of the warp's 16 × 16 `A` that thread `t` of the warpgroup
/// needs, gathered from the warp's fragments with shuffles (the lanes of a quad hold a
/// row between them).
fn gather_a_rows<T: WgmmaInput + MmaInput>(t: u32, a: &crate::mma::FragA<T>) -> [[f32; MAX_K]; 2] {
    use crate::mma::FragA;
    let lane = t % 32;
    let mut a_rows = [[0f32; MAX_K]; 2];
    // Lane `lane` needs rows `lane / 4` and `lane / 4 + 8` of its warp's 16 x 16 tile:
    // they live in the four lanes of its quad.
    for src in 0..32u32 {
        let regs_src = [0, 1, 2, 3].map(|r| crate::warp::shfl_sync(u32::MAX, a.regs[r], src));
        if src / 4 != lane / 4 {
            continue;
        }
        for i in 0..8 {
            let (r, c) = FragA::<T>::coords(src, i);
            let v = T::from_bits((regs_src[i / 2] >> (16 * (i % 2))) as u16).to_f32();
            a_rows[r / 8][c] = v;
        }
    }
    a_rows
}

/// `wgmma::commit_group`: closes the calling thread's open group.
pub(crate) fn commit_group() {
    context::with(|ctx| ctx.block().mem.borrow_mut().wgmma_commit(ctx.linear));
}

/// `Accum::wait::<pending>`: retires the calling thread's groups but the newest
/// `pending` (their operands may be written again), then meets the warp's other lanes
/// (`.sync.aligned`: none runs ahead of another's multiplies, whose reads the emulator
/// does at issue), so a lane that goes on after the wait finds its whole warp's groups
/// retired.
pub(crate) fn wait(pending: u32) {
    context::with(|ctx| {
        ctx.block()
            .mem
            .borrow_mut()
            .wgmma_retire(ctx.linear, pending as usize)
    });
    crate::thread::sync_warp(u32::MAX);
}
