//! GEMM problems as BLAS states them: `C = alpha * op(A) * op(B) + beta * C`, with op(A) `m x k`,
//! op(B) `k x n` and C `m x n`, all three stored in one [`Layout`] with leading dimensions.
//!
//! [`GemmProblem::validate`] is the one check every entry point runs before touching memory.

use crate::dtype::{DType, Element};
use crate::error::{Error, Operand, Result};
use crate::view::{span, MatMut, MatRef};

/// Storage order of all three matrices (as in CBLAS's `order` argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u32)]
pub enum Layout {
    #[default]
    RowMajor = 0,
    ColMajor = 1,
}

/// Whether an input is used as stored or transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[repr(u32)]
pub enum Transpose {
    #[default]
    No = 0,
    Yes = 1,
}

impl Transpose {
    pub fn from_bool(t: bool) -> Self {
        if t {
            Transpose::Yes
        } else {
            Transpose::No
        }
    }
    pub fn is_yes(self) -> bool {
        self == Transpose::Yes
    }
}

/// One GEMM: shapes, storage, scalars and dtypes. Buffers are passed separately.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmProblem {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub layout: Layout,
    pub trans_a: Transpose,
    pub trans_b: Transpose,
    pub lda: usize,
    pub ldb: usize,
    pub ldc: usize,
    pub alpha: f32,
    /// When `beta == 0` C is never read, so NaN or garbage in C cannot leak into the result.
    pub beta: f32,
    pub a_type: DType,
    pub b_type: DType,
    pub c_type: DType,
    /// Whether f32 inputs may be multiplied at xf32 precision (each input rounded to 10
    /// mantissa bits, products and sums in f32), as cuBLAS's TF32 math mode allows TF32:
    /// a permission, not a demand. Only gfx942 has xf32 MFMAs; elsewhere, and for other
    /// dtypes, full precision runs. The error bound grows accordingly
    /// ([`crate::reference::allowed_error`]). Default: `false`.
    pub allow_xf32: bool,
}

/// Element counts a validated problem needs from each buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spans {
    pub a: usize,
    pub b: usize,
    pub c: usize,
}

impl Spans {
    /// Checks that buffers of these lengths (in elements) hold the spans.
    pub fn check_lengths(self, a_len: usize, b_len: usize, c_len: usize) -> Result<Spans> {
        for (operand, len, required) in
            [(Operand::A, a_len, self.a), (Operand::B, b_len, self.b), (Operand::C, c_len, self.c)]
        {
            if len < required {
                return Err(Error::BufferTooSmall { operand, len, required });
            }
        }
        Ok(self)
    }
}

impl GemmProblem {
    /// An f32, row-major, untransposed problem with tight leading dimensions, `alpha = 1`, `beta = 0`.
    pub fn new(m: usize, n: usize, k: usize) -> Self {
        let mut p = Self {
            m,
            n,
            k,
            layout: Layout::RowMajor,
            trans_a: Transpose::No,
            trans_b: Transpose::No,
            lda: 0,
            ldb: 0,
            ldc: 0,
            alpha: 1.0,
            beta: 0.0,
            a_type: DType::F32,
            b_type: DType::F32,
            c_type: DType::F32,
            allow_xf32: false,
        };
        p.set_tight_leading_dims();
        p
    }

    /// Sets the storage order and recomputes tight leading dimensions.
    pub fn with_layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self.set_tight_leading_dims();
        self
    }

    /// Sets the transposes and recomputes tight leading dimensions.
    pub fn with_transposes(mut self, trans_a: Transpose, trans_b: Transpose) -> Self {
        self.trans_a = trans_a;
        self.trans_b = trans_b;
        self.set_tight_leading_dims();
        self
    }

    /// Sets explicit leading dimensions (call after layout and transposes).
    pub fn with_leading_dims(mut self, lda: usize, ldb: usize, ldc: usize) -> Self {
        self.lda = lda;
        self.ldb = ldb;
        self.ldc = ldc;
        self
    }

    pub fn with_scalars(mut self, alpha: f32, beta: f32) -> Self {
        self.alpha = alpha;
        self.beta = beta;
        self
    }

    pub fn with_dtypes(mut self, a: DType, b: DType, c: DType) -> Self {
        self.a_type = a;
        self.b_type = b;
        self.c_type = c;
        self
    }

    /// Allows (or forbids) xf32 multiplication of f32 inputs ([`GemmProblem::allow_xf32`]).
    pub fn with_xf32(mut self, allow: bool) -> Self {
        self.allow_xf32 = allow;
        self
    }

    /// The dtypes of `A`, `B`, `C` from Rust element types.
    pub fn with_elements<A: Element, B: Element, C: Element>(self) -> Self {
        self.with_dtypes(A::DTYPE, B::DTYPE, C::DTYPE)
    }

    /// `(rows, cols)` of A, B and C as stored (before `op`).
    pub fn stored_shape(&self, operand: Operand) -> (usize, usize) {
        match operand {
            Operand::A if self.trans_a.is_yes() => (self.k, self.m),
            Operand::A => (self.m, self.k),
            Operand::B if self.trans_b.is_yes() => (self.n, self.k),
            Operand::B => (self.k, self.n),
            Operand::C => (self.m, self.n),
        }
    }

    /// The smallest legal leading dimension of an operand: BLAS's `max(1, inner)`.
    pub fn min_leading_dim(&self, operand: Operand) -> usize {
        let (r, c) = self.stored_shape(operand);
        match self.layout {
            Layout::RowMajor => c.max(1),
            Layout::ColMajor => r.max(1),
        }
    }

    fn set_tight_leading_dims(&mut self) {
        self.lda = self.min_leading_dim(Operand::A);
        self.ldb = self.min_leading_dim(Operand::B);
        self.ldc = self.min_leading_dim(Operand::C);
    }

    fn leading_dim(&self, operand: Operand) -> usize {
        match operand {
            Operand::A => self.lda,
            Operand::B => self.ldb,
            Operand::C => self.ldc,
        }
    }

    /// `(rows, cols, row_stride, col_stride)` of op(A) (`m x k`), op(B) (`k x n`) or C (`m x n`)
    /// as a strided view of its buffer.
    pub fn strides(&self, operand: Operand) -> (usize, usize, usize, usize) {
        let ld = self.leading_dim(operand);
        // Stored (r, c) lives at r*ld + c (row-major) or c*ld + r (column-major).
        let (srs, scs) = match self.layout {
            Layout::RowMajor => (ld, 1),
            Layout::ColMajor => (1, ld),
        };
        let transposed = match operand {
            Operand::A => self.trans_a.is_yes(),
            Operand::B => self.trans_b.is_yes(),
            Operand::C => false,
        };
        let (rows, cols) = match operand {
            Operand::A => (self.m, self.k),
            Operand::B => (self.k, self.n),
            Operand::C => (self.m, self.n),
        };
        if transposed {
            (rows, cols, scs, srs)
        } else {
            (rows, cols, srs, scs)
        }
    }

    /// Checks the shape, leading dimensions, dtypes and size arithmetic; returns the element count
    /// each buffer must hold. Zero-sized dimensions are valid (the GEMM is then a no-op, or
    /// `C = beta * C` when only `k` is zero).
    pub fn validate(&self) -> Result<Spans> {
        check_dtypes(self.a_type, self.b_type, self.c_type)?;
        let mut spans = [0usize; 3];
        for (slot, operand) in [Operand::A, Operand::B, Operand::C].into_iter().enumerate() {
            let min = self.min_leading_dim(operand);
            let ld = self.leading_dim(operand);
            if ld < min {
                return Err(Error::LeadingDimension { operand, ld, min });
            }
            let (rows, cols, rs, cs) = self.strides(operand);
            spans[slot] = span(rows, cols, rs, cs)
                .map_err(|_| Error::Overflow(format!("{operand} of {rows}x{cols} with leading dimension {ld}")))?;
            // Byte size must be addressable too (the GPU path copies bytes).
            spans[slot]
                .checked_mul(self.dtype(operand).size_bytes())
                .filter(|&b| b <= isize::MAX as usize)
                .ok_or_else(|| Error::Overflow(format!("bytes of {operand}")))?;
        }
        // 2*m*n*k must fit in u128 trivially; the flop count as u64 is what reports use.
        (self.m as u128)
            .checked_mul(self.n as u128)
            .and_then(|mn| mn.checked_mul(self.k as u128))
            .filter(|&v| v <= u64::MAX as u128 / 2)
            .ok_or_else(|| Error::Overflow("m*n*k".into()))?;
        Ok(Spans { a: spans[0], b: spans[1], c: spans[2] })
    }

    /// [`validate`](Self::validate) plus the buffer lengths.
    pub fn validate_buffers(&self, a_len: usize, b_len: usize, c_len: usize) -> Result<Spans> {
        self.validate()?.check_lengths(a_len, b_len, c_len)
    }

    /// Validates the problem against typed buffers (dtypes and lengths) and returns the three views.
    pub fn views<'a, 'c, A: Element, B: Element, C: Element>(
        &self,
        a: &'a [A],
        b: &'a [B],
        c: &'c mut [C],
    ) -> Result<(MatRef<'a, A>, MatRef<'a, B>, MatMut<'c, C>)> {
        check_dtypes(self.a_type, self.b_type, self.c_type)?;
        self.check_elements::<A, B, C>()?;
        self.validate_buffers(a.len(), b.len(), c.len())?;
        let (r, co, rs, cs) = self.strides(Operand::A);
        let av = MatRef::new(a, r, co, rs, cs, Operand::A)?;
        let (r, co, rs, cs) = self.strides(Operand::B);
        let bv = MatRef::new(b, r, co, rs, cs, Operand::B)?;
        let (r, co, rs, cs) = self.strides(Operand::C);
        let cv = MatMut::new(c, r, co, rs, cs, Operand::C)?;
        Ok((av, bv, cv))
    }

    /// Checks that the Rust element types match the declared dtypes.
    pub fn check_elements<A: Element, B: Element, C: Element>(&self) -> Result<()> {
        for (operand, declared, actual) in [
            (Operand::A, self.a_type, A::DTYPE),
            (Operand::B, self.b_type, B::DTYPE),
            (Operand::C, self.c_type, C::DTYPE),
        ] {
            if declared != actual {
                return Err(Error::DTypeMismatch { operand, declared, actual });
            }
        }
        Ok(())
    }

    pub fn dtype(&self, operand: Operand) -> DType {
        match operand {
            Operand::A => self.a_type,
            Operand::B => self.b_type,
            Operand::C => self.c_type,
        }
    }

    /// Floating-point operations: `2*m*n*k`.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// Whether the product term vanishes (`k == 0` or `alpha == 0`): then A and B are not read and
    /// `C = beta * C`, as BLAS specifies.
    pub fn product_vanishes(&self) -> bool {
        self.k == 0 || self.alpha == 0.0
    }
}

/// The dtype combinations the library computes. Inputs are one family: f32, f16, bf16, or fp8 of
/// one flavour (FNUZ for gfx942, OCP for gfx950; A and B may mix e4m3 and e5m2 as MFMA allows).
/// C is f32 or the 16-bit input type; fp8 inputs write f32, f16 or bf16.
pub fn check_dtypes(a: DType, b: DType, c: DType) -> Result<()> {
    use DType::*;
    // First, before anything sizes a buffer: fp6/fp4 have no whole-byte element size.
    for (operand, dtype) in [(Operand::A, a), (Operand::B, b), (Operand::C, c)] {
        if dtype.is_sub_byte() {
            return Err(Error::SubByteDType { operand, dtype });
        }
    }
    let why = match (a, b) {
        (F32, F32) if c == F32 => return Ok(()),
        (F32, F32) => "f32 inputs write f32",
        (F16, F16) | (Bf16, Bf16) if c == F32 || c == a => return Ok(()),
        (F16, F16) | (Bf16, Bf16) => "16-bit inputs write f32 or their own type",
        (Fp8E4M3Fnuz | Fp8E5M2Fnuz, Fp8E4M3Fnuz | Fp8E5M2Fnuz) | (Fp8E4M3 | Fp8E5M2, Fp8E4M3 | Fp8E5M2)
            if matches!(c, F32 | F16 | Bf16) =>
        {
            return Ok(())
        }
        (x, y)
            if x.is_fp8()
                && y.is_fp8()
                && (matches!(x, Fp8E4M3Fnuz | Fp8E5M2Fnuz) != matches!(y, Fp8E4M3Fnuz | Fp8E5M2Fnuz)) =>
        {
            "A and B mix the FNUZ (gfx942) and OCP (gfx950) fp8 flavours"
        }
        (x, y) if x.is_fp8() && y.is_fp8() => "fp8 inputs write f32, f16 or bf16",
        _ => "A and B must have the same dtype (or both be fp8 of one flavour)",
    };
    Err(Error::UnsupportedDTypes { a, b, c, why })
}

/// `count` problems of one shape whose buffers sit at fixed strides (in elements) in three
/// allocations, like `rocblas_gemm_strided_batched`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StridedBatch {
    pub problem: GemmProblem,
    pub count: usize,
    pub stride_a: usize,
    pub stride_b: usize,
    pub stride_c: usize,
}

impl StridedBatch {
    /// Validates the item problem and the batch geometry; returns the total element counts.
    /// Inputs may overlap (a stride of 0 shares one A or B between items), outputs may not.
    pub fn validate(&self) -> Result<Spans> {
        let item = self.problem.validate()?;
        if self.count > 1 && item.c > 0 && self.stride_c < item.c {
            return Err(Error::OverlappingOutputs { first: 0, second: 1, stride: self.stride_c, span: item.c });
        }
        let total = |stride: usize, span: usize, what: &str| -> Result<usize> {
            if self.count == 0 || span == 0 {
                return Ok(0);
            }
            (self.count - 1)
                .checked_mul(stride)
                .and_then(|s| s.checked_add(span))
                .ok_or_else(|| Error::Overflow(format!("{what} of a batch of {}", self.count)))
        };
        Ok(Spans {
            a: total(self.stride_a, item.a, "A")?,
            b: total(self.stride_b, item.b, "B")?,
            c: total(self.stride_c, item.c, "C")?,
        })
    }

    /// [`validate`](Self::validate) plus the buffer lengths.
    pub fn validate_buffers(&self, a_len: usize, b_len: usize, c_len: usize) -> Result<Spans> {
        self.validate()?.check_lengths(a_len, b_len, c_len)
    }

    /// Element offsets of item `i` in A, B and C.
    pub fn offsets(&self, i: usize) -> (usize, usize, usize) {
        (i * self.stride_a, i * self.stride_b, i * self.stride_c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tight_leading_dims_follow_layout_and_transposes() {
        let p = GemmProblem::new(3, 5, 7);
        assert_eq!((p.lda, p.ldb, p.ldc), (7, 5, 5));
        let p = p.with_transposes(Transpose::Yes, Transpose::Yes);
        assert_eq!((p.lda, p.ldb, p.ldc), (3, 7, 5));
        let p = GemmProblem::new(3, 5, 7).with_layout(Layout::ColMajor);
        assert_eq!((p.lda, p.ldb, p.ldc), (3, 7, 3));
        assert_eq!(p.validate().unwrap(), Spans { a: 21, b: 35, c: 15 });
    }

    #[test]
    fn leading_dimension_too_small_is_refused() {
        let p = GemmProblem::new(3, 5, 7).with_leading_dims(6, 5, 5);
        assert_eq!(p.validate(), Err(Error::LeadingDimension { operand: Operand::A, ld: 6, min: 7 }));
        let p = GemmProblem::new(3, 5, 7).with_leading_dims(7, 5, 4);
        assert_eq!(p.validate(), Err(Error::LeadingDimension { operand: Operand::C, ld: 4, min: 5 }));
    }

    #[test]
    fn zero_sizes_are_valid_and_need_no_storage() {
        for (m, n, k) in [(0, 4, 4), (4, 0, 4), (4, 4, 0), (0, 0, 0)] {
            let s = GemmProblem::new(m, n, k).validate().unwrap();
            if m == 0 || k == 0 {
                assert_eq!(s.a, 0);
            }
            if m == 0 || n == 0 {
                assert_eq!(s.c, 0);
            }
        }
    }

    #[test]
    fn overflowing_sizes_are_errors() {
        let big = usize::MAX / 2;
        assert!(matches!(GemmProblem::new(big, 4, big).validate(), Err(Error::Overflow(_))));
        assert!(matches!(GemmProblem::new(1 << 40, 1 << 40, 1).validate(), Err(Error::Overflow(_))));
        let p = GemmProblem::new(4, 4, 4);
        let batch = StridedBatch { problem: p, count: usize::MAX, stride_a: 16, stride_b: 16, stride_c: 16 };
        assert!(matches!(batch.validate(), Err(Error::Overflow(_))));
    }

    #[test]
    fn strides_lower_every_storage_to_views() {
        // Row-major A (3x7), element (i, p) at i*lda + p.
        let p = GemmProblem::new(3, 5, 7).with_leading_dims(9, 5, 5);
        assert_eq!(p.strides(Operand::A), (3, 7, 9, 1));
        // Transposed A is stored 7x3: op(A)(i, p) = stored(p, i) at p*lda + i.
        let p = GemmProblem::new(3, 5, 7).with_transposes(Transpose::Yes, Transpose::No);
        assert_eq!(p.strides(Operand::A), (3, 7, 1, 3));
        let p = GemmProblem::new(3, 5, 7).with_layout(Layout::ColMajor);
        assert_eq!(p.strides(Operand::C), (3, 5, 1, 3));
    }

    #[test]
    fn dtype_combinations() {
        use DType::*;
        assert!(check_dtypes(Bf16, Bf16, Bf16).is_ok());
        assert!(check_dtypes(Bf16, Bf16, F32).is_ok());
        assert!(check_dtypes(Fp8E4M3, Fp8E5M2, Bf16).is_ok());
        assert!(check_dtypes(Bf16, F16, F32).is_err());
        assert!(check_dtypes(F32, F32, Bf16).is_err());
        assert!(check_dtypes(Fp8E4M3Fnuz, Fp8E5M2, F32).is_err());
        assert!(check_dtypes(Fp8E4M3, Fp8E4M3, Fp8E4M3).is_err());
    }

    #[test]
    fn batch_outputs_may_not_overlap_but_inputs_may() {
        let p = GemmProblem::new(4, 4, 4);
        let ok = StridedBatch { problem: p, count: 3, stride_a: 0, stride_b: 16, stride_c: 16 };
        assert_eq!(ok.validate().unwrap(), Spans { a: 16, b: 48, c: 48 });
        let bad = StridedBatch { stride_c: 8, ..ok };
        assert!(matches!(bad.validate(), Err(Error::OverlappingOutputs { .. })));
        assert_eq!(
            ok.validate_buffers(16, 48, 47),
            Err(Error::BufferTooSmall { operand: Operand::C, len: 47, required: 48 })
        );
    }
}
