//! The IR -> IR passes. Each one either returns the transformed kernel or says, with a
//! typed reason, why it declined; [`run_all`] applies them in the order the lowering
//! expects.

pub mod buffer_ops;
pub mod epilogue;
pub mod pipeline;
pub mod swizzle;

use crate::ir::Kernel;

/// Why a pass declined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Declined {
    #[error("configuration: {0}")]
    Fit(#[from] crate::fit::Unfit),
    #[error("buffer ops: {0}")]
    BufferOps(#[from] buffer_ops::Reason),
    #[error("pipeline: {0}")]
    Pipeline(#[from] pipeline::Reason),
    #[error("swizzle: {0}")]
    Swizzle(#[from] swizzle::Reason),
    #[error("epilogue: {0}")]
    Epilogue(#[from] epilogue::Reason),
    #[error("schedule: {0}")]
    Schedule(#[from] crate::schedule::Reason),
}

/// buffer ops, software pipelining, LDS swizzle, epilogue, then the loop schedule.
pub fn run_all(mut k: Kernel) -> Result<Kernel, Declined> {
    if k.config.split == crate::ir::SplitK::Reduce {
        // The split-K reduction has no main loop and no LDS: nothing for these passes.
        k.prologue.clear();
        k.body.clear();
        k.lds_buffers = 0;
        k.applied.push("splitk_reduce");
        return Ok(k);
    }
    if k.config.split == crate::ir::SplitK::Transpose {
        // The transpose pre-pass (`lower/transpose.rs`) has no main loop and its own LDS tile.
        k.prologue.clear();
        k.body.clear();
        k.lds_buffers = 0;
        k.applied.push("transpose");
        return Ok(k);
    }
    let k = buffer_ops::run(k)?;
    let k = pipeline::run(k)?;
    let k = swizzle::run(k)?;
    let k = epilogue::run(k)?;
    Ok(crate::schedule::run(k)?)
}
