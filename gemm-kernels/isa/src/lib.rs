//! gemm-isa: the CDNA3 (gfx942) / CDNA4 (gfx950) instruction set as data.
//!
//! One table ([`table::TABLE`], one row per instruction) drives the encoder
//! ([`Inst::encode`]), the decoder ([`decode_all`]), the LLVM-syntax printer
//! (`Display for Inst`) and the assembler ([`parse_line`], [`assemble`]). LLVM 22
//! (`llvm-mc-22`) is the oracle for every byte; see the crate's tests.
//!
//! ```
//! use gemm_isa::{Arch, Inst, Op, operand::{ar, vr}};
//! let mfma = Inst::new(Op::V_MFMA_F32_32X32X8_BF16, &[ar(0, 16), vr(0, 2), vr(2, 2), ar(0, 16)]);
//! assert_eq!(mfma.encode(Arch::Gfx942).unwrap(), vec![0xD3E08000, 0x04020500]);
//! assert_eq!(mfma.to_string(), "v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], a[0:15]");
//! let bytes = mfma.encode_bytes(Arch::Gfx942).unwrap();
//! let decoded = gemm_isa::decode_all(&bytes, Arch::Gfx942).unwrap();
//! assert_eq!(decoded[0].1, mfma);
//! ```

pub mod asm;
pub mod decode;
pub mod encode;
pub mod error;
pub mod inst;
mod lookup;
pub mod operand;
pub mod print;
pub mod sample;
pub mod table;

pub use asm::{assemble, parse_line};
pub use decode::{decode_all, decode_one};
pub use error::{AsmError, DecodeError, EncodeError};
pub use inst::{Dpp, Enc, Inst, Mods, Sdwa};
pub use operand::{Operand, Reg, RegFile, Special, Ty};
pub use table::{Format, InstDef, Op, TABLE};

/// Target architecture: the one `gemm_core::Arch` every crate speaks. Its discriminant
/// (gfx942 = 0, gfx950 = 1) indexes `InstDef::opcodes`.
pub use gemm_core::Arch;
