//! Whether a configuration fits the kernel space the compiler builds and the arch's
//! limits, and the occupancy of a compiled kernel. A configuration that does not fit is
//! declined with a typed reason before any pass runs.
//!
//! The space (issue 11): `MT, NT` in {64, 128, 256}; `KT` in {32, 64, 128} for 16-bit
//! inputs, {32, 64} for f32, {64, 128, 256} for fp8 (rows of 64 to 256 bytes; fp8 with
//! `v8` alignment, an M/N-contiguous operand with at least two vectors per thread); 4 or 8 waves in any power-of-two grid `WM x WN` that divides the tile into
//! whole MFMA blocks; the arch's full-rate MFMA shapes ([`crate::lower::MFMA_TABLE`]);
//! register and LDS limits of ISA.md §4.5 / ARCH.md (512 VGPR+AGPR per lane with at most
//! 256 of each, 64 KiB LDS on gfx942, 160 KiB on gfx950).

use crate::ir::{Arch, KernelConfig, MfmaShape, Operand, SplitK};
use gemm_core::DType;

/// Why a configuration is declined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unfit {
    #[error("{shape:?} is not a full-rate MFMA for {dtype} on {arch}")]
    MfmaShape { arch: Arch, dtype: DType, shape: MfmaShape },
    #[error("{0} waves: the kernels have 4 or 8")]
    Waves(u32),
    #[error("wave grid {0}x{1} does not give {2} waves in powers of two")]
    WaveGrid(u32, u32, u32),
    #[error("tile {0}x{1}: MT and NT must be 64, 128 or 256")]
    TileMn(u32, u32),
    #[error("K tile {kt} for {dtype}: must be 32, 64 or 128 (64, 128 or 256 for fp8)")]
    TileK { kt: u32, dtype: DType },
    #[error("K tile {kt} is not a multiple of the MFMA's K ({k}) in 16-byte runs per lane group")]
    KGroup { kt: u32, k: u32 },
    #[error("the {op:?} side of the tile ({rows}) does not split into {waves} waves of {m}-row MFMA blocks")]
    WaveTile { op: Operand, rows: u32, waves: u32, m: u32 },
    #[error("{agprs} accumulator registers per lane exceed the 256 AGPRs")]
    Accumulators { agprs: u32 },
    #[error("about {vgprs} VGPRs per lane (fragments {frags}, staging {staging}) exceed 256")]
    Vgprs { vgprs: u32, frags: u32, staging: u32 },
    #[error(
        "{waves} waves put {per_simd} waves on each SIMD, and {total} VGPR+AGPR per lane (align4 of {vgprs} VGPRs + {agprs} AGPRs) x {per_simd} exceeds the SIMD's 512: the workgroup cannot be resident, so it cannot launch"
    )]
    NotResident { waves: u32, per_simd: u32, vgprs: u32, agprs: u32, total: u32 },
    #[error("input dtype {0} has no kernel in this space yet")]
    InputDtype(DType),
    #[error("A of {0} and B of {1}: only fp8 flavours mix (e4m3 with e5m2)")]
    MixedInputs(DType, DType),
    #[error("an fp8 operand contiguous along M/N needs at least two 16-byte vectors of its tile per thread: the copy transposes pairs or quads of K columns in registers (one byte per LDS write otherwise)")]
    Fp8Transpose,
    #[error("split-K {0}")]
    SplitK(&'static str),
    #[error("{0} stages: the pipeline has 2 (double-buffered LDS) or 3 (the copies of the tile after next in flight)")]
    Stages(u32),
    #[error("fp8 kernels need `v8` alignment (leading dimensions a multiple of 16 elements): element copies would load one byte per instruction")]
    Fp8Align,
    #[error("decode kernel: {0}")]
    Decode(String),
    #[error("block-scaled kernel: {0}")]
    BlockScale(String),
}

/// Checks `c` against the kernel space and the arch limits.
pub fn check(c: &KernelConfig) -> Result<(), Unfit> {
    if c.is_decode() {
        return check_decode(c);
    }
    match c.split {
        SplitK::None => {}
        SplitK::Reduce => return check_reduce(c),
        SplitK::Transpose => return check_transpose(c),
        SplitK::Partial => {
            if c.c_type != DType::F32 {
                return Err(Unfit::SplitK("partial kernels write f32 partial sums: C's type must be f32"));
            }
            // fp8 partials apply the per-element scale vectors to their f32 sums and leave the
            // per-tensor scalars to the reduction's alpha and beta, as the decode partials do
            // (`check_decode`; `kernel_args.rs`, fp8 partial kernels).
            if c.fusion != crate::ir::Fusion::NONE {
                return Err(Unfit::SplitK("partial kernels write raw sums: fused epilogues belong to the reduction"));
            }
            if c.grouped {
                return Err(Unfit::SplitK("grouped kernels take no split dimension"));
            }
        }
    }
    if !matches!(c.ab_type, DType::Bf16 | DType::F16 | DType::F32) && !c.ab_type.is_fp8() {
        return Err(Unfit::InputDtype(c.ab_type));
    }
    if c.ab_type.is_fp8() {
        // An M/N-contiguous fp8 operand is transposed in registers by pairs or quads of K
        // columns (lds::CopyGeom::kgroup): each thread needs two vectors of its tile.
        for op in [Operand::A, Operand::B] {
            let vectors = c.tile_rows(op) * c.tile.2 / 16;
            if !c.k_contiguous(op) && vectors < 2 * c.threads() {
                return Err(Unfit::Fp8Transpose);
            }
        }
        if c.align != crate::ir::Align::Vec8 {
            return Err(Unfit::Fp8Align);
        }
    }
    if c.b_type() != c.ab_type && !(c.ab_type.is_fp8() && c.b_type().is_fp8()) {
        return Err(Unfit::MixedInputs(c.ab_type, c.b_type()));
    }
    if crate::lower::mfma_op_ab(c.arch, c.ab_type, c.b_type(), c.mfma).is_none() {
        return Err(Unfit::MfmaShape { arch: c.arch, dtype: c.ab_type, shape: c.mfma });
    }
    if !matches!(c.stages, 2 | 3) {
        return Err(Unfit::Stages(c.stages));
    }
    if !matches!(c.waves, 4 | 8) {
        return Err(Unfit::Waves(c.waves));
    }
    let (wm, wn) = c.wave_grid;
    if wm * wn != c.waves || !wm.is_power_of_two() || !wn.is_power_of_two() {
        return Err(Unfit::WaveGrid(wm, wn, c.waves));
    }
    let (mt, nt, kt) = c.tile;
    if ![mt, nt].iter().all(|x| matches!(x, 64 | 128 | 256)) {
        return Err(Unfit::TileMn(mt, nt));
    }
    // 16-bit inputs: 64..256-byte rows; f32: 128..512 (KT 128 fits LDS only for the smaller
    // tiles, and only on gfx950: the pipeline pass declines the rest with the byte counts);
    // fp8: 64..256.
    let kt_ok = match c.ab_type {
        DType::F32 => matches!(kt, 32 | 64 | 128),
        d if d.is_fp8() => matches!(kt, 64 | 128 | 256),
        _ => matches!(kt, 32 | 64 | 128),
    };
    if !kt_ok {
        return Err(Unfit::TileK { kt, dtype: c.ab_type });
    }
    if !kt.is_multiple_of(c.mfma.k) || !(kt * c.ab_bytes() / c.lane_groups()).is_multiple_of(16) {
        return Err(Unfit::KGroup { kt, k: c.mfma.k });
    }
    for (op, rows, w) in [(Operand::A, mt, wm), (Operand::B, nt, wn)] {
        if !rows.is_multiple_of(w * c.mfma.m) {
            return Err(Unfit::WaveTile { op, rows, waves: w, m: c.mfma.m });
        }
    }
    let agprs = c.blocks(Operand::A) * c.blocks(Operand::B) * c.acc_regs();
    if agprs > 256 {
        return Err(Unfit::Accumulators { agprs });
    }
    check_mx(c)?;
    check_fp8_blocks(c)?;
    vgpr_estimate(c, [1, 1]).map(|_| ())
}

/// Block-scaled fp8 (`lower/block_fp8.rs`): the Linear layout (A^T B, the weights as A), one K
/// group per K tile, every wave's rows inside one 128-row block of A's scales, the software
/// pipeline (the group's scaled add follows the tile's MFMAs), the interleave (the sums carried
/// into the next tile) or the slim ping-pong (rotating temporaries).
fn check_fp8_blocks(c: &KernelConfig) -> Result<(), Unfit> {
    if c.block_scale != crate::ir::BlockScale::Fp8Blocks {
        return Ok(());
    }
    let no = |why: &str| Err(Unfit::BlockScale(why.to_string()));
    let b = crate::ir::FP8_BLOCK;
    if !c.ab_type.is_fp8() || c.b_type() != c.ab_type {
        return no("block-scaled fp8 takes one fp8 flavour for both operands");
    }
    if !c.trans_a || c.trans_b {
        return no("block-scaled fp8 runs the Linear layout (A^T B, both operands K-contiguous)");
    }
    if c.tile.2 != b || !c.tile.0.is_multiple_of(b) || !b.is_multiple_of(c.wave_rows(Operand::A)) {
        return no("one 128-long K group per K tile, and each wave's rows inside one 128-row block");
    }
    use crate::schedule::Schedule;
    let schedule_ok =
        matches!(c.schedule, Schedule::Pipelined | Schedule::Interleave { .. } | Schedule::PingPongSlim { .. });
    if c.stages != 2 || c.grouped || c.split != SplitK::None || !schedule_ok {
        return no("two stages, pipelined, interleaved or the slim ping-pong, not grouped or split");
    }
    // Carried sums (interleave): two sets of group sums in AGPRs.
    let sums = c.blocks(Operand::A) * c.blocks(Operand::B) * c.acc_regs();
    if crate::lower::fp8_block_carries_sums(c) && 2 * sums > 256 {
        return no("the interleave schedule carries two sets of group sums: more than 256 AGPRs");
    }
    Ok(())
}

/// MX kernels (`lower/mx.rs`): gfx950's scaled MFMA on both operands K-contiguous, the
/// two-stage loop and schedules whose MFMAs run in the body of the buffer they read, and a K
/// step ([`KernelConfig::mx_k_elems`]) whose scales fit two dwords per row with whole blocks
/// per lane group, each operand's share whole 16-byte pieces. fp6 blocks (24 bytes) straddle
/// the pieces a lane reads, and two widths put a block at different bytes of A and B, so
/// there an MFMA runs only once the fragments hold the lane group's whole K range: not on the
/// slim ping-pong, whose fragments hold one slice.
fn check_mx(c: &KernelConfig) -> Result<(), Unfit> {
    let Some((a, b)) = c.block_scale.mx() else { return Ok(()) };
    let no = |why: String| Err(Unfit::BlockScale(why));
    if c.arch != Arch::Gfx950 {
        return no(format!("{} has no scaled MFMA (v_mfma_scale_*_f8f6f4 is gfx950's)", c.arch.name()));
    }
    if !c.trans_a || c.trans_b {
        return no("MX operands are packed along K: A^T B only".into());
    }
    if c.stages != 2 || c.grouped || c.split != SplitK::None || !crate::lower::mx_schedule_ok(c.schedule) {
        return no("two stages, not grouped or split, pipelined, interleaved or the slim ping-pong".into());
    }
    if c.mfma != MfmaShape::fp8_32(c.arch) && c.mfma != MfmaShape::fp8_16(c.arch) {
        return no(format!("{:?} is not a scaled f8f6f4 shape", c.mfma));
    }
    let (e, g) = (c.mx_k_elems().expect("MX"), c.lane_groups());
    let pieces = [Operand::A, Operand::B].iter().all(|&op| (c.k_step_of(op) / g).is_multiple_of(16));
    if e / 32 > 8 || !(e / g).is_multiple_of(32) || !pieces {
        return no(format!(
            "K tile of {} bytes ({e} elements): at most 8 blocks, whole blocks per lane group in whole 16-byte pieces of each operand",
            c.tile.2
        ));
    }
    let straddle = a.bits() != b.bits() || a.bits() == 6;
    if straddle && matches!(c.schedule, crate::schedule::Schedule::PingPongSlim { .. }) {
        return no(format!(
            "{a} x {b}: fp6 blocks, or blocks of two widths, straddle the slim ping-pong's fragment slices"
        ));
    }
    Ok(())
}

/// The VGPRs per lane a configuration needs, about: its MFMA fragments, the staging
/// registers of its copies (`sets[0]` sets for A, `sets[1]` for B: two for a
/// register-staged operand of a three-stage pipeline, whose loads of the tile after next
/// are in flight while the next tile still waits in the other set, `passes/pipeline.rs`),
/// and about 40 for setup, addresses and temporaries (measured on the 128x128 family).
/// Declined above 256.
pub fn vgpr_estimate(c: &KernelConfig, sets: [u32; 2]) -> Result<u32, Unfit> {
    let (mt, nt, kt) = c.tile;
    // Slim fragments (`Schedule::PingPongSlim`) hold one slice's 16-byte pieces.
    let frags = if matches!(c.schedule, crate::schedule::Schedule::PingPongSlim { .. }) {
        (c.blocks(Operand::A) + c.blocks(Operand::B)) * crate::schedule::frag_pieces(c) * 4
    } else {
        (c.blocks(Operand::A) + c.blocks(Operand::B)) * kt * c.ab_bytes() / c.lane_groups() / 4
    };
    // Staging: 4 dwords per 16-byte vector, 8 unpacked 16-bit elements for element loads.
    let per_vector = if c.align == crate::ir::Align::Elem && c.ab_bytes() == 2 { 8 } else { 4 };
    let staging = (sets[0] * mt + sets[1] * nt) * kt * c.ab_bytes() / 16 / c.threads() * per_vector;
    // Block-scaled fp8 keeps its accumulators in VGPRs (the scaled adds are VALU work), and on
    // gfx950, whose K-contiguous copies are LDS-DMA (no staging registers), the group's MFMA
    // sums too; gfx942 keeps those in AGPRs (`lower/block_fp8.rs`) except in the 8-wave
    // interleave, whose waves' two blocks leave room for both carried sets in VGPRs. The slim
    // ping-pong sums into a few rotating temporaries instead of a whole tile's sums.
    let (acc, staging) = if c.block_scale == crate::ir::BlockScale::Fp8Blocks {
        let regs = c.blocks(Operand::A) * c.blocks(Operand::B) * c.acc_regs();
        if crate::lower::fp8_block_rotates(c) {
            let dma = c.arch == Arch::Gfx950 && c.direct_to_lds == crate::ir::DmaPolicy::Auto;
            (regs + crate::lower::fp8_block_rot_temps(c) as u32 * c.acc_regs(), if dma { 0 } else { staging })
        } else if crate::lower::fp8_block_sums_in_vgprs(c) && crate::lower::fp8_block_carries_sums(c) {
            // The 8-wave interleave: accumulators and two sets of sums, register-staged.
            (3 * regs, staging)
        } else if crate::lower::fp8_block_sums_in_vgprs(c) {
            (2 * regs, 0)
        } else {
            (regs, staging)
        }
    } else {
        (0, staging)
    };
    let vgprs = frags + staging + acc + 40;
    if vgprs > 256 {
        return Err(Unfit::Vgprs { vgprs, frags, staging });
    }
    Ok(vgprs)
}

/// The reduction kernel's fixed shape ([`KernelConfig::split_reduce`]): one lane per
/// element of a `64 x 4` block of C, 4 waves, no fused epilogue (yet), C f32/bf16/f16.
fn check_reduce(c: &KernelConfig) -> Result<(), Unfit> {
    if !matches!(c.c_type, DType::F32 | DType::Bf16 | DType::F16) {
        return Err(Unfit::SplitK("reduction: C must be f32, bf16 or f16"));
    }
    if c.fusion != crate::ir::Fusion::NONE || c.grouped {
        return Err(Unfit::SplitK("reduction: no fused epilogue or grouped form"));
    }
    if c.tile != crate::ir::REDUCE_TILE || c.waves != 4 || c.wave_grid != (1, 4) || c.ab_type != DType::F32 {
        return Err(Unfit::SplitK("reduction: the shape is fixed (KernelConfig::split_reduce)"));
    }
    Ok(())
}

/// The transpose pre-pass's fixed shape ([`KernelConfig::transpose`]): 1-byte elements, a
/// [`crate::ir::TRANSPOSE_TILE`] block per workgroup of 4 waves (`lower/transpose.rs`).
fn check_transpose(c: &KernelConfig) -> Result<(), Unfit> {
    if c.tile != crate::ir::TRANSPOSE_TILE || c.waves != 4 || c.wave_grid != (1, 4) || c.ab_bytes() != 1 {
        return Err(Unfit::SplitK("transpose: 1-byte elements, the shape is fixed (KernelConfig::transpose)"));
    }
    if c.fusion != crate::ir::Fusion::NONE || c.grouped || c.c_type != c.ab_type {
        return Err(Unfit::SplitK("transpose: it copies bytes (no epilogue, no groups, C is A's type)"));
    }
    Ok(())
}

/// Whether a workgroup of `waves` waves, each using `vgprs` arch VGPRs and `agprs` AGPRs,
/// can be resident on one CU: its waves spread over the 4 SIMDs (`ceil(waves/4)` per SIMD),
/// and each SIMD's register file holds 512 registers per lane (ARCH.md: 512 KiB of VGPRs
/// per CU = 4 SIMDs x 64 lanes x 512 x 4 bytes), shared by arch VGPRs and AGPRs with the
/// AGPRs after `align(vgprs, 4)` (ISA.md §5, "VGPR granule": `total = align(arch_vgprs,4) +
/// agprs`, allocated in granules of 8). Returns the waves per SIMD; a kernel that fails this
/// cannot launch on the hardware, whatever the emulator does with it.
pub fn resident(waves: u32, vgprs: u32, agprs: u32) -> Result<u32, Unfit> {
    let per_simd = waves.div_ceil(4);
    let total = (vgprs.next_multiple_of(4) + agprs).next_multiple_of(8);
    if total * per_simd > 512 {
        return Err(Unfit::NotResident { waves, per_simd, vgprs, agprs, total });
    }
    Ok(per_simd)
}

/// Bytes of LDS per CU (ARCH.md "LDS per CU").
pub fn lds_per_cu(arch: Arch) -> u32 {
    match arch {
        Arch::Gfx942 => 65536,
        Arch::Gfx950 => 163840,
    }
}

/// Waves per SIMD a kernel can keep resident (at most 8 on CDNA3/CDNA4): limited by the
/// unified register file (512 per lane: VGPRs rounded up to 4 for the AGPR offset, then
/// the total to the granule of 8) and by LDS (whole workgroups per CU, their waves spread
/// over the 4 SIMDs).
pub fn occupancy(arch: Arch, vgprs: u32, agprs: u32, lds_bytes: u32, waves: u32) -> u32 {
    let regs = (vgprs.next_multiple_of(4) + agprs).next_multiple_of(8).max(8);
    let by_regs = (512 / regs).min(8);
    let by_lds = lds_per_cu(arch).checked_div(lds_bytes).map_or(8, |wgs| wgs * waves / 4);
    by_regs.min(by_lds)
}

/// Bytes of LDS a decode kernel uses: waves 1.. each park their partial sums there
/// (`lower/decode.rs`), one 1 KiB block (a 16x16 f32 MFMA result, 64 lanes x 16 bytes) per
/// block of C.
/// With the waves on the rows ([`crate::schedule::Schedule::DecodeRows`]): B's two buffers
/// of `NT` columns of one K step, each column padded by 16 bytes ([`decode_rows_col_bytes`]).
pub fn decode_lds_bytes(c: &KernelConfig) -> u32 {
    if matches!(c.schedule, crate::schedule::Schedule::DecodeRows { .. }) {
        return 2 * c.tile.1 * decode_rows_col_bytes(c);
    }
    (c.waves - 1) * (c.tile.0 / 16) * (c.tile.1 / 16) * 1024
}

/// Bytes of one column of B in a [`crate::schedule::Schedule::DecodeRows`] kernel's LDS
/// buffer: the K step's bytes and 16 of padding, so the 16 columns an MFMA operand read
/// takes start 4 banks apart (ISA.md §2.5: 64 banks of 4 bytes) and a 16-byte read of each
/// meets no bank twice.
pub fn decode_rows_col_bytes(c: &KernelConfig) -> u32 {
    c.tile.2 * c.ab_bytes() + 16
}

/// The decode space (`KernelConfig::decode`): A^T B with 16-byte vector loads, the arch's
/// full-rate 16x16 MFMA, blocks of 16..64 rows and 16..64 columns of C, 1..16 waves along K,
/// 1..8 loads per row block and iteration (even where one MFMA reads 32 bytes per lane:
/// gfx950's fp8 `16x16x128`), one register set in flight beside the one in use.
fn check_decode(c: &KernelConfig) -> Result<(), Unfit> {
    let no = |why: &str| Err(Unfit::Decode(why.into()));
    let u = c.decode_unroll().expect("a decode kernel");
    let rows = matches!(c.schedule, crate::schedule::Schedule::DecodeRows { .. });
    if (c.trans_a, c.trans_b) != (true, false) || c.align != crate::ir::Align::Vec8 {
        return no("only A^T B (both operands contiguous along K) with 16-byte vector loads");
    }
    if !matches!(c.ab_type, DType::Bf16 | DType::F16) && !c.ab_type.is_fp8() {
        return Err(Unfit::InputDtype(c.ab_type));
    }
    if c.b_type() != c.ab_type && !(c.ab_type.is_fp8() && c.b_type().is_fp8()) {
        return Err(Unfit::MixedInputs(c.ab_type, c.b_type()));
    }
    if c.mfma.m != 16 || crate::lower::mfma_op_ab(c.arch, c.ab_type, c.b_type(), c.mfma).is_none() {
        return Err(Unfit::MfmaShape { arch: c.arch, dtype: c.ab_type, shape: c.mfma });
    }
    if c.stages != 1 || !c.grid.is_plain() {
        return no("one register pipeline, plain grid");
    }
    if c.grouped && (c.split != SplitK::None || c.fusion != crate::ir::Fusion::NONE) {
        return no("grouped kernels take no split dimension and no fused epilogue");
    }
    if c.sync != crate::schedule::phase::Sync::Barrier {
        return no("no phase counters");
    }
    match c.split {
        SplitK::None => {}
        // fp8 partials apply the per-element scale vectors to their f32 sums and leave the
        // per-tensor scalars to the reduction's alpha and beta (`kernel_args.rs`, fp8 partial
        // kernels): the vectors need each element's row and column, which the reduction
        // kernel does not take.
        SplitK::Partial if c.c_type == DType::F32 && c.fusion == crate::ir::Fusion::NONE => {}
        _ => return no("split-K partial kernels write f32 sums"),
    }
    if rows {
        return check_decode_rows(c, u);
    }
    if c.wave_grid != (1, 1) {
        return no("one block of C per workgroup, every wave on it");
    }
    let (mt, nt, kt) = c.tile;
    if !matches!(mt, 16 | 32 | 64) || !matches!(nt, 16 | 32 | 64) {
        return no("rows and columns of C per workgroup must be 16, 32 or 64");
    }
    if !c.waves.is_power_of_two() || c.waves > 16 || !u.is_power_of_two() || u > 8 {
        return no("1..16 waves and 1..8 loads per row block, powers of two");
    }
    let op_bytes = c.mfma.k / 4 * c.ab_bytes();
    if op_bytes > 16 * u {
        return no("an MFMA operand of 32 bytes per lane needs an even number of loads");
    }
    if kt != c.waves * u * 64 / c.ab_bytes() {
        return no("the K tile is waves x loads x 64 bytes");
    }
    let lds = decode_lds_bytes(c);
    if lds + 1024 > 65536 || lds > lds_per_cu(c.arch) {
        return no("the waves' partial sums must fit LDS and the 16-bit DS offset");
    }
    let vgprs = 2 * (mt + nt) / 16 * u * 4 + 40;
    if vgprs > 256 {
        return Err(Unfit::Vgprs { vgprs, frags: 2 * (mt + nt) / 16 * u * 4, staging: 0 });
    }
    Ok(())
}

/// The decode space with the waves on the rows ([`KernelConfig::decode_rows`]): 1..8 waves
/// of 1, 2 or 4 row blocks each (at most 256 rows), 16..64 columns, 1..8 loads per row
/// block; B's K-step slice is copied by every thread in whole 16-byte vectors (at least one
/// per thread: `NT * 4 * unroll >= 64 W`), and its two buffers fit LDS. Split-K partials as
/// for `decode.rs` ([`check_decode`]): f32 sums, no fusion.
fn check_decode_rows(c: &KernelConfig, u: u32) -> Result<(), Unfit> {
    let no = |why: &str| Err(Unfit::Decode(why.into()));
    let (mt, nt, kt) = c.tile;
    let w = c.waves;
    if c.wave_grid != (w, 1) || !w.is_power_of_two() || w > 8 {
        return no("1..8 waves (a power of two) stacked along the rows");
    }
    let rb = mt / (16 * w);
    if mt != 16 * w * rb || !matches!(rb, 1 | 2 | 4) || mt > 256 || !matches!(nt, 16 | 32 | 64) {
        return no("1, 2 or 4 row blocks of 16 per wave (at most 256 rows) and 16, 32 or 64 columns");
    }
    if !u.is_power_of_two() || u > 8 {
        return no("1..8 loads per row block, a power of two");
    }
    if c.mfma.k / 4 * c.ab_bytes() > 16 * u {
        return no("an MFMA operand of 32 bytes per lane needs an even number of loads");
    }
    if kt * c.ab_bytes() != 64 * u {
        return no("the K tile is loads x 64 bytes");
    }
    if nt * 4 * u < 64 * w {
        return no("every thread copies at least one 16-byte vector of B per K step");
    }
    let lds = decode_lds_bytes(c);
    if lds > 65536 || lds > lds_per_cu(c.arch) {
        return no("B's two buffers must fit LDS and the 16-bit DS offset");
    }
    let copies = nt * 4 * u / (64 * w);
    let frags = (2 * rb + nt / 16) * u * 4 + 2 * copies * 4;
    let vgprs = frags + 40;
    if vgprs > 256 {
        return Err(Unfit::Vgprs { vgprs, frags, staging: 2 * copies * 4 });
    }
    Ok(())
}

#[cfg(test)]
mod residency_tests {
    use super::*;

    /// 8 waves = 2 per SIMD: 256 registers each at most; 4 waves = 1 per SIMD: 512.
    #[test]
    fn eight_waves_get_half_the_register_file_each() {
        assert_eq!(resident(8, 128, 128), Ok(2));
        assert!(matches!(resident(8, 130, 128), Err(Unfit::NotResident { total: 264, per_simd: 2, .. })));
        assert_eq!(resident(4, 260, 256).ok(), None);
        assert_eq!(resident(4, 256, 256), Ok(1));
        assert_eq!(resident(4, 160, 128), Ok(1));
    }
}
