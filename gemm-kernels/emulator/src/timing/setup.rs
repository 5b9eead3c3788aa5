//! Launch state for the timed engine: the kernarg segment with HIP's hidden arguments, the
//! dispatch packet, and each workgroup's initial wave state. It follows `launch.rs`
//! (AMDGPUUsage "Initial Kernel Execution State", ISA.md §5.3) so that a timed workgroup
//! starts exactly as a functional one; the timed engine builds workgroups one at a time,
//! in the order the grid hands them to the simulated CU, instead of all of a launch.

pub use crate::launch::kernarg_and_packet;
use crate::memory::MemView;
use crate::program::Program;
use crate::scheduler::{rng_for, Env, WaveSched, Workgroup};
use crate::wave::{Scratch, Wave, FLAT_SCRATCH_LO, LANES};
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
        let kd = self.kd;
        let total_vgprs = kd.allocated_vgprs().min(512);
        let accum = kd.accum_offset().min(total_vgprs).min(256);
        let (nv, na) = (accum as u16, (total_vgprs - accum).min(256) as u16);
        let user = kd.user_sgprs();
        let user_count = kd.user_sgpr_count() as usize;
        let sys = kd.system_sgprs();
        let block = self.block;
        let wg_threads = (block[0] * block[1] * block[2]) as usize;
        let nwaves = self.waves_per_wg();
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
                put64(&mut w, self.pkt_ptr);
            }
            if user.queue_ptr {
                put64(&mut w, 0);
            }
            if user.kernarg_segment_ptr {
                put64(&mut w, self.ka_ptr);
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
                w.s[sg] = self.lds_bytes;
                sg += 1;
            }
            if let Some((region, slot_bytes, lane_bytes)) = self.scratch {
                // Architected flat scratch (gfx940+, AMDGPUUsage "Flat Scratch"), as launch.rs.
                let off = slot as u64 * slot_bytes + (wi * LANES) as u64 * u64::from(lane_bytes);
                let base = region + off;
                w.scratch = Some(Scratch { base, lane_bytes });
                w.s[FLAT_SCRATCH_LO] = base as u32;
                w.s[FLAT_SCRATCH_LO + 1] = (base >> 32) as u32;
                if sys.private_segment {
                    w.s[sg] = off as u32;
                }
                if user.private_segment_size && user_count > 0 {
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
        let env = Env {
            arch: self.arch,
            prog: self.prog,
            mem: &self.view,
            kernel: self.kernel,
            wg,
            wg_size: block,
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
        };
        Workgroup { waves, env }
    }
}
