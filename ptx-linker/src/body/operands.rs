//! Whether a statement's operands are plain ([`plain_operands`]): the
//! byte classes ([`stops_at`], [`is_glue`]) and the search for the first
//! byte the scan must look at ([`first_stop`]), 32 bytes at a time with
//! AVX2 ([`crate::scan32`]), 16 with SSE2 ([`crate::scan16`]) or one by
//! one. **The three give identical results**; the tests compare them.

use super::opcode::word;
use super::scopes::{Scopes, Use};
use crate::ast::Name;
use crate::diagnostic::Span;
use crate::lex::{ident_end, is_ident_char};

/// When the rest of a statement, from `at` (just after its opcode), is
/// glued qualifiers (`.lo.s32`) and then operands in which the scan would do
/// nothing: the index of the statement's `;` and whether a qualifier is
/// `.f64`. Otherwise `None`, and the scan reads the statement token by token.
///
/// "Nothing to do" means no byte that ends a statement or a block, opens a
/// block, a comment or a string, starts a label, a guard, a directive or a
/// `::` qualifier (`{ } ; : @ . / "`, control bytes, non-ASCII), and no
/// identifier that may name a symbol: a letter, `_` or `$` that starts a
/// token, i.e. that follows no letter, digit, `_`, `$` or `%` (the rest of a
/// `%r1` or of a number `0f3F800000` is no start: [`crate::lex::lex_number`] takes every
/// identifier byte glued to a number). (A `bra` goes to [`super::plain::branch_target`]
/// instead.) The operands are classified 16 bytes at a time ([`first_stop`]), without a branch per byte
/// (SSE2 on x86-64: [`crate::scan16`]).
#[inline]
pub(super) fn plain_operands(bytes: &[u8], at: usize) -> Option<Plain> {
    if crate::scan32::available() {
        plain_operands_in::<true>(bytes, at)
    } else {
        plain_operands_in::<false>(bytes, at)
    }
}

/// [`plain_operands`], with the AVX2 pass when `AVX2` (which the caller
/// has checked: `crate::scan32::available()`).
#[inline(always)]
pub(super) fn plain_operands_in<const AVX2: bool>(bytes: &[u8], at: usize) -> Option<Plain> {
    if AVX2 {
        use crate::scan32::Operands;
        // SAFETY: the caller checked that the CPU has AVX2.
        match unsafe { crate::scan32::operands(bytes, at) } {
            Operands::Plain(semi, f64) => return Some(Plain { semi, f64 }),
            Operands::NotPlain => return None,
            Operands::From(from, f64) => {
                let semi = first_stop(bytes, from)?;
                return (bytes[semi] == b';').then_some(Plain { semi, f64 });
            }
            Operands::Unknown => {}
        }
    }
    plain_operands_16(bytes, at).map(|(semi, f64)| Plain { semi, f64 })
}

/// The names among a statement's operands (start, end), at most 4.
#[derive(Debug, Default)]
pub(super) struct Names {
    pub(super) found: [(usize, usize); 4],
    pub(super) len: usize,
}

impl Names {
    /// The statement (its opcode at `op_start`) is read: its names are
    /// uses, in order.
    pub(super) fn use_all<'src>(
        &self,
        src: &'src str,
        file: crate::diagnostic::FileId,
        scopes: &mut Scopes<'src>,
        refs: &mut Vec<Name<'src>>,
        op_start: usize,
    ) {
        for &(start, end) in &self.found[..self.len] {
            let name = Name {
                text: src.get(start..end).unwrap_or(""),
                span: Span::new(file, start, end),
            };
            scopes.use_name(name, refs, Use::Operand(op_start));
        }
    }
}

/// [`plain_operands`] outside `bra` for operands that hold names (at most
/// 4, listed in `names`): each name is passed as the token-by-token scan
/// passes an identifier, and the operands between names must be plain.
/// `None` when they are not, or hold more names.
#[inline(never)]
pub(super) fn named_operands(bytes: &[u8], at: usize, names: &mut Names) -> Option<Plain> {
    let (mut at, f64) = qualifiers_end(bytes, at);
    loop {
        let stop = first_stop(bytes, at)?;
        match bytes[stop] {
            b';' => return Some(Plain { semi: stop, f64 }),
            b if OPERAND[b as usize] & O_LETTER != 0 && names.len < names.found.len() => {
                let end = ident_end(bytes, stop + 1);
                names.found[names.len] = (stop, end);
                names.len += 1;
                at = end;
            }
            _ => return None,
        }
    }
}

/// The end of the qualifiers glued on at `at` (`.lo.s32`), and whether one
/// of them is `.f64`.
#[inline]
fn qualifiers_end(bytes: &[u8], mut at: usize) -> (usize, bool) {
    let mut f64 = false;
    while bytes.get(at) == Some(&b'.') && bytes.get(at + 1).is_some_and(|&n| is_ident_char(n)) {
        let end = ident_end(bytes, at + 1);
        f64 |= word(bytes, at, end) == Some(u64::from_le_bytes(*b".f64\0\0\0\0"));
        at = end;
    }
    (at, f64)
}

/// What [`plain_operands`] found.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Plain {
    /// The statement's `;`.
    pub(super) semi: usize,
    /// Whether a qualifier is `.f64`.
    pub(super) f64: bool,
}

/// [`plain_operands`] without AVX2: qualifiers one by one, then
/// [`first_stop_16`].
#[inline]
fn plain_operands_16(bytes: &[u8], at: usize) -> Option<(usize, bool)> {
    let (at, f64) = qualifiers_end(bytes, at);
    let stop = first_stop_16(bytes, at)?;
    (bytes[stop] == b';').then_some((stop, f64))
}

/// [`OPERAND`]: a byte the fast operand scan must stop at.
const O_STOP: u8 = 1;
/// [`OPERAND`]: a letter, `_` or `$` (starts a name unless glued on).
const O_LETTER: u8 = 2;
/// [`OPERAND`]: a byte after which a letter is glued on (letters, digits,
/// `_`, `$`, `%`).
const O_GLUE: u8 = 4;

/// `OPERAND[b]`: `b`'s classes for [`plain_operands`].
static OPERAND: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let letter = c.is_ascii_alphabetic() || c == b'_' || c == b'$';
        let stop = matches!(c, b'{' | b'}' | b';' | b':' | b'@' | b'.' | b'/' | b'"')
            || (c < 0x20 && !crate::lex::is_blank(c))
            || c >= 0x7f;
        t[b] = (stop as u8) * O_STOP
            + (letter as u8) * O_LETTER
            + ((letter || c.is_ascii_digit() || c == b'%') as u8) * O_GLUE;
        b += 1;
    }
    t
};

/// Whether the fast operand scan stops at byte `b`, preceded by `before`
/// (a stop byte, or a name that starts here).
#[inline]
pub(crate) fn stops_at(b: u8, before: u8) -> bool {
    let (k, p) = (OPERAND[b as usize], OPERAND[before as usize]);
    k & O_STOP != 0 || (k & O_LETTER != 0 && p & O_GLUE == 0)
}

/// Whether a letter after `b` is glued on (it continues `b`'s token).
#[inline]
pub(crate) fn is_glue(b: u8) -> bool {
    OPERAND[b as usize] & O_GLUE != 0
}

/// The first index from `at` (`at > 0`) where [`stops_at`] holds; `None`
/// at the end of input. 32 bytes at a time with AVX2 where the CPU has it
/// ([`crate::scan32`]), then 16 at a time with SSE2, then byte by byte:
/// all three give the same answer.
#[inline]
pub(super) fn first_stop(bytes: &[u8], mut at: usize) -> Option<usize> {
    if crate::scan32::available() {
        // SAFETY: `available` checked that the CPU has AVX2.
        match unsafe { crate::scan32::first_stop(bytes, at) } {
            crate::scan32::Found::At(i) => return Some(i),
            crate::scan32::Found::Before(i) => at = i,
        }
    }
    first_stop_16(bytes, at)
}

/// [`first_stop`] without AVX2: SSE2 (on x86-64), then byte by byte.
#[inline]
fn first_stop_16(bytes: &[u8], mut at: usize) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        while at + 16 <= bytes.len() {
            let mask = crate::scan16::operand_stops(bytes, at);
            if mask != 0 {
                return Some(at + mask.trailing_zeros() as usize);
            }
            at += 16;
        }
    }
    first_stop_scalar(bytes, at)
}

/// [`first_stop`] byte by byte.
#[inline]
fn first_stop_scalar(bytes: &[u8], mut at: usize) -> Option<usize> {
    while let Some(&b) = bytes.get(at) {
        if stops_at(b, bytes[at - 1]) {
            return Some(at);
        }
        at += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    /// [`super::plain_operands`] with AVX2 (where the CPU has it) and
    /// without agree on random statement tails: qualifiers (`.f64` among
    /// them, `..`, a trailing `.`), operands with names, stops anywhere.
    #[test]
    fn the_avx2_operand_pass_agrees_with_the_sse2_one() {
        const PIECES: &[&str] = &[
            ".f64", ".f6", ".f644", ".lo", ".s32", ".", "..", " ", "\t", "%r1", ", ", "x", "_a",
            "$b", "9", "0f3F80", ";", ":", "{", "}", "@", "/", "\"", "[", "]", "+", "\n", "f64",
            ".u64", "\u{80}",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..3000 {
            let n = 1 + (next() % 16) as usize;
            let mut text = String::from("mad");
            for _ in 0..n {
                text.push_str(PIECES[(next() >> 8) as usize % PIECES.len()]);
            }
            let bytes = text.as_bytes();
            for at in 1..=bytes.len() {
                let fast = super::plain_operands(bytes, at);
                assert_eq!(
                    fast.as_ref().map(|p| (p.semi, p.f64)),
                    super::plain_operands_16(bytes, at),
                    "{text:?} at {at}"
                );
            }
        }
    }

    /// The AVX2, SSE2 and scalar operand scans find the same stop on random
    /// texts of the bytes they classify (and some others), from every start,
    /// with and without names.
    #[test]
    fn the_avx2_sse2_and_scalar_operand_scans_agree() {
        const ALPHABET: &[u8] =
            b" \t\n\r\x0b\x0c\x1a\x00\x1f\x7f\x80\xff%$_azAZ09gG,[]()+-!{};:@./\"";
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..400 {
            let len = 1 + (next() % 120) as usize;
            // Mostly operand bytes, so that stops are sometimes far away.
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    let r = next();
                    if round % 2 == 0 && r % 8 != 0 {
                        b" %r1,"[(r >> 8) as usize % 5]
                    } else {
                        ALPHABET[(r >> 8) as usize % ALPHABET.len()]
                    }
                })
                .collect();
            for at in 1..=len {
                let scalar = super::first_stop_scalar(&text, at);
                assert_eq!(super::first_stop_16(&text, at), scalar);
                assert_eq!(super::first_stop(&text, at), scalar, "{text:?} {at}");
            }
        }
    }
}
