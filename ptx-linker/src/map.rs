//! The link map: what the merged module contains and where it came from.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::signature::Param;

/// The link map written next to the merged PTX (`<crate>.map.json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LinkMap {
    /// `.version` of the output, e.g. `"7.8"`.
    pub version: String,
    /// `.target` architecture of the output, e.g. `"sm_90"`.
    pub target: String,
    /// `.address_size` (64).
    pub address_size: u32,
    /// Every `.entry` of the output, in output order.
    pub kernels: Vec<KernelInfo>,
    /// Every module-scope symbol of the output, in output order.
    pub symbols: Vec<SymbolInfo>,
}

/// One kernel in a [`LinkMap`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KernelInfo {
    /// The `.entry` name.
    pub name: String,
    /// Its `.param` list, in order.
    pub params: Vec<Param>,
    /// Static `.shared` bytes the kernel and every function it calls declare,
    /// module- and function-scope, each placed at its alignment; when not
    /// zero, rounded up to the largest `.align` of the module's dynamic
    /// shared-memory arrays, as `ptxas -v` reports it.
    pub static_shared_bytes: u64,
    /// Largest `.align` in bytes of the dynamic shared-memory arrays
    /// (`.extern .shared .align A .b8 NAME[]`) the kernel and the functions
    /// it calls reference; `None` when it uses no dynamic shared memory. The
    /// host checks its launch-time allocation against it.
    pub dynamic_shared_align: Option<u32>,
    /// `__kernel_abi_<name>` when the output defines that variable: the
    /// kernel's ABI record, readable with [`crate::global_initializer`].
    pub abi_record: Option<String>,
    /// The dynamic shared memory the kernel declares (`#[kernel(dynamic_shared = N,
    /// dynamic_shared_per_thread = M)]`), read from the 8-byte `.global`
    /// `__kernel_dynamic_shared_<name>` when the output defines it; `None` otherwise
    /// (and in maps written before this field existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_shared: Option<DeclaredDynamicShared>,
    /// The launch dimensions the kernel declares (`#[kernel(dims = N)]`, 1 or 2, from
    /// `__kernel_dims_<name>`): every launch's grid and block extents past the first
    /// `N` must be 1. `None` when it declares none (and in maps written before this
    /// field existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_dims: Option<u32>,
    /// Input file that defined it.
    pub defined_in: String,
}

/// A kernel's declared dynamic shared memory: `bytes + per_thread × threads per block`
/// bytes at launch (`__kernel_dynamic_shared_<name>`, two little-endian `u32`s).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct DeclaredDynamicShared {
    /// Bytes for the whole block.
    pub bytes: u32,
    /// Bytes per thread of the block.
    pub per_thread: u32,
}

impl DeclaredDynamicShared {
    /// Decodes the variable's initializer: exactly 8 bytes, two little-endian `u32`s
    /// (`[bytes, per_thread]`); `None` for any other length.
    pub fn from_le_bytes(init: &[u8]) -> Option<Self> {
        let [b0, b1, b2, b3, p0, p1, p2, p3] = *init else {
            return None;
        };
        Some(DeclaredDynamicShared {
            bytes: u32::from_le_bytes([b0, b1, b2, b3]),
            per_thread: u32::from_le_bytes([p0, p1, p2, p3]),
        })
    }
}

/// Name prefix of the `[bytes, per_thread]` variable `#[kernel(dynamic_shared = ...)]`
/// emits: `.visible .global .align 4 .b8 __kernel_dynamic_shared_<kernel>[8]`.
pub const DYNAMIC_SHARED_PREFIX: &str = "__kernel_dynamic_shared_";

/// One module-scope symbol in a [`LinkMap`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SymbolInfo {
    /// Name in the output module.
    pub name: String,
    /// `entry`, `func`, `global`, `const`, `shared`, `local`, `tex`, ...
    /// (borrowed from the linker's own names when it builds the map: no
    /// allocation per symbol; owned when read back from JSON).
    pub kind: Cow<'static, str>,
    /// `visible`, `weak`, `extern`, `common` or `local` (no linkage
    /// directive); borrowed or owned as [`Self::kind`].
    pub linkage: Cow<'static, str>,
    /// Input file that defined it (or declared it, for symbols left external).
    pub defined_in: String,
    /// Original name when the linker renamed a colliding file-local symbol.
    pub renamed_from: Option<String>,
}

use crate::ast::{ItemKind, Module};

/// Name prefix of a kernel's ABI record: the device runtime emits
/// `.visible .global .align 4 .b8 __kernel_abi_<kernel>[N] = {...}`.
pub const ABI_RECORD_PREFIX: &str = "__kernel_abi_";
use crate::merge::Header;
use crate::prefetch::prefetch;
use crate::resolve::Resolution;
use crate::symbols::SymbolTable;
use crate::symbols::{ItemRef, SymbolId};
use crate::validate::KernelLayout;

/// Builds the link map from what was emitted.
/// What the link produced that the map describes.
pub(crate) struct Output<'a> {
    /// The kernels' layouts ([`crate::validate`]).
    pub kernels: &'a [KernelLayout],
    /// The symbols in output order, with their items.
    pub emitted: &'a [(SymbolId, ItemRef)],
    /// Variables emitted in `.const` ([`crate::module_vars`]).
    pub const_vars: &'a rustc_hash::FxHashSet<SymbolId>,
    /// Statics emitted as `.shared` ([`crate::module_vars`]).
    pub shared_statics: &'a crate::module_vars::SharedStatics,
    /// The directives and launch dimensions of the kernels
    /// ([`crate::entry_directives`]).
    pub directives: &'a rustc_hash::FxHashMap<SymbolId, crate::entry_directives::EntryDirectives>,
}

pub(crate) fn build(
    modules: &[Module<'_>],
    paths: &[&str],
    table: &SymbolTable<'_>,
    res: &Resolution,
    header: &Header,
    out: Output<'_>,
) -> LinkMap {
    let Output {
        kernels,
        emitted,
        const_vars,
        shared_statics,
        directives,
    } = out;
    let symbols = emitted
        .iter()
        .enumerate()
        .map(|(k, &(id, r))| {
            // The names lie cold in the inputs' text: ask for one ahead.
            if let Some(&(next, _)) = emitted.get(k + 4) {
                prefetch(res.out_name(next).as_ptr());
            }
            let item = &modules[r.module].items[r.item];
            let sym = table.get(id);
            let out = res.out_name(id);
            SymbolInfo {
                name: out.to_string(),
                // The state space as emitted (`module_vars` moves some).
                kind: Cow::Borrowed(if const_vars.contains(&id) {
                    "const"
                } else if shared_statics.vars.contains_key(&id) {
                    "shared"
                } else {
                    item.kind_str()
                }),
                linkage: Cow::Borrowed(item.linkage().map_or("local", |l| l.as_str())),
                defined_in: paths[r.module].to_string(),
                renamed_from: res.is_renamed(id).then(|| sym.name.to_string()),
            }
        })
        .collect();
    let by_entry: rustc_hash::FxHashMap<_, _> = kernels.iter().map(|k| (k.entry, k)).collect();
    let dynamic_shared_vars: rustc_hash::FxHashMap<&str, DeclaredDynamicShared> = emitted
        .iter()
        .filter(|&&(id, _)| res.chosen(id).is_some())
        .filter_map(|&(id, r)| {
            let kernel = res.out_name(id).strip_prefix(DYNAMIC_SHARED_PREFIX)?;
            let module = &modules[r.module];
            let ItemKind::Variable(v) = &module.items[r.item].kind else {
                return None;
            };
            // Only the 8 bytes `#[kernel]` declares: a huge declared size is not read
            // (the initializer is padded to it).
            if v.size_bytes() != Some(8) {
                return None;
            }
            let init = crate::init::initializer_bytes(module.file, module.text, v).ok()?;
            Some((kernel, DeclaredDynamicShared::from_le_bytes(&init)?))
        })
        .collect();
    let defined_vars: rustc_hash::FxHashSet<&str> = emitted
        .iter()
        .filter(|&&(id, r)| {
            res.chosen(id).is_some()
                && matches!(modules[r.module].items[r.item].kind, ItemKind::Variable(_))
        })
        .map(|&(id, _)| res.out_name(id))
        .collect();
    let kernels = emitted
        .iter()
        .filter_map(|&(_, r)| by_entry.get(&r).copied())
        .map(|k| {
            let name = modules[k.entry.module].items[k.entry.item]
                .symbol_name()
                .map_or("", |n| n.text);
            let abi = format!("{ABI_RECORD_PREFIX}{name}");
            let has_abi = defined_vars.contains(abi.as_str());
            KernelInfo {
                name: name.to_string(),
                params: k.params.clone(),
                static_shared_bytes: k.static_shared_bytes,
                dynamic_shared_align: k.dynamic_shared_align,
                abi_record: has_abi.then_some(abi),
                dynamic_shared: dynamic_shared_vars.get(name).copied(),
                launch_dims: table
                    .item_symbol(k.entry)
                    .and_then(|id| directives.get(&id))
                    .and_then(|d| d.dims),
                defined_in: paths[k.entry.module].to_string(),
            }
        })
        .collect();
    LinkMap {
        version: header.version.to_string(),
        target: header.arch.clone(),
        address_size: header.address_size.unwrap_or(32),
        kernels,
        symbols,
    }
}
