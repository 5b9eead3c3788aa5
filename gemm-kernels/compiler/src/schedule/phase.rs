//! Explicit two-counter phase sync (issue 12 item 6; seed 002 §6): the loop schedule's
//! `s_barrier`s replaced by two LDS counters, one per wave group, that say how many sync
//! points each group has passed, so that the phase offset between the groups is written
//! in the code as wait thresholds instead of being implied by how the hardware pairs the
//! k-th `s_barrier` of one group with the k-th of the other (seed 002 §4.2-§4.3, §5).
//!
//! Protocol (every wave runs the same code; `G = W/2` waves per group, group `g` =
//! waves `[g*G, (g+1)*G)`, as [`super::Role::Group`]):
//!
//! * [`MOp::PhaseInit`] (once, after the prologue): wave 0 zeroes both counters (an LDS
//!   dword pair after the two tile buffers); an `s_barrier` follows it, so every wave's
//!   first atomic is ordered after the zeroing. Each wave sets its thresholds `t0 = t1 =
//!   0`; with a stagger, group 0 starts `t1` at `-G` (it waits for group 1 one sync point
//!   behind) and group 1 starts `t0` at `+G` (it waits for group 0 one sync point ahead).
//! * [`MOp::PhaseSync`] (each sync point, where the barrier was): the wave waits for its
//!   own LDS operations (and LDS-DMA unless the point lets them stay in flight), exactly
//!   as before a barrier (`waitcnt.rs` treats an LDS atomic as a release), then signals
//!   with `ds_add_u32` on its group's counter (lane 0 adds 1), adds `G` to both
//!   thresholds and polls both counters (`ds_read_b64`, `s_sleep 1` between tries) until
//!   `counter0 >= t0` and `counter1 >= t1`.
//!
//! At sync point `p` the wave has thus waited for every wave of its own group to reach
//! `p` and for every wave of the other group to reach `p - 1` (group 0), `p + 1` (group 1)
//! or `p` (no stagger): the same pairing as the staggered barriers, written as numbers.
//! The stagger barrier before the loop disappears (its effect is the initial thresholds);
//! group 0's re-align barrier after the loop becomes one more sync point of group 0, which
//! lets group 1 out of its last one. The race detector (`gemm-emu` `race.rs`) sees the
//! atomics as releases and the polling reads, once waited for, as acquires.
//!
//! Declines: a kernel without a loop schedule (the pipelined loop has no sync points of
//! its own), and one whose two LDS buffers leave no 8 bytes for the counters.

use super::{LoopSchedule, MOp, Reason, Role};
use crate::ir::Kernel;

/// How the waves of a scheduled main loop synchronise (part of [`crate::ir::KernelConfig`]
/// and of the kernel's name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Sync {
    /// `s_barrier` (with the conditional-barrier stagger where the schedule has one).
    #[default]
    Barrier,
    /// Two LDS phase counters (this module).
    PhaseCounters,
}

impl Sync {
    /// The kernel-name suffix (empty for [`Sync::Barrier`]).
    pub fn name_suffix(&self) -> &'static str {
        match self {
            Sync::Barrier => "",
            Sync::PhaseCounters => "_pc",
        }
    }
}

/// Bytes of LDS the counters take (two dwords, 8-byte aligned for `ds_read_b64`).
pub const COUNTER_BYTES: u32 = 8;

/// Why phase counters do not apply.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Decline {
    #[error("the pipelined loop has no loop schedule whose sync points counters could replace")]
    NoSchedule,
    #[error("the two LDS buffers take {used} of the arch's {max} bytes: no room for the 8-byte phase counters")]
    NoLds { used: u32, max: u32 },
}

/// LDS byte offset of the counters (after the tile buffers).
pub fn counter_offset(k: &Kernel) -> u32 {
    (k.lds_buffers * k.lds_buffer_bytes()).next_multiple_of(8)
}

/// Extra LDS bytes the kernel needs for its sync.
pub fn lds_bytes(k: &Kernel) -> u32 {
    match k.config.sync {
        Sync::Barrier => 0,
        Sync::PhaseCounters => counter_offset(k) - k.lds_buffers * k.lds_buffer_bytes() + COUNTER_BYTES,
    }
}

/// Whether the schedule staggers group 1 one barrier behind group 0.
pub fn staggered(ls: &LoopSchedule) -> bool {
    ls.enter.iter().any(|(r, op)| *r == Role::Group(1) && matches!(op, MOp::Barrier { .. }))
}

/// Rewrites `ls`'s barriers as phase-counter sync points.
pub fn to_counters(k: &Kernel, ls: &mut LoopSchedule) -> Result<(), Reason> {
    let used = k.lds_buffers * k.lds_buffer_bytes();
    let max = crate::fit::lds_per_cu(k.config.arch);
    if counter_offset(k) + COUNTER_BYTES > max {
        return Err(Decline::NoLds { used, max }.into());
    }
    let stagger = staggered(ls);
    let sync = |op: &MOp| match op {
        MOp::Barrier { dma_in_flight } => MOp::PhaseSync { dma_in_flight: *dma_in_flight },
        other => other.clone(),
    };
    // Zero the counters, then one real barrier orders the zeroing before every atomic
    // (and, as the schedules' own first barrier did, the prologue before the loop).
    let lag = u8::from(stagger);
    let init = MOp::PhaseInit { behind: lag, ahead: lag };
    let mut enter = vec![(Role::All, init), (Role::All, MOp::Barrier { dma_in_flight: false })];
    let mut first_all = true;
    for (r, op) in &ls.enter {
        match (r, op) {
            // The prologue's barrier is the one just added.
            (Role::All, MOp::Barrier { .. }) if first_all => first_all = false,
            // The stagger: now the initial thresholds.
            (Role::Group(1), MOp::Barrier { .. }) if stagger => {}
            _ => enter.push((*r, sync(op))),
        }
    }
    ls.enter = enter;
    for cl in ls.body.iter_mut() {
        for op in cl.ops.iter_mut() {
            *op = sync(op);
        }
    }
    // The re-align after the loop: group 0's extra sync point releases group 1's last.
    for (_, op) in ls.exit.iter_mut() {
        *op = sync(op);
    }
    ls.rule.push_str("; phase counters in place of the barriers");
    Ok(())
}
