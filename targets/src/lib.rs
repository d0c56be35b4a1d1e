//! Facts about NVIDIA GPU architectures (`sm_XX`) that the linker, the build
//! driver and the loader share.
//!
//! Sources: PTX ISA 9.0, section 12 "Release Notes" (PTX ISA version that
//! introduced each target) and CUDA C++ Programming Guide, table
//! "Technical Specifications per Compute Capability" (shared-memory limits).
#![deny(missing_docs)]

use std::fmt;
use std::str::FromStr;

/// One GPU architecture, e.g. `sm_90` or `sm_90a`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arch {
    /// Compute capability times ten: `90` for `sm_90`.
    pub sm: u32,
    /// Architecture-specific variant (`sm_90a`): features that are not
    /// forward-compatible.
    pub arch_specific: bool,
}

/// A PTX ISA version such as `7.8`, ordered numerically.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PtxVersion {
    /// Major version: `7` in `7.8`.
    pub major: u32,
    /// Minor version: `8` in `7.8`.
    pub minor: u32,
}

/// Errors from parsing an architecture name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchError {
    /// The text is not of the form `sm_XX` or `sm_XXa`.
    #[error("`{0}` is not a GPU architecture; expected `sm_XX` such as `sm_80` or `sm_90`")]
    Malformed(String),
    /// The architecture is well-formed but no table here knows it.
    #[error("unknown GPU architecture `{0}`; known: {known}", known = known_names())]
    Unknown(String),
}

/// Static facts for one architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchInfo {
    /// Compute capability times ten.
    pub sm: u32,
    /// Oldest PTX ISA version whose `.target` accepts this architecture.
    pub min_ptx: PtxVersion,
    /// Static shared memory one CTA may declare, in bytes (48 KiB on every
    /// architecture; more must be dynamic and opted into).
    pub max_static_shared_bytes: u32,
    /// Largest shared memory one CTA may use with the opt-in attribute
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`, in bytes.
    pub max_shared_bytes_optin: u32,
    /// Largest `.param` space for one kernel's parameters, in bytes
    /// (4 KiB, or 32 764 bytes from sm_70 with PTX ISA 8.1).
    pub max_param_bytes: u32,
}

const KIB: u32 = 1024;

/// Every architecture the tables know, oldest first.
pub const ARCHES: &[ArchInfo] = &[
    info(50, (4, 0), 48 * KIB),
    info(52, (4, 1), 48 * KIB),
    info(53, (4, 2), 48 * KIB),
    info(60, (5, 0), 48 * KIB),
    info(61, (5, 0), 48 * KIB),
    info(62, (5, 0), 48 * KIB),
    info(70, (6, 0), 96 * KIB),
    info(72, (6, 1), 96 * KIB),
    info(75, (6, 3), 64 * KIB),
    info(80, (7, 0), 163 * KIB),
    info(86, (7, 1), 99 * KIB),
    info(87, (7, 4), 163 * KIB),
    info(89, (7, 8), 99 * KIB),
    info(90, (7, 8), 227 * KIB),
    info(100, (8, 6), 227 * KIB),
    info(120, (8, 7), 99 * KIB),
];

const fn info(sm: u32, (major, minor): (u32, u32), optin: u32) -> ArchInfo {
    ArchInfo {
        sm,
        min_ptx: PtxVersion { major, minor },
        max_static_shared_bytes: 48 * KIB,
        max_shared_bytes_optin: optin,
        max_param_bytes: 4 * KIB,
    }
}

fn known_names() -> String {
    ARCHES
        .iter()
        .map(|a| format!("sm_{}", a.sm))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Arch {
    /// The table entry for this architecture.
    ///
    /// Errors: [`ArchError::Unknown`] when the tables do not list it.
    pub fn info(self) -> Result<&'static ArchInfo, ArchError> {
        ARCHES
            .iter()
            .find(|a| a.sm == self.sm)
            .ok_or_else(|| ArchError::Unknown(self.to_string()))
    }
}

impl FromStr for Arch {
    type Err = ArchError;

    /// Parses `sm_XX` or `sm_XXa` (also `sm_XXf`, treated as arch-specific).
    fn from_str(s: &str) -> Result<Self, ArchError> {
        let malformed = || ArchError::Malformed(s.to_string());
        let digits = s.strip_prefix("sm_").ok_or_else(malformed)?;
        let (digits, arch_specific) = match digits.strip_suffix(['a', 'f']) {
            Some(d) => (d, true),
            None => (digits, false),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(malformed());
        }
        let sm = digits.parse().map_err(|_| malformed())?;
        Ok(Arch { sm, arch_specific })
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "sm_{}{}",
            self.sm,
            if self.arch_specific { "a" } else { "" }
        )
    }
}

impl FromStr for PtxVersion {
    type Err = String;

    /// Parses `MAJOR.MINOR`, e.g. `7.8`.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not a PTX ISA version; expected MAJOR.MINOR such as 7.8");
        let (major, minor) = s.split_once('.').ok_or_else(bad)?;
        Ok(PtxVersion {
            major: major.parse().map_err(|_| bad())?,
            minor: minor.parse().map_err(|_| bad())?,
        })
    }
}

impl fmt::Display for PtxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names() {
        assert_eq!(
            "sm_90".parse(),
            Ok(Arch {
                sm: 90,
                arch_specific: false
            })
        );
        assert_eq!(
            "sm_90a".parse(),
            Ok(Arch {
                sm: 90,
                arch_specific: true
            })
        );
        assert_eq!("sm_100".parse::<Arch>().unwrap().to_string(), "sm_100");
        assert!(matches!(
            "compute_90".parse::<Arch>(),
            Err(ArchError::Malformed(_))
        ));
        assert!(matches!(
            "sm_".parse::<Arch>(),
            Err(ArchError::Malformed(_))
        ));
    }

    #[test]
    fn table_lookups() {
        let sm90: Arch = "sm_90".parse().unwrap();
        assert_eq!(
            sm90.info().unwrap().min_ptx,
            PtxVersion { major: 7, minor: 8 }
        );
        assert_eq!(sm90.info().unwrap().max_shared_bytes_optin, 227 * 1024);
        let err = "sm_91".parse::<Arch>().unwrap().info().unwrap_err();
        assert!(err.to_string().contains("sm_90"), "{err}");
    }

    #[test]
    fn versions_order_numerically() {
        let v = |s: &str| s.parse::<PtxVersion>().unwrap();
        assert!(v("7.10") > v("7.8"));
        assert!(v("8.0") > v("7.10"));
        assert_eq!(v("9.0").to_string(), "9.0");
    }
}
