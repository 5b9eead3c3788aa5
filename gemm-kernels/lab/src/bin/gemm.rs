//! `gemm`: the command-line face of the library.
//!
//! * `gemm devices`: what devices exist and why others do not.
//! * `gemm run --m 2048 --n 2048 --k 2048 [--dtype bf16] [--batch N] [--transa] [--transb]`: runs
//!   on the best device (or `--devices`), prints time, TFLOP/s and the error against the f64
//!   reference on a sample of entries.
//! * `gemm kernels`: the GPU kernel catalogue; `--model --m M --n N --k K` adds the timing
//!   model's predicted TFLOP/s per kernel.
//! * `gemm model CO --kernel K --grid .. --block .. --buffer .. --args .. --gemm M,N,K`: the
//!   timing model's prediction for any launch (`gemm emulate`'s arguments).
//! * `gemm calibrate [--plot FILE]`: the timing model against every published calibration
//!   figure (table, order check, log-log plot); `gemm compare`: predicted TFLOP/s of every
//!   catalogue family and Triton kernel at 4096³ and 8192³ on both archs.
//! * `gemm batch --items 64 --seed N`: a seeded batch of mixed shapes and dtypes streamed over the
//!   devices; prints progress, per-device load, the completion order, wall time and GFLOP/s,
//!   checks every item on sampled entries, and draws the schedule as a Gantt chart (SVG).
//! * `gemm --devices host,host tp --plan column|row|row-allreduce --m M --n N --k K`: one GEMM
//!   split over every device (`Context::gemm_tensor_parallel`); prints the route (device-resident
//!   with RCCL, or host memory and why), the split, time per rep, TFLOP/s and the accuracy, and
//!   compares time and result with the same GEMM on one device.
//! * `gemm run ... [--layout col] [--lda N] [--stride-a N] [--resident]`: the storage flags the
//!   call log writes; `--resident` runs on device memory through the device API. A run that
//!   needs more host memory than is available is refused with the amount.
//! * `gemm plan --m M --n N --k K --dtype D [--arch A]` (or `--group M,N,K` repeated): every
//!   catalogue kernel with its predicted time or why it cannot run, and the pick the dispatcher
//!   makes.
//! * `gemm bench --from LOG`: reruns every call of a `GEMM_LOG=1` call log (or a list of
//!   `gemm run` lines), writes CSV and an SVG chart.

#[path = "gemm/bench.rs"]
mod bench;
#[path = "gemm/plan.rs"]
mod plan;
#[path = "gemm/tp_ranks.rs"]
mod tp_ranks;

use clap::{Parser, Subcommand};
use gemm_core::reference;
use gemm_core::{
    bf16, f16, DType, Element, Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz, GemmProblem, Operand, StridedBatch,
    Transpose,
};
use gemm_dispatch::api::context::BatchReport;
use gemm_dispatch::api::parallel::TpRoute;
use gemm_dispatch::{Context, DeviceKind, Reduce, TpPlan};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(name = "gemm", version, about = "Fast matrix products on AMD Instinct GPUs, with a CPU backend everywhere")]
struct Cli {
    /// Devices to use, comma-separated: `host` (repeatable: `host,host,host`), `hip` or `hip:N`
    /// (AMD GPUs), `emu:gfx942` or `emu:gfx950[:MODE[:SEED]]` (GPUs emulated on the CPU). Default:
    /// $GEMM_DEVICES, else every usable HIP GPU, else the host.
    #[arg(long, global = true, visible_alias = "device")]
    devices: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the devices and why others are missing.
    Devices,
    /// Run a GEMM (or a strided batch) and report time, TFLOP/s and the error against the reference.
    Run(RunArgs),
    /// Stream a seeded batch of mixed shapes and dtypes over the devices; report how it spread.
    Batch(BatchArgs),
    /// One GEMM split over every device (tensor parallelism); compare it with one device.
    Tp(TpArgs),
    /// Explain the kernel choice: every candidate with its predicted time or why it cannot run.
    Plan(plan::PlanArgs),
    /// Rerun the calls of a call log (GEMM_LOG=1) or a problem list; write CSV and SVG.
    Bench(bench::BenchArgs),
    /// Run any kernel of any code object in the gfx942/gfx950 emulator, with its checkers.
    Emulate(gemm_emu::cli::EmulateArgs),
    /// Predict how fast any kernel of any code object runs on an MI300X/MI355X (timing model).
    Model(gemm_emu::cli::ModelArgs),
    /// The timing model against the published speeds of the calibration kernels.
    Calibrate(gemm_lab::model_eval::CalibrateArgs),
    /// Predicted TFLOP/s of every catalogue family and Triton kernel, side by side.
    Compare(gemm_lab::model_eval::CompareArgs),
    /// Compile every configuration of the kernel space and rank them by predicted TFLOP/s.
    Sweep(gemm_lab::sweep::SweepArgs),
    /// Split-K against the plain kernels for one shape (timing model).
    Splitk(gemm_lab::split_eval::SplitkArgs),
    /// The decode table: Llama Linear layers at M = 1..256, the runtime's plan predicted by the
    /// timing model against the memory floor (`--published`: the MI300X M = 1 figures).
    Decode(gemm_lab::decode_table::DecodeArgs),
    /// Block-scaled GEMMs (MXFP8, MXFP4) beside fp8 per-tensor, predicted by the timing model.
    Mx(gemm_lab::mx_table::MxArgs),
    /// Our dispatcher's plans beside Triton's best of a sweep, the blog's fp8 ping-pong and the
    /// published MI355X figures, all predicted in the same run (squares and Llama-3.1-70B prefill).
    Peers(gemm_lab::peers::PeersArgs),
    /// List the GPU kernel catalogue, or disassemble one kernel.
    Kernels {
        /// Print this kernel's instructions (LLVM syntax) instead of the list.
        #[arg(long, value_name = "NAME")]
        disasm: Option<String>,
        /// Print each kernel's predicted TFLOP/s for --m/--n/--k (timing model).
        #[arg(long)]
        model: bool,
        /// Rows of C and of op(A).
        #[arg(long, default_value_t = 4096)]
        m: usize,
        /// Columns of C and of op(B).
        #[arg(long, default_value_t = 4096)]
        n: usize,
        /// Columns of op(A), rows of op(B).
        #[arg(long, default_value_t = 4096)]
        k: usize,
        /// Only this arch (gfx942 or gfx950).
        #[arg(long)]
        arch: Option<gemm_core::Arch>,
        /// Only kernels whose name contains this.
        #[arg(long)]
        only: Option<String>,
        /// With --model: threads for the predictions (default: every hardware thread).
        #[arg(long)]
        jobs: Option<usize>,
        /// With --model: also print each prediction's whole report (caches, stalls by cause,
        /// busy units), to see why a kernel is as fast as it is.
        #[arg(long)]
        detail: bool,
    },
}

/// The operand flags `run` and `tp` share.
#[derive(clap::Args)]
struct OperandArgs {
    /// Input dtype: f32, f16, bf16, fp8_e4m3fnuz, fp8_e5m2fnuz, fp8_e4m3, fp8_e5m2.
    #[arg(long, default_value = "f32", value_parser = byte_dtype)]
    dtype: DType,
    /// Output dtype (default: the input dtype for f32/f16/bf16, f32 for fp8).
    #[arg(long, value_parser = byte_dtype)]
    out_dtype: Option<DType>,
    /// Use op(A) = A^T.
    #[arg(long)]
    transa: bool,
    /// Use op(B) = B^T (`x * W^T`, a Linear layer's form with row-major W).
    #[arg(long)]
    transb: bool,
    /// Scalar alpha of C = alpha op(A) op(B) + beta C.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    alpha: f32,
    /// Scalar beta (0: C is never read).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    beta: f32,
}

impl OperandArgs {
    /// The output dtype: as given, else the input dtype for f32/f16/bf16 and f32 for fp8.
    fn out_dtype(&self) -> DType {
        self.out_dtype.unwrap_or(if self.dtype.is_fp8() { DType::F32 } else { self.dtype })
    }

    /// An m x n x k problem of these element types, transposes and scalars.
    fn problem<A: Element, C: Element>(&self, m: usize, n: usize, k: usize) -> GemmProblem {
        GemmProblem::new(m, n, k)
            .with_elements::<A, A, C>()
            .with_transposes(Transpose::from_bool(self.transa), Transpose::from_bool(self.transb))
            .with_scalars(self.alpha, self.beta)
    }

    /// "NN", "NT", "TN" or "TT".
    fn transposes(&self) -> String {
        [self.transa, self.transb].iter().map(|&t| if t { 'T' } else { 'N' }).collect()
    }
}

#[derive(clap::Args)]
struct RunArgs {
    /// Rows of C and of op(A).
    #[arg(long)]
    m: usize,
    /// Columns of C and of op(B).
    #[arg(long)]
    n: usize,
    /// Columns of op(A), rows of op(B).
    #[arg(long)]
    k: usize,
    #[command(flatten)]
    ops: OperandArgs,
    /// Number of GEMMs in a strided batch (at least 1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    batch: u64,
    /// Timed repetitions after one warm-up run.
    #[arg(long, default_value_t = 5)]
    iters: usize,
    /// Entries of C compared with the reference (per batch item checked).
    #[arg(long, default_value_t = 256)]
    samples: usize,
    /// Seed of the random inputs and of the sampled entries.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Layout, leading dimensions, batch strides, device memory (as the call log writes them).
    #[command(flatten)]
    storage: gemm_lab::replay::Storage,
}

#[derive(clap::Args)]
struct BatchArgs {
    /// Number of GEMMs in the batch.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    items: u64,
    /// Seed of the shapes, dtypes and inputs.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Smallest m, n and k (each drawn log-uniformly between the bounds).
    #[arg(long, default_value_t = 16)]
    min_size: usize,
    /// Largest m, n and k.
    #[arg(long, default_value_t = 1024)]
    max_size: usize,
    /// Dtypes to mix, `IN` or `IN:OUT` (e.g. `f32,bf16:f32,fp8_e4m3fnuz:f32`); default: f32, bf16,
    /// bf16:f32, f16, f16:f32, keeping those every chosen device runs.
    #[arg(long, value_delimiter = ',')]
    dtypes: Option<Vec<String>>,
    /// Entries of C compared with the reference, per item.
    #[arg(long, default_value_t = 16)]
    samples: usize,
    /// Where to write the Gantt chart of the schedule (one lane per device, one bar per item).
    #[arg(long, default_value = "target/gemm-batch.svg")]
    plot: PathBuf,
    /// Also write one CSV row per item (shape, dtypes, device, start, finish, rank, result).
    #[arg(long)]
    csv: Option<PathBuf>,
    /// No per-item progress lines.
    #[arg(long)]
    quiet: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let ctx = match &cli.devices {
        Some(spec) => Context::from_spec(spec),
        None => Context::from_env(),
    };
    let ctx = match ctx {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Devices => {
            devices(&ctx);
            Ok(())
        }
        Command::Kernels { disasm: Some(name), .. } => disassemble(&name),
        Command::Kernels { model: true, m, n, k, arch, only, jobs, detail, .. } => {
            let jobs = jobs.unwrap_or_else(gemm_lab::jobs::default_jobs);
            eprintln!("predicting every catalogue kernel at {m}x{n}x{k} with the timing model on {jobs} thread(s)");
            let rows = gemm_lab::model::catalogue_on(
                arch,
                only.as_deref(),
                (m, n, k),
                &Default::default(),
                jobs,
                &|done, total, r| {
                    let what = r.prediction.as_ref().map_or_else(|e| e.clone(), |p| format!("{:.1} TFLOP/s", p.tflops));
                    eprintln!("  [{done}/{total}] {}: {what} ({:.1}s)", r.entry.name, r.wall.as_secs_f64());
                },
            );
            print!("{}", gemm_lab::model::catalogue_report(&rows, m, n, k));
            if detail {
                for r in &rows {
                    if let Ok(p) = &r.prediction {
                        println!("\n== {} ==\n{p}", r.entry.name);
                    }
                }
            }
            Ok(())
        }
        Command::Kernels { .. } => kernels(),
        Command::Run(args) => run(&ctx, &args),
        Command::Batch(args) => batch(&ctx, &args),
        Command::Tp(args) if args.ranks.is_some() => {
            tp_ranks::run(&args, &std::env::args().skip(1).collect::<Vec<_>>())
        }
        Command::Tp(args) => tensor_parallel(&ctx, &args),
        Command::Plan(args) => plan::plan(&args),
        Command::Bench(args) => bench::bench(&args),
        Command::Model(args) => gemm_emu::cli::model(args),
        Command::Calibrate(args) => gemm_lab::model_eval::calibrate(&args),
        Command::Compare(args) => gemm_lab::model_eval::compare(&args),
        Command::Sweep(args) => gemm_lab::sweep::sweep(&args),
        Command::Splitk(args) => gemm_lab::split_eval::report(&args),
        Command::Decode(args) => gemm_lab::decode_table::run(&args),
        Command::Mx(args) => gemm_lab::mx_table::run(&args),
        Command::Peers(args) => gemm_lab::peers::run(&args),
        Command::Emulate(args) => match gemm_emu::cli::run(args) {
            Ok(true) => Ok(()),
            Ok(false) => Err("the checkers reported findings".into()),
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn devices(ctx: &Context) {
    println!("{} device(s):", ctx.device_count());
    for (i, d) in ctx.devices().iter().enumerate() {
        println!("  [{i}] {:<10} {}", d.name, d.description);
    }
    if let Some(host) = ctx.devices().iter().find(|d| d.kind == DeviceKind::Host) {
        // Which gemm-host path serves each input class on this CPU, and why (gemm_host::dispatch).
        println!("host paths ({} threads):", host.compute_units);
        for line in gemm_host::dispatch::summary(host.compute_units) {
            println!("  {line}");
        }
    }
    let found = gemm_dispatch::backends::hip::discover();
    if !found.notes.is_empty() {
        println!("not used:");
        for note in &found.notes {
            println!("  {note}");
        }
    }
}

/// The catalogue listing, one line per kernel (793 lines): written through a locked stdout
/// that stops quietly when the reader goes away (`gemm kernels | head`), where `println!`
/// would panic on the broken pipe.
fn kernels() -> Result<(), String> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match list_kernels(&mut out).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("writing the listing: {e}")),
        _ => Ok(()),
    }
}

fn list_kernels(out: &mut impl std::io::Write) -> std::io::Result<()> {
    let all = gemm_kernels::catalogue();
    if all.is_empty() {
        return writeln!(out, "the GPU kernel catalogue is empty: no kernels are built into this version");
    }
    writeln!(
        out,
        "{:<78} {:<7} {:<27} {:<11} {:<5} {:<8} {:<16} {:>4} {:>4} {:>4} {:>6} {:>4} {:>6}  global->LDS copies",
        "name", "arch", "dtypes", "tile", "waves", "family", "schedule", "vgpr", "agpr", "occ", "lds", "conf", "mfma%"
    )?;
    for k in all {
        writeln!(
            out,
            "{:<78} {:<7} {:<27} {:<11} {:<5} {:<8} {:<16} {:>4} {:>4} {:>4} {:>6} {:>4} {:>5.1}%  {}",
            k.name,
            k.arch,
            dtypes(k),
            format!("{}x{}x{}", k.tile.0, k.tile.1, k.tile.2),
            format!("{}x{}", k.wave_grid.0, k.wave_grid.1),
            k.family,
            k.schedule,
            k.vgprs,
            k.agprs,
            k.occupancy,
            k.lds_bytes,
            k.lds_read_conflicts_per_k_step + k.lds_write_conflicts_per_k_step,
            k.mfma_issue_share_permille as f64 / 10.0,
            copies(k.copy_a, k.copy_b),
        )?;
    }
    Ok(())
}

/// A kernel's operand and output types as the user chooses them: an MX kernel's formats (its
/// entry's `a_type`/`b_type` are the fp8 storage types its descriptor carries, the same for
/// MXFP6 and MXFP8 kernels), else the element types.
fn dtypes(k: &gemm_kernels::KernelEntry) -> String {
    match k.block_scale {
        gemm_kernels::BlockScaleKind::Mx { a, b } => format!("{a}x{b}->{}", k.c_type),
        _ => format!("{}x{}->{}", k.a_type, k.b_type, k.c_type),
    }
}

/// How a kernel copies A and B from global memory to LDS, each named: "A and B: ..." when the
/// two are the same (the listing used to print the same reason twice, naming neither).
fn copies(a: &str, b: &str) -> String {
    if a == b {
        format!("A and B: {a}")
    } else {
        format!("A: {a}; B: {b}")
    }
}

/// Prints a catalogue kernel's descriptor facts and instructions, decoded by the same table the
/// compiler encodes with.
fn disassemble(name: &str) -> Result<(), String> {
    let entry = gemm_kernels::catalogue()
        .iter()
        .find(|k| k.name == name)
        .ok_or_else(|| format!("no kernel `{name}` in the catalogue (see `gemm kernels`)"))?;
    let co = gemm_codeobject::CodeObject::parse(entry.code_object).map_err(|e| e.to_string())?;
    let kernel = co.kernel(name).ok_or_else(|| format!("the code object has no kernel `{name}`"))?;
    let arch = gemm_isa::Arch::ALL
        .into_iter()
        .find(|a| a.name() == entry.arch.name())
        .ok_or_else(|| format!("no instruction table for {}", entry.arch))?;
    let insts = gemm_isa::decode_all(&kernel.code, arch).map_err(|e| e.to_string())?;
    println!(
        "; {} ({}): {} sgprs, {} vgprs, {} agprs, {} bytes LDS, {} instructions",
        entry.name,
        entry.arch,
        entry.sgprs,
        entry.vgprs,
        entry.agprs,
        entry.lds_bytes,
        insts.len()
    );
    for (offset, inst) in insts {
        println!("  {inst:<72} ; {offset:#06x}");
    }
    Ok(())
}

/// Runs `$f::<A, C>(args)` for the element types of dtypes `$a` and `$c`.
macro_rules! with_types {
    ($a:expr, $c:expr, $f:ident ( $($arg:expr),* )) => {
        match ($a, $c) {
            (DType::F32, DType::F32) => $f::<f32, f32>($($arg),*),
            (DType::F16, DType::F16) => $f::<f16, f16>($($arg),*),
            (DType::F16, DType::F32) => $f::<f16, f32>($($arg),*),
            (DType::Bf16, DType::Bf16) => $f::<bf16, bf16>($($arg),*),
            (DType::Bf16, DType::F32) => $f::<bf16, f32>($($arg),*),
            (DType::Fp8E4M3Fnuz, DType::F32) => $f::<Fp8E4M3Fnuz, f32>($($arg),*),
            (DType::Fp8E4M3Fnuz, DType::F16) => $f::<Fp8E4M3Fnuz, f16>($($arg),*),
            (DType::Fp8E4M3Fnuz, DType::Bf16) => $f::<Fp8E4M3Fnuz, bf16>($($arg),*),
            (DType::Fp8E5M2Fnuz, DType::F32) => $f::<Fp8E5M2Fnuz, f32>($($arg),*),
            (DType::Fp8E5M2Fnuz, DType::F16) => $f::<Fp8E5M2Fnuz, f16>($($arg),*),
            (DType::Fp8E5M2Fnuz, DType::Bf16) => $f::<Fp8E5M2Fnuz, bf16>($($arg),*),
            (DType::Fp8E4M3, DType::F32) => $f::<Fp8E4M3, f32>($($arg),*),
            (DType::Fp8E4M3, DType::F16) => $f::<Fp8E4M3, f16>($($arg),*),
            (DType::Fp8E4M3, DType::Bf16) => $f::<Fp8E4M3, bf16>($($arg),*),
            (DType::Fp8E5M2, DType::F32) => $f::<Fp8E5M2, f32>($($arg),*),
            (DType::Fp8E5M2, DType::F16) => $f::<Fp8E5M2, f16>($($arg),*),
            (DType::Fp8E5M2, DType::Bf16) => $f::<Fp8E5M2, bf16>($($arg),*),
            (a, c) => Err(format!("{a} -> {c} is not a supported dtype pair")),
        }
    };
}

/// Any input dtype with any 16/32-bit output: the library, not the CLI, says which pairs it runs.
fn run(ctx: &Context, args: &RunArgs) -> Result<(), String> {
    macro_rules! with_out {
        ($a:ty) => {
            match args.ops.out_dtype() {
                DType::F32 => run_typed::<$a, f32>(ctx, args),
                DType::F16 => run_typed::<$a, f16>(ctx, args),
                DType::Bf16 => run_typed::<$a, bf16>(ctx, args),
                other => Err(format!("output dtype {other} is not supported")),
            }
        };
    }
    match args.ops.dtype {
        DType::F32 => with_out!(f32),
        DType::F16 => with_out!(f16),
        DType::Bf16 => with_out!(bf16),
        DType::Fp8E4M3Fnuz => with_out!(Fp8E4M3Fnuz),
        DType::Fp8E5M2Fnuz => with_out!(Fp8E5M2Fnuz),
        DType::Fp8E4M3 => with_out!(Fp8E4M3),
        DType::Fp8E5M2 => with_out!(Fp8E5M2),
        d @ (DType::Fp6E2M3 | DType::Fp6E3M2 | DType::Fp4E2M1) => {
            Err(format!("{d} is a sub-byte type: only block-scaled GEMMs take it (`gemm mx` times them)"))
        }
    }
}

/// Values spread over [-1, 1), in the input type.
fn random<T: Element>(len: usize, rng: &mut ChaCha8Rng) -> Vec<T> {
    (0..len).map(|_| T::from_f32(rng.gen_range(-1.0f32..1.0))).collect()
}

fn run_typed<A: Element, C: Element>(ctx: &Context, args: &RunArgs) -> Result<(), String> {
    let p = args.storage.apply(args.ops.problem::<A, C>(args.m, args.n, args.k));
    let item = p.validate().map_err(|e| e.to_string())?;
    let batch = args.storage.batch(p, usize::try_from(args.batch).map_err(|e| e.to_string())?)?;
    let spans = batch.validate().map_err(|e| e.to_string())?;
    // Refuse what cannot fit, with the amount, before allocating anything.
    gemm_lab::replay::ensure_host_memory(gemm_lab::replay::host_bytes(&batch)?, "this run")?;
    if args.storage.resident {
        return run_resident(ctx, args, &batch);
    }
    let gib = (spans.a * A::DTYPE.size_bytes() * 2 + spans.c * C::DTYPE.size_bytes() * 2) as f64 / (1u64 << 30) as f64;
    eprintln!(
        "gemm {}x{}x{} {} {}->{} batch {} on {} device(s); {:.2} GiB of buffers",
        args.m,
        args.n,
        args.k,
        args.ops.transposes(),
        A::DTYPE,
        C::DTYPE,
        batch.count,
        ctx.device_count(),
        gib
    );
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let a: Vec<A> = random(spans.a, &mut rng);
    let b: Vec<A> = random(spans.b, &mut rng);
    let c0: Vec<C> = random(spans.c, &mut rng);
    let mut c = c0.clone();

    let mut times = Vec::with_capacity(args.iters);
    let total = args.iters + 1;
    for it in 0..total {
        c.copy_from_slice(&c0);
        let start = Instant::now();
        if batch.count == 1 {
            ctx.gemm(&p, &a, &b, &mut c).map_err(|e| e.to_string())?;
        } else {
            let report = ctx.gemm_strided_batched(&batch, &a, &b, &mut c).map_err(|e| e.to_string())?;
            let failure = report.failures().next().map(|(i, e)| format!("batch item {i} failed: {e}"));
            if let Some(failure) = failure {
                return Err(failure);
            }
        }
        let dt = start.elapsed();
        let label = if it == 0 { "warm-up".to_string() } else { format!("run {it}/{}", args.iters) };
        eprintln!("  {label:<12} {:>10.3} ms  {:>8.3} TFLOP/s", ms(dt), tflops(&p, batch.count, dt));
        if it > 0 {
            times.push(dt);
        }
    }
    times.sort();
    let best = times.first().copied().unwrap_or_default();
    let median = times.get(times.len() / 2).copied().unwrap_or_default();

    // Check a sample of entries of the first and the last batch item against the reference.
    let mut worst = 0.0f64;
    let mut max_abs = 0.0f64;
    let mut checked = 0;
    let items: Vec<usize> = if batch.count > 1 { vec![0, batch.count - 1] } else { vec![0] };
    for &i in &items {
        let (oa, ob, oc) = batch.offsets(i);
        let entries: Vec<(usize, usize)> =
            (0..args.samples).map(|_| (rng.gen_range(0..args.m.max(1)), rng.gen_range(0..args.n.max(1)))).collect();
        let report = reference::check(
            &p,
            &a[oa..oa + item.a],
            &b[ob..ob + item.b],
            &c0[oc..oc + item.c],
            &c[oc..oc + item.c],
            Some(&entries),
        )
        .map_err(|e| e.to_string())?;
        worst = worst.max(report.max_err_ratio);
        max_abs = max_abs.max(report.max_abs_err);
        checked += report.checked;
    }
    println!("time     best {:.3} ms, median {:.3} ms over {} runs", ms(best), ms(median), times.len());
    println!(
        "speed    {:.3} TFLOP/s = {:.1} GFLOP/s (best), {:.3} TFLOP/s (median)",
        tflops(&p, batch.count, best),
        tflops(&p, batch.count, best) * 1e3,
        tflops(&p, batch.count, median)
    );
    println!(
        "accuracy max |error| {:.3e} on {} sampled entries ({:.3} of the allowed error): {}",
        max_abs,
        checked,
        worst,
        if worst <= 1.0 { "ok" } else { "MISMATCH" }
    );
    if worst <= 1.0 {
        Ok(())
    } else {
        Err("the result does not match the reference".into())
    }
}

/// `gemm run --resident`: the operands in device memory of the first device, through the device
/// API ([`gemm_lab::replay::measure`], the same runner `gemm bench` uses).
fn run_resident(ctx: &Context, args: &RunArgs, batch: &StridedBatch) -> Result<(), String> {
    let devices = ctx.devices().first().map(|d| d.name.clone());
    let spec = gemm_lab::replay::RunSpec {
        command: "gemm run --resident".into(),
        devices,
        batch: *batch,
        resident: true,
        samples: args.samples,
        seed: args.seed,
    };
    let m = gemm_lab::replay::measure(&spec, args.iters)?;
    let p = &batch.problem;
    println!("device   {} (device memory), kernel {}", m.devices, m.kernel.as_deref().unwrap_or("-"));
    println!("time     best {:.3} ms, median {:.3} ms over {} runs", ms(m.best), ms(m.median), m.runs);
    println!("speed    {:.3} TFLOP/s (best)", tflops(p, batch.count, m.best));
    let ok = m.error_ratio <= 1.0;
    println!("accuracy {:.3} of the allowed error: {}", m.error_ratio, if ok { "ok" } else { "MISMATCH" });
    if ok {
        Ok(())
    } else {
        Err("the result does not match the reference".into())
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn tflops(p: &GemmProblem, count: usize, d: Duration) -> f64 {
    if d.is_zero() {
        return 0.0;
    }
    p.flops() * count as f64 / d.as_secs_f64() / 1e12
}

/// A buffer of `len` bytes aligned to 8, so it can be viewed as any element type; the batch mixes
/// dtypes and hands the context byte buffers, which backends view as typed slices again.
struct Buf {
    words: Vec<u64>,
    len: usize,
}

impl Buf {
    fn new(len: usize) -> Self {
        Self { words: vec![0; len.div_ceil(8)], len }
    }
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.words)[..self.len]
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.words)[..self.len]
    }
    fn typed<T: Element>(&self) -> &[T] {
        bytemuck::cast_slice(self.bytes())
    }
    fn typed_mut<T: Element>(&mut self) -> &mut [T] {
        bytemuck::cast_slice_mut(self.bytes_mut())
    }
}

/// One GEMM of the batch with its data (C before and after).
struct BatchItem {
    problem: GemmProblem,
    a: Buf,
    b: Buf,
    c0: Buf,
    c: Buf,
}

/// Seeded inputs and C of one item, in its element types.
fn fill_item<A: Element, C: Element>(p: &GemmProblem, rng: &mut ChaCha8Rng) -> Result<BatchItem, String> {
    let spans = p.validate().map_err(|e| e.to_string())?;
    let new = |elems: usize, size: usize| Buf::new(elems * size);
    let (mut a, mut b, mut c0) =
        (new(spans.a, A::DTYPE.size_bytes()), new(spans.b, A::DTYPE.size_bytes()), new(spans.c, C::DTYPE.size_bytes()));
    a.typed_mut::<A>().copy_from_slice(&random::<A>(spans.a, rng));
    b.typed_mut::<A>().copy_from_slice(&random::<A>(spans.b, rng));
    c0.typed_mut::<C>().copy_from_slice(&random::<C>(spans.c, rng));
    let c = Buf { words: c0.words.clone(), len: c0.len };
    Ok(BatchItem { problem: *p, a, b, c0, c })
}

/// The item's result against the f64 reference on `entries`.
fn check_item<A: Element, C: Element>(
    item: &BatchItem,
    entries: &[(usize, usize)],
) -> Result<reference::CheckReport, String> {
    reference::check(
        &item.problem,
        item.a.typed::<A>(),
        item.b.typed::<A>(),
        item.c0.typed::<C>(),
        item.c.typed::<C>(),
        Some(entries),
    )
    .map_err(|e| e.to_string())
}

/// A dtype of plain GEMMs: the sub-byte ones (fp6, fp4) have no byte size, and only
/// block-scaled GEMMs take them (`gemm mx` times those).
fn byte_dtype(s: &str) -> Result<DType, String> {
    let d: DType = s.parse().map_err(|e: gemm_core::Error| e.to_string())?;
    if d.is_sub_byte() {
        return Err(format!("{d} is a sub-byte type: only block-scaled GEMMs take it"));
    }
    Ok(d)
}

/// `IN` or `IN:OUT` (OUT defaults as in `gemm run`).
fn parse_dtype_pair(s: &str) -> Result<(DType, DType), String> {
    let (a, c) = s.split_once(':').unwrap_or((s, ""));
    let a = byte_dtype(a.trim()).map_err(|e| format!("--dtypes `{s}`: {e}"))?;
    let c: DType = match c.trim() {
        "" if a.is_fp8() => DType::F32,
        "" => a,
        c => byte_dtype(c).map_err(|e| format!("--dtypes `{s}`: {e}"))?,
    };
    Ok((a, c))
}

/// Whether every device of `ctx` runs `a -> c` (GPU devices need a catalogue kernel; a batch item
/// may land on any device, so the batch mixes only what all of them run).
fn all_devices_run(ctx: &Context, a: DType, c: DType) -> bool {
    let probe = GemmProblem::new(64, 64, 64).with_dtypes(a, a, c);
    ctx.devices().iter().all(|d| match d.kind {
        DeviceKind::Hip { arch, .. } | DeviceKind::Emu { arch } => {
            gemm_dispatch::plan::kernel_plan::plan(arch, &probe).is_ok()
        }
        DeviceKind::Host | DeviceKind::Other(_) => true,
    })
}

fn short_dtype(a: DType, c: DType) -> String {
    if a == c {
        a.to_string()
    } else {
        format!("{a}->{c}")
    }
}

fn batch(ctx: &Context, args: &BatchArgs) -> Result<(), String> {
    if args.min_size == 0 || args.min_size > args.max_size {
        return Err(format!("sizes {}..{}: need 1 <= --min-size <= --max-size", args.min_size, args.max_size));
    }
    let wanted: Vec<(DType, DType)> = match &args.dtypes {
        Some(list) => list.iter().map(|s| parse_dtype_pair(s)).collect::<Result<_, _>>()?,
        None => vec![
            (DType::F32, DType::F32),
            (DType::Bf16, DType::Bf16),
            (DType::Bf16, DType::F32),
            (DType::F16, DType::F16),
            (DType::F16, DType::F32),
        ],
    };
    let (kinds, refused): (Vec<_>, Vec<_>) = wanted.into_iter().partition(|&(a, c)| all_devices_run(ctx, a, c));
    if !refused.is_empty() {
        let names: Vec<String> = refused.iter().map(|&(a, c)| short_dtype(a, c)).collect();
        eprintln!("not mixed in (some device has no kernel for them): {}", names.join(", "));
    }
    if kinds.is_empty() {
        return Err("no requested dtype runs on every chosen device".into());
    }
    let count = usize::try_from(args.items).map_err(|_| "--items does not fit this machine".to_string())?;

    // The batch: m, n, k log-uniform over the size range (as many small GEMMs as large ones),
    // dtypes uniform over the kinds.
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let (lo, hi) = ((args.min_size as f64).ln(), (args.max_size as f64).ln());
    let dim = |rng: &mut ChaCha8Rng| -> usize {
        let x = if hi > lo { rng.gen_range(lo..=hi) } else { lo };
        (x.exp().round() as usize).clamp(args.min_size, args.max_size)
    };
    let mut items = Vec::with_capacity(count);
    for _ in 0..count {
        let (m, n, k) = (dim(&mut rng), dim(&mut rng), dim(&mut rng));
        let (a, c) = kinds[rng.gen_range(0..kinds.len())];
        let p = GemmProblem::new(m, n, k).with_dtypes(a, a, c);
        items.push(with_types!(a, c, fill_item(&p, &mut rng))?);
    }
    let flops: f64 = items.iter().map(|it| it.problem.flops()).sum();
    let names: Vec<String> = ctx.devices().iter().map(|d| format!("{} ({} cu)", d.name, d.compute_units)).collect();
    eprintln!(
        "batch of {count} GEMMs, sizes {}..{}, dtypes {}, {:.2} GFLOP, seed {} on {}",
        args.min_size,
        args.max_size,
        kinds.iter().map(|&(a, c)| short_dtype(a, c)).collect::<Vec<_>>().join(" "),
        flops / 1e9,
        args.seed,
        names.join(", ")
    );

    // Run, printing each item as it finishes. The observer runs on the device's worker, so it
    // only hands the outcome to a printer thread: writing a line takes ~15 us, which would show
    // up as idle time between the device's items.
    let shapes: Vec<GemmProblem> = items.iter().map(|it| it.problem).collect();
    let device_names = labels(&ctx.devices().into_iter().map(|d| d.name).collect::<Vec<_>>());
    let (tx, rx) = std::sync::mpsc::channel::<(usize, gemm_dispatch::JobOutcome)>();
    let print_progress = |rx: std::sync::mpsc::Receiver<(usize, gemm_dispatch::JobOutcome)>| {
        for (n, (i, o)) in rx.into_iter().enumerate() {
            let p = &shapes[i];
            let device = o.device.and_then(|d| device_names.get(d)).map_or("-", String::as_str);
            let ms = o.trace.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3);
            let status = match &o.result {
                Ok(()) => "ok".to_string(),
                Err(e) => format!("FAILED: {e}"),
            };
            eprintln!(
                "  [{:>w$}/{count}] item {i:>w$} {:>14} {:<9} on {device:<10} {ms:>9.3} ms  {status}",
                n + 1,
                format!("{}x{}x{}", p.m, p.n, p.k),
                short_dtype(p.a_type, p.c_type),
                w = count.to_string().len()
            );
        }
    };
    let byte_items = items.iter_mut().map(|it| (it.problem, it.a.bytes(), it.b.bytes(), it.c.bytes_mut())).collect();
    let report = std::thread::scope(|s| {
        if args.quiet {
            drop(rx);
            return ctx.gemm_grouped_bytes(byte_items);
        }
        s.spawn(move || print_progress(rx));
        let progress = move |i: usize, o: &gemm_dispatch::JobOutcome| {
            // The printer thread only stops once the batch is over and this sender dropped.
            let _ = tx.send((i, o.clone()));
        };
        ctx.gemm_grouped_bytes_observed(byte_items, &progress)
    });

    // Check every item on sampled entries.
    let mut worst = 0.0f64;
    let mut checked = 0usize;
    let mut mismatched = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if report.items[i].result.is_err() {
            continue;
        }
        let p = &item.problem;
        let entries: Vec<(usize, usize)> =
            (0..args.samples).map(|_| (rng.gen_range(0..p.m), rng.gen_range(0..p.n))).collect();
        let r = with_types!(p.a_type, p.c_type, check_item(item, &entries))?;
        worst = worst.max(r.max_err_ratio);
        checked += r.checked;
        if !r.passed() {
            mismatched.push(i);
        }
    }

    print_summary(&report, &shapes, flops);
    println!(
        "accuracy {checked} sampled entries over {} items, worst {:.3} of the allowed error: {}",
        report.items.iter().filter(|o| o.result.is_ok()).count(),
        worst,
        if mismatched.is_empty() { "ok" } else { "MISMATCH" }
    );
    if let Some(parent) = args.plot.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    let svg = gantt_svg(&report, &shapes);
    std::fs::write(&args.plot, svg).map_err(|e| format!("{}: {e}", args.plot.display()))?;
    println!("plot     {} ({} bars)", args.plot.display(), report.items.iter().filter(|o| o.trace.is_some()).count());
    if let Some(path) = &args.csv {
        std::fs::write(path, batch_csv(&report, &shapes)).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("csv      {}", path.display());
    }

    let failures: Vec<String> = report.failures().take(3).map(|(i, e)| format!("item {i}: {e}")).collect();
    if !failures.is_empty() {
        return Err(format!("{} item(s) failed; {}", report.failures().count(), failures.join("; ")));
    }
    if !mismatched.is_empty() {
        return Err(format!("items {mismatched:?} do not match the reference"));
    }
    Ok(())
}

/// Device names for tables and charts, made unique (`emu:gfx942#0`, `emu:gfx942#1`) where
/// several devices share one.
fn labels(names: &[String]) -> Vec<String> {
    names
        .iter()
        .enumerate()
        .map(|(d, n)| if names.iter().filter(|m| *m == n).count() > 1 { format!("{n}#{d}") } else { n.clone() })
        .collect()
}

/// GFLOP/s with enough digits for slow (emulated) devices.
fn gflops(flops: f64, seconds: f64) -> String {
    let rate = if seconds > 0.0 { flops / seconds / 1e9 } else { 0.0 };
    if rate >= 10.0 {
        format!("{rate:.1}")
    } else {
        format!("{rate:.4}")
    }
}

fn print_summary(report: &BatchReport, shapes: &[GemmProblem], flops: f64) {
    let labels = labels(&report.devices);
    let order = report.completion_order();
    let wall = report.wall.as_secs_f64();
    println!(
        "{:<14} {:>6} {:>10} {:>6} {:>8}  first done (rank:item)  last done",
        "device", "items", "busy ms", "util", "GFLOP/s"
    );
    for u in report.device_usage() {
        let mine: Vec<usize> = order.iter().copied().filter(|&i| report.items[i].device == Some(u.device)).collect();
        let rank = |i: usize| report.items[i].trace.map_or(0, |t| t.rank);
        let ends: Vec<String> = mine.iter().take(3).map(|&i| format!("{}:{i}", rank(i))).collect();
        let last = mine.last().map_or("-".to_string(), |&i| format!("{}:{i}", rank(i)));
        let device_flops: f64 = mine.iter().map(|&i| shapes[i].flops()).sum();
        println!(
            "{:<14} {:>6} {:>10.2} {:>5.0}% {:>8}  {:<22}  {last}",
            labels[u.device],
            u.items,
            u.busy.as_secs_f64() * 1e3,
            u.utilisation * 100.0,
            gflops(device_flops, u.busy.as_secs_f64()),
            ends.join(" ")
        );
    }
    println!("completion order (item@device, by rank):");
    for line in order.chunks(16) {
        let cells: Vec<String> =
            line.iter().filter_map(|&i| report.items[i].device.map(|d| format!("{i}@{d}"))).collect();
        println!("  {}", cells.join(" "));
    }
    println!(
        "wall     {:.3} ms for {} items, {:.3} GFLOP: {} GFLOP/s",
        wall * 1e3,
        report.items.len(),
        flops / 1e9,
        gflops(flops, wall)
    );
}

/// Colours of the dtype kinds in the chart (light enough for the bar labels to stay readable).
const PALETTE: [&str; 8] = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"];

/// The schedule as a Gantt chart: one lane per device, one bar per item from its start to its
/// finish, coloured by dtype, with the item number inside when it fits and a tooltip with details.
fn gantt_svg(report: &BatchReport, shapes: &[GemmProblem]) -> String {
    let (left, top, lane_h, width) = (90.0, 40.0, 34.0, 1100.0);
    let plot_w = width - left - 20.0;
    let lanes = report.devices.len().max(1);
    let height = top + lane_h * lanes as f64 + 70.0;
    let wall_ms = (report.wall.as_secs_f64() * 1e3).max(1e-6);
    let x = |ms: f64| left + ms / wall_ms * plot_w;
    let mut kinds: Vec<(DType, DType)> = Vec::new();
    for p in shapes {
        if !kinds.contains(&(p.a_type, p.c_type)) {
            kinds.push((p.a_type, p.c_type));
        }
    }
    let colour = |p: &GemmProblem| {
        let k = kinds.iter().position(|&k| k == (p.a_type, p.c_type)).unwrap_or(0);
        PALETTE[k % PALETTE.len()]
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{left}" y="20" font-size="14">gemm batch: {} items on {} device(s), {:.2} ms wall</text>"#,
        report.items.len(),
        report.devices.len(),
        wall_ms
    );
    // Time axis: about ten round ticks.
    let step = nice_step(wall_ms / 10.0);
    let axis_y = top + lane_h * lanes as f64;
    let mut t = 0.0;
    while t <= wall_ms + 1e-9 {
        let _ = writeln!(
            s,
            r##"<line x1="{0:.1}" y1="{top}" x2="{0:.1}" y2="{axis_y}" stroke="#ddd"/><text x="{0:.1}" y="{1}" text-anchor="middle">{2}</text>"##,
            x(t),
            axis_y + 14.0,
            fmt_ms(t)
        );
        t += step;
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{}" text-anchor="middle">time since the batch started (ms)</text>"#,
        left + plot_w / 2.0,
        axis_y + 30.0
    );
    for (d, name) in labels(&report.devices).iter().enumerate() {
        let y = top + lane_h * d as f64;
        let _ = writeln!(s, r#"<text x="8" y="{:.1}">{}</text>"#, y + lane_h / 2.0 + 4.0, xml(name));
    }
    // Items that a device ran in one call (GPU streams take several) share one interval: they
    // are stacked in the lane, in rank order, instead of drawn over each other.
    let mut calls: std::collections::HashMap<(usize, Duration, Duration), Vec<usize>> = Default::default();
    for o in &report.items {
        if let (Some(t), Some(d)) = (o.trace, o.device) {
            calls.entry((d, t.started, t.finished)).or_default().push(t.rank);
        }
    }
    for ranks in calls.values_mut() {
        ranks.sort_unstable();
    }
    for (i, (o, p)) in report.items.iter().zip(shapes).enumerate() {
        let (Some(t), Some(d)) = (o.trace, o.device) else { continue };
        let (start, end) = (t.started.as_secs_f64() * 1e3, t.finished.as_secs_f64() * 1e3);
        let (x0, w) = (x(start), (x(end) - x(start)).max(0.5));
        let call = &calls[&(d, t.started, t.finished)];
        let slot = call.iter().position(|&r| r == t.rank).unwrap_or(0);
        let bar_h = (lane_h - 6.0) / call.len() as f64;
        let y = top + lane_h * d as f64 + 3.0 + bar_h * slot as f64;
        let _ = write!(
            s,
            r##"<rect class="item" x="{x0:.2}" y="{y:.1}" width="{w:.2}" height="{:.1}" fill="{}" stroke="#333" stroke-width="0.3"><title>item {i}: {}x{}x{} {}, {:.3}..{:.3} ms, rank {}{}</title></rect>"##,
            bar_h,
            colour(p),
            p.m,
            p.n,
            p.k,
            short_dtype(p.a_type, p.c_type),
            start,
            end,
            t.rank,
            if o.result.is_ok() { "" } else { ", FAILED" }
        );
        if w >= 7.0 * (i.to_string().len() as f64) && bar_h >= 12.0 {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="white">{i}</text>"#,
                x0 + w / 2.0,
                y + bar_h / 2.0 + 4.0
            );
        }
        s.push('\n');
    }
    // Legend.
    let mut lx = left;
    for (k, &(a, c)) in kinds.iter().enumerate() {
        let _ = writeln!(
            s,
            r#"<rect x="{lx:.1}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            axis_y + 42.0,
            PALETTE[k % PALETTE.len()],
            lx + 16.0,
            axis_y + 52.0,
            short_dtype(a, c)
        );
        lx += 110.0;
    }
    s.push_str("</svg>\n");
    s
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let raw = raw.max(1e-6);
    let base = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * base).find(|&s| s >= raw).unwrap_or(10.0 * base)
}

fn fmt_ms(t: f64) -> String {
    let s = format!("{t:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn batch_csv(report: &BatchReport, shapes: &[GemmProblem]) -> String {
    let labels = labels(&report.devices);
    let mut s = String::from("item,m,n,k,a_dtype,c_dtype,device,attempts,start_ms,finish_ms,rank,result\n");
    for (i, (o, p)) in report.items.iter().zip(shapes).enumerate() {
        let device = o.device.and_then(|d| labels.get(d)).map_or("", String::as_str);
        let (start, end, rank) = match o.trace {
            Some(t) => (
                format!("{:.6}", t.started.as_secs_f64() * 1e3),
                format!("{:.6}", t.finished.as_secs_f64() * 1e3),
                t.rank.to_string(),
            ),
            None => Default::default(),
        };
        let result = match &o.result {
            Ok(()) => "ok".to_string(),
            Err(e) => format!("\"{}\"", e.to_string().replace('"', "'").replace('\n', " ")),
        };
        let _ = writeln!(
            s,
            "{i},{},{},{},{},{},{device},{},{start},{end},{rank},{result}",
            p.m, p.n, p.k, p.a_type, p.c_type, o.attempts
        );
    }
    s
}

/// `gemm tp --plan`: how the GEMM is split over the devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum PlanArg {
    /// Split N (B's columns) and all-gather C's column blocks.
    Column,
    /// Split K and sum the f32 partial products by reduce-scatter.
    #[value(alias = "row-reduce-scatter")]
    Row,
    /// Split K and sum the f32 partial products by all-reduce.
    RowAllreduce,
}

impl PlanArg {
    fn plan(self) -> TpPlan {
        match self {
            PlanArg::Column => TpPlan::Column,
            PlanArg::Row => TpPlan::Row { reduce: Reduce::ReduceScatter },
            PlanArg::RowAllreduce => TpPlan::Row { reduce: Reduce::AllReduce },
        }
    }

    fn describe(self) -> &'static str {
        match self {
            PlanArg::Column => "column (split N, all-gather C)",
            PlanArg::Row => "row (split K, f32 partials summed by reduce-scatter)",
            PlanArg::RowAllreduce => "row-allreduce (split K, f32 partials summed by all-reduce)",
        }
    }
}

#[derive(clap::Args)]
struct TpArgs {
    /// column, row (reduce-scatter) or row-allreduce.
    #[arg(long, value_enum)]
    plan: PlanArg,
    /// Rows of C and of op(A).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    m: u64,
    /// Columns of C and of op(B).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    n: u64,
    /// Columns of op(A), rows of op(B).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    k: u64,
    #[command(flatten)]
    ops: OperandArgs,
    /// Timed repetitions after one warm-up run (for the tensor-parallel and the one-device GEMM);
    /// `--reps` is the old name.
    #[arg(long, visible_alias = "reps", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    iters: u64,
    /// Entries of C compared with the reference (and between the two results, for row plans).
    #[arg(long, default_value_t = 256)]
    samples: usize,
    /// Seed of the random inputs and of the sampled entries.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Process-per-GPU tensor parallelism: start N processes, one GPU each, joined by a unique
    /// id (as a pipeline's ranks are), run the layer on each rank's shard in device memory, and
    /// print each rank's time and its check against the reference. Without GEMM_HIP_LIBRARY the
    /// ranks run on the emulated HIP runtime and RCCL.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    ranks: Option<u64>,
    /// With --ranks: print each rank's command line for a cluster launcher instead of running.
    #[arg(long, requires = "ranks")]
    print_commands: bool,
    /// With --ranks: no overlap of each chunk's collective with the next chunk's GEMM.
    #[arg(long, requires = "ranks")]
    no_overlap: bool,
}

fn tensor_parallel(ctx: &Context, args: &TpArgs) -> Result<(), String> {
    with_types!(args.ops.dtype, args.ops.out_dtype(), tp_typed(ctx, args))
}

/// Whether every GPU device of `ctx` has a catalogue kernel for `a -> c` (host devices run all).
fn missing_kernel(ctx: &Context, p: &GemmProblem) -> Option<String> {
    ctx.devices().iter().find_map(|d| match d.kind {
        DeviceKind::Hip { arch, .. } | DeviceKind::Emu { arch } => {
            gemm_dispatch::plan::kernel_plan::plan(arch, p).err().map(|why| format!("{}: {why}", d.name))
        }
        DeviceKind::Host | DeviceKind::Other(_) => None,
    })
}

/// Runs `f` once to warm up and `reps` times timed, printing a progress line per run; returns
/// the sorted times.
fn timed(
    label: &str,
    reps: usize,
    p: &GemmProblem,
    mut f: impl FnMut() -> Result<(), String>,
) -> Result<Vec<Duration>, String> {
    let mut times = Vec::with_capacity(reps);
    for it in 0..=reps {
        let start = Instant::now();
        f()?;
        let dt = start.elapsed();
        let run = if it == 0 { "warm-up".to_string() } else { format!("run {it}/{reps}") };
        eprintln!("  {label:<6} {run:<12} {:>10.3} ms  {:>8.3} TFLOP/s", ms(dt), tflops(p, 1, dt));
        if it > 0 {
            times.push(dt);
        }
    }
    times.sort();
    Ok(times)
}

fn tp_typed<A: Element, C: Element>(ctx: &Context, args: &TpArgs) -> Result<(), String> {
    let dim = |v: u64, name: &str| usize::try_from(v).map_err(|_| format!("--{name} does not fit this machine"));
    let (m, n, k) = (dim(args.m, "m")?, dim(args.n, "n")?, dim(args.k, "k")?);
    let reps = dim(args.iters, "iters")?;
    let plan = args.plan.plan();
    let p = args.ops.problem::<A, C>(m, n, k);
    let spans = p.validate().map_err(|e| e.to_string())?;
    // Row plans compute f32 partial products on every device, whatever C's dtype.
    let shard_dtype = if args.plan == PlanArg::Column { C::DTYPE } else { DType::F32 };
    if let Some(why) = missing_kernel(ctx, &p.with_dtypes(A::DTYPE, A::DTYPE, shard_dtype)) {
        let what = if args.plan == PlanArg::Column { "" } else { " (row plans compute f32 partial products)" };
        return Err(format!("{} -> {shard_dtype} is not supported on every device{what}: {why}", A::DTYPE));
    }
    let devices = ctx.device_count();
    let names = labels(&ctx.devices().into_iter().map(|d| d.name).collect::<Vec<_>>());
    eprintln!(
        "gemm tp {m}x{n}x{k} {} {}->{} on {devices} device(s) ({}), plan {}",
        args.ops.transposes(),
        A::DTYPE,
        C::DTYPE,
        names.join(", "),
        args.plan.describe()
    );

    let route = match ctx.tensor_parallel_route() {
        TpRoute::Device => {
            "device: every device is a HIP device and RCCL is available; shards live on the GPUs and RCCL \
             combines them there"
                .to_string()
        }
        TpRoute::Host { why } => {
            format!("host: GEMMs read and write host memory, an in-process collective combines them ({why})")
        }
    };
    println!("route    {route}");
    let (what, len) = if args.plan == PlanArg::Column { ("columns", n) } else { ("K", k) };
    let parts = gemm_dispatch::api::parallel::split(len, devices);
    println!("split    {} over {devices} device(s):", args.plan.describe());
    for (name, r) in names.iter().zip(&parts) {
        let note = if r.is_empty() { ", idle" } else { "" };
        println!("  {name:<14} {what} {}..{} ({}{note})", r.start, r.end, r.len());
    }

    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let a: Vec<A> = random(spans.a, &mut rng);
    let b: Vec<A> = random(spans.b, &mut rng);
    let c0: Vec<C> = random(spans.c, &mut rng);
    let mut c_tp = c0.clone();
    let tp_times = timed("tp", reps, &p, || {
        c_tp.copy_from_slice(&c0);
        ctx.gemm_tensor_parallel(plan, &p, &a, &b, &mut c_tp).map_err(|e| e.to_string())
    })?;
    let mut c_one = c0.clone();
    let one_times = timed("single", reps, &p, || {
        c_one.copy_from_slice(&c0);
        ctx.gemm_on(0, &p, &a, &b, &mut c_one).map_err(|e| e.to_string())
    })?;

    let median = |t: &[Duration]| t.get(t.len() / 2).copied().unwrap_or_default();
    let (best, med) = (tp_times[0], median(&tp_times));
    let (one_best, one_med) = (one_times[0], median(&one_times));
    println!("time     best {:.3} ms, median {:.3} ms per rep over {} reps", ms(best), ms(med), tp_times.len());
    println!(
        "speed    {:.3} TFLOP/s = {} GFLOP/s (best), {:.3} TFLOP/s (median)",
        tflops(&p, 1, best),
        gflops(p.flops(), best.as_secs_f64()),
        tflops(&p, 1, med)
    );
    let ratio = |one: Duration, tp: Duration| if tp.is_zero() { 0.0 } else { one.as_secs_f64() / tp.as_secs_f64() };
    println!(
        "single   {} alone: best {:.3} ms, median {:.3} ms, {:.3} TFLOP/s; speedup {:.2}x (best), {:.2}x (median)",
        names[0],
        ms(one_best),
        ms(one_med),
        tflops(&p, 1, one_best),
        ratio(one_best, best),
        ratio(one_med, med)
    );

    // Accuracy of the tensor-parallel result on sampled entries.
    let entries: Vec<(usize, usize)> = (0..args.samples).map(|_| (rng.gen_range(0..m), rng.gen_range(0..n))).collect();
    let report = reference::check(&p, &a, &b, &c0, &c_tp, Some(&entries)).map_err(|e| e.to_string())?;
    println!(
        "accuracy max |error| {:.3e} on {} sampled entries ({:.3} of the allowed error): {}",
        report.max_abs_err,
        report.checked,
        report.max_err_ratio,
        if report.passed() { "ok" } else { "MISMATCH" }
    );

    // Agreement with the one-device result: every entry bit for bit for the column plan (each
    // device computes whole columns of C as one device would); for row plans (K summed in
    // another order) the difference must be within the allowed error of both results.
    let c_s = p.strides(Operand::C);
    // Every entry that differs, with its |difference|.
    let mut differing: Vec<(f64, usize, usize)> = Vec::new();
    for i in 0..m {
        for j in 0..n {
            let idx = i * c_s.2 + j * c_s.3;
            let (x, y) = (c_tp[idx], c_one[idx]);
            if bytemuck::bytes_of(&x) != bytemuck::bytes_of(&y) {
                differing.push(((f64::from(x.to_f32()) - f64::from(y.to_f32())).abs(), i, j));
            }
        }
    }
    let differ = differing.len();
    let max_diff = differing.iter().map(|d| d.0).fold(0f64, f64::max);
    let agree = if args.plan == PlanArg::Column {
        let ok = differ == 0;
        println!(
            "agree    {}: {differ} of {} entries differ from one device{}",
            if ok { "bit-identical" } else { "NOT bit-identical" },
            m * n,
            if ok { String::new() } else { format!(", max |diff| {max_diff:.3e}") }
        );
        ok
    } else {
        // The tolerance is checked on the `--samples` entries that differ most and on the
        // sampled entries: each result may be off by the allowed error, so they may differ by
        // twice that.
        let keep = args.samples.max(1);
        if differing.len() > keep {
            differing.select_nth_unstable_by(keep, |x, y| y.0.total_cmp(&x.0));
            differing.truncate(keep);
        }
        let checked: Vec<(usize, usize)> =
            differing.iter().map(|&(_, i, j)| (i, j)).chain(entries.iter().copied()).collect();
        let exact = reference::exact_entries(&p, &a, &b, &c0, &checked).map_err(|e| e.to_string())?;
        let mut worst = 0f64;
        for (&(i, j), &(exact, mag)) in checked.iter().zip(&exact) {
            let idx = i * c_s.2 + j * c_s.3;
            let diff = (f64::from(c_tp[idx].to_f32()) - f64::from(c_one[idx].to_f32())).abs();
            worst = worst.max(diff / (2.0 * reference::allowed_error(&p, exact, mag)));
        }
        let ok = worst <= 1.0;
        println!(
            "agree    {}: {differ} of {} entries differ from one device, max |diff| {max_diff:.3e}; {worst:.3} of \
             the tolerance on {} entries (the {} that differ most, {} sampled)",
            if ok { "within tolerance" } else { "OUT OF TOLERANCE" },
            m * n,
            checked.len(),
            differing.len(),
            entries.len()
        );
        ok
    };
    match (report.passed(), agree) {
        (true, true) => Ok(()),
        (false, _) => Err("the tensor-parallel result does not match the reference".into()),
        (true, false) => Err("the tensor-parallel result does not agree with one device's".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every option of every command says what it is (`gemm CMD --help`): the issue that found
    /// `--m`, `--transa`, `--seed`, `--ldb`, `--stride-b` ... bare.
    #[test]
    fn every_option_has_help_text() {
        fn walk(cmd: &clap::Command, path: &str, bare: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" || arg.is_positional() && arg.get_help().is_some() {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    bare.push(format!("{path} --{}", arg.get_long().unwrap_or(id)));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), bare);
            }
        }
        let mut bare = Vec::new();
        walk(&Cli::command(), "gemm", &mut bare);
        assert!(bare.is_empty(), "options without help text:\n{}", bare.join("\n"));
    }

    #[test]
    fn copy_reasons_name_their_operand() {
        assert_eq!(super::copies("lds-dma", "lds-dma"), "A and B: lds-dma");
        assert_eq!(super::copies("lds-dma", "register-staged: x"), "A: lds-dma; B: register-staged: x");
    }

    /// `--devices` help names every kind of device, `emu:` included.
    #[test]
    fn the_devices_help_names_every_kind() {
        let cmd = Cli::command();
        let arg = cmd.get_arguments().find(|a| a.get_id() == "devices").unwrap();
        let help = arg.get_help().unwrap().to_string();
        for kind in ["host", "hip", "emu:gfx942", "emu:gfx950"] {
            assert!(help.contains(kind), "{help}");
        }
    }
}
