//! Printer: `Inst` → LLVM assembly that `llvm-mc-22` accepts and assembles to the same
//! bytes (checked by `tests/live.rs` and `tests/prop.rs`).

use crate::inst::{Enc, Inst};
use crate::operand::Operand;
use crate::table::{flags::*, Field, Format};
use std::fmt::{self, Write};

const SEL: [&str; 7] = ["BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"];
const UNUSED: [&str; 3] = ["UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE"];

/// `s_waitcnt` operand text (ISA.md §3.1 field layout).
pub fn waitcnt_text(v: u16) -> String {
    if v & 0x3000 != 0 {
        return v.to_string();
    }
    let vm = (v & 0xF) | ((v >> 14) & 3) << 4;
    let exp = (v >> 4) & 7;
    let lgkm = (v >> 8) & 0xF;
    let mut parts = Vec::new();
    if vm != 63 {
        parts.push(format!("vmcnt({vm})"));
    }
    if exp != 7 {
        parts.push(format!("expcnt({exp})"));
    }
    if lgkm != 15 {
        parts.push(format!("lgkmcnt({lgkm})"));
    }
    if parts.is_empty() {
        return "vmcnt(63) expcnt(7) lgkmcnt(15)".into();
    }
    parts.join(" ")
}

fn bits_list(bits: u8, n: usize) -> String {
    let v: Vec<String> = (0..n).map(|i| ((bits >> i) & 1).to_string()).collect();
    format!("[{}]", v.join(","))
}

/// Operand text for a slot of type `ty`: 1/(2π) needs full f64 precision in 64-bit
/// slots, or LLVM reads it as a different (non-inline) value.
pub fn operand_text(o: &Operand, ty: crate::operand::Ty) -> String {
    use crate::operand::{InlineFloat, Ty};
    match o {
        Operand::Float(InlineFloat::InvTwoPi) if matches!(ty, Ty::F64 | Ty::B64) => "0.15915494309189532".into(),
        _ => o.to_string(),
    }
}

/// DPP control text (LLVM spelling).
pub fn dpp_ctrl_text(c: u16) -> String {
    match c {
        0..=0xFF => format!("quad_perm:[{},{},{},{}]", c & 3, (c >> 2) & 3, (c >> 4) & 3, (c >> 6) & 3),
        0x101..=0x10F => format!("row_shl:{}", c - 0x100),
        0x111..=0x11F => format!("row_shr:{}", c - 0x110),
        0x121..=0x12F => format!("row_ror:{}", c - 0x120),
        0x130 => "wave_shl:1".into(),
        0x134 => "wave_rol:1".into(),
        0x138 => "wave_shr:1".into(),
        0x13C => "wave_ror:1".into(),
        0x140 => "row_mirror".into(),
        0x141 => "row_half_mirror".into(),
        0x142 => "row_bcast:15".into(),
        _ => "row_bcast:31".into(),
    }
}

impl fmt::Display for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.op.def();
        let m = &self.mods;
        let mut s = String::from(d.name);
        if matches!(d.format, Format::Vop1 | Format::Vop2 | Format::Vopc) {
            s.push_str(match self.enc {
                Enc::Native => "_e32",
                Enc::E64 => "_e64",
                Enc::Sdwa => "_sdwa",
                Enc::Dpp => "_dpp",
            });
        }
        let slots = self.slots();
        let mut ops = Vec::new();
        let mut src_idx = 0usize;
        for (slot, o) in slots.iter().zip(&self.operands) {
            let text = match (slot.field, o) {
                (Field::Simm16, Operand::Imm(v)) if d.has(WAITCNT) => waitcnt_text(*v as u16),
                (Field::Simm16, Operand::Imm(0)) if d.has(OPT_IMM) => continue,
                (Field::Hwreg, Operand::Imm(v)) => {
                    format!("hwreg({}, {}, {})", v & 0x3F, (v >> 6) & 0x1F, ((v >> 11) & 0x1F) + 1)
                }
                (Field::SmemOffset | Field::KImm | Field::Literal, Operand::Imm(v)) if *v >= 0 => format!("0x{v:x}"),
                (Field::Src0 | Field::Src1 | Field::Src2, _) => {
                    let i = src_idx;
                    src_idx += 1;
                    let mut t = operand_text(o, slot.ty);
                    if self.enc == Enc::Sdwa {
                        let sext = if i == 0 { m.sdwa.src0_sext } else { m.sdwa.src1_sext };
                        if sext {
                            t = format!("sext({t})");
                        }
                    }
                    if d.format != Format::Vop3p && d.format != Format::Mai {
                        if m.abs >> i & 1 == 1 {
                            t = format!("|{t}|");
                        }
                        if m.neg >> i & 1 == 1 {
                            // `-5` would parse as the integer -5: constants use neg(..).
                            let konst = matches!(o, Operand::Int(_) | Operand::Float(_) | Operand::Lit(_));
                            t = if konst && m.abs >> i & 1 == 0 { format!("neg({t})") } else { format!("-{t}") };
                        }
                    }
                    t
                }
                _ => operand_text(o, slot.ty),
            };
            ops.push(text);
        }
        if !ops.is_empty() {
            s.push(' ');
            s.push_str(&ops.join(", "));
        }
        let nsrc = d.num_vop_srcs();
        let vop3 = d.format == Format::Vop3 || self.enc == Enc::E64;
        match d.format {
            Format::Smem => {
                if m.offset != 0 {
                    let _ = write!(s, " offset:0x{:x}", m.offset);
                }
                if m.glc {
                    s.push_str(" glc");
                }
            }
            Format::Ds => {
                if d.has(DS_2OFF) {
                    if m.offset != 0 {
                        let _ = write!(s, " offset0:{}", m.offset);
                    }
                    if m.offset1 != 0 {
                        let _ = write!(s, " offset1:{}", m.offset1);
                    }
                } else if m.offset != 0 {
                    let _ = write!(s, " offset:{}", m.offset);
                }
                if m.gds {
                    s.push_str(" gds");
                }
            }
            Format::Mubuf | Format::Flat | Format::Global | Format::Scratch => {
                if m.idxen {
                    s.push_str(" idxen");
                }
                if m.offen {
                    s.push_str(" offen");
                }
                if m.offset != 0 {
                    let _ = write!(s, " offset:{}", m.offset);
                }
                for (b, n) in [(m.sc0, " sc0"), (m.sc1, " sc1"), (m.nt, " nt"), (m.lds, " lds")] {
                    if b {
                        s.push_str(n);
                    }
                }
            }
            Format::Vop3p => {
                if m.op_sel != 0 {
                    let _ = write!(s, " op_sel:{}", bits_list(m.op_sel, nsrc));
                }
                let def_hi = if d.has(MIX) { 0 } else { 7 };
                let mask = (1u8 << nsrc) - 1;
                if (m.op_sel_hi ^ def_hi) & mask != 0 {
                    let _ = write!(s, " op_sel_hi:{}", bits_list(m.op_sel_hi, nsrc));
                }
                if m.neg != 0 {
                    let _ = write!(s, " neg_lo:{}", bits_list(m.neg, nsrc));
                }
                if m.neg_hi != 0 {
                    let _ = write!(s, " neg_hi:{}", bits_list(m.neg_hi, nsrc));
                }
                if m.clamp {
                    s.push_str(" clamp");
                }
            }
            Format::Mai => {
                if d.has(SCALED) {
                    // llvm-objdump-22 prints op_sel when set and op_sel_hi always, three
                    // entries each (the third is always 0).
                    if m.op_sel != 0 {
                        let _ = write!(s, " op_sel:{}", bits_list(m.op_sel, 3));
                    }
                    let _ = write!(s, " op_sel_hi:{}", bits_list(m.op_sel_hi, 3));
                }
                if m.cbsz != 0 {
                    let _ = write!(s, " cbsz:{}", m.cbsz);
                }
                if m.abid != 0 {
                    let _ = write!(s, " abid:{}", m.abid);
                }
                if m.blgp != 0 {
                    let _ = write!(s, " blgp:{}", m.blgp);
                }
                if m.neg != 0 {
                    let _ = write!(s, " neg:{}", bits_list(m.neg, 3));
                }
            }
            _ if vop3 => {
                // LLVM prints bitop3 first, in decimal up to 15 and hex above.
                if m.bitop3 > 15 {
                    let _ = write!(s, " bitop3:0x{:x}", m.bitop3);
                } else if m.bitop3 != 0 {
                    let _ = write!(s, " bitop3:{}", m.bitop3);
                }
                // LLVM wants op_sel before clamp/omod.
                if m.op_sel != 0 {
                    if d.has(OPSEL4) || nsrc == 3 {
                        let _ = write!(s, " op_sel:{}", bits_list(m.op_sel, 4));
                    } else {
                        let bits = (m.op_sel & ((1 << nsrc) - 1)) | ((m.op_sel >> 3) & 1) << nsrc;
                        let _ = write!(s, " op_sel:{}", bits_list(bits, nsrc + 1));
                    }
                }
                if m.clamp {
                    s.push_str(" clamp");
                }
                match m.omod {
                    1 => s.push_str(" mul:2"),
                    2 => s.push_str(" mul:4"),
                    3 => s.push_str(" div:2"),
                    _ => {}
                }
            }
            _ if self.enc == Enc::Sdwa => {
                if m.clamp {
                    s.push_str(" clamp");
                }
                match m.omod {
                    1 => s.push_str(" mul:2"),
                    2 => s.push_str(" mul:4"),
                    3 => s.push_str(" div:2"),
                    _ => {}
                }
                let w = &m.sdwa;
                if d.format != Format::Vopc && !d.has(SDWA_SRC_ONLY) {
                    let _ = write!(
                        s,
                        " dst_sel:{} dst_unused:{}",
                        SEL[w.dst_sel as usize % 7],
                        UNUSED[w.dst_unused as usize % 3]
                    );
                }
                let _ = write!(s, " src0_sel:{}", SEL[w.src0_sel as usize % 7]);
                if nsrc > 1 {
                    let _ = write!(s, " src1_sel:{}", SEL[w.src1_sel as usize % 7]);
                }
            }
            _ if self.enc == Enc::Dpp => {
                let p = &m.dpp;
                let _ =
                    write!(s, " {} row_mask:0x{:x} bank_mask:0x{:x}", dpp_ctrl_text(p.ctrl), p.row_mask, p.bank_mask);
                if p.bound_ctrl {
                    s.push_str(" bound_ctrl:1");
                }
            }
            _ => {}
        }
        f.write_str(&s)
    }
}
