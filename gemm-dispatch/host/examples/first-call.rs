//! The first f32 GEMM of a process against its steady calls (issue 27's measurement): run it as a
//! fresh process each time.
//!
//! ```sh
//! cargo run --release -p gemm-host --example first-call               # 2048^3, all cores, 5 steady calls
//! cargo run --release -p gemm-host --example first-call -- 1000 2 9   # size, threads, steady calls
//! ```
//!
//! Prints the first call's time, the median and best of the steady calls, the ratio
//! first / median, and the path `dispatch` chose for the size with the reason. A, B and C are
//! written before the first call, so page faults on the caller's buffers are not counted; what the
//! first call pays beyond a steady one is the library's own first use (path choice, thread pool,
//! packing buffers).

use gemm_core::{MatMut, MatRef, Operand};
use std::time::Instant;

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("arguments are numbers")).collect();
    let n = args.first().copied().unwrap_or(2048);
    let threads = args.get(1).copied().unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |p| p.get()));
    let rounds = args.get(2).copied().unwrap_or(5).max(1);
    let a: Vec<f32> = (0..n * n).map(|i| ((i * 7919) % 257) as f32 / 257.0 - 0.5).collect();
    let b: Vec<f32> = (0..n * n).map(|i| ((i * 104729) % 251) as f32 / 251.0 - 0.5).collect();
    let mut c = vec![1f32; n * n];
    let mut call = || {
        let av = MatRef::new(&a, n, n, n, 1, Operand::A).unwrap();
        let bv = MatRef::new(&b, n, n, n, 1, Operand::B).unwrap();
        let cv = MatMut::new(&mut c, n, n, n, 1, Operand::C).unwrap();
        let t = Instant::now();
        gemm_host::gemm(1.0, av, bv, 0.0, cv, threads).expect("gemm");
        t.elapsed().as_secs_f64()
    };
    let faults = minor_faults();
    let first = call();
    let first_faults = minor_faults() - faults;
    let mut steady: Vec<f64> = (0..rounds).map(|_| call()).collect();
    steady.sort_by(f64::total_cmp);
    let median = steady[steady.len() / 2];
    let gflops = |s: f64| 2.0 * (n as f64).powi(3) / s * 1e-9;
    println!(
        "{n}^3 f32, {threads} threads: first call {first:.3} s, steady median {median:.3} s (best {:.3} s, {rounds} calls, {:.0} GFLOP/s): first/steady {:.2}x; page faults in the first call {first_faults}",
        steady[0],
        gflops(median),
        first / median
    );
    // `summary` has one f32 line per size class where the path depends on the size, else one.
    let class = gemm_host::dispatch::f32_size_class(n, n, n);
    let f32_lines: Vec<String> =
        gemm_host::dispatch::summary(threads).into_iter().filter(|l| l.starts_with("f32")).collect();
    let index = gemm_host::dispatch::F32_CLASSES.iter().position(|c| *c == class).filter(|_| f32_lines.len() > 1);
    if let Some(line) = f32_lines.get(index.unwrap_or(0)) {
        println!("path: {line}");
    }
}

/// Minor page faults of this process so far (`getrusage`), 0 where unavailable.
fn minor_faults() -> i64 {
    #[cfg(unix)]
    {
        // SAFETY: getrusage writes one rusage into the zeroed struct it is given.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0 {
            return usage.ru_minflt;
        }
    }
    0
}
