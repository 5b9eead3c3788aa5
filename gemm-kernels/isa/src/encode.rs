//! Encoder: `Inst` → machine words, with LLVM's operand rules (ISA.md §4, §1.5).

use crate::inst::{Enc, Inst};
use crate::operand::{fold_literal, Operand, Reg, RegFile};
use crate::table::{f8f6f4_dwords, flags::*, Access, Class, Field, Format, InstDef, Opnd, LD_SCALE_OPCODE};
use crate::{Arch, EncodeError};

type R<T> = Result<T, EncodeError>;

struct Ctx<'a> {
    def: &'static InstDef,
    inst: &'a Inst,
    slots: Vec<&'static Opnd>,
    ops: Vec<Operand>,
}

impl Ctx<'_> {
    fn name(&self) -> &'static str {
        self.def.name
    }
    fn get(&self, f: Field) -> Option<(usize, Operand, &'static Opnd)> {
        self.slots.iter().enumerate().find(|(_, s)| s.field == f).map(|(i, s)| (i, self.ops[i], *s))
    }
    fn bad(&self, index: usize, why: &'static str) -> EncodeError {
        EncodeError::InvalidOperand {
            op: self.name(),
            index,
            operand: self.ops.get(index).map(|o| o.to_string()).unwrap_or_default(),
            why,
        }
    }
    fn modifier(&self, m: &'static str) -> EncodeError {
        EncodeError::Modifier { op: self.name(), modifier: m }
    }
    fn range(&self, what: &'static str, value: i64) -> EncodeError {
        EncodeError::OutOfRange { op: self.name(), what, value }
    }
}

/// Encode `inst` for `arch`.
pub fn encode(inst: &Inst, arch: Arch) -> R<Vec<u32>> {
    let def = inst.op.def();
    let opcode = def.opcode(arch).ok_or(EncodeError::NotOnArch { op: def.name, arch })? as u32;
    let slots = inst.slots();
    if slots.len() != inst.operands.len() {
        return Err(EncodeError::OperandCount { op: def.name, expected: slots.len(), found: inst.operands.len() });
    }
    // LLVM folds literals equal to an inline constant (ISA.md §4.5).
    let ops: Vec<Operand> = inst
        .operands
        .iter()
        .zip(&slots)
        .map(|(o, s)| match (*o, s.class) {
            (Operand::Lit(l), Class::Ssrc | Class::Vsrc | Class::AVSrc) => fold_literal(l, s.ty),
            (o, _) => o,
        })
        .collect();
    let cx = Ctx { def, inst, slots, ops };
    for i in 0..cx.ops.len() {
        check_operand(&cx, i)?;
    }
    check_mods(&cx, arch)?;
    let lits: Vec<u32> = cx.ops.iter().filter_map(|o| if let Operand::Lit(l) = o { Some(*l) } else { None }).collect();
    if lits.len() > 1 && lits.iter().any(|l| *l != lits[0]) {
        return Err(EncodeError::Literal { op: def.name });
    }
    let lit = lits.first().copied();
    let mut words = match (def.format, inst.enc) {
        (Format::Sop1 | Format::Sop2 | Format::Sopc | Format::Sopk | Format::Sopp, Enc::Native) => {
            enc_scalar(&cx, opcode)?
        }
        (Format::Smem, Enc::Native) => enc_smem(&cx, opcode)?,
        (Format::Vop1 | Format::Vop2 | Format::Vopc, Enc::Native) => enc_e32(&cx, opcode)?,
        (Format::Vop1 | Format::Vop2 | Format::Vopc, Enc::Sdwa) => enc_sdwa(&cx, opcode)?,
        (Format::Vop1 | Format::Vop2, Enc::Dpp) => enc_dpp(&cx, opcode)?,
        (Format::Vop1 | Format::Vop2 | Format::Vopc, Enc::E64) => {
            if def.has(NO_E64) {
                return Err(EncodeError::NoSuchEncoding { op: def.name, enc: "_e64" });
            }
            let op3 = match def.format {
                Format::Vop1 => 0x140 + opcode,
                Format::Vop2 => 0x100 + opcode,
                _ => opcode,
            };
            enc_vop3(&cx, op3)?
        }
        (Format::Vop3, Enc::Native) => enc_vop3(&cx, opcode)?,
        (Format::Vop3p, Enc::Native) => enc_vop3p(&cx, opcode)?,
        (Format::Mai, Enc::Native) => enc_mai(&cx, opcode)?,
        (Format::Ds, Enc::Native) => enc_ds(&cx, opcode)?,
        (Format::Mubuf, Enc::Native) => enc_mubuf(&cx, opcode, arch)?,
        (Format::Flat | Format::Global, Enc::Native) => enc_flat(&cx, opcode)?,
        (Format::Scratch, Enc::Native) => enc_scratch(&cx, opcode)?,
        (_, e) => {
            return Err(EncodeError::NoSuchEncoding {
                op: def.name,
                enc: match e {
                    Enc::E64 => "_e64",
                    Enc::Sdwa => "_sdwa",
                    Enc::Dpp => "_dpp",
                    Enc::Native => "native",
                },
            })
        }
    };
    if let Some(l) = lit {
        words.push(l);
    }
    Ok(words)
}

fn max_index(file: RegFile) -> u16 {
    match file {
        RegFile::Sgpr => 102,
        RegFile::Ttmp => 16,
        RegFile::Vgpr | RegFile::Agpr => 256,
    }
}

/// Register tuple checks: bounds, width and alignment (ISA.md §1.5).
fn check_reg(cx: &Ctx, i: usize, r: Reg, dwords: u8) -> R<()> {
    if dwords != 0 && r.count != dwords {
        return Err(cx.bad(i, "wrong register tuple width"));
    }
    if r.count == 0 || r.index as u32 + r.count as u32 > max_index(r.file) as u32 {
        return Err(cx.bad(i, "register out of range"));
    }
    let align = match r.file {
        RegFile::Vgpr | RegFile::Agpr => {
            if r.count >= 2 {
                2
            } else {
                1
            }
        }
        RegFile::Sgpr | RegFile::Ttmp => match r.count {
            1 => 1,
            2 => 2,
            _ => 4,
        },
    };
    if !r.index.is_multiple_of(align) {
        return Err(EncodeError::Misaligned { op: cx.name(), index: i, operand: cx.ops[i].to_string() });
    }
    Ok(())
}

fn check_sreg(cx: &Ctx, i: usize, o: Operand, s: &Opnd) -> R<()> {
    // SMEM data, base and MUBUF rsrc are SReg_*_XM0_XEXEC in LLVM: no m0/exec.
    if matches!(s.field, Field::Sdata | Field::Sbase | Field::Srsrc)
        && matches!(o, Operand::Special(sp) if !matches!(sp, crate::operand::Special::Vcc | crate::operand::Special::VccLo | crate::operand::Special::VccHi))
    {
        return Err(cx.bad(i, "m0/exec/special registers not allowed here"));
    }
    // VALU scalar destinations (readlane/readfirstlane) are SReg_32_XM0 in LLVM.
    if s.field == Field::Vdst && o == Operand::Special(crate::operand::Special::M0) {
        return Err(cx.bad(i, "m0 not allowed as a VALU scalar destination"));
    }
    match o {
        Operand::Reg(r @ Reg { file: RegFile::Sgpr | RegFile::Ttmp, .. }) => check_reg(cx, i, r, s.dwords),
        Operand::Special(sp) => {
            if sp.count() != s.dwords.max(1) {
                return Err(cx.bad(i, "wrong register width"));
            }
            if !sp.writable() && s.access != Access::Read {
                return Err(cx.bad(i, "read-only register as destination"));
            }
            if !sp.writable() && s.class == Class::Sreg {
                return Err(cx.bad(i, "not a register"));
            }
            Ok(())
        }
        _ => Err(cx.bad(i, "expected a scalar register")),
    }
}

fn check_operand(cx: &Ctx, i: usize) -> R<()> {
    let s = cx.slots[i];
    let o = cx.ops[i];
    let is_v = |file| matches!(o, Operand::Reg(Reg { file: f, .. }) if f == file);
    let konst = matches!(o, Operand::Int(_) | Operand::Float(_) | Operand::Lit(_));
    match s.class {
        Class::Sreg => check_sreg(cx, i, o, s),
        Class::Ssrc => {
            if konst || (s.field == Field::SmemOffset && matches!(o, Operand::Imm(_))) {
                Ok(())
            } else if let Operand::Special(sp) = o {
                if sp.count() != s.dwords.max(1) && sp.writable() {
                    return Err(cx.bad(i, "wrong register width"));
                }
                Ok(())
            } else {
                check_sreg(cx, i, o, s)
            }
        }
        Class::Vgpr | Class::Agpr | Class::AV | Class::AVSrc => {
            let ok_file = match s.class {
                Class::Vgpr => is_v(RegFile::Vgpr),
                Class::Agpr => is_v(RegFile::Agpr),
                _ => is_v(RegFile::Vgpr) || is_v(RegFile::Agpr),
            };
            if ok_file {
                let w = cx.def.slot_dwords(s, &cx.inst.mods);
                return check_reg(cx, i, o.reg().unwrap_or(Reg { file: RegFile::Vgpr, index: 0, count: 1 }), w);
            }
            if s.class == Class::AVSrc && matches!(o, Operand::Int(_) | Operand::Float(_)) {
                return Ok(());
            }
            Err(cx.bad(i, "expected a vector register"))
        }
        Class::Vsrc => match o {
            Operand::Reg(r @ Reg { file: RegFile::Vgpr, .. }) => check_reg(cx, i, r, s.dwords),
            Operand::Reg(Reg { file: RegFile::Agpr, .. }) | Operand::Off | Operand::Imm(_) => {
                Err(cx.bad(i, "expected a VGPR, SGPR or constant"))
            }
            Operand::Int(_) | Operand::Float(_) | Operand::Lit(_) => Ok(()),
            Operand::Special(sp) if !sp.writable() => Ok(()),
            _ => check_sreg(cx, i, o, s),
        },
        Class::VgprOrOff => match o {
            Operand::Off => Ok(()),
            Operand::Reg(r @ Reg { file: RegFile::Vgpr, .. }) => check_reg(cx, i, r, 0),
            _ => Err(cx.bad(i, "expected a VGPR or off")),
        },
        Class::SregOrOff => match o {
            Operand::Off => Ok(()),
            _ => check_sreg(cx, i, o, s),
        },
        Class::Imm => match o {
            Operand::Imm(_) | Operand::Int(_) | Operand::Lit(_) => Ok(()),
            _ => Err(cx.bad(i, "expected an immediate")),
        },
    }
}

fn imm_of(o: Operand) -> i64 {
    match o {
        Operand::Imm(i) => i,
        Operand::Int(i) => i as i64,
        Operand::Lit(l) => l as i64,
        _ => 0,
    }
}

/// Reject modifiers the row does not take.
fn check_mods(cx: &Ctx, arch: Arch) -> R<()> {
    let m = &cx.inst.mods;
    let d = cx.def;
    let vop3ish = matches!(d.format, Format::Vop3 | Format::Vop3p)
        || (matches!(d.format, Format::Vop1 | Format::Vop2 | Format::Vopc) && cx.inst.enc == Enc::E64);
    let vop = matches!(d.format, Format::Vop1 | Format::Vop2 | Format::Vopc | Format::Vop3 | Format::Vop3p);
    let mem =
        matches!(d.format, Format::Ds | Format::Mubuf | Format::Flat | Format::Global | Format::Scratch | Format::Smem);
    let sdwa = cx.inst.enc == Enc::Sdwa;
    let dpp = cx.inst.enc == Enc::Dpp;
    if m.bitop3 != 0 && !d.has(BITOP3) {
        return Err(cx.modifier("bitop3"));
    }
    if m.clamp && !((vop3ish || sdwa) && d.has(CLAMP)) {
        return Err(cx.modifier("clamp"));
    }
    if m.omod != 0 && !((vop3ish && d.format != Format::Vop3p || sdwa) && d.has(OMOD)) || m.omod > 3 {
        return Err(cx.modifier("omod"));
    }
    if m.omod != 0 && sdwa && d.format == Format::Vopc {
        return Err(cx.modifier("omod"));
    }
    let nsrc = d.num_vop_srcs();
    let src_mask = (1u8 << nsrc) - 1;
    // Which sources take neg/abs: float-typed ones (cndmask's are typed f32).
    let mut float_srcs = 0u8;
    for (k, s) in cx.slots.iter().filter(|s| matches!(s.field, Field::Src0 | Field::Src1 | Field::Src2)).enumerate() {
        if s.ty.is_float() {
            float_srcs |= 1 << k;
        }
    }
    if d.format == Format::Mai {
        if m.neg != 0 && !(d.has(MAI_NEG) && m.neg & !0b111 == 0) {
            return Err(cx.modifier("neg"));
        }
        if d.has(F8F6F4) {
            // cbsz/blgp are the A/B formats; there is no abid (llvm-mc-22: "not a valid operand").
            if m.abid != 0 || f8f6f4_dwords(m.cbsz).is_none() || f8f6f4_dwords(m.blgp).is_none() {
                return Err(cx.modifier("abid, or a cbsz/blgp above 7"));
            }
        } else if (m.cbsz | m.abid | m.blgp) != 0 && !d.has(CBSZ_ABID_BLGP) {
            return Err(cx.modifier("cbsz/abid/blgp"));
        }
        if m.cbsz > 7 || m.abid > 15 || m.blgp > 7 {
            return Err(cx.modifier("cbsz/abid/blgp"));
        }
        if d.has(SCALED) {
            // Two entries each, one per scale; llvm-mc-22 accepts a third and drops it from
            // the encoding, which could not decode back to it: refused here.
            if m.op_sel & !0b11 != 0 || m.op_sel_hi & !0b11 != 0 {
                return Err(cx.modifier("op_sel/op_sel_hi beyond the two scale entries"));
            }
        }
    } else {
        if (m.cbsz | m.abid | m.blgp) != 0 {
            return Err(cx.modifier("cbsz/abid/blgp"));
        }
        if d.format == Format::Vop3p {
            if (m.neg | m.neg_hi) & !src_mask != 0 || ((m.neg | m.neg_hi) != 0 && !d.has(NEG)) {
                return Err(cx.modifier("neg_lo/neg_hi"));
            }
            if m.abs != 0 {
                return Err(cx.modifier("abs"));
            }
        } else {
            let allowed_neg = if (vop3ish || sdwa || dpp) && d.has(NEG) { float_srcs } else { 0 };
            let allowed_abs = if (vop3ish || sdwa || dpp) && d.has(ABS) { float_srcs } else { 0 };
            if m.neg & !allowed_neg != 0 {
                return Err(cx.modifier("neg"));
            }
            if m.abs & !allowed_abs != 0 {
                return Err(cx.modifier("abs"));
            }
            if m.neg_hi != 0 {
                return Err(cx.modifier("neg_hi"));
            }
        }
    }
    if d.format == Format::Vop3p {
        if m.op_sel & !src_mask != 0 || (m.op_sel != 0 && !d.has(OPSEL)) {
            return Err(cx.modifier("op_sel"));
        }
        if m.op_sel_hi > 7 {
            return Err(cx.modifier("op_sel_hi"));
        }
        let default = if d.has(MIX) { 0 } else { 7 };
        if (m.op_sel_hi ^ default) & src_mask != 0 && !d.has(OPSEL) {
            return Err(cx.modifier("op_sel_hi"));
        }
    } else if !d.has(SCALED) {
        let opsel_mask = if d.has(OPSEL4) { 0xF } else { src_mask | 8 };
        if m.op_sel != 0 && !(vop3ish && d.has(OPSEL) && m.op_sel & !opsel_mask == 0) {
            return Err(cx.modifier("op_sel"));
        }
        if m.op_sel_hi != 0 {
            return Err(cx.modifier("op_sel_hi"));
        }
    }
    if !vop && d.format != Format::Mai && (m.neg | m.abs | m.neg_hi | m.op_sel) != 0 {
        return Err(cx.modifier("neg/abs/op_sel"));
    }
    if !mem && (m.offset != 0 || m.offset1 != 0) {
        return Err(cx.modifier("offset"));
    }
    if d.format != Format::Mubuf && (m.offen || m.idxen || m.lds) {
        return Err(cx.modifier("offen/idxen/lds"));
    }
    if !matches!(d.format, Format::Mubuf | Format::Flat | Format::Global | Format::Scratch) && (m.sc0 || m.sc1 || m.nt)
    {
        return Err(cx.modifier("sc0/sc1/nt"));
    }
    // SMEM glc: loads only (LLVM rejects it on stores, cache ops and memtime).
    let smem_load = d.format == Format::Smem
        && d.operands.iter().any(|s| s.field == Field::SmemOffset)
        && d.operands.iter().any(|s| s.field == Field::Sdata && s.access == Access::Write);
    if m.glc && !smem_load {
        return Err(cx.modifier("glc"));
    }
    if sdwa {
        let dst_float = cx.slots.iter().any(|s| s.field == Field::Vdst && s.ty.is_float());
        if m.clamp && d.format == Format::Vopc {
            return Err(cx.modifier("clamp"));
        }
        if m.omod != 0 && !dst_float {
            return Err(cx.modifier("omod"));
        }
    }
    if m.op_sel & 8 != 0 {
        let packed_dst = cx.slots.iter().any(|s| {
            s.field == Field::Vdst
                && matches!(s.ty, crate::operand::Ty::V2F16 | crate::operand::Ty::V2B16 | crate::operand::Ty::V2BF16)
        });
        if packed_dst {
            return Err(cx.modifier("op_sel (destination)"));
        }
    }
    if m.gds {
        // ISA.md §3.3 / TSV: "gds modifier is not supported on this GPU" (gfx942, gfx950).
        return Err(cx.modifier("gds"));
    }
    if m.lds && !d.lds_ok(arch) {
        return Err(cx.modifier("lds"));
    }
    if !sdwa && m.sdwa != Default::default() {
        return Err(cx.modifier("sdwa selectors"));
    }
    if !dpp && m.dpp != Default::default() {
        return Err(cx.modifier("dpp controls"));
    }
    Ok(())
}

fn scode(cx: &Ctx, i: usize) -> u32 {
    cx.ops[i].src_code().unwrap_or(0) as u32
}

fn enc_scalar(cx: &Ctx, op: u32) -> R<Vec<u32>> {
    let f = |fl: Field| cx.get(fl).map(|(i, _, _)| scode(cx, i)).unwrap_or(0);
    let simm = |cx: &Ctx| -> R<u32> {
        let (i, o, _) = match cx.get(Field::Simm16).or_else(|| cx.get(Field::Hwreg)) {
            Some(x) => x,
            None => return Ok(0),
        };
        let v = imm_of(o);
        if !(-32768..=65535).contains(&v) {
            return Err(cx.range("simm16", v));
        }
        let _ = i;
        Ok(v as u32 & 0xFFFF)
    };
    Ok(vec![match cx.def.format {
        Format::Sop2 => 0x2 << 30 | op << 23 | f(Field::Sdst) << 16 | f(Field::Ssrc1) << 8 | f(Field::Ssrc0),
        Format::Sop1 => 0x17D << 23 | f(Field::Sdst) << 16 | op << 8 | f(Field::Ssrc0),
        Format::Sopc => 0x17E << 23 | op << 16 | f(Field::Ssrc1) << 8 | f(Field::Ssrc0),
        Format::Sopk => {
            let mut w = 0xB << 28 | op << 23 | f(Field::Sdst) << 16 | simm(cx)?;
            if let Some((_, o, _)) = cx.get(Field::Literal) {
                // s_setreg_imm32_b32: the value is a trailing literal dword.
                let l = imm_of(o);
                if !(i32::MIN as i64..=u32::MAX as i64).contains(&l) {
                    return Err(cx.range("literal", l));
                }
                return Ok(vec![w, l as u32]);
            }
            w &= !0;
            w
        }
        _ => 0x17F << 23 | op << 16 | simm(cx)?,
    }])
}

fn enc_smem(cx: &Ctx, op: u32) -> R<Vec<u32>> {
    let m = &cx.inst.mods;
    let sdata = cx.get(Field::Sdata).map(|(i, _, _)| scode(cx, i)).unwrap_or(0);
    let sbase = cx.get(Field::Sbase).map(|(i, _, _)| scode(cx, i) >> 1).unwrap_or(0);
    let (mut imm, mut soe, mut offset, mut soff) = (0u32, 0u32, 0i64, 0u32);
    if let Some((i, o, _)) = cx.get(Field::SmemOffset) {
        match o {
            Operand::Int(_) | Operand::Lit(_) | Operand::Imm(_) => {
                if m.offset != 0 {
                    return Err(cx.modifier("offset"));
                }
                imm = 1;
                offset = imm_of(o);
                if let Operand::Lit(l) = o {
                    offset = l as i32 as i64;
                }
            }
            Operand::Float(_) => return Err(cx.bad(i, "expected an offset")),
            _ => {
                if m.offset != 0 {
                    imm = 1;
                    soe = 1;
                    soff = scode(cx, i);
                    offset = m.offset as i64;
                } else {
                    offset = scode(cx, i) as i64;
                }
            }
        }
    } else if m.offset != 0 {
        return Err(cx.modifier("offset"));
    }
    if !(-(1 << 20)..(1 << 20)).contains(&offset) {
        return Err(cx.range("offset", offset));
    }
    let w0 = 0x30 << 26 | op << 18 | imm << 17 | (m.glc as u32) << 16 | soe << 14 | sdata << 6 | sbase;
    let w1 = (offset as u32 & 0x1F_FFFF) | soff << 25;
    Ok(vec![w0, w1])
}

/// The constant bus: at most one distinct SGPR or literal among the sources of a VALU
/// instruction on gfx9 (LLVM `validateConstantBusLimitations`; inline constants are free).
fn check_constant_bus(cx: &Ctx, implicit_vcc: bool) -> R<()> {
    // Key: (code, width, literal?) — LLVM treats vcc_lo and vcc as different reads.
    let mut seen: Vec<(u32, u8, bool)> = Vec::new();
    if implicit_vcc {
        seen.push((106, 2, false));
    }
    for (i, s) in cx.slots.iter().enumerate() {
        if s.access == Access::Write {
            continue;
        }
        if !matches!(s.field, Field::Src0 | Field::Src1 | Field::Src2 | Field::CarryIn | Field::KImm) {
            continue;
        }
        if s.field == Field::CarryIn && cx.inst.enc != Enc::E64 {
            continue; // counted through implicit_vcc
        }
        let o = cx.ops[i];
        if cx.def.name == "v_writelane_b32" && s.field == Field::Src1 && o == crate::operand::M0 {
            // LLVM: the lane select of v_writelane may be m0 on top of an SGPR value.
            continue;
        }
        let key = match o {
            Operand::Lit(l) => (l, 1, true),
            _ if s.field == Field::KImm => (imm_of(o) as u32, 1, true),
            Operand::Reg(r) if o.is_scalar_reg() => (o.src_code().unwrap_or(0) as u32, r.count, false),
            Operand::Special(sp) if o.is_scalar_reg() => (sp.code() as u32, sp.count(), false),
            _ => continue,
        };
        if !seen.contains(&key) {
            seen.push(key);
        }
    }
    if seen.len() > 1 {
        return Err(EncodeError::ConstantBus { op: cx.name() });
    }
    Ok(())
}

fn must_be_vcc(cx: &Ctx, f: Field) -> R<()> {
    if let Some((i, o, _)) = cx.get(f) {
        if o != crate::operand::VCC {
            return Err(cx.bad(i, "e32 form needs vcc here"));
        }
    }
    Ok(())
}

fn vgpr_index(cx: &Ctx, i: usize, why: &'static str) -> R<u32> {
    match cx.ops[i] {
        Operand::Reg(Reg { file: RegFile::Vgpr, index, .. }) => Ok(index as u32),
        _ => Err(cx.bad(i, why)),
    }
}

fn dst8(cx: &Ctx) -> u32 {
    cx.get(Field::Vdst)
        .map(|(i, o, _)| match o {
            Operand::Reg(Reg { file: RegFile::Vgpr | RegFile::Agpr, index, .. }) => index as u32,
            _ => scode(cx, i),
        })
        .unwrap_or(0)
}

fn enc_e32(cx: &Ctx, op: u32) -> R<Vec<u32>> {
    must_be_vcc(cx, Field::CarryIn)?;
    if cx.def.format != Format::Vop3 {
        must_be_vcc(cx, Field::Sdst)?;
    }
    let m = &cx.inst.mods;
    if m.neg | m.abs | m.op_sel != 0 || m.clamp || m.omod != 0 {
        return Err(cx.modifier("VOP3 modifiers need _e64"));
    }
    let has_cin = cx.get(Field::CarryIn).is_some();
    check_constant_bus(cx, has_cin)?;
    let src0 = cx.get(Field::Src0).map(|(i, _, _)| scode(cx, i)).unwrap_or(0);
    let vsrc1 = match cx.get(Field::Src1) {
        Some((i, _, _)) => vgpr_index(cx, i, "e32 src1 must be a VGPR")?,
        None => 0,
    };
    let vdst = dst8(cx);
    if let Some((i, Operand::Reg(Reg { file: RegFile::Agpr, .. }), s)) = cx.get(Field::Vdst) {
        if s.class != Class::Agpr {
            return Err(cx.bad(i, "AGPR not allowed"));
        }
    }
    let mut w = match cx.def.format {
        Format::Vop1 => 0x3F << 25 | vdst << 17 | op << 9 | src0,
        Format::Vop2 => op << 25 | vdst << 17 | vsrc1 << 9 | src0,
        _ => 0x3E << 25 | op << 17 | vsrc1 << 9 | src0,
    };
    if cx.def.format == Format::Vop1 && cx.get(Field::Vdst).is_none() {
        w &= !(0xFF << 17);
    }
    let mut words = vec![w];
    if let Some((_, o, _)) = cx.get(Field::KImm) {
        if cx.ops.iter().any(|o| matches!(o, Operand::Lit(_))) {
            return Err(EncodeError::Literal { op: cx.name() });
        }
        let k = imm_of(o);
        words.push(k as u32);
    }
    Ok(words)
}

fn enc_vop3(cx: &Ctx, op: u32) -> R<Vec<u32>> {
    let m = &cx.inst.mods;
    if cx.ops.iter().any(|o| matches!(o, Operand::Lit(_))) || cx.get(Field::KImm).is_some() {
        return Err(EncodeError::Literal { op: cx.name() });
    }
    check_constant_bus(cx, cx.def.has(READS_VCC))?;
    let src = |f: Field| cx.get(f).map(|(i, _, _)| scode(cx, i)).unwrap_or(0);
    let src2 = if cx.get(Field::CarryIn).is_some() { src(Field::CarryIn) } else { src(Field::Src2) };
    let vopc = cx.def.format == Format::Vopc;
    let (vdst, sdst) =
        if vopc { (src(Field::Sdst), None) } else { (dst8(cx), cx.get(Field::Sdst).map(|(i, _, _)| scode(cx, i))) };
    let w0 = match sdst {
        Some(sd) => {
            if m.abs != 0 || m.op_sel != 0 {
                return Err(cx.modifier("abs/op_sel (VOP3b)"));
            }
            0x34 << 26 | op << 16 | (m.clamp as u32) << 15 | sd << 8 | vdst
        }
        None => {
            0x34 << 26
                | op << 16
                | (m.clamp as u32) << 15
                | (m.op_sel as u32 & 0xF) << 11
                | (m.abs as u32 & 7) << 8
                | vdst
        }
    };
    let w1 = src(Field::Src0) | src(Field::Src1) << 9 | src2 << 18 | (m.omod as u32) << 27 | (m.neg as u32 & 7) << 29;
    if cx.def.has(BITOP3) {
        // bitop3[2:0] → neg (w1 31:29), [5:3] → abs (w0 10:8), [7:6] → omod (w1 28:27);
        // the row takes no real neg/abs/omod, so those fields are free.
        let t = m.bitop3 as u32;
        return Ok(vec![w0 | (t >> 3 & 7) << 8, w1 | (t >> 6 & 3) << 27 | (t & 7) << 29]);
    }
    Ok(vec![w0, w1])
}

fn enc_vop3p(cx: &Ctx, op: u32) -> R<Vec<u32>> {
    let m = &cx.inst.mods;
    if cx.ops.iter().any(|o| matches!(o, Operand::Lit(_))) {
        return Err(EncodeError::Literal { op: cx.name() });
    }
    check_constant_bus(cx, false)?;
    let src = |f: Field| cx.get(f).map(|(i, _, _)| scode(cx, i)).unwrap_or(0);
    let h = m.op_sel_hi as u32;
    let w0 = 0x1A7 << 23
        | op << 16
        | (m.clamp as u32) << 15
        | (h >> 2 & 1) << 14
        | (m.op_sel as u32 & 7) << 11
        | (m.neg_hi as u32 & 7) << 8
        | dst8(cx);
    let w1 =
        src(Field::Src0) | src(Field::Src1) << 9 | src(Field::Src2) << 18 | (h & 3) << 27 | (m.neg as u32 & 7) << 29;
    Ok(vec![w0, w1])
}

fn file_of(o: Operand) -> Option<RegFile> {
    o.reg().map(|r| r.file)
}

fn enc_mai(cx: &Ctx, op: u32) -> R<Vec<u32>> {
    let m = &cx.inst.mods;
    let (di, d, _) = cx.get(Field::Vdst).ok_or_else(|| cx.bad(0, "missing vdst"))?;
    let (ci, c, _) = cx.get(Field::Src2).ok_or_else(|| cx.bad(3, "missing src2"))?;
    let acc_cd = file_of(d) == Some(RegFile::Agpr);
    if let Some(f) = file_of(c) {
        // ISA.md §1.5: acc_cd puts both vdst and src2 in AGPRs; mixing is rejected.
        if (f == RegFile::Agpr) != acc_cd {
            return Err(cx.bad(ci, "src2 must be in the same register file as vdst"));
        }
    }
    // LLVM: "source 2 operand must not partially overlap with dst", checked only for
    // destinations wider than 128 bits (AMDGPUAsmParser::validateMFMA; llvm-mc-22 accepts
    // `v_mfma_f32_16x16x32_f16 a[164:167], .., a[166:169]`, which Triton 3.9 emits, and
    // rejects the same overlap on a 16-register destination: golden.tsv). llvm-mc-22 does not
    // check the scaled (VOP3PX) forms: `v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], .., v[2:17],
    // ..` assembles (golden-extra.s).
    if let (Some(dr), Some(cr), false) = (d.reg(), c.reg(), cx.def.has(SCALED)) {
        let (d0, d1) = (dr.index, dr.index + dr.count as u16);
        let (c0, c1) = (cr.index, cr.index + cr.count as u16);
        if dr.count > 4 && dr.file == cr.file && d0 < c1 && c0 < d1 && d0 != c0 {
            return Err(cx.bad(ci, "src2 must not partially overlap vdst"));
        }
    }
    let _ = di;
    let src = |f: Field| cx.get(f).map(|(i, _, _)| scode(cx, i)).unwrap_or(0);
    let acc = |f: Field| cx.get(f).map(|(_, o, _)| (file_of(o) == Some(RegFile::Agpr)) as u32).unwrap_or(0);
    let hi = if cx.def.has(MAI_NEG) { m.neg as u32 } else { m.blgp as u32 };
    let scaled = cx.def.has(SCALED);
    // The scaled form marks its MFMA word with bit 11 (abid's low bit, table.rs `SCALED`).
    let abid = if scaled { 1 } else { m.abid as u32 };
    let w0 = 0x1A7 << 23 | op << 16 | (acc_cd as u32) << 15 | abid << 11 | (m.cbsz as u32) << 8 | dst8(cx);
    let w1 = src(Field::Src0)
        | src(Field::Src1) << 9
        | src(Field::Src2) << 18
        | acc(Field::Src0) << 27
        | acc(Field::Src1) << 28
        | hi << 29;
    if !scaled {
        return Ok(vec![w0, w1]);
    }
    // The v_mfma_ld_scale_b32 prefix: VOP3P, no vdst, the scale VGPRs as src0/src1.
    let p0 = 0x1A7 << 23 | (LD_SCALE_OPCODE as u32) << 16 | ((m.op_sel & 3) as u32) << 11;
    let p1 = src(Field::ScaleSrc0) | src(Field::ScaleSrc1) << 9 | ((m.op_sel_hi & 3) as u32) << 27;
    Ok(vec![p0, p1, w0, w1])
}

/// The acc bit of memory instructions: all AV data operands in one file (ISA.md §3.3).
fn mem_acc(cx: &Ctx) -> R<u32> {
    let mut acc: Option<bool> = None;
    for (i, s) in cx.slots.iter().enumerate() {
        if s.class != Class::AV {
            continue;
        }
        let a = file_of(cx.ops[i]) == Some(RegFile::Agpr);
        if acc.is_some_and(|x| x != a) {
            return Err(cx.bad(i, "data and destination must both be VGPRs or both AGPRs"));
        }
        acc = Some(a);
    }
    Ok(acc.unwrap_or(false) as u32)
}

fn vidx(cx: &Ctx, f: Field) -> u32 {
    cx.get(f).and_then(|(_, o, _)| o.reg()).map(|r| r.index as u32).unwrap_or(0)
}

fn enc_ds(cx: &Ctx, op: u32) -> R<Vec<u32>> {
    let m = &cx.inst.mods;
    let acc = mem_acc(cx)?;
    if cx.def.operands.is_empty() && (m.offset != 0 || m.offset1 != 0) {
        return Err(cx.modifier("offset")); // ds_nop
    }
    let (o0, o1) = if cx.def.has(DS_2OFF) {
        if !(0..=255).contains(&m.offset) {
            return Err(cx.range("offset0", m.offset as i64));
        }
        (m.offset as u32, m.offset1 as u32)
    } else {
        if m.offset1 != 0 {
            return Err(cx.modifier("offset1"));
        }
        if !(0..=65535).contains(&m.offset) {
            return Err(cx.range("offset", m.offset as i64));
        }
        (m.offset as u32 & 0xFF, m.offset as u32 >> 8)
    };
    let w0 = 0x36 << 26 | acc << 25 | op << 17 | o1 << 8 | o0;
    let w1 = vidx(cx, Field::Addr)
        | vidx(cx, Field::Data0) << 8
        | vidx(cx, Field::Data1) << 16
        | vidx(cx, Field::Vdst) << 24;
    Ok(vec![w0, w1])
}

fn enc_mubuf(cx: &Ctx, op: u32, _arch: Arch) -> R<Vec<u32>> {
    let m = &cx.inst.mods;
    let acc = mem_acc(cx)?;
    if !(0..=4095).contains(&m.offset) {
        return Err(cx.range("offset", m.offset as i64));
    }
    let want = m.offen as u8 + m.idxen as u8;
    match cx.get(Field::Vaddr) {
        Some((vi, Operand::Off, _)) if want != 0 => return Err(cx.bad(vi, "offen/idxen need a VGPR address")),
        Some((vi, Operand::Reg(r), _)) if r.count != want => {
            return Err(cx.bad(vi, "vaddr width must match offen/idxen"))
        }
        None if want != 0 || m.offset != 0 || m.nt || m.lds => {
            // buffer_wbl2 / buffer_inv take only sc0/sc1.
            return Err(cx.modifier("offen/idxen/offset/nt/lds"));
        }
        _ => {}
    }
    let srsrc = cx.get(Field::Srsrc).map(|(i, _, _)| scode(cx, i) >> 2).unwrap_or(0);
    let soff = cx.get(Field::Soffset).map(|(i, _, _)| scode(cx, i)).unwrap_or(0);
    if let Some((i, Operand::Lit(_), _)) = cx.get(Field::Soffset) {
        return Err(cx.bad(i, "soffset cannot be a literal"));
    }
    let w0 = 0x38 << 26
        | op << 18
        | (m.nt as u32) << 17
        | (m.lds as u32) << 16
        | (m.sc1 as u32) << 15
        | (m.sc0 as u32) << 14
        | (m.idxen as u32) << 13
        | (m.offen as u32) << 12
        | m.offset as u32;
    let w1 = vidx(cx, Field::Vaddr) | vidx(cx, Field::Vdata) << 8 | srsrc << 16 | acc << 23 | soff << 24;
    Ok(vec![w0, w1])
}

fn enc_flat(cx: &Ctx, op: u32) -> R<Vec<u32>> {
    let m = &cx.inst.mods;
    let acc = mem_acc(cx)?;
    // AGPR returning atomics (LLVM 22 `FLATInstructions.td` AGPR `_RTN` variants, probed
    // with llvm-mc-22 on both archs; buffer atomics have no such gaps).
    if acc == 1 && m.sc0 && cx.def.has(ATOMIC) {
        if cx.def.has(NO_AGPR_RTN) {
            return Err(EncodeError::AgprAtomic {
                op: cx.name(),
                why: "the returning form (sc0) does not take AGPRs (LLVM: operands are not valid for this GPU or mode)",
            });
        }
        if m.sc1 && cx.def.has(NO_AGPR_RTN_SC1) {
            return Err(EncodeError::AgprAtomic {
                op: cx.name(),
                why: "the AGPR returning form (sc0) has no sc1 bit (llvm-mc-22 drops it; its disassembler rejects it)",
            });
        }
    }
    let global = cx.def.format == Format::Global;
    let (lo, hi) = if global { (-4096, 4095) } else { (0, 4095) };
    if !(lo..=hi).contains(&m.offset) {
        return Err(cx.range("offset", m.offset as i64));
    }
    let saddr = cx.get(Field::Saddr);
    let saddr_code = match saddr {
        None => 0,
        Some((_, Operand::Off, _)) => 0x7F,
        Some((i, _, _)) => scode(cx, i),
    };
    let (vi, vaddr, _) = cx.get(Field::Vaddr).ok_or_else(|| cx.bad(0, "missing vaddr"))?;
    let want = if saddr_code == 0x7F || !global { 2 } else { 1 };
    match vaddr {
        Operand::Reg(r) if r.count == want => {}
        _ => return Err(cx.bad(vi, "vaddr must be a VGPR pair without saddr, one VGPR with saddr")),
    }
    let seg = if global { 2 } else { 0 };
    let w0 = 0x37 << 26
        | (m.sc1 as u32) << 25
        | op << 18
        | (m.nt as u32) << 17
        | (m.sc0 as u32) << 16
        | seg << 14
        | (m.offset as u32 & 0x1FFF);
    let w1 = vidx(cx, Field::Vaddr)
        | vidx(cx, Field::Data) << 8
        | saddr_code << 16
        | acc << 23
        | vidx(cx, Field::Vdst) << 24;
    Ok(vec![w0, w1])
}

/// SCRATCH (seg = 1, ISA.md §4.4): vaddr is one VGPR or `off` (SVE, bit 13, says which),
/// saddr one SGPR or `off` (0x7F); offset is 13-bit signed as for GLOBAL. Both `off` is
/// legal (the address is the offset alone), as llvm-mc-22 shows.
fn enc_scratch(cx: &Ctx, op: u32) -> R<Vec<u32>> {
    let m = &cx.inst.mods;
    let acc = mem_acc(cx)?;
    if !(-4096..=4095).contains(&m.offset) {
        return Err(cx.range("offset", m.offset as i64));
    }
    let saddr_code = match cx.get(Field::Saddr) {
        Some((_, Operand::Off, _)) | None => 0x7F,
        Some((i, Operand::Lit(_) | Operand::Int(_) | Operand::Float(_), _)) => {
            return Err(cx.bad(i, "saddr must be an SGPR or off"))
        }
        // exec_hi's code is 0x7F, which means `off` here (LLVM: SReg_32_XEXEC_HI).
        Some((i, _, _)) if scode(cx, i) == 0x7F => return Err(cx.bad(i, "saddr cannot be exec_hi")),
        Some((i, _, _)) => scode(cx, i),
    };
    let (vi, vaddr, _) = cx.get(Field::Vaddr).ok_or_else(|| cx.bad(0, "missing vaddr"))?;
    let sve = match vaddr {
        Operand::Off => 0,
        Operand::Reg(r) if r.count == 1 => 1,
        _ => return Err(cx.bad(vi, "vaddr must be one VGPR or off")),
    };
    let w0 = 0x37 << 26
        | (m.sc1 as u32) << 25
        | op << 18
        | (m.nt as u32) << 17
        | (m.sc0 as u32) << 16
        | 1 << 14
        | sve << 13
        | (m.offset as u32 & 0x1FFF);
    let w1 = vidx(cx, Field::Vaddr)
        | vidx(cx, Field::Data) << 8
        | saddr_code << 16
        | acc << 23
        | vidx(cx, Field::Vdst) << 24;
    Ok(vec![w0, w1])
}

/// SDWA/DPP are only for 32-bit VOP1/VOP2(/VOPC) forms without literals.
fn check_ext(cx: &Ctx, what: &'static str) -> R<()> {
    let flag = if what == "_sdwa" { SDWA } else { DPP };
    if !cx.def.has(flag) {
        return Err(EncodeError::NoSuchEncoding { op: cx.name(), enc: what });
    }
    if cx.ops.iter().any(|o| matches!(o, Operand::Lit(_))) {
        return Err(EncodeError::Literal { op: cx.name() });
    }
    Ok(())
}

fn sdwa_src(cx: &Ctx, f: Field) -> R<(u32, u32)> {
    match cx.get(f) {
        None => Ok((0, 0)),
        Some((_, Operand::Reg(Reg { file: RegFile::Vgpr, index, .. }), _)) => Ok((index as u32, 0)),
        Some((i, o, _)) => match o {
            Operand::Reg(Reg { file: RegFile::Agpr, .. }) => Err(cx.bad(i, "AGPR not allowed")),
            _ => Ok((scode(cx, i), 1)),
        },
    }
}

fn enc_sdwa(cx: &Ctx, op: u32) -> R<Vec<u32>> {
    check_ext(cx, "_sdwa")?;
    must_be_vcc(cx, Field::CarryIn)?;
    let m = &cx.inst.mods;
    let s = &m.sdwa;
    if s.dst_sel > 6 || s.src0_sel > 6 || s.src1_sel > 6 || s.dst_unused > 2 {
        return Err(cx.modifier("sdwa selector"));
    }
    check_constant_bus(cx, cx.get(Field::CarryIn).is_some())?;
    let (s0, s0s) = sdwa_src(cx, Field::Src0)?;
    let (s1, s1s) = sdwa_src(cx, Field::Src1)?;
    let vdst = dst8(cx);
    let w0 = match cx.def.format {
        Format::Vop1 => 0x3F << 25 | vdst << 17 | op << 9 | 249,
        Format::Vop2 => op << 25 | vdst << 17 | s1 << 9 | 249,
        _ => 0x3E << 25 | op << 17 | s1 << 9 | 249,
    };
    let n = m.neg as u32;
    let a = m.abs as u32;
    let mut w1 = s0
        | (s.src0_sel as u32) << 16
        | (s.src0_sext as u32) << 19
        | (n & 1) << 20
        | (a & 1) << 21
        | s0s << 23
        | if cx.def.format == Format::Vop1 { 0 } else { (s.src1_sel as u32) << 24 }
        | (s.src1_sext as u32) << 27
        | (n >> 1 & 1) << 28
        | (a >> 1 & 1) << 29
        | s1s << 31;
    if cx.def.format == Format::Vopc {
        if s.dst_sel != 6 || s.dst_unused != 2 {
            return Err(cx.modifier("dst_sel/dst_unused"));
        }
        let (_, sd, _) = cx.get(Field::Sdst).ok_or_else(|| cx.bad(0, "missing sdst"))?;
        if sd != crate::operand::VCC {
            w1 |= (sd.src_code().unwrap_or(0) as u32) << 8 | 1 << 15;
        }
        w1 |= (m.clamp as u32) << 13;
    } else {
        if cx.def.format == Format::Vop1 && (s.src1_sel != 6 || s.src1_sext) {
            return Err(cx.modifier("src1_sel"));
        }
        if cx.def.has(SDWA_SRC_ONLY) {
            if s.dst_sel != 6 || s.dst_unused != 2 || m.clamp || m.omod != 0 {
                return Err(cx.modifier("dst_sel/dst_unused/clamp/omod"));
            }
            w1 |= 6 << 8;
        } else {
            w1 |=
                (s.dst_sel as u32) << 8 | (s.dst_unused as u32) << 11 | (m.clamp as u32) << 13 | (m.omod as u32) << 14;
        }
    }
    Ok(vec![w0, w1])
}

fn enc_dpp(cx: &Ctx, op: u32) -> R<Vec<u32>> {
    check_ext(cx, "_dpp")?;
    must_be_vcc(cx, Field::CarryIn)?;
    must_be_vcc(cx, Field::Sdst)?;
    let m = &cx.inst.mods;
    let d = &m.dpp;
    if m.clamp || m.omod != 0 {
        return Err(cx.modifier("clamp/omod"));
    }
    if d.row_mask > 15 || d.bank_mask > 15 || !dpp_ctrl_valid(d.ctrl) {
        return Err(cx.modifier("dpp control"));
    }
    let s0 = match cx.get(Field::Src0) {
        Some((i, _, _)) => vgpr_index(cx, i, "DPP src0 must be a VGPR")?,
        None => 0,
    };
    let s1 = match cx.get(Field::Src1) {
        Some((i, _, _)) => vgpr_index(cx, i, "DPP src1 must be a VGPR")?,
        None => 0,
    };
    let vdst = dst8(cx);
    let w0 = match cx.def.format {
        Format::Vop1 => 0x3F << 25 | vdst << 17 | op << 9 | 250,
        _ => op << 25 | vdst << 17 | s1 << 9 | 250,
    };
    let n = m.neg as u32;
    let a = m.abs as u32;
    let w1 = s0
        | (d.ctrl as u32) << 8
        | (d.bound_ctrl as u32) << 19
        | (n & 1) << 20
        | (a & 1) << 21
        | (n >> 1 & 1) << 22
        | (a >> 1 & 1) << 23
        | (d.bank_mask as u32) << 24
        | (d.row_mask as u32) << 28;
    Ok(vec![w0, w1])
}

/// The DPP control values gfx9 defines (LLVM `DppCtrl` in `SIDefines.h`).
pub fn dpp_ctrl_valid(c: u16) -> bool {
    matches!(c, 0..=0xFF | 0x101..=0x10F | 0x111..=0x11F | 0x121..=0x12F | 0x130 | 0x134 | 0x138 | 0x13C | 0x140..=0x143)
}
