//! The host backend's fused epilogues and fp8 scales: the GEMM with an f32 C through gemm-host,
//! then the option's formula per element ([`Epilogue::apply`], [`Fp8Scales::apply`]) and one
//! rounding to C's dtype, as the GPU kernels do (the formulas and their order are documented in
//! [`crate::ops::epilogue`] and [`crate::ops::scales`]).

use crate::backends::host::HostBackend;
use crate::backends::{typed, typed_mut, validate_bytes, Backend};
use crate::error::{Error, Result};
use crate::ops::epilogue::{BiasAxis, Epilogue};
use crate::ops::scales::Fp8Scales;
use gemm_core::{bf16, f16, DType, GemmProblem, Layout, Operand};

/// Element `(i, j)` of C in `p`'s layout.
fn c_index(p: &GemmProblem, i: usize, j: usize) -> usize {
    match p.layout {
        Layout::RowMajor => i * p.ldc + j,
        Layout::ColMajor => i + j * p.ldc,
    }
}

/// The first `span` elements of C as f32; C's dtype must be f32, f16 or bf16 (the dtypes an
/// epilogue or a scaled GEMM writes).
fn read_c(p: &GemmProblem, c: &[u8], span: usize) -> Result<Vec<f32>> {
    Ok(match p.c_type {
        DType::F32 => typed::<f32>(c, Operand::C, p.c_type)?[..span].to_vec(),
        DType::F16 => typed::<f16>(c, Operand::C, p.c_type)?[..span].iter().map(|x| x.to_f32()).collect(),
        DType::Bf16 => typed::<bf16>(c, Operand::C, p.c_type)?[..span].iter().map(|x| x.to_f32()).collect(),
        other => {
            return Err(Error::Unsupported {
                device: "host".into(),
                why: format!("epilogues and fp8 scales write f32, f16 or bf16, not {other}"),
            })
        }
    })
}

/// A writer of element `i` of C from an f32 value, rounded once to C's dtype (f32, f16 or bf16;
/// [`read_c`] or the caller's checks refused the others).
fn writer<'c>(p: &GemmProblem, c: &'c mut [u8]) -> Result<Box<dyn FnMut(usize, f32) + 'c>> {
    Ok(match p.c_type {
        DType::F32 => {
            let out = typed_mut::<f32>(c, Operand::C, p.c_type)?;
            Box::new(move |i, y| out[i] = y)
        }
        DType::F16 => {
            let out = typed_mut::<f16>(c, Operand::C, p.c_type)?;
            Box::new(move |i, y| out[i] = f16::from_f32(y))
        }
        _ => {
            let out = typed_mut::<bf16>(c, Operand::C, p.c_type)?;
            Box::new(move |i, y| out[i] = bf16::from_f32(y))
        }
    })
}

/// `C = clamp(act(alpha op(A) op(B) + beta C + bias))` on the host, on byte buffers of `p`'s
/// dtypes: the GEMM with an f32 C (gemm-host, `threads` threads; C read only when `beta != 0`),
/// then [`Epilogue::apply`] on each element of the `m x n` block and one rounding to C's dtype
/// (f32, f16 or bf16). Elements outside the block (padding) are untouched.
pub fn gemm_epilogue_bytes(
    p: &GemmProblem,
    a: &[u8],
    b: &[u8],
    c: &mut [u8],
    ep: &Epilogue,
    bias: Option<&[f32]>,
    threads: usize,
) -> Result<()> {
    validate_bytes(p, a.len(), b.len(), c.len())?;
    ep.check(p, bias.map(<[f32]>::len))?;
    let spans = p.validate()?;
    // beta == 0 never reads C (it may hold NaN): start from zeros then.
    let mut c32 = if p.beta != 0.0 { read_c(p, c, spans.c)? } else { vec![0f32; spans.c] };
    if p.beta == 0.0 {
        read_c(p, &c[..0], 0)?; // the dtype check alone
    }
    let p32 = p.with_dtypes(p.a_type, p.b_type, DType::F32);
    HostBackend::new(0, threads).gemm(&p32, a, b, bytemuck::cast_slice_mut(&mut c32))?;
    let bias = bias.unwrap_or(&[]);
    let mut put = writer(p, c)?;
    for i in 0..p.m {
        for j in 0..p.n {
            let bv = match ep.bias {
                None => 0.0,
                Some(BiasAxis::PerRow) => bias[i],
                Some(BiasAxis::PerColumn) => bias[j],
            };
            let at = c_index(p, i, j);
            put(at, ep.apply(c32[at], bv));
        }
    }
    Ok(())
}

/// The scaled fp8 GEMM on the host, on byte buffers of `p`'s dtypes: the f32 sums from gemm-host
/// (`threads` threads; fp8 decoded exactly), then [`Fp8Scales::apply`] per element of the
/// `m x n` block and one rounding to C's dtype. Elements outside the block are untouched; bad
/// input (buffers, scales, vectors) is an error with C untouched.
#[allow(clippy::too_many_arguments)]
pub fn gemm_scaled_bytes(
    p: &GemmProblem,
    a: &[u8],
    b: &[u8],
    c: &mut [u8],
    scales: &Fp8Scales,
    row: Option<&[f32]>,
    col: Option<&[f32]>,
    threads: usize,
) -> Result<()> {
    validate_bytes(p, a.len(), b.len(), c.len())?;
    scales.check(p, row.map(<[f32]>::len), col.map(<[f32]>::len))?;
    let spans = p.validate()?;
    if p.m == 0 || p.n == 0 {
        return Ok(());
    }
    let c_in: Vec<f32> = if p.beta != 0.0 { read_c(p, c, spans.c)? } else { vec![] };
    // The sums alone: alpha 1, beta 0 (C never read), f32 C of the same leading dimension.
    let p32 = p.with_dtypes(p.a_type, p.b_type, DType::F32).with_scalars(1.0, 0.0);
    let mut acc = vec![0f32; spans.c];
    HostBackend::new(0, threads).gemm(&p32, a, b, bytemuck::cast_slice_mut(&mut acc))?;
    let s = scales.combined(p.alpha);
    let mut put = writer(p, c)?;
    for i in 0..p.m {
        for j in 0..p.n {
            let w = row.map_or(1.0, |r| r[i]) * col.map_or(1.0, |v| v[j]);
            let at = c_index(p, i, j);
            let cv = if p.beta != 0.0 { c_in[at] } else { 0.0 };
            put(at, scales.apply(s, w, acc[at], p.beta, cv));
        }
    }
    Ok(())
}

#[cfg(test)]
mod epilogue_tests {
    use super::*;
    use crate::ops::epilogue::Activation;
    use gemm_core::reference::random_values;

    #[test]
    fn host_epilogue_matches_an_f64_reference_and_rounds_once() {
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            let p = GemmProblem::new(13, 9, 21)
                .with_layout(layout)
                .with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16)
                .with_scalars(1.25, 0.5);
            let p = p.with_leading_dims(p.lda, p.ldb, p.ldc + 2);
            let s = p.validate().unwrap();
            let a: Vec<bf16> = random_values(s.a, 1);
            let b: Vec<bf16> = random_values(s.b, 2);
            let c0: Vec<bf16> = random_values(s.c, 3);
            let bias: Vec<f32> = random_values(13, 4);
            let ep = Epilogue { bias: Some(BiasAxis::PerRow), activation: Activation::Silu, clamp: Some((-0.2, 3.0)) };
            let mut c = c0.clone();
            gemm_epilogue_bytes(
                &p,
                bytemuck::cast_slice(&a),
                bytemuck::cast_slice(&b),
                bytemuck::cast_slice_mut(&mut c),
                &ep,
                Some(&bias),
                1,
            )
            .unwrap();
            let (ea, eb) = match layout {
                Layout::RowMajor => ((p.lda, 1), (p.ldb, 1)),
                Layout::ColMajor => ((1, p.lda), (1, p.ldb)),
            };
            for i in 0..p.m {
                for j in 0..p.n {
                    let mut acc = 0f64;
                    for l in 0..p.k {
                        acc += a[i * ea.0 + l * ea.1].to_f32() as f64 * b[l * eb.0 + j * eb.1].to_f32() as f64;
                    }
                    let at = c_index(&p, i, j);
                    let x = 1.25 * acc + 0.5 * c0[at].to_f32() as f64 + bias[i] as f64;
                    let want = (x / (1.0 + (-x).exp())).clamp(-0.2, 3.0);
                    let got = c[at].to_f32() as f64;
                    assert!((got - want).abs() <= 1e-2 * (1.0 + want.abs()), "{layout:?} ({i},{j}): {got} vs {want}");
                }
            }
            // Padding of C (the two extra elements per leading dimension) untouched.
            let pad = c_index(&p, 0, 0) + if layout == Layout::RowMajor { p.n } else { p.m };
            assert_eq!(c[pad].to_bits(), c0[pad].to_bits());
        }
    }
}

#[cfg(test)]
mod scale_tests {
    use super::*;
    use gemm_core::fp8::{Fp8E4M3Fnuz, Fp8E5M2Fnuz};

    fn fp8_problem(m: usize, n: usize, k: usize) -> GemmProblem {
        GemmProblem::new(m, n, k).with_dtypes(DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz, DType::F32)
    }

    /// The host result equals the formula evaluated in f64 from the decoded inputs (exact:
    /// multiples of 1/4 and powers of two), in both layouts, with and without vectors, beta = 0
    /// with NaN in C, and a zero alpha ignoring an infinite product.
    #[test]
    fn host_scaled_gemm_is_the_documented_formula() {
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            for (vi, (use_row, use_col)) in
                [(true, true), (true, false), (false, true), (false, false)].into_iter().enumerate()
            {
                let beta = if vi % 2 == 0 { 0.0 } else { 0.5 };
                let p = fp8_problem(5, 7, 9).with_layout(layout).with_scalars(1.5, beta);
                let p = p.with_leading_dims(p.lda + 1, p.ldb + 2, p.ldc + 3);
                let s = p.validate().unwrap();
                let a: Vec<Fp8E4M3Fnuz> =
                    (0..s.a).map(|x| Fp8E4M3Fnuz::from_f32(((x * 7 % 17) as f32 - 8.0) * 0.25)).collect();
                let b: Vec<Fp8E5M2Fnuz> =
                    (0..s.b).map(|x| Fp8E5M2Fnuz::from_f32(((x * 5 % 13) as f32 - 6.0) * 0.25)).collect();
                let c0: Vec<f32> = (0..s.c).map(|x| if beta == 0.0 { f32::NAN } else { x as f32 * 0.5 }).collect();
                let row: Vec<f32> = (0..5).map(|i| [0.5f32, 2.0, -1.0, 4.0, 0.25][i]).collect();
                let col: Vec<f32> = (0..7).map(|j| [1.0f32, -0.5, 2.0, 8.0, 0.125, 1.0, 2.0][j]).collect();
                let scales = Fp8Scales { a: 2.0, b: 0.5, d: 0.25 };
                let mut c = c0.clone();
                gemm_scaled_bytes(
                    &p,
                    bytemuck::cast_slice(&a),
                    bytemuck::cast_slice(&b),
                    bytemuck::cast_slice_mut(&mut c),
                    &scales,
                    use_row.then_some(&row[..]),
                    use_col.then_some(&col[..]),
                    1,
                )
                .unwrap();
                let (ea, eb) = match layout {
                    Layout::RowMajor => ((p.lda, 1), (p.ldb, 1)),
                    Layout::ColMajor => ((1, p.lda), (1, p.ldb)),
                };
                for i in 0..p.m {
                    for j in 0..p.n {
                        let mut acc = 0f64;
                        for l in 0..p.k {
                            acc += a[i * ea.0 + l * ea.1].to_f32() as f64 * b[l * eb.0 + j * eb.1].to_f32() as f64;
                        }
                        let w = if use_row { row[i] as f64 } else { 1.0 } * if use_col { col[j] as f64 } else { 1.0 };
                        let at = c_index(&p, i, j);
                        let x = 2.0 * 0.5 * 1.5 * w * acc + if beta != 0.0 { beta as f64 * c0[at] as f64 } else { 0.0 };
                        let want = if x == 0.0 { 0.0 } else { (0.25 * x) as f32 };
                        assert_eq!(c[at].to_bits(), want.to_bits(), "{layout:?} {vi} ({i},{j}): {} vs {want}", c[at]);
                    }
                }
                // Padding of C untouched (NaN stays NaN, numbers stay).
                let pad = c_index(&p, 0, 0) + if layout == Layout::RowMajor { p.n } else { p.m };
                assert_eq!(c[pad].to_bits(), c0[pad].to_bits());
            }
        }
        let s = Fp8Scales::UNIT;
        assert_eq!(s.apply(0.0, 1.0, f32::INFINITY, 0.0, f32::NAN).to_bits(), 0f32.to_bits());
    }
}
