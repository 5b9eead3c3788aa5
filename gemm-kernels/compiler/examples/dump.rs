//! Prints one catalogue kernel's assembly and figures: `cargo run -p gemm-compiler
//! --example dump -- [index]`.
fn main() {
    let idx: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let cfg = gemm_compiler::catalogue::configs()[idx];
    match gemm_compiler::compile(cfg) {
        Ok(k) => {
            print!("{}", gemm_compiler::disassemble(&k));
            if let Ok(p) = std::env::var("DUMP_CO") {
                std::fs::write(p, &k.code_object).unwrap();
            }
            eprintln!(
                "{} usage {:?} lds {} waits {} nops {} stats {:?} share {:.3}",
                k.name,
                k.usage,
                k.lds_bytes,
                k.waits_inserted,
                k.nop_wait_states,
                k.stats,
                k.stats.mfma_share()
            );
        }
        Err(e) => eprintln!("error: {e}"),
    }
}
