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
/// Kernarg bytes of plain kernels.
pub const SIZE: u32 = 56;
/// Kernarg bytes of kernels with a fused epilogue.
pub const SIZE_FUSED: u32 = 80;

/// Kernarg bytes of a configuration.
pub fn size(c: &crate::ir::KernelConfig) -> u32 {
    if c.fusion == crate::ir::Fusion::NONE {
        SIZE
    } else {
        SIZE_FUSED
    }
}

/// The arguments of a configuration.
pub fn args(c: &crate::ir::KernelConfig) -> &'static [Arg] {
    if c.fusion == crate::ir::Fusion::NONE {
        &ARGS[..11]
    } else {
        &ARGS
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

/// The layout, in order (the first 11 for plain kernels).
pub const ARGS: [Arg; 14] = [
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
];

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

/// Packs the argument bytes (80: a plain kernel reads the first 56), the fused-epilogue
/// arguments set to no bias and no clamp.
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
) -> [u8; SIZE_FUSED as usize] {
    let mut out = [0u8; SIZE_FUSED as usize];
    out[0..8].copy_from_slice(&a.to_le_bytes());
    out[8..16].copy_from_slice(&b.to_le_bytes());
    out[16..24].copy_from_slice(&c.to_le_bytes());
    for (off, v) in [(OFF_M, m), (OFF_N, n), (OFF_K, k), (OFF_LDA, lda), (OFF_LDB, ldb), (OFF_LDC, ldc)] {
        out[off as usize..off as usize + 4].copy_from_slice(&v.to_le_bytes());
    }
    out[OFF_ALPHA as usize..OFF_ALPHA as usize + 4].copy_from_slice(&alpha.to_le_bytes());
    out[OFF_BETA as usize..OFF_BETA as usize + 4].copy_from_slice(&beta.to_le_bytes());
    with_epilogue(&mut out, 0, f32::NEG_INFINITY, f32::INFINITY);
    out
}

/// Sets the epilogue arguments: the bias vector's address and the clamp bounds.
pub fn with_epilogue(args: &mut [u8; SIZE_FUSED as usize], bias: u64, clamp_lo: f32, clamp_hi: f32) {
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
