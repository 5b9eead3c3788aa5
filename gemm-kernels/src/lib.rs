//! `gemm-kernels`: the catalogue of GPU GEMM kernels.
//!
//! Each entry is a kernel compiled at build time (by the compiler in `gemm-kernels/compiler`,
//! run from `build.rs`, no ROCm or LLVM needed) into a gfx942 or gfx950 code object, with the
//! facts the runtime needs to pick and launch it.
//!
//! # Launching an entry
//!
//! * Storage is column-major ([`KernelEntry::layout`]); a row-major problem
//!   `C = op(A) op(B)` is launched as the column-major `C^T = op(B)^T op(A)^T`: swap A and B,
//!   m and n, and `trans_a`/`trans_b`, keep the leading dimensions.
//! * Kernel arguments ([`KernelEntry::kernarg`], 56 bytes): `a, b, c` (u64 addresses),
//!   `m, n, k, lda, ldb, ldc` (u32), `alpha, beta` (f32), at the offsets listed; kernels
//!   with a fused epilogue ([`KernelEntry::epilogue`] not `none`, 80 bytes) add `bias`
//!   (u64, an f32 vector) and `clamp_lo, clamp_hi` (f32); fp8 kernels (112 bytes) take those,
//!   the per-tensor scales `scale_a, scale_b, scale_d` (f32) at 80, 84, 88 and the optional
//!   per-row / per-column scale vectors `scale_row` (m f32 of op(A)) and `scale_col` (n f32 of
//!   op(B)) at 96 and 104 (0: all ones):
//!   `D[i,j] = scale_d * (alpha * scale_a * scale_b * (row[i] * col[j] * acc[i,j]) + beta * C[i,j])`,
//!   evaluated in the order gemm-compiler's `kernel_args.rs` documents.
//!   `C = alpha * op(A) * op(B) + beta * C`; `beta == 0` never reads C; `alpha == 0`
//!   ignores A and B values.
//! * Workgroup `[workgroup_size, 1, 1]` (256 or 512); grid `[ceil(m/MT), ceil(n/NT), 1]`
//!   workgroups (`[ceil(m/MT)*256, ceil(n/NT), 1]` work-items in an AQL packet); no
//!   dynamic LDS.
//! * Requirements: `m, n >= 1`; `lda`, `ldb` multiples of [`KernelEntry::align_elems`] and A/B
//!   addresses aligned to `2 * align_elems` bytes; C aligned to its element size; each matrix's byte span
//!   `((cols-1)*ld + rows) * size` below 2^31; buffers readable up to that span rounded up
//!   to 4 bytes. K, M, N otherwise arbitrary (edge tiles and K tails use the buffer range
//!   check).
//!
//! # Grouped kernels
//!
//! Entries with [`KernelEntry::grouped`] run many GEMMs of one dtype/transpose class in one
//! launch (mixture-of-experts layers). Arguments ([`KernelEntry::kernarg`], 16 bytes):
//! `table` (u64 device address, 8-byte aligned), `groups` (u32, 1 to [`MAX_GROUPS`]),
//! `tiles` (u32). The table holds one 64-byte entry per group: that group's plain arguments
//! at offsets 0..56 (`a b c m n k lda ldb ldc alpha beta`, as above), then `tile_start`
//! (u32) at 56: the sum of `ceil(m/MT) * ceil(n/NT)` over the earlier groups. Grid
//! `[tiles, 1, 1]` workgroups, `tiles` the sum over all groups (below 2^24); groups with
//! `m` or `n` = 0 own no tile. Each group meets the plain kernels' requirements.

pub use gemm_core::mx::MxFormat;
use gemm_core::{Arch, DType, Layout, Transpose};

/// How a kernel argument is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// A 64-bit global address.
    Pointer,
    U32,
    F32,
}

/// One kernel argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelArgSpec {
    pub name: &'static str,
    pub offset: u32,
    pub size: u32,
    pub kind: ArgKind,
}

/// A kernel's part in split-K (gemm-compiler `ir::SplitK`; argument layouts in
/// gemm-compiler `kernel_args.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitRole {
    /// An ordinary kernel.
    None,
    /// Sums a K range per grid z index into an f32 workspace slab (arguments `a, b, ws, m,
    /// n, k, lda, ldb, ldw, kchunk, wstride`; grid `[ceil(m/MT), ceil(n/NT), splits]`).
    Partial,
    /// Sums the slabs in order and writes C (arguments `ws, c, m, n, splits, ldw, ldc,
    /// alpha, beta, wstride`; grid `[ceil(m/64), ceil(n/4), 1]`: [`KernelEntry::launch`]).
    Reduce,
    /// Not a split: the transpose pre-pass (catalogue family `transpose`), `Y = X^T` for a
    /// column-major matrix of bytes (arguments `x, y, rows, cols, ldx, ldy`; grid
    /// `[ceil(rows/128), ceil(cols/128), 1]`: [`KernelEntry::launch`]), which gemm-dispatch runs
    /// before a GEMM to make one operand K-contiguous.
    Transpose,
}

/// One compiled kernel and what it supports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelEntry {
    /// Symbol name in the code object.
    pub name: &'static str,
    pub arch: Arch,
    pub a_type: DType,
    pub b_type: DType,
    pub c_type: DType,
    /// Workgroup tile `(M, N, K)`.
    pub tile: (u32, u32, u32),
    pub waves: u32,
    pub stages: u32,
    /// Schedule name (e.g. `pipelined`, `pingpong8`).
    pub schedule: &'static str,
    /// The code object (ELF) holding the kernel.
    pub code_object: &'static [u8],
    /// Storage order of A, B and C (always column-major; see the crate docs).
    pub layout: Layout,
    pub trans_a: Transpose,
    pub trans_b: Transpose,
    /// `lda`/`ldb` must be multiples of this many elements (8, and 16 for fp8: 16-byte
    /// vector loads).
    pub align_elems: u32,
    /// MFMA shape `(M, N, K)`.
    pub mfma: (u32, u32, u32),
    /// Work-items per workgroup.
    pub workgroup_size: u32,
    pub kernarg_size: u32,
    pub kernarg: &'static [KernelArgSpec],
    pub sgprs: u32,
    pub vgprs: u32,
    pub agprs: u32,
    /// Static LDS bytes.
    pub lds_bytes: u32,
    /// Compiler passes applied, in order.
    pub passes: &'static [&'static str],
    /// Static figures of one main-loop iteration (one K tile) per wave.
    pub mfma_per_k_step: u32,
    pub lds_read_conflicts_per_k_step: u32,
    pub lds_write_conflicts_per_k_step: u32,
    /// MFMA issue cycles / all issue cycles x 1000 (4 cycles per non-MFMA instruction).
    pub mfma_issue_share_permille: u32,
    /// Waves along M and N (`wave_grid.0 * wave_grid.1 == waves`).
    pub wave_grid: (u32, u32),
    /// The catalogue family (gemm-compiler `catalogue.rs`) and why it is in the catalogue.
    pub family: &'static str,
    pub family_why: &'static str,
    /// Waves per SIMD that can be resident (registers and LDS; at most 8).
    pub occupancy: u32,
    /// LDS XOR swizzle `(xor, shift)` in 16-byte chunks (gemm-compiler `ir::Swizzle`).
    pub lds_swizzle: (u32, u32),
    /// How A and B reach LDS, with the reason for the choice.
    pub copy_a: &'static str,
    pub copy_b: &'static str,
    /// Workgroup remapping `(chunk, wgm)` (gemm-compiler `grid.rs`); `(0, 0)`: workgroup
    /// `(x, y)` computes tile `(x, y)`. Either way the launch grid is the same.
    pub grid_order: (u32, u32),
    /// The fused epilogue (`none`, or e.g. `biascol_gelu`: a column bias from the `bias`
    /// argument, then GELU; gemm-compiler `ir::Fusion`).
    pub epilogue: &'static str,
    /// A grouped kernel (catalogue family `grouped`): its arguments are a device-side table
    /// of problems, one launch runs every group (see "Grouped kernels" below).
    pub grouped: bool,
    /// Split-K role: `None` for every kernel a plain GEMM may take.
    pub split_k: SplitRole,
    /// Block scales along K (gemm-compiler `ir::BlockScale`): `None` for every kernel a plain
    /// GEMM may take; MX kernels take the block-scale arguments after the fp8 ones
    /// (`kernarg`), and count K, lda and ldb in bytes of the packed rows.
    pub block_scale: BlockScaleKind,
}

/// A kernel's block scales (gemm-compiler `ir::BlockScale`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockScaleKind {
    None,
    /// OCP MX operands with E8M0 scales per 32 elements along K (gfx950).
    Mx {
        a: MxFormat,
        b: MxFormat,
    },
    /// Block-scaled fp8 (both archs): f32 scales per 128 x 128 block of A (the weights) and
    /// per column and 128 K values of B (the activations).
    Fp8Blocks,
}

impl KernelEntry {
    /// Whether this is a plain GEMM kernel: no fused epilogue, not grouped, not a split-K
    /// partial or reduction. Only plain kernels take the plain kernel arguments, so they are
    /// the ones characterised, ranked by the dispatcher and timed one launch at a time.
    pub fn is_plain(&self) -> bool {
        self.epilogue == "none"
            && !self.grouped
            && self.split_k == SplitRole::None
            && self.block_scale == BlockScaleKind::None
    }

    /// Whether the kernel multiplies f32 inputs at xf32 precision (gfx942's `32x32x4_xf32` /
    /// `16x16x8_xf32`: two f32 inputs per lane per MFMA, where the f32 shapes take one): it
    /// runs only problems that allow it (`GemmProblem::allow_xf32`).
    pub fn xf32(&self) -> bool {
        self.a_type == DType::F32 && self.mfma.0 * self.mfma.2 / 64 == 2
    }
    /// Whether this is a decode kernel (gemm-compiler `lower/decode.rs`: A^T B with every wave on
    /// one block of C and K split over the waves; `lower/decode_rows.rs`: the waves on the rows,
    /// the activations staged in LDS).
    pub fn is_decode(&self) -> bool {
        self.schedule.starts_with("decode")
    }
    /// Launch geometry for an `m x n` problem: (grid in workgroups, workgroup size).
    pub fn launch(&self, m: u32, n: u32) -> ([u32; 3], [u32; 3]) {
        ([m.div_ceil(self.tile.0), n.div_ceil(self.tile.1), 1], [self.workgroup_size, 1, 1])
    }
}

/// The most groups one grouped launch takes (gemm-compiler `kernel_args::MAX_GROUPS`).
pub const MAX_GROUPS: usize = 1 << 16;
/// Bytes of one grouped-table entry, and where its `tile_start` lies.
pub const GROUP_ENTRY_BYTES: usize = 64;
pub const GROUP_TILE_START: usize = 56;

include!(concat!(env!("OUT_DIR"), "/catalogue.rs"));

/// Every kernel built into this library.
pub fn catalogue() -> &'static [KernelEntry] {
    CATALOGUE
}

/// The kernels for one architecture.
pub fn for_arch(arch: Arch) -> impl Iterator<Item = &'static KernelEntry> {
    catalogue().iter().filter(move |k| k.arch == arch)
}
