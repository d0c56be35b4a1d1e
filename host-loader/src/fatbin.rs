//! Loading a multi-architecture build (`cargo xtask build-ptx --arch sm_80,sm_90a`): the
//! fatbin, checked against the PTX and link map of the image the device runs, and a
//! kernel that only other architectures have reported as such (issue 33, point 1).
//!
//! The manifest `<crate>.fatbin.json` is what `gpu_build::fatbin` writes: per
//! architecture the files (relative to the manifest) and the kernels.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cudarc::driver::CudaContext;
use targets::{Arch, Variant};

use crate::module::SignatureSource;
use crate::{EmbeddedFatbin, Error, LoadOptions, Module, Signatures};

pub use ptx_linker::fatbin_map::{content_hash, FatbinImage, FatbinManifest};

/// The image's architecture (`sm_90a`), `None` when it is no `sm_` name.
fn arch_of(image: &FatbinImage) -> Option<Arch> {
    image.arch.parse().ok()
}

/// The architecture whose image the driver runs on a device of compute capability `sm`
/// (major × 10 + minor), as it chooses: the cubin built for exactly that architecture,
/// else the newest family cubin (`sm_100f`) of the same major version at or below it,
/// else the newest portable (not `a`/`f`) architecture below it — its cubin where the
/// major version is the same (an `sm_80` cubin runs on sm_86 and sm_89), its PTX,
/// JIT-compiled, on a later major version. Either way the launches are checked against
/// that architecture's PTX and link map.
///
/// Errors (as text for the caller's error): two cubins match (`sm_90` and `sm_90a`), so
/// the driver's choice is not known; no image runs on the device.
pub fn choose_image(m: &FatbinManifest, sm: u32) -> Result<&FatbinImage, String> {
    let exact: Vec<&FatbinImage> = m
        .images
        .iter()
        .filter(|i| arch_of(i).is_some_and(|a| a.sm == sm))
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
        .filter_map(|i| arch_of(i).map(|a| (a, i)))
        .filter(|(a, _)| a.variant == Variant::FamilySpecific && a.sm / 10 == sm / 10 && a.sm <= sm)
        .max_by_key(|(a, _)| a.sm);
    if let Some((_, image)) = family {
        return Ok(image);
    }
    m.images
        .iter()
        .filter_map(|i| arch_of(i).map(|a| (a, i)))
        .filter(|(a, _)| a.sm < sm && a.variant == Variant::Generic)
        .max_by_key(|(a, _)| a.sm)
        .map(|(_, i)| i)
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

/// Reads `<crate>.fatbin.json` ([`FatbinManifest::read`]).
///
/// Errors: [`Error::InvalidPtx`] naming the file when it cannot be read or is no
/// manifest.
pub fn read_manifest(path: &Path) -> Result<FatbinManifest, Error> {
    FatbinManifest::read(path).map_err(|reason| Error::InvalidPtx {
        module: path.display().to_string(),
        reason,
    })
}

impl Module {
    /// Loads the fatbin of a multi-architecture build from its manifest
    /// (`<out>/<crate>.fatbin.json`): the driver runs the image for this device
    /// ([`choose_image`]), and the signatures and ABI records come from that image's PTX
    /// and link map, so every launch is checked as for PTX. [`Module::kernel`] of a kernel
    /// that only other architectures' images have fails with
    /// [`Error::KernelNotForDevice`], naming them. The same build embedded in the binary:
    /// [`include_ptx!`](crate::include_ptx) and [`Module::from_embedded`].
    ///
    /// Errors: [`Error::InvalidPtx`] for an unreadable manifest, PTX, map or fatbin, or
    /// when no image (or more than one cubin) fits the device; [`Error::Driver`];
    /// [`Error::ModuleLoad`] when the driver rejects the fatbin.
    pub fn from_fatbin(ctx: &Arc<CudaContext>, manifest: impl AsRef<Path>) -> Result<Self, Error> {
        let path = manifest.as_ref();
        let m = read_manifest(path)?;
        let dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        let read = |rel: &str| {
            let p = dir.join(rel);
            std::fs::read(&p).map_err(|e| Error::InvalidPtx {
                module: p.display().to_string(),
                reason: format!("cannot read: {e}"),
            })
        };
        let image = device_image(ctx, &path.display().to_string(), &m)?;
        let (ptx, map) = (read(&image.ptx)?, read(&image.map)?);
        let fatbin = read(&m.fatbin)?;
        let parts = Parts {
            name: dir.join(&m.fatbin).display().to_string(),
            map_name: dir.join(&image.map).display().to_string(),
            ptx: &ptx,
            map: &map,
            fatbin: &fatbin,
        };
        load_image(ctx, &m, image, parts, &LoadOptions::new())
    }

    /// [`Module::from_embedded`] of a fatbin build (`name`: the crate, for messages).
    pub(crate) fn from_embedded_fatbin(
        ctx: &Arc<CudaContext>,
        name: &str,
        embedded: &EmbeddedFatbin,
        options: &LoadOptions,
    ) -> Result<Self, Error> {
        let m: FatbinManifest =
            serde_json::from_str(embedded.manifest).map_err(|e| Error::InvalidPtx {
                module: format!("{name} fatbin manifest"),
                reason: format!("not a fatbin manifest: {e}"),
            })?;
        let image = device_image(ctx, name, &m)?;
        let files = embedded
            .archs
            .iter()
            .find(|a| a.arch == image.arch)
            .ok_or_else(|| Error::InvalidPtx {
                module: name.to_string(),
                reason: format!(
                    "the embedded manifest names {} but its module was not embedded (the \
                     folder changed while include_ptx! read it); fix: rebuild",
                    image.arch
                ),
            })?;
        let parts = Parts {
            name: name.to_string(),
            map_name: format!("{name} {} link map", image.arch),
            ptx: files.ptx.as_bytes(),
            map: files.map.as_bytes(),
            fatbin: embedded.image,
        };
        load_image(ctx, &m, image, parts, options)
    }
}

/// What [`load_image`] reads, from files or from the binary.
struct Parts<'a> {
    /// The fatbin, for messages.
    name: String,
    /// The chosen image's link map, for messages.
    map_name: String,
    ptx: &'a [u8],
    map: &'a [u8],
    fatbin: &'a [u8],
}

/// The image of `m` the device of `ctx` runs ([`choose_image`]); `name` names the
/// manifest in errors.
fn device_image<'m>(
    ctx: &Arc<CudaContext>,
    name: &str,
    m: &'m FatbinManifest,
) -> Result<&'m FatbinImage, Error> {
    let (major, minor) = ctx.compute_capability().map_err(|e| Error::Driver {
        context: "cuDeviceGetAttribute(COMPUTE_CAPABILITY)".into(),
        source: e,
    })?;
    choose_image(m, (major * 10 + minor) as u32).map_err(|reason| Error::InvalidPtx {
        module: name.to_string(),
        reason,
    })
}

/// Loads `parts.fatbin` with the signatures of `image` (its PTX and link map, which must
/// hash as when the fatbin was packed) and the other images' kernels for
/// [`Error::KernelNotForDevice`].
fn load_image(
    ctx: &Arc<CudaContext>,
    m: &FatbinManifest,
    image: &FatbinImage,
    parts: Parts<'_>,
    options: &LoadOptions,
) -> Result<Module, Error> {
    if content_hash(&[parts.ptx, parts.map]) != image.hash {
        return Err(Error::InvalidPtx {
            module: parts.name,
            reason: format!(
                "{} and {} changed after {} was packed (a later build of {} failed or \
                 stopped before packing), so the checks would not describe the code that \
                 runs; fix: rebuild with the same --arch list",
                image.ptx, image.map, m.fatbin, image.arch
            ),
        });
    }
    let ptx = String::from_utf8_lossy(parts.ptx);
    let map: ptx_linker::LinkMap =
        crate::module::parse_map(&parts.map_name, &String::from_utf8_lossy(parts.map))?;
    let others: Vec<(String, Vec<String>)> = m
        .images
        .iter()
        .filter(|i| i.arch != image.arch)
        .map(|i| (i.arch.clone(), i.kernels.clone()))
        .collect();
    let signatures = Signatures::from_link_map(&parts.name, &map, &ptx)?
        .with_other_images(image.arch.clone(), others);
    Module::from_image_with(
        ctx,
        signatures,
        parts.fatbin,
        options,
        SignatureSource::PackedWith,
    )
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
