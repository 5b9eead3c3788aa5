//! `gemm mx`: the speed of block-scaled GEMMs under the timing model (issue 26 item 5), side by
//! side in one run with fp8 per-tensor on the same shapes: what the runtime launches for fp8
//! (`plan_gemm`, the Linear layout), and each MX kernel of the catalogue for MXFP8 (e4m3),
//! MXFP4 and the other pairs of issue 26 (MXFP6 e2m3, bf6 e3m2, fp8 x fp4 both ways, fp8 x fp6,
//! fp6 x fp4; the kernel `plan_mx` picks marked `*`), beside their ceilings (a pair `plan_mx`
//! refuses shows its reason). Square Linear problems `Y = X W^T` with bf16 output on gfx950.
//!
//! Every time is a **prediction of the timing model**. The ceilings are the MFMA ceiling at the
//! loaded clock (`Arch::mfma_ceiling_tflops`) for fp8, and twice it for fp4: CDNA4 runs the
//! fp4 (and fp6) forms of `v_mfma_scale_*_f8f6f4` in half the passes of fp8 (AMD CDNA4 ISA,
//! the MFMA table; MI355X: 10 PFLOP/s dense MXFP4 against 5 for fp8).

use crate::decode_table::{linear, predict_gemm_plan};
use gemm_core::mx::MxFormat;
use gemm_core::{Arch, DType};
use gemm_dispatch::plan::block_scaled::{kernels, plan_mx, MxPlan, MxProblem};
use gemm_dispatch::plan::gemm_plan::plan_gemm;
use gemm_emu::timing::{Model, ModelOptions, Workload};
use gemm_emu::Device;

/// `gemm mx`.
#[derive(clap::Args, Debug, Clone)]
pub struct MxArgs {
    /// Square sizes M = N = K.
    #[arg(long, value_delimiter = ',', default_values_t = [4096usize, 8192])]
    pub sizes: Vec<usize>,
    /// Threads for the predictions (default: every hardware thread).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Also compile and predict configurations outside the catalogue that tell the MX
    /// overhead from the copy path's: the fp8 interleave tile with LDS-DMA, and the MX
    /// interleave tiles with register-staged copies.
    #[arg(long)]
    pub variants: bool,
    /// Print the timing model's whole report (stalls, busy units) of every MX row.
    #[arg(long)]
    pub detail: bool,
    /// MX scales in the K-tiled layout (`MxScaleLayout::KTiled`) instead of row-major.
    #[arg(long)]
    pub tiled_scales: bool,
    /// Print block-scaled fp8 (DeepSeek-V3's 1x128 / 128x128 scales) beside fp8 per-tensor
    /// instead, both archs: the squares of --sizes and the DeepSeek-V3 shapes.
    #[arg(long)]
    pub fp8_blocks: bool,
    /// Only the MX rows whose format label contains one of these (e.g. `e2m3,e3m2, x ` for
    /// the fp6 and two-width pairs); fp8 per-tensor is always printed.
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
}

/// `(M, N, K, published speed-of-light microseconds)`.
pub type Shape = (usize, usize, usize, Option<f64>);

/// DeepSeek-V3/R1 shapes `(M, N, K)` of the block-scaled fp8 GEMM challenge (gpu-mode
/// `amd-fp8-mm`, MI300X: X of M x K with 1x128 scales, W of N x K with 128x128 scales), with
/// the task's published speed-of-light time in microseconds (an analysis, not a measurement);
/// and M = 64 decode rows on the same N x K, and the two deep-K shapes of issue 26.
pub const DEEPSEEK: &[Shape] = &[
    (1024, 1536, 7168, Some(8.63)),
    (1024, 4608, 7168, Some(25.89)),
    (6144, 1536, 7168, Some(51.78)),
    (6144, 4608, 7168, Some(155.30)),
    (1024, 7168, 256, Some(3.17)),
    (6144, 7168, 256, Some(17.27)),
    (64, 1536, 7168, None),
    (64, 4608, 7168, None),
    (64, 7168, 18432, None),
    (1024, 7168, 18432, None),
    (6144, 7168, 18432, None),
    (1024, 7168, 16384, None),
];

/// The timing model's prediction of one block-scaled fp8 launch.
pub fn predict_fp8_blocks(
    plan: &gemm_dispatch::plan::block_scaled::Fp8BlockPlan,
) -> Result<gemm_emu::timing::Prediction, String> {
    predict_fp8_blocks_with(plan, &ModelOptions::default())
}

/// [`predict_fp8_blocks`] under `opts` (e.g. with a span trace, the `phases` example's).
pub fn predict_fp8_blocks_with(
    plan: &gemm_dispatch::plan::block_scaled::Fp8BlockPlan,
    opts: &ModelOptions,
) -> Result<gemm_emu::timing::Prediction, String> {
    let p = &plan.problem;
    predict_block_launch(plan.entry, p.spans(), 2.0 * p.m as f64 * p.n as f64 * p.k as f64, opts, |x| {
        plan.launch(x[0], x[1], x[2], x[3], x[4])
    })
}

/// The timing model on one block-scaled launch: X, W, Y and the two scale tensors of `spans`
/// bytes zero-filled in an emulated device's memory, `launch` packing their addresses.
fn predict_block_launch(
    entry: &gemm_kernels::KernelEntry,
    spans: [u64; 5],
    flops: f64,
    opts: &ModelOptions,
    launch: impl FnOnce([u64; 5]) -> Result<gemm_dispatch::plan::kernel_plan::Launch, String>,
) -> Result<gemm_emu::timing::Prediction, String> {
    let dev = Device::new(entry.arch);
    let mut ptrs = [0u64; 5];
    for (p, s) in ptrs.iter_mut().zip(spans) {
        *p = dev.alloc(s.next_multiple_of(16).max(16)).map_err(|e| e.to_string())?;
    }
    let l = launch(ptrs)?;
    let w = crate::model::launch_workload(&l, flops);
    Model::new(entry.arch).predict(dev.memory(), &w, opts).map_err(|e| e.to_string())
}

/// `gemm mx --fp8-blocks`: block-scaled fp8 against fp8 per-tensor, both archs.
fn fp8_blocks(args: &MxArgs, jobs: usize) -> Result<(), String> {
    use gemm_dispatch::plan::block_scaled::{plan_fp8_blocks, Fp8BlockProblem};
    let mut shapes: Vec<Shape> = args.sizes.iter().map(|&s| (s, s, s, None)).collect();
    shapes.extend_from_slice(DEEPSEEK);
    let work: Vec<(Arch, Shape)> = Arch::ALL.iter().flat_map(|&a| shapes.iter().map(move |&s| (a, s))).collect();
    eprintln!("block-scaled fp8 table: {} shapes on {jobs} thread(s)", work.len());
    let done = std::sync::atomic::AtomicUsize::new(0);
    let rows = crate::jobs::map_jobs(&work, jobs, |&(arch, (m, n, k, sol))| {
        let e4m3 = if arch == Arch::Gfx942 { DType::Fp8E4M3Fnuz } else { DType::Fp8E4M3 };
        let p = linear(m, n, k, e4m3, DType::Bf16);
        let cus = arch.caps().compute_units;
        let tensor =
            plan_gemm(arch, cus, &p).and_then(|pl| predict_gemm_plan(&pl.ok_or("empty")?, &p)).unwrap_or(f64::NAN);
        // The activations' scales column-major, as the DeepSeek GEMM challenge stores them.
        let bp = Fp8BlockProblem { sx_col_major: true, ldsx: m, ..Fp8BlockProblem::new(m, n, k, e4m3, DType::Bf16) };
        let block = plan_fp8_blocks(arch, &bp).and_then(|pl| predict_fp8_blocks(&pl)).map(|x| x.seconds);
        let d = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        eprintln!("  [{d}/{}] {} {m}x{n}x{k}", work.len(), arch.name());
        (arch, m, n, k, sol, tensor, block)
    });
    println!("Block-scaled fp8 (1x128 activation scales, column-major; 128x128 weight scales) vs fp8 per-tensor, Y = X W^T, bf16 out: timing-model predictions");
    println!(
        "{:<7} {:>6} {:>6} {:>6} {:>11} {:>9} {:>11} {:>9} {:>9} {:>12}",
        "arch", "M", "N", "K", "tensor us", "TFLOP/s", "blocks us", "TFLOP/s", "blk/tens", "SoL us (pub)"
    );
    for (arch, m, n, k, sol, tensor, block) in rows {
        let fl = 2.0 * m as f64 * n as f64 * k as f64;
        let sol = sol.map_or("".to_string(), |x| format!("{x:.2}"));
        match block {
            Ok(b) => println!(
                "{:<7} {:>6} {:>6} {:>6} {:>11.1} {:>9.0} {:>11.1} {:>9.0} {:>8.0}% {:>12}",
                arch.name(),
                m,
                n,
                k,
                tensor * 1e6,
                fl / tensor / 1e12,
                b * 1e6,
                fl / b / 1e12,
                100.0 * tensor / b,
                sol
            ),
            Err(e) => println!("{:<7} {:>6} {:>6} {:>6} no block-scaled plan: {e}", arch.name(), m, n, k),
        }
    }
    Ok(())
}

/// Compiles `cfg` and predicts it on the square `s` problem (K in elements; MX kernels get
/// their byte counts and zero-filled scale tensors).
pub fn predict_config(cfg: gemm_compiler::ir::KernelConfig, s: u32) -> Result<gemm_emu::timing::Prediction, String> {
    use gemm_compiler::kernel_args;
    let k = gemm_compiler::compile(cfg).map_err(|e| e.to_string())?;
    let kb = match cfg.block_scale.mx() {
        Some((a, _)) => s * a.bits() / 8,
        None => s * cfg.ab_bytes(),
    };
    let dev = Device::new(cfg.arch);
    let alloc = |b: u64| dev.alloc(b.next_multiple_of(16).max(16)).map_err(|e| e.to_string());
    let (a, b) = (alloc(u64::from(kb) * u64::from(s))?, alloc(u64::from(kb) * u64::from(s))?);
    let c = alloc(u64::from(s) * u64::from(s) * u64::from(cfg.c_bytes()))?;
    let lds = (s / 32).next_multiple_of(4);
    let (sa, sb) = (alloc(u64::from(lds) * u64::from(s))?, alloc(u64::from(lds) * u64::from(s))?);
    let mut args = vec![0u8; kernel_args::size(&cfg) as usize];
    for arg in kernel_args::args(&cfg) {
        let bytes: Vec<u8> = match arg.name {
            "a" => a.to_le_bytes().to_vec(),
            "b" => b.to_le_bytes().to_vec(),
            "c" => c.to_le_bytes().to_vec(),
            "bscale_a" => sa.to_le_bytes().to_vec(),
            "bscale_b" => sb.to_le_bytes().to_vec(),
            "m" | "n" | "ldc" => s.to_le_bytes().to_vec(),
            "k" | "lda" | "ldb" => kb.to_le_bytes().to_vec(),
            "ldsa" | "ldsb" => lds.to_le_bytes().to_vec(),
            "alpha" | "scale_a" | "scale_b" | "scale_d" => 1f32.to_le_bytes().to_vec(),
            "gsa" | "gsb" => 1u32.to_le_bytes().to_vec(),
            "clamp_lo" => f32::NEG_INFINITY.to_le_bytes().to_vec(),
            "clamp_hi" => f32::INFINITY.to_le_bytes().to_vec(),
            _ => vec![0; arg.size as usize],
        };
        args[arg.offset as usize..arg.offset as usize + bytes.len()].copy_from_slice(&bytes);
    }
    let w = Workload {
        code_object: &k.code_object,
        kernel: &k.name,
        grid: [s.div_ceil(cfg.tile.0), s.div_ceil(cfg.tile.1), 1],
        block: [cfg.threads(), 1, 1],
        kernarg: &args,
        dynamic_lds: 0,
        flops: 2.0 * f64::from(s).powi(3),
    };
    Model::new(cfg.arch).predict(dev.memory(), &w, &ModelOptions::default()).map_err(|e| e.to_string())
}

/// The `--variants` configurations: label and configuration.
fn variants() -> Vec<(String, gemm_compiler::ir::KernelConfig)> {
    use gemm_compiler::ir::{DmaPolicy, KernelConfig};
    let fp8il = gemm_compiler::catalogue::configs()
        .into_iter()
        .find(|c| c.name().starts_with("gemm_gfx950_fp8_bf16_tn_256x256x128") && c.block_scale.mx().is_none())
        .expect("the fp8il kernel");
    let mut out = vec![("fp8 il4, LDS-DMA".to_string(), KernelConfig { direct_to_lds: DmaPolicy::Auto, ..fp8il })];
    for f in [MxFormat::E4M3, MxFormat::E2M1] {
        let staged = KernelConfig { direct_to_lds: DmaPolicy::Never, ..fp8il }.with_mx(f, f).expect("one width");
        out.push((format!("{} il4, staged", f.name()), staged));
    }
    out
}

/// The timing model's prediction of one MX launch, operands zero-filled in an emulated
/// device's memory.
pub fn predict_mx(plan: &MxPlan) -> Result<gemm_emu::timing::Prediction, String> {
    let p = &plan.problem;
    let opts = ModelOptions::default();
    predict_block_launch(plan.entry, p.spans(), 2.0 * p.m as f64 * p.n as f64 * p.k as f64, &opts, |x| {
        plan.launch(x[0], x[1], x[2], x[3], x[4])
    })
}

/// One line of work: fp8 per-tensor through the runtime's plan, or one MX kernel.
#[derive(Clone)]
enum Work {
    Fp8(usize),
    /// X's and W's formats, the kernel, whether `plan_mx` picks it.
    Mx(usize, (MxFormat, MxFormat), &'static gemm_kernels::KernelEntry, bool),
    /// A pair no GPU kernel runs: its row carries `plan_mx`'s reason and the pair's ceiling.
    NoKernel(usize, (MxFormat, MxFormat), String),
}

/// The `(X, W)` format pairs of the table: MXFP8 (e4m3) and MXFP4, which the ping-pong
/// kernels build, then the other pairs of issue 26 (fp6, bf6, fp4 weights with fp8
/// activations and the reverse, fp6 with fp8, fp6 activations with fp4 weights), each beside
/// the ceiling the model's MFMA rates give it.
const PAIRS: [(MxFormat, MxFormat); 8] = {
    use MxFormat::{E2M1, E2M3, E3M2, E4M3};
    [(E4M3, E4M3), (E2M1, E2M1), (E2M3, E2M3), (E3M2, E3M2), (E4M3, E2M1), (E2M1, E4M3), (E4M3, E2M3), (E2M3, E2M1)]
};

/// The row label of a pair: the format's name, or `X x W`.
fn pair_label((x, w): (MxFormat, MxFormat)) -> String {
    if x == w {
        x.name().to_string()
    } else {
        format!("{} x {}", x.name(), w.name())
    }
}

/// The MFMA ceiling of a pair: `v_mfma_scale_*_f8f6f4` runs in half fp8's passes when
/// neither operand is fp8 or bf8 (the timing model's `F8F6F4` rows, `emulator/src/timing/
/// params.rs`: 8 passes against 16 for 32x32x64), so fp6 and fp4 pairs have twice fp8's
/// ceiling and a pair with an fp8 operand has fp8's.
fn pair_ceiling((x, w): (MxFormat, MxFormat), fp8_ceiling: f64) -> f64 {
    if x.bits() < 8 && w.bits() < 8 {
        2.0 * fp8_ceiling
    } else {
        fp8_ceiling
    }
}

/// Runs `gemm mx`.
pub fn run(args: &MxArgs) -> Result<(), String> {
    let t0 = std::time::Instant::now();
    let arch = Arch::Gfx950;
    let cus = arch.caps().compute_units;
    let jobs = args.jobs.unwrap_or_else(crate::jobs::default_jobs);
    if args.fp8_blocks {
        fp8_blocks(args, jobs)?;
        println!("wall time: {:.1} s", t0.elapsed().as_secs_f64());
        return Ok(());
    }
    let mut work = vec![];
    for &s in &args.sizes {
        work.push(Work::Fp8(s));
        for (x, w) in PAIRS {
            let label = pair_label((x, w));
            if !args.only.is_empty() && !args.only.iter().any(|o| label.contains(o.as_str())) {
                continue;
            }
            let p = MxProblem::new(s, s, s, x, w, DType::Bf16);
            match plan_mx(arch, cus, &p) {
                // The kernels' A is W.
                Ok(plan) => work.extend(
                    kernels(arch, w, x, DType::Bf16).map(|e| Work::Mx(s, (x, w), e, e.name == plan.entry.name)),
                ),
                Err(why) => work.push(Work::NoKernel(s, (x, w), why)),
            }
        }
    }
    eprintln!("mx table: {} predictions on {jobs} thread(s)", work.len());
    let done = std::sync::atomic::AtomicUsize::new(0);
    let fp8_ceiling = arch.mfma_ceiling_tflops(DType::Fp8E4M3, false);
    let rows = crate::jobs::map_jobs(&work, jobs, |w| {
        let (s, label, kernel, t, ceiling) = match *w {
            Work::Fp8(s) => {
                let p = linear(s, s, s, DType::Fp8E4M3, DType::Bf16);
                let r = plan_gemm(arch, cus, &p).and_then(|pl| {
                    let pl = pl.ok_or("empty")?;
                    let name = match &pl.split {
                        Some(sp) => format!("{} + split {}", sp.partial.name, sp.splits),
                        None => pl.kernel.entry.name.to_string(),
                    };
                    predict_gemm_plan(&pl, &p).map(|t| (name, t))
                });
                match r {
                    Ok((name, t)) => (s, "fp8 per-tensor".to_string(), name, t, fp8_ceiling),
                    Err(e) => (s, "fp8 per-tensor".into(), e, f64::NAN, fp8_ceiling),
                }
            }
            Work::NoKernel(s, pair, ref why) => {
                let ceiling = pair_ceiling(pair, fp8_ceiling);
                (s, pair_label(pair), format!("no kernel (ceiling {ceiling:.0} TFLOP/s): {why}"), f64::NAN, ceiling)
            }
            Work::Mx(s, (x, w), e, pick) => {
                let mut p = MxProblem::new(s, s, s, x, w, DType::Bf16);
                if args.tiled_scales {
                    use gemm_dispatch::plan::block_scaled::MxScaleLayout::KTiled;
                    p = MxProblem { sx_layout: KTiled, sw_layout: KTiled, ldsx: s, ldsw: s, ..p };
                }
                let plan =
                    MxPlan { entry: e, grid: e.launch(s as u32, s as u32).0, block: e.launch(1, 1).1, problem: p };
                let t = match predict_mx(&plan) {
                    Ok(pr) => {
                        if args.detail {
                            eprintln!("{pr}");
                        }
                        pr.seconds
                    }
                    Err(_) => f64::NAN,
                };
                let name = format!("{}{}", e.name, if pick { " *" } else { "" });
                (s, pair_label((x, w)), name, t, pair_ceiling((x, w), fp8_ceiling))
            }
        };
        let d = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        eprintln!("  [{d}/{}] {s} {label} {:.1} us", work.len(), t * 1e6);
        (s, label, kernel, t, ceiling)
    });
    println!("Block-scaled GEMMs on gfx950, Y = X W^T (M = N = K), bf16 out: timing-model predictions");
    println!(
        "{:>6} {:<24} {:>10} {:>9} {:>8} {:>9}  kernel (* = the runtime's pick)",
        "size", "format", "us", "TFLOP/s", "x fp8", "% ceiling"
    );
    for &s in &args.sizes {
        let fp8 = rows.iter().find(|r| r.0 == s && r.1.starts_with("fp8")).map_or(f64::NAN, |r| r.3);
        for r in rows.iter().filter(|r| r.0 == s) {
            let tf = 2.0 * (s as f64).powi(3) / r.3 / 1e12;
            println!(
                "{:>6} {:<24} {:>10.1} {:>9.0} {:>8.2} {:>8.0}%  {}",
                s,
                r.1,
                r.3 * 1e6,
                tf,
                fp8 / r.3,
                100.0 * tf / r.4,
                r.2
            );
        }
    }
    if args.variants {
        for &s in &args.sizes {
            for (label, cfg) in variants() {
                match predict_config(cfg, s as u32) {
                    Ok(pr) => {
                        if args.detail {
                            eprintln!("{pr}");
                        }
                        println!(
                            "{:>6} {:<24} {:>10.1} {:>9.0}  {} (variant)",
                            s,
                            label,
                            pr.seconds * 1e6,
                            pr.tflops,
                            cfg.name()
                        );
                    }
                    Err(e) => println!("{:>6} {:<24} not built: {e}", s, label),
                }
            }
        }
    }
    println!(
        "ceilings: fp8 {fp8_ceiling:.0} TFLOP/s (any pair with an fp8/bf8 operand), fp6/bf6/fp4 pairs {:.0} (MFMA at the loaded clock)",
        2.0 * fp8_ceiling
    );
    println!("wall time: {:.1} s", t0.elapsed().as_secs_f64());
    Ok(())
}
