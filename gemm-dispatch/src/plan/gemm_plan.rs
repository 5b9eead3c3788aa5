//! One GEMM on one device as the launches that compute it: the single way a call becomes work
//! for a GPU backend (HIP or emulated).
//!
//! [`plan_gemm`] makes every decision once, from the problem and the device's architecture and
//! compute-unit count: the kernel the characterisation table ranks first
//! ([`choice::choose`](crate::plan::choice::choose)), then whether split-K or a split tail
//! ([`splitk::choose_on`](crate::plan::splitk::choose_on)) beats it on that many CUs, and for
//! a 1-byte problem whose kernel reads both operands M/N-contiguous, whether copying one operand
//! transposed first ([`transpose`](crate::plan::transpose)) and running the other layout does. The
//! [`GemmPlan`] it returns knows its workspace and, given device addresses, its launches in
//! stream order; a backend allocates, copies and launches what it is told, and decides nothing.

use crate::plan::choice;
use crate::plan::kernel_plan::{self, KernelPlan, Launch};
use crate::plan::splitk::{self, SplitPlan};
use crate::plan::transpose::{self, TransposePlan};
use gemm_core::{Arch, GemmProblem, Operand, Transpose};
use gemm_kernels::KernelEntry;

/// The launches of one GEMM on one device.
#[derive(Clone, Copy, Debug)]
pub struct GemmPlan {
    /// The dispatcher's kernel for the problem (with a split, the plain kernel it beat).
    pub kernel: KernelPlan,
    /// Split-K or a split tail, where it predicts faster than `kernel` alone.
    pub split: Option<SplitPlan>,
    /// The transpose pre-pass, where it and the GEMM after it predict faster than the direct
    /// plan: `kernel` and `split` then run [`TransposePlan::problem`], one operand read from the
    /// workspace copy.
    pub prepass: Option<TransposePlan>,
}

/// The least gain, as a share of the plain kernel's table time, for which a split plan is run
/// instead. A split adds a launch and a workspace, and its table time is the less certain: its
/// partial kernel is composed at K chunks below the K values the table measured (extrapolated)
/// and at more workgroups than any measured grid. On the sampled grid a split the table put 3.6%
/// ahead was 5.7% behind in the timing model (gfx942 16 x 28672 x 4096 bf16 `x W^T`, decode
/// split 4). 5% is the tolerance the dispatcher is held to against the model's best
/// (`gemm plan --grid --best`, issue 28).
pub const SPLIT_MARGIN: f64 = 0.05;

/// The least gain, as a share of the direct plan's table time, for which the transpose pre-pass
/// and the GEMM after it are run instead: as for a split ([`SPLIT_MARGIN`]), an extra launch and
/// a workspace, and a time composed from two estimates (the pre-pass's is a fit, not a table
/// row: `transpose.rs`).
pub const PREPASS_MARGIN: f64 = SPLIT_MARGIN;

/// The plan for `p` on a device of `arch` with `cus` compute units (a partition of a chip has
/// fewer than [`gemm_core::ArchCaps::compute_units`]). `Ok(None)` for an empty problem (m or n
/// is 0: nothing to launch); `Err` says why no kernel runs it.
///
/// Remembered per problem (every field but the scalars, and whether `beta` is 0: the plan reads C
/// or not) and device: weighing the decode kernels' and tiled kernels' splits ranks the whole
/// catalogue (about 0.35-0.4 ms on this project's 2-core AMD EPYC for 1 x 1280 x 8192 bf16, much
/// longer than the GEMM), and a serving loop repeats its shapes every token; the device API
/// plans every call.
pub fn plan_gemm(arch: Arch, cus: u32, p: &GemmProblem) -> Result<Option<GemmPlan>, String> {
    type Key = (Arch, u32, [usize; 6], [gemm_core::DType; 3], gemm_core::Layout, [Transpose; 2], bool, bool);
    static PLANS: std::sync::OnceLock<parking_lot::Mutex<std::collections::HashMap<Key, PlanResult>>> =
        std::sync::OnceLock::new();
    let key: Key = (
        arch,
        cus,
        [p.m, p.n, p.k, p.lda, p.ldb, p.ldc],
        [p.a_type, p.b_type, p.c_type],
        p.layout,
        [p.trans_a, p.trans_b],
        p.beta != 0.0,
        p.allow_xf32,
    );
    let plans = PLANS.get_or_init(Default::default);
    if let Some(hit) = plans.lock().get(&key) {
        return hit.clone();
    }
    let planned = plan_gemm_uncached(arch, cus, p);
    let mut plans = plans.lock();
    // Exact shapes: a caller sweeping sizes would grow the map without bound.
    if plans.len() >= PLAN_CACHE_CAPACITY {
        plans.clear();
    }
    plans.insert(key, planned.clone());
    planned
}

type PlanResult = Result<Option<GemmPlan>, String>;

/// Problems whose plan [`plan_gemm`] remembers at most.
const PLAN_CACHE_CAPACITY: usize = 4096;

/// The most rows of activations (the smaller of `m` and `n`) for which [`plan_gemm`] weighs
/// decode-rows splits against a tiled pick: the decode range of issue 23 (M = 1..256).
const DECODE_ROWS_MAX: usize = 256;

/// [`plan_gemm`] without the memory.
fn plan_gemm_uncached(arch: Arch, cus: u32, p: &GemmProblem) -> Result<Option<GemmPlan>, String> {
    if p.m == 0 || p.n == 0 {
        p.validate().map_err(|e| e.to_string())?;
        return Ok(None);
    }
    let plan = direct(arch, cus, p)?;
    let kernel = plan.kernel;
    let whole_chip = cus == arch.caps().compute_units;
    if !kernel.entry.is_decode() {
        let plan = with_prepass(arch, cus, p, plan);
        // A tiled kernel the table ranks ahead of every decode kernel as one launch can still
        // trail a decode-rows kernel's split (issue 23: gfx950 7168 x 8192 fp8 weights at M =
        // 64, where the 64x64x128 three-stage tile ranks first as one launch and its split
        // partner predicts 18.2 us against 13.2 for the 128x64 decode-rows kernel in 4 splits,
        // timing model). Weighed as in the decode case below.
        // Decode shapes only (issue 23's M = 1..256 rows of activations on either side).
        let decode_fits = whole_chip
            && p.m.min(p.n) <= DECODE_ROWS_MAX
            && plan.prepass.is_none()
            && gemm_kernels::for_arch(arch)
                .any(|e| e.schedule.starts_with("decoderows") && kernel_plan::plan_for(e, p).is_ok());
        if !decode_fits {
            return Ok(Some(plan));
        }
        let (_, decode) = choice::tiled_and_decode(arch, p);
        let (mut best, mut best_t) = (plan, plan.estimate(p));
        for k in decode.into_iter().filter(|k| k.entry.schedule.starts_with("decoderows")) {
            let alt = GemmPlan { kernel: k, split: splitk::choose_on(arch, cus, p, Some(&k)).ok(), prepass: None };
            if alt.split.is_none() {
                continue;
            }
            let t = alt.estimate(p);
            if t < best_t * split_margin(&best) {
                (best, best_t) = (alt, t);
            }
        }
        return Ok(Some(best));
    }
    // A decode kernel is ranked as a plain kernel; a tiled kernel split over K may still beat
    // it (weights too wide for the decode kernel's columns), and so may another decode kernel's
    // split-K twin (a decode-rows kernel on few weight rows: `choice::tiled_and_decode`). Every
    // plan by the table.
    let (tiled, decode) = choice::tiled_and_decode(arch, p);
    // A split replaces the decode plan only [`SPLIT_MARGIN`] ahead, as a split replaces a plain
    // kernel: the table composes a split less surely than one launch (gfx942 4096 x 14336 bf16
    // weights at M = 16, issue 23: the 64x64 tile in 9 splits 1% ahead of the decode kernel by
    // the table, 3% behind it by the timing model). The decode-rows kernels count only split
    // (as one launch the table ranked them below `kernel` already), and only on the whole chip,
    // where the table was measured. Not the other decode kernels' splits: the table put gfx942
    // 4096 x 14336 bf16 weights at M = 8 in 14 splits of the 32x16 decode kernel more than 5%
    // ahead of the 16x16 8-wave kernel alone, where the timing model gives 26.6 us against 25.7.
    let (mut best, mut best_t) = (plan, plan.estimate(p));
    let others = decode
        .into_iter()
        .filter(|k| whole_chip && k.entry.name != kernel.entry.name && k.entry.schedule.starts_with("decoderows"));
    for (k, split_only) in tiled.into_iter().map(|k| (k, false)).chain(others.map(|k| (k, true))) {
        let alt = GemmPlan { kernel: k, split: splitk::choose_on(arch, cus, p, Some(&k)).ok(), prepass: None };
        if split_only && alt.split.is_none() {
            continue;
        }
        let margin = if alt.split.is_some() { split_margin(&best) } else { 1.0 };
        let t = alt.estimate(p);
        if t < best_t * margin {
            (best, best_t) = (alt, t);
        }
    }
    Ok(Some(best))
}

/// The factor a split's table time must come under `best`'s to replace it: [`SPLIT_MARGIN`]
/// ahead of one launch, and simply ahead of another split, whose table time is composed the
/// same way (a split's chunk, more workgroups than the grids) and as unsure. Held to the margin
/// against a split, gfx950's 128x16 eight-wave decode-rows kernel in 8 splits stayed behind the
/// 64x16 one in 4 on Llama-8B down bf16 at M = 16 (table 17.8 against 18.3 us, 3% ahead), where
/// the timing model gives 17.5 against 18.1.
fn split_margin(best: &GemmPlan) -> f64 {
    if best.split.is_some() {
        1.0
    } else {
        1.0 - SPLIT_MARGIN
    }
}

/// The table's kernel for `p` and the split that beats it by [`SPLIT_MARGIN`] on `cus` CUs: the
/// plan without a pre-pass (what [`plan_gemm`] weighs the pre-pass against; `gemm-lab`'s
/// `prepass_table` example prints both).
pub fn direct(arch: Arch, cus: u32, p: &GemmProblem) -> Result<GemmPlan, String> {
    let kernel = choice::choose(arch, p)?;
    let split = splitk::choose_on(arch, cus, p, Some(&kernel)).ok();
    let plan = GemmPlan { kernel, split, prepass: None };
    // A split the characterisation table does not compose at least [`SPLIT_MARGIN`] faster than
    // the plain kernel is dropped (the table is measured on the whole chip: a partition keeps the
    // static choice).
    let plain = GemmPlan { kernel, split: None, prepass: None };
    Ok(
        if plan.split.is_some()
            && cus == arch.caps().compute_units
            && plan.estimate(p) >= plain.estimate(p) * (1.0 - SPLIT_MARGIN)
        {
            plain
        } else {
            plan
        },
    )
}

/// `plan` (the direct plan of `p`), or the transpose pre-pass and the GEMM after it where the
/// table puts them [`PREPASS_MARGIN`] ahead: only for 1-byte operands whose direct kernel reads
/// both M/N-contiguous (column-major `nt`), on the whole chip (the table's). Either operand may
/// be copied; the faster pair wins (at equal times the smaller copy).
fn with_prepass(arch: Arch, cus: u32, p: &GemmProblem, plan: GemmPlan) -> GemmPlan {
    let e = plan.kernel.entry;
    let both_mn = e.trans_a == Transpose::No && e.trans_b == Transpose::Yes;
    if !both_mn || cus != arch.caps().compute_units || p.a_type.size_bytes() != 1 || p.b_type.size_bytes() != 1 {
        return plan;
    }
    let mut best: Option<(f64, GemmPlan)> = None;
    for op in [Operand::A, Operand::B] {
        let Ok(alt) = prepass_plan(arch, cus, p, op) else { continue };
        let t = alt.estimate(p);
        if best.as_ref().is_none_or(|(bt, _)| t < *bt) {
            best = Some((t, alt));
        }
    }
    match best {
        Some((t, alt)) if t < plan.estimate(p) * (1.0 - PREPASS_MARGIN) => alt,
        _ => plan,
    }
}

/// The plan that copies `operand` of `p` transposed into the workspace and runs the table's
/// direct plan for the problem that leaves ([`TransposePlan::problem`]), whatever the times: for
/// [`plan_gemm`]'s comparison, and for tests that run a pre-pass on shapes the table would not
/// give one.
pub fn prepass_plan(arch: Arch, cus: u32, p: &GemmProblem, operand: Operand) -> Result<GemmPlan, String> {
    let tp = transpose::plan(arch, p, operand)?;
    let inner = direct(arch, cus, &tp.problem)?;
    Ok(GemmPlan { prepass: Some(tp), ..inner })
}

impl GemmPlan {
    /// The plan without its pre-pass: the launches after it, for [`TransposePlan::problem`].
    fn inner(&self) -> GemmPlan {
        GemmPlan { prepass: None, ..*self }
    }

    /// The characterisation table's time for the plan, what the dispatcher ranks it by: its
    /// split's table estimate ([`splitk::table_estimate`], a decode split's own), else the
    /// split's static estimate, else the kernel's composed time; a pre-pass's time
    /// ([`transpose::seconds`]) before that of the problem it leaves.
    pub fn estimate(&self, p: &GemmProblem) -> f64 {
        if let Some(tp) = &self.prepass {
            return tp.seconds() + self.inner().estimate(&tp.problem);
        }
        match &self.split {
            Some(sp) => splitk::table_estimate(sp, p).unwrap_or(sp.estimate_split),
            None => crate::plan::cost_table::TableModel::composed(&self.kernel, p).unwrap_or(f64::INFINITY),
        }
    }

    /// Bytes of device workspace the launches need (0 without a split or a pre-pass): the
    /// pre-pass's copy first, then the split's slabs.
    pub fn workspace_bytes(&self) -> usize {
        self.prepass.as_ref().map_or(0, TransposePlan::workspace_bytes)
            + self.split.as_ref().map_or(0, SplitPlan::workspace_bytes)
    }

    /// The kernels, in launch order.
    pub fn entries(&self) -> Vec<&'static KernelEntry> {
        if let Some(tp) = &self.prepass {
            return std::iter::once(tp.entry).chain(self.inner().entries()).collect();
        }
        match &self.split {
            None => vec![self.kernel.entry],
            Some(sp) => sp.head.iter().map(|h| h.entry).chain([sp.partial, sp.reduce]).collect(),
        }
    }

    /// The launches, in the order they must run on one stream, for A, B, C and the workspace
    /// (ignored without a split or a pre-pass; [`Self::workspace_bytes`] of it, 16-byte aligned)
    /// at these device addresses. With a pre-pass: the copy of the operand into the workspace,
    /// then the GEMM's launches reading the copy in its place, any split's slabs after it.
    pub fn launches(&self, p: &GemmProblem, a: u64, b: u64, c: u64, ws: u64) -> Result<Vec<Launch>, String> {
        if let Some(tp) = &self.prepass {
            let rest = ws + tp.workspace_bytes() as u64;
            let (x, a2, b2) = match tp.operand {
                Operand::A => (a, ws, b),
                _ => (b, a, ws),
            };
            let mut out = vec![tp.launch(x, ws)?];
            out.extend(self.inner().launches(&tp.problem, a2, b2, c, rest)?);
            return Ok(out);
        }
        match &self.split {
            None => Ok(vec![self.kernel.launch(p, a, b, c)?]),
            Some(sp) => sp.launches(p, a, b, c, ws),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::{DType, Layout};

    fn bf16(m: usize, n: usize, k: usize) -> GemmProblem {
        GemmProblem::new(m, n, k).with_layout(Layout::ColMajor).with_dtypes(DType::Bf16, DType::Bf16, DType::F32)
    }

    #[test]
    fn empty_problems_plan_nothing_and_bad_ones_say_why() {
        for arch in Arch::ALL {
            let cus = arch.caps().compute_units;
            assert!(plan_gemm(arch, cus, &bf16(0, 64, 64)).unwrap().is_none());
            assert!(plan_gemm(arch, cus, &bf16(64, 0, 64)).unwrap().is_none());
            let bad = bf16(64, 64, 64).with_leading_dims(1, 64, 64);
            assert!(plan_gemm(arch, cus, &bad).is_err());
        }
    }

    /// Issue 24's bar on gfx942: fp8 e4m3fnuz -> bf16 at 4096^3 and 8192^3, row-major. With
    /// op(A) transposed the column-major kernel would read both operands M/N-contiguous (`nt`),
    /// so the plan copies one operand transposed first and runs NN or TT; the other layouts run
    /// directly. The launches follow the entries, the copy first, the GEMM reading it from the
    /// workspace.
    #[test]
    fn fp8_nt_takes_the_transpose_prepass_on_gfx942() {
        use gemm_core::Transpose::{No, Yes};
        let arch = Arch::Gfx942;
        let cus = arch.caps().compute_units;
        for s in [4096, 8192] {
            for (ta, tb) in [(No, No), (Yes, No), (No, Yes), (Yes, Yes)] {
                let p = GemmProblem::new(s, s, s).with_layout(Layout::RowMajor).with_transposes(ta, tb).with_dtypes(
                    DType::Fp8E4M3Fnuz,
                    DType::Fp8E4M3Fnuz,
                    DType::Bf16,
                );
                let plan = plan_gemm(arch, cus, &p).unwrap().unwrap();
                let nt = (ta, tb) == (Yes, No);
                assert_eq!(plan.prepass.is_some(), nt, "{s}^3 {ta:?}/{tb:?}: {}", plan.kernel.entry.name);
                let Some(tp) = plan.prepass else { continue };
                let e = plan.kernel.entry;
                assert!(!(e.trans_a == No && e.trans_b == Yes), "{}", e.name);
                let direct = direct(arch, cus, &p).unwrap().estimate(&p);
                assert!(plan.estimate(&p) < direct * (1.0 - PREPASS_MARGIN), "{s}^3");
                let ws = 0x8000_0000u64;
                let launches = plan.launches(&p, 0x1000, 0x2000_0000, 0x4000_0000, ws).unwrap();
                let names: Vec<_> = launches.iter().map(|l| l.entry.name).collect();
                assert_eq!(names, plan.entries().iter().map(|e| e.name).collect::<Vec<_>>());
                assert_eq!(launches[0].entry.split_k, gemm_kernels::SplitRole::Transpose);
                // The copy writes the workspace; the GEMM reads it in the copied operand's place.
                assert_eq!(&launches[0].args[8..16], &ws.to_le_bytes());
                assert!(launches[1].args.windows(8).any(|w| w == ws.to_le_bytes()), "{names:?}");
                assert_eq!(tp.workspace_bytes(), (s * s).next_multiple_of(256));
            }
        }
    }

    /// A Linear layer at decode (1 and 8 rows of x against 4096 x 4096 and 1280 x 8192 weights,
    /// bf16) runs a decode kernel (gemm-compiler `lower/decode.rs`), alone or as the partial
    /// kernel of its split, on both archs.
    #[test]
    fn decode_shapes_run_decode_kernels() {
        use gemm_core::Transpose;
        for arch in Arch::ALL {
            let cus = arch.caps().compute_units;
            for (m, n, k) in [(1, 4096, 4096), (8, 4096, 4096), (1, 1280, 8192)] {
                let p = GemmProblem::new(m, n, k)
                    .with_layout(Layout::RowMajor)
                    .with_transposes(Transpose::No, Transpose::Yes)
                    .with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
                let plan = plan_gemm(arch, cus, &p).unwrap().unwrap();
                let e = plan.split.map_or(plan.kernel.entry, |s| s.partial);
                assert!(e.is_decode(), "{arch} {m}x{n}x{k}: {}", e.name);
            }
        }
    }

    /// A decode-rows kernel's split is weighed even where a tiled kernel is the table's pick as
    /// one launch: gfx950 7168 x 8192 e4m3 weights at M = 64 rank the 64x64x128 three-stage tile
    /// first, and the 128x64 decode-rows kernel split over K beats it and its split (issue 23;
    /// the old plan ran the tiled kernel's split, 18.2 us by the timing model against 13.2).
    #[test]
    fn decode_rows_splits_are_weighed_against_a_tiled_pick() {
        use gemm_core::Transpose;
        let arch = Arch::Gfx950;
        let p = GemmProblem::new(64, 7168, 8192)
            .with_layout(Layout::RowMajor)
            .with_transposes(Transpose::No, Transpose::Yes)
            .with_dtypes(DType::Fp8E4M3, DType::Fp8E4M3, DType::Bf16);
        let pick = choice::choose(arch, &p).unwrap();
        assert!(!pick.entry.is_decode(), "the table's one-launch pick is tiled: {}", pick.entry.name);
        let plan = plan_gemm(arch, arch.caps().compute_units, &p).unwrap().unwrap();
        let sp = plan.split.expect("a split");
        assert_eq!(sp.partial.family, "splitk_decode_rows", "{}", sp.partial.name);
        assert!(plan.estimate(&p) < direct(arch, arch.caps().compute_units, &p).unwrap().estimate(&p));
        // On a partition the table's pick stands (the table is measured on the whole chip).
        let part = plan_gemm(arch, 32, &p).unwrap().unwrap();
        assert!(part.split.is_none_or(|s| s.partial.family != "splitk_decode_rows"));
    }

    /// A few tiles over a long K split; a square problem runs one kernel; the launches follow
    /// the plan's entries and the workspace is the split's.
    #[test]
    fn the_plan_carries_its_launches_and_workspace() {
        for arch in Arch::ALL {
            let cus = arch.caps().compute_units;
            let deep = bf16(128, 128, 65536);
            let plan = plan_gemm(arch, cus, &deep).unwrap().unwrap();
            let sp = plan.split.expect("128x128x65536 splits K");
            assert_eq!(plan.workspace_bytes(), sp.workspace_bytes());
            let launches = plan.launches(&deep, 0x1000, 0x2000_0000, 0x4000_0000, 0x8000_0000).unwrap();
            let names: Vec<_> = launches.iter().map(|l| l.entry.name).collect();
            assert_eq!(names, plan.entries().iter().map(|e| e.name).collect::<Vec<_>>());
            assert!(names.last().unwrap().contains("splitk_reduce"), "{names:?}");

            let square = bf16(1024, 1024, 1024);
            let plan = plan_gemm(arch, cus, &square).unwrap().unwrap();
            assert!(plan.split.is_none());
            assert_eq!(plan.workspace_bytes(), 0);
            let launches = plan.launches(&square, 0x1000, 0x2000, 0x3000, 0).unwrap();
            assert_eq!(launches.len(), 1);
            assert_eq!(launches[0].entry.name, plan.kernel.entry.name);
            assert_eq!(launches[0].grid, plan.kernel.grid);
        }
    }
}
