//! `gemm decode`: the decode table of issue 23. For the Linear layers of Llama-3.1-8B and of an
//! 8-way tensor-parallel shard of Llama-3.1-70B (`../shared/reference/DECODE.md`), at M = 1..256
//! tokens, bf16 and fp8, on both archs: what the runtime runs (`plan_gemm`: the kernel the
//! characterisation table ranks first and any split) predicted by the timing model, launch by
//! launch, beside the compulsory bytes at peak HBM (the memory floor, cold weights) and the plan
//! the dispatcher made before the decode kernels existed (its best non-decode kernel and split),
//! predicted the same way. With `--published`, the 14 M = 1 f16 shapes of ROCm/rocm-libraries
//! pull request 12329 on gfx942 beside their measured wvSpltK and hipBLASLt times (MI300X).
//!
//! Every time here is a **prediction of the timing model**; only the published column is a
//! measurement. The row-major problem is `Y (M x N) = X (M x K) W^T`, W of `N x K` row-major (a
//! Linear layer): the column-major kernels compute `Y^T (N x M)` as A^T B with the weights as A
//! (K-contiguous rows) and the activations as B.

use gemm_compiler::ir::KernelConfig;
use gemm_compiler::{compile, kernel_args, CompiledKernel};
use gemm_core::{Arch, DType, GemmProblem, Layout, Transpose};
use gemm_dispatch::plan::choice;
use gemm_dispatch::plan::gemm_plan::{plan_gemm, GemmPlan};
use std::fmt::Write as _;

/// `gemm decode`.
#[derive(clap::Args, Debug, Clone)]
pub struct DecodeArgs {
    /// gfx942 or gfx950 (default: both).
    #[arg(long)]
    pub arch: Option<Arch>,
    /// Input dtypes: `bf16`, `f16`, `fp8` (e4m3 of the arch: FNUZ on gfx942, OCP on gfx950).
    #[arg(long, value_delimiter = ',', default_values_t = ["bf16".to_string(), "fp8".to_string()])]
    pub dtypes: Vec<String>,
    /// Tokens (rows of X).
    #[arg(long, value_delimiter = ',', default_values_t = [1usize, 2, 4, 8, 16, 32, 64, 128, 256])]
    pub m: Vec<usize>,
    /// Only the layers whose name contains this (e.g. `8B`, `70B`, `gate_up`).
    #[arg(long)]
    pub only: Option<String>,
    /// Also predict the plan without decode kernels (the dispatcher before them).
    #[arg(long)]
    pub before: bool,
    /// Print the published M = 1 shapes (MI300X, f16) instead of the model table.
    #[arg(long)]
    pub published: bool,
    /// Print the mixture-of-experts rows instead: grouped decode in one launch (8 experts x 16
    /// tokens x 28672 x 4096; 64 experts x 4 tokens x 4096 x 7168 with every fourth expert
    /// empty), bf16, both archs, against the floor of the weights the tokens touch.
    #[arg(long)]
    pub moe: bool,
    /// With `--moe`: predict grouped twins of candidate decode shapes (every `DECODE_SHAPES`
    /// entry and the 16-column decode-rows shapes of 1, 2 or 4 row blocks, 2, 4 or 8 waves and
    /// 2, 4 or 8 loads), compiled here, on the mixture-of-experts rows: how the grouped
    /// catalogue shapes were chosen (gemm-compiler `catalogue.rs`).
    #[arg(long)]
    pub sweep: bool,
    /// Threads for the predictions (default: every hardware thread).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// The Linear layers of the table: name, N (output features), K (input features).
pub const LAYERS: &[(&str, usize, usize)] = &[
    ("8B qkv", 6144, 4096),
    ("8B o", 4096, 4096),
    ("8B gate_up", 28672, 4096),
    ("8B down", 4096, 14336),
    ("70B/8 qkv", 1280, 8192),
    ("70B/8 o", 8192, 1024),
    ("70B/8 gate_up", 7168, 8192),
    ("70B/8 down", 8192, 3584),
];

/// ROCm/rocm-libraries pull request 12329 (DECODE.md): N, K, hipBLASLt us, wvSpltK us on MI300X.
pub const PUBLISHED: &[(usize, usize, f64, f64)] = &[
    (13312, 17792, 118.96, 101.95),
    (76032, 13312, 497.12, 415.90),
    (38016, 13312, 255.54, 218.97),
    (35584, 13312, 244.15, 204.59),
    (19968, 13312, 131.58, 124.36),
    (19008, 13312, 121.30, 110.44),
    (17792, 13312, 123.39, 102.21),
    (9984, 13312, 72.50, 65.60),
    (8896, 13312, 71.12, 51.32),
    (4992, 13312, 43.31, 26.16),
    (8192, 12288, 61.53, 42.34),
    (4096, 11008, 32.77, 22.29),
    (13312, 8896, 71.85, 52.52),
    (76032, 8192, 315.77, 303.87),
];

/// The row-major Linear problem `Y = X W^T` of `m` tokens, `n x k` weights.
pub fn linear(m: usize, n: usize, k: usize, ab: DType, c: DType) -> GemmProblem {
    GemmProblem::new(m, n, k)
        .with_layout(Layout::RowMajor)
        .with_transposes(Transpose::No, Transpose::Yes)
        .with_dtypes(ab, ab, c)
}

/// The input and output dtypes of `bf16`, `f16`, `fp8` (e4m3 of the arch, C bf16).
pub fn dtype_of(name: &str, arch: Arch) -> Result<(DType, DType), String> {
    match (name, arch) {
        ("bf16", _) => Ok((DType::Bf16, DType::Bf16)),
        ("f16", _) => Ok((DType::F16, DType::F16)),
        ("fp8", Arch::Gfx942) => Ok((DType::Fp8E4M3Fnuz, DType::Bf16)),
        ("fp8", Arch::Gfx950) => Ok((DType::Fp8E4M3, DType::Bf16)),
        _ => Err(format!("--dtypes {name}: expected bf16, f16 or fp8")),
    }
}

/// The timing model's prediction of every launch of `plan` (seconds, summed).
pub fn predict_gemm_plan(plan: &GemmPlan, p: &GemmProblem) -> Result<f64, String> {
    let opts = gemm_emu::timing::ModelOptions::default();
    crate::model::predict_gemm_launches(plan, p, &opts).map(|xs| xs.iter().map(|x| x.seconds).sum())
}

/// The plan the dispatcher made before the decode kernels: the table's best tiled kernel
/// (`choice::choose_tiled`) and the split it would take.
pub fn plan_without_decode(arch: Arch, p: &GemmProblem) -> Result<GemmPlan, String> {
    let kernel = choice::choose_tiled(arch, p)?;
    let split = gemm_dispatch::plan::splitk::choose(arch, p, Some(&kernel)).ok();
    Ok(GemmPlan { kernel, split, prepass: None })
}

/// A short description of a plan: the kernel's family and tile, and the split.
pub fn describe(plan: &GemmPlan) -> String {
    let e = plan.kernel.entry;
    let pre = plan.prepass.map_or(String::new(), |t| format!("transpose {} + ", t.operand));
    pre + &match &plan.split {
        Some(sp) => format!(
            "{}x{}x{} {} split {}",
            sp.partial.tile.0, sp.partial.tile.1, sp.partial.tile.2, sp.partial.schedule, sp.splits
        ),
        None => format!("{}x{}x{} {}", e.tile.0, e.tile.1, e.tile.2, e.schedule),
    }
}

/// One row of the table.
struct Row {
    line: String,
    arch: Arch,
    dtype: DType,
    name: &'static str,
    m: usize,
    /// Predicted seconds of the runtime's plan and of the plan before decode kernels.
    t: Option<f64>,
    before: Option<f64>,
    /// The memory floor (cold weights at peak HBM), seconds.
    floor: f64,
}

/// The model's streaming ceiling for reads: HBM peak times the model's achieved fraction of it
/// (`Params::hbm_efficiency`, from the published MI300X GEMV rates of ROCm/rocm-libraries pull
/// request 12329). Issue 23's bar is 90% of this ceiling at M <= 64; a prediction's share of it is
/// its share of the floor divided by the fraction.
fn ceiling_fraction(arch: Arch) -> f64 {
    gemm_emu::timing::params::Params::for_arch(arch).hbm_efficiency
}

/// Runs `gemm decode`.
pub fn run(args: &DecodeArgs) -> Result<(), String> {
    let t0 = std::time::Instant::now();
    let jobs = args.jobs.unwrap_or_else(crate::jobs::default_jobs);
    if args.published {
        return published(jobs);
    }
    if args.moe && args.sweep {
        return moe_sweep(args, jobs);
    }
    if args.moe {
        return moe(args, jobs);
    }
    let archs: Vec<Arch> = args.arch.map_or_else(|| Arch::ALL.to_vec(), |a| vec![a]);
    let mut work = vec![];
    for &arch in &archs {
        for d in &args.dtypes {
            let (ab, c) = dtype_of(d, arch)?;
            for &(name, n, k) in LAYERS.iter().filter(|l| args.only.as_deref().is_none_or(|o| l.0.contains(o))) {
                for &m in &args.m {
                    work.push((arch, ab, c, name, m, n, k));
                }
            }
        }
    }
    eprintln!("decode table: {} problems on {jobs} thread(s)", work.len());
    let done = std::sync::atomic::AtomicUsize::new(0);
    let rows = crate::jobs::map_jobs(&work, jobs, |&(arch, ab, c, name, m, n, k)| {
        let p = linear(m, n, k, ab, c);
        let fl = gemm_dispatch::plan::bounds::floor(arch, &p, false);
        let mut line = format!("{:<7} {:<14} {:<5} {:>4} ", arch.name(), name, ab.to_string(), m);
        let (mut t_now, mut t_before) = (None, None);
        match plan_gemm(arch, arch.caps().compute_units, &p) {
            Ok(Some(plan)) => match predict_gemm_plan(&plan, &p) {
                Ok(t) => {
                    t_now = Some(t);
                    let _ = write!(
                        line,
                        "{:>10.2} {:>10.2} {:>6.0}% {:>6.0}%  {:<40}",
                        t * 1e6,
                        fl.memory_seconds * 1e6,
                        100.0 * fl.memory_seconds / t,
                        100.0 * fl.memory_seconds / t / ceiling_fraction(arch),
                        describe(&plan)
                    );
                }
                Err(e) => {
                    let _ = write!(line, "no prediction: {e}");
                }
            },
            Ok(None) => line.push_str("empty"),
            Err(e) => {
                let _ = write!(line, "no plan: {e}");
            }
        }
        if args.before {
            match plan_without_decode(arch, &p).and_then(|pl| predict_gemm_plan(&pl, &p).map(|t| (pl, t))) {
                Ok((pl, t)) => {
                    t_before = Some(t);
                    let _ = write!(line, " {:>10.2}  {}", t * 1e6, describe(&pl));
                }
                Err(e) => {
                    let _ = write!(line, " (before: {e})");
                }
            }
        }
        let d = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        eprintln!("  [{d}/{}] {}", work.len(), line.trim_end());
        Row { line, arch, dtype: ab, name, m, t: t_now, before: t_before, floor: fl.memory_seconds }
    });
    println!("Decode GEMMs Y = X W^T (row-major, W of N x K): timing-model predictions; floor = A+B+C once at peak HBM (cold weights)");
    println!(
        "{:<7} {:<14} {:<5} {:>4} {:>10} {:>10} {:>7} {:>7}  {:<40}{}",
        "arch",
        "layer (NxK)",
        "dtype",
        "M",
        "us",
        "floor us",
        "floor%",
        "ceil%",
        "plan",
        if args.before { " before us  before plan" } else { "" }
    );
    for r in &rows {
        println!("{}", r.line);
    }
    print!("{}", summary(&rows));
    println!("wall time: {:.1} s", t0.elapsed().as_secs_f64());
    Ok(())
}

/// Issue 23's bars per arch and dtype: rows with M <= 64 at 90% or more of the model's
/// streaming ceiling (`ceil%`), all of them and those of the layers whose weights pass 96 MiB
/// (none of the table's layers passes the 256 MiB Infinity Cache of MI300X/MI355X, so the issue's
/// "weights larger than the Infinity Cache" is read as the layers where weight streaming dominates
/// the floor), and every row the runtime's plan predicts slower than the plan before decode kernels.
fn summary(rows: &[Row]) -> String {
    let mut out =
        String::from("\nM <= 64: rows at >= 90% of the streaming ceiling (HBM peak x the model's achieved fraction)\n");
    let mut keys: Vec<(Arch, DType)> = vec![];
    for r in rows {
        if !keys.contains(&(r.arch, r.dtype)) {
            keys.push((r.arch, r.dtype));
        }
    }
    for (arch, dtype) in keys {
        let of = |big: bool| {
            let sel: Vec<&Row> = rows
                .iter()
                .filter(|r| r.arch == arch && r.dtype == dtype && r.m <= 64)
                .filter(|r| !big || large_layer(r.name, dtype))
                .collect();
            let hit = sel.iter().filter(|r| r.t.is_some_and(|t| r.floor / t / ceiling_fraction(arch) >= 0.9)).count();
            (hit, sel.len())
        };
        let (all_hit, all) = of(false);
        let (big_hit, big) = of(true);
        let _ = writeln!(
            out,
            "  {:<7} {:<13} all layers {all_hit}/{all}; weights > 96 MiB {big_hit}/{big}",
            arch.name(),
            dtype.to_string()
        );
    }
    let slower: Vec<String> = rows
        .iter()
        .filter_map(|r| match (r.t, r.before) {
            (Some(t), Some(b)) if t > b * 1.0005 => Some(format!(
                "{} {} {} M={}: {:.2} us against {:.2}",
                r.arch.name(),
                r.name,
                r.dtype,
                r.m,
                t * 1e6,
                b * 1e6
            )),
            _ => None,
        })
        .collect();
    if rows.iter().any(|r| r.before.is_some()) {
        let _ = writeln!(out, "rows slower than the plan before decode kernels: {}", slower.len());
        for s in slower {
            let _ = writeln!(out, "  {s}");
        }
    }
    out
}

/// Whether a layer's weights pass 96 MiB in this dtype (the summary's large layers).
fn large_layer(name: &str, dtype: DType) -> bool {
    LAYERS
        .iter()
        .find(|l| l.0 == name)
        .is_some_and(|&(_, n, k)| (n * k * dtype.size_bytes()) as f64 > 96.0 * 1024.0 * 1024.0)
}

/// The published M = 1 shapes against the runtime's plan on gfx942 (f16 -> f16).
fn published(jobs: usize) -> Result<(), String> {
    let arch = Arch::Gfx942;
    let rows = crate::jobs::map_jobs(PUBLISHED, jobs, |&(n, k, hipblaslt, wv)| {
        let p = linear(1, n, k, DType::F16, DType::F16);
        let fl = gemm_dispatch::plan::bounds::floor(arch, &p, false);
        let r = plan_gemm(arch, arch.caps().compute_units, &p)
            .and_then(|pl| pl.ok_or_else(|| "empty".to_string()))
            .and_then(|pl| predict_gemm_plan(&pl, &p).map(|t| (t, describe(&pl))));
        eprintln!("  {n}x{k}: {:?}", r.as_ref().map(|x| x.0 * 1e6));
        (n, k, hipblaslt, wv, fl.memory_seconds, r)
    });
    println!("gfx942 f16 M = 1 (Y = x W^T): ours = timing-model prediction; wvSpltK and hipBLASLt = published MI300X measurements (ROCm/rocm-libraries PR 12329)");
    println!(
        "{:>6} {:>6} {:>10} {:>10} {:>9} {:>9} {:>10} {:>8}  plan",
        "N", "K", "ours us", "floor us", "wvSpltK", "hipBLASLt", "ours/wv", "floor%"
    );
    let mut logs = (0.0, 0usize);
    for (n, k, hb, wv, floor, r) in rows {
        match r {
            Ok((t, plan)) => {
                logs.0 += (t * 1e6 / wv).ln();
                logs.1 += 1;
                println!(
                    "{n:>6} {k:>6} {:>10.2} {:>10.2} {wv:>9.2} {hb:>9.2} {:>10.3} {:>7.0}%  {plan}{}",
                    t * 1e6,
                    floor * 1e6,
                    t * 1e6 / wv,
                    100.0 * floor / t,
                    if t * 1e6 < hb { "" } else { "  (not below hipBLASLt)" }
                );
            }
            Err(e) => println!("{n:>6} {k:>6} no prediction: {e}"),
        }
    }
    if logs.1 > 0 {
        println!("geometric mean of ours / wvSpltK: {:.3}", (logs.0 / logs.1 as f64).exp());
    }
    Ok(())
}

/// The mixture-of-experts layers: (name, experts, tokens per expert, N, K, every how many-th
/// expert is empty: 0 for none).
pub const MOE: &[(&str, usize, usize, usize, usize, usize)] =
    &[("8 x M16 x 28672x4096", 8, 16, 28672, 4096, 0), ("64 x M4 x 4096x7168", 64, 4, 4096, 7168, 4)];

/// `gemm decode --moe`: each layer as one grouped launch (`plan/grouped.rs` picks the kernel),
/// predicted by the timing model, against the floor of the bytes it must move: the weights of
/// the experts that have tokens, their activations and outputs, at peak HBM.
fn moe(args: &DecodeArgs, jobs: usize) -> Result<(), String> {
    let archs: Vec<Arch> = args.arch.map_or_else(|| Arch::ALL.to_vec(), |a| vec![a]);
    let mut work = vec![];
    for &arch in &archs {
        for &layer in MOE {
            work.push((arch, layer));
        }
    }
    let rows = crate::jobs::map_jobs(&work, jobs, |&(arch, (name, experts, m, n, k, empty_every))| {
        let ps = moe_problems(experts, m, n, k, empty_every);
        let bytes: f64 = ps.iter().filter(|p| p.m > 0).map(gemm_dispatch::plan::bounds::bytes_moved).sum();
        let floor = bytes / (arch.caps().hbm_tbps * 1e12);
        let opts = gemm_emu::timing::ModelOptions::default();
        let r = crate::model::predict_grouped(arch, &ps, &opts);
        eprintln!("  {arch} {name}: {:?}", r.as_ref().map(|x| x.1.seconds * 1e6));
        (arch, name, ps.iter().filter(|p| p.m > 0).count(), floor, r)
    });
    println!("Mixture-of-experts decode, bf16, one grouped launch: timing-model predictions; floor = the touched experts' weights, activations and outputs once at peak HBM");
    println!("{:<7} {:<22} {:>8} {:>10} {:>10} {:>7}  kernel", "arch", "layer", "experts", "us", "floor us", "floor%");
    for (arch, name, live, floor, r) in rows {
        match r {
            Ok((e, pred)) => println!(
                "{:<7} {:<22} {:>8} {:>10.2} {:>10.2} {:>6.0}%  {}",
                arch.name(),
                name,
                live,
                pred.seconds * 1e6,
                floor * 1e6,
                100.0 * floor / pred.seconds,
                e.name
            ),
            Err(e) => println!("{:<7} {:<22} {:>8} no prediction: {e}", arch.name(), name, live),
        }
    }
    Ok(())
}

/// The problems of a mixture-of-experts row: one Linear layer per expert, `m` tokens each but
/// every `empty_every`-th expert (0: none) without tokens.
fn moe_problems(experts: usize, m: usize, n: usize, k: usize, empty_every: usize) -> Vec<GemmProblem> {
    (0..experts)
        .map(|e| {
            let rows = if empty_every > 0 && e % empty_every == empty_every - 1 { 0 } else { m };
            linear(rows, n, k, DType::Bf16, DType::Bf16)
        })
        .collect()
}

/// The grouped configurations `gemm decode --moe --sweep` predicts on `arch` (bf16 -> bf16).
pub fn moe_candidates(arch: Arch) -> Vec<KernelConfig> {
    let mut out: Vec<KernelConfig> = gemm_compiler::catalogue::DECODE_SHAPES
        .iter()
        .map(|&(r, c, w, u)| KernelConfig::decode(arch, DType::Bf16, DType::Bf16, r, c, w, u))
        .collect();
    for blocks in [1, 2, 4] {
        for waves in [2, 4, 8] {
            for unroll in [2, 4, 8] {
                out.push(KernelConfig::decode_rows(arch, DType::Bf16, DType::Bf16, blocks, 16, waves, unroll));
            }
        }
    }
    for c in &mut out {
        c.grouped = true;
    }
    out.retain(|c| gemm_compiler::fit::check(c).is_ok());
    out
}

/// Predicts one grouped launch of the row-major Linear problems `ps` on a freshly compiled
/// grouped kernel, as [`crate::model::predict_grouped`] does for a catalogue kernel: the
/// column-major problem of each non-empty group (`m` = N, `n` = tokens, the weights as A) in
/// a table of zero-filled operands, one workgroup per tile of every group.
pub fn predict_grouped_compiled(
    k: &CompiledKernel,
    ps: &[GemmProblem],
    opts: &gemm_emu::timing::ModelOptions,
) -> Result<gemm_emu::timing::Prediction, String> {
    let cfg = &k.config;
    let dev = gemm_emu::Device::new(cfg.arch);
    let live: Vec<&GemmProblem> = ps.iter().filter(|p| p.m > 0 && p.n > 0).collect();
    let sizes: Vec<(u32, u32)> = live.iter().map(|p| (p.n as u32, p.m as u32)).collect();
    let (starts, tiles) = kernel_args::grouped_tiles(&sizes, (cfg.tile.0, cfg.tile.1));
    let alloc = |bytes: u64| dev.alloc(bytes.next_multiple_of(16).max(16)).map_err(|e| e.to_string());
    let mut table = vec![];
    for (p, start) in live.iter().zip(starts) {
        let (m, n, kk) = (p.n as u64, p.m as u64, p.k as u64);
        let a = alloc(m * kk * u64::from(cfg.ab_bytes()))?;
        let b = alloc(n * kk * u64::from(cfg.ab_bytes()))?;
        let c = alloc(m * n * u64::from(cfg.c_bytes()))?;
        let (m, n, kk) = (m as u32, n as u32, kk as u32);
        table.extend(kernel_args::pack_group(a, b, c, m, n, kk, kk, kk, m, 1.0, 0.0, start));
    }
    let at = alloc(table.len() as u64)?;
    dev.copy_in(at, &table).map_err(|e| e.to_string())?;
    let args = kernel_args::pack_grouped(at, live.len() as u32, tiles as u32);
    let w = gemm_emu::timing::Workload {
        code_object: &k.code_object,
        kernel: &k.name,
        grid: [tiles as u32, 1, 1],
        block: [cfg.threads(), 1, 1],
        kernarg: &args,
        dynamic_lds: 0,
        flops: ps.iter().map(GemmProblem::flops).sum(),
    };
    gemm_emu::timing::Model::new(cfg.arch).predict(dev.memory(), &w, opts).map_err(|e| e.to_string())
}

/// `gemm decode --moe --sweep`: every [`moe_candidates`] shape on every [`MOE`] row, its time
/// and share of the floor, best first per arch and row.
fn moe_sweep(args: &DecodeArgs, jobs: usize) -> Result<(), String> {
    let archs: Vec<Arch> = args.arch.map_or_else(|| Arch::ALL.to_vec(), |a| vec![a]);
    let mut work = vec![];
    for &arch in &archs {
        for cfg in moe_candidates(arch) {
            for &layer in MOE {
                work.push((cfg, layer));
            }
        }
    }
    eprintln!("moe sweep: {} predictions on {jobs} thread(s)", work.len());
    let rows = crate::jobs::map_jobs(&work, jobs, |&(cfg, (name, experts, m, n, k, empty_every))| {
        let ps = moe_problems(experts, m, n, k, empty_every);
        let bytes: f64 = ps.iter().filter(|p| p.m > 0).map(gemm_dispatch::plan::bounds::bytes_moved).sum();
        let floor = bytes / (cfg.arch.caps().hbm_tbps * 1e12);
        let opts = gemm_emu::timing::ModelOptions::default();
        let r = compile(cfg)
            .map_err(|e| e.to_string())
            .and_then(|k| predict_grouped_compiled(&k, &ps, &opts).map(|p| p.seconds));
        eprintln!("  {} {} {name}: {:?}", cfg.arch, crate::sweep::short(&cfg), r.as_ref().map(|t| t * 1e6));
        (cfg, name, floor, r)
    });
    println!("Mixture-of-experts decode, bf16, one grouped launch per candidate shape (compiled here, not the catalogue's): timing-model predictions, best first");
    println!("{:<7} {:<22} {:>10} {:>10} {:>7}  shape", "arch", "layer", "us", "floor us", "floor%");
    for &arch in &archs {
        for &(layer, ..) in MOE {
            let mut mine: Vec<_> = rows.iter().filter(|r| r.0.arch == arch && r.1 == layer).collect();
            mine.sort_by(|x, y| {
                let t = |r: &Result<f64, String>| r.as_ref().copied().unwrap_or(f64::INFINITY);
                t(&x.3).total_cmp(&t(&y.3))
            });
            for (cfg, _, floor, r) in mine {
                match r {
                    Ok(t) => println!(
                        "{:<7} {:<22} {:>10.2} {:>10.2} {:>6.0}%  {}",
                        arch.name(),
                        layer,
                        t * 1e6,
                        floor * 1e6,
                        100.0 * floor / t,
                        crate::sweep::short(cfg)
                    ),
                    Err(e) => {
                        println!("{:<7} {:<22} no prediction: {e}  {}", arch.name(), layer, crate::sweep::short(cfg))
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &'static str, m: usize, t_us: f64, before_us: f64, floor_us: f64) -> Row {
        Row {
            line: String::new(),
            arch: Arch::Gfx942,
            dtype: DType::Bf16,
            name,
            m,
            t: Some(t_us * 1e-6),
            before: Some(before_us * 1e-6),
            floor: floor_us * 1e-6,
        }
    }

    /// The summary counts a row at 90% of the streaming ceiling by floor / (t x fraction), keeps
    /// M > 64 out of the bar, tells the large layers apart and lists every row slower than before.
    #[test]
    fn summary_counts_the_bar_and_the_slower_rows() {
        let f = ceiling_fraction(Arch::Gfx942);
        let rows = vec![
            // 8B gate_up (224 MiB of bf16): at 92% of the ceiling.
            row("8B gate_up", 16, 10.0, 12.0, 9.2 * f),
            // At 89% (below the bar) and slower than before.
            row("8B gate_up", 32, 10.0, 9.5, 8.9 * f),
            // A small layer at the bar; M = 128 is outside the bar's rows.
            row("8B qkv", 8, 10.0, 10.0, 9.5 * f),
            row("8B qkv", 128, 10.0, 10.0, 9.5 * f),
        ];
        let s = summary(&rows);
        assert!(s.contains("all layers 2/3; weights > 96 MiB 1/2"), "{s}");
        assert!(s.contains("rows slower than the plan before decode kernels: 1"), "{s}");
        assert!(s.contains("8B gate_up bf16 M=32: 10.00 us against 9.50"), "{s}");
        assert!(large_layer("8B down", DType::Bf16) && !large_layer("8B down", DType::Fp8E4M3));
    }
}
