//! The fatbin manifest: what a multi-architecture build packed (`<crate>.fatbin.json`,
//! written by `gpu_build::fatbin`, read by `host_loader::Module::from_fatbin`), per
//! architecture the linked module's files and kernels. Like the [link map](crate::map),
//! the one definition both sides share.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// `<crate>.fatbin.json`: the fatbin and, per architecture, its files (relative to the
/// manifest's directory) and kernels, so a loader can check launches against the image a
/// device runs and report a kernel only other architectures have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FatbinManifest {
    /// The kernel crate's package name.
    pub package: String,
    /// The fatbin's file name, beside the manifest (`<package>.fatbin`).
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
    /// [`content_hash`] of the PTX and the link map when the fatbin was packed, so a
    /// loader can tell that they were rebuilt since.
    pub hash: String,
}

impl FatbinManifest {
    /// Reads a manifest file.
    ///
    /// Errors: why it cannot be read or is no manifest, naming the file (for the
    /// caller's error type).
    pub fn read(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a fatbin manifest: {e}", path.display()))
    }

    /// The architectures whose module has kernel `name`.
    pub fn archs_with(&self, name: &str) -> Vec<&str> {
        self.images
            .iter()
            .filter(|i| i.kernels.iter().any(|k| k == name))
            .map(|i| i.arch.as_str())
            .collect()
    }
}

/// FNV-1a, 64-bit, over `parts` in order, as 16 hex digits: the manifest's fingerprint
/// of an image's PTX followed by its link map (it catches a rebuild, not an adversary).
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
