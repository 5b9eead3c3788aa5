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

/// The catalogue's `large` bf16 -> f32 member of `arch` (nn where the family has it).
fn large(arch: CArch) -> Option<KernelConfig> {
    let all: Vec<_> = catalogue::entries()
        .into_iter()
        .filter(|(f, c)| f.name == "large" && c.arch == arch && c.ab_type == DType::Bf16 && c.c_type == DType::F32)
        .map(|(_, c)| c)
        .collect();
    all.iter().find(|c| !c.trans_a && !c.trans_b).or(all.first()).copied().or_else(|| {
        // gfx950 ships no `large` family (its 8-wave 256x256x64 tile cannot be resident,
        // `fit::resident`); its rows still show what that tile would do, marked.
        (arch == CArch::Gfx950).then(|| {
            KernelConfig::new(arch, DType::Bf16, DType::F32, false, false, gemm_compiler::ir::Align::Vec8).with_shape(
                (256, 256, 64),
                (2, 4),
                gemm_compiler::ir::MfmaShape::native_16(arch),
                2,
            )
        })
    })
}

/// The rows: per arch, the large tile without and with each schedule that applies, and a
/// 4-wave tile of the same size for the 4-wave interleave.
pub fn rows() -> Vec<SchedRow> {
    let mut out = vec![];
    for arch in [CArch::Gfx950, CArch::Gfx942] {
        let Some(base) = large(arch) else { continue };
        let t = |c: &KernelConfig| {
            format!(
                "{} {}{} {}x{}x{} w{}",
                arch.name(),
                if c.trans_a { 't' } else { 'n' },
                if c.trans_b { 't' } else { 'n' },
                c.tile.0,
                c.tile.1,
                c.tile.2,
                c.waves
            )
        };
        let staged = |c: &KernelConfig| {
            let mut c = *c;
            c.direct_to_lds = DmaPolicy::Never;
            c
        };
        let bl = format!("{} pipelined", t(&base));
        out.push(SchedRow { label: bl.clone(), config: base, baseline: None });
        let mut scheds = vec![];
        if let Some(s) = Schedule::ping_pong_for(&base) {
            scheds.push(s);
        }
        scheds.push(Schedule::PingPong { clusters: 2 });
        if arch == CArch::Gfx950 {
            scheds.push(Schedule::CopyInterleave { stages: 4 });
        }
        scheds.dedup();
        for s in &scheds {
            let mut c = base;
            c.schedule = *s;
            out.push(SchedRow { label: format!("{} {}", t(&c), s.label()), config: c, baseline: Some(bl.clone()) });
        }
        // Register-staged copies (no LDS-DMA).
        let bls = format!("{} pipelined staged", t(&base));
        out.push(SchedRow { label: bls.clone(), config: staged(&base), baseline: None });
        for s in &scheds {
            let mut c = staged(&base);
            c.schedule = *s;
            out.push(SchedRow {
                label: format!("{} {} staged", t(&c), s.label()),
                config: c,
                baseline: Some(bls.clone()),
            });
        }
        // 4 waves, one per SIMD: the same tile (128x128 per wave).
        let mfma = if arch == CArch::Gfx950 { MfmaShape::native_16(arch) } else { MfmaShape::native_32(arch) };
        let mut b4 = KernelConfig::new(arch, DType::Bf16, DType::F32, base.trans_a, base.trans_b, Align::Vec8)
            .with_shape(base.tile, (2, 2), mfma, 2);
        b4.grid = base.grid;
        let b4 = staged(&b4);
        let bl4 = format!("{} pipelined staged", t(&b4));
        out.push(SchedRow { label: bl4.clone(), config: b4, baseline: None });
        let mut c = b4;
        c.schedule = Schedule::Interleave { slices: 4 };
        out.push(SchedRow {
            label: format!("{} {} staged", t(&c), c.schedule.label()),
            config: c,
            baseline: Some(bl4),
        });
        out.extend(quadrant_rows(arch, &base, mfma));
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
        for sync in [Sync::Barrier, Sync::PhaseCounters] {
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
    let al = c.align.elems() as usize;
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

/// Runs `gemm compare --schedules`.
pub fn compare_schedules(
    sizes: &[usize],
    only: &[String],
    trace_dir: Option<&std::path::Path>,
) -> Result<String, String> {
    let mut opts = ModelOptions::default();
    let largest = sizes.iter().copied().max().unwrap_or(0);
    if let Some(d) = trace_dir {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        opts.trace_spans = 400_000;
    }
    let triton = eval::load_triton(&eval::triton_dir()).map_err(|e| e.to_string())?;
    let mut lines: Vec<Line> = vec![];
    for r in rows().into_iter().filter(|r| only.is_empty() || only.iter().any(|s| r.label.contains(s.as_str()))) {
        let preds = sizes
            .iter()
            .map(|&n| {
                let t0 = std::time::Instant::now();
                let p = predict_config(&r.config, n, &opts);
                if let (Some(d), Ok(p)) = (trace_dir, &p) {
                    if n == largest {
                        let f = d.join(format!("{}_{n}.json", r.config.name()));
                        let _ = std::fs::write(&f, gemm_emu::timing::trace::chrome_trace(p));
                    }
                }
                let what = p.as_ref().map_or_else(|e| e.clone(), |p| format!("{:.1} TFLOP/s", p.tflops));
                eprintln!("  {} {n}: {what} ({:.1}s)", r.label, t0.elapsed().as_secs_f64());
                p
            })
            .collect();
        lines.push(Line {
            label: r.label,
            arch: arch_of(r.config.arch),
            baseline: r.baseline,
            kernel: r.config.name(),
            preds,
        });
    }
    let archs: Vec<Arch> = {
        let mut a: Vec<Arch> = lines.iter().map(|l| l.arch).collect();
        a.dedup();
        a
    };
    let tri: Vec<&TritonKernel> = triton.iter().filter(|t| t.dtype == "bf16" && archs.contains(&t.arch())).collect();
    for t in tri {
        let preds = sizes
            .iter()
            .map(|&n| {
                let t0 = std::time::Instant::now();
                let p = eval::predict_triton(&eval::triton_dir(), t, n, n, n, &opts);
                let what = p.as_ref().map_or_else(|e| e.clone(), |p| format!("{:.1} TFLOP/s", p.tflops));
                eprintln!("  {} {} {n}: {what} ({:.1}s)", t.label(), t.arch, t0.elapsed().as_secs_f64());
                p
            })
            .collect();
        lines.push(Line {
            label: format!("{} {}", t.arch, t.label()),
            arch: t.arch(),
            baseline: None,
            kernel: t.file.clone(),
            preds,
        });
    }
    Ok(report(&lines, sizes))
}

fn report(lines: &[Line], sizes: &[usize]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "predicted TFLOP/s (timing model, sustained clock), bf16 inputs, f32 accumulate, M=N=K:");
    let tf = |l: &Line, i: usize| l.preds[i].as_ref().ok().map(|p| p.tflops);
    let best_triton = |arch: Arch, i: usize| {
        lines
            .iter()
            .filter(|l| l.arch == arch && l.label.contains("triton"))
            .filter_map(|l| tf(l, i))
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
    };
    let mut head = format!("{:<44}", "schedule");
    for n in sizes {
        let _ = write!(head, " {:>8} {:>6} {:>6}", n, "vs-pl", "vs-tri");
    }
    let _ = write!(head, " {:>6}  stalls at {} (share of wave cycles)", "mfma%", sizes.iter().max().unwrap_or(&0));
    let _ = writeln!(s, "{head}");
    let last = sizes.len().saturating_sub(1);
    for l in lines {
        let mut line = format!("{:<44}", l.label);
        for i in 0..sizes.len() {
            let v = tf(l, i);
            let base = l.baseline.as_ref().and_then(|b| lines.iter().find(|x| &x.label == b)).and_then(|b| tf(b, i));
            let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
                _ => "-".into(),
            };
            let vt = if l.label.contains("triton") { None } else { best_triton(l.arch, i) };
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
    let _ = writeln!(s, "vs-pl: against the same tile with the pipelined loop; vs-tri: against the best Triton 3.9 kernel of the arch (bf16) at that size");
    let _ = writeln!(s, "kernels:");
    for l in lines {
        let _ = writeln!(s, "  {:<44} {}", l.label, l.kernel);
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
