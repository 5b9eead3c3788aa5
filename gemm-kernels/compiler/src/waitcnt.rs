//! `s_waitcnt` placement derived from the operations in flight (the job LLVM's
//! `SIInsertWaitcnts` does; `llvm-mc` inserts none, ISA.md §0).
//!
//! Model (ISA.md §3.1, §2.4, §3.2): per wave, `vmcnt` counts vector-memory loads and
//! stores and LDS-DMA in issue order; `lgkmcnt` counts DS operations in order and SMEM
//! loads, which may return out of order (so waiting for one needs `lgkmcnt(0)`);
//! `expcnt` counts VMEM stores until their data VGPRs have been read. A wait `cnt(N)`
//! lets at most N younger operations stay outstanding. The pass tracks, per counter, the
//! ordered list of outstanding operations with the registers they write (or, for
//! stores, read) and inserts before each instruction the weakest wait that retires:
//! * an operation writing a register the instruction reads or writes (RAW, WAW);
//! * a store still reading a register the instruction writes (WAR, `expcnt`);
//! * before `s_barrier`: every outstanding DS operation and LDS-DMA, so the LDS writes
//!   of this wave are visible and its LDS reads are complete before other waves pass
//!   (ISA.md §3.2: the barrier does not wait for memory). A barrier after
//!   [`Note::DmaMayStayInFlight`] (a schedule's claim, `schedule/`) waits for the DS
//!   operations only. An LDS atomic (the phase-counter signal) gets the same waits.
//!   A barrier after [`Note::Publishes`]`(n)` (the three-stage pipeline,
//!   `passes/pipeline.rs`) waits for the DS operations and for the LDS-DMA copies into
//!   buffer `n` (each copy tagged by the [`Note::DmaInto`] before it; untagged ones count
//!   as into every buffer): the copies of the tile after next, into another buffer, stay
//!   in flight, and `vmcnt(N)` lets exactly those N younger operations remain.
//!
//! Control flow: the state at a block entry is the *set* of states of its predecessors
//! (no merging approximation); the required wait is the strongest over the set, and the
//! analysis iterates to a fixed point before the waits are inserted.

use crate::program::{reads_writes, Cfg, Item, Note};
use gemm_isa::{Format, Inst, Op, Operand, RegFile};

type R = (RegFile, u16);

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Ev {
    regs: Vec<R>,
    /// A DS operation or LDS-DMA (must be complete at a barrier).
    lds: bool,
    smem: bool,
    /// Completion-order class: operations of one class complete in issue order; loads
    /// and stores on `vmcnt` may pass each other (LLVM `SIInsertWaitcnts`
    /// `hasMixedPendingEvents`), so a wait only counts younger ops of the same class.
    store: bool,
    /// The LDS buffer an LDS-DMA copy writes ([`Note::DmaInto`]); `None`: unknown.
    buf: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
struct State {
    vm: Vec<Ev>,
    lgkm: Vec<Ev>,
    exp: Vec<Ev>,
}

/// Counter maxima on gfx9 (ISA.md §3.1).
const VM_MAX: usize = 63;
const LGKM_MAX: usize = 15;
const EXP_MAX: usize = 7;

/// The waits before one instruction: `None` = no wait on that counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wait {
    pub vm: Option<usize>,
    pub lgkm: Option<usize>,
    pub exp: Option<usize>,
}

impl Wait {
    fn merge(&mut self, o: Wait) {
        let m = |a: Option<usize>, b: Option<usize>| match (a, b) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, None) => x,
            (None, y) => y,
        };
        self.vm = m(self.vm, o.vm);
        self.lgkm = m(self.lgkm, o.lgkm);
        self.exp = m(self.exp, o.exp);
    }
    fn is_none(&self) -> bool {
        self.vm.is_none() && self.lgkm.is_none() && self.exp.is_none()
    }
    /// The `s_waitcnt` simm16 (ISA.md §3.1: vm [3:0]+[15:14], exp [6:4], lgkm [11:8]).
    pub fn simm16(&self) -> u16 {
        let vm = self.vm.unwrap_or(VM_MAX) as u16;
        let exp = self.exp.unwrap_or(EXP_MAX) as u16;
        let lgkm = self.lgkm.unwrap_or(LGKM_MAX) as u16;
        (vm & 0xF) | ((vm >> 4) << 14) | (exp << 4) | (lgkm << 8)
    }
}

enum Kind {
    VmLoad,
    VmLds,
    VmStore,
    DsRead,
    DsWrite,
    Smem,
    Barrier,
    Other,
}

fn kind(i: &Inst) -> Kind {
    match i.op.def().format {
        Format::Mubuf | Format::Global | Format::Flat => {
            let (r, w) = reads_writes(i);
            if i.mods.lds {
                Kind::VmLds
            } else if w.iter().any(|x| x.0 != RegFile::Ttmp) {
                Kind::VmLoad
            } else {
                let _ = r;
                Kind::VmStore
            }
        }
        Format::Ds => {
            let (_, w) = reads_writes(i);
            if w.is_empty() {
                Kind::DsWrite
            } else {
                Kind::DsRead
            }
        }
        Format::Smem => Kind::Smem,
        _ if i.op == Op::S_BARRIER => Kind::Barrier,
        _ => Kind::Other,
    }
}

/// Whether `i` is a release: an LDS atomic, the signal of the phase-counter sync
/// (`schedule/phase.rs`), which publishes what its wave did before it as a barrier does,
/// so it gets a barrier's waits (as LLVM's release fence before an atomic).
fn is_release(i: &Inst) -> bool {
    i.op == Op::DS_ADD_U32
}

/// Required wait for `i` (whose registers are `rw`) in state `s`.
fn required(s: &State, i: &Inst, rw: &(Vec<R>, Vec<R>), dma_in_flight: bool, publishes: Option<u32>) -> Wait {
    let (reads, writes) = rw;
    let touches = |e: &Ev| e.regs.iter().any(|r| reads.contains(r) || writes.contains(r));
    let mut w = Wait::default();
    // The weakest count that guarantees the youngest matching op has completed: the
    // younger ops of its own class (other classes may complete in any order).
    let need = |list: &[Ev], pred: &dyn Fn(&Ev) -> bool| -> Option<usize> {
        list.iter().rposition(pred).map(|p| list[p + 1..].iter().filter(|e| e.store == list[p].store).count())
    };
    w.vm = need(&s.vm, &|e| touches(e));
    w.lgkm = need(&s.lgkm, &|e| touches(e));
    if w.lgkm.is_some() && s.lgkm.iter().any(|e| e.smem) {
        w.lgkm = Some(0);
    }
    w.exp = need(&s.exp, &|e| e.regs.iter().any(|r| writes.contains(r)));
    if matches!(kind(i), Kind::Barrier) || is_release(i) {
        let vm = if dma_in_flight {
            None
        } else {
            need(&s.vm, &|e| e.lds && publishes.is_none_or(|b| e.buf.is_none_or(|x| x == b)))
        };
        let mut b = Wait { vm, lgkm: need(&s.lgkm, &|e| e.lds), exp: None };
        if b.lgkm.is_some() && s.lgkm.iter().any(|e| e.smem) {
            b.lgkm = Some(0);
        }
        w.merge(b);
    }
    // Keep the counters within their hardware range.
    let k = kind(i);
    if matches!(k, Kind::VmLoad | Kind::VmLds | Kind::VmStore) && s.vm.len() >= VM_MAX {
        w.merge(Wait { vm: Some(VM_MAX - 1), ..Default::default() });
    }
    if matches!(k, Kind::DsRead | Kind::DsWrite | Kind::Smem) && s.lgkm.len() >= LGKM_MAX {
        w.merge(Wait {
            lgkm: Some(if s.lgkm.iter().any(|e| e.smem) { 0 } else { LGKM_MAX - 1 }),
            ..Default::default()
        });
    }
    if matches!(k, Kind::VmStore) && s.exp.len() >= EXP_MAX {
        w.merge(Wait { exp: Some(EXP_MAX - 1), ..Default::default() });
    }
    w
}

fn apply_wait(s: &mut State, w: Wait) {
    if w.is_none() {
        return;
    }
    // After `cnt(n)` an op is known complete when at least n younger ops of its class
    // exist (were it pending, they would be too, and the count would exceed n); with
    // mixed classes only that much is known.
    let cut = |l: &mut Vec<Ev>, n: Option<usize>| {
        if let Some(n) = n {
            let keep: Vec<bool> =
                (0..l.len()).map(|i| l[i + 1..].iter().filter(|e| e.store == l[i].store).count() < n).collect();
            let mut it = keep.iter();
            l.retain(|_| *it.next().unwrap());
        }
    };
    cut(&mut s.vm, w.vm);
    cut(&mut s.lgkm, w.lgkm);
    cut(&mut s.exp, w.exp);
}

fn issue(s: &mut State, i: &Inst, rw: &(Vec<R>, Vec<R>), buf: Option<u32>) {
    let (reads, writes) = (&rw.0, rw.1.clone());
    match kind(i) {
        Kind::VmLoad => s.vm.push(Ev { regs: writes, lds: false, smem: false, store: false, buf: None }),
        Kind::VmLds => s.vm.push(Ev { regs: vec![], lds: true, smem: false, store: false, buf }),
        Kind::VmStore => {
            s.vm.push(Ev { regs: vec![], lds: false, smem: false, store: true, buf: None });
            let data: Vec<R> = i
                .slots()
                .iter()
                .zip(&i.operands)
                .filter(|(sl, _)| sl.field == gemm_isa::table::Field::Vdata)
                .flat_map(|(_, o)| crate::program::regs_of(o))
                .collect();
            let _ = reads;
            s.exp.push(Ev { regs: data, lds: false, smem: false, store: true, buf: None });
        }
        Kind::DsRead => s.lgkm.push(Ev { regs: writes, lds: true, smem: false, store: false, buf: None }),
        Kind::DsWrite => s.lgkm.push(Ev { regs: vec![], lds: true, smem: false, store: false, buf: None }),
        Kind::Smem => s.lgkm.push(Ev { regs: writes, lds: false, smem: true, store: false, buf: None }),
        Kind::Barrier | Kind::Other => {}
    }
}

fn dedup(v: &mut Vec<State>) {
    let mut out: Vec<State> = vec![];
    for s in v.drain(..) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    *v = out;
}

/// Runs one block from `entry`, returning the exit states and the waits per item.
fn run_block(items: &[Item], rws: &[(Vec<R>, Vec<R>)], entry: &[State]) -> (Vec<State>, Vec<Wait>) {
    let mut states = entry.to_vec();
    if states.is_empty() {
        states.push(State::default());
    }
    let mut waits = vec![];
    let mut dma_in_flight = false;
    let (mut dma_into, mut publishes) = (None, None);
    for (it, rw) in items.iter().zip(rws) {
        let mut w = Wait::default();
        match it {
            Item::Note(Note::DmaMayStayInFlight) => dma_in_flight = true,
            Item::Note(Note::DmaInto(b)) => dma_into = Some(*b),
            Item::Note(Note::Publishes(b)) => publishes = Some(*b),
            _ => {}
        }
        if let Item::I(i) = it {
            if i.op == Op::S_WAITCNT {
                waits.push(w);
                continue;
            }
            let keep = std::mem::take(&mut dma_in_flight) && (i.op == Op::S_BARRIER || is_release(i));
            let publish = if i.op == Op::S_BARRIER { publishes.take() } else { None };
            let buf = if i.mods.lds { dma_into.take() } else { None };
            for s in &states {
                w.merge(required(s, i, rw, keep, publish));
            }
            for s in states.iter_mut() {
                apply_wait(s, w);
                issue(s, i, rw, buf);
            }
            if states.len() > 1 {
                dedup(&mut states);
            }
        }
        waits.push(w);
    }
    (states, waits)
}

/// Inserts the waits; returns how many `s_waitcnt` were added.
pub fn insert_waits(items: &mut Vec<Item>) -> usize {
    let cfg = Cfg::build(items);
    let rws: Vec<(Vec<R>, Vec<R>)> =
        items.iter().map(|it| if let Item::I(i) = it { reads_writes(i) } else { Default::default() }).collect();
    let nb = cfg.blocks.len();
    let mut entry: Vec<Vec<State>> = vec![vec![]; nb];
    entry[0] = vec![State::default()];
    let mut exits: Vec<Option<Vec<State>>> = vec![None; nb];
    let mut block_waits: Vec<Vec<Wait>> = vec![vec![]; nb];
    // Iterate to a fixed point; the waits of the last (unchanged) round are final.
    for _round in 0..64 {
        let mut changed = false;
        for b in 0..nb {
            if b != 0 {
                let mut e = vec![];
                for &p in &cfg.preds[b] {
                    if let Some(x) = &exits[p] {
                        e.extend(x.iter().cloned());
                    }
                }
                dedup(&mut e);
                if e != entry[b] {
                    entry[b] = e;
                    changed = true;
                }
            }
            let (s, e) = cfg.blocks[b];
            let (out, waits) = run_block(&items[s..e], &rws[s..e], &entry[b]);
            block_waits[b] = waits;
            if exits[b].as_ref() != Some(&out) {
                exits[b] = Some(out);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut out = Vec::with_capacity(items.len() + 64);
    let mut added = 0;
    for (b, waits) in block_waits.iter().enumerate() {
        let (s, e) = cfg.blocks[b];
        for (it, w) in items[s..e].iter().zip(waits.iter().copied()) {
            if !w.is_none() {
                out.push(Item::I(Inst::new(Op::S_WAITCNT, &[Operand::Imm(w.simm16() as i64)])));
                added += 1;
            }
            out.push(it.clone());
        }
    }
    *items = out;
    added
}
