//! `cargo run --release -p gemm-benches --bin gemm-bench -- [--sizes 1024,2048,4096] [--threads N]
//! [--quick] [--rounds R] [--impls host,own,alt,openblas,...]`
//!
//! Square GEMMs, every implementation on the same data in this one process, interleaved per size
//! so that a noisy moment hurts all of them alike. Each timing is the best of N after a warm-up;
//! `--rounds R` repeats the whole sweep R times and keeps each implementation's best, which on a
//! shared machine filters out bursts of other load for all implementations alike.
//! Prints the CPU, the path gemm-host chose for each input class and why, GFLOP/s with the ratio to
//! OpenBLAS, the bf16/f32 ratio of gemm-host, and writes `target/gemm-bench.csv` and
//! `target/gemm-bench.svg` (GFLOP/s against size). Threads default to the machine's
//! (`available_parallelism`). A path the CPU lacks (`alt` on bf16 without AVX512_BF16) prints n/a.

use gemm_benches::{set_threads, Dtype, Impl, Problem};
use std::fmt::Write as _;
use std::time::Instant;

struct Args {
    sizes: Vec<usize>,
    threads: usize,
    quick: bool,
    rounds: usize,
    impls: Vec<Impl>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        sizes: vec![256, 512, 1024, 2048, 4096],
        threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
        quick: false,
        rounds: 1,
        impls: Impl::ALL.to_vec(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--sizes" => {
                let v = it.next().ok_or("--sizes needs a value")?;
                args.sizes = v
                    .split(',')
                    .map(|s| s.trim().parse().map_err(|e| format!("size `{s}`: {e}")))
                    .collect::<Result<_, _>>()?;
            }
            "--threads" => {
                let v = it.next().ok_or("--threads needs a value")?;
                args.threads = v.parse().map_err(|e| format!("threads `{v}`: {e}"))?;
            }
            "--impls" => {
                let v = it.next().ok_or("--impls needs a value")?;
                args.impls = v
                    .split(',')
                    .map(|s| match s {
                        "host" => Ok(Impl::Host),
                        "own" => Ok(Impl::HostF32Panels),
                        "alt" => Ok(Impl::HostAlt),
                        "openblas" => Ok(Impl::OpenBlas),
                        "matrixmultiply" => Ok(Impl::MatrixMultiply),
                        "ndarray" => Ok(Impl::Ndarray),
                        other => Err(format!(
                            "unknown implementation `{other}` (host, own, alt, openblas, matrixmultiply, ndarray)"
                        )),
                    })
                    .collect::<Result<_, _>>()?;
                if !args.impls.contains(&Impl::OpenBlas) {
                    args.impls.push(Impl::OpenBlas);
                }
            }
            "--rounds" => {
                let v = it.next().ok_or("--rounds needs a value")?;
                args.rounds = v.parse::<usize>().map_err(|e| format!("rounds `{v}`: {e}"))?.max(1);
            }
            "--quick" => args.quick = true,
            "-h" | "--help" => {
                println!("gemm-bench [--sizes 1024,2048,4096] [--threads N (default: all CPUs)] [--quick] [--rounds 1] [--impls host,own,alt,openblas,matrixmultiply,ndarray]");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}` (try --help)")),
        }
    }
    if args.quick && args.sizes.len() == 5 {
        args.sizes = vec![256, 1024, 2048];
    }
    Ok(args)
}

/// Best wall time of `reps` runs after one warm-up run; `None` if the implementation refuses.
fn best_of(reps: usize, mut f: impl FnMut() -> Result<(), gemm_core::Error>) -> Option<f64> {
    f().ok()?;
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f().ok()?;
        best = best.min(t.elapsed().as_secs_f64());
    }
    Some(best)
}

struct Row {
    dtype: Dtype,
    imp: Impl,
    size: usize,
    seconds: f64,
    gflops: f64,
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("gemm-bench: {e}");
            std::process::exit(2);
        }
    };
    set_threads(args.threads);
    println!(
        "gemm-bench: square C = A*B, row-major, {} threads, best of N after warm-up, {} round(s)",
        args.threads, args.rounds
    );
    println!("CPU: {} ({})", gemm_benches::cpu_model(), gemm_host::cpu::CpuFeatures::detect().names());
    println!("OpenBLAS core: {} (OPENBLAS_CORETYPE overrides)", gemm_benches::openblas::core_name());
    println!("gemm-host paths ({} threads):", args.threads);
    for line in gemm_host::dispatch::summary(args.threads) {
        println!("  {line}");
    }
    let mut rows: Vec<Row> = Vec::new();
    for _ in 0..args.rounds {
        for &size in &args.sizes {
            let mut p = Problem::new(size, size, size, size as u64);
            let reps = match (args.quick, size) {
                (true, s) if s >= 2048 => 2,
                (true, _) => 3,
                (false, s) if s >= 4096 => 3,
                (false, s) if s >= 2048 => 5,
                _ => 10,
            };
            for dtype in [Dtype::F32, Dtype::Bf16] {
                for &imp in &args.impls {
                    let Some(seconds) = best_of(reps, || p.run(imp, dtype, args.threads)) else {
                        continue;
                    };
                    match rows.iter_mut().find(|r| r.dtype == dtype && r.imp == imp && r.size == size) {
                        Some(r) if r.seconds <= seconds => {}
                        Some(r) => {
                            r.seconds = seconds;
                            r.gflops = p.flops() / seconds * 1e-9;
                        }
                        None => rows.push(Row { dtype, imp, size, seconds, gflops: p.flops() / seconds * 1e-9 }),
                    }
                }
            }
        }
    }

    let openblas = |dtype: Dtype, size: usize| {
        rows.iter().find(|r| r.dtype == dtype && r.size == size && r.imp == Impl::OpenBlas).map(|r| r.gflops)
    };
    let mut csv = String::from("dtype,implementation,size,seconds,gflops,ratio_to_openblas\n");
    for dtype in [Dtype::F32, Dtype::Bf16] {
        println!("\n{} (GFLOP/s, ratio to OpenBLAS f32 sgemm)", dtype.name());
        print!("{:<28}", "implementation");
        for s in &args.sizes {
            print!("{:>18}", s);
        }
        println!();
        for &imp in &args.impls {
            print!("{:<28}", imp.name(dtype));
            for &size in &args.sizes {
                let Some(r) = rows.iter().find(|r| r.dtype == dtype && r.size == size && r.imp == imp) else {
                    print!("{:>18}", "n/a");
                    continue;
                };
                let ratio = r.gflops / openblas(dtype, size).expect("OpenBLAS is always measured");
                print!("{:>10.1} ({:>4.2}x)", r.gflops, ratio);
                let _ = writeln!(
                    csv,
                    "{},{},{},{:.6},{:.2},{:.3}",
                    dtype.name(),
                    imp.name(dtype),
                    size,
                    r.seconds,
                    r.gflops,
                    ratio
                );
            }
            println!();
        }
    }
    if args.impls.contains(&Impl::Host) {
        print!("\n{:<28}", "gemm-host bf16 / f32");
        for &size in &args.sizes {
            let g = |d| {
                rows.iter().find(|r| r.dtype == d && r.size == size && r.imp == Impl::Host).expect("measured").gflops
            };
            print!("{:>17.2}x", g(Dtype::Bf16) / g(Dtype::F32));
        }
        println!();
    }

    let dir = target_dir();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        match std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, text)) {
            Ok(()) => println!("wrote {}", path.display()),
            Err(e) => eprintln!("gemm-bench: cannot write {}: {e}", path.display()),
        }
    };
    write("gemm-bench.csv", &csv);
    write("gemm-bench.svg", &svg(&rows, &args));
}

/// `$CARGO_TARGET_DIR`, else the workspace's `target/`.
fn target_dir() -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return dir.into();
    }
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("target")
}

/// A hand-written SVG: one panel per dtype, GFLOP/s against size (log2 axis), one line per
/// implementation.
fn svg(rows: &[Row], args: &Args) -> String {
    const COLOURS: [&str; 6] = ["#d62728", "#ff7f0e", "#8c564b", "#1f77b4", "#2ca02c", "#9467bd"];
    let (pw, ph, margin) = (520.0, 360.0, 60.0);
    let width = 2.0 * (pw + margin) + margin;
    let height = ph + 2.0 * margin + 20.0 * args.impls.len() as f64;
    let ymax = rows.iter().map(|r| r.gflops).fold(1.0, f64::max) * 1.1;
    let (smin, smax) =
        args.sizes.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &s| (lo.min(s as f64), hi.max(s as f64)));
    let xspan = (smax.log2() - smin.log2()).max(1.0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for (panel, dtype) in [Dtype::F32, Dtype::Bf16].into_iter().enumerate() {
        let x0 = margin + panel as f64 * (pw + margin);
        let y0 = margin;
        let px = |s: usize| x0 + ((s as f64).log2() - smin.log2()) / xspan * pw;
        let py = |g: f64| y0 + ph - g / ymax * ph;
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="14">{} GEMM, {} threads (GFLOP/s)</text>"#,
            x0 + pw / 2.0,
            y0 - 20.0,
            dtype.name(),
            args.threads
        );
        let _ = writeln!(out, r#"<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#);
        for tick in 0..=5 {
            let g = ymax * tick as f64 / 5.0;
            let y = py(g);
            let _ = writeln!(
                out,
                r##"<line x1="{x0}" y1="{y}" x2="{}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{g:.0}</text>"##,
                x0 + pw,
                x0 - 5.0,
                y + 4.0
            );
        }
        for &s in &args.sizes {
            let _ = writeln!(out, r#"<text x="{}" y="{}" text-anchor="middle">{s}</text>"#, px(s), y0 + ph + 16.0);
        }
        for (i, &imp) in args.impls.iter().enumerate() {
            let colour = COLOURS[i % COLOURS.len()];
            let mut pts: Vec<(usize, f64)> =
                rows.iter().filter(|r| r.dtype == dtype && r.imp == imp).map(|r| (r.size, r.gflops)).collect();
            pts.sort_by_key(|p| p.0);
            let path: Vec<String> = pts.iter().map(|&(s, g)| format!("{:.1},{:.1}", px(s), py(g))).collect();
            let _ = writeln!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
                path.join(" ")
            );
            for &(s, g) in &pts {
                let _ = writeln!(out, r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"/>"#, px(s), py(g));
            }
            let ly = y0 + ph + 40.0 + 20.0 * i as f64;
            let _ = writeln!(
                out,
                r#"<line x1="{x0}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="2"/><text x="{}" y="{}">{}</text>"#,
                x0 + 25.0,
                x0 + 32.0,
                ly + 4.0,
                imp.name(dtype)
            );
        }
    }
    out.push_str("</svg>\n");
    out
}
