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
//! Direct-to-LDS (`buffer_load_dwordx4 ... lds` on gfx950, `buffer_load_dword ... lds` on
//! gfx942, ISA.md §2.4) serves the main loop's copies of K-contiguous operands: the DMA
//! writes LDS lane-linearly (`M0 + lane*size`), so each lane fetches the global element
//! that belongs at its lane-linear slot of the swizzled tile: slot `P` holds logical tile
//! byte `swizzle.apply(P)` (the swizzle is its own inverse, `ir::Swizzle`), whose row and
//! K offset give the global address; the offsets are computed once and advance by one K
//! tile per iteration. The pass records per operand the path and, where the DMA cannot
//! serve, why ([`CopyPath`]): an M/N-contiguous operand must be transposed on the way
//! into the K-major tile (register staging), element-aligned leading dimensions cannot
//! be read in whole dwords, and the tile must split into whole DMA instructions per wave.
//! The last (possibly partial) K tile stays register-staged either way (copied once, with
//! per-element K guards).

use crate::ir::{Align, DmaPolicy, KGuard, KTile, Kernel, LoadKind, Operand, TileOp};
use gemm_core::DType;

/// Why the pass declined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Reason {
    #[error("input dtype {0} has no copy lowering here")]
    InputDtype(DType),
    #[error("the {0:?} tile row of {1} bytes is not a multiple of 16 bytes")]
    RowNotVector(Operand, u32),
    #[error("{threads} threads do not divide the {vectors} 16-byte vectors of the {operand:?} tile evenly")]
    Uneven { operand: Operand, threads: u32, vectors: u32 },
    #[error("already applied")]
    AlreadyApplied,
}

/// Why direct-to-LDS loads were not used for an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DirectToLdsDeclined {
    #[error(
        "the operand is contiguous along M/N and its LDS tile is K-major: LDS-DMA writes lane-linear and cannot transpose"
    )]
    Transposing,
    #[error("leading dimensions are only element-aligned; LDS-DMA reads whole dwords (ISA.md §2.2)")]
    Unaligned,
    #[error("the {tile_bytes}-byte tile does not split into whole {per_inst}-byte DMA instructions per wave")]
    Geometry { tile_bytes: u32, per_inst: u32 },
    #[error("disabled by the configuration")]
    Disabled,
    #[error("gfx942 LDS-DMA moves one dword per lane: 16 bytes take 4 DMAs and 4 M0 writes where register staging issues one buffer_load_dwordx4 and one ds_write_b128")]
    NarrowGfx942,
}

/// How the main loop copies one operand into LDS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyPath {
    /// `buffer_load_dword[x4] ... lds` with the global side permuted to the swizzle.
    DirectToLds,
    /// Global loads into VGPRs, then `ds_write`s; with the reason the DMA could not serve.
    RegisterStaged(DirectToLdsDeclined),
}

impl std::fmt::Display for CopyPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CopyPath::DirectToLds => {
                write!(f, "direct-to-LDS: K-contiguous, aligned; global side permuted to the swizzle")
            }
            CopyPath::RegisterStaged(why) => write!(f, "register-staged: {why}"),
        }
    }
}

/// Bytes one LDS-DMA lane moves (ISA.md §2.4: a dword on gfx942, 16 bytes on gfx950).
pub fn dma_bytes(arch: crate::ir::Arch) -> u32 {
    match arch {
        crate::ir::Arch::Gfx942 => 4,
        crate::ir::Arch::Gfx950 => 16,
    }
}

/// Applies the pass.
pub fn run(mut k: Kernel) -> Result<Kernel, Reason> {
    if k.buffer_ops {
        return Err(Reason::AlreadyApplied);
    }
    let c = k.config;
    // fp8: 16-byte vectors, byte-wide element loads for the K tail of K-contiguous
    // operands; M/N-contiguous ones are transposed by groups of vectors (lds::CopyGeom).
    if !matches!(c.ab_type, DType::Bf16 | DType::F16 | DType::F32) && !c.ab_type.is_fp8() {
        return Err(Reason::InputDtype(c.ab_type));
    }
    for op in [Operand::A, Operand::B] {
        let row = c.tile.2 * c.ab_bytes();
        if !row.is_multiple_of(16) {
            return Err(Reason::RowNotVector(op, row));
        }
        let vectors = c.tile_rows(op) * c.tile.2 / c.vec_elems();
        let g = crate::lds::copy_geom(&c, op);
        let lanes_ok = if g.direct {
            g.lc / g.v <= c.threads()
        } else {
            c.tile.2.is_power_of_two()
                && g.per_thread.is_multiple_of(g.kgroup)
                && c.threads().is_multiple_of(g.lanes_k())
                && g.lanes_k() <= c.threads()
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
    k.copy_paths = [Operand::A, Operand::B].map(|op| copy_path(&k, op)).to_vec();
    for (x, op) in [Operand::A, Operand::B].into_iter().enumerate() {
        if k.copy_paths[x] == CopyPath::DirectToLds {
            for o in k.body.iter_mut() {
                if let TileOp::GlobalToLds(cp) | TileOp::GlobalLoad(cp) = o {
                    if cp.operand == op {
                        cp.kind = LoadKind::DirectToLds;
                    }
                }
            }
        }
    }
    k.applied.push("buffer_ops");
    Ok(k)
}

/// The main-loop copy path of `op`.
pub fn copy_path(k: &Kernel, op: Operand) -> CopyPath {
    let c = &k.config;
    let tile_bytes = c.tile_rows(op) * c.tile.2 * c.ab_bytes();
    let per_inst = 64 * dma_bytes(c.arch);
    let why = if c.direct_to_lds == DmaPolicy::Never {
        DirectToLdsDeclined::Disabled
    } else if !c.k_contiguous(op) && !crate::lds::mn_major(c, op) {
        DirectToLdsDeclined::Transposing
    } else if c.align != Align::Vec8 {
        DirectToLdsDeclined::Unaligned
    } else if !tile_bytes.is_multiple_of(per_inst * c.waves) {
        DirectToLdsDeclined::Geometry { tile_bytes, per_inst }
    } else if c.direct_to_lds == DmaPolicy::Auto && c.arch == crate::ir::Arch::Gfx942 {
        DirectToLdsDeclined::NarrowGfx942
    } else {
        return CopyPath::DirectToLds;
    };
    CopyPath::RegisterStaged(why)
}
