//! Parser: tokens to a [`Module`] (PTX ISA 9.0, section 11 "Directives").
//!
//! **Parsing never fails.** [`parse`] always returns a module; problems are
//! collected in [`Module::errors`] and the parser recovers at the next `;` or
//! the next module-scope directive that starts a line.

use crate::ast::*;
use crate::body;
use crate::diagnostic::{Diagnostic, FileId, Span};
use crate::lex::{self, int_value, TokKind, Token};

/// Directives that begin a module-scope statement; recovery stops at them.
const TOP_LEVEL: &[&str] = &[
    ".version",
    ".target",
    ".address_size",
    ".entry",
    ".func",
    ".global",
    ".const",
    ".shared",
    ".local",
    ".tex",
    ".extern",
    ".visible",
    ".weak",
    ".common",
    ".file",
    ".section",
    ".alias",
    ".reg",
    ".loc",
];

/// Parses one module. Never fails; see [`Module::errors`].
pub fn parse(file: FileId, src: &str) -> Module<'_> {
    parse_reusing(file, src, &mut Vec::new())
}

/// [`parse`], lexing into `toks` (a scratch buffer reused across modules:
/// its contents on return are unspecified).
pub fn parse_reusing<'src>(file: FileId, src: &'src str, toks: &mut Vec<Token>) -> Module<'src> {
    let errors = lex::lex_into(file, src, toks);
    let toks: &[Token] = toks;
    let mut c = Cursor {
        src,
        toks,
        pos: 0,
        file,
        errors,
        locals: Default::default(),
    };
    let mut m = Module {
        file,
        text: src,
        version: None,
        target: None,
        address_size: None,
        items: Vec::new(),
        errors: Vec::new(),
    };
    while !c.at_end() {
        let start = c.pos;
        parse_top(&mut c, &mut m);
        if c.pos == start {
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
    m.errors = c.errors;
    m.items.shrink_to_fit();
    m
}

/// A position in the token list, plus the errors found so far.
pub(crate) struct Cursor<'t, 'src> {
    pub(crate) src: &'src str,
    pub(crate) toks: &'t [Token],
    pub(crate) pos: usize,
    pub(crate) file: FileId,
    pub(crate) errors: Vec<Diagnostic>,
    /// Scratch set of function-local names, reused by every body scan.
    pub(crate) locals: rustc_hash::FxHashSet<&'src str>,
}

impl<'src> Cursor<'_, 'src> {
    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }
    pub(crate) fn peek(&self) -> Option<Token> {
        self.toks.get(self.pos).copied()
    }
    pub(crate) fn peek_at(&self, n: usize) -> Option<Token> {
        self.toks.get(self.pos + n).copied()
    }
    pub(crate) fn text(&self, t: Token) -> &'src str {
        t.text(self.src)
    }
    pub(crate) fn span(&self, t: Token) -> Span {
        Span {
            file: self.file,
            start: t.start,
            end: t.end,
        }
    }
    pub(crate) fn name(&self, t: Token) -> Name<'src> {
        Name {
            text: self.text(t),
            span: self.span(t),
        }
    }
    /// Span of the current token, or an empty span at end of input.
    pub(crate) fn here(&self) -> Span {
        match self.peek() {
            Some(t) => self.span(t),
            None => Span::new(self.file, self.src.len(), self.src.len()),
        }
    }
    /// End offset of the previous token.
    pub(crate) fn prev_end(&self) -> u32 {
        if self.pos == 0 {
            0
        } else {
            self.toks[(self.pos - 1).min(self.toks.len() - 1)].end
        }
    }
    pub(crate) fn eat_punct(&mut self, c: u8) -> bool {
        if self.peek().is_some_and(|t| t.is(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn is_top_level_start(&self, t: Token) -> bool {
        t.kind == TokKind::Directive && t.nl_before && TOP_LEVEL.contains(&self.text(t))
    }
    pub(crate) fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.errors.push(Diagnostic::error(span, msg));
    }
    /// Error at the current token, then skip past the next `;` (or up to the
    /// next module-scope directive).
    fn recover(&mut self, msg: impl Into<String>) {
        let span = self.here();
        self.error(span, msg);
        self.skip_statement();
    }
    fn skip_statement(&mut self) {
        let first = self.pos;
        while let Some(t) = self.peek() {
            if t.is(b';') {
                self.pos += 1;
                return;
            }
            if self.pos > first && self.is_top_level_start(t) {
                return;
            }
            self.pos += 1;
        }
    }
    /// Reads an integer literal.
    pub(crate) fn int(&mut self) -> Option<u64> {
        let t = self.peek()?;
        if t.kind != TokKind::Number {
            return None;
        }
        let v = int_value(self.text(t))?;
        self.pos += 1;
        Some(v)
    }
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
                    refs: Vec::new(),
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
                m.items.push(Item {
                    span: Span::new(c.file, start, c.prev_end() as usize),
                    kind: ItemKind::Alias { alias, target },
                    refs: vec![target],
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
/// names, rust-lang/rust#146181). Reports it and skips the suffix.
pub(crate) fn check_glued_suffix(c: &mut Cursor<'_, '_>, name: Name<'_>) {
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
        refs: Vec::new(),
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
    let refs = c.toks[open..c.pos]
        .iter()
        .filter(|t| t.kind == TokKind::Ident && !c.text(**t).starts_with('%'))
        .map(|t| c.name(*t))
        .collect();
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
            for (var, refs) in vars {
                m.items.push(Item {
                    span,
                    kind: ItemKind::Variable(var),
                    refs,
                    locs: Vec::new(),
                });
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

/// One declarator of a variable declaration: the variable and the names its
/// initializer mentions.
pub(crate) type Declared<'src> = (Variable<'src>, Vec<Name<'src>>);

/// Parses a variable declaration after its state space, through its `;`.
/// `.global .u32 a, b = 1;` gives one variable per declarator, all sharing
/// the type. Returns an empty list (after reporting) when it is malformed.
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
            ".align" => match c.int() {
                Some(n) => align = Some(n as u32),
                None => {
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
        let name = c.name(nt);
        c.pos += 1;
        check_glued_suffix(c, name);
        if ty.is_empty() {
            c.error(name.span, format!("variable `{}` has no type", name.text));
        }
        if c.peek().is_some_and(|t| t.is(b'<')) {
            let here = c.here();
            c.errors.push(
                Diagnostic::error(
                    here,
                    format!(
                        "parameterized variable name `{}<N>` is not supported at module scope",
                        name.text
                    ),
                )
                .with_help("declare the variables one by one, or as an array"),
            );
            c.skip_statement();
            return out;
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
        out.push((
            Variable {
                linkage,
                space,
                align,
                ty,
                vector,
                name,
                dims,
                init_len,
                prefix_end,
                declarator,
                init,
            },
            refs,
        ));
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
fn parse_dims(c: &mut Cursor<'_, '_>) -> Option<Vec<Option<u64>>> {
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

fn parse_function<'src>(
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
        }),
        refs: Vec::new(),
        locs: Vec::new(),
    };
    if c.peek().is_some_and(|t| t.is(b'{')) {
        let ItemKind::Function(f) = &mut item.kind else {
            return;
        };
        let locals: Vec<&str> = f
            .returns
            .iter()
            .chain(&f.params)
            .map(|p| p.name.text)
            .collect();
        let scanned = body::scan(c, &locals);
        f.body = Some(scanned.body);
        item.refs = scanned.refs;
        item.locs = scanned.locs;
    } else {
        // `;` ends a declaration; legacy PTX omits it.
        c.eat_punct(b';');
    }
    item.span.end = c.prev_end();
    m.items.push(item);
}

/// `( param, param, ... )`; `None` after reporting when malformed.
fn parse_params<'src>(c: &mut Cursor<'_, 'src>) -> Option<Vec<ParamDecl<'src>>> {
    let open = c.here();
    c.pos += 1; // `(`
    let mut out = Vec::new();
    loop {
        let Some(t) = c.peek() else {
            c.errors.push(
                Diagnostic::error(open, "unterminated parameter list")
                    .with_help("close the list with `)`"),
            );
            return None;
        };
        if t.is(b')') {
            c.pos += 1;
            out.shrink_to_fit(); // most lists are short; `Vec` starts at 4
            return Some(out);
        }
        if !out.is_empty() && !c.eat_punct(b',') {
            c.recover(format!(
                "expected `,` or `)` in parameter list, found `{}`",
                c.text(t)
            ));
            return None;
        }
        out.push(parse_param(c)?);
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
                let Some(n) = c.int() else {
                    c.recover("expected a byte count after `.align`");
                    return None;
                };
                match &mut ptr {
                    Some(p) => p.align = n as u32,
                    None => align = Some(n as u32),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_header_and_items() {
        let src = ".version 7.8\n.target sm_52, texmode_independent, debug\n.address_size 64\n\
                   .extern .func (.param .b32 r) f(.param .b32 a);\n\
                   .global .align 8 .u64 t[2] = {generic(g), 15};\n\
                   .visible .entry k(.param .u64 .ptr .global .align 16 p)\n.maxntid 128, 1, 1\n{\n ret;\n}\n";
        let m = parse(FileId(0), src);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        assert_eq!(m.version.unwrap().0.to_string(), "7.8");
        let t = m.target.unwrap();
        assert_eq!((t.arch, t.sm), ("sm_52", 52));
        assert_eq!(t.options, ["texmode_independent", "debug"]);
        assert_eq!(m.address_size.unwrap().0, 64);
        assert_eq!(m.items.len(), 3);
        let ItemKind::Variable(v) = &m.items[1].kind else {
            panic!()
        };
        assert_eq!((v.size_bytes(), v.align_bytes()), (16, 8));
        assert_eq!(m.items[1].refs[0].text, "g");
    }

    #[test]
    fn recovers_and_reports() {
        let src = ".version 7.8\n.target sm_90\n.global .u32 ;\n.bogus x;\n.global .u32 ok;\n";
        let m = parse(FileId(0), src);
        assert_eq!(m.errors.len(), 2);
        assert_eq!(m.errors[0].message, "expected a variable name, found `;`");
        assert_eq!(
            m.errors[1].message,
            "unknown module-scope directive `.bogus`"
        );
        assert_eq!(m.items.len(), 1);
    }

    #[test]
    fn never_panics() {
        for src in [
            "",
            "{",
            "}",
            ".entry",
            ".func (",
            ".version",
            ".global .b8 x[",
            ".entry k(.param",
            ".entry k() {",
            ".section .a {",
            ".file",
            ".alias a",
            ".visible",
            ".global .u32 x = {{1,2},{3",
            "\u{1F600}",
        ] {
            let _ = parse(FileId(0), src);
        }
    }
}
