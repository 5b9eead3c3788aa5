//! Buffer ops: every global access goes through a 128-bit resource descriptor in SGPRs
//! (`{base_lo, base_hi & 0xffff, NUM_RECORDS, 0x00020000}`, ISA.md §2.1) with a 32-bit
//! per-lane VGPR offset (`offen`), so the hardware range check (ISA.md §2.3: a dword is
//! out of range when `inst_offset + voffset >= NUM_RECORDS`; OOB loads return 0, OOB
//! stores write nothing) replaces the masks of edge tiles.
//!
//! How a 2-D tile maps onto the 1-D check: NUM_RECORDS is the byte span of the stored
//! matrix, `((cols-1)*ld + rows) * size` rounded up to a dword. Rows of A past `m` (and
//! columns of B past `n`) need no check at all: they only feed rows/columns of C that the
//! epilogue does not store, and whatever they read lies inside the caller's buffer or
//! reads as 0. What must read as exact zeros are the K positions `l >= k` (their products
//! would otherwise add garbage, NaN included): the pass orders the K tiles so that the one
//! possibly partial tile (the last) is copied first, with each lane's offset for `l >= k`
//! replaced by a value past NUM_RECORDS ("offset past the end"); the loop tiles are then
//! complete and unchecked. When K is the contiguous dimension of the operand a 16-byte
//! vector can straddle `k`, so that tile is copied per element.
//!
//! Direct-to-LDS (`buffer_load ... lds`, ISA.md §2.4) is considered and declined (recorded
//! in the kernel): it writes LDS at `M0 + inst_offset + lane*size`, lane-linear, which
//! cannot produce the K-major, XOR-swizzled tile the MFMA reads need, and on gfx942 it
//! is limited to one dword per lane.

use crate::ir::{Align, KGuard, KTile, Kernel, LoadKind, Operand, TileOp};
use gemm_core::DType;

/// Why the pass declined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Reason {
    #[error("input dtype {0} is not a 16-bit float (fp8 needs its own copy widths)")]
    InputDtype(DType),
    #[error("the {0:?} tile row of {1} bytes is not a multiple of 16 bytes")]
    RowNotVector(Operand, u32),
    #[error("{threads} threads do not divide the {vectors} 8-element vectors of the {operand:?} tile evenly")]
    Uneven { operand: Operand, threads: u32, vectors: u32 },
    #[error("already applied")]
    AlreadyApplied,
}

/// Why direct-to-LDS loads were not used for an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DirectToLdsDeclined {
    #[error("gfx942 direct-to-LDS moves one dword per lane (ISA.md §2.4), and the swizzled K-major tile needs 16-byte rows per lane")]
    WidthGfx942,
    #[error(
        "the operand is contiguous along M/N, its LDS tile is K-major: LDS-DMA writes lane-linear and cannot transpose"
    )]
    Transposing,
    #[error("the XOR swizzle permutes 16-byte chunks within a row; LDS-DMA's lane-linear destination cannot follow it without permuting the global addresses per lane, which this version does not do")]
    Swizzled,
}

/// Applies the pass.
pub fn run(mut k: Kernel) -> Result<Kernel, Reason> {
    if k.buffer_ops {
        return Err(Reason::AlreadyApplied);
    }
    let c = k.config;
    if !matches!(c.ab_type, DType::Bf16 | DType::F16) {
        return Err(Reason::InputDtype(c.ab_type));
    }
    for op in [Operand::A, Operand::B] {
        let row = c.tile.2 * c.ab_bytes();
        if !row.is_multiple_of(16) {
            return Err(Reason::RowNotVector(op, row));
        }
        let vectors = c.tile_rows(op) * c.tile.2 / 8;
        let lanes_ok = if c.k_contiguous(op) {
            c.tile.2 / 8 <= c.threads()
        } else {
            c.tile.2.is_power_of_two() && c.threads().is_multiple_of(c.tile.2)
        };
        if !vectors.is_multiple_of(c.threads()) || !lanes_ok {
            return Err(Reason::Uneven { operand: op, threads: c.threads(), vectors });
        }
    }
    let main = match c.align {
        Align::Vec8 => LoadKind::Vector,
        Align::Elem => LoadKind::Element,
    };
    for region in [&mut k.prologue, &mut k.body] {
        for op in region.iter_mut() {
            if let TileOp::GlobalToLds(cp) | TileOp::GlobalLoad(cp) = op {
                cp.kind = main;
                if cp.which == KTile::Last {
                    cp.guard = KGuard::OffsetPastEnd;
                    if c.k_contiguous(cp.operand) {
                        cp.kind = LoadKind::Element;
                    }
                }
            }
        }
    }
    k.buffer_ops = true;
    k.direct_to_lds = [Operand::A, Operand::B].map(|op| direct_to_lds_reason(&k, op)).to_vec();
    k.applied.push("buffer_ops");
    Ok(k)
}

/// Why direct-to-LDS is not used for `op` (ISA.md §2.4 widths: dword on gfx942,
/// dwordx4 on gfx950).
pub fn direct_to_lds_reason(k: &Kernel, op: Operand) -> DirectToLdsDeclined {
    if k.config.arch == crate::ir::Arch::Gfx942 {
        DirectToLdsDeclined::WidthGfx942
    } else if !k.config.k_contiguous(op) {
        DirectToLdsDeclined::Transposing
    } else {
        DirectToLdsDeclined::Swizzled
    }
}
