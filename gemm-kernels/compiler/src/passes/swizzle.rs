//! LDS swizzle: with rows of `KT * 2` bytes, the rows one MFMA block reads share bank
//! lines, so the plain layout makes lanes of one `ds_read_b128` phase hit the same banks
//! (4-way on gfx942 for 64-byte rows), and the transposed copies' `ds_write_b16`s of two
//! half-waves land on the same banks. The pass scores the XOR swizzles of
//! `lds::swizzle_candidates` with the bank model (`lds.rs`) on every DS access of a K step
//! (fragment reads and staging writes of every wave) and keeps the first with
//! conflict-free reads and the fewest write conflicts; it declines if none reads without
//! conflicts.

use crate::ir::{Kernel, Swizzle};
use crate::lds;

/// Why the pass declined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Reason {
    #[error("rows of {row_bytes} bytes do not tile a {line}-byte bank line")]
    RowShape { row_bytes: u32, line: u32 },
    #[error("the reads already have no bank conflicts")]
    NotNeeded,
    #[error("the swizzled reads would still cost {0} conflict cycles per K step")]
    StillConflicting(u32),
    #[error(
        "the per-block step of {step} bytes is not a multiple of any conflict-free swizzle period ({period} bytes)"
    )]
    Period { step: u32, period: u32 },
}

/// Applies the pass: among [`lds::swizzle_candidates`] whose period divides the MFMA
/// block's rows (the lowering addresses block `b` at `+ b*M` rows by the instruction
/// offset), the first with conflict-free reads and the fewest write conflicts.
pub fn run(mut k: Kernel) -> Result<Kernel, Reason> {
    use crate::ir::Operand;
    if [Operand::A, Operand::B].iter().all(|&op| lds::mn_major(&k.config, op)) {
        // Both tiles M/N-major: they carry their own row XOR (`lds::mn_xor`), and the
        // kernel's swizzle addresses no tile.
        return Ok(k);
    }
    let rb = lds::row_bytes(&k.config);
    let line = lds::line_bytes(k.config.arch);
    let cands = lds::swizzle_candidates(k.config.arch, rb);
    if cands.is_empty() {
        return Err(Reason::RowShape { row_bytes: rb, line });
    }
    if lds::read_conflicts(&k) == 0 {
        return Err(Reason::NotNeeded);
    }
    // The lowering addresses MFMA block `b` at `+ b*M*row_bytes` by the instruction offset.
    let step = k.config.mfma.m * rb;
    let old = k.swizzle;
    let mut best: Option<(u32, Swizzle)> = None;
    let mut least_reads = u32::MAX;
    let mut period_fail = None;
    for sw in cands {
        let period = sw.period_bytes();
        if !step.is_multiple_of(period) {
            period_fail.get_or_insert(period);
            continue;
        }
        k.swizzle = sw;
        let (r, w) = lds::k_step_conflicts(&k);
        least_reads = least_reads.min(r);
        if r == 0 && best.is_none_or(|(bw, _)| w < bw) {
            best = Some((w, sw));
        }
    }
    match best {
        Some((_, sw)) => {
            k.swizzle = sw;
            k.applied.push("swizzle");
            Ok(k)
        }
        None => {
            k.swizzle = old;
            match (least_reads, period_fail) {
                (u32::MAX, Some(period)) => Err(Reason::Period { step, period }),
                (r, _) => Err(Reason::StillConflicting(r)),
            }
        }
    }
}

/// The identity layout, for comparisons.
pub fn identity() -> Swizzle {
    Swizzle::IDENTITY
}
