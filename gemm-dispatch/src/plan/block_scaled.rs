//! Block-scaled GEMMs on the GPU (issue 26): which MX kernel runs a problem and its argument
//! bytes. The problem is the Linear layer in row-major terms, `Y[M x N] = alpha * X[M x K] *
//! W[N x K]^T + beta * Y`, both operands K-contiguous and packed (`gemm_core::mx::pack`), with
//! one E8M0 scale per 32 elements along K per row (`scale[r * lds + l / 32]`). The kernels are
//! column-major (gemm-compiler `kernel_args.rs`, "Block-scaled kernels"): `Y^T = W X^T`, so the
//! kernel's A is W (its m is N), its B is X (its n is M), and Y's leading dimension is its ldc.
//! Their K and leading dimensions count bytes of the packed rows.
//!
//! Block-scaled fp8 ([`Fp8BlockProblem`], both archs, DeepSeek-V3): the same Linear layer with
//! X of the arch's e4m3 with one f32 scale per row and 128 K values and W with one per 128 x 128
//! block; leading dimensions in elements. Each scale tensor is row-major (`sx[i * ldsx + g]`,
//! `sw[(j / 128) * ldsw + g]`) or column-major (`sx[i + g * ldsx]`, as the DeepSeek GEMM
//! challenge stores it: a K group of consecutive rows is contiguous, which the kernel's loads
//! of 32 columns want).

use super::kernel_plan::{pack_args, ArgValues, BlockArgs, Launch};
use gemm_core::mx::MxFormat;
use gemm_core::{Arch, DType};
use gemm_kernels::{BlockScaleKind, KernelEntry};

/// How an MX scale tensor (E8M0 bytes, `rows x K/32`) is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MxScaleLayout {
    /// `scale[r * ld + g]`, `ld >= K/32` and a multiple of 4.
    RowMajor,
    /// K-tiled: the scales of [`mx_scale_tile`] consecutive blocks of every row together,
    /// tile after tile: `scale[(g / T) * T * ld + r * T + g % T]` with `ld >= rows` (rows padded
    /// as one likes). One K tile of 32 consecutive rows is one 128-byte line, where row-major
    /// scales put each row in its own line: the MX kernels read a tile of scales per row
    /// beside each 128-byte tile of data, so this layout halves their memory requests.
    KTiled,
}

/// Per element width (bits): the elements of the least 16-byte-aligned row step (the least
/// `e` with `e * bits` a multiple of 128), for the leading dimensions' rule.
const ROW_STEP: [(u32, usize); 3] = [(8, 16), (6, 64), (4, 32)];

fn row_step(f: MxFormat) -> usize {
    ROW_STEP.iter().find(|w| w.0 == f.bits()).expect("MX formats are 8, 6 or 4 bits wide").1
}

/// The blocks per K tile the MX kernels of X of `x` and W of `w` read their scales in (`T` of
/// [`MxScaleLayout::KTiled`]): the blocks of the K values one loop iteration consumes
/// (gemm-compiler `KernelConfig::mx_k_elems`: each operand's 128-byte rows hold 128 K values,
/// 256 when both are fp4), 4 blocks, or 8 for MXFP4.
pub fn mx_scale_tile(x: MxFormat, w: MxFormat) -> usize {
    if x.bits().max(w.bits()) == 4 {
        8
    } else {
        4
    }
}

/// An MX GEMM in the Linear layer's row-major terms (module docs). Leading dimensions of X, W
/// and Y count elements; those of the scales count scale bytes (row-major) or rows (K-tiled).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MxProblem {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub x: MxFormat,
    pub w: MxFormat,
    pub c_type: DType,
    pub ldx: usize,
    pub ldw: usize,
    pub ldy: usize,
    pub ldsx: usize,
    pub ldsw: usize,
    pub sx_layout: MxScaleLayout,
    pub sw_layout: MxScaleLayout,
    pub alpha: f32,
    pub beta: f32,
}

impl MxProblem {
    /// `(row stride, tile stride)` in bytes of X's and W's scales as the kernels read them.
    pub fn scale_strides(&self) -> [(usize, usize); 2] {
        let t = mx_scale_tile(self.x, self.w);
        let s = |ld: usize, l: MxScaleLayout| match l {
            MxScaleLayout::RowMajor => (ld, t),
            MxScaleLayout::KTiled => (t, t * ld),
        };
        [s(self.ldsx, self.sx_layout), s(self.ldsw, self.sw_layout)]
    }

    /// A dense problem: rows exactly K elements, scale rows exactly K/32 bytes (rounded up
    /// to the multiple of 4 the kernels read), Y exactly N wide, alpha 1, beta 0.
    pub fn new(m: usize, n: usize, k: usize, x: MxFormat, w: MxFormat, c_type: DType) -> MxProblem {
        let s = (k / 32).next_multiple_of(4);
        let row = MxScaleLayout::RowMajor;
        MxProblem {
            m,
            n,
            k,
            x,
            w,
            c_type,
            ldx: k,
            ldw: k,
            ldy: n,
            ldsx: s,
            ldsw: s,
            sx_layout: row,
            sw_layout: row,
            alpha: 1.0,
            beta: 0.0,
        }
    }

    /// Bytes of X, W, Y and the two scale tensors as the kernel reads them (last row
    /// unpadded).
    pub fn spans(&self) -> [u64; 5] {
        let packed = |f: MxFormat, elems: usize| (elems as u64 * u64::from(f.bits())).div_ceil(8);
        let rows = |r: usize, ld: u64, last: u64| if r == 0 { 0 } else { (r as u64 - 1) * ld + last };
        let kb = |f: MxFormat| packed(f, self.k);
        // The last tile's blocks of the last row end the scales, read in whole dwords.
        let (nb, t) = (self.k / 32, mx_scale_tile(self.x, self.w));
        let tiles = nb.div_ceil(t).max(1);
        let last = (nb - (tiles - 1) * t).next_multiple_of(4);
        let [(xr, xt), (wr, wt)] = self.scale_strides();
        let scales =
            |r: usize, rs: usize, ts: usize| if r == 0 { 0 } else { ((r - 1) * rs + (tiles - 1) * ts + last) as u64 };
        [
            rows(self.m, packed(self.x, self.ldx), kb(self.x)),
            rows(self.n, packed(self.w, self.ldw), kb(self.w)),
            rows(self.m, self.ldy as u64, self.n as u64) * self.c_type.size_bytes() as u64,
            scales(self.m, xr, xt),
            scales(self.n, wr, wt),
        ]
    }

    /// Why the GPU kernels cannot run this problem, if they cannot: the rules of
    /// `kernel_args.rs` ("Block-scaled kernels") in the problem's terms.
    pub fn unfit(&self, arch: Arch) -> Option<String> {
        if arch != Arch::Gfx950 {
            return Some(format!(
                "MX GEMMs need gfx950's scaled MFMA (v_mfma_scale_*_f8f6f4); {} has none and no fp6/fp4",
                arch.name()
            ));
        }
        if !matches!(self.c_type, DType::F32 | DType::Bf16 | DType::F16) {
            return Some(format!("output {}: MX kernels write f32, bf16 or f16", self.c_type));
        }
        if self.m == 0 || self.n == 0 {
            return Some("empty problems launch nothing".into());
        }
        if !self.k.is_multiple_of(32) {
            return Some(format!("K = {} is not a multiple of the MX block (32)", self.k));
        }
        for (what, ld, f) in [("X", self.ldx, self.x), ("W", self.ldw, self.w)] {
            if ld < self.k || !(ld * f.bits() as usize).is_multiple_of(128) {
                return Some(format!(
                    "{what}'s leading dimension {ld}: at least K = {} and rows 16-byte aligned (a multiple of {} elements)",
                    self.k,
                    row_step(f)
                ));
            }
        }
        for (what, ld, layout, rows) in
            [("X", self.ldsx, self.sx_layout, self.m), ("W", self.ldsw, self.sw_layout, self.n)]
        {
            let bad = match layout {
                MxScaleLayout::RowMajor => ld < self.k / 32 || !ld.is_multiple_of(4),
                MxScaleLayout::KTiled => ld < rows,
            };
            if bad {
                return Some(format!(
                    "{what}'s scale leading dimension {ld}: row-major scales need at least K/32 = {} and a multiple of 4 bytes, K-tiled ones at least the {rows} rows",
                    self.k / 32
                ));
            }
        }
        if self.ldy < self.n {
            return Some(format!("Y's leading dimension {} is below N = {}", self.ldy, self.n));
        }
        let too_big = self.spans().iter().any(|&s| s >= 1 << 31);
        let bytes = |e: usize, f: MxFormat| e * f.bits() as usize / 8;
        let dims = [self.m, self.n, bytes(self.k, self.w), bytes(self.ldx, self.x), bytes(self.ldw, self.w), self.ldy];
        if too_big || dims.iter().any(|&d| d > u32::MAX as usize) {
            return Some("an operand spans 2 GiB or more (the kernels use 32-bit offsets)".into());
        }
        None
    }
}

/// The launch of one MX GEMM.
#[derive(Clone, Copy, Debug)]
pub struct MxPlan {
    pub entry: &'static KernelEntry,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub problem: MxProblem,
}

/// The MX kernels of `arch` for A (W) of `a`, B (X) of `b` and C of `c`.
pub fn kernels(arch: Arch, a: MxFormat, b: MxFormat, c: DType) -> impl Iterator<Item = &'static KernelEntry> {
    gemm_kernels::for_arch(arch).filter(move |e| e.block_scale == BlockScaleKind::Mx { a, b } && e.c_type == c)
}

/// The MX kernel for `p` on `arch` with `cus` compute units: a 256x256 tile when its tiles
/// fill every CU at least once, the 8-wave slim ping-pong (`mxpp`) before the 4-wave
/// interleave (`mxil`), else the 128x128 tile (four times the workgroups); a format pair only
/// the 128x128 family builds takes it. The MX kernels are not in the characterisation table
/// (`gemm mx` in the lab times them under the model: the ping-pong 27.8 us for MXFP4 at
/// 4096^3 against 43.6 for the interleave, 194.6 against 270.3 at 8192^3).
pub fn plan_mx(arch: Arch, cus: u32, p: &MxProblem) -> Result<MxPlan, String> {
    if let Some(why) = p.unfit(arch) {
        return Err(why);
    }
    let (km, kn) = (p.n as u32, p.m as u32);
    let fills = |e: &KernelEntry| km.div_ceil(e.tile.0) * kn.div_ceil(e.tile.1) >= cus;
    let mut candidates: Vec<&'static KernelEntry> = kernels(arch, p.w, p.x, p.c_type).collect();
    // Larger tiles first, more waves first among equal tiles; the first that fills every
    // CU, else the smallest.
    candidates.sort_by_key(|e| std::cmp::Reverse((e.tile.0 * e.tile.1, e.waves)));
    let entry = candidates
        .iter()
        .find(|e| fills(e))
        .or(candidates.last())
        .copied()
        .ok_or_else(|| format!("no {} kernel computes {} x {} -> {}", arch.name(), p.w, p.x, p.c_type))?;
    let (grid, block) = entry.launch(km, kn);
    Ok(MxPlan { entry, grid, block, problem: *p })
}

impl MxPlan {
    /// The launch for X, W, Y and the scales of X and W at these device addresses.
    pub fn launch(&self, x: u64, w: u64, y: u64, sx: u64, sw: u64) -> Result<Launch, String> {
        Ok(Launch { entry: self.entry, grid: self.grid, block: self.block, args: self.kernargs(x, w, y, sx, sw)? })
    }

    /// The kernel-argument bytes for X, W, Y and the scales of X and W at these addresses: the
    /// kernel's A is W and its B is X, K and the operands' leading dimensions in bytes.
    pub fn kernargs(&self, x: u64, w: u64, y: u64, psx: u64, psw: u64) -> Result<Vec<u8>, String> {
        let p = &self.problem;
        let [sx, sw] = p.scale_strides();
        let bytes = |elems: usize, f: MxFormat| (elems * f.bits() as usize / 8) as u32;
        let v = ArgValues {
            a: w,
            b: x,
            c: y,
            m: p.n as u32,
            n: p.m as u32,
            k: bytes(p.k, p.w),
            lda: bytes(p.ldw, p.w),
            ldb: bytes(p.ldx, p.x),
            ldc: p.ldy as u32,
            alpha: p.alpha,
            beta: p.beta,
        };
        let block = BlockArgs {
            scale_a: psw,
            scale_b: psx,
            ldsa: sw.0 as u32,
            ldsb: sx.0 as u32,
            gsa: sw.1 as u32,
            gsb: sx.1 as u32,
        };
        pack_args(self.entry, &v, Some(block))
    }
}

/// A block-scaled fp8 GEMM in the Linear layer's row-major terms (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fp8BlockProblem {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// The fp8 flavour of X and W: the arch's e4m3 (FNUZ on gfx942, OCP on gfx950).
    pub dtype: DType,
    pub c_type: DType,
    pub ldx: usize,
    pub ldw: usize,
    pub ldy: usize,
    pub ldsx: usize,
    pub ldsw: usize,
    /// Column-major scale tensors (module docs).
    pub sx_col_major: bool,
    pub sw_col_major: bool,
    pub alpha: f32,
    pub beta: f32,
}

impl Fp8BlockProblem {
    /// `(row stride, group stride)` of X's and W's scales, in elements.
    pub fn scale_strides(&self) -> [(usize, usize); 2] {
        let s = |ld: usize, col: bool| if col { (1, ld) } else { (ld, 1) };
        [s(self.ldsx, self.sx_col_major), s(self.ldsw, self.sw_col_major)]
    }

    /// A dense problem (rows exactly K, scale rows exactly `ceil(K/128)`), alpha 1, beta 0.
    pub fn new(m: usize, n: usize, k: usize, dtype: DType, c_type: DType) -> Fp8BlockProblem {
        let g = k.div_ceil(128);
        Fp8BlockProblem {
            m,
            n,
            k,
            dtype,
            c_type,
            ldx: k,
            ldw: k,
            ldy: n,
            ldsx: g,
            ldsw: g,
            sx_col_major: false,
            sw_col_major: false,
            alpha: 1.0,
            beta: 0.0,
        }
    }

    /// Bytes of X, W, Y, X's scales and W's scales as the kernel reads them.
    pub fn spans(&self) -> [u64; 5] {
        let rows = |r: usize, ld: usize, last: usize| if r == 0 { 0 } else { ((r - 1) * ld + last) as u64 };
        let g = self.k.div_ceil(128);
        let [(xr, xg), (wr, wg)] = self.scale_strides();
        let scales = |r: usize, rs: usize, gs: usize| {
            if r == 0 || g == 0 {
                0
            } else {
                (((r - 1) * rs + (g - 1) * gs + 1) * 4) as u64
            }
        };
        [
            rows(self.m, self.ldx, self.k),
            rows(self.n, self.ldw, self.k),
            rows(self.m, self.ldy, self.n) * self.c_type.size_bytes() as u64,
            scales(self.m, xr, xg),
            scales(self.n.div_ceil(128), wr, wg),
        ]
    }

    /// Why the GPU kernels cannot run this problem, if they cannot.
    pub fn unfit(&self, arch: Arch) -> Option<String> {
        let e4m3 = match arch {
            Arch::Gfx942 => DType::Fp8E4M3Fnuz,
            Arch::Gfx950 => DType::Fp8E4M3,
        };
        if self.dtype != e4m3 {
            return Some(format!("block-scaled fp8 on {} takes {e4m3}, not {}", arch.name(), self.dtype));
        }
        if !matches!(self.c_type, DType::F32 | DType::Bf16 | DType::F16) {
            return Some(format!("output {}: the kernels write f32, bf16 or f16", self.c_type));
        }
        if self.m == 0 || self.n == 0 {
            return Some("empty problems launch nothing".into());
        }
        for (what, ld) in [("X", self.ldx), ("W", self.ldw)] {
            if ld < self.k || !ld.is_multiple_of(16) {
                return Some(format!(
                    "{what}'s leading dimension {ld}: at least K = {} and a multiple of 16 (16-byte rows)",
                    self.k
                ));
            }
        }
        let g = self.k.div_ceil(128);
        let checks =
            [("X", self.ldsx, self.sx_col_major, self.m), ("W", self.ldsw, self.sw_col_major, self.n.div_ceil(128))];
        for (what, ld, col, rows) in checks {
            let (need, of) = if col { (rows, "its rows") } else { (g, "ceil(K/128)") };
            if ld < need {
                return Some(format!("{what}'s scale leading dimension {ld} is below {of} = {need}"));
            }
        }
        if self.ldy < self.n {
            return Some(format!("Y's leading dimension {} is below N = {}", self.ldy, self.n));
        }
        if self.spans().iter().any(|&s| s >= 1 << 31)
            || [self.m, self.n, self.k, self.ldx, self.ldw, self.ldy].iter().any(|&d| d > u32::MAX as usize)
        {
            return Some("an operand spans 2 GiB or more (the kernels use 32-bit offsets)".into());
        }
        None
    }
}

/// The launch of one block-scaled fp8 GEMM.
#[derive(Clone, Copy, Debug)]
pub struct Fp8BlockPlan {
    pub entry: &'static KernelEntry,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub problem: Fp8BlockProblem,
}

/// The block-scaled fp8 kernel for `p` on `arch`: of the arch's tiles for the output type,
/// the largest whose tiles cover at least half the CUs, else the smallest. gfx942 has 128x128
/// and 128x64 (8 waves each, the 8-wave interleave): kernel M x N x K 1536x1024x7168 (96 big
/// tiles on 304 CUs) 32.7 us against 54.8, 4608x1024x7168 (288) 66.7 against 54.4, 4096^3
/// 143.7 against 129.8; 7168x1024x18432 (448 big tiles, above half) 246.4 against 278.3 is
/// the rule's one miss among the `gemm mx --fp8-blocks` shapes. gfx950 has two:
/// 128x128 (`bsfp8`) and the `fp8pp` tile (`bsfp8pp`, 256x256). The timing model, bf16 out
/// (kernel M x N x K = weights x tokens x K): 4096^3 53.9 us against 77.0, 8192^3 390.6
/// against 518.6; 1536x6144x7168 (144 big tiles on 256 CUs) 86.4 against 99.8; but
/// 7168x1024x18432 (112 tiles) 205.3 against 129.5 and 4608x1024x7168 (72) 86.1 against 61.6:
/// below half the CUs the small tile's four times as many workgroups win. (`bsfp8pp` figures
/// before session 31's spacing, deferred adds and staged epilogue, which put it at 44.0 us at
/// 4096^3 and 334.5 at 8192^3, `lower/block_fp8.rs`; the rule not re-measured since.)
pub fn plan_fp8_blocks(arch: Arch, p: &Fp8BlockProblem) -> Result<Fp8BlockPlan, String> {
    if let Some(why) = p.unfit(arch) {
        return Err(why);
    }
    let (km, kn) = (p.n as u32, p.m as u32);
    let cus = arch.caps().compute_units;
    let mut candidates: Vec<&'static KernelEntry> = gemm_kernels::for_arch(arch)
        .filter(|e| e.block_scale == BlockScaleKind::Fp8Blocks && e.a_type == p.dtype && e.c_type == p.c_type)
        .collect();
    candidates.sort_by_key(|e| std::cmp::Reverse(e.tile.0 * e.tile.1));
    let entry = candidates
        .iter()
        .find(|e| 2 * km.div_ceil(e.tile.0) * kn.div_ceil(e.tile.1) >= cus)
        .or(candidates.last())
        .copied()
        .ok_or_else(|| format!("no {} block-scaled fp8 kernel writes {}", arch.name(), p.c_type))?;
    let (grid, block) = entry.launch(km, kn);
    Ok(Fp8BlockPlan { entry, grid, block, problem: *p })
}

impl Fp8BlockPlan {
    /// The launch for X, W, Y and the scales of X and W at these device addresses.
    pub fn launch(&self, x: u64, w: u64, y: u64, sx: u64, sw: u64) -> Result<Launch, String> {
        Ok(Launch { entry: self.entry, grid: self.grid, block: self.block, args: self.kernargs(x, w, y, sx, sw)? })
    }

    /// The kernel-argument bytes for X, W, Y and the scales of X and W at these addresses (the
    /// kernel's A is W, its B is X).
    pub fn kernargs(&self, x: u64, w: u64, y: u64, psx: u64, psw: u64) -> Result<Vec<u8>, String> {
        let p = &self.problem;
        let [sx, sw] = p.scale_strides();
        let u = |v: usize| v as u32;
        let v = ArgValues {
            a: w,
            b: x,
            c: y,
            m: u(p.n),
            n: u(p.m),
            k: u(p.k),
            lda: u(p.ldw),
            ldb: u(p.ldx),
            ldc: u(p.ldy),
            alpha: p.alpha,
            beta: p.beta,
        };
        let block = BlockArgs { scale_a: psw, scale_b: psx, ldsa: u(sw.0), ldsb: u(sx.0), gsa: u(sw.1), gsb: u(sx.1) };
        pack_args(self.entry, &v, Some(block))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_block_plans_take_the_big_tile_where_it_covers_half_the_cus() {
        let pick = |arch: Arch, m: usize, n: usize, k: usize| {
            let p = Fp8BlockProblem::new(m, n, k, DType::Fp8E4M3, DType::Bf16);
            plan_fp8_blocks(arch, &p).unwrap().entry
        };
        // (tokens, weights' rows, K): M x N x K of Y = X W^T.
        for (m, n, k, big) in [
            (4096, 4096, 4096, true),
            (8192, 8192, 8192, true),
            (6144, 1536, 7168, true),
            (6144, 7168, 256, true),
            (1024, 7168, 18432, false),
            (1024, 4608, 7168, false),
            (64, 7168, 18432, false),
        ] {
            let e = pick(Arch::Gfx950, m, n, k);
            assert_eq!(e.tile.0 == 256, big, "{m}x{n}x{k}: {}", e.name);
            assert!(e.name.contains("_bsfp8_"), "{}", e.name);
        }
        // gfx942: 128x128, and 128x64 below half the CUs.
        for (m, n, k, tile) in [
            (8192, 8192, 8192, (128, 128)),
            (4096, 4096, 4096, (128, 128)),
            (1024, 4608, 7168, (128, 128)),
            (1024, 1536, 7168, (128, 64)),
            (64, 7168, 18432, (128, 64)),
        ] {
            let p = Fp8BlockProblem::new(m, n, k, DType::Fp8E4M3Fnuz, DType::Bf16);
            let e = plan_fp8_blocks(Arch::Gfx942, &p).unwrap().entry;
            assert_eq!((e.tile.0, e.tile.1), tile, "{m}x{n}x{k}: {}", e.name);
        }
    }

    #[test]
    fn mx_plans_pick_by_size_and_refuse_what_no_kernel_runs() {
        let p = MxProblem::new(8192, 8192, 8192, MxFormat::E2M1, MxFormat::E2M1, DType::Bf16);
        let big = plan_mx(Arch::Gfx950, 256, &p).unwrap();
        assert_eq!(big.entry.tile.0, 256, "{}", big.entry.name);
        // The slim ping-pong (8 waves) before the 4-wave interleave, MXFP4 and MXFP8.
        assert_eq!((big.entry.waves, big.entry.schedule), (8, "pingpong2slim"), "{}", big.entry.name);
        let e4 = MxProblem::new(4096, 4096, 4096, MxFormat::E4M3, MxFormat::E4M3, DType::Bf16);
        assert_eq!(plan_mx(Arch::Gfx950, 256, &e4).unwrap().entry.waves, 8);
        let small = plan_mx(Arch::Gfx950, 256, &MxProblem { m: 256, n: 512, ..p }).unwrap();
        assert_eq!(small.entry.tile.0, 128, "{}", small.entry.name);
        // e5m2 pairs exist only on the 128x128 tile.
        let e5 = MxProblem::new(8192, 8192, 8192, MxFormat::E5M2, MxFormat::E4M3, DType::F32);
        let plan = plan_mx(Arch::Gfx950, 256, &e5).unwrap();
        assert_eq!(plan.entry.block_scale, BlockScaleKind::Mx { a: MxFormat::E4M3, b: MxFormat::E5M2 });
        assert_eq!((plan.grid[0], plan.grid[1]), (64, 64));
        let refused = |q: MxProblem, arch: Arch, want: &str| {
            let e = plan_mx(arch, 256, &q).unwrap_err();
            assert!(e.contains(want), "{e}");
        };
        refused(p, Arch::Gfx942, "gfx950");
        refused(MxProblem { k: 8200, ..p }, Arch::Gfx950, "multiple of the MX block");
        // fp6 rows: a multiple of 64 elements (48 bytes) keeps them 16-byte aligned; each
        // operand's rows follow its own width.
        let fp6 = MxProblem { x: MxFormat::E2M3, w: MxFormat::E3M2, ..p };
        assert!(plan_mx(Arch::Gfx950, 256, &fp6).is_ok());
        refused(MxProblem { ldx: 8224, ..fp6 }, Arch::Gfx950, "a multiple of 64 elements");
        let mixed = MxProblem { x: MxFormat::E4M3, w: MxFormat::E2M1, ..p };
        let plan = plan_mx(Arch::Gfx950, 256, &mixed).unwrap();
        assert_eq!(plan.entry.block_scale, BlockScaleKind::Mx { a: MxFormat::E2M1, b: MxFormat::E4M3 });
        assert!(plan_mx(Arch::Gfx950, 256, &MxProblem { ldx: 8208, ..mixed }).is_ok(), "fp8 X: 16 elements");
        refused(MxProblem { ldw: 8208, ..mixed }, Arch::Gfx950, "W's leading dimension 8208");
        refused(MxProblem { ldx: 8200, ..p }, Arch::Gfx950, "16-byte aligned");
        refused(MxProblem { ldsw: 255, ..p }, Arch::Gfx950, "scale leading dimension");
        refused(MxProblem { ldy: 10, ..p }, Arch::Gfx950, "below N");
        refused(
            MxProblem { m: 70000, k: 65536, ldx: 65536, ldw: 65536, ldsx: 2048, ldsw: 2048, ..p },
            Arch::Gfx950,
            "2 GiB",
        );
    }

    /// Every one of the 25 MX format pairs reaches a gfx950 kernel (issue 26: "A and B each in
    /// any of the five formats"): the catalogue builds each pair for every output type, and the
    /// plan runs a kernel of that pair (the kernel's A is W), small and large problems alike;
    /// the large ones take a 256x256 tile where the pair has one.
    #[test]
    fn mx_plans_cover_every_format_pair() {
        let mut planned = 0;
        for x in MxFormat::ALL {
            for w in MxFormat::ALL {
                for c in [DType::F32, DType::Bf16, DType::F16] {
                    assert!(kernels(Arch::Gfx950, w, x, c).count() > 0, "{x} x {w} -> {c}: no kernel");
                    let big = kernels(Arch::Gfx950, w, x, c).any(|e| e.tile.0 == 256);
                    for (m, n) in [(1, 96), (8192, 8192)] {
                        let p = MxProblem::new(m, n, 256, x, w, c);
                        let plan = plan_mx(Arch::Gfx950, 256, &p).unwrap_or_else(|e| panic!("{x} x {w} -> {c}: {e}"));
                        assert_eq!(plan.entry.block_scale, BlockScaleKind::Mx { a: w, b: x });
                        assert_eq!(plan.entry.c_type, c);
                        assert_eq!(plan.entry.tile.0 == 256, big && m == 8192, "{}", plan.entry.name);
                        planned += 1;
                    }
                }
            }
        }
        assert_eq!(planned, 25 * 3 * 2);
    }

    #[test]
    fn block_fp8_plans_on_both_archs_and_their_refusals() {
        for (arch, d) in [(Arch::Gfx942, DType::Fp8E4M3Fnuz), (Arch::Gfx950, DType::Fp8E4M3)] {
            let p = Fp8BlockProblem::new(1024, 1536, 7168, d, DType::Bf16);
            let plan = plan_fp8_blocks(arch, &p).unwrap();
            assert_eq!(plan.entry.block_scale, BlockScaleKind::Fp8Blocks);
            // 96 tiles of 128x128 for 304 CUs: gfx942 takes its 128x64 tile.
            let want = if arch == Arch::Gfx942 { (12, 16) } else { (12, 8) };
            assert_eq!((plan.grid[0], plan.grid[1]), want, "kernel m = N, n = M");
            let args = plan.kernargs(1, 2, 3, 4, 5).unwrap();
            let u64_at = |o: usize| u64::from_le_bytes(args[o..o + 8].try_into().unwrap());
            assert_eq!((u64_at(0), u64_at(8), u64_at(112), u64_at(120)), (2, 1, 5, 4), "A is W, B is X");
            let no = |q: Fp8BlockProblem, want: &str| {
                let e = plan_fp8_blocks(arch, &q).unwrap_err();
                assert!(e.contains(want), "{e}");
            };
            no(Fp8BlockProblem { dtype: DType::Fp8E5M2, ..p }, "takes");
            no(Fp8BlockProblem { ldx: 7170, ..p }, "multiple of 16");
            no(Fp8BlockProblem { ldsw: 55, ..p }, "ceil(K/128)");
            no(Fp8BlockProblem { c_type: DType::Fp8E4M3, ..p }, "output");
            no(Fp8BlockProblem { sx_col_major: true, ..p }, "its rows");
            // Column-major activation scales (the DeepSeek GEMM challenge's layout).
            let col = Fp8BlockProblem { sx_col_major: true, ldsx: 1024, ..p };
            let args = plan_fp8_blocks(arch, &col).unwrap().kernargs(1, 2, 3, 4, 5).unwrap();
            let u32_at = |o: usize| u32::from_le_bytes(args[o..o + 4].try_into().unwrap());
            assert_eq!((u32_at(128), u32_at(132), u32_at(136), u32_at(140)), (56, 1, 1, 1024));
        }
    }

    #[test]
    fn mx_kernel_arguments_count_bytes_and_swap_the_operands() {
        let p = MxProblem {
            ldx: 256,
            ldw: 288,
            ldy: 40,
            ldsx: 8,
            ldsw: 12,
            ..MxProblem::new(3, 33, 224, MxFormat::E2M1, MxFormat::E2M1, DType::F32)
        };
        let plan = plan_mx(Arch::Gfx950, 256, &p).unwrap();
        let args = plan.kernargs(0x1000, 0x2000, 0x3000, 0x4000, 0x5000).unwrap();
        let u32_at = |o: usize| u32::from_le_bytes(args[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(args[o..o + 8].try_into().unwrap());
        assert_eq!((u64_at(0), u64_at(8), u64_at(16)), (0x2000, 0x1000, 0x3000), "A is W, B is X");
        assert_eq!((u32_at(24), u32_at(28), u32_at(32)), (33, 3, 112), "m = N, n = M, k in bytes");
        assert_eq!((u32_at(36), u32_at(40), u32_at(44)), (144, 128, 40));
        assert_eq!((u64_at(112), u64_at(120), u32_at(128), u32_at(132)), (0x5000, 0x4000, 12, 8));
        assert_eq!((u32_at(136), u32_at(140)), (8, 8), "row-major: one fp4 tile of scales is 8 bytes");
        let tiled = MxProblem { sx_layout: MxScaleLayout::KTiled, ldsx: 4, ..p };
        let args = plan_mx(Arch::Gfx950, 256, &tiled).unwrap().kernargs(1, 2, 3, 4, 5).unwrap();
        let u32_at = |o: usize| u32::from_le_bytes(args[o..o + 4].try_into().unwrap());
        assert_eq!((u32_at(132), u32_at(140)), (8, 32), "K-tiled X scales: rows 8 bytes apart, tiles 8 x 4");
        assert!(plan_mx(Arch::Gfx950, 256, &MxProblem { ldsx: 2, ..tiled }).is_err(), "fewer rows than M");
    }
}
