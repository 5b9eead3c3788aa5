//! The calibration set (issue 10 item 5; `tests/data/calibration/`, `src/calibration.rs`):
//! foreign kernels with published MI355X speeds. Here they must load, rebuild byte for byte
//! from their sources, and compute the right GEMM in the emulator on a small size, checked
//! against gemm-core's reference (fp8 decoded exactly, f64 sums), under every scheduling
//! mode, with no race, wait or hazard finding.

mod common;
use common::*;
use gemm_codeobject::metadata::ValueKind;
use gemm_core::dtype::{DType, Element};
use gemm_core::fp8::Fp8E4M3;
use gemm_core::problem::{GemmProblem, Transpose};
use gemm_core::reference::{check, random_values};
use gemm_emu::calibration::{self, Expect, Kernel};
use gemm_emu::{Checker, Device, LaunchOptions};
use half::{bf16, f16};
use std::time::Instant;

fn set() -> Vec<Kernel> {
    calibration::load_dir(&calibration::default_dir()).expect("calibration manifests load")
}

#[test]
fn calibration_manifests_are_complete() {
    let set = set();
    assert!(set.len() >= 6, "only {} calibration kernels", set.len());
    let dir = calibration::default_dir();
    let mut speeds = Vec::new();
    for k in &set {
        assert_eq!(k.manifest.file_stem().unwrap().to_str().unwrap(), k.name, "manifest name");
        for s in &k.sources {
            assert!(dir.join(s).is_file(), "{}: source {} missing", k.name, s.display());
        }
        for co in &k.code_objects {
            let bytes = std::fs::read(&co.path).unwrap_or_else(|e| panic!("{}: {}: {e}", k.name, co.path.display()));
            let obj = gemm_codeobject::CodeObject::parse(&bytes).unwrap();
            let kern = obj
                .kernel(&co.symbol)
                .unwrap_or_else(|| panic!("{}: {} has no kernel {}", k.name, co.path.display(), co.symbol));
            // The manifest's arguments are the code object's explicit ones: same offsets,
            // sizes, and pointers where the metadata has global buffers. A struct passed by
            // value (HipKittens' global layouts) is the run of manifest arguments, its fields
            // and padding, that fills it exactly.
            let meta = kern.metadata.as_ref().expect("code object v5 metadata");
            let explicit: Vec<_> = meta.args.iter().filter(|a| !matches!(a.value_kind, ValueKind::Hidden(_))).collect();
            let ours: Vec<_> = k.launch.args.iter().zip(k.arg_layout()).collect();
            let mut i = 0;
            for m in &explicit {
                let (mo, ms) = (m.offset as usize, m.size as usize);
                let &(arg, (at, size)) =
                    ours.get(i).unwrap_or_else(|| panic!("{}: too few arguments for {}", k.name, co.path.display()));
                assert_eq!(at, mo, "{}: argument {arg:?} offset", k.name);
                let ptr = matches!(arg, calibration::Arg::Ptr(_));
                if size == ms {
                    assert_eq!(
                        ptr,
                        m.value_kind == ValueKind::GlobalBuffer,
                        "{}: argument {arg:?} is {:?}",
                        k.name,
                        m.value_kind
                    );
                    i += 1;
                    continue;
                }
                assert_eq!(m.value_kind, ValueKind::ByValue, "{}: argument {arg:?}: {size} bytes, not {ms}", k.name);
                let mut end = mo;
                while let Some(&(_, (at, size))) = ours.get(i).filter(|(_, (at, _))| *at < mo + ms) {
                    end = at + size;
                    i += 1;
                }
                assert_eq!(end, mo + ms, "{}: the fields of the struct at {mo} end at {end}, not {}", k.name, mo + ms);
            }
            assert_eq!(i, ours.len(), "{}: argument count vs {}", k.name, co.path.display());
            // LDS per workgroup: 160 KiB on gfx950, 64 KiB on gfx942 (TIMING.md, ARCH.md).
            let lds = meta.group_segment_fixed_size + k.launch.dynamic_lds;
            let cap = gemm_emu::timing::Params::for_arch(k.arch).lds_bytes_per_cu;
            assert!(lds <= cap, "{}: {lds} bytes of LDS", k.name);
            let threads: u32 = k.launch.block.iter().product();
            assert!(threads <= meta.max_flat_workgroup_size, "{}: block {threads} threads", k.name);
        }
        // Every published size and the test size have a code object.
        for p in &k.published {
            k.code_object(p.m, p.n, p.k).unwrap();
            speeds.push(p.tflops);
            // Where the source prints the time too, the two agree (a transcription check).
            if let Some(ms) = p.time_ms {
                let tf = Kernel::flops(p.m, p.n, p.k) / (ms * 1e-3) / 1e12;
                assert!((tf / p.tflops - 1.0).abs() < 0.01, "{}: {ms} ms is {tf:.2} TFLOP/s, not {}", k.name, p.tflops);
            }
        }
        k.code_object(k.test.m, k.test.n, k.test.k).unwrap();
    }
    // A point printed but not scored (`not_scored`: the figure is another kernel's) is scored
    // on that kernel: some other kernel of the set has the same size and figure, scored.
    for k in &set {
        for p in k.published.iter().filter(|p| !p.scored()) {
            let owner = set.iter().find(|o| {
                o.name != k.name
                    && o.published
                        .iter()
                        .any(|q| q.scored() && (q.m, q.n, q.k) == (p.m, p.n, p.k) && q.tflops == p.tflops)
            });
            assert!(owner.is_some(), "{}: {}x{}x{} not scored, and scored on no other kernel", k.name, p.m, p.n, p.k);
        }
    }
    let (lo, hi) = speeds.iter().fold((f64::MAX, 0f64), |(l, h), &s| (l.min(s), h.max(s)));
    assert!(hi / lo >= 10.0, "published speeds span only {lo}..{hi} TFLOP/s");
}

/// The kernels clang-22 builds alone must rebuild byte for byte; the ones that need Python
/// (the ping-pong kernel through ROCm 7.1.0's LLVM, the Gluon kernels through Triton) are
/// checked by `build.sh --check` with those packages installed (the test suite needs none).
#[test]
fn calibration_code_objects_rebuild_byte_identical() {
    let script = calibration::default_dir().join("build.sh");
    let out = std::process::Command::new("bash")
        .args([script.as_os_str(), "--check".as_ref(), "--clang-only".as_ref()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} --check --clang-only failed (needs clang-22):\n{}{}",
        script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs one kernel on its test size with seeded inputs; returns a summary, or the failure.
/// Checker findings fail the run unless they are the manifest's known races (then they are
/// counted in the summary).
fn run_kernel<A: Element, B: Element, C: Element>(k: &Kernel) -> Result<String, String> {
    let tolerated = |r: &gemm_emu::LaunchReport| match &k.test.expect {
        Expect::KnownRaces(what) => {
            r.reports.iter().all(|f| f.checker == Checker::Race && f.to_string().contains(what.as_str()))
        }
        Expect::KnownFindings(texts) => {
            r.reports.iter().all(|f| texts.iter().any(|t| f.to_string().contains(t.as_str())))
        }
        _ => r.reports.is_empty(),
    };
    let (m, n, k_) = (k.test.m, k.test.n, k.test.k);
    let a: Vec<A> = random_values(m * k_, 0xA11CE + m as u64);
    let b: Vec<B> = random_values(n * k_, 0xB0B + n as u64);
    let mut summary = Vec::new();
    for s in schedules(&[17]) {
        let dev = Device::new(k.arch);
        let pa = upload(&dev, bytemuck::cast_slice(&a));
        let pb = upload(&dev, bytemuck::cast_slice(&b));
        let c_bytes = k.buffer_bytes(m, n, k_)[2];
        let pc = upload(&dev, &vec![0u8; c_bytes]);
        let plan = k.plan(m, n, k_, pa, pb, pc).map_err(|e| e.to_string())?;
        let opts = LaunchOptions { dynamic_lds: plan.dynamic_lds, ..opts(s) };
        let t = Instant::now();
        let r = dev
            .launch_with(&plan.code_object, &plan.symbol, plan.grid, plan.block, &plan.kernarg, &opts)
            .map_err(|e| format!("{} {s:?}: launch: {e}", k.name))?;
        let races = r.by_checker(Checker::Race).len();
        let hazards = r.by_checker(Checker::Hazard).len();
        let waits = r.by_checker(Checker::Wait).len();
        if !tolerated(&r) {
            return Err(format!(
                "{} {s:?}: checker findings (race {races}, hazard {hazards}, wait {waits}):\n{r}",
                k.name
            ));
        }
        let c: Vec<C> = bytemuck::cast_slice(&download(&dev, pc, c_bytes)).to_vec();
        let p = GemmProblem::new(m, n, k_).with_transposes(Transpose::No, Transpose::Yes).with_elements::<A, B, C>();
        let rep = check(&p, &a, &b, &vec![C::default(); m * n], &c, None).map_err(|e| e.to_string())?;
        if k.test.wrong_result_modes.contains(&s.mode) {
            // The kernel's own race, made visible by this mode: the result must be wrong.
            if rep.passed() || r.reports.is_empty() {
                return Err(format!(
                    "{} {s:?}: right result or no finding in a mode the manifest says makes it wrong (wrong_result_modes is stale)",
                    k.name
                ));
            }
            summary.push(format!(
                "{:?}: wrong as expected (its race), max err ratio {:.0}, races {races}, hazards {hazards}",
                s.mode, rep.max_err_ratio
            ));
            continue;
        }
        if !rep.passed() {
            return Err(format!("{} {s:?}: wrong result vs reference: {rep:?}", k.name));
        }
        if matches!(k.test.expect, Expect::KnownRaces(_)) && races == 0 {
            return Err(format!("{} {s:?}: no race reported: the manifest's known-races is stale", k.name));
        }
        if matches!(k.test.expect, Expect::KnownFindings(_)) && r.reports.is_empty() {
            return Err(format!("{} {s:?}: no finding: the manifest's known-findings is stale", k.name));
        }
        summary.push(format!(
            "{:?}: {:.1}s, {} waves, {} MFMA, races {races}, hazards {hazards}, waits {waits}, max err ratio {:.3}",
            s.mode,
            t.elapsed().as_secs_f64(),
            r.waves,
            r.counts.mfma,
            rep.max_err_ratio
        ));
    }
    Ok(summary.join("; "))
}

fn run(k: &Kernel) -> Result<String, String> {
    match (k.dtype.a, k.dtype.b, k.dtype.c) {
        (DType::Fp8E4M3, DType::Fp8E4M3, DType::Bf16) => run_kernel::<Fp8E4M3, Fp8E4M3, bf16>(k),
        (DType::F16, DType::F16, DType::F16) => run_kernel::<f16, f16, f16>(k),
        (DType::Bf16, DType::Bf16, DType::Bf16) => run_kernel::<bf16, bf16, bf16>(k),
        (a, b, c) => Err(format!("{}: dtypes {a}/{b}/{c} not wired into this test", k.name)),
    }
}

/// Runs the named kernel and holds it to its manifest's `test.expect`.
fn check_kernel(name: &str) {
    let set = set();
    let k = set.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("no calibration kernel {name}"));
    let t = Instant::now();
    let got = run(k);
    match (&k.test.expect, got) {
        (Expect::Pass | Expect::KnownRaces(_) | Expect::KnownFindings(_), Ok(summary)) => {
            eprintln!("{name} {}x{}x{}: {summary} (total {:.1}s)", k.test.m, k.test.n, k.test.k, t.elapsed().as_secs_f64())
        }
        (Expect::Pass | Expect::KnownRaces(_) | Expect::KnownFindings(_), Err(e)) => panic!("{e}"),
        (Expect::Unsupported(why), Err(e)) => {
            assert!(e.contains(why.as_str()), "{name}: expected a refusal mentioning `{why}`, got: {e}");
            eprintln!("{name}: refused as the manifest expects ({why}): {e}");
        }
        (Expect::Unsupported(why), Ok(s)) => panic!(
            "{name} now runs correctly ({s}); its manifest still expects `unsupported: {why}`: set test.expect = \"pass\""
        ),
    }
}

#[test]
fn calibration_blog_naive_matches_reference() {
    check_kernel("blog_naive");
}

#[test]
fn calibration_lds_tiled_per_wave_matches_reference() {
    check_kernel("lds_tiled_per_wave");
}

#[test]
fn calibration_blog_pingpong_matches_reference() {
    check_kernel("blog_pingpong");
}

#[test]
fn calibration_gluon_v0_naive_matches_reference() {
    check_kernel("v0_naive");
}

#[test]
fn calibration_gluon_v2_async_copy_matches_reference() {
    check_kernel("v2_async_copy");
}

#[test]
fn calibration_gluon_v3_lds_padding_matches_reference() {
    check_kernel("v3_lds_padding");
}

#[test]
fn calibration_gluon_v4_global_prefetch_matches_reference() {
    check_kernel("v4_global_prefetch");
}

#[test]
fn calibration_gluon_v5_local_prefetch_matches_reference() {
    check_kernel("v5_local_prefetch");
}

/// HipKittens' bf16 GEMM, the 128 x 128 tile of its 1024^3 and 2048^3 builds
/// (kernel_1024.cpp at 256^3: 4 workgroups, 2 rounds of its loop, then its tail).
#[test]
fn calibration_hipkittens_bf16_128_matches_reference() {
    check_kernel("hk_bf16_128");
}

/// HipKittens' bf16 GEMM, the 256 x 256 tile of its 4096^3..16384^3 builds (kernel_8192.cpp
/// at 512^3: 4 workgroups, 3 rounds of its loop of two K steps of 64, then its tail).
#[test]
fn calibration_hipkittens_bf16_256_matches_reference() {
    check_kernel("hk_bf16_256");
}

/// HipKittens' 8-wave fp8 GEMM (256 x 256 x 128 tile) at 512^3: 4 workgroups.
#[test]
fn calibration_hipkittens_fp8_8wave_matches_reference() {
    check_kernel("hk_fp8_8wave");
}

/// HipKittens' 4-wave fp8 GEMM (256 x 256 x 128 tile) at 512 x 1024 x 512: 8 workgroups (its
/// XCD remap needs a multiple of 8).
#[test]
fn calibration_hipkittens_fp8_4wave_matches_reference() {
    check_kernel("hk_fp8_4wave");
}

/// vLLM's wvSplitK (gfx942, f16, M = 1) at N = 10944, K = 1536 on the CU-count grid: 10
/// waves per workgroup (vLLM's mindiv), two rounds of the persistent loop (6080 rows per
/// round), and a K that ends in the middle of an unrolled step (1536 = 1.5 x 1024).
#[test]
fn calibration_vllm_wvsplitk_matches_reference() {
    check_kernel("vllm_wvsplitk");
}

#[test]
fn every_calibration_kernel_has_a_test() {
    let src = include_str!("calibration.rs");
    for k in set() {
        assert!(src.contains(&format!("check_kernel(\"{}\")", k.name)), "no test runs calibration kernel {}", k.name);
    }
}
