//! `.entry` and `.func` declarations and definitions ([`parse_function`]):
//! the return and parameter lists, performance-tuning directives, a
//! parameter list that repeats a name, and the body, handed to
//! [`crate::body::scan`].

use super::declarations::{add_module_symbol, check_redefinition};
use super::variable::{alignment, parse_dims};
use super::{check_glued_suffix, Cursor};
use crate::ast::{
    FnKind, Function, Item, ItemKind, Linkage, Module, Name, ParamDecl, PtrAttr, Refs,
};
use crate::body;
use crate::diagnostic::{Diagnostic, Span};
use crate::lex::TokKind;

pub(super) fn parse_function<'src>(
    c: &mut Cursor<'_, 'src>,
    m: &mut Module<'src>,
    start: usize,
    linkage: Linkage,
) {
    let Some(kw) = c.peek() else { return };
    let kind = if c.text(kw) == ".entry" {
        FnKind::Entry
    } else {
        FnKind::Func
    };
    c.pos += 1;
    let mut returns = Vec::new();
    if kind == FnKind::Func && c.peek().is_some_and(|t| t.is(b'(')) {
        match parse_params(c) {
            Some(r) => returns = r,
            None => return,
        }
    }
    let Some(nt) = c.peek().filter(|t| t.kind == TokKind::Ident) else {
        c.recover("expected a function name");
        return;
    };
    let name = c.name(nt);
    c.pos += 1;
    check_glued_suffix(c, name);
    let mut params = Vec::new();
    let has_param_list = c.peek().is_some_and(|t| t.is(b'('));
    if has_param_list {
        match parse_params(c) {
            Some(p) => params = p,
            None => return,
        }
    }
    let proto_end = c.prev_end();
    // Performance-tuning directives and `.noreturn` (PTX ISA 9.0, section 11.4).
    let mut noreturn = false;
    while let Some(t) = c.peek() {
        if t.kind != TokKind::Directive || c.is_top_level_start(t) {
            break;
        }
        let d = c.text(t);
        if matches!(
            d,
            ".entry"
                | ".func"
                | ".visible"
                | ".extern"
                | ".weak"
                | ".global"
                | ".const"
                | ".shared"
        ) {
            break;
        }
        c.pos += 1;
        if d == ".noreturn" {
            noreturn = true;
        }
        while let Some(a) = c.peek() {
            if matches!(
                a.kind,
                TokKind::Number | TokKind::Str | TokKind::Punct(b',')
            ) {
                c.pos += 1;
            } else {
                break;
            }
        }
        if d == ".pragma" {
            c.eat_punct(b';');
        }
    }
    // Declared before its body, which may call it.
    add_module_symbol(c, name.text, None);
    if kind == FnKind::Entry {
        c.module_names.add_kernel_or_alias(name);
    }
    let has_body = c.peek().is_some_and(|t| t.is(b'{'));
    let written = linkage;
    let linkage = if kind == FnKind::Func {
        check_redefinition(c, name, linkage, true, has_body)
    } else {
        linkage
    };
    let mut item = Item {
        span: Span::new(c.file, start, c.prev_end() as usize),
        kind: ItemKind::Function(Function {
            linkage,
            kind,
            name,
            returns,
            params,
            proto_end,
            noreturn,
            has_param_list,
            body: None,
            linkage_inherited: linkage != written,
        }),
        refs: Refs::default(),
        locs: Vec::new(),
    };
    if c.peek().is_some_and(|t| t.is(b'{')) {
        let ItemKind::Function(f) = &mut item.kind else {
            return;
        };
        if let Some((first, again)) = repeated_param(&f.returns, &f.params) {
            c.errors.push(
                Diagnostic::error(
                    again.span,
                    format!("parameter `{}` is declared twice", again.text),
                )
                .with_label("a second parameter of this name")
                .with_secondary(first.span, "first declared here")
                .with_help(
                    "rename one of the parameters; ptxas refuses a function with a body whose \
                     parameters (return parameters included) repeat a name (\"Duplicate \
                     definition of variable\")",
                ),
            );
        }
        let locals = f.returns.iter().chain(&f.params).map(|p| p.name.text);
        c.after_body = true;
        let first_ref = m.refs.len();
        let scanned = body::scan(c, locals, &mut m.refs);
        f.body = Some(scanned.body);
        item.refs = Refs::since(&m.refs, first_ref);
        item.locs = scanned.locs;
    } else {
        // `;` ends a declaration; legacy PTX omits it.
        c.eat_punct(b';');
    }
    item.span.end = c.prev_end();
    m.items.push(item);
}

/// The first parameter name (return parameters first) that repeats an
/// earlier one: the earlier and the repeat. (ptxas takes repeats in a
/// declaration without a body, so only definitions are checked.)
fn repeated_param<'src>(
    returns: &[ParamDecl<'src>],
    params: &[ParamDecl<'src>],
) -> Option<(Name<'src>, Name<'src>)> {
    let all = || returns.iter().chain(params).map(|p| p.name);
    if returns.len() + params.len() <= 32 {
        // Few: pairwise, no allocation.
        return all()
            .enumerate()
            .find_map(|(i, b)| all().take(i).find(|a| a.text == b.text).map(|a| (a, b)));
    }
    let mut seen = rustc_hash::FxHashMap::default();
    all().find_map(|b| seen.insert(b.text, b).map(|a| (a, b)))
}

/// `( param, param, ... )`; `None` after reporting when malformed.
fn parse_params<'src>(c: &mut Cursor<'_, 'src>) -> Option<Vec<ParamDecl<'src>>> {
    let open = c.here();
    c.pos += 1; // `(`
                // Most lists are short: collected in the cursor's buffer and copied
                // out at their size (one allocation, none for `()`).
    let mut out = std::mem::take(&mut c.params);
    out.clear();
    let list = params_into(c, open, &mut out).then(|| out.to_vec());
    c.params = out;
    list
}

/// The parameters of [`parse_params`], into `out`; false after reporting.
fn params_into<'src>(c: &mut Cursor<'_, 'src>, open: Span, out: &mut Vec<ParamDecl<'src>>) -> bool {
    loop {
        let Some(t) = c.peek() else {
            c.errors.push(
                Diagnostic::error(open, "unterminated parameter list")
                    .with_help("close the list with `)`"),
            );
            return false;
        };
        if t.is(b')') {
            c.pos += 1;
            return true;
        }
        if !out.is_empty() && !c.eat_punct(b',') {
            c.recover(format!(
                "expected `,` or `)` in parameter list, found `{}`",
                c.text(t)
            ));
            return false;
        }
        match parse_param(c) {
            Some(p) => out.push(p),
            None => return false,
        }
    }
}

fn parse_param<'src>(c: &mut Cursor<'_, 'src>) -> Option<ParamDecl<'src>> {
    let mut space = "param";
    let mut ty = "";
    let mut vector = 1;
    let mut align = None;
    let mut ptr: Option<PtrAttr<'src>> = None;
    while let Some(t) = c.peek().filter(|t| t.kind == TokKind::Directive) {
        let d = c.text(t);
        c.pos += 1;
        match d {
            ".param" | ".reg" => space = &d[1..],
            ".ptr" => {
                ptr = Some(PtrAttr {
                    space: None,
                    align: 4,
                })
            }
            ".align" => {
                let at = c.here();
                let Some(n) = c.int() else {
                    c.recover("expected a byte count after `.align`");
                    return None;
                };
                let n = alignment(c, n, at);
                match &mut ptr {
                    Some(p) => p.align = n,
                    None => align = Some(n),
                }
            }
            ".global" | ".const" | ".local" | ".shared" if ptr.is_some() => {
                if let Some(p) = &mut ptr {
                    p.space = Some(&d[1..]);
                }
            }
            ".v2" => vector = 2,
            ".v4" => vector = 4,
            ".v8" => vector = 8,
            _ => ty = &d[1..],
        }
    }
    let Some(nt) = c.peek().filter(|t| t.kind == TokKind::Ident) else {
        let found = c.peek().map_or("end of input", |t| c.text(t));
        c.recover(format!("expected a parameter name, found `{found}`"));
        return None;
    };
    let name = c.name(nt);
    c.pos += 1;
    if ty.is_empty() {
        c.error(name.span, format!("parameter `{}` has no type", name.text));
    }
    let dims = parse_dims(c)?;
    Some(ParamDecl {
        space,
        ty,
        vector,
        align,
        ptr,
        name,
        dims,
    })
}
