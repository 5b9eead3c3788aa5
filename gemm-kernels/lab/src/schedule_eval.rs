//! `gemm compare --schedules` (issue 12): the main-loop schedules of gemm-compiler
//! (`schedule/`) predicted by the timing model at `M = N = K`, each beside the same tile
//! with the pipelined loop and beside Triton 3.9's kernels of the same arch and input
//! dtype predicted in the same run: TFLOP/s per size, the MFMA-busy share of the SIMDs and
//! the stall breakdown (all stall reasons, as shares of the waves' cycles) at the largest
//! size. The schedule kernels are compiled here (they need not be in the catalogue).

use gemm_compiler::catalogue;
use gemm_compiler::ir::{Align, Arch as CArch, DmaPolicy, KernelConfig, MfmaShape};
use gemm_compiler::schedule::Schedule;
use gemm_core::{Arch, DType};
use gemm_emu::model_eval::{self as eval, TritonKernel};
use gemm_emu::timing::{Model, ModelOptions, Prediction, Workload, REASONS};
use gemm_emu::Device;
use std::fmt::Write as _;

/// One configuration to predict: a label, the configuration and the label of its
/// no-schedule baseline row (`None` for a baseline).
pub struct SchedRow {
    pub label: String,
    pub config: KernelConfig,
    pub baseline: Option<String>,
}

fn arch_of(a: CArch) -> Arch {
    match a {
        CArch::Gfx942 => Arch::Gfx942,
        CArch::Gfx950 => Arch::Gfx950,
    }
}

/// A plain configuration of `arch`: `ab` inputs, `c` output, `(trans_a, trans_b)`, `v8`,
/// the given tile, wave grid and MFMA, two stages, the large tiles' workgroup order.
fn config(
    arch: CArch,
    (ab, c): (DType, DType),
    (ta, tb): (bool, bool),
    tile: (u32, u32, u32),
    grid: (u32, u32),
    mfma: MfmaShape,
) -> KernelConfig {
    let mut k = KernelConfig::new(arch, ab, c, ta, tb, Align::Vec8).with_shape(tile, grid, mfma, 2);
    k.grid = LARGE_GRID;
    k
}

/// The large tiles' workgroup order (`catalogue.rs`: 4 tiles per XCD per round, bands of 8).
const LARGE_GRID: gemm_compiler::grid::GridOrder = gemm_compiler::grid::GridOrder { chunk: 4, wgm: 8 };

/// One tile without a schedule and with each of `scheds`: the baseline row, then one row
/// per schedule, copying by `dma` (`Never`: register-staged, rows marked `staged`;
/// `Transposing`: gfx950 LDS-DMA for M/N-contiguous operands too, read back with
/// `ds_read_b64_tr_b16`, rows marked `dmatr`).
fn section(out: &mut Vec<SchedRow>, base: KernelConfig, scheds: &[Schedule], dma: DmaPolicy) {
    let mut base = base;
    base.direct_to_lds = dma;
    let t = |c: &KernelConfig| {
        format!(
            "{} {} {}{} {}x{}x{} w{} m{}",
            c.arch.name(),
            dtype_name(c.ab_type),
            if c.trans_a { 't' } else { 'n' },
            if c.trans_b { 't' } else { 'n' },
            c.tile.0,
            c.tile.1,
            c.tile.2,
            c.waves,
            c.mfma.m
        )
    };
    let sfx = match dma {
        DmaPolicy::Never => " staged",
        DmaPolicy::Transposing => " dmatr",
        DmaPolicy::Auto | DmaPolicy::Always => "",
    };
    let bl = format!("{} pipelined{sfx}", t(&base));
    if !out.iter().any(|r| r.label == bl) {
        out.push(SchedRow { label: bl.clone(), config: base, baseline: None });
    }
    for s in scheds {
        let mut c = base;
        c.schedule = *s;
        let label = format!("{} {}{sfx}", t(&c), s.label());
        if !out.iter().any(|r| r.label == label) {
            out.push(SchedRow { label, config: c, baseline: Some(bl.clone()) });
        }
    }
}

/// The input dtype as the rows name it (fp8 as Triton's test data does: `e4m3`, FNUZ on
/// gfx942 and OCP on gfx950).
fn dtype_name(d: DType) -> String {
    crate::model_eval::triton_dtype(d)
}

/// The catalogue family `name`'s member of `arch` with input `ab`, output `c` and the
/// first transpose pair the family has among `nn`, `tn` (`None` when it has no such member).
fn catalogue_member(name: &str, arch: CArch, ab: DType, c: DType) -> Option<KernelConfig> {
    let all: Vec<_> = catalogue::entries()
        .into_iter()
        .filter(|(f, k)| f.name == name && k.arch == arch && k.ab_type == ab && k.c_type == c)
        .map(|(_, k)| k)
        .collect();
    all.iter().find(|k| !k.trans_a && !k.trans_b).or(all.first()).copied()
}

/// The rows, per arch: bf16 (-> f32) then fp8 (-> f16, as Triton's fp8 kernels), each tile
/// without and with the schedules that apply to it.
///
/// bf16: the 8-wave 256x256 tile (gfx942: the `large` family's 256x256x32; gfx950: the
/// 256x256x64 that cannot be resident, its rows marked) with the ping-pong of Triton's rule,
/// two clusters and (gfx950) the copy interleave, with LDS-DMA and register-staged; the
/// 4-wave tile of the same size with the 4-wave interleave; the 128x128 `base` tile with
/// the cross-workgroup ping-pong (one cluster) and the interleave; on gfx942 also the
/// 8-wave 256x256x32 tile with 16x16x16 MFMAs and ping-pong.
/// fp8 (A^T B, both operands K-contiguous): the 8-wave 256x256x64 tile with ping-pong, and
/// the 4-wave 256x256 tile (KT 128 on gfx950, 64 on gfx942) with the 4-wave interleave.
pub fn rows() -> Vec<SchedRow> {
    let mut out = vec![];
    for arch in [CArch::Gfx950, CArch::Gfx942] {
        let bf = (DType::Bf16, DType::F32);
        // bf16, 8 waves.
        let large = catalogue_member("large", arch, bf.0, bf.1).unwrap_or_else(|| {
            // gfx950 ships no `large` family (its 8-wave 256x256x64 tile cannot be
            // resident, `fit::resident`); its rows still show what that tile would do.
            config(arch, bf, (false, false), (256, 256, 64), (2, 4), MfmaShape::native_16(arch))
        });
        let mut scheds = vec![];
        scheds.extend(Schedule::ping_pong_for(&large));
        scheds.push(Schedule::PingPong { clusters: 2 });
        scheds.push(Schedule::PingPong { clusters: 4 });
        scheds.dedup();
        if arch == CArch::Gfx950 {
            scheds.push(Schedule::CopyInterleave { stages: 4 });
        }
        scheds.dedup();
        // gfx942 copies through registers either way (`DmaPolicy::Auto`: its LDS-DMA moves
        // one dword per lane), so only gfx950 has the staged rows.
        let g950 = arch == CArch::Gfx950;
        section(&mut out, large, &scheds, DmaPolicy::Auto);
        if g950 {
            section(&mut out, large, &scheds, DmaPolicy::Never);
        }
        // bf16, 4 waves, one per SIMD: the same tile (128x128 per wave).
        let mfma = if arch == CArch::Gfx950 { MfmaShape::native_16(arch) } else { MfmaShape::native_32(arch) };
        let four = config(arch, bf, (large.trans_a, large.trans_b), large.tile, (2, 2), mfma);
        let il = [Schedule::Interleave { slices: 4 }];
        section(&mut out, four, &il, DmaPolicy::Never);
        if g950 {
            section(&mut out, four, &il, DmaPolicy::Auto);
            // A (M-contiguous in `nn`) by LDS-DMA too, into an M-major tile read with
            // `ds_read_b64_tr_b16` (the catalogue's `interleave` family).
            section(&mut out, four, &il, DmaPolicy::Transposing);
        }
        // gfx942 bf16: the 8-wave 256x256x32 tile with 16x16x16 MFMAs (the shape that wins
        // at 128x128 there), with ping-pong.
        if !g950 {
            let l16 = config(arch, bf, (large.trans_a, large.trans_b), large.tile, (2, 4), MfmaShape::native_16(arch));
            let pp = [Schedule::PingPong { clusters: 2 }, Schedule::PingPong { clusters: 4 }];
            section(&mut out, l16, &pp, DmaPolicy::Auto);
        }
        // bf16, the catalogue's 128x128 base tile.
        if let Some(base) = catalogue_member("base", arch, bf.0, bf.1) {
            section(
                &mut out,
                base,
                &[Schedule::PingPong { clusters: 1 }, Schedule::Interleave { slices: 2 }],
                DmaPolicy::Auto,
            );
        }
        // fp8 -> f16, A^T B.
        let f8 = (if arch == CArch::Gfx950 { DType::Fp8E4M3 } else { DType::Fp8E4M3Fnuz }, DType::F16);
        let kt4 = if arch == CArch::Gfx950 { 128 } else { 64 };
        let f8_8 = config(arch, f8, (true, false), (256, 256, 64), (2, 4), MfmaShape::fp8_32(arch));
        let mut scheds: Vec<Schedule> = Schedule::ping_pong_for(&f8_8).into_iter().collect();
        // Two clusters besides the rule's; four decline on gfx950 (a K tile of 64 is one
        // 32x32x64 step and two N blocks per wave make two slices at most).
        scheds.push(Schedule::PingPong { clusters: 2 });
        scheds.dedup();
        section(&mut out, f8_8, &scheds, DmaPolicy::Auto);
        let f8_4 = config(arch, f8, (true, false), (256, 256, kt4), (2, 2), MfmaShape::fp8_32(arch));
        if g950 {
            section(&mut out, f8_4, &il, DmaPolicy::Auto);
        }
        section(&mut out, f8_4, &il, DmaPolicy::Never);
        if g950 {
            // AMD's CDNA4 blog tile: 256x256x128, 8 waves, LDS-DMA, the ping-pong with slim
            // fragments (one K step's in registers: resident with two waves per SIMD). With
            // 32x32x64 MFMAs only: a 16x16x128 step is the whole K tile, so slim fragments
            // save nothing and the schedule declines it.
            let slim = [Schedule::PingPongSlim { clusters: 2 }, Schedule::PingPongSlim { clusters: 4 }];
            let blog = config(arch, f8, (true, false), (256, 256, 128), (2, 4), MfmaShape::fp8_32(arch));
            section(&mut out, blog, &slim, DmaPolicy::Auto);
        }
        out.extend(quadrant_rows(arch, &large, mfma));
    }
    out
}

/// The quadrant schedule (`schedule/quadrant.rs`: 8 waves in a 4x2 grid, 256x256x32, a
/// tile that is resident on both archs) beside the same tile and grid with the pipelined
/// loop and beside the two-cluster ping-pong of the 2x4 grid, each also with the
/// phase-counter sync (`schedule/phase.rs`; declined where the LDS is full).
fn quadrant_rows(arch: CArch, base: &KernelConfig, mfma: MfmaShape) -> Vec<SchedRow> {
    use gemm_compiler::schedule::phase::Sync;
    let mut out = vec![];
    let tile = (256, 256, 32);
    let mk = |grid: (u32, u32), s: Schedule, sync: Sync| {
        let mut c = KernelConfig::new(arch, DType::Bf16, DType::F32, base.trans_a, base.trans_b, Align::Vec8)
            .with_shape(tile, grid, mfma, 2);
        c.grid = base.grid;
        c.schedule = s;
        c.sync = sync;
        c
    };
    let t = |c: &KernelConfig| {
        let sync = if c.sync == Sync::PhaseCounters { " counters" } else { "" };
        format!(
            "{} {}{} {}x{}x{} w{}x{} {}{sync}",
            arch.name(),
            if c.trans_a { 't' } else { 'n' },
            if c.trans_b { 't' } else { 'n' },
            c.tile.0,
            c.tile.1,
            c.tile.2,
            c.wave_grid.0,
            c.wave_grid.1,
            c.schedule.label()
        )
    };
    let bl = mk((4, 2), Schedule::Pipelined, Sync::Barrier);
    let bl_label = t(&bl);
    out.push(SchedRow { label: bl_label.clone(), config: bl, baseline: None });
    for (grid, s) in [((4, 2), Schedule::Quadrant), ((2, 4), Schedule::PingPong { clusters: 2 })] {
        // gfx942's two 256x256x32 bf16 buffers fill its 64 KiB of LDS: no room for counters.
        let syncs: &[Sync] =
            if arch == CArch::Gfx950 { &[Sync::Barrier, Sync::PhaseCounters] } else { &[Sync::Barrier] };
        for &sync in syncs {
            let c = mk(grid, s, sync);
            out.push(SchedRow { label: t(&c), config: c, baseline: Some(bl_label.clone()) });
        }
    }
    out
}

/// Predicts a compiled configuration at `m x n x k` (column-major, leading dimensions
/// padded to the alignment).
pub fn predict_config(c: &KernelConfig, size: usize, opts: &ModelOptions) -> Result<Prediction, String> {
    let k = gemm_compiler::compile(*c).map_err(|e| e.to_string())?;
    k.resident().map_err(|e| format!("cannot launch: {e}"))?;
    let arch = arch_of(c.arch);
    let dev = Device::new(arch);
    let (m, n, kk) = (size, size, size);
    let e = c.ab_bytes() as usize;
    let al = c.align_elems() as usize;
    let (lda, ldb) = (if c.trans_a { kk } else { m }, if c.trans_b { n } else { kk });
    let (lda, ldb) = (lda.next_multiple_of(al), ldb.next_multiple_of(al));
    let span_a = lda * if c.trans_a { m } else { kk };
    let span_b = ldb * if c.trans_b { kk } else { n };
    let alloc = |b: usize| dev.alloc((b as u64).next_multiple_of(16)).map_err(|e| e.to_string());
    let (pa, pb, pc) = (alloc(span_a * e)?, alloc(span_b * e)?, alloc(m * n * c.c_bytes() as usize)?);
    let args = gemm_compiler::kernel_args::pack(
        pa, pb, pc, m as u32, n as u32, kk as u32, lda as u32, ldb as u32, m as u32, 1.0, 0.0,
    );
    let args = &args[..gemm_compiler::kernel_args::size(c) as usize];
    let (grid, block) = gemm_compiler::kernel_args::launch_workgroups(m as u32, n as u32, c.tile, c.threads());
    let w = Workload {
        code_object: &k.code_object,
        kernel: &k.name,
        grid,
        block,
        kernarg: args,
        dynamic_lds: 0,
        flops: 2.0 * (m * n * kk) as f64,
    };
    Model::new(arch).predict(dev.memory(), &w, opts).map_err(|e| e.to_string())
}

/// Mean MFMA-busy share of the simulated SIMDs, in percent.
pub fn mfma_busy_pct(p: &Prediction) -> f64 {
    100.0 * p.mfma_busy.iter().sum::<f64>() / p.mfma_busy.len().max(1) as f64
}

/// Every stall reason as a share of the waves' cycles (`issuing` included).
pub fn stall_breakdown(p: &Prediction) -> String {
    let total: u64 = REASONS.iter().map(|r| p.stalls.get(*r)).sum::<u64>().max(1);
    REASONS
        .iter()
        .map(|r| (r, p.stalls.get(*r)))
        .filter(|(_, n)| *n * 200 >= total)
        .map(|(r, n)| format!("{} {:.0}%", r.name(), 100.0 * n as f64 / total as f64))
        .collect::<Vec<_>>()
        .join(", ")
}

struct Line {
    label: String,
    arch: Arch,
    baseline: Option<String>,
    kernel: String,
    preds: Vec<Result<Prediction, String>>,
}

/// Runs `gemm compare --schedules`, the predictions on `jobs` threads (the rows and
/// Triton's kernels side by side, then the split-tail lines, which fall back on their row's
/// prediction); progress on stderr as each finishes.
pub fn compare_schedules(
    sizes: &[usize],
    only: &[String],
    trace_dir: Option<&std::path::Path>,
    jobs: usize,
) -> Result<String, String> {
    let mut opts = ModelOptions::default();
    let largest = sizes.iter().copied().max().unwrap_or(0);
    if let Some(d) = trace_dir {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        opts.trace_spans = 400_000;
    }
    let triton = eval::load_triton(&eval::triton_dir()).map_err(|e| e.to_string())?;
    let rows: Vec<SchedRow> =
        rows().into_iter().filter(|r| only.is_empty() || only.iter().any(|s| r.label.contains(s.as_str()))).collect();
    let archs: Vec<Arch> = {
        let mut a: Vec<Arch> = rows.iter().map(|r| arch_of(r.config.arch)).collect();
        a.dedup();
        a
    };
    let classes: Vec<&str> = {
        let mut c: Vec<&str> = rows.iter().map(|r| class(&r.label)).collect();
        c.sort_unstable();
        c.dedup();
        c
    };
    let tri: Vec<&TritonKernel> = triton
        .iter()
        .filter(|t| archs.contains(&t.arch()) && classes.contains(&class(&format!(" {} ", t.dtype))))
        .collect();
    // Every (row or Triton kernel, size) prediction, side by side.
    enum Task<'a> {
        Row(&'a SchedRow, usize),
        Triton(&'a TritonKernel, usize),
    }
    let tasks: Vec<Task> = rows
        .iter()
        .flat_map(|r| sizes.iter().map(move |&n| Task::Row(r, n)))
        .chain(tri.iter().flat_map(|t| sizes.iter().map(move |&n| Task::Triton(t, n))))
        .collect();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let total = tasks.len();
    let note = |what: String, p: &Result<Prediction, String>, t0: std::time::Instant| {
        let d = done.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let v = p.as_ref().map_or_else(|e| e.clone(), |p| format!("{:.1} TFLOP/s", p.tflops));
        eprintln!("  [{d}/{total}] {what}: {v} ({:.1}s)", t0.elapsed().as_secs_f64());
    };
    let mut preds = crate::jobs::map_jobs(&tasks, jobs, |t| {
        let t0 = std::time::Instant::now();
        match *t {
            Task::Row(r, n) => {
                let p = predict_config(&r.config, n, &opts);
                if let (Some(d), Ok(p)) = (trace_dir, &p) {
                    if n == largest {
                        let f = d.join(format!("{}_{n}.json", r.config.name()));
                        let _ = std::fs::write(&f, gemm_emu::timing::trace::chrome_trace(p));
                    }
                }
                note(format!("{} {n}", r.label), &p, t0);
                p
            }
            Task::Triton(k, n) => {
                let p = eval::predict_triton(&eval::triton_dir(), k, n, n, n, &opts);
                note(format!("{} {} {n}", k.label(), k.arch), &p, t0);
                p
            }
        }
    })
    .into_iter();
    let mut lines: Vec<Line> = vec![];
    for r in &rows {
        lines.push(Line {
            label: r.label.clone(),
            arch: arch_of(r.config.arch),
            baseline: r.baseline.clone(),
            kernel: r.config.name(),
            preds: preds.by_ref().take(sizes.len()).collect(),
        });
    }
    let tri_lines: Vec<Line> = tri
        .iter()
        .map(|t| Line {
            label: format!("{} {}", t.arch, t.label()),
            arch: t.arch(),
            baseline: None,
            kernel: t.file.clone(),
            preds: preds.by_ref().take(sizes.len()).collect(),
        })
        .collect();
    // The split tails of the rows whose kernel has a twin, each after its row.
    let tails = crate::jobs::map_jobs(&lines, jobs, |l| {
        let r = rows.iter().find(|r| r.label == l.label).expect("a row per line");
        split_tail_line(r, &l.preds, sizes, &opts)
    });
    let mut all = vec![];
    for (l, t) in lines.into_iter().zip(tails) {
        all.push(l);
        all.extend(t);
    }
    all.extend(tri_lines);
    Ok(report(&all, sizes))
}

/// For a row whose kernel is a catalogue kernel with a split-K twin (`splitk.rs`,
/// `choose_tail`): the dispatcher's plan at each size, predicted launch by launch: the split
/// tail where it takes it (head, partial, reduction), else the plain kernel's own
/// prediction (`preds`, the row's). `None` for other rows.
fn split_tail_line(
    r: &SchedRow,
    preds: &[Result<Prediction, String>],
    sizes: &[usize],
    opts: &ModelOptions,
) -> Option<Line> {
    let name = r.config.name();
    let arch = arch_of(r.config.arch);
    let entry = gemm_kernels::for_arch(arch).find(|e| e.name == name)?;
    let t = |b: bool| if b { gemm_core::Transpose::Yes } else { gemm_core::Transpose::No };
    let problem = |n: usize| {
        gemm_core::GemmProblem::new(n, n, n)
            .with_layout(gemm_core::Layout::ColMajor)
            .with_dtypes(r.config.ab_type, r.config.b_type(), r.config.c_type)
            .with_transposes(t(r.config.trans_a), t(r.config.trans_b))
    };
    // Only rows whose kernel has a twin at all (the tail needs it at some size).
    let twin = sizes.iter().any(|&n| {
        gemm_dispatch::plan::kernel_plan::plan_for(entry, &problem(n))
            .map_err(|e| e.to_string())
            .and_then(|plain| gemm_dispatch::plan::splitk::choose_tail(arch, &problem(n), &plain))
            .is_ok_and(|sp| sp.head.is_some())
    });
    if !twin {
        return None;
    }
    let plan_preds: Vec<Result<Prediction, String>> = sizes
        .iter()
        .zip(preds)
        .map(|(&n, own)| {
            let p = problem(n);
            let plain = gemm_dispatch::plan::kernel_plan::plan_for(entry, &p)?;
            let Ok(sp) = gemm_dispatch::plan::splitk::choose_tail(arch, &p, &plain) else { return own.clone() };
            let t0 = std::time::Instant::now();
            let parts = crate::split_eval::predict_split(&sp, &p, opts)?;
            let seconds: f64 = parts.iter().map(|x| x.seconds).sum();
            // The head's simulated share stands for the plan's MFMA-busy and stalls.
            let mut whole = parts.into_iter().next().ok_or("no launch")?;
            whole.seconds = seconds;
            whole.flops = p.flops();
            whole.tflops = p.flops() / seconds / 1e12;
            eprintln!(
                "  {} + split tail {n}: {:.1} TFLOP/s ({:.1}s)",
                r.label,
                whole.tflops,
                t0.elapsed().as_secs_f64()
            );
            Ok(whole)
        })
        .collect();
    Some(Line {
        label: format!("{} +tail", r.label),
        arch,
        baseline: r.baseline.clone(),
        kernel: format!("{name} (+ its _splitk twin and the reduction where the tail splits)"),
        preds: plan_preds,
    })
}

/// The input class of a row label: `fp8` for e4m3/e5m2 inputs, else `bf16` (Triton's f16
/// kernels are not compared: the rows are bf16).
fn class(label: &str) -> &'static str {
    if label.contains(" e4m3") || label.contains(" e5m2") {
        "fp8"
    } else if label.contains(" f16") {
        "f16"
    } else {
        "bf16"
    }
}

fn report(lines: &[Line], sizes: &[usize]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "predicted TFLOP/s (timing model, sustained clock), M=N=K; bf16 rows -> f32, fp8 rows (e4m3: FNUZ on gfx942, OCP on gfx950) A^T B -> f16:"
    );
    let tf = |l: &Line, i: usize| l.preds[i].as_ref().ok().map(|p| p.tflops);
    let best_triton = |arch: Arch, cl: &str, i: usize| {
        lines
            .iter()
            .filter(|l| l.arch == arch && l.label.contains("triton") && class(&l.label) == cl)
            .filter_map(|l| tf(l, i))
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
    };
    let mut head = format!("{:<52}", "schedule");
    for n in sizes {
        let _ = write!(head, " {:>8} {:>6} {:>6}", n, "vs-pl", "vs-tri");
    }
    let _ = write!(head, " {:>6}  stalls at {} (share of wave cycles)", "mfma%", sizes.iter().max().unwrap_or(&0));
    let _ = writeln!(s, "{head}");
    let last = sizes.len().saturating_sub(1);
    for l in lines {
        let mut line = format!("{:<52}", l.label);
        for i in 0..sizes.len() {
            let v = tf(l, i);
            let base = l.baseline.as_ref().and_then(|b| lines.iter().find(|x| &x.label == b)).and_then(|b| tf(b, i));
            let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
                _ => "-".into(),
            };
            let vt = if l.label.contains("triton") { None } else { best_triton(l.arch, class(&l.label), i) };
            let _ = write!(
                line,
                " {:>8} {:>6} {:>6}",
                v.map_or("refused".into(), |x| format!("{x:.1}")),
                ratio(v, base),
                ratio(v, vt)
            );
        }
        match &l.preds[last] {
            Ok(p) => {
                let _ = write!(line, " {:>5.1}%  {}", mfma_busy_pct(p), stall_breakdown(p));
            }
            Err(e) => {
                let _ = write!(line, "  {e}");
            }
        }
        let _ = writeln!(s, "{line}");
    }
    let _ = writeln!(s, "+tail: the dispatcher's plan for that kernel (gemm-dispatch plan/splitk.rs choose_tail): where the last round of tiles would be under half full, the plain kernel over the leading columns of tiles that fill whole rounds, the rest split over K (partial + reduction), the launches' predicted times summed; elsewhere the plain kernel");
    let _ = writeln!(s, "vs-pl: against the same tile with the pipelined loop; vs-tri: against the best Triton 3.9 kernel of the arch and input class (bf16, or fp8 e4m3/e5m2) at that size");
    let _ = writeln!(s, "kernels:");
    for l in lines {
        let _ = writeln!(s, "  {:<52} {}", l.label, l.kernel);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every schedule row has its pipelined baseline among the rows, both archs are
    /// covered, and every configuration compiles (the schedules decline nothing here).
    #[test]
    fn rows_have_baselines_and_compile() {
        let rows = rows();
        for a in [CArch::Gfx942, CArch::Gfx950] {
            assert!(rows.iter().any(|r| r.config.arch == a && r.baseline.is_some()), "{a:?}");
        }
        for r in &rows {
            if let Some(b) = &r.baseline {
                let base = rows.iter().find(|x| &x.label == b).expect("baseline row");
                assert_eq!(base.config.tile, r.config.tile, "{}", r.label);
                assert_eq!(base.config.schedule, Schedule::Pipelined);
            }
            gemm_compiler::compile(r.config).unwrap_or_else(|e| panic!("{}: {e}", r.label));
        }
    }
}
