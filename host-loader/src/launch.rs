//! Launch configurations: building and validating grid and block sizes against a
//! device's limits.

pub use cudarc::driver::LaunchConfig;

use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::CudaContext;

use crate::error::Error;

/// Most threads in one block on every GPU CUDA 13 supports (sm_75 and newer).
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;
/// Largest block size in x and y, in threads.
pub const MAX_BLOCK_DIM_XY: u32 = 1024;
/// Largest block size in z, in threads.
pub const MAX_BLOCK_DIM_Z: u32 = 64;
/// Largest grid size in x, in blocks (2³¹ − 1).
pub const MAX_GRID_DIM_X: u32 = i32::MAX as u32;
/// Largest grid size in y and z, in blocks.
pub const MAX_GRID_DIM_YZ: u32 = 65535;

/// Bytes of dynamic shared memory a kernel may use without opting in
/// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` starts at 48 KiB minus the kernel's
/// static shared memory on every GPU since Volta).
pub const DEFAULT_SHARED_MEMORY_PER_BLOCK: u32 = 48 * 1024;

/// A device's launch limits, read once per module with `cuDeviceGetAttribute`.
///
/// [`Default`] gives the limits every GPU CUDA 13 supports shares (sm_75 and newer):
/// blocks of 1024 × 1024 × 64 threads, at most 1024 in total, grids of
/// (2³¹ − 1) × 65535 × 65535 blocks and 48 KiB of shared memory per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Largest block in threads per axis (`CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_{X,Y,Z}`).
    pub max_block_dim: (u32, u32, u32),
    /// Most threads in one block (`CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK`).
    pub max_threads_per_block: u32,
    /// Largest grid in blocks per axis (`CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_{X,Y,Z}`).
    pub max_grid_dim: (u32, u32, u32),
    /// Most shared memory one block can use after opting in, static and dynamic together,
    /// in bytes (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`; 227 KiB on an
    /// H100/H200).
    pub max_shared_per_block_optin: u32,
}

impl Default for DeviceLimits {
    fn default() -> Self {
        DeviceLimits {
            max_block_dim: (MAX_BLOCK_DIM_XY, MAX_BLOCK_DIM_XY, MAX_BLOCK_DIM_Z),
            max_threads_per_block: MAX_THREADS_PER_BLOCK,
            max_grid_dim: (MAX_GRID_DIM_X, MAX_GRID_DIM_YZ, MAX_GRID_DIM_YZ),
            max_shared_per_block_optin: DEFAULT_SHARED_MEMORY_PER_BLOCK,
        }
    }
}

impl DeviceLimits {
    /// Reads the limits of `ctx`'s device (`cuDeviceGetAttribute`, one call per field).
    ///
    /// Errors: [`Error::Driver`] naming the attribute that could not be read.
    pub fn query(ctx: &CudaContext) -> Result<Self, Error> {
        use CUdevice_attribute as A;
        let get = |attr: A| -> Result<u32, Error> {
            ctx.attribute(attr)
                .map(|v| v.max(0) as u32)
                .map_err(|source| Error::Driver {
                    context: format!("cuDeviceGetAttribute({attr:?})"),
                    source,
                })
        };
        Ok(DeviceLimits {
            max_block_dim: (
                get(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                get(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                get(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ),
            max_threads_per_block: get(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_grid_dim: (
                get(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                get(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                get(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ),
            max_shared_per_block_optin: get(
                A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
        })
    }

    /// Checks the grid and block of `cfg` (not its shared memory): every dimension
    /// non-zero, the block within [`max_block_dim`](Self::max_block_dim) per axis and
    /// `max_threads` (and [`max_threads_per_block`](Self::max_threads_per_block)) in
    /// total, the grid within [`max_grid_dim`](Self::max_grid_dim).
    ///
    /// Errors: [`Error::InvalidLaunch`] saying which limit was broken.
    #[inline]
    pub fn validate(&self, cfg: &LaunchConfig, max_threads: u32) -> Result<(), Error> {
        let (bx, by, bz) = cfg.block_dim;
        let (gx, gy, gz) = cfg.grid_dim;
        let (mbx, mby, mbz) = self.max_block_dim;
        let (mgx, mgy, mgz) = self.max_grid_dim;
        let threads = (bx as u64 * by as u64).saturating_mul(bz as u64);
        let limit = max_threads.min(self.max_threads_per_block);
        // One branch on the fast path; the slow path says what is wrong.
        if bx == 0
            || by == 0
            || bz == 0
            || gx == 0
            || gy == 0
            || gz == 0
            || bx > mbx
            || by > mby
            || bz > mbz
            || threads > limit as u64
            || gx > mgx
            || gy > mgy
            || gz > mgz
        {
            return Err(self.explain(cfg, limit));
        }
        Ok(())
    }

    #[cold]
    fn explain(&self, cfg: &LaunchConfig, limit: u32) -> Error {
        let (bx, by, bz) = cfg.block_dim;
        let (gx, gy, gz) = cfg.grid_dim;
        let (mbx, mby, mbz) = self.max_block_dim;
        let (mgx, mgy, mgz) = self.max_grid_dim;
        let threads = (bx as u64 * by as u64).saturating_mul(bz as u64);
        let reason = if bx == 0 || by == 0 || bz == 0 {
            format!("block {:?} has a zero dimension", cfg.block_dim)
        } else if gx == 0 || gy == 0 || gz == 0 {
            format!("grid {:?} has a zero dimension", cfg.grid_dim)
        } else if bx > mbx || by > mby || bz > mbz {
            format!(
                "block {:?} exceeds the per-axis limit {:?}",
                cfg.block_dim, self.max_block_dim
            )
        } else if threads > limit as u64 {
            format!(
                "block {:?} has {threads} threads; the limit is {limit}",
                cfg.block_dim
            )
        } else {
            debug_assert!(gx > mgx || gy > mgy || gz > mgz);
            format!(
                "grid {:?} exceeds the limit {:?}",
                cfg.grid_dim, self.max_grid_dim
            )
        };
        invalid(None, reason)
    }
}

/// A 1D configuration that covers `n` elements with one thread each: `block` threads per
/// block and `ceil(n / block)` blocks, no dynamic shared memory.
///
/// Unlike cudarc's `LaunchConfig::for_num_elems`, the block size is the caller's choice.
///
/// Errors: [`Error::InvalidLaunch`] when `n` is 0 (a grid of zero blocks cannot be
/// launched) or `block` is 0 or above [`MAX_THREADS_PER_BLOCK`].
///
/// ```
/// let cfg = host_loader::for_num_elems(1000, 256).unwrap();
/// assert_eq!(cfg.grid_dim, (4, 1, 1));
/// assert_eq!(cfg.block_dim, (256, 1, 1));
/// assert!(host_loader::for_num_elems(0, 256).is_err());
/// ```
pub fn for_num_elems(n: u32, block: u32) -> Result<LaunchConfig, Error> {
    if n == 0 {
        return Err(invalid(
            None,
            "0 elements: a grid of zero blocks cannot be launched; skip the launch instead".into(),
        ));
    }
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(block.max(1)), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    };
    validate_config(&cfg, MAX_THREADS_PER_BLOCK).map_err(|e| match e {
        Error::InvalidLaunch { reason, .. } => invalid(None, reason),
        other => other,
    })?;
    Ok(cfg)
}

/// Checks `cfg` against the launch limits every GPU CUDA 13 supports shares
/// ([`DeviceLimits::default`]): every grid and block dimension non-zero, block at most
/// 1024 × 1024 × 64 threads per axis and at most `max_threads_per_block` (and 1024)
/// threads in total, grid at most (2³¹ − 1) × 65535 × 65535 blocks. A typed kernel
/// checks against its own device's limits instead ([`DeviceLimits::query`]).
///
/// Dynamic shared memory is not checked here; [`Kernel::launch`](crate::Kernel::launch)
/// checks it against the kernel and the device.
///
/// Errors: [`Error::InvalidLaunch`] saying which limit was broken.
pub fn validate_config(cfg: &LaunchConfig, max_threads_per_block: u32) -> Result<(), Error> {
    DeviceLimits::default().validate(cfg, max_threads_per_block)
}

/// Checks that `cfg`'s block has at most `max_threads` threads, the bound of kernel
/// `kernel` (its `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`, e.g. from `.maxntid`).
///
/// Errors: [`Error::ExceedsMaxThreads`] naming the kernel, the block and the bound.
#[inline]
pub(crate) fn check_max_threads(
    kernel: &str,
    cfg: &LaunchConfig,
    max_threads: u32,
) -> Result<(), Error> {
    let (x, y, z) = cfg.block_dim;
    let threads = (x as u64 * y as u64).saturating_mul(z as u64);
    if threads > max_threads as u64 {
        return Err(exceeds_max_threads(
            kernel,
            cfg.block_dim,
            threads,
            max_threads,
        ));
    }
    Ok(())
}

/// The check of a kernel declared with `#[kernel(dims = N)]` (`N` 1 or 2): the grid's
/// and the block's extents past the first `N` dimensions are 1.
#[inline]
pub(crate) fn check_launch_dims(kernel: &str, cfg: &LaunchConfig, dims: u32) -> Result<(), Error> {
    let (g, b) = (cfg.grid_dim, cfg.block_dim);
    let fits = match dims {
        1 => (g.1 | g.2 | b.1 | b.2) == 1,
        _ => (g.2 | b.2) == 1,
    };
    if fits {
        return Ok(());
    }
    Err(launch_dims_mismatch(kernel, g, b, dims))
}

#[cold]
fn launch_dims_mismatch(
    kernel: &str,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    dims: u32,
) -> Error {
    let (shape, past) = if dims == 1 {
        ("one-dimensional", "y and z")
    } else {
        ("two-dimensional", "z")
    };
    invalid(
        Some(kernel),
        format!(
            "grid {grid:?} and block {block:?}, but the kernel is declared {shape} \
             (`#[kernel(dims = {dims})]`): its code reads the {past} indices as 0, so every \
             launch needs extents of 1 in {past}; launch it so, or remove `dims` from the \
             kernel"
        ),
    )
}

#[cold]
fn exceeds_max_threads(
    kernel: &str,
    block: (u32, u32, u32),
    threads: u64,
    max_threads: u32,
) -> Error {
    Error::ExceedsMaxThreads {
        kernel: kernel.to_string(),
        block,
        threads,
        max_threads,
    }
}

/// The check of `#[kernel(slice_align = N)]`: every slice argument (`starts[i]` is
/// `Some` for a slice parameter `i`, its device address) starts at a multiple of
/// `align` bytes, a power of two. `align` 0 or 1: nothing to check.
///
/// Errors: [`Error::InvalidLaunch`] naming the kernel, the parameter, its address and
/// the declaration.
pub(crate) fn check_slice_align(
    kernel: &str,
    align: u32,
    starts: &[Option<u64>],
) -> Result<(), Error> {
    if align <= 1 {
        return Ok(());
    }
    let misaligned = starts.iter().enumerate().find_map(|(i, s)| {
        s.filter(|&a| a & (u64::from(align) - 1) != 0)
            .map(|a| (i, a))
    });
    match misaligned {
        None => Ok(()),
        Some((index, start)) => Err(invalid(
            Some(kernel),
            format!(
                "parameter {index} (counting from 0), a slice, starts at device address \
                 {start:#x}, not a multiple of {align} bytes, and the kernel assumes it is \
                 (`#[kernel(slice_align = {align})]`); pass a buffer, or a sub-slice of one, \
                 that starts {align}-byte aligned (every cuMemAlloc buffer does)"
            ),
        )),
    }
}

/// Why [`KernelSignature::launch_raw`](crate::KernelSignature::launch_raw) did not
/// launch: a slice argument refused by the kernel's declared alignment (before the
/// driver was called), or the driver's error.
#[derive(Debug)]
pub enum RawLaunchError {
    /// `#[kernel(slice_align = N)]` refused the launch: [`Error::InvalidLaunch`].
    Refused(Error),
    /// `cuLaunchKernel` (or `cuLaunchKernelEx`) failed.
    Driver(cudarc::driver::DriverError),
}

pub(crate) fn invalid(kernel: Option<&str>, reason: String) -> Error {
    Error::InvalidLaunch {
        kernel: kernel.map(str::to_string),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_align_refuses_the_first_misaligned_slice_and_names_it() {
        let starts = [None, Some(0x7f00_0000_0000), Some(0x7f00_0000_0010), None];
        assert!(check_slice_align("k", 16, &starts).is_ok());
        assert!(check_slice_align("k", 0, &[Some(3)]).is_ok());
        assert!(check_slice_align("k", 1, &[Some(3)]).is_ok());
        // An absent optional slice is address 0: aligned.
        assert!(check_slice_align("k", 256, &[Some(0)]).is_ok());
        let err = check_slice_align("vecadd", 16, &[Some(0x1000), Some(0x1004), Some(0x1008)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("vecadd"), "{err}");
        assert!(
            err.contains("parameter 1 (counting from 0), a slice, starts at device address 0x1004"),
            "{err}"
        );
        assert!(err.contains("slice_align = 16"), "{err}");
        let err = check_slice_align("k", 8, &[Some(0x2008), None, Some(0x2004)]).unwrap_err();
        assert!(err.to_string().contains("parameter 2 (counting"), "{err}");
    }

    #[test]
    fn launch_dims_refuse_extents_past_the_declared_dimensions() {
        let cfg = |g, b| LaunchConfig {
            grid_dim: g,
            block_dim: b,
            shared_mem_bytes: 0,
        };
        assert!(check_launch_dims("k", &cfg((100, 1, 1), (256, 1, 1)), 1).is_ok());
        assert!(check_launch_dims("k", &cfg((100, 7, 1), (16, 16, 1)), 2).is_ok());
        for (g, b) in [
            ((1, 2, 1), (32, 1, 1)),
            ((1, 1, 2), (32, 1, 1)),
            ((1, 1, 1), (32, 2, 1)),
            ((1, 1, 1), (32, 1, 2)),
        ] {
            let err = check_launch_dims("k", &cfg(g, b), 1)
                .unwrap_err()
                .to_string();
            assert!(err.contains("`k`"), "{err}");
            assert!(
                err.contains(&format!("grid {g:?} and block {b:?}")),
                "{err}"
            );
            assert!(err.contains("`#[kernel(dims = 1)]`"), "{err}");
        }
        let err = check_launch_dims("k", &cfg((1, 1, 3), (8, 8, 1)), 2).unwrap_err();
        assert!(err.to_string().contains("two-dimensional"), "{err}");
        assert!(check_launch_dims("k", &cfg((1, 1, 1), (8, 8, 2)), 2).is_err());
    }

    fn cfg(grid: (u32, u32, u32), block: (u32, u32, u32)) -> LaunchConfig {
        LaunchConfig {
            grid_dim: grid,
            block_dim: block,
            shared_mem_bytes: 0,
        }
    }

    #[test]
    fn for_num_elems_rounds_up() {
        let c = for_num_elems(1025, 1024).unwrap();
        assert_eq!(c.grid_dim, (2, 1, 1));
        assert_eq!(c.block_dim, (1024, 1, 1));
        assert_eq!(c.shared_mem_bytes, 0);
        let c = for_num_elems(u32::MAX, 1).unwrap_err();
        assert!(
            c.to_string()
                .contains("grid (4294967295, 1, 1) exceeds the limit (2147483647, 65535, 65535)"),
            "{c}"
        );
    }

    #[test]
    fn for_num_elems_rejects_bad_input() {
        assert_eq!(
            for_num_elems(0, 256).unwrap_err().to_string(),
            "invalid launch: 0 elements: a grid of zero blocks cannot be launched; skip the \
             launch instead"
        );
        assert_eq!(
            for_num_elems(10, 0).unwrap_err().to_string(),
            "invalid launch: block (0, 1, 1) has a zero dimension"
        );
        assert_eq!(
            for_num_elems(10, 2048).unwrap_err().to_string(),
            "invalid launch: block (2048, 1, 1) exceeds the per-axis limit (1024, 1024, 64)"
        );
    }

    #[test]
    fn validate_limits() {
        assert!(validate_config(&cfg((1, 1, 1), (1024, 1, 1)), 1024).is_ok());
        assert!(validate_config(&cfg((MAX_GRID_DIM_X, 65535, 65535), (32, 32, 1)), 1024).is_ok());
        assert_eq!(
            validate_config(&cfg((1, 1, 1), (32, 32, 2)), 1024)
                .unwrap_err()
                .to_string(),
            "invalid launch: block (32, 32, 2) has 2048 threads; the limit is 1024"
        );
        assert_eq!(
            validate_config(&cfg((1, 1, 1), (512, 1, 1)), 256)
                .unwrap_err()
                .to_string(),
            "invalid launch: block (512, 1, 1) has 512 threads; the limit is 256"
        );
        assert!(validate_config(&cfg((1, 1, 1), (1, 1, 65)), 1024).is_err());
        assert!(validate_config(&cfg((0, 1, 1), (1, 1, 1)), 1024).is_err());
        assert!(validate_config(&cfg((1, 65536, 1), (1, 1, 1)), 1024).is_err());
        assert!(validate_config(&cfg((1, 1, 1), (1, 0, 1)), 1024).is_err());
        // A block whose thread count overflows 64 bits is an error, not a panic.
        let huge = (u32::MAX, u32::MAX, 2);
        assert!(validate_config(&cfg((1, 1, 1), huge), 1024).is_err());
    }

    #[test]
    fn device_specific_limits() {
        let small = DeviceLimits {
            max_block_dim: (512, 512, 32),
            max_threads_per_block: 512,
            max_grid_dim: (1000, 10, 10),
            max_shared_per_block_optin: 100 * 1024,
        };
        assert!(small
            .validate(&cfg((1000, 10, 10), (512, 1, 1)), 1024)
            .is_ok());
        assert_eq!(
            small
                .validate(&cfg((1, 1, 1), (1024, 1, 1)), 1024)
                .unwrap_err()
                .to_string(),
            "invalid launch: block (1024, 1, 1) exceeds the per-axis limit (512, 512, 32)"
        );
        assert_eq!(
            small
                .validate(&cfg((1, 1, 1), (32, 32, 1)), 1024)
                .unwrap_err()
                .to_string(),
            "invalid launch: block (32, 32, 1) has 1024 threads; the limit is 512"
        );
        assert_eq!(
            small
                .validate(&cfg((1001, 1, 1), (1, 1, 1)), 1024)
                .unwrap_err()
                .to_string(),
            "invalid launch: grid (1001, 1, 1) exceeds the limit (1000, 10, 10)"
        );
        // The kernel's own limit applies when it is lower than the device's.
        assert!(small.validate(&cfg((1, 1, 1), (256, 1, 1)), 128).is_err());
    }

    #[test]
    fn blocks_over_the_kernel_bound_are_a_typed_error() {
        // `#[kernel(max_threads = 384)]`: `.maxntid 384, 1, 1`.
        assert!(check_max_threads("k", &cfg((1, 1, 1), (384, 1, 1)), 384).is_ok());
        assert!(check_max_threads("k", &cfg((1, 1, 1), (128, 3, 1)), 384).is_ok());
        assert!(check_max_threads("k", &cfg((1, 1, 1), (1, 1, 1)), 1).is_ok());
        let e = check_max_threads("k", &cfg((4, 1, 1), (32, 4, 4)), 384).unwrap_err();
        match &e {
            Error::ExceedsMaxThreads {
                kernel,
                block,
                threads,
                max_threads,
            } => {
                assert_eq!(kernel, "k");
                assert_eq!(*block, (32, 4, 4));
                assert_eq!(*threads, 512);
                assert_eq!(*max_threads, 384);
            }
            other => panic!("expected ExceedsMaxThreads, got {other:?}"),
        }
        assert!(
            e.to_string().starts_with(
                "launch of `k` refused: block (32, 4, 4) has 512 threads, more than the \
                 kernel's bound of 384 threads per block"
            ),
            "{e}"
        );
        // Products past u32 do not wrap; past u64 they saturate.
        assert!(matches!(
            check_max_threads("k", &cfg((1, 1, 1), (65536, 65536, 1)), 1024),
            Err(Error::ExceedsMaxThreads { threads, .. }) if threads == 1 << 32
        ));
        assert!(matches!(
            check_max_threads("k", &cfg((1, 1, 1), (u32::MAX, u32::MAX, 2)), 1024),
            Err(Error::ExceedsMaxThreads { threads, .. }) if threads == u64::MAX
        ));
    }
}

/// The dynamic shared memory a kernel declares with `#[kernel(dynamic_shared = N,
/// dynamic_shared_per_thread = M)]` (device-std; `__kernel_dynamic_shared_K` in the PTX):
/// a block of `t` threads needs `bytes + per_thread × t` bytes. Launches of such a kernel
/// with `shared_mem_bytes == 0` get that size; one with less is refused
/// ([`Error::InvalidLaunch`](crate::Error::InvalidLaunch) with the numbers); one with more
/// keeps its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DynamicShared {
    /// Bytes per block, whatever its size.
    pub bytes: u32,
    /// Bytes per thread of the block.
    pub per_thread: u32,
}

impl From<ptx_linker::DeclaredDynamicShared> for DynamicShared {
    /// The declaration as the link map records it.
    fn from(d: ptx_linker::DeclaredDynamicShared) -> Self {
        DynamicShared {
            bytes: d.bytes,
            per_thread: d.per_thread,
        }
    }
}

impl DynamicShared {
    /// The bytes a block of `threads` threads needs (`u64`: no overflow).
    pub fn bytes_for(&self, threads: u32) -> u64 {
        self.bytes as u64 + self.per_thread as u64 * threads as u64
    }

    /// `cfg` with its dynamic shared memory filled in (when 0) or checked (when less
    /// than the declaration asks for the block). `kernel` names it in the error.
    ///
    /// Errors: [`Error::InvalidLaunch`](crate::Error::InvalidLaunch) when
    /// `cfg.shared_mem_bytes` is nonzero and less than [`bytes_for`](Self::bytes_for) the
    /// block, or the size does not fit a `u32`.
    pub fn apply(&self, kernel: &str, cfg: LaunchConfig) -> Result<LaunchConfig, crate::Error> {
        let (x, y, z) = cfg.block_dim;
        let threads = x.saturating_mul(y).saturating_mul(z);
        let need = self.bytes_for(threads);
        let fail = |why: String| crate::Error::InvalidLaunch {
            kernel: Some(kernel.to_string()),
            reason: why,
        };
        let need32 = u32::try_from(need).map_err(|_| {
            fail(format!(
                "the kernel declares {} + {} × threads bytes of dynamic shared memory: {need} \
                 bytes for block {:?}, more than a launch can ask for",
                self.bytes, self.per_thread, cfg.block_dim
            ))
        })?;
        match cfg.shared_mem_bytes {
            0 => Ok(LaunchConfig {
                shared_mem_bytes: need32,
                ..cfg
            }),
            given if (given as u64) < need => Err(fail(format!(
                "the kernel declares {} + {} × threads bytes of dynamic shared memory \
                 (`#[kernel(dynamic_shared = {}, dynamic_shared_per_thread = {})]`): {need} bytes \
                 for block {:?} ({threads} threads), but the launch gives {given}; give at least \
                 {need}, or 0 to have it filled in",
                self.bytes, self.per_thread, self.bytes, self.per_thread, cfg.block_dim
            ))),
            _ => Ok(cfg),
        }
    }
}

/// Launch attributes beyond grid, block, shared memory and stream (CUDA driver API
/// `cuLaunchKernelEx`, `CUlaunchAttributeID`). The default is none: a launch with it is
/// a plain `cuLaunchKernel`.
///
/// ```
/// let attrs = host_loader::LaunchAttributes::new().programmatic_stream_serialization(true);
/// assert!(attrs.is_programmatic());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaunchAttributes {
    programmatic: bool,
    priority: Option<i32>,
    cluster: Option<(u32, u32, u32)>,
    cooperative: bool,
}

impl LaunchAttributes {
    /// No attributes.
    pub fn new() -> Self {
        Self::default()
    }

    /// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` (programmatic dependent
    /// launch, sm_90+): this launch may start before the previous kernel on the stream
    /// has finished, once every block of that kernel has called
    /// `device_std::grid_dependency::launch_dependents` (PTX
    /// `griddepcontrol.launch_dependents`) or exited. The kernel must call
    /// `device_std::grid_dependency::wait` (`griddepcontrol.wait`) before it reads
    /// anything the previous kernel writes. Ignored by the driver before sm_90.
    pub fn programmatic_stream_serialization(mut self, on: bool) -> Self {
        self.programmatic = on;
        self
    }

    /// `CU_LAUNCH_ATTRIBUTE_PRIORITY`: the launch's priority, as a stream priority
    /// (`cuCtxGetStreamPriorityRange`; lower numbers are higher priority; the driver
    /// clamps values outside the device's range).
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = Some(priority);
        self
    }

    /// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` (thread-block clusters, sm_90+): blocks
    /// run in clusters of `x × y × z` CTAs, co-scheduled on one GPC, which can
    /// synchronise (`device_std::cluster::sync`) and read and write each other's shared
    /// memory. Checked before the driver sees it, by
    /// [`Kernel::launch_with`](crate::Kernel::launch_with): every dimension at least 1 and
    /// dividing the grid's, at most 8 CTAs (the portable cluster size; larger
    /// non-portable sizes are not enabled here), a device of compute capability 9.0 or
    /// newer, and no more CTAs than `cuOccupancyMaxPotentialClusterSize` says fit for
    /// this kernel and block shape.
    pub fn cluster_dim(mut self, x: u32, y: u32, z: u32) -> Self {
        self.cluster = Some((x, y, z));
        self
    }

    /// `CU_LAUNCH_ATTRIBUTE_COOPERATIVE` (`cuLaunchCooperativeKernel`): every block of
    /// the grid is resident at once, so the kernel may call `device_std::grid::sync`.
    /// Checked by [`Kernel::launch_with`](crate::Kernel::launch_with) before the driver
    /// sees it: the grid must not exceed
    /// [`Kernel::max_cooperative_blocks`](crate::Kernel::max_cooperative_blocks) for the
    /// launch's block shape and dynamic shared memory (the error gives both numbers).
    pub fn cooperative(mut self, on: bool) -> Self {
        self.cooperative = on;
        self
    }

    /// Whether the launch is cooperative.
    pub fn is_cooperative(&self) -> bool {
        self.cooperative
    }

    /// The cluster shape, if set.
    pub fn cluster(&self) -> Option<(u32, u32, u32)> {
        self.cluster
    }

    /// Whether programmatic stream serialization is on.
    pub fn is_programmatic(&self) -> bool {
        self.programmatic
    }

    /// The priority, if set.
    pub fn launch_priority(&self) -> Option<i32> {
        self.priority
    }

    fn is_empty(&self) -> bool {
        !self.programmatic && self.priority.is_none() && self.cluster.is_none() && !self.cooperative
    }

    /// The `CUlaunchAttribute`s these attributes stand for.
    pub(crate) fn to_driver_list(self) -> Vec<cudarc::driver::sys::CUlaunchAttribute> {
        use cudarc::driver::sys::{
            CUlaunchAttribute, CUlaunchAttributeID as Id, CUlaunchAttributeValue as Value,
        };
        let attribute = |id, value| CUlaunchAttribute {
            id,
            pad: [0; 4],
            value,
        };
        let mut list = Vec::with_capacity(4);
        if self.programmatic {
            list.push(attribute(
                Id::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                Value {
                    programmaticStreamSerializationAllowed: 1,
                },
            ));
        }
        if self.cooperative {
            list.push(attribute(
                Id::CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
                Value { cooperative: 1 },
            ));
        }
        if let Some(priority) = self.priority {
            list.push(attribute(
                Id::CU_LAUNCH_ATTRIBUTE_PRIORITY,
                Value { priority },
            ));
        }
        if let Some((x, y, z)) = self.cluster {
            list.push(attribute(
                Id::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                Value {
                    clusterDim: cudarc::driver::sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
                        x,
                        y,
                        z,
                    },
                },
            ));
        }
        list
    }
}

/// The `CUlaunchConfig` of `cfg` on `stream` with the attribute list `list`, which must
/// outlive every use of the result (it points into it).
pub(crate) fn driver_config(
    cfg: &LaunchConfig,
    stream: &cudarc::driver::CudaStream,
    list: &mut [cudarc::driver::sys::CUlaunchAttribute],
) -> cudarc::driver::sys::CUlaunchConfig {
    cudarc::driver::sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: list.as_mut_ptr(),
        numAttrs: list.len() as u32,
    }
}

/// `cuLaunchKernel`, or `cuLaunchKernelEx` when `attrs` holds any attribute.
///
/// # Safety
///
/// As for `cudarc::driver::result::launch_kernel`: `func` is live, its context current,
/// `params` points at one live, initialized slot per kernel parameter, `cfg` fits.
pub(crate) unsafe fn launch_kernel(
    func: cudarc::driver::sys::CUfunction,
    stream: &cudarc::driver::CudaStream,
    cfg: &LaunchConfig,
    attrs: &LaunchAttributes,
    params: &mut [*mut std::ffi::c_void],
) -> Result<(), cudarc::driver::DriverError> {
    use cudarc::driver::sys;
    if attrs.is_empty() {
        // SAFETY: the caller's contract.
        return unsafe {
            cudarc::driver::result::launch_kernel(
                func,
                cfg.grid_dim,
                cfg.block_dim,
                cfg.shared_mem_bytes,
                stream.cu_stream(),
                params,
            )
        };
    }
    let mut list = attrs.to_driver_list();
    let config = driver_config(cfg, stream, &mut list);
    // SAFETY: `config` and `list` outlive the call, which copies them; the caller's
    // contract covers `func` and `params`.
    unsafe {
        sys::cuLaunchKernelEx(&config, func, params.as_mut_ptr(), std::ptr::null_mut()).result()
    }
}
