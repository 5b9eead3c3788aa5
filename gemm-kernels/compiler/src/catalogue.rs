//! The catalogue: every kernel `build.rs` compiles, for gfx942 and gfx950, as a list of
//! families (a tile/wave/MFMA shape with the dtypes, transposes and alignments it is
//! built for) and why each was chosen.
//!
//! The shapes were chosen with the timing model: `gemm sweep` (gemm-lab `sweep.rs`)
//! compiles each configuration of the space and predicts it (bf16 -> f32, `nn`, `v8`,
//! sustained clock, footprint prefix 64 KiB). At 8192³:
//!
//! | arch   | configuration (MTxNTxKT, waves, MFMA)  | TFLOP/s | note |
//! |--------|----------------------------------------|--------:|------|
//! | gfx950 | 256x256x64 w2x4 32x32x16               | 1242.2  | best of the space swept |
//! | gfx950 | 256x256x64 w2x4 16x16x32 (`large`)     | 1236.0  | HipKittens' shape, within 0.5% |
//! | gfx950 | 256x256x32 w4x2 32x32x16               |  996.1  | |
//! | gfx950 | 128x128x64 w2x2 32x32x16 (`base`)      |  775.9  | best 128x128 |
//! | gfx950 | 128x128x32 w4x2 32x32x16               |  761.3  | 16 LDS conflict cycles per K step |
//! | gfx950 | 128x128x32 w2x2 32x32x16               |  656.1  | lgkmcnt-bound |
//! | gfx942 | 128x128x32 w2x2 16x16x16 (`base`)      |  643.1  | best of the space swept |
//! | gfx942 | 128x128x32 w4x2 32x32x8                |  620.3  | |
//! | gfx942 | 128x128x32 w2x2 32x32x8 (old base)     |  553.6  | |
//! | gfx942 | 256x256x32 w4x2 32x32x8                |  510.6  | |
//! | gfx942 | 256x256x32 w2x4 32x32x8 (`large`)      |  498.1  | |
//! | gfx942 | 128x128x64 w4x2 32x32x8                |  507.8  | KT 64 halves occupancy |
//!
//! * `base` 128x128 (KT 32 on gfx942: 32 KiB of LDS, two workgroups per CU; KT 64 on
//!   gfx950), 4 waves (2x2); 16x16x16 MFMAs on gfx942 (the sweep's best there), 32x32x16 on
//!   gfx950; every dtype pair, transpose and alignment class: the kernel for every
//!   problem, and the best for large squares on gfx942. Every transpose's LDS traffic is
//!   conflict-free: on gfx942 the swizzle moves chunks across the two 64-byte rows of a
//!   bank line, so the two half-waves of a transposed write land in different halves; on
//!   gfx950 a transposed copy puts a wave's 64 lanes on 64 consecutive K of one 128-byte
//!   row (with KT 32 two rows of one write share banks: 16 conflict cycles, so KT 64).
//! * `large`: gfx950 256x256x64 with 8 waves (2x4), 16x16x32 MFMAs (the shape of
//!   HipKittens' fastest MI355X bf16 kernel; 32x32x16 predicts 0.5% more, within the
//!   model's resolution), 128 KiB of its 160 KiB LDS: the best for large squares on
//!   gfx950. gfx942 256x256x32, 8 waves, 32x32x8 (64 KiB, its whole LDS; KT = 64 does not
//!   fit), every transpose: one workgroup per CU, so it fills the GPU only for problems
//!   of about 304 tiles; at 8192³ the model puts it below `base` (498 vs 643).
//!   Vector (`v8`) alignment only: big tiles are for big, aligned problems.
//! * `fused`: the 128x128 tile (32x32 MFMAs), bf16 -> bf16, NN and TN, with a column bias
//!   and ReLU, GELU (tanh form) or SiLU fused into the epilogue (the dispatcher does not
//!   pick them for plain GEMMs: their manifest names the epilogue).
//!   Their workgroups are remapped (`grid.rs`): 4 consecutive tiles per XCD per round, bands
//!   of 8 tile rows.
//! * `f32`: f32 inputs through `v_mfma_f32_32x32x2_f32` (128x128x32 on gfx942, 128x64x64
//!   on gfx950), every transpose and alignment.
//! * `fp8`: fp8 inputs with per-tensor scales (`kernel_args.rs`), outputs f32, bf16 and
//!   f16, A^T B only (both operands K-contiguous, as hipBLASLt's fp8 GEMMs), `v8`
//!   (leading dimensions a multiple of 16). gfx950: OCP e4m3/e5m2, 128x128x128 with 4
//!   waves (2x2) and `32x32x64_f8f6f4`, direct-to-LDS copies, 64 KiB of LDS (two
//!   workgroups per CU). gfx942: FNUZ e4m3/e5m2, 256x256x64, 8 waves, `32x32x16_fp8_fp8`,
//!   its whole 64 KiB of LDS. Chosen with the timing model at 4096^3 (f16 out, plain
//!   grid): gfx950 2131 TFLOP/s; AMD's CDNA4 tile 256x256x128 with 8 waves predicts 2477
//!   (32x32x64) and 2209 (16x16x128) but needs 266 and 258 VGPR+AGPR per wave, more than
//!   the 256 per lane that two waves per SIMD (8 waves on 4 SIMDs) leave, so it is not
//!   built until fragments are loaded per K step; 256x256x64 fits and predicts 1923.
//!   gfx942: 995 against 913 with 16x16x32, 905 for 256x128x64, 871 for 128x128x64 and
//!   736 for 128x128x128.
//!   Every fp8 kernel also takes optional per-row (op(A)) and per-column (op(B)) f32
//!   scale vectors (`kernel_args.rs`).
//! * `fp8mixed`: the `fp8` tile with mixed flavours, A e4m3 with B e5m2 and the reverse
//!   (gfx942 `*_fp8_bf8` / `*_bf8_fp8` MFMAs, gfx950 f8f6f4 with per-operand formats), TN,
//!   outputs f32, bf16, f16. `fp8t`: the `fp8` tile for e4m3 in NN, NT and TT, the
//!   M/N-contiguous operands transposed in registers into K runs (`lds::CopyGeom::kgroup`:
//!   pairs of K columns on gfx942, quads on gfx950), conflict-free LDS. Left out: e5m2 and
//!   mixed flavours in the non-TN layouts (gradients and mixed GEMMs come TN).
//! * `grouped`: the base tile reading a device-side table of problems (`kernel_args.rs`,
//!   "Grouped kernels"): one launch for a grouped GEMM of mixed sizes (mixture-of-experts
//!   layers, hipBLASLt's grouped GEMM), every transpose, `v8`; bf16/f16 -> f32 or the input
//!   type. Groups whose operands are not 16-byte aligned take the plain kernels, one launch
//!   per group (the dispatcher's fallback).
//! * `xf32` (gfx942 only): f32 inputs through `v_mfma_f32_32x32x4_xf32` (4x the f32 rate,
//!   inputs rounded to 10 mantissa bits), 128x128x32, every transpose and alignment; the
//!   dispatcher runs them only for problems that allow xf32 (`GemmProblem::allow_xf32`).
//! * `small` 64x64x64, 4 waves (2x2), 16x16 MFMAs, every transpose, `v8` and `e1`:
//!   small problems and tall-skinny ones (few rows or columns) waste less of a smaller
//!   tile and spread over more CUs.
//! * `pingpong` and `pingpong32` (gfx942): the `large` tile with 16x16x16 (`pingpong`) or
//!   32x32x8 (`pingpong32`) MFMAs and the 8-wave ping-pong loop (`schedule/`, two
//!   clusters), bf16/f16, every transpose (`PINGPONG_T`), `v8`: the schedule that predicts fastest (`gemm compare
//!   --schedules`, `nn` at 8192^3: 612.2 and 623.0 TFLOP/s, Triton's best 505.7; under the
//!   timing model before its TCP front end 16x16x16 led, 651.1 against 611.4, so both are
//!   built and the characterisation table picks). gfx950's 8-wave 256x256x64 tiles need
//!   more than the 256 VGPR+AGPR per lane that two waves per SIMD leave (`fit::resident`),
//!   so gfx950 has no 8-wave family.
//! * `splitk_pingpong` (gfx942): both ping-pong tiles as split-K partial kernels, for the
//!   split tail of a grid whose last round would be mostly idle (`gemm-dispatch`
//!   `splitk::choose_tail`: 8192^3 `nn` predicts 700.8 TFLOP/s with 32x32x8, 1.39x Triton),
//!   and the fp8 ping-pong tile (A^T B, both FNUZ flavours; the partials apply the scale
//!   vectors, the reduction the per-tensor scales): 8192^3 e4m3 -> bf16 `x W^T` runs 7168
//!   columns plain and the last 1024 split in two, 793.1 us by the timing model against
//!   857.5 plain (1386 against 1282 TFLOP/s; Triton 3.9's best 1328.5 in `gemm peers`).
//! * `splitk` and `splitk_reduce` ([`split_families`], `ir::SplitK`): problems whose
//!   `m x n` tiles cannot fill the CUs and whose K is long run as a pair: the `small` tile
//!   (64x64x64, 4 waves, 16x16 MFMAs; bf16/f16, every transpose, `v8` and `e1`) over K ranges
//!   of the grid's z dimension into f32 workspace slabs, then a reduction (one lane per
//!   element of a 64x4 block, 16 slab loads in flight) summing the slabs in order into C
//!   (f32, bf16, f16): deterministic. The small tile because the point is spreading few
//!   tiles over many CUs: at 128x128x65536 its 4 tiles times 147 splits predict 16.4 us
//!   on gfx942 (`gemm splitk`), against 718 us for the best plain kernel.
//! * `splitk_decode`: the decode shapes ([`DECODE_SHAPES`]) as partial kernels, bf16, f16
//!   and the arch's fp8 flavours (fp8 partials apply the per-row / per-column scale vectors,
//!   the reduction's alpha and beta carry the per-tensor scales: `kernel_args.rs`), for
//!   weight shards whose few rows leave most CUs idle (`gemm-dispatch` `splitk.rs`,
//!   `decode_split`).
//! * `splitk_decode_rows`: the decode-rows shapes ([`DECODE_ROWS_SHAPES`]) as partial kernels
//!   in the same input types, for layers with few weight rows at M = 8..64 (Llama-8B down,
//!   4096 x 14336: 32 workgroups of 128 rows).
//! * `transpose` ([`transpose_families`], `ir::SplitK::Transpose`, `lower/transpose.rs`): not a
//!   GEMM; copies a column-major matrix of bytes transposed (128x128-byte blocks through LDS,
//!   whole lines in and out), the dispatcher's pre-pass for fp8 problems whose kernel would
//!   read both operands M/N-contiguous (`gemm-dispatch` `plan/transpose.rs`).
//! * `stages3` (gfx950): 256x256x32, 8 waves (2x4), 32x32x16 MFMAs, three pipeline stages
//!   (`passes/pipeline.rs`: three LDS buffers, 96 KiB; the LDS-DMA copies of the tile after
//!   next in flight), A^T B, bf16/f16, `v8`. The timing model (`gemm sweep --stages 2,3
//!   --tile 256x256x32 --mfma 32 --waves 8 --trans tn`, plain grid, sustained clock) puts
//!   it at 1082.2 TFLOP/s at 8192^3 against 1072.5 for two stages of the tile (1057.1 vs
//!   1035.8 at 4096^3). It stays below the `interleave` tile on squares (`gemm plan --model
//!   timing --arch gfx950 --transa --layout col`, 4096^3: 134.6 us against 110.8); the
//!   timing model picks it for short-K A^T B problems (8192x4096x160: 37.1 us against
//!   41.8), where KT 32 rather than the third stage is what wins (two stages of the tile:
//!   302.9 TFLOP/s against 297.2 there). At 4096^3: where three stages lower the occupancy they lose
//!   (gfx950 128x128x64 w2x2: 897 vs 1030; gfx942 128x128x32 w2x2: 391 vs 435); where one
//!   workgroup per CU is all there is and the loop waits on `vmcnt` they win most (gfx942
//!   256x64x32 w4x1: 290 vs 225). gfx942 has no three-stage family: the tiles whose three
//!   buffers fit its 64 KiB (at most 21 KiB each) either lose a workgroup per CU to the
//!   third buffer (128x128x32) or stay far below `base` (256x64x32).
//! * `interleave` (gfx950): 256x256x64 with 4 waves (one per SIMD, 128x128 each, 16x16x32
//!   MFMAs, 256 AGPRs of accumulators), the 4-wave interleave with four slices, bf16/f16,
//!   every transpose, `v8`, all copies by LDS-DMA (`DmaPolicy::Transposing`): an
//!   M/N-contiguous operand goes into an M/N-major LDS tile as it is and its fragments are
//!   read with `ds_read_b64_tr_b16` (`lds::mn_major`), as Triton's gfx950 kernels do. With
//!   the timing model's TCP front end (16 clocks per `dwordx4`, 12-entry queue, 32 KB in
//!   flight) the register-staged version lost half its speed: `nn` predicts 609.6 TFLOP/s
//!   staged (the transposing copy's 64 `ds_write_b16` per wave and K tile bind the issue),
//!   619.4 with B alone by DMA, 1304.0 with both (`gemm compare --schedules`, 8192^3),
//!   against 797.5 for Triton's best (256x256x32, 8 waves, 3 stages).
//! * `fp8` on gfx942 runs its tile with the 8-wave ping-pong (two clusters): 1203 against
//!   1070 TFLOP/s for the pipelined loop at 8192^3 (e4m3 -> f16).
//! * `fp8il` (gfx950): fp8 A^T B on 256x256x128 with 4 waves, 32x32x64 f8f6f4 MFMAs, the
//!   4-wave interleave (HipKittens' best fp8 schedule; four slices = two K steps x two
//!   halves of the N blocks), register-staged copies, 128 KiB of LDS.
//! * `fp8pp` (gfx950): the tile of AMD's CDNA4 fp8 blog (256x256x128, 8 waves, LDS-DMA,
//!   128 KiB of LDS), 2x4 waves of 128x64 with 32x32x64 f8f6f4 MFMAs, and the 8-wave
//!   ping-pong with slim fragments (`Schedule::PingPongSlim`, two clusters = the two K
//!   steps of the tile): the fragment registers hold one K step (48 VGPRs instead of 96),
//!   so two waves per SIMD are resident (the whole-tile fragments needed 272 VGPR+AGPR).
//!   Its prologue loads a K tail of whole vectors with vector loads and its epilogue issues
//!   a block's C and scale loads before its arithmetic (`schedule::slim_edges`).
//!   `gemm compare --schedules` (e4m3 -> f16): 2773.3 TFLOP/s at 4096^3 and 3082.5 at
//!   8192^3, against 2125.0 and 2488.9 for `fp8il`; the blog's own ping-pong (`gemm
//!   calibrate --only blog_pingpong`) predicts 3060.4 and 3145.9 (four clusters: 2203.7 at
//!   4096^3 before the lean edges; without them two clusters gave 2478.3 and 2907.8).
//!   e4m3 in NN, NT and TT too (issue 24 item 3), the `interleave` family's way: every copy
//!   by LDS-DMA, an M/N-contiguous operand kept M/N-major in LDS (256-byte rows, one K
//!   each, 32-byte slots XORed by `row % 8`) and its fragments read with
//!   `ds_read_b64_tr_b8` (`lds::mn_major`, `DmaPolicy::Transposing`). `gemm kernels --model
//!   --arch gfx950 --only fp8_f16_` (kernel layouts, column-major): 2690.1 / 2615.9 / 2742.2
//!   TFLOP/s (NN / NT / TT) at 4096^3 and 2994.9 / 2904.4 / 3044.5 at 8192^3, against
//!   2773.3 and 3082.5 for TN; the `fp8t` tile they replace for big problems predicts
//!   1017.5 / 776.0 / 1064.3 at 4096^3.
//! * `fp8t` on gfx942 runs the TN family's ping-pong (two clusters) with the in-register
//!   transposes: NN / NT / TT 1188.4 / 1015.1 / 1191.5 TFLOP/s at 4096^3 and 1261.5 /
//!   1047.2 / 1278.5 at 8192^3 (TN 1166.0 and 1211.4; the pipelined loop of the same tile
//!   predicted 917.1 / 875.6 / 975.5 and 951.7 / 900.3 / 1012.2, e4m3 -> f16, `gemm
//!   kernels --model --arch gfx942 --only fp8_f16_`). NT, both operands transposed in
//!   registers, is bound by issue (20% of the wave-cycles issuing, 20% in issue conflicts):
//!   the 16x16x32 MFMAs (990.4), four clusters (865.9) and the 4-wave interleave with quads
//!   of K (967.5) predict less at 4096^3.
//! * `fp8m` (128x128x64) and `fp8s` (64x64x128) on gfx942: the tiles for problems of few
//!   256x256 tiles, TN in both flavours and e4m3 in NN, NT and TT (in-register transposes).
//!   With NT and TT, row-major A^T B (kernel NT) at 1024^3 is planned at 15.4 us (`fp8s`)
//!   against 48.2 for the 256x256 tile, at 2048^3 41.9 (`fp8m`) against 85.7 (`gemm plan
//!   --transa`, e4m3 -> bf16).
//! * `bsfp8` (both archs): block-scaled fp8 (DeepSeek-V3's 128x128 weight and 1x128 activation
//!   scales) on 128x128x128 with 4 waves, the group sums scaled into VGPR accumulators
//!   between the MFMAs (`lower/block_fp8.rs`). `bsfp8pp` (gfx950): the `fp8pp` tile and slim
//!   ping-pong with each K step's MFMA into one of two rotating temporaries, its scaled adds
//!   after the next MFMA (a whole tile's group sums do not fit beside the 128 accumulators in
//!   the 256 registers of two waves per SIMD), its epilogue staged through LDS like
//!   `fp8pp`'s: `gemm mx --fp8-blocks` (bf16 out) 44.0 us at 4096^3 against 42.9 for `fp8pp`
//!   per-tensor (97%) and 77.0 for `bsfp8`; 334.5, 328.8 and 518.6 at 8192^3. The dispatcher takes it where its tiles fill every CU. gfx942's `bsfp8` runs
//!   8 waves (4x2 of 32x64) with the 8-wave interleave (`schedule::interleave8`), its carried
//!   sums in VGPRs, and every block-scaled kernel the lean prologue and epilogue
//!   (`schedule::slim_edges`): 130.3 us at 4096^3 against 117.9 for fp8 per-tensor (90%),
//!   857.2 against 905.9 at 8192^3 (`gemm mx --fp8-blocks`, bf16 out).
//! * `mx`, `mxil`, `mxpp` (gfx950): OCP MX with the scaled MFMA (`lower/mx.rs`). `mxpp` runs
//!   MXFP4 and MXFP8 on the `fp8pp` tile and slim ping-pong, MXFP4's scales staged through LDS
//!   beside the data: `gemm mx --tiled-scales` (bf16 out) puts MXFP4 at 8192^3 at 191 us,
//!   5749 TFLOP/s (88% of the fp4 ceiling, 1.87x `fp8pp` per-tensor in the same run), against
//!   270 for `mxil`; MXFP8 at 3044. The dispatcher takes it where 256x256 tiles fill every CU.

use crate::grid::GridOrder;
use crate::ir::{Activation, Align, Arch, Bias, DmaPolicy, Fusion, KernelConfig, MfmaShape, SplitK};
use crate::schedule::Schedule;
use gemm_core::mx::MxFormat;
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
    /// for fused epilogues; f32, bf16 and f16 for fp8 inputs).
    pub dtypes: &'static [DType],
    /// Why this family is in the catalogue (for the manifest).
    pub why: &'static str,
    /// The main-loop schedule (`schedule/`).
    pub schedule: Schedule,
    /// When the main loop copies with LDS-DMA.
    pub dma: DmaPolicy,
    /// Split-K role: plain kernels, or f32 partial sums over a K range (`ir::SplitK`).
    pub split: SplitK,
    /// Decode families ([`Schedule::Decode`]): the waves that split K (the wave grid is
    /// `(1, 1)`: every wave owns the whole block of C); [`Schedule::DecodeRows`]: the waves
    /// stacked along the rows (the wave grid `(waves, 1)`). 0 elsewhere.
    pub decode_waves: u32,
    /// MX families (`ir::BlockScale::Mx`): the `(A, B)` element formats built (each with
    /// f32, bf16 and f16 outputs); `dtypes` is then unused. Empty elsewhere.
    pub mx: &'static [(MxFormat, MxFormat)],
    /// Block scales of every kernel of the family (`BlockScale::None` for plain families;
    /// MX families set it per format pair).
    pub block_scale: crate::ir::BlockScale,
}

impl Family {
    /// A family of `name` on `arch` with the catalogue's common choices, which a literal
    /// overrides where it differs (`Family { transposes: K_CONTIGUOUS, ..Family::new(..) }`):
    /// two stages, every transpose, `v8` alignment, the plain grid order, no fused epilogue,
    /// bf16 and f16 inputs, the software pipeline and LDS-DMA where the copy allows it.
    const fn new(
        name: &'static str,
        arch: Arch,
        tile: (u32, u32, u32),
        wave_grid: (u32, u32),
        mfma: MfmaShape,
        why: &'static str,
    ) -> Family {
        Family {
            name,
            arch,
            tile,
            wave_grid,
            mfma,
            stages: 2,
            transposes: ALL_T,
            aligns: V8,
            grid: GridOrder::PLAIN,
            fusions: PLAIN,
            dtypes: HALF,
            why,
            schedule: Schedule::Pipelined,
            dma: DmaPolicy::Auto,
            split: SplitK::None,
            decode_waves: 0,
            mx: &[],
            block_scale: crate::ir::BlockScale::None,
        }
    }
}

const ALL_T: &[(bool, bool)] = &[(false, false), (false, true), (true, false), (true, true)];
/// Both operands K-contiguous (A^T B), the fp8 families' layout.
const K_CONTIGUOUS: &[(bool, bool)] = &[(true, false)];
/// The layouts beside A^T B (an operand or both contiguous along M/N).
const NOT_TN: &[(bool, bool)] = &[(false, false), (false, true), (true, true)];
/// Row-major `C = A B` alone (column-major `nn`).
const NN_ONLY: &[(bool, bool)] = &[(false, false)];
const BOTH: &[Align] = &[Align::Vec8, Align::Elem];
const V8: &[Align] = &[Align::Vec8];
const PLAIN: &[Fusion] = &[Fusion::NONE];
/// The ping-pong families' layouts (gfx942): all four. `nt` and `tt` (row-major A^T B and
/// A^T B^T) ran on the `large` tile's pipelined loop until session 28, 39% and 25% behind `nn`
/// at 4096^3 (issue 24 item 3: every layout within 10% of the best); with the ping-pong
/// (characterisation table, bf16 -> bf16): row-major TT 214.6 us against NN 215.8 at 4096^3
/// and 1737.5 against 1737.5 at 8192^3; row-major TN (both operands M/N-contiguous, each
/// transposed in registers: gfx942 has no transposing LDS read) 254.1 against 300.6 before at
/// 4096^3 (18% behind NN) and 1912.6 against 2379.2 at 8192^3 (10%).
const PINGPONG_T: &[(bool, bool)] = ALL_T;
/// The ping-pong family with 32x32x8 MFMAs (gfx942).
pub const PINGPONG_32: &str = "pingpong32";
const PINGPONG_WHY_16: &str = "the large tile with 16x16x16 MFMAs and the 8-wave ping-pong (two clusters, Triton's rule for 256x256x32x16): 612.2 TFLOP/s at 8192^3 nn against 505.7 for Triton's best (gemm compare --schedules); 687.0 with the split tail (splitk_pingpong)";
const PINGPONG_WHY_32: &str = "the large tile with 32x32x8 MFMAs and the 8-wave ping-pong (two clusters): 623.0 TFLOP/s at 8192^3 nn, 617.3 at 4096^3, 700.8 with the split tail (gemm compare --schedules); the table picks it or the 16x16x16 family per problem";

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

const FP8_WHY_GFX950: &str = "fp8 (OCP e4m3/e5m2) A^T B with per-tensor scales: 128x128x128, 4 waves, 32x32x64 f8f6f4 MFMAs, direct-to-LDS, 64 KiB LDS (two workgroups per CU)";
const FP8_WHY_GFX942: &str =
    "fp8 (FNUZ e4m3/e5m2) A^T B with per-tensor scales: 256x256x64, 8 waves, 32x32x16 fp8 MFMAs, 64 KiB LDS, the 8-wave ping-pong (two clusters)";
/// gfx942's fp8 tile for the problems the 256x256 ping-pong leaves idle (issue 24 item 5).
pub const FP8_MID: &str = "fp8m";
const FP8_MID_WHY: &str = "fp8 (FNUZ e4m3/e5m2 A^T B, e4m3 in every layout) problems of few 256x256 tiles (1024^2 outputs are 16 of them for 304 CUs): 128x128x64, 4 waves, 32x32x16 fp8 MFMAs, the pipelined loop";
/// The deeper-pipelined bf16/f16 tiles of the small squares ([`deep_families`]).
pub const DEEP: &str = "deep";
const DEEP_WHY: &str = "small bf16/f16 squares (1024^3, 2048^3: one or two workgroups per CU), A^T B and row-major A B: tiles with three LDS buffers where they fit, so the copies of the tile after next are in flight while a tile is computed (gemm sweep --stages 2,3: 1.14x-1.25x Triton's best predicted)";
/// The deeper-pipelined fp8 tiles of the small squares ([`fp8_deep`]).
pub const FP8_DEEP: &str = "fp8d";
const FP8_DEEP_WHY: &str = "small fp8 (e4m3 A^T B) squares (1024^3, 2048^3: one or two workgroups per CU): 64x64x128 and 128x128x128 with 8 waves on gfx950 and three LDS buffers where they fit, so the copies of the tile after next are in flight while a tile is computed (gemm sweep --stages 2,3: 1.19x and 1.22x Triton's best on gfx950, 1.16x and 1.07x on gfx942)";
/// gfx942's smallest fp8 tile: four times the workgroups of [`FP8_MID`]'s for the smallest problems.
pub const FP8_SMALL: &str = "fp8s";
const FP8_SMALL_WHY: &str = "the smallest fp8 (FNUZ A^T B, e4m3 in every layout) problems (1024^2 outputs: 256 tiles for 304 CUs): 64x64x128, 4 waves, 16x16x32 fp8 MFMAs, the pipelined loop";
const FP8_SMALL_WHY_GFX950: &str = "the smallest fp8 (OCP A^T B, e4m3 in every layout) problems (1024^2 outputs: 256 tiles for 256 CUs, where the 128x128x128 fp8 tile makes 64): 64x64x128, 4 waves, 16x16x128 f8f6f4 MFMAs, the pipelined loop";
const FP8IL_WHY_GFX950: &str = "big fp8 (OCP e4m3/e5m2) A^T B problems: 256x256x128 with 4 waves (one per SIMD), 32x32x64 f8f6f4 MFMAs, the 4-wave interleave (HipKittens' fp8 schedule, four slices), register-staged copies, 128 KiB LDS: the fastest predicted gfx950 fp8 tile (gemm compare --schedules)";

const FP8PP_T_WHY_GFX950: &str = "big fp8 (OCP e4m3) problems in NN, NT and TT: the fp8pp tile and slim ping-pong, every copy by LDS-DMA, M/N-contiguous operands into M/N-major tiles read with ds_read_b64_tr_b8";

const FP8PP_WHY_GFX950: &str = "big fp8 (OCP e4m3/e5m2) A^T B problems: the tile of AMD's CDNA4 fp8 blog (256x256x128, 8 waves, LDS-DMA, 128 KiB LDS) with 2x4 waves of 128x64, 32x32x64 f8f6f4 MFMAs and the 8-wave ping-pong with slim fragments (one K step's fragments in registers: two waves per SIMD resident): 2773.3 / 3082.5 TFLOP/s at 4096^3 / 8192^3 against 2125.0 / 2488.9 for fp8il and 3060.4 / 3145.9 for the blog's ping-pong (gemm compare --schedules, gemm calibrate)";

const INTERLEAVE_WHY_GFX950: &str = "big aligned problems: 256x256x64 with 4 waves (one per SIMD, 128x128 each), the 4-wave interleave (four slices, MFMAs interleaved with the next slice's LDS reads and the next tile's copies), every copy by LDS-DMA, M/N-contiguous operands into M/N-major tiles read with ds_read_b64_tr_b16: the fastest resident gfx950 bf16/f16 tile (gemm compare --schedules: 1304 TFLOP/s nn at 8192^3 against 797.5 for Triton's best)";

const STAGES3_WHY_GFX950: &str = "big A^T B problems: 256x256x32 with 8 waves (2x4, 74 VGPRs + 128 AGPRs: two waves per SIMD fit), 32x32x16 MFMAs, three stages (96 KiB of LDS: the LDS-DMA copies of the tile after next in flight while a tile is computed): 1082.2 TFLOP/s predicted at 8192^3 against 1072.5 with two stages, 1057.1 against 1035.8 at 4096^3 (gemm sweep --stages 2,3 --tile 256x256x32 --trans tn)";

/// The families, per arch.
pub fn families() -> Vec<Family> {
    let mut out = vec![];
    for arch in Arch::ALL {
        out.push(Family {
            aligns: BOTH,
            // gfx942: 32 KiB of LDS, two workgroups per CU.
            // The sweep (module docs): on gfx942 16x16x16 predicts 643 TFLOP/s at 8192³
            // against 554 for 32x32x8; on gfx950 32x32x16 776 against 768 for 16x16x32.
            ..Family::new(
                "base",
                arch,
                (128, 128, if arch == Arch::Gfx942 { 32 } else { 64 }),
                (2, 2),
                if arch == Arch::Gfx942 { MfmaShape::native_16(arch) } else { MfmaShape::native_32(arch) },
                "every problem: all transposes and alignments, conflict-free LDS",
            )
        });
        out.push(Family {
            transposes: &[(false, false), (true, false)],
            fusions: FUSED,
            dtypes: &[DType::Bf16],
            ..Family::new(
                "fused",
                arch,
                (128, 128, if arch == Arch::Gfx942 { 32 } else { 64 }),
                (2, 2),
                MfmaShape::native_32(arch),
                "inference epilogues (column bias + ReLU/GELU/SiLU) on the base tile, bf16 -> bf16",
            )
        });
        // gfx950 has no `large` family: 256x256x64 with 8 waves (HipKittens' MI355X shape)
        // needs 258-314 VGPR+AGPR per lane, and two waves per SIMD leave 256 each
        // (`fit::resident`), so it cannot launch until its fragments are loaded per K half.
        if arch == Arch::Gfx942 {
            out.push(Family {
                grid: LARGE_GRID,
                ..Family::new(
                    "large",
                    arch,
                    (256, 256, 32),
                    (2, 4),
                    MfmaShape::native_32(arch),
                    "big aligned problems: 8 waves, 64 KiB LDS (KT 32: its whole LDS), every transpose",
                )
            });
        }
        out.extend(pingpong_families(arch));
        if arch == Arch::Gfx950 {
            out.push(Family {
                // Every transpose: no staging VGPRs (174-192 VGPRs + 256 AGPRs).
                transposes: ALL_T,
                grid: LARGE_GRID,
                schedule: Schedule::Interleave { slices: 4 },
                dma: DmaPolicy::Transposing,
                ..Family::new(
                    "interleave",
                    arch,
                    (256, 256, 64),
                    (2, 2),
                    MfmaShape::native_16(arch),
                    INTERLEAVE_WHY_GFX950,
                )
            });
        }
        if arch == Arch::Gfx950 {
            out.push(Family {
                stages: 3,
                // A^T B only: both operands LDS-DMA; an M/N-contiguous operand's
                // transposed writes cost 16 conflict cycles per K step at KT 32.
                transposes: K_CONTIGUOUS,
                grid: LARGE_GRID,
                ..Family::new("stages3", arch, (256, 256, 32), (2, 4), MfmaShape::native_32(arch), STAGES3_WHY_GFX950)
            });
        }
        out.push(Family {
            aligns: BOTH,
            dtypes: &[DType::F32],
            // KT 64 on gfx950: a transposed copy's wave then covers one 256-byte row, the
            // whole bank line (with KT 32 two rows of one write share banks).
            ..Family::new(
                "f32",
                arch,
                if arch == Arch::Gfx942 { (128, 128, 32) } else { (128, 64, 64) },
                (2, 2),
                MfmaShape { m: 32, n: 32, k: 2 },
                "f32 inputs on the matrix cores (32x32x2_f32), every transpose and alignment",
            )
        });
        out.extend(deep_families(arch));
        out.push(fp8_family(arch));
        // A^T B in both flavours, and e4m3 in the other layouts (M/N-contiguous operands
        // transposed in registers into K runs, as `fp8t` does): gfx942's 128x128 tile for
        // problems of few 256x256 tiles, and on both archs the smallest fp8 tile (issue 24 item
        // 5; on gfx950 the 128x128x128 `fp8` tile gives a 1024^2 output 64 workgroups for 256
        // CUs).
        let (flavours, e4) = fp8_flavours(arch);
        for (transposes, dtypes) in [(K_CONTIGUOUS, flavours), (NOT_TN, e4)] {
            if arch == Arch::Gfx942 {
                out.push(Family {
                    transposes,
                    dtypes,
                    ..Family::new(FP8_MID, arch, (128, 128, 64), (2, 2), MfmaShape::fp8_32(arch), FP8_MID_WHY)
                });
            }
            out.push(Family { transposes, dtypes, ..fp8_small(arch) });
        }
        out.extend(fp8_deep(arch));
        if arch == Arch::Gfx950 {
            out.push(Family {
                transposes: K_CONTIGUOUS,
                grid: LARGE_GRID,
                dtypes: &[DType::Fp8E4M3, DType::Fp8E5M2],
                schedule: Schedule::Interleave { slices: 4 },
                dma: DmaPolicy::Never,
                ..Family::new("fp8il", arch, (256, 256, 128), (2, 2), MfmaShape::fp8_32(arch), FP8IL_WHY_GFX950)
            });
        }
        if arch == Arch::Gfx950 {
            out.push(Family {
                transposes: K_CONTIGUOUS,
                grid: LARGE_GRID,
                dtypes: &[DType::Fp8E4M3, DType::Fp8E5M2],
                schedule: Schedule::PingPongSlim { clusters: 2 },
                ..Family::new("fp8pp", arch, (256, 256, 128), (2, 4), MfmaShape::fp8_32(arch), FP8PP_WHY_GFX950)
            });
            // e4m3 in the other layouts: an M/N-contiguous operand copied by LDS-DMA as it
            // is into an M/N-major tile and read with ds_read_b64_tr_b8 (`lds::mn_major`).
            out.push(Family {
                transposes: NOT_TN,
                grid: LARGE_GRID,
                dtypes: &[DType::Fp8E4M3],
                schedule: Schedule::PingPongSlim { clusters: 2 },
                dma: DmaPolicy::Transposing,
                ..Family::new("fp8pp", arch, (256, 256, 128), (2, 4), MfmaShape::fp8_32(arch), FP8PP_T_WHY_GFX950)
            });
        }
        out.extend(fp8_more(arch));
        if arch == Arch::Gfx950 {
            out.extend(mx_families(arch));
        }
        out.push(Family {
            transposes: K_CONTIGUOUS,
            dtypes: match arch {
                Arch::Gfx942 => &[DType::Fp8E4M3Fnuz],
                Arch::Gfx950 => &[DType::Fp8E4M3],
            },
            block_scale: crate::ir::BlockScale::Fp8Blocks,
            // gfx942 (one workgroup per CU: 64 KiB of LDS): the interleave hides the LDS
            // reads and copies behind the MFMAs, the group sums carried into the next tile
            // (`gemm mx --fp8-blocks` 8192^3: 919 us against 1086 pipelined with 4 waves, at
            // least as fast on the DeepSeek-V3 shapes; its 8-wave form below). gfx950 keeps two workgroups per CU only with the
            // pipelined loop's single set of sums (the interleave's second set in AGPRs costs
            // the second workgroup: 122 us against 76 at 4096^3).
            schedule: match arch {
                Arch::Gfx942 => Schedule::Interleave { slices: 4 },
                Arch::Gfx950 => Schedule::Pipelined,
            },
            // gfx942: 8 waves, 4x2 of 32x64 (one M block, two N blocks each), the sums in VGPRs
            // and the rotated 8-wave interleave (`schedule::interleave8`), with the lean
            // prologue and epilogue (`schedule::slim_edges`): the timing model, bf16 out
            // (probe of the config at M = N = K), 4096^3 130.0 us against 132.2 for 4 waves
            // of 32x128 and 134.0 for 2x2 waves of 64x64 (148.6 before the lean edges);
            // 8192^3 858.0 against 856.6 and 869.0.
            ..Family::new(
                BLOCK_FP8,
                arch,
                (128, 128, 128),
                if arch == Arch::Gfx942 { (4, 2) } else { (2, 2) },
                MfmaShape::fp8_32(arch),
                BLOCK_FP8_WHY,
            )
        });
        if arch == Arch::Gfx942 {
            // Half the tile (128x64, 8 waves of 32x32) for problems of few 128x128 tiles, which
            // `plan_fp8_blocks` gives it below half the CUs: kernel M x N x K (weights x
            // tokens x K) 1536x1024x7168 (96 tiles) 32.7 us against 54.8, 7168x64x18432 80.2
            // against 139.2; with the tiles filling the CUs it loses (4608x1024x7168, 288
            // tiles: 66.7 against 54.4; 4096^3 143.7 against 129.8).
            out.push(Family {
                transposes: K_CONTIGUOUS,
                dtypes: &[DType::Fp8E4M3Fnuz],
                block_scale: crate::ir::BlockScale::Fp8Blocks,
                schedule: Schedule::Interleave { slices: 4 },
                ..Family::new(BLOCK_FP8, arch, (128, 64, 128), (4, 2), MfmaShape::fp8_32(arch), BLOCK_FP8_HALF_WHY)
            });
        }
        if arch == Arch::Gfx950 {
            // The `fp8pp` tile and schedule with each K step's MFMAs into two rotating
            // temporaries (`lower/block_fp8.rs`): the big problems' kernel (the dispatcher's
            // `plan_fp8_blocks` takes it where its tiles fill every CU).
            out.push(Family {
                transposes: K_CONTIGUOUS,
                grid: LARGE_GRID,
                dtypes: &[DType::Fp8E4M3],
                block_scale: crate::ir::BlockScale::Fp8Blocks,
                schedule: Schedule::PingPongSlim { clusters: 2 },
                ..Family::new(BLOCK_FP8_PP, arch, (256, 256, 128), (2, 4), MfmaShape::fp8_32(arch), BLOCK_FP8_PP_WHY)
            });
        }
        if arch == Arch::Gfx942 {
            out.push(Family {
                aligns: BOTH,
                dtypes: &[DType::F32],
                ..Family::new(
                    "xf32",
                    arch,
                    (128, 128, 32),
                    (2, 2),
                    MfmaShape { m: 32, n: 32, k: 4 },
                    "f32 inputs at xf32 precision (32x32x4_xf32, 4x the f32 rate), only where the caller allows it",
                )
            });
        }
        out.push(Family {
            aligns: BOTH,
            ..Family::new(
                "small",
                arch,
                (64, 64, 64),
                (2, 2),
                MfmaShape::native_16(arch),
                "narrow problems: less padding in a 64x64 tile",
            )
        });
        // The small tile with a deep K tile and 8 waves (issue 24 item 5): squares of about
        // 1024 fill the CUs with 64x64 tiles, and a 128-deep K step halves the loop's
        // iterations and barriers. `gemm sweep --m 1024 --n 1024 --k 1024 --mn 64,128 --kt
        // 32,64,128 --out-dtype bf16` (timing model): gfx950 tn 270.3 TFLOP/s, nn 185.5 (the
        // 64x64x64 `small` tile: 217.2 and 131.7 in `gemm peers`; Triton 3.9's best, 64x64x128
        // with 4 warps: 288.2 and 213.8); gfx942 tn 246.5, nn 153.4 (`small`: 194.5, 121.3;
        // Triton 230.1, 155.1). 64 KiB of LDS: gfx942's whole LDS, two workgroups of 8 waves.
        out.push(Family {
            ..Family::new(
                SMALL_DEEP,
                arch,
                (64, 64, 128),
                (2, 4),
                MfmaShape::native_16(arch),
                "squares of about 1024: the small tile with a 128-deep K step and 8 waves",
            )
        });
        if arch == Arch::Gfx950 {
            // Squares of about 2048 on gfx950 (issue 24 item 5): a 2048^2 output is 256
            // tiles of 128x128 for 256 CUs, one round of one workgroup each; 8-wave tiles of
            // half the area with the wide side along the operand that is contiguous along
            // M/N. `gemm sweep --arch gfx950 --m 2048 --n 2048 --k 2048 --trans T --tile X
            // --waves 8 --mfma 16 --out-dtype bf16` (timing model, us): nn 64x256x128 36.4
            // (the `base` tile's plan today: 51.5); tt 256x64x128 39.4 (`gemm plan --model
            // timing`: 42.3 against 60.6) is not built: its characterisation grid's tall
            // problems span 2 GiB of A, so the table could not rank it; tn 64x128x64 sweeps at 23.4 but `gemm plan --model
            // timing` (128 KiB footprint prefix) puts it level with `base` (25.06 us) and nt
            // (both operands M/N-contiguous) gains nothing (78-83 for all three): not built.
            out.push(Family {
                transposes: &[(false, false)],
                ..Family::new(
                    MID8,
                    arch,
                    (64, 256, 128),
                    (2, 4),
                    MfmaShape::native_16(arch),
                    "squares of about 2048 on gfx950, NN: an 8-wave tile of half the base tile's area, wide along the N-contiguous operand",
                )
            });
        }
        out.extend(decode_families(arch));
        out.extend(decode_rows_families(arch));
        // The dispatcher's grouped plan ranks the grouped kernels that fit every group by the
        // table rows of their plain twins (gemm-dispatch `plan/grouped.rs`); the decode ones
        // fit only groups of at most 16 activation columns in the Linear layout.
        out.push(Family { name: GROUPED_DECODE, dtypes: HALF, ..decode_families(arch)[grouped_decode_shape(arch)] });
        out.push(Family {
            name: GROUPED_DECODE_ROWS,
            dtypes: HALF,
            ..decode_rows_families(arch)[GROUPED_DECODE_ROWS_SHAPE]
        });
        out.push(Family {
            ..Family::new(
                GROUPED,
                arch,
                (128, 128, if arch == Arch::Gfx942 { 32 } else { 64 }),
                (2, 2),
                MfmaShape::native_32(arch),
                "grouped GEMM in one launch: each workgroup finds its group and tile in a device-side problem table",
            )
        });
    }
    out
}

/// The family whose kernels are built with `KernelConfig::grouped`.
pub const GROUPED: &str = "grouped";
/// The small tile with a 128-deep K step and 8 waves ([`families`]).
pub const SMALL_DEEP: &str = "smallk";
/// gfx950's 8-wave tiles for squares of about 2048 ([`families`]).
pub const MID8: &str = "mid8";
/// Mixture-of-experts decode in one launch: the first decode shape reading the grouped table.
pub const GROUPED_DECODE: &str = "grouped_decode";
/// Mixture-of-experts decode in one launch with the waves on the rows: the
/// [`GROUPED_DECODE_ROWS_SHAPE`] decode-rows shape reading the grouped table.
pub const GROUPED_DECODE_ROWS: &str = "grouped_decode_rows";
/// The decode families' name ([`decode_families`]).
pub const DECODE: &str = "decode";

/// One decode shape: rows and columns of C per workgroup, waves along K, loads per row block.
type DecodeShape = (u32, u32, u32, u32);

/// The decode families (`lower/decode.rs`, issue 23): A^T B (a Linear layer's `x W^T` with
/// the weights as A), every 16-bit and fp8 input of the arch, and split-K partials of every
/// one ([`SPLITK_DECODE`]). Shapes chosen with `gemm sweep --decode --trans tn` (bf16, the timing model) on the
/// decode table's problems; the table picks per problem:
///
/// * 16x16, 2 waves, 8 loads: M = 1..16 over many weight rows (gfx942 4096x1x4096: 9.05 us,
///   91% of the model's streaming ceiling);
/// * 32x16, 1 wave, 4 loads: fewer, longer workgroups (gfx942 8192x1x12288: 50.1 us, 98% of
///   the model's HBM ceiling, where today's split-K 64x64 plan predicts 90.3 us);
/// * 16x16, 8 waves, 4 loads: few weight rows (Llama-70B shards: 1280 rows are 80 blocks), K
///   split over 8 waves of each workgroup for bytes in flight;
/// * 16x64 and 32x64, 4 waves, 2 loads: M = 17..64, four column blocks per wave;
/// * 64x16, 8 waves, 2 loads: gfx950 at M = 16 (28672x16x4096: 39.3 us against 50.3 for
///   16x16: four row blocks per activation load), and its grouped (mixture-of-experts) shape;
/// * 32x32, 1 wave, 4 loads: M = 17..32 in one column block instead of half of a 64-column
///   one (no loads and MFMAs of padding columns), two row blocks per activation load, eight
///   loads of A in flight per wave (session 27, `gemm sweep --decode --trans tn`, bf16,
///   6144x32x4096: gfx942 17.51 us against 20.09 for 32x64 w4 u2; gfx950 14.87 against 15.99).
///   At M = 33..64 no decode shape beat the pipelined split-K plan in that sweep (gfx942
///   8192x64x3584: best 64x32 w1 u4 23.63 us, plan 24.78), so M = 64 keeps the 64-column shapes.
pub const DECODE_SHAPES: &[DecodeShape] =
    &[(16, 16, 2, 8), (32, 16, 1, 4), (16, 16, 8, 4), (16, 64, 4, 2), (32, 64, 4, 2), (64, 16, 8, 2), (32, 32, 1, 4)];

/// The grouped decode shape per arch (an index into [`DECODE_SHAPES`], `gemm decode --moe`):
/// gfx942 16x16 with 2 waves and 8 loads, gfx950 64x16 with 8 waves and 2 loads. Since the
/// grouped decode-rows kernel ([`GROUPED_DECODE_ROWS_SHAPE`]) the dispatcher runs neither
/// mixture-of-experts row of `gemm decode --moe` on them; they stay for groups whose plain
/// twins' rows rank them first.
fn grouped_decode_shape(arch: Arch) -> usize {
    match arch {
        Arch::Gfx942 => 0,
        Arch::Gfx950 => 5,
    }
}

fn decode_families(arch: Arch) -> Vec<Family> {
    let fp8: &'static [DType] = match arch {
        Arch::Gfx942 => &[DType::Bf16, DType::F16, DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz],
        Arch::Gfx950 => &[DType::Bf16, DType::F16, DType::Fp8E4M3, DType::Fp8E5M2],
    };
    DECODE_SHAPES
        .iter()
        .map(|&(rows, cols, waves, unroll)| Family {
            transposes: K_CONTIGUOUS,
            dtypes: fp8,
            stages: 1,
            schedule: Schedule::Decode { unroll: unroll as u8 },
            decode_waves: waves,
            ..Family::new(
                DECODE,
                arch,
                (rows, cols, 0),
                (1, 1),
                MfmaShape::native_16(arch),
                "decode (M = 1..64 of a Linear layer): the weights streamed once straight into the MFMA registers, K split over the waves, no LDS tiles",
            )
        })
        .collect()
}
/// The decode families with the waves on the rows ([`decode_rows_families`]).
pub const DECODE_ROWS: &str = "decode_rows";

/// One decode-rows shape: row blocks of 16 per wave, columns of C, waves, loads per row block.
type DecodeRowsShape = (u32, u32, u32, u32);

/// The decode families with the waves on the rows (`lower/decode_rows.rs`, issue 23,
/// `KernelConfig::decode_rows`): B's K-step slice staged once per workgroup in LDS, each
/// wave its own rows over the whole step, so only the weights hold the CU's loads in flight.
/// Chosen by the timing model on 28672x{16,32,64}x4096 bf16 (Llama-8B gate_up, the 224 MiB
/// of weights past gfx950's Infinity Cache; `gemm sweep --decode --trans tn --m 28672 --k
/// 4096`), against the decode shapes above at the same M:
///
/// * 64x16, 4 waves, 4 loads: M <= 16 (gfx950 35.9 us, 92% HBM busy, where 32x16 w1 u4
///   predicts 73.8 us and the table's plan 43.4);
/// * 128x32, 8 waves, 4 loads: M = 17..32 (gfx950 34.9 us, 88% HBM busy, against 57.3 for
///   32x32 w1 u4 at 36% and the plan's 38.9);
/// * 128x64, 4 waves of two row blocks, 2 loads: M = 33..64 (gfx942 48.4 us against the plan's
///   54.7; gfx950 37.9, where the plan's pipelined 64x64x128 predicts 35.3);
///
/// Not built: 32x32 and 32x16 with 2 waves and 2 loads. The model had put them at 37.4 and
/// 37.6 us on gfx942 28672x{32,16}x4096, below the 44.5 us floor at peak HBM: its footprint pass
/// counted the activations every workgroup of a CU reads as L2 hits, which the cycle simulation
/// spent on its own misses, the weights. With one set of requested lines per CU (session 34,
/// `gemm_emu::timing::grid`) they predict 50.6 and 49.8 us (HBM 98-99% busy), no faster than the
/// shapes built (gfx942 28672 x 4096 bf16 by the same model: 48.5 us at M = 16 on 128x16 w8 u8,
/// `gemm plan --model timing`; 47.5 at M = 32 on 128x32 w8 u4, `gemm decode`), so they stay out.
///
/// * 128x16, 8 waves, 8 loads: the grouped (mixture-of-experts) shape,
///   [`GROUPED_DECODE_ROWS_SHAPE`], and a plain candidate like the others.
///
/// Split-K twins of every shape and input type: [`SPLITK_DECODE_ROWS`]; the grouped kernel is
/// [`GROUPED_DECODE_ROWS_SHAPE`]'s.
pub const DECODE_ROWS_SHAPES: &[DecodeRowsShape] = &[(1, 16, 4, 4), (1, 32, 8, 4), (2, 64, 4, 2), (1, 16, 8, 8)];

/// The grouped decode-rows shape (an index into [`DECODE_ROWS_SHAPES`]; both archs): 128x16, 8
/// waves of one row block, 8 loads, bf16 and f16 ([`GROUPED_DECODE_ROWS`]), the
/// mixture-of-experts decode of issue 23. `gemm decode --moe --sweep --arch A --jobs 1` (grouped
/// twins of every decode shape and of the 16-column decode-rows shapes of 1/2/4 row blocks,
/// 2/4/8 waves and 2/4/8 loads, timing model) on 8 x M16 x 28672x4096 and on 64 x M4 x 4096x7168
/// with every fourth expert empty, in us and share of the touched weights' floor at peak HBM,
/// session 34 (the model's clock at the load of the clock it runs at, and one set of requested
/// lines per CU in its footprint pass):
///
/// * gfx950: 257.6 (92%) and 386.7 (91%); the earlier grouped shape, 64x16 w4 u4, 287.9 (82%)
///   and 389.1 (91%), which the table then ranked behind the tiled grouped kernel (303.2 us, 78%,
///   what `gemm decode --moe` ran);
/// * gfx942: 384.3 (93%) and 582.7 (91%), against 420.6 (85%) and 583.2 (91%) for 64x16 w4 u4.
///
/// Best on the 64 x M4 rows alone: 32x16 w2 u8 (gfx950 384.5, gfx942 555.7, 96%), within 1% on
/// gfx950 and 5% on gfx942 of this shape, which is the best of both rows together on both archs.
/// Before session 34's model (a busy share taken at the peak clock; activations every workgroup
/// of a CU reads counted as L2 hits) 64x16 w4 u4 led at 270.0 / 388.9 (gfx950) and 400.5 / 599.6
/// (gfx942). The grouped kernel is ranked by its plain twin's table row (gemm-dispatch
/// `plan/grouped.rs`, `GroupedPlan::estimate`), so the shape is one of [`DECODE_ROWS_SHAPES`].
pub const GROUPED_DECODE_ROWS_SHAPE: usize = 3;

fn decode_rows_families(arch: Arch) -> Vec<Family> {
    let dtypes: &'static [DType] = match arch {
        Arch::Gfx942 => &[DType::Bf16, DType::F16, DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz],
        Arch::Gfx950 => &[DType::Bf16, DType::F16, DType::Fp8E4M3, DType::Fp8E5M2],
    };
    DECODE_ROWS_SHAPES
        .iter()
        .map(|&(blocks, cols, waves, unroll)| Family {
            transposes: K_CONTIGUOUS,
            dtypes,
            stages: 1,
            schedule: Schedule::DecodeRows { unroll: unroll as u8 },
            decode_waves: waves,
            ..Family::new(
                DECODE_ROWS,
                arch,
                (waves * blocks * 16, cols, 0),
                (waves, 1),
                MfmaShape::native_16(arch),
                "decode (M = 16..64 of a Linear layer): the activations staged once per workgroup and K step in LDS, each wave its own weight rows streamed straight into the MFMA registers",
            )
        })
        .collect()
}

/// The split-K partial kernels (`ir::SplitK::Partial`): f32 partial sums into a workspace.
pub const SPLITK: &str = "splitk";
/// The ping-pong tile's split-K partial kernels (gfx942), for the split tail of a grid.
pub const SPLITK_PINGPONG: &str = "splitk_pingpong";
/// The decode families' split-K partial kernels (bf16, f16 and fp8), for weight matrices with
/// too few rows to fill the CUs (`gemm-dispatch` `splitk.rs`, `decode_split`).
pub const SPLITK_DECODE: &str = "splitk_decode";
/// The decode-rows families' split-K partial kernels (bf16, f16 and fp8,
/// [`split_families`]). Their own name rather than [`SPLITK_DECODE`]'s: nothing keys on either
/// (the dispatcher finds a twin by tile, waves, MFMA, stages and schedule, `splitk::twin`), and
/// the name says which plain family a split's partial kernel is the twin of.
pub const SPLITK_DECODE_ROWS: &str = "splitk_decode_rows";
const SPLITK_DECODE_ROWS_WHY: &str = "decode-rows split-K partial sums: weight matrices with few rows (Llama-8B down: 4096 rows are 32 workgroups of 128) stream over K ranges of the grid's z dimension, the activations' K-step slice staged in LDS per workgroup as in the plain kernel";
/// The split-K reduction kernels (`ir::SplitK::Reduce`), one per arch and C type.
pub const SPLITK_REDUCE: &str = "splitk_reduce";

/// The gfx942 ping-pong families (none on gfx950): the `large` tile with the 8-wave
/// ping-pong, with 16x16x16 and with 32x32x8 MFMAs. Both are built and the
/// characterisation table picks per problem (gemm compare --schedules, nn 8192^3: 612.2
/// TFLOP/s with 16x16x16, 623.0 with 32x32x8); [`split_families`] builds their twins.
fn pingpong_families(arch: Arch) -> Vec<Family> {
    if arch != Arch::Gfx942 {
        return vec![];
    }
    [
        ("pingpong", MfmaShape::native_16(arch), PINGPONG_WHY_16),
        (PINGPONG_32, MfmaShape::native_32(arch), PINGPONG_WHY_32),
    ]
    .into_iter()
    .map(|(name, mfma, why)| Family {
        transposes: PINGPONG_T,
        grid: LARGE_GRID,
        schedule: Schedule::PingPong { clusters: 2 },
        ..Family::new(name, arch, (256, 256, 32), (2, 4), mfma, why)
    })
    .collect()
}

/// The arch's fp8 flavours (FNUZ on gfx942, OCP on gfx950) and its e4m3 alone.
fn fp8_flavours(arch: Arch) -> (&'static [DType], &'static [DType]) {
    match arch {
        Arch::Gfx942 => (&[DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz], &[DType::Fp8E4M3Fnuz]),
        Arch::Gfx950 => (&[DType::Fp8E4M3, DType::Fp8E5M2], &[DType::Fp8E4M3]),
    }
}

/// The smallest fp8 tile ([`FP8_SMALL`]): 64x64x128, 4 waves, 16x16 fp8 MFMAs, the pipelined
/// loop (the caller sets transposes and dtypes).
fn fp8_small(arch: Arch) -> Family {
    let why = match arch {
        Arch::Gfx942 => FP8_SMALL_WHY,
        Arch::Gfx950 => FP8_SMALL_WHY_GFX950,
    };
    Family::new(FP8_SMALL, arch, (64, 64, 128), (2, 2), MfmaShape::fp8_16(arch), why)
}

/// Deeper-pipelined bf16/f16 tiles for the small squares (issue 24 item 5), A^T B (the
/// Linear layout) and row-major `C = A B` (column-major `nn`): a third LDS buffer where it fits
/// (`passes/pipeline.rs`), so the copies of the tile after next are in flight while a tile is
/// computed. Chosen by `gemm sweep --dtype bf16 --out-dtype bf16 --mn 64,128 --kt 32,64,128
/// --stages 2,3` at 1024^3 and 2048^3 (timing model, TFLOP/s, against the plan before and
/// Triton's best of its sweep, `gemm peers`). Not built: gfx950 `nn` 64x64x32, 4 waves, three
/// stages (214.3 at 1024^3 against 187.3, Triton 214.1): at six workgroups per CU its
/// characterisation grids need an A past the 2 GiB a buffer offset reaches.
///
/// * gfx950 A^T B: 64x64x128, 8 waves (2x4), 16x16x32, three stages (96 KiB): 339.7 at 1024^3
///   (277.1 before, Triton 289.0); 128x128x64, 8 waves (2x4), 32x32x16, three stages: 843.7 at
///   2048^3 (689.4, Triton 691.3);
/// * gfx942 A^T B: 64x64x64, 4 waves, 32x32x8, three stages: 268.7 at 1024^3 (242.8, Triton
///   230.1); 128x64x32, 4 waves (4x1), 32x32x8, two stages: 453.7 at 2048^3 (407.0, Triton
///   397.1);
/// * gfx942 `nn`: 64x64x32, 4 waves, 32x32x8, three stages: 186.8 at 1024^3 (148.3, Triton
///   155.1); 128x128x32, 8 waves (2x4), 32x32x8, three stages: 411.8 at 2048^3 (314.8, Triton
///   329.2).
fn deep_families(arch: Arch) -> Vec<Family> {
    let fam = |transposes, tile, waves, mfma, stages| Family {
        transposes,
        stages,
        ..Family::new(DEEP, arch, tile, waves, mfma, DEEP_WHY)
    };
    let (tn, nn) = (K_CONTIGUOUS, NN_ONLY);
    let (m16, m32) = (MfmaShape::native_16(arch), MfmaShape::native_32(arch));
    match arch {
        Arch::Gfx950 => vec![fam(tn, (64, 64, 128), (2, 4), m16, 3), fam(tn, (128, 128, 64), (2, 4), m32, 3)],
        Arch::Gfx942 => vec![
            fam(tn, (64, 64, 64), (2, 2), m32, 3),
            fam(tn, (128, 64, 32), (4, 1), m32, 2),
            fam(nn, (64, 64, 32), (2, 2), m32, 3),
            fam(nn, (128, 128, 32), (2, 4), m32, 3),
        ],
    }
}

/// Deeper-pipelined fp8 tiles for the small squares (issue 24 item 5), A^T B (the Linear
/// layout), e4m3 of the arch: where 1024^2 and 2048^2 outputs give every CU one or two
/// workgroups, a K step's MFMAs cannot cover the copies of the next one with two stages; a
/// third LDS buffer keeps the tile after next in flight (`passes/pipeline.rs`). Chosen by
/// `gemm sweep --dtype fp8_e4m3 --out-dtype bf16 --trans tn --mn 64,128 --kt 64,128 --stages 2,3`
/// (timing model, TFLOP/s):
///
/// * gfx950 64x64x128, 8 waves (4x2), 16x16x128, three stages (48 KiB): 411.7 at 1024^3
///   against 320.9 for two stages and 307.2 for the catalogue's `fp8s` (Triton's best 346.2);
/// * gfx950 128x128x128, 8 waves (2x4), 32x32x64, three stages (96 KiB): 1215.6 at 2048^3
///   against 1083.8 for two stages and 987.4 for the `fp8` tile (Triton's best 999.8);
/// * gfx942 64x64x128, 4 waves, 32x32x16, three stages (48 KiB): 340.2 at 1024^3 against
///   275.6 for `fp8s` (Triton's best 294.1);
/// * gfx942 128x128x128, 8 waves (2x4), 32x32x16, two stages (three do not fit 64 KiB):
///   737.5 at 2048^3 against 668.8 for `fp8m` (Triton's best 686.9).
///
/// And row-major `C = A B` (NN), where M/N-contiguous operands are transposed in registers
/// into K runs (register-staged copies, a second staging set for the third buffer), with
/// `--trans nn`: 64x64x128, 4 waves, 32x32, three stages at 1024^3 (gfx950 227.4 against
/// 181.5 for `fp8s`, Triton's best 239.7; gfx942 210.8 against 169.3, Triton's 208.6) and
/// 128x128x64, 4 waves, 32x32, three stages at 2048^3 (gfx950 756.6 against 714.9 for the
/// slim ping-pong, Triton's 701.8; gfx942 649.2 against 517.9 for `fp8m`, Triton's 541.0).
/// NN only: NT and TT keep the `fp8s`/`fp8m` tiles (each layout adds nine kernels to test).
fn fp8_deep(arch: Arch) -> Vec<Family> {
    let e4 = fp8_flavours(arch).1;
    let fam = |transposes, tile, waves, mfma, stages| Family {
        transposes,
        dtypes: e4,
        stages,
        ..Family::new(FP8_DEEP, arch, tile, waves, mfma, FP8_DEEP_WHY)
    };
    let (tn, nn) = (K_CONTIGUOUS, NN_ONLY);
    let (f16, f32) = (MfmaShape::fp8_16(arch), MfmaShape::fp8_32(arch));
    match arch {
        Arch::Gfx950 => vec![
            fam(tn, (64, 64, 128), (4, 2), f16, 3),
            fam(tn, (128, 128, 128), (2, 4), f32, 3),
            fam(nn, (64, 64, 128), (2, 2), f32, 3),
            fam(nn, (128, 128, 64), (2, 2), f32, 3),
        ],
        Arch::Gfx942 => vec![
            fam(tn, (64, 64, 128), (2, 2), f32, 3),
            fam(tn, (128, 128, 128), (2, 4), f32, 2),
            fam(nn, (64, 64, 128), (2, 2), f32, 3),
            fam(nn, (128, 128, 64), (2, 2), f32, 3),
        ],
    }
}

/// The per-tensor fp8 family of the arch (A^T B, both flavours).
fn fp8_family(arch: Arch) -> Family {
    match arch {
        Arch::Gfx950 => Family {
            transposes: K_CONTIGUOUS,
            grid: LARGE_GRID,
            dtypes: &[DType::Fp8E4M3, DType::Fp8E5M2],
            ..Family::new("fp8", arch, (128, 128, 128), (2, 2), MfmaShape::fp8_32(arch), FP8_WHY_GFX950)
        },
        Arch::Gfx942 => Family {
            transposes: K_CONTIGUOUS,
            grid: LARGE_GRID,
            dtypes: &[DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz],
            // gemm compare --schedules at 8192^3 (e4m3 -> f16): 1203 TFLOP/s against
            // 1070 for the pipelined loop of the same tile.
            schedule: Schedule::PingPong { clusters: 2 },
            ..Family::new("fp8", arch, (256, 256, 64), (2, 4), MfmaShape::fp8_32(arch), FP8_WHY_GFX942)
        },
    }
}

const SPLITK_FP8_PINGPONG_WHY: &str = "gfx942's fp8 ping-pong tile as partial sums for the split tail of a grid (8192^2 outputs: 1024 tiles of 256x256 are 3.37 rounds of 304 CUs), the per-tensor scales in the reduction's alpha and beta (issue 24: 8192^3 fp8 Linear trailed Triton's 128x128x64, 1213.7 against 1328.5 TFLOP/s)";

const SPLITK_PINGPONG_WHY: &str = "the ping-pong tiles' partial sums for the split tail of a grid (8192^2 outputs: 1024 tiles are 3.37 rounds of 304 CUs; the last 128 tiles run split in two over K): 8192^3 bf16 -> f32 predicts 700.8 TFLOP/s with 32x32x8 (1.39x Triton's best, 505.7; the plain kernel 623.0, 1.23x) and 687.0 with 16x16x16 (plain 612.2) (gemm compare --schedules)";

/// The split-K families, per arch: the partial kernels of a tile shape (bf16/f16 inputs,
/// every transpose and alignment, f32 partials) and the reductions (C f32, bf16, f16).
/// Split-K serves problems whose `m x n` tiles are too few to fill the GPU's CUs and whose
/// K is long (`gemm-dispatch` `splitk.rs` decides, and says why).
pub fn split_families() -> Vec<Family> {
    let mut out = vec![];
    for arch in Arch::ALL {
        out.push(Family {
            aligns: BOTH,
            split: SplitK::Partial,
            ..Family::new(
                SPLITK,
                arch,
                (64, 64, 64),
                (2, 2),
                MfmaShape::native_16(arch),
                "split-K partial sums (small M*N, long K): the small tile over K ranges of the grid's z dimension, f32 partials into a workspace",
            )
        });
        // The smallest fp8 tile's twins (A^T B, both flavours of the arch): skinny fp8
        // problems split over K like the bf16 `small` tile's (`gemm decode --before --dtypes
        // fp8 --m 16,32,64,128`, timing model: gfx942 8B down at M = 64 38.19 -> 25.22 us, M =
        // 128 64.67 -> 38.61; gfx950 8B down at M = 64 32.53 -> 22.24; 70B/8 qkv at M = 128
        // 26.29 -> 12.76 on gfx942 and 33.83 -> 11.09 on gfx950; no row slower).
        out.push(Family {
            name: SPLITK,
            transposes: K_CONTIGUOUS,
            dtypes: fp8_flavours(arch).0,
            split: SplitK::Partial,
            ..fp8_small(arch)
        });
        // The ping-pong families as partial sums, each the twin of its plain family: the
        // dispatcher splits the K of the last columns of tiles when whole rounds of the plain
        // kernel would leave most CUs idle in the last one (`gemm-dispatch` `splitk.rs`,
        // `choose_tail`, which finds a twin by tile, schedule, order and copies).
        // The decode families as partial sums, each the twin of its plain family, in every
        // input type the plain family takes: bf16/f16 and the arch's fp8 flavours (FNUZ on
        // gfx942, OCP on gfx950). fp8 partials apply the per-row / per-column scale vectors
        // to their sums; the per-tensor scales ride in the reduction's alpha and beta
        // (`kernel_args.rs`, fp8 partial kernels).
        out.extend(decode_families(arch).into_iter().map(|f| Family {
            name: SPLITK_DECODE,
            split: SplitK::Partial,
            why: "decode split-K partial sums: weight matrices with too few rows to fill the CUs (a tensor-parallel shard's 1280 rows are 80 blocks of 16) stream over K ranges of the grid's z dimension",
            ..f
        }));
        // The decode-rows families' twins likewise (issue 23): a layer with few weight rows
        // (Llama-8B down, 4096 rows: 32 workgroups of 128 rows on 304 or 256 CUs) streams
        // its weights over K ranges instead of leaving most CUs idle. Ungrouped ones only: a
        // partial kernel takes no group table (`fit::check`).
        out.extend(decode_rows_families(arch).into_iter().filter(|f| f.name == DECODE_ROWS).map(|f| Family {
            name: SPLITK_DECODE_ROWS,
            split: SplitK::Partial,
            why: SPLITK_DECODE_ROWS_WHY,
            ..f
        }));
        out.extend(pingpong_families(arch).into_iter().map(|f| Family {
            name: SPLITK_PINGPONG,
            split: SplitK::Partial,
            why: SPLITK_PINGPONG_WHY,
            ..f
        }));
        if arch == Arch::Gfx942 {
            // The fp8 ping-pong tile's twins: A^T B, and e4m3 in the other layouts (`fp8t`).
            for f in [fp8_family(arch), fp8_more(arch)[1]] {
                out.push(Family { name: SPLITK_PINGPONG, split: SplitK::Partial, why: SPLITK_FP8_PINGPONG_WHY, ..f });
            }
        }
        out.push(Family {
            stages: 1,
            transposes: &[(false, false)],
            aligns: &[Align::Elem],
            dtypes: &[DType::F32, DType::Bf16, DType::F16],
            ..Family::new(
                SPLITK_REDUCE,
                arch,
                crate::ir::REDUCE_TILE,
                (1, 4),
                MfmaShape::native_16(arch),
                "split-K reduction: the workspace's slabs summed in order (deterministic), alpha/beta, C's type",
            )
        });
    }
    out
}

/// The transpose pre-pass kernels (`ir::SplitK::Transpose`, `lower/transpose.rs`), one per arch.
pub const TRANSPOSE: &str = "transpose";

/// The transpose pre-pass, per arch: 1-byte elements (both fp8 flavours: it moves bytes). The
/// dispatcher transposes one operand of an fp8 GEMM whose operands are both M/N-contiguous into
/// a workspace where the characterisation table puts that and the GEMM in the other layout
/// ahead of the direct kernel (gemm-dispatch `plan/transpose.rs`; issue 24's bar, gfx942 fp8
/// 4096^3 `nt` 135.8 us against `tn` 118.4 by the timing model).
pub fn transpose_families() -> Vec<Family> {
    Arch::ALL
        .into_iter()
        .map(|arch| Family {
            stages: 1,
            transposes: &[(false, false)],
            dtypes: fp8_flavours(arch).1,
            ..Family::new(
                TRANSPOSE,
                arch,
                crate::ir::TRANSPOSE_TILE,
                (1, 4),
                MfmaShape::native_16(arch),
                "transpose pre-pass: one 1-byte operand made K-contiguous in a workspace (128x128-byte blocks through LDS, whole lines in and out), so the GEMM after it reads at most one M/N-contiguous operand",
            )
        })
        .collect()
}

/// The MX families (gfx950, issue 26): OCP MX operands with E8M0 scales per 32 elements
/// along K, applied by `v_mfma_scale_f32_*_f8f6f4` (`lower/mx.rs`). A^T B (MX data are packed
/// along K). `mx`: the fp8 tile (128x128x128 bytes, 4 waves, LDS-DMA) for all 25 pairs of the
/// five formats (each operand's tile in its own bytes, `KernelConfig::k_step_of`); `mxil`: the
/// `fp8il` tile and schedule (256x256x128 bytes, 4-wave interleave) for the large problems,
/// MXFP8 e4m3, MXFP6 (e2m3, e3m2), MXFP4, e4m3 with fp4 both ways, e2m3 weights (A) with e4m3
/// and fp4 weights with e2m3; `mxpp`:
/// the `fp8pp` tile and slim ping-pong for MXFP8 e4m3 and MXFP4 (the dispatcher's pick where
/// 256x256 tiles fill the GPU: `gemm mx --tiled-scales` puts it at 5749 TFLOP/s for MXFP4 at
/// 8192^3, 88% of the fp4 ceiling, against 4072 for `mxil`; fp6 blocks and pairs of two widths
/// straddle its fragment slices, `fit::check_mx`).
fn mx_families(arch: Arch) -> [Family; 3] {
    use MxFormat::{E2M1, E2M3, E4M3};
    /// Every `(A, B)` pair of the five formats, A's format major.
    const ALL: [(MxFormat, MxFormat); 25] = {
        let f = MxFormat::ALL;
        let mut out = [(f[0], f[0]); 25];
        let mut i = 0;
        while i < 25 {
            out[i] = (f[i / 5], f[i % 5]);
            i += 1;
        }
        out
    };
    const BIG: &[(MxFormat, MxFormat)] = &[(E2M1, E2M1), (E4M3, E4M3)];
    const BIG_IL: &[(MxFormat, MxFormat)] = &[
        (E2M1, E2M1),
        (E4M3, E4M3),
        (E2M3, E2M3),
        (MxFormat::E3M2, MxFormat::E3M2),
        (E4M3, E2M1),
        (E2M1, E4M3),
        (E2M3, E4M3),
        (E2M1, E2M3),
    ];
    [
        Family {
            transposes: K_CONTIGUOUS,
            mx: &ALL,
            ..Family::new(MX, arch, (128, 128, 128), (2, 2), MfmaShape::fp8_32(arch), MX_WHY)
        },
        Family {
            transposes: K_CONTIGUOUS,
            grid: LARGE_GRID,
            schedule: Schedule::Interleave { slices: 4 },
            mx: BIG_IL,
            ..Family::new(MX_IL, arch, (256, 256, 128), (2, 2), MfmaShape::fp8_32(arch), MX_IL_WHY)
        },
        // The `fp8pp` tile and slim ping-pong (`lower/mx.rs`: MXFP4's scales staged through
        // LDS beside the data, no per-row/column scale vectors, paired quad stores).
        Family {
            transposes: K_CONTIGUOUS,
            grid: LARGE_GRID,
            schedule: Schedule::PingPongSlim { clusters: 2 },
            mx: BIG,
            ..Family::new(MX_PP, arch, (256, 256, 128), (2, 4), MfmaShape::fp8_32(arch), MX_PP_WHY)
        },
    ]
}
/// The block-scaled fp8 family (both archs, issue 26): DeepSeek-V3's 128 x 128 weight blocks
/// and 1 x 128 activation groups, the group sums scaled in f32 (`lower/block_fp8.rs`).
pub const BLOCK_FP8: &str = "bsfp8";
const BLOCK_FP8_WHY: &str = "block-scaled fp8 (DeepSeek-V3: f32 scales per 128x128 weight block and per 1x128 activation group) in the Linear layout: 128x128x128, each K group's MFMA sums scaled into VGPR accumulators between the MFMAs (gfx950: 4 waves, the pipelined loop; gfx942: 8 waves of 32x64, the rotated 8-wave interleave, the sums carried into the next tile in VGPRs)";
const BLOCK_FP8_HALF_WHY: &str = "block-scaled fp8 problems of few 128x128 tiles (below half the CUs, e.g. DeepSeek-V3's 1024 tokens x 1536 outputs, or decode rows): 128x64x128, 8 waves of 32x32, the rotated 8-wave interleave, the sums carried in VGPRs";
/// The gfx950 block-scaled fp8 family on the `fp8pp` tile (256x256x128, 8 waves, slim ping-pong).
pub const BLOCK_FP8_PP: &str = "bsfp8pp";
const BLOCK_FP8_PP_WHY: &str = "big block-scaled fp8 problems (DeepSeek-V3 scales): the fp8pp tile and schedule (256x256x128, 8 waves, LDS-DMA, slim ping-pong), each K step's MFMA sums into one of two rotating VGPR temporaries scaled into the accumulators after the next MFMA";
/// The MX families' names.
pub const MX: &str = "mx";
pub const MX_IL: &str = "mxil";
pub const MX_PP: &str = "mxpp";
const MX_WHY: &str = "OCP MX (A and B each fp8 e4m3/e5m2, fp6 e2m3/e3m2 or fp4 e2m1) A^T B with E8M0 scales per 32 K elements, applied by gfx950's scaled MFMA: the fp8 tile (128x128 by 128 bytes of K, 4 waves, 32x32x64 MFMAs; each loop iteration takes 128 K values (256 for fp4 x fp4) from each operand's 128-byte rows: fp8 128 bytes, fp6 96, fp4 64)";
const MX_PP_WHY: &str = "big MX problems (MXFP4, MXFP8 e4m3): the fp8pp tile and slim ping-pong (256x256 by 128 bytes of K, 8 waves, LDS-DMA, s_setprio clusters, staggered barriers) with the scaled MFMA, MXFP4's scales staged through LDS beside the data, no per-row/column scale vectors, the epilogue's quads stored in pairs";
const MX_IL_WHY: &str = "big MX problems (MXFP8 e4m3, MXFP6 e2m3 and e3m2, MXFP4, e4m3 x fp4 both ways, e2m3 x e4m3, fp4 x e2m3): the fp8il tile and schedule (256x256 by 128 bytes of K, 4 waves, 4-wave interleave) with the scaled MFMA";

/// The family of mixed-flavour fp8 kernels (A e4m3 with B e5m2 and the reverse, per arch).
pub const FP8_MIXED: &str = "fp8mixed";

/// The `(A, B)` input pairs of a family: `(d, d)` for each of its dtypes, or for
/// [`FP8_MIXED`] both mixes of its two flavours.
fn input_pairs(f: &Family) -> Vec<(DType, DType)> {
    match (f.name, f.dtypes) {
        (FP8_MIXED, &[x, y]) => vec![(x, y), (y, x)],
        _ => f.dtypes.iter().map(|&d| (d, d)).collect(),
    }
}

/// The fp8 families beside the TN one (issue 11, items 4-5): mixed flavours (TN, the
/// layout of hipBLASLt's fp8 GEMMs) and the three other transposes for e4m3 (the flavour of
/// weights and activations; e5m2 is the gradients' and stays TN), on the `fp8` family's
/// tile. An M/N-contiguous operand is transposed in registers by pairs (gfx942: two
/// vectors per thread) or quads (gfx950) of K columns (`lds::CopyGeom::kgroup`), so every
/// main-loop LDS access stays conflict-free.
fn fp8_more(arch: Arch) -> [Family; 2] {
    let (tile, wave_grid) = match arch {
        Arch::Gfx950 => ((128, 128, 128), (2, 2)),
        Arch::Gfx942 => ((256, 256, 64), (2, 4)),
    };
    let (dtypes, e4) = fp8_flavours(arch);
    let base = Family {
        transposes: K_CONTIGUOUS,
        grid: LARGE_GRID,
        dtypes,
        ..Family::new(
            FP8_MIXED,
            arch,
            tile,
            wave_grid,
            MfmaShape::fp8_32(arch),
            "mixed fp8 flavours (e4m3 x e5m2 and e5m2 x e4m3) A^T B on the fp8 tile, per-tensor and per-row/column scales",
        )
    };
    [
        base,
        Family {
            name: "fp8t",
            transposes: NOT_TN,
            // gfx942: the TN family's ping-pong.
            schedule: match arch {
                Arch::Gfx942 => Schedule::PingPong { clusters: 2 },
                Arch::Gfx950 => Schedule::Pipelined,
            },
            dtypes: e4,
            why: "e4m3 in the NN, NT and TT layouts on the fp8 tile (gfx942: with its ping-pong): M/N-contiguous operands transposed in registers (v_perm_b32) into K runs, conflict-free LDS",
            ..base
        },
    ]
}

/// All catalogue configurations with their family, in a fixed order: family (per arch),
/// input dtype, output dtype (f32 or the input type), transposes, alignment class.
pub fn entries() -> Vec<(Family, KernelConfig)> {
    let mut out = vec![];
    for f in families().into_iter().chain(split_families()).chain(transpose_families()) {
        if f.name == SPLITK_REDUCE {
            out.extend(f.dtypes.iter().map(|&c| (f, KernelConfig::split_reduce(f.arch, c))));
            continue;
        }
        if f.name == TRANSPOSE {
            out.push((f, KernelConfig::transpose(f.arch)));
            continue;
        }
        if !f.mx.is_empty() {
            for &(a, b) in f.mx {
                for c in [DType::F32, DType::Bf16, DType::F16] {
                    let mut cfg = KernelConfig::new(f.arch, DType::Fp8E4M3, c, true, false, Align::Vec8)
                        .with_shape(f.tile, f.wave_grid, f.mfma, f.stages)
                        .with_mx(a, b)
                        .expect("MX families pair formats of one width");
                    cfg.grid = f.grid;
                    cfg.schedule = f.schedule;
                    cfg.direct_to_lds = f.dma;
                    out.push((f, cfg));
                }
            }
            continue;
        }
        let fused = f.fusions != PLAIN;
        for (ab, b_type) in input_pairs(&f) {
            let outs: &[DType] = match ab {
                _ if f.split == SplitK::Partial => &[DType::F32],
                DType::F32 => &[DType::F32],
                d if d.is_fp8() => &[DType::F32, DType::Bf16, DType::F16],
                _ => &[DType::F32, ab],
            };
            for &c in outs {
                if fused && c != ab {
                    continue;
                }
                for &(ta, tb) in f.transposes {
                    for &align in f.aligns {
                        for &fusion in f.fusions {
                            let mut cfg = match f.schedule {
                                Schedule::Decode { unroll } => KernelConfig::decode(
                                    f.arch,
                                    ab,
                                    c,
                                    f.tile.0,
                                    f.tile.1,
                                    f.decode_waves,
                                    u32::from(unroll),
                                ),
                                Schedule::DecodeRows { unroll } => KernelConfig::decode_rows(
                                    f.arch,
                                    ab,
                                    c,
                                    f.tile.0 / (16 * f.decode_waves),
                                    f.tile.1,
                                    f.decode_waves,
                                    u32::from(unroll),
                                ),
                                _ => KernelConfig::new(f.arch, ab, c, ta, tb, align).with_shape(
                                    f.tile,
                                    f.wave_grid,
                                    f.mfma,
                                    f.stages,
                                ),
                            }
                            .with_b_type(b_type);
                            cfg.fusion = fusion;
                            cfg.grid = f.grid;
                            cfg.grouped = [GROUPED, GROUPED_DECODE, GROUPED_DECODE_ROWS].contains(&f.name);
                            cfg.schedule = f.schedule;
                            cfg.direct_to_lds = f.dma;
                            cfg.block_scale = f.block_scale;
                            if f.split == SplitK::Partial {
                                cfg = cfg.split_partial();
                            }
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
