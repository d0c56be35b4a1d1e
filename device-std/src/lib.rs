//! `device-std`: a `#![no_std]` device runtime for the stock
//! `nvptx64-nvidia-cuda` target.
//!
//! | module | what it gives | follows |
//! |---|---|---|
//! | [`thread`] | special registers (`%tid`, `%ctaid`, `%ntid`, `%nctaid`, `%laneid`), barriers, global indices | PTX ISA 9.0 §10 "Special Registers", §9.7.13.1 `bar.sync` |
//! | [`index`] | [`ThreadIndex`], an unforgeable witness of the calling thread's index | — |
//! | [`disjoint`] | [`DisjointSlice`], an output slice each thread writes only at its own index | — |
//! | [`shared`] | [`SharedArray`], one static `.shared` allocation per declaration | PTX ISA 9.0 §5.1.5 "Shared State Space" |
//!
//! Kernels are `extern "ptx-kernel"` functions with `#[no_mangle]`. Build them
//! with `cargo xtask build-ptx`, which compiles, links and validates the PTX.
//!
//! **The crate has no allocator**, and on the host (any target other than
//! `nvptx64`) it compiles to types only, so a workspace that contains device
//! crates still builds and tests on stable.
//!
//! Panics: `cargo xtask build-ptx` builds with `-Cpanic=immediate-abort` by
//! default, so a failed bounds check becomes `trap;` in place. The
//! `#[panic_handler]` here traps as well, for builds that use unwinding panics.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(stdarch_nvptx, asm_experimental_arch))]
#![deny(missing_docs)]

pub mod disjoint;
pub mod index;
pub mod shared;
#[cfg(target_arch = "nvptx64")]
pub mod thread;

#[cfg(target_arch = "nvptx64")]
mod panic;

pub use disjoint::DisjointSlice;
pub use index::{BlockIndex1D, Index1D, IndexSpace, ThreadIndex};
pub use shared::SharedArray;
