//! Schedules as data (issue 12): the main loop of a pipelined kernel as clusters of
//! machine operations (LDS-read groups, global->LDS copy groups, MFMA groups, barriers,
//! `s_setprio`) per wave role, with explicit sync points. [`run`] turns the tile-level
//! kernel into a [`LoopSchedule`] or declines with a typed [`Reason`]; `lower.rs` emits
//! the clusters in order. Waits are never part of a schedule: `waitcnt.rs` derives them
//! from what is in flight, and a barrier a schedule marks
//! [`MOp::Barrier`]`{ dma_in_flight: true }` only lets the LDS-DMA copies of the *next*
//! K tile stay in flight across it (the schedule's own claim, which the emulator's race
//! detector checks on every schedule test).
//!
//! The schedules (background: the seed notes on Triton's `BlockPingpong`, HipKittens'
//! 8-wave ping-pong and 4-wave interleave, and TileLang's `InjectCdna4Pipeline`):
//!
//! * [`Schedule::Pipelined`]: today's loop (one barrier, the next tile's copies, all LDS
//!   reads, all MFMAs; `passes/pipeline.rs`). No [`LoopSchedule`] is built for it.
//! * [`Schedule::PingPong`] (8 waves, 2 per SIMD): the K tile's MFMAs split into
//!   `clusters` slices; per slice a memory cluster (copy share, the slice's LDS reads)
//!   and a dot cluster (`s_setprio 1`, the slice's MFMAs, `s_setprio 0`), a barrier after
//!   each. Group 1 (waves 4-7, one per SIMD) passes one extra barrier before the loop
//!   and group 0 one after it, so on each SIMD one wave is in its dot cluster while the
//!   other runs its memory cluster, every barrier pairing cluster `c` of group 0 with
//!   cluster `c-1` of group 1. With one cluster and 4 waves (Triton's One-PP) there is no
//!   stagger: the waves of two workgroups alternate by priority alone.
//! * [`Schedule::Interleave`] (4 waves, one per SIMD): one barrier per K tile, then the
//!   MFMAs of each slice with the LDS reads of the next slice and the copies of the next
//!   tile placed between them one instruction at a time.
//! * [`Schedule::CopyInterleave`] (gfx950; TileLang's CDNA4 pipeline): per slice the LDS
//!   reads, a share of the next tile's copies, then the slice's MFMAs at priority 1; the
//!   one barrier of the K tile sits before the last slice's MFMAs. TileLang's version lets
//!   a wave pass that barrier with its LDS reads still in flight and the next tile's
//!   copies then overwrite what they read; here `waitcnt.rs` makes every wave's reads
//!   complete before it arrives, so the copies cannot overtake them.
//! * [`Schedule::Quadrant`] (`quadrant.rs`; seed 002 §13): 8 waves in a 4x2 grid, the
//!   tile as four quadrants run diagonally by the two wave groups (diagonal 1: each group
//!   its own A half x its own B half; diagonal 2, after the barrier that publishes the
//!   next tile: its A half x the other group's B half), on the staggered two-cluster
//!   skeleton of the ping-pong.
//!
//! Any of these can synchronise with explicit phase counters instead of `s_barrier`
//! ([`phase::Sync`] on the configuration; `phase.rs`, seed 002 §6): every barrier of the
//! loop becomes a sync point (an LDS-atomic signal and a poll of both groups' counters)
//! and the stagger becomes the initial wait thresholds.

use crate::ir::{Arch, Kernel, KernelConfig, LoadKind, Operand, TileOp};

pub mod phase;
pub mod quadrant;

/// How the main loop is scheduled (part of [`KernelConfig`] and of the kernel's name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// The software pipeline of `passes/pipeline.rs` as it is.
    Pipelined,
    /// Ping-pong with this many dot clusters per K tile (1, 2 or 4; see
    /// [`Schedule::ping_pong_for`] for the rule).
    PingPong { clusters: u8 },
    /// The ping-pong with slim fragments: the slices split the K tile's fragment pieces
    /// (by MFMA K steps first, [`slices`]) and every slice's LDS reads load into the same
    /// fragment registers, which then hold one slice's pieces instead of the whole K
    /// tile's ([`frag_pieces`]). The loop is [`Schedule::PingPong`]'s; the drain reads and
    /// multiplies one piece group at a time. This is what lets the 8-wave 256x256x128 fp8
    /// tile of AMD's CDNA4 blog be resident on gfx950: its 32x32x64 fragments of a whole
    /// K tile take 96 VGPRs, one K step's 48, and two waves per SIMD leave 256 VGPR+AGPR
    /// per lane for them, the 128 accumulators and the addresses.
    PingPongSlim { clusters: u8 },
    /// 4-wave instruction-level interleave with this many MFMA slices per K tile.
    Interleave { slices: u8 },
    /// CDNA4 copy interleave with this many stages (MFMA slices) per K tile.
    CopyInterleave { stages: u8 },
    /// The quadrant schedule (`quadrant.rs`): four `MT/2 x NT/2` quadrants executed
    /// diagonally by two wave groups, two accumulators per group.
    Quadrant,
    /// Decode (`lower/decode.rs`): no LDS tiles and no main-loop passes. Every wave of the
    /// workgroup owns the whole `MT x NT` block of C and a share of K: each of its
    /// `buffer_load_dwordx4`s brings 16 rows x 64 bytes of A (and of B) straight into the
    /// registers an MFMA reads, `unroll` such loads per row block per iteration, two
    /// register sets in flight; at the end the waves' partial sums meet in LDS, in wave
    /// order. For GEMMs whose time is the time to read A once (M = 1..256 in a Linear layer).
    Decode { unroll: u8 },
    /// Decode with the waves on the rows (`lower/decode.rs`, [`KernelConfig::decode_rows`]):
    /// each wave owns its own 16-row blocks of A over the whole K step (wave grid `(W, 1)`),
    /// streamed as in [`Schedule::Decode`], and the activations (B) of each K step are loaded
    /// once per workgroup with whole-line loads into LDS (two buffers, one barrier per step),
    /// so only the weights hold the CU's loads in flight and no partial sums meet in LDS.
    DecodeRows { unroll: u8 },
}

impl Schedule {
    /// Triton's rule (`BlockPingpong`, seed 000) on `MT * NT * KT * bits`: 8 waves and a
    /// tile of at least 256x256x64x16 bits -> four clusters; at least 256x128x64x16 (twice
    /// 128x128x64x16) -> two; 4 waves and at most 128x128x64x16 -> one (cross-workgroup
    /// ping-pong, no stagger). Anything else has no ping-pong ([`Reason::NoRule`]).
    pub fn ping_pong_for(c: &KernelConfig) -> Option<Schedule> {
        const SMALL: u64 = 128 * 128 * 64 * 16;
        let size = c.tile.0 as u64 * c.tile.1 as u64 * c.tile.2 as u64 * 8 * c.ab_bytes() as u64;
        let clusters = match c.waves {
            8 if size >= 4 * SMALL => 4,
            8 if size >= 2 * SMALL => 2,
            4 if size <= SMALL => 1,
            _ => return None,
        };
        Some(Schedule::PingPong { clusters })
    }
    /// The kernel-name suffix (empty for [`Schedule::Pipelined`]).
    pub fn name_suffix(&self) -> String {
        match self {
            Schedule::Pipelined => String::new(),
            Schedule::PingPong { clusters } => format!("_pp{clusters}"),
            Schedule::PingPongSlim { clusters } => format!("_pps{clusters}"),
            Schedule::Interleave { slices } => format!("_il{slices}"),
            Schedule::CopyInterleave { stages } => format!("_ci{stages}"),
            Schedule::Quadrant => "_quad".into(),
            Schedule::Decode { unroll } => format!("_dec{unroll}"),
            Schedule::DecodeRows { unroll } => format!("_decr{unroll}"),
        }
    }
    /// A short name for listings (`gemm kernels`, `gemm compare`).
    pub fn label(&self) -> String {
        match self {
            Schedule::Pipelined => "pipelined".into(),
            Schedule::PingPong { clusters } => format!("pingpong{clusters}"),
            Schedule::PingPongSlim { clusters } => format!("pingpong{clusters}slim"),
            Schedule::Interleave { slices } => format!("interleave{slices}"),
            Schedule::CopyInterleave { stages } => format!("copyinterleave{stages}"),
            Schedule::Quadrant => "quadrant".into(),
            Schedule::Decode { unroll } => format!("decode{unroll}"),
            Schedule::DecodeRows { unroll } => format!("decoderows{unroll}"),
        }
    }
}

/// Which waves run an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    All,
    /// Group `g` of two: waves `[g*W/2, (g+1)*W/2)`, one per SIMD when `W = 8`.
    Group(u8),
}

/// One slice of a K tile's MFMAs: the 16-byte fragment pieces `pieces.0..pieces.1` of
/// every lane group (`lds::read_lane`), for every M block and the N blocks `bn.0..bn.1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Slice {
    pub pieces: (u32, u32),
    pub bn: (u32, u32),
    /// The slice reads the A pieces (the first slice of a piece range does; the others
    /// reuse them).
    pub read_a: bool,
}

/// A machine operation group of a schedule.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MOp {
    /// Share `part` of `of` (in instruction order) of slice `slice`'s `ds_read_b128`s
    /// from the current LDS buffer.
    LdsRead { slice: u8, part: u8, of: u8 },
    /// Slice `slice`'s `ds_read_b128`s from the other LDS buffer: the next K tile's, after
    /// the barrier that published it (the 8-wave interleave, [`interleave8`]).
    LdsReadNext { slice: u8 },
    /// Share `part` of `of` of the copies of the next K tile of `operand`: LDS-DMA
    /// straight into the other LDS buffer, or global loads into staging VGPRs (the share
    /// advances the offsets of the vectors it loads; LDS-DMA's last share advances its K
    /// offset).
    Copy { operand: Operand, part: u8, of: u8 },
    /// The staging VGPRs of a register-staged operand into the other LDS buffer.
    LdsWrite { operand: Operand },
    /// All MFMAs of slice `slice`.
    Mfma { slice: u8 },
    /// The MFMAs of `slice` with the memory operations of `with` spread between them,
    /// one instruction at a time (evenly, the first after the first MFMA).
    Interleaved { slice: u8, with: Vec<MOp> },
    /// `s_barrier`. `dma_in_flight`: the next tile's LDS-DMA copies may stay in flight
    /// across it (nobody reads or writes their buffer until a later barrier without it).
    Barrier { dma_in_flight: bool },
    /// `s_setprio n`.
    SetPrio(u8),
    /// Phase counters (`phase.rs`): zero them and set this wave's thresholds: at sync
    /// point `p` group 0 waits for group 1 to reach `p - behind`, group 1 for group 0 to
    /// reach `p + ahead` (both 1 for a stagger, both 0 without).
    PhaseInit { behind: u8, ahead: u8 },
    /// Phase counters: a sync point in place of a barrier (`phase.rs`); `dma_in_flight`
    /// as for [`MOp::Barrier`].
    PhaseSync { dma_in_flight: bool },
}

/// What a cluster is for (the trace and the listings name them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClusterKind {
    Memory,
    Dot,
    Mixed,
    Sync,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cluster {
    pub kind: ClusterKind,
    pub ops: Vec<MOp>,
}

/// The scheduled main loop.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LoopSchedule {
    pub schedule: Schedule,
    pub slices: Vec<Slice>,
    /// Before the loop (after the prologue), in order, each for its role.
    pub enter: Vec<(Role, MOp)>,
    /// One K tile.
    pub body: Vec<Cluster>,
    /// After the loop, before the drain, each for its role.
    pub exit: Vec<(Role, MOp)>,
    /// Why this shape (the rule that chose the cluster count, where the copies go).
    pub rule: String,
}

impl LoopSchedule {
    /// `s_barrier`s one wave of group `g` executes around the loop (enter + exit) and in
    /// one K tile of the loop; both groups pass the same number (the stagger moves one
    /// barrier from before the loop to after it).
    pub fn barriers(&self, g: u8) -> (u64, u64) {
        let is_barrier = |op: &MOp| matches!(op, MOp::Barrier { .. });
        let mine = |r: &Role| *r == Role::All || *r == Role::Group(g);
        let around = self.enter.iter().chain(&self.exit).filter(|(r, op)| mine(r) && is_barrier(op)).count() as u64;
        let per_tile = self.body.iter().flat_map(|c| &c.ops).filter(|op| is_barrier(op)).count() as u64;
        (around, per_tile)
    }
}

/// Why a schedule was declined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Reason {
    #[error("the kernel is not software-pipelined into two LDS buffers")]
    NotPipelined,
    #[error(
        "{schedule} is built on two LDS buffers (the next tile's copies into the one not being read); a three-stage kernel runs the plain pipelined loop (passes/pipeline.rs)"
    )]
    ThreeStages { schedule: String },
    #[error("{schedule} needs {need} waves, the kernel has {have}")]
    Waves { schedule: String, need: u32, have: u32 },
    #[error(
        "the K tile has {pieces} fragment pieces and {bn} N blocks per wave: it does not split into {slices} slices"
    )]
    Slices { slices: u32, pieces: u32, bn: u32 },
    #[error("the copy interleave is a CDNA4 (gfx950) schedule; {0} has none")]
    Arch(Arch),
    #[error("no ping-pong rule covers {waves} waves and a {mt}x{nt}x{kt} tile")]
    NoRule { waves: u32, mt: u32, nt: u32, kt: u32 },
    #[error("{0} copy instructions per wave and operand do not split into {1} shares")]
    CopyShares(u32, u32),
    #[error("quadrant schedule: {0}")]
    Quadrant(#[from] quadrant::Decline),
    #[error("phase counters: {0}")]
    Phase(#[from] phase::Decline),
    #[error("a decode kernel has no LDS main loop to schedule (lower/decode.rs)")]
    Decode,
    #[error("slim fragments: {0}")]
    Slim(&'static str),
}

/// The slices of a K tile: by MFMA K steps first, then by halves of the N blocks. A slice
/// holds whole K steps: an MFMA whose fragment spans two pieces (gfx950's fp8 `32x32x64`
/// reads 32 bytes per lane group, two 16-byte pieces) belongs to one slice, whose LDS
/// reads load both (a slice of one piece would run that MFMA before the other piece of
/// this K tile is read).
pub fn slices(c: &KernelConfig, n: u32) -> Result<Vec<Slice>, Reason> {
    let pieces = crate::lds::reads_per_block(c);
    let bn = c.blocks(Operand::B);
    let err = Reason::Slices { slices: n, pieces, bn };
    if n == 0 {
        return Err(err);
    }
    // 16-byte pieces per MFMA K step and lane group (at least one: two 8-byte steps share
    // a piece and so a slice).
    let step = (c.mfma.k * c.ab_bytes() / c.lane_groups() / 16).max(1);
    let steps = pieces / step;
    let (by_piece, by_n) = if steps.is_multiple_of(n) { (n, 1) } else { (steps, n / steps.max(1)) };
    if by_piece * by_n != n || !steps.is_multiple_of(by_piece) || !bn.is_multiple_of(by_n) {
        return Err(err);
    }
    let pp = pieces / by_piece;
    let nb = bn / by_n;
    let mut out = vec![];
    for p in 0..by_piece {
        for q in 0..by_n {
            out.push(Slice { pieces: (p * pp, (p + 1) * pp), bn: (q * nb, (q + 1) * nb), read_a: q == 0 });
        }
    }
    Ok(out)
}

/// The 16-byte pieces per lane group one fragment register holds: the whole K tile's
/// (`lds::reads_per_block`), or with [`Schedule::PingPongSlim`] one slice's.
pub fn frag_pieces(c: &KernelConfig) -> u32 {
    let all = crate::lds::reads_per_block(c);
    match c.schedule {
        Schedule::PingPongSlim { clusters } => match slices(c, clusters as u32) {
            Ok(sl) => sl[0].pieces.1 - sl[0].pieces.0,
            Err(_) => all,
        },
        _ => all,
    }
}

/// Whether the kernel's prologue and epilogue take the lean forms: (1) the K tail tile of a
/// K-contiguous operand by vector loads when the tail is a whole number of 16-byte vectors
/// (a uniform branch; element loads otherwise, `lower.rs` `global_load_tail_fast`); (2)
/// the epilogue's aligned stores issue every quad's C and scale-vector loads of a block
/// before the first quad's arithmetic (`store_vectors`), instead of a load and a wait per
/// quad. The timing model put 7 us of a 54 us 4096^3 launch of `fp8pp` before its first
/// MFMA (128 `buffer_load_ubyte`s per wave, a compare and a select each) and 8 us after
/// its last one (32 serial row-scale loads per wave). Only the slim ping-pong kernels and the
/// block-scaled fp8 ones take them for now, so every other catalogue kernel keeps its bytes
/// (and its row of the characterisation table) until the table is regenerated. Block-scaled
/// fp8 kernels have no table rows (`plan_fp8_blocks` picks them by tile count), and a K tile
/// of theirs is 128 bytes of every row: the element-load tail put 8.5k clocks (of a 56k clock
/// workgroup) before gfx942 `bsfp8`'s first MFMA at 4096^3, every workgroup again (four per
/// CU); with the lean edges 148.6 us became 134.0 (`gemm mx --fp8-blocks`).
pub fn slim_edges(c: &KernelConfig) -> bool {
    matches!(c.schedule, Schedule::PingPongSlim { .. }) || c.block_scale == crate::ir::BlockScale::Fp8Blocks
}

/// LDS-DMA instructions per wave of one operand's K tile.
pub fn dma_per_wave(c: &KernelConfig, op: Operand) -> u32 {
    let per_inst = 64 * crate::passes::buffer_ops::dma_bytes(c.arch);
    c.tile_rows(op) * crate::lds::row_bytes(c) / per_inst / c.waves
}

/// Whether the loop copies `op` with LDS-DMA (else through staging VGPRs).
pub fn is_dma(k: &Kernel, op: Operand) -> bool {
    k.body.iter().any(|o| matches!(o, TileOp::GlobalLoad(c) if c.operand == op && c.kind == LoadKind::DirectToLds))
}

/// Copy instructions (units a share counts) per wave of one operand's K tile: LDS-DMA
/// instructions, or 16-byte vectors of a register-staged copy.
pub fn copy_units(k: &Kernel, op: Operand) -> u32 {
    if is_dma(k, op) {
        dma_per_wave(&k.config, op)
    } else {
        crate::lds::copy_geom(&k.config, op).per_thread
    }
}

/// `of` shares of each operand's copies, as `Copy` operations, A's first.
fn copy_shares(k: &Kernel, of: u32) -> Result<Vec<MOp>, Reason> {
    let mut out = vec![];
    for op in [Operand::A, Operand::B] {
        let n = copy_units(k, op);
        if n < of {
            return Err(Reason::CopyShares(n, of));
        }
        out.extend((0..of).map(|part| MOp::Copy { operand: op, part: part as u8, of: of as u8 }));
    }
    Ok(out)
}

/// The LDS writes of the register-staged operands' next tile (none for LDS-DMA ones).
fn lds_writes(k: &Kernel) -> Vec<MOp> {
    [Operand::A, Operand::B].into_iter().filter(|&op| !is_dma(k, op)).map(|operand| MOp::LdsWrite { operand }).collect()
}

fn reads(slice: usize) -> MOp {
    MOp::LdsRead { slice: slice as u8, part: 0, of: 1 }
}

fn dot(slice: usize) -> Cluster {
    Cluster { kind: ClusterKind::Dot, ops: vec![MOp::SetPrio(1), MOp::Mfma { slice: slice as u8 }, MOp::SetPrio(0)] }
}

/// Builds the ping-pong loop (`slim`: [`Schedule::PingPongSlim`]).
fn ping_pong(k: &Kernel, clusters: u32, slim: bool) -> Result<LoopSchedule, Reason> {
    let c = &k.config;
    let schedule = if slim {
        Schedule::PingPongSlim { clusters: clusters as u8 }
    } else {
        Schedule::PingPong { clusters: clusters as u8 }
    };
    let name = schedule.label();
    let need = if clusters == 1 { 4 } else { 8 };
    if c.waves != need {
        return Err(Reason::Waves { schedule: name, need, have: c.waves });
    }
    let sl = slices(c, clusters)?;
    if slim && (clusters == 1 || frag_pieces(c) == crate::lds::reads_per_block(c)) {
        return Err(Reason::Slim("the slices do not split the K tile's fragment pieces: nothing to save"));
    }
    // All copies of the next tile go in the first memory cluster: with the stagger, group
    // 1's copies must have landed by the barrier that lets group 0 read the next buffer
    // (the barrier after the last memory cluster), so issuing them first gives them the
    // most time.
    // Register-staged copies write LDS in the last memory cluster: the latest point
    // before that barrier, so their global loads have the most time to land.
    let copies = copy_shares(k, 1)?;
    let mut body = vec![];
    for (s, _) in sl.iter().enumerate() {
        // The slice's LDS reads first (the dot cluster waits for them), then the copies.
        let mut mem = vec![reads(s)];
        if s == 0 {
            mem.extend(copies.iter().cloned());
        }
        let last = s + 1 == sl.len();
        if clusters == 1 {
            body.push(Cluster { kind: ClusterKind::Sync, ops: vec![MOp::Barrier { dma_in_flight: false }] });
            body.push(Cluster { kind: ClusterKind::Memory, ops: mem });
            body.push(dot(s));
            body.push(Cluster { kind: ClusterKind::Memory, ops: lds_writes(k) });
            continue;
        }
        if last {
            mem.extend(lds_writes(k));
        }
        // The barrier after the last memory cluster publishes the copies (see above).
        mem.push(MOp::Barrier { dma_in_flight: !last });
        body.push(Cluster { kind: ClusterKind::Memory, ops: mem });
        let mut d = dot(s);
        d.ops.push(MOp::Barrier { dma_in_flight: true });
        body.push(d);
    }
    let (enter, exit) = if clusters == 1 {
        (vec![], vec![])
    } else {
        (
            vec![
                (Role::All, MOp::Barrier { dma_in_flight: false }),
                (Role::Group(1), MOp::Barrier { dma_in_flight: false }),
            ],
            vec![(Role::Group(0), MOp::Barrier { dma_in_flight: false })],
        )
    };
    let rule = format!(
        "Triton BlockPingpong rule on MT*NT*KT*bits = {}x{}x{}x{}: {} cluster(s); copies in the first memory cluster",
        c.tile.0,
        c.tile.1,
        c.tile.2,
        8 * c.ab_bytes(),
        clusters
    );
    Ok(LoopSchedule { schedule, slices: sl, enter, body, exit, rule })
}

/// Builds the 4-wave interleave, or its 8-wave form for block-scaled fp8 ([`interleave8`]).
fn interleave(k: &Kernel, n: u32) -> Result<LoopSchedule, Reason> {
    let c = &k.config;
    let name = Schedule::Interleave { slices: n as u8 }.label();
    if c.waves == 8 && c.block_scale == crate::ir::BlockScale::Fp8Blocks && n >= 2 {
        return interleave8(k, n);
    }
    if c.waves != 4 {
        return Err(Reason::Waves { schedule: name, need: 4, have: c.waves });
    }
    let sl = slices(c, n)?;
    // The next tile's copies ride on the MFMAs of the first half of the slices (they must
    // land before the next tile's barrier); the reads of slice s+1 on those of slice s.
    let front = n.div_ceil(2);
    let shares = copy_shares(k, front)?;
    let mut body =
        vec![Cluster { kind: ClusterKind::Sync, ops: vec![MOp::Barrier { dma_in_flight: false }, reads(0)] }];
    for s in 0..sl.len() {
        let mut with = vec![];
        if (s as u32) < front {
            with.extend(shares.iter().filter(|m| matches!(m, MOp::Copy { part, .. } if *part as usize == s)).cloned());
        }
        if s + 1 < sl.len() {
            with.push(reads(s + 1));
        } else {
            with.extend(lds_writes(k));
        }
        body.push(Cluster { kind: ClusterKind::Mixed, ops: vec![MOp::Interleaved { slice: s as u8, with }] });
    }
    let rule =
        format!("{n} slices; copies between the MFMAs of the first {front}, reads of slice s+1 between those of s");
    Ok(LoopSchedule {
        schedule: Schedule::Interleave { slices: n as u8 },
        slices: sl,
        enter: vec![],
        body,
        exit: vec![],
        rule,
    })
}

/// The interleave with 8 waves (two per SIMD), block-scaled fp8 only (gfx942 `bsfp8`: 128x128
/// tiles of 4x2 waves, the group sums carried in VGPRs, `lower/block_fp8.rs`). A wave's K tile
/// is 16 MFMAs here, too short to hide a global load (about 700 clocks under the timing model)
/// between the copies at the start of a tile and the LDS writes at its end, or the LDS reads
/// after the one barrier every wave passes: the 4-wave form's order left the MFMA pipe 55% busy
/// at 4096^3. The loop is rotated instead: the barrier that publishes the next tile sits before
/// the tile's last slice, whose fragments are already in registers, so the next tile's first
/// reads issue behind those MFMAs; and the copies of the tile after next are issued right
/// before that barrier, as soon as the LDS writes of the next tile have read the staging
/// registers, a whole tile ahead of the writes that wait for them. One tile:
///
/// `slice 0 (reads 1) .. slice n-2 (reads n-1, LDS writes of tile t+1) | copies of tile t+2,
/// barrier | slice n-1 (reads 0 of tile t+1)`, and before the loop `copies of tile 1,
/// barrier, reads 0 of tile 0`.
///
/// The writes of tile `t+1` go to the buffer tile `t-1` was read from; every read of it was
/// issued before the previous tile's barrier. The last tile's copies load one tile past the
/// loop (its K offset continues; never written to LDS, range-checked). `gemm mx --fp8-blocks`
/// shapes (bf16 out), 4096^3: 130.0 us against 132.2 for the 4-wave 4x1 form and 134.1 for this
/// tile's 4-wave order with 8 waves.
fn interleave8(k: &Kernel, n: u32) -> Result<LoopSchedule, Reason> {
    let c = &k.config;
    let sl = slices(c, n)?;
    let shares = copy_shares(k, 1)?;
    let barrier = MOp::Barrier { dma_in_flight: false };
    let mut enter: Vec<(Role, MOp)> = shares.iter().map(|m| (Role::All, m.clone())).collect();
    enter.extend([(Role::All, barrier.clone()), (Role::All, reads(0))]);
    let last = sl.len() - 1;
    let mut body = vec![];
    for s in 0..sl.len() {
        let mut with = vec![];
        if s < last {
            with.push(reads(s + 1));
        }
        if s + 1 == last {
            with.extend(lds_writes(k));
        }
        if s == last {
            let mut ops = shares.clone();
            ops.push(barrier.clone());
            body.push(Cluster { kind: ClusterKind::Sync, ops });
            with.push(MOp::LdsReadNext { slice: 0 });
        }
        body.push(Cluster { kind: ClusterKind::Mixed, ops: vec![MOp::Interleaved { slice: s as u8, with }] });
    }
    let rule = format!(
        "{n} slices, 8 waves: the barrier before the last slice, the next tile's first reads between its MFMAs, the copies a tile ahead"
    );
    Ok(LoopSchedule { schedule: Schedule::Interleave { slices: n as u8 }, slices: sl, enter, body, exit: vec![], rule })
}

/// Builds the CDNA4 copy interleave.
fn copy_interleave(k: &Kernel, n: u32) -> Result<LoopSchedule, Reason> {
    let c = &k.config;
    if c.arch != Arch::Gfx950 {
        return Err(Reason::Arch(c.arch));
    }
    let sl = slices(c, n)?;
    let shares = copy_shares(k, n)?;
    let mut body = vec![];
    for s in 0..sl.len() {
        let mut ops = vec![reads(s)];
        ops.extend(shares.iter().filter(|m| matches!(m, MOp::Copy { part, .. } if *part as usize == s)).cloned());
        if s + 1 == sl.len() {
            ops.extend(lds_writes(k));
            ops.push(MOp::Barrier { dma_in_flight: false });
        }
        body.push(Cluster { kind: ClusterKind::Memory, ops });
        body.push(dot(s));
    }
    let rule = format!(
        "{n} stages; the next tile's copies spread one share per stage; one barrier before the last stage's MFMAs"
    );
    // The loop's one barrier comes late: a barrier before the loop orders the prologue's
    // LDS writes before the first stage's reads (the race detector found its absence).
    let enter = vec![(Role::All, MOp::Barrier { dma_in_flight: false })];
    Ok(LoopSchedule {
        schedule: Schedule::CopyInterleave { stages: n as u8 },
        slices: sl,
        enter,
        body,
        exit: vec![],
        rule,
    })
}

/// The loop schedule of `k`'s configured [`Schedule`] (`None` for the pipelined loop).
pub fn plan(k: &Kernel) -> Result<Option<LoopSchedule>, Reason> {
    let s = k.config.schedule;
    if matches!(s, Schedule::Decode { .. } | Schedule::DecodeRows { .. }) {
        return Err(Reason::Decode);
    }
    if s == Schedule::Pipelined {
        if k.config.sync == phase::Sync::PhaseCounters {
            return Err(phase::Decline::NoSchedule.into());
        }
        return Ok(None);
    }
    if k.lds_buffers == 3 {
        return Err(Reason::ThreeStages { schedule: s.label() });
    }
    if k.lds_buffers != 2 || !k.applied.contains(&"pipeline") {
        return Err(Reason::NotPipelined);
    }
    let mut ls = match s {
        Schedule::Pipelined | Schedule::Decode { .. } | Schedule::DecodeRows { .. } => unreachable!(),
        Schedule::PingPong { clusters } => ping_pong(k, clusters as u32, false)?,
        Schedule::PingPongSlim { clusters } => ping_pong(k, clusters as u32, true)?,
        Schedule::Interleave { slices } => interleave(k, slices as u32)?,
        Schedule::CopyInterleave { stages } => copy_interleave(k, stages as u32)?,
        Schedule::Quadrant => quadrant::quadrant(k)?,
    };
    if k.config.sync == phase::Sync::PhaseCounters {
        phase::to_counters(k, &mut ls)?;
    }
    Ok(Some(ls))
}

/// The pass: attaches the loop schedule (the last pass; the lowering emits it).
pub fn run(mut k: Kernel) -> Result<Kernel, Reason> {
    if let Some(ls) = plan(&k)? {
        k.schedule = Some(ls);
        k.applied.push("schedule");
    }
    Ok(k)
}
