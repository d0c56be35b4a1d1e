//! Software prefetch: the phases after parsing visit names, items and text
//! that parsing left long ago, scattered over the inputs (often one page
//! each), so each visit would wait for memory. Asking for the next ones
//! early overlaps those waits.

/// Asks the CPU to bring the cache line at `p` in; no effect but on the
/// caches, whatever the address (x86-64 only; nothing elsewhere).
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of every x86-64 target, and a prefetch of any
    // address (even an invalid one) does not fault.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
