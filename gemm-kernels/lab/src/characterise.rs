//! Writing the characterisation table the runtime embeds
//! ([`gemm_dispatch::plan::cost_table`]): the timing model run on a few launches of every plain
//! catalogue kernel (`gemm plan --characterise`), the fingerprint of the model it was made with,
//! and the tests that hold the committed table to the model built in (stale rows, a changed
//! model, composed predictions that drift from direct ones). The table's format and its
//! composition per problem are the runtime's; what it is measured with lives here.

use crate::model::{predict_plan, problem_for};
use gemm_core::Arch;
use gemm_dispatch::plan::cost_table::{characterised, code_hash, fnv1a, Row, Table, FNV_OFFSET};
use gemm_dispatch::plan::kernel_plan;
use gemm_emu::timing::{ModelOptions, Params};
use gemm_kernels::KernelEntry;

/// The timing model's options for every characterisation (and for `gemm plan --model timing`,
/// so a direct prediction and a composed one come from the same model):
/// [`crate::timing_cost::TimingModel`]'s defaults.
pub fn options() -> ModelOptions {
    crate::timing_cost::TimingModel::default().opts
}

/// A fingerprint of the timing model as characterised: its parameters for `arch` and the options.
pub fn model_fingerprint(arch: Arch) -> u64 {
    let o = options();
    let text = format!(
        "{:?}|{}|{}|{}|{}",
        Params::for_arch(arch),
        o.prefix_bytes,
        o.max_sampled_wgs,
        o.max_rounds,
        o.at_peak_clock
    );
    fnv1a(text.bytes(), FNV_OFFSET)
}

/// The grids of the characterisation, in workgroups: `S`, `F`, `R1`, `R3`.
fn grids(arch: Arch, occupancy: u32) -> [u64; 4] {
    let p = Params::for_arch(arch);
    let cus = u64::from(p.cus());
    let occ = u64::from(occupancy.max(1));
    [u64::from(p.xcds), cus, cus * occ, 3 * cus * occ]
}

/// `m x n` of whole tiles making about `wgs` workgroups of `e`, as square as the count allows;
/// for a decode kernel one column of tiles (a decode problem's few activation columns against
/// many weight rows: each workgroup streams its own rows, and B is the same for all).
fn shape_for(e: &KernelEntry, wgs: u64) -> (usize, usize) {
    let z = u64::from(e.launch(e.tile.0, e.tile.1).0[2].max(1));
    let t = wgs.div_ceil(z).max(1);
    if e.is_decode() {
        return (t as usize * e.tile.0 as usize, e.tile.1 as usize);
    }
    let mut gx = (t as f64).sqrt() as u64;
    while gx > 1 && !t.is_multiple_of(gx) {
        gx -= 1;
    }
    let gx = gx.max(1);
    let gy = t / gx;
    (gx as usize * e.tile.0 as usize, gy as usize * e.tile.1 as usize)
}

/// Runs the timing model on `e`'s characterisation launches.
pub fn characterise(e: &'static KernelEntry, opts: &ModelOptions) -> Result<Row, String> {
    let kt = e.tile.2.max(1);
    let predict = |m: usize, n: usize, k: u32| -> Result<gemm_emu::timing::Prediction, String> {
        let p = problem_for(e, m, n, k as usize);
        let plan = kernel_plan::plan_for(e, &p)?;
        predict_plan(&plan, &p, opts)
    };
    // The occupancy the model finds (registers, LDS, wave slots) sizes the round grids.
    let (m0, n0) = shape_for(e, 8);
    let decode = e.is_decode();
    let first = predict(m0, n0, 4 * kt)?;
    let occupancy = first.occupancy.workgroups;
    // A decode kernel's K step is short against the K of the layers it runs (4096..28672): at
    // 4 and 12 steps its per-workgroup fixed cost (the waves' reduction and the epilogue) and
    // the streaming rate would be measured on runs of a few KiB per row. It is characterised at
    // the longest K whose `R3` grid (3 rounds of `occupancy` workgroups per CU) keeps A under
    // the 2 GiB a buffer offset reaches, at most 12288, and a quarter of that.
    let k = if decode {
        let rows = 3 * u64::from(Params::for_arch(e.arch).cus()) * u64::from(occupancy.max(1)) * u64::from(e.tile.0);
        let most = ((1u64 << 31) - (1 << 24)) / (rows * e.a_type.size_bytes() as u64);
        let hi = (most.min(12288) as u32 / kt * kt).max(12 * kt);
        [(hi / 4 / kt * kt).max(4 * kt), hi]
    } else {
        [4 * kt, 12 * kt]
    };
    let g = grids(e.arch, occupancy);
    let mut times = [[0f64; 2]; 4];
    for (gi, &wgs) in g.iter().enumerate() {
        let (m, n) = shape_for(e, wgs);
        for (ki, &kk) in k.iter().enumerate() {
            times[gi][ki] = if gi == 0 && ki == 0 && k[0] == 4 * kt {
                first.seconds
            } else if gi == 2 && occupancy <= 1 {
                times[1][ki]
            } else {
                predict(m, n, kk)?.seconds
            };
        }
    }
    Ok(Row {
        kernel: e.name.to_string(),
        arch: e.arch,
        hash: code_hash(e),
        occupancy,
        k,
        s: times[0],
        f: times[1],
        r1: times[2],
        r3: times[3],
    })
}

/// Whether the timing model `table` was characterised with is the one built in, for `arch`.
pub fn model_matches(table: &Table, arch: Arch) -> bool {
    table.fingerprints.get(&arch) == Some(&model_fingerprint(arch))
}

/// `progress(done, total, kernel, result)` of [`characterise_catalogue`].
pub type Progress<'a> = dyn Fn(usize, usize, &KernelEntry, &Result<Row, String>) + Sync + 'a;

/// Characterises every [`characterised`] catalogue kernel whose name contains `only` (all if
/// `None`) on `jobs` threads, calling `progress(done, total, kernel, result)` as each finishes.
/// Rows of `keep` for the other kernels are kept where their code has not changed, so a partial
/// run updates a table. Returns the table and the kernels the model could not predict.
pub fn characterise_catalogue(
    only: Option<&str>,
    jobs: usize,
    keep: &Table,
    progress: &Progress<'_>,
) -> (Table, Vec<(String, String)>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let todo: Vec<&'static KernelEntry> = gemm_kernels::catalogue()
        .iter()
        .filter(|e| characterised(e) && only.is_none_or(|s| e.name.contains(s)))
        .collect();
    let done = AtomicUsize::new(0);
    let opts = options();
    let results = crate::jobs::map_jobs(&todo, jobs, |&e| {
        let r = characterise(e, &opts);
        let d = done.fetch_add(1, Ordering::SeqCst) + 1;
        progress(d, todo.len(), e, &r);
        (e, r)
    });
    let mut t = Table::default();
    for e in gemm_kernels::catalogue().iter().filter(|e| characterised(e)) {
        if todo.iter().any(|x| std::ptr::eq(*x, e)) {
            continue;
        }
        if let Some(r) = model_matches(keep, e.arch).then(|| keep.row(e).ok()).flatten() {
            t.rows.insert(r.kernel.clone(), r.clone());
        }
    }
    let mut failed = Vec::new();
    for (e, r) in results {
        match r {
            Ok(row) => {
                t.rows.insert(row.kernel.clone(), row);
            }
            Err(why) => failed.push((e.name.to_string(), why)),
        }
    }
    failed.sort();
    for a in Arch::ALL {
        t.fingerprints.insert(a, model_fingerprint(a));
    }
    (t, failed)
}

/// How far a composed prediction may be from the timing model run directly on the problem
/// (relative), as `composed_predictions_track_the_timing_model` checks.
pub const TOLERANCE: f64 = 0.25;

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::GemmProblem;
    use gemm_dispatch::plan::cost_table::{table, TableModel, REGENERATE};

    /// The smallest-tile plain bf16 `nn` kernel of `arch` (the cheapest to characterise).
    fn cheapest(arch: Arch) -> &'static KernelEntry {
        gemm_kernels::for_arch(arch)
            .filter(|e| characterised(e) && e.a_type == gemm_core::DType::Bf16 && e.name.contains("_nn_"))
            .min_by_key(|e| (e.tile.0 * e.tile.1 * e.tile.2, e.name))
            .expect("a bf16 kernel")
    }

    /// (a) The committed table is what the timing model built in gives now: the model's
    /// fingerprint per arch, every plain catalogue kernel has a row for its current code, and
    /// re-characterising a kernel per arch reproduces its row exactly.
    #[test]
    fn the_table_is_what_the_timing_model_gives_now() {
        let t = table();
        for arch in Arch::ALL {
            assert!(
                model_matches(t, arch),
                "the table was made with another timing model for {arch}; regenerate: {REGENERATE}"
            );
        }
        let stale: Vec<String> =
            gemm_kernels::catalogue().iter().filter(|e| characterised(e)).filter_map(|e| t.row(e).err()).collect();
        assert!(
            stale.is_empty(),
            "{} stale kernel(s), e.g. {:?}; regenerate: {REGENERATE}",
            stale.len(),
            &stale[..stale.len().min(3)]
        );
        for arch in Arch::ALL {
            let e = cheapest(arch);
            let now = characterise(e, &options()).unwrap();
            assert_eq!(
                t.row(e).unwrap(),
                &now,
                "{}: the table differs from the model; regenerate: {REGENERATE}",
                e.name
            );
        }
    }

    /// (b) The composed prediction is within [`TOLERANCE`] of the timing model run directly on the
    /// problem, for the dispatcher's pick of a square, a tall-skinny, a skinny-K and a small
    /// problem on both archs (small enough that the direct runs take seconds).
    #[test]
    fn composed_predictions_track_the_timing_model() {
        use gemm_core::{DType, Layout};
        let mut worst = 0f64;
        for arch in Arch::ALL {
            for (m, n, k) in [(2048, 2048, 512), (8192, 64, 512), (1024, 1024, 64), (128, 128, 128)] {
                let p = GemmProblem::new(m, n, k).with_layout(Layout::ColMajor).with_dtypes(
                    DType::Bf16,
                    DType::Bf16,
                    DType::F32,
                );
                let plan = gemm_dispatch::plan::choice::choose(arch, &p).unwrap();
                let composed = TableModel::composed(&plan, &p).unwrap();
                let direct = predict_plan(&plan, &p, &options()).unwrap().seconds;
                let err = (composed / direct - 1.0).abs();
                worst = worst.max(err);
                assert!(
                    err <= TOLERANCE,
                    "{arch} {m}x{n}x{k} {}: composed {:.2} us, model {:.2} us",
                    plan.entry.name,
                    composed * 1e6,
                    direct * 1e6
                );
            }
        }
        eprintln!("worst relative error of the composed predictions: {:.1}%", worst * 100.0);
    }

    /// The runtime composes the table's rows with the chip's XCD and CU counts from
    /// `gemm_core::ArchCaps` and bounds predictions with its clocks and bandwidth; they must be
    /// the timing model's (`Params`), whose grid arithmetic the composition follows.
    #[test]
    fn the_runtime_composes_with_the_models_chip() {
        for arch in Arch::ALL {
            let (caps, p) = (arch.caps(), Params::for_arch(arch));
            assert_eq!(caps.xcds, p.xcds, "{arch}");
            assert_eq!(caps.compute_units, p.cus(), "{arch}");
            // The runtime's physical bounds (gemm_dispatch::plan::bounds) use the model's
            // loaded clocks and HBM peak.
            assert_eq!(caps.loaded_clock_mhz, p.loaded_mhz, "{arch}");
            assert_eq!(f64::from(caps.peak_clock_mhz), p.peak_mhz, "{arch}");
            assert_eq!(caps.hbm_tbps, p.hbm_tbps, "{arch}");
        }
    }
}
