//! `cargo run --release -p gemm-benches --bin f32-pairs -- [--size 2048] [--threads 1] [--pairs 9]
//! [--impls own,openblas] [--gap-ms 200]`
//!
//! f32 GEMMs of one square size timed in alternating rounds (each round runs every implementation
//! once, the order rotating from round to round), reporting per implementation the **median** over
//! rounds and the median of its per-round ratio to OpenBLAS. On a machine shared with other work a
//! burst of load lands in a round or two and moves a median little, where it can move a best-of or
//! a mean a lot.
//!
//! Each GEMM starts `--gap-ms` after the previous one ends: OpenBLAS's worker threads spin for a
//! while after a call before they sleep (and rayon's, which faer and gemm-host use, for a shorter
//! while), so a GEMM started at once shares the cores with the previous implementation's spinning
//! workers. On a 16-core Xeon without the gap, gemm-host's median at 2048^3 on 16 threads was half
//! its best-of in `gemm-bench`, which runs each implementation several times back to back.
//!
//! With `--threads 1` every implementation runs on the calling thread, and the time is also read
//! as that thread's CPU time from `/proc/thread-self/schedstat` (time on a CPU, in ns; the second
//! field is time spent runnable but waiting for a CPU, i.e. the load's share): the CPU-time
//! ratio compares the code, not the machine's load. Prints `uptime`'s load averages with the result.

use gemm_benches::{set_threads, Dtype, Impl, Problem};
use std::time::Instant;

/// This thread's (time on a CPU, time waiting for one) in seconds, where Linux says.
fn thread_times() -> Option<(f64, f64)> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut it = s.split_whitespace().map(|x| x.parse::<u64>().ok());
    Some((it.next()?? as f64 * 1e-9, it.next()?? as f64 * 1e-9))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

fn main() {
    let (mut size, mut threads, mut pairs, mut gap_ms) = (2048usize, 1usize, 9usize, 200u64);
    let mut impls = vec![Impl::HostF32Panels, Impl::OpenBlas];
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--size" => size = val().parse().expect("--size N"),
            "--threads" => threads = val().parse().expect("--threads N"),
            "--pairs" => pairs = val().parse::<usize>().expect("--pairs N").max(1),
            "--gap-ms" => gap_ms = val().parse().expect("--gap-ms MS"),
            "--impls" => {
                impls = val()
                    .split(',')
                    .map(|s| match s {
                        "host" => Impl::Host,
                        "own" => Impl::HostF32Panels,
                        "faer" | "alt" => Impl::HostAlt,
                        "openblas" => Impl::OpenBlas,
                        other => panic!("unknown implementation `{other}` (host, own, faer, openblas)"),
                    })
                    .collect();
                if !impls.contains(&Impl::OpenBlas) {
                    impls.push(Impl::OpenBlas);
                }
            }
            "-h" | "--help" => {
                println!(
                    "f32-pairs [--size 2048] [--threads 1] [--pairs 9] [--impls own,openblas,faer,host] [--gap-ms 200]"
                );
                return;
            }
            other => panic!("unknown argument `{other}` (try --help)"),
        }
    }
    set_threads(threads);
    let mut p = Problem::new(size, size, size, size as u64);
    let flops = p.flops();
    // Warm-up: page faults, packing buffers, the f32 path measurement of `host`.
    for &imp in &impls {
        p.run(imp, Dtype::F32, threads).expect("f32 runs on every CPU");
    }
    let cpu = threads == 1 && thread_times().is_some();
    // Per implementation: (wall seconds, CPU seconds) per round; and the wait on the run queue.
    let mut wall = vec![Vec::new(); impls.len()];
    let mut busy = vec![Vec::new(); impls.len()];
    let mut waited = 0.0;
    for round in 0..pairs {
        for i in 0..impls.len() {
            let which = (i + round) % impls.len();
            std::thread::sleep(std::time::Duration::from_millis(gap_ms));
            let t0 = thread_times();
            let t = Instant::now();
            p.run(impls[which], Dtype::F32, threads).expect("f32 runs on every CPU");
            wall[which].push(t.elapsed().as_secs_f64());
            if let (Some(a), Some(b)) = (t0, thread_times()) {
                busy[which].push(b.0 - a.0);
                waited += b.1 - a.1;
            }
        }
    }
    let ob = impls.iter().position(|&i| i == Impl::OpenBlas).expect("OpenBLAS is always measured");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "f32 {size}^3, {threads} thread(s), {pairs} rounds, {gap_ms} ms apart, OpenBLAS core {}, load {}",
        gemm_benches::openblas::core_name(),
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    if cpu {
        let total: f64 = busy.iter().flatten().sum();
        println!("time waiting for a CPU: {:.0}% of the time on one", 100.0 * waited / total);
    }
    println!(
        "{:<28}{:>14}{:>12}{:>14}{:>12}",
        "implementation", "GFLOP/s wall", "/OpenBLAS", "GFLOP/s CPU", "/OpenBLAS"
    );
    for (i, &imp) in impls.iter().enumerate() {
        let ratio = |v: &[Vec<f64>]| {
            let mut r: Vec<f64> = v[ob].iter().zip(&v[i]).map(|(o, x)| o / x).collect();
            median(&mut r)
        };
        let g = |v: &[Vec<f64>]| flops / median(&mut v[i].clone()) * 1e-9;
        print!("{:<28}{:>14.1}{:>12.3}", imp.name(Dtype::F32), g(&wall), ratio(&wall));
        if cpu {
            print!("{:>14.1}{:>12.3}", g(&busy), ratio(&busy));
        }
        println!();
    }
}
