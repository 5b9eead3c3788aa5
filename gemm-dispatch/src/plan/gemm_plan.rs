//! One GEMM on one device as the launches that compute it: the single way a call becomes work
//! for a GPU backend (HIP or emulated).
//!
//! [`plan_gemm`] makes every decision once, from the problem and the device's architecture and
//! compute-unit count: the kernel the characterisation table ranks first
//! ([`choice::choose`](crate::plan::choice::choose)), then whether split-K or a split tail
//! ([`splitk::choose_on`](crate::plan::splitk::choose_on)) beats it on that many CUs. The
//! [`GemmPlan`] it returns knows its workspace and, given device addresses, its launches in
//! stream order; a backend allocates, copies and launches what it is told, and decides nothing.

use crate::plan::choice;
use crate::plan::kernel_plan::{KernelPlan, Launch};
use crate::plan::splitk::{self, SplitPlan};
use gemm_core::{Arch, GemmProblem};
use gemm_kernels::KernelEntry;

/// The launches of one GEMM on one device.
#[derive(Clone, Copy, Debug)]
pub struct GemmPlan {
    /// The dispatcher's kernel for the problem (with a split, the plain kernel it beat).
    pub kernel: KernelPlan,
    /// Split-K or a split tail, where it predicts faster than `kernel` alone.
    pub split: Option<SplitPlan>,
}

/// The least gain, as a share of the plain kernel's table time, for which a split plan is run
/// instead. A split adds a launch and a workspace, and its table time is the less certain: its
/// partial kernel is composed at K chunks below the K values the table measured (extrapolated)
/// and at more workgroups than any measured grid. On the sampled grid a split the table put 3.6%
/// ahead was 5.7% behind in the timing model (gfx942 16 x 28672 x 4096 bf16 `x W^T`, decode
/// split 4). 5% is the tolerance the dispatcher is held to against the model's best
/// (`gemm plan --grid --best`, issue 28).
pub const SPLIT_MARGIN: f64 = 0.05;

/// The plan for `p` on a device of `arch` with `cus` compute units (a partition of a chip has
/// fewer than [`gemm_core::ArchCaps::compute_units`]). `Ok(None)` for an empty problem (m or n
/// is 0: nothing to launch); `Err` says why no kernel runs it.
pub fn plan_gemm(arch: Arch, cus: u32, p: &GemmProblem) -> Result<Option<GemmPlan>, String> {
    if p.m == 0 || p.n == 0 {
        p.validate().map_err(|e| e.to_string())?;
        return Ok(None);
    }
    let kernel = choice::choose(arch, p)?;
    let split = splitk::choose_on(arch, cus, p, Some(&kernel)).ok();
    let plan = GemmPlan { kernel, split };
    // A split the characterisation table does not compose at least [`SPLIT_MARGIN`] faster than
    // the plain kernel is dropped (the table is measured on the whole chip: a partition keeps the
    // static choice).
    let plain = GemmPlan { kernel, split: None };
    let plan = if plan.split.is_some()
        && cus == arch.caps().compute_units
        && plan.estimate(p) >= plain.estimate(p) * (1.0 - SPLIT_MARGIN)
    {
        plain
    } else {
        plan
    };
    if !kernel.entry.is_decode() {
        return Ok(Some(plan));
    }
    // A decode kernel is ranked as a plain kernel; a tiled kernel split over K may still beat
    // it (weights too wide for the decode kernel's columns), and so may another decode kernel's
    // split-K twin (a decode-rows kernel on few weight rows: `choice::tiled_and_decode`). Every
    // plan by the table.
    let (tiled, decode) = choice::tiled_and_decode(arch, p);
    // A split replaces the decode plan only [`SPLIT_MARGIN`] ahead, as a split replaces a plain
    // kernel: the table composes a split less surely than one launch (gfx942 4096 x 14336 bf16
    // weights at M = 16, issue 23: the 64x64 tile in 9 splits 1% ahead of the decode kernel by
    // the table, 3% behind it by the timing model). The decode-rows kernels count only split
    // (as one launch the table ranked them below `kernel` already), and only on the whole chip,
    // where the table was measured. Not the other decode kernels' splits: the table put gfx942
    // 4096 x 14336 bf16 weights at M = 8 in 14 splits of the 32x16 decode kernel more than 5%
    // ahead of the 16x16 8-wave kernel alone, where the timing model gives 26.6 us against 25.7.
    let (mut best, mut best_t) = (plan, plan.estimate(p));
    let whole_chip = cus == arch.caps().compute_units;
    let others = decode
        .into_iter()
        .filter(|k| whole_chip && k.entry.name != kernel.entry.name && k.entry.schedule.starts_with("decoderows"));
    for (k, split_only) in tiled.into_iter().map(|k| (k, false)).chain(others.map(|k| (k, true))) {
        let alt = GemmPlan { kernel: k, split: splitk::choose_on(arch, cus, p, Some(&k)).ok() };
        if split_only && alt.split.is_none() {
            continue;
        }
        let margin = if alt.split.is_some() { 1.0 - SPLIT_MARGIN } else { 1.0 };
        let t = alt.estimate(p);
        if t < best_t * margin {
            (best, best_t) = (alt, t);
        }
    }
    Ok(Some(best))
}

impl GemmPlan {
    /// The characterisation table's time for the plan, what the dispatcher ranks it by: its
    /// split's table estimate ([`splitk::table_estimate`], a decode split's own), else the
    /// split's static estimate, else the kernel's composed time.
    pub fn estimate(&self, p: &GemmProblem) -> f64 {
        match &self.split {
            Some(sp) => splitk::table_estimate(sp, p).unwrap_or(sp.estimate_split),
            None => crate::plan::cost_table::TableModel::composed(&self.kernel, p).unwrap_or(f64::INFINITY),
        }
    }

    /// Bytes of device workspace the launches need (0 without a split).
    pub fn workspace_bytes(&self) -> usize {
        self.split.as_ref().map_or(0, SplitPlan::workspace_bytes)
    }

    /// The kernels, in launch order.
    pub fn entries(&self) -> Vec<&'static KernelEntry> {
        match &self.split {
            None => vec![self.kernel.entry],
            Some(sp) => sp.head.iter().map(|h| h.entry).chain([sp.partial, sp.reduce]).collect(),
        }
    }

    /// The launches, in the order they must run on one stream, for A, B, C and the workspace
    /// (ignored without a split) at these device addresses.
    pub fn launches(&self, p: &GemmProblem, a: u64, b: u64, c: u64, ws: u64) -> Result<Vec<Launch>, String> {
        match &self.split {
            None => Ok(vec![self.kernel.launch(p, a, b, c)?]),
            Some(sp) => sp.launches(p, a, b, c, ws),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::{DType, Layout};

    fn bf16(m: usize, n: usize, k: usize) -> GemmProblem {
        GemmProblem::new(m, n, k).with_layout(Layout::ColMajor).with_dtypes(DType::Bf16, DType::Bf16, DType::F32)
    }

    #[test]
    fn empty_problems_plan_nothing_and_bad_ones_say_why() {
        for arch in Arch::ALL {
            let cus = arch.caps().compute_units;
            assert!(plan_gemm(arch, cus, &bf16(0, 64, 64)).unwrap().is_none());
            assert!(plan_gemm(arch, cus, &bf16(64, 0, 64)).unwrap().is_none());
            let bad = bf16(64, 64, 64).with_leading_dims(1, 64, 64);
            assert!(plan_gemm(arch, cus, &bad).is_err());
        }
    }

    /// A Linear layer at decode (1 and 8 rows of x against 4096 x 4096 and 1280 x 8192 weights,
    /// bf16) runs a decode kernel (gemm-compiler `lower/decode.rs`), alone or as the partial
    /// kernel of its split, on both archs.
    #[test]
    fn decode_shapes_run_decode_kernels() {
        use gemm_core::Transpose;
        for arch in Arch::ALL {
            let cus = arch.caps().compute_units;
            for (m, n, k) in [(1, 4096, 4096), (8, 4096, 4096), (1, 1280, 8192)] {
                let p = GemmProblem::new(m, n, k)
                    .with_layout(Layout::RowMajor)
                    .with_transposes(Transpose::No, Transpose::Yes)
                    .with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
                let plan = plan_gemm(arch, cus, &p).unwrap().unwrap();
                let e = plan.split.map_or(plan.kernel.entry, |s| s.partial);
                assert!(e.is_decode(), "{arch} {m}x{n}x{k}: {}", e.name);
            }
        }
    }

    /// A few tiles over a long K split; a square problem runs one kernel; the launches follow
    /// the plan's entries and the workspace is the split's.
    #[test]
    fn the_plan_carries_its_launches_and_workspace() {
        for arch in Arch::ALL {
            let cus = arch.caps().compute_units;
            let deep = bf16(128, 128, 65536);
            let plan = plan_gemm(arch, cus, &deep).unwrap().unwrap();
            let sp = plan.split.expect("128x128x65536 splits K");
            assert_eq!(plan.workspace_bytes(), sp.workspace_bytes());
            let launches = plan.launches(&deep, 0x1000, 0x2000_0000, 0x4000_0000, 0x8000_0000).unwrap();
            let names: Vec<_> = launches.iter().map(|l| l.entry.name).collect();
            assert_eq!(names, plan.entries().iter().map(|e| e.name).collect::<Vec<_>>());
            assert!(names.last().unwrap().contains("splitk_reduce"), "{names:?}");

            let square = bf16(1024, 1024, 1024);
            let plan = plan_gemm(arch, cus, &square).unwrap().unwrap();
            assert!(plan.split.is_none());
            assert_eq!(plan.workspace_bytes(), 0);
            let launches = plan.launches(&square, 0x1000, 0x2000, 0x3000, 0).unwrap();
            assert_eq!(launches.len(), 1);
            assert_eq!(launches[0].entry.name, plan.kernel.entry.name);
            assert_eq!(launches[0].grid, plan.kernel.grid);
        }
    }
}
