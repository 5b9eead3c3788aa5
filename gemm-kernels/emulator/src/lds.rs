//! DS (LDS) instructions: address `VGPR[addr] + offset` (ISA.md §3.3), two-address forms
//! with 8-bit offsets scaled by the element size (x64 for ST64), atomics, and the
//! cross-lane `ds_bpermute_b32`/`ds_permute_b32`/`ds_swizzle_b32`. M0 is not used for
//! range checking on gfx9+; accesses beyond the workgroup's LDS are reported and read 0 /
//! drop writes. Misaligned b64/b96/b128 accesses are reported (ISA.md §3.3).

use crate::error::FaultKind;
use crate::report::{Checker, Kind};
use crate::scheduler::{Access, AtomicOp, Conv, Env, OpKind, Order, Space, R};
use crate::valu::regs_of;
use crate::wave::{Wave, LANES};
use gemm_isa::table::Field;
use gemm_isa::{Inst, Op, Operand, RegFile};

fn reg_of(o: Option<Operand>) -> R<gemm_isa::Reg> {
    match o {
        Some(Operand::Reg(r)) => Ok(r),
        o => Err(FaultKind::Unsupported(format!("DS operand {o:?}"))),
    }
}

/// Executes (issues) a DS instruction.
pub fn exec(w: &mut Wave, env: &mut Env, inst: &Inst) -> R<()> {
    use Op::*;
    let name = inst.op.name();
    let exec = w.exec();
    let off0 = inst.mods.offset as u32;
    let off1 = inst.mods.offset1 as u32;
    let addr_op = inst.operand(Field::Addr);
    let d0 = inst.operand(Field::Data0);
    let d1 = inst.operand(Field::Data1);
    let vd = inst.operand(Field::Vdst);
    let mut reads = Vec::new();
    for o in [addr_op, d0, d1].into_iter().flatten() {
        reads.extend(regs_of(&o, 1));
    }
    if let Some(r) = d0.and_then(|o| o.reg()) {
        reads.extend((0..r.count as u16).map(|i| (r.file, r.index + i)));
    }
    env.check_regs(w, &reads, false);
    let addrs: [u32; LANES] = match addr_op {
        Some(o) => {
            let v = w.vread(&o, gemm_isa::Ty::B32)?;
            std::array::from_fn(|l| v[l] as u32)
        }
        None => [0; LANES],
    };
    let lanes: Vec<usize> = (0..LANES).filter(|l| exec >> l & 1 == 1).collect();
    let data = |o: Option<Operand>, k: u16, l: usize| -> R<u32> {
        let r = reg_of(o)?;
        w.vget(r.file, r.index + k, l)
    };
    let dst_regs = |r: &gemm_isa::Reg| (0..r.count as u16).map(|i| (r.file, r.index + i)).collect::<Vec<_>>();

    // Cross-lane ops through the LDS crossbar (no memory).
    if matches!(inst.op, DS_BPERMUTE_B32 | DS_PERMUTE_B32 | DS_SWIZZLE_B32) {
        let r = reg_of(vd)?;
        let mut vals = vec![0u32; LANES];
        match inst.op {
            DS_BPERMUTE_B32 => {
                for &l in &lanes {
                    let src = ((addrs[l].wrapping_add(off0)) / 4) as usize & 63;
                    vals[l] = if exec >> src & 1 == 1 { data(d0, 0, src)? } else { 0 };
                }
            }
            DS_PERMUTE_B32 => {
                for &l in &lanes {
                    let dl = ((addrs[l].wrapping_add(off0)) / 4) as usize & 63;
                    vals[dl] = data(d0, 0, l)?;
                }
            }
            _ => {
                let pat = off0 | (off1 << 8);
                for &l in &lanes {
                    let src = if pat & 0x8000 != 0 {
                        (l & !3) + ((pat as usize >> (2 * (l & 3))) & 3)
                    } else {
                        let and = pat & 0x1F;
                        let or = (pat >> 5) & 0x1F;
                        let xor = (pat >> 10) & 0x1F;
                        (l & !31) + ((((l as u32 & 31) & and) | or) ^ xor) as usize
                    };
                    vals[l] = if exec >> src & 1 == 1 { data(addr_op, 0, src)? } else { 0 };
                }
            }
        }
        let mask = if inst.op == DS_PERMUTE_B32 { u64::MAX } else { exec };
        env.issue(w, Order::Lds, OpKind::RegWrite { file: r.file, index: r.index, mask, vals }, dst_regs(&r));
        return Ok(());
    }
    if inst.op == DS_NOP {
        return Ok(());
    }

    let two = name.contains("read2") || name.contains("write2");
    let st64 = name.contains("st64");
    // gfx950 transpose reads (`ds_read_b64_tr_b4/b8/b16`, `ds_read_b96_tr_b6`): the size
    // is the first width, the element width the second.
    let tr_bits: Option<u8> = name.split_once("_tr_b").and_then(|(_, b)| b.parse().ok());
    let size: u32 = if let Some(b) = tr_bits {
        if b == 6 {
            12
        } else {
            8
        }
    } else if name.ends_with("b128") {
        16
    } else if name.ends_with("b96") {
        12
    } else if name.ends_with("64") || name.contains("_x2") {
        8
    } else if name.contains("8")
        && !name.contains("b128")
        && (name.contains("_u8") || name.contains("_i8") || name.contains("_b8"))
    {
        1
    } else if name.contains("16")
        && (name.contains("_u16") || name.contains("_i16") || name.contains("_b16"))
        && !name.contains("pk_")
    {
        2
    } else {
        4
    };
    let is_read = name.starts_with("ds_read");
    let is_write = name.starts_with("ds_write") && !name.contains("wrxchg");
    let mut acc = Vec::new();
    for &l in &lanes {
        let base = if inst.op == DS_READ_ADDTID_B32 || inst.op == DS_WRITE_ADDTID_B32 {
            w.m0().wrapping_add(4 * l as u32)
        } else {
            addrs[l]
        };
        if two {
            let scale = size * if st64 { 64 } else { 1 };
            for (p, o) in [off0, off1].into_iter().enumerate() {
                let mut a = Access::new(l, u64::from(base.wrapping_add(o * scale)), size as u8);
                a.reg = (p as u32 * size / 4) as u16;
                if is_write {
                    let src = if p == 0 { d0 } else { d1 };
                    for k in 0..size / 4 {
                        a.data[k as usize] = data(src, k as u16, l)?;
                    }
                }
                acc.push(a);
            }
        } else {
            let mut a = Access::new(l, u64::from(base.wrapping_add(off0)), size as u8);
            if !is_read {
                for k in 0..size.div_ceil(4) {
                    a.data[k as usize] = data(d0, k as u16, l)?;
                }
                if name.contains("d16_hi") {
                    a.data[0] >>= 16;
                }
                if name.starts_with("ds_cmpst") {
                    // DS compare-store: data0 is the compare value, data1 the new value.
                    for k in 0..size / 4 {
                        a.cmp[k as usize] = a.data[k as usize];
                        a.data[k as usize] = data(d1, k as u16, l)?;
                    }
                }
            }
            acc.push(a);
        }
    }
    // Alignment checker: b64 needs 8 bytes, b96/b128 16 (LLVM emits them only so aligned).
    if size >= 8 {
        let need = if size >= 12 { 16 } else { 8 };
        if let Some(a) = acc.iter().find(|a| a.addr % need != 0) {
            env.report(
                Checker::Alignment,
                Kind::Misaligned,
                w.id,
                w.pc,
                Some(a.addr),
                None,
                format!("{size}-byte DS access not {need}-byte aligned (lane {})", a.lane),
            );
        }
    }
    let lds_len = env.lds.len() as u64;
    if let Some(a) = acc.iter().find(|a| a.addr + u64::from(a.size) > lds_len) {
        env.report(
            Checker::LdsBounds,
            Kind::OutOfBounds,
            w.id,
            w.pc,
            Some(a.addr),
            None,
            format!("LDS access beyond the workgroup's {lds_len} bytes (lane {})", a.lane),
        );
    }
    if is_read {
        let r = reg_of(vd)?;
        let conv = if let Some(bits) = tr_bits {
            if bits == 6 {
                return Err(FaultKind::Unsupported(format!("{name} (6-bit transpose read)")));
            }
            Conv::Transpose { bits }
        } else if name.contains("d16_hi") {
            Conv::D16Hi { bytes: size as u8, signed: name.contains("_i") }
        } else if name.contains("d16") {
            Conv::D16Lo { bytes: size as u8, signed: name.contains("_i") }
        } else {
            match (size, name.contains("_i")) {
                (1, false) => Conv::U8,
                (1, true) => Conv::I8,
                (2, false) => Conv::U16,
                (2, true) => Conv::I16,
                _ => Conv::Dwords,
            }
        };
        let regs = dst_regs(&r);
        env.issue(w, Order::Lds, OpKind::Load { space: Space::Lds, acc, file: r.file, base: r.index, conv }, regs);
        return Ok(());
    }
    if is_write {
        env.issue(w, Order::Lds, OpKind::Store { space: Space::Lds, acc }, Vec::new());
        return Ok(());
    }
    // Atomics.
    let core = name.trim_start_matches("ds_").replace("_rtn", "");
    let op = atomic_op(&core).ok_or_else(|| FaultKind::Unsupported(format!("{name} (DS)")))?;
    let ret = match vd {
        Some(Operand::Reg(r)) => Some((r.file, r.index)),
        _ => None,
    };
    let regs = vd.map(|o| regs_of(&o, (size / 4) as u8)).unwrap_or_default();
    env.issue(w, Order::Lds, OpKind::Atomic { space: Space::Lds, op, acc, ret, dwords: (size / 4) as u8 }, regs);
    let _ = RegFile::Vgpr;
    Ok(())
}

/// The atomic operation of a mnemonic core like `add_u32`, `cmpst_b32`, `add_f32`.
pub fn atomic_op(core: &str) -> Option<AtomicOp> {
    let (what, ty) = core.rsplit_once('_').unwrap_or((core, ""));
    let what = what.trim_end_matches("_x2");
    Some(match (what, ty) {
        ("add", "f32") => AtomicOp::AddF32,
        ("min", "f32") => AtomicOp::MinF32,
        ("max", "f32") => AtomicOp::MaxF32,
        ("add", "f64") => AtomicOp::AddF64,
        ("min", "f64") => AtomicOp::MinF64,
        ("max", "f64") => AtomicOp::MaxF64,
        ("pk_add", "f16") => AtomicOp::PkAddF16,
        ("pk_add", "bf16") => AtomicOp::PkAddBf16,
        ("add", _) => AtomicOp::Add,
        ("sub", _) => AtomicOp::Sub,
        ("rsub", _) => AtomicOp::Rsub,
        ("inc", _) => AtomicOp::Inc,
        ("dec", _) => AtomicOp::Dec,
        ("min", "i32" | "i64") | ("smin", _) => AtomicOp::Smin,
        ("max", "i32" | "i64") | ("smax", _) => AtomicOp::Smax,
        ("min", _) | ("umin", _) => AtomicOp::Umin,
        ("max", _) | ("umax", _) => AtomicOp::Umax,
        ("and", _) => AtomicOp::And,
        ("or", _) => AtomicOp::Or,
        ("xor", _) => AtomicOp::Xor,
        ("wrxchg", _) | ("swap", _) => AtomicOp::Swap,
        ("cmpst", _) | ("cmpswap", _) => AtomicOp::Cmpswap,
        _ => match core {
            "add" | "add_x2" => AtomicOp::Add,
            "sub" | "sub_x2" => AtomicOp::Sub,
            "swap" | "swap_x2" => AtomicOp::Swap,
            "cmpswap" | "cmpswap_x2" => AtomicOp::Cmpswap,
            "smin" | "smin_x2" => AtomicOp::Smin,
            "umin" | "umin_x2" => AtomicOp::Umin,
            "smax" | "smax_x2" => AtomicOp::Smax,
            "umax" | "umax_x2" => AtomicOp::Umax,
            "and" | "and_x2" => AtomicOp::And,
            "or" | "or_x2" => AtomicOp::Or,
            "xor" | "xor_x2" => AtomicOp::Xor,
            "inc" | "inc_x2" => AtomicOp::Inc,
            "dec" | "dec_x2" => AtomicOp::Dec,
            _ => return None,
        },
    })
}
