//! Compile-time cluster shapes: a kernel `K` whose module defines the variable
//! `__kernel_cluster_K` (`[u32; 3]`, written by device-std's
//! `#[kernel(cluster = (x, y, z))]`, since rustc cannot emit the directives)
//! gets `.explicitcluster` and `.reqnctapercluster x, y, z` on its `.entry`
//! (PTX ISA 9.0 §11.4.11-12, sm_90, PTX 7.8). Launches of `K` then run in
//! clusters of that shape with or without a launch attribute, and the driver
//! refuses any other shape.

use rustc_hash::FxHashMap as HashMap;

use crate::ast::{FnKind, ItemKind, Module};
use crate::diagnostic::Diagnostic;
use crate::gc::Liveness;
use crate::init;
use crate::merge::Header;
use crate::symbols::{SymbolId, SymbolTable};

/// Prefix of the variables that carry a kernel's cluster shape.
pub const CLUSTER_SHAPE_PREFIX: &str = "__kernel_cluster_";

/// The cluster shape of each live kernel that declares one, by the kernel's
/// symbol. Errors: a shape variable that is not three `u32`s in 1..=8 with a
/// product of at most 8, one without its kernel, or a target older than sm_90.
pub fn cluster_shapes(
    modules: &[Module<'_>],
    table: &SymbolTable<'_>,
    live: &Liveness,
    header: &Header,
    diags: &mut Vec<Diagnostic>,
) -> HashMap<SymbolId, [u32; 3]> {
    let mut out = HashMap::default();
    let mut refs: Vec<_> = live.live.iter().copied().collect();
    refs.sort();
    for r in refs {
        let m = &modules[r.module];
        let item = &m.items[r.item];
        let ItemKind::Variable(v) = &item.kind else {
            continue;
        };
        let Some(kernel) = v.symbol().strip_prefix(CLUSTER_SHAPE_PREFIX) else {
            continue;
        };
        if !item.is_definition() {
            continue;
        }
        let bytes = match init::initializer_bytes(m.file, m.text, v) {
            Ok(b) => b,
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        let shape = (bytes.len() == 12).then(|| {
            let w = |i: usize| u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
            [w(0), w(1), w(2)]
        });
        let Some(shape) = shape
            .filter(|s| s.iter().all(|&d| (1..=8).contains(&d)) && s.iter().product::<u32>() <= 8)
        else {
            diags.push(
                Diagnostic::error(
                    v.name.span,
                    format!("`{}` is not a cluster shape", v.symbol()),
                )
                .with_label("expected three u32 extents in 1..=8 whose product is at most 8")
                .with_help("declare the shape with `#[kernel(cluster = (x, y, z))]`"),
            );
            continue;
        };
        let entry = table.lookup(r.module, kernel).filter(|&id| {
            table.get(id).defs.iter().any(|d| {
                matches!(&modules[d.module].items[d.item].kind, ItemKind::Function(f) if f.kind == FnKind::Entry)
            })
        });
        // An entry that already carries cluster directives (hand-written PTX) would get
        // them twice, which ptxas refuses: say so here.
        let existing = entry.and_then(|id| {
            table.get(id).defs.iter().find_map(|d| {
                let em = &modules[d.module];
                let ItemKind::Function(f) = &em.items[d.item].kind else {
                    return None;
                };
                let after = &em.text[f.proto_end as usize..];
                let head = &after[..after.find('{').unwrap_or(after.len())];
                [".reqnctapercluster", ".explicitcluster"]
                    .into_iter()
                    .find(|dir| head.contains(dir))
            })
        });
        if let Some(dir) = existing {
            diags.push(
                Diagnostic::error(
                    v.name.span,
                    format!("`{}` gives a cluster shape for `{kernel}`, whose `.entry` already has `{dir}`", v.symbol()),
                )
                .with_help("keep one of the two: the directive in the PTX or the shape variable"),
            );
            continue;
        }
        let Some(entry) = entry else {
            diags.push(
                Diagnostic::error(
                    v.name.span,
                    format!("`{}` gives a cluster shape for `{kernel}`, which is not a kernel of this link", v.symbol()),
                )
                .with_help(format!("define the `.entry {kernel}`, or remove the shape")),
            );
            continue;
        };
        let min_version = targets::PtxVersion { major: 7, minor: 8 };
        let new_enough = header.info.is_some_and(|i| i.sm >= 90) && header.version >= min_version;
        if !new_enough {
            diags.push(
                Diagnostic::error(
                    v.name.span,
                    format!(
                        "kernel `{kernel}` declares a cluster shape ({}, {}, {}), but the link targets `{}` with `.version {}`; clusters need sm_90 and PTX ISA 7.8 or newer",
                        shape[0], shape[1], shape[2], header.arch, header.version
                    ),
                )
                .with_help("build for sm_90 or newer, or remove the cluster shape"),
            );
            continue;
        }
        out.insert(entry, shape);
    }
    out
}
