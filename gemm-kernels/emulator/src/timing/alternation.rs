//! Whether the two waves of a SIMD alternate (ping-pong), read off a timed run's trace.
//!
//! The 8-wave ping-pong (seed 002 §3.1, issue 12) puts two waves of a workgroup on each
//! SIMD and wants one in its MFMA cluster while the other issues and waits for memory.
//! From the spans of a prediction (`ModelOptions::trace_spans`; `cu.rs` records one span
//! per issued instruction: an MFMA lasts its pipe time, a memory instruction until its data
//! lands) this module builds per wave:
//!
//! * **MFMA clusters**: maximal runs of the wave's MFMAs not interrupted by one of its
//!   memory instructions (LDS or vector memory), as the interval from the first MFMA's issue
//!   to the last one's pipe end;
//! * **memory in flight**: the union of its memory spans (issue to landing).
//!
//! and per pair of waves of one workgroup on one SIMD:
//!
//! * `mem_under_mfma`: the fraction of the pair's MFMA-cluster time during which the other
//!   wave has memory in flight (1.0: every MFMA cluster hides the partner's memory);
//! * `both_mfma`: the fraction of MFMA-cluster time during which both waves are inside an
//!   MFMA cluster (they compete for the one matrix pipe instead of taking turns);
//! * `handovers`: how often the MFMA cluster sequence of the pair (sorted by start)
//!   switches wave, and `handover_ratio` = handovers / (clusters - 1): 1.0 is strict ABAB.
//!
//! Verdict (a choice, not a hardware fact): the pair alternates when each wave has at least
//! two MFMA clusters (one handover proves nothing), `handover_ratio` ≥ 0.75, `both_mfma`
//! ≤ 0.25 and `mem_under_mfma` ≥ 0.25 (the turns hide some of the partner's memory). Only
//! the window the spans cover is analysed (the trace keeps the first `trace_spans` spans of
//! the simulated CU).

use super::Prediction;
use std::collections::BTreeMap;
use std::fmt;

/// Handover ratio at or above which a pair counts as alternating.
pub const MIN_HANDOVER_RATIO: f64 = 0.75;
/// Share of MFMA-cluster time with both waves in a cluster at or below which a pair counts
/// as alternating.
pub const MAX_BOTH_MFMA: f64 = 0.25;
/// Share of MFMA-cluster time with the partner's memory in flight at or above which a pair
/// counts as alternating.
pub const MIN_MEM_UNDER_MFMA: f64 = 0.25;
/// MFMA clusters each wave needs for a verdict of alternating.
pub const MIN_CLUSTERS: usize = 2;

/// The alternation figures of two waves of one workgroup on one SIMD.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    pub simd: usize,
    pub wg: u64,
    /// Wave indices in the workgroup.
    pub waves: [usize; 2],
    /// MFMA clusters per wave.
    pub clusters: [usize; 2],
    /// Clocks inside MFMA clusters per wave.
    pub mfma_clocks: [u64; 2],
    pub handovers: usize,
    pub handover_ratio: f64,
    pub mem_under_mfma: f64,
    pub both_mfma: f64,
}

impl Pair {
    pub fn alternates(&self) -> bool {
        self.clusters.iter().all(|&c| c >= MIN_CLUSTERS)
            && self.handover_ratio >= MIN_HANDOVER_RATIO
            && self.both_mfma <= MAX_BOTH_MFMA
            && self.mem_under_mfma >= MIN_MEM_UNDER_MFMA
    }
}

impl fmt::Display for Pair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SIMD {} wg {} waves {}+{}: {}+{} MFMA clusters, {} handovers (ratio {:.2}), partner memory in flight \
             {:.0}% of MFMA-cluster time, both in MFMA clusters {:.0}%: {}",
            self.simd,
            self.wg,
            self.waves[0],
            self.waves[1],
            self.clusters[0],
            self.clusters[1],
            self.handovers,
            self.handover_ratio,
            100.0 * self.mem_under_mfma,
            100.0 * self.both_mfma,
            if self.alternates() { "alternating" } else { "not alternating" }
        )
    }
}

/// The analysis of a prediction: one entry per SIMD and workgroup with exactly two waves.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Alternation {
    pub pairs: Vec<Pair>,
}

impl Alternation {
    /// Pairs that alternate, of all pairs.
    pub fn alternating(&self) -> usize {
        self.pairs.iter().filter(|p| p.alternates()).count()
    }
    pub fn mean_mem_under_mfma(&self) -> f64 {
        mean(self.pairs.iter().map(|p| p.mem_under_mfma))
    }
    pub fn mean_both_mfma(&self) -> f64 {
        mean(self.pairs.iter().map(|p| p.both_mfma))
    }
    pub fn mean_handover_ratio(&self) -> f64 {
        mean(self.pairs.iter().map(|p| p.handover_ratio))
    }
}

fn mean(it: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = it.collect();
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

impl fmt::Display for Alternation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pairs.is_empty() {
            return Ok(());
        }
        writeln!(
            f,
            "  alternation (2 waves per SIMD): {}/{} pairs alternate; mean handover ratio {:.2}, partner memory in \
             flight {:.0}% of MFMA-cluster time, both in MFMA clusters {:.0}%",
            self.alternating(),
            self.pairs.len(),
            self.mean_handover_ratio(),
            100.0 * self.mean_mem_under_mfma(),
            100.0 * self.mean_both_mfma()
        )?;
        for p in self.pairs.iter().take(4) {
            writeln!(f, "    {p}")?;
        }
        Ok(())
    }
}

/// MFMA (dense or sparse) by mnemonic.
fn is_mfma(name: &str) -> bool {
    name.starts_with("v_mfma") || name.starts_with("v_smfmac")
}

/// LDS or vector memory by mnemonic (scalar loads are not the memory phase).
fn is_memory(name: &str) -> bool {
    ["ds_", "buffer_", "global_", "flat_", "scratch_"].iter().any(|p| name.starts_with(p))
}

/// Half-open clock intervals, sorted and disjoint.
type Intervals = Vec<(u64, u64)>;

fn union(mut v: Intervals) -> Intervals {
    v.sort_unstable();
    let mut out: Intervals = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

fn length(v: &[(u64, u64)]) -> u64 {
    v.iter().map(|(a, b)| b - a).sum()
}

fn intersection(x: &[(u64, u64)], y: &[(u64, u64)]) -> u64 {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < x.len() && j < y.len() {
        let (a, b) = (x[i].0.max(y[j].0), x[i].1.min(y[j].1));
        if a < b {
            n += b - a;
        }
        if x[i].1 < y[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    n
}

/// One wave's MFMA clusters (in order, not merged) and memory in flight (merged).
#[derive(Default)]
struct Phases {
    clusters: Intervals,
    memory: Intervals,
}

fn phases(spans: &[&super::cu::Span]) -> Phases {
    let mut p = Phases::default();
    let mut open: Option<(u64, u64)> = None;
    let mut mem = Vec::new();
    for s in spans {
        let end = s.start + s.dur;
        if is_mfma(&s.name) {
            open = Some(match open {
                Some((a, b)) => (a, b.max(end)),
                None => (s.start, end),
            });
        } else if is_memory(&s.name) {
            mem.push((s.start, end));
            if let Some(c) = open.take() {
                p.clusters.push(c);
            }
        }
    }
    if let Some(c) = open {
        p.clusters.push(c);
    }
    p.memory = union(mem);
    p
}

/// Analyses the spans of `p` (empty when it was predicted without `trace_spans`).
pub fn analyse(p: &Prediction) -> Alternation {
    let mut by_wave: BTreeMap<usize, Vec<&super::cu::Span>> = BTreeMap::new();
    for s in &p.spans {
        by_wave.entry(s.wave_uid).or_default().push(s);
    }
    // Waves of one workgroup on one SIMD.
    let mut groups: BTreeMap<(u64, usize), Vec<&super::cu::WaveTiming>> = BTreeMap::new();
    for w in &p.waves {
        groups.entry((w.wg, w.simd)).or_default().push(w);
    }
    let mut out = Alternation::default();
    for ((wg, simd), ws) in groups {
        let [a, b] = ws[..] else { continue };
        let ph = [a, b].map(|w| {
            let mut v = by_wave.remove(&w.uid).unwrap_or_default();
            v.sort_by_key(|s| s.start);
            phases(&v)
        });
        if ph.iter().any(|x| x.clusters.is_empty()) {
            continue;
        }
        let merged = [union(ph[0].clusters.clone()), union(ph[1].clusters.clone())];
        let mfma = [length(&merged[0]), length(&merged[1])];
        let total = (mfma[0] + mfma[1]).max(1) as f64;
        let under = intersection(&merged[0], &ph[1].memory) + intersection(&merged[1], &ph[0].memory);
        let both = 2 * intersection(&merged[0], &merged[1]);
        let mut seq: Vec<(u64, usize)> = ph[0].clusters.iter().map(|c| (c.0, 0)).collect();
        seq.extend(ph[1].clusters.iter().map(|c| (c.0, 1)));
        seq.sort_unstable();
        let handovers = seq.windows(2).filter(|x| x[0].1 != x[1].1).count();
        out.pairs.push(Pair {
            simd,
            wg,
            waves: [a.wave, b.wave],
            clusters: [ph[0].clusters.len(), ph[1].clusters.len()],
            mfma_clocks: mfma,
            handovers,
            handover_ratio: handovers as f64 / (seq.len() - 1).max(1) as f64,
            mem_under_mfma: under as f64 / total,
            both_mfma: both as f64 / total,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_arithmetic() {
        assert_eq!(union(vec![(5, 8), (0, 2), (1, 3), (8, 9)]), vec![(0, 3), (5, 9)]);
        assert_eq!(intersection(&[(0, 10), (20, 30)], &[(5, 25)]), 10);
        assert_eq!(intersection(&[(0, 10)], &[(10, 20)]), 0);
        assert_eq!(length(&[(0, 3), (5, 9)]), 7);
    }

    #[test]
    fn clusters_split_at_memory_instructions() {
        let sp = |name: &str, start, dur| super::super::cu::Span { wave_uid: 0, name: name.into(), start, dur };
        let v = [
            sp("v_mfma_f32_32x32x8_bf16", 0, 32),
            sp("v_mfma_f32_32x32x8_bf16", 32, 32),
            sp("s_setprio", 64, 4),
            sp("ds_read_b128", 68, 70),
            sp("buffer_load_dword", 72, 500),
            sp("v_mfma_f32_32x32x8_bf16", 140, 32),
        ];
        let refs: Vec<&_> = v.iter().collect();
        let p = phases(&refs);
        assert_eq!(p.clusters, vec![(0, 64), (140, 172)]);
        assert_eq!(p.memory, vec![(68, 572)]);
    }
}
