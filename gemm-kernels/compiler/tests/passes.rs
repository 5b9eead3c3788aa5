//! Each pass on IR: applied (with the effect it promises) or declined with its reason;
//! the lowering refuses IR that lacks a pass; the compiler is deterministic.

use gemm_compiler::ir::{Align, Arch, KGuard, KTile, Kernel, KernelConfig, LoadKind, Operand, TileOp};
use gemm_compiler::passes::{buffer_ops, epilogue, pipeline, swizzle, Declined};
use gemm_compiler::{compile, lds, lower};
use gemm_core::DType;

fn cfg(arch: Arch, ta: bool, tb: bool, align: Align) -> KernelConfig {
    KernelConfig::new(arch, DType::Bf16, DType::F32, ta, tb, align)
}

#[test]
fn buffer_ops_guards_the_last_tile_and_picks_widths() {
    for (ta, tb) in [(false, false), (true, true), (false, true), (true, false)] {
        let c = cfg(Arch::Gfx942, ta, tb, Align::Vec8);
        let k = buffer_ops::run(Kernel::naive(c)).unwrap();
        assert!(k.buffer_ops);
        for cp in k.copies() {
            match cp.which {
                KTile::Loop => assert_eq!((cp.kind, cp.guard), (LoadKind::Vector, KGuard::None)),
                KTile::Last => {
                    assert_eq!(cp.guard, KGuard::OffsetPastEnd);
                    let want = if c.k_contiguous(cp.operand) { LoadKind::Element } else { LoadKind::Vector };
                    assert_eq!(cp.kind, want, "{:?} ta {ta} tb {tb}", cp.operand);
                }
            }
        }
        assert_eq!(k.copy_paths.len(), 2);
    }
    let e = buffer_ops::run(Kernel::naive(cfg(Arch::Gfx950, false, false, Align::Elem))).unwrap();
    assert!(e.copies().filter(|c| c.which == KTile::Loop).all(|c| c.kind == LoadKind::Element));
}

#[test]
fn buffer_ops_declines_with_reasons() {
    // fp8 with an M-contiguous A is copied (transposed by K groups, lds::CopyGeom), not declined.
    let mut c = cfg(Arch::Gfx942, false, false, Align::Vec8);
    c.ab_type = DType::Fp8E4M3Fnuz;
    let k = buffer_ops::run(Kernel::naive(c)).unwrap();
    assert_eq!(k.copy_paths[0], buffer_ops::CopyPath::RegisterStaged(buffer_ops::DirectToLdsDeclined::Transposing));
    let mut c = cfg(Arch::Gfx942, false, false, Align::Vec8);
    c.tile.2 = 4;
    assert!(matches!(buffer_ops::run(Kernel::naive(c)), Err(buffer_ops::Reason::RowNotVector(..))));
    let k = buffer_ops::run(Kernel::naive(cfg(Arch::Gfx942, false, false, Align::Vec8))).unwrap();
    assert_eq!(buffer_ops::run(k), Err(buffer_ops::Reason::AlreadyApplied));
}

#[test]
fn pipeline_double_buffers_or_declines() {
    let k = pipeline::run(Kernel::naive(cfg(Arch::Gfx942, false, false, Align::Vec8))).unwrap();
    assert_eq!(k.lds_buffers, 2);
    assert_eq!(k.body.iter().filter(|o| **o == TileOp::Barrier).count(), 1, "one barrier per iteration");
    let loads = k.body.iter().position(|o| matches!(o, TileOp::GlobalLoad(_))).unwrap();
    let dot = k.body.iter().position(|o| *o == TileOp::Dot).unwrap();
    let store = k.body.iter().position(|o| matches!(o, TileOp::LdsStore(Operand::A))).unwrap();
    assert!(loads < dot && dot < store, "loads of tile t+1 in flight across the MFMAs of tile t");
    assert_eq!(k.drain, vec![TileOp::Barrier, TileOp::LdsToRegs, TileOp::Dot]);

    let mut c = cfg(Arch::Gfx942, false, false, Align::Vec8);
    c.stages = 1;
    assert_eq!(pipeline::run(Kernel::naive(c)), Err(pipeline::Reason::Stages(1)));
    let mut c = cfg(Arch::Gfx942, false, false, Align::Vec8);
    c.tile = (256, 256, 64);
    assert!(matches!(pipeline::run(Kernel::naive(c)), Err(pipeline::Reason::LdsTooSmall { .. })));
    // The same tile fits gfx950's 160 KiB.
    c.arch = Arch::Gfx950;
    assert!(pipeline::run(Kernel::naive(c)).is_ok());
    let k = pipeline::run(Kernel::naive(cfg(Arch::Gfx942, false, false, Align::Vec8))).unwrap();
    assert_eq!(pipeline::run(k), Err(pipeline::Reason::Shape));
}

/// Three stages: three LDS buffers, the copies of loop tile 0 issued before the loop (the
/// prefetch), the loop body of two stages, a drain of two steps; the wait pass lets the
/// LDS-DMA copies of the tile after next stay outstanding across the barrier that
/// publishes a tile (`vmcnt(N)`, N = the DMAs per wave of one tile), and only the last
/// barrier waits for all of them.
#[test]
fn pipeline_three_stages() {
    let mut c = cfg(Arch::Gfx950, true, false, Align::Vec8);
    c.tile = (128, 128, 64);
    c.stages = 3;
    let k = pipeline::run(buffer_ops::run(Kernel::naive(c)).unwrap()).unwrap();
    assert_eq!(k.lds_buffers, 3);
    assert_eq!(k.prefetch.len(), 2);
    assert!(k.prefetch.iter().all(|o| matches!(o, TileOp::GlobalLoad(cp) if cp.which == KTile::Loop)));
    assert_eq!(k.body.iter().filter(|o| **o == TileOp::Barrier).count(), 1, "one barrier per iteration");
    let step = [TileOp::Barrier, TileOp::LdsToRegs, TileOp::Dot];
    let stores = [TileOp::LdsStore(Operand::A), TileOp::LdsStore(Operand::B)];
    assert_eq!(k.drain, [&step[..], &stores, &step].concat());
    let ck = compile(c).unwrap();
    assert_eq!(ck.lds_bytes, 3 * k.lds_buffer_bytes());
    let dmas =
        gemm_compiler::schedule::dma_per_wave(&c, Operand::A) + gemm_compiler::schedule::dma_per_wave(&c, Operand::B);
    let vm = |i: &gemm_isa::Inst| match i.operands.first() {
        Some(gemm_isa::Operand::Imm(v)) => (*v as u32 & 0xF) | ((*v as u32 >> 14) & 3) << 4,
        _ => unreachable!(),
    };
    // Per barrier, the vmcnt of the wait before it (None: no wait; 63: none on vmcnt): the
    // three unrolled bodies, the two steps of each of the three drains, then the path with
    // no loop tile (k <= KT), where no copy is in flight (its wait is for the DS writes of
    // the last tile).
    let before_barriers: Vec<Option<u32>> = ck
        .insts
        .windows(2)
        .filter(|w| w[1].op == gemm_isa::Op::S_BARRIER)
        .map(|w| (w[0].op == gemm_isa::Op::S_WAITCNT).then(|| vm(&w[0])))
        .collect();
    let n = Some(dmas);
    assert_eq!(before_barriers, [n, n, n, n, Some(0), n, Some(0), n, Some(0), Some(63)], "{dmas} DMAs per tile");
    // Other stage counts are declined; three buffers must fit the LDS.
    c.stages = 4;
    let k = buffer_ops::run(Kernel::naive(c)).unwrap();
    assert_eq!(pipeline::run(k), Err(pipeline::Reason::Stages(4)));
    let mut c = cfg(Arch::Gfx942, false, false, Align::Vec8);
    c.tile = (128, 128, 64);
    c.stages = 3;
    assert!(matches!(
        pipeline::run(Kernel::naive(c)),
        Err(pipeline::Reason::LdsTooSmall { buffers: 3, buffer: 32768, limit: 65536, .. })
    ));
}

#[test]
fn swizzle_removes_read_conflicts_on_both_bank_models() {
    for arch in Arch::ALL {
        let k = Kernel::naive(cfg(arch, false, false, Align::Vec8));
        let before = lds::read_conflicts(&k);
        assert!(before > 0, "{arch}: the plain layout conflicts ({before})");
        let k = swizzle::run(k).unwrap();
        assert_eq!(lds::read_conflicts(&k), 0, "{arch}");
        assert_eq!(swizzle::run(k), Err(swizzle::Reason::NotNeeded));
    }
    // 256-byte rows, wider than gfx942's 128-byte bank line, get a swizzle too.
    let mut c = cfg(Arch::Gfx942, false, false, Align::Vec8);
    c.tile.2 = 128;
    let k = swizzle::run(Kernel::naive(c)).unwrap();
    assert_eq!(lds::read_conflicts(&k), 0);
    // Rows that are not whole 16-byte chunks have no swizzle.
    let mut c = cfg(Arch::Gfx942, false, false, Align::Vec8);
    c.tile.2 = 4;
    assert!(matches!(swizzle::run(Kernel::naive(c)), Err(swizzle::Reason::RowShape { .. })));
}

/// The transposed copies' writes are conflict-free too: the swizzle moves chunks across
/// the rows of a bank line (64-byte rows on gfx942), and on gfx950 KT = 64 puts a wave on
/// one 128-byte row. The per-row XOR alone leaves 16-32 cycles per K step.
#[test]
fn swizzle_makes_every_transpose_conflict_free() {
    for (arch, kt) in [(Arch::Gfx942, 32), (Arch::Gfx950, 64), (Arch::Gfx942, 64)] {
        for (ta, tb) in [(false, false), (false, true), (true, false), (true, true)] {
            let mut c = cfg(arch, ta, tb, Align::Vec8);
            c.tile.2 = kt;
            let k = swizzle::run(Kernel::naive(c)).unwrap();
            assert_eq!(lds::k_step_conflicts(&k), (0, 0), "{arch} KT {kt} ta {ta} tb {tb}: {:?}", k.swizzle);
        }
    }
    // The old per-row swizzle on gfx942 KT 32, NN: the transposed writes of A conflict.
    let mut k = Kernel::naive(cfg(Arch::Gfx942, false, false, Align::Vec8));
    k.swizzle = lds::swizzle_for(Arch::Gfx942, 64).unwrap();
    assert_eq!(lds::read_conflicts(&k), 0);
    assert!(lds::k_step_conflicts(&k).1 > 0);
}

/// Every swizzle candidate is a bijection on the tile (no two elements share a byte).
#[test]
fn swizzles_are_bijections() {
    for arch in Arch::ALL {
        for rb in [64, 128, 256] {
            for sw in lds::swizzle_candidates(arch, rb) {
                let bytes = 64 * rb;
                let mut seen = vec![false; bytes as usize / 16];
                for q in 0..bytes / 16 {
                    let p = sw.apply(q * 16);
                    assert!(p < bytes && p % 16 == 0, "{sw:?}");
                    assert!(!seen[(p / 16) as usize], "{sw:?} maps two chunks to {p}");
                    seen[(p / 16) as usize] = true;
                    assert_eq!(sw.apply(p), q * 16, "{sw:?} is its own inverse");
                }
            }
        }
    }
}

#[test]
fn bank_model_counts_known_patterns() {
    let same_bank = lds::DsAccess { width: 4, addrs: (0..64).map(|l| l * 128).collect() };
    // 32 lanes per phase on gfx942, all in bank 0 at distinct dwords: 31 extra cycles each.
    assert_eq!(lds::conflict_cycles(Arch::Gfx942, &same_bank), 2 * 31);
    let broadcast = lds::DsAccess { width: 4, addrs: vec![64; 64] };
    assert_eq!(lds::conflict_cycles(Arch::Gfx942, &broadcast), 0);
    let linear = lds::DsAccess { width: 16, addrs: (0..64).map(|l| l * 16).collect() };
    assert_eq!(lds::conflict_cycles(Arch::Gfx950, &linear), 0);
}

#[test]
fn epilogue_plans_or_declines() {
    let k = epilogue::run(Kernel::naive(cfg(Arch::Gfx942, false, false, Align::Vec8))).unwrap();
    let p = k.epilogue_plan.unwrap();
    assert!(p.beta_zero_path && p.legacy_alpha);
    let mut c = cfg(Arch::Gfx942, false, false, Align::Vec8);
    c.c_type = DType::Fp8E4M3Fnuz;
    assert_eq!(epilogue::run(Kernel::naive(c)), Err(epilogue::Reason::OutputDtype(DType::Fp8E4M3Fnuz)));
    let mut c = cfg(Arch::Gfx950, false, false, Align::Vec8);
    c.mfma = gemm_compiler::ir::MfmaShape { m: 32, n: 16, k: 8 };
    assert_eq!(epilogue::run(Kernel::naive(c)), Err(epilogue::Reason::Shape(32, 16)));
}

#[test]
fn run_all_reports_the_declining_pass() {
    // Three LDS buffers of a 128x128x64 tile (96 KiB) exceed gfx942's 64 KiB.
    let mut c = cfg(Arch::Gfx942, false, false, Align::Vec8);
    c.stages = 3;
    c.tile.2 = 64;
    assert!(matches!(
        gemm_compiler::optimise(c),
        Err(Declined::Pipeline(pipeline::Reason::LdsTooSmall { buffers: 3, .. }))
    ));
}

/// Configurations outside the space or the arch's limits are declined before any pass,
/// each with its typed reason.
#[test]
fn unfit_configurations_are_declined_with_reasons() {
    use gemm_compiler::fit::Unfit;
    use gemm_compiler::ir::MfmaShape;
    let base = cfg(Arch::Gfx950, false, false, Align::Vec8);
    let m16 = MfmaShape::native_16(Arch::Gfx950);
    type Want = fn(&Unfit) -> bool;
    let cases: Vec<(KernelConfig, Want)> = vec![
        (base.with_shape((128, 128, 64), (2, 2), MfmaShape::native_32(Arch::Gfx942), 2), |e| {
            matches!(e, Unfit::MfmaShape { .. })
        }),
        (base.with_shape((128, 128, 64), (1, 2), m16, 2), |e| matches!(e, Unfit::Waves(2))),
        (base.with_shape((128, 128, 64), (3, 2), m16, 2), |e| matches!(e, Unfit::Waves(6))),
        (base.with_shape((512, 128, 64), (2, 2), m16, 2), |e| matches!(e, Unfit::TileMn(512, 128))),
        (base.with_shape((128, 128, 16), (2, 2), m16, 2), |e| matches!(e, Unfit::TileK { kt: 16, .. })),
        (base.with_shape((64, 128, 64), (8, 1), m16, 2), |e| matches!(e, Unfit::WaveTile { op: Operand::A, .. })),
        (base.with_shape((256, 256, 128), (2, 4), m16, 2), |e| matches!(e, Unfit::Vgprs { .. })),
    ];
    for (c, want) in cases {
        match gemm_compiler::optimise(c) {
            Err(Declined::Fit(e)) => assert!(want(&e), "{}: unexpected reason {e}", c.name()),
            other => panic!("{}: expected a fit error, got {:?}", c.name(), other.map(|k| k.applied)),
        }
    }
    // Two 48 KiB buffers exceed gfx942's 64 KiB of LDS: the pipeline pass says so.
    let big = cfg(Arch::Gfx942, true, false, Align::Vec8).with_shape(
        (256, 128, 64),
        (2, 4),
        MfmaShape::native_32(Arch::Gfx942),
        2,
    );
    assert!(matches!(gemm_compiler::optimise(big), Err(Declined::Pipeline(pipeline::Reason::LdsTooSmall { .. }))));
}

#[test]
fn lowering_needs_the_passes() {
    let k = Kernel::naive(cfg(Arch::Gfx942, false, false, Align::Vec8));
    assert_eq!(lower::lower(&k).unwrap_err(), lower::LowerError::PassMissing("buffer_ops"));
}

#[test]
fn compiling_twice_gives_the_same_bytes() {
    for c in gemm_compiler::catalogue::configs().into_iter().step_by(7) {
        let (a, b) = (compile(c).unwrap(), compile(c).unwrap());
        assert!(a.code_object == b.code_object, "{}", a.name);
    }
}

#[test]
fn waits_and_nops_are_derived_not_constant() {
    let k = compile(cfg(Arch::Gfx942, false, false, Align::Vec8)).unwrap();
    let text = gemm_compiler::disassemble(&k);
    // Partial waits: the first MFMA waits only for the fragments it needs.
    assert!(text.contains("s_waitcnt lgkmcnt(5)"), "{text}");
    // Every barrier is preceded by a wait for this wave's LDS operations.
    let lines: Vec<&str> = text.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if *l == "s_barrier" {
            assert!(
                lines[..i].iter().rev().take(3).any(|p| p.contains("lgkmcnt(0)")),
                "barrier at {i} without LDS wait"
            );
        }
    }
    // gfx950 needs one more wait state after XDL results than gfx942.
    let k950 = compile(cfg(Arch::Gfx950, false, false, Align::Vec8)).unwrap();
    assert!(k950.nop_wait_states >= k.nop_wait_states);
}
