//! Streams (`hipStreamCreateWithFlags`, non-blocking) and events (`hipEventCreateWithFlags`),
//! and the stream-ordered copies between [`DeviceBuffer`] and [`PinnedHostBuffer`].

use std::ffi::{c_float, c_int};
use std::ops::Range;
use std::sync::Arc;

use bytemuck::Pod;

use super::memory::{check_range, DeviceBuffer, PinnedHostBuffer};
use super::sys::{self, memcpy_kind};
use super::{Device, Hip};
use crate::error::{Error, Result};

/// The length of `range` after checking it lies in `0..len`.
fn byte_range(what: &str, range: &Range<usize>, len: usize) -> Result<usize> {
    if range.start > range.end || range.end > len {
        return Err(Error::InvalidArgument(format!(
            "{what}: byte range {}..{} does not fit in {len} bytes",
            range.start, range.end
        )));
    }
    Ok(range.end - range.start)
}

pub(crate) struct StreamInner {
    hip: Hip,
    device: c_int,
    raw: sys::hipStream_t,
    /// Whether this value created the stream and destroys it on drop (a borrowed caller's
    /// stream is left alone).
    owned: bool,
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
        if !self.owned {
            return;
        }
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
        Ok(Self { inner: Arc::new(StreamInner { hip, device: device.ordinal, raw, owned: true }) })
    }

    /// A caller's stream, not destroyed on drop (see [`Device::borrow_stream`]).
    pub(super) fn borrowed(device: &Device, raw: sys::hipStream_t) -> Self {
        Self { inner: Arc::new(StreamInner { hip: device.hip.clone(), device: device.ordinal, raw, owned: false }) }
    }

    /// Whether this value owns the stream (made by [`Device::create_stream`]) rather than
    /// borrowing a caller's.
    pub fn is_owned(&self) -> bool {
        self.inner.owned
    }

    /// The device ordinal.
    pub fn device(&self) -> i32 {
        self.inner.device
    }

    /// The device this stream belongs to.
    pub fn device_handle(&self) -> Device {
        Device { hip: self.inner.hip.clone(), ordinal: self.inner.device }
    }

    /// Whether `other` is a clone of this stream (the same `hipStream_t`).
    pub fn same_stream(&self, other: &Stream) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
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

    /// Queues a copy of bytes `src_range` of the pinned `src` to byte `dst_offset` of `dst`
    /// (host to device). Both ranges are checked first (an error, nothing queued). `src` records
    /// an event of its own after the copy and its bytes are handed to the host again only once
    /// that event has completed (see [`PinnedHostBuffer::as_mut_slice`]).
    pub fn copy_to_device(
        &self,
        dst: &mut DeviceBuffer,
        dst_offset: usize,
        src: &mut PinnedHostBuffer,
        src_range: Range<usize>,
    ) -> Result<()> {
        let bytes = byte_range("Stream::copy_to_device (pinned source)", &src_range, src.len())?;
        check_range("Stream::copy_to_device (device destination)", dst_offset, bytes, dst.len())?;
        self.same_device("Stream::copy_to_device", dst.device())?;
        if bytes == 0 {
            return Ok(());
        }
        let hip = &self.inner.hip;
        let f = hip.api.hipMemcpyAsync()?;
        // SAFETY: both ranges were checked to lie inside their live allocations. The pinned
        // source stays allocated until the copy is done (`hipHostFree` synchronises the device)
        // and is not handed to the host before the event recorded below has completed; the
        // device destination is freed only after the device is idle (`hipFree` synchronises).
        let code = unsafe {
            f(
                dst.as_mut_ptr().cast::<u8>().add(dst_offset).cast(),
                src.raw().add(src_range.start).cast_const().cast(),
                bytes,
                memcpy_kind::HOST_TO_DEVICE,
                self.inner.raw,
            )
        };
        src.mark_pending(self);
        hip.check("hipMemcpyAsync", code)
    }

    /// Queues a copy of bytes `src_range` of `src` to byte `dst_offset` of the pinned `dst`
    /// (device to host); `dst` is readable again once its own event, recorded after the copy,
    /// has completed. Ranges are checked first.
    pub fn copy_to_host(
        &self,
        dst: &mut PinnedHostBuffer,
        dst_offset: usize,
        src: &DeviceBuffer,
        src_range: Range<usize>,
    ) -> Result<()> {
        let bytes = byte_range("Stream::copy_to_host (device source)", &src_range, src.len())?;
        check_range("Stream::copy_to_host (pinned destination)", dst_offset, bytes, dst.len())?;
        self.same_device("Stream::copy_to_host", src.device())?;
        if bytes == 0 {
            return Ok(());
        }
        let hip = &self.inner.hip;
        let f = hip.api.hipMemcpyAsync()?;
        // SAFETY: as in `copy_to_device`, with the roles swapped: the checked host range is
        // written by the device and kept from the host until the buffer's event has completed.
        let code = unsafe {
            f(
                dst.raw().add(dst_offset).cast(),
                src.as_ptr().cast::<u8>().add(src_range.start).cast(),
                bytes,
                memcpy_kind::DEVICE_TO_HOST,
                self.inner.raw,
            )
        };
        dst.mark_pending(self);
        hip.check("hipMemcpyAsync", code)
    }

    /// Copies `src` (ordinary, pageable host memory) to byte `offset` of `dst` in this stream's
    /// order: after the work queued before it, before the work queued after it. Blocks until the
    /// copy is done (the stream is synchronised), so `src` may be reused at once. For one-off
    /// uploads such as tensor-parallel shards, where staging through pinned memory buys nothing.
    pub fn write_blocking<T: Pod>(&self, dst: &mut DeviceBuffer, offset: usize, src: &[T]) -> Result<()> {
        let bytes: &[u8] = bytemuck::cast_slice(src);
        check_range("Stream::write_blocking", offset, bytes.len(), dst.len())?;
        self.same_device("Stream::write_blocking", dst.device())?;
        if bytes.is_empty() {
            return Ok(());
        }
        let hip = &self.inner.hip;
        let f = hip.api.hipMemcpyAsync()?;
        // SAFETY: the destination range lies inside the live allocation (checked); the source is
        // a live borrowed slice of `bytes.len()` bytes, and the stream is synchronised below,
        // before the borrow ends, so the copy never outlives it.
        let code = unsafe {
            f(
                dst.as_mut_ptr().cast::<u8>().add(offset).cast(),
                bytes.as_ptr().cast(),
                bytes.len(),
                memcpy_kind::HOST_TO_DEVICE,
                self.inner.raw,
            )
        };
        let queued = hip.check("hipMemcpyAsync", code);
        // Even when queueing failed, wait: nothing may still read `src` after we return.
        let synced = self.synchronize();
        queued.and(synced)
    }

    /// Copies bytes of `src` from byte `offset` into `dst` (ordinary host memory) in this
    /// stream's order, after the work queued before it (a kernel, a collective), and waits for it.
    pub fn read_blocking<T: Pod>(&self, src: &DeviceBuffer, offset: usize, dst: &mut [T]) -> Result<()> {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(dst);
        check_range("Stream::read_blocking", offset, bytes.len(), src.len())?;
        self.same_device("Stream::read_blocking", src.device())?;
        if bytes.is_empty() {
            return Ok(());
        }
        let hip = &self.inner.hip;
        let f = hip.api.hipMemcpyAsync()?;
        // SAFETY: the source range lies inside the live allocation (checked); the destination is
        // an exclusively borrowed slice of `bytes.len()` bytes (any bit pattern is a valid
        // `T: Pod`), and the stream is synchronised below, before the borrow ends.
        let code = unsafe {
            f(
                bytes.as_mut_ptr().cast(),
                src.as_ptr().cast::<u8>().add(offset).cast(),
                bytes.len(),
                memcpy_kind::DEVICE_TO_HOST,
                self.inner.raw,
            )
        };
        let queued = hip.check("hipMemcpyAsync", code);
        let synced = self.synchronize();
        queued.and(synced)
    }

    fn same_device(&self, what: &str, buffer_device: i32) -> Result<()> {
        if buffer_device != self.inner.device {
            return Err(Error::InvalidArgument(format!(
                "{what}: the buffer is on device {buffer_device}, the stream on device {}",
                self.inner.device
            )));
        }
        Ok(())
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

/// A HIP event on one device. It may be recorded only on streams of that device; any stream
/// (of any device) may wait for it.
pub struct Event {
    hip: Hip,
    device: c_int,
    raw: sys::hipEvent_t,
    timing: bool,
}

// SAFETY: a `hipEvent_t` is a handle the thread-safe HIP runtime accepts from any thread.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event")
            .field("device", &self.device)
            .field("raw", &self.raw)
            .field("timing", &self.timing)
            .finish()
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
        Ok(Self { hip, device: device.ordinal, raw, timing })
    }

    /// The device ordinal the event belongs to.
    pub fn device(&self) -> i32 {
        self.device
    }

    /// Records the event at the current end of `stream`, which must be on the event's device
    /// (HIP refuses, or worse, misbehaves otherwise; here it is an error before any call).
    pub fn record(&self, stream: &Stream) -> Result<()> {
        if stream.device() != self.device {
            return Err(Error::InvalidArgument(format!(
                "Event::record: the event is on device {}, the stream on device {}",
                self.device,
                stream.device()
            )));
        }
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
            return Err(Error::InvalidArgument("Event::elapsed_ms needs two events created with timing".into()));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_ranges_are_checked() {
        assert_eq!(byte_range("t", &(0..16), 16).unwrap(), 16);
        assert_eq!(byte_range("t", &(4..4), 4).unwrap(), 0);
        assert!(byte_range("t", &(8..17), 16).is_err());
        #[allow(clippy::reversed_empty_ranges)]
        let backwards = 9..8;
        let e = byte_range("Stream::copy_to_host (device source)", &backwards, 16).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid argument: Stream::copy_to_host (device source): byte range 9..8 does not fit in 16 bytes"
        );
    }
}
