//! The user's workspace as `cargo metadata` sees it: which crates are device crates
//! (`[package.metadata.gpu]`), which kernel crates to build, and how crates depend on
//! each other.

use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use cargo_metadata::{DependencyKind, Metadata, MetadataCommand, Package, PackageId};

use crate::error::{Error, Result};

/// How a crate marks itself in `Cargo.toml`: `[package.metadata.gpu] kernels = true` (a
/// kernel crate: it gets a linked module) or `device = true` (a device library that other
/// device crates call). A crate that says neither but is reached from a kernel crate is
/// compiled for the device all the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceRole {
    /// Defines kernels; gets a linked module.
    Kernels,
    /// A library other device crates call.
    Library,
}

/// The keys `[package.metadata.gpu]` may hold.
const KNOWN_KEYS: &[&str] = &["kernels", "device"];

/// Runs `cargo metadata` for the workspace of `manifest_path` (a `Cargo.toml`), or of the
/// current directory when `None`, as cargo finds it.
///
/// Errors: [`ErrorKind::Config`](crate::ErrorKind::Config) with cargo's message.
pub fn load(manifest_path: Option<&Path>) -> Result<Metadata> {
    let mut cmd = MetadataCommand::new();
    if let Some(m) = manifest_path {
        cmd.manifest_path(m);
    }
    cmd.exec().map_err(|e| {
        Error::config(format!(
            "`cargo metadata`{} failed: {}\n  fix: run it inside a cargo workspace (a folder \
             with a Cargo.toml, or below one), or pass --manifest-path path/to/Cargo.toml",
            manifest_path.map_or(String::new(), |m| format!(" for {}", m.display())),
            e.to_string().trim_end()
        ))
    })
}

/// The role `package` declares, after checking its `[package.metadata.gpu]` table.
///
/// Errors: an unknown key (with the nearest known one), or a value that is not a boolean.
pub fn role(package: &Package) -> Result<Option<DeviceRole>> {
    let manifest = &package.manifest_path;
    let Some(gpu) = package.metadata.get("gpu") else {
        let typo = package.metadata.as_object().and_then(|m| {
            m.keys()
                .find(|k| k.as_str() != "gpu" && edit_distance(&k.to_lowercase(), "gpu") <= 1)
        });
        if let Some(k) = typo {
            return Err(Error::config(format!(
                "{manifest}: `[package.metadata.{k}]` of `{}`; did you mean \
                 `[package.metadata.gpu]`?\n  fix: rename the table to `[package.metadata.gpu]`",
                package.name
            )));
        }
        return Ok(None);
    };
    let Some(table) = gpu.as_object() else {
        return Err(Error::config(format!(
            "{manifest}: `package.metadata.gpu` of `{}` must be a table\n  fix: write \
             `[package.metadata.gpu]` followed by `kernels = true` or `device = true`",
            package.name
        )));
    };
    for (key, value) in table {
        if !KNOWN_KEYS.contains(&key.as_str()) {
            let hint = nearest(key)
                .map(|k| format!("; did you mean `{k}`?"))
                .unwrap_or_default();
            return Err(Error::config(format!(
                "{manifest}: unknown key `{key}` in `[package.metadata.gpu]` of `{}`{hint}\n  \
                 fix: the keys are `kernels = true` (a kernel crate) and `device = true` (a \
                 device library)",
                package.name
            )));
        }
        if !value.is_boolean() {
            return Err(Error::config(format!(
                "{manifest}: `[package.metadata.gpu] {key}` of `{}` is `{value}`, not a \
                 boolean\n  fix: write `{key} = true`",
                package.name
            )));
        }
    }
    let flag = |key: &str| table.get(key).and_then(|v| v.as_bool()).unwrap_or(false);
    Ok(if flag("kernels") {
        Some(DeviceRole::Kernels)
    } else if flag("device") {
        Some(DeviceRole::Library)
    } else {
        None
    })
}

/// The most edits a typo of `word` may be away from it.
fn typo_bound(word: &str) -> usize {
    2.max(word.len() / 3)
}

/// Whether `word` looks like a typo of `of` (a small edit distance, not equal).
pub fn is_typo_of(word: &str, of: &str) -> bool {
    word != of && edit_distance(&word.to_lowercase(), of) <= typo_bound(of)
}

/// The known key closest to `key` by edit distance, if it is close (a typo).
fn nearest(key: &str) -> Option<&'static str> {
    KNOWN_KEYS
        .iter()
        .map(|k| (edit_distance(key, k), *k))
        .filter(|(d, k)| *d <= typo_bound(k))
        .min()
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Every package of the metadata that declares a role, workspace members first. Checks
/// every `[package.metadata.gpu]` table on the way.
pub fn device_packages(metadata: &Metadata) -> Result<Vec<(&Package, DeviceRole)>> {
    let members: BTreeSet<&PackageId> = metadata.workspace_members.iter().collect();
    let mut found = Vec::new();
    let mut others = Vec::new();
    for p in &metadata.packages {
        if let Some(role) = role(p)? {
            if members.contains(&p.id) {
                found.push((p, role));
            } else {
                others.push((p, role));
            }
        }
    }
    found.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    others.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    found.extend(others);
    Ok(found)
}

/// The package whose manifest is `path` (a crate directory or its `Cargo.toml`).
///
/// Errors: the path has no `Cargo.toml`, or the metadata does not list it.
pub fn package_at<'m>(metadata: &'m Metadata, path: &Path) -> Result<&'m Package> {
    let manifest = manifest_of(path)?;
    metadata
        .packages
        .iter()
        .find(|p| {
            p.manifest_path
                .as_std_path()
                .canonicalize()
                .is_ok_and(|m| m == manifest)
        })
        .ok_or_else(|| {
            Error::config(format!(
                "{} is not a package of the workspace at {} (cargo metadata does not list it)",
                manifest.display(),
                metadata.workspace_root
            ))
        })
}

/// `path` as a canonical `Cargo.toml` path: `path` itself, or `path/Cargo.toml`.
pub fn manifest_of(path: &Path) -> Result<PathBuf> {
    let manifest = if path.file_name().is_some_and(|n| n == "Cargo.toml") {
        path.to_path_buf()
    } else {
        path.join("Cargo.toml")
    };
    manifest.canonicalize().map_err(|e| {
        Error::config(format!(
            "no crate at {}: {} ({e})\n  fix: give the kernel crate's directory or its \
             Cargo.toml",
            path.display(),
            manifest.display()
        ))
    })
}

/// Every package `root` depends on, transitively (normal dependencies only), excluding
/// `root` itself.
pub fn dependency_closure(metadata: &Metadata, root: &PackageId) -> BTreeSet<PackageId> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![root.clone()];
    while let Some(id) = stack.pop() {
        for dep in normal_deps(metadata, &id) {
            if seen.insert(dep.clone()) {
                stack.push(dep.clone());
            }
        }
    }
    seen
}

/// The shortest chain of normal dependencies from `from` to `to`, both included, as
/// package names.
pub fn dependency_chain(metadata: &Metadata, from: &PackageId, to: &PackageId) -> Vec<String> {
    let mut parent: Vec<(PackageId, PackageId)> = Vec::new();
    let mut queue = VecDeque::from([from.clone()]);
    let mut seen = BTreeSet::from([from.clone()]);
    while let Some(id) = queue.pop_front() {
        if &id == to {
            let mut chain = vec![id.clone()];
            let mut at = id;
            while let Some((_, p)) = parent.iter().find(|(c, _)| *c == at) {
                chain.push(p.clone());
                at = p.clone();
            }
            chain.reverse();
            return chain.iter().map(|id| name_of(metadata, id)).collect();
        }
        for dep in normal_deps(metadata, &id) {
            if seen.insert(dep.clone()) {
                parent.push((dep.clone(), id.clone()));
                queue.push_back(dep.clone());
            }
        }
    }
    vec![name_of(metadata, from), name_of(metadata, to)]
}

/// The package's name, or its id when the metadata does not list it (`core`).
pub fn name_of(metadata: &Metadata, id: &PackageId) -> String {
    metadata
        .packages
        .iter()
        .find(|p| &p.id == id)
        .map_or_else(|| id.repr.clone(), |p| p.name.to_string())
}

fn normal_deps<'m>(metadata: &'m Metadata, id: &PackageId) -> Vec<&'m PackageId> {
    let Some(node) = metadata
        .resolve
        .as_ref()
        .and_then(|r| r.nodes.iter().find(|n| &n.id == id))
    else {
        return Vec::new();
    };
    node.deps
        .iter()
        .filter(|d| d.dep_kinds.iter().any(|k| k.kind == DependencyKind::Normal))
        .map(|d| &d.pkg)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_of_known_keys_are_suggested() {
        assert_eq!(nearest("kernel"), Some("kernels"));
        assert_eq!(nearest("kernals"), Some("kernels"));
        assert_eq!(nearest("devices"), Some("device"));
        assert_eq!(nearest("Device"), Some("device"));
        assert_eq!(nearest("optimize"), None);
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("kernels", "kernels"), 0);
        assert_eq!(edit_distance("kernel", "kernels"), 1);
        assert_eq!(edit_distance("kernsl", "kernels"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
