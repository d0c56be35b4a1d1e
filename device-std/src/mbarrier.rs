//! [`Mbarrier`]: the asynchronous-transaction barrier in shared memory that
//! bulk copies ([`bulk`](crate::bulk)) complete on, with the phase a waiter
//! waits for kept in a [`Phase`] value, so that no waiter forgets to flip it.
//!
//! | here | PTX (PTX ISA 9.0 §9.7.13.15 "Parallel Synchronization and Communication Instructions: mbarrier") | min |
//! |---|---|---|
//! | [`Mbarrier::new`] | `.shared .align 8 .b64`, `mbarrier.init`, `fence.mbarrier_init` (sm_90), `bar.sync 0` | sm_80 |
//! | [`Mbarrier::arrive`] | `mbarrier.arrive.shared.b64` | sm_80 |
//! | [`Mbarrier::arrive_expect_tx`] | `mbarrier.arrive.expect_tx.shared::cta.b64` | sm_90, PTX 8.0 |
//! | [`Mbarrier::expect_tx`] | `mbarrier.expect_tx.relaxed.cta.shared::cta.b64` | sm_90, PTX 8.0 |
//! | [`Mbarrier::test_wait`] | `mbarrier.test_wait.parity.shared.b64` | sm_80 |
//! | [`Mbarrier::wait`] | `mbarrier.try_wait.parity.shared::cta.b64` in a loop (sm_90), `test_wait` before | sm_80 |
//! | [`Mbarrier::inval`] | `mbarrier.inval.shared.b64` | sm_80 |
//!
//! A phase completes when the barrier has seen its expected number of
//! arrivals *and* its transaction count (bytes announced by `expect_tx`
//! minus bytes completed by copies) is zero; the next phase then starts with
//! the same expected arrivals.
//!
//! ```no_run
//! use device_std::{bulk, thread, Mbarrier, Phase, SharedArray};
//! fn body(src: &[f32]) -> f32 {
//!     let tile = SharedArray::<f32, 1024, 128>::new();
//!     let bar = Mbarrier::new(1); // one arrival per phase: the issuing thread's
//!     let mut phase = Phase::new();
//!     if thread::thread_in_block() == 0 {
//!         bar.arrive_expect_tx(4096);
//!         bulk::load(&tile, 0, src, 0, 1024, &bar);
//!     }
//!     bar.wait(&mut phase); // every thread: the 4096 bytes have landed
//!     tile.read(thread::thread_in_block() as usize)
//! }
//! ```
//!
//! Under the emulator, each barrier's phase, pending arrivals and
//! transaction count are modelled; a thread that waits for a phase nothing
//! can complete is reported with the barrier's state, and reading bytes a
//! copy has not completed yet, or that the reading thread has not waited for
//! (itself, or through a `sync_threads` after a thread that did), is an
//! error.

use crate::host::on_device;
use core::marker::PhantomData;

/// One mbarrier object (8 bytes of the CTA's shared memory, aligned to 8).
///
/// Not `Send`/`Sync`/`Clone`: each thread gets its own handle from
/// [`Mbarrier::new`], which every thread of the CTA calls at the same place.
#[derive(Debug)]
pub struct Mbarrier {
    /// Shared-window address of the 64-bit barrier object.
    addr: u32,
    _not_send_sync: PhantomData<*mut u64>,
}

/// The parity of the phase a thread waits for next on one [`Mbarrier`]
/// (PTX's `phaseParity` operand). [`Mbarrier::wait`] flips it when the phase
/// completes, so a loop that waits once per phase stays in step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Phase {
    parity: u32,
}

impl Phase {
    /// The first phase of a freshly initialised barrier (parity 0).
    #[inline(always)]
    pub const fn new() -> Self {
        Phase { parity: 0 }
    }

    /// 0 or 1: the parity of the phase this value waits for.
    #[inline(always)]
    pub const fn parity(self) -> u32 {
        self.parity
    }

    /// Moves on to the next phase (what [`Mbarrier::wait`] does on success).
    #[inline(always)]
    pub fn advance(&mut self) {
        self.parity ^= 1;
    }
}

/// Largest arrival count `mbarrier.init` accepts: 2^20 - 1.
pub const MAX_ARRIVALS: u32 = (1 << 20) - 1;

/// Declares `N` consecutive barrier objects at the caller's site, has thread 0
/// initialise each for `arrivals` arrivals, and synchronises the CTA.
/// Returns the first object's shared address.
#[inline(always)]
fn declare<const N: usize>(arrivals: u32, site: &'static core::panic::Location<'static>) -> u32 {
    assert!(
        (1..=MAX_ARRIVALS).contains(&arrivals),
        "Mbarrier::new: arrivals must be in 1..=2^20-1"
    );
    let addr: u32 = on_device!("Mbarrier::new", {
        let _ = site;
        let addr: u32;
        // SAFETY: declares a fresh function-scope `.shared` array named after the
        // output register (unique within the function), as `SharedArray::new`
        // does. Not `pure`: two declarations must stay two objects.
        unsafe {
            core::arch::asm!(
                ".shared .align 8 .b64 {r}_mbar[{n}];",
                "mov.u32 {r}, {r}_mbar;",
                r = out(reg32) addr,
                n = const N,
                options(nostack, preserves_flags),
            );
        }
        if crate::thread::thread_in_block() == 0 {
            let mut i = 0;
            while i < N {
                // SAFETY: object `i` of the array declared above, 8-byte aligned;
                // only thread 0 initialises, before the barrier below.
                unsafe {
                    core::arch::asm!(
                        "mbarrier.init.shared.b64 [{a}], {n};",
                        a = in(reg32) addr + 8 * i as u32,
                        n = in(reg32) arrivals,
                        options(nostack, preserves_flags),
                    );
                }
                i += 1;
            }
            // SAFETY: a fence; no operands.
            #[cfg(target_feature = "sm_90")]
            unsafe {
                core::arch::asm!("fence.mbarrier_init.release.cluster;", options(nostack, preserves_flags));
            }
        }
        addr
    }, emulated: {
        crate::emulator::mbarrier::declare(site, N, arrivals)
    });
    crate::thread::sync_threads();
    addr
}

/// `N` barrier objects declared together (`.b64 name[N]`), for pipelines
/// with one barrier per stage indexed at run time; [`Phases`] keeps each
/// one's phase. [`Mbarriers::new`] follows [`Mbarrier::new`]'s rules.
#[derive(Debug)]
pub struct Mbarriers<const N: usize> {
    addr: u32,
    _not_send_sync: PhantomData<*mut u64>,
}

impl<const N: usize> Mbarriers<N> {
    const VALID: () = assert!(N >= 1 && N <= 32, "Mbarriers<N>: N must be in 1..=32");

    /// Declares and initialises `N` barriers of `arrivals` arrivals each;
    /// every thread of the CTA calls it at the same place (see
    /// [`Mbarrier::new`]). Panics (traps) on a bad `arrivals`.
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    #[cfg_attr(emulated, track_caller)]
    pub fn new(arrivals: u32) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::VALID;
        let addr = declare::<N>(arrivals, core::panic::Location::caller());
        Mbarriers {
            addr,
            _not_send_sync: PhantomData,
        }
    }

    /// Barrier `i`. Panics (traps) when `i >= N`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Mbarrier {
        assert!(i < N, "Mbarriers index out of bounds");
        Mbarrier {
            addr: self.addr + 8 * i as u32,
            _not_send_sync: PhantomData,
        }
    }

    /// Waits for the phase `phases` holds for barrier `i`, then flips it
    /// (as [`Mbarrier::wait`]). Panics (traps) when `i >= N`.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn wait(&self, i: usize, phases: &mut Phases<N>) {
        let mut p = Phase {
            parity: (phases.bits >> i) & 1,
        };
        self.get(i).wait(&mut p);
        phases.bits ^= 1 << i;
    }
}

/// The phase each of an [`Mbarriers<N>`]'s barriers waits for next, one bit
/// each (so it stays in a register when indexed at run time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Phases<const N: usize> {
    bits: u32,
}

impl<const N: usize> Phases<N> {
    /// Every barrier in its first phase.
    #[inline(always)]
    pub const fn new() -> Self {
        Phases { bits: 0 }
    }
}

impl Mbarrier {
    /// Declares a barrier object in shared memory at this call site and
    /// initialises it for `arrivals` arrivals per phase (1 ..= [`MAX_ARRIVALS`]).
    ///
    /// **Every thread of the CTA must call this, at the same place** (it ends
    /// with `sync_threads`): thread 0 of the block runs `mbarrier.init` and,
    /// on sm_90, `fence.mbarrier_init.release.cluster`, which makes the
    /// initialisation visible to the copy engine; the barrier then makes it
    /// visible to every thread. Like [`SharedArray::new`](crate::SharedArray::new),
    /// each call site is its own object: declare barriers at the top of the
    /// kernel, outside branches and loops.
    ///
    /// Panics (traps) when `arrivals` is 0 or above [`MAX_ARRIVALS`].
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    #[cfg_attr(emulated, track_caller)]
    pub fn new(arrivals: u32) -> Self {
        let addr = declare::<1>(arrivals, core::panic::Location::caller());
        Mbarrier {
            addr,
            _not_send_sync: PhantomData,
        }
    }

    /// The barrier object's address in the shared window, in bytes (for
    /// PTX written by hand).
    #[inline(always)]
    pub fn shared_addr(&self) -> u32 {
        self.addr
    }

    /// Arrives once on the current phase (release semantics at CTA scope):
    /// the phase completes with the last expected arrival, once the
    /// transaction count is zero too.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn arrive(&self) {
        on_device!("Mbarrier::arrive", {
            // SAFETY: `addr` is an initialised barrier object of this CTA.
            unsafe {
                core::arch::asm!(
                    "{{ .reg .b64 %state; mbarrier.arrive.shared.b64 %state, [{a}]; }}",
                    a = in(reg32) self.addr,
                    options(nostack, preserves_flags),
                );
            }
        }, emulated: {
            crate::emulator::mbarrier::arrive(self.addr, 0)
        })
    }

    /// Announces `bytes` more bytes of asynchronous copies for the current
    /// phase, then arrives once: what the thread that issues a
    /// [`bulk::load`](crate::bulk::load) of `bytes` bytes does. `bytes` is at
    /// most 2^20 - 1 per phase. sm_90, PTX ISA 8.0.
    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn arrive_expect_tx(&self, bytes: u32) {
        on_device!("Mbarrier::arrive_expect_tx", {
            // SAFETY: `addr` is an initialised barrier object of this CTA.
            unsafe {
                core::arch::asm!(
                    "{{ .reg .b64 %state; mbarrier.arrive.expect_tx.shared::cta.b64 %state, [{a}], {tx}; }}",
                    a = in(reg32) self.addr,
                    tx = in(reg32) bytes,
                    options(nostack, preserves_flags),
                );
            }
        }, emulated: {
            crate::emulator::mbarrier::arrive(self.addr, bytes)
        })
    }

    /// Announces `bytes` more bytes of asynchronous copies for the current
    /// phase without arriving. sm_90, PTX ISA 8.0.
    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn expect_tx(&self, bytes: u32) {
        on_device!("Mbarrier::expect_tx", {
            // SAFETY: `addr` is an initialised barrier object of this CTA.
            unsafe {
                core::arch::asm!(
                    "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [{a}], {tx};",
                    a = in(reg32) self.addr,
                    tx = in(reg32) bytes,
                    options(nostack, preserves_flags),
                );
            }
        }, emulated: {
            crate::emulator::mbarrier::expect_tx(self.addr, bytes)
        })
    }

    /// Whether the phase `phase` names has completed (acquire semantics when
    /// it has). Does not block and does not advance `phase`.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn test_wait(&self, phase: &Phase) -> bool {
        on_device!("Mbarrier::test_wait", {
            let done: u32;
            // SAFETY: `addr` is an initialised barrier object of this CTA.
            unsafe {
                core::arch::asm!(
                    "{{ .reg .pred %p; mbarrier.test_wait.parity.shared.b64 %p, [{a}], {ph}; selp.u32 {d}, 1, 0, %p; }}",
                    a = in(reg32) self.addr,
                    ph = in(reg32) phase.parity,
                    d = out(reg32) done,
                    options(nostack, preserves_flags),
                );
            }
            done != 0
        }, emulated: {
            crate::emulator::mbarrier::test_wait(self.addr, phase.parity)
        })
    }

    /// One probe of the phase `phase` names: `mbarrier.try_wait.parity` on sm_90,
    /// which suspends the thread in hardware for a while before it answers, and
    /// [`test_wait`](Self::test_wait) before sm_90.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn try_wait(&self, phase: &Phase) -> bool {
        #[cfg(target_feature = "sm_90")]
        {
            let done: u32;
            // SAFETY: `addr` is an initialised barrier object of this CTA.
            unsafe {
                core::arch::asm!(
                    "{{ .reg .pred %p; mbarrier.try_wait.parity.shared::cta.b64 %p, [{a}], {ph}; selp.u32 {d}, 1, 0, %p; }}",
                    a = in(reg32) self.addr,
                    ph = in(reg32) phase.parity,
                    d = out(reg32) done,
                    options(nostack, preserves_flags),
                );
            }
            done != 0
        }
        #[cfg(not(target_feature = "sm_90"))]
        self.test_wait(phase)
    }

    /// Waits until the phase `phase` names has completed, then advances
    /// `phase` to the next one. Memory the phase's copies wrote, and writes
    /// other threads made before arriving, are visible afterwards.
    ///
    /// On sm_90 this loops on `mbarrier.try_wait.parity`, which suspends the
    /// thread in hardware for a while; before sm_90 on `test_wait`. Waiting
    /// for a phase that nothing will complete hangs the GPU; the emulator
    /// reports it with the barrier's pending arrivals and bytes.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn wait(&self, phase: &mut Phase) {
        on_device!("Mbarrier::wait", {
            while !self.try_wait(phase) {}
        }, emulated: {
            crate::emulator::mbarrier::wait(self.addr, phase.parity)
        });
        phase.advance();
    }

    /// [`arrive`](Self::arrive), then [`wait`](Self::wait): a split-free
    /// barrier among the `arrivals` threads.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub fn arrive_and_wait(&self, phase: &mut Phase) {
        self.arrive();
        self.wait(phase);
    }

    /// Invalidates the object (`mbarrier.inval`), so its 8 bytes may be used
    /// as ordinary shared memory.
    ///
    /// # Safety
    /// No thread uses this barrier (its handle or its address) afterwards, and
    /// no copy still completes on it.
    #[inline(always)]
    #[cfg_attr(emulated, track_caller)]
    pub unsafe fn inval(self) {
        on_device!("Mbarrier::inval", {
            // SAFETY: the caller's contract.
            unsafe {
                core::arch::asm!(
                    "mbarrier.inval.shared.b64 [{a}];",
                    a = in(reg32) self.addr,
                    options(nostack, preserves_flags),
                );
            }
        }, emulated: {
            crate::emulator::mbarrier::inval(self.addr)
        })
    }
}
