//! Parser: tokens to a [`Module`] (PTX ISA 9.0, section 11 "Directives").
//!
//! **Parsing never fails.** [`parse`] always returns a module; problems are
//! collected in [`Module::errors`] and the parser recovers at the next `;` or
//! the next module-scope directive that starts a line.
//!
//! **Where things are.** This file holds [`parse`] and the module-scope
//! items (headers, `.file`, `.section`, `.alias`, the dispatch of
//! declarations). `cursor.rs` is the token window the parser reads through,
//! `declarations.rs` what ptxas checks across a module's declarations of one
//! name (linkages, definitions twice, aliases), `variable.rs` variable
//! declarations, `function.rs` functions and their parameter lists (bodies
//! are scanned by [`crate::body`]); the tests are in `tests.rs`.

mod cursor;
mod declarations;
mod function;
mod variable;

pub(crate) use cursor::Cursor;
pub(crate) use declarations::module_declaration;
pub(crate) use variable::{parse_var, Declared};

use crate::ast::*;
use crate::body;
use crate::diagnostic::{Diagnostic, FileId, Span};
use crate::lex::{Lexer, TokKind, Token};
use declarations::{
    add_module_symbol, alias_linkage, check_defined_twice, check_redefinition, prefix_defined_twice,
};
use function::parse_function;

/// The most variables parameterized declarations (`.global .u32 a<N>;`,
/// PTX ISA 9.0, section 5.4.6) may generate at module scope in one module:
/// each becomes an item and a symbol of its own. ptxas takes more (at
/// 100 million, 3 s and 0.8 GB); past this, declare an array.
pub const MAX_GENERATED_NAMES: u32 = 1 << 16;

/// Parses one module. Never fails; see [`Module::errors`].
pub fn parse(file: FileId, src: &str) -> Module<'_> {
    parse_reusing(file, src, &mut Vec::new())
}

/// [`parse`], lexing into `toks` (a scratch buffer reused across modules:
/// its contents on return are unspecified).
pub fn parse_reusing<'src>(file: FileId, src: &'src str, toks: &mut Vec<Token>) -> Module<'src> {
    let (m, late) = parse_pass(file, src, toks, body::PercentSymbols::default());
    match late {
        // A `%` symbol declared after a body that may use it (ptxas refuses the
        // use): parsed again with every `%` symbol known from the start, so
        // that the use is a reference, refused as a plain name's would be
        // ([`crate::symbols::check_body_names`]), rather than a register.
        Some(all) => parse_pass(file, src, toks, all).0,
        None => m,
    }
}

/// One parse of `src`, with the module's `%` symbols known beforehand
/// (`percent`); also returns them all when one was declared after a body.
fn parse_pass<'src>(
    file: FileId,
    src: &'src str,
    toks: &mut Vec<Token>,
    percent: body::PercentSymbols<'src>,
) -> (Module<'src>, Option<body::PercentSymbols<'src>>) {
    toks.clear();
    let mut c = Cursor {
        src,
        toks,
        pos: 0,
        base_end: 0,
        lexer: Lexer::new(file, src),
        file,
        errors: Vec::new(),
        scopes: None,
        params: Vec::new(),
        generated: 0,
        percent_symbols: percent,
        late_percent: false,
        after_body: false,
        declared: Default::default(),
        defined_vars: Default::default(),
        defined_prefixes: Default::default(),
        module_names: Default::default(),
        forward_labels: Vec::new(),
    };
    let mut m = Module {
        file,
        text: src,
        version: None,
        target: None,
        address_size: None,
        items: Vec::new(),
        errors: Vec::new(),
        forward_labels: Vec::new(),
        refs: Vec::new(),
        flags: Default::default(),
    };
    while !c.at_end() {
        c.compact();
        let (start, before) = (c.pos, c.prev_end());
        parse_top(&mut c, &mut m);
        if c.pos == start && c.prev_end() == before {
            c.pos += 1; // guarantee progress
        }
    }
    if m.version.is_none() {
        c.errors.push(
            Diagnostic::error(Span::new(file, 0, 0), "missing `.version` directive")
                .with_help("start the module with `.version MAJOR.MINOR`, e.g. `.version 7.8`"),
        );
    }
    if m.target.is_none() {
        c.errors.push(
            Diagnostic::error(Span::new(file, 0, 0), "missing `.target` directive")
                .with_help("add `.target sm_XX` after `.version`"),
        );
    }
    // The lexer's errors first, as when the whole module was lexed first.
    let mut errors = std::mem::take(&mut c.lexer.errors);
    errors.append(&mut c.errors);
    m.errors = errors;
    m.items.shrink_to_fit();
    m.flags = crate::ast::ModuleFlags::of(&m.items);
    m.forward_labels = std::mem::take(&mut c.forward_labels);
    m.forward_labels.shrink_to_fit();
    let late = c.late_percent.then_some(c.percent_symbols);
    (m, late)
}

fn parse_top<'src>(c: &mut Cursor<'_, 'src>, m: &mut Module<'src>) {
    let Some(t) = c.peek() else { return };
    let start = t.start as usize;
    if t.kind != TokKind::Directive {
        let msg = format!("expected a module-scope directive, found `{}`", c.text(t));
        if t.is(b'{') {
            c.error(c.span(t), msg);
            skip_braces(c);
        } else {
            c.recover(msg);
        }
        return;
    }
    let d = c.text(t);
    match d {
        ".version" => {
            c.pos += 1;
            let vt = c.peek();
            match vt.and_then(|v| c.text(v).parse::<targets::PtxVersion>().ok()) {
                Some(v) => {
                    c.pos += 1;
                    let span = Span::new(c.file, start, c.prev_end() as usize);
                    if m.version.is_none() {
                        m.version = Some((v, span));
                    } else {
                        c.error(span, "duplicate `.version` directive");
                    }
                }
                None => c.recover("expected a version such as `7.8` after `.version`"),
            }
        }
        ".target" => {
            c.pos += 1;
            let mut names = Vec::new();
            while let Some(n) = c.peek() {
                // A `,` continues the list, on the next line too.
                if n.kind != TokKind::Ident {
                    break;
                }
                names.push(c.text(n));
                c.pos += 1;
                if !c.eat_punct(b',') {
                    break;
                }
            }
            c.eat_punct(b';');
            let span = Span::new(c.file, start, c.prev_end() as usize);
            if names.is_empty() {
                c.error(
                    span,
                    "expected an architecture such as `sm_90` after `.target`",
                );
                return;
            }
            // The architecture is the option that names one; the rest are options.
            let arch_pos = names
                .iter()
                .position(|n| arch_number(n).is_some())
                .unwrap_or(0);
            let arch = names.remove(arch_pos);
            let sm = arch_number(arch).unwrap_or(0);
            if m.target.is_none() {
                m.target = Some(Target {
                    arch,
                    sm,
                    options: names,
                    span,
                });
            } else {
                c.error(span, "duplicate `.target` directive");
            }
        }
        ".address_size" => {
            c.pos += 1;
            match c.int() {
                Some(n @ (32 | 64)) => {
                    let span = Span::new(c.file, start, c.prev_end() as usize);
                    m.address_size = Some((n as u32, span));
                }
                _ => c.recover("expected `32` or `64` after `.address_size`"),
            }
        }
        ".file" => {
            c.pos += 1;
            let idx = c.int();
            let rest_start = c.peek().map_or(c.src.len(), |t| t.start as usize);
            let line_end = skip_line(c);
            let span = Span::new(c.file, start, line_end);
            match idx {
                Some(index) => m.items.push(Item {
                    span,
                    kind: ItemKind::File(FileEntry {
                        index: index as u32,
                        rest: c.src.get(rest_start.min(line_end)..line_end).unwrap_or(""),
                    }),
                    refs: Refs::default(),
                    locs: Vec::new(),
                }),
                None => c.error(span, "expected a file index after `.file`"),
            }
        }
        ".loc" => {
            // A `.loc` outside a body carries no code; keep it verbatim.
            c.pos += 1;
            let end = skip_line(c);
            m.items.push(other(c, start, end));
        }
        ".section" => parse_section(c, m, start),
        ".alias" => {
            c.pos += 1;
            let a = c.peek().filter(|t| t.kind == TokKind::Ident);
            let b = c.peek_at(2).filter(|t| t.kind == TokKind::Ident);
            if let (Some(a), Some(b), true) = (a, b, c.peek_at(1).is_some_and(|t| t.is(b','))) {
                c.pos += 3;
                c.eat_punct(b';');
                let (alias, target) = (c.name(a), c.name(b));
                add_module_symbol(c, alias.text, None);
                c.module_names.add_kernel_or_alias(alias);
                let span = Span::new(c.file, start, c.prev_end() as usize);
                let linkage = alias_linkage(c, m, span, alias, target);
                m.items.push(Item {
                    span,
                    kind: ItemKind::Alias {
                        alias,
                        target,
                        linkage,
                    },
                    refs: Refs::push(&mut m.refs, [target]),
                    locs: Vec::new(),
                });
            } else {
                c.recover("expected `.alias ALIAS, FUNCTION;`");
            }
        }
        ".pragma" | ".reg" => {
            c.skip_statement();
            let end = c.prev_end() as usize;
            m.items.push(other(c, start, end));
        }
        _ => parse_declaration(c, m, start),
    }
}

/// After a declared name: a `.suffix` glued to it (`k.x`) makes an invalid
/// identifier (PTX ISA 9.0, section 4.4 "Identifiers"; rustc can emit such
/// names, rust-lang/rust#146181). Reports it and skips the suffix. Reports
/// the name `_` too, which ptxas refuses.
pub(crate) fn check_glued_suffix(c: &mut Cursor<'_, '_>, name: Name<'_>) {
    if name.text == "_" {
        // ptxas 13.5: "Parsing error near '_'" (`_` is the sink operand).
        c.errors.push(
            Diagnostic::error(name.span, "`_` cannot name a variable or function")
                .with_label("`_` is the sink operand (PTX ISA 9.0, section 4.4)")
                .with_help("rename the symbol; ptxas refuses `_` as a name"),
        );
    }
    let mut end = name.span.end;
    while let Some(t) = c.peek() {
        if t.start != end || !matches!(t.kind, TokKind::Directive | TokKind::Unknown) {
            break;
        }
        end = t.end;
        c.pos += 1;
    }
    if end != name.span.end {
        let span = Span { end, ..name.span };
        let full = c.src.get(span.range()).unwrap_or(name.text);
        c.errors.push(
            Diagnostic::error(span, format!("invalid identifier `{full}`"))
                .with_label("PTX identifiers are letters, digits, `_` and `$` (and a leading `%`)")
                .with_help("rename the symbol; `.` is not allowed in PTX names"),
        );
    }
}

fn other<'src>(c: &Cursor<'_, 'src>, start: usize, end: usize) -> Item<'src> {
    Item {
        span: Span::new(c.file, start, end),
        kind: ItemKind::Other,
        refs: Refs::default(),
        locs: Vec::new(),
    }
}

/// Skips the rest of the current line (and the next, after a trailing `,`);
/// returns the end of its last token.
fn skip_line(c: &mut Cursor<'_, '_>) -> usize {
    let mut end = c.prev_end() as usize;
    let mut after_comma = false;
    while let Some(t) = c.peek() {
        if t.nl_before && !after_comma {
            break;
        }
        after_comma = t.is(b',');
        end = t.end as usize;
        c.pos += 1;
        if t.is(b';') {
            break;
        }
    }
    end
}

/// Skips a balanced `{ ... }` group starting at the current `{`.
fn skip_braces(c: &mut Cursor<'_, '_>) {
    let mut depth = 0usize;
    while let Some(t) = c.peek() {
        c.pos += 1;
        if t.is(b'{') {
            depth += 1;
        } else if t.is(b'}') {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return;
            }
        }
    }
}

/// The compute capability in `sm_90a` / `compute_10` (times ten).
pub fn arch_number(s: &str) -> Option<u32> {
    let digits = s
        .strip_prefix("sm_")
        .or_else(|| s.strip_prefix("compute_"))?;
    let digits: String = digits.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn parse_section<'src>(c: &mut Cursor<'_, 'src>, m: &mut Module<'src>, start: usize) {
    c.pos += 1;
    // Section name: `.debug_info` (a directive token) or an identifier.
    if c.peek()
        .is_some_and(|t| matches!(t.kind, TokKind::Directive | TokKind::Ident))
    {
        c.pos += 1;
    }
    if !c.peek().is_some_and(|t| t.is(b'{')) {
        c.recover("expected `{` after the `.section` name");
        return;
    }
    let open = c.pos;
    skip_braces(c);
    let end = c.prev_end() as usize;
    let names = c.toks[open..c.pos]
        .iter()
        .filter(|t| {
            t.kind == TokKind::Ident
                && (!c.text(**t).starts_with('%') || c.percent_symbols.contains(c.text(**t)))
        })
        .map(|t| c.name(*t));
    let refs = Refs::push(&mut m.refs, names);
    m.items.push(Item {
        span: Span::new(c.file, start, end),
        kind: ItemKind::Section,
        refs,
        locs: Vec::new(),
    });
}

/// Linkage directive (optional), then a function or variable.
fn parse_declaration<'src>(c: &mut Cursor<'_, 'src>, m: &mut Module<'src>, start: usize) {
    let mut linkage = Linkage::Local;
    loop {
        let Some(t) = c.peek() else { return };
        let l = match c.text(t) {
            ".visible" => Linkage::Visible,
            ".extern" => Linkage::Extern,
            ".weak" => Linkage::Weak,
            ".common" => Linkage::Common,
            _ => break,
        };
        linkage = l;
        c.pos += 1;
    }
    let Some(t) = c.peek() else {
        c.recover("expected a declaration after the linkage directive");
        return;
    };
    match c.text(t) {
        ".entry" | ".func" => parse_function(c, m, start, linkage),
        ".global" | ".const" | ".shared" | ".local" | ".tex" => {
            let space = match c.text(t) {
                ".global" => Space::Global,
                ".const" => Space::Const,
                ".shared" => Space::Shared,
                ".local" => Space::Local,
                _ => Space::Tex,
            };
            c.pos += 1;
            // A malformed declaration has been reported and skipped.
            let vars = parse_var(c, space, linkage);
            let span = Span::new(c.file, start, c.prev_end() as usize);
            for Declared {
                mut var,
                refs,
                count,
            } in vars
            {
                add_module_symbol(c, var.name.text, count);
                if count.is_none() {
                    let defines = var.linkage != Linkage::Extern;
                    var.linkage = check_redefinition(c, var.name, var.linkage, false, defines);
                    if defines {
                        check_defined_twice(c, var.name, var.linkage);
                    }
                }
                let Some(count) = count else {
                    m.items.push(Item {
                        span,
                        kind: ItemKind::Variable(var),
                        refs: Refs::push(&mut m.refs, refs),
                        locs: Vec::new(),
                    });
                    continue;
                };
                if var.linkage != Linkage::Extern && prefix_defined_twice(c, var.name) {
                    continue;
                }
                c.module_names.add_generated(var.name, count);
                if body::names_nothing(var.name.text) {
                    // Nothing can use the variables of `a1<10>`, and ptxas
                    // leaves unused ones out. No item, no symbol (a plain
                    // `a15` beside them is another variable).
                    continue;
                }
                if count > MAX_GENERATED_NAMES - c.generated {
                    too_many_generated(c, &var, count, c.generated);
                    continue;
                }
                c.generated += count;
                // `a<4>` declares `a0` .. `a3`: one item each, like `a0, a1, a2, a3`.
                m.items.reserve(count as usize);
                for index in 0..count {
                    let name = format!("{}{index}", var.name.text).into_boxed_str();
                    m.items.push(Item {
                        span,
                        kind: ItemKind::Variable(Variable {
                            generated: Some(Generated { name, index, count }),
                            ..var.clone()
                        }),
                        refs: Refs::default(),
                        locs: Vec::new(),
                    });
                }
            }
        }
        d if t.kind == TokKind::Directive => {
            let msg = format!("unknown module-scope directive `{d}`");
            c.recover(msg);
        }
        d => {
            let msg = format!("expected `.entry`, `.func` or a variable declaration, found `{d}`");
            c.recover(msg);
        }
    }
}

/// Reports a module-scope `a<N>` that takes the module's generated
/// variables past [`MAX_GENERATED_NAMES`]: alone, or on top of the `before`
/// that earlier declarations generated.
fn too_many_generated(c: &mut Cursor<'_, '_>, var: &Variable<'_>, count: u32, before: u32) {
    use crate::diagnostic::count as n;
    let name = var.name.text;
    let d = if before == 0 {
        Diagnostic::error(
            var.name.span,
            format!(
                "parameterized variable name `{name}<{count}>` declares {}; \
                 the linker takes at most {MAX_GENERATED_NAMES} per module",
                n(count, "variable", "variables")
            ),
        )
        .with_label("declared here")
    } else {
        let total = u64::from(before) + u64::from(count);
        Diagnostic::error(
            var.name.span,
            format!(
                "parameterized variable name `{name}<{count}>` brings the module's generated \
                 variables from {before} to {total}; the linker takes at most \
                 {MAX_GENERATED_NAMES} per module"
            ),
        )
        .with_label(format!(
            "{} here, after {} from the module's earlier parameterized names",
            n(count, "variable", "variables"),
            n(before, "variable", "variables")
        ))
    };
    c.errors.push(d.with_help(format!(
        "declare an array `{name}[{count}]` instead and address its elements as `[{name}+OFFSET]`"
    )));
}

#[cfg(test)]
mod tests;
