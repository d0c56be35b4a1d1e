//! Plain data and struct layouts: what may cross the kernel boundary by value,
//! and the layout record the host checks a struct against.
//!
//! The same struct definition serves both sides: a `#[repr(C)]` struct with
//! `#[derive(device_std::KernelStruct)]` (and, on the host, `bytemuck::Pod`)
//! is passed by value to a kernel, and its [`StructLayout`] is written into
//! the kernel's ABI record (see [`abi`](crate::abi)) and also readable on the
//! host, where `host_loader` compares the two.

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
pub unsafe trait PlainData: Copy + 'static {}

macro_rules! plain {
    ($($t:ty),*) => {$(
        // SAFETY: every bit pattern of a primitive integer or float is valid.
        unsafe impl PlainData for $t {}
    )*};
}
plain!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);

// SAFETY: an array of plain data is plain data: no padding between elements,
// and each element accepts every bit pattern.
unsafe impl<T: PlainData, const N: usize> PlainData for [T; N] {}

/// One top-level field of a [`KernelStruct`]: bytes, as `offset_of!` and
/// `size_of` give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldLayout {
    /// The field's name (`"0"`, `"1"`, … for a tuple struct).
    pub name: &'static str,
    /// Offset from the start of the struct, in bytes.
    pub offset: u32,
    /// Size of the field, in bytes.
    pub size: u32,
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
/// ```
///
/// A struct without `#[repr(C)]` is refused:
///
/// ```compile_fail
/// #[derive(Clone, Copy, device_std::KernelStruct)]
/// pub struct Params { pub n: u32 }
/// ```
///
/// # Safety
/// [`LAYOUT`](Self::LAYOUT) is the type's real layout and the type is
/// [`PlainData`]. The derive guarantees both.
pub unsafe trait KernelStruct: Copy + 'static {
    /// The struct's layout, from the compiler.
    const LAYOUT: StructLayout;
}
