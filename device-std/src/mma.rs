//! Warp-level tensor-core matrix multiply-accumulate (`mma.sync`, sm_80): the
//! `m16n8k16` shape with `bf16` or `f16` inputs and `f32` accumulators, through
//! fragment types that carry their shape and element type, so no kernel indexes
//! registers by hand and a mismatched shape or type does not compile.
//!
//! | here | PTX (PTX ISA 9.0 §9.7.14.5 "Matrix multiply-accumulate operation using mma instruction"; fragments §9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating point type") |
//! |---|---|
//! | [`mma_m16n8k16`] | `mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32` |
//! | [`FragA::load_shared`], [`FragA::load_shared_rows`] | `ldmatrix.sync.aligned.m8n8.x4.shared.b16` (sm_75) |
//! | [`FragB::load_shared`], [`FragB::load_shared_rows`] | `ldmatrix.sync.aligned.m8n8.x2.shared.b16` (sm_75) |
//! | [`FragB::load_shared_pair_rows`] | `ldmatrix.sync.aligned.m8n8.x4.shared.b16` (sm_75) |
//! | [`FragA::load_shared_ptr`], [`FragB::load_shared_ptr`], [`FragB::load_shared_pair_ptr`] | the same, from raw row addresses, unchecked (`unsafe`) |
//! | [`FragB::load_shared_trans`] | `ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16` (sm_75) |
//! | [`FragB::load_shared_trans_pair`] | `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16` (sm_75) |
//! | [`Accum::store_bf16_pairs`] | `cvt.rn.bf16x2.f32` (sm_80) |
//! | [`Accum::store_pair_shared_bf16`], [`Accum::store_pair_shared_bf16_ptr`] | `stmatrix.sync.aligned.m8n8.x4.shared.b16` (sm_90) |
//! | [`mma_m16n8k8_tf32`] with [`FragATf32`], [`FragBTf32`] | `mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` (sm_80) |
//! | [`to_tf32`] | `cvt.rna.tf32.f32` (sm_80) |
//!
//! The `ldmatrix` loads (PTX ISA 9.0 §9.7.14.5.15 "ldmatrix") come in two forms: one for
//! a plain row-major tile (`row0`, `col0`, `ld`), and a `_rows` form in which every lane
//! names the element where "its" 16-byte row of 8 elements starts, so any layout whose
//! 8-element rows are contiguous and 16-byte aligned works: XOR-swizzled or padded tiles
//! (free of bank conflicts). Lane `l` names row `l % 8` of the 8 × 8 matrix `l / 8`.
//!
//! All 32 lanes of the warp take part in each operation (`.aligned`): call it
//! from warp-uniform control flow, never from inside a branch some lanes skip.
//! A warp computes `D = A · B + C` for a 16 × 16 `A` ([`FragA`], row-major), a
//! 16 × 8 `B` ([`FragB`], column-major, the PTX `.col`) and a 16 × 8 `f32` `C`/`D`
//! ([`Accum`]); each lane holds a fixed part of each matrix, which the `coords`
//! functions give, so a fragment is loaded and stored element by element from any
//! layout (a `load` closure gets `(row, col)` and returns the element).
//!
//! ```no_run
//! use device_std::mma::{mma_m16n8k16, Accum, FragA, FragB};
//! use device_std::bf16;
//! // One 16 x 8 tile of C = A * B, A (m x k) and B (k x n) row-major, k a multiple of 16.
//! fn tile(a: &[bf16], b: &[bf16], k: usize, n: usize, row0: usize, col0: usize) -> Accum {
//!     let mut acc = Accum::zero();
//!     for k0 in (0..k).step_by(16) {
//!         let fa = FragA::<bf16>::load(|r, c| a[(row0 + r) * k + k0 + c]);
//!         let fb = FragB::<bf16>::load(|r, c| b[(k0 + r) * n + col0 + c]);
//!         mma_m16n8k16(&fa, &fb, &mut acc);
//!     }
//!     acc
//! }
//! ```
//!
//! Under the emulator the warp's fragments are exchanged with shuffles and the
//! product is computed in `f32`, `k` in order; the tensor cores round differently
//! in the last bits (compare with a tolerance, as against any other `f32` sum).

#![allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV

use crate::host::on_device;
use crate::{bf16, f16};
use core::marker::PhantomData;

/// An input element type of `mma.m16n8k16`: [`bf16`] or [`f16`](struct@crate::f16). Sealed.
pub trait MmaInput: Copy + sealed::Sealed {
    /// The element's bits.
    fn to_bits(self) -> u16;
    /// The element from its bits.
    fn from_bits(bits: u16) -> Self;
    /// The element as an `f32` (exact for both types).
    fn to_f32(self) -> f32;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::bf16 {}
    impl Sealed for crate::f16 {}
}

impl MmaInput for bf16 {
    #[inline(always)]
    fn to_bits(self) -> u16 {
        bf16::to_bits(self)
    }
    #[inline(always)]
    fn from_bits(bits: u16) -> Self {
        bf16::from_bits(bits)
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
}

impl MmaInput for f16 {
    #[inline(always)]
    fn to_bits(self) -> u16 {
        f16::to_bits(self)
    }
    #[inline(always)]
    fn from_bits(bits: u16) -> Self {
        f16::from_bits(bits)
    }
    #[inline(always)]
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
}

/// `(groupID, threadID_in_group)` of a lane: `(lane / 4, lane % 4)`.
#[inline(always)]
const fn group(lane: u32) -> (usize, usize) {
    ((lane / 4) as usize, (lane % 4) as usize)
}

/// A lane's part of a 16 × 16 row-major `A` of `E`: 8 elements in 4 registers.
#[derive(Debug, Clone, Copy)]
pub struct FragA<E> {
    pub(crate) regs: [u32; 4],
    _elem: PhantomData<E>,
}

impl FragA<bf16> {
    /// The warp's 16 × 16 block `[left, right]` of two accumulators (columns 0..8 and
    /// 8..16) rounded to `bf16` (to nearest even, `cvt.rn.bf16x2.f32`, sm_80) as an `A`
    /// fragment, in registers: an accumulator's lane layout is the `A` fragment's for
    /// eight of its columns, so `C = A·B` feeds a second product `C·B'` without a trip
    /// through shared memory (FlashAttention's `P·V` after `S = Q·Kᵀ`). Lane `l`'s
    /// element `(r, c)` of the block is the one it holds in `left` (`c < 8`) or in
    /// `right` at `(r, c - 8)`.
    #[inline(always)]
    pub fn from_accum_pair(pair: &[Accum; 2]) -> Self {
        let [l, r] = pair;
        FragA {
            regs: [
                bf16x2(l.vals[0], l.vals[1]),
                bf16x2(l.vals[2], l.vals[3]),
                bf16x2(r.vals[0], r.vals[1]),
                bf16x2(r.vals[2], r.vals[3]),
            ],
            _elem: PhantomData,
        }
    }
}

/// A lane's part of a 16 × 8 column-major `B` of `E`: 4 elements in 2 registers.
#[derive(Debug, Clone, Copy)]
pub struct FragB<E> {
    regs: [u32; 2],
    _elem: PhantomData<E>,
}

/// A lane's part of a 16 × 8 `f32` accumulator `C`/`D`: 4 elements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accum {
    vals: [f32; 4],
}

/// Element `i` of registers packed by [`pack`]: register `i / 2`, half `i % 2`.
#[inline(always)]
fn unpack<E: MmaInput>(regs: &[u32], i: usize) -> E {
    E::from_bits((regs[i / 2] >> (16 * (i % 2))) as u16)
}

/// Packs two elements into a register, the first in the low half.
#[inline(always)]
fn pack<E: MmaInput>(lo: E, hi: E) -> u32 {
    lo.to_bits() as u32 | (hi.to_bits() as u32) << 16
}

impl<E: MmaInput> FragA<E> {
    /// The fragment whose registers are `regs` (two elements each, the first in the low
    /// half), for `wgmma::Accum::a_fragment` (compiled where `wgmma` is: sm_90a, and the
    /// host).
    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90a"))]
    #[inline(always)]
    pub(crate) const fn from_regs(regs: [u32; 4]) -> Self {
        FragA {
            regs,
            _elem: PhantomData,
        }
    }

    /// All zeros (bits 0: `+0.0` for both input types), e.g. to fill an array of
    /// fragments before loading each.
    #[inline(always)]
    pub const fn zero() -> Self {
        FragA {
            regs: [0; 4],
            _elem: PhantomData,
        }
    }

    /// `(row, col)` in the 16 × 16 tile of element `i` (0..8) of lane `lane`:
    /// row `lane / 4` (+ 8 for `i` in 2, 3, 6, 7), column `2 (lane % 4) + i % 2`
    /// (+ 8 for `i` >= 4).
    #[inline(always)]
    pub const fn coords(lane: u32, i: usize) -> (usize, usize) {
        let (g, t) = group(lane);
        (g + 8 * ((i / 2) % 2), 2 * t + i % 2 + 8 * (i / 4))
    }

    /// The calling lane's fragment, element `(row, col)` of the tile from `get`.
    #[inline(always)]
    pub fn load(get: impl Fn(usize, usize) -> E) -> Self {
        let lane = crate::thread::lane_id();
        let e = |i| {
            let (r, c) = Self::coords(lane, i);
            get(r, c)
        };
        FragA {
            regs: [
                pack(e(0), e(1)),
                pack(e(2), e(3)),
                pack(e(4), e(5)),
                pack(e(6), e(7)),
            ],
            _elem: PhantomData,
        }
    }

    /// Element `i` (0..8) of this lane's fragment (at [`coords`](Self::coords)).
    #[inline(always)]
    pub fn get(&self, i: usize) -> E {
        unpack(&self.regs, i)
    }

    /// The warp's fragment of the 16 × 16 block at `(row0, col0)` of a row-major matrix
    /// with `ld` elements per row in shared memory (`ldmatrix.sync.aligned.m8n8.x4`,
    /// PTX ISA 9.0 §9.7.14.5.15, sm_75): lane `l` points at row `row0 + l % 16`, column
    /// `col0 + 8 (l / 16)`. Every lane of the warp calls it together. Rows must start
    /// 16-byte aligned: `ld` and `col0` multiples of 8 (a trap otherwise), and the block
    /// inside the array (a trap otherwise).
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn load_shared<const N: usize, const A: usize>(
        tile: &crate::SharedArray<E, N, A>,
        row0: usize,
        col0: usize,
        ld: usize,
    ) -> Self {
        assert!(
            ld % 8 == 0 && col0 % 8 == 0 && col0 + 16 <= ld && (row0 + 16) * ld <= N,
            "FragA::load_shared: rows must be 16-byte aligned and the block inside the array"
        );
        let lane = crate::thread::lane_id() as usize;
        let row = tile.ptr((row0 + lane % 16) * ld + col0 + 8 * (lane / 16));
        // SAFETY: every lane's row lies in the array and is 16-byte aligned (checked
        // above); nothing writes it during the load.
        FragA {
            regs: unsafe { ldmatrix_at::<E, 4>(row, false) },
            _elem: PhantomData,
        }
    }
}

impl<E: MmaInput> FragA<E> {
    /// The warp's fragment of a 16 × 16 block of `A` in shared memory in any layout whose
    /// 8-element rows are contiguous (`ldmatrix.sync.aligned.m8n8.x4`, PTX ISA 9.0
    /// §9.7.14.5.15, sm_75): lane `l` passes `row_start`, the index in `tile` of element
    /// `(l % 16, 8 (l / 16))` of the block (its elements `+ 0..8` are that row's columns
    /// `8 (l / 16) + 0..8`). Every lane of the warp calls it together. `row_start` must be
    /// a multiple of 8 (16-byte aligned) and `row_start + 8 <= N` (a trap otherwise).
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn load_shared_rows<const N: usize, const A: usize>(
        tile: &crate::SharedArray<E, N, A>,
        row_start: usize,
    ) -> Self {
        let regs = ldmatrix::<E, N, A, 4>(tile, row_start, false);
        FragA {
            regs,
            _elem: PhantomData,
        }
    }
}

/// `ldmatrix.sync.aligned.m8n8.xM[.trans].shared.b16` with lane `l` naming row `l % 8` of
/// matrix `l / 8` (PTX ISA 9.0 §9.7.14.5.15), checked: `row_start` a multiple of 8 and the
/// row inside `tile` (a trap otherwise).
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
fn ldmatrix<E: MmaInput, const N: usize, const A: usize, const M: usize>(
    tile: &crate::SharedArray<E, N, A>,
    row_start: usize,
    trans: bool,
) -> [u32; M] {
    assert!(
        row_start % 8 == 0 && row_start + 8 <= N,
        "ldmatrix: each lane's row must be 16-byte aligned and inside the array"
    );
    // SAFETY: the row lies in the array and is 16-byte aligned (checked above).
    unsafe { ldmatrix_at::<E, M>(tile.ptr(row_start), trans) }
}

/// [`ldmatrix`] from each lane's row address, unchecked; lanes past `8 M` pass a row too
/// (any valid one: theirs is not read). Emulated by gathering the row addresses with
/// shuffles and reading the elements each lane receives.
///
/// # Safety
/// Every lane's `row` (all 32 lanes) points at 8 elements of shared memory, 16-byte
/// aligned, that no thread writes until all lanes have returned.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
unsafe fn ldmatrix_at<E: MmaInput, const M: usize>(
    row: crate::SharedPtr<E>,
    trans: bool,
) -> [u32; M] {
    on_device!("mma::ldmatrix", {
        let at = row.addr();
        let (mut r0, mut r1, mut r2, mut r3) = (0u32, 0u32, 0u32, 0u32);
        // SAFETY: the caller's contract; reads shared memory only.
        unsafe {
            match (M, trans) {
                (2, false) => core::arch::asm!("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {{{r0}, {r1}}}, [{a}];", r0 = out(reg32) r0, r1 = out(reg32) r1, a = in(reg32) at, options(nostack, readonly, preserves_flags)),
                (4, false) => core::arch::asm!("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [{a}];", r0 = out(reg32) r0, r1 = out(reg32) r1, r2 = out(reg32) r2, r3 = out(reg32) r3, a = in(reg32) at, options(nostack, readonly, preserves_flags)),
                (2, true) => core::arch::asm!("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {{{r0}, {r1}}}, [{a}];", r0 = out(reg32) r0, r1 = out(reg32) r1, a = in(reg32) at, options(nostack, readonly, preserves_flags)),
                (4, true) => core::arch::asm!("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{{r0}, {r1}, {r2}, {r3}}}, [{a}];", r0 = out(reg32) r0, r1 = out(reg32) r1, r2 = out(reg32) r2, r3 = out(reg32) r3, a = in(reg32) at, options(nostack, readonly, preserves_flags)),
                _ => unreachable!("ldmatrix: x2, x4, x2.trans or x4.trans"),
            }
        }
        let all = [r0, r1, r2, r3];
        core::array::from_fn(|i| all[i])
    }, emulated: {
        use crate::warp::shfl_sync;
        let lane = crate::thread::lane_id();
        let mut regs = [0u32; M];
        for (j, reg) in regs.iter_mut().enumerate() {
            let j = j as u32;
            let mut e = [0u32; 2];
            for (h, e) in e.iter_mut().enumerate() {
                let h = h as u32;
                // Lane L gets row L / 4, columns 2 (L % 4) + 0..2 of each matrix; the
                // transposed form gets column L / 4 of rows 2 (L % 4) + 0..2.
                let (src, col) = if trans {
                    (8 * j + 2 * (lane % 4) + h, lane / 4)
                } else {
                    (8 * j + lane / 4, 2 * (lane % 4) + h)
                };
                let start = shfl_sync(u32::MAX, row.addr(), src);
                // SAFETY: the caller's contract for lane `src`'s row.
                let v: E = unsafe { crate::SharedPtr::<E>::from_addr(start).add(col as usize).read() };
                *e = v.to_bits() as u32;
            }
            *reg = e[0] | e[1] << 16;
        }
        regs
    })
}

impl<E: MmaInput> FragA<E> {
    /// [`load_shared_rows`](Self::load_shared_rows) from each lane's row address in any
    /// shared memory (a [`SharedArray`](crate::SharedArray)'s or the launch's dynamic
    /// one), unchecked, for loops where the bounds checks would cost: lane `l` passes the
    /// address of element `(l % 16, 8 (l / 16))` of the 16 × 16 block
    /// (`ldmatrix.sync.aligned.m8n8.x4`, PTX ISA 9.0 §9.7.14.5.15, sm_75). Every lane of
    /// the warp calls it together.
    ///
    /// # Safety
    /// Every lane's `row` points at 8 elements of shared memory, 16-byte aligned, that no
    /// thread writes until all lanes have returned.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub unsafe fn load_shared_ptr(row: crate::SharedPtr<E>) -> Self {
        FragA {
            // SAFETY: the caller's contract.
            regs: unsafe { ldmatrix_at::<E, 4>(row, false) },
            _elem: PhantomData,
        }
    }
}

impl<E: MmaInput> FragB<E> {
    /// [`load_shared_rows`](Self::load_shared_rows) from each lane's row address,
    /// unchecked (`ldmatrix.sync.aligned.m8n8.x2`, PTX ISA 9.0 §9.7.14.5.15, sm_75): lane
    /// `l` passes the address of `(k, n) = (8 ((l / 8) % 2), l % 8)` of the K-major block
    /// (lanes 16..32 any valid row). Every lane of the warp calls it together.
    ///
    /// # Safety
    /// As for [`FragA::load_shared_ptr`].
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub unsafe fn load_shared_ptr(row: crate::SharedPtr<E>) -> Self {
        FragB {
            // SAFETY: the caller's contract.
            regs: unsafe { ldmatrix_at::<E, 2>(row, false) },
            _elem: PhantomData,
        }
    }

    /// [`load_shared_pair_rows`](Self::load_shared_pair_rows) from each lane's row
    /// address, unchecked (`ldmatrix.sync.aligned.m8n8.x4`, PTX ISA 9.0 §9.7.14.5.15,
    /// sm_75): lane `l` passes the address of `(k, n) = (8 ((l / 8) % 2), 8 (l / 16) +
    /// l % 8)` of the K-major 16 × 16 block. Every lane of the warp calls it together.
    ///
    /// # Safety
    /// As for [`FragA::load_shared_ptr`].
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub unsafe fn load_shared_pair_ptr(row: crate::SharedPtr<E>) -> [Self; 2] {
        // SAFETY: the caller's contract.
        Self::pair(unsafe { ldmatrix_at::<E, 4>(row, false) })
    }
}

impl<E: MmaInput> FragB<E> {
    /// All zeros (bits 0: `+0.0` for both input types), e.g. to fill an array of
    /// fragments before loading each.
    #[inline(always)]
    pub const fn zero() -> Self {
        FragB {
            regs: [0; 2],
            _elem: PhantomData,
        }
    }

    /// `(row, col)` (that is `(k, n)`) in the 16 × 8 tile of element `i` (0..4) of lane
    /// `lane`: row `2 (lane % 4) + i % 2` (+ 8 for `i` >= 2), column `lane / 4`.
    #[inline(always)]
    pub const fn coords(lane: u32, i: usize) -> (usize, usize) {
        let (g, t) = group(lane);
        (2 * t + i % 2 + 8 * (i / 2), g)
    }

    /// The calling lane's fragment, element `(row, col)` of the tile from `get`.
    #[inline(always)]
    pub fn load(get: impl Fn(usize, usize) -> E) -> Self {
        let lane = crate::thread::lane_id();
        let e = |i| {
            let (r, c) = Self::coords(lane, i);
            get(r, c)
        };
        FragB {
            regs: [pack(e(0), e(1)), pack(e(2), e(3))],
            _elem: PhantomData,
        }
    }

    /// Element `i` (0..4) of this lane's fragment (at [`coords`](Self::coords)).
    #[inline(always)]
    pub fn get(&self, i: usize) -> E {
        unpack(&self.regs, i)
    }

    /// The warp's fragment of the 16 × 8 block at `(row0, col0)` (`k`, `n`) of a
    /// row-major `k × n` matrix with `ld` elements per row in shared memory, transposed
    /// on the way (`ldmatrix.sync.aligned.m8n8.x2.trans`, PTX ISA 9.0 §9.7.14.5.15,
    /// sm_75): lanes 0..16 point at rows `row0 + l`, column `col0`. Every lane of the warp
    /// calls it together. Rows must start 16-byte aligned: `ld` and `col0` multiples of
    /// 8, and the block inside the array (a trap otherwise).
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn load_shared_trans<const N: usize, const A: usize>(
        tile: &crate::SharedArray<E, N, A>,
        row0: usize,
        col0: usize,
        ld: usize,
    ) -> Self {
        assert!(
            ld % 8 == 0 && col0 % 8 == 0 && col0 + 8 <= ld && (row0 + 16) * ld <= N,
            "FragB::load_shared_trans: rows must be 16-byte aligned and the block inside the array"
        );
        let lane = crate::thread::lane_id() as usize;
        let row = tile.ptr((row0 + lane % 16) * ld + col0);
        // SAFETY: every lane's row lies in the array and is 16-byte aligned (checked
        // above; lanes 16..32 repeat lanes 0..16); nothing writes it during the load.
        FragB {
            regs: unsafe { ldmatrix_at::<E, 2>(row, true) },
            _elem: PhantomData,
        }
    }
}

impl<E: MmaInput> FragB<E> {
    /// The two fragments of an `ldmatrix.x4`'s registers: matrices 0–1, then 2–3.
    #[inline(always)]
    fn pair([r0, r1, r2, r3]: [u32; 4]) -> [Self; 2] {
        [
            FragB {
                regs: [r0, r1],
                _elem: PhantomData,
            },
            FragB {
                regs: [r2, r3],
                _elem: PhantomData,
            },
        ]
    }

    /// Two neighbouring fragments of a row-major `k × n` matrix at once, transposed on the
    /// way: the 16 × 16 block at `(row0, col0)` (`k`, `n`), `[n 0..8, n 8..16]`
    /// (`ldmatrix.sync.aligned.m8n8.x4.trans`, PTX ISA 9.0 §9.7.14.5.15, sm_75): lane `l`
    /// points at row `row0 + l % 16`, column `col0 + 8 (l / 16)`. The same as two
    /// [`FragB::load_shared_trans`] at `col0` and `col0 + 8`, in one instruction. Every lane
    /// of the warp calls it together. Rows must start 16-byte aligned: `ld` and `col0`
    /// multiples of 8, and the block inside the array (a trap otherwise).
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn load_shared_trans_pair<const N: usize, const A: usize>(
        tile: &crate::SharedArray<E, N, A>,
        row0: usize,
        col0: usize,
        ld: usize,
    ) -> [Self; 2] {
        assert!(
            ld % 8 == 0 && col0 % 8 == 0 && col0 + 16 <= ld && (row0 + 16) * ld <= N,
            "FragB::load_shared_trans_pair: rows must be 16-byte aligned and the block inside the array"
        );
        let lane = crate::thread::lane_id() as usize;
        let row = tile.ptr((row0 + lane % 16) * ld + col0 + 8 * (lane / 16));
        // SAFETY: every lane's row lies in the array and is 16-byte aligned (checked
        // above); nothing writes it during the load.
        Self::pair(unsafe { ldmatrix_at::<E, 4>(row, true) })
    }
}

impl<E: MmaInput> FragB<E> {
    /// The warp's fragment of the 16 × 8 (`k × n`) block at `(k0, n0)` of `B` stored
    /// `n × k` row-major (K-major, as for `c = a · bᵀ`) with `ld` elements per row in
    /// shared memory, no transpose needed (`ldmatrix.sync.aligned.m8n8.x2`, PTX ISA 9.0
    /// §9.7.14.5.15, sm_75): lane `l` (0..16) points at stored row `n0 + l % 8`, column
    /// `k0 + 8 (l / 8)`. Every lane of the warp calls it together. Rows must start
    /// 16-byte aligned: `ld` and `k0` multiples of 8, and the block inside the array (a
    /// trap otherwise).
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn load_shared<const N: usize, const A: usize>(
        tile: &crate::SharedArray<E, N, A>,
        k0: usize,
        n0: usize,
        ld: usize,
    ) -> Self {
        assert!(
            ld % 8 == 0 && k0 % 8 == 0 && k0 + 16 <= ld && (n0 + 8) * ld <= N,
            "FragB::load_shared: rows must be 16-byte aligned and the block inside the array"
        );
        let lane = crate::thread::lane_id() as usize;
        Self::load_shared_rows(tile, (n0 + lane % 8) * ld + k0 + 8 * ((lane / 8) % 2))
    }

    /// The warp's fragment of a 16 × 8 (`k × n`) block of a K-major `B` (stored `n × k`)
    /// in shared memory in any layout whose 8-element rows (8 `k` of one `n`) are
    /// contiguous (`ldmatrix.sync.aligned.m8n8.x2`, PTX ISA 9.0 §9.7.14.5.15, sm_75):
    /// lane `l` passes `row_start`, the index in `tile` of `(k, n) = (8 ((l / 8) % 2),
    /// l % 8)` of the block (lanes 16..32 repeat lanes 0..16). Every lane of the warp
    /// calls it together. `row_start` must be a multiple of 8 and `row_start + 8 <= N` (a
    /// trap otherwise).
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn load_shared_rows<const N: usize, const A: usize>(
        tile: &crate::SharedArray<E, N, A>,
        row_start: usize,
    ) -> Self {
        let regs = ldmatrix::<E, N, A, 2>(tile, row_start, false);
        FragB {
            regs,
            _elem: PhantomData,
        }
    }

    /// Two neighbouring fragments at once: the 16 × 16 (`k × n`) block of a K-major `B`,
    /// `[n 0..8, n 8..16]` (`ldmatrix.sync.aligned.m8n8.x4`, PTX ISA 9.0 §9.7.14.5.15,
    /// sm_75): lane `l` passes the index in `tile` of `(k, n) = (8 ((l / 8) % 2),
    /// 8 (l / 16) + l % 8)` of the block. Every lane of the warp calls it together.
    /// `row_start` must be a multiple of 8 and `row_start + 8 <= N` (a trap otherwise).
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn load_shared_pair_rows<const N: usize, const A: usize>(
        tile: &crate::SharedArray<E, N, A>,
        row_start: usize,
    ) -> [Self; 2] {
        Self::pair(ldmatrix::<E, N, A, 4>(tile, row_start, false))
    }
}

impl Accum {
    /// All zeros.
    #[inline(always)]
    pub const fn zero() -> Self {
        Accum { vals: [0.0; 4] }
    }

    /// `(row, col)` in the 16 × 8 tile of element `i` (0..4) of lane `lane`: row
    /// `lane / 4` (+ 8 for `i` >= 2), column `2 (lane % 4) + i % 2`.
    #[inline(always)]
    pub const fn coords(lane: u32, i: usize) -> (usize, usize) {
        let (g, t) = group(lane);
        (g + 8 * (i / 2), 2 * t + i % 2)
    }

    /// The calling lane's fragment, element `(row, col)` of the tile from `get`.
    #[inline(always)]
    pub fn load(get: impl Fn(usize, usize) -> f32) -> Self {
        let lane = crate::thread::lane_id();
        let e = |i| {
            let (r, c) = Self::coords(lane, i);
            get(r, c)
        };
        Accum {
            vals: [e(0), e(1), e(2), e(3)],
        }
    }

    /// Element `i` (0..4) of this lane's fragment (at [`coords`](Self::coords)).
    #[inline(always)]
    pub fn get(&self, i: usize) -> f32 {
        self.vals[i]
    }

    /// Element `i` becomes `f(i, element)` for each of the lane's 4 elements (rows
    /// `lane / 4` for `i` 0, 1 and `lane / 4 + 8` for 2, 3, as [`coords`](Self::coords)
    /// says): a per-row scale, a mask, an exponential.
    #[inline(always)]
    pub fn map(&mut self, f: impl Fn(usize, f32) -> f32) {
        self.vals = [
            f(0, self.vals[0]),
            f(1, self.vals[1]),
            f(2, self.vals[2]),
            f(3, self.vals[3]),
        ];
    }

    /// Calls `put(row, col, value)` for each of the calling lane's 4 elements.
    #[inline(always)]
    pub fn store(&self, mut put: impl FnMut(usize, usize, f32)) {
        let lane = crate::thread::lane_id();
        for i in 0..4 {
            let (r, c) = Self::coords(lane, i);
            put(r, c, self.vals[i]);
        }
    }

    /// Calls `put(row, col, pair)` twice, for the calling lane's elements `(row, col)`
    /// and `(row, col + 1)` (`col` even) rounded to `bf16` (to nearest even) and packed
    /// into one 32-bit word, the first in the low half (`cvt.rn.bf16x2.f32`, PTX ISA 9.0
    /// §9.7.9.21, sm_80): one 4-byte store per pair into a row-major `bf16` output.
    #[inline(always)]
    pub fn store_bf16_pairs(&self, mut put: impl FnMut(usize, usize, u32)) {
        let (g, t) = group(crate::thread::lane_id());
        let [v0, v1, v2, v3] = self.vals;
        put(g, 2 * t, bf16x2(v0, v1));
        put(g + 8, 2 * t, bf16x2(v2, v3));
    }
}

/// `acc = a · b + acc` for the warp's 16 × 16 `a`, 16 × 8 `b` and 16 × 8 `acc`
/// (`mma.sync.aligned.m16n8k16.row.col.f32.E.E.f32`). Every lane of the warp calls it
/// together. sm_80.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn mma_m16n8k16<E: MmaInput + MmaAsm>(a: &FragA<E>, b: &FragB<E>, acc: &mut Accum) {
    on_device!("mma_m16n8k16", {
        E::mma(a, b, acc)
    }, emulated: {
        emulated_mma(a, b, acc)
    })
}

/// The instruction text per input type. Sealed with [`MmaInput`].
pub trait MmaAsm: MmaInput {
    /// Issues the `mma.sync` for this element type.
    fn mma(a: &FragA<Self>, b: &FragB<Self>, acc: &mut Accum)
    where
        Self: Sized;
}

macro_rules! mma_asm {
    ($t:ty, $ty:literal) => {
        impl MmaAsm for $t {
            #[inline(always)]
            fn mma(a: &FragA<Self>, b: &FragB<Self>, acc: &mut Accum) {
                on_device!("mma_m16n8k16", {
                    let [d0, d1, d2, d3] = &mut acc.vals;
                    // SAFETY: registers only; every lane of the warp executes it
                    // (`.aligned`, the documented contract).
                    unsafe {
                        core::arch::asm!(
                            concat!("mma.sync.aligned.m16n8k16.row.col.f32.", $ty, ".", $ty, ".f32 ",
                                "{{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{d0}, {d1}, {d2}, {d3}}};"),
                            d0 = inout(reg32) *d0, d1 = inout(reg32) *d1, d2 = inout(reg32) *d2, d3 = inout(reg32) *d3,
                            a0 = in(reg32) a.regs[0], a1 = in(reg32) a.regs[1], a2 = in(reg32) a.regs[2], a3 = in(reg32) a.regs[3],
                            b0 = in(reg32) b.regs[0], b1 = in(reg32) b.regs[1],
                            options(pure, nomem, nostack, preserves_flags),
                        );
                    }
                }, emulated: {
                    let _ = (a, b, acc);
                    unreachable!("the emulator computes mma without the instruction")
                })
            }
        }
    };
}
mma_asm!(bf16, "bf16");
mma_asm!(f16, "f16");

/// The emulator's `mma`: every lane gathers the warp's `a` and `b` registers with
/// shuffles, then computes its own 4 elements of `a · b + acc` in `f32`.
#[cfg(emulated)]
#[track_caller]
fn emulated_mma<E: MmaInput>(a: &FragA<E>, b: &FragB<E>, acc: &mut Accum) {
    use crate::warp::shfl_sync;
    const FULL: u32 = u32::MAX;
    let mut am = [[0f32; 16]; 16];
    let mut bm = [[0f32; 8]; 16];
    for src in 0..32u32 {
        let regs = [0, 1, 2, 3].map(|r| shfl_sync(FULL, a.regs[r], src));
        let fa = FragA::<E> {
            regs,
            _elem: PhantomData,
        };
        for i in 0..8 {
            let (r, c) = FragA::<E>::coords(src, i);
            am[r][c] = fa.get(i).to_f32();
        }
        let regs = [0, 1].map(|r| shfl_sync(FULL, b.regs[r], src));
        let fb = FragB::<E> {
            regs,
            _elem: PhantomData,
        };
        for i in 0..4 {
            let (r, c) = FragB::<E>::coords(src, i);
            bm[r][c] = fb.get(i).to_f32();
        }
    }
    let lane = crate::thread::lane_id();
    for i in 0..4 {
        let (r, c) = Accum::coords(lane, i);
        let mut sum = acc.vals[i];
        for (k, row) in bm.iter().enumerate() {
            sum += am[r][k] * row[c];
        }
        acc.vals[i] = sum;
    }
}

/// `lo` and `hi` as `bf16`, rounded to nearest even, `lo` in the low half.
#[inline(always)]
pub(crate) fn bf16x2(lo: f32, hi: f32) -> u32 {
    on_device!("mma::bf16x2", {
        let out: u32;
        // SAFETY: a conversion between registers.
        unsafe { core::arch::asm!("cvt.rn.bf16x2.f32 {d}, {hi}, {lo};", d = out(reg32) out, hi = in(reg32) hi, lo = in(reg32) lo, options(pure, nomem, nostack, preserves_flags)) };
        out
    }, emulated: {
        u32::from(bf16::from_f32(lo).to_bits()) | u32::from(bf16::from_f32(hi).to_bits()) << 16
    })
}

/// `x` rounded to TensorFloat-32 (8-bit exponent, 10-bit mantissa), to nearest with ties
/// away from zero, as an `f32` whose low 13 mantissa bits are zero (`cvt.rna.tf32.f32`,
/// PTX ISA 9.0 §9.7.9.21 "cvt", sm_80). NaN stays NaN; values that round past the largest
/// finite become infinite.
#[inline(always)]
pub fn to_tf32(x: f32) -> f32 {
    on_device!("mma::to_tf32", {
        let out: u32;
        // SAFETY: a conversion between registers.
        unsafe {
            core::arch::asm!(
                "cvt.rna.tf32.f32 {d}, {x};",
                d = out(reg32) out,
                x = in(reg32) x.to_bits(),
                options(pure, nomem, nostack, preserves_flags),
            )
        };
        f32::from_bits(out)
    }, emulated: {
        tf32_bits(x)
    })
}

/// [`to_tf32`] in software (the emulator's form).
#[cfg_attr(not(emulated), allow(dead_code))]
#[inline(always)]
fn tf32_bits(x: f32) -> f32 {
    if x.is_nan() {
        return f32::NAN;
    }
    // Adding half an ulp of tf32 to the magnitude bits rounds ties away from zero (the
    // sign bit is untouched); a carry into the exponent is the correct result.
    f32::from_bits((x.to_bits() + 0x1000) & !0x1fff)
}

/// A lane's part of a 16 × 8 row-major `A` of TensorFloat-32 values for
/// [`mma_m16n8k8_tf32`]: 4 elements, one per register (PTX ISA 9.0 §9.7.14.5.7 "Matrix
/// Fragments for mma.m16n8k8", `.tf32`).
#[derive(Debug, Clone, Copy)]
pub struct FragATf32 {
    regs: [u32; 4],
}

/// A lane's part of an 8 × 8 column-major (`k × n`) `B` of TensorFloat-32 values for
/// [`mma_m16n8k8_tf32`]: 2 elements.
#[derive(Debug, Clone, Copy)]
pub struct FragBTf32 {
    regs: [u32; 2],
}

impl FragATf32 {
    /// `(row, col)` in the 16 × 8 tile of element `i` (0..4) of lane `lane`: row
    /// `lane / 4` (+ 8 for odd `i`), column `lane % 4` (+ 4 for `i` >= 2).
    #[inline(always)]
    pub const fn coords(lane: u32, i: usize) -> (usize, usize) {
        let (g, t) = group(lane);
        (g + 8 * (i % 2), t + 4 * (i / 2))
    }

    /// The calling lane's fragment, element `(row, col)` of the tile from `get`, each
    /// rounded with [`to_tf32`].
    #[inline(always)]
    pub fn load(get: impl Fn(usize, usize) -> f32) -> Self {
        let lane = crate::thread::lane_id();
        let e = |i| {
            let (r, c) = Self::coords(lane, i);
            to_tf32(get(r, c)).to_bits()
        };
        FragATf32 {
            regs: [e(0), e(1), e(2), e(3)],
        }
    }

    /// Element `i` (0..4) of this lane's fragment (at [`coords`](Self::coords)), as the
    /// `f32` it holds (already a TensorFloat-32 value).
    #[inline(always)]
    pub fn get(&self, i: usize) -> f32 {
        f32::from_bits(self.regs[i])
    }
}

impl FragBTf32 {
    /// `(row, col)` (that is `(k, n)`) in the 8 × 8 tile of element `i` (0..2) of lane
    /// `lane`: row `lane % 4` (+ 4 for `i` = 1), column `lane / 4`.
    #[inline(always)]
    pub const fn coords(lane: u32, i: usize) -> (usize, usize) {
        let (g, t) = group(lane);
        (t + 4 * i, g)
    }

    /// The calling lane's fragment, element `(row, col)` of the tile from `get`, each
    /// rounded with [`to_tf32`].
    #[inline(always)]
    pub fn load(get: impl Fn(usize, usize) -> f32) -> Self {
        let lane = crate::thread::lane_id();
        let e = |i| {
            let (r, c) = Self::coords(lane, i);
            to_tf32(get(r, c)).to_bits()
        };
        FragBTf32 { regs: [e(0), e(1)] }
    }

    /// Element `i` (0..2) of this lane's fragment (at [`coords`](Self::coords)).
    #[inline(always)]
    pub fn get(&self, i: usize) -> f32 {
        f32::from_bits(self.regs[i])
    }
}

/// `acc = a · b + acc` for the warp's 16 × 8 `a`, 8 × 8 `b` (TensorFloat-32) and 16 × 8
/// `f32` `acc` (`mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`, PTX ISA 9.0
/// §9.7.14.5.14 "mma"; the accumulator layout is [`Accum`]'s). Every lane of the warp
/// calls it together. sm_80. Under the emulator the products (exact in `f32`) are summed in
/// `f32`, `k` in order.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn mma_m16n8k8_tf32(a: &FragATf32, b: &FragBTf32, acc: &mut Accum) {
    on_device!("mma_m16n8k8_tf32", {
        let [d0, d1, d2, d3] = &mut acc.vals;
        // SAFETY: registers only; every lane of the warp executes it (`.aligned`).
        unsafe {
            core::arch::asm!(
                "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{d0}, {d1}, {d2}, {d3}}};",
                d0 = inout(reg32) *d0, d1 = inout(reg32) *d1, d2 = inout(reg32) *d2, d3 = inout(reg32) *d3,
                a0 = in(reg32) a.regs[0], a1 = in(reg32) a.regs[1], a2 = in(reg32) a.regs[2], a3 = in(reg32) a.regs[3],
                b0 = in(reg32) b.regs[0], b1 = in(reg32) b.regs[1],
                options(pure, nomem, nostack, preserves_flags),
            );
        }
    }, emulated: {
        use crate::warp::shfl_sync;
        let mut am = [[0f32; 8]; 16];
        let mut bm = [[0f32; 8]; 8];
        for src in 0..32u32 {
            for i in 0..4 {
                let (r, c) = FragATf32::coords(src, i);
                am[r][c] = f32::from_bits(shfl_sync(u32::MAX, a.regs[i], src));
            }
            for i in 0..2 {
                let (r, c) = FragBTf32::coords(src, i);
                bm[r][c] = f32::from_bits(shfl_sync(u32::MAX, b.regs[i], src));
            }
        }
        let lane = crate::thread::lane_id();
        for i in 0..4 {
            let (r, c) = Accum::coords(lane, i);
            let mut sum = acc.vals[i];
            for (k, row) in bm.iter().enumerate() {
                sum += am[r][k] * row[c];
            }
            acc.vals[i] = sum;
        }
    })
}

#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
impl Accum {
    /// Stores the warp's 16 × 16 block `[left, right]` (columns 0..8 and 8..16) rounded to
    /// `bf16` (to nearest even) at `(row0, col0)` of a row-major `bf16` tile with `ld`
    /// elements per row in shared memory (`stmatrix.sync.aligned.m8n8.x4.shared.b16`, PTX
    /// ISA 9.0 §9.7.14.5.16 "stmatrix", sm_90): lane `l` points at row `row0 + l % 16`,
    /// column `col0 + 8 (l / 16)`. Every lane of the warp calls it together. Rows must
    /// start 16-byte aligned: `ld` and `col0` multiples of 8, and the block inside the
    /// array (a trap otherwise).
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn store_pair_shared_bf16<const N: usize, const A: usize>(
        pair: &[Accum; 2],
        tile: &crate::SharedArray<bf16, N, A>,
        row0: usize,
        col0: usize,
        ld: usize,
    ) {
        assert!(
            ld % 8 == 0 && col0 % 8 == 0 && col0 + 16 <= ld && (row0 + 16) * ld <= N,
            "Accum::store_pair_shared_bf16: rows must be 16-byte aligned and the block inside the array"
        );
        let lane = crate::thread::lane_id() as usize;
        let row = tile.ptr((row0 + lane % 16) * ld + col0 + 8 * (lane / 16));
        // SAFETY: every lane's row lies in the array, 16-byte aligned (checked above).
        unsafe { Self::store_pair_shared_bf16_ptr(pair, row) }
    }

    /// [`store_pair_shared_bf16`](Self::store_pair_shared_bf16) to each lane's row address
    /// in any layout whose 8-element rows are contiguous (e.g. XOR-swizzled), unchecked:
    /// lane `l` passes the address of element `(l % 16, 8 (l / 16))` of the 16 × 16 block
    /// (`stmatrix.sync.aligned.m8n8.x4.shared.b16`, PTX ISA 9.0 §9.7.14.5.16, sm_90).
    /// Every lane of the warp calls it together.
    ///
    /// # Safety
    /// Every lane's `row` points at 8 elements of shared memory, 16-byte aligned, that no
    /// other thread accesses until a barrier after all lanes have returned.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub unsafe fn store_pair_shared_bf16_ptr(pair: &[Accum; 2], row: crate::SharedPtr<bf16>) {
        let [l, r] = pair;
        // Matrix j of the x4: rows 0..8 and 8..16 of the left block, then of the right;
        // each lane holds row lane / 4, columns 2 (lane % 4) + 0..2 of each.
        let regs = [
            bf16x2(l.vals[0], l.vals[1]),
            bf16x2(l.vals[2], l.vals[3]),
            bf16x2(r.vals[0], r.vals[1]),
            bf16x2(r.vals[2], r.vals[3]),
        ];
        // SAFETY: the caller's contract.
        unsafe { stmatrix_x4(regs, row) }
    }
}

/// `stmatrix.sync.aligned.m8n8.x4.shared.b16` (PTX ISA 9.0 §9.7.14.5.16, sm_90): matrix
/// `j` (`regs[j]` of each lane: row `lane / 4`, the pair of columns `2 (lane % 4)`) goes
/// to the eight 16-byte rows whose addresses lanes `8 j .. 8 j + 8` pass in `row`.
///
/// # Safety
/// As [`Accum::store_pair_shared_bf16_ptr`]: every lane's `row` points at 8 elements of
/// shared memory, 16-byte aligned, that no other thread accesses until a barrier after
/// all lanes have returned. Every lane of the warp calls it together.
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub(crate) unsafe fn stmatrix_x4(regs: [u32; 4], row: crate::SharedPtr<bf16>) {
    on_device!("stmatrix", {
        // SAFETY: the caller's contract; writes shared memory only.
        unsafe {
            core::arch::asm!(
                "stmatrix.sync.aligned.m8n8.x4.shared.b16 [{a}], {{{r0}, {r1}, {r2}, {r3}}};",
                a = in(reg32) row.addr(),
                r0 = in(reg32) regs[0], r1 = in(reg32) regs[1], r2 = in(reg32) regs[2], r3 = in(reg32) regs[3],
                options(nostack, preserves_flags),
            );
        }
    }, emulated: {
        use crate::warp::shfl_sync;
        let lane = crate::thread::lane_id();
        for (j, reg) in regs.iter().enumerate() {
            let start = shfl_sync(u32::MAX, row.addr(), 8 * j as u32 + lane / 4);
            // SAFETY: the caller's contract for lane 8 j + lane / 4's row; the pair
            // is 4-byte aligned inside it.
            unsafe { crate::SharedPtr::<u32>::from_addr(start + 4 * (lane % 4)).write(*reg) };
        }
    })
}
