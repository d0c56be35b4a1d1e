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
    if !attr.is_empty() {
        return Err(Error::new(attr.span(), "#[kernel] takes no arguments"));
    }
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
    })
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
