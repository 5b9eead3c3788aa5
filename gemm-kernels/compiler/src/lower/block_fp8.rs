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
//!   cannot read AGPRs), as staging, sums and accumulators do not fit 256 VGPRs there. `sa` is
//!   uniform over a wave (its rows lie in one 128-row block: one range-checked
//!   `buffer_load_dword` at the same address in every lane); `sb[j]` is the lane's column
//!   (every accumulator register of a lane holds one column of C: a VGPR per N block,
//!   `buffer_load_dword`).
//!
//! Where the adds go decides the speed (`gemm mx --fp8-blocks`, the timing model): a wave issues
//! in order, and a block's accumulation chain keeps it waiting for the matrix pipe, so adds
//! placed after a whole chain issue while the pipe drains and idles (gfx942 4096^3: 194 us,
//! MFMA busy 39%). They go between MFMAs whose sums they do not read instead:
//!
//! * pipelined loop ([`bf_dot`](L::bf_dot)): block `j`'s MFMAs carry the adds of the block
//!   [`add_lag`] places earlier, so `passes + 3` wait states separate a block's last MFMA from
//!   its first add without `s_nop`; a tile's last `lag` blocks are added during the next tile's
//!   first MFMAs (their scale products kept in `pend`), the drain's after its own;
//! * interleave schedule ([`carries_sums`]): the slices run every block K step by K step, so no
//!   sum is complete before the tile's last MFMA; two sets of sums (AGPRs) alternate with the
//!   LDS buffers, and the previous tile's adds are spread evenly over this tile's MFMAs
//!   ([`bf_tick`](L::bf_tick)), the drain adding its own after its MFMAs. gfx942's catalogue
//!   kernel runs its 8-wave form (`schedule::interleave8`: 4x2 waves of 32x64 on 128x128,
//!   two waves per SIMD, the loop rotated so that the barrier and the next tile's first reads
//!   sit behind the last slice's MFMAs and the copies run a tile ahead), where a wave's two
//!   blocks leave room for both sets of sums in VGPRs ([`sums_in_vgprs`]): one `v_pk_fma_f32`
//!   per two sums, no `v_accvgpr_read`s. With the lean prologue and epilogue
//!   (`schedule::slim_edges`), `gemm mx --fp8-blocks` (bf16 out) at 4096^3: 130.3 us against
//!   117.9 for per-tensor fp8 (90%; the 4-wave 2x2 form was 148.0: its element-load K tail
//!   put 8.5k clocks before every workgroup's first MFMA), 857.2 at 8192^3 (905.9).
//! * slim ping-pong ([`rotates`], gfx950's `bsfp8pp`: the `fp8pp` tile, 256x256x128, 8 waves
//!   of 128x64, 32x32x64 MFMAs): its two clusters are the tile's two K steps, so a group's sum
//!   would span both, and a whole tile's sums (128 VGPRs) do not fit beside the 128
//!   accumulators and the fragments in the 256 per lane of two waves per SIMD. Each MFMA
//!   instead sums one K step of one block into the next of two rotating temporaries (srcC =
//!   0), and the temporary's scaled adds follow the next MFMA ([`bf_rot_mfma`](L::bf_rot_mfma)):
//!   the scale is applied per K step of 64 (two scaled adds per group where the other
//!   kernels add the group's sum once: one more f32 rounding, none where the sums are exact). A tile ends with its last MFMA's adds pending; the next tile
//!   (a body or a drain) starts from that state ([`bf_rot_enter`](L::bf_rot_enter)), the
//!   prologue zeroing it for the first tile with the accumulators (one MFMA per block), and
//!   the drain adds it after its MFMAs. The scale products are one pair per two N blocks,
//!   recomputed once the previous tile's pending adds are out. An `s_nop` of
//!   [`rot_spacing`] wait states before every MFMA's adds keeps each gap inside the MFMA's 64
//!   clocks; a dot cluster's last adds follow its barrier ([`Settle`]), and a tile's scale
//!   refill waits for its second memory cluster, which issues no copies. `gemm mx
//!   --fp8-blocks`, bf16 out: 4096^3 44.0 us against 42.9 for `fp8pp` (97%; 48.8 before the
//!   spacing, the deferred adds, the refill's move, the MFMA zeroing and the staged epilogue:
//!   46.9, 46.0, 45.3, 45.2, 44.0), 8192^3 334.5 against 328.8 (98%; 367.2 before).
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
    /// Blocks whose scaled adds trail their MFMAs ([`add_lag`]): a tile's last `lag` blocks
    /// are added during the next tile's first MFMAs.
    lag: usize,
    /// Per trailing block: its scale product (`sa * sb[j]`, the low half of an aligned pair),
    /// kept from the tile whose sums it scales.
    pend: Vec<Reg>,
    /// The tile being emitted is the last (the drain): its own trailing adds follow its MFMAs.
    pub flush: bool,
    /// Carried sums (the interleave schedule, [`carries_sums`]): a second set of sums, the
    /// tile in buffer `cur` summing into set `cur` while the previous tile's set is added.
    tmp1: Vec<Reg>,
    /// Carried sums: per set, the scale product of each N block (low half of a pair).
    prod: [Vec<Reg>; 2],
    /// Carried sums: the previous tile's adds still to emit (block, first register) and the
    /// MFMAs of the current tile still to emit, over which they are spread.
    queue: Vec<(usize, u16)>,
    mfmas_left: usize,
    /// Rotating temporaries (the slim ping-pong, [`rotates`]): each MFMA sums one K step
    /// of one block into the next of them.
    rot: Vec<Reg>,
    rot_next: usize,
    /// Rotating temporaries whose scaled adds are still to emit: (block, temporary, N block),
    /// oldest first.
    pending: std::collections::VecDeque<(usize, Reg, usize)>,
    /// Rotating temporaries: pending adds of the previous tile, before this tile's products.
    stale: usize,
    /// Rotating temporaries: where a slice's deferred adds go ([`Settle`]).
    hold: Settle,
    /// The set whose refill ([`bf_refill`](L::bf_refill)) waits for the barrier that ends the
    /// loop body's first dot cluster ([`bf_rot_barrier`](L::bf_rot_barrier)), the rotating
    /// temporaries' tile having computed its products from it: the second memory cluster
    /// issues no copies, where the body's end put its three loads ahead of the next tile's
    /// copies in the 32 KB the TCP holds in flight (the timing model, `bsfp8pp` at 4096^3:
    /// 45.3 us against 46.0).
    pub refill: Option<u32>,
}

/// Where the adds a slice's last MFMA left pending go (`mop`'s barriers,
/// [`bf_rot_barrier`](L::bf_rot_barrier)), unless an MFMA needs their temporary first: after
/// the barrier that ends the dot cluster, in the memory cluster that the other wave's MFMAs
/// cover. The timing model, `bsfp8pp` at 4096^3: 46.0 us against 46.9 with the adds before
/// that barrier. A tile's last slice settles right after it ([`Settle::AfterNext`]: the
/// body's state crosses no loop edge, [`bf_rot_enter`](L::bf_rot_enter)); the others at the
/// end of the next memory cluster ([`Settle::BeforeSecond`], as fast) with the scale refill
/// after their barrier ([`Fp8Blocks::refill`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) enum Settle {
    /// Nothing deferred (or emitted where the next MFMA needs it).
    #[default]
    None,
    /// Right after the next barrier (the one that ends the dot cluster).
    AfterNext,
    /// Right before the second barrier from here: the end of the next memory cluster.
    BeforeSecond,
    /// [`Settle::BeforeSecond`] past its first barrier.
    BeforeNext,
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
        let blocks = (c.blocks(Operand::A) * c.blocks(Operand::B)) as usize;
        let carry = carries_sums(&c);
        let rotating = rotates(&c);
        let lag = if carry || rotating { 0 } else { add_lag(&c) };
        let tmp: Vec<Reg> =
            (0..if rotating { 0 } else { blocks }).map(|_| self.p.vreg(file, c.acc_regs() as u8)).collect();
        let rot: Vec<Reg> = (0..if rotating { rot_temps(&c) } else { 0 })
            .map(|_| self.p.vreg(RegFile::Vgpr, c.acc_regs() as u8))
            .collect();
        // The first tile's trailing adds (of no tile before it) add 0 * 0: zero sums and scales.
        let mut pend = vec![];
        let tmp1: Vec<Reg> =
            (0..if carry { blocks } else { 0 }).map(|_| self.p.vreg(file, c.acc_regs() as u8)).collect();
        let mut prod: [Vec<Reg>; 2] = Default::default();
        if rotating {
            // One set of products: a tile's are computed once the previous tile's adds are out.
            // Two N blocks' products per pair (the packed FMA picks its half, `bf_add_sel`).
            prod[0] = (0..c.blocks(Operand::B).div_ceil(2)).map(|_| self.p.vreg(RegFile::Vgpr, 2)).collect();
            // Every tile starts with the previous tile's last MFMAs pending (`bf_rot_enter`):
            // the first tile's are of no tile before it, zero sums times zero products.
            for w in &prod[0] {
                self.i(Op::V_MOV_B32, &[sub(*w, 0, 1), int(0)]);
                self.i(Op::V_MOV_B32, &[sub(*w, 1, 1), int(0)]);
            }
            // Temporaries `1..`: zeroed with the accumulators (`zero_accumulators`, the slim
            // ping-pong's prologue, `bf_rot_zeroed`).
        }
        if carry {
            for set in &mut prod {
                *set = (0..c.blocks(Operand::B)).map(|_| self.p.vreg(RegFile::Vgpr, 2)).collect();
            }
            // The first tile adds set 1 (of no tile before it): 0 * 0.
            let op = if file == RegFile::Agpr { Op::V_ACCVGPR_WRITE_B32 } else { Op::V_MOV_B32 };
            for t in &tmp1 {
                for r in 0..c.acc_regs() as u16 {
                    self.i(op, &[sub(*t, r, 1), int(0)]);
                }
            }
            for w in &prod[1] {
                self.i(Op::V_MOV_B32, &[sub(*w, 0, 1), int(0)]);
            }
        }
        for t in &tmp[tmp.len() - lag..] {
            for r in 0..c.acc_regs() as u16 {
                let op = if file == RegFile::Agpr { Op::V_ACCVGPR_WRITE_B32 } else { Op::V_MOV_B32 };
                self.i(op, &[sub(*t, r, 1), int(0)]);
            }
            let w = self.p.vreg(RegFile::Vgpr, 2);
            self.i(Op::V_MOV_B32, &[sub(w, 0, 1), int(0)]);
            pend.push(w);
        }
        let next = [self.sv(), self.sv()];
        self.bf = Some(super::block_fp8::Fp8Blocks {
            srd: [srd_a, srd_b],
            a_row,
            b_col,
            sets,
            next,
            gstride,
            tmp,
            cur: 0,
            lag,
            pend,
            flush: false,
            tmp1,
            prod,
            queue: vec![],
            mfmas_left: 0,
            rot,
            rot_next: 0,
            pending: Default::default(),
            stale: 0,
            hold: Settle::None,
            refill: None,
        });
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
        let c = *self.c();
        let Some(bf) = self.bf.as_mut() else { return };
        bf.cur = cur as usize;
        if !bf.rot.is_empty() {
            // Rotating temporaries: this tile's scale products once the previous tile's
            // pending adds (which read the products) are out; its set is refilled after them,
            // in the body's second memory cluster ([`Fp8Blocks::refill`]).
            bf.refill = Some(cur);
            self.bf_rot_enter();
            return;
        }
        if bf.tmp1.is_empty() {
            return;
        }
        // Carried sums: this tile's scale products (its set was loaded two bodies ago), and
        // the previous tile's adds queued over this tile's MFMAs.
        let cur = cur as usize;
        let units = c.acc_regs() as u16 / 2;
        bf.queue = (0..bf.tmp.len()).flat_map(|i| (0..units).map(move |u| (i, 2 * u))).collect();
        bf.mfmas_left = bf.tmp.len() * (c.tile.2 / c.mfma.k) as usize;
        let (sa, sb, prod) = (bf.sets[cur].0, bf.sets[cur].1.clone(), bf.prod[cur].clone());
        for (w, s) in prod.iter().zip(sb) {
            self.i(Op::V_MUL_F32, &[sub(*w, 0, 1), whole(sa), whole(s)]);
        }
    }

    /// Carried sums: the sums set the tile in buffer `set` writes.
    pub(super) fn bf_sums(&self, set: usize) -> &[Reg] {
        let bf = self.bf.as_ref().expect("block-scaled fp8");
        if set == 0 || bf.tmp1.is_empty() {
            &bf.tmp
        } else {
            &bf.tmp1
        }
    }

    /// Carried sums, after each MFMA of the tile: an even share of the previous tile's adds
    /// still queued (they read the other set, written a whole tile earlier: no wait states
    /// left to cover).
    pub(super) fn bf_tick(&mut self) {
        let Some(bf) = self.bf.as_mut() else { return };
        if bf.tmp1.is_empty() || bf.mfmas_left == 0 {
            return;
        }
        let n = bf.queue.len().div_ceil(bf.mfmas_left);
        bf.mfmas_left -= 1;
        let take: Vec<(usize, u16)> = bf.queue.drain(..n).collect();
        let prev = 1 - bf.cur;
        let (tmp, prod) = (self.bf_sums(prev).to_vec(), self.bf.as_ref().expect("bf").prod[prev].clone());
        let nbn = self.cp[1].frags.len();
        for (i, r) in take {
            self.bf_add(i, r, &tmp, prod[i % nbn]);
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

    /// The tile's MFMAs into the temporaries (step 0 from srcC = 0), block by block, with the
    /// scaled adds spread between them: the MFMAs of block `j` carry the adds of the block
    /// `lag` places earlier in issue order (the first `lag` blocks carry the previous tile's
    /// last ones), a share after each MFMA. A wave issues in order and an accumulation chain
    /// keeps it waiting for the matrix pipe, so adds placed after a block's whole chain leave
    /// the pipe idle while they issue; placed between MFMAs whose sums they do not read,
    /// they issue while the pipe runs. The lag keeps `passes + 3` wait states between a
    /// block's last MFMA and the first read of its sums, so no `s_nop` is needed. The last
    /// tile (the drain) adds its own trailing blocks after its MFMAs.
    pub(super) fn bf_dot(&mut self) {
        let c = *self.c();
        let op = self.mfma_op();
        let steps = (c.tile.2 / c.mfma.k) as usize;
        let rps = (c.mfma.k / c.lane_groups() * c.ab_bytes() / 4) as u16;
        let (fa, fb) = (self.cp[0].frags.clone(), self.cp[1].frags.clone());
        let bf = self.bf.as_ref().expect("block-scaled fp8");
        let (tmp, (sa, sb), pend, lag, flush) =
            (bf.tmp.clone(), bf.sets[bf.cur].clone(), bf.pend.clone(), bf.lag, bf.flush);
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
        let nb = blocks.len();
        if !self.bf.as_ref().expect("bf").tmp1.is_empty() {
            return self.bf_dot_carried(&blocks, steps, rps);
        }
        // Adds job `j`: (sums, scale) of the block it scales.
        let job = |j: usize| -> (usize, Reg) {
            if j < lag {
                (nb - lag + j, pend[j])
            } else {
                let (bm, bn) = blocks[j - lag];
                (bm * fb.len() + bn, scales[bn])
            }
        };
        let units = (c.acc_regs() / 2) as usize;
        for (q, &(bm, bn)) in blocks.iter().enumerate() {
            let t = whole(tmp[bm * fb.len() + bn]);
            let (ji, jw) = if lag > 0 { job(q) } else { (0, scales[0]) };
            for st in 0..steps {
                let (a, b) = (sub(fa[bm], st as u16 * rps, rps as u8), sub(fb[bn], st as u16 * rps, rps as u8));
                let inst = self.mfma_inst(op, t, a, b);
                // The group's first step starts the sum at 0 (srcC = inline 0).
                self.ie(if st == 0 { with_src_c(inst, int(0)) } else { inst });
                for u in (units * st / steps..units * (st + 1) / steps).filter(|_| lag > 0) {
                    self.bf_add(ji, 2 * u as u16, &tmp, jw);
                }
            }
        }
        let trailing = &blocks[nb - lag..];
        if lag == 0 {
            let (bm, bn) = blocks[0];
            for u in 0..units {
                self.bf_add(bm * fb.len() + bn, 2 * u as u16, &tmp, scales[bn]);
            }
        } else if flush {
            for &(bm, bn) in trailing {
                for u in 0..units {
                    self.bf_add(bm * fb.len() + bn, 2 * u as u16, &tmp, scales[bn]);
                }
            }
        } else {
            for (w, &(_, bn)) in pend.iter().zip(trailing) {
                self.i(Op::V_MUL_F32, &[sub(*w, 0, 1), whole(sa), whole(sb[bn])]);
            }
        }
    }

    /// Carried sums, the last tile (the drain; the loop's tiles are the schedule's slices):
    /// its MFMAs step by step over every block (no accumulation chain back to back), the
    /// previous tile's adds between them, then its own adds.
    fn bf_dot_carried(&mut self, blocks: &[(usize, usize)], steps: usize, rps: u16) {
        let op = self.mfma_op();
        let (fa, fb) = (self.cp[0].frags.clone(), self.cp[1].frags.clone());
        let cur = self.bf.as_ref().expect("bf").cur;
        let tmp = self.bf_sums(cur).to_vec();
        for st in 0..steps as u16 {
            for &(bm, bn) in blocks {
                let t = whole(tmp[bm * fb.len() + bn]);
                let inst = self.mfma_inst(op, t, sub(fa[bm], st * rps, rps as u8), sub(fb[bn], st * rps, rps as u8));
                self.ie(if st == 0 { with_src_c(inst, int(0)) } else { inst });
                self.bf_tick();
            }
        }
        let prod = self.bf.as_ref().expect("bf").prod[cur].clone();
        for i in 0..tmp.len() {
            for r in (0..self.c().acc_regs() as u16).step_by(2) {
                self.bf_add(i, r, &tmp, prod[i % fb.len()]);
            }
        }
    }

    /// `acc[i][r..r + 2] += tmp[i][r..r + 2] * w` (`w` broadcast from the low half of its
    /// pair): one `v_pk_fma_f32`, its sums read through VGPRs first when they are AGPRs.
    fn bf_add(&mut self, i: usize, r: u16, tmp: &[Reg], w: Reg) {
        self.bf_add_reg(i, r, tmp[i], w);
    }

    /// `acc[i][r..r + 2] += t[r..r + 2] * w`, `w` the high half of its pair when `hi` (both
    /// halves of the result taking it: `op_sel` and `op_sel_hi` bit 1 set).
    fn bf_add_sel(&mut self, i: usize, r: u16, t: Reg, w: Reg, hi: bool) {
        let acc = sub(self.acc[i], r, 2);
        let inst = Inst::new(Op::V_PK_FMA_F32, &[acc, sub(t, r, 2), whole(w), acc]);
        self.ie(if hi { inst.op_sel(0b010).op_sel_hi(0b111) } else { inst.op_sel_hi(0b101) });
    }

    /// `acc[i][r..r + 2] += t[r..r + 2] * w` ([`bf_add`](L::bf_add) on one register tuple).
    fn bf_add_reg(&mut self, i: usize, r: u16, tmp: Reg, w: Reg) {
        let acc = sub(self.acc[i], r, 2);
        let t = if tmp.file == RegFile::Agpr {
            // A VALU cannot read AGPRs: the pair through VGPRs first.
            let x = self.p.vreg(RegFile::Vgpr, 2);
            for h in 0..2 {
                self.i(Op::V_ACCVGPR_READ_B32, &[sub(x, h, 1), sub(tmp, r + h, 1)]);
            }
            whole(x)
        } else {
            sub(tmp, r, 2)
        };
        self.ie(Inst::new(Op::V_PK_FMA_F32, &[acc, t, whole(w), acc]).op_sel_hi(0b101));
    }
}

impl L<'_> {
    /// Whether the kernel sums its K steps into rotating temporaries ([`rotates`]).
    pub(super) fn bf_rotating(&self) -> bool {
        self.bf.as_ref().is_some_and(|bf| !bf.rot.is_empty())
    }

    /// Rotating temporaries: one MFMA of block `(bm, bn)` (`a`, `b` its operands) into the next
    /// temporary from srcC = 0, then, after an `s_nop` of [`rot_spacing`] wait states, the
    /// scaled adds of the oldest pending temporary when all of them are in use (the next MFMA
    /// writes it), or those adds left to a barrier (`defer`, [`Settle`]).
    pub(super) fn bf_rot_mfma(&mut self, bm: usize, bn: usize, a: O, b: O, defer: Settle) {
        let op = self.mfma_op();
        let nbn = self.cp[1].frags.len();
        // Adds deferred past a barrier ([`bf_rot_settle`](L::bf_rot_settle)) and not yet
        // emitted: before this MFMA overwrites their temporary.
        self.bf_rot_settle();
        let bf = self.bf.as_mut().expect("block-scaled fp8");
        let t = bf.rot[bf.rot_next];
        bf.rot_next = (bf.rot_next + 1) % bf.rot.len();
        bf.pending.push_back((bm * nbn + bn, t, bn));
        let inst = self.mfma_inst(op, whole(t), a, b);
        self.ie(with_src_c(inst, int(0)));
        let n = self.bf.as_ref().expect("bf").rot.len();
        if self.bf.as_ref().expect("bf").pending.len() < n {
            return;
        }
        if defer != Settle::None {
            self.bf.as_mut().expect("bf").hold = defer;
            return;
        }
        let x = rot_spacing(self.c());
        if x > 0 {
            self.i(Op::S_NOP, &[O::Imm(i64::from(x) - 1)]);
        }
        self.bf_rot_settle();
    }

    /// Rotating temporaries that the first tile adds before any MFMA wrote them (`1..R`,
    /// [`bf_rot_enter`](L::bf_rot_enter)), for the prologue to zero with the accumulators
    /// (`zero_accumulators`; `rotates` kernels take the prologue that calls it).
    pub(super) fn bf_rot_zeroed(&self) -> Vec<Reg> {
        self.bf.as_ref().map_or(vec![], |bf| bf.rot.iter().skip(1).copied().collect())
    }

    /// Rotating temporaries: the adds of the oldest pending temporaries while every one is
    /// pending (the next MFMA would overwrite the oldest). A slice's last MFMA leaves its adds
    /// to a barrier of the slim ping-pong ([`Settle`]): issued before the barrier that ends
    /// the dot cluster, they held it about 60 clocks past the cluster's last MFMA issue, the
    /// other wave of the SIMD waiting on it to start its cluster.
    pub(super) fn bf_rot_settle(&mut self) {
        let Some(bf) = self.bf.as_mut() else { return };
        bf.hold = Settle::None;
        let n = bf.rot.len();
        while n > 0 && self.bf.as_ref().expect("bf").pending.len() >= n {
            self.bf_rot_pop();
        }
    }

    /// Rotating temporaries at a barrier of the loop schedule (`after`: just emitted): the
    /// deferred adds whose place it is ([`Settle`]).
    pub(super) fn bf_rot_barrier(&mut self, after: bool) {
        let Some(bf) = self.bf.as_mut() else { return };
        match (bf.hold, after) {
            (Settle::AfterNext, true) | (Settle::BeforeNext, false) => self.bf_rot_settle(),
            (Settle::BeforeSecond, true) => {
                bf.hold = Settle::BeforeNext;
                if let Some(cur) = bf.refill.take() {
                    self.bf_refill(cur);
                }
            }
            _ => {}
        }
    }

    /// After the loop body of buffer `cur` (its schedule emitted): its set's refill, where
    /// no barrier of the body took it ([`Fp8Blocks::refill`]).
    pub(super) fn bf_body_end(&mut self, cur: u32) {
        let Some(bf) = self.bf.as_mut() else { return };
        let left = bf.refill.take();
        if left.is_some() || bf.rot.is_empty() {
            self.bf_refill(cur);
        }
    }

    /// Rotating temporaries, at the start of a tile (a loop body or a drain, each reached from
    /// either body or from the setup): the state every tile ends in, the previous tile's last
    /// `R - 1` MFMAs pending in temporaries `1..R` (the tile's MFMAs are a multiple of `R`),
    /// the next MFMA into temporary 0. The setup zeroes temporaries `1..R` and the products,
    /// so the first tile adds zeros for them.
    fn bf_rot_enter(&mut self) {
        let c = *self.c();
        let (nbm, nbn) = (self.cp[0].frags.len(), self.cp[1].frags.len());
        let order: Vec<(usize, usize)> = (0..c.tile.2 / c.mfma.k)
            .flat_map(|_| (0..nbm).flat_map(move |bm| (0..nbn).map(move |bn| (bm, bn))))
            .collect();
        let bf = self.bf.as_mut().expect("bf");
        let r = bf.rot.len();
        assert!(order.len().is_multiple_of(r), "a tile's MFMAs are a multiple of the temporaries");
        let want: std::collections::VecDeque<(usize, Reg, usize)> = order[order.len() + 1 - r..]
            .iter()
            .enumerate()
            .map(|(j, &(bm, bn))| (bm * nbn + bn, bf.rot[j + 1], bn))
            .collect();
        // A body's emission ends in this state; a drain's flush leaves nothing.
        assert!(
            (bf.pending.is_empty() || bf.pending == want) && bf.rot_next == 0,
            "rotating temporaries: a tile ends in the state the next starts from"
        );
        bf.pending = want;
        bf.rot_next = 0;
        bf.stale = r - 1;
        if bf.stale == 0 {
            self.bf_rot_products();
        }
    }

    /// Rotating temporaries: the scaled adds of the oldest pending temporary (after the last
    /// of the previous tile's, this tile's scale products).
    fn bf_rot_pop(&mut self) {
        let Some((i, t, bn)) = self.bf.as_mut().expect("bf").pending.pop_front() else { return };
        let w = self.bf.as_ref().expect("bf").prod[0][bn / 2];
        for r in (0..self.c().acc_regs() as u16).step_by(2) {
            self.bf_add_sel(i, r, t, w, bn % 2 == 1);
        }
        let bf = self.bf.as_mut().expect("bf");
        if bf.stale > 0 {
            bf.stale -= 1;
            if bf.stale == 0 {
                self.bf_rot_products();
            }
        }
    }

    /// Rotating temporaries: the current tile's scale product of each N block (`sa * sb[j]`).
    fn bf_rot_products(&mut self) {
        let bf = self.bf.as_ref().expect("bf");
        let (sa, sb, prod) = (bf.sets[bf.cur].0, bf.sets[bf.cur].1.clone(), bf.prod[0].clone());
        for (bn, s) in sb.iter().enumerate() {
            self.i(Op::V_MUL_F32, &[sub(prod[bn / 2], bn as u16 % 2, 1), whole(sa), whole(*s)]);
        }
    }

    /// Rotating temporaries, after the last tile's MFMAs: every pending add.
    pub(super) fn bf_rot_flush(&mut self) {
        self.bf.as_mut().expect("bf").hold = Settle::None;
        while !self.bf.as_ref().expect("bf").pending.is_empty() {
            self.bf_rot_pop();
        }
    }
}

/// Whether each MFMA sums one K step of one block into one of a few rotating temporaries,
/// whose scaled adds follow a later MFMA (the slim ping-pong: its fragments hold one K step,
/// and the 128 accumulators leave no room for a whole tile's group sums).
pub fn rotates(c: &crate::ir::KernelConfig) -> bool {
    matches!(c.schedule, crate::schedule::Schedule::PingPongSlim { .. })
}

/// The rotating temporaries ([`rotates`]): two. On the `fp8pp` tile (8 blocks of 16 sums per
/// wave) the 128 accumulators, the 48 slim fragment registers, the scales and the addresses
/// leave room for two (249 VGPRs allocated); a third needs 16 more, past the 256 per lane that
/// two waves per SIMD leave. With two, a temporary's adds follow the next MFMA after an
/// `s_nop` ([`rot_spacing`]) that covers, with the gap before, the rest of its 20 wait states.
pub fn rot_temps(_c: &crate::ir::KernelConfig) -> usize {
    2
}

/// Wait states between an XDL MFMA and a VALU reading its result (hazard.rs: `passes + 3`,
/// passes taken as 16 for 32x32 shapes and 8 for 16x16, one more on gfx950; ISA.md §1.5).
fn xdl_to_valu(c: &crate::ir::KernelConfig) -> u32 {
    (if c.mfma.m == 32 { 19 } else { 11 }) + u32::from(c.arch == crate::ir::Arch::Gfx950)
}

/// Wait states ([`bf_rot_mfma`](L::bf_rot_mfma) puts an `s_nop` of them) between each MFMA of
/// the rotating temporaries and the scaled adds after it: with two temporaries the adds
/// after MFMA `k` read MFMA `k - 1`'s sums, and the `N` wait states they need (20 for a
/// 32x32 MFMA on gfx950, [`xdl_to_valu`]) span the previous gap, the previous adds (`a` =
/// `acc_regs / 2` packed FMAs) and MFMA `k`: `2x + a + 1 >= N`, `x = ceil((N - 1 - a) / 2)`
/// in every gap. Left to hazard.rs, the nops fall greedily as 11, 0, 11, 0 (`bsfp8pp`): one
/// gap in two held 1 + 11 + 8 = 20 issue slots, over the 16 (64 clocks) of the MFMA before
/// it, and the timing model showed the matrix pipe idle 16 clocks per pair of MFMAs (4096^3,
/// gfx950: MFMAs 64 and 80 clocks apart). With 6 in every gap each holds 15.
pub fn rot_spacing(c: &crate::ir::KernelConfig) -> u32 {
    let adds = c.acc_regs() / 2;
    (xdl_to_valu(c) - 1).saturating_sub(adds).div_ceil(2)
}

/// Blocks whose scaled adds trail their MFMAs: the fewest that put `passes + 3` wait states
/// (hazard.rs: 19 for a 32x32 MFMA, 20 on gfx950) between a block's last MFMA and its first
/// add, each block in between issuing its MFMAs and one block's adds (a `v_pk_fma_f32` per two
/// sums, after two `v_accvgpr_read`s when the sums are AGPRs); fewer than the blocks, so
/// that a tile's trailing adds read their sums before the next tile's MFMAs overwrite them
/// (none with one block: its adds follow its MFMAs).
pub fn add_lag(c: &crate::ir::KernelConfig) -> usize {
    let blocks = (c.blocks(Operand::A) * c.blocks(Operand::B)) as usize;
    let steps = (c.tile.2 / c.mfma.k) as usize;
    let per_unit = if sums_in_vgprs(c) { 1 } else { 3 };
    let per_block = steps + per_unit * (c.acc_regs() / 2) as usize;
    let need = xdl_to_valu(c) as usize;
    if blocks < 2 {
        return 0;
    }
    (1 + (need - 1).div_ceil(per_block)).min(blocks - 1)
}

/// Whether the group sums live in VGPRs (no AGPR reads before the scaled adds): where the
/// copies need no staging registers, gfx950's K-contiguous LDS-DMA (`fit::vgpr_estimate`);
/// and the interleave's two carried sets with 8 waves (`schedule::interleave8`), whose waves
/// hold a quarter of the tile's blocks each (two 32x32 blocks of 128x128 on 4x2 waves: 32
/// accumulators and 64 sums beside 16 staging and 48 fragment registers), where the 4-wave
/// form's four blocks would need 192. The scaled adds then read no AGPRs: one `v_pk_fma_f32`
/// per two sums instead of three instructions.
pub fn sums_in_vgprs(c: &crate::ir::KernelConfig) -> bool {
    (c.arch == crate::ir::Arch::Gfx950 && c.direct_to_lds == crate::ir::DmaPolicy::Auto && !carries_sums(c))
        || (carries_sums(c) && c.waves == 8)
}

/// Whether the sums are carried into the next tile (two sets, AGPRs or [`sums_in_vgprs`]): under the interleave
/// schedule, whose slices run every block's MFMAs K step by K step, no block's sum is complete
/// before the tile's last slice, so its scaled adds are spread over the next tile's MFMAs.
pub fn carries_sums(c: &crate::ir::KernelConfig) -> bool {
    matches!(c.schedule, crate::schedule::Schedule::Interleave { .. })
}

/// `inst` with its srcC (the MFMA's fourth operand) replaced.
pub(super) fn with_src_c(mut inst: Inst, c: O) -> Inst {
    inst.operands[3] = c;
    inst
}
