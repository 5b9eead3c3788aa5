//! Kernels compiled by clang-22 from tests/hip/, run under every scheduling mode and
//! several seeds, compared with CPU answers.

mod common;
use common::*;
use gemm_emu::{Arch, Device};
use rand::{Rng, SeedableRng};

#[test]
fn vector_add_matches_cpu_on_both_archs() {
    for arch in Arch::ALL {
        let co = hip("vadd", arch, &[]);
        for s in schedules(&[1, 2]) {
            let dev = Device::new(arch);
            let n = 1000usize; // not a multiple of 256: the last workgroup is partly idle
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(s.seed);
            let a: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let b: Vec<f32> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let (pa, pb) = (upload(&dev, &bytes_f32(&a)), upload(&dev, &bytes_f32(&b)));
            let pc = dev.alloc(4 * n as u64).unwrap();
            let args = Args::new().ptr(pa).ptr(pb).ptr(pc).u32(n as u32);
            let r = dev.launch_with(&co, "vadd", [4, 1, 1], [256, 1, 1], &args.0, &opts(s)).unwrap();
            assert_clean(&r);
            let c = f32s(&download(&dev, pc, 4 * n));
            for i in 0..n {
                assert_eq!(c[i], a[i] + b[i], "{arch} {s:?} element {i}");
            }
            assert!(r.counts.vmem_load >= 2 && r.counts.vmem_store >= 1, "{}", r.counts);
        }
    }
}

fn run_reduce(arch: Arch, defines: &[&str], s: gemm_emu::Schedule) -> (Vec<f32>, Vec<f32>, gemm_emu::LaunchReport) {
    let co = hip("reduce", arch, defines);
    let dev = Device::new(arch);
    let groups = 3usize;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(s.seed);
    // Small integers: every summation order gives the exact sum.
    let x: Vec<f32> = (0..256 * groups).map(|_| rng.gen_range(-8i32..8) as f32).collect();
    let pin = upload(&dev, &bytes_f32(&x));
    let pout = dev.alloc(4 * groups as u64).unwrap();
    let args = Args::new().ptr(pin).ptr(pout);
    let r = dev.launch_with(&co, "reduce", [groups as u32, 1, 1], [256, 1, 1], &args.0, &opts(s)).unwrap();
    let got = f32s(&download(&dev, pout, 4 * groups));
    let want = (0..groups).map(|g| x[g * 256..(g + 1) * 256].iter().sum()).collect();
    (got, want, r)
}

#[test]
fn lds_reduction_with_barriers_is_right_and_race_free() {
    for arch in Arch::ALL {
        for s in schedules(&[3, 4]) {
            let (got, want, r) = run_reduce(arch, &[], s);
            assert_clean(&r);
            assert_eq!(got, want, "{arch} {s:?}");
            assert!(r.counts.barrier > 0 && r.counts.ds > 0);
        }
    }
}

#[test]
fn lds_reduction_without_barriers_is_caught() {
    for arch in Arch::ALL {
        let mut wrong = 0;
        for s in schedules(&[5]) {
            let (got, want, r) = run_reduce(arch, &["NO_BARRIER"], s);
            let races = r.by_checker(gemm_emu::Checker::Race);
            assert!(!races.is_empty(), "{arch} {s:?}: race detector silent on the barrier-less reduction\n{r}");
            // The report names kernel, PC, instruction, wave and address.
            let first = races[0];
            assert_eq!(first.kernel, "reduce");
            assert!(first.inst.starts_with("ds_"), "{first}");
            assert!(first.addr.is_some());
            if got != want {
                wrong += 1;
            }
        }
        assert!(wrong > 0, "{arch}: no adversarial schedule produced a wrong sum without barriers");
    }
}

/// Runs the MFMA GEMM kernel for `dtype` and checks it against gemm_core's reference.
fn run_gemm<T: gemm_core::dtype::Element>(
    arch: Arch,
    define: &str,
    m: usize,
    n: usize,
    k: usize,
    conv: impl Fn(f32) -> T,
) {
    use gemm_core::problem::{GemmProblem, Transpose};
    let co = hip("gemm", arch, &[define]);
    for s in schedules(&[11, 12]) {
        let dev = Device::new(arch);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(s.seed);
        let a: Vec<T> = (0..m * k).map(|_| conv(rng.gen_range(-2.0..2.0))).collect();
        let b: Vec<T> = (0..n * k).map(|_| conv(rng.gen_range(-2.0..2.0))).collect();
        let ab: &[u8] = bytemuck_bytes(&a);
        let bb: &[u8] = bytemuck_bytes(&b);
        let (pa, pb) = (upload(&dev, ab), upload(&dev, bb));
        let pc = dev.alloc(4 * (m * n) as u64).unwrap();
        let args = Args::new().ptr(pa).ptr(pb).ptr(pc).u32(m as u32).u32(n as u32).u32(k as u32);
        let grid = [m.div_ceil(64) as u32, n.div_ceil(64) as u32, 1];
        let r = dev.launch_with(&co, "gemm", grid, [256, 1, 1], &args.0, &opts(s)).unwrap();
        assert_clean(&r);
        assert!(r.counts.mfma > 0 && r.counts.vmem_load > 0, "{}", r.counts);
        let c = f32s(&download(&dev, pc, 4 * m * n));
        let p = GemmProblem::new(m, n, k).with_transposes(Transpose::No, Transpose::Yes).with_elements::<T, T, f32>();
        let before = vec![0f32; m * n];
        let rep = gemm_core::reference::check(&p, &a, &b, &before, &c, None).unwrap();
        assert!(rep.passed(), "{arch} {define} {s:?}: {rep:?}");
    }
}

fn bytemuck_bytes<T: gemm_core::dtype::Element>(v: &[T]) -> &[u8] {
    bytemuck::cast_slice(v)
}

#[test]
fn mfma_gemm_bf16_with_edge_tiles() {
    for arch in Arch::ALL {
        run_gemm(arch, "BF16", 70, 100, 24, half::bf16::from_f32);
    }
}

#[test]
fn mfma_gemm_f16_with_edge_tiles() {
    for arch in Arch::ALL {
        run_gemm(arch, "F16", 65, 64, 16, half::f16::from_f32);
    }
}

#[test]
fn mfma_gemm_fp8_each_arch_flavour() {
    run_gemm(Arch::Gfx942, "FP8", 64, 70, 32, gemm_core::fp8::Fp8E4M3Fnuz::from_f32);
    run_gemm(Arch::Gfx950, "FP8", 64, 70, 32, gemm_core::fp8::Fp8E4M3::from_f32);
}

#[test]
fn gemm_emulate_binary_runs_a_code_object() {
    let co = hip("vadd", Arch::Gfx950, &[]);
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("vadd-bin.co");
    std::fs::write(&path, co).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gemm-emulate"))
        .arg(&path)
        .args(["--grid", "2", "--block", "256", "--buffer", "2048", "--buffer", "2048", "--buffer", "2048"])
        .args(["--args", "b0,b1,b2,u32:500", "--mode", "random", "--seed", "3", "--dump", "b2:4"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("kernel vadd") && text.contains("vmem_load 16") && text.contains("b2[0..4]"), "{text}");
}
