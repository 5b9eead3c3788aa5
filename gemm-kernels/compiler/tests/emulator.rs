//! Every catalogue kernel on both archs in the emulator (gemm-emu), against
//! `gemm_core::reference`, with the race detector and hazard checker on, under every
//! scheduling mode: awkward shapes (1x1x1, 17x33x65, 255x257x129), all transposes,
//! alpha/beta including beta = 0 with NaN in C, leading dimensions larger than the matrix.

use gemm_compiler::ir::{Align, KernelConfig};
use gemm_compiler::{catalogue, compile, kernel_args, CompiledKernel};
use gemm_core::{bf16, f16, DType, Element, GemmProblem, Layout, Transpose};
use gemm_emu::{Device, LaunchOptions, Mode, Schedule};
use rand::{Rng, SeedableRng};

fn fill<T: Element>(n: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<T> {
    (0..n).map(|_| T::from_f32(rng.gen_range(-2i32..=2) as f32 * 0.5 + rng.gen_range(-0.25f32..0.25))).collect()
}

fn bytes<T: Element>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

fn upload(dev: &Device, b: &[u8]) -> u64 {
    // Room up to the next 16 bytes: NUM_RECORDS is the span rounded up to a dword.
    let p = dev.alloc((b.len() as u64).next_multiple_of(16).max(16)).unwrap();
    dev.copy_in(p, b).unwrap();
    p
}

#[derive(Clone)]
struct Case {
    m: usize,
    n: usize,
    k: usize,
    pad: usize,
    alpha: f32,
    beta: f32,
}

fn run<AB: Element, C: Element>(k: &CompiledKernel, case: &Case, sched: Schedule) {
    let cfg = k.config;
    let t = |b| Transpose::from_bool(b);
    let mut p = GemmProblem::new(case.m, case.n, case.k)
        .with_layout(Layout::ColMajor)
        .with_transposes(t(cfg.trans_a), t(cfg.trans_b))
        .with_scalars(case.alpha, case.beta)
        .with_dtypes(AB::DTYPE, AB::DTYPE, C::DTYPE)
        .with_xf32(cfg.xf32());
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
    let waves = (wg[0] * wg[1]) as u64 * cfg.waves as u64;
    if let gemm_compiler::schedule::Schedule::Decode { unroll } = cfg.schedule {
        // Decode kernels (`lower/decode.rs`): every wave runs each whole K step of the
        // workgroup and the tail, `4 * unroll / dwords-per-MFMA-operand` MFMAs per block of
        // C each; one barrier per wave when several waves meet in LDS.
        let steps = p.k.div_ceil(cfg.tile.2 as usize) as u64;
        let per_step = 4 * unroll as u64 / (cfg.mfma.k / 4 * cfg.ab_bytes() / 4) as u64;
        let blocks = (cfg.tile.0 / 16 * cfg.tile.1 / 16) as u64;
        assert_eq!(r.counts.mfma, waves * steps * per_step * blocks, "{}", k.name);
        assert_eq!(r.counts.barrier, if cfg.waves > 1 { waves } else { 0 }, "{}", k.name);
    } else if let gemm_compiler::schedule::Schedule::DecodeRows { unroll } = cfg.schedule {
        // Waves on the rows: each wave runs every K step on its own row blocks, one barrier
        // per whole step and two for the tail (`lower/decode_rows.rs`).
        let (whole, tail) = ((p.k / cfg.tile.2 as usize) as u64, !p.k.is_multiple_of(cfg.tile.2 as usize));
        let per_step = 4 * unroll as u64 / (cfg.mfma.k / 4 * cfg.ab_bytes() / 4) as u64;
        let blocks = (cfg.tile.0 / 16 / cfg.waves * cfg.tile.1 / 16) as u64;
        let steps = whole + u64::from(tail);
        assert_eq!(r.counts.mfma, waves * steps * per_step * blocks, "{}", k.name);
        assert_eq!(r.counts.barrier, waves * (whole + 2 * u64::from(tail)), "{}", k.name);
    } else {
        run_counts(k, &r, p.k, waves);
    }
    let mut out = vec![0u8; spans.c * C::DTYPE.size_bytes()];

    dev.copy_out(pc, &mut out).unwrap();
    let c1: Vec<C> = bytemuck::cast_slice(&out).to_vec();
    let rep = gemm_core::reference::check(&p, &a, &b, &c0, &c1, None).unwrap();
    assert!(rep.passed(), "{} {}x{}x{} alpha {} beta {} {sched:?}: {rep:?}", k.name, p.m, p.n, p.k, p.alpha, p.beta);
    // Padding between columns of C is untouched.
    for j in 0..p.n {
        for i in p.m..p.ldc.min(spans.c - j * p.ldc) {
            let (x, y) = (c0[i + j * p.ldc], c1[i + j * p.ldc]);
            assert!(bytes(&[x]) == bytes(&[y]), "{}: C padding ({i},{j}) written", k.name);
        }
    }
}

/// The emulator's counts agree with the static figures: every wave runs ceil(k/KT) K tiles
/// (at least one) of `mfma_per_k_step` MFMAs and one barrier each (the pipelined loop; a
/// loop schedule has its own count, `schedule/`).
fn run_counts(k: &CompiledKernel, r: &gemm_emu::LaunchReport, kk: usize, waves: u64) {
    let tiles = (kk as u64).div_ceil(k.config.tile.2 as u64).max(1);
    assert_eq!(
        r.counts.mfma,
        waves * (tiles * k.stats.mfma_per_k_step as u64 + k.stats.zeroing_mfmas as u64),
        "{}",
        k.name
    );
    let barriers = match &k.kernel.schedule {
        None => tiles,
        Some(ls) => {
            let (around, per_tile) = ls.barriers(0);
            around + per_tile * (tiles - 1) + 1
        }
    };
    assert_eq!(r.counts.barrier, waves * barriers, "{}", k.name);
}

fn run_kernel(k: &CompiledKernel, case: &Case, sched: Schedule) {
    if k.config.grouped {
        // A grouped kernel runs the case as the second of three groups, between two empty ones.
        let empty = |m, n| Case { m, n, k: case.k, pad: 0, alpha: 1.0, beta: 0.0 };
        return run_grouped_kernel(k, &[empty(0, 5), case.clone(), empty(7, 0)], sched);
    }
    if k.config.fusion != gemm_compiler::ir::Fusion::NONE {
        let clamp = (f32::NEG_INFINITY, f32::INFINITY);
        return match (k.config.ab_type, k.config.c_type) {
            (DType::Bf16, DType::Bf16) => run_fused::<bf16, bf16>(k, case, sched, clamp),
            (DType::Bf16, DType::F32) => run_fused::<bf16, f32>(k, case, sched, clamp),
            (DType::F16, DType::F32) => run_fused::<f16, f32>(k, case, sched, clamp),
            _ => run_fused::<f16, f16>(k, case, sched, clamp),
        };
    }
    match (k.config.ab_type, k.config.c_type) {
        (DType::Bf16, DType::F32) => run::<bf16, f32>(k, case, sched),
        (DType::Bf16, DType::Bf16) => run::<bf16, bf16>(k, case, sched),
        (DType::F16, DType::F32) => run::<f16, f32>(k, case, sched),
        (DType::F16, DType::F16) => run::<f16, f16>(k, case, sched),
        (DType::F32, DType::F32) => run::<f32, f32>(k, case, sched),
        other => panic!("no test for {other:?}"),
    }
}

/// Catalogue kernels (fp8 ones are run by `tests/fp8.rs`, with their scales; split-K ones,
/// which take a workspace and run in pairs, by `tests/splitk.rs`).
fn kernels(filter: impl Fn(&KernelConfig) -> bool) -> Vec<CompiledKernel> {
    configs(filter).into_iter().map(|c| compile(c).unwrap()).collect()
}

/// The configurations of [`kernels`].
fn configs(filter: impl Fn(&KernelConfig) -> bool) -> Vec<KernelConfig> {
    catalogue::configs()
        .into_iter()
        .filter(|c| !c.ab_type.is_fp8() && c.split == gemm_compiler::ir::SplitK::None && filter(c))
        .collect()
}

mod par;

const SMALL: [Case; 4] = [
    Case { m: 1, n: 1, k: 1, pad: 3, alpha: 1.0, beta: 0.0 },
    Case { m: 33, n: 1, k: 17, pad: 1, alpha: 2.0, beta: 1.0 },
    Case { m: 17, n: 33, k: 65, pad: 5, alpha: 1.5, beta: 0.0 },
    Case { m: 17, n: 33, k: 65, pad: 0, alpha: -0.5, beta: 0.75 },
];

/// (The kernels compile and run on every core, `par::map`, as in the catalogue-wide tests below.)
#[test]
fn catalogue_small_shapes_every_mode() {
    par::map(&configs(|_| true), |&c| {
        let k = compile(c).unwrap();
        // Each kernel meets all four scheduling modes, one per shape.
        for (ci, case) in SMALL.iter().enumerate() {
            let mode = Mode::ALL[ci % Mode::ALL.len()];
            run_kernel(&k, case, Schedule { mode, seed: 11 + ci as u64 });
        }
    });
}

/// Every scheduling mode on one shape, sampled: per family, bf16 -> f32 `v8`, NN and TT
/// (the large gfx942 family has TN only), and bf16 -> bf16 NT.
#[test]
fn catalogue_every_mode_on_one_shape() {
    let sample = |c: &KernelConfig| {
        c.align == Align::Vec8
            && c.ab_type == DType::Bf16
            && match (c.trans_a, c.trans_b, c.c_type) {
                (false, false, DType::F32) | (true, true, DType::F32) | (false, true, DType::Bf16) => true,
                (true, false, DType::F32) => c.tile.0 == 256 && c.arch == gemm_compiler::ir::Arch::Gfx942,
                _ => false,
            }
    };
    for k in kernels(sample) {
        for mode in Mode::ALL {
            run_kernel(&k, &SMALL[3], Schedule { mode, seed: 5 });
        }
    }
}

/// Configurations of the space outside the catalogue: other tiles, wave grids (4 and 8
/// waves), MFMA shapes and K tiles, on an edge shape with a K tail.
#[test]
fn config_space_sample() {
    use gemm_compiler::ir::{Arch, MfmaShape};
    let (g2, g3) = (Arch::Gfx942, Arch::Gfx950);
    let cfgs = [
        (g2, (64, 128, 32), (1, 4), MfmaShape::native_16(g2), false, true),
        (g2, (256, 128, 32), (4, 2), MfmaShape::native_32(g2), true, true),
        (g2, (128, 64, 64), (2, 4), MfmaShape::native_16(g2), false, false),
        (g2, (64, 64, 128), (2, 2), MfmaShape::native_32(g2), true, false),
        (g3, (256, 64, 64), (4, 2), MfmaShape::native_32(g3), false, false),
        (g3, (128, 64, 128), (2, 2), MfmaShape::native_32(g3), true, false),
        (g3, (64, 256, 64), (1, 8), MfmaShape::native_16(g3), false, true),
        (g3, (128, 256, 64), (2, 4), MfmaShape::native_16(g3), true, true),
    ];
    let case = Case { m: 130, n: 97, k: 161, pad: 3, alpha: 1.0, beta: 0.5 };
    for (i, &(arch, tile, grid, mfma, ta, tb)) in cfgs.iter().enumerate() {
        let c = KernelConfig::new(arch, DType::Bf16, DType::F32, ta, tb, Align::Vec8).with_shape(tile, grid, mfma, 2);
        let k = compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        run_kernel(&k, &case, Schedule { mode: Mode::ALL[i % Mode::ALL.len()], seed: 21 + i as u64 });
    }
}

/// Direct-to-LDS copies (global side permuted to the swizzle) on gfx942 too, where the
/// catalogue does not choose them (one dword per lane): every transpose (the DMA serves
/// the K-contiguous operands), K tails, edge tiles, and the staged kernel agrees.
#[test]
fn direct_to_lds_on_both_archs() {
    use gemm_compiler::ir::{Arch, DmaPolicy, MfmaShape};
    use gemm_compiler::passes::buffer_ops::CopyPath;
    let case = Case { m: 150, n: 77, k: 200, pad: 8, alpha: 1.0, beta: 0.5 };
    for (i, (arch, tile, grid)) in [
        (Arch::Gfx942, (128, 128, 32), (2, 2)),
        (Arch::Gfx950, (128, 64, 64), (2, 2)),
        (Arch::Gfx950, (64, 256, 64), (1, 8)),
    ]
    .into_iter()
    .enumerate()
    {
        for (ta, tb) in [(false, false), (true, false), (true, true)] {
            let mut c = KernelConfig::new(arch, DType::Bf16, DType::Bf16, ta, tb, Align::Vec8).with_shape(
                tile,
                grid,
                MfmaShape::native_32(arch),
                2,
            );
            c.direct_to_lds = DmaPolicy::Always;
            let k = compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
            let dma = k.kernel.copy_paths.iter().filter(|p| **p == CopyPath::DirectToLds).count();
            assert_eq!(dma, usize::from(ta) + usize::from(!tb), "{}: {:?}", k.name, k.kernel.copy_paths);
            run_kernel(&k, &case, Schedule { mode: Mode::ALL[(i + 2 * usize::from(ta)) % 4], seed: 31 });
        }
    }
}

/// f32 inputs (`32x32x2_f32`, `16x16x4_f32`): every transpose, both alignments, both
/// archs, with a K tail and edge tiles; the transposed copies write `ds_write_b32`s.
#[test]
fn f32_inputs() {
    use gemm_compiler::ir::{Arch, MfmaShape};
    let case = Case { m: 100, n: 70, k: 45, pad: 3, alpha: 1.0, beta: 0.5 };
    for (i, (ta, tb)) in [(false, false), (false, true), (true, false), (true, true)].into_iter().enumerate() {
        for (j, arch) in Arch::ALL.into_iter().enumerate() {
            let align = if (i + j) % 2 == 0 { Align::Vec8 } else { Align::Elem };
            let (tile, mfma) = if j == 0 {
                ((128, 128, 32), MfmaShape { m: 32, n: 32, k: 2 })
            } else {
                ((64, 64, 64), MfmaShape { m: 16, n: 16, k: 4 })
            };
            let c = KernelConfig::new(arch, DType::F32, DType::F32, ta, tb, align).with_shape(tile, (2, 2), mfma, 2);
            let k = compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
            assert_eq!(gemm_compiler::lds::k_step_conflicts(&k.kernel), (0, 0), "{}", k.name);
            run_kernel(&k, &case, Schedule { mode: Mode::ALL[(i + j) % 4], seed: 50 + i as u64 });
        }
    }
}

/// xf32 (gfx942 only, `32x32x4_xf32` / `16x16x8_xf32`): every transpose, both alignments,
/// K tails and edge tiles, within the xf32 bound (`reference::allowed_error`: 2^-10 of the
/// magnitude more than f32). The inputs carry bits below xf32's 10-bit mantissa, so the
/// result differs from full f32 (the kernel does round) yet stays within the bound; gfx950
/// declines the shapes.
#[test]
fn xf32_inputs_on_gfx942() {
    use gemm_compiler::ir::{Arch, MfmaShape};
    let case = Case { m: 100, n: 70, k: 45, pad: 3, alpha: 1.0, beta: 0.5 };
    let shapes = [((128, 128, 32), MfmaShape { m: 32, n: 32, k: 4 }), ((64, 64, 64), MfmaShape { m: 16, n: 16, k: 8 })];
    for (i, (ta, tb)) in [(false, false), (false, true), (true, false), (true, true)].into_iter().enumerate() {
        for (j, &(tile, mfma)) in shapes.iter().enumerate() {
            let align = if (i + j) % 2 == 0 { Align::Vec8 } else { Align::Elem };
            let c = KernelConfig::new(Arch::Gfx942, DType::F32, DType::F32, ta, tb, align).with_shape(
                tile,
                (2, 2),
                mfma,
                2,
            );
            assert!(c.xf32());
            let k = compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
            assert!(k.insts.iter().any(|x| x.op.name().contains("xf32")), "{}", k.name);
            run_kernel(&k, &case, Schedule { mode: Mode::ALL[(i + j) % 4], seed: 70 + i as u64 });
        }
        let c = KernelConfig::new(Arch::Gfx950, DType::F32, DType::F32, ta, tb, Align::Vec8).with_shape(
            (128, 128, 32),
            (2, 2),
            MfmaShape { m: 32, n: 32, k: 4 },
            2,
        );
        assert!(compile(c).is_err(), "gfx950 has no xf32");
    }
    // The rounding is real: 1 + 2^-12 is 1 at xf32 precision, so a 1x1x1 product of it
    // with itself gives exactly 1 (f32 would give 1 + 2^-11).
    let c = KernelConfig::new(Arch::Gfx942, DType::F32, DType::F32, false, false, Align::Vec8).with_shape(
        (64, 64, 64),
        (2, 2),
        MfmaShape { m: 16, n: 16, k: 8 },
        2,
    );
    let k = compile(c).unwrap();
    let dev = Device::new(Arch::Gfx942);
    let x = 1.0f32 + 2f32.powi(-12);
    let (pa, pb, pc) = (upload(&dev, &bytes(&[x])), upload(&dev, &bytes(&[x])), upload(&dev, &bytes(&[0f32])));
    let args = kernel_args::pack(pa, pb, pc, 1, 1, 1, 1, 1, 1, 1.0, 0.0);
    let (wg, block) = kernel_args::launch_workgroups(1, 1, c.tile, c.threads());
    let r = dev
        .launch_with(
            &k.code_object,
            &k.name,
            wg,
            block,
            &args[..kernel_args::size(&c) as usize],
            &LaunchOptions::default(),
        )
        .unwrap();
    assert!(r.reports.is_empty(), "{r}");
    let mut out = [0u8; 4];
    dev.copy_out(pc, &mut out).unwrap();
    assert_eq!(f32::from_le_bytes(out), 1.0);
}

/// A remapped grid (chiplet transform + grouped raster) computes every tile exactly once:
/// every C entry right on a grid of 11 x 7 tiles and on 1 x 13.
#[test]
fn grid_order_covers_every_tile() {
    use gemm_compiler::grid::GridOrder;
    use gemm_compiler::ir::{Arch, MfmaShape};
    for (arch, order) in
        [(Arch::Gfx942, GridOrder { chunk: 2, wgm: 3 }), (Arch::Gfx950, GridOrder { chunk: 1, wgm: 0 })]
    {
        let mut c = KernelConfig::new(arch, DType::F16, DType::F32, false, false, Align::Vec8).with_shape(
            (64, 64, 32),
            (2, 2),
            MfmaShape::native_16(arch),
            2,
        );
        c.grid = order;
        let k = compile(c).unwrap();
        for (i, case) in [
            Case { m: 64 * 10 + 5, n: 64 * 6 + 1, k: 40, pad: 1, alpha: 1.0, beta: 0.0 },
            Case { m: 20, n: 64 * 12 + 7, k: 33, pad: 0, alpha: 1.0, beta: 1.0 },
        ]
        .iter()
        .enumerate()
        {
            run_kernel(&k, case, Schedule { mode: Mode::ALL[i + 1], seed: 2 });
        }
    }
    // The catalogue's remapped large family on a grid of 9 x 5 tiles: the first 32
    // workgroups go through the chiplet transform, the last 13 keep their ids.
    let c = catalogue::configs()
        .into_iter()
        .find(|c| c.arch == Arch::Gfx942 && c.tile.0 == 256 && !c.grid.is_plain() && c.c_type == DType::F32)
        .expect("a remapped large kernel");
    let k = compile(c).unwrap();
    run_kernel(
        &k,
        &Case { m: 256 * 8 + 5, n: 256 * 4 + 3, k: 24, pad: 0, alpha: 1.0, beta: 0.0 },
        Schedule { mode: Mode::Random, seed: 3 },
    );
}

#[test]
fn catalogue_large_edge_shape() {
    let case = Case { m: 255, n: 257, k: 129, pad: 9, alpha: 1.0, beta: -1.25 };
    par::map(&configs(|_| true), |&c| {
        run_kernel(&compile(c).unwrap(), &case, Schedule { mode: Mode::Random, seed: 3 })
    });
}

/// The large shapes on the NN bf16->f32 kernel of each arch: 4096x16x512 and
/// 16x4096x512 on both archs, 1024^3 on gfx950 (about 20 s each in the emulator; the
/// gfx942 1024^3 run takes as long and is selected with `GEMM_LARGE_CASE=2`, which runs
/// only that case on both archs). The budget keeps this test under about a minute.
#[test]
fn large_shapes_one_kernel_per_arch() {
    let cases = [
        Case { m: 4096, n: 16, k: 512, pad: 8, alpha: 1.0, beta: 0.0 },
        Case { m: 16, n: 4096, k: 512, pad: 8, alpha: 0.5, beta: 2.0 },
        Case { m: 1024, n: 1024, k: 1024, pad: 0, alpha: 1.0, beta: 0.0 },
    ];
    let only = std::env::var("GEMM_LARGE_CASE").ok().and_then(|s| s.parse::<usize>().ok());
    for k in kernels(|c| {
        c.align == Align::Vec8
            && !c.trans_a
            && !c.trans_b
            && c.c_type == DType::F32
            && c.ab_type == DType::Bf16
            && c.tile.0 == 128
    }) {
        for (i, case) in cases.iter().enumerate() {
            let selected = match only {
                Some(o) => o == i,
                None => i < 2 || k.config.arch == gemm_compiler::ir::Arch::Gfx950,
            };
            if !selected {
                continue;
            }
            let t = std::time::Instant::now();
            run_kernel(&k, case, Schedule { mode: Mode::Random, seed: 1 });
            eprintln!("{} {}x{}x{}: {:.1} s", k.name, case.m, case.n, case.k, t.elapsed().as_secs_f64());
        }
    }
}

/// The checkers must see what the waitcnt pass prevents: the same kernel built without
/// its waits is reported (and usually wrong) under the longest-latency schedule.
#[test]
fn kernel_without_waits_is_caught() {
    let cfg = catalogue::configs()[0];
    let k = gemm_compiler::compile_kernel_with(
        gemm_compiler::optimise(cfg).unwrap(),
        gemm_compiler::Options { insert_waits: false, ..Default::default() },
    )
    .unwrap();
    let dev = Device::new(cfg.arch);
    let (m, n, kk) = (17u32, 33u32, 65u32);
    let a = upload(&dev, &vec![0u8; 2 * (m * kk) as usize]);
    let b = upload(&dev, &vec![0u8; 2 * (kk * n) as usize]);
    let c = upload(&dev, &vec![0u8; 4 * (m * n) as usize]);
    let args = kernel_args::pack(a, b, c, m, n, kk, m, kk, m, 1.0, 0.0);
    let (wg, block) = kernel_args::launch_workgroups(m, n, cfg.tile, cfg.threads());
    let opts =
        LaunchOptions { schedule: Schedule { mode: Mode::LongestLatency, seed: 1 }, threads: 2, ..Default::default() };
    let r = dev.launch_with(&k.code_object, &k.name, wg, block, &args[..kernel_args::SIZE as usize], &opts);
    match r {
        Ok(r) => assert!(!r.reports.is_empty(), "no checker noticed the missing waits"),
        Err(e) => eprintln!("launch failed as it may without waits: {e}"),
    }
}

/// The lowering is not tied to the catalogue's K tile: KT = 128 on gfx950 (8 fragment
/// reads per block, 8 vectors per thread, element loads) is right too, for all transposes.
#[test]
fn k_tile_128_on_gfx950() {
    for (ta, tb) in [(false, false), (false, true), (true, false), (true, true)] {
        let arch = gemm_compiler::ir::Arch::Gfx950;
        let c = KernelConfig::new(arch, DType::F16, DType::F16, ta, tb, Align::Elem).with_shape(
            (64, 64, 128),
            (2, 2),
            gemm_compiler::ir::MfmaShape::native_16(arch),
            2,
        );
        let k = compile(c).unwrap();
        for (i, case) in
            [&SMALL[2], &Case { m: 130, n: 129, k: 200, pad: 2, alpha: 1.0, beta: 0.0 }].into_iter().enumerate()
        {
            run_kernel(&k, case, Schedule { mode: Mode::ALL[i + 1], seed: 9 });
        }
    }
}

/// f32 inputs with KT = 128 (512-byte LDS rows): 64x64 with 8 waves (2x4, 16x16x4 MFMAs) on
/// gfx950, two 64 KiB buffers of its 160 KiB, every transpose; gfx942's 64 KiB cannot hold
/// them, and the pipeline pass says so.
#[test]
fn f32_k_tile_128() {
    use gemm_compiler::ir::{Arch, MfmaShape};
    let shape = |c: KernelConfig| c.with_shape((64, 64, 128), (2, 4), MfmaShape { m: 16, n: 16, k: 4 }, 2);
    for (i, (ta, tb)) in [(false, false), (false, true), (true, false), (true, true)].into_iter().enumerate() {
        let c = shape(KernelConfig::new(Arch::Gfx950, DType::F32, DType::F32, ta, tb, Align::Vec8));
        let k = compile(c).unwrap();
        assert_eq!(k.lds_bytes, 2 * 65536);
        let case = Case { m: 70, n: 65, k: 300, pad: 1, alpha: 1.0, beta: if i % 2 == 0 { 0.0 } else { 0.5 } };
        run_kernel(&k, &case, Schedule { mode: Mode::ALL[i], seed: 12 });
    }
    let c = shape(KernelConfig::new(Arch::Gfx942, DType::F32, DType::F32, false, false, Align::Vec8));
    let why = compile(c).unwrap_err().to_string();
    assert!(why.contains("exceed the 65536 bytes of LDS"), "{why}");
}

/// One fused-epilogue kernel on one shape against an f64 reference of
/// `clamp(act(alpha * op(A) op(B) + beta * C + bias))`.
fn run_fused<AB: Element, C: Element>(k: &CompiledKernel, case: &Case, sched: Schedule, clamp: (f32, f32)) {
    use gemm_compiler::ir::{Activation, Bias};
    let cfg = k.config;
    let f = cfg.fusion;
    let t = |b| Transpose::from_bool(b);
    let mut p = GemmProblem::new(case.m, case.n, case.k)
        .with_layout(Layout::ColMajor)
        .with_transposes(t(cfg.trans_a), t(cfg.trans_b))
        .with_scalars(case.alpha, case.beta)
        .with_dtypes(AB::DTYPE, AB::DTYPE, C::DTYPE)
        .with_xf32(cfg.xf32());
    let ld = |x: usize| (x + case.pad).next_multiple_of(cfg.align.elems() as usize);
    p = p.with_leading_dims(ld(p.lda), ld(p.ldb), ld(p.ldc));
    let spans = p.validate().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(sched.seed ^ 0xF00D);
    let a: Vec<AB> = fill(spans.a, &mut rng);
    let b: Vec<AB> = fill(spans.b, &mut rng);
    let c0: Vec<C> = if case.beta == 0.0 { vec![C::from_f32(f32::NAN); spans.c] } else { fill(spans.c, &mut rng) };
    let blen = if f.bias == Bias::PerRow { p.m } else { p.n };
    let mut bias: Vec<f32> = (0..blen).map(|_| rng.gen_range(-3.0f32..3.0)).collect();
    let dev = Device::new(cfg.arch);
    let (pa, pb, pc) = (upload(&dev, &bytes(&a)), upload(&dev, &bytes(&b)), upload(&dev, &bytes(&c0)));
    let pbias = if cfg.bias_type == DType::F32 {
        upload(&dev, &bytes(&bias))
    } else {
        // A bias in C's type: the reference adds the rounded values.
        assert_eq!(cfg.bias_type, C::DTYPE);
        let bc: Vec<C> = bias.iter().map(|&x| C::from_f32(x)).collect();
        bias = bc.iter().map(|x| x.to_f32()).collect();
        upload(&dev, &bytes(&bc))
    };
    let mut args = kernel_args::pack(
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
    kernel_args::with_epilogue(&mut args, if f.bias == Bias::None { 0 } else { pbias }, clamp.0, clamp.1);
    let (wg, block) = kernel_args::launch_workgroups(p.m as u32, p.n as u32, cfg.tile, cfg.threads());
    let opts = LaunchOptions { schedule: sched, threads: 2, ..Default::default() };
    let r = dev.launch_with(&k.code_object, &k.name, wg, block, &args, &opts).unwrap();
    assert!(r.reports.is_empty(), "{} {sched:?}: checker findings:\n{r}", k.name);
    let mut out = vec![0u8; spans.c * C::DTYPE.size_bytes()];
    dev.copy_out(pc, &mut out).unwrap();
    let c1: Vec<C> = bytemuck::cast_slice(&out).to_vec();
    let (sa, sb) = if cfg.trans_a { (p.lda, 1) } else { (1, p.lda) };
    let (tb, ub) = if cfg.trans_b { (1, p.ldb) } else { (p.ldb, 1) };
    for j in 0..p.n {
        for i in 0..p.m {
            let (mut s, mut mag) = (0f64, 0f64);
            for l in 0..p.k {
                let x = a[i * sa + l * sb].to_f32() as f64 * b[l * ub + j * tb].to_f32() as f64;
                s += x;
                mag += x.abs();
            }
            let mut y = p.alpha as f64 * s;
            if p.beta != 0.0 {
                let cv = c0[i + j * p.ldc].to_f32() as f64;
                y += p.beta as f64 * cv;
                mag += (p.beta as f64 * cv).abs();
            }
            y += match f.bias {
                Bias::None => 0.0,
                Bias::PerRow => bias[i] as f64,
                Bias::PerColumn => bias[j] as f64,
            };
            y = match f.act {
                Activation::None => y,
                Activation::Relu => y.max(0.0),
                Activation::Silu => y / (1.0 + (-y).exp()),
                Activation::GeluTanh => {
                    let u = (2.0 / std::f64::consts::PI).sqrt() * (y + 0.044715 * y * y * y);
                    0.5 * y * (1.0 + u.tanh())
                }
            };
            if f.clamp {
                y = y.clamp(clamp.0 as f64, clamp.1 as f64);
            }
            let got = c1[i + j * p.ldc].to_f32() as f64;
            let tol = if C::DTYPE == DType::F32 { 1e-4 } else { 1e-2 } * (1.0 + y.abs() + 1e-3 * mag);
            assert!((got - y).abs() <= tol, "{} ({i},{j}): got {got}, want {y} (tol {tol})", k.name);
        }
    }
}

/// A bias vector in C's 16-bit type (bf16 and f16, per row and per column), on interior
/// (vector stores) and edge tiles (element stores), both archs.
#[test]
fn fused_bias_in_c_type() {
    use gemm_compiler::ir::{Activation, Arch, Bias, Fusion, MfmaShape};
    let cases = [
        Case { m: 70, n: 67, k: 40, pad: 2, alpha: 0.5, beta: 0.0 },
        Case { m: 130, n: 33, k: 75, pad: 0, alpha: 1.0, beta: -0.75 },
    ];
    for (i, (cty, bias)) in [
        (DType::Bf16, Bias::PerRow),
        (DType::Bf16, Bias::PerColumn),
        (DType::F16, Bias::PerRow),
        (DType::F16, Bias::PerColumn),
    ]
    .into_iter()
    .enumerate()
    {
        let arch = Arch::ALL[i % 2];
        let mut c = KernelConfig::new(arch, cty, cty, i % 2 == 1, false, Align::Vec8).with_shape(
            (64, 64, 64),
            (2, 2),
            MfmaShape::native_16(arch),
            2,
        );
        c.fusion = Fusion { bias, act: Activation::Relu, clamp: false };
        c.bias_type = cty;
        let k = compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        assert!(k.name.ends_with(if cty == DType::Bf16 { "bf16" } else { "f16" }), "{}", k.name);
        for (ci, case) in cases.iter().enumerate() {
            let sched = Schedule { mode: Mode::ALL[(i + ci) % 4], seed: 80 + i as u64 };
            let clamp = (f32::NEG_INFINITY, f32::INFINITY);
            if cty == DType::Bf16 {
                run_fused::<bf16, bf16>(&k, case, sched, clamp)
            } else {
                run_fused::<f16, f16>(&k, case, sched, clamp)
            }
        }
    }
}

/// Every fused epilogue (bias per row and per column, ReLU, GELU tanh form, SiLU, clamp),
/// on a shape with interior tiles (vector stores) and edge tiles (element stores), beta 0
/// with NaN in C and beta != 0, both archs, 16-bit and f32 output.
#[test]
fn fused_epilogues() {
    use gemm_compiler::ir::{Activation, Arch, Bias, Fusion, MfmaShape};
    let fusions = [
        Fusion { bias: Bias::PerColumn, act: Activation::None, clamp: false },
        Fusion { bias: Bias::PerRow, act: Activation::Relu, clamp: false },
        Fusion { bias: Bias::None, act: Activation::GeluTanh, clamp: false },
        Fusion { bias: Bias::PerColumn, act: Activation::Silu, clamp: true },
        Fusion { bias: Bias::PerRow, act: Activation::GeluTanh, clamp: true },
        Fusion { bias: Bias::None, act: Activation::None, clamp: true },
    ];
    let cases = [
        Case { m: 70, n: 67, k: 40, pad: 2, alpha: 0.5, beta: 0.0 },
        Case { m: 130, n: 33, k: 75, pad: 0, alpha: 1.0, beta: -0.75 },
    ];
    for (i, fusion) in fusions.into_iter().enumerate() {
        let arch = Arch::ALL[i % 2];
        let (ab, cty) = [(DType::Bf16, DType::Bf16), (DType::F16, DType::F32), (DType::F16, DType::F16)][i % 3];
        let mut c = KernelConfig::new(arch, ab, cty, i % 2 == 0, i % 3 == 0, Align::Vec8).with_shape(
            (64, 64, 64),
            (2, 2),
            MfmaShape::native_16(arch),
            2,
        );
        c.fusion = fusion;
        let k = compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        for (ci, case) in cases.iter().enumerate() {
            let sched = Schedule { mode: Mode::ALL[(i + ci) % 4], seed: 40 + i as u64 };
            let clamp = (-1.5, 2.25);
            match (ab, cty) {
                (DType::Bf16, DType::Bf16) => run_fused::<bf16, bf16>(&k, case, sched, clamp),
                (DType::F16, DType::F32) => run_fused::<f16, f32>(&k, case, sched, clamp),
                _ => run_fused::<f16, f16>(&k, case, sched, clamp),
            }
        }
    }
}

fn run_grouped_kernel(k: &CompiledKernel, groups: &[Case], sched: Schedule) {
    match (k.config.ab_type, k.config.c_type) {
        (DType::Bf16, DType::F32) => run_grouped::<bf16, f32>(k, groups, sched),
        (DType::Bf16, DType::Bf16) => run_grouped::<bf16, bf16>(k, groups, sched),
        (DType::F16, DType::F32) => run_grouped::<f16, f32>(k, groups, sched),
        (DType::F16, DType::F16) => run_grouped::<f16, f16>(k, groups, sched),
        other => panic!("no grouped test for {other:?}"),
    }
}

/// One launch of a grouped kernel over `groups` (mixed sizes; `m` or `n` = 0 is an empty
/// group), each with its own operands, leading dimensions and scalars, against the reference;
/// empty groups' C and every C's padding untouched.
fn run_grouped<AB: Element, C: Element>(k: &CompiledKernel, groups: &[Case], sched: Schedule) {
    let cfg = k.config;
    let t = |b| Transpose::from_bool(b);
    let dev = Device::new(cfg.arch);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(sched.seed ^ 0x6209);
    struct G<AB, C> {
        p: GemmProblem,
        a: Vec<AB>,
        b: Vec<AB>,
        c0: Vec<C>,
        pc: u64,
    }
    let mut gs = vec![];
    let sizes: Vec<(u32, u32)> = groups.iter().map(|c| (c.m as u32, c.n as u32)).collect();
    let (starts, tiles) = kernel_args::grouped_tiles(&sizes, (cfg.tile.0, cfg.tile.1));
    let mut table = vec![];
    for (case, start) in groups.iter().zip(starts) {
        let mut p = GemmProblem::new(case.m, case.n, case.k)
            .with_layout(Layout::ColMajor)
            .with_transposes(t(cfg.trans_a), t(cfg.trans_b))
            .with_scalars(case.alpha, case.beta)
            .with_dtypes(AB::DTYPE, AB::DTYPE, C::DTYPE);
        let ld = |x: usize| (x.max(1) + case.pad).next_multiple_of(cfg.align.elems() as usize);
        p = p.with_leading_dims(ld(p.lda), ld(p.ldb), ld(p.ldc));
        let spans = p.validate().unwrap();
        let a: Vec<AB> = fill(spans.a, &mut rng);
        let b: Vec<AB> = fill(spans.b, &mut rng);
        // C of an empty group: a few sentinel elements that must stay as they are.
        let c0: Vec<C> = if case.beta == 0.0 && spans.c > 0 {
            vec![C::from_f32(f32::NAN); spans.c]
        } else {
            fill(spans.c.max(4), &mut rng)
        };
        let (pa, pb, pc) = (upload(&dev, &bytes(&a)), upload(&dev, &bytes(&b)), upload(&dev, &bytes(&c0)));
        let (m, n, kk) = (p.m as u32, p.n as u32, p.k as u32);
        let (lda, ldb, ldc) = (p.lda as u32, p.ldb as u32, p.ldc as u32);
        table.extend(kernel_args::pack_group(pa, pb, pc, m, n, kk, lda, ldb, ldc, p.alpha, p.beta, start));
        gs.push(G { p, a, b, c0, pc });
    }
    let ptable = upload(&dev, &table);
    let args = kernel_args::pack_grouped(ptable, groups.len() as u32, tiles as u32);
    let opts = LaunchOptions { schedule: sched, threads: 2, ..Default::default() };
    if tiles > 0 {
        let r = dev
            .launch_with(&k.code_object, &k.name, [tiles as u32, 1, 1], [cfg.threads(), 1, 1], &args, &opts)
            .unwrap();
        assert!(r.reports.is_empty(), "{} {sched:?}: checker findings:\n{r}", k.name);
        // Every workgroup ran its group's K tiles: MFMAs as the static figures say.
        let mfma: u64 = gs
            .iter()
            .map(|g| {
                let wgs = g.p.m.div_ceil(cfg.tile.0 as usize) * g.p.n.div_ceil(cfg.tile.1 as usize);
                // A tiled kernel computes its last (possibly empty) K tile always; a decode
                // kernel runs no step for k = 0.
                let steps = g.p.k.div_ceil(cfg.tile.2 as usize);
                (wgs * if cfg.is_decode() { steps } else { steps.max(1) }) as u64
            })
            .sum::<u64>()
            * (cfg.waves * k.stats.mfma_per_k_step) as u64;
        assert_eq!(r.counts.mfma, mfma, "{}", k.name);
    }
    for (i, g) in gs.iter().enumerate() {
        let mut out = vec![0u8; g.c0.len() * C::DTYPE.size_bytes()];
        dev.copy_out(g.pc, &mut out).unwrap();
        let c1: Vec<C> = bytemuck::cast_slice(&out).to_vec();
        let p = &g.p;
        if p.m == 0 || p.n == 0 {
            assert!(bytes(&g.c0) == bytes(&c1), "{}: empty group {i} written", k.name);
            continue;
        }
        let rep = gemm_core::reference::check(p, &g.a, &g.b, &g.c0, &c1, None).unwrap();
        assert!(rep.passed(), "{} group {i} {}x{}x{} {sched:?}: {rep:?}", k.name, p.m, p.n, p.k);
        for j in 0..p.n {
            for r in p.m..p.ldc.min(g.c0.len() - j * p.ldc) {
                let (x, y) = (g.c0[r + j * p.ldc], c1[r + j * p.ldc]);
                assert!(bytes(&[x]) == bytes(&[y]), "{}: group {i} C padding ({r},{j}) written", k.name);
            }
        }
    }
}

/// Grouped GEMM in one launch, every grouped catalogue kernel of bf16 -> f32 and f16 -> f16
/// (both archs, every transpose): mixed sizes (interior and edge tiles, a K tail, a one-tile
/// group, `k` = 0), empty groups first, between and last, alpha/beta per group; each
/// scheduling mode, with the race and hazard checkers silent.
#[test]
fn grouped_mixed_sizes_every_mode() {
    let c = |m, n, k, pad, alpha, beta| Case { m, n, k, pad, alpha, beta };
    let groups = [
        c(0, 64, 32, 0, 1.0, 0.0),
        c(130, 70, 45, 3, 1.0, 0.0),
        c(1, 1, 1, 0, 2.0, 1.0),
        c(0, 0, 0, 0, 1.0, 0.0),
        c(257, 129, 64, 0, -0.5, 0.75),
        c(9, 300, 0, 1, 1.0, 0.5),
        c(64, 0, 16, 0, 1.0, 0.0),
    ];
    let pick = |cfg: &KernelConfig| {
        cfg.grouped && matches!((cfg.ab_type, cfg.c_type), (DType::Bf16, DType::F32) | (DType::F16, DType::F16))
    };
    for (i, k) in kernels(pick).iter().enumerate() {
        let mode = Mode::ALL[i % Mode::ALL.len()];
        run_grouped_kernel(k, &groups, Schedule { mode, seed: 21 + i as u64 });
    }
}

/// The grouped decode-rows kernels of the catalogue (mixture-of-experts decode, `catalogue.rs`
/// `GROUPED_DECODE_ROWS`), every dtype pair, both archs, under every scheduling mode: experts
/// without tokens (first, between, last) and with no rows, one token over odd rows with a K
/// tail and NaN in C (beta 0), odd token counts with beta != 0, a whole 16-column block, more
/// tokens than the block (two column tiles), K shorter than one step, padded leading
/// dimensions; race and hazard checkers silent, MFMA counts as the static figures say
/// (`run_grouped`).
#[test]
fn grouped_decode_rows_experts_every_mode() {
    let c = |m, n, k, pad, alpha, beta| Case { m, n, k, pad, alpha, beta };
    let groups = [
        c(0, 4, 100, 0, 1.0, 0.0),
        c(67, 1, 1003, 5, 1.0, 0.0),
        c(130, 3, 2053, 8, 0.5, 0.75),
        c(64, 0, 64, 0, 1.0, 0.0),
        c(40, 16, 256, 0, -1.0, 1.0),
        c(17, 7, 131, 3, 1.0, 0.0),
        c(33, 19, 40, 1, 2.0, 0.5),
        c(0, 0, 8, 0, 1.0, 0.0),
    ];
    let pick = |cfg: &KernelConfig| {
        cfg.grouped && matches!(cfg.schedule, gemm_compiler::schedule::Schedule::DecodeRows { .. })
    };
    let ks = kernels(pick);
    assert_eq!(ks.len(), 8, "bf16 and f16 to f32 and to the input type, both archs");
    for (i, k) in ks.iter().enumerate() {
        for mode in Mode::ALL {
            run_grouped_kernel(k, &groups, Schedule { mode, seed: 91 + i as u64 });
        }
    }
}

/// The binary search over the table on many groups (100: seven search steps), most of them
/// empty; each scheduling mode once (two per arch).
#[test]
fn grouped_many_groups_every_mode() {
    use gemm_compiler::ir::Arch;
    let groups: Vec<Case> = (0..100)
        .map(|i| match i % 7 {
            0 => Case { m: 1 + i % 40, n: 3 + i % 11, k: 8 + i % 9, pad: i % 3, alpha: 1.0, beta: 0.0 },
            3 => Case { m: 129, n: 1, k: 33, pad: 0, alpha: 0.5, beta: 1.0 },
            _ => Case { m: (i % 2) * 5, n: (1 - i % 2) * 7, k: 4, pad: 0, alpha: 1.0, beta: 0.0 },
        })
        .collect();
    for (ai, arch) in Arch::ALL.into_iter().enumerate() {
        let cfg = catalogue::configs()
            .into_iter()
            .find(|c| c.grouped && c.arch == arch && c.c_type == DType::Bf16 && c.trans_a && !c.trans_b)
            .expect("a grouped bf16 TN kernel");
        let k = compile(cfg).unwrap();
        for mode in &Mode::ALL[2 * ai..2 * ai + 2] {
            run_grouped_kernel(&k, &groups, Schedule { mode: *mode, seed: 77 });
        }
    }
}

mod stages;

/// Three-stage pipelines (`passes/pipeline.rs`: three LDS buffers, the copies of the tile
/// after next in flight; `tests/stages`): LDS-DMA, register-staged (two staging sets),
/// mixed and element copies on both archs, 4 and 8 waves, and the catalogue's three-stage
/// kernels, each on the edge shapes under
/// every scheduling mode (1x1x1, a K tail with beta = 0 and NaN in C, 255x257x129), with
/// padded leading dimensions, race detector and hazard checker on (`run` asserts them
/// silent and the MFMA and barrier counts).
#[test]
fn three_stages_edge_shapes_every_mode() {
    use gemm_compiler::passes::buffer_ops::CopyPath;
    let cases = [
        Case { m: 1, n: 1, k: 1, pad: 3, alpha: 1.0, beta: 0.0 },
        Case { m: 17, n: 33, k: 65, pad: 5, alpha: 1.5, beta: 0.0 },
        Case { m: 255, n: 257, k: 129, pad: 1, alpha: -0.5, beta: 0.75 },
    ];
    // The samples (each with the copies it is built for), then one kernel of each of the
    // catalogue's three-stage tiles (bf16 -> f32; the `stages3` and `deep` families, LDS-DMA
    // or register-staged as the layout allows; the fp8 ones run in tests/fp8.rs with their
    // scales).
    let catalogue3 = configs(|c| c.stages == 3 && c.ab_type == DType::Bf16 && c.c_type == DType::F32).into_iter();
    let samples = stages::samples().into_iter().map(|(c, copies)| (c, Some(copies)));
    for (i, (c, copies)) in samples.chain(catalogue3.map(|c| (c, None))).enumerate() {
        let k = compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        assert_eq!(k.kernel.lds_buffers, 3);
        assert_eq!(k.lds_bytes, 3 * k.kernel.lds_buffer_bytes(), "{}", k.name);
        let dma: Vec<bool> = k.kernel.copy_paths.iter().map(|p| *p == CopyPath::DirectToLds).collect();
        if let Some(copies) = copies {
            let want = match copies {
                stages::Copies::Dma => [true, true],
                stages::Copies::Staged => [false, false],
                stages::Copies::Mixed => [false, true],
            };
            assert_eq!(dma, want, "{}: {:?}", k.name, k.kernel.copy_paths);
        }
        for (j, case) in cases.iter().enumerate() {
            for mode in Mode::ALL {
                run_kernel(&k, case, Schedule { mode, seed: 90 + (i * 3 + j) as u64 });
            }
        }
    }
}

/// Every way into and out of the three-stage loop: 1 to 9 K tiles (no loop tile; the
/// prefetch and the drain alone; then each of the 3 or 6 unrolled bodies as the last),
/// a partial last tile or a full one.
#[test]
fn three_stages_every_k_tile_count() {
    for (i, (c, _)) in stages::samples().into_iter().enumerate() {
        let k = compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        let kt = c.tile.2 as usize;
        for tiles in 1..=9usize {
            let tail = if tiles % 2 == 0 { kt } else { 1 + tiles };
            let case = Case { m: 40, n: 70, k: (tiles - 1) * kt + tail, pad: 2, alpha: 1.0, beta: 0.5 };
            run_kernel(&k, &case, Schedule { mode: Mode::ALL[(i + tiles) % 4], seed: 7 + tiles as u64 });
        }
    }
}

/// What three stages decline, with the reason: the loop schedules other than the plain
/// pipeline (`schedule::Reason::ThreeStages`), tiles whose three buffers exceed the LDS
/// (gfx942's 64 KiB, gfx950's 160 KiB), a second staging set past 256 VGPRs, and stage
/// counts other than 2 or 3 (`fit::Unfit::Stages`).
#[test]
fn three_stages_decline_with_reasons() {
    use gemm_compiler::fit::Unfit;
    use gemm_compiler::ir::{Arch, DmaPolicy, MfmaShape};
    use gemm_compiler::passes::{pipeline, Declined};
    use gemm_compiler::schedule::{self, Schedule as LoopSchedule};
    let three = |arch, tile, grid, mfma| {
        KernelConfig::new(arch, DType::Bf16, DType::F32, true, false, Align::Vec8).with_shape(tile, grid, mfma, 3)
    };
    let g3 = Arch::Gfx950;
    let base = three(g3, (256, 256, 64), (2, 2), MfmaShape::native_32(g3));
    for s in [
        LoopSchedule::PingPong { clusters: 1 },
        LoopSchedule::Interleave { slices: 4 },
        LoopSchedule::CopyInterleave { stages: 2 },
    ] {
        let mut c = three(g3, (128, 128, 64), (2, 2), MfmaShape::native_32(g3));
        c.schedule = s;
        match gemm_compiler::optimise(c) {
            Err(Declined::Schedule(schedule::Reason::ThreeStages { schedule })) => assert_eq!(schedule, s.label()),
            other => panic!("{}: {other:?}", c.name()),
        }
    }
    let mut quad = three(g3, (256, 128, 64), (4, 2), MfmaShape::native_16(g3));
    quad.schedule = LoopSchedule::Quadrant;
    assert!(matches!(gemm_compiler::optimise(quad), Err(Declined::Schedule(schedule::Reason::ThreeStages { .. }))));
    // 3 x 64 KiB > 160 KiB on gfx950; 3 x 32 KiB > 64 KiB on gfx942.
    assert!(matches!(
        gemm_compiler::optimise(base),
        Err(Declined::Pipeline(pipeline::Reason::LdsTooSmall { buffers: 3, buffer: 65536, limit: 163840, .. }))
    ));
    let g2 = Arch::Gfx942;
    assert!(matches!(
        gemm_compiler::optimise(three(g2, (128, 128, 64), (2, 2), MfmaShape::native_16(g2))),
        Err(Declined::Pipeline(pipeline::Reason::LdsTooSmall { buffers: 3, limit: 65536, .. }))
    ));
    // Element copies (`e1`, 8 VGPRs per vector), 4 waves, 256x128x64 on gfx950: 96
    // fragment VGPRs + 96 per staging set.
    let mut staged = three(g3, (256, 128, 64), (2, 2), MfmaShape::native_32(g3));
    staged.align = Align::Elem;
    staged.direct_to_lds = DmaPolicy::Never;
    assert!(matches!(
        gemm_compiler::optimise(staged),
        Err(Declined::Pipeline(pipeline::Reason::Staging { staged: "A and B", unfit: Unfit::Vgprs { .. } }))
    ));
    staged.stages = 2;
    assert!(gemm_compiler::optimise(staged).is_ok(), "one staging set fits");
    staged.stages = 4;
    assert!(matches!(gemm_compiler::optimise(staged), Err(Declined::Fit(Unfit::Stages(4)))));
}

/// Decode kernels (`lower/decode.rs`) on the shapes that break them: one column (M = 1 of a
/// Linear layer), rows and columns past the block, K below one step, K not a multiple of the
/// step nor of 8 (the masked tail: padding holds NaN-free noise, and beta = 0 over NaN C),
/// padded leading dimensions, several waves' sums meeting in LDS; every scheduling mode.
#[test]
fn decode_edge_shapes_every_mode() {
    use gemm_compiler::ir::Arch;
    let cases = [
        Case { m: 1, n: 1, k: 1, pad: 3, alpha: 1.0, beta: 0.0 },
        Case { m: 37, n: 1, k: 1003, pad: 8, alpha: 1.0, beta: 0.0 },
        Case { m: 67, n: 3, k: 2053, pad: 5, alpha: 0.5, beta: 0.75 },
        Case { m: 40, n: 17, k: 64, pad: 0, alpha: -1.0, beta: 1.0 },
    ];
    let mut configs = vec![];
    for arch in Arch::ALL {
        for (ab, c) in [(DType::F16, DType::F16), (DType::Bf16, DType::F32)] {
            configs.push(KernelConfig::decode(arch, ab, c, 16, 16, 4, 2));
            configs.push(KernelConfig::decode(arch, ab, c, 32, 16, 8, 1));
            configs.push(KernelConfig::decode(arch, ab, c, 16, 32, 1, 4));
            configs.push(KernelConfig::decode(arch, ab, c, 32, 32, 1, 4));
        }
    }
    for cfg in configs {
        let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        for (ci, case) in cases.iter().enumerate() {
            let mode = Mode::ALL[ci % Mode::ALL.len()];
            run_kernel(&k, case, Schedule { mode, seed: 5 + ci as u64 });
        }
    }
}

/// Decode kernels with the waves on the rows (`lower/decode_rows.rs`) on the same shapes
/// as [`decode_edge_shapes_every_mode`] and a few more: several waves each on its own rows
/// (rows past `m` inside a wave and whole waves past it), B's copies of columns past `n`,
/// K below one step (the tail alone), whole steps of both LDS buffers then a tail, fp8 of
/// both flavours; every scheduling mode on every kernel, the race and hazard checkers
/// silent (the LDS buffers reused every other step).
#[test]
fn decode_rows_edge_shapes_every_mode() {
    use gemm_compiler::ir::Arch;
    let cases = [
        Case { m: 1, n: 1, k: 1, pad: 3, alpha: 1.0, beta: 0.0 },
        Case { m: 37, n: 1, k: 1003, pad: 8, alpha: 1.0, beta: 0.0 },
        Case { m: 67, n: 3, k: 2053, pad: 5, alpha: 0.5, beta: 0.75 },
        Case { m: 40, n: 17, k: 64, pad: 0, alpha: -1.0, beta: 1.0 },
        Case { m: 150, n: 33, k: 768, pad: 8, alpha: 1.0, beta: 0.5 },
    ];
    let mut configs = vec![];
    for arch in Arch::ALL {
        for (ab, c) in [(DType::F16, DType::F16), (DType::Bf16, DType::F32)] {
            configs.push(KernelConfig::decode_rows(arch, ab, c, 1, 32, 4, 4));
            configs.push(KernelConfig::decode_rows(arch, ab, c, 2, 16, 2, 2));
            configs.push(KernelConfig::decode_rows(arch, ab, c, 1, 64, 2, 1));
        }
        // Grouped (mixture-of-experts decode): the case between two empty groups.
        let mut g = KernelConfig::decode_rows(arch, DType::Bf16, DType::Bf16, 1, 16, 4, 4);
        g.grouped = true;
        configs.push(g);
    }
    for cfg in configs {
        let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        for mode in Mode::ALL {
            for (ci, case) in cases.iter().enumerate() {
                run_kernel(&k, case, Schedule { mode, seed: 11 + ci as u64 });
            }
        }
    }
}
