//! The loop schedules (`schedule/`, issue 12) in the emulator against
//! `gemm_core::reference`, with the race detector and the hazard checker on, under every
//! scheduling mode: edge shapes (1x1x1, 17x33x65, 255x257x129 with a K tail), padded
//! leading dimensions, and a larger shape; plus the schedules' structure (declines,
//! names, stagger barriers, priorities).

use gemm_compiler::ir::{Align, Arch, KernelConfig, MfmaShape};
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
    // Every wave passes the same barriers: around the loop, per loop tile, the drain's.
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

#[test]
fn ping_pong_two_clusters_gfx950() {
    let c = cfg(
        Arch::Gfx950,
        (256, 256, 64),
        (2, 4),
        MfmaShape::native_16(Arch::Gfx950),
        Schedule::PingPong { clusters: 2 },
    );
    check_every_mode(c, 100);
}

#[test]
fn ping_pong_four_clusters_gfx950_tn() {
    let mut c = cfg(
        Arch::Gfx950,
        (256, 256, 64),
        (2, 4),
        MfmaShape::native_16(Arch::Gfx950),
        Schedule::PingPong { clusters: 4 },
    );
    c.trans_a = true;
    check_every_mode(c, 200);
}

#[test]
fn ping_pong_gfx942_staged() {
    // gfx942: both copies register-staged (LDS-DMA moves one dword per lane there).
    let c = cfg(
        Arch::Gfx942,
        (256, 256, 32),
        (2, 4),
        MfmaShape::native_32(Arch::Gfx942),
        Schedule::PingPong { clusters: 2 },
    );
    check_every_mode(c, 300);
}

#[test]
fn copy_interleave_gfx950() {
    let c = cfg(
        Arch::Gfx950,
        (256, 256, 64),
        (2, 4),
        MfmaShape::native_16(Arch::Gfx950),
        Schedule::CopyInterleave { stages: 4 },
    );
    check_every_mode(c, 400);
}

#[test]
fn interleave_four_waves() {
    let c = cfg(
        Arch::Gfx950,
        (256, 256, 64),
        (2, 2),
        MfmaShape::native_16(Arch::Gfx950),
        Schedule::Interleave { slices: 4 },
    );
    check_every_mode(c, 500);
    let mut c = cfg(
        Arch::Gfx942,
        (128, 128, 32),
        (2, 2),
        MfmaShape::native_32(Arch::Gfx942),
        Schedule::Interleave { slices: 2 },
    );
    c.trans_a = true;
    check_every_mode(c, 600);
}

/// gfx950 `DmaPolicy::Transposing`: the M/N-contiguous operands are copied by LDS-DMA into
/// M/N-major tiles and read back with `ds_read_b64_tr_b16` (`lds::mn_major`): the 4-wave
/// interleave on `nn` (A transposed on read, 16x16 MFMAs), and on 128x128 tiles with two
/// slices on `nt` and `tt` with 32x32 MFMAs (B, and both). Correct in every mode with the checkers silent;
/// no transposing `ds_write_b16` is left and the tiles' reads are conflict-free.
#[test]
fn transposing_reads_gfx950() {
    use gemm_compiler::ir::DmaPolicy;
    use gemm_compiler::passes::buffer_ops::CopyPath;
    let mut c = cfg(
        Arch::Gfx950,
        (256, 256, 64),
        (2, 2),
        MfmaShape::native_16(Arch::Gfx950),
        Schedule::Interleave { slices: 4 },
    );
    c.direct_to_lds = DmaPolicy::Transposing;
    let mut nt = cfg(
        Arch::Gfx950,
        (128, 128, 64),
        (2, 2),
        MfmaShape::native_32(Arch::Gfx950),
        Schedule::Interleave { slices: 2 },
    );
    nt.direct_to_lds = DmaPolicy::Transposing;
    nt.trans_b = true;
    let mut tt = nt;
    tt.trans_a = true;
    for (i, c) in [c, nt, tt].into_iter().enumerate() {
        let k = compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        assert_eq!(k.kernel.copy_paths, vec![CopyPath::DirectToLds; 2], "{}", k.name);
        let asm = gemm_compiler::disassemble(&k);
        assert!(asm.contains("ds_read_b64_tr_b16"), "{}", k.name);
        assert!(!asm.contains("ds_write_b16"), "{}", k.name);
        assert_eq!(gemm_compiler::lds::read_conflicts(&k.kernel), 0, "{}", k.name);
        k.resident().unwrap_or_else(|e| panic!("{}: {e}", k.name));
        check_every_mode(c, 700 + 20 * i as u64);
    }
}

/// What each schedule declines, with its typed reason.
#[test]
fn declines() {
    use gemm_compiler::passes::Declined;
    let decline = |c: KernelConfig| match compile(c) {
        Err(gemm_compiler::CompileError::Declined(Declined::Schedule(r))) => r,
        other => panic!("{}: expected a schedule decline, got {:?}", c.name(), other.map(|k| k.name)),
    };
    let g3 = Arch::Gfx950;
    let pp2_4waves = cfg(g3, (128, 128, 64), (2, 2), MfmaShape::native_16(g3), Schedule::PingPong { clusters: 2 });
    assert!(matches!(decline(pp2_4waves), Reason::Waves { need: 8, have: 4, .. }));
    let il_8waves = cfg(g3, (256, 256, 64), (2, 4), MfmaShape::native_16(g3), Schedule::Interleave { slices: 2 });
    assert!(matches!(decline(il_8waves), Reason::Waves { need: 4, have: 8, .. }));
    let ci_gfx942 = cfg(
        Arch::Gfx942,
        (128, 128, 32),
        (2, 2),
        MfmaShape::native_32(Arch::Gfx942),
        Schedule::CopyInterleave { stages: 2 },
    );
    assert!(matches!(decline(ci_gfx942), Reason::Arch(Arch::Gfx942)));
    // A 32-wide K tile of 16x16x32: 1 fragment piece, 1 N block per wave: no 4 slices.
    let pp4 = cfg(g3, (128, 128, 32), (1, 8), MfmaShape::native_16(g3), Schedule::PingPong { clusters: 4 });
    assert!(matches!(decline(pp4), Reason::Slices { slices: 4, .. }));
}

/// The ping-pong rule (Triton's tile-size classes) and the names.
#[test]
fn ping_pong_rule_and_names() {
    let g3 = Arch::Gfx950;
    let big = cfg(g3, (256, 256, 64), (2, 4), MfmaShape::native_16(g3), Schedule::Pipelined);
    assert_eq!(Schedule::ping_pong_for(&big), Some(Schedule::PingPong { clusters: 4 }));
    let medium = cfg(g3, (256, 128, 64), (2, 4), MfmaShape::native_16(g3), Schedule::Pipelined);
    assert_eq!(Schedule::ping_pong_for(&medium), Some(Schedule::PingPong { clusters: 2 }));
    let small = cfg(g3, (128, 128, 64), (2, 2), MfmaShape::native_16(g3), Schedule::Pipelined);
    assert_eq!(Schedule::ping_pong_for(&small), Some(Schedule::PingPong { clusters: 1 }));
    let none = cfg(g3, (128, 128, 32), (2, 4), MfmaShape::native_16(g3), Schedule::Pipelined);
    assert_eq!(Schedule::ping_pong_for(&none), None);
    let mut c = big;
    c.schedule = Schedule::PingPong { clusters: 4 };
    assert!(c.name().ends_with("_pp4"), "{}", c.name());
    assert_ne!(c.name(), big.name());
}

/// The ping-pong kernel's structure: one stagger barrier per group around the loop, the
/// MFMA clusters between `s_setprio 1` and `s_setprio 0`, and every wave passing the same
/// number of barriers (the emulator's counts).
#[test]
fn ping_pong_structure() {
    use gemm_isa::Op;
    let g3 = Arch::Gfx950;
    let c = cfg(g3, (256, 256, 64), (2, 4), MfmaShape::native_16(g3), Schedule::PingPong { clusters: 2 });
    let k = compile(c).unwrap();
    let ls = k.kernel.schedule.as_ref().expect("scheduled");
    assert_eq!(ls.slices.len(), 2);
    let ops: Vec<Op> = k.insts.iter().map(|i| i.op).collect();
    // Priority raised before every MFMA cluster of the loop and lowered after it.
    let prio = ops.iter().filter(|o| **o == Op::S_SETPRIO).count();
    assert_eq!(prio, 2 * 2 * 2, "2 clusters x 2 loop copies x (raise, lower)");
    let mut in_cluster = false;
    let mut mfma_in = 0;
    for i in &k.insts {
        match i.op {
            Op::S_SETPRIO => in_cluster = matches!(i.operands.first(), Some(gemm_isa::Operand::Imm(1))),
            o if o.def().format == gemm_isa::Format::Mai && in_cluster => mfma_in += 1,
            _ => {}
        }
    }
    assert_eq!(mfma_in, 2 * k.stats.mfma_per_k_step, "every loop MFMA at priority 1");
}

/// The catalogue's ping-pong families (16x16x16 and 32x32x8 MFMAs, register-staged copies),
/// every member's shape on the edge shapes and the large one.
#[test]
fn catalogue_ping_pong_family() {
    let members: Vec<KernelConfig> = gemm_compiler::catalogue::entries()
        .into_iter()
        .filter(|(f, c)| f.name.starts_with("pingpong") && c.c_type == DType::F32)
        .map(|(_, c)| c)
        .collect();
    assert!(members.len() >= 16, "gfx942 every transpose, bf16 and f16, both MFMA shapes");
    let mut large_shapes = vec![];
    for (i, c) in members.into_iter().enumerate() {
        assert_eq!(c.schedule, Schedule::PingPong { clusters: 2 });
        let k = compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        for (j, case) in EDGES.iter().enumerate() {
            run_kernel(&k, case, EmuSchedule { mode: Mode::ALL[(i + j) % 4], seed: 700 + j as u64 });
        }
        // The large shape once per MFMA shape.
        if !large_shapes.contains(&c.mfma) {
            large_shapes.push(c.mfma);
            run_kernel(&k, &LARGE, EmuSchedule { mode: Mode::LongestLatency, seed: 7 });
        }
    }
    assert_eq!(large_shapes.len(), 2);
}

/// The catalogue's gfx950 interleave family (4 waves, 256x256x64, the 4-wave interleave
/// with four slices, LDS-DMA copies with transposing reads): every member on the edge shapes, the modes
/// rotated so that every transpose meets every mode, and the large shape under the
/// longest-latency and random modes for the first member of each transpose.
#[test]
fn catalogue_interleave_family() {
    let members: Vec<KernelConfig> = gemm_compiler::catalogue::entries()
        .into_iter()
        .filter(|(f, _)| f.name == "interleave")
        .map(|(_, c)| c)
        .collect();
    assert!(members.len() >= 16, "gfx950 bf16/f16, every transpose");
    let mut seen = std::collections::HashSet::new();
    for (i, c) in members.into_iter().enumerate() {
        assert_eq!((c.arch, c.waves, c.schedule), (Arch::Gfx950, 4, Schedule::Interleave { slices: 4 }));
        let k = compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        assert!(k.resident().is_ok(), "{}", k.name);
        for (j, case) in EDGES.iter().enumerate() {
            run_kernel(&k, case, EmuSchedule { mode: Mode::ALL[(i + j) % 4], seed: 800 + j as u64 });
        }
        if seen.insert((c.trans_a, c.trans_b)) {
            let mode = if i % 2 == 0 { Mode::LongestLatency } else { Mode::Random };
            run_kernel(&k, &LARGE, EmuSchedule { mode, seed: 8 + i as u64 });
        }
    }
}
