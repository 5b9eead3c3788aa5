//! Device memory (`hipMalloc`/`hipFree`) and page-locked host memory
//! (`hipHostMalloc`/`hipHostFree`), with synchronous and stream-ordered copies.
//!
//! Soundness of the asynchronous copies rests on two facts of `hip_runtime_api.h`: `hipFree`
//! and `hipHostFree` both perform an implicit `hipDeviceSynchronize`, so memory is never freed
//! under a copy in flight; and a [`PinnedHostBuffer`] records an event of its own after every
//! asynchronous copy that touches it (one per stream it was used on) and waits for those events
//! before handing its bytes to the host. Waiting for the buffer's own events, rather than for
//! whole streams, means reusing a staging buffer waits for exactly its copies and not for
//! whatever else was queued behind them (a kernel, another slot's download).

use std::ffi::{c_int, c_void};

use bytemuck::Pod;

use super::stream::{Event, Stream};
use super::sys::{self, memcpy_kind};
use super::{Device, Hip};
use crate::error::{Error, Result};

/// A `hipMalloc` allocation on one device. Freed (with `hipFree`, which first waits for the
/// device) on drop; a failure to free is logged, never a panic.
pub struct DeviceBuffer {
    hip: Hip,
    device: c_int,
    ptr: *mut c_void,
    len: usize,
}

// SAFETY: the buffer is an address in device memory plus a length; the HIP runtime API is
// thread-safe, so any thread may copy to/from it or free it. Host code never dereferences it.
unsafe impl Send for DeviceBuffer {}
// SAFETY: `&DeviceBuffer` only allows reads of the device memory through HIP calls.
unsafe impl Sync for DeviceBuffer {}

impl std::fmt::Debug for DeviceBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("device", &self.device)
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .finish()
    }
}

fn range_check(what: &str, offset: usize, bytes: usize, len: usize) -> Result<()> {
    match offset.checked_add(bytes) {
        Some(end) if end <= len => Ok(()),
        _ => Err(Error::InvalidArgument(format!("{what}: {bytes} bytes at offset {offset} do not fit in {len} bytes"))),
    }
}

impl DeviceBuffer {
    pub(super) fn new(device: &Device, len: usize) -> Result<Self> {
        let hip = device.hip.clone();
        let mut ptr = std::ptr::null_mut();
        if len > 0 {
            device.set_current()?;
            let f = hip.api.hipMalloc()?;
            // SAFETY: `hipMalloc(void**, size_t)` writes one pointer to the valid out-pointer.
            hip.check("hipMalloc", unsafe { f(&mut ptr, len) })?;
        }
        Ok(Self { hip, device: device.ordinal, ptr, len })
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty (then its pointer is null).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device ordinal it lives on.
    pub fn device(&self) -> i32 {
        self.device
    }

    /// The device address, e.g. for kernel arguments or collectives.
    pub fn as_ptr(&self) -> *const c_void {
        self.ptr
    }

    /// The device address, for writes.
    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        self.ptr
    }

    /// The device address as the 64-bit value a kernel argument holds.
    pub fn device_address(&self) -> u64 {
        self.ptr as u64
    }

    /// Copies `src` to byte `offset` of this buffer (`hipMemcpy`, host to device; blocking).
    pub fn write<T: Pod>(&mut self, offset: usize, src: &[T]) -> Result<()> {
        let bytes: &[u8] = bytemuck::cast_slice(src);
        range_check("DeviceBuffer::write", offset, bytes.len(), self.len)?;
        if bytes.is_empty() {
            return Ok(());
        }
        let f = self.hip.api.hipMemcpy()?;
        // SAFETY: the destination range lies inside this allocation (checked above) and the
        // source is a live host slice of exactly `bytes.len()` bytes.
        let code = unsafe {
            f(self.ptr.cast::<u8>().add(offset).cast(), bytes.as_ptr().cast(), bytes.len(), memcpy_kind::HOST_TO_DEVICE)
        };
        self.hip.check("hipMemcpy", code)
    }

    /// Copies from byte `offset` of this buffer into `dst` (`hipMemcpy`, device to host).
    pub fn read<T: Pod>(&self, offset: usize, dst: &mut [T]) -> Result<()> {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(dst);
        range_check("DeviceBuffer::read", offset, bytes.len(), self.len)?;
        if bytes.is_empty() {
            return Ok(());
        }
        let f = self.hip.api.hipMemcpy()?;
        // SAFETY: the source range lies inside this allocation and the destination is a live,
        // exclusively borrowed host slice of `bytes.len()` bytes; any bit pattern is a valid
        // `T: Pod`.
        let code = unsafe {
            f(
                bytes.as_mut_ptr().cast(),
                self.ptr.cast::<u8>().add(offset).cast(),
                bytes.len(),
                memcpy_kind::DEVICE_TO_HOST,
            )
        };
        self.hip.check("hipMemcpy", code)
    }

    /// Copies the whole of `src` to the start of this buffer (`hipMemcpy`, device to device).
    pub fn copy_from(&mut self, src: &DeviceBuffer) -> Result<()> {
        range_check("DeviceBuffer::copy_from", 0, src.len, self.len)?;
        if src.len == 0 {
            return Ok(());
        }
        let f = self.hip.api.hipMemcpy()?;
        // SAFETY: both ranges lie inside live allocations; `&mut self` and `&src` cannot be
        // the same buffer.
        let code = unsafe { f(self.ptr, src.ptr, src.len, memcpy_kind::DEVICE_TO_DEVICE) };
        self.hip.check("hipMemcpy", code)
    }

    /// Sets every byte to `value` (`hipMemset`).
    pub fn fill(&mut self, value: u8) -> Result<()> {
        if self.len == 0 {
            return Ok(());
        }
        self.hip.set_device(self.device)?;
        let f = self.hip.api.hipMemset()?;
        // SAFETY: the whole allocation, `len` bytes, is written.
        self.hip.check("hipMemset", unsafe { f(self.ptr, c_int::from(value), self.len) })
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        match self.hip.api.hipFree() {
            Ok(f) => {
                // SAFETY: `ptr` came from `hipMalloc` and is freed once; `hipFree` waits for
                // the device, so no queued work still uses it.
                let code = unsafe { f(self.ptr) };
                if let Err(e) = self.hip.check("hipFree", code) {
                    eprintln!("gemm-rocm: leaking device buffer: {e}");
                }
            }
            Err(e) => eprintln!("gemm-rocm: leaking device buffer: {e}"),
        }
    }
}

/// Page-locked host memory (`hipHostMalloc`), the source and target of asynchronous copies.
/// Its bytes are only reachable through [`Self::as_slice`]/[`Self::as_mut_slice`], which first
/// wait for the buffer's own events, recorded after the last asynchronous copy on each stream
/// that touched it.
pub struct PinnedHostBuffer {
    hip: Hip,
    ptr: *mut u8,
    len: usize,
    /// Copies that may still be in flight: one entry per stream, its event recorded after the
    /// latest copy queued there (copies of one stream complete in order).
    pending: Vec<Pending>,
    /// Events of settled entries, kept for reuse so a steady pipeline creates none.
    spare: Vec<Event>,
}

/// The last copy on one stream that touched a pinned buffer.
struct Pending {
    stream: Stream,
    /// Recorded after that copy; `None` if the event could not be had, in which case the whole
    /// stream is waited for instead (slower, still correct).
    event: Option<Event>,
}

// SAFETY: the allocation is plain host memory owned by this value; the HIP calls on it are
// thread-safe. Access goes through `&mut self`, so there is no shared mutation.
unsafe impl Send for PinnedHostBuffer {}

impl std::fmt::Debug for PinnedHostBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedHostBuffer")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .field("pending_streams", &self.pending.len())
            .finish()
    }
}

impl PinnedHostBuffer {
    pub(super) fn new(device: &Device, len: usize) -> Result<Self> {
        let hip = device.hip.clone();
        let mut ptr: *mut c_void = std::ptr::null_mut();
        if len > 0 {
            device.set_current()?;
            let f = hip.api.hipHostMalloc()?;
            // SAFETY: `hipHostMalloc(void**, size_t, unsigned)` writes one pointer.
            hip.check("hipHostMalloc", unsafe { f(&mut ptr, len, sys::HIP_HOST_MALLOC_DEFAULT) })?;
            // SAFETY: `ptr` now addresses `len` writable bytes that we own.
            unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, len) };
        }
        Ok(Self { hip, ptr: ptr.cast(), len, pending: Vec::new(), spare: Vec::new() })
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Waits for every copy that may still touch the buffer, each through its own event. On an
    /// error the entries not yet known complete stay pending, so the bytes stay out of reach.
    fn settle(&mut self) -> Result<()> {
        while let Some(p) = self.pending.last() {
            match &p.event {
                Some(e) => e.synchronize()?,
                None => p.stream.synchronize()?,
            }
            let done = self.pending.pop().expect("checked above");
            self.spare.extend(done.event);
        }
        Ok(())
    }

    /// Whether a copy may still be in flight (an event not yet waited for).
    pub fn is_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The bytes, after any asynchronous copy touching them has finished.
    pub fn as_slice(&mut self) -> Result<&[u8]> {
        self.settle()?;
        if self.len == 0 {
            return Ok(&[]);
        }
        // SAFETY: `ptr` addresses `len` initialised bytes we own, and no copy is in flight.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }

    /// The bytes, writable, after any asynchronous copy touching them has finished.
    pub fn as_mut_slice(&mut self) -> Result<&mut [u8]> {
        self.settle()?;
        if self.len == 0 {
            return Ok(&mut []);
        }
        // SAFETY: as in `as_slice`, and `&mut self` makes the borrow exclusive.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    pub(super) fn raw(&self) -> *mut u8 {
        self.ptr
    }

    /// Records that a copy touching the buffer was queued on `stream`: the stream's entry gets
    /// its event (re)recorded after the copy. Never fails: without an event the entry falls back
    /// to waiting for the whole stream.
    pub(super) fn mark_pending(&mut self, stream: &Stream) {
        if let Some(i) = self.pending.iter().position(|p| p.stream.same_stream(stream)) {
            let p = &mut self.pending[i];
            if p.event.as_ref().is_some_and(|e| e.record(stream).is_err()) {
                p.event = None;
            }
            return;
        }
        let event = match self.spare.iter().position(|e| e.device() == stream.device()) {
            Some(i) => Some(self.spare.swap_remove(i)),
            None => stream.device_handle().create_event(false).ok(),
        };
        let event = event.filter(|e| e.record(stream).is_ok());
        self.pending.push(Pending { stream: stream.clone(), event });
    }
}

impl Drop for PinnedHostBuffer {
    fn drop(&mut self) {
        if self.ptr.is_null() {
            return;
        }
        // `hipHostFree` synchronises the *current* device only; the buffer's copies may be on
        // another device's streams, so wait for them through their events first. If that
        // fails the device may still write here: leak rather than free under it.
        if let Err(e) = self.settle() {
            eprintln!("gemm-rocm: leaking pinned buffer with a copy that did not complete: {e}");
            return;
        }
        match self.hip.api.hipHostFree() {
            Ok(f) => {
                // SAFETY: `ptr` came from `hipHostMalloc` and is freed once; every copy that
                // touched it has completed (settled above), so none still reads or writes it.
                let code = unsafe { f(self.ptr.cast()) };
                if let Err(e) = self.hip.check("hipHostFree", code) {
                    eprintln!("gemm-rocm: leaking pinned buffer: {e}");
                }
            }
            Err(e) => eprintln!("gemm-rocm: leaking pinned buffer: {e}"),
        }
    }
}

pub(super) fn check_range(what: &str, offset: usize, bytes: usize, len: usize) -> Result<()> {
    range_check(what, offset, bytes, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_checked_without_overflow() {
        assert!(range_check("t", 0, 16, 16).is_ok());
        assert!(range_check("t", 8, 8, 16).is_ok());
        assert!(range_check("t", 0, 0, 0).is_ok());
        assert!(range_check("t", 9, 8, 16).is_err());
        assert!(range_check("t", usize::MAX, 2, 16).is_err());
        let e = range_check("DeviceBuffer::write", 4, 16, 8).unwrap_err();
        assert_eq!(e.to_string(), "invalid argument: DeviceBuffer::write: 16 bytes at offset 4 do not fit in 8 bytes");
    }
}
