//! The LDS tile layout, the lane -> address maps of every DS instruction the lowering
//! emits, and the bank model used to count conflicts (ARCH.md "Memory system": gfx942
//! 32 banks x 4 B = 128 B/clk, gfx950 64 banks x 4 B = 256 B/clk).
//!
//! Bank model: a DS instruction of `w` bytes per lane is serviced in phases of
//! `line / w` consecutive lanes (`line` = banks * 4 bytes); a phase costs as many cycles
//! as the largest number of *distinct* dwords any one bank must deliver (equal dwords
//! broadcast). Conflict cycles = total cycles - ideal cycles.
//!
//! Layout: each operand tile is `rows x KT` elements, row-major with K contiguous (the
//! MFMA reads K-runs per lane, ISA.md §1.1), A's tile first then B's; the 16-byte chunks
//! of a row are XOR-swizzled with [`Swizzle`].

use crate::ir::{Arch, Kernel, KernelConfig, Operand, Swizzle};

/// Bytes the LDS delivers per clock (one "line" of the bank model).
pub fn line_bytes(arch: Arch) -> u32 {
    banks(arch) * 4
}

/// Banks of 4 bytes.
pub fn banks(arch: Arch) -> u32 {
    match arch {
        Arch::Gfx942 => 32,
        Arch::Gfx950 => 64,
    }
}

/// Bytes per LDS tile row.
pub fn row_bytes(c: &KernelConfig) -> u32 {
    c.tile.2 * c.ab_bytes()
}

/// Byte offset of an operand tile inside one LDS buffer.
pub fn tile_base(c: &KernelConfig, op: Operand) -> u32 {
    match op {
        Operand::A => 0,
        Operand::B => c.tile.0 * row_bytes(c),
    }
}

/// `(row, byte within row)` that lane `lane` of a wave reads with the `h`-th
/// `ds_read_b128` of MFMA block 0 (32x32 shapes): row `lane % 32`, lane group
/// `g = lane / 32` takes the K half `[g*KT/2, (g+1)*KT/2)` in 16-byte pieces.
pub fn read_lane(c: &KernelConfig, lane: u32, h: u32) -> (u32, u32) {
    let g = lane / 32;
    (lane % 32, g * row_bytes(c) / 2 + h * 16)
}

/// `ds_read_b128` per MFMA block and K tile.
pub fn reads_per_block(c: &KernelConfig) -> u32 {
    row_bytes(c) / 2 / 16
}

/// Geometry of a global->LDS copy of one operand.
///
/// K-contiguous operands: consecutive lanes take consecutive 8-element vectors along K
/// (one 16-byte `ds_write_b128` each, conflict-free with the swizzle). M/N-contiguous
/// operands are transposed on the way into LDS (8 `ds_write_b16` per vector), so there
/// consecutive lanes take consecutive K columns instead: the 32 lanes of a half-wave
/// then write one LDS row, and only the two half-waves share banks (1 extra cycle per
/// write instead of 15 with the lane order of the K-contiguous case).
#[derive(Clone, Copy, Debug)]
pub struct CopyGeom {
    /// Elements along the contiguous storage dimension of the tile.
    pub lc: u32,
    /// Elements along the strided one.
    pub ls: u32,
    /// 8-element vectors per thread.
    pub per_thread: u32,
    /// K-contiguous: strided-dimension step between a thread's vectors. Otherwise: the
    /// contiguous-dimension step (elements) between a thread's vectors.
    pub step: u32,
    pub k_contiguous: bool,
}

pub fn copy_geom(c: &KernelConfig, op: Operand) -> CopyGeom {
    let rows = c.tile_rows(op);
    let kc = c.k_contiguous(op);
    let (lc, ls) = if kc { (c.tile.2, rows) } else { (rows, c.tile.2) };
    let per_thread = lc * ls / 8 / c.threads();
    let step = if kc { c.threads() / (lc / 8) } else { c.threads() / ls * 8 };
    CopyGeom { lc, ls, per_thread, step, k_contiguous: kc }
}

/// For thread `t`, vector `p`, element `e` (0..8): `(row, k)` in the operand's LDS tile.
pub fn copy_elem(g: &CopyGeom, t: u32, p: u32, e: u32) -> (u32, u32) {
    if g.k_contiguous {
        let per_line = g.lc / 8;
        (t / per_line + p * g.step, (t % per_line) * 8 + e)
    } else {
        ((t / g.ls) * 8 + p * g.step + e, t % g.ls)
    }
}

/// One DS instruction's per-lane byte addresses (64 lanes) and width.
#[derive(Clone, Debug)]
pub struct DsAccess {
    pub width: u32,
    pub addrs: Vec<u32>,
}

/// Conflict cycles of one DS instruction under the bank model.
pub fn conflict_cycles(arch: Arch, a: &DsAccess) -> u32 {
    let line = line_bytes(arch);
    let lanes_per_phase = (line / a.width).clamp(1, 64) as usize;
    let nb = banks(arch);
    let mut extra = 0;
    for phase in a.addrs.chunks(lanes_per_phase) {
        let mut per_bank: Vec<Vec<u32>> = vec![Vec::new(); nb as usize];
        for &addr in phase {
            for d in 0..a.width.div_ceil(4) {
                let dw = addr / 4 + d;
                let b = &mut per_bank[(dw % nb) as usize];
                if !b.contains(&dw) {
                    b.push(dw);
                }
            }
        }
        let worst = per_bank.iter().map(|b| b.len() as u32).max().unwrap_or(0);
        let ideal = (phase.len() as u32 * a.width).div_ceil(line).max(1);
        extra += worst.saturating_sub(ideal);
    }
    extra
}

/// The DS accesses one wave (`wave`) makes per K tile: MFMA fragment reads of both
/// operands, then the staging writes of both operands.
pub fn k_step_accesses(k: &Kernel, wave: u32) -> Vec<DsAccess> {
    let c = &k.config;
    let sw = k.swizzle;
    let rb = row_bytes(c);
    let mut out = read_accesses(k, wave);
    for op in [Operand::A, Operand::B] {
        let g = copy_geom(c, op);
        for p in 0..g.per_thread {
            let elems: Vec<u32> = if g.k_contiguous { vec![0] } else { (0..8).collect() };
            for e in elems {
                let addrs = (0..64)
                    .map(|lane| {
                        let (r, kk) = copy_elem(&g, wave * 64 + lane, p, e);
                        tile_base(c, op) + sw.byte_offset(r, kk * c.ab_bytes(), rb)
                    })
                    .collect();
                out.push(DsAccess { width: if g.k_contiguous { 16 } else { 2 }, addrs });
            }
        }
    }
    out
}

/// The MFMA fragment reads of one wave per K tile.
pub fn read_accesses(k: &Kernel, wave: u32) -> Vec<DsAccess> {
    let c = &k.config;
    let sw = k.swizzle;
    let rb = row_bytes(c);
    let mut out = vec![];
    let (wm, wn) = (wave % 2, wave / 2);
    for op in [Operand::A, Operand::B] {
        let wrow = if op == Operand::A { wm } else { wn } * (c.tile_rows(op) / 2);
        for blk in 0..(c.tile_rows(op) / 2 / 32) {
            for h in 0..reads_per_block(c) {
                let addrs = (0..64)
                    .map(|lane| {
                        let (r, lb) = read_lane(c, lane, h);
                        tile_base(c, op) + sw.byte_offset(wrow + blk * 32 + r, lb, rb)
                    })
                    .collect();
                out.push(DsAccess { width: 16, addrs });
            }
        }
    }
    out
}

/// Bank-conflict cycles of the fragment reads only, worst wave.
pub fn read_conflicts(k: &Kernel) -> u32 {
    (0..k.config.waves)
        .map(|w| read_accesses(k, w).iter().map(|a| conflict_cycles(k.config.arch, a)).sum())
        .max()
        .unwrap_or(0)
}

/// Bank-conflict cycles per K step (reads and writes), worst wave.
pub fn k_step_conflicts(k: &Kernel) -> (u32, u32) {
    let n_reads = (2 * (k.config.tile.0 / 64) * reads_per_block(&k.config)) as usize;
    let (mut r, mut w) = (0, 0);
    for wave in 0..k.config.waves {
        let acc = k_step_accesses(k, wave);
        let c: Vec<u32> = acc.iter().map(|a| conflict_cycles(k.config.arch, a)).collect();
        r = r.max(c[..n_reads].iter().sum());
        w = w.max(c[n_reads..].iter().sum());
    }
    (r, w)
}

/// The swizzle candidate for a row width: XOR the chunk with the row's index among the
/// rows that share one bank line.
pub fn swizzle_for(arch: Arch, row_bytes: u32) -> Option<Swizzle> {
    let line = line_bytes(arch);
    if !row_bytes.is_multiple_of(16) || row_bytes > line || !line.is_multiple_of(row_bytes) {
        return None;
    }
    Some(Swizzle { rows_per_line: line / row_bytes, chunks_per_row: row_bytes / 16 })
}
