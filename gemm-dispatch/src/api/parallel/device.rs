//! Device-resident tensor parallelism over HIP devices, with RCCL on device buffers.
//!
//! The plans are those of the [parent module](super), with the same splits, padding and error
//! behaviour; what changes is where the data lives. Each rank's shards go from the caller's host
//! slices (packed tight on the host, as in the host path) straight to its device, the rank's GEMM
//! runs there ([`HipBackend::gemm_device`]) and writes into the buffer the collective sends, and
//! nothing comes back to the host between the GEMM and the collective:
//!
//! * Column: every rank computes its C column block into its send buffer (padded to the largest
//!   block), an all-gather assembles all blocks on every rank, and rank 0's copy is downloaded —
//!   exactly C's `m * n` elements, block by block — and scattered into the caller's C.
//! * Row: every rank computes its f32 partial product (the bf16->f32 / f16->f32 catalogue
//!   kernels, `beta = 0`) into a zeroed buffer padded to `ranks * chunk` entries; a
//!   reduce-scatter or all-reduce sums the partials on the devices in f32; each rank's owned
//!   sums (`m * n` f32 values in all) are downloaded and the epilogue `sum + beta * C`, rounded
//!   once to C's dtype, runs **on the host**. The catalogue has no elementwise kernel to do it on
//!   the device, and C must come to the host anyway.
//!
//! Ordering: each rank's uploads, GEMM and collective are queued on one stream, the rank's
//! stream of the [`RcclCollective`], so the collective runs after the GEMM by stream order (no
//! host synchronisation between them); downloads are queued after the collective on the same
//! streams.
//!
//! Communicators are created once per set of ranks and kept by rank 0's backend (creating them
//! is expensive on real hardware); that backend's lock is held for the whole call, since one
//! communicator must not run two collectives at once.

use super::{collective_type, pack, shard_problem, split, Reduce, TpPlan};
use crate::api::context::Context;
use crate::backends::collective::{Collective, CollectiveType, RcclCollective, TpCollective};
use crate::backends::hip::{as_hip, HipBackend};
use crate::backends::Backend;
use crate::error::{Error, Result};
use gemm_core::{DType, Element, GemmProblem, Operand};
use gemm_rocm::hip::{DeviceBuffer, Stream};
use gemm_rocm::nccl::Nccl;
use std::sync::Arc;

/// Which path [`Context::gemm_tensor_parallel`] takes on a context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TpRoute {
    /// Every device is a HIP device and RCCL is available: shards live on the devices and RCCL
    /// combines them there.
    Device,
    /// The devices' GEMMs read and write host memory and the in-process collective combines the
    /// pieces; `why` says why the device path is not taken.
    Host { why: String },
}

/// The HIP backends of every device of `ctx`, in order, or why not all devices are HIP devices.
pub(super) fn hip_ranks(ctx: &Context) -> std::result::Result<Vec<Arc<HipBackend>>, String> {
    ctx.backends().iter().map(|b| as_hip(b).ok_or_else(|| format!("{} is not a HIP device", b.info().name))).collect()
}

/// Runs `f` with the RCCL collective of `ranks` (cached by rank 0, created on first use from the
/// library given at discovery, else `GEMM_RCCL_LIBRARY` / `librccl`). The outer `Err` says why
/// there is no collective (the library is missing, the communicators could not be created).
/// When `f` fails the cached communicators are dropped: after a failed collective a communicator
/// may be unusable (NCCL's asynchronous errors), so the next call starts afresh.
pub(super) fn with_collective(
    ranks: &[Arc<HipBackend>],
    f: impl FnOnce(&RcclCollective) -> Result<()>,
) -> std::result::Result<Result<()>, String> {
    let first = ranks.first().ok_or("no devices")?;
    let mut guard = first.tp.lock();
    let ordinals: Vec<i32> = ranks.iter().map(|b| b.device().ordinal()).collect();
    if guard.as_ref().is_none_or(|t| t.ranks != ordinals) {
        // Old communicators go first: a device belongs to at most one of ours at a time.
        *guard = None;
        let nccl = match first.rccl() {
            Some(n) => n.clone(),
            None => Nccl::load().map_err(|e| format!("rccl: {e}"))?,
        };
        let devices: Vec<_> = ranks.iter().map(|b| b.device().clone()).collect();
        let collective = RcclCollective::with_library(nccl, &devices).map_err(|e| e.to_string())?;
        *guard = Some(TpCollective { ranks: ordinals, collective });
    }
    let cached = guard.as_ref().ok_or("no collective")?;
    let result = f(&cached.collective);
    if result.is_err() {
        *guard = None;
    }
    Ok(result)
}

impl Context {
    /// Which path [`Context::gemm_tensor_parallel`] takes here, and if it is the host path, why.
    /// Finding out may create (and keep) the RCCL communicators.
    pub fn tensor_parallel_route(&self) -> TpRoute {
        match hip_ranks(self).and_then(|ranks| with_collective(&ranks, |_| Ok(()))) {
            Ok(_) => TpRoute::Device,
            Err(why) => TpRoute::Host { why },
        }
    }
}

/// Runs each rank's work concurrently and returns the values in rank order (through the host
/// path's [`super::run_shards`], so both paths fail the same way).
fn on_ranks<T: Send>(names: &[String], work: Vec<Box<dyn FnOnce() -> Result<T> + Send + '_>>) -> Result<Vec<T>> {
    let ranks = work.len();
    super::run_shards(names, work.into_iter().enumerate().collect(), ranks)
}

fn device_error(name: &str, what: impl std::fmt::Display) -> Error {
    Error::Device { device: name.to_owned(), message: what.to_string() }
}

/// A device allocation of at least `bytes` (and at least 4: the kernels may read a span rounded
/// up to 4 bytes, and a zero-sized buffer has no address).
fn alloc(rank: &HipBackend, name: &str, bytes: usize) -> Result<DeviceBuffer> {
    rank.device().alloc(bytes.next_multiple_of(4).max(4)).map_err(|e| device_error(name, e))
}

/// What one rank keeps alive until its collective and downloads are done.
struct RankBuffers {
    /// Inputs (uploaded shards); kept only so they outlive the queued GEMM.
    _inputs: Vec<DeviceBuffer>,
    send: DeviceBuffer,
    recv: DeviceBuffer,
}

/// The device-resident tensor-parallel GEMM. `p` has been validated against the buffers and is
/// not empty; `ranks` are the context's devices.
pub(super) fn run<A: Element, B: Element, C: Element>(
    ranks: &[Arc<HipBackend>],
    collective: &RcclCollective,
    plan: TpPlan,
    p: &GemmProblem,
    a: &[A],
    b: &[B],
    c: &mut [C],
) -> Result<()> {
    if collective.ranks() != ranks.len() {
        return Err(Error::Invalid(gemm_core::Error::InvalidArgument(format!(
            "a collective of {} ranks for {} devices",
            collective.ranks(),
            ranks.len()
        ))));
    }
    let names: Vec<String> = ranks.iter().map(|r| r.info().name).collect();
    let streams: Vec<Stream> = (0..ranks.len())
        .map(|r| collective.stream(r).cloned().ok_or_else(|| device_error(&names[r], "the collective has no stream")))
        .collect::<Result<_>>()?;
    match plan {
        TpPlan::Column => column(ranks, &names, &streams, collective, p, a, b, c),
        TpPlan::Row { reduce } => row(ranks, &names, &streams, collective, reduce, p, a, b, c),
    }
}

#[allow(clippy::too_many_arguments)]
fn column<A: Element, B: Element, C: Element>(
    ranks: &[Arc<HipBackend>],
    names: &[String],
    streams: &[Stream],
    collective: &RcclCollective,
    p: &GemmProblem,
    a: &[A],
    b: &[B],
    c: &mut [C],
) -> Result<()> {
    let devices = ranks.len();
    let parts = split(p.n, devices);
    let block = p.m * parts[0].len();
    let dtype = collective_type(p.c_type)?;
    let csize = p.c_type.size_bytes();
    let (b_s, c_s) = (p.strides(Operand::B), p.strides(Operand::C));
    // Everything is planned and packed before any device is touched: a problem no kernel runs
    // fails here, with nothing allocated.
    let mut shards = Vec::with_capacity(devices);
    // Each rank runs the kernel it would run for the whole problem (one device's C bit for bit).
    let whole: Vec<_> = ranks.iter().map(|r| r.whole_problem_kernel(p)).collect();
    for (d, cols) in parts.iter().enumerate() {
        let sp = shard_problem(p, p.m, cols.len(), p.k);
        let sp = sp.with_leading_dims(p.lda, sp.ldb, sp.ldc);
        let spans = sp.validate()?;
        if sp.n > 0 {
            ranks[d].plan(&sp)?;
        }
        let mut sb = vec![B::default(); spans.b];
        pack(b, b_s, 0, cols.start, &mut sb, sp.strides(Operand::B));
        let sc = (p.beta != 0.0).then(|| {
            let mut sc = vec![C::from_f32(0.0); spans.c];
            pack(c, c_s, 0, cols.start, &mut sc, sp.strides(Operand::C));
            sc
        });
        shards.push((sp, spans.a, sb, sc));
    }
    let work: Vec<Box<dyn FnOnce() -> Result<RankBuffers> + Send + '_>> = shards
        .iter()
        .enumerate()
        .map(|(d, (sp, a_elems, sb, sc))| {
            let (rank, name, stream, kernel) = (&*ranks[d], &names[d], &streams[d], whole[d]);
            let a = &a[..*a_elems];
            Box::new(move || {
                let dev_err = |e: gemm_rocm::Error| device_error(name, e);
                let mut send = alloc(rank, name, block * csize)?;
                let recv = alloc(rank, name, block * devices * csize)?;
                // Padding (and a rank with no columns) sends zeros, never stale memory.
                stream.fill(&mut send, 0).map_err(dev_err)?;
                let mut inputs = Vec::new();
                if sp.n > 0 {
                    let mut da = alloc(rank, name, std::mem::size_of_val(a))?;
                    stream.write_blocking(&mut da, 0, a).map_err(dev_err)?;
                    let mut db = alloc(rank, name, std::mem::size_of_val(sb.as_slice()))?;
                    stream.write_blocking(&mut db, 0, sb).map_err(dev_err)?;
                    if let Some(sc) = sc {
                        stream.write_blocking(&mut send, 0, sc).map_err(dev_err)?;
                    }
                    rank.gemm_device_as(stream, sp, (&da, 0), (&db, 0), (&mut send, 0), kernel)?;
                    inputs.extend([da, db]);
                }
                Ok(RankBuffers { _inputs: inputs, send, recv })
            }) as Box<dyn FnOnce() -> Result<RankBuffers> + Send + '_>
        })
        .collect();
    let buffers = on_ranks(names, work)?;
    let (send, mut recv): (Vec<DeviceBuffer>, Vec<DeviceBuffer>) =
        buffers.into_iter().map(|r| (r.send, r.recv)).unzip();
    collective.all_gather(&send, &mut recv, block, dtype)?;

    // Rank 0 holds every block; download the valid prefix of each (a block's m * cols entries
    // are stored tight at its start) and only then write the caller's C.
    let mut pieces: Vec<Vec<C>> = Vec::with_capacity(devices);
    for (d, cols) in parts.iter().enumerate() {
        let mut piece = vec![C::default(); p.m * cols.len()];
        streams[0].read_blocking(&recv[0], d * block * csize, &mut piece).map_err(|e| device_error(&names[0], e))?;
        pieces.push(piece);
    }
    for (d, cols) in parts.iter().enumerate() {
        let s = shards[d].0.strides(Operand::C);
        for j in 0..cols.len() {
            for i in 0..p.m {
                c[super::at(c_s, i, cols.start + j)] = pieces[d][super::at(s, i, j)];
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn row<A: Element, B: Element, C: Element>(
    ranks: &[Arc<HipBackend>],
    names: &[String],
    streams: &[Stream],
    collective: &RcclCollective,
    reduce: Reduce,
    p: &GemmProblem,
    a: &[A],
    b: &[B],
    c: &mut [C],
) -> Result<()> {
    let devices = ranks.len();
    let parts = split(p.k, devices);
    let entries = p.m * p.n;
    let chunk = entries.div_ceil(devices);
    let padded = chunk * devices;
    let (a_s, b_s) = (p.strides(Operand::A), p.strides(Operand::B));
    let mut shards = Vec::with_capacity(devices);
    for (d, ks) in parts.iter().enumerate() {
        let sp =
            shard_problem(p, p.m, p.n, ks.len()).with_scalars(p.alpha, 0.0).with_dtypes(p.a_type, p.b_type, DType::F32);
        let spans = sp.validate()?;
        if sp.k > 0 {
            ranks[d].plan(&sp)?;
        }
        let mut sa = vec![A::default(); spans.a];
        pack(a, a_s, 0, ks.start, &mut sa, sp.strides(Operand::A));
        let mut sb = vec![B::default(); spans.b];
        pack(b, b_s, ks.start, 0, &mut sb, sp.strides(Operand::B));
        shards.push((sp, sa, sb));
    }
    let recv_elems = match reduce {
        Reduce::ReduceScatter => chunk,
        Reduce::AllReduce => padded,
    };
    let work: Vec<Box<dyn FnOnce() -> Result<RankBuffers> + Send + '_>> = shards
        .iter()
        .enumerate()
        .map(|(d, (sp, sa, sb))| {
            let (rank, name, stream) = (&*ranks[d], &names[d], &streams[d]);
            Box::new(move || {
                let dev_err = |e: gemm_rocm::Error| device_error(name, e);
                let mut partial = alloc(rank, name, padded * 4)?;
                let recv = alloc(rank, name, recv_elems * 4)?;
                // Zeros: the padding, and the whole partial of a rank with no K.
                stream.fill(&mut partial, 0).map_err(dev_err)?;
                let mut inputs = Vec::new();
                if sp.k > 0 {
                    let mut da = alloc(rank, name, std::mem::size_of_val(sa.as_slice()))?;
                    stream.write_blocking(&mut da, 0, sa).map_err(dev_err)?;
                    let mut db = alloc(rank, name, std::mem::size_of_val(sb.as_slice()))?;
                    stream.write_blocking(&mut db, 0, sb).map_err(dev_err)?;
                    rank.gemm_device(stream, sp, (&da, 0), (&db, 0), (&mut partial, 0))?;
                    inputs.extend([da, db]);
                }
                Ok(RankBuffers { _inputs: inputs, send: partial, recv })
            }) as Box<dyn FnOnce() -> Result<RankBuffers> + Send + '_>
        })
        .collect();
    let buffers = on_ranks(names, work)?;
    let (send, mut recv): (Vec<DeviceBuffer>, Vec<DeviceBuffer>) =
        buffers.into_iter().map(|r| (r.send, r.recv)).unzip();
    match reduce {
        Reduce::ReduceScatter => collective.reduce_scatter(&send, &mut recv, chunk, CollectiveType::F32)?,
        Reduce::AllReduce => collective.all_reduce(&send, &mut recv, padded, CollectiveType::F32)?,
    }

    // Each rank's owned sums come to the host (m * n f32 values in all); C is written only after
    // every download succeeded.
    let mut owned_sums: Vec<(usize, Vec<f32>)> = Vec::with_capacity(devices);
    for d in 0..devices {
        let (range, offset) = match reduce {
            Reduce::ReduceScatter => {
                let r = (d * chunk).min(entries)..((d + 1) * chunk).min(entries);
                (r, 0)
            }
            Reduce::AllReduce => {
                let r = split(entries, devices)[d].clone();
                let start = r.start;
                (r, start * 4)
            }
        };
        let mut sums = vec![0f32; range.len()];
        streams[d].read_blocking(&recv[d], offset, &mut sums).map_err(|e| device_error(&names[d], e))?;
        owned_sums.push((range.start, sums));
    }
    for (first, sums) in owned_sums {
        super::finish_sums(p, c, first, &sums);
    }
    Ok(())
}
