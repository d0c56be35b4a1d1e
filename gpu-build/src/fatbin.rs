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

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};
use crate::link;

/// What a fatbin holds, written next to it as `<package>.fatbin.json`: per architecture
/// its files (relative to the manifest's directory) and kernels, so a loader can report a
/// kernel that exists only for some targets before it launches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FatbinManifest {
    /// The kernel crate's package name.
    pub package: String,
    /// `<package>.fatbin`.
    pub fatbin: String,
    /// One per architecture, in the order given to the build.
    pub images: Vec<FatbinImage>,
}

/// One architecture of a [`FatbinManifest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FatbinImage {
    /// `sm_80`, `sm_90a`, ...
    pub arch: String,
    /// The linked PTX (`<arch>/<package>.ptx`), also packed in the fatbin.
    pub ptx: String,
    /// Its link map.
    pub map: String,
    /// The cubin `ptxas -arch=<arch>` made of it.
    pub cubin: String,
    /// The `.entry` names of the module, in the map's order.
    pub kernels: Vec<String>,
}

impl FatbinManifest {
    /// Reads `<package>.fatbin.json`.
    ///
    /// Errors: [`ErrorKind::Io`] when it cannot be read; [`ErrorKind::Config`] when it is
    /// not a manifest.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        serde_json::from_str(&text)
            .map_err(|e| Error::config(format!("{} is not a fatbin manifest: {e}", path.display())))
    }

    /// The architectures that have kernel `name`.
    pub fn archs_with(&self, name: &str) -> Vec<&str> {
        self.images
            .iter()
            .filter(|i| i.kernels.iter().any(|k| k == name))
            .map(|i| i.arch.as_str())
            .collect()
    }
}

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

/// `ptxas -arch=<arch> <ptx> -o <cubin>`.
///
/// Errors: [`ErrorKind::Verify`] with ptxas's messages (no cubin is left);
/// [`ErrorKind::Toolchain`] when ptxas cannot be run.
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
        return Err(Error::new(
            ErrorKind::Verify,
            format!(
                "ptxas -arch={arch} rejected {}:\n{}",
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
    let tmp = dir.join(format!("{name}.tmp"));
    let mut cmd = Command::new(fatbinary);
    cmd.arg("-64").arg(format!("--create={}", tmp.display()));
    for i in &images {
        let sm = sm_value(&i.arch);
        cmd.arg(format!(
            "--image3=kind=elf,sm={sm},file={}",
            dir.join(&i.cubin).display()
        ));
        cmd.arg(format!(
            "--image3=kind=ptx,sm={sm},file={}",
            dir.join(&i.ptx).display()
        ));
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

    #[test]
    fn archs_with_lists_the_images_that_have_a_kernel() {
        let image = |arch: &str, kernels: &[&str]| FatbinImage {
            arch: arch.into(),
            ptx: String::new(),
            map: String::new(),
            cubin: String::new(),
            kernels: kernels.iter().map(|s| s.to_string()).collect(),
        };
        let m = FatbinManifest {
            package: "k".into(),
            fatbin: "k.fatbin".into(),
            images: vec![image("sm_80", &["a"]), image("sm_90a", &["a", "wgmma"])],
        };
        assert_eq!(m.archs_with("a"), ["sm_80", "sm_90a"]);
        assert_eq!(m.archs_with("wgmma"), ["sm_90a"]);
        assert!(m.archs_with("missing").is_empty());
    }
}
