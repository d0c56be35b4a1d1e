//! Procedural macros of `device-std`; use them through `device_std::kernel` and
//! `device_std::KernelStruct`, whose docs describe what they generate.
//!
//! | macro | module |
//! |---|---|
//! | `#[kernel]` | `kernel`: the `extern "ptx-kernel"` shim and the ABI record |
//! | `#[derive(KernelStruct)]` | `kernel_struct`: checked layout of a `#[repr(C)]` struct |
#![deny(missing_docs)]

use proc_macro::TokenStream;

mod kernel;
mod kernel_struct;

/// Turns a plain Rust function into a PTX kernel; see `device_std::kernel`.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    kernel::expand(attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Implements `device_std::KernelStruct` for a `#[repr(C)]` plain-data struct;
/// see `device_std::KernelStruct`.
#[proc_macro_derive(KernelStruct)]
pub fn derive_kernel_struct(item: TokenStream) -> TokenStream {
    kernel_struct::expand(item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
