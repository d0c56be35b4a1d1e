//! The few opcodes the scan tells apart ([`Opcode`]: `bra`, texture and
//! surface instructions, unsynced warp votes and shuffles), each found with
//! one multiply and one compare on the opcode read as a word.

/// The opcodes the scan must tell apart from the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Opcode {
    /// `bra`: its operand is a label.
    Bra,
    /// `tex`, `tld4`, `txq`, `suld`, `sust`, `sured`, `suq`.
    Texture,
    /// `shfl`, `vote` (without `.sync` they need an older target).
    Warp,
    Other,
}

impl Opcode {
    /// The opcode `bytes[start..end]`, as one word (at most 5 bytes,
    /// zero-padded) looked up in [`OPCODES`]: one multiply and one compare
    /// instead of a chain of compares.
    #[inline]
    pub(super) fn of(bytes: &[u8], start: usize, end: usize) -> Opcode {
        let Some(x) = word(bytes, start, end) else {
            return Opcode::Other;
        };
        let (w, op) = OPCODES[opcode_slot(x)];
        if w == x {
            op
        } else {
            Opcode::Other
        }
    }
}

/// The multiplier of [`opcode_slot`], chosen (by trying random odd
/// numbers) so that the opcodes of [`OPCODES`] each get a slot of their own.
const OPCODE_HASH: u64 = 0x451a_bd81_f1d6_9ed7;

/// The slot of [`OPCODES`] for the word `x`: the top 4 bits of `x` times
/// [`OPCODE_HASH`].
#[inline]
const fn opcode_slot(x: u64) -> usize {
    (x.wrapping_mul(OPCODE_HASH) >> 60) as usize
}

/// The opcodes [`Opcode`] tells apart, each in its slot as (word, kind);
/// empty slots hold the word 0, which no opcode is. Two opcodes in one slot
/// fail the build.
static OPCODES: [(u64, Opcode); 16] = {
    const LIST: [(&[u8], Opcode); 10] = [
        (b"bra", Opcode::Bra),
        (b"tex", Opcode::Texture),
        (b"tld4", Opcode::Texture),
        (b"txq", Opcode::Texture),
        (b"suld", Opcode::Texture),
        (b"sust", Opcode::Texture),
        (b"sured", Opcode::Texture),
        (b"suq", Opcode::Texture),
        (b"shfl", Opcode::Warp),
        (b"vote", Opcode::Warp),
    ];
    let mut table = [(0u64, Opcode::Other); 16];
    let mut i = 0;
    while i < LIST.len() {
        let (s, op) = LIST[i];
        let mut b = [0u8; 8];
        let mut j = 0;
        while j < s.len() {
            b[j] = s[j];
            j += 1;
        }
        let x = u64::from_le_bytes(b);
        let slot = opcode_slot(x);
        assert!(table[slot].0 == 0, "two opcodes share a slot");
        table[slot] = (x, op);
        i += 1;
    }
    table
};

/// `bytes[start..end]` as a little-endian word padded with zeros, when it
/// is at most 5 bytes long (the longest opcode or qualifier compared).
#[inline]
pub(super) fn word(bytes: &[u8], start: usize, end: usize) -> Option<u64> {
    let len = end.checked_sub(start).filter(|&n| n <= 5)?;
    let mut b = [0u8; 8];
    match bytes.get(start..start + 8) {
        // Read 8 bytes and keep `len` of them: no copy of variable length.
        Some(eight) => {
            b.copy_from_slice(eight);
            Some(u64::from_le_bytes(b) & ((1u64 << (8 * len)) - 1))
        }
        None => {
            b[..len].copy_from_slice(bytes.get(start..end)?);
            Some(u64::from_le_bytes(b))
        }
    }
}
