//! `cargo run --release -p gemm-benches --bin dispatch-bench -- [--rounds 15] [--ms 4]`
//!
//! The host-path dispatch overhead as one table: for tiny GEMMs (1, 8, 32; f32 and bf16 -> f32),
//! the median time per GEMM of the host engine called directly and through `Context::host(1)`,
//! and per item of 64 direct calls and of a 64-item strided batch through the scheduler. The
//! variants are interleaved round by round, so a noisy moment hurts them alike; each timing runs
//! enough repetitions to last about `--ms` milliseconds. The criterion bench
//! (`cargo bench -p gemm-benches --bench dispatch`) measures the same closures.

use gemm_benches::dispatch::{dtype_name, Tiny, BATCH, SIZES};
use gemm_core::{bf16, Element};
use gemm_dispatch::Context;
use std::time::Instant;

/// Seconds per call of `f`, timed over `reps` calls.
fn time(reps: usize, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..reps {
        f();
    }
    start.elapsed().as_secs_f64() / reps as f64
}

/// Repetitions of `f` that take about `ms` milliseconds.
fn calibrate(ms: f64, mut f: impl FnMut()) -> usize {
    let once = time(3, &mut f).max(1e-9);
    ((ms * 1e-3 / once) as usize).clamp(1, 1_000_000)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn rows<T: Element>(ctx: &Context, rounds: usize, ms: f64) {
    for n in SIZES {
        let mut t = Tiny::<T>::new(n, ctx);
        let reps = [
            calibrate(ms, || t.direct()),
            calibrate(ms, || t.context(ctx)),
            calibrate(ms, || t.direct_loop()),
            calibrate(ms, || t.batch(ctx)),
        ];
        let mut samples: [Vec<f64>; 4] = Default::default();
        for _ in 0..rounds {
            samples[0].push(time(reps[0], || t.direct()));
            samples[1].push(time(reps[1], || t.context(ctx)));
            samples[2].push(time(reps[2], || t.direct_loop()) / BATCH as f64);
            samples[3].push(time(reps[3], || t.batch(ctx)) / BATCH as f64);
        }
        let [direct, context, direct64, batch64] = samples.map(|s| median(s) * 1e6);
        println!(
            "{n:>4} {:<9} {direct:>10.3} {context:>10.3} {:>10.3} {direct64:>12.3} {batch64:>12.3} {:>12.3}",
            dtype_name::<T>(),
            context - direct,
            batch64 - direct64
        );
    }
}

fn main() {
    let mut rounds = 15;
    let mut ms = 4.0;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        let parsed = match (arg.as_str(), value.as_deref()) {
            ("--rounds", Some(v)) => v.parse().map(|v: usize| rounds = v.max(1)).map_err(|e| e.to_string()),
            ("--ms", Some(v)) => v.parse().map(|v: f64| ms = v.max(0.1)).map_err(|e| e.to_string()),
            _ => Err("usage: dispatch-bench [--rounds 15] [--ms 4]".to_string()),
        };
        if let Err(e) = parsed {
            eprintln!("error: {arg}: {e}");
            std::process::exit(2);
        }
    }
    let ctx = Context::host(1);
    println!(
        "host-path dispatch overhead, Context::host(1) ({} threads), median of {rounds} rounds, µs per GEMM",
        ctx.devices()[0].compute_units
    );
    println!(
        "{:>4} {:<9} {:>10} {:>10} {:>10} {:>12} {:>12} {:>12}",
        "n", "dtype", "direct", "context", "overhead", "direct64/it", "batch64/it", "overhead/it"
    );
    rows::<f32>(&ctx, rounds, ms);
    rows::<bf16>(&ctx, rounds, ms);
}
