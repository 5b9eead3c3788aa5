//! Block-scaled GEMMs through the runtime (issue 26 item 4): the host path against gemm-core's
//! exact references (`mx_gemm`, `block_fp8_gemm`) on edge shapes and every MX format pair, the
//! refusals (Y untouched), plain GEMMs refusing fp6/fp4, and the emulated GPUs' answers.
//!
//! **Tolerance.** The references sum every term exactly and round once to f32. The host path
//! sums each K group (at most `block_k` = 32 or 128 terms) in f32, then scales and adds the
//! groups in f64 and rounds once, so `|host - ref| <= (block_k + 2) * 2^-24 * S`, where `S` is
//! the sum of the terms' magnitudes `|alpha * sa * a * sb * b|` plus `|beta * y|` (the f32
//! summation bound `(n - 1) u S` for the group, one rounding of the result, slack for the
//! group's terms' own f64 accumulation); for bf16/f16 Y one more rounding: a relative `2^-8` /
//! `2^-11` of the value plus f16's smallest subnormal. Most elements come out bit-exact; the
//! bound is what must hold for all.

use gemm_core::block_fp8::BlockFp8Matrix;
use gemm_core::fp8::Fp8Format;
use gemm_core::mx::{mx_gemm, MxFormat, MxMatrix, E8M0};
use gemm_core::reference::random_values;
use gemm_dispatch::{
    bf16, f16, BlockScaleError, BlockScaledProblem, BlockShape, Context, DType, Element, Error, GemmProblem,
    ScaleSlice, ScaleType,
};

/// Garbage for padding: if the implementation read it, the results would show it (a NaN scale,
/// a large element).
const PAD_BYTE: u8 = 0x77;

/// Values spread over many binades, row by row (so the block scales differ), seeded.
fn values(rows: usize, k: usize, seed: u64) -> Vec<f32> {
    let v: Vec<f32> = random_values(rows * k, seed);
    v.iter().enumerate().map(|(i, x)| x * 2f32.powi(((i / 32) % 7) as i32 - 3)).collect()
}

/// A packed MX operand laid out with `ld` elements per row (padding = garbage) and its scales
/// with `lds` scales per row (padding = the NaN scale).
fn mx_operand(m: &MxMatrix, ld: usize, lds: usize) -> (Vec<u8>, Vec<E8M0>) {
    let bits = m.format().bits() as usize;
    let row_bytes = ld * bits / 8;
    let mut bytes = vec![PAD_BYTE; m.rows() * row_bytes];
    for r in 0..m.rows() {
        let row = m.packed_row(r);
        bytes[r * row_bytes..][..row.len()].copy_from_slice(&row);
    }
    let nb = MxMatrix::blocks_per_row(m.k());
    let mut scales = vec![E8M0::NAN; m.rows() * lds];
    for r in 0..m.rows() {
        scales[r * lds..][..nb].copy_from_slice(&m.scales()[r * nb..][..nb]);
    }
    (bytes, scales)
}

/// Y's values as f32 (in its row-major layout with ldc).
fn y_to_f32<C: Element>(y: &[C]) -> Vec<f32> {
    y.iter().map(|v| v.to_f32()).collect()
}

/// Checks `got` (the m x n block of Y, ldc) against the exact reference `want` (tight m x n),
/// with the module's bound from the term magnitudes `mag` (tight m x n), and Y's padding
/// against `before`.
#[allow(clippy::too_many_arguments)]
fn check_y<C: Element>(
    what: &str,
    got: &[C],
    before: &[C],
    want: &[f32],
    mag: &[f64],
    (m, n, ldc): (usize, usize, usize),
    block_k: usize,
) {
    let rel_out = match C::DTYPE {
        DType::F32 => 0.0,
        DType::Bf16 => 2f64.powi(-8),
        _ => 2f64.powi(-11),
    };
    let tiny = if C::DTYPE == DType::F32 { 2f64.powi(-149) } else { 2f64.powi(-24) };
    let got32 = y_to_f32(got);
    for i in 0..m {
        for j in 0..n {
            let (g, w) = (f64::from(got32[i * ldc + j]), f64::from(want[i * n + j]));
            let bound = (block_k as f64 + 2.0) * 2f64.powi(-24) * mag[i * n + j] + rel_out * w.abs() + tiny;
            assert!((g - w).abs() <= bound, "{what}: Y[{i},{j}] = {g}, reference {w} (bound {bound:e})");
        }
        for j in n..ldc {
            if i * ldc + j < got.len() {
                let (g, b) = (got[i * ldc + j].to_f32().to_bits(), before[i * ldc + j].to_f32().to_bits());
                assert_eq!(g, b, "{what}: padding Y[{i},{j}] was written");
            }
        }
    }
}

/// One MX GEMM on the host context against `mx_gemm`.
#[allow(clippy::too_many_arguments)]
fn run_mx<C: Element>(
    ctx: &Context,
    (fa, fb): (MxFormat, MxFormat),
    (m, n, k): (usize, usize, usize),
    (lda, ldb, ldc): (usize, usize, usize),
    (alpha, beta): (f32, f32),
    seed: u64,
) {
    run_mx_lds::<C>(ctx, (fa, fb), (m, n, k), (lda, ldb, ldc), (alpha, beta), seed, (k / 32 + 1, k / 32 + 2));
}

/// [`run_mx`] with the scales' leading dimensions given (the GPU kernels want multiples of 4).
#[allow(clippy::too_many_arguments)]
fn run_mx_lds<C: Element>(
    ctx: &Context,
    (fa, fb): (MxFormat, MxFormat),
    (m, n, k): (usize, usize, usize),
    (lda, ldb, ldc): (usize, usize, usize),
    (alpha, beta): (f32, f32),
    seed: u64,
    (lsa, lsb): (usize, usize),
) {
    let what = format!("{fa} x {fb} {m}x{n}x{k} ld {lda},{ldb},{ldc} alpha {alpha} beta {beta} -> {}", C::DTYPE);
    let a = MxMatrix::quantize(fa, m, k, &values(m, k, seed)).unwrap();
    let b = MxMatrix::quantize(fb, n, k, &values(n, k, seed + 1)).unwrap();
    let (ab, asc) = mx_operand(&a, lda, lsa);
    let (bb, bsc) = mx_operand(&b, ldb, lsb);
    let p = BlockScaledProblem::mx(m, n, k, DType::from_mx_format(fa), DType::from_mx_format(fb))
        .with_leading_dims(lda, ldb, ldc)
        .with_scale_lds(lsa, lsb)
        .with_scalars(alpha, beta)
        .with_c_type(C::DTYPE);
    // beta = 0: Y starts as NaN (never read); else as values (rounded to C's type first, so the
    // reference sees what the GEMM reads).
    let y0: Vec<C> = if beta == 0.0 {
        vec![C::from_f32(f32::NAN); m * ldc]
    } else {
        random_values::<f32>(m * ldc, seed + 2).into_iter().map(C::from_f32).collect()
    };
    let mut y = y0.clone();
    ctx.gemm_block_scaled(&p, &ab, ScaleSlice::E8M0(&asc), &bb, ScaleSlice::E8M0(&bsc), &mut y).unwrap();
    let mut want: Vec<f32> = (0..m * n).map(|x| y0[(x / n) * ldc + x % n].to_f32()).collect();
    mx_gemm(&a, &b, &mut want, alpha, beta).unwrap();
    let mag: Vec<f64> = (0..m * n)
        .map(|x| {
            let (i, j) = (x / n, x % n);
            let terms: f64 = (0..k).map(|l| (f64::from(alpha) * a.value(i, l) * b.value(j, l)).abs()).sum();
            terms + if beta != 0.0 { (f64::from(beta) * f64::from(y0[i * ldc + j].to_f32())).abs() } else { 0.0 }
        })
        .collect();
    check_y(&what, &y, &y0, &want, &mag, (m, n, ldc), 32);
}

#[test]
fn every_mx_format_pair_matches_the_exact_reference() {
    let ctx = Context::host(1);
    let mut seed = 100;
    for fa in MxFormat::ALL {
        for fb in MxFormat::ALL {
            // Rows of 128 elements are 16-byte aligned in every width (fp6: 96 bytes).
            seed += 3;
            run_mx::<f32>(&ctx, (fa, fb), (3, 5, 96), (128, 128, 5), (1.0, 0.0), seed);
        }
    }
}

#[test]
fn mx_edge_shapes_m1_odd_n_k32_padding_beta_and_output_types() {
    let ctx = Context::host(1);
    // K = 32: one block. fp6 rows need ld a multiple of 64 elements (48 bytes) to stay 16-byte
    // aligned, fp8 of 16, fp4 of 32.
    let pairs = [(MxFormat::E4M3, MxFormat::E2M1), (MxFormat::E2M3, MxFormat::E3M2), (MxFormat::E5M2, MxFormat::E5M2)];
    for (x, (fa, fb)) in pairs.into_iter().enumerate() {
        // 64 elements: 64, 48 or 32 bytes.
        let ld = |_: MxFormat| 64;
        let seed = 7 + 10 * x as u64;
        run_mx::<f32>(&ctx, (fa, fb), (1, 7, 32), (ld(fa), ld(fb), 9), (1.0, 0.0), seed);
        run_mx::<f32>(&ctx, (fa, fb), (1, 7, 32), (ld(fa), ld(fb), 7), (1.5, 0.5), seed + 1);
        run_mx::<bf16>(&ctx, (fa, fb), (2, 9, 64), (128, 192, 12), (-0.75, 0.0), seed + 2);
        run_mx::<f16>(&ctx, (fa, fb), (4, 3, 160), (192, 192, 3), (0.5, -2.0), seed + 3);
    }
    // alpha = 0: Y = beta * Y.
    run_mx::<f32>(&ctx, (MxFormat::E4M3, MxFormat::E4M3), (2, 3, 32), (32, 32, 3), (0.0, 2.0), 5);
    // K = 0: Y = beta * Y, nothing read.
    run_mx::<f32>(&ctx, (MxFormat::E2M1, MxFormat::E2M1), (2, 3, 0), (32, 32, 4), (1.0, 0.25), 6);
}

/// Block fp8 operand with `ld` elements per row and `lds` scales per scale row (garbage pads).
fn fp8_operand(q: &BlockFp8Matrix, ld: usize, lds: usize) -> (Vec<u8>, Vec<f32>) {
    let (rows, k) = (q.rows(), q.k());
    let mut bytes = vec![PAD_BYTE; rows * ld];
    for r in 0..rows {
        bytes[r * ld..][..k].copy_from_slice(&q.codes()[r * k..][..k]);
    }
    let (br, bk) = q.block();
    let (nr, nk) = (rows.div_ceil(br), k.div_ceil(bk));
    let mut scales = vec![f32::NAN; nr * lds];
    for r in 0..nr {
        scales[r * lds..][..nk].copy_from_slice(&q.scales()[r * nk..][..nk]);
    }
    (bytes, scales)
}

fn fp8_format(d: DType) -> Fp8Format {
    match d {
        DType::Fp8E4M3Fnuz => Fp8Format::E4M3FNUZ,
        DType::Fp8E5M2Fnuz => Fp8Format::E5M2FNUZ,
        DType::Fp8E4M3 => Fp8Format::E4M3FN,
        _ => Fp8Format::E5M2,
    }
}

#[allow(clippy::too_many_arguments)]
fn run_block_fp8<C: Element>(
    ctx: &Context,
    (ta, tb): (DType, DType),
    (ra, rb): (usize, usize),
    (m, n, k): (usize, usize, usize),
    (lda, ldb, ldc): (usize, usize, usize),
    (alpha, beta): (f32, f32),
    seed: u64,
) {
    let what = format!("{ta} x {tb} blocks {ra}/{rb} {m}x{n}x{k} ld {lda},{ldb},{ldc} beta {beta} -> {}", C::DTYPE);
    let a = BlockFp8Matrix::quantize(fp8_format(ta), m, k, (ra, 128), &values(m, k, seed)).unwrap();
    let b = BlockFp8Matrix::quantize(fp8_format(tb), n, k, (rb, 128), &values(n, k, seed + 1)).unwrap();
    let groups = k.div_ceil(128);
    let (lsa, lsb) = (groups + 1, groups + 3);
    let (ab, asc) = fp8_operand(&a, lda, lsa);
    let (bb, bsc) = fp8_operand(&b, ldb, lsb);
    let p = BlockScaledProblem::block_fp8(m, n, k, ta, tb, ra, rb)
        .with_leading_dims(lda, ldb, ldc)
        .with_scale_lds(lsa, lsb)
        .with_scalars(alpha, beta)
        .with_c_type(C::DTYPE);
    let y0: Vec<C> = if beta == 0.0 {
        vec![C::from_f32(f32::NAN); m * ldc]
    } else {
        random_values::<f32>(m * ldc, seed + 2).into_iter().map(C::from_f32).collect()
    };
    let mut y = y0.clone();
    ctx.gemm_block_scaled(&p, &ab, ScaleSlice::F32(&asc), &bb, ScaleSlice::F32(&bsc), &mut y).unwrap();
    let mut want: Vec<f32> = (0..m * n).map(|x| y0[(x / n) * ldc + x % n].to_f32()).collect();
    gemm_core::block_fp8::block_fp8_gemm(&a, &b, &mut want, alpha, beta).unwrap();
    let mag: Vec<f64> = (0..m * n)
        .map(|x| {
            let (i, j) = (x / n, x % n);
            let terms: f64 = (0..k).map(|l| (f64::from(alpha) * a.value(i, l) * b.value(j, l)).abs()).sum();
            terms + if beta != 0.0 { (f64::from(beta) * f64::from(y0[i * ldc + j].to_f32())).abs() } else { 0.0 }
        })
        .collect();
    check_y(&what, &y, &y0, &want, &mag, (m, n, ldc), 128);
}

#[test]
fn block_fp8_edge_shapes_match_the_exact_reference() {
    let ctx = Context::host(1);
    let fnuz = (DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz);
    let ocp = (DType::Fp8E4M3, DType::Fp8E4M3);
    // K = 200: a full group and a partial one. N = 130 crosses a 128-row weight block.
    run_block_fp8::<f32>(&ctx, fnuz, (1, 128), (1, 130, 200), (208, 224, 131), (1.0, 0.0), 11);
    run_block_fp8::<f32>(&ctx, ocp, (1, 128), (3, 130, 200), (208, 208, 130), (0.5, 1.5), 12);
    run_block_fp8::<bf16>(&ctx, ocp, (128, 1), (129, 5, 300), (304, 320, 7), (2.0, 0.0), 13);
    run_block_fp8::<f16>(
        &ctx,
        (DType::Fp8E5M2, DType::Fp8E4M3),
        (128, 128),
        (130, 3, 64),
        (64, 80, 3),
        (1.0, -1.0),
        14,
    );
    // K smaller than one group, M = 1, odd N.
    run_block_fp8::<f32>(&ctx, fnuz, (1, 128), (1, 7, 16), (16, 16, 7), (1.0, 0.0), 15);
}

/// Every refusal is typed and leaves Y bit for bit as it was.
#[test]
fn bad_block_scaled_calls_are_typed_errors_and_leave_y_untouched() {
    let ctx = Context::host(1);
    let (m, n, k) = (2, 3, 64);
    let a = vec![0x11u8; m * 64];
    let b = vec![0x22u8; n * 64];
    let s = vec![E8M0::ONE; 8];
    let f = vec![1f32; 8];
    let y0: Vec<f32> = (0..m * n).map(|x| x as f32 + 0.5).collect();
    let good = BlockScaledProblem::mx(m, n, k, DType::Fp8E4M3, DType::Fp8E4M3).with_scalars(1.0, 1.0);
    let run = |p: &BlockScaledProblem, sa: ScaleSlice<'_>, a: &[u8]| {
        let mut y = y0.clone();
        let r = ctx.gemm_block_scaled(p, a, sa, &b, ScaleSlice::E8M0(&s), &mut y);
        assert_eq!(
            y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            y0.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        r.unwrap_err()
    };
    let mut shape = good;
    shape.scale_a.block = BlockShape::TILE_128;
    assert!(matches!(run(&shape, ScaleSlice::E8M0(&s), &a), Error::BlockScale(BlockScaleError::BlockShape { .. })));
    let k48 = BlockScaledProblem::mx(m, n, 48, DType::Fp8E4M3, DType::Fp8E4M3).with_leading_dims(64, 64, n);
    assert!(matches!(
        run(&k48, ScaleSlice::E8M0(&s), &a),
        Error::BlockScale(BlockScaleError::KNotMultiple { k: 48, block: 32 })
    ));
    assert!(matches!(
        run(&good.with_scale_lds(1, 2), ScaleSlice::E8M0(&s), &a),
        Error::BlockScale(BlockScaleError::ScaleLeadingDimension { ld: 1, min: 2, .. })
    ));
    assert!(matches!(
        run(&good, ScaleSlice::F32(&f), &a),
        Error::BlockScale(BlockScaleError::ScaleSlice { declared: ScaleType::E8M0, actual: ScaleType::F32, .. })
    ));
    assert!(matches!(
        run(&good.with_leading_dims(72, 64, n), ScaleSlice::E8M0(&s), &a),
        Error::BlockScale(BlockScaleError::MisalignedRows { ld: 72, bits: 8, .. })
    ));
    assert!(matches!(
        run(&good, ScaleSlice::E8M0(&s), &a[..100]),
        Error::BlockScale(BlockScaleError::BufferTooSmall { len: 100, required: 128, .. })
    ));
    let fnuz = BlockScaledProblem::mx(m, n, k, DType::Fp8E4M3Fnuz, DType::Fp8E4M3);
    assert!(matches!(run(&fnuz, ScaleSlice::E8M0(&s), &a), Error::BlockScale(BlockScaleError::Format { .. })));
    let mut y = vec![f16::ZERO; m * n];
    let e = ctx.gemm_block_scaled(&good, &a, ScaleSlice::E8M0(&s), &b, ScaleSlice::E8M0(&s), &mut y).unwrap_err();
    assert!(matches!(e, Error::Invalid(gemm_core::Error::DTypeMismatch { .. })), "{e}");
    // The same problem is fine.
    let mut y = y0.clone();
    ctx.gemm_block_scaled(&good, &a, ScaleSlice::E8M0(&s), &b, ScaleSlice::E8M0(&s), &mut y).unwrap();
    assert_ne!(y, y0);
}

/// fp6/fp4 have no byte size: every plain path refuses them with a typed error, no panic.
#[test]
fn plain_gemms_refuse_sub_byte_dtypes() {
    let ctx = Context::host(1);
    for d in DType::SUB_BYTE {
        let p = GemmProblem::new(2, 2, 2).with_dtypes(d, d, DType::F32);
        let want = Error::Invalid(gemm_core::Error::SubByteDType { operand: gemm_core::Operand::A, dtype: d });
        assert_eq!(p.validate().map(|_| ()).map_err(Error::from), Err(want.clone()));
        let mut c = [0u8; 16];
        assert_eq!(ctx.gemm_bytes(&p, &[0; 4], &[0; 4], &mut c), Err(want.clone()));
        let batch = gemm_core::StridedBatch { problem: p, count: 2, stride_a: 4, stride_b: 4, stride_c: 4 };
        assert_eq!(ctx.gemm_strided_batched_bytes(&batch, &[0; 8], &[0; 8], &mut [0; 32]).err(), Some(want));
        assert!(gemm_dispatch::plan::choice::choose(gemm_core::Arch::Gfx950, &p).is_err());
        let out = GemmProblem::new(2, 2, 2).with_dtypes(DType::F32, DType::F32, d);
        assert!(matches!(out.validate(), Err(gemm_core::Error::SubByteDType { .. })));
    }
}

/// The emulated GPUs: MX on gfx942 is refused with the reason (and a context passes it to its
/// next device: the host computes it); gfx950 runs MX of two element widths (fp4 X, fp8 W) to
/// the host's numbers; a job no GPU kernel runs (K-tiled scales in another tile than the
/// kernels') answers `NoKernel` with the reason from `run_block_scaled`; Y untouched.
#[test]
fn emulated_gpus_refuse_or_name_the_missing_kernel() {
    let (m, n, k) = (2, 3, 64);
    let qa = MxMatrix::quantize(MxFormat::E2M1, m, k, &values(m, k, 1)).unwrap();
    let qb = MxMatrix::quantize(MxFormat::E4M3, n, k, &values(n, k, 2)).unwrap();
    let (ab, asc) = mx_operand(&qa, 64, 4);
    let (bb, bsc) = mx_operand(&qb, 64, 4);
    let p = BlockScaledProblem::mx(m, n, k, DType::Fp4E2M1, DType::Fp8E4M3)
        .with_leading_dims(64, 64, n)
        .with_scale_lds(4, 4);
    let y0 = vec![3.25f32; m * n];
    let call = |ctx: &Context, y: &mut [f32]| {
        ctx.gemm_block_scaled(&p, &ab, ScaleSlice::E8M0(&asc), &bb, ScaleSlice::E8M0(&bsc), y)
    };
    let mut y = y0.clone();
    let e = call(&Context::from_spec("emu:gfx942").unwrap(), &mut y).unwrap_err();
    assert!(
        matches!(e, Error::BlockScale(BlockScaleError::UnsupportedArch { arch: gemm_core::Arch::Gfx942, .. })),
        "{e}"
    );
    assert!(e.to_string().contains("no scaled MFMA"), "{e}");
    assert_eq!(y, y0);
    // gfx942 then the host: the host computes it.
    call(&Context::from_spec("emu:gfx942,host").unwrap(), &mut y).unwrap();
    let mut want = vec![0f32; m * n];
    mx_gemm(&qa, &qb, &mut want, 1.0, 0.0).unwrap();
    for (g, w) in y.iter().zip(&want) {
        assert!((g - w).abs() <= 34.0 * 2f32.powi(-24) * w.abs().max(1e-30) + 1e-6, "{g} vs {w}");
    }
    // gfx950 runs the fp4 x fp8 kernel: the host's numbers.
    let host_y = y.clone();
    let mut y = y0.clone();
    call(&Context::from_spec("emu:gfx950").unwrap(), &mut y).unwrap();
    for (g, h) in y.iter().zip(&host_y) {
        assert!((g - h).abs() <= 68.0 * 2f32.powi(-24) * h.abs().max(1e-30) + 1e-6, "gfx950 {g} vs host {h}");
    }
    // K-tiled scales in tiles of 2 blocks (the scale buffers hold them): the mixed kernels
    // read 4 per K tile.
    let kt2 = gemm_dispatch::ScaleLayout::KTiled { tile: 2 };
    let tiled = p.with_scale_layouts(kt2, kt2);
    let mut y = y0.clone();
    let e = Context::from_spec("emu:gfx950")
        .unwrap()
        .gemm_block_scaled(&tiled, &ab, ScaleSlice::E8M0(&asc), &bb, ScaleSlice::E8M0(&bsc), &mut y)
        .unwrap_err();
    assert!(matches!(&e, Error::NoKernel { device, .. } if device == "emu:gfx950"), "{e}");
    assert!(e.to_string().contains("tiles of 4 blocks"), "the plan's reason: {e}");
    assert_eq!(y, y0);
    // Block fp8 with the activations' and weights' block shapes swapped: no kernel.
    let a8 = vec![0x38u8; m * 64];
    let b8 = vec![0x38u8; n * 64];
    let s8 = vec![1f32; 8];
    let swapped = BlockScaledProblem::block_fp8(m, n, k, DType::Fp8E4M3Fnuz, DType::Fp8E4M3Fnuz, 128, 1)
        .with_leading_dims(64, 64, n);
    let mut y = y0.clone();
    let ctx = Context::from_spec("emu:gfx942").unwrap();
    let e = ctx.gemm_block_scaled(&swapped, &a8, ScaleSlice::F32(&s8), &b8, ScaleSlice::F32(&s8), &mut y).unwrap_err();
    assert!(matches!(e, Error::NoKernel { .. }) && e.to_string().contains("DeepSeek-V3"), "{e}");
    assert_eq!(y, y0);
    // ... and OCP fp8 on gfx942 is the wrong flavour.
    let ocp =
        BlockScaledProblem::block_fp8(m, n, k, DType::Fp8E4M3, DType::Fp8E4M3, 1, 128).with_leading_dims(64, 64, n);
    let e = ctx.gemm_block_scaled(&ocp, &a8, ScaleSlice::F32(&s8), &b8, ScaleSlice::F32(&s8), &mut y).unwrap_err();
    assert!(matches!(e, Error::BlockScale(BlockScaleError::UnsupportedArch { .. })), "{e}");
}

/// The GPU kernels through the runtime on emulated GPUs alone (no host to fall back to, checkers
/// on): MXFP4, MXFP8 and MXFP6 (both flavours) and pairs of two widths on gfx950, block-scaled fp8 (DeepSeek-V3's 1x128 /
/// 128x128) on gfx942 (FNUZ) and gfx950 (OCP); edge shapes (M = 1, odd N, K tails, padded leading
/// dimensions, beta = 0 over NaN and beta != 0, every output type), against the exact references
/// with the host path's bound.
#[test]
fn emulated_gpus_run_the_block_scaled_kernels() {
    let g950 = Context::from_spec("emu:gfx950").unwrap();
    let g942 = Context::from_spec("emu:gfx942").unwrap();
    let (e2m1, e4m3, e5m2) = (MxFormat::E2M1, MxFormat::E4M3, MxFormat::E5M2);
    run_mx_lds::<f32>(&g950, (e2m1, e2m1), (5, 70, 256), (288, 320, 73), (1.0, 0.0), 31, (8, 12));
    run_mx_lds::<bf16>(&g950, (e4m3, e4m3), (33, 17, 96), (112, 96, 17), (1.0, 0.5), 32, (4, 8));
    run_mx_lds::<f16>(&g950, (e5m2, e4m3), (1, 3, 32), (32, 48, 3), (2.0, 0.0), 33, (4, 4));
    // MXFP6 (rows a multiple of 64 elements, 48 bytes): a K tail of three blocks, both flavours.
    let (e2m3, e3m2) = (MxFormat::E2M3, MxFormat::E3M2);
    run_mx_lds::<f32>(&g950, (e2m3, e2m3), (5, 70, 224), (320, 256, 73), (1.0, 0.0), 39, (8, 12));
    run_mx_lds::<bf16>(&g950, (e3m2, e2m3), (33, 17, 96), (128, 192, 17), (1.0, 0.5), 40, (4, 8));
    // Two widths: fp8 X with fp4 W, fp6 X with fp8 W, fp4 X with fp6 W (each row its own
    // 16-byte step: 16 fp8, 64 fp6, 32 fp4 elements).
    run_mx_lds::<f32>(&g950, (e4m3, e2m1), (3, 40, 160), (176, 224, 41), (1.0, 0.0), 41, (8, 8));
    run_mx_lds::<f16>(&g950, (e2m3, e5m2), (1, 9, 64), (128, 80, 9), (0.5, 1.0), 42, (4, 4));
    run_mx_lds::<bf16>(&g950, (e2m1, e3m2), (20, 3, 288), (320, 320, 5), (1.0, 0.0), 43, (12, 12));
    let fnuz = (DType::Fp8E4M3Fnuz, DType::Fp8E4M3Fnuz);
    let ocp = (DType::Fp8E4M3, DType::Fp8E4M3);
    run_block_fp8::<f32>(&g942, fnuz, (1, 128), (3, 130, 200), (208, 224, 131), (1.0, 0.0), 34);
    run_block_fp8::<bf16>(&g950, ocp, (1, 128), (64, 200, 384), (384, 400, 200), (0.5, 1.5), 35);
    run_block_fp8::<f32>(&g950, ocp, (1, 128), (1, 7, 16), (16, 16, 7), (1.0, 0.0), 36);
    // K = 0: Y = beta * Y through the kernels (no scale or element is read).
    run_mx_lds::<f32>(&g950, (e2m1, e2m1), (3, 9, 0), (32, 32, 9), (1.0, 0.5), 37, (4, 4));
    run_block_fp8::<f32>(&g942, fnuz, (1, 128), (3, 9, 0), (16, 16, 9), (1.0, 0.5), 38);
}

/// The job carries every field of the problem, and gives it back.
#[test]
fn the_job_round_trips_its_problem() {
    let p = BlockScaledProblem::block_fp8(5, 130, 300, DType::Fp8E4M3, DType::Fp8E5M2, 1, 128)
        .with_leading_dims(304, 320, 131)
        .with_scale_lds(4, 5)
        .with_scalars(0.5, 2.0)
        .with_c_type(DType::Bf16);
    let job = gemm_dispatch::BlockScaledJob::new(&p, [0x1000, 0x2000, 0x3000, 0x4000, 0x5000]);
    assert_eq!(job.problem(), p);
    assert_eq!((job.a, job.b, job.c, job.scale_a, job.scale_b), (0x1000, 0x2000, 0x3000, 0x4000, 0x5000));
    assert_eq!((job.block_rows_a, job.block_rows_b, job.block_k, job.scale_type), (1, 128, 128, ScaleType::F32));
    assert_eq!((job.ld_scale_a, job.ld_scale_b, job.ldc), (4, 5, 131));
}

/// Row-major scales (`rows x groups`, tight) rewritten into `desc`'s layout, `fill` in the gaps.
fn lay_out<T: Copy>(tight: &[T], rows: usize, groups: usize, desc: &gemm_dispatch::ScaleDesc, fill: T) -> Vec<T> {
    let mut out = vec![fill; desc.span(rows, groups).unwrap()];
    for r in 0..rows {
        for g in 0..groups {
            out[desc.index(r, g)] = tight[r * groups + g];
        }
    }
    out
}

/// `|got - want| <= (block_k + 2) 2^-24 S` element by element (the module's bound, f32 Y).
fn within(what: &str, got: &[f32], want: &[f32], mag: &[f64], block_k: usize) {
    for (x, ((g, w), s)) in got.iter().zip(want).zip(mag).enumerate() {
        let bound = (block_k as f64 + 2.0) * 2f64.powi(-24) * s + 2f64.powi(-149);
        assert!((f64::from(*g) - f64::from(*w)).abs() <= bound, "{what}: Y[{x}] = {g}, reference {w}");
    }
}

/// The scale layouts (row-major, column-major, K-tiled) on the host and on the emulated GPUs
/// (MX K-tiled in the kernels' tile on gfx950; block fp8 with column-major activation scales on
/// both archs), against the exact references; a layout no kernel reads is `NoKernel` on the GPU.
#[test]
fn scale_layouts_on_the_host_and_the_gpus() {
    use gemm_dispatch::ScaleLayout::{ColMajor, KTiled, RowMajor};
    let host = Context::host(1);
    let g950 = Context::from_spec("emu:gfx950").unwrap();
    let g942 = Context::from_spec("emu:gfx942").unwrap();
    // MXFP4: the kernels' tile is 8 fp4 blocks (128 bytes of K).
    let (m, n, k) = (5, 70, 512);
    let a = MxMatrix::quantize(MxFormat::E2M1, m, k, &values(m, k, 41)).unwrap();
    let b = MxMatrix::quantize(MxFormat::E2M1, n, k, &values(n, k, 42)).unwrap();
    let g = k / 32;
    let mut want = vec![0f32; m * n];
    mx_gemm(&a, &b, &mut want, 1.0, 0.0).unwrap();
    let mag: Vec<f64> =
        (0..m * n).map(|x| (0..k).map(|l| (a.value(x / n, l) * b.value(x % n, l)).abs()).sum()).collect();
    for (layout, ld_a, ld_b) in [(KTiled { tile: 8 }, m + 1, n), (RowMajor, g + 4, g), (KTiled { tile: 4 }, m, n)] {
        let p = BlockScaledProblem::mx(m, n, k, DType::Fp4E2M1, DType::Fp4E2M1)
            .with_scale_lds(ld_a, ld_b)
            .with_scale_layouts(layout, layout);
        let sa = lay_out(a.scales(), m, g, &p.scale_a, E8M0::NAN);
        let sb = lay_out(b.scales(), n, g, &p.scale_b, E8M0::NAN);
        let (xa, wb) = (a.packed(), b.packed());
        let call = |ctx: &Context, y: &mut [f32]| {
            ctx.gemm_block_scaled(&p, &xa, ScaleSlice::E8M0(&sa), &wb, ScaleSlice::E8M0(&sb), y)
        };
        let mut y = vec![f32::NAN; m * n];
        call(&host, &mut y).unwrap();
        within(&format!("host MXFP4 {layout:?}"), &y, &want, &mag, 32);
        let mut y = vec![f32::NAN; m * n];
        if layout == (KTiled { tile: 4 }) {
            let e = call(&g950, &mut y).unwrap_err();
            assert!(matches!(e, Error::NoKernel { .. }) && e.to_string().contains("tiles of 8"), "{e}");
            continue;
        }
        call(&g950, &mut y).unwrap();
        within(&format!("gfx950 MXFP4 {layout:?}"), &y, &want, &mag, 32);
    }
    // MXFP6 (E2M3 x E3M2) with K-tiled scales (4 blocks per tile: the 96 bytes of whole
    // blocks an fp6 kernel consumes per 128-byte tile): the host and the GPU compute it.
    let (m, n, k) = (3, 40, 256);
    let a6 = MxMatrix::quantize(MxFormat::E2M3, m, k, &values(m, k, 45)).unwrap();
    let b6 = MxMatrix::quantize(MxFormat::E3M2, n, k, &values(n, k, 46)).unwrap();
    let p = BlockScaledProblem::mx(m, n, k, DType::Fp6E2M3, DType::Fp6E3M2)
        .with_scale_lds(m, n)
        .with_scale_layouts(KTiled { tile: 4 }, KTiled { tile: 4 });
    let sa = lay_out(a6.scales(), m, k / 32, &p.scale_a, E8M0::NAN);
    let sb = lay_out(b6.scales(), n, k / 32, &p.scale_b, E8M0::NAN);
    let (xa, wb) = (a6.packed(), b6.packed());
    let call = |ctx: &Context, y: &mut [f32]| {
        ctx.gemm_block_scaled(&p, &xa, ScaleSlice::E8M0(&sa), &wb, ScaleSlice::E8M0(&sb), y)
    };
    let mut want = vec![0f32; m * n];
    mx_gemm(&a6, &b6, &mut want, 1.0, 0.0).unwrap();
    let mag: Vec<f64> =
        (0..m * n).map(|x| (0..k).map(|l| (a6.value(x / n, l) * b6.value(x % n, l)).abs()).sum()).collect();
    let mut y = vec![f32::NAN; m * n];
    call(&host, &mut y).unwrap();
    within("host MXFP6 K-tiled", &y, &want, &mag, 32);
    let host_y = y;
    let mut y = vec![f32::NAN; m * n];
    call(&g950, &mut y).unwrap();
    within("gfx950 MXFP6 K-tiled", &y, &want, &mag, 32);
    within("gfx950 MXFP6 K-tiled against the host", &y, &host_y, &mag, 32);
    // The fp6 kernels read their scales in tiles of 4: a layout of 8 is refused, Y untouched.
    let p8 = p.with_scale_layouts(KTiled { tile: 8 }, KTiled { tile: 8 });
    let mut y = vec![1.5f32; m * n];
    let e = g950.gemm_block_scaled(&p8, &xa, ScaleSlice::E8M0(&sa), &wb, ScaleSlice::E8M0(&sb), &mut y).unwrap_err();
    assert!(matches!(e, Error::NoKernel { .. }) && e.to_string().contains("tiles of 4"), "{e}");
    assert!(y.iter().all(|&v| v == 1.5), "Y untouched");
    // Block fp8: X (activations) column-major, W row-major; on both archs.
    for (ctx, d) in [(&g942, DType::Fp8E4M3Fnuz), (&g950, DType::Fp8E4M3)] {
        let (m, n, k) = (40, 136, 300);
        let a = BlockFp8Matrix::quantize(fp8_format(d), m, k, (1, 128), &values(m, k, 43)).unwrap();
        let b = BlockFp8Matrix::quantize(fp8_format(d), n, k, (128, 128), &values(n, k, 44)).unwrap();
        let g = k.div_ceil(128);
        let ld = k.next_multiple_of(16);
        let p = BlockScaledProblem::block_fp8(m, n, k, d, d, 1, 128)
            .with_leading_dims(ld, ld, n)
            .with_scale_lds(m + 3, g)
            .with_scale_layouts(ColMajor, RowMajor);
        let (xa, _) = fp8_operand(&a, ld, g);
        let (wb, _) = fp8_operand(&b, ld, g);
        let sa = lay_out(a.scales(), m, g, &p.scale_a, f32::NAN);
        let sb = lay_out(b.scales(), n.div_ceil(128), g, &p.scale_b, f32::NAN);
        let mut want = vec![0f32; m * n];
        gemm_core::block_fp8::block_fp8_gemm(&a, &b, &mut want, 1.0, 0.0).unwrap();
        let mag: Vec<f64> =
            (0..m * n).map(|x| (0..k).map(|l| (a.value(x / n, l) * b.value(x % n, l)).abs()).sum()).collect();
        for (what, c) in [("host", &host), ("gpu", ctx)] {
            let mut y = vec![f32::NAN; m * n];
            c.gemm_block_scaled(&p, &xa, ScaleSlice::F32(&sa), &wb, ScaleSlice::F32(&sb), &mut y).unwrap();
            within(&format!("{what} block fp8 {d} column-major X scales"), &y, &want, &mag, 128);
        }
    }
}
