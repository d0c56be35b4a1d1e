//! `use device_std::prelude::*;` brings std's float methods into a `#![no_std]`
//! kernel crate: `x.sqrt()`, `x.sin()`, `x.powf(y)`, `x.ln_1p()` on `f32` and `f64`
//! ([`FloatMath`]).
//!
//! In a host build of the same crate (its tests, the emulator, `cargo clippy`) `std` is
//! in the crate graph and its inherent `f32::sin` & co. win over the trait, so rustc
//! calls the import unused there; keep it quiet for that build only:
//!
//! ```ignore
//! #[cfg_attr(not(target_arch = "nvptx64"), allow(unused_imports))]
//! use device_std::prelude::*;
//! ```
//!
//! The same rule means the emulator runs std's versions of methods called this way;
//! [`math`](crate::math) says how to get the GPU's bits there.

pub use crate::math::FloatMath;
