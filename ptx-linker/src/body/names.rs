//! Cheap name lookups for the scan: a hash of a name's ends
//! ([`name_hash`]), the bits of [`super::Scopes`]' filter of names seen,
//! and [`LabelTable`], the outermost block's labels in 64 slots, where a
//! `bra` target costs one probe.

/// A cheap hash of `name`: its length and its first and last 8 bytes
/// (names differ mostly at their ends), mixed into the high bits by a
/// multiply. Names that differ only in their middle bytes collide.
#[inline(always)]
pub(crate) fn name_hash(name: &str) -> u64 {
    let b = name.as_bytes();
    let (head, tail) = match (b.first_chunk::<8>(), b.last_chunk::<8>()) {
        (Some(h), Some(t)) => (u64::from_le_bytes(*h), u64::from_le_bytes(*t)),
        _ => (b.iter().fold(0u64, |w, &x| w << 8 | u64::from(x)), 0),
    };
    (head ^ tail.rotate_left(29) ^ b.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// `a == b`, without a call to `memcmp` for names of 8 to 16 bytes (the
/// first and last 8 bytes then cover the name).
#[inline(always)]
fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    match (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        (Some(ha), Some(hb)) if a.len() <= 16 => {
            ha == hb && a.last_chunk::<8>() == b.last_chunk::<8>()
        }
        _ => a == b,
    }
}

/// The bit of the name of hash `h` ([`name_hash`]) in [`super::Scopes::seen`].
#[inline(always)]
pub(super) fn seen_bit_of(h: u64) -> (usize, u64) {
    ((h >> 61) as usize, 1 << ((h >> 55) & 63))
}

/// The bit of `name` in [`super::Scopes::seen`].
#[inline(always)]
pub(super) fn seen_bit(name: &str) -> (usize, u64) {
    seen_bit_of(name_hash(name))
}

/// Up to [`LabelTable::MAX`] labels by [`name_hash`], open addressing in
/// 64 slots: a label costs a few instructions to add and a `bra` target
/// one probe to find, where a map would hash each name again. Past `MAX`
/// labels it adds no more, and a target it lacks is looked up in
/// [`super::Scopes::names`] instead.
#[derive(Debug)]
pub(super) struct LabelTable<'src> {
    /// The slots' hashes, 0 when empty (a stored hash has its low bit set).
    hashes: [u64; 64],
    names: [&'src str; 64],
    len: usize,
}

impl Default for LabelTable<'_> {
    fn default() -> Self {
        LabelTable {
            hashes: [0; 64],
            names: [""; 64],
            len: 0,
        }
    }
}

impl<'src> LabelTable<'src> {
    /// Labels kept, at most (three quarters of the slots: short probes).
    const MAX: usize = 48;

    pub(super) fn clear(&mut self) {
        if self.len > 0 {
            self.hashes = [0; 64];
            self.len = 0;
        }
    }

    /// Adds the label `name` of hash `h`.
    #[inline(always)]
    pub(super) fn add(&mut self, h: u64, name: &'src str) {
        if self.len == Self::MAX {
            return;
        }
        let h = h | 1;
        let mut slot = (h >> 58) as usize;
        while self.hashes[slot] != 0 {
            slot = (slot + 1) % 64;
        }
        self.hashes[slot] = h;
        self.names[slot] = name;
        self.len += 1;
    }

    /// Where the label `name` of hash `h` that was added is declared (its
    /// address in the source), if it was.
    #[inline(always)]
    pub(super) fn find(&self, h: u64, name: &str) -> Option<usize> {
        let h = h | 1;
        let mut slot = (h >> 58) as usize;
        loop {
            match self.hashes[slot] {
                0 => return None,
                x if x == h && same_name(self.names[slot], name) => {
                    return Some(self.names[slot].as_ptr() as usize)
                }
                _ => slot = (slot + 1) % 64,
            }
        }
    }
}
