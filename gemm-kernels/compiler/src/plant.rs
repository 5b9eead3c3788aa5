//! Planted bugs (issue 12 item 7): each race the Mojo port of the 8-wave ping-pong met
//! (seed 002 §5, §14, §15.13), put into a variant of a compiled schedule so that a test
//! can show the emulator's checkers report it and its longest-latency scheduling mode
//! turns it into a wrong number. Never used by the catalogue; [`crate::Options::plant`]
//! is `None` by default.
//!
//! Three bugs are edits of the loop schedule (data, `schedule/`) before lowering, so the
//! wait pass still places every wait the edited schedule needs; the vmcnt bug is an edit
//! of the waits the pass placed, because the pass never derives a wrong wait.

use crate::program::Item;
use crate::schedule::{LoopSchedule, MOp, Role, Schedule};
use gemm_isa::{Op, Operand};

/// One bug to plant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlantedBug {
    /// The shared A/B buffers overwritten early (§14.3): group 1 lags two phases instead
    /// of one (two stagger barriers before the loop, two re-align barriers after it), so
    /// group 0's copies of the next K tile land in the buffer group 1 is still reading.
    SharedBufferOverwrittenEarly,
    /// A `vmcnt` too weak for the loads still in flight (§15.13): the first wait of the
    /// loop body with a `vmcnt` allows one operation more, so the last copy of the tile
    /// (LDS-DMA: read from LDS by other waves after the barrier; register-staged: the
    /// staging VGPR written to LDS) may not have landed.
    WeakVmcnt,
    /// The barrier that publishes the next K tile (after the last memory cluster) removed
    /// from the loop body: other waves read the copies with nothing ordering them. Also
    /// planted into the 8-wave interleave of block-scaled fp8 (`schedule::interleave8`).
    BarrierRemoved,
    /// The stagger's conditional barrier on the wrong side: the re-align barrier after
    /// the loop taken by group 1 (like the stagger before it) instead of group 0. Group 1
    /// runs two barriers more than group 0, so barriers pair across program points to the
    /// end, and group 1's last two are released only because group 0 ended.
    StaggerWrongSide,
    /// Phase counters (`schedule/phase.rs`): a counter bumped before the reads of the
    /// buffer have completed: the `lgkmcnt` of the wait before the last signal of the loop
    /// tile that follows LDS reads (the one that releases the tile's last reads of its
    /// buffer to the other group, whose copies overwrite it next) allows one DS operation
    /// more.
    PhaseSignalBeforeReads,
    /// Phase counters: a counter bumped before the next tile's LDS-DMA copies have landed:
    /// the `vmcnt` of the wait before the signal that publishes them allows one more.
    PhaseSignalBeforeCopies,
    /// Phase counters: a wait on the wrong phase: group 0 compares group 1's counter with
    /// the threshold of the previous K tile (sync point `p - 1 - S` instead of `p - 1`, `S`
    /// sync points per tile, as an off-by-one in the stage index would), so it reads the
    /// next K tile before group 1's copies of it have landed and overwrites the buffer
    /// group 1 still reads (the counter form of [`Self::SharedBufferOverwrittenEarly`]).
    PhaseWrongPhase,
}

impl PlantedBug {
    pub const ALL: [PlantedBug; 4] = [
        PlantedBug::SharedBufferOverwrittenEarly,
        PlantedBug::WeakVmcnt,
        PlantedBug::BarrierRemoved,
        PlantedBug::StaggerWrongSide,
    ];
    /// The bugs of the phase-counter sync.
    pub const PHASE: [PlantedBug; 3] =
        [PlantedBug::PhaseSignalBeforeReads, PlantedBug::PhaseSignalBeforeCopies, PlantedBug::PhaseWrongPhase];
    /// Whether the bug is an edit of the waits the pass placed (after lowering).
    fn edits_program(self) -> bool {
        matches!(self, PlantedBug::WeakVmcnt | PlantedBug::PhaseSignalBeforeReads | PlantedBug::PhaseSignalBeforeCopies)
    }
}

/// Why a bug cannot be planted into a kernel.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlantError {
    #[error("{bug:?} needs a staggered ping-pong loop schedule; the kernel has {have}")]
    NoStagger { bug: PlantedBug, have: String },
    #[error("{0:?}: the kernel has no place for it ({1})")]
    NoSite(PlantedBug, &'static str),
    #[error("{0:?} needs phase-counter sync (`Sync::PhaseCounters`)")]
    NoPhaseCounters(PlantedBug),
}

fn staggered(ls: &Option<LoopSchedule>) -> bool {
    ls.as_ref().is_some_and(|l| {
        matches!(l.schedule, Schedule::PingPong { .. } | Schedule::PingPongSlim { .. } | Schedule::Quadrant)
            && l.enter.iter().any(|(r, _)| *r == Role::Group(1))
    })
}

/// The schedule edits (before lowering).
pub fn apply_schedule(ls: &mut Option<LoopSchedule>, bug: PlantedBug) -> Result<(), PlantError> {
    let phase = ls.as_ref().is_some_and(|l| l.enter.iter().any(|(_, op)| matches!(op, MOp::PhaseInit { .. })));
    if PlantedBug::PHASE.contains(&bug) && !phase {
        return Err(PlantError::NoPhaseCounters(bug));
    }
    if bug == PlantedBug::PhaseWrongPhase {
        let l = ls.as_mut().expect("checked above");
        let per_tile = l.body.iter().flat_map(|c| &c.ops).filter(|op| matches!(op, MOp::PhaseSync { .. })).count();
        for (_, op) in l.enter.iter_mut() {
            if let MOp::PhaseInit { behind, ahead } = op {
                *op = MOp::PhaseInit { behind: *behind + per_tile as u8, ahead: *ahead };
            }
        }
        return Ok(());
    }
    if bug.edits_program() {
        return Ok(());
    }
    // The barrier that publishes the next tile exists in the 8-wave interleave too
    // (`schedule::interleave8`, block-scaled fp8): the one bug that needs no stagger.
    let rotated = ls.as_ref().is_some_and(|l| {
        matches!(l.schedule, Schedule::Interleave { .. })
            && l.enter.iter().any(|(_, op)| matches!(op, MOp::Barrier { .. }))
    });
    let plantable = staggered(ls) || (bug == PlantedBug::BarrierRemoved && rotated);
    if !plantable {
        let have = ls.as_ref().map_or("no loop schedule".into(), |l| l.schedule.label());
        return Err(PlantError::NoStagger { bug, have });
    }
    let Some(l) = ls.as_mut() else { return Ok(()) };
    let barrier = MOp::Barrier { dma_in_flight: false };
    match bug {
        PlantedBug::SharedBufferOverwrittenEarly => {
            l.enter.push((Role::Group(1), barrier.clone()));
            l.exit.push((Role::Group(0), barrier));
        }
        PlantedBug::BarrierRemoved => {
            let publish = l
                .body
                .iter()
                .enumerate()
                .flat_map(|(c, cl)| cl.ops.iter().enumerate().map(move |(i, op)| (c, i, op)))
                .filter(|(_, _, op)| **op == barrier)
                .map(|(c, i, _)| (c, i))
                .next_back()
                .ok_or(PlantError::NoSite(bug, "no barrier publishes the next K tile"))?;
            l.body[publish.0].ops.remove(publish.1);
        }
        PlantedBug::StaggerWrongSide => {
            for (r, _) in l.exit.iter_mut() {
                if *r == Role::Group(0) {
                    *r = Role::Group(1);
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// `vmcnt` of an `s_waitcnt` immediate (ISA.md §3.1: bits 3:0 and 15:14).
fn vmcnt(imm: i64) -> u32 {
    let v = imm as u32;
    (v & 0xF) | ((v >> 14) & 3) << 4
}

/// `lgkmcnt` of an `s_waitcnt` immediate (bits 11:8).
fn lgkmcnt(imm: i64) -> u32 {
    (imm as u32 >> 8) & 0xF
}

fn with_lgkmcnt(imm: i64, lgkm: u32) -> i64 {
    ((imm as u32 & !0xF00) | (lgkm & 0xF) << 8) as i64
}

fn with_vmcnt(imm: i64, vm: u32) -> i64 {
    let v = (imm as u32) & !0xC00F;
    (v | (vm & 0xF) | ((vm >> 4) & 3) << 14) as i64
}

/// The program edits (after the wait pass). `iteration`: the main loop's labels
/// (`Program::iteration`).
pub fn apply_program(items: &mut [Item], iteration: Option<(u32, u32)>, bug: PlantedBug) -> Result<(), PlantError> {
    if !bug.edits_program() {
        return Ok(());
    }
    let (start, end) = iteration.ok_or(PlantError::NoSite(bug, "no main loop"))?;
    let from = items
        .iter()
        .position(|it| matches!(it, Item::Label(l) if *l == start))
        .ok_or(PlantError::NoSite(bug, "no main loop label"))?;
    if bug != PlantedBug::WeakVmcnt {
        // The signals of one loop tile (up to the branch that leaves it) and the waits
        // right before them.
        let to = items[from..]
            .iter()
            .position(|it| matches!(it, Item::Branch(_, t) if *t == end))
            .map_or(items.len(), |p| from + p);
        let waits: Vec<(usize, i64)> = (from + 1..to)
            .filter(|&p| matches!(&items[p], Item::I(i) if i.op == Op::DS_ADD_U32))
            .filter_map(|p| match &items[p - 1] {
                Item::I(w) if w.op == Op::S_WAITCNT => match w.operands.first() {
                    Some(Operand::Imm(imm)) => Some((p - 1, *imm)),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let site = if bug == PlantedBug::PhaseSignalBeforeReads {
            waits
                .iter()
                .rev()
                .find(|(_, imm)| lgkmcnt(*imm) < 15)
                .map(|&(p, imm)| (p, with_lgkmcnt(imm, lgkmcnt(imm) + 1)))
        } else {
            waits.iter().find(|(_, imm)| vmcnt(*imm) < 63).map(|&(p, imm)| (p, with_vmcnt(imm, vmcnt(imm) + 1)))
        };
        let (p, imm) = site.ok_or(PlantError::NoSite(bug, "no wait before a phase signal with that counter"))?;
        let Item::I(w) = &mut items[p] else { unreachable!() };
        w.operands[0] = Operand::Imm(imm);
        return Ok(());
    }
    for it in items[from..].iter_mut() {
        let Item::I(i) = it else { continue };
        if i.op != Op::S_WAITCNT {
            continue;
        }
        let Some(Operand::Imm(imm)) = i.operands.first().cloned() else { continue };
        let vm = vmcnt(imm);
        if vm < 63 {
            i.operands[0] = Operand::Imm(with_vmcnt(imm, vm + 1));
            return Ok(());
        }
    }
    Err(PlantError::NoSite(bug, "no s_waitcnt with a vmcnt in the main loop"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vmcnt_field_round_trips() {
        // LLVM 22 (ISA.md §3.1): vmcnt(0) = 0x0F70, vmcnt(16) = 0x4F70, vmcnt(0) lgkmcnt(0) = 0x0070.
        assert_eq!(vmcnt(0x0F70), 0);
        assert_eq!(vmcnt(0x4F70), 16);
        assert_eq!(with_vmcnt(0x0F70, 16), 0x4F70);
        assert_eq!(with_vmcnt(0x0070, 1), 0x0071);
        assert_eq!(with_vmcnt(0x4F70, 15), 0x0F7F);
    }
}
