//! Lexer: PTX text to a flat token list (PTX ISA 9.0, section 4 "Syntax").
//!
//! Comments are skipped, every other byte ends up in some token. Lexing never
//! fails: bytes that start no valid token become [`TokKind::Unknown`], and an
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

fn is_ident_char(b: u8) -> bool {
    IDENT[b as usize]
}

/// Index of the first byte at or after `i` that cannot continue an identifier.
#[inline]
fn ident_end(bytes: &[u8], mut i: usize) -> usize {
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

/// [`lex`] into `toks` (cleared first), so that one buffer serves many
/// modules without reallocating.
pub fn lex_into(file: FileId, src: &str, toks: &mut Vec<Token>) -> Vec<Diagnostic> {
    let bytes = src.as_bytes();
    toks.clear();
    toks.reserve(src.len() / 5);
    let mut errors = Vec::new();
    let mut i = 0usize;
    let mut nl = true;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b' ' || (b'\t'..=b'\r').contains(&b) {
            nl |= b == b'\n';
            i += 1;
            continue;
        }
        if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b == b'/' && bytes.get(i + 1) == Some(&b'*') {
            let start = i;
            i += 2;
            loop {
                if i + 1 >= bytes.len() {
                    errors.push(
                        Diagnostic::error(
                            Span::new(file, start, start + 2),
                            "unterminated block comment",
                        )
                        .with_label("comment starts here")
                        .with_help("close the comment with `*/`"),
                    );
                    i = bytes.len();
                    break;
                }
                if bytes[i] == b'\n' {
                    nl = true;
                }
                if bytes[i] == b'*' && bytes[i + 1] == b'/' {
                    i += 2;
                    break;
                }
                i += 1;
            }
            continue;
        }
        let start = i;
        let kind = if b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b == b'%' {
            i = ident_end(bytes, i + 1);
            TokKind::Ident
        } else if b == b'.' && bytes.get(i + 1).is_some_and(|&c| is_ident_char(c)) {
            i = ident_end(bytes, i + 1);
            TokKind::Directive
        } else if b.is_ascii_digit() {
            i = lex_number(bytes, i);
            TokKind::Number
        } else if b == b'"' {
            i += 1;
            loop {
                match bytes.get(i) {
                    None | Some(b'\n') => {
                        i = i.min(bytes.len());
                        errors.push(
                            Diagnostic::error(
                                Span::new(file, start, i),
                                "unterminated string literal",
                            )
                            .with_help("close the string with `\"` on the same line"),
                        );
                        break;
                    }
                    Some(b'\\') => i += 2,
                    Some(b'"') => {
                        i += 1;
                        break;
                    }
                    Some(_) => i += 1,
                }
            }
            i = i.min(bytes.len());
            TokKind::Str
        } else if b.is_ascii_punctuation() {
            i += 1;
            TokKind::Punct(b)
        } else {
            // One whole character (keeps slicing on char boundaries).
            i += 1;
            while i < bytes.len() && !src.is_char_boundary(i) {
                i += 1;
            }
            TokKind::Unknown
        };
        toks.push(Token {
            kind,
            start: start as u32,
            end: i as u32,
            nl_before: nl,
        });
        nl = false;
    }
    errors
}

/// Decimal, hex (`0x`), binary (`0b`), float bits (`0f`/`0F`/`0d`/`0D`) and
/// decimal floats (`1.5e-3`), each with an optional `U` suffix.
fn lex_number(bytes: &[u8], mut i: usize) -> usize {
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
