//! The control API: C functions (not part of HIP) that configure the emulated machine, inject
//! faults and read counters. Names and signatures are a contract other crates code against.

use std::ffi::{c_char, c_int, CStr};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;

use crate::runtime::{machine, reconfigure, Faults};

fn text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null, and a NUL-terminated string by the caller's contract.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// `int gemm_emu_hip_configure(const char* spec)`: replaces the emulated machine (see the
/// README for the keys). Returns 0; nonzero, changing nothing, for a null or bad spec or
/// while any allocation, stream, event, module or communicator of the current machine is
/// alive (the reason goes to stderr).
///
/// # Safety
/// `spec` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn gemm_emu_hip_configure(spec: *const c_char) -> c_int {
    let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let Some(spec) = text(spec) else { return 1 };
        match reconfigure(&spec) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("gemm-emu-hip: gemm_emu_hip_configure({spec:?}): {e}");
                2
            }
        }
    }));
    r.unwrap_or(3)
}

/// `int gemm_emu_hip_inject_fault(int device, const char* op, unsigned long long after)`:
/// `launch` (the (after+1)-th later launch on the device fails asynchronously with
/// `hipErrorLaunchFailure`), `memcpy` (the (after+1)-th copy touching the device fails with
/// `hipErrorUnknown`: returned by `hipMemcpy`, or by the next synchronisation of the stream
/// of an asynchronous copy), `malloc` (the (after+1)-th `hipMalloc` answers
/// `hipErrorOutOfMemory`), `lost` (after `after` more calls touching the device, every later
/// one fails with `hipErrorUnknown`, queued work included), `clear` (disarms all and
/// un-loses the device). Returns 0, or nonzero for an unknown device or op.
///
/// # Safety
/// `op` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn gemm_emu_hip_inject_fault(device: c_int, op: *const c_char, after: u64) -> c_int {
    let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let Some(op) = text(op) else { return 1 };
        let Ok(dev) = machine().device(device) else { return 1 };
        let mut f = dev.faults.lock();
        match op.as_str() {
            "launch" => f.launch = Some(after),
            "memcpy" => f.memcpy = Some(after),
            "malloc" => f.malloc = Some(after),
            "lost" => f.lost = Some(after),
            "clear" => {
                *f = Faults::default();
                dev.lost.store(false, Ordering::SeqCst);
            }
            _ => return 1,
        }
        0
    }));
    r.unwrap_or(3)
}

/// `unsigned long long gemm_emu_hip_counter(int device, const char* name)`: `launches`,
/// `h2d_bytes`, `d2h_bytes`, `d2d_bytes`, `malloc_calls`, `host_malloc_calls`, `live_bytes`,
/// `peak_bytes`, `findings`, `collectives`; `u64::MAX` for an unknown name or device.
///
/// # Safety
/// `name` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn gemm_emu_hip_counter(device: c_int, name: *const c_char) -> u64 {
    let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let Some(name) = text(name) else { return u64::MAX };
        let Ok(dev) = machine().device(device) else { return u64::MAX };
        let c = &dev.counters;
        let v = match name.as_str() {
            "launches" => &c.launches,
            "h2d_bytes" => &c.h2d_bytes,
            "d2h_bytes" => &c.d2h_bytes,
            "d2d_bytes" => &c.d2d_bytes,
            "malloc_calls" => &c.malloc_calls,
            "host_malloc_calls" => &c.host_malloc_calls,
            "live_bytes" => &c.live_bytes,
            "peak_bytes" => &c.peak_bytes,
            "findings" => &c.findings,
            "collectives" => &c.collectives,
            _ => return u64::MAX,
        };
        v.load(Ordering::Relaxed)
    }));
    r.unwrap_or(u64::MAX)
}

/// `int gemm_emu_hip_last_findings(int device, char* buf, size_t len)`: copies the text of the
/// device's last failed launch (checker findings or fault; empty if none) into `buf`,
/// truncated and NUL-terminated when `len > 0`; returns the full length in bytes (without the
/// NUL), or -1 for an unknown device.
///
/// # Safety
/// `buf` is null or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn gemm_emu_hip_last_findings(device: c_int, buf: *mut c_char, len: usize) -> c_int {
    let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let Ok(dev) = machine().device(device) else { return -1 };
        let text = dev.last_findings.lock().clone();
        if !buf.is_null() && len > 0 {
            let n = text.len().min(len - 1);
            // SAFETY: `buf` is writable for `len` bytes and we write n + 1 <= len.
            unsafe {
                std::ptr::copy_nonoverlapping(text.as_ptr().cast::<c_char>(), buf, n);
                *buf.add(n) = 0;
            }
        }
        c_int::try_from(text.len()).unwrap_or(c_int::MAX)
    }));
    r.unwrap_or(-1)
}
