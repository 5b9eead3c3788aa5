//! A decoded or to-be-encoded instruction: table row, encoding variant, operands in
//! LLVM assembly order, and modifiers.

use crate::operand::Operand;
use crate::table::{flags, Format, Op, Presence};
use crate::{Arch, EncodeError};

/// Which encoding of a row is used. Only VOP1/VOP2/VOPC rows have more than one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Enc {
    /// The row's own format (`_e32` for VOP1/VOP2/VOPC).
    #[default]
    Native,
    /// VOP3 encoding of a VOP1/VOP2/VOPC row (`_e64`, ISA.md §4.2 promotion rule).
    E64,
    /// Sub-dword addressing (`_sdwa`, src0 code 249 plus a second dword).
    Sdwa,
    /// Data-parallel primitives (`_dpp`, src0 code 250 plus a second dword).
    Dpp,
}

/// SDWA selectors (LLVM `SDWA9`): `sel` values 0..=3 BYTE_n, 4/5 WORD_n, 6 DWORD;
/// `dst_unused` 0 UNUSED_PAD, 1 UNUSED_SEXT, 2 UNUSED_PRESERVE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sdwa {
    pub dst_sel: u8,
    pub dst_unused: u8,
    pub src0_sel: u8,
    pub src1_sel: u8,
    pub src0_sext: bool,
    pub src1_sext: bool,
}

impl Default for Sdwa {
    fn default() -> Self {
        Sdwa { dst_sel: 6, dst_unused: 2, src0_sel: 6, src1_sel: 6, src0_sext: false, src1_sext: false }
    }
}

/// DPP control (gfx9 `DPP` encoding): 9-bit `ctrl` (quad_perm 0x00–0xFF, row_shl 0x101..,
/// row_shr 0x111.., row_ror 0x121.., wave_shl 0x130, wave_rol 0x134, wave_shr 0x138,
/// wave_ror 0x13C, row_mirror 0x140, row_half_mirror 0x141, row_bcast:15 0x142,
/// row_bcast:31 0x143).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dpp {
    pub ctrl: u16,
    pub row_mask: u8,
    pub bank_mask: u8,
    pub bound_ctrl: bool,
}

impl Default for Dpp {
    fn default() -> Self {
        Dpp { ctrl: 0xE4, row_mask: 0xF, bank_mask: 0xF, bound_ctrl: false }
    }
}

/// Instruction modifiers. Bit `i` of `neg`/`abs`/`neg_hi`/`op_sel`/`op_sel_hi` refers to
/// source `i` (VOP3 `op_sel` bit 3 is the destination).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Mods {
    /// VOP3 `neg`, VOP3P `neg_lo`, f64 MFMA `neg`.
    pub neg: u8,
    pub abs: u8,
    /// VOP3P `neg_hi`.
    pub neg_hi: u8,
    pub op_sel: u8,
    /// VOP3P `op_sel_hi` (3 bits); `Inst::new` sets LLVM's default (all ones, zero for
    /// `v_fma_mix*`).
    pub op_sel_hi: u8,
    pub clamp: bool,
    /// 0 none, 1 `mul:2`, 2 `mul:4`, 3 `div:2`.
    pub omod: u8,
    pub cbsz: u8,
    pub abid: u8,
    /// gfx950 `v_bitop3_*` truth table (`bitop3:N`): bit `(a<<2)|(b<<1)|c` of it is the
    /// result for source bits a, b, c (encoded in the neg/abs/omod fields).
    pub bitop3: u8,
    pub blgp: u8,
    /// DS `offset`/`offset0`, MUBUF/FLAT/GLOBAL `offset`, SMEM `offset:` after an SGPR.
    pub offset: i32,
    /// DS `offset1`.
    pub offset1: u8,
    pub offen: bool,
    pub idxen: bool,
    pub lds: bool,
    pub sc0: bool,
    pub sc1: bool,
    pub nt: bool,
    /// SMEM `glc`.
    pub glc: bool,
    pub gds: bool,
    pub sdwa: Sdwa,
    pub dpp: Dpp,
}

/// One machine instruction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    pub op: Op,
    pub enc: Enc,
    /// Operands in LLVM assembly order (the row's slots that are present, see
    /// [`Inst::slots`]).
    pub operands: Vec<Operand>,
    pub mods: Mods,
}

impl Inst {
    /// A new instruction with LLVM's default modifiers.
    pub fn new(op: Op, operands: &[Operand]) -> Inst {
        let mut mods = Mods::default();
        if op.def().format == Format::Vop3p && !op.def().has(flags::MIX) {
            mods.op_sel_hi = 0b111;
        }
        Inst { op, enc: Enc::Native, operands: operands.to_vec(), mods }
    }
    /// Use the VOP3 (`_e64`) encoding of a VOP1/VOP2/VOPC row.
    pub fn e64(mut self) -> Self {
        self.enc = Enc::E64;
        self
    }
    pub fn sdwa(mut self, sdwa: Sdwa) -> Self {
        self.enc = Enc::Sdwa;
        self.mods.sdwa = sdwa;
        self
    }
    pub fn dpp(mut self, dpp: Dpp) -> Self {
        self.enc = Enc::Dpp;
        self.mods.dpp = dpp;
        self
    }
    pub fn clamp(mut self) -> Self {
        self.mods.clamp = true;
        self
    }
    pub fn neg(mut self, src: usize) -> Self {
        self.mods.neg |= 1 << src;
        self
    }
    pub fn abs(mut self, src: usize) -> Self {
        self.mods.abs |= 1 << src;
        self
    }
    pub fn op_sel(mut self, bits: u8) -> Self {
        self.mods.op_sel = bits;
        self
    }
    pub fn op_sel_hi(mut self, bits: u8) -> Self {
        self.mods.op_sel_hi = bits;
        self
    }
    /// MFMA broadcast controls.
    pub fn cbsz_abid_blgp(mut self, cbsz: u8, abid: u8, blgp: u8) -> Self {
        self.mods.cbsz = cbsz;
        self.mods.abid = abid;
        self.mods.blgp = blgp;
        self
    }
    /// `v_bitop3_*` truth table.
    pub fn bitop3(mut self, table: u8) -> Self {
        self.mods.bitop3 = table;
        self
    }
    pub fn offset(mut self, offset: i32) -> Self {
        self.mods.offset = offset;
        self
    }
    /// DS two-address offsets.
    pub fn offsets(mut self, offset0: u8, offset1: u8) -> Self {
        self.mods.offset = offset0 as i32;
        self.mods.offset1 = offset1;
        self
    }
    pub fn offen(mut self) -> Self {
        self.mods.offen = true;
        self
    }
    pub fn idxen(mut self) -> Self {
        self.mods.idxen = true;
        self
    }
    /// MUBUF load straight into LDS (no vdata operand).
    pub fn lds(mut self) -> Self {
        self.mods.lds = true;
        self
    }
    pub fn sc0(mut self) -> Self {
        self.mods.sc0 = true;
        self
    }
    pub fn sc1(mut self) -> Self {
        self.mods.sc1 = true;
        self
    }
    pub fn nt(mut self) -> Self {
        self.mods.nt = true;
        self
    }
    pub fn glc(mut self) -> Self {
        self.mods.glc = true;
        self
    }
    /// The row's operand slots present for these modifiers, in assembly order; zip with
    /// `operands` to learn each operand's field, class, type and access.
    pub fn slots(&self) -> Vec<&'static crate::table::Opnd> {
        let def = self.op.def();
        def.operands
            .iter()
            .filter(|o| match o.presence {
                Presence::Always => true,
                Presence::UnlessLds => !self.mods.lds,
                Presence::IfReturn => self.mods.sc0,
            })
            .collect()
    }
    /// The operand in `field`, if present.
    pub fn operand(&self, field: crate::table::Field) -> Option<Operand> {
        self.slots().iter().zip(&self.operands).find(|(s, _)| s.field == field).map(|(_, o)| *o)
    }
    /// Machine words (little-endian dwords) for `arch`.
    pub fn encode(&self, arch: Arch) -> Result<Vec<u32>, EncodeError> {
        crate::encode::encode(self, arch)
    }
    /// Machine code bytes for `arch`.
    pub fn encode_bytes(&self, arch: Arch) -> Result<Vec<u8>, EncodeError> {
        Ok(self.encode(arch)?.iter().flat_map(|w| w.to_le_bytes()).collect())
    }
}
