//! The timing model's characterisation of every catalogue kernel, so the dispatcher ranks kernels
//! by the timing model (`gemm_emu::timing`) without running it inside a library call.
//!
//! A prediction of the model takes a fraction of a second to seconds (it simulates a CU cycle by
//! cycle); the dispatcher needs an answer in microseconds. So `gemm plan --characterise` runs the
//! model, ahead of time, on a few launches of each kernel that isolate what the model's answer for
//! any problem is made of (`grid.rs` of the model: the busiest CU's workgroups, `occupancy` at a
//! time, a first round, steady-state rounds, a partial last round; and the per-workgroup time,
//! linear in the K loop's trip count), and writes the predicted times into
//! `gemm-dispatch/data/kernel_timing.tsv`, which this module embeds. [`TableModel`] composes a
//! prediction for any `(M, N, K)` from them.
//!
//! Each kernel is characterised at two values of K (`k_lo = 4 KT`, `k_hi = 12 KT`) on four grids:
//!
//! * `S`: 8 workgroups, one per XCD, each alone on its CU (the chip nearly idle: latency bound);
//! * `F`: one workgroup on every CU (all CUs share the L2 and HBM bandwidth);
//! * `R1`: `occupancy` workgroups on every CU (one full round);
//! * `R3`: three full rounds (so a steady-state round is `(R3 - R1) / 2`).
//!
//! Every grid is a near-square arrangement of whole tiles. Between the two K values a time is
//! linear in K (the main loop); outside them it is extrapolated along the same line.
//!
//! Rows are keyed by the kernel's name and a hash of its code object, so a kernel whose code
//! changed since the table was written is *stale*: [`TableModel`] falls back to
//! [`StaticEstimate`](crate::plan::choice::StaticEstimate) for it, ranks it after every
//! characterised kernel (a roofline is not comparable with the model's predictions) and
//! `gemm plan` says why. The table's header records a fingerprint of the timing model's
//! parameters of each architecture; `gemm plan` warns when it differs from the model built in,
//! and the `kernel_table` tests fail with the command that regenerates the table.

use crate::plan::kernel_plan::KernelPlan;
use gemm_core::{Arch, GemmProblem};
use gemm_kernels::KernelEntry;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::OnceLock;

/// The command that regenerates the table (from the workspace root).
pub const REGENERATE: &str = "cargo run --release -p gemm-lab --bin gemm -- plan --characterise --jobs 2";

/// The embedded table, as committed.
pub const TABLE_TEXT: &str = include_str!("../../data/kernel_timing.tsv");

/// Where the table lives in the workspace (for `gemm plan --characterise`).
pub fn table_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/kernel_timing.tsv")
}

/// 64-bit FNV-1a: a stable content hash (identity, not security).
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>, mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// The hash a kernel's rows are keyed by: its name and its code object's bytes.
pub fn code_hash(e: &KernelEntry) -> u64 {
    let h = fnv1a(e.name.bytes(), FNV_OFFSET);
    fnv1a(e.code_object.iter().copied(), fnv1a([0], h))
}

/// The hash of every catalogue kernel, computed once (the code objects are a few megabytes).
fn catalogue_hash(e: &'static KernelEntry) -> u64 {
    static HASHES: OnceLock<HashMap<usize, u64>> = OnceLock::new();
    let map = HASHES.get_or_init(|| {
        gemm_kernels::catalogue().iter().map(|e| (e as *const KernelEntry as usize, code_hash(e))).collect()
    });
    map.get(&(e as *const KernelEntry as usize)).copied().unwrap_or_else(|| code_hash(e))
}

/// Whether a kernel is characterised: the kernels a plain GEMM can run (fused-epilogue kernels
/// take their own calls and grouped kernels a problem table; `gemm plan --group` predicts those
/// directly).
pub fn characterised(e: &KernelEntry) -> bool {
    // Split-K kernels run as a pair through a workspace; `splitk.rs` predicts the pair.
    e.is_plain()
}

/// One kernel's row: predicted seconds on each grid at `k[0]` and `k[1]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub kernel: String,
    pub arch: Arch,
    pub hash: u64,
    /// Workgroups resident per CU, as the model found.
    pub occupancy: u32,
    pub k: [u32; 2],
    pub s: [f64; 2],
    pub f: [f64; 2],
    pub r1: [f64; 2],
    pub r3: [f64; 2],
}

/// The characterisation table: rows by kernel name, and the model fingerprint per arch.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub rows: HashMap<String, Row>,
    pub fingerprints: HashMap<Arch, u64>,
}

const COLUMNS: &str = "kernel\tarch\thash\toccupancy\tk_lo\tk_hi\ts_lo\ts_hi\tf_lo\tf_hi\tr1_lo\tr1_hi\tr3_lo\tr3_hi";

impl Table {
    /// The table as its file holds it: a header (what it is, the regenerate command, the model
    /// fingerprints), then one tab-separated row per kernel, times in seconds (Rust's shortest
    /// round-trip form, so reading gives back the model's exact numbers).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ =
            writeln!(s, "# Timing-model characterisation of the catalogue kernels (gemm_dispatch::plan::cost_table).");
        let _ =
            writeln!(s, "# Predicted seconds per grid (S, F, R1, R3) at K = k_lo and k_hi. Regenerate: {REGENERATE}");
        let mut archs: Vec<_> = self.fingerprints.iter().collect();
        archs.sort_by_key(|(a, _)| a.name());
        for (a, f) in archs {
            let _ = writeln!(s, "# model {} {f:016x}", a.name());
        }
        let _ = writeln!(s, "{COLUMNS}");
        let mut rows: Vec<&Row> = self.rows.values().collect();
        rows.sort_by(|a, b| (a.arch.name(), &a.kernel).cmp(&(b.arch.name(), &b.kernel)));
        for r in rows {
            let _ = writeln!(
                s,
                "{}\t{}\t{:016x}\t{}\t{}\t{}\t{:?}\t{:?}\t{:?}\t{:?}\t{:?}\t{:?}\t{:?}\t{:?}",
                r.kernel,
                r.arch.name(),
                r.hash,
                r.occupancy,
                r.k[0],
                r.k[1],
                r.s[0],
                r.s[1],
                r.f[0],
                r.f[1],
                r.r1[0],
                r.r1[1],
                r.r3[0],
                r.r3[1]
            );
        }
        s
    }

    /// Reads [`Table::to_text`]'s form.
    pub fn parse(text: &str) -> Result<Table, String> {
        let mut t = Table::default();
        for (i, line) in text.lines().enumerate() {
            let at = |what: &str| format!("kernel_timing.tsv line {}: {what}", i + 1);
            if let Some(rest) = line.strip_prefix("# model ") {
                let mut it = rest.split_whitespace();
                let arch: Arch = it.next().unwrap_or("").parse().map_err(|e: gemm_core::Error| at(&e.to_string()))?;
                let f = u64::from_str_radix(it.next().unwrap_or(""), 16).map_err(|e| at(&e.to_string()))?;
                t.fingerprints.insert(arch, f);
                continue;
            }
            if line.starts_with('#') || line.trim().is_empty() || line == COLUMNS {
                continue;
            }
            let v: Vec<&str> = line.split('\t').collect();
            if v.len() != 14 {
                return Err(at(&format!("{} fields, expected 14", v.len())));
            }
            let num = |j: usize| v[j].parse::<f64>().map_err(|e| at(&format!("{}: {e}", v[j])));
            let int = |j: usize| v[j].parse::<u32>().map_err(|e| at(&format!("{}: {e}", v[j])));
            let row = Row {
                kernel: v[0].to_string(),
                arch: v[1].parse().map_err(|e: gemm_core::Error| at(&e.to_string()))?,
                hash: u64::from_str_radix(v[2], 16).map_err(|e| at(&e.to_string()))?,
                occupancy: int(3)?,
                k: [int(4)?, int(5)?],
                s: [num(6)?, num(7)?],
                f: [num(8)?, num(9)?],
                r1: [num(10)?, num(11)?],
                r3: [num(12)?, num(13)?],
            };
            if row.k[1] <= row.k[0] {
                return Err(at("k_hi must exceed k_lo"));
            }
            t.rows.insert(row.kernel.clone(), row);
        }
        Ok(t)
    }

    /// The row of `e`, if the table has one for its current code; else why not.
    pub fn row(&self, e: &'static KernelEntry) -> Result<&Row, String> {
        match self.rows.get(e.name) {
            Some(r) if r.hash == catalogue_hash(e) && r.arch == e.arch => Ok(r),
            Some(_) => Err(format!(
                "{} changed since the table was written (code hash {:016x}, table {:016x})",
                e.name,
                catalogue_hash(e),
                self.rows[e.name].hash
            )),
            None => Err(format!("{} is not in the characterisation table", e.name)),
        }
    }
}

/// The embedded table (an unreadable table is an empty one: every kernel falls back, and the
/// `kernel_table` tests fail).
pub fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| Table::parse(TABLE_TEXT).unwrap_or_default())
}

/// A time measured at `k_lo` and `k_hi`, at `k`: linear between; below `k_lo` extrapolated
/// along the same line (never below a tenth of the `k_lo` time); beyond `k_hi` along the measured
/// slope or `min_slope`, whichever is steeper.
///
/// Why the floor beyond `k_hi`: the two K values are short (4 and 12 K tiles), and part of the
/// K tiles added between them still hide under the pipeline's fill and the epilogue, so the
/// measured slope can be flatter than the main loop's steady state; extrapolated to a long K it
/// predicted rounds faster than the matrix pipes can compute them (issue 28: 961 TFLOP/s for
/// gfx942 bf16 4096 x 57344 x 8192, above the 751 the loaded clock allows). A long main loop runs
/// at least at the MFMA time of each K step, which is `min_slope`.
fn at_k(x: [f64; 2], ks: [u32; 2], k: f64, min_slope: f64) -> f64 {
    let slope = (x[1] - x[0]) / f64::from(ks[1] - ks[0]);
    if k > f64::from(ks[1]) {
        return x[1] + slope.max(min_slope) * (k - f64::from(ks[1]));
    }
    (x[0] + slope * (k - f64::from(ks[0]))).max(0.1 * x[0])
}

/// The prediction composed from `row` for a launch of `wgs` workgroups that each run `k` of the
/// problem's K (rounded up to whole K tiles), following the model's own grid arithmetic
/// (`gemm_emu::timing::grid`): the busiest CU (CU 0 of XCD 0) receives
/// `n = ceil(ceil(wgs / XCDs) / CUs_per_XCD)` workgroups, `occupancy` at a time.
///
/// * fewer workgroups than CUs: `F` scaled by the busy CUs' share, at least `S` (the busy CUs
///   share the chip's bandwidth);
/// * `n <= occupancy` (one round): between `F` (one per CU) and `R1`, by `n`;
/// * more: `R1`, then steady rounds of `(R3 - R1) / 2`: fractional rounds while the model
///   simulates the whole stream (`n <= 4 occupancy`), else whole rounds and a partial last
///   round at its own one-round time, as the model extrapolates.
pub fn compose(row: &Row, arch: Arch, wgs: u64, k: f64) -> f64 {
    compose_bounded(row, arch, wgs, k, 0.0)
}

/// [`compose`] with the time one workgroup's main loop takes per unit of K at the least,
/// `wg_k_seconds` (its tile's `2 TM TN` flops at one CU's share of the MFMA ceiling): beyond
/// `k_hi` each grid's time grows at least by the workgroups a CU runs on it times that
/// ([`at_k`]), a steady round is at least its `occupancy` tiles' MFMA time, and the whole is at
/// least the MFMA time of the busiest CU's workgroups.
pub fn compose_bounded(row: &Row, arch: Arch, wgs: u64, k: f64, wg_k_seconds: f64) -> f64 {
    let caps = arch.caps();
    let cus = u64::from(caps.compute_units);
    let xcds = u64::from(caps.xcds.max(1));
    let occ = u64::from(row.occupancy.max(1));
    let w = wg_k_seconds;
    let (s, f) = (at_k(row.s, row.k, k, w), at_k(row.f, row.k, k, w));
    let (r1, r3) = (at_k(row.r1, row.k, k, occ as f64 * w), at_k(row.r3, row.k, k, 3.0 * occ as f64 * w));
    let one_round = |n: u64| {
        if occ <= 1 {
            f
        } else {
            f + (r1 - f) * (n.clamp(1, occ) - 1) as f64 / (occ - 1) as f64
        }
    };
    // Workgroups the busiest CU runs (CU 0 of XCD 0): its MFMA work alone takes `n w k`, however
    // the rounds overlap.
    let n = wgs.div_ceil(xcds).div_ceil((cus / xcds).max(1));
    let busiest = n as f64 * w * k;
    let composed = if wgs <= xcds {
        s
    } else if wgs < cus {
        // The busy CUs share the chip's bandwidth (the timing model gives each busy CU its
        // workgroups' share of it): a bandwidth-bound `F` shrinks with the workgroups, a
        // latency- or compute-bound one (`F` near `S`) stays; never below `S`.
        (f * wgs as f64 / cus as f64).clamp(s.min(f), f)
    } else if n <= occ {
        one_round(n)
    } else {
        // A steady round of `occ` workgroups computes `occ` tiles on the CU at the least.
        let period = ((r3 - r1) / 2.0).max(occ as f64 * w * k);
        if n <= 4 * occ {
            r1 + period * (n - occ) as f64 / occ as f64
        } else {
            let full = n / occ;
            let rem = n % occ;
            r1 + period * (full - 1) as f64 + if rem > 0 { one_round(rem) } else { 0.0 }
        }
    };
    composed.max(busiest)
}

/// The timing model through the characterisation table: what the dispatcher ranks by.
#[derive(Clone, Copy, Debug, Default)]
pub struct TableModel;

impl TableModel {
    /// The composed prediction for `plan`, or why the table has none (stale or missing row).
    pub fn composed(plan: &KernelPlan, p: &GemmProblem) -> Result<f64, String> {
        let row = table().row(plan.entry)?;
        let wgs = u64::from(plan.grid[0]) * u64::from(plan.grid[1]) * u64::from(plan.grid[2]);
        let e = plan.entry;
        let kt = f64::from(e.tile.2.max(1));
        let k = (p.k.max(1) as f64 / kt).ceil() * kt;
        let per_cu = e.arch.mfma_ceiling_tflops(e.a_type, e.xf32()) * 1e12 / f64::from(e.arch.caps().compute_units);
        let wg_k_seconds = 2.0 * f64::from(e.tile.0) * f64::from(e.tile.1) / per_cu;
        // The characterisation's grids are near-square arrangements of tiles that share their
        // A and B panels through L2 and the Infinity Cache; a skinny or wide problem's operands
        // are read with little reuse, traffic the table never measured. Its compulsory bytes at
        // the peak HBM bandwidth bound the composed time ([`crate::plan::bounds`]).
        let memory = crate::plan::bounds::floor(e.arch, p, e.xf32()).memory_seconds;
        Ok(compose_bounded(row, e.arch, wgs, k, wg_k_seconds).max(memory))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_text_round_trips() {
        let e = gemm_kernels::catalogue().iter().find(|e| characterised(e)).unwrap();
        let row = Row {
            kernel: e.name.into(),
            arch: e.arch,
            hash: code_hash(e),
            occupancy: 2,
            k: [128, 384],
            s: [1.25e-6, 3.1e-6],
            f: [2.0e-6, 4.000000000000001e-6],
            r1: [3.0e-6, 7.0e-6],
            r3: [8.0e-6, 19.0e-6],
        };
        let mut t = Table::default();
        t.rows.insert(row.kernel.clone(), row.clone());
        t.fingerprints.insert(e.arch, 0x0123_4567_89ab_cdef);
        let back = Table::parse(&t.to_text()).unwrap();
        assert_eq!(back.rows[e.name], row);
        assert_eq!(back.fingerprints[&e.arch], 0x0123_4567_89ab_cdef);
        assert!(back.row(e).is_ok());
        // Another kernel's code under this name is stale.
        let mut stale = row;
        stale.hash ^= 1;
        t.rows.insert(stale.kernel.clone(), stale);
        assert!(t.row(e).unwrap_err().contains("changed"));
        assert!(Table::parse("a\tb\n").is_err());
    }

    #[test]
    fn composition_follows_the_grid_arithmetic() {
        let row = Row {
            kernel: "x".into(),
            arch: Arch::Gfx942,
            hash: 0,
            occupancy: 2,
            k: [100, 300],
            s: [1.0, 3.0],
            f: [2.0, 4.0],
            r1: [3.0, 7.0],
            r3: [7.0, 19.0],
        };
        let a = Arch::Gfx942; // 8 XCDs x 38 CUs
        assert_eq!(compose(&row, a, 1, 100.0), 1.0);
        assert_eq!(compose(&row, a, 8, 200.0), 2.0);
        assert_eq!(compose(&row, a, 304, 100.0), 2.0);
        assert_eq!(compose(&row, a, 608, 100.0), 3.0);
        // Three rounds: R1 and two steady periods is R3 itself.
        assert_eq!(compose(&row, a, 3 * 608, 300.0), 19.0);
        // Ten rounds: R1 + 9 periods of (19 - 7) / 2 at k_hi.
        assert_eq!(compose(&row, a, 10 * 608, 300.0), 7.0 + 9.0 * 6.0);
        // Linear in K, extrapolated beyond k_hi.
        assert_eq!(compose(&row, a, 608, 500.0), 11.0);
        assert!(compose(&row, a, 10 * 608 + 8, 300.0) > compose(&row, a, 10 * 608, 300.0));
    }
}
