//! Grouped GEMM in one launch: the plan for running many problems with one catalogue kernel of
//! the `grouped` family, which reads a device-side table of problems (gemm-kernels' crate docs,
//! "Grouped kernels"; gemm-compiler `kernel_args.rs`) and lets each workgroup find its group and
//! tile. This is how hipBLASLt runs the grouped GEMMs of mixture-of-experts layers: one launch
//! instead of one per expert, so small groups share the GPU instead of each leaving it idle.
//!
//! [`plan`] decides whether a list of problems can go to one grouped launch and with which
//! kernel (of the grouped kernels that fit every group, the fastest by the characterisation
//! table's rows of their plain twins, [`GroupedPlan::estimate`]); [`GroupedPlan::table`] packs the table for the operands' device addresses. Groups
//! with `m` or `n` = 0 get no table entry (they own no tile; the kernel would skip them too).

use crate::plan::cost_table;
use crate::plan::kernel_plan::{self, KernelPlan};
use gemm_core::{Arch, GemmProblem};
use gemm_kernels::{KernelEntry, GROUP_ENTRY_BYTES, GROUP_TILE_START, MAX_GROUPS};

/// The most workgroups one grouped launch may have: each workgroup finds its tile with 24-bit
/// exact division (gemm-compiler `lower.rs`, `udiv`).
pub const MAX_TILES: u64 = 1 << 24;

/// One group of a grouped launch: the caller's group index, its plan (column-major form, tile
/// grid), its scalars and its operands' device addresses in the caller's A/B/C order.
#[derive(Clone, Copy, Debug)]
pub struct Group {
    pub index: usize,
    pub plan: KernelPlan,
    pub alpha: f32,
    pub beta: f32,
    pub addresses: [u64; 3],
    /// The workgroup id of the group's first tile.
    pub tile_start: u32,
}

/// A grouped launch: the kernel, its non-empty groups in caller order, and its workgroups.
#[derive(Clone, Debug)]
pub struct GroupedPlan {
    pub entry: &'static KernelEntry,
    pub groups: Vec<Group>,
    pub tiles: u32,
}

/// Whether the problems (with their A/B/C device addresses) can run as one grouped launch on
/// `arch`, and the plan if so; `Err` says why not (the caller then launches each group alone).
/// They can when there are at least two non-empty groups, all share dtypes, layout and
/// transposes, a grouped kernel of `arch` fits every non-empty group (leading dimensions,
/// spans) and the A/B addresses meet its alignment, and the counts fit the kernel (at most
/// [`MAX_GROUPS`] groups, fewer than [`MAX_TILES`] workgroups).
pub fn plan(arch: Arch, problems: &[(GemmProblem, [u64; 3])]) -> Result<GroupedPlan, String> {
    ranked(arch, problems).map(|mut plans| plans.swap_remove(0))
}

/// Every grouped kernel's plan that [`plan`] could choose, best first (at least one; `Err` as
/// [`plan`]).
pub fn ranked(arch: Arch, problems: &[(GemmProblem, [u64; 3])]) -> Result<Vec<GroupedPlan>, String> {
    let live: Vec<(usize, &(GemmProblem, [u64; 3]))> =
        problems.iter().enumerate().filter(|(_, (p, _))| p.m > 0 && p.n > 0).collect();
    if live.len() < 2 {
        return Err(format!("{} non-empty group(s): plain launches serve", live.len()));
    }
    if live.len() > MAX_GROUPS {
        return Err(format!("{} groups: a grouped launch takes at most {MAX_GROUPS}", live.len()));
    }
    let first = &live[0].1 .0;
    let class = |p: &GemmProblem| (p.a_type, p.b_type, p.c_type, p.layout, p.trans_a, p.trans_b);
    if let Some((i, _)) = live.iter().find(|(_, (p, _))| class(p) != class(first)) {
        return Err(format!("group {i} differs from group {} in dtypes, layout or transposes", live[0].0));
    }
    let mut why = format!("no grouped {arch} kernel in the catalogue");
    let mut fits: Vec<GroupedPlan> = vec![];
    'kernels: for entry in gemm_kernels::for_arch(arch).filter(|e| e.grouped) {
        let need = 2 * u64::from(entry.align_elems.max(1));
        let mut groups = Vec::with_capacity(live.len());
        let mut tiles = 0u64;
        for &(index, (p, addresses)) in &live {
            let plan = match kernel_plan::plan_group(entry, p) {
                Ok(plan) => plan,
                Err(w) => {
                    // Keep the reason of a kernel of the problems' dtypes and transposes.
                    if !w.starts_with("no kernel for") {
                        why = format!("{}: group {index}: {w}", entry.name);
                    }
                    continue 'kernels;
                }
            };
            if !addresses[0].is_multiple_of(need) || !addresses[1].is_multiple_of(need) {
                why = format!("{}: group {index}: A or B is not {need}-byte aligned", entry.name);
                continue 'kernels;
            }
            let tile_start = tiles as u32;
            tiles += u64::from(plan.grid[0]) * u64::from(plan.grid[1]);
            if tiles >= MAX_TILES {
                why = format!(
                    "{}: {tiles} workgroups or more: a grouped launch takes fewer than {MAX_TILES}",
                    entry.name
                );
                continue 'kernels;
            }
            groups.push(Group { index, plan, alpha: p.alpha, beta: p.beta, addresses: *addresses, tile_start });
        }
        fits.push(GroupedPlan { entry, groups, tiles: tiles as u32 });
    }
    // The fastest by the characterisation table; kernels it cannot estimate after, in catalogue
    // order (a stable sort).
    let key = |g: &GroupedPlan| g.estimate().unwrap_or(f64::INFINITY);
    fits.sort_by(|x, y| key(x).total_cmp(&key(y)));
    if fits.is_empty() {
        return Err(why);
    }
    Ok(fits)
}

/// The plain catalogue kernel a grouped kernel was built from: the same configuration without
/// the problem table (its name without `_grouped`), if the catalogue builds it.
pub fn plain_twin(entry: &KernelEntry) -> Option<&'static KernelEntry> {
    let name = entry.name.replacen("_grouped", "", 1);
    gemm_kernels::for_arch(entry.arch).find(|e| !e.grouped && e.name == name)
}

impl GroupedPlan {
    /// The characterisation table's estimate of this launch (grouped kernels have no rows of
    /// their own: `cost_table::characterised`), from the row of the kernel's [`plain_twin`]: the
    /// launch's workgroups as one column-major problem, the groups' row tiles stacked (`TM`
    /// times the launch's workgroups rows), the widest group's columns up to `TN` and the
    /// longest K. Each workgroup runs the loop of its twin on its own group's operands; what
    /// the stacked problem leaves out is the table lookup and the activations of each group
    /// (read once per group instead of once). `None` without a twin or its row.
    pub fn estimate(&self) -> Option<f64> {
        let twin = plain_twin(self.entry)?;
        let row = cost_table::table().row(twin).ok()?;
        let (tm, tn, kt) = (twin.tile.0.max(1), twin.tile.1.max(1), twin.tile.2.max(1));
        let m = u64::from(self.tiles) * u64::from(tm);
        let m = u32::try_from(m).ok()?;
        let n = self.groups.iter().map(|g| g.plan.problem.n).max()?.min(tn);
        let k = self.groups.iter().map(|g| g.plan.problem.k).max()?;
        let k = if k > 0 && k < kt { f64::from(k) } else { f64::from(k.div_ceil(kt) * kt) };
        Some(cost_table::compose_problem(row, twin, m, n, 1, k))
    }

    /// The problem table: one entry per group, its kernel arguments in the entry's column-major
    /// terms (A and B swapped for row-major problems) and its `tile_start`.
    pub fn table(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.groups.len() * GROUP_ENTRY_BYTES];
        for (g, entry) in self.groups.iter().zip(out.chunks_exact_mut(GROUP_ENTRY_BYTES)) {
            let cm = &g.plan.problem;
            let [a, b, c] = g.addresses;
            let (ka, kb) = if cm.swap_ab { (b, a) } else { (a, b) };
            let words: [(usize, [u8; 4]); 8] = [
                (24, cm.m.to_le_bytes()),
                (28, cm.n.to_le_bytes()),
                (32, cm.k.to_le_bytes()),
                (36, cm.lda.to_le_bytes()),
                (40, cm.ldb.to_le_bytes()),
                (44, cm.ldc.to_le_bytes()),
                (48, g.alpha.to_le_bytes()),
                (52, g.beta.to_le_bytes()),
            ];
            entry[0..8].copy_from_slice(&ka.to_le_bytes());
            entry[8..16].copy_from_slice(&kb.to_le_bytes());
            entry[16..24].copy_from_slice(&c.to_le_bytes());
            for (at, w) in words {
                entry[at..at + 4].copy_from_slice(&w);
            }
            entry[GROUP_TILE_START..GROUP_TILE_START + 4].copy_from_slice(&g.tile_start.to_le_bytes());
        }
        out
    }

    /// The kernel arguments for the table at device address `table`, laid out as the entry's
    /// manifest says.
    pub fn kernargs(&self, table: u64) -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; self.entry.kernarg_size as usize];
        for arg in self.entry.kernarg {
            let bytes: Vec<u8> = match arg.name {
                "table" => table.to_le_bytes().to_vec(),
                "groups" => (self.groups.len() as u32).to_le_bytes().to_vec(),
                "tiles" => self.tiles.to_le_bytes().to_vec(),
                name => return Err(format!("grouped kernel {} has an unknown argument {name}", self.entry.name)),
            };
            let at = arg.offset as usize;
            out.get_mut(at..at + bytes.len())
                .filter(|_| bytes.len() == arg.size as usize)
                .ok_or_else(|| format!("argument {} of {} does not fit its slot", arg.name, self.entry.name))?
                .copy_from_slice(&bytes);
        }
        Ok(out)
    }

    /// Launch geometry: `(grid in workgroups, workgroup size)`, a 1-D grid of every group's tiles.
    pub fn launch(&self) -> ([u32; 3], [u32; 3]) {
        ([self.tiles, 1, 1], [self.entry.workgroup_size, 1, 1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::{DType, Transpose};

    fn bf16(m: usize, n: usize, k: usize) -> GemmProblem {
        GemmProblem::new(m, n, k).with_dtypes(DType::Bf16, DType::Bf16, DType::F32)
    }

    #[test]
    fn mixed_sizes_share_one_launch_and_empty_groups_get_no_entry() {
        let ps = [bf16(130, 64, 32), bf16(0, 64, 32), bf16(8, 8, 8), bf16(300, 8, 16)];
        let items: Vec<(GemmProblem, [u64; 3])> =
            ps.iter().enumerate().map(|(i, p)| (*p, [0x1000 * (i as u64 + 1), 0x10_0000, 0x20_0000])).collect();
        for arch in Arch::ALL {
            let plan = plan(arch, &items).unwrap();
            assert!(plan.entry.grouped);
            assert_eq!(plan.groups.iter().map(|g| g.index).collect::<Vec<_>>(), [0, 2, 3]);
            // Row-major problems: the kernel's m is the problem's n.
            let tiles: Vec<u32> = plan.groups.iter().map(|g| g.plan.grid[0] * g.plan.grid[1]).collect();
            assert_eq!(tiles, [2, 1, 3]);
            assert_eq!(plan.groups.iter().map(|g| g.tile_start).collect::<Vec<_>>(), [0, 2, 3]);
            assert_eq!(plan.tiles, 6);
            let table = plan.table();
            assert_eq!(table.len(), 3 * GROUP_ENTRY_BYTES);
            // Group 0's A is the kernel's B (row-major swap).
            assert_eq!(&table[8..16], &0x1000u64.to_le_bytes());
            assert_eq!(&table[GROUP_ENTRY_BYTES + GROUP_TILE_START..][..4], &2u32.to_le_bytes());
            let args = plan.kernargs(0xabc0).unwrap();
            assert_eq!(args.len(), plan.entry.kernarg_size as usize);
            assert_eq!(plan.launch().0, [6, 1, 1]);
        }
    }

    /// Eight experts of 16 tokens over 28672x4096 weights (row-major `x W^T`): every grouped
    /// kernel that fits is ranked by its plain twin's table row, the decode-rows one first on
    /// both archs (gemm-compiler `catalogue.rs`, `GROUPED_DECODE_ROWS_SHAPE`).
    #[test]
    fn decode_sized_groups_take_the_fastest_grouped_kernel_by_the_table() {
        let p = GemmProblem::new(16, 28672, 4096).with_transposes(Transpose::No, Transpose::Yes).with_dtypes(
            DType::Bf16,
            DType::Bf16,
            DType::Bf16,
        );
        let items: Vec<(GemmProblem, [u64; 3])> = (0..8u64).map(|i| (p, [i << 32, (i << 32) + (1 << 30), 0])).collect();
        for arch in Arch::ALL {
            let ranked = ranked(arch, &items).unwrap();
            assert!(ranked.len() >= 2, "{arch}: {} grouped kernels fit", ranked.len());
            let t: Vec<f64> = ranked.iter().map(|g| g.estimate().unwrap_or(f64::INFINITY)).collect();
            assert!(t.windows(2).all(|w| w[0] <= w[1]), "{arch}: {t:?}");
            assert!(ranked[0].entry.schedule.starts_with("decoderows"), "{arch}: {}", ranked[0].entry.name);
            assert_eq!(plan(arch, &items).unwrap().entry.name, ranked[0].entry.name);
        }
    }

    #[test]
    fn what_one_launch_cannot_take_says_why() {
        let a = [0x1000, 0x2000, 0x3000];
        let one = [(bf16(64, 64, 64), a), (bf16(0, 9, 9), a)];
        assert!(plan(Arch::Gfx942, &one).unwrap_err().contains("1 non-empty"));
        let mixed = [(bf16(64, 64, 64), a), (bf16(64, 64, 64).with_transposes(Transpose::Yes, Transpose::No), a)];
        assert!(plan(Arch::Gfx942, &mixed).unwrap_err().contains("differs"));
        // lda = 33 is not a multiple of the grouped kernels' 8 elements.
        let ragged = [(bf16(64, 64, 33), a), (bf16(64, 64, 64), a)];
        assert!(
            plan(Arch::Gfx950, &ragged).unwrap_err().contains("multiples of 8"),
            "{:?}",
            plan(Arch::Gfx950, &ragged)
        );
        let odd = [(bf16(64, 64, 64), [0x1002, 0x2000, 0x3000]), (bf16(64, 64, 64), a)];
        assert!(plan(Arch::Gfx950, &odd).unwrap_err().contains("aligned"));
        let f32s = [(GemmProblem::new(8, 8, 8), a), (GemmProblem::new(8, 8, 8), a)];
        assert!(plan(Arch::Gfx942, &f32s).is_err());
    }
}
