//! RCCL/NCCL communicators and collectives (`nccl.h`).
//!
//! Each rank's part of a collective is an operation on that rank's HIP stream (so it is
//! ordered with the kernels and copies around it). The parts of one collective (the i-th
//! collective issued on each rank's communicator) meet at a rendezvous; the last to arrive
//! reads every rank's send buffer, reduces and writes every rank's receive buffer, and all
//! parts complete. Reductions of f16, bf16 and f32 are taken in f32 and of f64 in f64, in rank
//! order, and rounded once to the element type (RCCL rounds at every ring hop instead, so its
//! low bits may differ); integers wrap like C unsigned arithmetic.
//!
//! If the other ranks do not arrive within `collective_timeout_ms` (10 s by default) the part
//! fails: its stream gets `hipErrorLaunchTimeOut` and the communicator's asynchronous error
//! becomes `ncclRemoteError` (real RCCL would wait forever; this is the emulator's choice).
//!
//! Communicators made from an id of the TCP transport ([`crate::nccl_tcp`], `nccl=tcp`) have
//! their ranks in other processes; their parts exchange data over sockets instead of meeting at
//! a rendezvous, and compute the same bits.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{HipError, NcclError};
use crate::nccl_tcp::{self, Failure, Header, Mesh, TcpId};
use crate::runtime::{machine, registry, Dev};
use crate::stream::{submit, Stream};

/// The ranks of one communicator, shared by its [`Comm`]s.
#[derive(Debug)]
pub struct Clique {
    /// Number of ranks.
    pub nranks: usize,
    /// Rendezvous of collectives in flight, by per-rank sequence number.
    ops: Mutex<HashMap<u64, Arc<Rendezvous>>>,
}

impl Clique {
    fn new(nranks: usize) -> Arc<Self> {
        Arc::new(Self { nranks, ops: Mutex::new(HashMap::new()) })
    }
}

/// One rank's communicator.
#[derive(Debug)]
pub struct Comm {
    /// This rank.
    pub rank: usize,
    /// HIP device ordinal.
    pub device: usize,
    /// All ranks.
    pub clique: Arc<Clique>,
    /// Collectives issued on this communicator.
    next_op: AtomicU64,
    /// `ncclCommGetAsyncError`.
    pub async_error: Mutex<Option<NcclError>>,
    /// The connections to the other ranks, for a communicator of the TCP transport.
    pub tcp: Option<Arc<Mesh>>,
}

impl Comm {
    fn new(rank: usize, device: usize, clique: Arc<Clique>) -> Arc<Self> {
        Arc::new(Self { rank, device, clique, next_op: AtomicU64::new(0), async_error: Mutex::new(None), tcp: None })
    }

    /// `ncclCommAbort`: a TCP communicator shuts its connections down (its own blocked parts
    /// and its peers' fail at once); an in-process one fails the parts waiting at its
    /// rendezvous. Either way later collectives fail.
    pub fn abort(&self) {
        *self.async_error.lock() = Some(NcclError::Remote("the communicator was aborted".into()));
        if let Some(mesh) = &self.tcp {
            mesh.abort("ncclCommAbort");
        }
        let ops: Vec<Arc<Rendezvous>> = self.clique.ops.lock().values().cloned().collect();
        for rv in ops {
            let mut st = rv.state.lock();
            if st.outcome.is_none() {
                st.outcome = Some(Err(format!("rank {} aborted its communicator", self.rank)));
            }
            rv.cv.notify_all();
        }
    }
}

/// Element types (`ncclDataType_t`; fp8 types of newer RCCL are refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    /// `ncclInt8` 0.
    I8,
    /// `ncclUint8` 1.
    U8,
    /// `ncclInt32` 2.
    I32,
    /// `ncclUint32` 3.
    U32,
    /// `ncclInt64` 4.
    I64,
    /// `ncclUint64` 5.
    U64,
    /// `ncclFloat16` 6.
    F16,
    /// `ncclFloat32` 7.
    F32,
    /// `ncclFloat64` 8.
    F64,
    /// `ncclBfloat16` 9.
    Bf16,
}

impl DType {
    /// From `ncclDataType_t`.
    pub fn from_raw(v: i32) -> Result<Self, NcclError> {
        Ok(match v {
            0 => Self::I8,
            1 => Self::U8,
            2 => Self::I32,
            3 => Self::U32,
            4 => Self::I64,
            5 => Self::U64,
            6 => Self::F16,
            7 => Self::F32,
            8 => Self::F64,
            9 => Self::Bf16,
            _ => return Err(NcclError::invalid(format!("ncclDataType_t {v}"))),
        })
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Self::I8 | Self::U8 => 1,
            Self::F16 | Self::Bf16 => 2,
            Self::I32 | Self::U32 | Self::F32 => 4,
            Self::I64 | Self::U64 | Self::F64 => 8,
        }
    }
}

/// Reductions (`ncclRedOp_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedOp {
    /// `ncclSum` 0.
    Sum,
    /// `ncclProd` 1.
    Prod,
    /// `ncclMax` 2.
    Max,
    /// `ncclMin` 3.
    Min,
    /// `ncclAvg` 4.
    Avg,
}

impl RedOp {
    /// From `ncclRedOp_t`.
    pub fn from_raw(v: i32) -> Result<Self, NcclError> {
        Ok(match v {
            0 => Self::Sum,
            1 => Self::Prod,
            2 => Self::Max,
            3 => Self::Min,
            4 => Self::Avg,
            _ => return Err(NcclError::invalid(format!("ncclRedOp_t {v}"))),
        })
    }
}

/// Which collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `ncclAllReduce(count)`.
    AllReduce(RedOp),
    /// `ncclAllGather(sendcount)`.
    AllGather,
    /// `ncclReduceScatter(recvcount)`.
    ReduceScatter(RedOp),
}

/// One rank's part.
#[derive(Debug, Clone)]
struct Part {
    kind: Kind,
    count: usize,
    dtype: DType,
    send: u64,
    recv: u64,
    dev: Arc<Dev>,
}

#[derive(Debug, Default)]
struct RvState {
    parts: Vec<Option<Part>>,
    arrived: usize,
    left: usize,
    outcome: Option<Result<(), String>>,
}

#[derive(Debug, Default)]
struct Rendezvous {
    state: Mutex<RvState>,
    cv: Condvar,
}

fn decode(dtype: DType, b: &[u8]) -> f64 {
    match dtype {
        DType::F16 => f64::from(half::f16::from_le_bytes([b[0], b[1]]).to_f32()),
        DType::Bf16 => f64::from(half::bf16::from_le_bytes([b[0], b[1]]).to_f32()),
        DType::F32 => f64::from(f32::from_le_bytes(b.try_into().unwrap_or_default())),
        DType::F64 => f64::from_le_bytes(b.try_into().unwrap_or_default()),
        _ => 0.0,
    }
}

fn decode_int(dtype: DType, b: &[u8]) -> i128 {
    let mut w = [0u8; 8];
    w[..b.len()].copy_from_slice(b);
    let u = u64::from_le_bytes(w);
    match dtype {
        DType::I8 => i128::from(u as u8 as i8),
        DType::I32 => i128::from(u as u32 as i32),
        DType::I64 => i128::from(u as i64),
        _ => i128::from(u),
    }
}

/// Reduces equal-length byte vectors element-wise, in rank order.
fn reduce(dtype: DType, op: RedOp, inputs: &[Vec<u8>]) -> Vec<u8> {
    let size = dtype.size();
    let n = inputs.first().map_or(0, Vec::len) / size;
    let mut out = Vec::with_capacity(n * size);
    let float = matches!(dtype, DType::F16 | DType::Bf16 | DType::F32 | DType::F64);
    // f16/bf16/f32 accumulate in f32: each step is computed exactly in f64 and rounded to f32.
    let round = |v: f64| if dtype == DType::F64 { v } else { f64::from(v as f32) };
    for i in 0..n {
        let at = |r: usize| &inputs[r][i * size..(i + 1) * size];
        if float {
            let mut acc = decode(dtype, at(0));
            for r in 1..inputs.len() {
                let x = decode(dtype, at(r));
                acc = round(match op {
                    RedOp::Sum | RedOp::Avg => acc + x,
                    RedOp::Prod => acc * x,
                    RedOp::Max => acc.max(x),
                    RedOp::Min => acc.min(x),
                });
            }
            if op == RedOp::Avg {
                acc = round(acc / inputs.len() as f64);
            }
            match dtype {
                DType::F16 => out.extend_from_slice(&half::f16::from_f64(acc).to_le_bytes()),
                DType::Bf16 => out.extend_from_slice(&half::bf16::from_f64(acc).to_le_bytes()),
                DType::F32 => out.extend_from_slice(&(acc as f32).to_le_bytes()),
                _ => out.extend_from_slice(&acc.to_le_bytes()),
            }
        } else {
            let mut acc = decode_int(dtype, at(0));
            for r in 1..inputs.len() {
                let x = decode_int(dtype, at(r));
                acc = match op {
                    RedOp::Sum | RedOp::Avg => acc.wrapping_add(x),
                    RedOp::Prod => acc.wrapping_mul(x),
                    RedOp::Max => acc.max(x),
                    RedOp::Min => acc.min(x),
                };
            }
            if op == RedOp::Avg {
                acc /= inputs.len() as i128;
            }
            out.extend_from_slice(&acc.to_le_bytes()[..size]);
        }
    }
    out
}

/// Runs a complete collective: every part has arrived.
fn execute(parts: &[Part]) -> Result<(), String> {
    let first = &parts[0];
    for (r, p) in parts.iter().enumerate() {
        if p.kind != first.kind || p.count != first.count || p.dtype != first.dtype {
            return Err(format!(
                "ranks disagree: rank 0 issued {:?} of {} x {:?}, rank {r} {:?} of {} x {:?}",
                first.kind, first.count, first.dtype, p.kind, p.count, p.dtype
            ));
        }
    }
    let nranks = parts.len();
    let size = first.dtype.size();
    let send_elems = match first.kind {
        Kind::AllReduce(_) | Kind::AllGather => first.count,
        Kind::ReduceScatter(_) => first.count * nranks,
    };
    let mut sends = Vec::with_capacity(nranks);
    for p in parts {
        if p.dev.is_lost() {
            return Err(format!("device {} was lost", p.dev.ordinal));
        }
        let mut b = vec![0u8; send_elems * size];
        p.dev.emu.copy_out(p.send, &mut b).map_err(|e| format!("rank send buffer: {e}"))?;
        sends.push(b);
    }
    let results: Vec<Vec<u8>> = match first.kind {
        Kind::AllReduce(op) => {
            let all = reduce(first.dtype, op, &sends);
            vec![all; nranks]
        }
        Kind::AllGather => vec![sends.concat(); nranks],
        Kind::ReduceScatter(op) => {
            let all = reduce(first.dtype, op, &sends);
            all.chunks(first.count * size).map(<[u8]>::to_vec).collect()
        }
    };
    for (p, bytes) in parts.iter().zip(results) {
        p.dev.emu.copy_in(p.recv, &bytes).map_err(|e| format!("rank receive buffer: {e}"))?;
    }
    Ok(())
}

/// One rank's part, run on its stream.
fn run_part(comm: &Arc<Comm>, seq: u64, part: Part, timeout: Duration) -> Result<(), HipError> {
    if let Some(mesh) = &comm.tcp {
        return run_tcp_part(comm, mesh, seq, &part, timeout);
    }
    let clique = &comm.clique;
    let rv = clique.ops.lock().entry(seq).or_default().clone();
    let mut st = rv.state.lock();
    if st.parts.is_empty() {
        st.parts = vec![None; clique.nranks];
    }
    st.parts[comm.rank] = Some(part);
    st.arrived += 1;
    if st.arrived == clique.nranks && st.outcome.is_none() {
        let parts: Vec<Part> = st.parts.iter().flatten().cloned().collect();
        st.outcome = Some(execute(&parts));
        rv.cv.notify_all();
    }
    let deadline = Instant::now() + timeout;
    while st.outcome.is_none() {
        if rv.cv.wait_until(&mut st, deadline).timed_out() && st.outcome.is_none() {
            st.outcome = Some(Err(format!(
                "collective {seq} of rank {}: {} of {} ranks arrived within {} ms",
                comm.rank,
                st.arrived,
                clique.nranks,
                timeout.as_millis()
            )));
            rv.cv.notify_all();
        }
    }
    let outcome = st.outcome.clone().unwrap_or(Ok(()));
    st.left += 1;
    if st.left == clique.nranks {
        clique.ops.lock().remove(&seq);
    }
    drop(st);
    outcome.map_err(|why| {
        let timed_out = why.contains("arrived within");
        *comm.async_error.lock() =
            Some(if timed_out { NcclError::Remote(why.clone()) } else { NcclError::InvalidUsage(why.clone()) });
        if timed_out {
            HipError::LaunchTimeOut(why)
        } else {
            HipError::LaunchFailure(why)
        }
    })
}

fn kind_code(kind: Kind) -> u16 {
    let op = |o: RedOp| o as u16;
    match kind {
        Kind::AllReduce(o) => 0x100 | op(o),
        Kind::AllGather => 0x200,
        Kind::ReduceScatter(o) => 0x300 | op(o),
    }
}

/// One rank's part of a collective of a TCP communicator: exchange, then compute this rank's
/// receive buffer as [`execute`] does for every rank.
fn run_tcp_part(comm: &Comm, mesh: &Mesh, seq: u64, part: &Part, timeout: Duration) -> Result<(), HipError> {
    let nranks = mesh.nranks;
    let size = part.dtype.size();
    let send_elems = match part.kind {
        Kind::AllReduce(_) | Kind::AllGather => part.count,
        Kind::ReduceScatter(_) => part.count * nranks,
    };
    let fail = |f: Failure| {
        let why = f.message().to_owned();
        let (nccl, hip) = match f {
            Failure::Timeout(_) => (NcclError::Remote(why.clone()), HipError::LaunchTimeOut(why)),
            Failure::Disagree(_) => (NcclError::InvalidUsage(why.clone()), HipError::LaunchFailure(why)),
            Failure::PeerLost(_) | Failure::Broken(_) => (NcclError::Remote(why.clone()), HipError::LaunchFailure(why)),
        };
        *comm.async_error.lock() = Some(nccl);
        hip
    };
    let mut mine = vec![0u8; send_elems * size];
    let own = if part.dev.is_lost() {
        Err(format!("device {} was lost", part.dev.ordinal))
    } else {
        part.dev.emu.copy_out(part.send, &mut mine).map_err(|e| format!("rank send buffer: {e}"))
    };
    if let Err(why) = own {
        // This rank cannot take part: its peers must not wait for it.
        mesh.abort(&why);
        return Err(fail(Failure::Broken(why)));
    }
    let header = Header {
        seq,
        kind: kind_code(part.kind),
        count: part.count as u64,
        dtype: part.dtype as u16,
        bytes: mine.len() as u64,
    };
    let all = mesh.exchange(header, mine, timeout).map_err(fail)?;
    let out = match part.kind {
        Kind::AllReduce(op) => reduce(part.dtype, op, &all),
        Kind::AllGather => all.concat(),
        Kind::ReduceScatter(op) => {
            let bytes = part.count * size;
            reduce(part.dtype, op, &all)[mesh.rank * bytes..(mesh.rank + 1) * bytes].to_vec()
        }
    };
    part.dev.emu.copy_in(part.recv, &out).map_err(|e| fail(Failure::Broken(format!("rank receive buffer: {e}"))))
}

thread_local! {
    /// `ncclGroupStart` nesting of this thread, and what the outermost `ncclGroupEnd` will do.
    static GROUP: RefCell<(usize, Vec<Deferred>)> = const { RefCell::new((0, Vec::new())) };
}

type Deferred = Box<dyn FnOnce() -> Result<(), NcclError>>;

/// Runs `f` now, or at the outermost `ncclGroupEnd` when a group is open.
fn now_or_deferred(f: Deferred) -> Result<(), NcclError> {
    let deferred = GROUP.with(|g| {
        let mut g = g.borrow_mut();
        if g.0 > 0 {
            g.1.push(f);
            None
        } else {
            Some(f)
        }
    });
    deferred.map_or(Ok(()), |f| f())
}

/// `ncclGroupStart`.
pub fn group_start() {
    GROUP.with(|g| g.borrow_mut().0 += 1);
}

/// `ncclGroupEnd`: at the outermost level, issues what the group collected, in order, and
/// returns the first error.
pub fn group_end() -> Result<(), NcclError> {
    let work = GROUP.with(|g| {
        let mut g = g.borrow_mut();
        if g.0 == 0 {
            return Err(NcclError::InvalidUsage("ncclGroupEnd without ncclGroupStart".into()));
        }
        g.0 -= 1;
        Ok(if g.0 == 0 { std::mem::take(&mut g.1) } else { Vec::new() })
    })?;
    let mut first = Ok(());
    for f in work {
        if let Err(e) = f() {
            if first.is_ok() {
                first = Err(e);
            }
        }
    }
    first
}

fn hip_err(e: HipError) -> NcclError {
    NcclError::UnhandledHip(e)
}

fn timeout() -> Duration {
    Duration::from_millis(machine().config.collective_timeout_ms)
}

/// Checks that `[addr, addr + bytes)` is device memory of `dev`.
fn check_buffer(dev: &Dev, addr: u64, bytes: usize, what: &str) -> Result<(), NcclError> {
    if bytes == 0 {
        return Ok(());
    }
    if addr == 0 {
        return Err(NcclError::invalid(format!("{what} is null")));
    }
    dev.find_alloc(addr, bytes as u64).map(drop).ok_or_else(|| {
        NcclError::invalid(format!(
            "{what} {addr:#x} (+{bytes} bytes) is not inside an allocation of the communicator's device {}",
            dev.ordinal
        ))
    })
}

/// `ncclAllReduce`, `ncclAllGather`, `ncclReduceScatter`: validates at the call, then queues
/// (or, inside a group, defers) the rank's part on `stream`.
pub fn collective(
    kind: Kind,
    send: u64,
    recv: u64,
    count: usize,
    dtype: i32,
    comm: usize,
    stream: usize,
) -> Result<(), NcclError> {
    let dtype = DType::from_raw(dtype)?;
    if comm == 0 {
        return Err(NcclError::invalid("null communicator"));
    }
    let comm = registry::comm(comm).map_err(|_| NcclError::invalid(format!("communicator {comm:#x}")))?;
    let m = machine();
    let dev = m.device(comm.device as i32).map_err(hip_err)?;
    let s: Arc<Stream> = if stream == 0 {
        dev.null_stream.clone()
    } else {
        registry::stream(stream).map_err(|_| NcclError::invalid(format!("stream {stream:#x}")))?
    };
    if s.device != dev.ordinal {
        return Err(NcclError::invalid(format!(
            "stream of device {} for the communicator of device {}",
            s.device, dev.ordinal
        )));
    }
    let nranks = comm.clique.nranks;
    let size = dtype.size();
    let (send_bytes, recv_bytes) = match kind {
        Kind::AllReduce(_) => (count * size, count * size),
        Kind::AllGather => (count * size, count * size * nranks),
        Kind::ReduceScatter(_) => (count * size * nranks, count * size),
    };
    if count == 0 {
        return Ok(());
    }
    check_buffer(&dev, send, send_bytes, "sendbuff")?;
    check_buffer(&dev, recv, recv_bytes, "recvbuff")?;
    // In-place rules of nccl.h: AllReduce sendbuff == recvbuff; AllGather sendbuff ==
    // recvbuff + rank * sendcount; ReduceScatter recvbuff == sendbuff + rank * recvcount.
    // Any other overlap is refused.
    let rank_off = (comm.rank * count * size) as u64;
    let in_place = match kind {
        Kind::AllReduce(_) => send == recv,
        Kind::AllGather => send == recv + rank_off,
        Kind::ReduceScatter(_) => recv == send + rank_off,
    };
    let overlap = send < recv + recv_bytes as u64 && recv < send + send_bytes as u64;
    if overlap && !in_place {
        return Err(NcclError::invalid("send and receive buffers overlap but the call is not in place"));
    }
    dev.touch().map_err(hip_err)?;
    let timeout = timeout();
    now_or_deferred(Box::new(move || {
        let seq = comm.next_op.fetch_add(1, Ordering::SeqCst);
        let part = Part { kind, count, dtype, send, recv, dev: dev.clone() };
        dev.counters.collectives.fetch_add(1, Ordering::Relaxed);
        let c = comm.clone();
        submit(&dev, &s, Box::new(move || run_part(&c, seq, part, timeout)));
        Ok(())
    }))
}

/// Creates the communicators of `devices` (rank i on `devices[i]`).
pub fn init_all(devices: &[i32]) -> Result<Vec<usize>, NcclError> {
    if devices.is_empty() {
        return Err(NcclError::invalid("ncclCommInitAll with ndev < 1"));
    }
    let m = machine();
    for (i, &d) in devices.iter().enumerate() {
        m.device(d).map_err(|e| NcclError::invalid(format!("rank {i}: {e}")))?;
        if devices[..i].contains(&d) {
            return Err(NcclError::InvalidUsage(format!("duplicate device {d} (rank {i})")));
        }
    }
    let clique = Clique::new(devices.len());
    Ok(devices
        .iter()
        .enumerate()
        .map(|(r, &d)| registry::insert_comm(Comm::new(r, d as usize, clique.clone())))
        .collect())
}

/// `NCCL_UNIQUE_ID_BYTES`.
pub const UNIQUE_ID_BYTES: usize = 128;
const ID_MAGIC: &[u8; 8] = b"GEMMEMU1";

/// A fresh `ncclUniqueId`: with `nccl=tcp`, a TCP root's ([`nccl_tcp::new_root`]); otherwise
/// for ranks in this process: a magic, a process-wide counter and the process id.
pub fn unique_id() -> Result<[u8; UNIQUE_ID_BYTES], NcclError> {
    if machine().config.nccl_tcp {
        ignore_sigpipe();
        return nccl_tcp::new_root(timeout());
    }
    Ok(local_unique_id())
}

/// Writing to a socket whose peer died raises SIGPIPE, which kills a C program that keeps the
/// default action; the TCP transport wants the `EPIPE` error instead. Rust programs already
/// ignore it; a handler the host installed is left alone.
fn ignore_sigpipe() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `signal` with a valid signal number and `SIG_IGN`; the previous handler is
        // restored at once unless it was the default.
        unsafe {
            let old = libc::signal(libc::SIGPIPE, libc::SIG_IGN);
            if old != libc::SIG_DFL && old != libc::SIG_ERR {
                libc::signal(libc::SIGPIPE, old);
            }
        }
    });
}

fn local_unique_id() -> [u8; UNIQUE_ID_BYTES] {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let mut id = [0u8; UNIQUE_ID_BYTES];
    id[..8].copy_from_slice(ID_MAGIC);
    id[8..16].copy_from_slice(&NEXT.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    id[16..20].copy_from_slice(&std::process::id().to_le_bytes());
    id
}

struct Join {
    nranks: usize,
    clique: Arc<Clique>,
    devices: Vec<Option<usize>>,
    joined: usize,
}

/// Communicators being initialised by `ncclCommInitRank`, by unique id.
type Joins = Mutex<HashMap<[u8; UNIQUE_ID_BYTES], Join>>;

static JOINS: LazyLock<(Joins, Condvar)> = LazyLock::new(|| (Mutex::new(HashMap::new()), Condvar::new()));

/// Communicators whose initialisation has not completed.
pub fn pending_joins() -> usize {
    JOINS.0.lock().len()
}

/// `ncclCommInitRank` on the calling thread's current HIP device. Outside a group it blocks
/// until all `nranks` ranks have joined (or the collective timeout passes:
/// `ncclRemoteError`); inside a group it returns the handle at once and the outermost
/// `ncclGroupEnd` waits.
pub fn init_rank(nranks: i32, id: [u8; UNIQUE_ID_BYTES], rank: i32) -> Result<usize, NcclError> {
    let (Ok(n), Ok(r)) = (usize::try_from(nranks), usize::try_from(rank)) else {
        return Err(NcclError::invalid(format!("rank {rank} of {nranks}")));
    };
    if n == 0 || r >= n {
        return Err(NcclError::invalid(format!("rank {rank} of {nranks}")));
    }
    if let Some(tcp) = TcpId::parse(&id) {
        let tcp = tcp?;
        let dev = machine().current().map_err(hip_err)?;
        ignore_sigpipe();
        let mesh = nccl_tcp::join(&tcp, n, r, timeout())?;
        let comm = Comm {
            rank: r,
            device: dev.ordinal,
            clique: Clique::new(n),
            next_op: AtomicU64::new(0),
            async_error: Mutex::new(None),
            tcp: Some(Arc::new(mesh)),
        };
        return Ok(registry::insert_comm(Arc::new(comm)));
    }
    if &id[..8] != ID_MAGIC {
        return Err(NcclError::invalid("the unique id was not made by ncclGetUniqueId"));
    }
    let dev = machine().current().map_err(hip_err)?;
    let (lock, cv) = &*JOINS;
    let mut joins = lock.lock();
    let j = joins.entry(id).or_insert_with(|| Join {
        nranks: n,
        clique: Clique::new(n),
        devices: vec![None; n],
        joined: 0,
    });
    if j.nranks != n {
        return Err(NcclError::invalid(format!("nranks {n}; other ranks of this id said {}", j.nranks)));
    }
    if j.devices[r].is_some() {
        return Err(NcclError::InvalidUsage(format!("rank {r} joined twice")));
    }
    if j.devices.contains(&Some(dev.ordinal)) {
        return Err(NcclError::InvalidUsage(format!("duplicate device {} (rank {r})", dev.ordinal)));
    }
    j.devices[r] = Some(dev.ordinal);
    j.joined += 1;
    let handle = registry::insert_comm(Comm::new(r, dev.ordinal, j.clique.clone()));
    if j.joined == n {
        joins.remove(&id);
        cv.notify_all();
    }
    drop(joins);
    let wait = move || -> Result<(), NcclError> {
        let deadline = Instant::now() + timeout();
        let (lock, cv) = &*JOINS;
        let mut joins = lock.lock();
        while joins.get(&id).is_some_and(|j| j.devices[r].is_some()) {
            if cv.wait_until(&mut joins, deadline).timed_out() {
                if let Some(j) = joins.get_mut(&id) {
                    j.devices[r] = None;
                    j.joined -= 1;
                    if j.joined == 0 {
                        joins.remove(&id);
                    }
                }
                let _ = registry::remove_comm(handle);
                return Err(NcclError::Remote(format!("rank {r}: the other ranks never joined")));
            }
        }
        Ok(())
    };
    let in_group = GROUP.with(|g| g.borrow().0 > 0);
    if in_group {
        now_or_deferred(Box::new(wait))?;
    } else {
        wait()?;
    }
    Ok(handle)
}
