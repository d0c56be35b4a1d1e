//! `#[kernel]`: checks a function's shape and parameter types, then writes
//! the `extern "ptx-kernel"` shim (nvptx64) or a plain function (host), and
//! the kernel's ABI record.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{Error, FnArg, ItemFn, Result, ReturnType};

/// Expands `#[kernel] fn NAME(params) { body }`.
///
/// Errors: arguments to the attribute (see [`Args`]); a generic, `async`, `const`,
/// variadic or `extern` function; a method; a return type other than `()`.
pub fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    let args = parse_args(attr)?;
    let func: ItemFn = syn::parse2(item)?;
    check_shape(&func, !args.instances.is_empty())?;
    if args.instances.is_empty() {
        return expand_one(&func, &args);
    }
    expand_instances(&func, &args)
}

/// A generic kernel: the function itself, unchanged and not an entry, and one kernel per
/// instance whose body calls it with the instance's generic arguments.
fn expand_instances(func: &ItemFn, args: &Args) -> Result<TokenStream> {
    let instances = &args.instances;
    let generic = &func.sig.ident;
    let params = generic_params(func)?;
    let mut out = quote! {
        #[inline(always)]
        #func
    };
    for inst in instances {
        let given = inst.args.args.len();
        if given != params.len() {
            return Err(Error::new(
                inst.args.span(),
                format!(
                    "`{generic}` has {} generic parameter(s) (lifetimes aside); this instance gives {given}",
                    params.len()
                ),
            ));
        }
        let mut subst = Substitute { map: Vec::new() };
        for (param, arg) in params.iter().zip(&inst.args.args) {
            subst.map.push((param.clone(), arg.clone()));
        }
        let mut sig = func.sig.clone();
        sig.ident = inst.name.clone();
        sig.generics = syn::Generics::default();
        let mut call_args = Vec::new();
        for (i, input) in sig.inputs.iter_mut().enumerate() {
            if let FnArg::Typed(pt) = input {
                let arg = format_ident!("__arg{}", i);
                *pt.pat = syn::parse_quote!(#arg);
                syn::visit_mut::VisitMut::visit_type_mut(&mut subst, &mut pt.ty);
                call_args.push(arg);
            }
        }
        let turbofish = &inst.args;
        let doc = format!(
            "`{generic}{}`, a kernel of its own (`#[kernel(instances(...))]`).",
            quote!(#turbofish).to_string().replace(' ', "")
        );
        let unsafety = &sig.unsafety;
        let call = if unsafety.is_some() {
            // SAFETY: the instance has the generic kernel's contract, which its callers
            // (the launch) take on.
            quote!(unsafe { #generic::#turbofish(#(#call_args),*) })
        } else {
            quote!(#generic::#turbofish(#(#call_args),*))
        };
        let item = ItemFn {
            attrs: vec![syn::parse_quote!(#[doc = #doc])],
            vis: func.vis.clone(),
            sig,
            block: Box::new(syn::parse_quote!({ #call })),
        };
        out.extend(expand_one(&item, args)?);
    }
    Ok(out)
}

/// The names of a generic kernel's type and const parameters, in order; lifetimes are
/// left to inference.
fn generic_params(func: &ItemFn) -> Result<Vec<syn::Ident>> {
    Ok(func
        .sig
        .generics
        .params
        .iter()
        .filter_map(|p| match p {
            syn::GenericParam::Type(t) => Some(t.ident.clone()),
            syn::GenericParam::Const(c) => Some(c.ident.clone()),
            syn::GenericParam::Lifetime(_) => None,
        })
        .collect())
}

/// Replaces a generic kernel's parameters by one instance's arguments in a parameter
/// type: `T` in type position, `N` in array lengths and in generic arguments.
struct Substitute {
    map: Vec<(syn::Ident, syn::GenericArgument)>,
}

impl Substitute {
    fn lookup(&self, path: &syn::Path) -> Option<&syn::GenericArgument> {
        let ident = path.get_ident()?;
        self.map.iter().find(|(p, _)| p == ident).map(|(_, a)| a)
    }
}

impl syn::visit_mut::VisitMut for Substitute {
    fn visit_generic_argument_mut(&mut self, arg: &mut syn::GenericArgument) {
        if let syn::GenericArgument::Type(syn::Type::Path(tp)) = arg {
            if tp.qself.is_none() {
                if let Some(found) = self.lookup(&tp.path) {
                    *arg = found.clone();
                    return;
                }
            }
        }
        syn::visit_mut::visit_generic_argument_mut(self, arg);
    }

    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        if let syn::Type::Path(tp) = ty {
            if tp.qself.is_none() {
                if let Some(syn::GenericArgument::Type(found)) = self.lookup(&tp.path) {
                    *ty = found.clone();
                    return;
                }
            }
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }

    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        if let syn::Expr::Path(ep) = e {
            if ep.qself.is_none() {
                match self.lookup(&ep.path) {
                    Some(syn::GenericArgument::Const(c)) => {
                        *e = syn::parse_quote!({ #c });
                        return;
                    }
                    Some(syn::GenericArgument::Type(syn::Type::Path(tp))) => {
                        // A const argument written as a bare name (`<f32, BLOCK>`).
                        let path = &tp.path;
                        *e = syn::parse_quote!({ #path });
                        return;
                    }
                    _ => {}
                }
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }
}

/// One kernel entry: the shim (nvptx64) or plain function (host), and its records.
fn expand_one(func: &ItemFn, args: &Args) -> Result<TokenStream> {
    let (cluster, bounds) = (args.cluster, args.bounds);
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = func;
    let name = &sig.ident;
    let unsafety = &sig.unsafety;
    let inputs = &sig.inputs;
    let mut types = Vec::new();
    for input in inputs {
        match input {
            FnArg::Typed(pat_type) => types.push(&*pat_type.ty),
            FnArg::Receiver(r) => {
                return Err(Error::new(r.span(), "a kernel cannot take `self`"));
            }
        }
    }

    // Each parameter's ABI descriptor, spanned at its type so a missing
    // `KernelParam` impl points at the offending parameter.
    let descs = types
        .iter()
        .map(|ty| quote_spanned!(ty.span()=> <#ty as ::device_std::KernelParam>::ABI));
    let params_const = format_ident!("__KERNEL_PARAMS_{}", name);
    let record_const = format_ident!("__KERNEL_ABI_{}", name);
    let record_static = format_ident!("__kernel_abi_{}", name);
    let record_doc =
        format!("The ABI record of kernel `{name}`, as `device_std::abi` describes it.");
    let cluster_items = cluster.map(|words| {
        kernel_static(
            name,
            "CLUSTER",
            &words,
            "The kernel's cluster shape `(x, y, z)`, in CTAs.",
            "The kernel's cluster shape: ptx-linker turns it into `.explicitcluster` and \
             `.reqnctapercluster` on the entry.",
        )
    });
    let bounds_items = bounds.map(|words| {
        kernel_static(
            name,
            "BOUNDS",
            &words,
            "The kernel's launch bounds `[max_threads, min_blocks]`: most threads per block, \
             fewest CTAs per SM (0: not given).",
            "The kernel's launch bounds: ptx-linker turns them into `.maxntid` and \
             `.minnctapersm` on the entry.",
        )
    });
    // On the host, a bounded kernel first checks the block it runs in (under the
    // emulator: a block larger than `max_threads` fails the launch, as the driver
    // refuses it on the GPU; otherwise nothing).
    let host_check = bounds.map(|[n, _]| {
        let kernel = name.to_string();
        quote! { ::device_std::__private::check_max_threads(#kernel, #n); }
    });
    let dynamic_items = args.dynamic_shared.map(|words| {
        kernel_static(
            name,
            "DYNAMIC_SHARED",
            &words,
            "The kernel's dynamic shared memory, `[bytes, bytes per thread]`: a block of `t` \
             threads needs `bytes + bytes_per_thread × t`.",
            "The kernel's dynamic shared memory, read by `host_loader` from the PTX to fill in \
             or check each launch's size.",
        )
    });
    let dims_items = args.dims.map(|dims| {
        kernel_static(
            name,
            "DIMS",
            &[dims],
            "The dimensions of the kernel's grid and blocks (`#[kernel(dims = N)]`): the \
             extents past the first `N` are 1 in every launch.",
            "The kernel's launch dimensions: ptx-linker folds the special registers of the \
             other dimensions to constants in the entry, `host_loader` refuses any launch \
             with an extent past them other than 1.",
        )
    });
    let dims_check = args.dims.map(|dims| {
        let kernel = name.to_string();
        quote! { ::device_std::__private::check_launch_dims(#kernel, #dims); }
    });
    // `slice_align`: the record, the assumption on nvptx64, the emulator's check.
    let align_items = args.slice_align.map(|n| {
        kernel_static(
            name,
            "SLICE_ALIGN",
            &[n],
            "The bytes every slice parameter of the kernel starts at a multiple of \
             (`#[kernel(slice_align = N)]`).",
            "The kernel's slice alignment: `host_loader` refuses a launch whose slice \
             argument starts elsewhere.",
        )
    });
    // Every slice parameter's start is assumed non-null (and `slice_align`-aligned) on
    // nvptx64. Needs plain parameter names: required with `slice_align`, otherwise a
    // kernel with a pattern parameter goes without the assumption.
    let param_names = match args.slice_align {
        Some(_) => param_idents(inputs)?,
        None => param_idents(inputs).unwrap_or_default(),
    };
    let align = args.slice_align.unwrap_or(1) as usize;
    let param_assume = quote! {
        // SAFETY: the ABI passes no slice at a null address; host_loader and the emulator
        // refuse launches whose slices start off `#[kernel(slice_align)]`.
        #[allow(unused_unsafe)]
        unsafe { #(::device_std::__private::assume_slice_param(&#param_names, #align);)* }
    };
    let align_check = args.slice_align.map(|n| {
        let kernel = name.to_string();
        let n = n as usize;
        let index = 0..param_names.len();
        let names = param_names.iter().map(|p| p.to_string());
        quote! {
            #(::device_std::__private::check_slice_align(#kernel, #index, #names, &#param_names, #n);)*
        }
    });
    let dynamic_check = args.dynamic_shared.map(|[n, m]| {
        let kernel = name.to_string();
        quote! { ::device_std::__private::check_dynamic_shared(#kernel, #n, #m); }
    });

    Ok(quote! {
        #(#attrs)*
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        #[allow(improper_ctypes_definitions)]
        #vis #unsafety extern "ptx-kernel" fn #name(#inputs) {
            #param_assume
            #block
        }

        #(#attrs)*
        #[cfg(not(target_arch = "nvptx64"))]
        #[allow(dead_code)]
        #vis #unsafety fn #name(#inputs) {
            #host_check
            #dims_check
            #dynamic_check
            #align_check
            #block
        }

        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        pub const #params_const: &[::device_std::abi::ParamAbi] = &[#(#descs),*];

        #[doc = #record_doc]
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        pub const #record_const: [u32; ::device_std::abi::record_words(#params_const)] =
            ::device_std::abi::record(#params_const);

        #[doc = #record_doc]
        #[doc(hidden)]
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        #[used]
        #[allow(non_upper_case_globals)]
        pub static #record_static: [u32; ::device_std::abi::record_words(#params_const)] =
            #record_const;

        #cluster_items

        #bounds_items

        #dynamic_items

        #dims_items

        #align_items
    })
}

/// Each parameter's name, for the per-parameter code (the entry's slice assumptions,
/// `slice_align`'s host check): the parameters are plain (possibly `mut`) identifiers.
fn param_idents(
    inputs: &syn::punctuated::Punctuated<FnArg, syn::Token![,]>,
) -> Result<Vec<syn::Ident>> {
    inputs
        .iter()
        .map(|input| match input {
            FnArg::Typed(pt) => match &*pt.pat {
                syn::Pat::Ident(p) if p.subpat.is_none() && p.by_ref.is_none() => {
                    Ok(p.ident.clone())
                }
                other => Err(Error::new(
                    other.span(),
                    "with `slice_align`, each kernel parameter is a plain name (`x: &[f32]`, \
                     `mut out: DisjointSlice<f32>`), not a pattern: the check refers to it",
                )),
            },
            FnArg::Receiver(r) => Err(Error::new(r.span(), "a kernel cannot take `self`")),
        })
        .collect()
}

/// One of the words a kernel attribute stands for, twice: `pub const
/// __KERNEL_<WHAT>_<name>: [u32; N]` for the host (tests, the emulator) and, on nvptx64,
/// the `#[no_mangle] #[used] static __kernel_<what>_<name>` ptx-linker and host-loader
/// read from the PTX.
fn kernel_static(
    name: &syn::Ident,
    what: &str,
    words: &[u32],
    const_doc: &str,
    static_doc: &str,
) -> TokenStream {
    let konst = format_ident!("__KERNEL_{}_{}", what, name);
    let stat = format_ident!("__kernel_{}_{}", what.to_lowercase(), name);
    let len = words.len();
    quote! {
        #[doc = #const_doc]
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        pub const #konst: [u32; #len] = [#(#words),*];

        #[doc = #static_doc]
        #[doc(hidden)]
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        #[used]
        #[allow(non_upper_case_globals)]
        pub static #stat: [u32; #len] = #konst;
    }
}

/// The arguments of `#[kernel(...)]`, each optional, in any order.
struct Args {
    /// `cluster = (x, y, z)`: CTAs per cluster, each extent in 1..=8, at most 8 CTAs (the
    /// portable cluster size).
    cluster: Option<[u32; 3]>,
    /// `max_threads = N` (1..=1024) and `min_blocks = M` (at least 1; 0 when not given):
    /// CUDA's `__launch_bounds__(N, M)`.
    bounds: Option<[u32; 2]>,
    /// `instances(NAME = <ARGS>, ...)`: the entries a generic kernel emits, each the
    /// function with those generic arguments.
    instances: Vec<Instance>,
    /// `dynamic_shared = N` and `dynamic_shared_per_thread = M`: the kernel's dynamic
    /// shared memory, `N + M × threads per block` bytes (each 0 when not given).
    dynamic_shared: Option<[u32; 2]>,
    /// `dims = N` (1 or 2): every launch's grid and blocks have extent 1 past their
    /// first `N` dimensions.
    dims: Option<u32>,
    /// `slice_align = N` (a power of two, 2 to 256): every slice parameter starts at a
    /// multiple of `N` bytes.
    slice_align: Option<u32>,
}

/// The most dynamic shared memory one block can have on any target, in bytes (sm_90's
/// 227 KiB).
const MAX_DYNAMIC_SHARED_BYTES: u64 = 227 * 1024;

/// `NAME = <ARGS>` in `instances(...)`.
struct Instance {
    name: syn::Ident,
    args: syn::AngleBracketedGenericArguments,
}

impl syn::parse::Parse for Instance {
    fn parse(input: syn::parse::ParseStream) -> Result<Self> {
        let name = input.parse()?;
        input.parse::<syn::Token![=]>()?;
        Ok(Instance {
            name,
            args: input.parse()?,
        })
    }
}

const USAGE: &str = "expected `#[kernel]`, or `#[kernel(...)]` with any of `cluster = (x, y, z)`, \
                     `max_threads = N`, `min_blocks = M`, `dynamic_shared = BYTES`, \
                     `dynamic_shared_per_thread = BYTES`, `dims = 1` or `dims = 2`, \
                     `slice_align = BYTES`, `instances(NAME = <ARGS>, ...)`";

/// Parses and checks the attribute's arguments: `cluster = (x, y, z)`,
/// `max_threads = N`, `min_blocks = M`, `instances(...)`, comma-separated, each at most
/// once.
fn parse_args(attr: TokenStream) -> Result<Args> {
    let mut args = Args {
        cluster: None,
        bounds: None,
        instances: Vec::new(),
        dynamic_shared: None,
        dims: None,
        slice_align: None,
    };
    if attr.is_empty() {
        return Ok(args);
    }
    let list = syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated
        .parse2(attr.clone())
        .map_err(|_| Error::new(attr.span(), USAGE))?;
    let mut max_threads = None;
    let mut min_blocks = None;
    let mut seen_instances = false;
    let mut shared_fixed: Option<u32> = None;
    let mut shared_per_thread: Option<u32> = None;
    let mut dims_span = None;
    for meta in &list {
        let key = meta
            .path()
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        let seen = match key.as_str() {
            "cluster" => args.cluster.is_some(),
            "max_threads" => max_threads.is_some(),
            "min_blocks" => min_blocks.is_some(),
            "instances" => seen_instances,
            "dynamic_shared" => shared_fixed.is_some(),
            "dynamic_shared_per_thread" => shared_per_thread.is_some(),
            "dims" => args.dims.is_some(),
            "slice_align" => args.slice_align.is_some(),
            _ => return Err(Error::new(meta.path().span(), USAGE)),
        };
        if seen {
            return Err(Error::new(
                meta.path().span(),
                format!("`{key}` is given more than once"),
            ));
        }
        if key == "instances" {
            let syn::Meta::List(l) = meta else {
                return Err(Error::new(meta.span(), USAGE));
            };
            let parsed = l.parse_args_with(
                syn::punctuated::Punctuated::<Instance, syn::Token![,]>::parse_terminated,
            )?;
            if parsed.is_empty() {
                return Err(Error::new(
                    l.span(),
                    "`instances(...)` names at least one instance: `NAME = <ARGS>`",
                ));
            }
            args.instances = parsed.into_iter().collect();
            seen_instances = true;
            continue;
        }
        let syn::Meta::NameValue(arg) = meta else {
            return Err(Error::new(meta.span(), USAGE));
        };
        match key.as_str() {
            "cluster" => args.cluster = Some(cluster_shape(&arg.value)?),
            "dims" => {
                let what = "`dims` is 1 or 2: the grid and blocks are one-dimensional \
                            (y = z = 1) or two-dimensional (z = 1)";
                let n = int_literal(&arg.value, what)?;
                if !(1..=2).contains(&n) {
                    return Err(Error::new(arg.value.span(), what));
                }
                args.dims = Some(n);
                dims_span = Some(arg.value.span());
            }
            "slice_align" => {
                let what = "`slice_align` is a power of two from 2 to 256: the bytes every \
                            slice parameter's start is a multiple of";
                let n = int_literal(&arg.value, what)?;
                if !(2..=256).contains(&n) || !n.is_power_of_two() {
                    return Err(Error::new(arg.value.span(), what));
                }
                args.slice_align = Some(n);
            }
            "dynamic_shared" => {
                shared_fixed = Some(int_literal(
                    &arg.value,
                    "`dynamic_shared` is an integer literal: bytes per block",
                )?);
            }
            "dynamic_shared_per_thread" => {
                shared_per_thread = Some(int_literal(
                    &arg.value,
                    "`dynamic_shared_per_thread` is an integer literal: bytes per thread of the block",
                )?);
            }
            "max_threads" => {
                let n = int_literal(&arg.value, "`max_threads` is an integer literal")?;
                if !(1..=1024).contains(&n) {
                    return Err(Error::new(
                        arg.value.span(),
                        "`max_threads` is 1 to 1024: threads per block (`.maxntid`)",
                    ));
                }
                max_threads = Some(n);
            }
            _ => {
                let m = int_literal(&arg.value, "`min_blocks` is an integer literal")?;
                if m == 0 {
                    return Err(Error::new(
                        arg.value.span(),
                        "`min_blocks` is at least 1: CTAs per SM (`.minnctapersm`); leave it out for no minimum",
                    ));
                }
                min_blocks = Some((arg.path.span(), m));
            }
        }
    }
    args.bounds = match (max_threads, min_blocks) {
        (Some(n), m) => Some([n, m.map_or(0, |(_, m)| m)]),
        (None, Some((span, _))) => {
            return Err(Error::new(
                span,
                "`min_blocks` needs `max_threads` (as CUDA's `__launch_bounds__`): \
                 `.minnctapersm` takes effect only with `.maxntid`",
            ))
        }
        (None, None) => None,
    };
    // A cluster spans blocks along its extents: one above 1 past the declared dimensions
    // needs a grid extent there other than 1, which `dims` forbids, so no launch could run.
    if let (Some(dims), Some(shape), Some(span)) = (args.dims, args.cluster, dims_span) {
        let mut past = shape.iter().zip(["x", "y", "z"]).skip(dims as usize);
        if let Some((&extent, axis)) = past.find(|(&e, _)| e > 1) {
            let (kind, ones) = if dims == 1 {
                ("one-dimensional", "y = z = 1")
            } else {
                ("two-dimensional", "z = 1")
            };
            let [x, y, z] = shape;
            return Err(Error::new(
                span,
                format!(
                    "the cluster shape ({x}, {y}, {z}) needs a grid extent of at least {extent} \
                     in {axis}, but `dims = {dims}` declares every launch {kind} ({ones}), so no \
                     launch could run: keep the cluster's extents within the declared \
                     dimensions, or raise `dims`"
                ),
            ));
        }
    }
    if shared_fixed.is_some() || shared_per_thread.is_some() {
        let (n, m) = (shared_fixed.unwrap_or(0), shared_per_thread.unwrap_or(0));
        let threads = args.bounds.map_or(1, |[t, _]| t) as u64;
        let most = n as u64 + m as u64 * threads;
        if most > MAX_DYNAMIC_SHARED_BYTES {
            return Err(Error::new(
                attr.span(),
                format!(
                    "the dynamic shared memory declared, {n} + {m} × threads bytes, is {most} bytes \
                     for a block of {threads} thread(s), more than any GPU gives a block \
                     ({MAX_DYNAMIC_SHARED_BYTES} bytes)"
                ),
            ));
        }
        args.dynamic_shared = Some([n, m]);
    }
    Ok(args)
}

/// A `u32` integer literal, or an error at `e` saying `what`.
fn int_literal(e: &syn::Expr, what: &str) -> Result<u32> {
    let syn::Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Int(n),
        ..
    }) = e
    else {
        return Err(Error::new(e.span(), what));
    };
    n.base10_parse()
}

/// `(x, y, z)`, checked: each extent in 1..=8, at most 8 CTAs (the portable cluster
/// size).
fn cluster_shape(value: &syn::Expr) -> Result<[u32; 3]> {
    let syn::Expr::Tuple(t) = value else {
        return Err(Error::new(value.span(), USAGE));
    };
    let mut shape = [0u32; 3];
    if t.elems.len() != 3 {
        return Err(Error::new(
            t.span(),
            "a cluster shape has three extents: `(x, y, z)`",
        ));
    }
    for (i, e) in t.elems.iter().enumerate() {
        let v = int_literal(e, "a cluster extent is an integer literal")?;
        if !(1..=8).contains(&v) {
            return Err(Error::new(e.span(), "a cluster extent is 1 to 8"));
        }
        shape[i] = v;
    }
    if shape.iter().product::<u32>() > 8 {
        return Err(Error::new(
            t.span(),
            "a cluster has at most 8 CTAs (the portable cluster size)",
        ));
    }
    Ok(shape)
}

fn check_shape(func: &ItemFn, has_instances: bool) -> Result<()> {
    let sig = &func.sig;
    let fail = |span: Span, msg: &str| Err(Error::new(span, msg));
    let generic = sig
        .generics
        .params
        .iter()
        .any(|p| !matches!(p, syn::GenericParam::Lifetime(_)));
    if generic && !has_instances {
        return fail(
            sig.generics.span(),
            "a generic kernel names the entries to emit, each a PTX entry with one concrete \
             signature: `#[kernel(instances(NAME = <ARGS>, ...))]`, \
             e.g. `instances(scale_f32 = <f32, 256>)`",
        );
    }
    if !generic && has_instances {
        return fail(
            sig.ident.span(),
            "`instances(...)` is for a generic kernel; this one has no type or const parameters",
        );
    }
    if !has_instances && sig.generics.where_clause.is_some() {
        return fail(
            sig.generics.span(),
            "a kernel cannot have a `where` clause: the PTX entry needs one concrete signature",
        );
    }
    if let Some(t) = &sig.asyncness {
        return fail(t.span(), "a kernel cannot be `async`");
    }
    if let Some(t) = &sig.constness {
        return fail(t.span(), "a kernel cannot be `const`");
    }
    if let Some(abi) = &sig.abi {
        return fail(
            abi.span(),
            "#[kernel] writes the `extern \"ptx-kernel\"` ABI itself; remove this `extern`",
        );
    }
    if let Some(v) = &sig.variadic {
        return fail(v.span(), "a kernel cannot be variadic");
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        let unit = matches!(&**ty, syn::Type::Tuple(t) if t.elems.is_empty());
        if !unit {
            return fail(
                ty.span(),
                "a kernel returns nothing: write results through a `DisjointSlice` (a value \
                 returned from a kernel, a `ThreadIndex` included, would have nowhere to go)",
            );
        }
    }
    Ok(())
}
