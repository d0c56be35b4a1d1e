//! Per-kernel budgets: static shared memory and parameter space
//! (PTX ISA 9.0, sections 5.1.4 "Shared State Space" and 5.1.6.1 "Kernel
//! Function Parameters"; limits from the `targets` tables, which follow
//! ptxas: 48 KiB of static shared memory, more only for `a` targets).

use rustc_hash::FxHashSet as HashSet;
use targets::{Arch, Variant};

use crate::ast::{FnKind, ItemKind, Module, Space};
use crate::diagnostic::Diagnostic;
use crate::gc::Liveness;
use crate::merge::{Header, DEFAULT_MAX_PARAM, DEFAULT_MAX_STATIC_SHARED};
use crate::resolve::Resolution;
use crate::signature::{param_of, param_space_bytes, Param};
use crate::symbols::{ItemRef, SymbolTable};

/// What one kernel needs.
#[derive(Debug, Clone)]
pub struct KernelLayout {
    /// The `.entry` item.
    pub entry: ItemRef,
    /// Its parameters.
    pub params: Vec<Param>,
    /// Static shared memory reachable from it, in bytes, as `ptxas -v`
    /// counts it: rounded up to the module's largest dynamic shared-memory
    /// alignment when not zero.
    pub static_shared_bytes: u64,
    /// Largest `.align` (bytes) of the dynamic shared-memory arrays
    /// (`.extern .shared`) it reaches; `None` when it reaches none.
    pub dynamic_shared_align: Option<u32>,
}

/// Computes each live kernel's budget and reports the ones over the limits.
pub fn check_kernels(
    modules: &[Module<'_>],
    table: &SymbolTable<'_>,
    res: &Resolution,
    live: &Liveness,
    header: &Header,
    shared_statics: &crate::module_vars::SharedStatics,
    diags: &mut Vec<Diagnostic>,
) -> Vec<KernelLayout> {
    let max_shared = header
        .info
        .map_or(DEFAULT_MAX_STATIC_SHARED, |i| i.max_static_shared_bytes);
    let max_param = header.info.map_or(DEFAULT_MAX_PARAM, |i| i.max_param_bytes);
    let mut entries: Vec<ItemRef> = live
        .live
        .iter()
        .filter(|r| matches!(&modules[r.module].items[r.item].kind, ItemKind::Function(f) if f.kind == FnKind::Entry))
        .collect();
    entries.sort();
    // ptxas 13.5 (`-v`) rounds a kernel's static shared memory, when it has
    // any, up to the largest alignment of the module's dynamic shared-memory
    // arrays, whether the kernel uses them or not, and checks the limit on
    // the rounded size: 100 bytes with `.extern .shared .align 1024 .b8
    // d[]` in the module is "1024 bytes smem".
    let module_dynamic = live
        .external_refs
        .iter()
        .filter_map(|&id| Some((res.dynamic_shared_align(id)?, res.out_name(id))))
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1)));
    let mut out = Vec::new();
    for entry in entries {
        let item = &modules[entry.module].items[entry.item];
        let ItemKind::Function(f) = &item.kind else {
            continue;
        };
        let mut params = Vec::new();
        for p in &f.params {
            match param_of(p) {
                Ok(p) => params.push(p),
                Err(d) => diags.push(d),
            }
        }
        let (declared, dynamic_shared_align) =
            shared_usage(modules, table, res, shared_statics, entry);
        let (shared, rounded) = match module_dynamic {
            Some((align, name)) if declared > 0 => {
                let shared = declared.next_multiple_of(u128::from(align));
                let why = format!(
                    " ({declared} declared, rounded up to the `.align {align}` of the module's dynamic shared-memory array `{name}`, as ptxas does)"
                );
                (
                    shared,
                    if shared != declared {
                        why
                    } else {
                        String::new()
                    },
                )
            }
            _ => (declared, String::new()),
        };
        if shared > u128::from(max_shared) {
            let specific = header
                .arch
                .parse::<Arch>()
                .ok()
                .filter(|a| a.variant != Variant::ArchSpecific)
                .and_then(|a| a.as_variant(Variant::ArchSpecific))
                .filter(|i| u128::from(i.max_static_shared_bytes) >= shared)
                .map_or_else(String::new, |i| {
                    format!(
                        "; or, for code that runs only on that architecture, build for `sm_{}a`, which allows {}",
                        i.sm, i.max_static_shared_bytes
                    )
                });
            diags.push(
                Diagnostic::error(
                    f.name.span,
                    format!(
                        "kernel `{}` uses {shared} bytes of static shared memory{rounded}; `{}` allows at most {max_shared}",
                        f.name.text, header.arch
                    ),
                )
                .with_label("this kernel (with the functions it calls)")
                .with_help(format!("move the large arrays to dynamic shared memory (`.extern .shared`, sized at launch), or make them smaller{specific}")),
            );
        }
        let pbytes = param_space_bytes(&params);
        if pbytes > u64::from(max_param) {
            diags.push(
                Diagnostic::error(
                    f.name.span,
                    format!(
                        "kernel `{}` takes {pbytes} bytes of parameters; `{}` allows at most {max_param}",
                        f.name.text, header.arch
                    ),
                )
                .with_help("pass large data through a pointer to global memory instead of by value"),
            );
        }
        out.push(KernelLayout {
            entry,
            params,
            static_shared_bytes: u64::try_from(shared).unwrap_or(u64::MAX),
            dynamic_shared_align,
        });
    }
    out
}

/// Sum of the static `.shared` allocations reachable from `entry`, each at
/// its alignment, in the order they are reached (entry first); and the
/// largest alignment of the dynamic shared-memory arrays it reaches.
fn shared_usage(
    modules: &[Module<'_>],
    table: &SymbolTable<'_>,
    res: &Resolution,
    shared_statics: &crate::module_vars::SharedStatics,
    entry: ItemRef,
) -> (u128, Option<u32>) {
    // In 128 bits: sizes from the input add up without overflow.
    let place = |offset: u128, size: u64, align: u32| {
        offset.next_multiple_of(u128::from(align.max(1))) + u128::from(size)
    };
    let mut dynamic: Option<u32> = None;
    let mut seen = HashSet::default();
    let mut queue = std::collections::VecDeque::from([entry]);
    let mut offset = 0u128;
    while let Some(r) = queue.pop_front() {
        if !seen.insert(r) {
            continue;
        }
        let item = &modules[r.module].items[r.item];
        match &item.kind {
            ItemKind::Function(f) => {
                for (size, align) in f.body.iter().flat_map(|b| &b.shared) {
                    offset = place(offset, *size, *align);
                }
            }
            ItemKind::Variable(v) if v.space == Space::Shared => {
                // An oversized one has been reported by the parser.
                offset = place(offset, v.size_bytes().unwrap_or(u64::MAX), v.align_bytes());
            }
            // A static of the static shared form, emitted as `.shared`.
            ItemKind::Variable(_) => {
                let moved = table
                    .item_symbol(r)
                    .and_then(|id| shared_statics.vars.get(&id));
                if let Some(s) = moved {
                    offset = place(offset, u64::from(s.bytes), s.align);
                }
            }
            _ => {}
        }
        for id in table.ref_symbols(r.module, item) {
            let Some(id) = id else {
                continue;
            };
            match res.chosen(id) {
                Some(def) => queue.push_back(def),
                None => {
                    if let Some(a) = res.dynamic_shared_align(id) {
                        dynamic = Some(dynamic.map_or(a, |d| d.max(a)));
                    }
                }
            }
        }
    }
    (offset, dynamic)
}
