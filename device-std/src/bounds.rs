//! Index checks that say what went wrong: the index, the length, and the caller's own
//! line (`#[track_caller]` through the accessors), on the GPU and under the emulator.
//!
//! On the GPU the report goes through `vprintf` before `trap`, whatever the panic
//! strategy (the default `-Cpanic=immediate-abort` would trap without a word):
//! `SharedArray index 300 out of bounds for length 256 at src/lib.rs:41:17`. The launch
//! then fails with `CUDA_ERROR_LAUNCH_FAILED`. On the host (and under the emulator) it
//! is a panic with the same words at the caller's location.

/// Reports `index >= len` on the array kind `what` and stops (see the module docs).
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn out_of_bounds(what: &'static core::ffi::CStr, index: usize, len: usize) -> ! {
    #[cfg(target_arch = "nvptx64")]
    {
        use crate::print::{c_string, vprintf, ArgBuffer, PrintArg};
        let at = core::panic::Location::caller();
        let mut file = [0u8; 160];
        let mut args = ArgBuffer::new();
        what.push_to(&mut args);
        index.push_to(&mut args);
        len.push_to(&mut args);
        c_string(at.file(), &mut file).push_to(&mut args);
        at.line().push_to(&mut args);
        at.column().push_to(&mut args);
        vprintf(
            "%s index %llu out of bounds for length %llu at %s:%u:%u\n\0",
            &args,
        );
        // SAFETY: `trap` has no preconditions; it aborts the launch.
        unsafe { core::arch::nvptx::trap() }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    panic!(
        "{} index {index} out of bounds for length {len}",
        what.to_str().unwrap_or("array")
    )
}
