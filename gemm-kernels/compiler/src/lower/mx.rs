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
}

impl L<'_> {
    /// The MX scale streams: resources, per-lane offsets, the first two tiles' sets (the
    /// last K tile masked), after `setup_tiles`.
    pub(super) fn mx_setup(&mut self) {
        let c = *self.c();
        let Some(bb) = c.mx_block_bytes() else { return };
        let tile_blocks = c.tile.2 / bb;
        let dwords = tile_blocks.div_ceil(4);
        // bscale_a (2) bscale_b (2) ldsa ldsb gsa gsb
        let bs = self.p.vreg(RegFile::Sgpr, 8);
        self.i(Op::S_LOAD_DWORDX8, &[whole(bs), sr(0, 2), O::Imm(ka::OFF_BSCALE as i64)]);
        let (m, n, k) = (self.arg(6), self.arg(7), self.arg(8));
        let (nblocks, tail) = (self.sv(), self.sv());
        self.i(Op::S_LSHR_B32, &[whole(nblocks), k, int(log2(bb))]);
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
        let per_group = c.tile.2 / c.lane_groups() / bb;
        let shift = self.vv();
        self.i(Op::V_LSHLREV_B32, &[whole(shift), int(log2(8 * per_group)), whole(self.lgrp)]);
        let mut sets: [[Vec<Reg>; 2]; 2] = Default::default();
        for set in &mut sets {
            for (x, op) in [Operand::A, Operand::B].into_iter().enumerate() {
                set[x] = (0..c.blocks(op)).map(|_| self.p.vreg(RegFile::Vgpr, dwords as u8)).collect();
            }
        }
        let next = [self.sv(), self.sv()];
        let tstride = [sub(bs, 6, 1), sub(bs, 7, 1)].map(|g| {
            let r = self.sv();
            self.i(Op::S_MOV_B32, &[whole(r), g]);
            r
        });
        self.mx = Some(super::mx::MxScales { srd, voff, blk_off, sets, shift, next, tstride, dwords, cur: 0 });
        // Set 0: the last K tile (`cnt` tiles in), its blocks past `nblocks` masked.
        for x in 0..2 {
            self.i(Op::S_MUL_I32, &[whole(next[x]), whole(self.cnt), whole(tstride[x])]);
        }
        self.mx_load(0);
        // K = 0 leaves no valid block: a 63-bit cut keeps bit 0 alone (a finite scale of
        // 2^-127 or 2^-126 times the zeros the K guard loaded), where 64 would wrap to no cut.
        let cut = self.sv();
        self.i(Op::S_SUB_U32, &[whole(cut), int(8), whole(tail)]);
        self.i(Op::S_LSHL_B32, &[whole(cut), whole(cut), int(3)]);
        self.i(Op::S_MIN_U32, &[whole(cut), whole(cut), int(63)]);
        // A 64-bit shift for one dword too.
        let mask = self.p.vreg(RegFile::Sgpr, 2);
        self.i(Op::S_LSHR_B64, &[whole(mask), int(-1), whole(cut)]);
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
        let (shift, dwords) = (mx.shift, mx.dwords);
        let regs: Vec<Reg> = mx.sets[cur as usize].iter().flatten().copied().collect();
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
        let regs = gemm_isa::table::f8f6f4_dwords(ca).expect("MX format") as u16;
        let bb = c.mx_block_bytes().expect("MX kernel");
        let rps = (STEP_BYTES / 4) as u16;
        let op =
            if c.mfma.m == 32 { Op::V_MFMA_SCALE_F32_32X32X64_F8F6F4 } else { Op::V_MFMA_SCALE_F32_16X16X128_F8F6F4 };
        let (sa, sb) = (mx.sets[mx.cur][0][bm], mx.sets[mx.cur][1][bn]);
        (0..rps / regs)
            .map(|p| {
                let byte = (u32::from(st) * STEP_BYTES + u32::from(p * regs) * 4) / bb;
                let (d, sel) = ((byte / 4) as u16, (byte % 4) as u8);
                let ops = [
                    acc,
                    sub(a, at + p * regs, regs as u8),
                    sub(b, at + p * regs, regs as u8),
                    acc,
                    sub(sa, d, 1),
                    sub(sb, d, 1),
                ];
                // `op_sel` / `op_sel_hi` entry 0 selects A's byte, entry 1 B's (table.rs SCALED).
                let lo = (sel & 1) | (sel & 1) << 1;
                let hi = (sel >> 1) | (sel >> 1) << 1;
                Inst::new(op, &ops).cbsz_abid_blgp(ca, 0, cb).op_sel(lo).op_sel_hi(hi)
            })
            .collect()
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
