//! The kernel ABI: which Rust types may be kernel parameters, how each one
//! arrives in PTX, and the ABI record `#[kernel]` writes into the module.
//!
//! # Parameters in PTX
//!
//! `#[kernel]` keeps rustc's own calling convention for `extern "ptx-kernel"`
//! (nightly, `nvptx64-nvidia-cuda`); it adds no lowering of its own, so the
//! table below is what the `.entry` says:
//!
//! | Rust parameter | [`ParamAbi::kind`] | PTX `.param` | bytes |
//! |---|---|---|---|
//! | `u8`…`u64`, `i8`…`i64`, `usize`, `isize` | [`SCALAR`] | `.u8`/`.u16`/`.u32`/`.u64` | its size |
//! | `f32`, `f64` | [`SCALAR`] | `.f32`, `.f64` | 4, 8 |
//! | `*const T`, `*mut T` (`T: HasValueClass`) | [`POINTER`] | `.u64 .ptr .align 1` | 8 |
//! | `&[T]` (`T: PlainData`) | [`SLICE`] | `.align 8 .b8 NAME[16]` = `(ptr: u64, len: u64)` | 16 |
//! | `DisjointSlice<T, _>`, `&mut [T]` (`T: PlainData`) | [`DISJOINT_SLICE`] | `.align 8 .b8 NAME[16]` = `(ptr: u64, len: u64)` | 16 |
//! | `S: KernelStruct` by value | [`STRUCT`] | `.align A .b8 NAME[S]` | `size_of::<S>()` |
//!
//! A slice's `len` counts elements, not bytes. A struct's alignment must be at
//! most 16 bytes (rustc cannot pass more); a larger one fails to compile.
//! `bool`, `char`, references to non-slices, tuples, and anything else without
//! a layout the host can build are refused at compile time: they do not
//! implement [`KernelParam`].
//!
//! # The ABI record
//!
//! For every kernel `K`, `#[kernel]` emits
//! `#[no_mangle] #[used] pub static __kernel_abi_K: [u32; W]`, which appears in
//! the PTX as
//!
//! ```text
//! .visible .global .align 4 .b8 __kernel_abi_K[4*W] = {73, 66, 65, 75, 2, ...};
//! ```
//!
//! (LLVM drops trailing zero bytes from the initializer; the declared size
//! stays `4*W`). The words are little-endian `u32`:
//!
//! | word | value |
//! |---|---|
//! | 0 | [`MAGIC`] = `0x4B41_4249` (`"IBAK"` in memory order, "KABI" as a number) |
//! | 1 | [`VERSION`] = 2 |
//! | 2 | `P`, the number of parameters |
//! | then, per parameter in order | `kind`, `size`, `align`, `elem_size`, `elem_class`, `field_count F`, then `F` triples `(offset, size, class)` |
//!
//! `size` and `align` are the bytes the parameter occupies as passed (4 or 8
//! for 32/64-bit scalars, 8 for pointers, 16 and 8 for slices, the struct's
//! own for structs). `elem_size` is `size_of::<T>()` for pointers and slices
//! of `T`, the size itself for scalars, and 0 for structs. `elem_class` is the
//! [`ValueClass`] word of the scalar itself, or of the pointee or element `T`
//! (its [`HasValueClass`] constant); 0 (opaque) for structs. `F` is the number
//! of a struct's top-level fields ([`KernelStruct::LAYOUT`](crate::KernelStruct::LAYOUT))
//! and 0 otherwise; each field gives its byte offset, byte size and class
//! word.
//!
//! Class words: 0 opaque (nested structs, types that do not say), 1 unsigned
//! integer, 2 signed integer, 3 float, 4 raw pointer; an array has its
//! element's class (see [`layout`](crate::layout#value-classes)). Version 1
//! records had no `elem_class` and field pairs `(offset, size)`.
//!
//! The same words are available on both targets as the hidden constant
//! `__KERNEL_ABI_K` next to the kernel, which is how this crate's tests read
//! them without a GPU.

use crate::layout::{FieldLayout, HasValueClass, PlainData, StructLayout, ValueClass};

/// Word 0 of every ABI record.
pub const MAGIC: u32 = 0x4B41_4249;
/// Word 1: the record format this crate writes.
pub const VERSION: u32 = 2;
/// `kind` of a scalar (integer or float) parameter.
pub const SCALAR: u32 = 1;
/// `kind` of a raw pointer parameter.
pub const POINTER: u32 = 2;
/// `kind` of a read-only slice `&[T]`.
pub const SLICE: u32 = 3;
/// `kind` of a writable slice: `DisjointSlice<T, _>` or `&mut [T]`.
pub const DISJOINT_SLICE: u32 = 4;
/// `kind` of a [`KernelStruct`](crate::KernelStruct) passed by value.
pub const STRUCT: u32 = 5;

/// How one kernel parameter crosses the boundary; see the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamAbi {
    /// [`SCALAR`], [`POINTER`], [`SLICE`], [`DISJOINT_SLICE`] or [`STRUCT`].
    pub kind: u32,
    /// Bytes as passed.
    pub size: u32,
    /// Alignment as passed, in bytes.
    pub align: u32,
    /// Element size in bytes (pointers, slices), the size (scalars), or 0 (structs).
    pub elem_size: u32,
    /// Class of the scalar, pointee or element; [`ValueClass::Opaque`] for structs.
    pub elem_class: ValueClass,
    /// A struct's top-level fields; empty for every other kind.
    pub fields: &'static [FieldLayout],
}

impl ParamAbi {
    const fn scalar(size: usize, class: ValueClass) -> Self {
        ParamAbi {
            kind: SCALAR,
            size: size as u32,
            align: size as u32,
            elem_size: size as u32,
            elem_class: class,
            fields: &[],
        }
    }

    /// A pointer or slice (`kind`) of `size` bytes as passed, aligned to 8,
    /// whose elements are `T`.
    pub(crate) const fn indirect<T: HasValueClass>(kind: u32, size: u32) -> Self {
        ParamAbi {
            kind,
            size,
            align: 8,
            elem_size: core::mem::size_of::<T>() as u32,
            elem_class: T::VALUE_CLASS,
            fields: &[],
        }
    }

    /// A struct passed by value. Fails to compile (a const panic) for an
    /// alignment above 16 bytes, which rustc cannot pass to a kernel.
    pub const fn structure(layout: &StructLayout) -> Self {
        assert!(
            layout.align <= 16,
            "a KernelStruct aligned to more than 16 bytes cannot be a kernel parameter"
        );
        ParamAbi {
            kind: STRUCT,
            size: layout.size,
            align: layout.align,
            elem_size: 0,
            elem_class: ValueClass::Opaque,
            fields: layout.fields,
        }
    }
}

/// A type that can be a `#[kernel]` parameter; see the [module docs](self)
/// for the list and the PTX each one becomes.
///
/// # Safety
/// [`ABI`](Self::ABI) describes exactly how rustc passes the type to an
/// `extern "ptx-kernel"` function, and every value the host can build for
/// that description is a valid value of the type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a kernel parameter",
    label = "no stable layout across the kernel boundary",
    note = "kernel parameters are integers, floats, raw pointers, `&[T]`, `&mut [T]`, `DisjointSlice<T>` (T: PlainData) and `#[derive(KernelStruct)]` structs"
)]
pub unsafe trait KernelParam {
    /// How the parameter crosses the boundary.
    const ABI: ParamAbi;
}

macro_rules! scalar_params {
    ($($t:ty),*) => {$(
        // SAFETY: rustc passes a primitive scalar as a PTX scalar of its size;
        // every bit pattern is a valid value.
        unsafe impl KernelParam for $t {
            const ABI: ParamAbi =
                ParamAbi::scalar(core::mem::size_of::<$t>(), <$t as HasValueClass>::VALUE_CLASS);
        }
    )*};
}
scalar_params!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);

// SAFETY: a raw pointer is a `.u64 .ptr`; any address is a valid raw pointer.
unsafe impl<T: HasValueClass> KernelParam for *const T {
    const ABI: ParamAbi = ParamAbi::indirect::<T>(POINTER, 8);
}

// SAFETY: as for `*const T`.
unsafe impl<T: HasValueClass> KernelParam for *mut T {
    const ABI: ParamAbi = ParamAbi::indirect::<T>(POINTER, 8);
}

// SAFETY: rustc passes `&[T]` as one 16-byte `(ptr, len)` aggregate aligned
// to 8; `T: PlainData`, so whatever bytes the host put there are valid `T`s.
// The launch is `unsafe` on the host: it promises `ptr` is valid for `len`.
unsafe impl<T: PlainData> KernelParam for &[T] {
    const ABI: ParamAbi = ParamAbi::indirect::<T>(SLICE, 16);
}

// SAFETY: as for `&[T]`.
unsafe impl<T: PlainData> KernelParam for &mut [T] {
    const ABI: ParamAbi = ParamAbi::indirect::<T>(DISJOINT_SLICE, 16);
}

/// The number of `u32` words in the ABI record of a kernel with `params`.
pub const fn record_words(params: &[ParamAbi]) -> usize {
    let mut words = 3;
    let mut i = 0;
    while i < params.len() {
        words += 6 + 3 * params[i].fields.len();
        i += 1;
    }
    words
}

/// The ABI record of a kernel with `params`; `W` must be
/// [`record_words`]`(params)` (a mismatch fails to compile).
pub const fn record<const W: usize>(params: &[ParamAbi]) -> [u32; W] {
    assert!(W == record_words(params), "ABI record length mismatch");
    let mut out = [0u32; W];
    out[0] = MAGIC;
    out[1] = VERSION;
    out[2] = params.len() as u32;
    let mut at = 3;
    let mut i = 0;
    while i < params.len() {
        let p = &params[i];
        out[at] = p.kind;
        out[at + 1] = p.size;
        out[at + 2] = p.align;
        out[at + 3] = p.elem_size;
        out[at + 4] = p.elem_class.word();
        out[at + 5] = p.fields.len() as u32;
        at += 6;
        let mut f = 0;
        while f < p.fields.len() {
            out[at] = p.fields[f].offset;
            out[at + 1] = p.fields[f].size;
            out[at + 2] = p.fields[f].class.word();
            at += 3;
            f += 1;
        }
        i += 1;
    }
    out
}
