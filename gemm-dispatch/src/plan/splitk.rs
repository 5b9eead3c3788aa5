//! Split-K: a problem whose `m x n` tiles are too few to keep the GPU's CUs busy and whose K
//! is long (`128 x 128 x 65536`: one 128x128 tile, four 64x64 ones, on 304 CUs) runs as two
//! kernels on one stream: the catalogue's `splitk` partial kernel over a grid of
//! `tiles x splits` workgroups, each summing one K range into its f32 slab of a workspace,
//! then the `splitk_reduce` kernel, which sums the slabs in split order, applies alpha and
//! beta and writes C in its type (gemm-compiler `ir::SplitK`: deterministic, Tensile's
//! `GlobalSplitU` "MultipleBuffer" form).
//!
//! [`choose`] decides with a static estimate in the terms of `choice::StaticEstimate`
//! (rounds of one workgroup per CU, a tile's flops at the CU's share of the MFMA ceiling over
//! the kernel's MFMA issue share) plus the workspace traffic at the HBM bandwidth (ARCH.md
//! "Memory system"), never below the physical floor ([`crate::plan::bounds`]: the MFMA ceiling
//! and the bytes of A, B and C at peak HBM bandwidth, plus the workspace's own traffic for a
//! split): the split is taken only where it predicts faster than the plain kernel.
//! `gemm splitk` prints the timing model's predictions of both (`model::predict_split`).
//!
//! **The split tail** ([`choose_tail`]): a problem with many tiles whose last round of the
//! plain kernel would leave most CUs idle (8192x8192 outputs in 256x256 tiles: 1024 tiles
//! on MI300X's 304 CUs are 3.37 rounds, so the fourth round runs 112 tiles on 304 CUs) runs
//! the plain kernel over the leading columns of tiles that fill whole rounds, and splits
//! the K of the remaining columns so that they take a fraction of a round: three launches
//! on one stream (plain head, partial tail, reduction of the tail). It is the data-parallel
//! plus split-K hybrid of Stream-K (Osama et al., "Stream-K: Work-centric Parallel
//! Decomposition for Dense Matrix-Matrix Multiplication on the GPU", PPoPP 2023, §4.3
//! "Hybridization": whole-tile rounds first, the remainder's iterations spread), with the
//! remainder split into equal K ranges through the deterministic workspace rather than
//! Stream-K's atomically signalled fix-up, so the sums do not depend on timing. The partial
//! kernel is the plain kernel's twin (same tile, schedule and copies: the catalogue's
//! `splitk_pingpong` family for gfx942's ping-pong tile).

use crate::ops::scales::Fp8Scales;
use crate::plan::cost_table::ShortTail;
pub use crate::plan::kernel_plan::Launch;
use crate::plan::kernel_plan::{column_major, ColumnMajor, KernelPlan};
use gemm_core::{Arch, DType, GemmProblem};
use gemm_kernels::{ArgKind, KernelEntry, SplitRole};

/// The most workspace one split-K GEMM takes (bytes). hipBLASLt's users size theirs in tens
/// of MiB (PyTorch's default for it is 32 MiB); the reduction kernel addresses at most 2^30.
pub const WORKSPACE_CAP: usize = 32 << 20;

/// The most workspace the split tail of a large problem takes (bytes): the tail of an
/// 8192x8192 output (8192x1024 f32 in two slabs) needs 64 MiB, 1/6 of that problem's
/// operand and result bytes (384 MiB in bf16); hipBLASLt's Stream-K kernels likewise take a
/// workspace for partial tiles (its `HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES`).
pub const TAIL_WORKSPACE_CAP: usize = 64 << 20;

/// K tiles each split runs at least: below this the fixed cost of a workgroup (setup, the
/// first tile's wait, the epilogue's stores) and the workspace traffic outweigh the work.
pub const MIN_TILES_PER_SPLIT: u32 = 8;

/// A split-K launch pair for one problem.
#[derive(Clone, Copy, Debug)]
pub struct SplitPlan {
    pub partial: &'static KernelEntry,
    pub reduce: &'static KernelEntry,
    pub problem: ColumnMajor,
    pub splits: u32,
    /// K per split (a multiple of the partial kernel's KT).
    pub kchunk: u32,
    /// The slabs' leading dimension (elements) and the bytes from one slab to the next.
    pub ldw: u32,
    pub wstride: u32,
    /// The static estimates [`choose`] compared (seconds); for a split tail, the head and
    /// the split together. A few-tiles split compares at the count that fills every resident
    /// slot and runs the table's fastest count (`split_count`), whose time is
    /// [`table_estimate`].
    pub estimate_split: f64,
    pub estimate_plain: Option<f64>,
    /// A split tail ([`choose_tail`]): the plain kernel over C's columns `0..col0` (the
    /// head), run before the split part; `problem` is then the columns `col0..n`.
    pub head: Option<KernelPlan>,
    /// The first column of C (of the column-major problem) the split part computes.
    pub col0: u32,
}

/// Static seconds of `workgroups` workgroups of `e`, each computing a `2*MT*NT*k` tile, with
/// `slots` of them at once: rounds of `slots`, each as long as `slots / CUs` tiles take one
/// CU at the CU's share of the peak over the kernel's MFMA issue share.
fn compute_seconds(e: &KernelEntry, workgroups: u64, k: u32, slots: u32) -> f64 {
    let cus = f64::from(e.arch.caps().compute_units.max(1));
    let slots = slots.max(1);
    let rounds = workgroups.div_ceil(u64::from(slots)) as f64;
    let per_cu = e.arch.mfma_ceiling_tflops(e.a_type, e.xf32()) * 1e12 / cus;
    let share = (f64::from(e.mfma_issue_share_permille) / 1000.0).clamp(0.05, 1.0);
    let per_round = f64::from(slots) / cus;
    rounds * per_round * 2.0 * f64::from(e.tile.0) * f64::from(e.tile.1) * f64::from(k.max(1)) / per_cu / share
}

/// Workgroups of `e` that `cus` compute units hold at once: every CU's resident slots (the
/// manifest's occupancy is waves per SIMD; 4 SIMDs per CU).
fn resident_slots(e: &KernelEntry, cus: u32) -> u32 {
    cus.max(1) * (e.occupancy * 4 / e.waves.max(1)).max(1)
}

/// `Ok` where the split's static estimate beats the plain kernel's, else why not.
fn split_beats(plain: f64, split: f64, what: &str) -> Result<(), String> {
    if plain <= split {
        return Err(format!("the plain kernel predicts {:.1} us, {what} {:.1} us", plain * 1e6, split * 1e6));
    }
    Ok(())
}

/// Workgroups of a grid.
fn workgroups(g: [u32; 3]) -> u64 {
    u64::from(g[0]) * u64::from(g[1]) * u64::from(g[2])
}

/// The workspace slabs of an `m x n` split part: leading dimension `m` rounded up to 4
/// elements, slabs on 256-byte boundaries (whole cache lines apart).
pub fn slab(m: u32, n: u32) -> Result<(u32, u32), String> {
    let ldw = m.next_multiple_of(4);
    let wstride = (u64::from(ldw) * u64::from(n) * 4).next_multiple_of(256);
    let wstride = u32::try_from(wstride).map_err(|_| "the workspace slab exceeds 4 GiB")?;
    Ok((ldw, wstride))
}

/// Seconds of a split's memory traffic at the HBM bandwidth (ARCH.md "Memory system"): the
/// slabs written once and read once, the `m x n` C written (and read when beta != 0).
fn traffic_seconds(arch: Arch, p: &GemmProblem, m: u32, n: u32, splits: u32, wstride: u32) -> f64 {
    let c_bytes = (m as usize * n as usize * p.c_type.size_bytes()) as f64;
    let traffic = 2.0 * f64::from(splits) * f64::from(wstride) + c_bytes * if p.beta != 0.0 { 2.0 } else { 1.0 };
    traffic / (arch.caps().hbm_tbps * 1e12)
}

/// Seconds of the reduction kernel's traffic at the HBM bandwidth where the partial kernel's time
/// comes from the characterisation table: every slab read once, the `m x n` C written (and read
/// when beta != 0). The slabs' writes are not in it: the partial kernel is composed from its plain
/// twin's row, whose f32 C stores are the slab's (the same tile, the same stores), so they are in
/// the partial's composed time already. Counting them twice (as [`traffic_seconds`] does for the
/// static estimate, whose compute rounds move no bytes) put the reduction of a 7-way split of
/// gfx942 bf16 `32 x 6144 x 4096` (`x W^T`, 64x64x64 partials, 7 slabs of 0.79 MB) at 2.92 us
/// where the timing model gives 1.86 (now 1.88).
///
/// The reduction sums the slabs in order, [`REDUCE_UNROLL`] loads a round (gemm-compiler
/// `lower.rs` `reduce`), each round's loads waiting on the previous round's sum; its least time
/// ([`crate::plan::cost_table::reduction_seconds`], two slabs) holds one round. Each further
/// round takes at least one load round trip from HBM ([`HBM_LATENCY_S`]), so the bytes are at
/// least that chain: the larger of the two. With the bytes alone, 128 slabs of a 128 x 128
/// split (8 rounds, 64 workgroups) composed at 1.8 us on gfx950 and 2.4 on gfx942 where the
/// model gives 3.8 and 4.0 (now 3.2 and 3.2).
fn reduce_traffic_seconds(arch: Arch, p: &GemmProblem, m: u32, n: u32, splits: u32, wstride: u32) -> f64 {
    let c_bytes = (m as usize * n as usize * p.c_type.size_bytes()) as f64;
    let traffic = f64::from(splits) * f64::from(wstride) + c_bytes * if p.beta != 0.0 { 2.0 } else { 1.0 };
    let rounds = splits.div_ceil(REDUCE_UNROLL).max(1);
    (traffic / (arch.caps().hbm_tbps * 1e12)).max(f64::from(rounds - 1) * HBM_LATENCY_S)
}

/// Slab loads the reduction issues per round (gemm-compiler `lower.rs` `REDUCE_UNROLL`; the
/// runtime does not link the compiler).
pub const REDUCE_UNROLL: u32 = 16;

/// One load's round trip from HBM: the timing model's figure for both archs (gemm-emu
/// `timing/params.rs` `hbm_latency_ns`, 353 ns: the MI300X bring-up log; gfx950 assumed the
/// same), which the reduction's serial rounds wait on.
pub const HBM_LATENCY_S: f64 = 353e-9;

/// Seconds of the workspace's own traffic at the HBM bandwidth: every slab written once and read
/// once by the reduction (bytes a plain kernel does not move).
fn workspace_seconds(arch: Arch, splits: u32, wstride: u32) -> f64 {
    2.0 * f64::from(splits) * f64::from(wstride) / (arch.caps().hbm_tbps * 1e12)
}

/// Whether the partial kernel `e` can run `p`'s operands: dtypes, transposes, alignment, spans.
fn fits(e: &KernelEntry, p: &GemmProblem, cm: &ColumnMajor) -> bool {
    let (a_t, b_t) = if cm.swap_ab { (p.b_type, p.a_type) } else { (p.a_type, p.b_type) };
    let align = e.align_elems.max(1);
    let spans_ok = p.validate().is_ok_and(|s| {
        s.a.saturating_mul(p.a_type.size_bytes()) < 1 << 31 && s.b.saturating_mul(p.b_type.size_bytes()) < 1 << 31
    });
    (e.a_type, e.b_type) == (a_t, b_t)
        && (e.trans_a, e.trans_b) == (cm.trans_a, cm.trans_b)
        && cm.lda.is_multiple_of(align)
        && cm.ldb.is_multiple_of(align)
        && spans_ok
}

/// The split-K plan for `p` on `arch` when its tiles are few and K is long, or why split-K
/// does not serve it. With `plain` (the kernel the problem would run otherwise), the split
/// must also predict faster than it.
pub fn choose_few_tiles(arch: Arch, p: &GemmProblem, plain: Option<&KernelPlan>) -> Result<SplitPlan, String> {
    few_tiles(arch, arch.caps().compute_units, p, plain)
}

/// [`choose_few_tiles`] on `cus` compute units ([`choose_on`]).
fn few_tiles(arch: Arch, cus: u32, p: &GemmProblem, plain: Option<&KernelPlan>) -> Result<SplitPlan, String> {
    p.validate().map_err(|e| e.to_string())?;
    if p.m == 0 || p.n == 0 || p.k == 0 {
        return Err("nothing to split: m, n or k is 0".into());
    }
    if !matches!(p.c_type, DType::F32 | DType::Bf16 | DType::F16) {
        return Err(format!("no split-K reduction writes {}", p.c_type));
    }
    let cm = column_major(p)?;
    // A decode kernel splits into its own twin, and the table composes both halves
    // ([`decode_split`]).
    if let Some(pl) = plain.filter(|pl| pl.entry.is_decode()) {
        return decode_split(arch, cus, p, &cm, pl);
    }
    // The vector-loading partial kernel where the leading dimensions allow it, of the
    // smallest tile (few tiles: the large tiles' twins serve split tails).
    let partial = gemm_kernels::for_arch(arch)
        .filter(|e| e.split_k == SplitRole::Partial && !e.is_decode() && fits(e, p, &cm))
        .max_by_key(|e| (e.align_elems, std::cmp::Reverse(e.tile.0 * e.tile.1)))
        .ok_or_else(|| format!("no split-K partial kernel for {} x {} on {arch}", p.a_type, p.b_type))?;
    let reduce = gemm_kernels::for_arch(arch)
        .find(|e| e.split_k == SplitRole::Reduce && e.c_type == p.c_type)
        .ok_or_else(|| format!("no split-K reduction to {} on {arch}", p.c_type))?;
    let tiles = cm.m.div_ceil(partial.tile.0) * cm.n.div_ceil(partial.tile.1);
    if tiles >= cus / 2 {
        return Err(format!(
            "{tiles} tiles of {}x{} already fill half of the {cus} CUs",
            partial.tile.0, partial.tile.1
        ));
    }
    let kt = partial.tile.2;
    let (ldw, wstride) = slab(cm.m, cm.n)?;
    let by_cap = (WORKSPACE_CAP / wstride as usize) as u32;
    // Enough workgroups for every resident slot, no split shorter than MIN_TILES_PER_SPLIT K
    // tiles.
    let want = resident_slots(partial, cus).div_ceil(tiles).min(cm.k / (MIN_TILES_PER_SPLIT * kt)).min(by_cap);
    if want < 2 {
        return Err(format!(
            "K = {} gives fewer than 2 splits of at least {} (or the {} MiB workspace holds fewer than 2 slabs)",
            cm.k,
            MIN_TILES_PER_SPLIT * kt,
            WORKSPACE_CAP >> 20
        ));
    }
    // Whether to split at all: the static estimate at the count that fills every slot
    // against the plain kernel (as before the count was searched); how many splits: the
    // table's fastest count ([`split_count`]).
    let fill_chunk = cm.k.div_ceil(want).next_multiple_of(kt);
    let fill = cm.k.div_ceil(fill_chunk);
    let floor = crate::plan::bounds::floor(arch, p, partial.xf32());
    let estimate_split = (compute_seconds(partial, u64::from(tiles) * u64::from(fill), fill_chunk, cus)
        + traffic_seconds(arch, p, cm.m, cm.n, fill, wstride))
    .max(floor.seconds() + workspace_seconds(arch, fill, wstride));
    let estimate_plain =
        plain.map(|pl| compute_seconds(pl.entry, workgroups(pl.grid), pl.problem.k, cus).max(floor.seconds()));
    if let Some(t) = estimate_plain {
        split_beats(t, estimate_split, &format!("split-K ({fill} splits)"))?;
    }
    let (splits, kchunk) = split_count(p, &cm, partial, reduce, want, (ldw, wstride));
    Ok(SplitPlan {
        partial,
        reduce,
        problem: cm,
        splits,
        kchunk,
        ldw,
        wstride,
        estimate_split,
        estimate_plain,
        head: None,
        col0: 0,
    })
}

/// The split count of a few-tiles split-K plan, at most `most` (enough workgroups for every
/// resident slot): the one whose [`table_estimate`] is least. Filling every slot is not the
/// fastest where memory binds: each split adds a slab written and read back, and a decode
/// row's weights stream no faster from more workgroups than the CUs can keep loads in flight
/// for (issue 23, gfx950 4096 x 14336 bf16 weights at M = 64 by the timing model: 19 splits of
/// the 64x64 tile 29.1 us, 12 splits 25.2 us, 8 splits 25.0 us). Where the table has no row
/// for the partial's twin, `most`.
fn split_count(
    p: &GemmProblem,
    cm: &ColumnMajor,
    partial: &'static KernelEntry,
    reduce: &'static KernelEntry,
    most: u32,
    (ldw, wstride): (u32, u32),
) -> (u32, u32) {
    let at = |want: u32| {
        let sp = SplitPlan::even(partial, reduce, *cm, want, (ldw, wstride));
        (sp.splits, sp.kchunk)
    };
    let mut best: Option<(f64, u32, u32)> = None;
    for want in 2..=most {
        let sp = SplitPlan::even(partial, reduce, *cm, want, (ldw, wstride));
        let Some(t) = table_estimate(&sp, p) else { return at(most) };
        if best.is_none_or(|b| t < b.0) {
            best = Some((t, sp.splits, sp.kchunk));
        }
    }
    best.map_or_else(|| at(most), |(_, s, k)| (s, k))
}

/// The characterisation table's estimate of a split-K plan over few tiles (no head): the
/// partial kernel is its plain twin (same tile, schedule and inputs, f32 out) writing a slab,
/// so that twin's row composed at `tiles x splits` workgroups and K = `kchunk`, plus the
/// reduction's traffic at HBM bandwidth ([`reduce_traffic_seconds`]: the slabs read, C written) and its least time ([`crate::plan::cost_table::reduction_seconds`]), at least the memory floor and the workspace's bytes.
/// A split tail adds its head (the plain kernel's row composed over the head's columns).
/// `None` where the twin or the head has no fresh row.
pub fn table_estimate(sp: &SplitPlan, p: &GemmProblem) -> Option<f64> {
    let e = sp.partial;
    let arch = e.arch;
    let partial = partial_seconds(sp, plain_twin(e)?)?;
    let cm = &sp.problem;
    // A split tail's head: the plain kernel over the whole tile columns before `col0`, its own
    // launch before the split part's (one stream).
    let head = match &sp.head {
        Some(h) => {
            let kt = h.entry.tile.2.max(1);
            let k = f64::from(h.problem.k.div_ceil(kt) * kt);
            let hrow = crate::plan::cost_table::table().row(h.entry).ok()?;
            let (m, n) = (h.problem.m, h.problem.n);
            crate::plan::cost_table::compose_problem(hrow, h.entry, m, n, 1, k)
                + crate::plan::cost_table::edge_seconds(hrow, h.entry, m, n, 1, false)
        }
        None => 0.0,
    };
    let t = head
        + partial
        + reduce_traffic_seconds(arch, p, cm.m, cm.n, sp.splits, sp.wstride)
        + crate::plan::cost_table::reduction_seconds(sp.reduce);
    let floor = crate::plan::bounds::floor(arch, p, e.xf32()).seconds();
    Some(t.max(floor + workspace_seconds(arch, sp.splits, sp.wstride)))
}

/// The last split's workgroups of `e` over `cm` in `splits` K ranges of `kchunk`, where it runs
/// a shorter K than the others ([`ShortTail::of_split`]): the table composes them at their own K.
fn last_split(e: &KernelEntry, cm: &ColumnMajor, splits: u32, kchunk: u32) -> Option<ShortTail> {
    let tiles = u64::from(cm.m.div_ceil(e.tile.0.max(1))) * u64::from(cm.n.div_ceil(e.tile.1.max(1)));
    ShortTail::of_split(tiles, splits, kchunk, cm.k, e.tile.2)
}

/// The plain kernel a tiled partial kernel is the twin of: same tile, waves, MFMA, stages,
/// schedule, inputs, transposes and alignment, f32 out. Its row predicts the partial.
pub fn plain_twin(partial: &KernelEntry) -> Option<&'static KernelEntry> {
    let e = partial;
    gemm_kernels::for_arch(e.arch).find(|x| {
        x.split_k == SplitRole::None
            && x.is_plain()
            && (x.tile, x.wave_grid, x.mfma, x.stages, x.schedule)
                == (e.tile, e.wave_grid, e.mfma, e.stages, e.schedule)
            && (x.a_type, x.b_type, x.trans_a, x.trans_b, x.align_elems)
                == (e.a_type, e.b_type, e.trans_a, e.trans_b, e.align_elems)
            && x.c_type == DType::F32
    })
}

/// The table's time for a split's partial launch: `twin`'s row (the partial's plain twin, or
/// for a decode split the decode kernel itself) composed at `tiles x splits` workgroups and K =
/// `kchunk`, with its edge tiles. `None` where the twin has no fresh row.
pub fn partial_seconds(sp: &SplitPlan, twin: &'static KernelEntry) -> Option<f64> {
    let row = crate::plan::cost_table::table().row(twin).ok()?;
    let cm = &sp.problem;
    let tail = last_split(twin, cm, sp.splits, sp.kchunk);
    Some(
        crate::plan::cost_table::compose_split(row, twin, cm.m, cm.n, sp.splits, f64::from(sp.kchunk), tail)
            + crate::plan::cost_table::edge_seconds(row, twin, cm.m, cm.n, sp.splits, false),
    )
}

/// Split-K for a decode kernel whose weight rows are too few to fill the CUs (a tensor-parallel
/// shard of 1280 rows is 80 blocks of 16): its partial twin over `S` K ranges, `S` chosen so the
/// blocks times `S` fill every resident slot once, then the reduction. Both halves come from the
/// characterisation table: the partial kernel is the plain kernel with f32 sums into a slab, so
/// the plain kernel's row composed at `blocks x S` workgroups and K = `kchunk` predicts it; the
/// reduction reads the slabs and writes C at HBM bandwidth after its least time ([`reduce_traffic_seconds`]). Each candidate `S` (2, 3, ... up to the
/// slots) is composed and the fastest kept when it beats the plain kernel's composed time.
fn decode_split(
    arch: Arch,
    cus: u32,
    p: &GemmProblem,
    cm: &ColumnMajor,
    plain: &KernelPlan,
) -> Result<SplitPlan, String> {
    let e = plain.entry;
    let partial = twin(e, p, cm).ok_or_else(|| format!("{} has no split-K twin", e.name))?;
    let reduce = gemm_kernels::for_arch(arch)
        .find(|r| r.split_k == SplitRole::Reduce && r.c_type == p.c_type)
        .ok_or_else(|| format!("no split-K reduction to {} on {arch}", p.c_type))?;
    let row = crate::plan::cost_table::table().row(e)?;
    let tiles = u64::from(cm.m.div_ceil(e.tile.0)) * u64::from(cm.n.div_ceil(e.tile.1));
    let slots = u64::from(resident_slots(e, cus));
    if tiles >= slots / 2 {
        return Err(format!("{tiles} decode blocks already fill half of the {slots} resident slots"));
    }
    let kt = e.tile.2;
    let (ldw, wstride) = slab(cm.m, cm.n)?;
    let by_cap = (WORKSPACE_CAP / wstride as usize) as u32;
    let most = (slots / tiles).min(u64::from(cm.k / kt)).min(u64::from(by_cap)) as u32;
    let floor = crate::plan::bounds::floor(arch, p, false).seconds();
    let plain_t = crate::plan::cost_table::compose_problem(row, e, cm.m, cm.n, 1, f64::from(cm.k.next_multiple_of(kt)))
        .max(floor);
    let mut best: Option<(f64, u32, u32)> = None;
    for want in 2..=most {
        let kchunk = cm.k.div_ceil(want).next_multiple_of(kt);
        let splits = cm.k.div_ceil(kchunk);
        let tail = last_split(e, cm, splits, kchunk);
        let t = crate::plan::cost_table::compose_split(row, e, cm.m, cm.n, splits, f64::from(kchunk), tail)
            + reduce_traffic_seconds(arch, p, cm.m, cm.n, splits, wstride)
            + crate::plan::cost_table::reduction_seconds(reduce);
        let t = t.max(floor + workspace_seconds(arch, splits, wstride));
        if best.is_none_or(|b| t < b.0) {
            best = Some((t, splits, kchunk));
        }
    }
    let (estimate_split, splits, kchunk) =
        best.ok_or_else(|| format!("K = {} is under two K steps of {kt}: nothing to split", cm.k))?;
    split_beats(plain_t, estimate_split, &format!("decode split-K ({splits} splits)"))?;
    Ok(SplitPlan {
        partial,
        reduce,
        problem: *cm,
        splits,
        kchunk,
        ldw,
        wstride,
        estimate_split,
        estimate_plain: Some(plain_t),
        head: None,
        col0: 0,
    })
}

/// The split plan the dispatcher runs for `p` after choosing `plain`: split-K where the
/// tiles are few and K is long ([`choose_few_tiles`]), else a split tail where the plain
/// kernel's last round would be mostly idle ([`choose_tail`]); `Err` gives both reasons.
pub fn choose(arch: Arch, p: &GemmProblem, plain: Option<&KernelPlan>) -> Result<SplitPlan, String> {
    choose_on(arch, arch.caps().compute_units, p, plain)
}

/// [`choose`] on a device of `arch` that reports `cus` compute units: a partition of the
/// chip (an MI300X in CPX mode has 38 per partition) holds fewer workgroups at once, so its
/// rounds, and whether a tail splits, differ from the whole chip's. The HIP backend passes
/// the runtime's count.
pub fn choose_on(arch: Arch, cus: u32, p: &GemmProblem, plain: Option<&KernelPlan>) -> Result<SplitPlan, String> {
    let few = match few_tiles(arch, cus, p, plain) {
        Ok(s) => return Ok(s),
        Err(why) => why,
    };
    match plain {
        Some(plain) => choose_tail_in(arch, p, plain, resident_slots(plain.entry, cus))
            .map_err(|tail| format!("{few}; no split tail: {tail}")),
        None => Err(few),
    }
}

/// The partial kernel that is `plain`'s twin for `p`: the same tile, wave grid, MFMA,
/// stages, schedule, workgroup order and copies, f32 partial sums (the lab's `split_probe`
/// predicts every kernel's split through it).
pub fn twin(plain: &KernelEntry, p: &GemmProblem, cm: &ColumnMajor) -> Option<&'static KernelEntry> {
    gemm_kernels::for_arch(plain.arch).find(|e| {
        e.split_k == SplitRole::Partial
            && (e.tile, e.wave_grid, e.mfma, e.stages) == (plain.tile, plain.wave_grid, plain.mfma, plain.stages)
            && (e.schedule, e.grid_order) == (plain.schedule, plain.grid_order)
            && (e.copy_a, e.copy_b) == (plain.copy_a, plain.copy_b)
            && fits(e, p, cm)
    })
}

/// The split tail of `p` run by `plain` ([`SplitPlan::head`]), or why it does not serve.
///
/// With `S` resident workgroups on the GPU (CUs times the kernel's workgroups per CU) and
/// `T` tiles in `R = ceil(T/S)` rounds: the head takes the whole tile columns that fit in
/// `R - 1` rounds, the tail's `t` tiles split K `floor(S/t)` ways (at least 2, each split at
/// least [`MIN_TILES_PER_SPLIT`] K tiles) so that they run in one round of shorter
/// workgroups. Taken when the static estimate (head rounds + the tail's fraction of a
/// round + the workspace traffic) beats the plain kernel's `R` rounds.
pub fn choose_tail(arch: Arch, p: &GemmProblem, plain: &KernelPlan) -> Result<SplitPlan, String> {
    choose_tail_in(arch, p, plain, resident_slots(plain.entry, arch.caps().compute_units))
}

/// [`choose_tail`] on a GPU that runs `slots` workgroups of the kernel at once (the tests
/// run a split tail on the emulator at sizes it can run in seconds by asking for few slots).
pub fn choose_tail_in(arch: Arch, p: &GemmProblem, plain: &KernelPlan, slots: u32) -> Result<SplitPlan, String> {
    p.validate().map_err(|e| e.to_string())?;
    if !matches!(p.c_type, DType::F32 | DType::Bf16 | DType::F16) {
        return Err(format!("no split-K reduction writes {}", p.c_type));
    }
    let cm = plain.problem;
    let e = plain.entry;
    let partial = twin(e, p, &cm).ok_or_else(|| format!("{} has no split-K twin", e.name))?;
    let reduce = gemm_kernels::for_arch(arch)
        .find(|r| r.split_k == SplitRole::Reduce && r.c_type == p.c_type)
        .ok_or_else(|| format!("no split-K reduction to {} on {arch}", p.c_type))?;
    let slots = slots.max(1);
    let (tm, tn) = (cm.m.div_ceil(e.tile.0), cm.n.div_ceil(e.tile.1));
    let tiles = tm * tn;
    let rounds = tiles.div_ceil(slots);
    if rounds < 2 {
        return Err(format!("{tiles} tiles run in one round of {slots} workgroups"));
    }
    let last = tiles - (rounds - 1) * slots;
    if 2 * last > slots {
        return Err(format!("the last of {rounds} rounds runs {last} of {slots} workgroups: more than half full"));
    }
    let head_cols = ((rounds - 1) * slots / tm).min(tn);
    let tail_tiles = tm * (tn - head_cols);
    let kt = partial.tile.2;
    let splits = (slots / tail_tiles.max(1)).min(cm.k / (MIN_TILES_PER_SPLIT * kt));
    if tail_tiles == 0 || splits < 2 {
        return Err(format!(
            "the tail's {tail_tiles} tiles take fewer than 2 splits of {slots} workgroups (K {} in tiles of {kt})",
            cm.k
        ));
    }
    let col0 = head_cols * e.tile.1;
    let tail = ColumnMajor { n: cm.n - col0, ..cm };
    let kchunk = cm.k.div_ceil(splits).next_multiple_of(kt);
    let splits = cm.k.div_ceil(kchunk);
    let (ldw, wstride) = slab(cm.m, tail.n)?;
    if splits as usize * wstride as usize > TAIL_WORKSPACE_CAP {
        return Err(format!(
            "{splits} slabs of {} MiB exceed the tail's {} MiB workspace",
            wstride >> 20,
            TAIL_WORKSPACE_CAP >> 20
        ));
    }
    let mut head = *plain;
    head.problem.n = col0;
    head.grid = e.launch(cm.m, col0).0;
    let floor = crate::plan::bounds::floor(arch, p, e.xf32()).seconds();
    let estimate_split = (compute_seconds(e, workgroups(head.grid), cm.k, slots)
        + compute_seconds(partial, u64::from(tail_tiles) * u64::from(splits), kchunk, slots)
        + traffic_seconds(arch, p, cm.m, tail.n, splits, wstride))
    .max(floor + workspace_seconds(arch, splits, wstride));
    let plain_t = compute_seconds(e, workgroups(plain.grid), cm.k, slots).max(floor);
    split_beats(plain_t, estimate_split, "the split tail")?;
    Ok(SplitPlan {
        partial,
        reduce,
        problem: tail,
        splits,
        kchunk,
        ldw,
        wstride,
        estimate_split,
        estimate_plain: Some(plain_t),
        head: Some(head),
        col0,
    })
}

/// Packs `e`'s arguments from its manifest, each by name from `value`.
fn pack(e: &KernelEntry, value: impl Fn(&str) -> Option<Vec<u8>>) -> Result<Vec<u8>, String> {
    let mut out = vec![0u8; e.kernarg_size as usize];
    for arg in e.kernarg {
        let bytes = value(arg.name).ok_or_else(|| format!("kernel {} has an unknown argument {}", e.name, arg.name))?;
        let at = arg.offset as usize;
        out.get_mut(at..at + bytes.len())
            .filter(|_| bytes.len() == arg.size as usize)
            .ok_or_else(|| format!("argument {} of {} does not fit its slot", arg.name, e.name))?
            .copy_from_slice(&bytes);
        debug_assert!(arg.kind != ArgKind::Pointer || bytes.len() == 8);
    }
    Ok(out)
}

impl SplitPlan {
    /// Bytes of workspace the pair needs (16-byte aligned, as the partial kernel's vector
    /// stores want).
    pub fn workspace_bytes(&self) -> usize {
        self.splits as usize * self.wstride as usize
    }

    /// The launches, in the order they must run on one stream, for A, B, C and the
    /// workspace at these device addresses: the head (a split tail's plain kernel), the
    /// partial kernel, the reduction.
    pub fn launches(&self, p: &GemmProblem, a: u64, b: u64, c: u64, ws: u64) -> Result<Vec<Launch>, String> {
        self.launches_scaled(p, [a, b, c, ws], &Fp8Scales::UNIT, 0, 0)
    }

    /// [`Self::launches`] of an fp8 GEMM with scales (`crate::ops::scales`; unit scales and no
    /// vectors are a plain GEMM): the per-row / per-column vectors at device addresses `row`
    /// and `col` (0: none) go to the partial kernel, which multiplies each partial sum by
    /// `row[i] * col[j]` (only it knows each element's row and column), and the per-tensor
    /// scales fold into the reduction's scalars, `alpha' = scale_d * ((scale_a * scale_b) *
    /// alpha)` and `beta' = scale_d * beta` (scaling is linear, so every input type shares the
    /// one reduction kernel per C type; gemm-compiler `kernel_args.rs`, fp8 partial kernels).
    /// A row-major problem's vectors and `scale_a`/`scale_b` swap with its operands, as in
    /// [`crate::plan::fused::scaled_kernargs`], which also packs a split tail's head.
    pub fn launches_scaled(
        &self,
        p: &GemmProblem,
        [a, b, c, ws]: [u64; 4],
        scales: &Fp8Scales,
        row: u64,
        col: u64,
    ) -> Result<Vec<Launch>, String> {
        let unit = *scales == Fp8Scales::UNIT && row == 0 && col == 0;
        if !unit && !self.partial.a_type.is_fp8() {
            return Err(format!("{} takes no fp8 scales", self.partial.name));
        }
        let mut out = Vec::with_capacity(3);
        if let Some(h) = &self.head {
            let args = if unit {
                h.kernargs(p, a, b, c)?
            } else {
                crate::plan::fused::scaled_kernargs(h, p, [a, b, c], scales, row, col)?
            };
            out.push(Launch { entry: h.entry, grid: h.grid, block: h.block, args });
        }
        let (vrow, vcol) = if self.problem.swap_ab { (col, row) } else { (row, col) };
        // The product of the scales is symmetric in A and B (no swap for `alpha'`), and unit
        // scales leave alpha and beta bit for bit (`1 * x = x`).
        let alpha = scales.d * scales.combined(p.alpha);
        let beta = scales.d * p.beta;
        let (ka, kb) = if self.problem.swap_ab { (b, a) } else { (a, b) };
        let cm = self.problem;
        // The split part starts at column `col0` of the kernel's B and of C: column j of
        // op(B) is at `j*ldb` elements (B stored K x N) or at `j` (B^T stored N x K; no
        // twin takes B^T today: the ping-pong family is nn and tn).
        let col0 = u64::from(self.col0);
        let b_step = if cm.trans_b == gemm_core::Transpose::No { u64::from(cm.ldb) } else { 1 };
        let kb = kb + col0 * b_step * self.partial.b_type.size_bytes() as u64;
        let c = c + col0 * u64::from(cm.ldc) * p.c_type.size_bytes() as u64;
        let u = |x: u32| Some(x.to_le_bytes().to_vec());
        let partial_args = pack(self.partial, |name| match name {
            "a" => Some(ka.to_le_bytes().to_vec()),
            "b" => Some(kb.to_le_bytes().to_vec()),
            "ws" => Some(ws.to_le_bytes().to_vec()),
            "m" => u(cm.m),
            "n" => u(cm.n),
            "k" => u(cm.k),
            "lda" => u(cm.lda),
            "ldb" => u(cm.ldb),
            "ldw" => u(self.ldw),
            "kchunk" => u(self.kchunk),
            "wstride" => u(self.wstride),
            "scale_row" => Some(vrow.to_le_bytes().to_vec()),
            "scale_col" => Some(vcol.to_le_bytes().to_vec()),
            _ => None,
        })?;
        let reduce_args = pack(self.reduce, |name| match name {
            "ws" => Some(ws.to_le_bytes().to_vec()),
            "c" => Some(c.to_le_bytes().to_vec()),
            "m" => u(cm.m),
            "n" => u(cm.n),
            "splits" => u(self.splits),
            "ldw" => u(self.ldw),
            "ldc" => u(cm.ldc),
            "alpha" => Some(alpha.to_le_bytes().to_vec()),
            "beta" => Some(beta.to_le_bytes().to_vec()),
            "wstride" => u(self.wstride),
            _ => None,
        })?;
        let (mut grid, block) = self.partial.launch(cm.m, cm.n);
        grid[2] = self.splits;
        let (rgrid, rblock) = self.reduce.launch(cm.m, cm.n);
        out.push(Launch { entry: self.partial, grid, block, args: partial_args });
        out.push(Launch { entry: self.reduce, grid: rgrid, block: rblock, args: reduce_args });
        Ok(out)
    }
}

impl SplitPlan {
    /// `partial` and `reduce` over `problem` in `splits` even K ranges (as [`Self::with_splits`])
    /// with the workspace `(ldw, wstride)` of [`slab`]: no head, no estimates (for callers that
    /// compare split counts by [`table_estimate`] or the timing model).
    pub fn even(
        partial: &'static KernelEntry,
        reduce: &'static KernelEntry,
        problem: ColumnMajor,
        splits: u32,
        (ldw, wstride): (u32, u32),
    ) -> Self {
        SplitPlan {
            partial,
            reduce,
            problem,
            splits,
            kchunk: 0,
            ldw,
            wstride,
            estimate_split: 0.0,
            estimate_plain: None,
            head: None,
            col0: 0,
        }
        .with_splits(splits)
    }

    /// The same plan with `splits` splits instead (K per split recomputed, at least one K tile).
    pub fn with_splits(mut self, splits: u32) -> Self {
        let kt = self.partial.tile.2;
        self.kchunk = self.problem.k.div_ceil(splits.max(1)).next_multiple_of(kt);
        self.splits = self.problem.k.div_ceil(self.kchunk);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::Layout;

    fn bf16(m: usize, n: usize, k: usize) -> GemmProblem {
        GemmProblem::new(m, n, k).with_layout(Layout::ColMajor).with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16)
    }

    /// Tall-K problems with few tiles split; square ones and short K do not, with the reason.
    #[test]
    fn split_k_serves_few_tiles_and_long_k() {
        for arch in Arch::ALL {
            let p = bf16(128, 128, 65536);
            let plain = crate::plan::kernel_plan::plan(arch, &p).unwrap();
            let s = choose(arch, &p, Some(&plain)).unwrap();
            assert!(s.splits >= 2 && s.kchunk.is_multiple_of(s.partial.tile.2) && s.splits * s.kchunk >= 65536);
            assert!((s.splits - 1) * s.kchunk < 65536, "no empty split");
            assert!(s.workspace_bytes() <= WORKSPACE_CAP);
            assert!(s.estimate_split < s.estimate_plain.unwrap());
            let l = s.launches(&p, 0x1000, 0x2000, 0x3000, 0x4000).unwrap();
            assert_eq!(l[0].grid, [2, 2, s.splits]);
            assert_eq!(l[1].grid, [2, 32, 1]);
            assert_eq!((l[0].args.len(), l[1].args.len()), (56, 48));
            let big = bf16(8192, 8192, 8192);
            let why =
                choose_few_tiles(arch, &big, crate::plan::kernel_plan::plan(arch, &big).ok().as_ref()).unwrap_err();
            assert!(why.contains("fill half"), "{why}");
            let short = bf16(64, 64, 256);
            assert!(choose(arch, &short, None).unwrap_err().contains("fewer than 2 splits"));
        }
    }

    /// A few-tiles split takes the split count the table puts fastest, not the one that fills
    /// every resident slot: Llama-3.1-8B's down projection at 64 tokens (4096 x 14336 bf16
    /// weights, the Linear layout) on gfx950 is 64 tiles of 64x64, 19 splits to fill the slots,
    /// where each further split only adds a slab (issue 23: 29.1 us by the timing model at 19,
    /// 25.2 at 12).
    #[test]
    fn few_tiles_split_count_is_the_tables_fastest() {
        let arch = Arch::Gfx950;
        let p = GemmProblem::new(64, 4096, 14336)
            .with_layout(Layout::RowMajor)
            .with_transposes(gemm_core::Transpose::No, gemm_core::Transpose::Yes)
            .with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
        let s = choose_few_tiles(arch, &p, None).unwrap();
        let cm = s.problem;
        let tiles = cm.m.div_ceil(s.partial.tile.0) * cm.n.div_ceil(s.partial.tile.1);
        let most = resident_slots(s.partial, arch.caps().compute_units)
            .div_ceil(tiles)
            .min(cm.k / (MIN_TILES_PER_SPLIT * s.partial.tile.2))
            .min((WORKSPACE_CAP / s.wstride as usize) as u32);
        let best = table_estimate(&s, &p).unwrap();
        for want in 2..=most {
            let other = s.with_splits(want);
            assert!(best <= table_estimate(&other, &p).unwrap(), "{} splits beat {}", other.splits, s.splits);
        }
        let fill = s.with_splits(most);
        assert!(s.splits < fill.splits, "{} of {}", s.splits, fill.splits);
        assert!(s.kchunk.is_multiple_of(s.partial.tile.2) && (s.splits - 1) * s.kchunk < cm.k);
    }

    /// The table's split estimate counts the reduction's bytes once: the slabs read and C
    /// written, not the slab writes, which the partial kernel's composed time (its f32 twin's
    /// row, whose C stores are the slab) holds already. 7 slabs of a 6144 x 32 f32 split are
    /// 5.5 MB read, 0.39 MB of bf16 C written: 1.1 us at gfx942's 5.3 TB/s, half the static
    /// estimate's traffic plus the C.
    #[test]
    fn the_table_counts_the_slab_writes_once() {
        let arch = Arch::Gfx942;
        let p = bf16(6144, 32, 4096);
        let (ldw, wstride) = slab(6144, 32).unwrap();
        assert_eq!((ldw, wstride), (6144, 6144 * 32 * 4));
        let hbm = arch.caps().hbm_tbps * 1e12;
        let c = 6144.0 * 32.0 * 2.0;
        let read = reduce_traffic_seconds(arch, &p, 6144, 32, 7, wstride);
        assert!((read - (7.0 * f64::from(wstride) + c) / hbm).abs() < 1e-15, "{read}");
        let both = traffic_seconds(arch, &p, 6144, 32, 7, wstride);
        assert!((both - read - workspace_seconds(arch, 7, wstride) / 2.0).abs() < 1e-15, "{both} {read}");
        // beta != 0 reads C as well.
        let pb = p.with_scalars(1.0, 1.0);
        assert!((reduce_traffic_seconds(arch, &pb, 6144, 32, 7, wstride) - read - c / hbm).abs() < 1e-15);
        // 128 slabs of 128 x 128 (8.4 MB: 1.6 us at 5.3 TB/s) are 8 rounds of 16 loads: the
        // chain of 7 further round trips (2.5 us) binds.
        let (_, ws) = slab(128, 128).unwrap();
        let q = bf16(128, 128, 65536);
        let chain = 7.0 * HBM_LATENCY_S;
        assert!((reduce_traffic_seconds(arch, &q, 128, 128, 128, ws) - chain).abs() < 1e-15);
        // 16 slabs are one round: the bytes alone.
        let bytes = (16.0 * f64::from(ws) + 128.0 * 128.0 * 2.0) / hbm;
        assert!((reduce_traffic_seconds(arch, &q, 128, 128, 16, ws) - bytes).abs() < 1e-15);
    }

    /// The argument `name` of launch `l` (little-endian, 4 or 8 bytes).
    fn arg(l: &Launch, name: &str) -> u64 {
        let a = l.entry.kernarg.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("{name}"));
        let b = &l.args[a.offset as usize..(a.offset + a.size) as usize];
        b.iter().rev().fold(0, |v, &x| v << 8 | u64::from(x))
    }

    /// fp8 decode on a tensor-parallel shard (70B/8 qkv: 1280 x 8192 weights, one row of x, the
    /// Linear layout) splits with an fp8 `splitk_decode` twin on both archs, and its scaled
    /// launches put the scale vectors into the partial kernel's arguments (swapped with the
    /// operands of the row-major problem: x's row vector is the kernel's column vector) and
    /// the per-tensor scales into the reduction's alpha and beta; unit scales leave them be.
    #[test]
    fn fp8_decode_splits_carry_the_scales() {
        for arch in Arch::ALL {
            let fp8 = if arch == Arch::Gfx942 { DType::Fp8E4M3Fnuz } else { DType::Fp8E4M3 };
            let p = GemmProblem::new(1, 1280, 8192)
                .with_layout(Layout::RowMajor)
                .with_transposes(gemm_core::Transpose::No, gemm_core::Transpose::Yes)
                .with_dtypes(fp8, fp8, DType::Bf16)
                .with_scalars(1.5, 0.5);
            let plain = crate::plan::choice::choose(arch, &p).unwrap();
            assert!(plain.entry.is_decode(), "{}", plain.entry.name);
            let s = choose(arch, &p, Some(&plain)).unwrap();
            assert_eq!((s.partial.family, s.partial.a_type, s.partial.kernarg_size), ("splitk_decode", fp8, 112));
            assert!(s.splits >= 2 && s.head.is_none());
            let addr = [0x1000, 0x2000, 0x3000, 0x4000];
            let scales = Fp8Scales { a: 0.5, b: 4.0, d: 0.25 };
            let l = s.launches_scaled(&p, addr, &scales, 0x5000, 0x6000).unwrap();
            assert_eq!((arg(&l[0], "scale_row"), arg(&l[0], "scale_col")), (0x6000, 0x5000));
            let f = |x: u64| f32::from_bits(x as u32);
            assert_eq!((f(arg(&l[1], "alpha")), f(arg(&l[1], "beta"))), (0.25 * (2.0 * 1.5), 0.25 * 0.5));
            let u = s.launches(&p, addr[0], addr[1], addr[2], addr[3]).unwrap();
            assert_eq!((arg(&u[0], "scale_row"), arg(&u[0], "scale_col")), (0, 0));
            assert_eq!((f(arg(&u[1], "alpha")), f(arg(&u[1], "beta"))), (1.5, 0.5));
            assert_eq!(u[0].grid[2], s.splits);
            // A bf16 split takes no scales.
            let bf = p.with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
            let sb = choose(arch, &bf, Some(&crate::plan::choice::choose(arch, &bf).unwrap())).unwrap();
            assert!(sb.launches_scaled(&bf, addr, &scales, 0, 0).unwrap_err().contains("no fp8 scales"));
        }
    }

    /// A decode-rows kernel splits into its own twin (`splitk_decode_rows`: same tile, waves and
    /// schedule, f32 partials): Llama-3.1-8B's down projection at 32 tokens (4096 x 14336 bf16
    /// weights, the Linear layout) on gfx950 is 32 workgroups of 128x32 for 256 resident slots,
    /// so the split fills them, its time composed from the plain kernel's row; and the
    /// dispatcher's plan for the problem (`plan_gemm`, which weighs every decode kernel's split)
    /// is a split whose partial is a decode kernel's twin. fp8 and gfx942 likewise.
    #[test]
    fn decode_rows_kernels_split_into_their_twins() {
        for (arch, ab) in [(Arch::Gfx950, DType::Bf16), (Arch::Gfx942, DType::Bf16), (Arch::Gfx950, DType::Fp8E4M3)] {
            let p = GemmProblem::new(32, 4096, 14336)
                .with_layout(Layout::RowMajor)
                .with_transposes(gemm_core::Transpose::No, gemm_core::Transpose::Yes)
                .with_dtypes(ab, ab, DType::Bf16);
            let rows = gemm_kernels::for_arch(arch)
                .find(|e| {
                    e.schedule.starts_with("decoderows")
                        && e.is_plain()
                        && (e.a_type, e.c_type, e.tile.1) == (ab, DType::Bf16, 32)
                })
                .expect("the 128x32 decode-rows kernel");
            let plain = crate::plan::kernel_plan::plan_for(rows, &p).unwrap();
            let s = choose(arch, &p, Some(&plain)).unwrap();
            assert_eq!(s.partial.family, "splitk_decode_rows", "{arch} {ab}");
            assert_eq!((s.partial.tile, s.partial.schedule, s.partial.a_type), (rows.tile, rows.schedule, ab));
            assert!(s.splits >= 2 && s.head.is_none() && s.kchunk.is_multiple_of(rows.tile.2), "{s:?}");
            assert!(s.estimate_split < s.estimate_plain.unwrap());
            // The partial needs no row of its own: the plain kernel's composes it.
            assert!(crate::plan::cost_table::table().row(s.partial).is_err());
            assert!(partial_seconds(&s, rows).is_some());
            assert_eq!(plain_twin(s.partial).map(|e| (e.tile, e.schedule)), Some((rows.tile, rows.schedule)));
            assert!(table_estimate(&s, &p).is_some());
            let l = s.launches(&p, 0x1000, 0x2000, 0x3000, 0x4000).unwrap();
            assert_eq!(l[0].grid, [32, 1, s.splits]);
            let g = crate::plan::gemm_plan::plan_gemm(arch, arch.caps().compute_units, &p).unwrap().unwrap();
            let sp = g.split.expect("a split plan");
            assert!(sp.partial.family.starts_with("splitk"), "{}", sp.partial.name);
        }
    }

    /// gfx942's ping-pong tile at 8192^3 (1024 tiles on 304 CUs: 3.37 rounds) runs the
    /// first 28 of 32 tile columns plain (896 tiles, three rounds) and splits the last 4
    /// columns' K in two (256 workgroups, one round of half-length ones): the head's
    /// launch covers columns 0..7168, the partial and the reduction start at column 7168 of
    /// B and C, every argument in place. Sizes whose last round is full enough, one round,
    /// and kernels without a twin decline with the reason.
    #[test]
    fn split_tail_balances_the_last_round() {
        let arch = Arch::Gfx942;
        let pp = gemm_kernels::for_arch(arch)
            .find(|e| e.family == "pingpong" && e.c_type == DType::Bf16 && e.trans_a == gemm_core::Transpose::No)
            .expect("the gfx942 ping-pong kernel");
        let big = bf16(8192, 8192, 8192);
        let plain = crate::plan::kernel_plan::plan_for(pp, &big).unwrap();
        let s = choose(arch, &big, Some(&plain)).unwrap();
        assert_eq!((s.col0, s.problem.n, s.splits, s.kchunk), (7168, 1024, 2, 4096));
        assert_eq!(s.partial.family, "splitk_pingpong");
        assert!(s.estimate_split < s.estimate_plain.unwrap());
        assert!(s.workspace_bytes() <= TAIL_WORKSPACE_CAP);
        let (a, b, c, ws) = (0x1_0000_0000u64, 0x2_0000_0000, 0x3_0000_0000, 0x4_0000_0000);
        let l = s.launches(&big, a, b, c, ws).unwrap();
        assert_eq!(l.iter().map(|x| x.entry.name).collect::<Vec<_>>(), [pp.name, s.partial.name, s.reduce.name]);
        assert_eq!((l[0].grid, l[1].grid, l[2].grid), ([32, 28, 1], [32, 4, 2], [128, 256, 1]));
        assert_eq!((arg(&l[0], "b"), arg(&l[0], "c"), arg(&l[0], "n")), (b, c, 7168));
        let col = 7168 * 8192 * 2;
        assert_eq!((arg(&l[1], "a"), arg(&l[1], "b"), arg(&l[1], "n"), arg(&l[1], "kchunk")), (a, b + col, 1024, 4096));
        assert_eq!((arg(&l[2], "c"), arg(&l[2], "n"), arg(&l[2], "splits")), (c + col, 1024, 2));
        // A^T B (the family's other layout): B's columns start at the same place; a
        // row-major problem's column-major form swaps A and B.
        let tn = bf16(8192, 8192, 8192).with_transposes(gemm_core::Transpose::Yes, gemm_core::Transpose::No);
        let pt = gemm_kernels::for_arch(arch)
            .find(|e| e.family == "pingpong" && e.c_type == DType::Bf16 && e.trans_a == gemm_core::Transpose::Yes)
            .unwrap();
        let s = choose_tail(arch, &tn, &crate::plan::kernel_plan::plan_for(pt, &tn).unwrap()).unwrap();
        let l = s.launches(&tn, a, b, c, ws).unwrap();
        assert_eq!((arg(&l[1], "a"), arg(&l[1], "b")), (a, b + col));
        let rm = tn
            .with_layout(gemm_core::Layout::RowMajor)
            .with_transposes(gemm_core::Transpose::No, gemm_core::Transpose::Yes);
        let s = choose_tail(arch, &rm, &crate::plan::kernel_plan::plan_for(pt, &rm).unwrap()).unwrap();
        let l = s.launches(&rm, a, b, c, ws).unwrap();
        assert_eq!((arg(&l[1], "a"), arg(&l[1], "b")), (b, a + col));
        // A partition of the chip (CPX mode: 38 CUs) runs 27 rounds whose last is 36/38
        // full: no tail there.
        let why = choose_on(arch, 38, &big, Some(&plain)).unwrap_err();
        assert!(why.contains("more than half full"), "{why}");
        assert_eq!(choose_on(arch, 304, &big, Some(&plain)).unwrap().col0, 7168);
        // One round, a full last round, no twin.
        let small = bf16(4096, 4096, 4096);
        let why = choose_tail(arch, &small, &crate::plan::kernel_plan::plan_for(pp, &small).unwrap()).unwrap_err();
        assert!(why.contains("one round"), "{why}");
        let full = bf16(8192, 9728, 8192); // 32 x 38 = 1216 tiles = 4 whole rounds
        let why = choose_tail(arch, &full, &crate::plan::kernel_plan::plan_for(pp, &full).unwrap()).unwrap_err();
        assert!(why.contains("more than half full"), "{why}");
        let base = crate::plan::kernel_plan::plan(Arch::Gfx950, &big).unwrap();
        if base.entry.family != "splitk" {
            let why = choose_tail(Arch::Gfx950, &big, &base).unwrap_err();
            assert!(why.contains("no split-K twin"), "{why}");
        }
    }
}
