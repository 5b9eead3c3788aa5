//! Compiles the whole catalogue and prints the time: `cargo run -p gemm-compiler --example all`.
fn main() {
    let t = std::time::Instant::now();
    let bytes: usize = gemm_compiler::catalogue::configs()
        .into_iter()
        .map(|c| gemm_compiler::compile(c).unwrap().code_object.len())
        .sum();
    println!(
        "{} kernels, {bytes} bytes of code objects, in {:.3} s",
        gemm_compiler::catalogue::configs().len(),
        t.elapsed().as_secs_f64()
    );
}
