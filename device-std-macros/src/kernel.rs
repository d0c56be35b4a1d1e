//! `#[kernel]`: checks a function's shape and parameter types, then writes
//! the `extern "ptx-kernel"` shim (nvptx64) or a plain function (host), and
//! the kernel's ABI record.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Error, FnArg, ItemFn, Result, ReturnType};

/// Expands `#[kernel] fn NAME(params) { body }`.
///
/// Errors: arguments to the attribute; a generic, `async`, `const`, variadic
/// or `extern` function; a method; a return type other than `()`.
pub fn expand(attr: TokenStream, item: TokenStream) -> Result<TokenStream> {
    let cluster = parse_args(attr)?;
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

    Ok(quote! {
        #(#attrs)*
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        #[allow(improper_ctypes_definitions)]
        #vis #unsafety extern "ptx-kernel" fn #name(#inputs) #block

        #(#attrs)*
        #[cfg(not(target_arch = "nvptx64"))]
        #[allow(dead_code, unused_mut, unused_variables, clippy::all)]
        #vis #unsafety fn #name(#inputs) #block

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
    })
}

/// `#[kernel]` or `#[kernel(cluster = (x, y, z))]`: the cluster shape, checked (each
/// extent in 1..=8, at most 8 CTAs: the portable cluster size).
fn parse_args(attr: TokenStream) -> Result<Option<[u32; 3]>> {
    if attr.is_empty() {
        return Ok(None);
    }
    let usage = "expected `#[kernel]` or `#[kernel(cluster = (x, y, z))]`";
    let arg: syn::MetaNameValue =
        syn::parse2(attr.clone()).map_err(|_| Error::new(attr.span(), usage))?;
    if !arg.path.is_ident("cluster") {
        return Err(Error::new(arg.path.span(), usage));
    }
    let syn::Expr::Tuple(t) = &arg.value else {
        return Err(Error::new(arg.value.span(), usage));
    };
    let mut shape = [0u32; 3];
    if t.elems.len() != 3 {
        return Err(Error::new(
            t.span(),
            "a cluster shape has three extents: `(x, y, z)`",
        ));
    }
    for (i, e) in t.elems.iter().enumerate() {
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) = e
        else {
            return Err(Error::new(
                e.span(),
                "a cluster extent is an integer literal",
            ));
        };
        let v: u32 = n.base10_parse()?;
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
    Ok(Some(shape))
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
