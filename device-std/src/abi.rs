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
//! | `*const T`, `*mut T` (`T: HasValueClass`, sized) | [`POINTER`] | `.u64 .ptr .align 1` | 8 |
//! | `&[T]` (`T: PlainData`) | [`SLICE`] | `.align 8 .b8 NAME[16]` = `(ptr: u64, len: u64)` | 16 |
//! | `DisjointSlice<T, _>`, `&mut [T]` (`T: PlainData`) | [`DISJOINT_SLICE`] | `.align 8 .b8 NAME[16]` = `(ptr: u64, len: u64)` | 16 |
//! | `Option<&[T]>`, `Option<DisjointSlice<T, _>>` | [`OPTIONAL_SLICE`], [`OPTIONAL_DISJOINT_SLICE`] | as the slice; `None` is `ptr = 0` | 16 |
//! | `S: KernelStruct` by value | [`STRUCT`] | `.align A .b8 NAME[S]` | `size_of::<S>()` |
//! | [`tma::TensorMap<T, RANK, B0, …>`](crate::tma::TensorMap) | [`TENSOR_MAP`] | `.u64` (the map's global address) | 8 |
//! | [`texture::Texture<T, D>`](crate::texture::Texture) | [`TEXTURE`] | `.u64` (the `CUtexObject`) | 8 |
//! | [`texture::Surface<T, D>`](crate::texture::Surface) | [`SURFACE`] | `.u64` (the `CUsurfObject`) | 8 |
//!
//! A slice's `len` counts elements, not bytes. A struct's alignment must be at
//! most 16 bytes (rustc cannot pass more); a larger one fails to compile.
//! `bool`, `char`, references to non-slices, tuples, and anything else without
//! a layout the host can build are refused at compile time: they do not
//! implement [`KernelParam`] (a `bool` flag is a `u8` or `u32`; `*const bool`
//! is fine). A pointer to a pointer to an unsized type (`*const *const [f32]`)
//! is refused too: the pointee is a fat pointer (see
//! [`layout`](crate::layout#value-classes)).
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
//! of `T` (8 when `T` is itself a raw pointer), the size itself for scalars,
//! and 0 for structs; a pointer to an untyped `T`
//! ([`HasValueClass::UNTYPED`]: `c_void`) has `elem_size` 0 and class 0, and
//! the host skips its element size and class (CUDA's `void*` takes a pointer
//! to anything). `elem_class` is the [`ValueClass`] word of the scalar itself,
//! or of the pointee or element `T` (its [`HasValueClass`] constant); 0
//! (opaque) for structs. `F` is the number of a struct's top-level fields
//! ([`KernelStruct::LAYOUT`](crate::KernelStruct::LAYOUT)) and 0 otherwise;
//! each field gives its byte offset, byte size and class word.
//!
//! Class words (see [`layout`](crate::layout#value-classes)):
//!
//! | word | class | types |
//! |---|---|---|
//! | 0 | opaque | nested structs, `c_void`, types that do not say |
//! | 1 | unsigned integer | `u8` … `u128`, `usize` |
//! | 2 | signed integer | `i8` … `i128`, `isize` |
//! | 3 | float | `f32`, `f64` |
//! | 4 | raw pointer | `*const T`, `*mut T` (8 bytes; the host may pass a `u64` for it) |
//! | 5 | bool | `bool` (never a scalar parameter; a pointee) |
//! | 6 | bfloat16 | `bf16` |
//! | 7 | float16 | `f16` |
//!
//! An array has its element's class. Version 1 records had no `elem_class`
//! and field pairs `(offset, size)`.
//!
//! # How long a record can be
//!
//! A record has at most [`MAX_RECORD_WORDS`] words ([`MAX_RECORD_BYTES`]
//! bytes), and `#[kernel]` refuses to compile a kernel whose record would be
//! longer. The bound comes from the parameter space: a kernel's parameters
//! take at most [`MAX_PARAM_BYTES`] bytes (32 764 from CUDA 12.1 on sm_70 and
//! newer, 4 KiB before), every parameter takes at least one byte and every
//! struct field of nonzero size at least one byte of its struct. A parameter
//! costs 6 words and a field 3, so one byte of parameter space costs at most
//! 9 words (a one-byte struct with one one-byte field), and a record at most
//! `3 + 9 * MAX_PARAM_BYTES` words. (Only zero-sized structs and fields,
//! such as `[u64; 0]`, cost words without bytes; the compile-time check
//! catches a kernel with tens of thousands of those.) The host refuses a record
//! declared longer than that before it reads (or zero-pads) its bytes.
//!
//! The same words are available on both targets as the hidden constant
//! `__KERNEL_ABI_K` next to the kernel, which is how this crate's tests read
//! them without a GPU.

use crate::layout::{FieldLayout, HasValueClass, PlainData, StructLayout, ValueClass};

/// Prefix of the `[u32; 2]` static `#[kernel(dynamic_shared = N, dynamic_shared_per_thread
/// = M)]` emits per kernel, `[N, M]`: the kernel's dynamic shared memory is `N + M ×
/// threads per block` bytes. `host_loader` reads it to fill in or check a launch's size.
pub const DYNAMIC_SHARED_PREFIX: &str = "__kernel_dynamic_shared_";

/// Prefix of the `[u32; 1]` variable `#[kernel(slice_align = N)]` emits per kernel,
/// `__kernel_slice_align_<name>`: the bytes every slice parameter starts at a multiple
/// of, a power of two from 2 to 256.
pub const SLICE_ALIGN_PREFIX: &str = "__kernel_slice_align_";

/// Word 0 of every ABI record.
pub const MAGIC: u32 = 0x4B41_4249;
/// Word 1: the record format this crate writes.
pub const VERSION: u32 = 2;
/// The most bytes of parameters one kernel can take: 32 764 (CUDA 12.1 and
/// newer on sm_70 and newer; 4 096 before). The bound for
/// [`MAX_RECORD_WORDS`].
pub const MAX_PARAM_BYTES: u32 = 32_764;
/// The most words an ABI record can have: 3 header words, plus at most 9 per
/// byte of [`MAX_PARAM_BYTES`] (6 for a one-byte parameter, 3 more for a
/// one-byte field of a one-byte struct). See the [module docs](self#how-long-a-record-can-be).
pub const MAX_RECORD_WORDS: u32 = 3 + 9 * MAX_PARAM_BYTES;
/// [`MAX_RECORD_WORDS`] in bytes: 1 179 516.
pub const MAX_RECORD_BYTES: u32 = 4 * MAX_RECORD_WORDS;
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
/// `kind` of a [`tma::TensorMap`](crate::tma::TensorMap): the global address of
/// an encoded tensor map (8 bytes), with `elem_size`/`elem_class` of the tensor's
/// element type and `F` = the rank, one triple `(box extent, 0, 0)` per
/// dimension, innermost first, except that the first triple's size word is the
/// shared-memory swizzle in bytes (0: none; 32, 64, 128).
pub const TENSOR_MAP: u32 = 6;
/// `kind` of a [`texture::Texture<T, D>`](crate::texture::Texture): the `CUtexObject`
/// handle (8 bytes), with `elem_size`/`elem_class` of the texel type and one field
/// `(D, 0, opaque)`, the dimension count.
pub const TEXTURE: u32 = 7;
/// `kind` of a [`texture::Surface<T, D>`](crate::texture::Surface): the `CUsurfObject`
/// handle, described as [`TEXTURE`] is.
pub const SURFACE: u32 = 8;
/// `kind` of an optional read-only slice `Option<&[T]>`: the `(ptr, len)` of
/// [`SLICE`], `None` being a null address (what the host passes for no buffer).
pub const OPTIONAL_SLICE: u32 = 9;
/// `kind` of an optional writable slice `Option<DisjointSlice<T, _>>`, as
/// [`OPTIONAL_SLICE`] is.
pub const OPTIONAL_DISJOINT_SLICE: u32 = 10;

/// The record's fields of a [`TENSOR_MAP`] parameter with box extents `boxes`
/// (innermost first; the first `RANK` of them are the parameter's fields) and a
/// shared-memory swizzle of `swizzle` bytes: `(extent, 0, opaque)` each, the swizzle as
/// extent 0's size. Written by the device type and compared by `host_loader`, whose
/// `tma::TensorMap` describes itself with the same fields.
pub const fn tensor_map_fields(boxes: [usize; 5], swizzle: usize) -> [FieldLayout; 5] {
    const NAMES: [&str; 5] = ["B0", "B1", "B2", "B3", "B4"];
    let mut fields = [FieldLayout {
        name: "B0",
        offset: 0,
        size: 0,
        class: ValueClass::Opaque,
    }; 5];
    let mut i = 0;
    while i < 5 {
        fields[i].name = NAMES[i];
        fields[i].offset = boxes[i] as u32;
        i += 1;
    }
    fields[0].size = swizzle as u32;
    fields
}

/// The record's one field of a [`TEXTURE`] or [`SURFACE`] parameter of `D` dimensions:
/// `(D, 0, opaque)`. Written by the device types and compared by `host_loader`, whose
/// `texture::Texture` and `Surface` describe themselves with the same field.
pub const fn texture_dims_field<const D: usize>() -> [FieldLayout; 1] {
    [FieldLayout {
        name: "D",
        offset: D as u32,
        size: 0,
        class: ValueClass::Opaque,
    }]
}

/// How one kernel parameter crosses the boundary; see the [module docs](self).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamAbi {
    /// [`SCALAR`], [`POINTER`], [`SLICE`], [`DISJOINT_SLICE`], [`STRUCT`], [`TENSOR_MAP`],
    /// [`TEXTURE`] or [`SURFACE`].
    pub kind: u32,
    /// Bytes as passed.
    pub size: u32,
    /// Alignment as passed, in bytes.
    pub align: u32,
    /// Element size in bytes (pointers, slices), the size (scalars), or 0
    /// (structs, and pointers to an untyped pointee: `c_void`).
    pub elem_size: u32,
    /// Class of the scalar, pointee or element; [`ValueClass::Opaque`] for structs.
    pub elem_class: ValueClass,
    /// A struct's top-level fields; a tensor map's box extents (one per
    /// dimension, the extent in `offset`); empty for every other kind.
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
    /// whose elements are `T`; element size 0 and class opaque when `T` is
    /// untyped ([`HasValueClass::UNTYPED`]).
    pub(crate) const fn indirect<T: HasValueClass>(kind: u32, size: u32) -> Self {
        ParamAbi {
            kind,
            size,
            align: 8,
            elem_size: if T::UNTYPED {
                0
            } else {
                core::mem::size_of::<T>() as u32
            },
            elem_class: if T::UNTYPED {
                ValueClass::Opaque
            } else {
                T::VALUE_CLASS
            },
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
    note = "kernel parameters are integers, floats, raw pointers, `&[T]`, `&mut [T]`, `DisjointSlice<T>` (T: PlainData), their `Option`s (`Option<&[T]>`, `Option<DisjointSlice<T>>`), `#[derive(KernelStruct)]` structs, `tma::TensorMap<T, RANK, B0, ...>` and `texture::Texture`/`Surface`"
)]
pub unsafe trait KernelParam {
    /// How the parameter crosses the boundary.
    const ABI: ParamAbi;

    /// A slice parameter's start address and length in elements (`&[T]`, `&mut [T]`,
    /// `DisjointSlice<T>` and their `Option`s when `Some`); `None` for every other
    /// parameter. What `#[kernel(slice_align = N)]` checks and assumes.
    #[inline(always)]
    fn slice_span(&self) -> Option<(usize, usize)> {
        None
    }
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

    #[inline(always)]
    fn slice_span(&self) -> Option<(usize, usize)> {
        Some((self.as_ptr() as usize, self.len()))
    }
}

// SAFETY: as for `&[T]`.
unsafe impl<T: PlainData> KernelParam for &mut [T] {
    const ABI: ParamAbi = ParamAbi::indirect::<T>(DISJOINT_SLICE, 16);

    #[inline(always)]
    fn slice_span(&self) -> Option<(usize, usize)> {
        Some((self.as_ptr() as usize, self.len()))
    }
}

// SAFETY: `&[T]`'s address is never null, so the option is the same 16-byte
// `(ptr, len)` aggregate with `None` as a null address: what the host passes for an
// absent buffer (and never for a present one, empty or not).
unsafe impl<T: PlainData> KernelParam for Option<&[T]> {
    const ABI: ParamAbi = ParamAbi::indirect::<T>(OPTIONAL_SLICE, 16);

    #[inline(always)]
    fn slice_span(&self) -> Option<(usize, usize)> {
        self.map(|s| (s.as_ptr() as usize, s.len()))
    }
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
/// [`record_words`]`(params)` (a mismatch fails to compile), and at most
/// [`MAX_RECORD_WORDS`] (a longer record fails to compile).
pub const fn record<const W: usize>(params: &[ParamAbi]) -> [u32; W] {
    assert!(W == record_words(params), "ABI record length mismatch");
    assert!(
        W <= MAX_RECORD_WORDS as usize,
        "the kernel's ABI record would be longer than device_std::abi::MAX_RECORD_WORDS: \
         its parameters take more than the 32 764 bytes a kernel can take, or its structs \
         have tens of thousands of zero-sized fields"
    );
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
