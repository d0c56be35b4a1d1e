//! Parameter layouts and the rule that decides which Rust layout a PTX parameter accepts.
//!
//! Both sides of the kernel boundary are described by the same small value, a
//! [`ParamLayout`]: byte size, byte alignment and a [`ParamClass`]. The PTX side comes from
//! [`ParamLayout::from_ptx`]; the Rust side is the associated constant
//! [`KernelParam::LAYOUT`](crate::KernelParam::LAYOUT). [`ParamLayout::accepts`] is the
//! whole verdict.

use std::fmt;

use ptx_linker::{Param, ParamKind};

use crate::message::{bytes, location};

/// What kind of scalar a parameter holds.
///
/// PTX spells integers as `.uN`/`.sN`, floats as `.fN` and untyped bits as `.bN`. rustc
/// lowers every Rust integer (signed or not, and `bool`) to `.uN` and every float to
/// `.fN`, so sign is not part of the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarKind {
    /// `.u8` … `.u64`, `.s8` … `.s64`; on the Rust side every integer type and `bool`.
    Int,
    /// `.f16` … `.f64`; on the Rust side `f32` and `f64`.
    Float,
    /// `.b8` … `.b64`: untyped bits. Accepts an integer or a float of the same size.
    Bits,
    /// Any other PTX parameter type (`.texref`, `.samplerref`, `.pred`, …). No Rust type
    /// matches it.
    Other,
}

/// The shape of a parameter, as far as the launch ABI is concerned.
///
/// A `u64` scalar and a device pointer are both 8 bytes aligned to 8; the class tells them
/// apart. rustc marks every raw-pointer parameter `.ptr`, so the distinction is reliable
/// for rustc-built PTX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamClass {
    /// A scalar passed by value (`.param .u32 x`).
    Scalar(ScalarKind),
    /// A raw device pointer (`.param .u64 .ptr .align 1 x`).
    Pointer,
    /// A byval aggregate (`.param .align A .b8 x[S]`): a slice's `(ptr, len)` pair or a
    /// `#[repr(C)]` struct.
    Aggregate,
}

/// Byte size, byte alignment and class of one kernel parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParamLayout {
    /// Size in bytes.
    pub size: u32,
    /// Alignment in bytes.
    pub align: u32,
    /// Scalar, pointer or aggregate.
    pub class: ParamClass,
}

impl ParamLayout {
    /// An integer scalar of `size` bytes, aligned to `size`.
    pub const fn int(size: u32) -> Self {
        ParamLayout {
            size,
            align: size,
            class: ParamClass::Scalar(ScalarKind::Int),
        }
    }

    /// A float scalar of `size` bytes, aligned to `size`.
    pub const fn float(size: u32) -> Self {
        ParamLayout {
            size,
            align: size,
            class: ParamClass::Scalar(ScalarKind::Float),
        }
    }

    /// A 64-bit device pointer: 8 bytes aligned to 8.
    pub const fn pointer() -> Self {
        ParamLayout {
            size: 8,
            align: 8,
            class: ParamClass::Pointer,
        }
    }

    /// A byval aggregate of `size` bytes aligned to `align` bytes.
    pub const fn aggregate(size: u32, align: u32) -> Self {
        ParamLayout {
            size,
            align,
            class: ParamClass::Aggregate,
        }
    }

    /// The layout a PTX `.param` declares.
    pub fn from_ptx(param: &Param) -> Self {
        let class = match &param.kind {
            ParamKind::Scalar { ty } => ParamClass::Scalar(scalar_kind(ty)),
            ParamKind::Pointer { .. } => ParamClass::Pointer,
            ParamKind::Aggregate { .. } => ParamClass::Aggregate,
        };
        ParamLayout {
            size: param.size,
            align: param.align,
            class,
        }
    }

    /// Whether a PTX parameter with layout `self` accepts a Rust argument with layout
    /// `rust`.
    ///
    /// Size and alignment must be equal, and the classes must agree:
    ///
    /// | PTX declares | accepts |
    /// |---|---|
    /// | `.uN` / `.sN` | an integer (or `bool`) of N bits |
    /// | `.fN` | a float of N bits |
    /// | `.bN` | an integer or a float of N bits |
    /// | `.u64 .ptr` | a device pointer ([`Ptr`](crate::Ptr), [`PtrMut`](crate::PtrMut)) only |
    /// | `.align A .b8 [S]` | any aggregate of S bytes aligned to A: [`Slice`](crate::Slice) and [`SliceMut`](crate::SliceMut) for `[16]`/8, or a [`Struct<T>`](crate::Struct) |
    ///
    /// A plain `.u64` does **not** accept a pointer, and `.u64 .ptr` does not accept a
    /// `u64`. Other front ends (nvcc) declare pointers as plain `.u64`; such kernels take
    /// their pointer arguments as `u64` on the Rust side.
    pub const fn accepts(&self, rust: &ParamLayout) -> bool {
        if self.size != rust.size || self.align != rust.align {
            return false;
        }
        match (self.class, rust.class) {
            (ParamClass::Scalar(p), ParamClass::Scalar(r)) => scalar_accepts(p, r),
            (ParamClass::Pointer, ParamClass::Pointer) => true,
            (ParamClass::Aggregate, ParamClass::Aggregate) => true,
            _ => false,
        }
    }

    /// What a Rust argument with this layout should be, e.g. "`u64`, `i64` or `usize`".
    /// Used as the fix hint of [`Error::LayoutMismatch`](crate::Error::LayoutMismatch).
    pub fn rust_hint(&self) -> String {
        match self.class {
            ParamClass::Scalar(ScalarKind::Int) => match self.size {
                1 => "`u8`, `i8` or `bool`".into(),
                2 => "`u16` or `i16`".into(),
                4 => "`u32` or `i32`".into(),
                8 => "`u64`, `i64` or `usize`".into(),
                n => format!("a {n}-byte integer"),
            },
            ParamClass::Scalar(ScalarKind::Float) => match self.size {
                4 => "`f32`".into(),
                8 => "`f64`".into(),
                n => format!("a {n}-byte float"),
            },
            ParamClass::Scalar(ScalarKind::Bits) => match self.size {
                4 => "`u32`, `i32` or `f32`".into(),
                8 => "`u64`, `i64`, `usize` or `f64`".into(),
                n => format!("a {n}-byte integer or float"),
            },
            ParamClass::Scalar(ScalarKind::Other) => {
                "nothing: host-loader has no Rust type for this PTX parameter type".into()
            }
            ParamClass::Pointer => {
                "`Ptr<T>` or `PtrMut<T>` (the kernel takes a raw pointer, not a slice)".into()
            }
            ParamClass::Aggregate if self.size == 16 && self.align == 8 => {
                "`Slice<T>` (`&[T]`), `SliceMut<T>` (`DisjointSlice<T>`, `&mut [T]`), \
                 or a `Struct<T>` with a `T` of 16 bytes aligned to 8"
                    .into()
            }
            ParamClass::Aggregate => format!(
                "a `Struct<T>` with size_of::<T>() = {} and align_of::<T>() = {}",
                self.size, self.align
            ),
        }
    }

    /// A short description of the class, e.g. "integer", "device pointer".
    pub fn class_name(&self) -> &'static str {
        match self.class {
            ParamClass::Scalar(ScalarKind::Int) => "integer",
            ParamClass::Scalar(ScalarKind::Float) => "float",
            ParamClass::Scalar(ScalarKind::Bits) => "untyped bits",
            ParamClass::Scalar(ScalarKind::Other) => "opaque",
            ParamClass::Pointer => "device pointer",
            ParamClass::Aggregate => "aggregate",
        }
    }
}

impl fmt::Display for ParamLayout {
    /// "8 bytes aligned to 8 (device pointer)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} aligned to {} ({})",
            bytes(u64::from(self.size)),
            self.align,
            self.class_name()
        )
    }
}

const fn scalar_accepts(ptx: ScalarKind, rust: ScalarKind) -> bool {
    match (ptx, rust) {
        (ScalarKind::Other, _) | (_, ScalarKind::Other) => false,
        (ScalarKind::Bits, _) | (_, ScalarKind::Bits) => true,
        (ScalarKind::Int, ScalarKind::Int) | (ScalarKind::Float, ScalarKind::Float) => true,
        _ => false,
    }
}

fn scalar_kind(ty: &str) -> ScalarKind {
    let ty = ty.trim_start_matches('.');
    let (head, bits) = ty.split_at(ty.len().min(1));
    if bits.is_empty() || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return ScalarKind::Other;
    }
    match head {
        "u" | "s" => ScalarKind::Int,
        "f" => ScalarKind::Float,
        "b" => ScalarKind::Bits,
        _ => ScalarKind::Other,
    }
}

/// How the PTX declares `param`, without its name: `.u64`, `.u64 .ptr .global .align 1`,
/// `.align 8 .b8 [16]`.
pub(crate) fn ptx_decl(param: &Param) -> String {
    match &param.kind {
        ParamKind::Scalar { ty } => format!(".{}", ty.trim_start_matches('.')),
        ParamKind::Pointer {
            space,
            pointee_align,
        } => match space {
            Some(s) => format!(
                ".u64 .ptr .{} .align {pointee_align}",
                s.trim_start_matches('.')
            ),
            None => format!(".u64 .ptr .align {pointee_align}"),
        },
        ParamKind::Aggregate { elem } => {
            let elem = elem.trim_start_matches('.');
            let elem_bytes = elem
                .get(1..)
                .and_then(|b| b.parse::<u32>().ok())
                .map(|bits| bits / 8)
                .filter(|&b| param.size.checked_rem(b) == Some(0))
                .unwrap_or(1);
            format!(
                ".align {} .{elem} [{}]",
                param.align,
                param.size / elem_bytes
            )
        }
    }
}

/// `std::any::type_name` without module paths: `host_loader::Slice<f32>` → `Slice<f32>`.
pub(crate) fn short_type_name(full: &str) -> String {
    let mut out = String::with_capacity(full.len());
    let mut seg_start = 0;
    let mut chars = full.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ':' && chars.peek() == Some(&':') {
            chars.next();
            out.truncate(seg_start);
        } else if c.is_alphanumeric() || c == '_' {
            out.push(c);
        } else {
            out.push(c);
            seg_start = out.len();
        }
    }
    out
}

/// The details of [`Error::LayoutMismatch`](crate::Error::LayoutMismatch).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}kernel `{kernel}` parameter {param_index} (`{param_name}`): the PTX expects {} \
     aligned to {} ({ptx_decl}), the Rust argument `{rust_type}` is {found}; use {}",
    location(module, *line),
    bytes(u64::from(expected.size)),
    expected.align,
    expected.rust_hint()
)]
pub struct LayoutMismatch {
    /// Module display name (file path), when known.
    pub module: Option<String>,
    /// 1-based line of the `.entry` in the module (0 when unknown).
    pub line: u32,
    /// The kernel (`.entry`) name.
    pub kernel: String,
    /// 0-based parameter index, as in rustc's `NAME_param_N`.
    pub param_index: usize,
    /// The PTX parameter name.
    pub param_name: String,
    /// The layout the PTX declares.
    pub expected: ParamLayout,
    /// The layout of the Rust argument type.
    pub found: ParamLayout,
    /// The PTX declaration, e.g. `.u64` or `.align 8 .b8 [16]`.
    pub ptx_decl: String,
    /// The Rust argument type, e.g. `u32` or `Slice<f32>`.
    pub rust_type: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names() {
        assert_eq!(
            short_type_name("host_loader::param::Slice<f32>"),
            "Slice<f32>"
        );
        assert_eq!(
            short_type_name("host_loader::Ptr<my::deep::Point>"),
            "Ptr<Point>"
        );
        assert_eq!(short_type_name("u32"), "u32");
        assert_eq!(short_type_name("(a::B, c::D)"), "(B, D)");
    }

    #[test]
    fn scalar_kinds() {
        assert_eq!(scalar_kind("u32"), ScalarKind::Int);
        assert_eq!(scalar_kind(".s64"), ScalarKind::Int);
        assert_eq!(scalar_kind("f32"), ScalarKind::Float);
        assert_eq!(scalar_kind("b16"), ScalarKind::Bits);
        assert_eq!(scalar_kind("texref"), ScalarKind::Other);
        assert_eq!(scalar_kind("pred"), ScalarKind::Other);
        assert_eq!(scalar_kind(""), ScalarKind::Other);
    }

    #[test]
    fn accept_table() {
        let u64p = ParamLayout::int(8);
        let f64p = ParamLayout::float(8);
        let b64p = ParamLayout {
            class: ParamClass::Scalar(ScalarKind::Bits),
            ..ParamLayout::int(8)
        };
        assert!(u64p.accepts(&ParamLayout::int(8)));
        assert!(!u64p.accepts(&ParamLayout::int(4)));
        assert!(!u64p.accepts(&ParamLayout::float(8)));
        assert!(!u64p.accepts(&ParamLayout::pointer()));
        assert!(f64p.accepts(&ParamLayout::float(8)));
        assert!(!f64p.accepts(&ParamLayout::int(8)));
        assert!(b64p.accepts(&ParamLayout::int(8)));
        assert!(b64p.accepts(&ParamLayout::float(8)));
        assert!(!b64p.accepts(&ParamLayout::pointer()));
        assert!(ParamLayout::pointer().accepts(&ParamLayout::pointer()));
        assert!(!ParamLayout::pointer().accepts(&ParamLayout::int(8)));
        let agg = ParamLayout::aggregate(16, 8);
        assert!(agg.accepts(&ParamLayout::aggregate(16, 8)));
        assert!(!agg.accepts(&ParamLayout::aggregate(16, 16)));
        assert!(!agg.accepts(&ParamLayout::aggregate(12, 8)));
    }

    #[test]
    fn decl_rendering() {
        let p = |kind, size, align| Param {
            name: "k_param_0".into(),
            kind,
            size,
            align,
        };
        assert_eq!(
            ptx_decl(&p(ParamKind::Scalar { ty: "u64".into() }, 8, 8)),
            ".u64"
        );
        assert_eq!(
            ptx_decl(&p(
                ParamKind::Pointer {
                    space: None,
                    pointee_align: 1
                },
                8,
                8
            )),
            ".u64 .ptr .align 1"
        );
        assert_eq!(
            ptx_decl(&p(
                ParamKind::Pointer {
                    space: Some("global".into()),
                    pointee_align: 4
                },
                8,
                8
            )),
            ".u64 .ptr .global .align 4"
        );
        assert_eq!(
            ptx_decl(&p(ParamKind::Aggregate { elem: "b8".into() }, 16, 8)),
            ".align 8 .b8 [16]"
        );
        assert_eq!(
            ptx_decl(&p(ParamKind::Aggregate { elem: "b32".into() }, 16, 4)),
            ".align 4 .b32 [4]"
        );
    }
}
