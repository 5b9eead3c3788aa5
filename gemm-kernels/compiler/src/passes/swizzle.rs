//! LDS swizzle: with rows of `KT * 2` bytes, the 32 rows one MFMA block reads share bank
//! lines, so the plain layout makes lanes of one `ds_read_b128` phase hit the same banks
//! (4-way on gfx942 for 64-byte rows). XORing the 16-byte chunk index with the row's
//! position among the rows of one bank line (`lds::swizzle_for`) spreads one phase over
//! all banks. The pass checks the result with the bank model (`lds.rs`) and declines if
//! the reads would still conflict.

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
    #[error("the per-block row step {step} is not a multiple of the swizzle period {period}")]
    Period { step: u32, period: u32 },
}

/// Applies the pass.
pub fn run(mut k: Kernel) -> Result<Kernel, Reason> {
    let rb = lds::row_bytes(&k.config);
    let line = lds::line_bytes(k.config.arch);
    let Some(sw) = lds::swizzle_for(k.config.arch, rb) else {
        return Err(Reason::RowShape { row_bytes: rb, line });
    };
    if lds::read_conflicts(&k) == 0 {
        return Err(Reason::NotNeeded);
    }
    // The lowering addresses MFMA block b at `+ b*32 rows` by the instruction offset,
    // which is only valid when 32 rows span whole swizzle periods.
    let period = sw.rows_per_line * sw.chunks_per_row;
    if 32 % period != 0 {
        return Err(Reason::Period { step: 32, period });
    }
    let old = k.swizzle;
    k.swizzle = sw;
    let after = lds::read_conflicts(&k);
    if after != 0 {
        k.swizzle = old;
        return Err(Reason::StillConflicting(after));
    }
    k.applied.push("swizzle");
    Ok(k)
}

/// The identity layout, for comparisons.
pub fn identity() -> Swizzle {
    Swizzle::IDENTITY
}
