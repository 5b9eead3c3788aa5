//! The kernel-argument layout every catalogue kernel uses (56 bytes, 8-byte aligned), and
//! the launch geometry.
//!
//! | offset | size | name  | meaning |
//! |-------:|-----:|-------|---------|
//! | 0  | 8 | a     | A base address (global, 2-byte aligned; 16-byte for `v8` kernels) |
//! | 8  | 8 | b     | B base address |
//! | 16 | 8 | c     | C base address (read when beta != 0, written) |
//! | 24 | 4 | m     | rows of op(A) and C |
//! | 28 | 4 | n     | columns of op(B) and C |
//! | 32 | 4 | k     | columns of op(A), rows of op(B) |
//! | 36 | 4 | lda   | leading dimension of A in elements (column-major storage) |
//! | 40 | 4 | ldb   | leading dimension of B |
//! | 44 | 4 | ldc   | leading dimension of C |
//! | 48 | 4 | alpha | f32 |
//! | 52 | 4 | beta  | f32; 0 (either sign) never reads C |
//!
//! Kernels with a fused epilogue (`ir::Fusion`) take three more (80 bytes in all):
//!
//! | offset | size | name  | meaning |
//! |-------:|-----:|-------|---------|
//! | 56 | 8 | bias  | bias vector (length m or n), f32 or C's type (`KernelConfig::bias_type`); read only with a bias epilogue |
//! | 64 | 4 | clamp_lo | f32 lower bound; read only with a clamp epilogue |
//! | 68 | 4 | clamp_hi | f32 upper bound |
//! | 72 | 8 | (padding) | |
//!
//! fp8 kernels (`KernelConfig::scaled`) take those, the per-tensor scales and two optional
//! scale vectors (112 bytes), as hipBLASLt's scale modes (`HIPBLASLT_MATMUL_DESC_A_SCALE_MODE`
//! scalar or outer vector, `scaleA`/`scaleB`/`scaleD`):
//!
//! `D[i,j] = scale_d * (alpha * scale_a * scale_b * (row[i] * col[j] * acc[i,j]) + beta * C[i,j])`
//!
//! with `acc[i,j]` the exact-input f32 sum of `op(A)[i,l] * op(B)[l,j]`, `row` the per-row
//! dequantisation scales of `op(A)` (length m, f32) and `col` the per-column scales of
//! `op(B)` (length n, f32); a null vector pointer means all ones (per-tensor scaling only).
//! Evaluated in f32 in exactly this order, each step rounded (the host backend does the
//! same, `gemm-dispatch` `scales.rs`): `w = row[i] * col[j]`; `x = w * acc`;
//! `s = (scale_a * scale_b) * alpha` (once); `x = s * x` (`v_mul_legacy_f32`: `s == 0` gives
//! 0 even for an infinite `x`, as BLAS's alpha = 0); `x = fma(beta, C, x)` (only when
//! `beta != 0`); `D = scale_d * x`, then the one rounding to C's type.
//!
//! | offset | size | name  | meaning |
//! |-------:|-----:|-------|---------|
//! | 80 | 4 | scale_a | f32 |
//! | 84 | 4 | scale_b | f32 |
//! | 88 | 4 | scale_d | f32 |
//! | 92 | 4 | (padding) | |
//! | 96 | 8 | scale_row | per-row scales of op(A), m f32 (4-byte aligned), or 0 |
//! | 104 | 8 | scale_col | per-column scales of op(B), n f32 (4-byte aligned), or 0 |
//!
//! **Block-scaled kernels** (`ir::BlockScale`, 144 bytes) take the fp8 layout (their per-tensor
//! scales and scale vectors apply as above, to the block-scaled sum `acc`), then the block
//! scales:
//!
//! | offset | size | name  | meaning |
//! |-------:|-----:|-------|---------|
//! | 112 | 8 | bscale_a | A's block scales (below) |
//! | 120 | 8 | bscale_b | B's block scales |
//! | 128 | 4 | ldsa | scale elements from one row of A's scales to the next |
//! | 132 | 4 | ldsb | likewise for B |
//! | 136 | 4 | gsa | block-scaled fp8: scale elements from one K group of A's scales to the next; MX: bytes from one K tile's scales to the next (below) |
//! | 140 | 4 | gsb | likewise for B |
//!
//! Block-scaled fp8 kernels (`BlockScale::Fp8Blocks`, both archs, DeepSeek-V3): `acc[i,j] =
//! sum_g bscale_a[(i/128)*ldsa + g*gsa] * bscale_b[j*ldsb + g*gsb] * (sum_{l in group g} a[i,l]
//! b[l,j])` (row-major scales: `gs = 1`; column-major, as the DeepSeek GEMM challenge stores the
//! activations' scales: `lds = 1`, `gs` the column length),
//! f32 scales, groups of 128 along K (the last may be partial), each group's sum rounded to
//! f32 and added with one fused multiply-add; A^T B (the weights as A, 128 x 128 blocks; the
//! activations as B, one scale per column and group); `k`, `lda`, `ldb` in elements as usual.
//!
//! MX kernels (`BlockScale::Mx`, gfx950): `acc[i,j] = sum_l (Xa[i,l/32] a[i,l]) (Xb[j,l/32]
//! b[l,j])` with the E8M0 scale bytes `Xa[i, g]` at `bscale_a + i*ldsa + g` and `Xb[j, g]` at
//! `bscale_b + j*ldsb + g` (`ldsa`, `ldsb` multiples of 4), A stored as op(A)'s rows and B as
//! op(B)'s columns, each K-contiguous and packed
//! (`gemm_core::mx::pack`), so **`k`, `lda` and `ldb` count bytes** of the packed rows: `k =
//! K * bits / 8` with K a multiple of 32 (every block whole), `lda`, `ldb` multiples of 16.
//! Scale bytes of blocks at or past `K/32` are never used (the kernel masks them: padding
//! may hold anything, the E8M0 NaN included). The kernel reads the scales of one K tile
//! (`T` = 128 bytes of K: 4 blocks of fp8, 8 of fp4) per row as whole dwords at `row*ldsa +
//! t*gsa`: row-major scales have `gsa = T` (`ldsa >= K/32`); the K-tiled layout (`ldsa = T`,
//! `gsa = T * rows`, rows padded as one likes) puts one tile's scales of 32 consecutive rows
//! in one 128-byte line.
//!
//! **Grouped kernels** (`KernelConfig::grouped`) take a problem table instead (16 bytes):
//!
//! | offset | size | name   | meaning |
//! |-------:|-----:|--------|---------|
//! | 0  | 8 | table  | device address of `groups` 64-byte entries (8-byte aligned) |
//! | 8  | 4 | groups | entries in the table (at least 1, at most [`MAX_GROUPS`]) |
//! | 12 | 4 | tiles  | workgroups of the launch: the sum of every group's tiles |
//!
//! Entry `g` of the table holds group `g`'s problem at the plain kernels' offsets 0..56
//! (`a b c m n k lda ldb ldc alpha beta`), then at 56 `tile_start` (u32): the workgroup id of
//! the group's first tile, the prefix sum of the earlier groups' `ceil(m/MT) * ceil(n/NT)`
//! (so an empty group, `m` or `n` = 0, has the same start as the next and owns no workgroup),
//! and 4 bytes of padding. Launch: a 1-D grid of `tiles` workgroups ([`pack_group`] builds
//! an entry, [`grouped_tiles`] the starts). Workgroup `w` runs the last group whose
//! `tile_start <= w`, its tile `w - tile_start` in column order of the group's tiles.
//!
//! **Split-K partial kernels** (`ir::SplitK::Partial`, 56 bytes) take the plain layout with
//! three slots renamed, and read neither alpha nor beta (the reduction applies them):
//!
//! | offset | size | name    | meaning |
//! |-------:|-----:|---------|---------|
//! | 16 | 8 | ws      | workspace address (16-byte aligned): slab `z` at `ws + z*wstride` holds split `z`'s f32 `m x n` partial sums, column-major with leading dimension `ldw` |
//! | 44 | 4 | ldw     | the slabs' leading dimension in elements (`>= m`) |
//! | 48 | 4 | kchunk  | K per split, a multiple of KT: split `z` sums `l` in `[z*kchunk, min((z+1)*kchunk, k))` |
//! | 52 | 4 | wstride | bytes from one slab to the next (`>= ldw*n*4`, a multiple of 16) |
//!
//! Launch: grid `[ceil(m/MT), ceil(n/NT), splits]` workgroups, `splits = ceil(k/kchunk)`.
//!
//! fp8 partial kernels (the decode families' split twins, `catalogue::SPLITK_DECODE` and
//! `catalogue::SPLITK_DECODE_ROWS`) take
//! 112 bytes: the partial layout above, then (bytes 56..96 unused) the fp8 layout's two
//! scale vectors `scale_row` (96) and `scale_col` (104), and write `row[i] * col[j] * acc_z`
//! (`w * acc`, the first two steps of the fp8 order above; a null vector is all ones, and
//! `1.0 * acc` is `acc` exactly). The vectors go to the partial kernel because they change
//! per element and only it knows each element's row and column; the per-tensor scales are
//! scalars, so they fold into the reduction's own scalars (`alpha' = scale_d * ((scale_a *
//! scale_b) * alpha)`, `beta' = scale_d * beta`, formed by the caller: `gemm-dispatch`
//! `splitk.rs`) and the reduction kernels stay the same for every input type. Scaling is
//! linear, so `alpha' * sum_z w * acc_z + beta' * C` is the fp8 formula up to the rounding
//! of its steps (exact where the scales are powers of two).
//!
//! **Split-K reduction kernels** (`ir::SplitK::Reduce`, 48 bytes): `C = alpha * sum_z ws_z +
//! beta * C`, the slabs summed in order `z = 0, 1, ...`:
//!
//! | offset | size | name    | meaning |
//! |-------:|-----:|---------|---------|
//! | 0  | 8 | ws      | workspace address (as the partial kernel's) |
//! | 8  | 8 | c       | C base address |
//! | 16 | 4 | m       | |
//! | 20 | 4 | n       | |
//! | 24 | 4 | splits  | slabs to sum (at least 1) |
//! | 28 | 4 | ldw     | |
//! | 32 | 4 | ldc     | |
//! | 36 | 4 | alpha   | f32 |
//! | 40 | 4 | beta    | f32; 0 (either sign) never reads C |
//! | 44 | 4 | wstride | bytes between slabs |
//!
//! Launch: grid `[ceil(m/64), ceil(n/4), 1]` workgroups of 256 (`ir::REDUCE_TILE`). The
//! workspace spans `splits * wstride` bytes, below 2^30 (`wstride * 16` fits 32 bits: the
//! kernel reads 16 slabs per round).
//!
//! **Transpose kernels** (`ir::SplitK::Transpose`, 32 bytes; the dispatcher's pre-pass,
//! `gemm-dispatch` `plan/transpose.rs`): `Y[j + i*ldy] = X[i + j*ldx]` for `i < rows`,
//! `j < cols`, X a column-major `rows x cols` matrix of bytes, Y its `cols x rows` transpose;
//! no byte of Y outside the `cols x rows` block is written (the padding between `cols` and
//! `ldy` stays as it was):
//!
//! | offset | size | name | meaning |
//! |-------:|-----:|------|---------|
//! | 0  | 8 | x    | X's address (16-byte aligned) |
//! | 8  | 8 | y    | Y's address (16-byte aligned) |
//! | 16 | 4 | rows | rows of X (columns of Y) |
//! | 20 | 4 | cols | columns of X (rows of Y) |
//! | 24 | 4 | ldx  | X's leading dimension in bytes, a multiple of 16, `>= rows` |
//! | 28 | 4 | ldy  | Y's leading dimension in bytes, a multiple of 16, `>= cols` |
//!
//! Launch: grid `[ceil(rows/128), ceil(cols/128), 1]` workgroups of 256
//! (`ir::TRANSPOSE_TILE`); both spans below 2^31 bytes.
//!
//! Storage is column-major (see `ir.rs`). Launch: workgroup size `[256, 1, 1]`, grid in
//! work-items `[ceil(m/MT)*256, ceil(n/NT), 1]`, no dynamic LDS. Requirements the caller
//! checks: m, n >= 1; each matrix's byte span `((cols-1)*ld + rows) * size` below 2^31
//! (32-bit offsets with one value past the end reserved); device buffers readable up to
//! the span rounded up to 4 bytes.

use gemm_codeobject::KernelArg;

pub const OFF_A: u32 = 0;
pub const OFF_B: u32 = 8;
pub const OFF_C: u32 = 16;
pub const OFF_M: u32 = 24;
pub const OFF_N: u32 = 28;
pub const OFF_K: u32 = 32;
pub const OFF_LDA: u32 = 36;
pub const OFF_LDB: u32 = 40;
pub const OFF_LDC: u32 = 44;
pub const OFF_ALPHA: u32 = 48;
pub const OFF_BETA: u32 = 52;
pub const OFF_BIAS: u32 = 56;
pub const OFF_CLAMP: u32 = 64;
pub const OFF_SCALE: u32 = 80;
/// The per-row (A) and per-column (B) scale vectors' addresses (fp8 kernels).
pub const OFF_SCALE_ROW: u32 = 96;
pub const OFF_SCALE_COL: u32 = 104;
/// Kernarg bytes of plain kernels.
pub const SIZE: u32 = 56;
/// Kernarg bytes of kernels with a fused epilogue.
pub const SIZE_FUSED: u32 = 80;
/// Kernarg bytes of fp8 kernels (the fused layout, then the scales and scale vectors).
pub const SIZE_SCALED: u32 = 112;
/// Block-scaled kernels: the block-scale tensors and their leading dimensions.
pub const OFF_BSCALE: u32 = 112;
pub const OFF_BSCALE_LD: u32 = 128;
/// Kernarg bytes of block-scaled kernels.
pub const SIZE_BLOCK: u32 = 144;

/// Grouped kernels: the table's address, the group count, the launch's workgroups.
pub const OFF_TABLE: u32 = 0;
pub const OFF_GROUPS: u32 = 8;
pub const OFF_TILES: u32 = 12;
/// Kernarg bytes of grouped kernels.
pub const SIZE_GROUPED: u32 = 16;
/// Bytes of one table entry, and the offset of its `tile_start`.
pub const ENTRY_BYTES: u32 = 64;
pub const OFF_TILE_START: u32 = 56;
/// The most groups one launch takes: the workgroup's search for its group is a binary search
/// of `log2(MAX_GROUPS)` = 16 steps at most (`lower.rs`).
pub const MAX_GROUPS: u32 = 1 << 16;

/// Split-K partial kernels: the slots they rename.
pub const OFF_WS: u32 = OFF_C;
pub const OFF_LDW: u32 = OFF_LDC;
pub const OFF_KCHUNK: u32 = 48;
pub const OFF_WSTRIDE: u32 = 52;
/// The partial kernels' arguments.
pub const PARTIAL_ARGS: [Arg; 11] = [
    Arg { name: "a", offset: OFF_A, size: 8, pointer: true },
    Arg { name: "b", offset: OFF_B, size: 8, pointer: true },
    Arg { name: "ws", offset: OFF_WS, size: 8, pointer: true },
    Arg { name: "m", offset: OFF_M, size: 4, pointer: false },
    Arg { name: "n", offset: OFF_N, size: 4, pointer: false },
    Arg { name: "k", offset: OFF_K, size: 4, pointer: false },
    Arg { name: "lda", offset: OFF_LDA, size: 4, pointer: false },
    Arg { name: "ldb", offset: OFF_LDB, size: 4, pointer: false },
    Arg { name: "ldw", offset: OFF_LDW, size: 4, pointer: false },
    Arg { name: "kchunk", offset: OFF_KCHUNK, size: 4, pointer: false },
    Arg { name: "wstride", offset: OFF_WSTRIDE, size: 4, pointer: false },
];
/// fp8 partial kernels' arguments: the partial ones, then the two scale vectors at their fp8
/// offsets (112 bytes in all; see the module docs).
pub const PARTIAL_SCALED_ARGS: [Arg; 13] = {
    let mut out = [PARTIAL_ARGS[0]; 13];
    let mut i = 0;
    while i < 11 {
        out[i] = PARTIAL_ARGS[i];
        i += 1;
    }
    out[11] = Arg { name: "scale_row", offset: OFF_SCALE_ROW, size: 8, pointer: true };
    out[12] = Arg { name: "scale_col", offset: OFF_SCALE_COL, size: 8, pointer: true };
    out
};
/// Split-K reduction kernels' argument offsets and size.
pub const R_OFF_WS: u32 = 0;
pub const R_OFF_C: u32 = 8;
pub const R_OFF_LDC: u32 = 32;
pub const SIZE_REDUCE: u32 = 48;
/// The reduction kernels' arguments.
pub const REDUCE_ARGS: [Arg; 10] = [
    Arg { name: "ws", offset: R_OFF_WS, size: 8, pointer: true },
    Arg { name: "c", offset: R_OFF_C, size: 8, pointer: true },
    Arg { name: "m", offset: 16, size: 4, pointer: false },
    Arg { name: "n", offset: 20, size: 4, pointer: false },
    Arg { name: "splits", offset: 24, size: 4, pointer: false },
    Arg { name: "ldw", offset: 28, size: 4, pointer: false },
    Arg { name: "ldc", offset: R_OFF_LDC, size: 4, pointer: false },
    Arg { name: "alpha", offset: 36, size: 4, pointer: false },
    Arg { name: "beta", offset: 40, size: 4, pointer: false },
    Arg { name: "wstride", offset: 44, size: 4, pointer: false },
];

/// Transpose kernels' argument offsets and size (see the module docs).
pub const T_OFF_X: u32 = 0;
pub const SIZE_TRANSPOSE: u32 = 32;
/// The transpose kernels' arguments.
pub const TRANSPOSE_ARGS: [Arg; 6] = [
    Arg { name: "x", offset: T_OFF_X, size: 8, pointer: true },
    Arg { name: "y", offset: 8, size: 8, pointer: true },
    Arg { name: "rows", offset: 16, size: 4, pointer: false },
    Arg { name: "cols", offset: 20, size: 4, pointer: false },
    Arg { name: "ldx", offset: 24, size: 4, pointer: false },
    Arg { name: "ldy", offset: 28, size: 4, pointer: false },
];

/// Transpose-kernel arguments (see the module docs).
pub fn pack_transpose(x: u64, y: u64, rows: u32, cols: u32, ldx: u32, ldy: u32) -> [u8; SIZE_TRANSPOSE as usize] {
    let mut out = [0u8; SIZE_TRANSPOSE as usize];
    out[0..8].copy_from_slice(&x.to_le_bytes());
    out[8..16].copy_from_slice(&y.to_le_bytes());
    for (i, w) in [rows, cols, ldx, ldy].into_iter().enumerate() {
        out[16 + 4 * i..20 + 4 * i].copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// Partial-kernel arguments (see the module docs).
#[allow(clippy::too_many_arguments)]
pub fn pack_partial(
    a: u64,
    b: u64,
    ws: u64,
    m: u32,
    n: u32,
    k: u32,
    lda: u32,
    ldb: u32,
    ldw: u32,
    kchunk: u32,
    wstride: u32,
) -> [u8; SIZE as usize] {
    let mut out = [0u8; SIZE as usize];
    out.copy_from_slice(&pack(a, b, ws, m, n, k, lda, ldb, ldw, 0.0, 0.0)[..SIZE as usize]);
    out[OFF_KCHUNK as usize..OFF_KCHUNK as usize + 4].copy_from_slice(&kchunk.to_le_bytes());
    out[OFF_WSTRIDE as usize..OFF_WSTRIDE as usize + 4].copy_from_slice(&wstride.to_le_bytes());
    out
}

/// fp8 partial-kernel arguments: [`pack_partial`]'s, then the scale vectors' addresses (0:
/// none) at their fp8 offsets (see the module docs).
#[allow(clippy::too_many_arguments)]
pub fn pack_partial_scaled(
    a: u64,
    b: u64,
    ws: u64,
    m: u32,
    n: u32,
    k: u32,
    lda: u32,
    ldb: u32,
    ldw: u32,
    kchunk: u32,
    wstride: u32,
    row: u64,
    col: u64,
) -> [u8; SIZE_SCALED as usize] {
    let mut out = [0u8; SIZE_SCALED as usize];
    out[..SIZE as usize].copy_from_slice(&pack_partial(a, b, ws, m, n, k, lda, ldb, ldw, kchunk, wstride));
    with_scale_vectors(&mut out, row, col);
    out
}

/// Reduction-kernel arguments (see the module docs).
#[allow(clippy::too_many_arguments)]
pub fn pack_reduce(
    ws: u64,
    c: u64,
    m: u32,
    n: u32,
    splits: u32,
    ldw: u32,
    ldc: u32,
    alpha: f32,
    beta: f32,
    wstride: u32,
) -> [u8; SIZE_REDUCE as usize] {
    let mut out = [0u8; SIZE_REDUCE as usize];
    out[0..8].copy_from_slice(&ws.to_le_bytes());
    out[8..16].copy_from_slice(&c.to_le_bytes());
    let words = [m, n, splits, ldw, ldc, alpha.to_bits(), beta.to_bits(), wstride];
    for (i, w) in words.into_iter().enumerate() {
        out[16 + 4 * i..20 + 4 * i].copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// The grouped kernels' arguments.
pub const GROUPED_ARGS: [Arg; 3] = [
    Arg { name: "table", offset: OFF_TABLE, size: 8, pointer: true },
    Arg { name: "groups", offset: OFF_GROUPS, size: 4, pointer: false },
    Arg { name: "tiles", offset: OFF_TILES, size: 4, pointer: false },
];

/// One grouped-table entry: the group's plain kernel arguments (see [`pack`]) and its first
/// workgroup id.
#[allow(clippy::too_many_arguments)]
pub fn pack_group(
    a: u64,
    b: u64,
    c: u64,
    m: u32,
    n: u32,
    k: u32,
    lda: u32,
    ldb: u32,
    ldc: u32,
    alpha: f32,
    beta: f32,
    tile_start: u32,
) -> [u8; ENTRY_BYTES as usize] {
    let mut out = [0u8; ENTRY_BYTES as usize];
    out[..SIZE as usize].copy_from_slice(&pack(a, b, c, m, n, k, lda, ldb, ldc, alpha, beta)[..SIZE as usize]);
    out[OFF_TILE_START as usize..OFF_TILE_START as usize + 4].copy_from_slice(&tile_start.to_le_bytes());
    out
}

/// The `tile_start` of each group of `(m, n)` sizes for a `(MT, NT)` tile, and the total:
/// the launch's workgroups.
pub fn grouped_tiles(sizes: &[(u32, u32)], tile: (u32, u32)) -> (Vec<u32>, u64) {
    let mut starts = Vec::with_capacity(sizes.len());
    let mut total = 0u64;
    for &(m, n) in sizes {
        starts.push(total as u32);
        total += u64::from(m.div_ceil(tile.0)) * u64::from(n.div_ceil(tile.1));
    }
    (starts, total)
}

/// Kernel arguments of a grouped launch.
pub fn pack_grouped(table: u64, groups: u32, tiles: u32) -> [u8; SIZE_GROUPED as usize] {
    let mut out = [0u8; SIZE_GROUPED as usize];
    out[0..8].copy_from_slice(&table.to_le_bytes());
    out[8..12].copy_from_slice(&groups.to_le_bytes());
    out[12..16].copy_from_slice(&tiles.to_le_bytes());
    out
}

/// Kernarg bytes of a configuration.
pub fn size(c: &crate::ir::KernelConfig) -> u32 {
    if c.split == crate::ir::SplitK::Reduce {
        SIZE_REDUCE
    } else if c.split == crate::ir::SplitK::Transpose {
        SIZE_TRANSPOSE
    } else if c.split == crate::ir::SplitK::Partial {
        if c.scaled() {
            SIZE_SCALED
        } else {
            SIZE
        }
    } else if c.grouped {
        SIZE_GROUPED
    } else if c.block_scale != crate::ir::BlockScale::None {
        SIZE_BLOCK
    } else if c.scaled() {
        SIZE_SCALED
    } else if c.fusion == crate::ir::Fusion::NONE {
        SIZE
    } else {
        SIZE_FUSED
    }
}

/// The arguments of a configuration.
pub fn args(c: &crate::ir::KernelConfig) -> &'static [Arg] {
    if c.split == crate::ir::SplitK::Reduce {
        &REDUCE_ARGS
    } else if c.split == crate::ir::SplitK::Transpose {
        &TRANSPOSE_ARGS
    } else if c.split == crate::ir::SplitK::Partial {
        if c.scaled() {
            &PARTIAL_SCALED_ARGS
        } else {
            &PARTIAL_ARGS
        }
    } else if c.grouped {
        &GROUPED_ARGS
    } else if c.block_scale != crate::ir::BlockScale::None {
        &BLOCK_ARGS
    } else if c.scaled() {
        &ARGS[..19]
    } else if c.fusion == crate::ir::Fusion::NONE {
        &ARGS[..11]
    } else {
        &ARGS[..14]
    }
}

/// One argument: name, offset, size, whether it is a pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arg {
    pub name: &'static str,
    pub offset: u32,
    pub size: u32,
    pub pointer: bool,
}

/// The layout, in order (the first 11 for plain kernels, 14 for fused epilogues, 19 for
/// fp8 kernels).
pub const ARGS: [Arg; 19] = [
    Arg { name: "a", offset: OFF_A, size: 8, pointer: true },
    Arg { name: "b", offset: OFF_B, size: 8, pointer: true },
    Arg { name: "c", offset: OFF_C, size: 8, pointer: true },
    Arg { name: "m", offset: OFF_M, size: 4, pointer: false },
    Arg { name: "n", offset: OFF_N, size: 4, pointer: false },
    Arg { name: "k", offset: OFF_K, size: 4, pointer: false },
    Arg { name: "lda", offset: OFF_LDA, size: 4, pointer: false },
    Arg { name: "ldb", offset: OFF_LDB, size: 4, pointer: false },
    Arg { name: "ldc", offset: OFF_LDC, size: 4, pointer: false },
    Arg { name: "alpha", offset: OFF_ALPHA, size: 4, pointer: false },
    Arg { name: "beta", offset: OFF_BETA, size: 4, pointer: false },
    Arg { name: "bias", offset: OFF_BIAS, size: 8, pointer: true },
    Arg { name: "clamp_lo", offset: OFF_CLAMP, size: 4, pointer: false },
    Arg { name: "clamp_hi", offset: OFF_CLAMP + 4, size: 4, pointer: false },
    Arg { name: "scale_a", offset: OFF_SCALE, size: 4, pointer: false },
    Arg { name: "scale_b", offset: OFF_SCALE + 4, size: 4, pointer: false },
    Arg { name: "scale_d", offset: OFF_SCALE + 8, size: 4, pointer: false },
    Arg { name: "scale_row", offset: OFF_SCALE_ROW, size: 8, pointer: true },
    Arg { name: "scale_col", offset: OFF_SCALE_COL, size: 8, pointer: true },
];

/// Block-scaled kernels' arguments: the fp8 layout, then the block scales.
pub const BLOCK_ARGS: [Arg; 25] = {
    let mut out = [ARGS[0]; 25];
    let mut i = 0;
    while i < 19 {
        out[i] = ARGS[i];
        i += 1;
    }
    out[19] = Arg { name: "bscale_a", offset: OFF_BSCALE, size: 8, pointer: true };
    out[20] = Arg { name: "bscale_b", offset: OFF_BSCALE + 8, size: 8, pointer: true };
    out[21] = Arg { name: "ldsa", offset: OFF_BSCALE_LD, size: 4, pointer: false };
    out[22] = Arg { name: "ldsb", offset: OFF_BSCALE_LD + 4, size: 4, pointer: false };
    out[23] = Arg { name: "gsa", offset: OFF_BSCALE_LD + 8, size: 4, pointer: false };
    out[24] = Arg { name: "gsb", offset: OFF_BSCALE_LD + 12, size: 4, pointer: false };
    out
};

/// Packs a block-scaled kernel's arguments: `base` (from [`pack`], with any per-tensor scales
/// already set), then the block-scale tensors and their leading dimensions in bytes.
pub fn pack_block(
    base: &[u8; SIZE_SCALED as usize],
    scale_a: u64,
    scale_b: u64,
    ldsa: u32,
    ldsb: u32,
) -> [u8; SIZE_BLOCK as usize] {
    let mut out = [0u8; SIZE_BLOCK as usize];
    out[..SIZE_SCALED as usize].copy_from_slice(base);
    let b = OFF_BSCALE as usize;
    out[b..b + 8].copy_from_slice(&scale_a.to_le_bytes());
    out[b + 8..b + 16].copy_from_slice(&scale_b.to_le_bytes());
    let l = OFF_BSCALE_LD as usize;
    out[l..l + 4].copy_from_slice(&ldsa.to_le_bytes());
    out[l + 4..l + 8].copy_from_slice(&ldsb.to_le_bytes());
    out[l + 8..l + 12].copy_from_slice(&1u32.to_le_bytes());
    out[l + 12..l + 16].copy_from_slice(&1u32.to_le_bytes());
    out
}

/// Sets a block-scaled fp8 kernel's K-group strides of the scales (elements; [`pack_block`]
/// sets 1, row-major scales).
pub fn with_group_strides(args: &mut [u8; SIZE_BLOCK as usize], gsa: u32, gsb: u32) {
    let l = OFF_BSCALE_LD as usize + 8;
    args[l..l + 4].copy_from_slice(&gsa.to_le_bytes());
    args[l + 4..l + 8].copy_from_slice(&gsb.to_le_bytes());
}

/// The `.args` metadata entries of a configuration.
pub fn metadata_args(c: &crate::ir::KernelConfig) -> Vec<KernelArg> {
    args(c)
        .iter()
        .map(|a| {
            if a.pointer {
                KernelArg::global_buffer(a.name, a.offset)
            } else {
                KernelArg::by_value(a.name, a.offset, a.size)
            }
        })
        .collect()
}

/// Packs the argument bytes (112: a plain kernel reads the first 56, a fused one 80), the
/// fused-epilogue arguments set to no bias and no clamp, the fp8 scales to 1 and no scale
/// vectors.
#[allow(clippy::too_many_arguments)]
pub fn pack(
    a: u64,
    b: u64,
    c: u64,
    m: u32,
    n: u32,
    k: u32,
    lda: u32,
    ldb: u32,
    ldc: u32,
    alpha: f32,
    beta: f32,
) -> [u8; SIZE_SCALED as usize] {
    let mut out = [0u8; SIZE_SCALED as usize];
    out[0..8].copy_from_slice(&a.to_le_bytes());
    out[8..16].copy_from_slice(&b.to_le_bytes());
    out[16..24].copy_from_slice(&c.to_le_bytes());
    for (off, v) in [(OFF_M, m), (OFF_N, n), (OFF_K, k), (OFF_LDA, lda), (OFF_LDB, ldb), (OFF_LDC, ldc)] {
        out[off as usize..off as usize + 4].copy_from_slice(&v.to_le_bytes());
    }
    out[OFF_ALPHA as usize..OFF_ALPHA as usize + 4].copy_from_slice(&alpha.to_le_bytes());
    out[OFF_BETA as usize..OFF_BETA as usize + 4].copy_from_slice(&beta.to_le_bytes());
    with_epilogue(&mut out, 0, f32::NEG_INFINITY, f32::INFINITY);
    with_scales(&mut out, 1.0, 1.0, 1.0);
    out
}

/// Sets the fp8 kernels' per-tensor scales.
pub fn with_scales(args: &mut [u8; SIZE_SCALED as usize], scale_a: f32, scale_b: f32, scale_d: f32) {
    for (i, x) in [scale_a, scale_b, scale_d].into_iter().enumerate() {
        let at = (OFF_SCALE + 4 * i as u32) as usize;
        args[at..at + 4].copy_from_slice(&x.to_le_bytes());
    }
}

/// Sets the fp8 kernels' per-row (op(A), length m) and per-column (op(B), length n) scale
/// vectors' device addresses (0: none, all ones).
pub fn with_scale_vectors(args: &mut [u8; SIZE_SCALED as usize], row: u64, col: u64) {
    args[OFF_SCALE_ROW as usize..OFF_SCALE_ROW as usize + 8].copy_from_slice(&row.to_le_bytes());
    args[OFF_SCALE_COL as usize..OFF_SCALE_COL as usize + 8].copy_from_slice(&col.to_le_bytes());
}

/// Sets the epilogue arguments: the bias vector's address and the clamp bounds.
pub fn with_epilogue(args: &mut [u8; SIZE_SCALED as usize], bias: u64, clamp_lo: f32, clamp_hi: f32) {
    args[OFF_BIAS as usize..OFF_BIAS as usize + 8].copy_from_slice(&bias.to_le_bytes());
    args[OFF_CLAMP as usize..OFF_CLAMP as usize + 4].copy_from_slice(&clamp_lo.to_le_bytes());
    args[OFF_CLAMP as usize + 4..OFF_CLAMP as usize + 8].copy_from_slice(&clamp_hi.to_le_bytes());
}

/// Launch geometry for a problem: `(grid in work-items, workgroup size)`.
pub fn launch(m: u32, n: u32, tile: (u32, u32, u32), threads: u32) -> ([u32; 3], [u32; 3]) {
    ([m.div_ceil(tile.0) * threads, n.div_ceil(tile.1), 1], [threads, 1, 1])
}

/// Launch geometry in workgroups (what the emulator's `launch` and HIP's
/// `hipModuleLaunchKernel` take): `(grid in workgroups, workgroup size)`.
pub fn launch_workgroups(m: u32, n: u32, tile: (u32, u32, u32), threads: u32) -> ([u32; 3], [u32; 3]) {
    ([m.div_ceil(tile.0), n.div_ceil(tile.1), 1], [threads, 1, 1])
}
