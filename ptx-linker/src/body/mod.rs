//! Function bodies: kept as text, scanned for what the linker must know.
//!
//! The scan finds (1) identifiers that may name module-scope symbols (call
//! targets, `mov`/`cvta` address-of, `[sym+off]`, `.calltargets`), leaving out
//! opcodes and their `::` qualifiers (`.shared::cta`), branch targets and
//! every use of a name the function declares at that point; (2) `.loc` directives, whose file indices are renumbered on
//! merge; (3) function-scope `.shared` allocations for the shared-memory
//! budget.
//!
//! **Scopes**, as ptxas 13.5 applies them (checked case by case): a name
//! the body declares (`.reg`, `.local`, `.shared`, `.param`, a
//! label, or a name a parameterized declaration `x<4>` generates) is visible
//! from its declaration to the end of the `{ }` block that holds it; the
//! function's parameters are visible in the whole body. Before its
//! declaration, and after its block closes, the same name means the
//! module-scope symbol, so that use is a reference (and is renamed with the
//! symbol). An inner declaration hides an outer one until its block ends.
//! `bra` takes only a label in scope, which may come later (a forward
//! branch); its operand is never a reference.
//!
//! **Checks**, as ptxas 13.5 makes them: a name declared twice in one block
//! (a label: "Duplicate definition of label"; a variable, `%` registers and
//! the names of `x<N>` included, or a parameter in the outermost block:
//! "Duplicate definition of variable"; a label and an `x<N>` do not clash,
//! and an `x<N>` after the block's names `x` and digits follows ptxas's own
//! rule, [`Scopes::generated_clash`]: `x0; x<4>` and `x01; x<4>` pass),
//! a label used where ptxas takes no label, a guard included
//! ([`check_label_uses`]), and a `bra` whose target is no label in scope
//! ("Unknown symbol": none in this block or an enclosing one) or a name of
//! another kind ("Label expected for argument 0 of instruction 'bra'": a
//! variable, a parameter, a `.branchtargets` or `.callprototype` label).
//! ptxas looks a target up twice: at the branch (a variable, parameter or
//! `.branchtargets` label in scope there is refused, even if the block
//! declares a label of that name later) and when the branch's block closes,
//! as the name is declared then (a label of an enclosing block is found
//! there even if an enclosing block declares a variable of that name after
//! the nested block; a name declared nowhere yet is looked up again when
//! the enclosing block closes).
//! Targets are collected as the scan goes and looked for when their block
//! closes ([`Scopes::close_branches`]) or the body ends, among the outermost
//! block's labels in a small table ([`names::LabelTable`]) that the label
//! declarations fill: no hash map per label or target. (A parameter list
//! that repeats a name is refused by the parser.)
//! `.branchtargets` entries are checked the same way ("Illegal branch
//! target, label expected" for a variable, a parameter, or a
//! `.branchtargets` or `.callprototype` label other than the list's own).
//! A target found among labels declared after it (a forward branch) is
//! noted: a module-scope symbol of its name hides it from ptxas
//! ([`crate::labels`]).
//! A target that an `x<N>` (or `%x<N>`) in scope generates is the
//! register for ptxas, over a label of that block or an enclosing one
//! (`.reg .b32 x<4>; x1: bra x1;`: "Label expected"), and when a block
//! closes ptxas does not find a label that the block's `x<N>` generates,
//! unless the label came before the branch in its own block (`bra x1; x1:
//! .reg .b32 x<4>;`: "Unknown symbol"); [`Scopes::generated_at_branch`].
//! A `%` guard is looked up only in a body that has `%` labels.
//! Known gaps, which ptxas refuses and the scan passes: a `%` label (`%L1:`)
//! used as an operand (`mov.u64 %rd1, %L1;`, "Arguments mismatch"), or as a
//! guard before its declaration (`@%L1 bra L2; %L1:`): `%` operands are
//! never looked up, nor are `%` registers checked to be declared.
//!
//! **Where things are.** This file holds `scan`, the loop over one
//! body's bytes, and its small helpers. The rest, one idea per file:
//! `scopes.rs` (the names each block declares, and whether a use is a
//! reference), `names.rs` (the cheap name hash and the outermost block's
//! label table), `generated.rs` (the names an `x<N>` generates, as ptxas
//! matches them), `branches.rs` (finding `bra` and `.branchtargets`
//! targets when their block closes), `label_uses.rs` (a label used where
//! ptxas takes none), `directive.rs` (statements that start with a
//! directive: declarations, `.loc`, `.branchtargets`, ...), `plain.rs`
//! (runs of plain statements and `.reg` lines of `%` names, passed without
//! tokens), `operands.rs` (the byte classes and masks that tell a plain
//! operand list: AVX2, SSE2 or a scalar loop, with identical results) and
//! `opcode.rs` (the few opcodes the scan tells apart). Tests of the whole
//! scan are in `tests.rs` and `tests/checks.rs`.

mod branches;
mod directive;
mod generated;
mod label_uses;
mod names;
mod opcode;
pub(crate) mod operands;
mod plain;
mod scopes;

pub(crate) use generated::{generates, names_nothing};
pub(crate) use names::name_hash;
pub(crate) use scopes::{PercentSymbols, Scopes};

use crate::ast::{Body, LocFix, Name};
use crate::diagnostic::{Diagnostic, Span};
use crate::labels;
use crate::lex::{
    ident_end, is_ident_char, lex_number, Lexer, TokKind, CLASS, C_DIGIT, C_DOT, C_NL, C_OTHER,
    C_QUOTE, C_SLASH, C_SPACE, IDENT_START,
};
use crate::parse::Cursor;
use branches::Branch;
use directive::{statement_directive, Decls};
use generated::shared_generated_bytes;
use label_uses::check_label_uses;
use opcode::Opcode;
use operands::{named_operands, plain_operands, Names, Plain};
use plain::{branch_target, declare_percent_regs, percent_regs, plain_statements, PlainFlags};
use scopes::{Kind, Percent, Use};

/// What [`scan`] found.
pub(crate) struct Scanned {
    pub(crate) body: Body,
    pub(crate) locs: Vec<LocFix>,
}

/// Scans a body starting at its `{`; leaves the cursor after the matching `}`.
///
/// Fused with lexing: the body's bytes are read here, token by token, with
/// no token list; only a statement that starts with a directive is handed
/// to the token cursor ([`statement_directive`]). Each token is treated as
/// the token-based scan treated it.
pub(crate) fn scan<'src>(
    c: &mut Cursor<'_, 'src>,
    params: impl Iterator<Item = &'src str>,
    refs: &mut Vec<Name<'src>>,
) -> Scanned {
    let open = c.here();
    c.restart_at(open.end as usize);
    let (src, file) = (c.src, c.file);
    let bytes = src.as_bytes();
    let mut scopes = c.scopes.take().unwrap_or_default();
    scopes.clear();
    scopes.module_percent.clone_from(&c.percent_symbols);
    // With module-scope `%` symbols, `%` operands may be references, which
    // the plain-statement passes do not look at.
    let token_by_token = !scopes.module_percent.is_empty();
    for p in params {
        scopes.declare(p, 0, Kind::Var);
        if p.starts_with('%') {
            scopes.percent.push(Percent {
                name: p,
                count: None,
            });
        }
    }
    // Collected in a buffer kept in `scopes`, copied out once at its size:
    // no growth and no shrink per body.
    let mut locs = Vec::new();
    let mut shared = Vec::new();
    let mut unsynced_warp_op = None;
    let mut body_param = None;
    let mut texture_op = false;
    let mut f64_op = false;
    let mut depth = 1u32;
    let mut vec_depth = 0usize;
    let mut stmt_start = true;
    // In a `bra` statement: its operand is a label, never a reference.
    let mut branch = false;
    // The end of the last token.
    let mut prev_end = open.end as usize;
    // The last token was a `:` ending here (`usize::MAX`: it was not).
    let mut colon_end = usize::MAX;
    // The last two tokens were adjacent `:`s: an identifier after them is a
    // qualifier (`shared::cta`).
    let mut colons = false;
    // The start of the statement's opcode (for a label among its operands).
    let mut op_start = open.start as usize;
    loop {
        // Blanks and punctuation the scan ignores, in one tight loop.
        let mut i = c.lexer.at;
        let mut seen = 0u8;
        while let Some(&b) = bytes.get(i) {
            let k = SKIP[b as usize];
            if k == 0 {
                break;
            }
            seen |= k;
            i += 1;
        }
        if seen & SKIP_PUNCT != 0 {
            colons = false;
            colon_end = usize::MAX;
        }
        c.lexer.at = i;
        if bytes.get(i) == Some(&b'/') {
            c.lexer.skip_blanks(); // comments
        }
        let start = c.lexer.at;
        let Some(&b) = bytes.get(start) else {
            // The end of the last token (skipped punctuation included).
            prev_end = last_token_end(&c.lexer, prev_end);
            c.errors.push(
                Diagnostic::error(open, "unterminated function body")
                    .with_label("this `{` is never closed")
                    .with_help("add the missing `}`"),
            );
            break;
        };
        let qualifier = std::mem::replace(&mut colons, false);
        let after_colon = std::mem::replace(&mut colon_end, usize::MAX);
        let end = if IDENT_START[b as usize] {
            let end = ident_end(bytes, start + 1);
            c.lexer.at = end;
            c.lexer.nl = false;
            if stmt_start {
                // A label when a `:` follows, blanks and comments between
                // (looked for only when one of those follows).
                if matches!(
                    CLASS[bytes.get(end).map_or(0, |&n| n as usize)],
                    C_SPACE | C_NL | C_SLASH
                ) {
                    c.lexer.skip_blanks();
                }
                if bytes.get(c.lexer.at) == Some(&b':') {
                    let text = src.get(start..end).unwrap_or("");
                    // (The plain-statement run leaves `%` labels to this scan.)
                    scopes.percent_labels |= b == b'%';
                    if scopes.declare_label(text, depth) {
                        c.errors.push(
                            Diagnostic::error(
                                Span::new(file, start, end),
                                format!("`{text}` is already defined in this block"),
                            )
                            .with_label("a second definition of this name")
                            .with_help(
                                "rename one of the labels (or the variable or parameter it \
                                 repeats); ptxas refuses a duplicate definition in one block",
                            ),
                        );
                    }
                    prev_end = c.lexer.at + 1;
                    colon_end = prev_end;
                    c.lexer.at = prev_end;
                    c.lexer.nl = false;
                    continue;
                }
                stmt_start = false; // the opcode
                op_start = start;
                let op = Opcode::of(bytes, start, end);
                branch = op == Opcode::Bra;
                texture_op |= op == Opcode::Texture;
                if unsynced_warp_op.is_none() && op == Opcode::Warp && !synced(&c.lexer, src) {
                    unsynced_warp_op = Some(Span::new(file, start, end));
                }
                // Most statements' operands hold only registers, numbers,
                // punctuation and a few names: pass them in one go, and the `;`.
                let mut names = Names::default();
                let plain = if token_by_token {
                    None
                } else if branch {
                    branch_target(bytes, end).map(|(target, semi)| {
                        scopes.branches.push(Branch {
                            name: Name {
                                text: src.get(target.clone()).unwrap_or(""),
                                span: Span::new(file, target.start, target.end),
                            },
                            entry: false,
                            nested: false,
                        });
                        Plain { semi, f64: false }
                    })
                } else {
                    plain_operands(bytes, end).or_else(|| named_operands(bytes, end, &mut names))
                };
                if let Some(Plain { semi, f64 }) = plain {
                    names.use_all(src, file, &mut scopes, refs, start);
                    f64_op |= f64;
                    stmt_start = true;
                    branch = false;
                    // And the plain statements that follow, in a tight loop.
                    let run = plain_statements(
                        src,
                        semi + 1,
                        PlainFlags {
                            scopes: &mut scopes,
                            refs,
                            file,
                            depth,
                            texture_op: &mut texture_op,
                            f64_op: &mut f64_op,
                        },
                    );
                    c.lexer.at = run.at;
                    c.lexer.nl = false;
                    prev_end = run.prev_end;
                    colon_end = run.colon_end;
                    continue;
                }
            } else if branch && !qualifier {
                let text = src.get(start..end).unwrap_or("");
                scopes.branches.push(Branch {
                    name: Name {
                        text,
                        span: Span::new(file, start, end),
                    },
                    entry: false,
                    nested: false,
                });
            } else if !branch && !qualifier && b != b'%' {
                let text = src.get(start..end).unwrap_or("");
                scopes.use_name(
                    Name {
                        text,
                        span: Span::new(file, start, end),
                    },
                    refs,
                    Use::Operand(op_start),
                );
            } else if !branch && !qualifier && token_by_token {
                let text = src.get(start..end).unwrap_or("");
                if scopes.names_percent_symbol(text) {
                    refs.push(Name {
                        text,
                        span: Span::new(file, start, end),
                    });
                }
            }
            prev_end = end;
            continue;
        } else {
            match CLASS[b as usize] {
                C_DOT if bytes.get(start + 1).is_some_and(|&n| is_ident_char(n)) => {
                    let end = ident_end(bytes, start + 1);
                    if stmt_start {
                        let text = src.get(start..end).unwrap_or("");
                        if depth == 1 && text == ".param" && body_param.is_none() {
                            body_param = Some(Span::new(file, start, end));
                        }
                        // `.reg` of `%` names only (as rustc writes them):
                        // nothing to record, passed without tokens.
                        if text == ".reg" {
                            if let Some(semi) = percent_regs(bytes, end) {
                                declare_percent_regs(
                                    src,
                                    file,
                                    end..semi,
                                    depth,
                                    &mut scopes,
                                    &mut c.errors,
                                );
                                prev_end = semi + 1;
                                c.restart_at(prev_end);
                                continue;
                            }
                        }
                        // A label's kind is the directive right after it.
                        if after_colon == prev_end {
                            let kind = match text {
                                ".branchtargets" => Some(Kind::BranchTargets),
                                ".callprototype" => Some(Kind::CallPrototype),
                                ".calltargets" => Some(Kind::CallTargets),
                                _ => None,
                            };
                            if let Some(kind) = kind {
                                scopes.set_label_kind(kind, depth);
                            }
                        }
                        // Through the tokens, from the directive on.
                        c.resume_tokens(prev_end);
                        c.peek();
                        statement_directive(
                            c,
                            text,
                            Decls {
                                scopes: &mut scopes,
                                depth,
                                refs,
                                shared: &mut shared,
                            },
                            &mut locs,
                        );
                        prev_end = c.prev_end() as usize;
                        c.restart_at(prev_end);
                        continue;
                    }
                    f64_op |= bytes.get(start..end) == Some(b".f64");
                    end
                }
                C_DIGIT => lex_number(bytes, start),
                C_QUOTE => c.lexer.string(start),
                C_OTHER => c.lexer.char_end(start),
                // One punctuation byte (`.` and `/` included).
                _ => {
                    match b {
                        b'{' => {
                            if stmt_start {
                                depth += 1;
                                scopes.open();
                            } else {
                                vec_depth += 1;
                            }
                        }
                        b'}' => {
                            if vec_depth > 0 {
                                vec_depth -= 1;
                            } else {
                                depth -= 1;
                                stmt_start = true;
                                branch = false;
                                if depth == 0 {
                                    prev_end = start + 1;
                                    break;
                                }
                                scopes.close(&mut c.errors);
                            }
                        }
                        b';' => {
                            stmt_start = true;
                            branch = false;
                            vec_depth = 0;
                        }
                        b':' => {
                            colons = after_colon == start;
                            colon_end = start + 1;
                        }
                        b'@' if stmt_start => {
                            // Guard `@%p` / `@!%p`: the opcode follows.
                            let mut at = start + 1;
                            c.lexer.at = at;
                            c.lexer.nl = false;
                            c.lexer.skip_blanks();
                            if bytes.get(c.lexer.at) == Some(&b'!') {
                                at = c.lexer.at + 1;
                                c.lexer.at = at;
                                c.lexer.nl = false;
                                c.lexer.skip_blanks();
                            }
                            if let Some(&n) =
                                bytes.get(c.lexer.at).filter(|&&n| IDENT_START[n as usize])
                            {
                                let from = c.lexer.at;
                                at = ident_end(bytes, from + 1);
                                c.lexer.at = at;
                                c.lexer.nl = false;
                                let name = Name {
                                    text: src.get(from..at).unwrap_or(""),
                                    span: Span::new(file, from, at),
                                };
                                if n != b'%' {
                                    // A predicate named without `%` (or a label: refused).
                                    scopes.use_name(name, refs, Use::Guard);
                                } else if scopes.percent_labels {
                                    scopes.percent_guard(name);
                                }
                            }
                            prev_end = at;
                            continue;
                        }
                        _ => {}
                    }
                    start + 1
                }
            }
        };
        c.lexer.at = end;
        c.lexer.nl = false;
        prev_end = end;
    }
    c.restart_at(prev_end);
    let end = prev_end as u32;
    let forward_start = c.forward_labels.len() as u32;
    if !scopes.branches.is_empty() {
        scopes.check_branches(&mut c.errors, &c.module_names, &mut c.forward_labels);
    }
    c.forward_labels.extend_from_slice(&scopes.forward);
    let forward_labels = forward_start..c.forward_labels.len() as u32;
    for b in &scopes.forward_suspects {
        if let Some(symbol) = crate::parse::module_declaration(c, b.name.text) {
            c.errors
                .push(labels::hidden_by_symbol(b.name, b.entry, symbol));
        }
    }
    if !scopes.label_uses.is_empty() {
        check_label_uses(src, &scopes.label_uses, &mut c.errors);
    }
    for g in &mut scopes.shared_generated {
        g.used.sort_unstable();
        g.used.dedup();
        shared[g.slot] = (
            shared_generated_bytes(g.size, g.align, g.used.len()),
            g.align,
        );
    }
    let scopes_rename_form = scopes.declares_rename_form;
    scopes.clear();
    c.scopes = Some(scopes);
    shared.shrink_to_fit();
    locs.shrink_to_fit();
    Scanned {
        body: Body {
            span: Span {
                file: open.file,
                start: open.start,
                end,
            },
            shared,
            unsynced_warp_op,
            body_param,
            texture_op,
            f64_op,
            declares_rename_form: scopes_rename_form,
            forward_labels,
        },
        locs,
    }
}

/// What every renamed symbol's new name holds: `x` becomes `x__ptxlink2`.
pub(crate) const RENAME_MARKER: &str = "__ptxlink";

/// Whether a declared `name` (or `x<N>` prefix) ends like a renamed
/// symbol's new name: [`RENAME_MARKER`], then digits or nothing. A few
/// compares per label: the scan asks it of every declaration.
#[inline]
fn rename_form(name: &str) -> bool {
    let b = name.as_bytes();
    let mut end = b.len();
    while end > 0 && b[end - 1].is_ascii_digit() {
        end -= 1;
    }
    // The marker's last byte first: most labels end `_12` and stop there.
    end >= RENAME_MARKER.len() && b[end - 1] == b'k' && b[..end].ends_with(RENAME_MARKER.as_bytes())
}

/// [`SKIP`]: a blank.
const SKIP_BLANK: u8 = 1;
/// [`SKIP`]: punctuation the scan does nothing with (it only ends a `::`).
const SKIP_PUNCT: u8 = 2;

/// `SKIP[b]`: what the scan may pass over without a look (0: nothing).
static SKIP: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if crate::lex::is_blank(c) {
            SKIP_BLANK
        } else if c.is_ascii_punctuation()
            && !matches!(
                c,
                b'{' | b'}' | b';' | b':' | b'@' | b'.' | b'/' | b'"' | b'%' | b'_' | b'$'
            )
        {
            SKIP_PUNCT
        } else {
            0
        };
        b += 1;
    }
    t
};

/// The end of the last token before the end of input, lexing on from
/// `prev_end` (the end of an earlier token).
#[cold]
fn last_token_end(lexer: &Lexer<'_>, mut prev_end: usize) -> usize {
    let mut ahead = lexer.ahead();
    ahead.rewind(prev_end);
    let mut toks = Vec::new();
    while ahead.lex_some(&mut toks) {
        prev_end = toks.last().map_or(prev_end, |t| t.end as usize);
        toks.clear();
    }
    prev_end
}

/// True when the tokens right after an opcode, up to the first that is not
/// a directive, hold `.sync` (`shfl.sync`, `vote.sync`).
fn synced(lexer: &Lexer<'_>, src: &str) -> bool {
    let mut ahead = lexer.ahead();
    let mut toks = Vec::new();
    let mut synced = false;
    loop {
        toks.clear();
        if !ahead.lex_some(&mut toks) {
            return synced;
        }
        for t in &toks {
            if t.kind != TokKind::Directive {
                return synced;
            }
            synced |= t.text(src) == ".sync";
        }
    }
}

#[cfg(test)]
mod tests;
