//! Micro-kernels: an `MR x NR` block of C accumulated in registers over a packed A micro-panel
//! (`MR` rows) and a packed B micro-panel (`NR` columns), written to an f32 tile buffer that the
//! driver's epilogue applies to C.
//!
//! Each kernel names its tile shape (`MR x NR`), its packing and its cache blocking; the driver
//! and the thread split are common:
//! * [`F32Avx512`]: f32 panels, `vfmadd231ps` on zmm registers, 32 x 12;
//! * [`Bf16Avx512`]: bf16 panels with pairs of k interleaved, `vdpbf16ps`, 32 x 12;
//! * [`crate::amx::Bf16Amx`]: bf16 tiles, AMX `tdpbf16ps`, 32 x 32;
//! * [`Portable`]: f32 panels, plain Rust (any CPU), 32 x 12.
//!
//! A kernel value can only be obtained from its `detect` function, which checks the CPU at run
//! time; holding one is the proof that its instructions exist, so the safe `run` can call the
//! `#[target_feature]` code.

use crate::convert::Decoder;
use crate::pack;
use gemm_core::{Element, MatRef};

/// Rows of the AVX-512 and portable micro-tiles (two zmm registers of f32 lanes).
pub(crate) const MR: usize = 32;
/// Columns of the AVX-512 and portable micro-tiles.
pub(crate) const NR: usize = 12;
/// The largest `MR * NR` of any kernel (the AMX kernel's 32 x 32).
pub(crate) const TILE_MAX: usize = 32 * 32;
/// The accumulator tile, column-major with the kernel's `MR` as leading dimension
/// (`acc[j * K::MR + i]`); kernels use its first `MR * NR` entries.
pub(crate) type Tile = [f32; TILE_MAX];

/// Cache blocking of the driver's loops: `kc` values of k per packed block, `mc` rows of A per
/// L2-resident block, `nc` columns of B per L3-resident block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocking {
    pub kc: usize,
    pub mc: usize,
    pub nc: usize,
}

impl Blocking {
    /// The f32 kernel's blocking for the given caches, after BLIS's analytical rule (Low et al.,
    /// "Analytical Modeling Is Enough for High-Performance BLIS", TOMS 2016), with one change:
    /// the `kc x NR` B micro-panel is reused from L1 by the next micro-kernel call only if the
    /// `MR x kc` A micro-panel streamed meanwhile does not evict it. Each B line is touched once
    /// per call, so under LRU the A stream displaces it unless both micro-panels fit together:
    /// `kc x (MR + NR)` floats in 3/4 of L1d (the rest for C and stack). The `mc x kc` A block
    /// takes about half of L2. `kc` is a multiple of 64 in 128..=1024, `mc` a multiple of `MR`
    /// in 64..=1024.
    ///
    /// Measured on a Zen5 core (48 KiB L1d, 1 MiB L2; `perf record -e cpu-clock`, one thread,
    /// 2048^3, time in the micro-kernel for the same work as OpenBLAS's SkylakeX kernel):
    /// kc 512 (B alone in half of L1d, the earlier rule) 1.10-1.15x OpenBLAS's kernel time,
    /// kc 256 1.02-1.07x, kc 128-192 1.00-1.05x.
    pub fn f32_for(caches: crate::cpu::CacheSizes) -> Self {
        let kc = (caches.l1d * 3 / 4 / ((MR + NR) * 4) / 64 * 64).clamp(128, 1024);
        let mc = (caches.l2 / 2 / (kc * 4) / MR * MR).clamp(64, 1024);
        Self { kc, mc, nc: 4096 / NR * NR }
    }

    /// `GEMM_HOST_BLOCKING=kc,mc,nc` (a tuning knob for benchmarks: it replaces the blocking of the
    /// f32 and AMX kernels), read once per process; `None` when unset or malformed.
    pub(crate) fn from_env() -> Option<Self> {
        static ENV: std::sync::OnceLock<Option<Blocking>> = std::sync::OnceLock::new();
        *ENV.get_or_init(|| {
            let v = std::env::var("GEMM_HOST_BLOCKING").ok()?;
            let n: Vec<usize> = v.split(',').map(|x| x.trim().parse().ok()).collect::<Option<_>>()?;
            match n[..] {
                [kc, mc, nc] if kc >= 32 && mc >= 32 && nc >= 32 => {
                    Some(Blocking { kc: kc / 32 * 32, mc: mc / 32 * 32, nc: nc / 32 * 32 })
                }
                _ => None,
            }
        })
    }
}

/// One micro-kernel with its packing format and cache blocking.
pub(crate) trait Kernel: Copy + Send + Sync {
    /// Packed element (f32, or bf16 pairs).
    type P: PackElem;
    /// Rows of C per micro-tile (rows of an A micro-panel).
    const MR: usize;
    /// Columns of C per micro-tile (columns of a B micro-panel).
    const NR: usize;
    /// The cache blocking (`kc` even for the pairwise kernels, a multiple of 32 for AMX).
    fn blocking(&self) -> Blocking;
    /// Packed elements per micro-panel row/column for `kc` values of k.
    fn panel_len(kc: usize) -> usize;
    /// Packs rows `r0..r0+rows` (`rows <= MR`), k columns `p0..p0+kc` of A into one micro-panel
    /// of `MR` rows, zero-padded.
    fn pack_a<T: Element>(
        src: &MatRef<'_, T>,
        dec: Decoder<T>,
        r0: usize,
        rows: usize,
        p0: usize,
        kc: usize,
        out: &mut [Self::P],
    );
    /// Packs columns `r0..r0+rows` (`rows <= NR`) of B, given transposed (`n x k`), into one
    /// micro-panel of `NR` columns, zero-padded.
    fn pack_b<T: Element>(
        src: &MatRef<'_, T>,
        dec: Decoder<T>,
        r0: usize,
        rows: usize,
        p0: usize,
        kc: usize,
        out: &mut [Self::P],
    );
    /// `acc = A_panel * B_panel` over `kc` values of k (`acc` column-major, leading dimension
    /// `MR`).
    fn run(&self, kc: usize, a: &[Self::P], b: &[Self::P], acc: &mut Tile);
    /// `C_tile = A_panel * B_panel` (`add == false`) or `C_tile += A_panel * B_panel` straight in
    /// an f32 C, for a whole `MR x NR` tile whose column `j` is `c[j * ldc..][..MR]`; returns
    /// `false` (C untouched) where the kernel has no such form, and the driver then runs
    /// [`Kernel::run`] and its epilogue. It spares a kernel that stores its accumulators as tiles
    /// (AMX) the round trip through `acc` and the scalar epilogue on every k block.
    fn run_into(&self, _kc: usize, _a: &[Self::P], _b: &[Self::P], _c: &mut [f32], _ldc: usize, _add: bool) -> bool {
        false
    }
    /// Runs `f` (one worker's share) with the kernel's per-thread state set up and released
    /// afterwards (AMX: the tile configuration, loaded once per share instead of once per tile).
    fn session<R>(&self, f: impl FnOnce() -> R) -> R {
        f()
    }
}

/// A packed element type, with per-thread packing buffers that outlive a call: the workers are
/// rayon's persistent pool threads, so after the first GEMM of a size the buffers are neither
/// allocated nor page-faulted again. They hold at most `KC x NC + MC x KC` elements per thread
/// (8.4 MiB for f32 and for bf16 pairs).
pub(crate) trait PackElem: Copy + Default + Send + Sync + 'static {
    /// Runs `f` with this thread's (B block, A block) buffers; a nested call (not made by this
    /// crate) gets fresh ones.
    fn with_buffers<R>(f: impl FnOnce(&mut Vec<Self>, &mut Vec<Self>) -> R) -> R;
    /// Runs `f` with the process's buffer for an A packed once and shared by all workers (kept
    /// between calls so its pages are faulted in once); a concurrent GEMM gets a fresh one.
    fn with_shared<R>(f: impl FnOnce(&mut Vec<Self>) -> R) -> R;
}

macro_rules! pack_elem {
    ($t:ty, $key:ident, $shared:ident) => {
        static $shared: std::sync::Mutex<Vec<$t>> = std::sync::Mutex::new(Vec::new());
        thread_local! {
            static $key: core::cell::RefCell<(Vec<$t>, Vec<$t>)> = const { core::cell::RefCell::new((Vec::new(), Vec::new())) };
        }
        impl PackElem for $t {
            fn with_buffers<R>(f: impl FnOnce(&mut Vec<Self>, &mut Vec<Self>) -> R) -> R {
                $key.with(|cell| match cell.try_borrow_mut() {
                    Ok(mut bufs) => {
                        let (b, a) = &mut *bufs;
                        f(b, a)
                    }
                    Err(_) => f(&mut Vec::new(), &mut Vec::new()),
                })
            }
            fn with_shared<R>(f: impl FnOnce(&mut Vec<Self>) -> R) -> R {
                match $shared.try_lock() {
                    Ok(mut buf) => f(&mut buf),
                    Err(_) => f(&mut Vec::new()),
                }
            }
        }
    };
}
pack_elem!(f32, F32_BUFFERS, F32_SHARED);
pack_elem!(u32, BF16_PAIR_BUFFERS, BF16_PAIR_SHARED);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CacheSizes;

    #[test]
    fn f32_blocking_follows_the_caches() {
        // Zen4/Zen5: 32/48 KiB L1d, 1 MiB L2. Sapphire Rapids: 48 KiB, 2 MiB. Skylake-SP: 32 KiB, 1 MiB.
        let b = Blocking::f32_for(CacheSizes { l1d: 48 << 10, l2: 2 << 20, source: "test" });
        assert_eq!((b.kc, b.mc), (192, 1024));
        // Both micro-panels fit in 3/4 of L1d; the A block in half of L2.
        assert!(b.kc * (MR + NR) * 4 <= 36 << 10 && b.mc * b.kc * 4 <= 1 << 20);
        let b = Blocking::f32_for(CacheSizes { l1d: 32 << 10, l2: 1 << 20, source: "test" });
        assert_eq!((b.kc, b.mc), (128, 1024));
        let b = Blocking::f32_for(CacheSizes { l1d: 48 << 10, l2: 1 << 20, source: "test" });
        assert_eq!((b.kc, b.mc), (192, 672));
        // Tiny or huge caches stay in range.
        let b = Blocking::f32_for(CacheSizes { l1d: 4 << 10, l2: 64 << 10, source: "test" });
        assert_eq!((b.kc, b.mc), (128, 64));
        let b = Blocking::f32_for(CacheSizes { l1d: 1 << 20, l2: 1 << 30, source: "test" });
        assert_eq!((b.kc, b.mc), (1024, 1024));
        assert_eq!(b.nc % NR, 0);
    }
}

/// f32 panels in plain Rust: the fallback for CPUs without AVX-512.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Portable;

impl Kernel for Portable {
    type P = f32;
    const MR: usize = MR;
    const NR: usize = NR;
    fn blocking(&self) -> Blocking {
        Blocking { kc: 256, mc: 128, nc: 2048 }
    }
    fn panel_len(kc: usize) -> usize {
        kc
    }
    fn pack_a<T: Element>(
        src: &MatRef<'_, T>,
        dec: Decoder<T>,
        r0: usize,
        rows: usize,
        p0: usize,
        kc: usize,
        out: &mut [f32],
    ) {
        pack::f32_panel::<T, MR>(src, dec, r0, rows, p0, kc, out)
    }
    fn pack_b<T: Element>(
        src: &MatRef<'_, T>,
        dec: Decoder<T>,
        r0: usize,
        rows: usize,
        p0: usize,
        kc: usize,
        out: &mut [f32],
    ) {
        pack::f32_panel::<T, NR>(src, dec, r0, rows, p0, kc, out)
    }
    fn run(&self, kc: usize, a: &[f32], b: &[f32], acc: &mut Tile) {
        let mut c = [[0f32; MR]; NR];
        for (ap, bp) in a.chunks_exact(MR).zip(b.chunks_exact(NR)).take(kc) {
            for (cj, &bj) in c.iter_mut().zip(bp) {
                for (cij, &ai) in cj.iter_mut().zip(ap) {
                    *cij += ai * bj;
                }
            }
        }
        for (dst, src) in acc[..MR * NR].chunks_exact_mut(MR).zip(&c) {
            dst.copy_from_slice(src);
        }
    }
}

/// f32 panels, AVX-512F FMA, blocked for the caches the CPU reports ([`Blocking::f32_for`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct F32Avx512 {
    blocking: Blocking,
}

impl F32Avx512 {
    pub fn detect() -> Option<Self> {
        if crate::cpu::CpuFeatures::detect().avx512f {
            let blocking = Blocking::from_env().unwrap_or_else(|| Blocking::f32_for(crate::cpu::CacheSizes::detect()));
            return Some(Self { blocking });
        }
        None
    }
}

impl Kernel for F32Avx512 {
    type P = f32;
    const MR: usize = MR;
    const NR: usize = NR;
    fn blocking(&self) -> Blocking {
        self.blocking
    }
    fn panel_len(kc: usize) -> usize {
        kc
    }
    fn pack_a<T: Element>(
        src: &MatRef<'_, T>,
        dec: Decoder<T>,
        r0: usize,
        rows: usize,
        p0: usize,
        kc: usize,
        out: &mut [f32],
    ) {
        pack::f32_panel::<T, MR>(src, dec, r0, rows, p0, kc, out)
    }
    fn pack_b<T: Element>(
        src: &MatRef<'_, T>,
        dec: Decoder<T>,
        r0: usize,
        rows: usize,
        p0: usize,
        kc: usize,
        out: &mut [f32],
    ) {
        pack::f32_panel::<T, NR>(src, dec, r0, rows, p0, kc, out)
    }
    fn run(&self, kc: usize, a: &[f32], b: &[f32], acc: &mut Tile) {
        assert!(a.len() >= kc * MR && b.len() >= kc * NR);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `self` exists only if AVX-512F was detected; the panels hold `kc` steps of `MR`
        // and `NR` values (asserted above) and `acc` holds `MR * NR` floats at stride `MR`.
        unsafe {
            x86::f32_kernel(kc, a.as_ptr(), b.as_ptr(), acc.as_mut_ptr(), MR, false)
        }
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("F32Avx512 is only detected on x86_64");
    }
    fn run_into(&self, kc: usize, a: &[f32], b: &[f32], c: &mut [f32], ldc: usize, add: bool) -> bool {
        assert!(a.len() >= kc * MR && b.len() >= kc * NR);
        assert!(ldc >= MR && c.len() >= (NR - 1) * ldc + MR);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `self` exists only if AVX-512F was detected; the panels hold `kc` steps of `MR`
        // and `NR` values and `c` holds `NR` columns of `MR` floats at stride `ldc` (asserted
        // above), which is all the kernel reads and writes.
        unsafe {
            x86::f32_kernel(kc, a.as_ptr(), b.as_ptr(), c.as_mut_ptr(), ldc, add)
        }
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("F32Avx512 is only detected on x86_64");
        true
    }
}

/// bf16 panels, AVX512_BF16 `vdpbf16ps`.
///
/// A packed micro-panel stores, for each pair of k `(2q, 2q+1)`, the `R` rows' two values side by
/// side in one u32 (`[q][r]`), so one zmm load of A is 16 rows x 2 k and one 32-bit broadcast of
/// B is a column's two k values: `vdpbf16ps` adds both products into each f32 lane.
///
/// Arithmetic: each product of two bf16 is exact in f32; the instruction adds the two products to
/// the accumulator with round-to-nearest-even, like two f32 FMAs, so the error stays within the
/// f32-accumulation bound that `gemm_core::reference::check` allows. **Denormals:** `vdpbf16ps`
/// always treats denormal inputs as zero (DAZ) and flushes denormal results to zero (FTZ),
/// whatever MXCSR says. bf16 inputs below 2^-126 in magnitude therefore count as 0, and products
/// or partial sums below 2^-126 are flushed; inputs in the normal bf16 range, and every fp8 value
/// (all are normal bf16), are unaffected. Callers that need denormal bf16 inputs honoured can
/// select [`crate::KernelChoice::F32Panels`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bf16Avx512 {
    _proof: (),
}

impl Bf16Avx512 {
    pub fn detect() -> Option<Self> {
        crate::cpu::CpuFeatures::detect().avx512bf16.then_some(Self { _proof: () })
    }
}

impl Kernel for Bf16Avx512 {
    /// A pair of bf16 (k even in the low half, k odd in the high half), as `vdpbf16ps` reads them.
    type P = u32;
    const MR: usize = MR;
    const NR: usize = NR;
    // B micro-panel kc*NR*2 = 12 KiB in L1; A block mc*kc*2 = 384 KiB in L2 (measured on Zen4).
    fn blocking(&self) -> Blocking {
        Blocking { kc: 512, mc: 384, nc: 4092 }
    }
    fn panel_len(kc: usize) -> usize {
        kc.div_ceil(2)
    }
    fn pack_a<T: Element>(
        src: &MatRef<'_, T>,
        dec: Decoder<T>,
        r0: usize,
        rows: usize,
        p0: usize,
        kc: usize,
        out: &mut [u32],
    ) {
        pack::bf16_pair_panel::<T, MR>(src, dec, r0, rows, p0, kc, out)
    }
    fn pack_b<T: Element>(
        src: &MatRef<'_, T>,
        dec: Decoder<T>,
        r0: usize,
        rows: usize,
        p0: usize,
        kc: usize,
        out: &mut [u32],
    ) {
        pack::bf16_pair_panel::<T, NR>(src, dec, r0, rows, p0, kc, out)
    }
    fn run(&self, kc: usize, a: &[u32], b: &[u32], acc: &mut Tile) {
        let kq = kc.div_ceil(2);
        assert!(a.len() >= kq * MR && b.len() >= kq * NR);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `self` exists only if AVX-512F and AVX512_BF16 were detected; the panels hold
        // `kq` pairs of `MR` and `NR` values (asserted above) and `acc` holds `MR * NR`.
        unsafe {
            x86::bf16_kernel(kq, a.as_ptr(), b.as_ptr(), acc.as_mut_ptr())
        }
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("Bf16Avx512 is only detected on x86_64");
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{MR, NR};
    use core::arch::x86_64::*;

    /// How far ahead (k steps of `MR` floats, 128 bytes each) the f32 kernel prefetches the A
    /// micro-panel it streams from L2 into L1.
    const F32_PREFETCH_STEPS: usize = 16;

    /// `C = A_panel * B_panel` (`add == false`) or `C += A_panel * B_panel` over `kc` k steps,
    /// column `j` of C at `c[j * ldc..][..MR]`.
    ///
    /// Per k step: two zmm loads of A (32 rows), twelve `vbroadcastss` of B from memory, each
    /// feeding two `vfmadd231ps` (LLVM keeps the broadcast in a register rather than folding it as
    /// `{1to16}` into both FMAs, which would load it twice), so 24 independent accumulators cover
    /// the FMA latency x throughput (4 cycles x 2 pipes on Zen4/5 and Sapphire Rapids) three times
    /// over. 14 loads per 24 FMAs leave the load ports idle half the time on Zen4 (two loads a
    /// cycle, one zmm FMA a cycle), and on one Zen4 core the kernel runs at OpenBLAS's speed in
    /// CPU time (98-99 GFLOP/s against its 98-99 at 2048^3 and 4096^3, `f32-pairs --threads 1`). The loop is unrolled by 4 and prefetches A (which streams from L2 while B's
    /// micro-panel stays in L1) [`F32_PREFETCH_STEPS`] steps ahead.
    ///
    /// # Safety
    /// AVX-512F must be available; `a` must hold `kc * MR` floats, `b` `kc * NR`, and `c` `NR`
    /// columns of `MR` floats at stride `ldc`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn f32_kernel(
        kc: usize,
        mut a: *const f32,
        mut b: *const f32,
        c: *mut f32,
        ldc: usize,
        add: bool,
    ) {
        let mut acc = [[_mm512_setzero_ps(); 2]; NR];
        // SAFETY (for the whole block): step `p < kc` reads `a[p*MR ..][..MR]` and
        // `b[p*NR ..][..NR]`, in bounds by the caller's contract; prefetches never fault.
        unsafe {
            let mut step = |a: *const f32, b: *const f32| {
                let a0 = _mm512_loadu_ps(a);
                let a1 = _mm512_loadu_ps(a.add(16));
                for (j, cj) in acc.iter_mut().enumerate() {
                    let bj = _mm512_set1_ps(*b.add(j));
                    cj[0] = _mm512_fmadd_ps(a0, bj, cj[0]);
                    cj[1] = _mm512_fmadd_ps(a1, bj, cj[1]);
                }
            };
            let mut left = kc;
            while left >= 4 {
                for u in 0..4 {
                    if u % 2 == 0 {
                        // `wrapping_add`: the last steps prefetch past the panel, harmlessly.
                        let pf = a.wrapping_add((F32_PREFETCH_STEPS + u) * MR).cast::<i8>();
                        for line in 0..4 {
                            _mm_prefetch::<_MM_HINT_T0>(pf.wrapping_add(64 * line));
                        }
                    }
                    step(a.add(u * MR), b.add(u * NR));
                }
                a = a.add(4 * MR);
                b = b.add(4 * NR);
                left -= 4;
            }
            for _ in 0..left {
                step(a, b);
                a = a.add(MR);
                b = b.add(NR);
            }
            for (j, cj) in acc.iter().enumerate() {
                let col = c.add(j * ldc);
                let (mut x0, mut x1) = (cj[0], cj[1]);
                if add {
                    x0 = _mm512_add_ps(x0, _mm512_loadu_ps(col));
                    x1 = _mm512_add_ps(x1, _mm512_loadu_ps(col.add(16)));
                }
                _mm512_storeu_ps(col, x0);
                _mm512_storeu_ps(col.add(16), x1);
            }
        }
    }

    /// # Safety
    /// AVX-512F and AVX512_BF16 must be available; `a` must hold `kq * MR` bf16 pairs, `b`
    /// `kq * NR`, `acc` `MR * NR` floats.
    #[target_feature(enable = "avx512f,avx512bf16")]
    pub(super) unsafe fn bf16_kernel(kq: usize, mut a: *const u32, mut b: *const u32, acc: *mut f32) {
        let mut c = [[_mm512_setzero_ps(); 2]; NR];
        for _ in 0..kq {
            // SAFETY: pair step `q < kq` reads `a[q*MR ..][..MR]` and `b[q*NR ..][..NR]`, in
            // bounds by the caller's contract.
            unsafe {
                // 16 rows x (k, k+1) per register; the transmutes reinterpret 64 bytes of lanes.
                let a0: __m512bh = core::mem::transmute(_mm512_loadu_si512(a.cast()));
                let a1: __m512bh = core::mem::transmute(_mm512_loadu_si512(a.add(16).cast()));
                for (j, cj) in c.iter_mut().enumerate() {
                    let bj: __m512bh = core::mem::transmute(_mm512_set1_epi32(*b.add(j) as i32));
                    cj[0] = _mm512_dpbf16_ps(cj[0], a0, bj);
                    cj[1] = _mm512_dpbf16_ps(cj[1], a1, bj);
                }
                a = a.add(MR);
                b = b.add(NR);
            }
        }
        for (j, cj) in c.iter().enumerate() {
            // SAFETY: `acc` holds `MR * NR` floats; column `j` is `acc[j*MR .. j*MR+32]`.
            unsafe {
                _mm512_storeu_ps(acc.add(j * MR), cj[0]);
                _mm512_storeu_ps(acc.add(j * MR + 16), cj[1]);
            }
        }
    }
}

/// Hints the CPU to bring the cache line holding `x` into L1 (no effect elsewhere). The driver
/// prefetches each C tile before its micro-kernel runs, so the epilogue does not wait on memory.
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: prefetch is a hint that never faults; the address comes from a reference.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
