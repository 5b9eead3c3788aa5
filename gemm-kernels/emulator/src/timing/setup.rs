//! Launch state for the timed engine: the kernarg segment with HIP's hidden arguments, the
//! dispatch packet, and each workgroup's initial wave state. It follows `launch.rs`
//! (AMDGPUUsage "Initial Kernel Execution State", ISA.md §5.3) so that a timed workgroup
//! starts exactly as a functional one; the timed engine builds workgroups one at a time,
//! in the order the grid hands them to the simulated CU, instead of all of a launch.

use crate::error::EmuError;
use crate::memory::{DeviceMemory, MemView};
use crate::program::Program;
use crate::scheduler::{rng_for, Env, WaveSched, Workgroup};
use crate::wave::{Scratch, Wave, FLAT_SCRATCH_LO, LANES};
use crate::{InstCounts, Mode};
use gemm_codeobject::{KernelDescriptor, KernelMetadata, ValueKind};
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
