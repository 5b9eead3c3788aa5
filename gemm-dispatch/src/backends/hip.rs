//! AMD GPUs through HIP, loaded at run time by `gemm-rocm`.
//!
//! Discovery never fails: a missing library, a runtime with no device, or a GPU of an
//! architecture the catalogue does not cover are notes that `gemm devices` prints, and the host
//! backend serves instead (DESIGN.md rule 5). Each gfx942/gfx950 device becomes a
//! [`HipBackend`].
//!
//! # How a [`HipBackend`] runs a chunk of GEMMs
//!
//! Everything that decides *what* happens is plain code tested here without a GPU:
//! [`crate::plan::kernel_plan`] picks the catalogue kernel and packs its arguments (shared with the
//! emulator backend), [`ItemBytes`] sizes an item's device workspace, and [`plan_pipeline`]
//! orders the steps of a chunk over [`SLOTS`] double-buffered workspace slots within a fixed
//! [`HipBackend::workspace_budget`]. Streams carry the work: one for kernels and, per slot, one
//! for host->device and one for device->host copies; per-slot events order them, so the upload
//! of item `i+1` and the download of item `i-1` overlap the kernel of item `i`. The host waits for an item's download only when
//! its slot is needed again (backpressure: at most [`SLOTS`] items in flight, device and pinned
//! memory bounded by the budget).
//!
//! The parts that talk to HIP — the `Pipeline`'s steps, [`HipBackend::gemm_device`], module
//! loading — run here against `libgemm_emu_hip.so`, an emulated HIP runtime whose devices run
//! the catalogue kernels in the emulator (tests/hip_emulated.rs); only their timing and the real
//! driver's behaviour are left to AMD hardware. The `unsafe` blocks are the two kernel launches.

use crate::backends::block_scaled::{
    check_gpu_host_call, run_block_scaled, BlockScaledBuffers, BlockScaledJob, KernelLauncher,
};
use crate::backends::Job;
use crate::backends::{Backend, DeviceInfo, DeviceKind};
use crate::error::{Error, Result};
use crate::plan::gemm_plan::plan_gemm;
use crate::plan::kernel_plan::{self, KernelPlan};
use gemm_core::{Arch, BlockScaledProblem, DType, GemmProblem, Operand};
use gemm_rocm::hip::{Device, DeviceBuffer, Event, Function, Hip, LaunchConfig, PinnedHostBuffer, Stream};
use gemm_rocm::nccl::Nccl;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// What looking for HIP devices found.
pub struct Discovery {
    /// Devices ready to run GEMMs.
    pub devices: Vec<Arc<dyn Backend>>,
    /// One line per thing that was not found or not usable, and why.
    pub notes: Vec<String>,
}

/// How discovered HIP devices are set up.
#[derive(Clone, Debug, Default)]
pub struct HipOptions {
    /// Workspace budget per device in bytes (see [`HipBackend::workspace_budget`]); `None` for
    /// the default, a quarter of the device's memory capped at [`DEFAULT_WORKSPACE_BYTES`].
    pub workspace_budget: Option<usize>,
    /// The RCCL/NCCL library tensor-parallel GEMMs over these devices use; `None` loads it
    /// (`GEMM_RCCL_LIBRARY`, else `librccl`) when first needed.
    pub rccl: Option<Nccl>,
}

/// Loads HIP (`GEMM_HIP_LIBRARY`, else the usual names) and lists its usable devices, with a
/// note for everything else.
pub fn discover() -> Discovery {
    match Hip::load() {
        Ok(hip) => discover_with(hip, &HipOptions::default()),
        Err(e) => Discovery { devices: Vec::new(), notes: vec![format!("hip: {e}")] },
    }
}

/// The usable devices of an already loaded HIP runtime (for example one loaded from an
/// explicit path, which needs no process-wide environment variable), set up with `options`.
pub fn discover_with(hip: Hip, options: &HipOptions) -> Discovery {
    let mut notes = Vec::new();
    let version = hip.runtime_version().map(|v| format!(" (HIP {v})")).unwrap_or_default();
    let count = match hip.device_count() {
        Ok(0) => {
            notes.push(format!("hip: {} loaded{version}: no device (hipErrorNoDevice)", hip.library_path().display()));
            return Discovery { devices: Vec::new(), notes };
        }
        Ok(n) => n,
        Err(e) => {
            notes.push(format!("hip: {} loaded{version}: {e}", hip.library_path().display()));
            return Discovery { devices: Vec::new(), notes };
        }
    };
    let mut devices: Vec<Arc<dyn Backend>> = Vec::new();
    for ordinal in 0..count {
        let device = match hip.device(ordinal) {
            Ok(d) => d,
            Err(e) => {
                notes.push(format!("hip:{ordinal}: {e}"));
                continue;
            }
        };
        match device.arch_name() {
            Ok(name) => match Arch::from_target_id(&name) {
                Ok(arch) => match HipBackend::with_options(device, arch, options) {
                    Ok(b) => devices.push(b),
                    Err(e) => notes.push(format!("hip:{ordinal}: {name} ({arch}) found but not usable: {e}")),
                },
                Err(_) => notes.push(format!("hip:{ordinal}: {name} is not a supported architecture (gfx942, gfx950)")),
            },
            Err(e) => notes.push(format!("hip:{ordinal}: cannot read its architecture: {e}")),
        }
    }
    Discovery { devices, notes }
}

/// The devices a `hip` or `hip:N` entry of a device list names.
pub fn open(entry: &str, ordinal: Option<usize>) -> Result<Vec<Arc<dyn Backend>>> {
    let found = discover();
    let picked: Vec<Arc<dyn Backend>> = match ordinal {
        None => found.devices,
        Some(n) => found.devices.into_iter().filter(|d| d.info().name == format!("hip:{n}")).collect(),
    };
    if picked.is_empty() {
        return Err(Error::DeviceSpec {
            spec: entry.into(),
            why: if found.notes.is_empty() { "no such HIP device".into() } else { found.notes.join("; ") },
        });
    }
    Ok(picked)
}

// ---------------------------------------------------------------------------------------------
// Workspace and pipeline planning (pure).

/// Workspace slots: two, so one item's copies overlap another's kernel.
pub const SLOTS: usize = 2;
/// Device regions are rounded up to (and at least) this many bytes: hipMalloc's alignment, and
/// the kernels read whole dwords up to the end of a span.
pub const REGION_ALIGN: usize = 256;
/// The default workspace budget per device (device bytes; pinned staging is at most as much).
pub const DEFAULT_WORKSPACE_BYTES: usize = 4 << 30;
/// Jobs the scheduler hands one [`HipBackend::gemm_many`] call.
pub const JOBS_PER_CALL: usize = 8;

/// The bytes one item moves: its A, B and C spans, and whether C is uploaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ItemBytes {
    pub a: usize,
    pub b: usize,
    pub c: usize,
    /// C goes up as well as down: when the kernel reads it (beta != 0), and when its span has
    /// gaps (leading-dimension padding). The download copies C's whole span back, so the gaps
    /// on the device must hold the caller's own bytes, not whatever an earlier item left there.
    pub read_c: bool,
    /// Split-K workspace bytes (`crate::plan::splitk`), 0 otherwise: device-only, after C's region.
    pub ws: usize,
}

impl ItemBytes {
    /// From a validated problem.
    pub fn of(p: &GemmProblem) -> Result<Self> {
        let s = p.validate()?;
        Ok(Self {
            a: s.a * p.a_type.size_bytes(),
            b: s.b * p.b_type.size_bytes(),
            c: s.c * p.c_type.size_bytes(),
            read_c: p.beta != 0.0 || s.c > p.m * p.n,
            ws: 0,
        })
    }

    /// Pinned staging bytes: the A, B and C regions (the workspace never leaves the device).
    pub fn staging_bytes(&self) -> usize {
        Self::region(self.a) + Self::region(self.b) + Self::region(self.c)
    }

    /// The split-K workspace's offset in the slot buffer (256-byte aligned).
    pub fn ws_offset(&self) -> usize {
        self.staging_bytes()
    }

    /// One region's device bytes.
    pub fn region(bytes: usize) -> usize {
        bytes.next_multiple_of(REGION_ALIGN).max(REGION_ALIGN)
    }

    /// Device bytes of the item's three regions.
    pub fn device_bytes(&self) -> usize {
        self.staging_bytes() + if self.ws > 0 { Self::region(self.ws) } else { 0 }
    }

    /// Byte offsets of the A, B and C regions in one slot buffer: back to back, each rounded
    /// up to [`REGION_ALIGN`] (so every region starts 256-byte aligned).
    pub fn offsets(&self) -> [usize; 3] {
        let b = Self::region(self.a);
        [0, b, b + Self::region(self.b)]
    }
}

/// One step of a chunk, in the order the host issues them. `item` indexes the chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Copy the item's inputs into the slot's pinned staging buffers and queue their upload on
    /// the copy-in stream; record the slot's `uploaded` event.
    Stage { item: usize, slot: usize },
    /// On the compute stream: wait for `uploaded`, launch the kernel, record `computed`.
    Launch { item: usize, slot: usize },
    /// On the copy-out stream: wait for `computed`, queue C's download, record `downloaded`.
    Download { item: usize, slot: usize },
    /// Wait for `downloaded`, copy C to the caller's buffer: the item is done, its slot free.
    Finish { item: usize, slot: usize },
    /// Free the slot's buffers (before an item that needs the whole budget, and after it).
    Release { slot: usize },
}

/// Why an item is not in the pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Excluded {
    /// Nothing to compute (m or n is 0).
    Empty,
    /// Needs more device bytes than the whole budget.
    TooLarge { need: usize, budget: usize },
}

/// Orders the steps of a chunk. `need[i]` is item `i`'s device bytes, `None` for items that
/// are not run on the device (they get no step). Items needing at most `budget / SLOTS` take
/// slots in turn, a slot's previous item finishing just before the slot is staged again; an item
/// needing more (but at most `budget`) runs alone in slot 0 with every other slot released; an
/// item needing more than `budget` is excluded. Every planned item gets exactly one Stage,
/// Launch, Download and Finish, in that order, in one slot.
pub fn plan_pipeline(need: &[Option<usize>], budget: usize) -> (Vec<Step>, Vec<(usize, Excluded)>) {
    let mut steps = Vec::new();
    let mut excluded = Vec::new();
    let mut occupant: [Option<usize>; SLOTS] = [None; SLOTS];
    let mut next = 0usize;
    let finish_all = |steps: &mut Vec<Step>, occupant: &mut [Option<usize>; SLOTS], from: usize| {
        // In the order the items were staged: the oldest first.
        for k in 0..SLOTS {
            let slot = (from + k) % SLOTS;
            if let Some(item) = occupant[slot].take() {
                steps.push(Step::Finish { item, slot });
            }
        }
    };
    for (item, n) in need.iter().enumerate() {
        let Some(n) = *n else { continue };
        if n > budget {
            excluded.push((item, Excluded::TooLarge { need: n, budget }));
            continue;
        }
        if n > budget / SLOTS {
            finish_all(&mut steps, &mut occupant, next);
            (1..SLOTS).for_each(|slot| steps.push(Step::Release { slot }));
            steps.extend([
                Step::Stage { item, slot: 0 },
                Step::Launch { item, slot: 0 },
                Step::Download { item, slot: 0 },
                Step::Finish { item, slot: 0 },
                Step::Release { slot: 0 },
            ]);
            next = 0;
            continue;
        }
        let slot = next;
        if let Some(prev) = occupant[slot].take() {
            steps.push(Step::Finish { item: prev, slot });
        }
        steps.extend([Step::Stage { item, slot }, Step::Launch { item, slot }, Step::Download { item, slot }]);
        occupant[slot] = Some(item);
        next = (slot + 1) % SLOTS;
    }
    finish_all(&mut steps, &mut occupant, next);
    (steps, excluded)
}

/// The launch of one item: the kernel plan, its launch shape and its argument bytes for the
/// given device addresses of A, B and C.
pub fn launch_for(
    plan: &KernelPlan,
    p: &GemmProblem,
    a: u64,
    b: u64,
    c: u64,
) -> std::result::Result<(LaunchConfig, Vec<u8>), String> {
    let args = plan.kernargs(p, a, b, c)?;
    let config = LaunchConfig { grid: plan.grid, block: plan.block, shared_mem_bytes: 0 };
    config.validate().map_err(|e| e.to_string())?;
    Ok((config, args))
}

/// A rough time for `p` on a device of `arch`: 60 % of the matrix peak, the bytes over the host
/// link at 25 GB/s, and a fixed 20 us of launch and synchronisation.
pub fn estimate(arch: Arch, p: &GemmProblem) -> f64 {
    let bytes = ItemBytes::of(p).map(|b| (b.a + b.b + b.c * (1 + usize::from(b.read_c))) as f64).unwrap_or(0.0);
    p.flops() / (arch.peak_tflops(p.a_type) * 1e12 * 0.6) + bytes / 25e9 + 20e-6
}

// ---------------------------------------------------------------------------------------------
// The backend.

/// The HIP backend behind a device, if it is one ([`Backend::as_any`] downcast).
pub fn as_hip(device: &Arc<dyn Backend>) -> Option<Arc<HipBackend>> {
    device.clone().as_any()?.downcast::<HipBackend>().ok()
}

/// One HIP device of a supported architecture, held in an `Arc` (a context reaches it through
/// [`as_hip`]).
pub struct HipBackend {
    device: Device,
    arch: Arch,
    info: DeviceInfo,
    budget: usize,
    rccl: Option<Nccl>,
    functions: Mutex<HashMap<&'static str, Function>>,
    pipeline: Mutex<Option<Pipeline>>,
    /// The RCCL communicators of the last tensor-parallel GEMM this device led as rank 0, and
    /// the ranks they were made for: creating communicators is expensive, so they are reused
    /// while the context's devices stay the same. Held locked for a whole tensor-parallel call,
    /// since one communicator must not run two collectives at once.
    pub(crate) tp: Mutex<Option<crate::backends::collective::TpCollective>>,
    /// Problem tables of grouped launches ([`Self::launch_grouped`]), reused once the launch that
    /// read one has finished.
    tables: Mutex<Vec<TableSlot>>,
    /// The split-K workspaces of device-resident GEMMs ([`Self::launch_planned`]), one per
    /// stream (keyed by its `hipStream_t`): the launches of one stream run in order, so each
    /// split's partial kernel writes its slabs after the previous split's reduction has read
    /// them, and two streams never share one. At most [`crate::plan::splitk::TAIL_WORKSPACE_CAP`]
    /// bytes each; freed with the backend.
    device_ws: Mutex<HashMap<usize, DeviceBuffer>>,
}

/// A grouped launch's problem table: pinned host bytes, their device copy, and an event
/// recorded after the kernel that reads them (the slot is free again once it has completed).
struct TableSlot {
    host: PinnedHostBuffer,
    device: DeviceBuffer,
    done: Option<Event>,
}

/// Table slots kept per device: more grouped launches in flight than this wait for the oldest.
const TABLE_SLOTS: usize = 8;

impl std::fmt::Debug for HipBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HipBackend").field("name", &self.info.name).field("arch", &self.arch).finish()
    }
}

/// A byte range of device memory: the device it lives on, its first byte, how many bytes the
/// caller's view holds (`len`), and how many are readable from there (`readable >= len`: to the
/// end of the allocation, whose granule may hold a few bytes more than were asked for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceSpan {
    pub device: i32,
    pub address: u64,
    pub len: usize,
    pub readable: usize,
}

impl DeviceSpan {
    /// `buf` from byte `offset` on (an offset past the end leaves no bytes).
    pub fn of(buf: &DeviceBuffer, offset: usize) -> Self {
        let len = buf.len().saturating_sub(offset);
        Self { device: buf.device(), address: buf.device_address().wrapping_add(offset as u64), len, readable: len }
    }

    /// The span `offset` bytes further on.
    pub fn advance(self, offset: usize) -> Self {
        Self {
            address: self.address.wrapping_add(offset as u64),
            len: self.len.saturating_sub(offset),
            readable: self.readable.saturating_sub(offset),
            ..self
        }
    }
}

/// An operand of `span` bytes must start at an address that is a multiple of its element size,
/// lie within the caller's view, and, rounded up to the 4 bytes the kernels may read
/// (gemm-kernels' launch rules), within the readable bytes; else the typed error of a too small
/// buffer, in elements as everywhere else.
fn check_device_span(operand: Operand, dtype: DType, at: &DeviceSpan, span: usize) -> Result<()> {
    let size = dtype.size_bytes();
    if !at.address.is_multiple_of(size as u64) {
        return Err(Error::Misaligned { operand, dtype });
    }
    let need = if span == 0 { 0 } else { span.next_multiple_of(4) };
    if span > at.len || need > at.readable {
        return Err(Error::Invalid(gemm_core::Error::BufferTooSmall {
            operand,
            len: at.len / size,
            required: need.max(span).div_ceil(size),
        }));
    }
    Ok(())
}

thread_local! {
    /// The catalogue kernel the calling thread's last GEMM launch on a HIP device used.
    static LAST_KERNEL: std::cell::Cell<Option<&'static str>> = const { std::cell::Cell::new(None) };
}

/// The kernel of the last GEMM this thread launched on a HIP device (device-resident calls, and
/// host-memory calls the calling thread ran itself); `None` before any.
pub fn last_kernel() -> Option<&'static str> {
    LAST_KERNEL.with(std::cell::Cell::get)
}

/// [`last_kernel`], forgetting it (so the next read says only what runs after this).
pub fn take_last_kernel() -> Option<&'static str> {
    LAST_KERNEL.with(std::cell::Cell::take)
}

impl HipBackend {
    /// A backend for `device`, whose architecture is `arch`, with default options. Reads the
    /// device's name, compute units and memory; streams and workspaces are created on first use.
    pub fn new(device: Device, arch: Arch) -> gemm_rocm::Result<Arc<Self>> {
        Self::with_options(device, arch, &HipOptions::default())
    }

    /// As [`Self::new`], with a workspace budget and an RCCL library from `options`.
    pub fn with_options(device: Device, arch: Arch, options: &HipOptions) -> gemm_rocm::Result<Arc<Self>> {
        let ordinal = device.ordinal() as usize;
        let name = device.name()?;
        let target = device.arch_name()?;
        let compute_units = device.compute_units()?.max(0) as usize;
        let memory = device.total_memory()?;
        let budget = options.workspace_budget.unwrap_or_else(|| DEFAULT_WORKSPACE_BYTES.min(memory / 4).max(64 << 20));
        Ok(Arc::new(Self {
            device,
            arch,
            info: DeviceInfo {
                name: format!("hip:{ordinal}"),
                kind: DeviceKind::Hip { ordinal, arch },
                description: format!("{name} ({target})"),
                compute_units,
                memory_bytes: memory as u64,
            },
            budget,
            rccl: options.rccl.clone(),
            functions: Mutex::new(HashMap::new()),
            pipeline: Mutex::new(None),
            tp: Mutex::new(None),
            tables: Mutex::new(Vec::new()),
            device_ws: Mutex::new(HashMap::new()),
        }))
    }

    /// The workspace budget in device bytes: the streaming pipeline's slots together never hold
    /// more device memory than this (and at most as much pinned host memory).
    pub fn workspace_budget(&self) -> usize {
        self.budget
    }

    /// The HIP device.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The device's architecture.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// The RCCL library given at discovery, if any.
    pub fn rccl(&self) -> Option<&Nccl> {
        self.rccl.as_ref()
    }

    fn err(&self, what: impl std::fmt::Display) -> Error {
        Error::Device { device: self.info.name.clone(), message: what.to_string() }
    }

    /// The loaded kernel of a catalogue entry (loaded once per device).
    fn function(&self, entry: &'static gemm_kernels::KernelEntry) -> gemm_rocm::Result<Function> {
        let mut cache = self.functions.lock();
        if let Some(f) = cache.get(entry.name) {
            return Ok(f.clone());
        }
        let f = self.device.load_module(entry.code_object)?.function(entry.name)?;
        cache.insert(entry.name, f.clone());
        Ok(f)
    }

    /// The kernel plan for `p` on this device ([`crate::plan::choice::choose`]: the pick `gemm
    /// plan` explains, cached per problem class), or `Unsupported` saying why none fits.
    pub fn plan(&self, p: &GemmProblem) -> Result<KernelPlan> {
        crate::plan::choice::choose(self.arch, p)
            .map_err(|why| Error::Unsupported { device: self.info.name.clone(), why })
    }

    /// Checks a device-resident GEMM's operands without touching anything: the problem is valid,
    /// the operands and the stream (on device `stream_device`) are on this device, each operand's
    /// address is a multiple of its element size, and each span (rounded up to the 4 bytes the
    /// kernels may read) fits in its usable bytes. Then picks the kernel: the best one for `p`,
    /// or, when its A/B alignment (`2 * align_elems` bytes) is not met by these addresses, one
    /// that loads single elements. `None` for empty problems (nothing to launch).
    pub fn check_device_spans(
        &self,
        stream_device: i32,
        p: &GemmProblem,
        a: DeviceSpan,
        b: DeviceSpan,
        c: DeviceSpan,
    ) -> Result<Option<KernelPlan>> {
        let spans = p.validate()?;
        let me = self.device.ordinal();
        if stream_device != me {
            return Err(Error::WrongDevice { what: "the stream".into(), found: stream_device, expected: me });
        }
        let operands = [(Operand::A, a, spans.a), (Operand::B, b, spans.b), (Operand::C, c, spans.c)];
        for (operand, span, elems) in operands {
            if span.device != me {
                return Err(Error::WrongDevice { what: operand.to_string(), found: span.device, expected: me });
            }
            let dtype = p.dtype(operand);
            let bytes = elems
                .checked_mul(dtype.size_bytes())
                .ok_or(Error::Invalid(gemm_core::Error::Overflow("operand span in bytes".into())))?;
            check_device_span(operand, dtype, &span, bytes)?;
        }
        if p.m == 0 || p.n == 0 {
            return Ok(None);
        }
        let plan = self.plan(p)?;
        let need = 2 * u64::from(plan.entry.align_elems.max(1));
        let (a_ok, b_ok) = (a.address.is_multiple_of(need), b.address.is_multiple_of(need));
        if a_ok && b_ok {
            return Ok(Some(plan));
        }
        gemm_kernels::for_arch(self.arch)
            .filter(|e| e.align_elems <= 1)
            .find_map(|e| kernel_plan::plan_for(e, p).ok())
            .map(Some)
            .ok_or(if a_ok {
                Error::Misaligned { operand: Operand::B, dtype: p.b_type }
            } else {
                Error::Misaligned { operand: Operand::A, dtype: p.a_type }
            })
    }

    /// [`Self::check_device_spans`] for operands at byte offsets of device buffers.
    pub fn check_device_gemm(
        &self,
        stream: &Stream,
        p: &GemmProblem,
        a: (&DeviceBuffer, usize),
        b: (&DeviceBuffer, usize),
        c: (&DeviceBuffer, usize),
    ) -> Result<Option<KernelPlan>> {
        let span = |(buf, offset): (&DeviceBuffer, usize)| DeviceSpan::of(buf, offset);
        self.check_device_spans(stream.device(), p, span(a), span(b), span(c))
    }

    /// Queues the kernel of `plan` for `p` with A, B and C at these device addresses on
    /// `stream`. Returns once it is queued.
    ///
    /// # Safety
    /// `plan` comes from [`Self::check_device_spans`] for `p`, these addresses and `stream`'s
    /// device; the three spans lie in device memory that stays allocated until the kernel has
    /// run, and nothing else writes A, B or C while it runs.
    pub unsafe fn launch_checked(
        &self,
        stream: &Stream,
        plan: &KernelPlan,
        p: &GemmProblem,
        a: u64,
        b: u64,
        c: u64,
    ) -> Result<()> {
        let f = self.function(plan.entry).map_err(|e| self.err(e))?;
        let (config, args) = launch_for(plan, p, a, b, c).map_err(|e| self.err(e))?;
        // SAFETY: `args` is packed from the entry's own kernel-argument layout; the addresses
        // were checked by `check_device_spans` (live memory of this device, spans that fit,
        // A/B aligned as the kernel needs) and stay valid while the kernel runs (this
        // function's contract).
        unsafe { f.launch(&config, stream, &args) }.map_err(|e| self.err(e))?;
        LAST_KERNEL.with(|k| k.set(Some(plan.entry.name)));
        Ok(())
    }

    /// Queues what the dispatcher plans for `p` ([`plan_gemm`] on this device's compute units:
    /// the kernel, a split-K or split tail where one predicts faster, a tiled split in place of a
    /// decode kernel, the transpose pre-pass of an fp8 problem whose kernel would read both
    /// operands M/N-contiguous) on `stream`, with A, B and C at these addresses; `plain` is the kernel
    /// [`Self::check_device_spans`] chose for them. The planned launches run when every kernel of
    /// the plan finds its A/B alignment at these addresses (else `plain`, which does, alone). A
    /// split's partial sums and a pre-pass's copy go to this stream's workspace (`device_ws`), grown as needed; the map
    /// stays locked until the launches are queued, so no other call on the stream frees it
    /// between the address and the launches. Returns the kernel that computes the products (a
    /// split's partial kernel). Issue 23: the device API is what an inference pipeline calls
    /// for its decode GEMMs, whose best plans are splits (a 1280-row shard over K = 8192).
    ///
    /// # Safety
    /// As [`Self::launch_checked`].
    pub unsafe fn launch_planned(
        &self,
        stream: &Stream,
        plain: &KernelPlan,
        p: &GemmProblem,
        a: u64,
        b: u64,
        c: u64,
    ) -> Result<&'static str> {
        let cus = u32::try_from(self.info.compute_units).unwrap_or(u32::MAX);
        let aligned = |e: &gemm_kernels::KernelEntry| {
            let need = 2 * u64::from(e.align_elems.max(1));
            e.split_k == gemm_kernels::SplitRole::Reduce || (a.is_multiple_of(need) && b.is_multiple_of(need))
        };
        let plan = plan_gemm(self.arch, cus, p).ok().flatten().filter(|g| {
            let several = g.split.is_some() || g.prepass.is_some();
            (several || g.kernel.entry != plain.entry) && g.entries().into_iter().all(aligned)
        });
        let Some(plan) = plan else {
            // SAFETY: this function's contract.
            unsafe { self.launch_checked(stream, plain, p, a, b, c)? };
            return Ok(plain.entry.name);
        };
        if plan.split.is_none() && plan.prepass.is_none() {
            // SAFETY: the plan's kernel runs the same problem at the same addresses, whose
            // alignment it was checked for just above; the rest is this function's contract.
            unsafe { self.launch_checked(stream, &plan.kernel, p, a, b, c)? };
            return Ok(plan.kernel.entry.name);
        }
        let need = plan.workspace_bytes().max(1);
        let mut spaces = self.device_ws.lock();
        let key = stream.as_raw() as usize;
        if spaces.get(&key).is_none_or(|w| w.len() < need) {
            // Dropping the old buffer frees it (`hipFree` waits for the device first).
            spaces.remove(&key);
            let buf = self.device.alloc(need.next_multiple_of(1 << 20)).map_err(|e| self.err(e))?;
            spaces.insert(key, buf);
        }
        let ws = spaces[&key].device_address();
        let launches = plan.launches(p, a, b, c, ws).map_err(|e| self.err(e))?;
        for l in &launches {
            // SAFETY: the launches read A and B and write C within the spans checked for `plain`
            // (the same problem), with every kernel's alignment checked above; the workspace is
            // this stream's, at least `workspace_bytes` long, and stays allocated while the map
            // is locked here and until a later call on this stream (whose kernels run after
            // these) or the backend's drop frees it.
            unsafe { self.launch_args(stream, l.entry, l.grid, l.block, &l.args)? };
        }
        Ok(plan.split.map_or(plan.kernel.entry.name, |sp| sp.partial.name))
    }

    /// Queues `entry` with argument bytes `args` on `stream` (the fused-epilogue path, whose
    /// arguments carry a bias vector). Returns once it is queued.
    ///
    /// # Safety
    /// `args` follow `entry`'s kernel-argument layout, every address in them was checked to lie in
    /// live memory of this device (spans, alignment) that stays allocated until the kernel has
    /// run, and nothing else writes what the kernel reads or touches what it writes meanwhile.
    pub unsafe fn launch_args(
        &self,
        stream: &Stream,
        entry: &'static gemm_kernels::KernelEntry,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[u8],
    ) -> Result<()> {
        let f = self.function(entry).map_err(|e| self.err(e))?;
        let config = LaunchConfig { grid, block, shared_mem_bytes: 0 };
        config.validate().map_err(|e| self.err(e))?;
        // SAFETY: this function's contract.
        unsafe { f.launch(&config, stream, args) }.map_err(|e| self.err(e))?;
        LAST_KERNEL.with(|k| k.set(Some(entry.name)));
        Ok(())
    }

    /// Queues a grouped launch on `stream`: its problem table is copied to the device on
    /// `stream` (from a pinned host buffer of a reused slot, so nothing synchronises), then the
    /// grouped kernel runs every group in one launch. Returns once both are queued. A slot is
    /// reused only after the event recorded behind its kernel has completed; with
    /// [`TABLE_SLOTS`] launches in flight, the oldest is waited for.
    ///
    /// # Safety
    /// Every group of `plan` was checked by [`Self::check_device_spans`] for these addresses and
    /// `stream`'s device; the operands stay allocated until the kernel has run, and nothing else
    /// writes A, B or C (and no group's C overlaps another's operands) while it runs.
    pub unsafe fn launch_grouped(&self, stream: &Stream, plan: &crate::plan::grouped::GroupedPlan) -> Result<()> {
        let table = plan.table();
        let f = self.function(plan.entry).map_err(|e| self.err(e))?;
        let mut slots = self.tables.lock();
        let free = slots.iter().position(|s| {
            s.device.len() >= table.len() && s.done.as_ref().is_none_or(|e| e.is_complete().unwrap_or(false))
        });
        let mut slot = match free {
            Some(i) => slots.swap_remove(i),
            None => {
                if slots.len() >= TABLE_SLOTS {
                    // Every slot is busy (or too small): wait for the oldest and drop it.
                    let old = slots.remove(0);
                    if let Some(e) = &old.done {
                        e.synchronize().map_err(|e| self.err(e))?;
                    }
                }
                let bytes = table.len().next_power_of_two().max(4096);
                let host = self.device.alloc_pinned(bytes).map_err(|e| self.err(e))?;
                let device = self.device.alloc(bytes).map_err(|e| self.err(e))?;
                TableSlot { host, device, done: None }
            }
        };
        let queued = (|| -> Result<()> {
            slot.host.as_mut_slice().map_err(|e| self.err(e))?[..table.len()].copy_from_slice(&table);
            stream.copy_to_device(&mut slot.device, 0, &mut slot.host, 0..table.len()).map_err(|e| self.err(e))?;
            let args = plan.kernargs(slot.device.device_address()).map_err(|e| self.err(e))?;
            let (grid, block) = plan.launch();
            let config = LaunchConfig { grid, block, shared_mem_bytes: 0 };
            config.validate().map_err(|e| self.err(e))?;
            // SAFETY: `args` is packed from the entry's own kernel-argument layout; the table it
            // points at is this slot's device buffer, queued for upload before the kernel on the
            // same stream and kept (not reused) until the event recorded below has completed;
            // the groups' addresses were checked (this function's contract).
            unsafe { f.launch(&config, stream, &args) }.map_err(|e| self.err(e))?;
            let event = match slot.done.take() {
                Some(e) => e,
                None => self.device.create_event(false).map_err(|e| self.err(e))?,
            };
            event.record(stream).map_err(|e| self.err(e))?;
            slot.done = Some(event);
            Ok(())
        })();
        if queued.is_err() {
            // The slot's state is unknown (a copy may be queued): wait for the stream before
            // handing it out again.
            let _ = stream.synchronize();
            slot.done = None;
        }
        slots.push(slot);
        queued?;
        LAST_KERNEL.with(|k| k.set(Some(plan.entry.name)));
        Ok(())
    }

    /// One GEMM on device-resident operands, queued on `stream` (of this device): A and B are
    /// read from `a.0` / `b.0` at byte offsets `a.1` / `b.1`, C is read (if `beta != 0`) and
    /// written at byte offset `c.1` of `c.0`, all in the problem's layout and leading dimensions.
    /// Everything is checked first ([`Self::check_device_gemm`]); on bad input nothing is
    /// launched and the error is `Invalid`, `Misaligned`, `WrongDevice` or `Unsupported`.
    /// Returns once the kernel is queued: work queued on `stream` afterwards (a copy, a
    /// collective) sees C, and the host sees it after synchronising the stream. Empty problems
    /// (`m` or `n` = 0) queue nothing. `k = 0` computes `beta * C`.
    pub fn gemm_device(
        &self,
        stream: &Stream,
        p: &GemmProblem,
        a: (&DeviceBuffer, usize),
        b: (&DeviceBuffer, usize),
        c: (&mut DeviceBuffer, usize),
    ) -> Result<()> {
        self.gemm_device_as(stream, p, a, b, c, None)
    }
    /// The kernel this GPU runs for `whole` when [`plan_gemm`] plans it as one launch (no split,
    /// no pre-pass), `None` otherwise: a column-parallel shard run with it
    /// ([`Self::gemm_device_as`]) sums every entry of C in the order one device does, so the
    /// gathered C is one device's bit for bit (the kernel a shard's own shape would pick may
    /// tile K otherwise: gfx942 bf16 64 x 96 x 48 runs a 64x64x32 three-stage tile, its
    /// 64 x 48 x 48 halves a 64x64x64 one).
    pub fn whole_problem_kernel(&self, whole: &GemmProblem) -> Option<&'static gemm_kernels::KernelEntry> {
        let cus = u32::try_from(self.info.compute_units).unwrap_or(u32::MAX);
        plan_gemm(self.arch, cus, whole)
            .ok()
            .flatten()
            .filter(|g| g.split.is_none() && g.prepass.is_none())
            .map(|g| g.kernel.entry)
    }

    /// [`Self::gemm_device`] with `entry`'s kernel where it runs `p` at these addresses
    /// (the column-parallel shards of [`Self::whole_problem_kernel`]), else (and with `None`)
    /// the dispatcher's plan for `p`.
    pub fn gemm_device_as(
        &self,
        stream: &Stream,
        p: &GemmProblem,
        a: (&DeviceBuffer, usize),
        b: (&DeviceBuffer, usize),
        c: (&mut DeviceBuffer, usize),
        entry: Option<&'static gemm_kernels::KernelEntry>,
    ) -> Result<()> {
        let (c_buf, c_off) = c;
        let Some(plan) = self.check_device_gemm(stream, p, a, b, (&*c_buf, c_off))? else {
            return Ok(());
        };
        let addr = |(buf, offset): (&DeviceBuffer, usize)| buf.device_address() + offset as u64;
        let (pa, pb, pc) = (addr(a), addr(b), addr((&*c_buf, c_off)));
        let need = |e: &gemm_kernels::KernelEntry| 2 * u64::from(e.align_elems.max(1));
        let forced = entry
            .filter(|e| pa.is_multiple_of(need(e)) && pb.is_multiple_of(need(e)))
            .and_then(|e| crate::plan::kernel_plan::plan_for(e, p).ok());
        // SAFETY: the problem's spans were checked for these buffers and this stream just above
        // (a kernel plan for the same problem reads and writes the same spans), the forced
        // kernel's alignment just now; C is borrowed mutably, A and B shared, so no other Rust
        // code writes them during this call, and a `DeviceBuffer` is freed only by `hipFree`,
        // which waits for the device, so the kernel never outlives its memory.
        unsafe {
            match forced {
                Some(k) => self.launch_checked(stream, &k, p, pa, pb, pc),
                None => self.launch_planned(stream, &plan, p, pa, pb, pc).map(|_| ()),
            }
        }
    }
}

/// A HIP GPU and one of its streams: the [`KernelLauncher`] of block-scaled jobs, which queue
/// on that stream.
pub struct StreamLauncher<'a> {
    pub backend: &'a HipBackend,
    pub stream: &'a Stream,
}

impl KernelLauncher for StreamLauncher<'_> {
    fn device_name(&self) -> String {
        self.backend.info.name.clone()
    }
    fn arch(&self) -> Arch {
        self.backend.arch
    }
    fn compute_units(&self) -> u32 {
        u32::try_from(self.backend.info.compute_units).unwrap_or(u32::MAX)
    }
    unsafe fn launch(
        &self,
        entry: &'static gemm_kernels::KernelEntry,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[u8],
    ) -> Result<()> {
        if entry.arch != self.backend.arch {
            let why = format!("{} is a {} kernel", entry.name, entry.arch);
            return Err(Error::Unsupported { device: self.device_name(), why });
        }
        // SAFETY: forwarded from this method's contract (the same as `launch_args`').
        unsafe { self.backend.launch_args(self.stream, entry, grid, block, args) }
    }
}

impl Backend for HipBackend {
    fn info(&self) -> DeviceInfo {
        self.info.clone()
    }

    /// Checks the call, copies X, W, Y and both scale tensors to fresh device buffers, runs the
    /// job through [`run_block_scaled`] on a stream of its own (its typed error until the
    /// kernels are wired there), waits, and copies Y back.
    fn gemm_block_scaled(&self, p: &BlockScaledProblem, bufs: BlockScaledBuffers<'_>) -> Result<()> {
        if check_gpu_host_call(self.arch, p, &bufs)?.is_none() {
            return Ok(());
        }
        let stream = self.device.create_stream().map_err(|e| self.err(e))?;
        let mut dev = Vec::with_capacity(5);
        for bytes in [bufs.a, bufs.b, &*bufs.c, bufs.scale_a, bufs.scale_b] {
            // Rounded up to 16 bytes: the kernels read whole 16-byte vectors at a row's tail.
            let mut buf = self.device.alloc(bytes.len().next_multiple_of(16).max(16)).map_err(|e| self.err(e))?;
            buf.write(0, bytes).map_err(|e| self.err(e))?;
            dev.push(buf);
        }
        let at = |i: usize| dev[i].device_address();
        let job = BlockScaledJob::new(p, [at(0), at(1), at(2), at(3), at(4)]);
        // SAFETY: the problem was validated and checked for this arch; each buffer is a fresh
        // allocation of this device (hipMalloc: 256-byte aligned) holding the caller's whole
        // buffer, at least the validated span; they are freed (hipFree waits for the device)
        // only after the stream was synchronised below or the launch failed.
        unsafe { run_block_scaled(&StreamLauncher { backend: self, stream: &stream }, &job) }?;
        stream.synchronize().map_err(|e| self.err(e))?;
        dev[2].read(0, bufs.c).map_err(|e| self.err(e))
    }

    fn as_any(self: Arc<Self>) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        Some(self)
    }

    fn gemm(&self, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> Result<()> {
        let mut jobs = [Job { problem: *p, a, b, c }];
        self.gemm_many(&mut jobs).pop().unwrap_or_else(|| Err(self.err("no result")))
    }

    fn gemm_many(&self, jobs: &mut [Job<'_>]) -> Vec<Result<()>> {
        let mut results: Vec<Option<Result<()>>> = vec![None; jobs.len()];
        // Kernel choice and sizes first: items no kernel fits are Unsupported (retryable, so the
        // scheduler gives them to another device), empty ones are done.
        let mut work: Vec<Option<(KernelPlan, ItemBytes, Function)>> = Vec::with_capacity(jobs.len());
        // Items that run as several launches (split-K, `crate::plan::splitk`; the transpose
        // pre-pass, `crate::plan::transpose`): the plan and its functions in launch order.
        let mut splits: Vec<Option<(crate::plan::gemm_plan::GemmPlan, Vec<Function>)>> = vec![None; jobs.len()];
        let mut need = Vec::with_capacity(jobs.len());
        let cus = u32::try_from(self.info.compute_units).unwrap_or(u32::MAX);
        for (i, job) in jobs.iter().enumerate() {
            let p = &job.problem;
            let planned = ItemBytes::of(p).and_then(|mut bytes| {
                // The dispatcher's plan on the CUs this device reports (a partition of the chip
                // has fewer): the kernel, and a split where one beats it.
                let plan = plan_gemm(self.arch, cus, p)
                    .map_err(|why| Error::Unsupported { device: self.info.name.clone(), why })?;
                let Some(plan) = plan else { return Ok(None) };
                let f = self.function(plan.kernel.entry).map_err(|e| self.err(e))?;
                if plan.split.is_some() || plan.prepass.is_some() {
                    match plan.entries().into_iter().map(|e| self.function(e)).collect::<Result<Vec<_>, _>>() {
                        Ok(fs) => {
                            bytes.ws = plan.workspace_bytes();
                            splits[i] = Some((plan, fs));
                        }
                        // A split is an optimisation: without its kernels the plain kernel runs
                        // the problem. A pre-pass plan's kernel runs the transposed problem, so
                        // it has no such fallback.
                        Err(e) if plan.prepass.is_some() => return Err(self.err(e)),
                        Err(_) => {}
                    }
                }
                Ok(Some((plan.kernel, bytes, f)))
            });
            match planned {
                Ok(Some(w)) => {
                    need.push(Some(w.1.device_bytes()));
                    work.push(Some(w));
                }
                Ok(None) => {
                    results[i] = Some(Ok(()));
                    need.push(None);
                    work.push(None);
                }
                Err(e) => {
                    results[i] = Some(Err(e));
                    need.push(None);
                    work.push(None);
                }
            }
        }
        let (steps, excluded) = plan_pipeline(&need, self.budget);
        for (i, why) in excluded {
            let why = match why {
                Excluded::TooLarge { need, budget } => {
                    format!("needs {need} bytes of device workspace, the budget is {budget}")
                }
                Excluded::Empty => "empty".into(),
            };
            results[i] = Some(Err(Error::Unsupported { device: self.info.name.clone(), why }));
        }
        if !steps.is_empty() {
            let mut guard = self.pipeline.lock();
            if guard.is_none() {
                match Pipeline::new(&self.device) {
                    Ok(p) => *guard = Some(p),
                    Err(e) => {
                        let e = self.err(e);
                        return results.into_iter().map(|r| r.unwrap_or_else(|| Err(e.clone()))).collect();
                    }
                }
            }
            let pipe = guard.as_mut().expect("created above");
            // Items staged and not yet finished: a failure on a shared stream may be theirs too.
            let mut in_flight: Vec<usize> = Vec::with_capacity(SLOTS);
            for step in steps {
                match step {
                    Step::Stage { item, .. } => in_flight.push(item),
                    Step::Finish { item, .. } => in_flight.retain(|&i| i != item),
                    _ => {}
                }
                let (item, outcome) = match step {
                    Step::Release { slot } => {
                        pipe.release(slot);
                        continue;
                    }
                    Step::Stage { item, .. }
                    | Step::Launch { item, .. }
                    | Step::Download { item, .. }
                    | Step::Finish { item, .. }
                        if matches!(results[item], Some(Err(_))) =>
                    {
                        continue
                    }
                    Step::Stage { item, slot } => {
                        let (_, bytes, _) = work[item].as_ref().expect("planned items have work");
                        // An item above a slot's share runs alone, with the whole budget.
                        let share = self.budget / SLOTS;
                        let cap = if bytes.device_bytes() > share { self.budget } else { share };
                        (item, pipe.stage(slot, bytes, cap, &jobs[item]))
                    }
                    Step::Launch { item, slot } => {
                        let (plan, bytes, f) = work[item].as_ref().expect("planned items have work");
                        match &splits[item] {
                            Some((sp, fs)) => (item, pipe.launch_split(slot, sp, fs, &jobs[item].problem, bytes)),
                            None => (item, pipe.launch(slot, plan, f, &jobs[item].problem, bytes)),
                        }
                    }
                    Step::Download { item, slot } => {
                        let (_, bytes, _) = work[item].as_ref().expect("planned items have work");
                        (item, pipe.download(slot, bytes))
                    }
                    Step::Finish { item, slot } => {
                        let (_, bytes, _) = work[item].as_ref().expect("planned items have work");
                        let r = pipe.finish(slot, bytes, jobs[item].c);
                        if r.is_ok() {
                            results[item] = Some(Ok(()));
                        }
                        (item, r)
                    }
                };
                if let Err(e) = outcome {
                    results[item] = Some(Err(match e {
                        StepError::Hip(e) => self.err(e),
                        StepError::Plan(why) => self.err(why),
                    }));
                    // Nothing of the failed item may stay in flight: its slot is reused. If a
                    // stream reports an error while draining, the other items in flight may have
                    // been skipped or fed by the failed work (a queue stops at a fault, and an
                    // event wait does not carry errors across streams): they fail too, retryably.
                    in_flight.retain(|&i| i != item);
                    if !pipe.drain() {
                        for &other in &in_flight {
                            results[other] =
                                Some(Err(self.err("a stream of the device failed while this item was in flight")));
                        }
                        in_flight.clear();
                    }
                }
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(Error::NotRun("lost by the HIP pipeline".into()))))
            .collect()
    }

    fn jobs_per_call(&self) -> usize {
        JOBS_PER_CALL
    }

    fn estimate_seconds(&self, p: &GemmProblem) -> f64 {
        estimate(self.arch, p)
    }
}

// ---------------------------------------------------------------------------------------------
// The part that only runs on AMD hardware.

enum StepError {
    Hip(gemm_rocm::Error),
    Plan(String),
}

impl From<gemm_rocm::Error> for StepError {
    fn from(e: gemm_rocm::Error) -> Self {
        StepError::Hip(e)
    }
}

/// One workspace slot: one device allocation holding the item's A, B and C regions (at
/// [`ItemBytes::offsets`]), one pinned staging buffer with the same offsets, its own copy
/// streams, and the events that order its item's copies and kernel.
///
/// Both buffers only grow (within the slot's share of the budget, see [`grown_size`]) and are
/// freed only by a `Release` step or a drain after a failure, so a batch of mixed sizes does not
/// call `hipMalloc`/`hipHostMalloc` (both expensive, the latter synchronising) per item; copies
/// move byte ranges of them.
///
/// Reuse of the buffers is ordered by events, explicitly:
/// * the device regions are overwritten by the next upload only after the previous item's
///   download: the copy-in stream waits for `downloaded` before uploading;
/// * the kernel waits for `uploaded`, the download for `computed`;
/// * the pinned staging is written by the host only after its own events (recorded by gemm-rocm
///   after each copy touching it, see `PinnedHostBuffer`) have completed, i.e. after the
///   previous item's upload and download, and C is read from it only after its download's.
///
/// Copy streams are per slot so that finishing the item of one slot never waits for work queued
/// for the other slot.
struct Slot {
    copy_in: Stream,
    copy_out: Stream,
    dev: Option<DeviceBuffer>,
    pinned: Option<PinnedHostBuffer>,
    uploaded: Event,
    computed: Event,
    downloaded: Event,
    /// Whether `downloaded` has been recorded since the slot's buffers were (re)allocated: only
    /// then does the next upload have a download to wait for.
    download_recorded: bool,
}

/// The compute stream and the slots of one device. AMD hardware (or the emulated runtime) only.
struct Pipeline {
    device: Device,
    compute: Stream,
    slots: Vec<Slot>,
}

/// The size a slot's buffer grows to for `need` bytes when it holds `have` (0 if none): at least
/// doubling, so a batch of growing items reallocates O(log) times, never beyond `cap` (the slot's
/// share of the budget, which `plan_pipeline` guarantees is at least `need`).
pub fn grown_size(have: usize, need: usize, cap: usize) -> usize {
    need.max(have.saturating_mul(2).min(cap))
}

/// Grows a device buffer to hold `need` bytes (free first: the budget counts the new one only).
fn grow_device(device: &Device, buf: &mut Option<DeviceBuffer>, need: usize, cap: usize) -> gemm_rocm::Result<bool> {
    let have = buf.as_ref().map_or(0, DeviceBuffer::len);
    if have >= need {
        return Ok(false);
    }
    *buf = None;
    *buf = Some(device.alloc(grown_size(have, need, cap))?);
    Ok(true)
}

/// Grows a pinned buffer to hold `need` bytes. Dropping the old one first waits for its copies.
fn grow_pinned(device: &Device, buf: &mut Option<PinnedHostBuffer>, need: usize, cap: usize) -> gemm_rocm::Result<()> {
    let have = buf.as_ref().map_or(0, PinnedHostBuffer::len);
    if have < need {
        *buf = None;
        *buf = Some(device.alloc_pinned(grown_size(have, need, cap))?);
    }
    Ok(())
}

impl Pipeline {
    fn new(device: &Device) -> gemm_rocm::Result<Self> {
        let slots = (0..SLOTS)
            .map(|_| {
                Ok(Slot {
                    copy_in: device.create_stream()?,
                    copy_out: device.create_stream()?,
                    dev: None,
                    pinned: None,
                    uploaded: device.create_event(false)?,
                    computed: device.create_event(false)?,
                    downloaded: device.create_event(false)?,
                    download_recorded: false,
                })
            })
            .collect::<gemm_rocm::Result<Vec<_>>>()?;
        Ok(Self { device: device.clone(), compute: device.create_stream()?, slots })
    }

    /// Stage: inputs into the slot's pinned staging, their uploads queued after the slot's
    /// previous download, `uploaded` recorded. `cap` is the most the slot's buffers may grow to.
    fn stage(&mut self, slot: usize, bytes: &ItemBytes, cap: usize, job: &Job<'_>) -> Result<(), StepError> {
        let device = self.device.clone();
        let s = &mut self.slots[slot];
        let need = bytes.device_bytes();
        if grow_device(&device, &mut s.dev, need, cap)? {
            // A fresh allocation: nothing of the previous item lives in it.
            s.download_recorded = false;
        }
        grow_pinned(&device, &mut s.pinned, bytes.staging_bytes(), cap)?;
        let (Some(dev), Some(pinned)) = (s.dev.as_mut(), s.pinned.as_mut()) else {
            return Err(StepError::Plan("workspace missing".into()));
        };
        let offsets = bytes.offsets();
        let sources: [Option<&[u8]>; 3] = [Some(job.a), Some(job.b), bytes.read_c.then_some(&*job.c)];
        let lens = [bytes.a, bytes.b, bytes.c];
        {
            // Waits for the staging's own events: the previous item's upload and download.
            let staging = pinned.as_mut_slice()?;
            for k in 0..3 {
                let Some(src) = sources[k] else { continue };
                let (Some(src), Some(dst)) = (src.get(..lens[k]), staging.get_mut(offsets[k]..offsets[k] + lens[k]))
                else {
                    return Err(StepError::Plan(format!("operand {k} is shorter than its span of {} bytes", lens[k])));
                };
                dst.copy_from_slice(src);
            }
        }
        if s.download_recorded {
            s.copy_in.wait_event(&s.downloaded)?;
        }
        for k in 0..3 {
            if sources[k].is_some() {
                s.copy_in.copy_to_device(dev, offsets[k], pinned, offsets[k]..offsets[k] + lens[k])?;
            }
        }
        s.uploaded.record(&s.copy_in)?;
        Ok(())
    }

    /// Launch: after the upload, on the compute stream; `computed` recorded.
    fn launch(
        &mut self,
        slot: usize,
        plan: &KernelPlan,
        f: &Function,
        p: &GemmProblem,
        bytes: &ItemBytes,
    ) -> Result<(), StepError> {
        let s = &self.slots[slot];
        let Some(dev) = s.dev.as_ref() else {
            return Err(StepError::Plan("workspace missing".into()));
        };
        let base = dev.device_address();
        let [oa, ob, oc] = bytes.offsets().map(|o| base + o as u64);
        let (config, args) = launch_for(plan, p, oa, ob, oc).map_err(StepError::Plan)?;
        self.compute.wait_event(&s.uploaded)?;
        // SAFETY: `args` is packed from the entry's own kernel-argument layout
        // (`kernel_plan::KernelPlan::kernargs`); the three addresses are regions of this slot's
        // live device buffer, which holds `bytes.device_bytes()` bytes (grown in `stage`): each
        // region is its operand's span rounded up to 256 bytes, at a 256-byte aligned offset
        // (the kernels read at most the span rounded up to 4 bytes and need 16-byte aligned
        // A/B addresses), and the plan checked the kernel's alignment and 2^31-byte limits. The
        // buffer stays allocated until the kernel is done: it is only freed or regrown after
        // this slot's `Finish` (which waits for `downloaded`, recorded after `computed`) or a
        // drain, and `hipFree` waits for the device.
        unsafe { f.launch(&config, &self.compute, &args)? };
        LAST_KERNEL.with(|k| k.set(Some(plan.entry.name)));
        s.computed.record(&self.compute)?;
        Ok(())
    }

    /// Launch of a plan of several launches: after the upload, on the compute stream, in
    /// order: a transpose pre-pass into the slot's workspace region, then a split tail's head
    /// (the plain kernel over C's leading columns), the partial kernel into the workspace, the
    /// reduction into C (stream order makes each launch see what the ones before it wrote);
    /// `computed` recorded after the last.
    fn launch_split(
        &mut self,
        slot: usize,
        plan: &crate::plan::gemm_plan::GemmPlan,
        fs: &[Function],
        p: &GemmProblem,
        bytes: &ItemBytes,
    ) -> Result<(), StepError> {
        let s = &self.slots[slot];
        let Some(dev) = s.dev.as_ref() else {
            return Err(StepError::Plan("workspace missing".into()));
        };
        if bytes.ws < plan.workspace_bytes() {
            return Err(StepError::Plan("the split-K or pre-pass workspace was not sized".into()));
        }
        let base = dev.device_address();
        let [oa, ob, oc] = bytes.offsets().map(|o| base + o as u64);
        let ws = base + bytes.ws_offset() as u64;
        let launches = plan.launches(p, oa, ob, oc, ws).map_err(StepError::Plan)?;
        if launches.len() != fs.len() {
            return Err(StepError::Plan(format!("{} launches for {} functions", launches.len(), fs.len())));
        }
        self.compute.wait_event(&s.uploaded)?;
        for (l, f) in launches.iter().zip(fs) {
            let config = LaunchConfig { grid: l.grid, block: l.block, shared_mem_bytes: 0 };
            config.validate().map_err(|e| StepError::Plan(e.to_string()))?;
            // SAFETY: `l.args` is packed from the entry's own kernel-argument layout
            // (`gemm_plan::GemmPlan::launches`: `splitk::SplitPlan::launches`,
            // `transpose::TransposePlan::launch`); A, B and C are regions of this slot's live device
            // buffer as in `launch`, and the workspace is the region after C, `bytes.ws >=
            // workspace_bytes()` bytes at a 256-byte aligned offset (grown in `stage`, which
            // sizes the buffer by `device_bytes()`, workspace included). The plan checked the
            // kernels' alignment and the 2^31-byte spans; a split tail's B and C addresses are
            // those regions advanced by whole columns inside them. The buffer stays allocated
            // until every kernel is done (freed only after this slot's `Finish` or a drain).
            unsafe { f.launch(&config, &self.compute, &l.args)? };
            LAST_KERNEL.with(|k| k.set(Some(l.entry.name)));
        }
        s.computed.record(&self.compute)?;
        Ok(())
    }

    /// Download: after the kernel, on the copy-out stream; `downloaded` recorded.
    fn download(&mut self, slot: usize, bytes: &ItemBytes) -> Result<(), StepError> {
        let s = &mut self.slots[slot];
        s.copy_out.wait_event(&s.computed)?;
        let (Some(dev), Some(pinned)) = (s.dev.as_ref(), s.pinned.as_mut()) else {
            return Err(StepError::Plan("workspace missing".into()));
        };
        let oc = bytes.offsets()[2];
        s.copy_out.copy_to_host(pinned, oc, dev, oc..oc + bytes.c)?;
        s.downloaded.record(&s.copy_out)?;
        s.download_recorded = true;
        Ok(())
    }

    /// Finish: wait for the download, check that the upload and the kernel succeeded too, hand
    /// C to the caller. Each of the item's three events must complete without error: a stream
    /// waiting for another stream's event proceeds even when the work before that event failed,
    /// so a clean download alone does not prove a good C.
    fn finish(&mut self, slot: usize, bytes: &ItemBytes, c: &mut [u8]) -> Result<(), StepError> {
        let s = &mut self.slots[slot];
        s.downloaded.synchronize()?;
        s.uploaded.synchronize()?;
        s.computed.synchronize()?;
        let Some(pinned) = s.pinned.as_mut() else {
            return Err(StepError::Plan("workspace missing".into()));
        };
        let oc = bytes.offsets()[2];
        // Waits for the staging's own events (the download above among them).
        let staged = pinned.as_slice()?;
        let (Some(src), Some(dst)) = (staged.get(oc..oc + bytes.c), c.get_mut(..bytes.c)) else {
            return Err(StepError::Plan(format!("C is shorter than its span of {} bytes", bytes.c)));
        };
        dst.copy_from_slice(src);
        Ok(())
    }

    /// Frees a slot's buffers (each free waits for the device).
    fn release(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        s.dev = None;
        s.pinned = None;
        s.download_recorded = false;
    }

    /// Waits for every stream (all of them, whatever fails): after a failed step nothing may
    /// stay in flight. `false` if any stream reported an error.
    fn drain(&self) -> bool {
        let mut clean = self.compute.synchronize().is_ok();
        for s in &self.slots {
            clean &= s.copy_in.synchronize().is_ok();
            clean &= s.copy_out.synchronize().is_ok();
        }
        clean
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        // Buffers are freed after the streams finished; errors are already logged by gemm-rocm.
        let _ = self.drain();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::{DType, Layout, Transpose};

    /// Replays a plan: every planned item goes through its four steps in order in one slot, a
    /// slot is staged only when free, at most SLOTS items are in flight, and the reserved device
    /// memory (grow-only per slot until released) never exceeds the budget.
    fn replay(need: &[Option<usize>], budget: usize) -> Vec<Step> {
        let (steps, excluded) = plan_pipeline(need, budget);
        let mut phase = vec![0u8; need.len()];
        let mut slot_of = vec![usize::MAX; need.len()];
        let mut occupant: [Option<usize>; SLOTS] = [None; SLOTS];
        let mut reserved = [0usize; SLOTS];
        for step in &steps {
            match *step {
                Step::Release { slot } => {
                    assert!(occupant[slot].is_none(), "released slot {slot} while in use: {steps:?}");
                    reserved[slot] = 0;
                }
                Step::Stage { item, slot } => {
                    assert_eq!(phase[item], 0);
                    assert!(occupant[slot].is_none(), "slot {slot} staged while busy: {steps:?}");
                    occupant[slot] = Some(item);
                    slot_of[item] = slot;
                    reserved[slot] = reserved[slot].max(need[item].unwrap());
                    assert!(reserved.iter().sum::<usize>() <= budget, "{reserved:?} > {budget}: {steps:?}");
                    phase[item] = 1;
                }
                Step::Launch { item, slot } | Step::Download { item, slot } | Step::Finish { item, slot } => {
                    let expect = match step {
                        Step::Launch { .. } => 1,
                        Step::Download { .. } => 2,
                        _ => 3,
                    };
                    assert_eq!((phase[item], slot_of[item]), (expect, slot), "{step:?} in {steps:?}");
                    phase[item] += 1;
                    if expect == 3 {
                        occupant[slot] = None;
                    }
                }
            }
        }
        for (i, n) in need.iter().enumerate() {
            let out = excluded.iter().any(|(j, _)| *j == i);
            match n {
                None => assert_eq!(phase[i], 0),
                Some(n) if *n > budget => assert!(out && phase[i] == 0),
                Some(_) => assert!(!out && phase[i] == 4, "item {i} incomplete: {steps:?}"),
            }
        }
        assert!(occupant.iter().all(Option::is_none));
        steps
    }

    #[test]
    fn uniform_items_double_buffer_and_overlap() {
        let steps = replay(&[Some(100); 4], 1000);
        use Step::*;
        assert_eq!(
            steps,
            [
                Stage { item: 0, slot: 0 },
                Launch { item: 0, slot: 0 },
                Download { item: 0, slot: 0 },
                Stage { item: 1, slot: 1 },
                Launch { item: 1, slot: 1 },
                Download { item: 1, slot: 1 },
                Finish { item: 0, slot: 0 },
                Stage { item: 2, slot: 0 },
                Launch { item: 2, slot: 0 },
                Download { item: 2, slot: 0 },
                Finish { item: 1, slot: 1 },
                Stage { item: 3, slot: 1 },
                Launch { item: 3, slot: 1 },
                Download { item: 3, slot: 1 },
                Finish { item: 2, slot: 0 },
                Finish { item: 3, slot: 1 },
            ]
        );
    }

    #[test]
    fn large_items_run_alone_and_oversized_ones_are_excluded() {
        let steps = replay(&[Some(100), Some(600), Some(100), Some(2000), None, Some(500), Some(1000)], 1000);
        // The 600-byte item waits for item 0 and has every other slot released first.
        let big = steps.iter().position(|s| *s == Step::Stage { item: 1, slot: 0 }).unwrap();
        assert!(steps[..big].contains(&Step::Finish { item: 0, slot: 0 }));
        assert!(steps[..big].contains(&Step::Release { slot: 1 }));
        let (_, excluded) = plan_pipeline(&[Some(2000)], 1000);
        assert_eq!(excluded, [(0, Excluded::TooLarge { need: 2000, budget: 1000 })]);
    }

    #[test]
    fn plans_hold_their_invariants_for_mixed_sizes() {
        let mut state = 7u64;
        for _ in 0..300 {
            let len = (state % 12) as usize;
            let need: Vec<Option<usize>> = (0..len)
                .map(|_| {
                    state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    match state >> 60 {
                        0 => None,
                        x => Some(((state >> 20) % (300 * x)) as usize + 1),
                    }
                })
                .collect();
            replay(&need, 1000);
        }
    }

    #[test]
    fn item_bytes_and_regions() {
        let p = GemmProblem::new(3, 5, 7).with_dtypes(DType::Bf16, DType::Bf16, DType::F32).with_scalars(1.0, 0.0);
        let b = ItemBytes::of(&p).unwrap();
        assert_eq!(b, ItemBytes { a: 42, b: 70, c: 60, read_c: false, ws: 0 });
        // beta == 0 but C has leading-dimension padding: it goes up so the padding comes back.
        let padded = p.with_leading_dims(p.lda, p.ldb, p.ldc + 1);
        assert!(ItemBytes::of(&padded).unwrap().read_c);
        assert_eq!(b.device_bytes(), 3 * 256);
        assert_eq!(ItemBytes::region(0), 256);
        assert_eq!(ItemBytes::region(257), 512);
        assert!(ItemBytes::of(&GemmProblem::new(3, 5, 7).with_leading_dims(1, 5, 5)).is_err());
    }

    #[test]
    fn launches_follow_the_manifest_and_swap_row_major_operands() {
        let entries = gemm_kernels::catalogue();
        assert!(!entries.is_empty(), "the catalogue is built with the library");
        // Fused-epilogue kernels take their own calls, grouped kernels a problem table; xf32
        // kernels need the permission.
        for e in entries.iter().filter(|e| e.is_plain()) {
            let ld = |x: usize| x.next_multiple_of(e.align_elems.max(1) as usize);
            for layout in [Layout::ColMajor, Layout::RowMajor] {
                // In row-major storage the kernel's A is the problem's B, transposes swapped.
                let (ta, tb) = match layout {
                    Layout::ColMajor => (e.trans_a, e.trans_b),
                    Layout::RowMajor => (e.trans_b, e.trans_a),
                };
                let (ab, ct) = (e.a_type, e.c_type);
                let p =
                    GemmProblem::new(100, 70, 40).with_layout(layout).with_transposes(ta, tb).with_dtypes(ab, ab, ct);
                let p = p.with_leading_dims(ld(p.lda), ld(p.ldb), p.ldc).with_scalars(1.5, -2.0).with_xf32(e.xf32());
                let plan = kernel_plan::plan(e.arch, &p).unwrap_or_else(|why| panic!("{}: {why}", e.name));
                let (config, args) = launch_for(&plan, &p, 0xA000, 0xB000, 0xC000).unwrap();
                assert_eq!(args.len(), plan.entry.kernarg_size as usize);
                let field = |name: &str| {
                    let spec = plan.entry.kernarg.iter().find(|s| s.name == name).unwrap();
                    args[spec.offset as usize..(spec.offset + spec.size) as usize].to_vec()
                };
                let (ka, kb) = if layout == Layout::RowMajor { (0xB000u64, 0xA000u64) } else { (0xA000, 0xB000) };
                assert_eq!(field("a"), ka.to_le_bytes());
                assert_eq!(field("b"), kb.to_le_bytes());
                assert_eq!(field("c"), 0xC000u64.to_le_bytes());
                let (m, n) = if layout == Layout::RowMajor { (70u32, 100u32) } else { (100, 70) };
                assert_eq!(field("m"), m.to_le_bytes());
                assert_eq!(field("n"), n.to_le_bytes());
                assert_eq!(field("k"), 40u32.to_le_bytes());
                assert_eq!(field("alpha"), 1.5f32.to_le_bytes());
                assert_eq!(field("beta"), (-2.0f32).to_le_bytes());
                assert_eq!(config.grid, [m.div_ceil(plan.entry.tile.0), n.div_ceil(plan.entry.tile.1), 1]);
                assert_eq!(config.block, [plan.entry.workgroup_size, 1, 1]);
            }
        }
    }

    #[test]
    fn regions_sit_back_to_back_and_slots_grow_geometrically_within_their_cap() {
        let b = ItemBytes { a: 300, b: 10, c: 512, read_c: true, ws: 0 };
        assert_eq!(b.offsets(), [0, 512, 768]);
        assert_eq!(b.offsets()[2] + ItemBytes::region(b.c), b.device_bytes());
        assert_eq!(grown_size(0, 1000, 4096), 1000);
        assert_eq!(grown_size(1000, 1200, 4096), 2000);
        assert_eq!(grown_size(3000, 3500, 4096), 4096);
        // Never below the need, even when the cap is (the plan guarantees need <= cap).
        assert_eq!(grown_size(3000, 3500, 3200), 3500);
    }

    #[test]
    fn kernel_choice_refuses_what_the_catalogue_lacks() {
        // A dtype pairing no kernel computes is Unsupported, so the
        // scheduler moves the item (f32 x f32 -> bf16: the f32 kernels write f32).
        let mixed = GemmProblem::new(8, 8, 8).with_dtypes(DType::F32, DType::F32, DType::Bf16);
        assert!(kernel_plan::plan(Arch::Gfx942, &mixed).is_err());
        assert!(kernel_plan::plan(Arch::Gfx942, &GemmProblem::new(8, 8, 8)).is_ok());
        // An odd leading dimension only fits the element-load kernels.
        let p = GemmProblem::new(9, 9, 9).with_layout(Layout::ColMajor).with_dtypes(DType::F16, DType::F16, DType::F16);
        let p = p.with_transposes(Transpose::No, Transpose::No).with_leading_dims(9, 9, 9);
        let plan = kernel_plan::plan(Arch::Gfx950, &p).unwrap();
        assert_eq!(plan.entry.align_elems, 1);
    }

    #[test]
    fn estimates_grow_with_work_and_favour_the_faster_arch() {
        let small = GemmProblem::new(64, 64, 64).with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
        let big = GemmProblem::new(4096, 4096, 4096).with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
        assert!(estimate(Arch::Gfx942, &small) < estimate(Arch::Gfx942, &big));
        assert!(estimate(Arch::Gfx950, &big) < estimate(Arch::Gfx942, &big));
        assert!(estimate(Arch::Gfx942, &small) >= 20e-6);
    }
}
