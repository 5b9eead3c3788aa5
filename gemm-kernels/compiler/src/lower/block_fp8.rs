//! Block-scaled fp8 ([`crate::ir::BlockScale::Fp8Blocks`], both archs): DeepSeek-V3's recipe in
//! the Linear layer (`gemm_core::block_fp8`). A is the weights with one f32 scale per 128 x 128
//! block (`bscale_a[(i / 128) * ldsa + g]`), B the activations with one per column and K group
//! (`bscale_b[j * ldsb + g]`), K groups of 128 = one K tile. Neither gfx942 nor gfx950 scales
//! fp8 MFMA inputs by arbitrary f32 values, so the partial sums are scaled instead, as the
//! DeepSeek kernels do:
//!
//! * each tile's MFMAs sum into temporaries (AGPRs; the first K step's MFMA takes srcC = 0),
//! * then for each MFMA block `acc += tmp * (sa * sb[j])`, one `v_fma_f32` per element, with
//!   the accumulators in VGPRs. `sa` is uniform over a wave (its rows lie in one 128-row block:
//!   an SGPR, `s_buffer_load_dword`); `sb[j]` is the lane's column (every accumulator register
//!   of a lane holds one column of C: a VGPR per N block, `buffer_load_dword`).
//!
//! The scales stream like the MX ones (`lower/mx.rs`): two sets following the LDS buffers, the
//! last (partial) K group's in set 0 and group 0's in set 1 from the setup, each set reloaded
//! at the end of the body that used it with the group that next sits in its buffer. Loads of
//! rows or columns past the tensors read 0 (range-checked resources); the K tail's zero data
//! make its scaled sums exact zeros past K.

use super::L;
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
    /// Per set: A's scale (SGPR) and B's per N block (VGPRs).
    sets: [(Reg, Vec<Reg>); 2],
    /// SGPR: the byte offset (within a row of scales) of the next group to load.
    next: Reg,
    /// The MFMA blocks' group sums (AGPRs), in `acc` order.
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
        let srd_a = self.srd(sub(bs, 0, 1), sub(bs, 1, 1), whole(groups), whole(rblocks), ldsa, 4);
        let srd_b = self.srd(sub(bs, 2, 1), sub(bs, 3, 1), whole(groups), n, ldsb, 4);
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
        let mut sets = [(self.sv(), vec![]), (self.sv(), vec![])];
        for set in &mut sets {
            set.1 = (0..c.blocks(Operand::B)).map(|_| self.vv()).collect();
        }
        let tmp = (0..c.blocks(Operand::A) * c.blocks(Operand::B))
            .map(|_| self.p.vreg(RegFile::Agpr, c.acc_regs() as u8))
            .collect();
        let next = self.sv();
        self.bf = Some(super::block_fp8::Fp8Blocks { srd: [srd_a, srd_b], a_row, b_col, sets, next, tmp, cur: 0 });
        // Set 0: the last K group (`cnt`, K tiles are groups); set 1: group 0.
        self.i(Op::S_LSHL_B32, &[whole(next), whole(self.cnt), int(2)]);
        self.bf_load(0);
        self.i(Op::S_MOV_B32, &[whole(next), int(0)]);
        self.bf_load(1);
        self.i(Op::S_MOV_B32, &[whole(next), int(4)]);
    }

    /// Loads set `set` with the group at byte `next` of each row of scales.
    fn bf_load(&mut self, set: usize) {
        let bf = self.bf.as_ref().expect("block-scaled fp8");
        let (srd, a_row, next, sa) = (bf.srd, bf.a_row, bf.next, bf.sets[set].0);
        let cols: Vec<(Reg, Reg)> = bf.sets[set].1.iter().copied().zip(bf.b_col.iter().copied()).collect();
        let so = self.sv();
        self.i(Op::S_ADD_U32, &[whole(so), whole(a_row), whole(next)]);
        self.i(Op::S_BUFFER_LOAD_DWORD, &[whole(sa), whole(srd[0]), whole(so)]);
        // The whole offset in the VGPR: the range check covers it, not `soffset` (ISA.md §2.3).
        for (dst, col) in cols {
            let vo = self.vv();
            self.i(Op::V_ADD_U32, &[whole(vo), whole(next), whole(col)]);
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
        let next = bf.next;
        self.bf_load(cur as usize);
        self.i(Op::S_ADD_U32, &[whole(next), whole(next), int(4)]);
    }

    /// The tile's MFMAs into the temporaries (step 0 from srcC = 0), then the scaled adds.
    pub(super) fn bf_dot(&mut self) {
        let c = *self.c();
        let op = self.mfma_op();
        let steps = c.tile.2 / c.mfma.k;
        let rps = (c.mfma.k / c.lane_groups() * c.ab_bytes() / 4) as u16;
        let (fa, fb) = (self.cp[0].frags.clone(), self.cp[1].frags.clone());
        let bf = self.bf.as_ref().expect("block-scaled fp8");
        let (tmp, (sa, sb)) = (bf.tmp.clone(), bf.sets[bf.cur].clone());
        for st in 0..steps as u16 {
            for (bm, a) in fa.iter().enumerate() {
                for (bn, b) in fb.iter().enumerate() {
                    let t = whole(tmp[bm * fb.len() + bn]);
                    let inst = self.mfma_inst(op, t, sub(*a, st * rps, rps as u8), sub(*b, st * rps, rps as u8));
                    // The group's first step starts the sum at 0 (srcC = inline 0).
                    let inst = if st == 0 { with_src_c(inst, int(0)) } else { inst };
                    self.ie(inst);
                }
            }
        }
        let scales: Vec<Reg> = sb
            .iter()
            .map(|&s| {
                let w = self.vv();
                self.i(Op::V_MUL_F32, &[whole(w), whole(sa), whole(s)]);
                w
            })
            .collect();
        for bm in 0..fa.len() {
            for (bn, w) in scales.iter().enumerate() {
                let i = bm * fb.len() + bn;
                for r in 0..c.acc_regs() as u16 {
                    let x = self.vv();
                    self.i(Op::V_ACCVGPR_READ_B32, &[whole(x), sub(tmp[i], r, 1)]);
                    let acc = sub(self.acc[i], r, 1);
                    self.i(Op::V_FMA_F32, &[acc, whole(x), whole(*w), acc]);
                }
            }
        }
    }
}

/// `inst` with its srcC (the MFMA's fourth operand) replaced.
fn with_src_c(mut inst: Inst, c: O) -> Inst {
    inst.operands[3] = c;
    inst
}
