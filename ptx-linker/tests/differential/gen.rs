//! Random, well-formed multi-module PTX programs.
//!
//! A [`Program`] is two or three modules over one pool of global names:
//! variables [`VARS`] and functions [`FUNCS`]. Each name gets a base shape
//! (a variable's state space, type, count and alignment; a function's
//! prototype), and each module either leaves the name out, declares it
//! `.extern`, or defines it with some linkage (`.visible`, `.weak`,
//! `.common`, none: file-local), mostly with the base shape and sometimes
//! with a changed one, so definitions agree often and disagree sometimes.
//! Variables may be initialized with values or with another symbol's
//! address (`= g1`, `= generic(g1)`, `= f0`); a module may declare the
//! dynamic shared array [`DYN`]; modules may carry `.file`/`.loc`.
//!
//! Every module is valid on its own (`ptxas -c` accepts it): names are
//! declared before use (functions first, then variables, address
//! initializers last), and its kernel `k<m>` loads every variable it
//! declares and calls every function, so all of them are live. The kernel
//! may branch forward to a label named like a symbol that only other
//! modules have ([`ModuleSpec::label`]).

use std::fmt::Write;

use proptest::prelude::*;

/// Global variable names. ptxas takes a leading `%` in a symbol's name,
/// and a body's `%g2` then names the variable: one of each kind has one.
pub const VARS: [&str; 3] = ["g0", "g1", "%g2"];
/// Global function names.
pub const FUNCS: [&str; 2] = ["f0", "%f1"];
/// The dynamic shared-memory array (`.extern .shared .b8 dyn[]`).
pub const DYN: &str = "dyn";
/// Names a kernel's label may have: a symbol of another module (the merged
/// module declares it before every function, so ptxas would take a forward
/// branch's target for that symbol unless the linker renames the label).
const LABELS: [&str; 8] = ["g0", "g1", "%g2", "f0", "%f1", "k0", "k1", "k2"];

/// A definition's linkage directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// `.visible`
    Visible,
    /// `.weak`
    Weak,
    /// `.common` (variables in `.global` only)
    Common,
    /// none: file-local
    Local,
}

impl Link {
    fn directive(self) -> &'static str {
        match self {
            Link::Visible => ".visible ",
            Link::Weak => ".weak ",
            Link::Common => ".common ",
            Link::Local => "",
        }
    }
}

/// A variable's state space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    /// `.global`
    Global,
    /// `.const`
    Const,
    /// `.shared`
    Shared,
}

impl Space {
    /// The space's name, as in `ld.global`.
    pub fn word(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Const => "const",
            Space::Shared => "shared",
        }
    }
}

/// A variable's element type: name and size in bytes.
const TYPES: [(&str, u32); 5] = [("b8", 1), ("u16", 2), ("u32", 4), ("f32", 4), ("u64", 8)];

/// A variable's shape: where it lives and how it is laid out.
#[derive(Debug, Clone, PartialEq)]
pub struct VarShape {
    /// State space.
    pub space: Space,
    /// Index into [`TYPES`].
    pub ty: usize,
    /// Array length; `None` for a scalar.
    pub count: Option<u32>,
    /// `.align`, when given.
    pub align: Option<u32>,
}

impl VarShape {
    /// Size in bytes.
    pub fn size(&self) -> u64 {
        u64::from(TYPES[self.ty].1) * u64::from(self.count.unwrap_or(1))
    }

    fn is_u64(&self) -> bool {
        TYPES[self.ty].0 == "u64"
    }
}

/// A variable's initializer.
#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    /// None.
    None,
    /// These element values (as many as fit).
    Values(Vec<u32>),
    /// The address of `VARS[i]` (or `FUNCS[i - VARS.len()]`), `generic()` or not.
    Address { target: usize, generic: bool },
}

/// What one module does with one variable name.
#[derive(Debug, Clone, PartialEq)]
pub enum VarRole {
    /// Nothing.
    Absent,
    /// `.extern` declaration; `open` writes `[]`.
    Extern { shape: VarShape, open: bool },
    /// A definition.
    Define {
        link: Link,
        shape: VarShape,
        init: Init,
    },
}

/// A parameter or return value type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamTy {
    /// `.b32`
    B32,
    /// `.u32`
    U32,
    /// `.f32`
    F32,
    /// `.b64`
    B64,
    /// `.align A .b8 x[8]`
    Bytes8 { align: u32 },
}

impl ParamTy {
    fn decl(self, name: &str) -> String {
        match self {
            ParamTy::B32 => format!(".param .b32 {name}"),
            ParamTy::U32 => format!(".param .u32 {name}"),
            ParamTy::F32 => format!(".param .f32 {name}"),
            ParamTy::B64 => format!(".param .b64 {name}"),
            ParamTy::Bytes8 { align } => format!(".param .align {align} .b8 {name}[8]"),
        }
    }

    fn store(self, name: &str) -> String {
        match self {
            ParamTy::B32 => format!("st.param.b32 [{name}], 7;"),
            ParamTy::U32 => format!("st.param.u32 [{name}], 7;"),
            ParamTy::F32 => format!("st.param.f32 [{name}], 0f3F800000;"),
            ParamTy::B64 => format!("st.param.b64 [{name}], 7;"),
            ParamTy::Bytes8 { .. } => format!("st.param.b8 [{name}], 7;"),
        }
    }
}

/// A function's prototype.
#[derive(Debug, Clone, PartialEq)]
pub struct Proto {
    /// The return value, if any.
    pub ret: Option<ParamTy>,
    /// The parameters.
    pub params: Vec<ParamTy>,
}

/// What one module does with one function name.
#[derive(Debug, Clone, PartialEq)]
pub enum FuncRole {
    /// Nothing.
    Absent,
    /// `.extern .func` declaration.
    Extern(Proto),
    /// A definition (`Common` is never generated for functions) whose body
    /// loads `VARS[uses]` when the module has it; `marker` makes bodies differ.
    Define {
        link: Link,
        proto: Proto,
        uses: usize,
        marker: u32,
    },
}

/// One generated module.
#[derive(Debug, Clone, PartialEq)]
pub struct ModuleSpec {
    /// `.version` minor (7.x or 8.x), as `(major, minor)`.
    pub version: (u32, u32),
    /// Per [`VARS`] entry.
    pub vars: Vec<VarRole>,
    /// Per [`FUNCS`] entry.
    pub funcs: Vec<FuncRole>,
    /// `.align` of `.extern .shared .b8 dyn[]`, if declared.
    pub dyn_shared: Option<u32>,
    /// `.file`/`.loc` directives.
    pub debug_lines: bool,
    /// A forward branch in the kernel to a label named `LABELS[i]`,
    /// written when the module declares no symbol of that name.
    pub label: Option<usize>,
}

impl ModuleSpec {
    /// Whether `VARS[i]` is defined here with an initializer (as written:
    /// one that cannot be written in this module is dropped).
    pub fn initialized(&self, i: usize) -> bool {
        init_text(self, i).is_some()
    }

    /// Whether an initializer here holds a function's address.
    pub fn takes_function_address(&self) -> bool {
        (0..VARS.len()).any(|i| {
            self.initialized(i)
                && matches!(&self.vars[i], VarRole::Define { init: Init::Address { target, .. }, .. } if *target >= VARS.len())
        })
    }
}

/// A generated program: its modules in link order.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    /// The modules.
    pub modules: Vec<ModuleSpec>,
}

impl Program {
    /// Variables some module initializes with the address of a variable it
    /// sees in `.const`: that address is an offset in the constant bank,
    /// resolved without a relocation, so it depends on how the linked
    /// image lays the bank out.
    pub fn const_address_holders(&self) -> Vec<&'static str> {
        (0..VARS.len())
            .filter(|&i| {
                self.modules.iter().any(|m| {
                    m.initialized(i)
                        && matches!(&m.vars[i], VarRole::Define { init: Init::Address { target, .. }, .. }
                            if *target < VARS.len() && seen_space(&m.vars[*target]) == Some(Space::Const))
                })
            })
            .map(|i| VARS[i])
            .collect()
    }

    /// Each module's file name and PTX text.
    pub fn render(&self) -> Vec<(String, String)> {
        self.modules
            .iter()
            .enumerate()
            .map(|(m, spec)| (format!("m{m}.ptx"), render_module(m, spec)))
            .collect()
    }
}

fn space() -> impl Strategy<Value = Space> {
    prop_oneof![4 => Just(Space::Global), 2 => Just(Space::Const), 1 => Just(Space::Shared)]
}

fn var_shape() -> impl Strategy<Value = VarShape> {
    (
        space(),
        0..TYPES.len(),
        prop_oneof![1 => Just(None), 3 => (1u32..5).prop_map(Some)],
        prop_oneof![1 => Just(None), 1 => Just(Some(4u32)), 1 => Just(Some(8)), 1 => Just(Some(16))],
    )
        .prop_map(|(space, ty, count, align)| VarShape {
            space,
            ty,
            count,
            // `.align` below the element size is refused by ptxas.
            align: align.map(|a| a.max(TYPES[ty].1)),
        })
}

/// `base` most of the time; otherwise `base` with one thing changed.
fn var_variant(base: VarShape) -> impl Strategy<Value = VarShape> {
    let b = base.clone();
    prop_oneof![
        6 => Just(base),
        1 => space().prop_map({ let b = b.clone(); move |space| VarShape { space, ..b.clone() } }),
        1 => (1u32..5).prop_map({ let b = b.clone(); move |n| VarShape { count: Some(n), ..b.clone() } }),
        1 => prop_oneof![Just(8u32), Just(16)].prop_map({ let b = b.clone(); move |a| VarShape { align: Some(a.max(TYPES[b.ty].1)), ..b.clone() } }),
        // Same size, another element type (`.b8 x[8]` vs `.u64 x`).
        1 => Just(VarShape { ty: 0, count: Some(b.size() as u32), align: b.align.or(Some(TYPES[b.ty].1)), ..b.clone() }),
    ]
}

fn link() -> impl Strategy<Value = Link> {
    prop_oneof![
        3 => Just(Link::Visible),
        4 => Just(Link::Weak),
        3 => Just(Link::Common),
        2 => Just(Link::Local),
    ]
}

fn init() -> impl Strategy<Value = Init> {
    prop_oneof![
        3 => Just(Init::None),
        2 => proptest::collection::vec(0u32..300, 1..4).prop_map(Init::Values),
        2 => (0..VARS.len() + FUNCS.len(), any::<bool>())
            .prop_map(|(target, generic)| Init::Address { target, generic }),
    ]
}

fn var_role(base: VarShape) -> impl Strategy<Value = VarRole> {
    prop_oneof![
        2 => Just(VarRole::Absent),
        2 => (var_variant(base.clone()), prop_oneof![3 => Just(false), 1 => Just(true)])
            .prop_map(|(shape, open)| VarRole::Extern { shape, open }),
        6 => (link(), var_variant(base), init()).prop_map(|(link, mut shape, init)| {
            if link == Link::Common {
                // ptxas: ".common variables must be declared in .global space".
                shape.space = Space::Global;
            }
            VarRole::Define { link, shape, init }
        }),
    ]
}

fn param_ty() -> impl Strategy<Value = ParamTy> {
    prop_oneof![
        3 => Just(ParamTy::B32),
        1 => Just(ParamTy::U32),
        1 => Just(ParamTy::F32),
        2 => Just(ParamTy::B64),
        1 => prop_oneof![Just(4u32), Just(8)].prop_map(|align| ParamTy::Bytes8 { align }),
    ]
}

fn proto() -> impl Strategy<Value = Proto> {
    (
        proptest::option::weighted(0.5, param_ty()),
        proptest::collection::vec(param_ty(), 0..3),
    )
        .prop_map(|(ret, params)| Proto { ret, params })
}

/// `base` most of the time; otherwise another prototype.
fn proto_variant(base: Proto) -> impl Strategy<Value = Proto> {
    prop_oneof![6 => Just(base), 1 => proto()]
}

fn func_role(base: Proto) -> impl Strategy<Value = FuncRole> {
    prop_oneof![
        2 => Just(FuncRole::Absent),
        3 => proto_variant(base.clone()).prop_map(FuncRole::Extern),
        5 => (
            prop_oneof![3 => Just(Link::Visible), 4 => Just(Link::Weak), 1 => Just(Link::Local)],
            proto_variant(base),
            0..VARS.len(),
            0u32..1000,
        )
            .prop_map(|(link, proto, uses, marker)| FuncRole::Define { link, proto, uses, marker }),
    ]
}

fn module(var_bases: Vec<VarShape>, protos: Vec<Proto>) -> impl Strategy<Value = ModuleSpec> {
    let vars: Vec<_> = var_bases.into_iter().map(var_role).collect();
    let funcs: Vec<_> = protos.into_iter().map(func_role).collect();
    (
        prop_oneof![Just((7u32, 8u32)), Just((8, 0)), Just((8, 5))],
        vars,
        funcs,
        proptest::option::weighted(0.3, prop_oneof![Just(4u32), Just(8), Just(16)]),
        any::<bool>(),
    )
        .prop_map(
            |(version, vars, funcs, dyn_shared, debug_lines)| ModuleSpec {
                version,
                vars,
                funcs,
                dyn_shared,
                debug_lines,
                label: None,
            },
        )
}

/// A program of two or three modules.
pub fn program() -> impl Strategy<Value = Program> {
    (
        proptest::collection::vec(var_shape(), VARS.len()),
        proptest::collection::vec(proto(), FUNCS.len()),
        2usize..4,
    )
        .prop_flat_map(|(vars, protos, n)| {
            proptest::collection::vec(module(vars, protos), n)
                .prop_map(|modules| Program { modules })
        })
}

/// Each module's [`ModuleSpec::label`], drawn after the [`program`] (so
/// that a seed gives the program it gave before labels were drawn).
pub fn labels(modules: usize) -> impl Strategy<Value = Vec<Option<usize>>> {
    proptest::collection::vec(proptest::option::weighted(0.4, 0..LABELS.len()), modules)
}

/// The space a module sees `VARS[i]` in, if it declares it.
fn seen_space(role: &VarRole) -> Option<Space> {
    match role {
        VarRole::Absent => None,
        VarRole::Extern { shape, .. } | VarRole::Define { shape, .. } => Some(shape.space),
    }
}

fn var_line(name: &str, role: &VarRole, init: &str) -> String {
    let (prefix, shape, open) = match role {
        VarRole::Absent => return String::new(),
        VarRole::Extern { shape, open } => (".extern ", shape, *open),
        VarRole::Define { link, shape, .. } => (link.directive(), shape, false),
    };
    let mut s = format!("{prefix}.{} ", shape.space.word());
    if let Some(a) = shape.align {
        let _ = write!(s, ".align {a} ");
    }
    let _ = write!(s, ".{} {name}", TYPES[shape.ty].0);
    match (open, shape.count) {
        (true, _) => s.push_str("[]"),
        (false, Some(n)) => {
            let _ = write!(s, "[{n}]");
        }
        (false, None) => {}
    }
    s.push_str(init);
    s.push_str(";\n");
    s
}

/// The initializer text ` = ...` of `VARS[i]` in `spec`, or `None` when
/// the initializer cannot be written in this module (it is then dropped).
fn init_text(spec: &ModuleSpec, i: usize) -> Option<String> {
    let VarRole::Define { shape, init, .. } = &spec.vars[i] else {
        return None;
    };
    if shape.space == Space::Shared {
        return None;
    }
    match init {
        Init::None => None,
        Init::Values(v) => {
            let n = v.len().min(shape.count.unwrap_or(1) as usize);
            let (ty, bytes) = TYPES[shape.ty];
            let max = if bytes >= 4 {
                u32::MAX
            } else {
                (1 << (8 * bytes)) - 1
            };
            let vals: Vec<String> = v[..n]
                .iter()
                .map(|&x| {
                    if ty == "f32" {
                        format!("{}.5", x)
                    } else {
                        (x.min(max)).to_string()
                    }
                })
                .collect();
            Some(match shape.count {
                Some(_) => format!(" = {{{}}}", vals.join(", ")),
                None => format!(" = {}", vals[0]),
            })
        }
        Init::Address { target, generic } => {
            if !shape.is_u64() || *target == i || !address_target_ok(spec, *target) {
                return None;
            }
            let name = if *target < VARS.len() {
                VARS[*target]
            } else {
                FUNCS[*target - VARS.len()]
            };
            let generic = *generic && *target < VARS.len();
            let value = if generic {
                format!("generic({name})")
            } else {
                name.to_string()
            };
            Some(match shape.count {
                Some(_) => format!(" = {{{value}}}"),
                None => format!(" = {value}"),
            })
        }
    }
}

/// An address initializer may name a function the module declares, or a
/// variable in `.global`/`.const` without an address initializer (so it is
/// declared before, with no cycles).
fn address_target_ok(spec: &ModuleSpec, target: usize) -> bool {
    if target >= VARS.len() {
        return spec.funcs[target - VARS.len()] != FuncRole::Absent;
    }
    let space = seen_space(&spec.vars[target]);
    // Whether it has an address initializer at all, not whether that one
    // is written: that could ask this one back (`g0 = g1`, `g1 = g0`).
    let plain = !matches!(
        &spec.vars[target],
        VarRole::Define {
            init: Init::Address { .. },
            ..
        }
    );
    matches!(space, Some(Space::Global | Space::Const)) && plain
}

fn proto_text(name: &str, p: &Proto, prefix: &str) -> String {
    let mut s = String::new();
    if let Some(r) = p.ret {
        let _ = write!(s, "({}) ", r.decl(&format!("{prefix}r")));
    }
    let params: Vec<String> = p
        .params
        .iter()
        .enumerate()
        .map(|(i, t)| t.decl(&format!("{prefix}p{i}")))
        .collect();
    let _ = write!(s, "{name}({})", params.join(", "));
    s
}

fn func_proto(role: &FuncRole) -> Option<&Proto> {
    match role {
        FuncRole::Absent => None,
        FuncRole::Extern(p) | FuncRole::Define { proto: p, .. } => Some(p),
    }
}

/// `ld.<space>.u8 %rs1, [name]; st.global.u8 [%rd1], %rs1;`: a use that
/// keeps `name` live (`%rd1` holds the kernel's output pointer).
fn load_store(out: &mut String, space: Space, name: &str) {
    let _ = writeln!(out, "\tld.{}.u8 %rs1, [{name}];", space.word());
    let _ = writeln!(out, "\tst.global.u8 [%rd1], %rs1;");
}

fn loc(out: &mut String, spec: &ModuleSpec, line: usize) {
    if spec.debug_lines {
        let _ = writeln!(out, "\t.loc 1 {line} 0");
    }
}

fn render_module(m: usize, spec: &ModuleSpec) -> String {
    let mut s = format!(
        ".version {}.{}\n.target sm_90\n.address_size 64\n\n",
        spec.version.0, spec.version.1
    );
    if spec.debug_lines {
        let _ = writeln!(s, ".file 1 \"m{m}.cu\"\n.file 2 \"shared.h\"\n");
    }
    // Functions first: address initializers may name them.
    for (f, role) in spec.funcs.iter().enumerate() {
        match role {
            FuncRole::Absent => {}
            FuncRole::Extern(p) => {
                let _ = writeln!(s, ".extern .func {};", proto_text(FUNCS[f], p, ""));
            }
            FuncRole::Define { link, proto, .. } => {
                let _ = writeln!(
                    s,
                    "{}.func {};",
                    link.directive(),
                    proto_text(FUNCS[f], proto, "")
                );
            }
        }
    }
    if let Some(a) = spec.dyn_shared {
        let _ = writeln!(s, ".extern .shared .align {a} .b8 {DYN}[];");
    }
    // Variables without address initializers, then those with.
    let inits: Vec<Option<String>> = (0..VARS.len()).map(|i| init_text(spec, i)).collect();
    let is_address = |i: usize| {
        matches!(
            &spec.vars[i],
            VarRole::Define {
                init: Init::Address { .. },
                ..
            }
        ) && inits[i].is_some()
    };
    for pass in [false, true] {
        for (i, role) in spec.vars.iter().enumerate() {
            if is_address(i) == pass {
                s.push_str(&var_line(VARS[i], role, inits[i].as_deref().unwrap_or("")));
            }
        }
    }
    s.push('\n');
    for (f, role) in spec.funcs.iter().enumerate() {
        let FuncRole::Define {
            link,
            proto,
            uses,
            marker,
        } = role
        else {
            continue;
        };
        let _ = writeln!(
            s,
            "{}.func {}\n{{",
            link.directive(),
            proto_text(FUNCS[f], proto, "")
        );
        s.push_str("\t.reg .b16 %rs<2>;\n\t.reg .b64 %rd<2>;\n");
        loc(&mut s, spec, 10 + f);
        let _ = writeln!(s, "\tmov.u64 %rd1, {marker};");
        if let Some(space) = seen_space(&spec.vars[*uses]) {
            load_store(&mut s, space, VARS[*uses]);
        }
        s.push_str("\tret;\n}\n\n");
    }
    let _ = writeln!(s, ".visible .entry k{m}(.param .u64 out)\n{{");
    s.push_str("\t.reg .b16 %rs<2>;\n\t.reg .b64 %rd<2>;\n");
    loc(&mut s, spec, 20);
    s.push_str("\tld.param.u64 %rd1, [out];\n");
    // Every symbol of the module is declared before the kernel.
    let own = format!("k{m}");
    let declares = |name: &str| {
        name == own
            || VARS
                .iter()
                .zip(&spec.vars)
                .any(|(v, r)| *v == name && *r != VarRole::Absent)
            || FUNCS
                .iter()
                .zip(&spec.funcs)
                .any(|(f, r)| *f == name && *r != FuncRole::Absent)
    };
    let label = spec.label.map(|i| LABELS[i]).filter(|l| !declares(l));
    if let Some(l) = label {
        let _ = writeln!(
            s,
            "\t.reg .pred %q<2>;\n\tsetp.eq.u64 %q1, %rd1, 0;\n\t@%q1 bra {l};"
        );
    }
    for (i, role) in spec.vars.iter().enumerate() {
        if let Some(space) = seen_space(role) {
            load_store(&mut s, space, VARS[i]);
        }
    }
    if spec.dyn_shared.is_some() {
        load_store(&mut s, Space::Shared, DYN);
    }
    for (f, role) in spec.funcs.iter().enumerate() {
        let Some(p) = func_proto(role) else { continue };
        loc(&mut s, spec, 30 + f);
        s.push_str("\t{\n");
        if let Some(r) = p.ret {
            let _ = writeln!(s, "\t{};", r.decl("r"));
        }
        for (i, t) in p.params.iter().enumerate() {
            let name = format!("a{i}");
            let _ = writeln!(s, "\t{};\n\t{}", t.decl(&name), t.store(&name));
        }
        let args: Vec<String> = (0..p.params.len()).map(|i| format!("a{i}")).collect();
        let ret = if p.ret.is_some() { "(r), " } else { "" };
        let args = if args.is_empty() {
            String::new()
        } else {
            format!(", ({})", args.join(", "))
        };
        let _ = writeln!(s, "\tcall.uni {ret}{}{args};\n\t}}", FUNCS[f]);
    }
    if let Some(l) = label {
        let _ = writeln!(s, "{l}:");
    }
    s.push_str("\tret;\n}\n");
    s
}
