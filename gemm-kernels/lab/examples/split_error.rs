//! Issues 23/28: the characterisation table's split-K estimates at small M against the timing
//! model, launch by launch (partial kernel, reduction). Every time is a timing-model prediction.
//!
//! `cargo run --release -p gemm-lab --example split_error -- [arch] [dtype] [m,m,...] [layer-substring]`

use gemm_core::{Arch, DType};
use gemm_dispatch::plan::cost_table::reduction_seconds;
use gemm_dispatch::plan::gemm_plan::{plan_gemm, GemmPlan};
use gemm_dispatch::plan::splitk::{partial_seconds, plain_twin, table_estimate, SplitPlan};
use gemm_lab::decode_table::{dtype_of, linear, plan_without_decode, LAYERS};

/// The table's partial-launch time: the decode kernel itself for a decode split, else the
/// partial's plain twin (`splitk::plain_twin`).
fn partial_table(sp: &SplitPlan, plain: &'static gemm_kernels::KernelEntry) -> Option<f64> {
    let twin = if plain.is_decode() { plain } else { plain_twin(sp.partial)? };
    partial_seconds(sp, twin)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("raw") {
        // raw ARCH M N K: a column-major bf16 A B problem, C bf16.
        let arch: Arch = args[2].parse().unwrap();
        let d = |i: usize| args[i].parse::<usize>().unwrap();
        let p = gemm_core::GemmProblem::new(d(3), d(4), d(5)).with_layout(gemm_core::Layout::ColMajor).with_dtypes(
            DType::Bf16,
            DType::Bf16,
            DType::Bf16,
        );
        let opts = gemm_emu::timing::ModelOptions::default();
        let pl = plan_gemm(arch, arch.caps().compute_units, &p).unwrap().unwrap();
        let sp = pl.split.as_ref().expect("a split plan");
        let pt = partial_table(sp, pl.kernel.entry).unwrap();
        let tot = table_estimate(sp, &p).unwrap();
        let pr = gemm_lab::split_eval::predict_split(sp, &p, &opts).unwrap();
        println!(
            "splits {} partial table {:.2} model {:.2}; rest table {:.2} reduce model {:.2}",
            sp.splits,
            pt * 1e6,
            pr[0].seconds * 1e6,
            (tot - pt) * 1e6,
            pr[1].seconds * 1e6
        );
        return;
    }
    let archs: Vec<Arch> = match args.get(1).map(String::as_str) {
        Some("all") | None => Arch::ALL.to_vec(),
        Some(a) => vec![a.parse().unwrap()],
    };
    let dtypes: Vec<String> =
        args.get(2).map_or(vec!["bf16".into(), "fp8".into()], |d| d.split(',').map(String::from).collect());
    let ms: Vec<usize> =
        args.get(3).map_or(vec![1, 16, 32, 64], |m| m.split(',').map(|x| x.parse().unwrap()).collect());
    let only = args.get(4).cloned();
    let opts = gemm_emu::timing::ModelOptions::default();
    println!("arch    layer          dtype  M    kind                     splits wgs  part_tab part_mod  red_tab red_mod  tot_tab tot_mod  err%");
    for &arch in &archs {
        for d in &dtypes {
            let (ab, c) = dtype_of(d, arch).unwrap();
            for &(name, n, k) in LAYERS.iter().filter(|l| only.as_deref().is_none_or(|o| l.0.contains(o))) {
                for &m in &ms {
                    let p = linear(m, n, k, ab, c);
                    let mut plans: Vec<(&str, GemmPlan)> = vec![];
                    if let Ok(Some(pl)) = plan_gemm(arch, arch.caps().compute_units, &p) {
                        plans.push(("now", pl));
                    }
                    if let Ok(pl) = plan_without_decode(arch, &p) {
                        plans.push(("tiled", pl));
                    }
                    for (what, pl) in plans {
                        let Some(sp) = pl.split.as_ref() else { continue };
                        if sp.head.is_some() {
                            continue;
                        }
                        let Some(pt) = partial_table(sp, pl.kernel.entry) else { continue };
                        let tot = table_estimate(sp, &p).unwrap_or(sp.estimate_split);
                        let Ok(pr) = gemm_lab::split_eval::predict_split(sp, &p, &opts) else { continue };
                        let (pm, rm) = (pr[0].seconds, pr[1].seconds);
                        let wgs = u64::from(sp.problem.m.div_ceil(sp.partial.tile.0))
                            * u64::from(sp.problem.n.div_ceil(sp.partial.tile.1))
                            * u64::from(sp.splits);
                        let desc = format!(
                            "{} {}x{}x{} k{}",
                            what, sp.partial.tile.0, sp.partial.tile.1, sp.partial.tile.2, sp.kchunk
                        );
                        println!(
                            "{:<7} {:<14} {:<5} {:>4} {:<26} {:>3} {:>4} {:>8.2} {:>8.2} {:>8.2} {:>7.2} {:>8.2} {:>7.2} {:>5.1}",
                            arch.name(),
                            name,
                            d,
                            m,
                            desc,
                            sp.splits,
                            wgs,
                            pt * 1e6,
                            pm * 1e6,
                            (tot - pt) * 1e6,
                            rm * 1e6,
                            tot * 1e6,
                            (pm + rm) * 1e6,
                            100.0 * (tot / (pm + rm) - 1.0)
                        );
                        let _ = reduction_seconds;
                    }
                }
            }
        }
    }
}
