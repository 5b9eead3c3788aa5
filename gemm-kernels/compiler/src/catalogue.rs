//! The catalogue: every kernel `build.rs` compiles, for gfx942 and gfx950, as a list of
//! families (a tile/wave/MFMA shape with the dtypes, transposes and alignments it is
//! built for) and why each was chosen.
//!
//! * `base` 128x128 (KT 32 on gfx942: 32 KiB of LDS, two workgroups per CU; KT 64 on
//!   gfx950), 4 waves (2x2), 32x32 MFMAs, every dtype pair, transpose and alignment
//!   class. Every transpose's LDS traffic is conflict-free: on gfx942 the swizzle moves
//!   chunks across the two 64-byte rows of a bank line, so the two half-waves of a
//!   transposed write land in different halves; on gfx950 a transposed copy puts a wave's
//!   64 lanes on 64 consecutive K of one 128-byte row.
//! * `large`: gfx950 256x256x64 with 8 waves (2x4), 16x16x32 MFMAs (the shape of
//!   HipKittens' fastest MI355X bf16 kernel), 128 KiB of its 160 KiB LDS; gfx942
//!   256x256x32, 8 waves, 32x32x8 (64 KiB, its whole LDS; KT = 64 does not fit), only for
//!   the transposes whose copies do not transpose (A^T B, both K-contiguous). Vector
//!   (`v8`) alignment only: big tiles are for big, aligned problems.
//! * `fused`: the base tile, bf16 -> bf16, NN and TN, with a column bias and ReLU, GELU
//!   (tanh form) or SiLU fused into the epilogue (the dispatcher does not pick them for
//!   plain GEMMs: their manifest names the epilogue).
//!   Their workgroups are remapped (`grid.rs`): 4 consecutive tiles per XCD per round, bands
//!   of 8 tile rows.
//! * `f32`: f32 inputs through `v_mfma_f32_32x32x2_f32` (128x128x32 on gfx942, 128x64x64
//!   on gfx950), every transpose and alignment.
//! * `small` 64x64x64, 4 waves (2x2), 16x16 MFMAs, every transpose, `v8` and `e1`:
//!   problems with few rows or columns waste less of a smaller tile.
//! * `pingpong`: the `large` tile with the 8-wave ping-pong loop (`schedule/`, two
//!   clusters), bf16/f16, `v8`: on gfx950 NN and TN with register-staged copies, on gfx942
//!   TN (the large family's transposes): the schedule that predicts fastest (`gemm compare
//!   --schedules`).

use crate::grid::GridOrder;
use crate::ir::{Activation, Align, Arch, Bias, DmaPolicy, Fusion, KernelConfig, MfmaShape};
use crate::schedule::Schedule;
use gemm_core::DType;

/// A family of catalogue kernels.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    pub name: &'static str,
    pub arch: Arch,
    pub tile: (u32, u32, u32),
    pub wave_grid: (u32, u32),
    pub mfma: MfmaShape,
    pub stages: u32,
    /// `(trans_a, trans_b)` pairs built.
    pub transposes: &'static [(bool, bool)],
    pub aligns: &'static [Align],
    /// Workgroup order (`grid.rs`).
    pub grid: GridOrder,
    /// Fused epilogues built (plain: `[Fusion::NONE]`).
    pub fusions: &'static [Fusion],
    /// Input dtypes built; the output is f32 and the input type (only the input type
    /// for fused epilogues).
    pub dtypes: &'static [DType],
    /// Why this family is in the catalogue (for the manifest).
    pub why: &'static str,
    /// The main-loop schedule (`schedule/`).
    pub schedule: Schedule,
    /// When the main loop copies with LDS-DMA.
    pub dma: DmaPolicy,
}

const ALL_T: &[(bool, bool)] = &[(false, false), (false, true), (true, false), (true, true)];
const K_CONTIGUOUS: &[(bool, bool)] = &[(true, false)];
const BOTH: &[Align] = &[Align::Vec8, Align::Elem];
const V8: &[Align] = &[Align::Vec8];
const PLAIN: &[Fusion] = &[Fusion::NONE];
/// The large tiles' workgroup order: 4 consecutive tiles per XCD per round, then bands of 8
/// tile rows (a 256x256 tile's A and B panels at K 8192 are 4 MiB each: neighbours on one
/// XCD share them in its 4 MiB L2).
const LARGE_GRID: GridOrder = GridOrder { chunk: 4, wgm: 8 };
const HALF: &[DType] = &[DType::Bf16, DType::F16];
/// The inference epilogues: column bias (per output feature of `C = X W`) and an activation.
const FUSED: &[Fusion] = &[
    Fusion { bias: Bias::PerColumn, act: Activation::Relu, clamp: false },
    Fusion { bias: Bias::PerColumn, act: Activation::GeluTanh, clamp: false },
    Fusion { bias: Bias::PerColumn, act: Activation::Silu, clamp: false },
];

/// The families, per arch.
pub fn families() -> Vec<Family> {
    let mut out = vec![];
    for arch in Arch::ALL {
        out.push(Family {
            name: "base",
            arch,
            // gfx942: 32 KiB of LDS, two workgroups per CU.
            tile: (128, 128, if arch == Arch::Gfx942 { 32 } else { 64 }),
            wave_grid: (2, 2),
            mfma: MfmaShape::native_32(arch),
            stages: 2,
            transposes: ALL_T,
            aligns: BOTH,
            grid: GridOrder::PLAIN,
            fusions: PLAIN,
            dtypes: HALF,
            why: "every problem: all transposes and alignments, conflict-free LDS",
            schedule: Schedule::Pipelined,
            dma: DmaPolicy::Auto,
        });
        out.push(Family {
            name: "fused",
            arch,
            tile: (128, 128, if arch == Arch::Gfx942 { 32 } else { 64 }),
            wave_grid: (2, 2),
            mfma: MfmaShape::native_32(arch),
            stages: 2,
            transposes: &[(false, false), (true, false)],
            aligns: V8,
            grid: GridOrder::PLAIN,
            fusions: FUSED,
            dtypes: &[DType::Bf16],
            why: "inference epilogues (column bias + ReLU/GELU/SiLU) on the base tile, bf16 -> bf16",
            schedule: Schedule::Pipelined,
            dma: DmaPolicy::Auto,
        });
        out.push(match arch {
            Arch::Gfx950 => Family {
                name: "large",
                arch,
                tile: (256, 256, 64),
                wave_grid: (2, 4),
                mfma: MfmaShape::native_16(arch),
                stages: 2,
                transposes: ALL_T,
                aligns: V8,
                grid: LARGE_GRID,
            fusions: PLAIN,
                dtypes: HALF,
                why: "big aligned problems: 8 waves, 16x16x32, 128 KiB LDS (HipKittens' MI355X bf16 shape)",
                schedule: Schedule::Pipelined,
                dma: DmaPolicy::Auto,
            },
            Arch::Gfx942 => Family {
                name: "large",
                arch,
                tile: (256, 256, 32),
                wave_grid: (2, 4),
                mfma: MfmaShape::native_32(arch),
                stages: 2,
                transposes: K_CONTIGUOUS,
                aligns: V8,
                grid: LARGE_GRID,
            fusions: PLAIN,
                dtypes: HALF,
                why: "big aligned A^T B problems: 8 waves, 64 KiB LDS; KT 32 keeps it in LDS, so only the non-transposing copies",
                schedule: Schedule::Pipelined,
                dma: DmaPolicy::Auto,
            },
        });
        if arch == Arch::Gfx942 {
            out.push(Family {
                name: "pingpong",
                arch,
                tile: (256, 256, 32),
                wave_grid: (2, 4),
                mfma: MfmaShape::native_32(arch),
                stages: 2,
                transposes: K_CONTIGUOUS,
                aligns: V8,
                grid: LARGE_GRID,
                fusions: PLAIN,
                dtypes: HALF,
                why: "the large tile with the 8-wave ping-pong (two clusters, Triton's rule for 256x256x32x16): the fastest predicted gfx942 bf16 schedule (gemm compare --schedules)",
                schedule: Schedule::PingPong { clusters: 2 },
                dma: DmaPolicy::Auto,
            });
        }
        if arch == Arch::Gfx950 {
            out.push(Family {
                name: "pingpong",
                arch,
                tile: (256, 256, 64),
                wave_grid: (2, 4),
                mfma: MfmaShape::native_16(arch),
                stages: 2,
                transposes: &[(false, false), (true, false)],
                aligns: V8,
                grid: LARGE_GRID,
                fusions: PLAIN,
                dtypes: HALF,
                why: "the large tile with the 8-wave ping-pong (two clusters) and register-staged copies: the fastest predicted bf16 schedule (gemm compare --schedules)",
                schedule: Schedule::PingPong { clusters: 2 },
                dma: DmaPolicy::Never,
            });
        }
        out.push(Family {
            name: "f32",
            arch,
            // KT 64 on gfx950: a transposed copy's wave then covers one 256-byte row, the
            // whole bank line (with KT 32 two rows of one write share banks).
            tile: if arch == Arch::Gfx942 { (128, 128, 32) } else { (128, 64, 64) },
            wave_grid: (2, 2),
            mfma: MfmaShape { m: 32, n: 32, k: 2 },
            stages: 2,
            transposes: ALL_T,
            aligns: BOTH,
            grid: GridOrder::PLAIN,
            fusions: PLAIN,
            dtypes: &[DType::F32],
            why: "f32 inputs on the matrix cores (32x32x2_f32), every transpose and alignment",
            schedule: Schedule::Pipelined,
            dma: DmaPolicy::Auto,
        });
        out.push(Family {
            name: "small",
            arch,
            tile: (64, 64, 64),
            wave_grid: (2, 2),
            mfma: MfmaShape::native_16(arch),
            stages: 2,
            transposes: ALL_T,
            aligns: BOTH,
            grid: GridOrder::PLAIN,
            fusions: PLAIN,
            dtypes: HALF,
            why: "narrow problems: less padding in a 64x64 tile",
            schedule: Schedule::Pipelined,
            dma: DmaPolicy::Auto,
        });
    }
    out
}

/// All catalogue configurations with their family, in a fixed order: family (per arch),
/// input dtype, output dtype (f32 or the input type), transposes, alignment class.
pub fn entries() -> Vec<(Family, KernelConfig)> {
    let mut out = vec![];
    for f in families() {
        let fused = f.fusions != PLAIN;
        for &ab in f.dtypes {
            let outs: &[DType] = if ab == DType::F32 { &[DType::F32] } else { &[DType::F32, ab] };
            for &c in outs {
                if fused && c != ab {
                    continue;
                }
                for &(ta, tb) in f.transposes {
                    for &align in f.aligns {
                        for &fusion in f.fusions {
                            let mut cfg = KernelConfig::new(f.arch, ab, c, ta, tb, align).with_shape(
                                f.tile,
                                f.wave_grid,
                                f.mfma,
                                f.stages,
                            );
                            cfg.fusion = fusion;
                            cfg.grid = f.grid;
                            cfg.schedule = f.schedule;
                            cfg.direct_to_lds = f.dma;
                            out.push((f, cfg));
                        }
                    }
                }
            }
        }
    }
    out
}

/// All catalogue configurations, in [`entries`] order.
pub fn configs() -> Vec<KernelConfig> {
    entries().into_iter().map(|(_, c)| c).collect()
}
