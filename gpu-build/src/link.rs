//! Linking one kernel crate's PTX with its libraries' (`ptx-linker`), validating the
//! result (`ptxas`), and writing outputs so that a failure leaves nothing partial.

use std::path::{Path, PathBuf};
use std::process::Command;

use ptx_linker::{InputKind, LinkInput, LinkOptions, SourceFile};

use crate::cargo_device::CratePtx;
use crate::error::{Error, ErrorKind, Result};

/// Links `own` (an object: every symbol kept) with `libraries` (pulled in only to
/// resolve a reference, trimmed to what the kernels reach) into `output` and
/// `output.map.json`. Paths in diagnostics are shown relative to `root`.
///
/// Errors: [`ErrorKind::Link`] with the linker's diagnostics; [`ErrorKind::Io`].
pub fn link_one(
    package: &str,
    own: &CratePtx,
    libraries: &[&CratePtx],
    arch: targets::Arch,
    output: &Path,
    root: &Path,
) -> Result<()> {
    let read = |ptx: &CratePtx, kind| -> Result<LinkInput> {
        let text = std::fs::read_to_string(&ptx.path)
            .map_err(|e| Error::io(format!("reading {}", ptx.path.display()), e))?;
        Ok(LinkInput {
            file: SourceFile {
                path: display(&ptx.path, root),
                text,
            },
            kind,
        })
    };
    let object = read(own, InputKind::Object)?;
    if !has_entry(&object.file.text) {
        return Err(Error::config(format!(
            "kernel crate `{package}` defines no kernels: its PTX ({}) has no `.entry`\n  fix: \
             mark a function `#[kernel]` (device_std::kernel), or make the crate a device \
             library with `[package.metadata.gpu] device = true`",
            display(&own.path, root)
        )));
    }
    let mut inputs = vec![object];
    for lib in libraries {
        inputs.push(read(lib, InputKind::Library)?);
    }
    let options = LinkOptions {
        arch: Some(arch),
        gc: true,
        ..LinkOptions::default()
    };
    // Streamed to a temporary file as it is emitted (the whole module is never held in
    // memory), renamed only when complete.
    let tmp = output.with_extension("tmp");
    let io = |what: &str, e| Error::io(format!("{what} {}", tmp.display()), e);
    let file = std::fs::File::create(&tmp).map_err(|e| io("creating", e))?;
    let mut writer = std::io::BufWriter::new(file);
    let linked = ptx_linker::link_to(&inputs, &options, &mut writer)
        .and_then(|report| {
            std::io::Write::flush(&mut writer)?;
            Ok(report)
        })
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            match e {
                ptx_linker::LinkToError::Link(e) => Error::new(
                    ErrorKind::Link,
                    format!("linking kernel crate `{package}`:\n{e}"),
                ),
                ptx_linker::LinkToError::Write(e) => io("writing", e),
            }
        })?;
    drop(writer);
    let map = serde_json::to_string_pretty(&linked.map)
        .map_err(|e| Error::new(ErrorKind::Link, format!("serialising the link map: {e}")))?;
    std::fs::rename(&tmp, output)
        .map_err(|e| Error::io(format!("renaming to {}", output.display()), e))?;
    if let Err(e) = write_atomically(&map_path(output), map.as_bytes()) {
        let _ = std::fs::remove_file(output);
        return Err(e);
    }
    Ok(())
}

/// `X.ptx` → `X.map.json`.
pub fn map_path(ptx: &Path) -> PathBuf {
    ptx.with_extension("map.json")
}

/// Whether PTX text declares a kernel (`.entry`), outside comments.
fn has_entry(ptx: &str) -> bool {
    ptx.lines().any(|l| {
        let code = l.split("//").next().unwrap_or("");
        code.split_whitespace().any(|w| w == ".entry")
    })
}

/// Writes through a temporary file and a rename, so a failed run never leaves a partial
/// output behind.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).map_err(|e| Error::io(format!("writing {}", tmp.display()), e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(format!("renaming to {}", path.display()), e))
}

/// Assembles `module` with `ptxas -arch=<arch>`; on refusal removes the module and its
/// link map, so no rejected output stays behind.
///
/// Errors: [`ErrorKind::Verify`] with ptxas's messages; [`ErrorKind::Toolchain`] when
/// ptxas cannot be run.
pub fn verify(ptxas: &Path, module: &Path, arch: targets::Arch) -> Result<()> {
    let out = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg(module)
        .args(["-o", "/dev/null"])
        .output()
        .map_err(|e| Error::toolchain(format!("cannot run {}: {e}", ptxas.display())))?;
    if !out.status.success() {
        let _ = std::fs::remove_file(module);
        let _ = std::fs::remove_file(map_path(module));
        return Err(Error::new(
            ErrorKind::Verify,
            format!(
                "ptxas rejected {} (removed it and its link map):\n{}",
                module.display(),
                String::from_utf8_lossy(&out.stderr).trim_end()
            ),
        ));
    }
    Ok(())
}

/// `path` relative to `root` when it is inside it.
pub fn display(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_found_outside_comments_only() {
        assert!(has_entry(".visible .entry k(\n)"));
        assert!(has_entry("\t.entry k()"));
        assert!(!has_entry("// .entry k()\n.visible .func f()"));
        assert!(!has_entry(".visible .func entry_point()"));
    }
}
