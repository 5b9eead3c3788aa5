//! The workgroup engine: a seeded scheduler picks the next ready wave, memory operations
//! complete asynchronously (data lands in registers/LDS/memory at completion), and
//! `s_waitcnt` / `s_barrier` block until their condition holds.
//!
//! Completion order per counter follows what LLVM's `SIInsertWaitcnts.cpp` assumes for
//! gfx9 (`getVmemWaitEventType`: one event type `VMEM_ACCESS` without vscnt): vector-memory
//! loads and stores complete in one in-order stream, DS operations in order, scalar memory
//! loads in any order (ISA.md §3.1; [`Order::stream`]).

use crate::error::{Fault, FaultKind};
use crate::hazard::HazardState;
use crate::memory::MemView;
use crate::program::Program;
use crate::race::{AccessRec, Conflict, RaceDetector};
use crate::report::{Checker, Kind, Report, Reports};
use crate::wave::{Wave, WaveState, LANES};
use crate::{InstCounts, Mode, Schedule};
use gemm_isa::{Arch, Format, Inst, Op, RegFile};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::{HashMap, VecDeque};

pub(crate) type R<T> = Result<T, FaultKind>;

/// Which `s_waitcnt` counter tracks an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    Vm,
    Lgkm,
}

/// Ordering class of a memory operation; [`Order::stream`] says which complete in issue order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    VmLoad,
    VmStore,
    Lds,
    Smem,
}

/// A stream of memory operations that complete in issue order (README "Completion order").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stream {
    /// Vector loads, stores, atomics and LDS-DMA of every address space, scratch included.
    Vm = 0,
    /// DS operations.
    Lds = 1,
}

impl Stream {
    pub const COUNT: usize = 2;
}

impl Order {
    pub fn counter(self) -> Counter {
        match self {
            Order::VmLoad | Order::VmStore => Counter::Vm,
            Order::Lds | Order::Smem => Counter::Lgkm,
        }
    }

    /// The in-order stream of this class, shared by the functional scheduler and the timed
    /// engine. gfx9 has one VM_CNT for loads and stores (no vscnt before gfx10, ISA.md §3.1)
    /// and it counts down in issue order: LLVM's SIInsertWaitcnts gives every VMEM access
    /// the one event type VMEM_ACCESS when the target has no vscnt (getVmemWaitEventType),
    /// so `s_waitcnt vmcnt(N)` after a load and N younger stores covers the load, and a
    /// spill reload issued after its `scratch_store` without a wait reads the stored value
    /// (AMDGPUUsage, "Memory Model GFX942": vector memory and LDS operations are performed
    /// wavefront-wide and their completion is reported to the wave in execution order).
    /// SMEM returns out of order (ISA.md §3.1): no stream.
    pub fn stream(self) -> Option<Stream> {
        match self {
            Order::VmLoad | Order::VmStore => Some(Stream::Vm),
            Order::Lds => Some(Stream::Lds),
            Order::Smem => None,
        }
    }
}

/// Where an access goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    Global,
    Lds,
}

/// How loaded bytes become register contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conv {
    /// Whole dwords.
    Dwords,
    U8,
    I8,
    U16,
    I16,
    /// 16-bit result into the low half, high half kept (`_d16`).
    D16Lo {
        bytes: u8,
        signed: bool,
    },
    /// 16-bit result into the high half, low half kept (`_d16_hi`).
    D16Hi {
        bytes: u8,
        signed: bool,
    },
    /// gfx950 `ds_read_b64_tr_b<bits>`: 64 bits per lane, transposed across each group of
    /// 16 lanes (`vmem::transpose_b64`).
    Transpose {
        bits: u8,
    },
}

/// Atomic read-modify-write operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    Sub,
    Rsub,
    Swap,
    Cmpswap,
    Smin,
    Umin,
    Smax,
    Umax,
    And,
    Or,
    Xor,
    Inc,
    Dec,
    AddF32,
    MinF32,
    MaxF32,
    AddF64,
    MinF64,
    MaxF64,
    PkAddF16,
    PkAddBf16,
}

/// One lane's part of a memory operation.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    pub lane: u8,
    pub addr: u64,
    /// Bytes accessed.
    pub size: u8,
    /// First destination dword inside the destination tuple.
    pub reg: u16,
    /// Bit `i` set: dword `i` is out of range (load gives 0, store is dropped).
    pub oob: u8,
    /// Store/atomic source data (dwords), atomic compare value in `cmp`.
    pub data: [u32; 4],
    pub cmp: [u32; 2],
    /// LDS byte address for LDS-DMA.
    pub lds: u32,
}

impl Access {
    pub fn new(lane: usize, addr: u64, size: u8) -> Access {
        Access { lane: lane as u8, addr, size, reg: 0, oob: 0, data: [0; 4], cmp: [0; 2], lds: 0 }
    }
}

/// What happens when an operation completes.
#[derive(Clone, Debug)]
pub enum OpKind {
    Load {
        space: Space,
        acc: Vec<Access>,
        file: RegFile,
        base: u16,
        conv: Conv,
    },
    Store {
        space: Space,
        acc: Vec<Access>,
    },
    Atomic {
        space: Space,
        op: AtomicOp,
        acc: Vec<Access>,
        ret: Option<(RegFile, u16)>,
        dwords: u8,
    },
    /// Global -> LDS (`buffer_load ... lds`, `global_load_lds_*`).
    LdsDma {
        acc: Vec<Access>,
    },
    /// Scalar load into SGPRs starting at operand code `base`.
    SLoad {
        addr: u64,
        dwords: u8,
        base: u16,
    },
    /// A DS operation that only moves register values (`ds_bpermute_b32`...).
    RegWrite {
        file: RegFile,
        index: u16,
        mask: u64,
        vals: Vec<u32>,
    },
}

#[derive(Clone, Debug)]
pub struct MemOp {
    pub seq: u64,
    pub order: Order,
    pub complete_at: u64,
    pub done: bool,
    pub pc: u64,
    pub kind: OpKind,
    /// Registers this operation writes (for the wait checker).
    pub dst: Vec<(RegFile, u16)>,
    /// Race-detector clock at issue (LDS operations only).
    pub vc: Option<Vec<u32>>,
    /// `s_barrier`s the wave had passed when it issued the operation.
    pub barriers: u64,
}

/// Per-wave scheduling state.
#[derive(Debug, Default)]
pub struct WaveSched {
    pub ready_at: u64,
    pub pending: VecDeque<MemOp>,
    pub seq: u64,
    /// Unsatisfied `s_waitcnt` limits (vm, lgkm).
    pub wait: Option<(u32, u32)>,
    /// Registers written by operations not yet waited for -> op seq.
    pub inflight: HashMap<(RegFile, u16), (u64, u64)>,
    /// Last completion time per in-order stream ([`Order::stream`]).
    pub last_done: [u64; Stream::COUNT],
    pub instructions: u64,
    /// `s_barrier`s executed, and the PC of the latest (for the barrier-count checker).
    pub barriers: u64,
    pub barrier_pc: u64,
    /// PC of the wave's `s_endpgm` once it ended.
    pub end_pc: u64,
}

/// Everything of a workgroup except its waves.
pub struct Env<'a> {
    pub arch: Arch,
    pub prog: &'a Program,
    pub mem: &'a MemView,
    pub kernel: &'a str,
    pub wg: [u32; 3],
    pub wg_size: [u32; 3],
    pub grid_wgs: [u32; 3],
    pub kernarg: u64,
    pub lds: Vec<u8>,
    pub now: u64,
    pub rng: ChaCha8Rng,
    pub mode: Mode,
    pub race: Option<RaceDetector>,
    pub reports: Reports,
    pub counts: InstCounts,
    pub sched: Vec<WaveSched>,
    pub hazard: Vec<HazardState>,
    pub max_instructions: u64,
    /// Longest-latency: whether an atomic wrote each LDS dword last (`Workgroup::note_lds`).
    pub lds_atomic: Vec<bool>,
}

pub struct Workgroup<'a> {
    pub waves: Vec<Wave>,
    pub env: Env<'a>,
}

impl<'a> Env<'a> {
    pub fn fault(&self, w: &Wave, kind: FaultKind) -> Fault {
        Fault {
            kernel: self.kernel.to_string(),
            pc: w.pc,
            inst: self.prog.text_at(w.pc),
            workgroup: self.wg,
            wave: w.id,
            kind,
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn report(
        &mut self,
        checker: Checker,
        kind: Kind,
        wave: usize,
        pc: u64,
        addr: Option<u64>,
        other: Option<(usize, u64)>,
        message: String,
    ) {
        let other = other.map(|(w, p)| (w, p, self.prog.text_at(p)));
        let r = Report {
            checker,
            kind,
            kernel: self.kernel.to_string(),
            workgroup: self.wg,
            wave,
            pc,
            inst: self.prog.text_at(pc),
            addr,
            other,
            message,
            count: 1,
        };
        self.reports.add(r);
    }

    fn latency(&mut self, order: Order) -> u64 {
        match self.mode {
            Mode::LongestLatency => u64::MAX,
            Mode::Fair | Mode::Reversed => match order {
                Order::VmLoad | Order::VmStore => 120,
                Order::Lds => 16,
                Order::Smem => 40,
            },
            Mode::Random => match order {
                Order::VmLoad | Order::VmStore => self.rng.gen_range(1..=900),
                Order::Lds => self.rng.gen_range(1..=80),
                Order::Smem => self.rng.gen_range(1..=300),
            },
        }
    }

    /// Queues a memory operation of wave `w` (issued now).
    pub fn issue(&mut self, w: &Wave, order: Order, kind: OpKind, dst: Vec<(RegFile, u16)>) {
        let wi = w.id;
        let lat = self.latency(order);
        let mut at = self.now.saturating_add(lat);
        if let Some(k) = order.stream() {
            let last = &mut self.sched[wi].last_done[k as usize];
            at = at.max(*last);
            *last = at;
        }
        let touches_lds = matches!(&kind, OpKind::LdsDma { .. })
            || matches!(
                &kind,
                OpKind::Load { space: Space::Lds, .. }
                    | OpKind::Store { space: Space::Lds, .. }
                    | OpKind::Atomic { space: Space::Lds, .. }
            );
        let vc = if touches_lds { self.race.as_ref().map(|r| r.snapshot(wi)) } else { None };
        let s = &mut self.sched[wi];
        s.seq += 1;
        let seq = s.seq;
        for d in &dst {
            s.inflight.insert(*d, (seq, w.pc));
        }
        let barriers = s.barriers;
        s.pending.push_back(MemOp { seq, order, complete_at: at, done: false, pc: w.pc, kind, dst, vc, barriers });
    }

    /// Reports use of registers with an un-waited write pending.
    pub fn check_regs(&mut self, w: &Wave, regs: &[(RegFile, u16)], writing: bool) {
        self.check_regs_as(w, regs, writing, None);
    }

    /// [`Env::check_regs`] for the destination of a memory operation of class `order`
    /// about to issue: a register that an older operation of the same in-order class
    /// (`Order::VmLoad`: vector loads return in issue order, README "Completion order")
    /// still has to write is no finding, because the older data lands first and the newer
    /// overwrites it. LLVM's `SIInsertWaitcnts` inserts no wait for that write-after-write
    /// either (VMEM loads of one VMEM type complete in order).
    pub fn check_regs_as(&mut self, w: &Wave, regs: &[(RegFile, u16)], writing: bool, order: Option<Order>) {
        let mut hits = Vec::new();
        for r in regs {
            if let Some(&(seq, pc)) = self.sched[w.id].inflight.get(r) {
                let older = self.sched[w.id].pending.iter().find(|op| op.seq == seq).map(|op| op.order);
                if writing && order == Some(Order::VmLoad) && older == Some(Order::VmLoad) {
                    continue;
                }
                hits.push((*r, pc));
            }
        }
        for (r, pc) in hits {
            let name = match r.0 {
                RegFile::Sgpr => format!("s{}", r.1),
                RegFile::Agpr => format!("a{}", r.1),
                _ => format!("v{}", r.1),
            };
            self.report(
                Checker::Wait,
                Kind::RegisterBeforeWait,
                w.id,
                w.pc,
                Some(u64::from(r.1)),
                Some((w.id, pc)),
                format!(
                    "{} {name} while the memory operation that writes it has not been waited for (missing s_waitcnt)",
                    if writing { "writes" } else { "reads" }
                ),
            );
        }
    }
}

impl<'a> Workgroup<'a> {
    /// Performs (completes) operation `op` of wave `wi`.
    fn perform(&mut self, wi: usize, op: &MemOp) -> Result<(), Fault> {
        let w = &mut self.waves[wi];
        let env = &mut self.env;
        crate::vmem::perform(w, env, op).map_err(|k| {
            let mut f = env.fault(w, k);
            f.pc = op.pc;
            f.inst = env.prog.text_at(op.pc);
            f
        })
    }

    /// Completes every operation due by `now`, in (time, wave, seq) order.
    pub(crate) fn retire_due(&mut self) -> Result<(), Fault> {
        loop {
            let mut best: Option<(u64, usize, u64)> = None;
            for (wi, s) in self.env.sched.iter().enumerate() {
                for op in s.pending.iter().filter(|o| !o.done && o.complete_at <= self.env.now) {
                    let k = (op.complete_at, wi, op.seq);
                    if best.is_none_or(|b| k < b) {
                        best = Some(k);
                    }
                }
            }
            let Some((_, wi, seq)) = best else { return Ok(()) };
            self.complete(wi, seq)?;
        }
    }

    pub(crate) fn complete(&mut self, wi: usize, seq: u64) -> Result<(), Fault> {
        let Some(i) = self.env.sched[wi].pending.iter().position(|o| o.seq == seq) else { return Ok(()) };
        let op = self.env.sched[wi].pending[i].clone();
        self.env.sched[wi].pending[i].done = true;
        self.perform(wi, &op)?;
        if self.env.mode == Mode::LongestLatency {
            self.note_lds(&op.kind);
        }
        Ok(())
    }

    /// Whether wave `wi`'s pending wait is satisfied; in the longest-latency mode, forces
    /// the fewest completions that satisfy it (vector memory oldest first, as its one
    /// in-order stream demands; LDS before SMEM, SMEM youngest first: the adversarial
    /// choices the ordering rules allow).
    pub(crate) fn wait_satisfied(&mut self, wi: usize) -> Result<bool, Fault> {
        let Some((vm, lgkm)) = self.env.sched[wi].wait else { return Ok(true) };
        let count =
            |s: &WaveSched, c: Counter| s.pending.iter().filter(|o| !o.done && o.order.counter() == c).count() as u32;
        if self.env.mode == Mode::LongestLatency {
            for (c, lim) in [(Counter::Vm, vm), (Counter::Lgkm, lgkm)] {
                while count(&self.env.sched[wi], c) > lim {
                    let s = &self.env.sched[wi];
                    let pick = |order: Order, youngest: bool| {
                        let mut it = s.pending.iter().filter(|o| !o.done && o.order == order);
                        if youngest {
                            it.next_back().map(|o| o.seq)
                        } else {
                            it.next().map(|o| o.seq)
                        }
                    };
                    let seq = match c {
                        // One in-order VM_CNT stream for loads and stores (see `issue`).
                        Counter::Vm => {
                            s.pending.iter().find(|o| !o.done && o.order.counter() == Counter::Vm).map(|o| o.seq)
                        }
                        Counter::Lgkm => pick(Order::Lds, false).or_else(|| pick(Order::Smem, true)),
                    };
                    match seq {
                        Some(seq) => self.complete(wi, seq)?,
                        None => break,
                    }
                }
            }
        }
        let s = &self.env.sched[wi];
        if count(s, Counter::Vm) > vm || count(s, Counter::Lgkm) > lgkm {
            return Ok(false);
        }
        // Satisfied: the operations the wait guarantees are those of each counter except
        // the youngest `limit` (in-order semantics), and only those that are done.
        let mut waited = Vec::new();
        for (c, lim) in [(Counter::Vm, vm), (Counter::Lgkm, lgkm)] {
            let ops: Vec<&MemOp> = s.pending.iter().filter(|o| o.order.counter() == c).collect();
            let keep = lim as usize;
            if ops.len() > keep {
                for o in &ops[..ops.len() - keep] {
                    if o.done {
                        waited.push(o.seq);
                    }
                }
            }
        }
        let s = &mut self.env.sched[wi];
        s.pending.retain(|o| !waited.contains(&o.seq));
        s.inflight.retain(|_, (seq, _)| !waited.contains(seq));
        s.wait = None;
        if let Some(r) = self.env.race.as_mut() {
            r.waited(wi, &waited);
        }
        Ok(true)
    }

    /// The barrier-count checker. A workgroup barrier releases when every wave that has not
    /// ended has arrived (ISA.md §3.2; ended waves leave the barrier's count), so hardware
    /// never hangs on a wave that skipped a barrier: the barrier simply pairs with whatever
    /// the others reach next. The 8-wave ping-pong uses that on purpose (a conditional
    /// `s_barrier` by one group before the loop, by the other after it, seed 002 §4.2), but
    /// both groups still run the same number of barriers. When a barrier is released
    /// because waves *ended* while others still wait, the counts differ and the barriers
    /// pair up across program points the code does not intend (a stagger barrier on the
    /// wrong side): reported here, naming the waiting and the ended waves.
    fn check_barrier_counts(&mut self, arrived: &[usize]) {
        let ended: Vec<usize> = (0..self.waves.len()).filter(|&i| self.waves[i].state == WaveState::Ended).collect();
        let Some(&first_ended) = ended.first() else { return };
        let ended_counts: Vec<u64> = ended.iter().map(|&i| self.env.sched[i].barriers).collect();
        for &wi in arrived {
            let (n, pc) = (self.env.sched[wi].barriers, self.env.sched[wi].barrier_pc);
            let msg = format!(
                "s_barrier released only because wave(s) {ended:?} ended after {ended_counts:?} s_barrier while \
                 this wave waits at its s_barrier number {n}: the waves run different numbers of barriers, so \
                 barriers pair up across program points (a conditional barrier on the wrong side?)"
            );
            let end_pc = self.env.sched[first_ended].end_pc;
            self.env.report(Checker::Barrier, Kind::BarrierMismatch, wi, pc, None, Some((first_ended, end_pc)), msg);
        }
    }

    /// Longest-latency: whether wave `wi` could issue now but its `s_waitcnt` would force a
    /// plain LDS read of data (a dword not last written by an atomic) to complete.
    fn defers_data_reads(&mut self, wi: usize) -> bool {
        let s = &self.env.sched[wi];
        let Some((_, lgkm)) = s.wait else { return false };
        if self.waves[wi].state != WaveState::Running || s.ready_at > self.env.now {
            return false;
        }
        let lgkm_pending = s.pending.iter().filter(|o| !o.done && o.order.counter() == Counter::Lgkm).count() as u32;
        if lgkm_pending <= lgkm {
            return false;
        }
        let atomic = &self.env.lds_atomic;
        s.pending.iter().filter(|o| !o.done).any(|o| match lds_footprint(&o.kind) {
            Some((r, false)) => r
                .iter()
                .any(|&(a, b)| (a / 4..b.div_ceil(4)).any(|d| !atomic.get(d as usize).copied().unwrap_or(false))),
            _ => false,
        })
    }

    fn ready(&mut self, wi: usize) -> Result<bool, Fault> {
        let w = &self.waves[wi];
        if w.state != WaveState::Running || self.env.sched[wi].ready_at > self.env.now {
            return Ok(false);
        }
        self.wait_satisfied(wi)
    }

    /// Runs the workgroup to completion.
    pub fn run(&mut self, policy: Schedule) -> Result<(), Fault> {
        let n = self.waves.len();
        let mut rr = 0usize;
        loop {
            if self.waves.iter().all(|w| w.state == WaveState::Ended) {
                // Let outstanding operations land.
                for wi in 0..n {
                    let seqs: Vec<u64> = self.env.sched[wi].pending.iter().filter(|o| !o.done).map(|o| o.seq).collect();
                    for s in seqs {
                        self.complete(wi, s)?;
                    }
                }
                return Ok(());
            }
            self.retire_due()?;
            // Barrier release: every wave that has not ended has arrived.
            let at_barrier: Vec<usize> = (0..n).filter(|&i| self.waves[i].state == WaveState::AtBarrier).collect();
            if !at_barrier.is_empty() && self.waves.iter().all(|w| w.state != WaveState::Running) {
                for &i in &at_barrier {
                    self.waves[i].state = WaveState::Running;
                }
                if let Some(r) = self.env.race.as_mut() {
                    r.barrier(&at_barrier);
                }
                self.check_barrier_counts(&at_barrier);
            }
            // Longest-latency: a wave whose `s_waitcnt` would force LDS data reads is served
            // only when no other wave can issue, so its reads stay in flight as long as the
            // workgroup's progress allows (no ISA rule bounds an LDS latency; other waves
            // keep issuing meanwhile, as they do on hardware while a wave is stalled), and
            // a racing write of another wave can be issued before them
            // (`perform_ahead_of_racing`). Spin-wait reads of dwords an atomic wrote are
            // not deferred: they synchronise, and deferring them would hide a wave that
            // waits for too early a phase behind the progress of the others.
            let longest = self.env.mode == Mode::LongestLatency;
            let mut ready = Vec::with_capacity(n);
            let mut deferred = Vec::new();
            for wi in 0..n {
                if longest && self.defers_data_reads(wi) {
                    deferred.push(wi);
                } else if self.ready(wi)? {
                    ready.push(wi);
                }
            }
            let mut forced = false;
            if ready.is_empty() && !deferred.is_empty() {
                ready = deferred;
                forced = true;
            }
            if ready.is_empty() {
                let next_op = self
                    .env
                    .sched
                    .iter()
                    .flat_map(|s| s.pending.iter().filter(|o| !o.done).map(|o| o.complete_at))
                    .filter(|&t| t != u64::MAX)
                    .min();
                let next_ready = (0..n)
                    .filter(|&i| self.waves[i].state == WaveState::Running && self.env.sched[i].ready_at > self.env.now)
                    .map(|i| self.env.sched[i].ready_at)
                    .min();
                match next_op.into_iter().chain(next_ready).min() {
                    Some(t) => {
                        self.env.now = t.max(self.env.now + 1);
                        continue;
                    }
                    None => {
                        let w = self.waves.iter().find(|w| w.state != WaveState::Ended).unwrap_or(&self.waves[0]);
                        let what = format!(
                            "no wave can run: {} at a barrier, {} ended",
                            at_barrier.len(),
                            self.waves.iter().filter(|w| w.state == WaveState::Ended).count()
                        );
                        return Err(self.env.fault(w, FaultKind::Deadlock(what)));
                    }
                }
            }
            let wi = match policy.mode {
                Mode::Fair | Mode::LongestLatency => {
                    let pick = ready.iter().copied().find(|&i| i >= rr).unwrap_or(ready[0]);
                    rr = pick + 1;
                    pick
                }
                Mode::Reversed => *ready.last().unwrap_or(&ready[0]),
                Mode::Random => ready[self.env.rng.gen_range(0..ready.len())],
            };
            if forced && !self.wait_satisfied(wi)? {
                continue;
            }
            self.step(wi)?;
            self.env.now += 1;
        }
    }

    /// Longest-latency: an LDS access of wave `wi` issued after `seq_before` that races
    /// with an access of another wave still in flight (same bytes, one reading and one
    /// writing, neither an atomic) is performed now, ahead of it (with what precedes it in
    /// its in-order stream): the pair lands in the order opposite to its issue. A read
    /// issued while another wave's write of its bytes is in flight misses that write; a
    /// write issued while another wave's read of its bytes is in flight lands before it
    /// (the read sees the new data) — unless that read's wave has passed an `s_barrier`
    /// since issuing it (the LDS took the request before the barrier released).
    ///
    /// Either order is one hardware permits: an access still in flight has not been
    /// waited for, so no barrier or signal orders it against the other wave's access; the
    /// LDS performs operations of different waves in any order (AMDGPUUsage, "Memory Model
    /// GFX942": the LDS has several request queues, so "the LDS operations performed by
    /// different wavefronts of a work-group can be reordered relative to each other"), and
    /// an LDS-DMA's data lands at any time between issue and its `vmcnt` decrement. Atomics
    /// are left to their waits: they synchronise (README "LDS atomics synchronise").
    fn perform_ahead_of_racing(&mut self, wi: usize, seq_before: u64) -> Result<(), Fault> {
        let new: Vec<(u64, LdsFootprint)> = self.env.sched[wi]
            .pending
            .iter()
            .filter(|o| o.seq > seq_before && !o.done)
            .filter_map(|o| lds_footprint(&o.kind).map(|f| (o.seq, f)))
            .collect();
        for (seq, (ranges, writes)) in new {
            let races = self.env.sched.iter().enumerate().filter(|(other, _)| *other != wi).any(|(_, s)| {
                s.pending.iter().filter(|o| !o.done).any(|o| {
                    lds_footprint(&o.kind).is_some_and(|(r, w)| {
                        w != writes && ranges_overlap(&ranges, &r) && (!writes || o.barriers == s.barriers)
                    })
                })
            });
            if races {
                self.complete_through(wi, seq)?;
            }
        }
        Ok(())
    }

    /// Completes wave `wi`'s operation `seq` and, first, the older operations of its
    /// in-order stream.
    fn complete_through(&mut self, wi: usize, seq: u64) -> Result<(), Fault> {
        let Some(stream) = self.env.sched[wi].pending.iter().find(|o| o.seq == seq).map(|o| o.order.stream()) else {
            return Ok(());
        };
        let due: Vec<u64> = self.env.sched[wi]
            .pending
            .iter()
            .filter(|o| !o.done && (o.seq == seq || (o.seq < seq && stream.is_some() && o.order.stream() == stream)))
            .map(|o| o.seq)
            .collect();
        for q in due {
            self.complete(wi, q)?;
        }
        Ok(())
    }

    /// Longest-latency bookkeeping for [`Self::defers_data_reads`]: whether an atomic wrote
    /// each LDS dword last.
    fn note_lds(&mut self, kind: &OpKind) {
        let dwords = self.env.lds.len().div_ceil(4);
        if self.env.lds_atomic.len() < dwords {
            self.env.lds_atomic.resize(dwords, false);
        }
        let (ranges, atomic) = match kind {
            OpKind::Atomic { space: Space::Lds, acc, dwords: n, .. } => (
                acc.iter().filter(|a| a.oob == 0).map(|a| (a.addr as u32, a.addr as u32 + 4 * u32::from(*n))).collect(),
                true,
            ),
            _ => match lds_footprint(kind) {
                Some((r, true)) => (r, false),
                _ => return,
            },
        };
        for (a, b) in ranges {
            for d in (a / 4) as usize..(b.div_ceil(4) as usize).min(dwords) {
                self.env.lds_atomic[d] = atomic;
            }
        }
    }

    /// Executes one instruction of wave `wi`.
    fn step(&mut self, wi: usize) -> Result<(), Fault> {
        let pc = self.waves[wi].pc;
        let prog = self.env.prog;
        let Some(&idx) = prog.index.get(&pc) else {
            let why = match &prog.decode_stop {
                Some((o, e)) if *o == pc => e.clone(),
                // Decoding stops at the first word it cannot read: name it, it is the cause.
                Some((o, e)) if *o < pc => {
                    format!("no decoded instruction at offset {pc:#x} (decoding stopped at {o:#x}: {e})")
                }
                _ => format!("no decoded instruction at offset {pc:#x}"),
            };
            return Err(self.env.fault(&self.waves[wi], FaultKind::Decode(why)));
        };
        let (_, inst) = &prog.insts[idx];
        let next = prog.insts.get(idx + 1).map(|(o, _)| *o).unwrap_or(prog.code.len() as u64);
        self.env.sched[wi].instructions += 1;
        if self.env.sched[wi].instructions > self.env.max_instructions {
            return Err(self.env.fault(&self.waves[wi], FaultKind::InstructionLimit(self.env.max_instructions)));
        }
        self.env.counts.add(inst);
        let seq_before = self.env.sched[wi].seq;
        crate::hazard::check(&mut self.env, &self.waves[wi], inst);
        let w = &mut self.waves[wi];
        let env = &mut self.env;
        env.sched[wi].ready_at = env.now + 1;
        let res = match inst.op.def().format {
            Format::Sopp => sopp(w, env, inst, next),
            Format::Sop1 | Format::Sop2 | Format::Sopk | Format::Sopc => {
                crate::salu::exec(w, env, inst, next).map(|_| ())
            }
            Format::Smem => crate::vmem::smem(w, env, inst).map(|_| w.pc = next),
            Format::Vop1 | Format::Vop2 | Format::Vopc | Format::Vop3 | Format::Vop3p => {
                crate::valu::exec(w, env, inst).map(|_| w.pc = next)
            }
            Format::Mai => crate::mfma::exec(w, env, inst).map(|_| w.pc = next),
            Format::Ds => crate::lds::exec(w, env, inst).map(|_| w.pc = next),
            Format::Mubuf | Format::Global | Format::Flat | Format::Scratch => {
                crate::vmem::exec(w, env, inst).map(|_| w.pc = next)
            }
        };
        res.map_err(|k| env.fault(&self.waves[wi], k))?;
        if self.env.mode == Mode::LongestLatency {
            self.perform_ahead_of_racing(wi, seq_before)?;
        }
        // Longest-latency: what an ended wave left in flight lands when it ends (the mode's
        // contract), not only once every wave ended: a wave spinning on a flag another wave
        // set just before `s_endpgm` must see it.
        if self.env.mode == Mode::LongestLatency && self.waves[wi].state == WaveState::Ended {
            let seqs: Vec<u64> = self.env.sched[wi].pending.iter().filter(|o| !o.done).map(|o| o.seq).collect();
            for s in seqs {
                self.complete(wi, s)?;
            }
        }
        Ok(())
    }
}

/// The LDS bytes a plain LDS access touches, as sorted `[start, end)` ranges, and whether
/// it writes them.
type LdsFootprint = (Vec<(u32, u32)>, bool);

/// The footprint of a plain (non-atomic) LDS access; `None` for anything else.
fn lds_footprint(kind: &OpKind) -> Option<LdsFootprint> {
    let (acc, writes, min) = match kind {
        OpKind::Load { space: Space::Lds, acc, .. } => (acc, false, 1),
        OpKind::Store { space: Space::Lds, acc } => (acc, true, 1),
        // LDS-DMA writes at least a dword per lane (sub-dword sources are zero-extended).
        OpKind::LdsDma { acc } => (acc, true, 4),
        _ => return None,
    };
    let at = |a: &Access| if matches!(kind, OpKind::LdsDma { .. }) { a.lds } else { a.addr as u32 };
    let mut r: Vec<(u32, u32)> =
        acc.iter().map(|a| (at(a), at(a).saturating_add(u32::from(a.size).max(min)))).collect();
    r.sort_unstable();
    Some((r, writes))
}

/// Whether two sorted range lists share a byte.
fn ranges_overlap(a: &[(u32, u32)], b: &[(u32, u32)]) -> bool {
    let (mut i, mut j) = (0, 0);
    let (mut end_a, mut end_b) = (0u32, 0u32);
    while i < a.len() && j < b.len() {
        if a[i].0 <= b[j].0 {
            if a[i].0 < end_b {
                return true;
            }
            end_a = end_a.max(a[i].1);
            i += 1;
        } else {
            if b[j].0 < end_a {
                return true;
            }
            end_b = end_b.max(b[j].1);
            j += 1;
        }
    }
    false
}

/// SOPP: control flow, waits, barriers, scheduling hints.
pub(crate) fn sopp(w: &mut Wave, env: &mut Env, inst: &Inst, next: u64) -> R<()> {
    let imm = match inst.operands.first() {
        Some(gemm_isa::Operand::Imm(i)) => *i,
        _ => 0,
    };
    let target = (next as i64 + 4 * (imm as i16 as i64)) as u64;
    let wi = w.id;
    let pc = w.pc;
    w.pc = next;
    match inst.op {
        Op::S_NOP => env.sched[wi].ready_at = env.now + (imm as u64 & 0xF) + 1,
        Op::S_ENDPGM | Op::S_ENDPGM_SAVED => {
            w.state = WaveState::Ended;
            env.sched[wi].end_pc = pc;
        }
        Op::S_BRANCH => w.pc = target,
        Op::S_CBRANCH_SCC0 => {
            if !w.scc {
                w.pc = target
            }
        }
        Op::S_CBRANCH_SCC1 => {
            if w.scc {
                w.pc = target
            }
        }
        Op::S_CBRANCH_VCCZ => {
            if w.vcc() == 0 {
                w.pc = target
            }
        }
        Op::S_CBRANCH_VCCNZ => {
            if w.vcc() != 0 {
                w.pc = target
            }
        }
        Op::S_CBRANCH_EXECZ => {
            if w.exec() == 0 {
                w.pc = target
            }
        }
        Op::S_CBRANCH_EXECNZ => {
            if w.exec() != 0 {
                w.pc = target
            }
        }
        Op::S_WAITCNT => {
            let v = imm as u32;
            let vm = (v & 0xF) | ((v >> 14) & 3) << 4;
            let lgkm = (v >> 8) & 0xF;
            env.sched[wi].wait = Some((vm, lgkm));
        }
        Op::S_BARRIER => {
            w.state = WaveState::AtBarrier;
            env.sched[wi].barriers += 1;
            env.sched[wi].barrier_pc = pc;
        }
        Op::S_SLEEP => env.sched[wi].ready_at = env.now + 64 * (imm as u64 & 0x7F).max(1),
        Op::S_SETPRIO
        | Op::S_ICACHE_INV
        | Op::S_TTRACEDATA
        | Op::S_INCPERFLEVEL
        | Op::S_DECPERFLEVEL
        | Op::S_WAKEUP => {}
        Op::S_SET_GPR_IDX_OFF => {}
        Op::S_TRAP | Op::S_SETHALT => return Err(FaultKind::Trap),
        Op::S_SENDMSG | Op::S_SENDMSGHALT => {}
        op => return Err(FaultKind::Unsupported(format!("{} (SOPP)", op.name()))),
    }
    Ok(())
}

/// A seeded RNG for workgroup `wg` of a launch.
pub fn rng_for(seed: u64, wg: [u32; 3]) -> ChaCha8Rng {
    let mix = seed
        ^ (u64::from(wg[0]) << 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ u64::from(wg[1]).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ u64::from(wg[2]).wrapping_mul(0x1656_67B1_9E37_79F9);
    ChaCha8Rng::seed_from_u64(mix)
}

/// Reports for a race-detector conflict of an access of wave `w` at `pc` (`dma`: the
/// access is an LDS-DMA write). The message says which side is asynchronous, because an
/// LDS-DMA write lands when the memory system delivers it, not at issue (ISA.md §2.4):
/// a read that runs before the DMA lands sees the old data, so an un-waited DMA shows up
/// as a read before it (read-after-write) or as the DMA landing on data already read
/// (write-after-read).
pub fn race_report(env: &mut Env, w: usize, pc: u64, addr: u32, c: Conflict, dma: bool) {
    let (kind, other, msg): (Kind, Option<AccessRec>, &str) = match c {
        Conflict::Uninit => (
            Kind::UninitializedRead,
            None,
            "read of LDS never written in this launch (or before an LDS-DMA to it landed)",
        ),
        Conflict::Raw(p) if p.dma => (
            Kind::ReadAfterWrite,
            Some(p),
            "LDS read not ordered after the LDS-DMA write it may read: the DMA's wave has not waited for it \
             (s_waitcnt vmcnt) before an s_barrier both waves passed",
        ),
        Conflict::Raw(p) => (
            Kind::ReadAfterWrite,
            Some(p),
            "LDS read not ordered after the write it may read (missing s_waitcnt or s_barrier)",
        ),
        Conflict::War(p) if dma => (
            Kind::WriteAfterRead,
            Some(p),
            "LDS-DMA write not ordered with a read of the same data: the read may see the old or the new \
             values (the DMA is issued too early, or not waited with s_waitcnt vmcnt before an s_barrier)",
        ),
        Conflict::War(p) => {
            (Kind::WriteAfterRead, Some(p), "LDS write may overwrite data another access has not finished reading")
        }
        Conflict::Waw(p) => (Kind::WriteAfterWrite, Some(p), "two LDS writes with no order between them"),
    };
    env.report(
        Checker::Race,
        kind,
        w,
        pc,
        Some(u64::from(addr)),
        other.map(|p| (p.wave as usize, p.pc)),
        msg.to_string(),
    );
}

/// Lanes a vector memory instruction touches.
pub fn active(w: &Wave) -> impl Iterator<Item = usize> + '_ {
    let e = w.exec();
    (0..LANES).filter(move |l| e >> l & 1 == 1)
}

impl Env<'_> {
    /// Device address the code is taken to live at (for `s_getpc_b64`).
    pub fn prog_base(&self) -> u64 {
        0x7F00_0000_0000
    }
}
