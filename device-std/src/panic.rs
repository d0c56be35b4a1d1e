//! The device panic handler: stop the kernel with `trap`.

/// Aborts the kernel. The launch then fails with `CUDA_ERROR_LAUNCH_FAILED`
/// (PTX ISA 9.0 §9.7.19.5 `trap`).
#[cfg(not(test))]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo<'_>) -> ! {
    // SAFETY: `trap` has no preconditions; it aborts the launch.
    unsafe { core::arch::nvptx::trap() }
}
