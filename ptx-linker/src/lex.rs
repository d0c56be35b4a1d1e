//! Lexer: PTX text to tokens (PTX ISA 9.0, section 4 "Syntax"), on demand
//! for the parser or into a list ([`lex`]).
//!
//! Comments are skipped, every other byte ends up in some token. Lexing never
//! stops: bytes that start no valid token become [`TokKind::Unknown`] and are
//! reported (each is one that ptxas refuses there: a control character, DEL,
//! non-ASCII), as are a NUL anywhere and non-ASCII in a string; an
//! unterminated string or block comment is reported and closed at end of input.

use crate::diagnostic::{Diagnostic, FileId, Span};

/// The kind of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    /// `foo`, `%r1`, `$L__BB0_1`, `_`.
    Ident,
    /// `.version`, `.b32`, `.debug_info`.
    Directive,
    /// `42`, `0x1F`, `0f3F800000`, `1.5`, `7U`.
    Number,
    /// `"text"`.
    Str,
    /// One punctuation byte: `{ } ( ) [ ] ; , : = + - @ ! < > | & * / ~ ?`.
    Punct(u8),
    /// Anything else (one character).
    Unknown,
}

/// One token: kind and byte range in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// What kind of token.
    pub kind: TokKind,
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
    /// A newline lies between the previous token and this one (or this is the
    /// first token). `.loc` and `.file` end at the end of their line.
    pub nl_before: bool,
}

impl Token {
    /// The token's text.
    pub fn text<'s>(&self, src: &'s str) -> &'s str {
        src.get(self.start as usize..self.end as usize)
            .unwrap_or("")
    }

    /// True when the token is the punctuation byte `c`.
    pub fn is(&self, c: u8) -> bool {
        self.kind == TokKind::Punct(c)
    }
}

/// `IDENT[b]`: `b` may continue an identifier (letters, digits, `_`, `$`).
static IDENT: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
        b += 1;
    }
    t
};

pub(crate) fn is_ident_char(b: u8) -> bool {
    IDENT[b as usize]
}

/// Index of the first byte at or after `i` that cannot continue an identifier.
#[inline]
pub(crate) fn ident_end(bytes: &[u8], mut i: usize) -> usize {
    // 16 bytes at a time where that is possible (x86-64): no branch per byte,
    // so no mispredicted loop exit on every identifier.
    while let Some(mask) = crate::scan16::non_ident(bytes, i) {
        if mask != 0 {
            return i + mask.trailing_zeros() as usize;
        }
        i += 16;
    }
    while let Some(&b) = bytes.get(i) {
        if !IDENT[b as usize] {
            break;
        }
        i += 1;
    }
    i
}

/// Splits `src` into tokens. Problems (unterminated comments or strings) come
/// back as diagnostics; the token list is always complete.
pub fn lex(file: FileId, src: &str) -> (Vec<Token>, Vec<Diagnostic>) {
    let mut toks = Vec::new();
    let errors = lex_into(file, src, &mut toks);
    (toks, errors)
}

/// Byte classes for the lexer's dispatch.
pub(crate) const C_OTHER: u8 = 0;
pub(crate) const C_SPACE: u8 = 1;
pub(crate) const C_NL: u8 = 2;
pub(crate) const C_IDENT: u8 = 3;
pub(crate) const C_DOT: u8 = 4;
pub(crate) const C_DIGIT: u8 = 5;
pub(crate) const C_QUOTE: u8 = 6;
pub(crate) const C_SLASH: u8 = 7;
pub(crate) const C_PUNCT: u8 = 8;

/// Whether `b` is blank between tokens: a space, `\t`, a line feed, a form
/// feed or a CR (the last two also end a `.loc` line), and SUB (0x1a), which
/// ptxas 13.5 also takes for a blank; as [`crate::scan16`]'s mask has it.
/// Not a vertical tab: ptxas refuses one outside comments and strings
/// ("Parsing error"), and so does [`Lexer::char_end`].
#[inline(always)]
pub(crate) const fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0c | b'\r' | 0x1a)
}

/// `CLASS[b]`: what a token starting with byte `b` is.
pub(crate) static CLASS: [u8; 256] = {
    let mut t = [C_OTHER; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        // ptxas ends a `.loc` or `.file` line at a lone CR or a form feed
        // too (a `//` comment only at a line feed).
        t[b] = if c == b'\n' || c == b'\r' || c == 0x0c {
            C_NL
        } else if is_blank(c) {
            C_SPACE
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'%' {
            C_IDENT
        } else if c == b'.' {
            C_DOT
        } else if c.is_ascii_digit() {
            C_DIGIT
        } else if c == b'"' {
            C_QUOTE
        } else if c == b'/' {
            C_SLASH
        } else if c.is_ascii_punctuation() {
            C_PUNCT
        } else {
            C_OTHER
        };
        b += 1;
    }
    t
};

/// `IDENT_START[b]`: `b` starts an identifier (letters, `_`, `$`, `%`).
pub(crate) static IDENT_START: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'%';
        b += 1;
    }
    t
};

/// [`lex`] into `toks` (cleared first), so that one buffer serves many
/// modules without reallocating.
pub fn lex_into(file: FileId, src: &str, toks: &mut Vec<Token>) -> Vec<Diagnostic> {
    toks.clear();
    toks.reserve(src.len() / 5);
    let mut lexer = Lexer::new(file, src);
    while lexer.lex_some(toks) {}
    lexer.errors
}

/// The most errors a lexer keeps before it stops reporting refused bytes
/// one by one.
const MAX_BYTE_ERRORS: usize = 20;

/// Where [`Lexer::refuse_char`] found a character.
#[derive(Debug, Clone, Copy)]
enum Place {
    /// Outside comments and strings.
    Code,
    /// In a string literal.
    Str,
}

/// A lexer that hands out tokens on demand: the parser pulls them, and the
/// body scanner ([`crate::body`]) reads bytes through it directly.
#[derive(Debug, Clone)]
pub(crate) struct Lexer<'src> {
    pub(crate) src: &'src str,
    file: FileId,
    /// Where lexing continues.
    pub(crate) at: usize,
    /// A newline lies between the last token and `at`.
    pub(crate) nl: bool,
    /// Unterminated comments and strings, in text order.
    pub(crate) errors: Vec<Diagnostic>,
}

impl<'src> Lexer<'src> {
    pub(crate) fn new(file: FileId, src: &'src str) -> Self {
        Lexer {
            src,
            file,
            at: 0,
            nl: true,
            errors: Vec::new(),
        }
    }

    /// A copy that lexes ahead from here and keeps no errors.
    pub(crate) fn ahead(&self) -> Lexer<'src> {
        Lexer {
            src: self.src,
            file: self.file,
            at: self.at,
            nl: self.nl,
            errors: Vec::new(),
        }
    }

    /// Continues at `at`, the end of a token: what was lexed past it will be
    /// lexed again, so its errors are dropped.
    pub(crate) fn rewind(&mut self, at: usize) {
        self.at = at;
        self.nl = false;
        if self.errors.last().is_some_and(|e| {
            e.primary
                .as_ref()
                .is_some_and(|l| l.span.start as usize >= at)
        }) {
            self.errors.retain(|e| {
                e.primary
                    .as_ref()
                    .is_none_or(|l| (l.span.start as usize) < at)
            });
        }
    }

    /// Skips blanks and comments; `at` is then at a token or the end.
    #[inline]
    pub(crate) fn skip_blanks(&mut self) {
        let bytes = self.src.as_bytes();
        let mut i = self.at;
        while let Some(&b) = bytes.get(i) {
            match CLASS[b as usize] {
                C_SPACE => i += 1,
                C_NL => {
                    self.nl = true;
                    i += 1;
                }
                C_SLASH => match bytes.get(i + 1) {
                    Some(b'/') => i = self.line_comment(i),
                    Some(b'*') => i = self.block_comment(i),
                    _ => break,
                },
                _ => break,
            }
        }
        self.at = i;
    }

    /// Skips the line comment at `start`; returns where it ends (its line
    /// feed, or the end of input). A NUL byte in it is reported.
    #[inline]
    fn line_comment(&mut self, start: usize) -> usize {
        let bytes = self.src.as_bytes();
        let mut i = start + 2;
        loop {
            match memchr::memchr2(b'\n', 0, &bytes[i..]) {
                Some(p) if bytes[i + p] == 0 => {
                    self.refuse_nul(i + p);
                    i += p + 1;
                }
                Some(p) => return i + p,
                None => return bytes.len(),
            }
        }
    }

    /// Keeps `d`, a refused byte, unless [`MAX_BYTE_ERRORS`] are kept
    /// already: then one last error says so, and the rest go unreported (a
    /// file in another encoding would give one per character).
    fn push_byte_error(&mut self, d: Diagnostic) {
        let kept = self.errors.len();
        if kept < MAX_BYTE_ERRORS {
            self.errors.push(d);
        } else if kept == MAX_BYTE_ERRORS {
            let span = d.primary.as_ref().map(|l| l.span);
            if let Some(span) = span {
                self.errors.push(
                    Diagnostic::error(span, "more bytes ptxas refuses, not reported one by one")
                        .with_help("fix the ones above first (is the file PTX text, in ASCII?)"),
                );
            }
        }
    }

    /// Reports the NUL byte at `at`: ptxas 13.5 takes it for the end of the
    /// input, in comments and strings too ("Unexpected EOF").
    #[cold]
    fn refuse_nul(&mut self, at: usize) {
        self.push_byte_error(
            Diagnostic::error(Span::new(self.file, at, at + 1), "NUL byte in PTX text")
                .with_label("here")
                .with_help(
                    "remove it: ptxas takes a NUL for the end of its input, even in a comment or string (\"Unexpected EOF\")",
                ),
        );
    }

    /// Skips the block comment at `start`; returns where it ends.
    #[cold]
    fn block_comment(&mut self, start: usize) -> usize {
        let bytes = self.src.as_bytes();
        let mut i = start + 2;
        loop {
            if i + 1 >= bytes.len() {
                self.errors.push(
                    Diagnostic::error(
                        Span::new(self.file, start, start + 2),
                        "unterminated block comment",
                    )
                    .with_label("comment starts here")
                    .with_help("close the comment with `*/`"),
                );
                return bytes.len();
            }
            match bytes[i] {
                b'\n' => self.nl = true,
                0 => self.refuse_nul(i),
                _ => {}
            }
            if bytes[i] == b'*' && bytes[i + 1] == b'/' {
                return i + 2;
            }
            i += 1;
        }
    }

    /// Lexes the string literal at `start`; returns where it ends: at the
    /// next `"`, as ptxas 13.5 has it (a backslash escapes nothing:
    /// `"C:\dir\"` is a whole string, `"x\""` one and a stray quote).
    pub(crate) fn string(&mut self, start: usize) -> usize {
        let bytes = self.src.as_bytes();
        let mut i = start + 1;
        loop {
            match bytes.get(i) {
                None | Some(b'\n') => {
                    i = i.min(bytes.len());
                    self.errors.push(
                        Diagnostic::error(
                            Span::new(self.file, start, i),
                            "unterminated string literal",
                        )
                        .with_help("close the string with `\"` on the same line"),
                    );
                    break;
                }
                Some(b'"') => {
                    i += 1;
                    break;
                }
                Some(0) => {
                    self.refuse_nul(i);
                    i += 1;
                }
                Some(&b) if b >= 0x80 => {
                    let end = self.char_at_end(i);
                    self.refuse_char(i, end, Place::Str);
                    i = end;
                }
                Some(_) => i += 1,
            }
        }
        i.min(bytes.len())
    }

    /// The end of the character at `start` (UTF-8: the input is a `str`).
    fn char_at_end(&self, start: usize) -> usize {
        let mut i = start + 1;
        while i < self.src.len() && !self.src.is_char_boundary(i) {
            i += 1;
        }
        i
    }

    /// Reports the character `start..end`, which ptxas 13.5 refuses in
    /// `place` (code, or a string): any non-ASCII character ("Unexpected
    /// non-ASCII character"), and in code DEL or a control byte other than a
    /// blank ("Parsing error"). Comments may hold any of them.
    #[cold]
    fn refuse_char(&mut self, start: usize, end: usize, place: Place) {
        let text = self.src.get(start..end).unwrap_or("");
        let Some(c) = text.chars().next() else {
            return;
        };
        if c == '\0' {
            self.refuse_nul(start);
            return;
        }
        let (what, ptxas) = if c == '\x7f' {
            (
                "DEL character 0x7f".to_string(),
                "Unexpected non-ASCII character",
            )
        } else if c.is_ascii() {
            (
                format!("control character {:#04x}", c as u32),
                "Parsing error",
            )
        } else {
            (
                format!("non-ASCII character {c:?} (U+{:04X})", c as u32),
                "Unexpected non-ASCII character",
            )
        };
        let (place, help) = match place {
            Place::Code => (
                "PTX code",
                format!("remove it, or move it into a comment: outside comments and strings ptxas takes only printable ASCII, tabs, line feeds, form feeds, carriage returns and SUB (0x1a) (\"{ptxas}\")"),
            ),
            Place::Str => (
                "a string",
                format!("use only ASCII in the string (for a `.file` path, a path without such characters): ptxas refuses any other character there (\"{ptxas}\")"),
            ),
        };
        self.push_byte_error(
            Diagnostic::error(
                Span::new(self.file, start, end),
                format!("{what} in {place}"),
            )
            .with_label("here")
            .with_help(help),
        );
    }

    /// The end of the one character at `start` (an [`TokKind::Unknown`]),
    /// which is reported: every byte that starts no token is one ptxas 13.5
    /// refuses outside comments and strings (a control byte other than a
    /// blank, DEL, or a non-ASCII character).
    pub(crate) fn char_end(&mut self, start: usize) -> usize {
        let end = self.char_at_end(start);
        self.refuse_char(start, end, Place::Code);
        end
    }

    /// Lexes the next token, and the suffixes glued to it, into `toks`;
    /// false at the end of input.
    pub(crate) fn lex_some(&mut self, toks: &mut Vec<Token>) -> bool {
        self.skip_blanks();
        let bytes = self.src.as_bytes();
        let start = self.at;
        let Some(&b) = bytes.get(start) else {
            return false;
        };
        let mut i = start;
        // Identifiers are the commonest token: tested first with a plain
        // branch rather than through the dispatch's jump table.
        let kind = if IDENT_START[b as usize] {
            i = ident_end(bytes, i + 1);
            TokKind::Ident
        } else {
            match CLASS[b as usize] {
                C_DOT => {
                    if bytes.get(i + 1).is_some_and(|&c| is_ident_char(c)) {
                        i = ident_end(bytes, i + 1);
                        TokKind::Directive
                    } else {
                        i += 1;
                        TokKind::Punct(b)
                    }
                }
                C_DIGIT => {
                    i = lex_number(bytes, i);
                    TokKind::Number
                }
                // A `/` that starts no comment.
                C_PUNCT | C_SLASH => {
                    i += 1;
                    TokKind::Punct(b)
                }
                C_QUOTE => {
                    i = self.string(start);
                    TokKind::Str
                }
                _ => {
                    // One whole character (keeps slicing on char boundaries).
                    i = self.char_end(start);
                    TokKind::Unknown
                }
            }
        };
        toks.push(Token {
            kind,
            start: start as u32,
            end: i as u32,
            nl_before: self.nl,
        });
        self.nl = false;
        if matches!(kind, TokKind::Ident | TokKind::Directive | TokKind::Number) {
            // Glued suffixes (`mad.lo.s32`, `%r1,`, `x;`): lexed here with
            // plain branches, which predict far better than the dispatch.
            loop {
                let start = i;
                let kind = match bytes.get(i) {
                    Some(b'.') if bytes.get(i + 1).is_some_and(|&c| is_ident_char(c)) => {
                        i = ident_end(bytes, i + 1);
                        TokKind::Directive
                    }
                    Some(&p @ (b',' | b';' | b']' | b')' | b':')) => {
                        i += 1;
                        TokKind::Punct(p)
                    }
                    _ => break,
                };
                toks.push(Token {
                    kind,
                    start: start as u32,
                    end: i as u32,
                    nl_before: false,
                });
                if matches!(kind, TokKind::Punct(_)) {
                    break;
                }
            }
        }
        self.at = i;
        true
    }
}

/// Decimal, hex (`0x`), binary (`0b`), float bits (`0f`/`0F`/`0d`/`0D`) and
/// decimal floats (`1.5e-3`), each with an optional `U` suffix.
pub(crate) fn lex_number(bytes: &[u8], mut i: usize) -> usize {
    let prefixed = bytes[i] == b'0'
        && matches!(
            bytes.get(i + 1),
            Some(b'x' | b'X' | b'f' | b'F' | b'd' | b'D' | b'b' | b'B')
        )
        && bytes.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit());
    if prefixed {
        i += 2;
        while i < bytes.len() && bytes[i].is_ascii_hexdigit() {
            i += 1;
        }
    } else {
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
        if matches!(bytes.get(i), Some(b'e' | b'E')) {
            let mut j = i + 1;
            if matches!(bytes.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            if bytes.get(j).is_some_and(|c| c.is_ascii_digit()) {
                i = j;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
            }
        }
    }
    // `U` suffix, and any junk glued on, stays in the same token.
    while i < bytes.len() && is_ident_char(bytes[i]) {
        i += 1;
    }
    i
}

/// Parses the value of an integer literal token (`42`, `0x10`, `0b101`, `7U`,
/// `017` octal). `None` for floats and malformed text.
pub fn int_value(text: &str) -> Option<u64> {
    let t = text.trim_end_matches(['U', 'u']);
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        u64::from_str_radix(b, 2).ok()
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8).ok()
    } else {
        t.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(TokKind, String)> {
        let (t, _) = lex(FileId(0), src);
        t.iter()
            .map(|t| (t.kind, t.text(src).to_string()))
            .collect()
    }

    #[test]
    fn lexes_ptx_tokens() {
        let k = kinds(
            "ld.param.u64 %rd1, [p+8]; // c\n mov.f32 %f1, 0f3F800000; $L__BB0_1: 7U 1.5 0x1F",
        );
        let texts: Vec<&str> = k.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(
            texts,
            [
                "ld",
                ".param",
                ".u64",
                "%rd1",
                ",",
                "[",
                "p",
                "+",
                "8",
                "]",
                ";",
                "mov",
                ".f32",
                "%f1",
                ",",
                "0f3F800000",
                ";",
                "$L__BB0_1",
                ":",
                "7U",
                "1.5",
                "0x1F"
            ]
        );
        assert_eq!(k[15].0, TokKind::Number);
        assert_eq!(k[17].0, TokKind::Ident);
    }

    #[test]
    fn never_panics_on_junk() {
        for src in [
            "/* open",
            "\"open",
            "é∂ƒ\u{0}\u{7f}.",
            ".",
            "0x",
            "0f",
            "%",
            "$",
            "\"\\",
            "a/*b*",
        ] {
            let _ = lex(FileId(0), src);
        }
        let (_, e) = lex(FileId(0), "/* open");
        assert_eq!(e[0].message, "unterminated block comment");
    }

    #[test]
    fn int_values() {
        assert_eq!(int_value("16"), Some(16));
        assert_eq!(int_value("0x10"), Some(16));
        assert_eq!(int_value("16U"), Some(16));
        assert_eq!(int_value("0f3F800000"), None);
    }
}
