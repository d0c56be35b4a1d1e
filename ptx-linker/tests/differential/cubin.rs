//! The global data symbols of a linked cubin (ELF64, little-endian), read
//! by hand: ptxas writes section headers at offsets that are not 8-aligned,
//! which `object`'s ELF reader refuses.

use std::collections::BTreeMap;

/// One global data symbol of a linked cubin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataSymbol {
    /// `global`, `const` or `shared`.
    pub space: &'static str,
    /// `st_size`.
    pub size: u64,
    /// Its bytes (zeros where the section has none).
    pub bytes: Vec<u8>,
    /// Address relocations inside it: (offset, target symbol).
    pub relocs: Vec<(u64, String)>,
}

/// A linked cubin's global data symbols, by name.
pub type Image = BTreeMap<String, DataSymbol>;

const SHT_SYMTAB: u32 = 2;
const SHT_RELA: u32 = 4;
const SHT_NOBITS: u32 = 8;
const STB_LOCAL: u8 = 0;

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn get<const N: usize>(&self, at: u64) -> Result<[u8; N], String> {
        let at = usize::try_from(at).map_err(|_| "offset out of range")?;
        self.0
            .get(at..at + N)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| format!("truncated at {at:#x}"))
    }
    fn u16(&self, at: u64) -> Result<u16, String> {
        self.get(at).map(u16::from_le_bytes)
    }
    fn u32(&self, at: u64) -> Result<u32, String> {
        self.get(at).map(u32::from_le_bytes)
    }
    fn u64(&self, at: u64) -> Result<u64, String> {
        self.get(at).map(u64::from_le_bytes)
    }
    fn range(&self, at: u64, len: u64) -> Result<&[u8], String> {
        let (at, len) = (at as usize, len as usize);
        self.0
            .get(at..at.saturating_add(len))
            .ok_or_else(|| format!("range {at:#x}+{len:#x} out of the file"))
    }
    fn cstr(&self, at: u64) -> Result<String, String> {
        let rest = self.range(at, self.0.len() as u64 - at.min(self.0.len() as u64))?;
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        Ok(String::from_utf8_lossy(&rest[..end]).into_owned())
    }
}

struct Section {
    name: String,
    kind: u32,
    offset: u64,
    size: u64,
    link: u32,
    info: u32,
}

fn sections(f: &Bytes<'_>) -> Result<Vec<Section>, String> {
    if f.get::<4>(0)? != *b"\x7fELF" || f.get::<1>(4)? != [2] {
        return Err("not a 64-bit ELF file".into());
    }
    let (shoff, entsize) = (f.u64(0x28)?, u64::from(f.u16(0x3a)?));
    let (count, strndx) = (u64::from(f.u16(0x3c)?), u64::from(f.u16(0x3e)?));
    let header = |i: u64| shoff + i * entsize;
    let names = f.u64(header(strndx) + 24)?;
    (0..count)
        .map(|i| {
            let h = header(i);
            Ok(Section {
                name: f.cstr(names + u64::from(f.u32(h)?))?,
                kind: f.u32(h + 4)?,
                offset: f.u64(h + 24)?,
                size: f.u64(h + 32)?,
                link: f.u32(h + 40)?,
                info: f.u32(h + 44)?,
            })
        })
        .collect()
}

/// `global`, `const` or `shared` for a data section's name.
fn space_of(section: &str) -> Option<&'static str> {
    if section.starts_with(".nv.global") {
        Some("global")
    } else if section.starts_with(".nv.constant") {
        Some("const")
    } else if section.starts_with(".nv.shared") {
        Some("shared")
    } else {
        None
    }
}

/// A file-local symbol's name as the inputs spell it (the linker renames
/// colliding ones `NAME__ptxlinkN`).
fn input_name(name: &str) -> &str {
    name.find("__ptxlink").map_or(name, |i| &name[..i])
}

/// The global (`.visible`, `.weak`, `.common`) data symbols of a cubin,
/// with the address relocations that land inside them.
pub fn read(data: &[u8]) -> Result<Image, String> {
    let f = Bytes(data);
    let sections = sections(&f)?;
    let symtab = sections
        .iter()
        .find(|s| s.kind == SHT_SYMTAB)
        .ok_or("no symbol table")?;
    let strtab = sections
        .get(symtab.link as usize)
        .ok_or("no string table")?;
    // Every symbol's name; per data section, (address, size, input name, file-local).
    let mut names = Vec::new();
    let mut owners: BTreeMap<usize, Vec<(u64, u64, String, bool)>> = BTreeMap::new();
    let mut image = Image::new();
    for i in 0..symtab.size / 24 {
        let s = symtab.offset + i * 24;
        let name = f.cstr(strtab.offset + u64::from(f.u32(s)?))?;
        names.push(input_name(&name).to_string());
        let bind = f.get::<1>(s + 4)?[0] >> 4;
        let shndx = usize::from(f.u16(s + 6)?);
        let (addr, size) = (f.u64(s + 8)?, f.u64(s + 16)?);
        let Some(section) = sections.get(shndx).filter(|_| shndx != 0 && shndx < 0xff00) else {
            continue;
        };
        let Some(space) = space_of(&section.name) else {
            continue;
        };
        // File-local symbols, and the ones ptxas adds itself, are not in the image.
        let local = bind == STB_LOCAL || name.starts_with("__nv_");
        owners
            .entry(shndx)
            .or_default()
            .push((addr, size, input_name(&name).to_string(), local));
        if local {
            continue;
        }
        let bytes = if section.kind == SHT_NOBITS {
            vec![0; size as usize]
        } else {
            f.range(section.offset + addr, size)?.to_vec()
        };
        let relocs = Vec::new();
        image.insert(
            name,
            DataSymbol {
                space,
                size,
                bytes,
                relocs,
            },
        );
    }
    for rela in sections.iter().filter(|s| s.kind == SHT_RELA) {
        let Some(owners) = owners.get(&(rela.info as usize)) else {
            continue;
        };
        for i in 0..rela.size / 24 {
            let r = rela.offset + i * 24;
            let (offset, sym) = (f.u64(r)?, (f.u64(r + 8)? >> 32) as usize);
            let target = names.get(sym).cloned().unwrap_or_default();
            // A relocation inside a file-local symbol belongs to no image symbol,
            // not to a global one of the same input name.
            let owner = owners
                .iter()
                .find(|(addr, size, _, _)| (*addr..addr + size).contains(&offset))
                .filter(|(_, _, _, local)| !local);
            if let Some((addr, _, n, _)) = owner {
                if let Some(sym) = image.get_mut(n) {
                    sym.relocs.push((offset - addr, target));
                }
            }
        }
    }
    Ok(image)
}
