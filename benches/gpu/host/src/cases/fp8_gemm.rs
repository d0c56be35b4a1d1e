//! The FP8 GEMM: `examples/mma_gemm`'s `gemm_wgmma_fp8` (`c = scale · a · bᵀ`, e4m3 in,
//! `bf16` out, `f32` accumulation) against cuBLASLt's FP8 matmul (`cublasLtMatmul`
//! with `CUDA_R_8F_E4M3` operands, `CUDA_R_16BF` output, `CUBLAS_COMPUTE_32F`, the
//! "TN" form FP8 requires) at 4096³ and 8192³, interleaved in one run. cuBLASLt runs
//! twice: with `CUBLASLT_MATMUL_DESC_FAST_ACCUM` on (the sums stay in the tensor
//! cores' accumulators, as ours do: the like-for-like reference) and off (its
//! default, which adds partial sums into `f32` registers every few `k`-steps).
//! `gemm_wgmma_fp8_tma_store` (the same kernel storing `c` through a tensor map) runs
//! beside them.

use anyhow::{ensure, Result};
use core::ffi::c_void;
use cudarc::cublaslt::{result as lt, sys};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use device_std::{bf16, F8E4M3};
use rand::Rng;
use std::sync::Arc;

use super::{
    check_gemm_samples, check_written, gemm_samples, map_c, poisoned_bf16, rng, timed, Env, Launch,
    MapC, Row,
};

/// One cuBLASLt FP8 matmul plan for `n × n × n`: handle, descriptors, the heuristic's
/// algorithm and its workspace, freed on drop.
struct LtFp8 {
    handle: sys::cublasLtHandle_t,
    desc: sys::cublasLtMatmulDesc_t,
    layouts: [sys::cublasLtMatrixLayout_t; 3],
    algo: sys::cublasLtMatmulAlgo_t,
    workspace: CudaSlice<u8>,
}

impl LtFp8 {
    /// Row-major `c` (`n × n`) = `a · bᵀ` is column-major `cᵀ = b · aᵀ`: cuBLASLt's `A`
    /// is our `b` (stored `n × k`, read transposed), its `B` our `a`.
    fn new(stream: &Arc<CudaStream>, n: usize, fast_accum: bool) -> Result<Self> {
        let workspace_bytes = 32usize << 20; // NVIDIA's recommendation for Hopper
                                             // Built up in place, so that `Drop` frees whatever was made before an error.
        let mut plan = LtFp8 {
            handle: lt::create_handle()?,
            desc: core::ptr::null_mut(),
            layouts: [core::ptr::null_mut(); 3],
            // SAFETY: a plain C struct of integers; overwritten by the heuristic's choice.
            algo: unsafe { core::mem::zeroed() },
            workspace: stream.alloc_zeros::<u8>(workspace_bytes)?,
        };
        plan.desc = lt::create_matmul_desc(
            sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            sys::cudaDataType::CUDA_R_32F,
        )?;
        let desc = plan.desc;
        // SAFETY: `desc` is live; `value` has the attribute's type (TRANSA/TRANSB are
        // `int32_t`, FAST_ACCUM an `int8_t`: a size that differs is refused).
        let set = |attr, value: *const c_void, size: usize| -> Result<()> {
            unsafe { lt::set_matmul_desc_attribute(desc, attr, value, size) }?;
            Ok(())
        };
        use sys::cublasLtMatmulDescAttributes_t as A;
        let (op_t, op_n, fast) = (1i32, 0i32, i8::from(fast_accum)); // CUBLAS_OP_T, CUBLAS_OP_N
        set(
            A::CUBLASLT_MATMUL_DESC_TRANSA,
            (&op_t as *const i32).cast(),
            4,
        )?;
        set(
            A::CUBLASLT_MATMUL_DESC_TRANSB,
            (&op_n as *const i32).cast(),
            4,
        )?;
        set(
            A::CUBLASLT_MATMUL_DESC_FAST_ACCUM,
            (&fast as *const i8).cast(),
            1,
        )?;
        let n64 = n as u64;
        for (slot, ty) in plan.layouts.iter_mut().zip([
            sys::cudaDataType::CUDA_R_8F_E4M3,
            sys::cudaDataType::CUDA_R_8F_E4M3,
            sys::cudaDataType::CUDA_R_16BF,
        ]) {
            *slot = lt::create_matrix_layout(ty, n64, n64, n as i64)?;
        }
        let pref = lt::create_matmul_pref()?;
        let bytes = workspace_bytes as u64;
        // SAFETY: `pref` is live; the attribute is a `uint64_t`. Every descriptor is live;
        // C and D share a layout.
        let heuristic = unsafe {
            lt::set_matmul_pref_attribute(
                pref,
                sys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&bytes as *const u64).cast(),
                core::mem::size_of::<u64>(),
            )
            .and_then(|()| {
                let l = plan.layouts;
                lt::get_matmul_algo_heuristic(plan.handle, desc, l[0], l[1], l[2], l[2], pref)
            })
        };
        // SAFETY: created above, used by nothing after this.
        unsafe { lt::destroy_matmul_pref(pref) }?;
        plan.algo = heuristic?.algo;
        Ok(plan)
    }

    /// `c = alpha · a · bᵀ` (row-major, `n × n`), enqueued on `stream`.
    fn run(
        &self,
        stream: &Arc<CudaStream>,
        alpha: f32,
        a: &CudaSlice<F8E4M3>,
        b: &CudaSlice<F8E4M3>,
        c: &mut CudaSlice<bf16>,
    ) -> Result<()> {
        let beta = 0.0f32;
        let (pa, _ga) = a.device_ptr(stream);
        let (pb, _gb) = b.device_ptr(stream);
        let (pw, _gw) = self.workspace.device_ptr(stream);
        let (pc, _gc) = c.device_ptr_mut(stream);
        // SAFETY: the plan was made for these shapes and types; each buffer holds n * n
        // elements (checked by the caller) and outlives the enqueued matmul (the guards
        // record its use on the stream).
        unsafe {
            lt::matmul(
                self.handle,
                self.desc,
                (&alpha as *const f32).cast(),
                (&beta as *const f32).cast(),
                pb as *const c_void,
                self.layouts[0],
                pa as *const c_void,
                self.layouts[1],
                pc as *const c_void,
                self.layouts[2],
                pc as *mut c_void,
                self.layouts[2],
                &self.algo,
                pw as *mut c_void,
                self.workspace.len(),
                stream.cu_stream() as sys::cudaStream_t,
            )
        }?;
        Ok(())
    }
}

impl Drop for LtFp8 {
    fn drop(&mut self) {
        // SAFETY: each was created in `new` (or is still null), destroyed once; failures
        // cannot be reported from a drop and leave nothing to undo.
        unsafe {
            for l in self.layouts.into_iter().filter(|l| !l.is_null()) {
                let _ = lt::destroy_matrix_layout(l);
            }
            if !self.desc.is_null() {
                let _ = lt::destroy_matmul_desc(self.desc);
            }
            let _ = lt::destroy_handle(self.handle);
        }
    }
}

/// The case: both kernels checked on sampled elements against an `f64` reference, then
/// timed. Needs `--gemm-ptx`.
pub(super) fn gemm_fp8(env: &Env) -> Result<Vec<Row>> {
    use host_loader::tma::TensorMap;
    use host_loader::SliceMut;
    use mma_gemm_kernels::{WG_BK_FP8, WG_BM, WG_BN};
    type MapA<'a> = TensorMap<'a, F8E4M3, 2, WG_BK_FP8, WG_BM, 1, 1, 1, 128>;
    type MapB<'a> = TensorMap<'a, F8E4M3, 2, WG_BK_FP8, WG_BN, 1, 1, 1, 128>;
    let Some(module) = env.gemm else {
        anyhow::bail!("gemm_fp8 needs --gemm-ptx (examples/mma_gemm built with --arch sm_90a)");
    };
    let gemm = module.kernel::<(
        MapA<'static>,
        MapB<'static>,
        SliceMut<bf16>,
        u32,
        u32,
        u32,
        u32,
        f32,
    )>("gemm_wgmma_fp8")?;
    // The same writing c through a map (boxes of 64 columns x 16 rows).
    let gemm_store = module.kernel::<(
        MapA<'static>,
        MapB<'static>,
        MapC<'static>,
        u32,
        u32,
        u32,
        u32,
        f32,
    )>("gemm_wgmma_fp8_tma_store")?;
    let sizes: &[usize] = if env.opts.quick {
        &[512]
    } else {
        &[4096, 8192]
    };
    // Values up to ±400 (per-tensor scaling's target range for e4m3), scales undone
    // in the epilogue.
    let scale = 1.0f32 / (400.0 * 400.0);
    let mut rows = Vec::new();
    for &n in sizes {
        let mut r = rng(env, 13 + n as u64);
        let mut draw = |len: usize| -> Vec<F8E4M3> {
            (0..len)
                .map(|_| F8E4M3::from_f32(r.random_range(-400.0..400.0)))
                .collect()
        };
        let (a, bt) = (draw(n * n), draw(n * n));
        let (a_d, b_d) = (env.stream.clone_htod(&a)?, env.stream.clone_htod(&bt)?);
        let dims = [n as u64, n as u64];
        let stride = [n as u64];
        let map_a = MapA::tiled(env.stream, &a_d, dims, &stride)?;
        let map_b = MapB::tiled(env.stream, &b_d, dims, &stride)?;
        let n32 = n as u32;
        let tiles = u32::try_from(n.div_ceil(WG_BN) * n.div_ceil(WG_BM))?;
        let cfg = |blocks: u32| host_loader::LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (384, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the blocks write the 128 x 256 tiles of c, inside n * n, each tile
        // once; the maps describe a_d and b_d, which outlive every launch.
        let launch = |c: &mut CudaSlice<bf16>, blocks: u32| -> Result<()> {
            ensure!(c.len() >= n * n);
            Ok(unsafe {
                gemm.launch(
                    env.stream,
                    cfg(blocks),
                    (&map_a, &map_b, c, n32, n32, n32, 8, scale),
                )
            }?)
        };
        let sms = super::sm_count(env)?;
        // c through its map: the kernel writes its own poisoned buffer, mapped once (no
        // map is encoded inside the timing), checked after its first launch and after
        // the timing.
        let store_into = |map: &MapC<'_>| -> Result<()> {
            // SAFETY: as `launch`; the blocks write c only through its map, each box
            // once.
            Ok(unsafe {
                gemm_store.launch(
                    env.stream,
                    cfg(tiles.min(sms)),
                    (&map_a, &map_b, map, n32, n32, n32, 8, scale),
                )
            }?)
        };
        let c_store = poisoned_bf16(env, n * n)?;
        let map_store = map_c(env, &c_store, n, n)?;
        let store_timed = |_: &mut CudaSlice<bf16>| store_into(&map_store);
        let rust = |c: &mut CudaSlice<bf16>| launch(c, tiles);
        let rust_persistent = |c: &mut CudaSlice<bf16>| launch(c, tiles.min(sms));
        let (fast, exact) = (
            LtFp8::new(env.stream, n, true)?,
            LtFp8::new(env.stream, n, false)?,
        );
        let lt_fast = |c: &mut CudaSlice<bf16>| {
            ensure!(c.len() >= n * n);
            fast.run(env.stream, scale, &a_d, &b_d, c)
        };
        let lt_exact = |c: &mut CudaSlice<bf16>| {
            ensure!(c.len() >= n * n);
            exact.run(env.stream, scale, &a_d, &b_d, c)
        };
        // Hopper's FP8 tensor cores keep about 14 bits of the sum between instructions
        // (DeepSeek-V3 §3.5.2): besides the bf16 bound, 2^-10 of Σ|a·b|·scale.
        let samples = gemm_samples(&mut r, (n, n), |i, j| {
            let (dot, abs) = (0..n)
                .map(|p| f64::from(a[i * n + p].to_f32()) * f64::from(bt[j * n + p].to_f32()))
                .fold((0.0, 0.0), |(d, s), v| (d + v, s + v.abs()));
            (f64::from(scale) * dot, f64::from(scale) * abs / 1024.0)
        });
        let variants: [(&'static str, Launch<'_, CudaSlice<bf16>>); 4] = [
            ("rust", &rust),
            ("rust persistent", &rust_persistent),
            ("cuBLASLt fast accum", &lt_fast),
            ("cuBLASLt", &lt_exact),
        ];
        for (who, launch) in variants {
            check_gemm_samples(env, &format!("gemm_fp8 {who}"), (n, n, n), launch, &samples)?;
        }
        let store_name = "gemm_fp8 rust tma-store persistent";
        store_into(&map_store)?;
        check_written(env, store_name, (n, n, n), &c_store, &samples)?;
        let variants: Vec<(&'static str, Launch<'_, CudaSlice<bf16>>)> = variants
            .into_iter()
            .chain([("rust tma-store persistent", &store_timed as _)])
            .collect();
        let mut c = env.stream.alloc_zeros::<bf16>(n * n)?;
        rows.append(&mut timed(
            env,
            &format!("gemm_fp8 {n}³"),
            (0.0, 2.0 * (n as f64).powi(3)),
            &mut c,
            |_| Ok(()),
            &variants,
        )?);
        // The timed tma-store launches wrote their own buffer: check it again.
        check_written(
            env,
            &format!("{store_name} (timed)"),
            (n, n, n),
            &c_store,
            &samples,
        )?;
    }
    Ok(rows)
}
