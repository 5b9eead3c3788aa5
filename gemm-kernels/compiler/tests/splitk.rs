//! Split-K (`ir::SplitK`): every catalogue partial kernel with the reductions, on both archs
//! in the emulator against `gemm_core::reference`, with the race detector and hazard checker
//! on under every scheduling mode: 1x1x1, 17x33x65, 255x257x129, K tails inside a split and
//! splits past the end of K, padded leading dimensions (workspace included), beta = 0 with
//! NaN in C, a workspace filled with NaN (every slab element the reduction reads must have
//! been written). The reduction alone is checked bit for bit against the in-order f32 sum.
//!
//! fp8 partial kernels (the decode and decode-rows shapes' twins, both flavours of each arch)
//! run with per-tensor scales folded into the reduction's alpha and beta and with per-row /
//! per-column scale vectors applied by the partial kernel (`kernel_args.rs`, fp8 partial
//! kernels), on inputs that are multiples of 1/4 and power-of-two scales, so every sum is
//! exact: the result must equal the exact value rounded once to C's type, bit for bit
//! (`tests/fp8.rs`'s rule).

use gemm_compiler::ir::{Arch, KernelConfig, SplitK};
use gemm_compiler::{catalogue, compile, kernel_args as ka, CompiledKernel};
use gemm_core::fp8::{Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz};
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
    /// K per split (a multiple of KT).
    kchunk: u32,
    /// Splits launched beyond `ceil(k/kchunk)` (they must write zeros).
    extra: u32,
}

/// The workspace geometry the dispatcher uses: `ldw` a multiple of 4 plus the case's pad,
/// slabs 16-byte aligned.
fn workspace(m: usize, n: usize, pad: usize) -> (u32, u32) {
    let ldw = (m.next_multiple_of(4) + pad) as u32;
    (ldw, (ldw * n as u32 * 4).next_multiple_of(16))
}

fn launch(dev: &Device, k: &CompiledKernel, grid: [u32; 3], args: &[u8], sched: Schedule, what: &str) {
    let opts = LaunchOptions { schedule: sched, threads: 2, ..Default::default() };
    let r = dev.launch_with(&k.code_object, &k.name, grid, [k.config.threads(), 1, 1], args, &opts).unwrap();
    assert!(r.reports.is_empty(), "{} {what} {sched:?}: checker findings:\n{r}", k.name);
}

fn run<AB: Element, C: Element>(partial: &CompiledKernel, reduce: &CompiledKernel, case: &Case, sched: Schedule) {
    let cfg = partial.config;
    assert_eq!(reduce.config.c_type, C::DTYPE);
    let t = |b| Transpose::from_bool(b);
    let mut p = GemmProblem::new(case.m, case.n, case.k)
        .with_layout(Layout::ColMajor)
        .with_transposes(t(cfg.trans_a), t(cfg.trans_b))
        .with_scalars(case.alpha, case.beta)
        .with_dtypes(AB::DTYPE, AB::DTYPE, C::DTYPE);
    let al = cfg.align.elems() as usize;
    let ld = |x: usize| (x + case.pad).next_multiple_of(al);
    p = p.with_leading_dims(ld(p.lda), ld(p.ldb), p.ldc + case.pad);
    let spans = p.validate().unwrap();
    let what = format!("{}x{}x{} kchunk {} alpha {} beta {}", p.m, p.n, p.k, case.kchunk, p.alpha, p.beta);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(sched.seed ^ (case.m * 1000 + case.k) as u64);
    let a: Vec<AB> = fill(spans.a, &mut rng);
    let b: Vec<AB> = fill(spans.b, &mut rng);
    let c0: Vec<C> = if case.beta == 0.0 { vec![C::from_f32(f32::NAN); spans.c] } else { fill(spans.c, &mut rng) };
    let dev = Device::new(cfg.arch);
    let (pa, pb, pc) = (upload(&dev, &bytes(&a)), upload(&dev, &bytes(&b)), upload(&dev, &bytes(&c0)));
    let splits = (p.k as u32).div_ceil(case.kchunk).max(1) + case.extra;
    let (ldw, wstride) = workspace(p.m, p.n, case.pad);
    let ws = upload(&dev, &bytes(&vec![f32::NAN; (splits * wstride / 4) as usize]));
    let (m, n) = (p.m as u32, p.n as u32);
    let args = ka::pack_partial(pa, pb, ws, m, n, p.k as u32, p.lda as u32, p.ldb as u32, ldw, case.kchunk, wstride);
    let (mut grid, _) = ka::launch_workgroups(m, n, cfg.tile, cfg.threads());
    grid[2] = splits;
    launch(&dev, partial, grid, &args, sched, &what);
    // Every slab holds its split's sums over m x n; the padding rows stay NaN.
    let mut wsb = vec![0u8; (splits * wstride) as usize];
    dev.copy_out(ws, &mut wsb).unwrap();
    let wsf: &[f32] = bytemuck::cast_slice(&wsb);
    for z in 0..splits as usize {
        let slab = &wsf[z * (wstride / 4) as usize..];
        for j in 0..p.n {
            for i in 0..ldw as usize {
                let x = slab[i + j * ldw as usize];
                assert_eq!(i < p.m, !x.is_nan(), "{} {what}: slab {z} ({i},{j}) = {x}", partial.name);
                if z as u32 >= splits - case.extra && i < p.m {
                    assert_eq!(x, 0.0, "{} {what}: split {z} past K wrote {x}", partial.name);
                }
            }
        }
    }
    let rargs = ka::pack_reduce(ws, pc, m, n, splits, ldw, p.ldc as u32, p.alpha, p.beta, wstride);
    let (rgrid, _) = ka::launch_workgroups(m, n, reduce.config.tile, reduce.config.threads());
    launch(&dev, reduce, rgrid, &rargs, sched, &what);
    let mut out = vec![0u8; spans.c * C::DTYPE.size_bytes()];
    dev.copy_out(pc, &mut out).unwrap();
    let c1: Vec<C> = bytemuck::cast_slice(&out).to_vec();
    let rep = gemm_core::reference::check(&p, &a, &b, &c0, &c1, None).unwrap();
    assert!(rep.passed(), "{} + {} {what} {sched:?}: {rep:?}", partial.name, reduce.name);
    for j in 0..p.n {
        for i in p.m..p.ldc.min(spans.c - j * p.ldc) {
            let (x, y) = (c0[i + j * p.ldc], c1[i + j * p.ldc]);
            assert!(bytes(&[x]) == bytes(&[y]), "{}: C padding ({i},{j}) written", reduce.name);
        }
    }
}

/// fp8 scales of a case: `(scale_a, scale_b, scale_d)` and whether the per-row / per-column
/// vectors are given.
#[derive(Clone, Copy, Debug)]
struct Scales {
    tensor: (f32, f32, f32),
    vectors: (bool, bool),
}

/// Multiples of 1/4 in [-2, 2]: exact in every fp8 flavour.
fn fill_fp8<T: Element>(n: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<T> {
    (0..n).map(|_| T::from_f32(rng.gen_range(-8i32..=8) as f32 * 0.25)).collect()
}

/// Powers of two in [1/4, 4], some negative: exact scale factors.
fn scale_vector(n: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<f32> {
    (0..n).map(|_| (rng.gen_range(-2i32..=2) as f32).exp2() * if rng.gen_bool(0.2) { -1.0 } else { 1.0 }).collect()
}

/// An fp8 partial kernel (`partial`, inputs `A`) with `reduce` into C of type `C`: the slabs
/// hold `row[i] * col[j] * acc_z` (NaN only in the padding rows, zeros past K), and C is
/// `scale_d * (alpha * scale_a * scale_b * (row[i] * col[j] * acc) + beta * C)` exactly.
fn run_fp8<A: Element, C: Element>(
    partial: &CompiledKernel,
    reduce: &CompiledKernel,
    case: &Case,
    sc: Scales,
    sched: Schedule,
) {
    let cfg = partial.config;
    assert_eq!(reduce.config.c_type, C::DTYPE);
    assert_eq!(ka::size(&cfg), ka::SIZE_SCALED, "{}: fp8 partials take the scale vectors", partial.name);
    let t = |b| Transpose::from_bool(b);
    let mut p = GemmProblem::new(case.m, case.n, case.k)
        .with_layout(Layout::ColMajor)
        .with_transposes(t(cfg.trans_a), t(cfg.trans_b))
        .with_scalars(case.alpha, case.beta)
        .with_dtypes(A::DTYPE, A::DTYPE, C::DTYPE);
    let al = cfg.align_elems() as usize;
    let ld = |x: usize| (x + case.pad).next_multiple_of(al);
    p = p.with_leading_dims(ld(p.lda), ld(p.ldb), p.ldc + case.pad);
    let spans = p.validate().unwrap();
    let what = format!("{}x{}x{} kchunk {} alpha {} beta {} {sc:?}", p.m, p.n, p.k, case.kchunk, p.alpha, p.beta);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(sched.seed ^ (case.m * 1000 + case.k) as u64);
    let a: Vec<A> = fill_fp8(spans.a, &mut rng);
    let b: Vec<A> = fill_fp8(spans.b, &mut rng);
    let c0: Vec<C> = if case.beta == 0.0 { vec![C::from_f32(f32::NAN); spans.c] } else { fill_fp8(spans.c, &mut rng) };
    let rows = if sc.vectors.0 { scale_vector(p.m, &mut rng) } else { vec![1.0; p.m] };
    let cols = if sc.vectors.1 { scale_vector(p.n, &mut rng) } else { vec![1.0; p.n] };
    let dev = Device::new(cfg.arch);
    let (pa, pb, pc) = (upload(&dev, &bytes(&a)), upload(&dev, &bytes(&b)), upload(&dev, &bytes(&c0)));
    let prow = if sc.vectors.0 { upload(&dev, &bytes(&rows)) } else { 0 };
    let pcol = if sc.vectors.1 { upload(&dev, &bytes(&cols)) } else { 0 };
    let splits = (p.k as u32).div_ceil(case.kchunk).max(1) + case.extra;
    let (ldw, wstride) = workspace(p.m, p.n, case.pad);
    let ws = upload(&dev, &bytes(&vec![f32::NAN; (splits * wstride / 4) as usize]));
    let (m, n) = (p.m as u32, p.n as u32);
    let (lda, ldb) = (p.lda as u32, p.ldb as u32);
    let args = ka::pack_partial_scaled(pa, pb, ws, m, n, p.k as u32, lda, ldb, ldw, case.kchunk, wstride, prow, pcol);
    let (mut grid, _) = ka::launch_workgroups(m, n, cfg.tile, cfg.threads());
    grid[2] = splits;
    launch(&dev, partial, grid, &args, sched, &what);
    // op(A)(i, l) and op(B)(l, j) (A^T B: both K-contiguous).
    let at = |i: usize, l: usize| if cfg.trans_a { l + i * p.lda } else { i + l * p.lda };
    let bt = |l: usize, j: usize| if cfg.trans_b { j + l * p.ldb } else { l + j * p.ldb };
    // Every slab holds its split's scaled sums exactly; the padding rows stay NaN.
    let mut wsb = vec![0u8; (splits * wstride) as usize];
    dev.copy_out(ws, &mut wsb).unwrap();
    let wsf: &[f32] = bytemuck::cast_slice(&wsb);
    for z in 0..splits as usize {
        let slab = &wsf[z * (wstride / 4) as usize..];
        let (l0, l1) = ((z * case.kchunk as usize).min(p.k), ((z + 1) * case.kchunk as usize).min(p.k));
        for j in 0..p.n {
            for i in 0..ldw as usize {
                let x = slab[i + j * ldw as usize];
                if i >= p.m {
                    assert!(x.is_nan(), "{} {what}: slab {z} padding ({i},{j}) written", partial.name);
                    continue;
                }
                let s: f64 = (l0..l1).map(|l| a[at(i, l)].to_f32() as f64 * b[bt(l, j)].to_f32() as f64).sum();
                let want = (rows[i] as f64 * cols[j] as f64 * s) as f32;
                assert_eq!(x, want, "{} {what}: slab {z} ({i},{j})", partial.name);
            }
        }
    }
    // The per-tensor scales ride in the reduction's scalars (gemm-dispatch `splitk.rs`).
    let (sa, sb, sd) = sc.tensor;
    let (alpha, beta) = (sd * ((sa * sb) * p.alpha), sd * p.beta);
    let rargs = ka::pack_reduce(ws, pc, m, n, splits, ldw, p.ldc as u32, alpha, beta, wstride);
    let (rgrid, _) = ka::launch_workgroups(m, n, reduce.config.tile, reduce.config.threads());
    launch(&dev, reduce, rgrid, &rargs, sched, &what);
    let mut out = vec![0u8; spans.c * C::DTYPE.size_bytes()];
    dev.copy_out(pc, &mut out).unwrap();
    let c1: Vec<C> = bytemuck::cast_slice(&out).to_vec();
    for j in 0..p.n {
        for i in 0..p.m {
            let s: f64 = (0..p.k).map(|l| a[at(i, l)].to_f32() as f64 * b[bt(l, j)].to_f32() as f64).sum();
            let w = rows[i] as f64 * cols[j] as f64 * s;
            let mut y = if w == 0.0 || alpha == 0.0 { 0.0 } else { alpha as f64 * w };
            if p.beta != 0.0 {
                y += beta as f64 * c0[i + j * p.ldc].to_f32() as f64;
            }
            let (want, got) = (C::from_f32(y as f32), c1[i + j * p.ldc]);
            assert!(
                bytes(&[want]) == bytes(&[got]),
                "{} + {} {what} {sched:?} ({i},{j}): got {}, want {y}",
                partial.name,
                reduce.name,
                got.to_f32()
            );
        }
        for i in p.m..p.ldc.min(spans.c - j * p.ldc) {
            let (x, y) = (c0[i + j * p.ldc], c1[i + j * p.ldc]);
            assert!(bytes(&[x]) == bytes(&[y]), "{}: C padding ({i},{j}) written", reduce.name);
        }
    }
}

fn run_fp8_pair(partial: &CompiledKernel, reduce: &CompiledKernel, case: &Case, sc: Scales, sched: Schedule) {
    macro_rules! out {
        ($a:ty) => {
            match reduce.config.c_type {
                DType::F32 => run_fp8::<$a, f32>(partial, reduce, case, sc, sched),
                DType::Bf16 => run_fp8::<$a, bf16>(partial, reduce, case, sc, sched),
                DType::F16 => run_fp8::<$a, f16>(partial, reduce, case, sc, sched),
                other => panic!("no reduction to {other}"),
            }
        };
    }
    match partial.config.ab_type {
        DType::Fp8E4M3Fnuz => out!(Fp8E4M3Fnuz),
        DType::Fp8E5M2Fnuz => out!(Fp8E5M2Fnuz),
        DType::Fp8E4M3 => out!(Fp8E4M3),
        DType::Fp8E5M2 => out!(Fp8E5M2),
        other => panic!("not fp8: {other}"),
    }
}

fn run_pair(partial: &CompiledKernel, reduce: &CompiledKernel, case: &Case, sched: Schedule) {
    match (partial.config.ab_type, reduce.config.c_type) {
        (DType::Bf16, DType::F32) => run::<bf16, f32>(partial, reduce, case, sched),
        (DType::Bf16, DType::Bf16) => run::<bf16, bf16>(partial, reduce, case, sched),
        (DType::F16, DType::F32) => run::<f16, f32>(partial, reduce, case, sched),
        (DType::F16, DType::F16) => run::<f16, f16>(partial, reduce, case, sched),
        other => panic!("no split-K test for {other:?}"),
    }
}

fn catalogue_kernels(arch: Arch, split: SplitK) -> Vec<CompiledKernel> {
    catalogue::configs()
        .into_iter()
        .filter(|c| c.arch == arch && c.split == split)
        .map(|c| compile(c).unwrap())
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn case(m: usize, n: usize, k: usize, pad: usize, alpha: f32, beta: f32, kchunk: u32, extra: u32) -> Case {
    Case { m, n, k, pad, alpha, beta, kchunk, extra }
}

/// Every catalogue partial kernel (both archs, bf16/f16, every transpose and alignment)
/// with the reductions to f32 and to its input type, over the small edge shapes; the four
/// scheduling modes rotate over the shapes.
#[test]
fn catalogue_split_k_small_shapes_every_mode() {
    for arch in Arch::ALL {
        let reduces = catalogue_kernels(arch, SplitK::Reduce);
        assert_eq!(reduces.len(), 3, "{arch}: reductions to f32, bf16, f16");
        // fp8 partials: `catalogue_split_k_fp8_decode_every_mode`.
        let partials: Vec<_> =
            catalogue_kernels(arch, SplitK::Partial).into_iter().filter(|k| !k.config.ab_type.is_fp8()).collect();
        assert!(!partials.is_empty());
        for (pi, part) in partials.iter().enumerate() {
            let kt = part.config.tile.2;
            let cases = [
                case(1, 1, 1, 3, 1.0, 0.0, kt, 0),
                // A K tail in the last split, C padded, beta != 0.
                case(17, 33, 65, 5, 1.5, 0.5, kt, 0),
                // Two whole tiles per split, a split past the end of K, beta = 0 over NaN.
                case(17, 33, 3 * kt as usize + 7, 0, -0.5, 0.0, 2 * kt, 1),
                // 18 splits: more than one round of the reduction's 16 loads.
                case(33, 9, 17 * kt as usize + 3, 1, 1.0, 2.0, kt, 0),
            ];
            for (ci, cs) in cases.iter().enumerate() {
                let out = if ci % 2 == 0 { DType::F32 } else { part.config.ab_type };
                let reduce = reduces.iter().find(|r| r.config.c_type == out).unwrap();
                let mode = Mode::ALL[(pi + ci) % Mode::ALL.len()];
                run_pair(part, reduce, cs, Schedule { mode, seed: 3 + (pi * 7 + ci) as u64 });
            }
        }
    }
}

/// Every catalogue fp8 partial kernel (the decode shapes' twins: both flavours of each arch,
/// FNUZ on gfx942, OCP on gfx950; the 64x64x128 fp8 tile's twins; gfx942's fp8 ping-pong twins in
/// every layout) with the reductions to f32, bf16 and f16: M = 1 (one
/// activation column, `n = 1` in the kernel's column-major terms) against odd weight rows, K
/// tails inside a split and a split past the end of K, padded leading dimensions, beta = 0
/// over NaN, per-tensor scales and each combination of the scale vectors; the scheduling
/// modes rotate over the kernels and cases.
#[test]
fn catalogue_split_k_fp8_decode_every_mode() {
    let unit = Scales { tensor: (1.0, 1.0, 1.0), vectors: (false, false) };
    for arch in Arch::ALL {
        let reduces = catalogue_kernels(arch, SplitK::Reduce);
        let partials: Vec<_> = catalogue::configs()
            .into_iter()
            .filter(|c| c.arch == arch && c.split == SplitK::Partial && c.ab_type.is_fp8())
            .map(|c| compile(c).unwrap())
            .collect();
        // Both flavours of every decode shape; the smallest fp8 tile's twins (A^T B, both
        // flavours: skinny problems at M = 32..256); on gfx942 the fp8 ping-pong tile's twins
        // (the split tail of big grids): A^T B in both flavours, e4m3 in NN, NT and TT.
        let decode = partials.iter().filter(|k| k.config.is_decode()).count();
        let shapes = catalogue::DECODE_SHAPES.len() + catalogue::DECODE_ROWS_SHAPES.len();
        assert_eq!(decode, 2 * shapes, "{arch}: the decode and decode-rows shapes' twins");
        let tiled = partials.len() - decode;
        assert_eq!(tiled, if arch == Arch::Gfx942 { 2 + 5 } else { 2 }, "{arch}: tiled fp8 partials");
        for (pi, part) in partials.iter().enumerate() {
            let kt = part.config.tile.2;
            let cases = [
                (case(1, 1, 1, 3, 1.0, 0.0, kt, 0), unit),
                // M = 1 against 33 weight rows, a K tail in the second split, scales and both
                // vectors, beta != 0.
                (
                    case(33, 1, kt as usize + 65, 16, 1.5, 0.5, kt, 0),
                    Scales { tensor: (0.5, 4.0, 0.25), vectors: (true, true) },
                ),
                // Two whole K steps per split, a split past the end of K, beta = 0 over NaN,
                // the row vector alone.
                (
                    case(17, 3, 3 * kt as usize + 7, 0, -0.5, 0.0, 2 * kt, 1),
                    Scales { tensor: (2.0, 0.125, 2.0), vectors: (true, false) },
                ),
                // 18 splits (more than one round of the reduction's 16 loads), the column
                // vector alone, odd columns.
                (
                    case(31, 9, 17 * kt as usize + 3, 1, 1.0, 2.0, kt, 0),
                    Scales { tensor: (1.0, 0.5, 8.0), vectors: (false, true) },
                ),
            ];
            for (ci, (cs, sc)) in cases.iter().enumerate() {
                let out = [DType::F32, DType::Bf16, DType::F16][(pi + ci) % 3];
                let reduce = reduces.iter().find(|r| r.config.c_type == out).unwrap();
                let mode = Mode::ALL[(pi + ci) % Mode::ALL.len()];
                run_fp8_pair(part, reduce, cs, *sc, Schedule { mode, seed: 11 + (pi * 7 + ci) as u64 });
            }
        }
    }
}

/// The decode-rows twins (`catalogue::SPLITK_DECODE_ROWS`, `lower/decode_rows.rs` with
/// `split_setup`: each split's K range, B's K-step slice staged in LDS per workgroup) in bf16
/// and f16 on both archs, every scheduling mode on every case, with the reductions to f32 and
/// to the input type: M = 1 (`n = 1`) alone and against 37 weight rows with the last split a
/// masked tail, odd columns with a tail inside the second split and a split past the end of K,
/// K below one step (the tail alone in one split), several tiles of columns with whole waves'
/// rows past `m` and two steps per split (both LDS buffers) before a tail; padded leading
/// dimensions, beta = 0 over NaN C and beta != 0. The race and hazard checkers stay silent
/// (`launch`), every slab element inside `m` is written (the workspace starts NaN) and a split
/// past K writes zeros. fp8: `catalogue_split_k_fp8_decode_every_mode`.
#[test]
fn catalogue_split_k_decode_rows_every_mode() {
    for arch in Arch::ALL {
        let reduces = catalogue_kernels(arch, SplitK::Reduce);
        let partials: Vec<_> = catalogue::entries()
            .into_iter()
            .filter(|(f, c)| f.name == catalogue::SPLITK_DECODE_ROWS && c.arch == arch && !c.ab_type.is_fp8())
            .map(|(_, c)| compile(c).unwrap())
            .collect();
        assert_eq!(partials.len(), 2 * catalogue::DECODE_ROWS_SHAPES.len(), "{arch}: bf16 and f16 of every shape");
        for (pi, part) in partials.iter().enumerate() {
            let kt = part.config.tile.2;
            let ku = kt as usize;
            let cases = [
                case(1, 1, 1, 3, 1.0, 0.0, kt, 0),
                case(37, 1, 2 * ku + 65, 8, 1.0, 0.0, kt, 0),
                case(67, 3, 3 * ku + 7, 5, 0.5, 0.75, 2 * kt, 1),
                case(40, 17, ku - 1, 0, -1.0, 1.0, kt, 0),
                case(150, 33, 5 * ku + 3, 8, 1.0, 0.5, 2 * kt, 0),
            ];
            for mode in Mode::ALL {
                for (ci, cs) in cases.iter().enumerate() {
                    let out = if ci % 2 == 0 { DType::F32 } else { part.config.ab_type };
                    let reduce = reduces.iter().find(|r| r.config.c_type == out).unwrap();
                    run_pair(part, reduce, cs, Schedule { mode, seed: 60 + (pi * 7 + ci) as u64 });
                }
            }
        }
    }
}

/// 255x257x129 in splits of one K tile (the last one a tail), every scheduling mode: gfx942
/// bf16 -> bf16 TN `v8`, gfx950 f16 -> f32 NT `e1`.
#[test]
fn split_k_edge_shape_every_mode() {
    for (arch, (ab, c, ta, tb)) in
        Arch::ALL.into_iter().zip([(DType::Bf16, DType::Bf16, true, false), (DType::F16, DType::F32, false, true)])
    {
        let reduces = catalogue_kernels(arch, SplitK::Reduce);
        {
            let part = catalogue::configs()
                .into_iter()
                .find(|x| {
                    x.arch == arch
                        && x.split == SplitK::Partial
                        && x.ab_type == ab
                        && (x.trans_a, x.trans_b) == (ta, tb)
                        && (x.align == gemm_compiler::ir::Align::Vec8) == (ab == DType::Bf16)
                })
                .map(|x| compile(x).unwrap())
                .expect("a partial kernel");
            let reduce = reduces.iter().find(|r| r.config.c_type == c).unwrap();
            let kt = part.config.tile.2;
            for (mi, mode) in Mode::ALL.into_iter().enumerate() {
                let beta = if mi % 2 == 0 { 0.0 } else { -1.25 };
                let cs = case(255, 257, 129, 2, 0.75, beta, kt, 0);
                run_pair(&part, reduce, &cs, Schedule { mode, seed: 40 + mi as u64 });
            }
        }
    }
}

/// The reduction alone, bit for bit: 37 slabs of random f32 (three rounds of 16 loads, the
/// last one partial) summed in slab order in f32, `alpha * sum + beta * C` with one fused
/// multiply-add, rounded once to C's type; the same bits under every scheduling mode
/// (deterministic), and beta = 0 never reads C (NaN there stays out).
#[test]
fn reduction_is_the_in_order_sum_bit_for_bit() {
    for arch in Arch::ALL {
        let reduce = compile(KernelConfig::split_reduce(arch, DType::F32)).unwrap();
        let (m, n, splits) = (70usize, 9usize, 37u32);
        let (ldw, wstride) = workspace(m, n, 3);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let wsf: Vec<f32> = (0..(splits * wstride / 4) as usize).map(|_| rng.gen_range(-1e3f32..1e3)).collect();
        let ldc = m + 1;
        let c0: Vec<f32> = (0..ldc * n).map(|_| rng.gen_range(-4f32..4.0)).collect();
        for (alpha, beta) in [(0.37f32, 1.5f32), (1.0, 0.0)] {
            let mut want = c0.clone();
            for j in 0..n {
                for i in 0..m {
                    let mut s = 0f32;
                    for z in 0..splits as usize {
                        s += wsf[z * (wstride / 4) as usize + i + j * ldw as usize];
                    }
                    let x = alpha * s;
                    want[i + j * ldc] = if beta == 0.0 { x } else { beta.mul_add(c0[i + j * ldc], x) };
                }
            }
            for mode in Mode::ALL {
                let dev = Device::new(arch);
                let ws = upload(&dev, &bytes(&wsf));
                let start: Vec<f32> = if beta == 0.0 { vec![f32::NAN; c0.len()] } else { c0.clone() };
                let pc = upload(&dev, &bytes(&start));
                let args = ka::pack_reduce(ws, pc, m as u32, n as u32, splits, ldw, ldc as u32, alpha, beta, wstride);
                let (grid, _) = ka::launch_workgroups(m as u32, n as u32, reduce.config.tile, 256);
                launch(&dev, &reduce, grid, &args, Schedule { mode, seed: 1 }, "bitwise");
                let mut out = vec![0u8; c0.len() * 4];
                dev.copy_out(pc, &mut out).unwrap();
                let got: &[f32] = bytemuck::cast_slice(&out);
                for j in 0..n {
                    for i in 0..ldc {
                        let (g, w) = (got[i + j * ldc], if i < m { want[i + j * ldc] } else { start[i + j * ldc] });
                        assert_eq!(g.to_bits(), w.to_bits(), "{arch} {mode:?} ({i},{j}) alpha {alpha} beta {beta}");
                    }
                }
            }
        }
    }
}

/// Configurations outside the split-K space are declined with the reason.
#[test]
fn split_k_declines_what_it_cannot_do() {
    use gemm_compiler::fit::{check, Unfit};
    let base = KernelConfig::new(Arch::Gfx942, DType::Bf16, DType::F32, false, false, gemm_compiler::ir::Align::Vec8);
    let part = base.split_partial();
    assert_eq!(check(&part), Ok(()));
    assert!(matches!(check(&KernelConfig { c_type: DType::Bf16, ..part }), Err(Unfit::SplitK(_))));
    assert!(matches!(check(&KernelConfig { grouped: true, ..part }), Err(Unfit::SplitK(_))));
    let red = KernelConfig::split_reduce(Arch::Gfx950, DType::Bf16);
    assert_eq!(check(&red), Ok(()));
    assert!(matches!(check(&KernelConfig { tile: (64, 64, 1), ..red }), Err(Unfit::SplitK(_))));
    // The partial kernel takes the split index from the workgroup id z and the reduction no LDS.
    let k = compile(part).unwrap();
    assert!(k.name.ends_with("_splitk"), "{}", k.name);
    let r = compile(red).unwrap();
    assert_eq!(r.lds_bytes, 0);
    assert_eq!(r.name, "gemm_gfx950_splitk_reduce_f32_bf16_64x4");
}
