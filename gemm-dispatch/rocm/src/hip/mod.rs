//! The HIP runtime (`libamdhip64`), loaded at run time.
//!
//! Layers, after cudarc: [`sys`] holds the raw prototypes and constants of
//! `hip_runtime_api.h` in a lazily resolved symbol table; [`result`] turns `hipError_t` into
//! [`HipError`]; this module and its children are the safe types the dispatch layer uses:
//! [`Hip`] (the loaded library, cheap to clone), [`Device`], [`DeviceBuffer`],
//! [`PinnedHostBuffer`], [`Stream`], [`Event`], [`Module`] and [`Function`].
//!
//! HIP's current device is per host thread, so every device-scoped call here first makes its
//! device current (`hipSetDevice`); callers need not track it.

mod memory;
mod module;
pub mod result;
mod stream;
pub mod sys;

use std::ffi::{c_char, c_int, CStr, OsString};
use std::path::Path;
use std::sync::Arc;

pub use memory::{DeviceBuffer, PinnedHostBuffer};
pub use module::{pack_launch_extra, Function, KernelArgs, LaunchConfig, Module};
pub use result::HipError;
pub use stream::{Event, Stream};

use crate::error::{Error, Result};
use crate::loader::{LibrarySpec, LoadError};
use sys::HipApi;

/// Where the HIP runtime is looked for. `GEMM_HIP_LIBRARY` replaces the list.
pub const HIP_LIBRARY: LibrarySpec = LibrarySpec {
    name: "HIP runtime (libamdhip64)",
    env_var: "GEMM_HIP_LIBRARY",
    candidates: &[
        "libamdhip64.so",
        "libamdhip64.so.6",
        "libamdhip64.so.5",
        "/opt/rocm/lib/libamdhip64.so",
        "/opt/rocm/lib/libamdhip64.so.6",
        "/opt/rocm/lib/libamdhip64.so.5",
    ],
};

/// The loaded HIP runtime. Clones share one library (an `Arc`).
#[derive(Clone)]
pub struct Hip {
    api: Arc<HipApi>,
}

impl std::fmt::Debug for Hip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hip").field("library", &self.library_path()).finish()
    }
}

/// `HIP_VERSION` decoded: major * 10^7 + minor * 10^5 + patch (`hip_version.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct HipVersion {
    /// e.g. 6 for ROCm 6.x.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Patch / build number.
    pub patch: u32,
}

impl HipVersion {
    /// Decodes the value `hipRuntimeGetVersion` reports.
    pub fn from_raw(raw: i32) -> Self {
        let raw = raw.max(0) as u32;
        Self { major: raw / 10_000_000, minor: (raw / 100_000) % 100, patch: raw % 100_000 }
    }
}

impl std::fmt::Display for HipVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The ABI generation of the loaded runtime: `hipDeviceProp_t` and some
/// `hipDeviceAttribute_t` values differ between ROCm 5 and ROCm 6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HipAbi {
    /// ROCm 5.x: `hipDeviceProp_t` is the R0000 layout.
    Rocm5,
    /// ROCm 6.0 and later: `hipDeviceProp_tR0600`.
    Rocm6,
}

impl HipAbi {
    /// The generation a runtime version belongs to.
    pub fn from_version(v: HipVersion) -> Self {
        if v.major >= 6 {
            Self::Rocm6
        } else {
            Self::Rocm5
        }
    }

    /// Offset of `gcnArchName` in this generation's `hipDeviceProp_t`.
    pub fn gcn_arch_name_offset(self) -> usize {
        match self {
            Self::Rocm5 => sys::DEVICE_PROP_R0000_GCN_ARCH_NAME,
            Self::Rocm6 => sys::DEVICE_PROP_R0600_GCN_ARCH_NAME,
        }
    }

    /// The `hipDeviceAttribute_t` value for `a`, or `None` where this generation lacks it.
    pub fn attribute(self, a: DeviceAttribute) -> Option<c_int> {
        use sys::attr::*;
        use DeviceAttribute as A;
        let v = match a {
            A::ComputeUnits => MULTIPROCESSOR_COUNT,
            A::WarpSize => WARP_SIZE,
            A::MaxThreadsPerBlock => MAX_THREADS_PER_BLOCK,
            A::LdsPerWorkgroup => MAX_SHARED_MEMORY_PER_BLOCK,
            A::LdsPerComputeUnit => MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            A::L2CacheBytes => L2_CACHE_SIZE,
            A::ClockKhz => CLOCK_RATE,
            A::MemoryClockKhz => MEMORY_CLOCK_RATE,
            A::MemoryBusWidthBits => MEMORY_BUS_WIDTH,
            A::ComputeCapabilityMajor => COMPUTE_CAPABILITY_MAJOR,
            A::ComputeCapabilityMinor => COMPUTE_CAPABILITY_MINOR,
            A::PciBusId => PCI_BUS_ID,
            A::PciDeviceId => PCI_DEVICE_ID,
            A::PciDomainId => PCI_DOMAIN_ID,
            A::MaxRegistersPerBlock => MAX_REGISTERS_PER_BLOCK,
            A::MaxBlockDimX => MAX_BLOCK_DIM_X,
            A::MaxGridDimX => MAX_GRID_DIM_X,
            A::ClockInstructionRateKhz => CLOCK_INSTRUCTION_RATE,
            A::IsLargeBar => IS_LARGE_BAR,
            A::AsicRevision => ASIC_REVISION,
            A::GcnArch => match self {
                Self::Rocm5 => ROCM5_GCN_ARCH,
                Self::Rocm6 => return None,
            },
            A::PhysicalComputeUnits => match self {
                Self::Rocm5 => return None,
                Self::Rocm6 => ROCM6_PHYSICAL_MULTIPROCESSOR_COUNT,
            },
            A::WallClockKhz => match self {
                Self::Rocm5 => return None,
                Self::Rocm6 => ROCM6_WALL_CLOCK_RATE,
            },
            A::XccCount => match self {
                Self::Rocm5 => return None,
                Self::Rocm6 => ROCM6_NUMBER_OF_XCCS,
            },
        };
        Some(v)
    }
}

/// Numeric device facts read with `hipDeviceGetAttribute` (never from `hipDeviceProp_t`,
/// whose layout changed between ROCm 5 and 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceAttribute {
    /// Compute units (`hipDeviceAttributeMultiprocessorCount`).
    ComputeUnits,
    /// Wavefront size.
    WarpSize,
    /// Most work-items in one workgroup.
    MaxThreadsPerBlock,
    /// LDS bytes one workgroup may use.
    LdsPerWorkgroup,
    /// LDS bytes per compute unit.
    LdsPerComputeUnit,
    /// L2 bytes.
    L2CacheBytes,
    /// Peak engine clock, kHz.
    ClockKhz,
    /// Peak memory clock, kHz.
    MemoryClockKhz,
    /// Memory bus width, bits.
    MemoryBusWidthBits,
    /// HIP's "compute capability" major (9 on gfx9xx).
    ComputeCapabilityMajor,
    /// HIP's "compute capability" minor.
    ComputeCapabilityMinor,
    /// PCI bus.
    PciBusId,
    /// PCI device.
    PciDeviceId,
    /// PCI domain.
    PciDomainId,
    /// 32-bit registers per workgroup.
    MaxRegistersPerBlock,
    /// Largest block x dimension.
    MaxBlockDimX,
    /// Largest grid x dimension.
    MaxGridDimX,
    /// The `s_memtime` clock, kHz.
    ClockInstructionRateKhz,
    /// Whether the whole VRAM is CPU-visible.
    IsLargeBar,
    /// ASIC revision.
    AsicRevision,
    /// ROCm 5 only: the numeric gfx version (e.g. 908).
    GcnArch,
    /// ROCm 6 only: physical compute units.
    PhysicalComputeUnits,
    /// ROCm 6 only: the constant wall clock, kHz.
    WallClockKhz,
    /// ROCm 6 only: accelerator complex dies (8 on MI300X).
    XccCount,
}

/// What one device is, read once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    /// HIP ordinal.
    pub ordinal: i32,
    /// Marketing name (`hipDeviceGetName`).
    pub name: String,
    /// Full target, e.g. `gfx942:sramecc+:xnack-`.
    pub arch_name: String,
    /// Compute units.
    pub compute_units: i32,
    /// Wavefront size.
    pub warp_size: i32,
    /// LDS bytes per workgroup.
    pub lds_per_workgroup: i32,
    /// L2 bytes.
    pub l2_cache_bytes: i32,
    /// Peak engine clock, kHz.
    pub clock_khz: i32,
    /// Device memory, bytes (`hipDeviceTotalMem`).
    pub total_memory: usize,
}

/// What the loaded runtime lacks of [`sys::HipApi`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolReport {
    /// Symbols the safe layer needs; any here makes those calls fail with `SymbolMissing`.
    pub missing_required: Vec<&'static str>,
    /// Version-specific symbols this runtime does not have (normal for some versions).
    pub missing_optional: Vec<&'static str>,
}

impl Hip {
    /// Loads the runtime from `GEMM_HIP_LIBRARY`, or else the first of [`HIP_LIBRARY`]'s
    /// candidates that opens. No symbol is resolved yet.
    pub fn load() -> Result<Self, LoadError> {
        Self::from_lib(HIP_LIBRARY.open()?)
    }

    /// Loads the runtime from exactly `path`.
    pub fn load_from(path: impl AsRef<Path>) -> Result<Self, LoadError> {
        let path: OsString = path.as_ref().as_os_str().to_owned();
        Self::from_lib(HIP_LIBRARY.open_with_override(Some(path))?)
    }

    fn from_lib(lib: crate::loader::DynLib) -> Result<Self, LoadError> {
        Ok(Self { api: Arc::new(HipApi::new(lib)) })
    }

    /// The raw symbol table, for callers that need a call the safe layer lacks.
    pub fn api(&self) -> &HipApi {
        &self.api
    }

    /// The path the runtime was opened from.
    pub fn library_path(&self) -> &Path {
        self.api.library().path()
    }

    /// Resolves every symbol and reports the missing ones.
    pub fn symbol_report(&self) -> SymbolReport {
        let missing = self.api.missing_symbols();
        let (missing_optional, missing_required) = missing.into_iter().partition(|s| HipApi::OPTIONAL.contains(s));
        SymbolReport { missing_required, missing_optional }
    }

    fn check(&self, call: &'static str, code: sys::hipError_t) -> Result<()> {
        result::check(&self.api, call, code).map_err(Error::from)
    }

    /// `hipRuntimeGetVersion`.
    pub fn runtime_version(&self) -> Result<HipVersion> {
        let f = self.api.hipRuntimeGetVersion()?;
        let mut raw = 0;
        // SAFETY: `hipRuntimeGetVersion(int*)` writes one int to the valid pointer.
        self.check("hipRuntimeGetVersion", unsafe { f(&mut raw) })?;
        Ok(HipVersion::from_raw(raw))
    }

    /// The ABI generation: from the runtime version, or, where the runtime cannot say, from
    /// whether it exports `hipGetDevicePropertiesR0600` (which only ROCm 6+ has).
    pub fn abi(&self) -> HipAbi {
        match self.runtime_version() {
            Ok(v) => HipAbi::from_version(v),
            Err(_) if self.api.hipGetDevicePropertiesR0600().is_ok() => HipAbi::Rocm6,
            Err(_) => HipAbi::Rocm5,
        }
    }

    /// Number of HIP devices. A runtime that answers `hipErrorNoDevice` has zero devices;
    /// that is not an error. Any other failure is.
    pub fn device_count(&self) -> Result<usize> {
        let f = self.api.hipGetDeviceCount()?;
        let mut n: c_int = 0;
        // SAFETY: `hipGetDeviceCount(int*)` writes one int to the valid pointer.
        let code = unsafe { f(&mut n) };
        if code == sys::HIP_ERROR_NO_DEVICE {
            return Ok(0);
        }
        self.check("hipGetDeviceCount", code)?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Device `ordinal`, checked against [`Self::device_count`].
    pub fn device(&self, ordinal: usize) -> Result<Device> {
        let count = self.device_count()?;
        if ordinal >= count {
            return Err(Error::InvalidArgument(format!("HIP device {ordinal} does not exist ({count} present)")));
        }
        Ok(Device { hip: self.clone(), ordinal: ordinal as c_int })
    }

    /// Every device.
    pub fn devices(&self) -> Result<Vec<Device>> {
        (0..self.device_count()?).map(|i| self.device(i)).collect()
    }

    /// Where the device memory at `ptr` lives: the device it was allocated on and the byte range
    /// of its allocation (`hipPointerGetAttribute(HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL)` and
    /// `hipMemGetAddressRange`). An address that is not in a live device allocation is the
    /// runtime's error (`hipErrorInvalidValue`); nothing is read or written.
    pub fn pointer_info(&self, ptr: *const std::ffi::c_void) -> Result<PointerInfo> {
        let attr = self.api.hipPointerGetAttribute()?;
        let range = self.api.hipMemGetAddressRange()?;
        let mut device: c_int = -1;
        // SAFETY: `hipPointerGetAttribute` writes one `int` for DEVICE_ORDINAL into `data`,
        // which points at a live `c_int`; `ptr` is only looked up, never dereferenced.
        let code =
            unsafe { attr((&mut device as *mut c_int).cast(), sys::pointer_attribute::DEVICE_ORDINAL, ptr.cast_mut()) };
        self.check("hipPointerGetAttribute", code)?;
        let mut base: *mut std::ffi::c_void = std::ptr::null_mut();
        let mut size = 0usize;
        // SAFETY: writes one pointer and one size_t to live locals; `ptr` is only looked up.
        self.check("hipMemGetAddressRange", unsafe { range(&mut base, &mut size, ptr.cast_mut()) })?;
        Ok(PointerInfo { device, base: base as u64, size })
    }

    /// The device of a stream (`hipStreamGetDevice`); `None` when the runtime lacks the call.
    ///
    /// # Safety
    /// `stream` is a live stream handle (or NULL, the current device's null stream).
    pub unsafe fn stream_device(&self, stream: sys::hipStream_t) -> Option<Result<i32>> {
        let f = self.api.hipStreamGetDevice().ok()?;
        let mut device: c_int = -1;
        // SAFETY: writes one int; the handle is live (this function's contract).
        Some(self.check("hipStreamGetDevice", unsafe { f(stream, &mut device) }).map(|()| device))
    }

    /// `hipSetDevice`: makes `ordinal` current for this host thread.
    pub fn set_device(&self, ordinal: i32) -> Result<()> {
        let f = self.api.hipSetDevice()?;
        // SAFETY: `hipSetDevice(int)` takes a plain value; a bad ordinal is an error code.
        self.check("hipSetDevice", unsafe { f(ordinal) })
    }
}

/// What the runtime knows of a device pointer ([`Hip::pointer_info`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointerInfo {
    /// The device ordinal the allocation belongs to.
    pub device: i32,
    /// The allocation's first byte.
    pub base: u64,
    /// The allocation's size in bytes.
    pub size: usize,
}

impl PointerInfo {
    /// Bytes from `address` to the end of the allocation (0 if `address` is outside it).
    pub fn bytes_from(&self, address: u64) -> usize {
        let end = self.base.saturating_add(self.size as u64);
        if address < self.base || address > end {
            0
        } else {
            (end - address) as usize
        }
    }
}

/// One HIP device (an ordinal plus the runtime).
#[derive(Clone, Debug)]
pub struct Device {
    hip: Hip,
    ordinal: c_int,
}

impl Device {
    /// The HIP ordinal.
    pub fn ordinal(&self) -> i32 {
        self.ordinal
    }

    /// The runtime.
    pub fn hip(&self) -> &Hip {
        &self.hip
    }

    /// Makes this device current for the calling thread.
    pub fn set_current(&self) -> Result<()> {
        self.hip.set_device(self.ordinal)
    }

    /// `hipDeviceGetName`.
    pub fn name(&self) -> Result<String> {
        let f = self.hip.api.hipDeviceGetName()?;
        let mut buf = [0 as c_char; 256];
        // SAFETY: the buffer holds `len` = 256 chars and HIP writes at most `len` including the
        // terminating NUL (`hipDeviceGetName(char*, int len, hipDevice_t)`).
        self.hip.check("hipDeviceGetName", unsafe { f(buf.as_mut_ptr(), buf.len() as c_int, self.ordinal) })?;
        buf[buf.len() - 1] = 0;
        // SAFETY: the buffer is NUL-terminated (forced above) and lives through the call.
        Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
    }

    /// `hipDeviceGetAttribute` for `a`, with the enum value of the loaded runtime's generation.
    pub fn attribute(&self, a: DeviceAttribute) -> Result<i32> {
        let abi = self.hip.abi();
        let Some(value) = abi.attribute(a) else {
            return Err(Error::Unsupported(format!("{a:?} on a {abi:?} runtime")));
        };
        let f = self.hip.api.hipDeviceGetAttribute()?;
        let mut out: c_int = 0;
        // SAFETY: `hipDeviceGetAttribute(int*, hipDeviceAttribute_t, int)` writes one int to
        // the valid pointer; `value` is this runtime's enum value for the attribute.
        self.hip.check("hipDeviceGetAttribute", unsafe { f(&mut out, value, self.ordinal) })?;
        Ok(out)
    }

    /// Compute units.
    pub fn compute_units(&self) -> Result<i32> {
        self.attribute(DeviceAttribute::ComputeUnits)
    }

    /// `hipDeviceTotalMem`, bytes.
    pub fn total_memory(&self) -> Result<usize> {
        let f = self.hip.api.hipDeviceTotalMem()?;
        let mut bytes = 0usize;
        // SAFETY: `hipDeviceTotalMem(size_t*, hipDevice_t)` writes one size_t.
        self.hip.check("hipDeviceTotalMem", unsafe { f(&mut bytes, self.ordinal) })?;
        Ok(bytes)
    }

    /// `hipMemGetInfo` on this device: `(free, total)` bytes.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.set_current()?;
        let f = self.hip.api.hipMemGetInfo()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: `hipMemGetInfo(size_t*, size_t*)` writes two size_t values.
        self.hip.check("hipMemGetInfo", unsafe { f(&mut free, &mut total) })?;
        Ok((free, total))
    }

    /// The full target name, e.g. `gfx942:sramecc+:xnack-`: `gcnArchName` of the
    /// `hipDeviceProp_t` layout of the loaded runtime.
    pub fn arch_name(&self) -> Result<String> {
        let abi = self.hip.abi();
        let api = &self.hip.api;
        // Prefer the call whose layout we know for this generation.
        let (call, f, layout) = match abi {
            HipAbi::Rocm6 => match api.hipGetDevicePropertiesR0600() {
                Ok(f) => ("hipGetDevicePropertiesR0600", f, HipAbi::Rocm6),
                Err(_) => match api.hipGetDevicePropertiesR0000() {
                    Ok(f) => ("hipGetDevicePropertiesR0000", f, HipAbi::Rocm5),
                    Err(e) => return Err(e.into()),
                },
            },
            HipAbi::Rocm5 => match api.hipGetDeviceProperties() {
                Ok(f) => ("hipGetDeviceProperties", f, HipAbi::Rocm5),
                Err(_) => ("hipGetDevicePropertiesR0000", api.hipGetDevicePropertiesR0000()?, HipAbi::Rocm5),
            },
        };
        let mut props = Box::new(sys::DevicePropBuffer([0; sys::DEVICE_PROP_BUFFER_SIZE]));
        // SAFETY: the buffer is 4096 bytes, 8-byte aligned and zeroed: larger than both
        // `hipDeviceProp_tR0000` (792) and `hipDeviceProp_tR0600` (1472), so the runtime
        // writes inside it whichever it fills.
        self.hip.check(call, unsafe { f(props.0.as_mut_ptr().cast(), self.ordinal) })?;
        arch_from_props(&props.0, layout).ok_or_else(|| {
            Error::Unsupported(format!(
                "{call} returned no gfx target at offset {} ({abi:?} runtime)",
                layout.gcn_arch_name_offset()
            ))
        })
    }

    /// The base target without features, e.g. `gfx942`.
    pub fn gfx_target(&self) -> Result<String> {
        let full = self.arch_name()?;
        Ok(full.split(':').next().unwrap_or_default().to_owned())
    }

    /// Name, arch and the numbers the dispatcher plans with.
    pub fn info(&self) -> Result<DeviceInfo> {
        Ok(DeviceInfo {
            ordinal: self.ordinal,
            name: self.name()?,
            arch_name: self.arch_name()?,
            compute_units: self.compute_units()?,
            warp_size: self.attribute(DeviceAttribute::WarpSize)?,
            lds_per_workgroup: self.attribute(DeviceAttribute::LdsPerWorkgroup)?,
            l2_cache_bytes: self.attribute(DeviceAttribute::L2CacheBytes)?,
            clock_khz: self.attribute(DeviceAttribute::ClockKhz)?,
            total_memory: self.total_memory()?,
        })
    }

    /// `hipDeviceSynchronize` on this device.
    pub fn synchronize(&self) -> Result<()> {
        self.set_current()?;
        let f = self.hip.api.hipDeviceSynchronize()?;
        // SAFETY: no arguments.
        self.hip.check("hipDeviceSynchronize", unsafe { f() })
    }

    /// Allocates `bytes` of device memory (uninitialised).
    pub fn alloc(&self, bytes: usize) -> Result<DeviceBuffer> {
        DeviceBuffer::new(self, bytes)
    }

    /// Allocates `bytes` of page-locked host memory (zeroed).
    pub fn alloc_pinned(&self, bytes: usize) -> Result<PinnedHostBuffer> {
        PinnedHostBuffer::new(self, bytes)
    }

    /// A non-blocking stream on this device.
    pub fn create_stream(&self) -> Result<Stream> {
        Stream::new(self)
    }

    /// A caller's `hipStream_t` on this device, borrowed: dropping the returned [`Stream`]
    /// (and its clones) does not destroy it. NULL is the device's null stream.
    ///
    /// # Safety
    /// `raw` must be NULL or a live stream of this device (created while it was current) that
    /// stays alive as long as the returned value or a clone of it does.
    pub unsafe fn borrow_stream(&self, raw: sys::hipStream_t) -> Stream {
        Stream::borrowed(self, raw)
    }

    /// An event on this device; `timing` enables [`Event::elapsed_ms`].
    pub fn create_event(&self, timing: bool) -> Result<Event> {
        Event::new(self, timing)
    }

    /// Loads a code object (AMDHSA ELF bytes) onto this device.
    pub fn load_module(&self, code_object: &[u8]) -> Result<Module> {
        Module::load(self, code_object)
    }
}

/// Reads `gcnArchName` out of a filled properties buffer of the given layout; `None` unless it
/// is a NUL-terminated UTF-8 string starting with `gfx`.
pub fn arch_from_props(props: &[u8], layout: HipAbi) -> Option<String> {
    let start = layout.gcn_arch_name_offset();
    let field = props.get(start..start + sys::DEVICE_PROP_STRING_LEN)?;
    let end = field.iter().position(|&b| b == 0)?;
    let s = std::str::from_utf8(&field[..end]).ok()?;
    s.starts_with("gfx").then(|| s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_decode_and_choose_the_abi() {
        // ROCm 5.2's hip_version.h: 5 * 10^7 + 2 * 10^5 + 21153.
        let v = HipVersion::from_raw(50_221_153);
        assert_eq!((v.major, v.minor, v.patch), (5, 2, 21153));
        assert_eq!(HipAbi::from_version(v), HipAbi::Rocm5);
        let v6 = HipVersion::from_raw(60_342_134);
        assert_eq!((v6.major, v6.minor, v6.patch), (6, 3, 42134));
        assert_eq!(HipAbi::from_version(v6), HipAbi::Rocm6);
        assert_eq!(v6.to_string(), "6.3.42134");
        assert_eq!(HipAbi::from_version(HipVersion::from_raw(70_000_000)), HipAbi::Rocm6);
    }

    #[test]
    fn attributes_per_generation() {
        use DeviceAttribute as A;
        for abi in [HipAbi::Rocm5, HipAbi::Rocm6] {
            assert_eq!(abi.attribute(A::ComputeUnits), Some(63));
            assert_eq!(abi.attribute(A::WarpSize), Some(87));
            assert_eq!(abi.attribute(A::LdsPerWorkgroup), Some(74));
            assert_eq!(abi.attribute(A::LdsPerComputeUnit), Some(10002));
            assert_eq!(abi.attribute(A::MaxThreadsPerBlock), Some(56));
        }
        assert_eq!(HipAbi::Rocm5.attribute(A::GcnArch), Some(10003));
        assert_eq!(HipAbi::Rocm6.attribute(A::GcnArch), None);
        assert_eq!(HipAbi::Rocm5.attribute(A::XccCount), None);
        assert_eq!(HipAbi::Rocm6.attribute(A::XccCount), Some(10018));
        assert_eq!(HipAbi::Rocm6.attribute(A::PhysicalComputeUnits), Some(10015));
    }

    #[test]
    fn arch_is_read_at_the_layout_offset() {
        let mut props = vec![0u8; sys::DEVICE_PROP_BUFFER_SIZE];
        props[..6].copy_from_slice(b"MI300X");
        let arch = b"gfx942:sramecc+:xnack-";
        let o6 = sys::DEVICE_PROP_R0600_GCN_ARCH_NAME;
        props[o6..o6 + arch.len()].copy_from_slice(arch);
        assert_eq!(arch_from_props(&props, HipAbi::Rocm6).as_deref(), Some("gfx942:sramecc+:xnack-"));
        // Read with the other layout there is nothing that looks like a target.
        assert_eq!(arch_from_props(&props, HipAbi::Rocm5), None);
        let o5 = sys::DEVICE_PROP_R0000_GCN_ARCH_NAME;
        props[o5..o5 + 6].copy_from_slice(b"gfx950");
        assert_eq!(arch_from_props(&props, HipAbi::Rocm5).as_deref(), Some("gfx950"));
        // Unterminated or too short buffers are refused, not read past.
        assert_eq!(arch_from_props(&[b'g'; 2000], HipAbi::Rocm5), None);
        assert_eq!(arch_from_props(&props[..500], HipAbi::Rocm5), None);
    }
}
