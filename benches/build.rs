//! Links the system OpenBLAS (Debian's `libopenblas-dev`), the baseline of every benchmark.
fn main() {
    println!("cargo:rustc-link-lib=openblas");
}
