//! Wait-state hazard checker for the dependencies the hardware does not interlock
//! (LLVM `GCNHazardRecognizer.cpp`, `checkMAIVALUHazards` / `checkMAIHazards90A`, as
//! summarised in ISA.md §1.5). Wait states are counted as LLVM counts them: one per
//! instruction issued by the wave, `s_nop N` gives N+1; stalls on `s_waitcnt` or
//! `s_barrier` do not count (LLVM's conservative model).
//!
//! Rules (gfx940 numbers; gfx950 adds one for XDL results of more than 2 passes):
//! * MFMA writes a VGPR/AGPR, a VALU, VMEM, DS or `v_accvgpr_read` reads it, or a VALU
//!   writes it: XDL `passes + 3`, SMFMA (f32 inputs) `passes + 2`.
//! * An XDL MFMA reads a register as srcC, a VALU then writes it: 2 passes -> 1,
//!   4 -> 3, 8 -> 7, 16 -> 15.
//! * A VALU writes a VGPR that an MFMA then reads: 2 wait states.
//!
//! The numbers are calibrated against llc-22 output (`tests/hazard.rs`): LLVM's code must
//! be silent under this checker, and dropping its `s_nop` must make it fire.

use crate::mfma::Shape;
use crate::report::{Checker, Kind};
use crate::scheduler::Env;
use crate::valu::regs_of;
use crate::wave::Wave;
use gemm_isa::table::{Access, Field};
use gemm_isa::{Arch, Format, Inst, Op, RegFile};
use std::collections::VecDeque;

type Regs = Vec<(RegFile, u16)>;

#[derive(Debug, Clone)]
struct MfmaRec {
    dst: Regs,
    srcc: Regs,
    shape: Shape,
    end: u64,
    pc: u64,
}

#[derive(Debug, Clone)]
struct ValuRec {
    dst: Regs,
    end: u64,
    pc: u64,
}

/// Per-wave history for the checker.
#[derive(Debug, Default, Clone)]
pub struct HazardState {
    ws: u64,
    mfmas: VecDeque<MfmaRec>,
    valus: VecDeque<ValuRec>,
}

/// VALU write -> MFMA read (srcA/B/C) on gfx940/gfx950 (`LegacyVALUWritesVGPRWaitStates`;
/// llc-22 puts `s_nop 1` right after the last `v_mov` feeding an MFMA on both archs).
const VALU_WRITE_MFMA_READ: u64 = 2;

/// Largest wait-state requirement, beyond which history is dropped.
const HORIZON: u64 = 24;

fn overlap(a: &Regs, b: &Regs) -> bool {
    a.iter().any(|x| b.contains(x))
}

fn vector_only(r: Regs) -> Regs {
    r.into_iter().filter(|(f, _)| matches!(f, RegFile::Vgpr | RegFile::Agpr)).collect()
}

/// (registers read, registers written) of an instruction, vector registers only.
fn uses(inst: &Inst) -> (Regs, Regs) {
    let mut rd = Vec::new();
    let mut wr = Vec::new();
    let shape = Shape::of(inst.op);
    for (s, o) in inst.slots().iter().zip(&inst.operands) {
        let n = match (shape, s.field) {
            (Some(sh), Field::Src0 | Field::Src1) => sh.ab_regs() as u8,
            (Some(sh), Field::Src2 | Field::Vdst) => sh.cd_regs() as u8,
            _ => s.dwords.max(1),
        };
        let regs = vector_only(regs_of(o, n));
        match s.access {
            Access::Read => rd.extend(regs),
            Access::Write => wr.extend(regs),
            Access::ReadWrite => {
                rd.extend(regs.clone());
                wr.extend(regs);
            }
        }
    }
    (rd, wr)
}

/// Wait states an MFMA result needs before a VALU/memory read or a VALU write.
pub fn mfma_result_wait_states(arch: Arch, sh: &Shape) -> u64 {
    let base = if sh.xdl { sh.passes + 3 } else { sh.passes + 2 };
    let extra = u32::from(arch == Arch::Gfx950 && sh.xdl && sh.passes > 2);
    u64::from(base + extra)
}

/// Checks `inst` of wave `w` against the history, then records it.
pub fn check(env: &mut Env, w: &Wave, inst: &Inst) {
    let fmt = inst.op.def().format;
    let is_mfma = fmt == Format::Mai;
    let is_valu = matches!(fmt, Format::Vop1 | Format::Vop2 | Format::Vopc | Format::Vop3 | Format::Vop3p);
    let is_mem = matches!(fmt, Format::Ds | Format::Mubuf | Format::Global | Format::Flat);
    let arch = env.arch;
    let mut found: Vec<(u64, u64, u64, String)> = Vec::new();
    {
        let hs = &env.hazard[w.id];
        if is_valu || is_mem || is_mfma {
            let (rd, wr) = uses(inst);
            for m in &hs.mfmas {
                let since = hs.ws - m.end;
                if (is_valu || is_mem) && (overlap(&rd, &m.dst) || (is_valu && overlap(&wr, &m.dst))) {
                    let need = mfma_result_wait_states(arch, &m.shape);
                    if since < need {
                        found.push((m.pc, since, need, "reads or overwrites an MFMA result too early".into()));
                    }
                }
                if is_valu && m.shape.xdl && overlap(&wr, &m.srcc) && !overlap(&wr, &m.dst) {
                    let need = u64::from(m.shape.passes.saturating_sub(1).max(1));
                    if since < need {
                        found.push((m.pc, since, need, "overwrites an MFMA's srcC before the MFMA has read it".into()));
                    }
                }
            }
            if is_mfma {
                let need = VALU_WRITE_MFMA_READ;
                let ab: Regs = {
                    let sh = Shape::of(inst.op);
                    let mut v = Vec::new();
                    for f in [Field::Src0, Field::Src1, Field::Src2] {
                        if let (Some(o), Some(sh)) = (inst.operand(f), sh) {
                            let n = if f == Field::Src2 { sh.cd_regs() } else { sh.ab_regs() };
                            v.extend(vector_only(regs_of(&o, n as u8)));
                        }
                    }
                    v
                };
                for v in &hs.valus {
                    let since = hs.ws - v.end;
                    if since < need && overlap(&ab, &v.dst) {
                        found.push((v.pc, since, need, "MFMA reads a VGPR a VALU wrote too recently".into()));
                    }
                }
            }
        }
    }
    for (pc, since, need, what) in found {
        env.report(
            Checker::Hazard,
            Kind::WaitStates,
            w.id,
            w.pc,
            None,
            Some((w.id, pc)),
            format!("{what}: {since} wait states, needs {need} (GCNHazardRecognizer)"),
        );
    }
    let hs = &mut env.hazard[w.id];
    let cost = if inst.op == Op::S_NOP {
        match inst.operands.first() {
            Some(gemm_isa::Operand::Imm(i)) => (*i as u64 & 0xF) + 1,
            _ => 1,
        }
    } else {
        1
    };
    hs.ws += cost;
    let ws = hs.ws;
    if is_mfma {
        if let Some(shape) = Shape::of(inst.op) {
            let dst =
                inst.operand(Field::Vdst).map(|o| vector_only(regs_of(&o, shape.cd_regs() as u8))).unwrap_or_default();
            let srcc =
                inst.operand(Field::Src2).map(|o| vector_only(regs_of(&o, shape.cd_regs() as u8))).unwrap_or_default();
            hs.mfmas.push_front(MfmaRec { dst, srcc, shape, end: ws, pc: w.pc });
        }
    } else if is_valu {
        let (_, wr) = uses(inst);
        if !wr.is_empty() {
            hs.valus.push_front(ValuRec { dst: wr, end: ws, pc: w.pc });
        }
    }
    hs.mfmas.retain(|m| ws - m.end < HORIZON);
    hs.valus.retain(|v| ws - v.end < HORIZON);
}
