//! Compile time of the catalogue per family, on one thread, in one process (so families are
//! compared under the same load): what each family adds to `build.rs` (which runs the same
//! compiles on every core). `cargo run -p gemm-compiler --example catalogue_time`.

use gemm_compiler::{catalogue, compile};
use std::collections::BTreeMap;
use std::time::Instant;

fn main() {
    let mut per: BTreeMap<(String, &'static str), (usize, f64)> = BTreeMap::new();
    let start = Instant::now();
    for (f, c) in catalogue::entries() {
        let t = Instant::now();
        compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        let e = per.entry((c.arch.name().to_string(), f.name)).or_default();
        e.0 += 1;
        e.1 += t.elapsed().as_secs_f64();
    }
    let total = start.elapsed().as_secs_f64();
    println!("{:<8} {:<10} {:>7} {:>9} {:>7}", "arch", "family", "kernels", "seconds", "share");
    for ((arch, fam), (n, s)) in &per {
        println!("{arch:<8} {fam:<10} {n:>7} {s:>9.3} {:>6.1}%", 100.0 * s / total);
    }
    println!("total    {:>18} {total:>9.3}", per.values().map(|v| v.0).sum::<usize>());
}
