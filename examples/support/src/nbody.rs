//! Bodies, the `f64` reference and the check of `examples/nbody` (NVIDIA's CUDA sample
//! `nbody`), shared by its host program and the emulator test.
//!
//! A body is `pos = [x, y, z, m]` and `vel = [vx, vy, vz, w]`, as the kernel's `F32x4`s
//! (CUDA `float4`); `G = 1`.

use rand::Rng;

/// Time step (the sample's first demo, `timestep 0.016`).
pub const DT: f32 = 0.016;
/// Softening `ε² = 0.1²` (the sample's first demo, `softening 0.1`).
pub const SOFTENING_SQ: f32 = 0.01;

/// Allowed error of the acceleration the kernel applied, relative to `|a_i|` (the
/// Euclidean norm of the `f64` acceleration), per component. See [`check`].
pub const ACCEL_REL_TOL: f64 = 1e-3;
/// Allowed error of the acceleration per component, relative to
/// `Σ_j |m_j r_ij| / (|r_ij|² + ε²)^(3/2)`, the sum of the magnitudes of the terms: the
/// floor for bodies whose pulls nearly cancel. See [`check`].
pub const ACCEL_SUM_TOL: f64 = 1e-5;
/// `f32`'s unit roundoff doubled, `2^-23`: the allowance for one rounding of a result.
const ROUNDING: f64 = 1.0 / (1u64 << 23) as f64;

/// `n` bodies as the sample's `NBODY_CONFIG_RANDOM` places them: positions uniform in a
/// ball of radius `1.54·max(1, n/1024)`, velocities uniform in a ball `8` times larger
/// (its `clusterScale` and `velocityScale`); masses uniform in `[0.5, 1.5)` (the sample
/// uses 1), `w = 1`.
pub fn bodies(rng: &mut impl Rng, n: usize) -> (Vec<[f32; 4]>, Vec<[f32; 4]>) {
    let scale = 1.54 * (n as f32 / 1024.0).max(1.0);
    let vscale = 8.0 * scale;
    let mut in_ball = |r: f32| -> [f32; 3] {
        loop {
            let p: [f32; 3] = [0; 3].map(|_| rng.random_range(-1.0f32..1.0));
            if p.iter().map(|c| c * c).sum::<f32>() <= 1.0 {
                return p.map(|c| c * r);
            }
        }
    };
    let mut pos = Vec::with_capacity(n);
    let mut vel = Vec::with_capacity(n);
    for _ in 0..n {
        let [x, y, z] = in_ball(scale);
        let [vx, vy, vz] = in_ball(vscale);
        pos.push([x, y, z, 0.0]);
        vel.push([vx, vy, vz, 1.0]);
    }
    for p in &mut pos {
        p[3] = rng.random_range(0.5..1.5);
    }
    (pos, vel)
}

/// Each body's acceleration in `f64`, all pairs (`j = i` adds 0), and the sum of the
/// magnitudes of its terms: `(a_i, Σ_j m_j |r_ij| / (|r_ij|² + ε²)^(3/2))`. Split over
/// the CPU's threads.
pub fn accelerations(pos: &[[f32; 4]], softening_sq: f32) -> Vec<([f64; 3], f64)> {
    let eps2 = f64::from(softening_sq);
    let bodies: Vec<[f64; 4]> = pos.iter().map(|p| p.map(f64::from)).collect();
    let n = bodies.len();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let chunk = n.div_ceil(threads).max(1);
    let bodies = &bodies;
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .step_by(chunk)
            .map(|start| {
                scope.spawn(move || {
                    (start..(start + chunk).min(n))
                        .map(|i| {
                            let bi = bodies[i];
                            let (mut a, mut sum) = ([0.0f64; 3], 0.0f64);
                            for bj in bodies {
                                let r = [bj[0] - bi[0], bj[1] - bi[1], bj[2] - bi[2]];
                                let d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
                                let inv = 1.0 / (d2 + eps2).sqrt();
                                let s = bj[3] * inv * inv * inv;
                                for c in 0..3 {
                                    a[c] += r[c] * s;
                                }
                                sum += d2.sqrt() * s;
                            }
                            (a, sum)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}

/// What [`check`] found.
#[derive(Debug, Clone, Copy, Default)]
pub struct Check {
    /// Bodies with a velocity or position component beyond its tolerance (NaN included).
    pub bad: usize,
    /// Bodies checked.
    pub total: usize,
    /// The largest share of its tolerance an acceleration component's error uses
    /// (below 1 passes; NaN counts as infinite).
    pub worst_share: f64,
}

impl Check {
    /// No body beyond its tolerance.
    pub fn passed(&self) -> bool {
        self.bad == 0
    }
}

/// Checks one step of `n = pos.len()` bodies: `new_vel`/`new_pos` from the kernel
/// against `pos`/`vel`, `dt` and `softening_sq`, with [`accelerations`] as reference.
///
/// **Velocities.** The acceleration the kernel applied, `a_got = (v' − v)/dt` (in
/// `f64`, from the `f32` values), must match the `f64` `a` per component within
/// `ACCEL_REL_TOL·|a| + ACCEL_SUM_TOL·Σ|terms| + 2^-23·|v'|/dt`. The first term is the
/// usual single-precision bound: the kernel sums `n` terms in `f32` one after another
/// (unit roundoff `u = 2^-24`; `rsqrtf` adds up to 2 ulp to each term), an error of
/// about `√n·u` of the terms' size when rounding errors cancel as random ones do
/// (`8e-6` at `n = 16384`), `n·u = 1e-3` in the worst case. The second term covers
/// bodies whose pulls nearly cancel, where `|a|` is far below the terms: `10^-5` of
/// their sum is that random-walk estimate for `n = 16384`. The third is the rounding
/// of `v' = v + a·dt` itself, which `÷ dt` magnifies. Measured with the kernel's own
/// `f32` arithmetic on the CPU (these bodies, `n = 16384`, two seeds): acceleration
/// errors up to `7e-6·|a|`, and at most 0.15 of the whole tolerance used, the rounding
/// of `v'` the largest part.
///
/// **Positions.** `p'` must be `p + v'·dt` with the kernel's own `v'` (checked above),
/// up to the two `f32` roundings: within `2^-23·(|p'| + |v'·dt|)` per component.
/// Masses and `w` must come through unchanged.
///
/// Prints the first few mismatches.
pub fn check(
    pos: &[[f32; 4]],
    vel: &[[f32; 4]],
    dt: f32,
    softening_sq: f32,
    new_pos: &[[f32; 4]],
    new_vel: &[[f32; 4]],
) -> Check {
    let n = pos.len();
    assert!(vel.len() == n && new_pos.len() == n && new_vel.len() == n);
    let want = accelerations(pos, softening_sq);
    let dt64 = f64::from(dt);
    let (mut bad, mut worst) = (0, 0.0f64);
    for i in 0..n {
        let (a, sum) = want[i];
        let norm = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
        let mut ok = new_pos[i][3] == pos[i][3] && new_vel[i][3] == vel[i][3];
        for c in 0..3 {
            let (v0, v1) = (f64::from(vel[i][c]), f64::from(new_vel[i][c]));
            let a_got = (v1 - v0) / dt64;
            let err = (a_got - a[c]).abs();
            let tol = ACCEL_REL_TOL * norm + ACCEL_SUM_TOL * sum + ROUNDING * v1.abs() / dt64;
            ok &= err <= tol;
            worst = worst.max(if err.is_nan() {
                f64::INFINITY
            } else {
                err / tol
            });
            let (p0, p1) = (f64::from(pos[i][c]), f64::from(new_pos[i][c]));
            let drift = v1 * dt64;
            ok &= (p1 - (p0 + drift)).abs() <= ROUNDING * (p1.abs() + drift.abs());
        }
        if !ok {
            if bad < 5 {
                eprintln!(
                    "body {i}: got pos {:?} vel {:?}; from pos {:?} vel {:?}, a = {a:?}",
                    new_pos[i], new_vel[i], pos[i], vel[i]
                );
            }
            bad += 1;
        }
    }
    Check {
        bad,
        total: n,
        worst_share: worst,
    }
}
