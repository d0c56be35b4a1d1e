//! Function bodies: kept as text, scanned for what the linker must know.
//!
//! The scan finds (1) identifiers that may name module-scope symbols (call
//! targets, `mov`/`cvta` address-of, `[sym+off]`, `.calltargets`), leaving out
//! opcodes and every name declared in the function (`.reg`, `.local`,
//! `.shared`, `.param`, labels, parameters, and the names a parameterized
//! declaration `x<4>` generates); (2) `.loc` directives, whose file
//! indices are renumbered on merge; (3) function-scope `.shared` allocations
//! for the shared-memory budget.

use rustc_hash::FxHashSet as HashSet;

use crate::ast::Linkage;
use crate::ast::{Body, LocFix, Name, Space};
use crate::diagnostic::{Diagnostic, Span};
use crate::lex::{int_value, TokKind};
use crate::parse::{parse_var, Cursor, Declared};

/// What [`scan`] found.
pub(crate) struct Scanned<'src> {
    pub(crate) body: Body,
    pub(crate) refs: Vec<Name<'src>>,
    pub(crate) locs: Vec<LocFix>,
}

/// Scans a body starting at its `{`; leaves the cursor after the matching `}`.
pub(crate) fn scan<'src>(c: &mut Cursor<'_, 'src>, params: &[&'src str]) -> Scanned<'src> {
    let open = c.here();
    c.pos += 1;
    let mut locals: HashSet<&'src str> = std::mem::take(&mut c.locals);
    locals.clear();
    locals.extend(params.iter().copied());
    let mut candidates: Vec<Name<'src>> = Vec::new();
    // Function-scope `x<N>` declarations: (prefix, N).
    let mut generated: Vec<(&'src str, u32)> = Vec::new();
    let mut locs = Vec::new();
    let mut shared = Vec::new();
    let mut unsynced_warp_op = None;
    let mut body_param = None;
    let mut texture_op = false;
    let mut f64_op = false;
    let mut depth = 1usize;
    let mut vec_depth = 0usize;
    let mut stmt_start = true;
    loop {
        let Some(t) = c.peek() else {
            c.errors.push(
                Diagnostic::error(open, "unterminated function body")
                    .with_label("this `{` is never closed")
                    .with_help("add the missing `}`"),
            );
            break;
        };
        match t.kind {
            TokKind::Punct(b'{') => {
                c.pos += 1;
                if stmt_start {
                    depth += 1;
                } else {
                    vec_depth += 1;
                }
            }
            TokKind::Punct(b'}') => {
                c.pos += 1;
                if vec_depth > 0 {
                    vec_depth -= 1;
                } else {
                    depth -= 1;
                    stmt_start = true;
                    if depth == 0 {
                        break;
                    }
                }
            }
            TokKind::Punct(b';') => {
                c.pos += 1;
                stmt_start = true;
                vec_depth = 0;
            }
            TokKind::Ident if stmt_start => {
                let text = c.text(t);
                c.pos += 1;
                if c.peek().is_some_and(|n| n.is(b':')) {
                    locals.insert(text); // a label
                    c.pos += 1;
                } else {
                    stmt_start = false; // the opcode
                    texture_op |= matches!(
                        text,
                        "tex" | "tld4" | "txq" | "suld" | "sust" | "sured" | "suq"
                    );
                    if unsynced_warp_op.is_none() && matches!(text, "shfl" | "vote") {
                        let mut synced = false;
                        let mut i = c.pos;
                        while let Some(m) = c.toks.get(i).filter(|m| m.kind == TokKind::Directive) {
                            synced |= m.text(c.src) == ".sync";
                            i += 1;
                        }
                        if !synced {
                            unsynced_warp_op = Some(c.span(t));
                        }
                    }
                }
            }
            TokKind::Punct(b'@') if stmt_start => {
                // Guard `@%p` / `@!%p`: the opcode follows.
                c.pos += 1;
                c.eat_punct(b'!');
                if c.peek().is_some_and(|n| n.kind == TokKind::Ident) {
                    c.pos += 1;
                }
            }
            TokKind::Directive if stmt_start => {
                let text = c.text(t);
                if depth == 1 && text == ".param" && body_param.is_none() {
                    body_param = Some(c.span(t));
                }
                statement_directive(
                    c,
                    text,
                    Decls {
                        locals: &mut locals,
                        generated: &mut generated,
                        candidates: &mut candidates,
                    },
                    &mut locs,
                    &mut shared,
                );
                stmt_start = true;
            }
            TokKind::Ident => {
                c.pos += 1;
                if c.src.as_bytes().get(t.start as usize) != Some(&b'%') {
                    candidates.push(c.name(t));
                }
            }
            TokKind::Directive => {
                c.pos += 1;
                f64_op |= c.src.as_bytes().get(t.start as usize..t.end as usize) == Some(b".f64");
            }
            _ => c.pos += 1,
        }
    }
    let end = c.prev_end();
    let refs: Vec<Name<'src>> = candidates
        .into_iter()
        .filter(|n| !locals.contains(n.text))
        .filter(|n| {
            !generated
                .iter()
                .any(|&(p, count)| is_generated(n.text, p, count))
        })
        .collect();
    c.locals = locals;
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
        },
        refs,
        locs,
    }
}

/// True when `name` is one of the names `prefix<count>` generates: the
/// prefix, then decimal digits below `count`. Leading zeros count (`x02` is
/// `x2`), as ptxas reads them (PTX ISA 9.0, section 5.4.6).
pub(crate) fn is_generated(name: &str, prefix: &str, count: u32) -> bool {
    name.strip_prefix(prefix).is_some_and(|digits| {
        !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && digits.parse::<u64>().is_ok_and(|i| i < u64::from(count))
    })
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

/// Where a body's declarations and references are recorded.
struct Decls<'a, 'src> {
    locals: &'a mut HashSet<&'src str>,
    generated: &'a mut Vec<(&'src str, u32)>,
    candidates: &'a mut Vec<Name<'src>>,
}

/// A statement that starts with a directive: declarations, `.loc`,
/// `.pragma`, `.callprototype`, `.calltargets`.
fn statement_directive<'src>(
    c: &mut Cursor<'_, 'src>,
    d: &'src str,
    decls: Decls<'_, 'src>,
    locs: &mut Vec<LocFix>,
    shared: &mut Vec<(u64, u32)>,
) {
    let Decls {
        locals,
        generated,
        candidates,
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
                refs,
                count,
            } in parse_var(c, Space::Shared, Linkage::Local)
            {
                let (size, align) = (v.size_bytes(), v.align_bytes());
                match count {
                    None => {
                        locals.insert(v.name.text);
                        shared.push((size, align));
                    }
                    // `count` variables, each aligned: one block of the same extent.
                    Some(n) => {
                        generated.push((v.name.text, n));
                        if n > 0 {
                            let stride = size.next_multiple_of(u64::from(align.max(1)));
                            shared.push((stride * u64::from(n - 1) + size, align));
                        }
                    }
                }
                candidates.extend(refs);
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
                        candidates.push(c.name(t));
                    } else if !text.starts_with('%') {
                        // `%`-names are never candidates: no need to shadow them.
                        locals.insert(text);
                        if let Some(n) = generated_count(c) {
                            generated.push((text, n));
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
                    locals.insert(c.text(t));
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
                    candidates.push(c.name(t));
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
