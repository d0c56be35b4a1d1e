//! Scoped atomics on global and shared memory (PTX ISA 9.0, instruction
//! `atom`, and the "Memory Consistency Model" chapter; sm_70+).
//!
//! Each operation takes an [`Ordering`] (`.relaxed`, `.acquire`, `.release`,
//! `.acq_rel`) and a [`Scope`] (`.cta`, `.gpu`, `.sys`): the set of threads
//! with which it is atomic and ordered. The functions at this level take a
//! generic address (`*mut T`: global or shared memory alike, `atom` with no
//! state space); those in [`shared`] take a [`SharedPtr`] and use
//! `atom.shared`, which avoids the generic-to-shared translation.
//!
//! | operation | `u32` | `i32` | `u64` | `i64` | `f32` | `f64` |
//! |---|---|---|---|---|---|---|
//! | `fetch_add` | `add.u32` | `add.s32` | `add.u64` | `add.u64` | `add.f32` | `add.f64` |
//! | `fetch_min`, `fetch_max` | `.u32` | `.s32` | `.u64` | `.s64` | CAS loop | CAS loop |
//! | `fetch_and`, `fetch_or`, `fetch_xor` | `.b32` | `.b32` | `.b64` | `.b64` | — | — |
//! | `swap` | `exch.b32` | `exch.b32` | `exch.b64` | `exch.b64` | `exch.b32` | `exch.b64` |
//! | `compare_exchange` | `cas.b32` | `cas.b32` | `cas.b64` | `cas.b64` | `cas.b32` | `cas.b64` |
//!
//! PTX has no `atom.min`/`max` for `f32`/`f64`; those loop on `cas` until
//! the stored value is at most (at least) the operand, with
//! `f32::min`/`f32::max` semantics (a NaN operand leaves the value alone).
//! All return the value before the operation, but [`add`] (and [`shared::add`],
//! [`global::add`]), which returns nothing and is a `red` (reduction) instruction.

#[cfg(not(emulated))]
use crate::host::on_device;
#[cfg_attr(emulated, allow(unused_imports))] // only the docs use it there
use crate::shared::SharedPtr;

/// Memory ordering of an atomic operation (PTX `.sem`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordering {
    /// `.relaxed`: atomic, no ordering of other accesses.
    Relaxed,
    /// `.acquire`: later accesses of this thread stay after it.
    Acquire,
    /// `.release`: earlier accesses of this thread stay before it.
    Release,
    /// `.acq_rel`: both.
    AcqRel,
}

/// The threads an atomic operation is atomic and ordered with (PTX `.scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// `.cta`: the threads of this block.
    Cta,
    /// `.gpu`: every thread of this GPU.
    Gpu,
    /// `.sys`: every thread of the system, host included.
    Sys,
}

/// Emits `atom{sem}{scope}{parts...}` for the run-time `(ordering, scope)`;
/// after inlining with constant arguments only one arm survives.
#[cfg(target_arch = "nvptx64")]
macro_rules! atom_asm {
    ($order:expr, $scope:expr, [$($part:literal),*], $($operands:tt)*) => {
        match ($order, $scope) {
            (Ordering::Relaxed, Scope::Cta) => core::arch::asm!(concat!("atom.relaxed.cta", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (Ordering::Relaxed, Scope::Gpu) => core::arch::asm!(concat!("atom.relaxed.gpu", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (Ordering::Relaxed, Scope::Sys) => core::arch::asm!(concat!("atom.relaxed.sys", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (Ordering::Acquire, Scope::Cta) => core::arch::asm!(concat!("atom.acquire.cta", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (Ordering::Acquire, Scope::Gpu) => core::arch::asm!(concat!("atom.acquire.gpu", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (Ordering::Acquire, Scope::Sys) => core::arch::asm!(concat!("atom.acquire.sys", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (Ordering::Release, Scope::Cta) => core::arch::asm!(concat!("atom.release.cta", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (Ordering::Release, Scope::Gpu) => core::arch::asm!(concat!("atom.release.gpu", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (Ordering::Release, Scope::Sys) => core::arch::asm!(concat!("atom.release.sys", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (Ordering::AcqRel, Scope::Cta) => core::arch::asm!(concat!("atom.acq_rel.cta", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (Ordering::AcqRel, Scope::Gpu) => core::arch::asm!(concat!("atom.acq_rel.gpu", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (Ordering::AcqRel, Scope::Sys) => core::arch::asm!(concat!("atom.acq_rel.sys", $($part),*), $($operands)*, options(nostack, preserves_flags)),
        }
    };
}

/// Emits `red{sem}{scope}{parts...}` for `(ordering, scope)`, `.relaxed` or `.release`
/// (the orders `red` has; the caller sends the others to `atom`).
#[cfg(target_arch = "nvptx64")]
macro_rules! red_asm {
    ($order:expr, $scope:expr, $pre:literal, [$($part:literal),*], $($operands:tt)*) => {
        match ($order, $scope) {
            (Ordering::Release, Scope::Cta) => core::arch::asm!(concat!($pre, "red.release.cta", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (Ordering::Release, Scope::Gpu) => core::arch::asm!(concat!($pre, "red.release.gpu", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (Ordering::Release, Scope::Sys) => core::arch::asm!(concat!($pre, "red.release.sys", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (_, Scope::Cta) => core::arch::asm!(concat!($pre, "red.relaxed.cta", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (_, Scope::Gpu) => core::arch::asm!(concat!($pre, "red.relaxed.gpu", $($part),*), $($operands)*, options(nostack, preserves_flags)),
            (_, Scope::Sys) => core::arch::asm!(concat!($pre, "red.relaxed.sys", $($part),*), $($operands)*, options(nostack, preserves_flags)),
        }
    };
}

/// Generates the reduction (no result) of `op` in three flavours: generic and global
/// (`reg64` address) and shared (`reg32`); acquire orders go through the `atom`
/// functions `$g_atom`/`$s_atom`, their result dropped.
#[cfg(not(emulated))]
macro_rules! red {
    ($generic:ident, $global:ident, $shared:ident, $g_atom:ident, $s_atom:ident, $t:ty, $reg:ident, [$($op:literal),*]) => {
        red!(@one $generic, "atomic::add", *mut $t, reg64, $g_atom, $t, $reg, "", [$($op),*, " [{a}], {v};"]);
        // The PTX ISA wants a `.global` address for `red.global`: converted from the
        // generic one (ptxas drops the conversion, as for nvcc's own atomics).
        red!(@one $global, "atomic::global::add", *mut $t, reg64, $g_atom, $t, $reg,
            "{{ .reg .b64 g; cvta.to.global.u64 g, {a}; ", [".global", $($op),*, " [g], {v}; }}"]);
        red!(@one $shared, "atomic::shared::add", u32, reg32, $s_atom, $t, $reg, "", [".shared", $($op),*, " [{a}], {v};"]);
    };
    (@one $name:ident, $what:literal, $addr:ty, $areg:ident, $atom:ident, $t:ty, $reg:ident, $pre:literal, [$($op:literal),*]) => {
        #[inline(always)]
        unsafe fn $name(at: $addr, value: $t, order: Ordering, scope: Scope) {
            if matches!(order, Ordering::Acquire | Ordering::AcqRel) {
                // SAFETY: the caller's contract.
                let _ = unsafe { $atom(at, value, order, scope) };
                return;
            }
            on_device!($what, {
                // SAFETY: the caller's contract (`at` valid and aligned, in the state
                // space the instruction names).
                unsafe {
                    red_asm!(order, scope, $pre, [$($op),*], a = in($areg) at, v = in($reg) value)
                }
            })
        }
    };
}

/// Generates one two-operand atomic: generic (`reg64` address) and shared
/// (`reg32` address) flavours.
#[cfg(not(emulated))]
macro_rules! rmw {
    ($generic:ident, $shared:ident, $t:ty, $reg:ident, [$($op:literal),*]) => {
        #[inline(always)]
        unsafe fn $generic(ptr: *mut $t, value: $t, order: Ordering, scope: Scope) -> $t {
            on_device!("atomic", {
                let old: $t;
                // SAFETY: the caller's contract (`ptr` valid and aligned).
                unsafe {
                    atom_asm!(order, scope, [$($op),*, " {d}, [{a}], {v};"],
                        d = out($reg) old, a = in(reg64) ptr, v = in($reg) value)
                };
                old
            })
        }
        #[inline(always)]
        unsafe fn $shared(addr: u32, value: $t, order: Ordering, scope: Scope) -> $t {
            on_device!("atomic::shared", {
                let old: $t;
                // SAFETY: the caller's contract (`addr` valid and aligned).
                unsafe {
                    atom_asm!(order, scope, [".shared", $($op),*, " {d}, [{a}], {v};"],
                        d = out($reg) old, a = in(reg32) addr, v = in($reg) value)
                };
                old
            })
        }
    };
}

/// Generates compare-and-swap in both flavours.
#[cfg(not(emulated))]
macro_rules! cas {
    ($generic:ident, $shared:ident, $t:ty, $reg:ident, [$($op:literal),*]) => {
        #[inline(always)]
        unsafe fn $generic(ptr: *mut $t, current: $t, new: $t, order: Ordering, scope: Scope) -> $t {
            on_device!("atomic::compare_exchange", {
                let old: $t;
                // SAFETY: the caller's contract.
                unsafe {
                    atom_asm!(order, scope, [$($op),*, " {d}, [{a}], {c}, {n};"],
                        d = out($reg) old, a = in(reg64) ptr, c = in($reg) current, n = in($reg) new)
                };
                old
            })
        }
        #[inline(always)]
        unsafe fn $shared(addr: u32, current: $t, new: $t, order: Ordering, scope: Scope) -> $t {
            on_device!("atomic::shared::compare_exchange", {
                let old: $t;
                // SAFETY: the caller's contract.
                unsafe {
                    atom_asm!(order, scope, [".shared", $($op),*, " {d}, [{a}], {c}, {n};"],
                        d = out($reg) old, a = in(reg32) addr, c = in($reg) current, n = in($reg) new)
                };
                old
            })
        }
    };
}

/// Where an atomic operates: a generic address or a shared-window address.
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub enum Addr<T> {
    /// A generic address (global or shared memory).
    Generic(*mut T),
    /// A `.shared` window address.
    Shared(u32),
}

/// A type with atomic `swap` and `compare_exchange`; see the
/// [module table](self). Sealed.
pub trait Atomic: Copy + sealed::Sealed {
    #[doc(hidden)]
    unsafe fn swap(at: Addr<Self>, value: Self, order: Ordering, scope: Scope) -> Self;
    #[doc(hidden)]
    unsafe fn cas(at: Addr<Self>, current: Self, new: Self, order: Ordering, scope: Scope) -> Self;
    #[doc(hidden)]
    unsafe fn add(at: Addr<Self>, value: Self, order: Ordering, scope: Scope) -> Self;
    /// `add` without its result (`red` on the GPU; the emulator's `add`, dropped).
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn red_add(at: Addr<Self>, value: Self, order: Ordering, scope: Scope) {
        // SAFETY: forwarded from the caller.
        let _ = unsafe { Self::add(at, value, order, scope) };
    }
    /// `red_add` on an address known to be global (`red.global`).
    #[doc(hidden)]
    #[inline(always)]
    unsafe fn red_add_global(ptr: *mut Self, value: Self, order: Ordering, scope: Scope) {
        // SAFETY: forwarded from the caller.
        unsafe { Self::red_add(Addr::Generic(ptr), value, order, scope) }
    }
    #[doc(hidden)]
    unsafe fn min(at: Addr<Self>, value: Self, order: Ordering, scope: Scope) -> Self;
    #[doc(hidden)]
    unsafe fn max(at: Addr<Self>, value: Self, order: Ordering, scope: Scope) -> Self;
}

/// A type with atomic `fetch_and`, `fetch_or` and `fetch_xor`: the integers.
/// Sealed.
pub trait AtomicBits: Atomic {
    #[doc(hidden)]
    unsafe fn and(at: Addr<Self>, value: Self, order: Ordering, scope: Scope) -> Self;
    #[doc(hidden)]
    unsafe fn or(at: Addr<Self>, value: Self, order: Ordering, scope: Scope) -> Self;
    #[doc(hidden)]
    unsafe fn xor(at: Addr<Self>, value: Self, order: Ordering, scope: Scope) -> Self;
}

mod sealed {
    pub trait Sealed {}
}

/// The CPU model of every atomic (feature `emulator`).
#[cfg(emulated)]
#[path = "emulator/atomic_impls.rs"]
mod emulated;

#[cfg(not(emulated))]
macro_rules! dispatch {
    ($at:expr, $g:ident, $s:ident, $($args:expr),*) => {
        match $at {
            // SAFETY: forwarded from the caller.
            Addr::Generic(p) => unsafe { $g(p, $($args),*) },
            // SAFETY: forwarded from the caller.
            Addr::Shared(a) => unsafe { $s(a, $($args),*) },
        }
    };
}

#[cfg(not(emulated))]
macro_rules! int_atomic {
    ($t:ty, $reg:ident, $add:literal, $min:literal, $max:literal, $bits:literal) => {
        impl sealed::Sealed for $t {}
        const _: () = {
            rmw!(g_add, s_add, $t, $reg, [$add]);
            red!(g_red, gl_red, s_red, g_add, s_add, $t, $reg, [$add]);
            rmw!(g_min, s_min, $t, $reg, [$min]);
            rmw!(g_max, s_max, $t, $reg, [$max]);
            rmw!(g_and, s_and, $t, $reg, [".and", $bits]);
            rmw!(g_or, s_or, $t, $reg, [".or", $bits]);
            rmw!(g_xor, s_xor, $t, $reg, [".xor", $bits]);
            rmw!(g_exch, s_exch, $t, $reg, [".exch", $bits]);
            cas!(g_cas, s_cas, $t, $reg, [".cas", $bits]);
            impl Atomic for $t {
                #[inline(always)]
                unsafe fn swap(at: Addr<Self>, v: Self, o: Ordering, s: Scope) -> Self {
                    dispatch!(at, g_exch, s_exch, v, o, s)
                }
                #[inline(always)]
                unsafe fn cas(at: Addr<Self>, c: Self, n: Self, o: Ordering, s: Scope) -> Self {
                    dispatch!(at, g_cas, s_cas, c, n, o, s)
                }
                #[inline(always)]
                unsafe fn add(at: Addr<Self>, v: Self, o: Ordering, s: Scope) -> Self {
                    dispatch!(at, g_add, s_add, v, o, s)
                }
                #[inline(always)]
                unsafe fn red_add(at: Addr<Self>, v: Self, o: Ordering, s: Scope) {
                    dispatch!(at, g_red, s_red, v, o, s)
                }
                #[inline(always)]
                unsafe fn red_add_global(p: *mut Self, v: Self, o: Ordering, s: Scope) {
                    // SAFETY: forwarded from the caller.
                    unsafe { gl_red(p, v, o, s) }
                }
                #[inline(always)]
                unsafe fn min(at: Addr<Self>, v: Self, o: Ordering, s: Scope) -> Self {
                    dispatch!(at, g_min, s_min, v, o, s)
                }
                #[inline(always)]
                unsafe fn max(at: Addr<Self>, v: Self, o: Ordering, s: Scope) -> Self {
                    dispatch!(at, g_max, s_max, v, o, s)
                }
            }
            impl AtomicBits for $t {
                #[inline(always)]
                unsafe fn and(at: Addr<Self>, v: Self, o: Ordering, s: Scope) -> Self {
                    dispatch!(at, g_and, s_and, v, o, s)
                }
                #[inline(always)]
                unsafe fn or(at: Addr<Self>, v: Self, o: Ordering, s: Scope) -> Self {
                    dispatch!(at, g_or, s_or, v, o, s)
                }
                #[inline(always)]
                unsafe fn xor(at: Addr<Self>, v: Self, o: Ordering, s: Scope) -> Self {
                    dispatch!(at, g_xor, s_xor, v, o, s)
                }
            }
        };
    };
}

#[cfg(not(emulated))]
int_atomic!(u32, reg32, ".add.u32", ".min.u32", ".max.u32", ".b32");
#[cfg(not(emulated))]
int_atomic!(i32, reg32, ".add.s32", ".min.s32", ".max.s32", ".b32");
#[cfg(not(emulated))]
int_atomic!(u64, reg64, ".add.u64", ".min.u64", ".max.u64", ".b64");
#[cfg(not(emulated))]
int_atomic!(i64, reg64, ".add.u64", ".min.s64", ".max.s64", ".b64");

#[cfg(not(emulated))]
macro_rules! float_atomic {
    ($t:ty, $reg:ident, $add:literal, $bits:literal) => {
        impl sealed::Sealed for $t {}
        const _: () = {
            rmw!(g_add, s_add, $t, $reg, [$add]);
            red!(g_red, gl_red, s_red, g_add, s_add, $t, $reg, [$add]);
            rmw!(g_exch, s_exch, $t, $reg, [".exch", $bits]);
            cas!(g_cas, s_cas, $t, $reg, [".cas", $bits]);
            impl Atomic for $t {
                #[inline(always)]
                unsafe fn swap(at: Addr<Self>, v: Self, o: Ordering, s: Scope) -> Self {
                    dispatch!(at, g_exch, s_exch, v, o, s)
                }
                #[inline(always)]
                unsafe fn cas(at: Addr<Self>, c: Self, n: Self, o: Ordering, s: Scope) -> Self {
                    dispatch!(at, g_cas, s_cas, c, n, o, s)
                }
                #[inline(always)]
                unsafe fn add(at: Addr<Self>, v: Self, o: Ordering, s: Scope) -> Self {
                    dispatch!(at, g_add, s_add, v, o, s)
                }
                #[inline(always)]
                unsafe fn red_add(at: Addr<Self>, v: Self, o: Ordering, s: Scope) {
                    dispatch!(at, g_red, s_red, v, o, s)
                }
                #[inline(always)]
                unsafe fn red_add_global(p: *mut Self, v: Self, o: Ordering, s: Scope) {
                    // SAFETY: forwarded from the caller.
                    unsafe { gl_red(p, v, o, s) }
                }
                #[inline(always)]
                unsafe fn min(at: Addr<Self>, v: Self, o: Ordering, s: Scope) -> Self {
                    // SAFETY: forwarded from the caller.
                    unsafe {
                        cas_loop(
                            at,
                            o,
                            s,
                            |a: $t, b: $t| a.to_bits() == b.to_bits(),
                            |old| old.min(v),
                        )
                    }
                }
                #[inline(always)]
                unsafe fn max(at: Addr<Self>, v: Self, o: Ordering, s: Scope) -> Self {
                    // SAFETY: forwarded from the caller.
                    unsafe {
                        cas_loop(
                            at,
                            o,
                            s,
                            |a: $t, b: $t| a.to_bits() == b.to_bits(),
                            |old| old.max(v),
                        )
                    }
                }
            }
        };
    };
}

#[cfg(not(emulated))]
float_atomic!(f32, reg32, ".add.f32", ".b32");
#[cfg(not(emulated))]
float_atomic!(f64, reg64, ".add.f64", ".b64");

/// Replaces the value `old` at `at` by `f(old)` with `compare_exchange`,
/// retrying while another thread changed it in between; returns the value
/// it replaced. Stops without a write when `f(old)` is `same` as `old`
/// (floats compare bits, so a stored NaN cannot make it spin).
///
/// # Safety
/// As for [`compare_exchange`].
#[cfg(not(emulated))]
#[inline(always)]
unsafe fn cas_loop<T: Atomic>(
    at: Addr<T>,
    order: Ordering,
    scope: Scope,
    same: impl Fn(T, T) -> bool,
    f: impl Fn(T) -> T,
) -> T {
    // A relaxed exchange would write; read the start value with a CAS that
    // can only succeed by writing back what is there.
    let probe = match at {
        // SAFETY: the caller's contract: `p` is valid and aligned.
        Addr::Generic(p) => unsafe { core::ptr::read_volatile(p) },
        // SAFETY: as above, through the shared window.
        Addr::Shared(a) => unsafe { SharedPtr::<T>::from_addr(a).read() },
    };
    let mut old = probe;
    loop {
        let new = f(old);
        if same(new, old) {
            return old;
        }
        // SAFETY: the caller's contract.
        let seen = unsafe { T::cas(at, old, new, order, scope) };
        if same(seen, old) {
            return old;
        }
        old = seen;
    }
}

/// Adds `value` to `*ptr` atomically; returns the previous value.
///
/// # Safety
/// `ptr` is valid for reads and writes of a `T`, aligned to `size_of::<T>()`,
/// in global or shared memory; every concurrent access to it is atomic.
#[inline(always)]
pub unsafe fn fetch_add<T: Atomic>(ptr: *mut T, value: T, order: Ordering, scope: Scope) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { T::add(Addr::Generic(ptr), value, order, scope) }
}

/// Adds `value` to `*ptr` atomically and returns nothing: PTX `red` (PTX ISA 9.0,
/// instruction `red`), a reduction that sends no old value back, what CUDA's
/// `atomicAdd` compiles to when its result is unused. For counters and histograms: on a
/// generic address ptxas still emits the generic `ATOM`; [`global::add`] (an address
/// known to be global) gives `REDG`, [`shared::add`] works in shared memory. `Relaxed`
/// and `Release` are `red`'s own orders; `Acquire` and `AcqRel` need the old value's
/// read, so they run as [`fetch_add`] with the result dropped. `u32`, `i32`, `u64`,
/// `i64`, `f32`, `f64`; sm_70.
///
/// # Safety
/// As for [`fetch_add`].
#[inline(always)]
pub unsafe fn add<T: Atomic>(ptr: *mut T, value: T, order: Ordering, scope: Scope) {
    // SAFETY: forwarded from the caller.
    unsafe { T::red_add(Addr::Generic(ptr), value, order, scope) }
}

/// Stores `min(*ptr, value)` atomically; returns the previous value.
///
/// # Safety
/// As for [`fetch_add`].
#[inline(always)]
pub unsafe fn fetch_min<T: Atomic>(ptr: *mut T, value: T, order: Ordering, scope: Scope) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { T::min(Addr::Generic(ptr), value, order, scope) }
}

/// Stores `max(*ptr, value)` atomically; returns the previous value.
///
/// # Safety
/// As for [`fetch_add`].
#[inline(always)]
pub unsafe fn fetch_max<T: Atomic>(ptr: *mut T, value: T, order: Ordering, scope: Scope) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { T::max(Addr::Generic(ptr), value, order, scope) }
}

/// `*ptr &= value` atomically; returns the previous value.
///
/// # Safety
/// As for [`fetch_add`].
#[inline(always)]
pub unsafe fn fetch_and<T: AtomicBits>(ptr: *mut T, value: T, order: Ordering, scope: Scope) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { T::and(Addr::Generic(ptr), value, order, scope) }
}

/// `*ptr |= value` atomically; returns the previous value.
///
/// # Safety
/// As for [`fetch_add`].
#[inline(always)]
pub unsafe fn fetch_or<T: AtomicBits>(ptr: *mut T, value: T, order: Ordering, scope: Scope) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { T::or(Addr::Generic(ptr), value, order, scope) }
}

/// `*ptr ^= value` atomically; returns the previous value.
///
/// # Safety
/// As for [`fetch_add`].
#[inline(always)]
pub unsafe fn fetch_xor<T: AtomicBits>(ptr: *mut T, value: T, order: Ordering, scope: Scope) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { T::xor(Addr::Generic(ptr), value, order, scope) }
}

/// Stores `value` atomically (`exch`); returns the previous value.
///
/// # Safety
/// As for [`fetch_add`].
#[inline(always)]
pub unsafe fn swap<T: Atomic>(ptr: *mut T, value: T, order: Ordering, scope: Scope) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { T::swap(Addr::Generic(ptr), value, order, scope) }
}

/// Stores `new` when `*ptr` has the bits of `current` (`cas`); returns the
/// previous value either way (the swap happened when it equals `current`).
///
/// # Safety
/// As for [`fetch_add`].
#[inline(always)]
pub unsafe fn compare_exchange<T: Atomic>(
    ptr: *mut T,
    current: T,
    new: T,
    order: Ordering,
    scope: Scope,
) -> T {
    // SAFETY: forwarded from the caller.
    unsafe { T::cas(Addr::Generic(ptr), current, new, order, scope) }
}

/// Operations on addresses the caller knows are in global memory (a `cudaMalloc`ed
/// buffer, a kernel's pointer or slice parameter), with the `.global` state space:
/// SASS's `REDG` where a generic address gives `ATOM.E`, which waits for the old value.
///
/// # Safety (every function)
/// `ptr` addresses a `T` in global memory, aligned to `size_of::<T>()`; every concurrent
/// access to it is atomic. A shared-memory address here is undefined behaviour.
pub mod global {
    use super::{Atomic, Ordering, Scope};

    /// Adds `value` and returns nothing (`red.global`), as [`super::add`]: what CUDA's
    /// `atomicAdd` on a global pointer becomes when its result is unused.
    ///
    /// # Safety
    /// See the [module docs](self).
    #[inline(always)]
    pub unsafe fn add<T: Atomic>(ptr: *mut T, value: T, order: Ordering, scope: Scope) {
        // SAFETY: forwarded from the caller.
        unsafe { T::red_add_global(ptr, value, order, scope) }
    }
}

/// The same operations on a [`SharedPtr`], with `atom.shared`.
///
/// # Safety (every function)
/// `ptr` addresses a `T` in a live shared allocation of the calling CTA,
/// aligned to `size_of::<T>()`; every concurrent access to it is atomic.
pub mod shared {
    use super::{Addr, Atomic, AtomicBits, Ordering, Scope};
    use crate::shared::SharedPtr;

    macro_rules! shared_op {
        ($(#[$doc:meta])* $name:ident, $bound:ident, $method:ident) => {
            $(#[$doc])*
            ///
            /// # Safety
            /// See the [module docs](self).
            #[inline(always)]
            pub unsafe fn $name<T: $bound>(ptr: SharedPtr<T>, value: T, order: Ordering, scope: Scope) -> T {
                // SAFETY: forwarded from the caller.
                unsafe { T::$method(Addr::Shared(ptr.addr()), value, order, scope) }
            }
        };
    }
    shared_op!(/** Adds `value`; returns the previous value. */ fetch_add, Atomic, add);

    /// Adds `value` and returns nothing (`red.shared`), as [`super::add`].
    ///
    /// # Safety
    /// See the [module docs](self).
    #[inline(always)]
    pub unsafe fn add<T: Atomic>(ptr: SharedPtr<T>, value: T, order: Ordering, scope: Scope) {
        // SAFETY: forwarded from the caller.
        unsafe { T::red_add(Addr::Shared(ptr.addr()), value, order, scope) }
    }
    shared_op!(/** Stores the minimum; returns the previous value. */ fetch_min, Atomic, min);
    shared_op!(/** Stores the maximum; returns the previous value. */ fetch_max, Atomic, max);
    shared_op!(/** Bitwise and; returns the previous value. */ fetch_and, AtomicBits, and);
    shared_op!(/** Bitwise or; returns the previous value. */ fetch_or, AtomicBits, or);
    shared_op!(/** Bitwise xor; returns the previous value. */ fetch_xor, AtomicBits, xor);
    shared_op!(/** Stores `value` (`exch`); returns the previous value. */ swap, Atomic, swap);

    /// Stores `new` when the value has the bits of `current`; returns the
    /// previous value.
    ///
    /// # Safety
    /// See the [module docs](self).
    #[inline(always)]
    pub unsafe fn compare_exchange<T: Atomic>(
        ptr: SharedPtr<T>,
        current: T,
        new: T,
        order: Ordering,
        scope: Scope,
    ) -> T {
        // SAFETY: forwarded from the caller.
        unsafe { T::cas(Addr::Shared(ptr.addr()), current, new, order, scope) }
    }
}
