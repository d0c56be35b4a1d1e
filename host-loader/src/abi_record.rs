//! The ABI record a `#[kernel]` emits next to each kernel, and how to read it.
//!
//! PTX shows only the byte size and alignment of each kernel parameter: a `&[f32]`, a
//! `DisjointSlice<u32>` and a 16-byte struct aligned to 8 all arrive as
//! `.param .align 8 .b8 NAME[16]`. The device macro therefore emits, for every kernel `K`,
//!
//! ```text
//! .visible .global .align 4 .b8 __kernel_abi_K[4*W] = { ... };
//! ```
//!
//! holding `W` little-endian `u32` words:
//!
//! | word | value |
//! |---|---|
//! | 0 | [`ABI_MAGIC`] (`0x4B41_4249`) |
//! | 1 | [`ABI_VERSION`] (2) |
//! | 2 | `P`, the number of parameters |
//! | then, per parameter | `kind` ([`AbiKind`]), `size`, `align`, `elem_size`, `elem_class`, `F`, then `F` triples `(offset, size, class)` |
//!
//! Sizes, alignments and offsets are in bytes. `elem_size` is `size_of::<T>()` for a
//! pointer or slice of `T`, the size itself for a scalar and 0 for a struct; a pointer
//! with `elem_size` 0 and `elem_class` 0 is untyped (`*mut c_void`, CUDA's `void*`).
//! `elem_class` and each field's `class` are [`ValueClass`] words:
//!
//! | word | class | device types | host element types the check accepts for it |
//! |---|---|---|---|
//! | 0 | opaque | nested structs, `c_void`, types that do not say | any (sizes only) |
//! | 1 | unsigned integer | `u8` … `u128`, `usize` | unsigned, opaque |
//! | 2 | signed integer | `i8` … `i128`, `isize` | signed, opaque |
//! | 3 | float | `f32`, `f64` | float, opaque |
//! | 4 | raw pointer | `*const T`, `*mut T` (8 bytes) | raw pointer, opaque, and an 8-byte unsigned integer (`u64`, `usize`: a device address on the host, `CUdeviceptr`) |
//! | 5 | bool | `bool` | bool, opaque (not `u8` or `i8`) |
//!
//! An array has its element's class; a struct parameter's `elem_class` is 0; a scalar
//! parameter's is 1, 2 or 3 (a kernel takes no `bool` by value). The relaxation for class
//! 4 goes one way only: a kernel's `u64` (class 1) still refuses a host raw pointer
//! (class 4), which would be a host address. The `F` triples are a struct's fields in
//! declaration order; other kinds have `F = 0`. Words after the last parameter must be
//! zero (LLVM drops trailing zero bytes from initializers, and
//! [`ptx_linker::global_initializer`] pads them back).
//!
//! A record is at most [`MAX_RECORD_BYTES`] bytes long (see
//! [`device_std::abi`](device_std::abi#how-long-a-record-can-be): 3 words, plus at most 9
//! per byte of a kernel's parameter space); [`Signatures`](crate::Signatures) refuses a
//! longer declared record with [`AbiRecordError::TooLong`] before asking for its bytes,
//! which `ptx_linker` would zero-pad up to the declared length.
//!
//! This host-loader reads version 2 only. Version 1 (no classes: `elem_class` absent and
//! field pairs `(offset, size)`) is refused with [`AbiRecordError::UnsupportedVersion`]:
//! rebuild such kernels.
//!
//! [`AbiRecord::parse`] never panics: a short, padded-out or garbage record is an
//! [`AbiRecordError`] that says which word is wrong.

use std::fmt;

pub use device_std::ValueClass;

use crate::message::{bytes, count};

/// Word 0 of every record: the bytes `IBAK` read as a little-endian `u32`.
pub const ABI_MAGIC: u32 = 0x4B41_4249;

/// The record version this crate reads (word 1); it reads no other.
pub const ABI_VERSION: u32 = 2;

/// The longest record in bytes any kernel can have: [`device_std::abi::MAX_RECORD_BYTES`]
/// (1 179 516: 3 words, plus at most 9 words per byte of the 32 764 bytes of parameters a
/// kernel can take). `#[kernel]` refuses to compile a longer one.
pub const MAX_RECORD_BYTES: u64 = device_std::abi::MAX_RECORD_BYTES as u64;

/// The PTX symbol that holds kernel `kernel`'s record: `__kernel_abi_<kernel>`.
pub fn record_symbol(kernel: &str) -> String {
    format!("__kernel_abi_{kernel}")
}

/// What a kernel parameter is on the device side (the `kind` word).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AbiKind {
    /// 1: an integer or float by value.
    Scalar,
    /// 2: a raw pointer, `*const T` or `*mut T`.
    Pointer,
    /// 3: a read-only slice `&[T]`, passed as `(ptr, len)`.
    Slice,
    /// 4: a writable slice, `DisjointSlice<T>` or `&mut [T]`, passed as `(ptr, len)`.
    DisjointSlice,
    /// 5: a `#[repr(C)]` struct by value.
    Struct,
    /// 6: the global address of a tensor map (`device_std::tma::TensorMap`); its
    /// "fields" are the box extents, one per dimension, innermost first.
    TensorMap,
    /// 7: a texture object handle (`device_std::texture::Texture<T, D>`); one "field",
    /// the dimension count `D` as its offset.
    Texture,
    /// 8: a surface object handle (`device_std::texture::Surface<T, D>`), described as
    /// [`AbiKind::Texture`] is.
    Surface,
    /// 9: an optional read-only slice `Option<&[T]>`: `(ptr, len)`, `None` a null `ptr`.
    OptionalSlice,
    /// 10: an optional writable slice `Option<DisjointSlice<T>>`, as
    /// [`AbiKind::OptionalSlice`] is.
    OptionalDisjointSlice,
}

impl AbiKind {
    /// The kind for a `kind` word, or `None` for an unknown value.
    pub const fn from_word(word: u32) -> Option<Self> {
        Some(match word {
            1 => AbiKind::Scalar,
            2 => AbiKind::Pointer,
            3 => AbiKind::Slice,
            4 => AbiKind::DisjointSlice,
            5 => AbiKind::Struct,
            6 => AbiKind::TensorMap,
            7 => AbiKind::Texture,
            8 => AbiKind::Surface,
            9 => AbiKind::OptionalSlice,
            10 => AbiKind::OptionalDisjointSlice,
            _ => return None,
        })
    }

    /// The `kind` word.
    pub const fn word(self) -> u32 {
        match self {
            AbiKind::Scalar => 1,
            AbiKind::Pointer => 2,
            AbiKind::Slice => 3,
            AbiKind::DisjointSlice => 4,
            AbiKind::Struct => 5,
            AbiKind::TensorMap => 6,
            AbiKind::Texture => 7,
            AbiKind::Surface => 8,
            AbiKind::OptionalSlice => 9,
            AbiKind::OptionalDisjointSlice => 10,
        }
    }

    /// How the device side spells it, e.g. "`&[T]`".
    pub const fn device_form(self) -> &'static str {
        match self {
            AbiKind::Scalar => "a scalar",
            AbiKind::Pointer => "a raw pointer (`*const T` / `*mut T`)",
            AbiKind::Slice => "a read-only slice (`&[T]`)",
            AbiKind::DisjointSlice => "a writable slice (`DisjointSlice<T>` / `&mut [T]`)",
            AbiKind::Struct => "a struct by value",
            AbiKind::TensorMap => "a tensor map (`tma::TensorMap<T, RANK, B0, ...>`)",
            AbiKind::Texture => "a texture object (`texture::Texture<T, D>`)",
            AbiKind::Surface => "a surface object (`texture::Surface<T, D>`)",
            AbiKind::OptionalSlice => "an optional read-only slice (`Option<&[T]>`)",
            AbiKind::OptionalDisjointSlice => {
                "an optional writable slice (`Option<DisjointSlice<T>>`)"
            }
        }
    }

    /// The host-loader parameter type that matches it, e.g. "`Slice<T>`".
    pub const fn host_form(self) -> &'static str {
        match self {
            AbiKind::Scalar => "the same scalar type",
            AbiKind::Pointer => "`Ptr<T>` or `PtrMut<T>`",
            AbiKind::Slice => "`Slice<T>`",
            AbiKind::DisjointSlice => "`SliceMut<T>`",
            AbiKind::Struct => "`Struct<T>`",
            AbiKind::TensorMap => "`tma::TensorMap<T, RANK, B0, ...>` of the same shape",
            AbiKind::Texture => "`texture::Texture<T, D>` of the same texel type and dimensions",
            AbiKind::Surface => "`texture::Surface<T, D>` of the same texel type and dimensions",
            AbiKind::OptionalSlice => "`OptSlice<T>`",
            AbiKind::OptionalDisjointSlice => "`OptSliceMut<T>`",
        }
    }
}

impl fmt::Display for AbiKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.device_form())
    }
}

/// One field of a struct parameter: byte offset, byte size and value class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AbiField {
    /// Offset from the start of the struct, in bytes.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
    /// How its bytes are read (an array's class is its element's; a nested struct is
    /// [`ValueClass::Opaque`]).
    pub class: ValueClass,
}

/// One parameter of an [`AbiRecord`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AbiParam {
    /// What it is on the device side.
    pub kind: AbiKind,
    /// Size in bytes of the parameter as passed (16 for a slice).
    pub size: u32,
    /// Alignment in bytes of the parameter as passed.
    pub align: u32,
    /// `size_of::<T>()` of a pointer's or slice's element type; the size of a scalar; 0
    /// for a struct, and for a pointer to an untyped pointee (`c_void`).
    pub elem_size: u32,
    /// Class of the scalar, or of a pointer's or slice's element type;
    /// [`ValueClass::Opaque`] for a struct.
    pub elem_class: ValueClass,
    /// A struct's fields in declaration order; empty for other kinds.
    pub fields: Vec<AbiField>,
}

/// The parsed ABI record of one kernel.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AbiRecord {
    /// One entry per kernel parameter, in order.
    pub params: Vec<AbiParam>,
}

/// Why a record could not be read. `word` fields are 0-based word indices into the
/// record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AbiRecordError {
    /// The byte length is not a multiple of 4.
    #[error("the record is {} long, not a whole number of 4-byte words", bytes(*len as u64))]
    NotWords {
        /// Length in bytes.
        len: usize,
    },
    /// The record is (or is declared) longer than [`MAX_RECORD_BYTES`], more than any
    /// kernel's record can be: refused before its bytes are read.
    #[error(
        "the record is {} long, more than the {MAX_RECORD_BYTES} bytes any kernel's record \
         can take (3 words, plus at most 9 per byte of the {} bytes of parameters a kernel \
         can take); it was not written by `#[kernel]` and is refused unread",
        bytes(*len),
        device_std::abi::MAX_PARAM_BYTES
    )]
    TooLong {
        /// Length in bytes (the declared length, for a record in a PTX module; saturated
        /// at `u64::MAX` when the declaration's size overflows).
        len: u64,
    },
    /// The record ends before a word it needs.
    #[error(
        "the record is truncated: it has {}, but {what} would be word {word}",
        count(*words as u64, "word")
    )]
    Truncated {
        /// Number of words in the record.
        words: usize,
        /// The missing word's index.
        word: usize,
        /// What that word holds, e.g. "the kind of parameter 2".
        what: String,
    },
    /// Word 0 is not [`ABI_MAGIC`].
    #[error("word 0 is {found:#010x}, not the ABI record magic {ABI_MAGIC:#010x}")]
    BadMagic {
        /// The word found.
        found: u32,
    },
    /// Word 1 is not [`ABI_VERSION`], the only version this crate reads.
    #[error("the record has {}", version_message(*found))]
    UnsupportedVersion {
        /// The version found.
        found: u32,
    },
    /// A `kind` word holds no known kind.
    #[error(
        "parameter {param} (word {word}) has kind {found}; known kinds are 1 (scalar), \
         2 (pointer), 3 (slice), 4 (disjoint slice), 5 (struct), 6 (tensor map), \
         7 (texture), 8 (surface), 9 (optional slice) and 10 (optional disjoint slice)"
    )]
    UnknownKind {
        /// 0-based parameter index.
        param: usize,
        /// The word index.
        word: usize,
        /// The value found.
        found: u32,
    },
    /// A class word holds no known [`ValueClass`].
    #[error(
        "parameter {param}{} (word {word}) has value class {found}; known classes are \
         0 (opaque), 1 (unsigned integer), 2 (signed integer), 3 (float), 4 (raw pointer), \
         5 (bool), 6 (bfloat16), 7 (float16), 8 (e4m3) and 9 (e5m2)",
        match field {
            Some(f) => format!(" field {f}"),
            None => String::new(),
        }
    )]
    UnknownClass {
        /// 0-based parameter index.
        param: usize,
        /// 0-based field index for a field's class; `None` for `elem_class`.
        field: Option<usize>,
        /// The word index.
        word: usize,
        /// The value found.
        found: u32,
    },
    /// A parameter's words contradict each other.
    #[error("parameter {param} (word {word}): {reason}")]
    Inconsistent {
        /// 0-based parameter index.
        param: usize,
        /// Index of the word that is wrong.
        word: usize,
        /// What is wrong.
        reason: String,
    },
    /// Non-zero words follow the last parameter.
    #[error(
        "word {word} is {found:#x}, but the record's {params} parameters end at word {end}; \
         only zero padding may follow"
    )]
    TrailingData {
        /// Number of parameters the record declares.
        params: usize,
        /// Index of the first word after the last parameter.
        end: usize,
        /// Index of the first non-zero word after it.
        word: usize,
        /// Its value.
        found: u32,
    },
}

/// A cursor over the record's words.
struct Words {
    words: Vec<u32>,
    pos: usize,
}

impl Words {
    fn next(&mut self, what: impl FnOnce() -> String) -> Result<(usize, u32), AbiRecordError> {
        let at = self.pos;
        match self.words.get(at) {
            Some(&w) => {
                self.pos += 1;
                Ok((at, w))
            }
            None => Err(AbiRecordError::Truncated {
                words: self.words.len(),
                word: at,
                what: what(),
            }),
        }
    }

    fn remaining(&self) -> usize {
        self.words.len() - self.pos
    }
}

/// "version N; this host-loader reads version 2 only …; rebuild …": the
/// message for a record of another version, in [`AbiRecordError`] and
/// [`AbiRecordProblem`] alike.
pub(crate) fn version_message(found: u32) -> String {
    let older = if found < ABI_VERSION {
        " (older records carry no value classes)"
    } else {
        ""
    };
    format!(
        "version {found}; this host-loader reads ABI record version {ABI_VERSION} only{older}; \
         rebuild the kernels with the device-std that matches this host-loader"
    )
}

/// What is wrong with an ABI record, in [`Error::AbiRecord`](crate::Error::AbiRecord).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AbiRecordProblem {
    /// Its bytes do not parse.
    #[error("is malformed: {0}")]
    Malformed(AbiRecordError),
    /// Its version (word 1) is not [`ABI_VERSION`], the only one this crate reads.
    #[error("has {}", version_message(*found))]
    UnsupportedVersion {
        /// The version found.
        found: u32,
    },
    /// Its initializer cannot be read from the PTX (a `ptx-linker` diagnostic).
    #[error("cannot be read: {0}")]
    Unreadable(String),
    /// It lists a different number of parameters than the `.entry`.
    #[error("lists {record} parameters, the PTX `.entry` has {ptx}; the record is stale")]
    ParamCount {
        /// Parameters in the record.
        record: usize,
        /// Parameters in the PTX.
        ptx: usize,
    },
    /// A parameter's size or alignment in the record differs from the PTX `.param`.
    #[error(
        "says parameter {param} is {} aligned to {record_align}, the PTX declares {} aligned \
         to {ptx_align}; the record is stale",
        bytes(u64::from(*record_size)),
        bytes(u64::from(*ptx_size))
    )]
    ParamLayout {
        /// 0-based parameter index.
        param: usize,
        /// Size in the record.
        record_size: u32,
        /// Alignment in the record.
        record_align: u32,
        /// Size in the PTX.
        ptx_size: u32,
        /// Alignment in the PTX.
        ptx_align: u32,
    },
}

impl From<AbiRecordError> for AbiRecordProblem {
    /// [`AbiRecordProblem::UnsupportedVersion`] for a version error, else
    /// [`AbiRecordProblem::Malformed`].
    fn from(e: AbiRecordError) -> Self {
        match e {
            AbiRecordError::UnsupportedVersion { found } => {
                AbiRecordProblem::UnsupportedVersion { found }
            }
            other => AbiRecordProblem::Malformed(other),
        }
    }
}

impl AbiRecord {
    /// Reads a record from its bytes (the initializer of `__kernel_abi_<kernel>`, as
    /// [`ptx_linker::global_initializer`] returns it). Needs no GPU; never panics.
    ///
    /// Errors: [`AbiRecordError::TooLong`] for more than [`MAX_RECORD_BYTES`] bytes, else
    /// [`AbiRecordError`] naming the first word that is wrong.
    pub fn parse(bytes: &[u8]) -> Result<Self, AbiRecordError> {
        if bytes.len() as u64 > MAX_RECORD_BYTES {
            return Err(AbiRecordError::TooLong {
                len: bytes.len() as u64,
            });
        }
        if !bytes.len().is_multiple_of(4) {
            return Err(AbiRecordError::NotWords { len: bytes.len() });
        }
        let mut w = Words {
            words: bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            pos: 0,
        };
        let (_, magic) = w.next(|| "the magic".into())?;
        if magic != ABI_MAGIC {
            return Err(AbiRecordError::BadMagic { found: magic });
        }
        let (_, version) = w.next(|| "the version".into())?;
        if version != ABI_VERSION {
            return Err(AbiRecordError::UnsupportedVersion { found: version });
        }
        let (_, count) = w.next(|| "the parameter count".into())?;
        let count = count as usize;
        // Every parameter takes at least 6 words: never reserve more than the record holds.
        let mut params = Vec::with_capacity(count.min(w.remaining() / 6));
        for param in 0..count {
            params.push(parse_param(&mut w, param)?);
        }
        let end = w.pos;
        if let Some((i, &found)) = w.words[end..].iter().enumerate().find(|(_, &v)| v != 0) {
            return Err(AbiRecordError::TrailingData {
                params: count,
                end,
                word: end + i,
                found,
            });
        }
        Ok(AbiRecord { params })
    }
}

fn parse_param(w: &mut Words, param: usize) -> Result<AbiParam, AbiRecordError> {
    let (kind_at, kind) = w.next(|| format!("the kind of parameter {param}"))?;
    let kind = AbiKind::from_word(kind).ok_or(AbiRecordError::UnknownKind {
        param,
        word: kind_at,
        found: kind,
    })?;
    let (size_at, size) = w.next(|| format!("the size of parameter {param}"))?;
    let (align_at, align) = w.next(|| format!("the alignment of parameter {param}"))?;
    let (elem_at, elem_size) = w.next(|| format!("the element size of parameter {param}"))?;
    let (class_at, elem_class) = w.next(|| format!("the element class of parameter {param}"))?;
    let elem_class = class(elem_class, param, None, class_at)?;
    let (count_at, field_count) = w.next(|| format!("the field count of parameter {param}"))?;
    let bad = |word, reason: String| AbiRecordError::Inconsistent {
        param,
        word,
        reason,
    };
    if !align.is_power_of_two() {
        return Err(bad(
            align_at,
            format!("alignment {align} is not a power of two"),
        ));
    }
    let class_ok = match kind {
        AbiKind::Scalar => matches!(
            elem_class,
            ValueClass::Unsigned | ValueClass::Signed | ValueClass::Float
        ),
        AbiKind::Struct => elem_class == ValueClass::Opaque,
        // A tensor's elements are plain data: never a pointer or a `bool`.
        AbiKind::TensorMap | AbiKind::Texture | AbiKind::Surface => {
            !matches!(elem_class, ValueClass::Pointer | ValueClass::Bool)
        }
        AbiKind::Pointer
        | AbiKind::Slice
        | AbiKind::DisjointSlice
        | AbiKind::OptionalSlice
        | AbiKind::OptionalDisjointSlice => true,
    };
    if !class_ok {
        return Err(bad(
            class_at,
            format!("{kind} has element class {elem_class}"),
        ));
    }
    let handle = matches!(
        kind,
        AbiKind::TensorMap | AbiKind::Texture | AbiKind::Surface
    );
    if handle && (size, align) != (8, 8) {
        return Err(bad(
            size_at,
            format!(
                "{kind} is 8 bytes aligned to 8 (an address or handle), not {size} bytes \
                 aligned to {align}"
            ),
        ));
    }
    if handle && elem_size == 0 {
        return Err(bad(elem_at, format!("{kind} has elements of 0 bytes")));
    }
    if kind == AbiKind::TensorMap && !(1..=5).contains(&field_count) {
        return Err(bad(
            count_at,
            format!("{kind} has rank {field_count}; tensor maps have 1 to 5 dimensions"),
        ));
    }
    if matches!(kind, AbiKind::Texture | AbiKind::Surface) && field_count != 1 {
        return Err(bad(
            count_at,
            format!("{kind} has {field_count} fields; it has one, its dimension count"),
        ));
    }
    if !handle && kind != AbiKind::Struct && field_count != 0 {
        return Err(bad(
            count_at,
            format!("{kind} has {field_count} fields; only a struct has fields"),
        ));
    }
    let field_count = field_count as usize;
    let mut fields = Vec::with_capacity(field_count.min(w.remaining() / 3));
    for field in 0..field_count {
        let (off_at, offset) =
            w.next(|| format!("the offset of parameter {param} field {field}"))?;
        let (fsize_at, fsize) =
            w.next(|| format!("the size of parameter {param} field {field}"))?;
        let (fclass_at, fclass) =
            w.next(|| format!("the class of parameter {param} field {field}"))?;
        let fclass = class(fclass, param, Some(field), fclass_at)?;
        if kind == AbiKind::TensorMap {
            check_box_extent(field, offset, elem_size).map_err(|reason| bad(off_at, reason))?;
            // Box extent 0's size is the swizzle in bytes (0: none); the others' is 0.
            let swizzle_ok = fsize == 0
                || (field == 0
                    && [32, 64, 128].contains(&fsize)
                    && u64::from(offset) * u64::from(elem_size) == u64::from(fsize));
            if !swizzle_ok || fclass != ValueClass::Opaque {
                return Err(bad(
                    if !swizzle_ok { fsize_at } else { fclass_at },
                    format!(
                        "box extent {field} has size {fsize} and class {fclass}; a tensor \
                         map's box extents have class opaque and size 0, except extent 0's, \
                         which is the swizzle (32, 64 or 128 bytes, exactly the extent's bytes)"
                    ),
                ));
            }
        }
        if matches!(kind, AbiKind::Texture | AbiKind::Surface)
            && (!(1..=3).contains(&offset) || fsize != 0 || fclass != ValueClass::Opaque)
        {
            return Err(bad(
                off_at,
                format!(
                    "{kind} has dimension field ({offset}, {fsize}, {fclass}); it is (D, 0, \
                     opaque) with D = 1, 2 or 3"
                ),
            ));
        }
        if kind == AbiKind::Struct && offset.checked_add(fsize).is_none_or(|end| end > size) {
            return Err(bad(
                off_at,
                format!(
                    "field {field} at offset {offset} with size {fsize} ends past the struct's \
                     {}",
                    bytes(u64::from(size))
                ),
            ));
        }
        fields.push(AbiField {
            offset,
            size: fsize,
            class: fclass,
        });
    }
    Ok(AbiParam {
        kind,
        size,
        align,
        elem_size,
        elem_class,
        fields,
    })
}

/// `device_std::tma::TensorMap`'s compile-time rules for box extent `field`, `extent`
/// elements of `elem_size` bytes: 1 to 256, and the innermost a multiple of 16 bytes.
fn check_box_extent(field: usize, extent: u32, elem_size: u32) -> Result<(), String> {
    if !(1..=256).contains(&extent) {
        return Err(format!(
            "box extent {field} is {extent}; a tensor map's box extents are 1 to 256"
        ));
    }
    let row = u64::from(extent) * u64::from(elem_size);
    if field == 0 && row % 16 != 0 {
        return Err(format!(
            "box extent 0 is {extent} elements of {elem_size} bytes, {row} bytes; the \
             innermost extent of a tensor map's box spans a multiple of 16 bytes"
        ));
    }
    Ok(())
}

/// The [`ValueClass`] of class word `found` (word `word`).
fn class(
    found: u32,
    param: usize,
    field: Option<usize>,
    word: usize,
) -> Result<ValueClass, AbiRecordError> {
    ValueClass::from_word(found).ok_or(AbiRecordError::UnknownClass {
        param,
        field,
        word,
        found,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ValueClass::{Bool, Float, Opaque, Signed, Unsigned};

    /// Little-endian bytes of `words`.
    fn bytes(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// `vecadd(a: &[f32], b: &[f32], c: DisjointSlice<f32>)`.
    fn vecadd_words() -> Vec<u32> {
        vec![
            ABI_MAGIC, 2, 3, //
            3, 16, 8, 4, 3, 0, //
            3, 16, 8, 4, 3, 0, //
            4, 16, 8, 4, 3, 0,
        ]
    }

    /// `affine(p: Affine { scale: f32, shift: i32, count: u64 }, n: u32)`.
    fn affine_words() -> Vec<u32> {
        vec![
            ABI_MAGIC, 2, 2, //
            5, 16, 8, 0, 0, 3, 0, 4, 3, 4, 4, 2, 8, 8, 1, //
            1, 4, 4, 4, 1, 0,
        ]
    }

    #[test]
    fn reads_slices() {
        let r = AbiRecord::parse(&bytes(&vecadd_words())).unwrap();
        assert_eq!(r.params.len(), 3);
        assert_eq!(r.params[0].kind, AbiKind::Slice);
        assert_eq!(r.params[0].elem_class, Float);
        assert_eq!(r.params[2].kind, AbiKind::DisjointSlice);
        assert_eq!(
            r.params[2],
            AbiParam {
                kind: AbiKind::DisjointSlice,
                size: 16,
                align: 8,
                elem_size: 4,
                elem_class: Float,
                fields: vec![]
            }
        );
    }

    #[test]
    fn reads_struct_fields() {
        let r = AbiRecord::parse(&bytes(&affine_words())).unwrap();
        let p = &r.params[0];
        assert_eq!(p.kind, AbiKind::Struct);
        assert_eq!((p.size, p.align, p.elem_size), (16, 8, 0));
        assert_eq!(p.elem_class, Opaque);
        assert_eq!(
            p.fields,
            [
                AbiField {
                    offset: 0,
                    size: 4,
                    class: Float
                },
                AbiField {
                    offset: 4,
                    size: 4,
                    class: Signed
                },
                AbiField {
                    offset: 8,
                    size: 8,
                    class: Unsigned
                }
            ]
        );
        assert_eq!(r.params[1].kind, AbiKind::Scalar);
        assert_eq!(r.params[1].elem_size, 4);
        assert_eq!(r.params[1].elem_class, Unsigned);
    }

    #[test]
    fn zero_parameters_and_zero_padding() {
        let r = AbiRecord::parse(&bytes(&[ABI_MAGIC, 2, 0])).unwrap();
        assert!(r.params.is_empty());
        let mut w = vecadd_words();
        w.extend([0, 0, 0]);
        assert_eq!(AbiRecord::parse(&bytes(&w)).unwrap().params.len(), 3);
    }

    #[test]
    fn kind_and_class_words_round_trip() {
        for k in 1..=10 {
            assert_eq!(AbiKind::from_word(k).unwrap().word(), k);
        }
        assert_eq!(AbiKind::from_word(0), None);
        assert_eq!(AbiKind::from_word(6), Some(AbiKind::TensorMap));
        assert_eq!(AbiKind::from_word(7), Some(AbiKind::Texture));
        assert_eq!(AbiKind::from_word(8), Some(AbiKind::Surface));
        assert_eq!(AbiKind::from_word(9), Some(AbiKind::OptionalSlice));
        assert_eq!(AbiKind::from_word(10), Some(AbiKind::OptionalDisjointSlice));
        assert_eq!(AbiKind::from_word(11), None);
        for c in 0..=9 {
            assert_eq!(ValueClass::from_word(c).unwrap().word(), c);
        }
        assert_eq!(ValueClass::from_word(5), Some(ValueClass::Bool));
        assert_eq!(ValueClass::from_word(6), Some(ValueClass::BFloat16));
        assert_eq!(ValueClass::from_word(7), Some(ValueClass::Float16));
        assert_eq!(ValueClass::from_word(8), Some(ValueClass::Float8E4M3));
        assert_eq!(ValueClass::from_word(9), Some(ValueClass::Float8E5M2));
        assert_eq!(ValueClass::from_word(10), None);
        assert_eq!(record_symbol("vecadd"), "__kernel_abi_vecadd");
    }

    #[test]
    fn empty_and_odd_lengths() {
        assert_eq!(
            AbiRecord::parse(&[]).unwrap_err().to_string(),
            "the record is truncated: it has 0 words, but the magic would be word 0"
        );
        assert_eq!(
            AbiRecord::parse(&[0x49, 0x42, 0x41, 0x4B, 2, 0]).unwrap_err(),
            AbiRecordError::NotWords { len: 6 }
        );
        assert_eq!(
            AbiRecord::parse(&[1, 2, 3]).unwrap_err().to_string(),
            "the record is 3 bytes long, not a whole number of 4-byte words"
        );
        assert_eq!(
            AbiRecord::parse(&[0x49]).unwrap_err().to_string(),
            "the record is 1 byte long, not a whole number of 4-byte words"
        );
    }

    #[test]
    fn bad_magic_and_version() {
        assert_eq!(
            AbiRecord::parse(&bytes(&[0x1234, 2, 0]))
                .unwrap_err()
                .to_string(),
            "word 0 is 0x00001234, not the ABI record magic 0x4b414249"
        );
        // Big-endian bytes of the magic are not the magic.
        assert!(matches!(
            AbiRecord::parse(&ABI_MAGIC.to_be_bytes()).unwrap_err(),
            AbiRecordError::BadMagic { found: 0x4942_414B }
        ));
        // Version 1 (no classes) and a future version are both refused.
        assert_eq!(
            AbiRecord::parse(&bytes(&[ABI_MAGIC, 1, 1, 3, 16, 8, 4, 0])).unwrap_err(),
            AbiRecordError::UnsupportedVersion { found: 1 }
        );
        assert_eq!(
            AbiRecord::parse(&bytes(&[ABI_MAGIC, 1, 0]))
                .unwrap_err()
                .to_string(),
            "the record has version 1; this host-loader reads ABI record version 2 only (older records \
             carry no value classes); rebuild the kernels with the device-std that matches \
             this host-loader"
        );
        assert_eq!(
            AbiRecord::parse(&bytes(&[ABI_MAGIC, 3, 0]))
                .unwrap_err()
                .to_string(),
            "the record has version 3; this host-loader reads ABI record version 2 only; rebuild the \
             kernels with the device-std that matches this host-loader"
        );
        assert_eq!(
            AbiRecord::parse(&bytes(&[ABI_MAGIC]))
                .unwrap_err()
                .to_string(),
            "the record is truncated: it has 1 word, but the version would be word 1"
        );
        assert_eq!(
            AbiRecord::parse(&bytes(&[ABI_MAGIC, 2]))
                .unwrap_err()
                .to_string(),
            "the record is truncated: it has 2 words, but the parameter count would be word 2"
        );
    }

    #[test]
    fn truncated_at_every_word() {
        // Cutting the record anywhere before its end names the word that is missing.
        let full = affine_words();
        let mut what: Vec<String> = ["the magic", "the version", "the parameter count"]
            .map(String::from)
            .to_vec();
        let head = |what: &mut Vec<String>, p: usize| {
            for w in [
                "the kind",
                "the size",
                "the alignment",
                "the element size",
                "the element class",
                "the field count",
            ] {
                what.push(format!("{w} of parameter {p}"));
            }
        };
        head(&mut what, 0);
        for f in 0..3 {
            for w in ["offset", "size", "class"] {
                what.push(format!("the {w} of parameter 0 field {f}"));
            }
        }
        head(&mut what, 1);
        assert_eq!(what.len(), full.len());
        for cut in 0..full.len() {
            let err = AbiRecord::parse(&bytes(&full[..cut])).unwrap_err();
            assert_eq!(
                err,
                AbiRecordError::Truncated {
                    words: cut,
                    word: cut,
                    what: what[cut].clone()
                },
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn huge_counts_do_not_allocate_or_panic() {
        let err =
            AbiRecord::parse(&bytes(&[ABI_MAGIC, 2, u32::MAX, 1, 4, 4, 4, 1, 0])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the record is truncated: it has 9 words, but the kind of parameter 1 would be word 9"
        );
        let err = AbiRecord::parse(&bytes(&[
            ABI_MAGIC,
            2,
            1,
            5,
            16,
            8,
            0,
            0,
            u32::MAX,
            0,
            4,
            3,
        ]))
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the record is truncated: it has 12 words, but the offset of parameter 0 field 1 \
             would be word 12"
        );
    }

    #[test]
    fn records_longer_than_any_kernel_can_have_are_refused_unread() {
        assert_eq!(MAX_RECORD_BYTES, 1_179_516);
        // A valid record padded with zeros to exactly the bound parses...
        let mut b = bytes(&vecadd_words());
        b.resize(MAX_RECORD_BYTES as usize, 0);
        assert_eq!(AbiRecord::parse(&b).unwrap().params.len(), 3);
        // ...four bytes more do not, whatever they hold.
        b.resize(MAX_RECORD_BYTES as usize + 4, 0);
        assert_eq!(
            AbiRecord::parse(&b).unwrap_err(),
            AbiRecordError::TooLong { len: 1_179_520 }
        );
        assert_eq!(
            AbiRecord::parse(&b).unwrap_err().to_string(),
            "the record is 1179520 bytes long, more than the 1179516 bytes any kernel's record \
             can take (3 words, plus at most 9 per byte of the 32764 bytes of parameters a \
             kernel can take); it was not written by `#[kernel]` and is refused unread"
        );
        // A length that is not whole words but too long is too long first.
        b.resize(MAX_RECORD_BYTES as usize + 1, 0);
        assert!(matches!(
            AbiRecord::parse(&b).unwrap_err(),
            AbiRecordError::TooLong { len: 1_179_517 }
        ));
    }

    #[test]
    fn unknown_kind() {
        let mut w = vecadd_words();
        w[9] = 11;
        assert_eq!(
            AbiRecord::parse(&bytes(&w)).unwrap_err().to_string(),
            "parameter 1 (word 9) has kind 11; known kinds are 1 (scalar), 2 (pointer), \
             3 (slice), 4 (disjoint slice), 5 (struct), 6 (tensor map), 7 (texture), \
             8 (surface), 9 (optional slice) and 10 (optional disjoint slice)"
        );
        w[9] = 0;
        assert!(matches!(
            AbiRecord::parse(&bytes(&w)).unwrap_err(),
            AbiRecordError::UnknownKind {
                param: 1,
                found: 0,
                ..
            }
        ));
    }

    #[test]
    fn unknown_class() {
        let mut w = vecadd_words();
        w[7] = 10;
        assert_eq!(
            AbiRecord::parse(&bytes(&w)).unwrap_err().to_string(),
            "parameter 0 (word 7) has value class 10; known classes are 0 (opaque), \
             1 (unsigned integer), 2 (signed integer), 3 (float), 4 (raw pointer), 5 (bool), \
             6 (bfloat16), 7 (float16), 8 (e4m3) and 9 (e5m2)"
        );
        // 5 is bool: known.
        w[7] = 5;
        assert_eq!(
            AbiRecord::parse(&bytes(&w)).unwrap().params[0].elem_class,
            Bool
        );
        let mut w = affine_words();
        w[17] = 11;
        assert_eq!(
            AbiRecord::parse(&bytes(&w)).unwrap_err(),
            AbiRecordError::UnknownClass {
                param: 0,
                field: Some(2),
                word: 17,
                found: 11
            }
        );
        assert!(AbiRecord::parse(&bytes(&w))
            .unwrap_err()
            .to_string()
            .starts_with("parameter 0 field 2 (word 17) has value class 11;"));
    }

    #[test]
    fn inconsistent_params() {
        // Alignment 6.
        let mut w = vecadd_words();
        w[5] = 6;
        assert_eq!(
            AbiRecord::parse(&bytes(&w)).unwrap_err().to_string(),
            "parameter 0 (word 5): alignment 6 is not a power of two"
        );
        // Alignment 0.
        w[5] = 0;
        assert!(matches!(
            AbiRecord::parse(&bytes(&w)).unwrap_err(),
            AbiRecordError::Inconsistent {
                param: 0,
                word: 5,
                ..
            }
        ));
        // A slice with fields.
        let mut w = vecadd_words();
        w[20] = 1;
        assert_eq!(
            AbiRecord::parse(&bytes(&w)).unwrap_err().to_string(),
            "parameter 2 (word 20): a writable slice (`DisjointSlice<T>` / `&mut [T]`) has 1 \
             fields; only a struct has fields"
        );
        // A struct with an element class, a scalar without one.
        let mut w = affine_words();
        w[7] = 3;
        assert_eq!(
            AbiRecord::parse(&bytes(&w)).unwrap_err().to_string(),
            "parameter 0 (word 7): a struct by value has element class float"
        );
        let mut w = affine_words();
        w[22] = 0;
        assert_eq!(
            AbiRecord::parse(&bytes(&w)).unwrap_err().to_string(),
            "parameter 1 (word 22): a scalar has element class opaque"
        );
        w[22] = 4;
        assert!(matches!(
            AbiRecord::parse(&bytes(&w)).unwrap_err(),
            AbiRecordError::Inconsistent {
                param: 1,
                word: 22,
                ..
            }
        ));
        // A kernel takes no `bool` by value: a scalar of class bool is not a record
        // `#[kernel]` writes.
        w[22] = 5;
        assert_eq!(
            AbiRecord::parse(&bytes(&w)).unwrap_err().to_string(),
            "parameter 1 (word 22): a scalar has element class bool"
        );
        // A field past the end of its struct, and one whose end overflows u32.
        let mut w = affine_words();
        w[15] = 12;
        assert_eq!(
            AbiRecord::parse(&bytes(&w)).unwrap_err().to_string(),
            "parameter 0 (word 15): field 2 at offset 12 with size 8 ends past the struct's \
             16 bytes"
        );
        w[15] = u32::MAX;
        assert!(matches!(
            AbiRecord::parse(&bytes(&w)).unwrap_err(),
            AbiRecordError::Inconsistent {
                param: 0,
                word: 15,
                ..
            }
        ));
    }

    /// `resize(src: Texture2d<[u8; 4]>, dst: Surface3d<f32>)`, as device-std writes it.
    fn texture_words() -> Vec<u32> {
        let mut w = vec![ABI_MAGIC, 2, 2];
        for abi in [
            <device_std::texture::Texture2d<[u8; 4]> as device_std::KernelParam>::ABI,
            <device_std::texture::Surface3d<f32> as device_std::KernelParam>::ABI,
        ] {
            w.extend([abi.kind, abi.size, abi.align, abi.elem_size]);
            w.extend([abi.elem_class as u32, abi.fields.len() as u32]);
            for f in abi.fields {
                w.extend([f.offset, f.size, f.class as u32]);
            }
        }
        w
    }

    #[test]
    fn reads_textures_and_surfaces() {
        let r = AbiRecord::parse(&bytes(&texture_words())).unwrap();
        let (t, s) = (&r.params[0], &r.params[1]);
        assert_eq!(
            (t.kind, t.size, t.elem_size, t.elem_class),
            (AbiKind::Texture, 8, 4, Unsigned)
        );
        assert_eq!(
            (s.kind, s.size, s.elem_size, s.elem_class),
            (AbiKind::Surface, 8, 4, Float)
        );
        assert_eq!((t.fields[0].offset, s.fields[0].offset), (2, 3));
        // A dimension count of 4, and a second field, are refused.
        let mut w = texture_words();
        w[9] = 4;
        assert_eq!(
            AbiRecord::parse(&bytes(&w)).unwrap_err().to_string(),
            "parameter 0 (word 9): a texture object (`texture::Texture<T, D>`) has dimension \
             field (4, 0, opaque); it is (D, 0, opaque) with D = 1, 2 or 3"
        );
        let mut w = texture_words();
        w[8] = 2;
        assert!(AbiRecord::parse(&bytes(&w)).is_err());
    }

    /// `transpose(input: TensorMap<f32, 2, 32, 32>, n: u32)`.
    fn tensor_map_words() -> Vec<u32> {
        vec![
            ABI_MAGIC, 2, 2, //
            6, 8, 8, 4, 3, 2, 32, 0, 0, 16, 0, 0, //
            1, 4, 4, 4, 1, 0,
        ]
    }

    #[test]
    fn reads_tensor_maps() {
        let r = AbiRecord::parse(&bytes(&tensor_map_words())).unwrap();
        let p = &r.params[0];
        assert_eq!(p.kind, AbiKind::TensorMap);
        assert_eq!(
            (p.size, p.align, p.elem_size, p.elem_class),
            (8, 8, 4, Float)
        );
        assert_eq!(
            p.fields.iter().map(|f| f.offset).collect::<Vec<_>>(),
            [32, 16]
        );
        assert_eq!(r.params[1].kind, AbiKind::Scalar);
    }

    #[test]
    fn inconsistent_tensor_maps() {
        let err = |edit: &dyn Fn(&mut Vec<u32>)| {
            let mut w = tensor_map_words();
            edit(&mut w);
            AbiRecord::parse(&bytes(&w)).unwrap_err().to_string()
        };
        assert_eq!(
            err(&|w| w[4] = 16),
            "parameter 0 (word 4): a tensor map (`tma::TensorMap<T, RANK, B0, ...>`) is 8 \
             bytes aligned to 8 (an address or handle), not 16 bytes aligned to 8"
        );
        assert_eq!(
            err(&|w| w[6] = 0),
            "parameter 0 (word 6): a tensor map (`tma::TensorMap<T, RANK, B0, ...>`) has \
             elements of 0 bytes"
        );
        assert_eq!(
            err(&|w| w[7] = 4),
            "parameter 0 (word 7): a tensor map (`tma::TensorMap<T, RANK, B0, ...>`) has \
             element class raw pointer"
        );
        assert_eq!(
            err(&|w| w[8] = 0),
            "parameter 0 (word 8): a tensor map (`tma::TensorMap<T, RANK, B0, ...>`) has \
             rank 0; tensor maps have 1 to 5 dimensions"
        );
        assert_eq!(
            err(&|w| w[12] = 0),
            "parameter 0 (word 12): box extent 1 is 0; a tensor map's box extents are 1 \
             to 256"
        );
        assert_eq!(
            err(&|w| w[9] = 257),
            "parameter 0 (word 9): box extent 0 is 257; a tensor map's box extents are 1 \
             to 256"
        );
        assert_eq!(
            err(&|w| w[9] = 3),
            "parameter 0 (word 9): box extent 0 is 3 elements of 4 bytes, 12 bytes; the \
             innermost extent of a tensor map's box spans a multiple of 16 bytes"
        );
        assert_eq!(
            err(&|w| w[13] = 4),
            "parameter 0 (word 13): box extent 1 has size 4 and class opaque; a tensor \
             map's box extents have class opaque and size 0, except extent 0's, which is \
             the swizzle (32, 64 or 128 bytes, exactly the extent's bytes)"
        );
        assert_eq!(
            err(&|w| w[14] = 3),
            "parameter 0 (word 14): box extent 1 has size 0 and class float; a tensor \
             map's box extents have class opaque and size 0, except extent 0's, which is \
             the swizzle (32, 64 or 128 bytes, exactly the extent's bytes)"
        );
        // Extent 0's size is the swizzle: 128 bytes = 32 f32 elements is one.
        assert_eq!(
            err(&|w| w[10] = 64),
            "parameter 0 (word 10): box extent 0 has size 64 and class opaque; a tensor \
             map's box extents have class opaque and size 0, except extent 0's, which is \
             the swizzle (32, 64 or 128 bytes, exactly the extent's bytes)"
        );
        let mut words = tensor_map_words();
        words[10] = 128;
        let rec = AbiRecord::parse(&bytes(&words)).expect("a 128-byte swizzle of a 128-byte row");
        assert_eq!(rec.params[0].fields[0].size, 128);
    }

    #[test]
    fn trailing_garbage() {
        let mut w = vecadd_words();
        w.extend([0, 7]);
        assert_eq!(
            AbiRecord::parse(&bytes(&w)).unwrap_err().to_string(),
            "word 22 is 0x7, but the record's 3 parameters end at word 21; only zero padding \
             may follow"
        );
        // A count that is too small leaves a parameter's words behind.
        let mut w = vecadd_words();
        w[2] = 2;
        assert!(matches!(
            AbiRecord::parse(&bytes(&w)).unwrap_err(),
            AbiRecordError::TrailingData {
                params: 2,
                end: 15,
                word: 15,
                found: 4
            }
        ));
    }

    #[test]
    fn garbage_never_panics() {
        // A cheap deterministic fuzz: every record from mutating one word of a valid one
        // parses or errors, never panics.
        let base = affine_words();
        let values = [
            0,
            1,
            2,
            3,
            4,
            5,
            6,
            7,
            8,
            16,
            17,
            255,
            1 << 16,
            u32::MAX - 1,
            u32::MAX,
        ];
        for i in 0..base.len() {
            for &v in &values {
                let mut w = base.clone();
                w[i] = v;
                let _ = AbiRecord::parse(&bytes(&w));
                let b = bytes(&w);
                for cut in 0..b.len() {
                    let _ = AbiRecord::parse(&b[..cut]);
                }
            }
        }
    }
}
