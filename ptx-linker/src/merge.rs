//! Merging module headers and debug tables.
//!
//! `.version` becomes the highest input version, raised to the output
//! architecture's minimum; `.target` architectures must agree unless
//! overridden; `.address_size` must agree (PTX ISA 9.0, sections 11.1
//! "PTX Module Directives"). `.file` tables are merged and renumbered
//! (section 11.7 "Debugging Directives").

use rustc_hash::FxHashMap as HashMap;

use targets::{Arch, ArchInfo, PtxVersion};

use crate::ast::{ItemKind, Module, Target};
use crate::diagnostic::{Diagnostic, Span};
use crate::input::LinkOptions;
use crate::symbols::ItemRef;

/// The newest PTX ISA version this linker (and ptxas 13.5) understands.
pub const MAX_PTX_VERSION: PtxVersion = PtxVersion { major: 9, minor: 5 };

/// Static shared memory limit used for architectures the `targets` tables
/// do not know (bytes).
pub const DEFAULT_MAX_STATIC_SHARED: u32 = 48 * 1024;
/// Kernel parameter space limit used for unknown architectures (bytes).
pub const DEFAULT_MAX_PARAM: u32 = 4 * 1024;

/// The output module's header.
#[derive(Debug, Clone)]
pub struct Header {
    /// `.version`.
    pub version: PtxVersion,
    /// `.target` architecture.
    pub arch: String,
    /// `.target` options (`texmode_independent`, `debug`, ...), deduplicated.
    pub options: Vec<String>,
    /// `.address_size`, when any input gave one.
    pub address_size: Option<u32>,
    /// Facts about the output architecture, when the tables know it.
    pub info: Option<&'static ArchInfo>,
}

impl Header {
    /// Removes the `debug` target option: ptxas requires debug sections
    /// wherever `.target ..., debug` is given, so it goes when they are dropped.
    pub fn drop_debug_option(&mut self) {
        self.options.retain(|o| o != "debug");
    }
}

/// Unifies the headers of the included modules.
pub fn unify_headers(
    modules: &[&Module<'_>],
    options: &LinkOptions,
    diags: &mut Vec<Diagnostic>,
) -> Header {
    let mut version = PtxVersion { major: 1, minor: 0 };
    for m in modules {
        if let Some((v, span)) = m.version {
            if v > MAX_PTX_VERSION {
                diags.push(
                    Diagnostic::error(
                        span,
                        format!(
                            "`.version {v}` is newer than this linker supports ({MAX_PTX_VERSION})"
                        ),
                    )
                    .with_help(format!(
                        "regenerate the PTX for PTX ISA {MAX_PTX_VERSION} or older"
                    )),
                );
            }
            version = version.max(v);
        }
    }
    let targets: Vec<(&Module<'_>, &crate::ast::Target<'_>)> = modules
        .iter()
        .filter_map(|m| m.target.as_ref().map(|t| (*m, t)))
        .collect();
    let arch = match options.arch {
        Some(want) => {
            for (_, t) in &targets {
                let too_old = t.sm > want.sm;
                let specific = t.arch.ends_with(['a', 'f']) && t.arch != want.to_string();
                if too_old || specific {
                    diags.push(
                        Diagnostic::error(
                            t.span,
                            format!(
                                "cannot retarget to `{want}`: this input targets `{}`",
                                t.arch
                            ),
                        )
                        .with_help(format!("choose `--arch {}` or newer", t.arch)),
                    );
                }
            }
            want.to_string()
        }
        None => {
            let first = targets.first();
            for (_, t) in targets.iter().skip(1) {
                if let Some((_, f)) = first {
                    if t.arch != f.arch {
                        let newest = targets
                            .iter()
                            .max_by_key(|(_, t)| t.sm)
                            .map_or(t.arch, |(_, t)| t.arch);
                        diags.push(
                            Diagnostic::error(t.span, format!("target mismatch: `{}` here, `{}` in another input", t.arch, f.arch))
                                .with_label(format!("this input targets `{}`", t.arch))
                                .with_secondary(f.span, format!("this input targets `{}`", f.arch))
                                .with_help(format!("rebuild the inputs for one architecture, or pass `--arch {newest}` to retarget them all")),
                        );
                    }
                }
            }
            first.map_or_else(|| "sm_52".to_string(), |(_, t)| t.arch.to_string())
        }
    };
    let (texmode, map_f64) = check_option_agreement(&targets, diags);
    let mut opts: Vec<String> = Vec::new();
    if map_f64 {
        opts.push("map_f64_to_f32".to_string());
    }
    for (_, t) in &targets {
        for o in &t.options {
            let decided = o.starts_with("texmode_") || *o == "map_f64_to_f32";
            if !decided && !opts.iter().any(|x| x == o) {
                opts.push(o.to_string());
            }
        }
    }
    if let Some(mode) = texmode {
        opts.insert(0, mode.to_string());
    }
    let info = arch.parse::<Arch>().ok().and_then(|a| a.info().ok());
    if let Some(info) = info {
        if info.min_ptx > MAX_PTX_VERSION {
            diags.push(Diagnostic::error_nowhere(format!(
                "`{arch}` needs PTX ISA {}, newer than this linker supports ({MAX_PTX_VERSION})",
                info.min_ptx
            )));
        }
        version = version.max(info.min_ptx);
    }
    // `.address_size` defaults to 32 when absent, from PTX ISA 2.3, which
    // introduced it; an older module without it was assembled at whatever
    // size the tool was asked for (`-m64`), so it is compatible with both.
    // A module without it is pointed at through its `.version`.
    let sizes: Vec<(u32, Span, &str)> = modules
        .iter()
        .filter_map(|m| match (m.address_size, m.version) {
            (Some((n, s)), _) => Some((n, s, "")),
            (None, Some((v, _))) if v < (PtxVersion { major: 2, minor: 3 }) => None,
            (None, v) => Some((
                32,
                v.map_or(Span::new(m.file, 0, 0), |v| v.1),
                " (no `.address_size`: 32 by default)",
            )),
        })
        .collect();
    let address_size = modules.iter().find_map(|m| m.address_size.map(|(n, _)| n));
    if let Some(&(first, fspan, fwhy)) = sizes.first() {
        for &(n, span, why) in sizes.iter().skip(1) {
            if n != first {
                diags.push(
                    Diagnostic::error(
                        span,
                        format!(
                            "address size mismatch: {n}-bit here, {first}-bit in another input"
                        ),
                    )
                    .with_label(format!("this input is {n}-bit{why}"))
                    .with_secondary(fspan, format!("this input is {first}-bit{fwhy}"))
                    .with_help("rebuild every input with the same `.address_size` (64)"),
                );
            }
        }
    }
    Header {
        version,
        arch,
        options: opts,
        address_size,
        info,
    }
}

/// Raising an input's `.version` to the output's must not change what its
/// code means. Two constructs are valid only in old versions: an `.entry`
/// without a parameter list that declares its `.param`s in its body (before
/// PTX ISA 1.4), and `shfl`/`vote` without `.sync` (before 6.4, for `sm_70`
/// and newer; PTX ISA 9.0, section 9.7.9.6 "shfl"). Either one in an input
/// older than the output version is an error naming the input that forces
/// the newer version.
pub fn check_version_raise(modules: &[&Module<'_>], header: &Header, diags: &mut Vec<Diagnostic>) {
    let newest = modules
        .iter()
        .filter_map(|m| m.version)
        .filter(|(v, _)| *v == header.version)
        .map(|(_, s)| s)
        .next();
    let sm = crate::parse::arch_number(&header.arch).unwrap_or(0);
    let rules: [(PtxVersion, bool, &str); 2] = [
        (
            PtxVersion { major: 1, minor: 4 },
            true,
            "an `.entry` without a parameter list declaring its parameters in its body",
        ),
        (
            PtxVersion { major: 6, minor: 4 },
            sm >= 70,
            "`shfl`/`vote` without `.sync`",
        ),
    ];
    for m in modules {
        let Some((v, _)) = m.version else { continue };
        for (rule, (since, applies, what)) in rules.iter().enumerate() {
            if !applies || v >= *since || header.version < *since {
                continue;
            }
            let found = m.items.iter().find_map(|item| match &item.kind {
                ItemKind::Function(f) => {
                    let b = f.body.as_ref()?;
                    if rule == 0 {
                        b.body_param.filter(|_| !f.has_param_list)
                    } else {
                        b.unsynced_warp_op
                    }
                }
                _ => None,
            });
            let Some(span) = found else { continue };
            let mut d = Diagnostic::error(
                span,
                format!(
                    "{what} is valid only before PTX ISA {since}, but the link needs `.version {}`{}",
                    header.version,
                    if rule == 1 { format!(" for `{}`", header.arch) } else { String::new() }
                ),
            )
            .with_label(format!("this input is `.version {v}`"))
            .with_help(format!(
                "rebuild this input with a newer compiler, or link it only with inputs older than PTX ISA {since}"
            ));
            if let Some(n) = newest.filter(|n| n.file != m.file) {
                d = d.with_secondary(n, format!("this input needs `.version {}`", header.version));
            }
            diags.push(d);
        }
    }
}

/// One agreement rule: what it is about, the mode a target is in, and the
/// inputs it concerns.
type Rule<'a, 'src> = (
    &'static str,
    &'a dyn Fn(&Target<'_>) -> &'static str,
    &'a [(&'a Module<'src>, &'a Target<'src>)],
);

/// The texture mode (`texmode_unified`, the default, or
/// `texmode_independent`) changes what texture code means, so every input
/// that uses textures or surfaces must agree on it; the others do not care.
/// `map_f64_to_f32` changes what `.f64` instructions mean: every input with
/// such instructions must agree, and the output carries the option only
/// when they have it (PTX ISA 9.0, section 11.1.2 ".target"). `debug` may differ: debug
/// sections that do not describe the whole output are dropped, with the
/// option (see [`keep_sections`]). Returns the texture mode option the
/// output needs (`None`: the default), and whether it needs `map_f64_to_f32`.
fn check_option_agreement(
    targets: &[(&Module<'_>, &Target<'_>)],
    diags: &mut Vec<Diagnostic>,
) -> (Option<&'static str>, bool) {
    let texmode = |t: &Target<'_>| {
        if t.options.contains(&"texmode_independent") {
            "texmode_independent"
        } else {
            "texmode_unified"
        }
    };
    let f64_mode = |t: &Target<'_>| {
        if t.options.contains(&"map_f64_to_f32") {
            "map_f64_to_f32"
        } else {
            "native f64"
        }
    };
    let texture_users: Vec<(&Module<'_>, &Target<'_>)> = targets
        .iter()
        .copied()
        .filter(|(m, _)| m.uses_textures())
        .collect();
    let f64_users: Vec<(&Module<'_>, &Target<'_>)> = targets
        .iter()
        .copied()
        .filter(|(m, _)| m.uses_f64())
        .collect();
    let rules: [Rule<'_, '_>; 2] = [
        ("texture mode", &texmode, &texture_users),
        ("double-precision mode", &f64_mode, &f64_users),
    ];
    for (what, mode, targets) in rules {
        let Some((_, first)) = targets.first() else {
            continue;
        };
        if let Some((_, t)) = targets.iter().find(|(_, t)| mode(t) != mode(first)) {
            diags.push(
                Diagnostic::error(
                    t.span,
                    format!(
                        "{what} mismatch: `{}` here, `{}` in another input",
                        mode(t),
                        mode(first)
                    ),
                )
                .with_label(format!("this input uses `{}`", mode(t)))
                .with_secondary(first.span, format!("this input uses `{}`", mode(first)))
                .with_help(format!(
                    "rebuild the inputs with one {what}; `.target` options must agree to link"
                )),
            );
        }
    }
    let tex = match texture_users.first() {
        Some((_, t)) if texmode(t) == "texmode_independent" => Some("texmode_independent"),
        _ => None,
    };
    let map_f64 = f64_users
        .first()
        .is_some_and(|(_, t)| f64_mode(t) == "map_f64_to_f32");
    (tex, map_f64)
}

/// The merged `.file` table: entries in output order, and per module the map
/// from its indices to output indices. Identical entries share one index.
#[derive(Debug, Clone, Default)]
pub struct FileTable {
    /// `rest` text of each output entry (index = position + 1).
    pub entries: Vec<String>,
    /// Per module: old index to new index.
    pub remap: Vec<HashMap<u32, u32>>,
}

/// Merges the `.file` tables of the included modules.
pub fn merge_files(modules: &[Module<'_>], included: &[bool]) -> FileTable {
    let mut t = FileTable {
        entries: Vec::new(),
        remap: vec![HashMap::default(); modules.len()],
    };
    for (mi, m) in modules.iter().enumerate() {
        if !included[mi] {
            continue;
        }
        for item in &m.items {
            if let ItemKind::File(f) = &item.kind {
                let new = match t.entries.iter().position(|e| e == f.rest) {
                    Some(p) => p as u32 + 1,
                    None => {
                        t.entries.push(f.rest.to_string());
                        t.entries.len() as u32
                    }
                };
                t.remap[mi].entry(f.index).or_insert(new);
            }
        }
    }
    t
}

/// Decides whether `.section` debug data can be kept: only when all of it
/// comes from one input, that input contributes every live function, and none
/// of its functions was dropped. Otherwise the sections are dropped (with a
/// warning), because their labels and offsets describe one compilation unit.
pub fn keep_sections(
    modules: &[Module<'_>],
    included: &[bool],
    is_live: &dyn Fn(ItemRef) -> bool,
    diags: &mut Vec<Diagnostic>,
) -> bool {
    let with_sections: Vec<usize> = (0..modules.len())
        .filter(|&m| {
            included[m]
                && modules[m]
                    .items
                    .iter()
                    .any(|i| matches!(i.kind, ItemKind::Section))
        })
        .collect();
    let [owner] = with_sections.as_slice() else {
        if let Some(&m) = with_sections.first() {
            warn_dropped(
                modules,
                m,
                "more than one input carries debug sections",
                diags,
            );
        }
        return with_sections.is_empty();
    };
    let owner = *owner;
    for (mi, m) in modules.iter().enumerate() {
        if !included[mi] {
            continue;
        }
        for (ii, item) in m.items.iter().enumerate() {
            let ItemKind::Function(f) = &item.kind else {
                continue;
            };
            if f.body.is_none() {
                continue;
            }
            let live = is_live(ItemRef {
                module: mi,
                item: ii,
            });
            if (mi == owner && !live) || (mi != owner && live) {
                warn_dropped(
                    modules,
                    owner,
                    if mi == owner {
                        "functions they describe were dropped"
                    } else {
                        "other inputs contribute functions they do not describe"
                    },
                    diags,
                );
                return false;
            }
        }
    }
    true
}

fn warn_dropped(modules: &[Module<'_>], m: usize, why: &str, diags: &mut Vec<Diagnostic>) {
    if let Some(item) = modules[m]
        .items
        .iter()
        .find(|i| matches!(i.kind, ItemKind::Section))
    {
        let head = Span {
            end: item.span.start + (item.span.end - item.span.start).min(8),
            ..item.span
        };
        diags.push(
            Diagnostic::error(head, format!("debug sections dropped: {why}"))
                .with_label("this `.section` and the others are left out")
                .with_help("the `debug` target option is dropped with them; link inputs built without debug info (`-g`) to silence this")
                .warning(),
        );
    }
}
