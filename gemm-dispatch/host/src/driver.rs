//! The blocked GEMM loop of one worker (Goto/BLIS order) and the epilogue that applies
//! `alpha`/`beta` and rounds to C's type.
//!
//! ```text
//! for jc in n by NC:            B block (KC x NC) packed once per (jc, pc), lives in L3
//!   for pc in k by KC:
//!     for ic in m by MC:        A block (MC x KC) packed per (ic, pc), lives in L2
//!       for jr in NC by NR:     B micro-panel (KC x NR) stays in L1
//!         for ir in MC by MR:   micro-kernel -> f32 tile -> epilogue
//! ```
//!
//! Accumulation is f32 throughout with one rounding to C at the end: an f32 C accumulates the k
//! blocks in place; any other C type, when k spans several blocks, accumulates them in an f32
//! scratch of `m x NC` and is written once, on the last block.

use crate::convert::Decoder;
use crate::kernel::{prefetch, Kernel, PackElem, Tile, TILE_MAX};
use gemm_core::{DType, Element, MatMut, MatRef};

/// Where a tile stands in the k loop, and the scalars.
#[derive(Clone, Copy)]
struct Pass {
    alpha: f32,
    beta: f32,
    first: bool,
    last: bool,
}

/// The f32 partial sums of the current `jc` block when C is not f32 (`ld = m`, column-major).
struct Scratch<'s> {
    data: &'s mut [f32],
    ld: usize,
    jc: usize,
}

/// `C = alpha * A * B + beta * C` for one worker's share (`A: m x k`, `B: k x n`, `k >= 1`,
/// `alpha != 0`), with A packed by the worker itself or, when `shared` is given, taken from an A
/// packed once for all workers ([`pack_shared`], the same `a` and blocking).
pub(crate) fn serial<K: Kernel, A: Element, B: Element, C: Element>(
    kern: K,
    alpha: f32,
    a: MatRef<'_, A>,
    b: MatRef<'_, B>,
    beta: f32,
    c: MatMut<'_, C>,
    shared: Option<&SharedA<'_, K::P>>,
) {
    if c.rows() == 0 || c.cols() == 0 {
        return;
    }
    kern.session(|| {
        <K::P as PackElem>::with_buffers(|bbuf, abuf| blocked(kern, alpha, a, b, beta, c, bbuf, abuf, shared))
    })
}

/// A packed once for every worker of a column split (so 16 workers do not each pack all of A):
/// for each k block of `kc`, the `MR`-row micro-panels of all `m` rows one after another.
pub(crate) struct SharedA<'s, P> {
    data: &'s [P],
    kc: usize,
    /// Elements of one full k block (`panels x MR x panel_len(kc)`).
    block: usize,
}

impl<P> SharedA<'_, P> {
    /// The micro-panels of rows `ic..ic + mc` for the k block starting at `pc` (`kc_now` deep).
    fn panels<K: Kernel<P = P>>(&self, pc: usize, kc_now: usize, ic: usize, mc: usize) -> &[P] {
        let plen = K::panel_len(kc_now);
        let start = pc / self.kc * self.block + ic / K::MR * K::MR * plen;
        &self.data[start..start + mc.div_ceil(K::MR) * K::MR * plen]
    }
}

/// Packs all of A (`m x k`) in the blocking of `kern`, on `threads` rayon workers, into `buf`,
/// and returns the view the workers read it through.
pub(crate) fn pack_shared<'s, K: Kernel, A: Element>(
    kern: K,
    a: MatRef<'_, A>,
    threads: usize,
    buf: &'s mut Vec<K::P>,
) -> SharedA<'s, K::P> {
    let (m, k) = (a.rows(), a.cols());
    let kc = kern.blocking().kc.min(k);
    let panels = m.div_ceil(K::MR);
    let block = panels * K::MR * K::panel_len(kc);
    let full = k / kc;
    let tail = k - full * kc;
    let len = full * block + panels * K::MR * K::panel_len(tail);
    let data = at_least(buf, len);
    // Every micro-panel is one job: (its slice, first k, depth, first row).
    let mut jobs: Vec<(&mut [K::P], usize, usize, usize)> = Vec::with_capacity(panels * k.div_ceil(kc));
    let mut rest = &mut data[..];
    for pc in (0..k).step_by(kc) {
        let depth = kc.min(k - pc);
        let plen = K::MR * K::panel_len(depth);
        for ir in 0..panels {
            let (mine, more) = rest.split_at_mut(plen);
            jobs.push((mine, pc, depth, ir * K::MR));
            rest = more;
        }
    }
    let da = Decoder::<A>::new();
    // Groups of 8 micro-panels, claimed by whichever worker is free (see `claim_each`).
    let groups: Vec<_> = jobs.chunks_mut(8).collect();
    claim_each(groups, threads, |group| {
        for (out, pc, depth, i0) in group.iter_mut() {
            K::pack_a::<A>(&a, da, *i0, K::MR.min(m - *i0), *pc, *depth, out);
        }
    });
    SharedA { data: &data[..len], kc, block }
}

/// Runs `work(item)` for every item on `threads` workers (the calling thread and `threads - 1`
/// rayon pool threads), each claiming the next unclaimed item when done with one. A worker that
/// the OS deschedules (other load on a shared machine, a slower core) then holds up at most the
/// item it is on, where with a fixed share per worker the call lasted as long as its most delayed
/// worker. rayon's pool threads persist between calls, so a GEMM of a few hundred microseconds
/// does not pay for thread start-up (the pool is the one faer uses for f32).
pub(crate) fn claim_each<T: Send>(items: Vec<T>, threads: usize, work: impl Fn(T) + Sync) {
    let queue = std::sync::Mutex::new(items.into_iter());
    let worker = || loop {
        // The lock is held only to take the next item (a guard in a `while let` would be held
        // for the whole body).
        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
        match next {
            Some(item) => work(item),
            None => break,
        }
    };
    rayon::scope(|s| {
        for _ in 1..threads {
            s.spawn(|_| worker());
        }
        worker();
    });
}

/// Grows `buf` to hold `len` elements from a 64-byte boundary (never shrinks, so a reused buffer is
/// not refilled) and returns those `len`. Packed panels start on cache lines: a 64-byte tile row or
/// zmm load that straddles two lines costs two (on a 16-core AMX Xeon the AMX kernel ran 2.4x
/// slower from a panel 16 bytes off a line than from an aligned one, 700 against 1700 GFLOP/s per
/// core, both from L1).
///
/// A buffer that must grow is replaced by a fresh zeroed allocation rather than resized: `resize`
/// wrote every element on the calling thread, page-faulting 4 KiB pages one by one inside the
/// first call of a process (16 MiB for the shared packed A at 2048^3). A zeroed allocation of
/// this size comes from `mmap` untouched, so its pages are faulted by the packing workers in
/// parallel, and large buffers ask for transparent huge pages ([`advise_huge_pages`]). On 2 Zen5
/// cores under load, four fresh processes each, interleaved: first 2048^3 call / steady call
/// 1.10-1.69x with `resize`, 0.91-1.39x with this; the first call now takes about 650 page faults
/// in all.
fn at_least<P: Copy + Default>(buf: &mut Vec<P>, len: usize) -> &mut [P] {
    let slack = 64 / size_of::<P>();
    if buf.len() < len + slack {
        *buf = Vec::new();
        // `P` is f32 or u32, whose default is all-zero bits: `vec!` takes the `alloc_zeroed` path.
        *buf = vec![P::default(); len + slack];
        advise_huge_pages(buf);
    }
    let skip = buf.as_ptr().align_offset(64).min(slack);
    &mut buf[skip..skip + len]
}

/// Asks Linux for transparent huge pages over a buffer of at least 4 MiB (`madvise(MADV_HUGEPAGE)`,
/// which matters where THP is in `madvise` mode, the Debian default): a hint, whose failure changes
/// nothing but speed. The range is narrowed to whole 4 KiB pages inside the buffer.
fn advise_huge_pages<P>(buf: &mut [P]) {
    #[cfg(target_os = "linux")]
    {
        let bytes = std::mem::size_of_val(buf);
        if bytes < 4 << 20 {
            return;
        }
        let start = buf.as_mut_ptr() as usize;
        let (first, end) = (start.next_multiple_of(4096), (start + bytes) & !4095);
        // SAFETY: [first, end) lies inside `buf`, which this thread borrows mutably; MADV_HUGEPAGE
        // changes how the kernel backs those pages, never their contents.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}

#[allow(clippy::too_many_arguments)]
fn blocked<K: Kernel, A: Element, B: Element, C: Element>(
    kern: K,
    alpha: f32,
    a: MatRef<'_, A>,
    b: MatRef<'_, B>,
    beta: f32,
    mut c: MatMut<'_, C>,
    bbuf: &mut Vec<K::P>,
    abuf: &mut Vec<K::P>,
    shared: Option<&SharedA<'_, K::P>>,
) {
    let (m, n, k) = (c.rows(), c.cols(), a.cols());
    let bt = b.t();
    let (da, db) = (Decoder::<A>::new(), Decoder::<B>::new());
    let (mr_, nr_) = (K::MR, K::NR);
    let blk = kern.blocking();
    let nc_max = blk.nc.min(n);
    let mc_max = blk.mc.min(m);
    let plen_max = K::panel_len(blk.kc.min(k));
    let bpack = at_least(bbuf, nc_max.div_ceil(nr_) * nr_ * plen_max);
    let apack = if shared.is_some() { &mut [][..] } else { at_least(abuf, mc_max.div_ceil(mr_) * mr_ * plen_max) };
    debug_assert!(shared.is_none() || blk.mc.is_multiple_of(mr_));
    let use_scratch = C::DTYPE != DType::F32 && k > blk.kc;
    let mut scratch_buf = if use_scratch { vec![0f32; m * nc_max] } else { Vec::new() };
    let mut acc: Tile = [0.0; TILE_MAX];
    // Whole tiles of an f32 C with unit row stride and `alpha == 1` can be accumulated in C itself
    // by kernels that offer it ([`Kernel::run_into`]): on the first k block only where `beta` is 0
    // (overwrite) or 1 (add); other tiles and blocks take `run` and the epilogue.
    let into_c = C::DTYPE == DType::F32 && c.row_stride() == 1 && alpha == 1.0;
    let cs = c.col_stride();

    for jc in (0..n).step_by(blk.nc) {
        let nc = blk.nc.min(n - jc);
        for pc in (0..k).step_by(blk.kc) {
            let kc = blk.kc.min(k - pc);
            let plen = K::panel_len(kc);
            let pass = Pass { alpha, beta, first: pc == 0, last: pc + kc == k };
            for (jr, panel) in bpack.chunks_exact_mut(nr_ * plen).take(nc.div_ceil(nr_)).enumerate() {
                let j0 = jc + jr * nr_;
                K::pack_b::<B>(&bt, db, j0, nr_.min(jc + nc - j0), pc, kc, panel);
            }
            for ic in (0..m).step_by(blk.mc) {
                let mc = blk.mc.min(m - ic);
                let apanels: &[K::P] = match shared {
                    Some(sh) => sh.panels::<K>(pc, kc, ic, mc),
                    None => {
                        for (ir, panel) in apack.chunks_exact_mut(mr_ * plen).take(mc.div_ceil(mr_)).enumerate() {
                            let i0 = ic + ir * mr_;
                            K::pack_a::<A>(&a, da, i0, mr_.min(ic + mc - i0), pc, kc, panel);
                        }
                        &apack[..]
                    }
                };
                for (jr, bp) in bpack.chunks_exact(nr_ * plen).take(nc.div_ceil(nr_)).enumerate() {
                    let j0 = jc + jr * nr_;
                    let nr = nr_.min(jc + nc - j0);
                    for (ir, ap) in apanels.chunks_exact(mr_ * plen).take(mc.div_ceil(mr_)).enumerate() {
                        let i0 = ic + ir * mr_;
                        let mr = mr_.min(ic + mc - i0);
                        let whole = mr == mr_ && nr == nr_;
                        if into_c && whole && (!pass.first || beta == 0.0 || beta == 1.0) {
                            // The kernel reads C at its start: fetch the next tile's C meanwhile.
                            if i0 + 2 * mr_ <= ic + mc {
                                prefetch_tile(&c, i0 + mr_, j0, mr_, nr);
                            }
                            let add = !pass.first || beta == 1.0;
                            let data: &mut [f32] = bytemuck::cast_slice_mut(c.data_mut());
                            if kern.run_into(kc, ap, bp, &mut data[i0 + j0 * cs..], cs, add) {
                                continue;
                            }
                        }
                        prefetch_tile(&c, i0, j0, mr, nr);
                        kern.run(kc, ap, bp, &mut acc);
                        let scratch = use_scratch.then(|| Scratch { data: &mut scratch_buf[..], ld: m, jc });
                        epilogue(&acc[..mr_ * nr_], mr_, &mut c, i0, j0, mr, nr, pass, scratch);
                    }
                }
            }
        }
    }
}

/// Prefetches the C elements of a tile (its first, middle and last row of each column).
fn prefetch_tile<C: Element>(c: &MatMut<'_, C>, i0: usize, j0: usize, mr: usize, nr: usize) {
    let (rs, cs) = (c.row_stride(), c.col_stride());
    let data = c.as_ref().data();
    for j in 0..nr {
        for i in [0, mr / 2, mr - 1] {
            prefetch(&data[(i0 + i) * rs + (j0 + j) * cs]);
        }
    }
}

/// Applies one tile: `v = alpha * acc` plus the running sum (C itself when C is f32, else the
/// scratch) on later k blocks, plus `beta * C` once (never reading C when `beta == 0`); written to
/// C (rounded once) when no scratch is in use or on the last k block.
#[allow(clippy::too_many_arguments)]
#[inline]
fn epilogue<C: Element>(
    acc: &[f32],
    ld: usize,
    c: &mut MatMut<'_, C>,
    i0: usize,
    j0: usize,
    mr: usize,
    nr: usize,
    pass: Pass,
    scratch: Option<Scratch<'_>>,
) {
    let Pass { alpha, beta, first, last } = pass;
    let (rs, cs) = (c.row_stride(), c.col_stride());
    let data = c.data_mut();
    match scratch {
        None if rs == 1 && mr == ld => {
            // The common case: whole columns of the tile are contiguous in C.
            for (j, a) in acc.chunks_exact(ld).take(nr).enumerate() {
                let col = &mut data[i0 + (j0 + j) * cs..][..ld];
                if !first {
                    for (d, &x) in col.iter_mut().zip(a) {
                        *d = C::from_f32(alpha * x + d.to_f32());
                    }
                } else if beta == 0.0 {
                    for (d, &x) in col.iter_mut().zip(a) {
                        *d = C::from_f32(alpha * x);
                    }
                } else {
                    for (d, &x) in col.iter_mut().zip(a) {
                        *d = C::from_f32(alpha * x + beta * d.to_f32());
                    }
                }
            }
        }
        None => {
            for (j, a) in acc.chunks_exact(ld).take(nr).enumerate() {
                for (i, &x) in a.iter().take(mr).enumerate() {
                    let d = &mut data[(i0 + i) * rs + (j0 + j) * cs];
                    let mut v = alpha * x;
                    if !first {
                        v += d.to_f32();
                    } else if beta != 0.0 {
                        v += beta * d.to_f32();
                    }
                    *d = C::from_f32(v);
                }
            }
        }
        Some(Scratch { data: s, ld: sld, jc }) => {
            for (j, a) in acc.chunks_exact(ld).take(nr).enumerate() {
                let srow = &mut s[(j0 - jc + j) * sld + i0..][..mr];
                for (i, (&x, sv)) in a.iter().zip(srow.iter_mut()).enumerate() {
                    let mut v = alpha * x;
                    if !first {
                        v += *sv;
                    }
                    if last {
                        let d = &mut data[(i0 + i) * rs + (j0 + j) * cs];
                        if beta != 0.0 {
                            v += beta * d.to_f32();
                        }
                        *d = C::from_f32(v);
                    } else {
                        *sv = v;
                    }
                }
            }
        }
    }
}
