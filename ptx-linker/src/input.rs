//! What goes into a link and what comes out of it.

use crate::map::LinkMap;

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

/// One input to [`crate::link`].
#[derive(Debug, Clone)]
pub struct LinkInput {
    /// The PTX source.
    pub file: SourceFile,
    /// Object or library.
    pub kind: InputKind,
}

impl LinkInput {
    /// An [`InputKind::Object`] input.
    pub fn object(path: impl Into<String>, text: impl Into<String>) -> LinkInput {
        LinkInput {
            file: SourceFile {
                path: path.into(),
                text: text.into(),
            },
            kind: InputKind::Object,
        }
    }

    /// An [`InputKind::Library`] input.
    pub fn library(path: impl Into<String>, text: impl Into<String>) -> LinkInput {
        LinkInput {
            kind: InputKind::Library,
            ..LinkInput::object(path, text)
        }
    }
}

/// Options for [`crate::link`].
#[derive(Debug, Clone, Default)]
pub struct LinkOptions {
    /// `sm_XX` to emit in `.target`; `None` keeps the inputs' (which must agree).
    /// An override must be at least every input's architecture.
    pub arch: Option<targets::Arch>,
    /// Drop every function and variable that no `.entry` (or `keep` symbol) reaches.
    pub gc: bool,
    /// Symbols kept by `gc` even when unreachable.
    pub keep: Vec<String>,
    /// Leave every unresolved `.extern` declaration external instead of
    /// reporting it (for modules that are linked again later, `ptxas -c`).
    /// Without it only the driver-provided `vprintf`, `malloc`, `free` and
    /// `__assertfail`, and `.extern .shared` (dynamic shared memory), may stay
    /// unresolved.
    pub allow_unresolved: bool,
}

/// A successful link.
#[derive(Debug, Clone)]
pub struct LinkOutput {
    /// The merged module's text.
    pub ptx: String,
    /// What the merged module contains and where each symbol came from.
    pub map: LinkMap,
    /// Warnings, rendered one per block (`file:line:col: warning: ...`).
    pub warnings: Vec<String>,
    /// Symbols the output declares but defines nowhere, sorted: the driver's
    /// `vprintf`, `malloc`, `free`, `__assertfail`, and with
    /// `allow_unresolved` whatever stayed unresolved (dynamic shared-memory
    /// arrays are left out: the launch provides them). When it is not empty,
    /// assemble the output alone with `ptxas -c`.
    pub external: Vec<String>,
}

/// A successful [`crate::link_to`]: everything [`LinkOutput`] holds but the
/// text, which went to the writer.
#[derive(Debug, Clone)]
pub struct LinkReport {
    /// What the merged module contains and where each symbol came from.
    pub map: LinkMap,
    /// Warnings, rendered one per block (`file:line:col: warning: ...`).
    pub warnings: Vec<String>,
    /// Symbols the output declares but defines nowhere (see
    /// [`LinkOutput::external`]).
    pub external: Vec<String>,
}
