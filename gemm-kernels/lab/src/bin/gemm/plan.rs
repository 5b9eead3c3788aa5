//! `gemm plan`: which kernel runs a problem, and why. Every catalogue kernel of the architecture
//! is listed with its predicted time or the reason it cannot run, then the pick: the same choice
//! the dispatcher makes ([`gemm_dispatch::plan::choice::choose`]), which ranks by the timing
//! model's characterisation table (`--model table`, the default; a kernel missing from the table
//! shows its fallback and why). `--model timing` runs the timing model itself on each candidate,
//! prints the table's composed time beside it and says whether the dispatcher's pick agrees;
//! `--model static` ranks by the roofline. `--group M,N,K` (repeated) explains a grouped GEMM
//! group by group, then the one launch of a grouped kernel.
//!
//! `gemm plan --characterise [--jobs N] [--only S]` regenerates the table
//! (`gemm-dispatch/data/kernel_timing.tsv`, [`gemm_dispatch::plan::cost_table`]).

use gemm_core::{Arch, DType, GemmProblem, Transpose};
use gemm_dispatch::plan::choice::{self, CostModel, StaticEstimate, TableModel};
use gemm_dispatch::plan::cost_table;
use gemm_lab::replay::Storage;
use gemm_lab::timing_cost::TimingModel;

#[derive(clap::Args)]
pub struct PlanArgs {
    /// Rows of C and of op(A).
    #[arg(long, required_unless_present_any = ["group", "characterise", "grid"])]
    m: Option<usize>,
    /// Columns of C and of op(B).
    #[arg(long, required_unless_present_any = ["group", "characterise", "grid"])]
    n: Option<usize>,
    /// Columns of op(A), rows of op(B).
    #[arg(long, required_unless_present_any = ["group", "characterise", "grid"])]
    k: Option<usize>,
    /// The groups of a grouped GEMM, each `M,N,K` (repeat the flag).
    #[arg(long, value_name = "M,N,K")]
    group: Vec<String>,
    /// Input dtype: f32, f16, bf16, fp8_e4m3fnuz, fp8_e5m2fnuz, fp8_e4m3, fp8_e5m2.
    #[arg(long, default_value = "bf16", value_parser = super::byte_dtype)]
    dtype: DType,
    /// Output dtype (default: the input dtype for f32/f16/bf16, f32 for fp8).
    #[arg(long, value_parser = super::byte_dtype)]
    out_dtype: Option<DType>,
    /// Use op(A) = A^T.
    #[arg(long)]
    transa: bool,
    /// Use op(B) = B^T (`x * W^T`, a Linear layer's form with row-major W).
    #[arg(long)]
    transb: bool,
    #[command(flatten)]
    storage: Storage,
    /// Architecture: gfx942, gfx950 or all.
    #[arg(long, default_value = "all")]
    arch: String,
    /// Cost source: `table` (the timing model's characterisation table, what the dispatcher
    /// ranks by), `timing` (the timing model itself, seconds per candidate) or `static` (the
    /// roofline estimate).
    #[arg(long, default_value = "table")]
    model: String,
    /// Regenerate the characterisation table: run the timing model on every plain catalogue
    /// kernel's characterisation launches and write the table.
    #[arg(long)]
    characterise: bool,
    /// Compare the characterisation table with the timing model on a sampled grid of shapes
    /// (`gemm_dispatch::plan::sampled`; `ci`: 16 problems per arch; `full`: 120 per arch, for many
    /// cores): median and worst error for
    /// the dispatcher's pick, and with `--best` how often the model's best kernel differs.
    #[arg(long, value_parser = ["ci", "full"])]
    grid: Option<String>,
    /// With `--grid`: also run the model on every candidate (the model's best kernel).
    #[arg(long)]
    best: bool,
    /// With `--grid`: only these shapes of the grid, each `MxNxK` (repeat the flag), in `--dtype`
    /// and the form `--transb` says (`x * W^T` with it, `A * B` without).
    #[arg(long, value_name = "MxNxK")]
    grid_shape: Vec<String>,
    /// With `--grid --best`: also every candidate's table and model figures.
    #[arg(long)]
    detail: bool,
    /// With `--characterise` or `--grid`: threads (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// With `--characterise`: only kernels whose name contains this, or one of a comma-separated
    /// list (other rows are kept while
    /// their code and the model are unchanged).
    #[arg(long)]
    only: Option<String>,
    /// With `--characterise`: run only the one-activation-column grids (`OS`..`O3`) of tiled
    /// kernels whose row the table has for their current code, keeping its other grids (the
    /// model is deterministic: the row is what a whole run gives); a decode kernel keeps its row (its
    /// `O` grids are its own).
    #[arg(long)]
    one_column_only: bool,
    /// With `--characterise`: run only `S` at one K tile (`k_min`, `s_min`) and at one K tile of
    /// edge tiles (`s_edge`) of kernels whose row the table has for their current code, keeping
    /// the rest of the row.
    #[arg(long)]
    short_k_only: bool,
    /// With `--characterise`: where to write the table (default: the source tree's
    /// gemm-dispatch/data/kernel_timing.tsv, which the library embeds at its next build).
    #[arg(long)]
    out: Option<std::path::PathBuf>,
}

/// `gemm plan --characterise`.
fn characterise(args: &PlanArgs) -> Result<(), String> {
    let t0 = std::time::Instant::now();
    let jobs = args.jobs.unwrap_or_else(gemm_lab::jobs::default_jobs);
    let path = args.out.clone().unwrap_or_else(cost_table::table_path);
    let keep = std::fs::read_to_string(&path).ok().and_then(|s| cost_table::Table::parse(&s).ok()).unwrap_or_default();
    eprintln!("characterising with the timing model on {jobs} thread(s); writing {}", path.display());
    let (table, failed) = gemm_lab::characterise::characterise_catalogue(
        args.only.as_deref(),
        jobs,
        &keep,
        (args.one_column_only || args.short_k_only)
            .then_some(gemm_lab::characterise::Refill { one_column: args.one_column_only, short_k: args.short_k_only }),
        &|done, total, e, r| {
            let what = match r {
                Ok(row) => format!("occupancy {}, R1 at k_hi {:.2} us", row.occupancy, row.r1[1] * 1e6),
                Err(why) => format!("no prediction: {why}"),
            };
            eprintln!("  [{done}/{total}] {:.0}s {} {}: {what}", t0.elapsed().as_secs_f64(), e.arch, e.name);
        },
    );
    std::fs::write(&path, table.to_text()).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("wrote {} rows to {}", table.rows.len(), path.display());
    for (k, why) in &failed {
        println!("  not characterised (the dispatcher falls back to the static estimate): {k}: {why}");
    }
    println!("wall time: {:.1} s on {jobs} thread(s)", t0.elapsed().as_secs_f64());
    Ok(())
}

fn shapes(args: &PlanArgs) -> Result<Vec<(usize, usize, usize)>, String> {
    if args.group.is_empty() {
        return Ok(vec![(args.m.unwrap_or(0), args.n.unwrap_or(0), args.k.unwrap_or(0))]);
    }
    args.group
        .iter()
        .map(|g| {
            let v: Vec<usize> = g
                .split(',')
                .map(|x| x.trim().parse::<usize>())
                .collect::<Result<_, _>>()
                .map_err(|e| format!("--group `{g}`: {e} (expected M,N,K)"))?;
            match v[..] {
                [m, n, k] => Ok((m, n, k)),
                _ => Err(format!("--group `{g}`: expected M,N,K")),
            }
        })
        .collect()
}

pub fn plan(args: &PlanArgs) -> Result<(), String> {
    if args.characterise {
        return characterise(args);
    }
    if let Some(grid) = &args.grid {
        let full = grid == "full";
        let archs: Vec<Arch> = match args.arch.as_str() {
            "all" => Arch::ALL.to_vec(),
            a => vec![a.parse().map_err(|e: gemm_core::Error| e.to_string())?],
        };
        let probs: Vec<(Arch, GemmProblem)> = archs
            .iter()
            .flat_map(|&a| gemm_lab::grid_eval::problems(a, full).into_iter().map(move |p| (a, p)))
            .filter(|(_, p)| {
                args.grid_shape.is_empty()
                    || (args.grid_shape.contains(&format!("{}x{}x{}", p.m, p.n, p.k))
                        && p.a_type == args.dtype
                        && p.trans_b.is_yes() == args.transb)
            })
            .collect();
        let jobs = args.jobs.unwrap_or_else(gemm_lab::jobs::default_jobs);
        eprintln!("table against the timing model on {} problems, {jobs} thread(s)", probs.len());
        let rows = gemm_lab::grid_eval::evaluate(&probs, args.best, jobs, &|d, t, r| {
            let e = gemm_lab::grid_eval::table_error(r).map_or("-".into(), |e| format!("{:+.0}%", e * 100.0));
            eprintln!("  [{d}/{t}] {} {}x{}x{} {}: {e}", r.arch, r.problem.m, r.problem.n, r.problem.k, r.pick);
        });
        if args.detail {
            print!("{}", gemm_lab::grid_eval::detail(&rows));
        }
        print!("{}", gemm_lab::grid_eval::report(&rows));
        return Ok(());
    }
    let archs: Vec<Arch> = match args.arch.as_str() {
        "all" => Arch::ALL.to_vec(),
        a => vec![a.parse().map_err(|e: gemm_core::Error| e.to_string())?],
    };
    let out = args.out_dtype.unwrap_or(if args.dtype.is_fp8() { DType::F32 } else { args.dtype });
    let shapes = shapes(args)?;
    let grouped = !args.group.is_empty();
    let timing = TimingModel::default();
    let model: &dyn CostModel = match args.model.as_str() {
        "table" => &TableModel,
        "timing" => &timing,
        "static" => &StaticEstimate,
        m => return Err(format!("--model {m}: expected table, timing or static")),
    };
    let direct = args.model == "timing";
    println!("cost model: {}", model.name());
    for arch in archs {
        if !gemm_lab::characterise::model_matches(cost_table::table(), arch) {
            println!(
                "note: the characterisation table was not made with this build's timing model for {arch}; regenerate: {}",
                cost_table::REGENERATE
            );
        }
        let mut total = 0.0;
        let mut launches = 0;
        for (g, &(m, n, k)) in shapes.iter().enumerate() {
            let p = GemmProblem::new(m, n, k)
                .with_dtypes(args.dtype, args.dtype, out)
                .with_transposes(Transpose::from_bool(args.transa), Transpose::from_bool(args.transb));
            let p = args.storage.apply(p);
            let what = if grouped { format!("group {g}: ") } else { String::new() };
            println!(
                "\n{arch}: {what}{m}x{n}x{k} {}->{} {}{}",
                p.a_type,
                p.c_type,
                if p.layout == gemm_core::Layout::RowMajor { "row-major " } else { "col-major " },
                [p.trans_a, p.trans_b].iter().map(|t| if t.is_yes() { 'T' } else { 'N' }).collect::<String>()
            );
            let x = choice::explain(arch, &p, model);
            let pick = x.pick.clone();
            for c in &x.candidates {
                let mark = if pick.as_deref() == Ok(c.kernel) { "*" } else { " " };
                match &c.verdict {
                    Ok(t) => {
                        let mut extra = String::new();
                        if direct {
                            let e = gemm_kernels::for_arch(arch).find(|e| e.name == c.kernel);
                            let composed = e
                                .and_then(|e| gemm_dispatch::plan::kernel_plan::plan_for(e, &p).ok())
                                .map(|pl| TableModel::composed(&pl, &p));
                            extra = match composed {
                                Some(Ok(s)) => format!("  table {:>12.3} us ({:+.0}%)", s * 1e6, (s / t - 1.0) * 100.0),
                                Some(Err(why)) => format!("  table: {why}"),
                                None => String::new(),
                            };
                        }
                        if let Some(fb) = &c.fallback {
                            extra = format!("  ({fb})");
                        }
                        println!("  {mark} {:<58} {:>12.3} us{extra}", c.kernel, t * 1e6)
                    }
                    Err(why) => println!("    {:<58} cannot run: {why}", c.kernel),
                }
            }
            match &pick {
                Ok(name) => {
                    let t = x.candidates.iter().find(|c| c.kernel == *name).and_then(|c| c.verdict.clone().ok());
                    total += t.unwrap_or(0.0);
                    launches += 1;
                    let chosen = choice::choose(arch, &p);
                    let dispatched = chosen.as_ref().map(|pl| pl.entry.name).map_err(|_| ());
                    let agree = if dispatched == Ok(*name) { "the same" } else { "a different kernel" };
                    println!(
                        "  pick: {name} ({:.3} us); the dispatcher (characterisation table) runs {} ({agree})",
                        t.unwrap_or(0.0) * 1e6,
                        dispatched.unwrap_or("nothing")
                    );
                    // The transpose pre-pass (gemm-dispatch `plan/transpose.rs`): the runtime's
                    // plan copies one operand transposed first where the table puts that ahead.
                    if let Ok(Some(gp)) = gemm_dispatch::plan::gemm_plan::plan_gemm(arch, arch.caps().compute_units, &p)
                    {
                        if let Some(tp) = gp.prepass {
                            let q = tp.problem;
                            println!(
                                "  pre-pass: {} transposes {} ({} x {} bytes, ld {} -> {}) into a {:.1} MiB workspace in {:.3} us, then {} runs {}{}: {:.3} us in all by the table ({:+.1}% against the pick)",
                                tp.entry.name,
                                tp.operand,
                                tp.rows,
                                tp.cols,
                                tp.ldx,
                                tp.ldy,
                                gp.workspace_bytes() as f64 / f64::from(1u32 << 20),
                                tp.seconds() * 1e6,
                                gp.kernel.entry.name,
                                [q.trans_a, q.trans_b].iter().map(|t| if t.is_yes() { 'T' } else { 'N' }).collect::<String>(),
                                gp.split.map_or(String::new(), |sp| format!(" with {} K splits", sp.splits)),
                                gp.estimate(&p) * 1e6,
                                (gp.estimate(&p) / t.unwrap_or(f64::NAN) - 1.0) * 100.0
                            );
                        }
                        println!(
                            "  plan: {} launch(es) ({}): {:.3} us by the table",
                            gp.entries().len(),
                            gp.entries().iter().map(|e| e.name).collect::<Vec<_>>().join(" + "),
                            gp.estimate(&p) * 1e6
                        );
                    }
                    // Physics: how far the pick is from the least time the chip allows.
                    let fl = gemm_dispatch::plan::bounds::floor(arch, &p, p.allow_xf32);
                    println!(
                        "  floor: {:.3} us ({}: {:.3} us of MFMAs at {:.1} TFLOP/s, {:.1} MB of A, B and C at {:.1} TB/s in {:.3} us); the pick is at {:.0}% of it",
                        fl.seconds() * 1e6,
                        if fl.memory_seconds > fl.mfma_seconds { "memory-bound" } else { "compute-bound" },
                        fl.mfma_seconds * 1e6,
                        arch.mfma_ceiling_tflops(p.a_type, p.allow_xf32),
                        gemm_dispatch::plan::bounds::bytes_moved(&p) / 1e6,
                        arch.caps().hbm_tbps,
                        fl.memory_seconds * 1e6,
                        100.0 * fl.seconds() / t.unwrap_or(f64::INFINITY)
                    );
                    // With `--model timing`: what the runtime launches (every launch of a split
                    // plan), predicted by the timing model, beside the table's composed figure.
                    if direct {
                        if let Ok(Some(gp)) =
                            gemm_dispatch::plan::gemm_plan::plan_gemm(arch, arch.caps().compute_units, &p)
                        {
                            let modelled = gemm_lab::model::predict_gemm_launches(&gp, &p, &timing.opts)
                                .map(|xs| xs.iter().map(|x| x.seconds).sum::<f64>());
                            let table = TableModel::composed(&gp.kernel, &p);
                            match (modelled, gp.split.is_some()) {
                                (Ok(m), split) => println!(
                                    "  the runtime runs {} launch(es) ({}{}): {:.3} us by the timing model ({:.0}% of the floor){}",
                                    gp.entries().len(),
                                    gp.entries().iter().map(|e| e.name).collect::<Vec<_>>().join(" + "),
                                    gp.split.map_or(String::new(), |sp| format!(", {} K splits", sp.splits)),
                                    m * 1e6,
                                    100.0 * fl.seconds() / m,
                                    match (table, split) {
                                        (Ok(tb), false) if (tb / m - 1.0).abs() > gemm_lab::characterise::TOLERANCE => format!(
                                            "; the table's {:.3} us is {:+.0}% off it",
                                            tb * 1e6,
                                            (tb / m - 1.0) * 100.0
                                        ),
                                        _ => String::new(),
                                    }
                                ),
                                (Err(why), _) => println!("  the timing model cannot run the runtime's plan: {why}"),
                            }
                        }
                    }
                    // What the device API does with that kernel's grid (splitk.rs).
                    if let Ok(plain) = &chosen {
                        match gemm_dispatch::plan::splitk::choose(arch, &p, Some(plain)) {
                            Ok(sp) => println!(
                                "  split: {}{} x {} K splits of {} into a {:.1} MiB workspace, then {} (static estimate {:.1} us against {:.1} us plain; gemm splitk predicts it)",
                                sp.head.map_or(String::new(), |h| format!(
                                    "{} over C's columns 0..{}, then ",
                                    h.entry.name, sp.col0
                                )),
                                sp.partial.name,
                                sp.splits,
                                sp.kchunk,
                                sp.workspace_bytes() as f64 / f64::from(1u32 << 20),
                                sp.reduce.name,
                                sp.estimate_split * 1e6,
                                sp.estimate_plain.unwrap_or(f64::NAN) * 1e6
                            ),
                            Err(why) => println!("  no split: {why}"),
                        }
                    }
                }
                Err(why) => println!("  pick: none: {why}"),
            }
        }
        if grouped {
            println!(
                "\n{arch}: one launch per non-empty group: {:.3} us in {launches} launch(es) (sum of the picks)",
                total * 1e6
            );
            let ps: Vec<GemmProblem> = shapes
                .iter()
                .map(|&(m, n, k)| {
                    args.storage.apply(
                        GemmProblem::new(m, n, k)
                            .with_dtypes(args.dtype, args.dtype, out)
                            .with_transposes(Transpose::from_bool(args.transa), Transpose::from_bool(args.transb)),
                    )
                })
                .collect();
            match gemm_lab::model::predict_grouped(arch, &ps, &timing.opts) {
                Ok((entry, pred)) => println!(
                    "{arch}: one grouped launch (timing model): {} {:.3} us, {} workgroups; the device API runs this",
                    entry.name,
                    pred.seconds * 1e6,
                    pred.grid[0]
                ),
                Err(why) => println!("{arch}: no grouped launch: {why}; the device API launches per group"),
            }
        }
    }
    Ok(())
}
