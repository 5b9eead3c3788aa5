//! `gemm bench --from LOG`: reruns every call of a call log (`GEMM_LOG=1`), or every
//! `gemm run ...` line of a problem list, and writes one CSV row per call and an SVG bar chart
//! ([`gemm_lab::replay`]).

use gemm_dispatch::call_log;
use gemm_lab::replay;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct BenchArgs {
    /// A call log (`GEMM_LOG=1 GEMM_LOG_FILE=...`) or a file of `gemm run ...` lines.
    #[arg(long, value_name = "LOG")]
    from: PathBuf,
    /// Timed runs per call after one warm-up.
    #[arg(long, default_value_t = 3)]
    iters: usize,
    /// The folder the CSV and the SVG chart go to (`gemm-bench.csv`, `gemm-bench.svg`),
    /// created if missing.
    #[arg(long, default_value = ".")]
    out: PathBuf,
    /// Where to write the CSV (default: OUT/gemm-bench.csv).
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Where to write the SVG chart (default: OUT/gemm-bench.svg).
    #[arg(long)]
    plot: Option<PathBuf>,
}

pub fn bench(args: &BenchArgs) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.from).map_err(|e| format!("{}: {e}", args.from.display()))?;
    let commands = call_log::commands(&text);
    if commands.is_empty() {
        return Err(format!("{} holds no `gemm run` command", args.from.display()));
    }
    let mut rows = Vec::with_capacity(commands.len());
    for (i, cmd) in commands.iter().enumerate() {
        let line = cmd.join(" ");
        let spec = match replay::parse(cmd) {
            Ok(s) => s,
            Err(e) => return Err(format!("command {i} `{line}`: {e}")),
        };
        let result = replay::measure(&spec, args.iters);
        match &result {
            Ok(m) => eprintln!(
                "[{i}] {:>10.3} ms best  err {:.3}  {}  {line}",
                m.best.as_secs_f64() * 1e3,
                m.error_ratio,
                m.kernel.as_deref().unwrap_or("-")
            ),
            Err(e) => eprintln!("[{i}] error: {e}  {line}"),
        }
        rows.push((spec, result));
    }
    let csv = args.csv.clone().unwrap_or_else(|| args.out.join("gemm-bench.csv"));
    let plot = args.plot.clone().unwrap_or_else(|| args.out.join("gemm-bench.svg"));
    for (path, body) in [(&csv, replay::csv(&rows)), (&plot, replay::svg(&rows))] {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(path, body).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let failed = rows.iter().filter(|(_, r)| r.as_ref().map_or(true, |m| m.error_ratio > 1.0)).count();
    println!(
        "reran {} call(s), {} ok; wrote {} and {}",
        rows.len(),
        rows.len() - failed,
        csv.display(),
        plot.display()
    );
    if failed > 0 {
        Err(format!("{failed} call(s) failed or mismatched the reference"))
    } else {
        Ok(())
    }
}
