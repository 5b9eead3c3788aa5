//! The characterisation table against the timing model on a sampled grid of shapes
//! (`gemm plan --grid ci|full`, issue 28): for each problem, the kernel the dispatcher picks,
//! its composed prediction from the table and the timing model's prediction of the same kernel;
//! with `best`, the model run on every candidate too, so the report says how often the table's
//! pick differs from the model's best and what that costs.
//!
//! The grid: squares, wide N, tall M, deep K and skinny M (decode) from 1 to 65536, both
//! archs, bf16 and the arch's fp8, row-major `x * W^T` (a Linear layer) and `A * B`. The `ci`
//! grid is a few of them (seconds); `full` is meant for many cores (`--jobs`).

use crate::model::predict_plan;
use crate::timing_cost::TimingModel;
use gemm_core::{Arch, DType, GemmProblem, Layout, Transpose};
use gemm_dispatch::plan::choice::{self, TableModel};
use gemm_dispatch::plan::kernel_plan;
use std::fmt::Write as _;

/// One problem of the grid.
#[derive(Clone, Debug)]
pub struct GridRow {
    pub arch: Arch,
    pub problem: GemmProblem,
    /// The dispatcher's kernel, its composed (table) and modelled seconds.
    pub pick: &'static str,
    pub table: f64,
    pub model: Result<f64, String>,
    /// The candidate the model predicts fastest, and its seconds (with `best`).
    pub best: Option<(&'static str, f64)>,
}

/// The grid's shapes: `full` or the CI subset.
pub fn shapes(full: bool) -> Vec<(usize, usize, usize)> {
    if !full {
        return vec![(2048, 2048, 2048), (4096, 16384, 1024), (16, 8192, 4096), (1, 4096, 4096)];
    }
    let mut g = Vec::new();
    for s in [256, 1024, 4096, 8192, 16384] {
        g.push((s, s, s));
    }
    g.extend([
        (4096, 57344, 8192),
        (4096, 65536, 1024),
        (65536, 4096, 1024),
        (32768, 256, 4096),
        (128, 128, 65536),
        (1024, 1024, 65536),
        (1000, 1000, 1000),
    ]);
    for m in [1, 16, 64, 256] {
        for (n, k) in [(8192, 12288), (76032, 8192), (28672, 4096), (1280, 8192)] {
            g.push((m, n, k));
        }
    }
    g
}

/// The problems of the grid on `arch`.
pub fn problems(arch: Arch, full: bool) -> Vec<GemmProblem> {
    let fp8 = match arch {
        Arch::Gfx942 => DType::Fp8E4M3Fnuz,
        Arch::Gfx950 => DType::Fp8E4M3,
    };
    let mut out = Vec::new();
    for (m, n, k) in shapes(full) {
        for (ab, c) in [(DType::Bf16, DType::Bf16), (fp8, DType::F32)] {
            for tb in [Transpose::Yes, Transpose::No] {
                out.push(
                    GemmProblem::new(m, n, k)
                        .with_layout(Layout::RowMajor)
                        .with_transposes(Transpose::No, tb)
                        .with_dtypes(ab, ab, c),
                );
            }
        }
    }
    out
}

/// Evaluates every `(arch, problem)` on `jobs` threads; `progress(done, total)` as each ends.
/// Problems no kernel runs are left out.
pub fn evaluate(
    problems: &[(Arch, GemmProblem)],
    best: bool,
    jobs: usize,
    progress: &(dyn Fn(usize, usize, &GridRow) + Sync),
) -> Vec<GridRow> {
    let opts = TimingModel::default().opts;
    let done = std::sync::atomic::AtomicUsize::new(0);
    crate::jobs::map_jobs(problems, jobs, |&(arch, p)| {
        let plan = choice::choose(arch, &p).ok()?;
        let table = TableModel::composed(&plan, &p).ok()?;
        let model = predict_plan(&plan, &p, &opts).map(|x| x.seconds);
        let best = best
            .then(|| {
                gemm_kernels::for_arch(arch)
                    .filter_map(|e| kernel_plan::plan_for(e, &p).ok())
                    .filter_map(|pl| predict_plan(&pl, &p, &opts).ok().map(|x| (pl.entry.name, x.seconds)))
                    .min_by(|a, b| a.1.total_cmp(&b.1))
            })
            .flatten();
        let row = GridRow { arch, problem: p, pick: plan.entry.name, table, model, best };
        progress(done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1, problems.len(), &row);
        Some(row)
    })
    .into_iter()
    .flatten()
    .collect()
}

/// The error of the table against the model for the pick, `table / model - 1`.
pub fn table_error(r: &GridRow) -> Option<f64> {
    r.model.as_ref().ok().map(|m| r.table / m - 1.0)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One line per problem, then the summary: median and worst |table / model - 1| for the pick,
/// and (with `best`) how often the pick is more than 5% slower than the model's best and by how
/// much.
pub fn report(rows: &[GridRow]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<7} {:>20} {:<6} {:<4} {:>11} {:>11} {:>7}  {:>11}  pick / model's best",
        "arch", "MxNxK", "dtype", "form", "table us", "model us", "error", "best us"
    );
    for r in rows {
        let p = &r.problem;
        let err = table_error(r).map_or("-".to_string(), |e| format!("{:+.0}%", e * 100.0));
        let model = r.model.as_ref().map_or_else(|e| format!("({e})"), |m| format!("{:.1}", m * 1e6));
        let best = r.best.map_or(String::new(), |(name, t)| {
            let same = if name == r.pick { "same".to_string() } else { name.to_string() };
            format!("{:>11.1}  {same}", t * 1e6)
        });
        let _ = writeln!(
            s,
            "{:<7} {:>20} {:<6} {:<4} {:>11.1} {:>11} {:>7}  {best}",
            r.arch.name(),
            format!("{}x{}x{}", p.m, p.n, p.k),
            if p.a_type.is_fp8() { "fp8" } else { "bf16" },
            if p.trans_b.is_yes() { "xW^T" } else { "AB" },
            r.table * 1e6,
            model,
            err
        );
    }
    let errs: Vec<f64> = rows.iter().filter_map(table_error).map(f64::abs).collect();
    let worst = errs.iter().copied().fold(0.0, f64::max);
    let _ = writeln!(
        s,
        "table against the timing model for the dispatcher's pick, {} problems: median |error| {:.1}%, worst {:.1}%",
        errs.len(),
        median(errs.clone()) * 100.0,
        worst * 100.0
    );
    let with_best: Vec<(f64, f64)> = rows.iter().filter_map(|r| Some((*r.model.as_ref().ok()?, r.best?.1))).collect();
    if !with_best.is_empty() {
        let slower: Vec<f64> = with_best.iter().map(|(pick, best)| pick / best - 1.0).collect();
        let within = slower.iter().filter(|&&x| x <= 0.05).count();
        let _ = writeln!(
            s,
            "the pick within 5% of the model's best kernel on {within} of {} problems ({:.0}%); where not, {:.0}% slower in the median",
            with_best.len(),
            100.0 * within as f64 / with_best.len() as f64,
            median(slower.into_iter().filter(|&x| x > 0.05).collect()) * 100.0
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CI grid (four gfx950 bf16 problems: a square, a wide N, two decode shapes): every
    /// problem gets a pick, a table figure and a model figure, and the report carries the
    /// summary. The agreement itself is reported (`gemm plan --grid full`), not asserted here.
    #[test]
    fn the_ci_grid_compares_table_and_model() {
        let probs: Vec<(Arch, GemmProblem)> =
            [Arch::Gfx950].into_iter().flat_map(|a| problems(a, false).into_iter().map(move |p| (a, p))).collect();
        let rows = evaluate(&probs[..4], false, 2, &|_, _, _| {});
        assert_eq!(rows.len(), 4, "every CI problem runs");
        for r in &rows {
            assert!(r.table > 0.0 && r.model.as_ref().is_ok_and(|m| *m > 0.0), "{r:?}");
        }
        let text = report(&rows);
        assert!(text.contains("median |error|") && text.contains("2048x2048x2048"), "{text}");
    }
}
