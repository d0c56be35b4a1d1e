//! LLVM NVVM intrinsics this crate calls (nvptx64 only).
//!
//! LLVM marks the barrier, shuffle, vote, match and reduction intrinsics
//! `convergent`, so no optimisation moves them into control flow the source
//! did not have; inline `asm!` gets no such attribute, which is why those
//! operations are intrinsics here and not assembly. LLVM upgrades the older
//! names (`barrier0.*`) to their current form when it reads them.
#![allow(missing_docs)]

unsafe extern "C" {
    #[link_name = "llvm.nvvm.barrier0"]
    pub fn barrier0();
    #[link_name = "llvm.nvvm.barrier0.popc"]
    pub fn barrier0_popc(pred: i32) -> i32;
    #[link_name = "llvm.nvvm.barrier0.and"]
    pub fn barrier0_and(pred: i32) -> i32;
    #[link_name = "llvm.nvvm.barrier0.or"]
    pub fn barrier0_or(pred: i32) -> i32;
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    pub fn bar_warp_sync(mask: u32);

    #[link_name = "llvm.nvvm.membar.cta"]
    pub fn membar_cta();
    #[link_name = "llvm.nvvm.membar.gl"]
    pub fn membar_gl();
    #[link_name = "llvm.nvvm.membar.sys"]
    pub fn membar_sys();
    #[link_name = "llvm.nvvm.nanosleep"]
    pub fn nanosleep(ns: u32);

    #[link_name = "llvm.nvvm.read.ptx.sreg.laneid"]
    pub fn laneid() -> u32;
    #[link_name = "llvm.nvvm.activemask"]
    pub fn activemask() -> u32;

    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    pub fn shfl_idx_i32(mask: u32, v: u32, lane: u32, c: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    pub fn shfl_up_i32(mask: u32, v: u32, delta: u32, c: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
    pub fn shfl_down_i32(mask: u32, v: u32, delta: u32, c: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    pub fn shfl_bfly_i32(mask: u32, v: u32, lane_mask: u32, c: u32) -> u32;

    #[link_name = "llvm.nvvm.vote.all.sync"]
    pub fn vote_all(mask: u32, pred: bool) -> bool;
    #[link_name = "llvm.nvvm.vote.any.sync"]
    pub fn vote_any(mask: u32, pred: bool) -> bool;
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    pub fn vote_ballot(mask: u32, pred: bool) -> u32;

    #[link_name = "llvm.nvvm.match.any.sync.i32"]
    pub fn match_any_i32(mask: u32, v: u32) -> u32;
    #[link_name = "llvm.nvvm.match.any.sync.i64"]
    pub fn match_any_i64(mask: u32, v: u64) -> u32;

    #[link_name = "llvm.nvvm.redux.sync.add"]
    pub fn redux_add(v: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.min"]
    pub fn redux_min(v: i32, mask: u32) -> i32;
    #[link_name = "llvm.nvvm.redux.sync.max"]
    pub fn redux_max(v: i32, mask: u32) -> i32;
    #[link_name = "llvm.nvvm.redux.sync.umin"]
    pub fn redux_umin(v: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.umax"]
    pub fn redux_umax(v: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.and"]
    pub fn redux_and(v: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.or"]
    pub fn redux_or(v: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.xor"]
    pub fn redux_xor(v: u32, mask: u32) -> u32;

    /// `add.rz.f32`: the sum rounded toward zero (PTX ISA §9.7.3.1 `add`).
    #[link_name = "llvm.nvvm.add.rz.f"]
    pub fn add_rz_f32(a: f32, b: f32) -> f32;
    /// `add.rz.f64`.
    #[link_name = "llvm.nvvm.add.rz.d"]
    pub fn add_rz_f64(a: f64, b: f64) -> f64;
}
