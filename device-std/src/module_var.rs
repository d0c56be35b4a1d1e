//! Module-scope variables: constant memory (CUDA `__constant__`, the `.const`
//! state space) and device globals (CUDA `__device__` variables, `.global`),
//! declared with [`constant!`](crate::constant) and [`global!`](crate::global),
//! read and written by the host by name and type.
//!
//! ```ignore
//! device_std::constant! {
//!     /// Filter taps, filled by the host before the launch.
//!     pub static TAPS: [f32; 9];
//! }
//! device_std::global! {
//!     /// Elements above the threshold, over all launches.
//!     pub static HITS: u32;
//! }
//! // in a kernel:
//! let w = TAPS.get(k);                                   // ld.const
//! unsafe { atomic::fetch_add(HITS.ptr(), 1, Relaxed, Scope::Gpu) };
//! // on the host (host_loader):
//! module.constant::<[f32; 9]>("TAPS")?.write(&stream, &taps)?;
//! let hits: u32 = module.global::<u32>("HITS")?.read(&stream)?;
//! ```
//!
//! # What is in the module
//!
//! `NAME` becomes a module-scope variable of that exact name (`#[export_name]`,
//! so two crates of one link must not both declare it), `.visible .const` for
//! [`constant!`](crate::constant) and `.visible .global` for
//! [`global!`](crate::global), initialized from the declaration or zero. Stock
//! rustc puts every `static` in `.global`; ptx-linker moves a constant into
//! `.const` (at most 64 KiB of them per module, CUDA's limit) when it finds its
//! record. The record, `__const_abi_NAME` or `__global_abi_NAME`, holds
//! [`RECORD_WORDS`] little-endian `u32`s:
//!
//! | word | value |
//! |---|---|
//! | 0 | [`MAGIC`] (`"MVAR"` as a number) |
//! | 1 | [`VERSION`] |
//! | 2 | the state space: [`SPACE_CONST`] or [`SPACE_GLOBAL`] |
//! | 3 | `size_of::<T>()` in bytes |
//! | 4 | `align_of::<T>()` in bytes |
//! | 5 | the [`ValueClass`](crate::ValueClass) word of `T` (of the element, for an array) |
//!
//! The host checks the type it asks for against it (`host_loader::Module::constant`,
//! `Module::global`), as it checks kernel parameters against `#[kernel]`'s record.
//!
//! # Access
//!
//! The values are [`PlainData`]: every byte pattern the host writes is valid.
//! Device reads and writes are single `ld.const` / `ld.global` / `st.global`
//! instructions for elements of 1, 2, 4 or 8 bytes (4-byte words otherwise) on
//! the variable's own state-space address, never Rust references, so threads
//! that race on a global race as CUDA threads do, not as Rust undefined
//! behaviour. Use [`atomic`](crate::atomic) through [`Global::ptr`] where they
//! must not.
//!
//! Under the emulator and in host builds the variable is an ordinary `static`:
//! the same methods read and write it (word by word, as relaxed atomics, since
//! emulated blocks run on several OS threads), and [`Constant::write_on_host`]
//! stands in for the host's copy.
//!
//! Source: CUDA C++ Programming Guide, "Variable Memory Space Specifiers"
//! (`__constant__`, `__device__`); PTX ISA 9.0 §5.1.3 "Constant State Space",
//! §5.1.4 "Global State Space"; CUDA Driver API `cuModuleGetGlobal`.

use crate::PlainData;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};

/// Record word 0: `"MVAR"` as a little-endian number.
pub const MAGIC: u32 = u32::from_le_bytes(*b"MVAR");
/// Record word 1.
pub const VERSION: u32 = 1;
/// Record word 2 of a [`constant!`](crate::constant): the `.const` state space.
pub const SPACE_CONST: u32 = 1;
/// Record word 2 of a [`global!`](crate::global): the `.global` state space.
pub const SPACE_GLOBAL: u32 = 2;
/// Words in a record.
pub const RECORD_WORDS: usize = 6;
/// Symbol prefix of a constant's record: `__const_abi_NAME`.
pub const CONST_RECORD_PREFIX: &str = "__const_abi_";
/// Symbol prefix of a global's record: `__global_abi_NAME`.
pub const GLOBAL_RECORD_PREFIX: &str = "__global_abi_";

/// The record of a variable of type `T` in state space `space`.
pub const fn record<T: PlainData>(space: u32) -> [u32; RECORD_WORDS] {
    assert!(
        size_of::<T>() > 0,
        "a module variable needs at least one byte"
    );
    [
        MAGIC,
        VERSION,
        space,
        size_of::<T>() as u32,
        align_of::<T>() as u32,
        T::VALUE_CLASS.word(),
    ]
}

/// All-zero `T`: the value of a declaration without an initializer.
pub const fn zeroed<T: PlainData>() -> T {
    // SAFETY: every bit pattern of a PlainData type is a valid value.
    unsafe { core::mem::zeroed() }
}

/// A module-scope variable made by [`constant!`](crate::constant) or
/// [`global!`](crate::global): its value type and its address.
///
/// # Safety
/// Implemented only by those macros: [`address`](Self::address) is the
/// variable's address in its own state space on the GPU (`.const` or
/// `.global`), and the `static`'s host address elsewhere, for
/// `size_of::<Value>()` bytes aligned for `Value`.
#[doc(hidden)]
pub unsafe trait ModuleVar {
    /// The declared type.
    type Value: PlainData;
    /// The state-space address (GPU) or host address of the variable.
    fn address() -> u64;
}

/// A `__constant__` variable of type `S::Value`: read by every thread, written
/// by the host before a launch ([`constant!`](crate::constant)).
#[derive(Debug)]
pub struct Constant<S> {
    _symbol: PhantomData<S>,
}

/// A `__device__` variable of type `S::Value`: read and written by kernels,
/// kept between launches, read and written by the host ([`global!`](crate::global)).
#[derive(Debug)]
pub struct Global<S> {
    _symbol: PhantomData<S>,
}

impl<S> Constant<S> {
    #[doc(hidden)]
    pub const fn new() -> Self {
        Constant {
            _symbol: PhantomData,
        }
    }
}

impl<S> Global<S> {
    #[doc(hidden)]
    pub const fn new() -> Self {
        Global {
            _symbol: PhantomData,
        }
    }
}

// SAFETY (both): a handle holds no data; the variable it names is shared by
// design, and every access is a single load or store (see the module docs).
unsafe impl<S> Sync for Constant<S> {}
unsafe impl<S> Sync for Global<S> {}

impl<S: ModuleVar> Constant<S> {
    /// The whole value (`ld.const`, one load per element or 4-byte word).
    #[inline(always)]
    pub fn read(&self) -> S::Value {
        // SAFETY: the variable's own address, in bounds, aligned.
        unsafe { load::<S::Value, CONST>(S::address()) }
    }

    /// Host builds and the emulator only: sets the value, as the host's copy
    /// into constant memory does before a launch on the GPU.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn write_on_host(&self, value: S::Value) {
        // SAFETY: the static's host address (ModuleVar's contract).
        unsafe { store::<S::Value>(S::address(), value) }
    }
}

impl<S: ModuleVar<Value = [E; N]>, E: PlainData, const N: usize> Constant<S> {
    /// Element `i` (`ld.const`). Panics (traps) when `i >= N`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> E {
        assert!(i < N, "constant index out of bounds");
        // SAFETY: element i of the variable, in bounds, aligned for E.
        unsafe { load::<E, CONST>(S::address() + (i * size_of::<E>()) as u64) }
    }

    /// Number of elements, `N`.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        N
    }

    /// `true` when `N == 0`.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }
}

impl<S: ModuleVar> Global<S> {
    /// The whole value (`ld.global`, one load per element or 4-byte word).
    #[inline(always)]
    pub fn read(&self) -> S::Value {
        // SAFETY: the variable's own address, in bounds, aligned.
        unsafe { load::<S::Value, GLOBAL>(S::address()) }
    }

    /// Stores `value` (`st.global`, one store per element or 4-byte word).
    #[inline(always)]
    pub fn write(&self, value: S::Value) {
        // SAFETY: as for read.
        unsafe { store::<S::Value>(S::address(), value) }
    }

    /// A generic pointer to the variable, for [`atomic`](crate::atomic).
    #[inline(always)]
    pub fn ptr(&self) -> *mut S::Value {
        generic(S::address()) as *mut S::Value
    }
}

impl<S: ModuleVar<Value = [E; N]>, E: PlainData, const N: usize> Global<S> {
    /// Element `i` (`ld.global`). Panics (traps) when `i >= N`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> E {
        assert!(i < N, "global index out of bounds");
        // SAFETY: element i, in bounds, aligned for E.
        unsafe { load::<E, GLOBAL>(S::address() + (i * size_of::<E>()) as u64) }
    }

    /// Stores element `i` (`st.global`). Panics (traps) when `i >= N`.
    #[inline(always)]
    pub fn set(&self, i: usize, value: E) {
        assert!(i < N, "global index out of bounds");
        // SAFETY: as for get.
        unsafe { store::<E>(S::address() + (i * size_of::<E>()) as u64, value) }
    }

    /// A generic pointer to element `i`, for [`atomic`](crate::atomic). Panics
    /// (traps) when `i >= N`.
    #[inline(always)]
    pub fn ptr_at(&self, i: usize) -> *mut E {
        assert!(i < N, "global index out of bounds");
        (generic(S::address()) + (i * size_of::<E>()) as u64) as *mut E
    }

    /// Number of elements, `N`.
    #[inline(always)]
    pub const fn len(&self) -> usize {
        N
    }

    /// `true` when `N == 0`.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }
}

const CONST: bool = true;
const GLOBAL: bool = false;

/// The generic address of a `.global` state-space address (`cvta.global`).
#[inline(always)]
fn generic(addr: u64) -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let g: u64;
        // SAFETY: an address conversion; touches no memory.
        unsafe {
            core::arch::asm!("cvta.global.u64 {g}, {a};", g = out(reg64) g, a = in(reg64) addr,
                options(pure, nomem, nostack))
        };
        g
    }
    #[cfg(not(target_arch = "nvptx64"))]
    addr
}

/// Reads a `T` at state-space address `addr` (`.const` when `IS_CONST`, else
/// `.global`): one load of 1, 2, 4 or 8 bytes when `T` has that size and
/// alignment, 4-byte words when `T` is 4-aligned, bytes otherwise.
///
/// # Safety
/// `addr` holds a `T` in that state space (the host address off the GPU).
#[inline(always)]
unsafe fn load<T: PlainData, const IS_CONST: bool>(addr: u64) -> T {
    let mut out = core::mem::MaybeUninit::<T>::uninit();
    let p = out.as_mut_ptr() as *mut u8;
    let (size, align) = (size_of::<T>(), align_of::<T>());
    if size == 8 && align == 8 {
        unsafe { (p as *mut u64).write(ld::<u64, IS_CONST>(addr)) };
    } else if size % 4 == 0 && align >= 4 {
        for w in 0..size / 4 {
            unsafe {
                (p as *mut u32)
                    .add(w)
                    .write(ld::<u32, IS_CONST>(addr + 4 * w as u64))
            };
        }
    } else if size == 2 && align == 2 {
        unsafe { (p as *mut u16).write(ld::<u16, IS_CONST>(addr)) };
    } else {
        for b in 0..size {
            unsafe { p.add(b).write(ld::<u8, IS_CONST>(addr + b as u64)) };
        }
    }
    // SAFETY: every byte written; any bit pattern is a valid PlainData.
    unsafe { out.assume_init() }
}

/// Writes `value` at `.global` state-space address `addr`, split as [`load`] reads.
///
/// # Safety
/// `addr` holds a `T` in the global state space (the host address off the GPU).
#[inline(always)]
unsafe fn store<T: PlainData>(addr: u64, value: T) {
    let p = &value as *const T as *const u8;
    let (size, align) = (size_of::<T>(), align_of::<T>());
    if size == 8 && align == 8 {
        unsafe { st::<u64>(addr, (p as *const u64).read()) };
    } else if size % 4 == 0 && align >= 4 {
        for w in 0..size / 4 {
            unsafe { st::<u32>(addr + 4 * w as u64, (p as *const u32).add(w).read()) };
        }
    } else if size == 2 && align == 2 {
        unsafe { st::<u16>(addr, (p as *const u16).read()) };
    } else {
        for b in 0..size {
            unsafe { st::<u8>(addr + b as u64, p.add(b).read()) };
        }
    }
}

/// One access width: `u8`, `u16`, `u32`, `u64`.
trait Word: Copy {
    /// `ld.const.bN` / `ld.global.bN` at a state-space address.
    unsafe fn ld(addr: u64, is_const: bool) -> Self;
    /// `st.global.bN` at a state-space address.
    unsafe fn st(addr: u64, value: Self);
}

#[inline(always)]
unsafe fn ld<W: Word, const IS_CONST: bool>(addr: u64) -> W {
    unsafe { W::ld(addr, IS_CONST) }
}

#[inline(always)]
unsafe fn st<W: Word>(addr: u64, value: W) {
    unsafe { W::st(addr, value) }
}

#[cfg(target_arch = "nvptx64")]
macro_rules! words {
    ($($t:ty, $reg:ident, $ldc:literal, $ldg:literal, $stg:literal;)*) => {$(
        impl Word for $t {
            #[inline(always)]
            unsafe fn ld(addr: u64, is_const: bool) -> Self {
                let v: $t;
                // SAFETY (both): the caller's address holds this word. `readonly`:
                // constant memory does not change during a kernel; a global may, so
                // its load is not `pure` (never merged or hoisted).
                if is_const {
                    unsafe { core::arch::asm!($ldc, v = out($reg) v, a = in(reg64) addr,
                        options(pure, readonly, nostack)) };
                } else {
                    unsafe { core::arch::asm!($ldg, v = out($reg) v, a = in(reg64) addr,
                        options(readonly, nostack)) };
                }
                v
            }
            #[inline(always)]
            unsafe fn st(addr: u64, value: Self) {
                // SAFETY: the caller's address holds this word.
                unsafe { core::arch::asm!($stg, a = in(reg64) addr, v = in($reg) value,
                    options(nostack)) };
            }
        }
    )*};
}

#[cfg(target_arch = "nvptx64")]
words! {
    u8, reg16, "ld.const.u8 {v}, [{a}];", "ld.global.u8 {v}, [{a}];", "st.global.u8 [{a}], {v};";
    u16, reg16, "ld.const.u16 {v}, [{a}];", "ld.global.u16 {v}, [{a}];", "st.global.u16 [{a}], {v};";
    u32, reg32, "ld.const.u32 {v}, [{a}];", "ld.global.u32 {v}, [{a}];", "st.global.u32 [{a}], {v};";
    u64, reg64, "ld.const.u64 {v}, [{a}];", "ld.global.u64 {v}, [{a}];", "st.global.u64 [{a}], {v};";
}

#[cfg(not(target_arch = "nvptx64"))]
macro_rules! words {
    ($($t:ty => $atomic:ty),*) => {$(
        impl Word for $t {
            #[inline(always)]
            unsafe fn ld(addr: u64, _is_const: bool) -> Self {
                // SAFETY: the caller's host address holds this word, aligned for it.
                // Relaxed atomics: emulated blocks run on several OS threads, and
                // their accesses may race as the GPU's do.
                unsafe { <$atomic>::from_ptr(addr as *mut $t) }.load(core::sync::atomic::Ordering::Relaxed)
            }
            #[inline(always)]
            unsafe fn st(addr: u64, value: Self) {
                // SAFETY: as for ld.
                unsafe { <$atomic>::from_ptr(addr as *mut $t) }.store(value, core::sync::atomic::Ordering::Relaxed)
            }
        }
    )*};
}

#[cfg(not(target_arch = "nvptx64"))]
words!(
    u8 => core::sync::atomic::AtomicU8,
    u16 => core::sync::atomic::AtomicU16,
    u32 => core::sync::atomic::AtomicU32,
    u64 => core::sync::atomic::AtomicU64
);

/// Declares `__constant__` variables: `NAME.get(i)` / `NAME.read()` in kernels
/// (`ld.const`), `host_loader::Module::constant::<T>("NAME")` on the host.
///
/// ```ignore
/// device_std::constant! {
///     /// Filter taps.
///     pub static TAPS: [f32; 9];                 // zero until the host writes it
///     pub static GAIN: f32 = 2.0;                // initialized in the module
/// }
/// ```
///
/// `T` must be [`PlainData`](crate::PlainData). Each `NAME` is a module-scope
/// `.visible .const` variable of that exact name (at most 64 KiB of constants per
/// module; ptx-linker refuses more, naming them) with its record
/// `__const_abi_NAME`; see [`module_var`](crate::module_var). The macro also
/// declares a hidden type `NAME` (the type namespace), which names the symbol.
/// Minimum `sm_XX`: any. Source: CUDA `__constant__`, PTX ISA 9.0 §5.1.3.
#[macro_export]
macro_rules! constant {
    ($($(#[$meta:meta])* $vis:vis static $name:ident : $ty:ty $(= $init:expr)? ;)*) => {$(
        $crate::__module_var!(Constant, "__const_abi_", SPACE_CONST, $(#[$meta])* $vis $name: $ty $(= $init)?);
    )*};
}

/// Declares `__device__` variables: `NAME.read()`, `NAME.write(v)`,
/// `NAME.get(i)`, `NAME.set(i, v)`, `NAME.ptr()` (for atomics) in kernels,
/// `host_loader::Module::global::<T>("NAME")` on the host.
///
/// ```ignore
/// device_std::global! {
///     /// Launches so far.
///     pub static LAUNCHES: u32;
///     pub static LUT: [u32; 4] = [1, 2, 4, 8];
/// }
/// ```
///
/// `T` must be [`PlainData`](crate::PlainData). Each `NAME` is a module-scope
/// `.visible .global` variable of that exact name with its record
/// `__global_abi_NAME`; see [`module_var`](crate::module_var). Minimum `sm_XX`:
/// any. Source: CUDA `__device__` variables, PTX ISA 9.0 §5.1.4.
#[macro_export]
macro_rules! global {
    ($($(#[$meta:meta])* $vis:vis static $name:ident : $ty:ty $(= $init:expr)? ;)*) => {$(
        $crate::__module_var!(Global, "__global_abi_", SPACE_GLOBAL, $(#[$meta])* $vis $name: $ty $(= $init)?);
    )*};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __module_var {
    ($handle:ident, $prefix:literal, $space:ident, $(#[$meta:meta])* $vis:vis $name:ident : $ty:ty $(= $init:expr)?) => {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        $vis struct $name {}

        // SAFETY: `address` is the variable's `.const`/`.global` address on the GPU
        // (by its exported name) and the static's address elsewhere.
        unsafe impl $crate::module_var::ModuleVar for $name {
            type Value = $ty;
            #[inline(always)]
            fn address() -> u64 {
                #[cfg_attr(target_arch = "nvptx64", export_name = stringify!($name))]
                #[used]
                static mut STORAGE: $ty = $crate::__module_var!(@init $ty $(, $init)?);
                #[cfg(target_arch = "nvptx64")]
                {
                    #[export_name = concat!($prefix, stringify!($name))]
                    #[used]
                    static RECORD: [u32; $crate::module_var::RECORD_WORDS] =
                        $crate::module_var::record::<$ty>($crate::module_var::$space);
                    let a: u64;
                    // SAFETY: the state-space address of the variable named in the
                    // template; touches no memory. The two unused inputs make LLVM
                    // reference the variable and its record, so that a crate using a
                    // variable another crate declares gets their `.extern`
                    // declarations and the linker keeps both.
                    unsafe {
                        ::core::arch::asm!(
                            concat!("mov.u64 {a}, ", stringify!($name), "; // {v} {r}"),
                            a = out(reg64) a,
                            v = in(reg64) ::core::ptr::addr_of!(STORAGE),
                            r = in(reg64) ::core::ptr::addr_of!(RECORD),
                            options(pure, nomem, nostack),
                        )
                    };
                    a
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    ::core::ptr::addr_of_mut!(STORAGE) as u64
                }
            }
        }

        $(#[$meta])*
        $vis static $name: $crate::module_var::$handle<$name> = $crate::module_var::$handle::new();
    };
    (@init $ty:ty) => { $crate::module_var::zeroed::<$ty>() };
    (@init $ty:ty, $init:expr) => { $init };
}
