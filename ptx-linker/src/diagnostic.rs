//! Spans, diagnostics and their rendering.
//!
//! Every phase reports problems as [`Diagnostic`]s that carry [`Span`]s (file
//! id + byte range). Only this module turns spans into `file:line:col`, either
//! as one-line messages ([`render_short`]) or as `codespan-reporting` snippets
//! ([`render_rich`]).

use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{Files, SimpleFiles};
use codespan_reporting::term;
use std::borrow::Cow;

/// Index of an input file: its position in the slice given to [`crate::link`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A byte range in one input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span {
    /// The file the range lies in.
    pub file: FileId,
    /// First byte (inclusive).
    pub start: u32,
    /// Last byte (exclusive).
    pub end: u32,
}

impl Span {
    /// A span over `start..end` of `file`.
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        Span {
            file,
            start: start as u32,
            end: end as u32,
        }
    }

    /// The byte range as a `Range<usize>`.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The link fails.
    Error,
    /// The link succeeds; something was changed or dropped that the user should know.
    Warning,
}

/// A span with a message attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What is there.
    pub message: String,
}

/// One problem found while parsing or linking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The headline, e.g. ``duplicate symbol `foo` ``.
    pub message: String,
    /// The main location, when there is one.
    pub primary: Option<Label>,
    /// Other locations involved (the conflicting definition, ...).
    pub secondary: Vec<Label>,
    /// How to fix it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error at `span`.
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            primary: Some(Label {
                span,
                message: String::new(),
            }),
            secondary: Vec::new(),
            help: None,
        }
    }

    /// An error that belongs to no place in any input (bad options, ...).
    pub fn error_nowhere(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            primary: None,
            secondary: Vec::new(),
            help: None,
        }
    }

    /// Turns this diagnostic into a warning.
    pub fn warning(mut self) -> Diagnostic {
        self.severity = Severity::Warning;
        self
    }

    /// Sets the label text of the primary location.
    pub fn with_label(mut self, message: impl Into<String>) -> Diagnostic {
        if let Some(p) = &mut self.primary {
            p.message = message.into();
        }
        self
    }

    /// Adds a secondary location.
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// Adds a `help:` line.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// True for [`Severity::Error`].
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The input files, by [`FileId`], for rendering.
#[derive(Debug, Clone, Copy)]
pub struct Sources<'a> {
    /// `(display path, text)` per file id.
    pub files: &'a [(&'a str, &'a str)],
}

/// The inputs as diagnostics show them: [`shown`] text.
fn simple_files<'a>(sources: Sources<'a>) -> SimpleFiles<&'a str, Cow<'a, str>> {
    let mut files = SimpleFiles::new();
    for (path, text) in sources.files {
        files.add(*path, shown(text));
    }
    files
}

/// `text` with each control byte but tab, line feed and CR, and DEL, shown
/// as `?`: one byte for one, so every offset stays, and a quoted source
/// line cannot carry a terminal's escape sequence or hide its caret.
fn shown(text: &str) -> Cow<'_, str> {
    let hidden = |b: u8| (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')) || b == 0x7f;
    if !text.bytes().any(hidden) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if c.is_ascii() && hidden(c as u8) {
                    '?'
                } else {
                    c
                }
            })
            .collect(),
    )
}

/// `path:line:col` of a span's start (1-based line and column).
pub fn location(sources: Sources<'_>, span: Span) -> String {
    location_in(&simple_files(sources), span)
}

/// [`location`] in files already indexed (each [`simple_files`] call scans
/// every input for its line starts).
fn location_in(files: &SimpleFiles<&str, Cow<'_, str>>, span: Span) -> String {
    let id = span.file.0 as usize;
    match files.location(id, span.start as usize) {
        Ok(loc) => format!(
            "{}:{}:{}",
            files.name(id).unwrap_or("<unknown>"),
            loc.line_number,
            loc.column_number
        ),
        Err(_) => "<unknown>".to_string(),
    }
}

/// `n` and its noun, singular for one: `1 variable`, `2 variables`.
pub fn count(n: impl Into<u128>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// 1-based line of a byte offset in `text`.
pub fn line_of(text: &str, offset: usize) -> u32 {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u32
        + 1
}

/// Renders diagnostics one per block:
/// `file:line:col: error: message`, then one `file:line:col: note: label`
/// line per secondary location, then `help: ...`.
pub fn render_short(sources: Sources<'_>, diags: &[Diagnostic]) -> String {
    let files = simple_files(sources);
    let mut out = String::new();
    for d in diags {
        let sev = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match &d.primary {
            Some(p) => out.push_str(&format!(
                "{}: {sev}: {}\n",
                location_in(&files, p.span),
                d.message
            )),
            None => out.push_str(&format!("{sev}: {}\n", d.message)),
        }
        for s in &d.secondary {
            out.push_str(&format!(
                "{}: note: {}\n",
                location_in(&files, s.span),
                s.message
            ));
        }
        if let Some(h) = &d.help {
            out.push_str(&format!("help: {h}\n"));
        }
    }
    out
}

/// Renders diagnostics with source snippets (`codespan-reporting`), no colour.
pub fn render_rich(sources: Sources<'_>, diags: &[Diagnostic]) -> String {
    let files = simple_files(sources);
    let config = term::Config::default();
    let mut writer = term::termcolor::NoColor::new(Vec::<u8>::new());
    for d in diags {
        let mut cd = match d.severity {
            Severity::Error => cs::Diagnostic::error(),
            Severity::Warning => cs::Diagnostic::warning(),
        }
        .with_message(d.message.clone());
        let mut labels = Vec::new();
        if let Some(p) = &d.primary {
            labels.push(
                cs::Label::primary(p.span.file.0 as usize, p.span.range())
                    .with_message(p.message.clone()),
            );
        }
        for s in &d.secondary {
            labels.push(
                cs::Label::secondary(s.span.file.0 as usize, s.span.range())
                    .with_message(s.message.clone()),
            );
        }
        cd = cd.with_labels(labels);
        if let Some(h) = &d.help {
            cd = cd.with_notes(vec![format!("help: {h}")]);
        }
        if term::emit(&mut writer, &config, &files, &cd).is_err() {
            // A span outside its file: fall back to the one-line form.
            let short = render_short(sources, std::slice::from_ref(d));
            writer.get_mut().extend_from_slice(short.as_bytes());
        }
    }
    String::from_utf8_lossy(&writer.into_inner()).into_owned()
}

/// Errors from [`crate::link`] and [`crate::entry_signatures`]: every problem
/// found, not only the first.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct LinkError {
    /// Rendered diagnostics, one-line form (`file:line:col: error: ...`,
    /// followed by `note:` and `help:` lines).
    pub message: String,
    /// The same diagnostics with source snippets (what the CLI prints).
    pub rendered: String,
    /// The structured diagnostics (errors, plus any warnings found on the way).
    pub diagnostics: Vec<Diagnostic>,
}

/// Errors from [`crate::link_to`].
#[derive(Debug, thiserror::Error)]
pub enum LinkToError {
    /// The inputs do not link; nothing was written.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// Writing the output failed; part of it may have been written.
    #[error("cannot write the linked module: {0}")]
    Write(#[from] std::io::Error),
}

impl LinkError {
    /// Builds the error from diagnostics, rendering them against `sources`.
    pub fn new(sources: Sources<'_>, diagnostics: Vec<Diagnostic>) -> LinkError {
        LinkError {
            message: render_short(sources, &diagnostics).trim_end().to_string(),
            rendered: render_rich(sources, &diagnostics),
            diagnostics,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quoted line shows control bytes as `?`, one for one: no escape
    /// sequence reaches the terminal, and the caret stays under its byte.
    #[test]
    fn quoted_lines_show_control_bytes_as_question_marks() {
        let text = "ret;\x1b[2J\x7f\nret;\n";
        let files = [("a.ptx", text)];
        let d = Diagnostic::error(Span::new(FileId(0), 4, 5), "control character 0x1b")
            .with_label("here");
        let out = render_rich(Sources { files: &files }, &[d]);
        assert!(!out.contains('\x1b') && !out.contains('\x7f'), "{out}");
        assert!(out.contains("ret;?[2J?"), "{out}");
        assert!(out.contains("a.ptx:1:5"), "{out}");
        let caret = out.lines().find(|l| l.contains("^ here")).expect(&out);
        let quoted = out.lines().find(|l| l.contains("ret;?")).expect(&out);
        assert_eq!(caret.find('^'), quoted.find('?'), "{out}");
    }
}
