//! Choosing a catalogue kernel for a problem and packing its arguments: shared by every backend
//! that launches catalogue kernels (the emulator and HIP), so both run exactly the same plan.
//!
//! Catalogue kernels compute in column-major storage (gemm-kernels' crate docs). A row-major
//! problem `C = op(A) op(B)` is the column-major problem `C^T = op(B)^T op(A)^T`: the same bytes
//! with A and B swapped, m and n swapped, and the transposes following their operands.

use gemm_core::{Arch, GemmProblem, Layout, Operand, Transpose};
use gemm_kernels::{ArgKind, KernelEntry};

/// The column-major problem a kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnMajor {
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub lda: u32,
    pub ldb: u32,
    pub ldc: u32,
    pub trans_a: Transpose,
    pub trans_b: Transpose,
    /// Whether the kernel's A is the problem's B (row-major problems).
    pub swap_ab: bool,
}

/// A kernel and how to launch it for one problem.
#[derive(Clone, Copy, Debug)]
pub struct KernelPlan {
    pub entry: &'static KernelEntry,
    pub problem: ColumnMajor,
    /// Grid in workgroups.
    pub grid: [u32; 3],
    pub block: [u32; 3],
}

/// One kernel launch: the entry, grid and block in workgroups/work-items, argument bytes.
#[derive(Clone, Debug)]
pub struct Launch {
    pub entry: &'static KernelEntry,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: Vec<u8>,
}

/// The column-major form of a validated problem, if its sizes fit the kernels' 32-bit arguments.
pub fn column_major(p: &GemmProblem) -> Result<ColumnMajor, String> {
    let u = |v: usize, what: &str| u32::try_from(v).map_err(|_| format!("{what} = {v} exceeds 32 bits"));
    let (m, n, lda, ldb, ta, tb, swap) = match p.layout {
        Layout::ColMajor => (p.m, p.n, p.lda, p.ldb, p.trans_a, p.trans_b, false),
        Layout::RowMajor => (p.n, p.m, p.ldb, p.lda, p.trans_b, p.trans_a, true),
    };
    Ok(ColumnMajor {
        m: u(m, "m")?,
        n: u(n, "n")?,
        k: u(p.k, "k")?,
        lda: u(lda, "lda")?,
        ldb: u(ldb, "ldb")?,
        ldc: u(p.ldc, "ldc")?,
        trans_a: ta,
        trans_b: tb,
        swap_ab: swap,
    })
}

/// Why an entry cannot run a problem, or `None` if it can.
fn unfit(e: &KernelEntry, arch: Arch, p: &GemmProblem, cm: &ColumnMajor) -> Option<String> {
    if e.split_k != gemm_kernels::SplitRole::None {
        return Some(format!("{} is a split-K kernel: it runs in a pair through a workspace (splitk.rs)", e.name));
    }
    if e.grouped {
        return Some(format!("{} runs grouped GEMMs from a problem table (one launch, many problems)", e.name));
    }
    if e.epilogue != "none" {
        return Some(format!("{} fuses the epilogue `{}`; plain GEMMs take plain kernels", e.name, e.epilogue));
    }
    if e.block_scale != gemm_kernels::BlockScaleKind::None {
        return Some(format!("{} takes block-scaled operands (block_scaled.rs)", e.name));
    }
    unfit_shape(e, arch, p, cm)
}

/// [`unfit`] without the kind of kernel: whether `e`'s dtypes, transposes, alignment and
/// spans fit `p` (a grouped kernel checks each of its groups with this).
fn unfit_shape(e: &KernelEntry, arch: Arch, p: &GemmProblem, cm: &ColumnMajor) -> Option<String> {
    let (a_t, b_t) = if cm.swap_ab { (p.b_type, p.a_type) } else { (p.a_type, p.b_type) };
    if e.arch != arch || (e.a_type, e.b_type, e.c_type) != (a_t, b_t, p.c_type) {
        return Some(format!("no kernel for {a_t} x {b_t} -> {} on {arch}", p.c_type));
    }
    // xf32 kernels round every f32 input to 10 mantissa bits: only where the caller allows
    // it (cuBLAS's TF32 switch).
    if e.xf32() && !p.allow_xf32 {
        return Some(format!("{} multiplies at xf32 precision, which the problem does not allow", e.name));
    }
    if (e.trans_a, e.trans_b) != (cm.trans_a, cm.trans_b) {
        return Some(format!("no kernel for transposes {:?}/{:?}", cm.trans_a, cm.trans_b));
    }
    let align = e.align_elems.max(1);
    if !cm.lda.is_multiple_of(align) || !cm.ldb.is_multiple_of(align) {
        return Some(format!("leading dimensions {}/{} are not multiples of {align}", cm.lda, cm.ldb));
    }
    // A decode kernel (gemm-compiler `lower/decode.rs`) reads each weight row once because one
    // workgroup holds all of the activations' columns; with more columns than its block, every
    // block would stream A again (its characterisation covers one block of columns).
    if e.is_decode() && cm.n > e.tile.1 {
        return Some(format!(
            "a decode kernel takes at most {} activation columns, the problem has {}",
            e.tile.1, cm.n
        ));
    }
    // Each matrix's byte span must stay below 2^31 (32-bit buffer offsets).
    let spans = p.validate().ok()?;
    for (operand, elems) in [(Operand::A, spans.a), (Operand::B, spans.b), (Operand::C, spans.c)] {
        if elems.saturating_mul(p.dtype(operand).size_bytes()) >= 1 << 31 {
            return Some(format!("{operand} spans 2 GiB or more"));
        }
    }
    None
}

/// A static cost of running `cm` with `e` (lower is better): the rounds of workgroups the
/// GPU's CUs run (`ceil(workgroups / CUs)`, one workgroup per CU per round), times the
/// tile's area (the work of one round, edge padding included), divided by the kernel's
/// static MFMA issue share (bigger tiles and non-transposing copies spend more of their
/// issue cycles on MFMAs) and by its MFMA's multiply-adds per cycle (so an xf32 kernel, 4x
/// the f32 rate, wins over an f32 one where it is allowed). Until the timing model ranks
/// kernels, this picks small tiles for small or skinny problems and big tiles only where
/// they still fill the GPU.
fn cost(e: &KernelEntry, arch: Arch, cm: &ColumnMajor) -> u64 {
    let wgs = u64::from(cm.m.div_ceil(e.tile.0)) * u64::from(cm.n.div_ceil(e.tile.1));
    let rounds = wgs.div_ceil(u64::from(arch.caps().compute_units));
    rounds * u64::from(e.tile.0 * e.tile.1) * 1_000_000
        / u64::from(e.mfma_issue_share_permille.max(1))
        / macs_per_cycle(e, arch).max(1)
}

/// Multiply-adds per cycle of the entry's MFMA: `M*N*K / cycles`, the cycles from gemm-core's
/// arch table (ARCH.md "MFMA cost"); the xf32 shapes, absent there, from TIMING.md's
/// throughput table (`32x32x4_xf32` 32 cycles, `16x16x8_xf32` 16).
fn macs_per_cycle(e: &KernelEntry, arch: Arch) -> u64 {
    let (m, n, k) = e.mfma;
    let cycles = if e.xf32() {
        if m == 32 {
            32
        } else {
            16
        }
    } else {
        arch.caps().mfma.iter().find(|s| (s.m, s.n, s.k) == (m, n, k) && s.input == e.a_type).map_or(32, |s| s.cycles)
    };
    u64::from(m * n * k / cycles)
}

/// The best catalogue kernel for `p` on `arch`: among the kernels that fit, the one of least
/// [`cost`], then the larger tile, then the first in catalogue order. `Err` says why none fits.
pub fn plan(arch: Arch, p: &GemmProblem) -> Result<KernelPlan, String> {
    p.validate().map_err(|e| e.to_string())?;
    if p.m == 0 || p.n == 0 {
        return Err("empty problems launch nothing".into());
    }
    let cm = column_major(p)?;
    let mut why = format!("the catalogue has no kernel for {arch}");
    let mut best: Option<(&'static KernelEntry, u64)> = None;
    for e in gemm_kernels::for_arch(arch) {
        if let Some(reason) = unfit(e, arch, p, &cm) {
            why = reason;
            continue;
        }
        let c = cost(e, arch, &cm);
        let better = match best {
            None => true,
            Some((b, bc)) => c < bc || (c == bc && e.tile.0 * e.tile.1 > b.tile.0 * b.tile.1),
        };
        if better {
            best = Some((e, c));
        }
    }
    let (entry, _) = best.ok_or(why)?;
    let (grid, block) = entry.launch(cm.m, cm.n);
    Ok(KernelPlan { entry, problem: cm, grid, block })
}

/// The plan for running `p` with one given catalogue kernel (to verify every kernel, not only
/// the ones [`plan`] would choose). `Err` says why the kernel cannot run it.
pub fn plan_for(entry: &'static KernelEntry, p: &GemmProblem) -> Result<KernelPlan, String> {
    p.validate().map_err(|e| e.to_string())?;
    if p.m == 0 || p.n == 0 {
        return Err("empty problems launch nothing".into());
    }
    let cm = column_major(p)?;
    if let Some(why) = unfit(entry, entry.arch, p, &cm) {
        return Err(why);
    }
    let (grid, block) = entry.launch(cm.m, cm.n);
    Ok(KernelPlan { entry, problem: cm, grid, block })
}

/// Whether the grouped kernel `entry` can run `p` as one of its groups: the plan for that group
/// (its column-major form and tile grid), or why not.
pub fn plan_group(entry: &'static KernelEntry, p: &GemmProblem) -> Result<KernelPlan, String> {
    p.validate().map_err(|e| e.to_string())?;
    let cm = column_major(p)?;
    if !entry.grouped {
        return Err(format!("{} is not a grouped kernel", entry.name));
    }
    if let Some(why) = unfit_shape(entry, entry.arch, p, &cm) {
        return Err(why);
    }
    let (grid, block) = entry.launch(cm.m, cm.n);
    Ok(KernelPlan { entry, problem: cm, grid, block })
}

/// Whether the fused-epilogue kernel `entry` can run `p` (its epilogue is the caller's to
/// match, `crate::ops::epilogue`): the plan, or why not.
pub fn plan_fused(entry: &'static KernelEntry, p: &GemmProblem) -> Result<KernelPlan, String> {
    p.validate().map_err(|e| e.to_string())?;
    if p.m == 0 || p.n == 0 {
        return Err("empty problems launch nothing".into());
    }
    let cm = column_major(p)?;
    if entry.epilogue == "none" || entry.grouped {
        return Err(format!("{} is not a fused-epilogue kernel", entry.name));
    }
    if let Some(why) = unfit_shape(entry, entry.arch, p, &cm) {
        return Err(why);
    }
    let (grid, block) = entry.launch(cm.m, cm.n);
    Ok(KernelPlan { entry, problem: cm, grid, block })
}

impl KernelPlan {
    /// The launch of this plan for `p` with A, B and C at these device addresses.
    pub fn launch(&self, p: &GemmProblem, a: u64, b: u64, c: u64) -> Result<Launch, String> {
        Ok(Launch { entry: self.entry, grid: self.grid, block: self.block, args: self.kernargs(p, a, b, c)? })
    }

    /// The kernel-argument bytes, laid out as the entry's manifest says, for the problem's A, B
    /// and C at these device addresses.
    pub fn kernargs(&self, p: &GemmProblem, a: u64, b: u64, c: u64) -> Result<Vec<u8>, String> {
        let (ka, kb) = if self.problem.swap_ab { (b, a) } else { (a, b) };
        let cm = &self.problem;
        let v = ArgValues {
            a: ka,
            b: kb,
            c,
            m: cm.m,
            n: cm.n,
            k: cm.k,
            lda: cm.lda,
            ldb: cm.ldb,
            ldc: cm.ldc,
            alpha: p.alpha,
            beta: p.beta,
        };
        pack_args(self.entry, &v, None)
    }
}

/// The problem's values of the kernel arguments every layout shares (gemm-compiler
/// `kernel_args.rs`, offsets 0..56), in the kernel's column-major terms.
#[derive(Clone, Copy, Debug)]
pub struct ArgValues {
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub lda: u32,
    pub ldb: u32,
    pub ldc: u32,
    pub alpha: f32,
    pub beta: f32,
}

/// The block-scaled kernels' extra arguments (`kernel_args.rs`, "Block-scaled kernels").
#[derive(Clone, Copy, Debug)]
pub struct BlockArgs {
    pub scale_a: u64,
    pub scale_b: u64,
    pub ldsa: u32,
    pub ldsb: u32,
    pub gsa: u32,
    pub gsb: u32,
}

/// Packs `entry`'s kernel arguments as its manifest lays them out: `v`, the block scales from
/// `block` (an entry that takes them and gets `None` is an error), and the neutral values of
/// what a plain call does not set: no bias, no clamp, unit fp8 scales, no scale vectors (the
/// fused and scaled paths overwrite those slots, `crate::plan::fused`).
pub fn pack_args(entry: &KernelEntry, v: &ArgValues, block: Option<BlockArgs>) -> Result<Vec<u8>, String> {
    let mut out = vec![0u8; entry.kernarg_size as usize];
    for arg in entry.kernarg {
        let u = |x: u32| x.to_le_bytes().to_vec();
        let blk = |f: fn(&BlockArgs) -> Vec<u8>| {
            block.as_ref().map(f).ok_or_else(|| format!("{} takes block scales; none were given", entry.name))
        };
        let bytes: Vec<u8> = match (arg.name, arg.kind) {
            ("a", ArgKind::Pointer) => v.a.to_le_bytes().to_vec(),
            ("b", ArgKind::Pointer) => v.b.to_le_bytes().to_vec(),
            ("c", ArgKind::Pointer) => v.c.to_le_bytes().to_vec(),
            ("m", ArgKind::U32) => u(v.m),
            ("n", ArgKind::U32) => u(v.n),
            ("k", ArgKind::U32) => u(v.k),
            ("lda", ArgKind::U32) => u(v.lda),
            ("ldb", ArgKind::U32) => u(v.ldb),
            ("ldc", ArgKind::U32) => u(v.ldc),
            ("alpha", ArgKind::F32) => v.alpha.to_le_bytes().to_vec(),
            ("beta", ArgKind::F32) => v.beta.to_le_bytes().to_vec(),
            // Fused-epilogue arguments: plain kernels never read them.
            ("bias", ArgKind::Pointer) => 0u64.to_le_bytes().to_vec(),
            ("clamp_lo", ArgKind::F32) => f32::NEG_INFINITY.to_le_bytes().to_vec(),
            ("clamp_hi", ArgKind::F32) => f32::INFINITY.to_le_bytes().to_vec(),
            // fp8 kernels' per-tensor scales: a plain GEMM has none (`GemmProblem` carries
            // no scales), so unit scales compute `alpha * op(A) op(B) + beta * C`.
            ("scale_a" | "scale_b" | "scale_d", ArgKind::F32) => 1.0f32.to_le_bytes().to_vec(),
            // ... and no per-row / per-column scale vectors (`crate::ops::scales` sets them).
            ("scale_row" | "scale_col", ArgKind::Pointer) => 0u64.to_le_bytes().to_vec(),
            ("bscale_a", ArgKind::Pointer) => blk(|b| b.scale_a.to_le_bytes().to_vec())?,
            ("bscale_b", ArgKind::Pointer) => blk(|b| b.scale_b.to_le_bytes().to_vec())?,
            ("ldsa", ArgKind::U32) => blk(|b| b.ldsa.to_le_bytes().to_vec())?,
            ("ldsb", ArgKind::U32) => blk(|b| b.ldsb.to_le_bytes().to_vec())?,
            ("gsa", ArgKind::U32) => blk(|b| b.gsa.to_le_bytes().to_vec())?,
            ("gsb", ArgKind::U32) => blk(|b| b.gsb.to_le_bytes().to_vec())?,
            (name, kind) => return Err(format!("kernel {} has an unknown argument {name} ({kind:?})", entry.name)),
        };
        let at = arg.offset as usize;
        let slot = out
            .get_mut(at..at + bytes.len())
            .filter(|_| bytes.len() == arg.size as usize)
            .ok_or_else(|| format!("argument {} of {} does not fit its slot", arg.name, entry.name))?;
        slot.copy_from_slice(&bytes);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::DType;

    #[test]
    fn row_major_problems_swap_operands() {
        let p = GemmProblem::new(3, 5, 7).with_transposes(Transpose::Yes, Transpose::No);
        let cm = column_major(&p).unwrap();
        assert_eq!((cm.m, cm.n, cm.k), (5, 3, 7));
        assert_eq!((cm.lda, cm.ldb, cm.ldc), (p.ldb as u32, p.lda as u32, p.ldc as u32));
        assert_eq!((cm.trans_a, cm.trans_b, cm.swap_ab), (Transpose::No, Transpose::Yes, true));
        let q = p.with_layout(Layout::ColMajor);
        assert!(!column_major(&q).unwrap().swap_ab);
    }

    #[test]
    fn every_kernel_is_chosen_for_its_own_configuration_and_packs_its_arguments() {
        for e in gemm_kernels::catalogue().iter().filter(|e| e.is_plain()) {
            let ld = |x: usize| x.next_multiple_of(e.align_elems.max(1) as usize);
            let p = GemmProblem::new(100, 70, 40)
                .with_layout(Layout::ColMajor)
                .with_transposes(e.trans_a, e.trans_b)
                .with_dtypes(e.a_type, e.b_type, e.c_type)
                .with_xf32(e.xf32());
            let p = p.with_leading_dims(ld(p.lda), ld(p.ldb), p.ldc);
            let plan = plan(e.arch, &p).unwrap_or_else(|why| panic!("{}: {why}", e.name));
            assert_eq!((plan.entry.a_type, plan.entry.trans_a, plan.entry.trans_b), (e.a_type, e.trans_a, e.trans_b));
            assert_eq!(plan.entry.xf32(), e.xf32(), "{}", e.name);
            let args = plan.kernargs(&p, 0x1000, 0x2000, 0x3000).unwrap();
            assert_eq!(args.len(), e.kernarg_size as usize);
        }
    }

    /// Big square problems get the big tiles where the catalogue has them, skinny ones a
    /// tile that fills more CUs, and every choice fits the problem's transposes.
    #[test]
    fn tile_choice_follows_the_problem_shape() {
        let bf16 = |m, n, k, ta, tb| {
            GemmProblem::new(m, n, k).with_layout(Layout::ColMajor).with_transposes(ta, tb).with_dtypes(
                DType::Bf16,
                DType::Bf16,
                DType::F32,
            )
        };
        // gfx950's biggest resident bf16 tile is the 4-wave 256x256 interleave (its 8-wave
        // 256x256 tiles need more registers than two waves per SIMD have, `fit::resident`).
        let big = plan(Arch::Gfx950, &bf16(8192, 8192, 8192, Transpose::No, Transpose::No)).unwrap();
        assert_eq!(big.entry.tile.0 * big.entry.tile.1, 256 * 256, "{}", big.entry.name);
        // 4096x4864: 16x19 = 304 tiles of 256, one per MI300X CU (ARCH.md's tuned hipBLASLt shape).
        let big942 = plan(Arch::Gfx942, &bf16(4096, 4864, 8192, Transpose::Yes, Transpose::No)).unwrap();
        assert_eq!(big942.entry.tile.0, 256, "{}", big942.entry.name);
        let skinny = plan(Arch::Gfx950, &bf16(64, 4096, 4096, Transpose::No, Transpose::No)).unwrap();
        assert_eq!(skinny.entry.tile.0, 64, "{}", skinny.entry.name);
        for e in [big.entry, big942.entry, skinny.entry] {
            assert_eq!(e.lds_write_conflicts_per_k_step, 0);
        }
    }

    /// f32 problems run the f32 family; the xf32 kernels (gfx942 only) only when allowed.
    #[test]
    fn f32_problems_take_xf32_kernels_only_when_allowed() {
        let p = GemmProblem::new(4096, 4096, 4096).with_layout(Layout::ColMajor);
        for arch in Arch::ALL {
            let exact = plan(arch, &p).unwrap();
            assert_eq!(exact.entry.a_type, DType::F32);
            assert!(!exact.entry.xf32(), "{}", exact.entry.name);
            let fast = plan(arch, &p.with_xf32(true)).unwrap();
            // gfx950 has no xf32 MFMA: the permission changes nothing there.
            assert_eq!(fast.entry.xf32(), arch == Arch::Gfx942, "{}", fast.entry.name);
        }
        assert!(gemm_kernels::catalogue().iter().all(|e| !e.xf32() || e.arch == Arch::Gfx942));
    }

    #[test]
    fn unsupported_problems_say_why() {
        let fp8 = GemmProblem::new(8, 8, 8).with_dtypes(DType::Fp8E4M3Fnuz, DType::Fp8E4M3Fnuz, DType::F32);
        if !gemm_kernels::catalogue().iter().any(|e| e.a_type == DType::Fp8E4M3Fnuz) {
            assert!(plan(Arch::Gfx942, &fp8).unwrap_err().contains("fp8"));
        }
        assert_eq!(plan(Arch::Gfx942, &GemmProblem::new(0, 8, 8)).unwrap_err(), "empty problems launch nothing");
    }
}
