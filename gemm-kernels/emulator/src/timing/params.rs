//! The timing model's parameters: one table per architecture, every number with its
//! source. Tags: [V] read in a primary source (AMD white papers, ISA guides, ROCm docs and
//! blogs, LLVM), [S] a secondary source (published microbenchmarks), [D] derived here with
//! the arithmetic in the `derivation`, [A] an assumption made where no source was found
//! (said so, never fitted to any kernel). `PARAMETERS.md` in this folder prints the same
//! table; `Params::rows` is what `gemm model --params` prints.

use crate::Arch;

/// Where a number comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// Read in a primary source.
    Verified,
    /// A published measurement (secondary source).
    Secondary,
    /// Derived here from other rows.
    Derived,
    /// No source found: an assumption, named as such.
    Assumed,
}

impl Tag {
    pub fn mark(self) -> &'static str {
        match self {
            Tag::Verified => "[V]",
            Tag::Secondary => "[S]",
            Tag::Derived => "[D]",
            Tag::Assumed => "[A]",
        }
    }
}

/// One row of the parameter table.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub name: &'static str,
    pub value: f64,
    pub unit: &'static str,
    pub tag: Tag,
    pub source: &'static str,
}

/// Parameters of one architecture (a CDNA3 MI300X or a CDNA4 MI355X).
#[derive(Clone, Debug)]
pub struct Params {
    pub arch: Arch,
    pub product: &'static str,
    pub xcds: u32,
    pub cus_per_xcd: u32,
    pub simds_per_cu: u32,
    pub max_waves_per_simd: u32,
    /// Unified VGPR+AGPR file per lane per SIMD, and its allocation granule.
    pub vgprs_per_lane: u32,
    pub vgpr_granule: u32,
    pub lds_bytes_per_cu: u32,
    pub lds_banks: u32,
    pub lds_bytes_per_clk: u32,
    pub lds_latency: u64,
    /// Per SIMD pair: read-data bus from the LDS, and the depth of its DS request FIFO.
    pub lds_pair_bytes_per_clk: u32,
    pub lds_fifo_depth: u32,
    pub peak_mhz: f64,
    /// Engine clock measured with the matrix pipes busy a fraction `loaded_busy` of the
    /// time, for f16/bf16 MFMAs (`[0]`) and fp8 MFMAs (`[1]`); [`Params::clock_under_load`].
    pub loaded_mhz: [f64; 2],
    pub loaded_busy: [f64; 2],
    /// Cycles between two issue slots of one SIMD (a wave issues at most once per slot).
    pub issue_period: u64,
    /// Cycles a wave64 VALU instruction occupies the SIMD's VALU (4 passes of 16 lanes).
    pub valu_cycles: u64,
    /// Cycles per MFMA pass.
    pub pass_cycles: u64,
    /// Cycles one vector-memory instruction of at most a dword per lane occupies the
    /// CU's TCP front end (address processing; coalesced addresses).
    pub vmem_issue_cycles: u64,
    /// The same for 8-, 12- and 16-byte accesses per lane (`dwordx2`..`dwordx4`).
    pub vmem_wide_issue_cycles: u64,
    /// Bytes of vector-memory loads that may be in flight per CU (the TCP's capacity:
    /// a load holds its lines from acceptance until its data has returned).
    pub tcp_inflight_bytes: u32,
    /// Vector-memory instructions a CU can hold issued but not yet accepted by the TCP;
    /// with the queue full, no wave of the CU issues another.
    pub vmem_queue_depth: u32,
    pub l1_bytes: u32,
    pub line_bytes: u32,
    pub l1_bytes_per_clk: f64,
    /// Tag lookups (one cache line each) the vector L1 makes per clock.
    pub l1_lookups_per_clk: f64,
    pub l1_latency_ns: f64,
    pub l2_bytes_per_xcd: u64,
    pub l2_bytes_per_clk_per_xcd: f64,
    pub l2_latency_ns: f64,
    /// L2 to Infinity Fabric (IOD) bytes per clock per XCD (MALL and HBM traffic).
    pub fabric_bytes_per_clk_per_xcd: f64,
    pub mall_bytes: u64,
    pub mall_tbps: f64,
    pub mall_latency_ns: f64,
    pub hbm_tbps: f64,
    /// Achieved fraction of the HBM peak for streaming reads (one matrix read once, no
    /// reuse): the rate of the model's HBM server.
    pub hbm_efficiency: f64,
    /// Achieved fraction of the HBM peak of a copy (a read and a write stream): reported
    /// beside, not used by the model (its HBM server is read-dominated in every kernel of
    /// the set; stores are charged at the read rate).
    pub hbm_copy_efficiency: f64,
    pub hbm_latency_ns: f64,
    pub smem_latency_ns: f64,
    /// Cycles from a workgroup slot freeing to the next workgroup's first instruction.
    pub wg_launch_cycles: u64,
    /// Cycles from the last wave's arrival at `s_barrier` to the release.
    pub barrier_cycles: u64,
    /// Dense matrix peak per CU per clock (bf16/f16 and fp8), for "% of peak".
    pub flops_per_cu_clk_f16: f64,
    pub flops_per_cu_clk_fp8: f64,
}

const CDNA3_WP: &str = "AMD CDNA 3 white paper (amd-cdna-3-white-paper.pdf), memory hierarchy pages 9-11";
const GPU_SPECS: &str = "ROCm docs reference/gpu-specs (shared/reference/ARCH.md)";
const CDNA4_BLOG: &str = "ROCm blog 'FP8 GEMM Optimization on AMD CDNA4' (shared/reference/TIMING.md)";
const MAF_BLOG: &str = "ROCm blog 'Measuring Max-Achievable FLOPs - Part 2' (shared/reference/TIMING.md)";
const BRINGUP: &str = "public MI300X bring-up log 'Hardware collection 20260916' (ROCm 7.2.4; rows E1-E5, H1-H3) found with the code search";
const ROCPROF_L1: &str = "ROCm Compute Profiler (rocprofiler-compute) vL1D model: docs conceptual/vector-l1-cache.rst (TA coalesces lanes into requests, tag RAM looks up one line per request, 128-B lines on MI300) and analysis_configs/gfx942|gfx950/1600_L1_cache.yaml (bytes = TCP_TOTAL_CACHE_ACCESSES x 128, peak = max_sclk x 128 B x CUs)";
/// The source of gfx950's f16/bf16 loaded clock (issue 24 item 6).
const GLUON_V8: &str = "ROCm/gfx950-gluon-tutorials (AMD) kernels/gemm/intra_wave/a16w16/v8_sliceMN/README.md §5, commit 22c5f0d960006a5c5c38dbdccf58ab4b429e9314 (the commit of the calibration kernel v5_local_prefetch's figure): v8_sliceMN + llir+force-agpr+amdgcnas, FP16 4096x4096x8192 on MI355X, 1569 TFLOPS at 97.40% MFMA efficiency (rocprofv3 --kernel-trace over 1000 dispatches with 512 MB of rotating torch.randn operands, the last 100 averaged: scripts/run_perf_table.py, bench.py --rocprof; efficiency = MFMA-busy share of the main loop, docs/mfma_efficiency.md); not in the calibration set";
/// The source of gfx950's fp8 loaded clock (issue 24 item 6).
const HK_FP8: &str = "taken as 1: HipKittens publishes no MFMA-busy share for its kernel, and 1 makes the row above the lowest clock its figure allows. The figure: HazyResearch/HipKittens commit f09e9685c4c6aaa41fb3ebd4fe4ca664938589e1, analysis/fp8_gemm/mi350x/mi355x_fp8_gemm.json: the 4-wave fp8 (OCP e4m3) GEMM (kernels/gemm/fp8fp32/FP8_4wave/4_wave.cu; calibration kernel hk_fp8_4wave, whose manifest gives the evidence that the figures are this kernel's and not the 8-wave's) at 16384^3 on MI355X, avg_time 2.604 ms = 3377.75 TFLOPS, the fastest published MI355X fp8 GEMM figure found (hipBLASLt 3293.2 in the same file). Harness 4_wave.cu matmul_host (8_wave.cu's is the same): 500 warm-up launches, then 100 launches each timed by hipEvents (a hipMemset of C and a host sync between launches, ~96% duty at 2.6 ms a launch; operands from std::normal_distribution(-1, 1) (mean -1, standard deviation 1), in ~500 MiB of rotating buffers from commit 50c22474 on). Timed per launch, the figure holds the launch overhead (calibration::PER_LAUNCH_OVERHEAD_S, 4 us, 0.15% of 2.604 ms), not taken out here: without it the bound above would be 1613 MHz, not 1611";
const LDS_DOC: &str = "ROCm/gfx950-gluon-tutorials docs/lds_throughput.md (AMD; MI355X): SIMD pairs, each with a 128 B/clk bus to the LDS per direction and an 8-entry FIFO of outstanding ds_read/ds_write requests; first completion ~50-70 clk after issue; ds_read_b128 steady state one per SIMD per 16 clk with all 4 SIMDs reading";
const TCP_DOC: &str = "ROCm/gfx950-gluon-tutorials (AMD; MI350/MI355X) kernels/gemm/intra_wave/a16w16/v8_sliceMN/README.md §4.1-4.4 and docs/memory_bandwidth_model.md §2.4: every buffer_load and buffer_load_to_lds passes the 32 KB TCP, which bounds the bytes in flight per CU (dwordx4 = 1 KB, 32 in flight); behind it a per-CU VMEM request FIFO of about 12 entries; TCP processing per instruction (coalesced) dword 4 cycles, dwordx2 16, dwordx4 16";
const DECODE_PR: &str = "ROCm/rocm-libraries pull request 12329 (shared/reference/DECODE.md), MI300X column: rocBLAS wvSpltK f16 GEMV 76032 x 13312, M = 1 (2,024.5 MB: weights read once, activation 26.6 KB, output 152 KB) in 415.90 us = 4.868 TB/s = 0.918 of the 5.3 TB/s peak. Access pattern: one matrix streamed with no reuse, reads only (non-temporal loads), weights 7.5x the 256 MiB Infinity Cache, so from HBM. Derived from this one row (the largest, where fixed costs weigh least); the table's 13 other shapes are held out (calibration set, kernel vllm_wvsplitk)";
const CC_MI300X: &str =
    "Chips and Cheese, 'Testing AMD's Giant MI300X' (2024): Infinity Cache ~218 ns, 11.9 TB/s measured";

impl Params {
    pub fn for_arch(arch: Arch) -> Params {
        match arch {
            Arch::Gfx942 => Params {
                arch,
                product: "MI300X",
                xcds: 8,
                cus_per_xcd: 38,
                simds_per_cu: 4,
                max_waves_per_simd: 8,
                vgprs_per_lane: 512,
                vgpr_granule: 8,
                lds_bytes_per_cu: 65536,
                lds_banks: 32,
                lds_bytes_per_clk: 128,
                lds_latency: 64,
                lds_pair_bytes_per_clk: 128,
                lds_fifo_depth: 8,
                peak_mhz: 2100.0,
                loaded_mhz: [1207.0, 1230.0],
                loaded_busy: [0.94, 0.94],
                issue_period: 4,
                valu_cycles: 4,
                pass_cycles: 4,
                vmem_issue_cycles: 4,
                vmem_wide_issue_cycles: 16,
                tcp_inflight_bytes: 32768,
                vmem_queue_depth: 12,
                l1_bytes: 32768,
                line_bytes: 128,
                l1_bytes_per_clk: 128.0,
                l1_lookups_per_clk: 1.0,
                l1_latency_ns: 66.0,
                l2_bytes_per_xcd: 4 << 20,
                l2_bytes_per_clk_per_xcd: 2048.0,
                l2_latency_ns: 85.0,
                fabric_bytes_per_clk_per_xcd: 1024.0,
                mall_bytes: 256 << 20,
                mall_tbps: 17.2,
                mall_latency_ns: 218.0,
                hbm_tbps: 5.3,
                hbm_efficiency: 0.918,
                hbm_copy_efficiency: 0.77,
                hbm_latency_ns: 353.0,
                smem_latency_ns: 85.0,
                wg_launch_cycles: 200,
                barrier_cycles: 4,
                flops_per_cu_clk_f16: 2048.0,
                flops_per_cu_clk_fp8: 4096.0,
            },
            Arch::Gfx950 => Params {
                arch,
                product: "MI355X",
                xcds: 8,
                cus_per_xcd: 32,
                lds_bytes_per_cu: 163840,
                lds_banks: 64,
                lds_bytes_per_clk: 256,
                peak_mhz: 2400.0,
                loaded_mhz: [1536.0, 1611.0],
                loaded_busy: [0.974, 1.0],
                hbm_tbps: 8.0,
                flops_per_cu_clk_f16: 4096.0,
                flops_per_cu_clk_fp8: 8192.0,
                ..Params::for_arch(Arch::Gfx942)
            },
        }
    }

    /// The engine clock for a kernel whose matrix pipes are busy a share `busy` of the time
    /// (f16/bf16 or `fp8` MFMAs): the peak when idle, the measured loaded clock at the
    /// measured busy share and beyond, a straight line between (params rows above).
    pub fn clock_under_load(&self, busy: f64, fp8: bool) -> f64 {
        let i = usize::from(fp8);
        let x = (busy / self.loaded_busy[i]).clamp(0.0, 1.0);
        self.peak_mhz - (self.peak_mhz - self.loaded_mhz[i]) * x
    }

    pub fn cus(&self) -> u32 {
        self.xcds * self.cus_per_xcd
    }

    /// Converts nanoseconds to cycles at `mhz`.
    pub fn cycles(&self, ns: f64, mhz: f64) -> u64 {
        (ns * mhz / 1000.0).round() as u64
    }

    /// Every parameter with its value, unit, tag and source.
    pub fn rows(&self) -> Vec<Row> {
        let g950 = self.arch == Arch::Gfx950;
        let same = "no CDNA4 figure found: taken equal to gfx942's";
        let r = |name, value: f64, unit, tag, source| Row { name, value, unit, tag, source };
        let mut rows = vec![
            r("XCDs", self.xcds as f64, "", Tag::Verified, GPU_SPECS),
            r("CUs per XCD", self.cus_per_xcd as f64, "", Tag::Verified, GPU_SPECS),
            r("SIMDs per CU", 4.0, "", Tag::Verified, "CDNA3 ISA guide §2 (4 SIMD16 per CU); bring-up log row B3 (kfd 4 SIMDs/CU)"),
            r("max waves per SIMD", 8.0, "", Tag::Verified, "bring-up log row B4 (kfd: 8 per SIMD, 32 per CU)"),
            r("VGPRs per lane per SIMD (unified arch+acc)", 512.0, "regs", Tag::Verified, "CDNA3 ISA §3.6.4 (512, 256 of each type, flexible); ARCH.md VGPR file 512 KiB/CU"),
            r("VGPR allocation granule", 8.0, "regs", Tag::Verified, "ISA.md §5.3 (granule = ceil(total/8)-1 on gfx90a/940/950)"),
            r("LDS per CU", self.lds_bytes_per_cu as f64, "B", Tag::Verified, GPU_SPECS),
            r("LDS banks", self.lds_banks as f64, "", Tag::Verified, if g950 { CDNA4_BLOG } else { GPU_SPECS }),
            r("LDS bandwidth per CU", self.lds_bytes_per_clk as f64, "B/clk", Tag::Verified, CDNA4_BLOG),
            r(
                "LDS latency (service to data in registers)",
                self.lds_latency as f64,
                "clk",
                if g950 { Tag::Verified } else { Tag::Assumed },
                if g950 { LDS_DOC } else { "CDNA3 ISA §11.3.1 gives 2..64 cycles of service per op; latency to registers not published for CDNA3; gfx950's ~50-70 clk (gluon tutorials) taken" },
            ),
            r(
                "LDS read-data bus per SIMD pair",
                self.lds_pair_bytes_per_clk as f64,
                "B/clk",
                if g950 { Tag::Verified } else { Tag::Assumed },
                if g950 { LDS_DOC } else { "no CDNA3 figure: taken as the CU's whole LDS bandwidth (never binding alone)" },
            ),
            r(
                "DS request FIFO per SIMD pair",
                self.lds_fifo_depth as f64,
                "requests",
                if g950 { Tag::Verified } else { Tag::Assumed },
                if g950 { LDS_DOC } else { "no CDNA3 figure: gfx950's 8 taken" },
            ),
            r("peak engine clock", self.peak_mhz, "MHz", Tag::Verified, "ROCm blog 'Matrix Core Programming on AMD CDNA3 and CDNA4' (TIMING.md)"),
            r(
                "engine clock at full f16/bf16 MFMA load",
                self.loaded_mhz[0],
                "MHz",
                if g950 { Tag::Derived } else { Tag::Verified },
                if g950 {
                    "Gluon tutorial v8_sliceMN (the MFMA-busy row below gives the source): 1569e12 FLOP/s / (0.974 busy x 4096 FLOP/CU/clk x 256 CUs) = 1536.3 -> 1536 MHz, a lower bound (the whole kernel's time over the main loop's busy share; prologue, epilogue and dispatch are outside the loop). The tightest of AMD's published bounds at this shape and harness: v7_sliceN 1567 TF at 97.96% (same README) gives 1525.5 MHz, the Gluon blog's v9 1489 TF at 98.75% (rocm.blogs.amd.com/software-tools-optimization/gluon-gemm-tutorial, 28 Apr 2026; the source until issue 24 item 6) 1438 MHz. Independent check: HipKittens' bf16 1610.5 TF at 8192^3 on MI355X needs >= 1610.5e12 / (4096 x 256) = 1535.9 MHz at any busy share <= 1; hipBLASLt, back to back in hipblaslt-bench, 1579.2 TF at 16384^3 needs >= 1506 MHz. Ceiling 256 x 4096 x 1536 MHz = 1610.6 TFLOP/s"
                } else {
                    "MAF blog part 2: MI300X bf16 max-achievable GEMM (hipBLASLt 708 TF, 94% of the 751 TF that 1207 MHz allows) at a median 1207 MHz (TIMING.md; fp16 1115 MHz)"
                },
            ),
            r(
                "MFMA-busy share of that measurement (f16/bf16)",
                self.loaded_busy[0],
                "",
                Tag::Verified,
                if g950 { GLUON_V8 } else { MAF_BLOG },
            ),
            r(
                "engine clock at full fp8 MFMA load",
                self.loaded_mhz[1],
                "MHz",
                if g950 { Tag::Derived } else { Tag::Verified },
                if g950 {
                    "HipKittens fp8 (the MFMA-busy row below gives the source): 3377.75e12 FLOP/s / (8192 FLOP/CU/clk x 256 CUs) = 1610.6 MHz at a busy share of 1, rounded up to 1611 (a lower bound: any busy share < 1 means a faster clock). AMD's own fp8 figures give lower bounds under it: the Gluon blog's a8w8 BF8 3257 TF at 99.72% MFMA efficiency 1557 MHz (the source until issue 24 item 6), the tutorial's a8w8 README (commit 064347695463acbea0df1175c2be1883e7b6bcd4) 3231 TF at 98.06% 1571 MHz and 3177 TF at 93.75% 1616 MHz; hipBLASLt 3293.2 TF at 16384^3 1570 MHz. Ceiling 256 x 8192 x 1611 MHz = 3378.5 TFLOP/s"
                } else {
                    "MAF blog part 2: MI300X fp8 max-achievable GEMM at a median 1230 MHz (TIMING.md)"
                },
            ),
            r(
                "MFMA-busy share of that measurement (fp8)",
                self.loaded_busy[1],
                "",
                Tag::Assumed,
                if g950 { HK_FP8 } else { "the fp8 MAF efficiency is not in TIMING.md: taken as bf16's 0.94" },
            ),
            r(
                "clock between idle and full MFMA load",
                1.0,
                "linear",
                Tag::Assumed,
                "clock = peak - (peak - loaded) x min(busy / loaded_busy, 1), busy = the simulated CU's mean MFMA-pipe busy share at that clock (the fixed point, found by a few runs: timing/mod.rs loaded_clock; the measured points are busy shares at the loaded clock, MAF blog '94% of the 751 TF that 1207 MHz allows'). The MAF blog says the clock is set by power and that lighter MFMA work (16x16 shapes, zero data) runs faster; the straight line between the idle (peak) and the measured full-load clock is assumed, not fitted",
            ),
            r("issue period per SIMD", 4.0, "clk", Tag::Verified, "AMD GCN architecture white paper (CU front end: each SIMD considered for issue once every 4 cycles, up to 1 instruction per type from different waves); CDNA keeps the GCN CU"),
            r("wave64 VALU occupancy", 4.0, "clk", Tag::Verified, "CDNA3 ISA §2: SIMD16 runs a wave64 in 4 passes; ARCH.md"),
            r("MFMA pass", 4.0, "clk", Tag::Verified, "LLVM SISchedule.td (one pass = 4 cycles); ISA.md §1.2-1.3 cycle table; mfma.rs Shape::passes"),
            r("MFMA result to VALU/memory read (XDL), beyond its passes", 3.0, "wait states", Tag::Verified, "LLVM GCNHazardRecognizer (XDL passes+3, SMFMA passes+2, +1 on gfx950), hazard.rs; x4 clk per wait state [D]"),
            r("MFMA issue holds the VALU port", 4.0, "clk", Tag::Derived, "AMD matrix instruction calculator: VALU co-executes 28 of 32 / 12 of 16 MFMA cycles -> 4 cycles taken from the VALU"),
            r(
                "TCP processing per vector-memory instruction, up to a dword per lane",
                self.vmem_issue_cycles as f64,
                "clk",
                if g950 { Tag::Verified } else { Tag::Assumed },
                if g950 { TCP_DOC } else { "gfx950's figure taken (the gluon tutorials' TCP section covers MI300 and MI350 alike; 64 lanes / 16 addresses per clock, GCN white paper, agrees)" },
            ),
            r(
                "TCP processing per vector-memory instruction, dwordx2..x4 per lane",
                self.vmem_wide_issue_cycles as f64,
                "clk",
                if g950 { Tag::Verified } else { Tag::Assumed },
                if g950 { TCP_DOC } else { "gfx950's figure taken (no CDNA3 measurement found)" },
            ),
            r(
                "vector-memory load bytes in flight per CU (TCP capacity)",
                self.tcp_inflight_bytes as f64,
                "B",
                Tag::Verified,
                TCP_DOC,
            ),
            r(
                "VMEM request queue per CU",
                self.vmem_queue_depth as f64,
                "instructions",
                if g950 { Tag::Verified } else { Tag::Assumed },
                if g950 { TCP_DOC } else { "gfx950's figure taken (no CDNA3 measurement found)" },
            ),
            r("vector L1 per CU", 32768.0, "B", Tag::Verified, CDNA3_WP),
            r("cache line", 128.0, "B", Tag::Verified, if g950 { ROCPROF_L1 } else { CDNA3_WP }),
            r(
                "L1 tag lookups per clock (one line each; consecutive lanes in one line share a lookup)",
                self.l1_lookups_per_clk,
                "lines/clk",
                Tag::Derived,
                "rocprofiler-compute 1600_L1_cache.yaml (gfx942 and gfx950): the vL1D peak is 128 B per clock per CU with bytes counted as cache-line lookups x 128 -> 1 lookup per clock; the coalescing metric (16 requests per wave64 instruction fully coalesced, 64 uncoalesced) says uncoalesced lanes cost a request each",
            ),
            r("L1 to core bandwidth", 128.0, "B/clk", Tag::Derived, "CDNA3 WP: request bus and fill path doubled with the 128-B line (CDNA2: 64 B/clk) -> 128"),
            r("L1 hit latency", self.l1_latency_ns, "ns", if g950 { Tag::Assumed } else { Tag::Secondary }, if g950 { same } else { "public MI300X microbenchmark notes: vL1D hit 50-82 ns; midpoint 66 [D]" }),
            r("L2 per XCD", (4u64 << 20) as f64, "B", Tag::Verified, CDNA3_WP),
            r("L2 read bandwidth per XCD", 2048.0, "B/clk", if g950 { Tag::Assumed } else { Tag::Verified }, if g950 { "CDNA3 WP 2 KB/clk per XCD (16 ch x 128 B), CDNA4 taken equal" } else { CDNA3_WP }),
            r("L2 hit latency", self.l2_latency_ns, "ns", if g950 { Tag::Assumed } else { Tag::Secondary }, if g950 { same } else { BRINGUP }),
            r("L2 to fabric per XCD", 1024.0, "B/clk", if g950 { Tag::Assumed } else { Tag::Verified }, if g950 { "CDNA3 WP 16 x 64 B, CDNA4 taken equal" } else { CDNA3_WP }),
            r("Infinity Cache (MALL)", (256u64 << 20) as f64, "B", Tag::Verified, GPU_SPECS),
            r("MALL peak bandwidth", self.mall_tbps, "TB/s", if g950 { Tag::Assumed } else { Tag::Verified }, if g950 { "CDNA3 WP 17.2 TB/s, CDNA4 taken equal" } else { CDNA3_WP }),
            r("MALL latency", self.mall_latency_ns, "ns", if g950 { Tag::Assumed } else { Tag::Secondary }, if g950 { same } else { CC_MI300X }),
            r("HBM peak bandwidth", self.hbm_tbps, "TB/s", Tag::Verified, "ARCH.md memory table (5.3 / 8.0 TB/s)"),
            r("HBM achieved fraction, streaming reads (the model's HBM rate)", self.hbm_efficiency, "", if g950 { Tag::Assumed } else { Tag::Derived }, if g950 { "gfx942's streaming-read fraction reused (no MI355X GEMV measurement found)" } else { DECODE_PR }),
            r("HBM achieved fraction, copy (read + write; not used by the model)", self.hbm_copy_efficiency, "", if g950 { Tag::Assumed } else { Tag::Derived }, if g950 { "gfx942's copy fraction reused" } else { "bring-up log rows E1/E3 (a copy benchmark: one read and one write stream): 3.8-4.1 TB/s of 5.3 -> 4.1/5.3 = 0.77. Until the decode calibration this was the model's HBM rate; it cannot reproduce the 4.87 TB/s that a read-only GEMV streams (row above)" }),
            r("HBM latency", self.hbm_latency_ns, "ns", if g950 { Tag::Assumed } else { Tag::Secondary }, if g950 { same } else { BRINGUP }),
            r("scalar load latency", self.smem_latency_ns, "ns", Tag::Assumed, "taken as the L2 hit latency (kernel arguments miss the scalar cache)"),
            r("workgroup launch", self.wg_launch_cycles as f64, "clk", Tag::Assumed, "no published CDNA figure; LLVM SISchedule has none either"),
            r("barrier release", self.barrier_cycles as f64, "clk", Tag::Assumed, "one issue period after the last arrival"),
            r("dense f16/bf16 FLOP per CU per clk", self.flops_per_cu_clk_f16, "FLOP", Tag::Verified, "CDNA3 WP table 1 (2048); ARCH.md (gfx950 4096)"),
            r("dense fp8 FLOP per CU per clk", self.flops_per_cu_clk_fp8, "FLOP", Tag::Verified, "CDNA3 WP table 1 (4096); ARCH.md (gfx950 8192)"),
        ];
        if g950 {
            // The f8f6f4 MFMAs (scaled or not) exist on gfx950 only; mfma.rs Shape::of_inst.
            const F8F6F4: &str = "TIMING.md / ARCH.md MFMA tables (LLVM SISchedule.td: 32 / 64 cycles with an fp8 or bf8 operand, half that with fp6/bf6/fp4 on both sides, fp4/fp6 at twice fp8's rate); checked with llc-22's hazard NOPs after v_mfma_scale_f32_16x16x128_f8f6f4 (12 wait states fp8 x fp8 and fp8 x fp4, 8 fp4 x fp4) and _32x32x64 (8 for fp6 x fp4): tests/hazard_rules.rs";
            rows.push(r(
                "v_mfma[_scale]_f32_16x16x128_f8f6f4 passes, an fp8/bf8 operand",
                8.0,
                "passes",
                Tag::Verified,
                F8F6F4,
            ));
            rows.push(r(
                "v_mfma[_scale]_f32_16x16x128_f8f6f4 passes, fp6/bf6/fp4 only",
                4.0,
                "passes",
                Tag::Verified,
                F8F6F4,
            ));
            rows.push(r(
                "v_mfma[_scale]_f32_32x32x64_f8f6f4 passes, an fp8/bf8 operand",
                16.0,
                "passes",
                Tag::Verified,
                F8F6F4,
            ));
            rows.push(r(
                "v_mfma[_scale]_f32_32x32x64_f8f6f4 passes, fp6/bf6/fp4 only",
                8.0,
                "passes",
                Tag::Verified,
                F8F6F4,
            ));
        }
        rows
    }
}

/// The parameter tables of both archs as Markdown (`PARAMETERS.md` holds this text; a
/// test regenerates it and fails on a difference, `BLESS=1` rewrites it).
pub fn markdown() -> String {
    let mut s = String::from(
        "# Timing-model parameters\n\nGenerated from `params.rs` (`cargo test -p gemm-emu --lib timing::params` checks it; \
         `BLESS=1` rewrites it). Tags: [V] primary source, [S] published measurement, [D] derived (arithmetic in the \
         source column), [A] assumption where no source was found (never fitted to a kernel).\n",
    );
    for arch in [Arch::Gfx942, Arch::Gfx950] {
        let p = Params::for_arch(arch);
        s.push_str(&format!(
            "\n## {} ({})\n\n| parameter | value | unit | tag | source |\n|---|---|---|---|---|\n",
            p.product,
            arch.name()
        ));
        for r in p.rows() {
            s.push_str(&format!("| {} | {} | {} | {} | {} |\n", r.name, r.value, r.unit, r.tag.mark(), r.source));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_md_is_the_generated_table() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/timing/PARAMETERS.md");
        let want = markdown();
        if std::env::var("BLESS").is_ok() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(have == want, "{} differs from params.rs; run with BLESS=1 to regenerate", path.display());
    }

    #[test]
    fn every_row_names_a_source_and_the_arches_differ_where_the_sources_say() {
        for arch in [Arch::Gfx942, Arch::Gfx950] {
            for r in Params::for_arch(arch).rows() {
                assert!(r.source.len() > 10, "{}: {} has no source", arch.name(), r.name);
            }
        }
        let (a, b) = (Params::for_arch(Arch::Gfx942), Params::for_arch(Arch::Gfx950));
        assert_eq!((a.cus(), b.cus()), (304, 256));
        assert_eq!((a.lds_banks, b.lds_banks), (32, 64));
        assert_eq!((a.lds_bytes_per_clk, b.lds_bytes_per_clk), (128, 256));
        // 2048 FLOP/CU/clk x 304 CUs x 2.1 GHz = 1307.4 TF (ARCH.md).
        assert!((a.flops_per_cu_clk_f16 * 304.0 * 2.1e9 / 1e12 - 1307.4).abs() < 0.1);
        assert!((b.flops_per_cu_clk_f16 * 256.0 * 2.4e9 / 1e12 - 2516.6).abs() < 0.1);
        // The streaming-read fraction is the published GEMV's bytes over its time (DECODE_PR).
        let gemv = (76032.0 * 13312.0 + 13312.0 + 76032.0) * 2.0 / 415.90e-6;
        assert!((gemv / (a.hbm_tbps * 1e12) - a.hbm_efficiency).abs() < 0.001, "{gemv}");
        // Loaded clocks (params rows, issue 24 item 6): f16/bf16 from the Gluon tutorial's
        // v8_sliceMN (1569 TF at 97.40% MFMA busy), fp8 from HipKittens' 16384^3 (3377.75 TF at
        // a busy share taken as 1), each the lowest clock its figure allows.
        assert!((1569e12 / (0.974 * b.flops_per_cu_clk_f16 * 256.0) / 1e6 - b.loaded_mhz[0]).abs() < 1.0);
        assert!((3377.75e12 / (b.loaded_busy[1] * b.flops_per_cu_clk_fp8 * 256.0) / 1e6 - b.loaded_mhz[1]).abs() < 1.0);
        // No published MI355X figure passes the ceiling (256 CUs x FLOP/clk x loaded clock):
        // HipKittens bf16 1610.5 TF at 8192^3 and fp8 3377.75 at 16384^3 (lab/src/peers.rs).
        let ceiling = |per_clk: f64, mhz: f64| 256.0 * per_clk * mhz * 1e6 / 1e12;
        assert!(ceiling(b.flops_per_cu_clk_f16, b.loaded_mhz[0]) >= 1610.5);
        assert!(ceiling(b.flops_per_cu_clk_fp8, b.loaded_mhz[1]) >= 3377.75);
    }

    #[test]
    fn the_clock_falls_linearly_with_matrix_load() {
        let b = Params::for_arch(Arch::Gfx950);
        assert_eq!(b.clock_under_load(0.0, false), 2400.0);
        // Half the measured busy share: half way from 2400 to 1536 MHz.
        assert!((b.clock_under_load(0.487, false) - 1968.0).abs() < 1e-9);
        assert_eq!(b.clock_under_load(1.0, false), 1536.0);
        assert_eq!(b.clock_under_load(1.0, true), 1611.0);
        assert!((b.clock_under_load(0.5, true) - 2005.5).abs() < 1e-9);
        let a = Params::for_arch(Arch::Gfx942);
        assert_eq!(a.clock_under_load(0.94, false), 1207.0);
    }
}
