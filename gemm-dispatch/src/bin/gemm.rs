//! `gemm`: the command-line face of the library.
//!
//! * `gemm devices`: what devices exist and why others do not.
//! * `gemm run --m 2048 --n 2048 --k 2048 [--dtype bf16] [--batch N] [--transa] [--transb]`: runs
//!   on the best device (or `--devices`), prints time, TFLOP/s and the error against the f64
//!   reference on a sample of entries.
//! * `gemm kernels`: the GPU kernel catalogue.

use clap::{Parser, Subcommand};
use gemm_core::reference;
use gemm_core::{
    bf16, f16, DType, Element, Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz, GemmProblem, StridedBatch, Transpose,
};
use gemm_dispatch::Context;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(name = "gemm", version, about = "Fast matrix products on AMD Instinct GPUs, with a CPU backend everywhere")]
struct Cli {
    /// Devices to use, e.g. `host` or `host,host,host` (default: $GEMM_DEVICES, else the best available).
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
    /// Run any kernel of any code object in the gfx942/gfx950 emulator, with its checkers.
    Emulate(gemm_emu::cli::EmulateArgs),
    /// List the GPU kernel catalogue, or disassemble one kernel.
    Kernels {
        /// Print this kernel's instructions (LLVM syntax) instead of the list.
        #[arg(long, value_name = "NAME")]
        disasm: Option<String>,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    #[arg(long)]
    m: usize,
    #[arg(long)]
    n: usize,
    #[arg(long)]
    k: usize,
    /// Input dtype: f32, f16, bf16, fp8_e4m3fnuz, fp8_e5m2fnuz, fp8_e4m3, fp8_e5m2.
    #[arg(long, default_value = "f32")]
    dtype: DType,
    /// Output dtype (default: the input dtype for f32/f16/bf16, f32 for fp8).
    #[arg(long)]
    out_dtype: Option<DType>,
    /// Number of GEMMs in a strided batch.
    #[arg(long, default_value_t = 1)]
    batch: usize,
    #[arg(long)]
    transa: bool,
    #[arg(long)]
    transb: bool,
    #[arg(long, default_value_t = 1.0)]
    alpha: f32,
    #[arg(long, default_value_t = 0.0)]
    beta: f32,
    /// Timed repetitions after one warm-up run.
    #[arg(long, default_value_t = 5)]
    iters: usize,
    /// Entries of C compared with the reference (per batch item checked).
    #[arg(long, default_value_t = 256)]
    samples: usize,
    #[arg(long, default_value_t = 42)]
    seed: u64,
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
        Command::Kernels { disasm: None } => {
            kernels();
            Ok(())
        }
        Command::Kernels { disasm: Some(name) } => disassemble(&name),
        Command::Run(args) => run(&ctx, &args),
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
    let found = gemm_dispatch::hip::discover();
    if !found.notes.is_empty() {
        println!("not used:");
        for note in &found.notes {
            println!("  {note}");
        }
    }
}

fn kernels() {
    let all = gemm_kernels::catalogue();
    if all.is_empty() {
        println!("the GPU kernel catalogue is empty: no kernels are built into this version");
        return;
    }
    println!("{:<58} {:<7} {:<20} {:<12} {:>5} {:>6}  schedule", "name", "arch", "dtypes", "tile", "waves", "stages");
    for k in all {
        println!(
            "{:<58} {:<7} {:<20} {:<12} {:>5} {:>6}  {}",
            k.name,
            k.arch,
            format!("{}x{}->{}", k.a_type, k.b_type, k.c_type),
            format!("{}x{}x{}", k.tile.0, k.tile.1, k.tile.2),
            k.waves,
            k.stages,
            k.schedule
        );
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

fn run(ctx: &Context, args: &RunArgs) -> Result<(), String> {
    let out = args.out_dtype.unwrap_or(if args.dtype.is_fp8() { DType::F32 } else { args.dtype });
    macro_rules! go {
        ($a:ty, $c:ty) => {
            run_typed::<$a, $c>(ctx, args)
        };
    }
    macro_rules! with_out {
        ($a:ty) => {
            match out {
                DType::F32 => go!($a, f32),
                DType::F16 => go!($a, f16),
                DType::Bf16 => go!($a, bf16),
                other => Err(format!("output dtype {other} is not supported")),
            }
        };
    }
    match args.dtype {
        DType::F32 => with_out!(f32),
        DType::F16 => with_out!(f16),
        DType::Bf16 => with_out!(bf16),
        DType::Fp8E4M3Fnuz => with_out!(Fp8E4M3Fnuz),
        DType::Fp8E5M2Fnuz => with_out!(Fp8E5M2Fnuz),
        DType::Fp8E4M3 => with_out!(Fp8E4M3),
        DType::Fp8E5M2 => with_out!(Fp8E5M2),
    }
}

/// Values spread over [-1, 1), in the input type.
fn random<T: Element>(len: usize, rng: &mut ChaCha8Rng) -> Vec<T> {
    (0..len).map(|_| T::from_f32(rng.gen_range(-1.0f32..1.0))).collect()
}

fn run_typed<A: Element, C: Element>(ctx: &Context, args: &RunArgs) -> Result<(), String> {
    let p = GemmProblem::new(args.m, args.n, args.k)
        .with_elements::<A, A, C>()
        .with_transposes(Transpose::from_bool(args.transa), Transpose::from_bool(args.transb))
        .with_scalars(args.alpha, args.beta);
    let batch = StridedBatch { problem: p, count: args.batch.max(1), stride_a: 0, stride_b: 0, stride_c: 0 };
    let item = p.validate().map_err(|e| e.to_string())?;
    let batch = StridedBatch { stride_a: item.a, stride_b: item.b, stride_c: item.c, ..batch };
    let spans = batch.validate().map_err(|e| e.to_string())?;
    let gib = (spans.a * A::DTYPE.size_bytes() * 2 + spans.c * C::DTYPE.size_bytes() * 2) as f64 / (1u64 << 30) as f64;
    eprintln!(
        "gemm {}x{}x{} {}{} {}->{} batch {} on {} device(s); {:.2} GiB of buffers",
        args.m,
        args.n,
        args.k,
        if args.transa { "T" } else { "N" },
        if args.transb { "T" } else { "N" },
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

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn tflops(p: &GemmProblem, count: usize, d: Duration) -> f64 {
    if d.is_zero() {
        return 0.0;
    }
    p.flops() * count as f64 / d.as_secs_f64() / 1e12
}
