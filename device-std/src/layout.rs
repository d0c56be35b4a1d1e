//! Plain data, value classes and struct layouts: what may cross the kernel
//! boundary by value, what its bytes mean, and the layout record the host
//! checks a struct against.
//!
//! The same struct definition serves both sides: a `#[repr(C)]` struct with
//! `#[derive(device_std::KernelStruct)]` (padding allowed; `bytemuck::Pod` is not
//! needed) is passed by value to a kernel and held in `host_loader::DeviceBuffer`s, and
//! its [`StructLayout`] is written into the kernel's ABI record (see
//! [`abi`](crate::abi)) and also readable on the host, where `host_loader` compares the
//! two.
//!
//! # Value classes
//!
//! [`ValueClass`] says how a value's bytes are read, one level deep:
//!
//! | type | class | word | a host element the kernel's class accepts |
//! |---|---|---|---|
//! | a `#[derive(KernelStruct)]` struct, `c_void`, any type that does not say | [`Opaque`](ValueClass::Opaque) | 0 | any class (only sizes are compared) |
//! | `u8` … `u128`, `usize` | [`Unsigned`](ValueClass::Unsigned) | 1 | unsigned, opaque |
//! | `i8` … `i128`, `isize` | [`Signed`](ValueClass::Signed) | 2 | signed, opaque |
//! | `f32`, `f64` | [`Float`](ValueClass::Float) | 3 | float, opaque |
//! | `*const T`, `*mut T` (`T: Sized`) | [`Pointer`](ValueClass::Pointer) | 4 | raw pointer, opaque, and an 8-byte unsigned integer (`u64`, `usize`): a device address on the host is a `CUdeviceptr`, a `u64` |
//! | `bool` | [`Bool`](ValueClass::Bool) | 5 | bool, opaque |
//! | `bf16` (`half::bf16`) | [`BFloat16`](ValueClass::BFloat16) | 6 | bfloat16, opaque |
//! | `f16` (`half::f16`) | [`Float16`](ValueClass::Float16) | 7 | float16, opaque |
//! | `F8E4M3` (`float8::F8E4M3`) | [`Float8E4M3`](ValueClass::Float8E4M3) | 8 | e4m3, opaque |
//! | `F8E5M2` (`float8::F8E5M2`) | [`Float8E5M2`](ValueClass::Float8E5M2) | 9 | e5m2, opaque |
//! | `[T; N]`, the `vector` types | the class of `T` (the lane type) | | as for `T` |
//!
//! Arrays take their element's class, so `[f32; 4]` is a float; a nested
//! struct is opaque (its own fields are not looked at). `usize` and `u64` are
//! one class, as are `isize` and `i64`: same size, same PTX `.u64`. Signed and
//! unsigned are different classes: an `i32` read as a `u32` changes every
//! negative value. `bool` is a class of its own, apart from `u8`: a `bool`
//! must be 0 or 1, so a kernel's `*mut bool` given the host's bytes of a
//! `u8` buffer would read 2..=255 as a `bool` (undefined behaviour), and a
//! kernel's `*mut u8` may write any byte into a host `bool` buffer. The class
//! sits on [`HasValueClass`], which every [`PlainData`] type implements.
//!
//! The last column is `host_loader`'s rule, which is not symmetric: a
//! kernel's raw-pointer pointee (a pointer table, `*const *const f32`)
//! accepts the host's `u64` device addresses, but a kernel's `u64` does not
//! accept a host raw pointer (a host `*const T` holds a host address, which
//! means nothing on the device). A pointer to [`c_void`](core::ffi::c_void)
//! is untyped ([`HasValueClass::UNTYPED`]): the record writes element size 0
//! for it, and the host accepts a pointer to any type there, as CUDA's
//! `void*` does.
//!
//! A raw pointer to an unsized type (`*const [T]`, `*const str`,
//! `*const dyn Trait`) has no value class: it is a 16-byte fat pointer whose
//! layout Rust does not fix and the host cannot build, so using one as a
//! pointee or element (`*const *const [f32]`) fails to compile. Pass a
//! pointer to the first element and the length instead.

/// A type every bit pattern of which is a valid value, with a layout fixed by
/// the C rules: integers, floats, arrays of plain data, and structs that
/// derive [`KernelStruct`](macro@crate::KernelStruct).
///
/// `bool`, `char`, references, raw pointers and enums are not plain data:
/// the host could send a byte pattern that is not a valid value, or an
/// address the device cannot use.
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes is a valid `Self`, and the
/// layout does not depend on compiler choices (no `repr(Rust)` field order).
/// Implement it only through `#[derive(KernelStruct)]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not plain data",
    label = "not an integer, a float, an array of plain data, or a `#[derive(KernelStruct)]` struct",
    note = "fields of a `KernelStruct` must be plain data, so that every byte pattern the host sends is a valid value"
)]
pub unsafe trait PlainData: HasValueClass + Copy + 'static {}

macro_rules! plain {
    ($($t:ty),*) => {$(
        // SAFETY: every bit pattern of a primitive integer or float is valid.
        unsafe impl PlainData for $t {}
    )*};
}
plain!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);
// SAFETY: `half::bf16` and `half::f16` are `#[repr(transparent)]` over `u16`; every bit
// pattern is a valid value (a number, an infinity or a NaN).
unsafe impl PlainData for half::bf16 {}
// SAFETY: as for `bf16`.
unsafe impl PlainData for half::f16 {}
// SAFETY: `float8::F8E4M3` and `F8E5M2` are `#[repr(transparent)]` over `u8`; every bit
// pattern is a valid value (a number, an infinity or a NaN).
unsafe impl PlainData for float8::F8E4M3 {}
// SAFETY: as for `F8E4M3`.
unsafe impl PlainData for float8::F8E5M2 {}

// SAFETY: an array of plain data is plain data: no padding between elements,
// and each element accepts every bit pattern.
unsafe impl<T: PlainData, const N: usize> PlainData for [T; N] {}

/// How a value's bytes are read: the class the ABI record carries for each
/// scalar, pointee, slice element and struct field (see the
/// [module docs](self) for which type has which class).
///
/// Two known classes that differ are a mismatch; [`Opaque`](Self::Opaque) on
/// either side is not compared (only sizes are).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ValueClass {
    /// Word 0: nothing to compare but the size (a nested struct, a type
    /// whose [`HasValueClass`] impl does not say).
    Opaque = 0,
    /// Word 1: an unsigned integer (`u8` … `u128`, `usize`).
    Unsigned = 1,
    /// Word 2: a signed integer (`i8` … `i128`, `isize`).
    Signed = 2,
    /// Word 3: an IEEE 754 binary float (`f32`, `f64`).
    Float = 3,
    /// Word 4: a raw pointer (`*const T`, `*mut T`, `T: Sized`), 8 bytes.
    Pointer = 4,
    /// Word 5: a `bool`, one byte that must be 0 or 1. Not [`Unsigned`](Self::Unsigned):
    /// a `u8` may hold 2..=255.
    Bool = 5,
    /// Word 6: a bfloat16 (`half::bf16`, re-exported as `device_std::bf16`): 8 exponent
    /// bits, 7 mantissa bits. Not a `u16`, not an IEEE `f16`.
    BFloat16 = 6,
    /// Word 7: an IEEE 754 binary16 (`half::f16`, `device_std::f16`). Not a `u16`, not a
    /// `bf16`.
    Float16 = 7,
    /// Word 8: an OCP FP8 e4m3 (`float8::F8E4M3`, `device_std::F8E4M3`): 4 exponent bits,
    /// 3 mantissa bits, no infinities. Not a `u8`, not an e5m2.
    Float8E4M3 = 8,
    /// Word 9: an OCP FP8 e5m2 (`float8::F8E5M2`, `device_std::F8E5M2`): 5 exponent bits,
    /// 2 mantissa bits. Not a `u8`, not an e4m3.
    Float8E5M2 = 9,
}

impl ValueClass {
    /// The class's word in the ABI record (0 to 9).
    pub const fn word(self) -> u32 {
        self as u32
    }

    /// The class for a record word; `None` for a word above 9.
    pub const fn from_word(word: u32) -> Option<Self> {
        Some(match word {
            0 => ValueClass::Opaque,
            1 => ValueClass::Unsigned,
            2 => ValueClass::Signed,
            3 => ValueClass::Float,
            4 => ValueClass::Pointer,
            5 => ValueClass::Bool,
            6 => ValueClass::BFloat16,
            7 => ValueClass::Float16,
            8 => ValueClass::Float8E4M3,
            9 => ValueClass::Float8E5M2,
            _ => return None,
        })
    }

    /// Its name in messages: "opaque", "unsigned integer", "signed integer",
    /// "float", "raw pointer", "bool", "bfloat16", "float16", "e4m3" or "e5m2".
    pub const fn name(self) -> &'static str {
        match self {
            ValueClass::Opaque => "opaque",
            ValueClass::Unsigned => "unsigned integer",
            ValueClass::Signed => "signed integer",
            ValueClass::Float => "float",
            ValueClass::Pointer => "raw pointer",
            ValueClass::Bool => "bool",
            ValueClass::BFloat16 => "bfloat16",
            ValueClass::Float16 => "float16",
            ValueClass::Float8E4M3 => "e4m3",
            ValueClass::Float8E5M2 => "e5m2",
        }
    }

    /// Whether a value of class `self` read as class `other` is a
    /// misinterpretation: both are known (not [`Opaque`](Self::Opaque)) and
    /// they differ. Symmetric; `host_loader` relaxes it in one direction
    /// only (a kernel's raw pointer accepts the host's 8-byte unsigned
    /// integer: see the [module docs](self#value-classes)).
    pub const fn conflicts_with(self, other: ValueClass) -> bool {
        let (a, b) = (self.word(), other.word());
        a != 0 && b != 0 && a != b
    }
}

impl core::fmt::Display for ValueClass {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// A type whose [`ValueClass`] the ABI record carries: every [`PlainData`]
/// type, raw pointers to sized types, `bool` and `c_void`.
///
/// Raw pointer parameters need it for their pointee, on the device
/// (`*const T`) and on the host (`host_loader::Ptr<T>`). A type of your own
/// that is not a `KernelStruct` gets it, opaque, with
/// `unsafe impl device_std::HasValueClass for MyType {}`.
///
/// # Safety
/// [`VALUE_CLASS`](Self::VALUE_CLASS) is how the type's bytes are read: an
/// integer class only for integers (of that signedness), `Float` only for
/// IEEE floats, `Pointer` only for addresses, `Bool` only for `bool`.
/// `Opaque`, the default, is always correct. [`UNTYPED`](Self::UNTYPED) is
/// `true` only for a type nothing is ever read or written as (`c_void`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no value class for the kernel ABI record",
    label = "no `HasValueClass` impl",
    note = "derive `KernelStruct` for it, or say it is opaque: `unsafe impl device_std::HasValueClass for {Self} {{}}`"
)]
pub unsafe trait HasValueClass {
    /// How the bytes are read; [`ValueClass::Opaque`] unless the type says.
    const VALUE_CLASS: ValueClass = ValueClass::Opaque;

    /// Whether a pointer to this type is untyped, as CUDA's `void*`: `true`
    /// for [`c_void`](core::ffi::c_void) only. The ABI record gives such a
    /// pointer element size 0 (with class opaque), and the host accepts a
    /// pointer to any type for it. `false` unless the type says.
    const UNTYPED: bool = false;
}

macro_rules! classed {
    ($class:ident: $($t:ty),*) => {$(
        // SAFETY: the primitive's own interpretation.
        unsafe impl HasValueClass for $t {
            const VALUE_CLASS: ValueClass = ValueClass::$class;
        }
    )*};
}
classed!(Unsigned: u8, u16, u32, u64, u128, usize);
classed!(Signed: i8, i16, i32, i64, i128, isize);
classed!(Float: f32, f64);
classed!(Bool: bool);
classed!(BFloat16: half::bf16);
classed!(Float16: half::f16);
classed!(Float8E4M3: float8::F8E4M3);
classed!(Float8E5M2: float8::F8E5M2);

// SAFETY: an array's bytes are its elements' bytes.
unsafe impl<T: HasValueClass, const N: usize> HasValueClass for [T; N] {
    const VALUE_CLASS: ValueClass = T::VALUE_CLASS;
}

/// The class of a raw pointer to `T`: [`ValueClass::Pointer`] for a thin
/// (8-byte) pointer; a compile error (a failed const assertion) for a fat
/// one, a pointer to `[T]`, `str` or `dyn Trait`.
const fn pointer_class<P>() -> ValueClass {
    assert!(
        core::mem::size_of::<P>() == 8,
        "a raw pointer to an unsized type (`[T]`, `str`, `dyn Trait`) is a 16-byte fat \
         pointer with no stable layout: it cannot be a kernel pointee or element; pass a \
         pointer to the first element (`*const T`) and the length as separate parameters"
    );
    ValueClass::Pointer
}

// SAFETY: a thin raw pointer holds an address; a fat one fails to compile.
unsafe impl<T: ?Sized> HasValueClass for *const T {
    const VALUE_CLASS: ValueClass = pointer_class::<*const T>();
}

// SAFETY: as for `*const T`.
unsafe impl<T: ?Sized> HasValueClass for *mut T {
    const VALUE_CLASS: ValueClass = pointer_class::<*mut T>();
}

// SAFETY: opaque, and untyped: a kernel casts a `*mut c_void` before using it.
unsafe impl HasValueClass for core::ffi::c_void {
    const UNTYPED: bool = true;
}

/// One top-level field of a [`KernelStruct`]: bytes, as `offset_of!` and
/// `size_of` give them, and the field type's [`ValueClass`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldLayout {
    /// The field's name (`"0"`, `"1"`, … for a tuple struct).
    pub name: &'static str,
    /// Offset from the start of the struct, in bytes.
    pub offset: u32,
    /// Size of the field, in bytes.
    pub size: u32,
    /// The field type's [`HasValueClass::VALUE_CLASS`] (an array's is its
    /// element's; a nested struct's is opaque).
    pub class: ValueClass,
}

/// The layout of a [`KernelStruct`]: size and alignment in bytes, and its
/// top-level fields in declaration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StructLayout {
    /// `size_of::<T>()`, in bytes.
    pub size: u32,
    /// `align_of::<T>()`, in bytes.
    pub align: u32,
    /// Top-level fields, in declaration order.
    pub fields: &'static [FieldLayout],
}

/// A `#[repr(C)]` plain-data struct that can be passed to a kernel by value.
///
/// Implement it only with `#[derive(device_std::KernelStruct)]`, which
/// refuses (with a compile error) structs without `#[repr(C)]` (or
/// `#[repr(C, align(N))]`), enums, unions, generic structs and fields that
/// are not [`PlainData`]. It works on the host (stable) too, so one
/// definition serves both sides:
///
/// ```
/// #[repr(C)]
/// #[derive(Clone, Copy, device_std::KernelStruct)]
/// pub struct Params {
///     pub n: u32,
///     pub scale: f32,
///     pub offset: u64,
/// }
///
/// use device_std::KernelStruct;
/// let layout = Params::LAYOUT;
/// assert_eq!((layout.size, layout.align), (16, 8));
/// let offsets: Vec<u32> = layout.fields.iter().map(|f| f.offset).collect();
/// assert_eq!(offsets, [0, 4, 8]);
/// use device_std::ValueClass::{Float, Unsigned};
/// let classes: Vec<_> = layout.fields.iter().map(|f| f.class).collect();
/// assert_eq!(classes, [Unsigned, Float, Unsigned]);
/// ```
///
/// A struct without `#[repr(C)]` is refused:
///
/// ```compile_fail
/// #[derive(Clone, Copy, device_std::KernelStruct)]
/// pub struct Params { pub n: u32 }
/// ```
///
/// The derive also implements [`HasValueClass`] for the struct, as
/// [`ValueClass::Opaque`]: a struct nested in another is compared by size.
///
/// # Safety
/// [`LAYOUT`](Self::LAYOUT) is the type's real layout and the type is
/// [`PlainData`]. The derive guarantees both.
pub unsafe trait KernelStruct: Copy + 'static {
    /// The struct's layout, from the compiler.
    const LAYOUT: StructLayout;
}
