//! Typed bindings for a kernel crate, generated from its source: one method per kernel
//! with the right argument types, for a host crate's build script.
//!
//! # Where the types come from
//!
//! The link map and the ABI record give each parameter's kind, size, alignment, element
//! size and value class, but not the Rust element type (`u64` and `usize` have the same
//! record, and a struct is only its field layout). The kernel crate's source does: this
//! module reads every `#[kernel]` function (and every `extern "ptx-kernel"` function)
//! with `syn` and maps its parameter types:
//!
//! | device parameter | signature type | method argument |
//! |---|---|---|
//! | `u32`, `f32`, … | the same | by value |
//! | `&[T]` | `Slice<T>` | `&dyn DevicePtr<T>`: a `CudaSlice<T>`, a `DeviceBuffer<T>` or a view of part of one |
//! | `DisjointSlice<T, _>`, `&mut [T]` | `SliceMut<T>` | `&mut dyn DevicePtrMut<T>` (the same, writable) |
//! | `Option<&[T]>`, `Option<DisjointSlice<T, _>>` | `OptSlice<T>`, `OptSliceMut<T>` | `Option<&dyn DevicePtr<T>>`, `Option<&mut dyn DevicePtrMut<T>>` |
//! | `*const T`, `*mut T` | `Ptr<T>`, `PtrMut<T>` | `&dyn DevicePtr<T>`, `&mut dyn DevicePtrMut<T>` |
//! | `*const *const T`, `*mut *mut T` (pointer tables) | `Ptr<u64>`, `PtrMut<u64>` | `&CudaSlice<u64>` of device addresses, `&mut CudaSlice<u64>` |
//! | `*const c_void`, `*mut c_void` (untyped) | `Ptr<u8>`, `PtrMut<u8>` | `&CudaSlice<u8>`, `&mut CudaSlice<u8>` (bytes; `host_loader::Module::kernel` takes any element type) |
//! | `tma::TensorMap<T, RANK, B0, …, SWIZZLE>` | `tma::TensorMap<'static, T, RANK, B0, …>` | `&tma::TensorMap<'a, T, RANK, B0, …>` (the encoded map) |
//! | `texture::Texture<T, D>`, `Texture1d<T>`… | `texture::Texture<'static, T, D>` | `&texture::Texture<'a, T, D>` |
//! | `texture::Surface<T, D>`, `Surface1d<T>`… | `texture::Surface<'static, T, D>` | `&texture::Surface<'a, T, D>` |
//! | any other type `S` | `Struct<S>` | `S` by value |
//!
//! A type alias declared in the kernel's module (`type MapA = TensorMap<…>;`) stands for
//! its definition.
//!
//! A named type is written as a path from the kernel crate: `use` declarations in the
//! kernel's module are followed (`use mathlib::Affine;` gives `mathlib::Affine`), and a
//! type declared in the crate becomes `kernel_crate::module::Type`. The host crate
//! therefore depends on the kernel crate (built for the host, as device crates are) and
//! on every crate those paths name.
//!
//! So a wrong argument type is a compile error, and the PTX is still checked against the
//! same signature when the bindings are loaded (`host_loader::Module::kernel`
//! with the ABI record), which catches bindings generated from a source other than the
//! one the PTX was built from.
//!
//! # Use
//!
//! [`BuildScript`](crate::BuildScript) generates them for a host crate's `build.rs`
//! (`$OUT_DIR/<kernel_crate with - as _>.rs`); [`generate`] returns the text for any other
//! use. In the host program:
//!
//! ```ignore
//! mod kernels {
//!     include!(concat!(env!("OUT_DIR"), "/vecadd_kernels.rs"));
//! }
//! let kernels = kernels::VecaddKernels::load(&module)?;
//! unsafe { kernels.vecadd(&stream, cfg, &a, &b, &mut c) }?;
//! ```
//!
//! host-loader's `tests/bindings.rs` compiles the bindings of its fixture kernel crate
//! against the real types, and shows that an `f64` buffer for a `&[f32]` parameter does
//! not compile.
//!
//! The methods are `unsafe` for the reasons `host_loader::Kernel::launch`
//! gives: the host cannot see the kernel body.
//!
//! Module variables declared with `device_std::constant!` / `global!` get a field
//! loaded by `load` (`Module::constant` / `Module::global`, checked against the
//! declared type) and an accessor named after the variable (`kernels.TAPS().write(…)`),
//! when their type is a primitive, a named type or an array of them with a literal or
//! constant length; others are left to `Module::constant`/`global` by hand.
//!
//! A generic kernel binds once per instance of its `#[kernel(instances(...))]`, under
//! the instance's name. Each kernel also gets `NAME_kernel()` (its typed handle) and, when
//! a graph can take its parameters, `record_NAME` (the launch recorded into a graph, the
//! buffers as `graph::Buf`/`BufMut` tokens, `Option<…>` for the optional ones).
//!
//! Not supported: kernels declared by other macros, or in files reached through
//! `#[path]` attributes; renamed (`#[export_name]`) kernels.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use syn::{Item, Type, UseTree};

/// Why bindings could not be generated.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// A source file could not be read.
    #[error("cannot read `{path}`: {source}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A source file does not parse as Rust.
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What `syn` says.
        message: String,
    },
    /// A kernel parameter has a type host-loader has no parameter type for.
    #[error(
        "{path}: kernel `{kernel}` parameter {index} has type `{ty}`, which host-loader cannot \
         pass (use a scalar, `&[T]`, `DisjointSlice<T>`, `&mut [T]`, a raw pointer, a \
         `tma::TensorMap` with literal or constant-path arguments or a \
         `#[derive(KernelStruct)]` struct)"
    )]
    UnsupportedType {
        /// The file.
        path: String,
        /// The kernel.
        kernel: String,
        /// 0-based parameter index.
        index: usize,
        /// The type as written.
        ty: String,
    },
    /// The crate declares no kernel.
    #[error("{path}: no `#[kernel]` or `extern \"ptx-kernel\"` function found")]
    NoKernels {
        /// The crate root.
        path: String,
    },
}

/// One parameter of a kernel, as the bindings pass it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct BoundParam {
    name: String,
    /// The signature type, e.g. `host_loader::Slice<f32>`.
    sig: String,
    /// The method argument type, without the lifetime, e.g. `&'a cudarc::…<f32>`.
    arg: String,
}

/// One module variable found in the source (`device_std::constant!` / `global!`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct BoundVar {
    name: String,
    /// `true` for `constant!`, `false` for `global!`.
    constant: bool,
    /// The host type, a full path (e.g. `[f32; 9]`).
    ty: String,
}

/// What the source declares: kernels and module variables.
#[derive(Debug, Default)]
struct Found {
    kernels: Vec<BoundKernel>,
    vars: Vec<BoundVar>,
}

/// One kernel found in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
struct BoundKernel {
    name: String,
    doc: Vec<String>,
    params: Vec<BoundParam>,
}

/// Generates the bindings of kernel crate `kernel_crate` (its package name) whose crate
/// root is `lib_rs`, and returns them as Rust source: a struct `<CamelName>Kernels` with
/// `load(&Module)` and one `unsafe` launch method per kernel, in source order.
///
/// Errors: [`BuildError::Io`], [`BuildError::Syntax`], [`BuildError::UnsupportedType`],
/// [`BuildError::NoKernels`].
pub fn generate(kernel_crate: &str, lib_rs: impl AsRef<Path>) -> Result<String, BuildError> {
    let (found, _files) = collect(kernel_crate, lib_rs.as_ref())?;
    Ok(render(kernel_crate, &found))
}

/// [`generate`], written to `out` (through a temporary file and a rename). Returns every
/// source file read, for `cargo:rerun-if-changed`.
///
/// Errors: those of [`generate`]; [`BuildError::Io`] when `out` cannot be written.
pub fn write(
    kernel_crate: &str,
    lib_rs: impl AsRef<Path>,
    out: &Path,
) -> Result<Vec<PathBuf>, BuildError> {
    let (found, files) = collect(kernel_crate, lib_rs.as_ref())?;
    let io = |source| BuildError::Io {
        path: out.display().to_string(),
        source,
    };
    let tmp = out.with_extension("rs.tmp");
    std::fs::write(&tmp, render(kernel_crate, &found)).map_err(io)?;
    std::fs::rename(&tmp, out).map_err(io)?;
    Ok(files)
}

/// Every kernel of the crate rooted at `lib_rs`, in source order, and the source files
/// read; [`BuildError::NoKernels`] when there is none.
fn collect(kernel_crate: &str, lib_rs: &Path) -> Result<(Found, Vec<PathBuf>), BuildError> {
    let crate_ident = kernel_crate.replace('-', "_");
    let mut found = Found::default();
    let mut files = Vec::new();
    collect_file(lib_rs, &crate_ident, &[], &mut found, &mut files)?;
    if found.kernels.is_empty() {
        return Err(BuildError::NoKernels {
            path: lib_rs.display().to_string(),
        });
    }
    Ok((found, files))
}

fn collect_file(
    path: &Path,
    crate_ident: &str,
    module: &[String],
    found: &mut Found,
    files: &mut Vec<PathBuf>,
) -> Result<(), BuildError> {
    let text = std::fs::read_to_string(path).map_err(|source| BuildError::Io {
        path: path.display().to_string(),
        source,
    })?;
    files.push(path.to_path_buf());
    let file = syn::parse_file(&text).map_err(|e| {
        let start = e.span().start();
        BuildError::Syntax {
            path: path.display().to_string(),
            line: start.line,
            column: start.column + 1,
            message: e.to_string(),
        }
    })?;
    // `src/lib.rs` and `src/m/mod.rs` hold their children beside them; `src/m.rs` in `src/m/`.
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let parent = path.parent().unwrap_or(Path::new("."));
    let child_dir = if module.is_empty() || stem == "mod" {
        parent.to_path_buf()
    } else {
        parent.join(stem)
    };
    let ctx = Ctx {
        path,
        crate_ident,
        module,
        child_dir: &child_dir,
    };
    collect_items(&ctx, &file.items, found, files)
}

/// Where the items being read live.
struct Ctx<'a> {
    path: &'a Path,
    crate_ident: &'a str,
    module: &'a [String],
    child_dir: &'a Path,
}

fn collect_items(
    ctx: &Ctx<'_>,
    items: &[Item],
    found: &mut Found,
    files: &mut Vec<PathBuf>,
) -> Result<(), BuildError> {
    let imports = imports(ctx, items);
    let aliases: Vec<(String, Type)> = items
        .iter()
        .filter_map(|i| match i {
            Item::Type(t) if t.generics.params.is_empty() => {
                Some((t.ident.to_string(), (*t.ty).clone()))
            }
            _ => None,
        })
        .collect();
    let scope = Scope {
        imports: &imports,
        aliases: &aliases,
    };
    for item in items {
        match item {
            Item::Fn(f) if is_kernel(f) => match kernel_instances(f) {
                // A generic kernel: one binding per instance, its signature with the
                // instance's arguments put in (as `#[kernel]` makes the entries).
                Some(instances) => {
                    for (name, args) in instances {
                        found
                            .kernels
                            .push(bind_kernel(ctx, &scope, &instantiate(f, name, &args))?);
                    }
                }
                None => found.kernels.push(bind_kernel(ctx, &scope, f)?),
            },
            Item::Macro(m) => found.vars.extend(module_vars(ctx, &imports, m)),
            Item::Mod(m) => {
                let mut module = ctx.module.to_vec();
                module.push(m.ident.to_string());
                match &m.content {
                    Some((_, inner)) => {
                        let dir = ctx.child_dir.join(m.ident.to_string());
                        let inner_ctx = Ctx {
                            path: ctx.path,
                            crate_ident: ctx.crate_ident,
                            module: &module,
                            child_dir: &dir,
                        };
                        collect_items(&inner_ctx, inner, found, files)?;
                    }
                    None => {
                        let name = m.ident.to_string();
                        let flat = ctx.child_dir.join(format!("{name}.rs"));
                        let nested = ctx.child_dir.join(&name).join("mod.rs");
                        let file = if flat.is_file() { flat } else { nested };
                        collect_file(&file, ctx.crate_ident, &module, found, files)?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The variables a `constant! { … }` or `global! { … }` invocation declares, each with
/// the host type the generator can write (a primitive, a named type, an array of them
/// whose length is a literal or a path to a constant); the others are left out of the
/// bindings (`host_loader::Module::constant`/`global` reach them by hand).
fn module_vars(ctx: &Ctx<'_>, imports: &[(String, String)], m: &syn::ItemMacro) -> Vec<BoundVar> {
    use syn::parse::Parser;
    let Some(last) = m.mac.path.segments.last() else {
        return Vec::new();
    };
    let constant = match last.ident.to_string().as_str() {
        "constant" => true,
        "global" => false,
        _ => return Vec::new(),
    };
    let parser = |input: syn::parse::ParseStream<'_>| {
        let mut out = Vec::new();
        while !input.is_empty() {
            input.call(syn::Attribute::parse_outer)?;
            input.parse::<syn::Visibility>()?;
            input.parse::<syn::Token![static]>()?;
            let name: syn::Ident = input.parse()?;
            input.parse::<syn::Token![:]>()?;
            let ty: Type = input.parse()?;
            if input.peek(syn::Token![=]) {
                input.parse::<syn::Token![=]>()?;
                input.parse::<syn::Expr>()?;
            }
            input.parse::<syn::Token![;]>()?;
            out.push((name.to_string(), ty));
        }
        Ok(out)
    };
    let Ok(decls) = parser.parse2(m.mac.tokens.clone()) else {
        return Vec::new();
    };
    decls
        .into_iter()
        .filter_map(|(name, ty)| {
            Some(BoundVar {
                name,
                constant,
                ty: var_type(ctx, imports, &ty)?,
            })
        })
        .collect()
}

/// [`host_type`] with array lengths that name a constant of the kernel crate written as
/// paths from it.
fn var_type(ctx: &Ctx<'_>, imports: &[(String, String)], ty: &Type) -> Option<String> {
    match ty {
        Type::Array(a) => {
            let elem = var_type(ctx, imports, &a.elem)?;
            let len = match &a.len {
                syn::Expr::Lit(_) => quote_expr(&a.len),
                syn::Expr::Path(p) if p.qself.is_none() => {
                    let segs: Vec<String> = p
                        .path
                        .segments
                        .iter()
                        .map(|s| s.ident.to_string())
                        .collect();
                    match imports.iter().find(|(k, _)| *k == segs[0]) {
                        Some((_, full)) if segs.len() == 1 => full.clone(),
                        _ if segs.len() == 1 => absolute(ctx, &["self".into(), segs[0].clone()]),
                        _ => absolute(ctx, &segs),
                    }
                }
                _ => return None,
            };
            Some(format!("[{elem}; {len}]"))
        }
        _ => host_type(ctx, imports, ty),
    }
}

fn is_kernel(f: &syn::ItemFn) -> bool {
    let attr = f.attrs.iter().any(|a| {
        a.path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "kernel")
    });
    let abi = f
        .sig
        .abi
        .as_ref()
        .and_then(|a| a.name.as_ref())
        .is_some_and(|n| n.value() == "ptx-kernel");
    attr || abi
}

/// The `instances(NAME = <ARGS>, ...)` of a `#[kernel(...)]` attribute, if it has them.
fn kernel_instances(
    f: &syn::ItemFn,
) -> Option<Vec<(syn::Ident, syn::AngleBracketedGenericArguments)>> {
    use syn::parse::Parser;
    let attr = f.attrs.iter().find(|a| {
        a.path()
            .segments
            .last()
            .is_some_and(|s| s.ident == "kernel")
    })?;
    let syn::Meta::List(list) = &attr.meta else {
        return None;
    };
    let metas = syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated
        .parse2(list.tokens.clone())
        .ok()?;
    let inst = metas.iter().find_map(|m| match m {
        syn::Meta::List(l) if l.path.is_ident("instances") => Some(l),
        _ => None,
    })?;
    let parse_one = |input: syn::parse::ParseStream| -> syn::Result<_> {
        let name: syn::Ident = input.parse()?;
        input.parse::<syn::Token![=]>()?;
        Ok((name, input.parse::<syn::AngleBracketedGenericArguments>()?))
    };
    let parsed = inst
        .parse_args_with(|input: syn::parse::ParseStream| {
            syn::punctuated::Punctuated::<_, syn::Token![,]>::parse_terminated_with(
                input, parse_one,
            )
        })
        .ok()?;
    Some(parsed.into_iter().collect())
}

/// `f` as the instance `name`: no generics, each type parameter in the signature replaced
/// by the instance's argument (`#[kernel]` checked the count when the crate built).
fn instantiate(
    f: &syn::ItemFn,
    name: syn::Ident,
    args: &syn::AngleBracketedGenericArguments,
) -> syn::ItemFn {
    struct Substitute(Vec<(syn::Ident, syn::GenericArgument)>);
    impl syn::visit_mut::VisitMut for Substitute {
        fn visit_type_mut(&mut self, ty: &mut Type) {
            if let Type::Path(tp) = ty {
                if let Some(id) = tp.path.get_ident() {
                    if let Some((_, syn::GenericArgument::Type(t))) =
                        self.0.iter().find(|(p, _)| p == id)
                    {
                        *ty = t.clone();
                        return;
                    }
                }
            }
            syn::visit_mut::visit_type_mut(self, ty);
        }
    }
    let params = f.sig.generics.params.iter().filter_map(|p| match p {
        syn::GenericParam::Type(t) => Some(t.ident.clone()),
        syn::GenericParam::Const(c) => Some(c.ident.clone()),
        syn::GenericParam::Lifetime(_) => None,
    });
    let mut subst = Substitute(params.zip(args.args.iter().cloned()).collect());
    let mut g = f.clone();
    g.sig.ident = name;
    g.sig.generics = syn::Generics::default();
    for input in g.sig.inputs.iter_mut() {
        if let syn::FnArg::Typed(pt) = input {
            syn::visit_mut::VisitMut::visit_type_mut(&mut subst, &mut pt.ty);
        }
    }
    g
}

/// `ident -> full path` for the `use` declarations of one module.
fn imports(ctx: &Ctx<'_>, items: &[Item]) -> Vec<(String, String)> {
    fn walk(
        ctx: &Ctx<'_>,
        tree: &UseTree,
        prefix: &mut Vec<String>,
        out: &mut Vec<(String, String)>,
    ) {
        match tree {
            UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                walk(ctx, &p.tree, prefix, out);
                prefix.pop();
            }
            UseTree::Name(n) => {
                let mut full = prefix.clone();
                full.push(n.ident.to_string());
                out.push((n.ident.to_string(), absolute(ctx, &full)));
            }
            UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                out.push((r.rename.to_string(), absolute(ctx, &full)));
            }
            UseTree::Group(g) => {
                for t in &g.items {
                    walk(ctx, t, prefix, out);
                }
            }
            UseTree::Glob(_) => {}
        }
    }
    let mut out = Vec::new();
    for item in items {
        if let Item::Use(u) = item {
            walk(ctx, &u.tree, &mut Vec::new(), &mut out);
        }
    }
    out
}

/// A path written in module `ctx.module` as a path from outside the crate.
fn absolute(ctx: &Ctx<'_>, segments: &[String]) -> String {
    let mut module: Vec<String> = ctx.module.to_vec();
    let mut rest = segments;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            module.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                module.pop();
                rest = &rest[1..];
            }
        }
        // Another crate (`mathlib::Affine`, `::core::…`).
        _ => return format!("::{}", segments.join("::").trim_start_matches("::")),
    }
    let mut full = vec![ctx.crate_ident.to_string()];
    full.extend(module);
    full.extend(rest.iter().cloned());
    format!("::{}", full.join("::"))
}

const PRIMITIVES: [&str; 15] = [
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32",
    "f64", "bool",
];

/// An element or struct type as the host writes it.
fn host_type(ctx: &Ctx<'_>, imports: &[(String, String)], ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            let segs: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            if p.path.segments.iter().any(|s| !s.arguments.is_empty()) {
                return None;
            }
            if segs.len() == 1 {
                let name = &segs[0];
                if PRIMITIVES.contains(&name.as_str()) {
                    return Some(name.clone());
                }
                if let Some((_, full)) = imports.iter().find(|(k, _)| k == name) {
                    return Some(full.clone());
                }
                return Some(absolute(ctx, &["self".into(), name.clone()]));
            }
            if p.path.leading_colon.is_some() {
                return Some(format!("::{}", segs.join("::")));
            }
            // `a::B`: `a` may itself be an import.
            let mut full: Vec<String> = segs.clone();
            if let Some((_, head)) = imports.iter().find(|(k, _)| *k == segs[0]) {
                full = head
                    .trim_start_matches("::")
                    .split("::")
                    .map(String::from)
                    .collect();
                full.extend(segs[1..].iter().cloned());
                return Some(format!("::{}", full.join("::")));
            }
            Some(absolute(ctx, &full))
        }
        Type::Array(a) => {
            let elem = host_type(ctx, imports, &a.elem)?;
            let len = &a.len;
            Some(format!("[{elem}; {}]", quote_expr(len)))
        }
        Type::Paren(p) => host_type(ctx, imports, &p.elem),
        _ => None,
    }
}

/// An array length as written (a literal or a path to a constant).
fn quote_expr(e: &syn::Expr) -> String {
    match e {
        syn::Expr::Lit(l) => match &l.lit {
            syn::Lit::Int(i) => i.base10_digits().to_string(),
            _ => "_".into(),
        },
        _ => "_".into(),
    }
}

/// What a slice or pointer parameter takes: any device memory cudarc's traits cover (a
/// `CudaSlice`, a view of part of one, a `DeviceBuffer`), as `Kernel::launch` does.
const SLICE_ARG: &str = "dyn ::host_loader::cudarc::driver::DevicePtr";
const SLICE_ARG_MUT: &str = "dyn ::host_loader::cudarc::driver::DevicePtrMut";

/// What a kernel's module declares that its parameter types may name: `use`d paths and
/// type aliases.
struct Scope<'a> {
    imports: &'a [(String, String)],
    aliases: &'a [(String, Type)],
}

/// `TensorMap<T, RANK, B0, …>`'s generic arguments as the host writes them: the element
/// type, then each constant (a literal, or a path to a constant of the kernel's crate).
fn tensor_map_args(
    ctx: &Ctx<'_>,
    imports: &[(String, String)],
    args: &syn::PathArguments,
) -> Option<String> {
    let syn::PathArguments::AngleBracketed(args) = args else {
        return None;
    };
    let mut out = Vec::new();
    for a in &args.args {
        out.push(match a {
            syn::GenericArgument::Type(t) => host_type(ctx, imports, t)?,
            syn::GenericArgument::Const(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            })) => i.base10_digits().to_string(),
            _ => return None,
        });
    }
    (out.len() >= 3).then(|| out.join(", "))
}

/// The device-std texture and surface parameter types, by name.
const TEXTURE_TYPES: [&str; 8] = [
    "Texture",
    "Texture1d",
    "Texture2d",
    "Texture3d",
    "Surface",
    "Surface1d",
    "Surface2d",
    "Surface3d",
];

/// `Texture<T, D>`, `Texture1d<T>` … `Surface3d<T>`: which object, with the host's
/// texel type and the dimension count.
fn texture_param(
    ctx: &Ctx<'_>,
    imports: &[(String, String)],
    seg: &syn::PathSegment,
) -> Option<(&'static str, (String, String))> {
    let name = seg.ident.to_string();
    let (kind, rest) = match name.as_str() {
        "Texture" | "Texture1d" | "Texture2d" | "Texture3d" => ("Texture", &name[7..]),
        "Surface" | "Surface1d" | "Surface2d" | "Surface3d" => ("Surface", &name[7..]),
        _ => return None,
    };
    let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|a| match a {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    let t = host_type(ctx, imports, types.next()?)?;
    let d = match rest {
        "1d" | "2d" | "3d" => rest[..1].to_string(),
        "" => args.args.iter().find_map(|a| match a {
            syn::GenericArgument::Const(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            })) => Some(i.base10_digits().to_string()),
            _ => None,
        })?,
        _ => return None,
    };
    Some((kind, (t, d)))
}

fn bind_param(ctx: &Ctx<'_>, scope: &Scope<'_>, ty: &Type) -> Option<(String, String)> {
    let hl = "::host_loader";
    let imports = scope.imports;
    match ty {
        Type::Reference(r) => match &*r.elem {
            Type::Slice(s) => {
                let t = host_type(ctx, imports, &s.elem)?;
                Some(if r.mutability.is_some() {
                    (
                        format!("{hl}::SliceMut<{t}>"),
                        format!("&'a mut ({SLICE_ARG_MUT}<{t}> + 'a)"),
                    )
                } else {
                    (
                        format!("{hl}::Slice<{t}>"),
                        format!("&'a ({SLICE_ARG}<{t}> + 'a)"),
                    )
                })
            }
            _ => None,
        },
        Type::Ptr(p) => {
            let t = match &*p.elem {
                // A pointer table: on the host, device addresses are `u64` (`CUdeviceptr`);
                // cudarc cannot allocate a buffer of raw pointers.
                Type::Ptr(_) => "u64".to_string(),
                // An untyped pointer (`void*`) takes any element type; bindings need one.
                Type::Path(e) if e.path.segments.last().is_some_and(|s| s.ident == "c_void") => {
                    "u8".to_string()
                }
                elem => host_type(ctx, imports, elem)?,
            };
            Some(if p.mutability.is_some() {
                (
                    format!("{hl}::PtrMut<{t}>"),
                    format!("&'a mut ({SLICE_ARG_MUT}<{t}> + 'a)"),
                )
            } else {
                (
                    format!("{hl}::Ptr<{t}>"),
                    format!("&'a ({SLICE_ARG}<{t}> + 'a)"),
                )
            })
        }
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            if p.path.segments.len() == 1 && last.arguments.is_empty() {
                if let Some((_, def)) = scope.aliases.iter().find(|(n, _)| last.ident == n) {
                    return bind_param(ctx, scope, def);
                }
            }
            if last.ident == "TensorMap" {
                let args = tensor_map_args(ctx, imports, &last.arguments)?;
                return Some((
                    format!("{hl}::tma::TensorMap<'static, {args}>"),
                    format!("&'a {hl}::tma::TensorMap<'a, {args}>"),
                ));
            }
            if let Some((kind, (t, d))) = texture_param(ctx, imports, last) {
                return Some((
                    format!("{hl}::texture::{kind}<'static, {t}, {d}>"),
                    format!("&'a {hl}::texture::{kind}<'a, {t}, {d}>"),
                ));
            }
            if TEXTURE_TYPES.contains(&last.ident.to_string().as_str()) {
                // `Texture<f32, DIMS>` with a named constant: not bound (the error names
                // the parameter), rather than taken for a struct.
                return None;
            }
            if last.ident == "Option" {
                // `Option<&[T]>` / `Option<DisjointSlice<T>>`: the slice's binding,
                // optional (a null address on the device is `None`).
                let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                    return None;
                };
                let Some(syn::GenericArgument::Type(inner)) = args.args.first() else {
                    return None;
                };
                let (sig, arg) = bind_param(ctx, scope, inner)?;
                let opt = |from: &str, to: &str| {
                    sig.strip_prefix(from).map(|rest| {
                        (
                            format!("{to}{rest}"),
                            format!("::core::option::Option<{arg}>"),
                        )
                    })
                };
                return opt(&format!("{hl}::SliceMut<"), &format!("{hl}::OptSliceMut<"))
                    .or_else(|| opt(&format!("{hl}::Slice<"), &format!("{hl}::OptSlice<")));
            }
            if last.ident == "DisjointSlice" {
                let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                    return None;
                };
                let elem = args.args.iter().find_map(|a| match a {
                    syn::GenericArgument::Type(t) => Some(t),
                    _ => None,
                })?;
                let t = host_type(ctx, imports, elem)?;
                return Some((
                    format!("{hl}::SliceMut<{t}>"),
                    format!("&'a mut ({SLICE_ARG_MUT}<{t}> + 'a)"),
                ));
            }
            let t = host_type(ctx, imports, ty)?;
            if PRIMITIVES.contains(&t.as_str()) {
                Some((t.clone(), t))
            } else {
                Some((format!("{hl}::Struct<{t}>"), t))
            }
        }
        Type::Paren(p) => bind_param(ctx, scope, &p.elem),
        _ => None,
    }
}

fn bind_kernel(
    ctx: &Ctx<'_>,
    scope: &Scope<'_>,
    f: &syn::ItemFn,
) -> Result<BoundKernel, BuildError> {
    let name = f.sig.ident.to_string();
    let doc = f
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut params = Vec::new();
    for (index, input) in f.sig.inputs.iter().enumerate() {
        let syn::FnArg::Typed(pt) = input else {
            continue;
        };
        let unsupported = || BuildError::UnsupportedType {
            path: ctx.path.display().to_string(),
            kernel: name.clone(),
            index,
            ty: type_text(&pt.ty),
        };
        let (sig, arg) = bind_param(ctx, scope, &pt.ty).ok_or_else(unsupported)?;
        let pname = match &*pt.pat {
            // The method's own parameters keep their names.
            syn::Pat::Ident(i) if !["stream", "cfg"].contains(&i.ident.to_string().as_str()) => {
                i.ident.to_string()
            }
            _ => format!("arg{index}"),
        };
        params.push(BoundParam {
            name: pname,
            sig,
            arg,
        });
    }
    Ok(BoundKernel { name, doc, params })
}

fn type_text(ty: &Type) -> String {
    match ty {
        Type::Path(p) => p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect::<Vec<_>>()
            .join("::"),
        Type::Reference(_) => "&…".into(),
        Type::Tuple(_) => "(…)".into(),
        Type::ImplTrait(_) => "impl …".into(),
        _ => "…".into(),
    }
}

fn camel(kernel_crate: &str) -> String {
    kernel_crate
        .split(['-', '_'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect::<String>()
        + if kernel_crate.ends_with("kernels") {
            ""
        } else {
            "Kernels"
        }
}

fn render(kernel_crate: &str, found: &Found) -> String {
    let (kernels, vars) = (&found.kernels, &found.vars);
    let ty = camel(kernel_crate);
    let mut s = String::new();
    let w = &mut s;
    // `write!` to a String cannot fail.
    let _ = writeln!(
        w,
        "// @generated by gpu_build::bindings from the kernel crate `{kernel_crate}`; do not edit.\n"
    );
    let _ = writeln!(
        w,
        "/// Typed launchers for the kernels of `{kernel_crate}`: one checked handle per \
         kernel,\n/// made by [`{ty}::load`]."
    );
    // Signature tuples of full paths read as "complex" to clippy; they are generated.
    // A program may launch only some of the kernels; the rest are not its dead code.
    let _ = writeln!(
        w,
        "#[derive(Debug, Clone)]\n#[allow(clippy::type_complexity, dead_code)]\npub struct {ty} {{"
    );
    for k in kernels {
        let sig = sig_tuple(k);
        let _ = writeln!(w, "    {}: ::host_loader::Kernel<{sig}>,", k.name);
    }
    for v in vars {
        let _ = writeln!(w, "    var_{}: ::host_loader::ModuleVar<{}>,", v.name, v.ty);
    }
    let _ = writeln!(
        w,
        "}}\n\n#[allow(dead_code, clippy::type_complexity)]\nimpl {ty} {{"
    );
    let _ = writeln!(
        w,
        "    /// Makes a checked handle for every kernel and module variable (see\n    \
         /// `host_loader::Module::kernel`, `constant`, `global`).\n    \
         ///\n    /// Errors: the first kernel or variable whose PTX or record disagrees with \
         these bindings.\n    pub fn load(module: &::host_loader::Module) -> \
         ::core::result::Result<Self, ::host_loader::Error> {{\n        \
         ::core::result::Result::Ok({ty} {{"
    );
    for k in kernels {
        let _ = writeln!(w, "            {0}: module.kernel(\"{0}\")?,", k.name);
    }
    for v in vars {
        let how = if v.constant { "constant" } else { "global" };
        let _ = writeln!(w, "            var_{0}: module.{how}(\"{0}\")?,", v.name);
    }
    let _ = writeln!(w, "        }})\n    }}");
    for v in vars {
        let (what, how) = if v.constant {
            ("constant-memory variable", "constant!")
        } else {
            ("device global", "global!")
        };
        let _ = writeln!(
            w,
            "\n    /// The {what} `{0}` (`device_std::{how}`), checked as `{1}`: `write` and \
             `read` it\n    /// on a stream (`host_loader::ModuleVar`).\n    \
             #[allow(non_snake_case)]\n    pub fn {0}(&self) -> &::host_loader::ModuleVar<{1}> {{\n        \
             &self.var_{0}\n    }}",
            v.name, v.ty
        );
    }
    for k in kernels {
        let _ = writeln!(
            w,
            "\n    /// The checked handle of `{0}`, typed with its signature: for\n    \
             /// `host_loader::graph` (`Recorder::launch(kernels.{0}_kernel(), cfg, args)`), \
             `launch_with`,\n    /// occupancy queries, without writing the signature again.\n    \
             pub fn {0}_kernel(&self) -> &::host_loader::Kernel<{1}> {{\n        &self.{0}\n    }}",
            k.name,
            sig_tuple(k)
        );
    }
    for k in kernels {
        let _ = writeln!(w);
        for line in &k.doc {
            // The kernel's own `# Safety` becomes part of the launcher's.
            let line = if line.trim() == "# Safety" {
                " **Kernel preconditions:**"
            } else {
                line.as_str()
            };
            let _ = writeln!(w, "    ///{line}");
        }
        if !k.doc.is_empty() {
            let _ = writeln!(w, "    ///");
        }
        let _ = writeln!(
            w,
            "    /// Launches `{}` on `stream` (`host_loader::Kernel::launch`).\n    ///\n    \
             /// # Safety\n    ///\n    /// The obligations of `host_loader::Kernel::launch`: \
             the kernel stays within its\n    /// buffers, writes only through mutable ones, \
             and its preconditions hold.",
            k.name
        );
        let _ = write!(
            w,
            "    #[allow(clippy::too_many_arguments, clippy::needless_lifetimes)]\n    pub unsafe fn {}<'a>(\n        \
             &self,\n        stream: &'a ::host_loader::cudarc::driver::CudaStream,\n        \
             cfg: ::host_loader::LaunchConfig,\n",
            k.name
        );
        for p in &k.params {
            let _ = writeln!(w, "        {}: {},", p.name, p.arg);
        }
        let names: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
        let args = match names.len() {
            0 => "()".to_string(),
            1 => format!("({},)", names[0]),
            _ => format!("({})", names.join(", ")),
        };
        let _ = writeln!(
            w,
            "    ) -> ::core::result::Result<(), ::host_loader::Error> {{\n        \
             // SAFETY: the caller upholds `Kernel::launch`'s obligations (see `# Safety`).\n        \
             unsafe {{ self.{}.launch(stream, cfg, {args}) }}\n    }}",
            k.name
        );
        render_record(w, k, &args);
    }
    let _ = writeln!(w, "}}");
    s
}

/// `record_NAME`: the same launch recorded into a CUDA graph
/// (`host_loader::graph::Recorder::launch`), the buffers as the recorder's tokens. Only
/// for kernels whose parameters a graph takes (slices, pointers, scalars, structs).
fn render_record(w: &mut String, k: &BoundKernel, args: &str) {
    let graph_arg = |p: &BoundParam| -> Option<String> {
        let hl = "::host_loader";
        let elem = |prefix: &str| {
            p.sig
                .strip_prefix(prefix)?
                .strip_suffix('>')
                .map(str::to_string)
        };
        if let Some(t) = elem(&format!("{hl}::OptSliceMut<")) {
            return Some(format!("::core::option::Option<{hl}::graph::BufMut<{t}>>"));
        }
        if let Some(t) = elem(&format!("{hl}::OptSlice<")) {
            return Some(format!("::core::option::Option<{hl}::graph::Buf<{t}>>"));
        }
        if let Some(t) =
            elem(&format!("{hl}::SliceMut<")).or_else(|| elem(&format!("{hl}::PtrMut<")))
        {
            return Some(format!("{hl}::graph::BufMut<{t}>"));
        }
        if let Some(t) = elem(&format!("{hl}::Slice<")).or_else(|| elem(&format!("{hl}::Ptr<"))) {
            return Some(format!("{hl}::graph::Buf<{t}>"));
        }
        if p.sig.starts_with(&format!("{hl}::Struct<")) || !p.sig.starts_with(hl) {
            return Some(p.arg.clone()); // a struct or a scalar: passed by value
        }
        None // texture, surface, tensor map: not graph parameters yet
    };
    let Some(types) = k.params.iter().map(graph_arg).collect::<Option<Vec<_>>>() else {
        return;
    };
    let _ = write!(
        w,
        "\n    /// Records `{0}` into a CUDA graph (`host_loader::graph::Recorder::launch`): the \
         same\n    /// launch as [`{0}`](Self::{0}), each buffer as the token `Recorder::read` or\n    \
         /// `Recorder::write` gave for it.\n    ///\n    /// # Safety\n    ///\n    \
         /// The obligations of `host_loader::graph::Recorder::launch`.\n    \
         #[allow(clippy::too_many_arguments)]\n    pub unsafe fn record_{0}(\n        &self,\n        \
         recorder: &mut ::host_loader::graph::Recorder<'_, '_>,\n        \
         cfg: ::host_loader::LaunchConfig,\n",
        k.name
    );
    for (p, t) in k.params.iter().zip(&types) {
        let _ = writeln!(w, "        {}: {},", p.name, t);
    }
    let _ = writeln!(
        w,
        "    ) -> ::core::result::Result<::host_loader::graph::KernelNode<{sig}>, ::host_loader::Error> {{\n        \
         // SAFETY: the caller upholds `Recorder::launch`'s obligations (see `# Safety`).\n        \
         unsafe {{ recorder.launch(&self.{name}, cfg, {args}) }}\n    }}",
        sig = sig_tuple(k),
        name = k.name,
    );
}

fn sig_tuple(k: &BoundKernel) -> String {
    let sigs: Vec<&str> = k.params.iter().map(|p| p.sig.as_str()).collect();
    match sigs.len() {
        0 => "()".into(),
        1 => format!("({},)", sigs[0]),
        _ => format!("({})", sigs.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_names_to_types() {
        assert_eq!(camel("vecadd-kernels"), "VecaddKernels");
        assert_eq!(camel("linked_math-kernels"), "LinkedMathKernels");
        assert_eq!(camel("mathlib"), "MathlibKernels");
    }

    #[test]
    fn generic_kernel_instances_and_graph_recording_are_bound() {
        let dir = std::env::temp_dir().join(format!("bindings-instances-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lib = dir.join("lib.rs");
        std::fs::write(
            &lib,
            "use device_std::{kernel, DisjointSlice, BlockIndex1D};\n\
             #[kernel(instances(sum_f32 = <f32, 256>, sum_u32 = <u32, 128>))]\n\
             pub fn sum<T: Copy, const BLOCK: usize>(xs: &[T], out: DisjointSlice<T, BlockIndex1D>, k: T, \
             bias: Option<&[T]>, partial: Option<DisjointSlice<T>>) {}\n",
        )
        .unwrap();
        let text = generate("inst-kernels", &lib).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        for want in [
            "sum_f32: module.kernel(\"sum_f32\")?",
            "sum_u32: module.kernel(\"sum_u32\")?",
            "::host_loader::Kernel<(::host_loader::Slice<f32>, ::host_loader::SliceMut<f32>, f32, ::host_loader::OptSlice<f32>, ::host_loader::OptSliceMut<f32>)>",
            "::host_loader::Kernel<(::host_loader::Slice<u32>, ::host_loader::SliceMut<u32>, u32, ::host_loader::OptSlice<u32>, ::host_loader::OptSliceMut<u32>)>",
            "xs: &'a (dyn ::host_loader::cudarc::driver::DevicePtr<f32> + 'a),",
            "out: &'a mut (dyn ::host_loader::cudarc::driver::DevicePtrMut<f32> + 'a),",
            "pub unsafe fn record_sum_f32(",
            "bias: ::core::option::Option<&'a (dyn ::host_loader::cudarc::driver::DevicePtr<f32> + 'a)>,",
            "partial: ::core::option::Option<&'a mut (dyn ::host_loader::cudarc::driver::DevicePtrMut<f32> + 'a)>,",
            "bias: ::core::option::Option<::host_loader::graph::Buf<f32>>,",
            "::host_loader::OptSlice<f32>, ::host_loader::OptSliceMut<f32>",
            "xs: ::host_loader::graph::Buf<f32>,",
            "out: ::host_loader::graph::BufMut<f32>,",
            "k: f32,",
            "unsafe { recorder.launch(&self.sum_f32, cfg, (xs, out, k, bias, partial)) }",
        ] {
            assert!(text.contains(want), "{want} missing from:\n{text}");
        }
        assert!(!text.contains("module.kernel(\"sum\")"), "{text}");
    }

    #[test]
    fn textures_and_surfaces_bind_to_host_objects() {
        let dir = std::env::temp_dir().join(format!("bindings-texture-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lib = dir.join("lib.rs");
        std::fs::write(
            &lib,
            "use device_std::texture::{Texture, Texture2d, Surface3d};\n\
             #[kernel] pub fn a(t: Texture2d<[u8; 4]>, s: Surface3d<f32>, u: Texture<f32, 1>) {}\n",
        )
        .unwrap();
        let text = generate("tex-kernels", &lib).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        for want in [
            "pub fn a_kernel(&self) -> &::host_loader::Kernel<(",
            "::host_loader::texture::Texture<'static, [u8; 4], 2>",
            "&'a ::host_loader::texture::Surface<'a, f32, 3>",
            "::host_loader::texture::Texture<'static, f32, 1>",
        ] {
            assert!(text.contains(want), "{want} missing from:\n{text}");
        }
    }
}
