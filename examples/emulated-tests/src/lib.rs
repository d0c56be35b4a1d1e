//! Every example kernel under device-std's CPU emulator, next to a CPU
//! reference, for the tests in `tests/` and for `emulator-compare`, which
//! runs the same inputs on a GPU and compares bit for bit.
//!
//! | module | what |
//! |---|---|
//! | [`emulate`] | one function per example kernel: runs it under `device_std::emulator` with the launch its host program uses, outputs poisoned first |
//! | [`reference`](mod@reference) | the CPU references (the host programs' formulas, and `mathlib`/`struct_params` functions themselves) |
//! | [`inputs`] | seeded random inputs shaped like the host programs' |

pub mod emulate;
pub mod inputs;
pub mod reference;
