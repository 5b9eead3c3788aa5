//! Scratch probe: every plain decode kernel of an arch on one Linear decode shape, alone and in
//! 2..=16 K splits, each predicted by the timing model beside the characterisation table's
//! estimate; sorted by the model, with the dispatcher's plan. It tells a table fault (the model's
//! best is not what the table picks) from a kernel-space fault (no kernel reaches the bar).
//!
//! `cargo run --release -p gemm-lab --example decode_best -- ARCH DTYPE M N K [JOBS]`
//! (`DTYPE`: bf16, f16 or fp8; `N x K` the weights, `M` the tokens).

use gemm_core::Arch;
use gemm_dispatch::plan::gemm_plan::GemmPlan;
use gemm_dispatch::plan::kernel_plan::{column_major, plan_for};
use gemm_dispatch::plan::splitk::{slab, table_estimate, SplitPlan};
use gemm_kernels::{KernelEntry, SplitRole};
use gemm_lab::decode_table::{describe, dtype_of, linear};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arch: Arch = args[1].parse().unwrap();
    let (ab, c) = dtype_of(&args[2], arch).unwrap();
    let d = |i: usize| args[i].parse::<usize>().unwrap();
    let (m, n, k) = (d(3), d(4), d(5));
    let jobs = args.get(6).map_or(2, |x| x.parse().unwrap());
    let p = linear(m, n, k, ab, c);
    let cm = column_major(&p).unwrap();
    let reduce = gemm_kernels::for_arch(arch).find(|r| r.split_k == SplitRole::Reduce && r.c_type == p.c_type);
    let mut plans: Vec<(String, GemmPlan, Option<f64>)> = Vec::new();
    let only = std::env::var("ONLY").unwrap_or_default();
    for e in gemm_kernels::for_arch(arch).filter(|e| e.is_decode() && e.is_plain() && e.name.contains(&only)) {
        let Ok(kp) = plan_for(e, &p) else { continue };
        let row = gemm_dispatch::plan::cost_table::table().row(e).ok();
        let Some(row) = row else { continue };
        let t = gemm_dispatch::plan::cost_table::compose_problem(
            row,
            e,
            cm.m,
            cm.n,
            1,
            f64::from(cm.k.next_multiple_of(e.tile.2)),
        );
        plans.push((e.name.to_string(), GemmPlan { kernel: kp, split: None, prepass: None }, Some(t)));
        let partial = twin(e);
        let (Some(partial), Some(reduce)) = (partial, reduce) else { continue };
        let Ok(ws) = slab(cm.m, cm.n) else { continue };
        let mut seen = Vec::new();
        for s in 2..=16u32 {
            let sp = SplitPlan::even(partial, reduce, cm, s, ws);
            if sp.splits < 2 || seen.contains(&sp.splits) {
                continue;
            }
            seen.push(sp.splits);
            let est = table_estimate(&sp, &p);
            plans.push((e.name.to_string(), GemmPlan { kernel: kp, split: Some(sp), prepass: None }, est));
        }
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((name, plan, est)) = plans.get(i) else { break };
                let Ok(xs) = gemm_lab::model::predict_gemm_launches(plan, &p, &Default::default()) else { continue };
                let t = xs.iter().map(|x| x.seconds).sum::<f64>();
                let parts: Vec<String> = xs
                    .iter()
                    .map(|x| {
                        if std::env::var("DETAIL").is_ok() {
                            format!(
                                "{:.2} (mall {:.3} l2 {:.3} hbm {:.1} B/clk cu_wgs {} sim {} extra {} tail {} {})",
                                x.seconds * 1e6,
                                x.hits.mall,
                                x.hits.l2,
                                x.hbm_bytes_per_clk,
                                x.cu_wgs,
                                x.simulated_wgs,
                                x.extrapolated_wgs,
                                x.tail_wgs,
                                x.limiter
                            )
                        } else {
                            format!("{:.2}", x.seconds * 1e6)
                        }
                    })
                    .collect();
                out.lock().unwrap().push((t, *est, name.clone(), format!("{} [{}]", describe(plan), parts.join("+"))));
            });
        }
    });
    let mut out = out.into_inner().unwrap();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    let floor = gemm_dispatch::plan::bounds::floor(arch, &p, false).seconds();
    let frac = gemm_emu::timing::params::Params::for_arch(arch).hbm_efficiency;
    let chosen = gemm_dispatch::plan::gemm_plan::plan_gemm(arch, arch.caps().compute_units, &p)
        .map(|pl| pl.map(|pl| describe(&pl)));
    println!("{arch} {} M {m} N {n} K {k}: floor {:.2} us; dispatcher: {chosen:?}", args[2], floor * 1e6);
    for (t, est, name, what) in out.iter().take(25) {
        println!(
            "  model {:>8.2} us ceil {:>4.0}%  table {:>8}  {what:<40} {name}",
            t * 1e6,
            100.0 * floor / frac / t,
            est.map_or("-".into(), |e| format!("{:.2}", e * 1e6))
        );
    }
}

/// The split-K partial kernel that is `e`'s twin (same tile, waves, MFMA, schedule, inputs).
fn twin(e: &KernelEntry) -> Option<&'static KernelEntry> {
    gemm_kernels::for_arch(e.arch).find(|x| {
        x.split_k == SplitRole::Partial
            && (x.tile, x.wave_grid, x.mfma, x.stages, x.schedule)
                == (e.tile, e.wave_grid, e.mfma, e.stages, e.schedule)
            && (x.grid_order, x.copy_a, x.copy_b) == (e.grid_order, e.copy_a, e.copy_b)
            && (x.a_type, x.b_type, x.trans_a, x.trans_b) == (e.a_type, e.b_type, e.trans_a, e.trans_b)
    })
}
