//! Checker findings: races, hazards, waits, alignment, out-of-bounds LDS. A report names
//! the kernel, PC, instruction (printed), workgroup, wave and address.

use std::fmt;

/// Which checker found it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Checker {
    /// LDS happens-before race detector (`race.rs`).
    Race,
    /// A register read or written while a memory operation that writes it has not been
    /// waited for with `s_waitcnt` (`scheduler.rs`).
    Wait,
    /// Missing wait states after MFMA and other producers (`hazard.rs`).
    Hazard,
    /// Misaligned DS b64/b96/b128 access (ISA.md §3.3).
    Alignment,
    /// LDS access outside the workgroup's allocation (reads give 0, writes are dropped).
    LdsBounds,
    /// `s_barrier` counts that differ between the waves of a workgroup (`scheduler.rs`).
    Barrier,
}

/// What exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A read of LDS not ordered after the write it reads (or after a later write).
    ReadAfterWrite,
    /// A write that may overwrite data another wave has not finished reading.
    WriteAfterRead,
    /// Two writes to the same LDS dword with no order between them.
    WriteAfterWrite,
    /// A read of LDS that no one wrote in this launch.
    UninitializedRead,
    /// A register used before the load that writes it was waited for.
    RegisterBeforeWait,
    /// Too few wait states between a producer and a consumer.
    WaitStates,
    Misaligned,
    OutOfBounds,
    /// An `s_barrier` released only because the waves that had not arrived ended: the waves
    /// ran different numbers of barriers, so the barriers pair up across program points.
    BarrierMismatch,
}

/// One finding (deduplicated by checker, kind and the two PCs; `count` says how often).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub checker: Checker,
    pub kind: Kind,
    pub kernel: String,
    pub workgroup: [u32; 3],
    pub wave: usize,
    pub pc: u64,
    pub inst: String,
    /// LDS byte address, register number, or memory address, as `message` says.
    pub addr: Option<u64>,
    /// The other side (earlier access or producer): wave, PC, instruction.
    pub other: Option<(usize, u64, String)>,
    pub message: String,
    pub count: u64,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{:?}/{:?}] {} wg {:?} wave {} pc {:#x} `{}`",
            self.checker, self.kind, self.kernel, self.workgroup, self.wave, self.pc, self.inst
        )?;
        if let Some(a) = self.addr {
            write!(f, " addr {a:#x}")?;
        }
        if let Some((w, pc, i)) = &self.other {
            write!(f, " vs wave {w} pc {pc:#x} `{i}`")?;
        }
        write!(f, ": {}", self.message)?;
        if self.count > 1 {
            write!(f, " (x{})", self.count)?;
        }
        Ok(())
    }
}

/// Collects reports, merging repeats.
#[derive(Debug, Default)]
pub struct Reports {
    pub list: Vec<Report>,
    index: std::collections::HashMap<(Checker, Kind, u64, Option<u64>), usize>,
}

/// Cap on distinct reports per workgroup.
const MAX_REPORTS: usize = 256;

impl Reports {
    pub fn add(&mut self, r: Report) {
        let key = (r.checker, r.kind, r.pc, r.other.as_ref().map(|o| o.1));
        if let Some(&i) = self.index.get(&key) {
            self.list[i].count += 1;
            return;
        }
        if self.list.len() < MAX_REPORTS {
            self.index.insert(key, self.list.len());
            self.list.push(r);
        }
    }
}
