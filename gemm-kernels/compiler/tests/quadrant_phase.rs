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
    assert_eq!(
        r.counts.mfma,
        waves * (tiles * k.stats.mfma_per_k_step as u64 + k.stats.zeroing_mfmas as u64),
        "{}",
        k.name
    );
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

fn phase(mut c: KernelConfig) -> KernelConfig {
    c.sync = Sync::PhaseCounters;
    c
}

#[test]
fn quadrant_gfx950() {
    let c = quad(Arch::Gfx950, 32, MfmaShape::native_16(Arch::Gfx950));
    let k = compile(c).unwrap();
    assert_eq!(k.resident(), Ok(2), "{}: 8 waves, 2 per SIMD", k.name);
    check_every_mode(c, 1100);
}

#[test]
fn quadrant_gfx950_tn_dma() {
    // Both operands K-contiguous: both copied with LDS-DMA.
    let mut c = quad(Arch::Gfx950, 32, MfmaShape::native_16(Arch::Gfx950));
    c.trans_a = true;
    c.direct_to_lds = gemm_compiler::ir::DmaPolicy::Always;
    check_every_mode(c, 1200);
}

#[test]
fn quadrant_gfx942_staged() {
    let c = quad(Arch::Gfx942, 32, MfmaShape::native_32(Arch::Gfx942));
    let k = compile(c).unwrap();
    assert_eq!(k.resident(), Ok(2), "{}", k.name);
    check_every_mode(c, 1300);
}

#[test]
fn phase_counters_quadrant_gfx950() {
    check_every_mode(phase(quad(Arch::Gfx950, 32, MfmaShape::native_16(Arch::Gfx950))), 1400);
}

#[test]
fn phase_counters_ping_pong_gfx950() {
    let g3 = Arch::Gfx950;
    check_every_mode(
        phase(cfg(g3, (256, 256, 32), (2, 4), MfmaShape::native_16(g3), Schedule::PingPong { clusters: 2 })),
        1500,
    );
    let mut c = phase(cfg(g3, (256, 256, 64), (2, 4), MfmaShape::native_16(g3), Schedule::PingPong { clusters: 4 }));
    c.trans_a = true;
    check_every_mode(c, 1550);
}

#[test]
fn phase_counters_four_wave_schedules() {
    // No stagger: the counters are a barrier between the two pairs of waves.
    let g3 = Arch::Gfx950;
    check_every_mode(
        phase(cfg(g3, (256, 256, 64), (2, 2), MfmaShape::native_16(g3), Schedule::Interleave { slices: 4 })),
        1600,
    );
    check_every_mode(
        phase(cfg(g3, (256, 256, 64), (2, 4), MfmaShape::native_16(g3), Schedule::CopyInterleave { stages: 4 })),
        1700,
    );
    let g2 = Arch::Gfx942;
    check_every_mode(
        phase(cfg(g2, (128, 128, 32), (2, 2), MfmaShape::native_32(g2), Schedule::PingPong { clusters: 1 })),
        1800,
    );
}

/// What the quadrant schedule and the phase counters decline, with their typed reasons.
#[test]
fn declines() {
    use gemm_compiler::passes::Declined;
    use gemm_compiler::schedule::{phase, quadrant};
    let decline = |c: KernelConfig| match compile(c) {
        Err(gemm_compiler::CompileError::Declined(Declined::Schedule(r))) => r,
        other => panic!("{}: expected a schedule decline, got {:?}", c.name(), other.map(|k| k.name)),
    };
    let g3 = Arch::Gfx950;
    let m16 = MfmaShape::native_16(g3);
    // The 2x4 grid of the ping-pong: a wave's rows span one A half, its columns one B half.
    let r = decline(cfg(g3, (256, 256, 32), (2, 4), m16, Schedule::Quadrant));
    assert_eq!(r, Reason::Quadrant(quadrant::Decline::WaveGrid(2, 4)));
    assert!(r.to_string().contains("4x2"), "{r}");
    let r = decline(cfg(g3, (128, 128, 32), (2, 2), m16, Schedule::Quadrant));
    assert!(matches!(r, Reason::Waves { need: 8, have: 4, .. }), "{r}");
    // A 64-wide N tile: 16-wide quarters, less than one 32x32 MFMA block per B half.
    let r = decline(cfg(g3, (128, 64, 64), (4, 2), MfmaShape::native_32(g3), Schedule::Quadrant));
    assert_eq!(r, Reason::Quadrant(quadrant::Decline::Blocks { rows: 32, cols: 16, m: 32, n: 32 }));
    // Phase counters need a loop schedule, and 8 bytes of LDS past the two buffers: the
    // gfx942 256x256x32 bf16 ping-pong fills its 64 KiB.
    let r = decline(phase(cfg(g3, (256, 256, 32), (2, 4), m16, Schedule::Pipelined)));
    assert_eq!(r, Reason::Phase(phase::Decline::NoSchedule));
    let g2 = Arch::Gfx942;
    let r =
        decline(phase(cfg(g2, (256, 256, 32), (2, 4), MfmaShape::native_32(g2), Schedule::PingPong { clusters: 2 })));
    assert_eq!(r, Reason::Phase(phase::Decline::NoLds { used: 65536, max: 65536 }));
}

/// The structure the two promise: the quadrant's diagonals (first half of each wave's N
/// blocks, then the second, A read once), names; the phase-counter kernel's loop without
/// `s_barrier`, one signal per former barrier.
#[test]
fn structure() {
    use gemm_isa::Op;
    let g3 = Arch::Gfx950;
    let c = quad(g3, 32, MfmaShape::native_16(g3));
    assert!(c.name().ends_with("_quad"), "{}", c.name());
    let k = compile(c).unwrap();
    let ls = k.kernel.schedule.as_ref().unwrap();
    assert_eq!(ls.slices.len(), 2);
    assert_eq!((ls.slices[0].bn, ls.slices[1].bn), ((0, 4), (4, 8)), "8 N blocks of 16 per wave, 4 per B half");
    assert!(ls.slices[0].read_a && !ls.slices[1].read_a);
    assert_eq!(ls.barriers(0), (2, 4));
    let p = compile(phase(c)).unwrap();
    assert!(p.name.ends_with("_quad_pc"), "{}", p.name);
    assert_eq!(p.lds_bytes, k.lds_bytes + 8);
    let ops: Vec<Op> = p.insts.iter().map(|i| i.op).collect();
    let count = |o: Op| ops.iter().filter(|x| **x == o).count();
    // Around the loop: the barrier after the zeroing and the drain's; no other.
    // (the barrier kernel's 12 more: the stagger pair before the loop, 4 per body copy and
    // group 0's re-align in each drain, less the one after the zeroing).
    assert_eq!(count(Op::S_BARRIER) + 2 * 4 + 3, k.insts.iter().filter(|i| i.op == Op::S_BARRIER).count());
    // Four sync points per loop tile (two copies of the body) and group 0's re-align in
    // each of the two drains.
    assert_eq!(count(Op::DS_ADD_U32), 2 * 4 + 2);
    assert_eq!(count(Op::S_SLEEP), count(Op::DS_ADD_U32));
}

// ---- Planted bugs (issue 12 item 7) in the quadrant schedule and the phase counters ----

use gemm_compiler::plant::{PlantError, PlantedBug};
use gemm_compiler::{compile_kernel_with, optimise, CompileError, Options};
use gemm_emu::{Checker, Kind, LaunchReport};

/// The quadrant kernel of the planted tests: gfx950, 256x256x32 bf16 -> f32; `dma`: A
/// transposed so both operands go by LDS-DMA (else A is register-staged).
fn planted_config(dma: bool, sync: Sync) -> KernelConfig {
    let mut c = quad(Arch::Gfx950, 32, MfmaShape::native_16(Arch::Gfx950));
    if dma {
        c.trans_a = true;
        c.direct_to_lds = gemm_compiler::ir::DmaPolicy::Always;
    }
    c.sync = sync;
    c
}

fn build(dma: bool, sync: Sync, plant: Option<PlantedBug>) -> Result<CompiledKernel, CompileError> {
    compile_kernel_with(optimise(planted_config(dma, sync)).unwrap(), Options { plant, ..Default::default() })
}

/// One workgroup, five K tiles (both LDS buffers, an odd count so both drains run).
const M: usize = 256;
const N: usize = 256;
const K: usize = 320;

/// Runs `k`; returns the report and how many of C's elements are wrong.
fn run_planted(k: &CompiledKernel, mode: Mode) -> (LaunchReport, usize) {
    let cfg = k.config;
    let p = GemmProblem::new(M, N, K)
        .with_layout(Layout::ColMajor)
        .with_transposes(Transpose::from_bool(cfg.trans_a), Transpose::from_bool(cfg.trans_b))
        .with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
    let spans = p.validate().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut fill =
        |n: usize| -> Vec<bf16> { (0..n).map(|_| bf16::from_f32(rng.gen_range(-2i32..=2) as f32)).collect() };
    let (a, b) = (fill(spans.a), fill(spans.b));
    let c0 = vec![f32::NAN; spans.c];
    let dev = Device::new(cfg.arch);
    let up = |bytes: &[u8]| {
        let ptr = dev.alloc((bytes.len() as u64).next_multiple_of(16)).unwrap();
        dev.copy_in(ptr, bytes).unwrap();
        ptr
    };
    let (pa, pb, pc) = (up(bytemuck::cast_slice(&a)), up(bytemuck::cast_slice(&b)), up(bytemuck::cast_slice(&c0)));
    let args = kernel_args::pack(
        pa,
        pb,
        pc,
        M as u32,
        N as u32,
        K as u32,
        p.lda as u32,
        p.ldb as u32,
        p.ldc as u32,
        p.alpha,
        p.beta,
    );
    let (wg, block) = kernel_args::launch_workgroups(M as u32, N as u32, cfg.tile, cfg.threads());
    let opts = LaunchOptions { schedule: EmuSchedule { mode, seed: 3 }, threads: 2, ..Default::default() };
    let r =
        dev.launch_with(&k.code_object, &k.name, wg, block, &args[..kernel_args::size(&cfg) as usize], &opts).unwrap();
    let mut out = vec![0u8; 4 * spans.c];
    dev.copy_out(pc, &mut out).unwrap();
    let c1: Vec<f32> = bytemuck::cast_slice(&out).to_vec();
    // Small integers: the reference is exact in f32 whatever the summation order.
    let mut wrong = 0;
    for j in 0..N {
        for i in 0..M {
            let at = |l: usize| if cfg.trans_a { a[l + i * p.lda] } else { a[i + l * p.lda] };
            let bt = |l: usize| if cfg.trans_b { b[j + l * p.ldb] } else { b[l + j * p.ldb] };
            let want: f32 = (0..K).map(|l| at(l).to_f32() * bt(l).to_f32()).sum();
            if c1[i + j * p.ldc] != want {
                wrong += 1;
            }
        }
    }
    eprintln!("{} {mode:?}: {wrong}/{} of C wrong, {} findings", k.name, M * N, r.reports.len());
    for x in r.reports.iter().take(6) {
        eprintln!("  {x}");
    }
    (r, wrong)
}

fn any(r: &LaunchReport, checker: Checker, kinds: &[Kind]) -> bool {
    r.reports.iter().any(|x| x.checker == checker && kinds.contains(&x.kind))
}

const RACE: [Kind; 4] = [Kind::ReadAfterWrite, Kind::WriteAfterRead, Kind::WriteAfterWrite, Kind::UninitializedRead];

#[test]
fn planted_unplanted_is_clean_and_right() {
    for sync in [Sync::Barrier, Sync::PhaseCounters] {
        for dma in [false, true] {
            let k = build(dma, sync, None).unwrap();
            for mode in [Mode::LongestLatency, Mode::Random] {
                let (r, wrong) = run_planted(&k, mode);
                assert!(r.reports.is_empty(), "{r}");
                assert_eq!(wrong, 0);
            }
        }
    }
}

/// The quadrant's diagonal-2 barrier (the one between diagonal 1's MFMAs and diagonal 2's
/// reads of the other group's B half, which publishes the next K tile) removed.
#[test]
fn planted_quadrant_diagonal_barrier_removed() {
    for dma in [false, true] {
        let k = build(dma, Sync::Barrier, Some(PlantedBug::BarrierRemoved)).unwrap();
        let (r, wrong) = run_planted(&k, Mode::LongestLatency);
        assert!(any(&r, Checker::Race, &RACE), "race detector silent\n{r}");
        assert!(wrong > 0, "longest-latency schedule still right");
    }
}

/// The ping-pong's shared-buffer bug (group 1 two phases behind) in the quadrant: group
/// 0's LDS-DMA copies of tile t+2 are issued into the buffer in the same barrier interval
/// as group 1's diagonal-2 reads of tile t from it (the other group's B half), with
/// nothing ordering the two. The race detector names the pair under every mode. The
/// longest-latency mode gives wrong numbers: group 1's reads stay in flight while group 0
/// issues the copies, which then land first (the LDS orders different waves' operations
/// in no particular way, AMDGPUUsage "Memory Model GFX942"; an LDS-DMA lands any time
/// before its vmcnt decrement). The other modes perform the reads first here (right).
#[test]
fn planted_quadrant_shared_buffer_overwritten_early() {
    for dma in [false, true] {
        let k = build(dma, Sync::Barrier, Some(PlantedBug::SharedBufferOverwrittenEarly)).unwrap();
        for mode in Mode::ALL {
            let (r, wrong) = run_planted(&k, mode);
            let dma_of_group_0 = |wave: usize, inst: &str| wave < 4 && inst.ends_with(" lds");
            let read_of_group_1 = |wave: usize, inst: &str| wave >= 4 && inst.starts_with("ds_read");
            assert!(
                r.by_checker(Checker::Race).iter().any(|x| {
                    let Some(o) = x.other.as_ref() else { return false };
                    (dma_of_group_0(x.wave, &x.inst) && read_of_group_1(o.0, &o.2))
                        || (read_of_group_1(x.wave, &x.inst) && dma_of_group_0(o.0, &o.2))
                }),
                "{mode:?}: race detector silent\n{r}"
            );
            if mode == Mode::LongestLatency {
                assert!(wrong > 0, "dma {dma}: longest-latency schedule still right");
            }
        }
    }
}

#[test]
fn planted_quadrant_weak_vmcnt() {
    let k = build(false, Sync::Barrier, Some(PlantedBug::WeakVmcnt)).unwrap();
    let (r, wrong) = run_planted(&k, Mode::LongestLatency);
    assert!(!r.reports.is_empty(), "checkers silent\n{r}");
    assert!(wrong > 0, "longest-latency schedule still right");
}

#[test]
fn planted_phase_signal_before_copies() {
    let k = build(true, Sync::PhaseCounters, Some(PlantedBug::PhaseSignalBeforeCopies)).unwrap();
    let (r, wrong) = run_planted(&k, Mode::LongestLatency);
    assert!(any(&r, Checker::Race, &RACE), "race detector silent\n{r}");
    assert!(wrong > 0, "longest-latency schedule still right");
}

/// The signal (`ds_add_u32` on the group's counter) issued while the wave's last LDS read
/// of the buffer is still in flight. The race detector reports it (its happens-before
/// model, like a release, asks for the read to be waited first), but no schedule can turn
/// it into a wrong number, on hardware either: the LDS performs a wave's DS operations in
/// issue order (AMDGPUUsage, "Memory Model GFX942": "All LDS operations of a CU are
/// performed as wavefront wide operations in a global order ... Completion is reported to
/// a wavefront in execution order"; ISA.md §3.1, lgkmcnt counts DS operations in order),
/// so the read is performed before the add, and the other group overwrites the buffer only
/// after its poll has seen the add. The emulator keeps that order in every mode (a wave's
/// DS stream completes in order, `Order::stream`), so the numbers stay right: the bug is
/// latent, and the test pins both halves (finding, and right numbers under longest-latency).
#[test]
fn planted_phase_signal_before_reads() {
    for dma in [false, true] {
        let k = build(dma, Sync::PhaseCounters, Some(PlantedBug::PhaseSignalBeforeReads)).unwrap();
        let (r, wrong) = run_planted(&k, Mode::LongestLatency);
        assert!(
            r.by_checker(Checker::Race).iter().any(|x| x.kind == Kind::WriteAfterRead
                && x.other.as_ref().is_some_and(|o| o.2.starts_with("ds_read"))),
            "race detector silent on the read released too early\n{r}"
        );
        assert_eq!(wrong, 0);
    }
}

#[test]
fn planted_phase_wrong_phase() {
    for dma in [false, true] {
        let k = build(dma, Sync::PhaseCounters, Some(PlantedBug::PhaseWrongPhase)).unwrap();
        let (r, wrong) = run_planted(&k, Mode::LongestLatency);
        assert!(any(&r, Checker::Race, &RACE), "race detector silent\n{r}");
        let (_, wrong_random) = run_planted(&k, Mode::Random);
        eprintln!("wrong phase dma {dma}: {wrong} wrong (longest-latency), {wrong_random} (random)");
        assert!(wrong > 0, "longest-latency schedule still right");
    }
}

#[test]
fn phase_bugs_need_phase_counters() {
    for bug in PlantedBug::PHASE {
        let e = build(true, Sync::Barrier, Some(bug));
        assert!(matches!(e, Err(CompileError::Plant(PlantError::NoPhaseCounters(b))) if b == bug), "{e:?}");
    }
}
