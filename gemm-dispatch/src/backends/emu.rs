//! Emulated GPUs: catalogue kernels run in `gemm-emu` exactly as they would on an MI300X
//! (`emu:gfx942`) or MI355X (`emu:gfx950`), through the same kernel plan as the HIP backend,
//! with the emulator's race and hazard checkers on. Slow, and meant for that: it is how a
//! kernel is known to be right without the hardware.

use crate::backends::block_scaled::{
    check_gpu_host_call, run_block_scaled, BlockScaledBuffers, BlockScaledJob, KernelLauncher,
};
use crate::backends::{Backend, DeviceInfo, DeviceKind};
use crate::error::{Error, Result};
use crate::plan::gemm_plan::{plan_gemm, GemmPlan};
use crate::plan::kernel_plan::{KernelPlan, Launch};
use crate::plan::splitk::SplitPlan;
use gemm_core::{Arch, BlockScaledProblem, GemmProblem};
use gemm_emu::{Device, LaunchOptions, Mode, Schedule};

/// One emulated GPU of `arch`, scheduling waves by `schedule`.
pub struct EmuBackend {
    arch: Arch,
    device: Device,
    schedule: Schedule,
    name: String,
    /// The kernels of the last GEMM this backend ran, in launch order.
    last: parking_lot::Mutex<Vec<&'static str>>,
}

impl EmuBackend {
    pub fn new(arch: Arch, schedule: Schedule) -> Self {
        Self { arch, device: Device::new(arch), schedule, name: format!("emu:{arch}"), last: Default::default() }
    }

    /// From a device-list entry: `emu:gfx942`, optionally `emu:gfx942:MODE[:SEED]` with MODE one
    /// of fair, random, longest-latency, reversed.
    pub fn from_entry(entry: &str) -> Result<Self> {
        let bad = |why: String| Error::DeviceSpec { spec: entry.into(), why };
        let mut parts = entry.split(':').skip(1);
        let arch: Arch = parts
            .next()
            .ok_or_else(|| bad("expected emu:gfx942 or emu:gfx950".into()))?
            .parse()
            .map_err(|e: gemm_core::Error| bad(e.to_string()))?;
        let mode = match parts.next() {
            None => Mode::Fair,
            Some(m) => Mode::parse(m).ok_or_else(|| bad(format!("unknown schedule `{m}`")))?,
        };
        let seed = match parts.next() {
            None => 0,
            Some(s) => s.parse().map_err(|_| bad(format!("seed `{s}` is not a number")))?,
        };
        Ok(Self::new(arch, Schedule { mode, seed }))
    }

    fn err(&self, what: impl std::fmt::Display) -> Error {
        Error::Device { device: self.name.clone(), message: what.to_string() }
    }

    /// Copies `bytes` into a fresh allocation (rounded up to 16 bytes: the kernels' buffer
    /// records cover the span rounded up to a dword, and vector loads read whole dwords).
    fn upload(&self, bytes: &[u8]) -> Result<u64> {
        let ptr = self.device.alloc((bytes.len() as u64).next_multiple_of(16).max(16)).map_err(|e| self.err(e))?;
        self.device.copy_in(ptr, bytes).map_err(|e| self.err(e))?;
        Ok(ptr)
    }

    /// Runs `p` with a given kernel plan (e.g. from [`crate::plan::kernel_plan::plan_for`], to
    /// exercise one particular catalogue kernel) after validating the buffers; frees what it
    /// allocated.
    pub fn run_plan(&self, plan: &KernelPlan, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> Result<()> {
        self.execute(p, a, b, c, 0, |pa, pb, pc, _| Ok(vec![plan.launch(p, pa, pb, pc)?]))
    }

    /// Runs `p` as split-K ([`crate::plan::splitk`]): the partial kernel into a fresh workspace,
    /// then the reduction into C, in order; frees what it allocated.
    pub fn run_split(&self, plan: &SplitPlan, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> Result<()> {
        self.execute(p, a, b, c, plan.workspace_bytes(), |pa, pb, pc, ws| plan.launches(p, pa, pb, pc, ws))
    }

    /// Runs an fp8 `p` as split-K with scales ([`SplitPlan::launches_scaled`]: the scale
    /// vectors, `row` of length m and `col` of length n, to the partial kernel, the per-tensor
    /// scales folded into the reduction's alpha and beta); frees what it allocated. The
    /// vectors' lengths are checked as [`crate::Fp8Scales::check`] does.
    #[allow(clippy::too_many_arguments)]
    pub fn run_split_scaled(
        &self,
        plan: &SplitPlan,
        p: &GemmProblem,
        a: &[u8],
        b: &[u8],
        c: &mut [u8],
        scales: &crate::Fp8Scales,
        row: Option<&[f32]>,
        col: Option<&[f32]>,
    ) -> Result<()> {
        scales.check(p, row.map(<[f32]>::len), col.map(<[f32]>::len))?;
        let mut vecs = [0u64; 2];
        let mut result = Ok(());
        for (x, v) in [row, col].into_iter().enumerate() {
            if let Some(v) = v.filter(|_| result.is_ok()) {
                match self.upload(bytemuck::cast_slice(v)) {
                    Ok(ptr) => vecs[x] = ptr,
                    Err(e) => result = Err(e),
                }
            }
        }
        if result.is_ok() {
            result = self.execute(p, a, b, c, plan.workspace_bytes(), |pa, pb, pc, ws| {
                plan.launches_scaled(p, [pa, pb, pc, ws], scales, vecs[0], vecs[1])
            });
        }
        for ptr in vecs.into_iter().filter(|&v| v != 0) {
            if let Err(e) = self.device.free(ptr) {
                return result.and(Err(self.err(e)));
            }
        }
        result
    }

    /// Runs a [`GemmPlan`] (what [`Backend::gemm`] does with the dispatcher's plan).
    pub fn run_gemm_plan(&self, plan: &GemmPlan, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> Result<()> {
        self.execute(p, a, b, c, plan.workspace_bytes(), |pa, pb, pc, ws| plan.launches(p, pa, pb, pc, ws))
    }

    /// Validates the buffers, uploads A, B and C, allocates `ws_bytes` of workspace, runs the
    /// launches `launches(a, b, c, ws)` gives for those addresses in order, downloads C, and
    /// frees what it allocated (a failure to free is reported only if the GEMM succeeded).
    fn execute(
        &self,
        p: &GemmProblem,
        a: &[u8],
        b: &[u8],
        c: &mut [u8],
        ws_bytes: usize,
        launches: impl FnOnce(u64, u64, u64, u64) -> std::result::Result<Vec<Launch>, String>,
    ) -> Result<()> {
        crate::backends::validate_bytes(p, a.len(), b.len(), c.len())?;
        let mut allocs = Vec::new();
        let result = (|| {
            for bytes in [a, b, &*c] {
                allocs.push(self.upload(bytes)?);
            }
            let ws = if ws_bytes > 0 {
                let ws = self.device.alloc(ws_bytes as u64).map_err(|e| self.err(e))?;
                allocs.push(ws);
                ws
            } else {
                0
            };
            let launches = launches(allocs[0], allocs[1], allocs[2], ws).map_err(|e| self.err(e))?;
            if let Some(l) = launches.iter().find(|l| l.entry.arch != self.arch) {
                let why = format!("{} is a {} kernel", l.entry.name, l.entry.arch);
                return Err(Error::Unsupported { device: self.name.clone(), why });
            }
            self.last.lock().clear();
            for l in launches {
                self.launch(l.entry, l.grid, l.block, &l.args)?;
            }
            self.device.copy_out(allocs[2], c).map_err(|e| self.err(e))
        })();
        for ptr in allocs {
            if let Err(e) = self.device.free(ptr) {
                return result.and(Err(self.err(e)));
            }
        }
        result
    }

    /// The kernels the last GEMM on this backend launched, in order (two for split-K).
    pub fn last_kernels(&self) -> Vec<&'static str> {
        self.last.lock().clone()
    }

    /// Launches one kernel; a checker finding is an error.
    fn launch(
        &self,
        entry: &'static gemm_kernels::KernelEntry,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[u8],
    ) -> Result<()> {
        let opts = LaunchOptions { schedule: self.schedule, ..Default::default() };
        let report = self
            .device
            .launch_with(entry.code_object, entry.name, grid, block, args, &opts)
            .map_err(|e| self.err(e))?;
        self.last.lock().push(entry.name);
        if !report.reports.is_empty() {
            let findings: Vec<String> = report.reports.iter().take(5).map(|r| r.to_string()).collect();
            return Err(Error::KernelCheck {
                device: self.name.clone(),
                kernel: entry.name.into(),
                count: report.reports.len(),
                findings: findings.join("\n"),
            });
        }
        Ok(())
    }
}

impl KernelLauncher for EmuBackend {
    fn device_name(&self) -> String {
        self.name.clone()
    }
    fn arch(&self) -> Arch {
        self.arch
    }
    fn compute_units(&self) -> u32 {
        self.arch.caps().compute_units
    }
    unsafe fn launch(
        &self,
        entry: &'static gemm_kernels::KernelEntry,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[u8],
    ) -> Result<()> {
        if entry.arch != self.arch {
            let why = format!("{} is a {} kernel", entry.name, entry.arch);
            return Err(Error::Unsupported { device: self.name.clone(), why });
        }
        EmuBackend::launch(self, entry, grid, block, args)
    }
}

impl Backend for EmuBackend {
    fn info(&self) -> DeviceInfo {
        let caps = self.arch.caps();
        DeviceInfo {
            name: self.name.clone(),
            kind: DeviceKind::Emu { arch: self.arch },
            description: format!(
                "emulated {} ({}), {} scheduling, seed {}",
                caps.product,
                self.arch,
                self.schedule.mode.name(),
                self.schedule.seed
            ),
            compute_units: caps.compute_units as usize,
            memory_bytes: caps.hbm_bytes,
        }
    }

    fn gemm(&self, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> Result<()> {
        if p.m == 0 || p.n == 0 {
            return Ok(());
        }
        // The dispatcher's plan (`gemm plan` explains it) on the chip's CUs, as on a HIP GPU.
        let plan = plan_gemm(self.arch, self.arch.caps().compute_units, p)
            .map_err(|why| Error::Unsupported { device: self.name.clone(), why })?;
        match plan {
            Some(plan) => self.run_gemm_plan(&plan, p, a, b, c),
            None => Ok(()),
        }
    }

    /// Checks the call, uploads X, W, Y and both scale tensors into the emulator, runs the job
    /// through [`run_block_scaled`] (the kernel, or `NoKernel` with the reason),
    /// downloads Y on success and frees what it allocated.
    fn gemm_block_scaled(&self, p: &BlockScaledProblem, bufs: BlockScaledBuffers<'_>) -> Result<()> {
        if check_gpu_host_call(self.arch, p, &bufs)?.is_none() {
            return Ok(());
        }
        let mut allocs = Vec::new();
        let result = (|| {
            for bytes in [bufs.a, bufs.b, &*bufs.c, bufs.scale_a, bufs.scale_b] {
                allocs.push(self.upload(bytes)?);
            }
            let job = BlockScaledJob::new(p, [allocs[0], allocs[1], allocs[2], allocs[3], allocs[4]]);
            self.last.lock().clear();
            // SAFETY: the problem was validated and checked for this arch, and each allocation
            // holds a copy of the whole caller's buffer (at least the validated span, rounded up
            // to 16 bytes, 16-byte aligned), alive until the frees below, after the launch ran
            // (the emulator runs a launch to completion before returning).
            unsafe { run_block_scaled(self, &job) }?;
            self.device.copy_out(allocs[2], bufs.c).map_err(|e| self.err(e))
        })();
        for ptr in allocs {
            if let Err(e) = self.device.free(ptr) {
                return result.and(Err(self.err(e)));
            }
        }
        result
    }

    fn estimate_seconds(&self, p: &GemmProblem) -> f64 {
        // The emulator runs on the order of 10^8 lane-operations per second.
        p.flops() / 2e8 + 1e-3
    }
}
