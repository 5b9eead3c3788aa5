//! Lowering: the passed IR to machine instructions on virtual registers, with the
//! address arithmetic of every tile operation. `regalloc.rs`, `waitcnt.rs` and
//! `hazard.rs` then make the program executable.
//!
//! Wave state at entry (ISA.md §5.3 "Initial wave state"): `s[0:1]` kernarg pointer,
//! `s2`/`s3` workgroup id x/y, `v0` packed work-item id (x in bits 9:0). Workgroup `(x, y)`
//! computes the C tile at rows `x*MT`, columns `y*NT`; the waves form a `WM x WN` grid of
//! `MT/WM x NT/WN` sub-tiles (wave `w` at `(w % WM, w / WM)`); each wave runs
//! `MT/WM/M x NT/WN/N` blocks of `M x N` MFMAs (16x16 or 32x32).

use crate::ir::{Arch, Copy, KTile, Kernel, LoadKind, MfmaShape, Operand, SplitK, TileOp};

mod block_fp8;
mod decode;
mod decode_rows;
mod mx;
mod transpose;
use crate::kernel_args as ka;
use crate::lds::{self, CopyGeom};
use crate::program::{sub, whole, Item, Program};
pub use block_fp8::carries_sums as fp8_block_carries_sums;
pub use block_fp8::sums_in_vgprs as fp8_block_sums_in_vgprs;
pub use block_fp8::{rot_temps as fp8_block_rot_temps, rotates as fp8_block_rotates};
use gemm_core::DType;
use gemm_isa::operand::{int, s, sr, v, VCC};
use gemm_isa::{Inst, Op, Operand as O, Reg, RegFile};
pub use mx::lds_bytes as mx_lds_bytes;
pub use mx::schedule_ok as mx_schedule_ok;
pub use transpose::TRANSPOSE_LDS_BYTES;

/// A per-lane offset one past any NUM_RECORDS the kernel accepts (spans must stay below
/// 2 GiB): loads through it return 0 and stores through it are dropped (ISA.md §2.3).
pub const OOB: u32 = 0x8000_0000;

/// Why lowering failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    #[error("pass `{0}` has not been applied; the lowering needs its result")]
    PassMissing(&'static str),
    #[error("unsupported configuration: {0}")]
    Unsupported(String),
}

struct Copier {
    geom: CopyGeom,
    srd: Reg,
    /// Per-vector global byte offsets of loop tile 0 (advanced each iteration).
    offs: Vec<Reg>,
    /// Scalar byte step from one K tile to the next.
    kadv: O,
    /// Scalar byte offset of the last K tile.
    last_off: Reg,
    /// K left in the last tile (the operand's bytes for MX kernels).
    kr: Reg,
    sidx: Reg,
    cidx: Reg,
    /// Staging VGPRs per vector: 4 packed dwords, or 8 unpacked elements (element loads):
    /// the set in use ([`L::use_set`]).
    stage: Vec<Reg>,
    /// The staging sets: one, or two for a register-staged operand of a three-stage
    /// pipeline (`passes/pipeline.rs`).
    stage_sets: Vec<Vec<Reg>>,
    /// LDS write addresses: per vector (K-contiguous) or per vector and element.
    waddr: Vec<Vec<(Reg, u32)>>,
    /// LDS read addresses per 16-byte piece `h` (K-major tiles), or per MFMA block (M/N-major
    /// tiles, `lds::mn_major`: the `ds_read_b64_tr_b16`s of piece `h`, half `j` add
    /// `(8h + 4j)` rows as the instruction offset, the fp8 `_b8`s `(16h + 8j)`).
    raddr: Vec<Reg>,
    /// The quadrant schedule's B: the read addresses of the wave's N blocks in the other
    /// group's B half (`raddr` then holds those in the group's own half); else empty.
    raddr2: Vec<Reg>,
    frags: Vec<Reg>,
    loop_kind: LoadKind,
    /// Direct-to-LDS: per DMA instruction, each lane's global byte offset (loop tile 0).
    dma_offs: Vec<Reg>,
    /// Direct-to-LDS: this wave's LDS byte offset of its first DMA slot in buffer 0.
    dma_m0: Reg,
    /// Direct-to-LDS: the K tile's byte offset, as the loads' SGPR `soffset` (one add per
    /// tile instead of one per DMA).
    dma_soff: Reg,
    /// Transposed fp8 copies: the per-lane `v_perm_b32` selectors (pair low, pair high,
    /// join low, join high), rows of a pair exchanged in the lanes of
    /// `lds::CopyGeom::swap_halves`.
    tsel: Option<[Reg; 4]>,
}

/// The fp8 kernels' optional scale vectors: a buffer resource each (NUM_RECORDS 0 for a null
/// pointer, so the loads return 0 and stay inside memory) and an SGPR-pair lane mask, all
/// ones when the vector is given, all zeros when not: `v_cndmask_b32` then picks the loaded
/// scale or 1.0 (held in `one`), so a missing vector multiplies by exactly 1.
#[derive(Clone, Copy, Debug)]
struct ScaleVecs {
    srd_row: Reg,
    srd_col: Reg,
    mask_row: Reg,
    mask_col: Reg,
    one: Reg,
}

/// One memory instruction of a schedule operation.
#[derive(Clone, Copy, Debug)]
enum MemItem {
    /// `(operand index, block, piece)` of a fragment read.
    Read((usize, usize, u32)),
    /// The same from the other LDS buffer (the next K tile's, `MOp::LdsReadNext`).
    ReadNext((usize, usize, u32)),
    /// LDS-DMA instruction `j` of an operand's next K tile.
    Dma(Operand, u32),
    /// The operand's K offset moves to the next tile.
    Advance(Operand),
    /// Global loads of staging vector `p` of an operand's next K tile (register-staged).
    Load(Operand, u32),
    /// Staging vector `p` of an operand into the other LDS buffer.
    Write(Operand, u32),
    /// MX scales staged through LDS (`lower/mx.rs`): operand `x`'s copy of the next K tile.
    ScaleCopy(usize),
    /// MX scales staged through LDS: every block's scales of the current tile.
    ScaleReads,
}

/// Where one pipeline step's tile operations go (`passes/pipeline.rs`): the LDS buffer
/// its barrier publishes and its reads take, the buffer (LDS-DMA) and staging set
/// (register-staged) its copies load into, and the buffer and set of its LDS writes.
#[derive(Clone, Copy, Debug)]
struct Pos {
    read: u32,
    load_buf: u32,
    load_set: usize,
    store_buf: u32,
    store_set: usize,
}

impl Pos {
    /// Two stages, computing buffer `cur`: the next tile goes to the other buffer.
    fn two(cur: u32) -> Pos {
        Pos { read: cur, load_buf: 1 - cur, load_set: 0, store_buf: 1 - cur, store_set: 0 }
    }
    /// Three stages, computing tile `t` (`-1`: the prefetch before tile 0): tile `t` from
    /// buffer `t % 3`; the copies of tile `t+2` into buffer `(t+2) % 3` or staging set
    /// `(t+2) % 2`; the LDS writes of tile `t+1` from set `(t+1) % 2` into buffer
    /// `(t+1) % 3`.
    fn three(t: i64) -> Pos {
        let m = |x: i64, n: i64| x.rem_euclid(n) as u32;
        Pos {
            read: m(t, 3),
            load_buf: m(t + 2, 3),
            load_set: m(t + 2, 2) as usize,
            store_buf: m(t + 1, 3),
            store_set: m(t + 1, 2) as usize,
        }
    }
}

struct L<'a> {
    k: &'a Kernel,
    p: Program,
    arch: Arch,
    args: [O; 14],
    tid: Reg,
    lane: Reg,
    lrow: Reg,
    lgrp: Reg,
    wm: Reg,
    wn: Reg,
    m0: Reg,
    n0: Reg,
    cnt: Reg,
    cp: Vec<Copier>,
    acc: Vec<Reg>,
    /// A VGPR holding [`OOB`]: `v_cndmask_b32` already reads VCC over the constant bus,
    /// so its other source cannot be a literal or an SGPR on gfx9.
    oob: Reg,
    /// C's buffer resource (epilogue).
    srd_c: Reg,
    /// The SGPR holding 0x7fff (bf16 rounding on gfx942).
    k7fff: Reg,
    perm_hi: Reg,
    perm_lo: Reg,
    /// The bias vector's buffer resource (fused epilogues).
    srd_bias: Reg,
    clamp_lo: O,
    clamp_hi: O,
    /// fp8 kernels: `alpha * scale_a * scale_b` in a VGPR (uniform), and `scale_d`.
    alpha_scaled: Option<Reg>,
    scale_d: O,
    /// fp8: a VGPR pair holding `scale_d` in its low half (`scale_d_pair`).
    scale_d2: Option<Reg>,
    /// fp8 kernels: the per-row / per-column scale vectors (`kernel_args.rs`).
    scale_vecs: Option<ScaleVecs>,
    /// Where address registers for LDS offsets past the 16-bit DS offset field are
    /// computed: the end of the setup code (before the loop).
    hoist: usize,
    /// `(address register, 64 KiB multiple) -> shifted address register`.
    shifted: std::collections::BTreeMap<(u16, u32), Reg>,
    /// The wave's index in an SGPR (schedules with roles).
    wave_s: Option<Reg>,
    /// Grouped kernels: the workgroup's tile index within its group (`grouped_setup`).
    local_tile: Option<Reg>,
    /// The quadrant schedule (`schedule/quadrant.rs`): the wave's quarter of the N tile
    /// in its group's own B half and in the other one (`2*group + wn`, `2*(1-group) + wn`).
    quad: Option<(Reg, Reg)>,
    /// Phase counters (`schedule/phase.rs`), set by their `PhaseInit`.
    phase: Option<PhaseRegs>,
    /// MX kernels: the block-scale streams (`lower/mx.rs`).
    mx: Option<mx::MxScales>,
    /// Block-scaled fp8 kernels: the scale streams and group sums (`lower/block_fp8.rs`).
    bf: Option<block_fp8::Fp8Blocks>,
    /// The 16-byte pieces per lane group a fragment register holds
    /// (`schedule::frag_pieces`): all of the K tile's, or one slice's (slim ping-pong).
    fpieces: u32,
    /// Slim fragments: the LDS buffer of an `LdsToRegs` whose reads wait for the `Dot`
    /// after it (the two run one piece group at a time).
    deferred_read: Option<u32>,
}

/// The registers of the phase-counter sync (`schedule/phase.rs`).
#[derive(Clone, Copy, Debug)]
struct PhaseRegs {
    /// LDS address of counter 0 (counter 1 follows).
    caddr: Reg,
    /// LDS address of this wave's group's counter.
    own: Reg,
    /// 1 in lane 0, 0 elsewhere: what the signal adds (one per wave).
    sig: Reg,
    /// The thresholds of counters 0 and 1 at the next sync point.
    t0: Reg,
    t1: Reg,
    /// Waves per group: what a sync point adds to each threshold.
    per: u32,
}

fn log2(x: u32) -> i64 {
    x.trailing_zeros() as i64
}

fn lit(x: u32) -> O {
    int(x as i32 as i64)
}

impl L<'_> {
    fn i(&mut self, op: Op, ops: &[O]) {
        self.p.push(Inst::new(op, ops));
    }
    fn ie(&mut self, i: Inst) {
        self.p.push(i);
    }
    fn sv(&mut self) -> Reg {
        self.p.vreg(RegFile::Sgpr, 1)
    }
    fn vv(&mut self) -> Reg {
        self.p.vreg(RegFile::Vgpr, 1)
    }
    fn vn(&mut self, n: u8) -> Reg {
        self.p.vreg(RegFile::Vgpr, n)
    }
    /// A VOP3 source for the constant `x`: inline (0..=64), else an SGPR (gfx9 VOP3
    /// encodings take no literal; one SGPR fits the constant bus).
    fn k3(&mut self, x: u32) -> O {
        if x <= 64 {
            return int(x as i64);
        }
        let r = self.sv();
        self.i(Op::S_MOV_B32, &[whole(r), lit(x)]);
        whole(r)
    }
    /// `dst = src + add` (VGPR), or `src` itself when `add == 0`.
    fn vadd(&mut self, src: Reg, add: u32) -> Reg {
        if add == 0 {
            return src;
        }
        let d = self.vv();
        self.i(Op::V_ADD_U32, &[whole(d), lit(add), whole(src)]);
        d
    }
    fn c(&self) -> &crate::ir::KernelConfig {
        &self.k.config
    }

    /// A DS address and instruction offset for `addr + off`: the offset field has 16 bits
    /// (ISA.md §2.5), so the 64 KiB multiples of larger offsets go into a second address
    /// register, computed once at the end of the setup code.
    fn ds_off(&mut self, addr: Reg, off: u32) -> (Reg, i32) {
        if off <= 0xffff {
            return (addr, off as i32);
        }
        let hi = off & !0xffff;
        if let Some(r) = self.shifted.get(&(addr.index, hi)) {
            return (*r, (off - hi) as i32);
        }
        let r = self.vv();
        let add = Inst::new(Op::V_ADD_U32, &[whole(r), lit(hi), whole(addr)]);
        self.p.items.insert(self.hoist, Item::I(add));
        self.hoist += 1;
        self.shifted.insert((addr.index, hi), r);
        (r, (off - hi) as i32)
    }

    /// LDS byte address of `(row + row_add, lbyte + lbyte_add)` in `op`'s tile, swizzled
    /// ([`crate::ir::Swizzle::apply`]).
    fn lds_addr(&mut self, op: Operand, row: Reg, row_add: u32, lbyte: Reg, lbyte_add: u32) -> Reg {
        let c = *self.c();
        let sw = self.k.swizzle;
        let rb = lds::op_row_bytes(&c, op);
        let r = self.vadd(row, row_add);
        let lb = self.vadd(lbyte, lbyte_add);
        let lin = self.vv();
        let krb = self.k3(rb);
        self.i(Op::V_MAD_U32_U24, &[whole(lin), krb, whole(r), whole(lb)]);
        let a = if lds::mn_major(&c, op) {
            // The row's slot XOR (`lds::mn_xor`) lies below the row size: XOR the linear offset.
            let x = self.mn_xor_v(r);
            let a = self.vv();
            self.i(Op::V_XOR_B32, &[whole(a), whole(x), whole(lin)]);
            a
        } else if sw.xor > 1 {
            let x = self.vv();
            self.i(Op::V_BFE_U32, &[whole(x), whole(lin), int(4 + log2(sw.shift)), int(log2(sw.xor))]);
            self.i(Op::V_LSHLREV_B32, &[whole(x), int(4), whole(x)]);
            let a = self.vv();
            self.i(Op::V_XOR_B32, &[whole(a), whole(x), whole(lin)]);
            a
        } else {
            lin
        };
        self.vadd(a, lds::tile_base(&c, op))
    }

    /// `lds::mn_xor` of the row index in `row`, per lane.
    fn mn_xor_v(&mut self, row: Reg) -> Reg {
        let c = *self.c();
        let x = self.vv();
        if c.ab_bytes() == 1 {
            // fp8: slot row % 8.
            self.i(Op::V_AND_B32, &[whole(x), int(7), whole(row)]);
            self.i(Op::V_LSHLREV_B32, &[whole(x), int(5), whole(x)]);
            return x;
        }
        self.i(Op::V_AND_B32, &[whole(x), int(3), whole(row)]);
        if c.mfma.m == 16 {
            let t = self.vv();
            self.i(Op::V_BFE_U32, &[whole(t), whole(row), int(log2(c.tile.2 / c.lane_groups())), int(1)]);
            self.i(Op::V_LSHL_OR_B32, &[whole(x), whole(t), int(2), whole(x)]);
            self.i(Op::V_LSHLREV_B32, &[whole(x), int(5), whole(x)]);
        } else {
            self.i(Op::V_LSHLREV_B32, &[whole(x), int(6), whole(x)]);
        }
        x
    }

    fn arg(&self, i: usize) -> O {
        self.args[i]
    }

    /// Kernel arguments, tile origin, loop count, per-lane indices.
    fn setup(&mut self) {
        let c = *self.c();
        // The problem's arguments: from the kernarg segment, or, for grouped kernels, from
        // this workgroup's entry of the problem table (the same layout at offsets 0..56).
        let (base, local) = if c.grouped {
            let (entry, local) = self.grouped_setup();
            (whole(entry), Some(local))
        } else {
            (sr(0, 2), None)
        };
        self.local_tile = local;
        self.load_args(base);
        if c.split == SplitK::Partial {
            self.split_setup();
        }
        self.setup_tiles();
        self.mx_setup();
        self.bf_setup();
    }

    /// The problem's arguments (`kernel_args.rs`, offsets 0..56) from `base`: the kernarg
    /// segment or a grouped kernel's table entry.
    fn load_args(&mut self, base: O) {
        let a0 = self.p.vreg(RegFile::Sgpr, 8);
        let a1 = self.p.vreg(RegFile::Sgpr, 4);
        let a2 = self.p.vreg(RegFile::Sgpr, 2);
        self.i(Op::S_LOAD_DWORDX8, &[whole(a0), base, O::Imm(ka::OFF_A as i64)]);
        self.i(Op::S_LOAD_DWORDX4, &[whole(a1), base, O::Imm(ka::OFF_K as i64)]);
        self.i(Op::S_LOAD_DWORDX2, &[whole(a2), base, O::Imm(ka::OFF_ALPHA as i64)]);
        // a_lo a_hi b_lo b_hi c_lo c_hi m n k lda ldb ldc alpha beta
        self.args = [
            sub(a0, 0, 1),
            sub(a0, 1, 1),
            sub(a0, 2, 1),
            sub(a0, 3, 1),
            sub(a0, 4, 1),
            sub(a0, 5, 1),
            sub(a0, 6, 1),
            sub(a0, 7, 1),
            sub(a1, 0, 1),
            sub(a1, 1, 1),
            sub(a1, 2, 1),
            sub(a1, 3, 1),
            sub(a2, 0, 1),
            sub(a2, 1, 1),
        ];
    }

    /// The rest of the setup of a tiled kernel: lane and wave indices, the tile origin, the
    /// loop count, the copiers and the accumulators.
    fn setup_tiles(&mut self) {
        let c = *self.c();
        let (tid, lane, lrow, lgrp, wave, wm, wn) =
            (self.vv(), self.vv(), self.vv(), self.vv(), self.vv(), self.vv(), self.vv());
        self.i(Op::V_AND_B32, &[whole(tid), lit(0x3ff), v(0)]);
        self.i(Op::V_AND_B32, &[whole(lane), int(63), whole(tid)]);
        self.i(Op::V_AND_B32, &[whole(lrow), int(c.mfma.m as i64 - 1), whole(lane)]);
        self.i(Op::V_LSHRREV_B32, &[whole(lgrp), int(log2(c.mfma.m)), whole(lane)]);
        self.i(Op::V_LSHRREV_B32, &[whole(wave), int(6), whole(tid)]);
        if c.schedule == crate::schedule::Schedule::Quadrant {
            // schedule/quadrant.rs: wave w = 4*group + 2*wn + w%2, so w/2 = 2*group + wn is
            // its quarter of N in its own B half; wm = 2*group + w%2.
            let (own, other, t) = (self.vv(), self.vv(), self.vv());
            self.i(Op::V_LSHRREV_B32, &[whole(own), int(1), whole(wave)]);
            self.i(Op::V_XOR_B32, &[whole(other), int(2), whole(own)]);
            self.i(Op::V_AND_B32, &[whole(wn), int(1), whole(own)]);
            self.i(Op::V_AND_B32, &[whole(t), int(-2), whole(own)]);
            self.i(Op::V_AND_B32, &[whole(wm), int(1), whole(wave)]);
            self.i(Op::V_OR_B32, &[whole(wm), whole(t), whole(wm)]);
            self.quad = Some((own, other));
        } else {
            self.i(Op::V_AND_B32, &[whole(wm), int(c.wave_grid.0 as i64 - 1), whole(wave)]);
            self.i(Op::V_LSHRREV_B32, &[whole(wn), int(log2(c.wave_grid.0)), whole(wave)]);
        }
        (self.tid, self.lane, self.lrow, self.lgrp, self.wm, self.wn) = (tid, lane, lrow, lgrp, wm, wn);
        let oob = self.vv();
        self.i(Op::V_MOV_B32, &[whole(oob), lit(OOB)]);
        self.oob = oob;
        let (tm, tn) = self.tile_index();
        let (m0, n0) = (self.sv(), self.sv());
        self.i(Op::S_LSHL_B32, &[whole(m0), tm, int(log2(c.tile.0))]);
        self.i(Op::S_LSHL_B32, &[whole(n0), tn, int(log2(c.tile.1))]);
        let (t, nk, cnt, llast, kr) = (self.sv(), self.sv(), self.sv(), self.sv(), self.sv());
        let k = self.arg(8);
        let ks = c.k_step();
        self.i(Op::S_ADD_U32, &[whole(t), k, lit(ks - 1)]);
        if ks.is_power_of_two() {
            self.i(Op::S_LSHR_B32, &[whole(nk), whole(t), int(log2(ks))]);
        } else {
            mx::div_pow2_times_3(self, nk, t, ks / 3);
        }
        self.i(Op::S_MAX_U32, &[whole(nk), whole(nk), int(1)]);
        self.i(Op::S_SUB_U32, &[whole(cnt), whole(nk), int(1)]);
        if ks.is_power_of_two() {
            self.i(Op::S_LSHL_B32, &[whole(llast), whole(cnt), int(log2(ks))]);
        } else {
            self.i(Op::S_MUL_I32, &[whole(llast), whole(cnt), lit(ks)]);
        }
        self.i(Op::S_SUB_U32, &[whole(kr), k, whole(llast)]);
        (self.m0, self.n0, self.cnt) = (m0, n0, cnt);
        // MX operands of two widths: B's K bytes, last tile and tail (`lower/mx.rs`).
        let kb = self.mx_b_k(k, cnt).unwrap_or((k, llast, kr));
        for (op, (k, llast, kr)) in [(Operand::A, (k, llast, kr)), (Operand::B, kb)] {
            let cp = self.copier(op, llast, k, kr);
            self.cp.push(cp);
        }
        // Block-scaled fp8 adds scaled group sums with VALU FMAs: its accumulators are VGPRs.
        let valu_acc = c.block_scale == crate::ir::BlockScale::Fp8Blocks;
        for _ in 0..c.blocks(Operand::A) * c.blocks(Operand::B) {
            let file = if valu_acc { RegFile::Vgpr } else { RegFile::Agpr };
            let a = self.p.vreg(file, c.acc_regs() as u8);
            // The slim ping-pong: zeroed while the prologue's loads are in flight
            // (`prologue_loads_first`).
            if !loads_first(&c) {
                for r in 0..c.acc_regs() as u16 {
                    let op = if valu_acc { Op::V_MOV_B32 } else { Op::V_ACCVGPR_WRITE_B32 };
                    self.i(op, &[sub(a, r, 1), int(0)]);
                }
            }
            self.acc.push(a);
        }
    }

    /// Split-K partial kernels (`kernel_args.rs`): this workgroup's split `z` (`s4`, the
    /// workgroup id z) sums `l` in `[l0, l0 + kz)`, `l0 = z*kchunk`,
    /// `kz = clamp(k - l0, 0, kchunk)`. Rather than teach every copy a K origin, the
    /// problem is rewritten to the split's own: A and B start `l0` columns (or rows, for
    /// the K-contiguous storage) further on, `k = kz`, and C is slab `z` of the workspace
    /// (`ws + z*wstride`, 64-bit). The copies' range checks and K tail then follow `kz` as
    /// they follow `k` in a plain kernel; a split past the end (`kz = 0`) writes zeros.
    fn split_setup(&mut self) {
        let c = *self.c();
        let e = log2(c.ab_bytes());
        let (kchunk, wstride) = (self.arg(12), self.arg(13));
        let (k, lda, ldb) = (self.arg(8), self.arg(9), self.arg(10));
        let (l0, kz) = (self.sv(), self.sv());
        self.i(Op::S_MUL_I32, &[whole(l0), s(4), kchunk]);
        self.i(Op::S_SUB_U32, &[whole(kz), k, whole(l0)]);
        self.i(Op::S_MIN_I32, &[whole(kz), whole(kz), kchunk]);
        self.i(Op::S_MAX_I32, &[whole(kz), whole(kz), int(0)]);
        // Byte offset of K index l0 in each operand: along its contiguous dimension (A
        // transposed, B not) `l0 * size`, else `l0 * ld * size` (below 2^31: the span rule).
        let mut moved = vec![];
        for (lo, hi, ld, k_contiguous) in
            [(self.arg(0), self.arg(1), lda, c.trans_a), (self.arg(2), self.arg(3), ldb, !c.trans_b)]
        {
            let off = self.sv();
            if k_contiguous {
                self.i(Op::S_LSHL_B32, &[whole(off), whole(l0), int(e)]);
            } else {
                self.i(Op::S_MUL_I32, &[whole(off), whole(l0), ld]);
                self.i(Op::S_LSHL_B32, &[whole(off), whole(off), int(e)]);
            }
            let (nlo, nhi) = (self.sv(), self.sv());
            self.i(Op::S_ADD_U32, &[whole(nlo), lo, whole(off)]);
            self.i(Op::S_ADDC_U32, &[whole(nhi), hi, int(0)]);
            moved.extend([whole(nlo), whole(nhi)]);
        }
        let (wlo, whi, clo, chi) = (self.sv(), self.sv(), self.sv(), self.sv());
        self.i(Op::S_MUL_I32, &[whole(wlo), s(4), wstride]);
        self.i(Op::S_MUL_HI_U32, &[whole(whi), s(4), wstride]);
        self.i(Op::S_ADD_U32, &[whole(clo), self.arg(4), whole(wlo)]);
        self.i(Op::S_ADDC_U32, &[whole(chi), self.arg(5), whole(whi)]);
        self.args[..4].copy_from_slice(&moved);
        (self.args[4], self.args[5], self.args[8]) = (whole(clo), whole(chi), whole(kz));
    }

    /// Grouped kernels (`kernel_args.rs`, "Grouped kernels"): which group and tile this
    /// workgroup computes. Workgroup `w` (the 1-D grid's `s2`) belongs to the last group `g`
    /// whose `tile_start <= w` (empty groups share their start with the next group, so the
    /// last one wins and an empty group is never picked). Found by a binary search over the
    /// table with scalar loads: `g` starts at 0 and, for `b` from 15 down to 0, moves to
    /// `min(g + 2^b, groups - 1)` when that entry's start is `<= w` (the clamp keeps every
    /// load inside the table and does not change the answer: the predicate is monotone in
    /// the entry index). Steps with `2^b >= groups` are skipped by a uniform branch, so a
    /// launch of G groups costs `ceil(log2 G)` dependent scalar loads per workgroup.
    /// Returns the SGPR pair holding the group's entry address and the workgroup's tile
    /// index within its group (`w - tile_start`).
    fn grouped_setup(&mut self) -> (Reg, Reg) {
        let kp = self.p.vreg(RegFile::Sgpr, 4);
        // table_lo table_hi groups tiles
        self.i(Op::S_LOAD_DWORDX4, &[whole(kp), sr(0, 2), O::Imm(ka::OFF_TABLE as i64)]);
        let (tlo, thi, groups, tiles) = (sub(kp, 0, 1), sub(kp, 1, 1), sub(kp, 2, 1), sub(kp, 3, 1));
        // A workgroup past the launch's tiles has nothing to compute.
        let go = self.p.label();
        self.i(Op::S_CMP_LT_U32, &[s(2), tiles]);
        self.p.branch(Op::S_CBRANCH_SCC1, go);
        self.i(Op::S_ENDPGM, &[]);
        self.p.place(go);
        let (last, g) = (self.sv(), self.sv());
        self.i(Op::S_SUB_U32, &[whole(last), groups, int(1)]);
        self.i(Op::S_MOV_B32, &[whole(g), int(0)]);
        let entry_of = |l: &mut Self, idx: Reg| {
            let (t, e) = (l.sv(), l.p.vreg(RegFile::Sgpr, 2));
            l.i(Op::S_LSHL_B32, &[whole(t), whole(idx), int(log2(ka::ENTRY_BYTES))]);
            l.i(Op::S_ADD_U32, &[sub(e, 0, 1), tlo, whole(t)]);
            l.i(Op::S_ADDC_U32, &[sub(e, 1, 1), thi, int(0)]);
            e
        };
        for b in (0..log2(ka::MAX_GROUPS)).rev() {
            let skip = self.p.label();
            self.i(Op::S_CMP_LE_U32, &[groups, lit(1 << b)]);
            self.p.branch(Op::S_CBRANCH_SCC1, skip);
            let cand = self.sv();
            self.i(Op::S_ADD_U32, &[whole(cand), whole(g), lit(1 << b)]);
            self.i(Op::S_MIN_U32, &[whole(cand), whole(cand), whole(last)]);
            let e = entry_of(self, cand);
            let start = self.sv();
            self.i(Op::S_LOAD_DWORD, &[whole(start), whole(e), O::Imm(ka::OFF_TILE_START as i64)]);
            self.i(Op::S_CMP_LE_U32, &[whole(start), s(2)]);
            self.i(Op::S_CSELECT_B32, &[whole(g), whole(cand), whole(g)]);
            self.p.place(skip);
        }
        let e = entry_of(self, g);
        let (start, local) = (self.sv(), self.sv());
        self.i(Op::S_LOAD_DWORD, &[whole(start), whole(e), O::Imm(ka::OFF_TILE_START as i64)]);
        self.i(Op::S_SUB_U32, &[whole(local), s(2), whole(start)]);
        (e, local)
    }

    /// Unsigned `(a / b, a % b)` of two uniform values below 2^24, in SGPRs: f32
    /// reciprocal estimate, truncated, then corrected by one step either way (the estimate
    /// of `v_rcp_iflag_f32` is within 1 ulp, ISA.md VOP1; the quotient is then off by at
    /// most one for operands below 2^24).
    fn udiv(&mut self, a: O, b: O) -> (O, O) {
        let (va, vb, fa, fb, q, t, r, q1, r1) =
            (self.vv(), self.vv(), self.vv(), self.vv(), self.vv(), self.vv(), self.vv(), self.vv(), self.vv());
        self.i(Op::V_MOV_B32, &[whole(va), a]);
        self.i(Op::V_MOV_B32, &[whole(vb), b]);
        self.i(Op::V_CVT_F32_U32, &[whole(fa), whole(va)]);
        self.i(Op::V_CVT_F32_U32, &[whole(fb), whole(vb)]);
        self.i(Op::V_RCP_IFLAG_F32, &[whole(fb), whole(fb)]);
        self.i(Op::V_MUL_F32, &[whole(fa), whole(fa), whole(fb)]);
        self.i(Op::V_CVT_U32_F32, &[whole(q), whole(fa)]);
        self.i(Op::V_MUL_LO_U32, &[whole(t), whole(q), whole(vb)]);
        self.i(Op::V_SUB_U32, &[whole(r), whole(va), whole(t)]);
        // r < 0 (as i32): q - 1, r + b.
        self.i(Op::V_CMP_GT_I32, &[VCC, int(0), whole(r)]);
        self.i(Op::V_ADD_U32, &[whole(q1), int(-1), whole(q)]);
        self.i(Op::V_CNDMASK_B32, &[whole(q), whole(q), whole(q1), VCC]);
        self.i(Op::V_ADD_U32, &[whole(r1), whole(vb), whole(r)]);
        self.i(Op::V_CNDMASK_B32, &[whole(r), whole(r), whole(r1), VCC]);
        // r >= b: q + 1, r - b.
        self.i(Op::V_CMP_GE_U32, &[VCC, whole(r), whole(vb)]);
        let (q2, r2) = (self.vv(), self.vv());
        self.i(Op::V_ADD_U32, &[whole(q2), int(1), whole(q)]);
        self.i(Op::V_CNDMASK_B32, &[whole(q), whole(q), whole(q2), VCC]);
        self.i(Op::V_SUB_U32, &[whole(r2), whole(r), whole(vb)]);
        self.i(Op::V_CNDMASK_B32, &[whole(r), whole(r), whole(r2), VCC]);
        let (sq, sr) = (self.sv(), self.sv());
        self.i(Op::V_READFIRSTLANE_B32, &[whole(sq), whole(q)]);
        self.i(Op::V_READFIRSTLANE_B32, &[whole(sr), whole(r)]);
        (whole(sq), whole(sr))
    }

    /// The C tile `(row, column)` this workgroup computes, by the kernel's
    /// [`crate::grid::GridOrder`] (the same function as [`crate::grid::tile_of`]).
    fn tile_index(&mut self) -> (O, O) {
        let c = *self.c();
        let order = c.grid;
        if order.is_plain() && self.local_tile.is_none() {
            return (s(2), s(3));
        }
        let (m, n) = (self.arg(6), self.arg(7));
        let (tms, tns, total) = (self.sv(), self.sv(), self.sv());
        self.i(Op::S_ADD_U32, &[whole(tms), m, lit(c.tile.0 - 1)]);
        self.i(Op::S_LSHR_B32, &[whole(tms), whole(tms), int(log2(c.tile.0))]);
        self.i(Op::S_ADD_U32, &[whole(tns), n, lit(c.tile.1 - 1)]);
        self.i(Op::S_LSHR_B32, &[whole(tns), whole(tns), int(log2(c.tile.1))]);
        self.i(Op::S_MUL_I32, &[whole(total), whole(tms), whole(tns)]);
        // The tile's index in column order: grouped kernels number their group's tiles from
        // its `tile_start` (`grouped_setup`), plain ones have the 2-D workgroup id.
        let pid = match self.local_tile {
            Some(local) => local,
            None => {
                let pid = self.sv();
                self.i(Op::S_MUL_I32, &[whole(pid), s(3), whole(tms)]);
                self.i(Op::S_ADD_U32, &[whole(pid), whole(pid), s(2)]);
                pid
            }
        };
        if order.chunk != 0 {
            let round = crate::grid::XCDS * order.chunk;
            let (whole_, local, l, t) = (self.sv(), self.sv(), self.sv(), self.sv());
            self.i(Op::S_LSHR_B32, &[whole(whole_), whole(total), int(log2(round))]);
            self.i(Op::S_LSHL_B32, &[whole(whole_), whole(whole_), int(log2(round))]);
            self.i(Op::S_LSHR_B32, &[whole(local), whole(pid), int(log2(crate::grid::XCDS))]);
            self.i(Op::S_LSHR_B32, &[whole(l), whole(local), int(log2(order.chunk))]);
            self.i(Op::S_LSHL_B32, &[whole(l), whole(l), int(log2(round))]);
            self.i(Op::S_AND_B32, &[whole(t), whole(pid), int(crate::grid::XCDS as i64 - 1)]);
            self.i(Op::S_LSHL_B32, &[whole(t), whole(t), int(log2(order.chunk))]);
            self.i(Op::S_ADD_U32, &[whole(l), whole(l), whole(t)]);
            self.i(Op::S_AND_B32, &[whole(t), whole(local), lit(order.chunk - 1)]);
            self.i(Op::S_ADD_U32, &[whole(l), whole(l), whole(t)]);
            self.i(Op::S_CMP_LT_U32, &[whole(pid), whole(whole_)]);
            self.i(Op::S_CSELECT_B32, &[whole(pid), whole(l), whole(pid)]);
        }
        if order.wgm == 0 {
            let (q, r) = self.udiv(whole(pid), whole(tms));
            return (r, q);
        }
        let band = self.sv();
        self.i(Op::S_MUL_I32, &[whole(band), whole(tns), lit(order.wgm)]);
        let (g, r) = self.udiv(whole(pid), whole(band));
        let (first, h) = (self.sv(), self.sv());
        self.i(Op::S_MUL_I32, &[whole(first), g, lit(order.wgm)]);
        self.i(Op::S_SUB_U32, &[whole(h), whole(tms), whole(first)]);
        self.i(Op::S_MIN_U32, &[whole(h), whole(h), lit(order.wgm)]);
        let (col, rr) = self.udiv(r, whole(h));
        let row = self.sv();
        self.i(Op::S_ADD_U32, &[whole(row), whole(first), rr]);
        (whole(row), col)
    }

    /// Buffer resource `{lo, hi & 0xffff, span, 0x00020000}` (ISA.md §2.1), span =
    /// `((cols-1)*ld + rows) * size` rounded up to a dword, 0 when `cols == 0`.
    fn srd(&mut self, lo: O, hi: O, rows: O, cols: O, ld: O, size: u32) -> Reg {
        let d = self.p.vreg(RegFile::Sgpr, 4);
        let t = self.sv();
        self.i(Op::S_MOV_B32, &[sub(d, 0, 1), lo]);
        self.i(Op::S_AND_B32, &[sub(d, 1, 1), lit(0xffff), hi]);
        self.i(Op::S_SUB_U32, &[whole(t), cols, int(1)]);
        self.i(Op::S_MUL_I32, &[whole(t), whole(t), ld]);
        self.i(Op::S_ADD_U32, &[whole(t), whole(t), rows]);
        self.i(Op::S_LSHL_B32, &[whole(t), whole(t), int(log2(size))]);
        self.i(Op::S_ADD_U32, &[whole(t), whole(t), int(3)]);
        self.i(Op::S_AND_B32, &[whole(t), whole(t), int(-4)]);
        self.i(Op::S_CMP_EQ_U32, &[cols, int(0)]);
        self.i(Op::S_CSELECT_B32, &[sub(d, 2, 1), int(0), whole(t)]);
        self.i(Op::S_MOV_B32, &[sub(d, 3, 1), lit(0x0002_0000)]);
        d
    }

    /// The copies of `op`'s tiles; `k`: its K (bytes of its rows for MX kernels), `llast`: the
    /// K offset of its last tile, `kr`: K left in that tile.
    fn copier(&mut self, op: Operand, llast: Reg, k: O, kr: Reg) -> Copier {
        let c = *self.c();
        let g = lds::copy_geom(&c, op);
        let e = c.ab_bytes();
        let (m, n) = (self.arg(6), self.arg(7));
        let (lo, hi, ld) = match op {
            Operand::A => (self.arg(0), self.arg(1), self.arg(9)),
            Operand::B => (self.arg(2), self.arg(3), self.arg(10)),
        };
        let (rows, cols) = match (op, c.trans_a, c.trans_b) {
            (Operand::A, false, _) => (m, k),
            (Operand::A, true, _) => (k, m),
            (Operand::B, _, false) => (k, n),
            (Operand::B, _, true) => (n, k),
        };
        let srd = self.srd(lo, hi, rows, cols, ld, e);
        // Origin of the tile along the contiguous (c0) and strided (s0) storage dimensions.
        let origin = match op {
            Operand::A => self.m0,
            Operand::B => self.n0,
        };
        let (c0, s0) = if g.k_contiguous { (None, Some(origin)) } else { (Some(origin), None) };
        let per_line = g.lc / g.v;
        let (cidx, sidx) = (self.vv(), self.vv());
        if g.direct {
            self.i(Op::V_AND_B32, &[whole(cidx), lit(per_line - 1), whole(self.tid)]);
            self.i(Op::V_LSHLREV_B32, &[whole(cidx), int(log2(g.v)), whole(cidx)]);
            self.i(Op::V_LSHRREV_B32, &[whole(sidx), int(log2(per_line)), whole(self.tid)]);
        } else {
            // Lanes run along K first, `kgroup` K per lane (lds::CopyGeom).
            let lk = g.lanes_k();
            self.i(Op::V_LSHRREV_B32, &[whole(cidx), int(log2(lk)), whole(self.tid)]);
            self.i(Op::V_LSHLREV_B32, &[whole(cidx), int(log2(g.v)), whole(cidx)]);
            self.i(Op::V_AND_B32, &[whole(sidx), lit(lk - 1), whole(self.tid)]);
            if g.kgroup > 1 {
                self.i(Op::V_LSHLREV_B32, &[whole(sidx), int(log2(g.kgroup)), whole(sidx)]);
            }
        }
        let gs = match s0 {
            Some(s0) => {
                let r = self.vv();
                self.i(Op::V_ADD_U32, &[whole(r), whole(s0), whole(sidx)]);
                r
            }
            None => sidx,
        };
        let gc = match c0 {
            Some(c0) => {
                let r = self.vv();
                self.i(Op::V_ADD_U32, &[whole(r), whole(c0), whole(cidx)]);
                r
            }
            None => cidx,
        };
        let t = self.vv();
        self.i(Op::V_MUL_LO_U32, &[whole(t), ld, whole(gs)]);
        self.i(Op::V_ADD_U32, &[whole(t), whole(gc), whole(t)]);
        let off0 = self.vv();
        self.i(Op::V_LSHLREV_B32, &[whole(off0), int(log2(e)), whole(t)]);
        let ldb = self.sv();
        self.i(Op::S_LSHL_B32, &[whole(ldb), ld, int(log2(e))]);
        let pstride = if g.direct {
            let r = self.sv();
            self.i(Op::S_MUL_I32, &[whole(r), whole(ldb), lit(g.step)]);
            whole(r)
        } else {
            lit(g.step * e)
        };
        let mut offs = vec![off0];
        for p in 1..g.per_thread as usize {
            // Within a transposed fp8 group the next vector is one K (one leading
            // dimension) further; the next group `step` rows further.
            let kg = g.kgroup as usize;
            let (prev, add) = if p % kg != 0 { (offs[p - 1], whole(ldb)) } else { (offs[p - kg], pstride) };
            let o = self.vv();
            self.i(Op::V_ADD_U32, &[whole(o), add, whole(prev)]);
            offs.push(o);
        }
        let kadv = if g.k_contiguous {
            lit(c.k_step_of(op) * e)
        } else {
            let r = self.sv();
            self.i(Op::S_LSHL_B32, &[whole(r), whole(ldb), int(log2(c.tile.2))]);
            whole(r)
        };
        let last_off = self.sv();
        if g.k_contiguous {
            self.i(Op::S_LSHL_B32, &[whole(last_off), whole(llast), int(log2(e))]);
        } else {
            self.i(Op::S_MUL_I32, &[whole(last_off), whole(llast), whole(ldb)]);
        }
        let loop_kind = self.k.body.iter().find_map(|o| match o {
            TileOp::GlobalLoad(cp) if cp.operand == op => Some(cp.kind),
            _ => None,
        });
        let loop_kind = loop_kind.unwrap_or(LoadKind::Vector);
        let unpacked = loop_kind == LoadKind::Element && g.v == 8;
        let sets = if self.k.lds_buffers == 3 && loop_kind != LoadKind::DirectToLds { 2 } else { 1 };
        let stage_sets: Vec<Vec<Reg>> =
            (0..sets).map(|_| (0..g.per_thread).map(|_| self.vn(if unpacked { 8 } else { 4 })).collect()).collect();
        let stage = stage_sets[0].clone();
        // LDS write addresses (relative to buffer 0).
        let mut waddr: Vec<Vec<(Reg, u32)>> = vec![];
        let two = self.vv();
        self.i(Op::V_LSHLREV_B32, &[whole(two), int(log2(e)), whole(cidx)]);
        let sb = self.vv();
        self.i(Op::V_LSHLREV_B32, &[whole(sb), int(log2(e)), whole(sidx)]);
        // Transposed fp8 groups: lanes of the second half of a phase write row `e ^ 1`
        // (lds::CopyGeom::swap_halves), with the pair selectors exchanged.
        let (mut swap_rows, mut tsel) = (None, None);
        if g.kgroup > 1 {
            let j = self.vv();
            if g.swap_halves {
                self.i(Op::V_BFE_U32, &[whole(j), whole(self.tid), int(log2(g.lanes_k())), int(1)]);
                let (even, odd) = (self.vv(), self.vv());
                self.i(Op::V_ADD_U32, &[whole(even), whole(cidx), whole(j)]);
                self.i(Op::V_SUB_U32, &[whole(odd), whole(cidx), whole(j)]);
                swap_rows = Some((even, odd));
            } else {
                self.i(Op::V_MOV_B32, &[whole(j), int(0)]);
            }
            // sel = plain ^ (-j & (plain ^ swapped)).
            let sels = if g.kgroup == 2 {
                [(0x0501_0400u32, 0x0400_0501u32), (0x0703_0602, 0x0602_0703), (0, 0), (0, 0)]
            } else {
                [
                    (0x0501_0400, 0x0501_0400),
                    (0x0703_0602, 0x0703_0602),
                    (0x0504_0100, 0x0706_0302),
                    (0x0706_0302, 0x0504_0100),
                ]
            };
            tsel = Some(sels.map(|(plain, swapped)| {
                let (t, r) = (self.vv(), self.vv());
                self.i(Op::V_SUB_U32, &[whole(t), int(0), whole(j)]);
                self.i(Op::V_AND_B32, &[whole(t), lit(plain ^ swapped), whole(t)]);
                self.i(Op::V_XOR_B32, &[whole(r), lit(plain), whole(t)]);
                r
            }));
        }
        // A thread's vectors lie `step` rows apart: when that is a whole number of swizzle
        // periods, vector p reuses vector 0's addresses with an instruction offset.
        let period = self.k.swizzle.period_bytes();
        let mn = lds::mn_major(&c, op);
        let rb = lds::op_row_bytes(&c, op);
        // Per vector, or per group of `kgroup` vectors (transposed fp8: one K run per row).
        for p in 0..g.groups() {
            let shift = p * g.step * rb;
            if p > 0 && !mn && shift.is_multiple_of(period) {
                let first: Vec<Reg> = waddr[0].iter().map(|(r, _)| *r).collect();
                waddr.push(first.into_iter().map(|r| (r, shift)).collect());
                continue;
            }
            if g.direct {
                let a = self.lds_addr(op, sidx, p * g.step, two, 0);
                waddr.push(vec![(a, 0)]);
            } else {
                let mut v8 = vec![];
                for el in 0..g.v {
                    // Row `el ^ j` (lds::write_row): `+ j` for even rows, `- j` for odd ones.
                    let rbase = match swap_rows {
                        Some((even, odd)) => {
                            if el % 2 == 0 {
                                even
                            } else {
                                odd
                            }
                        }
                        None => cidx,
                    };
                    let a = self.lds_addr(op, rbase, p * g.step + el, sb, 0);
                    v8.push((a, 0));
                }
                waddr.push(v8);
            }
        }
        // LDS read addresses (lds::read_lane): row = w*rows/W + lane%M, byte = g*rb/G + 16h.
        let wsel = if op == Operand::A { self.wm } else { self.wn };
        let row = self.vv();
        let kw = self.k3(c.wave_rows(op));
        self.i(Op::V_MAD_U32_U24, &[whole(row), whole(wsel), kw, whole(self.lrow)]);
        let lb = self.vv();
        self.i(Op::V_MUL_U32_U24, &[whole(lb), lit(lds::group_bytes_of(&c, op)), whole(self.lgrp)]);
        let mut raddr = vec![];
        let mut raddr2 = vec![];
        match self.quad {
            _ if mn => {
                // ds_read_b64_tr_b16 / _b8 (lds::tr_read_lane, n = lds::tr_rows rows per
                // read, 16/n lanes per row): row g*KT/G + s/(16/n), byte
                // (16*sub + n*(s%(16/n)))*bytes of the wave's first block (s = lane % 16,
                // sub = (lane % M) / 16); one address per block (the slot XOR mixes block
                // bits).
                let lpr = 16 / lds::tr_rows(&c);
                let s = self.vv();
                self.i(Op::V_AND_B32, &[whole(s), int(15), whole(self.lane)]);
                let q = self.vv();
                self.i(Op::V_LSHRREV_B32, &[whole(q), int(log2(lpr)), whole(s)]);
                let kg = self.k3(c.tile.2 / c.lane_groups());
                let trow = self.vv();
                self.i(Op::V_MAD_U32_U24, &[whole(trow), whole(self.lgrp), kg, whole(q)]);
                // 8*(s%(16/n)) + 16*bytes*sub, plus the wave's first row times the bytes.
                let lbt = self.vv();
                self.i(Op::V_AND_B32, &[whole(lbt), int(lpr as i64 - 1), whole(s)]);
                self.i(Op::V_LSHLREV_B32, &[whole(lbt), int(3), whole(lbt)]);
                let sub = self.vv();
                self.i(Op::V_LSHRREV_B32, &[whole(sub), int(4), whole(self.lrow)]);
                self.i(Op::V_LSHL_OR_B32, &[whole(lbt), whole(sub), int(log2(16 * c.ab_bytes())), whole(lbt)]);
                let kw = self.k3(c.wave_rows(op) * c.ab_bytes());
                let lbw = self.vv();
                self.i(Op::V_MAD_U32_U24, &[whole(lbw), whole(wsel), kw, whole(lbt)]);
                for blk in 0..c.blocks(op) {
                    let a = self.lds_addr(op, trow, 0, lbw, blk * c.mfma.m * c.ab_bytes());
                    raddr.push(a);
                }
            }
            Some((own, other)) if op == Operand::B => {
                // Quarters of NT/4 columns: the wave's blocks in its own B half, then in the
                // other group's.
                let kq = self.k3(c.tile.1 / 4);
                for (q, out) in [(own, &mut raddr), (other, &mut raddr2)] {
                    let row = self.vv();
                    self.i(Op::V_MAD_U32_U24, &[whole(row), whole(q), kq, whole(self.lrow)]);
                    for h in 0..lds::reads_per_block(&c) {
                        let a = self.lds_addr(op, row, 0, lb, h * 16);
                        out.push(a);
                    }
                }
            }
            _ => {
                for h in 0..lds::reads_per_block(&c) {
                    let a = self.lds_addr(op, row, 0, lb, h * 16);
                    raddr.push(a);
                }
            }
        }
        let nfrag = c.blocks(op) as usize;
        let fdw = (self.fpieces * 4) as u8;
        let frags = (0..nfrag).map(|_| self.vn(fdw)).collect();
        // Direct-to-LDS: DMA instruction j of wave w fills the tile's bytes
        // [(j*W + w) * 64*size, +64*size), lane l at + l*size; that slot holds logical byte
        // swizzle.apply(slot): row = lin / rb, K byte = lin % rb (buffer_ops.rs).
        let (mut dma_offs, mut dma_m0, dma_soff) = (vec![], self.sv(), self.sv());
        if loop_kind == LoadKind::DirectToLds {
            self.i(Op::S_MOV_B32, &[whole(dma_soff), int(0)]);
            let size = crate::passes::buffer_ops::dma_bytes(c.arch);
            let per_inst = 64 * size;
            let n_inst = c.tile_rows(op) * lds::row_bytes(&c) / per_inst / c.waves;
            let wv = self.vv();
            self.i(Op::V_LSHRREV_B32, &[whole(wv), int(6), whole(self.tid)]);
            let ws = self.sv();
            self.i(Op::V_READFIRSTLANE_B32, &[whole(ws), whole(wv)]);
            dma_m0 = self.sv();
            self.i(Op::S_MUL_I32, &[whole(dma_m0), whole(ws), lit(per_inst)]);
            self.i(Op::S_ADD_U32, &[whole(dma_m0), whole(dma_m0), lit(lds::tile_base(&c, op))]);
            let lb = self.vv();
            self.i(Op::V_LSHLREV_B32, &[whole(lb), int(log2(size)), whole(self.lane)]);
            let sw = self.k.swizzle;
            let origin = match op {
                Operand::A => self.m0,
                Operand::B => self.n0,
            };
            for j in 0..n_inst {
                let p = self.vv();
                let kp = self.k3(per_inst);
                self.i(Op::V_MAD_U32_U24, &[whole(p), whole(wv), kp, whole(lb)]);
                let p = self.vadd(p, j * c.waves * per_inst);
                if mn {
                    // M/N-major (lds::mn_major): slot p holds row p / rb (one K), byte
                    // (p % rb) ^ mn_xor(row) of the tile, i.e. global element
                    // (origin + byte/b, k0 + row), b bytes per element: offset
                    // row*ld + (origin*b + byte).
                    let (row, mb) = (self.vv(), self.vv());
                    self.i(Op::V_LSHRREV_B32, &[whole(row), int(log2(rb)), whole(p)]);
                    self.i(Op::V_AND_B32, &[whole(mb), lit(rb - 1), whole(p)]);
                    let x = self.mn_xor_v(row);
                    self.i(Op::V_XOR_B32, &[whole(mb), whole(x), whole(mb)]);
                    let ob = self.vv();
                    self.i(Op::V_LSHL_ADD_U32, &[whole(ob), whole(origin), int(log2(c.ab_bytes())), whole(mb)]);
                    let t = self.vv();
                    self.i(Op::V_MUL_LO_U32, &[whole(t), whole(ldb), whole(row)]);
                    let o = self.vv();
                    self.i(Op::V_ADD_U32, &[whole(o), whole(ob), whole(t)]);
                    dma_offs.push(o);
                    continue;
                }
                let lin = if sw.xor > 1 {
                    let x = self.vv();
                    self.i(Op::V_BFE_U32, &[whole(x), whole(p), int(4 + log2(sw.shift)), int(log2(sw.xor))]);
                    self.i(Op::V_LSHLREV_B32, &[whole(x), int(4), whole(x)]);
                    let l = self.vv();
                    self.i(Op::V_XOR_B32, &[whole(l), whole(x), whole(p)]);
                    l
                } else {
                    p
                };
                let (row, kb) = (self.vv(), self.vv());
                self.i(Op::V_LSHRREV_B32, &[whole(row), int(log2(rb)), whole(lin)]);
                self.i(Op::V_AND_B32, &[whole(kb), lit(rb - 1), whole(lin)]);
                self.i(Op::V_ADD_U32, &[whole(row), whole(origin), whole(row)]);
                let t = self.vv();
                self.i(Op::V_MUL_LO_U32, &[whole(t), whole(ldb), whole(row)]);
                let o = self.vv();
                self.i(Op::V_ADD_U32, &[whole(o), whole(kb), whole(t)]);
                dma_offs.push(o);
            }
        }
        Copier {
            geom: g,
            srd,
            offs,
            kadv,
            last_off,
            kr,
            sidx,
            cidx,
            stage,
            stage_sets,
            waddr,
            raddr,
            raddr2,
            frags,
            loop_kind,
            dma_offs,
            dma_m0,
            dma_soff,
            tsel,
        }
    }

    fn idx(op: Operand) -> usize {
        match op {
            Operand::A => 0,
            Operand::B => 1,
        }
    }

    /// Loads of one operand's K tile into staging (packed for the prologue copy).
    fn global_load(&mut self, cp: Copy) {
        let x = Self::idx(cp.operand);
        let g = self.cp[x].geom;
        let last = cp.which == KTile::Last;
        let mut rem_s = None;
        let mut rem_c = None;
        if last {
            let kr = self.cp[x].kr;
            let r = self.vv();
            if g.k_contiguous {
                self.i(Op::V_SUB_U32, &[whole(r), whole(kr), whole(self.cp[x].cidx)]);
                rem_c = Some(r);
            } else {
                self.i(Op::V_SUB_U32, &[whole(r), whole(kr), whole(self.cp[x].sidx)]);
                rem_s = Some(r);
            }
        }
        if let (Some(rc), LoadKind::Element) = (rem_c, cp.kind) {
            if crate::schedule::slim_edges(self.c()) {
                return self.global_load_tail_fast(cp, rc);
            }
        }
        self.global_load_vectors(cp, 0..g.per_thread as usize, rem_s, rem_c);
    }

    /// The K tail tile of a K-contiguous operand (`schedule::slim_edges`): when the tail's
    /// length is a whole number of 16-byte vectors (uniform, from `kr`), every vector lies
    /// wholly before or past the end of K, so one guarded `buffer_load_dwordx4` per vector
    /// loads it (the staging dwords hold the bytes as the element loads pack them);
    /// otherwise the element loads.
    fn global_load_tail_fast(&mut self, cp: Copy, rc: Reg) {
        let x = Self::idx(cp.operand);
        let g = self.cp[x].geom;
        let (slow, done) = (self.p.label(), self.p.label());
        let t = self.sv();
        let mask = (16 / self.c().ab_bytes()) as i64 - 1;
        // SCC = 1: the tail is not whole vectors.
        self.i(Op::S_AND_B32, &[whole(t), whole(self.cp[x].kr), int(mask)]);
        self.p.branch(Op::S_CBRANCH_SCC1, slow);
        let srd = self.cp[x].srd;
        for p in 0..g.per_thread as usize {
            let (o, og) = (self.vv(), self.vv());
            let lo = self.cp[x].last_off;
            self.i(Op::V_ADD_U32, &[whole(o), whole(lo), whole(self.cp[x].offs[p])]);
            // The vector's first element is valid iff 0 < k - its K index.
            self.i(Op::V_CMP_LT_I32, &[VCC, int(0), whole(rc)]);
            self.i(Op::V_CNDMASK_B32, &[whole(og), whole(self.oob), whole(o), VCC]);
            let dst = sub(self.cp[x].stage[p], 0, 4);
            self.ie(Inst::new(Op::BUFFER_LOAD_DWORDX4, &[dst, whole(og), whole(srd), int(0)]).offen());
        }
        self.p.branch(Op::S_BRANCH, done);
        self.p.place(slow);
        self.global_load_vectors(cp, 0..g.per_thread as usize, None, Some(rc));
        self.p.place(done);
    }

    /// The loads of vectors `ps` of [`Self::global_load`] (a schedule's copy share).
    fn global_load_vectors(&mut self, cp: Copy, ps: std::ops::Range<usize>, rem_s: Option<Reg>, rem_c: Option<Reg>) {
        let x = Self::idx(cp.operand);
        let e = self.c().ab_bytes() as i64;
        let g = self.cp[x].geom;
        let srd = self.cp[x].srd;
        let kind = cp.kind;
        let last = cp.which == KTile::Last;
        for p in ps {
            let mut off = self.cp[x].offs[p];
            if last {
                let o = self.vv();
                let lo = self.cp[x].last_off;
                self.i(Op::V_ADD_U32, &[whole(o), whole(lo), whole(off)]);
                off = o;
                if let Some(rs) = rem_s {
                    // The whole vector lies at one l = l_last + s + p % kgroup: valid iff
                    // < k (the groups of a thread differ along M/N only, lds::CopyGeom).
                    // Direct M/N-major copies: vector p lies `p * step` K further.
                    let kp = if g.direct { p as u32 * g.step } else { p as u32 % g.kgroup };
                    let kpo = self.k3(kp);
                    let og = self.vv();
                    self.i(Op::V_CMP_LT_I32, &[VCC, kpo, whole(rs)]);
                    self.i(Op::V_CNDMASK_B32, &[whole(og), whole(self.oob), whole(off), VCC]);
                    off = og;
                }
            }
            let stage = self.cp[x].stage[p];
            match kind {
                LoadKind::Vector => {
                    let dst = sub(stage, 0, 4);
                    self.ie(Inst::new(Op::BUFFER_LOAD_DWORDX4, &[dst, whole(off), whole(srd), int(0)]).offen());
                }
                LoadKind::Element => {
                    let v = g.v as u16;
                    // 16-bit: one register per element (packed below or at the LDS write);
                    // f32: the elements are the staging dwords themselves.
                    // 16-bit and fp8 in the prologue: one register per element, packed
                    // below; the main loop's 16-bit element copies (`e1` kernels) pack at
                    // the LDS write; f32: the elements are the staging dwords themselves.
                    let elems: Vec<Reg> = if last && e < 4 {
                        (0..v).map(|_| self.vv()).collect()
                    } else {
                        (0..v).map(|el| Reg { file: RegFile::Vgpr, index: stage.index + el, count: 1 }).collect()
                    };
                    let load = match e {
                        4 => Op::BUFFER_LOAD_DWORD,
                        2 => Op::BUFFER_LOAD_USHORT,
                        _ => Op::BUFFER_LOAD_UBYTE,
                    };
                    for (el, dst) in elems.iter().enumerate() {
                        let mut o = off;
                        if let Some(rc) = rem_c {
                            let og = self.vv();
                            self.i(Op::V_CMP_LT_I32, &[VCC, int(el as i64), whole(rc)]);
                            self.i(Op::V_CNDMASK_B32, &[whole(og), whole(self.oob), whole(off), VCC]);
                            o = og;
                        }
                        self.ie(Inst::new(load, &[whole(*dst), whole(o), whole(srd), int(0)])
                            .offen()
                            .offset((el as i64 * e) as i32));
                    }
                    if last && e == 1 {
                        // fp8: four zero-extended bytes per dword, element 4d in bits 7:0.
                        for d in 0..4u16 {
                            let el = |i: u16| whole(elems[(4 * d + i) as usize]);
                            let (t1, t2) = (self.vv(), self.vv());
                            self.i(Op::V_LSHL_OR_B32, &[whole(t1), el(1), int(8), el(0)]);
                            self.i(Op::V_LSHL_OR_B32, &[whole(t2), el(2), int(16), whole(t1)]);
                            self.i(Op::V_LSHL_OR_B32, &[sub(stage, d, 1), el(3), int(24), whole(t2)]);
                        }
                    } else if last && v == 8 {
                        // The prologue writes LDS right away: pack now into dwords 0..4.
                        for d in 0..4u16 {
                            self.i(
                                Op::V_LSHL_OR_B32,
                                &[
                                    sub(stage, d, 1),
                                    whole(elems[2 * d as usize + 1]),
                                    int(16),
                                    whole(elems[2 * d as usize]),
                                ],
                            );
                        }
                    }
                }
                LoadKind::DirectToLds | LoadKind::Undecided => unreachable!("checked in lower() and region()"),
            }
            if !last {
                let o = self.cp[x].offs[p];
                let kadv = self.cp[x].kadv;
                self.i(Op::V_ADD_U32, &[whole(o), kadv, whole(o)]);
            }
        }
    }

    /// One loop tile of `op` straight into LDS buffer `buf` (`buffer_load ... lds`, ISA.md
    /// §2.4: LDS address `M0 + lane*size`), then the offsets advance one K tile.
    fn dma(&mut self, op: Operand, buf: u32) {
        let n = self.cp[Self::idx(op)].dma_offs.len() as u32;
        for j in 0..n {
            self.emit_dma(op, j, buf);
        }
        self.advance_dma(op);
    }

    /// Moves an operand's LDS-DMA source one K tile on (its SGPR offset; the buffer plays
    /// no part, so this serves every stage count). An MX operand that advances by less than
    /// its rows (`KernelConfig::k_step_of`) copies past its tile, and past the end of the
    /// buffer from the last rows: its lanes' VGPR offsets advance instead, which the range
    /// check covers (ISA.md §2.3: not `soffset`), so those bytes read 0.
    fn advance_dma(&mut self, op: Operand) {
        let x = Self::idx(op);
        let (kadv, soff) = (self.cp[x].kadv, self.cp[x].dma_soff);
        if self.c().k_step_of(op) < self.c().tile.2 {
            for o in self.cp[x].dma_offs.clone() {
                self.i(Op::V_ADD_U32, &[whole(o), kadv, whole(o)]);
            }
            return;
        }
        self.i(Op::S_ADD_U32, &[whole(soff), whole(soff), kadv]);
    }

    /// LDS-DMA instruction `j` of an operand's next K tile into LDS buffer `buf`; with three
    /// stages tagged with its buffer for the wait pass ([`crate::program::Note::DmaInto`]).
    fn emit_dma(&mut self, op: Operand, j: u32, buf: u32) {
        let c = *self.c();
        let x = Self::idx(op);
        let size = crate::passes::buffer_ops::dma_bytes(c.arch);
        let opc = if size == 16 { Op::BUFFER_LOAD_DWORDX4 } else { Op::BUFFER_LOAD_DWORD };
        let (srd, m0b, soff) = (self.cp[x].srd, self.cp[x].dma_m0, self.cp[x].dma_soff);
        let o = self.cp[x].dma_offs[j as usize];
        let at = buf * self.k.lds_buffer_bytes() + j * c.waves * 64 * size;
        self.i(Op::S_ADD_U32, &[gemm_isa::operand::M0, whole(m0b), lit(at)]);
        if self.k.lds_buffers == 3 {
            self.p.items.push(Item::Note(crate::program::Note::DmaInto(buf)));
        }
        self.ie(Inst::new(opc, &[whole(o), whole(srd), whole(soff)]).offen().lds());
    }

    /// Makes staging set `set` of operand `x` the one the copies use.
    fn use_set(&mut self, x: usize, set: usize) {
        self.cp[x].stage = self.cp[x].stage_sets[set].clone();
    }

    /// Staging -> LDS buffer `buf`. `packed`: staging holds 4 packed dwords per vector.
    fn lds_store(&mut self, op: Operand, buf: u32, packed: bool) {
        for p in 0..self.cp[Self::idx(op)].geom.per_thread as usize {
            self.lds_store_vector(op, buf, packed, p);
        }
    }

    /// Staging vector `p` of `op` -> LDS buffer `buf` (a transposed fp8 group is written
    /// with its last vector).
    fn lds_store_vector(&mut self, op: Operand, buf: u32, packed: bool, p: usize) {
        let x = Self::idx(op);
        let g = self.cp[x].geom;
        let base = buf * self.k.lds_buffer_bytes();
        if g.kgroup > 1 {
            if (p as u32 + 1).is_multiple_of(g.kgroup) {
                self.lds_store_group(op, buf, p / g.kgroup as usize);
            }
            return;
        }
        {
            let mut st = self.cp[x].stage[p];
            if !packed && g.v == 8 {
                let pk = self.vn(4);
                for d in 0..4u16 {
                    self.i(Op::V_LSHL_OR_B32, &[sub(pk, d, 1), sub(st, 2 * d + 1, 1), int(16), sub(st, 2 * d, 1)]);
                }
                st = pk;
            }
            if g.direct {
                let (a, extra) = self.cp[x].waddr[p][0];
                let (a, off) = self.ds_off(a, base + extra);
                self.ie(Inst::new(Op::DS_WRITE_B128, &[whole(a), sub(st, 0, 4)]).offset(off));
            } else {
                for el in 0..g.v as u16 {
                    let (a, extra) = self.cp[x].waddr[p][el as usize];
                    let (a, off) = self.ds_off(a, base + extra);
                    if g.v == 4 {
                        self.ie(Inst::new(Op::DS_WRITE_B32, &[whole(a), sub(st, el, 1)]).offset(off));
                    } else {
                        let opc = if el % 2 == 0 { Op::DS_WRITE_B16 } else { Op::DS_WRITE_B16_D16_HI };
                        self.ie(Inst::new(opc, &[whole(a), sub(st, el / 2, 1)]).offset(off));
                    }
                }
            }
        }
    }

    /// Group `gi` of a transposed fp8 operand (`kgroup` vectors at consecutive K of the same
    /// 16 rows, lds::CopyGeom) -> LDS buffer `buf`: the bytes are transposed with
    /// `v_perm_b32` (byte `i` of the result = byte `sel_i` of `{src0, src1}`, 0-3 from src1,
    /// 4-7 from src0) into one K run per row, written with 16 `ds_write_b16` (pairs) or
    /// `ds_write_b32` (quads). Pairs: `[v0.b0, v1.b0, v0.b1, v1.b1]` holds rows `4d` (low
    /// half) and `4d+1` (high half) of dword `d`. Quads: those pair-interleaves of
    /// `(v0, v1)` and `(v2, v3)`, then their low or high halves joined. The selectors are
    /// per lane ([`Copier::tsel`]): lanes that write row `e ^ 1` in place of `e`
    /// (`lds::CopyGeom::swap_halves`) get them with the two rows of a pair exchanged.
    fn lds_store_group(&mut self, op: Operand, buf: u32, gi: usize) {
        let x = Self::idx(op);
        let g = self.cp[x].geom;
        let kg = g.kgroup as usize;
        let base = buf * self.k.lds_buffer_bytes();
        let st: Vec<Reg> = (0..kg).map(|q| self.cp[x].stage[gi * kg + q]).collect();
        let [lo2, hi2, lo, hi] = self.cp[x].tsel.expect("transposed fp8 copies have selectors").map(whole);
        // rows[r] = (register, half): the K run of row r of the 16.
        let mut rows: Vec<(Reg, bool)> = vec![];
        for d in 0..4u16 {
            let pair = |l: &mut Self, a: Reg, b: Reg| {
                let (pl, ph) = (l.vv(), l.vv());
                l.i(Op::V_PERM_B32, &[whole(pl), sub(b, d, 1), sub(a, d, 1), lo2]);
                l.i(Op::V_PERM_B32, &[whole(ph), sub(b, d, 1), sub(a, d, 1), hi2]);
                (pl, ph)
            };
            let (l01, h01) = pair(self, st[0], st[1]);
            if kg == 2 {
                rows.extend([(l01, false), (l01, true), (h01, false), (h01, true)]);
                continue;
            }
            let (l23, h23) = pair(self, st[2], st[3]);
            for (a, b) in [(l01, l23), (h01, h23)] {
                for s in [lo, hi] {
                    let r = self.vv();
                    self.i(Op::V_PERM_B32, &[whole(r), whole(b), whole(a), s]);
                    rows.push((r, false));
                }
            }
        }
        for (e, (r, high)) in rows.into_iter().enumerate() {
            let (a, extra) = self.cp[x].waddr[gi][e];
            let (a, off) = self.ds_off(a, base + extra);
            let opc = match (kg, high) {
                (2, false) => Op::DS_WRITE_B16,
                (2, true) => Op::DS_WRITE_B16_D16_HI,
                _ => Op::DS_WRITE_B32,
            };
            self.ie(Inst::new(opc, &[whole(a), whole(r)]).offset(off));
        }
    }

    fn lds_to_regs(&mut self, buf: u32) {
        let c = *self.c();
        if self.fpieces < lds::reads_per_block(&c) {
            // Slim fragments: the Dot right after reads and multiplies piece group by group.
            self.deferred_read = Some(buf);
            return;
        }
        for h in 0..lds::reads_per_block(&c) {
            for x in 0..2 {
                for blk in 0..self.cp[x].frags.len() {
                    self.emit_read((x, blk, h), buf);
                }
            }
        }
    }

    /// The address register and DS offset of piece `h` of operand `x`'s block `blk` in
    /// the LDS buffer at `base`: blocks are `M` (or `N`) rows apart from the wave's first;
    /// the quadrant schedule's second half of B blocks start at the other B half's quarter.
    fn read_at(&mut self, x: usize, blk: usize, h: usize, base: u32) -> (Reg, i32) {
        let c = *self.c();
        let rb = lds::row_bytes(&c);
        let half = self.cp[x].frags.len() / 2;
        let (r, blk) = if !self.cp[x].raddr2.is_empty() && blk >= half {
            (self.cp[x].raddr2[h], blk - half)
        } else {
            (self.cp[x].raddr[h], blk)
        };
        self.ds_off(r, base + blk as u32 * c.mfma.m * rb)
    }

    fn mfma_op(&self) -> Op {
        let c = self.c();
        mfma_op_ab(self.arch, c.ab_type, c.b_type(), c.mfma).expect("checked in lower()")
    }

    /// One MFMA `acc += a * b`; the f8f6f4 forms get A's format in `cbsz` and B's in `blgp`.
    fn mfma_inst(&self, op: Op, acc: O, a: O, b: O) -> Inst {
        let c = self.c();
        let inst = Inst::new(op, &[acc, a, b, acc]);
        if op.def().has(gemm_isa::table::flags::F8F6F4) {
            let fa = f8f6f4_format(c.ab_type).expect("fp8 MFMA rows have a format");
            let fb = f8f6f4_format(c.b_type()).expect("fp8 MFMA rows have a format");
            inst.cbsz_abid_blgp(fa, 0, fb)
        } else {
            inst
        }
    }

    fn dot(&mut self) {
        if self.bf.is_some() && !self.bf_rotating() {
            return self.bf_dot();
        }
        let c = *self.c();
        if let Some(buf) = self.deferred_read.take() {
            if self.mx_staged() {
                // The drain's tile: its staged MX scales after the barrier that publishes it.
                self.mx_stage_reads(buf);
            }
            let (fp, bn) = (self.fpieces, self.cp[1].frags.len() as u32);
            for g in 0..lds::reads_per_block(&c) / fp {
                let sl = crate::schedule::Slice { pieces: (g * fp, (g + 1) * fp), bn: (0, bn), read_a: true };
                for r in self.slice_reads(&sl) {
                    self.emit_read(r, buf);
                }
                self.emit_slice_mfmas(&sl);
            }
            // Block-scaled fp8 with rotating temporaries: the drain's trailing adds.
            if self.bf.as_ref().is_some_and(|bf| bf.flush) {
                self.bf_rot_flush();
            }
            return;
        }
        assert!(!self.bf_rotating(), "rotating temporaries come with slim fragments");
        let op = self.mfma_op();
        let steps = c.tile.2 / c.mfma.k;
        // Dwords of one MFMA's operand per lane: K/G elements.
        let rps = (c.mfma.k / c.lane_groups() * c.ab_bytes() / 4) as u8;
        let (fa, fb) = (self.cp[0].frags.clone(), self.cp[1].frags.clone());
        for st in 0..steps as u16 {
            for (bm, a) in fa.iter().enumerate() {
                for (bn, b) in fb.iter().enumerate() {
                    let acc = whole(self.acc[bm * fb.len() + bn]);
                    if self.mx.is_some() {
                        for inst in self.mx_mfmas(st, bm, bn, acc, *a, *b) {
                            self.ie(inst);
                        }
                        continue;
                    }
                    let sa = sub(*a, st * rps as u16, rps);
                    let sb = sub(*b, st * rps as u16, rps);
                    let inst = self.mfma_inst(op, acc, sa, sb);
                    self.ie(inst);
                }
            }
        }
    }

    fn region(&mut self, ops: &[TileOp], pos: Pos) {
        for op in ops {
            match *op {
                TileOp::GlobalToLds(cp) => {
                    self.use_set(Self::idx(cp.operand), pos.load_set);
                    self.global_load(cp);
                    self.lds_store(cp.operand, pos.read, true);
                }
                TileOp::GlobalLoad(cp) if cp.kind == LoadKind::DirectToLds => self.dma(cp.operand, pos.load_buf),
                TileOp::GlobalLoad(cp) => {
                    self.use_set(Self::idx(cp.operand), pos.load_set);
                    self.global_load(cp)
                }
                // The DMA already wrote the next buffer.
                TileOp::LdsStore(o) if self.cp[Self::idx(o)].loop_kind == LoadKind::DirectToLds => {}
                TileOp::LdsStore(o) => {
                    let packed = self.cp[Self::idx(o)].loop_kind != LoadKind::Element;
                    self.use_set(Self::idx(o), pos.store_set);
                    self.lds_store(o, pos.store_buf, packed)
                }
                TileOp::Barrier => {
                    if self.k.lds_buffers == 3 {
                        self.p.items.push(Item::Note(crate::program::Note::Publishes(pos.read)));
                    }
                    self.i(Op::S_BARRIER, &[])
                }
                TileOp::LdsToRegs => self.lds_to_regs(pos.read),
                TileOp::Dot => self.dot(),
                TileOp::Epilogue => self.epilogue(),
            }
        }
    }

    /// The two-stage prologue (the last K tile's copies into buffer 0) with every operand's
    /// global loads issued before the first LDS write (`region` writes each operand's tile
    /// before loading the next: one round trip per operand), then the accumulators zeroed
    /// while they fly ([`loads_first`]: the slim ping-pong, whose one workgroup per CU
    /// overlaps nothing with its prologue; MX kernels with staged scales also leave the
    /// scales' loads in flight beside them, `lower/mx.rs`).
    fn prologue_loads_first(&mut self, ops: &[TileOp]) {
        let pos = Pos::two(0);
        let mut written = vec![];
        for op in ops {
            match *op {
                TileOp::GlobalToLds(cp) => {
                    self.use_set(Self::idx(cp.operand), pos.load_set);
                    self.global_load(cp);
                    written.push(cp.operand);
                }
                _ => self.region(std::slice::from_ref(op), pos),
            }
        }
        // The accumulators, zeroed here rather than in the setup: the two waves of a SIMD
        // share its issue, and the second's loads went out after both waves' 128 writes.
        self.zero_accumulators();
        for o in written {
            self.lds_store(o, pos.read, true);
        }
    }

    /// The accumulators set to 0. gfx950's 16-register AGPR blocks (32x32 MFMAs): one
    /// `v_mfma_f32_32x32x16_bf16 acc, 0s, 0s, 0` each (`0 * 0 + 0`), which runs in the
    /// otherwise idle MFMA pipe, where 16 `v_accvgpr_write`s take the VALU that the two
    /// waves of a SIMD share with their address setup: the timing model held `fp8pp`'s
    /// first barrier until both waves had issued about 500 instructions each, 128 of them
    /// these writes. Otherwise one write (or `v_mov`) per register.
    fn zero_accumulators(&mut self) {
        let c = *self.c();
        // Block-scaled fp8's VGPR accumulators too (an MFMA may write VGPRs, ISA.md §1.5),
        // and its rotating temporaries that the first tile adds (`bf_rot_zeroed`): 144
        // `v_mov`s per wave of `bsfp8pp`, whose first main-loop MFMA of a 4096^3 workgroup
        // came 600 clocks later with them (5.4k clocks after its start, 4.8k without).
        let mut regs = self.acc.clone();
        regs.extend(self.bf_rot_zeroed());
        if c.arch == Arch::Gfx950 && c.acc_regs() == 16 {
            let z = self.vn(4);
            for r in 0..4 {
                self.i(Op::V_MOV_B32, &[sub(z, r, 1), int(0)]);
            }
            for a in regs {
                self.ie(Inst::new(Op::V_MFMA_F32_32X32X16_BF16, &[whole(a), whole(z), whole(z), int(0)]));
            }
            return;
        }
        for a in regs {
            let op = if a.file == RegFile::Agpr { Op::V_ACCVGPR_WRITE_B32 } else { Op::V_MOV_B32 };
            for r in 0..c.acc_regs() as u16 {
                self.i(op, &[sub(a, r, 1), int(0)]);
            }
        }
    }

    /// One K tile of the main loop from buffer `cur`: the kernel's loop schedule when it
    /// has one, else the pipelined body.
    fn loop_body(&mut self, cur: u32) {
        self.mx_use(cur);
        self.bf_use(cur);
        if let Some(ls) = self.k.schedule.clone() {
            for cl in &ls.body {
                for op in &cl.ops {
                    self.mop(&ls, op, cur);
                }
            }
        } else {
            let body = self.k.body.clone();
            self.region(&body, Pos::two(cur));
        }
        self.mx_refill(cur);
        self.bf_body_end(cur);
    }

    /// A schedule's per-role operations (the stagger before and after the loop): a wave
    /// outside the role branches around them on its group (`wave / (W/2)`, uniform).
    fn role_ops(&mut self, ops: &[(crate::schedule::Role, crate::schedule::MOp)], cur: u32) {
        use crate::schedule::Role;
        let ls = self.k.schedule.clone().expect("role ops come from a schedule");
        for (role, op) in ops {
            match role {
                Role::All => self.mop(&ls, op, cur),
                Role::Group(g) => {
                    let ws = self.wave_sgpr();
                    let skip = self.p.label();
                    let half = self.c().waves / 2;
                    self.i(Op::S_CMP_LT_U32, &[whole(ws), lit(half)]);
                    // SCC = 1 in group 0.
                    self.p.branch(if *g == 0 { Op::S_CBRANCH_SCC0 } else { Op::S_CBRANCH_SCC1 }, skip);
                    self.mop(&ls, op, cur);
                    self.p.place(skip);
                }
            }
        }
    }

    /// The wave's index in the workgroup in an SGPR (computed once, at the end of setup).
    fn wave_sgpr(&mut self) -> Reg {
        if let Some(r) = self.wave_s {
            return r;
        }
        let (wv, ws) = (self.vv(), self.sv());
        let a = Inst::new(Op::V_LSHRREV_B32, &[whole(wv), int(6), whole(self.tid)]);
        let b = Inst::new(Op::V_READFIRSTLANE_B32, &[whole(ws), whole(wv)]);
        self.p.items.insert(self.hoist, Item::I(a));
        self.p.items.insert(self.hoist + 1, Item::I(b));
        self.hoist += 2;
        self.wave_s = Some(ws);
        ws
    }

    /// The `ds_read_b128`s of a slice, in order: per piece, A's blocks (when the slice
    /// reads A) then its B blocks.
    fn slice_reads(&self, sl: &crate::schedule::Slice) -> Vec<(usize, usize, u32)> {
        let mut out = vec![];
        for h in sl.pieces.0..sl.pieces.1 {
            if sl.read_a {
                out.extend((0..self.cp[0].frags.len()).map(|b| (0, b, h)));
            }
            out.extend((sl.bn.0 as usize..sl.bn.1 as usize).map(|b| (1, b, h)));
        }
        out
    }

    /// Piece `h` of operand `x`'s block `blk` from buffer `cur`: one `ds_read_b128`
    /// (K-major), or two `ds_read_b64_tr_b16` of four K rows each (`_b8`: eight; M/N-major,
    /// `lds::tr_read_lane`).
    fn emit_read(&mut self, (x, blk, h): (usize, usize, u32), cur: u32) {
        let c = *self.c();
        let base = cur * self.k.lds_buffer_bytes();
        let f = self.cp[x].frags[blk];
        let op = if x == 0 { Operand::A } else { Operand::B };
        if lds::mn_major(&c, op) {
            let rb = lds::op_row_bytes(&c, op);
            let n = lds::tr_rows(&c);
            let tr = if c.ab_bytes() == 1 { Op::DS_READ_B64_TR_B8 } else { Op::DS_READ_B64_TR_B16 };
            for j in 0..2u32 {
                let (a, off) = self.ds_off(self.cp[x].raddr[blk], base + (2 * n * h + n * j) * rb);
                let dst = sub(f, (4 * (h % self.fpieces) + 2 * j) as u16, 2);
                self.ie(Inst::new(tr, &[dst, whole(a)]).offset(off));
            }
            return;
        }
        let (a, off) = self.read_at(x, blk, h as usize, base);
        let hf = (h % self.fpieces) as u16;
        self.ie(Inst::new(Op::DS_READ_B128, &[sub(f, 4 * hf, 4), whole(a)]).offset(off));
    }

    /// A slice's MFMAs, emitted; with block-scaled fp8's rotating temporaries
    /// (`lower/block_fp8.rs`) each into the next temporary, the scaled adds between them.
    fn emit_slice_mfmas(&mut self, sl: &crate::schedule::Slice) {
        if !self.bf_rotating() {
            for i in self.slice_mfmas(sl) {
                self.ie(i);
            }
            return;
        }
        let c = *self.c();
        let rps = (c.mfma.k / c.lane_groups() * c.ab_bytes() / 4) as u16;
        let steps = (c.tile.2 / c.mfma.k) as u16;
        let (fa, fb) = (self.cp[0].frags.clone(), self.cp[1].frags.clone());
        let mut mfmas = vec![];
        for st in 0..steps {
            let piece = (st * rps / 4) as u32;
            if piece < sl.pieces.0 || piece >= sl.pieces.1 {
                continue;
            }
            // Slim fragments hold the slice's pieces only.
            let d = st * rps % (4 * self.fpieces as u16);
            for (bm, a) in fa.iter().enumerate() {
                for (bn, b) in fb.iter().enumerate().take(sl.bn.1 as usize).skip(sl.bn.0 as usize) {
                    mfmas.push((bm, bn, sub(*a, d, rps as u8), sub(*b, d, rps as u8)));
                }
            }
        }
        // The last MFMA's adds wait for a barrier or the next MFMA (`bf_rot_settle`).
        let last = mfmas.len().saturating_sub(1);
        let end = if sl.pieces.1 * 4 >= steps as u32 * rps as u32 {
            block_fp8::Settle::AfterNext
        } else {
            block_fp8::Settle::BeforeSecond
        };
        for (i, (bm, bn, a, b)) in mfmas.into_iter().enumerate() {
            self.bf_rot_mfma(bm, bn, a, b, if i == last { end } else { block_fp8::Settle::None });
        }
    }

    /// The MFMAs of a slice: the K steps inside its pieces, every M block, its N blocks.
    fn slice_mfmas(&self, sl: &crate::schedule::Slice) -> Vec<Inst> {
        let c = *self.c();
        let op = self.mfma_op();
        let rps = (c.mfma.k / c.lane_groups() * c.ab_bytes() / 4) as u16;
        let steps = (c.tile.2 / c.mfma.k) as u16;
        let (fa, fb) = (&self.cp[0].frags, &self.cp[1].frags);
        let mut out = vec![];
        for st in 0..steps {
            let piece = (st * rps / 4) as u32;
            if piece < sl.pieces.0 || piece >= sl.pieces.1 {
                continue;
            }
            // MX on the slim ping-pong: an fp4 step's two MFMAs per block (one per half of
            // its dwords, `mx_mfmas`) go out half by half over the blocks, so that no MFMA
            // waits for the one just before it to write the same accumulators.
            let mut mx_halves: Vec<Vec<Inst>> = vec![];
            for (bm, a) in fa.iter().enumerate() {
                for bn in sl.bn.0 as usize..sl.bn.1 as usize {
                    if let Some(bf) = &self.bf {
                        // Block-scaled fp8: the tile's sums set, step 0 from srcC = 0.
                        let t = whole(self.bf_sums(bf.cur)[bm * fb.len() + bn]);
                        let inst =
                            self.mfma_inst(op, t, sub(*a, st * rps, rps as u8), sub(fb[bn], st * rps, rps as u8));
                        out.push(if st == 0 { block_fp8::with_src_c(inst, int(0)) } else { inst });
                        continue;
                    }
                    let acc = whole(self.acc[bm * fb.len() + bn]);
                    // Slim fragments hold the slice's pieces only.
                    let d = st * rps % (4 * self.fpieces as u16);
                    if self.mx.is_some() {
                        let insts = self.mx_mfmas_at(st, d, bm, bn, acc, *a, fb[bn]);
                        if self.slim() {
                            mx_halves.push(insts);
                        } else {
                            out.extend(insts);
                        }
                        continue;
                    }
                    out.push(self.mfma_inst(op, acc, sub(*a, d, rps as u8), sub(fb[bn], d, rps as u8)));
                }
            }
            for p in 0..mx_halves.first().map_or(0, Vec::len) {
                out.extend(mx_halves.iter().map(|h| h[p].clone()));
            }
        }
        out
    }

    /// Whether the kernel runs the slim ping-pong (its fragments hold one slice's pieces).
    fn slim(&self) -> bool {
        matches!(self.c().schedule, crate::schedule::Schedule::PingPongSlim { .. })
    }

    /// The memory instructions of a schedule's read or copy group, one by one (so that an
    /// interleaving can place them between MFMAs).
    fn mem_items(&self, ls: &crate::schedule::LoopSchedule, op: &crate::schedule::MOp) -> Vec<MemItem> {
        use crate::schedule::MOp;
        let share =
            |n: usize, part: u8, of: u8| (n * part as usize / of as usize, n * (part as usize + 1) / of as usize);
        match op {
            MOp::LdsRead { slice, part, of } => {
                let all = self.slice_reads(&ls.slices[*slice as usize]);
                let (lo, hi) = share(all.len(), *part, *of);
                // Staged MX scales: read with the tile's first fragments, after them (the
                // first MFMAs wait for both; the timing model put reading them first 1% slower).
                let scales = (self.mx_staged() && *slice == 0 && *part == 0).then_some(MemItem::ScaleReads);
                all[lo..hi].iter().map(|r| MemItem::Read(*r)).chain(scales).collect()
            }
            MOp::LdsReadNext { slice } => {
                self.slice_reads(&ls.slices[*slice as usize]).into_iter().map(MemItem::ReadNext).collect()
            }
            MOp::Copy { operand, part, of } => {
                let cp = &self.cp[Self::idx(*operand)];
                if cp.loop_kind != LoadKind::DirectToLds {
                    let (lo, hi) = share(cp.geom.per_thread as usize, *part, *of);
                    return (lo..hi).map(|p| MemItem::Load(*operand, p as u32)).collect();
                }
                let (lo, hi) = share(cp.dma_offs.len(), *part, *of);
                let mut v: Vec<MemItem> = (lo..hi).map(|j| MemItem::Dma(*operand, j as u32)).collect();
                // Staged MX scales: copied with the data, after A's first share.
                if self.mx_staged() && *operand == Operand::A && *part == 0 {
                    v.extend([MemItem::ScaleCopy(0), MemItem::ScaleCopy(1)]);
                }
                if *part + 1 == *of {
                    v.push(MemItem::Advance(*operand));
                }
                v
            }
            MOp::LdsWrite { operand } => {
                let cp = &self.cp[Self::idx(*operand)];
                if cp.loop_kind == LoadKind::DirectToLds {
                    return vec![];
                }
                (0..cp.geom.per_thread).map(|p| MemItem::Write(*operand, p)).collect()
            }
            _ => vec![],
        }
    }

    /// One memory instruction on buffer `cur` (LDS-DMA copies go to the other buffer).
    fn emit_mem(&mut self, it: MemItem, cur: u32) {
        match it {
            MemItem::Read(r) => self.emit_read(r, cur),
            MemItem::ReadNext(r) => self.emit_read(r, 1 - cur),
            MemItem::Dma(op, j) => self.emit_dma(op, j, 1 - cur),
            MemItem::Advance(op) => self.advance_dma(op),
            MemItem::Load(op, p) => {
                let kind = self.cp[Self::idx(op)].loop_kind;
                let cp = Copy { operand: op, kind, guard: crate::ir::KGuard::None, which: KTile::Loop };
                self.global_load_vectors(cp, p as usize..p as usize + 1, None, None);
            }
            MemItem::Write(op, p) => {
                let packed = self.cp[Self::idx(op)].loop_kind != LoadKind::Element;
                self.lds_store_vector(op, 1 - cur, packed, p as usize);
            }
            MemItem::ScaleCopy(x) => self.mx_stage_copy(x, 1 - cur),
            MemItem::ScaleReads => self.mx_stage_reads(cur),
        }
    }

    /// One schedule operation on buffer `cur`.
    fn mop(&mut self, ls: &crate::schedule::LoopSchedule, op: &crate::schedule::MOp, cur: u32) {
        use crate::schedule::MOp;
        match op {
            MOp::LdsRead { .. } | MOp::LdsReadNext { .. } | MOp::Copy { .. } | MOp::LdsWrite { .. } => {
                for it in self.mem_items(ls, op) {
                    self.emit_mem(it, cur);
                }
            }
            MOp::Mfma { slice } if self.bf_rotating() => self.emit_slice_mfmas(&ls.slices[*slice as usize]),
            MOp::Mfma { slice } => {
                for i in self.slice_mfmas(&ls.slices[*slice as usize]) {
                    self.ie(i);
                    self.bf_tick();
                }
            }
            MOp::Interleaved { slice, with } => {
                let mf = self.slice_mfmas(&ls.slices[*slice as usize]);
                let mem: Vec<MemItem> = with.iter().flat_map(|w| self.mem_items(ls, w)).collect();
                // Memory instruction q follows MFMA floor(q * n / m): evenly, from the first.
                let (n, m) = (mf.len(), mem.len());
                let mut q = 0;
                for (i, inst) in mf.into_iter().enumerate() {
                    self.ie(inst);
                    self.bf_tick();
                    while q < m && q * n / m <= i {
                        self.emit_mem(mem[q], cur);
                        q += 1;
                    }
                }
                for it in mem.into_iter().skip(q) {
                    self.emit_mem(it, cur);
                }
            }
            MOp::Barrier { dma_in_flight } => {
                if *dma_in_flight {
                    self.p.items.push(Item::Note(crate::program::Note::DmaMayStayInFlight));
                }
                // Block-scaled fp8: a dot cluster's deferred adds (`bf_rot_settle`).
                self.bf_rot_barrier(false);
                self.i(Op::S_BARRIER, &[]);
                self.bf_rot_barrier(true);
            }
            MOp::SetPrio(n) => self.i(Op::S_SETPRIO, &[O::Imm(*n as i64)]),
            MOp::PhaseInit { behind, ahead } => self.phase_init(*behind, *ahead),
            MOp::PhaseSync { dma_in_flight } => self.phase_sync(*dma_in_flight),
        }
    }

    /// `schedule/phase.rs`: the counters' address registers and this wave's thresholds;
    /// wave 0 zeroes the counters (the schedule puts an `s_barrier` after this).
    fn phase_init(&mut self, behind: u8, ahead: u8) {
        let half = self.c().waves / 2;
        let ws = self.wave_sgpr();
        let base = crate::schedule::phase::counter_offset(self.k);
        let (caddr, own, sig, t) = (self.vv(), self.vv(), self.vv(), self.vv());
        let (off, t0, t1) = (self.sv(), self.sv(), self.sv());
        self.i(Op::V_MOV_B32, &[whole(caddr), lit(base)]);
        // SCC = 1 in group 0.
        self.i(Op::S_CMP_LT_U32, &[whole(ws), lit(half)]);
        self.i(Op::S_CSELECT_B32, &[whole(off), int(0), int(4)]);
        // Group 0 waits for group 1 `behind` sync points behind, group 1 for group 0
        // `ahead` ahead (counts of `half` signals each).
        self.i(Op::S_CSELECT_B32, &[whole(t0), int(0), int((ahead as u32 * half) as i64)]);
        self.i(Op::S_CSELECT_B32, &[whole(t1), int(-((behind as u32 * half) as i64)), int(0)]);
        self.i(Op::V_ADD_U32, &[whole(own), whole(off), whole(caddr)]);
        self.i(Op::V_MIN_U32, &[whole(t), int(1), whole(self.lane)]);
        self.i(Op::V_SUB_U32, &[whole(sig), int(1), whole(t)]);
        let skip = self.p.label();
        self.i(Op::S_CMP_EQ_U32, &[whole(ws), int(0)]);
        self.p.branch(Op::S_CBRANCH_SCC0, skip);
        let zero = self.vn(2);
        self.i(Op::V_MOV_B32, &[sub(zero, 0, 1), int(0)]);
        self.i(Op::V_MOV_B32, &[sub(zero, 1, 1), int(0)]);
        self.ie(Inst::new(Op::DS_WRITE_B64, &[whole(caddr), whole(zero)]));
        self.p.place(skip);
        self.phase = Some(PhaseRegs { caddr, own, sig, t0, t1, per: half });
    }

    /// `schedule/phase.rs`: one sync point. The signal is an LDS atomic, which the wait
    /// pass treats as a release (the waits of a barrier before it); the poll reads both
    /// counters until each reaches its threshold, sleeping between tries.
    fn phase_sync(&mut self, dma_in_flight: bool) {
        let ph = self.phase.expect("a PhaseInit comes before every PhaseSync");
        if dma_in_flight {
            self.p.items.push(Item::Note(crate::program::Note::DmaMayStayInFlight));
        }
        self.ie(Inst::new(Op::DS_ADD_U32, &[whole(ph.own), whole(ph.sig)]));
        self.i(Op::S_ADD_U32, &[whole(ph.t0), whole(ph.t0), int(ph.per as i64)]);
        self.i(Op::S_ADD_U32, &[whole(ph.t1), whole(ph.t1), int(ph.per as i64)]);
        let (poll, sleep, done) = (self.p.label(), self.p.label(), self.p.label());
        self.p.place(poll);
        let (v, s0, s1) = (self.vn(2), self.sv(), self.sv());
        self.ie(Inst::new(Op::DS_READ_B64, &[whole(v), whole(ph.caddr)]));
        self.i(Op::V_READFIRSTLANE_B32, &[whole(s0), sub(v, 0, 1)]);
        self.i(Op::V_READFIRSTLANE_B32, &[whole(s1), sub(v, 1, 1)]);
        self.i(Op::S_CMP_LT_I32, &[whole(s0), whole(ph.t0)]);
        self.p.branch(Op::S_CBRANCH_SCC1, sleep);
        self.i(Op::S_CMP_LT_I32, &[whole(s1), whole(ph.t1)]);
        self.p.branch(Op::S_CBRANCH_SCC0, done);
        self.p.place(sleep);
        self.i(Op::S_SLEEP, &[O::Imm(1)]);
        self.p.branch(Op::S_BRANCH, poll);
        self.p.place(done);
        self.p.loops.push((poll, done));
    }

    /// `alpha * acc[r] (+ beta * c)` of one accumulator register, in f32; fp8 kernels:
    /// `scale_d * (alpha * scale_a * scale_b * (w * acc[r]) (+ beta * c))` with `w` the
    /// element's `row[i] * col[j]` (`kernel_args.rs`, in that order).
    fn scale(&mut self, acc: Reg, r: u16, cval: Option<Reg>, w: Option<Reg>) -> Reg {
        if self.c().split == SplitK::Partial {
            // Partial sums: the reduction applies alpha and beta. fp8 partials multiply by the
            // element's `row[i] * col[j]` first (`kernel_args.rs`, fp8 partial kernels: the
            // per-tensor scales ride in the reduction's alpha and beta).
            let x = self.vv();
            self.i(Op::V_ACCVGPR_READ_B32, &[whole(x), sub(acc, r, 1)]);
            if let Some(w) = w {
                self.i(Op::V_MUL_F32, &[whole(x), whole(w), whole(x)]);
            }
            return x;
        }
        let x = self.vv();
        self.scale_to(x, acc, r, cval, w, true);
        x
    }

    /// [`scale`](L::scale) of a tiled (not partial) kernel into `x`, fp8's `scale_d`
    /// multiply left out unless `with_d` (the caller applies it to a pair at once).
    fn scale_to(&mut self, x: Reg, acc: Reg, r: u16, cval: Option<Reg>, w: Option<Reg>, with_d: bool) {
        let (alpha, beta) = (self.arg(12), self.arg(13));
        let alpha = self.alpha_scaled.map_or(alpha, whole);
        let read = if acc.file == RegFile::Vgpr { Op::V_MOV_B32 } else { Op::V_ACCVGPR_READ_B32 };
        self.i(read, &[whole(x), sub(acc, r, 1)]);
        if let Some(w) = w {
            self.i(Op::V_MUL_F32, &[whole(x), whole(w), whole(x)]);
        }
        self.i(Op::V_MUL_LEGACY_F32, &[whole(x), alpha, whole(x)]);
        if let Some(cv) = cval {
            self.i(Op::V_FMA_F32, &[whole(x), beta, whole(cv), whole(x)]);
        }
        if self.alpha_scaled.is_some() && with_d {
            self.i(Op::V_MUL_F32, &[whole(x), self.scale_d, whole(x)]);
        }
    }

    /// fp8: `scale_d * x` of the two elements of the pair `d` in one `v_pk_mul_f32`, `scale_d`
    /// broadcast from the low half of its pair (`op_sel_hi` bit 1 clear). Each half rounds as
    /// `v_mul_f32` does, so the result is the same bit for bit; packed FP32 issues at the
    /// VALU's full rate (the CDNA3 white paper's 163.4 TFLOP/s of vector FP32 on MI300X is
    /// twice its FP64 through packed FP32; the timing model issues any VALU in `valu_cycles`).
    fn scale_d_pair(&mut self, d: Reg) {
        let sd = self.scale_d2.expect("fp8 per-tensor scales loaded");
        self.ie(Inst::new(Op::V_PK_MUL_F32, &[whole(d), whole(d), whole(sd)]).op_sel_hi(0b101));
    }

    /// fp8 kernels: loads the per-tensor scales and forms `alpha * scale_a * scale_b` once
    /// (gfx9 has no scalar float ALU, so in a VGPR).
    fn load_scales(&mut self) {
        if !self.c().scaled() {
            return;
        }
        // Split-K partial kernels take the vectors only (their alpha slot holds `kchunk`; the
        // per-tensor scales are folded into the reduction's alpha and beta by the caller).
        // The slim ping-pong: both loads issued before either is used, one wait for the two
        // (other kernels keep their code, and their characterisation rows, for now).
        let early = loads_first(self.c());
        let vecs = !mx::no_scale_vectors(self.c());
        let load_vectors = |l: &mut Self| {
            let vp = l.p.vreg(RegFile::Sgpr, 4);
            l.i(Op::S_LOAD_DWORDX4, &[whole(vp), sr(0, 2), O::Imm(ka::OFF_SCALE_ROW as i64)]);
            vp
        };
        let sc = (self.c().split != SplitK::Partial).then(|| {
            let sc = self.p.vreg(RegFile::Sgpr, 4);
            self.i(Op::S_LOAD_DWORDX4, &[whole(sc), sr(0, 2), O::Imm(ka::OFF_SCALE as i64)]);
            sc
        });
        // row_lo row_hi col_lo col_hi
        let mut vp = (vecs && early).then(|| load_vectors(self));
        if let Some(sc) = sc {
            let a = self.vv();
            self.i(Op::V_MOV_B32, &[whole(a), sub(sc, 0, 1)]);
            self.i(Op::V_MUL_F32, &[whole(a), sub(sc, 1, 1), whole(a)]);
            self.i(Op::V_MUL_F32, &[whole(a), self.arg(12), whole(a)]);
            self.alpha_scaled = Some(a);
            self.scale_d = sub(sc, 2, 1);
            if early {
                let sd = self.p.vreg(RegFile::Vgpr, 2);
                self.i(Op::V_MOV_B32, &[sub(sd, 0, 1), sub(sc, 2, 1)]);
                self.scale_d2 = Some(sd);
            }
        }
        if vecs && !early {
            vp = Some(load_vectors(self));
        }
        let Some(vp) = vp else { return };
        let (m, n) = (self.arg(6), self.arg(7));
        let vec = |l: &mut Self, x: u16, len: O| {
            let (lo, hi) = (sub(vp, 2 * x, 1), sub(vp, 2 * x + 1, 1));
            let srd = l.srd(lo, hi, len, int(1), int(1), 4);
            let (t, mask) = (l.sv(), l.p.vreg(RegFile::Sgpr, 2));
            l.i(Op::S_OR_B32, &[whole(t), lo, hi]);
            l.i(Op::S_CMP_EQ_U32, &[whole(t), int(0)]);
            // A null vector: no bytes to read (the loads return 0), the mask selects 1.0.
            l.i(Op::S_CSELECT_B32, &[sub(srd, 2, 1), int(0), sub(srd, 2, 1)]);
            l.i(Op::S_CSELECT_B64, &[whole(mask), int(0), int(-1)]);
            (srd, mask)
        };
        let (srd_row, mask_row) = vec(self, 0, m);
        let (srd_col, mask_col) = vec(self, 1, n);
        let one = self.vv();
        self.i(Op::V_MOV_B32, &[whole(one), lit(1.0f32.to_bits())]);
        self.scale_vecs = Some(ScaleVecs { srd_row, srd_col, mask_row, mask_col, one });
    }

    /// A loaded scale (`raw`) or 1.0 when its vector is absent (`mask` all zeros).
    fn pick_scale(&mut self, raw: O, mask: Reg) -> Reg {
        let one = self.scale_vecs.expect("scale vectors loaded").one;
        let d = self.vv();
        self.i(Op::S_MOV_B64, &[VCC, whole(mask)]);
        self.i(Op::V_CNDMASK_B32, &[whole(d), whole(one), raw, VCC]);
        d
    }

    /// fp8 kernels: the column scale of this lane's column `j` (`col[j]`, or 1.0).
    fn col_scale(&mut self, j: Reg) -> Option<Reg> {
        let sv = self.scale_vecs?;
        let (o, b) = (self.vv(), self.vv());
        self.i(Op::V_LSHLREV_B32, &[whole(o), int(2), whole(j)]);
        self.ie(Inst::new(Op::BUFFER_LOAD_DWORD, &[whole(b), whole(o), whole(sv.srd_col), int(0)]).offen());
        Some(self.pick_scale(whole(b), sv.mask_col))
    }

    /// fp8 kernels: `row[i] * col[j]` from a loaded row scale (`raw`) and the column's.
    fn outer_scale(&mut self, raw: O, col: Option<Reg>) -> Option<Reg> {
        let (sv, col) = (self.scale_vecs?, col?);
        let r = self.pick_scale(raw, sv.mask_row);
        let w = self.vv();
        self.i(Op::V_MUL_F32, &[whole(w), whole(r), whole(col)]);
        Some(w)
    }

    /// C's 16-bit value in the low (`hi == false`) or high half of `v` as f32.
    fn c_to_f32(&mut self, v: O, hi: bool) -> Reg {
        let c = *self.c();
        let t = self.vv();
        match (c.c_type, hi) {
            (DType::Bf16, false) => self.i(Op::V_LSHLREV_B32, &[whole(t), int(16), v]),
            (DType::Bf16, true) => self.i(Op::V_AND_B32, &[whole(t), lit(0xffff_0000), v]),
            (_, false) => self.i(Op::V_CVT_F32_F16, &[whole(t), v]),
            (_, true) => {
                let h = self.vv();
                self.i(Op::V_LSHRREV_B32, &[whole(h), int(16), v]);
                self.i(Op::V_CVT_F32_F16, &[whole(t), whole(h)]);
            }
        }
        t
    }

    /// f32 -> bf16 rounded to nearest even, in the high half of the result (gfx942 has no
    /// bf16 convert); NaN stays NaN (quiet bit set).
    fn bf16_hi(&mut self, x: Reg) -> Reg {
        let (lsb, y, q) = (self.vv(), self.vv(), self.vv());
        self.i(Op::V_BFE_U32, &[whole(lsb), whole(x), int(16), int(1)]);
        self.i(Op::V_ADD3_U32, &[whole(y), whole(x), whole(lsb), whole(self.k7fff)]);
        self.i(Op::V_CMP_U_F32, &[VCC, whole(x), whole(x)]);
        self.i(Op::V_OR_B32, &[whole(q), lit(0x0040_0000), whole(x)]);
        self.i(Op::V_CNDMASK_B32, &[whole(y), whole(y), whole(q), VCC]);
        y
    }

    /// Two f32 values packed into one dword of C's 16-bit type (`lo` in bits 15:0).
    fn pack16(&mut self, lo: Reg, hi: Reg, dst: O) {
        match (self.c().c_type, self.arch) {
            (DType::Bf16, Arch::Gfx950) => self.i(Op::V_CVT_PK_BF16_F32, &[dst, whole(lo), whole(hi)]),
            (DType::Bf16, _) => {
                let (a, b) = (self.bf16_hi(lo), self.bf16_hi(hi));
                // Bytes 3:2 of `lo` to 1:0, bytes 3:2 of `hi` to 3:2 (v_perm_b32 selects from {src0, src1}).
                self.i(Op::V_PERM_B32, &[dst, whole(b), whole(a), whole(self.perm_hi)]);
            }
            _ => {
                let (a, b) = (self.vv(), self.vv());
                self.i(Op::V_CVT_F16_F32, &[whole(a), whole(lo)]);
                self.i(Op::V_CVT_F16_F32, &[whole(b), whole(hi)]);
                self.i(Op::V_PERM_B32, &[dst, whole(b), whole(a), whole(self.perm_lo)]);
            }
        }
    }

    /// Per MFMA block `(bm, bn)` of this wave: C column `j` of the lane, the row `ib` of
    /// its first accumulator register, and the byte offset of `(ib, j)` (past NUM_RECORDS
    /// when `j >= n`). Accumulator register `r` holds row `ib + 4*G*(r/4) + r%4` (ISA.md
    /// §1.1 output layout, `G = 64/M` lane groups).
    fn block_origin(&mut self, bm: u32, bn: u32) -> (Reg, Reg, Reg) {
        let c = *self.c();
        let (n, ldc) = (self.arg(7), self.arg(11));
        let ec = c.c_bytes();
        let j = self.vv();
        // The quadrant schedule: the wave's first half of N blocks in its own B half's
        // quarter, the second half in the other's (`schedule/quadrant.rs`).
        let half = c.blocks(Operand::B) / 2;
        let (q, kw, bn) = match self.quad {
            Some((own, other)) => (if bn < half { own } else { other }, self.k3(c.tile.1 / 4), bn % half),
            None => (self.wn, self.k3(c.wave_rows(Operand::B)), bn),
        };
        self.i(Op::V_MAD_U32_U24, &[whole(j), whole(q), kw, whole(self.lrow)]);
        self.i(Op::V_ADD_U32, &[whole(j), whole(self.n0), whole(j)]);
        let j = self.vadd(j, bn * c.mfma.n);
        let t = self.vv();
        self.i(Op::V_LSHLREV_B32, &[whole(t), int(2), whole(self.lgrp)]);
        let ib = self.vv();
        let kw = self.k3(c.wave_rows(Operand::A));
        self.i(Op::V_MAD_U32_U24, &[whole(ib), whole(self.wm), kw, whole(t)]);
        self.i(Op::V_ADD_U32, &[whole(ib), whole(self.m0), whole(ib)]);
        let ib = self.vadd(ib, bm * c.mfma.m);
        let t2 = self.vv();
        self.i(Op::V_MUL_LO_U32, &[whole(t2), ldc, whole(j)]);
        self.i(Op::V_ADD_U32, &[whole(t2), whole(ib), whole(t2)]);
        let base = self.vv();
        self.i(Op::V_LSHLREV_B32, &[whole(base), int(log2(ec)), whole(t2)]);
        self.i(Op::V_CMP_GT_I32, &[VCC, n, whole(j)]);
        let basec = self.vv();
        self.i(Op::V_CNDMASK_B32, &[whole(basec), whole(self.oob), whole(base), VCC]);
        (ib, basec, j)
    }

    /// The fused epilogue's per-block value: the column bias of this lane's column.
    fn col_bias(&mut self, j: Reg) -> Option<Reg> {
        if self.c().fusion.bias != crate::ir::Bias::PerColumn {
            return None;
        }
        let (o, b) = (self.vv(), self.vv());
        let eb = self.c().bias_bytes();
        self.i(Op::V_LSHLREV_B32, &[whole(o), int(log2(eb)), whole(j)]);
        if eb == 4 {
            self.ie(Inst::new(Op::BUFFER_LOAD_DWORD, &[whole(b), whole(o), whole(self.srd_bias), int(0)]).offen());
            Some(b)
        } else {
            self.ie(Inst::new(Op::BUFFER_LOAD_USHORT, &[whole(b), whole(o), whole(self.srd_bias), int(0)]).offen());
            Some(self.c_to_f32(whole(b), false))
        }
    }

    /// `clamp(act(x + bias))` in place (ir::Fusion). GELU (tanh form) and SiLU are both
    /// `x * sigmoid(z)`, `z = 2 sqrt(2/pi) (x + 0.044715 x^3)` or `x`, with
    /// `sigmoid(z) = 1 / (1 + 2^(-z log2 e))` (`v_exp_f32` is 2^x, ISA VOP1): a large
    /// negative z gives 2^inf = inf and y = x * 0; a large positive one y = x.
    fn fuse(&mut self, x: Reg, bias: Option<O>) {
        use crate::ir::Activation;
        let f = self.c().fusion;
        if let Some(b) = bias {
            self.i(Op::V_ADD_F32, &[whole(x), b, whole(x)]);
        }
        const LOG2E: f32 = std::f32::consts::LOG2_E;
        let sigmoid_times_x = |l: &mut Self, z: Reg, scale: f32| {
            let (w, d) = (l.vv(), l.vv());
            l.i(Op::V_MUL_F32, &[whole(w), lit((-scale * LOG2E).to_bits()), whole(z)]);
            l.i(Op::V_EXP_F32, &[whole(w), whole(w)]);
            l.i(Op::V_ADD_F32, &[whole(d), lit(1.0f32.to_bits()), whole(w)]);
            l.i(Op::V_RCP_F32, &[whole(d), whole(d)]);
            l.i(Op::V_MUL_F32, &[whole(x), whole(x), whole(d)]);
        };
        match f.act {
            Activation::None => {}
            Activation::Relu => self.i(Op::V_MAX_F32, &[whole(x), int(0), whole(x)]),
            Activation::Silu => sigmoid_times_x(self, x, 1.0),
            Activation::GeluTanh => {
                let c0 = (2.0f64 / std::f64::consts::PI).sqrt() as f32;
                let c1 = c0 * 0.044715;
                let (x2, t) = (self.vv(), self.vv());
                self.i(Op::V_MUL_F32, &[whole(x2), whole(x), whole(x)]);
                self.i(Op::V_MUL_F32, &[whole(t), lit(c1.to_bits()), whole(x2)]);
                self.i(Op::V_ADD_F32, &[whole(t), lit(c0.to_bits()), whole(t)]);
                self.i(Op::V_MUL_F32, &[whole(t), whole(t), whole(x)]);
                sigmoid_times_x(self, t, 2.0);
            }
        }
        if f.clamp {
            let (lo, hi) = (self.clamp_lo, self.clamp_hi);
            self.i(Op::V_MIN_F32, &[whole(x), hi, whole(x)]);
            self.i(Op::V_MAX_F32, &[whole(x), lo, whole(x)]);
        }
    }

    /// Register quad `q`'s C (4 consecutive rows of a lane): one `buffer_load_dwordx4` (f32)
    /// or `_dwordx2` (16-bit) at the block's `base` offset.
    fn load_c_quad(&mut self, q: u16, base: Reg) -> Reg {
        let c = *self.c();
        let ec = c.c_bytes();
        let imm = (4 * c.lane_groups() * q as u32 * ec) as i32;
        let cv = self.vn((4 * ec / 4) as u8);
        let opc = if ec == 4 { Op::BUFFER_LOAD_DWORDX4 } else { Op::BUFFER_LOAD_DWORDX2 };
        self.ie(Inst::new(opc, &[whole(cv), whole(base), whole(self.srd_c), int(0)]).offen().offset(imm));
        cv
    }

    /// fp8: register quad `q`'s 4 row scales (one dwordx4 of the row vector at `row_off`), or
    /// `None` without a row vector.
    fn load_row_scale_quad(&mut self, q: u16, row_off: Option<Reg>) -> Option<Reg> {
        let (Some(sv), Some(o)) = (self.scale_vecs, row_off) else { return None };
        let b = self.vn(4);
        let at = (4 * self.c().lane_groups() * q as u32 * 4) as i32;
        self.ie(Inst::new(Op::BUFFER_LOAD_DWORDX4, &[whole(b), whole(o), whole(sv.srd_row), int(0)])
            .offen()
            .offset(at));
        Some(b)
    }

    /// The stores of every block: 4 consecutive rows per lane and register quad as one
    /// `buffer_store_dwordx4` (f32) or `_dwordx2` (16-bit), C read the same way when
    /// `with_beta`; the tile must lie inside `m` (checked by the caller).
    fn store_vectors(&mut self, with_beta: bool) {
        let c = *self.c();
        let ec = c.c_bytes();
        let g = c.lane_groups();
        let srd = whole(self.srd_c);
        for bm in 0..c.blocks(Operand::A) {
            for bn in 0..c.blocks(Operand::B) {
                let (ib, base, j) = self.block_origin(bm, bn);
                let cb = self.col_bias(j);
                let cs = self.col_scale(j);
                let row_off = self.scale_vecs.map(|_| {
                    let o = self.vv();
                    self.i(Op::V_LSHLREV_B32, &[whole(o), int(2), whole(ib)]);
                    o
                });
                let eb = c.bias_bytes();
                let rowb = if c.fusion.bias == crate::ir::Bias::PerRow {
                    let o = self.vv();
                    self.i(Op::V_LSHLREV_B32, &[whole(o), int(log2(eb)), whole(ib)]);
                    Some(o)
                } else {
                    None
                };
                let acc = self.acc[(bm * c.blocks(Operand::B) + bn) as usize];
                // `schedule::slim_edges`: every quad's C and scale loads of the block are
                // issued before the first quad's arithmetic (their latencies overlap);
                // otherwise each quad loads and waits in turn.
                let quads = (c.acc_regs() / 4) as u16;
                // MX on the slim ping-pong (`lower/mx.rs`): quads in pairs, one dwordx4 each.
                let paired = paired_stores(&c) && self.scale_vecs.is_none();
                let pbase = paired.then(|| {
                    let (h8, pb) = (self.vv(), self.vv());
                    self.i(Op::V_LSHLREV_B32, &[whole(h8), int(3), whole(self.lgrp)]);
                    self.i(Op::V_ADD_U32, &[whole(pb), whole(base), whole(h8)]);
                    pb
                });
                let mut pair_out: Option<Reg> = None;
                let mut early = std::collections::BTreeMap::new();
                if crate::schedule::slim_edges(&c) && c.fusion == crate::ir::Fusion::NONE {
                    for q in 0..quads {
                        let cv = with_beta.then(|| self.load_c_quad(q, base));
                        let rs4 = self.load_row_scale_quad(q, row_off);
                        early.insert(q, (cv, rs4));
                    }
                }
                for q in 0..quads {
                    let imm = (4 * g * q as u32 * ec) as i32;
                    let dw = (4 * ec / 4) as u8;
                    let pre = early.get(&q).copied();
                    let cv = match pre {
                        Some((cv, _)) => cv,
                        None => with_beta.then(|| self.load_c_quad(q, base)),
                    };
                    // The 4 rows' bias: 4 f32 (one dwordx4) or 4 halves (one dwordx2),
                    // as f32 registers.
                    let rb4: Option<Vec<Reg>> = rowb.map(|o| {
                        let b = self.vn((eb) as u8);
                        let at = (4 * g * q as u32 * eb) as i32;
                        let opc = if eb == 4 { Op::BUFFER_LOAD_DWORDX4 } else { Op::BUFFER_LOAD_DWORDX2 };
                        self.ie(Inst::new(opc, &[whole(b), whole(o), whole(self.srd_bias), int(0)]).offen().offset(at));
                        (0..4u16)
                            .map(|r| {
                                if eb == 4 {
                                    Reg { index: b.index + r, count: 1, ..b }
                                } else {
                                    self.c_to_f32(sub(b, r / 2, 1), r % 2 == 1)
                                }
                            })
                            .collect()
                    });
                    // fp8: the 4 rows' scales (one dwordx4 of the row vector).
                    let rs4 = match pre {
                        Some((_, rs4)) => rs4,
                        None => self.load_row_scale_quad(q, row_off),
                    };
                    // fp8 without fusion: `scale_d` applied to pairs of rows (`scale_d_pair`).
                    let pk = self.scale_d2.is_some() && c.fusion == crate::ir::Fusion::NONE;
                    let mut xs = vec![];
                    let mut pair = None;
                    for r in 0..4u16 {
                        let cf = match (cv, ec) {
                            (None, _) => None,
                            (Some(cv), 4) => Some(Reg { index: cv.index + r, count: 1, ..cv }),
                            (Some(cv), _) => Some(self.c_to_f32(sub(cv, r / 2, 1), r % 2 == 1)),
                        };
                        let w = match rs4 {
                            Some(b) => self.outer_scale(sub(b, r, 1), cs),
                            None => None,
                        };
                        let x = if pk {
                            let d = *pair.get_or_insert_with(|| self.vn(2));
                            let x = Reg { index: d.index + r % 2, count: 1, ..d };
                            self.scale_to(x, acc, 4 * q + r, cf, w, false);
                            if r % 2 == 1 {
                                self.scale_d_pair(d);
                                pair = None;
                            }
                            x
                        } else {
                            self.scale(acc, 4 * q + r, cf, w)
                        };
                        if c.fusion != crate::ir::Fusion::NONE {
                            let bias = cb.map(whole).or(rb4.as_ref().map(|b| whole(b[r as usize])));
                            self.fuse(x, bias);
                        }
                        xs.push(x);
                    }
                    if let Some(pb) = pbase {
                        // Quad `q` (rows `8q + 4h ..`, `h` the lane group) packed into the
                        // pair's dwords `2 (q % 2) ..`; after the odd quad, the lanes of group 0
                        // trade their odd quad for group 1's even one (`v_permlane32_swap`), so
                        // that group 0 holds rows `8q' .. 8q' + 8` of the even quad `q'` and group 1
                        // rows `8q' + 8 ..` of the odd: one `buffer_store_dwordx4` of 16 rows
                        // per column where two dwordx2 stores each wrote 8 (half the stores, and
                        // of the TCP's tag lookups: each store touches one line per column).
                        let out = *pair_out.get_or_insert_with(|| self.vn(4));
                        let h = 2 * (q % 2);
                        self.pack16(xs[0], xs[1], sub(out, h, 1));
                        self.pack16(xs[2], xs[3], sub(out, h + 1, 1));
                        if q % 2 == 1 {
                            for d in 0..2u16 {
                                self.ie(Inst::new(Op::V_PERMLANE32_SWAP_B32, &[sub(out, d, 1), sub(out, 2 + d, 1)]));
                            }
                            let at = (4 * g * (q as u32 - 1) * ec) as i32;
                            self.ie(Inst::new(Op::BUFFER_STORE_DWORDX4, &[whole(out), whole(pb), srd, int(0)])
                                .offen()
                                .offset(at));
                            pair_out = None;
                        }
                        continue;
                    }
                    let out = self.vn(dw);
                    if ec == 4 {
                        for (r, x) in xs.iter().enumerate() {
                            self.i(Op::V_MOV_B32, &[sub(out, r as u16, 1), whole(*x)]);
                        }
                        self.ie(Inst::new(Op::BUFFER_STORE_DWORDX4, &[whole(out), whole(base), srd, int(0)])
                            .offen()
                            .offset(imm));
                    } else {
                        self.pack16(xs[0], xs[1], sub(out, 0, 1));
                        self.pack16(xs[2], xs[3], sub(out, 1, 1));
                        self.ie(Inst::new(Op::BUFFER_STORE_DWORDX2, &[whole(out), whole(base), srd, int(0)])
                            .offen()
                            .offset(imm));
                    }
                }
            }
        }
    }

    /// The `beta == 0` stores of a tile inside `m` staged through LDS ([`staged_epilogue`]):
    /// per block column `bn` of the wave (32 C columns, one round), each register quad's 4
    /// rows are scaled and packed to 8 bytes and written to LDS (`ds_write_b64`), then read
    /// back 16 bytes (8 rows of one column) per lane with `ds_read_b128`, 16 lanes per column
    /// (two 128-byte lines of C, 8 lanes each, in lane order), and stored with one
    /// `buffer_store_dwordx4` per 4 columns (columns `>= n` dropped through offsets past
    /// NUM_RECORDS, ISA.md §2.3). The TCP looks up one tag each time the line changes in
    /// lane order (the timing model's `MemSystem::request`, after ROCm Compute Profiler's
    /// vL1D model): 8 lookups per store here, against 64 for the paired stores, whose lanes
    /// each write another column.
    ///
    /// The wave's round region (`wave_rows(A) / 8` chunks of 8 rows x 32 columns x 16 bytes)
    /// lies in the operand buffer the drain does not read, `nk % 2` for `nk` K tiles (the
    /// drain reads buffer `(nk - 1) % 2`, `lower`): every wave read it last in the loop's last
    /// body, before the drain's barrier, and no copy writes it after that; each wave owns
    /// its region, and a wave's DS operations run in program order (ISA.md §3.4). The next
    /// round's writes follow every store of this one, each of which waited for its read.
    ///
    /// Chunk `c` (rows `8c ..`) of the round's column `x` sits at byte `256 x + 16 (c ^ (x %
    /// 16))`: a read phase (16 lanes: one column's 16 chunks) touches each of the 64 banks
    /// once, a write phase (32 columns at one chunk and half) 32 banks twice, the least for
    /// a half-slot write (ISA.md §3.1 bank layout; `timing/lds_banks.rs` phases).
    fn store_staged(&mut self) {
        let c = *self.c();
        let ec = c.c_bytes();
        let srd = whole(self.srd_c);
        let (n, ldc, k) = (self.arg(7), self.arg(11), self.arg(8));
        let chunks = c.wave_rows(Operand::A) / 8;
        let region = chunks * 32 * 16;
        // The free buffer's base plus this wave's region (bits 4..7 clear: the swizzle's).
        let (t, rb) = (self.sv(), self.sv());
        self.i(Op::S_ADD_U32, &[whole(t), k, lit(c.tile.2 - 1)]);
        self.i(Op::S_LSHR_B32, &[whole(t), whole(t), int(log2(c.tile.2))]);
        self.i(Op::S_MAX_U32, &[whole(t), whole(t), int(1)]);
        self.i(Op::S_AND_B32, &[whole(t), whole(t), int(1)]);
        self.i(Op::S_MUL_I32, &[whole(t), whole(t), lit(self.k.lds_buffer_bytes())]);
        let ws = self.wave_sgpr();
        self.i(Op::S_MUL_I32, &[whole(rb), whole(ws), lit(region)]);
        self.i(Op::S_ADD_U32, &[whole(rb), whole(rb), whole(t)]);
        // Write base (lane: column `x = lrow`, half `lgrp`): `rb + 256 x + 16 (x % 16) + 8 h`;
        // chunk `c`'s address is the base with `16 c` XORed in.
        let (x256, x16, wb) = (self.vv(), self.vv(), self.vv());
        self.i(Op::V_LSHLREV_B32, &[whole(x256), int(8), whole(self.lrow)]);
        self.i(Op::V_AND_B32, &[whole(x16), int(15), whole(self.lrow)]);
        self.i(Op::V_LSHLREV_B32, &[whole(x16), int(4), whole(x16)]);
        self.i(Op::V_ADD3_U32, &[whole(wb), whole(rb), whole(x256), whole(x16)]);
        let h8 = self.vv();
        self.i(Op::V_LSHLREV_B32, &[whole(h8), int(3), whole(self.lgrp)]);
        self.i(Op::V_ADD_U32, &[whole(wb), whole(h8), whole(wb)]);
        let wbs: Vec<Reg> = (0..chunks.min(16))
            .map(|ch| {
                if ch == 0 {
                    return wb;
                }
                let r = self.vv();
                self.i(Op::V_XOR_B32, &[whole(r), lit(16 * ch), whole(wb)]);
                r
            })
            .collect();
        // Read bases (lane: chunk `lane % 16` of column `xl = lane / 16` of 4): store `t` of a
        // round reads columns `4t + xl`, at `rb + 256 xl + 16 ((lane % 16) ^ xl)` with
        // `64 (t % 4)` XORed in (`x % 16 = 4 (t % 4) + xl`) and `1024 t` added.
        let lane = self.lane;
        let (cl, xl, rbase) = (self.vv(), self.vv(), self.vv());
        self.i(Op::V_AND_B32, &[whole(cl), int(15), whole(lane)]);
        self.i(Op::V_LSHRREV_B32, &[whole(xl), int(4), whole(lane)]);
        let (sw, x256r) = (self.vv(), self.vv());
        self.i(Op::V_XOR_B32, &[whole(sw), whole(cl), whole(xl)]);
        self.i(Op::V_LSHLREV_B32, &[whole(sw), int(4), whole(sw)]);
        self.i(Op::V_LSHLREV_B32, &[whole(x256r), int(8), whole(xl)]);
        self.i(Op::V_ADD3_U32, &[whole(rbase), whole(rb), whole(x256r), whole(sw)]);
        let rbs: Vec<Reg> = (0..4u32)
            .map(|q| {
                if q == 0 {
                    return rbase;
                }
                let r = self.vv();
                self.i(Op::V_XOR_B32, &[whole(r), lit(64 * q), whole(rbase)]);
                r
            })
            .collect();
        // The lane's C column (`n0 + wn * wave_rows(B) + xl`) and byte offset at row
        // `m0 + wm * wave_rows(A) + 8 (lane % 16)`; each store adds 4 columns (`4 ldc`
        // elements).
        let (j, i, o, r8) = (self.vv(), self.vv(), self.vv(), self.vv());
        let kw = self.k3(c.wave_rows(Operand::B));
        self.i(Op::V_MAD_U32_U24, &[whole(j), whole(self.wn), kw, whole(xl)]);
        self.i(Op::V_ADD_U32, &[whole(j), whole(self.n0), whole(j)]);
        self.i(Op::V_LSHLREV_B32, &[whole(r8), int(3), whole(cl)]);
        let kw = self.k3(c.wave_rows(Operand::A));
        self.i(Op::V_MAD_U32_U24, &[whole(i), whole(self.wm), kw, whole(r8)]);
        self.i(Op::V_ADD_U32, &[whole(i), whole(self.m0), whole(i)]);
        self.i(Op::V_MUL_LO_U32, &[whole(o), ldc, whole(j)]);
        self.i(Op::V_ADD_U32, &[whole(o), whole(i), whole(o)]);
        self.i(Op::V_LSHLREV_B32, &[whole(o), int(log2(ec)), whole(o)]);
        let step = self.sv();
        self.i(Op::S_LSHL_B32, &[whole(step), ldc, int(log2(4 * ec))]);
        let (mut jt, mut ot) = (j, o);
        let quads = (c.acc_regs() / 4) as u16;
        let stores = chunks * 32 * 16 / 1024;
        for bn in 0..c.blocks(Operand::B) {
            for bm in 0..c.blocks(Operand::A) {
                let acc = self.acc[(bm * c.blocks(Operand::B) + bn) as usize];
                for q in 0..quads {
                    let mut xs = vec![];
                    let mut pair = None;
                    for r in 0..4u16 {
                        let x = if self.scale_d2.is_some() {
                            let d = *pair.get_or_insert_with(|| self.vn(2));
                            let x = Reg { index: d.index + r % 2, count: 1, ..d };
                            self.scale_to(x, acc, 4 * q + r, None, None, false);
                            if r % 2 == 1 {
                                self.scale_d_pair(d);
                                pair = None;
                            }
                            x
                        } else {
                            self.scale(acc, 4 * q + r, None, None)
                        };
                        xs.push(x);
                    }
                    let out = self.vn(2);
                    self.pack16(xs[0], xs[1], sub(out, 0, 1));
                    self.pack16(xs[2], xs[3], sub(out, 1, 1));
                    let ch = 4 * bm + q as u32;
                    self.ie(Inst::new(Op::DS_WRITE_B64, &[whole(wbs[ch as usize % 16]), whole(out)])
                        .offset((4096 * (ch / 16)) as i32));
                }
            }
            // The round's reads first: they pipeline in the LDS (4 clocks each without
            // conflicts) where a read, its wait and its store in turn took about 100 clocks
            // per store under the timing model.
            let ds: Vec<Reg> = (0..stores)
                .map(|s| {
                    let d = self.vn(4);
                    self.ie(Inst::new(Op::DS_READ_B128, &[whole(d), whole(rbs[(s % 4) as usize])])
                        .offset((1024 * s) as i32));
                    d
                })
                .collect();
            for s in 0..stores {
                if bn + s > 0 {
                    let (j2, o2) = (self.vv(), self.vv());
                    self.i(Op::V_ADD_U32, &[whole(j2), int(4), whole(jt)]);
                    self.i(Op::V_ADD_U32, &[whole(o2), whole(step), whole(ot)]);
                    (jt, ot) = (j2, o2);
                }
                let oc = self.vv();
                self.i(Op::V_CMP_GT_I32, &[VCC, n, whole(jt)]);
                self.i(Op::V_CNDMASK_B32, &[whole(oc), whole(self.oob), whole(ot), VCC]);
                self.ie(Inst::new(Op::BUFFER_STORE_DWORDX4, &[whole(ds[s as usize]), whole(oc), srd, int(0)]).offen());
            }
        }
    }

    /// The stores of every block element by element, rows `>= m` (and columns `>= n`)
    /// dropped by offsets past NUM_RECORDS: the edge tiles' path.
    fn store_elements(&mut self, with_beta: bool) {
        let c = *self.c();
        let ec = c.c_bytes();
        let g = c.lane_groups();
        let m = self.arg(6);
        let srd = whole(self.srd_c);
        for bm in 0..c.blocks(Operand::A) {
            for bn in 0..c.blocks(Operand::B) {
                let (ib, basec, j) = self.block_origin(bm, bn);
                let cb = self.col_bias(j);
                let cs = self.col_scale(j);
                let rem = self.vv();
                self.i(Op::V_SUB_U32, &[whole(rem), m, whole(ib)]);
                let acc = self.acc[(bm * c.blocks(Operand::B) + bn) as usize];
                let mut offs = vec![];
                for r in 0..c.acc_regs() {
                    let d = 4 * g * (r / 4) + r % 4;
                    let o = self.vv();
                    self.i(Op::V_CMP_LT_I32, &[VCC, lit(d), whole(rem)]);
                    self.i(Op::V_CNDMASK_B32, &[whole(o), whole(self.oob), whole(basec), VCC]);
                    offs.push((o, (d * ec) as i32));
                }
                let mut cvals = vec![];
                if with_beta {
                    for &(o, imm) in &offs {
                        let cv = self.vv();
                        let opc = if ec == 4 { Op::BUFFER_LOAD_DWORD } else { Op::BUFFER_LOAD_USHORT };
                        self.ie(Inst::new(opc, &[whole(cv), whole(o), srd, int(0)]).offen().offset(imm));
                        cvals.push(cv);
                    }
                }
                for r in 0..c.acc_regs() as usize {
                    let cf = if with_beta {
                        Some(if ec == 4 { cvals[r] } else { self.c_to_f32(whole(cvals[r]), false) })
                    } else {
                        None
                    };
                    // fp8: row `ib + d`'s scale (rows past m read 0 and are not stored).
                    let w = match self.scale_vecs {
                        Some(sv) => {
                            let (o, b) = (self.vv(), self.vv());
                            self.i(Op::V_LSHLREV_B32, &[whole(o), int(2), whole(ib)]);
                            let d = 4 * g * (r as u32 / 4) + r as u32 % 4;
                            self.ie(Inst::new(Op::BUFFER_LOAD_DWORD, &[whole(b), whole(o), whole(sv.srd_row), int(0)])
                                .offen()
                                .offset((4 * d) as i32));
                            self.outer_scale(whole(b), cs)
                        }
                        None => None,
                    };
                    let x = self.scale(acc, r as u16, cf, w);
                    if c.fusion != crate::ir::Fusion::NONE {
                        let bias = match c.fusion.bias {
                            crate::ir::Bias::PerRow => {
                                let (o, b) = (self.vv(), self.vv());
                                let eb = c.bias_bytes();
                                self.i(Op::V_LSHLREV_B32, &[whole(o), int(log2(eb)), whole(ib)]);
                                let d = 4 * g * (r as u32 / 4) + r as u32 % 4;
                                let opc = if eb == 4 { Op::BUFFER_LOAD_DWORD } else { Op::BUFFER_LOAD_USHORT };
                                self.ie(Inst::new(opc, &[whole(b), whole(o), whole(self.srd_bias), int(0)])
                                    .offen()
                                    .offset((eb * d) as i32));
                                Some(if eb == 4 { whole(b) } else { whole(self.c_to_f32(whole(b), false)) })
                            }
                            _ => cb.map(whole),
                        };
                        self.fuse(x, bias);
                    }
                    let (o, imm) = offs[r];
                    match (c.c_type, self.arch) {
                        (DType::F32, _) => {
                            self.ie(Inst::new(Op::BUFFER_STORE_DWORD, &[whole(x), whole(o), srd, int(0)])
                                .offen()
                                .offset(imm))
                        }
                        (DType::F16, _) => {
                            let y = self.vv();
                            self.i(Op::V_CVT_F16_F32, &[whole(y), whole(x)]);
                            self.ie(Inst::new(Op::BUFFER_STORE_SHORT, &[whole(y), whole(o), srd, int(0)])
                                .offen()
                                .offset(imm));
                        }
                        (_, Arch::Gfx950) => {
                            let y = self.vv();
                            self.i(Op::V_CVT_PK_BF16_F32, &[whole(y), whole(x), whole(x)]);
                            self.ie(Inst::new(Op::BUFFER_STORE_SHORT, &[whole(y), whole(o), srd, int(0)])
                                .offen()
                                .offset(imm));
                        }
                        (_, Arch::Gfx942) => {
                            let y = self.bf16_hi(x);
                            self.ie(Inst::new(Op::BUFFER_STORE_SHORT_D16_HI, &[whole(y), whole(o), srd, int(0)])
                                .offen()
                                .offset(imm));
                        }
                    }
                }
            }
        }
    }

    /// `C = alpha * acc + beta * C`. Two uniform branches: `beta == 0` (never reads C) and
    /// whether vector stores may serve (the tile's rows all inside `m`, and for 16-bit C
    /// a dword-aligned C base and even `ldc`, since dword accesses ignore the two address
    /// LSBs, ISA.md §2.2); otherwise element stores.
    fn epilogue(&mut self) {
        let c = *self.c();
        let ec = c.c_bytes();
        let (m, n, ldc) = (self.arg(6), self.arg(7), self.arg(11));
        self.srd_c = self.srd(self.arg(4), self.arg(5), m, n, ldc, ec);
        let k7fff = self.sv();
        self.i(Op::S_MOVK_I32, &[whole(k7fff), O::Imm(0x7fff)]);
        self.k7fff = k7fff;
        self.load_scales();
        let f = c.fusion;
        if f != crate::ir::Fusion::NONE {
            // bias_lo bias_hi clamp_lo clamp_hi
            let e = self.p.vreg(RegFile::Sgpr, 4);
            self.i(Op::S_LOAD_DWORDX4, &[whole(e), sr(0, 2), O::Imm(ka::OFF_BIAS as i64)]);
            (self.clamp_lo, self.clamp_hi) = (sub(e, 2, 1), sub(e, 3, 1));
            if f.bias != crate::ir::Bias::None {
                let len = if f.bias == crate::ir::Bias::PerRow { m } else { n };
                self.srd_bias = self.srd(sub(e, 0, 1), sub(e, 1, 1), len, int(1), int(1), c.bias_bytes());
            }
        }
        // v_perm_b32 selectors (VOP3 takes no literal on gfx9): high or low halves of two dwords.
        let (ph, pl) = (self.sv(), self.sv());
        self.i(Op::S_MOV_B32, &[whole(ph), lit(0x0706_0302)]);
        self.i(Op::S_MOV_B32, &[whole(pl), lit(0x0504_0100)]);
        (self.perm_hi, self.perm_lo) = (ph, pl);
        // Vector stores allowed: SCC-free flag in an SGPR (1 = yes).
        let vok = self.sv();
        let t = self.sv();
        self.i(Op::S_ADD_U32, &[whole(t), whole(self.m0), lit(c.tile.0)]);
        self.i(Op::S_CMP_LE_U32, &[whole(t), m]);
        self.i(Op::S_CSELECT_B32, &[whole(vok), int(1), int(0)]);
        if ec != 4 {
            self.i(Op::S_OR_B32, &[whole(t), self.arg(4), ldc]);
            self.i(Op::S_AND_B32, &[whole(t), whole(t), int(1)]);
            // ldc odd or C only 2-byte aligned (bit 1 of the address): elements.
            let t2 = self.sv();
            self.i(Op::S_AND_B32, &[whole(t2), self.arg(4), int(2)]);
            self.i(Op::S_OR_B32, &[whole(t), whole(t), whole(t2)]);
            self.i(Op::S_CMP_EQ_U32, &[whole(t), int(0)]);
            self.i(Op::S_CSELECT_B32, &[whole(vok), whole(vok), int(0)]);
        }
        // fp8 with scale vectors: per-tensor plans pass none, and each vector load waits
        // (`vmcnt` counts stores too, ISA.md §3.4) for every store issued before it; with one
        // workgroup per CU (`fp8pp`) nothing hides that drain, which the timing model put at
        // 15.2k of the 4096^3 workgroup's cycles against 1.3k for the blog's ping-pong. A
        // uniform branch on both pointers being null takes paths compiled without them. Only
        // the slim ping-pong so far: other fp8 kernels run several workgroups per CU, which
        // hide much of that wait (not yet measured; each changed kernel must be
        // re-characterised).
        let no_vectors = self.scale_vecs.filter(|_| loads_first(&c)).map(|sv| {
            let (t, l) = (self.sv(), self.p.label());
            self.i(Op::S_OR_B32, &[whole(t), sub(sv.mask_row, 0, 1), sub(sv.mask_col, 0, 1)]);
            self.i(Op::S_CMP_EQ_U32, &[whole(t), int(0)]);
            self.p.branch(Op::S_CBRANCH_SCC1, l);
            l
        });
        self.store_paths(vok);
        if let Some(l) = no_vectors {
            self.p.place(l);
            self.scale_vecs = None;
            self.store_paths(vok);
        }
    }

    /// The epilogue's stores after its setup: a uniform branch on `beta == 0` (never reads
    /// C) and on `vok` (vector stores allowed), each path ending the program.
    fn store_paths(&mut self, vok: Reg) {
        let c = *self.c();
        let beta = self.arg(13);
        let beta0 = self.p.label();
        // Split-K partial kernels write raw sums: the `beta == 0` path only.
        let partial = c.split == SplitK::Partial;
        if !partial {
            let bt = self.sv();
            self.i(Op::S_AND_B32, &[whole(bt), lit(0x7fff_ffff), beta]);
            self.i(Op::S_CMP_EQ_U32, &[whole(bt), int(0)]);
            self.p.branch(Op::S_CBRANCH_SCC1, beta0);
        }
        for with_beta in [true, false] {
            if with_beta && partial {
                continue;
            }
            if !with_beta {
                self.p.place(beta0);
            }
            let elems = self.p.label();
            self.i(Op::S_CMP_EQ_U32, &[whole(vok), int(0)]);
            self.p.branch(Op::S_CBRANCH_SCC1, elems);
            if !with_beta && self.scale_vecs.is_none() && staged_epilogue(&c) {
                self.store_staged();
            } else {
                self.store_vectors(with_beta);
            }
            self.i(Op::S_ENDPGM, &[]);
            self.p.place(elems);
            self.store_elements(with_beta);
            self.i(Op::S_ENDPGM, &[]);
        }
    }
}

/// Whether the prologue issues every operand's loads of the last K tile before its first LDS
/// write and zeroes the accumulators while they fly ([`L::prologue_loads_first`]): the slim
/// ping-pong (`fp8pp`, `mxpp`, `bsfp8pp`). The timing model put `fp8pp`'s first MFMA at
/// 5.7k cycles of a 4096^3 workgroup against the blog ping-pong's 3.5k, with A's tail loads
/// waited for and written before B's were issued (MXFP4 on `mxpp`: 5681 -> 5752 TFLOP/s).
fn loads_first(c: &crate::ir::KernelConfig) -> bool {
    matches!(c.schedule, crate::schedule::Schedule::PingPongSlim { .. })
}

/// Whether the epilogue's aligned stores pair a block's register quads ([`L::store_vectors`],
/// on its paths without fp8 scale vectors): gfx950's slim ping-pong (`fp8pp`, `mxpp`,
/// `bsfp8pp`) with 16-bit C and 32x32 MFMAs, quads `8q + 4h` apart by lane group `h`, traded
/// by `v_permlane32_swap` (gfx950 only). With one workgroup per CU its stores drain alone,
/// and the TCP looks up one tag per line a store touches: the timing model put the drain of
/// 32 dwordx2 stores per wave, 32 lines each, at most of the 15k cycles between the last MFMA
/// and the workgroup's end of MXFP4 at 8192^3 (`lower/mx.rs`).
fn paired_stores(c: &crate::ir::KernelConfig) -> bool {
    c.arch == Arch::Gfx950
        && matches!(c.schedule, crate::schedule::Schedule::PingPongSlim { .. })
        && c.c_bytes() == 2
        && c.mfma.m == 32
        && c.lane_groups() == 2
        && c.fusion == crate::ir::Fusion::NONE
        && (c.acc_regs() / 4).is_multiple_of(2)
}

/// Whether the epilogue's aligned `beta == 0` path without fp8 scale vectors stages the
/// tile through LDS ([`L::store_staged`]): the fp8 slim ping-pong (`fp8pp`, per-tensor scales,
/// and `bsfp8pp`, block scales; not `mxpp`) where [`paired_stores`] holds, with waves of 128 rows
/// (16 chunks of 8 rows, two 128-byte lines per column) whose 32-column halves fit one
/// operand buffer together. The TCP looks up a tag each time the line changes in lane
/// order: a paired store's lanes each write another column (64 lookups per 1 KiB store), a
/// staged store's 8 consecutive lanes one line (8), which the timing model turns into a
/// faster drain of the stores of the one workgroup per CU (`bsfp8pp` at 4096^3: the
/// workgroup's last MFMA to its end 5.8k clocks -> 3.4k, `examples/phases.rs`).
fn staged_epilogue(c: &crate::ir::KernelConfig) -> bool {
    paired_stores(c)
        && c.scaled()
        && matches!(c.block_scale, crate::ir::BlockScale::None | crate::ir::BlockScale::Fp8Blocks)
        && c.split == SplitK::None
        && c.mfma.n == 32
        && c.wave_rows(Operand::A) == 128
        && c.waves * 128 * 32 * c.c_bytes() <= (c.tile.0 + c.tile.1) * c.tile.2 * c.ab_bytes()
}

/// Slabs the split-K reduction loads per round: 16 loads in flight per wave, so a
/// reduction of `S` slabs waits for memory `ceil(S/16)` times, not `S` times.
pub const REDUCE_UNROLL: u32 = 16;

impl L<'_> {
    /// The split-K reduction ([`SplitK::Reduce`], `kernel_args.rs`): lane `l` of wave `w` in
    /// workgroup `(x, y)` owns C element `(i, j) = (64x + l, 4y + w)`; a wave reads 64
    /// consecutive f32 of one slab column (256 bytes) per load. The slabs are summed in
    /// order `z = 0, 1, ...` into one f32 (`v_add_f32`, round to nearest even), the same
    /// order every run: deterministic. Each round issues [`REDUCE_UNROLL`] loads (slabs
    /// `16r .. 16r+15`, lane offsets `off + u*wstride`) from a buffer resource whose base
    /// advances 16 slabs per round and whose NUM_RECORDS is the bytes left, so the loads
    /// past the last slab return 0 (ISA.md §2.3) and `x + 0 = x` leaves the sum unchanged.
    /// Then `alpha * sum (+ beta * C)` in f32 (`v_mul_legacy_f32`, the GEMM epilogue's
    /// rule), one rounding to C's type, one element store; lanes outside `m x n` store
    /// through an offset past NUM_RECORDS (dropped). A uniform branch on `beta == 0` keeps C
    /// unread then.
    fn reduce(&mut self) {
        let c = *self.c();
        let ec = c.c_bytes();
        let (a0, a1) = (self.p.vreg(RegFile::Sgpr, 8), self.p.vreg(RegFile::Sgpr, 4));
        self.i(Op::S_LOAD_DWORDX8, &[whole(a0), sr(0, 2), O::Imm(ka::R_OFF_WS as i64)]);
        self.i(Op::S_LOAD_DWORDX4, &[whole(a1), sr(0, 2), O::Imm(ka::R_OFF_LDC as i64)]);
        let w = |i: u16| sub(a0, i, 1);
        let (ws_lo, ws_hi, c_lo, c_hi, m, n, splits, ldw) = (w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7));
        let (ldc, alpha, beta, wstride) = (sub(a1, 0, 1), sub(a1, 1, 1), sub(a1, 2, 1), sub(a1, 3, 1));
        let (tid, lane, wave, i, j) = (self.vv(), self.vv(), self.vv(), self.vv(), self.vv());
        self.i(Op::V_AND_B32, &[whole(tid), lit(0x3ff), v(0)]);
        self.i(Op::V_AND_B32, &[whole(lane), int(63), whole(tid)]);
        self.i(Op::V_LSHRREV_B32, &[whole(wave), int(6), whole(tid)]);
        let (x0, y0) = (self.sv(), self.sv());
        self.i(Op::S_LSHL_B32, &[whole(x0), s(2), int(log2(c.tile.0))]);
        self.i(Op::S_LSHL_B32, &[whole(y0), s(3), int(log2(c.tile.1))]);
        self.i(Op::V_ADD_U32, &[whole(i), whole(x0), whole(lane)]);
        self.i(Op::V_ADD_U32, &[whole(j), whole(y0), whole(wave)]);
        let oob = self.vv();
        self.i(Op::V_MOV_B32, &[whole(oob), lit(OOB)]);
        // Byte offsets in a slab and in C; lanes outside m x n read slab element 0 and store
        // past NUM_RECORDS.
        let offset = |l: &mut Self, ld: O, size: u32| {
            let (t, o) = (l.vv(), l.vv());
            l.i(Op::V_MUL_LO_U32, &[whole(t), ld, whole(j)]);
            l.i(Op::V_ADD_U32, &[whole(t), whole(i), whole(t)]);
            l.i(Op::V_LSHLREV_B32, &[whole(o), int(log2(size)), whole(t)]);
            o
        };
        let (offw, offc) = (offset(self, ldw, 4), offset(self, ldc, ec));
        for bound in [(m, i), (n, j)] {
            self.i(Op::V_CMP_GT_I32, &[VCC, bound.0, whole(bound.1)]);
            self.i(Op::V_CNDMASK_B32, &[whole(offw), int(0), whole(offw), VCC]);
            self.i(Op::V_CNDMASK_B32, &[whole(offc), whole(oob), whole(offc), VCC]);
        }
        let srd = self.p.vreg(RegFile::Sgpr, 4);
        self.i(Op::S_MOV_B32, &[sub(srd, 0, 1), ws_lo]);
        self.i(Op::S_AND_B32, &[sub(srd, 1, 1), lit(0xffff), ws_hi]);
        self.i(Op::S_MUL_I32, &[sub(srd, 2, 1), splits, wstride]);
        self.i(Op::S_MOV_B32, &[sub(srd, 3, 1), lit(0x0002_0000)]);
        let step = self.sv();
        self.i(Op::S_LSHL_B32, &[whole(step), wstride, int(log2(REDUCE_UNROLL))]);
        let mut voffs = vec![offw];
        for u in 1..REDUCE_UNROLL {
            let (su, vo) = (self.sv(), self.vv());
            self.i(Op::S_MUL_I32, &[whole(su), wstride, lit(u)]);
            self.i(Op::V_ADD_U32, &[whole(vo), whole(su), whole(offw)]);
            voffs.push(vo);
        }
        let (sum, cnt) = (self.vv(), self.sv());
        self.i(Op::V_MOV_B32, &[whole(sum), int(0)]);
        self.i(Op::S_ADD_U32, &[whole(cnt), splits, lit(REDUCE_UNROLL - 1)]);
        self.i(Op::S_LSHR_B32, &[whole(cnt), whole(cnt), int(log2(REDUCE_UNROLL))]);
        let (lp, done) = (self.p.label(), self.p.label());
        self.i(Op::S_CMP_EQ_U32, &[whole(cnt), int(0)]);
        self.p.branch(Op::S_CBRANCH_SCC1, done);
        self.p.place(lp);
        let parts: Vec<Reg> = voffs
            .iter()
            .map(|&vo| {
                let t = self.vv();
                self.ie(Inst::new(Op::BUFFER_LOAD_DWORD, &[whole(t), whole(vo), whole(srd), int(0)]).offen());
                t
            })
            .collect();
        for t in parts {
            self.i(Op::V_ADD_F32, &[whole(sum), whole(sum), whole(t)]);
        }
        self.i(Op::S_ADD_U32, &[sub(srd, 0, 1), sub(srd, 0, 1), whole(step)]);
        self.i(Op::S_ADDC_U32, &[sub(srd, 1, 1), sub(srd, 1, 1), int(0)]);
        // Bytes left: SCC = borrow when fewer than a round's remain (then 0).
        self.i(Op::S_SUB_U32, &[sub(srd, 2, 1), sub(srd, 2, 1), whole(step)]);
        self.i(Op::S_CSELECT_B32, &[sub(srd, 2, 1), int(0), sub(srd, 2, 1)]);
        self.i(Op::S_SUB_U32, &[whole(cnt), whole(cnt), int(1)]);
        self.i(Op::S_CMP_LG_U32, &[whole(cnt), int(0)]);
        self.p.branch(Op::S_CBRANCH_SCC1, lp);
        self.p.loops.push((lp, done));
        self.p.place(done);
        // The epilogue: alpha * sum (+ beta * C), rounded once to C's type.
        self.srd_c = self.srd(c_lo, c_hi, m, n, ldc, ec);
        let k7fff = self.sv();
        self.i(Op::S_MOVK_I32, &[whole(k7fff), O::Imm(0x7fff)]);
        self.k7fff = k7fff;
        let x = self.vv();
        self.i(Op::V_MUL_LEGACY_F32, &[whole(x), alpha, whole(sum)]);
        let bt = self.sv();
        self.i(Op::S_AND_B32, &[whole(bt), lit(0x7fff_ffff), beta]);
        self.i(Op::S_CMP_EQ_U32, &[whole(bt), int(0)]);
        let beta0 = self.p.label();
        self.p.branch(Op::S_CBRANCH_SCC1, beta0);
        let cv = self.vv();
        let load = if ec == 4 { Op::BUFFER_LOAD_DWORD } else { Op::BUFFER_LOAD_USHORT };
        self.ie(Inst::new(load, &[whole(cv), whole(offc), whole(self.srd_c), int(0)]).offen());
        let cf = if ec == 4 { cv } else { self.c_to_f32(whole(cv), false) };
        let xb = self.vv();
        self.i(Op::V_FMA_F32, &[whole(xb), beta, whole(cf), whole(x)]);
        self.store_element(xb, offc);
        self.i(Op::S_ENDPGM, &[]);
        self.p.place(beta0);
        self.store_element(x, offc);
        self.i(Op::S_ENDPGM, &[]);
    }

    /// One f32 value stored to C at byte offset `o` in C's type (round to nearest even; the
    /// conversions of [`Self::store_elements`]).
    fn store_element(&mut self, x: Reg, o: Reg) {
        let srd = whole(self.srd_c);
        let st = |op, val: Reg| Inst::new(op, &[whole(val), whole(o), srd, int(0)]).offen();
        match (self.c().c_type, self.arch) {
            (DType::F32, _) => self.ie(st(Op::BUFFER_STORE_DWORD, x)),
            (DType::F16, _) => {
                let y = self.vv();
                self.i(Op::V_CVT_F16_F32, &[whole(y), whole(x)]);
                self.ie(st(Op::BUFFER_STORE_SHORT, y));
            }
            (_, Arch::Gfx950) => {
                let y = self.vv();
                self.i(Op::V_CVT_PK_BF16_F32, &[whole(y), whole(x), whole(x)]);
                self.ie(st(Op::BUFFER_STORE_SHORT, y));
            }
            (_, Arch::Gfx942) => {
                let y = self.bf16_hi(x);
                self.ie(st(Op::BUFFER_STORE_SHORT_D16_HI, y));
            }
        }
    }
}

/// The full-rate MFMA of each arch, input dtype and shape (ISA.md §1.2/§1.3, ARCH.md
/// "MFMA cost"): gfx942 32x32x8 / 16x16x16, gfx950 the double-rate 32x32x16 / 16x16x32
/// (the gfx942 shapes run at half rate there and are not offered).
/// The last column: issue cycles (gemm-core's arch MFMA tables; ARCH.md "MFMA cost").
/// f32 inputs: `32x32x2_f32` / `16x16x4_f32` on both archs (64 / 32 cycles); on gfx942 also
/// `32x32x4_xf32` / `16x16x8_xf32` (32 / 16 cycles: four times the f32 rate), which round
/// each f32 input to 10 mantissa bits (ISA.md §1.2; gfx950 has no xf32). A configuration
/// with an xf32 shape is a reduced-precision kernel ([`crate::ir::KernelConfig::xf32`]).
pub const MFMA_TABLE: &[(Arch, DType, MfmaShape, Op, u32)] = &[
    (Arch::Gfx942, DType::Bf16, MfmaShape { m: 32, n: 32, k: 8 }, Op::V_MFMA_F32_32X32X8_BF16, 32),
    (Arch::Gfx942, DType::F16, MfmaShape { m: 32, n: 32, k: 8 }, Op::V_MFMA_F32_32X32X8_F16, 32),
    (Arch::Gfx942, DType::Bf16, MfmaShape { m: 16, n: 16, k: 16 }, Op::V_MFMA_F32_16X16X16_BF16, 16),
    (Arch::Gfx942, DType::F16, MfmaShape { m: 16, n: 16, k: 16 }, Op::V_MFMA_F32_16X16X16_F16, 16),
    (Arch::Gfx950, DType::Bf16, MfmaShape { m: 32, n: 32, k: 16 }, Op::V_MFMA_F32_32X32X16_BF16, 32),
    (Arch::Gfx950, DType::F16, MfmaShape { m: 32, n: 32, k: 16 }, Op::V_MFMA_F32_32X32X16_F16, 32),
    (Arch::Gfx950, DType::Bf16, MfmaShape { m: 16, n: 16, k: 32 }, Op::V_MFMA_F32_16X16X32_BF16, 16),
    (Arch::Gfx950, DType::F16, MfmaShape { m: 16, n: 16, k: 32 }, Op::V_MFMA_F32_16X16X32_F16, 16),
    (Arch::Gfx942, DType::F32, MfmaShape { m: 32, n: 32, k: 2 }, Op::V_MFMA_F32_32X32X2_F32, 64),
    (Arch::Gfx942, DType::F32, MfmaShape { m: 16, n: 16, k: 4 }, Op::V_MFMA_F32_16X16X4_F32, 32),
    (Arch::Gfx950, DType::F32, MfmaShape { m: 32, n: 32, k: 2 }, Op::V_MFMA_F32_32X32X2_F32, 64),
    (Arch::Gfx950, DType::F32, MfmaShape { m: 16, n: 16, k: 4 }, Op::V_MFMA_F32_16X16X4_F32, 32),
    // fp8 on gfx942 (FNUZ; ISA.md §1.2, ARCH.md "MFMA cost": 8 / 4 passes).
    (Arch::Gfx942, DType::Fp8E4M3Fnuz, MfmaShape { m: 32, n: 32, k: 16 }, Op::V_MFMA_F32_32X32X16_FP8_FP8, 32),
    (Arch::Gfx942, DType::Fp8E5M2Fnuz, MfmaShape { m: 32, n: 32, k: 16 }, Op::V_MFMA_F32_32X32X16_BF8_BF8, 32),
    (Arch::Gfx942, DType::Fp8E4M3Fnuz, MfmaShape { m: 16, n: 16, k: 32 }, Op::V_MFMA_F32_16X16X32_FP8_FP8, 16),
    (Arch::Gfx942, DType::Fp8E5M2Fnuz, MfmaShape { m: 16, n: 16, k: 32 }, Op::V_MFMA_F32_16X16X32_BF8_BF8, 16),
    // fp8 on gfx950 (OCP) through the f8f6f4 forms, the format in cbsz/blgp
    // ([`F8F6F4_FORMATS`]); ARCH.md "MFMA cost": 16 / 8 passes with fp8 inputs, twice the
    // FLOP per cycle of the gfx942 fp8 shapes. The unscaled form: the `v_mfma_scale_*`
    // variant with unit scales computes the same at the same rate, and the scales this
    // kernel takes are per tensor (applied once in the epilogue).
    (Arch::Gfx950, DType::Fp8E4M3, MfmaShape { m: 32, n: 32, k: 64 }, Op::V_MFMA_F32_32X32X64_F8F6F4, 64),
    (Arch::Gfx950, DType::Fp8E5M2, MfmaShape { m: 32, n: 32, k: 64 }, Op::V_MFMA_F32_32X32X64_F8F6F4, 64),
    (Arch::Gfx950, DType::Fp8E4M3, MfmaShape { m: 16, n: 16, k: 128 }, Op::V_MFMA_F32_16X16X128_F8F6F4, 32),
    (Arch::Gfx950, DType::Fp8E5M2, MfmaShape { m: 16, n: 16, k: 128 }, Op::V_MFMA_F32_16X16X128_F8F6F4, 32),
    (Arch::Gfx942, DType::F32, MfmaShape { m: 32, n: 32, k: 4 }, Op::V_MFMA_F32_32X32X4_XF32, 32),
    (Arch::Gfx942, DType::F32, MfmaShape { m: 16, n: 16, k: 8 }, Op::V_MFMA_F32_16X16X8_XF32, 16),
];

/// The `cbsz` (A) / `blgp` (B) format code of an `*_f8f6f4` MFMA source (gemm-isa
/// `flags::F8F6F4`, LLVM `AMDGPU::MFMAScaleFormats`): 0 fp8 (OCP e4m3), 1 bf8 (OCP e5m2).
pub const F8F6F4_FORMATS: &[(DType, u8)] = &[(DType::Fp8E4M3, 0), (DType::Fp8E5M2, 1)];

/// The format code of `dtype` for an `*_f8f6f4` MFMA.
pub fn f8f6f4_format(dtype: DType) -> Option<u8> {
    F8F6F4_FORMATS.iter().find(|r| r.0 == dtype).map(|r| r.1)
}

/// Mixed fp8 MFMAs of gfx942 (ISA.md §1.2: "the bf8/fp8 mixes are 0x70-0x76"; the first
/// type names A's flavour, the second B's, as in LLVM's `int_amdgcn_mfma_f32_*_fp8_bf8`),
/// at the rate of the single-flavour rows of [`MFMA_TABLE`]. gfx950 needs no rows: its
/// f8f6f4 MFMA takes A's format in `cbsz` and B's in `blgp` ([`F8F6F4_FORMATS`]).
pub const MFMA_MIXED_FP8: &[(Arch, DType, DType, MfmaShape, Op)] = &[
    (
        Arch::Gfx942,
        DType::Fp8E4M3Fnuz,
        DType::Fp8E5M2Fnuz,
        MfmaShape { m: 32, n: 32, k: 16 },
        Op::V_MFMA_F32_32X32X16_FP8_BF8,
    ),
    (
        Arch::Gfx942,
        DType::Fp8E5M2Fnuz,
        DType::Fp8E4M3Fnuz,
        MfmaShape { m: 32, n: 32, k: 16 },
        Op::V_MFMA_F32_32X32X16_BF8_FP8,
    ),
    (
        Arch::Gfx942,
        DType::Fp8E4M3Fnuz,
        DType::Fp8E5M2Fnuz,
        MfmaShape { m: 16, n: 16, k: 32 },
        Op::V_MFMA_F32_16X16X32_FP8_BF8,
    ),
    (
        Arch::Gfx942,
        DType::Fp8E5M2Fnuz,
        DType::Fp8E4M3Fnuz,
        MfmaShape { m: 16, n: 16, k: 32 },
        Op::V_MFMA_F32_16X16X32_BF8_FP8,
    ),
];

/// The MFMA for A of `a` and B of `b` (mixed fp8 flavours allowed): [`mfma_op`] when they
/// agree, a [`MFMA_MIXED_FP8`] row on gfx942, the f8f6f4 form on gfx950 when both have a
/// format code.
pub fn mfma_op_ab(arch: Arch, a: DType, b: DType, shape: MfmaShape) -> Option<Op> {
    if a == b {
        return mfma_op(arch, a, shape);
    }
    if let Some(r) = MFMA_MIXED_FP8.iter().find(|r| r.0 == arch && r.1 == a && r.2 == b && r.3 == shape) {
        return Some(r.4);
    }
    let op = mfma_op(arch, a, shape)?;
    (op.def().has(gemm_isa::table::flags::F8F6F4) && f8f6f4_format(b).is_some()).then_some(op)
}

/// The MFMA instruction for `(arch, dtype, shape)`, if the shape runs at full rate there.
pub fn mfma_op(arch: Arch, dtype: DType, shape: MfmaShape) -> Option<Op> {
    MFMA_TABLE.iter().find(|r| r.0 == arch && r.1 == dtype && r.2 == shape).map(|r| r.3)
}

/// Issue cycles of the configuration's MFMA.
pub fn mfma_cycles(c: &crate::ir::KernelConfig) -> u32 {
    MFMA_TABLE.iter().find(|r| r.0 == c.arch && r.1 == c.ab_type && r.2 == c.mfma).map_or(c.mfma.cycles(), |r| r.4)
}

/// Lowers a kernel to a program on virtual registers.
pub fn lower(k: &Kernel) -> Result<Program, LowerError> {
    let reduce = k.config.split == SplitK::Reduce;
    let transpose = k.config.split == SplitK::Transpose;
    let needed: &[&'static str] = if reduce {
        &["splitk_reduce"]
    } else if transpose {
        &["transpose"]
    } else if k.config.is_decode() {
        &["decode"]
    } else {
        &["buffer_ops", "pipeline", "epilogue"]
    };
    for &pass in needed {
        if !k.applied.contains(&pass) {
            return Err(LowerError::PassMissing(pass));
        }
    }
    let c = k.config;
    crate::fit::check(&c).map_err(|e| LowerError::Unsupported(e.to_string()))?;
    let decode = c.is_decode();
    if c.grouped && c.fusion != crate::ir::Fusion::NONE {
        // The epilogue reads its bias and clamp from the kernarg segment, which a grouped
        // kernel does not have per group.
        return Err(LowerError::Unsupported("grouped kernels have no fused epilogue".into()));
    }
    if !decode && k.copies().any(|cp| cp.kind == LoadKind::Undecided) {
        return Err(LowerError::Unsupported("copy kind not lowered".into()));
    }
    let mut l = L {
        k,
        p: Program::default(),
        arch: c.arch,
        args: [O::Int(0); 14],
        tid: Reg { file: RegFile::Vgpr, index: 0, count: 1 },
        lane: Reg { file: RegFile::Vgpr, index: 0, count: 1 },
        lrow: Reg { file: RegFile::Vgpr, index: 0, count: 1 },
        lgrp: Reg { file: RegFile::Vgpr, index: 0, count: 1 },
        wm: Reg { file: RegFile::Vgpr, index: 0, count: 1 },
        wn: Reg { file: RegFile::Vgpr, index: 0, count: 1 },
        m0: Reg { file: RegFile::Sgpr, index: 0, count: 1 },
        n0: Reg { file: RegFile::Sgpr, index: 0, count: 1 },
        cnt: Reg { file: RegFile::Sgpr, index: 0, count: 1 },
        cp: vec![],
        acc: vec![],
        oob: Reg { file: RegFile::Vgpr, index: 0, count: 1 },
        srd_c: Reg { file: RegFile::Sgpr, index: 0, count: 1 },
        k7fff: Reg { file: RegFile::Sgpr, index: 0, count: 1 },
        perm_hi: Reg { file: RegFile::Sgpr, index: 0, count: 1 },
        perm_lo: Reg { file: RegFile::Sgpr, index: 0, count: 1 },
        srd_bias: Reg { file: RegFile::Sgpr, index: 0, count: 1 },
        clamp_lo: O::Int(0),
        clamp_hi: O::Int(0),
        alpha_scaled: None,
        scale_d: O::Int(0),
        scale_d2: None,
        scale_vecs: None,
        hoist: 0,
        shifted: Default::default(),
        wave_s: None,
        local_tile: None,
        quad: None,
        phase: None,
        mx: None,
        bf: None,
        fpieces: crate::schedule::frag_pieces(&k.config),
        deferred_read: None,
    };
    if reduce {
        l.reduce();
        return Ok(l.p);
    }
    if transpose {
        l.transpose();
        return Ok(l.p);
    }
    if decode {
        if matches!(c.schedule, crate::schedule::Schedule::DecodeRows { .. }) {
            l.decode_rows();
        } else {
            l.decode();
        }
        return Ok(l.p);
    }
    if c.split == SplitK::Partial {
        l.p.extra_system_sgprs = 1;
    }
    l.setup();
    l.hoist = l.p.items.len();
    let _ = l.lane;
    if k.lds_buffers == 3 {
        l.three_stages();
        return Ok(l.p);
    }
    if loads_first(&c) {
        l.prologue_loads_first(&k.prologue);
    } else {
        l.region(&k.prologue, Pos::two(0));
    }
    l.mx_stage_tail_writes();
    let (lp, drain0, drain1, epi) = (l.p.label(), l.p.label(), l.p.label(), l.p.label());
    let cnt = l.cnt;
    if let Some(ls) = &k.schedule {
        l.role_ops(&ls.enter, 0);
    }
    l.i(Op::S_CMP_EQ_U32, &[whole(cnt), int(0)]);
    l.p.branch(Op::S_CBRANCH_SCC1, drain0);
    l.p.place(lp);
    l.loop_body(0);
    l.i(Op::S_SUB_U32, &[whole(cnt), whole(cnt), int(1)]);
    l.i(Op::S_CMP_EQ_U32, &[whole(cnt), int(0)]);
    l.p.branch(Op::S_CBRANCH_SCC1, drain1);
    l.loop_body(1);
    l.i(Op::S_SUB_U32, &[whole(cnt), whole(cnt), int(1)]);
    l.i(Op::S_CMP_LG_U32, &[whole(cnt), int(0)]);
    l.p.branch(Op::S_CBRANCH_SCC1, lp);
    l.p.loops.push((lp, drain0));
    l.p.iteration = Some((lp, drain1));
    for (d, cur) in [(drain0, 0), (drain1, 1)] {
        l.p.place(d);
        if let Some(ls) = &k.schedule {
            l.role_ops(&ls.exit, cur);
        }
        l.mx_use(cur);
        l.bf_use(cur);
        // The last tile: no next tile to carry its trailing scaled adds, no set to refill.
        if let Some(bf) = l.bf.as_mut() {
            bf.flush = true;
            bf.refill = None;
        }
        l.region(&k.drain, Pos::two(cur));
        if cur == 0 {
            l.p.branch(Op::S_BRANCH, epi);
        }
    }
    l.p.place(epi);
    l.region(&k.epilogue, Pos::two(0));
    Ok(l.p)
}

impl L<'_> {
    /// The three-stage loop (`passes/pipeline.rs`), after the setup: the last K tile into
    /// buffer 0; with no loop tile (`k <= KT`) just its compute; else the prefetch of loop
    /// tile 0, the loop `ceil(k/KT) - 2` times, unrolled so that buffers (mod 3) and
    /// staging sets (mod 2) are fixed per copy (3 or 6 bodies), an exit after each body
    /// into the drain of the two tiles left from that point; then the epilogue.
    fn three_stages(&mut self) {
        let k = self.k;
        let staged = self.cp.iter().any(|c| c.loop_kind != LoadKind::DirectToLds);
        let unroll: i64 = if staged { 6 } else { 3 };
        let last_step = k.drain.iter().rposition(|op| *op == TileOp::Barrier).expect("the drain has barriers");
        let (first, last) = k.drain.split_at(last_step);
        let cnt = self.cnt;
        self.region(&k.prologue, Pos::three(0));
        let (only, lp, epi) = (self.p.label(), self.p.label(), self.p.label());
        let drains: Vec<u32> = (0..unroll).map(|_| self.p.label()).collect();
        self.i(Op::S_CMP_EQ_U32, &[whole(cnt), int(0)]);
        self.p.branch(Op::S_CBRANCH_SCC1, only);
        self.region(&k.prefetch, Pos::three(-1));
        self.i(Op::S_CMP_EQ_U32, &[whole(cnt), int(1)]);
        self.p.branch(Op::S_CBRANCH_SCC1, drains[0]);
        self.p.place(lp);
        for t in 0..unroll {
            self.region(&k.body, Pos::three(t));
            self.i(Op::S_SUB_U32, &[whole(cnt), whole(cnt), int(1)]);
            if t + 1 < unroll {
                self.i(Op::S_CMP_EQ_U32, &[whole(cnt), int(1)]);
                self.p.branch(Op::S_CBRANCH_SCC1, drains[t as usize + 1]);
            } else {
                self.i(Op::S_CMP_LG_U32, &[whole(cnt), int(1)]);
                self.p.branch(Op::S_CBRANCH_SCC1, lp);
            }
        }
        self.p.loops.push((lp, drains[0]));
        self.p.iteration = Some((lp, drains[1]));
        for (t, &d) in drains.iter().enumerate() {
            self.p.place(d);
            self.region(first, Pos::three(t as i64));
            self.region(last, Pos::three(t as i64 + 1));
            self.p.branch(Op::S_BRANCH, epi);
        }
        self.p.place(only);
        self.region(last, Pos::three(0));
        self.p.place(epi);
        self.region(&k.epilogue, Pos::three(0));
    }
}
