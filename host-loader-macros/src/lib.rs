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

/// Embeds `<dir>/<crate>.ptx` (and `<crate>.map.json` when present), or a
/// multi-architecture build's `<crate>.fatbin.json` with the fatbin and the PTX and link
/// map of each architecture it names, as a `host_loader::EmbeddedPtx`. See
/// `host_loader::include_ptx!` for where `<dir>` is.
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
    let found = find(&name, &dirs).and_then(|found| match found {
        Found::Ptx { ptx, map } => Ok(embed_ptx(&name, &ptx, map.as_deref())),
        Found::Fatbin(manifest) => embed_fatbin(&name, &manifest),
    });
    match found {
        Ok(tokens) => tokens.into(),
        Err(msg) => syn::Error::new(lit.span(), msg).to_compile_error().into(),
    }
}

/// What [`find`] found for a kernel crate.
#[derive(Debug)]
enum Found {
    /// A build for one architecture: `<crate>.ptx`, and its link map when present.
    Ptx { ptx: PathBuf, map: Option<PathBuf> },
    /// A build for several: `<crate>.fatbin.json`.
    Fatbin(PathBuf),
}

fn embed_ptx(name: &str, ptx: &Path, map: Option<&Path>) -> proc_macro2::TokenStream {
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
            fatbin: ::core::option::Option::None,
        }
    }
}

/// The `EmbeddedPtx` of a fatbin build: the manifest is read here for the files it names
/// (`fatbin`, and `images[].arch`, `.ptx`, `.map`, relative to it); every file is then
/// embedded by `include_str!`/`include_bytes!`, so cargo rebuilds when one changes.
fn embed_fatbin(name: &str, manifest: &Path) -> Result<proc_macro2::TokenStream, String> {
    let dir = manifest.parent().unwrap_or(Path::new(""));
    let bad = |why: String| {
        format!(
            "include_ptx!(\"{name}\"): {} {why}; fix: rebuild it (gpu_build::BuildScript or \
             `cargo xtask build-ptx --arch …`)",
            manifest.display()
        )
    };
    let text =
        std::fs::read_to_string(manifest).map_err(|e| bad(format!("cannot be read: {e}")))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("is not JSON: {e}")))?;
    let field = |v: &serde_json::Value, key: &str| -> Result<String, String> {
        v.get(key)
            .and_then(|f| f.as_str())
            .map(str::to_string)
            .ok_or_else(|| bad(format!("has no string `{key}`")))
    };
    let file = |rel: String| -> Result<String, String> {
        let p = dir.join(&rel);
        if p.is_file() {
            Ok(p.display().to_string())
        } else {
            Err(bad(format!("names {rel}, which is not there")))
        }
    };
    let fatbin = file(field(&json, "fatbin")?)?;
    let images = json
        .get("images")
        .and_then(|i| i.as_array())
        .filter(|i| !i.is_empty())
        .ok_or_else(|| bad("has no `images`".to_string()))?;
    let mut archs = Vec::new();
    for image in images {
        let (arch, ptx, map) = (
            field(image, "arch")?,
            file(field(image, "ptx")?)?,
            file(field(image, "map")?)?,
        );
        archs.push((arch, ptx, map));
    }
    let manifest = manifest.display().to_string();
    let (_, first_ptx, first_map) = &archs[0];
    let entries = archs.iter().map(|(arch, ptx, map)| {
        quote! {
            ::host_loader::EmbeddedArch {
                arch: #arch,
                ptx: ::core::include_str!(#ptx),
                map: ::core::include_str!(#map),
            }
        }
    });
    Ok(quote! {
        ::host_loader::EmbeddedPtx {
            name: #name,
            ptx: ::core::include_str!(#first_ptx),
            map: ::core::option::Option::Some(::core::include_str!(#first_map)),
            fatbin: ::core::option::Option::Some(::host_loader::EmbeddedFatbin {
                image: ::core::include_bytes!(#fatbin),
                manifest: ::core::include_str!(#manifest),
                archs: &[#(#entries),*],
            }),
        }
    })
}

/// The module of kernel crate `name` in the first of `dirs` that has one (its PTX, or its
/// fatbin manifest), or the message of the compile error.
fn find(name: &str, dirs: &[PathBuf]) -> Result<Found, String> {
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
            return Ok(Found::Ptx {
                ptx,
                map: map.is_file().then_some(map),
            });
        }
        let manifest = dir.join(format!("{name}.fatbin.json"));
        if manifest.is_file() {
            return Ok(Found::Fatbin(manifest));
        }
    }
    let looked: Vec<String> = dirs
        .iter()
        .map(|d| {
            d.join(format!("{name}.{{ptx,fatbin.json}}"))
                .display()
                .to_string()
        })
        .collect();
    let present = modules_in(dirs);
    let hint = match present
        .iter()
        .find(|m| m.replace('_', "-") == name.replace('_', "-"))
    {
        Some(m) => format!(" Did you mean include_ptx!(\"{m}\")? (package names keep their `-`.)"),
        None if !present.is_empty() => format!(" Modules there: {}.", present.join(", ")),
        None => String::new(),
    };
    Err(format!(
        "include_ptx!(\"{name}\"): neither `{name}.ptx` nor `{name}.fatbin.json` found.{hint} \
         Build it from this crate's build.rs (`gpu_build::BuildScript::new(\"path/to/kernel-crate\").run()` \
         writes `<package>.ptx`, or a fatbin for an architecture list, to OUT_DIR), or run \
         `cargo xtask build-ptx -p <package>` first (it writes target/ptx/<package>.ptx), or \
         set HOST_LOADER_PTX_DIR to the folder that holds it. Looked in: {}",
        if looked.is_empty() {
            "(nowhere: CARGO_MANIFEST_DIR is not set)".to_string()
        } else {
            looked.join(", ")
        }
    ))
}

/// The module names (`<name>.ptx`, `<name>.fatbin.json`) present in `dirs`, sorted.
fn modules_in(dirs: &[PathBuf]) -> Vec<String> {
    let mut names: Vec<String> = dirs
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".ptx")
                .or_else(|| name.strip_suffix(".fatbin.json"))
                .map(str::to_string)
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Where to look, in order: `$HOST_LOADER_PTX_DIR`; `$OUT_DIR` (where a build script
/// using `gpu_build::BuildScript` writes); `$CARGO_TARGET_DIR/ptx`; then `target/ptx` in
/// the crate's folder and in each folder above it up to the workspace root (the first
/// whose `Cargo.toml` has a `[workspace]` table), never beyond it.
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
        dirs.extend(target_dirs_up_to_workspace(Path::new(&m)));
    }
    dirs
}

/// `target/ptx` in `crate_dir` and each folder above it, up to and including the
/// workspace root (or `crate_dir` alone when no folder above declares `[workspace]`).
fn target_dirs_up_to_workspace(crate_dir: &Path) -> Vec<PathBuf> {
    let root = crate_dir
        .ancestors()
        .find(|d| is_workspace_root(d))
        .unwrap_or(crate_dir);
    let mut dirs = Vec::new();
    for dir in crate_dir.ancestors() {
        dirs.push(dir.join("target").join("ptx"));
        if dir == root {
            break;
        }
    }
    dirs
}

/// Whether `dir/Cargo.toml` declares a `[workspace]` table.
fn is_workspace_root(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("Cargo.toml"))
        .is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_stops_at_the_workspace_root() {
        let base = std::env::temp_dir().join(format!("include-ptx-{}", std::process::id()));
        let ws = base.join("ws");
        std::fs::create_dir_all(ws.join("host")).unwrap();
        std::fs::create_dir_all(base.join("target/ptx")).unwrap();
        std::fs::write(ws.join("Cargo.toml"), "[workspace]\nmembers = [\"host\"]\n").unwrap();
        std::fs::write(base.join("target/ptx/k.ptx"), "junk").unwrap();
        let dirs = target_dirs_up_to_workspace(&ws.join("host"));
        assert_eq!(
            dirs,
            vec![ws.join("host/target/ptx"), ws.join("target/ptx")],
            "searched past the workspace root"
        );
        // The unrelated module above the workspace is not found.
        assert!(find("k", &dirs).is_err());
        std::fs::create_dir_all(ws.join("target/ptx")).unwrap();
        std::fs::write(ws.join("target/ptx/my-k.ptx"), "x").unwrap();
        let err = find("my_k", &dirs).unwrap_err();
        assert!(
            err.contains("Did you mean include_ptx!(\"my-k\")?"),
            "{err}"
        );
        assert!(find("my-k", &dirs).is_ok());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_fatbin_manifest_is_found_and_named_when_missing() {
        let dir = std::env::temp_dir().join(format!("include-ptx-fat-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dirs = vec![dir.clone()];
        let err = find("k", &dirs).unwrap_err();
        assert!(
            err.contains("neither `k.ptx` nor `k.fatbin.json` found")
                && err.contains("k.{ptx,fatbin.json}"),
            "{err}"
        );
        std::fs::write(dir.join("k.fatbin.json"), "{}").unwrap();
        assert!(matches!(find("k", &dirs), Ok(Found::Fatbin(_))));
        // A manifest without the files it names is refused with the manifest named.
        let err = embed_fatbin("k", &dir.join("k.fatbin.json")).unwrap_err();
        assert!(
            err.contains("k.fatbin.json") && err.contains("rebuild"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
