//! Variable declarations after their state space ([`parse_var`]): type
//! directives, declarators, parameterized names `a<N>`, array dimensions
//! and initializers (their names are possible references), with the errors
//! for what ptxas refuses (a misused `a<N>`, a bad `.align`, a size past 64
//! bits).

use super::{check_glued_suffix, Cursor};
use crate::ast::{Linkage, Name, Space, Variable};
use crate::diagnostic::{Diagnostic, Span};
use crate::lex::TokKind;

/// One declarator of a variable declaration.
pub(crate) struct Declared<'src> {
    /// The variable; for `a<N>`, the prefix `a` (spanning `a<N>`), not expanded.
    pub(crate) var: Variable<'src>,
    /// The names its initializer mentions.
    pub(crate) refs: Vec<Name<'src>>,
    /// `N` for a parameterized name `a<N>` (PTX ISA 9.0, section 5.4.6).
    pub(crate) count: Option<u32>,
}

/// Parses a variable declaration after its state space, through its `;`.
/// `.global .u32 a, b = 1;` gives one variable per declarator, all sharing
/// the type; `a<4>` is one declarator with a count (no array, no
/// initializer: ptxas refuses both). Returns an empty list (after
/// reporting) when it is malformed.
pub(crate) fn parse_var<'src>(
    c: &mut Cursor<'_, 'src>,
    space: Space,
    linkage: Linkage,
) -> Vec<Declared<'src>> {
    let mut out = Vec::new();
    let mut align = None;
    let mut ty = "";
    let mut vector = 1;
    loop {
        let Some(t) = c.peek() else { return out };
        if t.kind != TokKind::Directive {
            break;
        }
        let d = c.text(t);
        c.pos += 1;
        match d {
            ".align" => match (c.here(), c.int()) {
                (at, Some(n)) => align = Some(alignment(c, n, at)),
                (_, None) => {
                    c.recover("expected a byte count after `.align`");
                    return out;
                }
            },
            ".v2" => vector = 2,
            ".v4" => vector = 4,
            ".v8" => vector = 8,
            ".attribute" => {
                if c.peek().is_some_and(|t| t.is(b'(')) {
                    skip_parens(c);
                }
            }
            ".ptr" | ".managed" => {}
            _ => ty = &d[1..],
        }
    }
    let prefix_end = c.prev_end();
    loop {
        let Some(nt) = c.peek() else { return out };
        if nt.kind != TokKind::Ident {
            c.recover(format!("expected a variable name, found `{}`", c.text(nt)));
            return out;
        }
        let mut name = c.name(nt);
        c.pos += 1;
        check_glued_suffix(c, name);
        if ty.is_empty() {
            c.error(name.span, format!("variable `{}` has no type", name.text));
        }
        let mut count = None;
        if c.peek().is_some_and(|t| t.is(b'<')) {
            let Some(n) = parse_count(c, name) else {
                return out;
            };
            count = Some(n);
            name.span.end = c.prev_end();
            if let Some(t) = c.peek().filter(|t| t.is(b'[') || t.is(b'=')) {
                parameterized_misuse(c, name, n, t.is(b'['), c.span(t));
                return out;
            }
        }
        let Some(dims) = parse_dims(c) else {
            return out;
        };
        let mut refs = Vec::new();
        let mut init_len = None;
        let mut init = None;
        if c.eat_punct(b'=') {
            let from = c.peek().map_or(c.src.len() as u32, |t| t.start);
            init_len = Some(parse_initializer(c, &mut refs));
            if matches!(ty, "samplerref" | "texref" | "surfref") {
                // `{ filter_mode = linear, ... }` names properties, not symbols.
                refs.clear();
            }
            init = Some(Span {
                file: c.file,
                start: from,
                end: c.prev_end().max(from),
            });
        }
        let declarator = Span {
            file: c.file,
            start: name.span.start,
            end: c.prev_end(),
        };
        let var = Variable {
            linkage,
            space,
            align,
            ty,
            vector,
            name,
            generated: None,
            dims,
            init_len,
            prefix_end,
            declarator,
            init,
        };
        if var.size_bytes().is_none() {
            too_large(c, &var);
        }
        out.push(Declared { var, refs, count });
        if c.eat_punct(b',') {
            continue;
        }
        if !c.eat_punct(b';') {
            let span = c.here();
            c.error(
                span,
                format!("expected `;` after the declaration of `{}`", name.text),
            );
            c.skip_statement();
        }
        return out;
    }
}

/// `<N>` after a variable name (at the `<`): `N` fits 32 bits, as in ptxas.
/// `None` after reporting when malformed.
fn parse_count(c: &mut Cursor<'_, '_>, name: Name<'_>) -> Option<u32> {
    c.pos += 1;
    let n = c.int();
    if n.is_none() || !c.eat_punct(b'>') {
        let (p, span) = (name.text, c.here());
        c.errors.push(
            Diagnostic::error(span, format!("expected a count and `>` after `{p}<`")).with_help(
                format!("write how many variables to declare: `{p}<4>` declares `{p}0` .. `{p}3`"),
            ),
        );
        c.skip_statement();
        return None;
    }
    let n = n?;
    match u32::try_from(n) {
        Ok(n) => Some(n),
        Err(_) => {
            let span = Span {
                end: c.prev_end(),
                ..name.span
            };
            c.errors.push(
                Diagnostic::error(
                    span,
                    format!(
                        "parameterized variable name `{}<{n}>`: the count does not fit 32 bits",
                        name.text
                    ),
                )
                .with_help(format!("declare an array `{}[{n}]` instead", name.text)),
            );
            c.skip_statement();
            None
        }
    }
}

/// `a<4>[2]` or `a<4> = ...`: ptxas refuses both (PTX ISA 9.0, section
/// 5.4.6). Reports it at `at` and skips the statement.
fn parameterized_misuse(c: &mut Cursor<'_, '_>, name: Name<'_>, count: u32, array: bool, at: Span) {
    let p = name.text;
    let declares = match count {
        0 => "declares no variable".to_string(),
        n => format!("declares `{p}0` .. `{p}{}`", n - 1),
    };
    let (what, help) = if array {
        (
            "cannot be an array",
            format!(
                "declare the arrays one by one (`{p}0[..], {p}1[..]`), or drop the `<{count}>`"
            ),
        )
    } else {
        (
            "cannot have an initializer",
            format!("declare the variables one by one to initialize them (`{p}0 = .., {p}1 = ..`)"),
        )
    };
    c.errors.push(
        Diagnostic::error(
            name.span,
            format!("parameterized variable name `{p}<{count}>` {what}"),
        )
        .with_label(declares)
        .with_secondary(at, "not allowed after a parameterized name")
        .with_help(help),
    );
    c.skip_statement();
}

fn skip_parens(c: &mut Cursor<'_, '_>) {
    let mut depth = 0usize;
    while let Some(t) = c.peek() {
        c.pos += 1;
        if t.is(b'(') {
            depth += 1;
        } else if t.is(b')') {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return;
            }
        }
    }
}

/// `[N]` / `[]` suffixes.
pub(super) fn parse_dims(c: &mut Cursor<'_, '_>) -> Option<Vec<Option<u64>>> {
    let mut dims = Vec::new();
    while c.eat_punct(b'[') {
        if c.eat_punct(b']') {
            dims.push(None);
            continue;
        }
        let n = c.int();
        if n.is_none() || !c.eat_punct(b']') {
            c.recover("expected an array size such as `[16]` or `[]`");
            return None;
        }
        dims.push(n);
    }
    Some(dims)
}

/// Reads an initializer up to (not including) the closing `;`, recording
/// identifiers as possible symbol references. Returns the number of scalar
/// values.
fn parse_initializer<'src>(c: &mut Cursor<'_, 'src>, refs: &mut Vec<Name<'src>>) -> u64 {
    // Stack of open brace groups: (has a nested group, commas at this level).
    let mut stack: Vec<(bool, u64, bool)> = Vec::new();
    let mut leaves = 0u64;
    let mut scalar = true;
    let mut paren = 0usize;
    while let Some(t) = c.peek() {
        if stack.is_empty() && (t.is(b';') || t.is(b',')) {
            break;
        }
        if c.is_top_level_start(t) {
            break;
        }
        c.pos += 1;
        match t.kind {
            TokKind::Punct(b'{') => {
                scalar = false;
                if let Some(top) = stack.last_mut() {
                    top.0 = true;
                }
                stack.push((false, 0, false));
            }
            TokKind::Punct(b'}') => {
                if let Some((nested, commas, nonempty)) = stack.pop() {
                    if !nested && nonempty {
                        leaves += commas + 1;
                    }
                }
            }
            TokKind::Punct(b'(') => paren += 1,
            TokKind::Punct(b')') => paren = paren.saturating_sub(1),
            TokKind::Punct(b',') if paren == 0 => {
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
            }
            _ => {
                if let Some(top) = stack.last_mut() {
                    top.2 = true;
                }
                if t.kind == TokKind::Ident {
                    let is_op = matches!(c.text(t), "generic" | "mask")
                        && c.peek().is_some_and(|n| n.is(b'('));
                    if !is_op {
                        refs.push(c.name(t));
                    }
                }
            }
        }
    }
    if scalar {
        1
    } else {
        leaves
    }
}

/// The byte count of `.align N` (at `at`): ptxas takes a power of two that
/// fits 32 bits. Reports any other and reads it as 1.
pub(super) fn alignment(c: &mut Cursor<'_, '_>, n: u64, at: Span) -> u32 {
    match u32::try_from(n) {
        Ok(a) if a.is_power_of_two() => a,
        _ => {
            c.errors.push(
                Diagnostic::error(
                    at,
                    format!("`.align {n}`: an alignment must be a power of two that fits 32 bits"),
                )
                .with_help(
                    "write the alignment in bytes as a power of two: `.align 4`, `.align 16`",
                ),
            );
            1
        }
    }
}

/// Reports a variable whose size in bytes does not fit 64 bits.
fn too_large(c: &mut Cursor<'_, '_>, var: &Variable<'_>) {
    // The element count as declared (an unsized `[]` counts its initializer).
    let elems = var
        .dims
        .iter()
        .flatten()
        .try_fold(1u128, |n, &d| n.checked_mul(u128::from(d)));
    let elems = match (var.dims.iter().any(Option::is_none), var.init_len) {
        (true, Some(n)) => elems.map(|k| k.max(u128::from(n))),
        _ => elems,
    };
    let bytes = elems.and_then(|n| n.checked_mul(u128::from(var.elem_size())));
    let elems = match elems {
        Some(n) => crate::diagnostic::count(n, "element", "elements"),
        None => "more than 2^128 elements".to_string(),
    };
    let bytes = bytes.map_or("more than 2^128 bytes".to_string(), |b| {
        format!("{b} bytes")
    });
    let name = var.name.text;
    c.errors.push(
        Diagnostic::error(
            var.name.span,
            format!(
                "variable `{name}` is too large: {elems} of {} {} {bytes}, more than 64 bits can count",
                crate::diagnostic::count(var.elem_size(), "byte", "bytes"),
                if elems.starts_with("1 ") { "is" } else { "are" },
            ),
        )
        .with_label("declared here")
        .with_help(format!(
            "declare `{name}` smaller: no state space holds 2^64 bytes"
        )),
    );
}
