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
    /// FNV-1a (64-bit, hex) of the PTX and its link map, so a loader can tell that they
    /// were rebuilt after the fatbin was packed ([`content_hash`]).
    pub hash: String,
}

/// FNV-1a, 64-bit, of `bytes`, as 16 hex digits: the manifest's fingerprint of an
/// image's PTX followed by its link map (not a cryptographic hash; it catches a rebuild,
/// not an adversary).
pub fn content_hash(parts: &[&[u8]]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
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
    fn the_content_hash_is_fnv1a_over_all_parts() {
        // FNV-1a 64 of "" and of "a" (the published test vectors).
        assert_eq!(content_hash(&[]), "cbf29ce484222325");
        assert_eq!(content_hash(&[b"a"]), "af63dc4c8601ec8c");
        assert_eq!(content_hash(&[b"a", b""]), content_hash(&[b"", b"a"]));
    }

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
            hash: String::new(),
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
