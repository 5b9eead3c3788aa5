//! MX kernels (`ir::BlockScale::Mx`, `lower/mx.rs`) in the emulator with the race detector
//! and hazard checker on: gfx950's `v_mfma_scale_f32_*_f8f6f4` with per-32 E8M0 scales of
//! both operands, MXFP8 (e4m3, e5m2, mixed) and MXFP4, against `gemm_core::mx::mx_gemm`.
//!
//! Inputs are chosen so that every partial sum is exact in f32 (small element values, scales
//! 2^-1..2^1, K below a thousand): the kernel, which rounds once per MFMA and then per
//! accumulation, must then equal the exact reference bit for bit. The scale bytes past each
//! row's `K/32` blocks hold the E8M0 NaN (0xFF) and the data padding past K holds NaN codes:
//! a kernel that read either would put NaN into C.

use gemm_compiler::ir::{Align, Arch, KernelConfig, MfmaShape};
use gemm_compiler::schedule::Schedule as Sched;
use gemm_compiler::{catalogue, compile, kernel_args, CompiledKernel};
use gemm_core::mx::{mx_gemm, MxFormat, MxMatrix, E8M0};
use gemm_core::{bf16, f16, DType};
use gemm_emu::{Checker, Device, LaunchOptions, LaunchReport, Mode, Schedule};
use rand::{Rng, SeedableRng};

fn upload(dev: &Device, b: &[u8]) -> u64 {
    let p = dev.alloc((b.len() as u64).next_multiple_of(16).max(16)).unwrap();
    dev.copy_in(p, b).unwrap();
    p
}

/// A random `rows x k` MX matrix with exact-friendly values: fp4 any code, fp8 and fp6
/// multiples of 1/4 in [-2, 2] (exact in E4M3, E5M2, E2M3 and E3M2); scales 2^-1..2^1.
fn matrix(f: MxFormat, rows: usize, k: usize, rng: &mut rand_chacha::ChaCha8Rng) -> MxMatrix {
    let codes: Vec<u8> = (0..rows * k)
        .map(|_| match f.bits() {
            4 => rng.gen_range(0..16u8),
            _ => f.encode(rng.gen_range(-8i32..=8) as f32 * 0.25).unwrap(),
        })
        .collect();
    let nb = MxMatrix::blocks_per_row(k);
    let scales = (0..rows * nb).map(|_| E8M0::from_exponent(rng.gen_range(-1..=1)).unwrap()).collect();
    MxMatrix::new(f, rows, k, codes, scales).unwrap()
}

#[derive(Clone, Copy, Debug)]
struct Case {
    m: usize,
    n: usize,
    /// K in elements (a multiple of 32).
    k: usize,
    /// Extra bytes of row padding (data) and of scale padding.
    pad: usize,
    alpha: f32,
    beta: f32,
}

const CASES: [Case; 6] = [
    Case { m: 1, n: 1, k: 32, pad: 16, alpha: 1.0, beta: 0.0 },
    // K = 0: C = beta * C, every scale byte padding (NaN).
    Case { m: 3, n: 40, k: 0, pad: 16, alpha: 1.0, beta: 0.5 },
    Case { m: 17, n: 33, k: 96, pad: 0, alpha: 1.5, beta: 0.0 },
    Case { m: 33, n: 18, k: 608, pad: 32, alpha: -0.5, beta: 0.75 },
    Case { m: 130, n: 257, k: 256, pad: 16, alpha: 1.0, beta: -1.25 },
    Case { m: 64, n: 40, k: 1024, pad: 48, alpha: 2.0, beta: 0.0 },
];

/// Runs `kern` on `cs` and compares C (f32 or bf16) with `mx_gemm`, bit for bit.
fn run(kern: &CompiledKernel, cs: &Case, sched: Schedule) {
    run_checked(kern, cs, sched, true);
}

/// [`run`]; with `strict` false (planted bugs) it returns the checkers' report and how many
/// elements of C are wrong instead of asserting.
fn run_checked(kern: &CompiledKernel, cs: &Case, sched: Schedule, strict: bool) -> (LaunchReport, usize) {
    let cfg = kern.config;
    let (fa, fb) = cfg.block_scale.mx().expect("an MX kernel");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(sched.seed ^ (cs.m * 1000 + cs.k) as u64);
    let a = matrix(fa, cs.m, cs.k, &mut rng);
    let b = matrix(fb, cs.n, cs.k, &mut rng);
    // Packed rows padded to 16-byte multiples plus `pad`, per operand (A's row bytes are K);
    // scales padded to 4-byte multiples.
    let rb = |f: MxFormat| cs.k * f.bits() as usize / 8;
    let row_bytes = rb(fa);
    let ld = |f: MxFormat| (rb(f) + cs.pad).next_multiple_of(16);
    let nb = cs.k / 32;
    // The scale layout: row-major (`lds >= nb`, tiles `tb` bytes apart) or, for odd cases,
    // K-tiled (each tile's `tb` bytes of every row together: `lds = tb`, tiles `tb * rows`).
    let tb = cfg.mx_tile_blocks().unwrap() as usize;
    let tiled = cs.m % 2 == 1;
    let row_major_lds = (nb + cs.pad % 7).next_multiple_of(4);
    let strides = |rows: usize| if tiled { (tb, tb * rows) } else { (row_major_lds, tb) };
    // 0xFF: the fp8 NaN (e4m3 and e5m2), fp4 -6 in both nibbles, fp6 -7.5 (E2M3) or -28
    // (E3M2) in every 6-bit field.
    let data = |x: &MxMatrix| {
        let (ld, n) = (ld(x.format()), rb(x.format()));
        let mut out = vec![0xFFu8; x.rows() * ld];
        for r in 0..x.rows() {
            out[r * ld..r * ld + n].copy_from_slice(&x.packed_row(r));
        }
        out
    };
    let scales = |x: &MxMatrix| {
        let (lds, ts) = strides(x.rows());
        let mut out = vec![0xFFu8; (x.rows() - 1) * lds + nb.div_ceil(tb) * ts + tb];
        for r in 0..x.rows() {
            for g in 0..nb {
                out[r * lds + (g / tb) * ts + g % tb] = x.scale(r, g * 32).0;
            }
        }
        out
    };
    // An odd ldc sends every tile down the epilogue's element path; the whole-tile cases
    // (M >= 256) take an even one, which the vector stores need.
    let ldc = if cs.m >= 256 { cs.m + 4 } else { cs.m + 3 };
    let esize = cfg.c_type.size_bytes();
    let c0f: Vec<f32> = (0..ldc * cs.n)
        .map(|_| if cs.beta == 0.0 { f32::NAN } else { rng.gen_range(-8i32..=8) as f32 * 0.5 })
        .collect();
    let c0: Vec<u8> = match cfg.c_type {
        DType::F32 => bytemuck::cast_slice(&c0f).to_vec(),
        DType::Bf16 => c0f.iter().flat_map(|v| bf16::from_f32(*v).to_bits().to_le_bytes()).collect(),
        DType::F16 => c0f.iter().flat_map(|v| f16::from_f32(*v).to_bits().to_le_bytes()).collect(),
        other => panic!("no MX test for output {other}"),
    };
    let dev = Device::new(cfg.arch);
    let (pa, pb, pc) = (upload(&dev, &data(&a)), upload(&dev, &data(&b)), upload(&dev, &c0));
    let (psa, psb) = (upload(&dev, &scales(&a)), upload(&dev, &scales(&b)));
    let base = kernel_args::pack(
        pa,
        pb,
        pc,
        cs.m as u32,
        cs.n as u32,
        row_bytes as u32,
        ld(fa) as u32,
        ld(fb) as u32,
        ldc as u32,
        cs.alpha,
        cs.beta,
    );
    let ((lsa, tsa), (lsb, tsb)) = (strides(cs.m), strides(cs.n));
    let mut args = kernel_args::pack_block(&base, psa, psb, lsa as u32, lsb as u32);
    kernel_args::with_group_strides(&mut args, tsa as u32, tsb as u32);
    let (wg, block) = kernel_args::launch_workgroups(cs.m as u32, cs.n as u32, cfg.tile, cfg.threads());
    let opts = LaunchOptions { schedule: sched, threads: 2, ..Default::default() };
    let r = dev
        .launch_with(&kern.code_object, &kern.name, wg, block, &args[..kernel_args::size(&cfg) as usize], &opts)
        .unwrap();
    if strict {
        assert!(r.reports.is_empty(), "{} {cs:?} {sched:?}: checker findings:\n{r}", kern.name);
        let tiles = (row_bytes as u64).div_ceil(cfg.k_step() as u64).max(1);
        let waves = (wg[0] * wg[1]) as u64 * cfg.waves as u64;
        assert_eq!(
            r.counts.mfma,
            waves * (tiles * kern.stats.mfma_per_k_step as u64 + kern.stats.zeroing_mfmas as u64),
            "{}",
            kern.name
        );
    }
    let mut wrong = 0;
    let mut out = vec![0u8; c0.len()];
    dev.copy_out(pc, &mut out).unwrap();
    // The reference, row-major M x N (C is column-major with ldc).
    let mut want = vec![0f32; cs.m * cs.n];
    for i in 0..cs.m {
        for j in 0..cs.n {
            want[i * cs.n + j] = c0f[i + j * ldc];
        }
    }
    mx_gemm(&a, &b, &mut want, cs.alpha, cs.beta).unwrap();
    for j in 0..cs.n {
        for i in 0..ldc {
            let at = (i + j * ldc) * esize;
            let got = &out[at..at + esize];
            if i >= cs.m {
                if strict {
                    assert_eq!(got, &c0[at..at + esize], "{}: C padding written", kern.name);
                }
                continue;
            }
            let w = want[i * cs.n + j];
            let wb: Vec<u8> = match cfg.c_type {
                DType::F32 => w.to_le_bytes().to_vec(),
                DType::F16 => f16::from_f32(w).to_bits().to_le_bytes().to_vec(),
                _ => bf16::from_f32(w).to_bits().to_le_bytes().to_vec(),
            };
            if strict {
                assert_eq!(got, &wb[..], "{} {cs:?} {sched:?} ({i},{j}): want {w}", kern.name);
            }
            wrong += usize::from(got != &wb[..]);
        }
    }
    (r, wrong)
}

fn mx_config(fa: MxFormat, fb: MxFormat, c: DType, tile: (u32, u32, u32), mfma: MfmaShape) -> KernelConfig {
    KernelConfig::new(Arch::Gfx950, DType::Fp8E4M3, c, true, false, Align::Vec8)
        .with_shape(tile, (2, 2), mfma, 2)
        .with_mx(fa, fb)
        .expect("every MX pair")
}

/// MXFP4, MXFP8 (both flavours and mixed) on 64x64 tiles with both MFMA shapes, every case
/// under a different scheduling mode.
#[test]
fn mx_formats_on_small_tiles() {
    let arch = Arch::Gfx950;
    let pairs = [
        (MxFormat::E2M1, MxFormat::E2M1),
        (MxFormat::E4M3, MxFormat::E4M3),
        (MxFormat::E5M2, MxFormat::E4M3),
        (MxFormat::E4M3, MxFormat::E5M2),
    ];
    for (pi, (fa, fb)) in pairs.into_iter().enumerate() {
        for (si, mfma) in [MfmaShape::fp8_32(arch), MfmaShape::fp8_16(arch)].into_iter().enumerate() {
            let c = if (pi + si) % 2 == 0 { DType::F32 } else { DType::Bf16 };
            let cfg = mx_config(fa, fb, c, (64, 64, 128), mfma);
            let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
            assert_eq!(gemm_compiler::lds::k_step_conflicts(&k.kernel), (0, 0), "{}", k.name);
            for (ci, cs) in CASES.iter().enumerate() {
                let mode = Mode::ALL[(ci + pi + si) % Mode::ALL.len()];
                run(&k, cs, Schedule { mode, seed: 30 + ci as u64 });
            }
        }
    }
}

/// MXFP6 (E2M3, E3M2 and mixed): 24-byte blocks, 96 bytes of K per 128-byte tile row
/// (`KernelConfig::k_step`), the 32x32x64 MFMA on a 128-byte K tile and the 16x16x128 one on a
/// 256-byte tile (48 bytes per lane group: two blocks straddling three 16-byte pieces), every
/// case under a different scheduling mode.
#[test]
fn mx_fp6_on_small_tiles() {
    let arch = Arch::Gfx950;
    let pairs = [(MxFormat::E2M3, MxFormat::E2M3), (MxFormat::E3M2, MxFormat::E3M2), (MxFormat::E2M3, MxFormat::E3M2)];
    let shapes = [(MfmaShape::fp8_32(arch), 128), (MfmaShape::fp8_16(arch), 256)];
    for (pi, (fa, fb)) in pairs.into_iter().enumerate() {
        for (si, (mfma, kt)) in shapes.into_iter().enumerate() {
            let c = if (pi + si) % 2 == 0 { DType::F32 } else { DType::Bf16 };
            let cfg = mx_config(fa, fb, c, (64, 64, kt), mfma);
            assert_eq!(cfg.k_step(), kt / 4 * 3);
            let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
            for (ci, cs) in CASES.iter().enumerate() {
                let mode = Mode::ALL[(ci + pi + si) % Mode::ALL.len()];
                run(&k, cs, Schedule { mode, seed: 130 + ci as u64 });
            }
        }
    }
}

/// Two element widths (fp8 x fp4 both ways, fp8 x fp6 both ways, fp6 x fp4 both ways, a bf8
/// and a bf6 among them): each operand's K tile in its own bytes (`KernelConfig::k_step_of`:
/// 128 K values per iteration, fp8 128 bytes, fp6 96, fp4 64 of each 128-byte row), both MFMA
/// shapes (16x16x128 with fp6 on a 256-byte tile), every case under a different scheduling
/// mode.
#[test]
fn mx_mixed_widths_on_small_tiles() {
    use MxFormat::{E2M1, E2M3, E3M2, E4M3, E5M2};
    let arch = Arch::Gfx950;
    let pairs = [(E4M3, E2M1), (E2M1, E4M3), (E5M2, E2M3), (E3M2, E4M3), (E2M3, E2M1), (E2M1, E3M2)];
    for (pi, (fa, fb)) in pairs.into_iter().enumerate() {
        let six = fa.bits() == 6 || fb.bits() == 6;
        let shapes = [(MfmaShape::fp8_32(arch), 128), (MfmaShape::fp8_16(arch), if six { 256 } else { 128 })];
        for (si, (mfma, kt)) in shapes.into_iter().enumerate() {
            let c = if (pi + si) % 2 == 0 { DType::F32 } else { DType::Bf16 };
            let cfg = mx_config(fa, fb, c, (64, 64, kt), mfma);
            assert_eq!(cfg.mx_k_elems(), Some(kt));
            let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
            for (ci, cs) in CASES.iter().enumerate() {
                let mode = Mode::ALL[(ci + pi + si) % Mode::ALL.len()];
                run(&k, cs, Schedule { mode, seed: 170 + ci as u64 });
            }
        }
    }
}

/// The large tiles the speed needs: 256x256x128 with the 4-wave interleave (the `fp8il`
/// schedule), MXFP4 and MXFP8.
#[test]
fn mx_interleaved_large_tiles() {
    let arch = Arch::Gfx950;
    use MxFormat::{E2M1, E3M2, E4M3};
    for (i, (fa, fb)) in [(E2M1, E2M1), (E4M3, E4M3), (E3M2, E3M2), (E4M3, E2M1)].into_iter().enumerate() {
        let mut cfg = mx_config(fa, fb, DType::Bf16, (256, 256, 128), MfmaShape::fp8_32(arch));
        cfg.schedule = Sched::Interleave { slices: 4 };
        let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        for (ci, cs) in CASES.iter().enumerate().filter(|(ci, _)| *ci != 2) {
            let mode = Mode::ALL[(ci + i) % Mode::ALL.len()];
            run(&k, cs, Schedule { mode, seed: 50 + ci as u64 });
        }
    }
}

/// The slim ping-pong (the `fp8pp` tile: 256x256x128 bytes, 8 waves, LDS-DMA, `s_setprio`
/// clusters, staggered barriers), MXFP4 and MXFP8: every case under a different scheduling
/// mode.
#[test]
fn mx_slim_ping_pong() {
    let arch = Arch::Gfx950;
    for (i, f) in [MxFormat::E2M1, MxFormat::E4M3].into_iter().enumerate() {
        let mut cfg = mx_config(f, f, DType::Bf16, (256, 256, 128), MfmaShape::fp8_32(arch));
        cfg.wave_grid = (2, 4);
        cfg.waves = 8;
        cfg.schedule = Sched::PingPongSlim { clusters: 2 };
        let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        // A whole first tile (the epilogue's vector stores, paired on this schedule) beside
        // the edge cases, K a tile and a half.
        let whole = Case { m: 260, n: 264, k: 384, pad: 16, alpha: 0.5, beta: 0.0 };
        let whole_beta = Case { beta: -0.75, ..whole };
        for (ci, cs) in CASES.iter().chain([&whole, &whole_beta]).enumerate() {
            let mode = Mode::ALL[(ci + i) % Mode::ALL.len()];
            run(&k, cs, Schedule { mode, seed: 90 + ci as u64 });
        }
    }
}

/// The slim ping-pong MXFP4 kernel ([`mx_slim_ping_pong`]).
fn slim_fp4() -> KernelConfig {
    let arch = Arch::Gfx950;
    let mut cfg = mx_config(MxFormat::E2M1, MxFormat::E2M1, DType::Bf16, (256, 256, 128), MfmaShape::fp8_32(arch));
    cfg.wave_grid = (2, 4);
    cfg.waves = 8;
    cfg.schedule = Sched::PingPongSlim { clusters: 2 };
    cfg
}

/// Planted bugs in the MXFP4 slim ping-pong, whose scales travel through LDS beside the data
/// (`lower/mx.rs`): a `vmcnt` one too weak (the loop's first) lets an LDS-DMA copy land after
/// other waves read it; removing the barrier that publishes the next tile lets every copy,
/// the scales' too, race its readers. The race detector reports them (for the removed
/// barrier a read of the staged scales against their copy), and the longest-latency mode
/// gives wrong numbers.
#[test]
fn mx_slim_ping_pong_planted_bugs() {
    use gemm_compiler::plant::PlantedBug;
    use gemm_compiler::{compile_kernel_with, optimise, Options};
    let cs = Case { m: 256, n: 256, k: 1024, pad: 0, alpha: 1.0, beta: 0.0 };
    let clean = compile(slim_fp4()).unwrap();
    let (r, wrong) = run_checked(&clean, &cs, Schedule { mode: Mode::LongestLatency, seed: 5 }, false);
    assert!(r.reports.is_empty() && wrong == 0, "unplanted: {wrong} wrong\n{r}");
    for bug in [PlantedBug::WeakVmcnt, PlantedBug::BarrierRemoved] {
        let k = compile_kernel_with(optimise(slim_fp4()).unwrap(), Options { plant: Some(bug), ..Default::default() })
            .unwrap();
        let (r, wrong) = run_checked(&k, &cs, Schedule { mode: Mode::LongestLatency, seed: 5 }, false);
        // The scale copies are `buffer_load_dword ... lds`, the data's `buffer_load_dwordx4`.
        let scale_copy = |inst: &str| inst.starts_with("buffer_load_dword ") && inst.ends_with(" lds");
        let scale_race = r.by_checker(Checker::Race).iter().any(|x| {
            let o = x.other.as_ref().map(|o| o.2.as_str()).unwrap_or("");
            (x.inst.starts_with("ds_read_b32") && scale_copy(o))
                || (scale_copy(&x.inst) && o.starts_with("ds_read_b32"))
        });
        let dma_race = r.by_checker(Checker::Race).iter().any(|x| {
            let o = x.other.as_ref().map(|o| o.2.as_str()).unwrap_or("");
            x.inst.ends_with(" lds") || o.ends_with(" lds") || x.kind == gemm_emu::Kind::UninitializedRead
        });
        if bug == PlantedBug::BarrierRemoved {
            assert!(scale_race, "{bug:?}: no race on the staged scales reported\n{r}");
        }
        assert!(dma_race, "{bug:?}: no race on an LDS-DMA copy reported\n{r}");
        assert!(wrong > 0, "{bug:?}: longest-latency schedule still right");
    }
}

/// What the space declines: gfx942, fp6 or two widths on the slim ping-pong, fp6 lane groups
/// of 24 bytes (not whole 16-byte pieces), the NN layout, three stages.
#[test]
fn mx_unfit_configurations_are_declined() {
    use gemm_compiler::fit::{check, Unfit};
    let arch = Arch::Gfx950;
    let ok = mx_config(MxFormat::E2M1, MxFormat::E2M1, DType::F32, (128, 128, 128), MfmaShape::fp8_32(arch));
    assert_eq!(check(&ok), Ok(()));
    assert!(ok.name().contains("_mxfp4_"), "{}", ok.name());
    let no = |c: KernelConfig| matches!(check(&c), Err(Unfit::BlockScale(_)));
    let slim = |c: KernelConfig| KernelConfig {
        schedule: Sched::PingPongSlim { clusters: 2 },
        wave_grid: (2, 4),
        waves: 8,
        tile: (256, 256, 128),
        ..c
    };
    let fp6 = mx_config(MxFormat::E2M3, MxFormat::E2M3, DType::F32, (128, 128, 128), MfmaShape::fp8_32(arch));
    assert_eq!(check(&fp6), Ok(()));
    assert!(no(slim(fp6)));
    // 16x16 MFMAs on a 128-byte tile: 24 bytes per lane group, not whole 16-byte pieces.
    assert!(no(mx_config(MxFormat::E3M2, MxFormat::E3M2, DType::F32, (128, 128, 128), MfmaShape::fp8_16(arch))));
    let mixed = mx_config(MxFormat::E2M1, MxFormat::E4M3, DType::F32, (128, 128, 128), MfmaShape::fp8_32(arch));
    assert_eq!(check(&mixed), Ok(()));
    assert!(no(slim(mixed)));
    assert_eq!(check(&slim(ok)), Ok(()), "MXFP4 runs the slim ping-pong");
    assert!(no(KernelConfig { trans_a: false, ..ok }));
    assert!(no(KernelConfig { stages: 3, ..ok }));
    let mut g942 = KernelConfig::new(Arch::Gfx942, DType::Fp8E4M3Fnuz, DType::F32, true, false, Align::Vec8)
        .with_shape((128, 128, 64), (2, 2), MfmaShape::fp8_32(Arch::Gfx942), 2);
    g942.block_scale = gemm_compiler::ir::BlockScale::Mx { a: MxFormat::E4M3, b: MxFormat::E4M3 };
    assert!(no(g942));
    // A K tile whose scales would not fit two dwords per row.
    assert!(no(mx_config(MxFormat::E2M1, MxFormat::E2M1, DType::F32, (128, 128, 256), MfmaShape::fp8_32(arch))));
}

/// The catalogue's MX kernels (every pair of the five formats on the 128x128 tile, the large
/// tiles' pairs): each on M = N = 1 and one more edge shape in turn (the tests above take
/// every pair through every shape on small tiles).
#[test]
fn mx_catalogue_kernels() {
    let ks: Vec<_> = catalogue::configs()
        .into_iter()
        .filter(|c| c.block_scale.mx().is_some())
        .map(|c| compile(c).unwrap_or_else(|e| panic!("{}: {e}", c.name())))
        .collect();
    assert!(ks.iter().any(|k| k.config.block_scale.mx().unwrap().0 == MxFormat::E2M1), "an MXFP4 kernel");
    assert!(ks.iter().any(|k| k.config.block_scale.mx().unwrap().0 == MxFormat::E4M3), "an MXFP8 kernel");
    for fa in MxFormat::ALL {
        for fb in MxFormat::ALL {
            assert!(ks.iter().any(|k| k.config.block_scale.mx() == Some((fa, fb))), "{fa} x {fb}");
        }
    }
    // The kernels run on every core (`par::map`), each with the cases and modes of its index.
    let indexed: Vec<_> = ks.iter().enumerate().collect();
    par::map(&indexed, |&(i, k)| {
        for (ci, cs) in CASES.iter().enumerate() {
            if ci != 0 && ci != 1 + i % (CASES.len() - 1) {
                continue;
            }
            let mode = Mode::ALL[(i + ci) % Mode::ALL.len()];
            run(k, cs, Schedule { mode, seed: 70 + ci as u64 });
        }
    });
}

mod par;
