//! The timing model's evaluation (`gemm_emu::model_eval`): the calibration table and plot
//! on a fast subset, the order check on hand-made points, the Triton manifest as
//! workloads. No test asserts a predicted TFLOP/s: the figures are the model's output,
//! checked against published numbers by `gemm calibrate`, not pinned here.

use gemm_emu::calibration::{self, Published, Timing, PER_LAUNCH_OVERHEAD_S};
use gemm_emu::model_eval::{self as eval, CalRow, CalSelection, Point};
use gemm_emu::timing::ModelOptions;
use gemm_emu::Arch;
use std::time::Duration;

fn quick() -> ModelOptions {
    ModelOptions { prefix_bytes: 16 << 10, max_sampled_wgs: 64, ..Default::default() }
}

fn published(tflops: f64, source: &str) -> Published {
    Published {
        m: 4096,
        n: 4096,
        k: 4096,
        tflops,
        time_ms: None,
        gpu: "MI355X".into(),
        cache: None,
        source: source.into(),
        timing: Timing::Profiler,
        not_scored: None,
        notes: String::new(),
    }
}

/// One Gluon kernel (one workgroup per CU at its published size: fast) through the whole
/// path: the row, the table (every column, the source, the mechanism line, the summary)
/// and the plot (one point per prediction, the band, the diagonal).
#[test]
fn calibration_table_and_plot_on_one_kernel() {
    let set = calibration::load_dir(&calibration::default_dir()).unwrap();
    let k = set.iter().find(|k| k.name == "v4_global_prefetch").expect("v4_global_prefetch in the set");
    let sel = CalSelection { only: Some("v4_global_prefetch".into()), max_mnk: None };
    let mut seen = 0;
    let rows = eval::calibrate(&set, &sel, &quick(), |_| seen += 1);
    assert_eq!(rows.len(), k.published.len());
    assert_eq!(seen, rows.len(), "progress is told every row");
    let r = &rows[0];
    let p = r.prediction.as_ref().unwrap_or_else(|e| panic!("{e}"));
    assert!(p.tflops > 0.0 && p.tflops.is_finite());
    assert!(r.predicted_at_peak().unwrap() >= r.predicted().unwrap() * 0.999, "the peak clock is not slower");
    let want = (p.tflops - r.published.tflops) / r.published.tflops;
    assert!((r.error().unwrap() - want).abs() < 1e-12);

    let table = eval::calibration_report(&rows);
    let line = table.lines().find(|l| l.starts_with("1 ")).expect("row 1");
    assert!(
        line.contains("v4_global_prefetch") && line.contains("gfx950") && line.contains("4096x4096x8192"),
        "{line}"
    );
    assert!(line.contains(&format!("{:.1}", r.published.tflops)), "{line}");
    assert!(line.contains(&format!("{:+.1}%", want * 100.0)), "{line}");
    assert!(line.contains(if want.abs() <= eval::BAND { "yes" } else { "NO" }), "{line}");
    assert!(table.contains("gfx950-gluon-tutorials"), "the source is printed:\n{table}");
    assert!(table.contains("wg/CU") && table.contains("limit:"), "the mechanism line:\n{table}");
    assert!(table.contains("order of published results: 0 of 0 pairs kept"), "{table}");
    assert!(table.contains("parameters fitted to these kernels: none"), "{table}");

    let svg = eval::calibration_svg(&rows);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches(r#"class="point""#).count(), 1);
    assert_eq!(svg.matches(r#"class="peak""#).count(), 1);
    assert_eq!(svg.matches(r#"class="band""#).count(), 1);
    assert_eq!(svg.matches(r#"class="diagonal""#).count(), 1);
    assert!(svg.contains("v4_global_prefetch 4096x4096x8192"), "the point names its row");

    // The Gluon figures are rocprof kernel times: compared with the kernel alone.
    assert_eq!(r.published.timing, Timing::Profiler);
    assert_eq!((r.overhead_s(), r.predicted()), (0.0, Some(p.tflops)));
    assert!(line.ends_with("s") && line.split_whitespace().rev().nth(1) == Some("-"), "no overhead: {line}");
    // The same point as if timed per launch: the overhead is added to the kernel time, and
    // only then; the error follows.
    for timing in [Timing::PerLaunchEvents, Timing::Profiler, Timing::BackToBack, Timing::NotStated] {
        let mut t = r.clone();
        t.published.timing = timing;
        let secs = r.flops() / (p.tflops * 1e12);
        let want = if timing == Timing::PerLaunchEvents {
            r.flops() / (secs + PER_LAUNCH_OVERHEAD_S) / 1e12
        } else {
            p.tflops
        };
        assert!((t.predicted().unwrap() - want).abs() <= 1e-9 * want, "{timing:?}");
        assert_eq!(t.kernel_tflops(), Some(p.tflops));
        assert!((t.error().unwrap() - (want - r.published.tflops) / r.published.tflops).abs() < 1e-12);
        let at_peak = p.at_peak.map_or(p.tflops, |x| x.2);
        assert!(
            (t.predicted_at_peak().unwrap() - eval::with_launch_overhead(at_peak, r.flops(), t.overhead_s())).abs()
                < 1e-9
        );
        let table = eval::calibration_report(std::slice::from_ref(&t));
        let line = table.lines().find(|l| l.starts_with("1 ")).unwrap();
        let ovh =
            if timing == Timing::PerLaunchEvents { format!("{:.1}", PER_LAUNCH_OVERHEAD_S * 1e6) } else { "-".into() };
        assert_eq!(line.split_whitespace().rev().nth(1), Some(ovh.as_str()), "{line}");
        assert!(table.contains(&format!("[timed: {}]", timing.name())), "{table}");
    }
    // 4 us on 2 x 4096 x 4096 x 8192 flops at ~1000 TFLOP/s (~275 us): about 1.4 % slower.
    let w = eval::with_launch_overhead(1000.0, 2.0 * 4096.0 * 4096.0 * 8192.0, 4e-6);
    assert!((w - 1000.0 / (1.0 + 4e-6 / (2.0 * 4096.0 * 4096.0 * 8192.0 / 1e15))).abs() < 1e-9, "{w}");

    // A point marked `not_scored` is printed with its error in parentheses and left out of the
    // score, the order check and the plot.
    let mut n = r.clone();
    n.published.not_scored = Some("the figure is another kernel's".into());
    let table = eval::calibration_report(std::slice::from_ref(&n));
    let line = table.lines().find(|l| l.starts_with("1 ")).unwrap();
    assert!(line.contains(&format!("({:+.1}%)", want * 100.0)) && line.contains("n/s"), "{line}");
    assert!(
        table.contains("within ±25%: 0 of 0 predicted points (0 without a prediction; 1 printed, not scored)"),
        "{table}"
    );
    assert!(table.contains("not scored: the figure is another kernel's"), "{table}");
    assert_eq!(eval::calibration_svg(&[n]).matches(r#"class="point""#).count(), 0);
}

/// A refused point is a row of the table without figures and no point of the plot; the
/// summary counts it.
#[test]
fn a_refused_point_is_reported_not_plotted() {
    let row = CalRow {
        kernel: "k".into(),
        arch: Arch::Gfx950,
        published: published(100.0, "somewhere, table 1"),
        prediction: Err("kernels with scratch are not modelled".into()),
        wall: Duration::ZERO,
        other_state: None,
        order_by_time: false,
    };
    assert_eq!(row.error(), None);
    let table = eval::calibration_report(std::slice::from_ref(&row));
    assert!(table.contains("no prediction: kernels with scratch are not modelled"), "{table}");
    assert!(table.contains("within ±25%: 0 of 0 predicted points (1 without a prediction)"), "{table}");
    assert!(table.contains("somewhere, table 1"));
    let svg = eval::calibration_svg(&[row]);
    assert_eq!(svg.matches(r#"class="point""#).count(), 0);
    assert!(svg.trim_end().ends_with("</svg>"));
}

/// Inversions are found, near-ties (within 2 %) and pairs of different GPUs are not ordered.
#[test]
fn order_check_counts_pairs_and_inversions() {
    let pt = |label: &str, gpu: &str, published: f64, predicted: f64| Point {
        label: label.into(),
        gpu: gpu.into(),
        published,
        predicted,
    };
    let points = [
        pt("a", "MI355X", 100.0, 90.0),
        pt("b", "MI355X", 200.0, 80.0), // published faster than a, predicted slower
        pt("c", "MI355X", 101.0, 10.0), // within 2% of a: not ordered against a
        pt("d", "MI300X", 1000.0, 1.0), // another GPU: ordered against nothing
    ];
    let o = eval::order_check_points(&points);
    // Pairs: a-b, b-c (a-c tie, d alone).
    assert_eq!(o.pairs, 2);
    assert_eq!(o.inversions, vec![("b".to_string(), "a".to_string())]);
    let kept = eval::order_check_points(&[pt("x", "G", 1.0, 1.0), pt("y", "G", 3.0, 2.0)]);
    assert_eq!((kept.pairs, kept.inversions.len()), (1, 0));
}

/// The parameter tables have no fitted row: every row is counted under one of the four
/// source tags, and the counts add up to the table.
#[test]
fn parameter_tags_cover_the_table() {
    for a in Arch::ALL {
        let n = eval::parameter_tags(a);
        assert_eq!(n.iter().sum::<usize>(), gemm_emu::timing::Params::for_arch(a).rows().len());
        assert!(n[0] > 0, "{a:?}: some rows are from primary sources");
    }
}

/// Every Triton code object of the manifest becomes a workload for any size: M, N, K and
/// the leading strides land at the manifest's offsets, the scratch pointers are null.
#[test]
fn triton_manifest_gives_kernargs_for_any_size() {
    let dir = eval::triton_dir();
    let set = eval::load_triton(&dir).unwrap();
    assert_eq!(set.len(), 30);
    for arch in Arch::ALL {
        assert_eq!(set.iter().filter(|t| t.arch() == arch).count(), 15);
    }
    let (m, n, k) = (8192usize, 4096usize, 1024usize);
    for t in &set {
        assert!(dir.join(&t.file).exists(), "{}", t.file);
        let ka = t.kernarg(m, n, k, 0x1000, 0x2000, 0x3000).unwrap();
        assert_eq!(ka.len(), t.kernarg_bytes);
        let at = |name: &str| {
            let a = t.args.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("{}: no {name}", t.file));
            ka[a.offset..a.offset + a.size].to_vec()
        };
        let i32s = |v: usize| (v as i32).to_le_bytes().to_vec();
        assert_eq!(at("a_ptr"), 0x1000u64.to_le_bytes());
        assert_eq!(at("c_ptr"), 0x3000u64.to_le_bytes());
        assert_eq!((at("M"), at("N"), at("K")), (i32s(m), i32s(n), i32s(k)));
        assert_eq!((at("stride_am"), at("stride_bk"), at("stride_cm")), (i32s(k), i32s(n), i32s(n)));
        assert_eq!(at("global_scratch"), [0u8; 8]);
        assert_eq!(t.grid(m, n), [(m.div_ceil(t.block_m) * n.div_ceil(t.block_n)) as u32, 1, 1]);
        assert_eq!(t.block[0], t.num_warps * 64);
    }
    let big = set.iter().find(|t| t.kernel == "matmul_kernel").unwrap();
    assert!(big.kernarg(1 << 31, 16, 16, 0, 0, 0).is_err(), "M beyond i32 is refused");
}

/// The Infinity Cache state of a launch (vLLM's wvSplitK, M = 1, at a small N x K): warm,
/// with operands that fit in the 256 MiB MALL, every L2 miss is a MALL hit and the weight
/// stream runs faster than cold (from HBM); warm operands that do not fit leave the launch
/// cold (an LRU holds none of a matrix streamed again in the same order). The manifest's
/// published points name their state, and `predict_published` uses it.
#[test]
fn warm_infinity_cache_serves_operands_that_fit_and_only_those() {
    use gemm_emu::timing::CacheState;
    let set = calibration::load_dir(&calibration::default_dir()).unwrap();
    let k = set.iter().find(|k| k.name == "vllm_wvsplitk").expect("vllm_wvsplitk in the set");
    assert!(k.published.iter().all(|p| p.cache.is_some()), "every decode point names its cache state");
    let p = Published { m: 1, n: 2048, k: 1024, gpu: "MI300X".into(), ..published(1.0, "test") };
    let cold = eval::predict_published_in(k, &p, &quick(), CacheState::Cold).unwrap();
    let warm = eval::predict_published_in(k, &p, &quick(), CacheState::Warm).unwrap();
    assert_eq!((cold.cache, warm.cache), (CacheState::Cold, CacheState::Warm));
    assert_eq!(warm.hits.mall, 1.0);
    assert!(cold.hits.mall < 0.5, "{:?}", cold.hits);
    assert!(warm.seconds < cold.seconds, "warm {} s, cold {} s", warm.seconds, cold.seconds);
    // The same launch said to have 1 GiB of operands: too big for the MALL, so cold.
    let big = ModelOptions { cache: CacheState::Warm, operand_bytes: 1 << 30, ..quick() };
    let dev = gemm_emu::Device::new(k.arch);
    let ptrs: Vec<u64> = k.buffer_bytes(1, 2048, 1024).iter().map(|&b| dev.alloc(b as u64).unwrap()).collect();
    let plan = k.plan(1, 2048, 1024, ptrs[0], ptrs[1], ptrs[2]).unwrap();
    let w = gemm_emu::timing::Workload {
        code_object: &plan.code_object,
        kernel: &plan.symbol,
        grid: plan.grid,
        block: plan.block,
        kernarg: &plan.kernarg,
        dynamic_lds: plan.dynamic_lds,
        flops: plan.flops,
    };
    let r = gemm_emu::timing::Model::new(k.arch).predict(dev.memory(), &w, &big).unwrap();
    assert_eq!(r.cache, CacheState::Cold);
    assert_eq!(r.hits.mall, cold.hits.mall);
}
