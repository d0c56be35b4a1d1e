//! The link map: what the merged module contains and where it came from.

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
    /// module- and function-scope, each placed at its alignment.
    pub static_shared_bytes: u64,
    /// Input file that defined it.
    pub defined_in: String,
}

/// One module-scope symbol in a [`LinkMap`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SymbolInfo {
    /// Name in the output module.
    pub name: String,
    /// `entry`, `func`, `global`, `const`, `shared`, `local`, `tex`, ...
    pub kind: String,
    /// `visible`, `weak`, `extern`, `common` or `local` (no linkage directive).
    pub linkage: String,
    /// Input file that defined it (or declared it, for symbols left external).
    pub defined_in: String,
    /// Original name when the linker renamed a colliding file-local symbol.
    pub renamed_from: Option<String>,
}

use crate::ast::Module;
use crate::emit::Emitted;
use crate::merge::Header;
use crate::resolve::Resolution;
use crate::symbols::SymbolTable;
use crate::validate::KernelLayout;

/// Builds the link map from what was emitted.
pub(crate) fn build(
    modules: &[Module<'_>],
    paths: &[&str],
    table: &SymbolTable<'_>,
    res: &Resolution,
    header: &Header,
    kernels: &[KernelLayout],
    emitted: &Emitted,
) -> LinkMap {
    let symbols = emitted
        .symbols
        .iter()
        .map(|&(id, r)| {
            let item = &modules[r.module].items[r.item];
            let sym = table.get(id);
            let out = res.out_name(id);
            SymbolInfo {
                name: out.to_string(),
                kind: item.kind_str().to_string(),
                linkage: item.linkage().map_or("local", |l| l.as_str()).to_string(),
                defined_in: paths[r.module].to_string(),
                renamed_from: (out != sym.name).then(|| sym.name.to_string()),
            }
        })
        .collect();
    let kernels = emitted
        .symbols
        .iter()
        .filter_map(|&(_, r)| kernels.iter().find(|k| k.entry == r))
        .map(|k| {
            let name = modules[k.entry.module].items[k.entry.item]
                .symbol_name()
                .map_or("", |n| n.text);
            KernelInfo {
                name: name.to_string(),
                params: k.params.clone(),
                static_shared_bytes: k.static_shared_bytes,
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
