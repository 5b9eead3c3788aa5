//! Vector ALU: VOP1, VOP2, VOPC, VOP3 and VOP3P (packed math, dot products, accvgpr
//! moves), with VOP3 abs/neg/clamp/omod/op_sel, SDWA selects and DPP lane moves.
//! Conversions to and from bf16, f16 and both fp8 flavours (gfx942 FNUZ, gfx950 OCP,
//! ISA.md §1.5) use `half` and `gemm_core::fp8`.

use crate::error::FaultKind;
use crate::scheduler::{Env, R};
use crate::wave::{Lanes, Wave, LANES};
use gemm_core::fp8::Fp8Format;
use gemm_isa::table::{flags, Field};
use gemm_isa::{Arch, Enc, Format, Inst, Op, Operand, RegFile, Ty};
use half::{bf16, f16};

fn f(x: u64) -> f32 {
    f32::from_bits(x as u32)
}
fn fb(x: f32) -> u64 {
    x.to_bits() as u64
}
fn d(x: u64) -> f64 {
    f64::from_bits(x)
}
fn db(x: f64) -> u64 {
    x.to_bits()
}
fn h(x: u64) -> f32 {
    f16::from_bits(x as u16).to_f32()
}
fn hb(x: f32) -> u64 {
    f16::from_f32(x).to_bits() as u64
}
fn bfv(x: u64) -> f32 {
    bf16::from_bits(x as u16).to_f32()
}
/// f32 -> bf16, round to nearest even (NaN stays NaN).
pub fn bf16_rne(x: f32) -> u16 {
    bf16::from_f32(x).to_bits()
}

/// The fp8 formats of `arch`: (fp8, bf8). ISA.md §1.5.
pub fn fp8_formats(arch: Arch) -> (Fp8Format, Fp8Format) {
    match arch {
        Arch::Gfx942 => (Fp8Format::E4M3FNUZ, Fp8Format::E5M2FNUZ),
        Arch::Gfx950 => (Fp8Format::E4M3FN, Fp8Format::E5M2),
    }
}

/// Registers (file, index) an operand names.
pub fn regs_of(o: &Operand, dwords: u8) -> Vec<(RegFile, u16)> {
    match o {
        Operand::Reg(r) => (0..r.count.max(dwords) as u16).map(|i| (r.file, r.index + i)).collect(),
        Operand::Special(s) if s.code() < 128 => {
            (0..s.count().max(dwords) as u16).map(|i| (RegFile::Sgpr, s.code() + i)).collect()
        }
        _ => Vec::new(),
    }
}

fn sign_bit(ty: Ty) -> u64 {
    match ty {
        Ty::F64 => 1 << 63,
        Ty::F16 | Ty::BF16 => 1 << 15,
        _ => 1 << 31,
    }
}

/// SDWA operand select: 0..3 byte, 4/5 word, 6 dword.
fn sdwa_sel(v: u64, sel: u8, sext: bool) -> u64 {
    let (shift, bits) = match sel {
        0..=3 => (8 * sel as u32, 8),
        4 | 5 => (16 * (sel as u32 - 4), 16),
        _ => return v & 0xFFFF_FFFF,
    };
    let x = (v as u32 >> shift) & ((1u32 << bits) - 1);
    if sext {
        (((x << (32 - bits)) as i32) >> (32 - bits)) as u32 as u64
    } else {
        x as u64
    }
}

/// DPP source lane for `lane`, or `None` when the source is invalid/out of range.
fn dpp_src(ctrl: u16, lane: usize) -> Option<usize> {
    let row = lane & !15;
    let r = lane & 15;
    Some(match ctrl {
        0x00..=0xFF => (lane & !3) + ((ctrl as usize >> (2 * (lane & 3))) & 3),
        0x101..=0x10F => {
            let s = r + (ctrl as usize - 0x100);
            if s > 15 {
                return None;
            }
            row + s
        }
        0x111..=0x11F => {
            let n = ctrl as usize - 0x110;
            if r < n {
                return None;
            }
            row + r - n
        }
        0x121..=0x12F => row + (r + 16 - (ctrl as usize - 0x120)) % 16,
        0x130 => {
            if lane == 63 {
                return None;
            }
            lane + 1
        }
        0x134 => (lane + 1) % 64,
        0x138 => lane.checked_sub(1)?,
        0x13C => (lane + 63) % 64,
        0x140 => row + 15 - r,
        0x141 => (lane & !7) + 7 - (lane & 7),
        // row_bcast:15 writes lane 15 of each row to every lane of the next row (LLVM's
        // wave reductions on gfx9 combine lane 15 into lanes 16..31 with row_mask 0xa).
        0x142 if row > 0 => row - 1,
        0x143 if lane >= 32 => 31,
        _ => return None,
    })
}

struct Src {
    op: Operand,
    ty: Ty,
    vals: Lanes,
}

/// Executes a VALU instruction.
pub fn exec(w: &mut Wave, env: &mut Env, inst: &Inst) -> R<()> {
    use Op::*;
    let def = inst.op.def();
    let slots = inst.slots();
    let mut srcs: Vec<Src> = Vec::new();
    let mut vdst: Option<(Operand, Ty, u8)> = None;
    let mut sdst: Option<Operand> = None;
    let mut cin: Option<Operand> = None;
    let mut kimm: u64 = 0;
    let mut reads = Vec::new();
    for (s, o) in slots.iter().zip(&inst.operands) {
        match s.field {
            Field::Src0 | Field::Src1 | Field::Src2 => {
                reads.extend(regs_of(o, s.ty.dwords()));
                srcs.push(Src { op: *o, ty: s.ty, vals: [0; LANES] });
            }
            Field::Vdst => {
                vdst = Some((*o, s.ty, s.dwords.max(1)));
                if s.access != gemm_isa::table::Access::Write {
                    reads.extend(regs_of(o, s.dwords));
                }
            }
            Field::Sdst => sdst = Some(*o),
            Field::CarryIn => {
                reads.extend(regs_of(o, 2));
                cin = Some(*o);
            }
            Field::KImm => kimm = o.const_bits(s.ty).unwrap_or(0),
            _ => {}
        }
    }
    env.check_regs(w, &reads, false);
    if let Some((o, _, n)) = &vdst {
        let wr = regs_of(o, *n);
        env.check_regs(w, &wr, true);
    }
    let exec = w.exec();

    // Instructions that are not lane-wise.
    match inst.op {
        V_NOP => return Ok(()),
        V_READFIRSTLANE_B32 => {
            let lane = if exec == 0 { 0 } else { exec.trailing_zeros() as usize };
            let v = w.vread(&srcs[0].op, Ty::B32)?[lane];
            return w.swrite(&vdst.ok_or_else(|| bad(inst))?.0, 0, v as u32);
        }
        V_READLANE_B32 => {
            let lane = w.sread(&srcs[1].op, Ty::B32, 0)? as usize & 63;
            let v = w.vread(&srcs[0].op, Ty::B32)?[lane];
            return w.swrite(&vdst.ok_or_else(|| bad(inst))?.0, 0, v as u32);
        }
        V_WRITELANE_B32 => {
            let v = w.sread(&srcs[0].op, Ty::B32, 0)?;
            let lane = w.sread(&srcs[1].op, Ty::B32, 0)? as usize & 63;
            let (d, _, _) = vdst.ok_or_else(|| bad(inst))?;
            let mut vals = [0u64; LANES];
            vals[lane] = v as u64;
            return w.vwrite(&d, 1, 1 << lane, &vals);
        }
        V_SWAP_B32 => {
            let (d, _, _) = vdst.ok_or_else(|| bad(inst))?;
            let a = w.vread(&d, Ty::B32)?;
            let b = w.vread(&srcs[0].op, Ty::B32)?;
            w.vwrite(&d, 1, exec, &b)?;
            return w.vwrite(&srcs[0].op, 1, exec, &a);
        }
        V_PERMLANE16_SWAP_B32 | V_PERMLANE32_SWAP_B32 => {
            // gfx950: swap the odd rows of vdst with the even rows of src0 (16-lane rows),
            // or the upper half of vdst with the lower half of src0 (32).
            let (dd, _, _) = vdst.ok_or_else(|| bad(inst))?;
            let mut a = w.vread(&dd, Ty::B32)?;
            let mut b = w.vread(&srcs[0].op, Ty::B32)?;
            let span = if inst.op == V_PERMLANE16_SWAP_B32 { 16 } else { 32 };
            #[allow(clippy::needless_range_loop)]
            for l in 0..LANES {
                if (l / span) % 2 == 1 {
                    let m = l - span;
                    if exec >> l & 1 == 1 && exec >> m & 1 == 1 {
                        std::mem::swap(&mut a[l], &mut b[m]);
                    }
                }
            }
            w.vwrite(&dd, 1, u64::MAX, &a)?;
            return w.vwrite(&srcs[0].op, 1, u64::MAX, &b);
        }
        _ => {}
    }

    // Gather sources.
    for s in srcs.iter_mut() {
        s.vals = w.vread(&s.op, s.ty)?;
    }
    // DPP: src0 from another lane.
    let mut dpp_valid = u64::MAX;
    if inst.enc == Enc::Dpp {
        let dp = inst.mods.dpp;
        let orig = srcs[0].vals;
        for l in 0..LANES {
            match dpp_src(dp.ctrl, l) {
                Some(s) if exec >> s & 1 == 1 => srcs[0].vals[l] = orig[s],
                _ => {
                    if dp.bound_ctrl {
                        srcs[0].vals[l] = 0;
                    } else {
                        dpp_valid &= !(1 << l);
                    }
                }
            }
            let row = l / 16;
            let bank = (l % 16) / 4;
            if dp.row_mask >> row & 1 == 0 || dp.bank_mask >> bank & 1 == 0 {
                dpp_valid &= !(1 << l);
            }
        }
    }
    // SDWA selects.
    if inst.enc == Enc::Sdwa {
        let sd = inst.mods.sdwa;
        for (i, s) in srcs.iter_mut().enumerate().take(2) {
            let (sel, sext) = if i == 0 { (sd.src0_sel, sd.src0_sext) } else { (sd.src1_sel, sd.src1_sext) };
            for v in s.vals.iter_mut() {
                *v = sdwa_sel(*v, sel, sext);
            }
        }
    }
    // 16-bit VOP3 op_sel: take the high half of a source.
    let is_vop3 = inst.enc == Enc::E64 || def.format == Format::Vop3;
    if is_vop3 && def.has(flags::OPSEL) && !def.has(flags::OPSEL4) {
        for (i, s) in srcs.iter_mut().enumerate() {
            if inst.mods.op_sel >> i & 1 == 1 && s.ty.is_16bit() {
                for v in s.vals.iter_mut() {
                    *v = (*v >> 16) & 0xFFFF;
                }
            }
        }
    }
    // abs/neg on float sources (VOP3, SDWA, DPP).
    if def.format != Format::Vop3p {
        for (i, s) in srcs.iter_mut().enumerate() {
            if !s.ty.is_float() {
                continue;
            }
            let sb = sign_bit(s.ty);
            let abs = inst.mods.abs >> i & 1 == 1;
            let neg = inst.mods.neg >> i & 1 == 1;
            if abs || neg {
                for v in s.vals.iter_mut() {
                    if abs {
                        *v &= !sb;
                    }
                    if neg {
                        *v ^= sb;
                    }
                }
            }
        }
    }

    if def.format == Format::Vopc {
        return vopc(w, inst, &srcs, sdst, exec & dpp_valid);
    }
    if def.format == Format::Vop3p {
        return vop3p(w, env, inst, &srcs, vdst, exec);
    }

    let (dst, dty, dwords) = vdst.ok_or_else(|| bad(inst))?;
    let old = w.vread(&dst, if dwords == 2 { Ty::B64 } else { Ty::B32 })?;
    let carry_in = match cin {
        Some(o) => w.sread_ty(&o, Ty::B64)?,
        None => 0,
    };
    let (fp8, bf8) = fp8_formats(env.arch);
    let mut out = [0u64; LANES];
    let mut carry = 0u64;
    let mask = exec & dpp_valid;
    let g = |i: usize, l: usize| srcs.get(i).map(|s| s.vals[l]).unwrap_or(0);
    for l in 0..LANES {
        if mask >> l & 1 == 0 {
            continue;
        }
        let (a, b, c) = (g(0, l), g(1, l), g(2, l));
        let (a32, b32, c32) = (a as u32, b as u32, c as u32);
        let ci = carry_in >> l & 1;
        let mut co = false;
        let r: u64 = match inst.op {
            V_MOV_B32 | V_ACCVGPR_MOV_B32 => a32 as u64,
            V_MOV_B64 => a,
            V_NOT_B32 => !a32 as u64,
            V_BFREV_B32 => a32.reverse_bits() as u64,
            V_FFBH_U32 => (if a32 == 0 { u32::MAX } else { a32.leading_zeros() }) as u64,
            V_FFBL_B32 => (if a32 == 0 { u32::MAX } else { a32.trailing_zeros() }) as u64,
            V_FFBH_I32 => {
                let x = if (a32 as i32) < 0 { !a32 } else { a32 };
                (if x == 0 { u32::MAX } else { x.leading_zeros() - 1 }) as u64
            }
            V_CVT_I32_F64 => (d(a) as i32) as u32 as u64,
            V_CVT_U32_F64 => (d(a) as u32) as u64,
            V_CVT_F64_I32 => db(a32 as i32 as f64),
            V_CVT_F64_U32 => db(a32 as f64),
            V_CVT_F32_I32 => fb(a32 as i32 as f32),
            V_CVT_F32_U32 => fb(a32 as f32),
            V_CVT_F32_UBYTE0 => fb((a32 & 0xFF) as f32),
            V_CVT_F32_UBYTE1 => fb((a32 >> 8 & 0xFF) as f32),
            V_CVT_F32_UBYTE2 => fb((a32 >> 16 & 0xFF) as f32),
            V_CVT_F32_UBYTE3 => fb((a32 >> 24) as f32),
            V_CVT_U32_F32 => f(a) as u32 as u64,
            V_CVT_I32_F32 => f(a) as i32 as u32 as u64,
            V_CVT_RPI_I32_F32 => (f(a) + 0.5).floor() as i32 as u32 as u64,
            V_CVT_FLR_I32_F32 => f(a).floor() as i32 as u32 as u64,
            V_CVT_F16_F32 => (old[l] & 0xFFFF_0000) | hb(f(a)),
            V_CVT_F32_F16 => fb(h(a)),
            V_CVT_F32_BF16 => fb(bfv(a)),
            V_CVT_F32_F64 => fb(d(a) as f32),
            V_CVT_F64_F32 => db(f(a) as f64),
            V_TRUNC_F32 => fb(f(a).trunc()),
            V_CEIL_F32 => fb(f(a).ceil()),
            V_RNDNE_F32 => fb(f(a).round_ties_even()),
            V_FLOOR_F32 => fb(f(a).floor()),
            V_FRACT_F32 => fb(f(a) - f(a).floor()),
            V_TRUNC_F64 => db(d(a).trunc()),
            V_CEIL_F64 => db(d(a).ceil()),
            V_RNDNE_F64 => db(d(a).round_ties_even()),
            V_FLOOR_F64 => db(d(a).floor()),
            V_FRACT_F64 => db(d(a) - d(a).floor()),
            V_EXP_F32 => fb(f(a).exp2()),
            V_LOG_F32 => fb(f(a).log2()),
            V_RCP_F32 | V_RCP_IFLAG_F32 => fb(1.0 / f(a)),
            V_RSQ_F32 => fb(1.0 / f(a).sqrt()),
            V_SQRT_F32 => fb(f(a).sqrt()),
            V_SIN_F32 => fb((f(a) * std::f32::consts::TAU).sin()),
            V_COS_F32 => fb((f(a) * std::f32::consts::TAU).cos()),
            V_RCP_F64 => db(1.0 / d(a)),
            V_RSQ_F64 => db(1.0 / d(a).sqrt()),
            V_SQRT_F64 => db(d(a).sqrt()),
            V_FREXP_EXP_I32_F32 => {
                let x = f(a);
                (if x == 0.0 || !x.is_finite() { 0 } else { x.abs().log2().floor() as i32 + 1 }) as u32 as u64
            }
            V_FREXP_MANT_F32 => {
                let x = f(a);
                if x == 0.0 || !x.is_finite() {
                    a32 as u64
                } else {
                    let e = x.abs().log2().floor() as i32 + 1;
                    fb(x / 2f32.powi(e))
                }
            }
            V_CVT_F32_FP8 | V_CVT_F32_BF8 => {
                let byte = if inst.enc == Enc::E64 { (inst.mods.op_sel & 3) as u32 } else { 0 };
                let x = (a32 >> (8 * byte)) as u8;
                let fm = if inst.op == V_CVT_F32_FP8 { fp8 } else { bf8 };
                fb(fm.decode(x))
            }
            V_CVT_PK_F32_FP8 | V_CVT_PK_F32_BF8 => {
                let word = if inst.enc == Enc::E64 { (inst.mods.op_sel & 1) as u32 } else { 0 };
                let x = a32 >> (16 * word);
                let fm = if inst.op == V_CVT_PK_F32_FP8 { fp8 } else { bf8 };
                fb(fm.decode(x as u8)) | (fb(fm.decode((x >> 8) as u8)) << 32)
            }
            V_CVT_F16_U16 => hb(a32 as u16 as f32),
            V_CVT_F16_I16 => hb(a32 as i16 as f32),
            V_CVT_U16_F16 => h(a) as u16 as u64,
            V_CVT_I16_F16 => h(a) as i16 as u16 as u64,
            V_RCP_F16 => hb(1.0 / h(a)),
            V_SQRT_F16 => hb(h(a).sqrt()),
            V_RSQ_F16 => hb(1.0 / h(a).sqrt()),
            V_LOG_F16 => hb(h(a).log2()),
            V_EXP_F16 => hb(h(a).exp2()),
            V_FLOOR_F16 => hb(h(a).floor()),
            V_CEIL_F16 => hb(h(a).ceil()),
            V_TRUNC_F16 => hb(h(a).trunc()),
            V_RNDNE_F16 => hb(h(a).round_ties_even()),
            V_FRACT_F16 => hb(h(a) - h(a).floor()),
            V_CNDMASK_B32 => {
                let sel = if cin.is_some() { ci } else { w.vcc() >> l & 1 };
                if sel == 1 {
                    b32 as u64
                } else {
                    a32 as u64
                }
            }
            V_ADD_F32 => fb(f(a) + f(b)),
            V_SUB_F32 => fb(f(a) - f(b)),
            V_SUBREV_F32 => fb(f(b) - f(a)),
            V_MUL_F32 => fb(f(a) * f(b)),
            V_MUL_LEGACY_F32 => fb(if f(a) == 0.0 || f(b) == 0.0 { 0.0 } else { f(a) * f(b) }),
            V_MIN_F32 => fb(f(a).min(f(b))),
            V_MAX_F32 => fb(f(a).max(f(b))),
            V_LDEXP_F32 => fb(f(a) * 2f32.powi(b32 as i32)),
            V_MUL_I32_I24 => ((sx24(a32) as i64 * sx24(b32) as i64) as u32) as u64,
            V_MUL_HI_I32_I24 => (((sx24(a32) as i64 * sx24(b32) as i64) >> 32) as u32) as u64,
            V_MUL_U32_U24 => (((a32 & 0xFF_FFFF) as u64 * (b32 & 0xFF_FFFF) as u64) as u32) as u64,
            V_MUL_HI_U32_U24 => ((a32 & 0xFF_FFFF) as u64 * (b32 & 0xFF_FFFF) as u64) >> 32,
            V_MIN_I32 => (a32 as i32).min(b32 as i32) as u32 as u64,
            V_MAX_I32 => (a32 as i32).max(b32 as i32) as u32 as u64,
            V_MIN_U32 => a32.min(b32) as u64,
            V_MAX_U32 => a32.max(b32) as u64,
            V_LSHRREV_B32 => (b32 >> (a32 & 31)) as u64,
            V_ASHRREV_I32 => ((b32 as i32) >> (a32 & 31)) as u32 as u64,
            V_LSHLREV_B32 => (b32 << (a32 & 31)) as u64,
            V_AND_B32 => (a32 & b32) as u64,
            V_OR_B32 => (a32 | b32) as u64,
            V_XOR_B32 => (a32 ^ b32) as u64,
            V_XNOR_B32 => !(a32 ^ b32) as u64,
            V_ADD_U32 => clamp_u32(a32 as u64 + b32 as u64, inst.mods.clamp),
            V_SUB_U32 => sub_u32(a32, b32, inst.mods.clamp),
            V_SUBREV_U32 => sub_u32(b32, a32, inst.mods.clamp),
            V_ADD_I32 => (a32 as i32).wrapping_add(b32 as i32) as u32 as u64,
            V_SUB_I32 => (a32 as i32).wrapping_sub(b32 as i32) as u32 as u64,
            V_FMAC_F32 => fb(f(a).mul_add(f(b), f(old[l]))),
            V_FMAC_F64 => db(d(a).mul_add(d(b), d(old[l]))),
            V_FMAMK_F32 => fb(f(a).mul_add(f(kimm), f(b))),
            V_FMAAK_F32 => fb(f(a).mul_add(f(b), f(kimm))),
            V_ADD_CO_U32 => {
                let s = a32 as u64 + b32 as u64;
                co = s >> 32 != 0;
                s as u32 as u64
            }
            V_SUB_CO_U32 => {
                co = b32 > a32;
                a32.wrapping_sub(b32) as u64
            }
            V_SUBREV_CO_U32 => {
                co = a32 > b32;
                b32.wrapping_sub(a32) as u64
            }
            V_ADDC_CO_U32 => {
                let s = a32 as u64 + b32 as u64 + ci;
                co = s >> 32 != 0;
                s as u32 as u64
            }
            V_SUBB_CO_U32 => {
                co = (b32 as u64 + ci) > a32 as u64;
                (a32 as u64).wrapping_sub(b32 as u64).wrapping_sub(ci) as u32 as u64
            }
            V_SUBBREV_CO_U32 => {
                co = (a32 as u64 + ci) > b32 as u64;
                (b32 as u64).wrapping_sub(a32 as u64).wrapping_sub(ci) as u32 as u64
            }
            V_ADD_F16 => hb(h(a) + h(b)),
            V_SUB_F16 => hb(h(a) - h(b)),
            V_SUBREV_F16 => hb(h(b) - h(a)),
            V_MUL_F16 => hb(h(a) * h(b)),
            V_MAX_F16 => hb(h(a).max(h(b))),
            V_MIN_F16 => hb(h(a).min(h(b))),
            V_LDEXP_F16 => hb(h(a) * 2f32.powi(b32 as i16 as i32)),
            V_MAC_F16 => hb(h(a) * h(b) + h(old[l])),
            V_MADMK_F16 => hb(h(a) * h(kimm) + h(b)),
            V_MADAK_F16 => hb(h(a) * h(b) + h(kimm)),
            V_ADD_U16 => (a32 as u16).wrapping_add(b32 as u16) as u64,
            V_SUB_U16 => (a32 as u16).wrapping_sub(b32 as u16) as u64,
            V_SUBREV_U16 => (b32 as u16).wrapping_sub(a32 as u16) as u64,
            V_MUL_LO_U16 => (a32 as u16).wrapping_mul(b32 as u16) as u64,
            V_LSHLREV_B16 => ((b32 as u16) << (a32 & 15)) as u64,
            V_LSHRREV_B16 => ((b32 as u16) >> (a32 & 15)) as u64,
            V_ASHRREV_I16 => ((b32 as i16) >> (a32 & 15)) as u16 as u64,
            V_MAX_U16 => (a32 as u16).max(b32 as u16) as u64,
            V_MIN_U16 => (a32 as u16).min(b32 as u16) as u64,
            V_MAX_I16 => (a32 as i16).max(b32 as i16) as u16 as u64,
            V_MIN_I16 => (a32 as i16).min(b32 as i16) as u16 as u64,
            V_DOT2C_F32_F16 => fb(h(a) * h(b) + h(a >> 16) * h(b >> 16) + f(old[l])),
            V_DOT2C_F32_BF16 => fb(bfv(a) * bfv(b) + bfv(a >> 16) * bfv(b >> 16) + f(old[l])),
            V_DOT2C_I32_I16 => {
                let p = (a32 as i16 as i32) * (b32 as i16 as i32)
                    + ((a32 >> 16) as i16 as i32) * ((b32 >> 16) as i16 as i32);
                (p.wrapping_add(old[l] as u32 as i32)) as u32 as u64
            }
            V_DOT4C_I32_I8 => {
                let mut s = old[l] as u32 as i32;
                for i in 0..4 {
                    s = s.wrapping_add((a32 >> (8 * i)) as i8 as i32 * (b32 >> (8 * i)) as i8 as i32);
                }
                s as u32 as u64
            }
            V_PK_FMAC_F16 => {
                let lo = hb(h(a).mul_add(h(b), h(old[l])));
                let hi = hb(h(a >> 16).mul_add(h(b >> 16), h(old[l] >> 16)));
                lo | (hi << 16)
            }
            // VOP3-only
            V_FMA_F32 => fb(f(a).mul_add(f(b), f(c))),
            V_FMA_F64 => db(d(a).mul_add(d(b), d(c))),
            V_FMA_F16 | V_MAD_F16 | V_FMA_LEGACY_F16 | V_MAD_LEGACY_F16 => hb(h(a).mul_add(h(b), h(c))),
            V_MIN3_F32 => fb(f(a).min(f(b)).min(f(c))),
            V_MAX3_F32 => fb(f(a).max(f(b)).max(f(c))),
            V_MED3_F32 => fb(med3f(f(a), f(b), f(c))),
            V_MINIMUM3_F32 => fb(f(a).min(f(b)).min(f(c))),
            V_MAXIMUM3_F32 => fb(f(a).max(f(b)).max(f(c))),
            V_MIN3_F16 => hb(h(a).min(h(b)).min(h(c))),
            V_MAX3_F16 => hb(h(a).max(h(b)).max(h(c))),
            V_MED3_F16 => hb(med3f(h(a), h(b), h(c))),
            V_MIN3_I32 => (a32 as i32).min(b32 as i32).min(c32 as i32) as u32 as u64,
            V_MAX3_I32 => (a32 as i32).max(b32 as i32).max(c32 as i32) as u32 as u64,
            V_MED3_I32 => med3i(a32 as i32 as i64, b32 as i32 as i64, c32 as i32 as i64) as u32 as u64,
            V_MIN3_U32 => a32.min(b32).min(c32) as u64,
            V_MAX3_U32 => a32.max(b32).max(c32) as u64,
            V_MED3_U32 => med3i(a32 as i64, b32 as i64, c32 as i64) as u32 as u64,
            V_MIN3_I16 => (a32 as i16).min(b32 as i16).min(c32 as i16) as u16 as u64,
            V_MAX3_I16 => (a32 as i16).max(b32 as i16).max(c32 as i16) as u16 as u64,
            V_MED3_I16 => med3i(a32 as i16 as i64, b32 as i16 as i64, c32 as i16 as i64) as u16 as u64,
            V_MIN3_U16 => (a32 as u16).min(b32 as u16).min(c32 as u16) as u64,
            V_MAX3_U16 => (a32 as u16).max(b32 as u16).max(c32 as u16) as u64,
            V_MED3_U16 => med3i(a32 as u16 as i64, b32 as u16 as i64, c32 as u16 as i64) as u64,
            V_MAD_I32_I24 => (sx24(a32) as i64 * sx24(b32) as i64 + c32 as i32 as i64) as u32 as u64,
            V_MAD_U32_U24 => ((a32 & 0xFF_FFFF) as u64 * (b32 & 0xFF_FFFF) as u64 + c32 as u64) as u32 as u64,
            V_MAD_U32_U16 => ((a32 & 0xFFFF) * (b32 & 0xFFFF)).wrapping_add(c32) as u64,
            V_MAD_I32_I16 => ((a32 as i16 as i32) * (b32 as i16 as i32)).wrapping_add(c32 as i32) as u32 as u64,
            V_MAD_U16 | V_MAD_LEGACY_U16 => (a32 as u16).wrapping_mul(b32 as u16).wrapping_add(c32 as u16) as u64,
            V_MAD_I16 | V_MAD_LEGACY_I16 => {
                (a32 as i16).wrapping_mul(b32 as i16).wrapping_add(c32 as i16) as u16 as u64
            }
            V_BFE_U32 => {
                let (o, wd) = (b32 & 31, c32 & 31);
                if wd == 0 {
                    0
                } else {
                    ((a32 >> o) & ((1u64 << wd) - 1) as u32) as u64
                }
            }
            V_BFE_I32 => {
                let (o, wd) = (b32 & 31, c32 & 31);
                if wd == 0 {
                    0
                } else {
                    let x = (a32 >> o) << (32 - wd);
                    ((x as i32) >> (32 - wd)) as u32 as u64
                }
            }
            V_BFI_B32 => ((a32 & b32) | (!a32 & c32)) as u64,
            V_ALIGNBIT_B32 => ((((a32 as u64) << 32 | b32 as u64) >> (c32 & 31)) as u32) as u64,
            V_ALIGNBYTE_B32 => ((((a32 as u64) << 32 | b32 as u64) >> (8 * (c32 & 3))) as u32) as u64,
            V_PERM_B32 => {
                let src = (a32 as u64) << 32 | b32 as u64;
                let mut r = 0u32;
                for i in 0..4 {
                    let s = (c32 >> (8 * i)) & 0xFF;
                    let byte = match s {
                        0..=7 => (src >> (8 * s)) as u8 as u32,
                        8 => ((src >> 15) & 1) as u32 * 0xFF,
                        9 => ((src >> 31) & 1) as u32 * 0xFF,
                        10 => ((src >> 47) & 1) as u32 * 0xFF,
                        11 => ((src >> 63) & 1) as u32 * 0xFF,
                        12 => 0,
                        _ => 0xFF,
                    };
                    r |= byte << (8 * i);
                }
                r as u64
            }
            V_LERP_U8 => {
                let mut r = 0u32;
                for i in 0..4 {
                    let x = (a32 >> (8 * i)) & 0xFF;
                    let y = (b32 >> (8 * i)) & 0xFF;
                    r |= ((x + y + ((c32 >> (8 * i)) & 1)) >> 1) << (8 * i);
                }
                r as u64
            }
            V_SAD_U8 | V_MSAD_U8 => {
                let mut s = c32;
                for i in 0..4 {
                    let x = ((a32 >> (8 * i)) & 0xFF) as i32;
                    let y = ((b32 >> (8 * i)) & 0xFF) as i32;
                    if inst.op == V_SAD_U8 || y != 0 {
                        s = s.wrapping_add((x - y).unsigned_abs());
                    }
                }
                s as u64
            }
            V_SAD_U16 => {
                let x = (a32 as u16 as i32 - b32 as u16 as i32).unsigned_abs()
                    + ((a32 >> 16) as i32 - (b32 >> 16) as i32).unsigned_abs();
                x.wrapping_add(c32) as u64
            }
            V_SAD_U32 => (a32 as i64 - b32 as i64).unsigned_abs().wrapping_add(c32 as u64) as u32 as u64,
            V_XAD_U32 => ((a32 ^ b32).wrapping_add(c32)) as u64,
            V_LSHL_ADD_U32 => ((a32 << (b32 & 31)).wrapping_add(c32)) as u64,
            V_ADD_LSHL_U32 => (a32.wrapping_add(b32) << (c32 & 31)) as u64,
            V_ADD3_U32 => a32.wrapping_add(b32).wrapping_add(c32) as u64,
            V_LSHL_OR_B32 => ((a32 << (b32 & 31)) | c32) as u64,
            V_AND_OR_B32 => ((a32 & b32) | c32) as u64,
            V_OR3_B32 => (a32 | b32 | c32) as u64,
            V_BITOP3_B32 | V_BITOP3_B16 => {
                // Bit i of the result is bit (a_i<<2 | b_i<<1 | c_i) of the `bitop3` truth
                // table (LLVM `V_BITOP3` / the CDNA4 ISA's BITOP3 pseudocode).
                let ttbl = u32::from(inst.mods.bitop3);
                let mut r = 0u32;
                for bit in 0..32 {
                    let idx = ((a32 >> bit) & 1) << 2 | ((b32 >> bit) & 1) << 1 | ((c32 >> bit) & 1);
                    r |= ((ttbl >> idx) & 1) << bit;
                }
                r as u64
            }
            V_CVT_PK_U8_F32 => {
                let byte = c32 & !(0xFF << (8 * (b32 & 3)));
                let v = f(a).round_ties_even().clamp(0.0, 255.0) as u32;
                (byte | (v << (8 * (b32 & 3)))) as u64
            }
            V_DIV_FIXUP_F32 => fb(f(c) / f(b)),
            V_DIV_FIXUP_F64 => db(d(c) / d(b)),
            V_DIV_FIXUP_F16 | V_DIV_FIXUP_LEGACY_F16 => hb(h(c) / h(b)),
            V_DIV_FMAS_F32 => fb(f(a).mul_add(f(b), f(c))),
            V_DIV_FMAS_F64 => db(d(a).mul_add(d(b), d(c))),
            V_DIV_SCALE_F32 => a32 as u64,
            V_DIV_SCALE_F64 => a,
            V_MAD_U64_U32 => {
                let p = a32 as u128 * b32 as u128 + c as u128;
                co = p >> 64 != 0;
                p as u64
            }
            V_MAD_I64_I32 => {
                let p = (a32 as i32 as i128) * (b32 as i32 as i128) + c as i64 as i128;
                co = p > i64::MAX as i128 || p < i64::MIN as i128;
                p as u64
            }
            V_ADD_F64 => db(d(a) + d(b)),
            V_MUL_F64 => db(d(a) * d(b)),
            V_MIN_F64 => db(d(a).min(d(b))),
            V_MAX_F64 => db(d(a).max(d(b))),
            V_LDEXP_F64 => db(d(a) * 2f64.powi(b32 as i32)),
            V_MUL_LO_U32 => a32.wrapping_mul(b32) as u64,
            V_MUL_HI_U32 => (a32 as u64 * b32 as u64) >> 32,
            V_MUL_HI_I32 => (((a32 as i32 as i64) * (b32 as i32 as i64)) >> 32) as u32 as u64,
            V_BCNT_U32_B32 => (a32.count_ones() + b32) as u64,
            V_MBCNT_LO_U32_B32 => ((a32 & ((1u64 << l.min(32)) - 1) as u32).count_ones() + b32) as u64,
            V_MBCNT_HI_U32_B32 => {
                let m = if l > 32 { ((1u64 << (l - 32)) - 1) as u32 } else { 0 };
                ((a32 & m).count_ones() + b32) as u64
            }
            V_BFM_B32 => ((((1u64 << (a32 & 31)) - 1) << (b32 & 31)) as u32) as u64,
            V_CVT_PK_U16_U32 => ((a32.min(0xFFFF)) | (b32.min(0xFFFF) << 16)) as u64,
            V_CVT_PK_I16_I32 => {
                let cl = |x: u32| (x as i32).clamp(-32768, 32767) as u16 as u32;
                (cl(a32) | (cl(b32) << 16)) as u64
            }
            V_CVT_PKNORM_I16_F32 => {
                let cl = |x: f32| (x.clamp(-1.0, 1.0) * 32767.0).round_ties_even() as i16 as u16 as u32;
                (cl(f(a)) | (cl(f(b)) << 16)) as u64
            }
            V_CVT_PKNORM_U16_F32 => {
                let cl = |x: f32| (x.clamp(0.0, 1.0) * 65535.0).round_ties_even() as u16 as u32;
                (cl(f(a)) | (cl(f(b)) << 16)) as u64
            }
            V_CVT_PKRTZ_F16_F32 => (rtz_f16(f(a)) | (rtz_f16(f(b)) << 16)) as u64,
            V_CVT_PK_F16_F32 => hb(f(a)) | (hb(f(b)) << 16),
            V_CVT_PK_BF16_F32 => (bf16_rne(f(a)) as u64) | ((bf16_rne(f(b)) as u64) << 16),
            V_PACK_B32_F16 => {
                let lo = a32 & 0xFFFF;
                let hi = b32 & 0xFFFF;
                (lo | (hi << 16)) as u64
            }
            V_CVT_PK_FP8_F32 | V_CVT_PK_BF8_F32 => {
                // Two f32 -> two fp8 bytes into the low (op_sel[3] = 0) or high word of vdst;
                // the other word is kept. Round to nearest even; the clamp bit saturates.
                let fm = if inst.op == V_CVT_PK_FP8_F32 { fp8 } else { bf8 };
                let enc = |x: f32| if inst.mods.clamp { fm.encode_saturating(x) } else { fm.encode(x) } as u32;
                let pair = enc(f(a)) | (enc(f(b)) << 8);
                let hi = inst.mods.op_sel >> 3 & 1 == 1;
                let o = old[l] as u32;
                (if hi { (o & 0xFFFF) | (pair << 16) } else { (o & 0xFFFF_0000) | pair }) as u64
            }
            V_CVT_SR_FP8_F32 | V_CVT_SR_BF8_F32 => {
                // Stochastic rounding with the random bits of src1 (LLVM `v_cvt_sr_*`):
                // modelled as round to nearest even; the byte lands at op_sel[3:2].
                let fm = if inst.op == V_CVT_SR_FP8_F32 { fp8 } else { bf8 };
                let byte = (inst.mods.op_sel >> 2) & 3;
                let v = fm.encode(f(a)) as u32;
                let o = old[l] as u32 & !(0xFF << (8 * byte));
                (o | (v << (8 * byte))) as u64
            }
            V_CVT_SR_BF16_F32 => {
                let o = old[l] as u32;
                let v = bf16_rne(f(a)) as u32;
                (if inst.mods.op_sel >> 3 & 1 == 1 { (o & 0xFFFF) | (v << 16) } else { (o & 0xFFFF_0000) | v }) as u64
            }
            V_CVT_SR_F16_F32 => {
                let o = old[l] as u32;
                let v = hb(f(a)) as u32;
                (if inst.mods.op_sel >> 3 & 1 == 1 { (o & 0xFFFF) | (v << 16) } else { (o & 0xFFFF_0000) | v }) as u64
            }
            V_ADD_I16 => (a32 as i16).wrapping_add(b32 as i16) as u16 as u64,
            V_SUB_I16 => (a32 as i16).wrapping_sub(b32 as i16) as u16 as u64,
            V_LSHLREV_B64 => b << (a32 & 63),
            V_LSHRREV_B64 => b >> (a32 & 63),
            V_ASHRREV_I64 => ((b as i64) >> (a32 & 63)) as u64,
            V_LSHL_ADD_U64 => (a << (b32 & 7)).wrapping_add(c),
            V_TRIG_PREOP_F64 => db(std::f64::consts::FRAC_2_PI),
            V_ASHR_PK_I8_I32 | V_ASHR_PK_U8_I32 => {
                let sh = c32 & 31;
                let cv = |x: u32| {
                    let v = (x as i32) >> sh;
                    if inst.op == V_ASHR_PK_I8_I32 {
                        v.clamp(-128, 127) as u8 as u32
                    } else {
                        v.clamp(0, 255) as u32
                    }
                };
                let p = cv(a32) | (cv(b32) << 8);
                let o = old[l] as u32;
                (if inst.mods.op_sel >> 3 & 1 == 1 { (o & 0xFFFF) | (p << 16) } else { (o & 0xFFFF_0000) | p }) as u64
            }
            V_SAT_PK_U8_I16 => {
                let cl = |x: u32| (x as i16).clamp(0, 255) as u32;
                (cl(a32) | (cl(a32 >> 16) << 8)) as u64
            }
            op => return Err(FaultKind::Unsupported(format!("{} (vector ALU)", op.name()))),
        };
        if co {
            carry |= 1 << l;
        }
        out[l] = r;
    }
    // Output modifiers for f32 results.
    if dty == Ty::F32 && (inst.mods.omod != 0 || inst.mods.clamp) {
        for (l, v) in out.iter_mut().enumerate() {
            if mask >> l & 1 == 0 {
                continue;
            }
            let mut x = f(*v);
            x *= match inst.mods.omod {
                1 => 2.0,
                2 => 4.0,
                3 => 0.5,
                _ => 1.0,
            };
            if inst.mods.clamp {
                x = x.clamp(0.0, 1.0);
            }
            *v = fb(x);
        }
    }
    // 16-bit VOP3 results with op_sel[3]: the high half, low half kept.
    if is_vop3 && dty.is_16bit() && def.has(flags::OPSEL) && inst.mods.op_sel >> 3 & 1 == 1 && !def.has(flags::OPSEL4) {
        for l in 0..LANES {
            out[l] = (old[l] & 0xFFFF) | ((out[l] & 0xFFFF) << 16);
        }
    } else if dty.is_16bit() && inst.enc != Enc::Sdwa && !matches!(inst.op, V_CVT_F16_F32) {
        // gfx9 16-bit VALU ops zero the high half of the destination.
        for v in out.iter_mut() {
            *v &= 0xFFFF;
        }
    }
    if inst.enc == Enc::Sdwa {
        let sd = inst.mods.sdwa;
        for l in 0..LANES {
            out[l] = sdwa_dst(out[l] as u32, old[l] as u32, sd.dst_sel, sd.dst_unused) as u64;
        }
    }
    w.vwrite(&dst, dwords.max(dty.dwords()), mask, &out)?;
    if let Some(sd) = sdst {
        w.swrite_ty(&sd, Ty::B64, carry)?;
    } else if matches!(
        inst.op,
        V_ADD_CO_U32 | V_SUB_CO_U32 | V_SUBREV_CO_U32 | V_ADDC_CO_U32 | V_SUBB_CO_U32 | V_SUBBREV_CO_U32
    ) {
        w.s[crate::wave::VCC] = carry as u32;
        w.s[crate::wave::VCC + 1] = (carry >> 32) as u32;
    }
    Ok(())
}

fn sdwa_dst(v: u32, old: u32, sel: u8, unused: u8) -> u32 {
    let (shift, bits) = match sel {
        0..=3 => (8 * sel as u32, 8u32),
        4 | 5 => (16 * (sel as u32 - 4), 16),
        _ => return v,
    };
    let m = ((1u64 << bits) - 1) as u32;
    let field = (v & m) << shift;
    match unused {
        2 => (old & !(m << shift)) | field,
        1 => {
            let top = shift + bits;
            let sx = if top < 32 && (v >> (bits - 1)) & 1 == 1 { !0u32 << top } else { 0 };
            field | sx
        }
        _ => field,
    }
}

fn bad(inst: &Inst) -> FaultKind {
    FaultKind::Unsupported(format!("{}: missing operand", inst.op.name()))
}

fn sx24(x: u32) -> i32 {
    ((x << 8) as i32) >> 8
}
fn clamp_u32(x: u64, clamp: bool) -> u64 {
    if clamp {
        x.min(u32::MAX as u64)
    } else {
        x as u32 as u64
    }
}
fn sub_u32(a: u32, b: u32, clamp: bool) -> u64 {
    if clamp {
        a.saturating_sub(b) as u64
    } else {
        a.wrapping_sub(b) as u64
    }
}
fn med3f(a: f32, b: f32, c: f32) -> f32 {
    a.max(b).min(a.min(b).max(c))
}
fn med3i(a: i64, b: i64, c: i64) -> i64 {
    a.max(b).min(a.min(b).max(c))
}
fn rtz_f16(x: f32) -> u32 {
    let r = f16::from_f32(x);
    // Round toward zero: step back one ulp when rounding went away from zero.
    if r.to_f32().abs() > x.abs() && r.to_f32().is_finite() {
        (r.to_bits() - 1) as u32
    } else {
        r.to_bits() as u32
    }
}

/// VOPC: per-lane compare into a lane mask (VCC or an SGPR pair); `v_cmpx` also writes EXEC.
fn vopc(w: &mut Wave, inst: &Inst, srcs: &[Src], sdst: Option<Operand>, mask: u64) -> R<()> {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let name = inst.op.name();
    let cmpx = name.starts_with("v_cmpx_");
    let rest = name.trim_start_matches("v_cmpx_").trim_start_matches("v_cmp_");
    let (cond, ty) = rest.rsplit_once('_').ok_or_else(|| bad(inst))?;
    let mut r = 0u64;
    for l in 0..LANES {
        if mask >> l & 1 == 0 {
            continue;
        }
        let (a, b) = (srcs[0].vals[l], srcs[1].vals[l]);
        let bit = if cond == "class" {
            let x = match ty {
                "f64" => d(a),
                "f16" => h(a) as f64,
                _ => f(a) as f64,
            };
            class_bits(x, ty, a) & b as u32 != 0
        } else {
            match ty {
                "f32" | "f64" | "f16" => {
                    let (x, y) = match ty {
                        "f64" => (d(a), d(b)),
                        "f16" => (h(a) as f64, h(b) as f64),
                        _ => (f(a) as f64, f(b) as f64),
                    };
                    let un = x.is_nan() || y.is_nan();
                    match cond {
                        "f" => false,
                        "lt" => x < y,
                        "eq" => x == y,
                        "le" => x <= y,
                        "gt" => x > y,
                        "lg" => matches!(x.partial_cmp(&y), Some(Less | Greater)),
                        "ge" => x >= y,
                        "o" => !un,
                        "u" => un,
                        "nge" => !matches!(x.partial_cmp(&y), Some(Greater | Equal)),
                        "nlg" => !matches!(x.partial_cmp(&y), Some(Less | Greater)),
                        "ngt" => !matches!(x.partial_cmp(&y), Some(Greater)),
                        "nle" => !matches!(x.partial_cmp(&y), Some(Less | Equal)),
                        "neq" => x != y,
                        "nlt" => !matches!(x.partial_cmp(&y), Some(Less)),
                        _ => true,
                    }
                }
                _ => {
                    let (x, y): (i128, i128) = match ty {
                        "i16" => (a as i16 as i128, b as i16 as i128),
                        "u16" => (a as u16 as i128, b as u16 as i128),
                        "i32" => (a as i32 as i128, b as i32 as i128),
                        "u32" => (a as u32 as i128, b as u32 as i128),
                        "i64" => (a as i64 as i128, b as i64 as i128),
                        _ => (a as i128, b as i128),
                    };
                    match cond {
                        "f" => false,
                        "lt" => x < y,
                        "eq" => x == y,
                        "le" => x <= y,
                        "gt" => x > y,
                        "ne" => x != y,
                        "ge" => x >= y,
                        _ => true,
                    }
                }
            }
        };
        if bit {
            r |= 1 << l;
        }
    }
    match sdst {
        Some(o) => w.swrite_ty(&o, Ty::B64, r)?,
        None => {
            w.s[crate::wave::VCC] = r as u32;
            w.s[crate::wave::VCC + 1] = (r >> 32) as u32;
        }
    }
    if cmpx {
        w.set_exec(r);
    }
    Ok(())
}

/// `v_cmp_class` mask bits: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denorm, 5 -0, 6 +0,
/// 7 +denorm, 8 +normal, 9 +inf.
fn class_bits(x: f64, ty: &str, raw: u64) -> u32 {
    let quiet = match ty {
        "f64" => raw >> 51 & 1 == 1,
        "f16" => raw >> 9 & 1 == 1,
        _ => raw >> 22 & 1 == 1,
    };
    let sub = match ty {
        "f64" => x != 0.0 && x.abs() < f64::MIN_POSITIVE,
        "f16" => x != 0.0 && x.abs() < 6.103_515_625e-5,
        _ => x != 0.0 && x.abs() < f32::MIN_POSITIVE as f64,
    };
    let neg = x.is_sign_negative();
    1 << if x.is_nan() {
        if quiet {
            1
        } else {
            0
        }
    } else if x.is_infinite() {
        if neg {
            2
        } else {
            9
        }
    } else if x == 0.0 {
        if neg {
            5
        } else {
            6
        }
    } else if sub {
        if neg {
            4
        } else {
            7
        }
    } else if neg {
        3
    } else {
        8
    }
}

/// VOP3P: packed 16-bit math, packed f32, dot products, mixed fma, accvgpr moves.
fn vop3p(w: &mut Wave, _env: &mut Env, inst: &Inst, srcs: &[Src], vdst: Option<(Operand, Ty, u8)>, exec: u64) -> R<()> {
    use Op::*;
    let (dst, dty, dwords) = vdst.ok_or_else(|| bad(inst))?;
    let m = inst.mods;
    let mut out = [0u64; LANES];
    let old = w.vread(&dst, if dwords == 2 { Ty::B64 } else { Ty::B32 })?;
    // Half `hi` (0/1) of source i, with op_sel/op_sel_hi and neg/neg_hi applied for floats.
    let half = |i: usize, l: usize, hi: bool| -> u32 {
        let s = &srcs[i];
        let sel = if hi { m.op_sel_hi >> i & 1 } else { m.op_sel >> i & 1 };
        let mut v = (s.vals[l] as u32 >> (16 * sel)) & 0xFFFF;
        let neg = if hi { m.neg_hi >> i & 1 } else { m.neg >> i & 1 };
        if neg == 1 && s.ty.is_float() {
            v ^= 0x8000;
        }
        v
    };
    let word = |i: usize, l: usize, hi: bool| -> u32 {
        let s = &srcs[i];
        let sel = if hi { m.op_sel_hi >> i & 1 } else { m.op_sel >> i & 1 };
        let mut v = (s.vals[l] >> (32 * sel)) as u32;
        let neg = if hi { m.neg_hi >> i & 1 } else { m.neg >> i & 1 };
        if neg == 1 && s.ty.is_float() {
            v ^= 0x8000_0000;
        }
        v
    };
    for l in 0..LANES {
        if exec >> l & 1 == 0 {
            continue;
        }
        let pk16 = |fun: &dyn Fn(u32, u32, u32) -> u32| -> u64 {
            let n = srcs.len();
            let lo = fun(
                half(0, l, false),
                if n > 1 { half(1, l, false) } else { 0 },
                if n > 2 { half(2, l, false) } else { 0 },
            );
            let hi = fun(
                half(0, l, true),
                if n > 1 { half(1, l, true) } else { 0 },
                if n > 2 { half(2, l, true) } else { 0 },
            );
            ((lo & 0xFFFF) | (hi << 16)) as u64
        };
        let hf = |x: u32| h(x as u64);
        let hbf = |x: f32| hb(x) as u32;
        out[l] = match inst.op {
            V_ACCVGPR_READ_B32 | V_ACCVGPR_WRITE_B32 => srcs[0].vals[l] as u32 as u64,
            V_PK_FMA_F16 => pk16(&|a, b, c| hbf(hf(a).mul_add(hf(b), hf(c)))),
            V_PK_ADD_F16 => pk16(&|a, b, _| hbf(hf(a) + hf(b))),
            V_PK_MUL_F16 => pk16(&|a, b, _| hbf(hf(a) * hf(b))),
            V_PK_MIN_F16 => pk16(&|a, b, _| hbf(hf(a).min(hf(b)))),
            V_PK_MAX_F16 => pk16(&|a, b, _| hbf(hf(a).max(hf(b)))),
            V_PK_MAD_I16 => pk16(&|a, b, c| (a as i16).wrapping_mul(b as i16).wrapping_add(c as i16) as u16 as u32),
            V_PK_MAD_U16 => pk16(&|a, b, c| (a as u16).wrapping_mul(b as u16).wrapping_add(c as u16) as u32),
            V_PK_MUL_LO_U16 => pk16(&|a, b, _| (a as u16).wrapping_mul(b as u16) as u32),
            V_PK_ADD_I16 => pk16(&|a, b, _| (a as i16).wrapping_add(b as i16) as u16 as u32),
            V_PK_SUB_I16 => pk16(&|a, b, _| (a as i16).wrapping_sub(b as i16) as u16 as u32),
            V_PK_ADD_U16 => pk16(&|a, b, _| (a as u16).wrapping_add(b as u16) as u32),
            V_PK_SUB_U16 => pk16(&|a, b, _| (a as u16).wrapping_sub(b as u16) as u32),
            V_PK_LSHLREV_B16 => pk16(&|a, b, _| ((b as u16) << (a & 15)) as u32),
            V_PK_LSHRREV_B16 => pk16(&|a, b, _| ((b as u16) >> (a & 15)) as u32),
            V_PK_ASHRREV_I16 => pk16(&|a, b, _| ((b as i16) >> (a & 15)) as u16 as u32),
            V_PK_MAX_I16 => pk16(&|a, b, _| (a as i16).max(b as i16) as u16 as u32),
            V_PK_MIN_I16 => pk16(&|a, b, _| (a as i16).min(b as i16) as u16 as u32),
            V_PK_MAX_U16 => pk16(&|a, b, _| (a as u16).max(b as u16) as u32),
            V_PK_MIN_U16 => pk16(&|a, b, _| (a as u16).min(b as u16) as u32),
            V_PK_FMA_F32 | V_PK_MUL_F32 | V_PK_ADD_F32 => {
                let calc = |hi: bool| -> u32 {
                    let a = f32::from_bits(word(0, l, hi));
                    let b = f32::from_bits(word(1, l, hi));
                    match inst.op {
                        V_PK_FMA_F32 => a.mul_add(b, f32::from_bits(word(2, l, hi))),
                        V_PK_MUL_F32 => a * b,
                        _ => a + b,
                    }
                    .to_bits()
                };
                calc(false) as u64 | ((calc(true) as u64) << 32)
            }
            V_PK_MOV_B32 => {
                let lo = (srcs[0].vals[l] >> (32 * (m.op_sel & 1))) as u32;
                let hi = (srcs[1].vals[l] >> (32 * (m.op_sel >> 1 & 1))) as u32;
                lo as u64 | ((hi as u64) << 32)
            }
            V_DOT2_F32_F16 | V_DOT2_F32_BF16 => {
                let cv = |x: u32| if inst.op == V_DOT2_F32_F16 { hf(x) } else { bfv(x as u64) };
                let c = f32::from_bits(srcs[2].vals[l] as u32 ^ if m.neg >> 2 & 1 == 1 { 0x8000_0000 } else { 0 });
                fb(cv(half(0, l, false)) * cv(half(1, l, false)) + cv(half(0, l, true)) * cv(half(1, l, true)) + c)
            }
            V_DOT2_I32_I16 | V_DOT2_U32_U16 => {
                let s = inst.op == V_DOT2_I32_I16;
                let e = |x: u32| if s { x as i16 as i64 } else { x as u16 as i64 };
                let p = e(half(0, l, false)) * e(half(1, l, false)) + e(half(0, l, true)) * e(half(1, l, true));
                (p + srcs[2].vals[l] as u32 as i32 as i64) as u32 as u64
            }
            V_DOT4_I32_I8 | V_DOT4_U32_U8 | V_DOT8_I32_I4 | V_DOT8_U32_U4 => {
                let (a, b) = (srcs[0].vals[l] as u32, srcs[1].vals[l] as u32);
                let (n, bits) = if matches!(inst.op, V_DOT4_I32_I8 | V_DOT4_U32_U8) { (4, 8) } else { (8, 4) };
                let signed = matches!(inst.op, V_DOT4_I32_I8 | V_DOT8_I32_I4);
                let mut s = srcs[2].vals[l] as u32 as i32 as i64;
                for i in 0..n {
                    let ext = |x: u32| {
                        let v = (x >> (bits * i)) & ((1 << bits) - 1);
                        if signed {
                            ((v << (32 - bits)) as i32 >> (32 - bits)) as i64
                        } else {
                            v as i64
                        }
                    };
                    s += ext(a) * ext(b);
                }
                s as u32 as u64
            }
            V_FMA_MIX_F32 | V_FMA_MIXLO_F16 | V_FMA_MIXHI_F16 => {
                // op_sel_hi[i] = 1: source i is f16 (op_sel[i] picks the half), else f32.
                let val = |i: usize| -> f32 {
                    let raw = srcs[i].vals[l] as u32;
                    let mut x = if m.op_sel_hi >> i & 1 == 1 {
                        h(((raw >> (16 * (m.op_sel >> i & 1))) & 0xFFFF) as u64)
                    } else {
                        f32::from_bits(raw)
                    };
                    if m.abs >> i & 1 == 1 {
                        x = x.abs();
                    }
                    if m.neg >> i & 1 == 1 {
                        x = -x;
                    }
                    x
                };
                let r = val(0).mul_add(val(1), val(2));
                let r = if m.clamp { r.clamp(0.0, 1.0) } else { r };
                match inst.op {
                    V_FMA_MIX_F32 => fb(r),
                    V_FMA_MIXLO_F16 => (old[l] & 0xFFFF_0000) | hb(r),
                    _ => (old[l] & 0xFFFF) | (hb(r) << 16),
                }
            }
            op => return Err(FaultKind::Unsupported(format!("{} (VOP3P)", op.name()))),
        };
    }
    let _ = dty;
    w.vwrite(&dst, dwords, exec, &out)
}
