//! [`launch`]: checks the configuration, spreads the blocks over worker OS
//! threads, and returns the first error or the launch's statistics.

use super::block::run_cluster;
use super::context;
use super::error::{EmulatorError, ThreadCoords};
use super::global::WriteLog;
use super::shared_mem::Arena;
use core::sync::atomic::{AtomicU64, Ordering};
use corosensei::stack::DefaultStack;
use std::boxed::Box;
use std::format;
use std::string::{String, ToString};
use std::sync::{Mutex, Once};
use std::vec::Vec;

/// Most dynamic shared memory a launch may ask for, in bytes: sm_90's
/// per-block opt-in limit (227 KiB; `cudaFuncAttributeMaxDynamicSharedMemorySize`).
pub const MAX_DYNAMIC_SHARED_BYTES: u32 = 227 * 1024;

/// The shape of a launch, as `cuLaunchKernel` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks per grid along x, y, z (`gridDim`).
    pub grid: (u32, u32, u32),
    /// Threads per block along x, y, z (`blockDim`); at most 1024 in all.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory per block, in bytes (`sharedMemBytes`).
    pub dynamic_shared_bytes: u32,
    /// CTAs per thread-block cluster along x, y, z (`CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`);
    /// `(1, 1, 1)`: every block is its own cluster.
    pub cluster: (u32, u32, u32),
    /// Most static shared memory (`SharedArray`s) a block may declare, in bytes: the
    /// kernel's build target's limit, which ptxas enforces on the GPU — 49152 (48 KiB)
    /// for plain targets (`sm_90`), up to [`MAX_STATIC_SHARED_BYTES`] for
    /// architecture-specific ones (`sm_90a`, `sm_100a`; `sm_120a`: 101376).
    pub static_shared_limit: u32,
}

/// Most static shared memory an emulated block may declare with
/// [`LaunchConfig::with_static_shared_limit`], in bytes: ptxas's limit for `sm_90a`
/// and `sm_100a` (227 KiB, the whole opt-in shared memory of a block).
pub const MAX_STATIC_SHARED_BYTES: u32 = 232_448;

impl LaunchConfig {
    /// `grid` blocks of `block` threads, no dynamic shared memory.
    pub fn new(grid: (u32, u32, u32), block: (u32, u32, u32)) -> Self {
        LaunchConfig {
            grid,
            block,
            dynamic_shared_bytes: 0,
            cluster: (1, 1, 1),
            static_shared_limit: 48 * 1024,
        }
    }

    /// A 1D launch of `ceil(n / block_x)` blocks (at least one) of
    /// `block_x` threads: at least `n` threads.
    pub fn for_num_elems(n: u32, block_x: u32) -> Self {
        Self::new((n.div_ceil(block_x.max(1)).max(1), 1, 1), (block_x, 1, 1))
    }

    /// The same launch in thread-block clusters of `x × y × z` CTAs (at most 8 in all,
    /// each dividing the grid's dimension, as the driver requires), as
    /// `host_loader::LaunchAttributes::cluster_dim` does on the GPU. The CTAs of a
    /// cluster run together on one worker.
    pub fn with_cluster(self, x: u32, y: u32, z: u32) -> Self {
        LaunchConfig {
            cluster: (x, y, z),
            ..self
        }
    }

    /// The same launch for a kernel built for a target that allows `bytes` of static
    /// shared memory per block (see [`static_shared_limit`](Self::static_shared_limit);
    /// e.g. 232448 for `sm_90a`). More than [`MAX_STATIC_SHARED_BYTES`] is an
    /// [`EmulatorError::InvalidLaunch`].
    pub fn with_static_shared_limit(self, bytes: u32) -> Self {
        LaunchConfig {
            static_shared_limit: bytes,
            ..self
        }
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    pub fn with_dynamic_shared(self, bytes: u32) -> Self {
        LaunchConfig {
            dynamic_shared_bytes: bytes,
            ..self
        }
    }
}

/// How the emulator runs a launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// OS threads that run blocks; 0 (the default) means one per core.
    pub workers: usize,
    /// Stack of each emulated thread, in bytes (default 256 KiB; pages are
    /// committed only when touched).
    pub stack_bytes: usize,
    /// Shadow-check shared memory for uninitialised reads and data races
    /// (default on; bounds are always checked).
    pub check_shared: bool,
    /// Collect `device_println!` lines in [`LaunchStats::output`] instead of
    /// printing them (default off).
    pub capture_output: bool,
}

/// The default stack of an emulated thread, in bytes.
const DEFAULT_STACK: usize = 256 * 1024;

impl Default for Options {
    fn default() -> Self {
        Options {
            workers: 0,
            stack_bytes: DEFAULT_STACK,
            check_shared: true,
            capture_output: false,
        }
    }
}

/// What a successful launch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchStats {
    /// Blocks run.
    pub blocks: u64,
    /// Threads run.
    pub threads: u64,
    /// Block barriers completed, summed over blocks.
    pub barriers: u64,
    /// Warp-collective calls (one per lane per call), summed over blocks.
    pub warp_collectives: u64,
    /// `device_println!` lines, when [`Options::capture_output`] is set (in
    /// the order they were printed; blocks on different workers interleave).
    pub output: Vec<String>,
}

/// What every block of one launch shares.
pub(crate) struct Launch {
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
    pub(crate) block_size: u32,
    pub(crate) dynamic: u32,
    /// Most static shared memory per block, in bytes.
    pub(crate) static_limit: u32,
    /// CTAs per cluster along x, y, z.
    pub(crate) cluster: [u32; 3],
    /// A cooperative launch ([`launch_cooperative`]): the grid runs as one cluster whose
    /// barrier is `grid::sync`'s, which every thread of the grid must reach.
    pub(crate) cooperative: bool,
    /// Unique per launch in the process (never 0).
    pub(crate) id: u64,
    pub(crate) writes: WriteLog,
    /// The lowest linear index of a block that failed (`u64::MAX`: none).
    failed: AtomicU64,
    pub(crate) output: Option<Mutex<Vec<String>>>,
}

impl Launch {
    /// Whether a block before `block` failed, so `block` should stop. Blocks
    /// before the first failure run on, so that the error reported (the
    /// first block's) does not depend on timing.
    pub(crate) fn aborted(&self, block: u64) -> bool {
        self.failed.load(Ordering::Relaxed) < block
    }

    /// Coordinates of the thread with launch-wide linear id `global`
    /// (`block_linear * block_size + thread_linear`).
    pub(crate) fn coords(&self, global: u64) -> ThreadCoords {
        let (b, t) = (
            global / self.block_size as u64,
            (global % self.block_size as u64) as u32,
        );
        let (g, n) = (self.grid, self.block);
        ThreadCoords {
            block: (
                (b % g[0] as u64) as u32,
                ((b / g[0] as u64) % g[1] as u64) as u32,
                (b / (g[0] as u64 * g[1] as u64)) as u32,
            ),
            thread: (t % n[0], (t / n[0]) % n[1], t / (n[0] * n[1])),
        }
    }
}

fn validate(cfg: &LaunchConfig) -> Result<(), EmulatorError> {
    let invalid = |s: String| Err(EmulatorError::InvalidLaunch(s));
    let (g, b) = (cfg.grid, cfg.block);
    if context::in_kernel() {
        return invalid(
            "a launch from inside a kernel (dynamic parallelism is not emulated)".into(),
        );
    }
    if g.0 == 0 || g.1 == 0 || g.2 == 0 || b.0 == 0 || b.1 == 0 || b.2 == 0 {
        return invalid(format!("a zero dimension in grid {g:?} or block {b:?}"));
    }
    if g.0 > i32::MAX as u32 || g.1 > 65535 || g.2 > 65535 {
        return invalid(format!("grid {g:?} exceeds (2^31 - 1, 65535, 65535)"));
    }
    if b.0 > 1024 || b.1 > 1024 || b.2 > 64 || b.0 as u64 * b.1 as u64 * b.2 as u64 > 1024 {
        return invalid(format!(
            "block {b:?} exceeds (1024, 1024, 64) or 1024 threads in all"
        ));
    }
    let c = cfg.cluster;
    if c.0 == 0 || c.1 == 0 || c.2 == 0 {
        return invalid(format!("a zero dimension in cluster {c:?}"));
    }
    if g.0 % c.0 != 0 || g.1 % c.1 != 0 || g.2 % c.2 != 0 {
        return invalid(format!(
            "grid {g:?} is not a whole number of clusters {c:?}: each grid dimension must be a multiple of the cluster's"
        ));
    }
    if c.0 as u64 * c.1 as u64 * c.2 as u64 > 8 {
        return invalid(format!(
            "cluster {c:?} has more than the portable maximum of 8 CTAs"
        ));
    }
    if cfg.dynamic_shared_bytes > MAX_DYNAMIC_SHARED_BYTES {
        return invalid(format!(
            "{} bytes of dynamic shared memory exceed {MAX_DYNAMIC_SHARED_BYTES}",
            cfg.dynamic_shared_bytes
        ));
    }
    if cfg.static_shared_limit > MAX_STATIC_SHARED_BYTES {
        return invalid(format!(
            "a static shared memory limit of {} bytes exceeds {MAX_STATIC_SHARED_BYTES} (sm_90a's)",
            cfg.static_shared_limit
        ));
    }
    Ok(())
}

/// The launch-bounds check of a `#[kernel(max_threads = N)]` kernel, made by each of
/// its threads before the body runs: a block of more than `max_threads` threads fails
/// the launch with [`EmulatorError::InvalidLaunch`] naming the kernel, the block and
/// the bound, as the driver refuses the launch on the GPU (`.maxntid`). Outside an
/// emulated launch (the kernel called as a plain function) it does nothing.
pub(crate) fn check_max_threads(kernel: &'static str, max_threads: u32) {
    if !context::in_kernel() {
        return;
    }
    let (block, threads) = context::with(|ctx| {
        let l = ctx.block().launch;
        (l.block, l.block_size)
    });
    if threads > max_threads {
        context::fail(EmulatorError::InvalidLaunch(format!(
            "block ({}, {}, {}) has {threads} threads, but kernel `{kernel}` allows at most \
             {max_threads} (`#[kernel(max_threads = {max_threads})]`, `.maxntid`)",
            block[0], block[1], block[2]
        )));
    }
}

/// The launch-shape check of `#[kernel(dims = N)]`: grid and block extents past the
/// first `N` dimensions are 1.
pub(crate) fn check_launch_dims(kernel: &'static str, dims: u32) {
    if !context::in_kernel() {
        return;
    }
    let (grid, block) = context::with(|ctx| {
        let l = ctx.block().launch;
        (l.grid, l.block)
    });
    let from = dims.min(3) as usize;
    if grid[from..].iter().chain(&block[from..]).any(|&e| e != 1) {
        let shape = if dims == 1 { "one" } else { "two" };
        context::fail(EmulatorError::InvalidLaunch(format!(
            "kernel `{kernel}` is declared {shape}-dimensional (`#[kernel(dims = {dims})]`), \
             but the launch has grid ({}, {}, {}) and block ({}, {}, {}); launch it with \
             extents of 1 past dimension {dims}, or remove `dims`",
            grid[0], grid[1], grid[2], block[0], block[1], block[2]
        )));
    }
}

/// The check of `#[kernel(slice_align = N)]`: slice parameter `index` starts at a
/// multiple of `align` bytes.
pub(crate) fn check_slice_align(
    kernel: &'static str,
    index: usize,
    name: &'static str,
    start: usize,
    align: usize,
) {
    if !context::in_kernel() || start & (align - 1) == 0 {
        return;
    }
    context::fail(EmulatorError::InvalidLaunch(format!(
        "parameter {index} (`{name}`) of kernel `{kernel}` starts at {start:#x}, not a \
         multiple of {align} bytes as `#[kernel(slice_align = {align})]` declares; pass a \
         buffer (or a sub-slice of one) that starts {align}-byte aligned, or remove \
         `slice_align`"
    )));
}

/// The dynamic shared memory check of `#[kernel(dynamic_shared = N,
/// dynamic_shared_per_thread = M)]`: the launch's size at least `N + M × block size`.
pub(crate) fn check_dynamic_shared(kernel: &'static str, bytes: u32, per_thread: u32) {
    if !context::in_kernel() {
        return;
    }
    let threads = context::with(|ctx| ctx.block().launch.block_size);
    let need = bytes as u64 + per_thread as u64 * threads as u64;
    let given = context::dynamic_smem_size();
    if (given as u64) < need {
        context::fail(EmulatorError::InvalidLaunch(format!(
            "kernel `{kernel}` declares {bytes} + {per_thread} × threads bytes of dynamic \
             shared memory (`#[kernel(dynamic_shared = {bytes}, dynamic_shared_per_thread = \
             {per_thread})]`): {need} bytes for blocks of {threads} threads, but the launch \
             gives {given}; launch with `LaunchConfig::with_dynamic_shared({need})`"
        )));
    }
}

/// Runs `kernel` once per thread of the grid `cfg` describes, with default
/// [`Options`]; see [`launch_with`].
///
/// Errors: see [`launch_with`].
pub fn launch<F: Fn() + Sync>(cfg: LaunchConfig, kernel: F) -> Result<LaunchStats, EmulatorError> {
    launch_with(cfg, &Options::default(), kernel)
}

/// Runs `kernel` once per thread of the grid `cfg` describes, each call as
/// one emulated GPU thread (the [module docs](super) describe the model),
/// and returns when every thread has returned.
///
/// `kernel` is typically `|| my_kernel(args...)`; it is shared by the worker
/// threads, hence `Sync`: outputs go through [`GlobalMut`](super::GlobalMut).
///
/// Errors: [`EmulatorError::InvalidLaunch`] for a configuration CUDA refuses,
/// else the first error a thread met (a panic, a failed check, a deadlock).
pub fn launch_with<F: Fn() + Sync>(
    cfg: LaunchConfig,
    options: &Options,
    kernel: F,
) -> Result<LaunchStats, EmulatorError> {
    validate(&cfg)?;
    run(cfg, options, kernel, false)
}

/// Most threads in all of a cooperative launch under the emulator, which runs the
/// whole grid together (one coroutine stack per thread).
pub const MAX_COOPERATIVE_THREADS: u64 = 16 * 1024;

/// A cooperative launch (`cuLaunchCooperativeKernel`; on the GPU
/// `host_loader::LaunchAttributes::cooperative`): [`launch`] with every block of the
/// grid resident at once, so that `device_std::grid::sync` can make the whole grid
/// wait. The emulator runs the grid as one cluster on one worker; a `grid::sync` that
/// some thread never reaches (it returned, or waits elsewhere) is reported as a
/// deadlock naming the grid barrier, where the GPU would hang.
///
/// Errors: those of [`launch`]; [`EmulatorError::InvalidLaunch`] also for a cluster
/// shape (not emulated together with a cooperative launch) and for more than
/// [`MAX_COOPERATIVE_THREADS`] threads.
pub fn launch_cooperative<F: Fn() + Sync>(
    cfg: LaunchConfig,
    kernel: F,
) -> Result<LaunchStats, EmulatorError> {
    validate(&cfg)?;
    let invalid = |s: String| Err(EmulatorError::InvalidLaunch(s));
    let (g, b) = (cfg.grid, cfg.block);
    if cfg.cluster != (1, 1, 1) {
        return invalid(format!(
            "cluster {:?} in a cooperative launch: the emulator runs a cooperative grid as one cluster",
            cfg.cluster
        ));
    }
    let threads = [g.0, g.1, g.2, b.0, b.1, b.2]
        .iter()
        .map(|&d| u64::from(d))
        .product::<u64>();
    if threads > MAX_COOPERATIVE_THREADS {
        return invalid(format!(
            "a cooperative launch of {threads} threads; the emulator runs at most {MAX_COOPERATIVE_THREADS} together"
        ));
    }
    run(
        LaunchConfig { cluster: g, ..cfg },
        &Options::default(),
        kernel,
        true,
    )
}

/// The ids of the launches running now (any host thread), for
/// [`GlobalMut`](super::GlobalMut), which one launch at a time may use.
static RUNNING: Mutex<Vec<u64>> = Mutex::new(Vec::new());

/// Marks launch `id` running until dropped (also when the launch unwinds).
struct Running(u64);

impl Running {
    fn start(id: u64) -> Self {
        RUNNING.lock().unwrap_or_else(|e| e.into_inner()).push(id);
        Running(id)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|&r| r != self.0);
    }
}

/// Whether launch `id` is still running.
pub(crate) fn is_running(id: u64) -> bool {
    RUNNING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&id)
}

/// [`launch_with`] after validation, cooperative or not.
fn run<F: Fn() + Sync>(
    cfg: LaunchConfig,
    options: &Options,
    kernel: F,
    cooperative: bool,
) -> Result<LaunchStats, EmulatorError> {
    install_panic_hook();
    static IDS: AtomicU64 = AtomicU64::new(1);
    let id = IDS.fetch_add(1, Ordering::Relaxed);
    let _running = Running::start(id);
    let (g, b) = (cfg.grid, cfg.block);
    let launch = Launch {
        grid: [g.0, g.1, g.2],
        block: [b.0, b.1, b.2],
        block_size: b.0 * b.1 * b.2,
        dynamic: cfg.dynamic_shared_bytes,
        static_limit: cfg.static_shared_limit,
        cluster: [cfg.cluster.0, cfg.cluster.1, cfg.cluster.2],
        cooperative,
        id,
        writes: WriteLog::new(),
        failed: AtomicU64::new(u64::MAX),
        output: options.capture_output.then(|| Mutex::new(Vec::new())),
    };
    let blocks = g.0 as u64 * g.1 as u64 * g.2 as u64;
    let c = launch.cluster;
    let per_cluster = c[0] * c[1] * c[2];
    let clusters = blocks / per_cluster as u64;
    // The linear indices of the blocks of cluster `k`, in rank order (x fastest).
    let members = |k: u64| -> Vec<u64> {
        let n = [g.0 / c[0], g.1 / c[1]].map(u64::from);
        let origin = [k % n[0], (k / n[0]) % n[1], k / (n[0] * n[1])];
        (0..per_cluster)
            .map(|r| {
                let local = [r % c[0], (r / c[0]) % c[1], r / (c[0] * c[1])];
                let at = |i: usize| origin[i] * c[i] as u64 + local[i] as u64;
                at(0) + at(1) * g.0 as u64 + at(2) * g.0 as u64 * g.1 as u64
            })
            .collect()
    };
    let workers = match options.workers {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(clusters.min(usize::MAX as u64) as usize)
    .max(1);

    let next = AtomicU64::new(0);
    let failure: Mutex<Option<(u64, EmulatorError)>> = Mutex::new(None);
    let counts = [AtomicU64::new(0), AtomicU64::new(0)];
    let fail = |block: u64, err: EmulatorError| {
        let mut f = failure.lock().unwrap_or_else(|e| e.into_inner());
        if f.as_ref().is_none_or(|(b, _)| block < *b) {
            *f = Some((block, err));
        }
        launch.failed.fetch_min(block, Ordering::Relaxed);
    };
    let work = || {
        let per = per_cluster as usize;
        let mut stacks = match Stacks::take(launch.block_size as usize * per, options.stack_bytes) {
            Ok(s) => s,
            Err(e) => return fail(0, EmulatorError::Resources(e)),
        };
        let mut arenas = Vec::with_capacity(per);
        for _ in 0..per {
            match Arena::new(
                launch.dynamic as usize,
                launch.static_limit as usize,
                options.check_shared,
            ) {
                Ok(a) => arenas.push(a),
                Err(e) => return fail(0, EmulatorError::Resources(e)),
            }
        }
        let warps = launch.block_size.div_ceil(32) as usize;
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= clusters {
                break;
            }
            let linears = members(k);
            let first = linears.iter().copied().min().unwrap_or(0);
            if launch.aborted(first) {
                break;
            }
            let mems = arenas
                .iter_mut()
                .map(|a| a.block(launch.dynamic as usize, warps))
                .collect();
            match run_cluster(&launch, &linears, &mut stacks.stacks, mems, &kernel) {
                Ok((barriers, collectives)) => {
                    counts[0].fetch_add(barriers, Ordering::Relaxed);
                    counts[1].fetch_add(collectives, Ordering::Relaxed);
                }
                Err(err) => fail(first, err),
            }
        }
        stacks.give_back();
    };
    if workers == 1 {
        work();
    } else {
        std::thread::scope(|s| {
            for _ in 1..workers {
                s.spawn(work);
            }
            work();
        });
    }
    if let Some((_, err)) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(err);
    }
    Ok(LaunchStats {
        blocks,
        threads: blocks * launch.block_size as u64,
        barriers: counts[0].load(Ordering::Relaxed),
        warp_collectives: counts[1].load(Ordering::Relaxed),
        output: launch
            .output
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .unwrap_or_default(),
    })
}

/// Coroutine stacks of one worker, taken from (and given back to) a
/// process-wide pool when they have the default size.
struct Stacks {
    stacks: Vec<DefaultStack>,
    pooled: bool,
}

/// A stack no coroutine runs on, free to move between OS threads.
struct IdleStack(DefaultStack);

// SAFETY: an idle stack is a plain memory mapping with no thread affinity;
// stacks enter the pool only after every coroutine on them was dropped.
unsafe impl Send for IdleStack {}

static POOL: Mutex<Vec<IdleStack>> = Mutex::new(Vec::new());

impl Stacks {
    fn take(n: usize, bytes: usize) -> Result<Self, String> {
        let pooled = bytes == DEFAULT_STACK;
        let mut stacks = Vec::with_capacity(n);
        if pooled {
            let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
            while stacks.len() < n {
                match pool.pop() {
                    Some(IdleStack(s)) => stacks.push(s),
                    None => break,
                }
            }
        }
        while stacks.len() < n {
            stacks.push(
                DefaultStack::new(bytes)
                    .map_err(|e| format!("cannot map a {bytes}-byte coroutine stack: {e}"))?,
            );
        }
        Ok(Stacks { stacks, pooled })
    }

    fn give_back(self) {
        if self.pooled {
            let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
            pool.extend(self.stacks.into_iter().map(IdleStack));
        }
    }
}

/// Installs, once per process, a panic hook that keeps kernel panics quiet
/// (the launch reports them with their thread) and records where they
/// happened; other panics go to the previous hook.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if context::in_kernel() {
                if let Some(l) = info.location() {
                    context::record_panic_location(l.to_string());
                }
            } else {
                previous(info);
            }
        }));
    });
}
