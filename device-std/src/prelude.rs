//! `use device_std::prelude::*;` brings std's float methods into a `#![no_std]`
//! kernel crate: `x.sqrt()`, `x.sin()`, `x.powf(y)`, `x.ln_1p()` on `f32` and `f64`
//! ([`FloatMath`]).

pub use crate::math::FloatMath;
