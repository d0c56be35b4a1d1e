//! The fast path of the scan: runs of plain statements (labels, guards,
//! `bra`, opcodes whose operands hold registers, numbers and at most four
//! names) and `.reg` lines of `%` names, passed from the bytes without
//! tokens ([`plain_statements`], [`percent_regs`]).

use super::branches::Branch;
use super::opcode::Opcode;
use super::operands::{first_stop, named_operands, plain_operands_in, Names, Plain};
use super::scopes::declared_twice;
use super::scopes::Scopes;
use crate::ast::Name;
use crate::diagnostic::{Diagnostic, Span};
use crate::lex::{ident_end, int_value, is_blank, is_ident_char, lex_number, IDENT_START};

/// Where [`plain_statements`] records what it finds.
pub(super) struct PlainFlags<'a, 'src> {
    pub(super) scopes: &'a mut Scopes<'src>,
    /// The body's references, for names among the operands.
    pub(super) refs: &'a mut Vec<Name<'src>>,
    pub(super) file: crate::diagnostic::FileId,
    /// The depth of the block the statements are in.
    pub(super) depth: u32,
    pub(super) texture_op: &'a mut bool,
    pub(super) f64_op: &'a mut bool,
}

/// Where [`plain_statements`] stopped.
pub(super) struct PlainRun {
    /// The first byte not read: the start of a statement (or of the blanks
    /// before it) that the token-by-token scan reads.
    pub(super) at: usize,
    /// The end of the last token read.
    pub(super) prev_end: usize,
    /// The end of a label's `:` when that was the last token read (else
    /// `usize::MAX`), for the scan's `::` rule.
    pub(super) colon_end: usize,
}

/// Reads statements from `at` (just after a `;`) as long as each is a label
/// (`name:`) or an opcode that the scan only needs to classify, with
/// [`super::operands::plain_operands`], optionally guarded (`@%p` / `@!%p`, no blanks
/// inside the guard): what the token-by-token scan does for them, without
/// its per-token dispatch. Stops before anything else: a brace, a
/// directive, a comment, `shfl`/`vote`, operands that hold a name, spaced
/// labels or guards.
pub(super) fn plain_statements<'src>(
    src: &'src str,
    at: usize,
    f: PlainFlags<'_, 'src>,
) -> PlainRun {
    if crate::scan32::available() {
        // SAFETY: `available` checked that the CPU has AVX2.
        unsafe { plain_statements_avx2(src, at, f) }
    } else {
        plain_statements_in::<false>(src, at, f)
    }
}

/// [`plain_statements`] compiled with AVX2, so that the AVX2 operand pass
/// is inlined into its loop.
///
/// # Safety
///
/// The CPU must support AVX2 ([`crate::scan32::available`]).
#[target_feature(enable = "avx2")]
unsafe fn plain_statements_avx2<'src>(
    src: &'src str,
    at: usize,
    f: PlainFlags<'_, 'src>,
) -> PlainRun {
    plain_statements_in::<true>(src, at, f)
}

/// [`plain_statements`], with the AVX2 operand pass when `AVX2` (which the
/// caller has checked).
#[inline(always)]
fn plain_statements_in<'src, const AVX2: bool>(
    src: &'src str,
    mut at: usize,
    f: PlainFlags<'_, 'src>,
) -> PlainRun {
    let bytes = src.as_bytes();
    let mut run = PlainRun {
        at,
        prev_end: at,
        colon_end: usize::MAX,
    };
    if f.scopes.percent_labels {
        // A `%` guard may name a `%` label: the token scan checks it (a rare
        // body; the run itself declares no `%` label).
        return run;
    }
    loop {
        at = statement_start(bytes, at);
        let mut start = at;
        let Some(&b) = bytes.get(start) else {
            return run;
        };
        if b == b'@' {
            // A guard: `@%p1` or `@!%p1`, then a blank.
            let mut g = start + 1;
            if bytes.get(g) == Some(&b'!') {
                g += 1;
            }
            if bytes.get(g) != Some(&b'%') {
                return run;
            }
            g = ident_end(bytes, g + 1);
            if !bytes.get(g).is_some_and(|&n| n == b' ' || n == b'\t') {
                return run;
            }
            start = g + 1;
            while bytes.get(start).is_some_and(|&n| n == b' ' || n == b'\t') {
                start += 1;
            }
        }
        if !bytes
            .get(start)
            .is_some_and(|&n| IDENT_START[n as usize] && n != b'%')
        {
            return run;
        }
        let end = ident_end(bytes, start + 1);
        if start == at && bytes.get(end) == Some(&b':') {
            // A label (a second definition goes to the token-by-token scan,
            // which reports it).
            let text = src.get(start..end).unwrap_or("");
            if f.scopes.declare_label(text, f.depth) {
                return run;
            }
            at = end + 1;
            run = PlainRun {
                at,
                prev_end: at,
                colon_end: at,
            };
            continue;
        }
        if !matches!(bytes.get(end), Some(b'.' | b' ' | b'\t' | b';')) {
            return run; // perhaps a spaced label
        }
        let op = Opcode::of(bytes, start, end);
        if op == Opcode::Warp {
            return run;
        }
        if op == Opcode::Bra {
            // `bra[.uni] target;`: the target is looked for when its block ends.
            let Some((target, semi)) = branch_target(bytes, end) else {
                return run;
            };
            f.scopes.branches.push(Branch {
                name: Name {
                    text: src.get(target.clone()).unwrap_or(""),
                    span: Span::new(f.file, target.start, target.end),
                },
                entry: false,
                nested: false,
            });
            at = semi + 1;
            run = PlainRun {
                at,
                prev_end: at,
                colon_end: usize::MAX,
            };
            continue;
        }
        let mut names = Names::default();
        let plain = match plain_operands_in::<AVX2>(bytes, end) {
            None => named_operands(bytes, end, &mut names),
            plain => plain,
        };
        let Some(Plain { semi, f64 }) = plain else {
            return run;
        };
        names.use_all(src, f.file, f.scopes, f.refs, start);
        *f.texture_op |= op == Opcode::Texture;
        *f.f64_op |= f64;
        at = semi + 1;
        run = PlainRun {
            at,
            prev_end: at,
            colon_end: usize::MAX,
        };
    }
}

/// [`first_non_blank`], found first in the layout compilers write between
/// statements: a line feed, perhaps a tab. Those are three loads that do not
/// wait for each other, where the 16-byte mask is a chain of steps that the
/// rest of the next statement would wait for (about a sixth of a plain
/// statement's time).
#[inline(always)]
fn statement_start(bytes: &[u8], at: usize) -> usize {
    let blank = |i: usize| bytes.get(i).is_none_or(|&b| is_blank(b));
    let newline = bytes.get(at) == Some(&b'\n');
    if newline && !blank(at + 1) {
        at + 1
    } else if newline && bytes.get(at + 1) == Some(&b'\t') && !blank(at + 2) {
        at + 2
    } else {
        first_non_blank(bytes, at)
    }
}

/// The first byte at or after `at` that is not blank (` `, `\t`..`\r`), or
/// the end of `bytes`: 16 bytes at a time where that is possible.
#[inline(always)]
fn first_non_blank(bytes: &[u8], mut at: usize) -> usize {
    loop {
        match crate::scan16::non_blank(bytes, at) {
            Some(0) => at += 16,
            Some(mask) => return at + mask.trailing_zeros() as usize,
            None => {
                while bytes.get(at).is_some_and(|&b| is_blank(b)) {
                    at += 1;
                }
                return at;
            }
        }
    }
}

/// The target of a `bra` whose opcode ends at `at` and the index of the
/// statement's `;`, when the rest is plain: qualifiers (`.uni`), blanks,
/// one name, blanks, `;`. `None` otherwise (the token scan reads it).
#[inline(always)]
pub(super) fn branch_target(
    bytes: &[u8],
    mut at: usize,
) -> Option<(std::ops::Range<usize>, usize)> {
    while bytes.get(at) == Some(&b'.') {
        at = ident_end(bytes, at + 1);
    }
    while bytes.get(at).is_some_and(|&b| b == b' ' || b == b'\t') {
        at += 1;
    }
    if !IDENT_START[*bytes.get(at)? as usize] {
        return None;
    }
    let end = ident_end(bytes, at + 1);
    let mut semi = end;
    while bytes.get(semi).is_some_and(|&b| b == b' ' || b == b'\t') {
        semi += 1;
    }
    (bytes.get(semi) == Some(&b';')).then_some((at..end, semi))
}

/// When the rest of a `.reg` statement, from `at`, declares only `%`
/// names (`.b32 %r<40>`, `.pred %p1, %p2`), which the scan never tracks:
/// the index of its `;`. Otherwise (a name without `%`, an initializer, a
/// brace, a comment, a string, ...) `None`, and the tokens decide. Passed
/// with the operand scan ([`first_stop`] with names), directive by directive.
pub(super) fn percent_regs(bytes: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    loop {
        let stop = first_stop(bytes, at)?;
        if bytes[stop] == b';' {
            // After `=`, even `%` names are uses.
            return (!bytes[from..stop].contains(&b'=')).then_some(stop);
        }
        if bytes[stop] != b'.' || !bytes.get(stop + 1).is_some_and(|&n| is_ident_char(n)) {
            return None;
        }
        at = ident_end(bytes, stop + 1);
    }
}

/// Declares the `%` names of a `.reg` statement that [`percent_regs`]
/// passed (`range`: from after `.reg` to before its `;`), and reports a
/// name its block already declares, as ptxas does.
#[inline(never)]
pub(super) fn declare_percent_regs<'src>(
    src: &'src str,
    file: crate::diagnostic::FileId,
    range: std::ops::Range<usize>,
    depth: u32,
    scopes: &mut Scopes<'src>,
    errors: &mut Vec<Diagnostic>,
) {
    let bytes = src.as_bytes();
    let blanks = |mut at: usize| {
        while bytes.get(at).is_some_and(|&b| is_blank(b)) {
            at += 1;
        }
        at
    };
    let mut at = range.start;
    while at < range.end {
        match bytes[at] {
            // A directive (`.b32`, `.v2`).
            b'.' => at = ident_end(bytes, at + 1),
            b'%' => {
                let end = ident_end(bytes, at + 1);
                let name = src.get(at..end).unwrap_or("");
                // `<N>`, as `generated_count` reads it from tokens.
                let mut next = end;
                let mut count = None;
                let lt = blanks(end);
                if bytes.get(lt) == Some(&b'<') {
                    let n = blanks(lt + 1);
                    if bytes.get(n).is_some_and(u8::is_ascii_digit) {
                        // Decimal digits, the usual case, read here.
                        let mut n_end = n;
                        let mut v = 0u64;
                        while let Some(d) = bytes.get(n_end).filter(|d| d.is_ascii_digit()) {
                            v = v.saturating_mul(10).saturating_add(u64::from(d - b'0'));
                            n_end += 1;
                        }
                        let mut value = Some(v);
                        // Else (octal `010`, hex, a suffix) as `int_value` reads it.
                        if (bytes[n] == b'0' && n_end - n > 1)
                            || bytes
                                .get(n_end)
                                .is_some_and(|&b| is_ident_char(b) || b == b'.')
                        {
                            n_end = lex_number(bytes, n);
                            value = src.get(n..n_end).and_then(int_value);
                        }
                        let gt = blanks(n_end);
                        if bytes.get(gt) == Some(&b'>') {
                            count = value.and_then(|v| u32::try_from(v).ok());
                            if count.is_some() {
                                next = gt + 1;
                            }
                        }
                    }
                }
                if scopes.declare_percent(name, count, depth) {
                    errors.push(declared_twice(
                        Span::new(file, at, end),
                        name,
                        count.is_some(),
                    ));
                }
                at = next;
            }
            _ => at += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn statement_starts_are_the_first_non_blank_bytes() {
        // Every text of up to 5 bytes over blanks, line feeds, tabs and
        // others, from every position (the byte loop is the reference).
        let alphabet = [b'\n', b'\t', b' ', b'\r', b'\x0c', b'a', b';', b'$'];
        for len in 0..=5u32 {
            for code in 0..alphabet.len().pow(len) {
                let text: Vec<u8> = (0..len)
                    .map(|i| alphabet[code / alphabet.len().pow(i) % alphabet.len()])
                    .collect();
                for at in 0..=text.len() {
                    let mut want = at;
                    while text
                        .get(want)
                        .is_some_and(|&b| b == b' ' || (9..=13).contains(&b))
                    {
                        want += 1;
                    }
                    assert_eq!(
                        super::statement_start(&text, at),
                        want,
                        "{text:?} from {at}"
                    );
                    assert_eq!(
                        super::first_non_blank(&text, at),
                        want,
                        "{text:?} from {at}"
                    );
                }
            }
        }
    }
}
