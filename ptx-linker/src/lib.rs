//! PTX linker: parse, merge and validate PTX modules.
//!
//! CONTRACT STUB — the linker helper replaces the bodies; the public types
//! below are what `host-loader` and `xtask` build against.
#![deny(missing_docs)]

use serde::{Deserialize, Serialize};

/// One PTX input: a display path (used in diagnostics) and its text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path as the user named it; diagnostics print it verbatim.
    pub path: String,
    /// The whole PTX text.
    pub text: String,
}

/// How an input takes part in the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// Always linked in.
    Object,
    /// Linked in only when it defines a symbol that is otherwise unresolved
    /// (classic archive semantics); its unreachable definitions are dropped.
    Library,
}

/// One input to [`link`].
#[derive(Debug, Clone)]
pub struct LinkInput {
    /// The PTX source.
    pub file: SourceFile,
    /// Object or library.
    pub kind: InputKind,
}

/// Options for [`link`].
#[derive(Debug, Clone, Default)]
pub struct LinkOptions {
    /// `sm_XX` to emit in `.target`; `None` keeps the inputs' (which must agree).
    pub arch: Option<targets::Arch>,
    /// Drop every function and variable that no `.entry` (or `keep` symbol) reaches.
    pub gc: bool,
    /// Symbols kept by `gc` even when unreachable.
    pub keep: Vec<String>,
}

/// A successful link.
#[derive(Debug, Clone)]
pub struct LinkOutput {
    /// The merged module's text.
    pub ptx: String,
    /// What the merged module contains and where each symbol came from.
    pub map: LinkMap,
}

/// The link map written next to the merged PTX (`<crate>.map.json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LinkMap {
    /// `.version` of the output, e.g. `"7.8"`.
    pub version: String,
    /// `.target` architecture of the output, e.g. `"sm_90"`.
    pub target: String,
    /// `.address_size` (64).
    pub address_size: u32,
    /// Every `.entry` of the output, in output order.
    pub kernels: Vec<KernelInfo>,
    /// Every module-scope symbol of the output, in output order.
    pub symbols: Vec<SymbolInfo>,
}

/// One kernel in a [`LinkMap`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KernelInfo {
    /// The `.entry` name.
    pub name: String,
    /// Its `.param` list, in order.
    pub params: Vec<Param>,
    /// Static `.shared` bytes the kernel and every function it calls declare.
    pub static_shared_bytes: u64,
    /// Input file that defined it.
    pub defined_in: String,
}

/// One module-scope symbol in a [`LinkMap`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SymbolInfo {
    /// Name in the output module.
    pub name: String,
    /// `entry`, `func`, `global`, `const`, `shared`, `local`, `tex`, ...
    pub kind: String,
    /// `visible`, `weak`, `extern`, `common` or `local` (no linkage directive).
    pub linkage: String,
    /// Input file that defined it (or declared it, for symbols left external).
    pub defined_in: String,
    /// Original name when the linker renamed a colliding file-local symbol.
    pub renamed_from: Option<String>,
}

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
    /// A scalar such as `.u32`, `.f64`, `.b64` (`ty` without the dot).
    Scalar {
        /// Fundamental type, e.g. `u32`.
        ty: String,
    },
    /// `.u64 .ptr [.space] .align N`: a pointer parameter.
    Pointer {
        /// `global`, `const`, `local` or `shared` when given.
        space: Option<String>,
        /// The pointee alignment from `.ptr .align N`.
        pointee_align: u32,
    },
    /// `.align A .b8 name[N]`: a byval aggregate of `size` bytes.
    Aggregate {
        /// Element type of the array, e.g. `b8`.
        elem: String,
    },
}

/// Errors from [`link`] and [`entry_signatures`].
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct LinkError {
    /// Rendered diagnostics (`file:line:col: error: ...`).
    pub message: String,
}

/// Links `inputs` into one module.
///
/// Errors: every problem found, as rendered diagnostics.
pub fn link(_inputs: &[LinkInput], _options: &LinkOptions) -> Result<LinkOutput, LinkError> {
    Err(LinkError {
        message: "ptx-linker: not built yet".into(),
    })
}

/// Reads the `.entry` signatures of one PTX module.
///
/// Errors: the module does not parse.
pub fn entry_signatures(_path: &str, _text: &str) -> Result<Vec<EntrySignature>, LinkError> {
    Err(LinkError {
        message: "ptx-linker: not built yet".into(),
    })
}
