//! What device functions do off the GPU. Three builds exist:
//!
//! | build | a device function |
//! |---|---|
//! | `nvptx64` | runs its PTX |
//! | host, feature `emulator` (`cfg(emulated)`) | runs its CPU model in [`emulator`](crate::emulator) |
//! | host, no feature | panics: the crate compiles there so device crates type-check on stable, but nothing can run |

/// Panics with a message naming the device-only function `what`.
///
/// Reached only when host code calls a device function without the
/// `emulator` feature (a kernel body called on the host, say), or one the
/// emulator has no model of; either is a programming error.
#[cfg(not(target_arch = "nvptx64"))]
#[cfg_attr(emulated, allow(dead_code))]
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn unavailable(what: &str) -> ! {
    if cfg!(emulated) {
        panic!("device_std::{what} has no CPU model in the emulator")
    }
    panic!(
        "device_std::{what} runs only on nvptx64 (a kernel body was called on the host; \
         enable device-std's `emulator` feature and use device_std::emulator::launch to run it there)"
    )
}

/// `on_device!("name", { device body })`: the body on nvptx64, a panic
/// naming the function on the host.
///
/// `on_device!("name", { device body }, emulated: { host body })`: the same,
/// with `host body` under `cfg(emulated)`.
macro_rules! on_device {
    ($what:literal, $body:block) => {{
        #[cfg(target_arch = "nvptx64")]
        let result = $body;
        #[cfg(not(target_arch = "nvptx64"))]
        #[allow(clippy::diverging_sub_expression)]
        let result = $crate::host::unavailable($what);
        #[allow(unreachable_code)]
        result
    }};
    ($what:literal, $body:block, emulated: $emu:block) => {{
        #[cfg(target_arch = "nvptx64")]
        let result = $body;
        #[cfg(emulated)]
        let result = $emu;
        #[cfg(not(any(target_arch = "nvptx64", emulated)))]
        #[allow(clippy::diverging_sub_expression)]
        let result = $crate::host::unavailable($what);
        #[allow(unreachable_code)]
        result
    }};
}
pub(crate) use on_device;
