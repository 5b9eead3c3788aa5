//! `gemm sweep`: the compiler's kernel space (issue 11) ranked by the timing model.
//!
//! Every configuration of the space for one arch, input dtype and problem (tiles `MT, NT` in
//! {64, 128, 256}, `KT` in {32, 64, 128}, 4 or 8 waves in every power-of-two wave grid, the
//! arch's full-rate 16x16 and 32x32 MFMAs; gemm-compiler `fit.rs`) is compiled on the spot
//! (gemm-compiler, as `build.rs` does for the catalogue) and its predicted TFLOP/s computed
//! by the timing model (`gemm_emu::timing`) on the same problem. Configurations the space
//! declines are listed with the reason. The catalogue (gemm-compiler `catalogue.rs`) is
//! chosen from these tables; its doc comments quote them.
//!
//! The problem is column-major with the transposes asked for (default `nn`, the layout of
//! Triton's row-major `C = A B`, as in `gemm compare`), leading dimensions the rows, inputs
//! 16-byte aligned (`v8` kernels).

use gemm_compiler::ir::{Align, KernelConfig, MfmaShape};
use gemm_compiler::{compile, fit, kernel_args, CompiledKernel};
use gemm_core::{Arch, DType};
use gemm_emu::timing::{Model, ModelOptions, Prediction, Workload};
use gemm_emu::Device;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// `gemm sweep`.
#[derive(clap::Args, Debug, Clone)]
pub struct SweepArgs {
    /// gfx942 or gfx950 (default: both).
    #[arg(long)]
    pub arch: Option<Arch>,
    /// Input dtype: bf16, f16 or f32.
    #[arg(long, default_value = "bf16")]
    pub dtype: DType,
    /// Output dtype (default: f32).
    #[arg(long, default_value = "f32")]
    pub out_dtype: DType,
    /// Rows of C and of op(A).
    #[arg(long, default_value_t = 8192)]
    pub m: usize,
    /// Columns of C and of op(B).
    #[arg(long, default_value_t = 8192)]
    pub n: usize,
    /// Columns of op(A), rows of op(B).
    #[arg(long, default_value_t = 8192)]
    pub k: usize,
    /// Transposes of A and B: nn, nt, tn or tt.
    #[arg(long, default_value = "nn")]
    pub trans: String,
    /// Only tiles whose `MTxNTxKT` contains this (e.g. `256x256`).
    #[arg(long)]
    pub tile: Option<String>,
    /// The `MT` and `NT` values swept.
    #[arg(long, value_delimiter = ',', default_values_t = [64u32, 128, 256])]
    pub mn: Vec<u32>,
    /// The `KT` values swept.
    #[arg(long, value_delimiter = ',', default_values_t = [32u32, 64, 128])]
    pub kt: Vec<u32>,
    /// Only this MFMA size (16 or 32: the arch's 16x16 or 32x32 shapes).
    #[arg(long)]
    pub mfma: Option<u32>,
    /// Only this many waves (4 or 8).
    #[arg(long)]
    pub waves: Option<u32>,
    /// Pipeline stages swept (2, 3: gemm-compiler `passes/pipeline.rs`); the label's `sN`
    /// tells a tile's rows apart.
    #[arg(long, value_delimiter = ',', default_values_t = [2u32])]
    pub stages: Vec<u32>,
    /// Also list the configurations the space declines.
    #[arg(long)]
    pub declined: bool,
    /// Compile only (registers, LDS, occupancy, conflicts): no prediction.
    #[arg(long = "static")]
    pub static_only: bool,
    /// Bytes of loads per sampled workgroup in the model's cache-footprint pass (smaller is
    /// faster, coarser hit rates). The default is the characterisation's (the dispatcher's
    /// model, `TimingModel`): with 64 KiB the sweep put gfx950's 128x64x128 eight-wave
    /// decode-rows block 12% ahead of the catalogue's 128x64x64 one on 28672x64x4096 bf16
    /// (36.3 against 41.2 us), where with 128 KiB, as the table is made, it is 6% behind (40.0
    /// against 37.8): a kernel added on that ranking was never picked (session 36).
    #[arg(long, default_value_t = 128 << 10)]
    pub prefix_bytes: u64,
    /// Threads for the compilations and predictions (default: every hardware thread).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Sweep the decode space instead (gemm-compiler `lower/decode.rs`: blocks of 16..64 rows
    /// and columns, 1..16 waves along K, 1..8 loads per row block; `lower/decode_rows.rs`:
    /// 1..8 waves along the rows of 1, 2 or 4 row blocks each; A^T B, `--trans tn`), with the
    /// predicted time in microseconds.
    #[arg(long)]
    pub decode: bool,
    /// Also print the timing model's whole report (caches, stalls, busy units) of the best
    /// configuration.
    #[arg(long)]
    pub detail: bool,
}

/// The decode space (`KernelConfig::decode`) for one arch and dtype pair, in a fixed order.
pub fn decode_space(arch: Arch, ab: DType, c: DType) -> Vec<KernelConfig> {
    let mut out = vec![];
    for rows in [16, 32, 64] {
        for cols in [16, 32, 64] {
            for waves in [1, 2, 4, 8, 16] {
                for unroll in [1, 2, 4, 8] {
                    out.push(KernelConfig::decode(arch, ab, c, rows, cols, waves, unroll));
                }
            }
        }
    }
    // The waves on the rows (`lower/decode_rows.rs`): 1, 2 or 4 row blocks per wave.
    for blocks in [1, 2, 4] {
        for cols in [16, 32, 64] {
            for waves in [1, 2, 4, 8] {
                for unroll in [1, 2, 4, 8] {
                    out.push(KernelConfig::decode_rows(arch, ab, c, blocks, cols, waves, unroll));
                }
            }
        }
    }
    out
}

/// One configuration's outcome.
pub struct SweepRow {
    pub config: KernelConfig,
    /// The compiled kernel's facts, or why the space or the compiler declined it.
    pub built: Result<Built, String>,
    pub wall: Duration,
}

/// A compiled configuration and its prediction.
pub struct Built {
    pub vgprs: u32,
    pub agprs: u32,
    pub lds_bytes: u32,
    pub occupancy: u32,
    pub lds_conflicts: u32,
    pub mfma_share: f64,
    pub prediction: Result<Prediction, String>,
}

/// The wave grids of the space: powers of two with 4 or 8 waves.
const WAVE_GRIDS: &[(u32, u32)] = &[(2, 2), (1, 4), (4, 1), (2, 4), (4, 2), (1, 8), (8, 1)];

/// The tile sizes of the space (gemm-compiler `fit.rs`).
pub const MN: &[u32] = &[64, 128, 256];
pub const KT: &[u32] = &[32, 64, 128];

/// Every configuration with `MT, NT` in `mn` and `KT` in `kt` for `arch` and the dtypes, in
/// a fixed order (tile, waves, MFMA), before the fit check.
pub fn space(arch: Arch, ab: DType, c: DType, ta: bool, tb: bool, mn: &[u32], kts: &[u32]) -> Vec<KernelConfig> {
    let mfmas: Vec<MfmaShape> =
        gemm_compiler::lower::MFMA_TABLE.iter().filter(|r| r.0 == arch && r.1 == ab).map(|r| r.2).collect();
    let mut out = vec![];
    for &mt in mn {
        for &nt in mn {
            for &kt in kts {
                for &wg in WAVE_GRIDS {
                    for &mfma in &mfmas {
                        out.push(KernelConfig::new(arch, ab, c, ta, tb, Align::Vec8).with_shape(
                            (mt, nt, kt),
                            wg,
                            mfma,
                            2,
                        ));
                    }
                }
            }
        }
    }
    out
}

/// The column-major problem's leading dimensions for `cfg`'s transposes.
fn leading_dims(cfg: &KernelConfig, m: u32, n: u32, k: u32) -> (u32, u32, u32) {
    let r8 = |x: u32| x.next_multiple_of(8);
    (r8(if cfg.trans_a { k } else { m }), r8(if cfg.trans_b { n } else { k }), m)
}

/// Predicts a freshly compiled kernel on `m x n x k` (alpha 1, beta 0).
pub fn predict_compiled(
    k: &CompiledKernel,
    m: u32,
    n: u32,
    kk: u32,
    opts: &ModelOptions,
) -> Result<Prediction, String> {
    let cfg = &k.config;
    let (lda, ldb, ldc) = leading_dims(cfg, m, n, kk);
    let dev = Device::new(cfg.arch);
    let cols = |trans: bool, rows_nt: u32, rows_t: u32| if trans { rows_t } else { rows_nt };
    let span = |ld: u32, c: u32, bytes: u32| (u64::from(ld) * u64::from(c) * u64::from(bytes)).next_multiple_of(16);
    let a = dev.alloc(span(lda, cols(cfg.trans_a, kk, m), cfg.ab_bytes())).map_err(|e| e.to_string())?;
    let b = dev.alloc(span(ldb, cols(cfg.trans_b, n, kk), cfg.ab_bytes())).map_err(|e| e.to_string())?;
    let c = dev.alloc(span(ldc, n, cfg.c_bytes())).map_err(|e| e.to_string())?;
    let mut args = vec![0u8; kernel_args::size(cfg) as usize];
    for arg in kernel_args::args(cfg) {
        let bytes: Vec<u8> = match arg.name {
            "a" => a.to_le_bytes().to_vec(),
            "b" => b.to_le_bytes().to_vec(),
            "c" => c.to_le_bytes().to_vec(),
            "m" => m.to_le_bytes().to_vec(),
            "n" => n.to_le_bytes().to_vec(),
            "k" => kk.to_le_bytes().to_vec(),
            "lda" => lda.to_le_bytes().to_vec(),
            "ldb" => ldb.to_le_bytes().to_vec(),
            "ldc" => ldc.to_le_bytes().to_vec(),
            "alpha" => 1f32.to_le_bytes().to_vec(),
            "beta" => 0f32.to_le_bytes().to_vec(),
            "clamp_lo" => f32::NEG_INFINITY.to_le_bytes().to_vec(),
            "clamp_hi" => f32::INFINITY.to_le_bytes().to_vec(),
            _ => vec![0; arg.size as usize],
        };
        args[arg.offset as usize..arg.offset as usize + bytes.len()].copy_from_slice(&bytes);
    }
    let w = Workload {
        code_object: &k.code_object,
        kernel: &k.name,
        grid: [m.div_ceil(cfg.tile.0), n.div_ceil(cfg.tile.1), 1],
        block: [cfg.threads(), 1, 1],
        kernarg: &args,
        dynamic_lds: 0,
        flops: 2.0 * f64::from(m) * f64::from(n) * f64::from(kk),
    };
    Model::new(cfg.arch).predict(dev.memory(), &w, opts).map_err(|e| e.to_string())
}

/// Compiles and predicts one configuration.
pub fn sweep_one(cfg: KernelConfig, m: u32, n: u32, k: u32, opts: Option<&ModelOptions>) -> SweepRow {
    let t0 = Instant::now();
    let built = fit::check(&cfg).map_err(|e| e.to_string()).and_then(|()| {
        let ck = compile(cfg).map_err(|e| e.to_string())?;
        Ok(Built {
            vgprs: ck.usage.vgprs,
            agprs: ck.usage.agprs,
            lds_bytes: ck.lds_bytes,
            occupancy: fit::occupancy(cfg.arch, ck.usage.vgprs, ck.usage.agprs, ck.lds_bytes, cfg.waves),
            lds_conflicts: ck.stats.lds_read_conflicts + ck.stats.lds_write_conflicts,
            mfma_share: ck.stats.mfma_share(),
            prediction: match opts {
                Some(o) => predict_compiled(&ck, m, n, k, o),
                None => Err("not predicted (--static)".into()),
            },
        })
    });
    SweepRow { config: cfg, built, wall: t0.elapsed() }
}

/// A short label: `MTxNTxKT wWMxWN sS mfmaMxNxK` (decode kernels: `wWk uU`, waves along K
/// and loads per row block; with the waves on the rows `wWr uU`).
pub fn short(c: &KernelConfig) -> String {
    let decode = match c.schedule {
        gemm_compiler::schedule::Schedule::Decode { unroll } => Some(('k', unroll)),
        gemm_compiler::schedule::Schedule::DecodeRows { unroll } => Some(('r', unroll)),
        _ => None,
    };
    if let Some((along, unroll)) = decode {
        return format!(
            "{}x{}x{} w{}{along} u{} mfma{}x{}x{}",
            c.tile.0, c.tile.1, c.tile.2, c.waves, unroll, c.mfma.m, c.mfma.n, c.mfma.k
        );
    }
    format!(
        "{}x{}x{} w{}x{} s{} mfma{}x{}x{}",
        c.tile.0, c.tile.1, c.tile.2, c.wave_grid.0, c.wave_grid.1, c.stages, c.mfma.m, c.mfma.n, c.mfma.k
    )
}

/// The table: every configuration that compiled, best first, then the declined ones.
pub fn report(rows: &[SweepRow], declined: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<34} {:>5} {:>5} {:>7} {:>4} {:>5} {:>6} {:>9} {:>10}  binding limit",
        "config", "vgpr", "agpr", "lds", "occ", "conf", "mfma%", "TFLOP/s", "us"
    );
    let mut ok: Vec<&SweepRow> = rows.iter().filter(|r| r.built.is_ok()).collect();
    let tf = |r: &SweepRow| r.built.as_ref().ok().and_then(|b| b.prediction.as_ref().ok()).map_or(-1.0, |p| p.tflops);
    ok.sort_by(|a, b| tf(b).total_cmp(&tf(a)));
    for r in ok {
        let b = r.built.as_ref().expect("filtered");
        let (t, us, lim) = match &b.prediction {
            Ok(p) => (format!("{:.1}", p.tflops), format!("{:.2}", p.seconds * 1e6), p.limiter.to_string()),
            Err(e) => ("-".into(), "-".into(), format!("no prediction: {e}")),
        };
        let _ = writeln!(
            s,
            "{:<34} {:>5} {:>5} {:>7} {:>4} {:>5} {:>5.1}% {:>9} {:>10}  {}",
            short(&r.config),
            b.vgprs,
            b.agprs,
            b.lds_bytes,
            b.occupancy,
            b.lds_conflicts,
            b.mfma_share * 100.0,
            t,
            us,
            lim
        );
    }
    if declined {
        for r in rows.iter().filter(|r| r.built.is_err()) {
            let _ = writeln!(s, "{:<34} declined: {}", short(&r.config), r.built.as_ref().err().expect("filtered"));
        }
    } else {
        let n = rows.iter().filter(|r| r.built.is_err()).count();
        let _ = writeln!(s, "({n} configurations of the space declined; --declined lists them with the reason)");
    }
    s
}

fn transposes(s: &str) -> Result<(bool, bool), String> {
    match s {
        "nn" => Ok((false, false)),
        "nt" => Ok((false, true)),
        "tn" => Ok((true, false)),
        "tt" => Ok((true, true)),
        _ => Err(format!("--trans {s}: expected nn, nt, tn or tt")),
    }
}

/// Runs `gemm sweep`: progress on stderr, one table per arch on stdout.
pub fn sweep(args: &SweepArgs) -> Result<(), String> {
    let t0 = Instant::now();
    let (ta, tb) = transposes(&args.trans)?;
    let u = |v: usize, what: &str| u32::try_from(v).map_err(|_| format!("--{what} {v} exceeds 32 bits"));
    let (m, n, k) = (u(args.m, "m")?, u(args.n, "n")?, u(args.k, "k")?);
    let opts = ModelOptions { prefix_bytes: args.prefix_bytes, ..crate::characterise::options() };
    let archs: Vec<Arch> = args.arch.map_or_else(|| Arch::ALL.to_vec(), |a| vec![a]);
    for arch in archs {
        if args.decode && (ta, tb) != (true, false) {
            return Err("--decode: the decode kernels compute A^T B (--trans tn)".into());
        }
        let base = if args.decode {
            decode_space(arch, args.dtype, args.out_dtype)
        } else {
            space(arch, args.dtype, args.out_dtype, ta, tb, &args.mn, &args.kt)
        };
        let configs: Vec<KernelConfig> = base
            .into_iter()
            .filter(|c| args.mfma.is_none_or(|m| c.mfma.m == m))
            .filter(|c| {
                args.tile.as_deref().is_none_or(|t| format!("{}x{}x{}", c.tile.0, c.tile.1, c.tile.2).contains(t))
            })
            .filter(|c| args.waves.is_none_or(|w| c.waves == w))
            .flat_map(|c| {
                let stages = if c.is_decode() { vec![1] } else { args.stages.clone() };
                stages.into_iter().map(move |s| KernelConfig { stages: s, ..c })
            })
            .collect();
        let in_space = configs.iter().filter(|c| fit::check(c).is_ok()).count();
        eprintln!("{arch}: {} configurations, {in_space} in the space", configs.len());
        // Configurations are independent: compiled and predicted on `--jobs` threads, the rows
        // put back in order (the report is the same for any thread count).
        let jobs = args.jobs.unwrap_or_else(crate::jobs::default_jobs);
        eprintln!("{arch}: compiling and predicting on {jobs} thread(s)");
        let done = std::sync::atomic::AtomicUsize::new(0);
        let rows = crate::jobs::map_jobs(&configs, jobs, |&cfg| {
            let fits = fit::check(&cfg).is_ok();
            let r = sweep_one(cfg, m, n, k, (!args.static_only).then_some(&opts));
            if fits {
                let d = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                let what = match &r.built {
                    Ok(b) => b.prediction.as_ref().map_or_else(|e| e.clone(), |p| format!("{:.1} TFLOP/s", p.tflops)),
                    Err(e) => format!("declined: {e}"),
                };
                eprintln!("  [{d}/{in_space}] {}: {what} ({:.1}s)", short(&cfg), r.wall.as_secs_f64());
            }
            r
        });
        println!(
            "{arch} {}->{} {}x{}x{} {}: predicted TFLOP/s (timing model, sustained clock), {} stages, v8:",
            args.dtype,
            args.out_dtype,
            m,
            n,
            k,
            args.trans,
            args.stages.iter().map(u32::to_string).collect::<Vec<_>>().join(" and ")
        );
        print!("{}", report(&rows, args.declined));
        if args.detail {
            let best = rows
                .iter()
                .filter_map(|r| r.built.as_ref().ok().and_then(|b| b.prediction.as_ref().ok()))
                .min_by(|a, b| a.seconds.total_cmp(&b.seconds));
            if let Some(p) = best {
                print!("{p}");
            }
        }
        println!();
    }
    println!("wall time: {:.1} s", t0.elapsed().as_secs_f64());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_space_holds_the_catalogue_tiles_and_predicts_one() {
        let sp = space(Arch::Gfx950, DType::Bf16, DType::F32, false, false, MN, KT);
        assert!(sp.iter().any(|c| c.tile == (256, 256, 64) && c.wave_grid == (2, 4)));
        let fits = sp.iter().filter(|c| fit::check(c).is_ok()).count();
        assert!(fits > 20 && fits < sp.len(), "{fits} of {}", sp.len());
        let cfg = KernelConfig::new(Arch::Gfx942, DType::Bf16, DType::F32, false, false, Align::Vec8);
        let opts = ModelOptions { at_peak_clock: false, prefix_bytes: 16 << 10, ..Default::default() };
        let r = sweep_one(cfg, 256, 256, 64, Some(&opts));
        let p = r.built.unwrap().prediction.unwrap();
        assert!(p.tflops > 0.0 && p.tflops < p.peak_tflops, "{p}");
        let bad = cfg.with_shape((256, 256, 128), (1, 4), MfmaShape::native_32(Arch::Gfx942), 2);
        assert!(sweep_one(bad, 256, 256, 64, None).built.is_err());
    }

    /// The footprint pass counts a line once per CU (`gemm_emu::timing::grid`): the workgroups
    /// resident on one CU share its L1 in the cycle simulation, so the activations they all read
    /// are not L2 hits that the simulation could spend on its own misses, the weights. Counted
    /// per workgroup they were a 30% L2 hit share, and this 2-wave decode-rows tile (3
    /// workgroups per CU) streamed Llama-8B gate_up's 235 MB at M = 16 in 40.1 us against a
    /// 44.3 us floor at peak HBM.
    #[test]
    fn a_decode_kernel_streams_no_faster_than_the_hbm_peak() {
        let (m, n, k) = (28672u32, 16u32, 4096u32);
        let cfg = KernelConfig::decode_rows(Arch::Gfx942, DType::Bf16, DType::Bf16, 1, 16, 2, 2);
        let p = sweep_one(cfg, m, n, k, Some(&ModelOptions::default())).built.unwrap().prediction.unwrap();
        let bytes = 2.0 * (f64::from(m) * f64::from(k) + f64::from(n) * f64::from(k) + f64::from(m) * f64::from(n));
        let floor = bytes / (gemm_emu::timing::params::Params::for_arch(Arch::Gfx942).hbm_tbps * 1e12);
        assert!(p.seconds >= floor, "{:.1} us against a {:.1} us floor: {p}", p.seconds * 1e6, floor * 1e6);
        assert!(p.hits.l2 < 0.2, "L2 hit share {:.2}: {p}", p.hits.l2);
    }
}
