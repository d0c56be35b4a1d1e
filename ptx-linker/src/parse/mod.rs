//! Parser: tokens to a [`Module`] (PTX ISA 9.0, section 11 "Directives").
//!
//! **Parsing never fails.** [`parse`] always returns a module; problems are
//! collected in [`Module::errors`] and the parser recovers at the next `;` or
//! the next module-scope directive that starts a line.

use crate::ast::*;
use crate::body;
use crate::diagnostic::{Diagnostic, FileId, Span};
use crate::lex::{int_value, Lexer, TokKind, Token};

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

/// A position in the token stream, plus the errors found so far.
///
/// Tokens are lexed on demand into a window (`toks`); the body scanner
/// reads function bodies from the bytes instead, without tokens.
pub(crate) struct Cursor<'t, 'src> {
    pub(crate) src: &'src str,
    /// The tokens lexed so far since the window last moved.
    pub(crate) toks: &'t mut Vec<Token>,
    /// The current token's index in `toks`; past its end, the next peek
    /// lexes up to it.
    pub(crate) pos: usize,
    /// The end of the token before `toks[0]`.
    base_end: u32,
    pub(crate) lexer: Lexer<'src>,
    pub(crate) file: FileId,
    pub(crate) errors: Vec<Diagnostic>,
    /// Scratch scope tables, reused by every body scan.
    /// Boxed, so that each body scan moves a pointer, not the tables.
    pub(crate) scopes: Option<Box<body::Scopes<'src>>>,
    /// Scratch list of parameters, reused by every parameter list (which
    /// is copied out at its size).
    params: Vec<ParamDecl<'src>>,
    /// Variables generated by module-scope `a<N>` declarations so far.
    generated: u32,
    /// The module-scope symbols named with a `%` so far (almost always
    /// none), which bodies may reference.
    pub(crate) percent_symbols: body::PercentSymbols<'src>,
    /// A `%` symbol was declared after a body ([`parse_reusing`]).
    late_percent: bool,
    /// A function body has been scanned.
    after_body: bool,
    /// Each function declared or defined so far, and variable declared
    /// `.extern`: the first one's linkage, kind (function) and name, which
    /// later ones in the module must agree with, and whether a function's
    /// definition came ([`check_redefinition`]).
    declared: rustc_hash::FxHashMap<&'src str, FirstDeclaration<'src>>,
    /// The module-scope names declared so far, which hide a label from a
    /// branch before it.
    pub(crate) module_names: crate::labels::ModuleNames<'src>,
    /// The short hashes of the bodies' forward targets so far
    /// ([`Module::forward_labels`]).
    pub(crate) forward_labels: Vec<u32>,
    /// Each variable defined so far, with its linkage: ptxas refuses a
    /// second definition in one module ("Duplicate definition of variable"),
    /// which the symbol table takes for `.weak` and `.common` ones.
    defined_vars: rustc_hash::FxHashMap<&'src str, (Linkage, Name<'src>)>,
    /// The prefix of each parameterized variable defined so far (`a` of
    /// `a<4>`): ptxas refuses a second definition of a prefix in one module,
    /// whatever the counts and linkages ("Duplicate definition of variable
    /// 'a<'").
    defined_prefixes: rustc_hash::FxHashMap<&'src str, Name<'src>>,
}

impl<'src> Cursor<'_, 'src> {
    /// Lexes until `toks` holds `n` tokens; false when the input ends first.
    fn fill(&mut self, n: usize) -> bool {
        while self.toks.len() < n {
            if !self.lexer.lex_some(self.toks) {
                return false;
            }
        }
        true
    }
    /// Drops the tokens before the previous one (module scope, between items).
    fn compact(&mut self) {
        if self.pos > 256 && self.pos <= self.toks.len() {
            self.toks.drain(..self.pos - 1);
            self.pos = 1;
        }
    }
    /// Empties the window and continues lexing at `at`, the end of the
    /// last token consumed (the body scanner has read up to there).
    pub(crate) fn restart_at(&mut self, at: usize) {
        self.toks.clear();
        self.pos = 0;
        self.base_end = at as u32;
        self.lexer.rewind(at);
    }
    /// Empties the window; tokens are lexed again from where the lexer is
    /// (the body scanner has read up to there; `prev_end`: the end of the
    /// last token it read).
    pub(crate) fn resume_tokens(&mut self, prev_end: usize) {
        self.toks.clear();
        self.pos = 0;
        self.base_end = prev_end as u32;
    }
    pub(crate) fn at_end(&mut self) -> bool {
        !self.fill(self.pos + 1)
    }
    pub(crate) fn peek(&mut self) -> Option<Token> {
        self.fill(self.pos + 1);
        self.toks.get(self.pos).copied()
    }
    pub(crate) fn peek_at(&mut self, n: usize) -> Option<Token> {
        self.fill(self.pos + n + 1);
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
    pub(crate) fn here(&mut self) -> Span {
        match self.peek() {
            Some(t) => self.span(t),
            None => Span::new(self.file, self.src.len(), self.src.len()),
        }
    }
    /// End offset of the previous token.
    pub(crate) fn prev_end(&mut self) -> u32 {
        if self.pos == 0 {
            return self.base_end;
        }
        self.fill(self.pos);
        match self.toks.get(self.pos - 1).or(self.toks.last()) {
            Some(t) => t.end,
            None => self.base_end,
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

/// The linkage a function or variable `name` declared here has, given the
/// module's earlier declarations, as ptxas 13.5 decides (each pair checked
/// with readelf on `ptxas -c` objects). `defines`: a function with a body, a
/// variable not `.extern`. A function defined after a declaration without a
/// body: a definition with no linkage directive takes a `.visible` or
/// `.weak` declaration's linkage; otherwise both must say the same, and an
/// `.extern` declaration takes no definition in its module ("Inconsistent
/// redefinition"). A variable defined without a linkage directive after an
/// `.extern` declaration is refused too ("'.extern' variable cannot be
/// resolved by a '.static'"). Reports a refused pair (and returns `linkage`).
fn check_redefinition<'src>(
    c: &mut Cursor<'_, 'src>,
    name: Name<'src>,
    linkage: Linkage,
    function: bool,
    defines: bool,
) -> Linkage {
    let Some(&FirstDeclaration {
        linkage: first,
        function: first_is_function,
        name: decl,
        defined,
    }) = c.declared.get(name.text)
    else {
        // Functions always (a declaration after a definition is refused),
        // variables when declared `.extern`.
        if function || !defines {
            let first = FirstDeclaration {
                linkage,
                function,
                name,
                defined: function && defines,
            };
            c.declared.insert(name.text, first);
        }
        return linkage;
    };
    if first_is_function != function {
        return linkage;
    }
    if function && !defines {
        // ptxas: "Duplicate definition of function" after a definition,
        // "Inconsistent redefinition" for two declarations of different linkage.
        let inherits =
            linkage == Linkage::Local && matches!(first, Linkage::Visible | Linkage::Weak);
        if defined || (first != linkage && !inherits) {
            let msg = if defined {
                format!("function `{}` is declared after its definition", name.text)
            } else {
                format!(
                    "function `{}` is declared again with another linkage",
                    name.text
                )
            };
            c.errors.push(
                Diagnostic::error(name.span, msg)
                    .with_label("this declaration")
                    .with_secondary(decl.span, "first declared or defined here")
                    .with_help(
                        "declare a function once, before its definition, with the \
                         definition's linkage; ptxas refuses this module",
                    ),
            );
        }
        return linkage;
    }
    if let (true, Some(e)) = (function, c.declared.get_mut(name.text)) {
        e.defined = true;
    } else if !defines {
        return linkage;
    }
    let agrees = if function {
        match (first, linkage) {
            (Linkage::Visible | Linkage::Weak, Linkage::Local) => return first,
            (a, b) => a == b && a != Linkage::Extern,
        }
    } else {
        !(first == Linkage::Extern && linkage == Linkage::Local)
    };
    if !agrees {
        let word = |l: Linkage| match l {
            Linkage::Local => "no linkage directive (file-local)",
            _ => crate::agree::linkage_word(l),
        };
        c.errors.push(
            Diagnostic::error(
                name.span,
                format!(
                    "{} `{}` is defined with {} after a declaration with {}",
                    if function { "function" } else { "variable" },
                    name.text,
                    word(linkage),
                    word(first)
                ),
            )
            .with_label("this definition")
            .with_secondary(decl.span, "declared here")
            .with_help(
                "give the declaration and the definition the same linkage (a definition \
                 without one takes a `.visible` or `.weak` declaration's); ptxas refuses \
                 this module",
            ),
        );
    }
    linkage
}

/// Where the module-scope symbol `name` was first declared, if it has been
/// so far.
pub(crate) fn module_declaration(c: &Cursor<'_, '_>, name: &str) -> Option<Span> {
    let first = c.declared.get(name).map(|d| d.name.span);
    first
        .or_else(|| c.defined_vars.get(name).map(|(_, n)| n.span))
        .or_else(|| c.module_names.declaration(name))
}

/// The first declaration or definition of a name in a module
/// ([`check_redefinition`]).
#[derive(Clone, Copy)]
struct FirstDeclaration<'src> {
    linkage: Linkage,
    /// A function's (else a variable's).
    function: bool,
    name: Name<'src>,
    /// A function's definition has come (this one or a later one).
    defined: bool,
}

/// A variable `name` defined with `linkage`: reports a second definition in
/// the module when either is `.weak` or `.common` (ptxas 13.5: "Duplicate
/// definition of variable"; the symbol table reports the other repeats).
fn check_defined_twice<'src>(c: &mut Cursor<'_, 'src>, name: Name<'src>, linkage: Linkage) {
    let shared = |l: Linkage| matches!(l, Linkage::Weak | Linkage::Common);
    let earlier = c.defined_vars.get(name.text).copied();
    if let Some((first_linkage, first)) = earlier {
        if !shared(first_linkage) && !shared(linkage) {
            return;
        }
        c.errors.push(
            Diagnostic::error(
                name.span,
                format!("variable `{}` is defined twice in this module", name.text),
            )
            .with_label("a second definition")
            .with_secondary(first.span, "first defined here")
            .with_help(
                "remove one definition; ptxas refuses two in one module, `.weak` and \
                 `.common` ones too",
            ),
        );
    } else {
        c.defined_vars.insert(name.text, (linkage, name));
    }
}

/// Whether the parameterized variables `prefix<N>` defined here repeat a
/// prefix this module defined before (reported: ptxas refuses it); else
/// records it.
fn prefix_defined_twice<'src>(c: &mut Cursor<'_, 'src>, prefix: Name<'src>) -> bool {
    let Some(first) = c.defined_prefixes.get(prefix.text).copied() else {
        c.defined_prefixes.insert(prefix.text, prefix);
        return false;
    };
    c.errors.push(
        Diagnostic::error(
            prefix.span,
            format!(
                "parameterized variables `{}<…>` are defined twice in this module",
                prefix.text
            ),
        )
        .with_label("a second definition of this prefix")
        .with_secondary(first.span, "first defined here")
        .with_help(format!(
            "remove one definition, or give it another prefix; ptxas refuses two \
             definitions of one prefix in a module, whatever their counts and linkages \
             (\"Duplicate definition of variable '{}<'\")",
            prefix.text
        )),
    );
    true
}

/// Records a module-scope symbol's name (`count`: the variables
/// `name<count>` declares, which the caller records) for the bodies that
/// follow; for bodies before and after it, when it starts with `%`, and
/// whether a body came before it.
fn add_module_symbol<'src>(c: &mut Cursor<'_, 'src>, name: &'src str, count: Option<u32>) {
    if count.is_none() {
        c.module_names.add(name);
    }
    if name.starts_with('%') {
        c.late_percent |= c.after_body && !c.percent_symbols.contains(name);
        c.percent_symbols.add(name, count);
    }
}

/// The linkage of `.alias alias, target;`: the aliasee's, as ptxas 13.5 gives
/// it (a file-local function's alias is file-local whatever its own
/// declaration says); for an alias of an alias, its own declaration's.
/// Reports what ptxas refuses: an alias or aliasee not
/// declared as a function before the `.alias` ("Unknown symbol"), and a
/// `.weak` or `.extern` aliasee ("cannot be aliased"); `.visible` then.
fn alias_linkage(
    c: &mut Cursor<'_, '_>,
    m: &Module<'_>,
    span: Span,
    alias: Name<'_>,
    target: Name<'_>,
) -> Linkage {
    let declared = |name: &str| {
        m.items.iter().rev().find_map(|i| match &i.kind {
            ItemKind::Function(f) if f.name.text == name && f.kind == FnKind::Func => {
                Some(f.linkage)
            }
            _ => None,
        })
    };
    let help = "declare both functions before the `.alias` (the alias with the aliasee's \
                prototype), and alias a file-local or `.visible` function";
    for name in [target, alias] {
        if declared(name.text).is_none() {
            c.errors.push(
                Diagnostic::error(
                    name.span,
                    format!(
                        "`.alias`: no function `{}` is declared before it",
                        name.text
                    ),
                )
                .with_help(help),
            );
            return Linkage::Visible;
        }
    }
    // An alias of an alias: ptxas gives it its own declaration's linkage
    // (`.extern` as `.visible`) and refuses one without a directive
    // ("Internal error: alias to unknown symbol").
    let of_alias = m
        .items
        .iter()
        .any(|i| matches!(&i.kind, ItemKind::Alias { alias: a, .. } if a.text == target.text));
    if of_alias {
        return match declared(alias.text) {
            Some(Linkage::Visible | Linkage::Extern) => Linkage::Visible,
            Some(Linkage::Weak) => Linkage::Weak,
            _ => {
                c.errors.push(
                    Diagnostic::error(
                        span,
                        format!(
                            "`.alias {}, {}`: `{}` is an alias, and an alias of an alias needs \
                             a linkage directive on its own declaration",
                            alias.text, target.text, target.text
                        ),
                    )
                    .with_help(
                        "declare the alias `.visible` or `.weak`, or alias the function itself; \
                         ptxas refuses this (\"alias to unknown symbol\")",
                    ),
                );
                Linkage::Visible
            }
        };
    }
    match declared(target.text) {
        Some(l @ (Linkage::Weak | Linkage::Extern | Linkage::Common)) => {
            c.errors.push(
                Diagnostic::error(
                    span,
                    format!(
                        "`.alias {}, {}`: `{}` is {}, which ptxas does not alias",
                        alias.text,
                        target.text,
                        target.text,
                        crate::agree::linkage_word(l)
                    ),
                )
                .with_help(help),
            );
            Linkage::Visible
        }
        Some(l) => l,
        None => Linkage::Visible,
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

/// The byte count of `.align N` (at `at`): ptxas takes a power of two that
/// fits 32 bits. Reports any other and reads it as 1.
fn alignment(c: &mut Cursor<'_, '_>, n: u64, at: Span) -> u32 {
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
        let t = m.target.clone().unwrap();
        assert_eq!((t.arch, t.sm), ("sm_52", 52));
        assert_eq!(t.options, ["texmode_independent", "debug"]);
        assert_eq!(m.address_size.unwrap().0, 64);
        assert_eq!(m.items.len(), 3);
        let ItemKind::Variable(v) = &m.items[1].kind else {
            panic!()
        };
        assert_eq!((v.size_bytes(), v.align_bytes()), (Some(16), 8));
        assert_eq!(m.item_refs(&m.items[1])[0].text, "g");
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
            ".global .u32 a<",
            ".global .u32 a<4",
            ".global .u32 a<4>",
            ".global .u32 a<4>[",
            ".global .u32 a<4> =",
            ".entry k() { .shared .u32 s<",
            ".entry k() { .local .u32 x<4",
            "\u{1F600}",
        ] {
            let _ = parse(FileId(0), src);
        }
    }

    const HEAD: &str = ".version 7.8\n.target sm_90\n.address_size 64\n";

    fn vars<'a>(m: &'a Module<'_>) -> Vec<&'a Variable<'a>> {
        m.items
            .iter()
            .filter_map(|i| match &i.kind {
                ItemKind::Variable(v) => Some(v),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_declaration_and_a_definition_agree_on_linkage_as_ptxas_requires() {
        // Every pair checked with ptxas 13.5 (readelf for the linkage it gives): a function
        // declared, then defined ("Inconsistent redefinition" where refused); a variable
        // declared or defined, then defined ("Duplicate definition of variable", "'.extern'
        // variable 'x' cannot be resolved by a '.static'"). `V`: accepted, the definition's
        // linkage; `v` / `w`: accepted, `.visible` / `.weak` taken from the declaration.
        let l = ["", ".visible ", ".extern ", ".weak ", ".common "];
        let functions = [
            ("", "", "V"),
            ("", ".visible ", "x"),
            ("", ".weak ", "x"),
            (".visible ", "", "v"),
            (".visible ", ".visible ", "V"),
            (".visible ", ".weak ", "x"),
            (".extern ", "", "x"),
            (".extern ", ".visible ", "x"),
            (".extern ", ".weak ", "x"),
            (".weak ", "", "w"),
            (".weak ", ".visible ", "x"),
            (".weak ", ".weak ", "V"),
        ];
        for (decl, def, want) in functions {
            let src = format!(
                "{HEAD}{decl}.func (.reg .u32 r) f();\n{def}.func (.reg .u32 r) f()\n{{\nret;\n}}\n"
            );
            let m = parse(FileId(0), &src);
            let f = match &m.items.last().unwrap().kind {
                ItemKind::Function(f) => f,
                _ => panic!("not a function"),
            };
            match want {
                "x" => assert!(
                    errors(&src).contains("function `f` is defined with"),
                    "{decl:?} {def:?}: {:?}",
                    m.errors
                ),
                _ => {
                    assert!(m.errors.is_empty(), "{decl:?} {def:?}: {:?}", m.errors);
                    let (linkage, inherited) = match want {
                        "v" => (Linkage::Visible, true),
                        "w" => (Linkage::Weak, true),
                        _ => (f.linkage, false),
                    };
                    assert_eq!((f.linkage, f.linkage_inherited), (linkage, inherited));
                }
            }
        }
        // A declaration after the definition ("Duplicate definition of function"), and
        // two declarations of different linkage ("Inconsistent redefinition").
        let body = "{\nret;\n}\n";
        for (src, want) in [
            (
                format!("{HEAD}.visible .func f()\n{body}.visible .func f();\n"),
                "function `f` is declared after its definition",
            ),
            (
                format!("{HEAD}.func f();\n.visible .func f();\n.func f()\n{body}"),
                "function `f` is declared again with another linkage",
            ),
        ] {
            assert!(errors(&src).contains(want), "{src:?}: {}", errors(&src));
        }
        for first in ["", ".visible ", ".weak "] {
            let src = format!("{HEAD}{first}.func f();\n.func f();\n.func f()\n{body}");
            assert_eq!(errors(&src), "", "{first:?}");
        }
        // Variables: the parser refuses `.extern` then file-local, and a second definition
        // when either is `.weak` or `.common` (the symbol table refuses the other repeats).
        for first in l {
            for second in l {
                let src = format!("{HEAD}{first}.global .u32 x;\n{second}.global .u32 x;\n");
                let e = errors(&src);
                let refused = match (first, second) {
                    (".extern ", "") => e.contains("variable `x` is defined with no linkage"),
                    (".extern ", _) | (_, ".extern ") => e.is_empty(),
                    (a, b) if [a, b].iter().any(|l| [".weak ", ".common "].contains(l)) => {
                        e.contains("variable `x` is defined twice in this module")
                    }
                    _ => e.is_empty(),
                };
                assert!(refused, "{first:?} {second:?}: {e}");
            }
        }
    }

    #[test]
    fn the_sink_cannot_name_a_symbol() {
        // ptxas 13.5: "Parsing error near '_'"; `_x` and `__` are names.
        for src in [
            format!("{HEAD}.global .u32 a, _;\n"),
            format!("{HEAD}.func _()\n{{\nret;\n}}\n"),
        ] {
            assert!(
                errors(&src).contains("`_` cannot name a variable or function"),
                "{src:?}"
            );
        }
        assert_eq!(errors(&format!("{HEAD}.global .u32 _x, __;\n")), "");
    }

    #[test]
    fn an_alias_is_refused_where_ptxas_refuses_it() {
        // ptxas 13.5: "Function 'f' with .weak scope cannot be aliased" (`.extern` too),
        // "Unknown symbol 'f'" when the aliasee or the alias is not declared before.
        let f = |l: &str| format!("{l}.func (.reg .u32 r) f()\n{{\n  ret;\n}}\n");
        let h = ".func (.reg .u32 r) h();\n";
        let cases = [
            (
                format!("{HEAD}{}{h}.alias h, f;\n", f(".weak ")),
                "`.alias h, f`: `f` is `.weak`",
            ),
            (
                format!("{HEAD}.extern .func (.reg .u32 r) f();\n{h}.alias h, f;\n"),
                "`.alias h, f`: `f` is `.extern`",
            ),
            (
                format!("{HEAD}{h}.alias h, f;\n{}", f("")),
                "no function `f` is declared",
            ),
            (
                format!("{HEAD}{}.alias h, f;\n", f("")),
                "no function `h` is declared",
            ),
        ];
        for (src, want) in cases {
            let e = errors(&src);
            assert!(e.contains(want), "{src:?}: {e}");
        }
        for l in ["", ".visible "] {
            let src = format!("{HEAD}{}{h}.alias h, f;\n", f(l));
            let m = parse(FileId(0), &src);
            assert!(m.errors.is_empty(), "{:?}", m.errors);
            let want = if l.is_empty() {
                Linkage::Local
            } else {
                Linkage::Visible
            };
            assert_eq!(m.items.last().unwrap().linkage(), Some(want));
            // An alias of that alias takes its own declaration's linkage (`.extern` as
            // `.visible`), and needs one ("Internal error: alias to unknown symbol").
            for (l2, want) in [
                (".visible ", Linkage::Visible),
                (".extern ", Linkage::Visible),
                (".weak ", Linkage::Weak),
            ] {
                let src = format!(
                    "{HEAD}{}{h}.alias h, f;\n{l2}.func (.reg .u32 r) h2();\n.alias h2, h;\n",
                    f(l)
                );
                let m = parse(FileId(0), &src);
                assert!(m.errors.is_empty(), "{:?}", m.errors);
                assert_eq!(
                    m.items.last().unwrap().linkage(),
                    Some(want),
                    "{l:?} {l2:?}"
                );
            }
            let src = format!(
                "{HEAD}{}{h}.alias h, f;\n.func (.reg .u32 r) h2();\n.alias h2, h;\n",
                f(l)
            );
            assert!(
                errors(&src).contains("an alias of an alias needs"),
                "{src:?}"
            );
        }
    }

    #[test]
    fn parameterized_names_expand_to_one_item_each() {
        let src = format!(
            "{HEAD}.visible .global .align 8 .u32 x, a<3>, y;\n.extern .shared .b8 s<2>;\n"
        );
        let m = parse(FileId(0), &src);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let names: Vec<&str> = m.items.iter().filter_map(|i| i.symbol()).collect();
        assert_eq!(names, ["x", "a0", "a1", "a2", "y", "s0", "s1"]);
        let v = vars(&m);
        // `a2`: the prefix `a`, spanning `a<3>`; index 2 of 3; no array, no initializer.
        let a2 = v[3];
        assert_eq!(a2.name.text, "a");
        assert_eq!(&src[a2.name.span.range()], "a<3>");
        let g = a2.generated.as_ref().unwrap();
        assert_eq!((&*g.name, g.index, g.count), ("a2", 2, 3));
        assert_eq!(
            (a2.linkage, a2.space, a2.align, a2.ty),
            (Linkage::Visible, Space::Global, Some(8), "u32")
        );
        assert_eq!(
            (a2.size_bytes(), a2.align_bytes(), a2.init),
            (Some(4), 8, None)
        );
        assert_eq!(a2.parameterized().as_deref(), Some("a<3>"));
        assert_eq!(v[0].parameterized(), None);
        // The items share the declaration's text; the prefix is everything up to the names.
        assert_eq!(m.items[0].span, m.items[2].span);
        assert_eq!(
            &src[m.items[2].span.start as usize..a2.prefix_end as usize],
            ".visible .global .align 8 .u32"
        );
        let s1 = v[6];
        assert_eq!(
            (s1.linkage, s1.space, s1.symbol()),
            (Linkage::Extern, Space::Shared, "s1")
        );
        assert!(!m.items[6].is_definition());
    }

    #[test]
    fn parameterized_name_forms_ptxas_takes() {
        // Spaces inside `< >`, a hex count, and `<0>` (declares nothing).
        let src = format!("{HEAD}.global .u32 a < 2 >, h<0x2>, z<0>;\n");
        let m = parse(FileId(0), &src);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let names: Vec<&str> = m.items.iter().filter_map(|i| i.symbol()).collect();
        assert_eq!(names, ["a0", "a1", "h0", "h1"]);
    }

    /// The one-line rendering of a module's errors.
    fn errors(src: &str) -> String {
        let m = parse(FileId(0), src);
        crate::diagnostic::render_short(
            crate::diagnostic::Sources {
                files: &[("a.ptx", src)],
            },
            &m.errors,
        )
    }

    #[test]
    fn parameterized_name_misuse_is_reported_with_the_fix() {
        assert_eq!(
            errors(&format!("{HEAD}.global .u32 a<4>[2];\n")),
            "a.ptx:4:14: error: parameterized variable name `a<4>` cannot be an array\n\
             a.ptx:4:18: note: not allowed after a parameterized name\n\
             help: declare the arrays one by one (`a0[..], a1[..]`), or drop the `<4>`\n"
        );
        assert_eq!(
            errors(&format!("{HEAD}.global .u32 a<2> = {{1, 2}};\n")),
            "a.ptx:4:14: error: parameterized variable name `a<2>` cannot have an initializer\n\
             a.ptx:4:19: note: not allowed after a parameterized name\n\
             help: declare the variables one by one to initialize them (`a0 = .., a1 = ..`)\n"
        );
        assert_eq!(
            errors(&format!("{HEAD}.global .u32 a<n>;\n")),
            "a.ptx:4:16: error: expected a count and `>` after `a<`\n\
             help: write how many variables to declare: `a<4>` declares `a0` .. `a3`\n"
        );
        assert_eq!(
            errors(&format!("{HEAD}.global .u32 a<4294967296>;\n")),
            "a.ptx:4:14: error: parameterized variable name `a<4294967296>`: the count does not fit 32 bits\n\
             help: declare an array `a[4294967296]` instead\n"
        );
        // Recovery: the next declaration still parses.
        let src = format!("{HEAD}.global .u32 a<4>[2];\n.global .u32 b<2>;\n");
        let m = parse(FileId(0), &src);
        assert_eq!(m.errors.len(), 1);
        assert_eq!(m.items.len(), 2);
    }

    #[test]
    fn generated_names_are_capped_per_module() {
        let half = MAX_GENERATED_NAMES / 2;
        let ok = format!("{HEAD}.global .u8 a<{half}>;\n.global .u8 b<{half}>;\n");
        let m = parse(FileId(0), &ok);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        assert_eq!(m.items.len(), MAX_GENERATED_NAMES as usize);
        assert_eq!(
            m.items.last().unwrap().symbol(),
            Some(&*format!("b{}", half - 1))
        );
        // One more name is too many: that declaration is refused, the others stay.
        let over = format!(
            "{HEAD}.global .u8 a<{half}>;\n.global .u8 b<{}>;\n.global .u8 c;\n",
            half + 1
        );
        assert_eq!(
            errors(&over),
            format!(
                "a.ptx:5:13: error: parameterized variable name `b<{n}>` brings the module's \
                 generated variables from {half} to {total}; the linker takes at most \
                 {MAX_GENERATED_NAMES} per module\n\
                 help: declare an array `b[{n}]` instead and address its elements as `[b+OFFSET]`\n",
                n = half + 1,
                total = MAX_GENERATED_NAMES + 1
            )
        );
        let m = parse(FileId(0), &over);
        assert_eq!(m.items.len(), half as usize + 1);
        assert_eq!(m.items.last().unwrap().symbol(), Some("c"));
    }

    /// The rich rendering (with labels) of a module's errors.
    fn rich_errors(src: &str) -> String {
        let m = parse(FileId(0), src);
        crate::diagnostic::render_rich(
            crate::diagnostic::Sources {
                files: &[("a.ptx", src)],
            },
            &m.errors,
        )
    }

    #[test]
    fn generated_names_cap_names_the_declaration_that_crosses_it() {
        let max = MAX_GENERATED_NAMES;
        // A full module, then one name more: the running total is what is over.
        let src = format!("{HEAD}.global .u32 a<{max}>;\n.global .u32 b<1>;\n");
        let short = errors(&src);
        assert_eq!(
            short,
            format!(
                "a.ptx:5:14: error: parameterized variable name `b<1>` brings the module's \
                 generated variables from {max} to {}; the linker takes at most {max} per module\n\
                 help: declare an array `b[1]` instead and address its elements as `[b+OFFSET]`\n",
                max + 1
            )
        );
        let rich = rich_errors(&src);
        assert!(
            rich.contains(&format!(
                "1 variable here, after {max} variables from the module's earlier parameterized names"
            )),
            "{rich}"
        );
        assert!(!rich.contains("1 variables"), "{rich}");
        // One declaration alone over the cap says so.
        let src = format!("{HEAD}.global .u32 a<{}>;\n", max + 1);
        assert_eq!(
            errors(&src),
            format!(
                "a.ptx:4:14: error: parameterized variable name `a<{n}>` declares {n} variables; \
                 the linker takes at most {max} per module\n\
                 help: declare an array `a[{n}]` instead and address its elements as `[a+OFFSET]`\n",
                n = max + 1
            )
        );
    }

    #[test]
    fn function_scope_parameterized_names_shadow_module_symbols() {
        let src = format!(
            "{HEAD}.visible .entry k()\n{{\n.local .u32 x<4>;\n.reg .b32 r<2>;\n.shared .align 8 .u32 s<3>;\n\
             ld.local.u32 r1, [x3];\nld.local.u32 r1, [x03];\nst.shared.u32 [s2], r1;\n\
             st.global.u32 [x4], r1;\nst.global.u32 [s], r1;\nst.global.u32 [r01], r1;\nret;\n}}\n"
        );
        let m = parse(FileId(0), &src);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let refs: Vec<&str> = m.item_refs(&m.items[0]).iter().map(|n| n.text).collect();
        // `x3`, `x03`, `s2`, `r1`, `r01` are the function's own; `x4` and `s` are not generated.
        assert_eq!(refs, ["x4", "s"]);
        let ItemKind::Function(f) = &m.items[0].kind else {
            panic!()
        };
        // `s2` is the one name used: ptxas allocates it and one element for
        // the declaration, each at 8-byte alignment: 8 + 4 bytes.
        assert_eq!(f.body.as_ref().unwrap().shared, [(12, 8)]);
    }
}
