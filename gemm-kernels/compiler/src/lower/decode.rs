//! Decode kernels ([`crate::schedule::Schedule::Decode`], [`KernelConfig::decode`]): GEMMs
//! whose time is the time to read A once. In a Linear layer at decode (`y = x W^T`, x of
//! M = 1..256 rows) the column-major problem is `C (m x n) = A^T B` with A the weights
//! (`m` large, K-contiguous rows) and B the activations (`n` small, K-contiguous columns).
//!
//! The design answers to what binds: HBM bytes of A. Nothing of A goes through LDS (each
//! weight is used by one workgroup once), so every load is a `buffer_load_dwordx4` straight
//! into the registers an MFMA reads, with the `nt` hint (streaming, ISA.md §2.2 cache
//! policy bits; vLLM's `wvSplitK` loads its weights with `__builtin_nontemporal_load`):
//!
//! * Lane `l` of a wave holds, for each 16-row block of A (and 16-column block of B), row
//!   (column) `l % 16` and the 16 bytes at K byte `16 * (l / 16)` of a 64-byte K chunk: one
//!   load brings 16 rows x 64 bytes. That is the 16x16 MFMA's operand layout (ISA.md §1.1:
//!   lane `l` holds row `l % 16`, K group `l / 16`) with the K order permuted inside the
//!   chunk: an MFMA that reads `K/4` elements per lane takes the first or second half of the
//!   16 bytes (two MFMAs per load: gfx942's `16x16x16` f16/bf16 and `16x16x32` fp8), all of
//!   them (gfx950's `16x16x32` f16/bf16), or two loads (gfx950's fp8 `16x16x128`, 32 bytes
//!   per lane). A and B are loaded alike, so every product pairs the same K index.
//! * The workgroup's waves split K: in each iteration wave `w` takes the `unroll`
//!   consecutive chunks at `w * unroll` (K byte `64 * (w * unroll + u)` of the workgroup's
//!   `waves * unroll * 64`-byte step), so each row of A is read as one contiguous run per
//!   iteration. Two register sets alternate: the loads of the next step are in flight while
//!   the MFMAs of this one run (`waitcnt.rs` waits for exactly the set in use).
//! * The K tail (`k` not a multiple of the step) runs once with per-lane masks: a vector
//!   wholly past `k` loads through an offset past NUM_RECORDS (zeros, ISA.md §2.3); one that
//!   straddles `k` has its bytes at and past `k` cleared in both operands (the padding of a
//!   row may hold anything, NaN included, and `0 * NaN` is NaN).
//! * Rows of A past `m` and columns of B past `n` load zeros the same way.
//! * At the end waves `1..W` write their partial sums to LDS and wave 0 adds them in wave
//!   order (deterministic) and runs the common epilogue (`L::epilogue`: alpha, beta, bias,
//!   activation, fp8 scales, split-K partial slabs).
//! * Grouped (mixture-of-experts decode): the workgroup's group and tile come from the
//!   device-side problem table as in every grouped kernel (`L::grouped_setup`, `L::tile_index`).

use super::{lit, log2, L};
use crate::ir::SplitK;
use crate::program::{sub, whole};
use gemm_isa::operand::{int, VCC};
use gemm_isa::{Inst, Op, Operand as O, Reg, RegFile};

/// One register set: per 16-row block of A and per 16-column block of B, `4 * unroll`
/// VGPRs (the `unroll` loads in K order).
struct Set {
    a: Vec<Reg>,
    b: Vec<Reg>,
}

/// The decode kernel's loop state.
struct Streams {
    srd_a: Reg,
    srd_b: Reg,
    /// Per block: the lane's byte offset of its row (column) at K byte `16 * lgrp`, or an
    /// offset past NUM_RECORDS for rows past `m` (columns past `n`).
    off_a: Vec<Reg>,
    off_b: Vec<Reg>,
    /// The wave's K byte offset of its next load set (the loads' `soffset`).
    kb: Reg,
    /// `16 * lgrp`.
    lg16: Reg,
}

/// What [`L::decode_prologue`] leaves for the rest of a decode kernel.
pub(super) struct DecodeFrame {
    /// The wave index (an SGPR).
    pub ws: Reg,
    /// The tile's first row and column.
    pub m0: Reg,
    pub n0: Reg,
    /// The kernel arguments m, n, k, lda, ldb.
    pub m: O,
    pub n: O,
    pub k: O,
    pub lda: O,
    pub ldb: O,
    /// Buffer resources of A and B (range-checked: rows past m, columns past n load zeros).
    pub srd_a: Reg,
    pub srd_b: Reg,
}

impl L<'_> {
    /// The start both decode families share (this file's `decode`, `decode_rows.rs`): the
    /// arguments (through the group's table entry when grouped, then the split-K setup of a
    /// partial kernel), the lane's row `l % 16` and K group `l / 16`, the wave index, the tile's
    /// origin and the buffer resources. `waves_on_rows`: the waves own rows of the tile
    /// (`decode_rows`) rather than splitting K over the same rows.
    pub(super) fn decode_prologue(&mut self, waves_on_rows: bool) -> DecodeFrame {
        let c = *self.c();
        let e = c.ab_bytes();
        // Grouped kernels (mixture-of-experts decode: many experts, a few tokens each): the
        // workgroup finds its group's entry and its tile within it (`L::grouped_setup`).
        let base = if c.grouped {
            let (entry, local) = self.grouped_setup();
            self.local_tile = Some(local);
            whole(entry)
        } else {
            gemm_isa::operand::sr(0, 2)
        };
        self.load_args(base);
        if c.split == SplitK::Partial {
            self.split_setup();
        }
        let (tid, lane, lrow, lgrp, wave, zero) = (self.vv(), self.vv(), self.vv(), self.vv(), self.vv(), self.vv());
        self.i(Op::V_AND_B32, &[whole(tid), lit(0x3ff), gemm_isa::operand::v(0)]);
        self.i(Op::V_AND_B32, &[whole(lane), int(63), whole(tid)]);
        self.i(Op::V_AND_B32, &[whole(lrow), int(15), whole(lane)]);
        self.i(Op::V_LSHRREV_B32, &[whole(lgrp), int(4), whole(lane)]);
        self.i(Op::V_LSHRREV_B32, &[whole(wave), int(6), whole(tid)]);
        self.i(Op::V_MOV_B32, &[whole(zero), int(0)]);
        let ws = self.sv();
        self.i(Op::V_READFIRSTLANE_B32, &[whole(ws), whole(wave)]);
        // Decode (K split over the waves): every wave on the same rows. Decode rows: wave `w` on
        // its own rows, so `wm` is the wave index.
        let wm = if waves_on_rows { wave } else { zero };
        (self.tid, self.lane, self.lrow, self.lgrp, self.wm, self.wn) = (tid, lane, lrow, lgrp, wm, zero);
        let oob = self.vv();
        self.i(Op::V_MOV_B32, &[whole(oob), lit(super::OOB)]);
        self.oob = oob;
        let (tm, tn) = if c.grouped { self.tile_index() } else { (gemm_isa::operand::s(2), gemm_isa::operand::s(3)) };
        let (m0, n0) = (self.sv(), self.sv());
        self.i(Op::S_LSHL_B32, &[whole(m0), tm, int(log2(c.tile.0))]);
        self.i(Op::S_LSHL_B32, &[whole(n0), tn, int(log2(c.tile.1))]);
        (self.m0, self.n0) = (m0, n0);
        let (m, n, k, lda, ldb) = (self.arg(6), self.arg(7), self.arg(8), self.arg(9), self.arg(10));
        let srd_a = self.srd(self.arg(0), self.arg(1), k, m, lda, e);
        let srd_b = self.srd(self.arg(2), self.arg(3), k, n, ldb, e);
        DecodeFrame { ws, m0, n0, m, n, k, lda, ldb, srd_a, srd_b }
    }

    /// The whole decode kernel (module docs).
    pub(super) fn decode(&mut self) {
        let c = *self.c();
        let crate::schedule::Schedule::Decode { unroll } = c.schedule else {
            unreachable!("decode() runs decode kernels")
        };
        let u = unroll as u32;
        let e = c.ab_bytes();
        let (rb, cb) = (c.tile.0 / 16, c.tile.1 / 16);
        if c.split == SplitK::Partial {
            self.p.extra_system_sgprs = 1;
        }
        let DecodeFrame { ws, m0, n0, m, n, k, lda, ldb, srd_a, srd_b } = self.decode_prologue(false);
        let lg16 = self.vv();
        self.i(Op::V_LSHLREV_B32, &[whole(lg16), int(4), whole(self.lgrp)]);
        let off_a = (0..rb).map(|r| self.block_offset(m0, r, m, lda, lg16)).collect();
        let off_b = (0..cb).map(|j| self.block_offset(n0, j, n, ldb, lg16)).collect();
        let kb = self.sv();
        self.i(Op::S_MUL_I32, &[whole(kb), whole(ws), lit(u * 64)]);
        let st = Streams { srd_a, srd_b, off_a, off_b, kb, lg16 };
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
                b: (0..cb).map(|_| self.vn((4 * u) as u8)).collect(),
            })
            .collect();
        // Whole steps of the workgroup (`kt = waves * unroll * 64 / e` elements each) and the
        // elements left for the masked tail.
        let (cnt, rem) = (self.sv(), self.sv());
        self.i(Op::S_LSHR_B32, &[whole(cnt), k, int(log2(c.tile.2))]);
        self.i(Op::S_AND_B32, &[whole(rem), k, lit(c.tile.2 - 1)]);
        let step = c.tile.2 * e;
        let (lp, last0, last1, tail, done) =
            (self.p.label(), self.p.label(), self.p.label(), self.p.label(), self.p.label());
        self.i(Op::S_CMP_EQ_U32, &[whole(cnt), int(0)]);
        self.p.branch(Op::S_CBRANCH_SCC1, tail);
        self.decode_loads(&st, &sets[0], None);
        self.i(Op::S_ADD_U32, &[whole(kb), whole(kb), lit(step)]);
        self.i(Op::S_SUB_U32, &[whole(cnt), whole(cnt), int(1)]);
        self.p.place(lp);
        for (cur, exit) in [(0usize, last0), (1, last1)] {
            self.i(Op::S_CMP_EQ_U32, &[whole(cnt), int(0)]);
            self.p.branch(Op::S_CBRANCH_SCC1, exit);
            self.decode_loads(&st, &sets[1 - cur], None);
            self.i(Op::S_ADD_U32, &[whole(kb), whole(kb), lit(step)]);
            self.i(Op::S_SUB_U32, &[whole(cnt), whole(cnt), int(1)]);
            self.decode_dot(&sets[cur]);
        }
        self.p.branch(Op::S_BRANCH, lp);
        self.p.loops.push((lp, last0));
        self.p.iteration = Some((lp, last1));
        for (cur, l) in [(0usize, last0), (1, last1)] {
            self.p.place(l);
            self.decode_dot(&sets[cur]);
            if cur == 0 {
                self.p.branch(Op::S_BRANCH, tail);
            }
        }
        self.p.place(tail);
        self.i(Op::S_CMP_EQ_U32, &[whole(rem), int(0)]);
        self.p.branch(Op::S_CBRANCH_SCC1, done);
        let kbytes = self.sv();
        self.i(Op::S_LSHL_B32, &[whole(kbytes), k, int(log2(e))]);
        self.decode_loads(&st, &sets[0], Some(kbytes));
        self.decode_dot(&sets[0]);
        self.p.place(done);
        self.decode_reduce(ws);
        self.epilogue();
    }

    /// The lane's byte offset of row (column) `origin + 16*blk + lrow` at K byte
    /// `16 * lgrp`, or past NUM_RECORDS when that row is not below `limit`.
    pub(super) fn block_offset(&mut self, origin: Reg, blk: u32, limit: O, ld: O, lg16: Reg) -> Reg {
        let e = self.c().ab_bytes();
        let i = self.vv();
        self.i(Op::V_ADD_U32, &[whole(i), whole(origin), whole(self.lrow)]);
        let i = self.vadd(i, 16 * blk);
        let off = self.vv();
        self.i(Op::V_MUL_LO_U32, &[whole(off), whole(i), ld]);
        self.i(Op::V_LSHLREV_B32, &[whole(off), int(log2(e)), whole(off)]);
        self.i(Op::V_ADD_U32, &[whole(off), whole(lg16), whole(off)]);
        self.i(Op::V_CMP_GT_I32, &[VCC, limit, whole(i)]);
        let o = self.vv();
        self.i(Op::V_CNDMASK_B32, &[whole(o), whole(self.oob), whole(off), VCC]);
        o
    }

    /// The `unroll` loads of every block into `set` at the wave's K offset. With `kbytes`
    /// (the tail: `k` in bytes), each lane's vector is checked against `k`: wholly past it,
    /// the load goes past NUM_RECORDS; straddling it, the bytes from `k` on are cleared.
    fn decode_loads(&mut self, st: &Streams, set: &Set, kbytes: Option<Reg>) {
        let c = *self.c();
        let crate::schedule::Schedule::Decode { unroll } = c.schedule else { unreachable!() };
        for uu in 0..unroll as u32 {
            let (offs_a, offs_b, masks) = match kbytes {
                None => (st.off_a.clone(), st.off_b.clone(), None),
                Some(kbytes) => {
                    let (offs_a, offs_b, masks) = self.tail_masks(st, kbytes, uu);
                    (offs_a, offs_b, Some(masks))
                }
            };
            let loads = offs_a
                .iter()
                .zip(&set.a)
                .map(|(o, r)| (*o, *r, st.srd_a, true))
                .chain(offs_b.iter().zip(&set.b).map(|(o, r)| (*o, *r, st.srd_b, false)));
            let loads: Vec<_> = loads.collect();
            for &(o, r, srd, weights) in &loads {
                let mut inst =
                    Inst::new(Op::BUFFER_LOAD_DWORDX4, &[sub(r, 4 * uu as u16, 4), whole(o), whole(srd), whole(st.kb)])
                        .offen()
                        .offset((uu * 64) as i32);
                if weights {
                    // A is read once: a streaming hint, so it does not evict B, which every
                    // workgroup reads.
                    inst = inst.nt();
                }
                self.ie(inst);
            }
            if let Some(masks) = masks {
                for &(_, r, _, _) in &loads {
                    for (d, mask) in masks.iter().enumerate() {
                        let x = sub(r, 4 * uu as u16 + d as u16, 1);
                        self.i(Op::V_AND_B32, &[x, whole(*mask), x]);
                    }
                }
            }
        }
    }

    /// The tail's per-lane offsets and dword masks for load `uu`: the lane's vector starts at
    /// byte `p = kb + 64*uu + 16*lgrp` of its row; `v = kbytes - p` bytes of it are inside
    /// K. `v <= 0`: offset past NUM_RECORDS; dword `d` keeps `clamp(v - 4d, 0, 4)` bytes
    /// (`v_bfm_b32` of that many bytes' bits, all ones from 4 on).
    fn tail_masks(&mut self, st: &Streams, kbytes: Reg, uu: u32) -> (Vec<Reg>, Vec<Reg>, Vec<Reg>) {
        let p = self.vv();
        self.i(Op::V_ADD_U32, &[whole(p), whole(st.kb), whole(st.lg16)]);
        let p = self.vadd(p, 64 * uu);
        let left = self.vv();
        self.i(Op::V_SUB_U32, &[whole(left), whole(kbytes), whole(p)]);
        let mut masks = vec![];
        for d in 0..4i64 {
            let (t, bits, m) = (self.vv(), self.vv(), self.vv());
            self.i(Op::V_ADD_U32, &[whole(t), int(-4 * d), whole(left)]);
            self.i(Op::V_MED3_I32, &[whole(t), whole(t), int(0), int(4)]);
            self.i(Op::V_LSHLREV_B32, &[whole(bits), int(3), whole(t)]);
            self.i(Op::V_BFM_B32, &[whole(m), whole(bits), int(0)]);
            // t < 4: the partial mask; else every byte.
            self.i(Op::V_CMP_GT_I32, &[VCC, int(4), whole(t)]);
            self.i(Op::V_CNDMASK_B32, &[whole(m), int(-1), whole(m), VCC]);
            masks.push(m);
        }
        self.i(Op::V_CMP_LT_I32, &[VCC, int(0), whole(left)]);
        let mut pick = |offs: &[Reg]| -> Vec<Reg> {
            offs.iter()
                .map(|o| {
                    let r = self.vv();
                    self.i(Op::V_CNDMASK_B32, &[whole(r), whole(self.oob), whole(*o), VCC]);
                    r
                })
                .collect()
        };
        let (a, b) = (pick(&st.off_a), pick(&st.off_b));
        (a, b, masks)
    }

    /// The MFMAs of one register set: per MFMA K step (`K/4` elements = `op` bytes per
    /// lane, a half, one or two loads), every block of C, so consecutive MFMAs write
    /// different accumulators where there are several.
    fn decode_dot(&mut self, set: &Set) {
        let c = *self.c();
        let crate::schedule::Schedule::Decode { unroll } = c.schedule else { unreachable!() };
        let op = self.mfma_op();
        let dw = (c.mfma.k / 4 * c.ab_bytes() / 4) as u16;
        let steps = 4 * unroll as u16 / dw;
        let cb = set.b.len();
        for q in 0..steps {
            for (r, a) in set.a.iter().enumerate() {
                for (j, b) in set.b.iter().enumerate() {
                    let acc = whole(self.acc[r * cb + j]);
                    let inst = self.mfma_inst(op, acc, sub(*a, q * dw, dw as u8), sub(*b, q * dw, dw as u8));
                    self.ie(inst);
                }
            }
        }
    }

    /// Waves `1..W` park their accumulators in LDS (1 KiB per block: lane `l`'s four
    /// registers at `16 l`) and end; wave 0 adds them in wave order into its own.
    fn decode_reduce(&mut self, ws: Reg) {
        let c = *self.c();
        if c.waves == 1 {
            return;
        }
        let nb = self.acc.len() as u32;
        let addr = self.vv();
        self.i(Op::V_LSHLREV_B32, &[whole(addr), int(4), whole(self.lane)]);
        let first = self.p.label();
        self.i(Op::S_CMP_EQ_U32, &[whole(ws), int(0)]);
        self.p.branch(Op::S_CBRANCH_SCC1, first);
        // Waves 1..: their slot `(w - 1) * nb + b`.
        let (wbase, wslot) = (self.sv(), self.vv());
        self.i(Op::S_SUB_U32, &[whole(wbase), whole(ws), int(1)]);
        self.i(Op::S_MUL_I32, &[whole(wbase), whole(wbase), lit(nb * 1024)]);
        self.i(Op::V_ADD_U32, &[whole(wslot), whole(wbase), whole(addr)]);
        for (b, acc) in self.acc.clone().into_iter().enumerate() {
            let t = self.vn(4);
            for r in 0..4 {
                self.i(Op::V_ACCVGPR_READ_B32, &[sub(t, r, 1), sub(acc, r, 1)]);
            }
            self.ie(Inst::new(Op::DS_WRITE_B128, &[whole(wslot), whole(t)]).offset(b as i32 * 1024));
        }
        self.i(Op::S_BARRIER, &[]);
        self.i(Op::S_ENDPGM, &[]);
        self.p.place(first);
        self.i(Op::S_BARRIER, &[]);
        for (b, acc) in self.acc.clone().into_iter().enumerate() {
            let x = self.vn(4);
            for r in 0..4 {
                self.i(Op::V_ACCVGPR_READ_B32, &[sub(x, r, 1), sub(acc, r, 1)]);
            }
            for w in 1..c.waves {
                let t = self.vn(4);
                let off = ((w - 1) * nb + b as u32) * 1024;
                self.ie(Inst::new(Op::DS_READ_B128, &[whole(t), whole(addr)]).offset(off as i32));
                for r in 0..4 {
                    self.i(Op::V_ADD_F32, &[sub(x, r, 1), sub(x, r, 1), sub(t, r, 1)]);
                }
            }
            for r in 0..4 {
                self.i(Op::V_ACCVGPR_WRITE_B32, &[sub(acc, r, 1), sub(x, r, 1)]);
            }
        }
    }
}
