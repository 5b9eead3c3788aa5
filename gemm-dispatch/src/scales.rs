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
//! bf16 or f16). The host backend ([`host_gemm_scaled_bytes`]) computes the same steps on its
//! own f32 sums, so host and GPU agree bit for bit whenever the sums are exact (and to the
//! rounding of the summation order otherwise).
//!
//! Row/column are the problem's own terms whatever its layout: a row-major problem runs as the
//! column-major `C^T = op(B)^T op(A)^T` (`kernel_plan`), so its row vector becomes the kernel's
//! column vector and its `scale_a` the kernel's `scale_b`.

use crate::backend::{typed, typed_mut, Backend};
use crate::error::{Error, Result};
use gemm_core::{bf16, f16, DType, GemmProblem, Layout, Operand};

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
pub(crate) fn check_spans(p: &GemmProblem, row: Option<usize>, col: Option<usize>) -> Result<(), ScaleError> {
    check_dtypes(p)?;
    check_len(ScaleAxis::Row, row, p.m, true)?;
    check_len(ScaleAxis::Column, col, p.n, true)
}

/// The kernel argument bytes of an fp8 plan with scales: the plain arguments, then the scales
/// and the vectors' device addresses (0: none), swapped for a row-major problem (its A is the
/// kernel's B). `Err` names an argument the entry lacks.
pub(crate) fn scaled_kernargs(
    plan: &crate::kernel_plan::KernelPlan,
    p: &GemmProblem,
    addresses: [u64; 3],
    scales: &Fp8Scales,
    row: u64,
    col: u64,
) -> std::result::Result<Vec<u8>, String> {
    let mut args = plan.kernargs(p, addresses[0], addresses[1], addresses[2])?;
    let swap = plan.problem.swap_ab;
    let (sa, sb) = if swap { (scales.b, scales.a) } else { (scales.a, scales.b) };
    let (vr, vc) = if swap { (col, row) } else { (row, col) };
    let want: [(&str, Vec<u8>); 5] = [
        ("scale_a", sa.to_le_bytes().to_vec()),
        ("scale_b", sb.to_le_bytes().to_vec()),
        ("scale_d", scales.d.to_le_bytes().to_vec()),
        ("scale_row", vr.to_le_bytes().to_vec()),
        ("scale_col", vc.to_le_bytes().to_vec()),
    ];
    for (name, bytes) in want {
        let arg = plan
            .entry
            .kernarg
            .iter()
            .find(|a| a.name == name && a.size as usize == bytes.len())
            .ok_or_else(|| format!("kernel {} has no argument {name}", plan.entry.name))?;
        let at = arg.offset as usize;
        args.get_mut(at..at + bytes.len())
            .ok_or_else(|| format!("argument {name} of {} does not fit", plan.entry.name))?
            .copy_from_slice(&bytes);
    }
    Ok(args)
}

/// Element `(i, j)` of C in `p`'s layout.
fn c_index(p: &GemmProblem, i: usize, j: usize) -> usize {
    match p.layout {
        Layout::RowMajor => i * p.ldc + j,
        Layout::ColMajor => i + j * p.ldc,
    }
}

/// The scaled fp8 GEMM on the host, on byte buffers of `p`'s dtypes: the f32 sums from gemm-host
/// (`threads` threads; fp8 decoded exactly), then [`Fp8Scales::apply`] per element of the
/// `m x n` block and one rounding to C's dtype. Elements outside the block are untouched; bad
/// input (buffers, scales, vectors) is an error with C untouched.
#[allow(clippy::too_many_arguments)]
pub fn host_gemm_scaled_bytes(
    p: &GemmProblem,
    a: &[u8],
    b: &[u8],
    c: &mut [u8],
    scales: &Fp8Scales,
    row: Option<&[f32]>,
    col: Option<&[f32]>,
    threads: usize,
) -> Result<()> {
    crate::context::validate_bytes(p, a.len(), b.len(), c.len())?;
    scales.check(p, row.map(<[f32]>::len), col.map(<[f32]>::len))?;
    let spans = p.validate()?;
    if p.m == 0 || p.n == 0 {
        return Ok(());
    }
    let c_in: Vec<f32> = if p.beta != 0.0 {
        match p.c_type {
            DType::F32 => typed::<f32>(c, Operand::C, p.c_type)?[..spans.c].to_vec(),
            DType::F16 => typed::<f16>(c, Operand::C, p.c_type)?[..spans.c].iter().map(|x| x.to_f32()).collect(),
            _ => typed::<bf16>(c, Operand::C, p.c_type)?[..spans.c].iter().map(|x| x.to_f32()).collect(),
        }
    } else {
        vec![]
    };
    // The sums alone: alpha 1, beta 0 (C never read), f32 C of the same leading dimension.
    let p32 = p.with_dtypes(p.a_type, p.b_type, DType::F32).with_scalars(1.0, 0.0);
    let mut acc = vec![0f32; spans.c];
    crate::host::HostBackend::new(0, threads).gemm(&p32, a, b, bytemuck::cast_slice_mut(&mut acc))?;
    let s = scales.combined(p.alpha);
    let mut put: Box<dyn FnMut(usize, f32) + '_> = match p.c_type {
        DType::F32 => {
            let out = typed_mut::<f32>(c, Operand::C, p.c_type)?;
            Box::new(move |i, y| out[i] = y)
        }
        DType::F16 => {
            let out = typed_mut::<f16>(c, Operand::C, p.c_type)?;
            Box::new(move |i, y| out[i] = f16::from_f32(y))
        }
        _ => {
            let out = typed_mut::<bf16>(c, Operand::C, p.c_type)?;
            Box::new(move |i, y| out[i] = bf16::from_f32(y))
        }
    };
    for i in 0..p.m {
        for j in 0..p.n {
            let w = row.map_or(1.0, |r| r[i]) * col.map_or(1.0, |v| v[j]);
            let at = c_index(p, i, j);
            let cv = if p.beta != 0.0 { c_in[at] } else { 0.0 };
            put(at, scales.apply(s, w, acc[at], p.beta, cv));
        }
    }
    Ok(())
}

impl From<ScaleError> for Error {
    fn from(e: ScaleError) -> Self {
        Error::Scale(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::fp8::{Fp8E4M3Fnuz, Fp8E5M2Fnuz};

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

    /// The host result equals the formula evaluated in f64 from the decoded inputs (exact:
    /// multiples of 1/4 and powers of two), in both layouts, with and without vectors, beta = 0
    /// with NaN in C, and a zero alpha ignoring an infinite product.
    #[test]
    fn host_scaled_gemm_is_the_documented_formula() {
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            for (vi, (use_row, use_col)) in
                [(true, true), (true, false), (false, true), (false, false)].into_iter().enumerate()
            {
                let beta = if vi % 2 == 0 { 0.0 } else { 0.5 };
                let p = fp8_problem(5, 7, 9).with_layout(layout).with_scalars(1.5, beta);
                let p = p.with_leading_dims(p.lda + 1, p.ldb + 2, p.ldc + 3);
                let s = p.validate().unwrap();
                let a: Vec<Fp8E4M3Fnuz> =
                    (0..s.a).map(|x| Fp8E4M3Fnuz::from_f32(((x * 7 % 17) as f32 - 8.0) * 0.25)).collect();
                let b: Vec<Fp8E5M2Fnuz> =
                    (0..s.b).map(|x| Fp8E5M2Fnuz::from_f32(((x * 5 % 13) as f32 - 6.0) * 0.25)).collect();
                let c0: Vec<f32> = (0..s.c).map(|x| if beta == 0.0 { f32::NAN } else { x as f32 * 0.5 }).collect();
                let row: Vec<f32> = (0..5).map(|i| [0.5f32, 2.0, -1.0, 4.0, 0.25][i]).collect();
                let col: Vec<f32> = (0..7).map(|j| [1.0f32, -0.5, 2.0, 8.0, 0.125, 1.0, 2.0][j]).collect();
                let scales = Fp8Scales { a: 2.0, b: 0.5, d: 0.25 };
                let mut c = c0.clone();
                host_gemm_scaled_bytes(
                    &p,
                    bytemuck::cast_slice(&a),
                    bytemuck::cast_slice(&b),
                    bytemuck::cast_slice_mut(&mut c),
                    &scales,
                    use_row.then_some(&row[..]),
                    use_col.then_some(&col[..]),
                    1,
                )
                .unwrap();
                let (ea, eb) = match layout {
                    Layout::RowMajor => ((p.lda, 1), (p.ldb, 1)),
                    Layout::ColMajor => ((1, p.lda), (1, p.ldb)),
                };
                for i in 0..p.m {
                    for j in 0..p.n {
                        let mut acc = 0f64;
                        for l in 0..p.k {
                            acc += a[i * ea.0 + l * ea.1].to_f32() as f64 * b[l * eb.0 + j * eb.1].to_f32() as f64;
                        }
                        let w = if use_row { row[i] as f64 } else { 1.0 } * if use_col { col[j] as f64 } else { 1.0 };
                        let at = c_index(&p, i, j);
                        let x = 2.0 * 0.5 * 1.5 * w * acc + if beta != 0.0 { beta as f64 * c0[at] as f64 } else { 0.0 };
                        let want = if x == 0.0 { 0.0 } else { (0.25 * x) as f32 };
                        assert_eq!(c[at].to_bits(), want.to_bits(), "{layout:?} {vi} ({i},{j}): {} vs {want}", c[at]);
                    }
                }
                // Padding of C untouched (NaN stays NaN, numbers stay).
                let pad = c_index(&p, 0, 0) + if layout == Layout::RowMajor { p.n } else { p.m };
                assert_eq!(c[pad].to_bits(), c0[pad].to_bits());
            }
        }
        let s = Fp8Scales::UNIT;
        assert_eq!(s.apply(0.0, 1.0, f32::INFINITY, 0.0, f32::NAN).to_bits(), 0f32.to_bits());
    }
}
