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

use crate::ir::{Align, Arch, DmaPolicy, Kernel, KernelConfig, Operand, Swizzle};

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

/// Whether `op`'s LDS tile is M/N-major ([`DmaPolicy::Transposing`]): a gfx950 16-bit
/// (16x16 or 32x32 MFMAs) or fp8 (32x32 MFMAs) operand contiguous along M/N, `v8`, whose
/// tile rows (one K each, `rows * bytes` bytes) fill at least a bank line. Its copies then
/// move 16-byte vectors of global rows as they are (LDS-DMA, or `ds_write_b128` from
/// staging), with no transpose, and the MFMA fragments are read with `ds_read_b64_tr_b16`
/// or `ds_read_b64_tr_b8` ([`tr_read_lane`]). Not for the quadrant schedule (its second
/// B-half addresses assume K-major rows).
pub fn mn_major(c: &KernelConfig, op: Operand) -> bool {
    c.direct_to_lds == DmaPolicy::Transposing
        && c.arch == Arch::Gfx950
        && match c.ab_bytes() {
            2 => matches!(c.mfma.m, 16 | 32),
            1 => c.mfma.m == 32,
            _ => false,
        }
        && !c.k_contiguous(op)
        && c.align == Align::Vec8
        && c.tile_rows(op) * c.ab_bytes() >= line_bytes(c.arch)
        && c.schedule != crate::schedule::Schedule::Quadrant
}

/// K rows one `ds_read_b64_tr_b*` of an M/N-major tile covers ([`tr_read_lane`]): the 8
/// bytes a lane fetches hold that many elements (4 for 16-bit, 8 for fp8).
pub fn tr_rows(c: &KernelConfig) -> u32 {
    8 / c.ab_bytes()
}

/// Bytes per LDS tile row of `op`: `KT` elements (K-major), or `MT`/`NT` ([`mn_major`]).
pub fn op_row_bytes(c: &KernelConfig, op: Operand) -> u32 {
    if mn_major(c, op) {
        c.tile_rows(op) * c.ab_bytes()
    } else {
        row_bytes(c)
    }
}

/// The byte XOR of row `row` (one K) of an M/N-major tile ([`mn_major`]): it moves whole
/// 32-byte slots (bits 5-7) inside the row, so the eight 32-byte runs one 32-lane phase of
/// a `ds_read_b64_tr_b16` reads ([`tr_read_lane`]: four K rows per 16-lane group) land on
/// eight different slots of the 256-byte bank line. 16x16 MFMAs: the two groups of a phase
/// read K ranges `KT/4` apart, slot = `row % 4` plus 4 for odd K ranges; 32x32 MFMAs: the
/// two groups read adjacent 32-byte runs of the same rows, slot = `2 * (row % 4)`. fp8
/// (`ds_read_b64_tr_b8`, 32x32 MFMAs): a phase reads eight K rows, 32 bytes of each (the
/// two groups' 16 M indices side by side), slot = `row % 8`. The XOR stays within the line
/// (rows are at least 256 bytes), so LDS-DMA writes keep whole lines.
pub fn mn_xor(c: &KernelConfig, row: u32) -> u32 {
    let slot = if c.ab_bytes() == 1 {
        row % 8
    } else if c.mfma.m == 16 {
        (row % 4) | (((row / (c.tile.2 / c.lane_groups())) % 2) << 2)
    } else {
        2 * (row % 4)
    };
    32 * slot
}

/// Byte offset, inside one LDS buffer, of byte `byte` of row `row` of `op`'s tile: the
/// kernel's swizzle for K-major tiles, [`mn_xor`] for M/N-major ones.
pub fn offset(k: &Kernel, op: Operand, row: u32, byte: u32) -> u32 {
    let c = &k.config;
    tile_base(c, op)
        + if mn_major(c, op) {
            row * op_row_bytes(c, op) + (byte ^ mn_xor(c, row))
        } else {
            k.swizzle.byte_offset(row, byte, row_bytes(c))
        }
}

/// `(row, byte within row)` that lane `lane` reads with the `ds_read_b64_tr_b16` (16-bit)
/// or `ds_read_b64_tr_b8` (fp8) `j` (0, 1) of piece `h` of MFMA block 0 of an M/N-major
/// tile ([`mn_major`]). A 16-lane group reads an `n x 16` tile (`n` = [`tr_rows`]: 4 rows
/// of 16-bit or 8 rows of fp8 elements, each row fetched by `16 / n` lanes of 8 bytes) and
/// lane `o` of it receives column `o`: its `n` elements are rows `r..r+n` (one K each) of
/// one M/N index. So the group's lanes `(16/n)e..(16/n)(e+1)` address row `r+e`, `n`
/// elements each, and for the fragment of [`read_lane`] (lane group `g` holds the 16
/// bytes of K `g*KT/G + (16/b)h ..` of its row `lane % M`, `b` bytes per element),
/// `r = g*KT/G + (16/b)h + nj`: the two reads fill the low and high 8 bytes of the piece.
pub fn tr_read_lane(c: &KernelConfig, lane: u32, h: u32, j: u32) -> (u32, u32) {
    let n = tr_rows(c);
    let lpr = 16 / n;
    let s = lane % 16;
    let g = lane / c.mfma.m;
    let sub = (lane % c.mfma.m) / 16;
    let row = g * (c.tile.2 / c.lane_groups()) + (16 / c.ab_bytes()) * h + n * j + s / lpr;
    (row, (16 * sub + n * (s % lpr)) * c.ab_bytes())
}

/// Byte offset of an operand tile inside one LDS buffer.
pub fn tile_base(c: &KernelConfig, op: Operand) -> u32 {
    match op {
        Operand::A => 0,
        Operand::B => c.tile.0 * row_bytes(c),
    }
}

/// `(row, byte within row)` that lane `lane` of a wave reads with the `h`-th
/// `ds_read_b128` of MFMA block 0: row `lane % M` (M = the MFMA's rows), lane group
/// `g = lane / M` (of `64 / M`) takes the K range `[g*KT/G, (g+1)*KT/G)` in 16-byte pieces.
/// The MFMA sums over K in whatever order both operands agree on, so giving each lane
/// group a contiguous K range (instead of the interleaved order of ISA.md §1.1's layout)
/// keeps each lane's fragment one contiguous row run: whole `ds_read_b128`s.
pub fn read_lane(c: &KernelConfig, lane: u32, h: u32) -> (u32, u32) {
    let g = lane / c.mfma.m;
    (lane % c.mfma.m, g * group_bytes(c) + h * 16)
}

/// Bytes of one lane group's K range in a row of A: the K the loop consumes per tile
/// ([`KernelConfig::k_step`]; [`group_bytes_of`] B).
pub fn group_bytes(c: &KernelConfig) -> u32 {
    group_bytes_of(c, Operand::A)
}

/// Bytes of one lane group's K range in a row of `op` ([`KernelConfig::k_step_of`]: an MX
/// operand narrower than its row's bytes leaves the rest of the row unread).
pub fn group_bytes_of(c: &KernelConfig, op: Operand) -> u32 {
    c.k_step_of(op) * c.ab_bytes() / c.lane_groups()
}

/// `ds_read_b128` per MFMA block and K tile: the wider operand's (a narrower MX operand's
/// extra reads land in its unread row bytes, each lane group within its own 64 bytes).
pub fn reads_per_block(c: &KernelConfig) -> u32 {
    group_bytes_of(c, Operand::A).max(group_bytes_of(c, Operand::B)) / 16
}

/// Geometry of a global->LDS copy of one operand.
///
/// A vector is 16 bytes: `v` = 8 16-bit or 4 f32 elements.
/// K-contiguous operands: consecutive lanes take consecutive vectors along K
/// (one 16-byte `ds_write_b128` each, conflict-free with the swizzle). M/N-contiguous
/// operands are transposed on the way into LDS (`v` element writes per vector), so there
/// consecutive lanes take consecutive K columns instead: the 32 lanes of a half-wave
/// then write one LDS row, and only the two half-waves share banks (1 extra cycle per
/// write instead of 15 with the lane order of the K-contiguous case).
///
/// fp8 operands contiguous along M/N ([`CopyGeom::kgroup`] > 1): one byte per element would
/// take 16 `ds_write_b8` per vector, so a thread loads `kgroup` (2 or 4) vectors at
/// consecutive K of the same 16 rows and transposes them in registers (`v_perm_b32`) into
/// one 2- or 4-byte K run per row: 16 `ds_write_b16` / `ds_write_b32` per group of
/// vectors. Consecutive lanes then take consecutive K groups of a row.
#[derive(Clone, Copy, Debug)]
pub struct CopyGeom {
    /// Elements along the contiguous storage dimension of the tile.
    pub lc: u32,
    /// Elements along the strided one.
    pub ls: u32,
    /// 16-byte vectors per thread.
    pub per_thread: u32,
    /// Elements per vector.
    pub v: u32,
    /// K-contiguous: strided-dimension step between a thread's vectors. Otherwise: the
    /// contiguous-dimension step (elements) between a thread's vectors.
    pub step: u32,
    pub k_contiguous: bool,
    /// Vectors a thread takes at consecutive K of the same rows and transposes together
    /// (fp8 operands contiguous along M/N into a K-major tile: 2 or 4; otherwise 1). Vector `p` lies at K
    /// `+ p % kgroup`, in row group `p / kgroup`.
    pub kgroup: u32,
    /// Transposed fp8 groups whose write phase spans two rows 16 apart (the two halves of
    /// a wave, `lanes_k` = 32): those rows share banks (16 rows of a 64- or 128-byte row are
    /// a whole number of bank lines), so the second half writes row `e ^ 1` where the
    /// first writes row `e` ([`write_row`]): the pair then fills both halves of a line.
    pub swap_halves: bool,
    /// Vectors go to LDS whole, along the tile row (K-contiguous operands, and M/N-major
    /// tiles, [`mn_major`]): row = strided index, bytes = contiguous index. Otherwise the
    /// M/N-contiguous vector is transposed into a K-major tile.
    pub direct: bool,
}

impl CopyGeom {
    /// Threads along K in one pass (each takes `kgroup` consecutive K).
    pub fn lanes_k(&self) -> u32 {
        self.ls / self.kgroup
    }
    /// Groups of `kgroup` vectors per thread.
    pub fn groups(&self) -> u32 {
        self.per_thread / self.kgroup
    }
}

pub fn copy_geom(c: &KernelConfig, op: Operand) -> CopyGeom {
    let rows = c.tile_rows(op);
    let kc = c.k_contiguous(op);
    let direct = kc || mn_major(c, op);
    let (lc, ls) = if kc { (c.tile.2, rows) } else { (rows, c.tile.2) };
    let v = c.vec_elems();
    let per_thread = lc * ls / v / c.threads();
    let kgroup = if !direct && c.ab_bytes() == 1 { per_thread.clamp(1, 4) } else { 1 };
    let step = if direct { c.threads() / (lc / v) } else { c.threads() * kgroup / ls * v };
    // Lanes per bank-model phase of the group's writes, and the rows they cover.
    let phase = (line_bytes(c.arch) / (kgroup * c.ab_bytes())).min(64);
    let lanes_k = ls / kgroup;
    let swap_halves = kgroup > 1 && lanes_k < phase && phase / lanes_k == 2;
    CopyGeom { lc, ls, per_thread, v, step, k_contiguous: kc, kgroup, swap_halves, direct }
}

/// The LDS `(row, k)` that write instruction `e` (0..16) of thread `t` stores for the group
/// of vector `p` of a transposed fp8 operand: the group's first K and row `e`, or `e ^ 1`
/// in the second half of a phase ([`CopyGeom::swap_halves`]).
pub fn write_row(g: &CopyGeom, t: u32, p: u32, e: u32) -> (u32, u32) {
    let j = if g.swap_halves { (t / g.lanes_k()) & 1 } else { 0 };
    copy_elem(g, t, p - p % g.kgroup, e ^ j)
}

/// For thread `t`, vector `p`, element `e` (0..v): `(row, element within the row)` in the
/// operand's LDS tile (`(row, k)` K-major, `(k, m or n)` M/N-major).
pub fn copy_elem(g: &CopyGeom, t: u32, p: u32, e: u32) -> (u32, u32) {
    if g.direct {
        let per_line = g.lc / g.v;
        (t / per_line + p * g.step, (t % per_line) * g.v + e)
    } else {
        let lk = g.lanes_k();
        ((t / lk) * g.v + (p / g.kgroup) * g.step + e, (t % lk) * g.kgroup + p % g.kgroup)
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
    let mut dws: Vec<(u32, u32)> = Vec::with_capacity(256);
    for phase in a.addrs.chunks(lanes_per_phase) {
        dws.clear();
        for &addr in phase {
            for d in 0..a.width.div_ceil(4) {
                let dw = addr / 4 + d;
                dws.push((dw % nb, dw));
            }
        }
        dws.sort_unstable();
        dws.dedup();
        // Distinct dwords per bank: runs of equal banks in the sorted list.
        let (mut worst, mut run, mut prev) = (0u32, 0u32, u32::MAX);
        for &(b, _) in &dws {
            run = if b == prev { run + 1 } else { 1 };
            prev = b;
            worst = worst.max(run);
        }
        let ideal = (phase.len() as u32 * a.width).div_ceil(line).max(1);
        extra += worst.saturating_sub(ideal);
    }
    extra
}

/// The DS accesses one wave (`wave`) makes per K tile: MFMA fragment reads of both
/// operands, then the staging writes of both operands.
pub fn k_step_accesses(k: &Kernel, wave: u32) -> Vec<DsAccess> {
    let c = &k.config;
    let mut out = read_accesses(k, wave);
    for (x, op) in [Operand::A, Operand::B].into_iter().enumerate() {
        // LDS-DMA writes are lane-linear, whole lines per phase: no DS-pipe conflicts.
        if k.copy_paths.get(x) == Some(&crate::passes::buffer_ops::CopyPath::DirectToLds) {
            continue;
        }
        let g = copy_geom(c, op);
        // Transposed fp8 groups write one K run of `kgroup` bytes per row and group.
        for p in (0..g.per_thread).step_by(g.kgroup as usize) {
            let elems: Vec<u32> = if g.direct { vec![0] } else { (0..g.v).collect() };
            for e in elems {
                let addrs = (0..64)
                    .map(|lane| {
                        let t = wave * 64 + lane;
                        let (r, kk) = if g.kgroup > 1 { write_row(&g, t, p, e) } else { copy_elem(&g, t, p, e) };
                        offset(k, op, r, kk * c.ab_bytes())
                    })
                    .collect();
                let width = if g.direct { 16 } else { c.ab_bytes() * g.kgroup };
                out.push(DsAccess { width, addrs });
            }
        }
    }
    out
}

/// The wave's position `(wm, wn)` in the wave grid (wave index `wm + WM * wn`).
pub fn wave_pos(c: &KernelConfig, wave: u32) -> (u32, u32) {
    (wave % c.wave_grid.0, wave / c.wave_grid.0)
}

/// The MFMA fragment reads of one wave per K tile.
pub fn read_accesses(k: &Kernel, wave: u32) -> Vec<DsAccess> {
    let c = &k.config;
    let sw = k.swizzle;
    let rb = row_bytes(c);
    let mut out = vec![];
    let (wm, wn) = wave_pos(c, wave);
    for op in [Operand::A, Operand::B] {
        let wrow = if op == Operand::A { wm } else { wn } * c.wave_rows(op);
        if mn_major(c, op) {
            for blk in 0..c.blocks(op) {
                for h in 0..reads_per_block(c) {
                    for j in 0..2 {
                        let addrs = (0..64)
                            .map(|lane| {
                                let (r, b) = tr_read_lane(c, lane, h, j);
                                offset(k, op, r, (wrow + blk * c.mfma.m) * c.ab_bytes() + b)
                            })
                            .collect();
                        out.push(DsAccess { width: 8, addrs });
                    }
                }
            }
            continue;
        }
        for blk in 0..c.blocks(op) {
            for h in 0..reads_per_block(c) {
                let addrs = (0..64)
                    .map(|lane| {
                        let (r, lb) = read_lane(c, lane, h);
                        tile_base(c, op) + sw.byte_offset(wrow + blk * c.mfma.m + r, lb, rb)
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
    let n_reads = read_accesses(k, 0).len();
    let (mut r, mut w) = (0, 0);
    for wave in 0..k.config.waves {
        let acc = k_step_accesses(k, wave);
        let c: Vec<u32> = acc.iter().map(|a| conflict_cycles(k.config.arch, a)).collect();
        r = r.max(c[..n_reads].iter().sum());
        w = w.max(c[n_reads..].iter().sum());
    }
    (r, w)
}

/// The swizzle that XORs a row's chunks with its index among the rows of one bank line
/// (rows no wider than a line): `xor = row chunks`, `shift = chunks per line`.
pub fn swizzle_for(arch: Arch, row_bytes: u32) -> Option<Swizzle> {
    let line = line_bytes(arch);
    if !row_bytes.is_multiple_of(16) || row_bytes > line || !line.is_multiple_of(row_bytes) {
        return None;
    }
    Some(Swizzle { xor: row_bytes / 16, shift: line / 16 })
}

/// Every swizzle the pass considers, [`swizzle_for`] first: `xor` in 2..=16 chunks and
/// `shift` from `xor` to 64 chunks, powers of two. The swizzle pass scores them with the
/// bank model.
pub fn swizzle_candidates(arch: Arch, row_bytes: u32) -> Vec<Swizzle> {
    let mut out: Vec<Swizzle> = swizzle_for(arch, row_bytes).into_iter().collect();
    if !row_bytes.is_multiple_of(16) {
        return out;
    }
    for xor in [2, 4, 8, 16] {
        let mut shift = xor;
        while shift <= 64 {
            let s = Swizzle { xor, shift };
            if !out.contains(&s) {
                out.push(s);
            }
            shift *= 2;
        }
    }
    out
}
