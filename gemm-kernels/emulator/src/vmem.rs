//! Vector memory (MUBUF with buffer resources and LDS-DMA, GLOBAL, FLAT, SCRATCH), scalar memory
//! (SMEM), and the completion (`perform`) of every queued memory operation.
//!
//! MUBUF addressing and range checks follow ISA.md §2.2-2.3 (raw buffers checked per
//! dword against NUM_RECORDS, soffset outside the check, OOB loads return 0, OOB stores
//! are dropped); LDS-DMA follows §2.4 (LDS address `M0 + inst_offset + lane*4`, or
//! `lane*16` for the gfx950 12/16-byte forms; completion counted by vmcnt).

use crate::error::FaultKind;
use crate::memory::BufferRsrc;
use crate::race::AccessRec;
use crate::scheduler::{race_report, Access, AtomicOp, Conv, Env, MemOp, OpKind, Order, Space, R};
use crate::valu::regs_of;
use crate::wave::{Wave, LANES, SHARED_BASE_HI};
use gemm_isa::table::{flags, Field};
use gemm_isa::{Format, Inst, Op, Operand, RegFile, Ty};
use half::{bf16, f16};

/// M0 bits that form the LDS-DMA base (README "Choices": 18 bits covers 160 KiB).
const M0_LDS_MASK: u32 = 0x3FFFF;

fn mem_size(name: &str) -> Option<(u32, Conv)> {
    let base = name.trim_end_matches("_d16_hi").trim_end_matches("_d16");
    let d16 = name.ends_with("_d16");
    let d16hi = name.ends_with("_d16_hi");
    let (bytes, signed) = if base.ends_with("ubyte") || base.ends_with("byte") && !base.ends_with("sbyte") {
        (1, false)
    } else if base.ends_with("sbyte") {
        (1, true)
    } else if base.ends_with("ushort") || base.ends_with("short") && !base.ends_with("sshort") {
        (2, false)
    } else if base.ends_with("sshort") {
        (2, true)
    } else if base.ends_with("dwordx4") {
        (16, false)
    } else if base.ends_with("dwordx3") {
        (12, false)
    } else if base.ends_with("dwordx2") {
        (8, false)
    } else if base.ends_with("dword") {
        (4, false)
    } else {
        return None;
    };
    let conv = if d16hi {
        Conv::D16Hi { bytes: bytes as u8, signed }
    } else if d16 {
        Conv::D16Lo { bytes: bytes as u8, signed }
    } else {
        match (bytes, signed) {
            (1, false) => Conv::U8,
            (1, true) => Conv::I8,
            (2, false) => Conv::U16,
            (2, true) => Conv::I16,
            _ => Conv::Dwords,
        }
    };
    Some((bytes, conv))
}

fn reg(o: Option<Operand>) -> R<gemm_isa::Reg> {
    match o {
        Some(Operand::Reg(r)) => Ok(r),
        o => Err(FaultKind::Unsupported(format!("memory operand {o:?}"))),
    }
}

/// Issues a MUBUF, GLOBAL or FLAT instruction.
pub fn exec(w: &mut Wave, env: &mut Env, inst: &Inst) -> R<()> {
    let def = inst.op.def();
    let name = def.name;
    if matches!(inst.op, Op::BUFFER_WBL2 | Op::BUFFER_INV) {
        return Ok(());
    }
    let exec = w.exec();
    let vaddr = inst.operand(Field::Vaddr);
    let vdata = inst.operand(Field::Vdata).or_else(|| inst.operand(Field::Data));
    let vdst = inst.operand(Field::Vdst);
    let mut reads = Vec::new();
    for o in [
        vaddr,
        inst.operand(Field::Data),
        inst.operand(Field::Saddr),
        inst.operand(Field::Srsrc),
        inst.operand(Field::Soffset),
    ]
    .into_iter()
    .flatten()
    {
        reads.extend(regs_of(&o, 1));
    }
    let atomic = def.has(flags::ATOMIC);
    let is_store = name.contains("_store_");
    if (is_store || atomic) && def.format == Format::Mubuf {
        if let Some(o) = vdata {
            reads.extend(regs_of(&o, 1));
        }
    }
    env.check_regs(w, &reads, false);
    let to_lds = inst.mods.lds || name.starts_with("global_load_lds");
    let core = name.split_once('_').map(|x| x.1).unwrap_or(name);
    let size_name = core.trim_start_matches("load_lds_").trim_start_matches("load_").trim_start_matches("store_");
    let (size, conv) = if atomic {
        let x2 = name.ends_with("_x2") || name.ends_with("f64");
        (if x2 { 8 } else { 4 }, Conv::Dwords)
    } else {
        mem_size(size_name).ok_or_else(|| FaultKind::Unsupported(format!("{name} (vector memory)")))?
    };
    let lanes: Vec<usize> = (0..LANES).filter(|l| exec >> l & 1 == 1).collect();
    let mut acc: Vec<Access> = Vec::with_capacity(lanes.len());
    let mut space = Space::Global;
    match def.format {
        Format::Mubuf => {
            let rs = reg(inst.operand(Field::Srsrc))?;
            let words = [0, 1, 2, 3].map(|k| w.s.get(rs.index as usize + k).copied().unwrap_or(0));
            let v = BufferRsrc::from_words(words);
            let soff = match inst.operand(Field::Soffset) {
                Some(o) => w.sread(&o, Ty::B32, 0)?,
                None => 0,
            };
            let (idxen, offen) = (inst.mods.idxen, inst.mods.offen);
            let structured = idxen || v.add_tid;
            let va = match vaddr {
                Some(Operand::Reg(r)) => Some(r),
                _ => None,
            };
            for &l in &lanes {
                let vr = |k: u16| -> R<u32> {
                    match va {
                        Some(r) => w.vget(r.file, r.index + k, l),
                        None => Ok(0),
                    }
                };
                let index = if idxen { vr(0)? } else { 0 }.wrapping_add(if v.add_tid { l as u32 } else { 0 });
                let offset = (inst.mods.offset as u32).wrapping_add(if offen { vr(idxen as u16)? } else { 0 });
                let mut addr = v
                    .base
                    .wrapping_add(u64::from(soff))
                    .wrapping_add(u64::from(index) * u64::from(v.stride))
                    .wrapping_add(u64::from(offset));
                if size >= 4 {
                    addr &= !3;
                }
                let mut a = Access::new(l, addr, size as u8);
                for dw in 0..size.div_ceil(4) {
                    if !v.in_range(structured, index, offset.saturating_add(4 * dw)) {
                        a.oob |= 1 << dw;
                    }
                }
                acc.push(a);
            }
        }
        Format::Global | Format::Flat => {
            let va = reg(vaddr)?;
            let saddr = match inst.operand(Field::Saddr) {
                Some(o @ (Operand::Reg(_) | Operand::Special(_))) => Some(w.sread_ty(&o, Ty::B64)?),
                _ => None,
            };
            for &l in &lanes {
                let addr = match saddr {
                    Some(base) => base.wrapping_add(u64::from(w.vget(va.file, va.index, l)?)),
                    None => {
                        u64::from(w.vget(va.file, va.index, l)?) | (u64::from(w.vget(va.file, va.index + 1, l)?) << 32)
                    }
                }
                .wrapping_add(inst.mods.offset as i64 as u64);
                acc.push(Access::new(l, addr, size as u8));
            }
            // FLAT addresses inside the LDS aperture go to LDS (README "Choices").
            if def.format == Format::Flat && acc.iter().any(|a| (a.addr >> 32) as u32 == SHARED_BASE_HI) {
                if acc.iter().all(|a| (a.addr >> 32) as u32 == SHARED_BASE_HI) {
                    space = Space::Lds;
                    for a in acc.iter_mut() {
                        a.addr &= 0xFFFF_FFFF;
                    }
                } else {
                    return Err(FaultKind::Unsupported("FLAT access mixing LDS and global lanes".into()));
                }
            }
        }
        Format::Scratch => {
            // Private offset = vaddr (when SVE) + saddr (one SGPR) + the 13-bit signed
            // instruction offset (ISA.md §4.4), into the lane's own segment.
            let seg = w
                .scratch
                .ok_or_else(|| FaultKind::Unsupported(format!("{name} in a kernel without a private segment")))?;
            let soff = match inst.operand(Field::Saddr) {
                Some(o @ (Operand::Reg(_) | Operand::Special(_))) => w.sread(&o, Ty::B32, 0)?,
                _ => 0,
            };
            let va = match vaddr {
                Some(Operand::Reg(r)) => Some(r),
                _ => None,
            };
            for &l in &lanes {
                let v = match va {
                    Some(r) => w.vget(r.file, r.index, l)?,
                    None => 0,
                };
                let off = v.wrapping_add(soff).wrapping_add(inst.mods.offset as u32);
                if u64::from(off) + u64::from(size) > u64::from(seg.lane_bytes) {
                    return Err(FaultKind::PrivateSegment {
                        lane: l as u8,
                        offset: u64::from(off),
                        len: size,
                        write: is_store,
                        private_bytes: seg.lane_bytes,
                    });
                }
                let addr = seg.base + l as u64 * u64::from(seg.lane_bytes) + u64::from(off);
                acc.push(Access::new(l, addr, size as u8));
            }
        }
        _ => return Err(FaultKind::Unsupported(name.to_string())),
    }

    if to_lds {
        // LDS-DMA: one dword (or 16 bytes for the wide gfx950 forms) per lane.
        let stride = if size > 4 { 16 } else { 4 };
        let base = (w.m0() & M0_LDS_MASK).wrapping_add(inst.mods.offset as u32);
        for a in acc.iter_mut() {
            a.lds = base.wrapping_add(stride * u32::from(a.lane));
        }
        let lds_len = env.lds.len() as u64;
        if let Some(a) = acc.iter().find(|a| u64::from(a.lds) + u64::from(size) > lds_len) {
            let l = a.lds;
            env.report(
                crate::report::Checker::LdsBounds,
                crate::report::Kind::OutOfBounds,
                w.id,
                w.pc,
                Some(u64::from(l)),
                None,
                format!("LDS-DMA destination beyond the workgroup's {lds_len} bytes"),
            );
        }
        env.issue(w, Order::VmLoad, OpKind::LdsDma { acc }, Vec::new());
        return Ok(());
    }
    if atomic {
        let core = name.split_once("_atomic_").map(|x| x.1).unwrap_or("");
        let op = crate::lds::atomic_op(core).ok_or_else(|| FaultKind::Unsupported(format!("{name} (atomic)")))?;
        let src = reg(vdata)?;
        for a in acc.iter_mut() {
            let l = a.lane as usize;
            let n = size / 4;
            if op == AtomicOp::Cmpswap {
                for k in 0..n {
                    a.data[k as usize] = w.vget(src.file, src.index + k as u16, l)?;
                    a.cmp[k as usize] = w.vget(src.file, src.index + (n + k) as u16, l)?;
                }
            } else {
                for k in 0..n {
                    a.data[k as usize] = w.vget(src.file, src.index + k as u16, l)?;
                }
            }
        }
        let ret = if inst.mods.sc0 {
            match def.format {
                Format::Mubuf => Some(src),
                _ => Some(reg(vdst)?),
            }
        } else {
            None
        };
        let regs = ret.map(|r| regs_of(&Operand::Reg(r), (size / 4) as u8)).unwrap_or_default();
        let order = if ret.is_some() { Order::VmLoad } else { Order::VmStore };
        env.issue(
            w,
            order,
            OpKind::Atomic { space, op, acc, ret: ret.map(|r| (r.file, r.index)), dwords: (size / 4) as u8 },
            regs,
        );
        return Ok(());
    }
    if is_store {
        let src = reg(vdata)?;
        for a in acc.iter_mut() {
            for k in 0..size.div_ceil(4) {
                a.data[k as usize] = w.vget(src.file, src.index + k as u16, a.lane as usize)?;
            }
            if name.ends_with("_d16_hi") {
                a.data[0] >>= 16;
            }
        }
        env.issue(w, Order::VmStore, OpKind::Store { space, acc }, Vec::new());
        return Ok(());
    }
    let dst = reg(if def.format == Format::Mubuf { vdata } else { vdst })?;
    let regs: Vec<(RegFile, u16)> = (0..size.div_ceil(4) as u16).map(|i| (dst.file, dst.index + i)).collect();
    env.check_regs_as(w, &regs, true, Some(Order::VmLoad));
    env.issue(w, Order::VmLoad, OpKind::Load { space, acc, file: dst.file, base: dst.index, conv }, regs);
    Ok(())
}

/// Issues a scalar memory instruction.
pub fn smem(w: &mut Wave, env: &mut Env, inst: &Inst) -> R<()> {
    let name = inst.op.name();
    if matches!(inst.op, Op::S_DCACHE_INV | Op::S_DCACHE_WB | Op::S_DCACHE_INV_VOL | Op::S_DCACHE_WB_VOL) {
        return Ok(());
    }
    let sdata = inst.operand(Field::Sdata);
    if matches!(inst.op, Op::S_MEMTIME | Op::S_MEMREALTIME) {
        // Written at issue (README "Choices"): the value is only a clock.
        let now = env.now;
        let d = sdata.ok_or_else(|| FaultKind::Unsupported(name.into()))?;
        return w.swrite_ty(&d, Ty::B64, now);
    }
    let sbase = reg(inst.operand(Field::Sbase))?;
    let mut reads = regs_of(&Operand::Reg(sbase), 2);
    let offset: u64 = match inst.operand(Field::SmemOffset) {
        Some(Operand::Imm(i)) => i as u64,
        Some(o) => {
            reads.extend(regs_of(&o, 1));
            u64::from(w.sread(&o, Ty::B32, 0)?).wrapping_add(inst.mods.offset as i64 as u64)
        }
        None => inst.mods.offset as i64 as u64,
    };
    env.check_regs(w, &reads, false);
    let dwords: u8 = if name.ends_with("x16") {
        16
    } else if name.ends_with("x8") {
        8
    } else if name.ends_with("x4") {
        4
    } else if name.ends_with("x2") {
        2
    } else {
        1
    };
    let buffer = name.starts_with("s_buffer_");
    let base_code = sbase.index as usize;
    let lo = w.s[base_code];
    let hi = w.s[base_code + 1];
    let addr = if buffer {
        let v = BufferRsrc::from_words([lo, hi, w.s[base_code + 2], w.s[base_code + 3]]);
        v.base.wrapping_add(offset)
    } else {
        (u64::from(lo) | (u64::from(hi) << 32)).wrapping_add(offset)
    } & !3;
    let d = reg(sdata)?;
    if name.starts_with("s_store") || name.starts_with("s_buffer_store") {
        let mut a = Access::new(0, addr, 4 * dwords);
        for k in 0..dwords as usize {
            a.data[k.min(3)] = w.s[d.index as usize + k];
        }
        env.issue(w, Order::Smem, OpKind::Store { space: Space::Global, acc: vec![a] }, Vec::new());
        return Ok(());
    }
    let regs = (0..dwords as u16).map(|i| (RegFile::Sgpr, d.index + i)).collect::<Vec<_>>();
    env.check_regs(w, &regs, true);
    env.issue(w, Order::Smem, OpKind::SLoad { addr, dwords, base: d.index }, regs);
    Ok(())
}

fn lds_read(env: &Env, addr: u64, out: &mut [u8]) {
    for (i, b) in out.iter_mut().enumerate() {
        *b = env.lds.get(addr as usize + i).copied().unwrap_or(0);
    }
}

fn lds_write(env: &mut Env, addr: u64, bytes: &[u8]) {
    for (i, b) in bytes.iter().enumerate() {
        if let Some(x) = env.lds.get_mut(addr as usize + i) {
            *x = *b;
        }
    }
}

fn race(env: &mut Env, w: &Wave, op: &MemOp, addr: u64, len: u32, write: bool, dma: bool) {
    let Some(r) = env.race.as_mut() else { return };
    let Some(vc) = op.vc.as_ref() else { return };
    let atomic = matches!(op.kind, OpKind::Atomic { .. });
    let rec = AccessRec { wave: w.id as u16, seq: op.seq, pc: op.pc, dma, atomic };
    let found = r.access(rec, vc, addr as u32, len, write);
    for (a, c) in found {
        race_report(env, w.id, op.pc, a, c, dma && write);
    }
}

fn mem_fault(addr: u64, len: u64, write: bool) -> FaultKind {
    FaultKind::Memory { addr, len, write }
}

/// Reads an access's bytes (OOB dwords read as 0).
fn read_access(env: &mut Env, w: &Wave, op: &MemOp, space: Space, a: &Access) -> R<[u8; 16]> {
    let mut buf = [0u8; 16];
    let n = a.size as usize;
    match space {
        Space::Lds => {
            lds_read(env, a.addr, &mut buf[..n]);
            race(env, w, op, a.addr, n as u32, false, false);
        }
        Space::Global => {
            for dw in 0..n.div_ceil(4) {
                if a.oob >> dw & 1 == 1 {
                    continue;
                }
                let s = 4 * dw;
                let e = (s + 4).min(n);
                env.mem
                    .read(a.addr + s as u64, &mut buf[s..e])
                    .ok_or_else(|| mem_fault(a.addr + s as u64, (e - s) as u64, false))?;
            }
        }
    }
    Ok(buf)
}

/// Completes a gfx950 transpose read (`ds_read_b64_tr_b4/b8/b16`): every lane fetches
/// 64 bits at its own address, then each group of 16 lanes exchanges elements so that
/// the group's data, read as an `n x 16` tile (`n = 64/bits` rows, lane `s` holding row
/// `s / g`, elements `n*(s % g)..` with `g = 16/n`), comes back one column per lane:
/// lane `o` receives as its element `e` element `o % n` of the data fetched by lane
/// `g*e + o/n`. For b16 that is Modular's description of `ds_read_tr16_b64` ("each
/// 16-lane row loads a 4x16 tile ... each lane gets a column", `ds_read_tr16_b64_row`),
/// for b8 "two interleaved 8x8 byte transposes" (Mojo's `ds_read_tr8_b64` docs).
/// Triton's gfx950 GEMMs (`tests/triton.rs`), which feed their MFMAs with the b8 and b16
/// forms, agree with the reference GEMM only under this reading. A lane that is not
/// active contributes zeros.
#[allow(clippy::too_many_arguments)]
fn transpose_b64(
    w: &mut Wave,
    env: &mut Env,
    op: &MemOp,
    space: Space,
    acc: &[Access],
    file: RegFile,
    base: u16,
    bits: u8,
) -> R<()> {
    let mut fetched = [0u64; LANES];
    for a in acc {
        let buf = read_access(env, w, op, space, a)?;
        fetched[a.lane as usize] = u64::from_le_bytes(buf[..8].try_into().unwrap_or([0; 8]));
    }
    let bits = u32::from(bits);
    let n = 64 / bits as usize;
    let g = 16 / n;
    let mask = (1u64 << bits) - 1;
    for a in acc {
        let o = a.lane as usize;
        let (group, ol) = (o - o % 16, o % 16);
        let mut v = 0u64;
        for e in 0..n {
            let src = fetched[group + g * e + ol / n];
            let elem = (src >> (bits as usize * (ol % n))) & mask;
            v |= elem << (bits as usize * e);
        }
        w.vset(file, base, o, v as u32)?;
        w.vset(file, base + 1, o, (v >> 32) as u32)?;
    }
    Ok(())
}

/// Completes a memory operation: moves the data.
pub fn perform(w: &mut Wave, env: &mut Env, op: &MemOp) -> R<()> {
    match &op.kind {
        OpKind::Load { space, acc, file, base, conv: Conv::Transpose { bits } } => {
            transpose_b64(w, env, op, *space, acc, *file, *base, *bits)?;
        }
        OpKind::Load { space, acc, file, base, conv } => {
            for a in acc {
                let buf = read_access(env, w, op, *space, a)?;
                let l = a.lane as usize;
                let dw = |i: usize| u32::from_le_bytes([buf[4 * i], buf[4 * i + 1], buf[4 * i + 2], buf[4 * i + 3]]);
                let r = base + a.reg;
                let small = |bytes: u8, signed: bool| -> u32 {
                    match (bytes, signed) {
                        (1, false) => buf[0] as u32,
                        (1, true) => buf[0] as i8 as i32 as u32,
                        (_, false) => u16::from_le_bytes([buf[0], buf[1]]) as u32,
                        (_, true) => i16::from_le_bytes([buf[0], buf[1]]) as i32 as u32,
                    }
                };
                match conv {
                    Conv::Dwords => {
                        for i in 0..(a.size as usize).div_ceil(4) {
                            w.vset(*file, r + i as u16, l, dw(i))?;
                        }
                    }
                    Conv::U8 => w.vset(*file, r, l, small(1, false))?,
                    Conv::I8 => w.vset(*file, r, l, small(1, true))?,
                    Conv::U16 => w.vset(*file, r, l, small(2, false))?,
                    Conv::I16 => w.vset(*file, r, l, small(2, true))?,
                    Conv::D16Lo { bytes, signed } => {
                        let old = w.vget(*file, r, l)?;
                        w.vset(*file, r, l, (old & 0xFFFF_0000) | (small(*bytes, *signed) & 0xFFFF))?;
                    }
                    Conv::D16Hi { bytes, signed } => {
                        let old = w.vget(*file, r, l)?;
                        w.vset(*file, r, l, (old & 0xFFFF) | (small(*bytes, *signed) << 16))?;
                    }
                    // Handled by `transpose_b64` (the arm above).
                    Conv::Transpose { .. } => {}
                }
            }
        }
        OpKind::Store { space, acc } => {
            for a in acc {
                let mut bytes = [0u8; 64];
                let n = a.size as usize;
                if op.order == Order::Smem {
                    // Scalar store: data dwords were captured in order.
                    for k in 0..n.div_ceil(4).min(4) {
                        bytes[4 * k..4 * k + 4].copy_from_slice(&a.data[k].to_le_bytes());
                    }
                } else {
                    for k in 0..n.div_ceil(4) {
                        bytes[4 * k..4 * k + 4].copy_from_slice(&a.data[k].to_le_bytes());
                    }
                }
                match space {
                    Space::Lds => {
                        race(env, w, op, a.addr, n as u32, true, false);
                        lds_write(env, a.addr, &bytes[..n]);
                    }
                    Space::Global => {
                        for dw in 0..n.div_ceil(4) {
                            if a.oob >> dw & 1 == 1 {
                                continue;
                            }
                            let s = 4 * dw;
                            let e = (s + 4).min(n);
                            env.mem
                                .write(a.addr + s as u64, &bytes[s..e])
                                .ok_or_else(|| mem_fault(a.addr + s as u64, (e - s) as u64, true))?;
                        }
                    }
                }
            }
        }
        OpKind::Atomic { space, op: aop, acc, ret, dwords } => {
            for a in acc {
                let n = 4 * *dwords as usize;
                if a.oob != 0 {
                    // Atomics are all-or-nothing (ISA.md §2.3): OOB does nothing, returns 0.
                    if let Some((f, r)) = ret {
                        for k in 0..*dwords as u16 {
                            w.vset(*f, r + k, a.lane as usize, 0)?;
                        }
                    }
                    continue;
                }
                let mut old = [0u8; 8];
                let mut apply = |m: &mut [u8]| {
                    old[..n].copy_from_slice(m);
                    let new = atomic(*aop, m, a);
                    m.copy_from_slice(&new[..n]);
                };
                match space {
                    Space::Global => {
                        env.mem.update(a.addr, n, apply).ok_or_else(|| mem_fault(a.addr, n as u64, true))?
                    }
                    Space::Lds => {
                        race(env, w, op, a.addr, n as u32, true, false);
                        let s = a.addr as usize;
                        if s + n <= env.lds.len() {
                            apply(&mut env.lds[s..s + n]);
                        }
                    }
                }
                if let Some((f, r)) = ret {
                    for k in 0..*dwords as usize {
                        let v = u32::from_le_bytes([old[4 * k], old[4 * k + 1], old[4 * k + 2], old[4 * k + 3]]);
                        w.vset(*f, r + k as u16, a.lane as usize, v)?;
                    }
                }
            }
        }
        OpKind::LdsDma { acc } => {
            for a in acc {
                let buf = read_access(env, w, op, Space::Global, a)?;
                // Sub-dword sources are zero-extended to a dword in LDS (ISA.md §2.4).
                let n = (a.size as usize).max(4);
                let mut bytes = [0u8; 16];
                match a.size {
                    1 => bytes[0] = buf[0],
                    2 => bytes[..2].copy_from_slice(&buf[..2]),
                    _ => bytes[..n].copy_from_slice(&buf[..n]),
                }
                race(env, w, op, u64::from(a.lds), n as u32, true, true);
                lds_write(env, u64::from(a.lds), &bytes[..n]);
            }
        }
        OpKind::SLoad { addr, dwords, base } => {
            let mut buf = vec![0u8; 4 * *dwords as usize];
            env.mem.read(*addr, &mut buf).ok_or_else(|| mem_fault(*addr, buf.len() as u64, false))?;
            for k in 0..*dwords as usize {
                let v = u32::from_le_bytes([buf[4 * k], buf[4 * k + 1], buf[4 * k + 2], buf[4 * k + 3]]);
                let c = *base as usize + k;
                if c < 128 {
                    w.s[c] = v;
                }
            }
        }
        OpKind::RegWrite { file, index, mask, vals } => {
            for (l, v) in vals.iter().enumerate() {
                if mask >> l & 1 == 1 {
                    w.vset(*file, *index, l, *v)?;
                }
            }
        }
    }
    Ok(())
}

fn atomic(op: AtomicOp, m: &[u8], a: &Access) -> [u8; 8] {
    let n = m.len();
    let mut out = [0u8; 8];
    if n == 8 {
        let x = u64::from_le_bytes(m.try_into().unwrap_or([0; 8]));
        let y = u64::from(a.data[0]) | (u64::from(a.data[1]) << 32);
        let c = u64::from(a.cmp[0]) | (u64::from(a.cmp[1]) << 32);
        let r = match op {
            AtomicOp::Add => x.wrapping_add(y),
            AtomicOp::Sub => x.wrapping_sub(y),
            AtomicOp::Rsub => y.wrapping_sub(x),
            AtomicOp::Swap => y,
            AtomicOp::Cmpswap => {
                if x == c {
                    y
                } else {
                    x
                }
            }
            AtomicOp::Smin => (x as i64).min(y as i64) as u64,
            AtomicOp::Umin => x.min(y),
            AtomicOp::Smax => (x as i64).max(y as i64) as u64,
            AtomicOp::Umax => x.max(y),
            AtomicOp::And => x & y,
            AtomicOp::Or => x | y,
            AtomicOp::Xor => x ^ y,
            AtomicOp::Inc => {
                if x >= y {
                    0
                } else {
                    x + 1
                }
            }
            AtomicOp::Dec => {
                if x == 0 || x > y {
                    y
                } else {
                    x - 1
                }
            }
            AtomicOp::AddF64 => (f64::from_bits(x) + f64::from_bits(y)).to_bits(),
            AtomicOp::MinF64 => f64::from_bits(x).min(f64::from_bits(y)).to_bits(),
            AtomicOp::MaxF64 => f64::from_bits(x).max(f64::from_bits(y)).to_bits(),
            _ => x,
        };
        out.copy_from_slice(&r.to_le_bytes());
        return out;
    }
    let x = u32::from_le_bytes([m[0], m[1], m[2], m[3]]);
    let y = a.data[0];
    let r = match op {
        AtomicOp::Add => x.wrapping_add(y),
        AtomicOp::Sub => x.wrapping_sub(y),
        AtomicOp::Rsub => y.wrapping_sub(x),
        AtomicOp::Swap => y,
        AtomicOp::Cmpswap => {
            // MUBUF/FLAT cmpswap: data = {src, cmp}; DS cmpst: data0 = cmp, data1 = src.
            if x == a.cmp[0] {
                y
            } else {
                x
            }
        }
        AtomicOp::Smin => (x as i32).min(y as i32) as u32,
        AtomicOp::Umin => x.min(y),
        AtomicOp::Smax => (x as i32).max(y as i32) as u32,
        AtomicOp::Umax => x.max(y),
        AtomicOp::And => x & y,
        AtomicOp::Or => x | y,
        AtomicOp::Xor => x ^ y,
        AtomicOp::Inc => {
            if x >= y {
                0
            } else {
                x + 1
            }
        }
        AtomicOp::Dec => {
            if x == 0 || x > y {
                y
            } else {
                x - 1
            }
        }
        AtomicOp::AddF32 => (f32::from_bits(x) + f32::from_bits(y)).to_bits(),
        AtomicOp::MinF32 => f32::from_bits(x).min(f32::from_bits(y)).to_bits(),
        AtomicOp::MaxF32 => f32::from_bits(x).max(f32::from_bits(y)).to_bits(),
        AtomicOp::PkAddF16 => {
            let lo = f16::from_bits(x as u16).to_f32() + f16::from_bits(y as u16).to_f32();
            let hi = f16::from_bits((x >> 16) as u16).to_f32() + f16::from_bits((y >> 16) as u16).to_f32();
            f16::from_f32(lo).to_bits() as u32 | ((f16::from_f32(hi).to_bits() as u32) << 16)
        }
        AtomicOp::PkAddBf16 => {
            let lo = bf16::from_bits(x as u16).to_f32() + bf16::from_bits(y as u16).to_f32();
            let hi = bf16::from_bits((x >> 16) as u16).to_f32() + bf16::from_bits((y >> 16) as u16).to_f32();
            bf16::from_f32(lo).to_bits() as u32 | ((bf16::from_f32(hi).to_bits() as u32) << 16)
        }
        _ => x,
    };
    out[..4].copy_from_slice(&r.to_le_bytes());
    out
}
