//! Issue 23: every split-capable kernel of a decode row (each plain kernel that has a split-K
//! twin) at several split counts, predicted by the timing model beside the characterisation
//! table's estimate, then the runtime's plan and the model's best plans: tells a missing kernel
//! from a plan that does not pick an existing better one.
//!
//! `cargo run --release -p gemm-lab --example split_probe -- ARCH DTYPE M N K [S,S,...] [NAME-SUBSTRING]`
//! (`DTYPE`: bf16, f16 or fp8; `N x K` the weights, `M` the tokens; `S` 1 is the kernel alone;
//! `JOBS=n` threads, default 2; `DETAIL=1` adds each launch's hit rates and limiter to the best
//! plans). Every decode kernel at every split count: `... 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 _dec`.

use gemm_core::Arch;
use gemm_dispatch::plan::gemm_plan::{plan_gemm, GemmPlan};
use gemm_dispatch::plan::kernel_plan::plan_for;
use gemm_dispatch::plan::splitk::{self, SplitPlan};
use gemm_kernels::SplitRole;
use gemm_lab::decode_table::{describe, dtype_of, linear, predict_gemm_plan};

/// One plan's launches as the model predicts them: seconds, and the detail `DETAIL` asks for.
fn launches(plan: &GemmPlan, p: &gemm_core::GemmProblem) -> Option<(f64, String)> {
    let xs = gemm_lab::model::predict_gemm_launches(plan, p, &Default::default()).ok()?;
    let detail = std::env::var("DETAIL").is_ok();
    let parts: Vec<String> = xs
        .iter()
        .map(|x| match detail {
            true => format!(
                "{:.2} (mall {:.3} l2 {:.3} hbm {:.1} B/clk cu_wgs {} {})",
                x.seconds * 1e6,
                x.hits.mall,
                x.hits.l2,
                x.hbm_bytes_per_clk,
                x.cu_wgs,
                x.limiter
            ),
            false => format!("{:.2}", x.seconds * 1e6),
        })
        .collect();
    Some((xs.iter().map(|x| x.seconds).sum(), parts.join(" + ")))
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let arch: Arch = a[1].parse().unwrap();
    let (ab, c) = dtype_of(&a[2], arch).unwrap();
    let d = |i: usize| a[i].parse::<usize>().unwrap();
    let (m, n, k) = (d(3), d(4), d(5));
    let splits: Vec<u32> = a.get(6).map_or(vec![1, 2, 4, 8], |s| s.split(',').map(|x| x.parse().unwrap()).collect());
    let only = a.get(7).cloned();
    let jobs = std::env::var("JOBS").ok().and_then(|j| j.parse().ok()).unwrap_or(2);
    let p = linear(m, n, k, ab, c);
    let reduce = gemm_kernels::for_arch(arch).find(|r| r.split_k == SplitRole::Reduce && r.c_type == c).unwrap();
    // Every (kernel, split count) plan with the table's estimate.
    let mut plans: Vec<(&'static str, u32, GemmPlan, f64)> = Vec::new();
    let plains = gemm_kernels::for_arch(arch)
        .filter(|e| e.is_plain() && e.a_type == ab && e.c_type == c)
        .filter(|e| only.as_deref().is_none_or(|o| e.name.contains(o)));
    for e in plains {
        let Ok(kp) = plan_for(e, &p) else { continue };
        let cm = kp.problem;
        let twin = splitk::twin(e, &p, &cm);
        for &s in &splits {
            let split = match (s, twin, splitk::slab(cm.m, cm.n)) {
                (1, _, _) => None,
                (_, Some(partial), Ok(slab)) => Some(SplitPlan::even(partial, reduce, cm, s, slab)),
                _ => continue,
            };
            let g = GemmPlan { kernel: kp, split, prepass: None };
            let tab = g.estimate(&p);
            plans.push((e.name, s, g, tab));
        }
    }
    let predicted: Vec<Option<(f64, String)>> = gemm_lab::jobs::map_jobs(&plans, jobs, |(_, _, g, _)| launches(g, &p));
    let mut name = "";
    let mut line = String::new();
    for ((e, s, _, tab), t) in plans.iter().zip(&predicted) {
        if *e != name {
            if !line.is_empty() {
                println!("{line}");
            }
            (name, line) = (e, format!("{e:70}"));
        }
        line += &t.as_ref().map_or_else(
            || format!("  S{s}:    -  "),
            |(t, _)| format!("  S{s}:{:7.2} (table {:6.2})", t * 1e6, tab * 1e6),
        );
    }
    println!("{line}");
    let pl = plan_gemm(arch, arch.caps().compute_units, &p).unwrap().unwrap();
    let floor = gemm_dispatch::plan::bounds::floor(arch, &p, false).seconds();
    let ceiling = floor / gemm_emu::timing::params::Params::for_arch(arch).hbm_efficiency;
    let rt = predict_gemm_plan(&pl, &p).unwrap();
    println!(
        "runtime plan {}: {:.2} us ({:.0}% of the streaming ceiling; floor {:.2} us)",
        describe(&pl),
        rt * 1e6,
        100.0 * ceiling / rt,
        floor * 1e6
    );
    let mut best: Vec<_> = plans.iter().zip(&predicted).filter_map(|(x, t)| t.as_ref().map(|t| (x, t))).collect();
    best.sort_by(|a, b| a.1 .0.total_cmp(&b.1 .0));
    for ((e, _, g, tab), (t, parts)) in best.iter().take(5) {
        println!(
            "  model {:>8.2} us ({:>3.0}%)  table {:>8.2}  {:<36} [{parts}] {e}",
            t * 1e6,
            100.0 * ceiling / t,
            tab * 1e6,
            describe(g)
        );
    }
}
