//! fp8 kernels in the emulator (gemm-emu) with the race detector and hazard checker on:
//! FNUZ e4m3/e5m2 on gfx942 (`v_mfma_f32_{16x16x32,32x32x16}_{fp8,bf8}`), OCP e4m3/e5m2 on
//! gfx950 (`v_mfma_f32_{16x16x128,32x32x64}_f8f6f4`), outputs f32, bf16 and f16, the
//! per-tensor scales, edge shapes, K tails, padded leading dimensions, beta = 0 with NaN
//! in C, every scheduling mode; NaN/Inf encodings decoded per flavour.
//!
//! The inputs are multiples of 1/4 in [-2, 2] and the scales powers of two, so every
//! product and partial sum is exact in f32: the kernel's result must equal the exact value
//! computed from the decoded fp8 inputs, rounded once to C's type, bit for bit.

use gemm_compiler::ir::{Align, Arch, KernelConfig, MfmaShape};
use gemm_compiler::{catalogue, compile, kernel_args, CompiledKernel};
use gemm_core::fp8::{Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz};
use gemm_core::{bf16, f16, DType, Element, GemmProblem, Layout, Transpose};
use gemm_emu::{Device, LaunchOptions, Mode, Schedule};
use rand::{Rng, SeedableRng};

fn upload(dev: &Device, b: &[u8]) -> u64 {
    let p = dev.alloc((b.len() as u64).next_multiple_of(16).max(16)).unwrap();
    dev.copy_in(p, b).unwrap();
    p
}

fn bytes<T: Element>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

/// Multiples of 1/4 in [-2, 2]: exact in every fp8 flavour.
fn fill<T: Element>(n: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<T> {
    (0..n).map(|_| T::from_f32(rng.gen_range(-8i32..=8) as f32 * 0.25)).collect()
}

#[derive(Clone, Copy)]
struct Case {
    m: usize,
    n: usize,
    k: usize,
    pad: usize,
    alpha: f32,
    beta: f32,
    /// `(scale_a, scale_b, scale_d)`.
    scales: (f32, f32, f32),
    /// Per-row (op(A)) and per-column (op(B)) scale vectors given (powers of two).
    vectors: (bool, bool),
}

const fn case(m: usize, n: usize, k: usize, pad: usize, alpha: f32, beta: f32) -> Case {
    Case { m, n, k, pad, alpha, beta, scales: (1.0, 1.0, 1.0), vectors: (false, false) }
}

/// The edge shapes: 1x1x1, 17x33x65, 255x257x129, a K tail past a whole tile, beta = 0
/// (NaN in C) and beta != 0, padded leading dimensions, scales.
const CASES: [Case; 5] = [
    case(1, 1, 1, 3, 1.0, 0.0),
    Case { m: 17, n: 33, k: 65, pad: 5, alpha: 1.5, beta: 0.0, scales: (0.5, 4.0, 0.25), vectors: (false, false) },
    Case { m: 33, n: 18, k: 300, pad: 0, alpha: -0.5, beta: 0.75, scales: (2.0, 0.125, 2.0), vectors: (false, false) },
    case(255, 257, 129, 9, 1.0, -1.25),
    Case { m: 64, n: 40, k: 200, pad: 16, alpha: 2.0, beta: 0.0, scales: (1.0, 0.5, 8.0), vectors: (false, false) },
];

/// Powers of two in [1/4, 4], some negative: exact scale factors.
fn scale_vector(n: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<f32> {
    (0..n).map(|_| (rng.gen_range(-2i32..=2) as f32).exp2() * if rng.gen_bool(0.2) { -1.0 } else { 1.0 }).collect()
}

/// Runs `k` on `cs` and compares every C entry with the exact result; `special` puts raw
/// fp8 codes into A at `(i, l)` of op(A) before the run.
fn run<A: Element, B: Element, C: Element>(
    k: &CompiledKernel,
    cs: &Case,
    sched: Schedule,
    special: &[(usize, usize, u8)],
) {
    let cfg = k.config;
    let t = |b| Transpose::from_bool(b);
    let mut p = GemmProblem::new(cs.m, cs.n, cs.k)
        .with_layout(Layout::ColMajor)
        .with_transposes(t(cfg.trans_a), t(cfg.trans_b))
        .with_scalars(cs.alpha, cs.beta)
        .with_dtypes(A::DTYPE, B::DTYPE, C::DTYPE);
    let al = cfg.align_elems() as usize;
    let ld = |x: usize| (x + cs.pad).next_multiple_of(al);
    p = p.with_leading_dims(ld(p.lda), ld(p.ldb), ld(p.ldc));
    let spans = p.validate().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(sched.seed ^ (cs.m * 1000 + cs.k) as u64);
    let mut a: Vec<A> = fill(spans.a, &mut rng);
    let b: Vec<B> = fill(spans.b, &mut rng);
    // op(A)(i, l) lives at `l + i*lda` (A transposed) or `i + l*lda`.
    let at = |i: usize, l: usize| if cfg.trans_a { l + i * p.lda } else { i + l * p.lda };
    let bt = |l: usize, j: usize| if cfg.trans_b { j + l * p.ldb } else { l + j * p.ldb };
    for &(i, l, code) in special {
        a[at(i, l)] = bytemuck::cast::<u8, A>(code);
    }
    let c0: Vec<C> = if cs.beta == 0.0 { vec![C::from_f32(f32::NAN); spans.c] } else { fill(spans.c, &mut rng) };
    let rows = if cs.vectors.0 { scale_vector(p.m, &mut rng) } else { vec![1.0; p.m] };
    let cols = if cs.vectors.1 { scale_vector(p.n, &mut rng) } else { vec![1.0; p.n] };
    let dev = Device::new(cfg.arch);
    let (pa, pb, pc) = (upload(&dev, &bytes(&a)), upload(&dev, &bytes(&b)), upload(&dev, &bytes(&c0)));
    let prow = if cs.vectors.0 { upload(&dev, &bytes(&rows)) } else { 0 };
    let pcol = if cs.vectors.1 { upload(&dev, &bytes(&cols)) } else { 0 };
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
    let (sa, sb, sd) = cs.scales;
    kernel_args::with_scales(&mut args, sa, sb, sd);
    kernel_args::with_scale_vectors(&mut args, prow, pcol);
    let (wg, block) = kernel_args::launch_workgroups(p.m as u32, p.n as u32, cfg.tile, cfg.threads());
    let opts = LaunchOptions { schedule: sched, threads: 2, ..Default::default() };
    let r =
        dev.launch_with(&k.code_object, &k.name, wg, block, &args[..kernel_args::size(&cfg) as usize], &opts).unwrap();
    assert!(r.reports.is_empty(), "{} {}x{}x{} {sched:?}: checker findings:\n{r}", k.name, p.m, p.n, p.k);
    // Tiled kernels: ceil(k/KT) K tiles of `mfma_per_k_step` MFMAs per wave (decode kernels
    // split K over their waves; `tests/emulator.rs` checks their counts).
    if !cfg.is_decode() {
        let tiles = (p.k as u64).div_ceil(cfg.tile.2 as u64).max(1);
        let waves = (wg[0] * wg[1]) as u64 * cfg.waves as u64;
        assert_eq!(
            r.counts.mfma,
            waves * (tiles * k.stats.mfma_per_k_step as u64 + k.stats.zeroing_mfmas as u64),
            "{}",
            k.name
        );
    }
    let mut out = vec![0u8; spans.c * C::DTYPE.size_bytes()];
    dev.copy_out(pc, &mut out).unwrap();
    let c1: Vec<C> = bytemuck::cast_slice(&out).to_vec();
    // Exact in f64 from the decoded inputs (the sums are exact in f32 too), then
    // `scale_d * (alpha * sa * sb * (row[i] * col[j] * s) + beta * c)` with power-of-two
    // scales: exact.
    let alpha = (sa * sb * cs.alpha * sd) as f64;
    let beta = (cs.beta * sd) as f64;
    for j in 0..p.n {
        for i in 0..p.m {
            let mut s = 0f64;
            for l in 0..p.k {
                s += a[at(i, l)].to_f32() as f64 * b[bt(l, j)].to_f32() as f64;
            }
            // `v_mul_legacy_f32`: a zero operand gives +0 (kernel_args.rs).
            let w = rows[i] as f64 * cols[j] as f64 * s;
            let mut y = if w == 0.0 || alpha == 0.0 { 0.0 } else { alpha * w };
            if cs.beta != 0.0 {
                y += beta * c0[i + j * p.ldc].to_f32() as f64;
            }
            let want = C::from_f32(y as f32);
            let got = c1[i + j * p.ldc];
            let same = bytes(&[want]) == bytes(&[got]) || (want.to_f32().is_nan() && got.to_f32().is_nan());
            assert!(same, "{} {}x{}x{} {sched:?} ({i},{j}): got {}, want {y}", k.name, p.m, p.n, p.k, got.to_f32());
        }
        // Padding between columns of C is untouched.
        for i in p.m..p.ldc.min(spans.c - j * p.ldc) {
            assert!(bytes(&[c0[i + j * p.ldc]]) == bytes(&[c1[i + j * p.ldc]]), "{}: C padding written", k.name);
        }
    }
    // The same result through the shared reference check (gemm-core), scales folded into
    // the scalars.
    if special.is_empty() && cs.vectors == (false, false) {
        let q = p.with_scalars(alpha as f32, beta as f32);
        let rep = gemm_core::reference::check(&q, &a, &b, &c0, &c1, None).unwrap();
        assert!(rep.passed() && (C::DTYPE != DType::F32 || rep.max_abs_err == 0.0), "{}: {rep:?}", k.name);
    }
}

fn run_kernel(k: &CompiledKernel, cs: &Case, sched: Schedule, special: &[(usize, usize, u8)]) {
    macro_rules! out {
        ($a:ty, $b:ty) => {
            match k.config.c_type {
                DType::F32 => run::<$a, $b, f32>(k, cs, sched, special),
                DType::Bf16 => run::<$a, $b, bf16>(k, cs, sched, special),
                DType::F16 => run::<$a, $b, f16>(k, cs, sched, special),
                other => panic!("no fp8 test for output {other}"),
            }
        };
    }
    macro_rules! with_b {
        ($a:ty) => {
            match k.config.b_type() {
                DType::Fp8E4M3Fnuz => out!($a, Fp8E4M3Fnuz),
                DType::Fp8E5M2Fnuz => out!($a, Fp8E5M2Fnuz),
                DType::Fp8E4M3 => out!($a, Fp8E4M3),
                DType::Fp8E5M2 => out!($a, Fp8E5M2),
                other => panic!("not fp8: {other}"),
            }
        };
    }
    match k.config.ab_type {
        DType::Fp8E4M3Fnuz => with_b!(Fp8E4M3Fnuz),
        DType::Fp8E5M2Fnuz => with_b!(Fp8E5M2Fnuz),
        DType::Fp8E4M3 => with_b!(Fp8E4M3),
        DType::Fp8E5M2 => with_b!(Fp8E5M2),
        other => panic!("not fp8: {other}"),
    }
}

/// The fp8 flavours of an arch.
/// A whole first tile (the aligned stores, whose C and scale loads the slim ping-pong issues
/// per block, `schedule::slim_edges`) with beta != 0, both scale vectors, a K tail of whole
/// vectors (vector loads) and padding.
const WHOLE_TILE: Case =
    Case { m: 300, n: 260, k: 272, pad: 16, alpha: 0.5, beta: -1.5, scales: (2.0, 0.5, 0.25), vectors: (true, true) };

/// The big tiles' run: every edge case in half of the scheduling modes (which half turns with
/// `turn`; the K-tail case in all of them, seeds from `seed`), then [`WHOLE_TILE`] in `mode`.
fn run_cases_and_a_whole_tile(k: &CompiledKernel, turn: usize, seed: u64, mode: Mode, whole_seed: u64) {
    for (ci, cs) in CASES.iter().enumerate() {
        for (mi, m) in Mode::ALL.into_iter().enumerate() {
            if (ci + mi + turn).is_multiple_of(2) || ci == 3 {
                run_kernel(k, cs, Schedule { mode: m, seed: seed + (ci * 4 + mi) as u64 }, &[]);
            }
        }
    }
    run_kernel(k, &WHOLE_TILE, Schedule { mode, seed: whole_seed }, &[]);
}

fn flavours(arch: Arch) -> [DType; 2] {
    match arch {
        Arch::Gfx942 => [DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz],
        Arch::Gfx950 => [DType::Fp8E4M3, DType::Fp8E5M2],
    }
}

fn small(arch: Arch, ab: DType, c: DType, mfma: MfmaShape, kt: u32) -> CompiledKernel {
    let cfg = KernelConfig::new(arch, ab, c, true, false, Align::Vec8).with_shape((64, 64, kt), (2, 2), mfma, 2);
    compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()))
}

/// Every flavour x arch x output type on a 64x64 tile with both MFMA shapes, each case
/// under a different scheduling mode (every mode meets every flavour).
#[test]
fn fp8_every_flavour_arch_output() {
    for arch in Arch::ALL {
        for (fi, ab) in flavours(arch).into_iter().enumerate() {
            for (oi, c) in [DType::F32, DType::Bf16, DType::F16].into_iter().enumerate() {
                let mfma = if (fi + oi) % 2 == 0 { MfmaShape::fp8_16(arch) } else { MfmaShape::fp8_32(arch) };
                let kt = if arch == Arch::Gfx942 { 64 } else { 128 };
                let k = small(arch, ab, c, mfma, kt);
                assert_eq!(gemm_compiler::lds::k_step_conflicts(&k.kernel), (0, 0), "{}", k.name);
                for (ci, cs) in CASES.iter().enumerate() {
                    if ci == 3 && (fi + oi) % 3 != 0 {
                        continue; // 255x257x129 on a third of the kernels (the catalogue test runs it on all).
                    }
                    let mode = Mode::ALL[(ci + fi + 2 * oi) % Mode::ALL.len()];
                    run_kernel(&k, cs, Schedule { mode, seed: 70 + ci as u64 }, &[]);
                }
            }
        }
    }
}

/// The catalogue's fp8 kernels: every one on the edge shapes, every scheduling mode.
#[test]
fn fp8_catalogue_kernels() {
    // Block-scaled kernels take block scales: tests/mx.rs and tests/block_fp8.rs; split-K
    // partial kernels a workspace: tests/splitk.rs.
    let cs: Vec<_> = catalogue::configs()
        .into_iter()
        .filter(|c| {
            c.ab_type.is_fp8()
                && c.block_scale == gemm_compiler::ir::BlockScale::None
                && c.split == gemm_compiler::ir::SplitK::None
        })
        .collect();
    assert!(cs.len() >= 4, "fp8 families on both archs");
    for arch in Arch::ALL {
        assert!(cs.iter().any(|c| c.arch == arch), "no fp8 kernel for {arch}");
    }
    // The kernels compile and run on every core (`par::map`); kernel `i` meets the scheduling
    // modes from `i` on, as the serial loop did.
    let indexed: Vec<_> = cs.into_iter().enumerate().collect();
    par::map(&indexed, |&(i, c)| {
        let k = compile(c).unwrap();
        // Decode kernels have no LDS tiles (their LDS holds the waves' partial sums).
        if !k.config.is_decode() {
            assert_eq!(gemm_compiler::lds::k_step_conflicts(&k.kernel), (0, 0), "{}", k.name);
        }
        for (ci, cs) in CASES.iter().enumerate() {
            let mode = Mode::ALL[(i + ci) % Mode::ALL.len()];
            run_kernel(&k, cs, Schedule { mode, seed: 90 + ci as u64 }, &[]);
        }
    });
}

mod par;

/// NaN and Inf codes decode per flavour: FNUZ has one NaN (0x80) and no Inf (0x7f is the
/// largest finite value, 240 for e4m3 and 57344 for e5m2); OCP e4m3 has NaN 0x7f and no
/// Inf; OCP e5m2 has Inf 0x7c / -Inf 0xfc and NaN 0x7f. Row 0 of C gets the special
/// times finite B values, row 1 the largest finite code of the flavour.
#[test]
fn fp8_nan_inf_codes() {
    for arch in Arch::ALL {
        for (fi, ab) in flavours(arch).into_iter().enumerate() {
            let k = small(arch, ab, DType::F32, MfmaShape::fp8_16(arch), if arch == Arch::Gfx942 { 64 } else { 128 });
            let specials: &[u8] = match ab {
                DType::Fp8E4M3Fnuz | DType::Fp8E5M2Fnuz => &[0x80, 0x7f, 0xff],
                DType::Fp8E4M3 => &[0x7f, 0x7e, 0xfe],
                _ => &[0x7c, 0xfc, 0x7f, 0x7b],
            };
            let sp: Vec<(usize, usize, u8)> = specials.iter().enumerate().map(|(i, &c)| (i, 3 + i, c)).collect();
            let cs = case(20, 9, 40, 0, 1.0, 0.0);
            run_kernel(&k, &cs, Schedule { mode: Mode::ALL[fi + 1], seed: 5 }, &sp);
        }
    }
}

/// Configurations the space declines for fp8, with their reasons.
#[test]
fn fp8_unfit_configurations_are_declined() {
    use gemm_compiler::fit::{check, Unfit};
    let arch = Arch::Gfx942;
    let base = KernelConfig::new(arch, DType::Fp8E4M3Fnuz, DType::F32, true, false, Align::Vec8).with_shape(
        (128, 128, 64),
        (2, 2),
        MfmaShape::fp8_32(arch),
        2,
    );
    assert_eq!(check(&base), Ok(()));
    assert_eq!(base.align_elems(), 16);
    // M/N-contiguous operands need two vectors per thread (transposed by pairs of K).
    assert_eq!(check(&KernelConfig { trans_a: false, ..base }), Ok(()));
    assert_eq!(check(&KernelConfig { trans_b: true, ..base }), Ok(()));
    let one_vector = KernelConfig { tile: (64, 64, 64), ..base };
    assert_eq!(check(&one_vector), Ok(()));
    assert_eq!(check(&KernelConfig { trans_a: false, ..one_vector }), Err(Unfit::Fp8Transpose));
    assert_eq!(check(&KernelConfig { trans_b: true, ..one_vector }), Err(Unfit::Fp8Transpose));
    // Only fp8 flavours mix.
    let mixed = base.with_b_type(DType::Fp8E5M2Fnuz);
    assert_eq!(check(&mixed), Ok(()));
    assert_eq!(check(&base.with_b_type(DType::Bf16)), Err(Unfit::MixedInputs(DType::Fp8E4M3Fnuz, DType::Bf16)));
    // FNUZ and OCP do not mix (no MFMA takes both).
    assert!(matches!(check(&base.with_b_type(DType::Fp8E5M2)), Err(Unfit::MfmaShape { .. })));
    assert_eq!(check(&KernelConfig { align: Align::Elem, ..base }), Err(Unfit::Fp8Align));
    assert!(matches!(check(&KernelConfig { tile: (128, 128, 32), ..base }), Err(Unfit::TileK { .. })));
    // OCP fp8 has no gfx942 MFMA, FNUZ none on gfx950, and the gfx942 shapes are not
    // offered on gfx950 (half rate there).
    assert!(matches!(check(&KernelConfig { ab_type: DType::Fp8E4M3, ..base }), Err(Unfit::MfmaShape { .. })));
    let g950 = KernelConfig { arch: Arch::Gfx950, ..base };
    assert!(matches!(check(&g950), Err(Unfit::MfmaShape { .. })));
    let g950 = KernelConfig { ab_type: DType::Fp8E4M3, ..g950 };
    assert!(matches!(check(&g950), Err(Unfit::MfmaShape { .. })));
    assert_eq!(check(&KernelConfig { mfma: MfmaShape::fp8_32(Arch::Gfx950), tile: (128, 128, 128), ..g950 }), Ok(()));
}

/// The 4-wave interleave on gfx950's fp8 tile: `32x32x64_f8f6f4` reads two 16-byte pieces
/// per lane group and K step, so its four slices are two K steps x two halves of the N
/// blocks (a slice of one piece ran its MFMA before the other piece of the K tile was
/// read: wrong in every mode, and no checker can see it), with LDS-DMA copies here (the
/// catalogue's register-staged member runs in `fp8_catalogue_kernels`).
#[test]
fn fp8_interleave_slices_hold_whole_k_steps() {
    use gemm_compiler::schedule::Schedule as S;
    let arch = Arch::Gfx950;
    // e5m2 too: the scheduled MFMAs carry the cbsz/blgp format select (they once did not,
    // and e5m2 was read as e4m3).
    for ab in flavours(arch) {
        let mut cfg = KernelConfig::new(arch, ab, DType::F32, true, false, Align::Vec8).with_shape(
            (256, 256, 128),
            (2, 2),
            MfmaShape::fp8_32(arch),
            2,
        );
        cfg.schedule = S::Interleave { slices: 4 };
        let k = compile(cfg).unwrap();
        let ls = k.kernel.schedule.as_ref().expect("scheduled");
        assert!(ls.slices.iter().all(|s| s.pieces.1 - s.pieces.0 == 2), "{:?}", ls.slices);
        for (ci, mode) in Mode::ALL.into_iter().enumerate() {
            run_kernel(&k, &CASES[2 + ci % 2], Schedule { mode, seed: 92 }, &[]);
        }
    }
}

/// The slim ping-pong (`Schedule::PingPongSlim`, the `fp8pp` family's schedule) on the
/// edge shapes under every scheduling mode, both gfx950 flavours, bf16 out (the blog's)
/// and f32, two and four clusters.
#[test]
fn fp8_slim_ping_pong_every_mode() {
    use gemm_compiler::schedule::Schedule as S;
    let arch = Arch::Gfx950;
    for (fi, ab) in flavours(arch).into_iter().enumerate() {
        for (clusters, c) in [(2, DType::Bf16), (4, DType::F32)] {
            let mut cfg = KernelConfig::new(arch, ab, c, true, false, Align::Vec8).with_shape(
                (256, 256, 128),
                (2, 4),
                MfmaShape::fp8_32(arch),
                2,
            );
            cfg.schedule = S::PingPongSlim { clusters };
            let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
            k.resident().unwrap();
            let mode = Mode::ALL[(fi + clusters as usize) % Mode::ALL.len()];
            run_cases_and_a_whole_tile(&k, fi, 130, mode, 150);
            run_kernel(
                &k,
                &Case { beta: 0.0, vectors: (true, false), ..WHOLE_TILE },
                Schedule { mode, seed: 151 },
                &[],
            );
            // Per-tensor scales only: the paths compiled without scale vectors (`lower.rs`
            // `epilogue`), bf16's quads stored in pairs, `scale_d` applied by `v_pk_mul_f32`.
            for (bi, beta) in [-1.5f32, 0.0].into_iter().enumerate() {
                let cs = Case { beta, vectors: (false, false), ..WHOLE_TILE };
                run_kernel(
                    &k,
                    &cs,
                    Schedule { mode: Mode::ALL[(bi + fi) % Mode::ALL.len()], seed: 152 + bi as u64 },
                    &[],
                );
            }
        }
    }
}

/// The epilogue staged through LDS (`lower.rs` `store_staged`: gfx950's slim ping-pong with
/// bf16 C, per-tensor scales, `beta == 0`, tiles inside `m`): compiled in (two rounds of 16
/// `ds_write_b64` per wave, nothing else in the kernel writes LDS from registers), and right
/// on an interior tile, on tiles cut by `n` inside a group of 8 columns (their lanes store
/// through offsets past NUM_RECORDS), for one K tile and an even count of K tiles (the
/// region lies in LDS buffer 1, then 0: the one the drain does not read), beside tiles cut
/// by `m` (element stores); the same shapes with beta != 0 take the paired stores.
#[test]
fn fp8_slim_staged_epilogue() {
    use gemm_compiler::schedule::Schedule as S;
    let arch = Arch::Gfx950;
    let mut cfg = KernelConfig::new(arch, DType::Fp8E4M3, DType::Bf16, true, false, Align::Vec8).with_shape(
        (256, 256, 128),
        (2, 4),
        MfmaShape::fp8_32(arch),
        2,
    );
    cfg.schedule = S::PingPongSlim { clusters: 2 };
    let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
    let writes = k.insts.iter().filter(|x| x.op.name() == "ds_write_b64").count();
    assert_eq!(writes, 32, "{}: the staged epilogue's LDS writes", k.name);
    let cases = [
        // One K tile; columns 256..299 in the second tile column.
        Case {
            m: 256,
            n: 300,
            k: 100,
            pad: 8,
            alpha: 1.5,
            beta: 0.0,
            scales: (2.0, 0.5, 0.25),
            vectors: (false, false),
        },
        // Two K tiles, a K tail; 7 columns in the last tile, rows 256..299 by elements.
        Case {
            m: 300,
            n: 263,
            k: 200,
            pad: 24,
            alpha: -0.5,
            beta: 0.0,
            scales: (1.0, 4.0, 0.5),
            vectors: (false, false),
        },
    ];
    for (ci, cs) in cases.iter().enumerate() {
        for (bi, beta) in [0.0f32, 0.75].into_iter().enumerate() {
            let mode = Mode::ALL[(2 * ci + bi) % Mode::ALL.len()];
            run_kernel(&k, &Case { beta, ..*cs }, Schedule { mode, seed: 170 + (2 * ci + bi) as u64 }, &[]);
        }
    }
}

/// Per-row and per-column scale vectors (`kernel_args.rs`): row only, column only, both,
/// on both archs and flavours, the vector and element store paths (edge tiles), beta = 0
/// (NaN in C) and beta != 0, under every scheduling mode.
#[test]
fn fp8_scale_vectors() {
    let cases = [
        Case { m: 17, n: 33, k: 65, pad: 5, alpha: 1.5, beta: 0.0, scales: (0.5, 4.0, 0.25), vectors: (true, true) },
        Case { m: 64, n: 40, k: 200, pad: 16, alpha: 2.0, beta: 0.5, scales: (1.0, 0.5, 2.0), vectors: (true, false) },
        Case { m: 128, n: 70, k: 130, pad: 0, alpha: -1.0, beta: 0.0, scales: (2.0, 1.0, 1.0), vectors: (false, true) },
        Case { m: 1, n: 1, k: 1, pad: 3, alpha: 1.0, beta: -1.25, scales: (1.0, 1.0, 0.5), vectors: (true, true) },
    ];
    for arch in Arch::ALL {
        for (fi, ab) in flavours(arch).into_iter().enumerate() {
            for (oi, c) in [DType::F32, DType::Bf16].into_iter().enumerate() {
                let mfma = if (fi + oi) % 2 == 0 { MfmaShape::fp8_32(arch) } else { MfmaShape::fp8_16(arch) };
                let k = small(arch, ab, c, mfma, if arch == Arch::Gfx942 { 64 } else { 128 });
                for (ci, cs) in cases.iter().enumerate() {
                    let mode = Mode::ALL[(ci + fi + 2 * oi) % Mode::ALL.len()];
                    run_kernel(&k, cs, Schedule { mode, seed: 40 + ci as u64 }, &[]);
                }
            }
        }
    }
}

/// Mixed flavours: A e4m3 with B e5m2 and the reverse, on both archs (gfx942's
/// `*_fp8_bf8` / `*_bf8_fp8` MFMAs, gfx950's f8f6f4 with per-operand formats), both MFMA
/// shapes, every edge case and scheduling mode; exact results.
#[test]
fn fp8_mixed_flavours() {
    for arch in Arch::ALL {
        let [e4, e5] = flavours(arch);
        for (xi, (a, b)) in [(e4, e5), (e5, e4)].into_iter().enumerate() {
            for (si, mfma) in [MfmaShape::fp8_16(arch), MfmaShape::fp8_32(arch)].into_iter().enumerate() {
                let kt = if arch == Arch::Gfx942 { 64 } else { 128 };
                let cfg = KernelConfig::new(arch, a, DType::F32, true, false, Align::Vec8)
                    .with_shape((64, 64, kt), (2, 2), mfma, 2)
                    .with_b_type(b);
                let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
                // The multiples of 1/4 have different codes in e4m3 and e5m2: a kernel that
                // decoded B as A's flavour would get every product wrong.
                assert!(k.name.contains(if a == e4 { "fp8bf8" } else { "bf8fp8" }), "{}", k.name);
                for (ci, cs) in CASES.iter().enumerate() {
                    if ci == 3 && (xi + si) % 2 == 1 {
                        continue;
                    }
                    let mode = Mode::ALL[(ci + xi + 2 * si) % Mode::ALL.len()];
                    run_kernel(&k, cs, Schedule { mode, seed: 60 + ci as u64 }, &[]);
                }
            }
        }
    }
}

/// fp8 in every layout (NN, NT, TN, TT), both flavours, both archs, pairs and quads of K
/// columns transposed in registers (`lds::CopyGeom::kgroup` 2 and 4, with and without the
/// half-wave row exchange), 0 LDS bank-conflict cycles per K step, the edge cases under
/// rotating scheduling modes.
#[test]
fn fp8_every_layout() {
    use gemm_compiler::lds;
    let shapes = |arch: Arch| match arch {
        // gfx942: 128x128x64 (pairs, half-waves exchange rows), 128x128x128 (quads).
        Arch::Gfx942 => [((128, 128, 64), MfmaShape::fp8_16(arch)), ((128, 128, 128), MfmaShape::fp8_32(arch))],
        // gfx950: 64x64x128 (pairs, one row per wave), 128x128x128 (quads, rows exchanged).
        Arch::Gfx950 => [((64, 64, 128), MfmaShape::fp8_32(arch)), ((128, 128, 128), MfmaShape::fp8_16(arch))],
    };
    let mut seen_groups = std::collections::BTreeSet::new();
    for arch in Arch::ALL {
        for (fi, ab) in flavours(arch).into_iter().enumerate() {
            for (ti, (ta, tb)) in [(false, false), (false, true), (true, true), (true, false)].into_iter().enumerate() {
                let (tile, mfma) = shapes(arch)[(fi + ti) % 2];
                let c = if ti % 2 == 0 { DType::F32 } else { DType::Bf16 };
                let cfg = KernelConfig::new(arch, ab, c, ta, tb, Align::Vec8).with_shape(tile, (2, 2), mfma, 2);
                let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
                assert_eq!(lds::k_step_conflicts(&k.kernel), (0, 0), "{} {:?}", k.name, k.kernel.swizzle);
                for op in [gemm_compiler::ir::Operand::A, gemm_compiler::ir::Operand::B] {
                    let g = lds::copy_geom(&cfg, op);
                    seen_groups.insert((g.kgroup, g.swap_halves));
                }
                for (ci, cs) in CASES.iter().enumerate() {
                    if ci == 3 && (fi + ti) % 2 == 1 {
                        continue;
                    }
                    let mode = Mode::ALL[(ci + 2 * fi + ti) % Mode::ALL.len()];
                    run_kernel(&k, cs, Schedule { mode, seed: 20 + ci as u64 }, &[]);
                }
            }
        }
    }
    for want in [(1, false), (2, false), (2, true), (4, false), (4, true)] {
        assert!(seen_groups.contains(&want), "no kernel with kgroup/swap {want:?}: {seen_groups:?}");
    }
}

/// The big fp8 tiles in NN, NT and TT (issue 24 item 3): gfx950's slim ping-pong
/// (`fp8pp`, 256x256x128) with every copy by LDS-DMA, an M/N-contiguous operand kept
/// M/N-major in LDS and read with `ds_read_b64_tr_b8` (`lds::mn_major`), and gfx942's
/// ping-pong (`fp8t`, 256x256x64) with in-register transposes: 0 bank-conflict cycles per K
/// step, resident, on the edge shapes (K tails, padding, beta = 0 with NaN in C, scale
/// vectors) under every scheduling mode with the checkers silent.
#[test]
fn fp8_big_tiles_every_layout() {
    use gemm_compiler::ir::{DmaPolicy, Operand};
    use gemm_compiler::lds;
    use gemm_compiler::passes::buffer_ops::CopyPath;
    use gemm_compiler::schedule::Schedule as S;
    for arch in Arch::ALL {
        let e4 = flavours(arch)[0];
        for (ti, (ta, tb)) in [(false, false), (false, true), (true, true)].into_iter().enumerate() {
            let c = [DType::F32, DType::Bf16, DType::F16][ti];
            let mut cfg = match arch {
                Arch::Gfx950 => {
                    let mut cfg = KernelConfig::new(arch, e4, c, ta, tb, Align::Vec8).with_shape(
                        (256, 256, 128),
                        (2, 4),
                        MfmaShape::fp8_32(arch),
                        2,
                    );
                    cfg.schedule = S::PingPongSlim { clusters: 2 };
                    cfg.direct_to_lds = DmaPolicy::Transposing;
                    cfg
                }
                Arch::Gfx942 => {
                    let mut cfg = KernelConfig::new(arch, e4, c, ta, tb, Align::Vec8).with_shape(
                        (256, 256, 64),
                        (2, 4),
                        MfmaShape::fp8_32(arch),
                        2,
                    );
                    cfg.schedule = S::PingPong { clusters: 2 };
                    cfg
                }
            };
            cfg.grid = gemm_compiler::grid::GridOrder { chunk: 4, wgm: 8 };
            let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
            k.resident().unwrap();
            assert_eq!(lds::k_step_conflicts(&k.kernel), (0, 0), "{}", k.name);
            let mn = [Operand::A, Operand::B].iter().filter(|&&op| lds::mn_major(&cfg, op)).count();
            let asm = gemm_compiler::disassemble(&k);
            if arch == Arch::Gfx950 {
                // Every M/N-contiguous operand M/N-major, every copy by LDS-DMA.
                assert_eq!(mn, usize::from(!ta) + usize::from(tb), "{}", k.name);
                assert!(asm.contains("ds_read_b64_tr_b8"), "{}", k.name);
                assert!(k.kernel.copy_paths.iter().all(|p| *p == CopyPath::DirectToLds), "{}", k.name);
            } else {
                assert_eq!(mn, 0, "{}", k.name);
            }
            run_cases_and_a_whole_tile(&k, ti, 170, Mode::ALL[ti % Mode::ALL.len()], 190);
        }
    }
}
