//! Which catalogue kernel runs a problem, and why: every candidate of the architecture with its
//! predicted time or the reason it cannot run, and the pick (`gemm plan` prints this).
//!
//! [`kernel_plan`](crate::plan::kernel_plan) says whether one kernel *can* run a problem and packs its arguments; this
//! module ranks the kernels that can by a [`CostModel`] and remembers the pick per
//! (arch, problem class) ([`choose`]), so the HIP dispatcher and `gemm plan` make the same choice
//! from the same numbers.
//!
//! The cost source is pluggable. The dispatcher ranks by [`TableModel`]: the timing model
//! (`gemm_emu::timing`) characterised ahead of time per kernel
//! ([`crate::plan::cost_table`], `gemm plan --characterise`) and composed per problem in
//! microseconds, so a library call never runs the model (the lab's `TimingModel` runs the
//! model itself on each candidate: `gemm plan --model timing`, seconds per problem, what the
//! table is checked against). [`StaticEstimate`] (a roofline of the architecture's published peaks,
//! `/work/shared/reference/ARCH.md`, carried by [`gemm_core::ArchCaps`], and the kernel's own
//! manifest figures) is the fallback for a kernel the table does not hold (added or changed since
//! it was written): such a kernel is ranked after every characterised one, since a roofline is
//! not comparable with the model's predictions. Each explanation names its source and every
//! fallback's reason.

use crate::plan::kernel_plan::{self, KernelPlan};
use gemm_core::{Arch, GemmProblem, Operand};
use gemm_kernels::KernelEntry;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::OnceLock;

/// A source of predicted kernel times.
pub trait CostModel: Send + Sync {
    /// What the predictions come from, printed with every explanation.
    fn name(&self) -> &str;
    /// Predicted seconds for `plan` (a kernel that can run `p`) on its architecture.
    fn predict(&self, plan: &KernelPlan, p: &GemmProblem) -> f64;
    /// The prediction with how it was made: `fallback` is why this model had to use another
    /// source for this kernel (ranked after every kernel it predicted itself).
    fn estimate(&self, plan: &KernelPlan, p: &GemmProblem) -> Estimate {
        Estimate { seconds: self.predict(plan, p), fallback: None }
    }
}

/// A predicted time and, when the model fell back to another source, why.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub seconds: f64,
    pub fallback: Option<String>,
}

/// The static estimate: the fallback for a kernel the characterisation table does not hold.
///
/// Compute: the launch's workgroups run in rounds of one workgroup per CU (`ceil(tiles / CUs)`
/// rounds); a round takes a tile's `2 * TM * TN * K` flops at the CU's share of the MFMA ceiling
/// (the peak matrix rate at the loaded clock, [`gemm_core::Arch::mfma_ceiling_tflops`]), divided by the kernel's MFMA issue share (its
/// manifest's `mfma_issue_share_permille`: the fraction of issue cycles that are MFMAs).
/// Memory: A, B and C (twice if read) at the HBM bandwidth (ARCH.md "Memory system"). The
/// prediction is the larger of the two: a roofline, no overlap modelled, no cache, no launch
/// cost. It ranks tiles by padding waste and CU occupancy; absolute numbers are optimistic.
#[derive(Clone, Copy, Debug, Default)]
pub struct StaticEstimate;

impl CostModel for StaticEstimate {
    fn name(&self) -> &str {
        "static estimate (roofline of ARCH.md peaks and the kernel manifest)"
    }

    fn predict(&self, plan: &KernelPlan, p: &GemmProblem) -> f64 {
        let e = plan.entry;
        let caps = e.arch.caps();
        let tiles = u64::from(plan.grid[0]) * u64::from(plan.grid[1]) * u64::from(plan.grid[2]);
        let rounds = tiles.div_ceil(u64::from(caps.compute_units.max(1))) as f64;
        let per_cu = e.arch.mfma_ceiling_tflops(e.a_type, e.xf32()) * 1e12 / f64::from(caps.compute_units.max(1));
        let share = (f64::from(e.mfma_issue_share_permille) / 1000.0).clamp(0.05, 1.0);
        let tile_flops = 2.0 * f64::from(e.tile.0) * f64::from(e.tile.1) * p.k.max(1) as f64;
        let compute = rounds * tile_flops / per_cu / share;
        let bytes = p.validate().map_or(0.0, |s| {
            let c_passes = if p.beta != 0.0 { 2.0 } else { 1.0 };
            (s.a * p.dtype(Operand::A).size_bytes() + s.b * p.dtype(Operand::B).size_bytes()) as f64
                + c_passes * (s.c * p.dtype(Operand::C).size_bytes()) as f64
        });
        let memory = bytes / (caps.hbm_tbps * 1e12);
        compute.max(memory).max(crate::plan::bounds::floor(e.arch, p, e.xf32()).seconds())
    }
}

pub use crate::plan::cost_table::TableModel;

impl CostModel for TableModel {
    fn name(&self) -> &str {
        "timing model via the characterisation table (gemm_dispatch::plan::cost_table: per-kernel predictions composed per problem)"
    }

    fn predict(&self, plan: &KernelPlan, p: &GemmProblem) -> f64 {
        self.estimate(plan, p).seconds
    }

    fn estimate(&self, plan: &KernelPlan, p: &GemmProblem) -> Estimate {
        match TableModel::composed(plan, p) {
            Ok(seconds) => Estimate { seconds, fallback: None },
            Err(why) => Estimate {
                seconds: StaticEstimate.predict(plan, p),
                fallback: Some(format!("static estimate: {why} (regenerate: {})", crate::plan::cost_table::REGENERATE)),
            },
        }
    }
}

/// One catalogue kernel considered for a problem.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub kernel: &'static str,
    /// `Ok(seconds)` predicted, or why the kernel cannot run the problem.
    pub verdict: Result<f64, String>,
    /// Why the cost model used a fallback source for this kernel's time.
    pub fallback: Option<String>,
}

/// Every candidate of an architecture for one problem, and the pick.
#[derive(Clone, Debug)]
pub struct Explanation {
    pub arch: Arch,
    pub model: String,
    pub candidates: Vec<Candidate>,
    /// The kernel chosen (least predicted time among the kernels the model predicted itself,
    /// then among fallbacks; ties go to the smaller padded area, then the larger tile), or why
    /// none can run.
    pub pick: Result<&'static str, String>,
}

fn padded_area(plan: &KernelPlan) -> u64 {
    let (tm, tn) = (plan.entry.tile.0, plan.entry.tile.1);
    u64::from(plan.problem.m.div_ceil(tm) * tm) * u64::from(plan.problem.n.div_ceil(tn) * tn)
}

/// Ranks the kernels of `arch` for `p` with `model`.
pub fn explain(arch: Arch, p: &GemmProblem, model: &dyn CostModel) -> Explanation {
    let mut candidates = Vec::new();
    // (plan, fell back, seconds)
    let mut best: Option<(KernelPlan, bool, f64)> = None;
    let mut why_none = format!("the catalogue has no kernel for {arch}");
    let cm = kernel_plan::column_major(p).ok();
    // The transposes, in the problem's own terms, of every kernel that computes its dtypes: what
    // a refusal names when only the form is missing.
    let mut forms = std::collections::BTreeSet::new();
    let mut form_fits = false;
    for e in gemm_kernels::for_arch(arch) {
        // The kernel's own configuration first, in its terms (kernel_plan's reasons speak of
        // the problem).
        if let Some(cm) = &cm {
            let (a_t, b_t) = if cm.swap_ab { (p.b_type, p.a_type) } else { (p.a_type, p.b_type) };
            let dtypes_match = (e.a_type, e.b_type, e.c_type) == (a_t, b_t, p.c_type);
            if dtypes_match && (!e.xf32() || p.allow_xf32) {
                forms.insert(problem_form(cm.swap_ab, e.trans_a, e.trans_b));
                form_fits |= (e.trans_a, e.trans_b) == (cm.trans_a, cm.trans_b);
            }
            let why = if !dtypes_match {
                Some(format!("computes {} x {} -> {}", e.a_type, e.b_type, e.c_type))
            } else if (e.trans_a, e.trans_b) != (cm.trans_a, cm.trans_b) {
                let t = |x: gemm_core::Transpose| if x.is_yes() { 'T' } else { 'N' };
                Some(format!(
                    "reads {}{} operands, the problem needs {}{} (column-major form)",
                    t(e.trans_a),
                    t(e.trans_b),
                    t(cm.trans_a),
                    t(cm.trans_b)
                ))
            } else {
                None
            };
            if let Some(why) = why {
                candidates.push(Candidate { kernel: e.name, verdict: Err(why), fallback: None });
                continue;
            }
        }
        match kernel_plan::plan_for(e, p) {
            Ok(plan) => {
                let Estimate { seconds: t, fallback } = model.estimate(&plan, p);
                let fb = fallback.is_some();
                let better = match &best {
                    None => true,
                    Some((b, bfb, bt)) => {
                        (fb, t) < (*bfb, *bt)
                            || (fb == *bfb
                                && t == *bt
                                && (padded_area(&plan), std::cmp::Reverse(e.tile.0 * e.tile.1))
                                    < (padded_area(b), std::cmp::Reverse(b.entry.tile.0 * b.entry.tile.1)))
                    }
                };
                if better {
                    best = Some((plan, fb, t));
                }
                candidates.push(Candidate { kernel: e.name, verdict: Ok(t), fallback });
            }
            Err(why) => {
                why_none.clone_from(&why);
                candidates.push(Candidate { kernel: e.name, verdict: Err(why), fallback: None });
            }
        }
    }
    let pick = match (&best, p.validate()) {
        (_, Err(e)) => Err(e.to_string()),
        (Some((plan, _, _)), _) => Ok(plan.entry.name),
        (None, _) if p.m == 0 || p.n == 0 => Err("empty problems launch nothing".into()),
        (None, _) if candidates.iter().all(|c| c.verdict.as_ref().is_err_and(|w| w.starts_with("computes"))) => {
            Err(format!("no {arch} kernel computes {} x {} -> {}", p.a_type, p.b_type, p.c_type))
        }
        (None, _) if !form_fits && !forms.is_empty() => {
            let want = cm.map_or_else(String::new, |cm| problem_form(cm.swap_ab, cm.trans_a, cm.trans_b));
            let have: Vec<String> = forms.into_iter().collect();
            Err(format!(
                "no {arch} kernel computes {} x {} -> {} with the transposes {want}; \
                 the forms that exist for these dtypes: {}",
                p.a_type,
                p.b_type,
                p.c_type,
                have.join(", ")
            ))
        }
        (None, _) => Err(why_none),
    };
    Explanation { arch, model: model.name().to_string(), candidates, pick }
}

/// A kernel's column-major transposes in the terms of the caller's problem: `(transa, transb)`
/// as `N`/`T` of op(A) and op(B); a row-major problem runs as `C^T = op(B)^T op(A)^T`, so the
/// kernel's A is the problem's B ([`kernel_plan::column_major`]).
fn problem_form(swap_ab: bool, ka: gemm_core::Transpose, kb: gemm_core::Transpose) -> String {
    let t = |x: gemm_core::Transpose| if x.is_yes() { 'T' } else { 'N' };
    let (a, b) = if swap_ab { (kb, ka) } else { (ka, kb) };
    format!("transa={} transb={}", t(a), t(b))
}

/// The problem class a choice is remembered for: architecture, dtypes (and whether f32 inputs
/// may be multiplied at xf32 precision), the column-major transposes, the A/B leading-dimension
/// alignment (largest power of two up to 16 dividing both) and the exact m, n and k.
///
/// Exact sizes, not power-of-two buckets (as until session 28): a bucket shares one choice
/// between problems the table ranks differently, so the kernel a shape got depended on which
/// shape of its bucket came first. The decode table showed it: Llama-3.1-8B's o projection at
/// M = 256 (`4096 x 256 x 4096` column-major) shares a bucket with qkv (`6144 x 256 x 4096`) and
/// ran qkv's 64x64x64 kernel, 37.8 us by the timing model, where its own pick runs 26.3. Serving
/// repeats exact shapes (each layer, each batch size), which is what hits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProblemClass {
    pub arch: Arch,
    pub dtypes: [gemm_core::DType; 3],
    pub allow_xf32: bool,
    pub trans: [bool; 2],
    pub align: u32,
    pub dims: [u32; 3],
}

impl ProblemClass {
    /// The class of a problem whose column-major form fits the kernels' 32-bit arguments.
    pub fn of(arch: Arch, p: &GemmProblem) -> Option<Self> {
        let cm = kernel_plan::column_major(p).ok()?;
        let align = [16u32, 8, 4, 2, 1].into_iter().find(|a| cm.lda % a == 0 && cm.ldb % a == 0).unwrap_or(1);
        Some(Self {
            arch,
            dtypes: [p.a_type, p.b_type, p.c_type],
            allow_xf32: p.allow_xf32 && p.a_type == gemm_core::DType::F32,
            trans: [cm.trans_a.is_yes(), cm.trans_b.is_yes()],
            align,
            dims: [cm.m, cm.n, cm.k],
        })
    }
}

fn cache() -> &'static Mutex<HashMap<ProblemClass, &'static KernelEntry>> {
    static CACHE: OnceLock<Mutex<HashMap<ProblemClass, &'static KernelEntry>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The kernel the dispatcher runs for `p` on `arch`: the [`explain`] pick under
/// [`TableModel`] (the timing model's characterisation), remembered per [`ProblemClass`]. A remembered kernel is re-checked
/// against the exact problem ([`kernel_plan::plan_for`]) and the choice is redone when it does
/// not fit (a span over 2 GiB inside the bucket, say). `Err` says why no kernel can run `p`.
pub fn choose(arch: Arch, p: &GemmProblem) -> Result<KernelPlan, String> {
    // Dtypes first: the costs below size operands in bytes, which fp6/fp4 have none of.
    gemm_core::problem::check_dtypes(p.a_type, p.b_type, p.c_type).map_err(|e| e.to_string())?;
    let class = ProblemClass::of(arch, p);
    if let Some(class) = &class {
        let hit = cache().lock().get(class).copied();
        if let Some(plan) = hit.and_then(|e| kernel_plan::plan_for(e, p).ok()) {
            return Ok(plan);
        }
    }
    let explained = explain(arch, p, &TableModel);
    let name = explained.pick?;
    let entry = gemm_kernels::for_arch(arch).find(|e| e.name == name).ok_or_else(|| format!("{name} vanished"))?;
    let plan = kernel_plan::plan_for(entry, p)?;
    if let Some(class) = class {
        let mut cache = cache().lock();
        // Exact shapes: a caller sweeping sizes would grow the map without bound; forgetting
        // every choice now and then costs a re-ranking per shape.
        if cache.len() >= CACHE_CAPACITY {
            cache.clear();
        }
        cache.insert(class, entry);
    }
    Ok(plan)
}

/// Problem classes remembered at most ([`choose`]).
const CACHE_CAPACITY: usize = 4096;

/// The kernel [`choose`] would run for `p` if the catalogue had no decode kernels (gemm-compiler
/// `lower/decode.rs`): `plan_gemm` weighs its split against the decode kernel's plan, since a
/// decode kernel is ranked as a plain kernel and a tiled kernel split over K can be faster
/// where the weights are wide for a decode kernel (M = 32..128 rows of activations).
pub fn choose_tiled(arch: Arch, p: &GemmProblem) -> Result<KernelPlan, String> {
    tiled_of(arch, p, &explain(arch, p, &TableModel))
}

/// [`choose_tiled`] from an explanation already made.
fn tiled_of(arch: Arch, p: &GemmProblem, ex: &Explanation) -> Result<KernelPlan, String> {
    let best = ex
        .candidates
        .iter()
        .filter(|c| gemm_kernels::for_arch(arch).any(|e| e.name == c.kernel && !e.is_decode()))
        .filter_map(|c| c.verdict.as_ref().ok().map(|t| (c.fallback.is_some(), *t, c.kernel)))
        .min_by(|a, b| (a.0, a.1).partial_cmp(&(b.0, b.1)).unwrap_or(std::cmp::Ordering::Equal))
        .ok_or_else(|| "no tiled kernel runs the problem".to_string())?;
    let entry =
        gemm_kernels::for_arch(arch).find(|e| e.name == best.2).ok_or_else(|| format!("{} vanished", best.2))?;
    kernel_plan::plan_for(entry, p)
}

/// [`choose_tiled`]'s kernel and every decode kernel that runs `p` with a time from the table
/// (no fallback), fastest first, from one explanation: `plan_gemm` weighs the tiled kernel's
/// split and each decode kernel's split-K twin against the decode kernel [`choose`] ranks first
/// as one launch. The fastest single launch is not always the fastest split: a decode-rows
/// kernel's 128-row workgroups leave most CUs idle on a layer of 4096 weight rows (32
/// workgroups), so it ranks below the 32-row decode kernels as one launch, but split over K it
/// streams the weights without loading the activations in every wave (`lower/decode_rows.rs`).
pub fn tiled_and_decode(arch: Arch, p: &GemmProblem) -> (Result<KernelPlan, String>, Vec<KernelPlan>) {
    let ex = explain(arch, p, &TableModel);
    let mut decode: Vec<(f64, KernelPlan)> = ex
        .candidates
        .iter()
        .filter(|c| c.fallback.is_none())
        .filter_map(|c| {
            let t = *c.verdict.as_ref().ok()?;
            let e = gemm_kernels::for_arch(arch).find(|e| e.name == c.kernel && e.is_decode())?;
            Some((t, kernel_plan::plan_for(e, p).ok()?))
        })
        .collect();
    decode.sort_by(|a, b| a.0.total_cmp(&b.0));
    (tiled_of(arch, p, &ex), decode.into_iter().map(|(_, k)| k).collect())
}

/// How many problem classes have a remembered choice (for tests and `gemm plan`).
pub fn cached_classes() -> usize {
    cache().lock().len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::{DType, Layout, Transpose};

    fn bf16(m: usize, n: usize, k: usize) -> GemmProblem {
        GemmProblem::new(m, n, k).with_dtypes(DType::Bf16, DType::Bf16, DType::F32)
    }

    #[test]
    fn every_kernel_is_a_candidate_with_a_time_or_a_reason() {
        for arch in Arch::ALL {
            let p = bf16(4096, 4096, 4096);
            let x = explain(arch, &p, &StaticEstimate);
            assert_eq!(x.candidates.len(), gemm_kernels::for_arch(arch).count());
            assert!(x.candidates.iter().any(|c| c.verdict.is_ok()), "{x:?}");
            let pick = x.pick.clone().unwrap();
            let best = x
                .candidates
                .iter()
                .filter_map(|c| c.verdict.as_ref().ok().map(|t| (*t, c.kernel)))
                .fold(f64::INFINITY, |m, (t, _)| m.min(t));
            let picked = x.candidates.iter().find(|c| c.kernel == pick).unwrap();
            assert_eq!(*picked.verdict.as_ref().unwrap(), best);
            for c in &x.candidates {
                if let Err(why) = &c.verdict {
                    assert!(!why.is_empty());
                }
            }
        }
    }

    #[test]
    fn the_estimate_grows_with_work_and_prefers_the_faster_arch() {
        let small = bf16(256, 256, 256);
        let big = bf16(8192, 8192, 8192);
        for arch in Arch::ALL {
            let plan = choose(arch, &big).unwrap();
            let t_big = StaticEstimate.predict(&plan, &big);
            let plan_s = choose(arch, &small).unwrap();
            assert!(StaticEstimate.predict(&plan_s, &small) < t_big);
            // Never faster than the published peak.
            assert!(t_big >= big.flops() / (arch.peak_tflops(DType::Bf16) * 1e12));
        }
    }

    #[test]
    fn the_dispatcher_choice_is_the_explained_pick_and_is_cached() {
        let p = bf16(1000, 24, 512).with_layout(Layout::ColMajor).with_transposes(Transpose::No, Transpose::No);
        for arch in Arch::ALL {
            let chosen = choose(arch, &p).unwrap();
            assert_eq!(Ok(chosen.entry.name), explain(arch, &p, &TableModel).pick);
            assert!(cached_classes() >= 1);
            // The same shape with other leading dimensions of the same alignment is the same class.
            let q = bf16(1000, 24, 512).with_layout(Layout::ColMajor).with_leading_dims(1008, 520, 1001);
            assert_eq!(ProblemClass::of(arch, &p), ProblemClass::of(arch, &q));
            assert_eq!(choose(arch, &q).unwrap().entry.name, chosen.entry.name);
            // A neighbouring shape is not.
            let r = bf16(1001, 25, 513).with_layout(Layout::ColMajor);
            assert_ne!(ProblemClass::of(arch, &p), ProblemClass::of(arch, &r));
        }
    }

    /// A shape's kernel does not depend on the shapes chosen before it: Llama-3.1-8B's qkv and o
    /// projections at M = 256 (`x W^T`, row-major) once shared a power-of-two bucket, and o ran
    /// whatever qkv had been given.
    #[test]
    fn a_choice_does_not_depend_on_earlier_shapes() {
        let linear = |n: usize| {
            GemmProblem::new(256, n, 4096)
                .with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16)
                .with_transposes(Transpose::No, Transpose::Yes)
        };
        for arch in Arch::ALL {
            let (qkv, o) = (linear(6144), linear(4096));
            choose(arch, &qkv).unwrap();
            let after = choose(arch, &o).unwrap().entry.name;
            assert_eq!(Ok(after), explain(arch, &o, &TableModel).pick, "{arch}");
        }
    }

    /// f32 problems run f32 kernels; gfx942's xf32 kernels (4x the f32 MFMA rate) only when the
    /// problem allows them, whatever was remembered for the other permission.
    #[test]
    fn f32_choices_take_xf32_kernels_only_when_allowed() {
        let p = GemmProblem::new(1024, 1024, 1024).with_layout(Layout::ColMajor);
        for arch in Arch::ALL {
            let exact = choose(arch, &p).unwrap();
            assert_eq!(exact.entry.a_type, DType::F32, "{}", exact.entry.name);
            assert!(!exact.entry.xf32(), "{}", exact.entry.name);
            let fast = choose(arch, &p.with_xf32(true)).unwrap();
            assert_eq!(fast.entry.xf32(), arch == Arch::Gfx942, "{}", fast.entry.name);
            assert!(!choose(arch, &p).unwrap().entry.xf32());
        }
    }

    #[test]
    fn problems_no_kernel_runs_say_why() {
        // OCP fp8 is gfx950's flavour: gfx942 has no kernel for it.
        let ocp = GemmProblem::new(64, 64, 64).with_dtypes(DType::Fp8E4M3, DType::Fp8E4M3, DType::F32);
        let x = explain(Arch::Gfx942, &ocp, &TableModel);
        assert!(x.pick.as_ref().unwrap_err().contains("no gfx942 kernel computes"), "{:?}", x.pick);
        assert!(x.candidates.iter().all(|c| c.verdict.is_err()));
        assert!(choose(Arch::Gfx942, &bf16(0, 8, 8)).is_err());
    }

    /// A dtype the arch has in other transposes only: the refusal names the forms that exist,
    /// in the problem's terms (issue 27: it used to say "the catalogue has no kernel").
    #[test]
    fn a_missing_form_is_named_with_the_forms_that_exist() {
        use gemm_core::Transpose;
        for (arch, dt, out) in
            [(Arch::Gfx942, DType::Fp8E5M2Fnuz, DType::F32), (Arch::Gfx950, DType::Fp8E5M2, DType::Bf16)]
        {
            let row_nn = GemmProblem::new(64, 64, 64).with_dtypes(dt, dt, out);
            let x = explain(arch, &row_nn, &TableModel);
            let why = x.pick.unwrap_err();
            assert!(why.contains("with the transposes transa=N transb=N"), "{arch}: {why}");
            assert!(why.contains("the forms that exist for these dtypes: "), "{arch}: {why}");
            assert!(!why.contains("the catalogue has no kernel"), "{arch}: {why}");
            // Every form it names runs.
            let forms = why.rsplit(": ").next().unwrap();
            for f in forms.split(", ") {
                let ta = Transpose::from_bool(f.contains("transa=T"));
                let tb = Transpose::from_bool(f.contains("transb=T"));
                let q = row_nn.with_transposes(ta, tb);
                assert!(explain(arch, &q, &TableModel).pick.is_ok(), "{arch} {f} was named but does not run");
            }
        }
    }
}
