//! Checks made on a device crate's source before the nightly build starts, so the
//! mistakes a new user makes first get a message that names the crate and the fix
//! instead of a compiler error about `std` or an unstable ABI.

use std::path::Path;

use cargo_metadata::Package;
use quote::ToTokens;
use syn::Attribute;

use crate::error::{Error, Result};

/// What the crate root's inner attributes declare.
#[derive(Debug, Default, PartialEq, Eq)]
struct RootAttributes {
    /// `#![no_std]`, plainly or under `cfg_attr`.
    no_std: bool,
    /// `#![feature(abi_ptx)]`, plainly or under `cfg_attr`.
    abi_ptx: bool,
    /// An ungated `extern crate std;` / `extern crate alloc;`: the crate and the line.
    extern_crate: Option<(String, usize)>,
}

/// Checks a device crate of this build (a kernel crate or a path dependency of one).
///
/// Errors: [`ErrorKind::Config`](crate::ErrorKind::Config) when the crate root is not
/// `#![no_std]`, or when a kernel crate lacks the `abi_ptx` feature line; each names the
/// file and gives the line to add.
pub fn check(package: &Package, kernel_crate: bool) -> Result<()> {
    let Some(root) = lib_root(package) else {
        return Err(Error::config(format!(
            "{}: `{}` has no library target; a device crate is a library (src/lib.rs)\n  fix: \
             move the device code into src/lib.rs",
            package.manifest_path, package.name
        )));
    };
    let attrs = root_attributes(root)?;
    if let Some((krate, line)) = &attrs.extern_crate {
        return Err(Error::config(format!(
            "{}:{line}: device crate `{}` declares `extern crate {krate};`, but device code \
             has no `std` and no heap (the nvptx64-nvidia-cuda build has `core` only)\n  fix: \
             remove the line, or gate it with `#[cfg(not(target_arch = \"nvptx64\"))]` for \
             host-only code; in kernels use the slices a launch passes in, `SharedArray` or \
             `DynamicSharedArray` for scratch memory and fixed-size arrays for locals, not \
             `Vec`, `Box` or `String`",
            root.display(),
            package.name,
        )));
    }
    if !attrs.no_std {
        return Err(Error::config(format!(
            "{}: device crate `{}` is not `#![no_std]`; the nvptx64-nvidia-cuda target has no \
             `std`\n  fix: add `#![no_std]` as the first line of {}",
            root.display(),
            package.name,
            root.display()
        )));
    }
    if kernel_crate && !attrs.abi_ptx {
        return Err(Error::config(format!(
            "{}: kernel crate `{}` does not enable the `ptx-kernel` ABI that `#[kernel]` \
             emits\n  fix: add `#![cfg_attr(target_arch = \"nvptx64\", feature(abi_ptx))]` \
             after `#![no_std]` in {}",
            root.display(),
            package.name,
            root.display()
        )));
    }
    Ok(())
}

/// The crate root (`src/lib.rs`) of `package`'s library target.
pub fn lib_root(package: &Package) -> Option<&Path> {
    package
        .targets
        .iter()
        .find(|t| t.is_lib())
        .map(|t| t.src_path.as_std_path())
}

fn root_attributes(root: &Path) -> Result<RootAttributes> {
    let text = std::fs::read_to_string(root)
        .map_err(|e| Error::io(format!("reading {}", root.display()), e))?;
    let file = syn::parse_file(&text).map_err(|e| {
        let at = e.span().start();
        Error::config(format!(
            "{}:{}:{}: {e}",
            root.display(),
            at.line,
            at.column + 1
        ))
    })?;
    let mut found = scan(&file.attrs);
    found.extern_crate = extern_std_or_alloc(&file.items);
    Ok(found)
}

/// The first ungated `extern crate std;` or `extern crate alloc;` of a crate root, with
/// its line (an item under any `cfg` attribute is taken for host-only code).
fn extern_std_or_alloc(items: &[syn::Item]) -> Option<(String, usize)> {
    items.iter().find_map(|item| match item {
        syn::Item::ExternCrate(e)
            if (e.ident == "std" || e.ident == "alloc")
                && !e.attrs.iter().any(|a| a.path().is_ident("cfg")) =>
        {
            Some((e.ident.to_string(), e.extern_token.span.start().line))
        }
        _ => None,
    })
}

fn scan(attrs: &[Attribute]) -> RootAttributes {
    let mut found = RootAttributes::default();
    for attr in attrs {
        // `no_std`, `feature(...)` and `cfg_attr(cond, ...)` alike: look at the words.
        let text = attr.meta.to_token_stream().to_string();
        if attr.path().is_ident("no_std")
            || (attr.path().is_ident("cfg_attr") && has_word(&text, "no_std"))
        {
            found.no_std = true;
        }
        if (attr.path().is_ident("feature") || attr.path().is_ident("cfg_attr"))
            && has_word(&text, "abi_ptx")
        {
            found.abi_ptx = true;
        }
    }
    found
}

fn has_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(src: &str) -> RootAttributes {
        scan(&syn::parse_file(src).unwrap().attrs)
    }

    #[test]
    fn plain_and_cfg_attr_forms_are_recognised() {
        assert_eq!(
            attrs("#![no_std]\n#![cfg_attr(target_arch = \"nvptx64\", feature(abi_ptx))]\n"),
            RootAttributes {
                no_std: true,
                abi_ptx: true,
                extern_crate: None,
            }
        );
        assert_eq!(
            attrs("#![cfg_attr(not(test), no_std)]\n#![feature(abi_ptx, stdarch_nvptx)]\n"),
            RootAttributes {
                no_std: true,
                abi_ptx: true,
                extern_crate: None,
            }
        );
    }

    #[test]
    fn missing_lines_are_reported_absent() {
        assert_eq!(
            attrs("//! docs\npub fn f() {}\n"),
            RootAttributes::default()
        );
        // `no_std_compat` is not `no_std`; `abi_ptx2` is not `abi_ptx`.
        assert_eq!(
            attrs("#![cfg_attr(x, feature(abi_ptx2))]\n#![doc = \"no_std_compat\"]\n"),
            RootAttributes::default()
        );
    }

    #[test]
    fn extern_std_and_alloc_are_found_unless_gated() {
        let items = |src: &str| syn::parse_file(src).unwrap().items;
        assert_eq!(
            extern_std_or_alloc(&items("#![no_std]\n\nextern crate alloc;\n")),
            Some(("alloc".to_string(), 3))
        );
        assert_eq!(
            extern_std_or_alloc(&items("extern crate std;\n")),
            Some(("std".to_string(), 1))
        );
        assert_eq!(
            extern_std_or_alloc(&items(
                "#[cfg(test)]\nextern crate std;\n#[cfg(not(target_arch = \"nvptx64\"))]\nextern crate alloc;\nextern crate core;\n"
            )),
            None
        );
    }

    #[test]
    fn a_crate_root_with_extern_std_is_refused_with_the_line_and_what_to_use() {
        let dir = std::env::temp_dir().join(format!("preflight-std-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let root = dir.join("src/lib.rs");
        std::fs::write(&root, "#![no_std]\nextern crate std;\n").unwrap();
        let found = root_attributes(&root).unwrap();
        assert_eq!(found.extern_crate, Some(("std".to_string(), 2)));
        std::fs::remove_dir_all(&dir).ok();
    }
}
