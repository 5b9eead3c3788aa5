//! Prints the catalogue with the static figures of one main-loop iteration per wave.
fn main() {
    println!("| kernel | SGPR/VGPR/AGPR | LDS | occupancy (waves/SIMD) | MFMA/K-step | other insts | LDS conflict cycles (reads, writes) | MFMA share |");
    println!("|---|---|---|---|---|---|---|---|");
    for c in gemm_compiler::catalogue::configs() {
        let k = gemm_compiler::compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        let s = k.stats;
        println!(
            "| {} | {}/{}/{} | {} | {} | {} | {} | {}, {} | {:.1}% |",
            k.name,
            k.usage.sgprs,
            k.usage.vgprs,
            k.usage.agprs,
            k.lds_bytes,
            gemm_compiler::fit::occupancy(c.arch, k.usage.vgprs, k.usage.agprs, k.lds_bytes, c.waves),
            s.mfma_per_k_step,
            s.other_insts_per_k_step,
            s.lds_read_conflicts,
            s.lds_write_conflicts,
            100.0 * s.mfma_share()
        );
    }
}
