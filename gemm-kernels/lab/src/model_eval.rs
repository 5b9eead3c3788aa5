//! The timing model's evaluation commands (issue 10, "Done when"):
//!
//! * `gemm calibrate`: every calibration kernel (`gemm_emu::calibration`, foreign kernels
//!   whose MI355X/MI300X speed is published) at every published size: predicted TFLOP/s
//!   at the clock under load and at the peak clock, the published figure, the error, the source,
//!   whether the order of the published results is kept, and a log-log SVG plot
//!   (`gemm_emu::model_eval` does the work; this module is the command line).
//! * `gemm compare`: side by side, the predicted TFLOP/s of what the dispatcher launches for each
//!   input dtype (its plan: one kernel, or every launch of a split plan), of every catalogue
//!   kernel family alone, and of the Triton 3.9 test-data kernels of the same input dtypes, at
//!   4096³ and 8192³ on gfx942 and gfx950. "Ours" in the headline is the dispatcher's plan run
//!   through the timing model (issue 28: a speed claim never takes the characterisation table's
//!   figure, nor a single kernel the runtime would not launch alone).
//!
//! A catalogue *family* is the set of catalogue kernels that differ only in the operand
//! transposes; its representative is the `nn` member (column-major, no transposes), which
//! is the layout Triton's kernels compute: Triton's row-major `C = A·B` (A M×K, B K×N) is
//! the column-major `Cᵀ = Bᵀ·Aᵀ` with both operands untransposed, i.e. an `nn` GEMM of
//! N×M×K; for the square sizes compared here the two problems are the same.

use crate::model::{predict_plan, problem_for};
use gemm_core::Arch;
use gemm_dispatch::plan::kernel_plan;
use gemm_emu::model_eval::{self as eval, CalSelection, TritonKernel};
use gemm_emu::timing::{ModelOptions, Prediction};
use gemm_kernels::KernelEntry;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// `gemm calibrate`.
#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// Only calibration kernels whose name contains this.
    #[arg(long)]
    pub only: Option<String>,
    /// Only published sizes with M·N·K at most this (a fast subset).
    #[arg(long)]
    pub max_mnk: Option<u64>,
    /// The calibration directory (default: the emulator's tests/data/calibration).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Write the predicted-vs-published log-log plot here.
    #[arg(long, default_value = "calibration.svg")]
    pub plot: PathBuf,
    /// Threads for the predictions (default: every hardware thread).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// Runs `gemm calibrate`: prints the table, writes the plot.
pub fn calibrate(args: &CalibrateArgs) -> Result<(), String> {
    let t0 = Instant::now();
    let dir = args.dir.clone().unwrap_or_else(gemm_emu::calibration::default_dir);
    let set = gemm_emu::calibration::load_dir(&dir).map_err(|e| e.to_string())?;
    let sel = CalSelection { only: args.only.clone(), max_mnk: args.max_mnk };
    let jobs = args.jobs.unwrap_or_else(crate::jobs::default_jobs);
    eprintln!(
        "predicting the {} calibration kernel(s) of {} with the timing model on {jobs} thread(s), one line as each point finishes",
        set.len(),
        dir.display()
    );
    let rows = eval::calibrate_on(&set, &sel, &ModelOptions::default(), jobs, &|r| {
        let what = match &r.prediction {
            Ok(p) => format!("{:.1} TFLOP/s", p.tflops),
            Err(e) => format!("no prediction: {e}"),
        };
        eprintln!("  {}: {what} ({:.1}s)", r.label(), r.wall.as_secs_f64());
    });
    if rows.is_empty() {
        return Err("no calibration point selected".into());
    }
    print!("{}", eval::calibration_report(&rows));
    std::fs::write(&args.plot, eval::calibration_svg(&rows)).map_err(|e| format!("{}: {e}", args.plot.display()))?;
    println!("plot: {}", args.plot.display());
    println!("wall time: {:.1} s", t0.elapsed().as_secs_f64());
    Ok(())
}

/// `gemm compare`.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    /// Square problem sizes M = N = K.
    #[arg(long, value_delimiter = ',', default_values_t = [4096usize, 8192])]
    pub sizes: Vec<usize>,
    /// Also Triton's kernels whose input dtype has no catalogue family.
    #[arg(long)]
    pub all_triton: bool,
    /// Only rows whose label contains one of these (comma-separated), e.g.
    /// `--only "bf16->f32 base v8,bf16->f32 large,triton bf16"`.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// The main-loop schedules instead (`crate::schedule_eval`): each beside the same tile
    /// pipelined and beside Triton's bf16 kernels, with MFMA-busy share and stalls.
    #[arg(long)]
    pub schedules: bool,
    /// With `--schedules`: write each row's Chrome trace (one track per wave of the
    /// simulated CU, `gemm model --trace`'s format) at the largest size into this folder.
    #[arg(long)]
    pub trace_dir: Option<PathBuf>,
    /// Predictions run side by side on this many threads (default: every hardware thread).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// Who produced a row's kernels.
#[derive(Clone, Debug)]
pub enum Source {
    /// What the runtime launches for `inputs -> output` (`plan_gemm` on the whole chip), on the
    /// archs that have a plain kernel of those dtypes.
    Dispatcher { inputs: gemm_core::DType, output: gemm_core::DType, archs: Vec<Arch> },
    /// A catalogue family: its members per arch (the `nn` member where there is one).
    Catalogue(Vec<&'static KernelEntry>),
    /// A Triton configuration: its code object per arch.
    Triton(Vec<TritonKernel>),
}

/// One row of the comparison, before prediction.
#[derive(Clone, Debug)]
pub struct CompareRow {
    pub label: String,
    pub source: Source,
}

impl CompareRow {
    /// The archs this row has a kernel for.
    pub fn archs(&self) -> Vec<Arch> {
        match &self.source {
            Source::Dispatcher { archs, .. } => archs.clone(),
            Source::Catalogue(v) => v.iter().map(|e| e.arch).collect(),
            Source::Triton(v) => v.iter().map(|t| t.arch()).collect(),
        }
    }
}

/// A catalogue kernel's family label: the catalogue family (gemm-compiler `catalogue.rs`:
/// `base`, `large`, `small`, `f32`), the dtypes and the alignment class. A family's tile and
/// MFMA may differ per arch (e.g. `base` is 128x128x32 on gfx942 and 128x128x64 on gfx950);
/// each cell names the kernel it predicts. Kernels with a fused epilogue and grouped kernels
/// are not plain GEMMs and have no row (`None`).
pub fn family_label(e: &KernelEntry) -> Option<String> {
    // Split-K kernels run in pairs through a workspace (`gemm splitk` predicts them).
    if !e.is_plain() {
        return None;
    }
    Some(format!(
        "ours {}->{} {} {}",
        e.a_type,
        e.c_type,
        e.family,
        if e.align_elems > 1 { format!("v{}", e.align_elems) } else { "e1".into() }
    ))
}

/// A dtype as the Triton test data names it (`TritonKernel::dtype`): `bf16`, `f16`, and
/// `e4m3`/`e5m2` for both fp8 flavours (FNUZ on gfx942, OCP on gfx950).
pub fn triton_dtype(d: gemm_core::DType) -> String {
    match d {
        gemm_core::DType::Fp8E4M3Fnuz | gemm_core::DType::Fp8E4M3 => "e4m3".into(),
        gemm_core::DType::Fp8E5M2Fnuz | gemm_core::DType::Fp8E5M2 => "e5m2".into(),
        d => d.to_string(),
    }
}

/// The label of the dispatcher's row for `inputs -> output`.
pub fn dispatcher_label(inputs: gemm_core::DType, output: gemm_core::DType) -> String {
    format!("ours {inputs}->{output} dispatcher plan")
}

/// The rows `gemm compare` predicts: the dispatcher's plan per dtype pair of the catalogue's
/// plain kernels, every catalogue family, then every Triton kernel configuration whose input
/// dtype a catalogue family has (all of them with `all_triton`).
pub fn compare_rows(triton: &[TritonKernel], all_triton: bool) -> Vec<CompareRow> {
    use gemm_core::Transpose;
    let mut rows: Vec<CompareRow> = Vec::new();
    for e in gemm_kernels::catalogue().iter().filter(|e| e.is_plain()) {
        let label = dispatcher_label(e.a_type, e.c_type);
        match rows.iter_mut().find(|r| r.label == label) {
            Some(CompareRow { source: Source::Dispatcher { archs, .. }, .. }) if !archs.contains(&e.arch) => {
                archs.push(e.arch);
                archs.sort();
            }
            Some(_) => {}
            None => rows.push(CompareRow {
                label,
                source: Source::Dispatcher { inputs: e.a_type, output: e.c_type, archs: vec![e.arch] },
            }),
        }
    }
    for e in gemm_kernels::catalogue() {
        let Some(label) = family_label(e) else { continue };
        let nn = e.trans_a == Transpose::No && e.trans_b == Transpose::No;
        match rows.iter_mut().find(|r| r.label == label) {
            Some(CompareRow { source: Source::Catalogue(v), .. }) => match v.iter().position(|x| x.arch == e.arch) {
                Some(i) if nn => v[i] = e,
                Some(_) => {}
                None => v.push(e),
            },
            _ => rows.push(CompareRow { label, source: Source::Catalogue(vec![e]) }),
        }
    }
    let ours: Vec<String> = gemm_kernels::catalogue().iter().map(|e| triton_dtype(e.a_type)).collect();
    for t in triton {
        if !all_triton && !ours.contains(&t.dtype) {
            continue;
        }
        let label = t.label();
        match rows.iter_mut().find(|r| r.label == label) {
            Some(CompareRow { source: Source::Triton(v), .. }) => v.push(t.clone()),
            _ => rows.push(CompareRow { label, source: Source::Triton(vec![t.clone()]) }),
        }
    }
    rows
}

/// One predicted cell.
pub struct Cell {
    pub arch: Arch,
    pub size: usize,
    /// The kernel predicted (a plan's kernels joined by ` + `).
    pub kernel: String,
    /// Its tile `(MT, NT, KT)` (a split plan's: its partial kernel's).
    pub tile: (u32, u32, u32),
    /// TFLOP/s over every launch, or why there is no prediction.
    pub tflops: Result<f64, String>,
    /// The timing model's prediction of the longest launch (the only one of a single kernel):
    /// what binds it.
    pub longest: Option<Prediction>,
    pub wall: Duration,
}

/// What the dispatcher launches for one problem, by the timing model.
pub struct DispatchPrediction {
    /// The plan's kernels joined by ` + `, `-` where the dispatcher refused.
    pub kernel: String,
    /// The kernel's tile `(MT, NT, KT)` (a split plan's: its partial kernel's).
    pub tile: (u32, u32, u32),
    /// A short description of the plan (`crate::decode_table::describe`).
    pub plan: String,
    /// TFLOP/s over every launch of the plan, or why there is none.
    pub tflops: Result<f64, String>,
    /// The prediction of the plan's longest launch.
    pub longest: Option<Prediction>,
}

/// "Ours" of every speed claim (issue 28): the plan `plan_gemm` makes for `p` on the whole
/// chip of `arch`, every launch of it run through the timing model. `None` where the runtime
/// has no kernel for the problem's dtypes on `arch`.
pub fn predict_dispatcher(arch: Arch, p: &gemm_core::GemmProblem, opts: &ModelOptions) -> Option<DispatchPrediction> {
    match gemm_dispatch::plan::gemm_plan::plan_gemm(arch, arch.caps().compute_units, p) {
        Ok(Some(plan)) => {
            let names: Vec<&str> = plan.entries().iter().map(|e| e.name).collect();
            let tile = plan.split.as_ref().map_or(plan.kernel.entry.tile, |sp| sp.partial.tile);
            let r = crate::model::predict_gemm_launches(&plan, p, opts).map(|xs| {
                let secs: f64 = xs.iter().map(|x| x.seconds).sum();
                let longest = xs.into_iter().max_by(|a, b| a.seconds.total_cmp(&b.seconds));
                (p.flops() / secs / 1e12, longest)
            });
            let (tflops, longest) = match r {
                Ok((tf, l)) => (Ok(tf), l),
                Err(e) => (Err(e), None),
            };
            let plan_text = crate::decode_table::describe(&plan);
            Some(DispatchPrediction { kernel: names.join(" + "), tile, plan: plan_text, tflops, longest })
        }
        Ok(None) => None,
        Err(why) => Some(DispatchPrediction {
            kernel: "-".into(),
            tile: (0, 0, 0),
            plan: "-".into(),
            tflops: Err(why),
            longest: None,
        }),
    }
}

/// Predicts one row on `arch` at `size`³ (`None` where the row has no kernel for `arch`).
pub fn predict_cell(row: &CompareRow, arch: Arch, size: usize, opts: &ModelOptions) -> Option<Cell> {
    let t0 = Instant::now();
    let one = |r: Result<Prediction, String>| (r.as_ref().map(|p| p.tflops).map_err(Clone::clone), r.ok());
    let (kernel, tile, (tflops, longest)) = match &row.source {
        Source::Dispatcher { inputs, output, archs } => {
            if !archs.contains(&arch) {
                return None;
            }
            // Triton's row-major C = A * B, as a caller of the runtime would ask for it.
            let p = gemm_core::GemmProblem::new(size, size, size)
                .with_layout(gemm_core::Layout::RowMajor)
                .with_dtypes(*inputs, *inputs, *output);
            let d = predict_dispatcher(arch, &p, opts)?;
            (d.kernel, d.tile, (d.tflops, d.longest))
        }
        Source::Catalogue(v) => {
            let e = *v.iter().find(|e| e.arch == arch)?;
            let p = problem_for(e, size, size, size);
            (
                e.name.to_string(),
                e.tile,
                one(kernel_plan::plan_for(e, &p).and_then(|plan| predict_plan(&plan, &p, opts))),
            )
        }
        Source::Triton(v) => {
            let t = v.iter().find(|t| t.arch() == arch)?;
            let tile = (t.block_m as u32, t.block_n as u32, t.block_k as u32);
            (t.file.clone(), tile, one(eval::predict_triton(&eval::triton_dir(), t, size, size, size, opts)))
        }
    };
    Some(Cell { arch, size, kernel, tile, tflops, longest, wall: t0.elapsed() })
}

/// The side-by-side table: one line per row, one column per (arch, size).
pub fn compare_report(rows: &[CompareRow], cells: &[Vec<Option<Cell>>], archs: &[Arch], sizes: &[usize]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "predicted TFLOP/s (timing model, clock under the kernel's matrix load; timing-only, steady state simulated + extrapolated), M=N=K:"
    );
    let mut head = format!("{:<64}", "kernel family");
    for a in archs {
        for n in sizes {
            let _ = write!(head, " {:>14}", format!("{} {n}", a.name()));
        }
    }
    let _ = writeln!(s, "{head}");
    let mut notes = Vec::new();
    for (row, rc) in rows.iter().zip(cells) {
        let mut line = format!("{:<64}", row.label);
        for c in rc {
            let v = match c {
                None => "n/a".to_string(),
                Some(Cell { tflops: Ok(t), .. }) => format!("{t:.1}"),
                Some(c @ Cell { tflops: Err(e), .. }) => {
                    notes.push(format!("{} {} {}: {e}", c.kernel, c.arch.name(), c.size));
                    // The timing model refuses a workgroup that cannot be resident
                    // (`TimingError::NotResident`, "cannot launch: ...").
                    if e.starts_with("cannot launch") { "cannot launch" } else { "refused" }.to_string()
                }
            };
            let _ = write!(line, " {v:>14}");
        }
        let _ = writeln!(s, "{line}");
    }
    let _ = writeln!(
        s,
        "ours ... dispatcher plan: what the runtime launches for row-major C = A*B (every launch of a split plan, by the timing model)"
    );
    let _ = writeln!(
        s,
        "ours <family>: the family's nn member alone (the layout Triton's row-major C = A*B computes); n/a: no kernel for the arch"
    );
    if !notes.is_empty() {
        let _ = writeln!(s, "refused:");
        for n in notes {
            let _ = writeln!(s, "  {n}");
        }
    }
    s.push_str(&headline(rows, cells, archs, sizes));
    let _ = writeln!(s, "\nbinding limit per cell (largest size of each arch):");
    for (row, rc) in rows.iter().zip(cells) {
        for c in rc.iter().flatten().filter(|c| Some(&c.size) == sizes.iter().max()) {
            if let Some(p) = &c.longest {
                let _ = writeln!(
                    s,
                    "  {:<64} {} {}: {} wg/CU ({}); {}; {} ({:.1}s)",
                    row.label,
                    c.arch.name(),
                    c.size,
                    p.occupancy.workgroups,
                    p.occupancy.limited_by,
                    eval::top_stalls(p),
                    p.limiter,
                    c.wall.as_secs_f64()
                );
            }
        }
    }
    s
}

/// A row's input dtype.
fn row_dtype(row: &CompareRow, arch: Arch) -> Option<String> {
    match &row.source {
        Source::Dispatcher { inputs, .. } => Some(inputs.to_string()),
        Source::Catalogue(v) => v.iter().find(|e| e.arch == arch).map(|e| e.a_type.to_string()),
        Source::Triton(v) => v.iter().find(|t| t.arch() == arch).map(|t| t.dtype.clone()),
    }
}

/// A predicted cell for the headline: its row, tile, input dtype and TFLOP/s.
type Candidate<'a> = (&'a CompareRow, (u32, u32, u32), String, f64);

/// The issue-11 headline, per arch, size and input dtype: ours (what the dispatcher launches,
/// by the timing model), the best catalogue family alone, the 128x128 family, and Triton's best
/// kernel of our plan's tile (`MT x NT`) and of 128x128, with their predicted TFLOP/s.
pub fn headline(rows: &[CompareRow], cells: &[Vec<Option<Cell>>], archs: &[Arch], sizes: &[usize]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nours (the dispatcher's plan) vs the best family alone vs the 128x128 family vs Triton 3.9 of the same tile (TFLOP/s):"
    );
    for (ai, &arch) in archs.iter().enumerate() {
        for (si, &size) in sizes.iter().enumerate() {
            let col = ai * sizes.len() + si;
            // (row, tile, dtype, tflops) of every predicted cell in this column.
            let cands: Vec<Candidate> = rows
                .iter()
                .zip(cells)
                .filter_map(|(r, rc)| {
                    let c = rc.get(col)?.as_ref()?;
                    Some((r, c.tile, row_dtype(r, arch)?, *c.tflops.as_ref().ok()?))
                })
                .collect();
            let is = |c: &Candidate, kind: u8| match c.0.source {
                Source::Dispatcher { .. } => kind == 0,
                Source::Catalogue(_) => kind == 1,
                Source::Triton(_) => kind == 2,
            };
            let mut dtypes: Vec<&String> = cands.iter().filter(|c| is(c, 0)).map(|c| &c.2).collect();
            dtypes.sort();
            dtypes.dedup();
            for dt in dtypes {
                let best_of = |kind: u8, mn: Option<(u32, u32)>| {
                    cands
                        .iter()
                        .filter(|c| &c.2 == dt && is(c, kind))
                        .filter(|c| mn.is_none_or(|mn| (c.1 .0, c.1 .1) == mn))
                        .max_by(|a, b| a.3.total_cmp(&b.3))
                };
                let show = |c: Option<&Candidate>| match c {
                    Some((r, t, _, v)) => format!("{v:.1} ({}, {}x{}x{})", r.label, t.0, t.1, t.2),
                    None => "-".to_string(),
                };
                let Some(ours) = best_of(0, None) else { continue };
                let _ = writeln!(
                    s,
                    "  {} {size} {dt}: ours {} | best family alone {} | 128x128 {} | triton {}x{} {} | triton 128x128 {}",
                    arch.name(),
                    show(Some(ours)),
                    show(best_of(1, None)),
                    show(best_of(1, Some((128, 128)))),
                    ours.1 .0,
                    ours.1 .1,
                    show(best_of(2, Some((ours.1 .0, ours.1 .1)))),
                    show(best_of(2, Some((128, 128)))),
                );
            }
        }
    }
    s
}

/// Runs `gemm compare`.
pub fn compare(args: &CompareArgs) -> Result<(), String> {
    let t0 = Instant::now();
    if args.schedules {
        let jobs = args.jobs.unwrap_or_else(crate::jobs::default_jobs);
        let out = crate::schedule_eval::compare_schedules(&args.sizes, &args.only, args.trace_dir.as_deref(), jobs)?;
        print!("{out}");
        println!("wall time: {:.1} s", t0.elapsed().as_secs_f64());
        return Ok(());
    }
    let triton = eval::load_triton(&eval::triton_dir()).map_err(|e| e.to_string())?;
    let rows: Vec<CompareRow> = compare_rows(&triton, args.all_triton)
        .into_iter()
        .filter(|r| args.only.is_empty() || args.only.iter().any(|s| r.label.contains(s.as_str())))
        .collect();
    let archs = Arch::ALL;
    let opts = ModelOptions::default();
    // Every (row, arch, size) cell is an independent prediction: they run side by side on
    // `--jobs` threads and are put back in row order, so the table is the same for any count.
    let per_row = archs.len() * args.sizes.len();
    let items: Vec<(usize, Arch, usize)> = (0..rows.len())
        .flat_map(|i| archs.iter().flat_map(move |&a| args.sizes.iter().map(move |&n| (i, a, n))))
        .collect();
    let jobs = args.jobs.unwrap_or_else(crate::jobs::default_jobs);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let flat: Vec<Option<Cell>> = crate::jobs::map_jobs(&items, jobs, |&(i, a, n)| {
        let r = &rows[i];
        let c = predict_cell(r, a, n, &opts);
        if let Some(c) = &c {
            let what = c.tflops.as_ref().map_or_else(|e| e.clone(), |t| format!("{t:.1} TFLOP/s"));
            let k = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            eprintln!("  [{k}/{}] {} {} {n}: {what} ({:.1}s)", items.len(), r.label, a.name(), c.wall.as_secs_f64());
        }
        c
    });
    let mut flat = flat.into_iter();
    let cells: Vec<Vec<Option<Cell>>> = rows.iter().map(|_| flat.by_ref().take(per_row).collect()).collect();
    print!("{}", compare_report(&rows, &cells, &archs, &args.sizes));
    println!("wall time: {:.1} s", t0.elapsed().as_secs_f64());
    Ok(())
}
