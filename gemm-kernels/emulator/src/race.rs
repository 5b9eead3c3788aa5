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
//!
//! LDS atomics (`ds_add_u32`, `ds_inc_u32`, ...) synchronise, as in the two-counter phase
//! sync of the ping-pong (seed 002 §6): one wave signals with an atomic, others spin on a
//! plain `ds_read` of the counter (an atomic load is a plain DS read in the ISA). Two
//! atomics never race, and a read of a dword whose last write was atomic is a sync read,
//! not a race. An atomic *releases* what its wave had waited for when it issued (the
//! dword keeps the join of the releasing clocks); a read of the dword *acquires* that clock
//! once its wave waits for the read (`s_waitcnt lgkmcnt`), so data published before the
//! signal is ordered before the waiter's accesses after its wait. The release needs the
//! signalling wave to `s_waitcnt` its own data accesses first, as LLVM's release fence
//! does.

use std::collections::HashMap;

/// One performed LDS access, as remembered in the shadow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessRec {
    pub wave: u16,
    pub seq: u64,
    pub pc: u64,
    pub dma: bool,
    /// An LDS atomic read-modify-write (a synchronising access).
    pub atomic: bool,
}

#[derive(Clone, Debug, Default)]
struct Shadow {
    write: Option<AccessRec>,
    reads: Vec<AccessRec>,
    /// Join of the clocks of the atomics that wrote this dword (its release clock).
    sync: Option<Vec<u32>>,
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
    /// Per wave: memory op sequence number -> release clock its reads observed, joined
    /// into the wave's clock when the wave waits for the op.
    acquired: Vec<HashMap<u64, Vec<u32>>>,
    shadow: Vec<Shadow>,
}

fn join(into: &mut Vec<u32>, c: &[u32]) {
    if into.len() < c.len() {
        into.resize(c.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(c) {
        *a = (*a).max(*b);
    }
}

impl RaceDetector {
    pub fn new(waves: usize, lds_bytes: usize) -> Self {
        RaceDetector {
            vc: vec![vec![0; waves]; waves],
            waited: vec![HashMap::new(); waves],
            acquired: vec![HashMap::new(); waves],
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
            if let Some(c) = self.acquired[w].remove(s) {
                let mut vc = std::mem::take(&mut self.vc[w]);
                join(&mut vc, &c);
                self.vc[w] = vc;
            }
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
            // Atomics synchronise: an atomic does not race with a read (a spin-wait reads the
            // old or the new count), nor with an atomic or write of a dword atomics wrote
            // before; a read acquires the dword's release clock (and so does an atomic,
            // which reads too).
            let sync_pair =
                |prev: &AccessRec, prev_is_read: bool| rec.atomic && (prev_is_read || prev.atomic || sh.sync.is_some());
            if rec.atomic || (!write && sh.write.is_some_and(|pw| pw.atomic)) {
                if let Some(c) = &sh.sync {
                    let e = self.acquired[w].entry(rec.seq).or_default();
                    join(e, c);
                }
            }
            let sh = &self.shadow[d as usize];
            if write {
                if let Some(pw) = sh.write {
                    if !sync_pair(&pw, false) && !self.ordered(&pw, w, vc, rec.dma) {
                        out.push((d * 4, Conflict::Waw(pw)));
                    }
                }
                for r in &sh.reads {
                    if !sync_pair(r, true) && !self.ordered(r, w, vc, rec.dma) {
                        out.push((d * 4, Conflict::War(*r)));
                    }
                }
                let sh = &mut self.shadow[d as usize];
                sh.write = Some(rec);
                sh.reads.clear();
                if rec.atomic {
                    join(sh.sync.get_or_insert_with(Vec::new), vc);
                }
            } else {
                match sh.write {
                    None => out.push((d * 4, Conflict::Uninit)),
                    Some(pw) if pw.atomic => {}
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
