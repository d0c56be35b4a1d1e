//! `node-bench --cases`: the other benchmark kernels as graph nodes at their smallest size
//! (one block), each against its nvcc twin from `benches/gpu/reference.cu` (issue 30,
//! point 2: "every benchmark kernel at its smallest size"). Each kernel becomes a graph of
//! `steps` nodes of the same launch, in capture order; after one replay both outputs are
//! checked against a CPU reference of `steps` applications (the accumulating kernels,
//! `saxpy`, `reduce_sum` and `histogram`, add up; the others are idempotent).

use anyhow::{bail, ensure, Result};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use host_loader::graph::{self, BufMut, GraphExec};
use host_loader::{LaunchConfig, Module, PtrMut, Slice, SliceMut};
use rand::{Rng, SeedableRng};

/// An error `err` outside `bound`: above it, or NaN.
fn outside(err: f64, bound: f64) -> bool {
    err.is_nan() || err > bound
}

/// The kernels `--cases` knows, in the order they run.
pub const ALL: &[&str] = &[
    "saxpy",
    "reduce_sum",
    "histogram",
    "softmax",
    "transpose",
    "sgemm",
];

/// One case: what it computes ([`Spec`]) and its device buffers ([`Bufs`]).
pub struct Case {
    pub spec: Spec,
    pub bufs: Bufs,
}

/// A case's launch and host inputs.
pub struct Spec {
    pub name: &'static str,
    cfg: LaunchConfig,
    /// Elements of the input (`n × n` for the matrices).
    n: usize,
    alpha: f32,
    x: Vec<f32>,
    y: Vec<f32>,
    bytes: Vec<u8>,
    /// The initial `f32` output (saxpy's `y`, else zeros).
    out_f0: Vec<f32>,
}

/// A case's inputs on the device and its two outputs, `[rust, nvcc]`. Unused buffers
/// hold one element.
pub struct Bufs {
    x_d: CudaSlice<f32>,
    y_d: CudaSlice<f32>,
    bytes_d: CudaSlice<u8>,
    out_f: [CudaSlice<f32>; 2],
    out_u: [CudaSlice<u32>; 2],
}

/// A graph's output buffer, to read back through its `GraphExec`.
#[derive(Clone, Copy)]
pub enum Out {
    F(BufMut<f32>),
    U(BufMut<u32>),
}

/// An output read back.
pub enum Got {
    F(Vec<f32>),
    U(Vec<u32>),
}

impl Out {
    /// The buffer's contents after the graph's last replay.
    pub fn read(self, e: &GraphExec<'_>, stream: &std::sync::Arc<CudaStream>) -> Result<Got> {
        Ok(match self {
            Out::F(b) => Got::F(stream.clone_dtoh(e.slice(b.read())?)?),
            Out::U(b) => Got::U(stream.clone_dtoh(e.slice(b.read())?)?),
        })
    }
}

fn block(threads: (u32, u32, u32), shared: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: threads,
        shared_mem_bytes: shared as u32,
    }
}

impl Case {
    /// Inputs for `name` at one block's size, from `seed`.
    pub fn new(name: &str, stream: &std::sync::Arc<CudaStream>, seed: u64) -> Result<Case> {
        let mut r = rand::rngs::StdRng::seed_from_u64(seed);
        let mut f = |k: usize, lo: f32, hi: f32| -> Vec<f32> {
            (0..k).map(|_| r.random_range(lo..hi)).collect()
        };
        let (name, cfg, n, x, y, out_len): (&'static str, _, usize, _, _, usize) = match name {
            // 1024 floats, four per thread: one block of 256.
            "saxpy" => (
                "saxpy",
                block((256, 1, 1), 0),
                1024,
                f(1024, -1.0, 1.0),
                f(1024, -1.0, 1.0),
                1024,
            ),
            "reduce_sum" => (
                "reduce_sum",
                block((256, 1, 1), 0),
                1024,
                f(1024, -1.0, 1.0),
                vec![0.0],
                1,
            ),
            "histogram" => (
                "histogram",
                block((256, 1, 1), 0),
                4096,
                vec![0.0],
                vec![0.0],
                1,
            ),
            // One row of 1024 columns, the row in dynamic shared memory.
            "softmax" => (
                "softmax",
                block((256, 1, 1), 4096),
                1024,
                f(1024, -8.0, 8.0),
                vec![0.0],
                1024,
            ),
            // One 32 × 32 tile.
            "transpose" => (
                "transpose",
                block((32, 8, 1), 0),
                32,
                f(1024, -1.0, 1.0),
                vec![0.0],
                1024,
            ),
            // One 128 × 128 tile of C.
            "sgemm" => (
                "sgemm",
                block((256, 1, 1), 0),
                128,
                f(128 * 128, -1.0, 1.0),
                f(128 * 128, -1.0, 1.0),
                128 * 128,
            ),
            other => bail!("--cases: no case `{other}` (known: {})", ALL.join(", ")),
        };
        let alpha = 1.5f32;
        let bytes: Vec<u8> = if name == "histogram" {
            (0..n)
                .map(|_| if r.random_bool(0.25) { 7 } else { r.random() })
                .collect()
        } else {
            vec![0]
        };
        let out_f0 = if name == "saxpy" {
            y.clone()
        } else {
            vec![0.0; out_len]
        };
        let bufs = Bufs {
            x_d: stream.clone_htod(&x)?,
            y_d: stream.clone_htod(&y)?,
            bytes_d: stream.clone_htod(&bytes)?,
            out_f: [stream.clone_htod(&out_f0)?, stream.clone_htod(&out_f0)?],
            out_u: [stream.alloc_zeros(256)?, stream.alloc_zeros(256)?],
        };
        let spec = Spec {
            name,
            cfg,
            n,
            alpha,
            out_f0,
            x,
            y,
            bytes,
        };
        Ok(Case { spec, bufs })
    }
}

impl Spec {
    /// The Rust and the nvcc graph of `steps` nodes each, on `stream`.
    pub fn graphs<'a>(
        &self,
        bufs: &'a mut Bufs,
        stream: &'a std::sync::Arc<CudaStream>,
        rust: &Module,
        nvcc: &Module,
        steps: usize,
    ) -> Result<[(GraphExec<'a>, Out); 2]> {
        let Bufs {
            x_d,
            y_d,
            bytes_d,
            out_f: [of_r, of_n],
            out_u: [ou_r, ou_n],
        } = bufs;
        let (cfg, alpha, name) = (self.cfg, self.alpha, self.name);
        let (n32, n64) = (self.n as u32, self.n as u64);
        let (x_d, y_d, bytes_d) = (&*x_d, &*y_d, &*bytes_d);
        // A graph of `steps` launches, the buffers registered once.
        macro_rules! chain {
            ($r:ident, { $($register:tt)* }, $out:expr, $launch:expr) => {{
                let (g, out) = graph::capture(stream, |$r| {
                    $($register)*
                    for _ in 0..steps {
                        // SAFETY: each kernel reads its inputs and writes its output within
                        // the registered buffers, sized for its one-block `cfg` as gpu-bench
                        // sizes them for its grids; the nodes run one after the other.
                        unsafe { $launch }?;
                    }
                    Ok($out)
                })?;
                let mut e = g.instantiate()?;
                e.upload(stream)?;
                (e, out)
            }};
        }
        // nvcc's pointer parameters are `.u64`: its twins take the buffers' addresses (the
        // buffers registered in the graph all the same, which keeps them borrowed).
        let (xa, ya, ba) = (
            x_d.device_ptr(stream).0,
            y_d.device_ptr(stream).0,
            bytes_d.device_ptr(stream).0,
        );
        let (ofa, oua) = (of_n.device_ptr(stream).0, ou_n.device_ptr(stream).0);
        Ok(match name {
            "saxpy" => {
                let kr = rust.kernel::<(f32, Slice<f32>, SliceMut<f32>)>("saxpy")?;
                let kn = nvcc.kernel::<(f32, u64, u64, u64)>("saxpy_ref")?;
                [
                    chain!(
                        r,
                        {
                            let (x, y) = (r.read(x_d)?, r.write(of_r)?);
                        },
                        Out::F(y),
                        r.launch(&kr, cfg, (alpha, x, y))
                    ),
                    chain!(
                        r,
                        {
                            let (_, y) = (r.read(x_d)?, r.write(of_n)?);
                        },
                        Out::F(y),
                        r.launch(&kn, cfg, (alpha, xa, ofa, n64))
                    ),
                ]
            }
            "reduce_sum" => {
                let kr = rust.kernel::<(Slice<f32>, PtrMut<f32>)>("reduce_sum")?;
                let kn = nvcc.kernel::<(u64, u64, u64)>("reduce_sum_ref")?;
                [
                    chain!(
                        r,
                        {
                            let (x, o) = (r.read(x_d)?, r.write(of_r)?);
                        },
                        Out::F(o),
                        r.launch(&kr, cfg, (x, o))
                    ),
                    chain!(
                        r,
                        {
                            let (_, o) = (r.read(x_d)?, r.write(of_n)?);
                        },
                        Out::F(o),
                        r.launch(&kn, cfg, (xa, ofa, n64))
                    ),
                ]
            }
            "histogram" => {
                let kr = rust.kernel::<(Slice<u8>, PtrMut<u32>)>("histogram")?;
                let kn = nvcc.kernel::<(u64, u64, u64)>("histogram_ref")?;
                [
                    chain!(
                        r,
                        {
                            let (d, o) = (r.read(bytes_d)?, r.write(ou_r)?);
                        },
                        Out::U(o),
                        r.launch(&kr, cfg, (d, o))
                    ),
                    chain!(
                        r,
                        {
                            let (_, o) = (r.read(bytes_d)?, r.write(ou_n)?);
                        },
                        Out::U(o),
                        r.launch(&kn, cfg, (ba, oua, n64))
                    ),
                ]
            }
            "softmax" | "transpose" => {
                let entry = name;
                let kr = rust.kernel::<(Slice<f32>, SliceMut<f32>, u32)>(entry)?;
                let kn = nvcc.kernel::<(u64, u64, u32)>(&format!("{entry}_ref"))?;
                [
                    chain!(
                        r,
                        {
                            let (x, o) = (r.read(x_d)?, r.write(of_r)?);
                        },
                        Out::F(o),
                        r.launch(&kr, cfg, (x, o, n32))
                    ),
                    chain!(
                        r,
                        {
                            let (_, o) = (r.read(x_d)?, r.write(of_n)?);
                        },
                        Out::F(o),
                        r.launch(&kn, cfg, (xa, ofa, n32))
                    ),
                ]
            }
            "sgemm" => {
                let kr = rust.kernel::<(Slice<f32>, Slice<f32>, SliceMut<f32>, u32)>("sgemm")?;
                let kn = nvcc.kernel::<(u64, u64, u64, u32)>("sgemm_ref")?;
                [
                    chain!(
                        r,
                        {
                            let (a, b, c) = (r.read(x_d)?, r.read(y_d)?, r.write(of_r)?);
                        },
                        Out::F(c),
                        r.launch(&kr, cfg, (a, b, c, n32))
                    ),
                    chain!(
                        r,
                        {
                            let (_, _, c) = (r.read(x_d)?, r.read(y_d)?, r.write(of_n)?);
                        },
                        Out::F(c),
                        r.launch(&kn, cfg, (xa, ya, ofa, n32))
                    ),
                ]
            }
            other => bail!("no graphs for `{other}`"),
        })
    }

    /// Checks both outputs after one replay of each graph of `steps` nodes from the
    /// initial buffers against the CPU.
    pub fn check(&self, got: [Got; 2], steps: usize) -> Result<()> {
        let s = steps as f64;
        for (who, got) in ["rust", "nvcc"].into_iter().zip(got) {
            let what = format!("{} {who}", self.name);
            let got = match got {
                Got::U(got) => {
                    ensure!(self.name == "histogram", "{what}: u32 output");
                    let mut want = vec![0u32; 256];
                    for &b in &self.bytes {
                        want[b as usize] += steps as u32;
                    }
                    ensure!(
                        got == want,
                        "{what}: bins differ from {steps} × the CPU's counts"
                    );
                    continue;
                }
                Got::F(got) => got,
            };
            // (value, allowed absolute error) per output element.
            let want: Vec<(f64, f64)> = match self.name {
                "saxpy" => (0..self.n)
                    .map(|i| {
                        let mut y = self.out_f0[i];
                        for _ in 0..steps {
                            y = self.alpha.mul_add(self.x[i], y);
                        }
                        (f64::from(y), 1e-6 * (1.0 + f64::from(y).abs()))
                    })
                    .collect(),
                "reduce_sum" => {
                    let sum: f64 = self.x.iter().map(|&v| f64::from(v)).sum();
                    let abs: f64 = self.x.iter().map(|&v| f64::from(v).abs()).sum();
                    vec![(s * sum, 1e-5 * s * abs)]
                }
                "softmax" => {
                    let m = self.x.iter().fold(f32::MIN, |a, &b| a.max(b));
                    let e: Vec<f64> = self.x.iter().map(|&v| f64::from(v - m).exp()).collect();
                    let z: f64 = e.iter().sum();
                    e.iter().map(|v| (v / z, 1e-6 + 1e-5 * v / z)).collect()
                }
                "transpose" => {
                    let n = self.n;
                    (0..n * n)
                        .map(|i| (f64::from(self.x[(i % n) * n + i / n]), 0.0))
                        .collect()
                }
                "sgemm" => {
                    let n = self.n;
                    (0..n * n)
                        .map(|i| {
                            let (row, col) = (i / n, i % n);
                            let (mut c, mut mag) = (0.0f64, 0.0f64);
                            for j in 0..n {
                                let p =
                                    f64::from(self.x[row * n + j]) * f64::from(self.y[j * n + col]);
                                c += p;
                                mag += p.abs();
                            }
                            (c, 1e-5 * mag)
                        })
                        .collect()
                }
                other => bail!("no check for `{other}`"),
            };
            ensure!(
                got.len() == want.len(),
                "{what}: {} outputs, want {}",
                got.len(),
                want.len()
            );
            if let Some((i, (w, tol))) = want
                .iter()
                .enumerate()
                .find(|&(i, &(w, tol))| outside((f64::from(got[i]) - w).abs(), tol))
            {
                bail!("{what}: element {i} is {}, want {w} (± {tol})", got[i]);
            }
        }
        Ok(())
    }
}
