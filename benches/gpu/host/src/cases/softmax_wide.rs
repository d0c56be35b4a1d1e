//! Row softmax over rows of 2^17 and 2^18 floats (512 KiB and 1 MiB), three ways, Rust
//! and nvcc each (`bench_kernels::softmax_wide`): each row over a cluster of 8 CTAs,
//! the parts' states merged through distributed shared memory (the input read once, one
//! launch); the same 8-way split without a cluster (states through global memory, two
//! launches, the input read twice); and one block per row (the same two launches with
//! one part). Few rows leave one-block-per-row short of blocks; splitting fills the GPU,
//! and the cluster is what lets a split row be read once. Also checked: the compiled
//! cluster shape, a launch naming it as an attribute (same results), and one naming
//! another shape (refused before the driver).

use anyhow::{ensure, Result};
use cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as MAX_DYN;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use host_loader::{Slice, SliceMut};
use rand::Rng;

use super::{launch_in_out, poisoned, rng, softmax_f64, timed, Env, Launch, Row};
use bench_kernels::SOFTMAX_CLUSTER_PARTS;

/// Threads per block, every variant.
const THREADS: u32 = 1024;

/// What the variants write: the output and the split's per-part states.
struct Buffers {
    out: CudaSlice<f32>,
    maxes: CudaSlice<f32>,
    sums: CudaSlice<f32>,
}

pub(super) fn softmax_wide(env: &Env) -> Result<Vec<Row>> {
    let shapes: &[(usize, usize)] = if env.opts.quick {
        &[(3, 1 << 12)]
    } else {
        &[(16, 1 << 18), (128, 1 << 17)]
    };
    let mut rows_out = Vec::new();
    for &(rows, cols) in shapes {
        rows_out.extend(shape(env, rows, cols)?);
    }
    Ok(rows_out)
}

fn shape(env: &Env, rows: usize, cols: usize) -> Result<Vec<Row>> {
    let parts = SOFTMAX_CLUSTER_PARTS;
    let mut r = rng(env, 23 ^ cols as u64);
    let input: Vec<f32> = (0..rows * cols)
        .map(|_| r.random_range(-8.0..8.0))
        .collect();
    let in_d = env.stream.clone_htod(&input)?;
    let (c32, r32) = (u32::try_from(cols)?, u32::try_from(rows)?);
    let part_bytes = c32 / parts * 4;
    let cfg = |blocks: u32, shared: u32| LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: shared,
    };
    let (cluster_cfg, split_cfg, row_cfg) = (
        cfg(r32 * parts, part_bytes),
        cfg(r32 * parts, 0),
        cfg(r32, 0),
    );
    let k_cluster = env
        .rust
        .kernel::<(Slice<f32>, SliceMut<f32>, u32)>("softmax_cluster")?;
    type Stats = (Slice<f32>, SliceMut<f32>, SliceMut<f32>, u32, u32);
    type Finish = (Slice<f32>, Slice<f32>, Slice<f32>, SliceMut<f32>, u32, u32);
    let k_stats = env.rust.kernel::<Stats>("softmax_split_stats")?;
    let k_finish = env.rust.kernel::<Finish>("softmax_split_finish")?;
    let f_cluster = env.reference.load_function("softmax_cluster_ref")?;
    let f_stats = env.reference.load_function("softmax_split_stats_ref")?;
    let f_finish = env.reference.load_function("softmax_split_finish_ref")?;
    f_cluster.set_attribute(MAX_DYN, part_bytes as i32)?;

    // SAFETY (every launch below): block b reads part b of the input and writes part b
    // of `out` (and maxes[b], sums[b]); the buffers hold rows * cols floats and
    // rows * parts states; each kernel's grid is rows * parts (rows for one part).
    let rust_cluster = |b: &mut Buffers| -> Result<()> {
        Ok(unsafe { k_cluster.launch(env.stream, cluster_cfg, (&in_d, &mut b.out, c32)) }?)
    };
    // The compiled cluster shape applies to a plain launch; the attribute form must
    // agree with it, and another shape is refused before the driver.
    let cluster_shape = (SOFTMAX_CLUSTER_PARTS, 1, 1);
    ensure!(
        k_cluster.required_cluster() == Some(cluster_shape),
        "softmax_cluster: compiled cluster shape {:?}, want {cluster_shape:?}",
        k_cluster.required_cluster()
    );
    let attrs = host_loader::LaunchAttributes::new().cluster_dim(parts, 1, 1);
    let rust_cluster_attr = |b: &mut Buffers| -> Result<()> {
        Ok(unsafe {
            k_cluster.launch_with(env.stream, cluster_cfg, &attrs, (&in_d, &mut b.out, c32))
        }?)
    };
    let rust_split = |b: &mut Buffers, cfg: LaunchConfig, parts: u32| -> Result<()> {
        unsafe {
            k_stats.launch(
                env.stream,
                cfg,
                (&in_d, &mut b.maxes, &mut b.sums, c32, parts),
            )?;
            k_finish.launch(
                env.stream,
                cfg,
                (&in_d, &b.maxes, &b.sums, &mut b.out, c32, parts),
            )?;
        }
        Ok(())
    };
    let nvcc_cluster = |b: &mut Buffers| unsafe {
        launch_in_out(env, &f_cluster, cluster_cfg, &in_d, &mut b.out, &c32)
    };
    let nvcc_split = |b: &mut Buffers, cfg: LaunchConfig, parts: u32| -> Result<()> {
        unsafe {
            env.stream
                .launch_builder(&f_stats)
                .arg(&in_d)
                .arg(&mut b.maxes)
                .arg(&mut b.sums)
                .arg(&c32)
                .arg(&parts)
                .launch(cfg)?;
            env.stream
                .launch_builder(&f_finish)
                .arg(&in_d)
                .arg(&b.maxes)
                .arg(&b.sums)
                .arg(&mut b.out)
                .arg(&c32)
                .arg(&parts)
                .launch(cfg)?;
        }
        Ok(())
    };
    let rust_split8 = |b: &mut Buffers| rust_split(b, split_cfg, parts);
    let nvcc_split8 = |b: &mut Buffers| nvcc_split(b, split_cfg, parts);
    let rust_row = |b: &mut Buffers| rust_split(b, row_cfg, 1);
    let nvcc_row = |b: &mut Buffers| nvcc_split(b, row_cfg, 1);
    let variants: [(&'static str, Launch<'_, Buffers>); 6] = [
        ("rust cluster of 8", &rust_cluster),
        ("nvcc cluster of 8", &nvcc_cluster),
        ("rust split in 8, 2 launches", &rust_split8),
        ("nvcc split in 8, 2 launches", &nvcc_split8),
        ("rust block per row, 2 launches", &rust_row),
        ("nvcc block per row, 2 launches", &nvcc_row),
    ];

    // Every element of the first, the last and two random rows (every row when quick)
    // against f64, relative error at most 1e-4, and every row's sum within 1e-4 of 1;
    // outputs and states poisoned first.
    let sample: Vec<usize> = if env.opts.quick {
        (0..rows).collect()
    } else {
        vec![
            0,
            rows - 1,
            r.random_range(0..rows),
            r.random_range(0..rows),
        ]
    };
    let want: Vec<(usize, Vec<f32>)> = sample
        .iter()
        .map(|&row| (row, softmax_f64(&input[row * cols..(row + 1) * cols])))
        .collect();
    let states = rows * parts as usize;
    let mut bufs = Buffers {
        out: poisoned(env, rows * cols)?,
        maxes: poisoned(env, states)?,
        sums: poisoned(env, states)?,
    };
    let wrong = host_loader::LaunchAttributes::new().cluster_dim(4, 1, 1);
    // SAFETY: refused before the driver (the shape differs from the compiled one).
    let refused = unsafe {
        k_cluster.launch_with(env.stream, cluster_cfg, &wrong, (&in_d, &mut bufs.out, c32))
    };
    ensure!(
        refused.as_ref().is_err_and(|e| e
            .to_string()
            .contains(&format!("compiled for clusters of {cluster_shape:?}"))),
        "softmax_cluster: a launch with clusters of 4 was not refused: {refused:?}"
    );
    let attr_variant: (&'static str, Launch<'_, Buffers>) =
        ("rust cluster of 8 (attribute)", &rust_cluster_attr);
    for (who, launch) in variants.iter().chain([&attr_variant]) {
        bufs.out = poisoned(env, rows * cols)?;
        bufs.maxes = poisoned(env, states)?;
        bufs.sums = poisoned(env, states)?;
        launch(&mut bufs)?;
        let got = env.stream.clone_dtoh(&bufs.out)?;
        ensure!(
            got.iter().all(|v| v.is_finite()),
            "softmax_wide {rows}x{cols} {who}: an output element was not written"
        );
        if let Some(row) = (0..rows).find(|&row| {
            let sum: f64 = got[row * cols..(row + 1) * cols]
                .iter()
                .map(|&v| f64::from(v))
                .sum();
            (sum - 1.0).abs() > 1e-4
        }) {
            anyhow::bail!("softmax_wide {rows}x{cols} {who}: row {row} does not sum to 1");
        }
        for (row, w) in &want {
            let g = &got[row * cols..(row + 1) * cols];
            let bad = (0..cols)
                .filter(|&i| (g[i] - w[i]).abs() > 1e-4 * w[i].abs())
                .count();
            ensure!(
                bad == 0,
                "softmax_wide {rows}x{cols} {who} row {row}: {bad} of {cols} elements off \
                 the f64 reference by more than 1e-4 relative (first: {:?})",
                (0..cols)
                    .find(|&i| (g[i] - w[i]).abs() > 1e-4 * w[i].abs())
                    .map(|i| (i, g[i], w[i]))
            );
        }
    }
    // Bytes the cluster kernel moves: the input read once, the output written once.
    let bytes = 2.0 * (rows * cols * 4) as f64;
    timed(
        env,
        &format!("softmax_wide {rows}x{cols}"),
        (bytes, 0.0),
        &mut bufs,
        |_| Ok(()),
        &variants,
    )
}
