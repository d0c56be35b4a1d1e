//! Two verdicts on one program, and how they compare.
//!
//! Ours: [`ptx_linker::link`] over the modules, its output assembled by
//! `ptxas -arch=sm_90`. The reference: `ptxas -c -arch=sm_90` on each module,
//! then `nvlink -arch=sm_90` on the objects in the same order. Each side
//! either links (and its cubin's global data symbols are read: section,
//! size, bytes, address relocations), or refuses (and its errors are
//! sorted into [`Class`]es), or, for nvlink only, crashes. [`cubin`] reads
//! the linked images.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cubin::{self, Image};
use ptx_linker::{link, LinkError, LinkInput, LinkOptions};

/// The NVIDIA tools.
#[derive(Debug, Clone)]
pub struct Tools {
    /// `ptxas`.
    pub ptxas: PathBuf,
    /// `nvlink`.
    pub nvlink: PathBuf,
}

/// Why a link was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// Two strong definitions ("Multiple definition").
    Duplicate,
    /// Definitions of different sizes ("Size doesn't match").
    Size,
    /// Definitions in different state spaces ("Memory space doesn't match").
    Space,
    /// Functions of different prototypes ("Prototype doesn't match").
    Prototype,
    /// A function here, a variable there.
    Kind,
    /// A reference nothing defines ("Undefined reference").
    Undefined,
    /// ptxas refused our merged output.
    InvalidOutput,
    /// Anything else.
    Other,
}

/// What one side did with a program.
#[derive(Debug, Clone)]
pub enum Verdict {
    /// It linked.
    Linked(Image),
    /// It refused, for these reasons; the message as printed.
    Refused(BTreeSet<Class>, String),
    /// The tool crashed (a signal, not an error exit).
    Crashed(String),
}

/// Our verdict: [`link`], then ptxas on the output.
pub fn ours(tools: &Tools, modules: &[(String, String)], dir: &Path) -> Verdict {
    let inputs: Vec<LinkInput> = modules
        .iter()
        .map(|(name, text)| LinkInput::object(name.clone(), text.clone()))
        .collect();
    match link(&inputs, &LinkOptions::default()) {
        Err(e) => Verdict::Refused(our_classes(&e), e.message),
        Ok(out) => {
            let ptx = dir.join("ours.ptx");
            let cubin = dir.join("ours.cubin");
            std::fs::write(&ptx, &out.ptx).unwrap();
            let run = Command::new(&tools.ptxas)
                .arg("-arch=sm_90")
                .arg(&ptx)
                .arg("-o")
                .arg(&cubin)
                .output()
                .unwrap_or_else(|e| panic!("cannot run {}: {e}", tools.ptxas.display()));
            if !run.status.success() {
                let err = String::from_utf8_lossy(&run.stderr);
                return Verdict::Refused(
                    [Class::InvalidOutput].into(),
                    format!("ptxas refuses the output: {err}\n{}", out.ptx),
                );
            }
            match read_image(&cubin) {
                Ok(image) => Verdict::Linked(image),
                Err(e) => Verdict::Refused([Class::InvalidOutput].into(), e),
            }
        }
    }
}

/// nvlink's verdict. `Err` when `ptxas -c` refuses a module on its own: the
/// program is not well-formed, a generator bug.
pub fn reference(
    tools: &Tools,
    modules: &[(String, String)],
    dir: &Path,
) -> Result<Verdict, String> {
    let mut objects = Vec::new();
    for (name, text) in modules {
        let ptx = dir.join(name);
        let obj = ptx.with_extension("o");
        std::fs::write(&ptx, text).unwrap();
        let run = Command::new(&tools.ptxas)
            .args(["-c", "-arch=sm_90"])
            .arg(&ptx)
            .arg("-o")
            .arg(&obj)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", tools.ptxas.display()));
        if !run.status.success() {
            return Err(format!(
                "ptxas -c refuses {name}: {}",
                String::from_utf8_lossy(&run.stderr)
            ));
        }
        objects.push(obj);
    }
    let cubin = dir.join("ref.cubin");
    let _ = std::fs::remove_file(&cubin);
    let run = Command::new(&tools.nvlink)
        .arg("-arch=sm_90")
        .args(&objects)
        .arg("-o")
        .arg(&cubin)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {}: {e} ({})",
                tools.nvlink.display(),
                ptx_linker::ptxas::NVLINK_NOT_FOUND_FIX
            )
        });
    let err = String::from_utf8_lossy(&run.stderr).into_owned();
    Ok(match run.status.code() {
        Some(0) => Verdict::Linked(read_image(&cubin)?),
        Some(_) => Verdict::Refused(nvlink_classes(&err), err),
        None => Verdict::Crashed(format!("nvlink killed by a signal: {:?}", run.status)),
    })
}

fn our_classes(e: &LinkError) -> BTreeSet<Class> {
    e.diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| our_class(&d.message))
        .collect()
}

/// The class of one of our error headlines (definitions that disagree,
/// a declaration against its definition, or declarations among themselves).
fn our_class(m: &str) -> Class {
    let spaces = ["`.global`", "`.const`", "`.shared`"];
    if m.starts_with("duplicate symbol") {
        Class::Duplicate
    } else if m.starts_with("unresolved symbol") {
        Class::Undefined
    } else if m.contains("kernel") || m.contains("a function") || m.contains("a variable") {
        Class::Kind
    } else if m.contains("parameter") || m.contains("prototypes") {
        Class::Prototype
    } else if m.contains(" byte") {
        Class::Size
    } else if spaces.iter().any(|s| m.contains(s)) {
        Class::Space
    } else if m.starts_with("conflicting declarations") && m.contains('[') {
        // Two shapes: `.u64[3]` here but `.u64[1]` there.
        Class::Size
    } else {
        Class::Other
    }
}

fn nvlink_classes(err: &str) -> BTreeSet<Class> {
    err.lines()
        .filter(|l| l.contains("error"))
        .map(|l| {
            if l.contains("Multiple definition") {
                Class::Duplicate
            } else if l.contains("Size doesn't match") {
                Class::Size
            } else if l.contains("Memory space doesn't match") {
                Class::Space
            } else if l.contains("Prototype doesn't match") {
                Class::Prototype
            } else if l.contains("Undefined reference") {
                Class::Undefined
            } else {
                Class::Other
            }
        })
        .collect()
}

/// The global data symbols of the cubin at `path`.
fn read_image(path: &Path) -> Result<Image, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    cubin::read(&data).map_err(|e| format!("{}: {e}", path.display()))
}

/// `image` with the addresses of `functions` masked: nvlink leaves a
/// relocation where an initializer holds a function's address, ptxas
/// resolves it itself in a whole-program cubin (`at` lists where, from
/// nvlink's image), so neither bytes nor relocation can be compared.
fn mask_functions(image: &Image, at: &Image, functions: &[&str]) -> Image {
    let mut out = image.clone();
    for (name, sym) in &mut out {
        sym.relocs
            .retain(|(_, to)| !functions.contains(&to.as_str()));
        for (offset, _) in at.get(name).iter().flat_map(|s| &s.relocs) {
            let (o, len) = (*offset as usize, sym.bytes.len());
            if let Some(bytes) = sym.bytes.get_mut(o..(o + 8).min(len)) {
                bytes.fill(0);
            }
        }
    }
    out
}

/// The differences between two linked images (`ours`, nvlink's): a symbol
/// one lacks, or the same symbol with another space, size, contents or
/// relocations. Addresses of `functions` are not compared, nor the bytes
/// of `layout_dependent` symbols (they hold offsets into a constant bank
/// that each tool lays out its own way).
pub fn image_differences(
    ours: &Image,
    theirs: &Image,
    functions: &[&str],
    layout_dependent: &[&str],
) -> Vec<String> {
    let mut ours = mask_functions(ours, theirs, functions);
    let mut theirs = mask_functions(theirs, theirs, functions);
    for image in [&mut ours, &mut theirs] {
        for name in layout_dependent {
            if let Some(sym) = image.get_mut(*name) {
                sym.bytes.clear();
            }
        }
    }
    let mut out = Vec::new();
    let names: BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
    for name in names {
        match (ours.get(name), theirs.get(name)) {
            (Some(a), Some(b)) if a != b => {
                out.push(format!("`{name}`: ours {a:?}, nvlink's {b:?}"));
            }
            (Some(_), None) => out.push(format!("`{name}`: only in ours")),
            (None, Some(_)) => out.push(format!("`{name}`: only in nvlink's")),
            _ => {}
        }
    }
    out
}
