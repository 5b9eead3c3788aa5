//! Three-stage configurations (`passes/pipeline.rs`) shared by the test files that run
//! them (`emulator.rs`) and round-trip them through LLVM (`llvm_roundtrip.rs`): each copy
//! path on both archs, 4 and 8 waves.

use gemm_compiler::ir::{Align, Arch, DmaPolicy, KernelConfig, MfmaShape};
use gemm_core::DType;

/// How a sample's main loop copies A and B (checked against the buffer-ops pass's choice).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copies {
    /// Both operands by LDS-DMA.
    Dma,
    /// Both register-staged (two staging sets each).
    Staged,
    /// A register-staged, B by LDS-DMA.
    Mixed,
}

/// `(configuration, copy paths)`.
pub fn samples() -> Vec<(KernelConfig, Copies)> {
    let (g2, g3) = (Arch::Gfx942, Arch::Gfx950);
    let cfg = |arch, ab, c, (ta, tb), align, tile, grid, mfma, dma| {
        let mut k = KernelConfig::new(arch, ab, c, ta, tb, align).with_shape(tile, grid, mfma, 3);
        k.direct_to_lds = dma;
        k
    };
    let (bf, f16, f32) = (DType::Bf16, DType::F16, DType::F32);
    let (v8, e1) = (Align::Vec8, Align::Elem);
    let (auto, always, never) = (DmaPolicy::Auto, DmaPolicy::Always, DmaPolicy::Never);
    vec![
        // gfx950: A^T B, both K-contiguous: LDS-DMA (16 bytes per lane).
        (cfg(g3, bf, f32, (true, false), v8, (128, 128, 64), (2, 2), MfmaShape::native_32(g3), auto), Copies::Dma),
        // gfx950 NN: A M-contiguous is staged, B by DMA.
        (cfg(g3, bf, bf, (false, false), v8, (128, 128, 64), (2, 2), MfmaShape::native_32(g3), auto), Copies::Mixed),
        // gfx950, no DMA: both staged.
        (cfg(g3, f16, f16, (false, true), v8, (128, 128, 64), (2, 2), MfmaShape::native_16(g3), never), Copies::Staged),
        // gfx950, 8 waves.
        (cfg(g3, bf, f32, (true, false), v8, (256, 128, 64), (2, 4), MfmaShape::native_16(g3), auto), Copies::Dma),
        // gfx942: register-staged (the catalogue's choice there).
        (cfg(g2, bf, f32, (false, false), v8, (128, 128, 32), (2, 2), MfmaShape::native_16(g2), auto), Copies::Staged),
        // gfx942 LDS-DMA (one dword per lane).
        (cfg(g2, bf, bf, (true, false), v8, (128, 128, 32), (2, 2), MfmaShape::native_32(g2), always), Copies::Dma),
        // gfx942 element copies (`e1`: any leading dimension).
        (cfg(g2, f16, f32, (true, true), e1, (128, 128, 32), (2, 2), MfmaShape::native_16(g2), auto), Copies::Staged),
        // f32 inputs (gfx950, 16x16x4_f32): A staged, B by DMA.
        (
            cfg(g3, f32, f32, (false, false), v8, (64, 64, 64), (2, 2), MfmaShape { m: 16, n: 16, k: 4 }, auto),
            Copies::Mixed,
        ),
        // gfx942 8 waves: three 16 KiB buffers in its 64 KiB of LDS.
        (cfg(g2, bf, f32, (true, false), v8, (128, 128, 32), (2, 4), MfmaShape::native_16(g2), auto), Copies::Staged),
    ]
}
