//! Static figures of one main-loop iteration (one K tile), per wave: MFMA count, LDS bank
//! conflicts (`lds.rs` bank model) and the MFMA share of issue cycles, with MFMA cycles
//! from ARCH.md ("MFMA cost": 32 cycles for the 32x32 shapes used) and **4 cycles for
//! every other instruction** (`s_nop n` = n+1 such slots; waits counted as one issue,
//! not as the time they stall).

use crate::ir::Kernel;
use crate::lds;
use crate::program::{Item, Program};
use gemm_isa::{Format, Op, Operand};

/// The figures.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub mfma_per_k_step: u32,
    /// MFMAs each wave runs once to zero its accumulators (`lower.rs` `zero_accumulators`:
    /// an inline-constant 0 as srcC), outside the K tiles.
    pub zeroing_mfmas: u32,
    pub other_insts_per_k_step: u32,
    pub mfma_cycles: u32,
    pub other_cycles: u32,
    /// Conflict cycles of the MFMA fragment reads per K step (worst wave).
    pub lds_read_conflicts: u32,
    /// Conflict cycles of the staging writes per K step (worst wave).
    pub lds_write_conflicts: u32,
}

impl Stats {
    /// MFMA cycles / all issue cycles of one iteration.
    pub fn mfma_share(&self) -> f64 {
        let t = self.mfma_cycles + self.other_cycles;
        if t == 0 {
            0.0
        } else {
            self.mfma_cycles as f64 / t as f64
        }
    }
}

/// Figures of the first loop iteration of `prog` (after waits and NOPs).
pub fn stats(k: &Kernel, prog: &Program) -> Stats {
    let mut s = Stats::default();
    if matches!(k.config.split, crate::ir::SplitK::Reduce | crate::ir::SplitK::Transpose) {
        // No main loop (the transpose's LDS tile is written and read once).
        return s;
    }
    let (r, w) = if k.config.is_decode() { (0, 0) } else { lds::k_step_conflicts(k) };
    s.lds_read_conflicts = r;
    s.lds_write_conflicts = w;
    s.zeroing_mfmas = prog
        .items
        .iter()
        .filter(|it| matches!(it, Item::I(i) if i.op.def().format == Format::Mai && matches!(i.operands.get(3), Some(Operand::Int(_)))))
        .count() as u32;
    let Some((lp, target)) = prog.iteration else { return s };
    let Some(start) = prog.items.iter().position(|it| *it == Item::Label(lp)) else { return s };
    for it in &prog.items[start + 1..] {
        match it {
            Item::Branch(_, t) if *t == target => {
                s.other_insts_per_k_step += 1;
                s.other_cycles += 4;
                break;
            }
            Item::I(i) if i.op.def().format == Format::Mai => {
                s.mfma_per_k_step += 1;
                s.mfma_cycles += crate::lower::mfma_cycles(&k.config);
            }
            Item::I(i) if i.op == Op::S_NOP => {
                let n = match i.operands.first() {
                    Some(Operand::Imm(v)) => *v as u32 + 1,
                    _ => 1,
                };
                s.other_insts_per_k_step += 1;
                s.other_cycles += 4 * n;
            }
            Item::I(_) | Item::Branch(..) => {
                s.other_insts_per_k_step += 1;
                s.other_cycles += 4;
            }
            Item::Label(_) | Item::Note(_) => {}
        }
    }
    s
}
