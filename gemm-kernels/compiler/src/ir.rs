//! Kernel IR: a GEMM main loop as tile operations with the attributes the passes and the
//! lowering read.
//!
//! Storage convention (fixed for every kernel, documented in `kernel_args.rs`): all
//! matrices are **column-major** (BLAS). `op(A)` is `m x k`, `op(B)` is `k x n`, C is
//! `m x n`; `A` non-transposed is stored `m x k` (`A[i + l*lda]`), transposed `k x m`
//! (`A[l + i*lda]`); `B` non-transposed `k x n` (`B[l + j*ldb]`), transposed `n x k`
//! (`B[j + l*ldb]`); `C[i + j*ldc]`. A row-major problem is the column-major problem
//! `C^T = op(B)^T op(A)^T`, which the dispatch layer maps by swapping A/B, m/n and the
//! transposes.

use gemm_core::DType;
pub use gemm_isa::Arch;

/// Which input operand a tile operation moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    A,
    B,
}

/// An MFMA shape `M x N x K` (f32 accumulation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MfmaShape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

impl MfmaShape {
    /// The 32x32 shape an arch runs at full rate for 16-bit inputs: `32x32x8` on gfx942,
    /// the double-rate `32x32x16` on gfx950 (ISA.md §1.2, §1.3; ARCH.md "MFMA cost").
    pub fn native_32(arch: Arch) -> MfmaShape {
        match arch {
            Arch::Gfx942 => MfmaShape { m: 32, n: 32, k: 8 },
            Arch::Gfx950 => MfmaShape { m: 32, n: 32, k: 16 },
        }
    }
    /// The 16x16 shape at full rate: `16x16x16` on gfx942, `16x16x32` on gfx950.
    pub fn native_16(arch: Arch) -> MfmaShape {
        match arch {
            Arch::Gfx942 => MfmaShape { m: 16, n: 16, k: 16 },
            Arch::Gfx950 => MfmaShape { m: 16, n: 16, k: 32 },
        }
    }
    /// The full-rate fp8 32x32 shape: `32x32x16_fp8_fp8` on gfx942, `32x32x64_f8f6f4` on
    /// gfx950 (ISA.md §1.2; ARCH.md "MFMA cost": the gfx942 shapes run at half rate there).
    pub fn fp8_32(arch: Arch) -> MfmaShape {
        match arch {
            Arch::Gfx942 => MfmaShape { m: 32, n: 32, k: 16 },
            Arch::Gfx950 => MfmaShape { m: 32, n: 32, k: 64 },
        }
    }
    /// The full-rate fp8 16x16 shape: `16x16x32_fp8_fp8` on gfx942, `16x16x128_f8f6f4` on
    /// gfx950.
    pub fn fp8_16(arch: Arch) -> MfmaShape {
        match arch {
            Arch::Gfx942 => MfmaShape { m: 16, n: 16, k: 32 },
            Arch::Gfx950 => MfmaShape { m: 16, n: 16, k: 128 },
        }
    }
    /// Issue cycles of one instruction (ARCH.md "MFMA cost": 32x32 = 8 passes = 32 cycles,
    /// 16x16 = 4 passes = 16 cycles, on both archs for the native shapes).
    pub fn cycles(self) -> u32 {
        if self.m == 32 {
            32
        } else {
            16
        }
    }
}

/// The alignment the kernel requires of `lda`/`ldb` and the A/B base addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Align {
    /// Leading dimensions a multiple of 8 elements and 16-byte aligned A/B pointers: the
    /// main loop uses `buffer_load_dwordx4` (ISA.md §2.2: the two address LSBs are ignored
    /// for dword accesses, so narrower alignment would read the wrong bytes).
    Vec8,
    /// Any leading dimension and 2-byte aligned pointers: element loads (`buffer_load_ushort`).
    Elem,
}

impl Align {
    pub fn name(self) -> &'static str {
        match self {
            Align::Vec8 => "v8",
            Align::Elem => "e1",
        }
    }
    /// Elements a leading dimension must be a multiple of.
    pub fn elems(self) -> u32 {
        match self {
            Align::Vec8 => 8,
            Align::Elem => 1,
        }
    }
}

/// A bias vector added in the epilogue (f32, after `alpha * acc + beta * C`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bias {
    None,
    /// `bias[i]` for row `i` (length m).
    PerRow,
    /// `bias[j]` for column `j` (length n).
    PerColumn,
}

/// The activation applied after the bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activation {
    None,
    /// `max(x, 0)`.
    Relu,
    /// `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))` (the tanh form).
    GeluTanh,
    /// `x / (1 + exp(-x))`.
    Silu,
}

/// The fused epilogue: `y = clamp(act(alpha * acc + beta * C + bias))`, rounded once to
/// C's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fusion {
    pub bias: Bias,
    pub act: Activation,
    /// Clamp to `[clamp_lo, clamp_hi]` (kernel arguments).
    pub clamp: bool,
}

impl Fusion {
    pub const NONE: Fusion = Fusion { bias: Bias::None, act: Activation::None, clamp: false };
    /// A short name: `none`, or e.g. `biascol_gelu_clamp`.
    pub fn name(&self) -> String {
        let mut parts = vec![];
        match self.bias {
            Bias::None => {}
            Bias::PerRow => parts.push("biasrow"),
            Bias::PerColumn => parts.push("biascol"),
        }
        match self.act {
            Activation::None => {}
            Activation::Relu => parts.push("relu"),
            Activation::GeluTanh => parts.push("gelu"),
            Activation::Silu => parts.push("silu"),
        }
        if self.clamp {
            parts.push("clamp");
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join("_")
        }
    }
}

/// The C block `(rows, columns, 1)` one workgroup of a [`SplitK::Reduce`] kernel covers.
pub const REDUCE_TILE: (u32, u32, u32) = (64, 4, 1);

/// When direct-to-LDS copies are used (where they can serve at all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DmaPolicy {
    /// Where they cost fewer issue slots than register staging: on gfx950 (16 bytes per
    /// lane); on gfx942 a DMA moves one dword per lane, so 16 bytes take 4 DMAs and 4 M0
    /// writes against one `buffer_load_dwordx4` and one `ds_write_b128`.
    Auto,
    /// Wherever they can serve.
    Always,
    /// Never (register staging everywhere).
    Never,
    /// Wherever they can serve, and on gfx950 for 16-bit operands contiguous along M/N as
    /// well: such an operand's LDS tile is kept M/N-major (the DMA copies its global rows
    /// as they are) and the MFMA fragments are read back transposed with
    /// `ds_read_b64_tr_b16` (ISA.md §3.3 lists it; the lane semantics are the emulator's,
    /// `vmem.rs` `transpose_b64`: each 16-lane group reads a 4x16 tile and each lane
    /// receives one column, the reading under which Triton 3.9's gfx950 kernels, which
    /// feed their MFMAs this way, match the reference GEMM), `lds::mn_major`.
    Transposing,
}

/// Split-K: a GEMM whose `m x n` tiles are too few to fill the GPU (small `M*N`, large `K`)
/// splits its K range over the grid's z dimension. Each split writes its f32 partial sums to
/// a workspace slab and a second small kernel, compiled here too, sums the slabs **in split
/// order** and applies `alpha`, `beta`, the conversion to C's type: the result does not
/// depend on which workgroup finishes first. That is Tensile/hipBLASLt's `GlobalSplitU` with
/// `GlobalSplitUAlgorithm: MultipleBuffer` (partials in a workspace, a separate reduction
/// kernel), not its `SingleBuffer` form (atomic adds into C, whose order, and so whose
/// rounding, changes from run to run, and which needs f32 C). `kernel_args.rs` has both
/// argument layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SplitK {
    /// An ordinary GEMM kernel.
    None,
    /// Workgroup `(x, y, z)` computes tile `(x, y)` over the K range
    /// `[z*kchunk, min((z+1)*kchunk, k))` and writes the raw f32 sums (no alpha, beta or
    /// epilogue) to workspace slab `z` (`ws + z*wstride`, leading dimension `ldw`).
    Partial,
    /// Sums the slabs `0..splits` in order per element of C, then `alpha * sum + beta * C`
    /// rounded once to C's type; one lane per element, a wave per 64 rows of one column,
    /// 4 waves per workgroup (a `64 x 4` block of C).
    Reduce,
    /// Not a split and not a GEMM: the transpose pre-pass (`lower/transpose.rs`,
    /// [`KernelConfig::transpose`]) that copies one 1-byte operand into a device workspace
    /// transposed, so a GEMM whose operands are both M/N-contiguous runs in a layout with one
    /// (gemm-dispatch `plan/transpose.rs`). A variant here, like [`SplitK::Reduce`], because
    /// everything that takes a plain GEMM kernel already refuses any role but `None`.
    Transpose,
}

/// The block `(rows, columns, 1)` of X (bytes) one workgroup of a [`SplitK::Transpose`] kernel
/// moves: 128-byte columns, whole cache lines in and out (`lower/transpose.rs`).
pub const TRANSPOSE_TILE: (u32, u32, u32) = (128, 128, 1);

/// Everything that identifies one kernel of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelConfig {
    pub arch: Arch,
    /// Input dtype of A (and of B unless [`Self::b_flavour`] says otherwise): bf16, f16,
    /// f32, or fp8 (FNUZ e4m3/e5m2 on gfx942, OCP e4m3/e5m2 on gfx950).
    pub ab_type: DType,
    /// Mixed fp8 GEMMs: B's fp8 flavour when it differs from A's (e4m3 x e5m2 or e5m2 x
    /// e4m3 of one arch's family: gfx942's `*_fp8_bf8` / `*_bf8_fp8` MFMAs, gfx950's f8f6f4
    /// MFMA with per-operand formats in `cbsz`/`blgp`, ISA.md §1.2). `None`: B is `ab_type`.
    pub b_flavour: Option<DType>,
    /// Output dtype (f32, bf16, f16); accumulation is always f32.
    pub c_type: DType,
    pub trans_a: bool,
    pub trans_b: bool,
    /// Workgroup tile `(MT, NT, KT)`.
    pub tile: (u32, u32, u32),
    pub waves: u32,
    /// How the waves split the tile: `(WM, WN)` waves along M and N, `WM * WN == waves`;
    /// each wave owns an `MT/WM x NT/WN` block of C.
    pub wave_grid: (u32, u32),
    /// Software-pipeline stages (`passes/pipeline.rs`): 2 (two LDS buffers, the next tile's
    /// copies in flight) or 3 (three LDS buffers, the tile after next's copies in flight);
    /// 1 only for the split-K reduction, which has no main loop.
    pub stages: u32,
    pub mfma: MfmaShape,
    pub align: Align,
    /// When the main loop copies with direct-to-LDS loads (the buffer-ops pass decides
    /// per operand within this policy).
    pub direct_to_lds: DmaPolicy,
    /// Which tile each workgroup computes (`grid.rs`).
    pub grid: crate::grid::GridOrder,
    /// The fused epilogue.
    pub fusion: Fusion,
    /// How the main loop is scheduled (`schedule/`): today's software pipeline, or one of
    /// the schedules that overlap MFMAs with memory across waves or within one.
    pub schedule: crate::schedule::Schedule,
    /// Grouped GEMM in one launch: the kernel arguments point at a device-side table of
    /// problems (`kernel_args.rs`, "Grouped kernels") and each workgroup finds its group and
    /// tile there (`lower.rs`, `L::grouped_setup`), as hipBLASLt's grouped GEMM does for
    /// mixture-of-experts layers. Plain kernels: `false`.
    pub grouped: bool,
    /// The bias vector's dtype: f32, or C's type (bf16/f16 bias vectors, as hipBLASLt
    /// takes them); converted to f32 before the add. Default f32.
    pub bias_type: DType,
    /// Split-K role ([`SplitK`]); plain kernels: `SplitK::None`.
    pub split: SplitK,
    /// How the scheduled loop's waves synchronise: `s_barrier`, or explicit phase
    /// counters (`schedule/phase.rs`).
    pub sync: crate::schedule::phase::Sync,
    /// Block scales along K ([`BlockScale`]); plain kernels: `BlockScale::None`.
    pub block_scale: BlockScale,
}

/// Block-scaled inputs (issue 26): scales that change along K, so no epilogue can apply
/// them.
///
/// * `Mx { a, b }` (gfx950): OCP MX operands, one E8M0 scale per 32 elements along K for each
///   row of op(A) and each column of op(B), applied by `v_mfma_scale_f32_*_f8f6f4` itself
///   (the lane's 32 K values of one MFMA are exactly one MX block, ISA.md §1.2). The data are
///   carried as bytes: `ab_type` is the byte carrier `Fp8E4M3` (or the OCP fp8 flavours of
///   MXFP8), `k`, `lda` and `ldb` count **bytes** of the packed rows ([`gemm_core::mx::pack`]),
///   and the tile's KT is in bytes too, so the copies and the LDS layout are those of the fp8
///   kernels; fp4 feeds two MFMAs from each 32-byte fragment a lane reads.
/// * `Fp8Blocks` (both archs): DeepSeek-V3's block-scaled fp8 (`gemm_core::block_fp8`) in the
///   Linear layer, the weights as A with one f32 scale per 128 x 128 block and the activations
///   as B with one per column and 128 K values. The scales are arbitrary f32 values, so the
///   MFMAs of each 128-long K group (one K tile) sum into temporaries and the group's sums are
///   added to the accumulators scaled, `acc = fma(tmp, sa * sb, acc)` (`lower/block_fp8.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockScale {
    None,
    Mx { a: gemm_core::mx::MxFormat, b: gemm_core::mx::MxFormat },
    Fp8Blocks,
}

impl BlockScale {
    /// The MX formats of A and B, for MX kernels.
    pub fn mx(self) -> Option<(gemm_core::mx::MxFormat, gemm_core::mx::MxFormat)> {
        match self {
            BlockScale::Mx { a, b } => Some((a, b)),
            BlockScale::None | BlockScale::Fp8Blocks => None,
        }
    }
}

/// The K group (and the weights' row block) of block-scaled fp8: 128 (DeepSeek-V3).
pub const FP8_BLOCK: u32 = 128;

impl KernelConfig {
    /// The reference family: 128x128x32, 4 waves (2x2, 64x64 per wave), 2 stages, the
    /// arch's native 32x32 MFMA. (A K tile of 64 on gfx950 was tried: the copy work grows
    /// with it, and the MFMA share stays at 55-67%, so 32 is kept.)
    pub fn new(arch: Arch, ab_type: DType, c_type: DType, trans_a: bool, trans_b: bool, align: Align) -> Self {
        KernelConfig {
            arch,
            ab_type,
            c_type,
            trans_a,
            trans_b,
            tile: (128, 128, 32),
            waves: 4,
            wave_grid: (2, 2),
            stages: 2,
            mfma: MfmaShape::native_32(arch),
            align,
            direct_to_lds: DmaPolicy::Auto,
            grid: crate::grid::GridOrder::PLAIN,
            fusion: Fusion::NONE,
            schedule: crate::schedule::Schedule::Pipelined,
            grouped: false,
            bias_type: DType::F32,
            split: SplitK::None,
            sync: crate::schedule::phase::Sync::Barrier,
            b_flavour: None,
            block_scale: BlockScale::None,
        }
    }
    /// The split-K partial kernel of a configuration: f32 partial sums, no fused epilogue.
    pub fn split_partial(mut self) -> Self {
        self.c_type = DType::F32;
        self.fusion = Fusion::NONE;
        self.split = SplitK::Partial;
        self
    }
    /// The split-K reduction kernel of `arch` for C of `c_type` (its input is the f32
    /// workspace): a `64 x 4` block of C per workgroup of 4 waves ([`SplitK::Reduce`]).
    pub fn split_reduce(arch: Arch, c_type: DType) -> Self {
        let mut c = KernelConfig::new(arch, DType::F32, c_type, false, false, Align::Elem);
        c.tile = REDUCE_TILE;
        c.wave_grid = (1, 4);
        c.waves = 4;
        c.stages = 1;
        c.split = SplitK::Reduce;
        c
    }
    /// The transpose pre-pass of `arch` for 1-byte elements ([`SplitK::Transpose`],
    /// `lower/transpose.rs`): a [`TRANSPOSE_TILE`] block per workgroup of 4 waves. It moves
    /// bytes, so one kernel serves both fp8 flavours; `ab_type` and `c_type` are the arch's
    /// e4m3 (FNUZ on gfx942, OCP on gfx950) only to name a 1-byte type.
    pub fn transpose(arch: Arch) -> Self {
        let byte = match arch {
            Arch::Gfx942 => DType::Fp8E4M3Fnuz,
            Arch::Gfx950 => DType::Fp8E4M3,
        };
        let mut c = KernelConfig::new(arch, byte, byte, false, false, Align::Vec8);
        c.tile = TRANSPOSE_TILE;
        c.wave_grid = (1, 4);
        c.waves = 4;
        c.stages = 1;
        c.split = SplitK::Transpose;
        c
    }
    /// A decode kernel (`schedule::Schedule::Decode`, `lower/decode.rs`) for the Linear
    /// layout (A^T B: both operands contiguous along K): `rows x cols` of C per workgroup
    /// (multiples of 16, the 16x16 MFMA's), `waves` waves splitting K, `unroll` 16-byte loads
    /// per lane, row block and iteration. The K tile is what one iteration of the workgroup
    /// consumes: `waves * unroll` loads of 64 bytes per row.
    pub fn decode(arch: Arch, ab_type: DType, c_type: DType, rows: u32, cols: u32, waves: u32, unroll: u32) -> Self {
        let mut c = KernelConfig::new(arch, ab_type, c_type, true, false, Align::Vec8);
        let mfma = if ab_type.is_fp8() { MfmaShape::fp8_16(arch) } else { MfmaShape::native_16(arch) };
        let kt = waves * unroll * 64 / ab_type.size_bytes() as u32;
        c = c.with_shape((rows, cols, kt), (1, 1), mfma, 1);
        c.waves = waves;
        c.schedule = crate::schedule::Schedule::Decode { unroll: unroll as u8 };
        c
    }
    /// A decode kernel with the waves on the rows (`schedule::Schedule::DecodeRows`,
    /// `lower/decode.rs`) for the Linear layout: `waves` waves of `row_blocks` 16-row blocks
    /// of A each (`waves * row_blocks * 16` rows of C per workgroup, wave grid `(waves, 1)`)
    /// by `cols` columns, `unroll` 16-byte loads per lane and row block per K step; the K
    /// tile is one step, `unroll` loads of 64 bytes per row, and B's `cols x KT` slice of it
    /// goes through LDS once per workgroup.
    pub fn decode_rows(
        arch: Arch,
        ab_type: DType,
        c_type: DType,
        row_blocks: u32,
        cols: u32,
        waves: u32,
        unroll: u32,
    ) -> Self {
        let mut c = KernelConfig::new(arch, ab_type, c_type, true, false, Align::Vec8);
        let mfma = if ab_type.is_fp8() { MfmaShape::fp8_16(arch) } else { MfmaShape::native_16(arch) };
        let kt = unroll * 64 / ab_type.size_bytes() as u32;
        c = c.with_shape((waves * row_blocks * 16, cols, kt), (waves, 1), mfma, 1);
        c.schedule = crate::schedule::Schedule::DecodeRows { unroll: unroll as u8 };
        c
    }
    /// The MX kernel of this configuration (`BlockScale::Mx`): A and B in any MX formats
    /// (fp8, fp6, fp4, each operand its own), carried as bytes: each operand's tile rows are
    /// `KT` bytes in LDS and its loop advances by the bytes of its share of the K elements one
    /// iteration consumes ([`Self::k_step_of`]). `Option` for callers that match on it: every
    /// pair builds.
    pub fn with_mx(mut self, a: gemm_core::mx::MxFormat, b: gemm_core::mx::MxFormat) -> Option<Self> {
        let carrier = |f: gemm_core::mx::MxFormat| match f {
            gemm_core::mx::MxFormat::E5M2 => DType::Fp8E5M2,
            _ => DType::Fp8E4M3,
        };
        self.ab_type = carrier(a);
        self = self.with_b_type(carrier(b));
        self.block_scale = BlockScale::Mx { a, b };
        Some(self)
    }
    /// MX kernels: bytes of A's 32-element MX block (32 fp8, 24 fp6, 16 fp4).
    pub fn mx_block_bytes(&self) -> Option<u32> {
        self.mx_block_bytes_of(Operand::A)
    }
    /// MX kernels: bytes of `op`'s 32-element MX block.
    pub fn mx_block_bytes_of(&self, op: Operand) -> Option<u32> {
        self.block_scale.mx().map(|(a, b)| {
            let f = if op == Operand::A { a } else { b };
            32 * f.bits() / 8
        })
    }
    /// MX kernels: the K elements one main-loop iteration consumes, in both operands. Each
    /// operand's tile rows are `KT` bytes (the copies, the LDS layout and its swizzle move
    /// rows of a power-of-two number of 16-byte vectors): `2 KT` elements when both are fp4,
    /// else `KT` (fp8 fills its rows; an fp6 operand uses the 3/4 of its rows that hold whole
    /// 24-byte blocks, as no power-of-two row does; an fp4 operand beside a wider one half).
    pub fn mx_k_elems(&self) -> Option<u32> {
        self.block_scale.mx().map(|(a, b)| if a.bits().max(b.bits()) == 4 { 2 * self.tile.2 } else { self.tile.2 })
    }
    /// MX kernels: the E8M0 blocks of one K tile (per row of either operand).
    pub fn mx_tile_blocks(&self) -> Option<u32> {
        self.mx_k_elems().map(|e| e / 32)
    }
    /// Bytes of `op`'s K (of the carried rows) one main-loop iteration consumes: the K tile,
    /// except for MX kernels, whose operands take [`Self::mx_k_elems`] elements of their own
    /// width. A lane's MFMA operand is one MX block (32 values packed in 8, 6 or 4 VGPRs,
    /// ISA.md §1.2, [`gemm_core::mx::pack`]). Where a tile advances by less than its rows
    /// (fp6; fp4 beside fp8 or fp6), the copies' rest of each row (the next tile's first
    /// bytes, or zeros past K) is never read: that operand's copies move 4/3 (fp6) or twice
    /// (fp4) the bytes its data need.
    pub fn k_step_of(&self, op: Operand) -> u32 {
        match (self.mx_k_elems(), self.mx_block_bytes_of(op)) {
            (Some(e), Some(bb)) => e / 32 * bb,
            _ => self.tile.2,
        }
    }
    /// [`Self::k_step_of`] A: the K bytes of the `k` kernel argument's operand.
    pub fn k_step(&self) -> u32 {
        self.k_step_of(Operand::A)
    }
    /// Whether this is a decode kernel ([`Self::decode`], [`Self::decode_rows`]).
    pub fn is_decode(&self) -> bool {
        matches!(self.schedule, crate::schedule::Schedule::Decode { .. } | crate::schedule::Schedule::DecodeRows { .. })
    }
    /// The loads per lane, row block and K step of a decode kernel (`None` elsewhere).
    pub fn decode_unroll(&self) -> Option<u32> {
        match self.schedule {
            crate::schedule::Schedule::Decode { unroll } | crate::schedule::Schedule::DecodeRows { unroll } => {
                Some(u32::from(unroll))
            }
            _ => None,
        }
    }
    /// B's input dtype: [`Self::b_flavour`] for mixed fp8 kernels, else `ab_type`.
    pub fn b_type(&self) -> DType {
        self.b_flavour.unwrap_or(self.ab_type)
    }
    /// The same configuration with B of fp8 flavour `b` (mixed when it differs from A's).
    pub fn with_b_type(mut self, b: DType) -> Self {
        self.b_flavour = if b == self.ab_type { None } else { Some(b) };
        self
    }
    /// The same configuration with another tile, wave grid, MFMA shape and stage count.
    pub fn with_shape(mut self, tile: (u32, u32, u32), wave_grid: (u32, u32), mfma: MfmaShape, stages: u32) -> Self {
        self.tile = tile;
        self.wave_grid = wave_grid;
        self.waves = wave_grid.0 * wave_grid.1;
        self.mfma = mfma;
        self.stages = stages;
        self
    }
    /// Whether the kernel multiplies f32 inputs at xf32 precision (gfx942's
    /// `v_mfma_f32_32x32x4_xf32` / `16x16x8_xf32`: each input rounded to 10 mantissa bits,
    /// ISA.md §1.2): a reduced-precision kernel, run only when the caller allows it. An f32
    /// MFMA takes one input per lane (`M*K/64 == 1`), an xf32 one two.
    pub fn xf32(&self) -> bool {
        self.ab_type == DType::F32 && self.mfma.m * self.mfma.k / 64 == 2
    }
    /// Rows (A) or columns (B) of C one wave owns.
    pub fn wave_rows(&self, op: Operand) -> u32 {
        match op {
            Operand::A => self.tile.0 / self.wave_grid.0,
            Operand::B => self.tile.1 / self.wave_grid.1,
        }
    }
    /// MFMA blocks per wave along M (A) or N (B).
    pub fn blocks(&self, op: Operand) -> u32 {
        self.wave_rows(op) / self.mfma.m
    }
    /// Lane groups of an MFMA operand (`64 / M`): each takes its own K range.
    pub fn lane_groups(&self) -> u32 {
        64 / self.mfma.m
    }
    /// Accumulator registers per MFMA block (`M * N / 64`).
    pub fn acc_regs(&self) -> u32 {
        self.mfma.m * self.mfma.n / 64
    }
    /// The symbol name, unique within the catalogue.
    pub fn name(&self) -> String {
        let t = |d: DType| match d {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::Fp8E4M3Fnuz | DType::Fp8E4M3 => "fp8",
            DType::Fp8E5M2Fnuz | DType::Fp8E5M2 => "bf8",
            // Sub-byte MX elements (gemm-core DType 7..9); no kernel is named by them yet.
            DType::Fp6E2M3 => "fp6",
            DType::Fp6E3M2 => "bf6",
            DType::Fp4E2M1 => "fp4",
        };
        if self.split == SplitK::Reduce {
            return format!(
                "gemm_{}_splitk_reduce_f32_{}_{}x{}",
                self.arch.name(),
                t(self.c_type),
                self.tile.0,
                self.tile.1
            );
        }
        if self.split == SplitK::Transpose {
            return format!(
                "gemm_{}_transpose_b{}_{}x{}",
                self.arch.name(),
                8 * self.ab_bytes(),
                self.tile.0,
                self.tile.1
            );
        }
        let base = self.name_plain();
        if self.split == SplitK::Partial {
            format!("{base}_splitk")
        } else {
            base
        }
    }
    fn name_plain(&self) -> String {
        let t = |d: DType| match d {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            // FNUZ on gfx942, OCP on gfx950: the arch in the name tells them apart.
            DType::Fp8E4M3Fnuz | DType::Fp8E4M3 => "fp8",
            DType::Fp8E5M2Fnuz | DType::Fp8E5M2 => "bf8",
            // Sub-byte MX elements (gemm-core DType 7..9); no kernel is named by them yet.
            DType::Fp6E2M3 => "fp6",
            DType::Fp6E3M2 => "bf6",
            DType::Fp4E2M1 => "fp4",
        };
        let mut grid =
            if self.grid.is_plain() { String::new() } else { format!("_c{}g{}", self.grid.chunk, self.grid.wgm) };
        if self.fusion != Fusion::NONE {
            grid = format!("{grid}_{}", self.fusion.name());
        }
        grid.push_str(&self.schedule.name_suffix());
        grid.push_str(self.sync.name_suffix());
        if self.grouped {
            grid.push_str("_grouped");
        }
        if self.fusion.bias != Bias::None && self.bias_type != DType::F32 {
            grid = format!("{grid}{}", t(self.bias_type));
        }
        match self.direct_to_lds {
            DmaPolicy::Auto => {}
            DmaPolicy::Always => grid.push_str("_dma"),
            DmaPolicy::Never => grid.push_str("_staged"),
            DmaPolicy::Transposing => grid.push_str("_dmatr"),
        }
        // Mixed fp8: both flavours, A's first (`fp8bf8`); MX: `mx` and the element formats.
        let mx = |f: gemm_core::mx::MxFormat| match f {
            gemm_core::mx::MxFormat::E4M3 => "fp8",
            gemm_core::mx::MxFormat::E5M2 => "bf8",
            gemm_core::mx::MxFormat::E2M3 => "fp6",
            gemm_core::mx::MxFormat::E3M2 => "bf6",
            gemm_core::mx::MxFormat::E2M1 => "fp4",
        };
        let ab = if self.block_scale == BlockScale::Fp8Blocks {
            format!("bs{}", t(self.ab_type))
        } else if let Some((a, b)) = self.block_scale.mx() {
            if a == b {
                format!("mx{}", mx(a))
            } else {
                format!("mx{}{}", mx(a), mx(b))
            }
        } else if self.b_type() == self.ab_type {
            t(self.ab_type).to_string()
        } else {
            format!("{}{}", t(self.ab_type), t(self.b_type()))
        };
        // Decode kernels: all waves on one block of C, splitting K (`w{W}k`).
        let waves = if matches!(self.schedule, crate::schedule::Schedule::Decode { .. }) {
            format!("{}k", self.waves)
        } else {
            format!("{}x{}", self.wave_grid.0, self.wave_grid.1)
        };
        format!(
            "gemm_{}_{}_{}_{}{}_{}x{}x{}_w{waves}_s{}_mfma{}x{}x{}_{}{grid}",
            self.arch.name(),
            ab,
            t(self.c_type),
            if self.trans_a { 't' } else { 'n' },
            if self.trans_b { 't' } else { 'n' },
            self.tile.0,
            self.tile.1,
            self.tile.2,
            self.stages,
            self.mfma.m,
            self.mfma.n,
            self.mfma.k,
            self.align.name()
        )
    }
    /// Elements `lda`/`ldb` must be a multiple of: the alignment class's
    /// [`Align::elems`], and for `v8` with 1-byte inputs a whole 16-byte vector (16 fp8
    /// elements), so every vector load stays 16-byte aligned (ISA.md §2.2).
    pub fn align_elems(&self) -> u32 {
        match self.align {
            Align::Vec8 => self.align.elems().max(self.vec_elems()),
            Align::Elem => 1,
        }
    }
    /// Whether the kernel takes fp8 inputs and with them the scale arguments
    /// (`kernel_args.rs`: per-tensor `scale_a`, `scale_b`, `scale_d`, and the optional
    /// per-row / per-column scale vectors `scale_row`, `scale_col`). Not the transpose
    /// pre-pass ([`SplitK::Transpose`]): it moves bytes.
    pub fn scaled(&self) -> bool {
        self.ab_type.is_fp8() && self.split != SplitK::Transpose
    }
    /// Input elements per 16-byte copy vector.
    pub fn vec_elems(&self) -> u32 {
        16 / self.ab_bytes()
    }
    /// Bytes per input element.
    pub fn ab_bytes(&self) -> u32 {
        self.ab_type.size_bytes() as u32
    }
    pub fn c_bytes(&self) -> u32 {
        self.c_type.size_bytes() as u32
    }
    /// Bytes per bias element (4, or 2 for a bias in C's 16-bit type).
    pub fn bias_bytes(&self) -> u32 {
        self.bias_type.size_bytes() as u32
    }
    pub fn threads(&self) -> u32 {
        self.waves * 64
    }
    /// Whether the operand's storage is contiguous along K (A transposed, B not).
    pub fn k_contiguous(&self, op: Operand) -> bool {
        match op {
            Operand::A => self.trans_a,
            Operand::B => !self.trans_b,
        }
    }
    /// Rows of the operand's LDS tile (MT for A, NT for B).
    pub fn tile_rows(&self, op: Operand) -> u32 {
        match op {
            Operand::A => self.tile.0,
            Operand::B => self.tile.1,
        }
    }
}

/// How a global->LDS copy reads memory (set by the buffer-ops pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoadKind {
    /// Not decided yet (before the buffer-ops pass).
    Undecided,
    /// `buffer_load_dwordx4` per 8 elements through VGPRs, then `ds_write`.
    Vector,
    /// `buffer_load_ushort` per element, packed in VGPRs, then `ds_write`.
    Element,
    /// `buffer_load_* lds` straight into LDS (ISA.md §2.4).
    DirectToLds,
}

/// How K tiles past `k` are kept out of the sum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KGuard {
    /// The tile is known to lie inside `0..k` (main-loop tiles).
    None,
    /// Per-lane offsets of elements with `l >= k` are set past NUM_RECORDS, so the
    /// hardware range check returns 0 (ISA.md §2.3).
    OffsetPastEnd,
}

/// Global -> LDS copy of one operand's `rows x KT` tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Copy {
    pub operand: Operand,
    pub kind: LoadKind,
    pub guard: KGuard,
    /// Which K tile: the last one (possibly partial) or the running loop tile.
    pub which: KTile,
}

/// Which K tile a copy moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KTile {
    /// Tile `ceil(k/KT) - 1`, done first so the loop needs no K checks.
    Last,
    /// Tile `it` of the loop (`0 .. ceil(k/KT)-1`), always complete.
    Loop,
}

/// A tile operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TileOp {
    /// Global memory -> the current LDS buffer (loads, wait, LDS writes).
    GlobalToLds(Copy),
    /// Global memory -> staging VGPRs (the first half of a pipelined copy).
    GlobalLoad(Copy),
    /// Staging VGPRs -> the *next* LDS buffer (the second half of a pipelined copy).
    LdsStore(Operand),
    /// A barrier across the workgroup.
    Barrier,
    /// LDS -> registers: all MFMA fragments of the current K tile for this wave.
    LdsToRegs,
    /// The MFMAs of one K tile.
    Dot,
    /// `C = alpha * acc + beta * C` with C's dtype; rows/cols past m/n not stored.
    Epilogue,
}

/// The LDS swizzle (set by the swizzle pass), on the tile-linear index `q` of 16-byte
/// chunks (`q = (row * row_bytes + l_byte) / 16`): `q' = q ^ ((q / shift) % xor)`.
/// With `shift >= xor` the bits XORed in come from above the bits they change, so the map
/// is its own inverse (a bijection, and the global-side permutation of direct-to-LDS
/// copies is the same function). It can move a chunk to another row of the same bank
/// line, which a per-row XOR cannot: that is what makes the transposed writes of 64-byte
/// rows on gfx942 conflict-free (rows `e` and `e+8` of one write land in different
/// halves of the 128-byte line).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Swizzle {
    /// Chunks the XOR permutes (power of two; 1 = identity).
    pub xor: u32,
    /// Chunks per step of the XOR value (power of two, `>= xor`).
    pub shift: u32,
}

impl Swizzle {
    /// No swizzle.
    pub const IDENTITY: Swizzle = Swizzle { xor: 1, shift: 1 };
    /// Byte offset of element `(row, l)` in an operand tile with `row_bytes` per row.
    pub fn byte_offset(&self, row: u32, l_byte: u32, row_bytes: u32) -> u32 {
        self.apply(row * row_bytes + l_byte)
    }
    /// The swizzled tile byte offset of a linear one.
    pub fn apply(&self, lin: u32) -> u32 {
        let x = (lin / 16 / self.shift) % self.xor;
        lin ^ (x * 16)
    }
    /// Bytes after which the pattern repeats.
    pub fn period_bytes(&self) -> u32 {
        16 * self.xor * self.shift
    }
}

/// The epilogue's plan (set by the epilogue pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EpiloguePlan {
    /// A uniform branch on `beta == 0` selects a path that never loads C.
    pub beta_zero_path: bool,
    /// `alpha * acc` with `v_mul_legacy_f32`, so `alpha == 0` gives 0 even for Inf/NaN
    /// products (BLAS: alpha = 0 means A and B are not referenced).
    pub legacy_alpha: bool,
}

/// The kernel: configuration, the three regions of tile operations and the pass results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub config: KernelConfig,
    /// Runs once before the loop.
    pub prologue: Vec<TileOp>,
    /// Three-stage pipeline: after the prologue, when there is a loop tile at all, the
    /// copies of loop tile 0 (issued, left in flight); empty otherwise.
    pub prefetch: Vec<TileOp>,
    /// The K loop body, run `ceil(k/KT) - 1` times (the prologue handles the last tile).
    pub body: Vec<TileOp>,
    /// After the loop when pipelined: the compute of the tiles the loop left in LDS (or
    /// in staging), one step per `Barrier` (two steps with three stages).
    pub drain: Vec<TileOp>,
    /// After the loop.
    pub epilogue: Vec<TileOp>,
    /// Buffer resource descriptors in SGPRs with 32-bit offsets (buffer-ops pass).
    pub buffer_ops: bool,
    /// LDS buffers (1 = single, 2 or 3 = the pipeline pass's stages).
    pub lds_buffers: u32,
    pub swizzle: Swizzle,
    pub epilogue_plan: Option<EpiloguePlan>,
    /// Per operand (A, B): how the main loop copies it to LDS, with the reason when
    /// direct-to-LDS loads could not serve (buffer-ops pass).
    pub copy_paths: Vec<crate::passes::buffer_ops::CopyPath>,
    /// Passes applied, in order, for the manifest.
    pub applied: Vec<&'static str>,
    /// The main loop as a schedule (`schedule/`), when the configuration asks for one.
    pub schedule: Option<crate::schedule::LoopSchedule>,
}

impl Kernel {
    /// The naive kernel: one LDS buffer; the last (possibly partial) K tile first, then
    /// the complete tiles `0..ceil(k/KT)-1` in the loop; each tile loaded, synchronised
    /// and consumed in turn; no decision about memory instructions yet.
    pub fn naive(config: KernelConfig) -> Kernel {
        let copy = |operand, which| {
            TileOp::GlobalToLds(Copy { operand, kind: LoadKind::Undecided, guard: KGuard::None, which })
        };
        let tile = |which| {
            vec![
                copy(Operand::A, which),
                copy(Operand::B, which),
                TileOp::Barrier,
                TileOp::LdsToRegs,
                TileOp::Dot,
                TileOp::Barrier,
            ]
        };
        Kernel {
            config,
            prologue: tile(KTile::Last),
            prefetch: vec![],
            body: tile(KTile::Loop),
            drain: vec![],
            epilogue: vec![TileOp::Epilogue],
            copy_paths: vec![],
            buffer_ops: false,
            lds_buffers: 1,
            swizzle: Swizzle::IDENTITY,
            epilogue_plan: None,
            applied: vec![],
            schedule: None,
        }
    }
    /// Every copy in the kernel.
    pub fn copies(&self) -> impl Iterator<Item = &Copy> {
        self.prologue.iter().chain(&self.prefetch).chain(&self.body).filter_map(|op| match op {
            TileOp::GlobalToLds(c) | TileOp::GlobalLoad(c) => Some(c),
            _ => None,
        })
    }
    /// Bytes of one LDS buffer (A tile then B tile).
    pub fn lds_buffer_bytes(&self) -> u32 {
        let c = &self.config;
        (c.tile.0 + c.tile.1) * c.tile.2 * c.ab_bytes()
    }
}
