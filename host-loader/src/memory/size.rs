//! Size arithmetic: element counts to bytes, ranges, and chunk plans. Pure functions, no
//! CUDA calls.

use std::ops::{Bound, Range, RangeBounds};

use super::error::MemoryError;

/// The byte size of `len` elements of `T`: `len * size_of::<T>()`.
///
/// Errors: [`MemoryError::SizeOverflow`] when the product overflows or exceeds
/// `isize::MAX` (no Rust slice, and no allocation, can be that large).
///
/// ```
/// use host_loader::memory::byte_len;
/// assert_eq!(byte_len::<f32>(1000).unwrap(), 4000);
/// assert!(byte_len::<f64>(usize::MAX / 4).is_err());
/// ```
pub fn byte_len<T>(len: usize) -> Result<usize, MemoryError> {
    let elem_size = std::mem::size_of::<T>();
    len.checked_mul(elem_size)
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or(MemoryError::SizeOverflow {
            ty: std::any::type_name::<T>(),
            len,
            elem_size,
        })
}

/// The number of bytes actually requested from an allocator for `bytes` bytes: at least
/// 1, because the driver refuses zero-byte allocations (`CUDA_ERROR_INVALID_VALUE`). An
/// empty buffer therefore owns one byte and reports length 0.
pub(crate) fn alloc_bytes(bytes: usize) -> usize {
    bytes.max(1)
}

/// Resolves `bounds` against a buffer of `len` elements into a `start..end` range.
///
/// Errors: [`MemoryError::OutOfBounds`] when `start > end` or `end > len` (`op` names the
/// caller in the message).
pub fn resolve_range(
    op: &'static str,
    bounds: impl RangeBounds<usize>,
    len: usize,
) -> Result<Range<usize>, MemoryError> {
    let start = match bounds.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match bounds.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok(s..e),
        (s, e) => Err(MemoryError::OutOfBounds {
            op,
            start: s.unwrap_or(usize::MAX),
            end: e.unwrap_or(usize::MAX),
            len,
        }),
    }
}

/// Checks that a copy's source and destination have the same length in elements.
///
/// Errors: [`MemoryError::LengthMismatch`].
pub(crate) fn same_len(op: &'static str, dst: usize, src: usize) -> Result<(), MemoryError> {
    if dst == src {
        Ok(())
    } else {
        Err(MemoryError::LengthMismatch { op, dst, src })
    }
}

/// Splits `0..len` into consecutive chunks of `chunk` elements (the last one shorter
/// when `chunk` does not divide `len`). Empty when `len` is 0.
///
/// Errors: [`MemoryError::OutOfBounds`] when `chunk` is 0 and `len` is not (no chunk
/// could make progress).
///
/// ```
/// let c = host_loader::memory::chunks(10, 4).unwrap();
/// assert_eq!(c, vec![0..4, 4..8, 8..10]);
/// ```
pub fn chunks(len: usize, chunk: usize) -> Result<Vec<Range<usize>>, MemoryError> {
    if chunk == 0 {
        if len == 0 {
            return Ok(Vec::new());
        }
        return Err(MemoryError::OutOfBounds {
            op: "chunks (chunk length 0)",
            start: 0,
            end: 0,
            len,
        });
    }
    Ok((0..len.div_ceil(chunk))
        .map(|i| i * chunk..((i + 1) * chunk).min(len))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_len_multiplies_and_refuses_overflow() {
        assert_eq!(byte_len::<u8>(0).unwrap(), 0);
        assert_eq!(byte_len::<f32>(1 << 20).unwrap(), 4 << 20);
        assert_eq!(byte_len::<[u64; 4]>(3).unwrap(), 96);
        assert_eq!(
            byte_len::<u8>(isize::MAX as usize).unwrap(),
            isize::MAX as usize
        );
        assert_eq!(byte_len::<()>(usize::MAX).unwrap(), 0);
        match byte_len::<u16>(isize::MAX as usize / 2 + 1) {
            Err(MemoryError::SizeOverflow { len, elem_size, ty }) => {
                assert_eq!(len, isize::MAX as usize / 2 + 1);
                assert_eq!(elem_size, 2);
                assert_eq!(ty, "u16");
            }
            other => panic!("expected SizeOverflow, got {other:?}"),
        }
        let e = byte_len::<f64>(usize::MAX).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{} elements of `f64` (8 bytes each) do not fit in memory: {} × 8 bytes \
                 overflows isize::MAX",
                usize::MAX,
                usize::MAX
            )
        );
    }

    #[test]
    fn zero_bytes_allocate_one() {
        assert_eq!(alloc_bytes(0), 1);
        assert_eq!(alloc_bytes(1), 1);
        assert_eq!(alloc_bytes(4096), 4096);
    }

    #[test]
    fn ranges_resolve_or_fail() {
        assert_eq!(resolve_range("v", .., 10).unwrap(), 0..10);
        assert_eq!(resolve_range("v", 2..5, 10).unwrap(), 2..5);
        assert_eq!(resolve_range("v", 2..=5, 10).unwrap(), 2..6);
        assert_eq!(resolve_range("v", 10.., 10).unwrap(), 10..10);
        assert_eq!(resolve_range("v", ..=9, 10).unwrap(), 0..10);
        assert_eq!(
            resolve_range("view", 4..11, 10).unwrap_err().to_string(),
            "view: range 4..11 is out of bounds for 10 elements"
        );
        #[allow(clippy::reversed_empty_ranges)]
        let backwards = resolve_range("v", 6..5, 10);
        assert!(matches!(
            backwards,
            Err(MemoryError::OutOfBounds {
                start: 6,
                end: 5,
                len: 10,
                ..
            })
        ));
        assert!(resolve_range("v", ..=usize::MAX, 10).is_err());
    }

    #[test]
    fn lengths_must_match() {
        assert!(same_len("c", 5, 5).is_ok());
        assert_eq!(
            same_len("copy_from_host", 4, 5).unwrap_err().to_string(),
            "copy_from_host: the destination holds 4 elements and the source 5; a copy needs \
             equal lengths (take a view of the longer one)"
        );
    }

    #[test]
    fn chunk_plans() {
        assert_eq!(chunks(0, 4).unwrap(), Vec::<Range<usize>>::new());
        assert_eq!(chunks(0, 0).unwrap(), Vec::<Range<usize>>::new());
        assert_eq!(chunks(8, 4).unwrap(), vec![0..4, 4..8]);
        assert_eq!(chunks(3, 4).unwrap(), vec![0..3]);
        assert_eq!(chunks(9, 4).unwrap(), vec![0..4, 4..8, 8..9]);
        assert!(chunks(5, 0).is_err());
        let plan = chunks(1_000_003, 65_536).unwrap();
        assert_eq!(plan.len(), 16);
        assert_eq!(plan.iter().map(|r| r.len()).sum::<usize>(), 1_000_003);
        assert!(plan.windows(2).all(|w| w[0].end == w[1].start));
    }
}
