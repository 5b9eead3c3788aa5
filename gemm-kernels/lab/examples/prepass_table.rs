//! Issue 24's bar: fp8 NN, NT, TN and TT within 10% of each other at 4096^3 and above, both
//! archs. For each layout (row-major, `--transa` / `--transb` as `gemm plan` takes them): the
//! direct plan's table time (`gemm_plan::direct`: no pre-pass), the runtime's plan's
//! (`plan_gemm`, with the transpose pre-pass where it pays), and with `--model` the timing
//! model's prediction of every launch of the runtime's plan (`predict_gemm_plan`).
//!
//! `cargo run --release -p gemm-lab --example prepass_table -- [ARCH] [S,S,...] [--model]`

use gemm_core::{Arch, DType, GemmProblem, Layout, Transpose};
use gemm_dispatch::plan::gemm_plan::{direct, plan_gemm};
use gemm_lab::decode_table::{describe, predict_gemm_plan};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let model = a.iter().any(|x| x == "--model");
    let a: Vec<&String> = a.iter().filter(|x| !x.starts_with("--")).collect();
    let archs: Vec<Arch> = a.get(1).map_or(Arch::ALL.to_vec(), |s| vec![s.parse().unwrap()]);
    let sizes: Vec<usize> = a.get(2).map_or(vec![4096, 8192], |s| s.split(',').map(|x| x.parse().unwrap()).collect());
    for arch in archs {
        let cus = arch.caps().compute_units;
        let e4 = if arch == Arch::Gfx942 { DType::Fp8E4M3Fnuz } else { DType::Fp8E4M3 };
        for &s in &sizes {
            let mut plans = vec![];
            for (label, ta, tb) in [
                ("none", Transpose::No, Transpose::No),
                ("--transa", Transpose::Yes, Transpose::No),
                ("--transb", Transpose::No, Transpose::Yes),
                ("both", Transpose::Yes, Transpose::Yes),
            ] {
                let p = GemmProblem::new(s, s, s).with_layout(Layout::RowMajor).with_transposes(ta, tb).with_dtypes(
                    e4,
                    e4,
                    DType::Bf16,
                );
                let d = direct(arch, cus, &p).unwrap().estimate(&p);
                let pl = plan_gemm(arch, cus, &p).unwrap().unwrap();
                let t = pl.estimate(&p);
                let m = if model { predict_gemm_plan(&pl, &p).map_or(f64::NAN, |x| x * 1e6) } else { f64::NAN };
                println!(
                    "{arch} {s}^3 {label:9} direct {:9.3} us  plan {:9.3} us  model {:9.3} us  {}",
                    d * 1e6,
                    t * 1e6,
                    m,
                    describe(&pl)
                );
                plans.push(t);
            }
            let (lo, hi) = plans.iter().fold((f64::INFINITY, 0f64), |(l, h), &t| (l.min(t), h.max(t)));
            println!("{arch} {s}^3: slowest / fastest layout by the table {:.3}", hi / lo);
        }
    }
}
