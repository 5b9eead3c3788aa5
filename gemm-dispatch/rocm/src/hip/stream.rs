//! Streams (`hipStreamCreateWithFlags`, non-blocking) and events (`hipEventCreateWithFlags`),
//! and the stream-ordered copies between [`DeviceBuffer`] and [`PinnedHostBuffer`].

use std::ffi::{c_float, c_int};
use std::sync::Arc;

use super::memory::{check_range, DeviceBuffer, PinnedHostBuffer};
use super::sys::{self, memcpy_kind};
use super::{Device, Hip};
use crate::error::Result;

pub(crate) struct StreamInner {
    hip: Hip,
    device: c_int,
    raw: sys::hipStream_t,
}

// SAFETY: a `hipStream_t` is a handle the thread-safe HIP runtime accepts from any thread.
unsafe impl Send for StreamInner {}
// SAFETY: as above; all uses go through HIP calls.
unsafe impl Sync for StreamInner {}

impl StreamInner {
    pub(crate) fn synchronize(&self) -> Result<()> {
        let f = self.hip.api.hipStreamSynchronize()?;
        // SAFETY: `raw` is a live stream created by `hipStreamCreateWithFlags`.
        self.hip.check("hipStreamSynchronize", unsafe { f(self.raw) })
    }
}

impl Drop for StreamInner {
    fn drop(&mut self) {
        match self.hip.api.hipStreamDestroy() {
            Ok(f) => {
                // SAFETY: `raw` is destroyed once, here; HIP lets queued work finish first.
                let code = unsafe { f(self.raw) };
                if let Err(e) = self.hip.check("hipStreamDestroy", code) {
                    eprintln!("gemm-rocm: {e}");
                }
            }
            Err(e) => eprintln!("gemm-rocm: {e}"),
        }
    }
}

/// A HIP stream on one device. Clones share the stream; it is destroyed with the last one.
#[derive(Clone)]
pub struct Stream {
    pub(crate) inner: Arc<StreamInner>,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("device", &self.inner.device).field("raw", &self.inner.raw).finish()
    }
}

impl Stream {
    pub(super) fn new(device: &Device) -> Result<Self> {
        device.set_current()?;
        let hip = device.hip.clone();
        let f = hip.api.hipStreamCreateWithFlags()?;
        let mut raw: sys::hipStream_t = std::ptr::null_mut();
        // SAFETY: `hipStreamCreateWithFlags(hipStream_t*, unsigned)` writes one handle.
        hip.check("hipStreamCreateWithFlags", unsafe { f(&mut raw, sys::HIP_STREAM_NON_BLOCKING) })?;
        Ok(Self { inner: Arc::new(StreamInner { hip, device: device.ordinal, raw }) })
    }

    /// The device ordinal.
    pub fn device(&self) -> i32 {
        self.inner.device
    }

    /// The raw `hipStream_t`, e.g. for RCCL, which takes it as an opaque pointer. Valid while
    /// this `Stream` (or a clone) lives.
    pub fn as_raw(&self) -> sys::hipStream_t {
        self.inner.raw
    }

    /// Waits for all work queued on the stream.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.synchronize()
    }

    /// `true` when all queued work has finished (`hipStreamQuery`).
    pub fn is_idle(&self) -> Result<bool> {
        let hip = &self.inner.hip;
        let f = hip.api.hipStreamQuery()?;
        // SAFETY: live stream handle.
        let code = unsafe { f(self.inner.raw) };
        if code == sys::HIP_ERROR_NOT_READY {
            return Ok(false);
        }
        hip.check("hipStreamQuery", code)?;
        Ok(true)
    }

    /// Makes later work on this stream wait for `event` (`hipStreamWaitEvent`).
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        let hip = &self.inner.hip;
        let f = hip.api.hipStreamWaitEvent()?;
        // SAFETY: live stream and event handles; flags must be 0.
        hip.check("hipStreamWaitEvent", unsafe { f(self.inner.raw, event.raw, 0) })
    }

    /// Queues a copy of `src` into `dst` at byte `offset` (host to device). `src` is marked
    /// busy until this stream has been synchronised.
    pub fn copy_to_device(&self, dst: &mut DeviceBuffer, offset: usize, src: &mut PinnedHostBuffer) -> Result<()> {
        check_range("Stream::copy_to_device", offset, src.len(), dst.len())?;
        if src.is_empty() {
            return Ok(());
        }
        let hip = &self.inner.hip;
        let f = hip.api.hipMemcpyAsync()?;
        // SAFETY: the device range lies inside `dst`; the source is pinned memory that stays
        // allocated (its free synchronises the device) and is not handed to the host before
        // this stream is synchronised (`mark_pending`).
        let code = unsafe {
            f(
                dst.as_mut_ptr().cast::<u8>().add(offset).cast(),
                src.raw().cast_const().cast(),
                src.len(),
                memcpy_kind::HOST_TO_DEVICE,
                self.inner.raw,
            )
        };
        src.mark_pending(self);
        hip.check("hipMemcpyAsync", code)
    }

    /// Queues a copy of `src` from byte `offset` into all of `dst` (device to host); `dst` is
    /// readable again once this stream has finished.
    pub fn copy_to_host(&self, dst: &mut PinnedHostBuffer, src: &DeviceBuffer, offset: usize) -> Result<()> {
        check_range("Stream::copy_to_host", offset, dst.len(), src.len())?;
        if dst.is_empty() {
            return Ok(());
        }
        let hip = &self.inner.hip;
        let f = hip.api.hipMemcpyAsync()?;
        // SAFETY: as in `copy_to_device`, with the roles swapped: the host side is written by
        // the device and kept from the host until the stream is synchronised.
        let code = unsafe {
            f(
                dst.raw().cast(),
                src.as_ptr().cast::<u8>().add(offset).cast(),
                dst.len(),
                memcpy_kind::DEVICE_TO_HOST,
                self.inner.raw,
            )
        };
        dst.mark_pending(self);
        hip.check("hipMemcpyAsync", code)
    }

    /// Queues a copy of all of `src` to the start of `dst` (device to device).
    pub fn copy_device(&self, dst: &mut DeviceBuffer, src: &DeviceBuffer) -> Result<()> {
        check_range("Stream::copy_device", 0, src.len(), dst.len())?;
        if src.is_empty() {
            return Ok(());
        }
        let hip = &self.inner.hip;
        let f = hip.api.hipMemcpyAsync()?;
        // SAFETY: both ranges lie inside live device allocations, which are only freed after
        // the device has gone idle (`hipFree` synchronises).
        let code =
            unsafe { f(dst.as_mut_ptr(), src.as_ptr(), src.len(), memcpy_kind::DEVICE_TO_DEVICE, self.inner.raw) };
        hip.check("hipMemcpyAsync", code)
    }

    /// Queues `hipMemsetAsync` of all of `dst` to `value`.
    pub fn fill(&self, dst: &mut DeviceBuffer, value: u8) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        let hip = &self.inner.hip;
        let f = hip.api.hipMemsetAsync()?;
        // SAFETY: the whole live allocation is written, in stream order.
        let code = unsafe { f(dst.as_mut_ptr(), c_int::from(value), dst.len(), self.inner.raw) };
        hip.check("hipMemsetAsync", code)
    }
}

/// A HIP event on one device.
pub struct Event {
    hip: Hip,
    raw: sys::hipEvent_t,
    timing: bool,
}

// SAFETY: a `hipEvent_t` is a handle the thread-safe HIP runtime accepts from any thread.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event").field("raw", &self.raw).field("timing", &self.timing).finish()
    }
}

impl Event {
    pub(super) fn new(device: &Device, timing: bool) -> Result<Self> {
        device.set_current()?;
        let hip = device.hip.clone();
        let f = hip.api.hipEventCreateWithFlags()?;
        let flags = if timing { sys::HIP_EVENT_DEFAULT } else { sys::HIP_EVENT_DISABLE_TIMING };
        let mut raw: sys::hipEvent_t = std::ptr::null_mut();
        // SAFETY: `hipEventCreateWithFlags(hipEvent_t*, unsigned)` writes one handle.
        hip.check("hipEventCreateWithFlags", unsafe { f(&mut raw, flags) })?;
        Ok(Self { hip, raw, timing })
    }

    /// Records the event at the current end of `stream`.
    pub fn record(&self, stream: &Stream) -> Result<()> {
        let f = self.hip.api.hipEventRecord()?;
        // SAFETY: live event and stream handles.
        self.hip.check("hipEventRecord", unsafe { f(self.raw, stream.inner.raw) })
    }

    /// Waits for the recorded work.
    pub fn synchronize(&self) -> Result<()> {
        let f = self.hip.api.hipEventSynchronize()?;
        // SAFETY: live event handle.
        self.hip.check("hipEventSynchronize", unsafe { f(self.raw) })
    }

    /// `true` once the recorded work has finished (`hipEventQuery`).
    pub fn is_complete(&self) -> Result<bool> {
        let f = self.hip.api.hipEventQuery()?;
        // SAFETY: live event handle.
        let code = unsafe { f(self.raw) };
        if code == sys::HIP_ERROR_NOT_READY {
            return Ok(false);
        }
        self.hip.check("hipEventQuery", code)?;
        Ok(true)
    }

    /// Milliseconds from `self` to `end` (both recorded, completed, timing-enabled).
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        if !self.timing || !end.timing {
            return Err(crate::Error::InvalidArgument("Event::elapsed_ms needs two events created with timing".into()));
        }
        let f = self.hip.api.hipEventElapsedTime()?;
        let mut ms: c_float = 0.0;
        // SAFETY: writes one float; both handles are live.
        self.hip.check("hipEventElapsedTime", unsafe { f(&mut ms, self.raw, end.raw) })?;
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        match self.hip.api.hipEventDestroy() {
            Ok(f) => {
                // SAFETY: destroyed once, here.
                let code = unsafe { f(self.raw) };
                if let Err(e) = self.hip.check("hipEventDestroy", code) {
                    eprintln!("gemm-rocm: {e}");
                }
            }
            Err(e) => eprintln!("gemm-rocm: {e}"),
        }
    }
}
