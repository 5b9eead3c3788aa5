//! LDS race detector by happens-before (vector clocks over `s_waitcnt` and `s_barrier`).
//!
//! Each wave has a vector clock. An LDS access (DS instruction or LDS-DMA) is ordered
//! after what happened before its *issue* (the clock is snapshotted then). The access
//! itself becomes visible to the rest of its wave, and through barriers to other waves,
//! only once its wave has waited for it with `s_waitcnt` (lgkmcnt for DS, vmcnt for
//! LDS-DMA, ISA.md §2.4 and §3.1): the wait ticks the wave's clock and records the tick
//! as the access's release time. `s_barrier` joins all clocks (it does not wait for
//! memory, ISA.md §3.2). Within a wave, DS operations are ordered in program order (the
//! LDS queue is in order, LLVM SIInsertWaitcnts relies on it); LDS-DMA is not ordered
//! with anything of its own wave until waited for.
//!
//! Checks happen when an access is *performed* (at its completion), against per-dword
//! shadow state: the last write and the latest read of each wave. Granularity is one
//! dword (README "Choices"): sub-dword accesses by different waves to the same dword
//! count as conflicting.

use std::collections::HashMap;

/// One performed LDS access, as remembered in the shadow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessRec {
    pub wave: u16,
    pub seq: u64,
    pub pc: u64,
    pub dma: bool,
}

#[derive(Clone, Debug, Default)]
struct Shadow {
    write: Option<AccessRec>,
    reads: Vec<AccessRec>,
}

/// A conflict found by [`RaceDetector::access`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conflict {
    Uninit,
    Raw(AccessRec),
    War(AccessRec),
    Waw(AccessRec),
}

#[derive(Debug)]
pub struct RaceDetector {
    vc: Vec<Vec<u32>>,
    /// Per wave: memory op sequence number -> own clock value at which it was waited.
    waited: Vec<HashMap<u64, u32>>,
    shadow: Vec<Shadow>,
}

impl RaceDetector {
    pub fn new(waves: usize, lds_bytes: usize) -> Self {
        RaceDetector {
            vc: vec![vec![0; waves]; waves],
            waited: vec![HashMap::new(); waves],
            shadow: vec![Shadow::default(); lds_bytes.div_ceil(4)],
        }
    }

    /// The clock a new access of wave `w` is ordered after.
    pub fn snapshot(&self, w: usize) -> Vec<u32> {
        self.vc[w].clone()
    }

    /// Wave `w` has waited for the memory operations `seqs`.
    pub fn waited(&mut self, w: usize, seqs: &[u64]) {
        if seqs.is_empty() {
            return;
        }
        self.vc[w][w] += 1;
        let t = self.vc[w][w];
        for s in seqs {
            self.waited[w].insert(*s, t);
        }
    }

    /// All waves passed a barrier together.
    pub fn barrier(&mut self, waves: &[usize]) {
        let n = self.vc.len();
        let mut join = vec![0u32; n];
        for &w in waves {
            for (j, c) in join.iter_mut().zip(&self.vc[w]) {
                *j = (*j).max(*c);
            }
        }
        for &w in waves {
            self.vc[w] = join.clone();
            self.vc[w][w] += 1;
        }
    }

    fn ordered(&self, prev: &AccessRec, w: usize, vc: &[u32], dma: bool) -> bool {
        if prev.wave as usize == w && !prev.dma && !dma {
            return true;
        }
        match self.waited[prev.wave as usize].get(&prev.seq) {
            Some(&t) => t <= vc[prev.wave as usize],
            None => false,
        }
    }

    /// Checks and records an access of `len` bytes at LDS byte `addr`.
    pub fn access(&mut self, rec: AccessRec, vc: &[u32], addr: u32, len: u32, write: bool) -> Vec<(u32, Conflict)> {
        let mut out = Vec::new();
        let w = rec.wave as usize;
        let first = addr / 4;
        let last = (addr + len.max(1) - 1) / 4;
        for d in first..=last {
            let Some(sh) = self.shadow.get(d as usize) else { continue };
            if write {
                if let Some(pw) = sh.write {
                    if !self.ordered(&pw, w, vc, rec.dma) {
                        out.push((d * 4, Conflict::Waw(pw)));
                    }
                }
                for r in &sh.reads {
                    if !self.ordered(r, w, vc, rec.dma) {
                        out.push((d * 4, Conflict::War(*r)));
                    }
                }
                let sh = &mut self.shadow[d as usize];
                sh.write = Some(rec);
                sh.reads.clear();
            } else {
                match sh.write {
                    None => out.push((d * 4, Conflict::Uninit)),
                    Some(pw) if !self.ordered(&pw, w, vc, rec.dma) => out.push((d * 4, Conflict::Raw(pw))),
                    _ => {}
                }
                let sh = &mut self.shadow[d as usize];
                if let Some(r) = sh.reads.iter_mut().find(|r| r.wave == rec.wave) {
                    *r = rec;
                } else {
                    sh.reads.push(rec);
                }
            }
        }
        out
    }
}
