//! Structural checks of a cubin (ELF) or fatbin image before the driver sees it.
//!
//! `cuModuleLoadData` takes no length: it trusts the offsets and sizes in the image's
//! headers, so a truncated or corrupt image makes it read past the buffer (seen as a
//! segfault inside libcuda on driver 580.159). Every table and section the headers
//! name must therefore lie inside the bytes we hold.
//!
//! Fatbin layout (little-endian; community documentation, no NVIDIA specification):
//! containers of a 16-byte header (`u32` magic `0xBA55ED50`, `u16` version, `u16`
//! header size, `u64` size of the entries), each entry starting with `u16` kind
//! (1 = PTX, 2 = ELF), `u16`, `u32` entry header size, `u64` payload size.

use object::read::elf::ElfFile64;

use crate::message::bytes;
use object::{Endianness, Object, ObjectSection, ObjectSegment};

const FATBIN_MAGIC: u32 = 0xBA55_ED50;
const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// Checks that every header, table, section and segment `image` names lies inside it.
///
/// Errors: a sentence naming the first structure that does not fit.
pub(crate) fn check_image(image: &[u8]) -> Result<(), String> {
    if image.starts_with(ELF_MAGIC) {
        check_elf(image)
    } else if read_u32(image, 0) == Some(FATBIN_MAGIC) {
        check_fatbin(image)
    } else {
        Err("neither an ELF (cubin) nor a fatbin header".to_string())
    }
}

fn check_elf(image: &[u8]) -> Result<(), String> {
    let elf = ElfFile64::<Endianness>::parse(image).map_err(|e| format!("malformed ELF: {e}"))?;
    for section in elf.sections() {
        section.data().map_err(|e| {
            format!(
                "ELF section `{}` lies outside the {} of the image: {e}",
                section.name().unwrap_or("?"),
                bytes(image.len() as u64)
            )
        })?;
    }
    for segment in elf.segments() {
        segment.data().map_err(|e| {
            format!(
                "an ELF segment lies outside the {} of the image: {e}",
                bytes(image.len() as u64)
            )
        })?;
    }
    Ok(())
}

fn check_fatbin(image: &[u8]) -> Result<(), String> {
    let mut at = 0usize;
    while at + 16 <= image.len() {
        match read_u32(image, at) {
            Some(0) => {
                at += 8; // padding between containers
                continue;
            }
            Some(FATBIN_MAGIC) => {}
            _ => return Err(format!("no fatbin container magic at byte {at}")),
        }
        let header = usize::from(read_u16(image, at + 6).unwrap_or(0));
        let size = read_u64(image, at + 8).unwrap_or(u64::MAX);
        let end = usize::try_from(size)
            .ok()
            .and_then(|s| (at + header).checked_add(s))
            .filter(|&e| header >= 16 && e <= image.len())
            .ok_or_else(|| {
                format!(
                    "the fatbin container at byte {at} claims {} after a {header}-byte header, \
                     but the image has {}",
                    bytes(size),
                    bytes(image.len() as u64)
                )
            })?;
        check_entries(image, at + header, end)?;
        at = end.next_multiple_of(8);
    }
    if at == 0 {
        return Err(format!(
            "a fatbin needs at least 16 bytes, the image has {}",
            bytes(image.len() as u64)
        ));
    }
    Ok(())
}

/// The entries of one container, between byte `start` and `end` of `image`.
fn check_entries(image: &[u8], start: usize, end: usize) -> Result<(), String> {
    let mut at = start;
    while at < end {
        let (Some(header), Some(payload)) = (read_u32(image, at + 4), read_u64(image, at + 8))
        else {
            return Err(format!("the fatbin entry at byte {at} is cut off"));
        };
        let header = header as usize;
        let next = usize::try_from(payload)
            .ok()
            .and_then(|p| (at + header).checked_add(p))
            .filter(|&n| header >= 16 && n <= end)
            .ok_or_else(|| {
                format!(
                    "the fatbin entry at byte {at} claims {} after a {header}-byte header, past \
                     the end of its container (byte {end})",
                    bytes(payload)
                )
            })?;
        at = next;
    }
    Ok(())
}

fn read_u16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fatbin with one empty-payload entry: header 16 + entry header 64.
    fn fatbin() -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&FATBIN_MAGIC.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&16u16.to_le_bytes());
        b.extend_from_slice(&64u64.to_le_bytes());
        let mut entry = vec![0u8; 64];
        entry[0..2].copy_from_slice(&2u16.to_le_bytes());
        entry[4..8].copy_from_slice(&64u32.to_le_bytes());
        b.extend_from_slice(&entry);
        b
    }

    #[test]
    fn whole_fatbin_passes_and_truncations_fail() {
        let f = fatbin();
        assert_eq!(check_image(&f), Ok(()));
        let err = check_image(&f[..40]).unwrap_err();
        assert_eq!(
            err,
            "the fatbin container at byte 0 claims 64 bytes after a 16-byte header, but the image has 40 bytes"
        );
        let mut bad_entry = f.clone();
        bad_entry[16 + 8..16 + 16].copy_from_slice(&1000u64.to_le_bytes());
        assert!(check_image(&bad_entry)
            .unwrap_err()
            .contains("past the end of its container"));
    }

    #[test]
    fn truncated_elf_fails() {
        // An ELF64 header claiming a section table far past the 64 bytes we have.
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(ELF_MAGIC);
        elf[4] = 2; // ELFCLASS64
        elf[5] = 1; // little-endian
        elf[6] = 1; // EV_CURRENT
        elf[0x28..0x30].copy_from_slice(&4096u64.to_le_bytes()); // e_shoff
        elf[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
        elf[0x3c..0x3e].copy_from_slice(&10u16.to_le_bytes()); // e_shnum
        let err = check_image(&elf).unwrap_err();
        assert!(err.starts_with("malformed ELF"), "{err}");
        assert!(check_image(b"junk").is_err());
    }

    /// A real cubin from ptxas passes whole and fails when cut anywhere inside its
    /// section data or tables.
    #[test]
    fn real_cubin_whole_and_truncated() {
        let ptxas = ptx_linker::ptxas::find().expect(ptx_linker::ptxas::NOT_FOUND_FIX);
        let dir = std::env::temp_dir().join(format!("hl-image-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ptx = dir.join("k.ptx");
        std::fs::write(
            &ptx,
            ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\tret;\n}\n",
        )
        .unwrap();
        let cubin = dir.join("k.cubin");
        let status = std::process::Command::new(ptxas)
            .args(["-arch=sm_90", "-o"])
            .arg(&cubin)
            .arg(&ptx)
            .status()
            .unwrap();
        assert!(status.success());
        let image = std::fs::read(&cubin).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(check_image(&image), Ok(()));
        for cut in [64, image.len() / 2, image.len() - 1] {
            assert!(
                check_image(&image[..cut]).is_err(),
                "cut at {cut} of {}",
                image.len()
            );
        }
    }
}
