//! Predicted speed of catalogue kernels: the emulator's timing model (`gemm_emu::timing`)
//! run on a kernel plan, so the dispatcher (and `gemm kernels --model`) can rank
//! candidate kernels for a problem without a GPU.
//!
//! The operands live in an emulated device's memory, zero-filled (the model runs the
//! kernel timing-only: addresses and branches of a GEMM do not depend on the values, and
//! the model has no data-dependent clock), and are freed afterwards.

use gemm_core::{Arch, GemmProblem, Layout};
use gemm_dispatch::plan::kernel_plan::{self, KernelPlan};
use gemm_emu::timing::{Model, ModelOptions, Prediction, Workload};
use gemm_emu::Device;
use gemm_kernels::KernelEntry;

/// Predicts one plan's time for `p` on the plan's arch.
pub fn predict_plan(plan: &KernelPlan, p: &GemmProblem, opts: &ModelOptions) -> Result<Prediction, String> {
    let spans = p.validate().map_err(|e| e.to_string())?;
    let dev = Device::new(plan.entry.arch);
    let bytes = |elems: usize, d: gemm_core::DType| ((elems * d.size_bytes()) as u64).next_multiple_of(16).max(16);
    let mut ptrs = Vec::new();
    for (n, d) in [(spans.a, p.a_type), (spans.b, p.b_type), (spans.c, p.c_type)] {
        ptrs.push(dev.alloc(bytes(n, d)).map_err(|e| e.to_string())?);
    }
    let args = plan.kernargs(p, ptrs[0], ptrs[1], ptrs[2])?;
    let w = Workload {
        code_object: plan.entry.code_object,
        kernel: plan.entry.name,
        grid: plan.grid,
        block: plan.block,
        kernarg: &args,
        dynamic_lds: 0,
        flops: p.flops(),
    };
    Model::new(plan.entry.arch).predict(dev.memory(), &w, opts).map_err(|e| e.to_string())
}

/// The timing model's prediction of every launch of a dispatcher plan
/// ([`gemm_dispatch::plan::gemm_plan::plan_gemm`]) in launch order: its one kernel, or a split's
/// launches (the head, the partial kernel and the reduction). What the runtime launches, so a
/// speed claim takes its figure from here and not from one kernel alone.
pub fn predict_gemm_launches(
    plan: &gemm_dispatch::plan::gemm_plan::GemmPlan,
    p: &GemmProblem,
    opts: &ModelOptions,
) -> Result<Vec<Prediction>, String> {
    if plan.prepass.is_some() {
        return predict_launches(plan, p, opts);
    }
    match &plan.split {
        None => predict_plan(&plan.kernel, p, opts).map(|x| vec![x]),
        Some(sp) => crate::split_eval::predict_split(sp, p, opts),
    }
}

/// Every launch of `plan` ([`gemm_dispatch::plan::gemm_plan::GemmPlan::launches`]) on one
/// emulated device's zero-filled memory, one after the other, its workspace included: a plan
/// with the transpose pre-pass. The GEMM's launches are credited with the problem's flops (a
/// split's partial kernel and reduction share them as [`crate::split_eval::predict_split`]
/// does not here: the plan's TFLOP/s is `p.flops()` over the summed seconds either way).
fn predict_launches(
    plan: &gemm_dispatch::plan::gemm_plan::GemmPlan,
    p: &GemmProblem,
    opts: &ModelOptions,
) -> Result<Vec<Prediction>, String> {
    let spans = p.validate().map_err(|e| e.to_string())?;
    let dev = Device::new(plan.kernel.entry.arch);
    let bytes = |elems: usize, d: gemm_core::DType| ((elems * d.size_bytes()) as u64).next_multiple_of(16).max(16);
    let mut ptrs = Vec::new();
    for (n, d) in [(spans.a, p.a_type), (spans.b, p.b_type), (spans.c, p.c_type)] {
        ptrs.push(dev.alloc(bytes(n, d)).map_err(|e| e.to_string())?);
    }
    let ws = dev.alloc((plan.workspace_bytes() as u64).max(16)).map_err(|e| e.to_string())?;
    let launches = plan.launches(p, ptrs[0], ptrs[1], ptrs[2], ws)?;
    let model = Model::new(plan.kernel.entry.arch);
    let mut out = Vec::with_capacity(launches.len());
    for l in &launches {
        let flops = if l.entry.split_k == gemm_kernels::SplitRole::Transpose { 0.0 } else { p.flops() };
        let w = launch_workload(l, flops);
        out.push(model.predict(dev.memory(), &w, opts).map_err(|e| e.to_string())?);
    }
    Ok(out)
}

/// The timing model's workload for one launch of a plan (`GemmPlan::launches`, a split's or a
/// block-scaled plan's), credited with `flops` (0 for launches that compute no products).
pub fn launch_workload(l: &gemm_dispatch::plan::kernel_plan::Launch, flops: f64) -> Workload<'_> {
    Workload {
        code_object: l.entry.code_object,
        kernel: l.entry.name,
        grid: l.grid,
        block: l.block,
        kernarg: &l.args,
        dynamic_lds: 0,
        flops,
    }
}

/// Predicts one grouped launch of the problems `ps` on `arch` ([`gemm_dispatch::plan::grouped::plan`]): every
/// group's operands zero-filled in an emulated device's memory, the problem table packed for
/// their addresses and placed there too, the grid of every group's tiles. `Err` says why the
/// problems cannot share one launch, or why the model failed.
pub fn predict_grouped(
    arch: Arch,
    ps: &[GemmProblem],
    opts: &ModelOptions,
) -> Result<(&'static KernelEntry, Prediction), String> {
    let dev = Device::new(arch);
    let bytes = |elems: usize, d: gemm_core::DType| ((elems * d.size_bytes()) as u64).next_multiple_of(16).max(16);
    let mut items = Vec::with_capacity(ps.len());
    for p in ps {
        let s = p.validate().map_err(|e| e.to_string())?;
        let mut addr = [0u64; 3];
        for (slot, (n, d)) in addr.iter_mut().zip([(s.a, p.a_type), (s.b, p.b_type), (s.c, p.c_type)]) {
            *slot = dev.alloc(bytes(n, d)).map_err(|e| e.to_string())?;
        }
        items.push((*p, addr));
    }
    let ranked = gemm_dispatch::plan::grouped::ranked(arch, &items)?;
    if std::env::var_os("GEMM_GROUPED_RANKS").is_some() {
        for g in &ranked {
            eprintln!("    {}: table estimate {:?} us", g.entry.name, g.estimate().map(|t| t * 1e6));
        }
    }
    let plan = &ranked[0];
    let table = plan.table();
    let at = dev.alloc((table.len() as u64).next_multiple_of(16)).map_err(|e| e.to_string())?;
    dev.copy_in(at, &table).map_err(|e| e.to_string())?;
    let args = plan.kernargs(at)?;
    let (grid, block) = plan.launch();
    let w = Workload {
        code_object: plan.entry.code_object,
        kernel: plan.entry.name,
        grid,
        block,
        kernarg: &args,
        dynamic_lds: 0,
        flops: ps.iter().map(GemmProblem::flops).sum(),
    };
    let pred = Model::new(arch).predict(dev.memory(), &w, opts).map_err(|e| e.to_string())?;
    Ok((plan.entry, pred))
}

/// The column-major problem of `m x n x k` in `e`'s dtypes and transposes, with leading
/// dimensions padded to the kernel's alignment (and xf32 allowed for an xf32 kernel).
pub fn problem_for(e: &KernelEntry, m: usize, n: usize, k: usize) -> GemmProblem {
    let p = GemmProblem::new(m, n, k)
        .with_layout(Layout::ColMajor)
        .with_transposes(e.trans_a, e.trans_b)
        .with_dtypes(e.a_type, e.b_type, e.c_type)
        .with_xf32(e.xf32());
    let ld = |x: usize| x.next_multiple_of(e.align_elems.max(1) as usize);
    p.with_leading_dims(ld(p.lda), ld(p.ldb), p.ldc)
}

/// One catalogue kernel's prediction (or why it has none).
pub struct CatalogueRow {
    pub entry: &'static KernelEntry,
    pub prediction: Result<Prediction, String>,
    pub wall: std::time::Duration,
}

/// Predictions for every catalogue kernel of `arch` (all archs if `None`) whose name
/// contains `only` (all if `None`) at `m x n x k`.
pub fn catalogue(
    arch: Option<Arch>,
    only: Option<&str>,
    m: usize,
    n: usize,
    k: usize,
    opts: &ModelOptions,
) -> Vec<CatalogueRow> {
    catalogue_on(arch, only, (m, n, k), opts, 1, &|_, _, _| {})
}

/// [`catalogue`] on `jobs` threads, calling `progress(done, total, row)` as each kernel's
/// prediction finishes (rows come back in catalogue order whatever the thread count).
pub fn catalogue_on(
    arch: Option<Arch>,
    only: Option<&str>,
    (m, n, k): (usize, usize, usize),
    opts: &ModelOptions,
    jobs: usize,
    progress: &(dyn Fn(usize, usize, &CatalogueRow) + Sync),
) -> Vec<CatalogueRow> {
    let entries: Vec<&'static KernelEntry> = gemm_kernels::catalogue()
        .iter()
        .filter(|e| arch.is_none_or(|a| e.arch == a) && only.is_none_or(|s| e.name.contains(s)))
        .collect();
    let done = std::sync::atomic::AtomicUsize::new(0);
    crate::jobs::map_jobs(&entries, jobs, |&e| {
        let t0 = std::time::Instant::now();
        let p = problem_for(e, m, n, k);
        let prediction = kernel_plan::plan_for(e, &p).and_then(|plan| predict_plan(&plan, &p, opts));
        let row = CatalogueRow { entry: e, prediction, wall: t0.elapsed() };
        progress(done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1, entries.len(), &row);
        row
    })
}

/// The table `gemm kernels --model` prints.
pub fn catalogue_report(rows: &[CatalogueRow], m: usize, n: usize, k: usize) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "predicted by the timing model (gemm_emu::timing) for {m}x{n}x{k}, column-major:");
    let _ = writeln!(
        s,
        "{:<58} {:<7} {:<12} {:>10} {:>10} {:>7}  {:<8} binding limit",
        "kernel", "arch", "tile", "TFLOP/s", "@peak clk", "% peak", "wall"
    );
    for r in rows {
        let e = r.entry;
        let tile = format!("{}x{}x{}", e.tile.0, e.tile.1, e.tile.2);
        match &r.prediction {
            Ok(p) => {
                let peak = p.at_peak.map(|x| format!("{:.1}", x.2)).unwrap_or_else(|| "=".into());
                let _ = writeln!(
                    s,
                    "{:<58} {:<7} {:<12} {:>10.1} {:>10} {:>6.1}%  {:<8} {}",
                    e.name,
                    e.arch,
                    tile,
                    p.tflops,
                    peak,
                    p.pct_of_peak,
                    format!("{:.1}s", r.wall.as_secs_f64()),
                    p.limiter
                );
            }
            Err(why) => {
                let _ = writeln!(s, "{:<58} {:<7} {:<12} no prediction: {why}", e.name, e.arch, tile);
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick() -> ModelOptions {
        ModelOptions { at_peak_clock: false, prefix_bytes: 16 << 10, ..Default::default() }
    }

    #[test]
    fn every_catalogue_kernel_gets_a_prediction_below_its_peak() {
        for arch in [Arch::Gfx942, Arch::Gfx950] {
            let rows = catalogue(Some(arch), Some("_nn_"), 256, 256, 64, &quick());
            assert!(!rows.is_empty());
            // Fused-epilogue kernels need a bias operand and grouped kernels a problem table
            // (`gemm_dispatch::plan::grouped`): plain GEMMs plan only onto the others.
            for r in rows.iter().filter(|r| r.entry.is_plain()) {
                let p = r.prediction.as_ref().unwrap_or_else(|e| panic!("{}: {e}", r.entry.name));
                assert!(p.tflops > 0.0 && p.tflops < p.peak_tflops, "{}: {p}", r.entry.name);
            }
        }
    }

    #[test]
    fn more_workgroups_use_more_of_the_chip() {
        // 2x2 workgroups leave 300 of 304 CUs idle; 16x16 keep 256 busy.
        let e = gemm_kernels::for_arch(Arch::Gfx942).find(|e| e.name.contains("_nn_")).expect("a gfx942 kernel");
        let tf = |s: usize| {
            let p = problem_for(e, s, s, 128);
            predict_plan(&kernel_plan::plan_for(e, &p).unwrap(), &p, &quick()).unwrap().tflops
        };
        let (small, large) = (tf(256), tf(2048));
        assert!(large > 10.0 * small, "256: {small} TF, 2048: {large} TF");
    }
}
