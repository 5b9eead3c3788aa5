//! Block-scaled fp8 in the DeepSeek-V3 style: fp8 elements with one f32 scale per block, 1 x 128
//! for activations (A: per row and group of 128 along K) and 128 x 128 for weights (B), the
//! recipe of the DeepSeek-V3 technical report (section 3.3, "fine-grained quantization") and its
//! reference kernels (`act_quant`: `s = amax / 448`, `y = x / s`). Unlike MX the scales are
//! arbitrary f32 values, so kernels apply them outside the MFMA (on both archs: gfx942 with its
//! FNUZ fp8, gfx950 with OCP fp8).
//!
//! Conversion: per block, `s = amax / fmax` rounded to f32 (`fmax` the format's largest finite
//! value: 448 for OCP E4M3, 240 for E4M3FNUZ), and each element is `x / s` (rounded to f32)
//! rounded to nearest even and saturated to `fmax`. A block of zeros gets `s = 1`; a non-finite
//! input is an error ([`BlockFp8Error::NonFinite`]), since f32 scales have no agreed NaN
//! convention for a whole block.

use crate::exact::{ExactAccumulator, ExactError};
use crate::fp8::Fp8Format;
use thiserror::Error;

/// The block length along K (DeepSeek-V3: 128).
pub const FP8_BLOCK: usize = 128;

/// Errors of block-scaled fp8.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum BlockFp8Error {
    #[error("non-finite input {value} at ({row}, {col}): block-scaled fp8 quantises finite values only")]
    NonFinite { row: usize, col: usize, value: f32 },
    #[error("{what}: expected {expected} values, got {got}")]
    Length { what: &'static str, expected: usize, got: usize },
    #[error("shape mismatch: {0}")]
    Shape(String),
    #[error("block shape {0} x {1}: both sides must be at least 1")]
    Block(usize, usize),
    #[error("{0}")]
    Exact(#[from] ExactError),
}

/// A `rows x k` fp8 matrix with one f32 scale per `block_rows x block_k` block (row-major
/// blocks, the last ones partial). A is stored `M x K` with 1 x 128 blocks; B as its transpose
/// `N x K` with 128 x 128 blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockFp8Matrix {
    format: Fp8Format,
    rows: usize,
    k: usize,
    block_rows: usize,
    block_k: usize,
    codes: Vec<u8>,
    scales: Vec<f32>,
}

impl BlockFp8Matrix {
    /// From codes (row-major) and scales (`ceil(rows/block_rows) x ceil(k/block_k)`, row-major).
    pub fn new(
        format: Fp8Format,
        rows: usize,
        k: usize,
        block: (usize, usize),
        codes: Vec<u8>,
        scales: Vec<f32>,
    ) -> Result<Self, BlockFp8Error> {
        let (block_rows, block_k) = block;
        if block_rows == 0 || block_k == 0 {
            return Err(BlockFp8Error::Block(block_rows, block_k));
        }
        if codes.len() != rows * k {
            return Err(BlockFp8Error::Length { what: "fp8 codes", expected: rows * k, got: codes.len() });
        }
        let ns = rows.div_ceil(block_rows) * k.div_ceil(block_k);
        if scales.len() != ns {
            return Err(BlockFp8Error::Length { what: "block scales", expected: ns, got: scales.len() });
        }
        Ok(BlockFp8Matrix { format, rows, k, block_rows, block_k, codes, scales })
    }

    /// Quantises a row-major `rows x k` matrix with `block_rows x block_k` blocks (module
    /// documentation).
    pub fn quantize(
        format: Fp8Format,
        rows: usize,
        k: usize,
        block: (usize, usize),
        values: &[f32],
    ) -> Result<Self, BlockFp8Error> {
        let (br, bk) = block;
        if br == 0 || bk == 0 {
            return Err(BlockFp8Error::Block(br, bk));
        }
        if values.len() != rows * k {
            return Err(BlockFp8Error::Length { what: "values", expected: rows * k, got: values.len() });
        }
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(BlockFp8Error::NonFinite { row: i / k.max(1), col: i % k.max(1), value: values[i] });
        }
        let fmax = format.max_value();
        let (nbr, nbk) = (rows.div_ceil(br), k.div_ceil(bk));
        let mut scales = vec![1f32; nbr * nbk];
        let mut codes = vec![0u8; rows * k];
        for bi in 0..nbr {
            for bj in 0..nbk {
                let (r0, r1) = (bi * br, (bi * br + br).min(rows));
                let (c0, c1) = (bj * bk, (bj * bk + bk).min(k));
                let amax = (r0..r1)
                    .flat_map(|r| (c0..c1).map(move |c| (r, c)))
                    .fold(0f32, |m, (r, c)| m.max(values[r * k + c].abs()));
                let s = if amax == 0.0 { 1.0 } else { amax / fmax };
                scales[bi * nbk + bj] = s;
                for r in r0..r1 {
                    for c in c0..c1 {
                        codes[r * k + c] = format.encode_saturating(values[r * k + c] / s);
                    }
                }
            }
        }
        Self::new(format, rows, k, block, codes, scales)
    }

    /// [`BlockFp8Matrix::quantize`] of bf16 values (exactly widened to f32 first).
    pub fn quantize_bf16(
        format: Fp8Format,
        rows: usize,
        k: usize,
        block: (usize, usize),
        values: &[half::bf16],
    ) -> Result<Self, BlockFp8Error> {
        let f: Vec<f32> = values.iter().map(|v| v.to_f32()).collect();
        Self::quantize(format, rows, k, block, &f)
    }

    /// DeepSeek-V3 activations: `m x k`, 1 x 128 blocks.
    pub fn quantize_1x128(format: Fp8Format, m: usize, k: usize, values: &[f32]) -> Result<Self, BlockFp8Error> {
        Self::quantize(format, m, k, (1, FP8_BLOCK), values)
    }

    /// DeepSeek-V3 weights, given as B^T (`n x k`, row-major), 128 x 128 blocks.
    pub fn quantize_128x128(format: Fp8Format, n: usize, k: usize, values: &[f32]) -> Result<Self, BlockFp8Error> {
        Self::quantize(format, n, k, (FP8_BLOCK, FP8_BLOCK), values)
    }

    pub fn format(&self) -> Fp8Format {
        self.format
    }
    pub fn rows(&self) -> usize {
        self.rows
    }
    pub fn k(&self) -> usize {
        self.k
    }
    /// (block rows, block k).
    pub fn block(&self) -> (usize, usize) {
        (self.block_rows, self.block_k)
    }
    pub fn codes(&self) -> &[u8] {
        &self.codes
    }
    pub fn scales(&self) -> &[f32] {
        &self.scales
    }
    /// The scale of the block holding `(r, kk)`.
    pub fn scale(&self, r: usize, kk: usize) -> f32 {
        self.scales[(r / self.block_rows) * self.k.div_ceil(self.block_k) + kk / self.block_k]
    }
    /// The fp8 element without its scale.
    pub fn element(&self, r: usize, kk: usize) -> f32 {
        self.format.decode(self.codes[r * self.k + kk])
    }
    /// `scale * element`, exactly (f64 holds the product of two f32 values).
    pub fn value(&self, r: usize, kk: usize) -> f64 {
        f64::from(self.scale(r, kk)) * f64::from(self.element(r, kk))
    }
}

/// The reference GEMM on block-scaled fp8: `C = alpha * A * B + beta * C`, `A` `M x K`, `B`
/// given as its transpose `N x K`, `C` row-major `M x N` f32. Every term
/// `alpha * s_a * a * s_b * b` is summed exactly and the sum rounded once to f32 (as
/// [`crate::mx::mx_gemm`]); `beta == 0` never reads C.
pub fn block_fp8_gemm(
    a: &BlockFp8Matrix,
    b_t: &BlockFp8Matrix,
    c: &mut [f32],
    alpha: f32,
    beta: f32,
) -> Result<(), BlockFp8Error> {
    if a.k != b_t.k {
        return Err(BlockFp8Error::Shape(format!("A is {} x {} but B^T is {} x {}", a.rows, a.k, b_t.rows, b_t.k)));
    }
    let (m, n) = (a.rows, b_t.rows);
    if c.len() != m * n {
        return Err(BlockFp8Error::Length { what: "C", expected: m * n, got: c.len() });
    }
    for i in 0..m {
        for j in 0..n {
            let mut acc = ExactAccumulator::new();
            for kk in 0..a.k {
                acc.add_product(&[alpha, a.scale(i, kk), a.element(i, kk), b_t.scale(j, kk), b_t.element(j, kk)])?;
            }
            if beta != 0.0 {
                acc.add_product(&[beta, c[i * n + j]])?;
            }
            c[i * n + j] = acc.to_f32();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::random_values;

    #[test]
    fn quantisation_uses_the_block_maximum() {
        // Two 1x128 groups: amax 896 and 2.
        let mut v = vec![0f32; 256];
        v[5] = -896.0;
        v[7] = 104.0; // 52 * 2: exact in E4M3
        v[200] = 2.0;
        let q = BlockFp8Matrix::quantize_1x128(Fp8Format::E4M3FN, 1, 256, &v).unwrap();
        assert_eq!(q.scales(), &[2.0, 2.0 / 448.0]);
        assert_eq!(q.value(0, 5), -896.0);
        assert_eq!(q.value(0, 7), 104.0);
        assert_eq!(q.element(0, 200), 448.0);
        assert_eq!(q.value(0, 200), f64::from(2.0f32 / 448.0) * 448.0);
        // gfx942's FNUZ fp8 tops out at 240.
        let q = BlockFp8Matrix::quantize_1x128(Fp8Format::E4M3FNUZ, 1, 256, &v).unwrap();
        assert_eq!(q.scale(0, 0), 896.0 / 240.0);
        assert_eq!(q.element(0, 5), -240.0);
        // A zero block has scale 1; non-finite input is refused.
        let z = BlockFp8Matrix::quantize_128x128(Fp8Format::E4M3FN, 130, 5, &[0.0; 650]).unwrap();
        assert_eq!(z.scales(), &[1.0, 1.0]);
        assert_eq!(z.block(), (128, 128));
        let mut bad = vec![0f32; 650];
        bad[131] = f32::INFINITY;
        assert_eq!(
            BlockFp8Matrix::quantize_128x128(Fp8Format::E4M3FN, 130, 5, &bad),
            Err(BlockFp8Error::NonFinite { row: 26, col: 1, value: f32::INFINITY })
        );
        assert!(BlockFp8Matrix::quantize(Fp8Format::E4M3FN, 1, 1, (0, 1), &[1.0]).is_err());
        // bf16 input: the same as its f32 widening.
        let b: Vec<half::bf16> = v.iter().map(|x| half::bf16::from_f32(*x)).collect();
        let wide: Vec<f32> = b.iter().map(|x| x.to_f32()).collect();
        assert_eq!(
            BlockFp8Matrix::quantize_bf16(Fp8Format::E4M3FN, 1, 256, (1, 128), &b).unwrap(),
            BlockFp8Matrix::quantize(Fp8Format::E4M3FN, 1, 256, (1, 128), &wide).unwrap()
        );
        assert!(BlockFp8Matrix::new(Fp8Format::E4M3FN, 1, 2, (1, 128), vec![0; 2], vec![]).is_err());
    }

    #[test]
    fn round_trip_error_is_within_half_an_fp8_step() {
        let vals: Vec<f32> = random_values::<f32>(200 * 300, 11).iter().map(|x| x * 1000.0).collect();
        for f in [Fp8Format::E4M3FN, Fp8Format::E4M3FNUZ, Fp8Format::E5M2] {
            let q = BlockFp8Matrix::quantize_128x128(f, 200, 300, &vals).unwrap();
            for r in (0..200).step_by(7) {
                for c in (0..300).step_by(3) {
                    let v = f64::from(vals[r * 300 + c]);
                    let s = f64::from(q.scale(r, c));
                    // Relative step 2^-man_bits in the normal range, plus the subnormal step.
                    let tol = (v.abs() * 2f64.powi(-(f.man_bits as i32) - 1) + s * f64::from(f.decode(1))) * 1.0001;
                    assert!((q.value(r, c) - v).abs() <= tol, "{}: {v} -> {}", f.name, q.value(r, c));
                }
            }
        }
    }

    #[test]
    fn gemm_matches_f64_on_exact_cases_and_checks_shapes() {
        // Integers in -7..=7 with a 7 in every block: every scale is 7 / 448 = 2^-6 and every
        // value comes back exactly, so f64 sums are exact and both must agree to the bit.
        let (m, n, k) = (3, 130, 260);
        let pattern = |i: usize| if (i % k).is_multiple_of(FP8_BLOCK) { 7.0 } else { ((i * 7) % 15) as f32 - 7.0 };
        let av: Vec<f32> = (0..m * k).map(pattern).collect();
        let bv: Vec<f32> = (0..n * k).map(pattern).collect();
        let a = BlockFp8Matrix::quantize_1x128(Fp8Format::E4M3FN, m, k, &av).unwrap();
        let b = BlockFp8Matrix::quantize_128x128(Fp8Format::E4M3FN, n, k, &bv).unwrap();
        let mut c = vec![0.25f32; m * n];
        block_fp8_gemm(&a, &b, &mut c, 2.0, -1.0).unwrap();
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k).map(|l| a.value(i, l) * b.value(j, l)).sum::<f64>() * 2.0 - 0.25;
                assert_eq!(c[i * n + j], want as f32, "({i}, {j})");
            }
        }
        assert!(a.scales().iter().chain(b.scales()).all(|s| *s == 2f32.powi(-6)));
        let exact0: f64 = (0..k).map(|l| f64::from(av[l]) * f64::from(bv[l])).sum();
        assert_eq!(c[0], (2.0 * exact0 - 0.25) as f32, "the inputs came back exactly");
        assert!(matches!(block_fp8_gemm(&a, &a, &mut c, 1.0, 0.0), Err(BlockFp8Error::Length { .. })));
        let short = BlockFp8Matrix::quantize_1x128(Fp8Format::E4M3FN, 1, 3, &[1.0; 3]).unwrap();
        assert!(matches!(block_fp8_gemm(&a, &short, &mut c, 1.0, 0.0), Err(BlockFp8Error::Shape(_))));
    }
}
