//! gemm-host: the CPU GEMM engine behind the host backend.
//!
//! [`gemm`] computes `C = alpha * A * B + beta * C` on strided views for every dtype combination
//! `gemm_core::problem::check_dtypes` accepts, accumulating in f32 like the GPU's MFMA and
//! rounding once to C's type.
//!
//! # Paths
//!
//! * **Trivial**: `m == 0` or `n == 0` does nothing; `k == 0` or `alpha == 0` scales C by `beta`
//!   without reading A or B; tiny problems (`m*n*k <= 16^3`) run a plain loop on the calling
//!   thread, without packing or threads.
//! * Otherwise [`dispatch`] picks the path for the inputs' class from the CPU's features (and, for
//!   f32 on AVX-512 CPUs, a measurement of faer against this crate's kernel where one is stored in
//!   the per-user [`cache`]: none is made at first use unless `GEMM_HOST_TUNE=1`, so the first
//!   call runs at steady speed); `GEMM_HOST_PATH` can force one. The paths:
//!   * `faer`: faer's matmul (f32).
//!   * `avx512`: this crate's AVX-512F f32 kernel, 32 x 12, blocked for the L1d/L2 sizes the CPU
//!     reports ([`Blocking::f32_for`]); f16/bf16/fp8 inputs are widened to f32 panels.
//!   * `avx512bf16`: bf16 pair panels and AVX512_BF16 `vdpbf16ps` (bf16, fp8 decoded through a
//!     256-entry table; every fp8 value is an exact, normal bf16).
//!   * `amx`: bf16 tiles and AMX `tdpbf16ps`, 32 x 32 (see the `amx` module), on CPUs with
//!     AMX-BF16 once Linux granted the tile-data permission.
//!   * `portable`: plain Rust on f32 panels.
//!
//!   `vdpbf16ps` and `tdpbf16ps` flush bf16 denormals (see [`gemm`]).
//!
//! # Threads
//!
//! C is cut into slabs of whole micro-tiles (columns when C's columns are laid out one after
//! another, else rows), up to four per worker; each worker claims the next unclaimed slab when it
//! finishes one (so a worker the OS deschedules delays one slab, not a fixed share of the call),
//! and slabs are disjoint, so workers never synchronise otherwise. With a
//! column split every worker needs all of A, so A is packed once, by all workers, into a buffer
//! they share (each packing its own copy cost 16 workers 16 copies of A); B is packed per worker.
//! Workers are rayon pool threads, which persist between calls. A tall, narrow column-major C (too
//! few columns to share out) is cut by rows into private f32 buffers that the caller then folds
//! into C. Small problems use fewer workers (at least ~4 MFLOP each).
//!
//! # Measured (`gemm-bench --sizes 1024,2048,4096 --rounds 3 --impls host,own,alt,openblas`,
//! row-major square, GFLOP/s, n = 1024 / 2048 / 4096)
//!
//! 16-core Intel Xeon with AMX (device VM, idle at the start), 16 threads, OpenBLAS 0.3.21 with
//! `OPENBLAS_CORETYPE=SkylakeX` (it detects this CPU as Prescott otherwise and runs 5x slower),
//! two runs of the same binary: f32 (path chosen per size class) 1147 / 1137 / 1212 and 1004 /
//! 1158 / 1185 against OpenBLAS 1038 / 1218 / 1209 and 1042 / 1162 / 1081 (1.10 / 0.93 / 1.00x
//! and 0.96 / 1.00 / 1.10x; in the first run the 2048 class kept this crate's kernel at a
//! first-use median of 1.03, inside the 5% margin of then, since lowered to 2%); bf16 (AMX) 3628
//! / 5800 / 5677, 3.2 / 5.1 / 4.7x this crate's f32; `vdpbf16ps` 579 / 741 / 656.
//!
//! 2-core AMD EPYC (Zen4: family 25 model 17, 32 KiB L1d, 1 MiB L2; a VM shared with four other
//! builds at load 6-9), 2 threads, OpenBLAS 0.3.21 picks `Cooperlake` by itself (its SkylakeX
//! sgemm kernel, so no `OPENBLAS_CORETYPE` is needed): in the one run that got the cores (07:56)
//! f32 209 / 214 / 183 against OpenBLAS 196 / 197 / 195 (1.07 / 1.09 / 0.94x, faer chosen; this
//! crate's kernel 0.98 / 0.99 / 1.00x), bf16 (`vdpbf16ps`) 349 / 376 / 374, 1.7 / 1.8 / 2.0x f32.
//! Under load a best-of-15 is luck (the same kernel measured 0.83x and 1.33x in one run); the
//! medians of `f32-pairs --threads 2` (9 and 5 alternating rounds) give this crate's kernel
//! 1.05x and 0.99x OpenBLAS at 2048^3 and 4096^3, faer 1.01x and 0.95x. On one core, in CPU time
//! (`f32-pairs --threads 1`), the kernel runs at OpenBLAS's speed: 98.3 against 97.9 GFLOP/s at
//! 2048^3, 99.1 against 99.3 at 4096^3.

mod amx;
pub mod cache;
mod convert;
pub mod cpu;
pub mod dispatch;
mod driver;
mod kernel;
mod pack;

use dispatch::{Class, Path};
use gemm_core::problem::check_dtypes;
use gemm_core::{Element, Error, MatMut, MatRef};
use kernel::{Bf16Avx512, F32Avx512, Kernel, Portable};

pub use kernel::Blocking;

/// Which inner kernel family to use. `Auto` is what [`gemm`] does; the others exist for tests and
/// benchmarks that compare a fast path with its fallback.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KernelChoice {
    /// The path [`dispatch`] chose for the inputs' class on this CPU (or `GEMM_HOST_PATH` forced).
    #[default]
    Auto,
    /// This path, refused with [`Error::InvalidArgument`] (C untouched) if the inputs' class cannot
    /// use it or the CPU lacks its instructions.
    Path(Path),
    /// Never the bf16 dot-product kernel: bf16/fp8 panels are widened to f32 (honours bf16
    /// denormals) and f32 inputs go through this crate's own f32 kernel instead of faer.
    F32Panels,
    /// Plain Rust kernel, no SIMD intrinsics (what a CPU without AVX-512 runs).
    Portable,
}

/// Options of [`gemm_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Worker threads (0 is taken as 1).
    pub threads: usize,
    pub kernel: KernelChoice,
}

/// Problems with at most this many multiply-adds take the plain loop (no packing, no threads):
/// it costs a few nanoseconds per multiply-add, the packed path a few microseconds of set-up.
const SMALL_MACS: u128 = 16 * 16 * 16;
/// Multiply-adds per worker below which another thread is not worth its start-up (~2^21 MACs =
/// 4 MFLOP, tens of microseconds of work).
const MACS_PER_THREAD: u128 = 1 << 21;

/// `C = alpha * A * B + beta * C` on strided views (`A: m x k`, `B: k x n`, `C: m x n`), BLAS
/// semantics: `beta == 0` never reads C (NaN or garbage in C cannot leak); `alpha == 0` or
/// `k == 0` never reads A or B (`C = beta * C`); `m == 0` or `n == 0` is a no-op. `threads` worker
/// threads are used (at most; small problems use fewer, and 0 counts as 1).
///
/// Supported `(A, B, C)` are those `gemm_core::problem::check_dtypes` accepts; anything else, or
/// views whose shapes do not chain, is an error and C is untouched.
///
/// Accumulation is f32 with one rounding to C's type. On CPUs with AVX512_BF16 or AMX, bf16 and
/// fp8 inputs use `vdpbf16ps` or `tdpbf16ps`, which treat **denormal bf16 inputs as zero and flush
/// denormal products and sums to zero** (DAZ/FTZ, whatever MXCSR says); values in bf16's normal
/// range and every fp8 value are unaffected. [`gemm_with`] with [`KernelChoice::F32Panels`]
/// honours denormals.
///
/// A `GEMM_HOST_PATH` that names a path this CPU lacks makes every call fail with
/// [`Error::InvalidArgument`] (see [`dispatch`]).
pub fn gemm<A: Element, B: Element, C: Element>(
    alpha: f32,
    a: MatRef<'_, A>,
    b: MatRef<'_, B>,
    beta: f32,
    c: MatMut<'_, C>,
    threads: usize,
) -> Result<(), Error> {
    gemm_with(alpha, a, b, beta, c, &Options { threads, kernel: KernelChoice::Auto })
}

/// [`gemm`] with an explicit kernel choice.
pub fn gemm_with<A: Element, B: Element, C: Element>(
    alpha: f32,
    a: MatRef<'_, A>,
    b: MatRef<'_, B>,
    beta: f32,
    mut c: MatMut<'_, C>,
    opts: &Options,
) -> Result<(), Error> {
    check_dtypes(A::DTYPE, B::DTYPE, C::DTYPE)?;
    let class = Class::of(A::DTYPE);
    // Forced paths are checked before anything else, so a refused one fails every call alike.
    let plan = dispatch::forced().map_err(|e| Error::InvalidArgument(e.to_string()))?;
    if let KernelChoice::Path(p) = opts.kernel {
        dispatch::check(class, p, &plan.features).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    }
    let (m, n, k) = (c.rows(), c.cols(), a.cols());
    if a.rows() != m || b.rows() != k || b.cols() != n {
        return Err(Error::ShapeMismatch(format!(
            "A is {}x{}, B is {}x{}, C is {m}x{n}: need A m x k, B k x n, C m x n",
            a.rows(),
            a.cols(),
            b.rows(),
            b.cols()
        )));
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    if k == 0 || alpha == 0.0 {
        scale(beta, &mut c);
        return Ok(());
    }
    let macs = m as u128 * n as u128 * k as u128;
    if macs <= SMALL_MACS {
        small(alpha, a, b, beta, c);
        return Ok(());
    }
    let threads = (opts.threads.max(1) as u128).min(macs / MACS_PER_THREAD).max(1) as usize;

    let path = match opts.kernel {
        KernelChoice::Auto => plan.choice(class, threads, (m, n, k)).path,
        KernelChoice::Path(p) => p,
        KernelChoice::F32Panels if plan.features.avx512f => Path::Avx512,
        KernelChoice::F32Panels | KernelChoice::Portable => Path::Portable,
    };
    run_path(path, alpha, a, b, beta, c, threads)
}

/// Runs a path already checked against the class and the CPU.
fn run_path<A: Element, B: Element, C: Element>(
    path: Path,
    alpha: f32,
    a: MatRef<'_, A>,
    b: MatRef<'_, B>,
    beta: f32,
    c: MatMut<'_, C>,
    threads: usize,
) -> Result<(), Error> {
    let gone = || Error::InvalidArgument(format!("host path `{path}` is not available on this CPU"));
    match path {
        Path::Faer => faer_f32::gemm(alpha, a, b, beta, c, threads),
        Path::Avx512 => oriented(F32Avx512::detect().ok_or_else(gone)?, alpha, a, b, beta, c, threads),
        Path::Avx512Bf16 => oriented(Bf16Avx512::detect().ok_or_else(gone)?, alpha, a, b, beta, c, threads),
        Path::Amx => oriented(amx::Bf16Amx::detect().ok_or_else(gone)?, alpha, a, b, beta, c, threads),
        Path::Portable => oriented(Portable, alpha, a, b, beta, c, threads),
    }
    Ok(())
}

/// Times faer and this crate's AVX-512 f32 kernel on the GEMM of an f32 size class
/// ([`dispatch::F32_CLASSES`]) on `threads` threads: warm-up runs of each (two, one from 2048 on),
/// then the class's pairs timed back to back, alternating which path goes first (the measurement
/// [`dispatch::decide`] uses for f32, with `GEMM_HOST_TUNE=1` once per process, thread count and
/// size class, then stored in the [`cache`] for later processes). The
/// warm-ups matter: cold, faer measured 2-8x below its steady speed on a 16-core Xeon VM.
fn measure_f32(threads: usize, class: dispatch::F32Class) -> Option<dispatch::F32Timing> {
    let (m, n, k) = class.shape;
    let kern = F32Avx512::detect()?;
    let a: Vec<f32> = (0..m * k).map(|i| ((i * 7919) % 257) as f32 / 257.0 - 0.5).collect();
    let b: Vec<f32> = (0..k * n).map(|i| ((i * 104729) % 251) as f32 / 251.0 - 0.5).collect();
    let mut c = vec![0f32; m * n];
    let mut time = |own: bool| -> Option<f64> {
        let av = MatRef::new(&a, m, k, k, 1, gemm_core::Operand::A).ok()?;
        let bv = MatRef::new(&b, k, n, n, 1, gemm_core::Operand::B).ok()?;
        let cv = MatMut::new(&mut c, m, n, n, 1, gemm_core::Operand::C).ok()?;
        let t = std::time::Instant::now();
        if own {
            oriented(kern, 1.0, av, bv, 0.0, cv, threads);
        } else {
            faer_f32::gemm(1.0, av, bv, 0.0, cv, threads);
        }
        Some(t.elapsed().as_secs_f64())
    };
    let warm_ups = if class.side >= 2048 { 1 } else { 2 };
    for _ in 0..warm_ups {
        time(false)?;
        time(true)?;
    }
    let mut pairs = Vec::with_capacity(class.rounds);
    for round in 0..class.rounds {
        let pair = if round % 2 == 0 {
            let f = time(false)?;
            (f, time(true)?)
        } else {
            let o = time(true)?;
            (time(false)?, o)
        };
        pairs.push(pair);
    }
    dispatch::F32Timing::from_pairs(&pairs, class, threads)
}

/// `C = beta * C`, writing zeros without reading C when `beta == 0`. Runs along C's contiguous
/// dimension when it has one.
fn scale<C: Element>(beta: f32, c: &mut MatMut<'_, C>) {
    let (m, n, rs, cs) = (c.rows(), c.cols(), c.row_stride(), c.col_stride());
    if m == 0 || n == 0 {
        return;
    }
    let apply = |x: &mut C| *x = C::from_f32(if beta == 0.0 { 0.0 } else { beta * x.to_f32() });
    let data = c.data_mut();
    // (lines, line length, stride between lines) when one stride is 1.
    let lines = if rs == 1 {
        Some((n, m, cs))
    } else if cs == 1 {
        Some((m, n, rs))
    } else {
        None
    };
    match lines {
        Some((count, len, stride)) => {
            for l in 0..count {
                data[l * stride..][..len].iter_mut().for_each(apply);
            }
        }
        None => {
            for i in 0..m {
                for j in 0..n {
                    apply(&mut data[i * rs + j * cs]);
                }
            }
        }
    }
}

/// The plain loop for tiny problems: f32 dot products, one rounding.
fn small<A: Element, B: Element, C: Element>(
    alpha: f32,
    a: MatRef<'_, A>,
    b: MatRef<'_, B>,
    beta: f32,
    mut c: MatMut<'_, C>,
) {
    let (da, db) = (convert::Decoder::<A>::new(), convert::Decoder::<B>::new());
    for i in 0..c.rows() {
        for j in 0..c.cols() {
            let mut s = 0f32;
            for p in 0..a.cols() {
                s += da.f32(a.get(i, p)) * db.f32(b.get(p, j));
            }
            let mut v = alpha * s;
            if beta != 0.0 {
                v += beta * c.get(i, j).to_f32();
            }
            c.set(i, j, C::from_f32(v));
        }
    }
}

/// The kernels store tiles along C's rows (`MR` consecutive rows of one column), so a C with
/// unit column stride is computed as `C^T = B^T * A^T`.
fn oriented<K: Kernel, A: Element, B: Element, C: Element>(
    kern: K,
    alpha: f32,
    a: MatRef<'_, A>,
    b: MatRef<'_, B>,
    beta: f32,
    c: MatMut<'_, C>,
    threads: usize,
) {
    if c.row_stride() != 1 && c.col_stride() == 1 {
        parallel(kern, alpha, b.t(), a.t(), beta, c.t(), threads)
    } else {
        parallel(kern, alpha, a, b, beta, c, threads)
    }
}

/// Splits C into disjoint slabs of whole micro-tiles and runs `threads` workers over them.
///
/// There are more slabs than workers ([`slab_count`]) and each worker claims the next unclaimed
/// slab when it finishes one, so a worker that the OS deschedules (other load on a shared machine,
/// a slower core) holds up at most one slab instead of a `1/threads` share of the GEMM: with one
/// fixed slab per worker, the call lasted as long as its most delayed worker.
fn parallel<K: Kernel, A: Element, B: Element, C: Element>(
    kern: K,
    alpha: f32,
    a: MatRef<'_, A>,
    b: MatRef<'_, B>,
    beta: f32,
    c: MatMut<'_, C>,
    threads: usize,
) {
    let (m, n, k) = (c.rows(), c.cols(), a.cols());
    let (mr, nr) = (K::MR, K::NR);
    // Columns can be handed out as separate slices when they lie one after another in memory.
    let cols_apart = n <= 1 || c.col_stride() > (m - 1) * c.row_stride();
    let by_cols = cols_apart && n.div_ceil(nr) >= threads;
    let by_rows = !by_cols && !cols_apart && m.div_ceil(mr) >= threads;
    let via_buffers = !by_cols && !by_rows && m.div_ceil(mr) >= threads;
    if threads <= 1 || !(by_cols || by_rows || via_buffers) {
        return driver::serial(kern, alpha, a, b, beta, c, None);
    }
    if via_buffers {
        return parallel_rows_via_buffers(kern, alpha, a, b, beta, c, threads);
    }
    if by_cols {
        // Every column slab needs all of A: pack it once, on all workers, and share it (each worker
        // packing its own copy cost 16 workers 16 copies; measured on a 16-core Xeon).
        return <K::P as kernel::PackElem>::with_shared(|buf| {
            let shared = driver::pack_shared(kern, a, threads, buf);
            let shared = &shared;
            let width = n.div_ceil(slab_count(n, nr, threads)).next_multiple_of(nr);
            let mut slabs = Vec::new();
            let mut rest = c.t();
            let mut j0 = 0;
            while n - j0 > width {
                let (mine, more) = rest.split_rows(width).expect("columns lie one after another");
                slabs.push((j0, mine.t()));
                rest = more;
                j0 += width;
            }
            slabs.push((j0, rest.t()));
            driver::claim_each(slabs, threads, |(j0, cj)| {
                let bj = b.submatrix(0, j0, k, cj.cols());
                driver::serial(kern, alpha, a, bj, beta, cj, Some(shared))
            });
        });
    }
    let height = m.div_ceil(slab_count(m, mr, threads)).next_multiple_of(mr);
    let mut slabs = Vec::new();
    let mut rest = c;
    let mut i0 = 0;
    while m - i0 > height {
        let (mine, more) = rest.split_rows(height).expect("rows lie one after another");
        slabs.push((i0, mine));
        rest = more;
        i0 += height;
    }
    slabs.push((i0, rest));
    driver::claim_each(slabs, threads, |(i0, ci)| {
        driver::serial(kern, alpha, a.submatrix(i0, 0, ci.rows(), k), b, beta, ci, None)
    });
}

/// How many slabs to cut `len` rows or columns into for `threads` workers: a whole number of slabs
/// per worker, up to [`SLABS_PER_THREAD`], but no slab narrower than [`SLAB_MIN_TILES`] micro-tiles
/// of `tile` where that leaves one per worker (every column slab streams all of the shared packed
/// A from L3 or memory once, so a narrow slab costs memory traffic: 16 tiles of 12 columns do 96
/// multiply-adds per byte of A read). A whole number per worker: 21 slabs on 16 workers would
/// take two slab times where 16 take one and a third.
fn slab_count(len: usize, tile: usize, threads: usize) -> usize {
    let per = (len.div_ceil(tile) / (threads * SLAB_MIN_TILES)).clamp(1, SLABS_PER_THREAD);
    threads * per
}

/// Slabs per worker: enough that a worker descheduled for a while costs the call little (the
/// others take its unclaimed slabs), few enough that each slab is a long run of micro-kernels.
const SLABS_PER_THREAD: usize = 4;
/// The narrowest slab, in micro-tiles.
const SLAB_MIN_TILES: usize = 16;

/// Tall, narrow C whose columns lie one after another (so its rows cannot be handed out as
/// separate slices): each worker computes its rows into a private f32 buffer, then the calling
/// thread adds `beta * C` and rounds once into C. The extra pass is `m x n`, small next to the
/// `m x n x k` product.
fn parallel_rows_via_buffers<K: Kernel, A: Element, B: Element, C: Element>(
    kern: K,
    alpha: f32,
    a: MatRef<'_, A>,
    b: MatRef<'_, B>,
    beta: f32,
    mut c: MatMut<'_, C>,
    threads: usize,
) {
    let (m, n, k) = (c.rows(), c.cols(), a.cols());
    let height = m.div_ceil(threads).next_multiple_of(K::MR);
    let slabs: Vec<(usize, Vec<f32>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..m)
            .step_by(height)
            .map(|i0| {
                let h = height.min(m - i0);
                let ai = a.submatrix(i0, 0, h, k);
                s.spawn(move || {
                    let mut buf = vec![0f32; h * n];
                    let view = MatMut::new(&mut buf, h, n, 1, h, gemm_core::Operand::C).expect("a tight h x n buffer");
                    driver::serial(kern, alpha, ai, b, 0.0, view, None);
                    (i0, buf)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("GEMM worker panicked")).collect()
    });
    for (i0, buf) in slabs {
        let h = buf.len() / n;
        for j in 0..n {
            for i in 0..h {
                let mut v = buf[j * h + i];
                if beta != 0.0 {
                    v += beta * c.get(i0 + i, j).to_f32();
                }
                c.set(i0 + i, j, C::from_f32(v));
            }
        }
    }
}

mod faer_f32 {
    //! f32 x f32 -> f32 through faer (the fastest f32 GEMM measured here, see the crate docs).
    use super::scale;
    use gemm_core::{Element, MatMut, MatRef};
    use std::any::TypeId;

    /// faer strides are `isize`; a dimension of at most one element never uses its stride, and
    /// every other stride is bounded by the view's span, which fits a slice.
    fn stride(dim: usize, s: usize) -> isize {
        if dim <= 1 {
            0
        } else {
            isize::try_from(s).expect("a view's stride over several elements fits its slice")
        }
    }

    /// Only called with `A = B = C = f32` (checked with `TypeId`, panics otherwise).
    pub(super) fn gemm<A: Element, B: Element, C: Element>(
        alpha: f32,
        a: MatRef<'_, A>,
        b: MatRef<'_, B>,
        beta: f32,
        mut c: MatMut<'_, C>,
        threads: usize,
    ) {
        let f = TypeId::of::<f32>();
        assert!(TypeId::of::<A>() == f && TypeId::of::<B>() == f && TypeId::of::<C>() == f);
        // BLAS semantics: beta == 0 must not read C: faer's `Replace` overwrites without reading
        // (the tests put NaN in C on this path at several shapes); other betas scale C first.
        let accum = if beta == 1.0 {
            faer::Accum::Add
        } else if beta == 0.0 {
            faer::Accum::Replace
        } else {
            scale(beta, &mut c);
            faer::Accum::Add
        };
        let par = if threads <= 1 { faer::Par::Seq } else { faer::Par::rayon(threads) };
        let (m, n, k) = (c.rows(), c.cols(), a.cols());
        let (ars, acs) = (stride(m, a.row_stride()), stride(k, a.col_stride()));
        let (brs, bcs) = (stride(k, b.row_stride()), stride(n, b.col_stride()));
        let (crs, ccs) = (stride(m, c.row_stride()), stride(n, c.col_stride()));
        let cptr = c.data_mut().as_mut_ptr().cast::<f32>();
        // SAFETY: A, B and C are f32 (asserted above), so the casts keep the element type. Each
        // pointer and its strides come from a gemm_core view whose constructor checked that every
        // element `(i, j)` at `i * rs + j * cs` lies inside its slice (strides of a dimension of
        // size <= 1 are replaced by 0, which addresses only element 0). C is a `MatMut`, which is
        // injective (no two elements share a slot) and borrowed mutably for this call, so faer's
        // writes alias neither each other nor A or B (shared borrows cannot overlap it).
        unsafe {
            let av = faer::MatRef::from_raw_parts(a.data().as_ptr().cast::<f32>(), m, k, ars, acs);
            let bv = faer::MatRef::from_raw_parts(b.data().as_ptr().cast::<f32>(), k, n, brs, bcs);
            let cv = faer::MatMut::from_raw_parts_mut(cptr, m, n, crs, ccs);
            faer::linalg::matmul::matmul(cv, accum, av, bv, alpha, par);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::slab_count;

    #[test]
    fn slabs_are_a_whole_number_per_worker_and_not_too_narrow() {
        // 2 workers, 2048 columns of 12-column tiles: 171 tiles, 4 slabs each of 22 tiles.
        assert_eq!(slab_count(2048, 12, 2), 8);
        // 16 workers at 2048 or 4096: one slab each (two would be narrower than 16 tiles).
        assert_eq!(slab_count(2048, 12, 16), 16);
        assert_eq!(slab_count(4096, 12, 16), 16);
        assert_eq!(slab_count(8192, 12, 16), 32);
        // Narrow C: one slab per worker even below the minimum width.
        assert_eq!(slab_count(100, 12, 4), 4);
        for (len, threads) in [(333, 3), (5000, 7), (64, 2), (100_000, 16)] {
            let n = slab_count(len, 32, threads);
            assert!(n.is_multiple_of(threads) && n <= threads * 4, "{len} {threads}: {n}");
        }
    }
}
