//! The quadrant schedule (`schedule/quadrant.rs`) and the phase-counter sync
//! (`schedule/phase.rs`, issue 12 items 4 and 6) in the emulator against
//! `gemm_core::reference`, with the race detector and the hazard checker on, under every
//! scheduling mode: edge shapes, padded leading dimensions and a larger shape; plus what
//! each declines and the structure they promise.

use gemm_compiler::ir::{Align, Arch, KernelConfig, MfmaShape};
use gemm_compiler::schedule::phase::Sync;
use gemm_compiler::schedule::{Reason, Schedule};
use gemm_compiler::{compile, kernel_args, CompiledKernel};
use gemm_core::{bf16, f16, DType, Element, GemmProblem, Layout, Transpose};
use gemm_emu::{Device, LaunchOptions, Mode, Schedule as EmuSchedule};
use rand::{Rng, SeedableRng};

fn fill<T: Element>(n: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<T> {
    (0..n).map(|_| T::from_f32(rng.gen_range(-2i32..=2) as f32 * 0.5 + rng.gen_range(-0.25f32..0.25))).collect()
}

fn bytes<T: Element>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

fn upload(dev: &Device, b: &[u8]) -> u64 {
    let p = dev.alloc((b.len() as u64).next_multiple_of(16).max(16)).unwrap();
    dev.copy_in(p, b).unwrap();
    p
}

#[derive(Clone, Copy, Debug)]
struct Case {
    m: usize,
    n: usize,
    k: usize,
    pad: usize,
    alpha: f32,
    beta: f32,
}

/// Runs `k` on `case` and checks the result; returns the launch's MFMA count per wave.
fn run<AB: Element, C: Element>(k: &CompiledKernel, case: &Case, sched: EmuSchedule) {
    let cfg = k.config;
    let t = |b| Transpose::from_bool(b);
    let mut p = GemmProblem::new(case.m, case.n, case.k)
        .with_layout(Layout::ColMajor)
        .with_transposes(t(cfg.trans_a), t(cfg.trans_b))
        .with_scalars(case.alpha, case.beta)
        .with_dtypes(AB::DTYPE, AB::DTYPE, C::DTYPE);
    let al = cfg.align.elems() as usize;
    let ld = |x: usize| (x + case.pad).next_multiple_of(al);
    p = p.with_leading_dims(ld(p.lda), ld(p.ldb), ld(p.ldc));
    let spans = p.validate().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(sched.seed ^ (case.m * 1000 + case.k) as u64);
    let a: Vec<AB> = fill(spans.a, &mut rng);
    let b: Vec<AB> = fill(spans.b, &mut rng);
    let c0: Vec<C> = if case.beta == 0.0 { vec![C::from_f32(f32::NAN); spans.c] } else { fill(spans.c, &mut rng) };
    let dev = Device::new(cfg.arch);
    let (pa, pb, pc) = (upload(&dev, &bytes(&a)), upload(&dev, &bytes(&b)), upload(&dev, &bytes(&c0)));
    let args = kernel_args::pack(
        pa,
        pb,
        pc,
        p.m as u32,
        p.n as u32,
        p.k as u32,
        p.lda as u32,
        p.ldb as u32,
        p.ldc as u32,
        p.alpha,
        p.beta,
    );
    let (wg, block) = kernel_args::launch_workgroups(p.m as u32, p.n as u32, cfg.tile, cfg.threads());
    let opts = LaunchOptions { schedule: sched, threads: 2, ..Default::default() };
    let args = &args[..kernel_args::size(&cfg) as usize];
    let r = dev.launch_with(&k.code_object, &k.name, wg, block, args, &opts).unwrap();
    assert!(r.reports.is_empty(), "{} {}x{}x{} {sched:?}: checker findings:\n{r}", k.name, p.m, p.n, p.k);
    // Every wave runs ceil(k/KT) K tiles (at least one) of `mfma_per_k_step` MFMAs.
    let tiles = (p.k as u64).div_ceil(cfg.tile.2 as u64).max(1);
    let waves = (wg[0] * wg[1]) as u64 * cfg.waves as u64;
    assert_eq!(r.counts.mfma, waves * tiles * k.stats.mfma_per_k_step as u64, "{}", k.name);
    // Every wave passes the same barriers: around the loop, per loop tile, the drain's
    // (with phase counters: the one after their zeroing and the drain's).
    let ls = k.kernel.schedule.as_ref().expect("a loop schedule");
    assert_eq!(ls.barriers(0), ls.barriers(1), "{}", k.name);
    let (around, per_tile) = ls.barriers(0);
    assert_eq!(r.counts.barrier, waves * (around + per_tile * (tiles - 1) + 1), "{}", k.name);
    let mut out = vec![0u8; spans.c * C::DTYPE.size_bytes()];
    dev.copy_out(pc, &mut out).unwrap();
    let c1: Vec<C> = bytemuck::cast_slice(&out).to_vec();
    let rep = gemm_core::reference::check(&p, &a, &b, &c0, &c1, None).unwrap();
    assert!(rep.passed(), "{} {}x{}x{} alpha {} beta {} {sched:?}: {rep:?}", k.name, p.m, p.n, p.k, p.alpha, p.beta);
}

fn run_kernel(k: &CompiledKernel, case: &Case, sched: EmuSchedule) {
    match (k.config.ab_type, k.config.c_type) {
        (DType::Bf16, DType::F32) => run::<bf16, f32>(k, case, sched),
        (DType::Bf16, DType::Bf16) => run::<bf16, bf16>(k, case, sched),
        (DType::F16, DType::F32) => run::<f16, f32>(k, case, sched),
        (DType::F16, DType::F16) => run::<f16, f16>(k, case, sched),
        other => panic!("no test for {other:?}"),
    }
}

const EDGES: [Case; 4] = [
    Case { m: 1, n: 1, k: 1, pad: 3, alpha: 1.0, beta: 0.0 },
    Case { m: 17, n: 33, k: 65, pad: 5, alpha: 1.5, beta: 0.0 },
    Case { m: 255, n: 257, k: 129, pad: 8, alpha: -0.5, beta: 0.75 },
    Case { m: 64, n: 80, k: 320, pad: 0, alpha: 1.0, beta: 1.0 },
];

/// A large shape: several workgroups and many loop iterations of both parities.
const LARGE: Case = Case { m: 512, n: 512, k: 704, pad: 8, alpha: 1.0, beta: 0.5 };

fn cfg(arch: Arch, tile: (u32, u32, u32), grid: (u32, u32), mfma: MfmaShape, s: Schedule) -> KernelConfig {
    let mut c =
        KernelConfig::new(arch, DType::Bf16, DType::F32, false, false, Align::Vec8).with_shape(tile, grid, mfma, 2);
    c.schedule = s;
    c
}

fn check_every_mode(c: KernelConfig, seed: u64) {
    let k = compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
    for (i, case) in EDGES.iter().enumerate() {
        for (j, mode) in Mode::ALL.into_iter().enumerate() {
            if (i + j) % 2 == 0 || i == 2 {
                run_kernel(&k, case, EmuSchedule { mode, seed: seed + (i * 4 + j) as u64 });
            }
        }
    }
    run_kernel(&k, &LARGE, EmuSchedule { mode: Mode::Random, seed });
    run_kernel(&k, &LARGE, EmuSchedule { mode: Mode::LongestLatency, seed });
}

fn quad(arch: Arch, k: u32, mfma: MfmaShape) -> KernelConfig {
    cfg(arch, (256, 256, k), (4, 2), mfma, Schedule::Quadrant)
}

#[test]
fn quadrant_gfx950() {
    let c = quad(Arch::Gfx950, 32, MfmaShape::native_16(Arch::Gfx950));
    check_every_mode(c, 1100);
}
