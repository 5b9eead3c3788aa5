//! `gemm plan`: which kernel runs a problem, and why. Every catalogue kernel of the architecture
//! is listed with its predicted time or the reason it cannot run, then the pick: the same choice
//! the HIP dispatcher makes ([`gemm_dispatch::kernel_choice::choose`]), which ranks by the
//! static estimate. `--model timing` (the default) predicts each candidate with the timing
//! model instead and says whether the dispatcher's pick agrees. `--group M,N,K` (repeated)
//! explains a grouped GEMM group by group, then the one launch of a grouped kernel.

use gemm_core::{Arch, DType, GemmProblem, Transpose};
use gemm_dispatch::kernel_choice::{self, CostModel, StaticEstimate, TimingModel};
use gemm_dispatch::replay::Storage;

#[derive(clap::Args)]
pub struct PlanArgs {
    #[arg(long, required_unless_present = "group")]
    m: Option<usize>,
    #[arg(long, required_unless_present = "group")]
    n: Option<usize>,
    #[arg(long, required_unless_present = "group")]
    k: Option<usize>,
    /// The groups of a grouped GEMM, each `M,N,K` (repeat the flag).
    #[arg(long, value_name = "M,N,K")]
    group: Vec<String>,
    #[arg(long, default_value = "bf16")]
    dtype: DType,
    /// Output dtype (default: the input dtype for f32/f16/bf16, f32 for fp8).
    #[arg(long)]
    out_dtype: Option<DType>,
    #[arg(long)]
    transa: bool,
    #[arg(long)]
    transb: bool,
    #[command(flatten)]
    storage: Storage,
    /// Architecture: gfx942, gfx950 or all.
    #[arg(long, default_value = "all")]
    arch: String,
    /// Cost source: `timing` (the emulator's timing model, seconds per problem) or `static`
    /// (the dispatcher's roofline estimate).
    #[arg(long, default_value = "timing")]
    model: String,
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
    let archs: Vec<Arch> = match args.arch.as_str() {
        "all" => Arch::ALL.to_vec(),
        a => vec![a.parse().map_err(|e: gemm_core::Error| e.to_string())?],
    };
    let out = args.out_dtype.unwrap_or(if args.dtype.is_fp8() { DType::F32 } else { args.dtype });
    let shapes = shapes(args)?;
    let grouped = !args.group.is_empty();
    let timing = TimingModel::default();
    let model: &dyn CostModel = match args.model.as_str() {
        "timing" => &timing,
        "static" => &StaticEstimate,
        m => return Err(format!("--model {m}: expected timing or static")),
    };
    println!("cost model: {}", model.name());
    for arch in archs {
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
            let x = kernel_choice::explain(arch, &p, model);
            let pick = x.pick.clone();
            for c in &x.candidates {
                let mark = if pick.as_deref() == Ok(c.kernel) { "*" } else { " " };
                match &c.verdict {
                    Ok(t) => println!("  {mark} {:<58} {:>12.3} us", c.kernel, t * 1e6),
                    Err(why) => println!("    {:<58} cannot run: {why}", c.kernel),
                }
            }
            match &pick {
                Ok(name) => {
                    let t = x.candidates.iter().find(|c| c.kernel == *name).and_then(|c| c.verdict.clone().ok());
                    total += t.unwrap_or(0.0);
                    launches += 1;
                    let dispatched = kernel_choice::choose(arch, &p).map(|pl| pl.entry.name);
                    let agree = if dispatched == Ok(*name) { "the same" } else { "a different kernel" };
                    println!(
                        "  pick: {name} ({:.3} us); the dispatcher (static estimate) runs {} ({agree})",
                        t.unwrap_or(0.0) * 1e6,
                        dispatched.unwrap_or("nothing")
                    );
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
            match gemm_dispatch::model::predict_grouped(arch, &ps, &timing.opts) {
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
