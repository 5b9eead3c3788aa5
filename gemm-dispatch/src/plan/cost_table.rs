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
//! Each kernel is characterised at three values of K (`k_lo = 4 KT`, `k_hi = 12 KT` and a deep
//! `k_deep`, at least 4096), and `S` once more at one K tile (`k_min`: below `k_lo` every grid
//! follows `S`'s shape) and once at one K tile of edge tiles (`s_edge`: a tile whose rows cross
//! the problem's edge stores element by element, [`edge_seconds`]), on thirteen grids:
//!
//! * `S`: 8 workgroups, one per XCD, each alone on its CU (the chip nearly idle: latency bound);
//! * `H`: `h_wgs` workgroups, the most whose cache sharing the model measures across XCDs (its
//!   footprint pass samples whole XCDs up to a budget of workgroups, and sees the Infinity
//!   Cache's sharing only where it sampled two or more: `gemm_emu::timing::grid::footprint`);
//! * `F`: one workgroup on every CU (all CUs share the L2 and HBM bandwidth);
//! * `R1`: `occupancy` workgroups on every CU (one full round);
//! * `R3`: three full rounds (so a steady-state round is `(R3 - R1) / 2`);
//! * `WF`, `W1`, `W3`: `F`'s, `R1`'s and `R3`'s workgroups as one column of tiles (the kernel's
//!   M long, N one tile: every workgroup its own A panel, one B panel for all:
//!   [`Arrangement::Column`]);
//! * `OS`, `OH`, `OF`, `O1`, `O3`: `S`'s, `H`'s, `F`'s, `R1`'s and `R3`'s workgroups as one
//!   column of tiles with one activation column (n = 1, a Linear layer's M = 1): every tile's
//!   `TN` columns but one past the problem's edge (a tiled kernel's `OH` is its `H`, unused).
//!
//! `S` to `R3` are near-square arrangements of whole tiles ([`Arrangement::Square`]), which share
//! their A and B panels between the workgroups of an XCD. A skinny or wide problem (a Linear
//! layer's few activation rows against many weight rows, one tile row over a long N) shares one
//! operand's panels little, and the model's time for it is not the square grids'. The model
//! times a launch by the L2 hit fraction of the lines its footprint pass samples (a window of
//! each workgroup's first loads), and which operand's lines fill that window is the kernel's own
//! (its load order): so the row records `a_share`, the share of the sampled lines that are A's,
//! measured on the one-column grid (where A is never shared and B always). A launch's hit fraction is then estimated as the model
//! forms it, `a_share` times the share of A panel requests another workgroup of the XCD made
//! first plus the rest times B's ([`l2_estimate`], from the kernel's own workgroup order), and its
//! time is interpolated between the two arrangements' compositions by that estimate
//! ([`compose_problem`]). Between the K values a time is piecewise linear in K (the main loop); beyond `k_deep`
//! it is extrapolated along the last piece. The deep point is there because the model's cache hit
//! fractions come from each workgroup's first loads: at 4 and 12 K tiles part of that window is
//! the prologue, so the short-K slope is not the main loop's (issue 28: 1024 x 1024 x 65536
//! extrapolated from K = 768 came out 34% slow). Decode kernels are characterised on one column
//! of blocks at long K (their problems are one column of blocks): for them every arrangement is
//! that column (their `W` grids are their `F`, `R1`, `R3`). A problem of one column of tiles or
//! blocks that fills fewer than `TN` columns is interpolated by its column count between the
//! full column and the `O` grids' one (a 16-column decode block at M = 1 loads a sixteenth of
//! the activations and reduces one column: 1 x 1280 x 8192 fp8 on gfx942 composed at 9.1 us
//! from the full block against the model's 5.3; a 64x64 tile of bf16 at M = 1 reads one
//! activation column of its 64, the rest past the edge: 1 x 1280 x 8192 split 16 ways composed
//! 26% slow on gfx942 and 37% on gfx950 from the full column).
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

/// One kernel's row: predicted seconds on each grid at `k[0]`, `k[1]` and `k[2]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub kernel: String,
    pub arch: Arch,
    pub hash: u64,
    /// Workgroups resident per CU, as the model found.
    pub occupancy: u32,
    /// Workgroups of the `H` grid.
    pub h_wgs: u32,
    pub k: [u32; 3],
    pub s: [f64; 3],
    pub h: [f64; 3],
    pub f: [f64; 3],
    pub r1: [f64; 3],
    pub r3: [f64; 3],
    /// `F`, `R1` and `R3`'s workgroup counts as one column of tiles. A decode kernel's grids are
    /// all one column of blocks, so its `W` grids are its `F`, `R1` and `R3`.
    pub wf: [f64; 3],
    pub w1: [f64; 3],
    pub w3: [f64; 3],
    /// The one-column arrangement with one activation column (n = 1, a Linear layer's M = 1):
    /// `S`'s, `H`'s, `F`'s, `R1`'s and `R3`'s workgroup counts as one column of tiles (of blocks,
    /// a decode kernel), each tile's `TN` columns all but one past the problem's edge
    /// ([`Row::one_activation_column`]). A tiled kernel's `OH` is its `H` (its one-column
    /// arrangement has no `H`: [`Row::arranged`]).
    pub os: [f64; 3],
    pub oh: [f64; 3],
    pub of: [f64; 3],
    pub o1: [f64; 3],
    pub o3: [f64; 3],
    /// A decode kernel's grids at half its block's activation columns (`TN / 2`, where `TN` is
    /// 4 or more; zeros for a tiled kernel or a row written before them): the middle point of
    /// [`compose_split`]'s interpolation in the columns a problem fills
    /// ([`Row::half_activation_columns`]).
    pub ms: [f64; 3],
    pub mh: [f64; 3],
    pub mf: [f64; 3],
    pub m1: [f64; 3],
    pub m3: [f64; 3],
    /// The share of the lines the model's footprint window samples that are A's (the rest are
    /// B's), measured on the one-column grid `WF` at `k_deep`.
    pub a_share: f64,
    /// `S` at one K tile (a decode kernel's one K step), `k_min`: the shape of the time below
    /// `k_lo`, where the pipeline's prologue and epilogue are most of it (0: not measured, the
    /// first piece extrapolated). 64 x 64 x 64 fp8 on gfx950's 128x128x128 tile composed at 6.6
    /// us from the first piece where the model gives 11.5 (its `S` is 11.3 us at four K tiles).
    pub k_min: u32,
    pub s_min: f64,
    /// `S` at one K tile with every tile an edge tile (its rows cut `16` short of the tile, so
    /// the epilogue takes the element-by-element path, `lower.rs` `store_elements`); 0: not
    /// measured (a decode kernel, or a row written before it). `s_edge - s_min` is what one
    /// edge tile costs a CU ([`edge_seconds`]): 64 x 64 x 64 fp8 on gfx950's 128x128x128 tile
    /// runs 11.5 us in the model against 7.3 for the whole tile at K = 128.
    pub s_edge: f64,
}

impl Row {
    /// The row as a streaming arrangement measured it: `F`, `R1`, `R3` its own, `S` the square
    /// one. Below one workgroup per CU it runs from `S` to its own `F` (no `H`: the `H` grid measures the
    /// Infinity Cache sharing square panels between XCDs, which a stream of panels that no two
    /// workgroups share does not have; 224 one-column workgroups of a 128x128 tile on gfx950
    /// composed from `H` at 44.8 us where the model gives 59.5).
    fn arranged(&self, f: [f64; 3], r1: [f64; 3], r3: [f64; 3]) -> Row {
        Row { f, r1, r3, h_wgs: 0, ..self.clone() }
    }

    /// The grids' times at `k`: `S`, `F`, `H`, `R1`, `R3` ([`at_k`], each grid's slope beyond
    /// `k_deep` at least its workgroups per CU times `wg_k_seconds`).
    pub fn grids_at(&self, k: f64, wg_k_seconds: f64) -> (f64, f64, f64, f64, f64) {
        let short = (self.k_min > 0 && self.s_min > 0.0 && self.s[0] > 0.0)
            .then(|| (f64::from(self.k_min), self.s_min / self.s[0]));
        let (w, occ) = (wg_k_seconds, f64::from(self.occupancy.max(1)));
        let at = |x: [f64; 3], slope: f64| at_k(x, self.k, k, slope, short);
        (at(self.s, w), at(self.f, w), at(self.h, w), at(self.r1, occ * w), at(self.r3, 3.0 * occ * w))
    }

    /// [`Row::arranged`] as one column of tiles (`WF`, `W1`, `W3`).
    pub fn column(&self) -> Row {
        self.arranged(self.wf, self.w1, self.w3)
    }

    /// A decode row at half its block's activation columns: its `M` grids, where it has them.
    pub fn half_activation_columns(&self) -> Option<Row> {
        (self.mf[0] > 0.0).then(|| Row { s: self.ms, h: self.mh, f: self.mf, r1: self.m1, r3: self.m3, ..self.clone() })
    }

    /// The row at one activation column: its `O` grids. A decode kernel's grids are one column
    /// of blocks either way, so its `H` keeps its meaning; a tiled kernel's are its one-column
    /// arrangement ([`Row::column`]) with one filled column, `S` its own.
    pub fn one_activation_column(&self, decode: bool) -> Row {
        if decode {
            Row { s: self.os, h: self.oh, f: self.of, r1: self.o1, r3: self.o3, ..self.clone() }
        } else {
            Row { s: self.os, ..self.arranged(self.of, self.o1, self.o3) }
        }
    }
}

/// The characterisation table: rows by kernel name, the split-K reductions' least times, and the
/// model fingerprint per arch.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub rows: HashMap<String, Row>,
    pub reductions: HashMap<String, Reduction>,
    pub fingerprints: HashMap<Arch, u64>,
}

/// A split-K reduction kernel's least time: the timing model's prediction of its launch over one
/// 64x64 C block from two slabs, where its bytes take a few nanoseconds and what is left is the
/// launch, the argument loads and one load and store round trip ([`reduction_seconds`]). The
/// slabs' traffic at HBM bandwidth comes on top (`splitk.rs`). Without it a split of a decode
/// shard composed 22-30% below the model's prediction of its two launches (1 x 1280 x 8192 fp8
/// on gfx950: 2.3 us against 3.3, of which the reduction is 0.9).
#[derive(Clone, Debug, PartialEq)]
pub struct Reduction {
    pub kernel: String,
    pub arch: Arch,
    pub hash: u64,
    pub seconds: f64,
}

/// The least time of the reduction kernel `e` (`SplitRole::Reduce`), if the table has it for its
/// current code; else 0 (the slabs' traffic alone, as before the table had it).
pub fn reduction_seconds(e: &'static KernelEntry) -> f64 {
    match table().reductions.get(e.name) {
        Some(r) if r.hash == catalogue_hash(e) && r.arch == e.arch => r.seconds,
        _ => 0.0,
    }
}

/// The grids of a row, in the file's column order.
const GRIDS: [&str; 13] = ["s", "h", "f", "r1", "r3", "wf", "w1", "w3", "os", "oh", "of", "o1", "o3"];
/// The half-activation-column grids ([`Row::ms`]..), after `s_edge`.
const HALF_GRIDS: [&str; 5] = ["ms", "mh", "mf", "m1", "m3"];
/// Fields of a row: name, arch, hash, occupancy, `h_wgs`, `a_share`, three K values, three
/// times per grid, `k_min`, `s_min` and `s_edge`.
const FIELDS: usize = 12 + 3 * GRIDS.len();
/// Fields of a row with the half-activation-column grids (session 36).
const HALF_FIELDS: usize = FIELDS + 3 * HALF_GRIDS.len();

/// Fields of a row written before the deep K and the streaming grids (issue 28): two K values,
/// `S`, `F`, `R1` and `R3`. Read as a row whose deep point is its `k_hi` (extrapolated along the
/// first piece, as then), with no `H` grid and the one-column grids equal to the square ones (so
/// it composes exactly as before), until the table is regenerated.
const LEGACY_FIELDS: usize = 14;

/// A legacy row ([`LEGACY_FIELDS`]).
fn legacy_row(v: &[&str]) -> Result<Row, String> {
    let num = |j: usize| v[j].parse::<f64>().map_err(|e| format!("{}: {e}", v[j]));
    let int = |j: usize| v[j].parse::<u32>().map_err(|e| format!("{}: {e}", v[j]));
    let two = |j: usize| -> Result<[f64; 3], String> { Ok([num(j)?, num(j + 1)?, num(j + 1)?]) };
    let (klo, khi) = (int(4)?, int(5)?);
    if khi <= klo {
        return Err("k_hi must exceed k_lo".into());
    }
    let (s, f, r1, r3) = (two(6)?, two(8)?, two(10)?, two(12)?);
    Ok(Row {
        kernel: v[0].to_string(),
        arch: v[1].parse().map_err(|e: gemm_core::Error| e.to_string())?,
        hash: u64::from_str_radix(v[2], 16).map_err(|e| e.to_string())?,
        occupancy: int(3)?,
        h_wgs: 0,
        k: [klo, khi, khi],
        s,
        h: s,
        f,
        r1,
        r3,
        wf: f,
        w1: r1,
        w3: r3,
        os: s,
        oh: s,
        of: f,
        o1: r1,
        o3: r3,
        ms: [0.0; 3],
        mh: [0.0; 3],
        mf: [0.0; 3],
        m1: [0.0; 3],
        m3: [0.0; 3],
        a_share: 0.0,
        k_min: 0,
        s_min: 0.0,
        s_edge: 0.0,
    })
}

impl Row {
    /// Whether the row is a legacy one ([`LEGACY_FIELDS`]).
    pub fn is_legacy(&self) -> bool {
        self.k[1] == self.k[2]
    }
}

/// The header line naming the columns.
fn columns() -> String {
    let mut c = String::from("kernel\tarch\thash\toccupancy\th_wgs\ta_share\tk_lo\tk_hi\tk_deep");
    for g in GRIDS {
        for k in ["lo", "hi", "deep"] {
            let _ = write!(c, "\t{g}_{k}");
        }
    }
    c.push_str("\tk_min\ts_min\ts_edge");
    for g in HALF_GRIDS {
        for k in ["lo", "hi", "deep"] {
            let _ = write!(c, "\t{g}_{k}");
        }
    }
    c
}

impl Table {
    /// The table as its file holds it: a header (what it is, the regenerate command, the model
    /// fingerprints), then one tab-separated row per kernel, times in seconds (Rust's shortest
    /// round-trip form, so reading gives back the model's exact numbers).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ =
            writeln!(s, "# Timing-model characterisation of the catalogue kernels (gemm_dispatch::plan::cost_table).");
        let _ =
            writeln!(s, "# Predicted seconds per grid (S, H, F, R1, R3 square; WF, W1, W3 one column; OS, OH, OF, O1, O3 one column at one activation column) at K = k_lo, k_hi and k_deep. Regenerate: {REGENERATE}");
        let mut archs: Vec<_> = self.fingerprints.iter().collect();
        archs.sort_by_key(|(a, _)| a.name());
        for (a, f) in archs {
            let _ = writeln!(s, "# model {} {f:016x}", a.name());
        }
        let mut reductions: Vec<&Reduction> = self.reductions.values().collect();
        reductions.sort_by(|a, b| (a.arch.name(), &a.kernel).cmp(&(b.arch.name(), &b.kernel)));
        for r in reductions {
            let _ = writeln!(s, "# reduction {} {} {:016x} {:?}", r.kernel, r.arch.name(), r.hash, r.seconds);
        }
        let _ = writeln!(s, "{}", columns());
        let mut rows: Vec<&Row> = self.rows.values().collect();
        rows.sort_by(|a, b| (a.arch.name(), &a.kernel).cmp(&(b.arch.name(), &b.kernel)));
        for r in rows {
            if r.is_legacy() {
                let mut line = format!(
                    "{}\t{}\t{:016x}\t{}\t{}\t{}",
                    r.kernel,
                    r.arch.name(),
                    r.hash,
                    r.occupancy,
                    r.k[0],
                    r.k[1]
                );
                for x in [r.s, r.f, r.r1, r.r3] {
                    let _ = write!(line, "\t{:?}\t{:?}", x[0], x[1]);
                }
                let _ = writeln!(s, "{line}");
                continue;
            }
            let mut line = format!(
                "{}\t{}\t{:016x}\t{}\t{}\t{:?}",
                r.kernel,
                r.arch.name(),
                r.hash,
                r.occupancy,
                r.h_wgs,
                r.a_share
            );
            for k in r.k {
                let _ = write!(line, "\t{k}");
            }
            for x in [r.s, r.h, r.f, r.r1, r.r3, r.wf, r.w1, r.w3, r.os, r.oh, r.of, r.o1, r.o3].iter().flatten() {
                let _ = write!(line, "\t{x:?}");
            }
            let _ = write!(line, "\t{}\t{:?}\t{:?}", r.k_min, r.s_min, r.s_edge);
            for x in [r.ms, r.mh, r.mf, r.m1, r.m3].iter().flatten() {
                let _ = write!(line, "\t{x:?}");
            }
            let _ = writeln!(s, "{line}");
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
            if let Some(rest) = line.strip_prefix("# reduction ") {
                let v: Vec<&str> = rest.split_whitespace().collect();
                let [kernel, arch, hash, seconds] = v[..] else {
                    return Err(at("a reduction line takes a kernel, an arch, a hash and seconds"));
                };
                let r = Reduction {
                    kernel: kernel.to_string(),
                    arch: arch.parse().map_err(|e: gemm_core::Error| at(&e.to_string()))?,
                    hash: u64::from_str_radix(hash, 16).map_err(|e| at(&e.to_string()))?,
                    seconds: seconds.parse().map_err(|e| at(&format!("{seconds}: {e}")))?,
                };
                t.reductions.insert(r.kernel.clone(), r);
                continue;
            }
            if line.starts_with('#') || line.trim().is_empty() || line.starts_with("kernel\t") {
                continue;
            }
            let v: Vec<&str> = line.split('\t').collect();
            if v.len() == LEGACY_FIELDS {
                let row = legacy_row(&v).map_err(|e| at(&e))?;
                t.rows.insert(row.kernel.clone(), row);
                continue;
            }
            // A row written before `s_edge` (one field fewer) reads as unmeasured, and one
            // written before the half-activation-column grids as without them.
            if ![HALF_FIELDS, FIELDS, FIELDS - 1].contains(&v.len()) {
                return Err(at(&format!("{} fields, expected {HALF_FIELDS}", v.len())));
            }
            let num = |j: usize| v[j].parse::<f64>().map_err(|e| at(&format!("{}: {e}", v[j])));
            let int = |j: usize| v[j].parse::<u32>().map_err(|e| at(&format!("{}: {e}", v[j])));
            let three = |j: usize| -> Result<[f64; 3], String> { Ok([num(j)?, num(j + 1)?, num(j + 2)?]) };
            let half = |j: usize| -> Result<[f64; 3], String> {
                if v.len() == HALF_FIELDS {
                    three(FIELDS + 3 * j)
                } else {
                    Ok([0.0; 3])
                }
            };
            let row = Row {
                kernel: v[0].to_string(),
                arch: v[1].parse().map_err(|e: gemm_core::Error| at(&e.to_string()))?,
                hash: u64::from_str_radix(v[2], 16).map_err(|e| at(&e.to_string()))?,
                occupancy: int(3)?,
                h_wgs: int(4)?,
                a_share: num(5)?,
                k: [int(6)?, int(7)?, int(8)?],
                s: three(9)?,
                h: three(12)?,
                f: three(15)?,
                r1: three(18)?,
                r3: three(21)?,
                wf: three(24)?,
                w1: three(27)?,
                w3: three(30)?,
                os: three(33)?,
                oh: three(36)?,
                of: three(39)?,
                o1: three(42)?,
                o3: three(45)?,
                k_min: int(48)?,
                s_min: num(49)?,
                s_edge: if v.len() >= FIELDS { num(50)? } else { 0.0 },
                ms: half(0)?,
                mh: half(1)?,
                mf: half(2)?,
                m1: half(3)?,
                m3: half(4)?,
            };
            if !(row.k[0] < row.k[1] && row.k[1] < row.k[2]) {
                return Err(at("the K values must increase"));
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

/// A time measured at `ks = [k_lo, k_hi, k_deep]`, at `k`: piecewise linear between them; below
/// `k_lo` extrapolated along the first piece (never below a tenth of the `k_lo` time); beyond
/// `k_deep` along the last piece's slope or `min_slope`, whichever is steeper.
///
/// Why the floor beyond `k_deep`: a long main loop runs at least at the MFMA time of each K step,
/// which is `min_slope`; a slope measured at shorter K can still hold part of the pipeline's fill
/// (issue 28: extrapolated from 12 K tiles, gfx942 bf16 4096 x 57344 x 8192 came out at 961
/// TFLOP/s, above the 751 the loaded clock allows).
///
/// Below `k_lo` the row's short-K shape: where `S` was measured at `k_min`, each grid's time at
/// `k_lo` scaled by `S`'s ratio, linear from `k_min` to `k_lo` (`short = (k_min, s_min / s_lo)`).
fn at_k(x: [f64; 3], ks: [u32; 3], k: f64, min_slope: f64, short: Option<(f64, f64)>) -> f64 {
    let kf = ks.map(f64::from);
    if let Some((k_min, ratio)) = short.filter(|&(k_min, _)| k < kf[0] && k_min < kf[0]) {
        // Below `k_min` (a problem shorter than one K tile, whose loads past K read nothing) along
        // the same line: 64 x 64 x 64 on a decode kernel's 512-deep block composed at 3.5 us, its
        // one whole K step, where the model gives 2.8; along the line, 2.4.
        let at = ((k - k_min) / (kf[0] - k_min)).min(1.0);
        return (x[0] * (ratio + (1.0 - ratio) * at)).max(0.1 * x[0]);
    }
    let slope = |i: usize| (x[i + 1] - x[i]) / (kf[i + 1] - kf[i]);
    if kf[2] == kf[1] && k > kf[1] {
        // A legacy row: no deep point, the first piece extrapolated.
        return x[1] + slope(0).max(min_slope) * (k - kf[1]);
    }
    if k > kf[2] {
        return x[2] + slope(1).max(min_slope) * (k - kf[2]);
    }
    if k > kf[1] {
        return x[1] + slope(1) * (k - kf[1]);
    }
    (x[0] + slope(0) * (k - kf[0])).max(0.1 * x[0])
}

/// The prediction composed from `row` for a launch of `wgs` workgroups that each run `k` of the
/// problem's K (rounded up to whole K tiles), following the model's own grid arithmetic
/// (`gemm_emu::timing::grid`): the busiest CU (CU 0 of XCD 0) receives
/// `n = ceil(ceil(wgs / XCDs) / CUs_per_XCD)` workgroups, `occupancy` at a time.
///
/// * fewer workgroups than CUs: linear in the workgroups from `S` to `F` (or to `H`, up to its
///   `h_wgs` workgroups): the busy CUs share the chip's bandwidth;
/// * `n <= occupancy` (one round): the busiest CU's `n` at `F` or at `n` of `R1`'s workgroups,
///   weighed against the workgroups' bandwidth share (see the code);
/// * a decode kernel ([`compose_with_tail`]'s `decode`) below one block per CU and in its
///   first round: as a stream, at its blocks' share of the chip's bandwidth (see the code);
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
    compose_with_tail(row, arch, wgs, k, wg_k_seconds, None, false)
}

/// The workgroups of a launch that run a shorter K than the others: a split-K partial launch
/// whose K does not divide into its splits runs its last split's tiles (the linear workgroup
/// ids from `from`: the split is the grid's slowest dimension) over the remainder, `k`
/// (whole K tiles).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShortTail {
    pub from: u64,
    pub k: f64,
}

impl ShortTail {
    /// The last split's workgroups of `tiles` tiles in `splits` K ranges of `kchunk` over a K
    /// of `k` (in K tiles of `kt`), where it is shorter than `kchunk`; else `None`.
    pub fn of_split(tiles: u64, splits: u32, kchunk: u32, k: u32, kt: u32) -> Option<ShortTail> {
        let before = (splits.max(1) - 1) * kchunk;
        let last = k.saturating_sub(before).next_multiple_of(kt.max(1));
        (splits > 1 && last > 0 && last < kchunk)
            .then(|| ShortTail { from: tiles * u64::from(splits - 1), k: f64::from(last) })
    }
}

/// [`compose_bounded`] for a launch whose workgroups from `tail.from` on run `tail.k` of K
/// instead of `k`; `decode`: `row` is a decode kernel's, all of whose grids are one column of
/// blocks (its `H` a point of the same streaming arrangement as its `F`).
///
/// The timing model simulates the busiest CU's own workgroups (CU 0 of XCD 0: the ids
/// `j x CUs`, `gemm_emu::timing::grid::cu_workgroups`), refilling a slot as its workgroup ends,
/// so what the last split's shorter K costs is the busiest CU's: the launch's last workgroups
/// (the highest ids) are the ones a CU runs after its first round, and at small M, where the
/// busiest CU runs `occupancy + 1` of them, its last one is of the last split. Each of the
/// busiest CU's later rounds (and each workgroup, where the model simulates the whole stream)
/// is composed at the K of its own workgroups; its first round holds workgroup 0 (the first
/// split) and keeps `R1`. Composed at the whole chunk, the 7-way split of 32 x 6144 x 4096
/// bf16 on gfx942's 64x64 tile (672 workgroups of K 640, the last split 256) came out at 21.7
/// us where the model gives 16.7: its busiest CU's third workgroup (id 608, of the last split)
/// runs 5.4 us alone where a whole chunk's runs 10.2 (728 workgroups, the third of split 5).
pub fn compose_with_tail(
    row: &Row,
    arch: Arch,
    wgs: u64,
    k: f64,
    wg_k_seconds: f64,
    tail: Option<ShortTail>,
    decode: bool,
) -> f64 {
    let caps = arch.caps();
    let cus = u64::from(caps.compute_units);
    let xcds = u64::from(caps.xcds.max(1));
    let occ = u64::from(row.occupancy.max(1));
    let w = wg_k_seconds;
    let grids = |kk: f64| row.grids_at(kk, w);
    let (s, f, h, r1, r3) = grids(k);
    let h_wgs = u64::from(row.h_wgs);
    // `n` of `occupancy` workgroups on a CU: latency-bound, as one (`F`), or throughput-bound,
    // `n` of `R1`'s `occupancy` (a CU's first co-resident workgroups hide each other's latency:
    // on gfx950 a 64x64 tile, 5 per CU, runs 448 one-column workgroups in the model's 43.4 us
    // against `F`'s 44.3; linear from `F` to `R1` by `n` composed 58.1).
    let one_round_of = |n: u64, f: f64, r1: f64| {
        if occ <= 1 {
            f
        } else {
            f.max(r1 * n.clamp(1, occ) as f64 / occ as f64)
        }
    };
    let one_round = |n: u64| one_round_of(n, f, r1);
    // Workgroups the busiest CU runs (CU 0 of XCD 0): its MFMA work alone takes `n w k`, however
    // the rounds overlap.
    let n = wgs.div_ceil(xcds).div_ceil((cus / xcds).max(1));
    // Of them, the last `n_short` run `k_short` (their ids `j x CUs` from `tail.from` on).
    let (n_short, k_short) = match tail.filter(|t| t.k < k && t.from < wgs) {
        Some(t) => (n - n.min(t.from.div_ceil(cus)), t.k),
        None => (0, k),
    };
    // The K of the busiest CU's `j`-th workgroup.
    let k_of = |j: u64| if j + n_short >= n { k_short } else { k };
    let busiest = ((n - n_short) as f64 * k + n_short as f64 * k_short) * w;
    // Below one workgroup per CU, linear in the workgroups between `S` (one per XCD) and `F`
    // (one per CU): the timing model gives each busy CU its workgroups' share of the chip's
    // bandwidth, so a workgroup's time is its latency-bound part (`S`) plus its bytes at a share
    // that falls with the workgroups. Scaling `F` by the workgroups (the bandwidth-bound limit)
    // composed 224 one-column workgroups of a 128x128 bf16 tile on gfx942 at 105.4 us where the
    // model gives 131.3 (`S` 103.6, `F` 143.0 at K = 4096: the line gives 132.4).
    let between = |lo: f64, hi: f64, top: u64| lo + (hi - lo) * (wgs - xcds) as f64 / (top - xcds).max(1) as f64;
    // A decode kernel's grids are all one column of blocks, `H` included, so `H` and `F` are two
    // points of one streaming arrangement, where they are far enough apart to give a slope (an
    // XCD's CUs: gfx942's `H` is 256 blocks, gfx950's 255 of 256).
    let h_line = decode && h_wgs > xcds && h_wgs + cus / xcds <= cus;
    let composed = if wgs <= xcds {
        s
    } else if decode && wgs < cus {
        // Below one block per CU a streaming kernel's time is the larger of a lone block's (`S`)
        // and its blocks' share of the chip's bandwidth, not a line from `S`: latency overlaps
        // the stream. The share is the line through `H` and `F` (below `H` never above the
        // line from `S` to `H`: a block that rises early, then flattens), else `F`'s share. The
        // 128x16 eight-load decode-rows block on gfx942 at 8 x 28672 x 4096 bf16 (224 blocks:
        // `S` 34.5, `H` 55.3, `F` 65.8 us) runs 49.0 us in the model; linear from `S` to `H` it
        // composed at 53.1, the line gives 48.5. Against the model on every plain decode kernel
        // (`comp_probe dump`: gfx942 bf16 and fp8 at K = 4096 and 8192, gfx950 bf16 at 4096; 100
        // to 300 blocks, one and all activation columns): mean error 1.5% on gfx942 (379 runs)
        // and 2.7% on gfx950 (44), where the line from `S` was 6.5% and 5.1%.
        if h_line {
            let line = (h + (f - h) * (wgs as f64 - h_wgs as f64) / (cus - h_wgs) as f64).max(s);
            if wgs >= h_wgs {
                line
            } else {
                line.min(between(s, h, h_wgs))
            }
        } else {
            s.max(f * wgs as f64 / cus as f64)
        }
    } else if wgs <= h_wgs {
        // As below, to `H`: up to `h_wgs` workgroups the model sees the Infinity Cache shared
        // between XCDs, which it does not above (`F`).
        between(s, h, h_wgs)
    } else if wgs < cus {
        between(s, f, cus)
    } else if n <= occ {
        // One round, fewer workgroups than `R1`'s. Two limits: where the CU's own pipes bind (a
        // decode block streaming through the CU's load queue: `F` near `S`), the busiest CU's
        // workgroups set the time, as `R1` does for its `occupancy`; where the chip's bandwidth
        // binds (`F` well above `S`), the busy CUs' share is their workgroups' share, linear in
        // the workgroups from `F` to `R1`. Weighed by the share of the chip's contention
        // (`F - S`, eight busy CUs to all) in the whole excess over `S` (with the CU's second
        // workgroup, `R1 - F`). By the busiest CU alone, 448 one-column workgroups of a 64x64
        // bf16 tile on gfx942 (two on some CUs) composed at 135.4 us where the model gives
        // 118.4; by the workgroups alone, a decode split of 320 16x64 blocks (`S` 17.0, `F` 17.1
        // us) at 13.8 us where it gives 23.1. Weighed by `(F - S) / F` instead, a 16-way split
        // of 32 x 1280 x 8192 bf16 on gfx942's 64x64 tile (320 workgroups at K = 512: `S` 6.6,
        // `F` 9.9, `R1` 11.4 us) composed at 10.9 where the model gives 10.2 (now 10.4).
        let by_cu = one_round(n);
        let excess = (f - s).max(0.0) + (r1 - f).max(0.0);
        if occ <= 1 || f <= 0.0 || excess <= 0.0 {
            by_cu
        } else {
            let by_bw = f + (r1 - f) * ((wgs - cus) as f64 / ((occ - 1) * cus) as f64).min(1.0);
            if decode {
                // A decode block's `R1 - F` is mostly the chip's bandwidth shared by `occupancy`
                // times the blocks, not contention in the CU, so the busiest CU's share of `R1`
                // is only the most it takes; what it takes at the least is the bandwidth line or
                // its `n` blocks one after another at a lone block's time (a block that keeps its
                // CU's pipes busy). The 64x16 four-load decode-rows block on gfx942 at 16 x 28672
                // x 4096 bf16 (448 blocks, two on the busiest CU of the seven it holds: `S` 17.9,
                // `F` 35.1, `R1` 281 us) runs 53.0 us in the model; weighed by the excess below
                // it composed at 78.6, now 54.4. On the kernels above at 300 to 1200 blocks:
                // mean error 5.0% on gfx942 (624 runs; the worst, +42%, an fp8 block two K steps
                // deep at K = 4096, where its grids are extrapolated) and 3.8% on gfx950 (140),
                // where weighing by the excess was 24.0% and 10.8%.
                by_cu.min(by_bw.max(n as f64 * s))
            } else {
                by_cu + (by_bw - by_cu) * ((f - s).max(0.0) / excess)
            }
        }
    } else if decode {
        // Past one round a stream of decode blocks keeps the chip's bandwidth shared, round or
        // not: the time is the line through `R1` and `R3` (one and three rounds of `occupancy`
        // blocks per CU) at the blocks' K-weighted count, a split's short last blocks counting
        // by their K. Composed as rounds (the busiest CU's next blocks each a steady period,
        // its last alone at a lone block's time), and from grids extrapolated below K = 1280,
        // the 128x32 four-load decode-rows block on gfx950 at K = 896 came out at 560 blocks
        // 17.5% above the model (the line: gemm-lab's test
        // `decode_compositions_past_a_round_track_the_timing_model`); over every plain bf16
        // decode kernel past a round (`comp_probe dump`, K = 1024 and 2048 inside the row's K
        // points, 560 to 1800 blocks, one and all activation columns) the mean error was 5.7%
        // on gfx942 (296 runs) and 9.3% on gfx950 (372), the line's 1.8% and 4.7%.
        let slots = (occ * cus) as f64;
        let short = tail.filter(|t| t.k < k && t.from < wgs).map_or(0, |t| wgs - t.from);
        let blocks = (wgs - short) as f64 + short as f64 * k_short / k;
        let line = r1 + (r3 - r1) * (blocks - slots) / (2.0 * slots);
        if blocks >= slots {
            line
        } else {
            // A split's short blocks took the count back into the first round: the first-round
            // bandwidth line from `F` to `R1` (`F` with one slot per CU).
            f + (r1 - f) * ((blocks - cus as f64) / ((occ - 1) * cus).max(1) as f64).clamp(0.0, 1.0)
        }
    } else {
        // The grids at the busiest CU's short workgroups' K.
        let (s_t, f_t, _, r1_t, r3_t) = if n_short > 0 { grids(k_short) } else { (s, f, h, r1, r3) };
        // A steady round of `occ` workgroups computes `occ` tiles on the CU at the least.
        let period_at = |kk: f64| {
            let (r1, r3) = if kk < k { (r1_t, r3_t) } else { (r1, r3) };
            ((r3 - r1) / 2.0).max(occ as f64 * w * kk)
        };
        let full = n / occ;
        let rem = n % occ;
        // The busiest CU's rounds after the first (`1..full`), each at its workgroups' K (the
        // longest: its first one's).
        let rounds: f64 = (1..full).map(|r| period_at(k_of(r * occ))).sum();
        // Its last partial round, at its workgroups' K (`rem` > 0).
        let last_k = k_of(full * occ);
        let (s_l, f_l, r1_l) = if last_k < k { (s_t, f_t, r1_t) } else { (s, f, r1) };
        // The model gives the busiest CU `n / wgs` of the chip's bandwidth over the launch: a
        // last round that leaves CUs idle hands their share to the busy ones, as if `wgs / n`
        // CUs shared the chip. A workgroup alone on its CU then takes the larger of `S` (its
        // latency) and `F` at that share of the bandwidth: 297 one-column 256x256 fp8
        // workgroups on gfx950 (occupancy 1, two on the busiest CU, 148.5 CUs' worth busy) run
        // 183.6 us in the model, twice `S` (91.5); as two steady periods, 233.1. A round of
        // `occupancy` co-resident workgroups hides their latency behind each other and keeps
        // its measured time; the last workgroup alone takes the lone time: 700 one-column 64x64
        // bf16 workgroups on gfx942 (three on the busiest CU at occupancy 2, 233 CUs busy) run
        // 109.1 us, `W1` 63.1 and a lone 47.4, where a fractional round composed 94.8.
        let busy = (wgs as f64 / n as f64).clamp(xcds as f64, cus as f64);
        let lone_of = |s: f64, f: f64| (f * busy / cus as f64).clamp(s.min(f), f);
        if busy < cus as f64 && f > 0.0 {
            if occ <= 1 {
                (0..n).map(|j| if k_of(j) < k { lone_of(s_t, f_t) } else { lone_of(s, f) }).sum()
            } else {
                r1 + rounds
                    + match rem {
                        0 => 0.0,
                        1 => lone_of(s_l, f_l),
                        _ => one_round_of(rem, f_l, r1_l),
                    }
            }
        } else if n <= 4 * occ {
            // Fractional rounds: each workgroup after the first round adds its share of a
            // period at its own K.
            r1 + (occ..n).map(|j| period_at(k_of(j))).sum::<f64>() / occ as f64
        } else {
            r1 + rounds + if rem > 0 { one_round_of(rem, f_l, r1_l) } else { 0.0 }
        }
    };
    composed.max(busiest)
}

/// How a characterisation grid arranges its tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrangement {
    /// As square as the workgroup count allows: every A and B panel is shared by several
    /// workgroups of an XCD.
    Square,
    /// One column of tiles (the kernel's M long): each workgroup its own A panel, one B panel
    /// for all (a row-major Linear layer's weights against few activation rows).
    Column,
    /// One row of tiles (the kernel's N long): one A panel for all, each workgroup its own B
    /// panel (a tall row-major problem against a narrow weight matrix). Not characterised (the
    /// device time it takes): a launch that streams B is composed from the other two.
    Row,
}

/// The workgroup counts of the grids `S`, `F`, `R1` and `R3` on `arch` for a kernel that keeps
/// `occupancy` workgroups resident per CU (the streaming grids take `F`'s and `R1`'s; `H` is the
/// row's own `h_wgs`).
pub fn grid_workgroups(arch: Arch, occupancy: u32) -> [u64; 4] {
    let caps = arch.caps();
    let cus = u64::from(caps.compute_units);
    let occ = u64::from(occupancy.max(1));
    [u64::from(caps.xcds), cus, cus * occ, 3 * cus * occ]
}

/// `m x n` (column-major, the kernel's terms) of whole tiles making about `wgs` workgroups of
/// `e` in `arrangement`. A decode kernel's grids are always one column of blocks (its problems
/// are: a decode kernel takes at most its block's activation columns).
pub fn grid_shape(e: &KernelEntry, wgs: u64, arrangement: Arrangement) -> (usize, usize) {
    let z = u64::from(e.launch(e.tile.0, e.tile.1).0[2].max(1));
    let t = wgs.div_ceil(z).max(1);
    let (tm, tn) = (e.tile.0 as usize, e.tile.1 as usize);
    match arrangement {
        _ if e.is_decode() => (t as usize * tm, tn),
        Arrangement::Column => (t as usize * tm, tn),
        Arrangement::Row => (tm, t as usize * tn),
        Arrangement::Square => {
            let mut gx = (t as f64).sqrt() as u64;
            while gx > 1 && !t.is_multiple_of(gx) {
                gx -= 1;
            }
            let gx = gx.max(1);
            (gx as usize * tm, (t / gx) as usize * tn)
        }
    }
}

/// The tile `(row, column)` that dispatch id `pid` (x fastest) computes under the kernel's grid
/// order `(chunk, wgm)`: the chiplet transform over `xcds` XCDs, then the grouped raster. This is
/// gemm-compiler's `grid::tile_of`, repeated because the runtime does not link the compiler; the
/// lab's tests hold the two equal.
pub fn tile_of(order: (u32, u32), xcds: u32, tiles_m: u32, tiles_n: u32, pid: u32) -> (u32, u32) {
    let (chunk, wgm) = order;
    let total = tiles_m * tiles_n;
    let mut id = pid;
    if chunk > 0 {
        let round = xcds * chunk;
        if pid < total / round * round {
            let (xcd, local) = (pid % xcds, pid / xcds);
            id = (local / chunk) * round + xcd * chunk + local % chunk;
        }
    }
    if wgm == 0 {
        return (id % tiles_m, id / tiles_m);
    }
    let band = wgm * tiles_n;
    let g = id / band;
    let h = wgm.min(tiles_m - g * wgm);
    let r = id % band;
    (g * wgm + r % h, r / h)
}

/// The share of the A and of the B panel bytes that the workgroups of the first XCD, among the
/// first `resident` workgroups of a launch of `e` over a column-major `m x n` problem in `splits`
/// K ranges, ask for after another workgroup of the XCD did (rows and columns past the problem's
/// edge are not read): `(A, B)`. What the timing model's L2 hit fraction follows: it measures it
/// on that XCD's share of the first round (`gemm_emu::timing::grid::footprint`), a line hitting
/// where another workgroup of the XCD asked for it first.
pub fn xcd_sharing(e: &KernelEntry, m: u32, n: u32, splits: u32, resident: u64) -> (f64, f64) {
    let (tm, tn) = (e.tile.0.max(1), e.tile.1.max(1));
    let (tiles_m, tiles_n) = (m.div_ceil(tm).max(1), n.div_ceil(tn).max(1));
    let tiles = u64::from(tiles_m) * u64::from(tiles_n);
    let splits = splits.max(1);
    let r = resident.min(tiles * u64::from(splits)).max(1);
    let xcds = e.arch.caps().xcds.max(1);
    let mut rows = vec![false; tiles_m as usize * splits as usize];
    let mut cols = vec![false; tiles_n as usize * splits as usize];
    // (distinct, requested) bytes of A and of B.
    let (mut a, mut b) = ((0.0, 0.0), (0.0, 0.0));
    for pid in (0..r).step_by(xcds as usize) {
        let (z, t) = ((pid / tiles) as usize, (pid % tiles) as u32);
        let (x, y) = tile_of(e.grid_order, xcds, tiles_m, tiles_n, t);
        let (ri, ci) = (z * tiles_m as usize + x as usize, z * tiles_n as usize + y as usize);
        let (ab, bb) = (f64::from(tm.min(m - x * tm)), f64::from(tn.min(n - y * tn)));
        a.1 += ab;
        b.1 += bb;
        if !std::mem::replace(&mut rows[ri], true) {
            a.0 += ab;
        }
        if !std::mem::replace(&mut cols[ci], true) {
            b.0 += bb;
        }
    }
    let shared = |(d, q): (f64, f64)| if q > 0.0 { 1.0 - d / q } else { 0.0 };
    (shared(a), shared(b))
}

/// The L2 hit fraction the timing model would measure for a launch of `e` over a column-major
/// `m x n` problem in `splits` K ranges with `resident` workgroups in its first round, as it
/// forms it: `a_share` of the sampled lines are A's ([`Row::a_share`]), shared as
/// [`xcd_sharing`] says, the rest B's.
pub fn l2_estimate(e: &KernelEntry, a_share: f64, m: u32, n: u32, splits: u32, resident: u64) -> f64 {
    let (a, b) = xcd_sharing(e, m, n, splits, resident);
    a_share * a + (1.0 - a_share) * b
}

/// One workgroup's least main-loop time per unit of K: its tile's `2 TM TN` flops at one CU's
/// share of the MFMA ceiling at the loaded clock.
pub fn wg_k_seconds(e: &KernelEntry) -> f64 {
    let per_cu = e.arch.mfma_ceiling_tflops(e.a_type, e.xf32()) * 1e12 / f64::from(e.arch.caps().compute_units);
    2.0 * f64::from(e.tile.0) * f64::from(e.tile.1) / per_cu
}

/// The composed prediction for a launch of `e` (whose row is `row`) over the column-major
/// `m x n` problem in `splits` K ranges of `k` each (whole K tiles): each measured arrangement's
/// composition ([`compose_bounded`] of the square row and of [`Row::column`]) placed
/// at the L2 hit fraction the model would measure for its grid ([`l2_estimate`], the grids of the
/// launch's regime: `F`'s workgroups below one per CU, else `R1`'s), and the launch's time
/// interpolated between them at its own estimate (linear, clamped to the measured range;
/// arrangements within 0.02 of each other averaged). A decode kernel's arrangements are all one
/// column of blocks. A problem of one column of tiles (or blocks) that fills fewer than `TN` of
/// its columns is interpolated by the columns it fills between that composition and the one at
/// one activation column ([`Row::one_activation_column`]).
pub fn compose_problem(row: &Row, e: &KernelEntry, m: u32, n: u32, splits: u32, k: f64) -> f64 {
    compose_split(row, e, m, n, splits, k, None)
}

/// [`compose_problem`] of a split-K partial launch whose last split's workgroups run a shorter
/// K (`tail`, [`ShortTail::of_split`]; [`compose_with_tail`]).
pub fn compose_split(row: &Row, e: &KernelEntry, m: u32, n: u32, splits: u32, k: f64, tail: Option<ShortTail>) -> f64 {
    let full = compose_full_columns(row, e, m, n, splits, k, tail);
    // Measured at the tile's `TN` activation columns and at one; between, linear in the columns
    // the problem fills (each column adds its activation loads and its share of the reduction
    // and the epilogue; the weight stream is the same). Scaling by bytes moved instead picked
    // 64-column decode blocks for 16 columns (session 24).
    let tn = e.tile.1.max(1);
    if tn == 1 || n >= tn {
        return full;
    }
    let cols = n.max(1);
    let tiles = u64::from(m.div_ceil(e.tile.0.max(1)));
    let wgs = tiles * u64::from(splits.max(1));
    let at = |r: &Row| compose_with_tail(r, e.arch, wgs, k, wg_k_seconds(e), tail, e.is_decode());
    let one = at(&row.one_activation_column(e.is_decode()));
    // A decode row measured at half its columns too: piecewise linear through that point. A
    // decode block's time is flat while its activations ride in the weights' shadow and rises
    // once they bind, which a line from one column to all of them puts too high in between:
    // gfx942's 16x16 8-wave block at 448 blocks, K = 8192, runs 24.8 / 24.6 / 33.5 us in the
    // model at 1 / 4 / 16 columns, and the line composed 27.2 at 4 (+10%). Over every plain
    // decode kernel of 4 or more columns (`comp_probe cols`, K = 4096, 100 to 900 blocks, the
    // model's own points) the line is 1.8% off on gfx942 bf16 and the two pieces 1.3%; the
    // 16x16 8-wave blocks' worst +9.4% becomes +6.1%. The knee of that block lies between 4
    // and 8 columns, so at 4 the pieces still compose 26.9 (+9%): the 32x16 block keeps
    // Llama-70B/8's gate_up at M = 4 and 8 (27.5 us) where the 16x16 one predicts 24.7.
    let half_n = tn / 2;
    if let Some(half) = row.half_activation_columns().filter(|_| e.is_decode() && half_n >= 2) {
        let mid = at(&half);
        return if cols <= half_n {
            one + (mid - one) * f64::from(cols - 1) / f64::from(half_n - 1)
        } else {
            mid + (full - mid) * f64::from(cols - half_n) / f64::from(tn - half_n)
        };
    }
    one + (full - one) * f64::from(cols - 1) / f64::from(tn - 1)
}

/// What edge tiles add to a launch of `e` over the column-major `m x n` problem in `splits` K
/// ranges: the busiest CU's (CU 0 of XCD 0, as the model places them) workgroups whose tile
/// rows cross `m` (all of them where `every_tile`: a 16-bit C whose leading dimension is odd
/// stores element by element everywhere), each `s_edge - s_min` ([`Row::s_edge`]), one after
/// another: the element stores go through the CU's one vector-memory pipe. The characterisation
/// grids are all whole tiles. Without it, 255 x 257 x 128 bf16 (odd `ldc`) composed at 4.6 us
/// where the model gives 5.9, and 2047 x 2049 x 128 at 13.5 where it gives 19.6 (four edge
/// tiles on the busiest CU).
pub fn edge_seconds(row: &Row, e: &KernelEntry, m: u32, n: u32, splits: u32, every_tile: bool) -> f64 {
    let each = row.s_edge - row.s_min;
    if row.s_edge <= 0.0 || row.s_min <= 0.0 || each <= 0.0 {
        return 0.0;
    }
    let tm = e.tile.0.max(1);
    if !every_tile && m.is_multiple_of(tm) {
        return 0.0;
    }
    let caps = e.arch.caps();
    let (xcds, per_xcd) = (caps.xcds.max(1), (caps.compute_units / caps.xcds.max(1)).max(1));
    let (tiles_m, tiles_n) = (m.div_ceil(tm).max(1), n.div_ceil(e.tile.1.max(1)).max(1));
    let tiles = u64::from(tiles_m) * u64::from(tiles_n);
    let total = tiles * u64::from(splits.max(1));
    let step = u64::from(xcds) * u64::from(per_xcd);
    let edges = (0..total)
        .step_by(step as usize)
        .filter(|&g| every_tile || tile_of(e.grid_order, xcds, tiles_m, tiles_n, (g % tiles) as u32).0 == tiles_m - 1)
        .count();
    each * edges as f64
}

/// [`compose_problem`] as if every tile's `TN` columns were inside the problem.
fn compose_full_columns(
    row: &Row,
    e: &KernelEntry,
    m: u32,
    n: u32,
    splits: u32,
    k: f64,
    tail: Option<ShortTail>,
) -> f64 {
    let tiles = u64::from(m.div_ceil(e.tile.0.max(1))) * u64::from(n.div_ceil(e.tile.1.max(1)));
    let wgs = tiles * u64::from(splits.max(1));
    let w = wg_k_seconds(e);
    let square = compose_with_tail(row, e.arch, wgs, k, w, tail, e.is_decode());
    if e.is_decode() {
        return square;
    }
    let g = grid_workgroups(e.arch, row.occupancy);
    let measured = if wgs < g[1] { g[1] } else { g[2] };
    let at = |a: Arrangement| {
        let (gm, gn) = grid_shape(e, measured, a);
        l2_estimate(e, row.a_share, gm as u32, gn as u32, 1, measured)
    };
    let mut points = vec![
        (at(Arrangement::Square), square),
        (at(Arrangement::Column), compose_with_tail(&row.column(), e.arch, wgs, k, w, tail, false)),
    ];
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, f64, f64)> = Vec::new(); // (hit fraction, summed time, count)
    for (x, t) in points {
        match merged.last_mut() {
            Some(last) if x - last.0 / last.2 <= 0.02 => *last = (last.0 + x, last.1 + t, last.2 + 1.0),
            _ => merged.push((x, t, 1.0)),
        }
    }
    let pts: Vec<(f64, f64)> = merged.iter().map(|&(x, t, c)| (x / c, t / c)).collect();
    let ours = l2_estimate(e, row.a_share, m, n, splits, wgs.min(g[2]));
    if ours <= pts[0].0 {
        // Fewer hits than any measured grid (split-K partials each read their own K range;
        // nothing is shared): along the measured line, as the model's load latency and HBM
        // traffic are linear in the hit fraction; never faster than the least-hit grid.
        if let [(x0, t0), (x1, t1), ..] = pts[..] {
            if t1 < t0 && x1 > x0 {
                return t0 + (t0 - t1) * (x0 - ours) / (x1 - x0);
            }
        }
        return pts[0].1;
    }
    for pair in pts.windows(2) {
        let ((x0, t0), (x1, t1)) = (pair[0], pair[1]);
        if ours <= x1 {
            return t0 + (t1 - t0) * (ours - x0) / (x1 - x0);
        }
    }
    // More hits than any measured grid in one round (a wide panel shared by a whole XCD's
    // workgroups: 256 activation rows against 8192 weight rows on 64x64 tiles, 0.84 of the
    // lines hit where the square grid has 0.66): the part of the most-hit grid's time above
    // `S` (a lone workgroup per XCD, the chip idle: what the round costs once the bandwidth no
    // longer binds) is the HBM traffic's, and scales with the miss fraction. Clamped to the
    // most-hit grid, gfx942 bf16 256 x 8192 x 4096 composed at 51.8 us where the model gives
    // 41.4 (scaled: 43.7). Not over several rounds: there a CU's co-resident workgroups share
    // its pipes as well as the bandwidth, which `S` does not see, and no grid measures the
    // rounds at more hits (scaled from the busiest CU's rounds at `S`, 8192^3 fp8 on gfx942's
    // 128x128 tile came out at 670 us where the model gives 916 and the square grid 906).
    if let Some(&(x1, t1)) = pts.last() {
        let caps = e.arch.caps();
        let (xcds, cus) = (u64::from(caps.xcds.max(1)), u64::from(caps.compute_units));
        let n = wgs.div_ceil(xcds).div_ceil((cus / xcds).max(1));
        let short =
            (row.k_min > 0 && row.s_min > 0.0 && row.s[0] > 0.0).then(|| (f64::from(row.k_min), row.s_min / row.s[0]));
        let w = wg_k_seconds(e);
        let lone = at_k(row.s, row.k, k, w, short);
        // A CU whose second co-resident workgroup costs it more than the whole chip's bandwidth
        // contention costs one (`R1 - F` against `F - S`) is bound by its own pipes, and more
        // hits do not speed it: gfx942 bf16 256 x 8192 x 12288 `A B` on the 64x64 tile (its
        // weights M-contiguous, transposed through LDS; `R1 - F` 30.3 us against `F - S` 15.2
        // at K = 4096) scaled to 246 us where the model gives 344 (the square grid 315).
        let occ = f64::from(row.occupancy.max(1));
        let (f, r1) = (at_k(row.f, row.k, k, w, short), at_k(row.r1, row.k, k, occ * w, short));
        let bandwidth_bound = row.occupancy <= 1 || r1 - f <= f - lone;
        if n <= u64::from(row.occupancy.max(1)) && bandwidth_bound && t1 > lone && x1 < 1.0 {
            return lone + (t1 - lone) * (1.0 - ours.min(1.0)) / (1.0 - x1);
        }
    }
    pts[pts.len() - 1].1
}

/// The timing model through the characterisation table: what the dispatcher ranks by.
#[derive(Clone, Copy, Debug, Default)]
pub struct TableModel;

impl TableModel {
    /// The composed prediction for `plan`, or why the table has none (stale or missing row).
    pub fn composed(plan: &KernelPlan, p: &GemmProblem) -> Result<f64, String> {
        let row = table().row(plan.entry)?;
        let e = plan.entry;
        let kt = f64::from(e.tile.2.max(1));
        let k = (p.k.max(1) as f64 / kt).ceil() * kt;
        let splits = plan.grid[2].max(1);
        // A problem shorter than one K tile reads nothing past K ([`at_k`] below `k_min`).
        let k = if p.k > 0 && (p.k as f64) < kt { p.k as f64 } else { k };
        let (m, n) = (plan.problem.m, plan.problem.n);
        // A 16-bit C with an odd leading dimension has no aligned vector stores (`lower.rs`
        // epilogue: every tile stores element by element).
        let odd_c = e.c_type.size_bytes() == 2 && plan.problem.ldc % 2 == 1;
        let t = compose_problem(row, e, m, n, splits, k) + edge_seconds(row, e, m, n, splits, odd_c);
        // Physics: no launch beats its compulsory bytes at the peak HBM bandwidth
        // ([`crate::plan::bounds`]).
        let memory = crate::plan::bounds::floor(e.arch, p, e.xf32()).memory_seconds;
        Ok(t.max(memory))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kernel: &str, arch: Arch, hash: u64) -> Row {
        Row {
            kernel: kernel.into(),
            arch,
            hash,
            occupancy: 2,
            h_wgs: 256,
            k: [100, 300, 1300],
            s: [1.0, 3.0, 13.0],
            h: [1.5, 3.5, 13.5],
            f: [2.0, 4.0, 14.0],
            r1: [3.0, 7.0, 27.0],
            r3: [7.0, 19.0, 79.0],
            wf: [2.5, 6.0, 30.0],
            w1: [4.0, 11.0, 61.0],
            w3: [9.0, 29.0, 149.0],
            os: [0.5, 1.5, 6.5],
            oh: [0.75, 1.75, 6.75],
            of: [1.25, 2.5, 11.0],
            o1: [2.0, 5.0, 21.0],
            o3: [5.0, 14.0, 60.0],
            ms: [0.0; 3],
            mh: [0.0; 3],
            mf: [0.0; 3],
            m1: [0.0; 3],
            m3: [0.0; 3],
            k_min: 25,
            s_min: 0.8,
            s_edge: 1.1,
            a_share: 0.25,
        }
    }

    #[test]
    fn a_decode_row_composes_by_the_problems_activation_columns() {
        let e = gemm_kernels::catalogue().iter().find(|e| characterised(e) && e.is_decode() && e.tile.1 == 16).unwrap();
        let r = row(e.name, e.arch, code_hash(e));
        let (m, k, w) = (e.tile.0 * 64, 1300.0, wg_k_seconds(e));
        let full = compose_with_tail(&r, e.arch, 64, k, w, None, true);
        let one = compose_with_tail(&r.one_activation_column(true), e.arch, 64, k, w, None, true);
        assert_ne!(one, full);
        assert_eq!(compose_problem(&r, e, m, 16, 1, k), full);
        assert_eq!(compose_problem(&r, e, m, 1, 1, k), one);
        let six = compose_problem(&r, e, m, 6, 1, k);
        assert!((six - (one + (full - one) * 5.0 / 15.0)).abs() <= 1e-12 * full, "{six} {one} {full}");
        // With its grids at 8 columns: piecewise linear through them, 1 -> 8 -> 16.
        let up = |x: [f64; 3]| x.map(|t| t * 1.2);
        let r = Row { ms: up(r.os), mh: up(r.oh), mf: up(r.of), m1: up(r.o1), m3: up(r.o3), ..r };
        let mid = compose_with_tail(&r.half_activation_columns().unwrap(), e.arch, 64, k, w, None, true);
        assert!(mid != one && mid != full);
        assert_eq!(compose_problem(&r, e, m, 8, 1, k), mid);
        let six = compose_problem(&r, e, m, 6, 1, k);
        assert!((six - (one + (mid - one) * 5.0 / 7.0)).abs() <= 1e-12 * full, "{six} {one} {mid}");
        let twelve = compose_problem(&r, e, m, 12, 1, k);
        assert!((twelve - (mid + (full - mid) * 4.0 / 8.0)).abs() <= 1e-12 * full, "{twelve} {mid} {full}");
        // A tiled row ignores them (it has none).
        assert!(Row { mf: [0.0; 3], ..r }.half_activation_columns().is_none());
    }

    /// A tiled kernel's problem of one column of tiles that fills part of it composes between
    /// the full column and the one-activation-column grids by the columns it fills; a problem of
    /// two columns of tiles or more composes as before.
    #[test]
    fn a_partly_filled_column_of_tiles_composes_by_its_columns() {
        let e = gemm_kernels::catalogue()
            .iter()
            .find(|e| characterised(e) && !e.is_decode() && e.tile == (64, 64, 64))
            .expect("a 64x64x64 kernel");
        let r = row(e.name, e.arch, code_hash(e));
        let (m, k) = (e.tile.0 * 20, 1300.0);
        let full = compose_problem(&r, e, m, 64, 16, k);
        let one = compose_bounded(&r.one_activation_column(false), e.arch, 20 * 16, k, wg_k_seconds(e));
        assert_ne!(one, full);
        assert_eq!(compose_problem(&r, e, m, 1, 16, k), one);
        let seventeen = compose_problem(&r, e, m, 17, 16, k);
        assert!((seventeen - (one + (full - one) * 16.0 / 63.0)).abs() <= 1e-12 * full, "{seventeen} {one} {full}");
        // The one-column arrangement at one column: its own S, no H.
        let o = r.one_activation_column(false);
        assert_eq!((o.s, o.f, o.r1, o.r3, o.h_wgs), (r.os, r.of, r.o1, r.o3, 0));
        assert_eq!(compose_problem(&r, e, m, 65, 16, k), compose_full_columns(&r, e, m, 65, 16, k, None));
    }

    #[test]
    fn the_table_text_round_trips() {
        let e = gemm_kernels::catalogue().iter().find(|e| characterised(e)).unwrap();
        let mut r = row(e.name, e.arch, code_hash(e));
        r.s[0] = 1.25e-6;
        r.f[1] = 4.000000000000001e-6;
        let mut t = Table::default();
        t.rows.insert(r.kernel.clone(), r.clone());
        t.fingerprints.insert(e.arch, 0x0123_4567_89ab_cdef);
        let red = Reduction { kernel: "reduce_x".into(), arch: e.arch, hash: 0xfeed, seconds: 9.125e-7 };
        t.reductions.insert(red.kernel.clone(), red.clone());
        let back = Table::parse(&t.to_text()).unwrap();
        assert_eq!(back.rows[e.name], r);
        assert_eq!(back.reductions["reduce_x"], red);
        assert_eq!(back.fingerprints[&e.arch], 0x0123_4567_89ab_cdef);
        assert!(back.row(e).is_ok());
        // Another kernel's code under this name is stale.
        let mut stale = r.clone();
        stale.hash ^= 1;
        t.rows.insert(stale.kernel.clone(), stale);
        assert!(t.row(e).unwrap_err().contains("changed"));
        assert!(Table::parse("a\tb\n").is_err());
        // K values that do not increase are refused.
        let mut bad = Table::default();
        let mut legacy = r.clone();
        r.k = [100, 300, 200];
        bad.rows.insert(r.kernel.clone(), r);
        assert!(Table::parse(&bad.to_text()).unwrap_err().contains("increase"));
        // A legacy row (no deep point) is written in its own 14 fields and read back.
        legacy.k[2] = legacy.k[1];
        let mut old = Table::default();
        old.rows.insert(legacy.kernel.clone(), legacy);
        let text = old.to_text();
        assert!(text.lines().last().is_some_and(|l| l.split('\t').count() == LEGACY_FIELDS), "{text}");
        assert!(Table::parse(&text).unwrap().rows[e.name].is_legacy());
    }

    #[test]
    fn composition_follows_the_grid_arithmetic() {
        let row = row("x", Arch::Gfx942, 0);
        let a = Arch::Gfx942; // 8 XCDs x 38 CUs
        assert_eq!(compose(&row, a, 1, 100.0), 1.0);
        assert_eq!(compose(&row, a, 8, 200.0), 2.0);
        // Up to `h_wgs` workgroups from H, beyond from F (both at least S).
        assert_eq!(compose(&row, a, 256, 100.0), 1.5);
        assert_eq!(compose(&row, a, 128, 300.0), 3.0 + 0.5 * 120.0 / 248.0);
        assert_eq!(compose(&row, a, 280, 300.0), 3.0 + 272.0 / 296.0);
        assert_eq!(compose(&row, a, 304, 100.0), 2.0);
        assert_eq!(compose(&row, a, 608, 100.0), 3.0);
        // Below k_lo, S's short-K shape: s_min / s_lo = 0.8 at k_min = 25, linear up to k_lo.
        assert!((compose(&row, a, 1, 25.0) - 0.8).abs() < 1e-12);
        assert!((compose(&row, a, 1, 62.5) - 0.9).abs() < 1e-12);
        assert!((compose(&row, a, 304, 25.0) - 1.6).abs() < 1e-12);
        // Three rounds: R1 and two steady periods is R3 itself.
        assert_eq!(compose(&row, a, 3 * 608, 300.0), 19.0);
        // Ten rounds: R1 + 9 periods of (19 - 7) / 2 at k_hi.
        assert_eq!(compose(&row, a, 10 * 608, 300.0), 7.0 + 9.0 * 6.0);
        // Piecewise linear in K: between k_hi and k_deep on the second piece, beyond k_deep
        // extrapolated along it.
        assert_eq!(compose(&row, a, 608, 800.0), 17.0);
        assert_eq!(compose(&row, a, 608, 2300.0), 47.0);
        assert!(compose(&row, a, 10 * 608 + 8, 300.0) > compose(&row, a, 10 * 608, 300.0));
        // The one-column arrangement: its own F, R1 and R3; S and H the square grids'.
        let c = row.column();
        assert_eq!((c.f, c.r1, c.r3, c.s, c.h), (row.wf, row.w1, row.w3, row.s, row.h));
        assert_eq!(compose(&c, a, 3 * 608, 300.0), 29.0);
        // Below k_min (a problem shorter than one K tile) along the same short-K line, never below
        // a tenth of S at k_lo.
        assert!((compose(&row, a, 1, 12.5) - 23.0 / 30.0).abs() < 1e-12);
        assert!((compose(&row, a, 1, 0.001) - 11.0 / 15.0).abs() < 1e-5);
        // A last round that leaves CUs idle: 616 workgroups, three on the busiest CU (two rounds
        // at occupancy 2), 205.3 CUs' worth busy: R1, then the third workgroup alone at the
        // larger of S and F at that share of the bandwidth (4 x 205.3 / 304 = 2.7 < S = 3).
        assert_eq!(compose(&row, a, 616, 300.0), 7.0 + 3.0);
        // At occupancy 1 every round is a lone workgroup: three at F x 205.3 / 304, at least S.
        let one = Row { occupancy: 1, ..row.clone() };
        let busy: f64 = 616.0 / 3.0;
        let expected = 3.0 * (14.0 * busy / 304.0_f64).clamp(13.0, 14.0);
        assert!((compose(&one, a, 616, 1300.0) - expected).abs() < 1e-12, "{}", compose(&one, a, 616, 1300.0));
        // Whole rounds keep every CU busy: unscaled.
        assert_eq!(compose(&row, a, 2 * 608, 300.0), 7.0 + 6.0);
    }

    /// A decode kernel's row composes as a stream: below one block per CU at the larger of `S`
    /// and the bandwidth line through its `H` and `F` (`F`'s share where `H` is too close to
    /// `F` to give a slope); in its first round at the bandwidth line from `F` to `R1` or its
    /// busiest CU's blocks one after another at `S`, whichever is longer, at most its share of
    /// `R1`. A tiled row composes as before.
    #[test]
    fn a_decode_row_composes_as_a_stream() {
        let a = Arch::Gfx942; // 8 XCDs x 38 CUs
        let h = 2.0 * 256.0 / 304.0;
        let streaming = Row {
            occupancy: 4,
            s: [1.0, 3.0, 13.0],
            h: [h, 3.0 * h, 13.0 * h],
            f: [2.0, 6.0, 26.0],
            r1: [8.0, 24.0, 104.0],
            ..row("x", a, 0)
        };
        let decode = |r: &Row, wgs: u64| compose_with_tail(r, a, wgs, 100.0, 0.0, None, true);
        let tiled = |r: &Row, wgs: u64| compose_with_tail(r, a, wgs, 100.0, 0.0, None, false);
        let close = |x: f64, y: f64| (x - y).abs() < 1e-12;
        // 200 blocks: F x 200 / 304, above S; linear from S to H it is 1 + (H - 1) x 192 / 248.
        assert!(close(decode(&streaming, 200), 2.0 * 200.0 / 304.0), "{}", decode(&streaming, 200));
        assert!(close(tiled(&streaming, 200), 1.0 + (h - 1.0) * 192.0 / 248.0));
        // 100 blocks: their bandwidth share (0.66) is under a lone block's S.
        assert_eq!(decode(&streaming, 100), 1.0);
        // H too close to F for a slope (gfx950's 255 of 256): F's share.
        let close_h = Row { h_wgs: 300, h: [1.9, 5.9, 25.9], ..streaming.clone() };
        assert!(close(decode(&close_h, 200), 2.0 * 200.0 / 304.0), "{}", decode(&close_h, 200));
        // 456 blocks, two on the busiest CU of four: the bandwidth line, F x 456 / 304; the
        // busiest CU's half of R1 is 4, the excess-weighted blend 4 - 1 / 7.
        assert!(close(decode(&streaming, 456), 3.0), "{}", decode(&streaming, 456));
        assert!(close(tiled(&streaming, 456), 4.0 - 1.0 / 7.0), "{}", tiled(&streaming, 456));
        // A block as slow alone as on a busy chip keeps its CU busy: two of them one after
        // another (3.8), above the bandwidth line, under the CU's half of R1.
        let pipes = Row { s: [1.9, 5.9, 25.9], ..streaming.clone() };
        assert!(close(decode(&pipes, 456), 3.8), "{}", decode(&pipes, 456));
        let cu_bound = Row { s: [2.0, 6.0, 26.0], r1: [3.0, 9.0, 39.0], ..streaming.clone() };
        assert!(close(decode(&cu_bound, 456), 2.0_f64.max(3.0 * 2.0 / 4.0)), "{}", decode(&cu_bound, 456));
        // Whole rounds are the measured grids either way.
        assert_eq!(decode(&streaming, 304), 2.0);
        assert_eq!(decode(&streaming, 1216), 8.0);
        // Past a round (R3 24 at 3648 blocks): on the line through R1 and R3, 1824 blocks at
        // 12, 1300 at 8 + 16 x 84 / 2432; as rounds a tiled row adds to R1 the busiest CU's
        // fifth block alone at F's time at the busy CUs' share (260 of 304 CUs).
        let deep = Row { r3: [24.0, 72.0, 312.0], ..streaming.clone() };
        assert!(close(decode(&deep, 1824), 12.0), "{}", decode(&deep, 1824));
        assert!(close(decode(&deep, 3648), 24.0), "{}", decode(&deep, 3648));
        assert!(close(decode(&deep, 1300), 8.0 + 16.0 * 84.0 / 2432.0), "{}", decode(&deep, 1300));
        assert!(close(tiled(&deep, 1300), 8.0 + 2.0 * 260.0 / 304.0), "{}", tiled(&deep, 1300));
        // A split's last blocks at a quarter of the K count a quarter each: the last 608 of
        // 1824 make 1368 blocks' worth (9 on the line), the last 304 1596 (10.5); the last 1216
        // 912, back in the first round, on the line from F (2 at 304) to R1 (8 at 1216): 6.
        let with_tail =
            |from: u64| compose_with_tail(&deep, a, 1824, 100.0, 0.0, Some(ShortTail { from, k: 25.0 }), true);
        assert!(close(with_tail(1216), 9.0), "{}", with_tail(1216));
        assert!(close(with_tail(1520), 10.5), "{}", with_tail(1520));
        assert!(close(with_tail(608), 6.0), "{}", with_tail(608));
    }

    /// A split's last K range shorter than the others: the busiest CU's workgroups of the last
    /// split (ids `j x 304` from `from` on) compose at their own K, round by round.
    #[test]
    fn a_short_last_split_composes_at_its_own_k() {
        // 7 splits of 640 over K = 4096: the last runs 256; 8 of 512 divide it evenly.
        assert_eq!(ShortTail::of_split(96, 7, 640, 4096, 64), Some(ShortTail { from: 576, k: 256.0 }));
        assert_eq!(ShortTail::of_split(96, 8, 512, 4096, 64), None);
        assert_eq!(ShortTail::of_split(96, 1, 4096, 4096, 64), None);
        // A remainder of part of a K tile runs the whole tile.
        assert_eq!(ShortTail::of_split(10, 3, 192, 400, 64), Some(ShortTail { from: 20, k: 64.0 }));
        let row = row("x", Arch::Gfx942, 0);
        let a = Arch::Gfx942;
        let tail = |from: u64, k: f64| Some(ShortTail { from, k });
        let with = |wgs: u64, k: f64, t| compose_with_tail(&row, a, wgs, k, 0.0, t, false);
        // No short workgroup on the busiest CU (its ids 0, 304, 608): as compose.
        assert_eq!(with(616, 300.0, tail(612, 100.0)), compose(&row, a, 616, 300.0));
        assert_eq!(with(616, 300.0, tail(600, 300.0)), compose(&row, a, 616, 300.0));
        assert_eq!(with(616, 300.0, None), compose(&row, a, 616, 300.0));
        // R1 + lone: the third workgroup (608) is of the last split: alone at K = 100, F x 205.3
        // / 304 (S = 1, F = 2 there) after R1 at K = 300.
        let lone = 2.0 * (616.0 / 3.0) / 304.0;
        assert!((with(616, 300.0, tail(600, 100.0)) - (7.0 + lone)).abs() < 1e-12);
        // Fractional rounds (four workgroups on every CU): the fourth's half period at K = 100,
        // (7 - 3) / 2, beside the third's at K = 300, (19 - 7) / 2.
        assert_eq!(with(4 * 304, 300.0, tail(900, 100.0)), 7.0 + (6.0 + 2.0) / 2.0);
        // Whole rounds (twenty on the busiest CU): its last round at K = 100.
        assert_eq!(with(20 * 304, 300.0, tail(18 * 304, 100.0)), 7.0 + 8.0 * 6.0 + 2.0);
        assert_eq!(with(20 * 304, 300.0, tail(19 * 304, 100.0)), 7.0 + 9.0 * 6.0);
    }

    /// Edge tiles: each of the busiest CU's workgroups whose tile rows cross `m` adds
    /// `s_edge - s_min`; every one of them where every tile stores element by element; none on
    /// whole tiles or without the measurement.
    #[test]
    fn edge_tiles_add_their_element_stores() {
        let e = gemm_kernels::for_arch(Arch::Gfx942)
            .find(|e| characterised(e) && !e.is_decode() && e.tile == (64, 64, 64))
            .expect("a 64x64x64 kernel");
        let r = row(e.name, e.arch, code_hash(e));
        let each = r.s_edge - r.s_min;
        assert_eq!(edge_seconds(&r, e, 256, 256, 1, false), 0.0);
        // One tile row: workgroup 0, the busiest CU's one, is an edge tile.
        assert!((edge_seconds(&r, e, 63, 640, 1, false) - each).abs() < 1e-12);
        // 255 rows in 4 tile rows, 20 workgroups: the busiest CU runs only tile (0, 0).
        assert_eq!(edge_seconds(&r, e, 255, 320, 1, false), 0.0);
        assert!((edge_seconds(&r, e, 256, 320, 1, true) - each).abs() < 1e-12);
        // 2049 x 2047: 33 x 32 tiles, the busiest CU runs 4 (ids 0, 304, 608, 912), of which the
        // ones in tile row 32 are edge tiles (the grid order decides which).
        let (tiles_m, tiles_n) = (33u32, 32u32);
        let expected =
            (0..4u32).filter(|i| tile_of(e.grid_order, 8, tiles_m, tiles_n, i * 304).0 == tiles_m - 1).count() as f64;
        assert!((edge_seconds(&r, e, 2049, 2047, 1, false) - each * expected).abs() < 1e-12);
        assert!((edge_seconds(&r, e, 2049, 2047, 1, true) - 4.0 * each).abs() < 1e-12);
        let unmeasured = Row { s_edge: 0.0, ..r };
        assert_eq!(edge_seconds(&unmeasured, e, 63, 640, 1, true), 0.0);
    }

    /// A problem whose panels an XCD's workgroups share more than in any measured grid (few
    /// wide activation panels against many weight panels) in one round composes below the
    /// most-hit grid by its misses, never below S; over several rounds, at the most-hit grid.
    #[test]
    fn more_hits_than_the_square_grid_extrapolate_along_the_line() {
        let e = gemm_kernels::for_arch(Arch::Gfx942)
            .find(|e| characterised(e) && !e.is_decode() && e.tile == (64, 64, 64))
            .expect("a 64x64x64 kernel");
        // A second workgroup per CU costs less than the chip's bandwidth contention (`R1 - F`
        // 0.6 against `F - S` 1.0 at K = 1300): bandwidth-bound.
        let pipes = Row { a_share: 0.5, ..row(e.name, e.arch, code_hash(e)) };
        let r = Row { r1: [2.2, 4.4, 14.6], ..pipes.clone() };
        let (m, n, k) = (8192, 256, 1300.0);
        let wgs = 128 * 4;
        let w = wg_k_seconds(e);
        let square = compose_bounded(&r, e.arch, wgs, k, w);
        let column = compose_bounded(&r.column(), e.arch, wgs, k, w);
        let g = grid_workgroups(e.arch, r.occupancy);
        let hit = |a: Arrangement| {
            let (gm, gn) = grid_shape(e, g[2], a);
            l2_estimate(e, r.a_share, gm as u32, gn as u32, 1, g[2])
        };
        let (xs, xc) = (hit(Arrangement::Square), hit(Arrangement::Column));
        let ours = l2_estimate(e, r.a_share, m, n, 1, wgs);
        assert!(ours > xs && xs > xc && column > square, "{ours} {xs} {xc} {column} {square}");
        // One round (512 workgroups, two on the busiest CU at occupancy 2): the part of the
        // square grid's time above S scales with the misses.
        let lone = at_k(r.s, r.k, k, w, Some((f64::from(r.k_min), r.s_min / r.s[0])));
        assert!(lone < square, "{lone} {square}");
        let expected = lone + (square - lone) * (1.0 - ours) / (1.0 - xs);
        let got = compose_problem(&r, e, m, n, 1, k);
        assert!((got - expected).abs() < 1e-12 * square && got < square && got > lone, "{got} {expected} {square}");
        // Bound by its own pipes (`R1 - F` 13 against `F - S` 1): the square grid's time.
        assert_eq!(compose_problem(&pipes, e, m, n, 1, k), compose_bounded(&pipes, e.arch, wgs, k, w));
        // 4096 x 4096: several rounds, more hits than the square grid, its time.
        let (m, n) = (4096, 4096);
        assert!(l2_estimate(e, r.a_share, m, n, 1, g[2]) > xs);
        assert_eq!(compose_problem(&r, e, m, n, 1, k), compose_bounded(&r, e.arch, 64 * 64, k, w));
    }

    /// The workgroup order the footprint follows covers every tile once, whatever the order; the
    /// sharing of a launch's panels on one XCD places it between the measured arrangements: the
    /// one-column grid shares B and never A, the one-row grid the reverse, a square problem both.
    #[test]
    fn the_l2_estimate_follows_the_launchs_sharing() {
        for (order, tm, tn) in [((0, 0), 7, 5), ((4, 8), 19, 16), ((2, 3), 40, 3), ((1, 0), 16, 16)] {
            let mut seen = std::collections::HashSet::new();
            for pid in 0..tm * tn {
                let (x, y) = tile_of(order, 8, tm, tn, pid);
                assert!(x < tm && y < tn && seen.insert((x, y)), "{order:?} {tm}x{tn}: {pid}");
            }
        }
        let e = gemm_kernels::for_arch(Arch::Gfx942)
            .find(|e| characterised(e) && !e.is_decode() && e.tile.0 == 256 && e.tile.1 == 256)
            .expect("a 256x256 kernel");
        let at = |a: Arrangement| {
            let (m, n) = grid_shape(e, 304, a);
            xcd_sharing(e, m as u32, n as u32, 1, 304)
        };
        // 38 workgroups on the first XCD: one A panel for all is shared by 37 of them.
        let all_but_one = 37.0 / 38.0;
        let (a, b) = at(Arrangement::Column);
        assert!(a == 0.0 && (b - all_but_one).abs() < 1e-9, "{a} {b}");
        let (a, b) = at(Arrangement::Row);
        assert!((a - all_but_one).abs() < 1e-9 && b == 0.0, "{a} {b}");
        let (a, b) = at(Arrangement::Square);
        assert!(a > 0.3 && b > 0.3, "{a} {b}");
        // Weights of 76032 rows against one activation column: A never shared; 32768 activation
        // rows against 256 weight rows: B never shared.
        let (a, b) = xcd_sharing(e, 76032, 1, 1, 304);
        assert!(a == 0.0 && b > 0.9, "{a} {b}");
        let (a, b) = xcd_sharing(e, 256, 32768, 1, 304);
        assert!(a > 0.9 && b == 0.0, "{a} {b}");
        // The estimate weighs the two by the window's share of A lines.
        assert_eq!(l2_estimate(e, 1.0, 256, 32768, 1, 304), a);
        assert_eq!(l2_estimate(e, 0.0, 256, 32768, 1, 304), 0.0);
    }
}
