//! Input files: PTX text, `ar` archives (`.a`, `.rlib`), ELF files with an
//! embedded fatbin (`.nv_fatbin`, `__nv_relfatbin`), and standalone fatbins.
//!
//! [`load_input`] turns one file's bytes into the PTX modules it holds:
//!
//! | file | gives |
//! |---|---|
//! | PTX text | itself, as the kind asked for |
//! | `ar` archive | each PTX member (and the PTX inside ELF/fatbin members) as an [`InputKind::Library`]: pulled in only when it defines a symbol that is otherwise unresolved (classic archive semantics) |
//! | ELF | the PTX of each fatbin container in its `.nv_fatbin`/`__nv_relfatbin` sections |
//! | fatbin | the PTX of each container |
//!
//! A fatbin container can hold PTX for several virtual architectures; one is
//! taken per container: the newest at or below `--arch`, or the newest when
//! no architecture is given. Compressed entries (zstd, flag `0x8000`, the
//! `fatbinary` default since CUDA 13; LZ4 block, flag `0x2000`, its
//! `--compress-mode=speed`) are decompressed.
//!
//! Fatbin layout (little-endian; reverse-engineered by the CUDA community,
//! no NVIDIA specification exists): a 16-byte container header (`u32` magic
//! `0xBA55ED50` or `0x466243B1`, `u16` version 1, `u16` header size 16, `u64`
//! size of the entries that follow), then entries: `u16` kind (1 = PTX,
//! 2 = ELF), `u16`, `u32` entry header size, `u64` payload size (padded to 8
//! bytes), `u32` compressed size, `u32`, `u16` PTX ISA minor, `u16` major,
//! `u32` sm, `u32` `u32` (name offset, length), `u64` flags, `u64`, `u64`
//! uncompressed size; the payload follows the entry header.

use object::read::archive::ArchiveFile;
use object::{Object, ObjectSection};

use crate::diagnostic::count;
use crate::input::{InputKind, LinkInput, SourceFile};

/// Container magics (the executable and the relocatable flavour).
const FATBIN_MAGICS: [u32; 2] = [0xBA55_ED50, 0x4662_43B1];
/// Entry kind of a PTX text image.
const KIND_PTX: u16 = 1;
/// Entry flag: payload compressed with zstd.
const FLAG_ZSTD: u64 = 0x8000;
/// Entry flag: payload compressed with LZ4 (block format).
const FLAG_LZ4: u64 = 0x2000;
/// Sections of an ELF file that hold fatbin containers.
const FATBIN_SECTIONS: [&str; 2] = [".nv_fatbin", "__nv_relfatbin"];
/// Largest uncompressed PTX entry accepted (bytes): a corrupt size field must
/// not make the linker allocate without bound.
const MAX_PTX_BYTES: u64 = 1 << 30;
/// Largest expansion an LZ4 block can encode (one token byte, then runs of
/// 255-length bytes): a larger claimed size is a corrupt header.
const LZ4_MAX_RATIO: u64 = 255;

/// Why an input file could not be turned into PTX modules.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    /// Neither PTX text nor a container this module reads.
    #[error("`{path}` is not PTX text, an `ar` archive, an ELF file or a fatbin ({why})")]
    Unrecognized {
        /// The input.
        path: String,
        /// What was found instead.
        why: String,
    },
    /// A container whose structure is broken.
    #[error("`{path}`: malformed {what}: {why}")]
    Malformed {
        /// The input (with the member or entry it concerns).
        path: String,
        /// `archive`, `ELF file` or `fatbin`.
        what: &'static str,
        /// The first inconsistency found.
        why: String,
    },
    /// A container that holds no PTX.
    #[error("`{path}` holds no PTX{hint}")]
    NoPtx {
        /// The input.
        path: String,
        /// What it holds instead, as `: ...`, or empty.
        hint: String,
    },
    /// A compressed fatbin entry that could not be decompressed.
    #[error("`{path}`: cannot decompress fatbin entry {index} (PTX for sm_{sm}, {method}): {why}")]
    Decompress {
        /// The input.
        path: String,
        /// 0-based index of the entry in its container.
        index: usize,
        /// The entry's architecture.
        sm: u32,
        /// `zstd`, `LZ4` or the unknown flag bits.
        method: String,
        /// The decoder's complaint.
        why: String,
    },
}

/// The PTX modules one input file (its whole contents) holds, with display paths
/// (`lib.a(member.ptx)`, `k.fatbin(sm_90 PTX)`). `kind` applies to PTX text,
/// ELF files and fatbins; an archive's members are always libraries. `arch`
/// picks among a fatbin container's PTX entries (compute capability × 10).
///
/// Errors: see [`LoadError`]; a PTX file that is not UTF-8 is
/// [`LoadError::Unrecognized`].
pub fn load_input(
    path: &str,
    bytes: Vec<u8>,
    kind: InputKind,
    arch: Option<u32>,
) -> Result<Vec<LinkInput>, LoadError> {
    let mut out = Vec::new();
    match detect(&bytes) {
        Format::Archive => load_archive(path, &bytes, arch, &mut out)?,
        Format::Elf => load_elf(path, &bytes, kind, arch, &mut out)?,
        Format::Fatbin => load_fatbins(path, &bytes, kind, arch, &mut out)?,
        // PTX text: the bytes become the text, no copy.
        Format::Text => match String::from_utf8(bytes) {
            Ok(text) => out.push(input(path.to_string(), text, kind)),
            Err(e) => {
                let e = e.utf8_error();
                return Err(LoadError::Unrecognized {
                    path: path.to_string(),
                    why: format!("byte {} is not UTF-8", e.valid_up_to()),
                });
            }
        },
    }
    Ok(out)
}

enum Format {
    Archive,
    Elf,
    Fatbin,
    Text,
}

fn detect(bytes: &[u8]) -> Format {
    if bytes.starts_with(b"!<arch>\n") || bytes.starts_with(b"!<thin>\n") {
        Format::Archive
    } else if bytes.starts_with(b"\x7fELF") {
        Format::Elf
    } else if read_u32(bytes, 0).is_some_and(|m| FATBIN_MAGICS.contains(&m)) {
        Format::Fatbin
    } else {
        Format::Text
    }
}

fn input(path: String, text: String, kind: InputKind) -> LinkInput {
    LinkInput {
        file: SourceFile { path, text },
        kind,
    }
}

/// Text that is PTX: UTF-8 with a `.version` directive.
fn as_ptx(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    text.contains(".version").then_some(text)
}

fn load_archive(
    path: &str,
    bytes: &[u8],
    arch: Option<u32>,
    out: &mut Vec<LinkInput>,
) -> Result<(), LoadError> {
    let malformed = |why: String| LoadError::Malformed {
        path: path.to_string(),
        what: "archive",
        why,
    };
    let archive = ArchiveFile::parse(bytes).map_err(|e| malformed(e.to_string()))?;
    let before = out.len();
    let mut bitcode = 0usize;
    for member in archive.members() {
        let member = member.map_err(|e| malformed(e.to_string()))?;
        let name = String::from_utf8_lossy(member.name()).into_owned();
        let data = member
            .data(bytes)
            .map_err(|e| malformed(format!("member `{name}`: {e}")))?;
        let shown = format!("{path}({name})");
        if data.starts_with(b"BC\xc0\xde") {
            bitcode += 1;
            continue;
        }
        match detect(data) {
            Format::Archive => {
                return Err(malformed(format!("member `{name}` is itself an archive")))
            }
            Format::Elf => load_elf(&shown, data, InputKind::Library, arch, out)?,
            Format::Fatbin => load_fatbins(&shown, data, InputKind::Library, arch, out)?,
            Format::Text => {
                if let Some(text) = as_ptx(data) {
                    out.push(input(shown, text.to_string(), InputKind::Library));
                }
            }
        }
    }
    if out.len() == before {
        let hint = if bitcode > 0 {
            format!(
                ": its {} LLVM bitcode (an nvptx `.rlib`); link the PTX that rustc writes with `--emit=asm` instead",
                if bitcode == 1 {
                    "1 object is".to_string()
                } else {
                    format!("{bitcode} objects are")
                }
            )
        } else {
            String::new()
        };
        return Err(LoadError::NoPtx {
            path: path.to_string(),
            hint,
        });
    }
    Ok(())
}

fn load_elf(
    path: &str,
    bytes: &[u8],
    kind: InputKind,
    arch: Option<u32>,
    out: &mut Vec<LinkInput>,
) -> Result<(), LoadError> {
    let file = object::File::parse(bytes).map_err(|e| LoadError::Malformed {
        path: path.to_string(),
        what: "ELF file",
        why: e.to_string(),
    })?;
    let before = out.len();
    for section in file.sections() {
        let Ok(name) = section.name() else { continue };
        if !FATBIN_SECTIONS.contains(&name) {
            continue;
        }
        let data = section.data().map_err(|e| LoadError::Malformed {
            path: path.to_string(),
            what: "ELF file",
            why: format!("section `{name}`: {e}"),
        })?;
        load_fatbins(path, data, kind, arch, out)?;
    }
    if out.len() == before {
        return Err(LoadError::NoPtx {
            path: path.to_string(),
            hint: ": no `.nv_fatbin` section with a PTX entry (a cubin-only fatbin cannot be relinked as PTX)".to_string(),
        });
    }
    Ok(())
}

/// One PTX entry of a container.
struct PtxEntry {
    sm: u32,
    text: String,
}

/// Every container in `bytes` (containers follow each other, 8-byte aligned).
fn load_fatbins(
    path: &str,
    bytes: &[u8],
    kind: InputKind,
    arch: Option<u32>,
    out: &mut Vec<LinkInput>,
) -> Result<(), LoadError> {
    let malformed = |why: String| LoadError::Malformed {
        path: path.to_string(),
        what: "fatbin",
        why,
    };
    let before = out.len();
    let mut at = 0usize;
    let mut containers = 0usize;
    while at + 16 <= bytes.len() {
        let magic = read_u32(bytes, at).unwrap_or(0);
        if magic == 0 {
            at += 8; // padding between containers
            continue;
        }
        if !FATBIN_MAGICS.contains(&magic) {
            return Err(malformed(format!(
                "no container magic at byte {at} (found {magic:#010x})"
            )));
        }
        let header = usize::from(read_u16(bytes, at + 6).unwrap_or(0));
        let size = read_u64(bytes, at + 8).unwrap_or(0);
        let end = (at + header)
            .checked_add(usize::try_from(size).unwrap_or(usize::MAX))
            .filter(|&e| e <= bytes.len() && header >= 16)
            .ok_or_else(|| {
                malformed(format!(
                    "container at byte {at} claims {} after a {header}-byte header; the data has {}",
                    count(size, "byte", "bytes"),
                    bytes.len() - at
                ))
            })?;
        let entries = container_ptx(path, &bytes[at + header..end], at + header)?;
        containers += 1;
        let pick = entries
            .iter()
            .filter(|e| arch.is_none_or(|a| e.sm <= a))
            .max_by_key(|e| e.sm)
            .or_else(|| entries.iter().min_by_key(|e| e.sm));
        if let Some(e) = pick {
            let shown = if containers > 1 {
                format!("{path}(container {containers}, sm_{} PTX)", e.sm)
            } else {
                format!("{path}(sm_{} PTX)", e.sm)
            };
            out.push(input(shown, e.text.clone(), kind));
        }
        at = end.next_multiple_of(8);
    }
    if out.len() == before {
        return Err(LoadError::NoPtx {
            path: path.to_string(),
            hint: if containers == 0 {
                ": no fatbin container found".to_string()
            } else {
                ": its fatbin entries are all cubins (build with a PTX image, e.g. `-gencode arch=compute_90,code=compute_90`)".to_string()
            },
        });
    }
    Ok(())
}

/// The PTX entries of one container's entry area (`base`: its offset in the
/// file, for messages).
fn container_ptx(path: &str, data: &[u8], base: usize) -> Result<Vec<PtxEntry>, LoadError> {
    let malformed = |why: String| LoadError::Malformed {
        path: path.to_string(),
        what: "fatbin",
        why,
    };
    let mut out = Vec::new();
    let mut at = 0usize;
    let mut index = 0usize;
    while at + 64 <= data.len() {
        let field = |off: usize, n: usize| -> Result<u64, LoadError> {
            let v = match n {
                2 => read_u16(data, at + off).map(u64::from),
                4 => read_u32(data, at + off).map(u64::from),
                _ => read_u64(data, at + off),
            };
            v.ok_or_else(|| malformed(format!("entry {index} is cut short")))
        };
        let kind = field(0, 2)? as u16;
        let header = field(4, 4)? as usize;
        let payload = field(8, 8)?;
        let compressed = field(16, 4)?;
        let sm = field(28, 4)? as u32;
        let flags = field(40, 8)?;
        let raw_size = field(56, 8)?;
        let start = at + header;
        let end = usize::try_from(payload)
            .ok()
            .and_then(|p| start.checked_add(p))
            .filter(|&e| header >= 64 && e <= data.len())
            .ok_or_else(|| {
                malformed(format!(
                    "entry {index} at byte {} claims a {header}-byte header and {} of data past the container's end",
                    base + at,
                    count(payload, "byte", "bytes")
                ))
            })?;
        if kind == KIND_PTX {
            let stored = if compressed > 0 && compressed <= payload {
                &data[start..start + compressed as usize]
            } else {
                &data[start..end]
            };
            let bytes = decompress(path, index, sm, flags, raw_size, stored)?;
            let text_end = bytes.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
            let text = std::str::from_utf8(&bytes[..text_end]).map_err(|e| {
                malformed(format!(
                    "entry {index} (PTX for sm_{sm}) is not UTF-8 text at byte {}",
                    e.valid_up_to()
                ))
            })?;
            out.push(PtxEntry {
                sm,
                text: text.to_string(),
            });
        }
        at = end;
        index += 1;
    }
    Ok(out)
}

fn decompress(
    path: &str,
    index: usize,
    sm: u32,
    flags: u64,
    raw_size: u64,
    stored: &[u8],
) -> Result<Vec<u8>, LoadError> {
    let fail = |method: &str, why: String| LoadError::Decompress {
        path: path.to_string(),
        index,
        sm,
        method: method.to_string(),
        why,
    };
    if raw_size > MAX_PTX_BYTES {
        return Err(fail(
            "size check",
            format!(
                "it claims {raw_size} uncompressed bytes, more than the {MAX_PTX_BYTES} accepted"
            ),
        ));
    }
    if flags & FLAG_ZSTD != 0 {
        let decoder = ruzstd::decoding::StreamingDecoder::new(stored)
            .map_err(|e| fail("zstd", e.to_string()))?;
        // Trust the header's size only as a limit, never as an allocation.
        let guess = raw_size.min(stored.len() as u64 * 16) as usize;
        let mut out = Vec::with_capacity(guess);
        std::io::Read::read_to_end(&mut std::io::Read::take(decoder, raw_size + 1), &mut out)
            .map_err(|e| fail("zstd", e.to_string()))?;
        if out.len() as u64 > raw_size {
            return Err(fail(
                "zstd",
                format!(
                    "it decompresses to more than the {} its header gives",
                    count(raw_size, "byte", "bytes")
                ),
            ));
        }
        Ok(out)
    } else if flags & FLAG_LZ4 != 0 {
        if raw_size > stored.len() as u64 * LZ4_MAX_RATIO + 64 {
            return Err(fail(
                "LZ4",
                format!(
                    "its header gives {raw_size} bytes, more than {} can hold",
                    count(stored.len() as u64, "compressed byte", "compressed bytes")
                ),
            ));
        }
        lz4_flex::block::decompress(stored, raw_size as usize)
            .map_err(|e| fail("LZ4", e.to_string()))
    } else if flags & 0xF000 != 0 {
        Err(fail(
            &format!("unknown compression flags {:#x}", flags & 0xF000),
            "only zstd (0x8000) and LZ4 (0x2000) are known; rebuild with `fatbinary --compress=false`".to_string(),
        ))
    } else {
        Ok(stored.to_vec())
    }
}

fn read_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}
