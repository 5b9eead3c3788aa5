//! The transpose pre-pass: one 1-byte operand copied transposed into the device workspace (the
//! catalogue's `transpose` kernel, gemm-compiler `lower/transpose.rs`), so the GEMM after it
//! reads that operand K-contiguous.
//!
//! Why (issue 24): gfx942 has no transposing LDS read, so a kernel reads an fp8 operand that
//! is contiguous along M/N by transposing it in registers and writing it to LDS in 2-byte
//! pieces. With one such operand (NN, TT) the 8-wave ping-pong's slack absorbs those writes;
//! with two (the column-major `nt` kernel) it does not: fp8 e4m3 -> bf16 at 4096^3 the table
//! has 138.2 us for `nt` against 115.9-116.7 for the other three layouts, at 8192^3 1031
//! against 886. Transposing one operand first turns the problem into NN or TT.
//! [`GemmPlan`](crate::plan::gemm_plan::GemmPlan) weighs the pre-pass plus the best kernel of
//! the new layout against the direct kernel by the characterisation table
//! (`gemm_plan::plan_gemm`).
//!
//! The pre-pass's time ([`seconds`]) is a memory-bound copy's: its bytes (read once, written
//! once) at the peak HBM bandwidth, the floor `bounds.rs` holds every GEMM to, plus the timing
//! model's prediction of one block (the launch, the argument loads, one load and store round
//! trip). Not a table row: the kernel has no K loop and no tile grid for the table's grids to
//! measure. The model itself predicts the copy faster where it fits the Infinity Cache (its
//! operands warm there, `gemm_emu::timing` `CacheState`): gfx942 4096^2 bytes 4.41 us against
//! this cost's 7.42, 8192^2 24.63 against 26.41; gfx950 3.21 against 5.21 and 16.40 against
//! 17.80 (`cargo run --release -p gemm-lab --example transpose_probe`). The dispatcher takes the
//! cold bound: a call's first touch of an operand comes from HBM, and the margin a pre-pass
//! must clear ([`PREPASS_MARGIN`](crate::plan::gemm_plan::PREPASS_MARGIN)) should not rest on a
//! warm cache.

use crate::plan::kernel_plan::Launch;
use gemm_core::{Arch, GemmProblem, Layout, Operand, Transpose};
use gemm_kernels::{ArgKind, KernelEntry, SplitRole};

/// The pre-pass of one GEMM: which operand, its stored matrix and the workspace copy's layout,
/// and the problem the GEMM runs afterwards.
#[derive(Clone, Copy, Debug)]
pub struct TransposePlan {
    pub entry: &'static KernelEntry,
    /// The caller's operand copied transposed (A or B).
    pub operand: Operand,
    /// The operand as stored, a column-major matrix of bytes: rows (its contiguous
    /// dimension), columns and leading dimension.
    pub rows: u32,
    pub cols: u32,
    pub ldx: u32,
    /// The copy's leading dimension in bytes: `cols` rounded up to 16 (the kernels' vector
    /// loads).
    pub ldy: u32,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// The problem the GEMM runs after the pre-pass: the operand's transpose flipped and its
    /// leading dimension `ldy` (the same `op(A) op(B)`, read from the copy).
    pub problem: GemmProblem,
}

/// The largest copy a pre-pass makes (bytes): a 16384 x 16384 fp8 operand. The copy doubles
/// that operand's device memory for the call (the HIP backend sizes a job's buffer with its
/// workspace and gives a job over its budget to another device), so a bigger operand keeps the
/// direct kernel.
pub const WORKSPACE_CAP: usize = 256 << 20;

/// The timing model's prediction of one 128 x 128-byte block of the transpose kernel per arch
/// (`transpose_probe` at 128^2: gfx942 1.093 us, gfx950 1.022 us): the pre-pass's fixed part.
fn fixed_seconds(arch: Arch) -> f64 {
    match arch {
        Arch::Gfx942 => 1.093e-6,
        Arch::Gfx950 => 1.022e-6,
    }
}

/// The pre-pass's predicted seconds for a `rows x cols` matrix of bytes on `arch`: its fixed part
/// and its bytes, read and written once, at the peak HBM bandwidth (module docs).
pub fn seconds(arch: Arch, rows: u32, cols: u32) -> f64 {
    let bytes = 2.0 * f64::from(rows) * f64::from(cols);
    fixed_seconds(arch) + bytes / (arch.caps().hbm_tbps * 1e12)
}

/// The catalogue's transpose kernel of `arch` for elements of `bytes` bytes.
pub fn kernel(arch: Arch, bytes: usize) -> Option<&'static KernelEntry> {
    gemm_kernels::for_arch(arch).find(|e| e.split_k == SplitRole::Transpose && e.a_type.size_bytes() == bytes)
}

/// The pre-pass that copies `operand` of `p` transposed on `arch`, or why there is none: the
/// operand must be of 1-byte elements with a leading dimension a multiple of 16 (the kernel's
/// vector loads), and the copy at most [`WORKSPACE_CAP`].
pub fn plan(arch: Arch, p: &GemmProblem, operand: Operand) -> Result<TransposePlan, String> {
    p.validate().map_err(|e| e.to_string())?;
    let size = p.dtype(operand).size_bytes();
    let entry = kernel(arch, size).ok_or_else(|| format!("no transpose kernel for {size}-byte elements on {arch}"))?;
    let (trans, ld) = match operand {
        Operand::A => (p.trans_a, p.lda),
        Operand::B => (p.trans_b, p.ldb),
        Operand::C => return Err("C is the output: nothing to transpose".into()),
    };
    // The stored matrix, column-major: A untransposed is m x k in a column-major problem,
    // k x m in a row-major one; B untransposed k x n (n x k row-major); a transpose swaps them.
    let (inner, outer) = match operand {
        Operand::A => (p.m, p.k),
        _ => (p.k, p.n),
    };
    let (rows, cols) = match (p.layout, trans) {
        (Layout::ColMajor, Transpose::No) | (Layout::RowMajor, Transpose::Yes) => (inner, outer),
        (Layout::ColMajor, Transpose::Yes) | (Layout::RowMajor, Transpose::No) => (outer, inner),
    };
    if !ld.is_multiple_of(16) {
        return Err(format!("the transpose reads 16-byte vectors: leading dimension {ld} is not a multiple of 16"));
    }
    let u = |v: usize, what: &str| u32::try_from(v).map_err(|_| format!("{what} = {v} exceeds 32 bits"));
    let (rows, cols, ldx) = (u(rows, "rows")?, u(cols, "columns")?, u(ld, "leading dimension")?);
    let ldy = cols.next_multiple_of(16);
    let span = u64::from(rows.saturating_sub(1)) * u64::from(ldy) + u64::from(cols);
    if span >= 1 << 31 || rows == 0 || cols == 0 {
        return Err(format!("a {cols} x {rows} copy spans {span} bytes: empty, or 2 GiB or more"));
    }
    if span as usize > WORKSPACE_CAP {
        return Err(format!("a {cols} x {rows} copy exceeds the pre-pass's {} MiB", WORKSPACE_CAP >> 20));
    }
    let flip = |t: Transpose| if t.is_yes() { Transpose::No } else { Transpose::Yes };
    let mut problem = *p;
    match operand {
        Operand::A => (problem.trans_a, problem.lda) = (flip(p.trans_a), ldy as usize),
        _ => (problem.trans_b, problem.ldb) = (flip(p.trans_b), ldy as usize),
    }
    problem.validate().map_err(|e| e.to_string())?;
    let (grid, block) = entry.launch(rows, cols);
    Ok(TransposePlan { entry, operand, rows, cols, ldx, ldy, grid, block, problem })
}

impl TransposePlan {
    /// The pre-pass's predicted seconds ([`seconds`]).
    pub fn seconds(&self) -> f64 {
        seconds(self.entry.arch, self.rows, self.cols)
    }

    /// Bytes of workspace the copy takes, rounded up to 256 (what follows it stays aligned).
    pub fn workspace_bytes(&self) -> usize {
        (self.rows as usize * self.ldy as usize).next_multiple_of(256)
    }

    /// The launch that copies the operand at `x` into the workspace at `y`.
    pub fn launch(&self, x: u64, y: u64) -> Result<Launch, String> {
        let e = self.entry;
        let mut args = vec![0u8; e.kernarg_size as usize];
        for arg in e.kernarg {
            let bytes = match (arg.name, arg.kind) {
                ("x", ArgKind::Pointer) => x.to_le_bytes().to_vec(),
                ("y", ArgKind::Pointer) => y.to_le_bytes().to_vec(),
                ("rows", ArgKind::U32) => self.rows.to_le_bytes().to_vec(),
                ("cols", ArgKind::U32) => self.cols.to_le_bytes().to_vec(),
                ("ldx", ArgKind::U32) => self.ldx.to_le_bytes().to_vec(),
                ("ldy", ArgKind::U32) => self.ldy.to_le_bytes().to_vec(),
                (name, kind) => return Err(format!("kernel {} has an unknown argument {name} ({kind:?})", e.name)),
            };
            let at = arg.offset as usize;
            args.get_mut(at..at + bytes.len())
                .filter(|_| bytes.len() == arg.size as usize)
                .ok_or_else(|| format!("argument {} of {} does not fit its slot", arg.name, e.name))?
                .copy_from_slice(&bytes);
        }
        Ok(Launch { entry: e, grid: self.grid, block: self.block, args })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::DType;

    fn fp8(layout: Layout, ta: Transpose, tb: Transpose) -> GemmProblem {
        GemmProblem::new(40, 70, 100).with_layout(layout).with_transposes(ta, tb).with_dtypes(
            DType::Fp8E4M3Fnuz,
            DType::Fp8E4M3Fnuz,
            DType::Bf16,
        )
    }

    /// The copy flips the operand's transpose and keeps `op(A) op(B)`: the stored matrix's
    /// shape follows layout and transpose, and the new leading dimension holds its columns.
    #[test]
    fn the_copy_flips_one_operand() {
        for layout in [Layout::ColMajor, Layout::RowMajor] {
            for (ta, tb) in [(Transpose::No, Transpose::No), (Transpose::Yes, Transpose::Yes)] {
                let p = fp8(layout, ta, tb);
                let p = p.with_leading_dims(p.lda.next_multiple_of(16), p.ldb.next_multiple_of(16), p.ldc);
                for op in [Operand::A, Operand::B] {
                    let t = plan(Arch::Gfx942, &p, op).unwrap();
                    let (inner, outer) = if op == Operand::A { (40, 100) } else { (100, 70) };
                    let swapped = (layout == Layout::RowMajor) != (if op == Operand::A { ta } else { tb }).is_yes();
                    let want = if swapped { (outer, inner) } else { (inner, outer) };
                    assert_eq!((t.rows, t.cols), want);
                    assert_eq!(t.ldy, t.cols.next_multiple_of(16));
                    let q = t.problem;
                    let (before, after) = if op == Operand::A { (ta, q.trans_a) } else { (tb, q.trans_b) };
                    assert_ne!(before, after);
                    assert_eq!(if op == Operand::A { q.lda } else { q.ldb }, t.ldy as usize);
                    assert!(t.workspace_bytes() >= t.rows as usize * t.ldy as usize);
                    let l = t.launch(0x1000, 0x2000).unwrap();
                    assert_eq!(l.args.len(), t.entry.kernarg_size as usize);
                    assert_eq!(l.grid, [t.rows.div_ceil(128), t.cols.div_ceil(128), 1]);
                }
            }
        }
    }

    /// Only 1-byte operands with 16-byte leading dimensions; C never.
    #[test]
    fn bad_operands_say_why() {
        let p = fp8(Layout::ColMajor, Transpose::No, Transpose::Yes).with_leading_dims(40, 72, 40);
        assert!(plan(Arch::Gfx942, &p, Operand::A).unwrap_err().contains("multiple of 16"));
        assert!(plan(Arch::Gfx942, &p, Operand::C).is_err());
        let bf = p.with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
        assert!(plan(Arch::Gfx942, &bf, Operand::B).unwrap_err().contains("2-byte"));
        let huge = GemmProblem::new(32768, 32768, 32768).with_layout(Layout::ColMajor).with_dtypes(
            DType::Fp8E4M3Fnuz,
            DType::Fp8E4M3Fnuz,
            DType::Bf16,
        );
        assert!(plan(Arch::Gfx942, &huge, Operand::A).unwrap_err().contains("exceeds"));
    }
}
