//! [`AbiMismatch`]: what the record check refuses in a Rust argument type, and its
//! message. Uses only [`crate::abi_record`] and [`crate::message`], so the crate's
//! [`Error`](crate::Error) can box it without an import circle.

use std::fmt;

use device_std::ValueClass;

use crate::abi_record::{AbiField, AbiKind};
use crate::message::{article, bytes, location};

/// The details of [`Error::AbiMismatch`](crate::Error::AbiMismatch): one parameter whose
/// Rust type the kernel's ABI record refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AbiMismatch {
    /// Module display name (file path), when known.
    pub module: Option<String>,
    /// 1-based line of the `.entry` in the module (0 when unknown).
    pub line: u32,
    /// The kernel (`.entry`) name.
    pub kernel: String,
    /// 0-based parameter index.
    pub param_index: usize,
    /// The PTX parameter name.
    pub param_name: String,
    /// The Rust argument type, e.g. `Slice<f64>` or `Struct<Affine>`.
    pub rust_type: String,
    /// What differs.
    pub detail: AbiMismatchDetail,
}

/// What differs between a kernel's ABI record and a Rust argument type.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AbiMismatchDetail {
    /// A different kind of parameter, e.g. `Slice<T>` for a `DisjointSlice<T>`.
    Kind {
        /// What the kernel takes.
        device: AbiKind,
        /// What the Rust type stands for.
        host: AbiKind,
    },
    /// A pointer's or slice's element type has a different size.
    ElemSize {
        /// `size_of` of the device element type, in bytes.
        device: u32,
        /// `size_of` of the Rust element type, in bytes.
        host: u32,
    },
    /// The structs have a different number of fields.
    FieldCount {
        /// Fields of the device struct.
        device: usize,
        /// Fields of the Rust struct.
        host: usize,
    },
    /// A struct field sits at a different offset or has a different size.
    Field {
        /// 0-based field index, in declaration order.
        index: usize,
        /// The Rust field's name.
        host_name: &'static str,
        /// The device field.
        device: AbiField,
        /// The Rust field.
        host: AbiField,
    },
    /// A scalar, or a pointer's or slice's element type, has the same size but another
    /// value class (e.g. `u32` for `f32`, `u32` for `i32`).
    ElemClass {
        /// What the parameter is (both sides agree).
        kind: AbiKind,
        /// Size in bytes of the scalar or element type (both sides agree).
        size: u32,
        /// The device class.
        device: ValueClass,
        /// The Rust class.
        host: ValueClass,
    },
    /// A tensor map of another rank or box: the extents, innermost first.
    TensorBox {
        /// The kernel's box (`TensorMap<T, RANK, B0, ...>`).
        device: Vec<u32>,
        /// The Rust argument's box.
        host: Vec<u32>,
    },
    /// A texture or surface object of another dimension count.
    TextureDims {
        /// The kernel's `D`.
        device: u32,
        /// The Rust argument's `D`.
        host: u32,
    },
    /// A tensor map with another shared-memory swizzle, in bytes (0: none).
    TensorSwizzle {
        /// The kernel's `SWIZZLE`.
        device: u32,
        /// The Rust argument's `SWIZZLE`.
        host: u32,
    },
    /// A struct field has the same offset and size but another value class (two
    /// equal-size fields of different types swapped, or `f32` for `i32`).
    FieldClass {
        /// 0-based field index, in declaration order.
        index: usize,
        /// The Rust field's name.
        host_name: &'static str,
        /// The device field.
        device: AbiField,
        /// The Rust field.
        host: AbiField,
    },
}

impl fmt::Display for AbiMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}kernel `{}` parameter {} (`{}`): ",
            location(&self.module, self.line),
            self.kernel,
            self.param_index,
            self.param_name
        )?;
        let ty = &self.rust_type;
        match &self.detail {
            AbiMismatchDetail::Kind { device, host } => write!(
                f,
                "the kernel takes {device}, the Rust argument `{ty}` is {host}; use {}",
                device.host_form()
            ),
            AbiMismatchDetail::TensorBox { device, host } => write!(
                f,
                "the kernel's tensor map copies boxes of {device:?} elements (rank {}), the \
                 Rust argument `{ty}` boxes of {host:?} (rank {}); encode the map with the \
                 kernel's rank and box",
                device.len(),
                host.len()
            ),
            AbiMismatchDetail::TextureDims { device, host } => write!(
                f,
                "the kernel's object has {device} dimensions, the Rust argument `{ty}` has \
                 {host}; make it over a {device}D array"
            ),
            AbiMismatchDetail::TensorSwizzle { device, host } => write!(
                f,
                "the kernel's tensor map swizzles shared memory by {device} bytes (0: none), \
                 the Rust argument `{ty}` by {host}; a copy with another swizzle scrambles \
                 the tile: encode the map with SWIZZLE = {device}"
            ),
            AbiMismatchDetail::ElemSize { device, host } => write!(
                f,
                "the kernel's element type is {}, the element type of the Rust argument \
                 `{ty}` is {}",
                bytes(u64::from(*device)),
                bytes(u64::from(*host))
            ),
            AbiMismatchDetail::FieldCount { device, host } => write!(
                f,
                "the kernel's struct has {device} fields, the Rust argument `{ty}` has {host}; \
                 the two struct definitions differ"
            ),
            AbiMismatchDetail::Field {
                index,
                host_name,
                device,
                host,
            } => write!(
                f,
                "field {index} of the kernel's struct is {} at byte offset {}, field \
                 {index} (`{host_name}`) of the Rust argument `{ty}` is {} at byte offset {}; \
                 the two struct definitions differ (fields in another order?)",
                bytes(u64::from(device.size)),
                device.offset,
                bytes(u64::from(host.size)),
                host.offset
            ),
            AbiMismatchDetail::ElemClass {
                kind,
                size,
                device,
                host,
            } => {
                let (what, pre, post) = match kind {
                    AbiKind::Scalar => ("classes", article(*size), ""),
                    AbiKind::Pointer => ("pointee classes", "a raw pointer to ", " data"),
                    AbiKind::Slice => ("element classes", "a read-only slice of ", " elements"),
                    AbiKind::DisjointSlice => {
                        ("element classes", "a writable slice of ", " elements")
                    }
                    AbiKind::Struct => ("classes", "a struct of ", " data"),
                    AbiKind::TensorMap => ("element classes", "a tensor map of ", " elements"),
                    AbiKind::Texture => ("texel classes", "a texture of ", " texels"),
                    AbiKind::Surface => ("texel classes", "a surface of ", " texels"),
                    AbiKind::OptionalSlice => (
                        "element classes",
                        "an optional read-only slice of ",
                        " elements",
                    ),
                    AbiKind::OptionalDisjointSlice => (
                        "element classes",
                        "an optional writable slice of ",
                        " elements",
                    ),
                };
                write!(
                    f,
                    "the kernel takes {pre}{size}-byte {device}{post}, the Rust argument `{ty}` \
                     is {pre}{size}-byte {host}{post}; {what} differ: {device} vs {host}{}",
                    class_hint(*device, *host)
                )
            }
            AbiMismatchDetail::FieldClass {
                index,
                host_name,
                device,
                host,
            } => write!(
                f,
                "field {index} of the kernel's struct is {}{}-byte {} at byte offset {}, field \
                 {index} (`{host_name}`) of the Rust argument `{ty}` is {}{}-byte {} at byte \
                 offset {}; field classes differ: {} vs {} (the two struct definitions differ: \
                 fields of equal size in another order?){}",
                article(device.size),
                device.size,
                device.class,
                device.offset,
                article(host.size),
                host.size,
                host.class,
                host.offset,
                device.class,
                host.class,
                class_hint(device.class, host.class)
            ),
        }
    }
}

impl std::error::Error for AbiMismatch {}

/// Why two classes that look alike differ, for the pairs that need it: a device address
/// on the host is a `u64`; a `bool` is not a byte.
fn class_hint(device: ValueClass, host: ValueClass) -> &'static str {
    match (device, host) {
        (ValueClass::Pointer, _) => "; a device address on the host is a `u64` (`CUdeviceptr`)",
        (ValueClass::Bool, _) | (_, ValueClass::Bool) => {
            "; `bool` is a class of its own: a `bool` must be 0 or 1, a byte need not be"
        }
        (ValueClass::BFloat16 | ValueClass::Float16, _)
        | (_, ValueClass::BFloat16 | ValueClass::Float16) => {
            "; `bf16`, `f16` and `u16` read the same 16 bits as different numbers"
        }
        (ValueClass::Float8E4M3 | ValueClass::Float8E5M2, _)
        | (_, ValueClass::Float8E4M3 | ValueClass::Float8E5M2) => {
            "; `F8E4M3`, `F8E5M2` and `u8` read the same 8 bits as different numbers"
        }
        _ => "",
    }
}
