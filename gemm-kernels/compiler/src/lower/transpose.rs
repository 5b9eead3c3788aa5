//! The transpose pre-pass ([`crate::ir::SplitK::Transpose`], [`KernelConfig::transpose`]
//! (crate::ir::KernelConfig::transpose), arguments in `kernel_args.rs`): `Y = X^T` for a
//! column-major `rows x cols` matrix X of bytes.
//!
//! Why: gfx942 has no transposing LDS read, so a GEMM kernel reads an fp8 operand that is
//! contiguous along M/N by transposing it in registers and writing it to LDS in 2-byte pieces
//! (`lds::CopyGeom::kgroup`, `L::lds_store_group`); with both operands so (the column-major
//! `nt` kernel) the 8-wave ping-pong's slack does not absorb those writes and the matrix pipe
//! idles (gfx942 fp8 4096^3: 135.8 us against 118.4 for `tn`). The dispatcher transposes one
//! operand with this kernel first where the characterisation table says it pays (gemm-dispatch
//! `plan/transpose.rs`). The kernel is memory-bound: whole lines in, whole lines out.
//!
//! A workgroup of 4 waves moves the [`TRANSPOSE_TILE`](crate::ir::TRANSPOSE_TILE) block of X
//! at rows `i0 = 128 x`, columns `j0 = 128 y` (workgroup `(x, y)`):
//!
//! * Loads: lane `l` of wave `w` takes chunk `c = l % 8` (rows `16c .. 16c+15`) of the columns
//!   `j0 + 32w + 4g + v`, `g = l / 8`, `v = 0..3`: four `buffer_load_dwordx4`, each reading 8
//!   whole 128-byte columns per wave (whole lines where X's columns are line-aligned). Columns
//!   past `cols` and chunks past `rows` load through an offset past NUM_RECORDS (zeros, ISA.md
//!   §2.3); a chunk that crosses `rows` reads the next column's first bytes, which land in
//!   columns of Y past `rows` and are never stored.
//! * Regrouping: the lane holds a 16 x 4 byte block (16 rows of 4 consecutive columns); each
//!   4 x 4 quarter is transposed with 8 `v_perm_b32` (byte `i` of the result = byte `sel_i`
//!   of `{src0, src1}`, ISA.md §1.4): two pair-interleaves, then their halves joined, giving per
//!   row `i` the dword `X[i, j..j+4]`, i.e. 4 consecutive bytes of Y's column `i`.
//! * LDS (16 KiB, Y's 128 columns of 128 bytes): the dword of row `i`, columns `32w + 4g ..`
//!   is written with `ds_write_b32` to 16-byte chunk `(2w + g/4) ^ (i/16 % 8)` of column `i`.
//!   The XOR swizzle spreads the 32 lanes of a half-wave (8 chunks `c` x 4 dwords `g % 4`, one
//!   row offset per instruction) over all 32 banks (ISA.md §2.5); padding cannot, since the
//!   rows `16c` of one instruction are 16 apart and `16 x pitch` hits at most 2 dword banks
//!   mod 32 for any pitch a multiple of 4.
//! * Stores: after one barrier, lane `l` of wave `w` reads chunk `c = l % 8` of Y's columns
//!   `32w + 8s + l / 8` (`s = 0..3`) with `ds_read_b128` and stores it with
//!   `buffer_store_dwordx4` at `Y[j0 + 16c + (i0 + i) ldy]`: 8 whole columns of 128 bytes per
//!   wave and instruction. Columns of Y past `rows` store through an offset past NUM_RECORDS
//!   (dropped). A workgroup whose block crosses `cols` (a uniform branch) stores each vector
//!   that crosses it byte by byte (`buffer_store_byte` / `_d16_hi`, each byte past `cols`
//!   dropped the same way), so the padding of Y's columns is never written.

use super::{lit, log2, L};
use crate::program::{sub, whole};
use gemm_isa::operand::{int, v, VCC};
use gemm_isa::{Inst, Op, Operand as O, Reg, RegFile};

/// Bytes of LDS: Y's 128 columns of 128 bytes.
pub const TRANSPOSE_LDS_BYTES: u32 = 128 * 128;

/// `v_perm_b32` selectors: `[a0, b0, a1, b1]` and `[a2, b2, a3, b3]` of `(src0 = b, src1 = a)`,
/// then the low and high halves of two such interleaves joined.
const SEL_LO2: u32 = 0x0501_0400;
const SEL_HI2: u32 = 0x0703_0602;
const SEL_LO: u32 = 0x0504_0100;
const SEL_HI: u32 = 0x0706_0302;

impl L<'_> {
    /// The whole transpose kernel (module docs).
    pub(super) fn transpose(&mut self) {
        let (mt, nt) = (self.c().tile.0, self.c().tile.1);
        debug_assert_eq!((mt, nt), (128, 128));
        let a = self.p.vreg(RegFile::Sgpr, 8);
        self.i(
            Op::S_LOAD_DWORDX8,
            &[whole(a), gemm_isa::operand::sr(0, 2), O::Imm(crate::kernel_args::T_OFF_X as i64)],
        );
        let w = |i: u16| sub(a, i, 1);
        let (x_lo, x_hi, y_lo, y_hi, rows, cols, ldx, ldy) = (w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7));
        let (tid, lane, wave, c, g) = (self.vv(), self.vv(), self.vv(), self.vv(), self.vv());
        self.i(Op::V_AND_B32, &[whole(tid), lit(0x3ff), v(0)]);
        self.i(Op::V_AND_B32, &[whole(lane), int(63), whole(tid)]);
        self.i(Op::V_LSHRREV_B32, &[whole(wave), int(6), whole(tid)]);
        self.i(Op::V_AND_B32, &[whole(c), int(7), whole(lane)]);
        self.i(Op::V_LSHRREV_B32, &[whole(g), int(3), whole(lane)]);
        let (i0, j0) = (self.sv(), self.sv());
        self.i(Op::S_LSHL_B32, &[whole(i0), gemm_isa::operand::s(2), int(log2(mt))]);
        self.i(Op::S_LSHL_B32, &[whole(j0), gemm_isa::operand::s(3), int(log2(nt))]);
        let oob = self.vv();
        self.i(Op::V_MOV_B32, &[whole(oob), lit(super::OOB)]);
        let srd_x = self.srd(x_lo, x_hi, rows, cols, ldx, 1);
        let srd_y = self.srd(y_lo, y_hi, cols, rows, ldy, 1);

        // Loads: column j0 + 32w + 4g + v, rows i0 + 16c ..
        let (col, row) = (self.vv(), self.vv());
        self.i(Op::V_LSHLREV_B32, &[whole(col), int(5), whole(wave)]);
        self.i(Op::V_LSHL_ADD_U32, &[whole(col), whole(g), int(2), whole(col)]);
        self.i(Op::V_ADD_U32, &[whole(col), whole(j0), whole(col)]);
        self.i(Op::V_LSHL_ADD_U32, &[whole(row), whole(c), int(4), whole(i0)]);
        let off0 = self.vv();
        self.i(Op::V_MUL_LO_U32, &[whole(off0), whole(col), ldx]);
        self.i(Op::V_ADD_U32, &[whole(off0), whole(off0), whole(row)]);
        self.i(Op::V_CMP_GT_I32, &[VCC, rows, whole(row)]);
        self.i(Op::V_CNDMASK_B32, &[whole(off0), whole(oob), whole(off0), VCC]);
        let mut vecs = vec![];
        for vi in 0..4u32 {
            let (cv, off) = (self.vadd(col, vi), self.vv());
            if vi == 0 {
                self.i(Op::V_MOV_B32, &[whole(off), whole(off0)]);
            } else {
                let step = self.sv();
                self.i(Op::S_MUL_I32, &[whole(step), ldx, lit(vi)]);
                self.i(Op::V_ADD_U32, &[whole(off), whole(step), whole(off0)]);
            }
            self.i(Op::V_CMP_GT_I32, &[VCC, cols, whole(cv)]);
            self.i(Op::V_CNDMASK_B32, &[whole(off), whole(oob), whole(off), VCC]);
            let d = self.vn(4);
            self.ie(Inst::new(Op::BUFFER_LOAD_DWORDX4, &[whole(d), whole(off), whole(srd_x), int(0)]).offen());
            vecs.push(d);
        }

        // LDS write address: column 16c (+ 4k + r by the instruction offset), chunk
        // (2w + g/4) ^ c, dword g % 4.
        let (t, waddr) = (self.vv(), self.vv());
        self.i(Op::V_LSHRREV_B32, &[whole(t), int(2), whole(g)]);
        self.i(Op::V_LSHL_ADD_U32, &[whole(t), whole(wave), int(1), whole(t)]);
        self.i(Op::V_XOR_B32, &[whole(t), whole(c), whole(t)]);
        self.i(Op::V_LSHLREV_B32, &[whole(t), int(4), whole(t)]);
        self.i(Op::V_LSHL_ADD_U32, &[whole(waddr), whole(c), int(11), whole(t)]);
        let g3 = self.vv();
        self.i(Op::V_AND_B32, &[whole(g3), int(3), whole(g)]);
        self.i(Op::V_LSHL_ADD_U32, &[whole(waddr), whole(g3), int(2), whole(waddr)]);
        let sel: Vec<Reg> = [SEL_LO2, SEL_HI2, SEL_LO, SEL_HI]
            .into_iter()
            .map(|x| {
                let r = self.sv();
                self.i(Op::S_MOV_B32, &[whole(r), lit(x)]);
                r
            })
            .collect();
        for k in 0..4u16 {
            let perm = |l: &mut Self, src0: O, src1: O, s: Reg| {
                let r = l.vv();
                l.i(Op::V_PERM_B32, &[whole(r), src0, src1, whole(s)]);
                r
            };
            let d = |x: usize| sub(vecs[x], k, 1);
            let (lab, hab) = (perm(self, d(1), d(0), sel[0]), perm(self, d(1), d(0), sel[1]));
            let (lcd, hcd) = (perm(self, d(3), d(2), sel[0]), perm(self, d(3), d(2), sel[1]));
            let rows4 = [
                perm(self, whole(lcd), whole(lab), sel[2]),
                perm(self, whole(lcd), whole(lab), sel[3]),
                perm(self, whole(hcd), whole(hab), sel[2]),
                perm(self, whole(hcd), whole(hab), sel[3]),
            ];
            for (r, x) in rows4.into_iter().enumerate() {
                let off = (4 * u32::from(k) + r as u32) * 128;
                self.ie(Inst::new(Op::DS_WRITE_B32, &[whole(waddr), whole(x)]).offset(off as i32));
            }
        }
        self.i(Op::S_BARRIER, &[]);

        // Reads: column 32w + 8s + g, chunk c ^ (2w + s/2); the two halves s/2 = 0, 1.
        let raddr: Vec<Reg> = (0..2u32)
            .map(|h| {
                let (key, r) = (self.vv(), self.vv());
                self.i(Op::V_LSHL_ADD_U32, &[whole(key), whole(wave), int(1), lit(h)]);
                self.i(Op::V_XOR_B32, &[whole(key), whole(c), whole(key)]);
                self.i(Op::V_LSHLREV_B32, &[whole(key), int(4), whole(key)]);
                self.i(Op::V_LSHLREV_B32, &[whole(r), int(5), whole(wave)]);
                self.i(Op::V_ADD_U32, &[whole(r), whole(g), whole(r)]);
                self.i(Op::V_LSHL_ADD_U32, &[whole(r), whole(r), int(7), whole(key)]);
                self.vadd(r, 16 * 128 * h)
            })
            .collect();
        let outs: Vec<Reg> = (0..4u32)
            .map(|s| {
                let d = self.vn(4);
                let off = (s % 2) * 8 * 128;
                self.ie(Inst::new(Op::DS_READ_B128, &[whole(d), whole(raddr[(s / 2) as usize])]).offset(off as i32));
                d
            })
            .collect();

        // Store offsets: Y column i0 + 32w + 8s + g at byte j0 + 16c; past `rows`: dropped.
        let (ycol, jb) = (self.vv(), self.vv());
        self.i(Op::V_LSHLREV_B32, &[whole(ycol), int(5), whole(wave)]);
        self.i(Op::V_ADD_U32, &[whole(ycol), whole(g), whole(ycol)]);
        self.i(Op::V_ADD_U32, &[whole(ycol), whole(i0), whole(ycol)]);
        self.i(Op::V_LSHL_ADD_U32, &[whole(jb), whole(c), int(4), whole(j0)]);
        let offs: Vec<Reg> = (0..4u32)
            .map(|s| {
                let (yc, o) = (self.vadd(ycol, 8 * s), self.vv());
                self.i(Op::V_MUL_LO_U32, &[whole(o), whole(yc), ldy]);
                self.i(Op::V_ADD_U32, &[whole(o), whole(jb), whole(o)]);
                self.i(Op::V_CMP_GT_I32, &[VCC, rows, whole(yc)]);
                self.i(Op::V_CNDMASK_B32, &[whole(o), whole(oob), whole(o), VCC]);
                o
            })
            .collect();
        // A block wholly inside `cols` stores whole vectors.
        let (edge, end) = (self.p.label(), self.p.label());
        let last = self.sv();
        self.i(Op::S_ADD_U32, &[whole(last), whole(j0), lit(nt)]);
        self.i(Op::S_CMP_GT_U32, &[whole(last), cols]);
        self.p.branch(Op::S_CBRANCH_SCC1, edge);
        for (d, o) in outs.iter().zip(&offs) {
            self.ie(Inst::new(Op::BUFFER_STORE_DWORDX4, &[whole(*d), whole(*o), whole(srd_y), int(0)]).offen());
        }
        self.p.branch(Op::S_BRANCH, end);
        self.p.place(edge);
        // The block crosses `cols`: `nb` = bytes of the lane's vector inside it (any sign);
        // whole vectors as above, a crossing one byte by byte.
        let nb = self.vv();
        self.i(Op::V_SUB_U32, &[whole(nb), cols, whole(jb)]);
        let part = self.vv();
        self.i(Op::V_CMP_GT_I32, &[VCC, int(16), whole(nb)]);
        self.i(Op::V_CNDMASK_B32, &[whole(part), int(0), whole(nb), VCC]);
        for (d, o) in outs.iter().zip(&offs) {
            let whole_o = self.vv();
            self.i(Op::V_CNDMASK_B32, &[whole(whole_o), whole(*o), whole(oob), VCC]);
            self.ie(Inst::new(Op::BUFFER_STORE_DWORDX4, &[whole(*d), whole(whole_o), whole(srd_y), int(0)]).offen());
            for dw in 0..4u16 {
                let hi8 = self.vv();
                self.i(Op::V_LSHRREV_B32, &[whole(hi8), int(8), sub(*d, dw, 1)]);
                for (byte, src, op) in [
                    (0u32, sub(*d, dw, 1), Op::BUFFER_STORE_BYTE),
                    (1, whole(hi8), Op::BUFFER_STORE_BYTE),
                    (2, sub(*d, dw, 1), Op::BUFFER_STORE_BYTE_D16_HI),
                    (3, whole(hi8), Op::BUFFER_STORE_BYTE_D16_HI),
                ] {
                    let b = 4 * u32::from(dw) + byte;
                    let ob = self.vv();
                    self.i(Op::V_CMP_LT_I32, &[VCC, lit(b), whole(part)]);
                    self.i(Op::V_CNDMASK_B32, &[whole(ob), whole(oob), whole(*o), VCC]);
                    self.ie(Inst::new(op, &[src, whole(ob), whole(srd_y), int(0)]).offen().offset(b as i32));
                }
            }
            // VCC again: the vector is partial (`16 > nb`), for the next vector's whole store.
            self.i(Op::V_CMP_GT_I32, &[VCC, int(16), whole(nb)]);
        }
        self.p.place(end);
        self.i(Op::S_ENDPGM, &[]);
    }
}
