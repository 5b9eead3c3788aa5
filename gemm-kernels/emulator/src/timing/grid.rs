//! The grid around the simulated CU.
//!
//! * **Placement**: workgroups go to the XCDs round robin (workgroup `i` to XCD `i mod 8`;
//!   MI300X measurements: bring-up log rows F1-F6, and the XCD-swizzle literature), and
//!   inside an XCD to its CUs in turn, so CU `c` of XCD `x` runs the workgroups
//!   `x + 8·(c + 38·k)`, `occupancy` at a time. The busiest CU (CU 0 of XCD 0) sets the
//!   kernel's time.
//! * **Cache hit fractions** follow from the addresses the first round of resident
//!   workgroups requests: each resident workgroup of the grid runs (timing-only, no time)
//!   until its vector loads have asked for `prefix_bytes` bytes; its line requests pass its own L1
//!   (an LRU of `l1_bytes`), the L1 misses of one XCD's workgroups meet in that XCD's L2
//!   (hit = another request of the XCD for the same line came first), and the L2 misses
//!   of all XCDs meet in the Infinity Cache the same way. Reuse across rounds in the
//!   Infinity Cache is not counted (a conservative choice, README of this folder). A
//!   workgroup asks L2 for each line once: this pass runs its waves one instruction each in
//!   turn with every load complete at once, an order in which 16 waves that each read half
//!   of a line per load (a decode kernel's 16 rows x 64 bytes) evict their own lines from
//!   the 32 KiB LRU before their next load reads the other half, so the same workgroup's
//!   second request would count as an L2 hit. Reuse within a workgroup is the cycle
//!   simulation's own L1's to decide (`memsys.rs`, with fills in flight counted as hits); the
//!   hit fractions measured here are the sharing between the workgroups of different CUs,
//!   which that simulation of one CU cannot see. Counting the repeats made the simulated CU
//!   draw half its lines as L2 hits and stream a 201 MB matrix in 31 us against a 38 us
//!   floor at peak HBM. For the same reason the workgroups resident on one CU (CU `c` of
//!   XCD `x`: `x + 8·(c + 38·k)`) share one set of requested lines: they share the CU's L1
//!   in the cycle simulation, where a line one of them fetched is a hit (or a fill in
//!   flight) for the others. Counted per workgroup, the activations every workgroup of a
//!   decode kernel reads became a 30% L2 hit share that the cycle simulation applied to its
//!   own L1 misses, nearly all weights (gfx942 28672 x 16 x 4096, 2-wave 32x16x64
//!   decode-rows tile, 14 workgroups per CU: 40.1 us against a 44.3 us floor at peak HBM).
//! * **Steady state and extrapolation**: the CU is simulated for its first rounds of
//!   workgroups; the steady-state period per workgroup is the mean lifetime (plus the
//!   launch gap) of the workgroups that ended while every slot was still refilled, over
//!   the occupancy (Little's law); the remaining full rounds are extrapolated at that
//!   period and a last partial round (fewer workgroups than the occupancy) is simulated
//!   on its own and added.

use super::cu::{self, CuConfig, CuRun};
use super::memsys::HitRates;
use super::params::Params;
use super::setup::KernelSetup;
use crate::error::{Fault, FaultKind};
use crate::scheduler::{OpKind, Space, Workgroup};
use crate::wave::WaveState;
use std::collections::{HashMap, HashSet};

/// What the footprint pass measured.
#[derive(Clone, Debug, Default)]
pub struct Footprint {
    pub hits: HitRates,
    /// Workgroups sampled and the bytes of vector loads each ran.
    pub sampled_wgs: usize,
    pub prefix_bytes: u64,
    /// L1-miss line requests and distinct lines of the sampled XCDs, and distinct lines
    /// over the whole sample.
    pub requests: u64,
    pub per_xcd_unique: u64,
    pub all_unique: u64,
}

/// Line addresses (128-byte lines) that workgroup `id` requests from L2 during its first
/// `max_bytes` bytes of vector loads (lanes in range: a lane past NUM_RECORDS moves nothing),
/// after its own L1, each once per CU (`requested`: the lines the workgroups resident on the
/// same CU asked for before it, which share its L1 in the cycle simulation too): the second
/// half of those lines where the workgroup loaded more than half of the prefix (the first half is its prologue and warm-up; all of them
/// where it ended sooner). Halved by lines, not by bytes loaded: a kernel whose loads read
/// half lines (a decode kernel's 16 rows x 64 bytes) spends the second half of its bytes
/// on the other halves of lines it already asked for, and that half would hold little but
/// the activations every workgroup shares.
///
/// Why the second half: hit fractions are applied to every line the simulated CU loads,
/// so they must describe the steady state. A prologue that every workgroup repeats (the
/// activation vector that vLLM's wvSplitK stages in LDS: 26 KB of the first 128 KiB,
/// requested by all 38 workgroups of an XCD) would otherwise read as an 18-25 % L2 hit
/// rate and serve that share of a 2 GB weight stream, which no workgroup shares, from L2.
/// A GEMM's later K steps share their panels as its first ones do.
fn prefix_lines(
    setup: &KernelSetup,
    p: &Params,
    id: u64,
    max_bytes: u64,
    requested: &mut HashSet<u64>,
) -> Result<Vec<u64>, Fault> {
    let mut wg: Workgroup = setup.workgroup(id, 0);
    let n = wg.waves.len();
    let line = u64::from(p.line_bytes);
    let l1_cap = (p.l1_bytes / p.line_bytes) as usize;
    let mut l1: HashMap<u64, u64> = HashMap::new();
    let mut stamp = 0u64;
    let mut out = Vec::new();
    // Index in `out` of the first line requested after half the prefix was loaded.
    let mut half: Option<usize> = None;
    let mut loaded = 0u64;
    let prog = setup.prog;
    let mut stalled = 0u32;
    while loaded < max_bytes && wg.waves.iter().any(|w| w.state != WaveState::Ended) {
        wg.env.now += 1;
        wg.retire_due()?;
        if wg.waves.iter().any(|w| w.state == WaveState::AtBarrier)
            && wg.waves.iter().all(|w| w.state != WaveState::Running)
        {
            for w in wg.waves.iter_mut() {
                if w.state == WaveState::AtBarrier {
                    w.state = WaveState::Running;
                }
            }
        }
        let mut progressed = false;
        for wi in 0..n {
            if wg.waves[wi].state != WaveState::Running || !wg.wait_satisfied(wi)? {
                continue;
            }
            let pc = wg.waves[wi].pc;
            let Some(&idx) = prog.index.get(&pc) else {
                return Err(wg.env.fault(&wg.waves[wi], FaultKind::Decode(format!("no instruction at {pc:#x}"))));
            };
            let inst = &prog.insts[idx].1;
            let next = prog.insts.get(idx + 1).map(|(o, _)| *o).unwrap_or(prog.code.len() as u64);
            let before = wg.env.sched[wi].seq;
            super::cu::exec_for_footprint(&mut wg, wi, inst, next)?;
            progressed = true;
            for op in wg.env.sched[wi].pending.iter().filter(|o| o.seq > before) {
                let acc = match &op.kind {
                    OpKind::Load { space: Space::Global, acc, .. } | OpKind::LdsDma { acc } => acc,
                    _ => continue,
                };
                if half.is_none() && 2 * loaded >= max_bytes {
                    half = Some(out.len());
                }
                loaded += acc.iter().filter(|a| a.oob == 0).map(|a| u64::from(a.size)).sum::<u64>();
                let mut seen: HashSet<u64> = HashSet::new();
                for a in acc.iter().filter(|a| a.oob == 0) {
                    let (f, l) = (a.addr / line, (a.addr + u64::from(a.size).max(1) - 1) / line);
                    for ln in f..=l {
                        if !seen.insert(ln) {
                            continue;
                        }
                        stamp += 1;
                        if l1.insert(ln, stamp).is_none() && requested.insert(ln) {
                            out.push(ln);
                            if l1.len() > l1_cap {
                                if let Some((&old, _)) = l1.iter().min_by_key(|(_, &s)| s) {
                                    l1.remove(&old);
                                }
                            }
                        }
                    }
                }
            }
        }
        stalled = if progressed { 0 } else { stalled + 1 };
        if stalled > 100_000 {
            break;
        }
    }
    match half {
        Some(_) if out.len() >= 2 => {
            let h = out.len() / 2;
            Ok(out.split_off(h))
        }
        _ => Ok(out),
    }
}

/// Measures the L2 and Infinity Cache hit fractions of the grid's first round.
pub fn footprint(
    setup: &KernelSetup,
    p: &Params,
    occupancy: usize,
    prefix_bytes: u64,
    max_sampled: usize,
) -> Result<Footprint, Fault> {
    let total = setup.total_wgs();
    let xcds = u64::from(p.xcds);
    let slots = total.min(u64::from(p.cus()) * occupancy as u64);
    // Sample whole XCDs (all their resident workgroups), as many as the budget allows.
    let per_xcd = slots.div_ceil(xcds).max(1);
    let nx = ((max_sampled as u64 / per_xcd).max(1)).min(xcds);
    let mut per_xcd_lines: Vec<Vec<u64>> = Vec::new();
    let mut sampled = 0usize;
    let cus = u64::from(p.cus_per_xcd);
    for x in 0..nx {
        let mut lines = Vec::new();
        // The lines each CU of the XCD has asked L2 for: its resident workgroups share its L1.
        let mut per_cu: HashMap<u64, HashSet<u64>> = HashMap::new();
        let mut g = x;
        while g < slots {
            let cu = ((g - x) / xcds) % cus;
            lines.extend(prefix_lines(setup, p, g, prefix_bytes, per_cu.entry(cu).or_default())?);
            sampled += 1;
            g += xcds;
        }
        per_xcd_lines.push(lines);
    }
    let requests: u64 = per_xcd_lines.iter().map(|l| l.len() as u64).sum();
    let mut unique_sum = 0u64;
    let mut all: HashSet<u64> = HashSet::new();
    for l in &per_xcd_lines {
        let u: HashSet<u64> = l.iter().copied().collect();
        unique_sum += u.len() as u64;
        all.extend(u);
    }
    let l2 = if requests > 0 { 1.0 - unique_sum as f64 / requests as f64 } else { 0.0 };
    // Infinity Cache: of the L2 misses of the sampled XCDs, the ones another sampled XCD
    // requested first. With fewer than all XCDs sampled, the sharing is scaled to all of
    // them as if each shared line were wanted by every XCD (exact for GEMM panels, which
    // round-robin placement spreads over all XCDs); one XCD alone gives no estimate (0).
    let mall = if unique_sum > 0 {
        let shared = 1.0 - all.len() as f64 / unique_sum as f64;
        if nx < xcds && nx > 1 {
            let (x, k) = (xcds as f64, nx as f64);
            (shared * ((x - 1.0) / x) / ((k - 1.0) / k)).min((x - 1.0) / x)
        } else {
            shared
        }
    } else {
        0.0
    };
    Ok(Footprint {
        hits: HitRates { l2: l2.clamp(0.0, 1.0), mall: mall.clamp(0.0, 1.0) },
        sampled_wgs: sampled,
        prefix_bytes,
        requests,
        per_xcd_unique: unique_sum,
        all_unique: all.len() as u64,
    })
}

/// The kernel's time on the busiest CU: simulated rounds plus extrapolated ones.
#[derive(Clone, Debug, Default)]
pub struct GridTime {
    pub cycles: f64,
    /// Workgroups on the busiest CU, and how many were simulated.
    pub cu_wgs: usize,
    pub simulated_wgs: usize,
    pub extrapolated_wgs: usize,
    pub tail_wgs: usize,
    /// Clocks per workgroup in steady state (per CU).
    pub period: f64,
    pub run: CuRun,
}

/// Workgroups of CU `cu` of XCD `xcd`, in the order it receives them.
pub fn cu_workgroups(p: &Params, total: u64, xcd: u64, cu: u64) -> Vec<u64> {
    let xcds = u64::from(p.xcds);
    let cus = u64::from(p.cus_per_xcd);
    let mut v = Vec::new();
    let mut j = cu;
    loop {
        let g = xcd + xcds * j;
        if g >= total {
            break;
        }
        v.push(g);
        j += cus;
    }
    v
}

/// Simulates the busiest CU (steady state) and extrapolates to its whole share.
pub fn grid_time(setup: &KernelSetup, p: &Params, cfg: &CuConfig, max_rounds: usize) -> Result<GridTime, Fault> {
    let total = setup.total_wgs();
    let wgs = cu_workgroups(p, total, 0, 0);
    let occ = cfg.resident.max(1);
    let n = wgs.len();
    let sim_cap = (max_rounds.max(2) * occ).min(n);
    if n <= sim_cap + occ {
        let run = cu::run(setup, p, cfg, &wgs, None)?;
        debug_assert_eq!(run.wgs.len(), n);
        let cycles = run.end as f64;
        return Ok(GridTime {
            cycles,
            cu_wgs: n,
            simulated_wgs: n,
            extrapolated_wgs: 0,
            tail_wgs: 0,
            period: cycles / n.max(1) as f64,
            run,
        });
    }
    let run = cu::run(setup, p, cfg, &wgs, Some(sim_cap))?;
    let mut ends: Vec<u64> = run.wgs.iter().map(|w| w.2).collect();
    ends.sort_unstable();
    let last = *ends.last().unwrap_or(&0);
    // Steady state by Little's law: with `occ` slots always occupied, a slot's cycle is a
    // workgroup's lifetime plus the launch gap, and the CU completes `occ` workgroups per
    // cycle. Only refills that ended while every slot was still being refilled count (up
    // to the completion that launched the last simulated workgroup): the last ones run
    // with fewer neighbours as the simulation drains and would look faster than the
    // steady state.
    // The first round starts together at clock 0 (not a steady state either): it counts
    // only when no refill ended in time.
    let cut = ends[ends.len() - occ - 1];
    let first = run.wgs.iter().map(|w| w.1).min().unwrap_or(0);
    let lives = |refills: bool| -> Vec<u64> {
        run.wgs.iter().filter(|w| w.2 <= cut && (!refills || w.1 > first)).map(|w| w.2 - w.1).collect()
    };
    let steady = match lives(true) {
        v if v.is_empty() => lives(false),
        v => v,
    };
    let life = steady.iter().sum::<u64>() as f64 / steady.len().max(1) as f64;
    let period = (life + p.wg_launch_cycles as f64) / occ as f64;
    if std::env::var("TIMING_DEBUG").is_ok() {
        let starts: Vec<u64> = run.wgs.iter().map(|w| w.1).collect();
        eprintln!("grid: ends {ends:?} starts {starts:?} period {period}");
    }
    let rest = n - sim_cap;
    let full = rest / occ * occ;
    let rem = rest - full;
    let mut cycles = last as f64 + full as f64 * period;
    if rem > 0 {
        let tail_ids = &wgs[n - rem..];
        let tail = cu::run(setup, p, &CuConfig { trace_limit: 0, ..cfg.clone() }, tail_ids, None)?;
        cycles += tail.end as f64 + p.wg_launch_cycles as f64;
    }
    Ok(GridTime { cycles, cu_wgs: n, simulated_wgs: sim_cap + rem, extrapolated_wgs: full, tail_wgs: rem, period, run })
}
