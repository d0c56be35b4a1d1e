//! Initializer values: a module-scope variable's initializer as the bytes it
//! puts in memory (PTX ISA 9.0, sections 5.4.4 "Initializers" and 4.6
//! "Constant Expressions").
//!
//! Elements are little-endian, each as wide as the variable's type (`.b8` one
//! byte, `.u32` four, `.f64` eight, a `.v4 .f32` vector four elements of four
//! bytes). Missing trailing elements are zero (LLVM drops trailing zero bytes:
//! `.b8 X[16] = {16, 0, 0, 0, 8}` is sixteen bytes). An initializer that holds
//! a symbol's address (`generic(sym)`, `sym`, `sym+8`) has no value until the
//! module is loaded, and is reported as an error.

use crate::ast::{dims_product, type_size, Variable};
use crate::diagnostic::{Diagnostic, FileId, Span};
use crate::lex::{self, int_value, TokKind, Token};

/// The bytes `v` (from `text`, the whole module) holds before any code runs:
/// its initializer laid out per its type and zero-padded to its declared size,
/// or all zeros without an initializer.
///
/// Errors: an element type without a byte layout (`.texref`, `.pred`), an
/// address initializer, a malformed or overflowing initializer, a value that
/// does not fit the type (a decimal float for an integer type).
pub fn initializer_bytes(
    file: FileId,
    text: &str,
    v: &Variable<'_>,
) -> Result<Vec<u8>, Diagnostic> {
    let elem = match type_size(v.ty) {
        Some(n) if !matches!(v.ty, "pred" | "texref" | "samplerref" | "surfref") => n as usize,
        _ => {
            return Err(Diagnostic::error(
                v.name.span,
                format!(
                    "`{}` has type `.{}`, which has no byte layout",
                    v.symbol(),
                    v.ty
                ),
            ))
        }
    };
    let mut dims = v.dims.clone();
    if v.vector > 1 {
        dims.push(Some(u64::from(v.vector)));
    }
    let declared = v.size_bytes().ok_or_else(|| {
        Diagnostic::error(
            v.name.span,
            format!("`{}` is larger than 2^64 bytes", v.symbol()),
        )
    })?;
    let Some(init) = v.init else {
        // Checked first (`vec!` aborts when it cannot allocate); `vec!`
        // then takes zeroed memory, which the OS hands out lazily.
        let mut probe = Vec::new();
        let len = reserve(&mut probe, declared, v.name.span)?;
        drop(probe);
        return Ok(vec![0; len]);
    };
    let src = text.get(init.range()).unwrap_or("");
    let (toks, errs) = lex::lex(file, src);
    if let Some(e) = errs.into_iter().next() {
        return Err(e);
    }
    let mut p = InitParser {
        src,
        toks: &toks,
        pos: 0,
        base: init.start,
        file,
    };
    let tree = p.node()?;
    if let Some(t) = p.peek() {
        return Err(p.err(t, "unexpected token in initializer"));
    }
    let mut out = Vec::new();
    let ty = Ty {
        name: v.ty,
        width: elem,
    };
    fill(&p, &tree, &dims, ty, &mut out)?;
    grow(&mut out, declared, v.name.span)?;
    Ok(out)
}

/// Zero-pads `out` to `len` bytes (no-op when it is that long already).
/// Errors, at `span`, when this host cannot allocate that much.
fn grow(out: &mut Vec<u8>, len: u64, span: Span) -> Result<(), Diagnostic> {
    let len = reserve(out, len, span)?;
    if len > out.len() {
        out.resize(len, 0);
    }
    Ok(())
}

/// Makes room in `out` for `len` bytes in all; returns `len`. Errors, at
/// `span`, when this host cannot allocate that much.
fn reserve(out: &mut Vec<u8>, len: u64, span: Span) -> Result<usize, Diagnostic> {
    let fail = || {
        Diagnostic::error(
            span,
            format!("{len} bytes of initial value: more than this host can allocate"),
        )
    };
    let n = usize::try_from(len).map_err(|_| fail())?;
    if let Some(more) = n.checked_sub(out.len()).filter(|&m| m > 0) {
        out.try_reserve_exact(more).map_err(|_| fail())?;
    }
    Ok(n)
}

/// The element type: its name (without the dot) and width in bytes.
#[derive(Clone, Copy)]
struct Ty<'a> {
    name: &'a str,
    width: usize,
}

/// An initializer tree: a `{...}` list or one constant expression (a token range).
enum Node {
    List(Vec<Node>, Span),
    Expr(usize, usize),
}

/// A constant value.
#[derive(Clone, Copy, Debug)]
enum Val {
    Int(i128),
    Float(f64),
    /// `0fXXXXXXXX`: exact single-precision bits.
    F32(u32),
    /// `0dXXXXXXXXXXXXXXXX`: exact double-precision bits.
    F64(u64),
}

impl Val {
    fn as_f64(self) -> f64 {
        match self {
            Val::Int(i) => i as f64,
            Val::Float(f) => f,
            Val::F32(b) => f64::from(f32::from_bits(b)),
            Val::F64(b) => f64::from_bits(b),
        }
    }
    fn is_int(self) -> bool {
        matches!(self, Val::Int(_))
    }
}

struct InitParser<'a> {
    src: &'a str,
    toks: &'a [Token],
    pos: usize,
    base: u32,
    file: FileId,
}

impl InitParser<'_> {
    fn peek(&self) -> Option<Token> {
        self.toks.get(self.pos).copied()
    }
    fn span(&self, t: Token) -> Span {
        Span {
            file: self.file,
            start: self.base + t.start,
            end: self.base + t.end,
        }
    }
    fn err(&self, t: Token, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::error(self.span(t), msg)
    }
    fn end_err(&self, msg: &str) -> Diagnostic {
        let end = self.base + self.src.len() as u32;
        Diagnostic::error(
            Span {
                file: self.file,
                start: end,
                end,
            },
            msg,
        )
    }

    /// `{ node, node, ... }` or an expression (up to `,`, `}` or the end).
    fn node(&mut self) -> Result<Node, Diagnostic> {
        let Some(t) = self.peek() else {
            return Err(self.end_err("empty initializer"));
        };
        if t.is(b'{') {
            self.pos += 1;
            let mut items = Vec::new();
            loop {
                match self.peek() {
                    None => return Err(self.err(t, "unclosed `{` in initializer")),
                    Some(c) if c.is(b'}') => {
                        self.pos += 1;
                        let span = Span {
                            end: self.base + c.end,
                            ..self.span(t)
                        };
                        return Ok(Node::List(items, span));
                    }
                    Some(_) => {}
                }
                items.push(self.node()?);
                match self.peek() {
                    Some(c) if c.is(b',') => self.pos += 1,
                    Some(c) if c.is(b'}') => {}
                    Some(c) => return Err(self.err(c, "expected `,` or `}` in initializer")),
                    None => return Err(self.err(t, "unclosed `{` in initializer")),
                }
            }
        }
        let start = self.pos;
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            if depth == 0 && (c.is(b',') || c.is(b'}')) {
                break;
            }
            if c.is(b'(') {
                depth += 1;
            } else if c.is(b')') {
                depth = depth.saturating_sub(1);
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.err(t, "expected a value in initializer"));
        }
        Ok(Node::Expr(start, self.pos))
    }
}

/// Lays out `node` for an array of shape `dims` (outermost first; empty for a
/// scalar) into `out`.
fn fill(
    p: &InitParser<'_>,
    node: &Node,
    dims: &[Option<u64>],
    ty: Ty<'_>,
    out: &mut Vec<u8>,
) -> Result<(), Diagnostic> {
    let Some((first, rest)) = dims.split_first() else {
        return match node {
            Node::Expr(a, b) => {
                let v = Eval {
                    p,
                    pos: *a,
                    end: *b,
                }
                .run()?;
                write_scalar(p, *a, v, ty, out)
            }
            Node::List(items, span) => match items.as_slice() {
                [one] => fill(p, one, dims, ty, out),
                _ => Err(Diagnostic::error(
                    *span,
                    "a list initializes a scalar; give one value",
                )),
            },
        };
    };
    let (items, span) = match node {
        Node::List(items, span) => (items, span),
        Node::Expr(a, _) => {
            return Err(p.err(p.toks[*a], "an array needs a `{...}` initializer"));
        }
    };
    // Bytes per element of this dimension; the parser refused sizes past 64
    // bits, but with a zero dimension the others may multiply past them.
    let too_large = || Diagnostic::error(*span, "the array is larger than 2^64 bytes");
    let row = dims_product(rest.iter().map(|d| d.unwrap_or(0)))
        .and_then(|n| n.checked_mul(ty.width as u64))
        .ok_or_else(too_large)?;
    let begin = out.len();
    for item in items {
        match item {
            Node::List(..) => {
                let at = out.len();
                fill(p, item, rest, ty, out)?;
                let used = (out.len() - at) as u64;
                grow(out, (at as u64).saturating_add(row.max(used)), *span)?;
            }
            Node::Expr(..) => fill(p, item, &[], ty, out)?,
        }
    }
    if let Some(n) = first {
        let cap = n.checked_mul(row).ok_or_else(too_large)?;
        let used = (out.len() - begin) as u64;
        if used > cap {
            return Err(Diagnostic::error(
                *span,
                format!(
                    "initializer holds {} but the array holds {cap}",
                    crate::diagnostic::count(used, "byte", "bytes")
                ),
            ));
        }
        grow(out, (begin as u64).saturating_add(cap), *span)?;
    }
    Ok(())
}

/// Writes one element of type `ty`, little-endian.
fn write_scalar(
    p: &InitParser<'_>,
    at: usize,
    v: Val,
    ty: Ty<'_>,
    out: &mut Vec<u8>,
) -> Result<(), Diagnostic> {
    let tok = p.toks[at];
    let float_ty = matches!(ty.name, "f32" | "f64");
    let bits: u64 = match (v, ty.width) {
        (Val::Int(i), _) if float_ty => {
            if ty.name == "f32" {
                u64::from((i as f32).to_bits())
            } else {
                (i as f64).to_bits()
            }
        }
        (Val::Int(i), _) => i as u64,
        (Val::F32(b), 4) => u64::from(b),
        (Val::F64(b), 8) => b,
        (Val::Float(_) | Val::F64(_), 4) if ty.name == "f32" => {
            u64::from((v.as_f64() as f32).to_bits())
        }
        (Val::Float(_) | Val::F32(_), 8) if ty.name == "f64" => v.as_f64().to_bits(),
        _ => {
            return Err(p.err(
                tok,
                format!(
                    "a floating-point value cannot initialize a `.{}` element; write its bits as an integer",
                    ty.name
                ),
            ))
        }
    };
    out.extend_from_slice(&bits.to_le_bytes()[..ty.width.min(8)]);
    if ty.width > 8 {
        out.resize(out.len() + ty.width - 8, 0);
    }
    Ok(())
}

/// Constant-expression evaluation over a token range, C precedence.
struct Eval<'p, 'a> {
    p: &'p InitParser<'a>,
    pos: usize,
    end: usize,
}

impl Eval<'_, '_> {
    fn run(mut self) -> Result<Val, Diagnostic> {
        let v = self.binary(0)?;
        if self.pos < self.end {
            let t = self.p.toks[self.pos];
            return Err(self.p.err(t, "unexpected token in constant expression"));
        }
        Ok(v)
    }
    fn peek(&self) -> Option<Token> {
        (self.pos < self.end).then(|| self.p.toks[self.pos])
    }
    fn text(&self, t: Token) -> &str {
        t.text(self.p.src)
    }
    /// The binary operator at the cursor and its precedence (higher binds tighter).
    fn op(&self) -> Option<(&'static str, u8, usize)> {
        let t = self.peek()?;
        let next = (self.pos + 1 < self.end).then(|| self.p.toks[self.pos + 1]);
        let two = |c: u8| next.is_some_and(|n| n.is(c) && n.start == t.end);
        let TokKind::Punct(c) = t.kind else {
            return None;
        };
        Some(match c {
            b'|' if two(b'|') => ("||", 1, 2),
            b'&' if two(b'&') => ("&&", 2, 2),
            b'|' => ("|", 3, 1),
            b'^' => ("^", 4, 1),
            b'&' => ("&", 5, 1),
            b'=' if two(b'=') => ("==", 6, 2),
            b'!' if two(b'=') => ("!=", 6, 2),
            b'<' if two(b'<') => ("<<", 8, 2),
            b'>' if two(b'>') => (">>", 8, 2),
            b'<' if two(b'=') => ("<=", 7, 2),
            b'>' if two(b'=') => (">=", 7, 2),
            b'<' => ("<", 7, 1),
            b'>' => (">", 7, 1),
            b'+' => ("+", 9, 1),
            b'-' => ("-", 9, 1),
            b'*' => ("*", 10, 1),
            b'/' => ("/", 10, 1),
            b'%' => ("%", 10, 1),
            _ => return None,
        })
    }
    fn binary(&mut self, min: u8) -> Result<Val, Diagnostic> {
        let mut lhs = self.unary()?;
        while let Some((op, prec, len)) = self.op() {
            if prec < min.max(1) {
                break;
            }
            let at = self.p.toks[self.pos];
            self.pos += len;
            let rhs = self.binary(prec + 1)?;
            lhs = apply(op, lhs, rhs).ok_or_else(|| {
                self.p.err(
                    at,
                    format!("cannot evaluate `{op}` here (division by zero or a float operand)"),
                )
            })?;
        }
        Ok(lhs)
    }
    fn unary(&mut self) -> Result<Val, Diagnostic> {
        let Some(t) = self.peek() else {
            let last = self.p.toks[self.end - 1];
            return Err(self.p.err(last, "expected a value after this token"));
        };
        match t.kind {
            TokKind::Punct(b'-') => {
                self.pos += 1;
                Ok(match self.unary()? {
                    Val::Int(i) => Val::Int(i.wrapping_neg()),
                    f => Val::Float(-f.as_f64()),
                })
            }
            TokKind::Punct(b'+') => {
                self.pos += 1;
                self.unary()
            }
            TokKind::Punct(b'~') => {
                self.pos += 1;
                match self.unary()? {
                    Val::Int(i) => Ok(Val::Int(!i)),
                    _ => Err(self.p.err(t, "`~` needs an integer operand")),
                }
            }
            TokKind::Punct(b'!') => {
                self.pos += 1;
                let v = self.unary()?;
                Ok(Val::Int(i128::from(v.as_f64() == 0.0)))
            }
            TokKind::Punct(b'(') => {
                self.pos += 1;
                let v = self.binary(0)?;
                match self.peek() {
                    Some(c) if c.is(b')') => {
                        self.pos += 1;
                        Ok(v)
                    }
                    _ => Err(self.p.err(t, "unclosed `(` in constant expression")),
                }
            }
            TokKind::Number => {
                self.pos += 1;
                number(self.text(t)).ok_or_else(|| {
                    self.p.err(
                        t,
                        format!("`{}` is not a number PTX understands", self.text(t)),
                    )
                })
            }
            TokKind::Ident => {
                let name = self.text(t);
                let (what, sym) = if matches!(name, "generic" | "mask") {
                    let sym = self
                        .p
                        .toks
                        .get(self.pos + 2)
                        .filter(|s| s.kind == TokKind::Ident)
                        .map_or(name, |s| s.text(self.p.src));
                    (format!("`{name}({sym})`"), sym)
                } else {
                    (format!("`{name}`"), name)
                };
                Err(self
                    .p
                    .err(t, format!("initializer holds the address of `{sym}` ({what}), which is known only once the module is loaded"))
                    .with_help("address initializers have no value in the PTX text; read the variable after loading the module (cuModuleGetGlobal)"))
            }
            _ => Err(self.p.err(
                t,
                format!("unexpected `{}` in constant expression", self.text(t)),
            )),
        }
    }
}

/// The value of a number token: integers (decimal, hex, octal, binary, with
/// a `U` suffix), `0f`/`0d` float bits, decimal floats.
fn number(text: &str) -> Option<Val> {
    let lower = text.as_bytes().get(1).map(u8::to_ascii_lowercase);
    if text.len() > 2 && text.starts_with('0') {
        match lower {
            Some(b'f') if text.len() == 10 => {
                return u32::from_str_radix(&text[2..], 16).ok().map(Val::F32)
            }
            Some(b'd') if text.len() == 18 => {
                return u64::from_str_radix(&text[2..], 16).ok().map(Val::F64)
            }
            _ => {}
        }
    }
    if let Some(i) = int_value(text) {
        return Some(Val::Int(i128::from(i)));
    }
    text.parse::<f64>().ok().map(Val::Float)
}

fn apply(op: &str, a: Val, b: Val) -> Option<Val> {
    if a.is_int() && b.is_int() {
        let (Val::Int(x), Val::Int(y)) = (a, b) else {
            return None;
        };
        let bool_ = |c: bool| Some(Val::Int(i128::from(c)));
        return match op {
            "+" => Some(Val::Int(x.wrapping_add(y))),
            "-" => Some(Val::Int(x.wrapping_sub(y))),
            "*" => Some(Val::Int(x.wrapping_mul(y))),
            "/" => x.checked_div(y).map(Val::Int),
            "%" => x.checked_rem(y).map(Val::Int),
            "<<" => u32::try_from(y)
                .ok()
                .filter(|s| *s < 64)
                .map(|s| Val::Int(x << s)),
            ">>" => u32::try_from(y)
                .ok()
                .filter(|s| *s < 128)
                .map(|s| Val::Int(x >> s)),
            "&" => Some(Val::Int(x & y)),
            "|" => Some(Val::Int(x | y)),
            "^" => Some(Val::Int(x ^ y)),
            "&&" => bool_(x != 0 && y != 0),
            "||" => bool_(x != 0 || y != 0),
            "==" => bool_(x == y),
            "!=" => bool_(x != y),
            "<" => bool_(x < y),
            ">" => bool_(x > y),
            "<=" => bool_(x <= y),
            ">=" => bool_(x >= y),
            _ => None,
        };
    }
    let (x, y) = (a.as_f64(), b.as_f64());
    let bool_ = |c: bool| Some(Val::Int(i128::from(c)));
    match op {
        "+" => Some(Val::Float(x + y)),
        "-" => Some(Val::Float(x - y)),
        "*" => Some(Val::Float(x * y)),
        "/" => Some(Val::Float(x / y)),
        "==" => bool_(x == y),
        "!=" => bool_(x != y),
        "<" => bool_(x < y),
        ">" => bool_(x > y),
        "<=" => bool_(x <= y),
        ">=" => bool_(x >= y),
        _ => None,
    }
}
