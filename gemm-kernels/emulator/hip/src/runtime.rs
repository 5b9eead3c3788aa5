//! The process-wide emulated machine: devices, the calling thread's current device, handle
//! registries, counters and injected faults.
//!
//! State is global, like a real runtime's: one machine per process, read from `GEMM_EMU_HIP`
//! on first use and replaced by `gemm_emu_hip_configure`. Tests that configure differently
//! must serialise.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Weak};

use gemm_emu::Arch;
use parking_lot::Mutex;

use crate::config::Config;
use crate::error::HipError;
use crate::stream::Stream;

/// Device `i`'s addresses start at `ADDRESS_BASE + i * ADDRESS_WINDOW`. The base is 2^47, the
/// first non-canonical x86-64 address: a host that dereferences a device pointer faults, as
/// with a real GPU, and no host pointer can ever look like a device pointer.
pub const ADDRESS_BASE: u64 = 1 << 47;
/// 16 TiB of address space per device (allocations are never reused).
pub const ADDRESS_WINDOW: u64 = 1 << 44;
/// Most devices one machine may have (keeps every window below 2^54).
pub const MAX_DEVICES: usize = 64;

/// Faults armed by `gemm_emu_hip_inject_fault`: each counts down the operations still to
/// pass before it fires.
#[derive(Debug, Default, Clone)]
pub struct Faults {
    /// The launch that fails asynchronously.
    pub launch: Option<u64>,
    /// The copy that fails.
    pub memcpy: Option<u64>,
    /// The `hipMalloc` that answers `hipErrorOutOfMemory`.
    pub malloc: Option<u64>,
    /// Operations left before the device is lost.
    pub lost: Option<u64>,
}

/// Counts `slot` down; `true` when it fires (and disarms it).
pub fn fires(slot: &mut Option<u64>) -> bool {
    match slot {
        Some(0) => {
            *slot = None;
            true
        }
        Some(n) => {
            *n -= 1;
            false
        }
        None => false,
    }
}

/// What `gemm_emu_hip_counter` reports per device.
#[derive(Debug, Default)]
pub struct Counters {
    /// Kernel launches accepted by `hipModuleLaunchKernel`.
    pub launches: AtomicU64,
    /// Bytes copied host to device.
    pub h2d_bytes: AtomicU64,
    /// Bytes copied device to host.
    pub d2h_bytes: AtomicU64,
    /// Bytes copied device to device (counted on the destination's device).
    pub d2d_bytes: AtomicU64,
    /// `hipMalloc` calls made while this device was current (failed ones too).
    pub malloc_calls: AtomicU64,
    /// `hipHostMalloc` calls made while this device was current.
    pub host_malloc_calls: AtomicU64,
    /// Bytes allocated now.
    pub live_bytes: AtomicU64,
    /// Most bytes allocated at once.
    pub peak_bytes: AtomicU64,
    /// Checker findings of launches on this device.
    pub findings: AtomicU64,
    /// Collective operations (one per rank part) run on this device.
    pub collectives: AtomicU64,
}

/// One emulated GPU.
pub struct Dev {
    /// HIP ordinal.
    pub ordinal: usize,
    /// Architecture.
    pub arch: Arch,
    /// The emulator: memory and launches.
    pub emu: gemm_emu::Device,
    /// `hipDeviceTotalMem`.
    pub capacity: u64,
    /// Live `hipMalloc` allocations: base address to requested size.
    pub allocs: Mutex<BTreeMap<u64, u64>>,
    /// Counters.
    pub counters: Counters,
    /// Armed faults.
    pub faults: Mutex<Faults>,
    /// Set once a `lost` fault fired.
    pub lost: AtomicBool,
    /// Text of the last failed launch's findings.
    pub last_findings: Mutex<String>,
    /// The null (legacy default) stream.
    pub null_stream: Arc<Stream>,
    /// Blocking streams created on this device (they synchronise with the null stream).
    pub streams: Mutex<Vec<Weak<Stream>>>,
    /// Serialises submissions so that null-stream ordering is decided atomically.
    pub submit_lock: Mutex<()>,
}

impl std::fmt::Debug for Dev {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dev").field("ordinal", &self.ordinal).field("arch", &self.arch).finish()
    }
}

impl Dev {
    fn new(ordinal: usize, arch: Arch, config: &Config) -> Self {
        let base = ADDRESS_BASE + ordinal as u64 * ADDRESS_WINDOW;
        Self {
            ordinal,
            arch,
            emu: gemm_emu::Device::with_base(arch, base),
            capacity: config.memory,
            allocs: Mutex::new(BTreeMap::new()),
            counters: Counters::default(),
            faults: Mutex::new(Faults::default()),
            lost: AtomicBool::new(false),
            last_findings: Mutex::new(String::new()),
            null_stream: Stream::spawn(ordinal, 0, true, config),
            streams: Mutex::new(Vec::new()),
            submit_lock: Mutex::new(()),
        }
    }

    /// Every call that touches the device passes here: once a `lost` fault has fired, every
    /// call fails with `hipErrorUnknown`.
    pub fn touch(&self) -> Result<(), HipError> {
        if self.lost.load(Ordering::SeqCst) {
            return Err(self.lost_error());
        }
        let mut f = self.faults.lock();
        if fires(&mut f.lost) {
            self.lost.store(true, Ordering::SeqCst);
            return Err(self.lost_error());
        }
        Ok(())
    }

    /// The error of a lost device.
    pub fn lost_error(&self) -> HipError {
        HipError::Unknown(format!("device {} was lost (injected fault)", self.ordinal))
    }

    /// Whether the device has been lost (checked again when queued work runs).
    pub fn is_lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    /// The live streams of this device, the null stream first.
    pub fn all_streams(&self) -> Vec<Arc<Stream>> {
        let mut v = vec![self.null_stream.clone()];
        v.extend(registry::streams().values().filter(|s| s.device == self.ordinal).cloned());
        v
    }

    /// `hipDeviceSynchronize`: waits for every stream of the device and reports (and clears)
    /// the first error any of them holds.
    pub fn synchronize(&self) -> Result<(), HipError> {
        let mut first = Ok(());
        for s in self.all_streams() {
            if let Err(e) = s.synchronize() {
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }

    /// Waits for every stream of the device without consuming errors (`hipFree`).
    pub fn drain(&self) {
        for s in self.all_streams() {
            s.wait_idle();
        }
    }

    /// The allocation holding `[addr, addr + len)`, as (base, size).
    pub fn find_alloc(&self, addr: u64, len: u64) -> Option<(u64, u64)> {
        let allocs = self.allocs.lock();
        let (&base, &size) = allocs.range(..=addr).next_back()?;
        (addr.checked_add(len)? <= base + size.max(1)).then_some((base, size))
    }
}

/// The emulated machine.
#[derive(Debug)]
pub struct Machine {
    /// What it was built from.
    pub config: Config,
    /// Its devices, by ordinal.
    pub devices: Vec<Arc<Dev>>,
}

impl Machine {
    fn new(config: Config) -> Self {
        let devices = config.devices.iter().enumerate().map(|(i, &a)| Arc::new(Dev::new(i, a, &config))).collect();
        Self { config, devices }
    }

    /// Device `ordinal`.
    pub fn device(&self, ordinal: i32) -> Result<Arc<Dev>, HipError> {
        usize::try_from(ordinal)
            .ok()
            .and_then(|i| self.devices.get(i).cloned())
            .ok_or_else(|| HipError::InvalidDevice(format!("{ordinal} ({} devices)", self.devices.len())))
    }

    /// The calling thread's current device (`hipSetDevice`; 0 until set).
    pub fn current(&self) -> Result<Arc<Dev>, HipError> {
        if self.devices.is_empty() {
            return Err(HipError::NoDevice);
        }
        self.device(CURRENT.with(Cell::get))
    }

    /// The device whose address window holds `addr`, if any (without checking allocations).
    pub fn window_device(&self, addr: u64) -> Option<Arc<Dev>> {
        let i = addr.checked_sub(ADDRESS_BASE)? / ADDRESS_WINDOW;
        self.devices.get(usize::try_from(i).ok()?).cloned()
    }
}

/// Whether `addr` lies in the range of device address windows (a device pointer, live or not).
pub fn is_device_address(addr: u64) -> bool {
    (ADDRESS_BASE..ADDRESS_BASE + MAX_DEVICES as u64 * ADDRESS_WINDOW).contains(&addr)
}

thread_local! {
    /// HIP's current device is per host thread (`hipSetDevice`: "Sets device as the default
    /// device for the calling host thread"); a new thread starts on device 0.
    static CURRENT: Cell<i32> = const { Cell::new(0) };
}

/// Sets the calling thread's current device.
pub fn set_current(ordinal: i32) {
    CURRENT.with(|c| c.set(ordinal));
}

/// The calling thread's current ordinal, unchecked.
pub fn current_ordinal() -> i32 {
    CURRENT.with(Cell::get)
}

static MACHINE: Mutex<Option<Arc<Machine>>> = Mutex::new(None);

/// The machine, built from `GEMM_EMU_HIP` on first use. A spec that does not parse gives a
/// machine without devices and a message on stderr (so that a typo is never mistaken for
/// the default machine).
pub fn machine() -> Arc<Machine> {
    let mut m = MACHINE.lock();
    if let Some(m) = &*m {
        return m.clone();
    }
    let config = match std::env::var("GEMM_EMU_HIP") {
        Ok(spec) => Config::parse(&spec).unwrap_or_else(|e| {
            eprintln!("gemm-emu-hip: GEMM_EMU_HIP={spec:?} is not a valid spec ({e}); emulating no device");
            Config { devices: Vec::new(), ..Config::default() }
        }),
        Err(_) => Config::default(),
    };
    let built = Arc::new(Machine::new(config));
    *m = Some(built.clone());
    built
}

/// Why a machine cannot be replaced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReconfigureError {
    /// The spec does not parse.
    #[error(transparent)]
    Spec(#[from] crate::config::ConfigError),
    /// Objects of the current machine are still alive.
    #[error("still alive: {0}")]
    Busy(String),
    /// More devices than the address space allows.
    #[error("at most {MAX_DEVICES} devices")]
    TooManyDevices,
}

/// Replaces the machine, unless anything of the current one is alive.
pub fn reconfigure(spec: &str) -> Result<(), ReconfigureError> {
    let config = Config::parse(spec)?;
    if config.devices.len() > MAX_DEVICES {
        return Err(ReconfigureError::TooManyDevices);
    }
    let mut m = MACHINE.lock();
    if let Some(cur) = &*m {
        let mut alive = Vec::new();
        let allocs: usize = cur.devices.iter().map(|d| d.allocs.lock().len()).sum();
        if allocs > 0 {
            alive.push(format!("{allocs} device allocations"));
        }
        for (n, what) in registry::live_counts() {
            if n > 0 {
                alive.push(format!("{n} {what}"));
            }
        }
        if !alive.is_empty() {
            return Err(ReconfigureError::Busy(alive.join(", ")));
        }
        for d in &cur.devices {
            d.null_stream.wait_idle();
        }
    }
    *m = Some(Arc::new(Machine::new(config)));
    Ok(())
}

/// Handle registries: every handle given to C is a key here, so a stale or foreign handle is
/// an error (`hipErrorInvalidHandle`), never undefined behaviour.
pub mod registry {
    use super::*;
    use crate::memory::Pinned;
    use crate::module::{Function, Module};
    use crate::nccl::Comm;
    use crate::stream::{Event, Stream};

    /// Handles are `tag << 52 | n << 4`: non-canonical addresses (so a host dereference
    /// faults), distinct per kind (so a stream passed as an event is refused).
    fn handle(tag: u64, n: u64) -> usize {
        ((tag << 52) | (n << 4)) as usize
    }

    static NEXT: AtomicU64 = AtomicU64::new(1);

    /// A fresh number for a handle or an object id.
    pub fn next_id() -> u64 {
        NEXT.fetch_add(1, Ordering::Relaxed)
    }

    macro_rules! registry {
        ($name:ident, $all:ident, $insert:ident, $get:ident, $remove:ident, $ty:ty, $tag:expr, $what:expr) => {
            static $name: LazyLock<Mutex<HashMap<usize, Arc<$ty>>>> = LazyLock::new(|| Mutex::new(HashMap::new()));
            /// Registers an object; returns its handle.
            pub fn $insert(v: Arc<$ty>) -> usize {
                let h = handle($tag, next_id());
                $name.lock().insert(h, v);
                h
            }
            /// The object of a handle.
            pub fn $get(h: usize) -> Result<Arc<$ty>, HipError> {
                $name.lock().get(&h).cloned().ok_or_else(|| HipError::InvalidHandle(format!("{} {h:#x}", $what)))
            }
            /// Unregisters a handle.
            pub fn $remove(h: usize) -> Result<Arc<$ty>, HipError> {
                $name.lock().remove(&h).ok_or_else(|| HipError::InvalidHandle(format!("{} {h:#x}", $what)))
            }
            /// Every live object of this kind.
            pub fn $all() -> HashMap<usize, Arc<$ty>> {
                $name.lock().clone()
            }
        };
    }

    registry!(STREAMS, streams, insert_stream, stream, remove_stream, Stream, 0x5e1, "stream");
    registry!(EVENTS, events, insert_event, event, remove_event, Event, 0xe71, "event");
    registry!(MODULES, modules, insert_module, module, remove_module, Module, 0x301, "module");
    registry!(FUNCTIONS, functions, insert_function, function, remove_function, Function, 0xf01, "function");
    registry!(COMMS, comms, insert_comm, comm, remove_comm, Comm, 0xcc1, "communicator");

    static PINNED: LazyLock<Mutex<BTreeMap<usize, Pinned>>> = LazyLock::new(|| Mutex::new(BTreeMap::new()));

    /// The pinned host allocations, by address.
    pub fn pinned() -> parking_lot::MutexGuard<'static, BTreeMap<usize, Pinned>> {
        PINNED.lock()
    }

    /// How many objects of each kind are alive.
    pub fn live_counts() -> [(usize, &'static str); 6] {
        [
            (STREAMS.lock().len(), "streams"),
            (EVENTS.lock().len(), "events"),
            (MODULES.lock().len(), "modules"),
            (COMMS.lock().len(), "communicators"),
            (PINNED.lock().len(), "pinned host allocations"),
            (crate::nccl::pending_joins(), "communicators being initialised"),
        ]
    }
}
