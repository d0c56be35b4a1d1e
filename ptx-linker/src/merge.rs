//! Merging module headers and debug tables.
//!
//! `.version` becomes the highest input version, raised to the output
//! architecture's minimum; `.target` architectures must agree unless
//! overridden; `.address_size` must agree (PTX ISA 9.0, sections 11.1
//! "PTX Module Directives"). `.file` tables are merged and renumbered
//! (section 11.7 "Debugging Directives").

use std::collections::HashMap;

use targets::{Arch, ArchInfo, PtxVersion};

use crate::ast::{ItemKind, Module};
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
    let mut opts: Vec<String> = Vec::new();
    for (_, t) in &targets {
        for o in &t.options {
            if !opts.iter().any(|x| x == o) {
                opts.push(o.to_string());
            }
        }
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
    // `.address_size` defaults to 32 when absent.
    let sizes: Vec<(u32, Option<Span>)> = modules
        .iter()
        .map(|m| m.address_size.map_or((32, None), |(n, s)| (n, Some(s))))
        .collect();
    let address_size = modules.iter().find_map(|m| m.address_size.map(|(n, _)| n));
    if let Some((first, fspan)) = sizes.first() {
        for (i, (n, span)) in sizes.iter().enumerate().skip(1) {
            if n != first {
                let here = span.unwrap_or(Span::new(modules[i].file, 0, 0));
                let mut d = Diagnostic::error(
                    here,
                    format!("address size mismatch: {n}-bit here, {first}-bit in another input"),
                )
                .with_help("rebuild every input with the same `.address_size` (64)");
                if let Some(f) = fspan {
                    d = d.with_secondary(*f, format!("this input is {first}-bit"));
                }
                diags.push(d);
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
        remap: vec![HashMap::new(); modules.len()],
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
