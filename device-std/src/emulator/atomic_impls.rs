//! The CPU model of [`Atomic`] and [`AtomicBits`]: `core::sync::atomic` on
//! the same address, sequentially consistent whatever `Ordering` and `Scope`
//! ask (stronger is always allowed). Shared-window addresses are checked
//! like any shared access ([`Access::Atomic`]: in bounds, initialised, not
//! racing with a plain access). `f32`/`f64` add, min and max loop on
//! compare-exchange of the bits; min and max keep `f32::min`/`max`
//! semantics (a NaN operand leaves the value alone), as the device's loop.

use super::{sealed, Addr, Atomic, AtomicBits, Ordering, Scope};
use crate::emulator::shared_mem::{self, Access};
use core::mem::size_of;
use core::sync::atomic::Ordering::SeqCst;
use core::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64};

/// The host address of an atomic's operand.
fn locate<T>(at: Addr<T>) -> *mut T {
    match at {
        Addr::Generic(p) => p,
        Addr::Shared(a) => {
            shared_mem::access(a, size_of::<T>(), size_of::<T>(), Access::Atomic).cast()
        }
    }
}

/// `&Atomic*` over the operand of `at`.
///
/// Used only inside the trait methods, whose callers promise (the atomic
/// functions' `# Safety`) that the operand is valid, aligned to its size,
/// and accessed only atomically during the operation.
macro_rules! cell {
    ($at:expr, $cell:ty) => {
        // SAFETY: the caller's contract above; `$cell` has the size and
        // alignment of the operand (its bits, for floats).
        unsafe { <$cell>::from_ptr(locate($at).cast()) }
    };
}

/// Replaces a float's bits in `cell` by those of `f(old)` atomically;
/// evaluates to `old`.
macro_rules! update {
    ($cell:expr, $t:ty, $f:expr) => {{
        let f = $f;
        let old = $cell
            .fetch_update(SeqCst, SeqCst, |b| Some(f(<$t>::from_bits(b)).to_bits()))
            .unwrap_or_else(|b| b);
        <$t>::from_bits(old)
    }};
}

macro_rules! int_model {
    ($t:ty, $cell:ty) => {
        impl sealed::Sealed for $t {}

        impl Atomic for $t {
            unsafe fn swap(at: Addr<Self>, v: Self, _: Ordering, _: Scope) -> Self {
                cell!(at, $cell).swap(v, SeqCst)
            }
            unsafe fn cas(at: Addr<Self>, c: Self, n: Self, _: Ordering, _: Scope) -> Self {
                match cell!(at, $cell).compare_exchange(c, n, SeqCst, SeqCst) {
                    Ok(old) | Err(old) => old,
                }
            }
            unsafe fn add(at: Addr<Self>, v: Self, _: Ordering, _: Scope) -> Self {
                cell!(at, $cell).fetch_add(v, SeqCst)
            }
            unsafe fn min(at: Addr<Self>, v: Self, _: Ordering, _: Scope) -> Self {
                cell!(at, $cell).fetch_min(v, SeqCst)
            }
            unsafe fn max(at: Addr<Self>, v: Self, _: Ordering, _: Scope) -> Self {
                cell!(at, $cell).fetch_max(v, SeqCst)
            }
        }

        impl AtomicBits for $t {
            unsafe fn and(at: Addr<Self>, v: Self, _: Ordering, _: Scope) -> Self {
                cell!(at, $cell).fetch_and(v, SeqCst)
            }
            unsafe fn or(at: Addr<Self>, v: Self, _: Ordering, _: Scope) -> Self {
                cell!(at, $cell).fetch_or(v, SeqCst)
            }
            unsafe fn xor(at: Addr<Self>, v: Self, _: Ordering, _: Scope) -> Self {
                cell!(at, $cell).fetch_xor(v, SeqCst)
            }
        }
    };
}

int_model!(u32, AtomicU32);
int_model!(i32, AtomicI32);
int_model!(u64, AtomicU64);
int_model!(i64, AtomicI64);

macro_rules! float_model {
    ($t:ty, $cell:ty) => {
        impl sealed::Sealed for $t {}

        impl Atomic for $t {
            unsafe fn swap(at: Addr<Self>, v: Self, _: Ordering, _: Scope) -> Self {
                <$t>::from_bits(cell!(at, $cell).swap(v.to_bits(), SeqCst))
            }
            unsafe fn cas(at: Addr<Self>, c: Self, n: Self, _: Ordering, _: Scope) -> Self {
                let cell = cell!(at, $cell);
                match cell.compare_exchange(c.to_bits(), n.to_bits(), SeqCst, SeqCst) {
                    Ok(old) | Err(old) => <$t>::from_bits(old),
                }
            }
            unsafe fn add(at: Addr<Self>, v: Self, _: Ordering, _: Scope) -> Self {
                update!(cell!(at, $cell), $t, |old: $t| old + v)
            }
            unsafe fn min(at: Addr<Self>, v: Self, _: Ordering, _: Scope) -> Self {
                update!(cell!(at, $cell), $t, |old: $t| old.min(v))
            }
            unsafe fn max(at: Addr<Self>, v: Self, _: Ordering, _: Scope) -> Self {
                update!(cell!(at, $cell), $t, |old: $t| old.max(v))
            }
        }
    };
}

float_model!(f32, AtomicU32);
float_model!(f64, AtomicU64);
