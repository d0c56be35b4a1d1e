//! Warp collectives: the lanes named in `mask` meet, exchange their values,
//! and each leaves with its result (`shfl.sync`, `vote.sync`, `match.sync`,
//! `redux.sync`, `bar.warp.sync`), plus `activemask`.
//!
//! Lanes are `thread_in_block % 32` of warp `thread_in_block / 32`. As on
//! sm_70+, a lane that has exited, or does not exist in a last partial warp,
//! is not waited for; a shuffle that reads such a lane (or any lane outside
//! `mask`) reads an undefined value on the GPU and is an error here.

use super::block::{Block, Status};
use super::context::{self, same_site, Site};
use super::error::EmulatorError;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

/// How a reduction combines values (`redux.sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReduxKind {
    /// Wrapping `u32` sum.
    Add,
    /// `u32` minimum.
    UMin,
    /// `u32` maximum.
    UMax,
    /// `i32` minimum.
    SMin,
    /// `i32` maximum.
    SMax,
    /// Bitwise and.
    And,
    /// Bitwise or.
    Or,
    /// Bitwise xor.
    Xor,
}

/// A collective operation; every lane of one meeting must use the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WarpOp {
    /// `shfl.sync.idx` (source lane: [`source_lane`]).
    ShflIdx,
    /// `shfl.sync.up`.
    ShflUp,
    /// `shfl.sync.down`.
    ShflDown,
    /// `shfl.sync.bfly`.
    ShflXor,
    /// `vote.sync.all`.
    All,
    /// `vote.sync.any`.
    Any,
    /// `vote.sync.ballot`.
    Ballot,
    /// `match.any.sync.b32`.
    Match32,
    /// `match.any.sync.b64`.
    Match64,
    /// `redux.sync`.
    Redux(ReduxKind),
    /// `bar.warp.sync`.
    SyncWarp,
    /// `elect.sync` (the result is the mask of the lanes that took part).
    Elect,
}

impl WarpOp {
    fn name(self) -> &'static str {
        match self {
            WarpOp::ShflIdx => "shfl_sync",
            WarpOp::ShflUp => "shfl_up_sync",
            WarpOp::ShflDown => "shfl_down_sync",
            WarpOp::ShflXor => "shfl_xor_sync",
            WarpOp::All => "all_sync",
            WarpOp::Any => "any_sync",
            WarpOp::Ballot => "ballot_sync",
            WarpOp::Match32 => "match_*_sync (32-bit)",
            WarpOp::Match64 => "match_*_sync (64-bit)",
            WarpOp::Redux(_) => "redux_sync",
            WarpOp::SyncWarp => "sync_warp",
            WarpOp::Elect => "elect_one",
        }
    }
}

/// One meeting in progress: the lanes of `mask` that arrived so far.
struct Pending {
    op: WarpOp,
    mask: u32,
    site: Site,
    first: u32,
    arrived: u32,
    values: [u64; 32],
    params: [u32; 32],
    /// Shuffles: each lane's `c` operand (segment mask in bits 12:8, clamp
    /// lane in bits 4:0).
    cs: [u32; 32],
}

/// A warp's meetings in progress and the results lanes have yet to collect.
pub(crate) struct WarpState {
    /// Lanes that exist (all 32 but in a last partial warp).
    lanes: u32,
    /// Lanes that returned from the kernel.
    exited: u32,
    pending: Vec<Pending>,
    /// Lanes whose result is in `results`.
    ready: u32,
    results: [u64; 32],
    /// Lanes waiting in `activemask`, and where.
    activemask: [Option<Site>; 32],
}

impl WarpState {
    /// A warp with `threads` threads (32 or more: a full warp).
    pub(crate) fn new(threads: u32) -> Self {
        let lanes = if threads >= 32 {
            u32::MAX
        } else {
            (1u32 << threads) - 1
        };
        WarpState {
            lanes,
            exited: 0,
            pending: Vec::new(),
            ready: 0,
            results: [0; 32],
            activemask: [None; 32],
        }
    }

    /// Lanes of the warp that have not returned.
    pub(crate) fn live(&self) -> u32 {
        self.lanes & !self.exited
    }

    /// One line per meeting that cannot complete, for a deadlock report.
    pub(crate) fn describe_waits(&self, w: u32) -> Vec<String> {
        self.pending
            .iter()
            .map(|p| {
                let missing = p.mask & self.live() & !p.arrived;
                let exited = p.mask & !self.live();
                format!(
                    "warp {w}: lanes {} wait at {} ({}) with mask {:#010x}; lanes {} wait elsewhere{}",
                    lanes(p.arrived),
                    p.op.name(),
                    p.site,
                    p.mask,
                    lanes(missing),
                    if exited != 0 {
                        format!(" (lanes {} exited)", lanes(exited))
                    } else {
                        String::new()
                    }
                )
            })
            .collect()
    }
}

/// `{0, 1, 5}`-style list of the set bits.
fn lanes(mask: u32) -> String {
    let v: Vec<String> = (0..32)
        .filter(|l| mask & (1 << l) != 0)
        .map(|l: u32| l.to_string())
        .collect();
    format!("{{{}}}", v.join(", "))
}

/// The calling lane's part in collective `op` over `mask`: its `value` (the
/// bits, zero-extended) and `param` (shuffle source, delta or lane mask).
/// Returns its result once every live lane of `mask` has arrived.
/// Shuffles go through [`shuffle`].
pub(crate) fn collective(op: WarpOp, mask: u32, value: u64, param: u32, site: Site) -> u64 {
    meet(op, mask, value, param, 0, site)
}

/// The calling lane's part in shuffle `op` over `mask`: `shfl.sync` with
/// operands `a = value` (a 32-bit word), `b` and `c`. Returns the word it
/// receives (see [`source_lane`]).
pub(crate) fn shuffle(op: WarpOp, mask: u32, value: u64, b: u32, c: u32, site: Site) -> u64 {
    meet(op, mask, value, b, c, site)
}

/// `shfl.sync`'s source lane for `lane` (PTX ISA 9.0 `shfl.sync`, semantics):
/// `Some(j)` when the value moves from lane `j`, `None` when the lane keeps
/// its own. Only `b[4:0]`, `c[4:0]` (clamp) and `c[12:8]` (segment mask)
/// count.
pub(crate) fn source_lane(op: WarpOp, lane: u32, b: u32, c: u32) -> Option<u32> {
    let (bval, cval, seg) = (b & 31, c & 31, (c >> 8) & 31);
    let max_lane = (lane & seg) | (cval & !seg);
    let min_lane = lane & seg;
    match op {
        WarpOp::ShflUp => lane.checked_sub(bval).filter(|&j| j >= max_lane),
        WarpOp::ShflDown => Some(lane + bval).filter(|&j| j <= max_lane),
        WarpOp::ShflXor => Some(lane ^ bval).filter(|&j| j <= max_lane),
        WarpOp::ShflIdx => Some(min_lane | (bval & !seg)).filter(|&j| j <= max_lane),
        _ => unreachable!("{} is not a shuffle", op.name()),
    }
}

/// `op`'s name, with the segment width its `c` operand encodes when below 32.
fn shuffle_name(op: WarpOp, c: u32) -> String {
    match 32 - ((c >> 8) & 31) {
        32 => op.name().to_string(),
        w => format!("{}_width (width {w})", op.name()),
    }
}

/// [`collective`] and [`shuffle`]: `c` is 0 for every other operation.
fn meet(op: WarpOp, mask: u32, value: u64, param: u32, c: u32, site: Site) -> u64 {
    context::with(|ctx| {
        let block = ctx.block();
        let (w, lane) = ((ctx.linear / 32) as usize, ctx.linear % 32);
        let bit = 1u32 << lane;
        block
            .stats
            .collectives
            .set(block.stats.collectives.get() + 1);
        if mask & bit == 0 {
            context::fail(EmulatorError::WarpCollective {
                at: context::coords(ctx),
                message: format!(
                    "{} at {site}: the calling lane {lane} is not in mask {mask:#010x}",
                    op.name()
                ),
            });
        }
        let complete = {
            let mut warps = block.warps.borrow_mut();
            let ws = &mut warps[w];
            let i = match ws.pending.iter().position(|p| p.mask == mask) {
                Some(i) if ws.pending[i].op != op => {
                    let p = &ws.pending[i];
                    let message = format!(
                        "{} at {site} under mask {mask:#010x} meets lane {} in {} at {}: lanes of one mask must call the same operation",
                        op.name(),
                        p.first,
                        p.op.name(),
                        p.site
                    );
                    drop(warps);
                    context::fail(EmulatorError::WarpCollective {
                        at: context::coords(ctx),
                        message,
                    });
                }
                Some(i) => i,
                None => {
                    ws.pending.push(Pending {
                        op,
                        mask,
                        site,
                        first: lane,
                        arrived: 0,
                        values: [0; 32],
                        params: [0; 32],
                        cs: [0; 32],
                    });
                    ws.pending.len() - 1
                }
            };
            let live = ws.live();
            let p = &mut ws.pending[i];
            p.values[lane as usize] = value;
            p.params[lane as usize] = param;
            p.cs[lane as usize] = c;
            p.arrived |= bit;
            let needed = mask & live;
            (p.arrived & needed == needed).then(|| ws.pending.swap_remove(i))
        };
        match complete {
            Some(p) => {
                if let Err(err) = finish(block, w, p, Some(lane)) {
                    context::fail(err);
                }
                take(block, w, lane)
            }
            None => {
                block.wait(ctx, || block.warps.borrow()[w].ready & bit != 0);
                take(block, w, lane)
            }
        }
    })
}

/// Takes lane `lane`'s result.
fn take(block: &Block<'_>, w: usize, lane: u32) -> u64 {
    let mut warps = block.warps.borrow_mut();
    let ws = &mut warps[w];
    ws.ready &= !(1 << lane);
    ws.results[lane as usize]
}

/// Computes every arrived lane's result of the complete meeting `p`, and
/// wakes them (all but `caller`, which is running).
fn finish(
    block: &Block<'_>,
    w: usize,
    p: Pending,
    caller: Option<u32>,
) -> Result<(), EmulatorError> {
    let part = p.arrived;
    let at = |lane: u32| block.coords(w as u32 * 32 + lane);
    let mut results = [0u64; 32];
    let members = (0..32u32).filter(|l| part & (1 << l) != 0);
    let vals = || members.clone().map(|l| p.values[l as usize]);
    match p.op {
        WarpOp::ShflIdx | WarpOp::ShflUp | WarpOp::ShflDown | WarpOp::ShflXor => {
            for l in members.clone() {
                let c = p.cs[l as usize];
                results[l as usize] = match source_lane(p.op, l, p.params[l as usize], c) {
                    None => p.values[l as usize],
                    Some(j) if part & (1 << j) != 0 => p.values[j as usize],
                    Some(j) => {
                        return Err(EmulatorError::WarpCollective {
                            at: at(l),
                            message: format!(
                                "{} at {} with mask {:#010x}: lane {l} reads lane {j}, which is not in the mask or has exited (an undefined value on the GPU)",
                                shuffle_name(p.op, c),
                                p.site,
                                p.mask
                            ),
                        })
                    }
                };
            }
        }
        WarpOp::All
        | WarpOp::Any
        | WarpOp::Ballot
        | WarpOp::Redux(_)
        | WarpOp::SyncWarp
        | WarpOp::Elect => {
            let r = match p.op {
                WarpOp::All => vals().all(|v| v != 0) as u64,
                WarpOp::Any => vals().any(|v| v != 0) as u64,
                WarpOp::Elect => members.clone().fold(0u64, |m, l| m | 1 << l),
                WarpOp::Ballot => members
                    .clone()
                    .filter(|&l| p.values[l as usize] != 0)
                    .fold(0u64, |m, l| m | 1 << l),
                WarpOp::Redux(kind) => redux(kind, vals().map(|v| v as u32)) as u64,
                _ => 0,
            };
            for l in members.clone() {
                results[l as usize] = r;
            }
        }
        WarpOp::Match32 | WarpOp::Match64 => {
            for l in members.clone() {
                let v = p.values[l as usize];
                results[l as usize] = members
                    .clone()
                    .filter(|&j| p.values[j as usize] == v)
                    .fold(0u64, |m, j| m | 1 << j);
            }
        }
    }
    if p.op == WarpOp::SyncWarp {
        // Lanes that exited took no part: their accesses stay unordered.
        let full = block.warps.borrow()[w].lanes & !part == 0;
        block.mem.borrow_mut().warp_synced(w, part, full);
    }
    {
        let mut warps = block.warps.borrow_mut();
        let ws = &mut warps[w];
        for l in members.clone() {
            ws.results[l as usize] = results[l as usize];
        }
        ws.ready |= part;
    }
    for l in members {
        if Some(l) != caller {
            block.wake(w as u32 * 32 + l);
        }
    }
    Ok(())
}

fn redux(kind: ReduxKind, vals: impl Iterator<Item = u32>) -> u32 {
    match kind {
        ReduxKind::Add => vals.fold(0, u32::wrapping_add),
        ReduxKind::UMin => vals.fold(u32::MAX, u32::min),
        ReduxKind::UMax => vals.fold(0, u32::max),
        ReduxKind::SMin => vals.map(|v| v as i32).fold(i32::MAX, i32::min) as u32,
        ReduxKind::SMax => vals.map(|v| v as i32).fold(i32::MIN, i32::max) as u32,
        ReduxKind::And => vals.fold(u32::MAX, |a, v| a & v),
        ReduxKind::Or => vals.fold(0, |a, v| a | v),
        ReduxKind::Xor => vals.fold(0, |a, v| a ^ v),
    }
}

/// `activemask()`: the lanes of the calling warp that wait in `activemask`
/// at the same call site once no lane of the warp can go on (or at once,
/// when every live lane is there).
pub(crate) fn activemask(site: Site) -> u32 {
    context::with(|ctx| {
        let block = ctx.block();
        let (w, lane) = ((ctx.linear / 32) as usize, ctx.linear % 32);
        let bit = 1u32 << lane;
        let all_here = {
            let mut warps = block.warps.borrow_mut();
            let ws = &mut warps[w];
            ws.activemask[lane as usize] = Some(site);
            let live = ws.live();
            (0..32)
                .filter(|l| live & (1 << l) != 0)
                .all(|l| ws.activemask[l as usize].is_some_and(|s| same_site(s, site)))
        };
        if all_here {
            resolve_warp(block, w, Some(lane));
        } else {
            block.wait(ctx, || block.warps.borrow()[w].ready & bit != 0);
        }
        take(block, w, lane) as u32
    })
}

/// Answers the `activemask` calls of warp `w`: each group of lanes waiting
/// at one site gets the group's mask. Returns whether any lane was answered.
fn resolve_warp(block: &Block<'_>, w: usize, caller: Option<u32>) -> bool {
    let mut woken = Vec::new();
    {
        let mut warps = block.warps.borrow_mut();
        let ws = &mut warps[w];
        for l in 0..32 {
            let Some(site) = ws.activemask[l] else {
                continue;
            };
            let group = (0..32)
                .filter(|&j| ws.activemask[j].is_some_and(|s| same_site(s, site)))
                .fold(0u32, |m, j| m | 1 << j);
            for j in 0..32 {
                if group & (1 << j) != 0 {
                    ws.activemask[j] = None;
                    ws.results[j] = group as u64;
                    woken.push(j as u32);
                }
            }
            ws.ready |= group;
        }
    }
    let any = !woken.is_empty();
    for l in woken {
        if Some(l) != caller {
            block.wake(w as u32 * 32 + l);
        }
    }
    any
}

/// Called by the scheduler when no thread of the block can run: answers
/// pending `activemask` calls. Returns whether any thread became runnable.
pub(crate) fn resolve_activemask(block: &Block<'_>) -> bool {
    let warps = block.warps.borrow().len();
    let mut any = false;
    for w in 0..warps {
        any |= resolve_warp(block, w, None);
    }
    any
}

/// Records that thread `t` returned, and completes the meetings of its warp
/// that only waited for lanes that have now all arrived or exited.
pub(crate) fn thread_exited(block: &Block<'_>, t: u32) -> Result<(), EmulatorError> {
    debug_assert_eq!(block.sched.borrow().status[t as usize], Status::Done);
    let w = (t / 32) as usize;
    let complete: Vec<Pending> = {
        let mut warps = block.warps.borrow_mut();
        let ws = &mut warps[w];
        ws.exited |= 1 << (t % 32);
        let live = ws.live();
        let (done, waiting) = core::mem::take(&mut ws.pending)
            .into_iter()
            .partition(|p| p.arrived & p.mask & live == p.mask & live);
        ws.pending = waiting;
        done
    };
    for p in complete {
        finish(block, w, p, None)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{source_lane, WarpOp};

    /// `source_lane` (the PTX semantics) against the CUDA Programming
    /// Guide's rules, for every lane, width and `b` below 96, with `c` as
    /// `warp::shfl*_sync_width` computes it.
    #[test]
    fn source_lane_follows_the_cuda_rules_for_every_width() {
        for width in [1u32, 2, 4, 8, 16, 32] {
            let seg = (32 - width) << 8;
            for lane in 0..32 {
                for b in 0..96 {
                    let d = b % 32;
                    let own = |keep: bool, j: u32| if keep { None } else { Some(j) };
                    let cases = [
                        (
                            WarpOp::ShflIdx,
                            seg | 31,
                            Some((lane & !(width - 1)) + b % width),
                        ),
                        (
                            WarpOp::ShflUp,
                            seg,
                            own(lane % width < d, lane.wrapping_sub(d)),
                        ),
                        (
                            WarpOp::ShflDown,
                            seg | 31,
                            own(lane % width + d >= width, lane + d),
                        ),
                        (
                            WarpOp::ShflXor,
                            seg | 31,
                            own((lane ^ d) / width > lane / width, lane ^ d),
                        ),
                    ];
                    for (op, c, want) in cases {
                        assert_eq!(
                            source_lane(op, lane, b, c),
                            want,
                            "{op:?} lane {lane} b {b} width {width}"
                        );
                    }
                }
            }
        }
    }
}
