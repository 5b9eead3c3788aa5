//! The instruction table: one row per instruction (name, format, opcode per arch,
//! operands in LLVM assembly order, flags). Encoder, decoder, printer and assembler all
//! read this table and nothing else.
//!
//! Opcodes were read off `llvm-mc-22 -show-encoding` for gfx942 and gfx950 and are checked
//! against LLVM on every test run (`tests/golden.rs`); formats follow ISA.md §4 and LLVM's
//! `SOPInstructions.td`, `SMInstructions.td`, `VOP1/2/3/3P/CInstructions.td`,
//! `DSInstructions.td`, `BUFInstructions.td`, `FLATInstructions.td`.

use crate::operand::Ty;
use crate::operand::Ty::*;
use crate::Arch;

/// Encoding family of a row (ISA.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Sop1,
    Sop2,
    Sopk,
    Sopc,
    Sopp,
    Smem,
    /// VOP1; also encodable as VOP3 (e64, opcode 0x140+op), SDWA and DPP.
    Vop1,
    /// VOP2; also encodable as VOP3 (e64, opcode 0x100+op), SDWA and DPP.
    Vop2,
    /// VOPC; also encodable as VOP3 (e64, same opcode), SDWA.
    Vopc,
    /// Native VOP3 (VOP3a, or VOP3b when the row has a `Field::Sdst` operand).
    Vop3,
    /// VOP3P (packed math, dot products, accvgpr read/write).
    Vop3p,
    /// VOP3P-MAI: MFMA (ISA.md §4.3).
    Mai,
    Ds,
    Mubuf,
    /// FLAT segment (seg = 0).
    Flat,
    /// GLOBAL segment (seg = 2).
    Global,
    /// SCRATCH segment (seg = 1): per-lane private memory (ISA.md §4.4; LLVM
    /// `FLATInstructions.td` `FLAT_Scratch_*`). vaddr is one VGPR or `off`, saddr one SGPR
    /// or `off`; the address is an offset into the lane's private segment.
    Scratch,
}

/// Where an operand goes in the encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// SOP/SMEM/VOP destination.
    Sdst,
    Ssrc0,
    Ssrc1,
    /// SOPK/SOPP 16-bit immediate.
    Simm16,
    /// SOPK `hwreg(...)` immediate.
    Hwreg,
    /// Trailing 32-bit literal (`s_setreg_imm32_b32`).
    Literal,
    /// SMEM data (destination of loads, source of stores).
    Sdata,
    Sbase,
    /// SMEM offset operand: immediate or SGPR (ISA.md §4.1).
    SmemOffset,
    Vdst,
    Src0,
    Src1,
    Src2,
    /// VOP2 carry-in / condition mask: `vcc` in e32, SGPR pair in src2 of e64.
    CarryIn,
    /// Inline 32-bit constant of `v_fmamk`/`v_fmaak`.
    KImm,
    /// DS address VGPR.
    Addr,
    Data0,
    Data1,
    /// MUBUF data.
    Vdata,
    /// MUBUF/FLAT address VGPR(s).
    Vaddr,
    /// MUBUF resource descriptor s[4n:4n+3].
    Srsrc,
    /// MUBUF soffset.
    Soffset,
    /// FLAT/GLOBAL data.
    Data,
    /// GLOBAL scalar address (pair or `off`).
    Saddr,
    /// Scale of A of `v_mfma_scale_*` (src0 of its `v_mfma_ld_scale_b32` prefix).
    ScaleSrc0,
    /// Scale of B of `v_mfma_scale_*` (src1 of its `v_mfma_ld_scale_b32` prefix).
    ScaleSrc1,
}

/// Which operands a slot accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// SGPRs, trap temporaries, vcc/exec/m0/flat_scratch/xnack_mask.
    Sreg,
    /// Sreg, inline constant or literal.
    Ssrc,
    Vgpr,
    Agpr,
    /// VGPR or AGPR (file chosen by the instruction's acc bit).
    AV,
    /// VGPR/AGPR or inline constant (MFMA src2).
    AVSrc,
    /// VGPR, Sreg, inline constant or literal (VOP sources).
    Vsrc,
    /// VGPR tuple or `off`.
    VgprOrOff,
    /// SGPR pair or `off`.
    SregOrOff,
    /// An immediate.
    Imm,
}

/// How an instruction uses an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    Read,
    Write,
    ReadWrite,
}

/// When an operand slot is written in the assembly (and present in `Inst::operands`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Presence {
    Always,
    /// MUBUF vdata: absent with the `lds` modifier (ISA.md §2.4).
    UnlessLds,
    /// FLAT/GLOBAL atomic destination: present only for the returning form (`sc0`).
    IfReturn,
}

/// One operand slot of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Opnd {
    pub field: Field,
    pub class: Class,
    pub ty: Ty,
    /// Number of 32-bit registers (for tuples); 0 for Vaddr whose width follows the
    /// addressing mode.
    pub dwords: u8,
    pub access: Access,
    pub presence: Presence,
}

const fn o(field: Field, class: Class, ty: Ty, dwords: u8, access: Access) -> Opnd {
    Opnd { field, class, ty, dwords, access, presence: Presence::Always }
}
const fn sd(t: Ty) -> Opnd {
    o(Field::Sdst, Class::Sreg, t, t.dwords(), Access::Write)
}
const fn sdrw(t: Ty) -> Opnd {
    o(Field::Sdst, Class::Sreg, t, t.dwords(), Access::ReadWrite)
}
const fn sdr(t: Ty) -> Opnd {
    o(Field::Sdst, Class::Sreg, t, t.dwords(), Access::Read)
}
const fn ss0(t: Ty) -> Opnd {
    o(Field::Ssrc0, Class::Ssrc, t, t.dwords(), Access::Read)
}
const fn ssr0(t: Ty) -> Opnd {
    o(Field::Ssrc0, Class::Sreg, t, t.dwords(), Access::Read)
}
const fn ss1(t: Ty) -> Opnd {
    o(Field::Ssrc1, Class::Ssrc, t, t.dwords(), Access::Read)
}
const fn simm() -> Opnd {
    o(Field::Simm16, Class::Imm, B32, 0, Access::Read)
}
const fn hwreg() -> Opnd {
    o(Field::Hwreg, Class::Imm, B32, 0, Access::Read)
}
const fn lit32() -> Opnd {
    o(Field::Literal, Class::Imm, B32, 0, Access::Read)
}
const fn smdata(n: u8) -> Opnd {
    o(Field::Sdata, Class::Sreg, B32, n, Access::Write)
}
const fn smsrc(n: u8) -> Opnd {
    o(Field::Sdata, Class::Sreg, B32, n, Access::Read)
}
const fn smbase(n: u8) -> Opnd {
    o(Field::Sbase, Class::Sreg, B64, n, Access::Read)
}
const fn smoff() -> Opnd {
    o(Field::SmemOffset, Class::Ssrc, B32, 1, Access::Read)
}
const fn vd(t: Ty) -> Opnd {
    o(Field::Vdst, Class::Vgpr, t, t.dwords(), Access::Write)
}
const fn vdrw(t: Ty) -> Opnd {
    o(Field::Vdst, Class::Vgpr, t, t.dwords(), Access::ReadWrite)
}
const fn vd_s() -> Opnd {
    o(Field::Vdst, Class::Sreg, B32, 1, Access::Write)
}
const fn vd_a() -> Opnd {
    o(Field::Vdst, Class::Agpr, B32, 1, Access::Write)
}
const fn vs0(t: Ty) -> Opnd {
    o(Field::Src0, Class::Vsrc, t, t.dwords(), Access::Read)
}
const fn vs1(t: Ty) -> Opnd {
    o(Field::Src1, Class::Vsrc, t, t.dwords(), Access::Read)
}
const fn vs2(t: Ty) -> Opnd {
    o(Field::Src2, Class::Vsrc, t, t.dwords(), Access::Read)
}
const fn vs0_v(t: Ty) -> Opnd {
    o(Field::Src0, Class::Vgpr, t, t.dwords(), Access::Read)
}
const fn vs0_vrw() -> Opnd {
    o(Field::Src0, Class::Vgpr, B32, 1, Access::ReadWrite)
}
const fn vs0_a() -> Opnd {
    o(Field::Src0, Class::Agpr, B32, 1, Access::Read)
}
const fn vs0_ss() -> Opnd {
    o(Field::Src0, Class::Ssrc, B32, 1, Access::Read)
}
const fn vs1_ss() -> Opnd {
    o(Field::Src1, Class::Ssrc, B32, 1, Access::Read)
}
const fn sdc() -> Opnd {
    o(Field::Sdst, Class::Sreg, B64, 2, Access::Write)
}
const fn cin() -> Opnd {
    o(Field::CarryIn, Class::Sreg, B64, 2, Access::Read)
}
const fn kimm(t: Ty) -> Opnd {
    o(Field::KImm, Class::Imm, t, 0, Access::Read)
}
const fn md(n: u8) -> Opnd {
    o(Field::Vdst, Class::AV, F32, n, Access::Write)
}
const fn ma(n: u8) -> Opnd {
    o(Field::Src0, Class::AV, B32, n, Access::Read)
}
const fn mb(n: u8) -> Opnd {
    o(Field::Src1, Class::AV, B32, n, Access::Read)
}
const fn mc(n: u8) -> Opnd {
    o(Field::Src2, Class::AVSrc, F32, n, Access::Read)
}
/// f64 MFMA src2: an inline constant is an f64 one (1/(2*pi) prints as
/// `0.15915494309189532`; LLVM rejects the f32 spelling there).
const fn mc64(n: u8) -> Opnd {
    o(Field::Src2, Class::AVSrc, F64, n, Access::Read)
}
/// A scale operand of `v_mfma_scale_*`: one VGPR (llvm-mc-22 rejects SGPRs, constants and
/// literals there: "invalid operand for instruction", probed; golden-extra.s).
const fn mscale(field: Field) -> Opnd {
    o(field, Class::Vgpr, B32, 1, Access::Read)
}
const fn dvdst(n: u8) -> Opnd {
    o(Field::Vdst, Class::AV, B32, n, Access::Write)
}
const fn daddr() -> Opnd {
    o(Field::Addr, Class::Vgpr, B32, 1, Access::Read)
}
const fn dd0(n: u8) -> Opnd {
    o(Field::Data0, Class::AV, B32, n, Access::Read)
}
const fn dd1(n: u8) -> Opnd {
    o(Field::Data1, Class::AV, B32, n, Access::Read)
}
const fn mbdata(n: u8, access: Access) -> Opnd {
    Opnd { field: Field::Vdata, class: Class::AV, ty: B32, dwords: n, access, presence: Presence::UnlessLds }
}
const fn mbaddr() -> Opnd {
    o(Field::Vaddr, Class::VgprOrOff, B32, 0, Access::Read)
}
const fn mbrsrc() -> Opnd {
    o(Field::Srsrc, Class::Sreg, B32, 4, Access::Read)
}
const fn mbsoff() -> Opnd {
    o(Field::Soffset, Class::Ssrc, B32, 1, Access::Read)
}
const fn fvdst(n: u8) -> Opnd {
    o(Field::Vdst, Class::AV, B32, n, Access::Write)
}
const fn fvdst_rtn(n: u8) -> Opnd {
    Opnd {
        field: Field::Vdst,
        class: Class::AV,
        ty: B32,
        dwords: n,
        access: Access::Write,
        presence: Presence::IfReturn,
    }
}
const fn fvaddr() -> Opnd {
    o(Field::Vaddr, Class::Vgpr, B64, 0, Access::Read)
}
const fn fdata(n: u8) -> Opnd {
    o(Field::Data, Class::AV, B32, n, Access::Read)
}
const fn svaddr() -> Opnd {
    o(Field::Vaddr, Class::VgprOrOff, B32, 1, Access::Read)
}
const fn ssaddr() -> Opnd {
    o(Field::Saddr, Class::SregOrOff, B32, 1, Access::Read)
}
const fn fsaddr() -> Opnd {
    o(Field::Saddr, Class::SregOrOff, B64, 2, Access::Read)
}

/// Row flags: which modifiers LLVM accepts (probed with llvm-mc-22 per instruction).
pub mod flags {
    pub const NONE: u32 = 0;
    /// VOP1/VOP2/VOPC row without a VOP3 (e64) form.
    pub const NO_E64: u32 = 1 << 0;
    pub const CLAMP: u32 = 1 << 1;
    /// Output modifier `mul:2`/`mul:4`/`div:2`.
    pub const OMOD: u32 = 1 << 2;
    /// `neg` on float sources (VOP3), `neg_lo`/`neg_hi` (VOP3P).
    pub const NEG: u32 = 1 << 3;
    /// `abs` (`|x|`) on float sources.
    pub const ABS: u32 = 1 << 4;
    pub const OPSEL: u32 = 1 << 5;
    /// MFMA with `cbsz`/`abid`/`blgp`.
    pub const CBSZ_ABID_BLGP: u32 = 1 << 6;
    /// f64 MFMA: `neg:[a,b,c]` in place of blgp.
    pub const MAI_NEG: u32 = 1 << 7;
    /// `v_fma_mix*`: op_sel_hi defaults to 0.
    pub const MIX: u32 = 1 << 8;
    /// Memory atomic: `sc0` asks for the pre-op value.
    pub const ATOMIC: u32 = 1 << 9;
    /// MUBUF load that accepts the `lds` modifier (arch-dependent, see `Arch`).
    pub const LDS_OK: u32 = 1 << 10;
    /// DS with two 8-bit offsets (`offset0`/`offset1`).
    pub const DS_2OFF: u32 = 1 << 11;
    /// SOPP branch: simm16 is a signed word offset.
    pub const BRANCH: u32 = 1 << 12;
    /// `s_waitcnt`: printed as `vmcnt(..) expcnt(..) lgkmcnt(..)`.
    pub const WAITCNT: u32 = 1 << 13;
    /// The immediate operand may be omitted (printed only when nonzero).
    pub const OPT_IMM: u32 = 1 << 14;
    /// VOP1/VOP2/VOPC row with an SDWA form (probed with llvm-mc-22).
    pub const SDWA: u32 = 1 << 15;
    /// VOP1/VOP2 row with a DPP form (probed with llvm-mc-22).
    pub const DPP: u32 = 1 << 16;
    /// fp8/bf8 → f32 conversions: SDWA form has only `src0_sel` (dst_sel DWORD,
    /// dst_unused PAD fixed; LLVM `VOP1_SDWA9_fp8` profile).
    pub const SDWA_SRC_ONLY: u32 = 1 << 17;
    /// Reads VCC implicitly (`v_div_fmas_*`): counts against the constant bus.
    pub const READS_VCC: u32 = 1 << 18;
    /// VOP3 op_sel list has four entries whatever the source count (`v_cvt_sr_*`: the
    /// byte select lives in op_sel[3:2]).
    pub const OPSEL4: u32 = 1 << 19;
    /// FLAT/GLOBAL atomic whose returning (`sc0`) form has no AGPR variant: LLVM 22
    /// rejects AGPR data/destination there ("operands are not valid for this GPU or
    /// mode") and its disassembler rejects the acc bit (probed, both archs).
    pub const NO_AGPR_RTN: u32 = 1 << 20;
    /// FLAT/GLOBAL f64 atomic whose AGPR returning form has no `sc1` bit: llvm-mc-22
    /// assembles `sc1` there but drops it from the encoding, and its disassembler rejects
    /// the AGPR returning encoding with sc1 set (probed, both archs).
    pub const NO_AGPR_RTN_SC1: u32 = 1 << 21;
    /// gfx950 `v_bitop3_b16/b32`: an 8-bit truth table `bitop3:N` stored in the VOP3
    /// neg (bits 2:0), abs (5:3) and omod (7:6) fields (LLVM `VOP3_BITOP3`; read off
    /// `llvm-mc-22 -show-encoding`).
    pub const BITOP3: u32 = 1 << 22;
    /// gfx950 `v_mfma_*_f8f6f4`: `cbsz`/`blgp` select the A/B formats (0 fp8, 1 bf8,
    /// 2 fp6, 3 bf6, 4 fp4; LLVM `AMDGPU::MFMAScaleFormats`), and the A/B register
    /// tuples shrink with them (8 dwords for fp8/bf8, 6 for fp6/bf6, 4 for fp4).
    pub const F8F6F4: u32 = 1 << 23;
    /// gfx950 `v_mfma_scale_*_f8f6f4` (LLVM's VOP3PX encoding): a 128-bit instruction, the
    /// `v_mfma_ld_scale_b32` prefix (VOP3P opcode [`super::LD_SCALE_OPCODE`]: src0 the scale of
    /// A, src1 the scale of B, `op_sel[i]` in bit 11+i and `op_sel_hi[i]` in bit 59+i) followed
    /// by the MFMA word pair of the row's opcode with bit 11 (abid's low bit) set. `op_sel`
    /// and `op_sel_hi` have two meaningful entries (scale A, scale B): `op_sel_hi:[h,..]` with
    /// `op_sel:[l,..]` picks byte `2h + l` of the scale VGPR. Read off `llvm-mc-22
    /// -show-encoding` and `llvm-objdump-22` (golden.tsv).
    pub const SCALED: u32 = 1 << 24;
}
use flags::*;

/// Dwords per lane of an `*_f8f6f4` MFMA source for format code `fmt` (cbsz for A, blgp
/// for B): 0 fp8 and 1 bf8 take 8, 2 fp6 and 3 bf6 take 6, 4 fp4 takes 4 (LLVM
/// `AMDGPU::MFMAScaleFormats`). The reserved codes 5-7 fit the 3-bit fields and
/// llvm-mc-22 assembles them with 8-dword tuples, so they do here too; codes above 7 do
/// not fit.
pub fn f8f6f4_dwords(fmt: u8) -> Option<u8> {
    match fmt {
        0 | 1 | 5..=7 => Some(8),
        2 | 3 => Some(6),
        4 => Some(4),
        _ => None,
    }
}

/// VOP3P opcode of `v_mfma_ld_scale_b32`, the prefix of every [`flags::SCALED`] row (gfx950;
/// llvm-mc-22: `v_mfma_ld_scale_b32 v1, v2` is `D3AC4000 18020501`).
pub const LD_SCALE_OPCODE: u16 = 0x2C;

/// Opcode value meaning "not available on this arch".
pub const NA: u16 = u16::MAX;

/// One instruction of the table.
#[derive(Debug)]
pub struct InstDef {
    pub op: Op,
    /// LLVM mnemonic (without `_e32`/`_e64`/`_sdwa`/`_dpp`).
    pub name: &'static str,
    pub format: Format,
    /// Opcode on [gfx942, gfx950]; `NA` where the arch lacks the instruction.
    pub opcodes: [u16; 2],
    /// Operand slots in LLVM assembly order.
    pub operands: &'static [Opnd],
    pub flags: u32,
}

impl InstDef {
    /// The opcode on `arch`, or `None` when the instruction does not exist there.
    pub fn opcode(&self, arch: Arch) -> Option<u16> {
        let o = self.opcodes[arch as usize];
        (o != NA).then_some(o)
    }
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
    /// Number of source operands written in VOP assembly (for op_sel lists).
    pub fn num_vop_srcs(&self) -> usize {
        self.operands.iter().filter(|o| matches!(o.field, Field::Src0 | Field::Src1 | Field::Src2)).count()
    }
    /// Register tuple width of operand slot `s` under modifiers `m`: the row's own width,
    /// except the A/B sources of `*_f8f6f4` MFMAs, whose width follows the format that
    /// `cbsz` (A) / `blgp` (B) select ([`f8f6f4_dwords`]).
    pub fn slot_dwords(&self, s: &Opnd, m: &crate::inst::Mods) -> u8 {
        if self.has(F8F6F4) {
            match s.field {
                Field::Src0 => return f8f6f4_dwords(m.cbsz).unwrap_or(s.dwords),
                Field::Src1 => return f8f6f4_dwords(m.blgp).unwrap_or(s.dwords),
                _ => {}
            }
        }
        s.dwords
    }
    /// Whether `lds` is legal for this MUBUF load on `arch` (ISA.md §2.4: gfx950 adds
    /// dwordx3/x4).
    pub fn lds_ok(&self, arch: Arch) -> bool {
        if !self.has(LDS_OK) {
            return false;
        }
        let wide = self.name.ends_with("x3") || self.name.ends_with("x4");
        !wide || arch == Arch::Gfx950
    }
}

macro_rules! isa_table {
    ($($v:ident = $name:literal, $fmt:ident, $o942:expr, $o950:expr, [$($opnd:expr),*], $flags:expr;)*) => {
        /// Every instruction of the table; variant names are the LLVM mnemonics in capitals.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Op { $($v,)* }

        /// The table, indexed by `Op as usize`.
        pub static TABLE: &[InstDef] = &[
            $(InstDef {
                op: Op::$v,
                name: $name,
                format: Format::$fmt,
                opcodes: [$o942, $o950],
                operands: &[$($opnd),*],
                flags: $flags,
            },)*
        ];
    };
}

impl Op {
    /// The [`flags::SCALED`] row whose MFMA part is this unscaled `*_f8f6f4` row (same opcode),
    /// and back: the pair `v_mfma_f32_16x16x128_f8f6f4` / `v_mfma_scale_f32_16x16x128_f8f6f4`.
    pub fn scale_pair(self) -> Option<Op> {
        let d = self.def();
        if !d.has(F8F6F4) {
            return None;
        }
        TABLE.iter().find(|o| o.has(F8F6F4) && o.has(SCALED) != d.has(SCALED) && o.opcodes == d.opcodes).map(|o| o.op)
    }
    /// The table row of this instruction.
    pub fn def(self) -> &'static InstDef {
        &TABLE[self as usize]
    }
    pub fn name(self) -> &'static str {
        self.def().name
    }
    /// Find an instruction by LLVM mnemonic (without encoding suffix).
    pub fn from_name(name: &str) -> Option<Op> {
        crate::lookup::by_name(name)
    }
}

isa_table! {
    S_ADD_U32 = "s_add_u32", Sop2, 0x00, 0x00, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_SUB_U32 = "s_sub_u32", Sop2, 0x01, 0x01, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_ADD_I32 = "s_add_i32", Sop2, 0x02, 0x02, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_SUB_I32 = "s_sub_i32", Sop2, 0x03, 0x03, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_ADDC_U32 = "s_addc_u32", Sop2, 0x04, 0x04, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_SUBB_U32 = "s_subb_u32", Sop2, 0x05, 0x05, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_MIN_I32 = "s_min_i32", Sop2, 0x06, 0x06, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_MIN_U32 = "s_min_u32", Sop2, 0x07, 0x07, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_MAX_I32 = "s_max_i32", Sop2, 0x08, 0x08, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_MAX_U32 = "s_max_u32", Sop2, 0x09, 0x09, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_CSELECT_B32 = "s_cselect_b32", Sop2, 0x0A, 0x0A, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_AND_B32 = "s_and_b32", Sop2, 0x0C, 0x0C, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_OR_B32 = "s_or_b32", Sop2, 0x0E, 0x0E, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_XOR_B32 = "s_xor_b32", Sop2, 0x10, 0x10, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_ANDN2_B32 = "s_andn2_b32", Sop2, 0x12, 0x12, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_ORN2_B32 = "s_orn2_b32", Sop2, 0x14, 0x14, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_NAND_B32 = "s_nand_b32", Sop2, 0x16, 0x16, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_NOR_B32 = "s_nor_b32", Sop2, 0x18, 0x18, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_XNOR_B32 = "s_xnor_b32", Sop2, 0x1A, 0x1A, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_LSHL_B32 = "s_lshl_b32", Sop2, 0x1C, 0x1C, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_LSHR_B32 = "s_lshr_b32", Sop2, 0x1E, 0x1E, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_ASHR_I32 = "s_ashr_i32", Sop2, 0x20, 0x20, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_BFM_B32 = "s_bfm_b32", Sop2, 0x22, 0x22, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_MUL_I32 = "s_mul_i32", Sop2, 0x24, 0x24, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_BFE_U32 = "s_bfe_u32", Sop2, 0x25, 0x25, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_BFE_I32 = "s_bfe_i32", Sop2, 0x26, 0x26, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_ABSDIFF_I32 = "s_absdiff_i32", Sop2, 0x2A, 0x2A, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_MUL_HI_U32 = "s_mul_hi_u32", Sop2, 0x2C, 0x2C, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_MUL_HI_I32 = "s_mul_hi_i32", Sop2, 0x2D, 0x2D, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_LSHL1_ADD_U32 = "s_lshl1_add_u32", Sop2, 0x2E, 0x2E, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_LSHL2_ADD_U32 = "s_lshl2_add_u32", Sop2, 0x2F, 0x2F, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_LSHL3_ADD_U32 = "s_lshl3_add_u32", Sop2, 0x30, 0x30, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_LSHL4_ADD_U32 = "s_lshl4_add_u32", Sop2, 0x31, 0x31, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_PACK_LL_B32_B16 = "s_pack_ll_b32_b16", Sop2, 0x32, 0x32, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_PACK_LH_B32_B16 = "s_pack_lh_b32_b16", Sop2, 0x33, 0x33, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_PACK_HH_B32_B16 = "s_pack_hh_b32_b16", Sop2, 0x34, 0x34, [sd(B32), ss0(B32), ss1(B32)], NONE;
    S_CSELECT_B64 = "s_cselect_b64", Sop2, 0x0B, 0x0B, [sd(B64), ss0(B64), ss1(B64)], NONE;
    S_AND_B64 = "s_and_b64", Sop2, 0x0D, 0x0D, [sd(B64), ss0(B64), ss1(B64)], NONE;
    S_OR_B64 = "s_or_b64", Sop2, 0x0F, 0x0F, [sd(B64), ss0(B64), ss1(B64)], NONE;
    S_XOR_B64 = "s_xor_b64", Sop2, 0x11, 0x11, [sd(B64), ss0(B64), ss1(B64)], NONE;
    S_ANDN2_B64 = "s_andn2_b64", Sop2, 0x13, 0x13, [sd(B64), ss0(B64), ss1(B64)], NONE;
    S_ORN2_B64 = "s_orn2_b64", Sop2, 0x15, 0x15, [sd(B64), ss0(B64), ss1(B64)], NONE;
    S_NAND_B64 = "s_nand_b64", Sop2, 0x17, 0x17, [sd(B64), ss0(B64), ss1(B64)], NONE;
    S_NOR_B64 = "s_nor_b64", Sop2, 0x19, 0x19, [sd(B64), ss0(B64), ss1(B64)], NONE;
    S_XNOR_B64 = "s_xnor_b64", Sop2, 0x1B, 0x1B, [sd(B64), ss0(B64), ss1(B64)], NONE;
    S_LSHL_B64 = "s_lshl_b64", Sop2, 0x1D, 0x1D, [sd(B64), ss0(B64), ss1(B32)], NONE;
    S_LSHR_B64 = "s_lshr_b64", Sop2, 0x1F, 0x1F, [sd(B64), ss0(B64), ss1(B32)], NONE;
    S_ASHR_I64 = "s_ashr_i64", Sop2, 0x21, 0x21, [sd(B64), ss0(B64), ss1(B32)], NONE;
    S_BFE_U64 = "s_bfe_u64", Sop2, 0x27, 0x27, [sd(B64), ss0(B64), ss1(B32)], NONE;
    S_BFE_I64 = "s_bfe_i64", Sop2, 0x28, 0x28, [sd(B64), ss0(B64), ss1(B32)], NONE;
    S_BFM_B64 = "s_bfm_b64", Sop2, 0x23, 0x23, [sd(B64), ss0(B32), ss1(B32)], NONE;
    S_MOV_B32 = "s_mov_b32", Sop1, 0x00, 0x00, [sd(B32), ss0(B32)], NONE;
    S_CMOV_B32 = "s_cmov_b32", Sop1, 0x02, 0x02, [sd(B32), ss0(B32)], NONE;
    S_NOT_B32 = "s_not_b32", Sop1, 0x04, 0x04, [sd(B32), ss0(B32)], NONE;
    S_WQM_B32 = "s_wqm_b32", Sop1, 0x06, 0x06, [sd(B32), ss0(B32)], NONE;
    S_BREV_B32 = "s_brev_b32", Sop1, 0x08, 0x08, [sd(B32), ss0(B32)], NONE;
    S_BCNT0_I32_B32 = "s_bcnt0_i32_b32", Sop1, 0x0A, 0x0A, [sd(B32), ss0(B32)], NONE;
    S_BCNT1_I32_B32 = "s_bcnt1_i32_b32", Sop1, 0x0C, 0x0C, [sd(B32), ss0(B32)], NONE;
    S_FF0_I32_B32 = "s_ff0_i32_b32", Sop1, 0x0E, 0x0E, [sd(B32), ss0(B32)], NONE;
    S_FF1_I32_B32 = "s_ff1_i32_b32", Sop1, 0x10, 0x10, [sd(B32), ss0(B32)], NONE;
    S_FLBIT_I32_B32 = "s_flbit_i32_b32", Sop1, 0x12, 0x12, [sd(B32), ss0(B32)], NONE;
    S_FLBIT_I32 = "s_flbit_i32", Sop1, 0x14, 0x14, [sd(B32), ss0(B32)], NONE;
    S_SEXT_I32_I8 = "s_sext_i32_i8", Sop1, 0x16, 0x16, [sd(B32), ss0(B32)], NONE;
    S_SEXT_I32_I16 = "s_sext_i32_i16", Sop1, 0x17, 0x17, [sd(B32), ss0(B32)], NONE;
    S_ABS_I32 = "s_abs_i32", Sop1, 0x30, 0x30, [sd(B32), ss0(B32)], NONE;
    S_QUADMASK_B32 = "s_quadmask_b32", Sop1, 0x28, 0x28, [sd(B32), ss0(B32)], NONE;
    S_BITSET0_B32 = "s_bitset0_b32", Sop1, 0x18, 0x18, [sdrw(B32), ss0(B32)], NONE;
    S_BITSET1_B32 = "s_bitset1_b32", Sop1, 0x1A, 0x1A, [sdrw(B32), ss0(B32)], NONE;
    S_MOV_B64 = "s_mov_b64", Sop1, 0x01, 0x01, [sd(B64), ss0(B64)], NONE;
    S_CMOV_B64 = "s_cmov_b64", Sop1, 0x03, 0x03, [sd(B64), ss0(B64)], NONE;
    S_NOT_B64 = "s_not_b64", Sop1, 0x05, 0x05, [sd(B64), ss0(B64)], NONE;
    S_WQM_B64 = "s_wqm_b64", Sop1, 0x07, 0x07, [sd(B64), ss0(B64)], NONE;
    S_BREV_B64 = "s_brev_b64", Sop1, 0x09, 0x09, [sd(B64), ss0(B64)], NONE;
    S_AND_SAVEEXEC_B64 = "s_and_saveexec_b64", Sop1, 0x20, 0x20, [sd(B64), ss0(B64)], NONE;
    S_OR_SAVEEXEC_B64 = "s_or_saveexec_b64", Sop1, 0x21, 0x21, [sd(B64), ss0(B64)], NONE;
    S_XOR_SAVEEXEC_B64 = "s_xor_saveexec_b64", Sop1, 0x22, 0x22, [sd(B64), ss0(B64)], NONE;
    S_ANDN2_SAVEEXEC_B64 = "s_andn2_saveexec_b64", Sop1, 0x23, 0x23, [sd(B64), ss0(B64)], NONE;
    S_ORN2_SAVEEXEC_B64 = "s_orn2_saveexec_b64", Sop1, 0x24, 0x24, [sd(B64), ss0(B64)], NONE;
    S_NAND_SAVEEXEC_B64 = "s_nand_saveexec_b64", Sop1, 0x25, 0x25, [sd(B64), ss0(B64)], NONE;
    S_NOR_SAVEEXEC_B64 = "s_nor_saveexec_b64", Sop1, 0x26, 0x26, [sd(B64), ss0(B64)], NONE;
    S_XNOR_SAVEEXEC_B64 = "s_xnor_saveexec_b64", Sop1, 0x27, 0x27, [sd(B64), ss0(B64)], NONE;
    S_QUADMASK_B64 = "s_quadmask_b64", Sop1, 0x29, 0x29, [sd(B64), ss0(B64)], NONE;
    S_ANDN1_SAVEEXEC_B64 = "s_andn1_saveexec_b64", Sop1, 0x33, 0x33, [sd(B64), ss0(B64)], NONE;
    S_ORN1_SAVEEXEC_B64 = "s_orn1_saveexec_b64", Sop1, 0x34, 0x34, [sd(B64), ss0(B64)], NONE;
    S_ANDN1_WREXEC_B64 = "s_andn1_wrexec_b64", Sop1, 0x35, 0x35, [sd(B64), ss0(B64)], NONE;
    S_ANDN2_WREXEC_B64 = "s_andn2_wrexec_b64", Sop1, 0x36, 0x36, [sd(B64), ss0(B64)], NONE;
    S_SWAPPC_B64 = "s_swappc_b64", Sop1, 0x1E, 0x1E, [sd(B64), ssr0(B64)], NONE;
    S_BCNT0_I32_B64 = "s_bcnt0_i32_b64", Sop1, 0x0B, 0x0B, [sd(B32), ss0(B64)], NONE;
    S_BCNT1_I32_B64 = "s_bcnt1_i32_b64", Sop1, 0x0D, 0x0D, [sd(B32), ss0(B64)], NONE;
    S_FF0_I32_B64 = "s_ff0_i32_b64", Sop1, 0x0F, 0x0F, [sd(B32), ss0(B64)], NONE;
    S_FF1_I32_B64 = "s_ff1_i32_b64", Sop1, 0x11, 0x11, [sd(B32), ss0(B64)], NONE;
    S_FLBIT_I32_B64 = "s_flbit_i32_b64", Sop1, 0x13, 0x13, [sd(B32), ss0(B64)], NONE;
    S_FLBIT_I32_I64 = "s_flbit_i32_i64", Sop1, 0x15, 0x15, [sd(B32), ss0(B64)], NONE;
    S_BITSET0_B64 = "s_bitset0_b64", Sop1, 0x19, 0x19, [sdrw(B64), ss0(B32)], NONE;
    S_BITSET1_B64 = "s_bitset1_b64", Sop1, 0x1B, 0x1B, [sdrw(B64), ss0(B32)], NONE;
    S_GETPC_B64 = "s_getpc_b64", Sop1, 0x1C, 0x1C, [sd(B64)], NONE;
    S_SETPC_B64 = "s_setpc_b64", Sop1, 0x1D, 0x1D, [ssr0(B64)], NONE;
    S_CMP_EQ_I32 = "s_cmp_eq_i32", Sopc, 0x00, 0x00, [ss0(B32), ss1(B32)], NONE;
    S_CMP_LG_I32 = "s_cmp_lg_i32", Sopc, 0x01, 0x01, [ss0(B32), ss1(B32)], NONE;
    S_CMP_GT_I32 = "s_cmp_gt_i32", Sopc, 0x02, 0x02, [ss0(B32), ss1(B32)], NONE;
    S_CMP_GE_I32 = "s_cmp_ge_i32", Sopc, 0x03, 0x03, [ss0(B32), ss1(B32)], NONE;
    S_CMP_LT_I32 = "s_cmp_lt_i32", Sopc, 0x04, 0x04, [ss0(B32), ss1(B32)], NONE;
    S_CMP_LE_I32 = "s_cmp_le_i32", Sopc, 0x05, 0x05, [ss0(B32), ss1(B32)], NONE;
    S_CMP_EQ_U32 = "s_cmp_eq_u32", Sopc, 0x06, 0x06, [ss0(B32), ss1(B32)], NONE;
    S_CMP_LG_U32 = "s_cmp_lg_u32", Sopc, 0x07, 0x07, [ss0(B32), ss1(B32)], NONE;
    S_CMP_GT_U32 = "s_cmp_gt_u32", Sopc, 0x08, 0x08, [ss0(B32), ss1(B32)], NONE;
    S_CMP_GE_U32 = "s_cmp_ge_u32", Sopc, 0x09, 0x09, [ss0(B32), ss1(B32)], NONE;
    S_CMP_LT_U32 = "s_cmp_lt_u32", Sopc, 0x0A, 0x0A, [ss0(B32), ss1(B32)], NONE;
    S_CMP_LE_U32 = "s_cmp_le_u32", Sopc, 0x0B, 0x0B, [ss0(B32), ss1(B32)], NONE;
    S_BITCMP0_B32 = "s_bitcmp0_b32", Sopc, 0x0C, 0x0C, [ss0(B32), ss1(B32)], NONE;
    S_BITCMP1_B32 = "s_bitcmp1_b32", Sopc, 0x0D, 0x0D, [ss0(B32), ss1(B32)], NONE;
    S_CMP_EQ_U64 = "s_cmp_eq_u64", Sopc, 0x12, 0x12, [ss0(B64), ss1(B64)], NONE;
    S_CMP_LG_U64 = "s_cmp_lg_u64", Sopc, 0x13, 0x13, [ss0(B64), ss1(B64)], NONE;
    S_BITCMP0_B64 = "s_bitcmp0_b64", Sopc, 0x0E, 0x0E, [ss0(B64), ss1(B32)], NONE;
    S_BITCMP1_B64 = "s_bitcmp1_b64", Sopc, 0x0F, 0x0F, [ss0(B64), ss1(B32)], NONE;
    S_MOVK_I32 = "s_movk_i32", Sopk, 0x00, 0x00, [sd(B32), simm()], NONE;
    S_CMOVK_I32 = "s_cmovk_i32", Sopk, 0x01, 0x01, [sdrw(B32), simm()], NONE;
    S_ADDK_I32 = "s_addk_i32", Sopk, 0x0E, 0x0E, [sdrw(B32), simm()], NONE;
    S_MULK_I32 = "s_mulk_i32", Sopk, 0x0F, 0x0F, [sdrw(B32), simm()], NONE;
    S_CMPK_EQ_I32 = "s_cmpk_eq_i32", Sopk, 0x02, 0x02, [sdr(B32), simm()], NONE;
    S_CMPK_LG_I32 = "s_cmpk_lg_i32", Sopk, 0x03, 0x03, [sdr(B32), simm()], NONE;
    S_CMPK_GT_I32 = "s_cmpk_gt_i32", Sopk, 0x04, 0x04, [sdr(B32), simm()], NONE;
    S_CMPK_GE_I32 = "s_cmpk_ge_i32", Sopk, 0x05, 0x05, [sdr(B32), simm()], NONE;
    S_CMPK_LT_I32 = "s_cmpk_lt_i32", Sopk, 0x06, 0x06, [sdr(B32), simm()], NONE;
    S_CMPK_LE_I32 = "s_cmpk_le_i32", Sopk, 0x07, 0x07, [sdr(B32), simm()], NONE;
    S_CMPK_EQ_U32 = "s_cmpk_eq_u32", Sopk, 0x08, 0x08, [sdr(B32), simm()], NONE;
    S_CMPK_LG_U32 = "s_cmpk_lg_u32", Sopk, 0x09, 0x09, [sdr(B32), simm()], NONE;
    S_CMPK_GT_U32 = "s_cmpk_gt_u32", Sopk, 0x0A, 0x0A, [sdr(B32), simm()], NONE;
    S_CMPK_GE_U32 = "s_cmpk_ge_u32", Sopk, 0x0B, 0x0B, [sdr(B32), simm()], NONE;
    S_CMPK_LT_U32 = "s_cmpk_lt_u32", Sopk, 0x0C, 0x0C, [sdr(B32), simm()], NONE;
    S_CMPK_LE_U32 = "s_cmpk_le_u32", Sopk, 0x0D, 0x0D, [sdr(B32), simm()], NONE;
    S_GETREG_B32 = "s_getreg_b32", Sopk, 0x11, 0x11, [sd(B32), hwreg()], NONE;
    S_SETREG_B32 = "s_setreg_b32", Sopk, 0x12, 0x12, [hwreg(), sdr(B32)], NONE;
    S_SETREG_IMM32_B32 = "s_setreg_imm32_b32", Sopk, 0x14, 0x14, [hwreg(), lit32()], NONE;
    S_CALL_B64 = "s_call_b64", Sopk, 0x15, 0x15, [sd(B64), simm()], NONE;
    S_ENDPGM = "s_endpgm", Sopp, 0x01, 0x01, [], OPT_IMM;
    S_WAKEUP = "s_wakeup", Sopp, 0x03, 0x03, [], NONE;
    S_BARRIER = "s_barrier", Sopp, 0x0A, 0x0A, [], NONE;
    S_ICACHE_INV = "s_icache_inv", Sopp, 0x13, 0x13, [], NONE;
    S_TTRACEDATA = "s_ttracedata", Sopp, 0x16, 0x16, [], NONE;
    S_ENDPGM_SAVED = "s_endpgm_saved", Sopp, 0x1B, 0x1B, [], NONE;
    S_SET_GPR_IDX_OFF = "s_set_gpr_idx_off", Sopp, 0x1C, 0x1C, [], NONE;
    S_INCPERFLEVEL = "s_incperflevel", Sopp, 0x14, 0x14, [simm()], NONE;
    S_DECPERFLEVEL = "s_decperflevel", Sopp, 0x15, 0x15, [simm()], NONE;
    S_NOP = "s_nop", Sopp, 0x00, 0x00, [simm()], NONE;
    S_SETHALT = "s_sethalt", Sopp, 0x0D, 0x0D, [simm()], NONE;
    S_SLEEP = "s_sleep", Sopp, 0x0E, 0x0E, [simm()], NONE;
    S_SETPRIO = "s_setprio", Sopp, 0x0F, 0x0F, [simm()], NONE;
    S_SENDMSG = "s_sendmsg", Sopp, 0x10, 0x10, [simm()], NONE;
    S_SENDMSGHALT = "s_sendmsghalt", Sopp, 0x11, 0x11, [simm()], NONE;
    S_TRAP = "s_trap", Sopp, 0x12, 0x12, [simm()], NONE;
    S_SETKILL = "s_setkill", Sopp, 0x0B, 0x0B, [simm()], NONE;
    S_BRANCH = "s_branch", Sopp, 0x02, 0x02, [simm()], BRANCH;
    S_CBRANCH_SCC0 = "s_cbranch_scc0", Sopp, 0x04, 0x04, [simm()], BRANCH;
    S_CBRANCH_SCC1 = "s_cbranch_scc1", Sopp, 0x05, 0x05, [simm()], BRANCH;
    S_CBRANCH_VCCZ = "s_cbranch_vccz", Sopp, 0x06, 0x06, [simm()], BRANCH;
    S_CBRANCH_VCCNZ = "s_cbranch_vccnz", Sopp, 0x07, 0x07, [simm()], BRANCH;
    S_CBRANCH_EXECZ = "s_cbranch_execz", Sopp, 0x08, 0x08, [simm()], BRANCH;
    S_CBRANCH_EXECNZ = "s_cbranch_execnz", Sopp, 0x09, 0x09, [simm()], BRANCH;
    S_CBRANCH_CDBGSYS = "s_cbranch_cdbgsys", Sopp, 0x17, 0x17, [simm()], BRANCH;
    S_CBRANCH_CDBGUSER = "s_cbranch_cdbguser", Sopp, 0x18, 0x18, [simm()], BRANCH;
    S_CBRANCH_CDBGSYS_OR_USER = "s_cbranch_cdbgsys_or_user", Sopp, 0x19, 0x19, [simm()], BRANCH;
    S_CBRANCH_CDBGSYS_AND_USER = "s_cbranch_cdbgsys_and_user", Sopp, 0x1A, 0x1A, [simm()], BRANCH;
    S_WAITCNT = "s_waitcnt", Sopp, 0x0C, 0x0C, [simm()], WAITCNT;
    S_LOAD_DWORD = "s_load_dword", Smem, 0x00, 0x00, [smdata(1), smbase(2), smoff()], NONE;
    S_LOAD_DWORDX2 = "s_load_dwordx2", Smem, 0x01, 0x01, [smdata(2), smbase(2), smoff()], NONE;
    S_LOAD_DWORDX4 = "s_load_dwordx4", Smem, 0x02, 0x02, [smdata(4), smbase(2), smoff()], NONE;
    S_LOAD_DWORDX8 = "s_load_dwordx8", Smem, 0x03, 0x03, [smdata(8), smbase(2), smoff()], NONE;
    S_LOAD_DWORDX16 = "s_load_dwordx16", Smem, 0x04, 0x04, [smdata(16), smbase(2), smoff()], NONE;
    S_BUFFER_LOAD_DWORD = "s_buffer_load_dword", Smem, 0x08, 0x08, [smdata(1), smbase(4), smoff()], NONE;
    S_BUFFER_LOAD_DWORDX2 = "s_buffer_load_dwordx2", Smem, 0x09, 0x09, [smdata(2), smbase(4), smoff()], NONE;
    S_BUFFER_LOAD_DWORDX4 = "s_buffer_load_dwordx4", Smem, 0x0A, 0x0A, [smdata(4), smbase(4), smoff()], NONE;
    S_BUFFER_LOAD_DWORDX8 = "s_buffer_load_dwordx8", Smem, 0x0B, 0x0B, [smdata(8), smbase(4), smoff()], NONE;
    S_BUFFER_LOAD_DWORDX16 = "s_buffer_load_dwordx16", Smem, 0x0C, 0x0C, [smdata(16), smbase(4), smoff()], NONE;
    S_STORE_DWORD = "s_store_dword", Smem, 0x10, 0x10, [smsrc(1), smbase(2), smoff()], NONE;
    S_STORE_DWORDX2 = "s_store_dwordx2", Smem, 0x11, 0x11, [smsrc(2), smbase(2), smoff()], NONE;
    S_STORE_DWORDX4 = "s_store_dwordx4", Smem, 0x12, 0x12, [smsrc(4), smbase(2), smoff()], NONE;
    S_BUFFER_STORE_DWORD = "s_buffer_store_dword", Smem, 0x18, 0x18, [smsrc(1), smbase(4), smoff()], NONE;
    S_BUFFER_STORE_DWORDX2 = "s_buffer_store_dwordx2", Smem, 0x19, 0x19, [smsrc(2), smbase(4), smoff()], NONE;
    S_BUFFER_STORE_DWORDX4 = "s_buffer_store_dwordx4", Smem, 0x1A, 0x1A, [smsrc(4), smbase(4), smoff()], NONE;
    S_DCACHE_INV = "s_dcache_inv", Smem, 0x20, 0x20, [], NONE;
    S_DCACHE_WB = "s_dcache_wb", Smem, 0x21, 0x21, [], NONE;
    S_DCACHE_INV_VOL = "s_dcache_inv_vol", Smem, 0x22, 0x22, [], NONE;
    S_DCACHE_WB_VOL = "s_dcache_wb_vol", Smem, 0x23, 0x23, [], NONE;
    S_MEMTIME = "s_memtime", Smem, 0x24, 0x24, [smdata(2)], NONE;
    S_MEMREALTIME = "s_memrealtime", Smem, 0x25, 0x25, [smdata(2)], NONE;
    V_NOP = "v_nop", Vop1, 0x00, 0x00, [], NONE;
    V_MOV_B32 = "v_mov_b32", Vop1, 0x01, 0x01, [vd(B32), vs0(B32)], SDWA | DPP;
    V_NOT_B32 = "v_not_b32", Vop1, 0x2B, 0x2B, [vd(B32), vs0(B32)], SDWA | DPP;
    V_BFREV_B32 = "v_bfrev_b32", Vop1, 0x2C, 0x2C, [vd(B32), vs0(B32)], SDWA | DPP;
    V_FFBH_U32 = "v_ffbh_u32", Vop1, 0x2D, 0x2D, [vd(B32), vs0(B32)], SDWA | DPP;
    V_FFBL_B32 = "v_ffbl_b32", Vop1, 0x2E, 0x2E, [vd(B32), vs0(B32)], SDWA | DPP;
    V_FFBH_I32 = "v_ffbh_i32", Vop1, 0x2F, 0x2F, [vd(B32), vs0(B32)], SDWA | DPP;
    V_READFIRSTLANE_B32 = "v_readfirstlane_b32", Vop1, 0x02, 0x02, [vd_s(), vs0_v(B32)], NO_E64;
    V_CVT_I32_F64 = "v_cvt_i32_f64", Vop1, 0x03, 0x03, [vd(B32), vs0(F64)], CLAMP | OMOD | NEG | ABS;
    V_CVT_U32_F64 = "v_cvt_u32_f64", Vop1, 0x15, 0x15, [vd(B32), vs0(F64)], CLAMP | OMOD | NEG | ABS;
    V_FREXP_EXP_I32_F64 = "v_frexp_exp_i32_f64", Vop1, 0x30, 0x30, [vd(B32), vs0(F64)], CLAMP | OMOD | NEG | ABS;
    V_CVT_F64_I32 = "v_cvt_f64_i32", Vop1, 0x04, 0x04, [vd(F64), vs0(B32)], CLAMP | OMOD;
    V_CVT_F64_U32 = "v_cvt_f64_u32", Vop1, 0x16, 0x16, [vd(F64), vs0(B32)], CLAMP | OMOD;
    V_CVT_F32_I32 = "v_cvt_f32_i32", Vop1, 0x05, 0x05, [vd(F32), vs0(B32)], CLAMP | OMOD | SDWA | DPP;
    V_CVT_F32_U32 = "v_cvt_f32_u32", Vop1, 0x06, 0x06, [vd(F32), vs0(B32)], CLAMP | OMOD | SDWA | DPP;
    V_CVT_F32_UBYTE0 = "v_cvt_f32_ubyte0", Vop1, 0x11, 0x11, [vd(F32), vs0(B32)], CLAMP | OMOD | SDWA | DPP;
    V_CVT_F32_UBYTE1 = "v_cvt_f32_ubyte1", Vop1, 0x12, 0x12, [vd(F32), vs0(B32)], CLAMP | OMOD | SDWA | DPP;
    V_CVT_F32_UBYTE2 = "v_cvt_f32_ubyte2", Vop1, 0x13, 0x13, [vd(F32), vs0(B32)], CLAMP | OMOD | SDWA | DPP;
    V_CVT_F32_UBYTE3 = "v_cvt_f32_ubyte3", Vop1, 0x14, 0x14, [vd(F32), vs0(B32)], CLAMP | OMOD | SDWA | DPP;
    V_CVT_OFF_F32_I4 = "v_cvt_off_f32_i4", Vop1, 0x0E, 0x0E, [vd(F32), vs0(B32)], CLAMP | OMOD | SDWA | DPP;
    V_CVT_U32_F32 = "v_cvt_u32_f32", Vop1, 0x07, 0x07, [vd(B32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_CVT_I32_F32 = "v_cvt_i32_f32", Vop1, 0x08, 0x08, [vd(B32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_CVT_RPI_I32_F32 = "v_cvt_rpi_i32_f32", Vop1, 0x0C, 0x0C, [vd(B32), vs0(F32)], CLAMP | NEG | ABS | SDWA | DPP;
    V_CVT_FLR_I32_F32 = "v_cvt_flr_i32_f32", Vop1, 0x0D, 0x0D, [vd(B32), vs0(F32)], CLAMP | NEG | ABS | SDWA | DPP;
    V_FREXP_EXP_I32_F32 = "v_frexp_exp_i32_f32", Vop1, 0x33, 0x33, [vd(B32), vs0(F32)], CLAMP | NEG | ABS | SDWA | DPP;
    V_CVT_F16_F32 = "v_cvt_f16_f32", Vop1, 0x0A, 0x0A, [vd(F16), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_CVT_F32_F16 = "v_cvt_f32_f16", Vop1, 0x0B, 0x0B, [vd(F32), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_CVT_F32_F64 = "v_cvt_f32_f64", Vop1, 0x0F, 0x0F, [vd(F32), vs0(F64)], CLAMP | OMOD | NEG | ABS;
    V_CVT_F64_F32 = "v_cvt_f64_f32", Vop1, 0x10, 0x10, [vd(F64), vs0(F32)], CLAMP | OMOD | NEG | ABS;
    V_TRUNC_F64 = "v_trunc_f64", Vop1, 0x17, 0x17, [vd(F64), vs0(F64)], CLAMP | OMOD | NEG | ABS;
    V_CEIL_F64 = "v_ceil_f64", Vop1, 0x18, 0x18, [vd(F64), vs0(F64)], CLAMP | OMOD | NEG | ABS;
    V_RNDNE_F64 = "v_rndne_f64", Vop1, 0x19, 0x19, [vd(F64), vs0(F64)], CLAMP | OMOD | NEG | ABS;
    V_FLOOR_F64 = "v_floor_f64", Vop1, 0x1A, 0x1A, [vd(F64), vs0(F64)], CLAMP | OMOD | NEG | ABS;
    V_RCP_F64 = "v_rcp_f64", Vop1, 0x25, 0x25, [vd(F64), vs0(F64)], CLAMP | OMOD | NEG | ABS;
    V_RSQ_F64 = "v_rsq_f64", Vop1, 0x26, 0x26, [vd(F64), vs0(F64)], CLAMP | OMOD | NEG | ABS;
    V_SQRT_F64 = "v_sqrt_f64", Vop1, 0x28, 0x28, [vd(F64), vs0(F64)], CLAMP | OMOD | NEG | ABS;
    V_FREXP_MANT_F64 = "v_frexp_mant_f64", Vop1, 0x31, 0x31, [vd(F64), vs0(F64)], CLAMP | OMOD | NEG | ABS;
    V_FRACT_F64 = "v_fract_f64", Vop1, 0x32, 0x32, [vd(F64), vs0(F64)], CLAMP | OMOD | NEG | ABS;
    V_FRACT_F32 = "v_fract_f32", Vop1, 0x1B, 0x1B, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_TRUNC_F32 = "v_trunc_f32", Vop1, 0x1C, 0x1C, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_CEIL_F32 = "v_ceil_f32", Vop1, 0x1D, 0x1D, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_RNDNE_F32 = "v_rndne_f32", Vop1, 0x1E, 0x1E, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_FLOOR_F32 = "v_floor_f32", Vop1, 0x1F, 0x1F, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_EXP_F32 = "v_exp_f32", Vop1, 0x20, 0x20, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_LOG_F32 = "v_log_f32", Vop1, 0x21, 0x21, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_RCP_F32 = "v_rcp_f32", Vop1, 0x22, 0x22, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_RCP_IFLAG_F32 = "v_rcp_iflag_f32", Vop1, 0x23, 0x23, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_RSQ_F32 = "v_rsq_f32", Vop1, 0x24, 0x24, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_SQRT_F32 = "v_sqrt_f32", Vop1, 0x27, 0x27, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_SIN_F32 = "v_sin_f32", Vop1, 0x29, 0x29, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_COS_F32 = "v_cos_f32", Vop1, 0x2A, 0x2A, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_FREXP_MANT_F32 = "v_frexp_mant_f32", Vop1, 0x34, 0x34, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_EXP_LEGACY_F32 = "v_exp_legacy_f32", Vop1, 0x4B, 0x4B, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_LOG_LEGACY_F32 = "v_log_legacy_f32", Vop1, 0x4C, 0x4C, [vd(F32), vs0(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_MOV_B64 = "v_mov_b64", Vop1, 0x38, 0x38, [vd(B64), vs0(B64)], NONE;
    V_CVT_F16_U16 = "v_cvt_f16_u16", Vop1, 0x39, 0x39, [vd(F16), vs0(B16)], CLAMP | OMOD | SDWA | DPP;
    V_CVT_F16_I16 = "v_cvt_f16_i16", Vop1, 0x3A, 0x3A, [vd(F16), vs0(B16)], CLAMP | OMOD | SDWA | DPP;
    V_CVT_U16_F16 = "v_cvt_u16_f16", Vop1, 0x3B, 0x3B, [vd(B16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_CVT_I16_F16 = "v_cvt_i16_f16", Vop1, 0x3C, 0x3C, [vd(B16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_FREXP_EXP_I16_F16 = "v_frexp_exp_i16_f16", Vop1, 0x43, 0x43, [vd(B16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_CVT_NORM_I16_F16 = "v_cvt_norm_i16_f16", Vop1, 0x4D, 0x4D, [vd(B16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_CVT_NORM_U16_F16 = "v_cvt_norm_u16_f16", Vop1, 0x4E, 0x4E, [vd(B16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_RCP_F16 = "v_rcp_f16", Vop1, 0x3D, 0x3D, [vd(F16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_SQRT_F16 = "v_sqrt_f16", Vop1, 0x3E, 0x3E, [vd(F16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_RSQ_F16 = "v_rsq_f16", Vop1, 0x3F, 0x3F, [vd(F16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_LOG_F16 = "v_log_f16", Vop1, 0x40, 0x40, [vd(F16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_EXP_F16 = "v_exp_f16", Vop1, 0x41, 0x41, [vd(F16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_FREXP_MANT_F16 = "v_frexp_mant_f16", Vop1, 0x42, 0x42, [vd(F16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_FLOOR_F16 = "v_floor_f16", Vop1, 0x44, 0x44, [vd(F16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_CEIL_F16 = "v_ceil_f16", Vop1, 0x45, 0x45, [vd(F16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_TRUNC_F16 = "v_trunc_f16", Vop1, 0x46, 0x46, [vd(F16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_RNDNE_F16 = "v_rndne_f16", Vop1, 0x47, 0x47, [vd(F16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_FRACT_F16 = "v_fract_f16", Vop1, 0x48, 0x48, [vd(F16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_SIN_F16 = "v_sin_f16", Vop1, 0x49, 0x49, [vd(F16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_COS_F16 = "v_cos_f16", Vop1, 0x4A, 0x4A, [vd(F16), vs0(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_SAT_PK_U8_I16 = "v_sat_pk_u8_i16", Vop1, 0x4F, 0x4F, [vd(B32), vs0(B16)], SDWA | DPP;
    V_SWAP_B32 = "v_swap_b32", Vop1, 0x51, 0x51, [vdrw(B32), vs0_vrw()], NO_E64;
    V_PERMLANE16_SWAP_B32 = "v_permlane16_swap_b32", Vop1, NA, 0x59, [vdrw(B32), vs0_vrw()], NONE;
    V_PERMLANE32_SWAP_B32 = "v_permlane32_swap_b32", Vop1, NA, 0x5A, [vdrw(B32), vs0_vrw()], NONE;
    V_ACCVGPR_MOV_B32 = "v_accvgpr_mov_b32", Vop1, 0x52, 0x52, [vd_a(), vs0_a()], NO_E64;
    V_CVT_F32_FP8 = "v_cvt_f32_fp8", Vop1, 0x54, 0x54, [vd(F32), vs0(B32)], CLAMP | OMOD | SDWA | DPP | SDWA_SRC_ONLY;
    V_CVT_F32_BF8 = "v_cvt_f32_bf8", Vop1, 0x55, 0x55, [vd(F32), vs0(B32)], CLAMP | OMOD | SDWA | DPP | SDWA_SRC_ONLY;
    V_CVT_PK_F32_FP8 = "v_cvt_pk_f32_fp8", Vop1, 0x56, 0x56, [vd(B64), vs0(B32)], CLAMP | OMOD | SDWA | SDWA_SRC_ONLY;
    V_CVT_PK_F32_BF8 = "v_cvt_pk_f32_bf8", Vop1, 0x57, 0x57, [vd(B64), vs0(B32)], CLAMP | OMOD | SDWA | SDWA_SRC_ONLY;
    V_PRNG_B32 = "v_prng_b32", Vop1, NA, 0x58, [vd(B32), vs0(B32)], SDWA | DPP;
    V_CVT_F32_BF16 = "v_cvt_f32_bf16", Vop1, NA, 0x5B, [vd(F32), vs0(BF16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_CNDMASK_B32 = "v_cndmask_b32", Vop2, 0x00, 0x00, [vd(B32), vs0(F32), vs1(F32), cin()], NEG | ABS | SDWA | DPP;
    V_ADD_F32 = "v_add_f32", Vop2, 0x01, 0x01, [vd(F32), vs0(F32), vs1(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_SUB_F32 = "v_sub_f32", Vop2, 0x02, 0x02, [vd(F32), vs0(F32), vs1(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_SUBREV_F32 = "v_subrev_f32", Vop2, 0x03, 0x03, [vd(F32), vs0(F32), vs1(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_MUL_LEGACY_F32 = "v_mul_legacy_f32", Vop3, 0x2A1, 0x2A1, [vd(F32), vs0(F32), vs1(F32)], CLAMP | OMOD | NEG | ABS;
    V_MUL_F32 = "v_mul_f32", Vop2, 0x05, 0x05, [vd(F32), vs0(F32), vs1(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_MIN_F32 = "v_min_f32", Vop2, 0x0A, 0x0A, [vd(F32), vs0(F32), vs1(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_MAX_F32 = "v_max_f32", Vop2, 0x0B, 0x0B, [vd(F32), vs0(F32), vs1(F32)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_LDEXP_F32 = "v_ldexp_f32", Vop3, 0x288, 0x288, [vd(F32), vs0(F32), vs1(B32)], CLAMP | OMOD | NEG | ABS;
    V_MUL_I32_I24 = "v_mul_i32_i24", Vop2, 0x06, 0x06, [vd(B32), vs0(B32), vs1(B32)], CLAMP | SDWA | DPP;
    V_MUL_HI_I32_I24 = "v_mul_hi_i32_i24", Vop2, 0x07, 0x07, [vd(B32), vs0(B32), vs1(B32)], SDWA | DPP;
    V_MUL_U32_U24 = "v_mul_u32_u24", Vop2, 0x08, 0x08, [vd(B32), vs0(B32), vs1(B32)], CLAMP | SDWA | DPP;
    V_MUL_HI_U32_U24 = "v_mul_hi_u32_u24", Vop2, 0x09, 0x09, [vd(B32), vs0(B32), vs1(B32)], SDWA | DPP;
    V_MIN_I32 = "v_min_i32", Vop2, 0x0C, 0x0C, [vd(B32), vs0(B32), vs1(B32)], SDWA | DPP;
    V_MAX_I32 = "v_max_i32", Vop2, 0x0D, 0x0D, [vd(B32), vs0(B32), vs1(B32)], SDWA | DPP;
    V_MIN_U32 = "v_min_u32", Vop2, 0x0E, 0x0E, [vd(B32), vs0(B32), vs1(B32)], SDWA | DPP;
    V_MAX_U32 = "v_max_u32", Vop2, 0x0F, 0x0F, [vd(B32), vs0(B32), vs1(B32)], SDWA | DPP;
    V_LSHRREV_B32 = "v_lshrrev_b32", Vop2, 0x10, 0x10, [vd(B32), vs0(B32), vs1(B32)], SDWA | DPP;
    V_ASHRREV_I32 = "v_ashrrev_i32", Vop2, 0x11, 0x11, [vd(B32), vs0(B32), vs1(B32)], SDWA | DPP;
    V_LSHLREV_B32 = "v_lshlrev_b32", Vop2, 0x12, 0x12, [vd(B32), vs0(B32), vs1(B32)], SDWA | DPP;
    V_AND_B32 = "v_and_b32", Vop2, 0x13, 0x13, [vd(B32), vs0(B32), vs1(B32)], SDWA | DPP;
    V_OR_B32 = "v_or_b32", Vop2, 0x14, 0x14, [vd(B32), vs0(B32), vs1(B32)], SDWA | DPP;
    V_XOR_B32 = "v_xor_b32", Vop2, 0x15, 0x15, [vd(B32), vs0(B32), vs1(B32)], SDWA | DPP;
    V_ADD_U32 = "v_add_u32", Vop2, 0x34, 0x34, [vd(B32), vs0(B32), vs1(B32)], CLAMP | SDWA | DPP;
    V_SUB_U32 = "v_sub_u32", Vop2, 0x35, 0x35, [vd(B32), vs0(B32), vs1(B32)], CLAMP | SDWA | DPP;
    V_SUBREV_U32 = "v_subrev_u32", Vop2, 0x36, 0x36, [vd(B32), vs0(B32), vs1(B32)], CLAMP | SDWA | DPP;
    V_XNOR_B32 = "v_xnor_b32", Vop2, 0x3D, 0x3D, [vd(B32), vs0(B32), vs1(B32)], SDWA | DPP;
    V_FMAC_F32 = "v_fmac_f32", Vop2, 0x3B, 0x3B, [vdrw(F32), vs0(F32), vs1(F32)], CLAMP | OMOD | NEG | ABS | DPP;
    V_FMAC_F64 = "v_fmac_f64", Vop2, 0x04, 0x04, [vdrw(F64), vs0(F64), vs1(F64)], CLAMP | OMOD | NEG | ABS;
    V_FMAMK_F32 = "v_fmamk_f32", Vop2, 0x17, 0x17, [vd(F32), vs0(F32), kimm(F32), vs1(F32)], NO_E64;
    V_FMAAK_F32 = "v_fmaak_f32", Vop2, 0x18, 0x18, [vd(F32), vs0(F32), vs1(F32), kimm(F32)], NO_E64;
    V_ADD_CO_U32 = "v_add_co_u32", Vop2, 0x19, 0x19, [vd(B32), sdc(), vs0(B32), vs1(B32)], CLAMP | SDWA | DPP;
    V_SUB_CO_U32 = "v_sub_co_u32", Vop2, 0x1A, 0x1A, [vd(B32), sdc(), vs0(B32), vs1(B32)], CLAMP | SDWA | DPP;
    V_SUBREV_CO_U32 = "v_subrev_co_u32", Vop2, 0x1B, 0x1B, [vd(B32), sdc(), vs0(B32), vs1(B32)], CLAMP | SDWA | DPP;
    V_ADDC_CO_U32 = "v_addc_co_u32", Vop2, 0x1C, 0x1C, [vd(B32), sdc(), vs0(B32), vs1(B32), cin()], CLAMP | SDWA | DPP;
    V_SUBB_CO_U32 = "v_subb_co_u32", Vop2, 0x1D, 0x1D, [vd(B32), sdc(), vs0(B32), vs1(B32), cin()], CLAMP | SDWA | DPP;
    V_SUBBREV_CO_U32 = "v_subbrev_co_u32", Vop2, 0x1E, 0x1E, [vd(B32), sdc(), vs0(B32), vs1(B32), cin()], CLAMP | SDWA | DPP;
    V_ADD_F16 = "v_add_f16", Vop2, 0x1F, 0x1F, [vd(F16), vs0(F16), vs1(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_SUB_F16 = "v_sub_f16", Vop2, 0x20, 0x20, [vd(F16), vs0(F16), vs1(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_SUBREV_F16 = "v_subrev_f16", Vop2, 0x21, 0x21, [vd(F16), vs0(F16), vs1(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_MUL_F16 = "v_mul_f16", Vop2, 0x22, 0x22, [vd(F16), vs0(F16), vs1(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_MAX_F16 = "v_max_f16", Vop2, 0x2D, 0x2D, [vd(F16), vs0(F16), vs1(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_MIN_F16 = "v_min_f16", Vop2, 0x2E, 0x2E, [vd(F16), vs0(F16), vs1(F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_LDEXP_F16 = "v_ldexp_f16", Vop2, 0x33, 0x33, [vd(F16), vs0(F16), vs1(B16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_MAC_F16 = "v_mac_f16", Vop2, 0x23, 0x23, [vdrw(F16), vs0(F16), vs1(F16)], CLAMP | OMOD | NEG | ABS | DPP;
    V_MADMK_F16 = "v_madmk_f16", Vop2, 0x24, 0x24, [vd(F16), vs0(F16), kimm(F16), vs1(F16)], NO_E64;
    V_MADAK_F16 = "v_madak_f16", Vop2, 0x25, 0x25, [vd(F16), vs0(F16), vs1(F16), kimm(F16)], NO_E64;
    V_ADD_U16 = "v_add_u16", Vop2, 0x26, 0x26, [vd(B16), vs0(B16), vs1(B16)], CLAMP | SDWA | DPP;
    V_SUB_U16 = "v_sub_u16", Vop2, 0x27, 0x27, [vd(B16), vs0(B16), vs1(B16)], CLAMP | SDWA | DPP;
    V_SUBREV_U16 = "v_subrev_u16", Vop2, 0x28, 0x28, [vd(B16), vs0(B16), vs1(B16)], CLAMP | SDWA | DPP;
    V_MUL_LO_U16 = "v_mul_lo_u16", Vop2, 0x29, 0x29, [vd(B16), vs0(B16), vs1(B16)], SDWA | DPP;
    V_LSHLREV_B16 = "v_lshlrev_b16", Vop2, 0x2A, 0x2A, [vd(B16), vs0(B16), vs1(B16)], SDWA | DPP;
    V_LSHRREV_B16 = "v_lshrrev_b16", Vop2, 0x2B, 0x2B, [vd(B16), vs0(B16), vs1(B16)], SDWA | DPP;
    V_ASHRREV_I16 = "v_ashrrev_i16", Vop2, 0x2C, 0x2C, [vd(B16), vs0(B16), vs1(B16)], SDWA | DPP;
    V_MAX_U16 = "v_max_u16", Vop2, 0x2F, 0x2F, [vd(B16), vs0(B16), vs1(B16)], SDWA | DPP;
    V_MAX_I16 = "v_max_i16", Vop2, 0x30, 0x30, [vd(B16), vs0(B16), vs1(B16)], SDWA | DPP;
    V_MIN_U16 = "v_min_u16", Vop2, 0x31, 0x31, [vd(B16), vs0(B16), vs1(B16)], SDWA | DPP;
    V_MIN_I16 = "v_min_i16", Vop2, 0x32, 0x32, [vd(B16), vs0(B16), vs1(B16)], SDWA | DPP;
    V_DOT2C_F32_F16 = "v_dot2c_f32_f16", Vop2, 0x37, 0x37, [vdrw(F32), vs0(V2F16), vs1(V2F16)], CLAMP | OMOD | NEG | ABS | DPP;
    V_DOT2C_F32_BF16 = "v_dot2c_f32_bf16", Vop2, NA, 0x16, [vdrw(F32), vs0(V2BF16), vs1(V2BF16)], CLAMP | OMOD | NEG | ABS | DPP;
    V_DOT2C_I32_I16 = "v_dot2c_i32_i16", Vop2, 0x38, 0x38, [vdrw(B32), vs0(B32), vs1(B32)], CLAMP | DPP;
    V_DOT4C_I32_I8 = "v_dot4c_i32_i8", Vop2, 0x39, 0x39, [vdrw(B32), vs0(B32), vs1(B32)], CLAMP | DPP;
    V_DOT8C_I32_I4 = "v_dot8c_i32_i4", Vop2, 0x3A, 0x3A, [vdrw(B32), vs0(B32), vs1(B32)], CLAMP | DPP;
    V_PK_FMAC_F16 = "v_pk_fmac_f16", Vop2, 0x3C, 0x3C, [vdrw(V2F16), vs0(V2F16), vs1(V2F16)], CLAMP | OMOD | NEG | ABS | SDWA | DPP;
    V_CMP_CLASS_F16 = "v_cmp_class_f16", Vopc, 0x14, 0x14, [sdc(), vs0(F16), vs1(B32)], NEG | ABS | SDWA;
    V_CMPX_CLASS_F16 = "v_cmpx_class_f16", Vopc, 0x15, 0x15, [sdc(), vs0(F16), vs1(B32)], NEG | ABS | SDWA;
    V_CMP_CLASS_F32 = "v_cmp_class_f32", Vopc, 0x10, 0x10, [sdc(), vs0(F32), vs1(B32)], NEG | ABS | SDWA;
    V_CMPX_CLASS_F32 = "v_cmpx_class_f32", Vopc, 0x11, 0x11, [sdc(), vs0(F32), vs1(B32)], NEG | ABS | SDWA;
    V_CMP_CLASS_F64 = "v_cmp_class_f64", Vopc, 0x12, 0x12, [sdc(), vs0(F64), vs1(B32)], NEG | ABS;
    V_CMPX_CLASS_F64 = "v_cmpx_class_f64", Vopc, 0x13, 0x13, [sdc(), vs0(F64), vs1(B32)], NEG | ABS;
    V_CMP_F_F16 = "v_cmp_f_f16", Vopc, 0x20, 0x20, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_LT_F16 = "v_cmp_lt_f16", Vopc, 0x21, 0x21, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_EQ_F16 = "v_cmp_eq_f16", Vopc, 0x22, 0x22, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_LE_F16 = "v_cmp_le_f16", Vopc, 0x23, 0x23, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_GT_F16 = "v_cmp_gt_f16", Vopc, 0x24, 0x24, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_LG_F16 = "v_cmp_lg_f16", Vopc, 0x25, 0x25, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_GE_F16 = "v_cmp_ge_f16", Vopc, 0x26, 0x26, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_O_F16 = "v_cmp_o_f16", Vopc, 0x27, 0x27, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_U_F16 = "v_cmp_u_f16", Vopc, 0x28, 0x28, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_NGE_F16 = "v_cmp_nge_f16", Vopc, 0x29, 0x29, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_NLG_F16 = "v_cmp_nlg_f16", Vopc, 0x2A, 0x2A, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_NGT_F16 = "v_cmp_ngt_f16", Vopc, 0x2B, 0x2B, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_NLE_F16 = "v_cmp_nle_f16", Vopc, 0x2C, 0x2C, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_NEQ_F16 = "v_cmp_neq_f16", Vopc, 0x2D, 0x2D, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_NLT_F16 = "v_cmp_nlt_f16", Vopc, 0x2E, 0x2E, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_TRU_F16 = "v_cmp_tru_f16", Vopc, 0x2F, 0x2F, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMP_F_F32 = "v_cmp_f_f32", Vopc, 0x40, 0x40, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_LT_F32 = "v_cmp_lt_f32", Vopc, 0x41, 0x41, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_EQ_F32 = "v_cmp_eq_f32", Vopc, 0x42, 0x42, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_LE_F32 = "v_cmp_le_f32", Vopc, 0x43, 0x43, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_GT_F32 = "v_cmp_gt_f32", Vopc, 0x44, 0x44, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_LG_F32 = "v_cmp_lg_f32", Vopc, 0x45, 0x45, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_GE_F32 = "v_cmp_ge_f32", Vopc, 0x46, 0x46, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_O_F32 = "v_cmp_o_f32", Vopc, 0x47, 0x47, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_U_F32 = "v_cmp_u_f32", Vopc, 0x48, 0x48, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_NGE_F32 = "v_cmp_nge_f32", Vopc, 0x49, 0x49, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_NLG_F32 = "v_cmp_nlg_f32", Vopc, 0x4A, 0x4A, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_NGT_F32 = "v_cmp_ngt_f32", Vopc, 0x4B, 0x4B, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_NLE_F32 = "v_cmp_nle_f32", Vopc, 0x4C, 0x4C, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_NEQ_F32 = "v_cmp_neq_f32", Vopc, 0x4D, 0x4D, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_NLT_F32 = "v_cmp_nlt_f32", Vopc, 0x4E, 0x4E, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_TRU_F32 = "v_cmp_tru_f32", Vopc, 0x4F, 0x4F, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMP_F_F64 = "v_cmp_f_f64", Vopc, 0x60, 0x60, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_LT_F64 = "v_cmp_lt_f64", Vopc, 0x61, 0x61, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_EQ_F64 = "v_cmp_eq_f64", Vopc, 0x62, 0x62, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_LE_F64 = "v_cmp_le_f64", Vopc, 0x63, 0x63, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_GT_F64 = "v_cmp_gt_f64", Vopc, 0x64, 0x64, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_LG_F64 = "v_cmp_lg_f64", Vopc, 0x65, 0x65, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_GE_F64 = "v_cmp_ge_f64", Vopc, 0x66, 0x66, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_O_F64 = "v_cmp_o_f64", Vopc, 0x67, 0x67, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_U_F64 = "v_cmp_u_f64", Vopc, 0x68, 0x68, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_NGE_F64 = "v_cmp_nge_f64", Vopc, 0x69, 0x69, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_NLG_F64 = "v_cmp_nlg_f64", Vopc, 0x6A, 0x6A, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_NGT_F64 = "v_cmp_ngt_f64", Vopc, 0x6B, 0x6B, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_NLE_F64 = "v_cmp_nle_f64", Vopc, 0x6C, 0x6C, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_NEQ_F64 = "v_cmp_neq_f64", Vopc, 0x6D, 0x6D, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_NLT_F64 = "v_cmp_nlt_f64", Vopc, 0x6E, 0x6E, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_TRU_F64 = "v_cmp_tru_f64", Vopc, 0x6F, 0x6F, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_F_F16 = "v_cmpx_f_f16", Vopc, 0x30, 0x30, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_LT_F16 = "v_cmpx_lt_f16", Vopc, 0x31, 0x31, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_EQ_F16 = "v_cmpx_eq_f16", Vopc, 0x32, 0x32, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_LE_F16 = "v_cmpx_le_f16", Vopc, 0x33, 0x33, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_GT_F16 = "v_cmpx_gt_f16", Vopc, 0x34, 0x34, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_LG_F16 = "v_cmpx_lg_f16", Vopc, 0x35, 0x35, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_GE_F16 = "v_cmpx_ge_f16", Vopc, 0x36, 0x36, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_O_F16 = "v_cmpx_o_f16", Vopc, 0x37, 0x37, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_U_F16 = "v_cmpx_u_f16", Vopc, 0x38, 0x38, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_NGE_F16 = "v_cmpx_nge_f16", Vopc, 0x39, 0x39, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_NLG_F16 = "v_cmpx_nlg_f16", Vopc, 0x3A, 0x3A, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_NGT_F16 = "v_cmpx_ngt_f16", Vopc, 0x3B, 0x3B, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_NLE_F16 = "v_cmpx_nle_f16", Vopc, 0x3C, 0x3C, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_NEQ_F16 = "v_cmpx_neq_f16", Vopc, 0x3D, 0x3D, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_NLT_F16 = "v_cmpx_nlt_f16", Vopc, 0x3E, 0x3E, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_TRU_F16 = "v_cmpx_tru_f16", Vopc, 0x3F, 0x3F, [sdc(), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_F_F32 = "v_cmpx_f_f32", Vopc, 0x50, 0x50, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_LT_F32 = "v_cmpx_lt_f32", Vopc, 0x51, 0x51, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_EQ_F32 = "v_cmpx_eq_f32", Vopc, 0x52, 0x52, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_LE_F32 = "v_cmpx_le_f32", Vopc, 0x53, 0x53, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_GT_F32 = "v_cmpx_gt_f32", Vopc, 0x54, 0x54, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_LG_F32 = "v_cmpx_lg_f32", Vopc, 0x55, 0x55, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_GE_F32 = "v_cmpx_ge_f32", Vopc, 0x56, 0x56, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_O_F32 = "v_cmpx_o_f32", Vopc, 0x57, 0x57, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_U_F32 = "v_cmpx_u_f32", Vopc, 0x58, 0x58, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_NGE_F32 = "v_cmpx_nge_f32", Vopc, 0x59, 0x59, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_NLG_F32 = "v_cmpx_nlg_f32", Vopc, 0x5A, 0x5A, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_NGT_F32 = "v_cmpx_ngt_f32", Vopc, 0x5B, 0x5B, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_NLE_F32 = "v_cmpx_nle_f32", Vopc, 0x5C, 0x5C, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_NEQ_F32 = "v_cmpx_neq_f32", Vopc, 0x5D, 0x5D, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_NLT_F32 = "v_cmpx_nlt_f32", Vopc, 0x5E, 0x5E, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_TRU_F32 = "v_cmpx_tru_f32", Vopc, 0x5F, 0x5F, [sdc(), vs0(F32), vs1(F32)], CLAMP | NEG | ABS | SDWA;
    V_CMPX_F_F64 = "v_cmpx_f_f64", Vopc, 0x70, 0x70, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_LT_F64 = "v_cmpx_lt_f64", Vopc, 0x71, 0x71, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_EQ_F64 = "v_cmpx_eq_f64", Vopc, 0x72, 0x72, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_LE_F64 = "v_cmpx_le_f64", Vopc, 0x73, 0x73, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_GT_F64 = "v_cmpx_gt_f64", Vopc, 0x74, 0x74, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_LG_F64 = "v_cmpx_lg_f64", Vopc, 0x75, 0x75, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_GE_F64 = "v_cmpx_ge_f64", Vopc, 0x76, 0x76, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_O_F64 = "v_cmpx_o_f64", Vopc, 0x77, 0x77, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_U_F64 = "v_cmpx_u_f64", Vopc, 0x78, 0x78, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_NGE_F64 = "v_cmpx_nge_f64", Vopc, 0x79, 0x79, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_NLG_F64 = "v_cmpx_nlg_f64", Vopc, 0x7A, 0x7A, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_NGT_F64 = "v_cmpx_ngt_f64", Vopc, 0x7B, 0x7B, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_NLE_F64 = "v_cmpx_nle_f64", Vopc, 0x7C, 0x7C, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_NEQ_F64 = "v_cmpx_neq_f64", Vopc, 0x7D, 0x7D, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_NLT_F64 = "v_cmpx_nlt_f64", Vopc, 0x7E, 0x7E, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMPX_TRU_F64 = "v_cmpx_tru_f64", Vopc, 0x7F, 0x7F, [sdc(), vs0(F64), vs1(F64)], CLAMP | NEG | ABS;
    V_CMP_F_I16 = "v_cmp_f_i16", Vopc, 0xA0, 0xA0, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_LT_I16 = "v_cmp_lt_i16", Vopc, 0xA1, 0xA1, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_EQ_I16 = "v_cmp_eq_i16", Vopc, 0xA2, 0xA2, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_LE_I16 = "v_cmp_le_i16", Vopc, 0xA3, 0xA3, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_GT_I16 = "v_cmp_gt_i16", Vopc, 0xA4, 0xA4, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_NE_I16 = "v_cmp_ne_i16", Vopc, 0xA5, 0xA5, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_GE_I16 = "v_cmp_ge_i16", Vopc, 0xA6, 0xA6, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_T_I16 = "v_cmp_t_i16", Vopc, 0xA7, 0xA7, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_F_U16 = "v_cmp_f_u16", Vopc, 0xA8, 0xA8, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_LT_U16 = "v_cmp_lt_u16", Vopc, 0xA9, 0xA9, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_EQ_U16 = "v_cmp_eq_u16", Vopc, 0xAA, 0xAA, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_LE_U16 = "v_cmp_le_u16", Vopc, 0xAB, 0xAB, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_GT_U16 = "v_cmp_gt_u16", Vopc, 0xAC, 0xAC, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_NE_U16 = "v_cmp_ne_u16", Vopc, 0xAD, 0xAD, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_GE_U16 = "v_cmp_ge_u16", Vopc, 0xAE, 0xAE, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_T_U16 = "v_cmp_t_u16", Vopc, 0xAF, 0xAF, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMP_F_I32 = "v_cmp_f_i32", Vopc, 0xC0, 0xC0, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_LT_I32 = "v_cmp_lt_i32", Vopc, 0xC1, 0xC1, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_EQ_I32 = "v_cmp_eq_i32", Vopc, 0xC2, 0xC2, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_LE_I32 = "v_cmp_le_i32", Vopc, 0xC3, 0xC3, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_GT_I32 = "v_cmp_gt_i32", Vopc, 0xC4, 0xC4, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_NE_I32 = "v_cmp_ne_i32", Vopc, 0xC5, 0xC5, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_GE_I32 = "v_cmp_ge_i32", Vopc, 0xC6, 0xC6, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_T_I32 = "v_cmp_t_i32", Vopc, 0xC7, 0xC7, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_F_U32 = "v_cmp_f_u32", Vopc, 0xC8, 0xC8, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_LT_U32 = "v_cmp_lt_u32", Vopc, 0xC9, 0xC9, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_EQ_U32 = "v_cmp_eq_u32", Vopc, 0xCA, 0xCA, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_LE_U32 = "v_cmp_le_u32", Vopc, 0xCB, 0xCB, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_GT_U32 = "v_cmp_gt_u32", Vopc, 0xCC, 0xCC, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_NE_U32 = "v_cmp_ne_u32", Vopc, 0xCD, 0xCD, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_GE_U32 = "v_cmp_ge_u32", Vopc, 0xCE, 0xCE, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_T_U32 = "v_cmp_t_u32", Vopc, 0xCF, 0xCF, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMP_F_I64 = "v_cmp_f_i64", Vopc, 0xE0, 0xE0, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_LT_I64 = "v_cmp_lt_i64", Vopc, 0xE1, 0xE1, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_EQ_I64 = "v_cmp_eq_i64", Vopc, 0xE2, 0xE2, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_LE_I64 = "v_cmp_le_i64", Vopc, 0xE3, 0xE3, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_GT_I64 = "v_cmp_gt_i64", Vopc, 0xE4, 0xE4, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_NE_I64 = "v_cmp_ne_i64", Vopc, 0xE5, 0xE5, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_GE_I64 = "v_cmp_ge_i64", Vopc, 0xE6, 0xE6, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_T_I64 = "v_cmp_t_i64", Vopc, 0xE7, 0xE7, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_F_U64 = "v_cmp_f_u64", Vopc, 0xE8, 0xE8, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_LT_U64 = "v_cmp_lt_u64", Vopc, 0xE9, 0xE9, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_EQ_U64 = "v_cmp_eq_u64", Vopc, 0xEA, 0xEA, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_LE_U64 = "v_cmp_le_u64", Vopc, 0xEB, 0xEB, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_GT_U64 = "v_cmp_gt_u64", Vopc, 0xEC, 0xEC, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_NE_U64 = "v_cmp_ne_u64", Vopc, 0xED, 0xED, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_GE_U64 = "v_cmp_ge_u64", Vopc, 0xEE, 0xEE, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMP_T_U64 = "v_cmp_t_u64", Vopc, 0xEF, 0xEF, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_F_I16 = "v_cmpx_f_i16", Vopc, 0xB0, 0xB0, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_LT_I16 = "v_cmpx_lt_i16", Vopc, 0xB1, 0xB1, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_EQ_I16 = "v_cmpx_eq_i16", Vopc, 0xB2, 0xB2, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_LE_I16 = "v_cmpx_le_i16", Vopc, 0xB3, 0xB3, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_GT_I16 = "v_cmpx_gt_i16", Vopc, 0xB4, 0xB4, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_NE_I16 = "v_cmpx_ne_i16", Vopc, 0xB5, 0xB5, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_GE_I16 = "v_cmpx_ge_i16", Vopc, 0xB6, 0xB6, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_T_I16 = "v_cmpx_t_i16", Vopc, 0xB7, 0xB7, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_F_U16 = "v_cmpx_f_u16", Vopc, 0xB8, 0xB8, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_LT_U16 = "v_cmpx_lt_u16", Vopc, 0xB9, 0xB9, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_EQ_U16 = "v_cmpx_eq_u16", Vopc, 0xBA, 0xBA, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_LE_U16 = "v_cmpx_le_u16", Vopc, 0xBB, 0xBB, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_GT_U16 = "v_cmpx_gt_u16", Vopc, 0xBC, 0xBC, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_NE_U16 = "v_cmpx_ne_u16", Vopc, 0xBD, 0xBD, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_GE_U16 = "v_cmpx_ge_u16", Vopc, 0xBE, 0xBE, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_T_U16 = "v_cmpx_t_u16", Vopc, 0xBF, 0xBF, [sdc(), vs0(B16), vs1(B16)], SDWA;
    V_CMPX_F_I32 = "v_cmpx_f_i32", Vopc, 0xD0, 0xD0, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_LT_I32 = "v_cmpx_lt_i32", Vopc, 0xD1, 0xD1, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_EQ_I32 = "v_cmpx_eq_i32", Vopc, 0xD2, 0xD2, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_LE_I32 = "v_cmpx_le_i32", Vopc, 0xD3, 0xD3, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_GT_I32 = "v_cmpx_gt_i32", Vopc, 0xD4, 0xD4, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_NE_I32 = "v_cmpx_ne_i32", Vopc, 0xD5, 0xD5, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_GE_I32 = "v_cmpx_ge_i32", Vopc, 0xD6, 0xD6, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_T_I32 = "v_cmpx_t_i32", Vopc, 0xD7, 0xD7, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_F_U32 = "v_cmpx_f_u32", Vopc, 0xD8, 0xD8, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_LT_U32 = "v_cmpx_lt_u32", Vopc, 0xD9, 0xD9, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_EQ_U32 = "v_cmpx_eq_u32", Vopc, 0xDA, 0xDA, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_LE_U32 = "v_cmpx_le_u32", Vopc, 0xDB, 0xDB, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_GT_U32 = "v_cmpx_gt_u32", Vopc, 0xDC, 0xDC, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_NE_U32 = "v_cmpx_ne_u32", Vopc, 0xDD, 0xDD, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_GE_U32 = "v_cmpx_ge_u32", Vopc, 0xDE, 0xDE, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_T_U32 = "v_cmpx_t_u32", Vopc, 0xDF, 0xDF, [sdc(), vs0(B32), vs1(B32)], SDWA;
    V_CMPX_F_I64 = "v_cmpx_f_i64", Vopc, 0xF0, 0xF0, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_LT_I64 = "v_cmpx_lt_i64", Vopc, 0xF1, 0xF1, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_EQ_I64 = "v_cmpx_eq_i64", Vopc, 0xF2, 0xF2, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_LE_I64 = "v_cmpx_le_i64", Vopc, 0xF3, 0xF3, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_GT_I64 = "v_cmpx_gt_i64", Vopc, 0xF4, 0xF4, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_NE_I64 = "v_cmpx_ne_i64", Vopc, 0xF5, 0xF5, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_GE_I64 = "v_cmpx_ge_i64", Vopc, 0xF6, 0xF6, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_T_I64 = "v_cmpx_t_i64", Vopc, 0xF7, 0xF7, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_F_U64 = "v_cmpx_f_u64", Vopc, 0xF8, 0xF8, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_LT_U64 = "v_cmpx_lt_u64", Vopc, 0xF9, 0xF9, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_EQ_U64 = "v_cmpx_eq_u64", Vopc, 0xFA, 0xFA, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_LE_U64 = "v_cmpx_le_u64", Vopc, 0xFB, 0xFB, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_GT_U64 = "v_cmpx_gt_u64", Vopc, 0xFC, 0xFC, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_NE_U64 = "v_cmpx_ne_u64", Vopc, 0xFD, 0xFD, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_GE_U64 = "v_cmpx_ge_u64", Vopc, 0xFE, 0xFE, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_CMPX_T_U64 = "v_cmpx_t_u64", Vopc, 0xFF, 0xFF, [sdc(), vs0(B64), vs1(B64)], NONE;
    V_FMA_F32 = "v_fma_f32", Vop3, 0x1CB, 0x1CB, [vd(F32), vs0(F32), vs1(F32), vs2(F32)], CLAMP | OMOD | NEG | ABS;
    V_MIN3_F32 = "v_min3_f32", Vop3, 0x1D0, 0x1D0, [vd(F32), vs0(F32), vs1(F32), vs2(F32)], CLAMP | OMOD | NEG | ABS;
    V_MAX3_F32 = "v_max3_f32", Vop3, 0x1D3, 0x1D3, [vd(F32), vs0(F32), vs1(F32), vs2(F32)], CLAMP | OMOD | NEG | ABS;
    V_MED3_F32 = "v_med3_f32", Vop3, 0x1D6, 0x1D6, [vd(F32), vs0(F32), vs1(F32), vs2(F32)], CLAMP | OMOD | NEG | ABS;
    V_DIV_FIXUP_F32 = "v_div_fixup_f32", Vop3, 0x1DE, 0x1DE, [vd(F32), vs0(F32), vs1(F32), vs2(F32)], CLAMP | OMOD | NEG | ABS;
    V_DIV_FMAS_F32 = "v_div_fmas_f32", Vop3, 0x1E2, 0x1E2, [vd(F32), vs0(F32), vs1(F32), vs2(F32)], CLAMP | OMOD | NEG | ABS | READS_VCC;
    V_FMA_F64 = "v_fma_f64", Vop3, 0x1CC, 0x1CC, [vd(F64), vs0(F64), vs1(F64), vs2(F64)], CLAMP | OMOD | NEG | ABS;
    V_DIV_FIXUP_F64 = "v_div_fixup_f64", Vop3, 0x1DF, 0x1DF, [vd(F64), vs0(F64), vs1(F64), vs2(F64)], CLAMP | OMOD | NEG | ABS;
    V_DIV_FMAS_F64 = "v_div_fmas_f64", Vop3, 0x1E3, 0x1E3, [vd(F64), vs0(F64), vs1(F64), vs2(F64)], CLAMP | OMOD | NEG | ABS | READS_VCC;
    V_MAD_I32_I24 = "v_mad_i32_i24", Vop3, 0x1C2, 0x1C2, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP;
    V_MAD_U32_U24 = "v_mad_u32_u24", Vop3, 0x1C3, 0x1C3, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP;
    V_BFE_U32 = "v_bfe_u32", Vop3, 0x1C8, 0x1C8, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_BFE_I32 = "v_bfe_i32", Vop3, 0x1C9, 0x1C9, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_BFI_B32 = "v_bfi_b32", Vop3, 0x1CA, 0x1CA, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_LERP_U8 = "v_lerp_u8", Vop3, 0x1CD, 0x1CD, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_ALIGNBIT_B32 = "v_alignbit_b32", Vop3, 0x1CE, 0x1CE, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP | OPSEL;
    V_ALIGNBYTE_B32 = "v_alignbyte_b32", Vop3, 0x1CF, 0x1CF, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP | OPSEL;
    V_MIN3_I32 = "v_min3_i32", Vop3, 0x1D1, 0x1D1, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_MIN3_U32 = "v_min3_u32", Vop3, 0x1D2, 0x1D2, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_MAX3_I32 = "v_max3_i32", Vop3, 0x1D4, 0x1D4, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_MAX3_U32 = "v_max3_u32", Vop3, 0x1D5, 0x1D5, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_MED3_I32 = "v_med3_i32", Vop3, 0x1D7, 0x1D7, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_MED3_U32 = "v_med3_u32", Vop3, 0x1D8, 0x1D8, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_SAD_U8 = "v_sad_u8", Vop3, 0x1D9, 0x1D9, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP;
    V_SAD_HI_U8 = "v_sad_hi_u8", Vop3, 0x1DA, 0x1DA, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP;
    V_SAD_U16 = "v_sad_u16", Vop3, 0x1DB, 0x1DB, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP;
    V_SAD_U32 = "v_sad_u32", Vop3, 0x1DC, 0x1DC, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP;
    V_MSAD_U8 = "v_msad_u8", Vop3, 0x1E4, 0x1E4, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP;
    V_PERM_B32 = "v_perm_b32", Vop3, 0x1ED, 0x1ED, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_MAD_U32_U16 = "v_mad_u32_u16", Vop3, 0x1F1, 0x1F1, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP | OPSEL;
    V_MAD_I32_I16 = "v_mad_i32_i16", Vop3, 0x1F2, 0x1F2, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP | OPSEL;
    V_XAD_U32 = "v_xad_u32", Vop3, 0x1F3, 0x1F3, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_LSHL_ADD_U32 = "v_lshl_add_u32", Vop3, 0x1FD, 0x1FD, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_ADD_LSHL_U32 = "v_add_lshl_u32", Vop3, 0x1FE, 0x1FE, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_ADD3_U32 = "v_add3_u32", Vop3, 0x1FF, 0x1FF, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_LSHL_OR_B32 = "v_lshl_or_b32", Vop3, 0x200, 0x200, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_AND_OR_B32 = "v_and_or_b32", Vop3, 0x201, 0x201, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_OR3_B32 = "v_or3_b32", Vop3, 0x202, 0x202, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], NONE;
    V_BITOP3_B32 = "v_bitop3_b32", Vop3, NA, 0x234, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], BITOP3;
    V_CVT_PK_U8_F32 = "v_cvt_pk_u8_f32", Vop3, 0x1DD, 0x1DD, [vd(B32), vs0(F32), vs1(B32), vs2(B32)], CLAMP | NEG | ABS;
    V_MAD_LEGACY_F16 = "v_mad_legacy_f16", Vop3, 0x1EA, 0x1EA, [vd(F16), vs0(F16), vs1(F16), vs2(F16)], CLAMP | OMOD | NEG | ABS;
    V_FMA_LEGACY_F16 = "v_fma_legacy_f16", Vop3, 0x1EE, 0x1EE, [vd(F16), vs0(F16), vs1(F16), vs2(F16)], CLAMP | OMOD | NEG | ABS;
    V_DIV_FIXUP_LEGACY_F16 = "v_div_fixup_legacy_f16", Vop3, 0x1EF, 0x1EF, [vd(F16), vs0(F16), vs1(F16), vs2(F16)], CLAMP | OMOD | NEG | ABS;
    V_MIN3_F16 = "v_min3_f16", Vop3, 0x1F4, 0x1F4, [vd(F16), vs0(F16), vs1(F16), vs2(F16)], CLAMP | OMOD | NEG | ABS | OPSEL;
    V_MAX3_F16 = "v_max3_f16", Vop3, 0x1F7, 0x1F7, [vd(F16), vs0(F16), vs1(F16), vs2(F16)], CLAMP | OMOD | NEG | ABS | OPSEL;
    V_MED3_F16 = "v_med3_f16", Vop3, 0x1FA, 0x1FA, [vd(F16), vs0(F16), vs1(F16), vs2(F16)], CLAMP | OMOD | NEG | ABS | OPSEL;
    V_MAD_F16 = "v_mad_f16", Vop3, 0x203, 0x203, [vd(F16), vs0(F16), vs1(F16), vs2(F16)], CLAMP | OMOD | NEG | ABS | OPSEL;
    V_FMA_F16 = "v_fma_f16", Vop3, 0x206, 0x206, [vd(F16), vs0(F16), vs1(F16), vs2(F16)], CLAMP | OMOD | NEG | ABS | OPSEL;
    V_DIV_FIXUP_F16 = "v_div_fixup_f16", Vop3, 0x207, 0x207, [vd(F16), vs0(F16), vs1(F16), vs2(F16)], CLAMP | OMOD | NEG | ABS | OPSEL;
    V_MAD_LEGACY_U16 = "v_mad_legacy_u16", Vop3, 0x1EB, 0x1EB, [vd(B16), vs0(B16), vs1(B16), vs2(B16)], CLAMP;
    V_MAD_LEGACY_I16 = "v_mad_legacy_i16", Vop3, 0x1EC, 0x1EC, [vd(B16), vs0(B16), vs1(B16), vs2(B16)], CLAMP;
    V_MAD_U16 = "v_mad_u16", Vop3, 0x204, 0x204, [vd(B16), vs0(B16), vs1(B16), vs2(B16)], CLAMP | OPSEL;
    V_MAD_I16 = "v_mad_i16", Vop3, 0x205, 0x205, [vd(B16), vs0(B16), vs1(B16), vs2(B16)], CLAMP | OPSEL;
    V_MIN3_I16 = "v_min3_i16", Vop3, 0x1F5, 0x1F5, [vd(B16), vs0(B16), vs1(B16), vs2(B16)], CLAMP | OPSEL;
    V_MIN3_U16 = "v_min3_u16", Vop3, 0x1F6, 0x1F6, [vd(B16), vs0(B16), vs1(B16), vs2(B16)], CLAMP | OPSEL;
    V_MAX3_I16 = "v_max3_i16", Vop3, 0x1F8, 0x1F8, [vd(B16), vs0(B16), vs1(B16), vs2(B16)], CLAMP | OPSEL;
    V_MAX3_U16 = "v_max3_u16", Vop3, 0x1F9, 0x1F9, [vd(B16), vs0(B16), vs1(B16), vs2(B16)], CLAMP | OPSEL;
    V_MED3_I16 = "v_med3_i16", Vop3, 0x1FB, 0x1FB, [vd(B16), vs0(B16), vs1(B16), vs2(B16)], CLAMP | OPSEL;
    V_MED3_U16 = "v_med3_u16", Vop3, 0x1FC, 0x1FC, [vd(B16), vs0(B16), vs1(B16), vs2(B16)], CLAMP | OPSEL;
    V_BITOP3_B16 = "v_bitop3_b16", Vop3, NA, 0x233, [vd(B16), vs0(B16), vs1(B16), vs2(B16)], OPSEL | BITOP3;
    V_DIV_SCALE_F32 = "v_div_scale_f32", Vop3, 0x1E0, 0x1E0, [vd(F32), sdc(), vs0(F32), vs1(F32), vs2(F32)], CLAMP | OMOD | NEG;
    V_DIV_SCALE_F64 = "v_div_scale_f64", Vop3, 0x1E1, 0x1E1, [vd(F64), sdc(), vs0(F64), vs1(F64), vs2(F64)], CLAMP | OMOD | NEG;
    V_MAD_U64_U32 = "v_mad_u64_u32", Vop3, 0x1E8, 0x1E8, [vd(B64), sdc(), vs0(B32), vs1(B32), vs2(B64)], CLAMP;
    V_MAD_I64_I32 = "v_mad_i64_i32", Vop3, 0x1E9, 0x1E9, [vd(B64), sdc(), vs0(B32), vs1(B32), vs2(B64)], CLAMP;
    V_ADD_F64 = "v_add_f64", Vop3, 0x280, 0x280, [vd(F64), vs0(F64), vs1(F64)], CLAMP | OMOD | NEG | ABS;
    V_MUL_F64 = "v_mul_f64", Vop3, 0x281, 0x281, [vd(F64), vs0(F64), vs1(F64)], CLAMP | OMOD | NEG | ABS;
    V_MIN_F64 = "v_min_f64", Vop3, 0x282, 0x282, [vd(F64), vs0(F64), vs1(F64)], CLAMP | OMOD | NEG | ABS;
    V_MAX_F64 = "v_max_f64", Vop3, 0x283, 0x283, [vd(F64), vs0(F64), vs1(F64)], CLAMP | OMOD | NEG | ABS;
    V_LDEXP_F64 = "v_ldexp_f64", Vop3, 0x284, 0x284, [vd(F64), vs0(F64), vs1(B32)], CLAMP | OMOD | NEG | ABS;
    V_TRIG_PREOP_F64 = "v_trig_preop_f64", Vop3, 0x292, 0x292, [vd(F64), vs0(F64), vs1(B32)], CLAMP | OMOD | NEG | ABS;
    V_MUL_LO_U32 = "v_mul_lo_u32", Vop3, 0x285, 0x285, [vd(B32), vs0(B32), vs1(B32)], NONE;
    V_MUL_HI_U32 = "v_mul_hi_u32", Vop3, 0x286, 0x286, [vd(B32), vs0(B32), vs1(B32)], NONE;
    V_MUL_HI_I32 = "v_mul_hi_i32", Vop3, 0x287, 0x287, [vd(B32), vs0(B32), vs1(B32)], NONE;
    V_BCNT_U32_B32 = "v_bcnt_u32_b32", Vop3, 0x28B, 0x28B, [vd(B32), vs0(B32), vs1(B32)], NONE;
    V_MBCNT_LO_U32_B32 = "v_mbcnt_lo_u32_b32", Vop3, 0x28C, 0x28C, [vd(B32), vs0(B32), vs1(B32)], NONE;
    V_MBCNT_HI_U32_B32 = "v_mbcnt_hi_u32_b32", Vop3, 0x28D, 0x28D, [vd(B32), vs0(B32), vs1(B32)], NONE;
    V_BFM_B32 = "v_bfm_b32", Vop3, 0x293, 0x293, [vd(B32), vs0(B32), vs1(B32)], NONE;
    V_CVT_PK_U16_U32 = "v_cvt_pk_u16_u32", Vop3, 0x297, 0x297, [vd(B32), vs0(B32), vs1(B32)], NONE;
    V_CVT_PK_I16_I32 = "v_cvt_pk_i16_i32", Vop3, 0x298, 0x298, [vd(B32), vs0(B32), vs1(B32)], NONE;
    V_ADD_I32 = "v_add_i32", Vop3, 0x29C, 0x29C, [vd(B32), vs0(B32), vs1(B32)], CLAMP;
    V_SUB_I32 = "v_sub_i32", Vop3, 0x29D, 0x29D, [vd(B32), vs0(B32), vs1(B32)], CLAMP;
    V_CVT_PKNORM_I16_F32 = "v_cvt_pknorm_i16_f32", Vop3, 0x294, 0x294, [vd(B32), vs0(F32), vs1(F32)], CLAMP | NEG | ABS;
    V_CVT_PKNORM_U16_F32 = "v_cvt_pknorm_u16_f32", Vop3, 0x295, 0x295, [vd(B32), vs0(F32), vs1(F32)], CLAMP | NEG | ABS;
    V_CVT_PKRTZ_F16_F32 = "v_cvt_pkrtz_f16_f32", Vop3, 0x296, 0x296, [vd(B32), vs0(F32), vs1(F32)], CLAMP | OMOD | NEG | ABS;
    V_CVT_PK_FP8_F32 = "v_cvt_pk_fp8_f32", Vop3, 0x2A2, 0x2A2, [vd(B32), vs0(F32), vs1(F32)], NEG | ABS | OPSEL;
    V_CVT_PK_BF8_F32 = "v_cvt_pk_bf8_f32", Vop3, 0x2A3, 0x2A3, [vd(B32), vs0(F32), vs1(F32)], NEG | ABS | OPSEL;
    V_CVT_PK_BF16_F32 = "v_cvt_pk_bf16_f32", Vop3, NA, 0x268, [vd(B32), vs0(F32), vs1(F32)], CLAMP | OMOD | NEG | ABS;
    V_CVT_PK_F16_F32 = "v_cvt_pk_f16_f32", Vop3, NA, 0x267, [vd(B32), vs0(F32), vs1(F32)], CLAMP | OMOD | NEG | ABS;
    V_CVT_SR_FP8_F32 = "v_cvt_sr_fp8_f32", Vop3, 0x2A4, 0x2A4, [vd(B32), vs0(F32), vs1(B32)], NEG | ABS | OPSEL | OPSEL4;
    V_CVT_SR_BF8_F32 = "v_cvt_sr_bf8_f32", Vop3, 0x2A5, 0x2A5, [vd(B32), vs0(F32), vs1(B32)], NEG | ABS | OPSEL | OPSEL4;
    V_CVT_SR_BF16_F32 = "v_cvt_sr_bf16_f32", Vop3, NA, 0x2A7, [vd(B32), vs0(F32), vs1(B32)], NEG | ABS | OPSEL;
    V_CVT_SR_F16_F32 = "v_cvt_sr_f16_f32", Vop3, NA, 0x2A6, [vd(B32), vs0(F32), vs1(B32)], NEG | ABS | OPSEL;
    V_PACK_B32_F16 = "v_pack_b32_f16", Vop3, 0x2A0, 0x2A0, [vd(B32), vs0(F16), vs1(F16)], CLAMP | NEG | ABS | OPSEL;
    V_ADD_I16 = "v_add_i16", Vop3, 0x29E, 0x29E, [vd(B16), vs0(B16), vs1(B16)], CLAMP | OPSEL;
    V_SUB_I16 = "v_sub_i16", Vop3, 0x29F, 0x29F, [vd(B16), vs0(B16), vs1(B16)], CLAMP | OPSEL;
    V_LSHLREV_B64 = "v_lshlrev_b64", Vop3, 0x28F, 0x28F, [vd(B64), vs0(B32), vs1(B64)], NONE;
    V_LSHRREV_B64 = "v_lshrrev_b64", Vop3, 0x290, 0x290, [vd(B64), vs0(B32), vs1(B64)], NONE;
    V_ASHRREV_I64 = "v_ashrrev_i64", Vop3, 0x291, 0x291, [vd(B64), vs0(B32), vs1(B64)], NONE;
    V_LSHL_ADD_U64 = "v_lshl_add_u64", Vop3, 0x208, 0x208, [vd(B64), vs0(B64), vs1(B32), vs2(B64)], NONE;
    V_READLANE_B32 = "v_readlane_b32", Vop3, 0x289, 0x289, [vd_s(), vs0_v(B32), vs1_ss()], NONE;
    V_WRITELANE_B32 = "v_writelane_b32", Vop3, 0x28A, 0x28A, [vdrw(B32), vs0_ss(), vs1_ss()], NONE;
    V_MINIMUM3_F32 = "v_minimum3_f32", Vop3, NA, 0x2A8, [vd(F32), vs0(F32), vs1(F32), vs2(F32)], CLAMP | OMOD | NEG | ABS;
    V_MAXIMUM3_F32 = "v_maximum3_f32", Vop3, NA, 0x2A9, [vd(F32), vs0(F32), vs1(F32), vs2(F32)], CLAMP | OMOD | NEG | ABS;
    V_PK_MAD_I16 = "v_pk_mad_i16", Vop3p, 0x00, 0x00, [vd(V2B16), vs0(V2B16), vs1(V2B16), vs2(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_MAD_U16 = "v_pk_mad_u16", Vop3p, 0x09, 0x09, [vd(V2B16), vs0(V2B16), vs1(V2B16), vs2(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_MUL_LO_U16 = "v_pk_mul_lo_u16", Vop3p, 0x01, 0x01, [vd(V2B16), vs0(V2B16), vs1(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_ADD_I16 = "v_pk_add_i16", Vop3p, 0x02, 0x02, [vd(V2B16), vs0(V2B16), vs1(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_SUB_I16 = "v_pk_sub_i16", Vop3p, 0x03, 0x03, [vd(V2B16), vs0(V2B16), vs1(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_LSHLREV_B16 = "v_pk_lshlrev_b16", Vop3p, 0x04, 0x04, [vd(V2B16), vs0(V2B16), vs1(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_LSHRREV_B16 = "v_pk_lshrrev_b16", Vop3p, 0x05, 0x05, [vd(V2B16), vs0(V2B16), vs1(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_ASHRREV_I16 = "v_pk_ashrrev_i16", Vop3p, 0x06, 0x06, [vd(V2B16), vs0(V2B16), vs1(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_MAX_I16 = "v_pk_max_i16", Vop3p, 0x07, 0x07, [vd(V2B16), vs0(V2B16), vs1(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_MIN_I16 = "v_pk_min_i16", Vop3p, 0x08, 0x08, [vd(V2B16), vs0(V2B16), vs1(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_ADD_U16 = "v_pk_add_u16", Vop3p, 0x0A, 0x0A, [vd(V2B16), vs0(V2B16), vs1(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_SUB_U16 = "v_pk_sub_u16", Vop3p, 0x0B, 0x0B, [vd(V2B16), vs0(V2B16), vs1(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_MAX_U16 = "v_pk_max_u16", Vop3p, 0x0C, 0x0C, [vd(V2B16), vs0(V2B16), vs1(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_MIN_U16 = "v_pk_min_u16", Vop3p, 0x0D, 0x0D, [vd(V2B16), vs0(V2B16), vs1(V2B16)], CLAMP | NEG | OPSEL;
    V_PK_FMA_F16 = "v_pk_fma_f16", Vop3p, 0x0E, 0x0E, [vd(V2F16), vs0(V2F16), vs1(V2F16), vs2(V2F16)], CLAMP | NEG | OPSEL;
    V_PK_ADD_F16 = "v_pk_add_f16", Vop3p, 0x0F, 0x0F, [vd(V2F16), vs0(V2F16), vs1(V2F16)], CLAMP | NEG | OPSEL;
    V_PK_MUL_F16 = "v_pk_mul_f16", Vop3p, 0x10, 0x10, [vd(V2F16), vs0(V2F16), vs1(V2F16)], CLAMP | NEG | OPSEL;
    V_PK_MIN_F16 = "v_pk_min_f16", Vop3p, 0x11, 0x11, [vd(V2F16), vs0(V2F16), vs1(V2F16)], CLAMP | NEG | OPSEL;
    V_PK_MAX_F16 = "v_pk_max_f16", Vop3p, 0x12, 0x12, [vd(V2F16), vs0(V2F16), vs1(V2F16)], CLAMP | NEG | OPSEL;
    V_FMA_MIX_F32 = "v_fma_mix_f32", Vop3p, 0x20, 0x20, [vd(F32), vs0(F32), vs1(F32), vs2(F32)], CLAMP | OPSEL | MIX;
    V_FMA_MIXLO_F16 = "v_fma_mixlo_f16", Vop3p, 0x21, 0x21, [vdrw(B32), vs0(F32), vs1(F32), vs2(F32)], CLAMP | OPSEL | MIX;
    V_FMA_MIXHI_F16 = "v_fma_mixhi_f16", Vop3p, 0x22, 0x22, [vdrw(B32), vs0(F32), vs1(F32), vs2(F32)], CLAMP | OPSEL | MIX;
    V_DOT2_F32_F16 = "v_dot2_f32_f16", Vop3p, 0x23, 0x23, [vd(F32), vs0(V2F16), vs1(V2F16), vs2(F32)], CLAMP | NEG;
    V_DOT2_F32_BF16 = "v_dot2_f32_bf16", Vop3p, NA, 0x1A, [vd(F32), vs0(V2BF16), vs1(V2BF16), vs2(F32)], CLAMP | NEG;
    V_DOT2_I32_I16 = "v_dot2_i32_i16", Vop3p, 0x26, 0x26, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP | NEG;
    V_DOT2_U32_U16 = "v_dot2_u32_u16", Vop3p, 0x27, 0x27, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP | NEG;
    V_DOT4_I32_I8 = "v_dot4_i32_i8", Vop3p, 0x28, 0x28, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP | NEG;
    V_DOT4_U32_U8 = "v_dot4_u32_u8", Vop3p, 0x29, 0x29, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP | NEG;
    V_DOT8_I32_I4 = "v_dot8_i32_i4", Vop3p, 0x2A, 0x2A, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP | NEG;
    V_DOT8_U32_U4 = "v_dot8_u32_u4", Vop3p, 0x2B, 0x2B, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], CLAMP | NEG;
    V_PK_FMA_F32 = "v_pk_fma_f32", Vop3p, 0x30, 0x30, [vd(V2F32), vs0(V2F32), vs1(V2F32), vs2(V2F32)], CLAMP | NEG | OPSEL;
    V_PK_MUL_F32 = "v_pk_mul_f32", Vop3p, 0x31, 0x31, [vd(V2F32), vs0(V2F32), vs1(V2F32)], CLAMP | NEG | OPSEL;
    V_PK_ADD_F32 = "v_pk_add_f32", Vop3p, 0x32, 0x32, [vd(V2F32), vs0(V2F32), vs1(V2F32)], CLAMP | NEG | OPSEL;
    V_PK_MOV_B32 = "v_pk_mov_b32", Vop3p, 0x33, 0x33, [vd(V2F32), vs0(V2F32), vs1(V2F32)], CLAMP | NEG | OPSEL;
    V_ACCVGPR_READ_B32 = "v_accvgpr_read_b32", Vop3p, 0x58, 0x58, [vd(B32), vs0_a()], NONE;
    V_ACCVGPR_WRITE_B32 = "v_accvgpr_write_b32", Vop3p, 0x59, 0x59, [vd_a(), vs0(B32)], NONE;
    V_MFMA_F32_32X32X1_2B_F32 = "v_mfma_f32_32x32x1_2b_f32", Mai, 0x40, 0x40, [md(32), ma(1), mb(1), mc(32)], CBSZ_ABID_BLGP;
    V_MFMA_I32_32X32X4_2B_I8 = "v_mfma_i32_32x32x4_2b_i8", Mai, 0x50, 0x50, [md(32), ma(1), mb(1), mc(32)], CBSZ_ABID_BLGP;
    V_MFMA_F32_16X16X1_4B_F32 = "v_mfma_f32_16x16x1_4b_f32", Mai, 0x41, 0x41, [md(16), ma(1), mb(1), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_F32_32X32X2_F32 = "v_mfma_f32_32x32x2_f32", Mai, 0x44, 0x44, [md(16), ma(1), mb(1), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_I32_16X16X4_4B_I8 = "v_mfma_i32_16x16x4_4b_i8", Mai, 0x51, 0x51, [md(16), ma(1), mb(1), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_F32_4X4X1_16B_F32 = "v_mfma_f32_4x4x1_16b_f32", Mai, 0x42, 0x42, [md(4), ma(1), mb(1), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_F32_16X16X4_F32 = "v_mfma_f32_16x16x4_f32", Mai, 0x45, 0x45, [md(4), ma(1), mb(1), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_I32_4X4X4_16B_I8 = "v_mfma_i32_4x4x4_16b_i8", Mai, 0x52, 0x52, [md(4), ma(1), mb(1), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_F32_32X32X4_2B_F16 = "v_mfma_f32_32x32x4_2b_f16", Mai, 0x48, 0x48, [md(32), ma(2), mb(2), mc(32)], CBSZ_ABID_BLGP;
    V_MFMA_F32_32X32X4_2B_BF16 = "v_mfma_f32_32x32x4_2b_bf16", Mai, 0x5D, 0x5D, [md(32), ma(2), mb(2), mc(32)], CBSZ_ABID_BLGP;
    V_MFMA_F32_16X16X4_4B_F16 = "v_mfma_f32_16x16x4_4b_f16", Mai, 0x49, 0x49, [md(16), ma(2), mb(2), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_F32_32X32X8_F16 = "v_mfma_f32_32x32x8_f16", Mai, 0x4C, 0x4C, [md(16), ma(2), mb(2), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_F32_16X16X4_4B_BF16 = "v_mfma_f32_16x16x4_4b_bf16", Mai, 0x5E, 0x5E, [md(16), ma(2), mb(2), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_F32_32X32X8_BF16 = "v_mfma_f32_32x32x8_bf16", Mai, 0x60, 0x60, [md(16), ma(2), mb(2), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_I32_32X32X16_I8 = "v_mfma_i32_32x32x16_i8", Mai, 0x56, 0x56, [md(16), ma(2), mb(2), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_F32_32X32X4_XF32 = "v_mfma_f32_32x32x4_xf32", Mai, 0x3F, NA, [md(16), ma(2), mb(2), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_F32_32X32X16_BF8_BF8 = "v_mfma_f32_32x32x16_bf8_bf8", Mai, 0x74, 0x74, [md(16), ma(2), mb(2), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_F32_32X32X16_BF8_FP8 = "v_mfma_f32_32x32x16_bf8_fp8", Mai, 0x75, 0x75, [md(16), ma(2), mb(2), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_F32_32X32X16_FP8_BF8 = "v_mfma_f32_32x32x16_fp8_bf8", Mai, 0x76, 0x76, [md(16), ma(2), mb(2), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_F32_32X32X16_FP8_FP8 = "v_mfma_f32_32x32x16_fp8_fp8", Mai, 0x77, 0x77, [md(16), ma(2), mb(2), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_F32_4X4X4_16B_F16 = "v_mfma_f32_4x4x4_16b_f16", Mai, 0x4A, 0x4A, [md(4), ma(2), mb(2), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_F32_16X16X16_F16 = "v_mfma_f32_16x16x16_f16", Mai, 0x4D, 0x4D, [md(4), ma(2), mb(2), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_F32_4X4X4_16B_BF16 = "v_mfma_f32_4x4x4_16b_bf16", Mai, 0x5F, 0x5F, [md(4), ma(2), mb(2), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_F32_16X16X16_BF16 = "v_mfma_f32_16x16x16_bf16", Mai, 0x61, 0x61, [md(4), ma(2), mb(2), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_I32_16X16X32_I8 = "v_mfma_i32_16x16x32_i8", Mai, 0x57, 0x57, [md(4), ma(2), mb(2), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_F32_16X16X8_XF32 = "v_mfma_f32_16x16x8_xf32", Mai, 0x3E, NA, [md(4), ma(2), mb(2), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_F32_16X16X32_BF8_BF8 = "v_mfma_f32_16x16x32_bf8_bf8", Mai, 0x70, 0x70, [md(4), ma(2), mb(2), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_F32_16X16X32_BF8_FP8 = "v_mfma_f32_16x16x32_bf8_fp8", Mai, 0x71, 0x71, [md(4), ma(2), mb(2), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_F32_16X16X32_FP8_BF8 = "v_mfma_f32_16x16x32_fp8_bf8", Mai, 0x72, 0x72, [md(4), ma(2), mb(2), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_F32_16X16X32_FP8_FP8 = "v_mfma_f32_16x16x32_fp8_fp8", Mai, 0x73, 0x73, [md(4), ma(2), mb(2), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_F64_16X16X4_F64 = "v_mfma_f64_16x16x4_f64", Mai, 0x6E, 0x6E, [md(8), ma(2), mb(2), mc64(8)], NEG | MAI_NEG;
    V_MFMA_F64_4X4X4_4B_F64 = "v_mfma_f64_4x4x4_4b_f64", Mai, 0x6F, 0x6F, [md(2), ma(2), mb(2), mc64(2)], NEG | MAI_NEG;
    V_MFMA_F32_32X32X16_BF16 = "v_mfma_f32_32x32x16_bf16", Mai, NA, 0x37, [md(16), ma(4), mb(4), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_F32_32X32X16_F16 = "v_mfma_f32_32x32x16_f16", Mai, NA, 0x55, [md(16), ma(4), mb(4), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_I32_32X32X32_I8 = "v_mfma_i32_32x32x32_i8", Mai, NA, 0x38, [md(16), ma(4), mb(4), mc(16)], CBSZ_ABID_BLGP;
    V_MFMA_F32_16X16X32_BF16 = "v_mfma_f32_16x16x32_bf16", Mai, NA, 0x35, [md(4), ma(4), mb(4), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_F32_16X16X32_F16 = "v_mfma_f32_16x16x32_f16", Mai, NA, 0x54, [md(4), ma(4), mb(4), mc(4)], CBSZ_ABID_BLGP;
    V_MFMA_I32_16X16X64_I8 = "v_mfma_i32_16x16x64_i8", Mai, NA, 0x36, [md(4), ma(4), mb(4), mc(4)], CBSZ_ABID_BLGP;
    DS_NOP = "ds_nop", Ds, 0x14, 0x14, [], NONE;
    DS_ADD_U32 = "ds_add_u32", Ds, 0x00, 0x00, [daddr(), dd0(1)], NONE;
    DS_SUB_U32 = "ds_sub_u32", Ds, 0x01, 0x01, [daddr(), dd0(1)], NONE;
    DS_RSUB_U32 = "ds_rsub_u32", Ds, 0x02, 0x02, [daddr(), dd0(1)], NONE;
    DS_INC_U32 = "ds_inc_u32", Ds, 0x03, 0x03, [daddr(), dd0(1)], NONE;
    DS_DEC_U32 = "ds_dec_u32", Ds, 0x04, 0x04, [daddr(), dd0(1)], NONE;
    DS_MIN_I32 = "ds_min_i32", Ds, 0x05, 0x05, [daddr(), dd0(1)], NONE;
    DS_MAX_I32 = "ds_max_i32", Ds, 0x06, 0x06, [daddr(), dd0(1)], NONE;
    DS_MIN_U32 = "ds_min_u32", Ds, 0x07, 0x07, [daddr(), dd0(1)], NONE;
    DS_MAX_U32 = "ds_max_u32", Ds, 0x08, 0x08, [daddr(), dd0(1)], NONE;
    DS_AND_B32 = "ds_and_b32", Ds, 0x09, 0x09, [daddr(), dd0(1)], NONE;
    DS_OR_B32 = "ds_or_b32", Ds, 0x0A, 0x0A, [daddr(), dd0(1)], NONE;
    DS_XOR_B32 = "ds_xor_b32", Ds, 0x0B, 0x0B, [daddr(), dd0(1)], NONE;
    DS_WRITE_B32 = "ds_write_b32", Ds, 0x0D, 0x0D, [daddr(), dd0(1)], NONE;
    DS_MIN_F32 = "ds_min_f32", Ds, 0x12, 0x12, [daddr(), dd0(1)], NONE;
    DS_MAX_F32 = "ds_max_f32", Ds, 0x13, 0x13, [daddr(), dd0(1)], NONE;
    DS_ADD_F32 = "ds_add_f32", Ds, 0x15, 0x15, [daddr(), dd0(1)], NONE;
    DS_WRITE_B8 = "ds_write_b8", Ds, 0x1E, 0x1E, [daddr(), dd0(1)], NONE;
    DS_WRITE_B16 = "ds_write_b16", Ds, 0x1F, 0x1F, [daddr(), dd0(1)], NONE;
    DS_WRITE_B8_D16_HI = "ds_write_b8_d16_hi", Ds, 0x54, 0x54, [daddr(), dd0(1)], NONE;
    DS_WRITE_B16_D16_HI = "ds_write_b16_d16_hi", Ds, 0x55, 0x55, [daddr(), dd0(1)], NONE;
    DS_PK_ADD_F16 = "ds_pk_add_f16", Ds, 0x17, 0x17, [daddr(), dd0(1)], NONE;
    DS_PK_ADD_BF16 = "ds_pk_add_bf16", Ds, 0x18, 0x18, [daddr(), dd0(1)], NONE;
    DS_ADD_U64 = "ds_add_u64", Ds, 0x40, 0x40, [daddr(), dd0(2)], NONE;
    DS_SUB_U64 = "ds_sub_u64", Ds, 0x41, 0x41, [daddr(), dd0(2)], NONE;
    DS_RSUB_U64 = "ds_rsub_u64", Ds, 0x42, 0x42, [daddr(), dd0(2)], NONE;
    DS_INC_U64 = "ds_inc_u64", Ds, 0x43, 0x43, [daddr(), dd0(2)], NONE;
    DS_DEC_U64 = "ds_dec_u64", Ds, 0x44, 0x44, [daddr(), dd0(2)], NONE;
    DS_MIN_I64 = "ds_min_i64", Ds, 0x45, 0x45, [daddr(), dd0(2)], NONE;
    DS_MAX_I64 = "ds_max_i64", Ds, 0x46, 0x46, [daddr(), dd0(2)], NONE;
    DS_MIN_U64 = "ds_min_u64", Ds, 0x47, 0x47, [daddr(), dd0(2)], NONE;
    DS_MAX_U64 = "ds_max_u64", Ds, 0x48, 0x48, [daddr(), dd0(2)], NONE;
    DS_AND_B64 = "ds_and_b64", Ds, 0x49, 0x49, [daddr(), dd0(2)], NONE;
    DS_OR_B64 = "ds_or_b64", Ds, 0x4A, 0x4A, [daddr(), dd0(2)], NONE;
    DS_XOR_B64 = "ds_xor_b64", Ds, 0x4B, 0x4B, [daddr(), dd0(2)], NONE;
    DS_WRITE_B64 = "ds_write_b64", Ds, 0x4D, 0x4D, [daddr(), dd0(2)], NONE;
    DS_MIN_F64 = "ds_min_f64", Ds, 0x52, 0x52, [daddr(), dd0(2)], NONE;
    DS_MAX_F64 = "ds_max_f64", Ds, 0x53, 0x53, [daddr(), dd0(2)], NONE;
    DS_ADD_F64 = "ds_add_f64", Ds, 0x5C, 0x5C, [daddr(), dd0(2)], NONE;
    DS_WRITE_B96 = "ds_write_b96", Ds, 0xDE, 0xDE, [daddr(), dd0(3)], NONE;
    DS_WRITE_B128 = "ds_write_b128", Ds, 0xDF, 0xDF, [daddr(), dd0(4)], NONE;
    DS_WRITE2_B32 = "ds_write2_b32", Ds, 0x0E, 0x0E, [daddr(), dd0(1), dd1(1)], DS_2OFF;
    DS_WRITE2ST64_B32 = "ds_write2st64_b32", Ds, 0x0F, 0x0F, [daddr(), dd0(1), dd1(1)], DS_2OFF;
    DS_MSKOR_B32 = "ds_mskor_b32", Ds, 0x0C, 0x0C, [daddr(), dd0(1), dd1(1)], NONE;
    DS_CMPST_B32 = "ds_cmpst_b32", Ds, 0x10, 0x10, [daddr(), dd0(1), dd1(1)], NONE;
    DS_CMPST_F32 = "ds_cmpst_f32", Ds, 0x11, 0x11, [daddr(), dd0(1), dd1(1)], NONE;
    DS_WRITE2_B64 = "ds_write2_b64", Ds, 0x4E, 0x4E, [daddr(), dd0(2), dd1(2)], DS_2OFF;
    DS_WRITE2ST64_B64 = "ds_write2st64_b64", Ds, 0x4F, 0x4F, [daddr(), dd0(2), dd1(2)], DS_2OFF;
    DS_MSKOR_B64 = "ds_mskor_b64", Ds, 0x4C, 0x4C, [daddr(), dd0(2), dd1(2)], NONE;
    DS_CMPST_B64 = "ds_cmpst_b64", Ds, 0x50, 0x50, [daddr(), dd0(2), dd1(2)], NONE;
    DS_CMPST_F64 = "ds_cmpst_f64", Ds, 0x51, 0x51, [daddr(), dd0(2), dd1(2)], NONE;
    DS_ADD_RTN_U32 = "ds_add_rtn_u32", Ds, 0x20, 0x20, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_SUB_RTN_U32 = "ds_sub_rtn_u32", Ds, 0x21, 0x21, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_RSUB_RTN_U32 = "ds_rsub_rtn_u32", Ds, 0x22, 0x22, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_INC_RTN_U32 = "ds_inc_rtn_u32", Ds, 0x23, 0x23, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_DEC_RTN_U32 = "ds_dec_rtn_u32", Ds, 0x24, 0x24, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_MIN_RTN_I32 = "ds_min_rtn_i32", Ds, 0x25, 0x25, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_MAX_RTN_I32 = "ds_max_rtn_i32", Ds, 0x26, 0x26, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_MIN_RTN_U32 = "ds_min_rtn_u32", Ds, 0x27, 0x27, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_MAX_RTN_U32 = "ds_max_rtn_u32", Ds, 0x28, 0x28, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_AND_RTN_B32 = "ds_and_rtn_b32", Ds, 0x29, 0x29, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_OR_RTN_B32 = "ds_or_rtn_b32", Ds, 0x2A, 0x2A, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_XOR_RTN_B32 = "ds_xor_rtn_b32", Ds, 0x2B, 0x2B, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_WRXCHG_RTN_B32 = "ds_wrxchg_rtn_b32", Ds, 0x2D, 0x2D, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_MIN_RTN_F32 = "ds_min_rtn_f32", Ds, 0x32, 0x32, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_MAX_RTN_F32 = "ds_max_rtn_f32", Ds, 0x33, 0x33, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_ADD_RTN_F32 = "ds_add_rtn_f32", Ds, 0x35, 0x35, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_PERMUTE_B32 = "ds_permute_b32", Ds, 0x3E, 0x3E, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_BPERMUTE_B32 = "ds_bpermute_b32", Ds, 0x3F, 0x3F, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_PK_ADD_RTN_F16 = "ds_pk_add_rtn_f16", Ds, 0xB7, 0xB7, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_PK_ADD_RTN_BF16 = "ds_pk_add_rtn_bf16", Ds, 0xB8, 0xB8, [dvdst(1), daddr(), dd0(1)], NONE;
    DS_ADD_RTN_U64 = "ds_add_rtn_u64", Ds, 0x60, 0x60, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_SUB_RTN_U64 = "ds_sub_rtn_u64", Ds, 0x61, 0x61, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_RSUB_RTN_U64 = "ds_rsub_rtn_u64", Ds, 0x62, 0x62, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_INC_RTN_U64 = "ds_inc_rtn_u64", Ds, 0x63, 0x63, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_DEC_RTN_U64 = "ds_dec_rtn_u64", Ds, 0x64, 0x64, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_MIN_RTN_I64 = "ds_min_rtn_i64", Ds, 0x65, 0x65, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_MAX_RTN_I64 = "ds_max_rtn_i64", Ds, 0x66, 0x66, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_MIN_RTN_U64 = "ds_min_rtn_u64", Ds, 0x67, 0x67, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_MAX_RTN_U64 = "ds_max_rtn_u64", Ds, 0x68, 0x68, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_AND_RTN_B64 = "ds_and_rtn_b64", Ds, 0x69, 0x69, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_OR_RTN_B64 = "ds_or_rtn_b64", Ds, 0x6A, 0x6A, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_XOR_RTN_B64 = "ds_xor_rtn_b64", Ds, 0x6B, 0x6B, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_WRXCHG_RTN_B64 = "ds_wrxchg_rtn_b64", Ds, 0x6D, 0x6D, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_MIN_RTN_F64 = "ds_min_rtn_f64", Ds, 0x72, 0x72, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_MAX_RTN_F64 = "ds_max_rtn_f64", Ds, 0x73, 0x73, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_ADD_RTN_F64 = "ds_add_rtn_f64", Ds, 0x7C, 0x7C, [dvdst(2), daddr(), dd0(2)], NONE;
    DS_MSKOR_RTN_B32 = "ds_mskor_rtn_b32", Ds, 0x2C, 0x2C, [dvdst(1), daddr(), dd0(1), dd1(1)], NONE;
    DS_CMPST_RTN_B32 = "ds_cmpst_rtn_b32", Ds, 0x30, 0x30, [dvdst(1), daddr(), dd0(1), dd1(1)], NONE;
    DS_CMPST_RTN_F32 = "ds_cmpst_rtn_f32", Ds, 0x31, 0x31, [dvdst(1), daddr(), dd0(1), dd1(1)], NONE;
    DS_MSKOR_RTN_B64 = "ds_mskor_rtn_b64", Ds, 0x6C, 0x6C, [dvdst(2), daddr(), dd0(2), dd1(2)], NONE;
    DS_CMPST_RTN_B64 = "ds_cmpst_rtn_b64", Ds, 0x70, 0x70, [dvdst(2), daddr(), dd0(2), dd1(2)], NONE;
    DS_CMPST_RTN_F64 = "ds_cmpst_rtn_f64", Ds, 0x71, 0x71, [dvdst(2), daddr(), dd0(2), dd1(2)], NONE;
    DS_READ_B32 = "ds_read_b32", Ds, 0x36, 0x36, [dvdst(1), daddr()], NONE;
    DS_READ_I8 = "ds_read_i8", Ds, 0x39, 0x39, [dvdst(1), daddr()], NONE;
    DS_READ_U8 = "ds_read_u8", Ds, 0x3A, 0x3A, [dvdst(1), daddr()], NONE;
    DS_READ_I16 = "ds_read_i16", Ds, 0x3B, 0x3B, [dvdst(1), daddr()], NONE;
    DS_READ_U16 = "ds_read_u16", Ds, 0x3C, 0x3C, [dvdst(1), daddr()], NONE;
    DS_READ_U8_D16 = "ds_read_u8_d16", Ds, 0x56, 0x56, [dvdst(1), daddr()], NONE;
    DS_READ_U8_D16_HI = "ds_read_u8_d16_hi", Ds, 0x57, 0x57, [dvdst(1), daddr()], NONE;
    DS_READ_I8_D16 = "ds_read_i8_d16", Ds, 0x58, 0x58, [dvdst(1), daddr()], NONE;
    DS_READ_I8_D16_HI = "ds_read_i8_d16_hi", Ds, 0x59, 0x59, [dvdst(1), daddr()], NONE;
    DS_READ_U16_D16 = "ds_read_u16_d16", Ds, 0x5A, 0x5A, [dvdst(1), daddr()], NONE;
    DS_READ_U16_D16_HI = "ds_read_u16_d16_hi", Ds, 0x5B, 0x5B, [dvdst(1), daddr()], NONE;
    DS_SWIZZLE_B32 = "ds_swizzle_b32", Ds, 0x3D, 0x3D, [dvdst(1), daddr()], NONE;
    DS_READ_B64 = "ds_read_b64", Ds, 0x76, 0x76, [dvdst(2), daddr()], NONE;
    DS_READ2_B32 = "ds_read2_b32", Ds, 0x37, 0x37, [dvdst(2), daddr()], DS_2OFF;
    DS_READ2ST64_B32 = "ds_read2st64_b32", Ds, 0x38, 0x38, [dvdst(2), daddr()], DS_2OFF;
    DS_READ_B64_TR_B4 = "ds_read_b64_tr_b4", Ds, NA, 0xE0, [dvdst(2), daddr()], NONE;
    DS_READ_B64_TR_B8 = "ds_read_b64_tr_b8", Ds, NA, 0xE2, [dvdst(2), daddr()], NONE;
    DS_READ_B64_TR_B16 = "ds_read_b64_tr_b16", Ds, NA, 0xE3, [dvdst(2), daddr()], NONE;
    DS_READ_B96 = "ds_read_b96", Ds, 0xFE, 0xFE, [dvdst(3), daddr()], NONE;
    DS_READ_B96_TR_B6 = "ds_read_b96_tr_b6", Ds, NA, 0xE1, [dvdst(3), daddr()], NONE;
    DS_READ_B128 = "ds_read_b128", Ds, 0xFF, 0xFF, [dvdst(4), daddr()], NONE;
    DS_READ2_B64 = "ds_read2_b64", Ds, 0x77, 0x77, [dvdst(4), daddr()], DS_2OFF;
    DS_READ2ST64_B64 = "ds_read2st64_b64", Ds, 0x78, 0x78, [dvdst(4), daddr()], DS_2OFF;
    DS_CONSUME = "ds_consume", Ds, 0xBD, 0xBD, [dvdst(1)], NONE;
    DS_APPEND = "ds_append", Ds, 0xBE, 0xBE, [dvdst(1)], NONE;
    DS_READ_ADDTID_B32 = "ds_read_addtid_b32", Ds, 0xB6, 0xB6, [dvdst(1)], NONE;
    DS_WRITE_ADDTID_B32 = "ds_write_addtid_b32", Ds, 0x1D, 0x1D, [dd0(1)], NONE;
    BUFFER_LOAD_FORMAT_X = "buffer_load_format_x", Mubuf, 0x00, 0x00, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_UBYTE = "buffer_load_ubyte", Mubuf, 0x10, 0x10, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], LDS_OK;
    BUFFER_LOAD_SBYTE = "buffer_load_sbyte", Mubuf, 0x11, 0x11, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], LDS_OK;
    BUFFER_LOAD_USHORT = "buffer_load_ushort", Mubuf, 0x12, 0x12, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], LDS_OK;
    BUFFER_LOAD_SSHORT = "buffer_load_sshort", Mubuf, 0x13, 0x13, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], LDS_OK;
    BUFFER_LOAD_DWORD = "buffer_load_dword", Mubuf, 0x14, 0x14, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], LDS_OK;
    BUFFER_LOAD_UBYTE_D16 = "buffer_load_ubyte_d16", Mubuf, 0x20, 0x20, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_UBYTE_D16_HI = "buffer_load_ubyte_d16_hi", Mubuf, 0x21, 0x21, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_SBYTE_D16 = "buffer_load_sbyte_d16", Mubuf, 0x22, 0x22, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_SBYTE_D16_HI = "buffer_load_sbyte_d16_hi", Mubuf, 0x23, 0x23, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_SHORT_D16 = "buffer_load_short_d16", Mubuf, 0x24, 0x24, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_SHORT_D16_HI = "buffer_load_short_d16_hi", Mubuf, 0x25, 0x25, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_FORMAT_D16_HI_X = "buffer_load_format_d16_hi_x", Mubuf, 0x26, 0x26, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_FORMAT_D16_X = "buffer_load_format_d16_x", Mubuf, 0x08, 0x08, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_FORMAT_D16_XY = "buffer_load_format_d16_xy", Mubuf, 0x09, 0x09, [mbdata(1, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_FORMAT_XY = "buffer_load_format_xy", Mubuf, 0x01, 0x01, [mbdata(2, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_DWORDX2 = "buffer_load_dwordx2", Mubuf, 0x15, 0x15, [mbdata(2, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_FORMAT_D16_XYZ = "buffer_load_format_d16_xyz", Mubuf, 0x0A, 0x0A, [mbdata(2, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_FORMAT_D16_XYZW = "buffer_load_format_d16_xyzw", Mubuf, 0x0B, 0x0B, [mbdata(2, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_FORMAT_XYZ = "buffer_load_format_xyz", Mubuf, 0x02, 0x02, [mbdata(3, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_DWORDX3 = "buffer_load_dwordx3", Mubuf, 0x16, 0x16, [mbdata(3, Access::Write), mbaddr(), mbrsrc(), mbsoff()], LDS_OK;
    BUFFER_LOAD_FORMAT_XYZW = "buffer_load_format_xyzw", Mubuf, 0x03, 0x03, [mbdata(4, Access::Write), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_LOAD_DWORDX4 = "buffer_load_dwordx4", Mubuf, 0x17, 0x17, [mbdata(4, Access::Write), mbaddr(), mbrsrc(), mbsoff()], LDS_OK;
    BUFFER_STORE_FORMAT_X = "buffer_store_format_x", Mubuf, 0x04, 0x04, [mbdata(1, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_BYTE = "buffer_store_byte", Mubuf, 0x18, 0x18, [mbdata(1, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_BYTE_D16_HI = "buffer_store_byte_d16_hi", Mubuf, 0x19, 0x19, [mbdata(1, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_SHORT = "buffer_store_short", Mubuf, 0x1A, 0x1A, [mbdata(1, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_SHORT_D16_HI = "buffer_store_short_d16_hi", Mubuf, 0x1B, 0x1B, [mbdata(1, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_DWORD = "buffer_store_dword", Mubuf, 0x1C, 0x1C, [mbdata(1, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_FORMAT_D16_X = "buffer_store_format_d16_x", Mubuf, 0x0C, 0x0C, [mbdata(1, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_FORMAT_D16_XY = "buffer_store_format_d16_xy", Mubuf, 0x0D, 0x0D, [mbdata(1, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_FORMAT_D16_HI_X = "buffer_store_format_d16_hi_x", Mubuf, 0x27, 0x27, [mbdata(1, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_FORMAT_XY = "buffer_store_format_xy", Mubuf, 0x05, 0x05, [mbdata(2, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_DWORDX2 = "buffer_store_dwordx2", Mubuf, 0x1D, 0x1D, [mbdata(2, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_FORMAT_D16_XYZ = "buffer_store_format_d16_xyz", Mubuf, 0x0E, 0x0E, [mbdata(2, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_FORMAT_D16_XYZW = "buffer_store_format_d16_xyzw", Mubuf, 0x0F, 0x0F, [mbdata(2, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_FORMAT_XYZ = "buffer_store_format_xyz", Mubuf, 0x06, 0x06, [mbdata(3, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_DWORDX3 = "buffer_store_dwordx3", Mubuf, 0x1E, 0x1E, [mbdata(3, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_FORMAT_XYZW = "buffer_store_format_xyzw", Mubuf, 0x07, 0x07, [mbdata(4, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_STORE_DWORDX4 = "buffer_store_dwordx4", Mubuf, 0x1F, 0x1F, [mbdata(4, Access::Read), mbaddr(), mbrsrc(), mbsoff()], NONE;
    BUFFER_ATOMIC_SWAP = "buffer_atomic_swap", Mubuf, 0x40, 0x40, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_ADD = "buffer_atomic_add", Mubuf, 0x42, 0x42, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_SUB = "buffer_atomic_sub", Mubuf, 0x43, 0x43, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_SMIN = "buffer_atomic_smin", Mubuf, 0x44, 0x44, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_UMIN = "buffer_atomic_umin", Mubuf, 0x45, 0x45, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_SMAX = "buffer_atomic_smax", Mubuf, 0x46, 0x46, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_UMAX = "buffer_atomic_umax", Mubuf, 0x47, 0x47, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_AND = "buffer_atomic_and", Mubuf, 0x48, 0x48, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_OR = "buffer_atomic_or", Mubuf, 0x49, 0x49, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_XOR = "buffer_atomic_xor", Mubuf, 0x4A, 0x4A, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_INC = "buffer_atomic_inc", Mubuf, 0x4B, 0x4B, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_DEC = "buffer_atomic_dec", Mubuf, 0x4C, 0x4C, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_ADD_F32 = "buffer_atomic_add_f32", Mubuf, 0x4D, 0x4D, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_PK_ADD_F16 = "buffer_atomic_pk_add_f16", Mubuf, 0x4E, 0x4E, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_PK_ADD_BF16 = "buffer_atomic_pk_add_bf16", Mubuf, NA, 0x52, [mbdata(1, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_CMPSWAP = "buffer_atomic_cmpswap", Mubuf, 0x41, 0x41, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_SWAP_X2 = "buffer_atomic_swap_x2", Mubuf, 0x60, 0x60, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_ADD_X2 = "buffer_atomic_add_x2", Mubuf, 0x62, 0x62, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_SUB_X2 = "buffer_atomic_sub_x2", Mubuf, 0x63, 0x63, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_SMIN_X2 = "buffer_atomic_smin_x2", Mubuf, 0x64, 0x64, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_UMIN_X2 = "buffer_atomic_umin_x2", Mubuf, 0x65, 0x65, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_SMAX_X2 = "buffer_atomic_smax_x2", Mubuf, 0x66, 0x66, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_UMAX_X2 = "buffer_atomic_umax_x2", Mubuf, 0x67, 0x67, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_AND_X2 = "buffer_atomic_and_x2", Mubuf, 0x68, 0x68, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_OR_X2 = "buffer_atomic_or_x2", Mubuf, 0x69, 0x69, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_XOR_X2 = "buffer_atomic_xor_x2", Mubuf, 0x6A, 0x6A, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_INC_X2 = "buffer_atomic_inc_x2", Mubuf, 0x6B, 0x6B, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_DEC_X2 = "buffer_atomic_dec_x2", Mubuf, 0x6C, 0x6C, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_ADD_F64 = "buffer_atomic_add_f64", Mubuf, 0x4F, 0x4F, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_MIN_F64 = "buffer_atomic_min_f64", Mubuf, 0x50, 0x50, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_MAX_F64 = "buffer_atomic_max_f64", Mubuf, 0x51, 0x51, [mbdata(2, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_ATOMIC_CMPSWAP_X2 = "buffer_atomic_cmpswap_x2", Mubuf, 0x61, 0x61, [mbdata(4, Access::ReadWrite), mbaddr(), mbrsrc(), mbsoff()], ATOMIC;
    BUFFER_WBL2 = "buffer_wbl2", Mubuf, 0x28, 0x28, [], NONE;
    BUFFER_INV = "buffer_inv", Mubuf, 0x29, 0x29, [], NONE;
    FLAT_LOAD_UBYTE = "flat_load_ubyte", Flat, 0x10, 0x10, [fvdst(1), fvaddr()], NONE;
    FLAT_LOAD_SBYTE = "flat_load_sbyte", Flat, 0x11, 0x11, [fvdst(1), fvaddr()], NONE;
    FLAT_LOAD_USHORT = "flat_load_ushort", Flat, 0x12, 0x12, [fvdst(1), fvaddr()], NONE;
    FLAT_LOAD_SSHORT = "flat_load_sshort", Flat, 0x13, 0x13, [fvdst(1), fvaddr()], NONE;
    FLAT_LOAD_DWORD = "flat_load_dword", Flat, 0x14, 0x14, [fvdst(1), fvaddr()], NONE;
    FLAT_LOAD_UBYTE_D16 = "flat_load_ubyte_d16", Flat, 0x20, 0x20, [fvdst(1), fvaddr()], NONE;
    FLAT_LOAD_UBYTE_D16_HI = "flat_load_ubyte_d16_hi", Flat, 0x21, 0x21, [fvdst(1), fvaddr()], NONE;
    FLAT_LOAD_SBYTE_D16 = "flat_load_sbyte_d16", Flat, 0x22, 0x22, [fvdst(1), fvaddr()], NONE;
    FLAT_LOAD_SBYTE_D16_HI = "flat_load_sbyte_d16_hi", Flat, 0x23, 0x23, [fvdst(1), fvaddr()], NONE;
    FLAT_LOAD_SHORT_D16 = "flat_load_short_d16", Flat, 0x24, 0x24, [fvdst(1), fvaddr()], NONE;
    FLAT_LOAD_SHORT_D16_HI = "flat_load_short_d16_hi", Flat, 0x25, 0x25, [fvdst(1), fvaddr()], NONE;
    GLOBAL_LOAD_UBYTE = "global_load_ubyte", Global, 0x10, 0x10, [fvdst(1), fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_SBYTE = "global_load_sbyte", Global, 0x11, 0x11, [fvdst(1), fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_USHORT = "global_load_ushort", Global, 0x12, 0x12, [fvdst(1), fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_SSHORT = "global_load_sshort", Global, 0x13, 0x13, [fvdst(1), fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_DWORD = "global_load_dword", Global, 0x14, 0x14, [fvdst(1), fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_UBYTE_D16 = "global_load_ubyte_d16", Global, 0x20, 0x20, [fvdst(1), fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_UBYTE_D16_HI = "global_load_ubyte_d16_hi", Global, 0x21, 0x21, [fvdst(1), fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_SBYTE_D16 = "global_load_sbyte_d16", Global, 0x22, 0x22, [fvdst(1), fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_SBYTE_D16_HI = "global_load_sbyte_d16_hi", Global, 0x23, 0x23, [fvdst(1), fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_SHORT_D16 = "global_load_short_d16", Global, 0x24, 0x24, [fvdst(1), fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_SHORT_D16_HI = "global_load_short_d16_hi", Global, 0x25, 0x25, [fvdst(1), fvaddr(), fsaddr()], NONE;
    FLAT_LOAD_DWORDX2 = "flat_load_dwordx2", Flat, 0x15, 0x15, [fvdst(2), fvaddr()], NONE;
    GLOBAL_LOAD_DWORDX2 = "global_load_dwordx2", Global, 0x15, 0x15, [fvdst(2), fvaddr(), fsaddr()], NONE;
    FLAT_LOAD_DWORDX3 = "flat_load_dwordx3", Flat, 0x16, 0x16, [fvdst(3), fvaddr()], NONE;
    GLOBAL_LOAD_DWORDX3 = "global_load_dwordx3", Global, 0x16, 0x16, [fvdst(3), fvaddr(), fsaddr()], NONE;
    FLAT_LOAD_DWORDX4 = "flat_load_dwordx4", Flat, 0x17, 0x17, [fvdst(4), fvaddr()], NONE;
    GLOBAL_LOAD_DWORDX4 = "global_load_dwordx4", Global, 0x17, 0x17, [fvdst(4), fvaddr(), fsaddr()], NONE;
    FLAT_STORE_BYTE = "flat_store_byte", Flat, 0x18, 0x18, [fvaddr(), fdata(1)], NONE;
    FLAT_STORE_BYTE_D16_HI = "flat_store_byte_d16_hi", Flat, 0x19, 0x19, [fvaddr(), fdata(1)], NONE;
    FLAT_STORE_SHORT = "flat_store_short", Flat, 0x1A, 0x1A, [fvaddr(), fdata(1)], NONE;
    FLAT_STORE_SHORT_D16_HI = "flat_store_short_d16_hi", Flat, 0x1B, 0x1B, [fvaddr(), fdata(1)], NONE;
    FLAT_STORE_DWORD = "flat_store_dword", Flat, 0x1C, 0x1C, [fvaddr(), fdata(1)], NONE;
    GLOBAL_STORE_BYTE = "global_store_byte", Global, 0x18, 0x18, [fvaddr(), fdata(1), fsaddr()], NONE;
    GLOBAL_STORE_BYTE_D16_HI = "global_store_byte_d16_hi", Global, 0x19, 0x19, [fvaddr(), fdata(1), fsaddr()], NONE;
    GLOBAL_STORE_SHORT = "global_store_short", Global, 0x1A, 0x1A, [fvaddr(), fdata(1), fsaddr()], NONE;
    GLOBAL_STORE_SHORT_D16_HI = "global_store_short_d16_hi", Global, 0x1B, 0x1B, [fvaddr(), fdata(1), fsaddr()], NONE;
    GLOBAL_STORE_DWORD = "global_store_dword", Global, 0x1C, 0x1C, [fvaddr(), fdata(1), fsaddr()], NONE;
    FLAT_STORE_DWORDX2 = "flat_store_dwordx2", Flat, 0x1D, 0x1D, [fvaddr(), fdata(2)], NONE;
    GLOBAL_STORE_DWORDX2 = "global_store_dwordx2", Global, 0x1D, 0x1D, [fvaddr(), fdata(2), fsaddr()], NONE;
    FLAT_STORE_DWORDX3 = "flat_store_dwordx3", Flat, 0x1E, 0x1E, [fvaddr(), fdata(3)], NONE;
    GLOBAL_STORE_DWORDX3 = "global_store_dwordx3", Global, 0x1E, 0x1E, [fvaddr(), fdata(3), fsaddr()], NONE;
    FLAT_STORE_DWORDX4 = "flat_store_dwordx4", Flat, 0x1F, 0x1F, [fvaddr(), fdata(4)], NONE;
    GLOBAL_STORE_DWORDX4 = "global_store_dwordx4", Global, 0x1F, 0x1F, [fvaddr(), fdata(4), fsaddr()], NONE;
    FLAT_ATOMIC_SWAP = "flat_atomic_swap", Flat, 0x40, 0x40, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_ADD = "flat_atomic_add", Flat, 0x42, 0x42, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_SUB = "flat_atomic_sub", Flat, 0x43, 0x43, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_SMIN = "flat_atomic_smin", Flat, 0x44, 0x44, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_UMIN = "flat_atomic_umin", Flat, 0x45, 0x45, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_SMAX = "flat_atomic_smax", Flat, 0x46, 0x46, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_UMAX = "flat_atomic_umax", Flat, 0x47, 0x47, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_AND = "flat_atomic_and", Flat, 0x48, 0x48, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_OR = "flat_atomic_or", Flat, 0x49, 0x49, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_XOR = "flat_atomic_xor", Flat, 0x4A, 0x4A, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_INC = "flat_atomic_inc", Flat, 0x4B, 0x4B, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_DEC = "flat_atomic_dec", Flat, 0x4C, 0x4C, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_ADD_F32 = "flat_atomic_add_f32", Flat, 0x4D, 0x4D, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_PK_ADD_F16 = "flat_atomic_pk_add_f16", Flat, 0x4E, 0x4E, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    FLAT_ATOMIC_PK_ADD_BF16 = "flat_atomic_pk_add_bf16", Flat, 0x52, 0x52, [fvdst_rtn(1), fvaddr(), fdata(1)], ATOMIC;
    GLOBAL_ATOMIC_SWAP = "global_atomic_swap", Global, 0x40, 0x40, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_ADD = "global_atomic_add", Global, 0x42, 0x42, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_SUB = "global_atomic_sub", Global, 0x43, 0x43, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_SMIN = "global_atomic_smin", Global, 0x44, 0x44, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_UMIN = "global_atomic_umin", Global, 0x45, 0x45, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_SMAX = "global_atomic_smax", Global, 0x46, 0x46, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_UMAX = "global_atomic_umax", Global, 0x47, 0x47, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_AND = "global_atomic_and", Global, 0x48, 0x48, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_OR = "global_atomic_or", Global, 0x49, 0x49, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_XOR = "global_atomic_xor", Global, 0x4A, 0x4A, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_INC = "global_atomic_inc", Global, 0x4B, 0x4B, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_DEC = "global_atomic_dec", Global, 0x4C, 0x4C, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_ADD_F32 = "global_atomic_add_f32", Global, 0x4D, 0x4D, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC | NO_AGPR_RTN;
    GLOBAL_ATOMIC_PK_ADD_F16 = "global_atomic_pk_add_f16", Global, 0x4E, 0x4E, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC | NO_AGPR_RTN;
    GLOBAL_ATOMIC_PK_ADD_BF16 = "global_atomic_pk_add_bf16", Global, 0x52, 0x52, [fvdst_rtn(1), fvaddr(), fdata(1), fsaddr()], ATOMIC;
    FLAT_ATOMIC_CMPSWAP = "flat_atomic_cmpswap", Flat, 0x41, 0x41, [fvdst_rtn(1), fvaddr(), fdata(2)], ATOMIC;
    FLAT_ATOMIC_SWAP_X2 = "flat_atomic_swap_x2", Flat, 0x60, 0x60, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC;
    FLAT_ATOMIC_ADD_X2 = "flat_atomic_add_x2", Flat, 0x62, 0x62, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC;
    FLAT_ATOMIC_SUB_X2 = "flat_atomic_sub_x2", Flat, 0x63, 0x63, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC;
    FLAT_ATOMIC_SMIN_X2 = "flat_atomic_smin_x2", Flat, 0x64, 0x64, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC;
    FLAT_ATOMIC_UMIN_X2 = "flat_atomic_umin_x2", Flat, 0x65, 0x65, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC;
    FLAT_ATOMIC_SMAX_X2 = "flat_atomic_smax_x2", Flat, 0x66, 0x66, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC;
    FLAT_ATOMIC_UMAX_X2 = "flat_atomic_umax_x2", Flat, 0x67, 0x67, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC;
    FLAT_ATOMIC_AND_X2 = "flat_atomic_and_x2", Flat, 0x68, 0x68, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC;
    FLAT_ATOMIC_OR_X2 = "flat_atomic_or_x2", Flat, 0x69, 0x69, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC;
    FLAT_ATOMIC_XOR_X2 = "flat_atomic_xor_x2", Flat, 0x6A, 0x6A, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC;
    FLAT_ATOMIC_INC_X2 = "flat_atomic_inc_x2", Flat, 0x6B, 0x6B, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC;
    FLAT_ATOMIC_DEC_X2 = "flat_atomic_dec_x2", Flat, 0x6C, 0x6C, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC;
    FLAT_ATOMIC_ADD_F64 = "flat_atomic_add_f64", Flat, 0x4F, 0x4F, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC | NO_AGPR_RTN_SC1;
    FLAT_ATOMIC_MIN_F64 = "flat_atomic_min_f64", Flat, 0x50, 0x50, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC | NO_AGPR_RTN_SC1;
    FLAT_ATOMIC_MAX_F64 = "flat_atomic_max_f64", Flat, 0x51, 0x51, [fvdst_rtn(2), fvaddr(), fdata(2)], ATOMIC | NO_AGPR_RTN_SC1;
    GLOBAL_ATOMIC_CMPSWAP = "global_atomic_cmpswap", Global, 0x41, 0x41, [fvdst_rtn(1), fvaddr(), fdata(2), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_SWAP_X2 = "global_atomic_swap_x2", Global, 0x60, 0x60, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_ADD_X2 = "global_atomic_add_x2", Global, 0x62, 0x62, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_SUB_X2 = "global_atomic_sub_x2", Global, 0x63, 0x63, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_SMIN_X2 = "global_atomic_smin_x2", Global, 0x64, 0x64, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_UMIN_X2 = "global_atomic_umin_x2", Global, 0x65, 0x65, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_SMAX_X2 = "global_atomic_smax_x2", Global, 0x66, 0x66, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_UMAX_X2 = "global_atomic_umax_x2", Global, 0x67, 0x67, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_AND_X2 = "global_atomic_and_x2", Global, 0x68, 0x68, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_OR_X2 = "global_atomic_or_x2", Global, 0x69, 0x69, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_XOR_X2 = "global_atomic_xor_x2", Global, 0x6A, 0x6A, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_INC_X2 = "global_atomic_inc_x2", Global, 0x6B, 0x6B, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_DEC_X2 = "global_atomic_dec_x2", Global, 0x6C, 0x6C, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC;
    GLOBAL_ATOMIC_ADD_F64 = "global_atomic_add_f64", Global, 0x4F, 0x4F, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC | NO_AGPR_RTN_SC1;
    GLOBAL_ATOMIC_MIN_F64 = "global_atomic_min_f64", Global, 0x50, 0x50, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC | NO_AGPR_RTN_SC1;
    GLOBAL_ATOMIC_MAX_F64 = "global_atomic_max_f64", Global, 0x51, 0x51, [fvdst_rtn(2), fvaddr(), fdata(2), fsaddr()], ATOMIC | NO_AGPR_RTN_SC1;
    FLAT_ATOMIC_CMPSWAP_X2 = "flat_atomic_cmpswap_x2", Flat, 0x61, 0x61, [fvdst_rtn(2), fvaddr(), fdata(4)], ATOMIC;
    GLOBAL_ATOMIC_CMPSWAP_X2 = "global_atomic_cmpswap_x2", Global, 0x61, 0x61, [fvdst_rtn(2), fvaddr(), fdata(4), fsaddr()], ATOMIC;
    GLOBAL_LOAD_LDS_UBYTE = "global_load_lds_ubyte", Global, 0x26, 0x26, [fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_LDS_SBYTE = "global_load_lds_sbyte", Global, 0x27, 0x27, [fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_LDS_USHORT = "global_load_lds_ushort", Global, 0x28, 0x28, [fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_LDS_SSHORT = "global_load_lds_sshort", Global, 0x29, 0x29, [fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_LDS_DWORD = "global_load_lds_dword", Global, 0x2A, 0x2A, [fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_LDS_DWORDX3 = "global_load_lds_dwordx3", Global, NA, 0x7E, [fvaddr(), fsaddr()], NONE;
    GLOBAL_LOAD_LDS_DWORDX4 = "global_load_lds_dwordx4", Global, NA, 0x7D, [fvaddr(), fsaddr()], NONE;
    V_ASHR_PK_I8_I32 = "v_ashr_pk_i8_i32", Vop3, NA, 0x265, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], OPSEL;
    V_ASHR_PK_U8_I32 = "v_ashr_pk_u8_i32", Vop3, NA, 0x266, [vd(B32), vs0(B32), vs1(B32), vs2(B32)], OPSEL;
    V_MFMA_F32_16X16X128_F8F6F4 = "v_mfma_f32_16x16x128_f8f6f4", Mai, NA, 0x2D, [md(4), ma(8), mb(8), mc(4)], F8F6F4;
    V_MFMA_F32_32X32X64_F8F6F4 = "v_mfma_f32_32x32x64_f8f6f4", Mai, NA, 0x2E, [md(16), ma(8), mb(8), mc(16)], F8F6F4;
    V_MFMA_SCALE_F32_16X16X128_F8F6F4 = "v_mfma_scale_f32_16x16x128_f8f6f4", Mai, NA, 0x2D, [md(4), ma(8), mb(8), mc(4), mscale(Field::ScaleSrc0), mscale(Field::ScaleSrc1)], F8F6F4 | SCALED;
    V_MFMA_SCALE_F32_32X32X64_F8F6F4 = "v_mfma_scale_f32_32x32x64_f8f6f4", Mai, NA, 0x2E, [md(16), ma(8), mb(8), mc(16), mscale(Field::ScaleSrc0), mscale(Field::ScaleSrc1)], F8F6F4 | SCALED;
    SCRATCH_LOAD_UBYTE = "scratch_load_ubyte", Scratch, 0x10, 0x10, [fvdst(1), svaddr(), ssaddr()], NONE;
    SCRATCH_LOAD_SBYTE = "scratch_load_sbyte", Scratch, 0x11, 0x11, [fvdst(1), svaddr(), ssaddr()], NONE;
    SCRATCH_LOAD_USHORT = "scratch_load_ushort", Scratch, 0x12, 0x12, [fvdst(1), svaddr(), ssaddr()], NONE;
    SCRATCH_LOAD_SSHORT = "scratch_load_sshort", Scratch, 0x13, 0x13, [fvdst(1), svaddr(), ssaddr()], NONE;
    SCRATCH_LOAD_DWORD = "scratch_load_dword", Scratch, 0x14, 0x14, [fvdst(1), svaddr(), ssaddr()], NONE;
    SCRATCH_LOAD_DWORDX2 = "scratch_load_dwordx2", Scratch, 0x15, 0x15, [fvdst(2), svaddr(), ssaddr()], NONE;
    SCRATCH_LOAD_DWORDX3 = "scratch_load_dwordx3", Scratch, 0x16, 0x16, [fvdst(3), svaddr(), ssaddr()], NONE;
    SCRATCH_LOAD_DWORDX4 = "scratch_load_dwordx4", Scratch, 0x17, 0x17, [fvdst(4), svaddr(), ssaddr()], NONE;
    SCRATCH_STORE_BYTE = "scratch_store_byte", Scratch, 0x18, 0x18, [svaddr(), fdata(1), ssaddr()], NONE;
    SCRATCH_STORE_SHORT = "scratch_store_short", Scratch, 0x1A, 0x1A, [svaddr(), fdata(1), ssaddr()], NONE;
    SCRATCH_STORE_DWORD = "scratch_store_dword", Scratch, 0x1C, 0x1C, [svaddr(), fdata(1), ssaddr()], NONE;
    SCRATCH_STORE_DWORDX2 = "scratch_store_dwordx2", Scratch, 0x1D, 0x1D, [svaddr(), fdata(2), ssaddr()], NONE;
    SCRATCH_STORE_DWORDX3 = "scratch_store_dwordx3", Scratch, 0x1E, 0x1E, [svaddr(), fdata(3), ssaddr()], NONE;
    SCRATCH_STORE_DWORDX4 = "scratch_store_dwordx4", Scratch, 0x1F, 0x1F, [svaddr(), fdata(4), ssaddr()], NONE;
}
