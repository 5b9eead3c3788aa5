//! GEMMs on device memory: the API a GPU inference pipeline calls, where weights and
//! activations already live on the GPU and every call must queue on the pipeline's stream and
//! return at once (as rocBLAS, hipBLASLt and cuBLASLt are called).
//!
//! * [`Gpu`]: a HIP device of a [`Context`] ([`Context::gpu`]).
//! * [`DeviceVec<T>`]: a typed allocation on one GPU (allocate, upload, download), with views at
//!   element offsets, [`DeviceSlice`] and [`DeviceSliceMut`] (also made from raw device pointers
//!   of another library, `unsafe`).
//! * [`GpuStream`]: a stream the library makes ([`Gpu::create_stream`]) or the caller's own
//!   `hipStream_t` ([`Gpu::borrow_stream`], never destroyed by us); [`GpuEvent`]s to wait on.
//! * [`Gpu::gemm`], [`Gpu::gemm_strided_batched`], [`Gpu::gemm_grouped`]: queued on the stream;
//!   they return once the kernels are queued, and nothing synchronises unless the caller does.
//!
//! Every call is checked whole before anything is queued, as the host path is: a problem that
//! does not validate, an operand or stream on another device (`Error::WrongDevice`), a span past
//! the end of its buffer (`BufferTooSmall`), an operand not aligned to its element size
//! (`Misaligned`), a dtype no kernel runs (`Unsupported`): the error is returned and nothing is
//! launched, so device memory is untouched.
//!
//! Each GEMM runs what the dispatcher plans for it on this GPU ([`crate::plan::gemm_plan`]): its
//! kernel, or a split-K / split tail (a partial kernel into a workspace of the stream's own, then
//! the reduction into C) where one predicts faster, as decode shapes of few weight rows do.
//!
//! Batches: a strided batch is one plan per item, queued on the stream in order. A grouped
//! GEMM is **one launch** of a `grouped` catalogue kernel (a device-side table of problems,
//! uploaded by the library on the caller's stream, walked by one kernel, as hipBLASLt's grouped
//! GEMM does for mixture-of-experts layers; [`crate::plan::grouped`]) when its non-empty groups share
//! dtypes, layout and transposes and meet the grouped kernels' alignment (leading dimensions of
//! 8 elements, 16-byte A/B); otherwise (or with a single non-empty group) one launch per
//! non-empty group with the best plain kernel for each.
//!
//! With `GEMM_LOG=1` every call is written to the call log ([`crate::call_log`]).

use crate::api::context::Context;
use crate::backends::hip::{DeviceSpan, HipBackend};
use crate::call_log::{self, CallRecord};
use crate::error::{Error, Result};
use crate::plan::kernel_plan::KernelPlan;
use bytemuck::Pod;
use gemm_core::{Arch, Element, GemmProblem, Operand, StridedBatch};
use gemm_rocm::hip::{DeviceBuffer, Event, Stream};
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

/// A HIP GPU of a context, for GEMMs on device memory. Cheap to clone.
#[derive(Clone)]
pub struct Gpu {
    backend: Arc<HipBackend>,
    index: usize,
    name: String,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu").field("index", &self.index).field("name", &self.name).finish()
    }
}

impl Context {
    /// Device `index` of the context as a GPU for device-resident GEMMs. `NoSuchDevice` for an
    /// index past the end, `Unsupported` for a device that is not a HIP GPU.
    pub fn gpu(&self, index: usize) -> Result<Gpu> {
        let count = self.device_count();
        if index >= count {
            return Err(Error::NoSuchDevice { index, count });
        }
        let backend =
            self.hip_backend(index).ok_or_else(|| Error::NotAGpu { device: self.device_names()[index].clone() })?;
        Ok(Gpu { backend, index, name: self.device_names()[index].clone() })
    }
}

/// Converts a gemm-rocm error into the runtime's, naming the device.
fn hip_err(device: &str, e: impl std::fmt::Display) -> Error {
    Error::Device { device: device.into(), message: e.to_string() }
}

/// An allocation of `len` elements of `T` on one GPU (`hipMalloc`), freed on drop (`hipFree`,
/// which waits for the device, so no queued kernel outlives it).
pub struct DeviceVec<T: Pod> {
    buf: DeviceBuffer,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Pod> std::fmt::Debug for DeviceVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceVec")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("buf", &self.buf)
            .finish()
    }
}

/// A shared view of `len` elements of `T` in device memory.
#[derive(Clone, Copy, Debug)]
pub struct DeviceSlice<'a, T> {
    span: DeviceSpan,
    _t: PhantomData<&'a T>,
}

/// An exclusive view of elements of `T` in device memory (a GEMM's C).
#[derive(Debug)]
pub struct DeviceSliceMut<'a, T> {
    span: DeviceSpan,
    _t: PhantomData<&'a mut T>,
}

fn elem_range<T: Pod>(range: &Range<usize>, len: usize) -> Result<(u64, usize)> {
    if range.start > range.end || range.end > len {
        return Err(Error::Invalid(gemm_core::Error::InvalidArgument(format!(
            "device view {}..{} of {len} elements",
            range.start, range.end
        ))));
    }
    let size = std::mem::size_of::<T>();
    Ok(((range.start * size) as u64, (range.end - range.start) * size))
}

impl<T: Pod> DeviceVec<T> {
    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The HIP ordinal of its device.
    pub fn device(&self) -> i32 {
        self.buf.device()
    }
    /// The device address of element 0.
    pub fn device_address(&self) -> u64 {
        self.buf.device_address()
    }
    /// Copies `src` to elements `offset..` (`hipMemcpy`: after the device's earlier work on
    /// blocking streams, blocking the host). For stream order use [`GpuStream::write`].
    pub fn write(&mut self, offset: usize, src: &[T]) -> Result<()> {
        elem_range::<T>(&(offset..offset.saturating_add(src.len())), self.len)?;
        let device = format!("hip:{}", self.device());
        self.buf.write(offset * std::mem::size_of::<T>(), src).map_err(|e| hip_err(&device, e))
    }
    /// Copies elements `offset..offset + dst.len()` into `dst` (`hipMemcpy`, blocking).
    pub fn read(&self, offset: usize, dst: &mut [T]) -> Result<()> {
        elem_range::<T>(&(offset..offset.saturating_add(dst.len())), self.len)?;
        let device = format!("hip:{}", self.device());
        self.buf.read(offset * std::mem::size_of::<T>(), dst).map_err(|e| hip_err(&device, e))
    }
    /// The whole contents, downloaded.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = vec![T::zeroed(); self.len];
        self.read(0, &mut out)?;
        Ok(out)
    }
    /// All elements, shared.
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        DeviceSlice { span: self.span(), _t: PhantomData }
    }
    /// All elements, exclusive.
    pub fn as_mut_slice(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut { span: self.span(), _t: PhantomData }
    }
    /// Elements `range`, shared (a view at an offset).
    pub fn slice(&self, range: Range<usize>) -> Result<DeviceSlice<'_, T>> {
        let (offset, len) = elem_range::<T>(&range, self.len)?;
        Ok(DeviceSlice { span: DeviceSpan { len, ..self.span().advance(offset as usize) }, _t: PhantomData })
    }
    /// Elements `range`, exclusive.
    pub fn slice_mut(&mut self, range: Range<usize>) -> Result<DeviceSliceMut<'_, T>> {
        let (offset, len) = elem_range::<T>(&range, self.len)?;
        let span = DeviceSpan { len, ..self.span().advance(offset as usize) };
        Ok(DeviceSliceMut { span, _t: PhantomData })
    }
    /// The whole vector as a span: `len` elements, readable to the end of the allocation
    /// (rounded up to 4 bytes by [`Gpu::alloc`]).
    pub fn span(&self) -> DeviceSpan {
        DeviceSpan {
            device: self.buf.device(),
            address: self.buf.device_address(),
            len: self.len * size_of::<T>(),
            readable: self.buf.len(),
        }
    }
}

impl<'a, T: Pod> DeviceSlice<'a, T> {
    /// A view of `len` elements at a device address another library allocated.
    ///
    /// # Safety
    /// `address .. address + len * size_of::<T>()` must be device memory of HIP device `device`
    /// that stays allocated, and is not written by anything else while GEMMs reading it run,
    /// for `'a` and until the work queued on it has finished.
    pub unsafe fn from_raw(device: i32, address: u64, len: usize) -> Self {
        let len = len.saturating_mul(size_of::<T>());
        Self { span: DeviceSpan { device, address, len, readable: len }, _t: PhantomData }
    }
    /// Elements (whole ones: a raw span may end mid-element).
    pub fn len(&self) -> usize {
        self.span.len / size_of::<T>()
    }
    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The device address of its first element.
    pub fn device_address(&self) -> u64 {
        self.span.address
    }
    /// Its bytes as a span.
    pub fn span(&self) -> DeviceSpan {
        self.span
    }
    /// The HIP ordinal of its device.
    pub fn device(&self) -> i32 {
        self.span.device
    }
}

impl<'a, T: Pod> DeviceSliceMut<'a, T> {
    /// As [`DeviceSlice::from_raw`], exclusive.
    ///
    /// # Safety
    /// As [`DeviceSlice::from_raw`], and nothing else reads or writes the memory while GEMMs
    /// writing it run.
    pub unsafe fn from_raw(device: i32, address: u64, len: usize) -> Self {
        let len = len.saturating_mul(size_of::<T>());
        Self { span: DeviceSpan { device, address, len, readable: len }, _t: PhantomData }
    }
    /// Elements.
    pub fn len(&self) -> usize {
        self.span.len / size_of::<T>()
    }
    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The device address of its first element.
    pub fn device_address(&self) -> u64 {
        self.span.address
    }
    /// Its device and byte range.
    pub fn span(&self) -> DeviceSpan {
        self.span
    }
    /// A shorter-lived exclusive view of the same elements.
    pub fn reborrow(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut { span: self.span, _t: PhantomData }
    }
    /// Splits at element `mid` into two exclusive views (for grouped GEMMs writing one buffer).
    pub fn split_at_mut(self, mid: usize) -> Result<(DeviceSliceMut<'a, T>, DeviceSliceMut<'a, T>)> {
        let (offset, len) = elem_range::<T>(&(0..mid), self.len())?;
        debug_assert_eq!(offset, 0);
        let left = DeviceSpan { len, ..self.span };
        let right = self.span.advance(len);
        Ok((DeviceSliceMut { span: left, _t: PhantomData }, DeviceSliceMut { span: right, _t: PhantomData }))
    }
}

/// A HIP stream of one GPU: made by the library ([`Gpu::create_stream`], destroyed with the last
/// clone) or the caller's own ([`Gpu::borrow_stream`], never destroyed here).
#[derive(Clone, Debug)]
pub struct GpuStream {
    stream: Stream,
}

/// A point in a stream's work to wait for ([`GpuStream::record`]).
#[derive(Debug)]
pub struct GpuEvent {
    event: Event,
}

impl GpuEvent {
    /// Blocks until the recorded work has finished; its error if it failed.
    pub fn synchronize(&self) -> Result<()> {
        self.event.synchronize().map_err(|e| hip_err(&format!("hip:{}", self.event.device()), e))
    }
    /// Whether the recorded work has finished.
    pub fn is_complete(&self) -> Result<bool> {
        self.event.is_complete().map_err(|e| hip_err(&format!("hip:{}", self.event.device()), e))
    }
}

impl GpuStream {
    fn err(&self, e: impl std::fmt::Display) -> Error {
        hip_err(&format!("hip:{}", self.stream.device()), e)
    }
    /// The HIP ordinal of its device.
    pub fn device(&self) -> i32 {
        self.stream.device()
    }
    /// The raw `hipStream_t`, e.g. to hand to another library.
    pub fn as_raw(&self) -> *mut std::ffi::c_void {
        self.stream.as_raw().cast()
    }
    /// The gemm-rocm stream (for RCCL or other gemm-rocm calls).
    pub fn stream(&self) -> &Stream {
        &self.stream
    }
    /// Blocks until everything queued has finished (`hipStreamSynchronize`); the error of any
    /// failed work.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(|e| self.err(e))
    }
    /// Whether everything queued has finished.
    pub fn is_idle(&self) -> Result<bool> {
        self.stream.is_idle().map_err(|e| self.err(e))
    }
    /// Records an event at the current end of the stream.
    pub fn record(&self) -> Result<GpuEvent> {
        let device = self.stream.device_handle();
        let event = device.create_event(false).map_err(|e| self.err(e))?;
        event.record(&self.stream).map_err(|e| self.err(e))?;
        Ok(GpuEvent { event })
    }
    /// Makes later work on this stream wait for `event` (of any GPU).
    pub fn wait(&self, event: &GpuEvent) -> Result<()> {
        self.stream.wait_event(&event.event).map_err(|e| self.err(e))
    }
    /// Uploads `src` into `dst` in stream order (after the work queued before, before the work
    /// queued after) and waits for it, so `src` may be reused at once.
    pub fn write<T: Pod>(&self, dst: &mut DeviceSliceMut<'_, T>, src: &[T]) -> Result<()> {
        self.copy(dst.span, std::mem::size_of_val(src), |f, d| {
            // SAFETY: `d` is the checked device range of `dst`; `src` is a live borrowed slice
            // of that many bytes, and the stream is synchronised before the borrow ends.
            unsafe { f(d as *mut _, src.as_ptr().cast(), std::mem::size_of_val(src), 1, self.stream.as_raw()) }
        })
    }
    /// Downloads `src` into `dst` in stream order and waits for it.
    pub fn read<T: Pod>(&self, src: DeviceSlice<'_, T>, dst: &mut [T]) -> Result<()> {
        let len = std::mem::size_of_val(dst);
        let ptr = dst.as_mut_ptr();
        self.copy(src.span, len, |f, s| {
            // SAFETY: `s` is the checked device range of `src`; `dst` is an exclusively borrowed
            // slice of `len` bytes (any bytes are a valid `T: Pod`), and the stream is
            // synchronised before the borrow ends.
            unsafe { f(ptr.cast(), s as *const _, len, 2, self.stream.as_raw()) }
        })
    }
    fn copy(
        &self,
        span: DeviceSpan,
        bytes: usize,
        call: impl FnOnce(
            unsafe extern "C" fn(
                *mut std::ffi::c_void,
                *const std::ffi::c_void,
                usize,
                i32,
                gemm_rocm::hip::sys::hipStream_t,
            ) -> i32,
            usize,
        ) -> i32,
    ) -> Result<()> {
        if span.device != self.stream.device() {
            return Err(Error::WrongDevice {
                what: "the device view".into(),
                found: span.device,
                expected: self.stream.device(),
            });
        }
        if bytes != span.len {
            return Err(Error::Invalid(gemm_core::Error::InvalidArgument(format!(
                "copy of {bytes} bytes into or out of a device view of {} bytes",
                span.len
            ))));
        }
        if bytes == 0 {
            return Ok(());
        }
        let hip = self.stream.device_handle().hip().clone();
        let f = hip.api().hipMemcpyAsync().map_err(|e| self.err(e))?;
        let code = call(f, span.address as usize);
        let synced = self.synchronize();
        if code != 0 {
            return Err(self.err(format!("hipMemcpyAsync failed with hipError_t {code}")));
        }
        synced
    }
}

/// One group of a grouped GEMM on device memory: its own problem and operands.
#[derive(Debug)]
pub struct DeviceGroup<'a, A, B, C> {
    pub problem: GemmProblem,
    pub a: DeviceSlice<'a, A>,
    pub b: DeviceSlice<'a, B>,
    pub c: DeviceSliceMut<'a, C>,
}

/// Why a grouped GEMM on device memory was refused or stopped: one entry per group, `None`
/// for the groups that were fine (launched, or not launched because another group was refused).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{} of {} groups failed; first: group {}: {}", self.failed(), self.groups.len(), self.first().0, self.first().1)]
pub struct GroupedError {
    pub groups: Vec<Option<Error>>,
    /// Whether any group was launched before the failure (only a launch error after the check
    /// can leave some queued; a refused call launched nothing).
    pub launched_some: bool,
}

impl GroupedError {
    fn failed(&self) -> usize {
        self.groups.iter().filter(|g| g.is_some()).count()
    }
    /// The first failed group and its error.
    pub fn first(&self) -> (usize, &Error) {
        self.groups
            .iter()
            .enumerate()
            .find_map(|(i, g)| g.as_ref().map(|e| (i, e)))
            .expect("a GroupedError has a failed group")
    }
}

/// Device-resident scales of one block-scaled operand: the variant says the dtype (E8M0 for MX,
/// f32 for block fp8), the problem's [`gemm_core::ScaleDesc`] the block shape and leading
/// dimension.
#[derive(Clone, Copy, Debug)]
pub enum DeviceScales<'a> {
    E8M0(DeviceSlice<'a, gemm_core::E8M0>),
    F32(DeviceSlice<'a, f32>),
}

impl DeviceScales<'_> {
    /// The dtype the view holds.
    pub fn dtype(&self) -> gemm_core::ScaleType {
        match self {
            DeviceScales::E8M0(_) => gemm_core::ScaleType::E8M0,
            DeviceScales::F32(_) => gemm_core::ScaleType::F32,
        }
    }
    /// Its bytes on the device.
    pub fn span(&self) -> DeviceSpan {
        match self {
            DeviceScales::E8M0(s) => s.span,
            DeviceScales::F32(s) => s.span,
        }
    }
}

/// A grouped item at byte level (the C ABI's form): problem and operand spans.
pub type RawGroup = (GemmProblem, DeviceSpan, DeviceSpan, DeviceSpan);

impl Gpu {
    /// Index of the device in its context.
    pub fn index(&self) -> usize {
        self.index
    }
    /// The device's name, e.g. `hip:0`.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Its architecture.
    pub fn arch(&self) -> Arch {
        self.backend.arch()
    }
    /// Its HIP ordinal.
    pub fn ordinal(&self) -> i32 {
        self.backend.device().ordinal()
    }
    /// The HIP backend behind it.
    pub fn backend(&self) -> &Arc<HipBackend> {
        &self.backend
    }
    fn err(&self, e: impl std::fmt::Display) -> Error {
        hip_err(&self.name, e)
    }

    /// Allocates `len` elements (contents unspecified until written).
    pub fn alloc<T: Pod>(&self, len: usize) -> Result<DeviceVec<T>> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or(Error::Invalid(gemm_core::Error::Overflow(format!(
            "{len} elements of {}",
            std::any::type_name::<T>()
        ))))?;
        // Rounded up to 4 bytes: the kernels read whole dwords at the tail of an operand.
        let buf = self.backend.device().alloc(bytes.next_multiple_of(4)).map_err(|e| self.err(e))?;
        Ok(DeviceVec { buf, len, _t: PhantomData })
    }
    /// Allocates and uploads `data` (blocking).
    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<DeviceVec<T>> {
        let mut v = self.alloc(data.len())?;
        v.write(0, data)?;
        Ok(v)
    }
    /// A new non-blocking stream on this GPU.
    pub fn create_stream(&self) -> Result<GpuStream> {
        Ok(GpuStream { stream: self.backend.device().create_stream().map_err(|e| self.err(e))? })
    }
    /// The caller's `hipStream_t` (NULL: the device's null stream), borrowed: never destroyed
    /// by the library. Where the runtime has `hipStreamGetDevice`, a stream of another device
    /// is `WrongDevice`.
    ///
    /// # Safety
    /// `raw` is NULL or a live stream, alive as long as the returned value.
    pub unsafe fn borrow_stream(&self, raw: *mut std::ffi::c_void) -> Result<GpuStream> {
        let device = self.backend.device();
        if !raw.is_null() {
            // SAFETY: a live stream handle (this function's contract).
            if let Some(found) = unsafe { device.hip().stream_device(raw.cast()) } {
                let found = found.map_err(|e| self.err(e))?;
                if found != device.ordinal() {
                    return Err(Error::WrongDevice { what: "the stream".into(), found, expected: device.ordinal() });
                }
            }
        }
        // SAFETY: forwarded from this function's contract; the device was checked above.
        Ok(GpuStream { stream: unsafe { device.borrow_stream(raw.cast()) } })
    }
    /// What the runtime knows of a raw device pointer: its device and the bytes from it to the
    /// end of its allocation (`hipPointerGetAttribute`, `hipMemGetAddressRange`). A pointer that
    /// is not in a live device allocation is `NotDeviceMemory` (`what` names it).
    pub fn span_of_pointer(&self, what: &str, ptr: *const std::ffi::c_void) -> Result<DeviceSpan> {
        let info = self
            .backend
            .device()
            .hip()
            .pointer_info(ptr)
            .map_err(|e| Error::NotDeviceMemory { what: format!("{what} ({ptr:p})"), why: e.to_string() })?;
        let address = ptr as u64;
        // The kernels may read whole dwords up to the span rounded up to 4 bytes. A HIP
        // allocation is page-granular (the emulated runtime's: 16-byte granules), so the bytes up
        // to its end rounded up to 4 are readable too: count them, or a tight allocation whose
        // size is not a multiple of 4 (1485 bf16 elements, say) could never be used.
        let end = info.base.saturating_add(info.size as u64);
        let slack = (end.next_multiple_of(4) - end) as usize;
        let len = info.bytes_from(address);
        Ok(DeviceSpan { device: info.device, address, len, readable: if len > 0 { len + slack } else { 0 } })
    }

    /// `C = alpha op(A) op(B) + beta C` on device memory, queued on `stream`; returns the
    /// kernel launched (`None` for an empty problem, which queues nothing) once it is queued.
    /// `p`'s dtypes must be those of `A`, `B`, `C`. Bad input: the error, nothing launched.
    pub fn gemm<A: Element, B: Element, C: Element>(
        &self,
        stream: &GpuStream,
        p: &GemmProblem,
        a: DeviceSlice<'_, A>,
        b: DeviceSlice<'_, B>,
        c: DeviceSliceMut<'_, C>,
    ) -> Result<Option<&'static str>> {
        p.check_elements::<A, B, C>()?;
        // SAFETY: the views' lifetimes keep their memory allocated and C exclusive for the
        // call; the caller keeps them alive until the stream has run the kernel (dropping a
        // `DeviceVec` waits for the device).
        unsafe { self.gemm_raw("gemm_device", stream, p, a.span, b.span, c.span) }
    }

    /// One GEMM on byte spans whose dtypes the problem declares (the C ABI's entry).
    ///
    /// # Safety
    /// The spans are device memory that stays allocated until the queued kernel has run, and
    /// nothing else writes A/B or touches C while it runs.
    pub unsafe fn gemm_raw(
        &self,
        api: &str,
        stream: &GpuStream,
        p: &GemmProblem,
        a: DeviceSpan,
        b: DeviceSpan,
        c: DeviceSpan,
    ) -> Result<Option<&'static str>> {
        let start = Instant::now();
        let result = self.backend.check_device_spans(stream.device(), p, a, b, c).and_then(|plan| match plan {
            None => Ok(None),
            // SAFETY: checked just above; memory lifetime is this function's contract.
            Some(plan) => {
                unsafe { self.backend.launch_planned(&stream.stream, &plan, p, a.address, b.address, c.address) }
                    .map(Some)
            }
        });
        self.log(api, p, None, &result, start);
        result
    }

    /// `C = clamp(act(alpha op(A) op(B) + beta C + bias))` on device memory, queued on `stream`,
    /// in one kernel of the catalogue's `fused` family ([`crate::plan::fused::fused_entry`]);
    /// `bias` is the f32 vector the epilogue's bias needs (on this GPU; `None` without a bias).
    /// Returns the kernel launched (`None` for an empty problem). Checked whole first, as
    /// [`Self::gemm`], plus the epilogue and the bias vector (`Invalid`, `WrongDevice`); an
    /// epilogue no fused kernel runs for this problem is `Unsupported`, saying why. Nothing is
    /// launched on bad input. [`crate::Context::gemm_epilogue`] computes the same on the host.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_epilogue<A: Element, B: Element, C: Element>(
        &self,
        stream: &GpuStream,
        p: &GemmProblem,
        a: DeviceSlice<'_, A>,
        b: DeviceSlice<'_, B>,
        c: DeviceSliceMut<'_, C>,
        epilogue: &crate::Epilogue,
        bias: Option<DeviceSlice<'_, f32>>,
    ) -> Result<Option<&'static str>> {
        p.check_elements::<A, B, C>()?;
        // SAFETY: as in `gemm`; the bias view's lifetime keeps it allocated for the call.
        unsafe {
            self.gemm_epilogue_raw(
                "gemm_epilogue_device",
                stream,
                p,
                [a.span, b.span, c.span],
                epilogue,
                bias.map(|b| b.span),
            )
        }
    }

    /// [`Self::gemm_epilogue`] on byte spans (the C ABI's entry).
    ///
    /// # Safety
    /// As [`Self::gemm_raw`], and the bias span stays allocated until the queued kernel has run.
    pub unsafe fn gemm_epilogue_raw(
        &self,
        api: &str,
        stream: &GpuStream,
        p: &GemmProblem,
        [a, b, c]: [DeviceSpan; 3],
        epilogue: &crate::Epilogue,
        bias: Option<DeviceSpan>,
    ) -> Result<Option<&'static str>> {
        let start = Instant::now();
        let result = (|| {
            epilogue.check(p, bias.map(|s| s.len / 4))?;
            let Some(plain) = self.backend.check_device_spans(stream.device(), p, a, b, c)? else {
                return Ok(None);
            };
            if epilogue.is_none() {
                // SAFETY: checked just above; memory lifetime is this function's contract.
                unsafe { self.backend.launch_checked(&stream.stream, &plain, p, a.address, b.address, c.address)? };
                return Ok(Some(plain.entry.name));
            }
            let plan = crate::plan::fused::fused_entry(self.arch(), p, epilogue)
                .map_err(|why| Error::Unsupported { device: self.name.clone(), why })?;
            let need = 2 * u64::from(plan.entry.align_elems.max(1));
            for (operand, span, dtype) in [(Operand::A, a, p.a_type), (Operand::B, b, p.b_type)] {
                if !span.address.is_multiple_of(need) {
                    return Err(Error::Misaligned { operand, dtype });
                }
            }
            let bias_address = match bias {
                None => 0,
                Some(s) => {
                    if s.device != self.ordinal() {
                        return Err(Error::WrongDevice {
                            what: "the bias".into(),
                            found: s.device,
                            expected: self.ordinal(),
                        });
                    }
                    if !s.address.is_multiple_of(4) {
                        return Err(Error::Invalid(gemm_core::Error::InvalidArgument(
                            "the bias vector is not 4-byte aligned".into(),
                        )));
                    }
                    s.address
                }
            };
            let args =
                crate::plan::fused::fused_kernargs(&plan, p, [a.address, b.address, c.address], epilogue, bias_address)
                    .map_err(|e| Error::Device { device: self.name.clone(), message: e })?;
            // SAFETY: the operands were checked as for a plain GEMM, the fused kernel's alignment
            // just above, the bias vector's device, alignment and length (`Epilogue::check`: at
            // least the m or n elements the kernel reads); lifetimes are this function's contract.
            unsafe { self.backend.launch_args(&stream.stream, plan.entry, plan.grid, plan.block, &args)? };
            Ok(Some(plan.entry.name))
        })();
        self.log(api, p, None, &result, start);
        result
    }

    /// An fp8 GEMM with scales on device memory, queued on `stream` (`crate::ops::scales`: per
    /// tensor, and optional per-row / per-column f32 vectors of length m and n on this GPU):
    /// `D = scale_d * (alpha * scale_a * scale_b * (row[i] * col[j] * acc) + beta * C)` in the
    /// catalogue's fp8 kernel for the problem (every fp8 kernel takes the scales and vectors).
    /// Returns the kernel launched (`None` for an empty problem). Checked whole first, as
    /// [`Self::gemm`], plus the scales ([`crate::Error::Scale`]: not fp8, a vector of the wrong
    /// length or alignment) and the vectors' device (`WrongDevice`); nothing is launched on bad
    /// input. [`crate::Context::gemm_scaled`] computes the same on the host.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_scaled<A: Element, B: Element, C: Element>(
        &self,
        stream: &GpuStream,
        p: &GemmProblem,
        a: DeviceSlice<'_, A>,
        b: DeviceSlice<'_, B>,
        c: DeviceSliceMut<'_, C>,
        scales: &crate::Fp8Scales,
        row: Option<DeviceSlice<'_, f32>>,
        col: Option<DeviceSlice<'_, f32>>,
    ) -> Result<Option<&'static str>> {
        p.check_elements::<A, B, C>()?;
        // Views have exact lengths: the vectors must be exactly m and n long.
        scales.check(p, row.map(|r| r.span.len / 4), col.map(|c| c.span.len / 4))?;
        // SAFETY: as in `gemm`; the vectors' views keep them allocated for the call.
        unsafe {
            self.gemm_scaled_raw(
                "gemm_scaled_device",
                stream,
                p,
                [a.span, b.span, c.span],
                scales,
                row.map(|r| r.span),
                col.map(|c| c.span),
            )
        }
    }

    /// [`Self::gemm_scaled`] on byte spans (the C ABI's entry): a vector span must hold at
    /// least m (row) or n (column) f32.
    ///
    /// # Safety
    /// As [`Self::gemm_raw`], and the vector spans stay allocated until the queued kernel has run.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn gemm_scaled_raw(
        &self,
        api: &str,
        stream: &GpuStream,
        p: &GemmProblem,
        [a, b, c]: [DeviceSpan; 3],
        scales: &crate::Fp8Scales,
        row: Option<DeviceSpan>,
        col: Option<DeviceSpan>,
    ) -> Result<Option<&'static str>> {
        let start = Instant::now();
        let result = (|| {
            crate::ops::scales::check_spans(p, row.map(|s| s.len / 4), col.map(|s| s.len / 4))?;
            let Some(plan) = self.backend.check_device_spans(stream.device(), p, a, b, c)? else {
                return Ok(None);
            };
            let mut addr = [0u64; 2];
            for (x, (axis, span)) in
                [(crate::ScaleAxis::Row, row), (crate::ScaleAxis::Column, col)].into_iter().enumerate()
            {
                let Some(s) = span else { continue };
                if s.device != self.ordinal() {
                    return Err(Error::WrongDevice {
                        what: format!("the {axis}"),
                        found: s.device,
                        expected: self.ordinal(),
                    });
                }
                if !s.address.is_multiple_of(4) {
                    return Err(crate::ScaleError::VectorAlignment { axis }.into());
                }
                addr[x] = s.address;
            }
            let args = crate::plan::fused::scaled_kernargs(
                &plan,
                p,
                [a.address, b.address, c.address],
                scales,
                addr[0],
                addr[1],
            )
            .map_err(|e| Error::Device { device: self.name.clone(), message: e })?;
            // SAFETY: the operands were checked as for a plain GEMM (spans, device, the kernel's
            // alignment), the vectors' device, alignment and length (at least m / n f32, what the
            // kernel reads); lifetimes are this function's contract.
            unsafe { self.backend.launch_args(&stream.stream, plan.entry, plan.grid, plan.block, &args)? };
            Ok(Some(plan.entry.name))
        })();
        self.log(api, p, None, &result, start);
        result
    }

    /// A block-scaled GEMM (MX or block fp8, [`gemm_core::block_scaled`]) on device memory,
    /// queued on `stream`: X (`a`, `m x k` packed elements), W (`b`, `n x k`), their scale
    /// tensors (of the dtype `p` declares) and Y (`c`, of `p.c_type`), all on this GPU. Checked
    /// whole first, nothing queued on bad input: the problem ([`crate::Error::BlockScale`]), this
    /// GPU's arch (MX on gfx942 is refused with the reason), the stream's and every buffer's
    /// device (`WrongDevice`), each buffer's length (the spans validation gives) and alignment
    /// (X and W 16 bytes, Y its element, f32 scales 4). Then the job goes to
    /// [`crate::backends::block_scaled::run_block_scaled`], which names the kernel it queued
    /// (`None` for an empty problem), or answers [`crate::Error::NoKernel`] with the reason for a
    /// job no kernel runs (other block shapes or scale layouts).
    /// [`crate::Context::gemm_block_scaled`] computes the same on the host.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_block_scaled<C: Element>(
        &self,
        stream: &GpuStream,
        p: &gemm_core::BlockScaledProblem,
        a: DeviceSlice<'_, u8>,
        scale_a: DeviceScales<'_>,
        b: DeviceSlice<'_, u8>,
        scale_b: DeviceScales<'_>,
        c: DeviceSliceMut<'_, C>,
    ) -> Result<Option<&'static str>> {
        if C::DTYPE != p.c_type {
            let (declared, actual) = (p.c_type, C::DTYPE);
            return Err(gemm_core::Error::DTypeMismatch { operand: Operand::C, declared, actual }.into());
        }
        for (operand, s, desc) in [(Operand::A, &scale_a, p.scale_a), (Operand::B, &scale_b, p.scale_b)] {
            if s.dtype() != desc.dtype {
                let (declared, actual) = (desc.dtype, s.dtype());
                return Err(gemm_core::BlockScaleError::ScaleSlice { operand, declared, actual }.into());
            }
        }
        // SAFETY: the views' lifetimes keep their memory allocated and Y exclusive for the call;
        // the caller keeps them alive until the stream has run the kernel (as in `gemm`).
        unsafe { self.gemm_block_scaled_raw(stream, p, [a.span, scale_a.span(), b.span, scale_b.span(), c.span]) }
    }

    /// [`Self::gemm_block_scaled`] on byte spans: X, X's scales, W, W's scales, Y (the C ABI's
    /// entry).
    ///
    /// # Safety
    /// The spans are device memory that stays allocated until the queued kernel has run, and
    /// nothing else writes X, W or the scales or touches Y while it runs.
    pub unsafe fn gemm_block_scaled_raw(
        &self,
        stream: &GpuStream,
        p: &gemm_core::BlockScaledProblem,
        [a, scale_a, b, scale_b, c]: [DeviceSpan; 5],
    ) -> Result<Option<&'static str>> {
        use crate::backends::block_scaled::{check_for_arch, run_block_scaled, BlockScaledJob};
        use gemm_core::BlockScaleError;
        let spans = check_for_arch(p, self.arch())?;
        let me = self.ordinal();
        if stream.device() != me {
            return Err(Error::WrongDevice { what: "the stream".into(), found: stream.device(), expected: me });
        }
        let c_align = p.c_type.size_bytes() as u64;
        let s_align = p.scale_a.dtype.size_bytes() as u64;
        let checks = [
            ("A (X)", a, spans.a, 16),
            ("the scales of A", scale_a, spans.scale_a, s_align),
            ("B (W)", b, spans.b, 16),
            ("the scales of B", scale_b, spans.scale_b, s_align),
            ("C (Y)", c, spans.c, c_align),
        ];
        for (what, span, need, align) in checks {
            if span.device != me {
                return Err(Error::WrongDevice { what: what.into(), found: span.device, expected: me });
            }
            if span.len < need {
                let (what, len, required) = (what.to_string(), span.len, need);
                return Err(BlockScaleError::BufferTooSmall { what, len, required }.into());
            }
            if need > 0 && !span.address.is_multiple_of(align) {
                let (what, address) = (what.to_string(), span.address);
                return Err(BlockScaleError::MisalignedAddress { what, address, align }.into());
            }
        }
        if p.m == 0 || p.n == 0 {
            return Ok(None);
        }
        let job = BlockScaledJob::new(p, [a.address, b.address, c.address, scale_a.address, scale_b.address]);
        let launcher = crate::backends::hip::StreamLauncher { backend: &self.backend, stream: &stream.stream };
        // SAFETY: the problem was validated and checked for this arch, every span lies on this
        // device, holds at least its validated bytes and is aligned as the job's contract says;
        // lifetimes are this function's contract.
        unsafe { run_block_scaled(&launcher, &job) }.map(Some)
    }

    /// A strided batch on device memory: item `i` reads A at element `i * stride_a` of `a`
    /// (likewise B) and writes C at `i * stride_c` of `c`. One launch per item, queued on
    /// `stream` in item order. The whole batch is checked first (geometry, overlapping outputs,
    /// every item's spans and alignment); on bad input nothing is launched.
    pub fn gemm_strided_batched<A: Element, B: Element, C: Element>(
        &self,
        stream: &GpuStream,
        batch: &StridedBatch,
        a: DeviceSlice<'_, A>,
        b: DeviceSlice<'_, B>,
        c: DeviceSliceMut<'_, C>,
    ) -> Result<Option<&'static str>> {
        batch.problem.check_elements::<A, B, C>()?;
        // SAFETY: as in `gemm`.
        unsafe { self.strided_raw("gemm_strided_batched_device", stream, batch, a.span, b.span, c.span) }
    }

    /// [`Self::gemm_strided_batched`] on byte spans (the C ABI's entry).
    ///
    /// # Safety
    /// As [`Self::gemm_raw`], for the whole batch spans.
    pub unsafe fn strided_raw(
        &self,
        api: &str,
        stream: &GpuStream,
        batch: &StridedBatch,
        a: DeviceSpan,
        b: DeviceSpan,
        c: DeviceSpan,
    ) -> Result<Option<&'static str>> {
        let start = Instant::now();
        let result = self.strided_checked(stream, batch, a, b, c);
        self.log(api, &batch.problem, Some(batch), &result, start);
        result
    }

    fn strided_checked(
        &self,
        stream: &GpuStream,
        batch: &StridedBatch,
        a: DeviceSpan,
        b: DeviceSpan,
        c: DeviceSpan,
    ) -> Result<Option<&'static str>> {
        let p = &batch.problem;
        let spans = batch.validate()?;
        let sizes = [p.a_type.size_bytes(), p.b_type.size_bytes(), p.c_type.size_bytes()];
        // The whole batch's spans first (the same errors as a too short buffer on the host).
        for (operand, span, total, size) in
            [(Operand::A, a, spans.a, sizes[0]), (Operand::B, b, spans.b, sizes[1]), (Operand::C, c, spans.c, sizes[2])]
        {
            let need = total
                .checked_mul(size)
                .ok_or(Error::Invalid(gemm_core::Error::Overflow(format!("{operand} of the batch in bytes"))))?;
            if need > span.len && span.device == self.ordinal() {
                return Err(Error::Invalid(gemm_core::Error::BufferTooSmall {
                    operand,
                    len: span.len / size,
                    required: total,
                }));
            }
        }
        let at = |s: DeviceSpan, elems: usize, size: usize| {
            let off = elems * size;
            s.advance(off)
        };
        let mut plans: Vec<(KernelPlan, [u64; 3])> = Vec::with_capacity(batch.count);
        for i in 0..batch.count {
            let (oa, ob, oc) = batch.offsets(i);
            let (ia, ib, ic) = (at(a, oa, sizes[0]), at(b, ob, sizes[1]), at(c, oc, sizes[2]));
            if let Some(plan) = self.backend.check_device_spans(stream.device(), p, ia, ib, ic)? {
                plans.push((plan, [ia.address, ib.address, ic.address]));
            }
        }
        let mut kernel = None;
        for (plan, [ia, ib, ic]) in &plans {
            // SAFETY: every item was checked above against its spans inside the caller's
            // buffers; memory lifetime is the caller's contract (`strided_raw`). The items'
            // splits share the stream's workspace in stream order.
            let k = unsafe { self.backend.launch_planned(&stream.stream, plan, p, *ia, *ib, *ic)? };
            kernel.get_or_insert(k);
        }
        Ok(kernel)
    }

    /// A grouped GEMM on device memory: each group its own problem (sizes, dtypes, layout) and
    /// operands; groups with `m` or `n` = 0 are allowed and launch nothing. Every group is
    /// checked before any is launched: one bad group refuses the call (its error in
    /// [`GroupedError::groups`]) and nothing is launched. Then **one launch** of a grouped
    /// kernel for all of them where [`crate::plan::grouped::plan`] allows (same dtypes, layout and
    /// transposes, aligned operands), else one launch per non-empty group, queued on `stream`
    /// in group order. Returns the kernel of each group (`None` for empty groups).
    pub fn gemm_grouped<A: Element, B: Element, C: Element>(
        &self,
        stream: &GpuStream,
        groups: &mut [DeviceGroup<'_, A, B, C>],
    ) -> std::result::Result<Vec<Option<&'static str>>, GroupedError> {
        let mut raw = Vec::with_capacity(groups.len());
        let mut early: Vec<Option<Error>> = vec![None; groups.len()];
        for (i, g) in groups.iter().enumerate() {
            if let Err(e) = g.problem.check_elements::<A, B, C>() {
                early[i] = Some(e.into());
            }
            raw.push((g.problem, g.a.span, g.b.span, g.c.span));
        }
        if early.iter().any(Option::is_some) {
            return Err(GroupedError { groups: early, launched_some: false });
        }
        // SAFETY: as in `gemm`, for every group.
        unsafe { self.grouped_raw("gemm_grouped_device", stream, &raw) }
    }

    /// Checks every group of a grouped call without launching: one result per group (the
    /// kernel plan, `None` for an empty group).
    pub fn check_grouped(&self, stream: &GpuStream, groups: &[RawGroup]) -> Vec<Result<Option<KernelPlan>>> {
        groups.iter().map(|(p, a, b, c)| self.backend.check_device_spans(stream.device(), p, *a, *b, *c)).collect()
    }

    /// [`Self::gemm_grouped`] on byte spans (the C ABI's entry).
    ///
    /// # Safety
    /// As [`Self::gemm_raw`], for every group; no group's C overlaps another group's operands.
    pub unsafe fn grouped_raw(
        &self,
        api: &str,
        stream: &GpuStream,
        groups: &[RawGroup],
    ) -> std::result::Result<Vec<Option<&'static str>>, GroupedError> {
        let start = Instant::now();
        let checked = self.check_grouped(stream, groups);
        let mut errors: Vec<Option<Error>> = checked.iter().map(|r| r.as_ref().err().cloned()).collect();
        let result = if errors.iter().any(Option::is_some) {
            Err(GroupedError { groups: errors, launched_some: false })
        } else if let Ok(plan) = crate::plan::grouped::plan(
            self.arch(),
            &groups.iter().map(|(p, a, b, c)| (*p, [a.address, b.address, c.address])).collect::<Vec<_>>(),
        ) {
            // SAFETY: every group was checked above against its spans and the stream's device;
            // memory lifetime and C exclusivity are this function's contract.
            match unsafe { self.backend.launch_grouped(&stream.stream, &plan) } {
                Ok(()) => {
                    let mut kernels = vec![None; groups.len()];
                    for g in &plan.groups {
                        kernels[g.index] = Some(plan.entry.name);
                    }
                    Ok(kernels)
                }
                Err(e) => {
                    let mut errors: Vec<Option<Error>> = vec![None; groups.len()];
                    for g in &plan.groups {
                        errors[g.index] = Some(e.clone());
                    }
                    Err(GroupedError { groups: errors, launched_some: false })
                }
            }
        } else {
            let mut kernels = Vec::with_capacity(groups.len());
            let mut failed = false;
            for (i, ((p, a, b, c), plan)) in groups.iter().zip(checked).enumerate() {
                let plan = plan.expect("checked above");
                if failed {
                    errors[i] = Some(Error::NotRun("an earlier group failed to launch".into()));
                    continue;
                }
                match plan {
                    None => kernels.push(None),
                    // SAFETY: checked above; memory lifetime is this function's contract.
                    Some(plan) => match unsafe {
                        self.backend.launch_checked(&stream.stream, &plan, p, a.address, b.address, c.address)
                    } {
                        Ok(()) => kernels.push(Some(plan.entry.name)),
                        Err(e) => {
                            errors[i] = Some(e);
                            failed = true;
                        }
                    },
                }
            }
            if failed {
                Err(GroupedError { groups: errors, launched_some: true })
            } else {
                Ok(kernels)
            }
        };
        if call_log::enabled() {
            let elapsed = start.elapsed().as_secs_f64();
            for (i, (p, ..)) in groups.iter().enumerate() {
                let (kernel, status) = match &result {
                    Ok(k) => (k[i], "ok".to_string()),
                    Err(e) => (None, e.groups[i].as_ref().map_or_else(|| "not run".into(), |e| e.to_string())),
                };
                call_log::record(&CallRecord {
                    api: &format!("{api}[{i}/{}]", groups.len()),
                    problem: p,
                    batch: None,
                    device: &self.name,
                    resident: true,
                    kernel,
                    host_seconds: elapsed / groups.len().max(1) as f64,
                    status: &status,
                });
            }
        }
        result
    }

    fn log(
        &self,
        api: &str,
        p: &GemmProblem,
        batch: Option<&StridedBatch>,
        result: &Result<Option<&'static str>>,
        start: Instant,
    ) {
        if !call_log::enabled() {
            return;
        }
        let status = match result {
            Ok(_) => "ok".to_string(),
            Err(e) => e.to_string(),
        };
        call_log::record(&CallRecord {
            api,
            problem: p,
            batch,
            device: &self.name,
            resident: true,
            kernel: result.as_ref().ok().copied().flatten(),
            host_seconds: start.elapsed().as_secs_f64(),
            status: &status,
        });
    }
}
