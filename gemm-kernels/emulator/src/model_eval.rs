//! Evaluation of the timing model (issue 10, "Done when"): the calibration table (every
//! calibration kernel at every published size, predicted against published TFLOP/s), the
//! order check, the log-log plot, and the Triton 3.9 test-data kernels as workloads for
//! the side-by-side comparison (`gemm calibrate`, `gemm compare`).
//!
//! Nothing here changes a model parameter: the predictions are `timing::Model::predict`
//! with the default options (timing-only, steady state simulated and extrapolated), so
//! the figures are whatever the parameter table of `timing/params.rs` gives. That table
//! has no fitted row (its tags are [V] primary source, [S] published measurement,
//! [D] derived, [A] assumption); [`parameter_tags`] counts them for the report.
//!
//! Like is compared with like: the model predicts the kernel alone, and a published figure
//! that was timed per launch between host-recorded events also holds the launch overhead, so
//! for those points (manifest `timing = "per_launch_events"`) the comparison adds
//! [`calibration::PER_LAUNCH_OVERHEAD_S`] to the predicted time ([`with_launch_overhead`]).
//! Points a manifest marks `not_scored` (a figure printed beside a kernel that did not produce
//! it) are predicted and printed but left out of the band count, the geometric mean, the order
//! check and the plot.

use crate::calibration::{self, Kernel, Published, Timing, PER_LAUNCH_OVERHEAD_ALT_S};
use crate::timing::{CacheState, Model, ModelOptions, Params, Prediction, Reason, Tag, Workload, REASONS};
use crate::{Arch, Device};
use serde::Deserialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The error band of issue 10's target: predicted within ±25 % of published.
pub const BAND: f64 = 0.25;

/// Why an evaluation input could not be used.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Calibration(#[from] calibration::CalibrationError),
    #[error("{path}: {why}")]
    Manifest { path: PathBuf, why: String },
}

/// One row of the calibration table: a kernel at one published size.
#[derive(Clone, Debug)]
pub struct CalRow {
    pub kernel: String,
    pub arch: Arch,
    pub published: Published,
    /// The model's prediction, or why there is none (a refusal is a row, not an abort).
    pub prediction: Result<Prediction, String>,
    /// Wall time of this prediction.
    pub wall: Duration,
    /// For a point with a cache state whose operands fit in the Infinity Cache: the
    /// prediction in the other state (TFLOP/s), printed beside.
    pub other_state: Option<(CacheState, Result<f64, String>)>,
    /// Whether the order check compares this point by time (the kernel's `order_by`).
    pub order_by_time: bool,
}

/// TFLOP/s of `flops` of work done at `tflops` with `overhead_s` seconds more: the model's
/// kernel-alone figure as a harness that also times the launch would print it.
pub fn with_launch_overhead(tflops: f64, flops: f64, overhead_s: f64) -> f64 {
    if overhead_s == 0.0 {
        return tflops;
    }
    flops / (flops / (tflops * 1e12) + overhead_s) / 1e12
}

impl CalRow {
    /// 2MNK of the point.
    pub fn flops(&self) -> f64 {
        Kernel::flops(self.published.m, self.published.n, self.published.k)
    }
    /// Seconds added to the model's kernel time to compare with the figure (its `timing`).
    pub fn overhead_s(&self) -> f64 {
        self.published.timing.overhead_s()
    }
    /// The model's TFLOP/s for the kernel alone, at the clock under the kernel's matrix load.
    pub fn kernel_tflops(&self) -> Option<f64> {
        self.prediction.as_ref().ok().map(|p| p.tflops)
    }
    /// TFLOP/s at the clock under the kernel's matrix load, timed as the figure was: the
    /// kernel alone plus, for a figure timed per launch, the launch overhead.
    pub fn predicted(&self) -> Option<f64> {
        self.kernel_tflops().map(|t| with_launch_overhead(t, self.flops(), self.overhead_s()))
    }
    /// TFLOP/s at the peak clock (equal to `predicted` where the two clocks coincide), timed as
    /// the figure was.
    pub fn predicted_at_peak(&self) -> Option<f64> {
        self.prediction
            .as_ref()
            .ok()
            .map(|p| with_launch_overhead(p.at_peak.map_or(p.tflops, |x| x.2), self.flops(), self.overhead_s()))
    }
    /// Whether the point counts in the score (manifest `not_scored` absent).
    pub fn scored(&self) -> bool {
        self.published.scored()
    }
    /// (predicted - published) / published at the clock under the kernel's matrix load.
    pub fn error(&self) -> Option<f64> {
        self.predicted().map(|t| (t - self.published.tflops) / self.published.tflops)
    }
    /// The cache state the prediction assumed ("-" where the point names none).
    pub fn cache(&self) -> &'static str {
        match (&self.published.cache, &self.prediction) {
            (None, _) => "-",
            (Some(_), Ok(p)) => p.cache.name(),
            (Some(c), Err(_)) => c.name(),
        }
    }
    pub fn label(&self) -> String {
        format!("{} {}x{}x{}", self.kernel, self.published.m, self.published.n, self.published.k)
    }
}

/// Predicts one published point of a calibration kernel: zero-filled A, B, C in a fresh
/// emulated device (timing-only runs do not depend on the values), the manifest's launch,
/// in the Infinity Cache state the point was measured in (cold where it names none).
pub fn predict_published(k: &Kernel, p: &Published, opts: &ModelOptions) -> Result<Prediction, String> {
    predict_published_in(k, p, opts, p.cache.unwrap_or_default())
}

/// [`predict_published`] in a given Infinity Cache state.
pub fn predict_published_in(
    k: &Kernel,
    p: &Published,
    opts: &ModelOptions,
    cache: CacheState,
) -> Result<Prediction, String> {
    predict_size_in(k, p.m, p.n, p.k, opts, cache)
}

/// Predicts a calibration kernel at `m x n x kk` (a size it has a code object for, published
/// or not: `gemm peers` runs the blog's ping-pong at the sizes of its table) in a given
/// Infinity Cache state.
pub fn predict_size_in(
    k: &Kernel,
    m: usize,
    n: usize,
    kk: usize,
    opts: &ModelOptions,
    cache: CacheState,
) -> Result<Prediction, String> {
    let operand_bytes: u64 = k.buffer_bytes(m, n, kk).iter().map(|&b| b as u64).sum();
    let opts = &ModelOptions { cache, operand_bytes, ..opts.clone() };
    let dev = Device::new(k.arch);
    let mut ptrs = [0u64; 3];
    for (slot, bytes) in ptrs.iter_mut().zip(k.buffer_bytes(m, n, kk)) {
        *slot = dev.alloc(bytes as u64).map_err(|e| e.to_string())?;
    }
    let plan = k.plan(m, n, kk, ptrs[0], ptrs[1], ptrs[2]).map_err(|e| e.to_string())?;
    let w = Workload {
        code_object: &plan.code_object,
        kernel: &plan.symbol,
        grid: plan.grid,
        block: plan.block,
        kernarg: &plan.kernarg,
        dynamic_lds: plan.dynamic_lds,
        flops: plan.flops,
    };
    Model::new(k.arch).predict(dev.memory(), &w, opts).map_err(|e| e.to_string())
}

/// Which published points to evaluate.
#[derive(Clone, Debug, Default)]
pub struct CalSelection {
    /// Only kernels whose name contains this.
    pub only: Option<String>,
    /// Only published points with M·N·K at most this (a fast subset).
    pub max_mnk: Option<u64>,
}

impl CalSelection {
    fn keeps(&self, k: &Kernel, p: &Published) -> bool {
        self.only.as_deref().is_none_or(|s| k.name.contains(s))
            && self.max_mnk.is_none_or(|c| (p.m as u64) * (p.n as u64) * (p.k as u64) <= c)
    }
}

/// One row: the prediction in the point's own cache state, and in the other one where the
/// operands fit in the Infinity Cache (so that the two differ).
fn row(k: &Kernel, p: &Published, opts: &ModelOptions) -> CalRow {
    let t0 = Instant::now();
    let prediction = predict_published(k, p, opts);
    let fits =
        k.buffer_bytes(p.m, p.n, p.k).iter().map(|&b| b as u64).sum::<u64>() <= Params::for_arch(k.arch).mall_bytes;
    let other_state = match p.cache {
        Some(c) if fits => {
            let o = if c == CacheState::Warm { CacheState::Cold } else { CacheState::Warm };
            let flops = Kernel::flops(p.m, p.n, p.k);
            let t = predict_published_in(k, p, opts, o)
                .map(|x| with_launch_overhead(x.tflops, flops, p.timing.overhead_s()));
            Some((o, t))
        }
        _ => None,
    };
    CalRow {
        kernel: k.name.clone(),
        arch: k.arch,
        published: p.clone(),
        prediction,
        wall: t0.elapsed(),
        other_state,
        order_by_time: k.order_by_time,
    }
}

/// Predicts every selected (kernel, published size) of the set, in manifest order.
/// `progress` is told each row as it finishes (the CLI prints it to stderr).
pub fn calibrate(
    set: &[Kernel],
    sel: &CalSelection,
    opts: &ModelOptions,
    mut progress: impl FnMut(&CalRow),
) -> Vec<CalRow> {
    let mut rows = Vec::new();
    for k in set {
        for p in k.published.iter().filter(|p| sel.keeps(k, p)) {
            let row = row(k, p, opts);
            progress(&row);
            rows.push(row);
        }
    }
    rows
}

/// [`calibrate`] on `jobs` threads: the points are independent, each thread takes the next one
/// as it finishes one; `progress` sees each row as it finishes, and the rows come back in the
/// set's order whatever the thread count.
pub fn calibrate_on(
    set: &[Kernel],
    sel: &CalSelection,
    opts: &ModelOptions,
    jobs: usize,
    progress: &(dyn Fn(&CalRow) + Sync),
) -> Vec<CalRow> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let points: Vec<(&Kernel, &Published)> =
        set.iter().flat_map(|k| k.published.iter().filter(|p| sel.keeps(k, p)).map(move |p| (k, p))).collect();
    let next = AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<CalRow>>> = points.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, points.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(&(k, p)) = points.get(i) else { break };
                let row = row(k, p, opts);
                progress(&row);
                *slots[i].lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(row);
            });
        }
    });
    slots.into_iter().filter_map(|s| s.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)).collect()
}

/// The order check: every pair of predicted points on the same GPU (and compared by the
/// same measure: TFLOP/s for GEMMs, time for decode GEMVs) whose published figures differ
/// by more than 2 % must be predicted in the same order.
#[derive(Clone, Debug, Default)]
pub struct OrderCheck {
    pub pairs: usize,
    /// (faster published, slower published) pairs that the model predicts the other way.
    pub inversions: Vec<(String, String)>,
}

/// A point of the order check: label, group (the GPU, and the measure compared), published
/// and predicted speed (TFLOP/s, or 1 / time for points ordered by time: higher is faster
/// either way).
#[derive(Clone, Debug)]
pub struct Point {
    pub label: String,
    pub gpu: String,
    pub published: f64,
    pub predicted: f64,
}

/// Published figures closer than this (relative) are not ordered: the sources print
/// three or four digits and repeat runs differ by about that much.
pub const ORDER_TIE: f64 = 0.02;

pub fn order_check_points(points: &[Point]) -> OrderCheck {
    let mut out = OrderCheck::default();
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            let (ta, tb) = (a.published, b.published);
            if a.gpu != b.gpu || (ta - tb).abs() <= ORDER_TIE * ta.max(tb) {
                continue;
            }
            out.pairs += 1;
            if (ta > tb) != (a.predicted > b.predicted) {
                let (hi, lo) = if ta > tb { (a, b) } else { (b, a) };
                out.inversions.push((hi.label.clone(), lo.label.clone()));
            }
        }
    }
    out
}

/// The order check of the rows that have a prediction.
pub fn order_check(rows: &[CalRow]) -> OrderCheck {
    let points: Vec<Point> = rows
        .iter()
        .filter(|r| r.scored())
        .filter_map(|r| {
            // At a fixed size TFLOP/s is inverse time; across sizes, time order needs time.
            let flops = Kernel::flops(r.published.m, r.published.n, r.published.k);
            let (published, predicted, gpu) = if r.order_by_time {
                (r.published.tflops / flops, r.predicted()? / flops, format!("{} (time)", r.published.gpu))
            } else {
                (r.published.tflops, r.predicted()?, r.published.gpu.clone())
            };
            Some(Point { label: r.label(), gpu, published, predicted })
        })
        .collect();
    order_check_points(&points)
}

/// Rows of the arch's parameter table per source tag: ([V], [S], [D], [A]).
pub fn parameter_tags(arch: Arch) -> [usize; 4] {
    let mut n = [0usize; 4];
    for r in Params::for_arch(arch).rows() {
        n[match r.tag {
            Tag::Verified => 0,
            Tag::Secondary => 1,
            Tag::Derived => 2,
            Tag::Assumed => 3,
        }] += 1;
    }
    n
}

/// The two largest stall causes of a prediction's simulated CU, as "cause share%".
pub fn top_stalls(p: &Prediction) -> String {
    let mut v: Vec<(Reason, u64)> =
        REASONS.iter().filter(|r| **r != Reason::Issue).map(|r| (*r, p.stalls.get(*r))).collect();
    let total: u64 = REASONS.iter().map(|r| p.stalls.get(*r)).sum::<u64>().max(1);
    v.sort_by_key(|x| std::cmp::Reverse(x.1));
    v.iter()
        .take(2)
        .filter(|x| x.1 > 0)
        .map(|(r, n)| format!("{} {:.0}%", r.name(), 100.0 * *n as f64 / total as f64))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The table `gemm calibrate` prints: one line per point, then the sources, the mechanism
/// behind each prediction, the order check and the summary.
pub fn calibration_report(rows: &[CalRow]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "calibration: timing model (gemm_emu::timing, timing-only, steady state simulated + extrapolated) against published TFLOP/s"
    );
    let _ = writeln!(
        s,
        "{:<3} {:<20} {:<6} {:<16} {:>9} {:>9} {:>9} {:>9} {:>4}  {:<7} {:>5} {:>9} {:>5} {:>7}",
        "#",
        "kernel",
        "arch",
        "MxNxK",
        "pred",
        "pred@pk",
        "publ",
        "error",
        "±25",
        "GPU",
        "cache",
        "pub us",
        "+us",
        "wall"
    );
    for (i, r) in rows.iter().enumerate() {
        let p = &r.published;
        let size = format!("{}x{}x{}", p.m, p.n, p.k);
        // Decode GEMVs run at a few TFLOP/s: two decimals below 10.
        let f2 = |x: Option<f64>| {
            x.map_or_else(|| "-".into(), |v| if v < 10.0 { format!("{v:.2}") } else { format!("{v:.1}") })
        };
        let err = match (r.error(), r.scored()) {
            (None, _) => "-".into(),
            (Some(e), true) => format!("{:+.1}%", e * 100.0),
            (Some(e), false) => format!("({:+.1}%)", e * 100.0),
        };
        let band = match r.error() {
            _ if !r.scored() => "n/s",
            Some(e) if e.abs() <= BAND => "yes",
            Some(_) => "NO",
            None => "-",
        };
        let us = p.time_ms.map_or_else(|| "-".into(), |t| format!("{:.2}", t * 1e3));
        let ovh = if r.overhead_s() > 0.0 { format!("{:.1}", r.overhead_s() * 1e6) } else { "-".into() };
        let _ = writeln!(
            s,
            "{:<3} {:<20} {:<6} {:<16} {:>9} {:>9} {:>9} {:>9} {:>4}  {:<7} {:>5} {:>9} {:>5} {:>6.1}s",
            i + 1,
            r.kernel,
            r.arch.name(),
            size,
            f2(r.predicted()),
            f2(r.predicted_at_peak()),
            f2(Some(p.tflops)),
            err,
            band,
            p.gpu,
            r.cache(),
            us,
            ovh,
            r.wall.as_secs_f64()
        );
    }
    let _ =
        writeln!(s, "pred = TFLOP/s at the clock under the kernel's matrix load (timing/params.rs), pred@pk = at the peak clock; error = (pred - publ) / publ");
    let _ = writeln!(
        s,
        "+us = the launch overhead added to the predicted kernel time because the figure was timed per launch between host-recorded events (manifest `timing = \"per_launch_events\"`; gemm_emu::calibration::PER_LAUNCH_OVERHEAD_S, ROCm/TransferBench PR 297); - = the figure is the kernel alone (profiler, back to back) or its timing is not stated"
    );
    let unscored: Vec<String> =
        rows.iter().enumerate().filter(|(_, r)| !r.scored()).map(|(i, _)| format!("#{}", i + 1)).collect();
    if !unscored.is_empty() {
        let _ = writeln!(
            s,
            "n/s = printed, not scored (manifest `not_scored`: the figure is another kernel's): {}",
            unscored.join(", ")
        );
    }
    let _ = writeln!(
        s,
        "cache = the Infinity Cache state of the published figure and of the prediction (manifest `cache`; - = not stated, cold with the MALL sharing of resident workgroups); pub us = the published time"
    );
    let others: Vec<String> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let (c, t) = r.other_state.as_ref()?;
            let t = t.as_ref().ok()?;
            Some(format!(
                "#{} {} {:.2} ({:+.1}%)",
                i + 1,
                c.name(),
                t,
                (t - r.published.tflops) / r.published.tflops * 100.0
            ))
        })
        .collect();
    if !others.is_empty() {
        let _ =
            writeln!(s, "the same points in the other cache state (operands fit in the MALL): {}", others.join(", "));
    }
    let alt: Vec<String> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            if r.published.timing != Timing::PerLaunchEvents || !r.scored() {
                return None;
            }
            let alt = with_launch_overhead(r.kernel_tflops()?, r.flops(), PER_LAUNCH_OVERHEAD_ALT_S);
            let (e0, e1) = (r.error()?, (alt - r.published.tflops) / r.published.tflops);
            // Only the points the choice moves by half a point or more.
            ((e1 - e0).abs() >= 0.005).then(|| {
                let flip = if (e0.abs() <= BAND) != (e1.abs() <= BAND) { " (crosses the band)" } else { "" };
                format!("#{} {:+.1}%{flip}", i + 1, e1 * 100.0)
            })
        })
        .collect();
    if !alt.is_empty() {
        let _ = writeln!(
            s,
            "with the per-launch overhead at {:.1} us (ROCm/Tensile PR 1379) instead: {}",
            PER_LAUNCH_OVERHEAD_ALT_S * 1e6,
            alt.join(", ")
        );
    }
    let _ = writeln!(s, "\nwhat the model sees (simulated CU 0 of XCD 0):");
    for (i, r) in rows.iter().enumerate() {
        match &r.prediction {
            Ok(p) => {
                let mfma = p.mfma_busy.iter().copied().fold(0.0, f64::max);
                let _ = writeln!(
                    s,
                    "{:<3} {:.0} MHz; {} wg/CU ({}), {} of {} wgs simulated + {} extrapolated; MFMA busy {:.0}%, LDS {:.0}%; L2 hit {:.0}%, MALL hit {:.0}%; stalls: {}; limit: {}",
                    i + 1,
                    p.mhz,
                    p.occupancy.workgroups,
                    p.occupancy.limited_by,
                    p.simulated_wgs,
                    p.cu_wgs,
                    p.extrapolated_wgs,
                    mfma * 100.0,
                    p.lds_busy * 100.0,
                    p.hits.l2 * 100.0,
                    p.hits.mall * 100.0,
                    top_stalls(p),
                    p.limiter
                );
            }
            Err(why) => {
                let _ = writeln!(s, "{:<3} no prediction: {why}", i + 1);
            }
        }
    }
    let _ = writeln!(s, "\nsources:");
    for (i, r) in rows.iter().enumerate() {
        let src: String = r.published.source.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = writeln!(s, "{:<3} {} [timed: {}]", i + 1, src, r.published.timing.name());
        if let Some(why) = &r.published.not_scored {
            let why: String = why.split_whitespace().collect::<Vec<_>>().join(" ");
            let _ = writeln!(s, "    not scored: {why}");
        }
    }
    let o = order_check(rows);
    let _ = writeln!(
        s,
        "\norder of published results: {} of {} pairs kept{}",
        o.pairs - o.inversions.len(),
        o.pairs,
        if o.inversions.is_empty() { String::new() } else { ", inverted:".into() }
    );
    for (hi, lo) in &o.inversions {
        let _ = writeln!(s, "    published {hi} > {lo}, predicted the other way");
    }
    let scored: Vec<&CalRow> = rows.iter().filter(|r| r.scored()).collect();
    let predicted: Vec<f64> = scored.iter().filter_map(|r| r.error()).collect();
    let within = predicted.iter().filter(|e| e.abs() <= BAND).count();
    let not_scored = rows.len() - scored.len();
    let _ = writeln!(
        s,
        "within ±25%: {within} of {} predicted points ({} without a prediction{})",
        predicted.len(),
        scored.len() - predicted.len(),
        if not_scored > 0 { format!("; {not_scored} printed, not scored") } else { String::new() }
    );
    if !predicted.is_empty() {
        let gm = (predicted.iter().map(|e| (1.0 + e).max(1e-9).ln()).sum::<f64>() / predicted.len() as f64).exp();
        let _ = writeln!(s, "geometric mean of predicted/published: {gm:.3}");
    }
    let mut archs: Vec<Arch> = rows.iter().map(|r| r.arch).collect();
    archs.dedup();
    for a in archs {
        let [v, sec, d, asm] = parameter_tags(a);
        let _ = writeln!(
            s,
            "parameters fitted to these kernels: none ({} table: {v} [V] primary, {sec} [S] measured, {d} [D] derived, {asm} [A] assumed; no row is fitted, timing/params.rs)",
            a.name()
        );
    }
    s
}

/// A log-log plot of predicted (clock under load; the peak clock as a hollow mark) against
/// published TFLOP/s, with the y = x line and the ±25 % band, one numbered point per scored
/// row (a `not_scored` row is in the table only).
pub fn calibration_svg(rows: &[CalRow]) -> String {
    let pts: Vec<(usize, f64, f64, f64)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.scored())
        .filter_map(|(i, r)| Some((i + 1, r.published.tflops, r.predicted()?, r.predicted_at_peak()?)))
        .collect();
    let mut lo = f64::INFINITY;
    let mut hi = 0f64;
    for &(_, a, b, c) in &pts {
        for v in [a, b, c] {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    if !lo.is_finite() || hi <= 0.0 {
        (lo, hi) = (1.0, 1000.0);
    }
    // Decades that contain every point and the band around it.
    let (d0, d1) =
        ((lo * (1.0 - BAND)).log10().floor(), (hi * (1.0 + BAND)).log10().ceil().max(lo.log10().floor() + 1.0));
    let (w, h, m) = (640.0, 640.0, 70.0);
    let side = w - 2.0 * m;
    let x = |v: f64| m + (v.log10() - d0) / (d1 - d0) * side;
    let y = |v: f64| h - m - (v.log10() - d0) / (d1 - d0) * side;
    let (vmin, vmax) = (10f64.powf(d0), 10f64.powf(d1));
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="14">timing model: predicted vs published TFLOP/s (log-log)</text>"#,
        w / 2.0
    );
    // The ±25 % band as a polygon between y = 0.75x and y = 1.25x.
    let band = [
        (vmin / (1.0 - BAND), vmin),
        (vmax, vmax * (1.0 - BAND)),
        (vmax / (1.0 + BAND), vmax),
        (vmin, vmin * (1.0 + BAND)),
    ];
    let poly: Vec<String> = band.iter().map(|&(a, b)| format!("{:.1},{:.1}", x(a), y(b))).collect();
    let _ = writeln!(s, r##"<polygon class="band" points="{}" fill="#cfe8cf" stroke="none"/>"##, poly.join(" "));
    // Grid lines at 1, 2, 5 per decade.
    let mut d = d0 as i32;
    while f64::from(d) <= d1 {
        for mult in [1.0, 2.0, 5.0] {
            let v = mult * 10f64.powi(d);
            if v < vmin * 0.999 || v > vmax * 1.001 {
                continue;
            }
            let (px, py) = (x(v), y(v));
            let _ = writeln!(
                s,
                r##"<line x1="{px:.1}" y1="{:.1}" x2="{px:.1}" y2="{:.1}" stroke="#ddd"/><line x1="{m}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#ddd"/>"##,
                h - m,
                m,
                w - m
            );
            let _ = writeln!(
                s,
                r#"<text x="{px:.1}" y="{:.1}" text-anchor="middle">{v}</text><text x="{:.1}" y="{:.1}" text-anchor="end">{v}</text>"#,
                h - m + 16.0,
                m - 6.0,
                py + 4.0
            );
        }
        d += 1;
    }
    let _ = writeln!(
        s,
        r##"<rect x="{m}" y="{m}" width="{side}" height="{side}" fill="none" stroke="#333"/><line class="diagonal" x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333" stroke-dasharray="4 3"/>"##,
        x(vmin),
        y(vmin),
        x(vmax),
        y(vmax)
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">published TFLOP/s</text><text transform="translate(18 {}) rotate(-90)" text-anchor="middle">predicted TFLOP/s</text>"#,
        w / 2.0,
        h - 24.0,
        h / 2.0
    );
    for &(i, publ, pred, peak) in &pts {
        let _ = writeln!(
            s,
            r##"<circle class="peak" cx="{:.1}" cy="{:.1}" r="4" fill="none" stroke="#1f5fa8"/><circle class="point" cx="{:.1}" cy="{:.1}" r="4" fill="#1f5fa8"><title>{}</title></circle><text x="{:.1}" y="{:.1}">{i}</text>"##,
            x(publ),
            y(peak),
            x(publ),
            y(pred),
            xml(&rows[i - 1].label()),
            x(publ) + 6.0,
            y(pred) - 4.0
        );
    }
    let _ = writeln!(
        s,
        r##"<text x="{}" y="{}">filled: clock under load; hollow: peak clock; green: ±25%; numbers: rows of the table</text>"##,
        m,
        h - 8.0
    );
    s.push_str("</svg>\n");
    s
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

// ---------------------------------------------------------------------------------------
// Triton 3.9 code objects of tests/data/triton (gen.py, manifest.json).
// ---------------------------------------------------------------------------------------

/// One kernel argument of a Triton code object (manifest.json `args`).
#[derive(Clone, Debug, Deserialize)]
pub struct TritonArg {
    pub name: String,
    pub offset: usize,
    pub size: usize,
    #[serde(rename = "type")]
    pub ty: String,
}

/// One Triton GEMM of the test data: `C = A · B`, A row-major M×K (`stride_am`, 1),
/// B row-major K×N (`stride_bk`, 1), C row-major M×N (`stride_cm`, 1); M, N, K and the
/// three leading strides are runtime arguments (gen.py compiles only the unit strides
/// in), so one code object serves every size.
#[derive(Clone, Debug, Deserialize)]
pub struct TritonKernel {
    pub file: String,
    pub kernel: String,
    pub arch: String,
    pub dtype: String,
    pub out_dtype: String,
    pub block_m: usize,
    pub block_n: usize,
    pub block_k: usize,
    pub num_warps: u32,
    pub num_stages: u32,
    pub masked: bool,
    pub args: Vec<TritonArg>,
    pub kernarg_bytes: usize,
    pub dynamic_lds: u32,
    pub block: [u32; 3],
    pub private_segment_fixed_size: u32,
    /// The sweep's kernels (gen.py `--sweep`, issue 24) say their layout: `nn` (B row-major
    /// K x N, the default) or `tn` (B given as W, N x K row-major: `stride_bn` = K at run time),
    /// and the compiler options swept.
    #[serde(default, rename = "layout_kind")]
    pub layout: Option<String>,
    #[serde(default)]
    pub matrix_instr_nonkdim: Option<u32>,
    #[serde(default)]
    pub waves_per_eu: Option<u32>,
    #[serde(default)]
    pub kpack: Option<u32>,
    #[serde(default)]
    pub vgpr_spill_count: Option<u32>,
}

#[derive(Deserialize)]
struct TritonManifest {
    kernels: Vec<TritonKernel>,
}

/// `tests/data/triton` of this crate.
pub fn triton_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/triton")
}

/// Reads `manifest.json` of a Triton directory.
pub fn load_triton(dir: &Path) -> Result<Vec<TritonKernel>, EvalError> {
    let path = dir.join("manifest.json");
    let bad = |why: String| EvalError::Manifest { path: path.clone(), why };
    let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
    let m: TritonManifest = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    for k in &m.kernels {
        if k.arch.parse::<Arch>().is_err() {
            return Err(bad(format!("{}: unknown arch {}", k.file, k.arch)));
        }
        for a in &k.args {
            if a.offset + a.size > k.kernarg_bytes {
                return Err(bad(format!("{}: argument {} beyond kernarg_bytes", k.file, a.name)));
            }
        }
    }
    Ok(m.kernels)
}

impl TritonKernel {
    pub fn arch(&self) -> Arch {
        self.arch.parse().unwrap_or(Arch::Gfx942)
    }
    /// Short name: `triton bf16 128x128x64 w4 s2 evenk` (a sweep kernel's: its layout and
    /// options too, `triton e4m3->bf16 tn 256x256x64 w8 s2 m16 e0 k1`).
    pub fn label(&self) -> String {
        if let (Some(l), Some(m), Some(e), Some(kp)) =
            (&self.layout, self.matrix_instr_nonkdim, self.waves_per_eu, self.kpack)
        {
            return format!(
                "triton {}->{} {l} {}x{}x{} w{} s{} m{m} e{e} k{kp}",
                self.dtype, self.out_dtype, self.block_m, self.block_n, self.block_k, self.num_warps, self.num_stages
            );
        }
        format!(
            "triton {}->{} {}x{}x{} w{} s{} {}",
            self.dtype,
            self.out_dtype,
            self.block_m,
            self.block_n,
            self.block_k,
            self.num_warps,
            self.num_stages,
            if self.masked { "masked" } else { "evenk" }
        )
    }
    /// Bytes per element of the inputs (bf16/f16: 2, fp8: 1) and of C.
    pub fn elem_bytes(&self) -> (usize, usize) {
        let b = |d: &str| if d.starts_with("e4") || d.starts_with("e5") || d.contains("fp8") { 1 } else { 2 };
        (b(&self.dtype), b(&self.out_dtype))
    }
    /// The kernarg bytes for `m x n x k` with dense row-major operands at `a`, `b`, `c`
    /// (`stride_am = K`, `stride_bk = N`, `stride_cm = N`; the scratch pointers null).
    pub fn kernarg(&self, m: usize, n: usize, k: usize, a: u64, b: u64, c: u64) -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; self.kernarg_bytes];
        for arg in &self.args {
            let bytes: Vec<u8> = match arg.name.as_str() {
                "a_ptr" => a.to_le_bytes().to_vec(),
                "b_ptr" => b.to_le_bytes().to_vec(),
                "c_ptr" => c.to_le_bytes().to_vec(),
                "global_scratch" | "profile_scratch" => 0u64.to_le_bytes().to_vec(),
                name => {
                    let v = match name {
                        "M" => m,
                        "N" => n,
                        "K" | "stride_am" => k,
                        "stride_bk" | "stride_cm" => n,
                        // The `tn` sweep kernels: B is W (N x K row-major), K-contiguous.
                        "stride_bn" => k,
                        other => return Err(format!("{}: unknown argument {other}", self.file)),
                    };
                    i32::try_from(v).map_err(|_| format!("{name} = {v} does not fit i32"))?.to_le_bytes().to_vec()
                }
            };
            if bytes.len() != arg.size {
                return Err(format!(
                    "{}: argument {} is {} bytes, manifest says {}",
                    self.file,
                    arg.name,
                    bytes.len(),
                    arg.size
                ));
            }
            out[arg.offset..arg.offset + arg.size].copy_from_slice(&bytes);
        }
        Ok(out)
    }
    /// `[cdiv(M, block_m) * cdiv(N, block_n), 1, 1]` (the manifest's grid).
    pub fn grid(&self, m: usize, n: usize) -> [u32; 3] {
        [(m.div_ceil(self.block_m) * n.div_ceil(self.block_n)) as u32, 1, 1]
    }
}

/// Predicts a Triton kernel of `dir` on `m x n x k`.
pub fn predict_triton(
    dir: &Path,
    t: &TritonKernel,
    m: usize,
    n: usize,
    k: usize,
    opts: &ModelOptions,
) -> Result<Prediction, String> {
    let co = std::fs::read(dir.join(&t.file)).map_err(|e| format!("{}: {e}", t.file))?;
    let arch = t.arch();
    let dev = Device::new(arch);
    let (ei, eo) = t.elem_bytes();
    let alloc = |bytes: usize| dev.alloc(bytes as u64).map_err(|e| e.to_string());
    let (a, b, c) = (alloc(m * k * ei)?, alloc(k * n * ei)?, alloc(m * n * eo)?);
    let kernarg = t.kernarg(m, n, k, a, b, c)?;
    let w = Workload {
        code_object: &co,
        kernel: &t.kernel,
        grid: t.grid(m, n),
        block: t.block,
        kernarg: &kernarg,
        dynamic_lds: t.dynamic_lds,
        flops: 2.0 * m as f64 * n as f64 * k as f64,
    };
    Model::new(arch).predict(dev.memory(), &w, opts).map_err(|e| e.to_string())
}
