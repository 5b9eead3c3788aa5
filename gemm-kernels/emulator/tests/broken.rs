//! Deliberately broken kernels: clang-22's GEMM with one `s_waitcnt` deleted from its
//! assembly, re-assembled with llvm-mc-22 + ld.lld-22. The checkers must find each bug,
//! and an adversarial schedule must turn it into wrong numbers.

mod common;
use common::*;
use gemm_emu::{Arch, Checker, Device, Kind, LaunchReport, Mode, Schedule};
use rand::{Rng, SeedableRng};

/// Removes the first line equal to `line` (trimmed) that follows a line matching `after`.
fn delete_after(text: &str, after: &str, line: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut armed = false;
    let mut done = false;
    for l in lines {
        if !done && armed && l.trim() == line {
            done = true;
            continue;
        }
        if l.contains(after) {
            armed = true;
        }
        out.push(l);
    }
    assert!(done, "pattern `{line}` after `{after}` not found");
    out.join("\n") + "\n"
}

/// Runs the (patched) bf16 GEMM; returns the report and whether C matches the reference.
fn run(co: &[u8], arch: Arch, s: Schedule) -> (LaunchReport, bool) {
    use gemm_core::problem::{GemmProblem, Transpose};
    let (m, n, k) = (64usize, 64usize, 32usize);
    let dev = Device::new(arch);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(s.seed);
    let a: Vec<half::bf16> = (0..m * k).map(|_| half::bf16::from_f32(rng.gen_range(-2.0..2.0))).collect();
    let b: Vec<half::bf16> = (0..n * k).map(|_| half::bf16::from_f32(rng.gen_range(-2.0..2.0))).collect();
    let (pa, pb) = (upload(&dev, bytemuck::cast_slice(&a)), upload(&dev, bytemuck::cast_slice(&b)));
    let pc = dev.alloc(4 * (m * n) as u64).unwrap();
    let args = Args::new().ptr(pa).ptr(pb).ptr(pc).u32(m as u32).u32(n as u32).u32(k as u32);
    let r = dev.launch_with(co, "gemm", [1, 1, 1], [256, 1, 1], &args.0, &opts(s)).unwrap();
    let c = f32s(&download(&dev, pc, 4 * m * n));
    let p = GemmProblem::new(m, n, k)
        .with_transposes(Transpose::No, Transpose::Yes)
        .with_elements::<half::bf16, half::bf16, f32>();
    let ok = gemm_core::reference::check(&p, &a, &b, &vec![0f32; m * n], &c, None).unwrap().passed();
    (r, ok)
}

#[test]
fn reassembled_gemm_is_clean() {
    // The unpatched assembly round-trips through llvm-mc/ld.lld and runs cleanly.
    let arch = Arch::Gfx942;
    let co = assemble(&hip_asm("gemm", arch, &["BF16"]), arch, "gemm-orig");
    let (r, ok) = run(&co, arch, Schedule { mode: Mode::LongestLatency, seed: 1 });
    assert_clean(&r);
    assert!(ok);
}

#[test]
fn missing_lgkmcnt_before_barrier_is_a_race_and_wrong_under_longest_latency() {
    for arch in Arch::ALL {
        let text = delete_after(&hip_asm("gemm", arch, &["BF16"]), "s_or_b64 exec, exec", "s_waitcnt lgkmcnt(0)");
        let co = assemble(&text, arch, "gemm-no-lgkm");
        let (r, ok) = run(&co, arch, Schedule { mode: Mode::LongestLatency, seed: 1 });
        let races = r.by_checker(Checker::Race);
        assert!(
            races.iter().any(|x| x.kind == Kind::ReadAfterWrite || x.kind == Kind::UninitializedRead),
            "{arch}: no LDS race reported\n{r}"
        );
        assert!(!ok, "{arch}: the missing wait did not change the result under longest-latency");
        // Under a fair schedule the numbers may happen to be right; the detector still fires.
        let (r2, _) = run(&co, arch, Schedule { mode: Mode::Fair, seed: 1 });
        assert!(!r2.by_checker(Checker::Race).is_empty(), "{arch}: race missed under the fair schedule\n{r2}");
    }
}

#[test]
fn missing_vmcnt_before_lds_store_is_reported_and_wrong() {
    for arch in Arch::ALL {
        let text = delete_after(&hip_asm("gemm", arch, &["BF16"]), "buffer_load_dwordx2", "s_waitcnt vmcnt(0)");
        let co = assemble(&text, arch, "gemm-no-vmcnt");
        let (r, ok) = run(&co, arch, Schedule { mode: Mode::LongestLatency, seed: 2 });
        let waits = r.by_checker(Checker::Wait);
        assert!(!waits.is_empty(), "{arch}: register-before-wait not reported\n{r}");
        assert!(waits[0].inst.starts_with("ds_write"), "{}", waits[0]);
        assert!(waits[0].other.as_ref().is_some_and(|o| o.2.starts_with("buffer_load")), "{}", waits[0]);
        assert!(!ok, "{arch}: wrong data not visible under longest-latency");
    }
}

#[test]
fn same_seed_same_result() {
    let arch = Arch::Gfx950;
    let text = delete_after(&hip_asm("gemm", arch, &["BF16"]), "buffer_load_dwordx2", "s_waitcnt vmcnt(0)");
    let co = assemble(&text, arch, "gemm-no-vmcnt-det");
    let s = Schedule { mode: Mode::Random, seed: 99 };
    let dev_run = || {
        let (r, ok) = run(&co, arch, s);
        (r.reports.len(), r.counts, r.cycles, ok)
    };
    assert_eq!(dev_run(), dev_run());
}
