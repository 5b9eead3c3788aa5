//! Seeded generator of valid instructions for every table row: canonical samples (for
//! the golden list) and random ones (property tests, emulator fuzzing). Deterministic
//! for a given seed; no external randomness.

use crate::inst::{Dpp, Enc, Inst, Sdwa};
use crate::operand::{fold_literal, InlineFloat, Operand, Reg, RegFile, Special, Ty};
use crate::table::{flags::*, Access, Class, Field, Format, Op, Presence};
use crate::Arch;

/// SplitMix64: a small seeded PRNG.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

const FLOATS: [InlineFloat; 9] = [
    InlineFloat::Half,
    InlineFloat::NegHalf,
    InlineFloat::One,
    InlineFloat::NegOne,
    InlineFloat::Two,
    InlineFloat::NegTwo,
    InlineFloat::Four,
    InlineFloat::NegFour,
    InlineFloat::InvTwoPi,
];

struct G<'a> {
    rng: Option<&'a mut Rng>,
}

impl G<'_> {
    fn below(&mut self, n: u64) -> u64 {
        match &mut self.rng {
            Some(r) => r.below(n),
            None => 0,
        }
    }
    fn chance(&mut self, num: u64, den: u64) -> bool {
        match &mut self.rng {
            Some(r) => r.chance(num, den),
            None => false,
        }
    }
    fn reg(&mut self, file: RegFile, n: u8, limit: u16) -> Operand {
        let n = n.max(1);
        let align: u16 = match (file, n) {
            (_, 1) => 1,
            (RegFile::Sgpr, 2) | (RegFile::Vgpr | RegFile::Agpr, _) => 2,
            _ => 4,
        };
        let slots = (limit - n as u16) / align + 1;
        let idx = self.below(slots as u64) as u16 * align;
        Operand::Reg(Reg { file, index: idx, count: n })
    }
    fn sreg(&mut self, n: u8, write: bool) -> Operand {
        if self.chance(1, 6) {
            let pick: &[Special] = match (n, write) {
                (1, true) => &[Special::VccLo, Special::VccHi, Special::M0, Special::ExecLo, Special::ExecHi],
                (1, false) => &[Special::VccLo, Special::M0, Special::ExecHi],
                (2, _) => &[Special::Vcc, Special::Exec],
                _ => &[],
            };
            if !pick.is_empty() {
                return Operand::Special(pick[self.below(pick.len() as u64) as usize]);
            }
        }
        self.reg(RegFile::Sgpr, n, 102)
    }
    fn konst(&mut self, ty: Ty, lit_ok: bool) -> Operand {
        match self.below(if lit_ok { 3 } else { 2 }) {
            0 => Operand::Int(self.below(81) as i8 - 16),
            1 => Operand::Float(FLOATS[self.below(9) as usize]),
            _ => {
                let raw = self.rng.as_mut().map(|r| r.next_u64() as u32).unwrap_or(0x1234_5678);
                let v = match ty {
                    Ty::B16 | Ty::F16 | Ty::BF16 => raw & 0xFFFF,
                    Ty::B64 => raw & 0x7FFF_FFFF,
                    _ => raw,
                };
                fold_literal(v.max(0x41), ty)
            }
        }
    }
}

/// A canonical instance of `op` on `arch`: low registers, no modifiers.
pub fn canonical(op: Op, arch: Arch, enc: Enc) -> Option<Inst> {
    let mut g = G { rng: None };
    let inst = generate(op, arch, enc, &mut g);
    inst.encode(arch).ok().map(|_| inst)
}

/// A random valid instance of `op` on `arch` in encoding `enc` (None when the row lacks
/// that encoding or no valid instance was found in a bounded number of tries).
pub fn random(op: Op, arch: Arch, enc: Enc, rng: &mut Rng) -> Option<Inst> {
    op.def().opcode(arch)?;
    for _ in 0..64 {
        let mut g = G { rng: Some(&mut *rng) };
        let inst = generate(op, arch, enc, &mut g);
        if inst.encode(arch).is_ok() {
            return Some(inst);
        }
    }
    None
}

fn generate(op: Op, arch: Arch, enc: Enc, g: &mut G) -> Inst {
    let d = op.def();
    let mut inst = Inst::new(op, &[]);
    inst.enc = enc;
    let m = &mut inst.mods;
    let vop3 = d.format == Format::Vop3 || enc == Enc::E64;
    let nsrc = d.num_vop_srcs() as u32;
    // Modifiers.
    match d.format {
        Format::Smem => {
            m.glc = d.operands.iter().any(|s| s.field == Field::SmemOffset)
                && d.operands.iter().any(|s| s.field == Field::Sdata && s.access == Access::Write)
                && g.chance(1, 4)
        }
        Format::Ds => {
            if d.has(DS_2OFF) {
                m.offset = g.below(256) as i32;
                m.offset1 = g.below(256) as u8;
            } else if g.chance(1, 2) {
                m.offset = g.below(65536) as i32;
            }
        }
        Format::Mubuf => {
            m.offen = g.chance(1, 2);
            m.idxen = g.chance(1, 3);
            m.offset = if g.chance(1, 2) { g.below(4096) as i32 } else { 0 };
            m.sc0 = g.chance(1, 3);
            m.sc1 = g.chance(1, 3);
            m.nt = g.chance(1, 3);
            m.lds = d.lds_ok(arch) && g.chance(1, 3);
        }
        Format::Flat | Format::Global | Format::Scratch => {
            m.offset = if g.chance(1, 2) {
                if matches!(d.format, Format::Global | Format::Scratch) {
                    g.below(8192) as i32 - 4096
                } else {
                    g.below(4096) as i32
                }
            } else {
                0
            };
            m.sc0 = g.chance(1, 3);
            m.sc1 = g.chance(1, 3);
            m.nt = g.chance(1, 3);
        }
        Format::Mai => {
            if d.has(CBSZ_ABID_BLGP) && g.chance(1, 3) {
                m.cbsz = g.below(5) as u8;
                m.abid = g.below(16) as u8;
                m.blgp = g.below(8) as u8;
            }
            if d.has(MAI_NEG) && g.chance(1, 3) {
                m.neg = g.below(8) as u8;
            }
            if d.has(F8F6F4) && g.chance(1, 2) {
                m.cbsz = g.below(5) as u8;
                m.blgp = g.below(5) as u8;
            }
            if d.has(SCALED) && g.chance(1, 2) {
                m.op_sel = g.below(4) as u8;
                m.op_sel_hi = g.below(4) as u8;
            }
        }
        Format::Vop3p => {
            m.clamp = d.has(CLAMP) && g.chance(1, 4);
            if d.has(OPSEL) && g.chance(1, 2) {
                m.op_sel = g.below(1 << nsrc) as u8;
                m.op_sel_hi = (m.op_sel_hi & !((1 << nsrc) - 1)) | g.below(1 << nsrc) as u8;
            }
            if d.has(NEG) && g.chance(1, 3) {
                m.neg = g.below(1 << nsrc) as u8;
                m.neg_hi = g.below(1 << nsrc) as u8;
            }
        }
        _ => {}
    }
    let float_mask: u8 = d
        .operands
        .iter()
        .filter(|s| matches!(s.field, Field::Src0 | Field::Src1 | Field::Src2))
        .enumerate()
        .filter(|(_, s)| s.ty.is_float())
        .fold(0, |acc, (i, _)| acc | 1 << i);
    if d.has(BITOP3) {
        // Peek at the stream instead of drawing from it, so that the samples of the other
        // rows (and the golden list) stay what they were before the field existed.
        m.bitop3 = g.rng.as_ref().map_or(0, |r| (Rng::clone(r).next_u64() >> 40) as u8);
    }
    if vop3 && d.format != Format::Vop3p {
        m.clamp = d.has(CLAMP) && g.chance(1, 4);
        m.omod = if d.has(OMOD) && g.chance(1, 4) { 1 + g.below(3) as u8 } else { 0 };
        if d.has(NEG) && g.chance(1, 3) {
            m.neg = g.below(8) as u8 & float_mask;
        }
        if d.has(ABS) && g.chance(1, 3) {
            m.abs = g.below(8) as u8 & float_mask;
        }
        if d.has(OPSEL) && g.chance(1, 3) {
            let packed =
                d.operands.iter().any(|s| s.field == Field::Vdst && matches!(s.ty, Ty::V2F16 | Ty::V2B16 | Ty::V2BF16));
            m.op_sel =
                g.below(16) as u8 & if d.has(OPSEL4) { 0xF } else { ((1 << nsrc) - 1) | if packed { 0 } else { 8 } };
        }
    }
    if enc == Enc::Sdwa {
        let mut s = Sdwa::default();
        if d.format != Format::Vopc && !d.has(SDWA_SRC_ONLY) {
            s.dst_sel = g.below(7) as u8;
            s.dst_unused = g.below(3) as u8;
        }
        s.src0_sel = g.below(7) as u8;
        if nsrc > 1 {
            s.src1_sel = g.below(7) as u8;
        }
        m.sdwa = s;
        if d.has(NEG) && g.chance(1, 3) {
            m.neg = g.below(4) as u8 & float_mask;
        }
        if d.has(ABS) && g.chance(1, 3) {
            m.abs = g.below(4) as u8 & float_mask;
        }
        let dst_float = d.operands.iter().any(|s| s.field == Field::Vdst && s.ty.is_float());
        m.clamp = d.format != Format::Vopc && d.has(CLAMP) && !d.has(SDWA_SRC_ONLY) && g.chance(1, 4);
        m.omod = if d.format != Format::Vopc && !d.has(SDWA_SRC_ONLY) && dst_float && d.has(OMOD) && g.chance(1, 4) {
            1 + g.below(3) as u8
        } else {
            0
        };
    }
    if enc == Enc::Dpp {
        let ctrls =
            [0xE4u16, 0x1B, 0x101, 0x10F, 0x111, 0x118, 0x121, 0x130, 0x134, 0x138, 0x13C, 0x140, 0x141, 0x142, 0x143];
        m.dpp = Dpp {
            ctrl: ctrls[g.below(ctrls.len() as u64) as usize],
            row_mask: if g.chance(1, 2) { 0xF } else { g.below(16) as u8 },
            bank_mask: if g.chance(1, 2) { 0xF } else { g.below(16) as u8 },
            bound_ctrl: g.chance(1, 2),
        };
        if d.has(NEG) && g.chance(1, 3) {
            m.neg = g.below(4) as u8 & float_mask;
        }
        if d.has(ABS) && g.chance(1, 3) {
            m.abs = g.below(4) as u8 & float_mask;
        }
    }
    // Memory data in AGPRs, atomics included, within LLVM's AGPR atomic rules: no AGPR
    // returning form for `NO_AGPR_RTN` rows, no sc1 on the AGPR returning form of
    // `NO_AGPR_RTN_SC1` rows.
    let agpr_mem = g.chance(1, 4) && !(inst.mods.sc0 && d.has(NO_AGPR_RTN));
    if agpr_mem && inst.mods.sc0 && d.has(NO_AGPR_RTN_SC1) {
        inst.mods.sc1 = false;
    }
    let mods = inst.mods;
    // Operands.
    let mai_cd_acc = !g.chance(1, 4);
    let saddr_off = g.chance(1, 2);
    let native_vop = enc != Enc::E64 && matches!(d.format, Format::Vop1 | Format::Vop2 | Format::Vopc);
    let mut ops = Vec::new();
    let mut used_scalar = false;
    for s in d.operands {
        match s.presence {
            Presence::UnlessLds if mods.lds => continue,
            Presence::IfReturn if !mods.sc0 => continue,
            _ => {}
        }
        let n = d.slot_dwords(s, &mods);
        let write = s.access != Access::Read;
        let o = match (s.class, s.field) {
            (_, Field::Sdst | Field::CarryIn)
                if d.format != Format::Sop1
                    && d.format != Format::Sop2
                    && d.format != Format::Sopk
                    && matches!(d.format, Format::Vop1 | Format::Vop2 | Format::Vopc | Format::Vop3) =>
            {
                if native_vop || g.chance(1, 3) {
                    crate::operand::VCC
                } else {
                    g.reg(RegFile::Sgpr, 2, 102)
                }
            }
            (Class::Sreg, Field::Srsrc) => g.reg(RegFile::Sgpr, 4, 102),
            (Class::Sreg, Field::Sdata | Field::Sbase) => g.reg(RegFile::Sgpr, n, 102),
            (Class::Sreg, _) => g.sreg(n, write),
            (Class::Ssrc, Field::SmemOffset) => {
                if g.chance(1, 3) {
                    g.reg(RegFile::Sgpr, 1, 102)
                } else {
                    Operand::Imm(g.below(1 << 20) as i64)
                }
            }
            (Class::Ssrc, Field::Soffset) => {
                if g.chance(1, 2) {
                    Operand::Int(0)
                } else {
                    g.reg(RegFile::Sgpr, 1, 102)
                }
            }
            (Class::Ssrc, _) => {
                if g.chance(1, 2) {
                    g.sreg(n, false)
                } else {
                    let lit_ok = matches!(d.format, Format::Sop1 | Format::Sop2 | Format::Sopc);
                    g.konst(s.ty, lit_ok)
                }
            }
            (Class::Vgpr, Field::Vaddr) => {
                let want = if d.format == Format::Global && !saddr_off { 1 } else { 2 };
                g.reg(RegFile::Vgpr, want, 256)
            }
            (Class::Vgpr, _) => g.reg(RegFile::Vgpr, n, 256),
            (Class::Agpr, _) => g.reg(RegFile::Agpr, n, 256),
            (Class::AV, _) | (Class::AVSrc, _) => {
                let file = match (d.format, s.field) {
                    (Format::Mai, Field::Vdst | Field::Src2) => {
                        if mai_cd_acc {
                            RegFile::Agpr
                        } else {
                            RegFile::Vgpr
                        }
                    }
                    (Format::Mai, _) => {
                        if g.chance(1, 4) {
                            RegFile::Agpr
                        } else {
                            RegFile::Vgpr
                        }
                    }
                    _ => {
                        if agpr_mem {
                            RegFile::Agpr
                        } else {
                            RegFile::Vgpr
                        }
                    }
                };
                if s.class == Class::AVSrc && g.chance(1, 5) {
                    g.konst(s.ty, false)
                } else {
                    g.reg(file, n, 256)
                }
            }
            (Class::Vsrc, f) => {
                let e32_src1 = native_vop && f == Field::Src1 && enc != Enc::Sdwa;
                let vreg_only = e32_src1 || enc == Enc::Dpp;
                let r = g.below(10);
                if vreg_only || r < 5 {
                    g.reg(RegFile::Vgpr, n, 256)
                } else if r < 7 && !used_scalar {
                    used_scalar = true;
                    g.sreg(n, false)
                } else if enc == Enc::Sdwa {
                    g.reg(RegFile::Vgpr, n, 256)
                } else {
                    let lit_ok = native_vop && f == Field::Src0 && !used_scalar;
                    let k = g.konst(s.ty, lit_ok);
                    if matches!(k, Operand::Lit(_)) {
                        used_scalar = true;
                    }
                    k
                }
            }
            (Class::VgprOrOff, _) if d.format == Format::Scratch => {
                if g.chance(1, 2) {
                    Operand::Off
                } else {
                    g.reg(RegFile::Vgpr, 1, 256)
                }
            }
            (Class::SregOrOff, _) if d.format == Format::Scratch => {
                if saddr_off {
                    Operand::Off
                } else {
                    g.reg(RegFile::Sgpr, 1, 102)
                }
            }
            (Class::VgprOrOff, _) => {
                let k = mods.offen as u8 + mods.idxen as u8;
                if k == 0 {
                    Operand::Off
                } else {
                    g.reg(RegFile::Vgpr, k, 256)
                }
            }
            (Class::SregOrOff, _) => {
                if saddr_off {
                    Operand::Off
                } else {
                    g.reg(RegFile::Sgpr, 2, 102)
                }
            }
            (Class::Imm, Field::Hwreg) => {
                let id = 1 + g.below(7) as i64;
                let off = g.below(32) as i64;
                let size = 1 + g.below(32 - off as u64) as i64;
                Operand::Imm(id | off << 6 | (size - 1) << 11)
            }
            (Class::Imm, Field::Literal) => Operand::Imm(g.below(1 << 32) as i64),
            (Class::Imm, Field::KImm) => {
                Operand::Imm(if s.ty.is_16bit() { g.below(1 << 16) } else { g.below(1 << 32) } as i64)
            }
            (Class::Imm, _) => {
                let v = if d.has(WAITCNT) {
                    let vm = g.below(64) as i64;
                    let exp = g.below(8) as i64;
                    let lgkm = g.below(16) as i64;
                    (vm & 0xF) | (vm >> 4) << 14 | exp << 4 | lgkm << 8
                } else if d.has(BRANCH) || d.name == "s_call_b64" {
                    g.below(65536) as i64 - 32768
                } else if d.format == Format::Sopp {
                    g.below(4) as i64
                } else {
                    g.below(65536) as i64
                };
                Operand::Imm(v)
            }
        };
        if o.is_scalar_reg() && s.access == Access::Read {
            used_scalar = true;
        }
        ops.push(o);
    }
    inst.operands = ops;
    if d.format == Format::Smem {
        if let Some(Operand::Reg(_)) = inst.operand(Field::SmemOffset) {
            if g.chance(1, 2) {
                inst.mods.offset = g.below(1 << 20) as i32;
            }
        }
    }
    inst
}
