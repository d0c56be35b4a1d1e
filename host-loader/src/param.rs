//! Rust-side parameter types: what each one looks like in PTX, and how a launch argument
//! of that type becomes the bytes `cuLaunchKernel` copies.

use std::marker::PhantomData;
use std::mem::{align_of, size_of};

use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop};

use device_std::{FieldLayout, HasValueClass, KernelStruct, ValueClass};

use crate::abi_record::AbiKind;
use crate::layout::{short_type_name, ParamLayout};

/// What a Rust parameter type says about the device parameter it stands for, beyond its
/// PTX layout: compared with the kernel's ABI record when the module has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostAbi {
    /// The device-side kind this type matches.
    pub kind: AbiKind,
    /// `size_of::<T>()` of the element type for a pointer or slice of `T`; the size for a
    /// scalar; 0 for a struct.
    pub elem_size: u32,
    /// The scalar's class, or the element type's ([`HasValueClass::VALUE_CLASS`]);
    /// [`ValueClass::Opaque`] for a struct.
    pub elem_class: ValueClass,
    /// A struct's fields in declaration order (from `T::LAYOUT`, with their classes);
    /// empty otherwise.
    pub fields: &'static [FieldLayout],
}

impl HostAbi {
    /// A scalar of `size` bytes and class `class`.
    pub const fn scalar(size: u32, class: ValueClass) -> Self {
        HostAbi {
            kind: AbiKind::Scalar,
            elem_size: size,
            elem_class: class,
            fields: &[],
        }
    }

    /// A pointer or slice (`kind`) of elements of type `T`: `size_of::<T>()` bytes, class
    /// `T::VALUE_CLASS`.
    pub const fn elements<T: HasValueClass>(kind: AbiKind) -> Self {
        HostAbi {
            kind,
            elem_size: size_of::<T>() as u32,
            elem_class: T::VALUE_CLASS,
            fields: &[],
        }
    }
}

/// A Rust type that stands for one kernel parameter.
///
/// The signature of a typed kernel is a tuple of these (see
/// [`KernelSignature`](crate::KernelSignature)). Each one says how the parameter looks in
/// PTX ([`LAYOUT`](Self::LAYOUT)) and what the host passes for it at launch
/// ([`Arg`](Self::Arg)).
///
/// | implementor | device side | PTX | host argument |
/// |---|---|---|---|
/// | `u8` … `u64`, `i8` … `i64`, `usize`, `isize` | same | `.uN` | by value |
/// | `bool` | none (a `#[kernel]` takes no `bool`; CUDA C++'s `bool` without a record) | `.u8` | by value |
/// | `f32`, `f64` | same | `.f32`, `.f64` | by value |
/// | [`Slice<T>`] | `&[T]` | `.align 8 .b8 [16]` | `&CudaSlice<T>` |
/// | [`SliceMut<T>`] | `DisjointSlice<T>`, `&mut [T]` | `.align 8 .b8 [16]` | `&mut CudaSlice<T>` |
/// | [`Ptr<T>`] | `*const T` | `.u64 .ptr .align 1` | `&CudaSlice<T>` |
/// | [`PtrMut<T>`] | `*mut T` | `.u64 .ptr .align 1` | `&mut CudaSlice<T>` |
/// | [`Struct<S>`] | `S` by value (`#[derive(KernelStruct)]`) | `.align A .b8 [S]` | `S` by value |
///
/// The element type `T` of a slice or pointer implements [`HasValueClass`] (primitives,
/// arrays of them, `#[derive(KernelStruct)]` structs; a struct of your own with
/// `unsafe impl HasValueClass for T {}`), which gives the class the ABI record compares.
/// Against a kernel's ABI record:
///
/// - `bool` is its own class: a host `bool` (scalar, or `Ptr<bool>` and the other element
///   forms) is refused for a kernel's `u8`/`i8`, and `PtrMut<u8>` for a kernel's
///   `*mut bool`;
/// - a pointer table (a kernel's `*const *const f32`) takes [`Ptr<u64>`] (or `usize`): a
///   buffer of device addresses, which is how the host holds them (`CUdeviceptr`); cudarc
///   cannot allocate a `CudaSlice<*const f32>`. A kernel's `*const u64` still refuses a
///   `Ptr<*const f32>`;
/// - a kernel's `*mut c_void` / `*const c_void` (untyped, CUDA's `void*`) takes a pointer to
///   any element type.
///
/// # Safety
///
/// An implementor promises that:
/// 1. [`Raw`](Self::Raw) has exactly the size and alignment in [`LAYOUT`](Self::LAYOUT),
///    and its bytes are what the device function expects for a parameter of that
///    layout (the bytes are copied verbatim by `cuLaunchKernel`);
/// 2. [`lower`](Self::lower) returns a value whose device addresses stay valid while the
///    returned guard lives, and the guard performs the stream ordering the access needs
///    (as cudarc's [`DevicePtr`]/[`DevicePtrMut`] guards do);
/// 3. a type whose [`ABI`](Self::ABI) kind is a slice (`Slice`, `DisjointSlice`,
///    `OptionalSlice`, `OptionalDisjointSlice`) returns its lowered start address from
///    [`slice_start`](Self::slice_start) (a device-side `#[kernel(slice_align = N)]`
///    assumes what that check lets through), and an empty one at an address aligned to
///    256 bytes ([`RawSlice::present`] does both).
pub unsafe trait KernelParam {
    /// How the parameter looks in PTX. Compared against the `.param` once, when the
    /// typed kernel handle is made.
    const LAYOUT: ParamLayout;

    /// What the device parameter is (kind, element size and class, struct fields). Compared
    /// with the kernel's ABI record, when the module has one, once, when the handle is made.
    const ABI: HostAbi;

    /// What the host passes for this parameter at launch.
    type Arg<'a>
    where
        Self: 'a;

    /// The by-value bytes handed to `cuLaunchKernel`.
    type Raw: Copy;

    /// Kept alive until the launch is enqueued, then dropped to record stream events.
    type Guard<'a>
    where
        Self: 'a;

    /// Turns a launch argument into the parameter bytes, making `stream` wait for
    /// earlier writes (and, for mutable arguments, reads) of the memory it names.
    fn lower<'a>(arg: Self::Arg<'a>, stream: &'a CudaStream) -> (Self::Raw, Self::Guard<'a>);

    /// The device address a slice parameter's bytes start at (`Slice`, `SliceMut`,
    /// `OptSlice`, `OptSliceMut`; 0 for an absent one), for the check of
    /// `#[kernel(slice_align = N)]`; `None` for every other parameter.
    #[inline(always)]
    fn slice_start(raw: &Self::Raw) -> Option<u64> {
        let _ = raw;
        None
    }

    /// The Rust type name shown in errors, e.g. `Slice<f32>`.
    fn type_name() -> String {
        short_type_name(std::any::type_name::<Self>())
    }
}

macro_rules! scalar_params {
    ($ctor:ident: $($t:ty),*) => {$(
        // SAFETY: a scalar is passed by value; `Raw = Self` has the size and alignment of
        // `size_of::<Self>()`, which is the PTX scalar's, and holds no device address.
        unsafe impl KernelParam for $t {
            const LAYOUT: ParamLayout = ParamLayout::$ctor(size_of::<$t>() as u32);
            const ABI: HostAbi =
                HostAbi::scalar(size_of::<$t>() as u32, <$t as HasValueClass>::VALUE_CLASS);
            type Arg<'a> = $t;
            type Raw = $t;
            type Guard<'a> = ();
            #[inline(always)]
            fn lower(arg: $t, _stream: &CudaStream) -> ($t, ()) {
                (arg, ())
            }
        }
    )*};
}

scalar_params!(int: u8, i8, u16, i16, u32, i32, u64, i64, usize, isize, bool);
scalar_params!(float: f32, f64);

/// A device-side slice as a kernel parameter: `(ptr, len)` with `len` in elements.
///
/// This is the byte form of `&[T]` and of `device_std::DisjointSlice<T>`: a `#[repr(C)]`
/// pair of a 64-bit address and a 64-bit element count, 16 bytes aligned to 8.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawSlice {
    /// Device address of element 0.
    pub ptr: u64,
    /// Length in elements (not bytes).
    pub len: u64,
}

const SLICE_LAYOUT: ParamLayout =
    ParamLayout::aggregate(size_of::<RawSlice>() as u32, align_of::<RawSlice>() as u32);

impl RawSlice {
    /// The slice of `len` elements of `T` at `ptr`; an empty one (whose allocation can
    /// have a null address) at [`EMPTY_ADDRESS`](Self::EMPTY_ADDRESS) instead: `&[T]` and
    /// `DisjointSlice<T>` are never null on the device, `Option<&[T]>` reads a null
    /// address as `None`, and `#[kernel(slice_align = N)]` assumes every slice aligned.
    #[inline(always)]
    pub fn present<T>(ptr: u64, len: u64) -> RawSlice {
        let ptr = if ptr == 0 || len == 0 {
            Self::EMPTY_ADDRESS.max(align_of::<T>() as u64)
        } else {
            ptr
        };
        RawSlice { ptr, len }
    }

    /// Where an empty slice points on the device: non-null, and aligned for any `T` up to
    /// 256-byte alignment and for any `#[kernel(slice_align = N)]` (at most 256). Nothing
    /// is read there.
    pub const EMPTY_ADDRESS: u64 = 256;

    /// An absent optional slice (`None` on the device): a null address, length 0.
    pub const ABSENT: RawSlice = RawSlice { ptr: 0, len: 0 };
}

macro_rules! marker {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// A marker type: it names a parameter in a kernel signature and is never
        /// constructed.
        pub struct $name<T>(PhantomData<fn() -> T>);

        impl<T> std::fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&short_type_name(std::any::type_name::<Self>()))
            }
        }
    };
}

marker!(
    /// A read-only device slice: the kernel takes `&[T]`.
    ///
    /// PTX: `.param .align 8 .b8 NAME[16]`, holding `(ptr, len)` with `len` in elements.
    /// Launch argument: `&CudaSlice<T>`, or a view of part of one (`&buf.slice(a..b)`,
    /// CUDA's `d_data + offset`: the kernel's slice is the view, its length the view's),
    /// anything cudarc's [`DevicePtr`] covers; the launch waits for earlier writes to it and
    /// records a read.
    Slice
);
marker!(
    /// A writable device slice: the kernel takes `DisjointSlice<T>` or `&mut [T]`.
    ///
    /// PTX: `.param .align 8 .b8 NAME[16]`, holding `(ptr, len)` with `len` in elements.
    /// Launch argument: `&mut CudaSlice<T>`, or a mutable view of part of one
    /// (`&mut buf.slice_mut(a..b)`), anything cudarc's [`DevicePtrMut`] covers; the launch
    /// waits for earlier reads and writes of it and records a write.
    SliceMut
);
marker!(
    /// A read-only raw device pointer: the kernel takes `*const T`.
    ///
    /// PTX: `.param .u64 .ptr .align 1 NAME`. Launch argument: `&CudaSlice<T>` or a view
    /// (its first element's address); the length is not passed.
    Ptr
);
marker!(
    /// A writable raw device pointer: the kernel takes `*mut T`.
    ///
    /// PTX: `.param .u64 .ptr .align 1 NAME`. Launch argument: `&mut CudaSlice<T>` or a
    /// mutable view (its first element's address); the length is not passed.
    PtrMut
);

// SAFETY: `RawSlice` is `#[repr(C)] {u64, u64}`: 16 bytes aligned to 8, the byte form of
// `&[T]` on nvptx64. The address comes from `device_ptr`, whose guard records the read on
// `stream` when dropped after the launch; `len` is `CudaSlice::len`, in elements.
unsafe impl<T: HasValueClass> KernelParam for Slice<T> {
    const LAYOUT: ParamLayout = SLICE_LAYOUT;
    const ABI: HostAbi = HostAbi::elements::<T>(AbiKind::Slice);

    #[inline(always)]
    fn slice_start(raw: &RawSlice) -> Option<u64> {
        Some(raw.ptr)
    }
    type Arg<'a>
        = &'a (dyn DevicePtr<T> + 'a)
    where
        Self: 'a;
    type Raw = RawSlice;
    type Guard<'a>
        = SyncOnDrop<'a>
    where
        Self: 'a;
    #[inline(always)]
    fn lower<'a>(
        arg: &'a (dyn DevicePtr<T> + 'a),
        stream: &'a CudaStream,
    ) -> (RawSlice, SyncOnDrop<'a>) {
        let len = arg.len() as u64;
        let (ptr, guard) = arg.device_ptr(stream);
        (RawSlice::present::<T>(ptr, len), guard)
    }
}

// SAFETY: as for `Slice<T>`; `device_ptr_mut` makes `stream` wait for earlier reads and
// writes and its guard records the write after the launch.
unsafe impl<T: HasValueClass> KernelParam for SliceMut<T> {
    const LAYOUT: ParamLayout = SLICE_LAYOUT;
    const ABI: HostAbi = HostAbi::elements::<T>(AbiKind::DisjointSlice);

    #[inline(always)]
    fn slice_start(raw: &RawSlice) -> Option<u64> {
        Some(raw.ptr)
    }
    type Arg<'a>
        = &'a mut (dyn DevicePtrMut<T> + 'a)
    where
        Self: 'a;
    type Raw = RawSlice;
    type Guard<'a>
        = SyncOnDrop<'a>
    where
        Self: 'a;
    #[inline(always)]
    fn lower<'a>(
        arg: &'a mut (dyn DevicePtrMut<T> + 'a),
        stream: &'a CudaStream,
    ) -> (RawSlice, SyncOnDrop<'a>) {
        let len = arg.len() as u64;
        let (ptr, guard) = arg.device_ptr_mut(stream);
        (RawSlice::present::<T>(ptr, len), guard)
    }
}

// SAFETY: a device address is a `u64` (8 bytes aligned to 8), the PTX `.u64 .ptr` form.
// The guard from `device_ptr` records the read after the launch.
unsafe impl<T: HasValueClass> KernelParam for Ptr<T> {
    const LAYOUT: ParamLayout = ParamLayout::pointer();
    const ABI: HostAbi = HostAbi::elements::<T>(AbiKind::Pointer);
    type Arg<'a>
        = &'a (dyn DevicePtr<T> + 'a)
    where
        Self: 'a;
    type Raw = u64;
    type Guard<'a>
        = SyncOnDrop<'a>
    where
        Self: 'a;
    #[inline(always)]
    fn lower<'a>(
        arg: &'a (dyn DevicePtr<T> + 'a),
        stream: &'a CudaStream,
    ) -> (u64, SyncOnDrop<'a>) {
        arg.device_ptr(stream)
    }
}

// SAFETY: as for `Ptr<T>`, through `device_ptr_mut` (waits for reads and writes, records
// the write).
unsafe impl<T: HasValueClass> KernelParam for PtrMut<T> {
    const LAYOUT: ParamLayout = ParamLayout::pointer();
    const ABI: HostAbi = HostAbi::elements::<T>(AbiKind::Pointer);
    type Arg<'a>
        = &'a mut (dyn DevicePtrMut<T> + 'a)
    where
        Self: 'a;
    type Raw = u64;
    type Guard<'a>
        = SyncOnDrop<'a>
    where
        Self: 'a;
    #[inline(always)]
    fn lower<'a>(
        arg: &'a mut (dyn DevicePtrMut<T> + 'a),
        stream: &'a CudaStream,
    ) -> (u64, SyncOnDrop<'a>) {
        arg.device_ptr_mut(stream)
    }
}

marker!(
    /// An optional read-only device slice: the kernel takes `Option<&[T]>` (CUDA's
    /// `const float *x` that may be `NULL`).
    ///
    /// PTX: `.param .align 8 .b8 NAME[16]`, `(ptr, len)` as for [`Slice`]. Launch
    /// argument: `Some(&buf)` (a `CudaSlice`, a `DeviceBuffer`, a view: what [`Slice`]
    /// takes), or `None`, which the kernel sees as `None` (a null address).
    OptSlice
);
marker!(
    /// An optional writable device slice: the kernel takes `Option<DisjointSlice<T>>`
    /// (CUDA's `int *partial_sums = NULL`).
    ///
    /// PTX: `.param .align 8 .b8 NAME[16]`, as for [`SliceMut`]. Launch argument:
    /// `Some(&mut buf)` or `None`.
    OptSliceMut
);

// SAFETY: the byte form of `Option<&[T]>` is `&[T]`'s with a null address for `None`:
// `Some` passes a non-null address (`RawSlice::present`), `None` a null one. A present
// buffer's guard orders the launch as for `Slice<T>`.
unsafe impl<T: HasValueClass> KernelParam for OptSlice<T> {
    const LAYOUT: ParamLayout = SLICE_LAYOUT;
    const ABI: HostAbi = HostAbi::elements::<T>(AbiKind::OptionalSlice);

    #[inline(always)]
    fn slice_start(raw: &RawSlice) -> Option<u64> {
        Some(raw.ptr)
    }
    type Arg<'a>
        = Option<&'a (dyn DevicePtr<T> + 'a)>
    where
        Self: 'a;
    type Raw = RawSlice;
    type Guard<'a>
        = Option<SyncOnDrop<'a>>
    where
        Self: 'a;
    #[inline(always)]
    fn lower<'a>(
        arg: Option<&'a (dyn DevicePtr<T> + 'a)>,
        stream: &'a CudaStream,
    ) -> (RawSlice, Option<SyncOnDrop<'a>>) {
        match arg {
            Some(arg) => {
                let (raw, guard) = <Slice<T> as KernelParam>::lower(arg, stream);
                (raw, Some(guard))
            }
            None => (RawSlice::ABSENT, None),
        }
    }
}

// SAFETY: as for `OptSlice<T>`, with `SliceMut<T>`'s ordering for a present buffer.
unsafe impl<T: HasValueClass> KernelParam for OptSliceMut<T> {
    const LAYOUT: ParamLayout = SLICE_LAYOUT;
    const ABI: HostAbi = HostAbi::elements::<T>(AbiKind::OptionalDisjointSlice);

    #[inline(always)]
    fn slice_start(raw: &RawSlice) -> Option<u64> {
        Some(raw.ptr)
    }
    type Arg<'a>
        = Option<&'a mut (dyn DevicePtrMut<T> + 'a)>
    where
        Self: 'a;
    type Raw = RawSlice;
    type Guard<'a>
        = Option<SyncOnDrop<'a>>
    where
        Self: 'a;
    #[inline(always)]
    fn lower<'a>(
        arg: Option<&'a mut (dyn DevicePtrMut<T> + 'a)>,
        stream: &'a CudaStream,
    ) -> (RawSlice, Option<SyncOnDrop<'a>>) {
        match arg {
            Some(arg) => {
                let (raw, guard) = <SliceMut<T> as KernelParam>::lower(arg, stream);
                (raw, Some(guard))
            }
            None => (RawSlice::ABSENT, None),
        }
    }
}

marker!(
    /// A `#[repr(C)]` struct passed to a kernel by value: the kernel takes `T`.
    ///
    /// `T` implements [`device_std::KernelStruct`] (only through
    /// `#[derive(device_std::KernelStruct)]`, which requires `#[repr(C)]`, plain-data
    /// fields, and records every field's offset and size in `T::LAYOUT`); padding is
    /// allowed (the driver copies the value's bytes from a pointer; device code never reads
    /// padding), so `bytemuck::Pod` is not needed. The same type is meant to be used on
    /// both sides: define it in a crate that builds for the device and the host.
    ///
    /// PTX: `.param .align A .b8 NAME[S]` with `S = size_of::<T>()` and
    /// `A = align_of::<T>()` (rustc supports `A` up to 16). Launch argument: `T` by value.
    ///
    /// The PTX shows only `S` and `A`. When the kernel was built with `#[kernel]`, its ABI
    /// record also lists the device struct's field offsets, sizes and value classes, and
    /// [`Module::kernel`](crate::Module::kernel) compares them with `T::LAYOUT`, so two
    /// fields in a different order are refused, equal-size ones too when their classes
    /// differ (`f32` and `u32` swapped, `i32` for `u32`); a nested struct field is opaque
    /// and compared by size. Without a record (hand-written PTX) only `S` and `A` are
    /// checked.
    Struct
);

// SAFETY: `T: KernelStruct` is `#[repr(C)]` plain data (the derive checks it); the driver
// copies its `size_of` bytes from the slot's address (padding included, never read as a
// value on either side), and size and alignment are exactly `size_of`/`align_of`, as in
// the PTX byval aggregate. `T::LAYOUT.fields` is the derive's record of `T`'s fields.
unsafe impl<T: KernelStruct> KernelParam for Struct<T> {
    const LAYOUT: ParamLayout =
        ParamLayout::aggregate(size_of::<T>() as u32, align_of::<T>() as u32);
    const ABI: HostAbi = HostAbi {
        kind: AbiKind::Struct,
        elem_size: 0,
        elem_class: ValueClass::Opaque,
        fields: T::LAYOUT.fields,
    };
    type Arg<'a>
        = T
    where
        Self: 'a;
    type Raw = T;
    type Guard<'a>
        = ()
    where
        Self: 'a;
    #[inline(always)]
    fn lower(arg: T, _stream: &CudaStream) -> (T, ()) {
        (arg, ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{ParamClass, ScalarKind};

    /// A kernel struct with padding (3 bytes after `a`): not `bytemuck::Pod`, still a
    /// `Struct` parameter (issue 31, point 7: a struct the host never passes no longer has
    /// to be `Pod` for the bindings to compile).
    #[repr(C)]
    #[derive(Clone, Copy, device_std::KernelStruct)]
    struct Padded {
        a: u8,
        b: u32,
    }

    #[test]
    fn a_padded_kernel_struct_is_a_struct_parameter() {
        assert_eq!(
            <Struct<Padded> as KernelParam>::LAYOUT,
            ParamLayout::aggregate(8, 4)
        );
        let fields = <Struct<Padded> as KernelParam>::ABI.fields;
        assert_eq!(fields.len(), 2);
        assert_eq!((fields[1].offset, fields[1].size), (4, 4));
        let p = Padded { a: 7, b: 9 };
        assert_eq!((p.a, p.b), (7, 9));
    }

    #[test]
    fn scalar_layouts() {
        assert_eq!(<u8 as KernelParam>::LAYOUT, ParamLayout::int(1));
        assert_eq!(<bool as KernelParam>::LAYOUT, ParamLayout::int(1));
        assert_eq!(<i16 as KernelParam>::LAYOUT, ParamLayout::int(2));
        assert_eq!(<u32 as KernelParam>::LAYOUT, ParamLayout::int(4));
        assert_eq!(<usize as KernelParam>::LAYOUT, ParamLayout::int(8));
        assert_eq!(<f32 as KernelParam>::LAYOUT, ParamLayout::float(4));
        assert_eq!(
            <f64 as KernelParam>::LAYOUT.class,
            ParamClass::Scalar(ScalarKind::Float)
        );
    }

    #[test]
    fn slice_and_pointer_layouts() {
        assert_eq!(size_of::<RawSlice>(), 16);
        assert_eq!(align_of::<RawSlice>(), 8);
        assert_eq!(
            <Slice<f32> as KernelParam>::LAYOUT,
            ParamLayout::aggregate(16, 8)
        );
        assert_eq!(
            <SliceMut<u8> as KernelParam>::LAYOUT,
            ParamLayout::aggregate(16, 8)
        );
        assert_eq!(<Ptr<f64> as KernelParam>::LAYOUT, ParamLayout::pointer());
        assert_eq!(<PtrMut<u16> as KernelParam>::LAYOUT, ParamLayout::pointer());
        assert_eq!(<Slice<f32> as KernelParam>::type_name(), "Slice<f32>");
    }
}
