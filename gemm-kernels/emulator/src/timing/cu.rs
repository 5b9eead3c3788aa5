//! The timed compute unit: 4 SIMDs, each considered for issue once every `issue_period`
//! clocks (SIMD `s` at clocks `t ≡ s mod 4`); in its slot a SIMD issues at most one
//! instruction per wave and one per functional unit (VALU, MFMA, SALU, scalar memory,
//! vector memory, LDS, branch), choosing among ready waves by `s_setprio` priority, then
//! age (GCN white paper's issue rules; params.rs). Instructions run functionally as they
//! issue (the emulator's own semantics: addresses, bank conflicts and branches are real);
//! this file only adds time:
//!
//! * VALU: the SIMD's VALU is busy `valu_cycles` (wave64 = 4 passes of SIMD16).
//! * MFMA: the matrix pipe is busy `passes × 4` clocks; issuing takes the VALU port for one
//!   pass (the calculator's VALU co-execution figures). A later MFMA that accumulates into
//!   exactly the same registers (srcC = previous vDst) issues as soon as the pipe is free
//!   (back-to-back accumulation needs no wait states, LLVM GCNHazardRecognizer); any other
//!   read of an MFMA result waits `(wait states + 1) × 4` clocks from the MFMA's issue,
//!   with the wait states of `hazard::mfma_result_wait_states` (LLVM's rules).
//! * LDS: one pipe per CU; an access is served in bank phases (`lds_banks.rs`), after
//!   whatever the pipe is still serving, then `lds_latency`.
//! * Vector memory: `memsys.rs` (address rate, L1, L2/fabric/MALL/HBM shares, latencies).
//!   LDS-DMA data also takes the LDS pipe when it lands.
//! * `s_waitcnt`, `s_barrier` (released `barrier_cycles` after the last arrival), `s_nop N`
//!   (N+1 wait states of 4 clocks), `s_sleep N` (64·N clocks), `s_setprio`, `s_endpgm`
//!   (the wave ends when its MFMAs and memory operations have finished).
//!
//! Memory operations complete in the order the functional engine requires (loads among
//! loads, stores among stores, DS in order), at the clock this model gives them.

use super::lds_banks;
use super::memsys::{HitRates, MemSystem, Traffic};
use super::params::Params;
use super::setup::KernelSetup;
use crate::error::{Fault, FaultKind};
use crate::mfma::Shape;
use crate::scheduler::{Counter, OpKind, Stream, Workgroup};
use crate::wave::WaveState;
use gemm_isa::table::flags;
use gemm_isa::{Format, Inst, Op, Operand, RegFile};

/// Why a wave did not issue, for the stall report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Issued (or could have: the SIMD's turn had not come).
    Issue,
    Vmcnt,
    Lgkmcnt,
    Barrier,
    /// Waiting for an MFMA result (dependency).
    MfmaDependency,
    /// The SIMD's matrix pipe is busy with an earlier MFMA.
    MfmaPipeBusy,
    /// Lost arbitration for a functional unit, or the unit was busy.
    IssueConflict,
    /// `s_nop` / `s_sleep`.
    NopSleep,
}

pub const REASONS: [Reason; 8] = [
    Reason::Issue,
    Reason::Vmcnt,
    Reason::Lgkmcnt,
    Reason::Barrier,
    Reason::MfmaDependency,
    Reason::MfmaPipeBusy,
    Reason::IssueConflict,
    Reason::NopSleep,
];

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::Issue => "issuing",
            Reason::Vmcnt => "vmcnt wait",
            Reason::Lgkmcnt => "lgkmcnt wait",
            Reason::Barrier => "barrier",
            Reason::MfmaDependency => "MFMA dependency",
            Reason::MfmaPipeBusy => "MFMA pipe busy",
            Reason::IssueConflict => "issue conflict",
            Reason::NopSleep => "s_nop/s_sleep",
        }
    }
    fn index(self) -> usize {
        REASONS.iter().position(|&r| r == self).unwrap_or(0)
    }
}

/// Wave-cycles by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stalls(pub [u64; 8]);

impl Stalls {
    pub fn get(&self, r: Reason) -> u64 {
        self.0[r.index()]
    }
    fn add(&mut self, r: Reason, n: u64) {
        self.0[r.index()] += n;
    }
    pub fn merge(&mut self, o: &Stalls) {
        for i in 0..8 {
            self.0[i] += o.0[i];
        }
    }
}

/// Functional unit of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Valu,
    Mfma,
    Salu,
    Smem,
    Vmem,
    Lds,
    Branch,
    /// Handled by the sequencer: s_nop, s_waitcnt, s_barrier, s_setprio, s_sleep, s_endpgm.
    Internal,
}

fn unit_of(inst: &Inst) -> Unit {
    let def = inst.op.def();
    match def.format {
        Format::Mai => Unit::Mfma,
        Format::Vop1 | Format::Vop2 | Format::Vopc | Format::Vop3 | Format::Vop3p => Unit::Valu,
        Format::Sop1 | Format::Sop2 | Format::Sopk | Format::Sopc => Unit::Salu,
        Format::Smem => Unit::Smem,
        Format::Ds => Unit::Lds,
        Format::Mubuf | Format::Global | Format::Flat | Format::Scratch => Unit::Vmem,
        Format::Sopp => {
            if def.has(flags::BRANCH) {
                Unit::Branch
            } else {
                Unit::Internal
            }
        }
    }
}

/// One wave's timeline on the simulated CU.
#[derive(Clone, Debug, Default)]
pub struct WaveTiming {
    /// The engine's number for the wave (launch order), as in `Span::wave_uid`.
    pub uid: usize,
    /// Linear workgroup id and wave index in it.
    pub wg: u64,
    pub wave: usize,
    pub simd: usize,
    pub start: u64,
    pub end: u64,
    pub instructions: u64,
    pub mfmas: u64,
    pub stalls: Stalls,
}

/// A span on a wave's timeline, for the Chrome trace.
#[derive(Clone, Debug)]
pub struct Span {
    pub wave_uid: usize,
    pub name: String,
    pub start: u64,
    pub dur: u64,
}

/// How the CU runs.
#[derive(Clone, Debug)]
pub struct CuConfig {
    pub mhz: f64,
    /// SIMDs the waves are spread over (4; fewer to pin tests on one SIMD).
    pub simds: usize,
    /// Workgroups resident at once.
    pub resident: usize,
    pub hits: HitRates,
    /// Busy CUs sharing the XCD's L2 and the chip's MALL/HBM (bandwidth shares).
    pub share_xcd: f64,
    pub share_chip: f64,
    /// Skip MFMA arithmetic (addresses and control flow do not depend on it in GEMMs).
    pub timing_only: bool,
    /// Record spans for a trace (at most this many).
    pub trace_limit: usize,
}

/// What one CU did.
#[derive(Clone, Debug, Default)]
pub struct CuRun {
    /// Clock at which the last simulated workgroup ended.
    pub end: u64,
    /// (workgroup, start, end) in completion order.
    pub wgs: Vec<(u64, u64, u64)>,
    pub waves: Vec<WaveTiming>,
    pub stalls: Stalls,
    pub mfma_busy: Vec<u64>,
    pub lds_busy: u64,
    pub lds_conflict_cycles: u64,
    pub traffic: Traffic,
    pub instructions: u64,
    pub spans: Vec<Span>,
}

struct WaveT {
    uid: usize,
    simd: usize,
    age: u64,
    prio: u32,
    ready_at: u64,
    last_t: u64,
    reason: Reason,
    /// MFMA destinations in flight: (file, first reg, count, forward-ready, read-ready).
    mfma_dst: Vec<(RegFile, u16, u16, u64, u64)>,
    /// Latest completion of anything the wave started (MFMA results, memory).
    busy_until: u64,
    /// Last completion per in-order stream (`Order::stream`): a vector load completes no
    /// earlier than the older stores of its wave, so a spill reload reads the spilled value.
    last: [u64; Stream::COUNT],
    timing: WaveTiming,
    ended: bool,
}

struct Resident<'a> {
    wg: Workgroup<'a>,
    id: u64,
    start: u64,
    waves: Vec<WaveT>,
    last_arrival: u64,
}

fn sopp_imm(inst: &Inst) -> i64 {
    match inst.operands.first() {
        Some(Operand::Imm(i)) => *i,
        _ => 0,
    }
}

/// The CU's LDS as the SIMDs see it (ROCm/gfx950-gluon-tutorials docs/lds_throughput.md):
/// one LDS serving the whole CU (`lds_bytes_per_clk`, bank phases), and per SIMD pair a bus
/// returning read data at `lds_pair_bytes_per_clk` and a FIFO of `lds_fifo_depth`
/// outstanding DS requests (reads and writes) that stalls issue when full.
#[derive(Default)]
struct LdsPort {
    /// The LDS pipe's time-ordered reservations.
    pipe: Calendar,
    pair_free: [u64; 2],
    /// Completion clocks of the requests in each pair's FIFO.
    fifo: [Vec<u64>; 2],
}

/// A unit's busy intervals in time order, so that work can be booked for a future clock
/// without blocking work that is ready earlier: an LDS-DMA write (`buffer_load ... lds`)
/// takes the LDS pipe when its data arrives from memory, hundreds of clocks after issue,
/// while DS instructions issued meanwhile are served in the gaps before it. The LDS write
/// of a DMA happens when the data returns from memory (shared/reference/ISA.md §2.4: the
/// load completes, and its vmcnt drops, once the data is in LDS); nothing in the ISA
/// reserves the LDS at issue.
#[derive(Clone, Debug, Default)]
struct Calendar {
    /// Disjoint, sorted `[start, end)` intervals; touching ones are merged.
    busy: Vec<(u64, u64)>,
}

impl Calendar {
    /// Books `len` clocks at the first gap at or after `ready`; returns the start.
    fn reserve(&mut self, ready: u64, len: u64) -> u64 {
        let len = len.max(1);
        let mut at = ready;
        let mut i = self.busy.partition_point(|&(_, e)| e <= at);
        while let Some(&(s, e)) = self.busy.get(i) {
            if s >= at + len {
                break;
            }
            at = at.max(e);
            i += 1;
        }
        self.busy.insert(i, (at, at + len));
        // Merge with the neighbours it touches.
        if i + 1 < self.busy.len() && self.busy[i + 1].0 == self.busy[i].1 {
            self.busy[i].1 = self.busy[i + 1].1;
            self.busy.remove(i + 1);
        }
        if i > 0 && self.busy[i - 1].1 == self.busy[i].0 {
            self.busy[i - 1].1 = self.busy[i].1;
            self.busy.remove(i);
        }
        at
    }

    /// Forgets intervals that ended by `t` (nothing is booked before the present).
    fn prune(&mut self, t: u64) {
        let n = self.busy.partition_point(|&(_, e)| e <= t);
        self.busy.drain(..n);
    }
}

/// The `(address, bytes)` the memory system sees for an instruction's in-range accesses,
/// in the order the TA walks them. Scratch is interleaved by the hardware (AMDGPUUsage,
/// "Private Segment": lanes' private dwords are interleaved so that lanes reading the same
/// private address touch adjacent dwords; LLVM's scratch descriptor: element size 4, index
/// stride 64): dword `d` of lane `l`'s private offset is at `base + 256·d + 4·l`, while the
/// functional emulator keeps each lane's segment contiguous (`wave::Scratch`). So a
/// spill of one dword per lane is 2 lines, not 64.
fn timed_addresses(scratch: Option<crate::wave::Scratch>, acc: &[crate::scheduler::Access]) -> Vec<(u64, u64)> {
    let live = acc.iter().filter(|a| a.oob == 0);
    let Some(seg) = scratch else {
        return live.map(|a| (a.addr, u64::from(a.size))).collect();
    };
    let stride = u64::from(seg.lane_bytes);
    let split: Vec<(u64, u64, u64)> = live
        .map(|a| {
            let lane = u64::from(a.lane);
            let off = a.addr.wrapping_sub(seg.base).wrapping_sub(lane * stride);
            (lane, off, u64::from(a.size))
        })
        .collect();
    let dwords = split.iter().map(|x| (x.1 % 4 + x.2).div_ceil(4)).max().unwrap_or(0);
    let mut out = Vec::with_capacity(split.len() * dwords as usize);
    for d in 0..dwords {
        for &(lane, off, size) in &split {
            let first = off / 4 + d;
            if first * 4 >= off + size {
                continue;
            }
            let lo = (first * 4).max(off);
            let hi = (first * 4 + 4).min(off + size);
            out.push((seg.base + 256 * first + 4 * lane + lo % 4, hi - lo));
        }
    }
    out
}

/// Executes the instruction at the wave's PC (the functional `step` without the hazard
/// checker, and without MFMA arithmetic in timing-only mode).
fn exec_inst(wg: &mut Workgroup, wi: usize, inst: &Inst, next: u64, timing_only: bool) -> Result<(), Fault> {
    wg.env.sched[wi].instructions += 1;
    if wg.env.sched[wi].instructions > wg.env.max_instructions {
        let limit = wg.env.max_instructions;
        return Err(wg.env.fault(&wg.waves[wi], FaultKind::InstructionLimit(limit)));
    }
    wg.env.counts.add(inst);
    let w = &mut wg.waves[wi];
    let env = &mut wg.env;
    let res = match inst.op.def().format {
        Format::Sopp => crate::scheduler::sopp(w, env, inst, next),
        Format::Sop1 | Format::Sop2 | Format::Sopk | Format::Sopc => crate::salu::exec(w, env, inst, next).map(|_| ()),
        Format::Smem => crate::vmem::smem(w, env, inst).map(|_| w.pc = next),
        Format::Vop1 | Format::Vop2 | Format::Vopc | Format::Vop3 | Format::Vop3p => {
            crate::valu::exec(w, env, inst).map(|_| w.pc = next)
        }
        Format::Mai if timing_only => {
            w.pc = next;
            Ok(())
        }
        Format::Mai => crate::mfma::exec(w, env, inst).map(|_| w.pc = next),
        Format::Ds => crate::lds::exec(w, env, inst).map(|_| w.pc = next),
        Format::Mubuf | Format::Global | Format::Flat | Format::Scratch => {
            crate::vmem::exec(w, env, inst).map(|_| w.pc = next)
        }
    };
    res.map_err(|k| env.fault(&wg.waves[wi], k))
}

/// One functional step for the footprint pass (timing-only).
pub(super) fn exec_for_footprint(wg: &mut Workgroup, wi: usize, inst: &Inst, next: u64) -> Result<(), Fault> {
    exec_inst(wg, wi, inst, next, true)
}

/// The timed CU running `wgs` (linear workgroup ids, in the order they are handed to it),
/// `cfg.resident` at a time, until all ended or `stop_after` of them completed.
pub fn run(
    setup: &KernelSetup,
    p: &Params,
    cfg: &CuConfig,
    wgs: &[u64],
    stop_after: Option<usize>,
) -> Result<CuRun, Fault> {
    let simds = cfg.simds.clamp(1, p.simds_per_cu as usize);
    let mut mem = MemSystem::new(p, cfg.mhz, cfg.hits, cfg.share_xcd, cfg.share_chip);
    let smem_lat = p.cycles(p.smem_latency_ns, cfg.mhz);
    let nwaves = setup.waves_per_wg();
    let mut out = CuRun { mfma_busy: vec![0; simds], ..Default::default() };
    let mut valu_free = vec![0u64; simds];
    let mut mfma_free = vec![0u64; simds];
    let mut lds = LdsPort::default();
    let mut next_wg = 0usize;
    let mut residents: Vec<Option<Resident>> = (0..cfg.resident.max(1)).map(|_| None).collect();
    let mut slot_free_at = vec![0u64; residents.len()];
    let mut age = 0u64;
    let mut uid = 0usize;
    let mut t = 0u64;
    let mut idle = 0u32;
    let stop = stop_after.unwrap_or(wgs.len()).min(wgs.len());
    // Wave placement: waves of a workgroup go round robin over the SIMDs, starting after
    // the SIMD the previous workgroup's last wave took.
    let mut next_simd = 0usize;
    loop {
        // Launch workgroups into free slots.
        for (si, slot) in residents.iter_mut().enumerate() {
            if slot.is_none() && next_wg < stop {
                if slot_free_at[si] > t {
                    continue;
                }
                let id = wgs[next_wg];
                next_wg += 1;
                let wg = setup.workgroup(id, si);
                let mut waves = Vec::with_capacity(nwaves);
                for wi in 0..nwaves {
                    let simd = next_simd % simds;
                    next_simd += 1;
                    age += 1;
                    waves.push(WaveT {
                        uid,
                        simd,
                        age,
                        prio: 0,
                        ready_at: t,
                        last_t: t,
                        reason: Reason::Issue,
                        mfma_dst: Vec::new(),
                        busy_until: t,
                        last: [0; Stream::COUNT],
                        timing: WaveTiming { uid, wg: id, wave: wi, simd, start: t, ..Default::default() },
                        ended: false,
                    });
                    uid += 1;
                }
                *slot = Some(Resident { wg, id, start: t, waves, last_arrival: 0 });
            }
        }
        if residents.iter().all(|r| r.is_none()) {
            if next_wg >= stop {
                break;
            }
            // Every slot is waiting out its launch delay: go to the first that frees.
            t = slot_free_at.iter().copied().filter(|&x| x > t).min().unwrap_or(t + 1);
            continue;
        }
        // Memory operations due by now land; barriers whose waves have all arrived release.
        for r in residents.iter_mut().flatten() {
            r.wg.env.now = t;
            r.wg.retire_due()?;
            let arrived = r.wg.waves.iter().filter(|w| w.state == WaveState::AtBarrier).count();
            if arrived > 0 && r.wg.waves.iter().all(|w| w.state != WaveState::Running) {
                let release = r.last_arrival + p.barrier_cycles;
                if t >= release {
                    for w in r.wg.waves.iter_mut() {
                        if w.state == WaveState::AtBarrier {
                            w.state = WaveState::Running;
                        }
                    }
                }
            }
        }
        lds.pipe.prune(t);
        // The SIMD whose turn it is.
        let s = (t % p.issue_period) as usize;
        let mut issued_any = false;
        if s < simds {
            // Candidates: (priority desc, age asc).
            let mut cands: Vec<(u32, u64, usize, usize)> = Vec::new();
            for (ri, r) in residents.iter().enumerate() {
                if let Some(r) = r {
                    for (wi, w) in r.waves.iter().enumerate() {
                        if w.simd == s && !w.ended {
                            cands.push((w.prio, w.age, ri, wi));
                        }
                    }
                }
            }
            cands.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            let mut used: Vec<Unit> = Vec::new();
            for &(_, _, ri, wi) in &cands {
                let r = residents[ri].as_mut().expect("candidate slot is occupied");
                let reason = try_issue(
                    r,
                    wi,
                    t,
                    s,
                    p,
                    cfg,
                    &mut used,
                    &mut valu_free,
                    &mut mfma_free,
                    &mut lds,
                    &mut mem,
                    smem_lat,
                    &mut out,
                )?;
                let w = &mut r.waves[wi];
                let elapsed = t - w.last_t;
                w.timing.stalls.add(w.reason, elapsed);
                w.last_t = t;
                w.reason = reason;
                if reason == Reason::Issue {
                    issued_any = true;
                }
            }
        }
        // Workgroups whose waves have all ended complete once their memory has landed.
        for si in 0..residents.len() {
            let done = match &residents[si] {
                Some(r) => r.waves.iter().all(|w| w.ended),
                None => false,
            };
            if !done {
                continue;
            }
            let r = residents[si].as_mut().expect("checked");
            let pending_max =
                r.wg.env
                    .sched
                    .iter()
                    .flat_map(|s| s.pending.iter().filter(|o| !o.done).map(|o| o.complete_at))
                    .max()
                    .unwrap_or(0);
            let end = r.waves.iter().map(|w| w.timing.end).max().unwrap_or(t).max(pending_max);
            if t < end {
                continue;
            }
            let mut r = residents[si].take().expect("checked");
            for wi in 0..r.wg.waves.len() {
                let seqs: Vec<u64> = r.wg.env.sched[wi].pending.iter().filter(|o| !o.done).map(|o| o.seq).collect();
                for q in seqs {
                    r.wg.complete(wi, q)?;
                }
            }
            out.wgs.push((r.id, r.start, end));
            out.end = out.end.max(end);
            for w in r.waves.drain(..) {
                out.stalls.merge(&w.timing.stalls);
                out.instructions += w.timing.instructions;
                out.waves.push(w.timing);
            }
            slot_free_at[si] = end + p.wg_launch_cycles;
        }
        if next_wg >= stop && residents.iter().all(|r| r.is_none()) {
            break;
        }
        // Advance time; skip ahead when nothing issued for a whole round of SIMD turns.
        idle = if issued_any { 0 } else { idle + 1 };
        if idle >= p.issue_period as u32 {
            let next =
                next_event(&residents, t, p.barrier_cycles, &valu_free, &mfma_free, &slot_free_at, next_wg < stop);
            match next {
                Some(n) if n > t + 1 => {
                    t = n;
                    idle = 0;
                    continue;
                }
                Some(_) => {}
                None => {
                    if std::env::var("TIMING_DEBUG").is_ok() {
                        for r in residents.iter().flatten() {
                            eprintln!(
                                "t={t} wave pc {:#x} state {:?} wait {:?} pending {:?}",
                                r.wg.waves[0].pc,
                                r.wg.waves[0].state,
                                r.wg.env.sched[0].wait,
                                r.wg.env.sched[0]
                                    .pending
                                    .iter()
                                    .map(|o| (o.seq, o.done, o.complete_at))
                                    .collect::<Vec<_>>()
                            );
                        }
                    }
                    let r = residents.iter().flatten().next();
                    if let Some(r) = r {
                        let w = &r.wg.waves[0];
                        return Err(r
                            .wg
                            .env
                            .fault(w, FaultKind::Deadlock("no wave of the timed CU can make progress".into())));
                    }
                    if next_wg >= stop {
                        break;
                    }
                }
            }
        }
        t += 1;
    }
    out.traffic = mem.traffic;
    Ok(out)
}

/// The next clock at which something can change.
fn next_event(
    residents: &[Option<Resident>],
    t: u64,
    barrier_cycles: u64,
    valu_free: &[u64],
    mfma_free: &[u64],
    slot_free_at: &[u64],
    more_wgs: bool,
) -> Option<u64> {
    let mut best: Option<u64> = None;
    let mut consider = |x: u64| {
        if x > t {
            best = Some(best.map_or(x, |b: u64| b.min(x)));
        }
    };
    let mut any_live = false;
    for r in residents.iter().flatten() {
        any_live = true;
        for s in &r.wg.env.sched {
            for o in s.pending.iter().filter(|o| !o.done) {
                consider(o.complete_at);
            }
        }
        consider(r.last_arrival + barrier_cycles);
        // A running wave whose wait (if any) is already met issues at its SIMD's next turn.
        for (wi, w) in r.waves.iter().enumerate() {
            if w.ended || r.wg.waves[wi].state != WaveState::Running {
                continue;
            }
            let sched = &r.wg.env.sched[wi];
            let met = match sched.wait {
                None => true,
                Some((vm, lgkm)) => {
                    let out =
                        |c: Counter| sched.pending.iter().filter(|o| !o.done && o.order.counter() == c).count() as u32;
                    out(Counter::Vm) <= vm && out(Counter::Lgkm) <= lgkm
                }
            };
            if met {
                let n = t + 1;
                consider(n + ((w.simd as u64 + 4 - n % 4) % 4));
            }
        }
        for w in &r.waves {
            consider(w.ready_at);
            consider(w.timing.end);
            for d in &w.mfma_dst {
                consider(d.3);
                consider(d.4);
            }
        }
    }
    for &x in valu_free.iter().chain(mfma_free) {
        consider(x);
    }
    if more_wgs {
        for &x in slot_free_at {
            consider(x);
        }
    }
    let _ = any_live;
    best
}

#[allow(clippy::too_many_arguments)]
fn try_issue(
    r: &mut Resident,
    wi: usize,
    t: u64,
    s: usize,
    p: &Params,
    cfg: &CuConfig,
    used: &mut Vec<Unit>,
    valu_free: &mut [u64],
    mfma_free: &mut [u64],
    lds: &mut LdsPort,
    mem: &mut MemSystem,
    smem_lat: u64,
    out: &mut CuRun,
) -> Result<Reason, Fault> {
    let state = r.wg.waves[wi].state;
    if state == WaveState::Ended {
        return Ok(Reason::Issue);
    }
    if state == WaveState::AtBarrier {
        return Ok(Reason::Barrier);
    }
    if r.waves[wi].ready_at > t {
        return Ok(if r.waves[wi].ready_at > t + p.issue_period { Reason::NopSleep } else { Reason::Issue });
    }
    r.wg.env.now = t;
    if !r.wg.wait_satisfied(wi)? {
        let (vm, _) = r.wg.env.sched[wi].wait.unwrap_or((u32::MAX, u32::MAX));
        let vm_out = r.wg.env.sched[wi].pending.iter().filter(|o| !o.done && o.order.counter() == Counter::Vm).count();
        return Ok(if vm_out as u32 > vm { Reason::Vmcnt } else { Reason::Lgkmcnt });
    }
    let prog = r.wg.env.prog;
    let pc = r.wg.waves[wi].pc;
    let Some(&idx) = prog.index.get(&pc) else {
        let why = match &prog.decode_stop {
            Some((o, e)) if *o == pc => e.clone(),
            _ => format!("no decoded instruction at offset {pc:#x}"),
        };
        return Err(r.wg.env.fault(&r.wg.waves[wi], FaultKind::Decode(why)));
    };
    let inst = &prog.insts[idx].1;
    let next = prog.insts.get(idx + 1).map(|(o, _)| *o).unwrap_or(prog.code.len() as u64);
    let unit = unit_of(inst);
    if unit != Unit::Internal && used.contains(&unit) {
        return Ok(Reason::IssueConflict);
    }
    let shape = if unit == Unit::Mfma { Shape::of_inst(inst) } else { None };
    if matches!(unit, Unit::Valu | Unit::Mfma) && valu_free[s] > t {
        return Ok(Reason::IssueConflict);
    }
    // MFMA results this instruction reads.
    let (rd, _) = crate::hazard::uses(inst);
    let srcc = if unit == Unit::Mfma { inst.operand(gemm_isa::table::Field::Src2).and_then(|o| o.reg()) } else { None };
    {
        let w = &mut r.waves[wi];
        w.mfma_dst.retain(|d| d.4 > t);
        for d in &w.mfma_dst {
            let hit = rd.iter().any(|&(f, i)| f == d.0 && i >= d.1 && i < d.1 + d.2);
            if !hit {
                continue;
            }
            let forward = matches!(srcc, Some(c) if c.file == d.0 && c.index == d.1 && u16::from(c.count) == d.2);
            let ready = if forward { d.3 } else { d.4 };
            if ready > t {
                return Ok(Reason::MfmaDependency);
            }
        }
    }
    if unit == Unit::Mfma && mfma_free[s] > t {
        return Ok(Reason::MfmaPipeBusy);
    }
    // The CU's vector-memory request queue (memsys.rs): full until the TCP starts its
    // oldest entry.
    if unit == Unit::Vmem && !mem.can_issue(t) {
        return Ok(Reason::IssueConflict);
    }
    // The SIMD pair's request FIFO to the LDS: full until its oldest request completes.
    if unit == Unit::Lds {
        let q = &mut lds.fifo[(s / 2) % 2];
        q.retain(|&c| c > t);
        if q.len() >= p.lds_fifo_depth as usize {
            return Ok(Reason::IssueConflict);
        }
    }
    // Issue.
    used.push(unit);
    let seq_before = r.wg.env.sched[wi].seq;
    exec_inst(&mut r.wg, wi, inst, next, cfg.timing_only)?;
    let scratch = if inst.op.def().format == Format::Scratch { r.wg.waves[wi].scratch } else { None };
    let w = &mut r.waves[wi];
    w.timing.instructions += 1;
    w.ready_at = t + p.issue_period;
    let mut span: Option<(String, u64)> = None;
    match unit {
        Unit::Valu => {
            valu_free[s] = t + p.valu_cycles;
        }
        Unit::Mfma => {
            let passes = u64::from(shape.map_or(4, |sh| sh.passes));
            let busy = passes * p.pass_cycles;
            valu_free[s] = t + p.pass_cycles;
            mfma_free[s] = t + busy;
            out.mfma_busy[s] += busy;
            w.timing.mfmas += 1;
            let ws = shape.map_or(passes + 3, |sh| crate::hazard::mfma_result_wait_states(p.arch, &sh));
            if let Some(Operand::Reg(d)) = inst.operand(gemm_isa::table::Field::Vdst) {
                let n = shape.map_or(4, |sh| sh.cd_regs()) as u16;
                w.mfma_dst.retain(|x| !(x.0 == d.file && x.1 == d.index));
                w.mfma_dst.push((d.file, d.index, n, t + busy, t + (ws + 1) * p.pass_cycles));
            }
            w.busy_until = w.busy_until.max(t + busy);
            span = Some((inst.op.name().to_string(), busy));
        }
        Unit::Internal => match inst.op {
            Op::S_NOP => w.ready_at = t + ((sopp_imm(inst) as u64 & 0xF) + 1) * p.issue_period,
            Op::S_SLEEP => w.ready_at = t + 64 * (sopp_imm(inst) as u64 & 0x7F).max(1),
            Op::S_SETPRIO => w.prio = (sopp_imm(inst) & 3) as u32,
            Op::S_BARRIER => r.last_arrival = r.last_arrival.max(t),
            _ => {}
        },
        _ => {}
    }
    // Time the memory operations this instruction queued.
    let sched = &mut r.wg.env.sched[wi];
    for op in sched.pending.iter_mut().filter(|o| o.seq > seq_before) {
        let mut done = match &op.kind {
            OpKind::SLoad { .. } => mem.scalar(t, smem_lat),
            OpKind::RegWrite { .. } => {
                let svc = (64 * 4 / u64::from(p.lds_bytes_per_clk)).max(1);
                let start = lds.pipe.reserve(t, svc);
                out.lds_busy += svc;
                start + svc + p.lds_latency
            }
            OpKind::Load { space: crate::scheduler::Space::Lds, acc, .. }
            | OpKind::Store { space: crate::scheduler::Space::Lds, acc }
            | OpKind::Atomic { space: crate::scheduler::Space::Lds, acc, .. } => {
                let (svc, ideal) = lds_banks::service_clocks(acc, p.lds_banks);
                let start = lds.pipe.reserve(t, svc);
                out.lds_busy += svc;
                out.lds_conflict_cycles += svc - ideal;
                // Read data returns over the SIMD pair's bus to the LDS.
                let served = if matches!(op.kind, OpKind::Store { .. }) {
                    start + svc
                } else {
                    let bytes: u64 = acc.iter().map(|a| u64::from(a.size)).sum();
                    let bus = bytes.div_ceil(u64::from(p.lds_pair_bytes_per_clk)).max(1);
                    let sp = &mut lds.pair_free[(s / 2) % 2];
                    let b = (*sp).max(start);
                    *sp = b + bus;
                    (start + svc).max(b + bus)
                };
                served + p.lds_latency
            }
            OpKind::LdsDma { acc } => {
                let req = mem.request(acc.len() as u32, timed_addresses(scratch, acc).into_iter());
                let arrive = mem.load(t, &req);
                let lds_bytes: u64 = acc.iter().map(|a| u64::from(a.size).max(4)).sum();
                let svc = lds_bytes.div_ceil(u64::from(p.lds_bytes_per_clk)).max(1);
                // The write is booked when the data arrives; DS work issued before that
                // is not held up by it (Calendar).
                let start = lds.pipe.reserve(arrive, svc);
                out.lds_busy += svc;
                start + svc
            }
            OpKind::Load { acc, .. } | OpKind::Atomic { acc, .. } => {
                let req = mem.request(acc.len() as u32, timed_addresses(scratch, acc).into_iter());
                mem.load(t, &req)
            }
            OpKind::Store { acc, .. } => {
                let req = mem.request(acc.len() as u32, timed_addresses(scratch, acc).into_iter());
                mem.store(t, &req)
            }
        };
        if let Some(k) = op.order.stream() {
            done = done.max(w.last[k as usize]);
            w.last[k as usize] = done;
        }
        op.complete_at = done.max(t + 1);
        if unit == Unit::Lds {
            lds.fifo[(s / 2) % 2].push(op.complete_at);
        }
        w.busy_until = w.busy_until.max(op.complete_at);
        if span.is_none() {
            span = Some((inst.op.name().to_string(), op.complete_at - t));
        }
    }
    if r.wg.waves[wi].state == WaveState::Ended {
        w.ended = true;
        w.timing.end = w.busy_until.max(t + p.issue_period);
    }
    if cfg.trace_limit > out.spans.len() {
        let (name, dur) = span.unwrap_or_else(|| (inst.op.name().to_string(), p.issue_period));
        out.spans.push(Span { wave_uid: w.uid, name, start: t, dur: dur.max(1) });
    }
    Ok(Reason::Issue)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::Access;
    use crate::wave::Scratch;

    #[test]
    fn the_lds_calendar_serves_earlier_work_in_the_gap_before_a_future_dma_write() {
        let mut c = Calendar::default();
        // An LDS-DMA write whose data arrives at 500 books 500..504.
        assert_eq!(c.reserve(500, 4), 500);
        // A ds_read issued at 10 is served at 10, not after the DMA's write.
        assert_eq!(c.reserve(10, 8), 10);
        // Work that does not fit before 500 goes after the DMA: 496..504 is taken by
        // 500..504, so a 8-clock access ready at 495 starts at 504.
        assert_eq!(c.reserve(495, 8), 504);
        // Back-to-back bookings stay FIFO: 18, then 26.
        assert_eq!(c.reserve(12, 8), 18);
        assert_eq!(c.reserve(12, 8), 26);
        // Touching intervals merge: 10..34, 500..512.
        assert_eq!(c.busy, vec![(10, 34), (500, 512)]);
        c.prune(100);
        assert_eq!(c.busy, vec![(500, 512)]);
    }

    #[test]
    fn scratch_is_timed_at_its_interleaved_addresses() {
        // A wave's private segment of 216 bytes per lane at 0x10000 (the functional layout:
        // lane l at 0x10000 + 216 l). A dword spill at private offset 8 from all 64 lanes is,
        // interleaved, dwords 0x10000 + 256*2 + 4 l: 2 lines of 128 bytes in lane order.
        let seg = Scratch { base: 0x10000, lane_bytes: 216 };
        let acc: Vec<Access> = (0..64).map(|l| Access::new(l, 0x10000 + 216 * l as u64 + 8, 4)).collect();
        let t = timed_addresses(Some(seg), &acc);
        assert_eq!(t.len(), 64);
        assert_eq!(t[0], (0x10000 + 512, 4));
        assert_eq!(t[63], (0x10000 + 512 + 252, 4));
        // A dwordx4 at offset 16: dword d of every lane lands in row 4 + d; the TA walks row
        // by row, lane by lane: 4 rows x 64 lanes of 4 bytes.
        let acc: Vec<Access> = (0..64).map(|l| Access::new(l, 0x10000 + 216 * l as u64 + 16, 16)).collect();
        let t = timed_addresses(Some(seg), &acc);
        assert_eq!(t.len(), 256);
        assert_eq!(t[0], (0x10000 + 4 * 256, 4));
        assert_eq!(t[64], (0x10000 + 5 * 256, 4));
        assert_eq!(t[255], (0x10000 + 7 * 256 + 252, 4));
        // Global accesses are timed where they are.
        let acc: Vec<Access> = (0..4).map(|l| Access::new(l, 1000 * l as u64, 8)).collect();
        assert_eq!(timed_addresses(None, &acc), vec![(0, 8), (1000, 8), (2000, 8), (3000, 8)]);
    }
}
