//! The [`Context`]: the devices a program computes on, and the GEMM entry points over them.

use crate::backends::host::HostBackend;
use crate::backends::{validate_bytes, Backend, DeviceInfo, Job};
use crate::batch::schedule::{self, JobOutcome, Observer};
use crate::error::{Error, Result};
use gemm_core::{Element, GemmProblem, StridedBatch};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The environment variable that selects devices, e.g. `host`, `host,host,host`.
pub const DEVICES_ENV: &str = "GEMM_DEVICES";

/// A set of devices. Cheap to clone (devices are shared).
#[derive(Clone)]
pub struct Context {
    devices: Arc<Vec<Arc<dyn Backend>>>,
    /// The devices' names, read once: `info()` may be slow (the host reads /proc/cpuinfo) and
    /// every batch report carries them.
    names: Arc<Vec<String>>,
}

impl core::fmt::Debug for Context {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.devices.iter().map(|d| d.info().name)).finish()
    }
}

/// Per-item results of a batch: every submitted GEMM has exactly one, with where, when and in
/// which order it ran ([`JobOutcome::trace`]), so a batch can be inspected after the fact
/// (per-device load, completion order, a Gantt chart) without instrumenting the program.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchReport {
    pub items: Vec<JobOutcome>,
    /// The batch's wall time, from the scheduler's start to its return; the item traces are
    /// measured from the same start.
    pub wall: Duration,
    /// The names of the context's devices, indexed by [`JobOutcome::device`].
    pub devices: Vec<String>,
}

/// How one device of a batch was used.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceUsage {
    /// Index in the context, as in [`JobOutcome::device`].
    pub device: usize,
    pub name: String,
    /// Items whose outcome this device produced (successes and final failures).
    pub items: usize,
    /// Time the device spent in GEMM calls for those items (overlapping intervals, as in calls
    /// that carry several items, counted once).
    pub busy: Duration,
    /// `busy` over the batch's wall time, 0..=1.
    pub utilisation: f64,
}

impl BatchReport {
    /// Whether every item succeeded.
    pub fn all_ok(&self) -> bool {
        self.items.iter().all(|o| o.result.is_ok())
    }
    /// `(index, error)` of each failed item.
    pub fn failures(&self) -> impl Iterator<Item = (usize, &Error)> {
        self.items.iter().enumerate().filter_map(|(i, o)| o.result.as_ref().err().map(|e| (i, e)))
    }
    /// The results alone, in item order.
    pub fn results(&self) -> Vec<Result<()>> {
        self.items.iter().map(|o| o.result.clone()).collect()
    }
    /// Item indices in the order their outcomes were produced (items that never ran, such as
    /// invalid grouped items, are left out).
    pub fn completion_order(&self) -> Vec<usize> {
        let mut ranked: Vec<(usize, usize)> =
            self.items.iter().enumerate().filter_map(|(i, o)| o.trace.map(|t| (t.rank, i))).collect();
        ranked.sort_unstable();
        ranked.into_iter().map(|(_, i)| i).collect()
    }
    /// One entry per device of the context, in device order, including devices that ran nothing.
    pub fn device_usage(&self) -> Vec<DeviceUsage> {
        let wall = self.wall.as_secs_f64();
        self.devices
            .iter()
            .enumerate()
            .map(|(d, name)| {
                let mine = self.items.iter().filter(|o| o.device == Some(d));
                let items = mine.clone().count();
                let mut spans: Vec<(Duration, Duration)> =
                    mine.filter_map(|o| o.trace.map(|t| (t.started, t.finished))).collect();
                spans.sort_unstable();
                // The union of the intervals: a call that carries several items counts once.
                let mut busy = Duration::ZERO;
                let mut reach = Duration::ZERO;
                for (start, end) in spans {
                    let start = start.max(reach);
                    if end > start {
                        busy += end - start;
                        reach = end;
                    }
                }
                let utilisation = if wall > 0.0 { (busy.as_secs_f64() / wall).min(1.0) } else { 0.0 };
                DeviceUsage { device: d, name: name.clone(), items, busy, utilisation }
            })
            .collect()
    }
}

/// One item of a grouped batch on byte buffers: problem, A, B, C.
pub type ByteItem<'a> = (GemmProblem, &'a [u8], &'a [u8], &'a mut [u8]);

/// One item of a grouped batch: its own problem and buffers.
pub struct GroupedItem<'a, A, B, C> {
    pub problem: GemmProblem,
    pub a: &'a [A],
    pub b: &'a [B],
    pub c: &'a mut [C],
}

fn host_threads(devices: usize) -> usize {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    (cores / devices.max(1)).max(1)
}

impl Context {
    /// `n` host devices sharing the machine's cores (at least one thread each).
    pub fn host(n: usize) -> Self {
        let n = n.max(1);
        let threads = host_threads(n);
        Self::from_backends((0..n).map(|i| Arc::new(HostBackend::new(i, threads)) as Arc<dyn Backend>).collect())
            .expect("at least one device")
    }

    /// A context over the given backends, in priority order (the first is "the best device").
    pub fn from_backends(devices: Vec<Arc<dyn Backend>>) -> Result<Self> {
        if devices.is_empty() || devices.len() > 64 {
            return Err(Error::DeviceSpec {
                spec: format!("{} devices", devices.len()),
                why: "a context holds 1 to 64 devices".into(),
            });
        }
        let names = devices.iter().map(|d| d.info().name).collect();
        Ok(Self { devices: Arc::new(devices), names: Arc::new(names) })
    }

    /// Devices from a list such as `host`, `host,host,host` or `host:0,host:1`.
    pub fn from_spec(spec: &str) -> Result<Self> {
        let entries: Vec<&str> = spec.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        if entries.is_empty() {
            return Err(Error::DeviceSpec { spec: spec.into(), why: "no device named".into() });
        }
        let hosts = entries.iter().filter(|e| **e == "host" || e.starts_with("host:")).count();
        let threads = host_threads(hosts);
        let mut devices: Vec<Arc<dyn Backend>> = Vec::new();
        for entry in &entries {
            let (kind, arg) = entry.split_once(':').unwrap_or((entry, ""));
            match kind {
                "host" => devices.push(Arc::new(HostBackend::new(devices.len(), threads))),
                "hip" => {
                    let ordinal = match arg {
                        "" => None,
                        n => Some(n.parse::<usize>().map_err(|_| Error::DeviceSpec {
                            spec: spec.into(),
                            why: format!("`{entry}`: expected hip or hip:N"),
                        })?),
                    };
                    devices.extend(crate::backends::hip::open(entry, ordinal)?);
                }
                #[cfg(feature = "emu")]
                "emu" => devices.push(Arc::new(crate::backends::emu::EmuBackend::from_entry(entry)?)),
                #[cfg(not(feature = "emu"))]
                "emu" => {
                    return Err(Error::DeviceSpec {
                        spec: spec.into(),
                        why: format!(
                            "`{entry}`: emulated GPUs are a cargo feature of gemm-dispatch (`emu`) this build does not have"
                        ),
                    })
                }
                _ => {
                    return Err(Error::DeviceSpec {
                        spec: spec.into(),
                        why: format!("`{entry}` is not a device (expected host, hip:N or emu:ARCH)"),
                    })
                }
            }
        }
        Self::from_backends(devices)
    }

    /// Devices from `GEMM_DEVICES`, or the default: every usable HIP device, else the host.
    pub fn from_env() -> Result<Self> {
        match std::env::var(DEVICES_ENV) {
            Ok(spec) if !spec.trim().is_empty() => Self::from_spec(&spec),
            _ => {
                let found = crate::backends::hip::discover();
                if found.devices.is_empty() {
                    Ok(Self::host(1))
                } else {
                    Self::from_backends(found.devices)
                }
            }
        }
    }

    /// A process-wide context (from the environment, falling back to the host), used by the
    /// ndarray extension methods.
    pub fn global() -> &'static Context {
        static GLOBAL: OnceLock<Context> = OnceLock::new();
        GLOBAL.get_or_init(|| Self::from_env().unwrap_or_else(|_| Self::host(1)))
    }

    pub fn device_count(&self) -> usize {
        self.devices.len()
    }

    /// The HIP backend of device `index` (for [`crate::backends::hip::HipBackend::gemm_device`] on
    /// device-resident buffers); `None` when that device is not a HIP device or does not exist.
    pub fn hip_backend(&self, index: usize) -> Option<Arc<crate::backends::hip::HipBackend>> {
        self.devices.get(index).and_then(crate::backends::hip::as_hip)
    }

    /// The devices' names, in device order (read once, when the context was made).
    pub(crate) fn device_names(&self) -> &[String] {
        &self.names
    }

    /// The backends, in device order.
    pub(crate) fn backends(&self) -> &[Arc<dyn Backend>] {
        &self.devices
    }

    pub fn devices(&self) -> Vec<DeviceInfo> {
        self.devices.iter().map(|d| d.info()).collect()
    }

    fn device(&self, index: usize) -> Result<&Arc<dyn Backend>> {
        self.devices.get(index).ok_or(Error::NoSuchDevice { index, count: self.devices.len() })
    }

    /// One GEMM on the best device (falling back to the others if it cannot run it).
    pub fn gemm<A: Element, B: Element, C: Element>(
        &self,
        p: &GemmProblem,
        a: &[A],
        b: &[B],
        c: &mut [C],
    ) -> Result<()> {
        p.views(a, b, &mut *c)?;
        let job =
            Job { problem: *p, a: bytemuck::cast_slice(a), b: bytemuck::cast_slice(b), c: bytemuck::cast_slice_mut(c) };
        self.run_single(None, job)
    }

    /// One GEMM on device `device` only.
    pub fn gemm_on<A: Element, B: Element, C: Element>(
        &self,
        device: usize,
        p: &GemmProblem,
        a: &[A],
        b: &[B],
        c: &mut [C],
    ) -> Result<()> {
        self.device(device)?;
        p.views(a, b, &mut *c)?;
        let job =
            Job { problem: *p, a: bytemuck::cast_slice(a), b: bytemuck::cast_slice(b), c: bytemuck::cast_slice_mut(c) };
        self.run_single(Some(device), job)
    }

    /// One GEMM with a fused epilogue (bias, activation, clamp: [`crate::Epilogue`]) on host
    /// memory, computed by the host CPU whatever the context's devices
    /// ([`crate::backends::host_ops::gemm_epilogue_bytes`]: the GEMM with an f32 C, the epilogue, one rounding
    /// to C's dtype). GPUs run epilogues on device memory ([`crate::Gpu::gemm_epilogue`]), with
    /// the same results to the rounding of the activation. `bias` is the f32 vector the
    /// epilogue's bias needs (`None` without one).
    pub fn gemm_epilogue<A: Element, B: Element, C: Element>(
        &self,
        p: &GemmProblem,
        a: &[A],
        b: &[B],
        c: &mut [C],
        epilogue: &crate::Epilogue,
        bias: Option<&[f32]>,
    ) -> Result<()> {
        p.views(a, b, &mut *c)?;
        self.gemm_epilogue_bytes(
            p,
            bytemuck::cast_slice(a),
            bytemuck::cast_slice(b),
            bytemuck::cast_slice_mut(c),
            epilogue,
            bias,
        )
    }

    /// [`Self::gemm_epilogue`] on byte buffers whose dtypes the problem declares (the C ABI's entry).
    pub fn gemm_epilogue_bytes(
        &self,
        p: &GemmProblem,
        a: &[u8],
        b: &[u8],
        c: &mut [u8],
        epilogue: &crate::Epilogue,
        bias: Option<&[f32]>,
    ) -> Result<()> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        crate::backends::host_ops::gemm_epilogue_bytes(p, a, b, c, epilogue, bias, threads)
    }

    /// One fp8 GEMM with scales ([`crate::Fp8Scales`]: per tensor, and optional per-row /
    /// per-column f32 vectors `row` of length m and `col` of length n) on host memory, computed
    /// by the host CPU whatever the context's devices ([`crate::backends::host_ops::gemm_scaled_bytes`]:
    /// the same f32 steps as the GPU kernels, one rounding to C's dtype). GPUs run it on device
    /// memory ([`crate::Gpu::gemm_scaled`]). Scales for non-fp8 inputs or vectors of the wrong
    /// length are [`crate::Error::Scale`]; C is untouched on any error.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_scaled<A: Element, B: Element, C: Element>(
        &self,
        p: &GemmProblem,
        a: &[A],
        b: &[B],
        c: &mut [C],
        scales: &crate::Fp8Scales,
        row: Option<&[f32]>,
        col: Option<&[f32]>,
    ) -> Result<()> {
        p.views(a, b, &mut *c)?;
        self.gemm_scaled_bytes(
            p,
            bytemuck::cast_slice(a),
            bytemuck::cast_slice(b),
            bytemuck::cast_slice_mut(c),
            scales,
            row,
            col,
        )
    }

    /// [`Self::gemm_scaled`] on byte buffers whose dtypes the problem declares (the C ABI's entry).
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_scaled_bytes(
        &self,
        p: &GemmProblem,
        a: &[u8],
        b: &[u8],
        c: &mut [u8],
        scales: &crate::Fp8Scales,
        row: Option<&[f32]>,
        col: Option<&[f32]>,
    ) -> Result<()> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        crate::backends::host_ops::gemm_scaled_bytes(p, a, b, c, scales, row, col, threads)
    }

    /// One block-scaled GEMM (MX or DeepSeek-V3 block fp8: the Linear layer
    /// `Y = alpha * (sa . X) * (sb . W)^T + beta * Y`, rules and formulas in
    /// [`gemm_core::block_scaled`]) on host memory. `a` (X, `m x k`) and `b` (W, `n x k`) are
    /// the packed element bytes (fp4 two per byte, fp6 as `gemm_core::mx::pack`), `scale_a` /
    /// `scale_b` the scale tensors whose dtype must be the one `p` declares, `c` is Y (`C` must
    /// be `p.c_type`). Checked whole first (typed errors, [`crate::Error::BlockScale`]: formats,
    /// block shapes, K, leading dimensions, row alignment, buffer sizes; Y untouched), then run
    /// on the context's first device that can: the host computes it
    /// ([`crate::backends::block_scaled::host_block_scaled`]); an emulated or HIP GPU of the
    /// wrong arch (MX on gfx942) passes it on, one of the right arch answers what
    /// [`crate::backends::block_scaled::run_block_scaled`] answers (the kernel's result, or
    /// [`crate::Error::NoKernel`] with the reason for a job no kernel runs; not passed on to the
    /// next device, so a GPU context never falls back to the host silently). `beta == 0` never
    /// reads Y.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_block_scaled<C: Element>(
        &self,
        p: &gemm_core::BlockScaledProblem,
        a: &[u8],
        scale_a: crate::ScaleSlice<'_>,
        b: &[u8],
        scale_b: crate::ScaleSlice<'_>,
        c: &mut [C],
    ) -> Result<()> {
        if C::DTYPE != p.c_type {
            let (declared, actual) = (p.c_type, C::DTYPE);
            return Err(gemm_core::Error::DTypeMismatch { operand: gemm_core::Operand::C, declared, actual }.into());
        }
        for (operand, slice, desc) in
            [(gemm_core::Operand::A, scale_a, p.scale_a), (gemm_core::Operand::B, scale_b, p.scale_b)]
        {
            if slice.dtype() != desc.dtype {
                let (declared, actual) = (desc.dtype, slice.dtype());
                return Err(gemm_core::BlockScaleError::ScaleSlice { operand, declared, actual }.into());
            }
        }
        self.gemm_block_scaled_bytes(p, [a, scale_a.bytes(), b, scale_b.bytes()], bytemuck::cast_slice_mut(c))
    }

    /// [`Self::gemm_block_scaled`] on byte buffers: X, X's scales, W, W's scales, and Y (the C
    /// ABI's entry).
    pub fn gemm_block_scaled_bytes(
        &self,
        p: &gemm_core::BlockScaledProblem,
        [a, scale_a, b, scale_b]: [&[u8]; 4],
        c: &mut [u8],
    ) -> Result<()> {
        use crate::backends::block_scaled::{check_buffers, next_device_may_run, BlockScaledBuffers};
        check_buffers(p, &BlockScaledBuffers { a, b, scale_a, scale_b, c: &mut *c })?;
        let mut last = None;
        for device in self.devices.iter() {
            let bufs = BlockScaledBuffers { a, b, scale_a, scale_b, c: &mut *c };
            match device.gemm_block_scaled(p, bufs) {
                Err(e) if next_device_may_run(&e) => last = Some(e),
                r => return r,
            }
        }
        Err(last.unwrap_or_else(|| Error::NotRun("no device".into())))
    }

    /// One GEMM on byte buffers whose dtypes the problem declares (the C ABI's entry).
    pub fn gemm_bytes(&self, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> Result<()> {
        validate_bytes(p, a.len(), b.len(), c.len())?;
        self.run_single(None, Job { problem: *p, a, b, c })
    }

    fn run_single(&self, device: Option<usize>, mut job: Job<'_>) -> Result<()> {
        let candidates: Vec<usize> = match device {
            Some(d) => vec![d],
            None => (0..self.devices.len()).collect(),
        };
        let start = std::time::Instant::now();
        let problem = job.problem;
        // In the caller's thread: a single GEMM needs no worker. On a retryable failure the next
        // device gets it, in priority order.
        let mut last = None;
        let mut ran_on = None;
        let mut result = None;
        for d in candidates {
            ran_on = Some(d);
            crate::backends::hip::take_last_kernel();
            match schedule::run_one(self.device(d)?.as_ref(), &mut job) {
                Err(e) if e.is_retryable() => last = Some(e),
                r => {
                    result = Some(r);
                    break;
                }
            }
        }
        let result = result.unwrap_or_else(|| Err(last.unwrap_or_else(|| Error::NotRun("no device".into()))));
        self.log_host_call("gemm", &problem, None, ran_on, start, &result);
        result
    }

    /// Writes a host-memory call to the call log ([`crate::call_log`]) when it is on.
    fn log_host_call(
        &self,
        api: &str,
        p: &GemmProblem,
        batch: Option<&StridedBatch>,
        device: Option<usize>,
        start: std::time::Instant,
        result: &Result<()>,
    ) {
        if !crate::call_log::enabled() {
            return;
        }
        let device = device.map_or_else(|| self.names.join(","), |d| self.names[d].clone());
        let kernel = if device.starts_with("host") { Some("host") } else { crate::backends::hip::last_kernel() };
        let status = result.as_ref().map_or_else(ToString::to_string, |()| "ok".into());
        crate::call_log::record(&crate::call_log::CallRecord {
            api,
            problem: p,
            batch,
            device: &device,
            resident: false,
            kernel,
            host_seconds: start.elapsed().as_secs_f64(),
            status: &status,
        });
    }

    /// A strided batch spread over all devices. `Err` when the batch geometry is invalid (nothing
    /// was touched); otherwise one result per item.
    pub fn gemm_strided_batched<A: Element, B: Element, C: Element>(
        &self,
        batch: &StridedBatch,
        a: &[A],
        b: &[B],
        c: &mut [C],
    ) -> Result<BatchReport> {
        batch.problem.check_elements::<A, B, C>()?;
        self.strided_bytes(batch, bytemuck::cast_slice(a), bytemuck::cast_slice(b), bytemuck::cast_slice_mut(c), None)
    }

    /// [`gemm_strided_batched`](Self::gemm_strided_batched), calling `on_done(item, outcome)` as
    /// each item finishes (for progress reports; see [`Observer`] for the threading rules).
    pub fn gemm_strided_batched_observed<A: Element, B: Element, C: Element>(
        &self,
        batch: &StridedBatch,
        a: &[A],
        b: &[B],
        c: &mut [C],
        on_done: Observer<'_>,
    ) -> Result<BatchReport> {
        batch.problem.check_elements::<A, B, C>()?;
        self.strided_bytes(
            batch,
            bytemuck::cast_slice(a),
            bytemuck::cast_slice(b),
            bytemuck::cast_slice_mut(c),
            Some(on_done),
        )
    }

    /// A strided batch on byte buffers whose dtypes the problem declares (the C ABI's entry).
    pub fn gemm_strided_batched_bytes(
        &self,
        batch: &StridedBatch,
        a: &[u8],
        b: &[u8],
        c: &mut [u8],
    ) -> Result<BatchReport> {
        self.strided_bytes(batch, a, b, c, None)
    }

    fn strided_bytes(
        &self,
        batch: &StridedBatch,
        a: &[u8],
        b: &[u8],
        c: &mut [u8],
        on_done: Option<Observer<'_>>,
    ) -> Result<BatchReport> {
        let p = batch.problem;
        // Dtypes before their byte sizes (fp6/fp4 have none: refused here, typed).
        gemm_core::problem::check_dtypes(p.a_type, p.b_type, p.c_type)?;
        let (sa, sb, sc) = (p.a_type.size_bytes(), p.b_type.size_bytes(), p.c_type.size_bytes());
        batch.validate_buffers(a.len() / sa, b.len() / sb, c.len() / sc)?;
        let item = p.validate()?;
        let mut rest: &mut [u8] = c;
        let mut consumed = 0usize;
        let mut jobs = Vec::with_capacity(batch.count);
        for i in 0..batch.count {
            let (oa, ob, oc) = batch.offsets(i);
            let mine: &mut [u8] = if item.c == 0 {
                &mut []
            } else {
                // Outputs do not overlap (validated), so C splits into disjoint pieces in order.
                let (_, tail) = std::mem::take(&mut rest).split_at_mut(oc * sc - consumed);
                let (mine, tail) = tail.split_at_mut(item.c * sc);
                rest = tail;
                consumed = oc * sc + item.c * sc;
                mine
            };
            jobs.push(Job { problem: p, a: piece(a, oa, item.a, sa), b: piece(b, ob, item.b, sb), c: mine });
        }
        let start = std::time::Instant::now();
        let report = self.run_batch(jobs, on_done);
        if crate::call_log::enabled() {
            let status = report.failures().next().map_or(Ok(()), |(i, e)| {
                Err(Error::NotRun(format!("{} item(s) failed; first: item {i}: {e}", report.failures().count())))
            });
            self.log_host_call("gemm_strided_batched", &p, Some(batch), None, start, &status);
        }
        Ok(report)
    }

    /// A grouped batch: each item its own shape and buffers. Invalid items fail alone.
    pub fn gemm_grouped<A: Element, B: Element, C: Element>(
        &self,
        items: &mut [GroupedItem<'_, A, B, C>],
    ) -> BatchReport {
        self.grouped(items, None)
    }

    /// [`gemm_grouped`](Self::gemm_grouped), calling `on_done(item, outcome)` as each valid item
    /// finishes (invalid items are never run and not reported to it).
    pub fn gemm_grouped_observed<A: Element, B: Element, C: Element>(
        &self,
        items: &mut [GroupedItem<'_, A, B, C>],
        on_done: Observer<'_>,
    ) -> BatchReport {
        self.grouped(items, Some(on_done))
    }

    fn grouped<A: Element, B: Element, C: Element>(
        &self,
        items: &mut [GroupedItem<'_, A, B, C>],
        on_done: Option<Observer<'_>>,
    ) -> BatchReport {
        let prepared = items
            .iter_mut()
            .map(|it| {
                it.problem.views(it.a, it.b, &mut *it.c)?;
                Ok(Job {
                    problem: it.problem,
                    a: bytemuck::cast_slice(it.a),
                    b: bytemuck::cast_slice(it.b),
                    c: bytemuck::cast_slice_mut(&mut *it.c),
                })
            })
            .collect();
        self.run_grouped(prepared, on_done)
    }

    /// A grouped batch on byte buffers (the C ABI's entry): item problems declare the dtypes.
    pub fn gemm_grouped_bytes(&self, items: Vec<ByteItem<'_>>) -> BatchReport {
        self.grouped_bytes(items, None)
    }

    /// [`gemm_grouped_bytes`](Self::gemm_grouped_bytes) with an observer, as
    /// [`gemm_grouped_observed`](Self::gemm_grouped_observed). Items may mix dtypes.
    pub fn gemm_grouped_bytes_observed(&self, items: Vec<ByteItem<'_>>, on_done: Observer<'_>) -> BatchReport {
        self.grouped_bytes(items, Some(on_done))
    }

    fn grouped_bytes(&self, items: Vec<ByteItem<'_>>, on_done: Option<Observer<'_>>) -> BatchReport {
        let prepared = items
            .into_iter()
            .map(|(problem, a, b, c)| {
                validate_bytes(&problem, a.len(), b.len(), c.len())?;
                Ok(Job { problem, a, b, c })
            })
            .collect();
        self.run_grouped(prepared, on_done)
    }

    /// Runs the valid items of a grouped batch; the invalid ones keep their validation error.
    fn run_grouped(&self, prepared: Vec<Result<Job<'_>>>, on_done: Option<Observer<'_>>) -> BatchReport {
        let mut outcomes: Vec<Option<JobOutcome>> = vec![None; prepared.len()];
        let mut positions = Vec::with_capacity(prepared.len());
        let mut jobs = Vec::with_capacity(prepared.len());
        for (i, item) in prepared.into_iter().enumerate() {
            match item {
                Ok(job) => {
                    positions.push(i);
                    jobs.push(job);
                }
                Err(e) => outcomes[i] = Some(JobOutcome { result: Err(e), device: None, attempts: 0, trace: None }),
            }
        }
        // The scheduler numbers the valid items only; the observer hears the caller's numbers.
        let observe = |job: usize, outcome: &JobOutcome| {
            if let Some(on_done) = on_done {
                on_done(positions[job], outcome)
            }
        };
        let problems: Vec<GemmProblem> = jobs.iter().map(|j| j.problem).collect();
        let start = std::time::Instant::now();
        let report = self.run_batch(jobs, on_done.map(|_| &observe as Observer<'_>));
        if crate::call_log::enabled() {
            let n = outcomes.len();
            for ((&pos, outcome), p) in positions.iter().zip(&report.items).zip(&problems) {
                self.log_host_call(
                    &format!("gemm_grouped[{pos}/{n}]"),
                    p,
                    None,
                    outcome.device,
                    start,
                    &outcome.result,
                );
            }
        }
        for (&pos, outcome) in positions.iter().zip(report.items) {
            outcomes[pos] = Some(outcome);
        }
        BatchReport {
            items: outcomes.into_iter().map(|o| o.expect("every item has an outcome")).collect(),
            wall: report.wall,
            devices: report.devices,
        }
    }

    fn run_batch(&self, jobs: Vec<Job<'_>>, on_done: Option<Observer<'_>>) -> BatchReport {
        let traced = schedule::run_traced(&self.devices, jobs, on_done);
        BatchReport { items: traced.outcomes, wall: traced.wall, devices: self.names.to_vec() }
    }
}

/// The bytes of `elems` elements at element `offset`; empty operands (a zero dimension) need no
/// storage at all, whatever their offsets.
fn piece(buf: &[u8], offset: usize, elems: usize, size: usize) -> &[u8] {
    if elems == 0 {
        &buf[..0]
    } else {
        &buf[offset * size..(offset + elems) * size]
    }
}
