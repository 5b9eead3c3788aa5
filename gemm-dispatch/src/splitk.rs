//! Split-K: a problem whose `m x n` tiles are too few to keep the GPU's CUs busy and whose K
//! is long (`128 x 128 x 65536`: one 128x128 tile, four 64x64 ones, on 304 CUs) runs as two
//! kernels on one stream: the catalogue's `splitk` partial kernel over a grid of
//! `tiles x splits` workgroups, each summing one K range into its f32 slab of a workspace,
//! then the `splitk_reduce` kernel, which sums the slabs in split order, applies alpha and
//! beta and writes C in its type (gemm-compiler `ir::SplitK`: deterministic, Tensile's
//! `GlobalSplitU` "MultipleBuffer" form).
//!
//! [`choose`] decides with a static estimate in the terms of `kernel_choice::StaticEstimate`
//! (rounds of one workgroup per CU, a tile's flops at the CU's share of the peak over the
//! kernel's MFMA issue share) plus the workspace traffic at the HBM bandwidth (ARCH.md
//! "Memory system"): the split is taken only where it predicts faster than the plain kernel.
//! `gemm splitk` prints the timing model's predictions of both (`model::predict_split`).

use crate::kernel_plan::{column_major, ColumnMajor, KernelPlan};
use gemm_core::{Arch, DType, GemmProblem};
use gemm_kernels::{ArgKind, KernelEntry, SplitRole};

/// The most workspace one split-K GEMM takes (bytes). hipBLASLt's users size theirs in tens
/// of MiB (PyTorch's default for it is 32 MiB); the reduction kernel addresses at most 2^30.
pub const WORKSPACE_CAP: usize = 32 << 20;

/// K tiles each split runs at least: below this the fixed cost of a workgroup (setup, the
/// first tile's wait, the epilogue's stores) and the workspace traffic outweigh the work.
pub const MIN_TILES_PER_SPLIT: u32 = 8;

/// A split-K launch pair for one problem.
#[derive(Clone, Copy, Debug)]
pub struct SplitPlan {
    pub partial: &'static KernelEntry,
    pub reduce: &'static KernelEntry,
    pub problem: ColumnMajor,
    pub splits: u32,
    /// K per split (a multiple of the partial kernel's KT).
    pub kchunk: u32,
    /// The slabs' leading dimension (elements) and the bytes from one slab to the next.
    pub ldw: u32,
    pub wstride: u32,
    /// The static estimates [`choose`] compared (seconds).
    pub estimate_split: f64,
    pub estimate_plain: Option<f64>,
}

/// One kernel launch: the entry, grid and block in workgroups/work-items, argument bytes.
#[derive(Clone, Debug)]
pub struct Launch {
    pub entry: &'static KernelEntry,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: Vec<u8>,
}

/// Static seconds of `grid` workgroups of `e`, each computing a `2*MT*NT*k` tile: rounds of one
/// workgroup per CU at the CU's share of the peak over the kernel's MFMA issue share.
fn compute_seconds(e: &KernelEntry, workgroups: u64, k: u32) -> f64 {
    let caps = e.arch.caps();
    let rounds = workgroups.div_ceil(u64::from(caps.compute_units.max(1))) as f64;
    let per_cu = e.arch.peak_tflops(e.a_type) * 1e12 / f64::from(caps.compute_units.max(1));
    let share = (f64::from(e.mfma_issue_share_permille) / 1000.0).clamp(0.05, 1.0);
    rounds * 2.0 * f64::from(e.tile.0) * f64::from(e.tile.1) * f64::from(k.max(1)) / per_cu / share
}

/// The static estimate of a plain plan (the compute part of `kernel_choice::StaticEstimate`).
pub fn estimate_plain(plan: &KernelPlan) -> f64 {
    let wgs = u64::from(plan.grid[0]) * u64::from(plan.grid[1]) * u64::from(plan.grid[2]);
    compute_seconds(plan.entry, wgs, plan.problem.k)
}

/// Whether the partial kernel `e` can run `p`'s operands: dtypes, transposes, alignment, spans.
fn fits(e: &KernelEntry, p: &GemmProblem, cm: &ColumnMajor) -> bool {
    let (a_t, b_t) = if cm.swap_ab { (p.b_type, p.a_type) } else { (p.a_type, p.b_type) };
    let align = e.align_elems.max(1);
    let spans_ok = p.validate().is_ok_and(|s| {
        s.a.saturating_mul(p.a_type.size_bytes()) < 1 << 31 && s.b.saturating_mul(p.b_type.size_bytes()) < 1 << 31
    });
    (e.a_type, e.b_type) == (a_t, b_t)
        && (e.trans_a, e.trans_b) == (cm.trans_a, cm.trans_b)
        && cm.lda.is_multiple_of(align)
        && cm.ldb.is_multiple_of(align)
        && spans_ok
}

/// The split-K plan for `p` on `arch`, or why split-K does not serve it. With `plain` (the
/// kernel the problem would run otherwise), the split must also predict faster than it.
pub fn choose(arch: Arch, p: &GemmProblem, plain: Option<&KernelPlan>) -> Result<SplitPlan, String> {
    p.validate().map_err(|e| e.to_string())?;
    if p.m == 0 || p.n == 0 || p.k == 0 {
        return Err("nothing to split: m, n or k is 0".into());
    }
    if !matches!(p.c_type, DType::F32 | DType::Bf16 | DType::F16) {
        return Err(format!("no split-K reduction writes {}", p.c_type));
    }
    let cm = column_major(p)?;
    // The vector-loading partial kernel where the leading dimensions allow it.
    let partial = gemm_kernels::for_arch(arch)
        .filter(|e| e.split_k == SplitRole::Partial && fits(e, p, &cm))
        .max_by_key(|e| e.align_elems)
        .ok_or_else(|| format!("no split-K partial kernel for {} x {} on {arch}", p.a_type, p.b_type))?;
    let reduce = gemm_kernels::for_arch(arch)
        .find(|e| e.split_k == SplitRole::Reduce && e.c_type == p.c_type)
        .ok_or_else(|| format!("no split-K reduction to {} on {arch}", p.c_type))?;
    let cus = arch.caps().compute_units;
    let tiles = cm.m.div_ceil(partial.tile.0) * cm.n.div_ceil(partial.tile.1);
    if tiles >= cus / 2 {
        return Err(format!(
            "{tiles} tiles of {}x{} already fill half of the {cus} CUs",
            partial.tile.0, partial.tile.1
        ));
    }
    let kt = partial.tile.2;
    let ldw = cm.m.next_multiple_of(4);
    // Slabs on 256-byte boundaries (whole cache lines apart).
    let wstride = u64::from(ldw) * u64::from(cm.n) * 4;
    let wstride = u32::try_from(wstride.next_multiple_of(256)).map_err(|_| "the workspace slab exceeds 4 GiB")?;
    let by_cap = (WORKSPACE_CAP / wstride as usize) as u32;
    // Enough workgroups for every resident slot of every CU (the manifest's occupancy is waves
    // per SIMD; 4 SIMDs per CU), no split shorter than MIN_TILES_PER_SPLIT K tiles.
    let per_cu = (partial.occupancy * 4 / partial.waves.max(1)).max(1);
    let want = (cus * per_cu).div_ceil(tiles).min(cm.k / (MIN_TILES_PER_SPLIT * kt)).min(by_cap);
    if want < 2 {
        return Err(format!(
            "K = {} gives fewer than 2 splits of at least {} (or the {} MiB workspace holds fewer than 2 slabs)",
            cm.k,
            MIN_TILES_PER_SPLIT * kt,
            WORKSPACE_CAP >> 20
        ));
    }
    let kchunk = cm.k.div_ceil(want).next_multiple_of(kt);
    let splits = cm.k.div_ceil(kchunk);
    let part = compute_seconds(partial, u64::from(tiles) * u64::from(splits), kchunk);
    // The slabs written once and read once, C written (and read when beta != 0).
    let c_bytes = (cm.m as usize * cm.n as usize * p.c_type.size_bytes()) as f64;
    let traffic = 2.0 * splits as f64 * wstride as f64 + c_bytes * if p.beta != 0.0 { 2.0 } else { 1.0 };
    let estimate_split = part + traffic / (arch.caps().hbm_tbps * 1e12);
    let estimate_plain = plain.map(estimate_plain);
    if let Some(t) = estimate_plain {
        if t <= estimate_split {
            return Err(format!(
                "the plain kernel predicts {:.1} us, split-K ({splits} splits) {:.1} us",
                t * 1e6,
                estimate_split * 1e6
            ));
        }
    }
    Ok(SplitPlan { partial, reduce, problem: cm, splits, kchunk, ldw, wstride, estimate_split, estimate_plain })
}

/// Packs `e`'s arguments from its manifest, each by name from `value`.
fn pack(e: &KernelEntry, value: impl Fn(&str) -> Option<Vec<u8>>) -> Result<Vec<u8>, String> {
    let mut out = vec![0u8; e.kernarg_size as usize];
    for arg in e.kernarg {
        let bytes = value(arg.name).ok_or_else(|| format!("kernel {} has an unknown argument {}", e.name, arg.name))?;
        let at = arg.offset as usize;
        out.get_mut(at..at + bytes.len())
            .filter(|_| bytes.len() == arg.size as usize)
            .ok_or_else(|| format!("argument {} of {} does not fit its slot", arg.name, e.name))?
            .copy_from_slice(&bytes);
        debug_assert!(arg.kind != ArgKind::Pointer || bytes.len() == 8);
    }
    Ok(out)
}

impl SplitPlan {
    /// Bytes of workspace the pair needs (16-byte aligned, as the partial kernel's vector
    /// stores want).
    pub fn workspace_bytes(&self) -> usize {
        self.splits as usize * self.wstride as usize
    }

    /// The two launches, in the order they must run on one stream, for A, B, C and the
    /// workspace at these device addresses.
    pub fn launches(&self, p: &GemmProblem, a: u64, b: u64, c: u64, ws: u64) -> Result<[Launch; 2], String> {
        let (ka, kb) = if self.problem.swap_ab { (b, a) } else { (a, b) };
        let cm = self.problem;
        let u = |x: u32| Some(x.to_le_bytes().to_vec());
        let partial_args = pack(self.partial, |name| match name {
            "a" => Some(ka.to_le_bytes().to_vec()),
            "b" => Some(kb.to_le_bytes().to_vec()),
            "ws" => Some(ws.to_le_bytes().to_vec()),
            "m" => u(cm.m),
            "n" => u(cm.n),
            "k" => u(cm.k),
            "lda" => u(cm.lda),
            "ldb" => u(cm.ldb),
            "ldw" => u(self.ldw),
            "kchunk" => u(self.kchunk),
            "wstride" => u(self.wstride),
            _ => None,
        })?;
        let reduce_args = pack(self.reduce, |name| match name {
            "ws" => Some(ws.to_le_bytes().to_vec()),
            "c" => Some(c.to_le_bytes().to_vec()),
            "m" => u(cm.m),
            "n" => u(cm.n),
            "splits" => u(self.splits),
            "ldw" => u(self.ldw),
            "ldc" => u(cm.ldc),
            "alpha" => Some(p.alpha.to_le_bytes().to_vec()),
            "beta" => Some(p.beta.to_le_bytes().to_vec()),
            "wstride" => u(self.wstride),
            _ => None,
        })?;
        let (mut grid, block) = self.partial.launch(cm.m, cm.n);
        grid[2] = self.splits;
        let (rgrid, rblock) = self.reduce.launch(cm.m, cm.n);
        Ok([
            Launch { entry: self.partial, grid, block, args: partial_args },
            Launch { entry: self.reduce, grid: rgrid, block: rblock, args: reduce_args },
        ])
    }
}

impl SplitPlan {
    /// The same plan with `splits` splits instead (K per split recomputed, at least one K tile).
    pub fn with_splits(mut self, splits: u32) -> Self {
        let kt = self.partial.tile.2;
        self.kchunk = self.problem.k.div_ceil(splits.max(1)).next_multiple_of(kt);
        self.splits = self.problem.k.div_ceil(self.kchunk);
        self
    }
}

/// The timing model's prediction of a split-K pair: both kernels on one emulated device's
/// zero-filled memory, one after the other (the model has no launch gap: ARCH.md has no
/// figure for it, `gemm_emu::timing` README "Not modelled").
pub fn predict_split(
    plan: &SplitPlan,
    p: &GemmProblem,
    opts: &gemm_emu::timing::ModelOptions,
) -> Result<[gemm_emu::timing::Prediction; 2], String> {
    use gemm_emu::timing::{Model, Workload};
    let spans = p.validate().map_err(|e| e.to_string())?;
    let arch = plan.partial.arch;
    let dev = gemm_emu::Device::new(arch);
    let bytes = |elems: usize, d: DType| ((elems * d.size_bytes()) as u64).next_multiple_of(16).max(16);
    let mut ptrs = Vec::new();
    for (n, d) in [(spans.a, p.a_type), (spans.b, p.b_type), (spans.c, p.c_type)] {
        ptrs.push(dev.alloc(bytes(n, d)).map_err(|e| e.to_string())?);
    }
    let ws = dev.alloc(plan.workspace_bytes() as u64).map_err(|e| e.to_string())?;
    let launches = plan.launches(p, ptrs[0], ptrs[1], ptrs[2], ws)?;
    let model = Model::new(arch);
    let mut out = Vec::with_capacity(2);
    for (i, l) in launches.iter().enumerate() {
        let w = Workload {
            code_object: l.entry.code_object,
            kernel: l.entry.name,
            grid: l.grid,
            block: l.block,
            kernarg: &l.args,
            dynamic_lds: 0,
            // The GEMM's flops belong to the partial kernel; the reduction's adds are not MFMAs.
            flops: if i == 0 { p.flops() } else { 0.0 },
        };
        out.push(model.predict(dev.memory(), &w, opts).map_err(|e| e.to_string())?);
    }
    let [a, b]: [_; 2] = out.try_into().map_err(|_| "two predictions".to_string())?;
    Ok([a, b])
}

/// `gemm splitk`: split-K against the plain kernels, predicted by the timing model.
#[derive(clap::Args, Debug)]
pub struct SplitkArgs {
    #[arg(long)]
    pub m: usize,
    #[arg(long)]
    pub n: usize,
    #[arg(long)]
    pub k: usize,
    /// gfx942 or gfx950 (default: both).
    #[arg(long)]
    pub arch: Option<Arch>,
    /// Input dtype (bf16 or f16).
    #[arg(long, default_value = "bf16")]
    pub dtype: DType,
    /// Output dtype (f32, bf16, f16).
    #[arg(long, default_value = "bf16")]
    pub out_dtype: DType,
    /// Also predict these split counts (beside the one the dispatcher picks).
    #[arg(long, value_delimiter = ',')]
    pub splits: Vec<u32>,
}

/// Prints, per arch: every plain kernel that can run the problem with its predicted time, the
/// split plan the dispatcher picks (and any `--splits` asked for) with both kernels' predicted
/// times, and the speed-up of the best split over the best plain kernel.
pub fn report(args: &SplitkArgs) -> Result<(), String> {
    use std::fmt::Write as _;
    let opts = gemm_emu::timing::ModelOptions::default();
    let p = GemmProblem::new(args.m, args.n, args.k).with_layout(gemm_core::Layout::ColMajor).with_dtypes(
        args.dtype,
        args.dtype,
        args.out_dtype,
    );
    let archs: Vec<Arch> = args.arch.map_or(Arch::ALL.to_vec(), |a| vec![a]);
    for arch in archs {
        let mut s = String::new();
        writeln!(s, "{arch} {}x{}x{} {} -> {} (timing model, sustained clock):", p.m, p.n, p.k, p.a_type, p.c_type)
            .unwrap();
        let mut best_plain: Option<(f64, &str)> = None;
        for e in gemm_kernels::for_arch(arch) {
            let Ok(plan) = crate::kernel_plan::plan_for(e, &p) else { continue };
            let pr = crate::model::predict_plan(&plan, &p, &opts)?;
            writeln!(s, "  plain  {:<58} {:>9.1} us {:>8.1} TFLOP/s", e.name, pr.seconds * 1e6, pr.tflops).unwrap();
            if best_plain.is_none_or(|(t, _)| pr.seconds < t) {
                best_plain = Some((pr.seconds, e.name));
            }
        }
        let plain = crate::kernel_plan::plan(arch, &p).ok();
        let chosen = choose(arch, &p, plain.as_ref());
        let base = match &chosen {
            Ok(sp) => *sp,
            Err(why) => {
                writeln!(s, "  the dispatcher does not split: {why}").unwrap();
                match choose(arch, &p, None) {
                    Ok(sp) => sp,
                    Err(_) => {
                        print!("{s}");
                        continue;
                    }
                }
            }
        };
        let mut counts = vec![base.splits];
        counts.extend(args.splits.iter().copied().filter(|&x| x >= 1));
        let mut best_split: Option<(f64, u32)> = None;
        for (i, &n) in counts.iter().enumerate() {
            let sp = if i == 0 { base } else { base.with_splits(n) };
            let [a, b] = predict_split(&sp, &p, &opts)?;
            let t = a.seconds + b.seconds;
            writeln!(
                s,
                "  split  {:>3} x K {:<6} {}{:>5.1} us partial ({}) + {:.1} us reduction = {:.1} us, {:.1} TFLOP/s, workspace {:.1} MiB",
                sp.splits,
                sp.kchunk,
                if i == 0 && chosen.is_ok() { "(chosen) " } else { "" },
                a.seconds * 1e6,
                a.limiter,
                b.seconds * 1e6,
                t * 1e6,
                p.flops() / t / 1e12,
                sp.workspace_bytes() as f64 / (1 << 20) as f64
            )
            .unwrap();
            if best_split.is_none_or(|(bt, _)| t < bt) {
                best_split = Some((t, sp.splits));
            }
        }
        if let (Some((tp, name)), Some((ts, n))) = (best_plain, best_split) {
            writeln!(
                s,
                "  best plain {name}: {:.1} us; best split ({n} splits): {:.1} us; {:.2}x",
                tp * 1e6,
                ts * 1e6,
                tp / ts
            )
            .unwrap();
        }
        print!("{s}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::Layout;

    fn bf16(m: usize, n: usize, k: usize) -> GemmProblem {
        GemmProblem::new(m, n, k).with_layout(Layout::ColMajor).with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16)
    }

    /// Tall-K problems with few tiles split; square ones and short K do not, with the reason.
    #[test]
    fn split_k_serves_few_tiles_and_long_k() {
        for arch in Arch::ALL {
            let p = bf16(128, 128, 65536);
            let plain = crate::kernel_plan::plan(arch, &p).unwrap();
            let s = choose(arch, &p, Some(&plain)).unwrap();
            assert!(s.splits >= 2 && s.kchunk.is_multiple_of(s.partial.tile.2) && s.splits * s.kchunk >= 65536);
            assert!((s.splits - 1) * s.kchunk < 65536, "no empty split");
            assert!(s.workspace_bytes() <= WORKSPACE_CAP);
            assert!(s.estimate_split < s.estimate_plain.unwrap());
            let l = s.launches(&p, 0x1000, 0x2000, 0x3000, 0x4000).unwrap();
            assert_eq!(l[0].grid, [2, 2, s.splits]);
            assert_eq!(l[1].grid, [2, 32, 1]);
            assert_eq!((l[0].args.len(), l[1].args.len()), (56, 48));
            let big = bf16(8192, 8192, 8192);
            let why = choose(arch, &big, crate::kernel_plan::plan(arch, &big).ok().as_ref()).unwrap_err();
            assert!(why.contains("fill half"), "{why}");
            let short = bf16(64, 64, 256);
            assert!(choose(arch, &short, None).unwrap_err().contains("fewer than 2 splits"));
        }
    }
}
