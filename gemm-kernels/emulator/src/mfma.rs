//! MFMA (VOP3P-MAI) with the register layouts of AMD's matrix instruction calculator
//! (ISA.md §1.1-1.3, `shared/reference/mfma-layouts.txt`), generalised to the
//! multi-block shapes by the calculator's gfx9 scheme:
//!
//! * inputs: `kpl = K*M*B/64` k-values per lane; element (i, k) of block b sits in lane
//!   `i + M*(b + B*floor(k/kpl))`, register `(k mod kpl) / e`, field `k mod e`
//!   (`e` elements per dword, lower k in lower bits);
//! * outputs (M = N >= 16): lane `j + N*((i/4) mod (64/N))`, register
//!   `(i mod 4) + 4*floor((i/4)/(64/N)) + (M*N/64)*b`; 4x4 shapes: lane `j + 4b`, register `i`.
//!
//! 64-bit (f64) elements take a VGPR pair (register `2*regno`); their outputs follow the
//! calculator's 64-bit gfx9 rule (`__get_output_reg_lanes`, multi-row height 1): with
//! `G = 64/N` and `BPR = ceil(64/(M*N))`, D[i][j] of block b sits in lane
//! `(b mod BPR)*N + (i mod G)*BPR*N + j`, pair `b*floor(M*N/64) + floor(i/G)`. So
//! 16x16x4_f64: lane `j + 16*(i mod 4)`, v[2*floor(i/4)+1 : 2*floor(i/4)]; 4x4x4_4b_f64:
//! lane `j + 4b + 16i`, v[1:0]. xf32 inputs are f32 words (one per register, 2 per lane).
//!
//! This is NOT tinygrad's 32x32 output mapping (ISA.md §1.4). Accumulation: products are
//! exact in f32 for f16/bf16/fp8 inputs and are added to C in k order in f32 (the
//! hardware order is undocumented, ISA.md §7; compare with a tolerance). f64: each step is
//! a fused multiply-add in f64 (exact product, one rounding), k order. xf32: each input is
//! first rounded to nearest even at 10 mantissa bits (the xf32 width; the rounding is our
//! choice, README), products are then exact in f32 and accumulate as above.

use crate::error::FaultKind;
use crate::scheduler::{Env, R};
use crate::valu::{fp8_formats, regs_of};
use crate::wave::{Wave, LANES};
use gemm_core::exact::ExactAccumulator;
use gemm_core::fp8::Fp8Format;
use gemm_core::mx::{MxFormat, E8M0, MX_BLOCK};
use gemm_isa::table::{flags, Field};
use gemm_isa::{Inst, Op, Operand, RegFile, Ty};
use half::{bf16, f16};

/// Element type of an MFMA input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    F32,
    /// f32 words used at xf32 precision (1-8-10).
    Xf32,
    F64,
    F16,
    Bf16,
    Fp8,
    Bf8,
    I8,
    /// gfx950 `*_f8f6f4` fp6 (OCP MX E2M3).
    Fp6,
    /// gfx950 `*_f8f6f4` bf6 (OCP MX E3M2).
    Bf6,
    /// gfx950 `*_f8f6f4` fp4 (OCP MX E2M1).
    Fp4,
}

impl Elem {
    pub fn bits(self) -> u32 {
        match self {
            Elem::F64 => 64,
            Elem::F32 | Elem::Xf32 => 32,
            Elem::F16 | Elem::Bf16 => 16,
            Elem::Fp8 | Elem::Bf8 | Elem::I8 => 8,
            Elem::Fp6 | Elem::Bf6 => 6,
            Elem::Fp4 => 4,
        }
    }

    /// The element of a `*_f8f6f4` MFMA for its MX format.
    pub fn of_mx(f: MxFormat) -> Elem {
        match f {
            MxFormat::E4M3 => Elem::Fp8,
            MxFormat::E5M2 => Elem::Bf8,
            MxFormat::E2M3 => Elem::Fp6,
            MxFormat::E3M2 => Elem::Bf6,
            MxFormat::E2M1 => Elem::Fp4,
        }
    }
}

/// The shape of an MFMA, read off its table name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub blocks: u32,
    pub a: Elem,
    pub b: Elem,
    /// i32 accumulation (i8 inputs).
    pub int: bool,
    /// Passes (4 cycles each), from the calculator's cycle counts; calibrated against the
    /// wait states llc-22 emits (hazard.rs).
    pub passes: u32,
    /// XDL (everything but the f32- and f64-input shapes; f32 ones behave as SMFMA in
    /// llc-22's NOPs, f64 ones are LLVM's DGEMM class, see `is_dgemm`).
    pub xdl: bool,
}

impl Shape {
    /// `None` for names that are not MFMAs.
    pub fn of(op: Op) -> Option<Shape> {
        let name = op.name().strip_prefix("v_mfma_")?;
        // `v_mfma_scale_*`: the same shape with block scales (table.rs `SCALED`).
        let name = name.strip_prefix("scale_").unwrap_or(name);
        let mut parts = name.split('_');
        let out = parts.next()?;
        let dims = parts.next()?;
        let rest: Vec<&str> = parts.collect();
        let mut it = dims.split('x').map(|d| d.parse::<u32>().ok());
        let (m, n, k) = (it.next()??, it.next()??, it.next()??);
        let (blocks, types) = match rest.first() {
            Some(b) if b.ends_with('b') && b[..b.len() - 1].parse::<u32>().is_ok() => {
                (b[..b.len() - 1].parse().ok()?, &rest[1..])
            }
            _ => (1, &rest[..]),
        };
        let el = |s: &str| match s {
            "f32" => Some(Elem::F32),
            "xf32" => Some(Elem::Xf32),
            "f64" => Some(Elem::F64),
            "f16" => Some(Elem::F16),
            "bf16" => Some(Elem::Bf16),
            "fp8" => Some(Elem::Fp8),
            "bf8" => Some(Elem::Bf8),
            "i8" => Some(Elem::I8),
            // gfx950 `*_f8f6f4`: cbsz/blgp pick the formats at run time; the shape is
            // described with fp8 (what `exec` runs; see `f8f6f4_elem`).
            "f8f6f4" => Some(Elem::Fp8),
            _ => None,
        };
        let (a, b) = match types {
            [t] => (el(t)?, el(t)?),
            [t, u] => (el(t)?, el(u)?),
            _ => return None,
        };
        let passes = if types == ["f8f6f4"] {
            // LLVM `SISchedule.td` (ARCH.md's MFMA table): 16 passes for 32x32x64 and 8
            // for 16x16x128 when an input is fp8/bf8; half without one ([`Shape::of_inst`]).
            if m == 32 {
                16
            } else {
                8
            }
        } else if a == Elem::F64 {
            // Calculator cycles: 16x16x4_f64 32, 4x4x4_4b_f64 16.
            if m == 4 {
                4
            } else {
                8
            }
        } else if a == Elem::Xf32 {
            // 16x16x8_xf32 16 cycles, 32x32x4_xf32 32: llc-22 asks for 7 and 11 wait states
            // before a read of the result (XDL passes + 3).
            if m == 32 {
                8
            } else {
                4
            }
        } else if m == 4 {
            2
        } else if blocks > 1 {
            if m == 32 {
                16
            } else {
                8
            }
        } else if k * a.bits() >= 128 && a.bits() < 32 {
            // Double-rate (K doubled at the same cycle count) exists for sub-32-bit inputs
            // only: v_mfma_f32_16x16x4_f32 is 32 cycles, 8 passes (llc-22 asks for 10 wait
            // states before an MFMA reads its result as srcA, tests/hazard_rules.rs).
            if m == 32 {
                8
            } else {
                4
            }
        } else if m == 32 {
            16
        } else {
            8
        };
        Some(Shape { m, n, k, blocks, a, b, int: out == "i32", passes, xdl: a != Elem::F32 && a != Elem::F64 })
    }

    /// The shape of `inst` as it executes: for the gfx950 `*_f8f6f4` MFMAs (scaled or not)
    /// `cbsz`/`blgp` pick the A/B element types, and with no fp8/bf8 operand (both fp6, bf6
    /// or fp4) the MFMA takes half the passes: 4 for 16x16x128, 8 for 32x32x64. Source:
    /// ARCH.md / TIMING.md MFMA tables (LLVM `SISchedule.td`), checked against llc-22's
    /// hazard NOPs: after `v_mfma_scale_f32_16x16x128_f8f6f4` it waits 12 states before a
    /// store of the result with fp8 x fp8 and fp8 x fp4, 8 with fp4 x fp4 (XDL passes plus
    /// 3, plus 1 on gfx950), so 8 and 4 passes. Reserved codes 5-7 read 8-dword tuples and stay
    /// at the fp8 rate (they do not execute: [`exec`] refuses them). Other MFMAs: [`Shape::of`].
    pub fn of_inst(inst: &Inst) -> Option<Shape> {
        let mut sh = Shape::of(inst.op)?;
        if inst.op.def().has(flags::F8F6F4) {
            let elem = |code: u8| MxFormat::from_mfma_code(code).map(Elem::of_mx).ok();
            let (a, b) = (elem(inst.mods.cbsz), elem(inst.mods.blgp));
            sh.a = a.unwrap_or(Elem::Fp8);
            sh.b = b.unwrap_or(Elem::Fp8);
            if sh.a.bits() < 8 && sh.b.bits() < 8 {
                sh.passes /= 2;
            }
        }
        Some(sh)
    }

    /// Registers of A (`b == false`) or B of this shape (the f8f6f4 tuples shrink with their
    /// format: 8, 6 or 4).
    pub fn src_regs(&self, b: bool) -> u32 {
        let e = if b { self.b } else { self.a };
        (self.kpl() * e.bits()).div_ceil(32)
    }

    /// LLVM's DGEMM class (f64 MFMAs): its hazard rules differ and are not modelled by
    /// `hazard.rs`.
    pub fn is_dgemm(&self) -> bool {
        self.a == Elem::F64
    }

    /// Bits of one C/D element.
    pub fn out_bits(&self) -> u32 {
        if self.is_dgemm() {
            64
        } else {
            32
        }
    }

    /// k-values per lane.
    pub fn kpl(&self) -> u32 {
        self.k * self.m * self.blocks / 64
    }

    /// Registers of A (or B).
    pub fn ab_regs(&self) -> u32 {
        (self.kpl() * self.a.bits()).div_ceil(32)
    }

    /// Registers of C/D.
    pub fn cd_regs(&self) -> u32 {
        self.m * self.n * self.blocks / 64 * (self.out_bits() / 32)
    }

    /// (lane, register, bit offset) of A[i][k] in block `b` (B[k][j] likewise with j).
    pub fn ab_pos(&self, i: u32, k: u32, b: u32, bits: u32) -> (u32, u32, u32) {
        let kpl = self.kpl();
        let e = 32 / bits;
        let g = b + self.blocks * (k / kpl);
        let kl = k % kpl;
        if bits == 64 {
            return (i + self.m * g, 2 * kl, 0);
        }
        (i + self.m * g, kl / e, bits * (kl % e))
    }

    /// (lane, register) of C/D[i][j] in block `b`.
    /// For f64 the register is the first of the pair.
    pub fn cd_pos(&self, i: u32, j: u32, b: u32) -> (u32, u32) {
        if self.is_dgemm() {
            let (m, n) = (self.m, self.n);
            let g = 64 / n;
            let bpr = 64u32.div_ceil(m * n);
            let lane = (b % bpr) * n + (i % g) * bpr * n + j;
            return (lane, 2 * (b * (m * n / 64) + i / g));
        }
        if self.m == 4 {
            return (j + 4 * b, i);
        }
        let groups = 64 / self.n;
        (j + self.n * ((i / 4) % groups), (i % 4) + 4 * ((i / 4) / groups) + (self.m * self.n / 64) * b)
    }
}

/// Rounds an f32 to xf32 (10 mantissa bits), to nearest even; NaN and infinity pass.
pub fn round_xf32(x: f32) -> f32 {
    let b = x.to_bits();
    if !x.is_finite() {
        return x;
    }
    let lsb = (b >> 13) & 1;
    f32::from_bits(b.wrapping_add(0xFFF + lsb) & !0x1FFF)
}

fn decode(e: Elem, bits: u64, fp8: Fp8Format, bf8: Fp8Format) -> f64 {
    let bits32 = bits as u32;
    f64::from(match e {
        Elem::F64 => return f64::from_bits(bits),
        Elem::F32 => f32::from_bits(bits32),
        Elem::Xf32 => round_xf32(f32::from_bits(bits32)),
        Elem::F16 => f16::from_bits(bits32 as u16).to_f32(),
        Elem::Bf16 => bf16::from_bits(bits32 as u16).to_f32(),
        Elem::Fp8 => fp8.decode(bits32 as u8),
        Elem::Bf8 => bf8.decode(bits32 as u8),
        Elem::I8 => bits32 as u8 as i8 as f32,
        Elem::Fp6 => MxFormat::E2M3.decode(bits32 as u8),
        Elem::Bf6 => MxFormat::E3M2.decode(bits32 as u8),
        Elem::Fp4 => MxFormat::E2M1.decode(bits32 as u8),
    })
}

fn operand(inst: &Inst, field: Field) -> R<Operand> {
    inst.operand(field).ok_or_else(|| FaultKind::Unsupported(format!("{}: missing operand", inst.op.name())))
}

/// Executes an MFMA.
pub fn exec(w: &mut Wave, env: &mut Env, inst: &Inst) -> R<()> {
    let sh = Shape::of(inst.op)
        .ok_or_else(|| FaultKind::Unsupported(format!("{} (MFMA shape not modelled)", inst.op.name())))?;
    // f64 MFMAs: NEG[0..2] negate A, B and C (the only MFMAs with the field, table.rs).
    let neg = if sh.is_dgemm() { inst.mods.neg } else { 0 };
    if inst.op.def().has(flags::F8F6F4) {
        return exec_f8f6f4(w, env, inst, sh);
    }
    if inst.mods.cbsz != 0 || inst.mods.abid != 0 || inst.mods.blgp != 0 {
        return Err(FaultKind::Unsupported(format!(
            "{}: cbsz/abid/blgp broadcast (not supported for this shape per the calculator, ISA.md §1.2)",
            inst.op.name()
        )));
    }
    let (a, b, c, dst) = (
        operand(inst, Field::Src0)?,
        operand(inst, Field::Src1)?,
        operand(inst, Field::Src2)?,
        operand(inst, Field::Vdst)?,
    );
    let nab = sh.ab_regs() as u8;
    let ncd = sh.cd_regs() as u8;
    let mut reads = regs_of(&a, nab);
    reads.extend(regs_of(&b, nab));
    reads.extend(regs_of(&c, ncd));
    env.check_regs(w, &reads, false);
    env.check_regs(w, &regs_of(&dst, ncd), true);
    let (fp8, bf8) = fp8_formats(env.arch);
    let (ra, rb, rd) = match (a, b, dst) {
        (Operand::Reg(x), Operand::Reg(y), Operand::Reg(z)) => (x, y, z),
        _ => return Err(FaultKind::Unsupported("MFMA A/B/D must be registers".into())),
    };
    // Gather A and B as [block][row][k] values (f64 holds every input type exactly).
    let (m, n, k, nb) = (sh.m, sh.n, sh.k, sh.blocks);
    let get = |r: &gemm_isa::Reg, lane: u32, reg: u32| w.vget(r.file, r.index + reg as u16, lane as usize);
    let get64 = |r: &gemm_isa::Reg, lane: u32, reg: u32| -> R<u64> {
        Ok(u64::from(get(r, lane, reg)?) | (u64::from(get(r, lane, reg + 1)?) << 32))
    };
    let gather = |r: &gemm_isa::Reg, e: Elem, lane: u32, reg: u32, off: u32| -> R<f64> {
        let raw = match e.bits() {
            64 => get64(r, lane, reg)?,
            32 => u64::from(get(r, lane, reg)?),
            bits => u64::from((get(r, lane, reg)? >> off) & ((1 << bits) - 1)),
        };
        Ok(decode(e, raw, fp8, bf8))
    };
    let sign = |bit: u8| if neg & bit != 0 { -1.0 } else { 1.0 };
    let mut av = vec![0f64; (nb * m * k) as usize];
    let mut bv = vec![0f64; (nb * n * k) as usize];
    for blk in 0..nb {
        for i in 0..m {
            for kk in 0..k {
                let (lane, reg, off) = sh.ab_pos(i, kk, blk, sh.a.bits());
                av[((blk * m + i) * k + kk) as usize] = sign(1) * gather(&ra, sh.a, lane, reg, off)?;
            }
        }
        for j in 0..n {
            for kk in 0..k {
                let (lane, reg, off) = sh.ab_pos(j, kk, blk, sh.b.bits());
                bv[((blk * n + j) * k + kk) as usize] = sign(2) * gather(&rb, sh.b, lane, reg, off)?;
            }
        }
    }
    // C: registers, or an inline constant broadcast to every element (ISA.md §1.5).
    let mut out = vec![0u32; ncd as usize * LANES];
    for blk in 0..nb {
        for i in 0..m {
            for j in 0..n {
                let (lane, reg) = sh.cd_pos(i, j, blk);
                let arow = &av[((blk * m + i) * k) as usize..][..k as usize];
                let bcol = &bv[((blk * n + j) * k) as usize..][..k as usize];
                if sh.is_dgemm() {
                    let cbits = match &c {
                        Operand::Reg(rc) => get64(rc, lane, reg)?,
                        o => o.const_bits(Ty::F64).unwrap_or(0),
                    };
                    let mut acc = sign(4) * f64::from_bits(cbits);
                    for kk in 0..k as usize {
                        acc = arow[kk].mul_add(bcol[kk], acc);
                    }
                    let r = acc.to_bits();
                    out[reg as usize * LANES + lane as usize] = r as u32;
                    out[(reg as usize + 1) * LANES + lane as usize] = (r >> 32) as u32;
                    continue;
                }
                let cbits = match &c {
                    Operand::Reg(rc) => w.vget(rc.file, rc.index + reg as u16, lane as usize)?,
                    o => o.const_bits(if sh.int { Ty::B32 } else { Ty::F32 }).unwrap_or(0) as u32,
                };
                let r = if sh.int {
                    let mut acc = cbits as i32;
                    for kk in 0..k as usize {
                        acc = acc.wrapping_add(arow[kk] as i32 * bcol[kk] as i32);
                    }
                    acc as u32
                } else {
                    let mut acc = f32::from_bits(cbits);
                    for kk in 0..k as usize {
                        acc += arow[kk] as f32 * bcol[kk] as f32;
                    }
                    acc.to_bits()
                };
                out[reg as usize * LANES + lane as usize] = r;
            }
        }
    }
    // MFMA writes every lane regardless of EXEC (the matrix is a whole-wave operand).
    for reg in 0..ncd as u16 {
        for lane in 0..LANES {
            w.vset(rd.file, rd.index + reg, lane, out[reg as usize * LANES + lane])?;
        }
    }
    let _ = RegFile::Vgpr;
    Ok(())
}

/// One decoded input of a `*_f8f6f4` MFMA: the element and its block scale, and (when both
/// are finite) the exact integer form `int * 2^exp` of their product.
struct Term {
    value: f32,
    scale: f32,
    int: i64,
    exp: i32,
    exact: bool,
    neg: bool,
}

/// The gfx950 `v_mfma_[scale_]f32_{16x16x128,32x32x64}_f8f6f4` MFMAs, every format pair.
///
/// * Formats: `cbsz` (A) and `blgp` (B) pick fp8 E4M3, bf8 E5M2, fp6 E2M3, bf6 E3M2 or fp4
///   E2M1 (LLVM `AMDGPU::MFMAScaleFormats`; [`gemm_core::mx`] decodes them). The reserved
///   codes 5-7 assemble (llvm-mc-22) but have no documented meaning: an `Unsupported` fault.
/// * Layout: the calculator's gfx9 rule with `kpl = 32` k-values per lane for both shapes
///   (A[i][k] in lane `i + M*floor(k/32)`), the lane's k-values packed as a little-endian bit
///   stream over its 8, 6 or 4 registers, element `k mod 32` at bit `bits*(k mod 32)`
///   ([`gemm_core::mx::pack`]): bytes for fp8 (the fp8 rule of ISA.md §1.1), nibbles for fp4,
///   fp6 values straddling dwords.
/// * Scales (`v_mfma_scale_*` only): each lane's 32 k-values of A are one OCP MX block; its
///   E8M0 scale is byte `op_sel[0] + 2*op_sel_hi[0]` of the scale-A VGPR in the same lane
///   (B likewise with entry 1). The byte select is LLVM's: the intrinsic's `opsel_a` 1, 2, 3
///   print as `op_sel:[1,..]`, `op_sel_hi:[1,..]`, both (llc-22). E8M0 0xFF is NaN. The
///   unscaled form multiplies by 1.
/// * Arithmetic (the emulator's choice; the hardware's internal precision and order are not
///   documented, ISA.md §7): every product `(X_a a)(X_b b)` and C are summed **exactly** and
///   rounded once to f32, round to nearest even (IEEE specials as
///   [`ExactAccumulator`]). That is [`gemm_core::mx::mx_gemm`] on one tile, bit for bit.
fn exec_f8f6f4(w: &mut Wave, env: &mut Env, inst: &Inst, base: Shape) -> R<()> {
    let code = |c: u8| {
        MxFormat::from_mfma_code(c)
            .map_err(|_| FaultKind::Unsupported(format!("{}: format code {c} (5-7 are reserved)", inst.op.name())))
    };
    let (fa, fb) = (code(inst.mods.cbsz)?, code(inst.mods.blgp)?);
    let sh = Shape::of_inst(inst).unwrap_or(base);
    let scaled = inst.op.def().has(flags::SCALED);
    let (a, b, c, dst) = (
        operand(inst, Field::Src0)?,
        operand(inst, Field::Src1)?,
        operand(inst, Field::Src2)?,
        operand(inst, Field::Vdst)?,
    );
    let (na, nb, ncd) = (sh.src_regs(false) as u8, sh.src_regs(true) as u8, sh.cd_regs() as u8);
    let mut reads = regs_of(&a, na);
    reads.extend(regs_of(&b, nb));
    reads.extend(regs_of(&c, ncd));
    let scales = if scaled {
        let (x, y) = (operand(inst, Field::ScaleSrc0)?, operand(inst, Field::ScaleSrc1)?);
        reads.extend(regs_of(&x, 1));
        reads.extend(regs_of(&y, 1));
        Some((x, y))
    } else {
        None
    };
    env.check_regs(w, &reads, false);
    env.check_regs(w, &regs_of(&dst, ncd), true);
    let (ra, rb, rd) = match (a, b, dst) {
        (Operand::Reg(x), Operand::Reg(y), Operand::Reg(z)) => (x, y, z),
        _ => return Err(FaultKind::Unsupported("MFMA A/B/D must be registers".into())),
    };
    let (m, n, k) = (sh.m, sh.n, sh.k);
    let kpl = sh.kpl();
    // Element (row, kk) of a source: its code from the lane's bit stream.
    let element = |r: &gemm_isa::Reg, f: MxFormat, row: u32, kk: u32| -> R<(u32, f32)> {
        let lane = row + m * (kk / kpl);
        let bits = f.bits();
        let pos = bits * (kk % kpl);
        let (reg, off) = (pos / 32, pos % 32);
        let lo = u64::from(w.vget(r.file, r.index + reg as u16, lane as usize)?);
        let hi = if off + bits > 32 { u64::from(w.vget(r.file, r.index + reg as u16 + 1, lane as usize)?) } else { 0 };
        let code = ((hi << 32 | lo) >> off) as u8 & ((1u16 << bits) - 1) as u8;
        Ok((lane, f.decode(code)))
    };
    let scale_of = |o: &Operand, sel: u8, lane: u32| -> R<E8M0> {
        let v = match o {
            Operand::Reg(r) => w.vget(r.file, r.index, lane as usize)?,
            _ => return Err(FaultKind::Unsupported(format!("{}: scale must be a VGPR", inst.op.name()))),
        };
        Ok(E8M0((v >> (8 * u32::from(sel))) as u8))
    };
    let sel = |i: u8| (inst.mods.op_sel >> i & 1) | (inst.mods.op_sel_hi >> i & 1) << 1;
    // A as [row][k] (value, scale), B as [col][k].
    let gather = |r: &gemm_isa::Reg, f: MxFormat, rows: u32, which: u8| -> R<Vec<Term>> {
        // Every element is a multiple of the format's smallest subnormal, 2^(1 - bias - mbits).
        let (_, mbits, bias) = f.layout();
        let lsb_exp = 1 - bias - mbits as i32;
        let lsb = 2f64.powi(lsb_exp);
        let mut out = Vec::with_capacity((rows * k) as usize);
        for row in 0..rows {
            for kk in 0..k {
                let (lane, v) = element(r, f, row, kk)?;
                let x = match &scales {
                    Some((sa, sb)) => scale_of(if which == 0 { sa } else { sb }, sel(which), lane)?,
                    None => E8M0::ONE,
                };
                // value * scale = int * 2^exp exactly, when both are finite.
                let exact = v.is_finite() && !x.is_nan();
                let int = if exact { (f64::from(v) / lsb) as i64 } else { 0 };
                let exp = lsb_exp + x.exponent().unwrap_or(0);
                out.push(Term { value: v, scale: x.to_f32(), int, exp, exact, neg: v.is_sign_negative() });
            }
        }
        Ok(out)
    };
    let av = gather(&ra, fa, m, 0)?;
    let bv = gather(&rb, fb, n, 1)?;
    let ku = k as usize;
    let blocks = ku / MX_BLOCK;
    let mut out = vec![0u32; ncd as usize * LANES];
    for i in 0..m {
        for j in 0..n {
            let (lane, reg) = sh.cd_pos(i, j, 0);
            let cval = match &c {
                Operand::Reg(rc) => f32::from_bits(w.vget(rc.file, rc.index + reg as u16, lane as usize)?),
                o => f32::from_bits(o.const_bits(Ty::F32).unwrap_or(0) as u32),
            };
            let mut acc = ExactAccumulator::new();
            let arow = &av[i as usize * ku..][..ku];
            let bcol = &bv[j as usize * ku..][..ku];
            for g in 0..blocks {
                let (ab, bb) = (&arow[g * MX_BLOCK..][..MX_BLOCK], &bcol[g * MX_BLOCK..][..MX_BLOCK]);
                // One scale pair per block: the block's integer dot product is exact in
                // i128 (|int| < 2^32 for E5M2, 32 products), then added once. Blocks with a
                // NaN/Inf element or a NaN scale take the product-by-product path.
                if ab.iter().chain(bb).all(|t| t.exact) {
                    let mut dot = 0i128;
                    let mut neg_zeros = true;
                    for (x, y) in ab.iter().zip(bb) {
                        let p = i128::from(x.int) * i128::from(y.int);
                        neg_zeros &= p == 0 && x.neg != y.neg;
                        dot += p;
                    }
                    if dot == 0 && neg_zeros {
                        acc.add(-0.0);
                    } else {
                        acc.add_scaled(dot, ab[0].exp + bb[0].exp)
                            .map_err(|e| FaultKind::Unsupported(e.to_string()))?;
                    }
                } else {
                    for (x, y) in ab.iter().zip(bb) {
                        acc.add_product(&[x.scale, x.value, y.scale, y.value])
                            .map_err(|e| FaultKind::Unsupported(e.to_string()))?;
                    }
                }
            }
            acc.add(cval);
            out[reg as usize * LANES + lane as usize] = acc.to_f32().to_bits();
        }
    }
    // MFMA writes every lane regardless of EXEC (the matrix is a whole-wave operand).
    for reg in 0..ncd as u16 {
        for lane in 0..LANES {
            w.vset(rd.file, rd.index + reg, lane, out[reg as usize * LANES + lane])?;
        }
    }
    Ok(())
}
