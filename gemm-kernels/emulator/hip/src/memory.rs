//! Device memory (`hipMalloc`/`hipFree`), pinned host memory (`hipHostMalloc`/`hipHostFree`),
//! copies and fills.
//!
//! Device pointers are emulator addresses in the device's own window (see
//! [`crate::runtime::ADDRESS_BASE`]): unique across devices and never dereferenceable by the
//! host. Copies follow the HIP/CUDA "API synchronization behavior" rules:
//! * `hipMemcpy` is synchronous and runs on the null stream of the device it touches (so it
//!   is ordered after earlier work of that device's blocking streams) and, like any
//!   synchronising call, may return the error of earlier asynchronous work.
//! * `hipMemcpyAsync` with pinned host memory (`hipHostMalloc`) is fully asynchronous: the
//!   host bytes are read or written when the copy runs on its stream, so a host buffer
//!   reused too early shows up as wrong data. With pageable host memory, a host-to-device
//!   copy stages the source at the call ("copied to a staging buffer immediately") and a
//!   device-to-host copy returns only once the copy has completed.

use std::alloc::Layout;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::error::HipError;
use crate::host;
use crate::runtime::{fires, is_device_address, machine, registry, Dev, Machine};
use crate::stream::{submit, Stream, Work};

/// Device allocations are backed by emulator buffers rounded up to this many bytes: vector
/// loads of the tail of a buffer read whole dwords, as on hardware where an allocation is
/// page-granular. The requested size is what is accounted and range-checked for copies.
const ALLOC_GRANULE: u64 = 16;

/// One pinned host allocation.
#[derive(Debug, Clone, Copy)]
pub struct Pinned {
    /// Bytes.
    pub len: usize,
    /// Device current when it was made.
    pub device: usize,
    layout: Layout,
}

/// `hipMalloc`: `size` bytes on the calling thread's current device. Zero bytes give a null
/// pointer and success (as HIP does).
pub fn malloc(size: usize) -> Result<u64, HipError> {
    let m = machine();
    let dev = m.current()?;
    dev.counters.malloc_calls.fetch_add(1, Ordering::Relaxed);
    dev.touch()?;
    if size == 0 {
        return Ok(0);
    }
    if fires(&mut dev.faults.lock().malloc) {
        return Err(HipError::OutOfMemory(format!("injected allocation failure on device {}", dev.ordinal)));
    }
    let size = size as u64;
    let mut allocs = dev.allocs.lock();
    let live = dev.counters.live_bytes.load(Ordering::Relaxed);
    if live.saturating_add(size) > dev.capacity {
        return Err(HipError::OutOfMemory(format!(
            "{size} bytes requested, {} of {} free on device {}",
            dev.capacity - live,
            dev.capacity,
            dev.ordinal
        )));
    }
    let addr = dev
        .emu
        .alloc(size.next_multiple_of(ALLOC_GRANULE))
        .map_err(|e| HipError::OutOfMemory(format!("emulator: {e}")))?;
    allocs.insert(addr, size);
    let now = dev.counters.live_bytes.fetch_add(size, Ordering::Relaxed) + size;
    dev.counters.peak_bytes.fetch_max(now, Ordering::Relaxed);
    Ok(addr)
}

/// `hipFree`: waits for the owning device ("hipFree ... performs an implicit
/// hipDeviceSynchronize"), then frees. A null pointer is a no-op; anything that is not the
/// start of a live allocation is `hipErrorInvalidValue`, as HIP answers.
///
/// On a lost device the call fails with the device's error, and the allocation goes with the
/// device (a driver reclaims a lost device's memory with its context). Keeping it alive left
/// an allocation no handle could free once the caller's buffer had dropped: whether a batch
/// freed a buffer while its device was lost depends on thread timing, and the next
/// `gemm_emu_hip_configure` was refused ("still alive") now and then.
pub fn free(addr: u64) -> Result<(), HipError> {
    if addr == 0 {
        return Ok(());
    }
    let m = machine();
    let dev = m
        .window_device(addr)
        .filter(|d| d.allocs.lock().contains_key(&addr))
        .ok_or_else(|| HipError::invalid(format!("hipFree({addr:#x}): not a live hipMalloc allocation")))?;
    let touched = dev.touch();
    dev.drain();
    let size = dev
        .allocs
        .lock()
        .remove(&addr)
        .ok_or_else(|| HipError::invalid(format!("hipFree({addr:#x}): freed twice concurrently")))?;
    dev.emu.free(addr).map_err(|e| HipError::Unknown(format!("emulator: {e}")))?;
    dev.counters.live_bytes.fetch_sub(size, Ordering::Relaxed);
    touched
}

/// The live device allocation holding `addr`: its device ordinal, base and size
/// (`hipPointerGetAttribute`, `hipMemGetAddressRange`). Anything else, a freed allocation and the
/// byte just past an allocation's end included, is `hipErrorInvalidValue`, as HIP answers for
/// memory it did not allocate.
pub fn lookup(addr: u64) -> Result<(usize, u64, u64), HipError> {
    let m = machine();
    let dev = m.window_device(addr).ok_or_else(|| HipError::invalid(format!("{addr:#x} is not a device pointer")))?;
    let allocs = dev.allocs.lock();
    match allocs.range(..=addr).next_back() {
        Some((&base, &size)) if addr < base + size => Ok((dev.ordinal, base, size)),
        _ => Err(HipError::invalid(format!("{addr:#x} is not inside a live hipMalloc allocation"))),
    }
}

/// Flags `hipHostMalloc` accepts: Default 0, Portable 1, Mapped 2, WriteCombined 4,
/// NumaUser 0x20000000, Coherent 0x40000000, NonCoherent 0x80000000.
const HOST_MALLOC_FLAGS: u32 = 0x1 | 0x2 | 0x4 | 0x2000_0000 | 0x4000_0000 | 0x8000_0000;

/// `hipHostMalloc`: real, page-aligned, zeroed host memory, tracked as pinned.
pub fn host_malloc(size: usize, flags: u32) -> Result<usize, HipError> {
    let m = machine();
    let dev = m.current()?;
    if flags & !HOST_MALLOC_FLAGS != 0 || flags & 0xc000_0000 == 0xc000_0000 {
        return Err(HipError::invalid(format!("hipHostMalloc flags {flags:#x}")));
    }
    dev.counters.host_malloc_calls.fetch_add(1, Ordering::Relaxed);
    dev.touch()?;
    if size == 0 {
        return Ok(0);
    }
    let layout = Layout::from_size_align(size, 4096).map_err(|_| HipError::OutOfMemory(format!("{size} bytes")))?;
    // SAFETY: `layout` has a nonzero size (checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) } as usize;
    if ptr == 0 {
        return Err(HipError::OutOfMemory(format!("{size} bytes of host memory")));
    }
    registry::pinned().insert(ptr, Pinned { len: size, device: dev.ordinal, layout });
    Ok(ptr)
}

/// `hipHostFree`: waits for every device (HIP: "implicitly synchronises the device"; the
/// memory may be used by copies on any device), then frees.
pub fn host_free(ptr: usize) -> Result<(), HipError> {
    if ptr == 0 {
        return Ok(());
    }
    if !registry::pinned().contains_key(&ptr) {
        return Err(HipError::invalid(format!("hipHostFree({ptr:#x}): not a hipHostMalloc allocation")));
    }
    for d in &machine().devices {
        d.drain();
    }
    let p = registry::pinned()
        .remove(&ptr)
        .ok_or_else(|| HipError::invalid(format!("hipHostFree({ptr:#x}): freed twice concurrently")))?;
    // SAFETY: `ptr` came from `alloc_zeroed` with exactly this layout and is freed once (it
    // was removed from the registry above).
    unsafe { std::alloc::dealloc(ptr as *mut u8, p.layout) };
    Ok(())
}

/// Whether `[ptr, ptr + len)` lies inside one pinned allocation.
pub fn is_pinned(ptr: usize, len: usize) -> bool {
    let pinned = registry::pinned();
    pinned.range(..=ptr).next_back().is_some_and(|(&base, p)| ptr + len <= base + p.len)
}

/// One end of a copy.
#[derive(Clone)]
enum Side {
    Host(usize),
    Device(Arc<Dev>, u64),
}

impl Side {
    fn is_device(&self) -> bool {
        matches!(self, Side::Device(..))
    }
}

fn classify(m: &Machine, ptr: usize, len: usize, what: &str) -> Result<Side, HipError> {
    if ptr == 0 {
        return Err(HipError::invalid(format!("{what} is null")));
    }
    let addr = ptr as u64;
    if !is_device_address(addr) {
        return Ok(Side::Host(ptr));
    }
    let dev = m.window_device(addr).ok_or_else(|| HipError::invalid(format!("{what} {addr:#x}: no such device")))?;
    dev.find_alloc(addr, len as u64).ok_or_else(|| {
        HipError::invalid(format!(
            "{what} {addr:#x} (+{len}) is not inside a live allocation of device {}",
            dev.ordinal
        ))
    })?;
    Ok(Side::Device(dev, addr))
}

/// `hipMemcpyKind`.
const KIND_NAMES: [&str; 5] = [
    "hipMemcpyHostToHost",
    "hipMemcpyHostToDevice",
    "hipMemcpyDeviceToHost",
    "hipMemcpyDeviceToDevice",
    "hipMemcpyDefault",
];

/// A copy, checked and ready to queue.
struct Copy {
    dst: Side,
    src: Side,
    count: usize,
    injected: bool,
}

fn prepare(m: &Machine, dst: usize, src: usize, count: usize, kind: i32) -> Result<Copy, HipError> {
    let kind_name = usize::try_from(kind)
        .ok()
        .and_then(|k| KIND_NAMES.get(k))
        .ok_or_else(|| HipError::InvalidMemcpyDirection(format!("hipMemcpyKind {kind}")))?;
    let dst = classify(m, dst, count, "destination")?;
    let src = classify(m, src, count, "source")?;
    let expected = match kind {
        0 => Some((false, false)),
        1 => Some((false, true)),
        2 => Some((true, false)),
        3 => Some((true, true)),
        _ => None,
    };
    if let Some((s, d)) = expected {
        if (src.is_device(), dst.is_device()) != (s, d) {
            // CUDA: "Calling cudaMemcpy() with dst and src pointers that do not match the
            // direction of the copy results in an undefined behavior"; the emulator refuses.
            return Err(HipError::InvalidMemcpyDirection(format!(
                "{kind_name} from {} to {} memory",
                if src.is_device() { "device" } else { "host" },
                if dst.is_device() { "device" } else { "host" }
            )));
        }
    }
    let mut injected = false;
    for side in [&dst, &src] {
        if let Side::Device(d, _) = side {
            d.touch()?;
            injected |= fires(&mut d.faults.lock().memcpy);
        }
    }
    match (&src, &dst) {
        (Side::Host(_), Side::Device(d, _)) => d.counters.h2d_bytes.fetch_add(count as u64, Ordering::Relaxed),
        (Side::Device(d, _), Side::Host(_)) => d.counters.d2h_bytes.fetch_add(count as u64, Ordering::Relaxed),
        (Side::Device(_, _), Side::Device(d, _)) => d.counters.d2d_bytes.fetch_add(count as u64, Ordering::Relaxed),
        _ => 0,
    };
    Ok(Copy { dst, src, count, injected })
}

fn emu_err(e: gemm_emu::EmuError) -> HipError {
    HipError::invalid(format!("device memory: {e}"))
}

/// The work of a copy; `staged` holds host source bytes read at the call.
fn copy_work(c: Copy, staged: Option<Vec<u8>>) -> Work {
    Box::new(move || {
        for side in [&c.dst, &c.src] {
            if let Side::Device(d, _) = side {
                if d.is_lost() {
                    return Err(d.lost_error());
                }
            }
        }
        if c.injected {
            return Err(HipError::Unknown("injected copy failure".into()));
        }
        let bytes = match (&c.src, staged) {
            (_, Some(b)) => b,
            // SAFETY: the source is host memory the caller handed to hipMemcpy*; for
            // asynchronous copies HIP requires it to stay valid until the copy has run.
            (Side::Host(p), None) => unsafe { host::read(*p, c.count) },
            (Side::Device(d, a), None) => {
                let mut b = vec![0u8; c.count];
                d.emu.copy_out(*a, &mut b).map_err(emu_err)?;
                b
            }
        };
        match &c.dst {
            // SAFETY: as above, for the destination.
            Side::Host(p) => unsafe { host::write(*p, &bytes) },
            Side::Device(d, a) => d.emu.copy_in(*a, &bytes).map_err(emu_err)?,
        }
        Ok(())
    })
}

/// The device whose null stream runs a synchronous copy: the destination's, else the
/// source's.
fn copy_device(c: &Copy) -> Option<Arc<Dev>> {
    match (&c.dst, &c.src) {
        (Side::Device(d, _), _) | (_, Side::Device(d, _)) => Some(d.clone()),
        _ => None,
    }
}

/// `hipMemcpy`.
pub fn memcpy(dst: usize, src: usize, count: usize, kind: i32) -> Result<(), HipError> {
    if count == 0 {
        return Ok(());
    }
    let m = machine();
    let c = prepare(&m, dst, src, count, kind)?;
    match copy_device(&c) {
        None => {
            // SAFETY: host-to-host copy of caller-provided ranges (hipMemcpy's contract).
            unsafe { host::copy(dst, src, count) };
            Ok(())
        }
        Some(dev) => {
            let stream = dev.null_stream.clone();
            let seq = submit(&dev, &stream, copy_work(c, None));
            stream.synchronize_upto(seq)
        }
    }
}

/// `hipMemcpyAsync` on `stream` (already resolved).
pub fn memcpy_async(
    dst: usize,
    src: usize,
    count: usize,
    kind: i32,
    dev: &Arc<Dev>,
    stream: &Arc<Stream>,
) -> Result<(), HipError> {
    dev.touch()?;
    if count == 0 {
        return Ok(());
    }
    let m = machine();
    let c = prepare(&m, dst, src, count, kind)?;
    let staged = match c.src {
        // SAFETY: pageable source: staged now, as HIP does ("copied to a staging buffer
        // immediately"); the caller guarantees it is readable during the call.
        Side::Host(p) if !is_pinned(p, count) => Some(unsafe { host::read(p, count) }),
        _ => None,
    };
    let pageable_dst = matches!(c.dst, Side::Host(p) if !is_pinned(p, count));
    let seq = submit(dev, stream, copy_work(c, staged));
    if pageable_dst {
        // "For transfers from device memory to pageable host memory, the function will
        // return only once the copy has completed."
        stream.wait_for(seq);
    }
    Ok(())
}

fn memset_work(dev: Arc<Dev>, addr: u64, value: u8, count: usize) -> Work {
    Box::new(move || {
        if dev.is_lost() {
            return Err(dev.lost_error());
        }
        dev.emu.copy_in(addr, &vec![value; count]).map_err(emu_err)
    })
}

fn memset_target(dst: usize, count: usize) -> Result<(Arc<Dev>, u64), HipError> {
    match classify(&machine(), dst, count, "destination")? {
        Side::Device(d, a) => {
            d.touch()?;
            Ok((d, a))
        }
        Side::Host(p) => Err(HipError::invalid(format!("hipMemset of host address {p:#x}"))),
    }
}

/// `hipMemset`: queued on the null stream of the target's device and waited for.
pub fn memset(dst: usize, value: i32, count: usize) -> Result<(), HipError> {
    if count == 0 {
        return Ok(());
    }
    let (dev, addr) = memset_target(dst, count)?;
    let stream = dev.null_stream.clone();
    let seq = submit(&dev, &stream, memset_work(dev.clone(), addr, value as u8, count));
    stream.synchronize_upto(seq)
}

/// `hipMemsetAsync` on `stream`.
pub fn memset_async(
    dst: usize,
    value: i32,
    count: usize,
    dev: &Arc<Dev>,
    stream: &Arc<Stream>,
) -> Result<(), HipError> {
    dev.touch()?;
    if count == 0 {
        return Ok(());
    }
    let (target, addr) = memset_target(dst, count)?;
    submit(dev, stream, memset_work(target, addr, value as u8, count));
    Ok(())
}
