//! The device panic handler: print the message and location through
//! `vprintf` where possible, then stop the kernel with `trap`.
//!
//! It runs only in builds with `-Cpanic=abort` (`cargo xtask build-ptx
//! --panic abort`); the default `-Cpanic=immediate-abort` turns a panic into
//! `trap` in place, with no message.

use crate::print::{c_string, ArgBuffer};

/// Prints `panicked at FILE:LINE:COL: MESSAGE` (the message only when it is
/// a plain string literal: formatting needs `core::fmt`, which a kernel does
/// not carry), then aborts the launch, which fails with
/// `CUDA_ERROR_LAUNCH_FAILED` (PTX ISA 9.0 `trap`).
#[cfg(not(test))]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    let mut file = [0u8; 160];
    let mut message = [0u8; 160];
    let (path, line, col) = info
        .location()
        .map_or(("<unknown>", 0, 0), |l| (l.file(), l.line(), l.column()));
    let text = info.message().as_str().unwrap_or("(formatted message)");
    let mut args = ArgBuffer::new();
    crate::print::PrintArg::push_to(c_string(path, &mut file), &mut args);
    crate::print::PrintArg::push_to(line, &mut args);
    crate::print::PrintArg::push_to(col, &mut args);
    crate::print::PrintArg::push_to(c_string(text, &mut message), &mut args);
    crate::print::vprintf("panicked at %s:%u:%u: %s\n\0", &args);
    // SAFETY: `trap` has no preconditions; it aborts the launch.
    unsafe { core::arch::nvptx::trap() }
}
