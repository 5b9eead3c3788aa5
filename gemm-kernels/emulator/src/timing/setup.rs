//! Launch state for the timed engine: the kernarg segment with HIP's hidden arguments, the
//! dispatch packet, and each workgroup's initial wave state. It follows `launch.rs`
//! (AMDGPUUsage "Initial Kernel Execution State", ISA.md §5.3) so that a timed workgroup
//! starts exactly as a functional one; the timed engine builds workgroups one at a time,
//! in the order the grid hands them to the simulated CU, instead of all of a launch.

pub use crate::launch::kernarg_and_packet;
use crate::memory::MemView;
use crate::program::Program;
use crate::scheduler::{rng_for, Env, WaveSched, Workgroup};
use crate::wave::LANES;
use crate::{InstCounts, Mode};
use gemm_codeobject::KernelDescriptor;
use gemm_isa::Arch;

/// Everything a launch shares between its workgroups.
pub struct KernelSetup<'a> {
    pub arch: Arch,
    pub prog: &'a Program,
    pub kd: &'a KernelDescriptor,
    pub kernel: &'a str,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub ka_ptr: u64,
    pub pkt_ptr: u64,
    pub lds_bytes: u32,
    pub view: MemView,
    pub max_instructions: u64,
    /// Scratch of kernels with a private segment: (region, bytes per workgroup slot,
    /// bytes per work-item), one slot per workgroup in flight on the simulated CU.
    pub scratch: Option<(u64, u64, u32)>,
}

impl KernelSetup<'_> {
    pub fn waves_per_wg(&self) -> usize {
        ((self.block[0] * self.block[1] * self.block[2]) as usize).div_ceil(LANES)
    }

    pub fn total_wgs(&self) -> u64 {
        self.grid.iter().map(|&g| u64::from(g)).product()
    }

    /// The (x, y, z) of linear workgroup `i` (x fastest, the dispatch order).
    pub fn wg_xyz(&self, i: u64) -> [u32; 3] {
        let (gx, gy) = (u64::from(self.grid[0]), u64::from(self.grid[1]));
        [(i % gx) as u32, ((i / gx) % gy) as u32, (i / (gx * gy)) as u32]
    }

    /// Workgroup `i` with its waves in their initial state, using scratch slot `slot`.
    pub fn workgroup(&self, i: u64, slot: usize) -> Workgroup<'_> {
        let wg = self.wg_xyz(i);
        let waves = crate::launch::initial_waves(
            self.kd,
            self.block,
            wg,
            self.lds_bytes,
            self.ka_ptr,
            self.pkt_ptr,
            self.scratch,
            slot as u64,
        );
        let nwaves = waves.len();
        let env = Env {
            arch: self.arch,
            prog: self.prog,
            mem: &self.view,
            kernel: self.kernel,
            wg,
            wg_size: self.block,
            grid_wgs: self.grid,
            kernarg: self.ka_ptr,
            lds: vec![0u8; self.lds_bytes as usize],
            now: 0,
            rng: rng_for(0, wg),
            mode: Mode::Fair,
            race: None,
            reports: Default::default(),
            counts: InstCounts::default(),
            sched: (0..nwaves).map(|_| WaveSched::default()).collect(),
            hazard: vec![Default::default(); nwaves],
            max_instructions: self.max_instructions,
            lds_atomic: Vec::new(),
        };
        Workgroup { waves, env }
    }
}
