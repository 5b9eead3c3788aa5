//! Packing: copy (and decode) a block of a strided operand into the contiguous micro-panel format a
//! kernel streams. Only panels are converted, never whole matrices.
//!
//! Both routines pack `rows <= R` rows (`r0..r0+rows`) and `kc` columns (`p0..p0+kc`) of a view
//! whose rows are the panel's `R` dimension and whose columns are k: A as stored (`m x k`), B
//! transposed (`n x k`). Missing rows are zero. Two layouts of the source get a fast loop each:
//! unit row stride (a contiguous run of `R` values per k) and unit column stride (a contiguous run
//! of k per row); anything else (larger strides, broadcast stride 0) takes the general loop.

use crate::convert::Decoder;
use gemm_core::{Element, MatRef};

/// f32 panel: `out[p * R + r] = src(r0 + r, p0 + p)`.
pub(crate) fn f32_panel<T: Element, const R: usize>(
    src: &MatRef<'_, T>,
    dec: Decoder<T>,
    r0: usize,
    rows: usize,
    p0: usize,
    kc: usize,
    out: &mut [f32],
) {
    let out = &mut out[..kc * R];
    let data = src.data();
    let (rs, cs) = (src.row_stride(), src.col_stride());
    if rows == R && rs == 1 {
        for (p, dst) in out.chunks_exact_mut(R).enumerate() {
            let base = r0 + (p0 + p) * cs;
            for (d, &x) in dst.iter_mut().zip(&data[base..base + R]) {
                *d = dec.f32(x);
            }
        }
        return;
    }
    if rows < R {
        out.fill(0.0);
    }
    for r in 0..rows {
        let base = (r0 + r) * rs + p0 * cs;
        if cs == 1 {
            for (p, &x) in data[base..base + kc].iter().enumerate() {
                out[p * R + r] = dec.f32(x);
            }
        } else {
            for p in 0..kc {
                out[p * R + r] = dec.f32(data[base + p * cs]);
            }
        }
    }
}

/// bf16 pair panel for `vdpbf16ps`: `out[(p / 2) * 2R + 2r + p % 2] = src(r0 + r, p0 + p)`, with
/// the odd tail of k padded with zeros (in A and B alike, so the padding adds `0 * 0`).
pub(crate) fn bf16_pair_panel<T: Element, const R: usize>(
    src: &MatRef<'_, T>,
    dec: Decoder<T>,
    r0: usize,
    rows: usize,
    p0: usize,
    kc: usize,
    out: &mut [u16],
) {
    let kq = kc.div_ceil(2);
    let out = &mut out[..kq * 2 * R];
    let data = src.data();
    let (rs, cs) = (src.row_stride(), src.col_stride());
    if rows == R && rs == 1 {
        // Decode two k columns into small arrays, then interleave: both loops vectorise.
        let (mut t0, mut t1) = ([0u16; R], [0u16; R]);
        for (q, dst) in out.chunks_exact_mut(2 * R).enumerate() {
            let b0 = r0 + (p0 + 2 * q) * cs;
            for (t, &x) in t0.iter_mut().zip(&data[b0..b0 + R]) {
                *t = dec.bf16(x);
            }
            if 2 * q + 1 < kc {
                for (t, &x) in t1.iter_mut().zip(&data[b0 + cs..b0 + cs + R]) {
                    *t = dec.bf16(x);
                }
            } else {
                t1 = [0; R];
            }
            for (d, (&x0, &x1)) in dst.chunks_exact_mut(2).zip(t0.iter().zip(&t1)) {
                d[0] = x0;
                d[1] = x1;
            }
        }
        return;
    }
    if rows < R || kc % 2 == 1 {
        out.fill(0);
    }
    for r in 0..rows {
        let base = (r0 + r) * rs + p0 * cs;
        if cs == 1 {
            // Decode a run of the row (vectorises), then scatter its pairs to their k slots.
            const RUN: usize = 64;
            for (ci, run) in data[base..base + kc].chunks(RUN).enumerate() {
                let mut t = [0u16; RUN];
                for (t, &x) in t.iter_mut().zip(run) {
                    *t = dec.bf16(x);
                }
                for (qq, pair) in t[..run.len().next_multiple_of(2)].chunks_exact(2).enumerate() {
                    let at = (ci * RUN / 2 + qq) * 2 * R + 2 * r;
                    out[at..at + 2].copy_from_slice(pair);
                }
            }
        } else {
            for p in 0..kc {
                out[(p / 2) * 2 * R + 2 * r + p % 2] = dec.bf16(data[base + p * cs]);
            }
        }
    }
}
