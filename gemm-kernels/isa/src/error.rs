//! Typed errors of the encoder, decoder and assembler.

use crate::Arch;
use thiserror::Error;

/// Why an instruction cannot be encoded. Every variant corresponds to a form that
/// `llvm-mc-22` rejects for the same arch (checked by `tests/golden.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// The instruction does not exist on this arch (LLVM: "instruction not supported on
    /// this GPU"), e.g. the gfx950-only double-rate MFMAs on gfx942.
    #[error("{op}: instruction not supported on {arch}")]
    NotOnArch { op: &'static str, arch: Arch },
    /// The encoding variant (`_e64`, `_sdwa`, `_dpp`) does not exist for this row.
    #[error("{op}: no {enc} encoding")]
    NoSuchEncoding { op: &'static str, enc: &'static str },
    #[error("{op}: expected {expected} operands, got {found}")]
    OperandCount { op: &'static str, expected: usize, found: usize },
    /// An operand of the wrong kind for its slot (LLVM: "invalid operand for instruction").
    #[error("{op}: operand {index} ({operand}) is invalid: {why}")]
    InvalidOperand { op: &'static str, index: usize, operand: String, why: &'static str },
    /// Register tuple alignment (ISA.md §1.5: even VGPR/AGPR tuples on gfx90a+, SGPR
    /// pairs even and larger SGPR tuples 4-aligned).
    #[error("{op}: operand {index} ({operand}) has invalid register alignment")]
    Misaligned { op: &'static str, index: usize, operand: String },
    /// More than one SGPR/literal read through the constant bus (gfx9 limit is one;
    /// LLVM `AMDGPUAsmParser::validateConstantBusLimitations`).
    #[error("{op}: invalid operand (violates constant bus restrictions)")]
    ConstantBus { op: &'static str },
    /// gfx9 has at most one literal, and none in VOP3/VOP3P (LLVM: "literal operands are
    /// not supported").
    #[error("{op}: literal operands are not supported here")]
    Literal { op: &'static str },
    /// A modifier the instruction does not take (flags in `table.rs`, probed from LLVM).
    #[error("{op}: modifier {modifier} is not supported")]
    Modifier { op: &'static str, modifier: &'static str },
    /// A returning (`sc0`) FLAT/GLOBAL atomic with AGPR data in a form LLVM 22 lacks
    /// (table flags `NO_AGPR_RTN`, `NO_AGPR_RTN_SC1`): `global_atomic_add_f32` and
    /// `global_atomic_pk_add_f16` have no AGPR returning form ("operands are not valid for
    /// this GPU or mode"); the f64 add/min/max atomics have one without `sc1` (llvm-mc-22
    /// silently drops the bit, its disassembler rejects it).
    #[error("{op}: {why}")]
    AgprAtomic { op: &'static str, why: &'static str },
    #[error("{op}: {what} {value} out of range")]
    OutOfRange { op: &'static str, what: &'static str, value: i64 },
}

/// Why bytes could not be decoded; always names the byte offset of the instruction.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    #[error("offset {offset:#x}: unknown instruction word {word:#010x}")]
    Unknown { offset: usize, word: u32 },
    #[error("offset {offset:#x}: instruction truncated (needs {needed} bytes)")]
    Truncated { offset: usize, needed: usize },
    #[error("offset {offset:#x}: invalid encoding {word:#010x}: {why}")]
    Invalid { offset: usize, word: u32, why: &'static str },
}

/// Why assembly text could not be assembled.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AsmError {
    #[error("line {line}: unknown instruction `{mnemonic}`")]
    UnknownMnemonic { line: usize, mnemonic: String },
    #[error("line {line}: cannot parse `{text}`: {why}")]
    Syntax { line: usize, text: String, why: &'static str },
    #[error("line {line}: {source}")]
    Encode { line: usize, source: EncodeError },
}
