//! gemm-emu: a functional emulator of a CDNA3 (gfx942) / CDNA4 (gfx950) compute unit.
//!
//! It loads any AMDHSA code object (ours or LLVM's), runs a grid on the CPU (workgroups in
//! parallel on host threads, 64-lane waves), and models what kernels get wrong:
//! asynchronous memory completion against `s_waitcnt`, `s_barrier`, LDS-DMA, buffer
//! bounds checks, MFMA layouts and hazards. Checkers report LDS races (happens-before),
//! registers used before their load was waited for, missing MFMA wait states and
//! misaligned DS accesses. A seeded scheduler with adversarial modes makes the same bugs
//! show up as wrong numbers; the same seed gives the same result.
//!
//! ```no_run
//! use gemm_emu::{Arch, Device, Schedule, Mode, LaunchOptions};
//! let co = std::fs::read("vadd.co").unwrap();
//! let dev = Device::new(Arch::Gfx942);
//! let n = 1024u32;
//! let a = dev.alloc(4 * n as u64).unwrap();
//! let b = dev.alloc(4 * n as u64).unwrap();
//! let c = dev.alloc(4 * n as u64).unwrap();
//! dev.copy_in(a, &vec![0u8; 4 * n as usize]).unwrap();
//! let mut args = Vec::new();
//! for p in [a, b, c] { args.extend_from_slice(&p.to_le_bytes()); }
//! args.extend_from_slice(&n.to_le_bytes());
//! let opts = LaunchOptions { schedule: Schedule { mode: Mode::Random, seed: 7 }, ..Default::default() };
//! let report = dev.launch_with(&co, "vadd", [n / 256, 1, 1], [256, 1, 1], &args, &opts).unwrap();
//! assert!(report.reports.is_empty(), "{report}");
//! let mut out = vec![0u8; 4 * n as usize];
//! dev.copy_out(c, &mut out).unwrap();
//! ```

#[cfg(feature = "lab")]
pub mod calibration;
#[cfg(feature = "lab")]
pub mod cli;
pub mod error;
pub mod hazard;
pub mod launch;
pub mod lds;
pub mod memory;
pub mod mfma;
#[cfg(feature = "lab")]
pub mod model_eval;
pub mod program;
pub mod race;
pub mod report;
pub mod salu;
pub mod scheduler;
pub mod timing;
pub mod valu;
pub mod vmem;
pub mod wave;

pub use error::{EmuError, Fault, FaultKind, MemError};
pub use gemm_isa::Arch;
pub use launch::{Device, LaunchOptions, LaunchReport};
pub use memory::BufferRsrc;
pub use report::{Checker, Kind, Report};

use gemm_isa::{Format, Inst, Op};
use std::fmt;

/// How the scheduler picks waves and memory latencies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Round-robin waves, fixed latencies (VMEM 120, LDS 16, SMEM 40 cycles).
    Fair,
    /// A random ready wave each step, random latencies (VMEM 1-900, LDS 1-80, SMEM 1-300).
    Random,
    /// Round-robin waves, but memory completes only when an `s_waitcnt` forces it (or the
    /// wave ends): every missing wait or barrier-before-wait shows up. A wave whose wait
    /// would force LDS data reads is served last, and an LDS access racing with another
    /// wave's access still in flight lands ahead of it (the pair in the order opposite to
    /// its issue): an overwrite issued too early shows up too
    /// (`Workgroup::perform_ahead_of_racing`).
    LongestLatency,
    /// Always the highest-numbered ready wave (runs one wave as far as it can go first).
    Reversed,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Fair, Mode::Random, Mode::LongestLatency, Mode::Reversed];
    pub fn name(self) -> &'static str {
        match self {
            Mode::Fair => "fair",
            Mode::Random => "random",
            Mode::LongestLatency => "longest-latency",
            Mode::Reversed => "reversed",
        }
    }
    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// A scheduling policy: mode plus seed. Same policy, same result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Schedule {
    pub mode: Mode,
    pub seed: u64,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule { mode: Mode::Fair, seed: 0 }
    }
}

/// Executed instructions by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InstCounts {
    pub salu: u64,
    pub valu: u64,
    pub mfma: u64,
    pub ds: u64,
    pub vmem_load: u64,
    pub vmem_store: u64,
    pub smem: u64,
    pub branch: u64,
    pub waitcnt: u64,
    pub barrier: u64,
    pub other: u64,
}

impl InstCounts {
    pub fn add(&mut self, inst: &Inst) {
        let def = inst.op.def();
        let c = match def.format {
            Format::Sop1 | Format::Sop2 | Format::Sopk | Format::Sopc => &mut self.salu,
            Format::Vop1 | Format::Vop2 | Format::Vopc | Format::Vop3 | Format::Vop3p => &mut self.valu,
            Format::Mai => &mut self.mfma,
            Format::Ds => &mut self.ds,
            Format::Smem => &mut self.smem,
            Format::Mubuf | Format::Global | Format::Flat | Format::Scratch => {
                if def.name.contains("store") {
                    &mut self.vmem_store
                } else {
                    &mut self.vmem_load
                }
            }
            Format::Sopp => match inst.op {
                Op::S_WAITCNT => &mut self.waitcnt,
                Op::S_BARRIER => &mut self.barrier,
                _ if def.has(gemm_isa::table::flags::BRANCH) => &mut self.branch,
                _ => &mut self.other,
            },
        };
        *c += 1;
    }
    pub fn merge(&mut self, o: &InstCounts) {
        self.salu += o.salu;
        self.valu += o.valu;
        self.mfma += o.mfma;
        self.ds += o.ds;
        self.vmem_load += o.vmem_load;
        self.vmem_store += o.vmem_store;
        self.smem += o.smem;
        self.branch += o.branch;
        self.waitcnt += o.waitcnt;
        self.barrier += o.barrier;
        self.other += o.other;
    }
    pub fn total(&self) -> u64 {
        self.salu
            + self.valu
            + self.mfma
            + self.ds
            + self.vmem_load
            + self.vmem_store
            + self.smem
            + self.branch
            + self.waitcnt
            + self.barrier
            + self.other
    }
}

impl fmt::Display for InstCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "salu {} valu {} mfma {} ds {} vmem_load {} vmem_store {} smem {} branch {} waitcnt {} barrier {} other {} (total {})",
            self.salu, self.valu, self.mfma, self.ds, self.vmem_load, self.vmem_store, self.smem, self.branch, self.waitcnt, self.barrier, self.other, self.total()
        )
    }
}
