//! Loading a multi-architecture build (`cargo xtask build-ptx --arch sm_80,sm_90a`): the
//! fatbin, checked against the PTX and link map of the image the device runs, and a
//! kernel that only other architectures have reported as such (issue 33, point 1).
//!
//! The manifest `<crate>.fatbin.json` is what `gpu_build::fatbin` writes: per
//! architecture the files (relative to the manifest) and the kernels.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cudarc::driver::CudaContext;
use serde::Deserialize;

use crate::{Error, LoadOptions, Module, Signatures};

/// `<crate>.fatbin.json`, as `gpu_build::fatbin::FatbinManifest` writes it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FatbinManifest {
    /// The kernel crate's package name.
    pub package: String,
    /// The fatbin's file name, beside the manifest.
    pub fatbin: String,
    /// One per architecture.
    pub images: Vec<FatbinImage>,
}

/// One architecture of a [`FatbinManifest`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FatbinImage {
    /// `sm_80`, `sm_90a`, ...
    pub arch: String,
    /// The linked PTX, relative to the manifest.
    pub ptx: String,
    /// Its link map, relative to the manifest.
    pub map: String,
    /// The cubin, relative to the manifest.
    pub cubin: String,
    /// The kernels this architecture's module has.
    pub kernels: Vec<String>,
    /// [`content_hash`] of the PTX and the link map when the fatbin was packed.
    pub hash: String,
}

/// FNV-1a (64-bit, 16 hex digits) over `parts` in order: the manifest's fingerprint of
/// an image's PTX and link map (`gpu_build::fatbin::content_hash`, the same function).
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

/// `sm_90a` → `(90, 'a')`, `sm_80` → `(80, ' ')`.
fn parse_arch(arch: &str) -> Option<(u32, char)> {
    let rest = arch.strip_prefix("sm_")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let suffix = rest[digits.len()..].chars().next().unwrap_or(' ');
    Some((digits.parse().ok()?, suffix))
}

/// The image the driver runs on a device of compute capability `sm` (major × 10 +
/// minor), as it chooses: the cubin built for exactly that architecture, else the newest
/// family cubin (`sm_100f`) of the same major version at or below it, else the newest
/// portable PTX (not an `a`/`f` variant) below it, JIT-compiled.
///
/// Errors (as text for the caller's error): two cubins match (`sm_90` and `sm_90a`), so
/// the driver's choice is not known; no image runs on the device.
pub fn choose_image(m: &FatbinManifest, sm: u32) -> Result<&FatbinImage, String> {
    let exact: Vec<&FatbinImage> = m
        .images
        .iter()
        .filter(|i| parse_arch(&i.arch).is_some_and(|(n, _)| n == sm))
        .collect();
    match exact[..] {
        [one] => return Ok(one),
        [a, b, ..] => {
            return Err(format!(
                "both {} and {} have cubins for this device (sm_{sm}), and the driver picks one \
                 of them; fix: build with only one of the two",
                a.arch, b.arch
            ))
        }
        [] => {}
    }
    let family = m
        .images
        .iter()
        .filter_map(|i| parse_arch(&i.arch).map(|(n, s)| (n, s, i)))
        .filter(|&(n, s, _)| s == 'f' && n / 10 == sm / 10 && n <= sm)
        .max_by_key(|&(n, _, _)| n);
    if let Some((_, _, image)) = family {
        return Ok(image);
    }
    m.images
        .iter()
        .filter_map(|i| parse_arch(&i.arch).map(|(n, s)| (n, s, i)))
        .filter(|&(n, s, _)| n < sm && s == ' ')
        .max_by_key(|&(n, _, _)| n)
        .map(|(_, _, i)| i)
        .ok_or_else(|| {
            format!(
                "no image runs on this device (sm_{sm}): the fatbin has {}, and only a cubin \
                 of exactly sm_{sm} or portable PTX of an older architecture would; fix: add \
                 sm_{sm} to --arch",
                m.images
                    .iter()
                    .map(|i| i.arch.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
}

impl FatbinManifest {
    /// Reads `<crate>.fatbin.json`.
    ///
    /// Errors: [`Error::InvalidPtx`] naming the file when it cannot be read or is no
    /// manifest.
    pub fn read(path: &Path) -> Result<Self, Error> {
        let invalid = |reason: String| Error::InvalidPtx {
            module: path.display().to_string(),
            reason,
        };
        let text =
            std::fs::read_to_string(path).map_err(|e| invalid(format!("cannot read: {e}")))?;
        serde_json::from_str(&text).map_err(|e| invalid(format!("not a fatbin manifest: {e}")))
    }

    /// The architectures whose module has kernel `name`.
    pub fn archs_with(&self, name: &str) -> Vec<String> {
        self.images
            .iter()
            .filter(|i| i.kernels.iter().any(|k| k == name))
            .map(|i| i.arch.clone())
            .collect()
    }
}

impl Module {
    /// Loads the fatbin of a multi-architecture build from its manifest
    /// (`<out>/<crate>.fatbin.json`): the driver runs the image for this device
    /// ([`choose_image`]), and the signatures and ABI records come from that image's PTX
    /// and link map, so every launch is checked as for PTX. [`Module::kernel`] of a kernel
    /// that only other architectures' images have fails with
    /// [`Error::KernelNotForDevice`], naming them.
    ///
    /// Errors: [`Error::InvalidPtx`] for an unreadable manifest, PTX, map or fatbin, or
    /// when no image (or more than one cubin) fits the device; [`Error::Driver`];
    /// [`Error::ModuleLoad`] when the driver rejects the fatbin.
    pub fn from_fatbin(ctx: &Arc<CudaContext>, manifest: impl AsRef<Path>) -> Result<Self, Error> {
        let path = manifest.as_ref();
        let m = FatbinManifest::read(path)?;
        let dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        let (major, minor) = ctx.compute_capability().map_err(|e| Error::Driver {
            context: "cuDeviceGetAttribute(COMPUTE_CAPABILITY)".into(),
            source: e,
        })?;
        let sm = (major * 10 + minor) as u32;
        let image = choose_image(&m, sm).map_err(|reason| Error::InvalidPtx {
            module: path.display().to_string(),
            reason,
        })?;
        let read = |rel: &str| {
            let p = dir.join(rel);
            std::fs::read(&p).map_err(|e| Error::InvalidPtx {
                module: p.display().to_string(),
                reason: format!("cannot read: {e}"),
            })
        };
        let ptx_bytes = read(&image.ptx)?;
        let map_bytes = read(&image.map)?;
        if content_hash(&[&ptx_bytes, &map_bytes]) != image.hash {
            return Err(Error::InvalidPtx {
                module: path.display().to_string(),
                reason: format!(
                    "{} and {} changed after {} was packed (a later build of {} failed or \
                     stopped before packing), so the checks would not describe the code \
                     that runs; fix: rebuild with the same --arch list",
                    image.ptx, image.map, m.fatbin, image.arch
                ),
            });
        }
        let ptx = String::from_utf8_lossy(&ptx_bytes).into_owned();
        let map: ptx_linker::LinkMap =
            serde_json::from_slice(&map_bytes).map_err(|e| Error::InvalidPtx {
                module: dir.join(&image.map).display().to_string(),
                reason: format!("not a link map: {e}"),
            })?;
        let name = dir.join(&m.fatbin).display().to_string();
        let others: Vec<(String, Vec<String>)> = m
            .images
            .iter()
            .filter(|i| i.arch != image.arch)
            .map(|i| (i.arch.clone(), i.kernels.clone()))
            .collect();
        let signatures = Signatures::from_link_map(&name, &map, &ptx)?
            .with_other_images(image.arch.clone(), others);
        let fatbin = read(&m.fatbin)?;
        Module::from_image(ctx, signatures, &fatbin, &LoadOptions::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(archs: &[&str]) -> FatbinManifest {
        FatbinManifest {
            package: "k".into(),
            fatbin: "k.fatbin".into(),
            images: archs
                .iter()
                .map(|a| FatbinImage {
                    arch: a.to_string(),
                    ptx: String::new(),
                    map: String::new(),
                    cubin: String::new(),
                    kernels: Vec::new(),
                    hash: String::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn the_exact_cubin_first_else_the_newest_portable_ptx_below() {
        let m = manifest(&["sm_80", "sm_90a"]);
        assert_eq!(choose_image(&m, 90).unwrap().arch, "sm_90a");
        assert_eq!(choose_image(&m, 80).unwrap().arch, "sm_80");
        // sm_86 and sm_100: sm_80's PTX (sm_90a's runs only on sm_90).
        assert_eq!(choose_image(&m, 86).unwrap().arch, "sm_80");
        assert_eq!(choose_image(&m, 100).unwrap().arch, "sm_80");
        let e = choose_image(&m, 75).unwrap_err();
        assert!(e.contains("no image runs on this device (sm_75)"), "{e}");
        assert!(e.contains("sm_80, sm_90a"), "{e}");
        let e = choose_image(&manifest(&["sm_90", "sm_90a"]), 90).unwrap_err();
        assert!(e.contains("both sm_90 and sm_90a"), "{e}");
        assert_eq!(
            choose_image(&manifest(&["sm_80", "sm_90"]), 120)
                .unwrap()
                .arch,
            "sm_90"
        );
        // A family cubin runs on its family's later GPUs: sm_100f on sm_103.
        let m = manifest(&["sm_80", "sm_100f"]);
        assert_eq!(choose_image(&m, 103).unwrap().arch, "sm_100f");
        assert_eq!(choose_image(&m, 100).unwrap().arch, "sm_100f");
        assert_eq!(choose_image(&m, 120).unwrap().arch, "sm_80");
        assert_eq!(choose_image(&m, 90).unwrap().arch, "sm_80");
    }

    #[test]
    fn the_content_hash_is_fnv1a() {
        assert_eq!(content_hash(&[]), "cbf29ce484222325");
        assert_eq!(content_hash(&[b"a"]), "af63dc4c8601ec8c");
    }

    #[test]
    fn arch_names_parse() {
        assert_eq!(parse_arch("sm_90a"), Some((90, 'a')));
        assert_eq!(parse_arch("sm_100f"), Some((100, 'f')));
        assert_eq!(parse_arch("sm_80"), Some((80, ' ')));
        assert_eq!(parse_arch("compute_80"), None);
    }
}

#[cfg(test)]
mod kernel_lookup {
    use crate::{Error, Signatures};

    const PTX: &str = ".version 7.8\n.target sm_80\n.address_size 64\n\
                       .visible .entry gemm_mma(.param .u64 p)\n{\n\tret;\n}\n";

    #[test]
    fn a_kernel_only_other_images_have_is_named_with_their_architectures() {
        let sigs = Signatures::parse("k.fatbin", PTX)
            .unwrap()
            .with_other_images(
                "sm_80".into(),
                vec![(
                    "sm_90a".into(),
                    vec!["gemm_mma".into(), "gemm_wgmma".into()],
                )],
            );
        assert!(sigs.get("gemm_mma").is_ok());
        let e = sigs.get("gemm_wgmma").unwrap_err();
        assert!(
            matches!(&e, Error::KernelNotForDevice { built_for, device_arch, .. }
                if built_for == &["sm_90a"] && device_arch == "sm_80"),
            "{e:?}"
        );
        assert!(
            e.to_string().starts_with(
                "kernel `gemm_wgmma` of `k.fatbin` is built only for sm_90a; this device runs \
                 the `sm_80` image, which lacks it"
            ),
            "{e}"
        );
        assert!(matches!(
            sigs.get("nowhere").unwrap_err(),
            Error::NoSuchKernel { .. }
        ));
    }
}
