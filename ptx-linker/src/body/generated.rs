//! The names a parameterized declaration `prefix<count>` generates, as
//! ptxas 13.5 matches them (PTX ISA 9.0, section 5.4.6): as a use, as a
//! `bra` target, as a repeated declaration; and the bytes a function-scope
//! `.shared x<N>` takes.

/// Bytes of a function-scope `.shared x<N>` of which `used` distinct names
/// are used: `used + 1` elements of `size` bytes, each at `align` (see
/// [`super::scopes::SharedGenerated`]). Saturates at `u64::MAX`, which no limit allows.
pub(super) fn shared_generated_bytes(size: u64, align: u32, used: usize) -> u64 {
    size.checked_next_multiple_of(u64::from(align.max(1)))
        .and_then(|stride| stride.checked_mul(used as u64))
        .and_then(|n| n.checked_add(size))
        .unwrap_or(u64::MAX)
}

/// The index of `name` among the names `prefix<count>` generates: the
/// prefix, then decimal digits for a number below `count`. Leading zeros
/// count (`x02` is `x2`), as ptxas reads them (PTX ISA 9.0, section 5.4.6).
pub(crate) fn generated_index(name: &str, prefix: &str, count: u32) -> Option<u32> {
    let digits = name.strip_prefix(prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let index: u64 = digits.parse().ok()?;
    u32::try_from(index).ok().filter(|&i| i < count)
}

/// Whether the variables of `prefix<count>` go by no name: ptxas 13.5 reads
/// a name such as `a15` as the prefix `a` and 15, so when the prefix ends in
/// a digit (`a1<10>`) no name finds them, nor clashes with them.
pub(crate) fn names_nothing(prefix: &str) -> bool {
    prefix.ends_with(|c: char| c.is_ascii_digit())
}

/// Whether `prefix<count>` generates `name` as ptxas 13.5 finds a name
/// among them (a `bra` target): the prefix, then a number below `count`,
/// leading zeros allowed (`x01` is `x<4>`'s); none when the prefix
/// [names nothing](names_nothing).
pub(crate) fn generates(prefix: &str, count: u32, name: &str) -> bool {
    !names_nothing(prefix) && generated_index(name, prefix, count).is_some()
}

/// Whether ptxas 13.5 takes a variable `name` declared after `prefix<count>`
/// in the same block for one of its names ("Duplicate definition of
/// variable"): the prefix, then decimal digits whose value, read modulo
/// 2^32 (`x4294967297` repeats `x1`), is below `count`; leading zeros count
/// (`x01` repeats `x1`). Checked case by case.
pub(super) fn repeats_generated(name: &str, prefix: &str, count: u32) -> bool {
    // (`a1<10>` and `a15` do not clash.)
    if names_nothing(prefix) {
        return false;
    }
    let Some(digits) = name.strip_prefix(prefix) else {
        return false;
    };
    !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && digits.bytes().fold(0u32, |v, d| {
            v.wrapping_mul(10).wrapping_add(u32::from(d - b'0'))
        }) < count
}

/// What [`super::Scopes::generated_clash`] gathers about the names of a block.
pub(super) struct GeneratedCheck<'a> {
    pub(super) prefix: &'a str,
    pub(super) count: u32,
    /// The smallest number among its variables named `prefix` and digits.
    pub(super) min: Option<u32>,
    /// Whether a name is `prefix` and a number below `count` written
    /// without a leading zero.
    pub(super) named: bool,
}

impl GeneratedCheck<'_> {
    /// A variable or parameter (`var`) or a label of the block.
    pub(super) fn add(&mut self, name: &str, var: bool) {
        if names_nothing(self.prefix) {
            return;
        }
        let Some(digits) = name.strip_prefix(self.prefix) else {
            return;
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return;
        }
        if var {
            let v = digits.bytes().fold(0u32, |v, d| {
                v.wrapping_mul(10).wrapping_add(u32::from(d - b'0'))
            });
            self.min = Some(self.min.map_or(v, |m| m.min(v)));
        }
        if (digits == "0" || !digits.starts_with('0'))
            && digits.parse::<u32>().is_ok_and(|i| i < self.count)
        {
            self.named = true;
        }
    }
}
