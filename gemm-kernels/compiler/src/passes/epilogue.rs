//! Epilogue: `C = alpha * acc + beta * C` in f32, one rounding to C's dtype. A uniform
//! branch on `beta == 0` (either sign) selects a path that never loads C, so NaN or
//! garbage in C cannot leak (gemm-core `GemmProblem::beta`). `alpha * acc` uses
//! `v_mul_legacy_f32` (0 * anything = 0) so that `alpha == 0` ignores A and B as BLAS
//! specifies. Rows `>= m` and columns `>= n` are not stored: their per-lane offsets are
//! replaced by one past NUM_RECORDS (ISA.md §2.3: OOB stores write nothing).

use crate::ir::{EpiloguePlan, Kernel, TileOp};
use gemm_core::DType;

/// Why the pass declined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Reason {
    #[error("output dtype {0} is not supported (f32, bf16, f16 are)")]
    OutputDtype(DType),
    #[error("the kernel has no epilogue operation")]
    NoEpilogue,
    #[error("MFMA shape {0}x{1} has no epilogue lowering (square shapes with whole register quads only)")]
    Shape(u32, u32),
}

/// Applies the pass.
pub fn run(mut k: Kernel) -> Result<Kernel, Reason> {
    if !matches!(k.config.c_type, DType::F32 | DType::Bf16 | DType::F16) {
        return Err(Reason::OutputDtype(k.config.c_type));
    }
    if !k.epilogue.contains(&TileOp::Epilogue) {
        return Err(Reason::NoEpilogue);
    }
    if k.config.mfma.m != k.config.mfma.n || !k.config.acc_regs().is_multiple_of(4) {
        return Err(Reason::Shape(k.config.mfma.m, k.config.mfma.n));
    }
    k.epilogue_plan = Some(EpiloguePlan { beta_zero_path: true, legacy_alpha: true });
    k.applied.push("epilogue");
    Ok(k)
}
