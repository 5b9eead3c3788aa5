//! Static prediction for an `m x n x k` GEMM (default 8192^3) per arch, bf16 -> bf16:
//! every catalogue kernel of the NN and TN transposes beside the old 128x128x32 family,
//! until the timing model (branch `timing`) ranks kernels by simulation.
//!
//! predicted TFLOP/s = peak (gemm-core `Arch::peak_tflops`) x static MFMA issue share of one
//! main-loop iteration (`analysis.rs`: MFMA cycles / (MFMA cycles + 4 per other
//! instruction)) x grid fill (workgroups / (rounds x CUs), one workgroup per CU per round).
//! An upper bound that ignores memory latency, waits and clocks below peak.
//!
//! `cargo run --release -p gemm-compiler --example predicted [m n k]`
use gemm_compiler::ir::{Align, KernelConfig};
use gemm_core::DType;

fn main() {
    let a: Vec<u64> = std::env::args().skip(1).filter_map(|s| s.parse().ok()).collect();
    let (m, n, k) = if a.len() == 3 { (a[0], a[1], a[2]) } else { (8192, 8192, 8192) };
    println!("{m}x{n}x{k} bf16 -> bf16, static prediction (see the example's doc)");
    println!("| arch | kernel | MFMA share | grid fill | predicted TFLOP/s |");
    println!("|---|---|---|---|---|");
    for arch in gemm_compiler::ir::Arch::ALL {
        let core_arch = gemm_core::Arch::ALL.into_iter().find(|c| c.name() == arch.name()).expect("arch");
        let peak = core_arch.peak_tflops(DType::Bf16);
        let cus = core_arch.caps().compute_units as u64;
        let mut rows = vec![("reference 128x128x32 family".to_string(), {
            let mut c = KernelConfig::new(arch, DType::Bf16, DType::Bf16, false, false, Align::Vec8);
            c.direct_to_lds = gemm_compiler::ir::DmaPolicy::Never;
            c
        })];
        for c in gemm_compiler::catalogue::configs() {
            if c.arch == arch
                && c.ab_type == DType::Bf16
                && c.c_type == DType::Bf16
                && c.align == Align::Vec8
                && !c.trans_b
                && c.fusion == gemm_compiler::ir::Fusion::NONE
            {
                rows.push(("catalogue".to_string(), c));
            }
        }
        for (what, c) in rows {
            let kk = gemm_compiler::compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
            let share = kk.stats.mfma_share();
            let wgs = m.div_ceil(c.tile.0 as u64) * n.div_ceil(c.tile.1 as u64);
            let fill = wgs as f64 / (wgs.div_ceil(cus) * cus) as f64;
            println!(
                "| {} | {} ({what}) | {:.1}% | {:.3} | {:.0} |",
                arch.name(),
                kk.name,
                100.0 * share,
                fill,
                peak * share * fill
            );
        }
    }
}
