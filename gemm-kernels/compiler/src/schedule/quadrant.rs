//! The quadrant schedule (issue 12 item 4; seed 002 §13, "Quadrant-Based Computation"):
//! the workgroup tile as four quadrants of `MT/2 x NT/2`, executed diagonally by two wave
//! groups of four (waves 0-3 = group 0, 4-7 = group 1, one wave of each group per SIMD).
//!
//! Group `g` owns A half `g` (rows `g*MT/2 ..`) and keeps two accumulators per wave, one
//! per quadrant of its row half:
//!
//! ```text
//!                 B half 0        B half 1
//!   A half 0   Q0 (g0, diag 1)  Q1 (g0, diag 2)
//!   A half 1   Q2 (g1, diag 2)  Q3 (g1, diag 1)
//! ```
//!
//! * diagonal 1: group `g` computes `A half g x B half g` (Q0 and Q3: the two groups touch
//!   disjoint A and B halves);
//! * diagonal 2: group `g` computes `A half g x B half 1-g` (Q1 and Q2): it reads the B
//!   half the other group reads in its diagonal 1, after a barrier.
//!
//! Within a group the four waves form a 2x2 grid over each quadrant, so wave `w` owns
//! `MT/4` rows (`wm = 2*(w/4) + w%2`) and, in each B half, `NT/4` columns
//! (`wn = (w/2)%2`): the configuration's wave grid is `4x2` and the wave's N blocks are
//! split in two, the first half in the group's own B half, the second in the other one
//! (`lower.rs` maps them; the same VGPR holds the half, so every wave runs the same code).
//!
//! The loop is the staggered two-cluster skeleton of the ping-pong (`super::ping_pong`):
//! per diagonal a memory cluster (its LDS reads; the next tile's copies in the first, the
//! register-staged LDS writes in the second) and a dot cluster at `s_setprio 1`, a barrier
//! after each, and group 1 one barrier behind group 0. So on each SIMD one group's
//! diagonal-1 MFMAs run under the other group's memory cluster, and every barrier pairs
//! cluster `c` of group 0 with cluster `c-1` of group 1. The barrier that ends diagonal
//! 1's dot cluster, before diagonal 2 reads the other group's B half, is the one that
//! publishes the next K tile (its copies have had the first memory cluster and diagonal
//! 1 to land): removing it is the planted bug `plant::PlantedBug::BarrierRemoved`.
//!
//! The copies stay cooperative (all eight waves copy all of the next K tile, as in the
//! other schedules), not split per group as the seed's self-loading: with barriers every
//! sync point is workgroup-wide anyway, so a per-group split would order nothing more.
//!
//! Declines (typed [`Decline`]): anything but 8 waves in a 4x2 grid, and a tile whose
//! quarter `NT/4` is not a whole number of MFMA blocks (no even split of a wave's N
//! blocks over the two B halves) or whose `MT/4` is not (no 2x2 wave grid per quadrant).

use super::Slice;
use super::{copy_shares, dot, lds_writes, reads, Cluster, ClusterKind, LoopSchedule, MOp, Reason, Role, Schedule};
use crate::ir::{Kernel, KernelConfig, Operand};

/// Why the quadrant schedule does not apply.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Decline {
    #[error("needs 8 waves in a 4x2 wave grid (a 2x2 grid per group and quadrant), the kernel has {0}x{1}")]
    WaveGrid(u32, u32),
    #[error("a quadrant's {rows}x{cols} share per wave is not whole {m}x{n} MFMA blocks")]
    Blocks { rows: u32, cols: u32, m: u32, n: u32 },
}

/// Whether `c` is a configuration the quadrant schedule applies to.
pub fn applies(c: &KernelConfig) -> Result<(), Decline> {
    if c.wave_grid != (4, 2) {
        return Err(Decline::WaveGrid(c.wave_grid.0, c.wave_grid.1));
    }
    let (rows, cols) = (c.tile.0 / 4, c.tile.1 / 4);
    if rows == 0 || cols == 0 || !rows.is_multiple_of(c.mfma.m) || !cols.is_multiple_of(c.mfma.n) {
        return Err(Decline::Blocks { rows, cols, m: c.mfma.m, n: c.mfma.n });
    }
    Ok(())
}

/// The two diagonals as slices: every fragment piece; diagonal 1 the first half of the
/// wave's N blocks (its own B half) with the A fragments, diagonal 2 the second half
/// (the other group's B half) reusing them.
pub fn diagonals(c: &KernelConfig) -> Vec<Slice> {
    let pieces = crate::lds::reads_per_block(c);
    let half = c.blocks(Operand::B) / 2;
    vec![
        Slice { pieces: (0, pieces), bn: (0, half), read_a: true },
        Slice { pieces: (0, pieces), bn: (half, 2 * half), read_a: false },
    ]
}

/// Builds the quadrant loop.
pub fn quadrant(k: &Kernel) -> Result<LoopSchedule, Reason> {
    let c = &k.config;
    if c.waves != 8 {
        return Err(Reason::Waves { schedule: Schedule::Quadrant.label(), need: 8, have: c.waves });
    }
    applies(c)?;
    let sl = diagonals(c);
    let copies = copy_shares(k, 1)?;
    // Per diagonal a memory cluster (its LDS reads; the next tile's copies in the first,
    // so they have the most time to land) and a dot cluster. The barrier between diagonal
    // 1's MFMAs and diagonal 2's reads is the one that publishes the next K tile (its
    // copies, and the register-staged LDS writes placed just before it, must be
    // complete); the others let the LDS-DMA stay in flight.
    let mut body = vec![];
    for s in 0..2 {
        let mut mem = vec![reads(s)];
        if s == 0 {
            mem.extend(copies.iter().cloned());
        }
        mem.push(MOp::Barrier { dma_in_flight: true });
        body.push(Cluster { kind: ClusterKind::Memory, ops: mem });
        let mut d = dot(s);
        if s == 0 {
            d.ops.extend(lds_writes(k));
        }
        d.ops.push(MOp::Barrier { dma_in_flight: s == 1 });
        body.push(d);
    }
    let enter = vec![
        (Role::All, MOp::Barrier { dma_in_flight: false }),
        (Role::Group(1), MOp::Barrier { dma_in_flight: false }),
    ];
    let exit = vec![(Role::Group(0), MOp::Barrier { dma_in_flight: false })];
    let rule = format!(
        "quadrants of {}x{}: diagonal 1 (own A half x own B half), barrier, diagonal 2 (own A half x the other \
         group's B half); group 1 one barrier behind",
        c.tile.0 / 2,
        c.tile.1 / 2
    );
    Ok(LoopSchedule { schedule: Schedule::Quadrant, slices: sl, enter, body, exit, rule })
}
