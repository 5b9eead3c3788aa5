//! Issue 23: every split-capable kernel of a decode row (each plain kernel that has a split-K
//! twin) at several split counts, predicted by the timing model, beside the runtime's plan:
//! tells a missing kernel from a plan that does not pick an existing better one.
//!
//! `cargo run --release -p gemm-lab --example split_probe -- ARCH DTYPE M N K [S,S,...] [NAME-SUBSTRING]`

use gemm_core::Arch;
use gemm_dispatch::plan::gemm_plan::plan_gemm;
use gemm_dispatch::plan::kernel_plan::plan_for;
use gemm_dispatch::plan::splitk::{self, SplitPlan};
use gemm_kernels::SplitRole;
use gemm_lab::decode_table::{describe, dtype_of, linear, predict_gemm_plan};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let arch: Arch = a[1].parse().unwrap();
    let (ab, c) = dtype_of(&a[2], arch).unwrap();
    let d = |i: usize| a[i].parse::<usize>().unwrap();
    let (m, n, k) = (d(3), d(4), d(5));
    let splits: Vec<u32> = a.get(6).map_or(vec![1, 2, 4, 8], |s| s.split(',').map(|x| x.parse().unwrap()).collect());
    let only = a.get(7).cloned();
    let p = linear(m, n, k, ab, c);
    let opts = gemm_emu::timing::ModelOptions::default();
    let pl = plan_gemm(arch, arch.caps().compute_units, &p).unwrap().unwrap();
    println!("runtime plan {}: {:.2} us", describe(&pl), predict_gemm_plan(&pl, &p).unwrap() * 1e6);
    let reduce = gemm_kernels::for_arch(arch).find(|r| r.split_k == SplitRole::Reduce && r.c_type == c).unwrap();
    let plains: Vec<_> = gemm_kernels::for_arch(arch)
        .filter(|e| e.is_plain() && e.a_type == ab && e.c_type == c)
        .filter(|e| only.as_deref().is_none_or(|o| e.name.contains(o)))
        .collect();
    for e in plains {
        let Ok(kp) = plan_for(e, &p) else { continue };
        let cm = kp.problem;
        let twin = gemm_kernels::for_arch(arch).find(|x| {
            x.split_k == SplitRole::Partial
                && (x.tile, x.wave_grid, x.mfma, x.stages, x.schedule)
                    == (e.tile, e.wave_grid, e.mfma, e.stages, e.schedule)
                && (x.a_type, x.b_type, x.trans_a, x.trans_b, x.align_elems)
                    == (e.a_type, e.b_type, e.trans_a, e.trans_b, e.align_elems)
                && (x.grid_order, x.copy_a, x.copy_b) == (e.grid_order, e.copy_a, e.copy_b)
        });
        let mut line = format!("{:70}", e.name);
        for &s in &splits {
            let t = if s == 1 {
                let g = gemm_dispatch::plan::gemm_plan::GemmPlan { kernel: kp, split: None, prepass: None };
                predict_gemm_plan(&g, &p).ok().map(|t| (t, f64::NAN))
            } else if let (Some(partial), Ok(slab)) = (twin, splitk::slab(cm.m, cm.n)) {
                let sp = SplitPlan::even(partial, reduce, cm, s, slab);
                let tab = splitk::table_estimate(&sp, &p).unwrap_or(f64::NAN);
                gemm_lab::split_eval::predict_split(&sp, &p, &opts)
                    .ok()
                    .map(|v| (v.iter().map(|x| x.seconds).sum::<f64>(), tab))
            } else {
                None
            };
            line += &t.map_or_else(
                || format!("  S{s}:    -  "),
                |(t, tab)| format!("  S{s}:{:7.2} (table {:6.2})", t * 1e6, tab * 1e6),
            );
        }
        println!("{line}");
    }
}
