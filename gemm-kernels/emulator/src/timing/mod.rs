//! A cycle-level timing model of gfx942 (MI300X) and gfx950 (MI355X) code objects.
//!
//! It runs the real instruction stream of any code object through the emulator's own
//! decoder and semantics (so addresses, bank conflicts and branches are real) on a timed
//! compute unit (`cu.rs`: 4 SIMDs, issue arbitration by `s_setprio` then age, the VALU, the
//! MFMA pipe and its result latency, the LDS pipe with bank conflicts, vector memory
//! through L1/L2/MALL/HBM, waits, barriers, sleeps), places the grid's workgroups over
//! XCDs and CUs as the hardware does, measures the cache hit fractions from the grid's
//! traversal (`grid.rs`), simulates the busiest CU to steady state and extrapolates to
//! its whole share. Every parameter is a row of `params.rs` with its source.
//!
//! ```no_run
//! use gemm_emu::timing::{Model, ModelOptions, Workload};
//! use gemm_emu::{Arch, Device};
//! let co = std::fs::read("gemm.co").unwrap();
//! let dev = Device::new(Arch::Gfx942);
//! # let args = vec![0u8; 56];
//! let w = Workload { code_object: &co, kernel: "gemm", grid: [64, 64, 1], block: [256, 1, 1],
//!     kernarg: &args, dynamic_lds: 0, flops: 2.0 * 8192f64.powi(3) };
//! let p = Model::new(Arch::Gfx942).predict(dev.memory(), &w, &ModelOptions::default()).unwrap();
//! println!("{p}");
//! ```

pub mod alternation;
pub mod cu;
pub mod grid;
pub mod lds_banks;
pub mod memsys;
pub mod params;
pub mod setup;
pub mod trace;

pub use cu::{Reason, Stalls, WaveTiming, REASONS};
pub use memsys::HitRates;
pub use params::{Params, Row, Tag};

use crate::error::{EmuError, Fault};
use crate::memory::DeviceMemory;
use crate::mfma::Shape;
use crate::program::Program;
use crate::Arch;
use gemm_codeobject::CodeObject;
use std::fmt;

/// Errors of a prediction.
#[derive(Debug, thiserror::Error)]
pub enum TimingError {
    #[error(transparent)]
    Emu(#[from] EmuError),
    #[error("kernel fault while timing: {0}")]
    Fault(Box<Fault>),
    #[error("invalid workload: {0}")]
    Invalid(String),
    /// No workgroup of the kernel fits on a CU: its waves, spread over the SIMDs, need more
    /// registers than a SIMD's file holds. The hardware cannot launch it, so there is no
    /// time to predict.
    #[error(
        "cannot launch: {waves} waves put {per_simd} on each SIMD, {vgprs} VGPR+AGPR per lane each ({} in all) exceed the SIMD's {file} per lane; the workgroup cannot be resident",
        per_simd * vgprs
    )]
    NotResident { waves: u32, per_simd: u32, vgprs: u32, file: u32 },
}

impl From<Fault> for TimingError {
    fn from(f: Fault) -> Self {
        TimingError::Fault(Box::new(f))
    }
}

/// A kernel launch to time: the same facts `Device::launch_with` takes, plus the work.
#[derive(Clone, Debug)]
pub struct Workload<'a> {
    pub code_object: &'a [u8],
    pub kernel: &'a str,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub kernarg: &'a [u8],
    pub dynamic_lds: u32,
    /// Floating-point operations the launch performs (2·M·N·K for a GEMM).
    pub flops: f64,
}

/// The state of the Infinity Cache (MALL) when the launch starts.
///
/// A benchmark that repeats one launch may find its operands still in the 256 MiB MALL
/// from the previous repetition (warm); a first launch, or one whose operands exceed the
/// MALL, reads them from HBM (cold). Published figures differ in this, and each
/// calibration point says which state it was measured in (calibration manifests, `cache`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheState {
    /// L2 misses go to HBM, except lines another resident workgroup requested first in
    /// the same launch (the footprint pass's MALL sharing, `grid.rs`).
    #[default]
    Cold,
    /// The launch's operands were all touched by the previous launch: if they fit in the
    /// MALL (`ModelOptions::operand_bytes` at most its capacity), every L2 miss is a MALL
    /// hit; if they do not, the MALL holds none of a streamed matrix when it is read again
    /// in the same order (LRU), and the launch is cold.
    Warm,
}

impl CacheState {
    pub fn name(self) -> &'static str {
        match self {
            CacheState::Cold => "cold",
            CacheState::Warm => "warm",
        }
    }
}

impl std::str::FromStr for CacheState {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "cold" => Ok(CacheState::Cold),
            "warm" => Ok(CacheState::Warm),
            _ => Err(format!("cache state `{s}`: expected warm or cold")),
        }
    }
}

/// How to predict.
#[derive(Clone, Debug)]
pub struct ModelOptions {
    /// Skip MFMA arithmetic (default: yes; addresses and control flow are kept).
    pub timing_only: bool,
    /// Engine clock (default: the arch's clock under the kernel's own matrix load,
    /// `Params::clock_under_load`).
    pub clock_mhz: Option<f64>,
    /// Also predict at the peak clock.
    pub at_peak_clock: bool,
    /// Record a per-wave trace of the simulated CU (at most this many spans).
    pub trace_spans: usize,
    /// Rounds of workgroups simulated before extrapolating.
    pub max_rounds: usize,
    /// Bytes of vector loads each sampled workgroup runs in the cache-footprint pass
    /// (enough for several K steps of a GEMM tile, past any prologue).
    pub prefix_bytes: u64,
    /// Workgroups the footprint pass may run.
    pub max_sampled_wgs: usize,
    /// Fixed hit fractions instead of the footprint pass.
    pub hit_rates: Option<HitRates>,
    /// SIMDs of the CU the waves spread over (default 4).
    pub simds: Option<usize>,
    /// Workgroups resident per CU (default: the occupancy).
    pub resident: Option<usize>,
    /// Per-wave instruction budget.
    pub max_instructions_per_wave: u64,
    /// The Infinity Cache at launch (default cold).
    pub cache: CacheState,
    /// Bytes of the launch's operands (A, B and C), which [`CacheState::Warm`] compares
    /// with the MALL's capacity.
    pub operand_bytes: u64,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            timing_only: true,
            clock_mhz: None,
            at_peak_clock: true,
            trace_spans: 0,
            max_rounds: 3,
            prefix_bytes: 128 << 10,
            max_sampled_wgs: 640,
            hit_rates: None,
            simds: None,
            resident: None,
            max_instructions_per_wave: 50_000_000,
            cache: CacheState::Cold,
            operand_bytes: 0,
        }
    }
}

/// Occupancy of one CU and what limits it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occupancy {
    pub workgroups: u32,
    pub waves_per_simd: u32,
    pub limited_by: &'static str,
}

/// Waves per SIMD and workgroups per CU from VGPRs, LDS, workgroup size and the wave
/// slots (params.rs rows "VGPRs per lane", "max waves per SIMD", "LDS per CU"). A
/// workgroup whose waves need more registers than the SIMDs hold (e.g. 8 waves of more
/// than 256 VGPR+AGPR: 2 per SIMD) cannot be resident: [`TimingError::NotResident`].
pub fn occupancy(p: &Params, vgprs: u32, lds_bytes: u32, waves_per_wg: u32) -> Result<Occupancy, TimingError> {
    let alloc = vgprs.max(1).div_ceil(p.vgpr_granule) * p.vgpr_granule;
    let by_vgpr = (p.vgprs_per_lane / alloc).min(p.max_waves_per_simd);
    let slots = by_vgpr * p.simds_per_cu;
    let by_waves = slots / waves_per_wg.max(1);
    if by_waves == 0 {
        return Err(TimingError::NotResident {
            waves: waves_per_wg,
            per_simd: waves_per_wg.div_ceil(p.simds_per_cu),
            vgprs: alloc,
            file: p.vgprs_per_lane,
        });
    }
    let by_lds = p.lds_bytes_per_cu.checked_div(lds_bytes).unwrap_or(u32::MAX);
    let (wgs, why) = if by_lds < by_waves {
        (by_lds, "LDS")
    } else if by_vgpr < p.max_waves_per_simd {
        (by_waves, "VGPRs")
    } else {
        (by_waves, "wave slots")
    };
    // `predict` refuses LDS beyond the CU's before it gets here, so `wgs` >= 1.
    let wgs = wgs.max(1);
    Ok(Occupancy { workgroups: wgs, waves_per_simd: (wgs * waves_per_wg).div_ceil(p.simds_per_cu), limited_by: why })
}

fn self_waves(block: [u32; 3]) -> u32 {
    (block[0] * block[1] * block[2]).div_ceil(64)
}

/// What the model predicts for one launch.
#[derive(Clone, Debug)]
pub struct Prediction {
    /// The Infinity Cache state the prediction assumed (warm only where the operands fit).
    pub cache: CacheState,
    pub arch: Arch,
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub flops: f64,
    pub mhz: f64,
    pub cycles: f64,
    pub seconds: f64,
    pub tflops: f64,
    /// Percent of the arch's dense peak for the kernel's MFMA input type at the peak clock.
    pub pct_of_peak: f64,
    pub peak_tflops: f64,
    /// The same launch at the peak clock (cycles differ: latencies are in nanoseconds).
    pub at_peak: Option<(f64, f64, f64)>,
    pub occupancy: Occupancy,
    pub hits: HitRates,
    pub footprint: Option<grid::Footprint>,
    pub cu_wgs: usize,
    pub simulated_wgs: usize,
    pub extrapolated_wgs: usize,
    pub tail_wgs: usize,
    pub period: f64,
    /// Of the simulated part: MFMA-pipe busy fraction per SIMD, stalls, bytes per clock.
    pub mfma_busy: Vec<f64>,
    pub stalls: Stalls,
    pub lds_busy: f64,
    pub lds_conflict_cycles: u64,
    pub l2_bytes_per_clk: f64,
    pub hbm_bytes_per_clk: f64,
    pub mall_bytes_per_clk: f64,
    pub limiter: String,
    pub sim_cycles: u64,
    pub waves: Vec<WaveTiming>,
    pub spans: Vec<cu::Span>,
}

/// The timing model of one architecture.
#[derive(Clone, Debug)]
pub struct Model {
    params: Params,
}

impl Model {
    pub fn new(arch: Arch) -> Model {
        Model { params: Params::for_arch(arch) }
    }
    pub fn with_params(params: Params) -> Model {
        Model { params }
    }
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Predicts `w`'s time; its buffers must already be in `mem` (the kernel really runs,
    /// timing-only: stores land, MFMA results do not unless `timing_only` is off).
    pub fn predict(&self, mem: &DeviceMemory, w: &Workload, o: &ModelOptions) -> Result<Prediction, TimingError> {
        let p = &self.params;
        let co = CodeObject::parse(w.code_object).map_err(EmuError::from)?;
        if let Some(a) = co.arch() {
            if a.name() != p.arch.name() {
                return Err(EmuError::ArchMismatch { found: a.name().into(), device: p.arch.name().into() }.into());
            }
        }
        let k = co.kernel(w.kernel).ok_or_else(|| EmuError::NoKernel(w.kernel.to_string()))?;
        let kd = &k.descriptor;
        let threads = u64::from(w.block[0]) * u64::from(w.block[1]) * u64::from(w.block[2]);
        if threads == 0 || threads > 1024 || w.grid.contains(&0) {
            return Err(TimingError::Invalid(format!("grid {:?} of workgroups {:?}", w.grid, w.block)));
        }
        let lds_bytes = kd.group_segment_fixed_size.saturating_add(w.dynamic_lds);
        if lds_bytes > p.lds_bytes_per_cu {
            return Err(TimingError::Invalid(format!("{lds_bytes} bytes of LDS exceed {}", p.lds_bytes_per_cu)));
        }
        if kd.uses_dynamic_stack() {
            return Err(TimingError::Invalid("kernels with a dynamic stack are not modelled".into()));
        }
        let prog = Program::new(&k.code, p.arch);
        let (ka_ptr, pkt_ptr) = setup::kernarg_and_packet(
            mem,
            k.metadata.as_ref(),
            kd,
            w.grid,
            w.block,
            w.kernarg,
            w.dynamic_lds,
            lds_bytes,
        )?;
        let result = self.predict_inner(mem, w, o, &prog, kd, ka_ptr, pkt_ptr, lds_bytes);
        let _ = mem.free(ka_ptr);
        let _ = mem.free(pkt_ptr);
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn predict_inner(
        &self,
        mem: &DeviceMemory,
        w: &Workload,
        o: &ModelOptions,
        prog: &Program,
        kd: &gemm_codeobject::KernelDescriptor,
        ka_ptr: u64,
        pkt_ptr: u64,
        lds_bytes: u32,
    ) -> Result<Prediction, TimingError> {
        let p = &self.params;
        let nw = self_waves(w.block);
        let occ = occupancy(p, kd.allocated_vgprs(), lds_bytes, nw)?;
        let resident = o.resident.unwrap_or(occ.workgroups as usize).max(1);
        let lane_bytes = kd.private_segment_fixed_size.div_ceil(4) * 4;
        let scratch = if lane_bytes > 0 {
            let slot_bytes = u64::from(nw) * 64 * u64::from(lane_bytes);
            let region = mem.alloc(slot_bytes * resident as u64).map_err(EmuError::from)?;
            Some((region, slot_bytes, lane_bytes))
        } else {
            None
        };
        let result = self.predict_timed(mem, w, o, prog, kd, ka_ptr, pkt_ptr, lds_bytes, occ, resident, scratch);
        if let Some((region, _, _)) = scratch {
            let _ = mem.free(region);
        }
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn predict_timed(
        &self,
        mem: &DeviceMemory,
        w: &Workload,
        o: &ModelOptions,
        prog: &Program,
        kd: &gemm_codeobject::KernelDescriptor,
        ka_ptr: u64,
        pkt_ptr: u64,
        lds_bytes: u32,
        occ: Occupancy,
        resident: usize,
        scratch: Option<(u64, u64, u32)>,
    ) -> Result<Prediction, TimingError> {
        let p = &self.params;
        let setup = setup::KernelSetup {
            arch: p.arch,
            prog,
            kd,
            kernel: w.kernel,
            grid: w.grid,
            block: w.block,
            ka_ptr,
            pkt_ptr,
            lds_bytes,
            view: mem.view().map_err(EmuError::from)?,
            max_instructions: o.max_instructions_per_wave,
            scratch,
        };
        let total = setup.total_wgs();
        let (hits, footprint) = match o.hit_rates {
            Some(h) => (h, None),
            None => {
                let f = grid::footprint(&setup, p, resident, o.prefix_bytes, o.max_sampled_wgs)?;
                (f.hits, Some(f))
            }
        };
        // A warm Infinity Cache that holds every operand serves every L2 miss.
        let warm = o.cache == CacheState::Warm && o.operand_bytes > 0 && o.operand_bytes <= p.mall_bytes;
        let hits = if warm { HitRates { mall: 1.0, ..hits } } else { hits };
        // The simulated CU's share of its XCD's L2 and of the chip's MALL and HBM: the shared
        // levels serve whoever asks, so a CU that runs `n0` of the grid's workgroups (CU 0 of
        // XCD 0, the busiest: `grid.rs` placement) gets `n0 / total` of the chip's bandwidth
        // (and `n0 / xcd_wgs` of its XCD's) over the kernel. A fixed `1 / busy CUs` would not
        // hand the bandwidth of CUs that finished their one workgroup to the ones running two:
        // 512 decode workgroups on 304 CUs (two on CU 0) streamed 201 MB at 0.84 of the HBM
        // rate the balanced 256 did. (Grids of whole rounds, every calibration kernel's, get
        // `1 / busy CUs` as before.)
        let xcd_wgs = total.div_ceil(u64::from(p.xcds));
        let n0 = xcd_wgs.div_ceil(u64::from(p.cus_per_xcd)).max(1) as f64;
        let busy_xcd = (xcd_wgs as f64 / n0).clamp(1.0, f64::from(p.cus_per_xcd));
        let busy_chip = (total as f64 / n0).clamp(1.0, f64::from(p.cus()));
        // The arch's dense peak for the kernel's MFMA input type.
        let fp8 = prog.insts.iter().any(|(_, i)| {
            Shape::of(i.op).is_some_and(|s| matches!(s.a, crate::mfma::Elem::Fp8 | crate::mfma::Elem::Bf8))
        });
        let cfg_at = |mhz: f64| cu::CuConfig {
            mhz,
            simds: o.simds.unwrap_or(p.simds_per_cu as usize),
            resident,
            hits,
            share_xcd: busy_xcd,
            share_chip: busy_chip,
            timing_only: o.timing_only,
            trace_limit: o.trace_spans,
        };
        // The clock: the one asked for, else the clock under the kernel's own matrix load
        // (params.rs `clock_under_load`) at that clock: the fixed point of [`loaded_clock`].
        let (mhz, gt, peak_run) = match o.clock_mhz {
            Some(mhz) => (mhz, grid::grid_time(&setup, p, &cfg_at(mhz), o.max_rounds)?, None),
            None => loaded_clock(p, fp8, |mhz| grid::grid_time(&setup, p, &cfg_at(mhz), o.max_rounds))?,
        };
        let at_peak = if o.at_peak_clock && (p.peak_mhz - mhz).abs() > 0.5 {
            let g2 = match peak_run {
                Some(g) => g,
                None => {
                    grid::grid_time(&setup, p, &cu::CuConfig { trace_limit: 0, ..cfg_at(p.peak_mhz) }, o.max_rounds)?
                }
            };
            let s = g2.cycles / (p.peak_mhz * 1e6);
            Some((g2.cycles, s, w.flops / s / 1e12))
        } else {
            None
        };
        let seconds = gt.cycles / (mhz * 1e6);
        let tflops = w.flops / seconds / 1e12;
        let per_clk = if fp8 { p.flops_per_cu_clk_fp8 } else { p.flops_per_cu_clk_f16 };
        let peak_tflops = per_clk * f64::from(p.cus()) * p.peak_mhz * 1e6 / 1e12;
        let run = &gt.run;
        let span = run.end.max(1) as f64;
        let mfma_busy: Vec<f64> = run.mfma_busy.iter().map(|&b| b as f64 / span).collect();
        let lds_busy = run.lds_busy as f64 / span;
        let l2_bpc = (run.traffic.l2_bytes + run.traffic.mall_bytes + run.traffic.hbm_bytes) / span;
        let hbm_bpc = (run.traffic.hbm_bytes + run.traffic.store_bytes) / span;
        let mall_bpc = run.traffic.mall_bytes / span;
        let hbm_share = p.hbm_tbps * p.hbm_efficiency * 1e12 / (mhz * 1e6) / busy_chip;
        let l2_share = p.l2_bytes_per_clk_per_xcd / busy_xcd;
        let fabric_share = p.fabric_bytes_per_clk_per_xcd / busy_xcd;
        let mfma_max = mfma_busy.iter().copied().fold(0.0, f64::max);
        let fabric_bpc = (run.traffic.mall_bytes + run.traffic.hbm_bytes) / span;
        let mut limits = [
            ("MFMA pipe", mfma_max),
            ("LDS pipe", lds_busy),
            ("HBM bandwidth", hbm_bpc / hbm_share),
            ("L2 bandwidth", l2_bpc / l2_share),
            ("L2-fabric bandwidth", fabric_bpc / fabric_share),
        ];
        limits.sort_by(|a, b| b.1.total_cmp(&a.1));
        let limiter = if limits[0].1 >= 0.85 {
            format!("{} ({:.0}% busy)", limits[0].0, limits[0].1 * 100.0)
        } else {
            let top = REASONS
                .iter()
                .filter(|r| **r != Reason::Issue)
                .max_by_key(|r| run.stalls.get(**r))
                .copied()
                .unwrap_or(Reason::Issue);
            format!(
                "latency: no unit saturated (busiest {} at {:.0}%); most wave-cycles lost to {}",
                limits[0].0,
                limits[0].1 * 100.0,
                top.name()
            )
        };
        Ok(Prediction {
            cache: if warm { CacheState::Warm } else { CacheState::Cold },
            arch: p.arch,
            kernel: w.kernel.to_string(),
            grid: w.grid,
            block: w.block,
            flops: w.flops,
            mhz,
            cycles: gt.cycles,
            seconds,
            tflops,
            pct_of_peak: 100.0 * tflops / peak_tflops,
            peak_tflops,
            at_peak,
            occupancy: occ,
            hits,
            footprint,
            cu_wgs: gt.cu_wgs,
            simulated_wgs: gt.simulated_wgs,
            extrapolated_wgs: gt.extrapolated_wgs,
            tail_wgs: gt.tail_wgs,
            period: gt.period,
            mfma_busy,
            stalls: run.stalls,
            lds_busy,
            lds_conflict_cycles: run.lds_conflict_cycles,
            l2_bytes_per_clk: l2_bpc,
            hbm_bytes_per_clk: hbm_bpc,
            mall_bytes_per_clk: mall_bpc,
            limiter,
            sim_cycles: run.end,
            waves: run.waves.clone(),
            spans: run.spans.clone(),
        })
    }
}

/// The mean MFMA-pipe busy share of a simulated CU's run.
fn run_busy(g: &grid::GridTime) -> f64 {
    let span = g.run.end.max(1) as f64 * g.run.mfma_busy.len().max(1) as f64;
    g.run.mfma_busy.iter().sum::<u64>() as f64 / span
}

/// The model's rules that no parameter row holds, by version: a table of predictions made
/// under other rules is stale (`gemm-lab` `characterise::model_fingerprint`).
pub const RULES: &str =
    "clock: fixed point of the loaded-clock line within 4 MHz; footprint: one set of requested lines per CU";

/// How close the clock a run was simulated at must be to the clock its own load sets (MHz).
pub const CLOCK_TOLERANCE_MHZ: f64 = 4.0;
/// Runs beyond the first two that [`loaded_clock`] may make to find the fixed point.
const CLOCK_STEPS: usize = 4;

/// The clock a kernel runs at and its run there: the fixed point `f = L(busy(f))` of the
/// loaded-clock line `L` (params.rs `clock_under_load`) and the kernel's MFMA-busy share
/// *at the clock it runs at*, with `time_at(mhz)` simulating the grid at `mhz`. Also the
/// run at the peak clock where it is not the result.
///
/// Why the fixed point: the line's measured points are busy shares at the loaded clock
/// (MAF blog: hipBLASLt 708 TFLOP/s is "94% of the 751 TF that 1207 MHz allows"; the Gluon
/// tutorial's MFMA efficiency was measured on the running chip), and power follows the
/// activity at the clock the chip runs at. Taking the busy share of a run at the peak clock
/// instead rewarded memory stalls: memory latency in nanoseconds costs more cycles at a
/// higher clock, so a kernel that waits on memory looked lightly loaded at the peak and was
/// given a clock its load at that clock does not allow (gfx942 bf16 256x256x32 ping-pong,
/// row-major `A B` at 8192^3: 68% busy at 2100 MHz gave 1456 MHz, where it is 86% busy,
/// a load the line sets at 1283 MHz; the same tile with both operands K-contiguous, 95%
/// busy at the peak, ran at 1223 MHz and was predicted 7% slower although it takes 10%
/// fewer cycles).
///
/// `h(f) = L(busy(f)) - f` is at most 0 at the peak (0: an idle kernel keeps it) and at least
/// 0 at the full-load clock (`L` never goes below it), so a root lies between; the busy share
/// rises as the clock falls (a stall of fixed nanoseconds is fewer cycles), so `L(busy(f))`
/// rises with `f`, slower than `f` itself for every kernel seen, and the root is one. From the
/// peak run and the run at `L(busy(peak))`, secant steps on `h` (clamped to that bracket) find
/// it; the result is the last run, whose
/// clock is within [`CLOCK_TOLERANCE_MHZ`] of the one its load sets. A kernel whose load
/// does not move with the clock (compute-bound at full load, or nearly idle) stops after the
/// second run, as before.
#[allow(clippy::type_complexity)]
fn loaded_clock(
    p: &params::Params,
    fp8: bool,
    mut time_at: impl FnMut(f64) -> Result<grid::GridTime, Fault>,
) -> Result<(f64, grid::GridTime, Option<grid::GridTime>), Fault> {
    let peak = time_at(p.peak_mhz)?;
    let first = p.clock_under_load(run_busy(&peak), fp8);
    if (p.peak_mhz - first).abs() <= 0.5 {
        return Ok((p.peak_mhz, peak, None));
    }
    let low = p.clock_under_load(1.0, fp8);
    let h = |f: f64, g: &grid::GridTime| p.clock_under_load(run_busy(g), fp8) - f;
    // The bracket [lo, hi] of the root: h(hi) <= 0 <= h(lo).
    let (mut lo, mut hi) = (low, p.peak_mhz);
    let (mut fa, mut ha) = (p.peak_mhz, h(p.peak_mhz, &peak));
    let mut f = first;
    let mut g = time_at(f)?;
    for _ in 0..CLOCK_STEPS {
        let hf = h(f, &g);
        if hf.abs() <= CLOCK_TOLERANCE_MHZ {
            break;
        }
        if hf > 0.0 {
            lo = f;
        } else {
            hi = f;
        }
        let secant = if (hf - ha).abs() > 1e-9 { f - hf * (f - fa) / (hf - ha) } else { f + hf };
        let next = if secant > lo && secant < hi { secant } else { 0.5 * (lo + hi) };
        (fa, ha) = (f, hf);
        f = next;
        g = time_at(f)?;
    }
    Ok((f, g, Some(peak)))
}

impl fmt::Display for Prediction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = Params::for_arch(self.arch);
        writeln!(
            f,
            "{} on {} ({}), grid {:?} x block {:?}: {:.1} us, {:.1} TFLOP/s at {:.0} MHz ({:.1}% of the {:.1} TFLOP/s peak)",
            self.kernel,
            p.product,
            self.arch,
            self.grid,
            self.block,
            self.seconds * 1e6,
            self.tflops,
            self.mhz,
            self.pct_of_peak,
            self.peak_tflops
        )?;
        if let Some((_, s, tf)) = self.at_peak {
            writeln!(f, "  at the peak clock {:.0} MHz: {:.1} us, {:.1} TFLOP/s", p.peak_mhz, s * 1e6, tf)?;
        }
        writeln!(
            f,
            "  occupancy: {} workgroup(s) per CU, {} wave(s) per SIMD (limited by {})",
            self.occupancy.workgroups, self.occupancy.waves_per_simd, self.occupancy.limited_by
        )?;
        writeln!(
            f,
            "  simulated: CU 0 of XCD 0 (the busiest), {} of its {} workgroups cycle by cycle ({} clk); extrapolated: {} workgroups at {:.0} clk each in steady state; last partial round: {} workgroup(s) simulated alone",
            self.simulated_wgs - self.tail_wgs,
            self.cu_wgs,
            self.sim_cycles,
            self.extrapolated_wgs,
            self.period,
            self.tail_wgs
        )?;
        match &self.footprint {
            Some(fp) => writeln!(
                f,
                "  caches (from the first round's addresses, {} workgroups x {} KiB of loads: {} L1-miss line requests, {} distinct per XCD, {} distinct): L2 hit {:.1}% of L1 misses, MALL hit {:.1}% of L2 misses",
                fp.sampled_wgs,
                fp.prefix_bytes >> 10,
                fp.requests,
                fp.per_xcd_unique,
                fp.all_unique,
                self.hits.l2 * 100.0,
                self.hits.mall * 100.0
            )?,
            None => writeln!(f, "  caches (given): L2 hit {:.1}%, MALL hit {:.1}%", self.hits.l2 * 100.0, self.hits.mall * 100.0)?,
        }
        if self.cache == CacheState::Warm {
            writeln!(f, "  Infinity Cache warm: the operands fit in it and every L2 miss is a MALL hit")?;
        }
        let busy: Vec<String> = self.mfma_busy.iter().map(|b| format!("{:.0}%", b * 100.0)).collect();
        writeln!(f, "  MFMA busy per SIMD: {}; LDS pipe busy {:.0}%", busy.join(" "), self.lds_busy * 100.0)?;
        let stalls: Vec<String> = REASONS
            .iter()
            .filter(|r| **r != Reason::Issue)
            .map(|r| format!("{} {}", r.name(), self.stalls.get(*r)))
            .collect();
        writeln!(
            f,
            "  wave-cycles not issuing: {}; LDS bank-conflict cycles {}",
            stalls.join(", "),
            self.lds_conflict_cycles
        )?;
        writeln!(
            f,
            "  per CU: {:.1} B/clk from L2 (incl. MALL/HBM fills), {:.1} B/clk from MALL, {:.1} B/clk HBM (reads+writes)",
            self.l2_bytes_per_clk, self.mall_bytes_per_clk, self.hbm_bytes_per_clk
        )?;
        writeln!(f, "  binding limit: {}", self.limiter)
    }
}

#[cfg(test)]
mod occupancy_tests {
    use super::*;

    /// 8 waves of 288 registers need 2 x 288 per SIMD lane, more than its 512: not resident,
    /// refused with a typed error that says it cannot launch.
    #[test]
    fn a_workgroup_that_cannot_be_resident_is_refused() {
        let p = Params::for_arch(Arch::Gfx950);
        let e = occupancy(&p, 288, 65536, 8).unwrap_err();
        assert!(matches!(e, TimingError::NotResident { waves: 8, per_simd: 2, vgprs: 288, file: 512 }), "{e:?}");
        assert!(e.to_string().starts_with("cannot launch"), "{e}");
        let ok = occupancy(&p, 256, 65536, 8).unwrap();
        assert_eq!((ok.workgroups, ok.waves_per_simd, ok.limited_by), (1, 2, "VGPRs"));
        // 4 waves of 512 registers: one per SIMD, resident.
        assert_eq!(occupancy(&p, 512, 0, 4).unwrap().workgroups, 1);
        assert!(occupancy(&p, 520, 0, 4).is_err());
    }
}

#[cfg(test)]
mod loaded_clock_tests {
    use super::*;

    /// A run whose SIMDs are busy `mfma` cycles each and which ends after `mfma` cycles plus
    /// `stall_ns` nanoseconds of memory waits at `mhz`.
    fn run(mfma: u64, stall_ns: f64, mhz: f64) -> grid::GridTime {
        let end = mfma + (stall_ns * mhz / 1000.0) as u64;
        grid::GridTime { run: cu::CuRun { end, mfma_busy: vec![mfma; 4], ..Default::default() }, ..Default::default() }
    }

    #[test]
    fn the_clock_is_set_by_the_load_at_the_clock_the_kernel_runs_at() {
        let p = params::Params::for_arch(Arch::Gfx942);
        // Waits on memory: 68% busy at the peak, busier at any lower clock.
        let mut clocks = vec![];
        let (f, g, peak) = loaded_clock(&p, false, |mhz| {
            clocks.push(mhz);
            Ok(run(100_000, 22_400.0, mhz))
        })
        .unwrap();
        let set_by_its_load = p.clock_under_load(run_busy(&g), false);
        assert!(
            (set_by_its_load - f).abs() <= CLOCK_TOLERANCE_MHZ,
            "{f} MHz runs at a load that sets {set_by_its_load}"
        );
        // The busy share at the peak alone would have given a faster clock.
        let first = p.clock_under_load(run_busy(peak.as_ref().unwrap()), false);
        assert!(f < first - 50.0, "{f} against {first}");
        assert!(clocks.len() <= 2 + CLOCK_STEPS, "{clocks:?}");
        // Fully busy at any clock: the loaded clock after two runs, as before the fixed point.
        let mut n = 0;
        let (f, _, _) = loaded_clock(&p, false, |mhz| {
            n += 1;
            Ok(run(100_000, 0.0, mhz))
        })
        .unwrap();
        assert_eq!((f, n), (p.loaded_mhz[0], 2));
        // Idle matrix pipes: the peak, one run.
        let mut n = 0;
        let (f, _, peak) = loaded_clock(&p, false, |mhz| {
            n += 1;
            Ok(run(0, 1000.0, mhz))
        })
        .unwrap();
        assert_eq!((f, n, peak.is_none()), (p.peak_mhz, 1, true));
    }

    /// The rules string is the table's record of how the clock is found: a tolerance changed
    /// without it would leave a table of other predictions looking current.
    #[test]
    fn the_rules_name_the_clock_tolerance() {
        assert!(RULES.contains(&format!("within {CLOCK_TOLERANCE_MHZ} MHz")), "{RULES}");
    }
}
