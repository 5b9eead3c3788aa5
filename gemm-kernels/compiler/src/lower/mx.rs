//! MX kernels ([`crate::ir::BlockScale::Mx`], gfx950): the tiled kernels with OCP MX block
//! scales applied by `v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4` (ISA.md §1.2; LLVM's
//! VOP3PX form: a `v_mfma_ld_scale_b32` prefix naming one scale VGPR per operand and the
//! byte of it each lane uses).
//!
//! The data path is the fp8 kernels': operands are carried as bytes (K, lda, ldb and the K
//! tile in bytes of the packed rows), so copies, LDS layout, swizzle and schedules are
//! unchanged. A lane group of an MFMA block reads one contiguous K range of the tile
//! (`lds::read_lane`: group `g` of `G` takes bytes `[g*KT/G, (g+1)*KT/G)`), in steps of
//! `R = 32` bytes: an fp8 MFMA takes one step (its lane's 32 K values = one MX block of 32
//! bytes), an fp4 step feeds two MFMAs (16 bytes = 32 fp4 values = one block each). So the
//! blocks a lane needs in a tile are consecutive: `KT/G/B` of them from block `g*KT/G/B`
//! (`B` = bytes per block).
//!
//! Scales: per operand and MFMA block, each lane loads its row's scale bytes of the whole
//! tile (`KT/B` = 4 or 8 bytes: one `buffer_load_dword`/`_dwordx2` at `row*lds + tile*ts`,
//! `lds` and the tile stride `ts` multiples of 4: row-major scales have `ts = KT/B`; the
//! K-tiled layout, `lds = KT/B` and `ts = KT/B * rows`, puts the tile's scales of 32
//! consecutive rows in one 128-byte line) and, just before the tile's MFMAs, shifts them right by its
//! group's first block so that the block of step `st`, half `p` is byte `st*R/B + p` of the
//! first dword, a static `op_sel`. Two scale sets follow the two LDS buffers: the set of the
//! tile in buffer `cur` is shifted at the start of its body (its load was issued two
//! bodies earlier, so the wait costs nothing), used by its MFMAs, and reloaded at the end of
//! the body with the tile that will next sit in buffer `cur` (`cnt` + 2 in processing order:
//! the last, partial K tile first, then tiles 0, 1, ...). The last tile's set is loaded in
//! the setup with its bytes of blocks at and past `K/B` cleared (row padding may hold the
//! E8M0 NaN; a zero scale times the zero data the K guard loaded gives 0).
//!
//! The slim ping-pong (`mxpp`: the `fp8pp` tile, 256x256x128 bytes, 8 waves, LDS-DMA): the
//! MFMAs read their step's dwords of the slim fragments, an fp4 step's two halves go out
//! half by half over the blocks (no MFMA waits for the one before it). What the timing model
//! showed binding at MXFP4 8192^3 (one workgroup per CU, so nothing overlaps its edges), and
//! what answers it:
//! * the scale loads: each wave loading its rows' scales holds 12 KiB of TCP lines per tile
//!   (32 KiB in flight per CU) beside 64 KiB of data, and they queue behind the other
//!   group's copies. MXFP4's scales are staged through LDS instead ([`staged`]): one LDS-DMA
//!   dword per lane and operand copies the workgroup's 4 KiB beside the data, each lane reads
//!   its group's dword of each block after the barrier that publishes the tile (no shift, one
//!   register set); the last tile's scales are loaded, masked and written in the prologue
//!   (4646 -> 5220 TFLOP/s);
//! * the epilogue: fp8's per-row/column scale vectors are left out ([`no_scale_vectors`]:
//!   their loads waited for every store before them) and a block's register quads are stored
//!   in pairs (`lower.rs` `paired_stores`: half the stores and TCP tag lookups), 5249 -> 5649 (pairing
//!   further, 16 columns of 64 bytes per store, changed nothing: the drain is then bound by
//!   the write bandwidth);
//! * the prologue issues both operands' tail loads and the scales' before any LDS write
//!   (5681 -> 5752 TFLOP/s, 88% of the fp4 ceiling).
//!
//! MXFP8 on the same schedule keeps the register-loaded scales (its one dword per row is
//! shared by both lane groups, so the staged layout does not apply): 3044 TFLOP/s at 8192^3.

use super::{log2, L};
use crate::ir::Operand;
use crate::kernel_args as ka;
use crate::program::{sub, whole};
use crate::schedule::Schedule;
use gemm_isa::operand::{int, sr};
use gemm_isa::{Inst, Op, Operand as O, Reg, RegFile};

/// Bytes of one lane's step through its K range: one fp8 MFMA operand (8 dwords).
const STEP_BYTES: u32 = 32;

/// The scale streams of an MX kernel.
pub(super) struct MxScales {
    /// Per operand: the scale tensor's buffer resource.
    srd: [Reg; 2],
    /// Per operand: the lane's row's first scale byte in the wave's first MFMA block,
    /// `row * lds` (a VGPR), and per block the bytes to the block's rows, `blk * M * lds`
    /// (SGPRs: added to the tile offset at each load, so the streams cost one VGPR each).
    voff: [Reg; 2],
    blk_off: [Vec<Reg>; 2],
    /// Per set (the LDS buffer its tile sits in), operand and block: the tile's scale bytes.
    sets: [[Vec<Reg>; 2]; 2],
    /// Bits that bring this lane group's first block to byte 0.
    shift: Reg,
    /// SGPRs: the byte offsets of the next tile to load in A's and B's scales.
    next: [Reg; 2],
    /// SGPRs: bytes from one K tile's scales to the next (`gsa`, `gsb`).
    tstride: [Reg; 2],
    /// Dwords of one tile's scales (1 or 2).
    dwords: u32,
    /// The set the MFMAs being emitted read.
    pub cur: usize,
    /// The scales staged through LDS ([`staged`]): one register set of its own (`sets` empty).
    staged: Option<Staged>,
}

/// LDS-staged scales ([`staged`]): each K tile's scales of the workgroup's rows (one dword
/// per row and lane group: the group's four blocks) copied by LDS-DMA beside the tile's data
/// (one `buffer_load_dword ... lds` per operand and wave, lane `i` of the workgroup owning
/// dword `i % G` of tile row `i / G`, so that a copy reads whole lines of K-tiled scales),
/// two buffers following the data's; after the barrier that publishes the tile every lane
/// reads its group's dword of each of its blocks (`ds_read_b32`, no shift). (A layout with a
/// lane's blocks together, one `ds_read_b128`, makes each copy gather four half lines: the
/// timing model put it at 4749 TFLOP/s against 5220 with per-block reads.)
struct Staged {
    /// Per operand: this lane's slot, `row * lds + 4 * dword` (the tile offset is added
    /// per copy, into the VGPR: the range check covers the VGPR offset only, ISA.md §2.3).
    slot: [Reg; 2],
    /// SGPR: LDS address of this wave's first slot in scale buffer 0 (M0 of its copies).
    m0: Reg,
    /// Per operand: LDS address of this lane's row of its wave's first block, buffer 0.
    raddr: [Reg; 2],
    /// Per operand: the scale registers, one dword per block of the wave.
    regs: [Reg; 2],
    /// The last tile's scales loaded in the setup and still to write: data, mask, LDS address.
    tail: Vec<(Reg, Reg, Reg)>,
}

impl L<'_> {
    /// The MX scale streams: resources, per-lane offsets, the first two tiles' sets (the
    /// last K tile masked), after `setup_tiles`.
    pub(super) fn mx_setup(&mut self) {
        let c = *self.c();
        let Some(bb) = c.mx_block_bytes() else { return };
        let tile_blocks = c.mx_tile_blocks().expect("MX kernel");
        let dwords = tile_blocks.div_ceil(4);
        // bscale_a (2) bscale_b (2) ldsa ldsb gsa gsb
        let bs = self.p.vreg(RegFile::Sgpr, 8);
        self.i(Op::S_LOAD_DWORDX8, &[whole(bs), sr(0, 2), O::Imm(ka::OFF_BSCALE as i64)]);
        let (m, n, k) = (self.arg(6), self.arg(7), self.arg(8));
        let (nblocks, tail) = (self.sv(), self.sv());
        if bb.is_power_of_two() {
            self.i(Op::S_LSHR_B32, &[whole(nblocks), k, int(log2(bb))]);
        } else {
            // fp6: K bytes are whole 24-byte blocks.
            let kr = self.sv();
            self.i(Op::S_MOV_B32, &[whole(kr), k]);
            div_pow2_times_3(self, nblocks, kr, bb / 3);
        }
        // Blocks of the last K tile: the spans end there.
        self.i(Op::S_LSHL_B32, &[whole(tail), whole(self.cnt), int(log2(tile_blocks))]);
        self.i(Op::S_SUB_U32, &[whole(tail), whole(nblocks), whole(tail)]);
        let mut srd = [self.oob; 2];
        let mut voff = [self.oob; 2];
        let mut blk_off: [Vec<Reg>; 2] = [vec![], vec![]];
        for (x, op) in [Operand::A, Operand::B].into_iter().enumerate() {
            let (lo, hi, lds) = (sub(bs, 2 * x as u16, 1), sub(bs, 2 * x as u16 + 1, 1), sub(bs, 4 + x as u16, 1));
            let rows = if x == 0 { m } else { n };
            srd[x] = self.tiled_srd(lo, hi, rows, lds, sub(bs, 6 + x as u16, 1), whole(tail));
            let (origin, w) = if x == 0 { (self.m0, self.wm) } else { (self.n0, self.wn) };
            let row = self.vv();
            let kw = self.k3(c.wave_rows(op));
            self.i(Op::V_MAD_U32_U24, &[whole(row), whole(w), kw, whole(self.lrow)]);
            self.i(Op::V_ADD_U32, &[whole(row), whole(origin), whole(row)]);
            voff[x] = self.vv();
            self.i(Op::V_MUL_LO_U32, &[whole(voff[x]), lds, whole(row)]);
            for blk in 0..c.blocks(op) {
                let o = self.sv();
                self.i(Op::S_MUL_I32, &[whole(o), lds, int((blk * c.mfma.m) as i64)]);
                blk_off[x].push(o);
            }
        }
        let per_group = tile_blocks / c.lane_groups();
        let shift = self.vv();
        self.i(Op::V_LSHLREV_B32, &[whole(shift), int(log2(8 * per_group)), whole(self.lgrp)]);
        let staged_now = staged(&c);
        let mut sets: [[Vec<Reg>; 2]; 2] = Default::default();
        if !staged_now {
            for set in &mut sets {
                for (x, op) in [Operand::A, Operand::B].into_iter().enumerate() {
                    set[x] = (0..c.blocks(op)).map(|_| self.p.vreg(RegFile::Vgpr, dwords as u8)).collect();
                }
            }
        }
        let next = [self.sv(), self.sv()];
        let tstride = [sub(bs, 6, 1), sub(bs, 7, 1)].map(|g| {
            let r = self.sv();
            self.i(Op::S_MOV_B32, &[whole(r), g]);
            r
        });
        self.mx =
            Some(super::mx::MxScales { srd, voff, blk_off, sets, shift, next, tstride, dwords, cur: 0, staged: None });
        // The last K tile (`cnt` tiles in), its blocks past `nblocks` masked.
        for x in 0..2 {
            self.i(Op::S_MUL_I32, &[whole(next[x]), whole(self.cnt), whole(tstride[x])]);
        }
        if !staged_now {
            // Set 0: the last tile.
            self.mx_load(0);
        }
        // K = 0 leaves no valid block: a 63-bit cut keeps bit 0 alone (a finite scale of
        // 2^-127 or 2^-126 times the zeros the K guard loaded), where 64 would wrap to no cut.
        let cut = self.sv();
        self.i(Op::S_SUB_U32, &[whole(cut), int(8), whole(tail)]);
        self.i(Op::S_LSHL_B32, &[whole(cut), whole(cut), int(3)]);
        self.i(Op::S_MIN_U32, &[whole(cut), whole(cut), int(63)]);
        // A 64-bit shift for one dword too.
        let mask = self.p.vreg(RegFile::Sgpr, 2);
        self.i(Op::S_LSHR_B64, &[whole(mask), int(-1), whole(cut)]);
        if staged_now {
            let origins = [whole(self.m0), whole(self.n0)];
            self.mx_stage_setup(mask, origins, [sub(bs, 4, 1), sub(bs, 5, 1)]);
            return;
        }
        let regs: Vec<Reg> = self.mx.as_ref().expect("set").sets[0].iter().flatten().copied().collect();
        for r in regs {
            for d in 0..dwords as u16 {
                self.i(Op::V_AND_B32, &[sub(r, d, 1), sub(mask, d, 1), sub(r, d, 1)]);
            }
        }
        // Set 1: loop tile 0 (unused when there is none; the loads stay in bounds or read 0).
        for r in next {
            self.i(Op::S_MOV_B32, &[whole(r), int(0)]);
        }
        self.mx_load(1);
        for (r, g) in next.into_iter().zip(tstride) {
            self.i(Op::S_MOV_B32, &[whole(r), whole(g)]);
        }
    }

    /// LDS-staged scales ([`staged`]), at the end of [`mx_setup`](L::mx_setup) (`next` at
    /// the last K tile): the slots and read addresses, then the last tile's scales loaded,
    /// masked (`mask`: its bytes of blocks at and past `K/B` cleared) and written to scale
    /// buffer 0 by the lanes that own them (the loop's first barrier publishes them), and
    /// `next` at loop tile 0, the first the loop copies.
    fn mx_stage_setup(&mut self, mask: Reg, origins: [O; 2], lds: [O; 2]) {
        let c = *self.c();
        let mx = self.mx.as_ref().expect("MX kernel");
        let (next, srd) = (mx.next, mx.srd);
        let g = c.lane_groups();
        let base = lds_offset(self.k);
        let opoff = [0, c.tile.0 * g * 4];
        let (mlo, mhi) = (self.vv(), self.vv());
        self.i(Op::V_MOV_B32, &[whole(mlo), sub(mask, 0, 1)]);
        self.i(Op::V_MOV_B32, &[whole(mhi), sub(mask, 1, 1)]);
        let wslot = self.vv();
        self.i(Op::V_LSHLREV_B32, &[whole(wslot), int(2), whole(self.tid)]);
        let mut slot = [self.oob; 2];
        let mut raddr = [self.oob; 2];
        let mut regs = [self.oob; 2];
        let mut tail = vec![];
        for (x, op) in [Operand::A, Operand::B].into_iter().enumerate() {
            // Slot `i` (this lane's `tid`) holds dword `d = i % G` of tile row `i / G`: each
            // copy instruction reads whole lines of K-tiled scales (32 rows of 8 bytes).
            let nb = c.blocks(op);
            let (d, r) = (self.vv(), self.vv());
            self.i(Op::V_AND_B32, &[whole(d), int(g as i64 - 1), whole(self.tid)]);
            self.i(Op::V_LSHRREV_B32, &[whole(r), int(log2(g)), whole(self.tid)]);
            self.i(Op::V_ADD_U32, &[whole(r), origins[x], whole(r)]);
            slot[x] = self.vv();
            self.i(Op::V_MUL_LO_U32, &[whole(slot[x]), lds[x], whole(r)]);
            let d4 = self.vv();
            self.i(Op::V_LSHLREV_B32, &[whole(d4), int(2), whole(d)]);
            self.i(Op::V_ADD_U32, &[whole(slot[x]), whole(slot[x]), whole(d4)]);
            // This lane reads its group's dword of its row in each of its wave's blocks:
            // `(w * wave_rows + lrow) * G + lgrp` dwords in, blocks `M * G` dwords apart.
            let wv = if x == 0 { self.wm } else { self.wn };
            let t = self.vv();
            let kw = self.k3(c.wave_rows(op));
            self.i(Op::V_MAD_U32_U24, &[whole(t), whole(wv), kw, whole(self.lrow)]);
            let kg = self.k3(g);
            self.i(Op::V_MAD_U32_U24, &[whole(t), whole(t), kg, whole(self.lgrp)]);
            raddr[x] = self.vv();
            self.i(Op::V_LSHLREV_B32, &[whole(raddr[x]), int(2), whole(t)]);
            self.i(Op::V_ADD_U32, &[whole(raddr[x]), super::lit(base + opoff[x]), whole(raddr[x])]);
            regs[x] = self.p.vreg(RegFile::Vgpr, nb as u8);
            // The last tile: this lane's slot, masked by its dword of `mask`.
            let (vo, v, mv) = (self.vv(), self.vv(), self.vv());
            // VCC is a constant-bus read: both sources in VGPRs.
            self.i(Op::V_CMP_NE_U32, &[gemm_isa::operand::VCC, int(0), whole(d)]);
            self.i(Op::V_CNDMASK_B32, &[whole(mv), whole(mlo), whole(mhi), gemm_isa::operand::VCC]);
            self.i(Op::V_ADD_U32, &[whole(vo), whole(next[x]), whole(slot[x])]);
            self.ie(Inst::new(Op::BUFFER_LOAD_DWORD, &[whole(v), whole(vo), whole(srd[x]), int(0)]).offen());
            tail.push((x, v, mv));
        }
        // The masks and LDS writes wait for the loads: after the prologue's copies are
        // issued too ([`mx_stage_tail_writes`](L::mx_stage_tail_writes)).
        let tail = tail
            .into_iter()
            .map(|(x, v, mv)| {
                let a = self.vv();
                self.i(Op::V_ADD_U32, &[whole(a), super::lit(base + opoff[x]), whole(wslot)]);
                (v, mv, a)
            })
            .collect();
        // M0 of this wave's copies: 64 slots of 4 bytes per wave.
        let (wv, m0) = (self.vv(), self.sv());
        self.i(Op::V_LSHRREV_B32, &[whole(wv), int(6), whole(self.tid)]);
        self.i(Op::V_READFIRSTLANE_B32, &[whole(m0), whole(wv)]);
        self.i(Op::S_LSHL_B32, &[whole(m0), whole(m0), int(8)]);
        self.i(Op::S_ADD_U32, &[whole(m0), whole(m0), super::lit(base)]);
        for r in next {
            self.i(Op::S_MOV_B32, &[whole(r), int(0)]);
        }
        self.mx.as_mut().expect("MX kernel").staged = Some(Staged { slot, m0, raddr, regs, tail });
    }

    /// LDS-staged scales, after the prologue's copies: the last tile's scales masked and
    /// written to scale buffer 0 (their loads, issued in the setup, and the copies' are in
    /// flight together).
    pub(super) fn mx_stage_tail_writes(&mut self) {
        let Some(st) = self.mx.as_mut().and_then(|m| m.staged.as_mut()) else { return };
        for (v, mv, a) in std::mem::take(&mut st.tail) {
            self.i(Op::V_AND_B32, &[whole(v), whole(mv), whole(v)]);
            self.ie(Inst::new(Op::DS_WRITE_B32, &[whole(a), whole(v)]));
        }
    }

    /// LDS-staged scales: the copy of operand `x`'s scales of the next K tile into scale
    /// buffer `buf`, then its offset one tile on.
    pub(super) fn mx_stage_copy(&mut self, x: usize, buf: u32) {
        let c = *self.c();
        let mx = self.mx.as_ref().expect("MX kernel");
        let st = mx.staged.as_ref().expect("staged scales");
        let (slot, m0, srd, next, ts) = (st.slot[x], st.m0, mx.srd[x], mx.next[x], mx.tstride[x]);
        let at = buf * buffer_bytes(&c) + x as u32 * c.tile.0 * c.lane_groups() * 4;
        let vo = self.vv();
        self.i(Op::V_ADD_U32, &[whole(vo), whole(next), whole(slot)]);
        self.i(Op::S_ADD_U32, &[gemm_isa::operand::M0, whole(m0), super::lit(at)]);
        self.ie(Inst::new(Op::BUFFER_LOAD_DWORD, &[whole(vo), whole(srd), int(0)]).offen().lds());
        self.i(Op::S_ADD_U32, &[whole(next), whole(next), whole(ts)]);
    }

    /// LDS-staged scales: this lane's scale bytes of the tile in scale buffer `buf`, one
    /// `ds_read_b32` per block (its group's dword, already where the MFMAs' `op_sel`
    /// expects it: no shift).
    pub(super) fn mx_stage_reads(&mut self, buf: u32) {
        let c = *self.c();
        let st = self.mx.as_ref().and_then(|m| m.staged.as_ref()).expect("staged scales");
        let (raddr, regs) = (st.raddr, st.regs);
        for (x, op) in [Operand::A, Operand::B].into_iter().enumerate() {
            for blk in 0..c.blocks(op) {
                let off = buf * buffer_bytes(&c) + blk * c.mfma.m * c.lane_groups() * 4;
                self.ie(Inst::new(Op::DS_READ_B32, &[sub(regs[x], blk as u16, 1), whole(raddr[x])]).offset(off as i32));
            }
        }
    }

    /// Whether the scales are staged through LDS.
    pub(super) fn mx_staged(&self) -> bool {
        self.mx.as_ref().is_some_and(|m| m.staged.is_some())
    }

    /// A byte buffer over `rows` rows of scales `lds` apart whose K tiles are `ts` apart,
    /// ending after the last tile's `tail` blocks of the last row, rounded up to a dword
    /// (ISA.md §2.1); 0 bytes when `rows == 0`.
    fn tiled_srd(&mut self, lo: O, hi: O, rows: O, lds: O, ts: O, tail: O) -> Reg {
        let d = self.p.vreg(RegFile::Sgpr, 4);
        let (t, u) = (self.sv(), self.sv());
        self.i(Op::S_MOV_B32, &[sub(d, 0, 1), lo]);
        self.i(Op::S_AND_B32, &[sub(d, 1, 1), super::lit(0xffff), hi]);
        self.i(Op::S_SUB_U32, &[whole(t), rows, int(1)]);
        self.i(Op::S_MUL_I32, &[whole(t), whole(t), lds]);
        self.i(Op::S_MUL_I32, &[whole(u), whole(self.cnt), ts]);
        self.i(Op::S_ADD_U32, &[whole(t), whole(t), whole(u)]);
        self.i(Op::S_ADD_U32, &[whole(t), whole(t), tail]);
        self.i(Op::S_ADD_U32, &[whole(t), whole(t), int(3)]);
        self.i(Op::S_AND_B32, &[whole(t), whole(t), int(-4)]);
        self.i(Op::S_CMP_EQ_U32, &[rows, int(0)]);
        self.i(Op::S_CSELECT_B32, &[sub(d, 2, 1), int(0), whole(t)]);
        self.i(Op::S_MOV_B32, &[sub(d, 3, 1), super::lit(0x0002_0000)]);
        d
    }

    /// Loads set `set` with the tile at the `next` offsets.
    fn mx_load(&mut self, set: usize) {
        let mx = self.mx.as_ref().expect("MX kernel");
        let op = if mx.dwords == 1 { Op::BUFFER_LOAD_DWORD } else { Op::BUFFER_LOAD_DWORDX2 };
        let mut loads = vec![];
        for x in 0..2 {
            for (blk, dst) in mx.sets[set][x].iter().enumerate() {
                loads.push((*dst, mx.voff[x], mx.srd[x], mx.blk_off[x][blk], mx.next[x]));
            }
        }
        // The whole offset in the VGPR: the range check (ISA.md §2.3) covers the VGPR offset,
        // not `soffset`, and refills past the last tile or rows past m/n must read 0.
        for (dst, voff, srd, blk, soff) in loads {
            let (so, vo) = (self.sv(), self.vv());
            self.i(Op::S_ADD_U32, &[whole(so), whole(soff), whole(blk)]);
            self.i(Op::V_ADD_U32, &[whole(vo), whole(so), whole(voff)]);
            self.ie(Inst::new(op, &[whole(dst), whole(vo), whole(srd), int(0)]).offen());
        }
    }

    /// Before the MFMAs of the tile in buffer `cur`: its set's bytes shifted to this lane
    /// group's blocks.
    pub(super) fn mx_use(&mut self, cur: u32) {
        let Some(mx) = self.mx.as_mut() else { return };
        mx.cur = cur as usize;
        if mx.staged.is_some() {
            // Read after the barrier that publishes the tile, shifted before its MFMAs.
            return;
        }
        self.mx_shift(cur as usize);
    }

    /// Set `set`'s bytes shifted to this lane group's blocks.
    fn mx_shift(&mut self, set: usize) {
        let mx = self.mx.as_ref().expect("MX kernel");
        let (shift, dwords) = (mx.shift, mx.dwords);
        let regs: Vec<Reg> = mx.sets[set].iter().flatten().copied().collect();
        for r in regs {
            if dwords == 1 {
                self.i(Op::V_LSHRREV_B32, &[whole(r), whole(shift), whole(r)]);
            } else {
                self.i(Op::V_LSHRREV_B64, &[whole(r), whole(shift), whole(r)]);
            }
        }
    }

    /// After the body of the tile in buffer `cur`: its set reloaded with the tile that
    /// will next sit there.
    pub(super) fn mx_refill(&mut self, cur: u32) {
        let Some(mx) = self.mx.as_ref() else { return };
        if mx.staged.is_some() {
            // The copies go with the data's (`MemItem::ScaleCopy`).
            return;
        }
        let (next, ts) = (mx.next, mx.tstride);
        self.mx_load(cur as usize);
        for (r, g) in next.into_iter().zip(ts) {
            self.i(Op::S_ADD_U32, &[whole(r), whole(r), whole(g)]);
        }
    }

    /// The MFMAs of K step `st` for A fragment `a` (block `bm`) and B fragment `b` (block
    /// `bn`) into `acc`: one per step, or (fp4) two from the halves of the step's dwords,
    /// each with its block's scale bytes.
    pub(super) fn mx_mfmas(&self, st: u16, bm: usize, bn: usize, acc: O, a: Reg, b: Reg) -> Vec<Inst> {
        self.mx_mfmas_at(st, st * (STEP_BYTES / 4) as u16, bm, bn, acc, a, b)
    }

    /// [`mx_mfmas`](L::mx_mfmas) with step `st`'s operands at dword `at` of the fragments
    /// (slim fragments hold one slice's pieces: `at` is the step's place in them).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mx_mfmas_at(&self, st: u16, at: u16, bm: usize, bn: usize, acc: O, a: Reg, b: Reg) -> Vec<Inst> {
        let c = *self.c();
        let mx = self.mx.as_ref().expect("MX kernel");
        let (fa, fb) = c.block_scale.mx().expect("MX kernel");
        let (ca, cb) = (fa.mfma_code(), fb.mfma_code());
        let regs = |code| gemm_isa::table::f8f6f4_dwords(code).expect("MX format") as u16;
        let (ra, rb) = (regs(ca), regs(cb));
        let bb = [Operand::A, Operand::B].map(|op| c.mx_block_bytes_of(op).expect("MX kernel"));
        let rps = (STEP_BYTES / 4) as u16;
        let op =
            if c.mfma.m == 32 { Op::V_MFMA_SCALE_F32_32X32X64_F8F6F4 } else { Op::V_MFMA_SCALE_F32_16X16X128_F8F6F4 };
        // Per operand: the register and the dword in it of this block's scales.
        let (sa, sb) = match &mx.staged {
            Some(st) => ((st.regs[0], bm as u16), (st.regs[1], bn as u16)),
            None => ((mx.sets[mx.cur][0][bm], 0), (mx.sets[mx.cur][1][bn], 0)),
        };
        // The MFMAs of this step: `(block of the lane group's range, its first dword in A's
        // and in B's fragments)`. Of one width, a step's 32 bytes hold one fp8 block or two
        // fp4 blocks. Otherwise (fp6's 24-byte blocks straddle steps; two widths put a block
        // at different bytes of A and B) a step runs the blocks whose bytes in both operands
        // end in it: all are read by then, as the fragments hold the whole K tile
        // (`fit::check_mx`: not the slim ping-pong).
        let blocks: Vec<(u32, u16, u16)> = if bb[0] == bb[1] && STEP_BYTES.is_multiple_of(bb[0]) {
            (0..rps / ra)
                .map(|p| ((u32::from(st) * STEP_BYTES + u32::from(p * ra) * 4) / bb[0], at + p * ra, at + p * ra))
                .collect()
        } else {
            let base = at - st * rps;
            let end = |q: u32, bb: u32| (q * bb + bb - 1) / STEP_BYTES;
            (0..c.mx_tile_blocks().expect("MX kernel") / c.lane_groups())
                .filter(|&q| end(q, bb[0]).max(end(q, bb[1])) == u32::from(st))
                .map(|q| (q, base + (q * bb[0] / 4) as u16, base + (q * bb[1] / 4) as u16))
                .collect()
        };
        blocks
            .into_iter()
            .map(|(byte, ia, ib)| {
                let (d, sel) = ((byte / 4) as u16, (byte % 4) as u8);
                let ops = [
                    acc,
                    sub(a, ia, ra as u8),
                    sub(b, ib, rb as u8),
                    acc,
                    sub(sa.0, sa.1 + d, 1),
                    sub(sb.0, sb.1 + d, 1),
                ];
                // `op_sel` / `op_sel_hi` entry 0 selects A's byte, entry 1 B's (table.rs SCALED).
                let lo = (sel & 1) | (sel & 1) << 1;
                let hi = (sel >> 1) | (sel >> 1) << 1;
                Inst::new(op, &ops).cbsz_abid_blgp(ca, 0, cb).op_sel(lo).op_sel_hi(hi)
            })
            .collect()
    }
}

/// `dst = src / (3 p)` in SGPRs, `p` a power of two (`src` is clobbered): a shift, then the
/// division by 3 as `mul_hi(x, 0xAAAAAAAB) >> 1`, exact for every 32-bit `x` (the fp6 K
/// tile of 96 or 192 bytes, and K bytes to 24-byte blocks).
pub(super) fn div_pow2_times_3(l: &mut L<'_>, dst: Reg, src: Reg, p: u32) {
    debug_assert!(p.is_power_of_two());
    l.i(Op::S_LSHR_B32, &[whole(src), whole(src), int(log2(p))]);
    l.i(Op::S_MUL_HI_U32, &[whole(dst), whole(src), super::lit(0xAAAA_AAAB)]);
    l.i(Op::S_LSHR_B32, &[whole(dst), whole(dst), int(1)]);
}

impl L<'_> {
    /// MX operands of two widths (`KernelConfig::k_step_of`): B's K in bytes of its rows,
    /// the K offset of its last tile (`cnt` tiles in) and the K left in that tile, from
    /// A's K (`k`, the kernel argument: whole blocks of A's format); `None` when B's bytes
    /// follow A's.
    pub(super) fn mx_b_k(&mut self, k: O, cnt: Reg) -> Option<(O, Reg, Reg)> {
        let c = *self.c();
        let (fa, fb) = c.block_scale.mx()?;
        if fa.bits() == fb.bits() {
            return None;
        }
        // Blocks of A's K, then B's bytes of as many blocks.
        let (kb, t, llast, kr) = (self.sv(), self.sv(), self.sv(), self.sv());
        self.i(Op::S_MOV_B32, &[whole(t), k]);
        let bba = c.mx_block_bytes_of(Operand::A).expect("MX kernel");
        if bba.is_power_of_two() {
            self.i(Op::S_LSHR_B32, &[whole(kb), whole(t), int(log2(bba))]);
        } else {
            div_pow2_times_3(self, kb, t, bba / 3);
        }
        let bbb = c.mx_block_bytes_of(Operand::B).expect("MX kernel");
        self.i(Op::S_MUL_I32, &[whole(kb), whole(kb), int(i64::from(bbb))]);
        self.i(Op::S_MUL_I32, &[whole(llast), whole(cnt), super::lit(c.k_step_of(Operand::B))]);
        self.i(Op::S_SUB_U32, &[whole(kr), whole(kb), whole(llast)]);
        Some((whole(kb), llast, kr))
    }
}

/// Whether the MX lowering serves `c`'s schedule: the ones whose K tile's MFMAs all run in
/// the body (or drain) of the LDS buffer they read.
pub fn schedule_ok(s: Schedule) -> bool {
    matches!(s, Schedule::Pipelined | Schedule::Interleave { .. } | Schedule::PingPongSlim { .. })
}

/// Whether the kernel leaves out fp8's per-row and per-column scale vectors (their
/// arguments stay in the layout, unread): MX kernels on the slim ping-pong. The MX plans
/// never pass them (the E8M0 block scales carry the scaling), and with one workgroup per CU
/// the epilogue runs alone: each block's vector loads wait (`vmcnt` counts stores too) for
/// every store before them, which the timing model put at 16k of a 116k-cycle workgroup of
/// MXFP4 at 8192^3.
pub fn no_scale_vectors(c: &crate::ir::KernelConfig) -> bool {
    c.block_scale.mx().is_some() && matches!(c.schedule, Schedule::PingPongSlim { .. })
}

/// Whether the scales are staged through LDS ([`Staged`]): the slim ping-pong, where each
/// wave loading its rows' scales itself costs the TCP (32 KiB of lines in flight per CU,
/// `timing/memsys.rs`) 12 KiB of lines per MXFP4 tile beside the 64 KiB of data (the A
/// scales loaded by the four waves of a row of the wave grid, the B scales by two), against
/// the 4 KiB the workgroup needs; and one slot per lane (`rows * dwords` = the threads for
/// both operands, one dword of four blocks per lane group: MXFP4 on the `fp8pp` tile).
pub fn staged(c: &crate::ir::KernelConfig) -> bool {
    let Some(bb) = c.mx_block_bytes() else { return false };
    let g = c.lane_groups();
    let nb_ok = |op| matches!(c.blocks(op), 1 | 2 | 4);
    matches!(c.schedule, Schedule::PingPongSlim { .. })
        && c.mx_tile_blocks() == Some(4 * g)
        && c.mx_block_bytes_of(Operand::B) == Some(bb)
        && c.tile.0 * g == c.threads()
        && c.tile.1 * g == c.threads()
        && nb_ok(Operand::A)
        && nb_ok(Operand::B)
}

/// Bytes of one scale buffer of a staged kernel: every row's dwords of A, then of B.
fn buffer_bytes(c: &crate::ir::KernelConfig) -> u32 {
    (c.tile.0 + c.tile.1) * c.lane_groups() * 4
}

/// Where the scale buffers start in LDS: after the data buffers and the phase counters.
fn lds_offset(k: &crate::ir::Kernel) -> u32 {
    (k.lds_buffers * k.lds_buffer_bytes() + crate::schedule::phase::lds_bytes(k)).next_multiple_of(16)
}

/// The LDS bytes the kernel's staged scales add past the data buffers and phase counters
/// (0 unless [`staged`]).
pub fn lds_bytes(k: &crate::ir::Kernel) -> u32 {
    if !staged(&k.config) {
        return 0;
    }
    let end = k.lds_buffers * k.lds_buffer_bytes() + crate::schedule::phase::lds_bytes(k);
    lds_offset(k) - end + 2 * buffer_bytes(&k.config)
}
