//! Block-scaled fp8 ([`crate::ir::BlockScale::Fp8Blocks`], both archs): DeepSeek-V3's recipe in
//! the Linear layer (`gemm_core::block_fp8`). A is the weights with one f32 scale per 128 x 128
//! block (`bscale_a[(i / 128) * ldsa + g * gsa]`), B the activations with one per column and K
//! group (`bscale_b[j * ldsb + g * gsb]`: row-major scales have `gs = 1`; the column-major ones
//! of the DeepSeek GEMM challenge, `lds = 1`, put a block's 32 columns of one group in one
//! 128-byte line), K groups of 128 = one K tile. Neither gfx942 nor gfx950 scales
//! fp8 MFMA inputs by arbitrary f32 values, so the partial sums are scaled instead, as the
//! DeepSeek kernels do:
//!
//! * each tile's MFMAs sum into temporaries (the first K step's MFMA takes srcC = 0),
//! * then for each MFMA block `acc += tmp * (sa * sb[j])`, one `v_pk_fma_f32` per two
//!   elements (the scale broadcast from the low half of its pair), the accumulators in VGPRs:
//!   the adds are the kernel's VALU cost. On gfx950 (LDS-DMA copies, no staging registers) the
//!   temporaries are VGPRs too; on gfx942 they are AGPRs, read pairwise before each FMA (a VALU
//!   cannot read AGPRs), as staging, sums and accumulators do not fit 256 VGPRs there. `sa` is uniform over a wave (its rows lie in one 128-row block:
//!   one range-checked `buffer_load_dword` at the same address in every lane); `sb[j]` is the lane's column (every accumulator register
//!   of a lane holds one column of C: a VGPR per N block, `buffer_load_dword`).
//!
//! The scales stream like the MX ones (`lower/mx.rs`): two sets following the LDS buffers, the
//! last (partial) K group's in set 0 and group 0's in set 1 from the setup, each set reloaded
//! at the end of the body that used it with the group that next sits in its buffer. Loads of
//! rows or columns past the tensors read 0 (range-checked resources); the K tail's zero data
//! make its scaled sums exact zeros past K.

use super::{lit, L};
use crate::ir::Operand;
use crate::kernel_args as ka;
use crate::program::{sub, whole};
use gemm_isa::operand::{int, sr};
use gemm_isa::{Inst, Op, Operand as O, Reg, RegFile};

/// The scale streams of a block-scaled fp8 kernel.
pub(super) struct Fp8Blocks {
    srd: [Reg; 2],
    /// SGPR: bytes to the wave's row block of A's scales (`(row0 / 128) * ldsa * 4`).
    a_row: Reg,
    /// Per N block: the lane's column's first scale byte (`j * ldsb * 4`, VGPR).
    b_col: Vec<Reg>,
    /// Per set: A's scale (the same in every lane) and B's per N block (VGPRs).
    sets: [(Reg, Vec<Reg>); 2],
    /// SGPRs: the byte offsets of the next group to load in A's and B's scales.
    next: [Reg; 2],
    /// SGPRs: bytes from one K group to the next in A's and B's scales.
    gstride: [Reg; 2],
    /// The MFMA blocks' group sums (VGPRs), in `acc` order.
    pub tmp: Vec<Reg>,
    /// The set the current tile's scaled adds read.
    pub cur: usize,
}

impl L<'_> {
    /// The scale streams, the temporaries, the first two groups' scales (after `setup_tiles`,
    /// whose accumulators are VGPRs for these kernels).
    pub(super) fn bf_setup(&mut self) {
        let c = *self.c();
        if c.block_scale != crate::ir::BlockScale::Fp8Blocks {
            return;
        }
        let bs = self.p.vreg(RegFile::Sgpr, 8);
        self.i(Op::S_LOAD_DWORDX8, &[whole(bs), sr(0, 2), O::Imm(ka::OFF_BSCALE as i64)]);
        let (m, n, k) = (self.arg(6), self.arg(7), self.arg(8));
        let (groups, rblocks) = (self.sv(), self.sv());
        self.i(Op::S_ADD_U32, &[whole(groups), k, int(127)]);
        self.i(Op::S_LSHR_B32, &[whole(groups), whole(groups), int(7)]);
        self.i(Op::S_ADD_U32, &[whole(rblocks), m, int(127)]);
        self.i(Op::S_LSHR_B32, &[whole(rblocks), whole(rblocks), int(7)]);
        let (ldsa, ldsb) = (sub(bs, 4, 1), sub(bs, 5, 1));
        let srd_a = self.strided_srd(sub(bs, 0, 1), sub(bs, 1, 1), whole(rblocks), ldsa, whole(groups), sub(bs, 6, 1));
        let srd_b = self.strided_srd(sub(bs, 2, 1), sub(bs, 3, 1), n, ldsb, whole(groups), sub(bs, 7, 1));
        let gstride = [self.sv(), self.sv()];
        for (x, g) in gstride.iter().enumerate() {
            self.i(Op::S_LSHL_B32, &[whole(*g), sub(bs, 6 + x as u16, 1), int(2)]);
        }
        // The wave's first row of A: m0 + wm * wave_rows (wm is uniform: read from lane 0).
        let (wm, a_row) = (self.sv(), self.sv());
        self.i(Op::V_READFIRSTLANE_B32, &[whole(wm), whole(self.wm)]);
        self.i(Op::S_MUL_I32, &[whole(wm), whole(wm), int(c.wave_rows(Operand::A) as i64)]);
        self.i(Op::S_ADD_U32, &[whole(a_row), whole(wm), whole(self.m0)]);
        self.i(Op::S_LSHR_B32, &[whole(a_row), whole(a_row), int(7)]);
        self.i(Op::S_MUL_I32, &[whole(a_row), whole(a_row), ldsa]);
        self.i(Op::S_LSHL_B32, &[whole(a_row), whole(a_row), int(2)]);
        let col = self.vv();
        let kw = self.k3(c.wave_rows(Operand::B));
        self.i(Op::V_MAD_U32_U24, &[whole(col), whole(self.wn), kw, whole(self.lrow)]);
        self.i(Op::V_ADD_U32, &[whole(col), whole(self.n0), whole(col)]);
        let mut b_col = vec![];
        for bn in 0..c.blocks(Operand::B) {
            let j = self.vadd(col, bn * c.mfma.n);
            let o = self.vv();
            self.i(Op::V_MUL_LO_U32, &[whole(o), ldsb, whole(j)]);
            self.i(Op::V_LSHLREV_B32, &[whole(o), int(2), whole(o)]);
            b_col.push(o);
        }
        let mut sets = [(self.vv(), vec![]), (self.vv(), vec![])];
        for set in &mut sets {
            set.1 = (0..c.blocks(Operand::B)).map(|_| self.vv()).collect();
        }
        let file = if sums_in_vgprs(&c) { RegFile::Vgpr } else { RegFile::Agpr };
        let tmp =
            (0..c.blocks(Operand::A) * c.blocks(Operand::B)).map(|_| self.p.vreg(file, c.acc_regs() as u8)).collect();
        let next = [self.sv(), self.sv()];
        self.bf =
            Some(super::block_fp8::Fp8Blocks { srd: [srd_a, srd_b], a_row, b_col, sets, next, gstride, tmp, cur: 0 });
        // Set 0: the last K group (`cnt`, K tiles are groups); set 1: group 0; then group 1.
        for x in 0..2 {
            self.i(Op::S_MUL_I32, &[whole(next[x]), whole(self.cnt), whole(gstride[x])]);
        }
        self.bf_load(0);
        for r in next {
            self.i(Op::S_MOV_B32, &[whole(r), int(0)]);
        }
        self.bf_load(1);
        for x in 0..2 {
            self.i(Op::S_MOV_B32, &[whole(next[x]), whole(gstride[x])]);
        }
    }

    /// A buffer resource over `rows x groups` f32 scales at row stride `rs` and group stride
    /// `gs` (elements): span `((rows-1)*rs + (groups-1)*gs + 1) * 4` bytes, 0 when either
    /// count is 0 (ISA.md §2.1).
    fn strided_srd(&mut self, lo: O, hi: O, rows: O, rs: O, groups: O, gs: O) -> Reg {
        let d = self.p.vreg(RegFile::Sgpr, 4);
        let (t, u) = (self.sv(), self.sv());
        self.i(Op::S_MOV_B32, &[sub(d, 0, 1), lo]);
        self.i(Op::S_AND_B32, &[sub(d, 1, 1), lit(0xffff), hi]);
        self.i(Op::S_SUB_U32, &[whole(t), rows, int(1)]);
        self.i(Op::S_MUL_I32, &[whole(t), whole(t), rs]);
        self.i(Op::S_SUB_U32, &[whole(u), groups, int(1)]);
        self.i(Op::S_MUL_I32, &[whole(u), whole(u), gs]);
        self.i(Op::S_ADD_U32, &[whole(t), whole(t), whole(u)]);
        self.i(Op::S_ADD_U32, &[whole(t), whole(t), int(1)]);
        self.i(Op::S_LSHL_B32, &[whole(t), whole(t), int(2)]);
        self.i(Op::S_MUL_I32, &[whole(u), rows, groups]);
        self.i(Op::S_CMP_EQ_U32, &[whole(u), int(0)]);
        self.i(Op::S_CSELECT_B32, &[sub(d, 2, 1), int(0), whole(t)]);
        self.i(Op::S_MOV_B32, &[sub(d, 3, 1), lit(0x0002_0000)]);
        d
    }

    /// Loads set `set` with the group at byte `next` of each row of scales.
    fn bf_load(&mut self, set: usize) {
        let bf = self.bf.as_ref().expect("block-scaled fp8");
        let (srd, a_row, next, sa) = (bf.srd, bf.a_row, bf.next, bf.sets[set].0);
        let cols: Vec<(Reg, Reg)> = bf.sets[set].1.iter().copied().zip(bf.b_col.iter().copied()).collect();
        let so = self.sv();
        self.i(Op::S_ADD_U32, &[whole(so), whole(a_row), whole(next[0])]);
        // A vector load, not `s_buffer_load`: its range check makes offsets past the tensor (the
        // refills past the last group, K = 0) read 0 (ISA.md §2.3).
        let va = self.vv();
        self.i(Op::V_MOV_B32, &[whole(va), whole(so)]);
        self.ie(Inst::new(Op::BUFFER_LOAD_DWORD, &[whole(sa), whole(va), whole(srd[0]), int(0)]).offen());
        // The whole offset in the VGPR: the range check covers it, not `soffset` (ISA.md §2.3).
        for (dst, col) in cols {
            let vo = self.vv();
            self.i(Op::V_ADD_U32, &[whole(vo), whole(next[1]), whole(col)]);
            self.ie(Inst::new(Op::BUFFER_LOAD_DWORD, &[whole(dst), whole(vo), whole(srd[1]), int(0)]).offen());
        }
    }

    /// Before the tile in buffer `cur`: its scaled adds read set `cur`.
    pub(super) fn bf_use(&mut self, cur: u32) {
        if let Some(bf) = self.bf.as_mut() {
            bf.cur = cur as usize;
        }
    }

    /// After the body of buffer `cur`: its set reloaded with the group that next sits there.
    pub(super) fn bf_refill(&mut self, cur: u32) {
        let Some(bf) = self.bf.as_ref() else { return };
        let (next, gs) = (bf.next, bf.gstride);
        self.bf_load(cur as usize);
        for x in 0..2 {
            self.i(Op::S_ADD_U32, &[whole(next[x]), whole(next[x]), whole(gs[x])]);
        }
    }

    /// The tile's MFMAs into the temporaries (step 0 from srcC = 0) and the scaled adds, block
    /// by block: the adds of block `b` follow the MFMAs of block `b + 1`, so they issue while
    /// the matrix pipe runs those (its results are ready by then) instead of waiting for the
    /// pipe to drain at the end of the tile.
    pub(super) fn bf_dot(&mut self) {
        let c = *self.c();
        let op = self.mfma_op();
        let steps = c.tile.2 / c.mfma.k;
        let rps = (c.mfma.k / c.lane_groups() * c.ab_bytes() / 4) as u16;
        let (fa, fb) = (self.cp[0].frags.clone(), self.cp[1].frags.clone());
        let bf = self.bf.as_ref().expect("block-scaled fp8");
        let (tmp, (sa, sb)) = (bf.tmp.clone(), bf.sets[bf.cur].clone());
        // The scale of each N block in the low half of an aligned pair (the packed FMA's
        // src1, both halves of the result taking the low half: `op_sel_hi` bit 1 clear).
        let scales: Vec<Reg> = sb
            .iter()
            .map(|&s| {
                let w = self.p.vreg(RegFile::Vgpr, 2);
                self.i(Op::V_MUL_F32, &[sub(w, 0, 1), whole(sa), whole(s)]);
                w
            })
            .collect();
        let blocks: Vec<(usize, usize)> = (0..fa.len()).flat_map(|bm| (0..fb.len()).map(move |bn| (bm, bn))).collect();
        for (q, &(bm, bn)) in blocks.iter().enumerate() {
            let t = whole(tmp[bm * fb.len() + bn]);
            for st in 0..steps as u16 {
                let inst = self.mfma_inst(op, t, sub(fa[bm], st * rps, rps as u8), sub(fb[bn], st * rps, rps as u8));
                // The group's first step starts the sum at 0 (srcC = inline 0).
                self.ie(if st == 0 { with_src_c(inst, int(0)) } else { inst });
            }
            if q > 0 {
                let (pm, pn) = blocks[q - 1];
                self.bf_add(pm * fb.len() + pn, &tmp, scales[pn]);
            }
        }
        let (lm, ln) = *blocks.last().expect("a block");
        self.bf_add(lm * fb.len() + ln, &tmp, scales[ln]);
    }

    /// `acc[i] += tmp[i] * w` (`w` broadcast from the low half of its pair), two elements per
    /// `v_pk_fma_f32`.
    fn bf_add(&mut self, i: usize, tmp: &[Reg], w: Reg) {
        let c = *self.c();
        for r in (0..c.acc_regs() as u16).step_by(2) {
            let acc = sub(self.acc[i], r, 2);
            let t = if tmp[i].file == RegFile::Agpr {
                // A VALU cannot read AGPRs: the pair through VGPRs first.
                let x = self.p.vreg(RegFile::Vgpr, 2);
                for h in 0..2 {
                    self.i(Op::V_ACCVGPR_READ_B32, &[sub(x, h, 1), sub(tmp[i], r + h, 1)]);
                }
                whole(x)
            } else {
                sub(tmp[i], r, 2)
            };
            self.ie(Inst::new(Op::V_PK_FMA_F32, &[acc, t, whole(w), acc]).op_sel_hi(0b101));
        }
    }
}

/// Whether the group sums live in VGPRs (no AGPR reads before the scaled adds): where the
/// copies need no staging registers, gfx950's K-contiguous LDS-DMA (`fit::vgpr_estimate`).
pub fn sums_in_vgprs(c: &crate::ir::KernelConfig) -> bool {
    c.arch == crate::ir::Arch::Gfx950 && c.direct_to_lds == crate::ir::DmaPolicy::Auto
}

/// `inst` with its srcC (the MFMA's fourth operand) replaced.
fn with_src_c(mut inst: Inst, c: O) -> Inst {
    inst.operands[3] = c;
    inst
}
