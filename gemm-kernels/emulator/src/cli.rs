//! The `gemm-emulate` / `gemm emulate` command: run any kernel of any code object on buffers
//! filled from a seed and print results, checker reports and instruction counts by class.
//!
//! ```text
//! gemm-emulate vadd.co --kernel vadd --grid 4 --block 256 \
//!     --buffer 4096 --buffer 4096 --buffer 4096 --args b0,b1,b2,u32:1000 --dump 2:8
//! ```
//!
//! `gemm model` takes the same arguments plus the work done (`--flops` or `--gemm M,N,K`)
//! and prints the timing model's prediction (`crate::timing`), optionally with a
//! per-wave Chrome trace (`--trace FILE`), and when a SIMD runs two waves of a workgroup,
//! whether they alternate between MFMA clusters and memory (`timing::alternation`).

use crate::timing::{Model, ModelOptions, Workload};
use crate::{Arch, Device, LaunchOptions, Mode, Schedule};
use gemm_core::{DType, Element};
use rand::{Rng, SeedableRng};

/// Arguments of `gemm-emulate` and `gemm emulate`.
#[derive(clap::Args, Debug)]
pub struct EmulateArgs {
    /// The code object (ELF) file.
    pub code_object: std::path::PathBuf,
    /// Kernel name (default: the first kernel).
    #[arg(long)]
    pub kernel: Option<String>,
    /// gfx942 or gfx950 (default: the code object's target).
    #[arg(long)]
    pub arch: Option<String>,
    /// Workgroups per dimension: x[,y[,z]].
    #[arg(long, default_value = "1")]
    pub grid: String,
    /// Work-items per workgroup: x[,y[,z]].
    #[arg(long, default_value = "64")]
    pub block: String,
    /// A device buffer of this many bytes, filled with random f32 in [-1, 1) from the seed
    /// (repeat for more buffers; refer to them as b0, b1, ... in --args).
    #[arg(long)]
    pub buffer: Vec<u64>,
    /// Kernel arguments, comma separated: bN (buffer address), u32:V, i32:V, f32:V, u64:V.
    #[arg(long, default_value = "")]
    pub args: String,
    /// Seed for buffer contents and the scheduler.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Scheduling mode: fair, random, longest-latency, reversed.
    #[arg(long, default_value = "fair")]
    pub mode: String,
    /// Print buffer contents as f32 after the run: BUF:COUNT (repeatable).
    #[arg(long)]
    pub dump: Vec<String>,
    /// Disable the LDS race detector.
    #[arg(long)]
    pub no_race: bool,
    /// Bytes of dynamic LDS on top of the kernel's static size (HIP's `sharedMemBytes`).
    #[arg(long, default_value_t = 0)]
    pub dynamic_lds: u32,
    /// What --buffer holds: random values of this dtype in [-1, 1) (f32, f16, bf16,
    /// fp8_e4m3fnuz, fp8_e5m2fnuz, fp8_e4m3, fp8_e5m2), or `zero`.
    #[arg(long, default_value = "f32")]
    pub fill: String,
}

/// Arguments of `gemm model`: a launch as for `gemm emulate`, plus the work it does.
#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    #[command(flatten)]
    pub launch: EmulateArgs,
    /// Floating-point operations of the launch (for TFLOP/s).
    #[arg(long)]
    pub flops: Option<f64>,
    /// The launch is an M x N x K GEMM: flops = 2*M*N*K.
    #[arg(long, value_name = "M,N,K")]
    pub gemm: Option<String>,
    /// Write the simulated CU's per-wave timeline as Chrome trace JSON (Perfetto).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<std::path::PathBuf>,
    /// Engine clock in MHz (default: the clock under the kernel's own matrix load, timing/params.rs).
    #[arg(long)]
    pub clock: Option<f64>,
    /// Run the MFMA arithmetic too (slower; the default skips it).
    #[arg(long)]
    pub full_math: bool,
    /// Print the parameter table (value and source of every number) first.
    #[arg(long)]
    pub params: bool,
}

fn dims(s: &str) -> Result<[u32; 3], String> {
    let v: Vec<u32> =
        s.split(',').map(|x| x.trim().parse::<u32>().map_err(|e| format!("{s}: {e}"))).collect::<Result<_, _>>()?;
    Ok([v.first().copied().unwrap_or(1), v.get(1).copied().unwrap_or(1), v.get(2).copied().unwrap_or(1)])
}

fn progress(done: usize, total: usize) {
    if total >= 64 && (done.is_multiple_of((total / 16).max(1)) || done == total) {
        eprintln!("  {done}/{total} workgroups");
    }
}

/// Random bytes of `n` elements of `T` in [-1, 1).
fn fill_typed<T: Element>(n: u64, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<u8> {
    let v: Vec<T> = (0..n).map(|_| T::from_f32(rng.gen_range(-1.0f32..1.0))).collect();
    bytemuck::cast_slice(&v).to_vec()
}

fn fill(kind: &str, size: u64, rng: &mut rand_chacha::ChaCha8Rng) -> Result<Vec<u8>, String> {
    if kind == "zero" {
        return Ok(vec![0u8; size as usize]);
    }
    let d: DType = kind.parse().map_err(|e| format!("--fill {kind}: {e}"))?;
    let Some(elem) = d.byte_size() else {
        return Err(format!("--fill {kind}: a sub-byte (packed) dtype; fill with `zero` or an 8-bit type"));
    };
    let n = size / elem as u64;
    let mut b = match d {
        DType::F32 => fill_typed::<f32>(n, rng),
        DType::F16 => fill_typed::<gemm_core::f16>(n, rng),
        DType::Bf16 => fill_typed::<gemm_core::bf16>(n, rng),
        DType::Fp8E4M3Fnuz => fill_typed::<gemm_core::Fp8E4M3Fnuz>(n, rng),
        DType::Fp8E5M2Fnuz => fill_typed::<gemm_core::Fp8E5M2Fnuz>(n, rng),
        DType::Fp8E4M3 => fill_typed::<gemm_core::Fp8E4M3>(n, rng),
        DType::Fp8E5M2 => fill_typed::<gemm_core::Fp8E5M2>(n, rng),
        DType::Fp6E2M3 | DType::Fp6E3M2 | DType::Fp4E2M1 => unreachable!("refused above: no byte size"),
    };
    b.resize(size as usize, 0);
    Ok(b)
}

/// A device with the command line's buffers and kernel arguments.
struct Prepared {
    bytes: Vec<u8>,
    arch: Arch,
    kernel: String,
    dev: Device,
    bufs: Vec<(u64, u64)>,
    ka: Vec<u8>,
}

fn prepare(cli: &EmulateArgs) -> Result<Prepared, String> {
    let bytes = std::fs::read(&cli.code_object).map_err(|e| format!("{}: {e}", cli.code_object.display()))?;
    let co = gemm_codeobject::CodeObject::parse(&bytes).map_err(|e| e.to_string())?;
    let arch = match cli.arch.as_deref().or(co.arch().map(|a| a.name())) {
        Some("gfx942") => Arch::Gfx942,
        Some("gfx950") => Arch::Gfx950,
        other => return Err(format!("unknown or missing arch {other:?} (use --arch)")),
    };
    let kernel = match &cli.kernel {
        Some(k) => k.clone(),
        None => co.kernels.first().map(|k| k.name.clone()).ok_or("no kernels in the code object")?,
    };
    let dev = Device::new(arch);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(cli.seed);
    let mut bufs = Vec::new();
    for &size in &cli.buffer {
        let p = dev.alloc(size).map_err(|e| e.to_string())?;
        if cli.fill != "zero" {
            dev.copy_in(p, &fill(&cli.fill, size, &mut rng)?).map_err(|e| e.to_string())?;
        }
        bufs.push((p, size));
    }
    let mut ka: Vec<u8> = Vec::new();
    for a in cli.args.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        let align = |ka: &mut Vec<u8>, n: usize| {
            while !ka.len().is_multiple_of(n) {
                ka.push(0)
            }
        };
        if let Some(i) = a.strip_prefix('b') {
            let i: usize = i.parse().map_err(|_| format!("bad argument {a}"))?;
            let (p, _) = bufs.get(i).ok_or(format!("no buffer {i}"))?;
            align(&mut ka, 8);
            ka.extend_from_slice(&p.to_le_bytes());
        } else if let Some((ty, v)) = a.split_once(':') {
            let err = |_| format!("bad argument {a}");
            match ty {
                "u32" => {
                    align(&mut ka, 4);
                    ka.extend_from_slice(&v.parse::<u32>().map_err(|_| format!("bad {a}"))?.to_le_bytes())
                }
                "i32" => {
                    align(&mut ka, 4);
                    ka.extend_from_slice(&v.parse::<i32>().map_err(|_| format!("bad {a}"))?.to_le_bytes())
                }
                "f32" => {
                    align(&mut ka, 4);
                    ka.extend_from_slice(&v.parse::<f32>().map_err(|_| format!("bad {a}"))?.to_le_bytes())
                }
                "u64" => {
                    align(&mut ka, 8);
                    ka.extend_from_slice(&v.parse::<u64>().map_err(err)?.to_le_bytes())
                }
                _ => return Err(format!("bad argument type in {a}")),
            }
        } else {
            return Err(format!("bad argument {a}"));
        }
    }
    Ok(Prepared { bytes, arch, kernel, dev, bufs, ka })
}

/// Runs the kernel and prints its report; `Ok(false)` when a checker found something.
pub fn run(cli: EmulateArgs) -> Result<bool, String> {
    let Prepared { bytes, arch, kernel, dev, bufs, ka } = prepare(&cli)?;
    let mode = Mode::parse(&cli.mode).ok_or_else(|| format!("unknown mode {}", cli.mode))?;
    let opts = LaunchOptions {
        schedule: Schedule { mode, seed: cli.seed },
        race_detector: !cli.no_race,
        dynamic_lds: cli.dynamic_lds,
        progress: Some(progress),
        ..Default::default()
    };
    eprintln!(
        "running {kernel} on {arch}, grid {}, block {}, mode {}, seed {}",
        cli.grid,
        cli.block,
        mode.name(),
        cli.seed
    );
    let report =
        dev.launch_with(&bytes, &kernel, dims(&cli.grid)?, dims(&cli.block)?, &ka, &opts).map_err(|e| e.to_string())?;
    print!("{report}");
    for d in &cli.dump {
        let (b, n) = d.split_once(':').ok_or(format!("bad --dump {d}"))?;
        let i: usize = b.trim_start_matches('b').parse().map_err(|_| format!("bad --dump {d}"))?;
        let n: u64 = n.parse().map_err(|_| format!("bad --dump {d}"))?;
        let (p, size) = bufs.get(i).ok_or(format!("no buffer {i}"))?;
        let n = n.min(size / 4);
        let mut out = vec![0u8; 4 * n as usize];
        dev.copy_out(*p, &mut out).map_err(|e| e.to_string())?;
        let vals: Vec<String> =
            out.chunks_exact(4).map(|c| format!("{}", f32::from_le_bytes([c[0], c[1], c[2], c[3]]))).collect();
        println!("b{i}[0..{n}]: {}", vals.join(" "));
    }
    Ok(report.reports.is_empty())
}

/// Parses `M,N,K` into the GEMM's flop count 2*M*N*K.
pub fn gemm_flops(s: &str) -> Result<f64, String> {
    let v: Vec<f64> = s
        .split(',')
        .map(|x| x.trim().parse::<u64>().map(|v| v as f64).map_err(|e| format!("--gemm {s}: {e}")))
        .collect::<Result<_, _>>()?;
    match v.as_slice() {
        [m, n, k] => Ok(2.0 * m * n * k),
        _ => Err(format!("--gemm wants M,N,K, got {s}")),
    }
}

/// `gemm model`: predicts the launch's time and prints the report.
pub fn model(cli: ModelArgs) -> Result<(), String> {
    let flops = match (&cli.flops, &cli.gemm) {
        (Some(f), None) => *f,
        (None, Some(g)) => gemm_flops(g)?,
        (None, None) => return Err("say the work done: --flops F or --gemm M,N,K".into()),
        (Some(_), Some(_)) => return Err("--flops and --gemm are exclusive".into()),
    };
    let Prepared { bytes, arch, kernel, dev, ka, .. } = prepare(&cli.launch)?;
    let model = Model::new(arch);
    if cli.params {
        print_params(model.params());
    }
    let w = Workload {
        code_object: &bytes,
        kernel: &kernel,
        grid: dims(&cli.launch.grid)?,
        block: dims(&cli.launch.block)?,
        kernarg: &ka,
        dynamic_lds: cli.launch.dynamic_lds,
        flops,
    };
    let opts = ModelOptions {
        timing_only: !cli.full_math,
        clock_mhz: cli.clock,
        // Spans also feed the alternation analysis printed below.
        trace_spans: 200_000,
        ..Default::default()
    };
    let t0 = std::time::Instant::now();
    let p = model.predict(dev.memory(), &w, &opts).map_err(|e| e.to_string())?;
    print!("{p}");
    // Two waves of a workgroup on a SIMD (ping-pong): do they take turns on the MFMA pipe?
    print!("{}", crate::timing::alternation::analyse(&p));
    println!("  (model wall time {:.2} s)", t0.elapsed().as_secs_f64());
    if let Some(path) = &cli.trace {
        std::fs::write(path, crate::timing::trace::chrome_trace(&p)).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("  trace: {} ({} spans; open in https://ui.perfetto.dev)", path.display(), p.spans.len());
    }
    Ok(())
}

/// Prints the parameter table of an arch.
pub fn print_params(p: &crate::timing::Params) {
    println!("timing-model parameters for {} ({}):", p.product, p.arch);
    for r in p.rows() {
        println!("  {:<44} {:>12} {:<6} {} {}", r.name, format!("{}", r.value), r.unit, r.tag.mark(), r.source);
    }
}
