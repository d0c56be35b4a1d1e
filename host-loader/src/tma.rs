//! Tensor maps for the Tensor Memory Accelerator (sm_90): [`TensorMap`] encodes one with
//! `cuTensorMapEncodeTiled` (CUDA Driver API, "Tensor Map Object Management") after
//! checking here, with precise errors, the rules the driver checks, and uploads its 128
//! bytes to device memory, where the kernel's `device_std::tma::TensorMap` parameter of
//! the same type, rank and box finds it (`device_std::tma` says why the map travels in
//! global memory rather than as a `__grid_constant__` parameter).
//!
//! ```no_run
//! # fn demo(stream: &std::sync::Arc<host_loader::cudarc::driver::CudaStream>) -> Result<(), Box<dyn std::error::Error>> {
//! use host_loader::{tma::TensorMap, DeviceBuffer};
//! // A 1000 x 700 row-major f32 matrix, copied in 32 x 32 boxes.
//! let m = DeviceBuffer::<f32>::zeroed(stream, 1000 * 700)?;
//! let map = TensorMap::<f32, 2, 32, 32>::tiled(stream, &m, [700, 1000], &[700 * 4])?;
//! // kernel.launch(stream, cfg, (&map, ...)) for a kernel taking `TensorMap<f32, 2, 32, 32>`
//! # Ok(()) }
//! ```

#![allow(clippy::manual_is_multiple_of)] // keeps the 1.85 MSRV

use std::marker::PhantomData;
use std::mem::size_of;
use std::sync::Arc;

use cudarc::driver::sys::{
    self, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
    CUtensorMapL2promotion, CUtensorMapSwizzle,
};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr, SyncOnDrop};
use device_std::tma::rules;
use device_std::{FieldLayout, HasValueClass};

use crate::abi_record::AbiKind;
use crate::layout::ParamLayout;
use crate::param::{HostAbi, KernelParam};

/// Element types a tensor map can describe, with the driver's data type for each. Sealed.
pub trait TensorElement: HasValueClass + DeviceRepr + private::Sealed {
    /// `CUtensorMapDataType` of the element.
    const DATA_TYPE: CUtensorMapDataType;
}

mod private {
    pub trait Sealed {}
}

macro_rules! elements {
    ($($t:ty => $dt:ident),*) => {$(
        impl private::Sealed for $t {}
        impl TensorElement for $t {
            const DATA_TYPE: CUtensorMapDataType = CUtensorMapDataType::$dt;
        }
    )*};
}
elements!(
    u8 => CU_TENSOR_MAP_DATA_TYPE_UINT8,
    u16 => CU_TENSOR_MAP_DATA_TYPE_UINT16,
    u32 => CU_TENSOR_MAP_DATA_TYPE_UINT32,
    i32 => CU_TENSOR_MAP_DATA_TYPE_INT32,
    u64 => CU_TENSOR_MAP_DATA_TYPE_UINT64,
    i64 => CU_TENSOR_MAP_DATA_TYPE_INT64,
    f32 => CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
    f64 => CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
    device_std::bf16 => CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    device_std::f16 => CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
    // FP8 has no tensor-map type of its own: a copy moves bytes.
    device_std::F8E4M3 => CU_TENSOR_MAP_DATA_TYPE_UINT8,
    device_std::F8E5M2 => CU_TENSOR_MAP_DATA_TYPE_UINT8
);

/// Why a tensor map could not be made. Each names the dimension or value at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TensorMapError {
    /// A type parameter breaks a rule (rank, box extents past the rank, box sizes).
    #[error("invalid TensorMap type: {0}")]
    Shape(String),
    /// `dims[i]` is 0 or above 2^32.
    #[error("dimension {index} has {extent} elements; the driver allows 1 to 2^32")]
    Extent {
        /// Dimension, 0 = innermost.
        index: usize,
        /// Its extent in elements.
        extent: u64,
    },
    /// Not `RANK - 1` strides.
    #[error("a rank-{rank} map takes {} byte strides (dimensions 1..{rank}), got {got}", rank - 1)]
    StrideCount {
        /// The map's rank.
        rank: usize,
        /// Strides given.
        got: usize,
    },
    /// A stride is not a multiple of 16 bytes, or not below 2^40.
    #[error("the stride of dimension {index} is {stride} bytes; the driver needs a multiple of 16 below 2^40 (pad each row to a multiple of 16 bytes)")]
    Stride {
        /// Dimension (1 and up).
        index: usize,
        /// Its stride in bytes.
        stride: u64,
    },
    /// The tensor's base address is not 16-byte aligned.
    #[error("the tensor's device address {address:#x} is not 16-byte aligned")]
    Alignment {
        /// The address.
        address: u64,
    },
    /// The tensor reaches past the end of the buffer.
    #[error("the tensor spans {needed} bytes (last element's offset + its size) but the buffer holds {held}")]
    OutOfBuffer {
        /// Bytes the dimensions and strides reach.
        needed: u64,
        /// Bytes in the buffer.
        held: u64,
    },
    /// The driver refused (a rule not checked here).
    #[error("cuTensorMapEncodeTiled failed: {0}")]
    Driver(String),
}

/// The L2 promotion of a tensor map's copies (`CUtensorMapL2promotion`, CUDA Driver API
/// "Tensor Map Object Management"): on a miss, L2 fetches the missed sector alone
/// (`None`) or the aligned 64, 128 or 256 bytes around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum L2Promotion {
    /// `CU_TENSOR_MAP_L2_PROMOTION_NONE`.
    None,
    /// `CU_TENSOR_MAP_L2_PROMOTION_L2_64B`.
    B64,
    /// `CU_TENSOR_MAP_L2_PROMOTION_L2_128B`: what [`TensorMap::tiled`] uses.
    #[default]
    B128,
    /// `CU_TENSOR_MAP_L2_PROMOTION_L2_256B`.
    B256,
}

impl L2Promotion {
    /// The driver's name for it.
    fn to_driver(self) -> CUtensorMapL2promotion {
        use CUtensorMapL2promotion as P;
        match self {
            L2Promotion::None => P::CU_TENSOR_MAP_L2_PROMOTION_NONE,
            L2Promotion::B64 => P::CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
            L2Promotion::B128 => P::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            L2Promotion::B256 => P::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        }
    }
}

/// An encoded tensor map in device memory (128 bytes), for boxes of
/// `B0 × B1 × B2 × B3 × B4` elements of `T` (extents past `RANK` are 1) of the tensor
/// it borrows; tile mode, no interleave, shared memory swizzled by `SWIZZLE` bytes (0:
/// none; 32, 64, 128: `CU_TENSOR_MAP_SWIZZLE_32B`/`64B`/`128B`, with `B0` spanning
/// exactly that many bytes), out-of-bounds elements read as zero. As a kernel-signature
/// parameter it stands for the kernel's `device_std::tma::TensorMap<T, RANK, B0, ...,
/// SWIZZLE>`, whose ABI record the loader compares (element type, rank, box, swizzle);
/// the launch argument is `&TensorMap`.
pub struct TensorMap<
    'a,
    T,
    const RANK: usize,
    const B0: usize,
    const B1: usize = 1,
    const B2: usize = 1,
    const B3: usize = 1,
    const B4: usize = 1,
    const SWIZZLE: usize = 0,
> {
    encoded: CudaSlice<u64>,
    host: sys::CUtensorMap,
    _tensor: PhantomData<&'a CudaSlice<T>>,
}

impl<
        T,
        const RANK: usize,
        const B0: usize,
        const B1: usize,
        const B2: usize,
        const B3: usize,
        const B4: usize,
        const SWIZZLE: usize,
    > std::fmt::Debug for TensorMap<'_, T, RANK, B0, B1, B2, B3, B4, SWIZZLE>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "TensorMap<{}, {RANK}, {:?}, swizzle {SWIZZLE}>",
            std::any::type_name::<T>(),
            &[B0, B1, B2, B3, B4][..RANK]
        )
    }
}

impl<
        'a,
        T: TensorElement,
        const RANK: usize,
        const B0: usize,
        const B1: usize,
        const B2: usize,
        const B3: usize,
        const B4: usize,
        const SWIZZLE: usize,
    > TensorMap<'a, T, RANK, B0, B1, B2, B3, B4, SWIZZLE>
{
    const BOX: [usize; 5] = [B0, B1, B2, B3, B4];

    /// The type's box rules (`device_std::tma::rules::check_box`).
    fn check_shape() -> Result<(), TensorMapError> {
        rules::check_box(size_of::<T>(), RANK, Self::BOX, SWIZZLE)
            .map_err(|e| TensorMapError::Shape(e.to_string()))
    }

    /// The driver's name for `SWIZZLE`.
    fn swizzle() -> CUtensorMapSwizzle {
        match SWIZZLE {
            32 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            64 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            128 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            _ => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        }
    }

    /// Encodes a map of `tensor` as a `RANK`-dimensional tensor with extents `dims` (in
    /// elements, innermost first) and byte strides `strides` of dimensions `1..RANK`
    /// (`RANK - 1` of them; dimension 0 is contiguous), and uploads it on `stream`.
    ///
    /// Errors, each checked before the driver sees the map: the type's rank or box
    /// ([`TensorMapError::Shape`]), an extent of 0 or above 2^32, a stride count other
    /// than `RANK - 1`, a stride not a multiple of 16 bytes or not below 2^40, a base
    /// address not 16-byte aligned, a tensor reaching past the buffer; then whatever
    /// `cuTensorMapEncodeTiled` refuses, and the upload's error.
    pub fn tiled(
        stream: &Arc<CudaStream>,
        tensor: &'a CudaSlice<T>,
        dims: [u64; RANK],
        strides: &[u64],
    ) -> Result<Self, TensorMapError> {
        Self::tiled_with_promotion(stream, tensor, dims, strides, L2Promotion::B128)
    }

    /// [`tiled`](Self::tiled) with the L2 promotion the copies use (`tiled` takes
    /// [`L2Promotion::B128`]): how much around each missed sector L2 fetches from device
    /// memory (`CUtensorMapL2promotion`). Errors as [`tiled`](Self::tiled).
    pub fn tiled_with_promotion(
        stream: &Arc<CudaStream>,
        tensor: &'a CudaSlice<T>,
        dims: [u64; RANK],
        strides: &[u64],
        promotion: L2Promotion,
    ) -> Result<Self, TensorMapError> {
        Self::check_shape()?;
        check_layout(&dims, strides, size_of::<T>() as u64, tensor.len() as u64)?;
        let (address, guard) = tensor.device_ptr(stream);
        drop::<SyncOnDrop>(guard);
        if address % 16 != 0 {
            return Err(TensorMapError::Alignment { address });
        }
        let box_dims: Vec<u32> = Self::BOX[..RANK].iter().map(|&b| b as u32).collect();
        let element_strides = vec![1u32; RANK];
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        // SAFETY: every pointer is valid for the lengths the driver reads (RANK
        // dimensions, RANK - 1 strides, RANK box extents and element strides); `map`
        // is written in place. The driver only encodes: nothing is dereferenced on the
        // device here.
        let result = unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut map,
                T::DATA_TYPE,
                RANK as u32,
                address as *mut std::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                box_dims.as_ptr(),
                element_strides.as_ptr(),
                CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                Self::swizzle(),
                promotion.to_driver(),
                CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        };
        result
            .result()
            .map_err(|e| TensorMapError::Driver(e.to_string()))?;
        let encoded = stream
            .clone_htod(&map.opaque)
            .map_err(|e| TensorMapError::Driver(format!("uploading the map: {e}")))?;
        Ok(TensorMap {
            encoded,
            host: map,
            _tensor: PhantomData,
        })
    }

    /// The encoded map itself, for a CUDA C++ kernel that takes it by value
    /// (`const __grid_constant__ CUtensorMap`).
    pub fn as_cu_tensor_map(&self) -> sys::CUtensorMap {
        self.host
    }

    /// The map's device address (64-byte aligned: a fresh allocation).
    pub fn device_address(&self, stream: &CudaStream) -> u64 {
        self.encoded.device_ptr(stream).0
    }
}

/// The checks of [`TensorMap::tiled`] on extents and strides (`dims.len()` = the rank),
/// `device_std::tma::rules::check_layout`'s, as this module's errors.
fn check_layout(
    dims: &[u64],
    strides: &[u64],
    elem: u64,
    held_elems: u64,
) -> Result<(), TensorMapError> {
    use rules::RuleError as R;
    rules::check_layout(elem, dims, strides, held_elems)
        .map(drop)
        .map_err(|e| match e {
            R::Extent { index, extent } => TensorMapError::Extent { index, extent },
            R::StrideCount { rank, got } => TensorMapError::StrideCount { rank, got },
            R::Stride { index, stride } => TensorMapError::Stride { index, stride },
            R::OutOfBuffer { needed, held } => TensorMapError::OutOfBuffer { needed, held },
            other => TensorMapError::Shape(other.to_string()),
        })
}

// SAFETY: the kernel's `device_std::tma::TensorMap` is a `#[repr(transparent)]` raw
// pointer: one `.u64 .ptr` parameter; `Raw` is the 8-byte device address of the
// encoded map, which lives as long as the argument borrow, and the guard orders the
// launch after the map's upload.
unsafe impl<
        T: TensorElement,
        const RANK: usize,
        const B0: usize,
        const B1: usize,
        const B2: usize,
        const B3: usize,
        const B4: usize,
        const SWIZZLE: usize,
    > KernelParam for TensorMap<'static, T, RANK, B0, B1, B2, B3, B4, SWIZZLE>
{
    const LAYOUT: ParamLayout = ParamLayout::pointer();
    const ABI: HostAbi = {
        let all: &'static [FieldLayout; 5] =
            &device_std::abi::tensor_map_fields([B0, B1, B2, B3, B4], SWIZZLE);
        let (fields, _) = all.split_at(if RANK <= 5 { RANK } else { 5 });
        HostAbi {
            kind: AbiKind::TensorMap,
            elem_size: size_of::<T>() as u32,
            elem_class: T::VALUE_CLASS,
            fields,
        }
    };
    type Arg<'b>
        = &'b TensorMap<'b, T, RANK, B0, B1, B2, B3, B4, SWIZZLE>
    where
        Self: 'b;
    type Raw = u64;
    type Guard<'b>
        = SyncOnDrop<'b>
    where
        Self: 'b;
    #[inline(always)]
    fn lower<'b>(arg: Self::Arg<'b>, stream: &'b CudaStream) -> (u64, SyncOnDrop<'b>) {
        arg.encoded.device_ptr(stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_checks_follow_the_driver_rules() {
        assert_eq!(check_layout(&[700, 1000], &[2800], 4, 700 * 1000), Ok(()));
        assert_eq!(
            check_layout(&[700, 1000], &[2804], 4, 701 * 1000),
            Err(TensorMapError::Stride {
                index: 1,
                stride: 2804
            })
        );
        assert_eq!(
            check_layout(&[0], &[], 4, 16),
            Err(TensorMapError::Extent {
                index: 0,
                extent: 0
            })
        );
        assert_eq!(
            check_layout(&[64, 65], &[256], 4, 4096),
            Err(TensorMapError::OutOfBuffer {
                needed: 16640,
                held: 16384
            })
        );
    }

    #[test]
    fn a_tensor_larger_than_2_to_the_64_bytes_is_out_of_any_buffer() {
        // Two outer dimensions of 2^24 + 1 rows, 2^39-byte strides: 2^63 bytes each, a
        // sum of 2^64 that wraps to 0 in u64 arithmetic.
        let dims = [4, (1 << 24) + 1, (1 << 24) + 1];
        let strides = [1 << 39, 1 << 39];
        assert_eq!(
            check_layout(&dims, &strides, 4, 4),
            Err(TensorMapError::OutOfBuffer {
                needed: u64::MAX,
                held: 16
            })
        );
    }
}
