//! Software pipelining: two LDS buffers; while the MFMAs of tile `t` run from one buffer,
//! the global loads of tile `t+1` are in flight into staging VGPRs, and they are written
//! to the other buffer after the MFMAs. One barrier per iteration suffices: it orders the
//! previous iteration's LDS writes (waited for before the barrier, `waitcnt.rs`) before
//! this iteration's reads, and every wave's reads of the other buffer, which its MFMAs
//! consumed before it reached the barrier, before the writes that overwrite it.
//!
//! The waits are not part of this pass: `waitcnt.rs` derives them from the operations in
//! flight once the instructions exist.

use crate::ir::{KTile, Kernel, Operand, TileOp};

/// Why the pass declined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Reason {
    #[error("{0} stages requested; this pass builds exactly 2 (double-buffered LDS)")]
    Stages(u32),
    #[error("two LDS buffers of {buffer} bytes exceed the {limit} bytes of LDS on {arch}")]
    LdsTooSmall { buffer: u32, limit: u32, arch: crate::ir::Arch },
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
    if k.config.stages != 2 {
        return Err(Reason::Stages(k.config.stages));
    }
    let buffer = k.lds_buffer_bytes();
    if 2 * buffer > lds_limit(k.config.arch) {
        return Err(Reason::LdsTooSmall { buffer, limit: lds_limit(k.config.arch), arch: k.config.arch });
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
    k.prologue = last.iter().map(|c| TileOp::GlobalToLds(*c)).collect();
    let mut body = vec![TileOp::Barrier];
    body.extend(loop_.iter().map(|c| TileOp::GlobalLoad(*c)));
    body.extend([TileOp::LdsToRegs, TileOp::Dot, TileOp::LdsStore(Operand::A), TileOp::LdsStore(Operand::B)]);
    k.body = body;
    k.drain = vec![TileOp::Barrier, TileOp::LdsToRegs, TileOp::Dot];
    k.lds_buffers = 2;
    k.applied.push("pipeline");
    Ok(k)
}
