//! Block-scaled GEMM problems: the Linear layer `Y = X * W^T` whose operands carry one scale per
//! block of elements along K, as models ship now (issue 26).
//!
//! Two kinds, told apart by the scales' dtype:
//!
//! * **MX** (OCP microscaling, [`crate::mx`]): elements in any of the five MX formats
//!   ([`DType::Fp8E4M3`], [`DType::Fp8E5M2`], [`DType::Fp6E2M3`], [`DType::Fp6E3M2`],
//!   [`DType::Fp4E2M1`]; A and B may differ, widths too), one [`ScaleType::E8M0`] scale per
//!   1 x 32 block of either operand.
//!   `Y[i,j] = alpha * sum_l (Xa[i,l/32] * a[i,l]) * (Xb[j,l/32] * b[j,l]) + beta * Y[i,j]`.
//!   K must be a multiple of 32 (refused otherwise, [`BlockScaleError::KNotMultiple`]: the
//!   scaled MFMAs read whole blocks and a partial one would need the caller to promise that its
//!   padding is zero; quantise with zero padding and pass the padded K instead). gfx950 only:
//!   gfx942 has no scaled MFMA and no fp6/fp4.
//! * **Block fp8** (DeepSeek-V3, [`crate::block_fp8`]): fp8 elements of one flavour (FNUZ on
//!   gfx942, OCP on gfx950; e4m3/e5m2 mixed as MFMA allows), one [`ScaleType::F32`] scale per
//!   1 x 128 or 128 x 128 block of each operand (activations 1 x 128, weights 128 x 128).
//!   `Y[i,j] = alpha * sum_g sa[i/ra, g] * sb[j/rb, g] * (sum_{l in group g} a[i,l] b[j,l]) +
//!   beta * Y[i,j]` with `ra`, `rb` the operands' block rows. Any K: the last group is partial.
//!
//! Layout (the user's row-major view): X is M x K, W is N x K, both contiguous along K, each row
//! starting at a multiple of its leading dimension (in elements, `>= K`); fp4 is two elements
//! per byte and fp6 four per three bytes, packed as [`crate::mx::pack`] does, so a row of K fp6
//! elements is `K * 6 / 8` bytes. Every row starts 16-byte aligned: `ld * bits % 128 == 0`
//! (the kernels load 16 bytes at a time; device operands must also start 16-byte aligned). Y is
//! M x N row-major, f32, bf16 or f16, leading dimension `>= N`; `beta == 0` never reads it. The
//! scale tensors are row-major too: `ceil(rows / block_rows)` rows of `ceil(K / block_k)` scales,
//! leading dimension (in scale elements) `>= ceil(K / block_k)`. As in BLAS, `alpha == 0` or
//! `K == 0` gives `beta * Y` without reading the operands or their scales.
//!
//! [`BlockScaledProblem::validate`] checks all of it, with size arithmetic that cannot
//! overflow, before anything is read; [`BlockScaledProblem::check_arch`] adds what one
//! architecture can run.

use crate::arch::{Arch, FpFlavour};
use crate::dtype::DType;
use crate::error::Operand;
use crate::mx::MX_BLOCK;
use thiserror::Error;

/// The block length along K of block-scaled fp8 (DeepSeek-V3).
pub use crate::block_fp8::FP8_BLOCK;

/// The dtype of a scale tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum ScaleType {
    /// OCP MX E8M0: one byte, a power of two ([`crate::mx::E8M0`]).
    E8M0 = 0,
    /// IEEE binary32 (block-scaled fp8).
    F32 = 1,
}

impl ScaleType {
    /// Bytes per scale.
    pub const fn size_bytes(self) -> usize {
        match self {
            ScaleType::E8M0 => 1,
            ScaleType::F32 => 4,
        }
    }
    /// The name, as the C header spells it in lower case.
    pub const fn name(self) -> &'static str {
        match self {
            ScaleType::E8M0 => "e8m0",
            ScaleType::F32 => "f32",
        }
    }
    /// From the C ABI's `gemm_scale_dtype_t`.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            0 => Some(ScaleType::E8M0),
            1 => Some(ScaleType::F32),
            _ => None,
        }
    }
}

impl core::fmt::Display for ScaleType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which of the two kinds a problem is (module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleKind {
    /// OCP MX: E8M0 scales per 1 x 32.
    Mx,
    /// DeepSeek-V3 block fp8: f32 scales per 1 x 128 or 128 x 128.
    BlockFp8,
}

impl core::fmt::Display for ScaleKind {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            ScaleKind::Mx => "MX",
            ScaleKind::BlockFp8 => "block-scaled fp8",
        })
    }
}

/// The shape of the block one scale covers: `rows` rows of the operand (M for X, N for W) by
/// `k` elements along K.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockShape {
    pub rows: usize,
    pub k: usize,
}

impl BlockShape {
    /// MX: 1 x 32, both operands.
    pub const MX: BlockShape = BlockShape { rows: 1, k: MX_BLOCK };
    /// Block fp8 activations: 1 x 128.
    pub const ROW_128: BlockShape = BlockShape { rows: 1, k: FP8_BLOCK };
    /// Block fp8 weights: 128 x 128.
    pub const TILE_128: BlockShape = BlockShape { rows: FP8_BLOCK, k: FP8_BLOCK };
}

impl core::fmt::Display for BlockShape {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} x {}", self.rows, self.k)
    }
}

/// How a scale tensor of `R` scale rows (`ceil(rows / block.rows)`) and `G` K groups
/// (`ceil(K / block.k)`) is laid out: where scale `(rb, g)` lives, in scale elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleLayout {
    /// `rb * ld + g`, `ld >= G` (each scale row contiguous along K).
    RowMajor,
    /// `rb + g * ld`, `ld >= R` (each K group's scales contiguous along the rows: how the
    /// DeepSeek GEMM challenge stores the activations' scales).
    ColMajor,
    /// `(g / tile) * tile * ld + rb * tile + g % tile`, `ld >= R`: `tile` consecutive groups of
    /// every row together, tile after tile (MX kernels read one tile of 4 fp8 or 8 fp4 blocks
    /// per row beside each 128-byte tile of data: with this layout 32 rows share one line).
    KTiled { tile: usize },
}

/// One operand's scale tensor, without its memory: dtype, block shape, layout and leading
/// dimension (in scale elements). The C ABI's `gemm_block_scale_t` is this plus the pointer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaleDesc {
    pub dtype: ScaleType,
    pub block: BlockShape,
    /// Row-major: scales between the starts of two scale rows (at least `ceil(K / block.k)`);
    /// column-major and K-tiled: the scale rows the tensor is laid out for (at least
    /// `ceil(rows / block.rows)`).
    pub ld: usize,
    pub layout: ScaleLayout,
}

impl ScaleDesc {
    /// Where scale `(rb, g)` lives, in scale elements.
    pub fn index(&self, rb: usize, g: usize) -> usize {
        match self.layout {
            ScaleLayout::RowMajor => rb * self.ld + g,
            ScaleLayout::ColMajor => rb + g * self.ld,
            ScaleLayout::KTiled { tile } => (g / tile) * tile * self.ld + rb * tile + g % tile,
        }
    }
    /// The least `ld` for `scale_rows x groups` scales.
    pub fn min_ld(&self, scale_rows: usize, groups: usize) -> usize {
        match self.layout {
            ScaleLayout::RowMajor => groups,
            ScaleLayout::ColMajor | ScaleLayout::KTiled { .. } => scale_rows,
        }
    }
    /// Elements from the first scale to one past the last of `scale_rows x groups` (0 when
    /// either is 0); `None` on overflow.
    pub fn span(&self, scale_rows: usize, groups: usize) -> Option<usize> {
        if scale_rows == 0 || groups == 0 {
            return Some(0);
        }
        let (r, g) = (scale_rows - 1, groups - 1);
        match self.layout {
            ScaleLayout::RowMajor => r.checked_mul(self.ld)?.checked_add(g + 1),
            ScaleLayout::ColMajor => g.checked_mul(self.ld)?.checked_add(r + 1),
            ScaleLayout::KTiled { tile } => {
                let t = tile.max(1);
                (g / t).checked_mul(t)?.checked_mul(self.ld)?.checked_add(r.checked_mul(t)?)?.checked_add(g % t + 1)
            }
        }
    }
}

/// Why a block-scaled problem was refused; nothing was read or written.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum BlockScaleError {
    /// An element dtype no block-scaled GEMM takes (f32, f16, bf16), or A and B of different
    /// kinds (an MX format with an FNUZ fp8, say).
    #[error("{operand} is {dtype}: {why}")]
    Format { operand: Operand, dtype: DType, why: &'static str },
    /// Y must be f32, bf16 or f16.
    #[error("block-scaled GEMMs write f32, bf16 or f16, not {0}")]
    OutputType(DType),
    /// The scale dtype does not belong to the operands' kind (MX takes E8M0, block fp8 f32).
    #[error("the scales of {operand} are {got}, but {kind} takes {expected} scales")]
    ScaleDType { operand: Operand, kind: ScaleKind, got: ScaleType, expected: ScaleType },
    /// The host slice holding the scales is of another dtype than the descriptor says.
    #[error("the scales of {operand} are declared {declared} but the slice holds {actual}")]
    ScaleSlice { operand: Operand, declared: ScaleType, actual: ScaleType },
    /// A block shape the kind does not define.
    #[error("{operand}'s scale block is {got}, {kind} takes {expected}")]
    BlockShape { operand: Operand, kind: ScaleKind, got: BlockShape, expected: &'static str },
    /// MX needs whole 32-element blocks along K (module documentation).
    #[error("K = {k} is not a multiple of {block}: MX GEMMs need whole blocks (pad K with zeros)")]
    KNotMultiple { k: usize, block: usize },
    /// An operand's leading dimension (elements) below its row.
    #[error("leading dimension of {operand} is {ld} but must be at least {min}")]
    LeadingDimension { operand: Operand, ld: usize, min: usize },
    /// A scale tensor's leading dimension (scale elements) below what its layout needs:
    /// `ceil(K / block_k)` row-major, the scale rows column-major or K-tiled.
    #[error("the scale leading dimension of {operand} is {ld} but its layout needs at least {min} (groups of {block_k} along K)")]
    ScaleLeadingDimension { operand: Operand, ld: usize, min: usize, block_k: usize },
    /// A K-tiled scale layout with tiles of 0 groups.
    #[error("the scales of {operand} are K-tiled with tiles of 0 groups")]
    ScaleTile { operand: Operand },
    /// An operand's rows would not start 16-byte aligned.
    #[error("rows of {operand} are not 16-byte aligned: ld {ld} x {bits} bits is not a multiple of 128 bits")]
    MisalignedRows { operand: Operand, ld: usize, bits: u32 },
    /// A device operand or scale tensor whose first byte is not aligned as the kernels read it.
    #[error("{what} starts at {address:#x}, not a multiple of {align} bytes")]
    MisalignedAddress { what: String, address: u64, align: u64 },
    /// A buffer too small for what the problem reads or writes (bytes).
    #[error("{what} holds {len} bytes but the problem needs {required}")]
    BufferTooSmall { what: String, len: usize, required: usize },
    /// The architecture cannot run this kind or these formats.
    #[error("{arch} cannot run {kind} GEMMs with {a} x {b}: {why}")]
    UnsupportedArch { arch: Arch, kind: ScaleKind, a: DType, b: DType, why: &'static str },
    /// Size arithmetic overflows.
    #[error("size arithmetic overflows: {0}")]
    Overflow(String),
}

/// A block-scaled GEMM `Y = alpha * (scaled X) * (scaled W)^T + beta * Y` (module
/// documentation): shape, element dtypes, leading dimensions (elements), scalars and the two
/// scale descriptors.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockScaledProblem {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// X's (A's) element dtype.
    pub a_type: DType,
    /// W's (B's) element dtype.
    pub b_type: DType,
    /// Y's (C's) dtype: f32, bf16 or f16.
    pub c_type: DType,
    /// X's leading dimension in elements (`>= k`).
    pub lda: usize,
    /// W's leading dimension in elements (`>= k`).
    pub ldb: usize,
    /// Y's leading dimension in elements (`>= n`).
    pub ldc: usize,
    pub alpha: f32,
    pub beta: f32,
    pub scale_a: ScaleDesc,
    pub scale_b: ScaleDesc,
}

/// Bytes each buffer of a valid problem must hold (the span from its first byte to its last).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSpans {
    pub a: usize,
    pub b: usize,
    pub c: usize,
    pub scale_a: usize,
    pub scale_b: usize,
}

/// Bytes that `count` packed elements of `bits` take (`None` on overflow).
fn packed_bytes(count: usize, bits: u32) -> Option<usize> {
    count.checked_mul(bits as usize).map(|b| b.div_ceil(8))
}

/// The span in bytes of `rows` rows of `row_bytes`, `ld_bytes` apart (0 when either is 0).
fn span_bytes(rows: usize, ld_bytes: usize, row_bytes: usize) -> Option<usize> {
    if rows == 0 || row_bytes == 0 {
        return Some(0);
    }
    (rows - 1).checked_mul(ld_bytes)?.checked_add(row_bytes).filter(|&b| b <= isize::MAX as usize)
}

impl BlockScaledProblem {
    fn tight(m: usize, n: usize, k: usize, a_type: DType, b_type: DType, sa: ScaleDesc, sb: ScaleDesc) -> Self {
        BlockScaledProblem {
            m,
            n,
            k,
            a_type,
            b_type,
            c_type: DType::F32,
            lda: k,
            ldb: k,
            ldc: n,
            alpha: 1.0,
            beta: 0.0,
            scale_a: sa,
            scale_b: sb,
        }
    }

    /// An MX problem: X (`m x k`) in `a_type`, W (`n x k`) in `b_type` (each one of the five
    /// MX element dtypes), 1 x 32 E8M0 scales, tight leading dimensions, f32 Y, alpha 1, beta 0.
    pub fn mx(m: usize, n: usize, k: usize, a_type: DType, b_type: DType) -> Self {
        let s = ScaleDesc {
            dtype: ScaleType::E8M0,
            block: BlockShape::MX,
            ld: k.div_ceil(MX_BLOCK),
            layout: ScaleLayout::RowMajor,
        };
        Self::tight(m, n, k, a_type, b_type, s, s)
    }

    /// A block-fp8 problem: fp8 X and W of one flavour, f32 scales per `block_rows_a x 128`
    /// (X) and `block_rows_b x 128` (W) blocks (1 or 128 each; DeepSeek-V3 is 1 and 128), tight
    /// leading dimensions, f32 Y, alpha 1, beta 0.
    pub fn block_fp8(
        m: usize,
        n: usize,
        k: usize,
        a_type: DType,
        b_type: DType,
        block_rows_a: usize,
        block_rows_b: usize,
    ) -> Self {
        let ld = k.div_ceil(FP8_BLOCK);
        let desc = |rows| ScaleDesc {
            dtype: ScaleType::F32,
            block: BlockShape { rows, k: FP8_BLOCK },
            ld,
            layout: ScaleLayout::RowMajor,
        };
        Self::tight(m, n, k, a_type, b_type, desc(block_rows_a), desc(block_rows_b))
    }

    /// The leading dimensions of X, W (elements) and Y.
    pub fn with_leading_dims(mut self, lda: usize, ldb: usize, ldc: usize) -> Self {
        (self.lda, self.ldb, self.ldc) = (lda, ldb, ldc);
        self
    }

    /// The leading dimensions of the two scale tensors (scale elements).
    pub fn with_scale_lds(mut self, ld_scale_a: usize, ld_scale_b: usize) -> Self {
        self.scale_a.ld = ld_scale_a;
        self.scale_b.ld = ld_scale_b;
        self
    }

    /// The layouts of the two scale tensors (their `ld` keeps its value: set it with
    /// [`Self::with_scale_lds`] for the layout's meaning).
    pub fn with_scale_layouts(mut self, a: ScaleLayout, b: ScaleLayout) -> Self {
        self.scale_a.layout = a;
        self.scale_b.layout = b;
        self
    }

    /// alpha and beta.
    pub fn with_scalars(mut self, alpha: f32, beta: f32) -> Self {
        (self.alpha, self.beta) = (alpha, beta);
        self
    }

    /// Y's dtype.
    pub fn with_c_type(mut self, c_type: DType) -> Self {
        self.c_type = c_type;
        self
    }

    /// The operand's element dtype, leading dimension and scale descriptor.
    pub fn operand(&self, operand: Operand) -> (DType, usize, ScaleDesc) {
        match operand {
            Operand::A => (self.a_type, self.lda, self.scale_a),
            _ => (self.b_type, self.ldb, self.scale_b),
        }
    }

    /// The kind, from the element dtypes and scale dtypes: E8M0 scales and MX formats are MX,
    /// f32 scales and fp8 of one flavour are block fp8; anything else is refused.
    pub fn kind(&self) -> Result<ScaleKind, BlockScaleError> {
        let kind = match self.scale_a.dtype {
            ScaleType::E8M0 => ScaleKind::Mx,
            ScaleType::F32 => ScaleKind::BlockFp8,
        };
        let expected = match kind {
            ScaleKind::Mx => ScaleType::E8M0,
            ScaleKind::BlockFp8 => ScaleType::F32,
        };
        for operand in [Operand::A, Operand::B] {
            let (dtype, _, s) = self.operand(operand);
            let why = match kind {
                ScaleKind::Mx if dtype.mx_format().is_none() => Some(if dtype.is_fp8() {
                    "MX elements are OCP formats (fp8_e4m3, fp8_e5m2, fp6_e2m3, fp6_e3m2, fp4_e2m1); \
                     gfx942's FNUZ fp8 is not one (gfx942 has no scaled MFMA and no fp6/fp4)"
                } else {
                    "MX elements are fp8_e4m3, fp8_e5m2, fp6_e2m3, fp6_e3m2 or fp4_e2m1"
                }),
                ScaleKind::BlockFp8 if !dtype.is_fp8() => {
                    Some("block-scaled fp8 takes fp8 elements (f32 scales); fp6/fp4 take E8M0 (MX) scales")
                }
                _ => None,
            };
            if let Some(why) = why {
                return Err(BlockScaleError::Format { operand, dtype, why });
            }
            if s.dtype != expected {
                return Err(BlockScaleError::ScaleDType { operand, kind, got: s.dtype, expected });
            }
        }
        if kind == ScaleKind::BlockFp8 {
            let fnuz = |d: DType| matches!(d, DType::Fp8E4M3Fnuz | DType::Fp8E5M2Fnuz);
            if fnuz(self.a_type) != fnuz(self.b_type) {
                return Err(BlockScaleError::Format {
                    operand: Operand::B,
                    dtype: self.b_type,
                    why: "A and B mix the FNUZ (gfx942) and OCP (gfx950) fp8 flavours",
                });
            }
        }
        Ok(kind)
    }

    /// Checks everything that does not depend on the device (module documentation) and returns
    /// the bytes each buffer spans. Zero-sized M or N is valid (nothing to do); K = 0 gives
    /// `beta * Y` and reads no operand or scale.
    pub fn validate(&self) -> Result<BlockSpans, BlockScaleError> {
        let kind = self.kind()?;
        if !matches!(self.c_type, DType::F32 | DType::Bf16 | DType::F16) {
            return Err(BlockScaleError::OutputType(self.c_type));
        }
        if kind == ScaleKind::Mx && !self.k.is_multiple_of(MX_BLOCK) {
            return Err(BlockScaleError::KNotMultiple { k: self.k, block: MX_BLOCK });
        }
        let overflow = |what: &str| BlockScaleError::Overflow(what.to_string());
        let mut spans = [0usize; 2];
        let mut scale_spans = [0usize; 2];
        for (slot, operand) in [Operand::A, Operand::B].into_iter().enumerate() {
            let (dtype, ld, s) = self.operand(operand);
            let rows = if operand == Operand::A { self.m } else { self.n };
            let ok_block = match kind {
                ScaleKind::Mx => s.block == BlockShape::MX,
                ScaleKind::BlockFp8 => s.block == BlockShape::ROW_128 || s.block == BlockShape::TILE_128,
            };
            if !ok_block {
                let expected = match kind {
                    ScaleKind::Mx => "1 x 32",
                    ScaleKind::BlockFp8 => "1 x 128 or 128 x 128",
                };
                return Err(BlockScaleError::BlockShape { operand, kind, got: s.block, expected });
            }
            if ld < self.k {
                return Err(BlockScaleError::LeadingDimension { operand, ld, min: self.k });
            }
            let bits = dtype.bits();
            if !(ld as u128 * u128::from(bits)).is_multiple_of(128) {
                return Err(BlockScaleError::MisalignedRows { operand, ld, bits });
            }
            let groups = self.k.div_ceil(s.block.k);
            let scale_rows = rows.div_ceil(s.block.rows);
            if matches!(s.layout, ScaleLayout::KTiled { tile: 0 }) {
                return Err(BlockScaleError::ScaleTile { operand });
            }
            let min = s.min_ld(scale_rows, groups);
            if s.ld < min {
                return Err(BlockScaleError::ScaleLeadingDimension { operand, ld: s.ld, min, block_k: s.block.k });
            }
            let row_bytes = packed_bytes(self.k, bits).ok_or_else(|| overflow("operand row"))?;
            let ld_bytes = packed_bytes(ld, bits).ok_or_else(|| overflow("operand leading dimension"))?;
            spans[slot] =
                span_bytes(rows, ld_bytes, row_bytes).ok_or_else(|| overflow(&format!("bytes of {operand}")))?;
            let sz = s.dtype.size_bytes();
            scale_spans[slot] = s
                .span(scale_rows, groups)
                .and_then(|e| e.checked_mul(sz))
                .ok_or_else(|| overflow(&format!("bytes of {operand}'s scales")))?;
        }
        if self.ldc < self.n {
            return Err(BlockScaleError::LeadingDimension { operand: Operand::C, ld: self.ldc, min: self.n });
        }
        let c_size = self.c_type.size_bytes();
        let c_row = self.n.checked_mul(c_size).ok_or_else(|| overflow("Y row"))?;
        let c_ld = self.ldc.checked_mul(c_size).ok_or_else(|| overflow("Y leading dimension"))?;
        let c = span_bytes(self.m, c_ld, c_row).ok_or_else(|| overflow("bytes of C"))?;
        (self.m as u128 * self.n as u128)
            .checked_mul(self.k as u128)
            .filter(|&v| v <= u64::MAX as u128 / 2)
            .ok_or_else(|| overflow("m*n*k"))?;
        Ok(BlockSpans { a: spans[0], b: spans[1], c, scale_a: scale_spans[0], scale_b: scale_spans[1] })
    }

    /// What `arch` can run: MX only on gfx950 (gfx942 has no scaled MFMA and no fp6/fp4
    /// elements), block fp8 in the arch's own fp8 flavour (FNUZ on gfx942, OCP on gfx950).
    /// Call after [`Self::validate`].
    pub fn check_arch(&self, arch: Arch) -> Result<(), BlockScaleError> {
        let kind = self.kind()?;
        let (a, b) = (self.a_type, self.b_type);
        let why = match (kind, arch.caps().fp8) {
            (ScaleKind::Mx, FpFlavour::Fnuz) => {
                Some("gfx942 has no scaled MFMA (v_mfma_scale_*) and no fp6/fp4 elements; MX runs on gfx950")
            }
            (ScaleKind::BlockFp8, _) if !(arch.supports(a) && arch.supports(b)) => {
                Some("block-scaled fp8 runs in the arch's own fp8 flavour (FNUZ on gfx942, OCP on gfx950)")
            }
            _ => None,
        };
        match why {
            Some(why) => Err(BlockScaleError::UnsupportedArch { arch, kind, a, b, why }),
            None => Ok(()),
        }
    }

    /// Floating-point operations: `2*m*n*k`.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_follow_the_packed_layout() {
        // fp4: 2 per byte; rows of ld = 64 elements are 32 bytes apart.
        let p = BlockScaledProblem::mx(3, 5, 64, DType::Fp4E2M1, DType::Fp6E2M3).with_leading_dims(96, 64, 7);
        let s = p.validate().unwrap();
        assert_eq!(s.a, 2 * 48 + 32);
        assert_eq!(s.b, 4 * 48 + 48, "fp6: 64 elements are 48 bytes");
        assert_eq!(s.c, 2 * 7 * 4 + 5 * 4);
        assert_eq!((s.scale_a, s.scale_b), (3 * 2, 5 * 2));
        // Block fp8, K = 200 (two groups, the second partial), 128 x 128 weights: N = 130 has
        // two scale rows.
        let p = BlockScaledProblem::block_fp8(1, 130, 200, DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz, 1, 128)
            .with_leading_dims(208, 208, 130)
            .with_scale_lds(2, 3)
            .with_c_type(DType::Bf16);
        let s = p.validate().unwrap();
        assert_eq!((s.a, s.b, s.c), (200, 129 * 208 + 200, 260));
        assert_eq!((s.scale_a, s.scale_b), (8, (3 + 2) * 4));
        assert_eq!(p.kind(), Ok(ScaleKind::BlockFp8));
        // Empty problems span nothing.
        let e = BlockScaledProblem::mx(0, 4, 0, DType::Fp8E4M3, DType::Fp8E4M3).validate().unwrap();
        assert_eq!((e.a, e.scale_a, e.c), (0, 0, 0));
    }

    #[test]
    fn bad_problems_are_typed_errors() {
        use BlockScaleError as E;
        let mx = BlockScaledProblem::mx(4, 4, 64, DType::Fp8E4M3, DType::Fp4E2M1);
        assert_eq!(mx.validate().map(|_| ()), Ok(()));
        let k = BlockScaledProblem::mx(4, 4, 48, DType::Fp8E4M3, DType::Fp4E2M1).with_leading_dims(64, 64, 4);
        assert_eq!(k.validate(), Err(E::KNotMultiple { k: 48, block: 32 }));
        let mut bad = mx;
        bad.scale_b.block = BlockShape::ROW_128;
        assert!(matches!(bad.validate(), Err(E::BlockShape { operand: Operand::B, .. })));
        let mut bad = mx;
        bad.scale_a.dtype = ScaleType::F32;
        // f32 scales make it block fp8, whose elements are fp8: the fp4 B is refused.
        assert!(matches!(bad.validate(), Err(E::Format { operand: Operand::B, .. })), "{:?}", bad.validate());
        let mut bad = mx;
        bad.scale_b.dtype = ScaleType::F32;
        assert_eq!(
            bad.validate(),
            Err(E::ScaleDType {
                operand: Operand::B,
                kind: ScaleKind::Mx,
                got: ScaleType::F32,
                expected: ScaleType::E8M0
            })
        );
        assert_eq!(
            mx.with_scale_lds(1, 2).validate(),
            Err(E::ScaleLeadingDimension { operand: Operand::A, ld: 1, min: 2, block_k: 32 })
        );
        assert_eq!(
            mx.with_leading_dims(63, 64, 4).validate(),
            Err(E::LeadingDimension { operand: Operand::A, ld: 63, min: 64 })
        );
        // fp4 rows of 96 elements are 48 bytes: aligned; fp8 rows of 72 bytes are not.
        assert!(mx.with_leading_dims(64, 96, 4).validate().is_ok());
        assert_eq!(
            mx.with_leading_dims(72, 64, 4).validate(),
            Err(E::MisalignedRows { operand: Operand::A, ld: 72, bits: 8 })
        );
        assert_eq!(
            mx.with_leading_dims(64, 64, 3).validate().map(|_| ()).unwrap_err().to_string(),
            "leading dimension of C is 3 but must be at least 4"
        );
        assert_eq!(mx.with_c_type(DType::Fp8E4M3).validate(), Err(E::OutputType(DType::Fp8E4M3)));
        let fnuz = BlockScaledProblem::mx(4, 4, 64, DType::Fp8E4M3Fnuz, DType::Fp8E4M3);
        assert!(matches!(fnuz.validate(), Err(E::Format { operand: Operand::A, .. })));
        let bf = BlockScaledProblem::mx(4, 4, 64, DType::Bf16, DType::Fp8E4M3);
        assert!(matches!(bf.validate(), Err(E::Format { operand: Operand::A, .. })));
        let fp8 = BlockScaledProblem::block_fp8(4, 4, 64, DType::Fp8E4M3, DType::Fp4E2M1, 1, 128);
        assert!(matches!(fp8.validate(), Err(E::Format { operand: Operand::B, .. })));
        let mixed = BlockScaledProblem::block_fp8(4, 4, 64, DType::Fp8E4M3, DType::Fp8E4M3Fnuz, 1, 128);
        assert!(matches!(mixed.validate(), Err(E::Format { operand: Operand::B, .. })));
        let rows = BlockScaledProblem::block_fp8(4, 4, 64, DType::Fp8E4M3, DType::Fp8E4M3, 64, 128);
        assert!(matches!(rows.validate(), Err(E::BlockShape { operand: Operand::A, .. })));
        let big = BlockScaledProblem::block_fp8(usize::MAX / 2, 4, 64, DType::Fp8E4M3, DType::Fp8E4M3, 1, 128);
        assert!(matches!(big.validate(), Err(E::Overflow(_))));
        let big = BlockScaledProblem::mx(
            2,
            2,
            usize::MAX / 4 + 1 - (usize::MAX / 4 + 1) % 128,
            DType::Fp8E4M3,
            DType::Fp8E4M3,
        );
        assert!(matches!(big.validate(), Err(E::Overflow(_))), "{:?}", big.validate());
    }

    #[test]
    fn architectures_run_what_their_matrix_cores_read() {
        let mx = BlockScaledProblem::mx(4, 4, 64, DType::Fp6E3M2, DType::Fp8E5M2);
        assert_eq!(mx.check_arch(Arch::Gfx950), Ok(()));
        let e = mx.check_arch(Arch::Gfx942).unwrap_err();
        assert!(matches!(e, BlockScaleError::UnsupportedArch { arch: Arch::Gfx942, kind: ScaleKind::Mx, .. }));
        assert!(e.to_string().contains("no scaled MFMA"), "{e}");
        let fnuz = BlockScaledProblem::block_fp8(4, 4, 64, DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz, 1, 128);
        assert_eq!(fnuz.check_arch(Arch::Gfx942), Ok(()));
        assert!(fnuz.check_arch(Arch::Gfx950).is_err());
        let ocp = BlockScaledProblem::block_fp8(4, 4, 64, DType::Fp8E4M3, DType::Fp8E4M3, 128, 128);
        assert_eq!(ocp.check_arch(Arch::Gfx950), Ok(()));
        assert!(ocp.check_arch(Arch::Gfx942).is_err());
    }
}
