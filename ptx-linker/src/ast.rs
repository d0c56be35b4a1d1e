//! The parsed form of one PTX module: module-scope items with spans.
//!
//! Names borrow the source text. Function bodies, debug sections and other
//! text the linker does not need to understand are kept as byte ranges and
//! copied verbatim on output, with the symbol references recorded here
//! rewritten where a symbol was renamed.

use crate::diagnostic::{Diagnostic, FileId, Span};
use targets::PtxVersion;

/// A name and where it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Name<'src> {
    /// The identifier text.
    pub text: &'src str,
    /// Its span.
    pub span: Span,
}

/// Linkage of a module-scope symbol (PTX ISA 9.0, section 11.6 "Linking Directives").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// No linkage directive: visible only in its own module.
    Local,
    /// `.visible`: a strong global definition.
    Visible,
    /// `.extern`: a declaration of a symbol defined elsewhere.
    Extern,
    /// `.weak`: a global definition that a `.visible` one overrides.
    Weak,
    /// `.common`: a global variable; the largest definition wins.
    Common,
}

impl Linkage {
    /// The name used in the link map: `local`, `visible`, `extern`, `weak`, `common`.
    pub fn as_str(self) -> &'static str {
        match self {
            Linkage::Local => "local",
            Linkage::Visible => "visible",
            Linkage::Extern => "extern",
            Linkage::Weak => "weak",
            Linkage::Common => "common",
        }
    }
}

/// `.entry` or `.func`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FnKind {
    /// A kernel.
    Entry,
    /// A device function.
    Func,
}

/// `.ptr [.space] .align N` on a kernel parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtrAttr<'src> {
    /// `global`, `const`, `local` or `shared`, without the dot.
    pub space: Option<&'src str>,
    /// Pointee alignment in bytes.
    pub align: u32,
}

/// One parameter of a function or kernel (PTX ISA 9.0, section 5.1.6 "Parameter State Space").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamDecl<'src> {
    /// `param` or (legacy) `reg`.
    pub space: &'src str,
    /// Fundamental type without the dot: `u32`, `b8`, `f16x2`.
    pub ty: &'src str,
    /// Vector width: 1, 2, 4 or 8.
    pub vector: u32,
    /// `.align N` in bytes, when given.
    pub align: Option<u32>,
    /// `.ptr` attributes, when given.
    pub ptr: Option<PtrAttr<'src>>,
    /// The parameter name.
    pub name: Name<'src>,
    /// Array dimensions; `None` for `[]`.
    pub dims: Vec<Option<u64>>,
}

/// The body of a function, kept as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    /// From `{` to the matching `}` inclusive.
    pub span: Span,
    /// Function-scope `.shared` allocations, in declaration order:
    /// `(bytes, align)`. A parameterized `.shared .T s<N>` counts as ptxas
    /// allocates it: one element, plus one per distinct `sI` the body uses.
    pub shared: Vec<(u64, u32)>,
    /// The first `shfl` or `vote` without `.sync`: PTX ISA 6.4 and later
    /// reject it for `sm_70` and newer.
    pub unsynced_warp_op: Option<Span>,
    /// The first `.param` declared at the outermost level of the body: the
    /// pre-1.4 way of giving an `.entry` without a parameter list its
    /// parameters.
    pub body_param: Option<Span>,
    /// A texture or surface instruction (`tex`, `tld4`, `txq`, `suld`,
    /// `sust`, `sured`, `suq`) occurs in the body.
    pub texture_op: bool,
    /// An instruction with a `.f64` type occurs in the body (what
    /// `.target ..., map_f64_to_f32` changes).
    pub f64_op: bool,
    /// A name the body declares (a register, variable or parameter, or an
    /// `x<N>` prefix) ends like a renamed symbol's new name
    /// (`x__ptxlink2`, [`crate::body::RENAME_MARKER`]): the link's renames
    /// then avoid the names the module's text holds.
    pub declares_rename_form: bool,
    /// This body's range of [`Module::forward_labels`].
    pub forward_labels: std::ops::Range<u32>,
}

/// An `.entry` or `.func`, declared or defined (PTX ISA 9.0, section 11.3 "Function Directives").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function<'src> {
    /// Linkage directive.
    pub linkage: Linkage,
    /// Kernel or device function.
    pub kind: FnKind,
    /// Its name.
    pub name: Name<'src>,
    /// Return parameters (`.func (.param .b32 r) f(...)`).
    pub returns: Vec<ParamDecl<'src>>,
    /// Parameters.
    pub params: Vec<ParamDecl<'src>>,
    /// End of the parameter list (byte offset): the item's start up to here is
    /// the prototype.
    pub proto_end: u32,
    /// `.noreturn` was given.
    pub noreturn: bool,
    /// A parameter list `( ... )` follows the name.
    pub has_param_list: bool,
    /// The body; `None` for a declaration.
    pub body: Option<Body>,
    /// The text names no linkage, and `linkage` is an earlier `.visible` or
    /// `.weak` declaration's, which ptxas gives the definition: the output
    /// writes the directive.
    pub linkage_inherited: bool,
}

/// A state space of a module-scope variable (PTX ISA 9.0, section 5.1 "State Spaces").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    /// `.global`
    Global,
    /// `.const`
    Const,
    /// `.shared`
    Shared,
    /// `.local`
    Local,
    /// `.tex` (legacy texture declaration)
    Tex,
}

impl Space {
    /// Directive name without the dot.
    pub fn as_str(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Const => "const",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Tex => "tex",
        }
    }
}

/// A module-scope variable (PTX ISA 9.0, section 5.4 "Variables").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable<'src> {
    /// Linkage directive.
    pub linkage: Linkage,
    /// State space.
    pub space: Space,
    /// `.align N`, when given.
    pub align: Option<u32>,
    /// Type without the dot (`b8`, `u64`, `texref`).
    pub ty: &'src str,
    /// Vector width (1 when not a vector).
    pub vector: u32,
    /// Its name; for a name generated by `a<4>`, the prefix `a`, spanning
    /// `a<4>`.
    pub name: Name<'src>,
    /// Which name of a parameterized declaration this is, if it is one.
    pub generated: Option<Generated>,
    /// Array dimensions; `None` for `[]`.
    pub dims: Vec<Option<u64>>,
    /// Number of scalar values in the initializer, when there is one.
    pub init_len: Option<u64>,
    /// End of the declaration's common part (linkage, space, `.align`, type):
    /// `.global .u32 a, b;` declares `a` and `b`, two items that share the
    /// text up to here.
    pub prefix_end: u32,
    /// This declarator: from the name through its dimensions and initializer.
    pub declarator: Span,
    /// The initializer's text after `=`, when there is one.
    pub init: Option<Span>,
}

/// One of the `N` variables a parameterized declaration `.global .u32 a<N>;`
/// declares: `a0` .. `a{N-1}`, each an ordinary symbol (PTX ISA 9.0, section
/// 5.4.6 "Parameterized Variable Names"; no array, no initializer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// The variable's name: the prefix, then `index` in decimal (`a2`).
    pub name: Box<str>,
    /// Its index, `0..count`.
    pub index: u32,
    /// `N`: how many names the declaration generates.
    pub count: u32,
}

/// `.file N "path" [, timestamp, size]` (PTX ISA 9.0, section 11.7 "Debugging Directives").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry<'src> {
    /// The file index.
    pub index: u32,
    /// Everything after the index, verbatim (`"path", 123, 456`).
    pub rest: &'src str,
}

/// What a module-scope item is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemKind<'src> {
    /// `.entry` / `.func`.
    Function(Function<'src>),
    /// `.global` / `.const` / `.shared` / `.local` / `.tex` variable.
    Variable(Variable<'src>),
    /// `.file`.
    File(FileEntry<'src>),
    /// `.section name { ... }`, kept verbatim.
    Section,
    /// `.alias alias, aliasee;`
    Alias {
        /// The new name.
        alias: Name<'src>,
        /// The function it names.
        target: Name<'src>,
        /// The aliasee's linkage, which ptxas 13.5 gives the alias whatever
        /// the alias's own declaration says: file-local or `.visible`.
        linkage: Linkage,
    },
    /// Anything else kept verbatim (module-scope `.reg`, `.pragma`, ...).
    Other,
}

/// A `.loc` whose file indices must be renumbered when `.file` tables merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocFix {
    /// The file index token(s): the `.loc` one and an `inlined_at` one.
    pub file_index: [Option<(Span, u32)>; 2],
    /// `, function_name ..., inlined_at ...`: dropped with the debug sections.
    pub extra: Option<Span>,
}

/// One module-scope item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item<'src> {
    /// The whole item, from its first directive to its `;` or `}`.
    pub span: Span,
    /// What it is.
    pub kind: ItemKind<'src>,
    /// Identifiers in the body / initializer / section that may name
    /// module-scope symbols: in a body, every use of a name no declaration
    /// of the function covers at that point (see [`crate::body`]). They lie
    /// in the module's [`Module::refs`]: [`Module::item_refs`].
    pub refs: Refs,
    /// `.loc` directives in the body.
    pub locs: Vec<LocFix>,
}

/// Where an item's references lie in [`Module::refs`] (one list per
/// module: no allocation per item).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refs {
    start: u32,
    end: u32,
}

impl Refs {
    /// Appends `names` to a module's `list` and returns where they lie.
    pub(crate) fn push<'src>(
        list: &mut Vec<Name<'src>>,
        names: impl IntoIterator<Item = Name<'src>>,
    ) -> Refs {
        let start = list.len() as u32;
        list.extend(names);
        Refs {
            start,
            end: list.len() as u32,
        }
    }

    /// The references `list[start..]` (appended since `start`).
    pub(crate) fn since(list: &[Name<'_>], start: usize) -> Refs {
        Refs {
            start: start as u32,
            end: list.len() as u32,
        }
    }

    /// Their indices in [`Module::refs`].
    pub(crate) fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

impl<'src> Item<'src> {
    /// Where the symbol this item defines or declares is named, if any: for
    /// a parameterized declaration, the prefix `a` spanning `a<4>` (see
    /// [`Item::symbol`] for the symbol's name).
    pub fn symbol_name(&self) -> Option<Name<'src>> {
        match &self.kind {
            ItemKind::Function(f) => Some(f.name),
            ItemKind::Variable(v) => Some(v.name),
            ItemKind::Alias { alias, .. } => Some(*alias),
            _ => None,
        }
    }

    /// The name of the symbol this item defines or declares, if any: the
    /// generated name (`a2`) for one of `a<4>`'s variables, else the name as
    /// written.
    pub fn symbol(&self) -> Option<&str> {
        match &self.kind {
            ItemKind::Variable(v) => Some(v.symbol()),
            _ => self.symbol_name().map(|n| n.text),
        }
    }

    /// The symbol's linkage, if the item names one.
    pub fn linkage(&self) -> Option<Linkage> {
        match &self.kind {
            ItemKind::Function(f) => Some(f.linkage),
            ItemKind::Variable(v) => Some(v.linkage),
            ItemKind::Alias { linkage, .. } => Some(*linkage),
            _ => None,
        }
    }

    /// True when the item defines its symbol (a body, a non-`.extern`
    /// variable, an alias), false for a declaration.
    pub fn is_definition(&self) -> bool {
        match &self.kind {
            ItemKind::Function(f) => f.body.is_some(),
            ItemKind::Variable(v) => v.linkage != Linkage::Extern,
            ItemKind::Alias { .. } => true,
            _ => false,
        }
    }

    /// `entry`, `func`, `global`, `const`, `shared`, `local`, `tex` or `alias`.
    pub fn kind_str(&self) -> &'static str {
        match &self.kind {
            ItemKind::Function(f) => match f.kind {
                FnKind::Entry => "entry",
                FnKind::Func => "func",
            },
            ItemKind::Variable(v) => v.space.as_str(),
            ItemKind::Alias { .. } => "func",
            ItemKind::File(_) => "file",
            ItemKind::Section => "section",
            ItemKind::Other => "other",
        }
    }
}

/// `.target sm_XX[, option]...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target<'src> {
    /// The architecture name as written (`sm_90a`, `compute_10`).
    pub arch: &'src str,
    /// Compute capability times ten, from the digits of `arch`.
    pub sm: u32,
    /// Options after the architecture: `texmode_independent`, `debug`, ...
    pub options: Vec<&'src str>,
    /// The whole directive.
    pub span: Span,
}

/// One parsed module: header, items and the errors found on the way.
#[derive(Debug, Clone)]
pub struct Module<'src> {
    /// Which input.
    pub file: FileId,
    /// The whole text.
    pub text: &'src str,
    /// `.version`, with its span.
    pub version: Option<(PtxVersion, Span)>,
    /// `.target`.
    pub target: Option<Target<'src>>,
    /// `.address_size`, with its span.
    pub address_size: Option<(u32, Span)>,
    /// Module-scope items in source order.
    pub items: Vec<Item<'src>>,
    /// Parse errors (the module is still as complete as recovery allows).
    pub errors: Vec<Diagnostic>,
    /// For each body in turn ([`Body::forward_labels`]), the short hash
    /// ([`crate::labels`]) of each label that a branch names before the
    /// label is declared, which a module-scope name would hide.
    pub forward_labels: Vec<u32>,
    /// Every item's references, item after item ([`Item::refs`]).
    pub refs: Vec<Name<'src>>,
    /// What [`Self::items`] hold, found once when the parse ends (later
    /// phases would each read every item again).
    pub(crate) flags: ModuleFlags,
}

/// Facts about a module's items, for [`Module::uses_f64`],
/// [`Module::uses_textures`] and [`Module::declares_rename_form`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ModuleFlags {
    f64_op: bool,
    textures: bool,
    rename_form: bool,
}

impl ModuleFlags {
    /// The flags of `items`.
    pub(crate) fn of(items: &[Item<'_>]) -> Self {
        let opaque = |ty: &str| matches!(ty, "texref" | "samplerref" | "surfref");
        let mut flags = ModuleFlags::default();
        for item in items {
            match &item.kind {
                ItemKind::Variable(v) => flags.textures |= opaque(v.ty) || v.space == Space::Tex,
                ItemKind::Function(f) => {
                    flags.textures |= f.params.iter().any(|p| opaque(p.ty));
                    if let Some(b) = &f.body {
                        flags.f64_op |= b.f64_op;
                        flags.textures |= b.texture_op;
                        flags.rename_form |= b.declares_rename_form;
                    }
                }
                _ => {}
            }
        }
        flags
    }
}

impl<'src> Module<'src> {
    /// The references of `item`, one of [`Self::items`].
    pub fn item_refs(&self, item: &Item<'src>) -> &[Name<'src>] {
        self.refs.get(item.refs.range()).unwrap_or(&[])
    }

    /// True when some function body has a `.f64` instruction.
    pub fn uses_f64(&self) -> bool {
        self.flags.f64_op
    }

    /// True when the module declares texture, sampler or surface references
    /// or uses texture or surface instructions: only then does its texture
    /// mode (`.target ..., texmode_independent`) matter.
    pub fn uses_textures(&self) -> bool {
        self.flags.textures
    }

    /// True when some function body declares a name of the form a renamed
    /// file-local symbol takes ([`Body::declares_rename_form`]).
    pub fn declares_rename_form(&self) -> bool {
        self.flags.rename_form
    }
}

/// Size in bytes of a fundamental type (PTX ISA 9.0, section 5.2.1), or
/// `None` for opaque and unknown types.
pub fn type_size(ty: &str) -> Option<u32> {
    Some(match ty {
        "b8" | "u8" | "s8" | "pred" | "e4m3" | "e5m2" => 1,
        "b16" | "u16" | "s16" | "f16" | "bf16" | "e4m3x2" | "e5m2x2" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" | "tf32" => 4,
        "b64" | "u64" | "s64" | "f64" | "texref" | "samplerref" | "surfref" => 8,
        "b128" => 16,
        _ => return None,
    })
}

impl Variable<'_> {
    /// The variable's name: the generated one (`a2`) for one of `a<4>`'s
    /// variables, else the name as written.
    pub fn symbol(&self) -> &str {
        match &self.generated {
            Some(g) => &g.name,
            None => self.name.text,
        }
    }

    /// `a<4>` for a variable generated by a parameterized declaration.
    pub fn parameterized(&self) -> Option<String> {
        self.generated
            .as_ref()
            .map(|g| format!("{}<{}>", self.name.text, g.count))
    }

    /// Bytes one element occupies (type size times vector width).
    pub fn elem_size(&self) -> u64 {
        u64::from(type_size(self.ty).unwrap_or(0)) * u64::from(self.vector)
    }

    /// Total size in bytes: element size times element count; an unsized
    /// `[]` array counts its initializer, or 0 without one. `None` when the
    /// size does not fit 64 bits (the parser reports such a declaration).
    pub fn size_bytes(&self) -> Option<u64> {
        let elems = if self.dims.iter().any(Option::is_none) {
            match self.init_len {
                Some(n) => n.max(dims_product(self.dims.iter().flatten().copied())?),
                None => 0,
            }
        } else {
            dims_product(self.dims.iter().flatten().copied())?
        };
        self.elem_size().checked_mul(elems)
    }

    /// Alignment in bytes: `.align` when given, else the element size.
    pub fn align_bytes(&self) -> u32 {
        self.align
            .unwrap_or_else(|| (self.elem_size() as u32).max(1))
    }
}

/// The product of array dimensions, `None` when it does not fit 64 bits
/// (a zero dimension makes it 0, whatever the others are).
pub fn dims_product(mut dims: impl Iterator<Item = u64> + Clone) -> Option<u64> {
    if dims.clone().any(|d| d == 0) {
        return Some(0);
    }
    dims.try_fold(1u64, u64::checked_mul)
}
