//! The reference GEMM: exact products, f64 accumulation, one rounding to the output type. Every
//! backend is checked against it, with a tolerance derived from the arithmetic the backend is
//! allowed (f32 accumulation of `k` terms, one rounding to C's type).

use crate::dtype::{DType, Element};
use crate::error::{Operand, Result};
use crate::problem::GemmProblem;
use crate::view::{MatMut, MatRef};

/// `C = alpha * op(A) * op(B) + beta * C`, accumulating in f64. Validates first; when
/// `beta == 0` C is only written.
pub fn gemm<A: Element, B: Element, C: Element>(p: &GemmProblem, a: &[A], b: &[B], c: &mut [C]) -> Result<()> {
    let (av, bv, mut cv) = p.views(a, b, c)?;
    for i in 0..p.m {
        for j in 0..p.n {
            let (v, _) = entry(p, &av, &bv, &cv, i, j);
            cv.set(i, j, C::from_f32(v as f32));
        }
    }
    Ok(())
}

/// The exact value of each listed `C[i][j]` (with `c` as C before the GEMM) and the magnitude
/// bounding its rounding error, as [`check`] computes them: for comparisons [`check`] does not
/// make, such as two results against each other within [`allowed_error`]. Validates first;
/// entries outside the m x n result are an error.
pub fn exact_entries<A: Element, B: Element, C: Element>(
    p: &GemmProblem,
    a: &[A],
    b: &[B],
    c: &[C],
    entries: &[(usize, usize)],
) -> Result<Vec<(f64, f64)>> {
    let mut before = c.to_vec();
    let (av, bv, cv) = p.views(a, b, &mut before)?;
    entries
        .iter()
        .map(|&(i, j)| {
            if i >= p.m || j >= p.n {
                return Err(crate::error::Error::InvalidArgument(format!(
                    "entry ({i}, {j}) is outside the {} x {} result",
                    p.m, p.n
                )));
            }
            Ok(entry(p, &av, &bv, &cv, i, j))
        })
        .collect()
}

/// The exact (unrounded) value of `C[i][j]` and the magnitude `|alpha| * sum |a*b| + |beta*c|`
/// that bounds its rounding error.
fn entry<A: Element, B: Element, C: Element>(
    p: &GemmProblem,
    a: &MatRef<'_, A>,
    b: &MatRef<'_, B>,
    c: &MatMut<'_, C>,
    i: usize,
    j: usize,
) -> (f64, f64) {
    let (mut dot, mut mag) = (0.0f64, 0.0f64);
    if !p.product_vanishes() {
        for l in 0..p.k {
            let t = f64::from(a.get(i, l).to_f32()) * f64::from(b.get(l, j).to_f32());
            dot += t;
            mag += t.abs();
        }
    }
    let alpha = f64::from(p.alpha);
    let mut v = if p.product_vanishes() { 0.0 } else { alpha * dot };
    mag *= alpha.abs();
    if p.beta != 0.0 {
        let bc = f64::from(p.beta) * f64::from(c.get(i, j).to_f32());
        v += bc;
        mag += bc.abs();
    }
    (v, mag)
}

/// `len` values spread over [-1, 1), rounded to `T`, from a seed (SplitMix64): the test data of
/// every crate, so a failure reproduces from its seed alone.
pub fn random_values<T: Element>(len: usize, seed: u64) -> Vec<T> {
    let mut state = seed;
    (0..len)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            // 24 random bits -> [-1, 1), exact in f32.
            T::from_f32(((z >> 40) as f32) / (1u64 << 23) as f32 - 1.0)
        })
        .collect()
}

/// How far a computed C is from the reference, in units of the allowed error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CheckReport {
    /// Entries compared.
    pub checked: usize,
    /// Largest `|got - exact|`.
    pub max_abs_err: f64,
    /// Largest `|got - exact| / bound` (<= 1 passes).
    pub max_err_ratio: f64,
    /// The entry with the largest ratio, with its computed and exact values.
    pub worst: Option<(usize, usize, f64, f64)>,
}

impl CheckReport {
    pub fn passed(&self) -> bool {
        self.max_err_ratio <= 1.0
    }
}

/// The error a backend may make on an entry of magnitude `mag` and value `exact`: f32
/// accumulation of `k` terms (`k * eps_f32` relative to the magnitude, doubled for the
/// products and the scalars) plus one rounding to C's dtype. With xf32 allowed for f32
/// inputs ([`GemmProblem::allow_xf32`]) each input may be rounded to 10 mantissa bits
/// (relative error `2^-11` each, so `2^-10 + 2^-22` per product): `2^-10 * mag` more.
pub fn allowed_error(p: &GemmProblem, exact: f64, mag: f64) -> f64 {
    let mut acc = (p.k as f64 + 4.0) * DType::F32.epsilon() * mag;
    if p.allow_xf32 && p.a_type == DType::F32 && p.b_type == DType::F32 {
        acc += XF32_PRODUCT_ERROR * mag;
    }
    let out = p.c_type.epsilon() * exact.abs();
    // Values below the output type's normal range lose absolute precision; allow a few units there.
    let floor = match p.c_type {
        DType::F32 => 1e-37,
        DType::F16 => 1e-6,
        _ => 1e-30,
    };
    acc + out + floor
}

/// The relative error of one product of two xf32-rounded f32 inputs (round to nearest at
/// 10 mantissa bits: `2^-11` each), rounded up: `2^-10 * (1 + 2^-10)`.
pub const XF32_PRODUCT_ERROR: f64 = (1.0 / 1024.0) * (1.0 + 1.0 / 1024.0);

/// Compares `c_after` with the reference computed from `a`, `b` and `c_before` on the given
/// entries (all when `entries` is `None`).
pub fn check<A: Element, B: Element, C: Element>(
    p: &GemmProblem,
    a: &[A],
    b: &[B],
    c_before: &[C],
    c_after: &[C],
    entries: Option<&[(usize, usize)]>,
) -> Result<CheckReport> {
    let mut before = c_before.to_vec();
    let (av, bv, cv) = p.views(a, b, &mut before)?;
    let (rows, cols, rs, cs) = p.strides(Operand::C);
    let after = MatRef::new(c_after, rows, cols, rs, cs, Operand::C)?;
    let mut report = CheckReport { checked: 0, max_abs_err: 0.0, max_err_ratio: 0.0, worst: None };
    let mut visit = |i: usize, j: usize| {
        let (exact, mag) = entry(p, &av, &bv, &cv, i, j);
        let got = f64::from(after.get(i, j).to_f32());
        let err = (got - exact).abs();
        let ratio = if exact.is_nan() && got.is_nan() || got == exact {
            0.0
        } else if err.is_nan() {
            f64::INFINITY
        } else {
            err / allowed_error(p, exact, mag)
        };
        report.checked += 1;
        if err.is_finite() {
            report.max_abs_err = report.max_abs_err.max(err);
        } else if ratio > 0.0 {
            report.max_abs_err = f64::INFINITY;
        }
        if ratio > report.max_err_ratio || report.worst.is_none() {
            report.max_err_ratio = report.max_err_ratio.max(ratio);
            report.worst = Some((i, j, got, exact));
        }
    };
    match entries {
        Some(list) => list.iter().filter(|&&(i, j)| i < p.m && j < p.n).for_each(|&(i, j)| visit(i, j)),
        None => (0..p.m).for_each(|i| (0..p.n).for_each(|j| visit(i, j))),
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{Layout, Transpose};
    use half::bf16;

    #[test]
    fn exact_entries_are_the_reference_values() {
        let p = GemmProblem::new(2, 2, 2).with_scalars(2.0, 0.5);
        let got = exact_entries(
            &p,
            &[1.0f32, 2.0, 3.0, 4.0],
            &[5.0f32, 6.0, 7.0, 8.0],
            &[4.0f32, 0.0, 0.0, -2.0],
            &[(0, 0), (1, 1)],
        );
        // 2 * (5 + 14) + 0.5 * 4 = 40 (magnitude 38 + 2); 2 * (18 + 32) - 0.5 * 2 = 99 (magnitude 100 + 1).
        assert_eq!(got.unwrap(), [(40.0, 40.0), (99.0, 101.0)]);
        assert!(exact_entries(&p, &[0f32; 4], &[0f32; 4], &[0f32; 4], &[(2, 0)]).is_err());
    }

    #[test]
    fn small_product_by_hand() {
        // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50]
        let p = GemmProblem::new(2, 2, 2);
        let mut c = [0f32; 4];
        gemm(&p, &[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], &mut c).unwrap();
        assert_eq!(c, [19.0, 22.0, 43.0, 50.0]);
        // Column-major storage of the same numbers is the transposed matrices: C^T = B^T A^T.
        let p = p.with_layout(Layout::ColMajor);
        gemm(&p, &[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], &mut c).unwrap();
        assert_eq!(c, [23.0, 34.0, 31.0, 46.0]);
        let p = GemmProblem::new(2, 2, 2).with_transposes(Transpose::Yes, Transpose::No).with_scalars(2.0, 0.0);
        gemm(&p, &[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], &mut c).unwrap();
        assert_eq!(c, [2.0 * 26.0, 2.0 * 30.0, 2.0 * 38.0, 2.0 * 44.0]);
    }

    #[test]
    fn beta_zero_never_reads_c_and_beta_scales_it() {
        let p = GemmProblem::new(1, 1, 1).with_scalars(1.0, 0.0);
        let mut c = [f32::NAN];
        gemm(&p, &[2.0], &[3.0], &mut c).unwrap();
        assert_eq!(c, [6.0]);
        let p = p.with_scalars(1.0, 0.5);
        gemm(&p, &[2.0], &[3.0], &mut c).unwrap();
        assert_eq!(c, [9.0]);
        // k = 0: C = beta*C, A and B untouched (empty).
        let p = GemmProblem::new(1, 1, 0).with_scalars(1.0, 2.0);
        gemm::<f32, f32, f32>(&p, &[], &[], &mut c).unwrap();
        assert_eq!(c, [18.0]);
    }

    #[test]
    fn check_flags_wrong_answers_and_accepts_rounding() {
        let p = GemmProblem::new(1, 1, 2).with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
        let a = [bf16::from_f32(1.0), bf16::from_f32(1.0 / 3.0)];
        let b = [bf16::from_f32(1.0), bf16::from_f32(3.0)];
        let mut c = [bf16::ZERO];
        gemm(&p, &a, &b, &mut c).unwrap();
        assert!(check(&p, &a, &b, &[bf16::ZERO], &c, None).unwrap().passed());
        let wrong = [bf16::from_f32(c[0].to_f32() * 1.05)];
        assert!(!check(&p, &a, &b, &[bf16::ZERO], &wrong, None).unwrap().passed());
        let nan = [bf16::NAN];
        assert!(!check(&p, &a, &b, &[bf16::ZERO], &nan, None).unwrap().passed());
    }
}
