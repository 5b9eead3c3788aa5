//! Each host path against `gemm_core::reference::check` where the CPU has it, and refused with a
//! clear error where it does not; forcing through `GEMM_HOST_PATH` (in a child process, since the
//! variable is read once per process). Tests that need a feature this CPU lacks check the refusal
//! instead and say so on stderr (`cargo test -- --nocapture` shows it), e.g. "amx: not run".

use gemm_core::problem::{Layout, Transpose};
use gemm_core::reference::check;
use gemm_core::{bf16, f16, Element, Error, Fp8E4M3, Fp8E5M2Fnuz, GemmProblem, MatMut, MatRef, Operand};
use gemm_host::cpu::CpuFeatures;
use gemm_host::dispatch::{self, Class, Path};
use gemm_host::{gemm, gemm_with, KernelChoice, Options};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random<T: Element>(rng: &mut ChaCha8Rng, len: usize) -> Vec<T> {
    (0..len).map(|_| T::from_f32(rng.gen_range(-2.0f32..2.0))).collect()
}

/// Runs `p` on seeded random data through `path` and checks it against the reference; returns C.
fn run<A: Element, B: Element, C: Element>(p: &GemmProblem, threads: usize, path: Path, seed: u64) -> Vec<C> {
    let p = p.with_elements::<A, B, C>();
    let spans = p.validate().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let a: Vec<A> = random(&mut rng, spans.a);
    let b: Vec<B> = random(&mut rng, spans.b);
    let c0: Vec<C> = random(&mut rng, spans.c);
    let mut c = c0.clone();
    let (av, bv, cv) = p.views(&a, &b, &mut c).unwrap();
    gemm_with(p.alpha, av, bv, p.beta, cv, &Options { threads, kernel: KernelChoice::Path(path) }).unwrap();
    let report = check(&p, &a, &b, &c0, &c, None).unwrap();
    assert!(
        report.passed(),
        "{path} {}x{}x{} {:?} {:?}/{:?} alpha {} beta {} {}x{}->{} threads {threads}: {report:?}",
        p.m,
        p.n,
        p.k,
        p.layout,
        p.trans_a,
        p.trans_b,
        p.alpha,
        p.beta,
        A::DTYPE,
        B::DTYPE,
        C::DTYPE
    );
    c
}

/// Every dtype combination of `class` through `path` on `p`.
fn class_dtypes(class: Class, p: &GemmProblem, threads: usize, path: Path, seed: u64) {
    match class {
        Class::F32 => {
            run::<f32, f32, f32>(p, threads, path, seed);
        }
        Class::F16 => {
            run::<f16, f16, f16>(p, threads, path, seed);
            run::<f16, f16, f32>(p, threads, path, seed);
        }
        Class::Bf16 => {
            run::<bf16, bf16, f32>(p, threads, path, seed);
            run::<bf16, bf16, bf16>(p, threads, path, seed);
            run::<Fp8E4M3, Fp8E4M3, bf16>(p, threads, path, seed);
            run::<Fp8E5M2Fnuz, Fp8E5M2Fnuz, f32>(p, threads, path, seed);
        }
    }
}

/// Shapes around every kernel's tile (32 x 12, 32 x 32), AMX's 32-deep k step and the f32/AMX k
/// blocks (128..=1024), every transpose, both layouts, padding, alpha/beta, 1-3 threads.
fn shapes() -> Vec<(GemmProblem, usize)> {
    let dims = [(33, 31, 17), (64, 64, 64), (70, 45, 95), (100, 37, 530), (31, 97, 1100)];
    let mut out = Vec::new();
    for (i, &(m, n, k)) in dims.iter().enumerate() {
        let layout = if i % 2 == 0 { Layout::RowMajor } else { Layout::ColMajor };
        let ta = if i % 3 == 1 { Transpose::Yes } else { Transpose::No };
        let tb = if i % 2 == 1 { Transpose::Yes } else { Transpose::No };
        let mut p = GemmProblem::new(m, n, k).with_layout(layout).with_transposes(ta, tb);
        if i == 2 {
            p = p.with_scalars(0.75, -0.5);
        }
        out.push((p, 1 + i % 3));
    }
    out
}

/// A path the CPU lacks must be refused with an error naming the missing feature, C untouched.
fn assert_refused(class: Class, path: Path, features: &CpuFeatures) {
    let (m, n, k) = (40, 40, 40);
    let mut c = vec![7.0f32; m * n];
    let cv = MatMut::new(&mut c, m, n, n, 1, Operand::C).unwrap();
    let opts = Options { threads: 2, kernel: KernelChoice::Path(path) };
    let err = match class {
        Class::F32 => {
            let a = vec![1.0f32; m * k];
            let av = MatRef::new(&a, m, k, k, 1, Operand::A).unwrap();
            let bv = MatRef::new(&a, k, n, n, 1, Operand::B).unwrap();
            gemm_with(1.0, av, bv, 0.0, cv, &opts).unwrap_err()
        }
        Class::F16 => {
            let a = vec![f16::ONE; m * k];
            let av = MatRef::new(&a, m, k, k, 1, Operand::A).unwrap();
            let bv = MatRef::new(&a, k, n, n, 1, Operand::B).unwrap();
            gemm_with(1.0, av, bv, 0.0, cv, &opts).unwrap_err()
        }
        Class::Bf16 => {
            let a = vec![bf16::ONE; m * k];
            let av = MatRef::new(&a, m, k, k, 1, Operand::A).unwrap();
            let bv = MatRef::new(&a, k, n, n, 1, Operand::B).unwrap();
            gemm_with(1.0, av, bv, 0.0, cv, &opts).unwrap_err()
        }
    };
    let Error::InvalidArgument(msg) = &err else { panic!("{path} on {class:?}: {err}") };
    let expected = dispatch::check(class, path, features).unwrap_err().to_string();
    assert_eq!(msg, &expected);
    assert!(c.iter().all(|&x| x == 7.0), "a refused call wrote C");
}

#[test]
fn every_path_agrees_with_the_reference_or_is_refused() {
    let features = CpuFeatures::detect();
    for class in Class::ALL {
        for &path in class.paths() {
            if path.missing(&features).is_some() {
                eprintln!(
                    "{path} for {}: not run: this CPU ({}) lacks it; checked the refusal",
                    class.name(),
                    features.names()
                );
                assert_refused(class, path, &features);
                continue;
            }
            for (i, (p, threads)) in shapes().into_iter().enumerate() {
                class_dtypes(class, &p, threads, path, i as u64);
            }
        }
    }
    // A path the class cannot use is refused on every CPU.
    assert_refused(Class::F32, Path::Amx, &features);
    assert_refused(Class::F16, Path::Faer, &features);
}

#[test]
fn amx_runs_where_the_cpu_has_it() {
    let features = CpuFeatures::detect();
    if !features.amx_bf16 {
        eprintln!(
            "amx: not run: this CPU ({}) has no usable AMX{}; checked that the path is refused",
            features.names(),
            features.amx_refused.map(|r| format!(" ({r})")).unwrap_or_default()
        );
        assert_refused(Class::Bf16, Path::Amx, &features);
        assert_ne!(dispatch::decide(Class::Bf16, &features, None).path, Path::Amx);
        return;
    }
    // AMX is the automatic bf16 path here, and agrees with the other bf16 paths.
    assert_eq!(dispatch::decide(Class::Bf16, &features, None).path, Path::Amx);
    for (m, n, k) in [(96, 72, 200), (130, 61, 777), (257, 300, 1025)] {
        let p = GemmProblem::new(m, n, k).with_transposes(Transpose::No, Transpose::Yes).with_scalars(1.0, 0.0);
        let amx = run::<bf16, bf16, f32>(&p, 3, Path::Amx, 4);
        for other in [Path::Avx512Bf16, Path::Avx512] {
            let slow = run::<bf16, bf16, f32>(&p, 1, other, 4);
            for (x, y) in amx.iter().zip(&slow) {
                assert!((x - y).abs() <= 1e-4 * (1.0 + y.abs()) * (k as f32).sqrt(), "{x} vs {y} ({other})");
            }
        }
    }
    // An f32 C accumulated in place by the tiles over several k blocks (alpha 1 with beta 0 or 1),
    // and beside it a beta the epilogue applies on the first block; ragged edges, both layouts.
    for (layout, beta) in [(Layout::RowMajor, 0.0), (Layout::ColMajor, 1.0), (Layout::RowMajor, 0.5)] {
        let p = GemmProblem::new(200, 170, 2100).with_layout(layout).with_scalars(1.0, beta);
        run::<bf16, bf16, f32>(&p, 3, Path::Amx, 11);
    }
    // Large enough for several k blocks and both thread splits.
    let p = GemmProblem::new(300, 200, 1500).with_layout(Layout::ColMajor).with_scalars(1.5, 0.25);
    run::<bf16, bf16, bf16>(&p, 4, Path::Amx, 9);
    run::<Fp8E4M3, Fp8E4M3, f32>(&p, 4, Path::Amx, 9);
}

/// The child half of `the_automatic_choice_is_what_dispatch_reports`: does nothing unless the
/// parent set `GEMM_SUMMARY_CHILD` to what the f32 lines must say (`rule`, `tuned`, `stored`).
/// Runs one 600^3 f32 GEMM (the 512 class) on the automatic path, then checks `summary(2)` line by
/// line.
#[test]
fn summary_child() {
    let Ok(expect) = std::env::var("GEMM_SUMMARY_CHILD") else { return };
    let features = CpuFeatures::detect();
    let p = GemmProblem::new(600, 600, 600);
    let mut c = vec![0f32; 600 * 600];
    let (a, b) = (vec![0.5f32; 600 * 600], vec![0.25f32; 600 * 600]);
    let (av, bv, cv) = p.views(&a, &b, &mut c).unwrap();
    let t = std::time::Instant::now();
    gemm(1.0, av, bv, 0.0, cv, 2).unwrap();
    let first = t.elapsed();
    assert!(c.iter().all(|&x| x == 75.0));
    // Without GEMM_HOST_TUNE nothing is measured, so `gemm devices` answers at once.
    let t = std::time::Instant::now();
    let lines = dispatch::summary(2);
    let summary_time = t.elapsed();
    eprintln!("first 600^3 call {first:?}, summary {summary_time:?}:\n{}", lines.join("\n"));
    let f32_lines = if dispatch::f32_needs_measurement(&features) { dispatch::F32_CLASSES.len() } else { 1 };
    assert_eq!(lines.len(), f32_lines + 2, "{lines:?}");
    let classes = std::iter::repeat_n(Class::F32, f32_lines).chain([Class::Bf16, Class::F16]);
    for (i, (class, line)) in classes.zip(&lines).enumerate() {
        let path = Path::ALL.into_iter().find(|p| line.split_whitespace().nth(2) == Some(p.name())).unwrap();
        assert_eq!(dispatch::check(class, path, &features), Ok(path), "{line}");
        if class != Class::F32 || !dispatch::f32_needs_measurement(&features) {
            assert_eq!(dispatch::decide(class, &features, None).path, path, "{line}");
            continue;
        }
        let c = dispatch::F32_CLASSES[i];
        let (m, n, k) = c.shape;
        let measured =
            format!("calls of about {}^3 on 2 threads, measured ({m}x{n}x{k}, median of {} pairs)", c.side, c.rounds);
        match expect.as_str() {
            // A fresh machine: the rule, not measured.
            "rule" => {
                assert!(path == Path::Avx512 && line.contains("the rule") && !line.contains("median of"), "{line}")
            }
            // GEMM_HOST_TUNE=1: the 512 class at the call above, the others by `summary` itself.
            "tuned" => assert!(line.contains(&measured) && line.contains("[measured now"), "{line}"),
            // A later process: every class from the store, nothing measured again.
            "stored" => assert!(line.contains(&measured) && line.contains("[stored in"), "{line}"),
            _ => panic!("{expect}: {line}"),
        }
    }
    // One choice per (threads, size class) per process: a second summary repeats the first.
    assert_eq!(dispatch::summary(2), lines);
}

#[test]
fn the_automatic_choice_is_what_dispatch_reports() {
    // Each case in a child process, since the environment is read once per process; the cache is
    // a fresh directory, so what the user's own cache holds cannot change the outcome.
    let dir = std::env::temp_dir().join(format!("gemm-host-summary-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let exe = std::env::current_exe().unwrap();
    let child = |tune: bool, expect: &str| {
        let mut cmd = std::process::Command::new(&exe);
        cmd.args(["--exact", "summary_child", "--test-threads", "1", "--nocapture"])
            .env("GEMM_SUMMARY_CHILD", expect)
            .env("GEMM_HOST_CACHE_DIR", &dir)
            .env_remove("GEMM_HOST_PATH")
            .env_remove("GEMM_HOST_TUNE");
        if tune {
            cmd.env("GEMM_HOST_TUNE", "1");
        }
        let out = cmd.output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{expect}: {text}");
        text
    };
    // A fresh machine: the rule, nothing measured, nothing stored.
    child(false, "rule");
    assert!(!dir.join(gemm_host::cache::FILE).exists());
    if !dispatch::f32_needs_measurement(&CpuFeatures::detect()) {
        return eprintln!("f32 tuning: not run (no AVX-512F: faer serves f32 without a measurement)");
    }
    // GEMM_HOST_TUNE=1 measures at first use and stores; the next process reads it.
    child(true, "tuned");
    let stored = std::fs::read_to_string(dir.join(gemm_host::cache::FILE)).unwrap();
    assert_eq!(gemm_host::cache::parse(&stored).len(), dispatch::F32_CLASSES.len(), "{stored}");
    child(false, "stored");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The child half of `forcing_through_the_environment`: does nothing unless the parent set
/// `GEMM_HOST_PATH_CHILD` (`ok`, or `refused:<text the error must contain>`). It runs a bf16 and
/// an f32 GEMM (the forcing string names paths for either class or both).
#[test]
fn forced_child() {
    let Ok(expect) = std::env::var("GEMM_HOST_PATH_CHILD") else { return };
    let (m, n, k) = (64, 48, 80);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let bf = GemmProblem::new(m, n, k).with_elements::<bf16, bf16, f32>();
    let (a16, b16): (Vec<bf16>, Vec<bf16>) = (random(&mut rng, m * k), random(&mut rng, k * n));
    let fp = GemmProblem::new(m, n, k).with_elements::<f32, f32, f32>();
    let (a32, b32): (Vec<f32>, Vec<f32>) = (random(&mut rng, m * k), random(&mut rng, k * n));
    let mut c16 = vec![3.0f32; m * n];
    let mut c32 = vec![3.0f32; m * n];
    let (av, bv, cv) = bf.views(&a16, &b16, &mut c16).unwrap();
    let bf_result = gemm(1.0, av, bv, 0.0, cv, 2);
    let (av, bv, cv) = fp.views(&a32, &b32, &mut c32).unwrap();
    let f32_result = gemm(1.0, av, bv, 0.0, cv, 2);
    match expect.split_once(':') {
        None => {
            assert_eq!(expect, "ok");
            bf_result.unwrap();
            f32_result.unwrap();
            assert!(check(&bf, &a16, &b16, &vec![0.0; m * n], &c16, None).unwrap().passed());
            assert!(check(&fp, &a32, &b32, &vec![0.0; m * n], &c32, None).unwrap().passed());
        }
        Some((_, why)) => {
            // Every class is refused alike (the variable is wrong, whatever the call).
            for (result, c) in [(bf_result, &c16), (f32_result, &c32)] {
                let err = result.unwrap_err().to_string();
                assert!(err.contains("GEMM_HOST_PATH") && err.contains(why), "{err}");
                assert!(c.iter().all(|&x| x == 3.0), "a refused call wrote C");
            }
            let x = vec![1.0f32; 4];
            let mut y = vec![5.0f32; 4];
            let xv = MatRef::new(&x, 2, 2, 2, 1, Operand::A).unwrap();
            let yv = MatMut::new(&mut y, 2, 2, 2, 1, Operand::C).unwrap();
            assert!(matches!(gemm(1.0, xv, xv, 0.0, yv, 1), Err(Error::InvalidArgument(_))));
            assert_eq!(y, [5.0; 4]);
        }
    }
}

#[test]
fn forcing_through_the_environment() {
    let features = CpuFeatures::detect();
    let exe = std::env::current_exe().unwrap();
    let child = |spec: &str, expect: &str| {
        let out = std::process::Command::new(&exe)
            .args(["--exact", "forced_child", "--test-threads", "1", "--nocapture"])
            .env("GEMM_HOST_PATH", spec)
            .env("GEMM_HOST_PATH_CHILD", expect)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "GEMM_HOST_PATH={spec} ({expect}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    // The portable path and faer exist everywhere; the others only where the CPU has them. Every
    // path of every class is forced once: run where the CPU has it, refused where not.
    child("bf16:portable,f32:faer", "ok");
    child("f32:portable,f16:portable", "ok");
    for (class, path) in [(Class::Bf16, Path::Amx), (Class::Bf16, Path::Avx512Bf16), (Class::Bf16, Path::Avx512)]
        .into_iter()
        .chain([(Class::F32, Path::Avx512), (Class::F16, Path::Avx512)])
    {
        let spec = format!("{}:{path}", class.name());
        if path.missing(&features).is_some() {
            eprintln!("{spec}: refused on this CPU ({})", features.names());
            child(&spec, "refused:lacks");
        } else {
            child(&spec, "ok");
        }
    }
    // A malformed value is refused too.
    child("bf16:tensor-cores", "refused:unknown path `tensor-cores`");
    child("f32:amx", "refused:cannot compute f32");
}
