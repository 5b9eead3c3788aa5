//! The typed errors of problem validation, shared by every entry point.

use crate::dtype::DType;

/// Which operand of `C = alpha * op(A) * op(B) + beta * C` an error is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    A,
    B,
    C,
}

impl core::fmt::Display for Operand {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Operand::A => "A",
            Operand::B => "B",
            Operand::C => "C",
        })
    }
}

/// Everything that can be wrong with a problem before any memory is touched.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Error {
    #[error("unknown dtype value {0} (valid values are 0..=9)")]
    UnknownDType(u32),
    #[error("unknown dtype `{0}` (expected f32, f16, bf16, fp8_e4m3fnuz, fp8_e5m2fnuz, fp8_e4m3, fp8_e5m2, fp6_e2m3, fp6_e3m2, fp4_e2m1)")]
    UnknownDTypeName(String),
    #[error("unknown architecture `{0}` (expected gfx942 or gfx950)")]
    UnknownArch(String),
    #[error("leading dimension of {operand} is {ld} but must be at least {min}")]
    LeadingDimension { operand: Operand, ld: usize, min: usize },
    #[error("buffer of {operand} holds {len} elements but the problem needs {required}")]
    BufferTooSmall { operand: Operand, len: usize, required: usize },
    #[error("size arithmetic overflows: {0}")]
    Overflow(String),
    #[error("shape mismatch: {0}")]
    ShapeMismatch(String),
    #[error("{operand} is declared as {declared} but the buffer holds {actual}")]
    DTypeMismatch { operand: Operand, declared: DType, actual: DType },
    #[error("unsupported dtype combination A={a}, B={b}, C={c}: {why}")]
    UnsupportedDTypes { a: DType, b: DType, c: DType, why: &'static str },
    /// fp6 and fp4 elements have no whole-byte size: only block-scaled GEMMs
    /// (`gemm_core::block_scaled`) take them.
    #[error("{operand} is {dtype}, a sub-byte (packed) type: only block-scaled GEMMs take fp6 and fp4")]
    SubByteDType { operand: Operand, dtype: DType },
    #[error("unsupported layout: {0}")]
    UnsupportedLayout(String),
    #[error("output C of batch items {first} and {second} overlap (stride_c {stride} < {span} elements per item)")]
    OverlappingOutputs { first: usize, second: usize, stride: usize, span: usize },
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

/// Result with the core [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;
