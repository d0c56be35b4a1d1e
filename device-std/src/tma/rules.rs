//! The rules `cuTensorMapEncodeTiled` checks (CUDA Driver API, "Tensor Map Object
//! Management"), written once for the three places that enforce them: the device type's
//! compile-time checks ([`TensorMap`](super::TensorMap)), the host's encoder
//! (`host_loader::tma::TensorMap::tiled`) and the emulator's maps
//! (`emulator::TensorMapDesc`). Sizes are in bytes, extents in elements, dimension 0 the
//! innermost.

#![allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV

use core::fmt;

/// Which rule a tensor map breaks, with the values at fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuleError {
    /// The rank is not 1 to 5.
    Rank {
        /// The rank.
        rank: usize,
    },
    /// A box extent is not 1 to 256.
    BoxExtent {
        /// Dimension.
        index: usize,
        /// Its box extent.
        extent: usize,
    },
    /// A box extent past the rank is not 1.
    BoxPastRank {
        /// Dimension (`rank` and up).
        index: usize,
        /// Its box extent.
        extent: usize,
    },
    /// The innermost box extent does not span a multiple of 16 bytes.
    InnerBox {
        /// The extent.
        extent: usize,
        /// Its bytes.
        bytes: usize,
    },
    /// The swizzle is not 0, 32, 64 or 128 bytes.
    Swizzle {
        /// The swizzle.
        swizzle: usize,
    },
    /// With a swizzle, the innermost box extent does not span exactly the swizzle (the
    /// driver also takes narrower boxes; this library does not, so one layout holds).
    SwizzleSpan {
        /// The innermost box extent's bytes.
        bytes: usize,
        /// The swizzle.
        swizzle: usize,
    },
    /// A tensor extent is 0 or above 2^32.
    Extent {
        /// Dimension.
        index: usize,
        /// Its extent.
        extent: u64,
    },
    /// Not `rank - 1` strides.
    StrideCount {
        /// The rank.
        rank: usize,
        /// Strides given.
        got: usize,
    },
    /// A stride is not a multiple of 16 below 2^40.
    Stride {
        /// Dimension (1 and up).
        index: usize,
        /// Its stride.
        stride: u64,
    },
    /// The tensor reaches past the end of its buffer.
    OutOfBuffer {
        /// Bytes the extents and strides reach (the last element's offset plus its size;
        /// `u64::MAX` when that overflows).
        needed: u64,
        /// Bytes in the buffer.
        held: u64,
    },
}

impl RuleError {
    /// A fixed description, for compile-time panics (which cannot format values).
    pub const fn rule(&self) -> &'static str {
        match self {
            RuleError::Rank { .. } => "TensorMap: RANK must be in 1..=5",
            RuleError::BoxExtent { .. } => "TensorMap: every box extent must be in 1..=256",
            RuleError::BoxPastRank { .. } => "TensorMap: box extents past RANK must be 1",
            RuleError::InnerBox { .. } => {
                "TensorMap: the innermost box extent B0 must span a multiple of 16 bytes"
            }
            RuleError::Swizzle { .. } => "TensorMap: SWIZZLE must be 0 (none), 32, 64 or 128 bytes",
            RuleError::SwizzleSpan { .. } => {
                "TensorMap: with a swizzle, the innermost box extent B0 spans exactly SWIZZLE bytes"
            }
            RuleError::Extent { .. } => "a tensor extent must be in 1..=2^32",
            RuleError::StrideCount { .. } => "a rank-R tensor map takes R - 1 strides",
            RuleError::Stride { .. } => "a stride must be a multiple of 16 below 2^40",
            RuleError::OutOfBuffer { .. } => "the tensor reaches past its buffer",
        }
    }
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RuleError::Rank { rank } => {
                write!(f, "rank {rank}: a tensor map has 1 to 5 dimensions")
            }
            RuleError::BoxExtent { index, extent } => {
                write!(f, "box extent {index} is {extent}; 1 to 256 allowed")
            }
            RuleError::BoxPastRank { index, extent } => {
                write!(
                    f,
                    "box extent {index} is {extent} past the rank; it must be 1"
                )
            }
            RuleError::InnerBox { extent, bytes } => write!(
                f,
                "the innermost box extent {extent} spans {bytes} bytes, not a multiple of 16"
            ),
            RuleError::Swizzle { swizzle } => {
                write!(f, "swizzle {swizzle}: 0 (none), 32, 64 or 128 bytes")
            }
            RuleError::SwizzleSpan { bytes, swizzle } => write!(
                f,
                "the innermost box extent spans {bytes} bytes; with a {swizzle}-byte swizzle it \
                 spans exactly {swizzle}"
            ),
            RuleError::Extent { index, extent } => write!(
                f,
                "dimension {index} has {extent} elements; the driver allows 1 to 2^32"
            ),
            RuleError::StrideCount { rank, got } => write!(
                f,
                "a rank-{rank} map takes {} byte strides (dimensions 1..{rank}), got {got}",
                rank.saturating_sub(1)
            ),
            RuleError::Stride { index, stride } => write!(
                f,
                "the stride of dimension {index} is {stride} bytes; the driver needs a multiple \
                 of 16 below 2^40 (pad each row to a multiple of 16 bytes)"
            ),
            RuleError::OutOfBuffer {
                needed: u64::MAX,
                held,
            } => write!(
                f,
                "the tensor spans more than 2^64 bytes but the buffer holds {held}"
            ),
            RuleError::OutOfBuffer { needed, held } => write!(
                f,
                "the tensor spans {needed} bytes (last element's offset + its size) but the \
                 buffer holds {held}"
            ),
        }
    }
}

/// The box rules for elements of `elem` bytes, a `rank`-dimensional map, box extents
/// `boxes` (5 of them, those past the rank 1) and a shared-memory swizzle of `swizzle`
/// bytes. `const`: the device type checks them at compile time.
pub const fn check_box(
    elem: usize,
    rank: usize,
    boxes: [usize; 5],
    swizzle: usize,
) -> Result<(), RuleError> {
    if rank < 1 || rank > 5 {
        return Err(RuleError::Rank { rank });
    }
    let mut index = 0;
    while index < 5 {
        let extent = boxes[index];
        if index < rank && (extent < 1 || extent > 256) {
            return Err(RuleError::BoxExtent { index, extent });
        }
        if index >= rank && extent != 1 {
            return Err(RuleError::BoxPastRank { index, extent });
        }
        index += 1;
    }
    let bytes = boxes[0] * elem;
    if bytes % 16 != 0 {
        return Err(RuleError::InnerBox {
            extent: boxes[0],
            bytes,
        });
    }
    if !matches!(swizzle, 0 | 32 | 64 | 128) {
        return Err(RuleError::Swizzle { swizzle });
    }
    if swizzle != 0 && bytes != swizzle {
        return Err(RuleError::SwizzleSpan { bytes, swizzle });
    }
    Ok(())
}

/// The alignment a tensor copy's shared-memory address needs, in bytes, for a swizzle of
/// `swizzle` bytes: 128, or the swizzle pattern's repeat (8 lines of `swizzle` bytes:
/// 1024 for the 128-byte swizzle) so that the pattern starts at the copy's first byte.
pub const fn dst_align(swizzle: usize) -> usize {
    if swizzle == 0 {
        128
    } else {
        8 * swizzle
    }
}

/// The tensor rules for elements of `elem` bytes, extents `dims` (its length the rank),
/// byte strides `strides` of dimensions 1.., inside a buffer of `held_elems` elements:
/// each extent 1 to 2^32, `dims.len() - 1` strides, each a multiple of 16 below 2^40, the
/// last element inside the buffer. Returns the bytes the tensor spans.
pub fn check_layout(
    elem: u64,
    dims: &[u64],
    strides: &[u64],
    held_elems: u64,
) -> Result<u64, RuleError> {
    let rank = dims.len();
    if !(1..=5).contains(&rank) {
        return Err(RuleError::Rank { rank });
    }
    for (index, &extent) in dims.iter().enumerate() {
        if extent == 0 || extent > 1 << 32 {
            return Err(RuleError::Extent { index, extent });
        }
    }
    if strides.len() != rank - 1 {
        return Err(RuleError::StrideCount {
            rank,
            got: strides.len(),
        });
    }
    for (i, &stride) in strides.iter().enumerate() {
        if stride % 16 != 0 || stride >= 1 << 40 {
            return Err(RuleError::Stride {
                index: i + 1,
                stride,
            });
        }
    }
    // Saturating throughout: a wrapped sum (two 2^63-byte dimensions) would pass the
    // comparison below and let copies reach far past the buffer.
    let needed = (1..rank).fold(dims[0].saturating_mul(elem), |sum, i| {
        sum.saturating_add((dims[i] - 1).saturating_mul(strides[i - 1]))
    });
    let held = held_elems.saturating_mul(elem);
    if needed > held {
        return Err(RuleError::OutOfBuffer { needed, held });
    }
    Ok(needed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_rules() {
        assert_eq!(check_box(4, 2, [32, 32, 1, 1, 1], 0), Ok(()));
        assert_eq!(check_box(2, 2, [64, 128, 1, 1, 1], 128), Ok(()));
        assert_eq!(
            check_box(4, 0, [32, 1, 1, 1, 1], 0),
            Err(RuleError::Rank { rank: 0 })
        );
        assert_eq!(
            check_box(4, 2, [32, 257, 1, 1, 1], 0),
            Err(RuleError::BoxExtent {
                index: 1,
                extent: 257
            })
        );
        assert_eq!(
            check_box(4, 1, [32, 2, 1, 1, 1], 0),
            Err(RuleError::BoxPastRank {
                index: 1,
                extent: 2
            })
        );
        assert_eq!(
            check_box(4, 1, [3, 1, 1, 1, 1], 0),
            Err(RuleError::InnerBox {
                extent: 3,
                bytes: 12
            })
        );
        assert_eq!(
            check_box(2, 2, [64, 8, 1, 1, 1], 96),
            Err(RuleError::Swizzle { swizzle: 96 })
        );
        assert_eq!(
            check_box(2, 2, [32, 8, 1, 1, 1], 128),
            Err(RuleError::SwizzleSpan {
                bytes: 64,
                swizzle: 128
            })
        );
    }

    #[test]
    fn layout_rules() {
        assert_eq!(
            check_layout(4, &[700, 1000], &[2800], 700 * 1000),
            Ok(2_800_000)
        );
        assert_eq!(
            check_layout(4, &[700, 1000], &[2804], 701 * 1000),
            Err(RuleError::Stride {
                index: 1,
                stride: 2804
            })
        );
        assert_eq!(
            check_layout(4, &[0], &[], 16),
            Err(RuleError::Extent {
                index: 0,
                extent: 0
            })
        );
        assert_eq!(
            check_layout(4, &[64, 65], &[256], 4096),
            Err(RuleError::OutOfBuffer {
                needed: 16640,
                held: 16384
            })
        );
        assert_eq!(
            check_layout(4, &[64, 64], &[], 4096),
            Err(RuleError::StrideCount { rank: 2, got: 0 })
        );
        // Two outer dimensions of 2^24 + 1 rows, 2^39-byte strides: a sum of 2^64 that
        // would wrap to 0.
        assert_eq!(
            check_layout(
                4,
                &[4, (1 << 24) + 1, (1 << 24) + 1],
                &[1 << 39, 1 << 39],
                4
            ),
            Err(RuleError::OutOfBuffer {
                needed: u64::MAX,
                held: 16
            })
        );
    }
}
