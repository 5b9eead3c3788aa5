//! Decoder: machine code → `Inst`, driven by the same table as the encoder.
//!
//! Every decoded instruction is re-encoded and compared with the input words, so the
//! decoder accepts exactly the encodings the encoder produces (reserved bits set,
//! non-canonical fields or forms LLVM rejects are `DecodeError::Invalid`).

use crate::inst::{Dpp, Enc, Inst, Mods, Sdwa};
use crate::lookup::{by_code, Space};
use crate::operand::{Operand, Reg, RegFile};
use crate::table::{flags::*, Class, Field, Format, Presence, LD_SCALE_OPCODE};
use crate::{Arch, DecodeError};

type R<T> = Result<T, DecodeError>;

/// Decode every instruction of `code`; each comes with its byte offset.
pub fn decode_all(code: &[u8], arch: Arch) -> R<Vec<(usize, Inst)>> {
    let mut out = Vec::new();
    let mut off = 0;
    while off < code.len() {
        let (inst, len) = decode_one(code, off, arch)?;
        out.push((off, inst));
        off += len;
    }
    Ok(out)
}

/// The dword at byte `inst + rel`; a missing one is reported at the instruction start.
fn word_at(code: &[u8], inst: usize, rel: usize, needed: usize) -> R<u32> {
    code.get(inst + rel..inst + rel + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or(DecodeError::Truncated { offset: inst, needed })
}

/// Decode the instruction at byte `offset`; returns it and its length in bytes.
pub fn decode_one(code: &[u8], offset: usize, arch: Arch) -> R<(Inst, usize)> {
    decode_at(code, offset, arch, true)
}

/// [`decode_one`]; `verify` re-encodes the result and requires the same words (off only for
/// the MFMA part of a scaled MFMA, which is verified as a whole: its unscaled row's operand
/// rules are not the scaled row's).
fn decode_at(code: &[u8], offset: usize, arch: Arch, verify: bool) -> R<(Inst, usize)> {
    if !offset.is_multiple_of(4) {
        return Err(DecodeError::Invalid { offset, word: 0, why: "instructions are dword aligned" });
    }
    let w0 = word_at(code, offset, 0, 4)?;
    let unknown = DecodeError::Unknown { offset, word: w0 };
    let b = |hi: u32, lo: u32| (w0 >> lo) & ((1u32 << (hi - lo + 1)) - 1);
    let (space, opc, two) = if w0 >> 31 == 0 {
        match w0 >> 25 {
            0x3F => (Space::Vop1, b(16, 9), false),
            0x3E => (Space::Vopc, b(24, 17), false),
            _ => (Space::Vop2, b(30, 25), false),
        }
    } else if w0 >> 30 == 0b10 {
        match w0 >> 23 {
            0x17D => (Space::Sop1, b(15, 8), false),
            0x17E => (Space::Sopc, b(22, 16), false),
            0x17F => (Space::Sopp, b(22, 16), false),
            _ if w0 >> 28 == 0xB => (Space::Sopk, b(27, 23), false),
            _ => (Space::Sop2, b(29, 23), false),
        }
    } else {
        match w0 >> 26 {
            0x30 => (Space::Smem, b(25, 18), true),
            0x34 if w0 >> 23 == 0x1A7 => (Space::Vop3p, b(22, 16), true),
            0x34 => (Space::Vop3, b(25, 16), true),
            0x36 => (Space::Ds, b(24, 17), true),
            0x37 => match b(15, 14) {
                0 => (Space::Flat, b(24, 18), true),
                1 => (Space::Scratch, b(24, 18), true),
                2 => (Space::Global, b(24, 18), true),
                _ => return Err(unknown),
            },
            0x38 => (Space::Mubuf, b(24, 18), true),
            _ => return Err(unknown),
        }
    };
    if space == Space::Vop3p && opc as u16 == LD_SCALE_OPCODE && arch == Arch::Gfx950 {
        return decode_scaled(code, offset, arch).map_err(|e| match e {
            DecodeError::Unknown { .. } => unknown,
            e => e,
        });
    }
    let (op, mut enc) = by_code(arch, space, opc as u16).ok_or(unknown)?;
    let def = op.def();
    let w1 = if two { word_at(code, offset, 4, 8)? } else { 0 };
    let mut len = if two { 8 } else { 4 };
    if matches!(space, Space::Vop1 | Space::Vop2 | Space::Vopc) {
        match b(8, 0) {
            249 => enc = Enc::Sdwa,
            250 => enc = Enc::Dpp,
            _ => {}
        }
    }
    let w1 = if matches!(enc, Enc::Sdwa | Enc::Dpp) {
        len = 8;
        word_at(code, offset, 4, 8)?
    } else {
        w1
    };
    let c = |hi: u32, lo: u32| (w1 >> lo) & ((1u32 << (hi - lo + 1)) - 1);

    // Modifiers first: they decide which operand slots are present.
    let mut m = Mods::default();
    let fmt = def.format;
    match (fmt, enc) {
        (Format::Smem, _) => {
            m.glc = b(16, 16) == 1;
            if b(14, 14) == 1 {
                m.offset = ((c(20, 0) << 11) as i32) >> 11;
            }
        }
        (_, Enc::E64) | (Format::Vop3, _) => {
            m.clamp = b(15, 15) == 1;
            let vop3b = def.operands.iter().any(|o| o.field == Field::Sdst) && fmt != Format::Vopc;
            if !vop3b {
                m.op_sel = b(14, 11) as u8;
                m.abs = b(10, 8) as u8;
            }
            m.omod = c(28, 27) as u8;
            m.neg = c(31, 29) as u8;
            if def.has(BITOP3) {
                // The truth table lives in the neg (2:0), abs (5:3) and omod (7:6) fields.
                m.bitop3 = m.neg | m.abs << 3 | m.omod << 6;
                (m.neg, m.abs, m.omod) = (0, 0, 0);
            }
        }
        (Format::Vop3p, _) => {
            m.clamp = b(15, 15) == 1;
            m.op_sel_hi = (b(14, 14) << 2 | c(28, 27)) as u8;
            m.op_sel = b(13, 11) as u8;
            m.neg_hi = b(10, 8) as u8;
            m.neg = c(31, 29) as u8;
        }
        (Format::Mai, _) => {
            m.cbsz = b(10, 8) as u8;
            m.abid = b(14, 11) as u8;
            if def.has(MAI_NEG) {
                m.neg = c(31, 29) as u8;
            } else {
                m.blgp = c(31, 29) as u8;
            }
        }
        (Format::Ds, _) => {
            if def.has(DS_2OFF) {
                m.offset = b(7, 0) as i32;
                m.offset1 = b(15, 8) as u8;
            } else {
                m.offset = b(15, 0) as i32;
            }
            m.gds = b(16, 16) == 1;
        }
        (Format::Mubuf, _) => {
            m.offset = b(11, 0) as i32;
            m.offen = b(12, 12) == 1;
            m.idxen = b(13, 13) == 1;
            m.sc0 = b(14, 14) == 1;
            m.sc1 = b(15, 15) == 1;
            m.lds = b(16, 16) == 1;
            m.nt = b(17, 17) == 1;
        }
        (Format::Flat | Format::Global | Format::Scratch, _) => {
            m.offset = if matches!(fmt, Format::Global | Format::Scratch) {
                ((b(12, 0) << 19) as i32) >> 19
            } else {
                b(11, 0) as i32
            };
            m.sc0 = b(16, 16) == 1;
            m.nt = b(17, 17) == 1;
            m.sc1 = b(25, 25) == 1;
        }
        (_, Enc::Sdwa) => {
            let s = Sdwa {
                dst_sel: if fmt == Format::Vopc || def.has(SDWA_SRC_ONLY) { 6 } else { c(10, 8) as u8 },
                dst_unused: if fmt == Format::Vopc || def.has(SDWA_SRC_ONLY) { 2 } else { c(12, 11) as u8 },
                src0_sel: c(18, 16) as u8,
                src1_sel: if fmt == Format::Vop1 { 6 } else { c(26, 24) as u8 },
                src0_sext: c(19, 19) == 1,
                src1_sext: c(27, 27) == 1,
            };
            m.sdwa = s;
            m.clamp = c(13, 13) == 1;
            if fmt != Format::Vopc {
                m.omod = c(15, 14) as u8;
            }
            m.neg = (c(20, 20) | c(28, 28) << 1) as u8;
            m.abs = (c(21, 21) | c(29, 29) << 1) as u8;
        }
        (_, Enc::Dpp) => {
            m.dpp = Dpp {
                ctrl: c(16, 8) as u16,
                row_mask: c(31, 28) as u8,
                bank_mask: c(27, 24) as u8,
                bound_ctrl: c(19, 19) == 1,
            };
            m.neg = (c(20, 20) | c(22, 22) << 1) as u8;
            m.abs = (c(21, 21) | c(23, 23) << 1) as u8;
        }
        _ => {}
    }
    if fmt == Format::Vop3p && def.has(MIX) {
        // nothing: op_sel_hi read from the bits as is
    }

    let mut lit: Option<u32> = None;
    let mut take_lit = |len: &mut usize| -> R<u32> {
        if let Some(l) = lit {
            return Ok(l);
        }
        let l = word_at(code, offset, *len, *len + 4)?;
        *len += 4;
        lit = Some(l);
        Ok(l)
    };
    let acc_mem = match fmt {
        Format::Ds => b(25, 25) == 1,
        Format::Mubuf | Format::Flat | Format::Global | Format::Scratch => c(23, 23) == 1,
        _ => false,
    };
    let mut operands = Vec::new();
    let slots: Vec<_> = def
        .operands
        .iter()
        .filter(|o| match o.presence {
            Presence::Always => true,
            Presence::UnlessLds => !m.lds,
            Presence::IfReturn => m.sc0,
        })
        .collect();
    let e64 = enc == Enc::E64 || fmt == Format::Vop3;
    let vop3like = e64 || matches!(fmt, Format::Vop3p | Format::Mai);
    for s in &slots {
        let n = def.slot_dwords(s, &m).max(1);
        let src9 = |code9: u32, acc: bool, len: &mut usize, take: &mut dyn FnMut(&mut usize) -> R<u32>| -> R<Operand> {
            if code9 == 255 {
                return Ok(Operand::Lit(take(len)?));
            }
            Operand::from_src_code(code9 as u16, n, acc).ok_or(DecodeError::Invalid {
                offset,
                word: w0,
                why: "reserved operand code",
            })
        };
        let vreg = |idx: u32, acc: bool| {
            Operand::Reg(Reg { file: if acc { RegFile::Agpr } else { RegFile::Vgpr }, index: idx as u16, count: n })
        };
        let o = match (fmt, s.field) {
            (Format::Sop1 | Format::Sop2 | Format::Sopk, Field::Sdst) => {
                src9(b(22, 16), false, &mut len, &mut take_lit)?
            }
            (Format::Sop1 | Format::Sop2 | Format::Sopc, Field::Ssrc0) => {
                src9(b(7, 0), false, &mut len, &mut take_lit)?
            }
            (Format::Sop2 | Format::Sopc, Field::Ssrc1) => src9(b(15, 8), false, &mut len, &mut take_lit)?,
            (_, Field::Simm16) => {
                let v = b(15, 0);
                Operand::Imm(if def.has(BRANCH) || def.name == "s_call_b64" {
                    v as u16 as i16 as i64
                } else {
                    v as i64
                })
            }
            (_, Field::Hwreg) => Operand::Imm(b(15, 0) as i64),
            (_, Field::Literal) => Operand::Imm(take_lit(&mut len)? as i64),
            (Format::Smem, Field::Sdata) => src9(b(12, 6), false, &mut len, &mut take_lit)?,
            (Format::Smem, Field::Sbase) => src9(b(5, 0) << 1, false, &mut len, &mut take_lit)?,
            (Format::Smem, Field::SmemOffset) => {
                if b(14, 14) == 1 {
                    Operand::from_src_code(c(31, 25) as u16, 1, false).ok_or(DecodeError::Invalid {
                        offset,
                        word: w0,
                        why: "reserved soffset",
                    })?
                } else if b(17, 17) == 1 {
                    Operand::Imm((((c(20, 0) << 11) as i32) >> 11) as i64)
                } else {
                    Operand::from_src_code(c(20, 0) as u16, 1, false).ok_or(DecodeError::Invalid {
                        offset,
                        word: w0,
                        why: "reserved soffset",
                    })?
                }
            }
            (Format::Vop1 | Format::Vop2 | Format::Vopc, f) if !e64 => match (f, enc) {
                (Field::Vdst, _) => {
                    let d = b(24, 17);
                    match s.class {
                        Class::Sreg => src9(d, false, &mut len, &mut take_lit)?,
                        Class::Agpr => vreg(d, true),
                        _ => vreg(d, false),
                    }
                }
                (Field::Sdst | Field::CarryIn, Enc::Sdwa) if fmt == Format::Vopc && c(15, 15) == 1 => {
                    src9(c(14, 8), false, &mut len, &mut take_lit)?
                }
                (Field::Sdst | Field::CarryIn, _) => crate::operand::VCC,
                (Field::Src0, Enc::Sdwa) => {
                    if c(23, 23) == 1 {
                        src9(c(7, 0), false, &mut len, &mut take_lit)?
                    } else {
                        vreg(c(7, 0), false)
                    }
                }
                (Field::Src0, Enc::Dpp) => vreg(c(7, 0), false),
                (Field::Src0, _) => src9(b(8, 0), s.class == Class::Agpr, &mut len, &mut take_lit)?,
                (Field::Src1, Enc::Sdwa) if c(31, 31) == 1 => src9(b(16, 9), false, &mut len, &mut take_lit)?,
                (Field::Src1, _) => vreg(b(16, 9), false),
                (Field::KImm, _) => Operand::Imm(take_lit(&mut len)? as i64),
                _ => return Err(DecodeError::Invalid { offset, word: w0, why: "unexpected operand" }),
            },
            (_, f) if vop3like => {
                let acc = match (fmt, f) {
                    (Format::Mai, Field::Vdst | Field::Src2) => b(15, 15) == 1,
                    (Format::Mai, Field::Src0) => c(27, 27) == 1,
                    (Format::Mai, Field::Src1) => c(28, 28) == 1,
                    _ => s.class == Class::Agpr,
                };
                match f {
                    Field::Vdst => match s.class {
                        Class::Sreg => src9(b(7, 0), false, &mut len, &mut take_lit)?,
                        _ => vreg(b(7, 0), acc),
                    },
                    Field::Sdst if fmt == Format::Vopc => src9(b(7, 0), false, &mut len, &mut take_lit)?,
                    Field::Sdst => src9(b(14, 8), false, &mut len, &mut take_lit)?,
                    Field::Src0 => src9(c(8, 0), acc, &mut len, &mut take_lit)?,
                    Field::Src1 => src9(c(17, 9), acc, &mut len, &mut take_lit)?,
                    Field::Src2 | Field::CarryIn => src9(c(26, 18), acc, &mut len, &mut take_lit)?,
                    _ => return Err(DecodeError::Invalid { offset, word: w0, why: "unexpected operand" }),
                }
            }
            (Format::Ds, f) => match f {
                Field::Addr => return_v(c(7, 0), false, 1),
                Field::Data0 => return_v(c(15, 8), acc_mem, n),
                Field::Data1 => return_v(c(23, 16), acc_mem, n),
                _ => return_v(c(31, 24), acc_mem, n),
            },
            (Format::Mubuf, f) => match f {
                Field::Vdata => vreg(c(15, 8), acc_mem),
                Field::Vaddr => {
                    let k = m.offen as u8 + m.idxen as u8;
                    if k == 0 {
                        Operand::Off
                    } else {
                        return_v(c(7, 0), false, k)
                    }
                }
                Field::Srsrc => src9(c(20, 16) << 2, false, &mut len, &mut take_lit)?,
                _ => src9(c(31, 24), false, &mut len, &mut take_lit)?,
            },
            (Format::Flat | Format::Global, f) => {
                let saddr = c(22, 16);
                match f {
                    Field::Vdst => vreg(c(31, 24), acc_mem),
                    Field::Data => vreg(c(15, 8), acc_mem),
                    Field::Vaddr => return_v(c(7, 0), false, if saddr == 0x7F || fmt == Format::Flat { 2 } else { 1 }),
                    _ => {
                        if saddr == 0x7F {
                            Operand::Off
                        } else {
                            src9(saddr, false, &mut len, &mut take_lit)?
                        }
                    }
                }
            }
            (Format::Scratch, f) => {
                let saddr = c(22, 16);
                match f {
                    Field::Vdst => vreg(c(31, 24), acc_mem),
                    Field::Data => vreg(c(15, 8), acc_mem),
                    // SVE (bit 13) says whether vaddr is present (ISA.md §4.4).
                    Field::Vaddr if b(13, 13) == 1 => return_v(c(7, 0), false, 1),
                    Field::Vaddr => Operand::Off,
                    _ if saddr == 0x7F => Operand::Off,
                    _ => src9(saddr, false, &mut len, &mut take_lit)?,
                }
            }
            _ => return Err(DecodeError::Invalid { offset, word: w0, why: "unexpected operand" }),
        };
        operands.push(o);
    }
    let inst = Inst { op, enc, operands, mods: m };
    if !verify {
        return Ok((inst, len));
    }
    // Round-trip check: only canonical encodings are accepted.
    let again = crate::encode::encode(&inst, arch).map_err(|_| DecodeError::Invalid {
        offset,
        word: w0,
        why: "operands or modifiers not valid for this instruction",
    })?;
    let orig: Vec<u32> = (0..len / 4).map(|k| word_at(code, offset, 4 * k, len).unwrap_or(0)).collect();
    if again != orig {
        return Err(DecodeError::Invalid { offset, word: w0, why: "reserved bits set or non-canonical encoding" });
    }
    Ok((inst, len))
}

/// A `v_mfma_scale_*` (table.rs `SCALED`): the `v_mfma_ld_scale_b32` prefix at `offset`, then
/// an `*_f8f6f4` MFMA word pair with bit 11 set. The MFMA part decodes as its unscaled row (bit
/// 11 cleared); the prefix adds the two scale VGPRs and their op_sel/op_sel_hi bits; the whole
/// is re-encoded and must give the same four words (a prefix with any other bit set, or not
/// followed by such an MFMA, is not an instruction this table has).
fn decode_scaled(code: &[u8], offset: usize, arch: Arch) -> R<(Inst, usize)> {
    let p0 = word_at(code, offset, 0, 16)?;
    let p1 = word_at(code, offset, 4, 16)?;
    let m0 = word_at(code, offset, 8, 16)?;
    let m1 = word_at(code, offset, 12, 16)?;
    let unknown = DecodeError::Unknown { offset, word: p0 };
    if m0 >> 23 != 0x1A7 || m0 >> 11 & 1 == 0 {
        return Err(unknown);
    }
    let mut inner = Vec::with_capacity(8);
    inner.extend_from_slice(&(m0 & !(1 << 11)).to_le_bytes());
    inner.extend_from_slice(&m1.to_le_bytes());
    let (mfma, _) = decode_at(&inner, 0, arch, false).map_err(|_| unknown.clone())?;
    let op = match mfma.op.scale_pair() {
        Some(op) if op.def().has(SCALED) => op,
        _ => return Err(unknown),
    };
    let scale = |code9: u32| -> R<Operand> {
        match Operand::from_src_code(code9 as u16, 1, false) {
            Some(o @ Operand::Reg(Reg { file: RegFile::Vgpr, .. })) => Ok(o),
            _ => Err(DecodeError::Invalid { offset, word: p0, why: "a scale operand must be a VGPR" }),
        }
    };
    let mut operands = mfma.operands;
    operands.push(scale(p1 & 0x1FF)?);
    operands.push(scale(p1 >> 9 & 0x1FF)?);
    let mut mods = mfma.mods;
    mods.op_sel = (p0 >> 11 & 3) as u8;
    mods.op_sel_hi = (p1 >> 27 & 3) as u8;
    let inst = Inst { op, enc: Enc::Native, operands, mods };
    let again = crate::encode::encode(&inst, arch).map_err(|_| DecodeError::Invalid {
        offset,
        word: p0,
        why: "operands or modifiers not valid for this instruction",
    })?;
    if again != [p0, p1, m0, m1] {
        return Err(DecodeError::Invalid { offset, word: p0, why: "reserved bits set or non-canonical encoding" });
    }
    Ok((inst, 16))
}

fn return_v(idx: u32, acc: bool, n: u8) -> Operand {
    Operand::Reg(Reg { file: if acc { RegFile::Agpr } else { RegFile::Vgpr }, index: idx as u16, count: n.max(1) })
}
