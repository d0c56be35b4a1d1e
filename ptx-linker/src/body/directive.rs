//! A body's statements that start with a directive, read through the
//! token cursor ([`statement_directive`]): declarations (`.reg`, `.shared`,
//! `.local`, `.param`, ...), `.loc`, `.calltargets`, `.branchtargets`, and
//! the linkage directives a body may not hold.

use super::branches::Branch;
use super::scopes::declared_twice;
use super::scopes::{Kind, Scopes, SharedGenerated, Use};
use crate::ast::{Linkage, LocFix, Name, Space};
use crate::diagnostic::{Diagnostic, Span};
use crate::lex::{int_value, TokKind};
use crate::parse::{parse_var, Cursor, Declared};

/// Where a body's declarations and references are recorded.
pub(super) struct Decls<'a, 'src> {
    pub(super) scopes: &'a mut Scopes<'src>,
    /// The depth of the block the statement is in.
    pub(super) depth: u32,
    pub(super) refs: &'a mut Vec<Name<'src>>,
    pub(super) shared: &'a mut Vec<(u64, u32)>,
}

/// A statement that starts with a directive: declarations, `.loc`,
/// `.pragma`, `.callprototype`, `.calltargets`.
pub(super) fn statement_directive<'src>(
    c: &mut Cursor<'_, 'src>,
    d: &'src str,
    decls: Decls<'_, 'src>,
    locs: &mut Vec<LocFix>,
) {
    let Decls {
        scopes,
        depth,
        refs,
        shared,
    } = decls;
    c.pos += 1;
    match d {
        ".loc" => {
            let mut fix = LocFix {
                file_index: [None, None],
                extra: None,
            };
            if let Some(t) = c
                .peek()
                .filter(|t| t.kind == TokKind::Number && !t.nl_before)
            {
                if let Some(v) = int_value(c.text(t)) {
                    fix.file_index[0] = Some((c.span(t), v as u32));
                }
            }
            let mut extra_start = None;
            let mut end = 0;
            while let Some(t) = c.peek() {
                if t.nl_before || t.is(b'}') {
                    break;
                }
                c.pos += 1;
                if t.is(b';') {
                    break;
                }
                end = t.end;
                if t.is(b',') && extra_start.is_none() {
                    extra_start = Some(t.start);
                }
                if t.kind == TokKind::Ident && c.text(t) == "inlined_at" {
                    if let Some(n) = c.peek().filter(|n| n.kind == TokKind::Number) {
                        if let Some(v) = int_value(c.text(n)) {
                            fix.file_index[1] = Some((c.span(n), v as u32));
                        }
                    }
                }
            }
            if let Some(s) = extra_start {
                fix.extra = Some(Span {
                    file: c.file,
                    start: s,
                    end,
                });
            }
            locs.push(fix);
        }
        ".shared" => {
            for Declared {
                var: v,
                refs: init_refs,
                count,
            } in parse_var(c, Space::Shared, Linkage::Local)
            {
                for n in init_refs {
                    scopes.use_name(n, refs, Use::Init);
                }
                // An oversized array has been reported by `parse_var`.
                let (size, align) = (v.size_bytes().unwrap_or(u64::MAX), v.align_bytes());
                let twice = match count {
                    None => {
                        shared.push((size, align));
                        if v.name.text.starts_with('%') {
                            scopes.declare_percent(v.name.text, None, depth)
                        } else {
                            scopes.declare_var(v.name.text, depth)
                        }
                    }
                    // Sized when the scan ends, by the names used.
                    Some(n) => {
                        let index = scopes.shared_generated.len();
                        scopes.shared_generated.push(SharedGenerated {
                            slot: shared.len(),
                            size,
                            align,
                            used: Vec::new(),
                        });
                        shared.push((size, align));
                        if v.name.text.starts_with('%') {
                            scopes.declare_percent(v.name.text, Some(n), depth)
                        } else {
                            scopes.declare_generated(v.name.text, n, depth, Some(index))
                        }
                    }
                };
                if twice {
                    c.errors
                        .push(declared_twice(v.name.span, v.name.text, count.is_some()));
                }
            }
        }
        ".reg" | ".local" | ".param" | ".const" | ".global" | ".tex" | ".sreg" => {
            // Declarations: every identifier before `=` is declared here.
            let mut in_init = false;
            while let Some(t) = c.peek() {
                if t.is(b'}') && !in_init {
                    break;
                }
                c.pos += 1;
                if t.is(b';') {
                    break;
                }
                if t.is(b'=') {
                    in_init = true;
                }
                if t.kind == TokKind::Ident {
                    let text = c.text(t);
                    if in_init {
                        scopes.use_name(c.name(t), refs, Use::Init);
                    } else {
                        let count = generated_count(c);
                        // `%`-names are never references: they are tracked
                        // apart, only for the duplicate check.
                        let twice = match (text.starts_with('%'), count) {
                            (true, count) => scopes.declare_percent(text, count, depth),
                            (false, Some(n)) => scopes.declare_generated(text, n, depth, None),
                            (false, None) => scopes.declare_var(text, depth),
                        };
                        if twice {
                            c.errors
                                .push(declared_twice(c.span(t), text, count.is_some()));
                        }
                    }
                }
            }
        }
        ".extern" | ".visible" | ".weak" | ".common" => {
            // ptxas accepts no linkage directive inside a function body; a
            // dynamic shared-memory array belongs at module scope.
            let span = c.span(c.toks[c.pos - 1]);
            c.errors.push(
                Diagnostic::error(span, format!("`{d}` is not allowed inside a function body"))
                    .with_help("declare it at module scope, e.g. `.extern .shared .align 16 .b8 name[];` before the function"),
            );
            while let Some(t) = c.peek() {
                if t.is(b'}') {
                    break;
                }
                c.pos += 1;
                if t.is(b';') {
                    break;
                }
                if t.kind == TokKind::Ident {
                    scopes.declare(c.text(t), depth, Kind::Var);
                }
            }
        }
        ".calltargets" => {
            while let Some(t) = c.peek() {
                if t.is(b'}') {
                    break;
                }
                c.pos += 1;
                if t.is(b';') {
                    break;
                }
                if t.kind == TokKind::Ident {
                    scopes.use_name(c.name(t), refs, Use::CallTargets);
                }
            }
        }
        ".branchtargets" => {
            // Labels in scope, looked for as `bra` targets are; the list's
            // own label is one while the list is read (ptxas takes it).
            let own = std::mem::take(&mut scopes.own_label);
            while let Some(t) = c.peek() {
                if t.is(b'}') {
                    break;
                }
                c.pos += 1;
                if t.is(b';') {
                    break;
                }
                if t.kind == TokKind::Ident && c.text(t) != own {
                    scopes.branches.push(Branch {
                        name: c.name(t),
                        entry: true,
                        nested: false,
                    });
                }
            }
        }
        _ => {
            // `.pragma`, `.callprototype`, `.maxnreg`, ...: nothing to record.
            while let Some(t) = c.peek() {
                if t.is(b'}') {
                    break;
                }
                c.pos += 1;
                if t.is(b';') {
                    break;
                }
            }
        }
    }
}

/// `<N>` at the cursor (after a declared name): `N`, consuming it.
fn generated_count(c: &mut Cursor<'_, '_>) -> Option<u32> {
    let (lt, n, gt) = (c.peek()?, c.peek_at(1)?, c.peek_at(2)?);
    if !lt.is(b'<') || n.kind != TokKind::Number || !gt.is(b'>') {
        return None;
    }
    let n = u32::try_from(int_value(c.text(n))?).ok()?;
    c.pos += 3;
    Some(n)
}
