//! Wait-state hazard checker for the dependencies the hardware does not interlock
//! (LLVM 22 `GCNHazardRecognizer.cpp`: `checkMAIHazards90A`, `checkMAIVALUHazards`,
//! `checkVALUHazards`, `checkVMEMHazards`, `checkDPPHazards`, `checkRWLaneHazards`,
//! `checkReadM0Hazards`, `checkDivFMasHazards`; ISA.md §1.5). Wait states are counted as
//! LLVM counts them: one per instruction issued by the wave, `s_nop N` gives N+1; stalls
//! on `s_waitcnt` or `s_barrier` do not count (LLVM's conservative model).
//!
//! Rules (gfx942 numbers; gfx950 adds one to XDL results of more than 2 passes):
//! * MFMA writes a VGPR/AGPR, a VALU, VMEM, DS or `v_accvgpr_read` reads it, or a VALU
//!   writes it: XDL `passes + 3`, SMFMA (f32 inputs) `passes + 2`.
//! * An XDL MFMA reads a register as srcC, a VALU then writes it: 2 passes -> 1,
//!   4 -> 3, 8 -> 7, 16 -> 15.
//! * MFMA -> MFMA: the result read as srcA/B: as for a VALU read; read as srcC with the
//!   same register tuple (back-to-back accumulation): 0; srcC overlapping partly (another
//!   shape or offset): XDL producer `passes + 1` (+1 on gfx950), SMFMA producer feeding
//!   an XDL: 0, SMFMA feeding an SMFMA: `passes`.
//! * A VALU writes a VGPR that an MFMA then reads (srcA/B/C, and the scale VGPRs of
//!   `v_mfma_scale_*`): 2; a VALU writes EXEC, an MFMA follows: 4.
//! * A VALU writes an SGPR (incl. VCC, M0) that a VMEM/FLAT instruction reads (resource,
//!   soffset, saddr, M0 of LDS-DMA): 5.
//! * A VALU writes an SGPR or VCC that a VALU reads: 2. `v_readlane`/`v_readfirstlane`
//!   of a VGPR a VALU just wrote: 1; `v_readlane`/`v_writelane` lane select written by a
//!   VALU: 4; EXEC written by a VALU before `v_readlane/readfirstlane/writelane`: 4.
//! * DPP reads a VGPR a VALU wrote: 2; EXEC written by a VALU before DPP: 5.
//! * A transcendental VALU result read by a non-transcendental VALU: 1.
//! * VCC written by a VALU before `v_div_fmas`: 4.
//! * An SALU writes M0, LDS-DMA reads it: 1 (LLVM also covers `s_movrel*`, which the
//!   instruction table does not decode).
//! * A VMEM store of more than 8 bytes (MUBUF with a constant soffset, or FLAT/GLOBAL),
//!   then a VALU overwrites its data registers: 2.
//!
//! Every number is calibrated against llc-22 (`tests/hazard.rs` runs LLVM's hazard
//! recognizer on MIR at test time): LLVM's code must be silent under this checker, and
//! one wait state fewer than LLVM's must make it fire.

use crate::mfma::Shape;
use crate::report::{Checker, Kind};
use crate::scheduler::Env;
use crate::valu::regs_of;
use crate::wave::Wave;
use gemm_isa::table::{flags, Access, Field};
use gemm_isa::{Arch, Enc, Format, Inst, Op, Operand, RegFile};
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

/// What produced a register write the checker remembers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Producer {
    /// A VALU other than an MFMA (`trans`: a transcendental, LLVM `isTRANS`).
    Valu {
        trans: bool,
        dot: bool,
    },
    Salu,
    /// The data registers of a VMEM store of more than 8 bytes that the next VALUs must
    /// not overwrite (`createsVALUHazard`).
    WideStore,
}

#[derive(Debug, Clone)]
struct WriteRec {
    regs: Regs,
    by: Producer,
    end: u64,
    pc: u64,
}

/// Per-wave history for the checker.
#[derive(Debug, Default, Clone)]
pub struct HazardState {
    ws: u64,
    mfmas: VecDeque<MfmaRec>,
    writes: VecDeque<WriteRec>,
}

/// VALU write -> MFMA read (srcA/B/C) on gfx940/gfx950 (`LegacyVALUWritesVGPRWaitStates`;
/// llc-22 puts `s_nop 1` right after the last `v_mov` feeding an MFMA on both archs).
const VALU_WRITE_MFMA_READ: u64 = 2;
/// VALU writes EXEC, an MFMA follows (`VALUWritesExecWaitStates`).
const VALU_EXEC_MFMA: u64 = 4;
/// VALU writes an SGPR that a VMEM instruction reads (`VmemSgprWaitStates`).
const VALU_SGPR_VMEM: u64 = 5;
/// VALU writes an SGPR or VCC that a VALU reads (`VALUWriteSGPRVALUReadWaitstates`).
const VALU_SGPR_VALU: u64 = 2;
/// VALU writes a VGPR that `v_readlane`/`v_readfirstlane` reads (`VALUWriteVGPRReadlaneRead`).
const VALU_VGPR_READLANE: u64 = 1;
/// VALU writes EXEC before `v_readlane/readfirstlane/writelane` (`VALUWriteEXECRWLane`).
const VALU_EXEC_RWLANE: u64 = 4;
/// VALU writes the lane-select SGPR of `v_readlane`/`v_writelane` (`RWLaneWaitStates`).
const VALU_SGPR_LANESEL: u64 = 4;
/// DPP reads a VGPR written just before (`DppVgprWaitStates`) or after an EXEC write
/// by a VALU (`DppExecWaitStates`).
const DPP_VGPR: u64 = 2;
const DPP_EXEC: u64 = 5;
/// Transcendental result used by a non-transcendental VALU (`TransDefWaitstates`).
const TRANS_USE: u64 = 1;
/// VALU writes VCC before `v_div_fmas` (`DivFMasWaitStates`).
const VCC_DIV_FMAS: u64 = 4;
/// SALU writes M0 before LDS-DMA (`ReadM0WaitStates`).
const SALU_M0: u64 = 1;
/// VALU overwrites the data of a >8-byte VMEM store (`checkVALUHazardsHelper`, gfx940).
const WIDE_STORE_DATA: u64 = 2;

/// SGPR codes of the special registers (ISA.md §4.5).
const VCC: [(RegFile, u16); 2] = [(RegFile::Sgpr, 106), (RegFile::Sgpr, 107)];
const M0: (RegFile, u16) = (RegFile::Sgpr, 124);
const EXEC: [(RegFile, u16); 2] = [(RegFile::Sgpr, 126), (RegFile::Sgpr, 127)];

/// Largest wait-state requirement, beyond which history is dropped.
const HORIZON: u64 = 24;

fn overlap(a: &[(RegFile, u16)], b: &[(RegFile, u16)]) -> bool {
    a.iter().any(|x| b.contains(x))
}

fn vector_only(r: Regs) -> Regs {
    r.into_iter().filter(|(f, _)| matches!(f, RegFile::Vgpr | RegFile::Agpr)).collect()
}

fn scalar_only(r: &Regs) -> Regs {
    r.iter().copied().filter(|(f, _)| *f == RegFile::Sgpr).collect()
}

/// LLVM `isTRANS` on gfx940/gfx950.
fn is_trans(name: &str) -> bool {
    let base = name.trim_end_matches("_e32").trim_end_matches("_e64");
    matches!(
        base,
        "v_exp_f32"
            | "v_log_f32"
            | "v_rcp_f32"
            | "v_rcp_iflag_f32"
            | "v_rsq_f32"
            | "v_sqrt_f32"
            | "v_sin_f32"
            | "v_cos_f32"
            | "v_exp_f16"
            | "v_log_f16"
            | "v_rcp_f16"
            | "v_rsq_f16"
            | "v_sqrt_f16"
            | "v_sin_f16"
            | "v_cos_f16"
            | "v_rcp_f64"
            | "v_rsq_f64"
            | "v_sqrt_f64"
            | "v_exp_legacy_f32"
            | "v_log_legacy_f32"
    )
}

fn is_lds_dma(inst: &Inst) -> bool {
    let def = inst.op.def();
    (def.format == Format::Mubuf && inst.mods.lds) || def.name.starts_with("global_load_lds")
}

/// (registers read, registers written) of an instruction, every file, with the implicit
/// VCC/EXEC/M0 operands the hazard rules look at.
pub(crate) fn uses(inst: &Inst) -> (Regs, Regs) {
    let mut rd = Vec::new();
    let mut wr = Vec::new();
    let shape = Shape::of_inst(inst);
    for (s, o) in inst.slots().iter().zip(&inst.operands) {
        let n = match (shape, s.field) {
            (Some(sh), Field::Src0) => sh.src_regs(false) as u8,
            (Some(sh), Field::Src1) => sh.src_regs(true) as u8,
            (Some(sh), Field::Src2 | Field::Vdst) => sh.cd_regs() as u8,
            _ => s.dwords.max(1),
        };
        let regs = regs_of(o, n);
        match s.access {
            Access::Read => rd.extend(regs),
            Access::Write => wr.extend(regs),
            Access::ReadWrite => {
                rd.extend(regs.clone());
                wr.extend(regs);
            }
        }
    }
    let def = inst.op.def();
    if def.has(flags::READS_VCC) {
        rd.extend(VCC);
    }
    if def.format == Format::Vopc && def.name.starts_with("v_cmpx") {
        wr.extend(EXEC);
    }
    if is_lds_dma(inst) {
        rd.push(M0);
    }
    (rd, wr)
}

/// Wait states an MFMA result needs before a VALU/memory read or a VALU write, and
/// before an MFMA reads it as srcA/B.
pub fn mfma_result_wait_states(arch: Arch, sh: &Shape) -> u64 {
    let base = if sh.xdl { sh.passes + 3 } else { sh.passes + 2 };
    u64::from(base + gfx950_extra(arch, sh))
}

fn gfx950_extra(arch: Arch, sh: &Shape) -> u32 {
    u32::from(arch == Arch::Gfx950 && sh.xdl && sh.passes > 2)
}

/// Wait states between MFMA `p` writing registers that MFMA `c` then reads as srcC
/// overlapping, but not equal to, `p`'s destination (`checkMAIHazards90A`).
fn mfma_partial_srcc_wait_states(arch: Arch, p: &Shape, c: &Shape) -> u64 {
    match (p.xdl, c.xdl) {
        (true, _) => u64::from(p.passes + 1 + gfx950_extra(arch, p)),
        (false, true) => 0,
        (false, false) => u64::from(p.passes),
    }
}

/// Checks `inst` of wave `w` against the history, then records it.
pub fn check(env: &mut Env, w: &Wave, inst: &Inst) {
    let def = inst.op.def();
    let fmt = def.format;
    let name = def.name;
    // DGEMM (f64 MFMA) hazards are not modelled (README): such an MFMA is neither checked
    // nor recorded as a producer.
    let shape = if fmt == Format::Mai { Shape::of_inst(inst).filter(|s| !s.is_dgemm()) } else { None };
    let is_mfma = shape.is_some();
    let is_valu = !is_mfma && matches!(fmt, Format::Vop1 | Format::Vop2 | Format::Vopc | Format::Vop3 | Format::Vop3p);
    let is_salu = matches!(fmt, Format::Sop1 | Format::Sop2 | Format::Sopk | Format::Sopc);
    let is_vmem = matches!(fmt, Format::Mubuf | Format::Global | Format::Flat | Format::Scratch);
    let is_mem = is_vmem || fmt == Format::Ds;
    let arch = env.arch;
    let mut found: Vec<(u64, u64, u64, String)> = Vec::new();
    let mut from_writes: Vec<(u64, u64, u64, String)> = Vec::new();
    let (rd_all, wr_all) = uses(inst);
    {
        let hs = &env.hazard[w.id];
        let since = |end: u64| hs.ws - end;
        // Most recent write of any of `regs` by a producer that `by` accepts, within `need`.
        let mut producer = |regs: &[(RegFile, u16)], by: &dyn Fn(Producer) -> bool, need: u64, what: &str| {
            if regs.is_empty() {
                return;
            }
            if let Some(r) = hs.writes.iter().find(|r| by(r.by) && overlap(regs, &r.regs)) {
                let n = since(r.end);
                if n < need {
                    from_writes.push((r.pc, n, need, what.to_string()));
                }
            }
        };
        let valu = |p: Producer| matches!(p, Producer::Valu { .. });
        if is_valu || is_mem || is_mfma {
            let rd = vector_only(rd_all.clone());
            let wr = vector_only(wr_all.clone());
            for m in &hs.mfmas {
                let n = since(m.end);
                if (is_valu || is_mem) && (overlap(&rd, &m.dst) || (is_valu && overlap(&wr, &m.dst))) {
                    let need = mfma_result_wait_states(arch, &m.shape);
                    if n < need {
                        found.push((m.pc, n, need, "reads or overwrites an MFMA result too early".into()));
                    }
                }
                if is_valu && m.shape.xdl && overlap(&wr, &m.srcc) && !overlap(&wr, &m.dst) {
                    let need = u64::from(m.shape.passes.saturating_sub(1).max(1));
                    if n < need {
                        found.push((m.pc, n, need, "overwrites an MFMA's srcC before the MFMA has read it".into()));
                    }
                }
            }
        }
        if let Some(sh) = shape {
            let legacy = |p: Producer| matches!(p, Producer::Valu { dot: false, .. });
            // The scale VGPRs of `v_mfma_scale_*` too: llc-22 puts `s_nop 1` between a
            // `v_mov_b32` of a scale and the MFMA (tests/hazard_rules.rs).
            for f in [Field::Src0, Field::Src1, Field::Src2, Field::ScaleSrc0, Field::ScaleSrc1] {
                let Some(o) = inst.operand(f) else { continue };
                let n = match f {
                    Field::Src2 => sh.cd_regs(),
                    Field::Src0 => sh.src_regs(false),
                    Field::Src1 => sh.src_regs(true),
                    _ => 1,
                };
                let regs = vector_only(regs_of(&o, n as u8));
                if regs.is_empty() {
                    continue;
                }
                producer(&regs, &legacy, VALU_WRITE_MFMA_READ, "MFMA reads a VGPR a VALU wrote too recently");
                // The most recent MFMA whose result overlaps this operand.
                if let Some(m) = hs.mfmas.iter().find(|m| overlap(&regs, &m.dst)) {
                    let (need, what) = if f != Field::Src2 {
                        (mfma_result_wait_states(arch, &m.shape), "MFMA reads an MFMA result as srcA/B too early")
                    } else if m.dst == regs {
                        // Back-to-back accumulation into the same tuple is interlocked
                        // (except 2-pass SMFMAs, GFX940_SMFMA4x4WritesVGPRFullSrcCWaitStates).
                        (
                            u64::from(!m.shape.xdl && m.shape.passes == 2) * 2,
                            "MFMA reads an MFMA result as srcC too early",
                        )
                    } else {
                        (
                            mfma_partial_srcc_wait_states(arch, &m.shape, &sh),
                            "MFMA reads a partly overlapping MFMA result as srcC too early",
                        )
                    };
                    let n = since(m.end);
                    if n < need {
                        found.push((m.pc, n, need, what.into()));
                    }
                }
            }
            producer(&EXEC, &valu, VALU_EXEC_MFMA, "MFMA after a VALU wrote EXEC");
        }
        if is_vmem {
            producer(
                &scalar_only(&rd_all),
                &valu,
                VALU_SGPR_VMEM,
                "vector memory reads an SGPR a VALU wrote too recently",
            );
        }
        if is_lds_dma(inst) {
            producer(&[M0], &|p| p == Producer::Salu, SALU_M0, "LDS-DMA reads M0 right after an SALU wrote it");
        }
        if is_valu || is_mfma {
            // Any VALU (MFMAs included) overwriting the data of a wide store.
            producer(
                &vector_only(wr_all.clone()),
                &|p| p == Producer::WideStore,
                WIDE_STORE_DATA,
                "overwrites the data of a >8-byte store too early",
            );
        }
        if is_valu {
            let sreads: Regs = scalar_only(&rd_all).into_iter().filter(|r| !EXEC.contains(r)).collect();
            producer(&sreads, &valu, VALU_SGPR_VALU, "VALU reads an SGPR a VALU wrote too recently");
            let rwlane = matches!(inst.op, Op::V_READLANE_B32 | Op::V_READFIRSTLANE_B32 | Op::V_WRITELANE_B32);
            if matches!(inst.op, Op::V_READLANE_B32 | Op::V_READFIRSTLANE_B32) {
                if let Some(o) = inst.operand(Field::Src0) {
                    producer(
                        &vector_only(regs_of(&o, 1)),
                        &valu,
                        VALU_VGPR_READLANE,
                        "v_readlane reads a VGPR a VALU wrote too recently",
                    );
                }
            }
            if rwlane {
                producer(&EXEC, &valu, VALU_EXEC_RWLANE, "lane access after a VALU wrote EXEC");
            }
            if matches!(inst.op, Op::V_READLANE_B32 | Op::V_WRITELANE_B32) {
                if let Some(o) = inst.operand(Field::Src1) {
                    producer(
                        &scalar_only(&regs_of(&o, 1)),
                        &valu,
                        VALU_SGPR_LANESEL,
                        "lane select SGPR written by a VALU too recently",
                    );
                }
            }
            if !is_trans(name) {
                producer(
                    &vector_only(rd_all.clone()),
                    &|p| matches!(p, Producer::Valu { trans: true, .. }),
                    TRANS_USE,
                    "uses a transcendental result too early",
                );
            }
            if inst.enc == Enc::Dpp {
                producer(&vector_only(rd_all.clone()), &valu, DPP_VGPR, "DPP reads a VGPR a VALU wrote too recently");
                producer(&EXEC, &valu, DPP_EXEC, "DPP after a VALU wrote EXEC");
            }
            if def.has(flags::READS_VCC) && name.starts_with("v_div_fmas") {
                producer(&VCC, &valu, VCC_DIV_FMAS, "v_div_fmas after a VALU wrote VCC");
            }
        }
    }
    found.extend(from_writes);
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
            Some(Operand::Imm(i)) => (*i as u64 & 0xF) + 1,
            _ => 1,
        }
    } else {
        1
    };
    hs.ws += cost;
    let ws = hs.ws;
    if let Some(shape) = shape {
        let dst =
            inst.operand(Field::Vdst).map(|o| vector_only(regs_of(&o, shape.cd_regs() as u8))).unwrap_or_default();
        let srcc =
            inst.operand(Field::Src2).map(|o| vector_only(regs_of(&o, shape.cd_regs() as u8))).unwrap_or_default();
        hs.mfmas.push_front(MfmaRec { dst, srcc, shape, end: ws, pc: w.pc });
    } else if is_valu || is_salu {
        if !wr_all.is_empty() {
            let by = if is_valu {
                Producer::Valu { trans: is_trans(name), dot: name.starts_with("v_dot") }
            } else {
                Producer::Salu
            };
            hs.writes.push_front(WriteRec { regs: wr_all, by, end: ws, pc: w.pc });
        }
    } else if is_vmem && (name.contains("_store_") || def.has(flags::ATOMIC)) {
        let data = inst.operand(Field::Vdata).or_else(|| inst.operand(Field::Data));
        let regs = data.map(|o| vector_only(regs_of(&o, 1))).unwrap_or_default();
        let const_soffset = !matches!(inst.operand(Field::Soffset), Some(Operand::Reg(_) | Operand::Special(_)));
        if regs.len() > 2 && (fmt != Format::Mubuf || const_soffset) {
            hs.writes.push_front(WriteRec { regs, by: Producer::WideStore, end: ws, pc: w.pc });
        }
    }
    hs.mfmas.retain(|m| ws - m.end < HORIZON);
    hs.writes.retain(|v| ws - v.end < HORIZON);
}
