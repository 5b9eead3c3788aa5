//! Hazard NOPs: the dependencies the hardware does not interlock, with the wait-state
//! counts of LLVM's `GCNHazardRecognizer.cpp` for gfx940 (`checkMAIHazards90A`,
//! `checkMAIVALUHazards`, `checkVMEMHazards`; ISA.md §1.5). gfx950 needs one more wait
//! state after XDL results (ISA.md §1.5: llc-22 emits `s_nop 9` where gfx942 has
//! `s_nop 8`), applied here to every XDL rule.
//!
//! Rules (wait states between producer P and consumer X):
//! * XDL MFMA P writes R, MFMA X reads R as srcC: 0 when the same tuple (accumulation
//!   chain), else passes+1; as srcA/B: passes+3.
//! * XDL MFMA P writes R, non-MFMA X reads or writes R (VALU incl. `v_accvgpr_read`,
//!   VMEM, DS): passes+3.
//! * VALU P writes R, MFMA X reads R: 2; `v_accvgpr_write` P, X reads R as srcA/B: 3.
//! * VALU P writes an SGPR (VCC included), VMEM X reads it: 5.
//! * VALU P writes an SGPR, VALU X reads it: 2 (`hasVDecCoExecHazard`, gfx940 and
//!   gfx950: `VALUWriteSGPRVALUReadWaitstates`). LLVM checks explicit uses only; this
//!   pass also counts the implicit VCC of `v_cndmask_b32_e32`, which costs one
//!   `s_nop 1` per compare/select pair outside the main loop and is never wrong.
//!
//! * VALU P writes VGPR R, `v_readlane`/`v_readfirstlane` X reads R: 1 (gfx940
//!   `checkVALUHazards`, VALU write VGPR -> readlane read).
//! * SALU P writes M0, LDS-DMA X (`buffer_load ... lds`, whose LDS address is M0) reads
//!   it: 1 (`ReadM0WaitStates`, `checkReadM0Hazards`).
//! * Transcendental VALU P (`v_rcp`, `v_exp`, ...) writes R, non-transcendental VALU X
//!   reads R: 1 (`TransDefWaitstates`, gfx940).
//! * VMEM store P of more than 8 bytes per lane reads data R, VALU or MFMA X writes R: 2
//!   (`checkVALUHazardsHelper`, gfx940).
//!
//! `passes` is taken conservatively as 16 for 32x32 and 8 for 16x16 shapes (LLVM's
//! `SISchedule.td` counts are not larger). A wait state is one instruction, or `n+1` for
//! `s_nop n`. The search walks back over the control-flow graph (loop back edges too) and
//! iterates until the NOP counts are stable.

use crate::program::{reads_writes, Cfg, Item};
use gemm_isa::{Arch, Format, Inst, Op, Operand, RegFile};

const LOOKBACK: i32 = 24;

fn is_mfma(i: &Inst) -> bool {
    i.op.def().format == Format::Mai
}

fn is_valu(i: &Inst) -> bool {
    matches!(i.op.def().format, Format::Vop1 | Format::Vop2 | Format::Vop3 | Format::Vop3p | Format::Vopc)
}

fn is_salu(i: &Inst) -> bool {
    matches!(i.op.def().format, Format::Sop1 | Format::Sop2 | Format::Sopk)
}

/// M0 as `program::regs_of` names it (a pseudo-register at 1000 + its operand code).
const M0: (RegFile, u16) = (RegFile::Ttmp, 1000 + 124);

fn is_vmem(i: &Inst) -> bool {
    matches!(i.op.def().format, Format::Mubuf | Format::Global | Format::Flat)
}

/// A vector-memory store of more than 8 bytes per lane (`buffer_store_dwordx3/x4`, ...),
/// whose data registers a VALU must not overwrite for 2 wait states (LLVM
/// `checkVALUHazardsHelper`, gfx940: the store reads its data after issue).
fn is_wide_store(i: &Inst) -> bool {
    is_vmem(i)
        && i.op.name().contains("store")
        && i.operands.first().is_some_and(|o| crate::program::regs_of(o).len() > 2)
}

/// Transcendental VALU ops (LLVM `isTRANS`): exp, log, rcp, rsq, sqrt, sin, cos.
fn is_trans(i: &Inst) -> bool {
    let name = i.op.name();
    ["v_exp_", "v_log_", "v_rcp_", "v_rsq_", "v_sqrt_", "v_sin_", "v_cos_"].iter().any(|p| name.starts_with(p))
}

fn passes(i: &Inst) -> i32 {
    let name = i.op.name();
    if name.contains("32x32") {
        16
    } else if name.contains("16x16") {
        8
    } else {
        4
    }
}

fn mfma_operand_regs(i: &Inst, n: usize) -> Vec<(RegFile, u16)> {
    i.operands.get(n).map(crate::program::regs_of).unwrap_or_default()
}

type Rs = Vec<(RegFile, u16)>;

/// Per-instruction facts computed once: reads, writes, MFMA operand registers.
struct Facts {
    reads: Rs,
    writes: Rs,
    mfma_ops: [Rs; 4],
}

fn facts(i: &Inst) -> Facts {
    let (reads, writes) = reads_writes(i);
    let mfma_ops = if is_mfma(i) { [0, 1, 2, 3].map(|n| mfma_operand_regs(i, n)) } else { Default::default() };
    Facts { reads, writes, mfma_ops }
}

/// Wait states `x` needs after `p`.
fn need(arch: Arch, p: &Inst, pf: &Facts, x: &Inst, xf: &Facts) -> i32 {
    let extra = if arch == Arch::Gfx950 { 1 } else { 0 };
    let pw = &pf.writes;
    let (xr, xw) = (&xf.reads, &xf.writes);
    let overlaps = |a: &[(RegFile, u16)], b: &[(RegFile, u16)]| a.iter().any(|r| b.contains(r));
    let mut n = 0;
    if is_mfma(p) {
        let dst = &pf.mfma_ops[0];
        if is_mfma(x) {
            let srcc = &xf.mfma_ops[3];
            if overlaps(dst, srcc) && dst != srcc {
                n = n.max(passes(p) + 1 + extra);
            }
            if overlaps(dst, &xf.mfma_ops[1]) || overlaps(dst, &xf.mfma_ops[2]) {
                n = n.max(passes(p) + 3 + extra);
            }
        } else if overlaps(dst, xr) || overlaps(dst, xw) {
            n = n.max(passes(p) + 3 + extra);
        }
    }
    if is_valu(p) && is_mfma(x) {
        let vr: Vec<_> = pw.iter().filter(|r| matches!(r.0, RegFile::Vgpr | RegFile::Agpr)).copied().collect();
        if overlaps(&vr, xr) {
            n = n.max(2);
        }
        if p.op == Op::V_ACCVGPR_WRITE_B32 && (overlaps(&vr, &xf.mfma_ops[1]) || overlaps(&vr, &xf.mfma_ops[2])) {
            n = n.max(3);
        }
    }
    if is_valu(p) && matches!(x.op, Op::V_READLANE_B32 | Op::V_READFIRSTLANE_B32) {
        let vr: Vec<_> = pw.iter().filter(|r| r.0 == RegFile::Vgpr).copied().collect();
        if overlaps(&vr, xr) {
            n = n.max(1);
        }
    }
    if is_salu(p) && is_vmem(x) && x.mods.lds && pw.contains(&M0) {
        n = n.max(1);
    }
    if is_valu(p) && is_valu(x) && is_trans(p) && !is_trans(x) && overlaps(pw, xr) {
        n = n.max(1);
    }
    if is_wide_store(p) && (is_valu(x) || is_mfma(x)) {
        let data = p.operands.first().map(crate::program::regs_of).unwrap_or_default();
        if overlaps(&data, xw) {
            n = n.max(2);
        }
    }
    if is_valu(p) && (is_vmem(x) || is_valu(x)) {
        let sw: Vec<_> = pw.iter().filter(|r| matches!(r.0, RegFile::Sgpr | RegFile::Ttmp)).copied().collect();
        if overlaps(&sw, xr) {
            n = n.max(if is_vmem(x) { 5 } else { 2 });
        }
    }
    n
}

fn wait_states(it: &Item) -> i32 {
    match it {
        Item::I(i) if i.op == Op::S_NOP => match i.operands.first() {
            Some(Operand::Imm(v)) => (*v as i32 & 0xF) + 1,
            _ => 1,
        },
        Item::I(_) | Item::Branch(..) => 1,
        Item::Label(_) | Item::Note(_) => 0,
    }
}

/// Inserts `s_nop`s; returns the total wait states added.
pub fn insert_nops(items: &mut Vec<Item>, arch: Arch) -> usize {
    let cfg = Cfg::build(items);
    let mut block_of = vec![0usize; items.len()];
    for (b, &(s, e)) in cfg.blocks.iter().enumerate() {
        for x in block_of.iter_mut().take(e).skip(s) {
            *x = b;
        }
    }
    let mut nops = vec![0i32; items.len()];
    let fs: Vec<Option<Facts>> =
        items.iter().map(|it| if let Item::I(i) = it { Some(facts(i)) } else { None }).collect();
    // Only these can be the second instruction of a rule, or the first.
    let consumer = |i: &Inst| is_mfma(i) || is_valu(i) || is_vmem(i) || i.op.def().format == Format::Ds;
    let producer = |i: &Inst| is_mfma(i) || is_valu(i) || is_salu(i) || is_wide_store(i);
    for _round in 0..8 {
        let mut changed = false;
        for xi in 0..items.len() {
            let Item::I(x) = &items[xi] else { continue };
            if !consumer(x) {
                continue;
            }
            let xf = fs[xi].as_ref().unwrap();
            // Walk back: (position, wait states between the item before it and x). Every
            // loop contains instructions, so the distance grows and the walk ends.
            let mut required = 0;
            // (block, walk from this index down, distance so far)
            let mut stack = vec![(block_of[xi], xi, nops[xi])];
            while let Some((b, mut pos, mut dist)) = stack.pop() {
                loop {
                    if dist >= LOOKBACK {
                        break;
                    }
                    if pos == cfg.blocks[b].0 {
                        for &pb in &cfg.preds[b] {
                            stack.push((pb, cfg.blocks[pb].1, dist));
                        }
                        break;
                    }
                    let q = pos - 1;
                    if let Item::I(p) = &items[q] {
                        if producer(p) {
                            required = required.max(need(arch, p, fs[q].as_ref().unwrap(), x, xf) - dist);
                        }
                    }
                    dist += wait_states(&items[q]) + nops[q];
                    pos = q;
                }
            }
            // `required` counts wait states beyond those already present.
            if required > 0 {
                nops[xi] += required;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let total: i32 = nops.iter().sum();
    let mut out = Vec::with_capacity(items.len() + 32);
    for (it, n) in items.drain(..).zip(nops) {
        let mut n = n;
        while n > 0 {
            let k = n.min(16);
            out.push(Item::I(Inst::new(Op::S_NOP, &[Operand::Imm((k - 1) as i64)])));
            n -= k;
        }
        out.push(it);
    }
    *items = out;
    total as usize
}
