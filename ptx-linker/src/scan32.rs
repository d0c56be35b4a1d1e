//! The body scan's operand classification 32 bytes at a time with AVX2,
//! chosen at run time (`is_x86_feature_detected!`): the SSE2 path of
//! [`crate::scan16`] and the scalar loop of `body::operands::first_stop` stay for
//! machines without it and for the last bytes of a text.
//!
//! Each byte's classes come from two pairs of 16-entry tables indexed by
//! its low and high nibble (`vpshufb`): a class bit is set when it is set in
//! both entries, so each bit stands for one rectangle of (high nibble, low
//! nibble) pairs and a class is a union of bits.

/// Bits of the "stop" tables: one rectangle of stop bytes each (see
/// `body::operands::OPERAND`): `" . /`, `: ;`, `@`, `{ }` and 0x7f, control bytes other
/// than blanks (`\t`..`\r` but the vertical tab), 0x10..=0x1f but SUB (a
/// blank), and 0x80..=0xff.
const STOP_LO: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut lo = 0;
    while lo < 16 {
        let mut bits = 1; // 0x80..=0xff: every low nibble
        if lo != 0xa {
            bits |= 64; // 0x10..=0x1f but SUB (0x1a), a blank
        }
        if lo <= 8 || lo == 0xb || lo >= 0xe {
            bits |= 2; // 0x00..=0x08, 0x0b (vertical tab), 0x0e, 0x0f
        }
        if lo == 2 || lo == 0xe || lo == 0xf {
            bits |= 4; // `"` `.` `/`
        }
        if lo == 0xa || lo == 0xb {
            bits |= 8; // `:` `;`
        }
        if lo == 0 {
            bits |= 16; // `@`
        }
        if lo == 0xb || lo == 0xd || lo == 0xf {
            bits |= 32; // `{` `}` 0x7f
        }
        t[lo] = bits;
        lo += 1;
    }
    t
};

/// The high-nibble half of [`STOP_LO`].
const STOP_HI: [u8; 16] = {
    let mut t = [0u8; 16];
    t[0] = 2;
    t[1] = 64;
    t[2] = 4;
    t[3] = 8;
    t[4] = 16;
    t[7] = 32;
    let mut hi = 8;
    while hi < 16 {
        t[hi] = 1;
        hi += 1;
    }
    t
};

/// Bits of the "name" tables: `A`..`O` `a`..`o`; `P`..`Z` `p`..`z`; `_`;
/// `$` (these four: [`LETTER`]); digits; `%` (these six: [`GLUE`]).
const NAME_LO: [u8; 16] = {
    let mut t = [0u8; 16];
    let mut lo = 0;
    while lo < 16 {
        let mut bits = 0;
        if lo >= 1 {
            bits |= 1;
        }
        if lo <= 0xa {
            bits |= 2;
        }
        if lo == 0xf {
            bits |= 4; // `_`
        }
        if lo == 4 {
            bits |= 8; // `$`
        }
        if lo <= 9 {
            bits |= 16; // digits
        }
        if lo == 5 {
            bits |= 32; // `%`
        }

        t[lo] = bits;
        lo += 1;
    }
    t
};

/// The high-nibble half of [`NAME_LO`].
const NAME_HI: [u8; 16] = {
    let mut t = [0u8; 16];
    t[2] = 8 | 32;
    t[3] = 16;
    t[4] = 1;
    t[5] = 2 | 4;
    t[6] = 1;
    t[7] = 2;
    t
};

/// A 16-byte table twice, for both 128-bit lanes of `vpshufb`.
const fn twice(t: [u8; 16]) -> [u8; 32] {
    let mut both = [0u8; 32];
    let mut i = 0;
    while i < 32 {
        both[i] = t[i % 16];
        i += 1;
    }
    both
}

static STOP_LO_2: [u8; 32] = twice(STOP_LO);
static STOP_HI_2: [u8; 32] = twice(STOP_HI);
static NAME_LO_2: [u8; 32] = twice(NAME_LO);
static NAME_HI_2: [u8; 32] = twice(NAME_HI);

/// The bits of [`NAME_LO`] that are glue (a letter after the byte
/// continues its token).
const GLUE: u8 = 63;

/// The bits of [`NAME_LO`] that make an identifier byte (all but `%`).
const IDENT: u8 = LETTER | 16;

/// The bits of [`NAME_LO`] that make a letter (`_` and `$` included).
const LETTER: u8 = 1 | 2 | 4 | 8;

/// What `first_stop` found.
pub(crate) enum Found {
    /// The index of the first stop byte.
    At(usize),
    /// No stop byte before this index, after which fewer than 32 bytes
    /// are left: the caller goes on from there.
    Before(usize),
}

/// What `operands` found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Operands {
    /// The statement's `;`, and whether a qualifier is `.f64`.
    Plain(usize, bool),
    /// The operands hold something the fast pass does not take.
    NotPlain,
    /// No stop in the first 32 bytes: the qualifiers (`.f64` or not)
    /// are passed, and `first_stop` goes on from this index.
    From(usize, bool),
    /// Not decided here (fewer than 32 bytes left, or 32 bytes of
    /// qualifiers): the caller's scalar pass decides.
    Unknown,
}

pub(crate) use imp::*;

#[cfg(target_arch = "x86_64")]
mod imp {
    use super::{Found, Operands, GLUE, IDENT, LETTER, NAME_HI_2, NAME_LO_2, STOP_HI_2, STOP_LO_2};
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8,
        _mm256_set1_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_srli_epi16,
    };

    #[cfg(test)]
    std::thread_local! {
        /// Tests set it to take the portable (SSE2) path on an AVX2 machine.
        pub(crate) static NO_AVX2: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Whether this machine has AVX2 (detected once, then cached by std).
    #[inline]
    pub(crate) fn available() -> bool {
        #[cfg(test)]
        if NO_AVX2.with(|c| c.get()) {
            return false;
        }
        std::is_x86_feature_detected!("avx2")
    }

    /// The first index from `at` (`0 < at`) where `body::operands::stops_at` holds,
    /// 32 bytes at a time, as long as 32 bytes are left.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2 ([`available`]).
    #[target_feature(enable = "avx2")]
    pub(crate) unsafe fn first_stop(bytes: &[u8], mut at: usize) -> Found {
        // SAFETY (the four loads): 32-byte loads from 32-byte statics (no
        // alignment needed); AVX2 is enabled in this function.
        let table = |t: &[u8; 32]| unsafe { _mm256_loadu_si256(t.as_ptr().cast::<__m256i>()) };
        let (stop_lo, stop_hi) = (table(&STOP_LO_2), table(&STOP_HI_2));
        let (name_lo, name_hi) = (table(&NAME_LO_2), table(&NAME_HI_2));
        let nibble = _mm256_set1_epi8(0x0f);
        let letter_bits = _mm256_set1_epi8(LETTER as i8);
        let glue_bits = _mm256_set1_epi8(GLUE as i8);
        let zero = _mm256_setzero_si256();
        // Whether the byte before the chunk is glue (bit 0 of the shifted
        // glue mask).
        let mut glue_before = match at.checked_sub(1).and_then(|i| bytes.get(i)) {
            Some(&b) => u32::from(crate::body::operands::is_glue(b)),
            None => 0,
        };
        while let Some(here) = bytes.get(at..at + 32) {
            // SAFETY: a 32-byte load from a slice of 32 bytes (`get` checked
            // the range; no alignment needed); AVX2 is enabled here.
            let v = unsafe { _mm256_loadu_si256(here.as_ptr().cast::<__m256i>()) };
            let lo = _mm256_and_si256(v, nibble);
            let hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
            let stop = _mm256_and_si256(
                _mm256_shuffle_epi8(stop_lo, lo),
                _mm256_shuffle_epi8(stop_hi, hi),
            );
            let name = _mm256_and_si256(
                _mm256_shuffle_epi8(name_lo, lo),
                _mm256_shuffle_epi8(name_hi, hi),
            );
            let glue =
                !(_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(name, glue_bits), zero))
                    as u32);
            let letter = !(_mm256_movemask_epi8(_mm256_cmpeq_epi8(
                _mm256_and_si256(name, letter_bits),
                zero,
            )) as u32);
            let mask = !(_mm256_movemask_epi8(_mm256_cmpeq_epi8(stop, zero)) as u32)
                | (letter & !((glue << 1) | glue_before));
            glue_before = glue >> 31;
            if mask != 0 {
                return Found::At(at + mask.trailing_zeros() as usize);
            }
            at += 32;
        }
        Found::Before(at)
    }

    /// `body::operands::plain_operands` for the 32 bytes from `at` (`0 < at`): the
    /// glued qualifiers and the operands classified in one pass.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2 ([`available`]).
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) unsafe fn operands(bytes: &[u8], at: usize) -> Operands {
        let (Some(here), Some(&before)) = (bytes.get(at..at + 32), bytes.get(at.wrapping_sub(1)))
        else {
            return Operands::Unknown;
        };
        // SAFETY (the five loads): 32-byte loads from 32-byte statics and
        // from a 32-byte slice (`get` checked the range); no alignment
        // needed; AVX2 is enabled in this function.
        let table = |t: &[u8; 32]| unsafe { _mm256_loadu_si256(t.as_ptr().cast::<__m256i>()) };
        let v = unsafe { _mm256_loadu_si256(here.as_ptr().cast::<__m256i>()) };
        let nibble = _mm256_set1_epi8(0x0f);
        let zero = _mm256_setzero_si256();
        let lo = _mm256_and_si256(v, nibble);
        let hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
        let nonzero = |x: __m256i| !(_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, zero)) as u32);
        let eq =
            |c: u8| _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(c as i8))) as u32;
        let name = _mm256_and_si256(
            _mm256_shuffle_epi8(table(&NAME_LO_2), lo),
            _mm256_shuffle_epi8(table(&NAME_HI_2), hi),
        );
        let stop = nonzero(_mm256_and_si256(
            _mm256_shuffle_epi8(table(&STOP_LO_2), lo),
            _mm256_shuffle_epi8(table(&STOP_HI_2), hi),
        ));
        let glue = nonzero(_mm256_and_si256(name, _mm256_set1_epi8(GLUE as i8)));
        let letter = nonzero(_mm256_and_si256(name, _mm256_set1_epi8(LETTER as i8)));
        let ident = nonzero(_mm256_and_si256(name, _mm256_set1_epi8(IDENT as i8)));
        let dot = eq(b'.');
        // The qualifiers: a run of `.` and identifier bytes from `at`, each
        // `.` followed by an identifier byte (else the scalar loop stops at
        // that `.`, a stop byte that is no `;`).
        let (q, f64) = if dot & 1 == 0 {
            (0, false)
        } else {
            let run = (dot | ident).trailing_ones();
            if run == 32 {
                return Operands::Unknown;
            }
            let within = (1u32 << run) - 1;
            if dot & !(ident >> 1) & within != 0 {
                return Operands::NotPlain;
            }
            let f64 = dot & (eq(b'f') >> 1) & (eq(b'6') >> 2) & (eq(b'4') >> 3) & !(ident >> 4);
            (run, f64 & within != 0)
        };
        let glue_before = u32::from(crate::body::operands::is_glue(before));
        let mask = (stop | (letter & !((glue << 1) | glue_before))) & (!0u32 << q);
        if mask == 0 {
            return Operands::From(at + 32, f64);
        }
        let semi = at + mask.trailing_zeros() as usize;
        if bytes[semi] == b';' {
            Operands::Plain(semi, f64)
        } else {
            Operands::NotPlain
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod imp {
    use super::{Found, Operands};

    /// No AVX2 off x86-64.
    #[inline]
    pub(crate) fn available() -> bool {
        false
    }

    /// Never called: [`available`] is false.
    ///
    /// # Safety
    ///
    /// None; it exists so callers compile everywhere.
    pub(crate) unsafe fn first_stop(_: &[u8], at: usize) -> Found {
        Found::Before(at)
    }

    /// Never called: [`available`] is false.
    ///
    /// # Safety
    ///
    /// None; it exists so callers compile everywhere.
    pub(crate) unsafe fn operands(_: &[u8], _: usize) -> Operands {
        Operands::Unknown
    }
}

/// Tests: take the portable path (`true`) or the detected one on this thread.
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) fn imp_no_avx2(portable: bool) {
    imp::NO_AVX2.with(|c| c.set(portable));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte, after every byte: the tables
    /// agree with `body::operands::stops_at` (checked through `first_stop` on a
    /// 33-byte text with the pair at its start).
    #[test]
    fn the_nibble_tables_agree_with_the_byte_classes_for_every_pair() {
        if !available() {
            return;
        }
        for before in 0..=255u8 {
            for b in 0..=255u8 {
                // `(` is no stop byte, not a letter and not glue.
                let mut text = vec![b'('; 34];
                text[0] = before;
                text[1] = b;
                let expected = crate::body::operands::stops_at(b, before);
                // SAFETY: `available()` is true.
                let got = unsafe { first_stop(&text, 1) };
                let stopped_at_1 = matches!(got, Found::At(1));
                assert_eq!(stopped_at_1, expected, "before {before:#04x} byte {b:#04x}");
            }
        }
    }
}
