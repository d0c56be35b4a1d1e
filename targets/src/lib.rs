//! Facts about NVIDIA GPU architectures (`sm_XX`) that the linker, the build
//! driver and the loader share.
//!
//! Sources: PTX ISA 9.0, section 12 "Release Notes" (PTX ISA version that
//! introduced each target) and CUDA C++ Programming Guide, table
//! "Technical Specifications per Compute Capability" (shared-memory limits).
//!
//! **Target variants** (PTX ISA 9.0, section 11.1.2 ".target"): `sm_90a`
//! is *architecture-specific* (its code runs only on that GPU), `sm_100f`
//! *family-specific* (it runs on the family's later GPUs too). Each variant
//! ptxas 13.5 accepts is its own row in [`ARCHES`], because the facts
//! differ: ptxas lets an `a` target's kernel declare static shared memory
//! up to the opt-in maximum, but keeps every other target, `f` ones
//! included, at 48 KiB. Checked with ptxas 13.5.37 (one byte more is
//! refused: "Entry function 'k' uses too much shared data (0x38c01 bytes,
//! 0x38c00 max)"), and the oldest `.version` each `.target` needs likewise.
#![deny(missing_docs)]

use std::fmt;
use std::str::FromStr;

/// One GPU architecture, e.g. `sm_90`, `sm_90a` or `sm_100f`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arch {
    /// Compute capability times ten: `90` for `sm_90`.
    pub sm: u32,
    /// Which variant of it: `sm_90`, `sm_90a` or `sm_100f`.
    pub variant: Variant,
}

/// The suffix of a target name (PTX ISA 9.0, section 11.1.2 ".target").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// No suffix (`sm_90`): code runs on this and every later architecture.
    Generic,
    /// `a` (`sm_90a`): architecture-specific features; code runs only on
    /// this architecture.
    ArchSpecific,
    /// `f` (`sm_100f`): family-specific features; code runs on this
    /// architecture and the later ones of its family.
    FamilySpecific,
}

impl Variant {
    /// The suffix: `""`, `"a"` or `"f"`.
    pub fn suffix(self) -> &'static str {
        match self {
            Variant::Generic => "",
            Variant::ArchSpecific => "a",
            Variant::FamilySpecific => "f",
        }
    }
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
    /// The text is not of the form `sm_XX`, `sm_XXa` or `sm_XXf`.
    #[error(
        "`{0}` is not a GPU architecture; expected `sm_XX` such as `sm_80` or `sm_90`{hint}",
        hint = malformed_hint(.0)
    )]
    Malformed(String),
    /// The architecture is well-formed but no table here knows it.
    #[error("unknown GPU architecture `{0}`; known: {known}", known = known_names())]
    Unknown(String),
}

/// Static facts for one target (architecture and variant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchInfo {
    /// Compute capability times ten.
    pub sm: u32,
    /// Generic, `a` or `f`.
    pub variant: Variant,
    /// Oldest PTX ISA version whose `.target` accepts this target.
    pub min_ptx: PtxVersion,
    /// Static shared memory one kernel may declare, in bytes, as ptxas
    /// 13.5 allows it: 48 KiB, except for architecture-specific (`a`)
    /// targets, where it is [`ArchInfo::max_shared_bytes_optin`].
    pub max_static_shared_bytes: u32,
    /// Largest shared memory one CTA may use with the opt-in attribute
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`, in bytes.
    pub max_shared_bytes_optin: u32,
    /// Largest `.param` space for one kernel's parameters, in bytes
    /// (4 KiB, or 32 764 bytes from sm_70 with PTX ISA 8.1).
    pub max_param_bytes: u32,
}

const KIB: u32 = 1024;

/// Every target the tables know, oldest first, each architecture's
/// variants after it. Limits and `.version`s of `sm_75` and newer checked
/// with ptxas 13.5.37 (it accepts no older target).
pub const ARCHES: &[ArchInfo] = &[
    generic(50, (4, 0), 48 * KIB),
    generic(52, (4, 1), 48 * KIB),
    generic(53, (4, 2), 48 * KIB),
    generic(60, (5, 0), 48 * KIB),
    generic(61, (5, 0), 48 * KIB),
    generic(62, (5, 0), 48 * KIB),
    generic(70, (6, 0), 96 * KIB),
    generic(72, (6, 1), 96 * KIB),
    generic(75, (6, 3), 64 * KIB),
    generic(80, (7, 0), 163 * KIB),
    generic(86, (7, 1), 99 * KIB),
    generic(87, (7, 4), 163 * KIB),
    generic(89, (7, 8), 99 * KIB),
    generic(90, (7, 8), 227 * KIB),
    variant(90, Variant::ArchSpecific, (8, 0), 227 * KIB),
    generic(100, (8, 6), 227 * KIB),
    variant(100, Variant::ArchSpecific, (8, 6), 227 * KIB),
    variant(100, Variant::FamilySpecific, (8, 8), 227 * KIB),
    generic(103, (8, 8), 227 * KIB),
    variant(103, Variant::ArchSpecific, (8, 8), 227 * KIB),
    variant(103, Variant::FamilySpecific, (8, 8), 227 * KIB),
    generic(107, (9, 4), 227 * KIB),
    variant(107, Variant::ArchSpecific, (9, 4), 227 * KIB),
    variant(107, Variant::FamilySpecific, (9, 4), 227 * KIB),
    generic(110, (9, 0), 227 * KIB),
    variant(110, Variant::ArchSpecific, (9, 0), 227 * KIB),
    variant(110, Variant::FamilySpecific, (9, 0), 227 * KIB),
    generic(120, (8, 7), 99 * KIB),
    variant(120, Variant::ArchSpecific, (8, 7), 99 * KIB),
    variant(120, Variant::FamilySpecific, (8, 8), 99 * KIB),
    generic(121, (8, 8), 99 * KIB),
    variant(121, Variant::ArchSpecific, (8, 8), 99 * KIB),
    variant(121, Variant::FamilySpecific, (8, 8), 99 * KIB),
];

const fn generic(sm: u32, min_ptx: (u32, u32), optin: u32) -> ArchInfo {
    variant(sm, Variant::Generic, min_ptx, optin)
}

const fn variant(sm: u32, variant: Variant, (major, minor): (u32, u32), optin: u32) -> ArchInfo {
    ArchInfo {
        sm,
        variant,
        min_ptx: PtxVersion { major, minor },
        max_static_shared_bytes: match variant {
            Variant::ArchSpecific => optin,
            Variant::Generic | Variant::FamilySpecific => 48 * KIB,
        },
        max_shared_bytes_optin: optin,
        max_param_bytes: 4 * KIB,
    }
}

/// A nearer name for a malformed one, as the tail of the message: `sm90` → `sm_90`, a
/// suffix letter other than `a`/`f` → the `a` variant of the same number when it is
/// known (`sm_90b` → `sm_90a`).
fn malformed_hint(s: &str) -> String {
    let t = s.trim();
    if let Some(digits) = t.strip_prefix("sm").filter(|d| !d.starts_with('_')) {
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return format!(" (did you mean `sm_{digits}`?)");
        }
    }
    let Some(rest) = t.strip_prefix("sm_") else {
        return String::new();
    };
    let (digits, suffix) =
        rest.split_at(rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len());
    match (digits.parse::<u32>(), suffix) {
        (Ok(sm), suf) if suf.len() == 1 && suf != "a" && suf != "f" => {
            let known = Arch::lookup(sm, Variant::ArchSpecific).is_some();
            format!(
                "; `{suf}` is no variant suffix (`a`: architecture-specific, `f`: family){}",
                if known {
                    format!(" — did you mean `sm_{sm}a`?")
                } else {
                    String::new()
                }
            )
        }
        _ => String::new(),
    }
}

fn known_names() -> String {
    ARCHES
        .iter()
        .map(|a| format!("sm_{}{}", a.sm, a.variant.suffix()))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Arch {
    /// The table entry for this target (architecture and variant).
    ///
    /// Errors: [`ArchError::Unknown`] when the tables do not list it
    /// (`sm_80a`: no such target).
    pub fn info(self) -> Result<&'static ArchInfo, ArchError> {
        Arch::lookup(self.sm, self.variant).ok_or_else(|| ArchError::Unknown(self.to_string()))
    }

    /// The same architecture as another variant (`sm_90` → `sm_90a`), when
    /// the tables know that target.
    pub fn as_variant(self, variant: Variant) -> Option<&'static ArchInfo> {
        Arch::lookup(self.sm, variant)
    }

    fn lookup(sm: u32, variant: Variant) -> Option<&'static ArchInfo> {
        ARCHES.iter().find(|a| a.sm == sm && a.variant == variant)
    }
}

impl FromStr for Arch {
    type Err = ArchError;

    /// Parses `sm_XX`, `sm_XXa` or `sm_XXf`.
    fn from_str(s: &str) -> Result<Self, ArchError> {
        let malformed = || ArchError::Malformed(s.to_string());
        let digits = s.strip_prefix("sm_").ok_or_else(malformed)?;
        let (digits, variant) = if let Some(d) = digits.strip_suffix('a') {
            (d, Variant::ArchSpecific)
        } else if let Some(d) = digits.strip_suffix('f') {
            (d, Variant::FamilySpecific)
        } else {
            (digits, Variant::Generic)
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(malformed());
        }
        let sm = digits.parse().map_err(|_| malformed())?;
        Ok(Arch { sm, variant })
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}{}", self.sm, self.variant.suffix())
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
    fn malformed_names_get_a_nearer_one() {
        let msg = |s: &str| s.parse::<Arch>().unwrap_err().to_string();
        let m = msg("sm_90b");
        assert!(
            m.contains("`b` is no variant suffix") && m.contains("did you mean `sm_90a`?"),
            "{m}"
        );
        let m = msg("sm90");
        assert!(m.contains("did you mean `sm_90`?"), "{m}");
        let m = msg("compute_90");
        assert!(m.ends_with("such as `sm_80` or `sm_90`"), "{m}");
    }

    #[test]
    fn parses_names() {
        assert_eq!(
            "sm_90".parse(),
            Ok(Arch {
                sm: 90,
                variant: Variant::Generic
            })
        );
        assert_eq!(
            "sm_90a".parse(),
            Ok(Arch {
                sm: 90,
                variant: Variant::ArchSpecific
            })
        );
        assert_eq!(
            "sm_100f".parse(),
            Ok(Arch {
                sm: 100,
                variant: Variant::FamilySpecific
            })
        );
        for name in ["sm_100", "sm_100a", "sm_100f", "sm_121a"] {
            assert_eq!(name.parse::<Arch>().unwrap().to_string(), name);
        }
        assert!(matches!(
            "sm_90af".parse::<Arch>(),
            Err(ArchError::Malformed(_))
        ));
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
        let err = "sm_80a".parse::<Arch>().unwrap().info().unwrap_err();
        assert!(err.to_string().contains("sm_90a, sm_100"), "{err}");
    }

    /// ptxas 13.5.37: the largest static `.shared` a kernel may declare
    /// (one byte more: "uses too much shared data"), and the oldest
    /// `.version` each target accepts. `ptx-linker`'s tests check the same
    /// limits against ptxas itself.
    #[test]
    fn static_shared_limits_and_versions_follow_ptxas() {
        let facts = |name: &str| {
            let i = name.parse::<Arch>().unwrap().info().unwrap();
            (i.max_static_shared_bytes, i.min_ptx.to_string())
        };
        for (name, limit, version) in [
            ("sm_80", 49152, "7.0"),
            ("sm_90", 49152, "7.8"),
            ("sm_90a", 232448, "8.0"),
            ("sm_100", 49152, "8.6"),
            ("sm_100a", 232448, "8.6"),
            ("sm_100f", 49152, "8.8"),
            ("sm_103", 49152, "8.8"),
            ("sm_103a", 232448, "8.8"),
            ("sm_103f", 49152, "8.8"),
            ("sm_107", 49152, "9.4"),
            ("sm_107a", 232448, "9.4"),
            ("sm_107f", 49152, "9.4"),
            ("sm_110", 49152, "9.0"),
            ("sm_110a", 232448, "9.0"),
            ("sm_110f", 49152, "9.0"),
            ("sm_120", 49152, "8.7"),
            ("sm_120a", 101376, "8.7"),
            ("sm_120f", 49152, "8.8"),
            ("sm_121", 49152, "8.8"),
            ("sm_121a", 101376, "8.8"),
            ("sm_121f", 49152, "8.8"),
        ] {
            assert_eq!(facts(name), (limit, version.to_string()), "{name}");
        }
    }

    #[test]
    fn versions_order_numerically() {
        let v = |s: &str| s.parse::<PtxVersion>().unwrap();
        assert!(v("7.10") > v("7.8"));
        assert!(v("8.0") > v("7.10"));
        assert_eq!(v("9.0").to_string(), "9.0");
    }
}
