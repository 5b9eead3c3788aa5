//! fp8 scaling: the dequantisation scales of A and B and the output scale of an fp8 GEMM, per
//! tensor and, as an option, per row of op(A) and per column of op(B) (hipBLASLt's scale modes:
//! `HIPBLASLT_MATMUL_DESC_A_SCALE_MODE` scalar or outer vector, `scaleA`/`scaleB`/`scaleD`).
//!
//! ```text
//! D[i,j] = scale_d * (alpha * scale_a * scale_b * (row[i] * col[j] * acc[i,j]) + beta * C[i,j])
//! ```
//!
//! `acc[i,j]` is the f32 sum of the decoded fp8 products `op(A)[i,l] * op(B)[l,j]`; `row`
//! (length m) and `col` (length n) are f32 vectors, each optional (absent: all ones). Evaluated
//! in f32 in this order, each step rounded, exactly as every fp8 catalogue kernel does
//! (gemm-compiler `kernel_args.rs`): `w = row[i] * col[j]`; `x = w * acc`;
//! `s = (scale_a * scale_b) * alpha`; `x = s * x` with the legacy multiply (a zero operand gives
//! +0, so `alpha = 0` ignores Inf/NaN products, as BLAS); `x = fma(beta, C, x)` only when
//! `beta != 0` (C is never read otherwise); `D = scale_d * x`, rounded once to C's dtype (f32,
//! bf16 or f16). The host backend ([`crate::backends::host_ops::gemm_scaled_bytes`]) computes the same steps on its
//! own f32 sums, so host and GPU agree bit for bit whenever the sums are exact (and to the
//! rounding of the summation order otherwise).
//!
//! Row/column are the problem's own terms whatever its layout: a row-major problem runs as the
//! column-major `C^T = op(B)^T op(A)^T` (`kernel_plan`), so its row vector becomes the kernel's
//! column vector and its `scale_a` the kernel's `scale_b`.

use gemm_core::{DType, GemmProblem};

/// The per-tensor scales of an fp8 GEMM (the vectors, when given, are passed beside them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fp8Scales {
    /// Dequantisation scale of A.
    pub a: f32,
    /// Dequantisation scale of B.
    pub b: f32,
    /// Output scale (multiplies the result before its rounding to C's dtype).
    pub d: f32,
}

impl Default for Fp8Scales {
    fn default() -> Self {
        Fp8Scales::UNIT
    }
}

/// Which scale vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleAxis {
    /// One scale per row of op(A) (length m).
    Row,
    /// One scale per column of op(B) (length n).
    Column,
}

impl std::fmt::Display for ScaleAxis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ScaleAxis::Row => "per-row scale vector (op(A), length m)",
            ScaleAxis::Column => "per-column scale vector (op(B), length n)",
        })
    }
}

/// Why fp8 scales were refused; nothing was touched.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScaleError {
    /// Scales apply to fp8 inputs only.
    #[error("fp8 scales were given for {a} x {b} inputs: both A and B must be fp8")]
    NotFp8 { a: DType, b: DType },
    /// The scaled output is f32, bf16 or f16.
    #[error("fp8 scaling writes f32, bf16 or f16, not {0}")]
    OutputType(DType),
    /// A scale vector of the wrong length.
    #[error("the {axis} has {len} elements, the problem needs {need}")]
    VectorLength { axis: ScaleAxis, len: usize, need: usize },
    /// A device-resident scale vector not aligned to its 4-byte elements.
    #[error("the {axis} is not 4-byte aligned")]
    VectorAlignment { axis: ScaleAxis },
}

impl Fp8Scales {
    /// Scales of 1: plain `alpha op(A) op(B) + beta C`.
    pub const UNIT: Fp8Scales = Fp8Scales { a: 1.0, b: 1.0, d: 1.0 };

    /// Checks the scales against `p` and the vectors' lengths (`None`: not given): both inputs
    /// fp8, C f32/bf16/f16, a row vector of exactly m and a column vector of exactly n elements.
    pub fn check(&self, p: &GemmProblem, row: Option<usize>, col: Option<usize>) -> Result<(), ScaleError> {
        check_dtypes(p)?;
        check_len(ScaleAxis::Row, row, p.m, false)?;
        check_len(ScaleAxis::Column, col, p.n, false)
    }

    /// `(scale_a * scale_b) * alpha`, formed once as the kernels do.
    pub fn combined(&self, alpha: f32) -> f32 {
        (self.a * self.b) * alpha
    }

    /// One output element in f32 before the rounding to C's dtype: `s` is
    /// [`Self::combined`], `w` the element's `row[i] * col[j]` (1 without vectors), `acc` the
    /// f32 sum, `c` C's value (read only when `beta != 0`). The steps of the module docs.
    pub fn apply(&self, s: f32, w: f32, acc: f32, beta: f32, c: f32) -> f32 {
        let x = w * acc;
        let mut x = if s == 0.0 || x == 0.0 { 0.0 } else { s * x };
        if beta != 0.0 {
            x = beta.mul_add(c, x);
        }
        self.d * x
    }
}

fn check_dtypes(p: &GemmProblem) -> Result<(), ScaleError> {
    if !(p.a_type.is_fp8() && p.b_type.is_fp8()) {
        return Err(ScaleError::NotFp8 { a: p.a_type, b: p.b_type });
    }
    if !matches!(p.c_type, DType::F32 | DType::Bf16 | DType::F16) {
        return Err(ScaleError::OutputType(p.c_type));
    }
    Ok(())
}

/// A vector's length: exactly `need`, or at least `need` when `at_least` (a device span that
/// runs to the end of its allocation).
fn check_len(axis: ScaleAxis, len: Option<usize>, need: usize, at_least: bool) -> Result<(), ScaleError> {
    match len {
        Some(len) if len < need || (!at_least && len != need) => Err(ScaleError::VectorLength { axis, len, need }),
        _ => Ok(()),
    }
}

/// [`Fp8Scales::check`] for device spans, whose length in elements is what lies between the
/// address and the end of its allocation: at least m / n.
pub fn check_spans(p: &GemmProblem, row: Option<usize>, col: Option<usize>) -> Result<(), ScaleError> {
    check_dtypes(p)?;
    check_len(ScaleAxis::Row, row, p.m, true)?;
    check_len(ScaleAxis::Column, col, p.n, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn fp8_problem(m: usize, n: usize, k: usize) -> GemmProblem {
        GemmProblem::new(m, n, k).with_dtypes(DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz, DType::F32)
    }

    #[test]
    fn bad_scales_are_typed_errors() {
        let p = fp8_problem(4, 6, 2);
        let s = Fp8Scales::UNIT;
        assert_eq!(s.check(&p, Some(4), Some(6)), Ok(()));
        assert_eq!(s.check(&p, None, None), Ok(()));
        assert_eq!(s.check(&p, Some(3), None), Err(ScaleError::VectorLength { axis: ScaleAxis::Row, len: 3, need: 4 }));
        assert_eq!(
            s.check(&p, None, Some(7)),
            Err(ScaleError::VectorLength { axis: ScaleAxis::Column, len: 7, need: 6 })
        );
        let bf = p.with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
        assert_eq!(s.check(&bf, None, None), Err(ScaleError::NotFp8 { a: DType::Bf16, b: DType::Bf16 }));
        let out8 = p.with_dtypes(DType::Fp8E4M3Fnuz, DType::Fp8E4M3Fnuz, DType::Fp8E4M3Fnuz);
        assert_eq!(s.check(&out8, None, None), Err(ScaleError::OutputType(DType::Fp8E4M3Fnuz)));
        assert_eq!(check_spans(&p, Some(9), Some(6)), Ok(()));
        let e: Error = ScaleError::OutputType(DType::F32).into();
        assert!(matches!(e, Error::Scale(_)));
    }
}
