//! Byte classification 16 bytes at a time, with SSE2 (part of every x86-64
//! target, so no run-time detection): a mask of the bytes that matter, found
//! with one `trailing_zeros` instead of a branch per byte. Other targets use
//! the scalar loops of the callers.
//!
//! Signed byte compares: bytes >= 0x80 are negative, below every bound used.

pub(crate) use imp::*;

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod imp {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_cmplt_epi8,
        _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    /// 0xff in each byte of `v` that is blank (`lex::is_blank`: a space, SUB,
    /// `\t` ..= `\r` but the vertical tab), 0 in the others.
    ///
    /// # Safety
    ///
    /// None beyond SSE2, which this module's targets have.
    #[inline(always)]
    unsafe fn blanks(v: __m128i) -> __m128i {
        let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
        let tab_to_cr = _mm_and_si128(
            _mm_cmpgt_epi8(v, _mm_set1_epi8(b'\t' as i8 - 1)),
            _mm_cmplt_epi8(v, _mm_set1_epi8(b'\r' as i8 + 1)),
        );
        _mm_or_si128(
            _mm_or_si128(eq(b' '), eq(0x1a)),
            _mm_andnot_si128(eq(0x0b), tab_to_cr),
        )
    }

    /// Bit `j` set when `bytes[at + j]` is not a blank (`lex::is_blank`: a
    /// space, SUB, `\t` ..= `\r` but the vertical tab), for `j` in 0..16;
    /// `None` when fewer than 16 bytes are left.
    #[inline]
    pub(crate) fn non_blank(bytes: &[u8], at: usize) -> Option<u32> {
        let here = bytes.get(at..at + 16)?;
        // SAFETY: as in `non_ident`.
        unsafe {
            let v = _mm_loadu_si128(here.as_ptr().cast::<__m128i>());
            Some(!(_mm_movemask_epi8(blanks(v)) as u32) & 0xffff)
        }
    }

    /// Bit `j` set when `bytes[at + j]` cannot continue an identifier (not
    /// a letter, digit, `_` or `$`), for `j` in 0..16; `None` when fewer
    /// than 16 bytes are left.
    #[inline]
    pub(crate) fn non_ident(bytes: &[u8], at: usize) -> Option<u32> {
        let here = bytes.get(at..at + 16)?;
        // SAFETY: SSE2 is enabled (this module exists only with
        // `target_feature = "sse2"`), and the load reads 16 bytes from a slice
        // of 16 bytes (`get` checked the range; no alignment needed).
        unsafe {
            let v = _mm_loadu_si128(here.as_ptr().cast::<__m128i>());
            let within = |x: __m128i, lo: u8, hi: u8| {
                _mm_and_si128(
                    _mm_cmpgt_epi8(x, _mm_set1_epi8(lo as i8 - 1)),
                    _mm_cmplt_epi8(x, _mm_set1_epi8(hi as i8 + 1)),
                )
            };
            let eq = |x: __m128i, c: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(c as i8));
            let ident = _mm_or_si128(
                _mm_or_si128(
                    within(_mm_or_si128(v, _mm_set1_epi8(0x20)), b'a', b'z'),
                    within(v, b'0', b'9'),
                ),
                _mm_or_si128(eq(v, b'_'), eq(v, b'$')),
            );
            Some(!(_mm_movemask_epi8(ident) as u32) & 0xffff)
        }
    }

    /// Bit `j` set when the body scan's fast operand pass stops at
    /// `bytes[at + j]` (`crate::body::operands::stops_at`), for `j` in
    /// 0..16. Needs `0 < at` and `at + 16 <= bytes.len()` (checked).
    #[inline]
    pub(crate) fn operand_stops(bytes: &[u8], at: usize) -> u32 {
        let (Some(here), Some(before)) = (bytes.get(at..at + 16), bytes.get(at - 1..at + 15))
        else {
            return 0;
        };
        // SAFETY: SSE2 is enabled (this module exists only with
        // `target_feature = "sse2"`, part of every x86-64 target), and both
        // loads read 16 bytes from slices of 16 bytes (`get` checked the
        // ranges; `_mm_loadu_si128` needs no alignment).
        unsafe {
            let v = _mm_loadu_si128(here.as_ptr().cast::<__m128i>());
            let p = _mm_loadu_si128(before.as_ptr().cast::<__m128i>());
            let eq = |x: __m128i, c: u8| _mm_cmpeq_epi8(x, _mm_set1_epi8(c as i8));
            // Signed compares: bytes >= 0x80 are negative, below every bound.
            let within = |x: __m128i, lo: u8, hi: u8| {
                _mm_and_si128(
                    _mm_cmpgt_epi8(x, _mm_set1_epi8(lo as i8 - 1)),
                    _mm_cmplt_epi8(x, _mm_set1_epi8(hi as i8 + 1)),
                )
            };
            let letter = |x: __m128i| {
                _mm_or_si128(
                    within(_mm_or_si128(x, _mm_set1_epi8(0x20)), b'a', b'z'),
                    _mm_or_si128(eq(x, b'_'), eq(x, b'$')),
                )
            };
            let mut stop = _mm_or_si128(
                _mm_or_si128(
                    _mm_or_si128(eq(v, b'{'), eq(v, b'}')),
                    _mm_or_si128(eq(v, b';'), eq(v, b':')),
                ),
                _mm_or_si128(
                    _mm_or_si128(eq(v, b'@'), eq(v, b'.')),
                    _mm_or_si128(eq(v, b'/'), eq(v, b'"')),
                ),
            );
            // Control bytes other than blanks, and 0x7f..=0xff (negative).
            let low = _mm_andnot_si128(blanks(v), _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
            stop = _mm_or_si128(stop, _mm_or_si128(low, eq(v, 0x7f)));
            let glue = _mm_or_si128(letter(p), _mm_or_si128(within(p, b'0', b'9'), eq(p, b'%')));
            stop = _mm_or_si128(stop, _mm_andnot_si128(glue, letter(v)));
            _mm_movemask_epi8(stop) as u32
        }
    }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
mod imp {
    /// No vector classification here: the callers' scalar loops do it all.
    #[inline]
    pub(crate) fn non_ident(_: &[u8], _: usize) -> Option<u32> {
        None
    }

    #[inline]
    pub(crate) fn non_blank(_: &[u8], _: usize) -> Option<u32> {
        None
    }
}
