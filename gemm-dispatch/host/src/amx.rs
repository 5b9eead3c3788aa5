//! The AMX bf16 micro-kernel: a 32 x 32 block of C from four `tdpbf16ps` tile products per 32
//! values of k (Intel SDM vol. 2, "TDPBF16PS"; Intel Intrinsics Guide, AMX-BF16).
//!
//! # Tiles
//!
//! All eight tile registers are configured as 16 rows of 64 bytes (palette 1). `tdpbf16ps dst,
//! src1, src2` computes, for each row `i` of dst and each of its 16 f32 columns `j`,
//! `dst[i][j] += sum over t < 16 of src1[i][2t] * src2[t][j].lo + src1[i][2t+1] * src2[t][j].hi`,
//! where src1 is 16 rows of 32 bf16 and src2 16 rows of 16 bf16 pairs.
//!
//! The kernel computes `C^T`, so that each dst row is a column of C and the tiles store straight
//! into the driver's column-major accumulator (leading dimension 32):
//! * src1 = B, transposed: rows are columns `j` of C, each with 32 values of k (packed by
//!   [`crate::pack::amx_row_panel`]); tmm4 holds columns 0..16 of the micro-tile, tmm5 16..32.
//! * src2 = A in pairs: row `t` holds, for 16 rows `i` of C, `(A[i][2t], A[i][2t+1])` (packed by
//!   [`crate::pack::amx_pair_panel`], 32 rows of pairs, 128 bytes per pair-row); tmm6 holds rows
//!   0..16 (the first 64 bytes of each pair-row), tmm7 rows 16..32 (the next 64).
//! * dst: tmm0 = columns 0..16 x rows 0..16, tmm1 = columns 0..16 x rows 16..32, tmm2 and tmm3 the
//!   same for columns 16..32.
//!
//! # Speed (16-core AMX Xeon, one core, GFLOP/s; 2320 with no tile loads at all)
//!
//! * C stays in tmm0..3 for a whole k block and is loaded from and stored to an f32 C directly
//!   ([`crate::kernel::Kernel::run_into`]), not through the accumulator and the scalar epilogue.
//! * The tile configuration is loaded once per worker share ([`crate::kernel::Kernel::session`]).
//! * Operand tiles are loaded for the next block as soon as their last reader has issued
//!   (software pipelining): 2310 from L1 against 1690 with the four loads ahead of the products.
//! * Packed panels start on 64-byte lines (`driver::at_least`): 16 bytes off, each 64-byte tile row
//!   spans two lines and the kernel ran at 700.
//! * The A micro-panel, streamed from L2, is prefetched 8 KiB ahead (`GEMM_HOST_AMX_PREFETCH`):
//!   bf16 2048^3 on one thread 587 against 250 without, 4096^3 on 16 threads 4692 against 4219.
//!
//! # Arithmetic
//!
//! Each bf16 product is exact in f32 and the sums accumulate in f32. `tdpbf16ps` treats denormal
//! inputs as zero and flushes denormal results (like `vdpbf16ps`; SDM: "DAZ, FTZ, RNE, SAE are
//! implied"), so the results match the other bf16 paths within the f32-accumulation tolerance.
//!
//! # Encoding
//!
//! Rust stable has no AMX intrinsics (`core::arch::x86_64::_tile_*` is behind the unstable
//! `x86_amx_intrinsics` feature, rust-lang/rust#126622), so the kernel is inline assembly; LLVM's
//! assembler encodes the mnemonics (checked with `llvm-objdump-22 -d`: `ldtilecfg (%rdi)` =
//! `c4 e2 78 49 07`, `tileloadd (%rsi,%rax), %tmm4` = `c4 e2 7b 4b 24 06`,
//! `tdpbf16ps %tmm6, %tmm4, %tmm0` = `c4 e2 4a 5c c4`, `tilestored %tmm0, (%rdx,%rax)` =
//! `c4 e2 7a 4b 04 02`, as the SDM's opcode tables give: VEX.128.F2.0F38.W0 4B /r etc.).

use crate::convert::Decoder;
use crate::kernel::{Blocking, Kernel, Tile};
use crate::pack::{self, AMX_K};
use gemm_core::{Element, MatRef};

/// Rows of the AMX micro-tile (two tiles of 16).
pub(crate) const MR: usize = 32;
/// Columns of the AMX micro-tile (two tiles of 16).
pub(crate) const NR: usize = 32;

/// The AMX bf16 kernel. Only [`Bf16Amx::detect`] makes one, and only where the CPU has AMX-TILE
/// and AMX-BF16 and Linux granted this process the tile-data state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bf16Amx {
    blocking: Blocking,
    /// Bytes ahead of the current A block that the kernel prefetches into L1 (0: none).
    prefetch: usize,
}

impl Bf16Amx {
    pub fn detect() -> Option<Self> {
        if !crate::cpu::CpuFeatures::detect().amx_bf16 {
            return None;
        }
        let blocking = Blocking::from_env().unwrap_or_else(|| Self::blocking_for(crate::cpu::CacheSizes::detect()));
        Some(Self { blocking, prefetch: prefetch_distance() })
    }

    /// The B micro-panel (`NR` x kc bf16) a 32nd of L2, the A block (`mc` x kc bf16) a quarter of
    /// L2, the B block (`nc` x kc bf16) half of L2; kc a multiple of 32 in 256..=1024, mc a
    /// multiple of 32 in 64..=1024, nc in 256..=4096. Unlike the f32 kernel's, the B micro-panel
    /// is not sized for L1: a tile product is so fast that C's read-modify-write per k block costs
    /// more than streaming B from L2. Two `GEMM_HOST_BLOCKING` sweeps on a 16-core AMX Xeon (2 MiB
    /// L2, 48 KiB L1d; bf16 4096^3, 16 / 2 threads, GFLOP/s; the machine is a shared VM, runs
    /// vary by 20%): kc 1024, mc 512: 3314 / 1024 against 2340 / 834 for kc 512, mc 1024 (the L1d
    /// rule) and 2705 / 720 for kc 1024, mc 1024; later kc 1024, mc 256: 3221 / 500 against
    /// 2645 / 454 (kc 512, mc 512), 2682 / 455 (768, 512), 2547 / 450 (2048, 256). With aligned,
    /// software-pipelined tiles the sweep was too noisy to move them (kc 256..2048, mc 128..512).
    /// The B block was 4096 wide, which a 16-thread split never reaches (256 columns each) but one
    /// or two threads do: 4 MiB of B then came from L3 for every A block (one thread, 2048^3:
    /// 720 GFLOP/s against 1700 for the kernel alone).
    pub fn blocking_for(caches: crate::cpu::CacheSizes) -> Blocking {
        let kc = (caches.l2 / 32 / (NR * 2) / AMX_K * AMX_K).clamp(256, 1024);
        let mc = (caches.l2 / 4 / (kc * 2) / MR * MR).clamp(64, 1024);
        let nc = (caches.l2 / 2 / (kc * 2) / NR * NR).clamp(256, 4096);
        Blocking { kc, mc, nc }
    }
}

/// How far ahead (bytes) the kernel prefetches the A micro-panel it streams: `GEMM_HOST_AMX_PREFETCH`
/// (a tuning knob for benchmarks, 0 turns prefetching off), else [`PREFETCH`].
fn prefetch_distance() -> usize {
    static ENV: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *ENV.get_or_init(|| {
        std::env::var("GEMM_HOST_AMX_PREFETCH").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(PREFETCH)
    })
}

/// The default prefetch distance: four blocks of 32 k (8 KiB) ahead.
const PREFETCH: usize = 4 * 2048;

impl Kernel for Bf16Amx {
    /// A pair of bf16 (the even k in the low half).
    type P = u32;
    const MR: usize = MR;
    const NR: usize = NR;
    fn blocking(&self) -> Blocking {
        self.blocking
    }
    fn panel_len(kc: usize) -> usize {
        kc.next_multiple_of(AMX_K) / 2
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
        pack::amx_pair_panel::<T, MR>(src, dec, r0, rows, p0, kc, out)
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
        pack::amx_row_panel::<T, NR>(src, dec, r0, rows, p0, kc, out)
    }
    fn run(&self, kc: usize, a: &[u32], b: &[u32], acc: &mut Tile) {
        // The accumulator is a C of leading dimension MR, overwritten.
        let done = self.tiles(kc, a, b, &mut acc[..MR * NR], MR, false);
        debug_assert!(done);
    }
    fn run_into(&self, kc: usize, a: &[u32], b: &[u32], c: &mut [f32], ldc: usize, add: bool) -> bool {
        self.tiles(kc, a, b, c, ldc, add)
    }
    fn session<R>(&self, f: impl FnOnce() -> R) -> R {
        #[cfg(target_arch = "x86_64")]
        {
            let _tiles = x86::Session::begin();
            f()
        }
        #[cfg(not(target_arch = "x86_64"))]
        f()
    }
}

impl Bf16Amx {
    /// The 32 x 32 tile of C at `c` (column `j` at `c[j * ldc..][..32]`) set to, or with `add`
    /// increased by, the product of the panels over `kc` values of k.
    fn tiles(&self, kc: usize, a: &[u32], b: &[u32], c: &mut [f32], ldc: usize, add: bool) -> bool {
        let blocks = kc.div_ceil(AMX_K);
        // Each block of 32 k is 32 rows x 16 pairs of B and 16 pair-rows x 32 pairs of A.
        assert!(blocks >= 1 && a.len() >= blocks * 512 && b.len() >= blocks * 512);
        assert!(ldc >= MR && c.len() >= (NR - 1) * ldc + MR);
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `self` exists only if AMX-TILE and AMX-BF16 are present and Linux granted the
        // tile-data permission (`Bf16Amx::detect`); the panels hold `blocks` blocks of 2 KiB each
        // and `c` holds 32 columns of 32 floats at stride `ldc` (asserted above), which is what
        // the loop and the four tile loads and stores of C touch.
        unsafe {
            x86::kernel(blocks, a.as_ptr(), b.as_ptr(), c.as_mut_ptr(), ldc * 4, add, self.prefetch)
        }
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("Bf16Amx is only detected on x86_64");
        true
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::asm;
    use std::cell::Cell;

    /// The tile configuration (Intel SDM vol. 1, 18.2 "Tile configuration", LDTILECFG): byte 0
    /// palette 1, bytes 16..32 `colsb` of tmm0..tmm7 as u16 (64 bytes each), bytes 48..56 `rows`
    /// (16 each).
    #[repr(C, align(64))]
    struct TileConfig([u8; 64]);

    const CONFIG: TileConfig = {
        let mut c = [0u8; 64];
        c[0] = 1;
        let mut t = 0;
        while t < 8 {
            c[16 + 2 * t] = 64;
            c[48 + t] = 16;
            t += 1;
        }
        TileConfig(c)
    };

    thread_local! {
        /// Whether this thread's tiles hold [`CONFIG`] (loaded by [`configure`], cleared by the
        /// outermost [`Session`]'s release).
        static CONFIGURED: Cell<bool> = const { Cell::new(false) };
    }

    /// Loads [`CONFIG`] unless this thread already holds it. `ldtilecfg` zeroes every tile and
    /// costs far more than a `tilezero`, so it runs once per worker share, not once per tile.
    fn configure() {
        CONFIGURED.with(|done| {
            if !done.get() {
                // SAFETY: only reached from `kernel`, whose caller proved AMX present and permitted;
                // `ldtilecfg` reads the 64-byte aligned configuration and writes no memory.
                unsafe { asm!("ldtilecfg [{cfg}]", cfg = in(reg) &CONFIG, options(nostack, readonly)) };
                done.set(true);
            }
        });
    }

    /// One worker share's tile state: released (`tilerelease`, tiles back to their initial state,
    /// so no AMX state outlives the share) when the outermost session ends.
    pub(super) struct Session {
        outer: bool,
    }

    impl Session {
        pub(super) fn begin() -> Self {
            Session { outer: !CONFIGURED.with(|c| c.get()) }
        }
    }

    impl Drop for Session {
        fn drop(&mut self) {
            if self.outer && CONFIGURED.with(|c| c.replace(false)) {
                // SAFETY: the tiles were configured on this thread (the flag), so AMX is present
                // and permitted; `tilerelease` touches no memory.
                unsafe { asm!("tilerelease", options(nostack, nomem)) };
            }
        }
    }

    /// # Safety
    /// AMX-TILE and AMX-BF16 must be present and the tile-data permission granted; `a` and `b`
    /// must hold `blocks * 2048` bytes and `c` 32 rows of 128 bytes at stride `ldc` bytes.
    pub(super) unsafe fn kernel(
        blocks: usize,
        a: *const u32,
        b: *const u32,
        c: *mut f32,
        ldc: usize,
        add: bool,
        prefetch: usize,
    ) {
        configure();
        // SAFETY: the caller's contract: every tile load reads 16 rows inside one 2 KiB block of
        // `a` or `b` (strides 128 and 64 bytes), and the C loads and stores read and write 16 rows
        // of 64 bytes at stride `ldc` inside `c`'s 32 rows. Prefetches never fault.
        unsafe {
            asm!(
                // C: tmm0 = columns 0..16 x rows 0..16, tmm1 rows 16..32, tmm2/3 columns 16..32.
                "test {add}, {add}",
                "jz 3f",
                "tileloadd tmm0, [{c} + {ldc}*1]",
                "tileloadd tmm1, [{c} + {ldc}*1 + 64]",
                "tileloadd tmm2, [{c2} + {ldc}*1]",
                "tileloadd tmm3, [{c2} + {ldc}*1 + 64]",
                "jmp 4f",
                "3:",
                "tilezero tmm0",
                "tilezero tmm1",
                "tilezero tmm2",
                "tilezero tmm3",
                "4:",
                "mov {s64}, 64",
                "mov {s128}, 128",
                // Software-pipelined: the operands of block t+1 are loaded as soon as the last
                // product reading the previous contents has issued, so the loads overlap the tile
                // products (on a 16-core AMX Xeon, from L1: 2310 GFLOP/s per core, the rate with
                // no loads at all, against 1690 loading all four operands before the products).
                "tileloadd tmm4, [{b} + {s64}*1]",
                "tileloadd tmm6, [{a} + {s128}*1]",
                "tileloadd tmm5, [{b} + {s64}*1 + 1024]",
                "tileloadd tmm7, [{a} + {s128}*1 + 64]",
                "dec {n}",
                "jz 6f",
                "test {pf}, {pf}",
                "jz 5f",
                // With prefetch of the A block `pf` bytes ahead (A streams from L2).
                "2:",
                "add {a}, 2048",
                "add {b}, 2048",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "prefetcht0 [{a} + {pf} + 0]",
                "prefetcht0 [{a} + {pf} + 64]",
                "prefetcht0 [{a} + {pf} + 128]",
                "prefetcht0 [{a} + {pf} + 192]",
                "prefetcht0 [{a} + {pf} + 256]",
                "prefetcht0 [{a} + {pf} + 320]",
                "prefetcht0 [{a} + {pf} + 384]",
                "prefetcht0 [{a} + {pf} + 448]",
                "tdpbf16ps tmm2, tmm5, tmm6",
                "tileloadd tmm6, [{a} + {s128}*1]",
                "prefetcht0 [{a} + {pf} + 512]",
                "prefetcht0 [{a} + {pf} + 576]",
                "prefetcht0 [{a} + {pf} + 640]",
                "prefetcht0 [{a} + {pf} + 704]",
                "prefetcht0 [{a} + {pf} + 768]",
                "prefetcht0 [{a} + {pf} + 832]",
                "prefetcht0 [{a} + {pf} + 896]",
                "prefetcht0 [{a} + {pf} + 960]",
                "tdpbf16ps tmm1, tmm4, tmm7",
                "tileloadd tmm4, [{b} + {s64}*1]",
                "prefetcht0 [{a} + {pf} + 1024]",
                "prefetcht0 [{a} + {pf} + 1088]",
                "prefetcht0 [{a} + {pf} + 1152]",
                "prefetcht0 [{a} + {pf} + 1216]",
                "prefetcht0 [{a} + {pf} + 1280]",
                "prefetcht0 [{a} + {pf} + 1344]",
                "prefetcht0 [{a} + {pf} + 1408]",
                "prefetcht0 [{a} + {pf} + 1472]",
                "tdpbf16ps tmm3, tmm5, tmm7",
                "tileloadd tmm5, [{b} + {s64}*1 + 1024]",
                "tileloadd tmm7, [{a} + {s128}*1 + 64]",
                "prefetcht0 [{a} + {pf} + 1536]",
                "prefetcht0 [{a} + {pf} + 1600]",
                "prefetcht0 [{a} + {pf} + 1664]",
                "prefetcht0 [{a} + {pf} + 1728]",
                "prefetcht0 [{a} + {pf} + 1792]",
                "prefetcht0 [{a} + {pf} + 1856]",
                "prefetcht0 [{a} + {pf} + 1920]",
                "prefetcht0 [{a} + {pf} + 1984]",
                "dec {n}",
                "jnz 2b",
                "jmp 6f",
                // Without prefetch.
                "5:",
                "add {a}, 2048",
                "add {b}, 2048",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tdpbf16ps tmm2, tmm5, tmm6",
                "tileloadd tmm6, [{a} + {s128}*1]",
                "tdpbf16ps tmm1, tmm4, tmm7",
                "tileloadd tmm4, [{b} + {s64}*1]",
                "tdpbf16ps tmm3, tmm5, tmm7",
                "tileloadd tmm5, [{b} + {s64}*1 + 1024]",
                "tileloadd tmm7, [{a} + {s128}*1 + 64]",
                "dec {n}",
                "jnz 5b",
                // The last block's products (its operands are loaded).
                "6:",
                "tdpbf16ps tmm0, tmm4, tmm6",
                "tdpbf16ps tmm2, tmm5, tmm6",
                "tdpbf16ps tmm1, tmm4, tmm7",
                "tdpbf16ps tmm3, tmm5, tmm7",
                "tilestored [{c} + {ldc}*1], tmm0",
                "tilestored [{c} + {ldc}*1 + 64], tmm1",
                "tilestored [{c2} + {ldc}*1], tmm2",
                "tilestored [{c2} + {ldc}*1 + 64], tmm3",
                a = inout(reg) a => _,
                b = inout(reg) b => _,
                c = in(reg) c,
                c2 = in(reg) c.byte_add(16 * ldc),
                ldc = in(reg) ldc,
                add = in(reg) usize::from(add),
                pf = in(reg) prefetch,
                n = inout(reg) blocks => _,
                s64 = out(reg) _,
                s128 = out(reg) _,
                options(nostack),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CacheSizes;

    #[test]
    fn blocking_follows_l2() {
        let b = Bf16Amx::blocking_for(CacheSizes { l1d: 48 << 10, l2: 2 << 20, source: "test" });
        assert_eq!((b.kc, b.mc, b.nc), (1024, 256, 512));
        let b = Bf16Amx::blocking_for(CacheSizes { l1d: 48 << 10, l2: 1 << 20, source: "test" });
        assert_eq!((b.kc, b.mc, b.nc), (512, 256, 512));
        let b = Bf16Amx::blocking_for(CacheSizes { l1d: 32 << 10, l2: 256 << 10, source: "test" });
        assert_eq!((b.kc, b.mc, b.nc), (256, 128, 256));
    }
}
