//! Block-scaled fp8 kernels (`ir::BlockScale::Fp8Blocks`, `lower/block_fp8.rs`) in the emulator
//! with the race detector and hazard checker on, both archs: DeepSeek-V3's 128 x 128 weight
//! blocks (A) and 1 x 128 activation groups (B) against `gemm_core::block_fp8::block_fp8_gemm`.
//!
//! Elements are multiples of 1/4 in [-2, 2] and the scales signed powers of two in [1/2, 2], so
//! every group sum, scaled add and accumulation is exact in f32: the kernel must equal the exact
//! reference bit for bit. The padding of the data rows holds the fp8 NaN and the scale
//! padding NaN: a kernel that read either would put NaN into C.

use gemm_compiler::ir::{Align, Arch, BlockScale, KernelConfig, MfmaShape};
use gemm_compiler::{catalogue, compile, kernel_args, CompiledKernel};
use gemm_core::block_fp8::{block_fp8_gemm, BlockFp8Matrix};
use gemm_core::fp8::Fp8Format;
use gemm_core::{bf16, f16, DType};
use gemm_emu::{Device, LaunchOptions, Mode, Schedule};
use rand::{Rng, SeedableRng};

fn upload(dev: &Device, b: &[u8]) -> u64 {
    let p = dev.alloc((b.len() as u64).next_multiple_of(16).max(16)).unwrap();
    dev.copy_in(p, b).unwrap();
    p
}

fn format(arch: Arch) -> Fp8Format {
    match arch {
        Arch::Gfx942 => Fp8Format::E4M3FNUZ,
        Arch::Gfx950 => Fp8Format::E4M3FN,
    }
}

/// A random `rows x k` block-scaled matrix with blocks of `block` (exact-friendly values).
fn matrix(
    f: Fp8Format,
    rows: usize,
    k: usize,
    block: (usize, usize),
    rng: &mut rand_chacha::ChaCha8Rng,
) -> BlockFp8Matrix {
    let codes = (0..rows * k).map(|_| f.encode(rng.gen_range(-8i32..=8) as f32 * 0.25)).collect();
    let nb = rows.div_ceil(block.0) * k.div_ceil(block.1);
    let scales = (0..nb)
        .map(|_| (rng.gen_range(-1i32..=1) as f32).exp2() * if rng.gen_bool(0.25) { -1.0 } else { 1.0 })
        .collect();
    BlockFp8Matrix::new(f, rows, k, block, codes, scales).unwrap()
}

#[derive(Clone, Copy, Debug)]
struct Case {
    /// Rows of op(A) (the weights' output features), columns of op(B) (tokens), K.
    m: usize,
    n: usize,
    k: usize,
    pad: usize,
    alpha: f32,
    beta: f32,
}

const CASES: [Case; 7] = [
    Case { m: 1, n: 1, k: 1, pad: 3, alpha: 1.0, beta: 0.0 },
    // K = 0: C = beta * C.
    Case { m: 130, n: 5, k: 0, pad: 7, alpha: 1.0, beta: 0.5 },
    Case { m: 130, n: 33, k: 200, pad: 5, alpha: 1.5, beta: 0.0 },
    Case { m: 33, n: 18, k: 384, pad: 0, alpha: -0.5, beta: 0.75 },
    Case { m: 257, n: 129, k: 129, pad: 9, alpha: 1.0, beta: -1.25 },
    Case { m: 64, n: 40, k: 600, pad: 16, alpha: 2.0, beta: 0.0 },
    // A K tail of whole 16-byte vectors (304 = 2 x 128 + 48): the lean prologue's vector loads
    // (`schedule::slim_edges`), not the element loads of the tails above.
    Case { m: 129, n: 65, k: 304, pad: 32, alpha: 0.5, beta: 1.0 },
];

fn run(kern: &CompiledKernel, cs: &Case, sched: Schedule) {
    let (r, wrong) = run_report(kern, cs, sched);
    assert!(r.reports.is_empty(), "{} {cs:?} {sched:?}: checker findings:\n{r}", kern.name);
    if let Some(e) = wrong.first() {
        panic!("{} {cs:?} {sched:?}: {} wrong, the first {e}", kern.name, wrong.len());
    }
}

/// Runs `kern` on `cs`: the launch's checker report and the wrong elements of C (described).
fn run_report(kern: &CompiledKernel, cs: &Case, sched: Schedule) -> (gemm_emu::LaunchReport, Vec<String>) {
    let cfg = kern.config;
    let f = format(cfg.arch);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(sched.seed ^ (cs.m * 1000 + cs.k) as u64);
    let w = matrix(f, cs.m, cs.k, (128, 128), &mut rng);
    let x = matrix(f, cs.n, cs.k, (1, 128), &mut rng);
    let ld = (cs.k + cs.pad).next_multiple_of(16);
    let groups = cs.k.div_ceil(128);
    let lds = groups + cs.pad % 3;
    let data = |mat: &BlockFp8Matrix| {
        let mut out = vec![f.nan_code(); mat.rows() * ld];
        for r in 0..mat.rows() {
            out[r * ld..r * ld + cs.k].copy_from_slice(&mat.codes()[r * cs.k..(r + 1) * cs.k]);
        }
        out
    };
    // Row-major scales (row stride `lds`, group stride 1), or column-major (row stride 1,
    // group stride `rows + pad`: the DeepSeek GEMM challenge's activation scales).
    let col_major = cs.k.is_multiple_of(3);
    let strides = |rows: usize, col: bool| if col { (1, rows + cs.pad % 3) } else { (lds, 1) };
    let scales = |mat: &BlockFp8Matrix, rows: usize, col: bool| {
        let (rs, gs) = strides(rows, col);
        let mut out = vec![f32::NAN; if groups == 0 { 1 } else { (rows - 1) * rs + (groups - 1) * gs + 1 }];
        for r in 0..rows {
            for g in 0..groups {
                out[r * rs + g * gs] = mat.scales()[r * groups + g];
            }
        }
        bytemuck::cast_slice::<f32, u8>(&out).to_vec()
    };
    let ldc = cs.m + 3;
    let esize = cfg.c_type.size_bytes();
    let c0f: Vec<f32> = (0..ldc * cs.n)
        .map(|_| if cs.beta == 0.0 { f32::NAN } else { rng.gen_range(-8i32..=8) as f32 * 0.5 })
        .collect();
    let enc = |v: f32| -> Vec<u8> {
        match cfg.c_type {
            DType::F32 => v.to_le_bytes().to_vec(),
            DType::Bf16 => bf16::from_f32(v).to_bits().to_le_bytes().to_vec(),
            _ => f16::from_f32(v).to_bits().to_le_bytes().to_vec(),
        }
    };
    let c0: Vec<u8> = c0f.iter().flat_map(|v| enc(*v)).collect();
    let dev = Device::new(cfg.arch);
    let (pa, pb, pc) = (upload(&dev, &data(&w)), upload(&dev, &data(&x)), upload(&dev, &c0));
    let (psa, psb) = (upload(&dev, &scales(&w, cs.m.div_ceil(128), false)), upload(&dev, &scales(&x, cs.n, col_major)));
    let base = kernel_args::pack(
        pa,
        pb,
        pc,
        cs.m as u32,
        cs.n as u32,
        cs.k as u32,
        ld as u32,
        ld as u32,
        ldc as u32,
        cs.alpha,
        cs.beta,
    );
    let (rsb, gsb) = strides(cs.n, col_major);
    let mut args = kernel_args::pack_block(&base, psa, psb, lds as u32, rsb as u32);
    kernel_args::with_group_strides(&mut args, 1, gsb as u32);
    let (wg, block) = kernel_args::launch_workgroups(cs.m as u32, cs.n as u32, cfg.tile, cfg.threads());
    let opts = LaunchOptions { schedule: sched, threads: 2, ..Default::default() };
    let r = dev
        .launch_with(&kern.code_object, &kern.name, wg, block, &args[..kernel_args::size(&cfg) as usize], &opts)
        .unwrap();
    let mut out = vec![0u8; c0.len()];
    dev.copy_out(pc, &mut out).unwrap();
    let mut want = vec![0f32; cs.m * cs.n];
    for i in 0..cs.m {
        for j in 0..cs.n {
            want[i * cs.n + j] = c0f[i + j * ldc];
        }
    }
    block_fp8_gemm(&w, &x, &mut want, cs.alpha, cs.beta).unwrap();
    let mut wrong = vec![];
    for j in 0..cs.n {
        for i in 0..ldc {
            let at = (i + j * ldc) * esize;
            let got = &out[at..at + esize];
            if i >= cs.m {
                if got != &c0[at..at + esize] {
                    wrong.push(format!("({i},{j}): C padding written"));
                }
                continue;
            }
            let wv = want[i * cs.n + j];
            if got != &enc(wv)[..] {
                wrong.push(format!("({i},{j}): {got:?}, want {wv}"));
            }
        }
    }
    (r, wrong)
}

fn config(arch: Arch, c: DType) -> KernelConfig {
    let ab = if arch == Arch::Gfx942 { DType::Fp8E4M3Fnuz } else { DType::Fp8E4M3 };
    let mut cfg = KernelConfig::new(arch, ab, c, true, false, Align::Vec8).with_shape(
        (128, 128, 128),
        (2, 2),
        MfmaShape::fp8_32(arch),
        2,
    );
    cfg.block_scale = BlockScale::Fp8Blocks;
    cfg
}

/// Both archs, both MFMA shapes, every output type, the edge shapes, every scheduling mode.
#[test]
fn block_fp8_both_archs() {
    for arch in Arch::ALL {
        for (oi, c) in [DType::F32, DType::Bf16, DType::F16].into_iter().enumerate() {
            let mut cfg = config(arch, c);
            if oi == 1 {
                cfg.mfma = MfmaShape::fp8_16(arch);
            }
            let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
            for (ci, cs) in CASES.iter().enumerate() {
                let mode = Mode::ALL[(ci + oi + arch as usize) % Mode::ALL.len()];
                run(&k, cs, Schedule { mode, seed: 11 + ci as u64 });
            }
        }
    }
}

/// The interleave schedule (sums carried into the next tile, `lower/block_fp8.rs`): both
/// archs, both MFMA shapes, 2 and 4 slices, register-staged and (gfx950) LDS-DMA copies,
/// every output type, the edge shapes, every scheduling mode.
#[test]
fn block_fp8_interleaved_both_archs() {
    use gemm_compiler::schedule::Schedule as Loop;
    for arch in Arch::ALL {
        for (oi, c) in [DType::F32, DType::Bf16, DType::F16].into_iter().enumerate() {
            let mut cfg = config(arch, c);
            cfg.schedule = Loop::Interleave { slices: if oi == 2 { 2 } else { 4 } };
            if oi == 1 {
                cfg.mfma = MfmaShape::fp8_16(arch);
            }
            if oi == 2 {
                cfg.direct_to_lds = gemm_compiler::ir::DmaPolicy::Never;
            }
            assert!(gemm_compiler::lower::fp8_block_carries_sums(&cfg));
            let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
            for (ci, cs) in CASES.iter().enumerate() {
                let mode = Mode::ALL[(ci + oi + 1 + arch as usize) % Mode::ALL.len()];
                run(&k, cs, Schedule { mode, seed: 23 + ci as u64 });
            }
        }
    }
}

/// gfx942's catalogue shape: the interleave with 4x1 waves of 32x128 (one M block and four N
/// blocks per wave) and the lean prologue and epilogue: every output type, both MFMA shapes,
/// 2 and 4 slices, every edge shape in every scheduling mode.
#[test]
fn block_fp8_interleaved_4x1_waves_gfx942() {
    use gemm_compiler::schedule::Schedule as Loop;
    for (oi, c) in [DType::F32, DType::Bf16, DType::F16].into_iter().enumerate() {
        let mut cfg = config(Arch::Gfx942, c).with_shape((128, 128, 128), (4, 1), MfmaShape::fp8_32(Arch::Gfx942), 2);
        cfg.block_scale = BlockScale::Fp8Blocks;
        cfg.schedule = Loop::Interleave { slices: if oi == 2 { 2 } else { 4 } };
        if oi == 1 {
            cfg.mfma = MfmaShape::fp8_16(Arch::Gfx942);
        }
        assert!(gemm_compiler::schedule::slim_edges(&cfg));
        let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        for (ci, cs) in CASES.iter().enumerate() {
            for (mi, mode) in Mode::ALL.into_iter().enumerate() {
                if (ci + mi + oi) % 2 == 1 {
                    continue;
                }
                run(&k, cs, Schedule { mode, seed: 83 + ci as u64 });
            }
        }
    }
}

/// The 8-wave interleave (`schedule::interleave8`: the loop rotated, the copies a tile ahead,
/// the carried sums in VGPRs), gfx942's catalogue shapes (128x128, 4x2 waves of 32x64, and
/// 128x64 of 32x32): every
/// output type, both MFMA shapes, 2 and 4 slices, every edge shape in every scheduling mode,
/// two waves per SIMD resident.
#[test]
fn block_fp8_interleaved_8_waves_gfx942() {
    use gemm_compiler::schedule::Schedule as Loop;
    for (oi, c) in [DType::F32, DType::Bf16, DType::F16, DType::Bf16].into_iter().enumerate() {
        let mut cfg = interleave8(c, if oi == 2 { 2 } else { 4 }, oi == 1);
        if oi == 3 {
            // The half tile (128x64: 8 waves of 32x32, one block each).
            cfg = cfg.with_shape((128, 64, 128), (4, 2), MfmaShape::fp8_32(Arch::Gfx942), 2);
        }
        assert!(
            gemm_compiler::lower::fp8_block_carries_sums(&cfg) && gemm_compiler::lower::fp8_block_sums_in_vgprs(&cfg)
        );
        assert!(matches!(cfg.schedule, Loop::Interleave { .. }));
        let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        assert_eq!(gemm_compiler::fit::resident(cfg.waves, k.usage.vgprs, k.usage.agprs), Ok(2), "{}", k.name);
        for (ci, cs) in CASES.iter().enumerate() {
            for (mi, mode) in Mode::ALL.into_iter().enumerate() {
                if (ci + mi + oi) % 2 == 1 {
                    continue;
                }
                run(&k, cs, Schedule { mode, seed: 97 + ci as u64 });
            }
        }
    }
}

/// The gfx942 8-wave interleave configuration (`slices`, the 16x16 MFMAs when `small`).
fn interleave8(c: DType, slices: u8, small: bool) -> KernelConfig {
    let mfma = if small { MfmaShape::fp8_16(Arch::Gfx942) } else { MfmaShape::fp8_32(Arch::Gfx942) };
    let mut cfg = config(Arch::Gfx942, c).with_shape((128, 128, 128), (4, 2), mfma, 2);
    cfg.block_scale = BlockScale::Fp8Blocks;
    cfg.schedule = gemm_compiler::schedule::Schedule::Interleave { slices };
    cfg
}

/// Planted bugs in the 8-wave interleave (`plant.rs`): the barrier that publishes the next
/// tile removed, and the loop's first `vmcnt` one too weak (the staging registers written to
/// LDS before their loads land). The checkers report each and the longest-latency mode turns
/// it into wrong numbers.
#[test]
fn block_fp8_interleaved_8_waves_planted_bugs() {
    use gemm_compiler::plant::PlantedBug;
    use gemm_compiler::{compile_kernel_with, optimise, Options};
    let cs = Case { m: 128, n: 128, k: 640, pad: 0, alpha: 1.0, beta: 0.0 };
    let cfg = interleave8(DType::F32, 4, false);
    let clean = compile(cfg).unwrap();
    let (r, wrong) = run_report(&clean, &cs, Schedule { mode: Mode::LongestLatency, seed: 5 });
    assert!(r.reports.is_empty() && wrong.is_empty(), "unplanted kernel: {r} {wrong:?}");
    for bug in [PlantedBug::BarrierRemoved, PlantedBug::WeakVmcnt] {
        let k = compile_kernel_with(optimise(cfg).unwrap(), Options { plant: Some(bug), ..Default::default() })
            .unwrap_or_else(|e| panic!("{bug:?}: {e}"));
        let (r, wrong) = run_report(&k, &cs, Schedule { mode: Mode::LongestLatency, seed: 5 });
        assert!(!r.reports.is_empty(), "{bug:?}: checkers silent");
        assert!(!wrong.is_empty(), "{bug:?}: longest-latency schedule still right");
    }
}

/// The slim ping-pong (gfx950, the `fp8pp` tile: 256x256x128, 8 waves, LDS-DMA), each K step's
/// MFMAs into rotating temporaries (`lower/block_fp8.rs`): every output type, the edge shapes,
/// every scheduling mode, and the register-staged copies.
#[test]
fn block_fp8_slim_ping_pong() {
    use gemm_compiler::schedule::Schedule as Loop;
    for (oi, c) in [DType::F32, DType::Bf16, DType::F16].into_iter().enumerate() {
        let mut cfg = config(Arch::Gfx950, c).with_shape((256, 256, 128), (2, 4), MfmaShape::fp8_32(Arch::Gfx950), 2);
        cfg.block_scale = BlockScale::Fp8Blocks;
        cfg.schedule = Loop::PingPongSlim { clusters: 2 };
        assert!(gemm_compiler::lower::fp8_block_rotates(&cfg));
        let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        // Two waves per SIMD (8 waves on 4 SIMDs): at most 256 VGPR+AGPR per lane.
        assert_eq!(gemm_compiler::fit::resident(cfg.waves, k.usage.vgprs, k.usage.agprs), Ok(2), "{}", k.name);
        for (ci, cs) in CASES.iter().enumerate() {
            let mode = Mode::ALL[(ci + oi) % Mode::ALL.len()];
            run(&k, cs, Schedule { mode, seed: 61 + ci as u64 });
        }
    }
}

/// What the space declines for block-scaled fp8.
#[test]
fn block_fp8_unfit_configurations_are_declined() {
    use gemm_compiler::fit::{check, Unfit};
    let ok = config(Arch::Gfx950, DType::F32);
    assert_eq!(check(&ok), Ok(()));
    assert!(ok.name().contains("_bsfp8_"), "{}", ok.name());
    let no = |c: KernelConfig| matches!(check(&c), Err(Unfit::BlockScale(_)));
    assert!(no(KernelConfig { trans_a: false, ..ok }));
    assert!(no(KernelConfig { tile: (128, 128, 64), ..ok }));
    assert!(no(KernelConfig { schedule: gemm_compiler::schedule::Schedule::PingPong { clusters: 1 }, ..ok }));
    // The interleave schedule carries two sets of sums in AGPRs: 256 at most.
    let il = gemm_compiler::schedule::Schedule::Interleave { slices: 4 };
    assert_eq!(check(&KernelConfig { schedule: il, ..ok }), Ok(()));
    assert!(no(KernelConfig { schedule: il, tile: (256, 256, 128), ..ok }));
    assert!(no(ok.with_b_type(DType::Fp8E5M2)));
    // The slim ping-pong on the fp8pp tile fits with two rotating temporaries; register-staged
    // copies' staging does not fit beside them.
    let slim = KernelConfig {
        schedule: gemm_compiler::schedule::Schedule::PingPongSlim { clusters: 2 },
        ..ok.with_shape((256, 256, 128), (2, 4), MfmaShape::fp8_32(Arch::Gfx950), 2)
    };
    assert_eq!(check(&slim), Ok(()));
    let staged_slim = KernelConfig { direct_to_lds: gemm_compiler::ir::DmaPolicy::Never, ..slim };
    assert!(matches!(check(&staged_slim), Err(Unfit::Vgprs { .. })), "{:?}", check(&staged_slim));
    // With register-staged copies the group sums move to AGPRs (staging, sums and accumulators
    // would not fit 256 VGPRs).
    let staged = KernelConfig { direct_to_lds: gemm_compiler::ir::DmaPolicy::Never, ..ok };
    assert_eq!(check(&staged), Ok(()));
    assert!(
        gemm_compiler::lower::fp8_block_sums_in_vgprs(&ok) && !gemm_compiler::lower::fp8_block_sums_in_vgprs(&staged)
    );
}

/// The catalogue's block-scaled fp8 kernels: both archs, each on the edge shapes.
#[test]
fn block_fp8_catalogue_kernels() {
    let ks: Vec<_> = catalogue::configs()
        .into_iter()
        .filter(|c| c.block_scale == BlockScale::Fp8Blocks)
        .map(|c| compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name())))
        .collect();
    for arch in Arch::ALL {
        assert!(ks.iter().any(|k| k.config.arch == arch), "a block-scaled fp8 kernel for {arch}");
    }
    for (i, k) in ks.iter().enumerate() {
        for (ci, cs) in CASES.iter().enumerate() {
            if (i + ci) % 2 == 1 && ci != 0 {
                continue;
            }
            let mode = Mode::ALL[(i + ci) % Mode::ALL.len()];
            run(k, cs, Schedule { mode, seed: 40 + ci as u64 });
        }
    }
}

/// The epilogue staged through LDS (`lower.rs` `store_staged`) on the slim ping-pong's bf16
/// and f16 C (`bsfp8pp`): compiled in (two rounds of 16 `ds_write_b64` per wave, nothing else in the
/// kernel writes LDS from registers), right bit for bit with `beta == 0` (C NaN-filled: a
/// stored column the kernel skipped stays NaN) on an interior tile and on tiles cut by `n`
/// inside a group of 8 columns (their lanes store through offsets past NUM_RECORDS), for one,
/// two and three K tiles (the region lies in LDS buffer 1, 0, 1: the one the drain does not
/// read), beside tiles cut by `m` (element stores); the same shapes with `beta != 0` take the
/// paired stores. Checkers silent in every scheduling mode used.
#[test]
fn block_fp8_slim_staged_epilogue() {
    use gemm_compiler::schedule::Schedule as Loop;
    let cases = [
        // One K tile; columns 256..299 in the second tile column.
        Case { m: 256, n: 300, k: 100, pad: 8, alpha: 1.5, beta: 0.0 },
        // Two K tiles, a K tail; 7 columns in the last tile, rows 256..299 by elements.
        Case { m: 300, n: 263, k: 200, pad: 24, alpha: -0.5, beta: 0.0 },
        // Three K tiles, column-major activation scales (K a multiple of 3).
        Case { m: 256, n: 40, k: 384, pad: 5, alpha: 2.0, beta: 0.0 },
    ];
    for (oi, c) in [DType::Bf16, DType::F16].into_iter().enumerate() {
        let mut cfg = config(Arch::Gfx950, c).with_shape((256, 256, 128), (2, 4), MfmaShape::fp8_32(Arch::Gfx950), 2);
        cfg.block_scale = BlockScale::Fp8Blocks;
        cfg.schedule = Loop::PingPongSlim { clusters: 2 };
        let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        let writes = k.insts.iter().filter(|x| x.op.name() == "ds_write_b64").count();
        assert_eq!(writes, 32, "{}: the staged epilogue's LDS writes", k.name);
        for (ci, cs) in cases.iter().enumerate() {
            // bf16 every case; f16 the first and the last (C cut by n, K in 1 and 3 tiles).
            if oi == 1 && ci == 1 {
                continue;
            }
            for (bi, beta) in [0.0f32, 0.75].into_iter().enumerate() {
                let mode = Mode::ALL[(2 * ci + bi + oi) % Mode::ALL.len()];
                run(&k, &Case { beta, ..*cs }, Schedule { mode, seed: 170 + (2 * ci + bi) as u64 });
            }
        }
    }
}

/// Planted bugs in the slim ping-pong of block-scaled fp8 (`bsfp8pp`: the adds of each dot
/// cluster's last MFMA after its barrier, the scale refill in the second memory cluster):
/// the barrier that publishes the next tile removed, and the loop's first `vmcnt` one too
/// weak. The checkers report each and the longest-latency mode turns it into wrong numbers.
#[test]
fn block_fp8_slim_ping_pong_planted_bugs() {
    use gemm_compiler::plant::PlantedBug;
    use gemm_compiler::{compile_kernel_with, optimise, Options};
    let cs = Case { m: 256, n: 256, k: 384, pad: 0, alpha: 1.0, beta: 0.0 };
    let mut cfg =
        config(Arch::Gfx950, DType::Bf16).with_shape((256, 256, 128), (2, 4), MfmaShape::fp8_32(Arch::Gfx950), 2);
    cfg.block_scale = BlockScale::Fp8Blocks;
    cfg.schedule = gemm_compiler::schedule::Schedule::PingPongSlim { clusters: 2 };
    let clean = compile(cfg).unwrap();
    let (r, wrong) = run_report(&clean, &cs, Schedule { mode: Mode::LongestLatency, seed: 5 });
    assert!(r.reports.is_empty() && wrong.is_empty(), "unplanted kernel: {r} {wrong:?}");
    for bug in [PlantedBug::BarrierRemoved, PlantedBug::WeakVmcnt] {
        let k = compile_kernel_with(optimise(cfg).unwrap(), Options { plant: Some(bug), ..Default::default() })
            .unwrap_or_else(|e| panic!("{bug:?}: {e}"));
        let (r, wrong) = run_report(&k, &cs, Schedule { mode: Mode::LongestLatency, seed: 5 });
        assert!(!r.reports.is_empty(), "{bug:?}: checkers silent");
        assert!(!wrong.is_empty(), "{bug:?}: longest-latency schedule still right");
    }
}
