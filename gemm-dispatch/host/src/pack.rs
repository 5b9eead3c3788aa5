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
        for (q, dst) in out.chunks_exact_mut(2 * R).enumerate() {
            let b0 = r0 + (p0 + 2 * q) * cs;
            let s0 = &data[b0..b0 + R];
            if 2 * q + 1 < kc {
                let s1 = &data[b0 + cs..b0 + cs + R];
                for ((d, &x0), &x1) in dst.chunks_exact_mut(2).zip(s0).zip(s1) {
                    d[0] = dec.bf16(x0);
                    d[1] = dec.bf16(x1);
                }
            } else {
                for (d, &x0) in dst.chunks_exact_mut(2).zip(s0) {
                    d[0] = dec.bf16(x0);
                    d[1] = 0;
                }
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
            let row = &data[base..base + kc];
            for (q, pair) in row.chunks(2).enumerate() {
                let at = q * 2 * R + 2 * r;
                out[at] = dec.bf16(pair[0]);
                if let Some(&x1) = pair.get(1) {
                    out[at + 1] = dec.bf16(x1);
                }
            }
        } else {
            for p in 0..kc {
                out[(p / 2) * 2 * R + 2 * r + p % 2] = dec.bf16(data[base + p * cs]);
            }
        }
    }
}
