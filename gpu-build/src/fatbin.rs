//! Several architectures in one file: a kernel crate's linked PTX for each listed
//! target, each assembled by `ptxas` into a cubin, packed with the PTX (for the driver's
//! JIT on newer GPUs) into one fatbin by NVIDIA's `fatbinary`, and a manifest naming,
//! per architecture, the files and the kernels that exist there (issue 33, point 1).
//!
//! Layout under the output directory `<out>`:
//!
//! ```text
//! <out>/<arch>/<package>.ptx, .map.json    the linked module of each architecture
//! <out>/<arch>/<package>.cubin             ptxas -arch=<arch>
//! <out>/<package>.fatbin                   every cubin and PTX above
//! <out>/<package>.fatbin.json              FatbinManifest
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, ErrorKind, Result};
use crate::link;

pub use ptx_linker::fatbin_map::{content_hash, FatbinImage, FatbinManifest};

/// NVIDIA's `fatbinary`: `$FATBINARY`, else next to `ptxas` (the `nvidia-cuda-nvcc` wheel
/// `cargo xtask setup` installs has both), else on `PATH`.
pub fn find_fatbinary(ptxas: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FATBINARY") {
        return Some(PathBuf::from(p));
    }
    let beside = ptxas.with_file_name("fatbinary");
    if beside.is_file() {
        return Some(beside);
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("fatbinary"))
            .find(|p| p.is_file())
    })
}

/// `ptxas -arch=<arch> <ptx> -o <cubin>`: the multi-architecture build's check of each
/// linked module and its cubin in one pass.
///
/// Errors: [`ErrorKind::Verify`] with ptxas's messages (no cubin is left, and the refused
/// module and its link map are removed); [`ErrorKind::Toolchain`] when ptxas cannot be
/// run.
pub fn assemble(ptxas: &Path, ptx: &Path, arch: &str, cubin: &Path) -> Result<()> {
    let tmp = cubin.with_extension("cubin.tmp");
    let out = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg(ptx)
        .arg("-o")
        .arg(&tmp)
        .output()
        .map_err(|e| Error::toolchain(format!("cannot run {}: {e}", ptxas.display())))?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&tmp);
        let _ = std::fs::remove_file(ptx);
        let _ = std::fs::remove_file(link::map_path(ptx));
        return Err(Error::new(
            ErrorKind::Verify,
            format!(
                "ptxas -arch={arch} rejected {} (removed it and its link map):\n{}",
                ptx.display(),
                String::from_utf8_lossy(&out.stderr).trim_end()
            ),
        ));
    }
    std::fs::rename(&tmp, cubin)
        .map_err(|e| Error::io(format!("renaming to {}", cubin.display()), e))
}

/// The `sm=` value `fatbinary` takes for `arch`: `sm_90a` → `90a`.
fn sm_value(arch: &str) -> &str {
    arch.strip_prefix("sm_").unwrap_or(arch)
}

/// Packs every image's cubin and PTX into `<dir>/<package>.fatbin` with `fatbinary`, and
/// writes the manifest beside it. `images` paths are relative to `dir`.
///
/// Errors: [`ErrorKind::Toolchain`] when `fatbinary` cannot be run or refuses (its
/// messages quoted); [`ErrorKind::Io`]. Nothing partial is left: the fatbin is written
/// through a temporary file, the manifest last.
pub fn pack(
    fatbinary: &Path,
    dir: &Path,
    package: &str,
    images: Vec<FatbinImage>,
) -> Result<FatbinManifest> {
    let name = format!("{package}.fatbin");
    let out = dir.join(&name);
    let tmp_name = format!("{name}.tmp");
    let tmp = dir.join(&tmp_name);
    // fatbinary splits `--image3` on commas: run it in `dir` with the relative names
    // (`sm_80/K.cubin`; architectures and package names hold no commas), so a comma in
    // the output directory's path cannot reach it.
    let mut cmd = Command::new(fatbinary);
    cmd.current_dir(dir)
        .arg("-64")
        .arg(format!("--create={tmp_name}"));
    for i in &images {
        let sm = sm_value(&i.arch);
        cmd.arg(format!("--image3=kind=elf,sm={sm},file={}", i.cubin));
        cmd.arg(format!("--image3=kind=ptx,sm={sm},file={}", i.ptx));
    }
    let run = cmd
        .output()
        .map_err(|e| Error::toolchain(format!("cannot run {}: {e}", fatbinary.display())))?;
    if !run.status.success() {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::toolchain(format!(
            "{} refused to pack {name}:\n{}",
            fatbinary.display(),
            String::from_utf8_lossy(&run.stderr).trim_end()
        )));
    }
    std::fs::rename(&tmp, &out)
        .map_err(|e| Error::io(format!("renaming to {}", out.display()), e))?;
    let manifest = FatbinManifest {
        package: package.to_string(),
        fatbin: name,
        images,
    };
    let json = serde_json::to_string_pretty(&manifest)
        .map_err(|e| Error::config(format!("serializing the fatbin manifest: {e}")))?;
    link::write_atomically(&dir.join(format!("{package}.fatbin.json")), json.as_bytes())?;
    Ok(manifest)
}

/// The `.entry` names of a link map file.
///
/// Errors: [`ErrorKind::Io`]; [`ErrorKind::Config`] when it is not a link map.
pub fn kernels_of(map: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(map)
        .map_err(|e| Error::io(format!("reading {}", map.display()), e))?;
    let map: ptx_linker::LinkMap = serde_json::from_str(&text)
        .map_err(|e| Error::config(format!("{} is not a link map: {e}", map.display())))?;
    Ok(map.kernels.into_iter().map(|k| k.name).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sm_values_follow_fatbinary() {
        assert_eq!(sm_value("sm_80"), "80");
        assert_eq!(sm_value("sm_90a"), "90a");
        assert_eq!(sm_value("sm_100f"), "100f");
    }
}
