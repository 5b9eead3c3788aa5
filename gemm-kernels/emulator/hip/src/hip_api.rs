//! The exported HIP runtime functions, with the C signatures of `hip_runtime_api.h` (the
//! ones gemm-rocm's `hip/sys.rs` resolves, plus `hipInit`, `hipStreamCreate`,
//! `hipEventCreate`, `hipGetLastError` and `hipPeekAtLastError`).
//!
//! Every export runs its body under `catch_unwind` (a panic becomes `hipErrorUnknown`),
//! refuses null out-pointers with `hipErrorInvalidValue`, and records its failure for
//! `hipGetLastError` of the calling thread. `GEMM_EMU_HIP_TRACE=1` prints every failure.
//!
//! The safety contract of each export is that of the HIP function it implements.
#![allow(clippy::missing_safety_doc)]

use std::cell::Cell;
use std::ffi::{c_char, c_float, c_int, c_uint, c_void, CStr};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use crate::device;
use crate::error::{hip_error_name, hip_error_string, HipError, HIP_SUCCESS};
use crate::memory;
use crate::module::{self, Args, Shape};
use crate::runtime::{self, machine, registry, Dev};
use crate::stream::{self, Event, Record, Stream, EVENT_DISABLE_TIMING, EVENT_FLAGS, STREAM_NON_BLOCKING};

type HipResult = Result<(), HipError>;

thread_local! {
    /// `hipGetLastError`: the last error any call of this thread returned.
    static LAST_ERROR: Cell<c_int> = const { Cell::new(0) };
}

fn trace() -> bool {
    static TRACE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("GEMM_EMU_HIP_TRACE").is_some_and(|v| v != "0"))
}

/// Runs an export's body: no panic crosses the C boundary.
pub(crate) fn guard(call: &str, f: impl FnOnce() -> HipResult) -> c_int {
    let code = match std::panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => HIP_SUCCESS,
        Ok(Err(e)) => {
            if trace() && !matches!(e, HipError::NotReady) {
                eprintln!("gemm-emu-hip: {call}: {} ({e})", hip_error_name(e.code()).to_string_lossy());
            }
            e.code()
        }
        Err(_) => {
            eprintln!("gemm-emu-hip: {call} panicked");
            HipError::Unknown(String::new()).code()
        }
    };
    if code != HIP_SUCCESS && code != HipError::NotReady.code() {
        LAST_ERROR.with(|l| l.set(code));
    }
    code
}

/// Writes `v` through an out-pointer.
///
/// # Safety
/// `p` is null or valid for writing one `T`.
unsafe fn out<T>(p: *mut T, v: T) -> HipResult {
    if p.is_null() {
        return Err(HipError::invalid("null output pointer"));
    }
    // SAFETY: non-null, and valid for one `T` by the caller's contract.
    unsafe { p.write(v) };
    Ok(())
}

fn stream_of(h: *mut c_void) -> Result<(Arc<Dev>, Arc<Stream>), HipError> {
    let m = machine();
    if h.is_null() {
        let dev = m.current()?;
        let s = dev.null_stream.clone();
        return Ok((dev, s));
    }
    let s = registry::stream(h as usize)?;
    let dev = m.device(s.device as c_int)?;
    Ok((dev, s))
}

#[no_mangle]
pub extern "C" fn hipGetErrorName(code: c_int) -> *const c_char {
    hip_error_name(code).as_ptr()
}

#[no_mangle]
pub extern "C" fn hipGetErrorString(code: c_int) -> *const c_char {
    hip_error_string(code).as_ptr()
}

#[no_mangle]
pub extern "C" fn hipGetLastError() -> c_int {
    LAST_ERROR.with(|l| l.replace(HIP_SUCCESS))
}

#[no_mangle]
pub extern "C" fn hipPeekAtLastError() -> c_int {
    LAST_ERROR.with(Cell::get)
}

#[no_mangle]
pub extern "C" fn hipInit(flags: c_uint) -> c_int {
    guard("hipInit", || if flags == 0 { Ok(()) } else { Err(HipError::invalid("hipInit flags must be 0")) })
}

#[no_mangle]
pub unsafe extern "C" fn hipRuntimeGetVersion(v: *mut c_int) -> c_int {
    // SAFETY: `v` is null or points at an int (hipRuntimeGetVersion's contract).
    guard("hipRuntimeGetVersion", || unsafe { out(v, machine().config.version) })
}

#[no_mangle]
pub unsafe extern "C" fn hipDriverGetVersion(v: *mut c_int) -> c_int {
    // SAFETY: as above.
    guard("hipDriverGetVersion", || unsafe { out(v, machine().config.version) })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceCount(count: *mut c_int) -> c_int {
    guard("hipGetDeviceCount", || {
        let n = machine().devices.len() as c_int;
        // SAFETY: `count` is null or points at an int.
        unsafe { out(count, n) }?;
        if n == 0 {
            return Err(HipError::NoDevice);
        }
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipSetDevice(ordinal: c_int) -> c_int {
    guard("hipSetDevice", || {
        let m = machine();
        if m.devices.is_empty() {
            return Err(HipError::NoDevice);
        }
        m.device(ordinal)?;
        runtime::set_current(ordinal);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDevice(ordinal: *mut c_int) -> c_int {
    guard("hipGetDevice", || {
        let dev = machine().current()?;
        // SAFETY: `ordinal` is null or points at an int.
        unsafe { out(ordinal, dev.ordinal as c_int) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetName(name: *mut c_char, len: c_int, ordinal: c_int) -> c_int {
    guard("hipDeviceGetName", || {
        let dev = machine().device(ordinal)?;
        if name.is_null() || len <= 0 {
            return Err(HipError::invalid("hipDeviceGetName needs a buffer"));
        }
        let s = device::name(dev.arch).as_bytes();
        let n = s.len().min(len as usize - 1);
        let mut bytes = s[..n].to_vec();
        bytes.push(0);
        // SAFETY: `name` holds `len` chars and we write n + 1 <= len.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), name, bytes.len()) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceGetAttribute(value: *mut c_int, attr: c_int, ordinal: c_int) -> c_int {
    guard("hipDeviceGetAttribute", || {
        let m = machine();
        let dev = m.device(ordinal)?;
        let v = device::attribute(dev.arch, dev.ordinal, attr, m.config.rocm5(), m.config.cus)?;
        // SAFETY: `value` is null or points at an int.
        unsafe { out(value, v) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipDeviceTotalMem(bytes: *mut usize, ordinal: c_int) -> c_int {
    guard("hipDeviceTotalMem", || {
        let dev = machine().device(ordinal)?;
        // SAFETY: `bytes` is null or points at a size_t.
        unsafe { out(bytes, dev.capacity as usize) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemGetInfo(free: *mut usize, total: *mut usize) -> c_int {
    guard("hipMemGetInfo", || {
        let dev = machine().current()?;
        dev.touch()?;
        let live = dev.counters.live_bytes.load(std::sync::atomic::Ordering::Relaxed);
        if free.is_null() || total.is_null() {
            return Err(HipError::invalid("null output pointer"));
        }
        // SAFETY: both point at a size_t (checked non-null).
        unsafe { out(free, dev.capacity.saturating_sub(live) as usize) }?;
        // SAFETY: as above.
        unsafe { out(total, dev.capacity as usize) }
    })
}

fn properties(call: &str, props: *mut c_void, ordinal: c_int, r0600: Option<bool>) -> c_int {
    guard(call, || {
        let m = machine();
        let dev = m.device(ordinal)?;
        if props.is_null() {
            return Err(HipError::invalid("null properties pointer"));
        }
        let r0600 = r0600.unwrap_or(!m.config.rocm5());
        let bytes = device::properties(dev.arch, dev.ordinal, dev.capacity, r0600, m.config.cus);
        // SAFETY: the caller passes a `hipDeviceProp_t` of the layout this call fills
        // (R0000: 792 bytes, R0600: 1472 bytes), and `bytes` is exactly that size.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), props.cast::<u8>(), bytes.len()) };
        Ok(())
    })
}

/// The unversioned symbol: ROCm 5's `hipDeviceProp_t` (R0000) when the configured version is
/// below 6.0, else R0600 (ROCm 6 headers map `hipGetDeviceProperties` to R0600).
#[no_mangle]
pub unsafe extern "C" fn hipGetDeviceProperties(props: *mut c_void, ordinal: c_int) -> c_int {
    properties("hipGetDeviceProperties", props, ordinal, None)
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDevicePropertiesR0000(props: *mut c_void, ordinal: c_int) -> c_int {
    properties("hipGetDevicePropertiesR0000", props, ordinal, Some(false))
}

#[no_mangle]
pub unsafe extern "C" fn hipGetDevicePropertiesR0600(props: *mut c_void, ordinal: c_int) -> c_int {
    properties("hipGetDevicePropertiesR0600", props, ordinal, Some(true))
}

#[no_mangle]
pub extern "C" fn hipDeviceSynchronize() -> c_int {
    guard("hipDeviceSynchronize", || {
        let dev = machine().current()?;
        dev.touch()?;
        dev.synchronize()
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMalloc(ptr: *mut *mut c_void, size: usize) -> c_int {
    guard("hipMalloc", || {
        if ptr.is_null() {
            return Err(HipError::invalid("hipMalloc(NULL, ..)"));
        }
        let addr = memory::malloc(size)?;
        // SAFETY: `ptr` points at a pointer (checked non-null). The value is a device
        // address the host must never dereference, like a real device pointer.
        unsafe { out(ptr, addr as usize as *mut c_void) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipFree(ptr: *mut c_void) -> c_int {
    guard("hipFree", || memory::free(ptr as u64))
}

/// `HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL` (`int`), `..._RANGE_START_ADDR` (`void*`) and
/// `..._RANGE_SIZE` (`size_t`) of a live device allocation (values of `hipPointer_attribute`
/// in `hip_runtime_api.h`); other attributes are `hipErrorInvalidValue` (not modelled).
#[no_mangle]
pub unsafe extern "C" fn hipPointerGetAttribute(data: *mut c_void, attribute: c_int, ptr: *mut c_void) -> c_int {
    guard("hipPointerGetAttribute", || {
        let (device, base, size) = memory::lookup(ptr as u64)?;
        match attribute {
            // SAFETY: for this attribute `data` points at an int (HIP's contract).
            9 => unsafe { out(data.cast::<c_int>(), device as c_int) },
            // SAFETY: a pointer-sized out value.
            11 => unsafe { out(data.cast::<*mut c_void>(), base as usize as *mut c_void) },
            // SAFETY: a size_t out value.
            12 => unsafe { out(data.cast::<usize>(), size as usize) },
            a => Err(HipError::invalid(format!("pointer attribute {a} is not modelled"))),
        }
    })
}

/// The base and size of the live device allocation holding `ptr`; either out-pointer may be
/// NULL (CUDA's `cuMemGetAddressRange`: "If one of them is NULL, it is ignored").
#[no_mangle]
pub unsafe extern "C" fn hipMemGetAddressRange(base: *mut *mut c_void, size: *mut usize, ptr: *mut c_void) -> c_int {
    guard("hipMemGetAddressRange", || {
        let (_, b, s) = memory::lookup(ptr as u64)?;
        if !base.is_null() {
            // SAFETY: non-null out-pointer for one pointer.
            unsafe { out(base, b as usize as *mut c_void) }?;
        }
        if !size.is_null() {
            // SAFETY: non-null out-pointer for one size_t.
            unsafe { out(size, s as usize) }?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostMalloc(ptr: *mut *mut c_void, size: usize, flags: c_uint) -> c_int {
    guard("hipHostMalloc", || {
        if ptr.is_null() {
            return Err(HipError::invalid("hipHostMalloc(NULL, ..)"));
        }
        let p = memory::host_malloc(size, flags)?;
        // SAFETY: `ptr` points at a pointer (checked non-null).
        unsafe { out(ptr, p as *mut c_void) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipHostFree(ptr: *mut c_void) -> c_int {
    guard("hipHostFree", || memory::host_free(ptr as usize))
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpy(dst: *mut c_void, src: *const c_void, count: usize, kind: c_int) -> c_int {
    guard("hipMemcpy", || memory::memcpy(dst as usize, src as usize, count, kind))
}

#[no_mangle]
pub unsafe extern "C" fn hipMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
    stream: *mut c_void,
) -> c_int {
    guard("hipMemcpyAsync", || {
        let (dev, s) = stream_of(stream)?;
        memory::memcpy_async(dst as usize, src as usize, count, kind, &dev, &s)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipMemset(dst: *mut c_void, value: c_int, count: usize) -> c_int {
    guard("hipMemset", || memory::memset(dst as usize, value, count))
}

#[no_mangle]
pub unsafe extern "C" fn hipMemsetAsync(dst: *mut c_void, value: c_int, count: usize, stream: *mut c_void) -> c_int {
    guard("hipMemsetAsync", || {
        let (dev, s) = stream_of(stream)?;
        memory::memset_async(dst as usize, value, count, &dev, &s)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamCreateWithFlags(stream: *mut *mut c_void, flags: c_uint) -> c_int {
    guard("hipStreamCreateWithFlags", || {
        if stream.is_null() {
            return Err(HipError::invalid("hipStreamCreateWithFlags(NULL, ..)"));
        }
        if flags & !STREAM_NON_BLOCKING != 0 {
            return Err(HipError::invalid(format!("stream flags {flags:#x}")));
        }
        let m = machine();
        let dev = m.current()?;
        dev.touch()?;
        let s = Stream::spawn(dev.ordinal, flags, false, &m.config);
        if flags & STREAM_NON_BLOCKING == 0 {
            dev.streams.lock().push(Arc::downgrade(&s));
        }
        let h = registry::insert_stream(s);
        // SAFETY: `stream` points at a handle (checked non-null).
        unsafe { out(stream, h as *mut c_void) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipStreamCreate(stream: *mut *mut c_void) -> c_int {
    // SAFETY: same contract.
    unsafe { hipStreamCreateWithFlags(stream, 0) }
}

/// Destroys a stream: queued work still runs to completion on its thread (HIP: "the queue
/// may ... wait for all commands queued to the stream before destroying it"); the handle is
/// invalid at once.
#[no_mangle]
pub extern "C" fn hipStreamDestroy(stream: *mut c_void) -> c_int {
    guard("hipStreamDestroy", || {
        if stream.is_null() {
            return Err(HipError::InvalidHandle("the null stream cannot be destroyed".into()));
        }
        registry::remove_stream(stream as usize)?.close();
        Ok(())
    })
}

/// The device of a stream (NULL: the current device's null stream).
#[no_mangle]
pub unsafe extern "C" fn hipStreamGetDevice(stream: *mut c_void, device: *mut c_int) -> c_int {
    guard("hipStreamGetDevice", || {
        let (dev, _) = stream_of(stream)?;
        // SAFETY: `device` is null (refused by `out`) or points at an int.
        unsafe { out(device, dev.ordinal as c_int) }
    })
}

#[no_mangle]
pub extern "C" fn hipStreamSynchronize(stream: *mut c_void) -> c_int {
    guard("hipStreamSynchronize", || {
        let (dev, s) = stream_of(stream)?;
        dev.touch()?;
        s.synchronize()
    })
}

#[no_mangle]
pub extern "C" fn hipStreamQuery(stream: *mut c_void) -> c_int {
    guard("hipStreamQuery", || {
        let (dev, s) = stream_of(stream)?;
        dev.touch()?;
        s.query()
    })
}

#[no_mangle]
pub extern "C" fn hipStreamWaitEvent(stream: *mut c_void, event: *mut c_void, flags: c_uint) -> c_int {
    guard("hipStreamWaitEvent", || {
        if flags != 0 {
            return Err(HipError::invalid("hipStreamWaitEvent flags must be 0"));
        }
        let (dev, s) = stream_of(stream)?;
        let e = registry::event(event as usize)?;
        dev.touch()?;
        let record = e.record.lock().clone();
        // Waiting on a never-recorded event is a no-op (CUDA/HIP: the wait is on the most
        // recent record, and there is none).
        if let Some(r) = record {
            stream::submit_wait(&dev, &s, r.stream, r.seq);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventCreateWithFlags(event: *mut *mut c_void, flags: c_uint) -> c_int {
    guard("hipEventCreateWithFlags", || {
        if event.is_null() {
            return Err(HipError::invalid("hipEventCreateWithFlags(NULL, ..)"));
        }
        if flags & !EVENT_FLAGS != 0 {
            return Err(HipError::invalid(format!("event flags {flags:#x}")));
        }
        let dev = machine().current()?;
        dev.touch()?;
        let h = registry::insert_event(Arc::new(Event { device: dev.ordinal, flags, record: Default::default() }));
        // SAFETY: `event` points at a handle (checked non-null).
        unsafe { out(event, h as *mut c_void) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipEventCreate(event: *mut *mut c_void) -> c_int {
    // SAFETY: same contract.
    unsafe { hipEventCreateWithFlags(event, 0) }
}

/// Records an event. The stream must be on the event's device (HIP answers
/// `hipErrorInvalidHandle` otherwise).
#[no_mangle]
pub extern "C" fn hipEventRecord(event: *mut c_void, stream: *mut c_void) -> c_int {
    guard("hipEventRecord", || {
        let e = registry::event(event as usize)?;
        let (dev, s) = stream_of(stream)?;
        if e.device != s.device {
            return Err(HipError::InvalidHandle(format!(
                "event of device {} recorded on a stream of device {}",
                e.device, s.device
            )));
        }
        dev.touch()?;
        let time = Arc::new(parking_lot::Mutex::new(None));
        let t = time.clone();
        let seq = stream::submit(
            &dev,
            &s,
            Box::new(move || {
                *t.lock() = Some(Instant::now());
                Ok(())
            }),
        );
        *e.record.lock() = Some(Record { stream: s, seq, time });
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn hipEventSynchronize(event: *mut c_void) -> c_int {
    guard("hipEventSynchronize", || registry::event(event as usize)?.synchronize())
}

#[no_mangle]
pub extern "C" fn hipEventQuery(event: *mut c_void) -> c_int {
    guard("hipEventQuery", || registry::event(event as usize)?.query())
}

/// Milliseconds between two completed records. Either event created with
/// `hipEventDisableTiming`, or never recorded: `hipErrorInvalidHandle` (CUDA's
/// `cudaErrorInvalidResourceHandle`); either still pending: `hipErrorNotReady`.
#[no_mangle]
pub unsafe extern "C" fn hipEventElapsedTime(ms: *mut c_float, start: *mut c_void, stop: *mut c_void) -> c_int {
    guard("hipEventElapsedTime", || {
        if ms.is_null() {
            return Err(HipError::invalid("null output pointer"));
        }
        let (a, b) = (registry::event(start as usize)?, registry::event(stop as usize)?);
        if (a.flags | b.flags) & EVENT_DISABLE_TIMING != 0 {
            return Err(HipError::InvalidHandle("an event was created with hipEventDisableTiming".into()));
        }
        let mut times = [Instant::now(); 2];
        for (i, e) in [&a, &b].into_iter().enumerate() {
            let r = e.record.lock().clone().ok_or_else(|| HipError::InvalidHandle("event never recorded".into()))?;
            e.query()?;
            times[i] = r.time.lock().ok_or(HipError::NotReady)?;
        }
        let d = if times[1] >= times[0] {
            (times[1] - times[0]).as_secs_f64()
        } else {
            -(times[0] - times[1]).as_secs_f64()
        };
        // SAFETY: `ms` points at a float (checked non-null).
        unsafe { out(ms, (d * 1e3) as c_float) }
    })
}

#[no_mangle]
pub extern "C" fn hipEventDestroy(event: *mut c_void) -> c_int {
    guard("hipEventDestroy", || registry::remove_event(event as usize).map(drop))
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleLoadData(module: *mut *mut c_void, image: *const c_void) -> c_int {
    guard("hipModuleLoadData", || {
        if module.is_null() || image.is_null() {
            return Err(HipError::invalid("hipModuleLoadData with a null pointer"));
        }
        // SAFETY: `image` points at a complete code object (hipModuleLoadData's contract).
        let m = unsafe { module::load(image as usize) }?;
        let h = registry::insert_module(Arc::new(m));
        // SAFETY: `module` points at a handle (checked non-null).
        unsafe { out(module, h as *mut c_void) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipModuleGetFunction(
    function: *mut *mut c_void,
    module: *mut c_void,
    name: *const c_char,
) -> c_int {
    guard("hipModuleGetFunction", || {
        if function.is_null() || name.is_null() {
            return Err(HipError::invalid("hipModuleGetFunction with a null pointer"));
        }
        let m = registry::module(module as usize)?;
        // SAFETY: `name` is a NUL-terminated string (checked non-null).
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
        let info = m.kernels.get(&name).cloned().ok_or_else(|| HipError::NotFound(format!("kernel `{name}`")))?;
        let h = registry::insert_function(Arc::new(module::Function { module: m, name, info }));
        // SAFETY: `function` points at a handle (checked non-null).
        unsafe { out(function, h as *mut c_void) }
    })
}

/// Unloads a module and invalidates its functions; launches already queued keep the code.
#[no_mangle]
pub extern "C" fn hipModuleUnload(module: *mut c_void) -> c_int {
    guard("hipModuleUnload", || {
        let m = registry::remove_module(module as usize)?;
        for (h, f) in registry::functions() {
            if Arc::ptr_eq(&f.module, &m) {
                let _ = registry::remove_function(h);
            }
        }
        Ok(())
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hipModuleLaunchKernel(
    function: *mut c_void,
    grid_x: c_uint,
    grid_y: c_uint,
    grid_z: c_uint,
    block_x: c_uint,
    block_y: c_uint,
    block_z: c_uint,
    shared_mem_bytes: c_uint,
    stream: *mut c_void,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> c_int {
    guard("hipModuleLaunchKernel", || {
        let f = registry::function(function as usize)?;
        let (dev, s) = stream_of(stream)?;
        let args = match (kernel_params.is_null(), extra.is_null()) {
            (false, false) => return Err(HipError::invalid("both kernelParams and extra given")),
            (false, true) => Args::Params(kernel_params as usize),
            (true, false) => Args::Extra(extra as usize),
            (true, true) if f.info.explicit_end() == 0 => Args::Params(0),
            (true, true) => return Err(HipError::invalid(format!("kernel {} takes arguments; none given", f.name))),
        };
        let bytes = match args {
            Args::Params(0) => Vec::new(),
            // SAFETY: hipModuleLaunchKernel's contract for kernelParams / extra.
            a => unsafe { module::pack_args(&f, a) }?,
        };
        let shape =
            Shape { grid: [grid_x, grid_y, grid_z], block: [block_x, block_y, block_z], shared: shared_mem_bytes };
        module::launch(&f, shape, &dev, &s, bytes)
    })
}
