//! Hopper's warpgroup matrix multiply-accumulate (`wgmma.mma_async`, sm_90a): a
//! warpgroup (4 consecutive warps, 128 threads, the first warp's index a multiple of 4)
//! computes `D = A · B + D` for a 64 × `k` `A` and an `N` × `k` `B` read from shared
//! memory through matrix descriptors, into a 64 × `N` `f32` accumulator spread over
//! the warpgroup's registers, asynchronously. `k` is 32 bytes of each row: 16 elements
//! of `bf16` or `f16`, 32 of the FP8 types [`F8E4M3`](crate::F8E4M3) and
//! [`F8E5M2`](crate::F8E5M2) ([`WgmmaInput::K_STEP`]).
//!
//! | here | PTX (PTX ISA 9.0 §9.7.15 "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions") |
//! |---|---|
//! | [`KMajorTile::descriptor`] | the 64-bit shared-memory matrix descriptor (§9.7.15.5.1 "Matrix Descriptor Format") |
//! | [`Accum::mma_async`] | `wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16}`, `.m64nNk32.f32.{e4m3,e5m2}.{e4m3,e5m2}` (§9.7.15.5.2) |
//! | [`Accum::mma_async_reg_a`] | the same with `A` from registers (a [`FragA`](crate::mma::FragA) per warp) |
//! | [`Accum::fence`] | `wgmma.fence.sync.aligned` (§9.7.15.6.1) |
//! | [`commit_group`] | `wgmma.commit_group.sync.aligned` (§9.7.15.6.2) |
//! | [`Accum::wait`] | `wgmma.wait_group.sync.aligned N` (§9.7.15.6.3) |
//! | [`setmaxnreg_inc`], [`setmaxnreg_dec`] | `setmaxnreg.{inc,dec}.sync.aligned.u32` (§9.7.19.5) |
//!
//! # Layout
//!
//! Both operands are *K-major* tiles in shared memory, the layout a tensor copy
//! ([`crate::tma`]) writes for a box of `K` × `ROWS` elements (`K` innermost) with a
//! swizzle of `K * size_of::<T>()` bytes: [`KMajorTile`]`<T, ROWS, K, SWIZZLE>`. `A`
//! (`M` × `K`, row-major) is such a tile of `M` rows; `B` is stored `N` × `K`, that is
//! column-major `K` × `N` (the PTX ISA's default, no transpose). A descriptor names
//! the 8-row groups starting at a row and the [`WgmmaInput::K_STEP`] elements of `K` (16 for
//! 16-bit types, 32 for FP8) starting at a column.
//!
//! # Accumulators
//!
//! [`Accum`]`<N, REGS>` holds a thread's `REGS = N / 2` elements of the 64 × `N` tile;
//! [`Accum::coords`] gives their rows and columns (the PTX ISA's figure "WGMMA
//! .m64nNk16 register fragment layout for accumulator matrix D"), so no kernel
//! indexes registers by hand. `N` is 64, 128 or 256: aliases [`Accum64`],
//! [`Accum128`], [`Accum256`].
//!
//! # Order of operations
//!
//! The multiply runs asynchronously: the accumulator's registers and the shared
//! memory it reads belong to the tensor cores from [`Accum::mma_async`] until
//! [`Accum::wait`] says its group is complete. Per step: [`Accum::fence`] (after the
//! registers or the operands' shared memory were last written by ordinary
//! instructions), one or more `mma_async`, [`commit_group`], then `wait::<0>()` (or a
//! larger count to keep groups in flight) before reading the accumulator or
//! overwriting the tiles. Shared memory written by ordinary stores needs
//! [`crate::bulk::fence_proxy_async_shared`] before the barrier that precedes the
//! multiply; tiles written by tensor copies do not. Every thread of the warpgroup
//! executes each of these together (`.sync.aligned`): call them from
//! warpgroup-uniform control flow.
//!
//! ```no_run
//! use device_std::bf16;
//! use device_std::wgmma::{commit_group, Accum128, KMajorTile};
//! use device_std::SharedArray;
//! // One warpgroup: a 64 x 128 tile of C from a 64 x 64 tile of A and a 128 x 64 tile
//! // of B (both K-major, 128-byte swizzled, e.g. written by tensor copies).
//! fn step(a: &SharedArray<bf16, { 64 * 64 }, 1024>, b: &SharedArray<bf16, { 128 * 64 }, 1024>, acc: &mut Accum128) {
//!     let (a, b) = (KMajorTile::<bf16, 64, 64, 128>::of(a), KMajorTile::<bf16, 128, 64, 128>::of(b));
//!     acc.fence();
//!     for k in 0..4 {
//!         acc.mma_async(a.descriptor(0, 16 * k), b.descriptor(0, 16 * k), true);
//!     }
//!     commit_group();
//!     acc.wait::<0>();
//! }
//! ```
//!
//! Under the emulator each thread computes its own accumulator elements from the
//! shared memory the descriptors name at the `mma_async` call, in `f32`, `k` in order
//! (the tensor cores round differently in the last bits). The operands' shared memory
//! stays held by each issuing thread until the `wait` that retires its group: a write
//! to it before then (a stage refilled after being released too early) is an
//! `AsyncCopy` error.

#![allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV

use crate::host::on_device;
use crate::mma::{bf16x2, MmaInput};
use crate::{bf16, f16, SharedArray};
use core::marker::PhantomData;

/// `$body` with the constant `$n` set to `$regs` (32, 64 or 128: the accumulator sizes,
/// checked by `Accum::VALID`): each arm names its array type with a literal length, so
/// the per-register code is written out, and all arms but one fold away.
#[cfg(target_arch = "nvptx64")]
macro_rules! per_size {
    ($regs:expr, $n:ident => $body:expr) => {
        match $regs {
            32 => {
                const $n: usize = 32;
                $body
            }
            64 => {
                const $n: usize = 64;
                $body
            }
            128 => {
                const $n: usize = 128;
                $body
            }
            _ => unreachable!(),
        }
    };
}

/// A 64-bit shared-memory matrix descriptor for `wgmma` operands of element type `T`
/// (PTX ISA §9.7.15.5.1): start address, leading- and stride-dimension byte offsets,
/// swizzle mode. Made by [`KMajorTile::descriptor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatrixDescriptor<T> {
    bits: u64,
    _elem: PhantomData<T>,
}

impl<T> MatrixDescriptor<T> {
    /// The descriptor's 64 bits, as the instruction takes them.
    #[inline(always)]
    pub const fn bits(self) -> u64 {
        self.bits
    }
}

/// A descriptor's 64 bits (PTX ISA §9.7.15.5.1): the shared-memory start address, the
/// leading and stride byte offsets (each in 16-byte units, 14 bits) and the swizzle mode
/// of a `swizzle`-byte swizzle.
const fn descriptor_bits(start: usize, leading: usize, stride: usize, swizzle: usize) -> u64 {
    ((start as u64 & 0x3_FFFF) >> 4)
        | ((leading as u64) >> 4) << 16
        | ((stride as u64) >> 4) << 32
        | swizzle_mode(swizzle) << 62
}

/// The swizzle-mode field (bits 62–63) of a descriptor for a swizzle of `bytes`.
const fn swizzle_mode(bytes: usize) -> u64 {
    match bytes {
        128 => 1,
        64 => 2,
        32 => 3,
        _ => 0,
    }
}

/// A `ROWS` × `K` tile of `T` in shared memory, K-major and swizzled by `SWIZZLE`
/// bytes, as a tensor copy with box `(K, ROWS)` and that swizzle writes it (see
/// [`crate::tma::TensorMap`]): each row is `K * size_of::<T>() == SWIZZLE` bytes (one
/// swizzle span), 8-row groups of `8 * SWIZZLE` bytes follow each other.
///
/// Compile-time rules (checked by [`of`](Self::of)): `SWIZZLE` is 32, 64 or 128;
/// `K * size_of::<T>() == SWIZZLE`; `ROWS` a multiple of 8; the array holds `ROWS * K`
/// elements and is aligned to `8 * SWIZZLE` bytes (the swizzle pattern's repeat).
#[derive(Debug, Clone, Copy)]
pub struct KMajorTile<T, const ROWS: usize, const K: usize, const SWIZZLE: usize> {
    addr: u32,
    _elem: PhantomData<T>,
}

impl<T: WgmmaInput, const ROWS: usize, const K: usize, const SWIZZLE: usize>
    KMajorTile<T, ROWS, K, SWIZZLE>
{
    /// Elements of `K` one `mma_async` consumes: [`WgmmaInput::K_STEP`] (16 for 16-bit
    /// types, 32 for FP8).
    pub const K_STEP: usize = T::K_STEP;

    /// The tile in `array` (see the type's rules: a compile error when they fail).
    #[inline(always)]
    pub fn of<const N: usize, const A: usize>(array: &SharedArray<T, N, A>) -> Self {
        const {
            assert!(
                SWIZZLE == 32 || SWIZZLE == 64 || SWIZZLE == 128,
                "KMajorTile: SWIZZLE must be 32, 64 or 128 bytes"
            );
            assert!(
                K * core::mem::size_of::<T>() == SWIZZLE,
                "KMajorTile: a row of K elements must span exactly SWIZZLE bytes"
            );
            assert!(ROWS % 8 == 0, "KMajorTile: ROWS must be a multiple of 8");
            assert!(
                N == ROWS * K,
                "KMajorTile: the array must hold ROWS * K elements"
            );
            assert!(
                A >= crate::tma::rules::dst_align(SWIZZLE),
                "KMajorTile: the array must be aligned to 8 * SWIZZLE bytes"
            );
        }
        KMajorTile {
            addr: array.ptr(0).addr(),
            _elem: PhantomData,
        }
    }

    /// The descriptor of the operand whose first row is `row` and first column `col`
    /// (in elements): `row` a multiple of 8, `col` a multiple of
    /// [`K_STEP`](Self::K_STEP) below `K` (a trap on the GPU, a panic under the
    /// emulator, otherwise). The operand spans 64 rows for `A` and `N` rows for `B`
    /// from `row`; they must lie in the tile (not checked: the instruction decides).
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn descriptor(&self, row: usize, col: usize) -> MatrixDescriptor<T> {
        assert!(
            row % 8 == 0 && row < ROWS && col % Self::K_STEP == 0 && col < K,
            "KMajorTile::descriptor: row must be a multiple of 8 and col of K_STEP, inside the tile"
        );
        let start = self.addr as usize + row * SWIZZLE + col * core::mem::size_of::<T>();
        let stride = 8 * SWIZZLE; // bytes from one 8-row group to the next
        MatrixDescriptor {
            // The leading byte offset is unused for swizzled K-major tiles: 16 (field 1).
            bits: descriptor_bits(start, 16, stride, SWIZZLE),
            _elem: PhantomData,
        }
    }
}

/// A `K` × `N` `B` operand stored N-major (row-major `K` × `N`: "MN-major" in the PTX
/// ISA, read with `wgmma`'s transpose-B flag) in shared memory, as tensor copies with box
/// `(W, K)` and a swizzle of `SWIZZLE` bytes write it, `W = SWIZZLE / size_of::<T>()`:
/// `N / W` boxes one after the other, box `j` holding columns `W j .. W j + W` of all `K`
/// rows, each row one swizzle span. FlashAttention's `V` (`keys × d`, `d` contiguous) is
/// such an operand of `P·V`. Only 16-bit types: the PTX ISA allows MN-major operands only
/// for `.f16`/`.bf16` (§9.7.15.5.1 "Matrix Descriptor Format", "Strides").
///
/// Compile-time rules (checked by [`of`](Self::of)): `SWIZZLE` is 32, 64 or 128; `N` a
/// multiple of `W`; `K` a multiple of 16; the array holds `K * N` elements and is aligned
/// to `8 * SWIZZLE` bytes.
#[derive(Debug, Clone, Copy)]
pub struct MnMajorTile<T, const K: usize, const N: usize, const SWIZZLE: usize> {
    addr: u32,
    _elem: PhantomData<T>,
}

/// The descriptor of an MN-major `B` ([`MnMajorTile::descriptor`]), taken only by
/// [`Accum::mma_async_reg_a_mn`], which sets the instruction's transpose-B flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MnMajorDescriptor<T> {
    bits: u64,
    _elem: PhantomData<T>,
}

impl<T> MnMajorDescriptor<T> {
    /// The descriptor's 64 bits, as the instruction takes them.
    #[inline(always)]
    pub const fn bits(self) -> u64 {
        self.bits
    }
}

impl<T: WgmmaRegInput, const K: usize, const N: usize, const SWIZZLE: usize>
    MnMajorTile<T, K, N, SWIZZLE>
{
    /// Elements of `N` per box: one swizzle span.
    pub const W: usize = SWIZZLE / core::mem::size_of::<T>();

    /// The tile in `array` (see the type's rules: a compile error when they fail).
    #[inline(always)]
    pub fn of<const LEN: usize, const A: usize>(array: &SharedArray<T, LEN, A>) -> Self {
        const {
            assert!(
                SWIZZLE == 32 || SWIZZLE == 64 || SWIZZLE == 128,
                "MnMajorTile: SWIZZLE must be 32, 64 or 128 bytes"
            );
            assert!(
                N % (SWIZZLE / core::mem::size_of::<T>()) == 0,
                "MnMajorTile: N must be a multiple of one swizzle span of elements"
            );
            assert!(K % 16 == 0, "MnMajorTile: K must be a multiple of 16");
            assert!(
                LEN == K * N,
                "MnMajorTile: the array must hold K * N elements"
            );
            assert!(
                A >= crate::tma::rules::dst_align(SWIZZLE),
                "MnMajorTile: the array must be aligned to 8 * SWIZZLE bytes"
            );
        }
        MnMajorTile {
            addr: array.ptr(0).addr(),
            _elem: PhantomData,
        }
    }

    /// The descriptor of the operand whose first row of `K` is `k_row` (a multiple of 16)
    /// and first column `n_col` (a multiple of [`W`](Self::W)); a trap on the GPU, a panic
    /// under the emulator otherwise. The operand spans 16 rows of `K` and the
    /// instruction's `N` columns from there: leading byte offset `K * SWIZZLE` (from one
    /// box of columns to the next), stride byte offset `8 * SWIZZLE` (from one group of
    /// 8 rows to the next), as CUTLASS's canonical MN-major layouts have them.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn descriptor(&self, k_row: usize, n_col: usize) -> MnMajorDescriptor<T> {
        assert!(
            k_row % 16 == 0 && k_row < K && n_col % Self::W == 0 && n_col < N,
            "MnMajorTile::descriptor: k_row must be a multiple of 16 and n_col of W, inside the tile"
        );
        let start = self.addr as usize + (n_col / Self::W) * K * SWIZZLE + k_row * SWIZZLE;
        MnMajorDescriptor {
            bits: descriptor_bits(start, K * SWIZZLE, 8 * SWIZZLE, SWIZZLE),
            _elem: PhantomData,
        }
    }
}

/// A thread's part of a 64 × `N` `f32` accumulator of a warpgroup: `REGS = N / 2`
/// elements. `N` is 64, 128 or 256 (compile error otherwise); use the aliases
/// [`Accum64`], [`Accum128`], [`Accum256`].
#[derive(Debug, Clone, Copy)]
#[repr(transparent)]
pub struct Accum<const N: usize, const REGS: usize> {
    regs: [f32; REGS],
}

/// A 64 × 64 accumulator (32 registers a thread).
pub type Accum64 = Accum<64, 32>;
/// A 64 × 128 accumulator (64 registers a thread).
pub type Accum128 = Accum<128, 64>;
/// A 64 × 256 accumulator (128 registers a thread).
pub type Accum256 = Accum<256, 128>;

impl<const N: usize, const REGS: usize> Accum<N, REGS> {
    const VALID: () = assert!(
        (N == 64 || N == 128 || N == 256) && REGS * 2 == N,
        "wgmma::Accum: N must be 64, 128 or 256 and REGS = N / 2 (use Accum64, Accum128, Accum256)"
    );

    /// All zeros.
    #[inline(always)]
    pub fn zero() -> Self {
        let () = Self::VALID;
        #[cfg(target_arch = "nvptx64")]
        {
            let mut acc = core::mem::MaybeUninit::<Self>::uninit();
            let p = acc.as_mut_ptr().cast::<f32>();
            // SAFETY: `Self` is `[f32; REGS]` (one field) and the arm writes all of it,
            // element by element (an array repeat of a generic length would be a loop
            // over memory, which keeps the registers in local memory).
            unsafe {
                per_size!(REGS, R => p.cast::<[f32; R]>().write(<[f32; R] as RegList>::zero()));
                acc.assume_init()
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        Accum { regs: [0.0; REGS] }
    }

    /// `(row, col)` in the 64 × `N` tile of element `i` (0..`REGS`) of thread `t`
    /// (0..128) of the warpgroup: row `16 (t / 32) + (t % 32) / 4` (+ 8 when `i / 2`
    /// is odd), column `8 (i / 4) + 2 (t % 4) + i % 2`.
    #[inline(always)]
    pub const fn coords(t: u32, i: usize) -> (usize, usize) {
        let (warp, lane) = ((t / 32) as usize, (t % 32) as usize);
        (
            16 * warp + lane / 4 + 8 * ((i / 2) % 2),
            8 * (i / 4) + 2 * (lane % 4) + i % 2,
        )
    }

    /// Element `i` (0..`REGS`), at [`coords`](Self::coords)`(t, i)`. Read it after
    /// [`wait`](Self::wait).
    #[inline(always)]
    pub fn get(&self, i: usize) -> f32 {
        self.regs[i]
    }

    /// Multiplies every element by `s` (an epilogue's `alpha`, FP8's per-tensor scales),
    /// one `mul.f32` a register; `s = 1.0` as a constant folds away. Call it after
    /// [`wait`](Self::wait).
    #[inline(always)]
    pub fn scale(&mut self, s: f32) {
        #[cfg(target_arch = "nvptx64")]
        {
            let p = self.regs.as_mut_ptr();
            // SAFETY: as in `fence_operands`.
            unsafe { per_size!(REGS, R => <[f32; R] as RegList>::scale(&mut *p.cast(), s)) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        for v in &mut self.regs {
            *v *= s;
        }
    }

    /// `self[i] = f(i, self[i])` for each of the calling thread's elements (at
    /// [`coords`](Self::coords)`(t, i)`), unrolled: an online softmax's scaling, masking
    /// and exponentials in registers. Call it after [`wait`](Self::wait).
    #[inline(always)]
    pub fn map(&mut self, f: impl FnMut(usize, f32) -> f32) {
        #[cfg(target_arch = "nvptx64")]
        {
            let p = self.regs.as_mut_ptr();
            // SAFETY: as in `fence_operands`.
            unsafe { per_size!(REGS, R => <[f32; R] as RegList>::map(&mut *p.cast(), f)) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let mut f = f;
            for (i, v) in self.regs.iter_mut().enumerate() {
                *v = f(i, *v);
            }
        }
    }

    /// Columns `16 kk .. 16 kk + 16` of the warpgroup's 64 rows rounded to `bf16` (to
    /// nearest even) as the calling warp's `A` fragment of the next product (its 16
    /// rows), in registers: the accumulator's layout per 8 columns is the `mma` `A`
    /// fragment's, so `S = Q·Kᵀ` feeds `P·V` ([`mma_async_reg_a`](Self::mma_async_reg_a))
    /// without shared memory. `kk < N / 16`; call it with a constant `kk` (unrolled), or
    /// the registers are indexed at run time, in local memory.
    #[inline(always)]
    pub fn a_fragment(&self, kk: usize) -> crate::mma::FragA<bf16> {
        let r = &self.regs[8 * kk..8 * kk + 8];
        crate::mma::FragA::from_regs([
            bf16x2(r[0], r[1]),
            bf16x2(r[2], r[3]),
            bf16x2(r[4], r[5]),
            bf16x2(r[6], r[7]),
        ])
    }

    /// Calls `put(row, col, value)` for each of the calling thread's elements, in
    /// register order (pairs `(i, i + 1)` for even `i` are adjacent columns of a row).
    #[inline(always)]
    pub fn store(&self, mut put: impl FnMut(usize, usize, f32)) {
        let t = crate::thread::thread_in_block() % 128;
        each_reg(&self.regs, |i, v| {
            let (r, c) = Self::coords(t, i);
            put(r, c, v);
        });
    }

    /// Calls `put(row, col, pair)` for each pair of adjacent columns `(col, col + 1)` of a
    /// row the calling thread holds (`col` even), `pair` holding both as `bf16` (round to
    /// nearest even), `col`'s in the low 16 bits: ready for one 4-byte store
    /// (`cvt.rn.bf16x2.f32`, PTX ISA §9.7.9.21 "cvt", sm_80).
    #[inline(always)]
    pub fn store_bf16_pairs(&self, mut put: impl FnMut(usize, usize, u32)) {
        let t = crate::thread::thread_in_block() % 128;
        let mut lo = 0.0f32;
        each_reg(&self.regs, |i, v| {
            if i % 2 == 0 {
                lo = v;
            } else {
                let (r, c) = Self::coords(t, i - 1);
                put(r, c, bf16x2(lo, v));
            }
        });
    }

    /// Rounds columns `col0 .. col0 + 64` of the calling warp's 16 rows (rows
    /// `16 w .. 16 w + 16` of the 64, for warp `w` of the warpgroup) to `bf16` (to nearest
    /// even) and writes them into `tile`: a 16 × 64 box laid out as a tensor copy of a
    /// `TensorMap<bf16, 2, 64, 16, 1, 1, 1, 128>` reads it (row `r` at byte `128 r`, its
    /// 16-byte chunk `q` at chunk `q ^ (r % 8)`: the 128-byte swizzle), so the epilogue
    /// can hand the box to [`TensorMap::store`](crate::tma::TensorMap::store). Four
    /// `stmatrix.sync.aligned.m8n8.x4.shared.b16` (PTX ISA 9.0 §9.7.14.5.16, sm_90), with
    /// no bank conflicts. `col0` is a multiple of 64 below `N` (a trap otherwise); pass a
    /// constant (or an unrolled loop's index), or the registers are indexed at run time,
    /// in local memory. Every lane of the warp calls it together, after
    /// [`wait`](Self::wait); before the copy, each lane runs
    /// [`bulk::fence_proxy_async_shared`](crate::bulk::fence_proxy_async_shared), then
    /// the warp [`sync_warp`](crate::thread::sync_warp)s and one lane issues it. To
    /// write the box again, that lane first waits for the copy to have read it
    /// ([`bulk::wait_group_read`](crate::bulk::wait_group_read)) and the warp
    /// `sync_warp`s once more (the emulator reports a refill without that barrier).
    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn store_bf16_swizzled<const E: usize, const A: usize>(
        &self,
        col0: usize,
        tile: &SharedArray<bf16, E, A>,
    ) {
        const {
            assert!(
                E == 16 * 64 && A >= 1024,
                "wgmma::Accum::store_bf16_swizzled: the box holds 16 x 64 elements, 1024-byte aligned"
            );
        }
        assert!(
            col0 % 64 == 0 && col0 + 64 <= N,
            "wgmma::Accum::store_bf16_swizzled: col0 must be a multiple of 64 below N"
        );
        let lane = crate::thread::lane_id() as usize;
        // Lanes 0..16 give the rows of the left 8 columns of each 16, lanes 16..32 the
        // right ones (the matrices' order in `stmatrix_x4`).
        let row = lane % 16;
        for q in 0..4 {
            let r = &self.regs[4 * (col0 / 8 + 2 * q)..4 * (col0 / 8 + 2 * q) + 8];
            let regs = [
                bf16x2(r[0], r[1]),
                bf16x2(r[2], r[3]),
                bf16x2(r[4], r[5]),
                bf16x2(r[6], r[7]),
            ];
            let chunk = (2 * q + lane / 16) ^ (row % 8);
            // SAFETY: row < 16 and chunk < 8: 16 bytes inside the 2 KiB box, 16-byte
            // aligned (the box is 1024-byte aligned); the caller's barrier discipline is
            // that of every shared store (the docs above).
            unsafe { crate::mma::stmatrix_x4(regs, tile.ptr(64 * row + 8 * chunk)) }
        }
    }

    /// Marks the registers as read and written here, so the compiler keeps every
    /// ordinary access of them on its side of the neighbouring `wgmma` instructions
    /// (CUTLASS's `warpgroup_fence_operand`).
    #[inline(always)]
    fn fence_operands(&mut self) {
        on_device!("wgmma::Accum::fence_operands", {
            let p = self.regs.as_mut_ptr();
            // SAFETY: `regs` has exactly the length of the arm's array type (`VALID`);
            // the arms fold away but one.
            unsafe { per_size!(REGS, R => <[f32; R] as RegList>::fence(&mut *p.cast())) }
        }, emulated: {})
    }

    /// `wgmma.fence.sync.aligned`: orders this thread's earlier register and shared
    /// memory accesses before the next [`mma_async`](Self::mma_async). Call it before
    /// the first `mma_async` of each step. Every thread of the warpgroup calls it.
    /// sm_90a.
    #[inline(always)]
    pub fn fence(&mut self) {
        self.fence_operands();
        on_device!("wgmma::Accum::fence", {
            // SAFETY: a fence; no operands.
            unsafe { core::arch::asm!("wgmma.fence.sync.aligned;", options(nostack, preserves_flags)) }
        }, emulated: {})
    }

    /// `self = a · b + self` (`accumulate`) or `self = a · b`, for the warpgroup's
    /// 64 × `K_STEP` `a` and `N` × `K_STEP` `b` (both K-major in shared memory;
    /// [`WgmmaInput::K_STEP`] is 16 for 16-bit types, 32 for FP8), issued
    /// asynchronously into the current `wgmma` group. Every thread of the warpgroup
    /// calls it with the same descriptors. sm_90a.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn mma_async<T: WgmmaInput>(
        &mut self,
        a: MatrixDescriptor<T>,
        b: MatrixDescriptor<T>,
        accumulate: bool,
    ) {
        let () = Self::VALID;
        on_device!("wgmma::Accum::mma_async", {
            T::mma_async(&mut self.regs, a.bits, b.bits, accumulate)
        }, emulated: {
            crate::emulator::wgmma::mma_async::<T>(&mut self.regs, N, a.bits, b.bits, accumulate)
        })
    }

    /// [`mma_async`](Self::mma_async) with `A` from registers: warp `w` of the
    /// warpgroup passes rows `16 w .. 16 w + 16` of the 64 × 16 `A` as its
    /// [`FragA`](crate::mma::FragA) (the `mma.sync` m16n8k16 fragment layout, PTX ISA
    /// §9.7.15.5.1 "Register fragments"), e.g. loaded with `FragA::load` from any
    /// layout or computed in registers; `b` from shared memory as before. The fragment's
    /// registers, like the accumulator's, belong to the tensor cores until
    /// [`wait`](Self::wait), and must be written before the [`fence`](Self::fence) that
    /// precedes this call (PTX ISA, `wgmma.fence`: a register of `A` written between the
    /// fence and the `mma_async` reading it is undefined; load every fragment of a step
    /// first, then fence). sm_90a.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn mma_async_reg_a<T: WgmmaRegInput>(
        &mut self,
        a: &crate::mma::FragA<T>,
        b: MatrixDescriptor<T>,
        accumulate: bool,
    ) {
        let () = Self::VALID;
        on_device!("wgmma::Accum::mma_async_reg_a", {
            T::mma_async_rs(&mut self.regs, a.regs, b.bits, accumulate)
        }, emulated: {
            crate::emulator::wgmma::mma_async_reg_a::<T>(&mut self.regs, N, a, b.bits, accumulate)
        })
    }

    /// [`mma_async_reg_a`](Self::mma_async_reg_a) with an MN-major `B`
    /// ([`MnMajorTile`]): the instruction's transpose-B flag set (`imm-trans-b = 1`,
    /// PTX ISA §9.7.15.5.2), `b` `N` columns × 16 rows of `K` from shared memory.
    /// 16-bit types only. sm_90a.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn mma_async_reg_a_mn<T: WgmmaRegInput>(
        &mut self,
        a: &crate::mma::FragA<T>,
        b: MnMajorDescriptor<T>,
        accumulate: bool,
    ) {
        let () = Self::VALID;
        on_device!("wgmma::Accum::mma_async_reg_a_mn", {
            T::mma_async_rs_mn(&mut self.regs, a.regs, b.bits, accumulate)
        }, emulated: {
            crate::emulator::wgmma::mma_async_reg_a_mn::<T>(&mut self.regs, N, a, b.bits, accumulate)
        })
    }

    /// `wgmma.wait_group.sync.aligned PENDING`: waits until at most `PENDING` of this
    /// thread's committed groups are in flight, then hands the registers back to
    /// ordinary code. With `PENDING = 0` every earlier `mma_async` is complete: read
    /// the accumulator or overwrite the tiles after it. sm_90a.
    #[inline(always)]
    pub fn wait<const PENDING: u32>(&mut self) {
        on_device!("wgmma::Accum::wait", {
            // SAFETY: a wait; no operands.
            unsafe { core::arch::asm!("wgmma.wait_group.sync.aligned {n};", n = const PENDING, options(nostack, preserves_flags)) }
        }, emulated: {
            crate::emulator::wgmma::wait(PENDING)
        });
        self.fence_operands();
    }
}

/// `wgmma.commit_group.sync.aligned`: closes the current group of this thread's
/// [`Accum::mma_async`]s, the unit [`Accum::wait`] counts. sm_90a.
#[inline(always)]
pub fn commit_group() {
    on_device!("wgmma::commit_group", {
        // SAFETY: no operands.
        unsafe { core::arch::asm!("wgmma.commit_group.sync.aligned;", options(nostack, preserves_flags)) }
    }, emulated: {
        crate::emulator::wgmma::commit_group()
    })
}

/// `setmaxnreg.inc.sync.aligned.u32 REGS`: raises this warpgroup's register budget to
/// `REGS` per thread (24..=256, a multiple of 8: a compile error otherwise), blocking
/// until the SM's pool has them (other warpgroups free them with
/// [`setmaxnreg_dec`]). Takes effect only when the kernel's register count is capped
/// at entry (`#[kernel(max_threads = ..)]`); every thread of the warpgroup calls it.
/// A hint under the emulator (nothing happens). sm_90a.
#[inline(always)]
pub fn setmaxnreg_inc<const REGS: u32>() {
    const {
        assert!(
            REGS >= 24 && REGS <= 256 && REGS % 8 == 0,
            "setmaxnreg: 24..=256, a multiple of 8"
        )
    }
    on_device!("wgmma::setmaxnreg_inc", {
        // SAFETY: changes only the warpgroup's register budget.
        unsafe { core::arch::asm!("setmaxnreg.inc.sync.aligned.u32 {n};", n = const REGS, options(nostack, preserves_flags)) }
    }, emulated: {})
}

/// `setmaxnreg.dec.sync.aligned.u32 REGS`: lowers this warpgroup's register budget to
/// `REGS` per thread (24..=256, a multiple of 8), returning the rest to the SM's
/// pool. Same conditions as [`setmaxnreg_inc`]. sm_90a.
#[inline(always)]
pub fn setmaxnreg_dec<const REGS: u32>() {
    const {
        assert!(
            REGS >= 24 && REGS <= 256 && REGS % 8 == 0,
            "setmaxnreg: 24..=256, a multiple of 8"
        )
    }
    on_device!("wgmma::setmaxnreg_dec", {
        // SAFETY: changes only the warpgroup's register budget.
        unsafe { core::arch::asm!("setmaxnreg.dec.sync.aligned.u32 {n};", n = const REGS, options(nostack, preserves_flags)) }
    }, emulated: {})
}

/// An input element type of `wgmma` with `f32` accumulators, `A` and `B` of the same
/// type: [`bf16`] or [`f16`](struct@crate::f16) (16 elements of `K` per instruction,
/// `.m64nNk16`), [`F8E4M3`](crate::F8E4M3) or [`F8E5M2`](crate::F8E5M2) (32, `.m64nNk32`; sm_90a as the rest). Sealed.
pub trait WgmmaInput: Copy + sealed::Sealed {
    /// Elements of `K` one [`Accum::mma_async`] consumes: 32 bytes of each row, so 16
    /// for 16-bit types and 32 for FP8.
    const K_STEP: usize;
    /// Issues `wgmma.mma_async` for an accumulator of `regs.len() * 2` columns.
    #[doc(hidden)]
    fn mma_async<const REGS: usize>(regs: &mut [f32; REGS], a: u64, b: u64, accumulate: bool);
    /// The element whose bits are the low `size_of::<Self>()` bytes of `bits`, as `f32`
    /// (exact): how the emulator reads operands.
    #[doc(hidden)]
    fn bits_to_f32(bits: u16) -> f32;
}

/// A [`WgmmaInput`] whose `A` may come from registers ([`Accum::mma_async_reg_a`], as
/// `mma` fragments): [`bf16`] and [`f16`](struct@crate::f16). Sealed.
pub trait WgmmaRegInput: WgmmaInput + MmaInput {
    /// Issues `wgmma.mma_async` with `A` from registers.
    #[doc(hidden)]
    fn mma_async_rs<const REGS: usize>(
        regs: &mut [f32; REGS],
        a: [u32; 4],
        b: u64,
        accumulate: bool,
    );
    /// The same with an MN-major `B`.
    #[doc(hidden)]
    fn mma_async_rs_mn<const REGS: usize>(
        regs: &mut [f32; REGS],
        a: [u32; 4],
        b: u64,
        accumulate: bool,
    );
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::bf16 {}
    impl Sealed for crate::f16 {}
    impl Sealed for crate::F8E4M3 {}
    impl Sealed for crate::F8E5M2 {}
}

/// Calls `f(i, regs[i])` for every register, unrolled on the GPU (a loop the compiler
/// kept would index the registers at run time and move them to local memory).
#[inline(always)]
fn each_reg<const REGS: usize>(regs: &[f32; REGS], f: impl FnMut(usize, f32)) {
    #[cfg(target_arch = "nvptx64")]
    {
        let p = regs.as_ptr();
        // SAFETY: as in `fence_operands`.
        unsafe { per_size!(REGS, R => <[f32; R] as RegList>::each(&*p.cast(), f)) }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let mut f = f;
        for (i, &v) in regs.iter().enumerate() {
            f(i, v);
        }
    }
}

/// Per-register operations written out for one accumulator size.
#[cfg(target_arch = "nvptx64")]
trait RegList {
    /// All zeros, written element by element.
    fn zero() -> Self;
    /// One empty instruction that reads and redefines every register.
    fn fence(&mut self);
    /// `f(i, self[i])` for each `i`, in order, unrolled.
    fn each(&self, f: impl FnMut(usize, f32));
    /// `self[i] *= s` for each `i`, unrolled.
    fn scale(&mut self, s: f32);
    /// `self[i] = f(i, self[i])` for each `i`, unrolled.
    fn map(&mut self, f: impl FnMut(usize, f32) -> f32);
}

/// `$m!($args; 0 1 .. $r - 1)`: the register indices of an accumulator of `$r` registers
/// (32, 64 or 128) appended to a macro call.
#[cfg(target_arch = "nvptx64")]
macro_rules! with_regs {
    (32, $m:ident!($($args:tt)*)) => {
        $m!($($args)*; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
    };
    (64, $m:ident!($($args:tt)*)) => {
        $m!($($args)*; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63);
    };
    (128, $m:ident!($($args:tt)*)) => {
        $m!($($args)*; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120 121 122 123 124 125 126 127);
    };
}

/// [`RegList`] for `[f32; $r]`, the registers listed as `$i`.
#[cfg(target_arch = "nvptx64")]
macro_rules! reg_list {
    ($r:literal; $first:literal $($i:literal)*) => {
        impl RegList for [f32; $r] {
            #[inline(always)]
            fn zero() -> Self {
                let mut r = core::mem::MaybeUninit::<[f32; $r]>::uninit();
                let p = r.as_mut_ptr();
                // SAFETY: moves of zero into every element (written as instructions: a
                // zeroed array of this size becomes a `memset` the backend expands to a
                // loop over local memory); the places are raw-pointer projections.
                unsafe {
                    core::arch::asm!(
                        concat!("mov.b32 {", $first, "}, 0;", $(" mov.b32 {", $i, "}, 0;",)*),
                        out(reg32) (*p)[$first], $(out(reg32) (*p)[$i],)*
                        options(pure, nomem, nostack, preserves_flags),
                    );
                    r.assume_init()
                }
            }
            #[inline(always)]
            fn fence(&mut self) {
                // SAFETY: an empty instruction (a PTX comment) naming the registers.
                unsafe {
                    core::arch::asm!(
                        concat!("// wgmma registers {", $first, "}", $(" {", $i, "}",)*),
                        inout(reg32) self[$first], $(inout(reg32) self[$i],)*
                        options(nostack, preserves_flags),
                    );
                }
            }
            #[inline(always)]
            fn each(&self, mut f: impl FnMut(usize, f32)) {
                f($first, self[$first]);
                $(f($i, self[$i]);)*
            }
            #[inline(always)]
            fn scale(&mut self, s: f32) {
                self[$first] *= s;
                $(self[$i] *= s;)*
            }
            #[inline(always)]
            fn map(&mut self, mut f: impl FnMut(usize, f32) -> f32) {
                self[$first] = f($first, self[$first]);
                $(self[$i] = f($i, self[$i]);)*
            }
        }
    };
}

/// One `wgmma.mma_async` shape with both operands in shared memory: element type `$t`
/// (PTX name `$tn`), `$k` elements of `K`, `$imm` the immediates after the scales (the
/// transpose flags, which only 16-bit types have), `$n` columns, `$r` registers listed
/// as `$i`.
#[cfg(target_arch = "nvptx64")]
macro_rules! wgmma_asm {
    ($t:ty, $tn:literal, $k:literal, $imm:literal, $n:literal, $r:literal; $first:literal $($i:literal)*) => {
        impl WgmmaShape<$r> for $t {
            #[inline(always)]
            fn issue(regs: &mut [f32; $r], a: u64, b: u64, accumulate: bool) {
                // SAFETY: registers and the shared memory the descriptors name, read
                // asynchronously until the thread's wait (the documented contract);
                // every thread of the warpgroup executes it (`.aligned`).
                unsafe {
                    core::arch::asm!(
                        concat!(
                            "{{\n.reg .pred p;\nsetp.ne.b32 p, {s}, 0;\nwgmma.mma_async.sync.aligned.m64n", $n, "k", $k, ".f32.", $tn, ".", $tn, " {{",
                            "{", $first, "}", $(", {", $i, "}",)*
                            "}}, {a}, {b}, p, 1, 1", $imm, ";\n}}"
                        ),
                        inout(reg32) regs[$first], $(inout(reg32) regs[$i],)*
                        a = in(reg64) a, b = in(reg64) b, s = in(reg32) accumulate as u32,
                        options(nostack, preserves_flags),
                    );
                }
            }
        }
    };
}

/// The same shape with `A` from four registers (16-bit types, `K` = 16), `$tr` the
/// transpose-B flag (`"0"`: K-major `B`, `"1"`: MN-major), `$tr_trait` the trait it
/// implements.
#[cfg(target_arch = "nvptx64")]
macro_rules! wgmma_asm_rs {
    ($tr_trait:ident, $tr:literal, $t:ty, $tn:literal, $n:literal, $r:literal; $first:literal $($i:literal)*) => {
        impl $tr_trait<$r> for $t {
            #[inline(always)]
            fn issue_rs(regs: &mut [f32; $r], a: [u32; 4], b: u64, accumulate: bool) {
                // SAFETY: as `issue`, with `A` in four registers.
                unsafe {
                    core::arch::asm!(
                        concat!(
                            "{{\n.reg .pred p;\nsetp.ne.b32 p, {s}, 0;\nwgmma.mma_async.sync.aligned.m64n", $n, "k16.f32.", $tn, ".", $tn, " {{",
                            "{", $first, "}", $(", {", $i, "}",)*
                            "}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, p, 1, 1, ", $tr, ";\n}}"
                        ),
                        inout(reg32) regs[$first], $(inout(reg32) regs[$i],)*
                        a0 = in(reg32) a[0], a1 = in(reg32) a[1], a2 = in(reg32) a[2], a3 = in(reg32) a[3],
                        b = in(reg64) b, s = in(reg32) accumulate as u32,
                        options(nostack, preserves_flags),
                    );
                }
            }
        }
    };
}

/// The instruction of one accumulator size, per element type.
#[cfg(target_arch = "nvptx64")]
trait WgmmaShape<const REGS: usize> {
    fn issue(regs: &mut [f32; REGS], a: u64, b: u64, accumulate: bool);
}

/// The instruction with `A` from registers, per 16-bit element type.
#[cfg(target_arch = "nvptx64")]
trait WgmmaShapeRs<const REGS: usize> {
    fn issue_rs(regs: &mut [f32; REGS], a: [u32; 4], b: u64, accumulate: bool);
}

/// The same with an MN-major `B` (transpose-B set).
#[cfg(target_arch = "nvptx64")]
trait WgmmaShapeRsMn<const REGS: usize> {
    fn issue_rs(regs: &mut [f32; REGS], a: [u32; 4], b: u64, accumulate: bool);
}

#[cfg(target_arch = "nvptx64")]
mod shapes {
    use super::{RegList, WgmmaShape, WgmmaShapeRs, WgmmaShapeRsMn};
    use crate::{bf16, f16, F8E4M3, F8E5M2};
    with_regs!(32, reg_list!(32));
    with_regs!(64, reg_list!(64));
    with_regs!(128, reg_list!(128));
    with_regs!(32, wgmma_asm!(bf16, "bf16", "16", ", 0, 0", 64, 32));
    with_regs!(64, wgmma_asm!(bf16, "bf16", "16", ", 0, 0", 128, 64));
    with_regs!(128, wgmma_asm!(bf16, "bf16", "16", ", 0, 0", 256, 128));
    with_regs!(32, wgmma_asm!(f16, "f16", "16", ", 0, 0", 64, 32));
    with_regs!(64, wgmma_asm!(f16, "f16", "16", ", 0, 0", 128, 64));
    with_regs!(128, wgmma_asm!(f16, "f16", "16", ", 0, 0", 256, 128));
    with_regs!(32, wgmma_asm!(F8E4M3, "e4m3", "32", "", 64, 32));
    with_regs!(64, wgmma_asm!(F8E4M3, "e4m3", "32", "", 128, 64));
    with_regs!(128, wgmma_asm!(F8E4M3, "e4m3", "32", "", 256, 128));
    with_regs!(32, wgmma_asm!(F8E5M2, "e5m2", "32", "", 64, 32));
    with_regs!(64, wgmma_asm!(F8E5M2, "e5m2", "32", "", 128, 64));
    with_regs!(128, wgmma_asm!(F8E5M2, "e5m2", "32", "", 256, 128));
    with_regs!(32, wgmma_asm_rs!(WgmmaShapeRs, "0", bf16, "bf16", 64, 32));
    with_regs!(32, wgmma_asm_rs!(WgmmaShapeRsMn, "1", bf16, "bf16", 64, 32));
    with_regs!(64, wgmma_asm_rs!(WgmmaShapeRs, "0", bf16, "bf16", 128, 64));
    with_regs!(
        64,
        wgmma_asm_rs!(WgmmaShapeRsMn, "1", bf16, "bf16", 128, 64)
    );
    with_regs!(
        128,
        wgmma_asm_rs!(WgmmaShapeRs, "0", bf16, "bf16", 256, 128)
    );
    with_regs!(
        128,
        wgmma_asm_rs!(WgmmaShapeRsMn, "1", bf16, "bf16", 256, 128)
    );
    with_regs!(32, wgmma_asm_rs!(WgmmaShapeRs, "0", f16, "f16", 64, 32));
    with_regs!(32, wgmma_asm_rs!(WgmmaShapeRsMn, "1", f16, "f16", 64, 32));
    with_regs!(64, wgmma_asm_rs!(WgmmaShapeRs, "0", f16, "f16", 128, 64));
    with_regs!(64, wgmma_asm_rs!(WgmmaShapeRsMn, "1", f16, "f16", 128, 64));
    with_regs!(128, wgmma_asm_rs!(WgmmaShapeRs, "0", f16, "f16", 256, 128));
    with_regs!(
        128,
        wgmma_asm_rs!(WgmmaShapeRsMn, "1", f16, "f16", 256, 128)
    );
}

/// [`WgmmaInput`] for `$t`: `$k` elements of `K` per instruction, `$to_f32` its bits
/// (a `u16`) as `f32`.
macro_rules! wgmma_input {
    ($t:ty, $k:literal, $to_f32:expr) => {
        impl WgmmaInput for $t {
            const K_STEP: usize = $k;
            #[inline(always)]
            fn mma_async<const REGS: usize>(regs: &mut [f32; REGS], a: u64, b: u64, accumulate: bool) {
                on_device!("wgmma::mma_async", {
                    // The casts are between identical types: REGS is 32, 64 or 128
                    // (`Accum::VALID`), so one arm is taken and the rest fold away.
                    let p = regs.as_mut_ptr();
                    // SAFETY: `regs` has exactly the length of the arm's array type.
                    unsafe {
                        per_size!(REGS, R => <$t as WgmmaShape<R>>::issue(&mut *p.cast(), a, b, accumulate))
                    }
                }, emulated: {
                    let _ = (regs, a, b, accumulate);
                    unreachable!("the emulator computes wgmma without the instruction")
                })
            }
            #[inline(always)]
            fn bits_to_f32(bits: u16) -> f32 {
                let to_f32: fn(u16) -> f32 = $to_f32;
                to_f32(bits)
            }
        }
    };
}
wgmma_input!(bf16, 16, |b| bf16::from_bits(b).to_f32());
wgmma_input!(f16, 16, |b| f16::from_bits(b).to_f32());
wgmma_input!(crate::F8E4M3, 32, |b| crate::F8E4M3::from_bits(b as u8)
    .to_f32());
wgmma_input!(crate::F8E5M2, 32, |b| crate::F8E5M2::from_bits(b as u8)
    .to_f32());

/// [`WgmmaRegInput`] for a 16-bit `$t`.
macro_rules! wgmma_reg_input {
    ($t:ty) => {
        impl WgmmaRegInput for $t {
            #[inline(always)]
            fn mma_async_rs<const REGS: usize>(regs: &mut [f32; REGS], a: [u32; 4], b: u64, accumulate: bool) {
                on_device!("wgmma::mma_async_reg_a", {
                    let p = regs.as_mut_ptr();
                    // SAFETY: as in `mma_async`.
                    unsafe {
                        per_size!(REGS, R => <$t as WgmmaShapeRs<R>>::issue_rs(&mut *p.cast(), a, b, accumulate))
                    }
                }, emulated: {
                    let _ = (regs, a, b, accumulate);
                    unreachable!("the emulator computes wgmma without the instruction")
                })
            }
            #[inline(always)]
            fn mma_async_rs_mn<const REGS: usize>(regs: &mut [f32; REGS], a: [u32; 4], b: u64, accumulate: bool) {
                on_device!("wgmma::mma_async_reg_a_mn", {
                    let p = regs.as_mut_ptr();
                    // SAFETY: as in `mma_async`.
                    unsafe {
                        per_size!(REGS, R => <$t as WgmmaShapeRsMn<R>>::issue_rs(&mut *p.cast(), a, b, accumulate))
                    }
                }, emulated: {
                    let _ = (regs, a, b, accumulate);
                    unreachable!("the emulator computes wgmma without the instruction")
                })
            }
        }
    };
}
wgmma_reg_input!(bf16);
wgmma_reg_input!(f16);
