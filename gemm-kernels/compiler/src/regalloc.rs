//! Register allocation: linear scan over live intervals of the virtual registers, with
//! intervals that cross a loop boundary (live into the loop header, or read in the loop
//! before being written) stretched over the whole loop, so a value carried around the
//! back edge keeps its register. Where first fit in start order leaves no hole wide enough
//! for a tuple (`bsfp8pp`: 248 VGPRs live at once, and the holes between long-lived tuples
//! pushed the last temporary past 256), the intervals live through the whole loop are placed
//! first, the widest first, then the rest in start order; a kernel the plain order fits keeps
//! its registers. Physical registers the hardware initialises (`s[0:3]`,
//! `v0`) are reserved. Limits (gfx942/gfx950, wave64, one wave per SIMD at most): 102
//! SGPRs (ISA.md §4.5: s0-s101), 512 unified VGPR+AGPR with at most 256 each.

use crate::program::{regs_of, Item, Program, VReg, VIRT_BASE};
use gemm_isa::{Operand, Reg, RegFile};
use std::collections::BTreeMap;

/// Why allocation failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegAllocError {
    #[error("out of {file:?} registers: need more than {limit}")]
    OutOfRegisters { file: RegFile, limit: u32 },
    #[error("virtual register v{0} used before any definition")]
    Undefined(u16),
}

/// Registers used after allocation (one past the highest index of each file).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub sgprs: u32,
    pub vgprs: u32,
    pub agprs: u32,
}

fn fkey(f: RegFile) -> u8 {
    match f {
        RegFile::Sgpr => 0,
        RegFile::Vgpr => 1,
        _ => 2,
    }
}

const RESERVED_S: u16 = 4;
const RESERVED_V: u16 = 1;

fn limit(f: RegFile) -> u16 {
    match f {
        RegFile::Sgpr => 102,
        _ => 256,
    }
}

/// Physical registers for `intervals` (`(start, end, vreg)`), first fit in the order given:
/// `general` keeps every busy interval of a register (any order), else only its last end
/// (start order).
fn place(
    p: &Program,
    intervals: &[(usize, usize, usize)],
    general: bool,
) -> Result<(Vec<Option<u16>>, Usage), RegAllocError> {
    // Per file and physical register: the intervals it is busy (start order: only the last).
    let mut busy: [Vec<Vec<(usize, usize)>>; 3] = [vec![vec![]; 102], vec![vec![]; 256], vec![vec![]; 256]];
    let mut assign: Vec<Option<u16>> = vec![None; p.vregs.len()];
    let mut usage = Usage::default();
    for &(s, e, vi) in intervals {
        let vr = p.vregs[vi];
        let start = match vr.file {
            RegFile::Sgpr => RESERVED_S + p.extra_system_sgprs,
            RegFile::Vgpr => RESERVED_V,
            _ => 0,
        };
        let regs = &mut busy[fkey(vr.file) as usize];
        let free = |r: &Vec<(usize, usize)>| {
            if general {
                r.iter().all(|&(bs, be)| be < s || bs > e)
            } else {
                r.last().is_none_or(|&(_, end)| end < s)
            }
        };
        let mut base = start.next_multiple_of(vr.align as u16);
        while (base as usize + vr.count as usize) <= regs.len()
            && !regs[base as usize..base as usize + vr.count as usize].iter().all(free)
        {
            base += vr.align as u16;
        }
        if base + vr.count as u16 > limit(vr.file) {
            return Err(RegAllocError::OutOfRegisters { file: vr.file, limit: limit(vr.file) as u32 });
        }
        for r in &mut regs[base as usize..base as usize + vr.count as usize] {
            r.push((s, e));
        }
        assign[vi] = Some(base);
        let top = (base + vr.count as u16) as u32;
        match vr.file {
            RegFile::Sgpr => usage.sgprs = usage.sgprs.max(top),
            RegFile::Vgpr => usage.vgprs = usage.vgprs.max(top),
            _ => usage.agprs = usage.agprs.max(top),
        }
    }
    Ok((assign, usage))
}

/// Allocates and rewrites `p` in place.
pub fn allocate(p: &mut Program) -> Result<Usage, RegAllocError> {
    // Map each virtual index to its vreg: per file, offset from VIRT_BASE -> vreg id.
    let mut owner: [Vec<usize>; 3] = Default::default();
    for (id, v) in p.vregs.iter().enumerate() {
        let o = &mut owner[fkey(v.file) as usize];
        let end = (v.vbase - VIRT_BASE + v.count as u16) as usize;
        if o.len() < end {
            o.resize(end, usize::MAX);
        }
        for x in v.vbase - VIRT_BASE..v.vbase - VIRT_BASE + v.count as u16 {
            o[x as usize] = id;
        }
    }
    let find = |_: &[VReg], f: RegFile, idx: u16| -> Option<usize> {
        owner[fkey(f) as usize].get((idx - VIRT_BASE) as usize).copied().filter(|&x| x != usize::MAX)
    };
    let mut first: Vec<Option<usize>> = vec![None; p.vregs.len()];
    let mut last: Vec<usize> = vec![0; p.vregs.len()];
    let mut first_is_read: Vec<bool> = vec![false; p.vregs.len()];
    // Positions of labels for loop ranges.
    let mut label_pos = BTreeMap::new();
    for (i, it) in p.items.iter().enumerate() {
        if let Item::Label(l) = it {
            label_pos.insert(*l, i);
        }
    }
    for (pos, it) in p.items.iter().enumerate() {
        let Item::I(inst) = it else { continue };
        let (reads, _) = crate::program::reads_writes(inst);
        for o in &inst.operands {
            for (f, idx) in regs_of(o) {
                if idx < VIRT_BASE || f == RegFile::Ttmp {
                    continue;
                }
                let vi = find(&p.vregs, f, idx).expect("virtual register exists");
                if first[vi].is_none() {
                    first[vi] = Some(pos);
                    first_is_read[vi] = reads.contains(&(f, idx));
                }
                last[vi] = pos;
            }
        }
    }
    let loop_pos: Vec<(usize, usize)> = p.loops.iter().map(|(a, b)| (label_pos[a], label_pos[b])).collect();
    let mut intervals: Vec<(usize, usize, usize)> = vec![];
    for vi in 0..p.vregs.len() {
        let Some(f) = first[vi] else { continue };
        let (mut s, mut e) = (f, last[vi]);
        for &(ls, le) in &loop_pos {
            let overlaps = s < le && e > ls;
            let live_in = s < ls && e > ls;
            let carried = s > ls && s < le && first_is_read[vi];
            if overlaps && (live_in || carried) {
                s = s.min(ls);
                e = e.max(le);
            }
        }
        if first_is_read[vi] && !loop_pos.iter().any(|&(ls, le)| f > ls && f < le) {
            return Err(RegAllocError::Undefined(p.vregs[vi].vbase));
        }
        intervals.push((s, e, vi));
    }
    intervals.sort();
    let (assign, mut usage) = match place(p, &intervals, false) {
        Ok(x) => x,
        // First fit in start order leaves holes between long-lived tuples that a later tuple
        // may not fit: then the intervals live through the whole loop go first, the widest
        // first (a kernel that fits the plain order keeps its registers).
        Err(e) => {
            let Some(&(ls, le)) = loop_pos.first() else { return Err(e) };
            let mut order = intervals.clone();
            order.sort_by_key(|&(s, e, vi)| {
                let long = s <= ls && e >= le;
                (!long, if long { 255 - p.vregs[vi].count as usize } else { 0 }, s, e, vi)
            });
            place(p, &order, true)?
        }
    };
    usage.sgprs = usage.sgprs.max((RESERVED_S + p.extra_system_sgprs) as u32);
    usage.vgprs = usage.vgprs.max(RESERVED_V as u32);
    if usage.vgprs.next_multiple_of(4) + usage.agprs > 512 {
        return Err(RegAllocError::OutOfRegisters { file: RegFile::Agpr, limit: 512 });
    }
    // Rewrite.
    let vregs = p.vregs.clone();
    for it in p.items.iter_mut() {
        let Item::I(inst) = it else { continue };
        for o in inst.operands.iter_mut() {
            if let Operand::Reg(r) = o {
                if r.index >= VIRT_BASE && r.file != RegFile::Ttmp {
                    let vi = find(&vregs, r.file, r.index).expect("virtual register exists");
                    let vr = vregs[vi];
                    let phys = assign[vi].ok_or(RegAllocError::Undefined(vr.vbase))?;
                    *r = Reg { file: r.file, index: phys + (r.index - vr.vbase), count: r.count };
                }
            }
        }
    }
    Ok(usage)
}
