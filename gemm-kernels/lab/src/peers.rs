//! `gemm peers` (issue 24 item 1, "Peers in the same run"): for square sizes and the
//! Llama-3.1-70B prefill shapes, bf16 and fp8 (e4m3: FNUZ on gfx942, OCP on gfx950), both
//! archs, the Linear layout (`Y = X W^T`, W of N x K row-major) and NN (row-major `C = A B`):
//! what the runtime launches (the dispatcher's plan, every launch through the timing model:
//! [`crate::model_eval::predict_dispatcher`]) beside every foreign kernel of the same input
//! dtype the model can run, predicted by the same model in the same run:
//!
//! * Triton 3.9's best configuration of a sweep (`gemm-kernels/emulator/tests/data/triton/gen.py
//!   --sweep`; the winners of its first pass are kept as test data in `triton/peers/`, every
//!   configuration's prediction in `triton/peers/sweep-results.txt`);
//! * the AMD ROCm blog's fp8 ping-pong (gfx950, fp8, Linear layout only: it reads A and B
//!   K-contiguous; one code object per size, built by the calibration `build.sh`);
//! * HipKittens' bf16 and fp8 GEMMs (gfx950, Linear layout only: C = A B^T with both operands
//!   K-contiguous; one code object per size, built by the calibration `build.sh` from
//!   HipKittens' sources: `hk_bf16_128` at 1024^3 and 2048^3, `hk_bf16_256` from 4096^3 on and
//!   the Llama shapes; fp8: `hk_fp8_4wave`, the kernel of HipKittens' published fp8 figures
//!   (its manifest's notes give the evidence)).
//!
//! Published measurements on MI355X (HipKittens, hipBLASLt, as HipKittens benchmarked them) sit
//! in their own columns, marked as measured on hardware, beside the gfx950 square rows. The
//! ratio is ours over the best foreign *prediction*; the ceiling is the model's MFMA ceiling
//! (`Arch::mfma_ceiling_tflops`: peak rate at the clock under load).

use crate::decode_table::{dtype_of, linear};
use crate::model_eval::predict_dispatcher;
use gemm_core::{Arch, DType, GemmProblem, Layout};
use gemm_emu::calibration::{self, Kernel};
use gemm_emu::model_eval::{self as eval, TritonKernel};
use gemm_emu::timing::{CacheState, ModelOptions};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// `gemm peers`.
#[derive(clap::Args, Debug, Clone)]
pub struct PeersArgs {
    /// gfx942, gfx950 (default: both).
    #[arg(long, value_delimiter = ',')]
    pub archs: Vec<Arch>,
    /// Input dtypes: `bf16` (C bf16), `fp8` (e4m3 of the arch, C bf16).
    #[arg(long, value_delimiter = ',', default_values_t = ["bf16".to_string(), "fp8".to_string()])]
    pub dtypes: Vec<String>,
    /// Layouts: `linear` (Y = X W^T, W row-major N x K) and `nn` (row-major C = A B).
    #[arg(long, value_delimiter = ',', default_values_t = ["linear".to_string(), "nn".to_string()])]
    pub layouts: Vec<String>,
    /// Square sizes M = N = K.
    #[arg(long, value_delimiter = ',', default_values_t = [1024usize, 2048, 4096, 8192, 16384])]
    pub sizes: Vec<usize>,
    /// Tokens (M) of the Llama-3.1-70B prefill rows (N x K = 10240 x 8192, 8192 x 8192,
    /// 57344 x 8192, 8192 x 28672).
    #[arg(long, value_delimiter = ',', default_values_t = [4096usize, 16384])]
    pub tokens: Vec<usize>,
    /// Only these shapes `MxNxK` instead of the squares and the Llama rows.
    #[arg(long, value_delimiter = ',')]
    pub shapes: Vec<String>,
    /// The Triton kernels (a `gen.py --sweep` directory; default: the emulator's
    /// tests/data/triton/peers).
    #[arg(long)]
    pub triton_dir: Option<PathBuf>,
    /// The calibration directory with the ping-pong's code objects (default: the emulator's).
    #[arg(long)]
    pub calibration_dir: Option<PathBuf>,
    /// Print every Triton configuration's prediction per shape and the `--top` of each
    /// (arch, dtype, layout, shape) instead of the table (the sweep's ranking pass).
    #[arg(long)]
    pub sweep: bool,
    /// With `--sweep`: how many winners per cell to list.
    #[arg(long, default_value_t = 3)]
    pub top: usize,
    /// Also write the output to this file (the committed table: gemm-kernels/lab/results/peers.txt).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Threads for the predictions (default: every hardware thread).
    #[arg(long)]
    pub jobs: Option<usize>,
}

/// Llama-3.1-70B's Linear layers (N, K) in prefill: fused q/k/v, o, fused gate/up, down.
pub const LLAMA_70B: &[(&str, usize, usize)] =
    &[("qkv", 10240, 8192), ("o", 8192, 8192), ("gate_up", 57344, 8192), ("down", 8192, 28672)];

/// HipKittens on MI355X, M = N = K = 1024..16384 (TFLOP/s, measured): bf16, fp8.
pub const HK_SIZES: [usize; 5] = [1024, 2048, 4096, 8192, 16384];
pub const HK_BF16: [f64; 5] = [139.5, 665.1, 1412.9, 1610.5, 1571.5];
pub const HK_FP8: [f64; 5] = [270.1, 1054.2, 2741.4, 3327.5, 3377.8];
/// hipBLASLt on MI355X as HipKittens measured it beside its kernels, same sizes.
pub const HIPBLASLT_BF16: [f64; 5] = [167.9, 639.6, 1432.7, 1574.7, 1579.2];
pub const HIPBLASLT_FP8: [f64; 5] = [204.9, 1172.7, 2748.8, 3233.2, 3293.2];

/// One problem shape of the table.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    pub label: String,
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

impl Shape {
    fn cube(&self) -> Option<usize> {
        (self.m == self.n && self.n == self.k).then_some(self.m)
    }
}

/// The shapes of `args`: `--shapes`, else the squares then the Llama rows.
pub fn shapes(args: &PeersArgs) -> Result<Vec<Shape>, String> {
    if !args.shapes.is_empty() {
        return args
            .shapes
            .iter()
            .map(|s| {
                let v: Vec<usize> = s
                    .split('x')
                    .map(|x| x.trim().parse::<usize>())
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("--shapes {s}: {e}"))?;
                match v[..] {
                    [m, n, k] => Ok(Shape { label: format!("{m}x{n}x{k}"), m, n, k }),
                    _ => Err(format!("--shapes {s}: expected MxNxK")),
                }
            })
            .collect();
    }
    let mut out: Vec<Shape> = args.sizes.iter().map(|&s| Shape { label: format!("{s}^3"), m: s, n: s, k: s }).collect();
    for &m in &args.tokens {
        for &(name, n, k) in LLAMA_70B {
            out.push(Shape { label: format!("70B {name} M={m}"), m, n, k });
        }
    }
    Ok(out)
}

/// One table cell's coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct CellKey {
    pub arch: Arch,
    pub dtype: String,
    pub linear: bool,
    pub shape: Shape,
}

impl CellKey {
    /// The runtime's problem for this cell (row-major; the Linear layout transposes B).
    pub fn problem(&self) -> Result<GemmProblem, String> {
        let (ab, c) = dtype_of(&self.dtype, self.arch)?;
        let s = &self.shape;
        Ok(if self.linear {
            linear(s.m, s.n, s.k, ab, c)
        } else {
            GemmProblem::new(s.m, s.n, s.k).with_layout(Layout::RowMajor).with_dtypes(ab, ab, c)
        })
    }
    fn layout(&self) -> &'static str {
        if self.linear {
            "linear"
        } else {
            "nn"
        }
    }
}

/// Who a prediction is of.
#[derive(Clone, Debug)]
pub enum Peer {
    /// The dispatcher's plan.
    Ours,
    /// A Triton kernel of the sweep.
    Triton(Box<TritonKernel>),
    /// The blog's fp8 ping-pong.
    PingPong,
    /// A HipKittens GEMM: the calibration kernel of this name.
    HipKittens(String),
}

/// The HipKittens calibration kernels of an input dtype, in the order `peers_of` tries them
/// (the first with a code object for the shape is the cell's). fp8: the 4-wave kernel, the one
/// that produced HipKittens' published fp8 figures (calibration manifest `hk_fp8_4wave`; the
/// 8-wave one, `hk_fp8_8wave`, is in the calibration set too, its points not scored).
pub fn hipkittens_kernels(dtype: &str) -> &'static [&'static str] {
    match dtype {
        "bf16" => &["hk_bf16_128", "hk_bf16_256"],
        "fp8" => &["hk_fp8_4wave"],
        _ => &[],
    }
}

/// The foreign kernels of a cell: the Triton kernels of its arch, input dtype and layout, the
/// ping-pong where it has a code object for the shape (gfx950, fp8, Linear) and HipKittens'
/// GEMM of the dtype where one has (gfx950, Linear); `cal` is the calibration set.
pub fn peers_of(key: &CellKey, triton: &[TritonKernel], cal: &[Kernel]) -> Vec<Peer> {
    let tdt = if key.dtype == "fp8" { "e4m3" } else { key.dtype.as_str() };
    let tl = if key.linear { "tn" } else { "nn" };
    let mut v = vec![Peer::Ours];
    v.extend(
        triton
            .iter()
            .filter(|t| t.arch() == key.arch && t.dtype == tdt && t.layout.as_deref() == Some(tl))
            .map(|t| Peer::Triton(Box::new(t.clone()))),
    );
    let s = &key.shape;
    let built = |k: &&Kernel| key.linear && k.arch == key.arch && k.code_object(s.m, s.n, s.k).is_ok();
    if key.dtype == "fp8" && cal.iter().filter(|k| k.name == "blog_pingpong").any(|k| built(&k)) {
        v.push(Peer::PingPong);
    }
    let hk = hipkittens_kernels(&key.dtype).iter().find_map(|n| cal.iter().find(|k| k.name == *n).filter(built));
    if let Some(k) = hk {
        v.push(Peer::HipKittens(k.name.clone()));
    }
    v
}

/// One prediction.
#[derive(Clone, Debug)]
pub struct Predicted {
    /// What ran: the plan (ours), the configuration (Triton), the kernel.
    pub what: String,
    pub tflops: Result<f64, String>,
    pub secs: f64,
}

fn predict(key: &CellKey, peer: &Peer, tdir: &Path, cal: &[Kernel], opts: &ModelOptions) -> Predicted {
    let t0 = Instant::now();
    let s = &key.shape;
    let (what, tflops) = match peer {
        Peer::Ours => match key.problem() {
            Err(e) => ("-".into(), Err(e)),
            Ok(p) => match predict_dispatcher(key.arch, &p, opts) {
                None => ("-".into(), Err("no kernel of these dtypes".into())),
                Some(d) => (d.plan, d.tflops),
            },
        },
        Peer::Triton(t) => (
            t.file.trim_end_matches(".hsaco").to_string(),
            eval::predict_triton(tdir, t, s.m, s.n, s.k, opts).map(|p| p.tflops),
        ),
        Peer::PingPong => {
            let k = cal.iter().find(|k| k.name == "blog_pingpong").expect("a ping-pong peer has its kernel");
            (
                "blog ping-pong 256x256x128".into(),
                eval::predict_size_in(k, s.m, s.n, s.k, opts, CacheState::default()).map(|p| p.tflops),
            )
        }
        Peer::HipKittens(name) => {
            let k = cal.iter().find(|k| &k.name == name).expect("a HipKittens peer has its kernel");
            (
                format!("HipKittens {name}"),
                eval::predict_size_in(k, s.m, s.n, s.k, opts, CacheState::default()).map(|p| p.tflops),
            )
        }
    };
    Predicted { what, tflops, secs: t0.elapsed().as_secs_f64() }
}

/// The published MI355X figures of a cell: (HipKittens, hipBLASLt), gfx950 squares only.
pub fn published(key: &CellKey) -> (Option<f64>, Option<f64>) {
    let Some(i) = key.shape.cube().and_then(|s| HK_SIZES.iter().position(|&x| x == s)) else { return (None, None) };
    if key.arch != Arch::Gfx950 || !key.linear {
        return (None, None);
    }
    match key.dtype.as_str() {
        "bf16" => (Some(HK_BF16[i]), Some(HIPBLASLT_BF16[i])),
        "fp8" => (Some(HK_FP8[i]), Some(HIPBLASLT_FP8[i])),
        _ => (None, None),
    }
}

fn fmt_tf(r: &Result<f64, String>) -> String {
    match r {
        Ok(t) => format!("{t:.1}"),
        Err(e) if e.starts_with("cannot launch") => "no launch".into(),
        Err(_) => "refused".into(),
    }
}

/// The best Triton prediction of a cell (configuration, TFLOP/s).
fn best_triton<'a>(peers: &'a [Peer], preds: &'a [Predicted]) -> Option<&'a Predicted> {
    peers
        .iter()
        .zip(preds)
        .filter(|(p, r)| matches!(p, Peer::Triton(_)) && r.tflops.is_ok())
        .map(|(_, r)| r)
        .max_by(|a, b| a.tflops.as_ref().unwrap_or(&0.0).total_cmp(b.tflops.as_ref().unwrap_or(&0.0)))
}

/// The table: one block per (arch, dtype, layout), one line per shape.
pub fn report(cells: &[(CellKey, Vec<Peer>, Vec<Predicted>)]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "gemm peers: predicted TFLOP/s (timing model, clock under the kernel's matrix load, Infinity Cache cold), every kernel in the same run;"
    );
    let _ = writeln!(s, "measured = published hardware figure on MI355X (not a prediction).");
    let mut notes: Vec<String> = Vec::new();
    let mut block = String::new();
    for (key, peers, preds) in cells {
        let title = format!("{} {} {}", key.arch.name(), key.dtype, key.layout());
        if title != block {
            block = title;
            let (ab, _) = dtype_of(&key.dtype, key.arch).unwrap_or((DType::Bf16, DType::Bf16));
            let _ = writeln!(
                s,
                "\n== {block} ({}; C bf16; MFMA ceiling {:.0} TFLOP/s) ==",
                if key.linear { "Y = X W^T, W row-major N x K" } else { "row-major C = A B" },
                key.arch.mfma_ceiling_tflops(ab, false)
            );
            let _ = writeln!(
                s,
                "{:<20} {:>8} {:>8} {:>9} {:>6} {:>6} {:>7} {:>9} {:>9}  {:<28} triton best configuration",
                "shape", "ours", "triton", "pingpong", "ratio", "%ceil", "HK", "HK meas", "hBLt meas", "ours: plan",
            );
        }
        let ours = &preds[0];
        let tri = best_triton(peers, preds);
        let pp = peers.iter().zip(preds).find(|(p, _)| matches!(p, Peer::PingPong)).map(|(_, r)| r);
        let hkp = peers.iter().zip(preds).find(|(p, _)| matches!(p, Peer::HipKittens(_))).map(|(_, r)| r);
        let best_foreign = [tri, pp, hkp]
            .into_iter()
            .flatten()
            .filter_map(|r| r.tflops.as_ref().ok())
            .copied()
            .fold(f64::NAN, f64::max);
        let (ab, _) = dtype_of(&key.dtype, key.arch).unwrap_or((DType::Bf16, DType::Bf16));
        let ceiling = key.arch.mfma_ceiling_tflops(ab, false);
        let ratio = match &ours.tflops {
            Ok(o) if best_foreign.is_finite() => format!("{:.2}", o / best_foreign),
            _ => "-".into(),
        };
        let pct = ours.tflops.as_ref().map_or("-".into(), |o| format!("{:.0}%", 100.0 * o / ceiling));
        let (hk, hb) = published(key);
        let m = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.1}"));
        let n_triton = peers.iter().filter(|p| matches!(p, Peer::Triton(_))).count();
        let _ = writeln!(
            s,
            "{:<20} {:>8} {:>8} {:>9} {:>6} {:>6} {:>7} {:>9} {:>9}  {:<28} {}",
            key.shape.label,
            fmt_tf(&ours.tflops),
            tri.map_or_else(|| if n_triton == 0 { "n/a".into() } else { "refused".into() }, |r| fmt_tf(&r.tflops)),
            pp.map_or("n/a".into(), |r| fmt_tf(&r.tflops)),
            ratio,
            pct,
            hkp.map_or("n/a".into(), |r| fmt_tf(&r.tflops)),
            m(hk),
            m(hb),
            ours.what,
            tri.map_or_else(|| format!("({n_triton} configurations)"), |r| format!("{} (best of {n_triton})", r.what)),
        );
        for (p, r) in peers.iter().zip(preds) {
            if let Err(e) = &r.tflops {
                let who = match p {
                    Peer::Ours => "ours".to_string(),
                    _ => r.what.clone(),
                };
                notes.push(format!("{} {}: {who}: {e}", key.arch.name(), key.shape.label));
            }
        }
    }
    let _ = writeln!(s, "\ncolumns:");
    for line in [
        "ours: what the runtime launches (plan_gemm on the whole chip; every launch of a split plan), by the timing model; plan: tile, schedule, split",
        "triton: the best prediction among the Triton 3.9 sweep's kept winners of this arch, dtype and layout (gen.py --sweep; all configurations' predictions in triton/peers/sweep-results.txt); C bf16",
        "pingpong: the AMD ROCm blog's fp8 8-wave ping-pong (256x256x128, gfx950, A and B K-contiguous: Linear layout only), built per size by calibration/build.sh",
        "ratio: ours / the best foreign prediction of the cell (triton, pingpong, HK); %ceil: ours / the model's MFMA ceiling at the loaded clock",
        "HK: HipKittens' GEMM predicted by the model (gfx950, Linear layout only: it reads A and B K-contiguous): bf16, its mi350x kernel_<S>.cpp",
        "    (128 tile at 1024^3 and 2048^3, 256 tile from 4096^3 on and for the Llama shapes); fp8, its 4-wave kernel; built per size by",
        "    calibration/build.sh from HipKittens f09e9685c4c6 with ROCm 6.3's HIP headers and ROCm 7.1.0's LLVM (calibration/README.md)",
        "HK meas, hBLt meas: measured on MI355X (hardware, not the model), M = N = K, both operands K-contiguous (C = A B^T), from HazyResearch/HipKittens",
        "    commit f09e9685c4c6aaa41fb3ebd4fe4ca664938589e1: HipKittens analysis/{bf16,fp8}_gemm/mi350x/mi355x_{bf16,fp8}_gemm.json (`tflops`); hipBLASLt: analysis/bf16_gemm/plot.py",
        "    (`mi355x_baselines.hipblaslt`) and analysis/fp8_gemm/mi350x/mi355x_fp8_gemm.json (`tflops_hipblaslt`); fp8 there is e4m3 OCP with its own output type",
    ] {
        let _ = writeln!(s, "  {line}");
    }
    if !notes.is_empty() {
        let _ = writeln!(s, "no prediction:");
        for n in notes {
            let _ = writeln!(s, "  {n}");
        }
    }
    s
}

/// The sweep's ranking: every Triton configuration's prediction per cell, then the `top` of
/// each cell.
pub fn sweep_report(cells: &[(CellKey, Vec<Peer>, Vec<Predicted>)], top: usize) -> String {
    let mut s = String::new();
    let _ =
        writeln!(s, "# arch dtype layout shape configuration predicted-TFLOP/s (timing model; no-launch/refused: why)");
    let mut winners = String::new();
    for (key, peers, preds) in cells {
        let mut rows: Vec<(&Predicted, f64)> = peers
            .iter()
            .zip(preds)
            .filter(|(p, _)| matches!(p, Peer::Triton(_)))
            .map(|(_, r)| (r, *r.tflops.as_ref().unwrap_or(&f64::NEG_INFINITY)))
            .collect();
        rows.sort_by(|a, b| b.1.total_cmp(&a.1));
        for (r, _) in &rows {
            let v = match &r.tflops {
                Ok(t) => format!("{t:.1}"),
                Err(e) => format!("- {e}"),
            };
            let _ = writeln!(
                s,
                "{} {} {} {} {} {v}",
                key.arch.name(),
                key.dtype,
                key.layout(),
                key.shape.label.replace(' ', "_"),
                r.what
            );
        }
        for (r, t) in rows.iter().take(top).filter(|(_, t)| t.is_finite()) {
            let _ = writeln!(
                winners,
                "{} # {} {} {} {} {t:.1}",
                r.what,
                key.arch.name(),
                key.dtype,
                key.layout(),
                key.shape.label.replace(' ', "_")
            );
        }
        if let Ok(o) = &preds[0].tflops {
            let _ = writeln!(
                s,
                "{} {} {} {} ours:{} {o:.1}",
                key.arch.name(),
                key.dtype,
                key.layout(),
                key.shape.label.replace(' ', "_"),
                preds[0].what.replace(' ', "_")
            );
        }
    }
    let _ = writeln!(s, "# winners (top {top} per cell): the names gen.py --sweep DIR --names FILE compiles");
    s + &winners
}

/// Runs `gemm peers`.
pub fn run(args: &PeersArgs) -> Result<(), String> {
    let t0 = Instant::now();
    let jobs = args.jobs.unwrap_or_else(crate::jobs::default_jobs);
    let archs: Vec<Arch> = if args.archs.is_empty() { Arch::ALL.to_vec() } else { args.archs.clone() };
    for l in &args.layouts {
        if l != "linear" && l != "nn" {
            return Err(format!("--layouts {l}: expected linear or nn"));
        }
    }
    for d in &args.dtypes {
        dtype_of(d, Arch::Gfx950)?;
    }
    let shapes = shapes(args)?;
    let tdir = args.triton_dir.clone().unwrap_or_else(|| eval::triton_dir().join("peers"));
    let triton = eval::load_triton(&tdir).map_err(|e| e.to_string())?;
    let cdir = args.calibration_dir.clone().unwrap_or_else(calibration::default_dir);
    let cal = calibration::load_dir(&cdir).map_err(|e| e.to_string())?;

    let mut keys = Vec::new();
    for &arch in &archs {
        for dtype in &args.dtypes {
            for layout in &args.layouts {
                for shape in &shapes {
                    keys.push(CellKey { arch, dtype: dtype.clone(), linear: layout == "linear", shape: shape.clone() });
                }
            }
        }
    }
    let peers: Vec<Vec<Peer>> = keys
        .iter()
        .map(|k| {
            let mut v = peers_of(k, &triton, &cal);
            if args.sweep {
                v.retain(|p| matches!(p, Peer::Ours | Peer::Triton(_)));
            }
            v
        })
        .collect();
    let items: Vec<(usize, usize)> =
        peers.iter().enumerate().flat_map(|(i, v)| (0..v.len()).map(move |j| (i, j))).collect();
    eprintln!(
        "gemm peers: {} cells, {} predictions ({} Triton kernels from {}) on {jobs} thread(s), one line as each finishes",
        keys.len(),
        items.len(),
        triton.len(),
        tdir.display()
    );
    let opts = ModelOptions::default();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let flat = crate::jobs::map_jobs(&items, jobs, |&(i, j)| {
        let key = &keys[i];
        let r = predict(key, &peers[i][j], &tdir, &cal, &opts);
        let k = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        eprintln!(
            "  [{k}/{}] {} {} {} {}: {}: {} ({:.1}s)",
            items.len(),
            key.arch.name(),
            key.dtype,
            key.layout(),
            key.shape.label,
            r.what,
            r.tflops.as_ref().map_or_else(|e| e.clone(), |t| format!("{t:.1} TFLOP/s")),
            r.secs
        );
        r
    });
    let mut flat = flat.into_iter();
    let cells: Vec<(CellKey, Vec<Peer>, Vec<Predicted>)> = keys
        .into_iter()
        .zip(peers)
        .map(|(k, p)| {
            let preds: Vec<Predicted> = flat.by_ref().take(p.len()).collect();
            (k, p, preds)
        })
        .collect();
    let text = if args.sweep { sweep_report(&cells, args.top) } else { report(&cells) };
    print!("{text}");
    if let Some(out) = &args.out {
        std::fs::write(out, &text).map_err(|e| format!("{}: {e}", out.display()))?;
        println!("written: {}", out.display());
    }
    println!("wall time: {:.1} s", t0.elapsed().as_secs_f64());
    Ok(())
}
