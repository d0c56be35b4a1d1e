//! `#[derive(KernelStruct)]`: a `#[repr(C)]`, non-generic struct whose
//! fields are all `device_std::PlainData` gets `KernelStruct`, `PlainData`,
//! `HasValueClass` (opaque) and `KernelParam`, with its layout read from
//! `core::mem::offset_of!` and each field's class from its `HasValueClass`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Fields, Index, Member, Result};

/// Expands the derive.
///
/// Errors: an enum or a union; generic parameters; no `#[repr(C)]`; a struct
/// without fields.
pub fn expand(item: TokenStream) -> Result<TokenStream> {
    let input: DeriveInput = syn::parse2(item)?;
    let name = &input.ident;
    let data = match &input.data {
        Data::Struct(s) => s,
        Data::Enum(e) => {
            return Err(Error::new(
                e.enum_token.span(),
                "KernelStruct needs a struct: an enum has no layout the host can mirror",
            ))
        }
        Data::Union(u) => {
            return Err(Error::new(
                u.union_token.span(),
                "KernelStruct needs a struct: a union's active field is unknown to the host",
            ))
        }
    };
    if !input.generics.params.is_empty() {
        return Err(Error::new(
            input.generics.span(),
            "KernelStruct cannot be derived for a generic struct: the layout record needs one concrete layout",
        ));
    }
    if !has_repr_c(&input.attrs)? {
        return Err(Error::new(
            name.span(),
            format!(
                "KernelStruct needs `#[repr(C)]` on `{name}`: without it rustc may reorder the \
                 fields, and the host could not know where they are"
            ),
        ));
    }
    let fields: Vec<(Member, String, &syn::Type)> = match &data.fields {
        Fields::Named(named) => named
            .named
            .iter()
            .map(|f| {
                let ident = f.ident.clone().expect("named field");
                let text = ident.to_string();
                (Member::Named(ident), text, &f.ty)
            })
            .collect(),
        Fields::Unnamed(unnamed) => unnamed
            .unnamed
            .iter()
            .enumerate()
            .map(|(i, f)| (Member::Unnamed(Index::from(i)), i.to_string(), &f.ty))
            .collect(),
        Fields::Unit => Vec::new(),
    };
    if fields.is_empty() {
        return Err(Error::new(
            name.span(),
            "KernelStruct needs at least one field",
        ));
    }

    let checks = fields
        .iter()
        .map(|(_, _, ty)| quote_spanned!(ty.span()=> __device_std_plain_data::<#ty>();));
    let layouts = fields.iter().map(|(member, text, ty)| {
        quote! {
            ::device_std::FieldLayout {
                name: #text,
                offset: ::core::mem::offset_of!(#name, #member) as u32,
                size: ::core::mem::size_of::<#ty>() as u32,
                class: <#ty as ::device_std::HasValueClass>::VALUE_CLASS,
            }
        }
    });

    Ok(quote! {
        const _: () = {
            fn __device_std_plain_data<T: ::device_std::PlainData>() {}
            #[allow(dead_code)]
            fn __device_std_check_fields() {
                #(#checks)*
            }
        };

        // SAFETY: opaque: a nested struct is compared by size only.
        unsafe impl ::device_std::HasValueClass for #name {}

        // SAFETY: `#[repr(C)]` (checked by the derive), not generic, and every
        // field is `PlainData` (checked above), so every bit pattern of the
        // fields is valid and the layout is fixed by the C rules.
        unsafe impl ::device_std::PlainData for #name {}

        // SAFETY: as for `PlainData`; `LAYOUT` is read from the compiler
        // (`size_of`, `align_of`, `offset_of!`).
        unsafe impl ::device_std::KernelStruct for #name {
            const LAYOUT: ::device_std::StructLayout = ::device_std::StructLayout {
                size: ::core::mem::size_of::<#name>() as u32,
                align: ::core::mem::align_of::<#name>() as u32,
                fields: &[#(#layouts),*],
            };
        }

        // SAFETY: a `KernelStruct` passes by value as one aggregate of its
        // own size and alignment; `ParamAbi::structure` rejects alignments
        // rustc cannot pass.
        unsafe impl ::device_std::KernelParam for #name {
            const ABI: ::device_std::abi::ParamAbi =
                ::device_std::abi::ParamAbi::structure(
                    &<#name as ::device_std::KernelStruct>::LAYOUT,
                );
        }
    })
}

/// `true` when a `#[repr(...)]` attribute names `C`.
fn has_repr_c(attrs: &[syn::Attribute]) -> Result<bool> {
    let mut found = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("repr")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("C") {
                found = true;
            }
            // `align(N)`, `packed(N)`: skip the parenthesised argument.
            if meta.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in meta.input);
                let _: TokenStream = content.parse()?;
            }
            Ok(())
        })?;
    }
    Ok(found)
}
