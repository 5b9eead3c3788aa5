//! Operands: register files, tuples, special registers, inline constants and literals.
//!
//! The 9-bit source-operand code space follows `shared/reference/ISA.md` §4.5 (LLVM
//! `SIDefines.h`/`SIRegisterInfo.td` on the LLVM side): 0–101 SGPRs, 102–127 special
//! registers and trap temporaries, 128–208 inline integers, 240–248 inline floats,
//! 255 a 32-bit literal, 256–511 VGPRs (or AGPRs when an `acc` bit selects that file).

use std::fmt;

/// A register file that holds numbered registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegFile {
    /// Scalar registers `s0`..`s101`.
    Sgpr,
    /// Vector registers `v0`..`v255`.
    Vgpr,
    /// Accumulation registers `a0`..`a255` (gfx90a+ unified file, selected by `acc` bits).
    Agpr,
    /// Trap temporaries `ttmp0`..`ttmp15` (codes 108–123).
    Ttmp,
}

/// A register tuple: `count` consecutive registers of `file` starting at `index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reg {
    pub file: RegFile,
    pub index: u16,
    pub count: u8,
}

/// Named scalar registers and read-only hardware values (ISA.md §4.5).
///
/// The `*Lo`/`*Hi` variants are 32-bit halves; the unsuffixed ones are the 64-bit pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    FlatScratchLo,
    FlatScratchHi,
    FlatScratch,
    XnackMaskLo,
    XnackMaskHi,
    XnackMask,
    VccLo,
    VccHi,
    Vcc,
    M0,
    ExecLo,
    ExecHi,
    Exec,
    SrcSharedBase,
    SrcSharedLimit,
    SrcPrivateBase,
    SrcPrivateLimit,
    SrcPopsExitingWaveId,
    Vccz,
    Execz,
    Scc,
}

const SPECIALS: &[(Special, u16, u8, &str)] = &[
    (Special::FlatScratchLo, 102, 1, "flat_scratch_lo"),
    (Special::FlatScratchHi, 103, 1, "flat_scratch_hi"),
    (Special::FlatScratch, 102, 2, "flat_scratch"),
    (Special::XnackMaskLo, 104, 1, "xnack_mask_lo"),
    (Special::XnackMaskHi, 105, 1, "xnack_mask_hi"),
    (Special::XnackMask, 104, 2, "xnack_mask"),
    (Special::VccLo, 106, 1, "vcc_lo"),
    (Special::VccHi, 107, 1, "vcc_hi"),
    (Special::Vcc, 106, 2, "vcc"),
    (Special::M0, 124, 1, "m0"),
    (Special::ExecLo, 126, 1, "exec_lo"),
    (Special::ExecHi, 127, 1, "exec_hi"),
    (Special::Exec, 126, 2, "exec"),
    (Special::SrcSharedBase, 235, 1, "src_shared_base"),
    (Special::SrcSharedLimit, 236, 1, "src_shared_limit"),
    (Special::SrcPrivateBase, 237, 1, "src_private_base"),
    (Special::SrcPrivateLimit, 238, 1, "src_private_limit"),
    (Special::SrcPopsExitingWaveId, 239, 1, "src_pops_exiting_wave_id"),
    (Special::Vccz, 251, 1, "src_vccz"),
    (Special::Execz, 252, 1, "src_execz"),
    (Special::Scc, 253, 1, "src_scc"),
];

impl Special {
    /// The 9-bit operand code of the first register.
    pub fn code(self) -> u16 {
        SPECIALS.iter().find(|s| s.0 == self).map(|s| s.1).unwrap_or(0)
    }
    /// Number of 32-bit registers this name covers (1 or 2).
    pub fn count(self) -> u8 {
        SPECIALS.iter().find(|s| s.0 == self).map(|s| s.2).unwrap_or(1)
    }
    /// LLVM's spelling.
    pub fn name(self) -> &'static str {
        SPECIALS.iter().find(|s| s.0 == self).map(|s| s.3).unwrap_or("")
    }
    /// The special register with this code and width, if there is one.
    pub fn from_code(code: u16, count: u8) -> Option<Special> {
        SPECIALS.iter().find(|s| s.1 == code && s.2 == count).map(|s| s.0)
    }
    /// Look a name up (also accepts `vccz`, `execz`, `scc`, LLVM's short aliases).
    pub fn from_name(name: &str) -> Option<Special> {
        let name = match name {
            "vccz" => "src_vccz",
            "execz" => "src_execz",
            "scc" => "src_scc",
            "shared_base" => "src_shared_base",
            "shared_limit" => "src_shared_limit",
            "private_base" => "src_private_base",
            "private_limit" => "src_private_limit",
            "pops_exiting_wave_id" => "src_pops_exiting_wave_id",
            n => n,
        };
        SPECIALS.iter().find(|s| s.3 == name).map(|s| s.0)
    }
    /// Whether the value can be written (destinations); the `src_*` values are read-only.
    pub fn writable(self) -> bool {
        self.code() < 128
    }
}

/// The inline floating-point constants (codes 240–248, ISA.md §4.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InlineFloat {
    Half,
    NegHalf,
    One,
    NegOne,
    Two,
    NegTwo,
    Four,
    NegFour,
    /// 1/(2π): 0x3E22F983 as f32, 0x3118 as f16, 0x3FC45F306DC9C882 as f64.
    InvTwoPi,
}

const FLOATS: [InlineFloat; 9] = [
    InlineFloat::Half,
    InlineFloat::NegHalf,
    InlineFloat::One,
    InlineFloat::NegOne,
    InlineFloat::Two,
    InlineFloat::NegTwo,
    InlineFloat::Four,
    InlineFloat::NegFour,
    InlineFloat::InvTwoPi,
];
const F32_BITS: [u32; 9] = [
    0x3F00_0000,
    0xBF00_0000,
    0x3F80_0000,
    0xBF80_0000,
    0x4000_0000,
    0xC000_0000,
    0x4080_0000,
    0xC080_0000,
    0x3E22_F983,
];
const F16_BITS: [u16; 9] = [0x3800, 0xB800, 0x3C00, 0xBC00, 0x4000, 0xC000, 0x4400, 0xC400, 0x3118];
const BF16_BITS: [u16; 9] = [0x3F00, 0xBF00, 0x3F80, 0xBF80, 0x4000, 0xC000, 0x4080, 0xC080, 0x3E22];
const F64_BITS: [u64; 9] = [
    0x3FE0_0000_0000_0000,
    0xBFE0_0000_0000_0000,
    0x3FF0_0000_0000_0000,
    0xBFF0_0000_0000_0000,
    0x4000_0000_0000_0000,
    0xC000_0000_0000_0000,
    0x4010_0000_0000_0000,
    0xC010_0000_0000_0000,
    0x3FC4_5F30_6DC9_C882,
];
const FLOAT_TEXT: [&str; 9] = ["0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0", "0.15915494"];

impl InlineFloat {
    fn idx(self) -> usize {
        FLOATS.iter().position(|f| *f == self).unwrap_or(0)
    }
    /// Operand code 240..=248.
    pub fn code(self) -> u16 {
        240 + self.idx() as u16
    }
    pub fn from_code(code: u16) -> Option<Self> {
        (240..=248).contains(&code).then(|| FLOATS[(code - 240) as usize])
    }
    /// The text LLVM prints (and parses back to the same constant).
    pub fn text(self) -> &'static str {
        FLOAT_TEXT[self.idx()]
    }
    /// Bit pattern of the constant for an operand of type `ty`.
    pub fn bits(self, ty: Ty) -> u64 {
        let i = self.idx();
        match ty {
            Ty::F64 => F64_BITS[i],
            Ty::F16 | Ty::B16 | Ty::V2F16 | Ty::V2B16 => F16_BITS[i] as u64,
            Ty::BF16 | Ty::V2BF16 => BF16_BITS[i] as u64,
            _ => F32_BITS[i] as u64,
        }
    }
    /// Parse LLVM's decimal spelling of an inline float.
    pub fn from_text(s: &str) -> Option<Self> {
        let v: f64 = s.parse().ok()?;
        FLOATS.iter().copied().find(|f| (f64::from_bits(F64_BITS[f.idx()]) - v).abs() < 1e-7)
    }
}

/// The data type an operand slot carries. It decides how inline constants expand and
/// which literals LLVM folds into inline constants (LLVM `AMDGPUBaseInfo.cpp`
/// `isInlinableLiteral32/64/16`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    B16,
    F16,
    BF16,
    B32,
    F32,
    B64,
    F64,
    V2B16,
    V2F16,
    V2BF16,
    V2F32,
}

impl Ty {
    /// Whether source modifiers (neg/abs) apply to this type.
    pub fn is_float(self) -> bool {
        matches!(self, Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64 | Ty::V2F16 | Ty::V2BF16 | Ty::V2F32)
    }
    /// Size in 32-bit registers.
    pub const fn dwords(self) -> u8 {
        match self {
            Ty::B64 | Ty::F64 | Ty::V2F32 => 2,
            _ => 1,
        }
    }
    pub fn is_16bit(self) -> bool {
        matches!(self, Ty::B16 | Ty::F16 | Ty::BF16)
    }
}

/// One operand of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A numbered register or tuple.
    Reg(Reg),
    /// A named special register or hardware value.
    Special(Special),
    /// An inline integer constant, −16..=64 (codes 128–208).
    Int(i8),
    /// An inline floating-point constant (codes 240–248).
    Float(InlineFloat),
    /// A 32-bit literal dword that follows the instruction (code 255). For an f64 operand
    /// it holds the high 32 bits (the low half is zero), as in LLVM.
    Lit(u32),
    /// An immediate encoded in an instruction field (simm16, SMEM offset, `hwreg`...).
    Imm(i64),
    /// `off`: no address register (MUBUF vaddr, global saddr).
    Off,
}

/// `sN`
pub fn s(index: u16) -> Operand {
    Operand::Reg(Reg { file: RegFile::Sgpr, index, count: 1 })
}
/// `s[index:index+count-1]`
pub fn sr(index: u16, count: u8) -> Operand {
    Operand::Reg(Reg { file: RegFile::Sgpr, index, count })
}
/// `vN`
pub fn v(index: u16) -> Operand {
    Operand::Reg(Reg { file: RegFile::Vgpr, index, count: 1 })
}
/// `v[index:index+count-1]`
pub fn vr(index: u16, count: u8) -> Operand {
    Operand::Reg(Reg { file: RegFile::Vgpr, index, count })
}
/// `aN`
pub fn a(index: u16) -> Operand {
    Operand::Reg(Reg { file: RegFile::Agpr, index, count: 1 })
}
/// `a[index:index+count-1]`
pub fn ar(index: u16, count: u8) -> Operand {
    Operand::Reg(Reg { file: RegFile::Agpr, index, count })
}
/// An integer: an inline constant when −16..=64, else a 32-bit literal.
pub fn int(value: i64) -> Operand {
    if (-16..=64).contains(&value) {
        Operand::Int(value as i8)
    } else {
        Operand::Lit(value as u32)
    }
}
/// An immediate field value (offsets, simm16, counts).
pub fn imm(value: i64) -> Operand {
    Operand::Imm(value)
}
pub const VCC: Operand = Operand::Special(Special::Vcc);
pub const EXEC: Operand = Operand::Special(Special::Exec);
pub const M0: Operand = Operand::Special(Special::M0);
pub const OFF: Operand = Operand::Off;

/// Encode a literal for `ty` as LLVM does: a value equal to an inline constant becomes
/// that constant (ISA.md §4.5: `0x3e22f983` → 248).
pub fn fold_literal(lit: u32, ty: Ty) -> Operand {
    match ty {
        Ty::F64 => {
            let i = lit as i32;
            if (-16..=64).contains(&i) {
                return Operand::Int(i as i8);
            }
            let full = (lit as u64) << 32;
            if let Some(p) = F64_BITS.iter().position(|b| *b == full) {
                return Operand::Float(FLOATS[p]);
            }
            Operand::Lit(lit)
        }
        Ty::B64 => {
            let i = lit as i32 as i64;
            if (-16..=64).contains(&i) && lit < 0x8000_0000 {
                return Operand::Int(i as i8);
            }
            Operand::Lit(lit)
        }
        Ty::B16 | Ty::F16 | Ty::BF16 => {
            let i = lit as u16 as i16;
            if lit <= 0xFFFF && (-16..=64).contains(&i) {
                return Operand::Int(i as i8);
            }
            let tbl = if ty == Ty::BF16 { &BF16_BITS } else { &F16_BITS };
            if lit <= 0xFFFF {
                if let Some(p) = tbl.iter().position(|b| *b as u32 == lit) {
                    return Operand::Float(FLOATS[p]);
                }
            }
            Operand::Lit(lit)
        }
        _ => {
            let i = lit as i32;
            if (-16..=64).contains(&i) {
                return Operand::Int(i as i8);
            }
            if let Some(p) = F32_BITS.iter().position(|b| *b == lit) {
                return Operand::Float(FLOATS[p]);
            }
            Operand::Lit(lit)
        }
    }
}

impl Operand {
    /// The register tuple, if this operand names numbered registers.
    pub fn reg(&self) -> Option<Reg> {
        match self {
            Operand::Reg(r) => Some(*r),
            _ => None,
        }
    }
    /// Whether this operand is a scalar register, special register or `m0`/`exec`/`vcc`.
    pub fn is_scalar_reg(&self) -> bool {
        matches!(self, Operand::Reg(Reg { file: RegFile::Sgpr | RegFile::Ttmp, .. }))
            || matches!(self, Operand::Special(s) if s.code() < 128)
    }
    /// The value an emulator reads for a constant operand of type `ty`: inline constants
    /// expanded per type, literals as LLVM defines them (f64: high half). `None` for
    /// registers.
    pub fn const_bits(&self, ty: Ty) -> Option<u64> {
        match *self {
            Operand::Int(i) => Some(match ty {
                Ty::B16 | Ty::F16 | Ty::BF16 => i as i16 as u16 as u64,
                Ty::B64 | Ty::F64 => i as i64 as u64,
                _ => i as i32 as u32 as u64,
            }),
            Operand::Float(f) => Some(f.bits(ty)),
            Operand::Lit(l) => Some(match ty {
                Ty::F64 => (l as u64) << 32,
                Ty::B64 => l as i32 as i64 as u64,
                _ => l as u64,
            }),
            Operand::Imm(i) => Some(i as u64),
            _ => None,
        }
    }
    /// 9-bit source code (ISA.md §4.5). VGPR and AGPR both give 256+n.
    pub fn src_code(&self) -> Option<u16> {
        Some(match *self {
            Operand::Reg(r) => match r.file {
                RegFile::Sgpr => r.index,
                RegFile::Ttmp => 108 + r.index,
                RegFile::Vgpr | RegFile::Agpr => 256 + r.index,
            },
            Operand::Special(s) => s.code(),
            Operand::Int(i) if i >= 0 => 128 + i as u16,
            Operand::Int(i) => 192 + (-(i as i16)) as u16,
            Operand::Float(f) => f.code(),
            Operand::Lit(_) => 255,
            _ => return None,
        })
    }
    /// Decode a 9-bit source code for a slot of `count` registers. `acc` picks AGPRs
    /// for codes 256+.
    pub fn from_src_code(code: u16, count: u8, acc: bool) -> Option<Operand> {
        Some(match code {
            0..=101 => Operand::Reg(Reg { file: RegFile::Sgpr, index: code, count }),
            108..=123 => Operand::Reg(Reg { file: RegFile::Ttmp, index: code - 108, count }),
            128..=192 => Operand::Int((code - 128) as i8),
            193..=208 => Operand::Int(-((code - 192) as i16) as i8),
            240..=248 => Operand::Float(InlineFloat::from_code(code)?),
            256..=511 => {
                Operand::Reg(Reg { file: if acc { RegFile::Agpr } else { RegFile::Vgpr }, index: code - 256, count })
            }
            c => Operand::Special(Special::from_code(c, count).or_else(|| {
                // 64-bit slot naming a special that only has a 32-bit name.
                if count == 1 {
                    None
                } else {
                    Special::from_code(c, 1)
                }
            })?),
        })
    }
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = match self.file {
            RegFile::Sgpr => "s",
            RegFile::Vgpr => "v",
            RegFile::Agpr => "a",
            RegFile::Ttmp => "ttmp",
        };
        if self.count == 1 {
            write!(f, "{p}{}", self.index)
        } else {
            write!(f, "{p}[{}:{}]", self.index, self.index + self.count as u16 - 1)
        }
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Reg(r) => write!(f, "{r}"),
            Operand::Special(s) => f.write_str(s.name()),
            Operand::Int(i) => write!(f, "{i}"),
            Operand::Float(x) => f.write_str(x.text()),
            Operand::Lit(l) => write!(f, "0x{l:x}"),
            Operand::Imm(i) => write!(f, "{i}"),
            Operand::Off => f.write_str("off"),
        }
    }
}
