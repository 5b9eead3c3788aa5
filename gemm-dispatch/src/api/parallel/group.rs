//! Tensor parallelism in the caller's world: one process (or thread) per GPU, any number of
//! nodes, an RCCL communicator that belongs to the job.
//!
//! Inference pipelines (vLLM, SGLang, torchrun jobs) run one process per GPU and share an RCCL
//! communicator created from a unique id that their launcher hands around. A [`TpGroup`] is this
//! library's handle on such a communicator, on one GPU of this process:
//!
//! * [`TpGroup::create`]: joins the communicator of a unique id ([`Context::tp_unique_id`] on
//!   one rank, its 128 bytes passed to every rank by the caller's launcher). The group owns the
//!   communicator and destroys it on drop.
//! * [`TpGroup::from_comm`]: wraps an `ncclComm_t` the caller already has (PyTorch's process
//!   group, their framework's), **borrowed**: never destroyed here.
//!
//! RCCL does the transport (within a node and across nodes); the library only issues
//! collectives. The unique id is the only thing that crosses the process boundary through the
//! caller; everything else goes through the communicator.
//!
//! The plans work on each rank's shard in device memory, queued on the caller's stream:
//!
//! * [`TpGroup::column`]: `Y_shard = X * W_shard` (W split by columns), optionally all-gathered
//!   into the whole `Y` on every rank.
//! * [`TpGroup::row`]: `Y = sum over ranks of X_shard * W_shard` (K split), summed by an
//!   all-reduce (every rank gets all of Y) or a reduce-scatter (rank `r` gets rows
//!   [`TpGroup::scatter_rows`]), in C's dtype: f32 C reduces in f32, bf16/f16 C in that dtype —
//!   the caller asks by choosing C's dtype.
//! * [`TpGroup::mlp`]: a Megatron MLP: `H = act(X * W_up_shard)` (column-parallel, no
//!   communication), then `Y = sum H * W_down_shard` with one all-reduce.
//!
//! **Overlap**: the communication of one chunk of rows overlaps the GEMM of the next. M is split
//! into [`TpOptions::chunks`] chunks; each chunk's GEMM is queued on the caller's stream, an event
//! makes the group's communication stream wait for it, and the chunk's collective runs there
//! while the next GEMM runs. `overlap: false` queues one GEMM and one collective on the caller's
//! stream. Both launch the **same kernel** (chosen for the whole problem and pinned for the
//! chunks), and each row of a GEMM's output depends only on its row of X, so overlap on and off
//! give the same bits.
//!
//! **Agreement**: every call first all-gathers a small descriptor of the call (plan, sizes,
//! dtypes, transposes, scalars, options) and compares it: ranks that disagree get
//! [`TpError::Disagree`] (real RCCL would hang or compute garbage on mismatched collectives).
//!
//! **Timeout and failures**: a call returns once its result is in the caller's buffer; while its
//! collectives run, the calling thread watches the streams and the communicator's asynchronous
//! error. A peer that dies makes RCCL report a remote error (or, on the emulated runtime, the
//! connection close) and the call fails with [`TpError::PeerLost`]; if nothing finishes within
//! [`TpOptions::timeout`] the call fails with [`TpError::Timeout`]. Either way the communicator
//! is aborted (`ncclCommAbort`: it can no longer be trusted to be in step) and the group
//! answers [`TpError::Aborted`] from then on. The results are computed into the group's
//! workspaces and copied into the caller's output only after every collective succeeded, so a
//! failed call leaves the output untouched.
//!
//! Layout: row-major (as framework tensors are), `beta = 0` (a layer's output is not
//! accumulated; with K split, `beta * C` would be added once per rank). Transposes and leading
//! dimensions of X and W are free; outputs take `p.ldc`, the gathered Y is tight.

use super::{split, Reduce};
use crate::api::context::Context;
use crate::api::device::{DeviceSlice, DeviceSliceMut, Gpu, GpuStream};
use crate::backends::hip::DeviceSpan;
use crate::error::{Error, Result, TpError};
use crate::plan::kernel_plan;
use crate::Activation;
use gemm_core::{DType, Element, GemmProblem, Layout, Transpose};
use gemm_kernels::KernelEntry;
use gemm_rocm::nccl::{Communicator, DataType, Nccl, RedOp, UniqueId};
use parking_lot::Mutex;
use std::ops::Range;
use std::time::{Duration, Instant};

/// Bytes of a unique id (`NCCL_UNIQUE_ID_BYTES`).
pub const UNIQUE_ID_BYTES: usize = 128;

/// How a group runs its calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TpOptions {
    /// How long a call may wait for its collectives (and [`TpGroup::create`] for the other
    /// ranks to join, where the library honours it) before it aborts the communicator.
    pub timeout: Duration,
    /// Overlap each chunk's collective with the next chunk's GEMM.
    pub overlap: bool,
    /// Chunks of rows when overlapping (at least 1).
    pub chunks: usize,
}

impl Default for TpOptions {
    /// 10 minutes (PyTorch's default for NCCL process groups), overlap on, 4 chunks.
    fn default() -> Self {
        Self { timeout: Duration::from_secs(600), overlap: true, chunks: 4 }
    }
}

/// What [`TpGroup::status`] says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TpStatus {
    /// Usable.
    Ok,
    /// The communicator reported an asynchronous error (a peer is gone, say); the next call
    /// will fail and abort the group.
    Failed(String),
    /// Aborted: by [`TpGroup::abort`] or by a failed call.
    Aborted(String),
}

/// One rank of a tensor-parallel group: a GPU of this process and the job's communicator. See
/// the [module docs](self).
pub struct TpGroup {
    gpu: Gpu,
    comm: Mutex<Option<Communicator>>,
    aborted: Mutex<Option<String>>,
    rank: usize,
    nranks: usize,
    options: TpOptions,
    comm_stream: GpuStream,
}

impl std::fmt::Debug for TpGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TpGroup")
            .field("gpu", &self.gpu.name())
            .field("rank", &self.rank)
            .field("nranks", &self.nranks)
            .field("options", &self.options)
            .finish()
    }
}

fn tp(e: TpError) -> Error {
    Error::Tp(e)
}

fn invalid(why: impl Into<String>) -> Error {
    Error::Invalid(gemm_core::Error::InvalidArgument(why.into()))
}

/// RCCL of `gpu`: the library given at discovery, else `GEMM_RCCL_LIBRARY` / `librccl`.
fn library(gpu: &Gpu) -> Result<Nccl> {
    match gpu.backend().rccl() {
        Some(n) => Ok(n.clone()),
        None => Nccl::load().map_err(|e| tp(TpError::Comm(format!("RCCL: {e}")))),
    }
}

/// The `ncclResult_t` of a gemm-rocm error, if it is an RCCL one.
fn nccl_code(e: &gemm_rocm::Error) -> Option<i32> {
    match e {
        gemm_rocm::Error::Nccl(n) => Some(n.code),
        _ => None,
    }
}

/// A communicator failure as a typed error: `ncclRemoteError` (6) and `ncclSystemError` (2,
/// sockets) mean a peer is gone, `ncclTimeout` (8) a timeout, `ncclInvalidUsage` (5) ranks that
/// do not match.
fn comm_error(e: &gemm_rocm::Error, ms: u64) -> TpError {
    match nccl_code(e) {
        Some(2 | 6) => TpError::PeerLost(e.to_string()),
        Some(8) => TpError::Timeout { ms, what: e.to_string() },
        Some(5) => TpError::Disagree(e.to_string()),
        _ => TpError::Comm(e.to_string()),
    }
}

impl Context {
    /// A fresh unique id from the RCCL of device `device` (`ncclGetUniqueId`): call it on one
    /// rank and pass the bytes to every rank's [`TpGroup::create`] (a pipeline's launcher does
    /// this with its own channel: a file, a TCP store, `torch.distributed`'s broadcast).
    pub fn tp_unique_id(&self, device: usize) -> Result<[u8; UNIQUE_ID_BYTES]> {
        let nccl = library(&self.gpu(device)?)?;
        nccl.unique_id().map(|id| id.to_bytes()).map_err(|e| tp(comm_error(&e, 0)))
    }
}

/// The caller's view of a copy: `rows` rows of `cols` elements of `esize` bytes.
fn need_bytes(rows: usize, cols: usize, ld: usize, esize: usize) -> Option<usize> {
    if rows == 0 || cols == 0 {
        return Some(0);
    }
    (rows - 1).checked_mul(ld)?.checked_add(cols)?.checked_mul(esize)
}

fn check_out(
    what: &str,
    span: DeviceSpan,
    device: i32,
    rows: usize,
    cols: usize,
    ld: usize,
    dtype: DType,
) -> Result<()> {
    if span.device != device {
        return Err(Error::WrongDevice { what: what.into(), found: span.device, expected: device });
    }
    if ld < cols {
        return Err(invalid(format!("{what}: leading dimension {ld} < {cols} columns")));
    }
    let bytes = need_bytes(rows, cols, ld, dtype.size_bytes())
        .ok_or_else(|| Error::Invalid(gemm_core::Error::Overflow(format!("{what} in bytes"))))?;
    if span.len < bytes {
        return Err(invalid(format!("{what}: {} bytes, {bytes} needed ({rows} x {cols}, ld {ld}, {dtype})", span.len)));
    }
    if !span.address.is_multiple_of(dtype.size_bytes() as u64) {
        return Err(Error::Misaligned { operand: gemm_core::Operand::C, dtype });
    }
    Ok(())
}

fn collective_dtype(d: DType) -> Result<DataType> {
    match d {
        DType::F32 => Ok(DataType::F32),
        DType::Bf16 => Ok(DataType::Bf16),
        DType::F16 => Ok(DataType::F16),
        _ => Err(invalid(format!(
            "collectives do not move {d}: the output of a reduced or gathered plan is f32, bf16 or f16"
        ))),
    }
}

fn dtype_code(d: DType) -> u64 {
    DType::ALL.iter().position(|&x| x == d).map_or(u64::MAX, |i| i as u64)
}

/// The words of a call's descriptor, by name (for the disagreement message).
const FIELDS: [&str; 16] = [
    "plan",
    "m",
    "n",
    "k",
    "A dtype",
    "B dtype",
    "C dtype",
    "transposes",
    "alpha",
    "option (row: the reduction; MLP: the activation, u64::MAX where the rank's shard has no fused kernel for it)",
    "overlap",
    "chunks",
    "second n",
    "second k",
    "second dtypes",
    "second alpha",
];

/// The descriptor of a call, compared across ranks; `varying` lists the words that may differ
/// (a rank's shard width or depth).
#[derive(Clone, Copy, Debug)]
struct Descriptor {
    words: [u64; 16],
    varying: u32,
}

fn describe(plan: u64, p: &GemmProblem, option: u64, options: &TpOptions) -> [u64; 16] {
    let tr = |t: Transpose| u64::from(t == Transpose::Yes);
    [
        plan,
        p.m as u64,
        p.n as u64,
        p.k as u64,
        dtype_code(p.a_type),
        dtype_code(p.b_type),
        dtype_code(p.c_type),
        tr(p.trans_a) | (tr(p.trans_b) << 1),
        u64::from(p.alpha.to_bits()),
        option,
        u64::from(options.overlap),
        options.chunks as u64,
        0,
        0,
        0,
        0,
    ]
}

fn check_problem(p: &GemmProblem, what: &str) -> Result<()> {
    p.validate()?;
    if p.layout != Layout::RowMajor {
        return Err(invalid(format!("{what}: tensor-parallel groups take row-major operands")));
    }
    if p.beta != 0.0 {
        return Err(invalid(format!(
            "{what}: beta must be 0 (a layer's output is not accumulated; with K split, beta * C would be added on every rank)"
        )));
    }
    Ok(())
}

/// Elements between consecutive rows of op(A) in a row-major problem.
fn a_row_stride(p: &GemmProblem) -> usize {
    match p.trans_a {
        Transpose::No => p.lda,
        Transpose::Yes => 1,
    }
}

/// Rows per chunk step: chunk starts (and reduce-scatter blocks) are multiples of this many rows,
/// so that A stays as aligned at every chunk as at row 0 for any kernel of the catalogue (the
/// widest alignment in bytes, as rows of at least one byte). The same on every rank of one
/// architecture, whatever its shard: the ranks must issue the same collectives.
pub fn granularity(arch: gemm_core::Arch) -> usize {
    gemm_kernels::for_arch(arch).map(|e| 2 * e.align_elems.max(1) as usize).max().unwrap_or(1)
}

/// The rows of M that rank `r` of `nranks` receives from a reduce-scatter on `arch`: blocks of
/// `ceil(m / nranks)` rows rounded up to [`granularity`] (so that every block starts aligned),
/// the last ranks' shorter or empty.
pub fn scatter_rows(m: usize, nranks: usize, r: usize, arch: gemm_core::Arch) -> Range<usize> {
    let per = scatter_block(m, nranks, arch);
    (r * per).min(m)..((r + 1) * per).min(m)
}

/// The rows of one rank's block in [`scatter_rows`].
fn scatter_block(m: usize, nranks: usize, arch: gemm_core::Arch) -> usize {
    let g = granularity(arch);
    m.div_ceil(nranks.max(1)).div_ceil(g) * g
}

/// The workspaces of one call ([`TpGroup::call`] drops them after any abort).
#[derive(Default)]
struct Scratch(std::cell::RefCell<Vec<crate::DeviceVec<u8>>>);

/// One GEMM launch of a plan: `rows` of the problem's M, A at `a`, C at `c` with `ldc`.
struct Launch {
    rows: Range<usize>,
    c: u64,
    ldc: usize,
}

impl TpGroup {
    /// Joins the communicator of `unique_id` as `rank` of `nranks` on GPU `device` of `ctx`
    /// (`ncclCommInitRank`; blocks until every rank has joined). A rank out of range is
    /// [`TpError::RankOutOfRange`]; an id of the wrong length, all zeros, malformed or stale is
    /// [`TpError::UniqueId`]; ranks that joined with another `nranks` are
    /// [`TpError::Disagree`]; ranks that never come are [`TpError::PeerLost`] (where RCCL has a
    /// join timeout: the emulated runtime's, or `NCCL_COMM_BLOCKING=0` setups).
    pub fn create(
        ctx: &Context,
        device: usize,
        unique_id: &[u8],
        nranks: usize,
        rank: usize,
        options: TpOptions,
    ) -> Result<Self> {
        if nranks == 0 || rank >= nranks {
            return Err(tp(TpError::RankOutOfRange { rank, nranks }));
        }
        let bytes: [u8; UNIQUE_ID_BYTES] = unique_id.try_into().map_err(|_| {
            tp(TpError::UniqueId(format!("{} bytes; a unique id has {UNIQUE_ID_BYTES}", unique_id.len())))
        })?;
        if bytes.iter().all(|&b| b == 0) {
            return Err(tp(TpError::UniqueId("all zeros: not an id ncclGetUniqueId made".into())));
        }
        Self::check_options(&options)?;
        let gpu = ctx.gpu(device)?;
        let nccl = library(&gpu)?;
        let ms = options.timeout.as_millis() as u64;
        gpu.backend()
            .device()
            .set_current()
            .map_err(|e| Error::Device { device: gpu.name().into(), message: e.to_string() })?;
        let comm = nccl.init_rank(nranks, &UniqueId::from_bytes(bytes), rank).map_err(|e| {
            tp(match nccl_code(&e) {
                Some(4) => TpError::UniqueId(e.to_string()),
                _ => comm_error(&e, ms),
            })
        })?;
        Self::with_comm(gpu, comm, Some((nranks, rank)), options)
    }

    /// Wraps the caller's communicator `comm` (an `ncclComm_t` of the RCCL this library loads)
    /// for GPU `device` of `ctx`, without owning it: dropping the group leaves it alive.
    /// Its rank count, rank and device are asked of RCCL; a device other than `device`'s is
    /// `WrongDevice`.
    ///
    /// # Safety
    /// `comm` is a live communicator of the same loaded RCCL, alive as long as the group, and
    /// the caller issues nothing on it while a call of the group runs.
    pub unsafe fn from_comm(
        ctx: &Context,
        device: usize,
        comm: *mut std::ffi::c_void,
        options: TpOptions,
    ) -> Result<Self> {
        Self::check_options(&options)?;
        let gpu = ctx.gpu(device)?;
        let nccl = library(&gpu)?;
        // SAFETY: this function's contract.
        let comm = unsafe { nccl.borrow_raw(comm.cast()) }.map_err(|e| tp(TpError::Comm(e.to_string())))?;
        Self::with_comm(gpu, comm, None, options)
    }

    fn check_options(options: &TpOptions) -> Result<()> {
        if options.chunks == 0 {
            return Err(invalid("TpOptions::chunks must be at least 1"));
        }
        if options.timeout.is_zero() {
            return Err(invalid("TpOptions::timeout must be positive"));
        }
        Ok(())
    }

    fn with_comm(gpu: Gpu, comm: Communicator, expect: Option<(usize, usize)>, options: TpOptions) -> Result<Self> {
        let ask = |e: gemm_rocm::Error| tp(TpError::Comm(e.to_string()));
        let nranks = comm.count().map_err(ask)?;
        let rank = comm.rank().map_err(ask)?;
        let device = comm.device().map_err(ask)?;
        if let Some((n, r)) = expect {
            if (n, r) != (nranks, rank) {
                return Err(tp(TpError::Comm(format!("RCCL says rank {rank} of {nranks}, asked for {r} of {n}"))));
            }
        }
        if device != gpu.ordinal() {
            return Err(Error::WrongDevice { what: "the communicator".into(), found: device, expected: gpu.ordinal() });
        }
        let comm_stream = gpu.create_stream()?;
        Ok(Self { gpu, comm: Mutex::new(Some(comm)), aborted: Mutex::new(None), rank, nranks, options, comm_stream })
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of ranks.
    pub fn nranks(&self) -> usize {
        self.nranks
    }

    /// The GPU this rank runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// The options.
    pub fn options(&self) -> TpOptions {
        self.options
    }

    /// Whether the communicator is the group's own (made by [`Self::create`]) rather than the
    /// caller's.
    pub fn owns_communicator(&self) -> bool {
        self.comm.lock().as_ref().is_some_and(Communicator::is_owned)
    }

    /// The rows of M that rank `r`'s reduce-scatter output holds ([`scatter_rows`]).
    pub fn scatter_rows(&self, m: usize, r: usize) -> Range<usize> {
        scatter_rows(m, self.nranks, r, self.gpu.arch())
    }

    /// Usable, failed asynchronously, or aborted. Does not block (`ncclCommGetAsyncError`).
    pub fn status(&self) -> TpStatus {
        if let Some(why) = self.aborted.lock().clone() {
            return TpStatus::Aborted(why);
        }
        // A call in flight holds the communicator; it reports for itself.
        let Some(guard) = self.comm.try_lock() else { return TpStatus::Ok };
        match guard.as_ref().map(Communicator::async_error) {
            Some(Err(e)) => TpStatus::Failed(e.to_string()),
            _ => TpStatus::Ok,
        }
    }

    /// Aborts the communicator (`ncclCommAbort`, also for a borrowed one: the caller asked):
    /// collectives in flight stop, and every later call is [`TpError::Aborted`]. Waits for a
    /// call in flight on another thread to return first.
    pub fn abort(&self) -> Result<()> {
        let comm = self.comm.lock().take();
        self.aborted.lock().get_or_insert_with(|| "aborted by the caller".into());
        match comm {
            Some(c) => c.abort().map_err(|e| tp(TpError::Comm(e.to_string()))),
            None => Ok(()),
        }
    }

    /// Runs one call with the communicator held; a failure of its collectives aborts the group.
    fn call<T>(&self, stream: &GpuStream, f: impl FnOnce(&Communicator, &Scratch) -> Result<T>) -> Result<T> {
        if stream.device() != self.gpu.ordinal() {
            return Err(Error::WrongDevice {
                what: "the stream".into(),
                found: stream.device(),
                expected: self.gpu.ordinal(),
            });
        }
        let mut guard = self.comm.lock();
        let Some(comm) = guard.as_ref() else {
            let why = self.aborted.lock().clone().unwrap_or_default();
            return Err(tp(TpError::Aborted(why)));
        };
        // Declared before the result: on failure the workspaces go only after the abort below
        // (freeing device memory waits for the device, which may still wait for a peer).
        let scratch = Scratch::default();
        let result = f(comm, &scratch);
        if let Err(Error::Tp(e @ (TpError::PeerLost(_) | TpError::Timeout { .. } | TpError::Comm(_)))) = &result {
            if let Some(c) = guard.take() {
                let _ = c.abort();
            }
            self.aborted.lock().get_or_insert_with(|| e.to_string());
            // The aborted collectives fail their streams; drain them (errors and all) so the
            // caller's stream is usable again.
            let until = Instant::now() + self.options.timeout.min(Duration::from_secs(2));
            for s in [stream, &self.comm_stream] {
                while !matches!(s.is_idle(), Ok(true)) && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
        drop(scratch);
        result
    }

    /// A workspace of at least `bytes` for the call that owns `scratch` (rounded up to 16 bytes:
    /// the kernels read whole dwords).
    fn workspace(&self, scratch: &Scratch, bytes: usize) -> Result<DeviceSpan> {
        let bytes = bytes.next_multiple_of(16).max(16);
        let mut v = self.gpu.alloc::<u8>(bytes)?;
        let address = v.as_mut_slice().device_address();
        scratch.0.borrow_mut().push(v);
        Ok(DeviceSpan { device: self.gpu.ordinal(), address, len: bytes, readable: bytes })
    }

    /// Waits for `streams` to finish what they were given, watching the communicator: a failed
    /// stream or an asynchronous error is [`TpError::PeerLost`] (or `Disagree` for a usage
    /// error), and nothing finished by `deadline` is [`TpError::Timeout`].
    fn watch(&self, comm: &Communicator, streams: &[&GpuStream], deadline: Instant, what: &str) -> Result<()> {
        let ms = self.options.timeout.as_millis() as u64;
        let mut pending: Vec<&GpuStream> = streams.to_vec();
        let mut nap = Duration::from_micros(50);
        loop {
            let mut failed: Option<String> = None;
            pending.retain(|s| match s.is_idle() {
                Ok(idle) => !idle,
                Err(e) => {
                    failed.get_or_insert(e.to_string());
                    false
                }
            });
            if let Err(e) = comm.async_error() {
                return Err(tp(comm_error(&e, ms)));
            }
            if let Some(why) = failed {
                return Err(tp(TpError::PeerLost(format!("{what}: {why}"))));
            }
            if pending.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(tp(TpError::Timeout { ms, what: format!("{what}: the collectives had not finished") }));
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(2));
        }
    }

    /// All-gathers the call's descriptor and compares: [`TpError::Disagree`] names the first
    /// word that differs. Returns every rank's descriptor.
    fn agree(
        &self,
        comm: &Communicator,
        scratch: &Scratch,
        d: Descriptor,
        deadline: Instant,
    ) -> Result<Vec<[u64; 16]>> {
        let send = self.workspace(scratch, 128)?;
        let recv = self.workspace(scratch, 128 * self.nranks)?;
        let s = &self.comm_stream;
        // SAFETY: group workspaces of 128 and 128 * nranks bytes on this GPU, kept by the call
        // until the stream is idle or the communicator aborted.
        unsafe {
            s.write(&mut DeviceSliceMut::from_raw(send.device, send.address, 16), &d.words)?;
            comm.all_gather(send.address as *const _, recv.address as *mut _, 128, DataType::U8, s.as_raw())
        }
        .map_err(|e| tp(comm_error(&e, 0)))?;
        self.watch(comm, &[s], deadline, "the ranks' agreement on the call")?;
        let mut all = vec![0u64; 16 * self.nranks];
        // SAFETY: as above; the all-gather has completed.
        s.read(unsafe { DeviceSlice::from_raw(recv.device, recv.address, 16 * self.nranks) }, &mut all)?;
        let words: Vec<[u64; 16]> = all.chunks(16).map(|c| c.try_into().unwrap_or([0; 16])).collect();
        for (r, w) in words.iter().enumerate() {
            for i in 0..16 {
                if d.varying & (1 << i) == 0 && w[i] != words[0][i] {
                    return Err(tp(TpError::Disagree(format!(
                        "{}: rank 0 has {}, rank {r} has {} (this is rank {})",
                        FIELDS[i], words[0][i], w[i], self.rank
                    ))));
                }
            }
        }
        Ok(words)
    }

    /// The kernel for every launch of a plan: the best for the whole problem (checked against
    /// the operands as [`Gpu::gemm`] checks them), or one that loads single elements when some
    /// launch's A would not be aligned for it. Pinning one kernel for every chunk is what makes
    /// overlap on and off give the same bits.
    fn pin(
        &self,
        p: &GemmProblem,
        a: DeviceSpan,
        b: DeviceSpan,
        c: DeviceSpan,
        starts: &[usize],
    ) -> Result<Option<&'static KernelEntry>> {
        let backend = self.gpu.backend();
        let Some(plan) = backend.check_device_spans(self.gpu.ordinal(), p, a, b, c)? else { return Ok(None) };
        let need = 2 * u64::from(plan.entry.align_elems.max(1));
        let row_bytes = (a_row_stride(p) * p.a_type.size_bytes()) as u64;
        if starts.iter().all(|&s| (a.address + s as u64 * row_bytes).is_multiple_of(need)) {
            return Ok(Some(plan.entry));
        }
        gemm_kernels::for_arch(backend.arch())
            .filter(|e| e.align_elems <= 1)
            .find(|e| kernel_plan::plan_for(e, p).is_ok())
            .map(Some)
            .ok_or_else(|| Error::Unsupported {
                device: self.gpu.name().into(),
                why: "no kernel loads unaligned rows of A for this problem".into(),
            })
    }

    fn granularity(&self) -> usize {
        granularity(self.gpu.arch())
    }

    /// `rows` split into the chunks of the options (one without overlap), at chunk starts that
    /// are multiples of [`Self::granularity`].
    fn chunks(&self, rows: usize) -> Vec<Range<usize>> {
        let granularity = self.granularity();
        let want = if self.options.overlap { self.options.chunks } else { 1 };
        let units = rows.div_ceil(granularity.max(1));
        split(units, want.min(units).max(1))
            .into_iter()
            .map(|u| (u.start * granularity).min(rows)..(u.end * granularity).min(rows))
            .filter(|r| !r.is_empty())
            .collect()
    }

    /// Queues `launch` of the pinned kernel: rows of `p` with A advanced to the first row.
    ///
    /// # Safety
    /// `a`, `b` were checked for `p` by [`Self::pin`]; C at `l.c` holds `l.rows` rows of `p.n`
    /// elements with `l.ldc` (group workspace); all stay allocated until the stream has run it.
    unsafe fn launch(
        &self,
        stream: &GpuStream,
        entry: &'static KernelEntry,
        p: &GemmProblem,
        a: DeviceSpan,
        b: DeviceSpan,
        l: &Launch,
    ) -> Result<()> {
        let mut pc = *p;
        pc.m = l.rows.len();
        pc.ldc = l.ldc;
        let plan = kernel_plan::plan_for(entry, &pc)
            .map_err(|why| Error::Unsupported { device: self.gpu.name().into(), why })?;
        let a_addr = a.address + (l.rows.start * a_row_stride(p) * p.a_type.size_bytes()) as u64;
        // SAFETY: this function's contract; the plan is the pinned entry's for this sub-problem.
        unsafe { self.gpu.backend().launch_checked(stream.stream(), &plan, &pc, a_addr, b.address, l.c) }
    }

    /// Queues a device-to-device copy.
    ///
    /// # Safety
    /// Both ranges are device memory of this GPU that stays allocated until the copy has run.
    unsafe fn copy(&self, stream: &GpuStream, dst: u64, src: u64, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let err = |e: String| Error::Device { device: self.gpu.name().into(), message: e };
        let hip = stream.stream().device_handle().hip().clone();
        let f = hip.api().hipMemcpyAsync().map_err(|e| err(e.to_string()))?;
        // SAFETY: this function's contract; kind 3 is hipMemcpyDeviceToDevice.
        let code = unsafe { f(dst as *mut _, src as *const _, bytes, 3, stream.stream().as_raw()) };
        if code != 0 {
            return Err(err(format!("hipMemcpyAsync (device to device) failed with hipError_t {code}")));
        }
        Ok(())
    }

    /// Copies `rows` rows of `cols` elements from `src` (row pitch `src_ld`) to `dst` (`dst_ld`),
    /// one copy when both are tight.
    ///
    /// # Safety
    /// As [`Self::copy`] for every row.
    #[allow(clippy::too_many_arguments)]
    unsafe fn copy_rows(
        &self,
        stream: &GpuStream,
        dst: u64,
        dst_ld: usize,
        src: u64,
        src_ld: usize,
        rows: usize,
        cols: usize,
        esize: usize,
    ) -> Result<()> {
        if rows == 0 || cols == 0 {
            return Ok(());
        }
        if dst_ld == cols && src_ld == cols {
            // SAFETY: as documented.
            return unsafe { self.copy(stream, dst, src, rows * cols * esize) };
        }
        for i in 0..rows {
            let (d, s) = ((i * dst_ld * esize) as u64, (i * src_ld * esize) as u64);
            // SAFETY: as documented.
            unsafe { self.copy(stream, dst + d, src + s, cols * esize)? };
        }
        Ok(())
    }

    fn zero(&self, stream: &GpuStream, v: DeviceSpan) -> Result<()> {
        let err = |e: String| Error::Device { device: self.gpu.name().into(), message: e };
        let hip = stream.stream().device_handle().hip().clone();
        let f = hip.api().hipMemsetAsync().map_err(|e| err(e.to_string()))?;
        // SAFETY: a whole workspace of the call, kept until the stream has run.
        let code = unsafe { f(v.address as *mut _, 0, v.len, stream.stream().as_raw()) };
        if code != 0 {
            return Err(err(format!("hipMemsetAsync failed with hipError_t {code}")));
        }
        Ok(())
    }

    /// The streams GEMMs and collectives go on: the caller's twice without overlap, the caller's
    /// and the group's communication stream with it.
    fn comm_stream_for<'s>(&'s self, stream: &'s GpuStream) -> &'s GpuStream {
        if self.options.overlap {
            &self.comm_stream
        } else {
            stream
        }
    }

    /// Makes the collective of a chunk wait for its GEMM (with overlap).
    fn handoff(&self, from: &GpuStream, to: &GpuStream) -> Result<()> {
        if std::ptr::eq(from, to) {
            return Ok(());
        }
        let ev = from.record()?;
        to.wait(&ev)
    }

    /// Column-parallel: `Y_shard = alpha * op(X) * op(W_shard)` (this rank's `p`: `m x n_r x
    /// k`, `Y_shard` with `p.ldc`), and with `gather`, every rank's shard all-gathered into the
    /// tight `m x N` Y (`N` the sum of the ranks' `n_r`, rank `r`'s columns after those of the
    /// ranks before it). Ranks may hold shards of different widths (N not a multiple of the
    /// rank count). Returns once the results are in the caller's buffers.
    pub fn column<A: Element, B: Element, C: Element>(
        &self,
        stream: &GpuStream,
        p: &GemmProblem,
        x: DeviceSlice<'_, A>,
        w: DeviceSlice<'_, B>,
        y_shard: DeviceSliceMut<'_, C>,
        gather: Option<DeviceSliceMut<'_, C>>,
    ) -> Result<()> {
        p.check_elements::<A, B, C>()?;
        // SAFETY: the views' lifetimes keep their memory allocated and the outputs exclusive for
        // the call, which returns after the device work is done.
        unsafe { self.column_raw(stream, p, x.span(), w.span(), y_shard.span(), gather.map(|g| g.span())) }
    }

    /// [`Self::column`] on byte spans whose dtypes `p` declares (the C ABI's entry).
    ///
    /// # Safety
    /// The spans are device memory that stays allocated for the call, and nothing else touches
    /// the outputs or writes the inputs while it runs.
    pub unsafe fn column_raw(
        &self,
        stream: &GpuStream,
        p: &GemmProblem,
        x: DeviceSpan,
        w: DeviceSpan,
        y_shard: DeviceSpan,
        gather: Option<DeviceSpan>,
    ) -> Result<()> {
        check_problem(p, "column-parallel")?;
        check_out("Y_shard", y_shard, self.gpu.ordinal(), p.m, p.n, p.ldc, p.c_type)?;
        if gather.is_some() {
            collective_dtype(p.c_type)?;
        }
        self.call(stream, |comm, scratch| {
            let deadline = Instant::now() + self.options.timeout;
            let cs = p.c_type.size_bytes();
            if gather.is_none() {
                let words = describe(1, p, 0, &self.options);
                self.agree(comm, scratch, Descriptor { words, varying: 1 << 2 }, deadline)?;
                // No collective: the shard GEMM straight into Y_shard.
                let Some(entry) = self.pin(p, x, w, y_shard, &[0])? else { return Ok(()) };
                // SAFETY: checked by `pin` against Y_shard; the call waits for the stream below.
                unsafe {
                    self.launch(stream, entry, p, x, w, &Launch { rows: 0..p.m, c: y_shard.address, ldc: p.ldc })?
                };
                return self.watch(comm, &[stream], deadline, "column-parallel GEMM");
            }
            let words = describe(1, p, 1, &self.options);
            let all = self.agree(comm, scratch, Descriptor { words, varying: 1 << 2 }, deadline)?;
            let widths: Vec<usize> = all.iter().map(|w| w[2] as usize).collect();
            let nmax = widths.iter().copied().max().unwrap_or(0);
            let total: usize = widths.iter().sum();
            let y = gather.unwrap_or(y_shard);
            check_out("the gathered Y", y, self.gpu.ordinal(), p.m, total, total, p.c_type)?;
            if p.m == 0 || total == 0 {
                return Ok(());
            }
            // Workspaces: this rank's shard padded to nmax columns (what the all-gather sends)
            // and every rank's, chunk by chunk.
            let send = self.workspace(scratch, p.m * nmax * cs)?;
            let recv = self.workspace(scratch, self.nranks * p.m * nmax * cs)?;
            self.zero(stream, send)?;
            let (send_at, recv_at) = (send.address, recv.address);
            let mut pc = *p;
            pc.ldc = nmax;
            // The chunks depend only on m and the options: every rank issues the same
            // collectives, a rank without columns (N < ranks) too.
            let chunks = self.chunks(p.m);
            let starts: Vec<usize> = chunks.iter().map(|c| c.start).collect();
            let ws = send;
            let entry = if p.n > 0 { self.pin(&pc, x, w, ws, &starts)? } else { None };
            let comm_s = self.comm_stream_for(stream);
            for rows in &chunks {
                if let Some(e) = entry {
                    let l = Launch { rows: rows.clone(), c: send_at + (rows.start * nmax * cs) as u64, ldc: nmax };
                    // SAFETY: the workspace holds these rows; the call waits for the streams.
                    unsafe { self.launch(stream, e, &pc, x, w, &l)? };
                }
                self.handoff(stream, comm_s)?;
                let count = rows.len() * nmax;
                // SAFETY: chunk `rows` of the send workspace and its nranks blocks in the
                // receive workspace; both alive until the streams are watched idle below.
                unsafe {
                    comm.all_gather(
                        (send_at + (rows.start * nmax * cs) as u64) as *const _,
                        (recv_at + (self.nranks * rows.start * nmax * cs) as u64) as *mut _,
                        count,
                        collective_dtype(p.c_type)?,
                        comm_s.as_raw(),
                    )
                }
                .map_err(|e| tp(comm_error(&e, 0)))?;
            }
            self.watch(comm, &[stream, comm_s], deadline, "column-parallel all-gather")?;
            // Every collective succeeded: now, and only now, the caller's outputs.
            // SAFETY: the checked output spans and the workspaces, alive until the synchronise.
            unsafe {
                if gather.is_some() {
                    self.copy_rows(stream, y_shard.address, p.ldc, send_at, nmax, p.m, p.n, cs)?;
                }
                let mut col = 0;
                for (q, &nq) in widths.iter().enumerate() {
                    for rows in &chunks {
                        let block = recv_at + ((self.nranks * rows.start + q * rows.len()) * nmax * cs) as u64;
                        let dst = y.address + ((rows.start * total + col) * cs) as u64;
                        self.copy_rows(stream, dst, total, block, nmax, rows.len(), nq, cs)?;
                    }
                    col += nq;
                }
            }
            stream.synchronize()
        })
    }

    /// Row-parallel: `Y = sum over ranks of alpha * op(X_shard) * op(W_shard)` (this rank's `p`:
    /// `m x n x k_r`; ranks may hold different `k_r`). The partial products are in C's dtype
    /// and reduced in it (f32 C: in f32); `reduce` is an all-reduce (Y is `m x n` with `p.ldc`
    /// on every rank) or a reduce-scatter (Y is this rank's [`Self::scatter_rows`], with
    /// `p.ldc`). Returns once Y is in the caller's buffer.
    pub fn row<A: Element, B: Element, C: Element>(
        &self,
        stream: &GpuStream,
        p: &GemmProblem,
        x: DeviceSlice<'_, A>,
        w: DeviceSlice<'_, B>,
        y: DeviceSliceMut<'_, C>,
        reduce: Reduce,
    ) -> Result<()> {
        p.check_elements::<A, B, C>()?;
        // SAFETY: as in `column`.
        unsafe { self.row_raw(stream, p, x.span(), w.span(), y.span(), reduce) }
    }

    /// [`Self::row`] on byte spans (the C ABI's entry).
    ///
    /// # Safety
    /// As [`Self::column_raw`].
    pub unsafe fn row_raw(
        &self,
        stream: &GpuStream,
        p: &GemmProblem,
        x: DeviceSpan,
        w: DeviceSpan,
        y: DeviceSpan,
        reduce: Reduce,
    ) -> Result<()> {
        check_problem(p, "row-parallel")?;
        collective_dtype(p.c_type)?;
        let rows_out = match reduce {
            Reduce::AllReduce => p.m,
            Reduce::ReduceScatter => self.scatter_rows(p.m, self.rank).len(),
        };
        check_out("Y", y, self.gpu.ordinal(), rows_out, p.n, p.ldc, p.c_type)?;
        self.call(stream, |comm, scratch| {
            let deadline = Instant::now() + self.options.timeout;
            let option = match reduce {
                Reduce::AllReduce => 0,
                Reduce::ReduceScatter => 1,
            };
            let words = describe(2, p, option, &self.options);
            self.agree(comm, scratch, Descriptor { words, varying: 1 << 3 }, deadline)?;
            // SAFETY: forwarded.
            unsafe { self.row_after_agreement(comm, scratch, stream, p, x, w, y, reduce, deadline) }
        })
    }

    /// The row plan once the ranks agree (also the MLP's second half).
    ///
    /// # Safety
    /// As [`Self::column_raw`]; `y` was checked for the plan's output.
    #[allow(clippy::too_many_arguments)]
    unsafe fn row_after_agreement(
        &self,
        comm: &Communicator,
        scratch: &Scratch,
        stream: &GpuStream,
        p: &GemmProblem,
        x: DeviceSpan,
        w: DeviceSpan,
        y: DeviceSpan,
        reduce: Reduce,
        deadline: Instant,
    ) -> Result<()> {
        if p.m == 0 || p.n == 0 {
            return Ok(());
        }
        let cs = p.c_type.size_bytes();
        let dtype = collective_dtype(p.c_type)?;
        let n = p.n;
        let nr = self.nranks;
        let comm_s = self.comm_stream_for(stream);
        let mut pc = *p;
        pc.ldc = n;
        match reduce {
            Reduce::AllReduce => {
                let span = self.workspace(scratch, p.m * n * cs)?;
                if p.k == 0 {
                    self.zero(stream, span)?;
                }
                let at = span.address;
                let chunks = self.chunks(p.m);
                let starts: Vec<usize> = chunks.iter().map(|r| r.start).collect();
                let entry = if p.k > 0 { self.pin(&pc, x, w, span, &starts)? } else { None };
                for rows in &chunks {
                    let c = at + (rows.start * n * cs) as u64;
                    if let Some(e) = entry {
                        // SAFETY: the workspace holds these rows; the call waits for the streams.
                        unsafe { self.launch(stream, e, &pc, x, w, &Launch { rows: rows.clone(), c, ldc: n })? };
                    }
                    self.handoff(stream, comm_s)?;
                    // SAFETY: in place on the chunk's rows of the workspace, alive until watched.
                    unsafe {
                        comm.all_reduce(c as *const _, c as *mut _, rows.len() * n, dtype, RedOp::Sum, comm_s.as_raw())
                    }
                    .map_err(|e| tp(comm_error(&e, 0)))?;
                }
                self.watch(comm, &[stream, comm_s], deadline, "row-parallel all-reduce")?;
                // SAFETY: the checked Y and the workspace, alive until the synchronise.
                unsafe { self.copy_rows(stream, y.address, p.ldc, at, n, p.m, n, cs)? };
                stream.synchronize()
            }
            Reduce::ReduceScatter => {
                let per = scatter_block(p.m, nr, self.gpu.arch()).max(1);
                let send = self.workspace(scratch, nr * per * n * cs)?;
                let recv = self.workspace(scratch, per * n * cs)?;
                // Rows past m (the last blocks' padding) and a rank with no K send zeros.
                self.zero(stream, send)?;
                let (send_at, recv_at) = (send.address, recv.address);
                let span = send;
                // Chunk c holds sub-rows `sub` of every rank's block, laid out block by block so
                // that one reduce-scatter hands each rank its sub-rows.
                let subs = self.chunks(per);
                let starts: Vec<usize> =
                    (0..nr).flat_map(|q| subs.iter().map(move |s| q * per + s.start)).filter(|&s| s < p.m).collect();
                let entry = if p.k > 0 { self.pin(&pc, x, w, span, &starts)? } else { None };
                for sub in &subs {
                    let base = send_at + (nr * sub.start * n * cs) as u64;
                    if let Some(e) = entry {
                        for q in 0..nr {
                            let rows = (q * per + sub.start).min(p.m)..(q * per + sub.end).min(p.m);
                            if rows.is_empty() {
                                continue;
                            }
                            let c = base + (q * sub.len() * n * cs) as u64;
                            // SAFETY: block q of the chunk in the send workspace holds these rows.
                            unsafe { self.launch(stream, e, &pc, x, w, &Launch { rows, c, ldc: n })? };
                        }
                    }
                    self.handoff(stream, comm_s)?;
                    let out = recv_at + (sub.start * n * cs) as u64;
                    // SAFETY: nranks blocks of the chunk in, this rank's sub-rows out; alive
                    // until watched.
                    unsafe {
                        comm.reduce_scatter(
                            base as *const _,
                            out as *mut _,
                            sub.len() * n,
                            dtype,
                            RedOp::Sum,
                            comm_s.as_raw(),
                        )
                    }
                    .map_err(|e| tp(comm_error(&e, 0)))?;
                }
                self.watch(comm, &[stream, comm_s], deadline, "row-parallel reduce-scatter")?;
                let mine = self.scatter_rows(p.m, self.rank).len();
                // SAFETY: the checked Y and the workspace, alive until the synchronise.
                unsafe { self.copy_rows(stream, y.address, p.ldc, recv_at, n, mine, n, cs)? };
                stream.synchronize()
            }
        }
    }

    /// A Megatron MLP on this rank's shards: `H = act(alpha * op(X) * op(W_up_shard))` (`up`:
    /// `m x f_r x h`, H in `up`'s C dtype, kept in a group workspace), then `Y = sum over ranks
    /// of H * op(W_down_shard)` (`down`: `m x h x f_r`, A = H, so `down.a_type == up.c_type` and
    /// `down.trans_a` is `No`) with one all-reduce, chunked and overlapped as [`Self::row`].
    /// `activation` runs in the up GEMM's epilogue (a `fused` kernel) when it is not `None`:
    /// the catalogue's `fused` family, bf16 -> bf16, every leading dimension a multiple of 8
    /// (`h` and this rank's `f_r`), after a per-row bias of zeros (the family fuses an
    /// activation only after a bias). Where a rank's shard has no such kernel the call is refused
    /// before any data moves: that rank gets `Error::Unsupported` (why), the others
    /// `TpError::Disagree` (or `Unsupported` too where theirs has none either); the group stays
    /// usable. Y is `m x h` with `down.ldc`.
    #[allow(clippy::too_many_arguments)]
    pub fn mlp<X: Element, W: Element, Y: Element>(
        &self,
        stream: &GpuStream,
        up: &GemmProblem,
        down: &GemmProblem,
        x: DeviceSlice<'_, X>,
        w_up: DeviceSlice<'_, W>,
        w_down: DeviceSlice<'_, W>,
        y: DeviceSliceMut<'_, Y>,
        activation: Activation,
    ) -> Result<()> {
        for (have, want, what) in [
            (X::DTYPE, up.a_type, "X"),
            (W::DTYPE, up.b_type, "W_up"),
            (W::DTYPE, down.b_type, "W_down"),
            (Y::DTYPE, down.c_type, "Y"),
        ] {
            if have != want {
                return Err(invalid(format!("{what} holds {have}, the problem says {want}")));
            }
        }
        // SAFETY: as in `column`.
        unsafe { self.mlp_raw(stream, up, down, [x.span(), w_up.span(), w_down.span(), y.span()], activation) }
    }

    /// [`Self::mlp`] on byte spans `[X, W_up, W_down, Y]` (the C ABI's entry).
    ///
    /// # Safety
    /// As [`Self::column_raw`].
    pub unsafe fn mlp_raw(
        &self,
        stream: &GpuStream,
        up: &GemmProblem,
        down: &GemmProblem,
        [x, w_up, w_down, y]: [DeviceSpan; 4],
        activation: Activation,
    ) -> Result<()> {
        let mut up = *up;
        up.ldc = up.n;
        let mut down = *down;
        down.lda = down.k;
        check_problem(&up, "MLP up projection")?;
        check_problem(&down, "MLP down projection")?;
        if up.m != down.m || up.n != down.k || down.trans_a != Transpose::No || down.a_type != up.c_type {
            return Err(invalid(format!(
                "MLP: the down projection must read the up projection's output: up is {}x{}x{} -> {}, down {}x{}x{} from {} (trans_a {:?})",
                up.m, up.n, up.k, up.c_type, down.m, down.n, down.k, down.a_type, down.trans_a
            )));
        }
        collective_dtype(down.c_type)?;
        check_out("Y", y, self.gpu.ordinal(), down.m, down.n, down.ldc, down.c_type)?;
        // The catalogue fuses an activation only after a bias, and for a row-major problem only
        // after a per-row one (its kernels' column bias, in column-major terms): the activation
        // runs after a per-row bias of zeros (`x + 0` is `x`, but for -0.0 -> +0.0).
        let epilogue = match activation {
            Activation::None => crate::Epilogue::NONE,
            _ => crate::Epilogue { bias: Some(crate::BiasAxis::PerRow), activation, clamp: None },
        };
        // Whether this rank's shard has a fused kernel for the activation, decided before any
        // collective and agreed on: the shards' widths differ, so one rank may have a kernel
        // where another has none (a width that is not a multiple of 8), and a rank that refused
        // alone would leave the others waiting in the all-reduce until their timeout.
        let refusal = if activation == Activation::None || up.m == 0 || up.n == 0 {
            None
        } else {
            crate::plan::fused::fused_entry(self.gpu.arch(), &up, &epilogue).err().map(|why| Error::Unsupported {
                device: self.gpu.name().into(),
                why: format!("MLP up projection: {why}"),
            })
        };
        self.call(stream, |comm, scratch| {
            let deadline = Instant::now() + self.options.timeout;
            let option = if refusal.is_some() { u64::MAX } else { activation as u64 };
            let mut words = describe(3, &up, option, &self.options);
            words[12] = down.n as u64;
            words[13] = down.k as u64;
            words[14] = dtype_code(down.c_type)
                | (dtype_code(down.b_type) << 8)
                | (u64::from(down.trans_b == Transpose::Yes) << 16);
            words[15] = u64::from(down.alpha.to_bits());
            let agreed = self.agree(comm, scratch, Descriptor { words, varying: (1 << 2) | (1 << 13) }, deadline);
            // Every rank refused (they agreed), or some did (the others got `Disagree`): no
            // collective is left half issued and the group stays usable.
            if let Some(refused) = refusal {
                if matches!(agreed, Ok(_) | Err(Error::Tp(TpError::Disagree(_)))) {
                    return Err(refused);
                }
            }
            agreed?;
            let hs = up.c_type.size_bytes();
            let h = self.workspace(scratch, up.m * up.n * hs)?;
            if up.n > 0 && up.m > 0 {
                let bias = match epilogue.bias {
                    None => None,
                    Some(_) => {
                        let b = self.workspace(scratch, up.m * 4)?;
                        // SAFETY: a group workspace of at least `up.m` f32 on this GPU, kept
                        // by the call until the stream is idle.
                        let mut zeros = unsafe { DeviceSliceMut::<f32>::from_raw(b.device, b.address, up.m) };
                        stream.write(&mut zeros, &vec![0f32; up.m])?;
                        Some(b)
                    }
                };
                // SAFETY: X and W_up as the caller gave them, H and the bias the group's
                // workspaces; the call waits for the stream before they are dropped.
                unsafe { self.gpu.gemm_epilogue_raw("tp_mlp_up", stream, &up, [x, w_up, h], &epilogue, bias)? };
            }
            // SAFETY: H is alive until the row plan returns (it synchronises the stream).
            unsafe { self.row_after_agreement(comm, scratch, stream, &down, h, w_down, y, Reduce::AllReduce, deadline) }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_name_every_word() {
        let p = GemmProblem::new(3, 4, 5);
        let w = describe(2, &p, 1, &TpOptions::default());
        assert_eq!((w[0], w[1], w[2], w[3], w[9], w[10], w[11]), (2, 3, 4, 5, 1, 1, 4));
        assert_eq!(FIELDS.len(), w.len());
    }

    #[test]
    fn output_sizes_count_the_last_row_tight() {
        assert_eq!(need_bytes(3, 4, 10, 2), Some((2 * 10 + 4) * 2));
        assert_eq!(need_bytes(0, 4, 10, 2), Some(0));
        assert_eq!(need_bytes(usize::MAX, 4, 10, 2), None);
    }
}
