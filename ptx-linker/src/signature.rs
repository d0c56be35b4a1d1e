//! Kernel signatures: `.entry` parameter lists as sizes and alignments
//! (PTX ISA 9.0, section 5.1.6.1 "Kernel Function Parameters").

use serde::{Deserialize, Serialize};

use crate::ast::{dims_product, type_size, ParamDecl};
use crate::diagnostic::Diagnostic;

/// The signature of one `.entry`, read from PTX text.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EntrySignature {
    /// The `.entry` name.
    pub name: String,
    /// 1-based line of the `.entry` directive.
    pub line: u32,
    /// Its `.param` list, in order.
    pub params: Vec<Param>,
}

/// One kernel parameter (PTX ISA 9.0, section 5.1.6.1 "Kernel Function Parameters").
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Param {
    /// The parameter's PTX name, e.g. `vecadd_param_0`.
    pub name: String,
    /// What kind of parameter it is.
    pub kind: ParamKind,
    /// Size in bytes.
    pub size: u32,
    /// Alignment in bytes (`.align` when present, else the natural alignment).
    pub align: u32,
}

/// The shape of a kernel parameter.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ParamKind {
    /// A scalar such as `.u32`, `.f64`, `.b64` (`ty` without the dot). A
    /// vector parameter (`.v2 .f32`) is a scalar whose `ty` is `v2.f32`; its
    /// size is the whole vector and its alignment the vector's size.
    Scalar {
        /// Fundamental type, e.g. `u32`.
        ty: String,
    },
    /// `.u64 .ptr [.space] .align N`: a pointer parameter.
    Pointer {
        /// `global`, `const`, `local` or `shared` when given.
        space: Option<String>,
        /// The pointee alignment from `.ptr .align N` (4 when `.align` is omitted).
        pointee_align: u32,
    },
    /// `.align A .b8 name[N]`: a byval aggregate of `size` bytes.
    Aggregate {
        /// Element type of the array, e.g. `b8`.
        elem: String,
    },
}

/// Converts a parsed parameter. Errors: a type whose size is unknown
/// (`.texref` parameters and the like are not plain data).
pub(crate) fn param_of(p: &ParamDecl<'_>) -> Result<Param, Diagnostic> {
    let Some(elem) = type_size(p.ty) else {
        return Err(Diagnostic::error(
            p.name.span,
            format!(
                "parameter `{}` has type `.{}`, whose size is unknown",
                p.name.text, p.ty
            ),
        )
        .with_help("kernel parameters must be scalars, pointers or `.b8` arrays"));
    };
    let elem = elem * p.vector;
    // `[]` counts as no element; the size must fit the `u32` it is kept in.
    let size = dims_product(p.dims.iter().map(|d| d.unwrap_or(0)))
        .and_then(|n| n.checked_mul(u64::from(elem)))
        .and_then(|n| u32::try_from(n).ok());
    let Some(size) = size else {
        let dims: String = p
            .dims
            .iter()
            .map(|d| d.map_or("[]".to_string(), |n| format!("[{n}]")))
            .collect();
        let bytes = p
            .dims
            .iter()
            .try_fold(u128::from(elem), |n, d| {
                n.checked_mul(u128::from(d.unwrap_or(0)))
            })
            .map_or("more than 2^128 bytes".to_string(), |n| {
                format!("{n} bytes")
            });
        return Err(Diagnostic::error(
            p.name.span,
            format!(
                "parameter `{}` (`.{}{dims}`) is {bytes}; a parameter's size must fit 32 bits",
                p.name.text, p.ty
            ),
        )
        .with_help("pass large data through a pointer to global memory instead of by value"));
    };
    let (kind, size, natural) = if let Some(ptr) = p.ptr {
        (
            ParamKind::Pointer {
                space: ptr.space.map(str::to_string),
                pointee_align: ptr.align,
            },
            elem,
            elem,
        )
    } else if !p.dims.is_empty() {
        (
            ParamKind::Aggregate {
                elem: p.ty.to_string(),
            },
            size,
            elem,
        )
    } else {
        let ty = if p.vector > 1 {
            format!("v{}.{}", p.vector, p.ty)
        } else {
            p.ty.to_string()
        };
        (ParamKind::Scalar { ty }, elem, elem)
    };
    Ok(Param {
        name: p.name.text.to_string(),
        kind,
        size,
        align: p.align.unwrap_or(natural).max(1),
    })
}

/// Bytes of `.param` space a parameter list occupies, each parameter placed at
/// the next multiple of its alignment.
pub fn param_space_bytes(params: &[Param]) -> u64 {
    params.iter().fold(0u64, |off, p| {
        align_up(off, u64::from(p.align)).saturating_add(u64::from(p.size))
    })
}

/// Rounds `n` up to a multiple of `align` (`align` 0 counts as 1);
/// `u64::MAX` when that does not fit 64 bits.
pub fn align_up(n: u64, align: u64) -> u64 {
    n.checked_next_multiple_of(align.max(1)).unwrap_or(u64::MAX)
}
