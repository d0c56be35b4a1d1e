//! Procedural macros of `host-loader`, re-exported there: use
//! [`host_loader::include_ptx!`](../host_loader/macro.include_ptx.html), not this crate.
#![deny(missing_docs)]

use std::path::{Path, PathBuf};

use proc_macro::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{parse_macro_input, Ident, LitStr, Token};

/// `"name"` or `"name", dir = "folder"`.
struct Input {
    name: LitStr,
    dir: Option<LitStr>,
}

impl Parse for Input {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let name: LitStr = input.parse()?;
        let mut dir = None;
        if input.parse::<Option<Token![,]>>()?.is_some() && !input.is_empty() {
            let key: Ident = input.parse()?;
            if key != "dir" {
                return Err(syn::Error::new(
                    key.span(),
                    "expected `dir = \"folder\"` (relative to the crate's Cargo.toml)",
                ));
            }
            input.parse::<Token![=]>()?;
            dir = Some(input.parse()?);
            input.parse::<Option<Token![,]>>()?;
        }
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after include_ptx!'s arguments"));
        }
        Ok(Input { name, dir })
    }
}

/// Embeds `<dir>/<crate>.ptx` (and `<crate>.map.json` when present) as a
/// `host_loader::EmbeddedPtx`. See `host_loader::include_ptx!` for where `<dir>` is.
#[proc_macro]
pub fn include_ptx(input: TokenStream) -> TokenStream {
    let Input { name: lit, dir } = parse_macro_input!(input as Input);
    let name = lit.value();
    let dirs = match dir {
        Some(d) => match std::env::var_os("CARGO_MANIFEST_DIR") {
            Some(m) => vec![Path::new(&m).join(d.value())],
            None => vec![PathBuf::from(d.value())],
        },
        None => candidate_dirs(),
    };
    match find(&name, &dirs) {
        Ok((ptx, map)) => {
            let ptx = ptx.display().to_string();
            let map = match map {
                Some(m) => {
                    let m = m.display().to_string();
                    quote!(::core::option::Option::Some(::core::include_str!(#m)))
                }
                None => quote!(::core::option::Option::None),
            };
            quote! {
                ::host_loader::EmbeddedPtx {
                    name: #name,
                    ptx: ::core::include_str!(#ptx),
                    map: #map,
                }
            }
            .into()
        }
        Err(msg) => syn::Error::new(lit.span(), msg).to_compile_error().into(),
    }
}

/// The PTX file of kernel crate `name` and its link map (if there), or the message of the
/// compile error.
fn find(name: &str, dirs: &[PathBuf]) -> Result<(PathBuf, Option<PathBuf>), String> {
    if name.is_empty() || name.contains(['/', '\\']) || name.ends_with(".ptx") {
        return Err(format!(
            "include_ptx!(\"{name}\"): give the kernel crate's package name, e.g. \
             include_ptx!(\"vecadd-kernels\"), not a path"
        ));
    }
    for dir in dirs {
        let ptx = dir.join(format!("{name}.ptx"));
        if ptx.is_file() {
            let map = dir.join(format!("{name}.map.json"));
            return Ok((ptx, map.is_file().then_some(map)));
        }
    }
    let looked: Vec<String> = dirs
        .iter()
        .map(|d| d.join(format!("{name}.ptx")).display().to_string())
        .collect();
    Err(format!(
        "include_ptx!(\"{name}\"): `{name}.ptx` not found; build it from this crate's build.rs \
         (`gpu_build::BuildScript::new(\"path/to/{name}\").run()` writes it to OUT_DIR), or run \
         `cargo xtask build-ptx -p {name}` first (it writes target/ptx/{name}.ptx), or set \
         HOST_LOADER_PTX_DIR to the folder that holds it. Looked in: {}",
        if looked.is_empty() {
            "(nowhere: CARGO_MANIFEST_DIR is not set)".to_string()
        } else {
            looked.join(", ")
        }
    ))
}

/// Where to look, in order: `$HOST_LOADER_PTX_DIR`; `$OUT_DIR` (where a build script
/// using `gpu_build::BuildScript` writes); `$CARGO_TARGET_DIR/ptx`; then `target/ptx` in
/// the crate's folder and in every folder above it (the workspace root).
fn candidate_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os("HOST_LOADER_PTX_DIR") {
        dirs.push(PathBuf::from(d));
        return dirs;
    }
    if let Some(d) = std::env::var_os("OUT_DIR") {
        dirs.push(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("CARGO_TARGET_DIR") {
        dirs.push(Path::new(&d).join("ptx"));
    }
    if let Some(m) = std::env::var_os("CARGO_MANIFEST_DIR") {
        let mut at = Some(Path::new(&m));
        while let Some(dir) = at {
            dirs.push(dir.join("target").join("ptx"));
            at = dir.parent();
        }
    }
    dirs
}
