//! Software pipelining: two LDS buffers; while the MFMAs of tile `t` run from one buffer,
//! the global loads of tile `t+1` are in flight into staging VGPRs, and they are written
//! to the other buffer after the MFMAs. One barrier per iteration suffices: it orders the
//! previous iteration's LDS writes (waited for before the barrier, `waitcnt.rs`) before
//! this iteration's reads, and every wave's reads of the other buffer, which its MFMAs
//! consumed before it reached the barrier, before the writes that overwrite it.
//!
//! Three stages (`stages = 3`): three LDS buffers; while the MFMAs of tile `t` run from
//! buffer `t % 3`, the copies of tile `t+2` are in flight, and tile `t+1` is already in
//! LDS (LDS-DMA) or in staging VGPRs. An iteration is: barrier (publishes buffer `t % 3`;
//! every wave has finished reading buffer `(t-1) % 3`), the copies of tile `t+2` (LDS-DMA
//! straight into buffer `(t+2) % 3 = (t-1) % 3`; register-staged: global loads into
//! staging set `t % 2`), the LDS reads and MFMAs of tile `t`, then (register-staged) the
//! LDS writes of tile `t+1` from staging set `(t+1) % 2` into buffer `(t+1) % 3`. A
//! register-staged operand so holds two staging sets (the loads of tile `t+2` are issued
//! while tile `t+1` still waits in the other), and each global load has two MFMA phases
//! to land instead of one. The prologue copies the last (partial) K tile into buffer 0 and
//! then, when there is a loop tile, issues the copies of loop tile 0 (the prefetch, into
//! buffer 1 or staging set 1); the loop runs `ceil(k/KT) - 2` times and the drain computes
//! the two tiles left (one when `k <= KT`). The barrier of each tile publishes its buffer
//! only ([`crate::program::Note::Publishes`]): the LDS-DMA copies of the tile after it
//! may stay in flight across it, and `waitcnt.rs` derives the `vmcnt` that lets them.
//!
//! The waits are not part of this pass: `waitcnt.rs` derives them from the operations in
//! flight once the instructions exist.

use crate::ir::{KTile, Kernel, Operand, TileOp};

/// Why the pass declined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Reason {
    #[error("{0} stages requested; this pass builds 2 or 3")]
    Stages(u32),
    #[error("{buffers} LDS buffers of {buffer} bytes exceed the {limit} bytes of LDS on {arch}")]
    LdsTooSmall { buffers: u32, buffer: u32, limit: u32, arch: crate::ir::Arch },
    #[error("three stages with register-staged copies ({staged}) need a second staging set: {unfit}")]
    Staging { staged: &'static str, unfit: crate::fit::Unfit },
    #[error("the kernel is not in the naive shape (copies, barrier, LDS->regs, dot, barrier)")]
    Shape,
}

/// LDS bytes per workgroup (ISA.md §3.4).
pub fn lds_limit(arch: crate::ir::Arch) -> u32 {
    match arch {
        crate::ir::Arch::Gfx942 => 65536,
        crate::ir::Arch::Gfx950 => 163840,
    }
}

/// Applies the pass.
pub fn run(mut k: Kernel) -> Result<Kernel, Reason> {
    let stages = k.config.stages;
    if !matches!(stages, 2 | 3) {
        return Err(Reason::Stages(stages));
    }
    let buffer = k.lds_buffer_bytes();
    if stages * buffer > lds_limit(k.config.arch) {
        return Err(Reason::LdsTooSmall {
            buffers: stages,
            buffer,
            limit: lds_limit(k.config.arch),
            arch: k.config.arch,
        });
    }
    let copies = |ops: &[TileOp], which| -> Option<Vec<crate::ir::Copy>> {
        let cs: Vec<_> = ops
            .iter()
            .filter_map(|o| match o {
                TileOp::GlobalToLds(c) if c.which == which => Some(*c),
                _ => None,
            })
            .collect();
        let shape_ok = ops.len() == cs.len() + 4
            && ops[cs.len()..] == [TileOp::Barrier, TileOp::LdsToRegs, TileOp::Dot, TileOp::Barrier];
        (shape_ok && cs.len() == 2).then_some(cs)
    };
    let (Some(last), Some(loop_)) = (copies(&k.prologue, KTile::Last), copies(&k.body, KTile::Loop)) else {
        return Err(Reason::Shape);
    };
    if stages == 3 {
        let staged: Vec<bool> = loop_.iter().map(|c| c.kind != crate::ir::LoadKind::DirectToLds).collect();
        let sets = [1 + u32::from(staged[0]), 1 + u32::from(staged[1])];
        if let Err(unfit) = crate::fit::vgpr_estimate(&k.config, sets) {
            let staged = match (staged[0], staged[1]) {
                (true, true) => "A and B",
                (true, false) => "A",
                _ => "B",
            };
            return Err(Reason::Staging { staged, unfit });
        }
    }
    k.prologue = last.iter().map(|c| TileOp::GlobalToLds(*c)).collect();
    let mut body = vec![TileOp::Barrier];
    body.extend(loop_.iter().map(|c| TileOp::GlobalLoad(*c)));
    let stores = [TileOp::LdsStore(Operand::A), TileOp::LdsStore(Operand::B)];
    body.extend([TileOp::LdsToRegs, TileOp::Dot]);
    body.extend(stores);
    k.body = body;
    let step = [TileOp::Barrier, TileOp::LdsToRegs, TileOp::Dot];
    k.drain = step.to_vec();
    if stages == 3 {
        k.prefetch = loop_.iter().map(|c| TileOp::GlobalLoad(*c)).collect();
        k.drain = [&step[..], &stores, &step].concat();
    }
    k.lds_buffers = stages;
    k.applied.push("pipeline");
    Ok(k)
}
