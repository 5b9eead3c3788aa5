//! Decode kernels with the waves on the rows ([`crate::schedule::Schedule::DecodeRows`],
//! [`KernelConfig::decode_rows`](crate::ir::KernelConfig::decode_rows)): the Linear layer's
//! `C (m x n) = A^T B` of `lower/decode.rs`, A the weights, B the activations, where `n` is
//! 16..64.
//!
//! Why: a CU holds 32 KiB of loads in flight (its TCP, the timing model's `params.rs`), and
//! a `buffer_load_dwordx4` in the MFMA operand layout (16 rows x 64 bytes) holds 16 128-byte
//! lines for 1 KiB of data. In `decode.rs` the activations are loaded the same way by every
//! wave of every workgroup, so at `n = 32` half the lines a CU has in flight are B's, which
//! the L2 serves anyway, and the weights stream from HBM with half the capacity
//! (`gemm sweep --decode --detail`: gfx950 bf16 28672x32x4096 at 36% HBM busy). Here:
//!
//! * Each wave owns its own `blocks(A)` 16-row blocks of A over the whole K step (wave grid
//!   `(W, 1)`), loaded as in `decode.rs` (lane `l`: row `l % 16`, the 16 bytes at K byte
//!   `16 (l / 16) + 64 u` of the step; the `nt` streaming hint, ISA.md §2.2), two register
//!   sets alternating so one step's loads fly while the other's MFMAs run.
//! * B's `NT x KT` slice of each K step is copied once per workgroup: thread `t` of the
//!   `64 W` takes the 16-byte vectors `t + 64 W v` of the slice in column order (`4 unroll`
//!   vectors per column, so 8 consecutive lanes cover one 128-byte line), global -> VGPR
//!   with two staging sets (the next step's copies are issued with its A loads), then
//!   `ds_write_b128` into one of two LDS buffers (columns `KT * size + 16` bytes apart:
//!   the 16 columns of an MFMA operand read start 4 banks apart, ISA.md §2.5). One barrier
//!   per step publishes the buffer; the buffer written at step `s` was last read at step
//!   `s - 2`, before the barrier of step `s - 1`.
//! * Each wave reads its B operands with `ds_read_b128` in the layout of A's registers and
//!   runs `blocks(A) x NT/16` accumulators; the whole K of its rows is its own, so no
//!   partial sums meet in LDS and every wave runs the common epilogue on its rows
//!   (`L::epilogue` with `wm` = the wave).
//! * The K tail (`k` not a multiple of the step) runs once after one more barrier (the
//!   buffer it writes may be the last step's), with the masks of `decode.rs`: vectors
//!   wholly past `k` load through an offset past NUM_RECORDS (zeros, ISA.md §2.3),
//!   straddling ones have their bytes from `k` on cleared, in both operands. Rows of A past
//!   `m` and columns of B past `n` load zeros the same way.
//! * Grouped (mixture-of-experts decode): group and tile from the device-side problem table
//!   (`L::grouped_setup`, `L::tile_index`), as in `decode.rs`.
//! * Split-K partial kernels (`catalogue::SPLITK_DECODE_ROWS`, for layers whose few weight rows
//!   leave most CUs idle: 4096 rows are 32 workgroups of 128): the prologue's `split_setup`
//!   moves A and B to the split's first K index and sets `k` to its chunk (`kchunk`, a multiple
//!   of the K step, shorter or empty for the last splits), so the whole steps and the masked
//!   tail above run on the chunk as on a whole K; the common epilogue writes the raw f32 sums
//!   (fp8: times the row and column scale vectors) into the split's slab.

use super::{lit, log2, L};
use crate::ir::{Operand, SplitK};
use crate::program::{sub, whole};
use gemm_isa::operand::{int, VCC};
use gemm_isa::{Inst, Op, Operand as O, Reg, RegFile};

/// The loop state of a [`crate::schedule::Schedule::DecodeRows`] kernel.
struct Rows {
    srd_a: Reg,
    srd_b: Reg,
    /// Per row block of the wave: the lane's byte offset of its row at K byte `16 * lgrp`,
    /// or past NUM_RECORDS for rows past `m`.
    off_a: Vec<Reg>,
    /// Per copy of B: the thread's byte offset of its column at K byte `16 * kv`, or past
    /// NUM_RECORDS for columns past `n`.
    off_b: Vec<Reg>,
    /// The thread's LDS byte address of its first copy in buffer 0.
    wr: Reg,
    /// The lane's LDS byte address of its column `lrow` at K byte `16 * lgrp` in buffer 0.
    rd: Reg,
    /// The K byte offset of the next step (the loads' `soffset`).
    kb: Reg,
    /// `16 * lgrp` (A) and `16 * kv` (B copies): the vectors' K bytes within a chunk.
    lg16: Reg,
    kv16: Reg,
}

/// One step's registers: A per row block and B's staged copies, `4 * unroll` and 4 VGPRs.
struct Set {
    a: Vec<Reg>,
    b: Vec<Reg>,
}

/// Bytes between B's two LDS buffers ([`crate::fit::decode_rows_col_bytes`] per column).
fn buffer_bytes(c: &crate::ir::KernelConfig) -> u32 {
    c.tile.1 * crate::fit::decode_rows_col_bytes(c)
}

impl L<'_> {
    /// The whole kernel (module docs).
    pub(super) fn decode_rows(&mut self) {
        let c = *self.c();
        let u = c.decode_unroll().expect("a decode kernel");
        let e = c.ab_bytes();
        let (rb, cb) = (c.blocks(Operand::A), c.tile.1 / 16);
        let threads = 64 * c.waves;
        let per_col = 4 * u;
        let copies = c.tile.1 * per_col / threads;
        let col_bytes = crate::fit::decode_rows_col_bytes(&c);
        // A split-K partial kernel reads its split index from the workgroup id z (`s4`, one
        // more system SGPR after the ids x and y: ISA.md §5.3, RSRC2 and the SGPR order), which
        // `decode_prologue`'s `split_setup` turns into the split's K range (`k` becomes the
        // chunk's, so the loop count and the masked tail below follow it), operand origins and
        // f32 slab; the common epilogue then writes raw sums, fp8 scale vectors applied.
        if c.split == SplitK::Partial {
            self.p.extra_system_sgprs = 1;
        }
        let super::decode::DecodeFrame { ws, m0, n0, m, n, k, lda, ldb, srd_a, srd_b } = self.decode_prologue(true);
        // The wave's first row: m0 + 16 * blocks(A) * wave.
        let mw = self.sv();
        self.i(Op::S_MUL_I32, &[whole(mw), whole(ws), lit(16 * rb)]);
        self.i(Op::S_ADD_U32, &[whole(mw), whole(mw), whole(m0)]);
        let lg16 = self.vv();
        self.i(Op::V_LSHLREV_B32, &[whole(lg16), int(4), whole(self.lgrp)]);
        let off_a = (0..rb).map(|r| self.block_offset(mw, r, m, lda, lg16)).collect();
        // B's copies: thread t's column `t / per_col` (+ `threads / per_col` per copy), its
        // vector `kv = t % per_col` of the column's step.
        let (col, kv16) = (self.vv(), self.vv());
        self.i(Op::V_LSHRREV_B32, &[whole(col), int(log2(per_col)), whole(self.tid)]);
        self.i(Op::V_AND_B32, &[whole(kv16), lit(per_col - 1), whole(self.tid)]);
        self.i(Op::V_LSHLREV_B32, &[whole(kv16), int(4), whole(kv16)]);
        let off_b = (0..copies).map(|v| self.column_offset(n0, col, v * threads / per_col, n, ldb, kv16)).collect();
        let wr = self.vv();
        let kc = self.k3(col_bytes);
        self.i(Op::V_MAD_U32_U24, &[whole(wr), whole(col), kc, whole(kv16)]);
        let rd = self.vv();
        let kc = self.k3(col_bytes);
        self.i(Op::V_MAD_U32_U24, &[whole(rd), whole(self.lrow), kc, whole(lg16)]);
        let kb = self.sv();
        self.i(Op::S_MOV_B32, &[whole(kb), int(0)]);
        let st = Rows { srd_a, srd_b, off_a, off_b, wr, rd, kb, lg16, kv16 };
        for _ in 0..rb * cb {
            let a = self.p.vreg(RegFile::Agpr, 4);
            for r in 0..4 {
                self.i(Op::V_ACCVGPR_WRITE_B32, &[sub(a, r, 1), int(0)]);
            }
            self.acc.push(a);
        }
        let sets: Vec<Set> = (0..2)
            .map(|_| Set {
                a: (0..rb).map(|_| self.vn((4 * u) as u8)).collect(),
                b: (0..copies).map(|_| self.vn(4)).collect(),
            })
            .collect();
        let bregs: Vec<Reg> = (0..cb).map(|_| self.vn((4 * u) as u8)).collect();
        let (cnt, rem) = (self.sv(), self.sv());
        self.i(Op::S_LSHR_B32, &[whole(cnt), k, int(log2(c.tile.2))]);
        self.i(Op::S_AND_B32, &[whole(rem), k, lit(c.tile.2 - 1)]);
        let step = c.tile.2 * e;
        let (lp, last0, last1, tail, done) =
            (self.p.label(), self.p.label(), self.p.label(), self.p.label(), self.p.label());
        self.i(Op::S_CMP_EQ_U32, &[whole(cnt), int(0)]);
        self.p.branch(Op::S_CBRANCH_SCC1, tail);
        self.rows_loads(&st, &sets[0], None);
        self.i(Op::S_ADD_U32, &[whole(kb), whole(kb), lit(step)]);
        self.i(Op::S_SUB_U32, &[whole(cnt), whole(cnt), int(1)]);
        self.p.place(lp);
        for (cur, exit) in [(0usize, last0), (1, last1)] {
            self.i(Op::S_CMP_EQ_U32, &[whole(cnt), int(0)]);
            self.p.branch(Op::S_CBRANCH_SCC1, exit);
            self.rows_loads(&st, &sets[1 - cur], None);
            self.i(Op::S_ADD_U32, &[whole(kb), whole(kb), lit(step)]);
            self.i(Op::S_SUB_U32, &[whole(cnt), whole(cnt), int(1)]);
            self.rows_step(&st, &sets[cur], &bregs, cur as u32);
        }
        self.p.branch(Op::S_BRANCH, lp);
        self.p.loops.push((lp, last0));
        self.p.iteration = Some((lp, last1));
        for (cur, l) in [(0usize, last0), (1, last1)] {
            self.p.place(l);
            self.rows_step(&st, &sets[cur], &bregs, cur as u32);
            if cur == 0 {
                self.p.branch(Op::S_BRANCH, tail);
            }
        }
        self.p.place(tail);
        self.i(Op::S_CMP_EQ_U32, &[whole(rem), int(0)]);
        self.p.branch(Op::S_CBRANCH_SCC1, done);
        let kbytes = self.sv();
        self.i(Op::S_LSHL_B32, &[whole(kbytes), k, int(log2(e))]);
        self.rows_loads(&st, &sets[0], Some(kbytes));
        // The last whole step may have read buffer 0: every wave past it before the write.
        self.i(Op::S_BARRIER, &[]);
        self.rows_step(&st, &sets[0], &bregs, 0);
        self.p.place(done);
        self.epilogue();
    }

    /// Thread's byte offset of column `n0 + col + add` at K byte `kv16`, or past
    /// NUM_RECORDS when that column is not below `n`.
    fn column_offset(&mut self, n0: Reg, col: Reg, add: u32, n: O, ld: O, kv16: Reg) -> Reg {
        let e = self.c().ab_bytes();
        let j = self.vv();
        self.i(Op::V_ADD_U32, &[whole(j), whole(n0), whole(col)]);
        let j = self.vadd(j, add);
        let off = self.vv();
        self.i(Op::V_MUL_LO_U32, &[whole(off), whole(j), ld]);
        self.i(Op::V_LSHLREV_B32, &[whole(off), int(log2(e)), whole(off)]);
        self.i(Op::V_ADD_U32, &[whole(off), whole(kv16), whole(off)]);
        self.i(Op::V_CMP_GT_I32, &[VCC, n, whole(j)]);
        let o = self.vv();
        self.i(Op::V_CNDMASK_B32, &[whole(o), whole(self.oob), whole(off), VCC]);
        o
    }

    /// One step's loads into `set`: B's copies first (the barrier of the step waits for
    /// them alone), then the `unroll` loads of each of the wave's row blocks. With `kbytes`
    /// (the tail: `k` in bytes) each vector is checked against `k` as in `decode.rs`.
    fn rows_loads(&mut self, st: &Rows, set: &Set, kbytes: Option<Reg>) {
        let u = self.c().decode_unroll().expect("a decode kernel");
        // `at`: the vectors' K byte within the step (plus the step's `kb`).
        let masked = |l: &mut Self, at: Reg, add: u32, offs: &[Reg]| -> (Vec<Reg>, Option<Vec<Reg>>) {
            match kbytes {
                None => (offs.to_vec(), None),
                Some(kbytes) => {
                    let p = l.vv();
                    l.i(Op::V_ADD_U32, &[whole(p), whole(st.kb), whole(at)]);
                    let p = l.vadd(p, add);
                    let (offs, masks) = l.k_masks(p, kbytes, offs);
                    (offs, Some(masks))
                }
            }
        };
        let (offs, masks) = masked(self, st.kv16, 0, &st.off_b);
        for (o, r) in offs.iter().zip(&set.b) {
            let inst =
                Inst::new(Op::BUFFER_LOAD_DWORDX4, &[whole(*r), whole(*o), whole(st.srd_b), whole(st.kb)]).offen();
            self.ie(inst);
        }
        self.clear_past_k(&set.b, 0, masks.as_deref());
        for uu in 0..u {
            let (offs, masks) = masked(self, st.lg16, 64 * uu, &st.off_a);
            for (o, r) in offs.iter().zip(&set.a) {
                // A is read once: a streaming hint (ISA.md §2.2), so it does not evict B.
                let inst = Inst::new(
                    Op::BUFFER_LOAD_DWORDX4,
                    &[sub(*r, 4 * uu as u16, 4), whole(*o), whole(st.srd_a), whole(st.kb)],
                )
                .offen()
                .offset((uu * 64) as i32)
                .nt();
                self.ie(inst);
            }
            self.clear_past_k(&set.a, 4 * uu as u16, masks.as_deref());
        }
    }

    /// The tail's masks of the vectors starting at K byte `p` of their rows (`decode.rs`'s
    /// rule): `v = kbytes - p` bytes are inside K; `v <= 0`: the offsets go past NUM_RECORDS;
    /// dword `d` keeps `clamp(v - 4d, 0, 4)` bytes. Returns the offsets and the four masks.
    fn k_masks(&mut self, p: Reg, kbytes: Reg, offs: &[Reg]) -> (Vec<Reg>, Vec<Reg>) {
        let left = self.vv();
        self.i(Op::V_SUB_U32, &[whole(left), whole(kbytes), whole(p)]);
        let mut masks = vec![];
        for d in 0..4i64 {
            let (t, bits, m) = (self.vv(), self.vv(), self.vv());
            self.i(Op::V_ADD_U32, &[whole(t), int(-4 * d), whole(left)]);
            self.i(Op::V_MED3_I32, &[whole(t), whole(t), int(0), int(4)]);
            self.i(Op::V_LSHLREV_B32, &[whole(bits), int(3), whole(t)]);
            self.i(Op::V_BFM_B32, &[whole(m), whole(bits), int(0)]);
            self.i(Op::V_CMP_GT_I32, &[VCC, int(4), whole(t)]);
            self.i(Op::V_CNDMASK_B32, &[whole(m), int(-1), whole(m), VCC]);
            masks.push(m);
        }
        self.i(Op::V_CMP_LT_I32, &[VCC, int(0), whole(left)]);
        let offs = offs
            .iter()
            .map(|o| {
                let r = self.vv();
                self.i(Op::V_CNDMASK_B32, &[whole(r), whole(self.oob), whole(*o), VCC]);
                r
            })
            .collect();
        (offs, masks)
    }

    /// Clears the bytes past K of the vectors at dword `at` of `regs` (`masks`: the tail).
    fn clear_past_k(&mut self, regs: &[Reg], at: u16, masks: Option<&[Reg]>) {
        let Some(masks) = masks else { return };
        for r in regs {
            for (d, mask) in masks.iter().enumerate() {
                let x = sub(*r, at + d as u16, 1);
                self.i(Op::V_AND_B32, &[x, whole(*mask), x]);
            }
        }
    }

    /// One step on `set` through LDS buffer `buf`: B's copies written, the barrier that
    /// publishes them, the wave's B operands read, then per MFMA K step every accumulator.
    fn rows_step(&mut self, st: &Rows, set: &Set, bregs: &[Reg], buf: u32) {
        let c = *self.c();
        let u = c.decode_unroll().expect("a decode kernel");
        let threads = 64 * c.waves;
        let col_bytes = crate::fit::decode_rows_col_bytes(&c);
        let base = buf * buffer_bytes(&c);
        for (v, r) in set.b.iter().enumerate() {
            let off = base + v as u32 * (threads / (4 * u)) * col_bytes;
            self.ie(Inst::new(Op::DS_WRITE_B128, &[whole(st.wr), whole(*r)]).offset(off as i32));
        }
        self.i(Op::S_BARRIER, &[]);
        for (j, b) in bregs.iter().enumerate() {
            for uu in 0..u {
                let off = base + 16 * j as u32 * col_bytes + 64 * uu;
                self.ie(Inst::new(Op::DS_READ_B128, &[sub(*b, 4 * uu as u16, 4), whole(st.rd)]).offset(off as i32));
            }
        }
        let op = self.mfma_op();
        let dw = (c.mfma.k / 4 * c.ab_bytes() / 4) as u16;
        let steps = 4 * u as u16 / dw;
        let cb = bregs.len();
        for q in 0..steps {
            for (r, a) in set.a.iter().enumerate() {
                for (j, b) in bregs.iter().enumerate() {
                    let acc = whole(self.acc[r * cb + j]);
                    let inst = self.mfma_inst(op, acc, sub(*a, q * dw, dw as u8), sub(*b, q * dw, dw as u8));
                    self.ie(inst);
                }
            }
        }
    }
}
