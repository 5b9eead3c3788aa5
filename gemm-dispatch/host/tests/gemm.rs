//! gemm-host against `gemm_core::reference::check` on every dtype combination, layout, transpose,
//! scalar, edge shape and kernel choice. Every RNG is seeded.

use gemm_core::problem::{Layout, Transpose};
use gemm_core::reference::check;
use gemm_core::{
    bf16, f16, DType, Element, Error, Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz, GemmProblem, MatMut, MatRef, Operand,
};
use gemm_host::{gemm, gemm_with, KernelChoice, Options};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const KERNELS: [KernelChoice; 3] = [KernelChoice::Auto, KernelChoice::F32Panels, KernelChoice::Portable];

fn random<T: Element>(rng: &mut ChaCha8Rng, len: usize) -> Vec<T> {
    (0..len).map(|_| T::from_f32(rng.gen_range(-2.0f32..2.0))).collect()
}

/// Runs `p` on random data through `gemm_with` and checks every entry against the reference.
/// Returns C after the call.
fn run<A: Element, B: Element, C: Element>(p: &GemmProblem, threads: usize, kernel: KernelChoice, seed: u64) -> Vec<C> {
    let p = p.with_elements::<A, B, C>();
    let spans = p.validate().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let a: Vec<A> = random(&mut rng, spans.a);
    let b: Vec<B> = random(&mut rng, spans.b);
    let c0: Vec<C> = random(&mut rng, spans.c);
    let mut c = c0.clone();
    let (av, bv, cv) = p.views(&a, &b, &mut c).unwrap();
    gemm_with(p.alpha, av, bv, p.beta, cv, &Options { threads, kernel }).unwrap();
    let report = check(&p, &a, &b, &c0, &c, None).unwrap();
    assert!(
        report.passed(),
        "{}x{}x{} {:?} {:?}/{:?} ld ({}, {}, {}) alpha {} beta {} {}x{}->{} threads {threads} {kernel:?}: {report:?}",
        p.m,
        p.n,
        p.k,
        p.layout,
        p.trans_a,
        p.trans_b,
        p.lda,
        p.ldb,
        p.ldc,
        p.alpha,
        p.beta,
        A::DTYPE,
        B::DTYPE,
        C::DTYPE
    );
    c
}

/// One problem on every supported dtype combination.
fn all_dtypes(p: &GemmProblem, threads: usize, kernel: KernelChoice, seed: u64) {
    run::<f32, f32, f32>(p, threads, kernel, seed);
    run::<f16, f16, f16>(p, threads, kernel, seed);
    run::<f16, f16, f32>(p, threads, kernel, seed);
    run::<bf16, bf16, bf16>(p, threads, kernel, seed);
    run::<bf16, bf16, f32>(p, threads, kernel, seed);
    fp8_outputs::<Fp8E4M3, Fp8E4M3>(p, threads, kernel, seed);
    fp8_outputs::<Fp8E4M3, Fp8E5M2>(p, threads, kernel, seed);
    fp8_outputs::<Fp8E5M2, Fp8E4M3>(p, threads, kernel, seed);
    fp8_outputs::<Fp8E5M2, Fp8E5M2>(p, threads, kernel, seed);
    fp8_outputs::<Fp8E4M3Fnuz, Fp8E4M3Fnuz>(p, threads, kernel, seed);
    fp8_outputs::<Fp8E4M3Fnuz, Fp8E5M2Fnuz>(p, threads, kernel, seed);
    fp8_outputs::<Fp8E5M2Fnuz, Fp8E4M3Fnuz>(p, threads, kernel, seed);
    fp8_outputs::<Fp8E5M2Fnuz, Fp8E5M2Fnuz>(p, threads, kernel, seed);
}

fn fp8_outputs<A: Element, B: Element>(p: &GemmProblem, threads: usize, kernel: KernelChoice, seed: u64) {
    run::<A, B, f32>(p, threads, kernel, seed);
    run::<A, B, f16>(p, threads, kernel, seed);
    run::<A, B, bf16>(p, threads, kernel, seed);
}

fn layouts() -> impl Iterator<Item = (Layout, Transpose, Transpose)> {
    [Layout::RowMajor, Layout::ColMajor].into_iter().flat_map(|l| {
        [
            (Transpose::No, Transpose::No),
            (Transpose::No, Transpose::Yes),
            (Transpose::Yes, Transpose::No),
            (Transpose::Yes, Transpose::Yes),
        ]
        .into_iter()
        .map(move |(ta, tb)| (l, ta, tb))
    })
}

#[test]
fn every_dtype_every_transpose_both_layouts() {
    // 67x45x83 is past the tiny-problem loop, so the packed kernels run, with edge tiles.
    for (i, (layout, ta, tb)) in layouts().enumerate() {
        let p = GemmProblem::new(67, 45, 83).with_layout(layout).with_transposes(ta, tb).with_scalars(1.5, -0.5);
        all_dtypes(&p, 1 + i % 2, KernelChoice::Auto, i as u64);
    }
}

#[test]
fn every_kernel_choice_on_every_dtype() {
    for kernel in KERNELS {
        for threads in [1, 2, 3] {
            let p = GemmProblem::new(70, 53, 41).with_scalars(0.75, 0.25);
            all_dtypes(&p, threads, kernel, threads as u64);
        }
    }
}

#[test]
fn tiny_and_degenerate_shapes() {
    for (m, n, k) in [(1, 1, 1), (17, 31, 5), (2, 3, 1), (1, 40, 9)] {
        for (layout, ta, tb) in layouts() {
            let p = GemmProblem::new(m, n, k).with_layout(layout).with_transposes(ta, tb).with_scalars(-1.25, 0.5);
            all_dtypes(&p, 2, KernelChoice::Auto, 7);
        }
    }
}

#[test]
fn zero_sized_dimensions() {
    // m == 0 or n == 0: nothing happens (C, if any, untouched); k == 0: C = beta * C.
    let mut c = vec![3.0f32; 12];
    let a: Vec<f32> = vec![];
    let b = vec![1.0f32; 12];
    let cv = MatMut::new(&mut c, 0, 4, 4, 1, Operand::C).unwrap();
    gemm(
        1.0,
        MatRef::new(&a, 0, 3, 3, 1, Operand::A).unwrap(),
        MatRef::new(&b, 3, 4, 4, 1, Operand::B).unwrap(),
        0.0,
        cv,
        2,
    )
    .unwrap();
    assert!(c.iter().all(|&x| x == 3.0));
    let cv = MatMut::new(&mut c, 3, 0, 1, 1, Operand::C).unwrap();
    gemm(
        1.0,
        MatRef::new(&b, 3, 4, 4, 1, Operand::A).unwrap(),
        MatRef::new(&a, 4, 0, 1, 1, Operand::B).unwrap(),
        0.0,
        cv,
        2,
    )
    .unwrap();
    assert!(c.iter().all(|&x| x == 3.0));
    for beta in [0.0f32, 2.0] {
        let mut c = vec![bf16::from_f32(3.0); 12];
        let cv = MatMut::new(&mut c, 3, 4, 4, 1, Operand::C).unwrap();
        let av = MatRef::new(&[] as &[bf16], 3, 0, 1, 1, Operand::A).unwrap();
        let bv = MatRef::new(&[] as &[bf16], 0, 4, 4, 1, Operand::B).unwrap();
        gemm(1.0, av, bv, beta, cv, 1).unwrap();
        assert!(c.iter().all(|x| x.to_f32() == 3.0 * beta));
    }
    for (m, n, k) in [(0, 5, 7), (5, 0, 7), (5, 7, 0), (0, 0, 0)] {
        let p = GemmProblem::new(m, n, k).with_scalars(1.0, 0.5);
        all_dtypes(&p, 2, KernelChoice::Auto, 3);
    }
}

#[test]
fn beta_zero_never_reads_c_and_alpha_zero_never_reads_a_or_b() {
    for (m, n, k) in [(3, 4, 5), (65, 70, 90), (300, 17, 200), (8, 600, 40), (257, 129, 65)] {
        for threads in [1, 2] {
            for kernel in KERNELS {
                // beta = 0 with NaN in C.
                let a: Vec<bf16> = (0..m * k).map(|i| bf16::from_f32((i % 7) as f32 - 3.0)).collect();
                let b: Vec<bf16> = (0..k * n).map(|i| bf16::from_f32((i % 5) as f32 - 2.0)).collect();
                let mut c = vec![f32::NAN; m * n];
                let p = GemmProblem::new(m, n, k).with_elements::<bf16, bf16, f32>();
                let (av, bv, cv) = p.views(&a, &b, &mut c).unwrap();
                gemm_with(1.0, av, bv, 0.0, cv, &Options { threads, kernel }).unwrap();
                assert!(check(&p, &a, &b, &vec![0.0; m * n], &c, None).unwrap().passed());
                let af: Vec<f32> = a.iter().map(|x| x.to_f32()).collect();
                let bf: Vec<f32> = b.iter().map(|x| x.to_f32()).collect();
                let mut c = vec![f32::NAN; m * n];
                let p = GemmProblem::new(m, n, k);
                let (av, bv, cv) = p.views(&af, &bf, &mut c).unwrap();
                gemm_with(2.0, av, bv, 0.0, cv, &Options { threads, kernel }).unwrap();
                assert!(check(&p.with_scalars(2.0, 0.0), &af, &bf, &vec![0.0; m * n], &c, None).unwrap().passed());
                // alpha = 0 with NaN in A and B: C = beta * C exactly.
                let an = vec![f32::NAN; m * k];
                let bn = vec![f32::NAN; k * n];
                let mut c: Vec<f32> = (0..m * n).map(|i| i as f32).collect();
                let (av, bv, cv) = p.views(&an, &bn, &mut c).unwrap();
                gemm_with(0.0, av, bv, 0.5, cv, &Options { threads, kernel }).unwrap();
                assert!(c.iter().enumerate().all(|(i, &x)| x == i as f32 * 0.5));
            }
        }
    }
}

#[test]
fn scalars() {
    for (alpha, beta) in [(1.0, 0.0), (1.0, 1.0), (-0.5, 2.0), (2.0, -1.0), (0.0, 1.0), (0.0, 0.0), (1.0, 0.5)] {
        let p = GemmProblem::new(40, 50, 60).with_scalars(alpha, beta);
        all_dtypes(&p, 2, KernelChoice::Auto, 11);
    }
}

#[test]
fn leading_dimensions_larger_than_the_matrix() {
    for (layout, ta, tb) in layouts() {
        let p = GemmProblem::new(45, 38, 70).with_layout(layout).with_transposes(ta, tb);
        let p = p.with_leading_dims(p.lda + 3, p.ldb + 17, p.ldc + 5).with_scalars(1.0, 1.0);
        all_dtypes(&p, 2, KernelChoice::Auto, 5);
        run::<bf16, bf16, bf16>(&p, 1, KernelChoice::F32Panels, 5);
    }
}

#[test]
fn sizes_straddling_the_blocking() {
    // Micro-tile 32x12, KC 512 (f32 and bf16 panels; 256 portable), MC 192 / 384.
    let sizes = [1, 15, 16, 17, 31, 33, 63, 65, 127, 129, 257];
    for (i, &s) in sizes.iter().enumerate() {
        for (m, n, k) in [(s, 33, 65), (65, s, 33), (33, 65, s)] {
            let p = GemmProblem::new(m, n, k).with_scalars(1.0, 0.5);
            let threads = 1 + i % 2;
            run::<f32, f32, f32>(&p, threads, KernelChoice::Auto, i as u64);
            run::<f32, f32, f32>(&p, threads, KernelChoice::F32Panels, i as u64);
            run::<bf16, bf16, f32>(&p, threads, KernelChoice::Auto, i as u64);
            run::<bf16, bf16, bf16>(&p, threads, KernelChoice::Auto, i as u64);
            run::<f16, f16, f16>(&p, threads, KernelChoice::Auto, i as u64);
            run::<Fp8E4M3, Fp8E5M2, bf16>(&p, threads, KernelChoice::Auto, i as u64);
        }
    }
    // Several k blocks (the f32 scratch for 16-bit C), several MC blocks, odd k for the pairs.
    for (m, n, k) in [(390, 40, 300), (40, 30, 1025), (33, 27, 513), (100, 4100, 2)] {
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            let p = GemmProblem::new(m, n, k).with_layout(layout).with_scalars(1.0, -1.0);
            run::<bf16, bf16, bf16>(&p, 2, KernelChoice::Auto, 1);
            run::<bf16, bf16, f32>(&p, 2, KernelChoice::Auto, 1);
            run::<f16, f16, f16>(&p, 2, KernelChoice::Auto, 1);
            run::<f32, f32, f32>(&p, 2, KernelChoice::F32Panels, 1);
            run::<Fp8E5M2Fnuz, Fp8E4M3Fnuz, f16>(&p, 1, KernelChoice::Auto, 1);
        }
    }
}

#[test]
fn broadcast_inputs_with_zero_strides() {
    // A row broadcast down the rows (row stride 0), B column broadcast across columns.
    let (m, n, k) = (50, 40, 70);
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let a: Vec<bf16> = random(&mut rng, k);
    let b: Vec<bf16> = random(&mut rng, k);
    let av = MatRef::new(&a, m, k, 0, 1, Operand::A).unwrap();
    let bv = MatRef::new(&b, k, n, 1, 0, Operand::B).unwrap();
    let dot: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(x.to_f32()) * f64::from(y.to_f32())).sum();
    let mag: f64 = a.iter().zip(&b).map(|(x, y)| (f64::from(x.to_f32()) * f64::from(y.to_f32())).abs()).sum();
    let af: Vec<f32> = a.iter().map(|x| x.to_f32()).collect();
    let bf: Vec<f32> = b.iter().map(|x| x.to_f32()).collect();
    let afv = MatRef::new(&af, m, k, 0, 1, Operand::A).unwrap();
    let bfv = MatRef::new(&bf, k, n, 1, 0, Operand::B).unwrap();
    for kernel in KERNELS {
        for f32_inputs in [false, true] {
            let mut c = vec![0f32; m * n];
            let cv = MatMut::new(&mut c, m, n, n, 1, Operand::C).unwrap();
            let opts = Options { threads: 2, kernel };
            if f32_inputs {
                gemm_with(1.0, afv, bfv, 0.0, cv, &opts).unwrap();
            } else {
                gemm_with(1.0, av, bv, 0.0, cv, &opts).unwrap();
            }
            for &x in &c {
                assert!((f64::from(x) - dot).abs() <= (k as f64 + 4.0) * 1.2e-7 * mag + 1e-30, "{x} vs {dot}");
            }
        }
    }
}

#[test]
fn bf16_kernel_agrees_with_its_fallbacks() {
    for (m, n, k) in [(96, 72, 200), (130, 61, 777)] {
        let p = GemmProblem::new(m, n, k).with_transposes(Transpose::No, Transpose::Yes).with_scalars(1.0, 0.0);
        let fast = run::<bf16, bf16, f32>(&p, 2, KernelChoice::Auto, 4);
        for kernel in [KernelChoice::F32Panels, KernelChoice::Portable] {
            let slow = run::<bf16, bf16, f32>(&p, 1, kernel, 4);
            for (x, y) in fast.iter().zip(&slow) {
                assert!((x - y).abs() <= 1e-4 * (1.0 + y.abs()) * (k as f32).sqrt(), "{x} vs {y} ({kernel:?})");
            }
        }
    }
}

#[test]
fn f32_panels_honour_bf16_denormals() {
    // 2^-130 is a bf16 denormal; times 2^100 it is 2^-30, far from negligible. The F32Panels path
    // computes it exactly; the vdpbf16ps path flushes it (documented on the kernel).
    let tiny = bf16::from_f32(2f32.powi(-130));
    assert!(tiny.to_f32() > 0.0 && tiny.to_f32() < f32::MIN_POSITIVE);
    let (m, n, k) = (40, 40, 40);
    let a = vec![tiny; m * k];
    let b = vec![bf16::from_f32(2f32.powi(100)); k * n];
    let mut c = vec![0f32; m * n];
    let p = GemmProblem::new(m, n, k).with_elements::<bf16, bf16, f32>();
    let (av, bv, cv) = p.views(&a, &b, &mut c).unwrap();
    gemm_with(1.0, av, bv, 0.0, cv, &Options { threads: 1, kernel: KernelChoice::F32Panels }).unwrap();
    assert!(check(&p, &a, &b, &vec![0.0; m * n], &c, None).unwrap().passed());
}

#[test]
fn unsupported_dtypes_and_shapes_are_errors_and_leave_c_untouched() {
    fn refused<A: Element, B: Element, C: Element>() {
        let a = vec![A::from_f32(1.0); 64 * 64];
        let b = vec![B::from_f32(1.0); 64 * 64];
        let mut c = vec![C::from_f32(7.0); 64 * 64];
        let av = MatRef::new(&a, 64, 64, 64, 1, Operand::A).unwrap();
        let bv = MatRef::new(&b, 64, 64, 64, 1, Operand::B).unwrap();
        let cv = MatMut::new(&mut c, 64, 64, 64, 1, Operand::C).unwrap();
        let err = gemm(1.0, av, bv, 0.0, cv, 2).unwrap_err();
        assert!(matches!(err, Error::UnsupportedDTypes { .. }), "{err}");
        assert!(c.iter().all(|x| x.to_f32() == 7.0));
    }
    refused::<f32, f32, bf16>();
    refused::<f32, f32, f16>();
    refused::<bf16, f16, f32>();
    refused::<f16, f16, bf16>();
    refused::<bf16, bf16, f16>();
    refused::<f32, bf16, f32>();
    refused::<Fp8E4M3Fnuz, Fp8E5M2, f32>();
    refused::<Fp8E4M3, Fp8E4M3, Fp8E4M3>();
    refused::<Fp8E4M3, f32, f32>();

    let a = vec![1.0f32; 12];
    let b = vec![1.0f32; 20];
    let mut c = vec![7.0f32; 15];
    let av = MatRef::new(&a, 3, 4, 4, 1, Operand::A).unwrap();
    let bv = MatRef::new(&b, 5, 4, 4, 1, Operand::B).unwrap();
    let cv = MatMut::new(&mut c, 3, 5, 5, 1, Operand::C).unwrap();
    assert!(matches!(gemm(1.0, av, bv, 0.0, cv, 1), Err(Error::ShapeMismatch(_))));
    assert!(c.iter().all(|&x| x == 7.0));
    assert_eq!(DType::F32, f32::DTYPE);
}

#[test]
fn special_values_propagate() {
    // inf in A gives inf or NaN in its row, as IEEE arithmetic does; the padding must not turn a
    // finite result into NaN (odd k: the pad pairs multiply 0 by 0).
    let (m, n, k) = (40, 37, 33);
    let mut a = vec![bf16::from_f32(1.0); m * k];
    a[5 * k + 3] = bf16::INFINITY;
    let b = vec![bf16::from_f32(0.5); k * n];
    for kernel in KERNELS {
        let mut c = vec![0f32; m * n];
        let p = GemmProblem::new(m, n, k).with_elements::<bf16, bf16, f32>();
        let (av, bv, cv) = p.views(&a, &b, &mut c).unwrap();
        gemm_with(1.0, av, bv, 0.0, cv, &Options { threads: 2, kernel }).unwrap();
        for i in 0..m {
            for j in 0..n {
                let x = c[i * n + j];
                if i == 5 {
                    assert_eq!(x, f32::INFINITY);
                } else {
                    assert_eq!(x, k as f32 * 0.5, "{kernel:?} ({i}, {j})");
                }
            }
        }
    }
}

#[test]
fn beta_zero_with_nan_in_c_on_every_layout() {
    for (layout, ta, tb) in layouts() {
        for (m, n, k) in [(5, 3, 2), (70, 40, 33), (260, 100, 64)] {
            for kernel in KERNELS {
                let p = GemmProblem::new(m, n, k).with_layout(layout).with_transposes(ta, tb);
                let spans = p.validate().unwrap();
                let mut rng = ChaCha8Rng::seed_from_u64(21);
                let a: Vec<f32> = random(&mut rng, spans.a);
                let b: Vec<f32> = random(&mut rng, spans.b);
                let mut c = vec![f32::NAN; spans.c];
                let (av, bv, cv) = p.views(&a, &b, &mut c).unwrap();
                gemm_with(1.0, av, bv, 0.0, cv, &Options { threads: 2, kernel }).unwrap();
                let r = check(&p, &a, &b, &vec![0.0; spans.c], &c, None).unwrap();
                assert!(r.passed(), "{layout:?} {ta:?} {tb:?} {m}x{n}x{k} {kernel:?}: {r:?}");
            }
        }
    }
}

#[test]
fn the_bf16_kernel_flushes_denormal_inputs_as_documented() {
    // 2^-130 (a bf16 denormal) times 2^100: the F32Panels path gives 2^-30 per product, vdpbf16ps
    // treats the denormal as zero. Pins the behaviour documented on `gemm`.
    let tiny = bf16::from_f32(2f32.powi(-130));
    let (m, n, k) = (40, 40, 40);
    let a = vec![tiny; m * k];
    let b = vec![bf16::from_f32(2f32.powi(100)); k * n];
    let p = GemmProblem::new(m, n, k).with_elements::<bf16, bf16, f32>();
    let mut c = vec![1f32; m * n];
    let (av, bv, cv) = p.views(&a, &b, &mut c).unwrap();
    gemm(1.0, av, bv, 0.0, cv, 1).unwrap();
    let exact = k as f32 * 2f32.powi(-30);
    let has_bf16_dot = cfg!(target_arch = "x86_64") && {
        #[cfg(target_arch = "x86_64")]
        let d = std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bf16");
        #[cfg(not(target_arch = "x86_64"))]
        let d = false;
        d
    };
    let expected = if has_bf16_dot { 0.0 } else { exact };
    assert!(c.iter().all(|&x| x == expected), "{} vs {expected}", c[0]);
}

#[test]
fn tall_narrow_column_major_c_is_shared_out_by_rows() {
    // 5 columns cannot be split between threads; the rows go to private buffers instead.
    // Past 2^21 multiply-adds per worker, so the threads really run.
    for (m, n, k) in [(3000, 5, 300), (97, 1, 300), (5000, 7, 200)] {
        let p = GemmProblem::new(m, n, k).with_layout(Layout::ColMajor).with_scalars(0.5, -2.0);
        for threads in [2, 3] {
            run::<bf16, bf16, bf16>(&p, threads, KernelChoice::Auto, 2);
            run::<f16, f16, f32>(&p, threads, KernelChoice::Auto, 2);
            run::<f32, f32, f32>(&p, threads, KernelChoice::F32Panels, 2);
            run::<Fp8E4M3Fnuz, Fp8E4M3Fnuz, f32>(&p, threads, KernelChoice::Portable, 2);
        }
    }
}
