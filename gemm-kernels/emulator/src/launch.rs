//! The device and kernel launch: initial wave state from the kernel descriptor
//! (AMDGPUUsage "Initial Kernel Execution State", ISA.md §5.3), the kernarg segment with
//! the hidden arguments HIP would fill, the private segment (scratch) of kernels that
//! have one, workgroups in parallel on host threads.

use crate::error::{EmuError, Fault};
use crate::memory::DeviceMemory;
use crate::program::Program;
use crate::race::RaceDetector;
use crate::report::Report;
use crate::scheduler::{rng_for, Env, WaveSched, Workgroup};
use crate::wave::{Scratch, Wave, FLAT_SCRATCH_LO, LANES};
use crate::{InstCounts, Schedule};
use gemm_codeobject::{CodeObject, KernelDescriptor, KernelMetadata, ValueKind};
use gemm_isa::Arch;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// LDS bytes per workgroup (ISA.md §3.4).
pub fn lds_limit(arch: Arch) -> u32 {
    match arch {
        Arch::Gfx942 => 65536,
        Arch::Gfx950 => 163840,
    }
}

/// Launch options.
#[derive(Clone, Debug)]
pub struct LaunchOptions {
    pub schedule: Schedule,
    /// Host threads for workgroups (0: available parallelism).
    pub threads: usize,
    /// Run the LDS race detector.
    pub race_detector: bool,
    /// Bytes of dynamic LDS on top of the kernel's static size.
    pub dynamic_lds: u32,
    /// Per-wave instruction budget (an endless loop becomes a fault).
    pub max_instructions_per_wave: u64,
    /// Called with (workgroups done, total) as the launch progresses.
    pub progress: Option<fn(usize, usize)>,
}

impl Default for LaunchOptions {
    fn default() -> Self {
        LaunchOptions {
            schedule: Schedule::default(),
            threads: 0,
            race_detector: true,
            dynamic_lds: 0,
            max_instructions_per_wave: 50_000_000,
            progress: None,
        }
    }
}

/// What a launch did.
#[derive(Clone, Debug, Default)]
pub struct LaunchReport {
    pub kernel: String,
    pub workgroups: usize,
    pub waves: usize,
    /// Checker findings, in workgroup order.
    pub reports: Vec<Report>,
    pub counts: InstCounts,
    /// Rough cycle estimate: the longest workgroup's scheduler clock.
    pub cycles: u64,
}

impl LaunchReport {
    /// Findings of one checker.
    pub fn by_checker(&self, c: crate::Checker) -> Vec<&Report> {
        self.reports.iter().filter(|r| r.checker == c).collect()
    }
}

impl fmt::Display for LaunchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "kernel {}: {} workgroups, {} waves, ~{} cycles",
            self.kernel, self.workgroups, self.waves, self.cycles
        )?;
        writeln!(f, "instructions: {}", self.counts)?;
        if self.reports.is_empty() {
            writeln!(f, "checkers: no findings")?;
        }
        for r in &self.reports {
            writeln!(f, "{r}")?;
        }
        Ok(())
    }
}

/// An emulated GPU: memory plus launches. Launches are synchronous.
#[derive(Debug)]
pub struct Device {
    arch: Arch,
    mem: DeviceMemory,
}

impl Device {
    pub fn new(arch: Arch) -> Device {
        Device { arch, mem: DeviceMemory::new() }
    }
    /// A device whose allocations start at `base` (see [`DeviceMemory::with_base`]).
    pub fn with_base(arch: Arch, base: u64) -> Device {
        Device { arch, mem: DeviceMemory::with_base(base) }
    }
    pub fn arch(&self) -> Arch {
        self.arch
    }
    /// The device's memory (the timing model runs launches against it).
    pub fn memory(&self) -> &DeviceMemory {
        &self.mem
    }
    /// Allocates zeroed device memory; returns its device address.
    pub fn alloc(&self, bytes: u64) -> Result<u64, EmuError> {
        Ok(self.mem.alloc(bytes)?)
    }
    pub fn free(&self, ptr: u64) -> Result<(), EmuError> {
        Ok(self.mem.free(ptr)?)
    }
    pub fn copy_in(&self, ptr: u64, bytes: &[u8]) -> Result<(), EmuError> {
        Ok(self.mem.write(ptr, bytes)?)
    }
    pub fn copy_out(&self, ptr: u64, out: &mut [u8]) -> Result<(), EmuError> {
        Ok(self.mem.read(ptr, out)?)
    }
    /// Launches complete before `launch` returns; kept for the dispatch layer's API.
    pub fn synchronize(&self) -> Result<(), EmuError> {
        Ok(())
    }

    /// Runs `kernel` of `code_object` on a grid of `grid` workgroups of `block` work-items.
    pub fn launch(
        &self,
        code_object: &[u8],
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        kernarg: &[u8],
    ) -> Result<LaunchReport, EmuError> {
        self.launch_with(code_object, kernel, grid, block, kernarg, &LaunchOptions::default())
    }

    pub fn launch_with(
        &self,
        code_object: &[u8],
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        kernarg: &[u8],
        opts: &LaunchOptions,
    ) -> Result<LaunchReport, EmuError> {
        let co = CodeObject::parse(code_object)?;
        if let Some(a) = co.arch() {
            let name = a.name();
            if name != self.arch.name() {
                return Err(EmuError::ArchMismatch { found: name.to_string(), device: self.arch.name().to_string() });
            }
        }
        let k = co.kernel(kernel).ok_or_else(|| EmuError::NoKernel(kernel.to_string()))?;
        let kd = &k.descriptor;
        if kd.wave32() {
            return Err(EmuError::InvalidLaunch("wave32 kernels do not exist on gfx9".into()));
        }
        let threads_per_wg = u64::from(block[0]) * u64::from(block[1]) * u64::from(block[2]);
        if threads_per_wg == 0 || threads_per_wg > 1024 || grid.contains(&0) {
            return Err(EmuError::InvalidLaunch(format!("grid {grid:?} of workgroups {block:?}")));
        }
        if block[0] > 1024 || block[1] > 1024 || block[2] > 1024 {
            return Err(EmuError::InvalidLaunch("work-item id exceeds 10 bits".into()));
        }
        let lds_bytes = kd.group_segment_fixed_size.saturating_add(opts.dynamic_lds);
        if lds_bytes > lds_limit(self.arch) {
            return Err(EmuError::InvalidLaunch(format!("{lds_bytes} bytes of LDS exceed {}", lds_limit(self.arch))));
        }
        if kd.uses_dynamic_stack() {
            // The private segment size would then be chosen at dispatch (AMDGPUUsage
            // "USES_DYNAMIC_STACK"); the code object does not say how much to give.
            return Err(EmuError::InvalidLaunch("kernels with a dynamic stack are not modelled".into()));
        }
        let prog = Program::new(&k.code, self.arch);
        // Kernarg segment, with the hidden arguments HIP fills, and the dispatch packet.
        let (ka_ptr, pkt_ptr) =
            kernarg_and_packet(&self.mem, k.metadata.as_ref(), kd, grid, block, kernarg, opts.dynamic_lds, lds_bytes)?;

        let scratch = self.alloc_scratch(kd, grid, block, opts)?;
        let res = self.run_grid(&prog, kd, kernel, grid, block, ka_ptr, pkt_ptr, lds_bytes, opts, scratch);
        let _ = self.mem.free(ka_ptr);
        let _ = self.mem.free(pkt_ptr);
        if let Some(sc) = scratch {
            let _ = self.mem.free(sc.region);
        }
        res
    }

    /// Scratch for a launch: `private_segment_fixed_size` bytes per work-item, rounded up
    /// to a dword as the CP does (AMDGPUUsage "Private Segment Size"), for every wave of
    /// one slot per workgroup in flight (host thread), like the hardware's per-wave-slot
    /// scratch: a slot is reused, not cleared, by the next workgroup that takes it.
    fn alloc_scratch(
        &self,
        kd: &gemm_codeobject::KernelDescriptor,
        grid: [u32; 3],
        block: [u32; 3],
        opts: &LaunchOptions,
    ) -> Result<Option<ScratchRegion>, EmuError> {
        let lane_bytes = kd.private_segment_fixed_size.div_ceil(4) * 4;
        if lane_bytes == 0 {
            return Ok(None);
        }
        let slots = host_threads(opts, grid) as u64;
        let waves = (u64::from(block[0]) * u64::from(block[1]) * u64::from(block[2])).div_ceil(LANES as u64);
        let slot_bytes = waves * LANES as u64 * u64::from(lane_bytes);
        Ok(Some(ScratchRegion { region: self.mem.alloc(slot_bytes * slots)?, slot_bytes, lane_bytes }))
    }

    #[allow(clippy::too_many_arguments)]
    fn run_grid(
        &self,
        prog: &Program,
        kd: &gemm_codeobject::KernelDescriptor,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        ka_ptr: u64,
        pkt_ptr: u64,
        lds_bytes: u32,
        opts: &LaunchOptions,
        scratch: Option<ScratchRegion>,
    ) -> Result<LaunchReport, EmuError> {
        let view = self.mem.view()?;
        let total = grid[0] as usize * grid[1] as usize * grid[2] as usize;
        let threads = host_threads(opts, grid);
        // Scratch slots not taken by a workgroup in flight (at most `threads` are).
        let free_slots: Mutex<Vec<u64>> = Mutex::new((0..threads as u64).collect());
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        type WgOut = Result<(Vec<Report>, InstCounts, u64), Box<Fault>>;
        let results: Mutex<Vec<Option<WgOut>>> = Mutex::new(vec![None; total]);
        let arch = self.arch;
        let nwaves = ((block[0] * block[1] * block[2]) as usize).div_ceil(LANES);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        break;
                    }
                    let wg = [
                        (i % grid[0] as usize) as u32,
                        ((i / grid[0] as usize) % grid[1] as usize) as u32,
                        (i / (grid[0] as usize * grid[1] as usize)) as u32,
                    ];
                    let slot = free_slots.lock().ok().and_then(|mut f| f.pop()).unwrap_or(0);
                    let scratch = scratch.map(|sc| (sc.region, sc.slot_bytes, sc.lane_bytes));
                    let waves = initial_waves(kd, block, wg, lds_bytes, ka_ptr, pkt_ptr, scratch, slot);
                    let env = Env {
                        arch,
                        prog,
                        mem: &view,
                        kernel,
                        wg,
                        wg_size: block,
                        grid_wgs: grid,
                        kernarg: ka_ptr,
                        lds: vec![0u8; lds_bytes as usize],
                        now: 0,
                        rng: rng_for(opts.schedule.seed, wg),
                        mode: opts.schedule.mode,
                        race: opts.race_detector.then(|| RaceDetector::new(nwaves, lds_bytes as usize)),
                        reports: Default::default(),
                        counts: InstCounts::default(),
                        sched: (0..nwaves).map(|_| WaveSched::default()).collect(),
                        hazard: vec![Default::default(); nwaves],
                        max_instructions: opts.max_instructions_per_wave,
                        lds_atomic: Vec::new(),
                    };
                    let mut wgr = Workgroup { waves, env };
                    let out = match wgr.run(opts.schedule) {
                        Ok(()) => Ok((std::mem::take(&mut wgr.env.reports.list), wgr.env.counts, wgr.env.now)),
                        Err(f) => Err(Box::new(f)),
                    };
                    if let Ok(mut f) = free_slots.lock() {
                        f.push(slot);
                    }
                    if let Ok(mut r) = results.lock() {
                        r[i] = Some(out);
                    }
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if let Some(p) = opts.progress {
                        p(d, total);
                    }
                });
            }
        });
        let results = results.into_inner().map_err(|_| EmuError::Memory(crate::MemError::Poisoned))?;
        let mut rep =
            LaunchReport { kernel: kernel.to_string(), workgroups: total, waves: total * nwaves, ..Default::default() };
        for r in results.into_iter().flatten() {
            match r {
                Ok((reports, counts, cycles)) => {
                    rep.reports.extend(reports);
                    rep.counts.merge(&counts);
                    rep.cycles = rep.cycles.max(cycles);
                }
                Err(f) => return Err(EmuError::Fault(f)),
            }
        }
        Ok(rep)
    }
}

/// Host threads that run a launch's workgroups (`LaunchOptions::threads`, 0 for the
/// available parallelism), at most one per workgroup.
fn host_threads(opts: &LaunchOptions, grid: [u32; 3]) -> usize {
    let total = grid[0] as usize * grid[1] as usize * grid[2] as usize;
    let threads = if opts.threads == 0 {
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    } else {
        opts.threads
    };
    threads.min(total).max(1)
}

/// A launch's scratch: one slot of `slot_bytes` per host thread from `region`, each wave
/// `64 * lane_bytes` of it.
#[derive(Clone, Copy, Debug)]
struct ScratchRegion {
    region: u64,
    slot_bytes: u64,
    lane_bytes: u32,
}

/// Builds the kernarg segment (hidden arguments filled as HIP does when the caller's bytes
/// stop before them) and an AQL dispatch packet in `mem`; returns their addresses.
#[allow(clippy::too_many_arguments)]
pub fn kernarg_and_packet(
    mem: &DeviceMemory,
    meta: Option<&KernelMetadata>,
    kd: &KernelDescriptor,
    grid: [u32; 3],
    block: [u32; 3],
    kernarg: &[u8],
    dynamic_lds: u32,
    lds_bytes: u32,
) -> Result<(u64, u64), EmuError> {
    let ka_size =
        meta.map(|m| m.kernarg_segment_size as usize).unwrap_or(0).max(kd.kernarg_size as usize).max(kernarg.len());
    // Padded like the runtime's kernarg pool: scalar loads may fetch a few dwords past the
    // last argument (clang's s_load_dwordx4 of a 12-byte tail).
    let mut ka = vec![0u8; (ka_size + 64).div_ceil(64) * 64];
    ka[..kernarg.len()].copy_from_slice(kernarg);
    if let Some(m) = meta {
        for a in &m.args {
            let off = a.offset as usize;
            if off < kernarg.len() {
                continue;
            }
            let val: Option<u64> = match &a.value_kind {
                ValueKind::Hidden(h) => match h.as_str() {
                    "block_count_x" => Some(grid[0].into()),
                    "block_count_y" => Some(grid[1].into()),
                    "block_count_z" => Some(grid[2].into()),
                    "group_size_x" => Some(block[0].into()),
                    "group_size_y" => Some(block[1].into()),
                    "group_size_z" => Some(block[2].into()),
                    "grid_dims" => Some(if grid[2] > 1 || block[2] > 1 {
                        3
                    } else if grid[1] > 1 || block[1] > 1 {
                        2
                    } else {
                        1
                    }),
                    "remainder_x" | "remainder_y" | "remainder_z" => Some(0),
                    "dynamic_lds_size" => Some(dynamic_lds.into()),
                    _ => None,
                },
                _ => None,
            };
            if let Some(v) = val {
                let n = (a.size as usize).min(8);
                if off + n <= ka.len() {
                    ka[off..off + n].copy_from_slice(&v.to_le_bytes()[..n]);
                }
            }
        }
    }
    let ka_ptr = mem.alloc(ka.len() as u64)?;
    mem.write(ka_ptr, &ka)?;
    let mut pkt = [0u8; 64];
    let dims: u16 = if grid[2] > 1 {
        3
    } else if grid[1] > 1 {
        2
    } else {
        1
    };
    pkt[2..4].copy_from_slice(&dims.to_le_bytes());
    for d in 0..3 {
        pkt[4 + 2 * d..6 + 2 * d].copy_from_slice(&(block[d] as u16).to_le_bytes());
        pkt[12 + 4 * d..16 + 4 * d].copy_from_slice(&(grid[d].wrapping_mul(block[d])).to_le_bytes());
    }
    pkt[28..32].copy_from_slice(&lds_bytes.to_le_bytes());
    pkt[40..48].copy_from_slice(&ka_ptr.to_le_bytes());
    let pkt_ptr = mem.alloc(64)?;
    mem.write(pkt_ptr, &pkt)?;
    Ok((ka_ptr, pkt_ptr))
}

/// A workgroup's waves in their initial state (AMDGPUUsage "Initial Kernel Execution State",
/// ISA.md §5.3): user SGPRs (dispatch, queue and kernarg pointers, dispatch id), system SGPRs
/// (workgroup ids, workgroup info, the private segment offset), architected flat scratch
/// (`scratch` = region, bytes per slot, bytes per work-item; `slot` is the workgroup's slot)
/// and the packed work-item ids in v0. Shared by the functional launch and the timed engine
/// so that both start a workgroup identically.
#[allow(clippy::too_many_arguments)]
pub(crate) fn initial_waves(
    kd: &KernelDescriptor,
    block: [u32; 3],
    wg: [u32; 3],
    lds_bytes: u32,
    ka_ptr: u64,
    pkt_ptr: u64,
    scratch: Option<(u64, u64, u32)>,
    slot: u64,
) -> Vec<Wave> {
    let total_vgprs = kd.allocated_vgprs().min(512);
    let accum = kd.accum_offset().min(total_vgprs).min(256);
    let (nv, na) = (accum as u16, (total_vgprs - accum).min(256) as u16);
    let user = kd.user_sgprs();
    let user_count = kd.user_sgpr_count() as usize;
    let sys = kd.system_sgprs();
    let wg_threads = (block[0] * block[1] * block[2]) as usize;
    let nwaves = wg_threads.div_ceil(LANES);
    let mut waves = Vec::with_capacity(nwaves);
    for wi in 0..nwaves {
        let live_lanes = (wg_threads - wi * LANES).min(LANES);
        let live = if live_lanes == 64 { u64::MAX } else { (1u64 << live_lanes) - 1 };
        let mut w = Wave::new(wi, nv, na, live);
        let mut sg = 0usize;
        let mut put64 = |w: &mut Wave, v: u64| {
            w.s[sg] = v as u32;
            w.s[sg + 1] = (v >> 32) as u32;
            sg += 2;
        };
        if user.dispatch_ptr {
            put64(&mut w, pkt_ptr);
        }
        if user.queue_ptr {
            put64(&mut w, 0);
        }
        if user.kernarg_segment_ptr {
            put64(&mut w, ka_ptr);
        }
        if user.dispatch_id {
            put64(&mut w, 0);
        }
        let mut sg = user_count;
        for (en, v) in [(sys.workgroup_id_x, wg[0]), (sys.workgroup_id_y, wg[1]), (sys.workgroup_id_z, wg[2])] {
            if en {
                w.s[sg] = v;
                sg += 1;
            }
        }
        if sys.workgroup_info {
            w.s[sg] = lds_bytes;
            sg += 1;
        }
        if let Some((region, slot_bytes, lane_bytes)) = scratch {
            // Architected flat scratch (gfx940+, AMDGPUUsage "Flat
            // Scratch"): FLAT_SCRATCH holds the wave's scratch base; the
            // wavefront offset SGPR is its offset in the dispatch's scratch.
            let off = slot * slot_bytes + (wi * LANES) as u64 * u64::from(lane_bytes);
            let base = region + off;
            w.scratch = Some(Scratch { base, lane_bytes });
            w.s[FLAT_SCRATCH_LO] = base as u32;
            w.s[FLAT_SCRATCH_LO + 1] = (base >> 32) as u32;
            if sys.private_segment {
                w.s[sg] = off as u32;
            }
            if user.private_segment_size && user_count > 0 {
                // The last user SGPR (after any preloaded kernargs).
                w.s[user_count - 1] = lane_bytes;
            }
        } else if sys.private_segment {
            w.s[sg] = 0;
        }
        if nv > 0 {
            for l in 0..LANES {
                let lin = (wi * LANES + l) as u32;
                let x = lin % block[0];
                let y = (lin / block[0]) % block[1];
                let z = lin / (block[0] * block[1]);
                let _ = w.vset(gemm_isa::RegFile::Vgpr, 0, l, x | (y << 10) | (z << 20));
            }
        }
        waves.push(w);
    }
    waves
}
