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
    if rows == R && cs == 1 {
        // A transpose: the `R` source rows are read as `R` sequential streams, one value of each
        // per k, so the panel is written front to back (row by row, every store landed `4 R`
        // bytes from the last and each output line was revisited `R` times: 4% of a 2048^3 GEMM's
        // time on a Zen5 core, twice what OpenBLAS spends packing both operands).
        let rows: [&[T]; R] = core::array::from_fn(|r| &data[(r0 + r) * rs + p0..][..kc]);
        for (p, dst) in out.chunks_exact_mut(R).enumerate() {
            for (d, row) in dst.iter_mut().zip(&rows) {
                *d = dec.f32(row[p]);
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

/// bf16 pair panel for `vdpbf16ps`: `out[q * R + r]` holds `src(r0 + r, p0 + 2q)` in its low
/// half and `src(r0 + r, p0 + 2q + 1)` in its high half, with the odd tail of k padded with zero
/// (in A and B alike, so the padding adds `0 * 0`).
pub(crate) fn bf16_pair_panel<T: Element, const R: usize>(
    src: &MatRef<'_, T>,
    dec: Decoder<T>,
    r0: usize,
    rows: usize,
    p0: usize,
    kc: usize,
    out: &mut [u32],
) {
    let kq = kc.div_ceil(2);
    let out = &mut out[..kq * R];
    let data = src.data();
    let (rs, cs) = (src.row_stride(), src.col_stride());
    let pair = |lo: u16, hi: u16| u32::from(lo) | u32::from(hi) << 16;
    if rows == R && rs == 1 {
        // Two contiguous k columns make one row of pairs: a vectorisable zip.
        for (q, dst) in out.chunks_exact_mut(R).enumerate() {
            let b0 = r0 + (p0 + 2 * q) * cs;
            let s0 = &data[b0..b0 + R];
            if 2 * q + 1 < kc {
                let s1 = &data[b0 + cs..b0 + cs + R];
                for ((d, &x0), &x1) in dst.iter_mut().zip(s0).zip(s1) {
                    *d = pair(dec.bf16(x0), dec.bf16(x1));
                }
            } else {
                for (d, &x0) in dst.iter_mut().zip(s0) {
                    *d = pair(dec.bf16(x0), 0);
                }
            }
        }
        return;
    }
    if rows < R {
        out.fill(0);
    }
    for r in 0..rows {
        let base = (r0 + r) * rs + p0 * cs;
        if cs == 1 {
            let row = &data[base..base + kc];
            let mut pairs = row.chunks_exact(2);
            for (q, two) in pairs.by_ref().enumerate() {
                out[q * R + r] = pair(dec.bf16(two[0]), dec.bf16(two[1]));
            }
            if let [last] = pairs.remainder() {
                out[(kq - 1) * R + r] = pair(dec.bf16(*last), 0);
            }
        } else {
            for q in 0..kq {
                let lo = dec.bf16(data[base + 2 * q * cs]);
                let hi = if 2 * q + 1 < kc { dec.bf16(data[base + (2 * q + 1) * cs]) } else { 0 };
                out[q * R + r] = pair(lo, hi);
            }
        }
    }
}

/// k values per AMX bf16 tile row (64 bytes).
pub(crate) const AMX_K: usize = 32;

/// A micro-panel for the AMX kernel, as the second source of `tdpbf16ps` ("VNNI" layout): the
/// [`bf16_pair_panel`] of `R` rows, with k padded with zero pairs up to a multiple of
/// [`AMX_K`], so each block of 16 pair-rows is one tile of `R` (16 per tile) pairs.
pub(crate) fn amx_pair_panel<T: Element, const R: usize>(
    src: &MatRef<'_, T>,
    dec: Decoder<T>,
    r0: usize,
    rows: usize,
    p0: usize,
    kc: usize,
    out: &mut [u32],
) {
    bf16_pair_panel::<T, R>(src, dec, r0, rows, p0, kc, out);
    let (kq, kqp) = (kc.div_ceil(2), kc.next_multiple_of(AMX_K) / 2);
    out[kq * R..kqp * R].fill(0);
}

/// A micro-panel for the AMX kernel as the first source of `tdpbf16ps` (rows of k): for each block
/// of [`AMX_K`] values of k, the `R` rows one after another, each row 32 bf16 (16 u32 pairs,
/// 64 bytes, the low half the even k): `out[(kb * R + r) * 16 + h]` holds
/// `src(r0 + r, p0 + 32 kb + 2h)` and `src(r0 + r, p0 + 32 kb + 2h + 1)`. Rows past `rows` and k
/// past `kc` are zero.
pub(crate) fn amx_row_panel<T: Element, const R: usize>(
    src: &MatRef<'_, T>,
    dec: Decoder<T>,
    r0: usize,
    rows: usize,
    p0: usize,
    kc: usize,
    out: &mut [u32],
) {
    const H: usize = AMX_K / 2;
    let kb_count = kc.div_ceil(AMX_K);
    let out = &mut out[..kb_count * R * H];
    let data = src.data();
    let (rs, cs) = (src.row_stride(), src.col_stride());
    let pair = |lo: u16, hi: u16| u32::from(lo) | u32::from(hi) << 16;
    if rows < R || !kc.is_multiple_of(AMX_K) {
        out.fill(0);
    }
    for r in 0..rows {
        let base = (r0 + r) * rs + p0 * cs;
        for kb in 0..kb_count {
            let dst = &mut out[(kb * R + r) * H..][..H];
            let k0 = kb * AMX_K;
            let len = AMX_K.min(kc - k0);
            if cs == 1 && len == AMX_K {
                // A contiguous run of 32 values of k: a vectorisable zip of pairs.
                let run = &data[base + k0..][..AMX_K];
                for (d, two) in dst.iter_mut().zip(run.chunks_exact(2)) {
                    *d = pair(dec.bf16(two[0]), dec.bf16(two[1]));
                }
            } else {
                for (h, d) in dst.iter_mut().enumerate().take(len.div_ceil(2)) {
                    let lo = dec.bf16(data[base + (k0 + 2 * h) * cs]);
                    let hi = if 2 * h + 1 < len { dec.bf16(data[base + (k0 + 2 * h + 1) * cs]) } else { 0 };
                    *d = pair(lo, hi);
                }
            }
        }
    }
}
