//! Scalar ALU (SOP1, SOP2, SOPK, SOPC), with SCC as the ISA defines it per opcode.

use crate::error::FaultKind;
use crate::scheduler::{Env, R};
use crate::wave::Wave;
use gemm_isa::table::Field;
use gemm_isa::{Inst, Op, Operand, Ty};

/// Operand in `field` with its type.
pub fn opnd(inst: &Inst, field: Field) -> Option<(Operand, Ty)> {
    inst.slots().iter().zip(&inst.operands).find(|(s, _)| s.field == field).map(|(s, o)| (*o, s.ty))
}

fn src(w: &Wave, inst: &Inst, field: Field) -> R<u64> {
    match opnd(inst, field) {
        Some((o, ty)) => w.sread_ty(&o, ty),
        None => Ok(0),
    }
}

/// Executes a scalar ALU instruction; sets `w.pc` (to `next`, or a jump target).
pub fn exec(w: &mut Wave, env: &mut Env, inst: &Inst, next: u64) -> R<()> {
    use Op::*;
    let a = src(w, inst, Field::Ssrc0)?;
    let b = src(w, inst, Field::Ssrc1)?;
    let k = match opnd(inst, Field::Simm16) {
        Some((Operand::Imm(i), _)) => i,
        _ => 0,
    };
    let (a32, b32) = (a as u32, b as u32);
    let dst = opnd(inst, Field::Sdst);
    let dstv = match dst {
        Some((o, ty)) => w.sread_ty(&o, ty).unwrap_or(0),
        None => 0,
    };
    let regs: Vec<(gemm_isa::RegFile, u16)> = inst
        .operands
        .iter()
        .filter_map(|o| o.reg())
        .filter(|r| r.file == gemm_isa::RegFile::Sgpr)
        .flat_map(|r| (0..r.count as u16).map(move |i| (r.file, r.index + i)))
        .collect();
    env.check_regs(w, &regs, false);
    let scc = w.scc;
    let mut new_scc = None;
    let mut pc = next;
    let sk = k as i16 as i32 as u32;
    // 32-bit result, 64-bit result, or no write.
    let r: Option<u64> = match inst.op {
        S_ADD_U32 => {
            let (r, c) = a32.overflowing_add(b32);
            new_scc = Some(c);
            Some(r as u64)
        }
        S_SUB_U32 => {
            let (r, c) = a32.overflowing_sub(b32);
            new_scc = Some(c);
            Some(r as u64)
        }
        S_ADD_I32 => {
            let (r, o) = (a32 as i32).overflowing_add(b32 as i32);
            new_scc = Some(o);
            Some(r as u32 as u64)
        }
        S_SUB_I32 => {
            let (r, o) = (a32 as i32).overflowing_sub(b32 as i32);
            new_scc = Some(o);
            Some(r as u32 as u64)
        }
        S_ADDC_U32 => {
            let s = a32 as u64 + b32 as u64 + scc as u64;
            new_scc = Some(s >> 32 != 0);
            Some(s as u32 as u64)
        }
        S_SUBB_U32 => {
            let s = (a32 as u64).wrapping_sub(b32 as u64).wrapping_sub(scc as u64);
            new_scc = Some((b32 as u64 + scc as u64) > a32 as u64);
            Some(s as u32 as u64)
        }
        S_MIN_I32 | S_MIN_U32 | S_MAX_I32 | S_MAX_U32 => {
            let (r, c) = match inst.op {
                S_MIN_I32 => ((a32 as i32).min(b32 as i32) as u32, (a32 as i32) < (b32 as i32)),
                S_MIN_U32 => (a32.min(b32), a32 < b32),
                S_MAX_I32 => ((a32 as i32).max(b32 as i32) as u32, (a32 as i32) > (b32 as i32)),
                _ => (a32.max(b32), a32 > b32),
            };
            new_scc = Some(c);
            Some(r as u64)
        }
        S_CSELECT_B32 | S_CSELECT_B64 => Some(if scc { a } else { b }),
        S_AND_B32 | S_AND_B64 => Some(a & b),
        S_OR_B32 | S_OR_B64 => Some(a | b),
        S_XOR_B32 | S_XOR_B64 => Some(a ^ b),
        S_ANDN2_B32 | S_ANDN2_B64 => Some(a & !b),
        S_ORN2_B32 | S_ORN2_B64 => Some(a | !b),
        S_NAND_B32 | S_NAND_B64 => Some(!(a & b)),
        S_NOR_B32 | S_NOR_B64 => Some(!(a | b)),
        S_XNOR_B32 | S_XNOR_B64 => Some(!(a ^ b)),
        S_LSHL_B32 => Some((a32 << (b32 & 31)) as u64),
        S_LSHR_B32 => Some((a32 >> (b32 & 31)) as u64),
        S_ASHR_I32 => Some(((a32 as i32) >> (b32 & 31)) as u32 as u64),
        S_LSHL_B64 => Some(a << (b32 & 63)),
        S_LSHR_B64 => Some(a >> (b32 & 63)),
        S_ASHR_I64 => Some(((a as i64) >> (b32 & 63)) as u64),
        S_BFM_B32 => Some((((1u64 << (a32 & 31)) - 1) << (b32 & 31)) as u32 as u64),
        S_BFM_B64 => Some(((1u64 << (a32 & 63)).wrapping_sub(1)) << (b32 & 63)),
        S_MUL_I32 => Some((a32 as i32).wrapping_mul(b32 as i32) as u32 as u64),
        S_MUL_HI_U32 => Some((a32 as u64 * b32 as u64) >> 32),
        S_MUL_HI_I32 => Some((((a32 as i32 as i64) * (b32 as i32 as i64)) >> 32) as u32 as u64),
        S_BFE_U32 | S_BFE_I32 => {
            let off = b32 & 31;
            let width = (b32 >> 16) & 0x7F;
            let r = if width == 0 {
                0
            } else if inst.op == S_BFE_U32 {
                ((a32 >> off) as u64 & ((1u64 << width.min(32)) - 1)) as u32
            } else {
                let sh = 32u32.saturating_sub(width + off).min(31);
                (((a32 << sh) as i32) >> (sh + off).min(31)) as u32
            };
            Some(r as u64)
        }
        S_BFE_U64 | S_BFE_I64 => {
            let off = b32 & 63;
            let width = (b32 >> 16) & 0x7F;
            let r = if width == 0 {
                0
            } else if inst.op == S_BFE_U64 {
                (a >> off) & if width >= 64 { u64::MAX } else { (1u64 << width) - 1 }
            } else {
                let sh = 64u32.saturating_sub(width + off).min(63);
                (((a << sh) as i64) >> (sh + off).min(63)) as u64
            };
            Some(r)
        }
        S_ABSDIFF_I32 => Some((a32 as i32).wrapping_sub(b32 as i32).unsigned_abs() as u64),
        S_LSHL1_ADD_U32 | S_LSHL2_ADD_U32 | S_LSHL3_ADD_U32 | S_LSHL4_ADD_U32 => {
            let sh = match inst.op {
                S_LSHL1_ADD_U32 => 1,
                S_LSHL2_ADD_U32 => 2,
                S_LSHL3_ADD_U32 => 3,
                _ => 4,
            };
            let s = ((a32 as u64) << sh) + b32 as u64;
            new_scc = Some(s >> 32 != 0);
            Some(s as u32 as u64)
        }
        S_PACK_LL_B32_B16 => Some(((a32 & 0xFFFF) | (b32 << 16)) as u64),
        S_PACK_LH_B32_B16 => Some(((a32 & 0xFFFF) | (b32 & 0xFFFF_0000)) as u64),
        S_PACK_HH_B32_B16 => Some(((a32 >> 16) | (b32 & 0xFFFF_0000)) as u64),
        S_MOV_B32 | S_MOV_B64 => Some(a),
        S_CMOV_B32 | S_CMOV_B64 => Some(if scc { a } else { dstv }),
        S_NOT_B32 | S_NOT_B64 => Some(!a),
        S_BREV_B32 => Some(a32.reverse_bits() as u64),
        S_BREV_B64 => Some(a.reverse_bits()),
        S_BCNT0_I32_B32 => Some((32 - a32.count_ones()) as u64),
        S_BCNT1_I32_B32 => Some(a32.count_ones() as u64),
        S_BCNT0_I32_B64 => Some((64 - a.count_ones()) as u64),
        S_BCNT1_I32_B64 => Some(a.count_ones() as u64),
        S_FF0_I32_B32 => Some(if a32 == u32::MAX { u32::MAX } else { (!a32).trailing_zeros() } as u64),
        S_FF1_I32_B32 => Some(if a32 == 0 { u32::MAX } else { a32.trailing_zeros() } as u64),
        S_FF0_I32_B64 => Some(if a == u64::MAX { u32::MAX } else { (!a).trailing_zeros() } as u64),
        S_FF1_I32_B64 => Some(if a == 0 { u32::MAX } else { a.trailing_zeros() } as u64),
        S_FLBIT_I32_B32 => Some(if a32 == 0 { u32::MAX } else { a32.leading_zeros() } as u64),
        S_FLBIT_I32_B64 => Some(if a == 0 { u32::MAX } else { a.leading_zeros() } as u64),
        S_FLBIT_I32 => {
            let x = if (a32 as i32) < 0 { !a32 } else { a32 };
            Some(if x == 0 { u32::MAX } else { x.leading_zeros() - 1 } as u64)
        }
        S_SEXT_I32_I8 => Some(a32 as i8 as i32 as u32 as u64),
        S_SEXT_I32_I16 => Some(a32 as i16 as i32 as u32 as u64),
        S_ABS_I32 => Some((a32 as i32).unsigned_abs() as u64),
        S_BITSET0_B32 => Some(dstv & !(1u64 << (a32 & 31))),
        S_BITSET1_B32 => Some(dstv | (1u64 << (a32 & 31))),
        S_BITSET0_B64 => Some(dstv & !(1u64 << (a32 & 63))),
        S_BITSET1_B64 => Some(dstv | (1u64 << (a32 & 63))),
        S_WQM_B32 | S_WQM_B64 => {
            let mut r = 0u64;
            for q in 0..16 {
                if a >> (4 * q) & 0xF != 0 {
                    r |= 0xF << (4 * q);
                }
            }
            Some(r)
        }
        S_AND_SAVEEXEC_B64 | S_OR_SAVEEXEC_B64 | S_XOR_SAVEEXEC_B64 | S_ANDN2_SAVEEXEC_B64 | S_ORN2_SAVEEXEC_B64
        | S_NAND_SAVEEXEC_B64 | S_NOR_SAVEEXEC_B64 | S_XNOR_SAVEEXEC_B64 | S_ANDN1_SAVEEXEC_B64
        | S_ORN1_SAVEEXEC_B64 => {
            let e = w.exec();
            let ne = match inst.op {
                S_AND_SAVEEXEC_B64 => a & e,
                S_OR_SAVEEXEC_B64 => a | e,
                S_XOR_SAVEEXEC_B64 => a ^ e,
                S_ANDN2_SAVEEXEC_B64 => a & !e,
                S_ORN2_SAVEEXEC_B64 => a | !e,
                S_NAND_SAVEEXEC_B64 => !(a & e),
                S_NOR_SAVEEXEC_B64 => !(a | e),
                S_XNOR_SAVEEXEC_B64 => !(a ^ e),
                S_ANDN1_SAVEEXEC_B64 => !a & e,
                _ => !a | e,
            };
            w.set_exec(ne);
            new_scc = Some(ne != 0);
            Some(e)
        }
        S_ANDN1_WREXEC_B64 | S_ANDN2_WREXEC_B64 => {
            let e = w.exec();
            let ne = if inst.op == S_ANDN1_WREXEC_B64 { !a & e } else { a & !e };
            w.set_exec(ne);
            new_scc = Some(ne != 0);
            Some(ne)
        }
        S_QUADMASK_B32 | S_QUADMASK_B64 => {
            let mut r = 0u64;
            for q in 0..16 {
                if a >> (4 * q) & 0xF != 0 {
                    r |= 1 << q;
                }
            }
            Some(r)
        }
        S_GETPC_B64 => Some(next.wrapping_add(env.prog_base())),
        S_SETPC_B64 => {
            pc = a.wrapping_sub(env.prog_base());
            None
        }
        S_SWAPPC_B64 => {
            pc = a.wrapping_sub(env.prog_base());
            Some(next.wrapping_add(env.prog_base()))
        }
        S_MOVK_I32 => Some(sk as u64),
        S_CMOVK_I32 => Some(if scc { sk as u64 } else { dstv }),
        S_ADDK_I32 => {
            let (r, o) = (dstv as u32 as i32).overflowing_add(sk as i32);
            new_scc = Some(o);
            Some(r as u32 as u64)
        }
        S_MULK_I32 => Some((dstv as u32 as i32).wrapping_mul(sk as i32) as u32 as u64),
        S_CMPK_EQ_I32 | S_CMPK_LG_I32 | S_CMPK_GT_I32 | S_CMPK_GE_I32 | S_CMPK_LT_I32 | S_CMPK_LE_I32 => {
            let (x, y) = (dstv as u32 as i32, sk as i32);
            new_scc = Some(match inst.op {
                S_CMPK_EQ_I32 => x == y,
                S_CMPK_LG_I32 => x != y,
                S_CMPK_GT_I32 => x > y,
                S_CMPK_GE_I32 => x >= y,
                S_CMPK_LT_I32 => x < y,
                _ => x <= y,
            });
            None
        }
        S_CMPK_EQ_U32 | S_CMPK_LG_U32 | S_CMPK_GT_U32 | S_CMPK_GE_U32 | S_CMPK_LT_U32 | S_CMPK_LE_U32 => {
            let (x, y) = (dstv as u32, k as u16 as u32);
            new_scc = Some(match inst.op {
                S_CMPK_EQ_U32 => x == y,
                S_CMPK_LG_U32 => x != y,
                S_CMPK_GT_U32 => x > y,
                S_CMPK_GE_U32 => x >= y,
                S_CMPK_LT_U32 => x < y,
                _ => x <= y,
            });
            None
        }
        S_CMP_EQ_I32 | S_CMP_EQ_U32 => cmp(&mut new_scc, a32 == b32),
        S_CMP_LG_I32 | S_CMP_LG_U32 => cmp(&mut new_scc, a32 != b32),
        S_CMP_GT_I32 => cmp(&mut new_scc, (a32 as i32) > (b32 as i32)),
        S_CMP_GE_I32 => cmp(&mut new_scc, (a32 as i32) >= (b32 as i32)),
        S_CMP_LT_I32 => cmp(&mut new_scc, (a32 as i32) < (b32 as i32)),
        S_CMP_LE_I32 => cmp(&mut new_scc, (a32 as i32) <= (b32 as i32)),
        S_CMP_GT_U32 => cmp(&mut new_scc, a32 > b32),
        S_CMP_GE_U32 => cmp(&mut new_scc, a32 >= b32),
        S_CMP_LT_U32 => cmp(&mut new_scc, a32 < b32),
        S_CMP_LE_U32 => cmp(&mut new_scc, a32 <= b32),
        S_CMP_EQ_U64 => cmp(&mut new_scc, a == b),
        S_CMP_LG_U64 => cmp(&mut new_scc, a != b),
        S_BITCMP0_B32 => cmp(&mut new_scc, a32 >> (b32 & 31) & 1 == 0),
        S_BITCMP1_B32 => cmp(&mut new_scc, a32 >> (b32 & 31) & 1 == 1),
        S_BITCMP0_B64 => cmp(&mut new_scc, a >> (b32 & 63) & 1 == 0),
        S_BITCMP1_B64 => cmp(&mut new_scc, a >> (b32 & 63) & 1 == 1),
        S_GETREG_B32 => Some(0),
        S_SETREG_B32 | S_SETREG_IMM32_B32 => None,
        op => return Err(FaultKind::Unsupported(format!("{} (scalar ALU)", op.name()))),
    };
    if let (Some(v), Some((d, ty))) = (r, dst) {
        let is64 = ty.dwords() == 2;
        w.swrite_ty(&d, ty, if is64 { v } else { v as u32 as u64 })?;
        // Logic, shift, bit-count, bfe and not ops set SCC = result != 0.
        if new_scc.is_none() && sets_scc_nonzero(inst.op) {
            new_scc = Some(if is64 { v != 0 } else { v as u32 != 0 });
        }
    }
    if let Some(c) = new_scc {
        w.scc = c;
    }
    w.pc = pc;
    Ok(())
}

fn cmp(scc: &mut Option<bool>, c: bool) -> Option<u64> {
    *scc = Some(c);
    None
}

fn sets_scc_nonzero(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        S_AND_B32
            | S_AND_B64
            | S_OR_B32
            | S_OR_B64
            | S_XOR_B32
            | S_XOR_B64
            | S_ANDN2_B32
            | S_ANDN2_B64
            | S_ORN2_B32
            | S_ORN2_B64
            | S_NAND_B32
            | S_NAND_B64
            | S_NOR_B32
            | S_NOR_B64
            | S_XNOR_B32
            | S_XNOR_B64
            | S_LSHL_B32
            | S_LSHL_B64
            | S_LSHR_B32
            | S_LSHR_B64
            | S_ASHR_I32
            | S_ASHR_I64
            | S_BFE_U32
            | S_BFE_I32
            | S_BFE_U64
            | S_BFE_I64
            | S_NOT_B32
            | S_NOT_B64
            | S_WQM_B32
            | S_WQM_B64
            | S_BCNT0_I32_B32
            | S_BCNT1_I32_B32
            | S_BCNT0_I32_B64
            | S_BCNT1_I32_B64
            | S_QUADMASK_B32
            | S_QUADMASK_B64
            | S_ABS_I32
            | S_ABSDIFF_I32
    )
}
