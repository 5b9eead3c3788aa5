//! Issue 24: where a workgroup's cycles go, by the timing model's trace of the simulated CU:
//! per workgroup, the prologue (first wave start to its first main-loop MFMA), the main loop
//! (first to last MFMA) and the epilogue (last MFMA's end to the last wave's end), for a catalogue
//! kernel and the AMD blog's fp8 ping-pong at the same size. Every cycle is a prediction.
//!
//! `cargo run --release -p gemm-lab --example phases -- SIZE [KERNEL-SUBSTRING ...]`
//! (default: the gfx950 fp8 `pps2` kernel of the Linear layout, C bf16). `blocks:ARCH` (e.g.
//! `blocks:gfx950`) names the block-scaled fp8 kernel the dispatcher plans for the square
//! Linear problem on ARCH (`gemm mx --fp8-blocks`'s launch: e4m3 -> bf16, the activations'
//! scales column-major).

use gemm_dispatch::plan::kernel_plan;
use gemm_emu::timing::{ModelOptions, Prediction};
use gemm_lab::model::{predict_plan, problem_for};
use gemm_lab::mx_table::predict_fp8_blocks_with;
use std::collections::BTreeMap;

/// `(wg, prologue, loop, epilogue, total)` cycles of each simulated workgroup.
fn phases(p: &Prediction) -> Vec<(u64, u64, u64, u64, u64)> {
    let mut by_wg: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, w) in p.waves.iter().enumerate() {
        by_wg.entry(w.wg).or_default().push(i);
    }
    let mut out = vec![];
    for (wg, ws) in by_wg {
        let uids: Vec<usize> = ws.iter().map(|&i| p.waves[i].uid).collect();
        let start = ws.iter().map(|&i| p.waves[i].start).min().unwrap_or(0);
        let end = ws.iter().map(|&i| p.waves[i].end).max().unwrap_or(0);
        // The main loop's MFMAs: those of the workgroup's last MFMA's opcode (the zeroing
        // MFMAs of `fp8pp`'s prologue, `v_mfma_f32_32x32x16_bf16`, are not the loop's).
        let mine = || p.spans.iter().filter(|s| uids.contains(&s.wave_uid) && s.name.contains("mfma"));
        let Some(op) = mine().max_by_key(|s| s.start).map(|s| s.name.clone()) else { continue };
        let (mut first, mut last) = (u64::MAX, 0);
        for s in mine().filter(|s| s.name == op) {
            first = first.min(s.start);
            last = last.max(s.start + s.dur);
        }
        if first == u64::MAX {
            continue;
        }
        out.push((wg, first - start, last - first, end.saturating_sub(last), end - start));
    }
    out
}

fn report(label: &str, p: &Prediction) {
    println!("{label}: {:.2} us, {:.1} TFLOP/s at {:.0} MHz, limiter {}", p.seconds * 1e6, p.tflops, p.mhz, p.limiter);
    println!("  {:>6} {:>9} {:>9} {:>9} {:>9}", "wg", "prologue", "loop", "epilogue", "total");
    for (wg, a, b, c, t) in phases(p).into_iter().take(4) {
        println!("  {wg:>6} {a:>9} {b:>9} {c:>9} {t:>9}");
    }
    if std::env::var("PHASES_WAVES").is_ok() {
        for w in &p.waves {
            let sp: Vec<_> = p.spans.iter().filter(|s| s.wave_uid == w.uid).collect();
            let lm = sp.iter().filter(|s| s.name.contains("mfma")).map(|s| s.start + s.dur).max().unwrap_or(0);
            let fm = sp.iter().filter(|s| s.name.contains("mfma")).map(|s| s.start).min().unwrap_or(0);
            println!(
                "    wg {} wave {} simd {}: start {} first mfma {} last mfma end {} end {}",
                w.wg, w.wave, w.simd, w.start, fm, lm, w.end
            );
        }
    }
    // PHASES_IDLE=1: the matrix pipe's idle time in the main loop of SIMD 0 of the first
    // workgroup, by gap (an idle gap follows an MFMA whose successor issues more than its
    // duration later): where a schedule loses its clocks between clusters.
    if std::env::var("PHASES_IDLE").is_ok() {
        let Some(wg) = p.waves.first().map(|w| w.wg) else { return };
        let uids: Vec<usize> = p.waves.iter().filter(|w| w.wg == wg && w.simd == 0).map(|w| w.uid).collect();
        let mut mf: Vec<(u64, u64)> = p
            .spans
            .iter()
            .filter(|s| uids.contains(&s.wave_uid) && s.name.contains("mfma"))
            .map(|s| (s.start, s.dur))
            .collect();
        mf.sort_unstable();
        let mut hist: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
        for w in mf.windows(2) {
            let idle = w[1].0.saturating_sub(w[0].0 + w[0].1);
            if idle > 0 {
                let e = hist.entry(idle.next_power_of_two()).or_default();
                e.0 += 1;
                e.1 += idle;
            }
        }
        let total: u64 = hist.values().map(|x| x.1).sum();
        println!("  SIMD 0 matrix pipe idle between MFMAs: {total} clocks over {} MFMAs", mf.len());
        for (b, (n, t)) in hist {
            println!("    gaps <= {b:>6}: {n:>5} gaps, {t:>7} clocks");
        }
    }
    // PHASES_DUMP=W: wave W's instructions outside its main loop (issue cycle, duration).
    if let Some(w) = std::env::var("PHASES_DUMP").ok().and_then(|v| v.parse::<usize>().ok()) {
        let Some(uid) = p.waves.get(w).map(|x| x.uid) else { return };
        let spans: Vec<_> = p.spans.iter().filter(|s| s.wave_uid == uid).collect();
        let first = spans.iter().position(|s| s.name.contains("mfma")).unwrap_or(0);
        let last = spans.iter().rposition(|s| s.name.contains("mfma")).unwrap_or(0);
        // PHASES_WINDOW=FROM,TO: the instructions issued in that cycle window instead.
        let window = std::env::var("PHASES_WINDOW").ok().and_then(|v| {
            let (a, b) = v.split_once(',')?;
            Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?))
        });
        for (i, s) in spans.iter().enumerate() {
            let shown = match window {
                Some((a, b)) => (a..b).contains(&s.start),
                None => i <= first + 2 || i + 2 >= last,
            };
            if shown {
                println!("    {:>7} {:>6} {}", s.start, s.dur, s.name);
            }
        }
    }
}

/// The block-scaled fp8 launch `gemm mx --fp8-blocks` predicts for the square `size` problem.
fn blocks(arch: &str, size: usize, opts: &ModelOptions) {
    use gemm_dispatch::plan::block_scaled::{plan_fp8_blocks, Fp8BlockProblem};
    let arch = gemm_core::Arch::ALL.into_iter().find(|a| a.name() == arch).expect("an arch name");
    let e4m3 = if arch == gemm_core::Arch::Gfx942 { gemm_core::DType::Fp8E4M3Fnuz } else { gemm_core::DType::Fp8E4M3 };
    let bp = Fp8BlockProblem {
        sx_col_major: true,
        ldsx: size,
        ..Fp8BlockProblem::new(size, size, size, e4m3, gemm_core::DType::Bf16)
    };
    match plan_fp8_blocks(arch, &bp).and_then(|pl| Ok((pl.entry.name, predict_fp8_blocks_with(&pl, opts)?))) {
        Ok((name, pred)) => report(name, &pred),
        Err(err) => println!("block-scaled fp8 on {}: {err}", arch.name()),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size: usize = args.get(1).map_or(4096, |s| s.parse().expect("SIZE"));
    let names: Vec<String> = if args.len() > 2 {
        args[2..].to_vec()
    } else {
        vec!["gemm_gfx950_fp8_bf16_tn_256x256x128_w2x4_s2_mfma32x32x64_v8_c4g8_pps2".into()]
    };
    let opts = ModelOptions { trace_spans: 4_000_000, ..ModelOptions::default() };
    for n in &names {
        if let Some(arch) = n.strip_prefix("blocks:") {
            blocks(arch, size, &opts);
            continue;
        }
        let e = gemm_kernels::catalogue().iter().find(|e| e.name.contains(n.as_str())).expect("a catalogue kernel");
        let p = problem_for(e, size, size, size);
        match kernel_plan::plan_for(e, &p).and_then(|plan| predict_plan(&plan, &p, &opts)) {
            Ok(pred) => report(e.name, &pred),
            Err(err) => println!("{}: {err}", e.name),
        }
    }
    let cal = gemm_emu::calibration::load_dir(&gemm_emu::calibration::default_dir()).expect("calibration set");
    if let Some(k) = cal.iter().find(|k| k.name == "blog_pingpong") {
        match gemm_emu::model_eval::predict_size_in(k, size, size, size, &opts, Default::default()) {
            Ok(pred) => report("blog ping-pong", &pred),
            Err(err) => println!("blog ping-pong: {err}"),
        }
    }
}
