//! Warp-level operations: shuffles, votes, match, reductions, the active mask.
//!
//! Every `*_sync` function takes a `mask` (bit `i` = lane `i`) of the lanes
//! that take part; the calling lane must be in it, and every lane in it must
//! execute the same call with the same mask (PTX ISA 9.0, instructions
//! `shfl.sync`, `vote.sync`, `match.sync`, `redux.sync`). [`FULL_MASK`] is
//! the whole warp.
//! All of them are LLVM NVVM intrinsics, which LLVM keeps `convergent`.
//!
//! Shuffles move 32-bit values in one `shfl.sync` and 64-bit values in two.
//! `shfl_sync`, `shfl_up_sync`, `shfl_down_sync` and `shfl_xor_sync` cover
//! the full warp (32 lanes); their `*_width` forms take CUDA's optional
//! `width` (see [Segments](#segments-width)).
//!
//! # Segments (`width`)
//!
//! `width` (a power of two, 1 to 32) splits the warp into `32 / width`
//! segments of consecutive lanes; lane `l` is at position `l % width` of
//! segment `l / width`. Each shuffle computes a source lane `j`; when `j` is
//! out of range the lane gets its own `value` back. With `b` the third
//! argument, only its low five bits count (`b[4:0]`), so `b` and `b % 32`
//! act the same:
//!
//! | function | `j` | own value when |
//! |---|---|---|
//! | [`shfl_sync_width`] | `(l & !(width - 1)) + b % width` | never |
//! | [`shfl_up_sync_width`] | `l - b % 32` | `l % width < b % 32` |
//! | [`shfl_down_sync_width`] | `l + b % 32` | `l % width + b % 32 >= width` |
//! | [`shfl_xor_sync_width`] | `l ^ (b % 32)` | `j / width > l / width` (a later segment) |
//!
//! So `xor` may read an *earlier* segment. Sources: CUDA C++ Programming
//! Guide, "Warp Shuffle Functions" (the rules per function); PTX ISA 9.0,
//! `shfl.sync` (the semantics: `bval = b[4:0]`, the segment mask in `c[12:8]`,
//! the clamp lane in `c[4:0]`; the `b[4:0]` rule differs from the Guide's
//! wording for `b >= 32`). A width form lowers to the same
//! `llvm.nvvm.shfl.sync.*` intrinsic with `c = ((32 - width) << 8) | clamp`,
//! `clamp` 31 for idx/down/bfly and 0 for up (as CUDA's own headers compute
//! it); `width == 32` is exactly the plain function.
//!
//! Under the emulator (feature `emulator`) each call is a meeting of the
//! lanes of `mask` (see `device_std::emulator`), which also reports a lane
//! outside its own mask, two operations under one mask, and a shuffle that
//! reads a lane outside `mask`.

#[cfg(emulated)]
use crate::emulator::warp::{collective as emulated, shuffle, WarpOp};
use crate::host::on_device;
#[cfg(target_arch = "nvptx64")]
use crate::intrinsics as llvm;

/// All 32 lanes.
pub const FULL_MASK: u32 = 0xffff_ffff;

/// `c` operand of `shfl.sync` for a 32-lane segment: clamp at lane 31 (idx,
/// down, bfly) or at lane 0 (up).
const CLAMP_HIGH: u32 = 0x1f;
const CLAMP_LOW: u32 = 0;

/// The `c` operand of `shfl.sync` for segments of `width` lanes: segment
/// mask `32 - width` in bits 12:8, `clamp` in bits 4:0 (PTX ISA 9.0
/// `shfl.sync`). Panics unless `width` is a power of two in 1..=32.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
const fn segment_c(width: u32, clamp: u32) -> u32 {
    assert!(
        width.is_power_of_two() && width <= 32,
        "shuffle width must be a power of two in 1..=32"
    );
    ((32 - width) << 8) | clamp
}

/// A value a shuffle can move: 32-bit values in one `shfl.sync`, 64-bit
/// values as two. Sealed.
pub trait Shuffle: Copy + sealed::Sealed {
    /// Applies the 32-bit shuffle `f` to every 32-bit half of `self`.
    #[doc(hidden)]
    fn map_words(self, f: impl FnMut(u32) -> u32) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! shuffle32 {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)]
            fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
                <$t>::from_ne_bytes(f(u32::from_ne_bytes(self.to_ne_bytes())).to_ne_bytes())
            }
        }
    )*};
}
shuffle32!(u32, i32, f32);

macro_rules! shuffle64 {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Shuffle for $t {
            #[inline(always)]
            fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
                let bits = u64::from_ne_bytes(self.to_ne_bytes());
                let lo = f(bits as u32) as u64;
                let hi = f((bits >> 32) as u32) as u64;
                <$t>::from_ne_bytes((lo | (hi << 32)).to_ne_bytes())
            }
        }
    )*};
}
shuffle64!(u64, i64, f64);

/// `__shfl_sync(mask, value, src_lane)`: `value` from lane `src_lane % 32`
/// (`shfl.sync.idx`, PTX ISA 9.0). Segments: [`shfl_sync_width`].
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn shfl_sync<T: Shuffle>(mask: u32, value: T, src_lane: u32) -> T {
    on_device!("warp::shfl_sync", {
        // SAFETY: a warp shuffle; the mask rule is the caller's (module docs).
        value.map_words(|w| unsafe { llvm::shfl_idx_i32(mask, w, src_lane, CLAMP_HIGH) })
    }, emulated: {
        let site = core::panic::Location::caller();
        value.map_words(|w| {
            shuffle(WarpOp::ShflIdx, mask, w as u64, src_lane, CLAMP_HIGH, site) as u32
        })
    })
}

/// `__shfl_up_sync(mask, value, delta)`: `value` from lane
/// `lane_id - delta % 32`; lanes below `delta % 32` keep their own value
/// (`shfl.sync.up`, PTX ISA 9.0, which reads `delta[4:0]`). Segments:
/// [`shfl_up_sync_width`].
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn shfl_up_sync<T: Shuffle>(mask: u32, value: T, delta: u32) -> T {
    on_device!("warp::shfl_up_sync", {
        // SAFETY: as for `shfl_sync`.
        value.map_words(|w| unsafe { llvm::shfl_up_i32(mask, w, delta, CLAMP_LOW) })
    }, emulated: {
        let site = core::panic::Location::caller();
        value.map_words(|w| shuffle(WarpOp::ShflUp, mask, w as u64, delta, CLAMP_LOW, site) as u32)
    })
}

/// `__shfl_down_sync(mask, value, delta)`: `value` from lane
/// `lane_id + delta % 32`; lanes whose source would be past 31 keep their own
/// value (`shfl.sync.down`, PTX ISA 9.0, which reads `delta[4:0]`). Segments:
/// [`shfl_down_sync_width`].
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn shfl_down_sync<T: Shuffle>(mask: u32, value: T, delta: u32) -> T {
    on_device!("warp::shfl_down_sync", {
        // SAFETY: as for `shfl_sync`.
        value.map_words(|w| unsafe { llvm::shfl_down_i32(mask, w, delta, CLAMP_HIGH) })
    }, emulated: {
        let site = core::panic::Location::caller();
        value.map_words(|w| {
            shuffle(WarpOp::ShflDown, mask, w as u64, delta, CLAMP_HIGH, site) as u32
        })
    })
}

/// `__shfl_xor_sync(mask, value, lane_mask)`: `value` from lane
/// `lane_id ^ (lane_mask % 32)` (`shfl.sync.bfly`, PTX ISA 9.0, the butterfly
/// of reductions). Segments: [`shfl_xor_sync_width`].
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn shfl_xor_sync<T: Shuffle>(mask: u32, value: T, lane_mask: u32) -> T {
    on_device!("warp::shfl_xor_sync", {
        // SAFETY: as for `shfl_sync`.
        value.map_words(|w| unsafe { llvm::shfl_bfly_i32(mask, w, lane_mask, CLAMP_HIGH) })
    }, emulated: {
        let site = core::panic::Location::caller();
        value.map_words(|w| {
            shuffle(WarpOp::ShflXor, mask, w as u64, lane_mask, CLAMP_HIGH, site) as u32
        })
    })
}

/// `__shfl_sync(mask, value, src_lane, width)`: `value` from lane
/// `(lane_id & !(width - 1)) + src_lane % width`, the lane at position
/// `src_lane % width` of the caller's segment (`shfl.sync.idx` with
/// `c = ((32 - width) << 8) | 31`; CUDA C++ Programming Guide, "Warp Shuffle
/// Functions"; PTX ISA 9.0 `shfl.sync`).
/// Rules: [Segments](crate::warp#segments-width).
///
/// `value` is any [`Shuffle`] type (a 64-bit one moves as two words, each
/// with the same `c`); `src_lane` and `width` are in lanes; `width == 32` is
/// [`shfl_sync`].
///
/// # Panics
/// Unless `width` is a power of two in 1..=32: on the GPU the kernel traps
/// (CUDA leaves such a width undefined); under the emulator the launch fails
/// with `EmulatorError::Panic` at the caller's line. A constant `width`
/// folds the check away.
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn shfl_sync_width<T: Shuffle>(mask: u32, value: T, src_lane: u32, width: u32) -> T {
    let c = segment_c(width, CLAMP_HIGH);
    on_device!("warp::shfl_sync_width", {
        // SAFETY: as for `shfl_sync`.
        value.map_words(|w| unsafe { llvm::shfl_idx_i32(mask, w, src_lane, c) })
    }, emulated: {
        let site = core::panic::Location::caller();
        value.map_words(|w| shuffle(WarpOp::ShflIdx, mask, w as u64, src_lane, c, site) as u32)
    })
}

/// `__shfl_up_sync(mask, value, delta, width)`: `value` from lane
/// `lane_id - delta % 32`; a lane keeps its own value when
/// `lane_id % width < delta % 32` (the source would be in an earlier segment)
/// (`shfl.sync.up` with `c = (32 - width) << 8`; CUDA C++ Programming Guide,
/// "Warp Shuffle Functions"; PTX ISA 9.0 `shfl.sync`, which uses only
/// `delta`'s low five bits). Rules: [Segments](crate::warp#segments-width).
///
/// `value` is any [`Shuffle`] type; `delta` and `width` are in lanes;
/// `width == 32` is [`shfl_up_sync`].
///
/// # Panics
/// Unless `width` is a power of two in 1..=32, as [`shfl_sync_width`].
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn shfl_up_sync_width<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> T {
    let c = segment_c(width, CLAMP_LOW);
    on_device!("warp::shfl_up_sync_width", {
        // SAFETY: as for `shfl_sync`.
        value.map_words(|w| unsafe { llvm::shfl_up_i32(mask, w, delta, c) })
    }, emulated: {
        let site = core::panic::Location::caller();
        value.map_words(|w| shuffle(WarpOp::ShflUp, mask, w as u64, delta, c, site) as u32)
    })
}

/// `__shfl_down_sync(mask, value, delta, width)`: `value` from lane
/// `lane_id + delta % 32`; a lane keeps its own value when
/// `lane_id % width + delta % 32 >= width` (the source would be in a later
/// segment) (`shfl.sync.down` with `c = ((32 - width) << 8) | 31`; CUDA C++
/// Programming Guide, "Warp Shuffle Functions"; PTX ISA 9.0 `shfl.sync`).
/// Rules: [Segments](crate::warp#segments-width).
///
/// `value` is any [`Shuffle`] type; `delta` and `width` are in lanes;
/// `width == 32` is [`shfl_down_sync`].
///
/// # Panics
/// Unless `width` is a power of two in 1..=32, as [`shfl_sync_width`].
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn shfl_down_sync_width<T: Shuffle>(mask: u32, value: T, delta: u32, width: u32) -> T {
    let c = segment_c(width, CLAMP_HIGH);
    on_device!("warp::shfl_down_sync_width", {
        // SAFETY: as for `shfl_sync`.
        value.map_words(|w| unsafe { llvm::shfl_down_i32(mask, w, delta, c) })
    }, emulated: {
        let site = core::panic::Location::caller();
        value.map_words(|w| shuffle(WarpOp::ShflDown, mask, w as u64, delta, c, site) as u32)
    })
}

/// `__shfl_xor_sync(mask, value, lane_mask, width)`: `value` from lane
/// `j = lane_id ^ (lane_mask % 32)`, except that a lane keeps its own value
/// when `j` lies in a *later* segment (`j / width > lane_id / width`); a
/// source in an earlier segment is read (`shfl.sync.bfly` with
/// `c = ((32 - width) << 8) | 31`, whose only bound is `j <= ` the last lane
/// of the caller's segment; CUDA C++ Programming Guide, "Warp Shuffle
/// Functions"; PTX ISA 9.0 `shfl.sync`). With `lane_mask < width` every
/// lane stays in its segment. Rules: [Segments](crate::warp#segments-width).
///
/// `value` is any [`Shuffle`] type; `lane_mask` is a lane-index bit mask,
/// `width` is in lanes; `width == 32` is [`shfl_xor_sync`].
///
/// # Panics
/// Unless `width` is a power of two in 1..=32, as [`shfl_sync_width`].
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn shfl_xor_sync_width<T: Shuffle>(mask: u32, value: T, lane_mask: u32, width: u32) -> T {
    let c = segment_c(width, CLAMP_HIGH);
    on_device!("warp::shfl_xor_sync_width", {
        // SAFETY: as for `shfl_sync`.
        value.map_words(|w| unsafe { llvm::shfl_bfly_i32(mask, w, lane_mask, c) })
    }, emulated: {
        let site = core::panic::Location::caller();
        value.map_words(|w| shuffle(WarpOp::ShflXor, mask, w as u64, lane_mask, c, site) as u32)
    })
}

/// `__all_sync(mask, pred)`: `true` when `pred` holds on every lane of
/// `mask` (`vote.sync.all.pred`).
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn all_sync(mask: u32, pred: bool) -> bool {
    // SAFETY: a warp vote; the mask rule is the caller's.
    on_device!("warp::all_sync", { unsafe { llvm::vote_all(mask, pred) } }, emulated: {
        emulated(WarpOp::All, mask, pred as u64, 0, core::panic::Location::caller()) != 0
    })
}

/// `__any_sync(mask, pred)`: `true` when `pred` holds on some lane of
/// `mask` (`vote.sync.any.pred`).
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn any_sync(mask: u32, pred: bool) -> bool {
    // SAFETY: a warp vote; the mask rule is the caller's.
    on_device!("warp::any_sync", { unsafe { llvm::vote_any(mask, pred) } }, emulated: {
        emulated(WarpOp::Any, mask, pred as u64, 0, core::panic::Location::caller()) != 0
    })
}

/// `__ballot_sync(mask, pred)`: bit `i` set when lane `i` of `mask` has
/// `pred` (`vote.sync.ballot.b32`).
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn ballot_sync(mask: u32, pred: bool) -> u32 {
    // SAFETY: a warp vote; the mask rule is the caller's.
    on_device!("warp::ballot_sync", {
        unsafe { llvm::vote_ballot(mask, pred) }
    }, emulated: {
        emulated(WarpOp::Ballot, mask, pred as u64, 0, core::panic::Location::caller()) as u32
    })
}

/// `__activemask()`: the lanes currently executing this code
/// (`activemask.b32`).
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn activemask() -> u32 {
    // SAFETY: reads the active mask.
    on_device!("warp::activemask", { unsafe { llvm::activemask() } }, emulated: {
        crate::emulator::warp::activemask(core::panic::Location::caller())
    })
}

/// A value `match_*_sync` compares: 32 or 64 bits, compared bit for bit.
/// Sealed.
pub trait MatchValue: Copy + sealed::Sealed {
    #[doc(hidden)]
    #[cfg_attr(emulated, track_caller)]
    fn match_any(self, mask: u32) -> u32;
}

macro_rules! match_value {
    ($($t:ty => $bits:ty, $intrinsic:ident;)*) => {$(
        impl MatchValue for $t {
            #[inline(always)]
            #[cfg_attr(emulated, track_caller)]
            fn match_any(self, mask: u32) -> u32 {
                let bits = <$bits>::from_ne_bytes(self.to_ne_bytes());
                // SAFETY: a warp match; the mask rule is the caller's.
                on_device!("warp::match_any_sync", { unsafe { llvm::$intrinsic(mask, bits) } }, emulated: {
                    let op = if core::mem::size_of::<$bits>() == 8 { WarpOp::Match64 } else { WarpOp::Match32 };
                    emulated(op, mask, bits as u64, 0, core::panic::Location::caller()) as u32
                })
            }
        }
    )*};
}
match_value! {
    u32 => u32, match_any_i32;
    i32 => u32, match_any_i32;
    f32 => u32, match_any_i32;
    u64 => u64, match_any_i64;
    i64 => u64, match_any_i64;
    f64 => u64, match_any_i64;
}

/// `__match_any_sync(mask, value)`: the lanes of `mask` whose `value` has the
/// same bits as this lane's (`match.any.sync`, sm_70+).
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn match_any_sync<T: MatchValue>(mask: u32, value: T) -> u32 {
    value.match_any(mask)
}

/// `__match_all_sync(mask, value, &pred)`: `Some(mask)` when every lane of
/// `mask` has the same bits, else `None` (`match.all.sync`'s result, computed
/// as `match.any.sync == mask` so that it stays a convergent intrinsic).
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn match_all_sync<T: MatchValue>(mask: u32, value: T) -> Option<u32> {
    if value.match_any(mask) == mask {
        Some(mask)
    } else {
        None
    }
}

/// The reduction `redux_sync` performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduxOp {
    /// Wrapping sum.
    Add,
    /// Minimum (signed for `i32`, unsigned for `u32`).
    Min,
    /// Maximum (signed for `i32`, unsigned for `u32`).
    Max,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise xor.
    Xor,
}

/// A value `redux_sync` reduces: `u32` or `i32`. Sealed.
pub trait ReduxValue: Copy + sealed::Sealed {
    #[doc(hidden)]
    #[cfg_attr(emulated, track_caller)]
    fn redux(self, op: ReduxOp, mask: u32) -> Self;
}

impl ReduxValue for u32 {
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    fn redux(self, op: ReduxOp, mask: u32) -> u32 {
        on_device!("warp::redux_sync", {
            // SAFETY: a warp reduction; the mask rule is the caller's.
            unsafe {
                match op {
                    ReduxOp::Add => llvm::redux_add(self, mask),
                    ReduxOp::Min => llvm::redux_umin(self, mask),
                    ReduxOp::Max => llvm::redux_umax(self, mask),
                    ReduxOp::And => llvm::redux_and(self, mask),
                    ReduxOp::Or => llvm::redux_or(self, mask),
                    ReduxOp::Xor => llvm::redux_xor(self, mask),
                }
            }
        }, emulated: {
            use crate::emulator::warp::ReduxKind as K;
            let kind = match op {
                ReduxOp::Add => K::Add,
                ReduxOp::Min => K::UMin,
                ReduxOp::Max => K::UMax,
                ReduxOp::And => K::And,
                ReduxOp::Or => K::Or,
                ReduxOp::Xor => K::Xor,
            };
            emulated(WarpOp::Redux(kind), mask, self as u64, 0, core::panic::Location::caller()) as u32
        })
    }
}

impl ReduxValue for i32 {
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    fn redux(self, op: ReduxOp, mask: u32) -> i32 {
        match op {
            // SAFETY: a warp reduction; the mask rule is the caller's.
            ReduxOp::Min => on_device!("warp::redux_sync", {
                unsafe { llvm::redux_min(self, mask) }
            }, emulated: {
                let kind = crate::emulator::warp::ReduxKind::SMin;
                emulated(WarpOp::Redux(kind), mask, self as u32 as u64, 0, core::panic::Location::caller()) as u32 as i32
            }),
            // SAFETY: as above.
            ReduxOp::Max => on_device!("warp::redux_sync", {
                unsafe { llvm::redux_max(self, mask) }
            }, emulated: {
                let kind = crate::emulator::warp::ReduxKind::SMax;
                emulated(WarpOp::Redux(kind), mask, self as u32 as u64, 0, core::panic::Location::caller()) as u32 as i32
            }),
            // Add and the bitwise operations are the same on the bits.
            other => (self as u32).redux(other, mask) as i32,
        }
    }
}

/// `__reduce_*_sync(mask, value)`: `op` over `value` of every lane of
/// `mask`, returned to all of them (`redux.sync`, **sm_80+**; on older
/// targets `ptxas` rejects the module).
#[inline(always)]
#[cfg_attr(emulated, track_caller)]
pub fn redux_sync<T: ReduxValue>(op: ReduxOp, mask: u32, value: T) -> T {
    value.redux(op, mask)
}
