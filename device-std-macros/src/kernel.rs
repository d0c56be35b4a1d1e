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
    let Args { cluster, bounds } = parse_args(attr)?;
    let func: ItemFn = syn::parse2(item)?;
    check_shape(&func)?;

    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = &func;
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
    let cluster_items = cluster.map(|[x, y, z]| {
        let cluster_const = format_ident!("__KERNEL_CLUSTER_{}", name);
        let cluster_static = format_ident!("__kernel_cluster_{}", name);
        quote! {
            /// The kernel's cluster shape `(x, y, z)`, in CTAs.
            #[doc(hidden)]
            #[allow(non_upper_case_globals)]
            pub const #cluster_const: [u32; 3] = [#x, #y, #z];

            /// The kernel's cluster shape: ptx-linker turns it into
            /// `.explicitcluster` and `.reqnctapercluster` on the entry.
            #[doc(hidden)]
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(no_mangle)]
            #[used]
            #[allow(non_upper_case_globals)]
            pub static #cluster_static: [u32; 3] = #cluster_const;
        }
    });

    let bounds_items = bounds.map(|[n, m]| {
        let bounds_const = format_ident!("__KERNEL_BOUNDS_{}", name);
        let bounds_static = format_ident!("__kernel_bounds_{}", name);
        quote! {
            /// The kernel's launch bounds `[max_threads, min_blocks]`: most threads per
            /// block, fewest CTAs per SM (0: not given).
            #[doc(hidden)]
            #[allow(non_upper_case_globals)]
            pub const #bounds_const: [u32; 2] = [#n, #m];

            /// The kernel's launch bounds: ptx-linker turns them into `.maxntid` and
            /// `.minnctapersm` on the entry.
            #[doc(hidden)]
            #[cfg(target_arch = "nvptx64")]
            #[unsafe(no_mangle)]
            #[used]
            #[allow(non_upper_case_globals)]
            pub static #bounds_static: [u32; 2] = #bounds_const;
        }
    });
    // On the host, a bounded kernel first checks the block it runs in (under the
    // emulator: a block larger than `max_threads` fails the launch, as the driver
    // refuses it on the GPU; otherwise nothing).
    let host_check = bounds.map(|[n, _]| {
        let kernel = name.to_string();
        quote! { ::device_std::__private::check_max_threads(#kernel, #n); }
    });

    Ok(quote! {
        #(#attrs)*
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        #[allow(improper_ctypes_definitions)]
        #vis #unsafety extern "ptx-kernel" fn #name(#inputs) #block

        #(#attrs)*
        #[cfg(not(target_arch = "nvptx64"))]
        #[allow(dead_code)]
        #vis #unsafety fn #name(#inputs) {
            #host_check
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
    })
}

/// The arguments of `#[kernel(...)]`, each optional, in any order.
struct Args {
    /// `cluster = (x, y, z)`: CTAs per cluster, each extent in 1..=8, at most 8 CTAs (the
    /// portable cluster size).
    cluster: Option<[u32; 3]>,
    /// `max_threads = N` (1..=1024) and `min_blocks = M` (at least 1; 0 when not given):
    /// CUDA's `__launch_bounds__(N, M)`.
    bounds: Option<[u32; 2]>,
}

const USAGE: &str = "expected `#[kernel]`, or `#[kernel(...)]` with any of `cluster = (x, y, z)`, \
                     `max_threads = N`, `min_blocks = M`";

/// Parses and checks the attribute's arguments: `cluster = (x, y, z)`,
/// `max_threads = N`, `min_blocks = M`, comma-separated, each at most once.
fn parse_args(attr: TokenStream) -> Result<Args> {
    let mut args = Args {
        cluster: None,
        bounds: None,
    };
    if attr.is_empty() {
        return Ok(args);
    }
    let list = syn::punctuated::Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated
        .parse2(attr.clone())
        .map_err(|_| Error::new(attr.span(), USAGE))?;
    let mut max_threads = None;
    let mut min_blocks = None;
    for arg in &list {
        let key = arg
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        let seen = match key.as_str() {
            "cluster" => args.cluster.is_some(),
            "max_threads" => max_threads.is_some(),
            "min_blocks" => min_blocks.is_some(),
            _ => return Err(Error::new(arg.path.span(), USAGE)),
        };
        if seen {
            return Err(Error::new(
                arg.path.span(),
                format!("`{key}` is given more than once"),
            ));
        }
        match key.as_str() {
            "cluster" => args.cluster = Some(cluster_shape(&arg.value)?),
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

fn check_shape(func: &ItemFn) -> Result<()> {
    let sig = &func.sig;
    let fail = |span: Span, msg: &str| Err(Error::new(span, msg));
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return fail(
            sig.generics.span(),
            "a kernel cannot be generic: the PTX entry needs one concrete signature",
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
