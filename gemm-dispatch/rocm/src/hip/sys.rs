//! Raw HIP runtime symbols, as declared in `hip/hip_runtime_api.h`.
//!
//! Types, constants and prototypes follow the HIP headers of ROCm 5.2
//! (`hip_runtime_api.h`, `hip_version.h`, checked by compiling against the Debian
//! `libamdhip64-dev` 5.2.3 headers) and ROCm 6.x (`hip_runtime_api.h`, `hip_deprecated.h`).
//! C enums are passed as `c_int`, never as Rust enums, so that a value the runtime returns
//! that we do not know cannot be undefined behaviour.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_float, c_int, c_uint, c_void};

use crate::loader::symbol_table;

/// `hipError_t` (a C enum: `int`).
pub type hipError_t = c_int;
/// `hipDevice_t` (`int`).
pub type hipDevice_t = c_int;
/// `hipDeviceAttribute_t` (a C enum: `int`); values in [`attr`].
pub type hipDeviceAttribute_t = c_int;
/// `hipMemcpyKind` (a C enum: `int`).
pub type hipMemcpyKind = c_int;

macro_rules! opaque {
    ($($(#[$m:meta])* $name:ident),*) => {$(
        $(#[$m])*
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
            _not_send_sync: core::marker::PhantomData<*mut u8>,
        }
    )*};
}
opaque!(
    /// `struct ihipStream_t`, the target of `hipStream_t`.
    ihipStream_t,
    /// `struct ihipEvent_t`, the target of `hipEvent_t`.
    ihipEvent_t,
    /// `struct ihipModule_t`, the target of `hipModule_t`.
    ihipModule_t,
    /// `struct ihipModuleSymbol_t`, the target of `hipFunction_t`.
    ihipModuleSymbol_t
);

/// `hipStream_t`; null is the default (legacy) stream.
pub type hipStream_t = *mut ihipStream_t;
/// `hipEvent_t`.
pub type hipEvent_t = *mut ihipEvent_t;
/// `hipModule_t`.
pub type hipModule_t = *mut ihipModule_t;
/// `hipFunction_t`.
pub type hipFunction_t = *mut ihipModuleSymbol_t;

/// `hipPointer_attribute` values (`HIPpointer_attribute_enum` in `hip_runtime_api.h`, the same
/// numbers as CUDA's `CUpointer_attribute`).
pub mod pointer_attribute {
    use std::ffi::c_int;
    /// `HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL`: the device the memory was allocated on (`int`).
    pub const DEVICE_ORDINAL: c_int = 9;
    /// `HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR`: the allocation's first address (`void*`).
    pub const RANGE_START_ADDR: c_int = 11;
    /// `HIP_POINTER_ATTRIBUTE_RANGE_SIZE`: the allocation's size in bytes (`size_t`).
    pub const RANGE_SIZE: c_int = 12;
}

/// `hipMemcpyKind` values (`hipMemcpyHostToHost` = 0 ... `hipMemcpyDefault` = 4).
pub mod memcpy_kind {
    use std::ffi::c_int;
    /// `hipMemcpyHostToDevice`.
    pub const HOST_TO_DEVICE: c_int = 1;
    /// `hipMemcpyDeviceToHost`.
    pub const DEVICE_TO_HOST: c_int = 2;
    /// `hipMemcpyDeviceToDevice`.
    pub const DEVICE_TO_DEVICE: c_int = 3;
}

/// `hipHostMallocDefault`.
pub const HIP_HOST_MALLOC_DEFAULT: c_uint = 0x0;
/// `hipStreamNonBlocking`: the stream does not synchronise with the null stream.
pub const HIP_STREAM_NON_BLOCKING: c_uint = 0x1;
/// `hipEventDefault`.
pub const HIP_EVENT_DEFAULT: c_uint = 0x0;
/// `hipEventDisableTiming`.
pub const HIP_EVENT_DISABLE_TIMING: c_uint = 0x2;

/// `HIP_LAUNCH_PARAM_BUFFER_POINTER`, `((void*)0x01)`: the next `extra` entry points at the
/// packed kernel-argument buffer.
pub const HIP_LAUNCH_PARAM_BUFFER_POINTER: *mut c_void = std::ptr::without_provenance_mut(0x01);
/// `HIP_LAUNCH_PARAM_BUFFER_SIZE`, `((void*)0x02)`: the next `extra` entry points at a
/// `size_t` holding the buffer's size in bytes.
pub const HIP_LAUNCH_PARAM_BUFFER_SIZE: *mut c_void = std::ptr::without_provenance_mut(0x02);
/// `HIP_LAUNCH_PARAM_END`, `((void*)0x03)`: ends the `extra` array.
pub const HIP_LAUNCH_PARAM_END: *mut c_void = std::ptr::without_provenance_mut(0x03);

/// Size of `hipDeviceProp_t` up to ROCm 5.7, which ROCm 6 keeps as `hipDeviceProp_tR0000`
/// (`sizeof` = 792 with the 5.2 headers).
pub const DEVICE_PROP_R0000_SIZE: usize = 792;
/// `offsetof(hipDeviceProp_tR0000, gcnArchName)` (396 with the 5.2 headers: after `gcnArch`).
pub const DEVICE_PROP_R0000_GCN_ARCH_NAME: usize = 396;
/// Size of `hipDeviceProp_tR0600`, the `hipDeviceProp_t` of ROCm 6.0 and later (1472).
pub const DEVICE_PROP_R0600_SIZE: usize = 1472;
/// `offsetof(hipDeviceProp_tR0600, gcnArchName)` (1160: after `reserved[63]` and
/// `hipReserved[32]`).
pub const DEVICE_PROP_R0600_GCN_ARCH_NAME: usize = 1160;
/// Length of the `name` and `gcnArchName` arrays in both layouts.
pub const DEVICE_PROP_STRING_LEN: usize = 256;
/// The properties buffer we hand to `hipGetDeviceProperties*`: larger than either layout, so
/// that even a runtime whose layout we guessed wrong cannot write past it.
pub const DEVICE_PROP_BUFFER_SIZE: usize = 4096;

/// The properties buffer, 8-byte aligned like the C structs (they hold `size_t`s and pointers).
#[repr(C, align(8))]
pub struct DevicePropBuffer(pub [u8; DEVICE_PROP_BUFFER_SIZE]);

/// `hipDeviceAttribute_t` values. The CUDA-compatible block is sorted by name and starts at 0;
/// AMD's own attributes start at `hipDeviceAttributeAmdSpecificBegin` = 10000. The values below
/// are identical in the ROCm 5.2 and ROCm 6.x headers; what changed in 6.0 is that five
/// ROCm-5 entries became `hipDeviceAttributeUnused1..5` (`Name` 64, `Uuid` 86, `Arch` 10001,
/// `GcnArch` 10003, `GcnArchName` 10004) and new ones were appended (88.., 10013..). Those
/// version-specific ones are chosen by [`crate::hip::HipAbi`].
pub mod attr {
    use std::ffi::c_int;
    /// `hipDeviceAttributeClockRate`: peak clock in kHz.
    pub const CLOCK_RATE: c_int = 5;
    /// `hipDeviceAttributeL2CacheSize`: bytes.
    pub const L2_CACHE_SIZE: c_int = 19;
    /// `hipDeviceAttributeComputeCapabilityMajor`.
    pub const COMPUTE_CAPABILITY_MAJOR: c_int = 23;
    /// `hipDeviceAttributeMaxBlockDimX`.
    pub const MAX_BLOCK_DIM_X: c_int = 26;
    /// `hipDeviceAttributeMaxGridDimX`.
    pub const MAX_GRID_DIM_X: c_int = 29;
    /// `hipDeviceAttributeMaxThreadsPerBlock`.
    pub const MAX_THREADS_PER_BLOCK: c_int = 56;
    /// `hipDeviceAttributeMemoryBusWidth`: bits.
    pub const MEMORY_BUS_WIDTH: c_int = 59;
    /// `hipDeviceAttributeMemoryClockRate`: kHz.
    pub const MEMORY_CLOCK_RATE: c_int = 60;
    /// `hipDeviceAttributeComputeCapabilityMinor`.
    pub const COMPUTE_CAPABILITY_MINOR: c_int = 61;
    /// `hipDeviceAttributeMultiprocessorCount`: compute units.
    pub const MULTIPROCESSOR_COUNT: c_int = 63;
    /// `hipDeviceAttributePciBusId`.
    pub const PCI_BUS_ID: c_int = 67;
    /// `hipDeviceAttributePciDeviceId`.
    pub const PCI_DEVICE_ID: c_int = 68;
    /// `hipDeviceAttributePciDomainID`.
    pub const PCI_DOMAIN_ID: c_int = 69;
    /// `hipDeviceAttributeMaxRegistersPerBlock`.
    pub const MAX_REGISTERS_PER_BLOCK: c_int = 71;
    /// `hipDeviceAttributeMaxSharedMemoryPerBlock`: LDS bytes a workgroup may use.
    pub const MAX_SHARED_MEMORY_PER_BLOCK: c_int = 74;
    /// `hipDeviceAttributeWarpSize`: wavefront size.
    pub const WARP_SIZE: c_int = 87;
    /// `hipDeviceAttributeClockInstructionRate` (AMD, 10000): `s_memtime` clock, kHz.
    pub const CLOCK_INSTRUCTION_RATE: c_int = 10000;
    /// `hipDeviceAttributeMaxSharedMemoryPerMultiprocessor` (AMD, 10002): LDS bytes per CU.
    pub const MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: c_int = 10002;
    /// ROCm 5 only: `hipDeviceAttributeGcnArch` (10003; `hipDeviceAttributeUnused4` in 6.x).
    pub const ROCM5_GCN_ARCH: c_int = 10003;
    /// `hipDeviceAttributeIsLargeBar` (AMD, 10011).
    pub const IS_LARGE_BAR: c_int = 10011;
    /// `hipDeviceAttributeAsicRevision` (AMD, 10012).
    pub const ASIC_REVISION: c_int = 10012;
    /// ROCm 6 only: `hipDeviceAttributePhysicalMultiProcessorCount` (10015).
    pub const ROCM6_PHYSICAL_MULTIPROCESSOR_COUNT: c_int = 10015;
    /// ROCm 6 only: `hipDeviceAttributeWallClockRate` (10017), kHz.
    pub const ROCM6_WALL_CLOCK_RATE: c_int = 10017;
    /// ROCm 6 only: `hipDeviceAttributeNumberOfXccs` (10018): dies (XCDs) of an MI300.
    pub const ROCM6_NUMBER_OF_XCCS: c_int = 10018;
}

/// `hipError_t` values from `hip_runtime_api.h` (ROCm 5.2; unchanged in 6.x) with the name
/// `hipGetErrorName` gives each. Where the header has aliases (2, 3, 205, 400) the name is
/// the one the runtime reports.
pub const HIP_ERROR_NAMES: &[(hipError_t, &str)] = &[
    (0, "hipSuccess"),
    (1, "hipErrorInvalidValue"),
    (2, "hipErrorOutOfMemory"),
    (3, "hipErrorNotInitialized"),
    (4, "hipErrorDeinitialized"),
    (5, "hipErrorProfilerDisabled"),
    (6, "hipErrorProfilerNotInitialized"),
    (7, "hipErrorProfilerAlreadyStarted"),
    (8, "hipErrorProfilerAlreadyStopped"),
    (9, "hipErrorInvalidConfiguration"),
    (12, "hipErrorInvalidPitchValue"),
    (13, "hipErrorInvalidSymbol"),
    (17, "hipErrorInvalidDevicePointer"),
    (21, "hipErrorInvalidMemcpyDirection"),
    (35, "hipErrorInsufficientDriver"),
    (52, "hipErrorMissingConfiguration"),
    (53, "hipErrorPriorLaunchFailure"),
    (98, "hipErrorInvalidDeviceFunction"),
    (100, "hipErrorNoDevice"),
    (101, "hipErrorInvalidDevice"),
    (200, "hipErrorInvalidImage"),
    (201, "hipErrorInvalidContext"),
    (202, "hipErrorContextAlreadyCurrent"),
    (205, "hipErrorMapFailed"),
    (206, "hipErrorUnmapFailed"),
    (207, "hipErrorArrayIsMapped"),
    (208, "hipErrorAlreadyMapped"),
    (209, "hipErrorNoBinaryForGpu"),
    (210, "hipErrorAlreadyAcquired"),
    (211, "hipErrorNotMapped"),
    (212, "hipErrorNotMappedAsArray"),
    (213, "hipErrorNotMappedAsPointer"),
    (214, "hipErrorECCNotCorrectable"),
    (215, "hipErrorUnsupportedLimit"),
    (216, "hipErrorContextAlreadyInUse"),
    (217, "hipErrorPeerAccessUnsupported"),
    (218, "hipErrorInvalidKernelFile"),
    (219, "hipErrorInvalidGraphicsContext"),
    (300, "hipErrorInvalidSource"),
    (301, "hipErrorFileNotFound"),
    (302, "hipErrorSharedObjectSymbolNotFound"),
    (303, "hipErrorSharedObjectInitFailed"),
    (304, "hipErrorOperatingSystem"),
    (400, "hipErrorInvalidHandle"),
    (401, "hipErrorIllegalState"),
    (500, "hipErrorNotFound"),
    (600, "hipErrorNotReady"),
    (700, "hipErrorIllegalAddress"),
    (701, "hipErrorLaunchOutOfResources"),
    (702, "hipErrorLaunchTimeOut"),
    (704, "hipErrorPeerAccessAlreadyEnabled"),
    (705, "hipErrorPeerAccessNotEnabled"),
    (708, "hipErrorSetOnActiveProcess"),
    (709, "hipErrorContextIsDestroyed"),
    (710, "hipErrorAssert"),
    (712, "hipErrorHostMemoryAlreadyRegistered"),
    (713, "hipErrorHostMemoryNotRegistered"),
    (719, "hipErrorLaunchFailure"),
    (720, "hipErrorCooperativeLaunchTooLarge"),
    (801, "hipErrorNotSupported"),
    (900, "hipErrorStreamCaptureUnsupported"),
    (901, "hipErrorStreamCaptureInvalidated"),
    (902, "hipErrorStreamCaptureMerge"),
    (903, "hipErrorStreamCaptureUnmatched"),
    (904, "hipErrorStreamCaptureUnjoined"),
    (905, "hipErrorStreamCaptureIsolation"),
    (906, "hipErrorStreamCaptureImplicit"),
    (907, "hipErrorCapturedEvent"),
    (908, "hipErrorStreamCaptureWrongThread"),
    (910, "hipErrorGraphExecUpdateFailure"),
    (999, "hipErrorUnknown"),
    (1052, "hipErrorRuntimeMemory"),
    (1053, "hipErrorRuntimeOther"),
];

/// `hipSuccess`.
pub const HIP_SUCCESS: hipError_t = 0;
/// `hipErrorInvalidValue`.
pub const HIP_ERROR_INVALID_VALUE: hipError_t = 1;
/// `hipErrorNoDevice`: `hipGetDeviceCount` found no device.
pub const HIP_ERROR_NO_DEVICE: hipError_t = 100;
/// `hipErrorInvalidDevice`.
pub const HIP_ERROR_INVALID_DEVICE: hipError_t = 101;
/// `hipErrorNotReady`: a stream or event query found work still pending (not a failure).
pub const HIP_ERROR_NOT_READY: hipError_t = 600;

/// The header name of a `hipError_t`, without asking the runtime.
pub fn error_name(code: hipError_t) -> Option<&'static str> {
    HIP_ERROR_NAMES.binary_search_by_key(&code, |&(c, _)| c).ok().map(|i| HIP_ERROR_NAMES[i].1)
}

symbol_table! {
    /// The HIP runtime functions this crate uses, resolved on first use. Prototypes are those
    /// of `hip_runtime_api.h` (ROCm 5.2 and 6.x agree on every one of them).
    pub struct HipApi {
        /// `const char* hipGetErrorName(hipError_t)`.
        hipGetErrorName: unsafe extern "C" fn(hipError_t) -> *const c_char,
        /// `const char* hipGetErrorString(hipError_t)`.
        hipGetErrorString: unsafe extern "C" fn(hipError_t) -> *const c_char,
        /// `hipError_t hipRuntimeGetVersion(int*)`: `HIP_VERSION` = major*10^7 + minor*10^5 + patch.
        hipRuntimeGetVersion: unsafe extern "C" fn(*mut c_int) -> hipError_t,
        /// `hipError_t hipDriverGetVersion(int*)`.
        hipDriverGetVersion: unsafe extern "C" fn(*mut c_int) -> hipError_t,
        /// `hipError_t hipGetDeviceCount(int*)`.
        hipGetDeviceCount: unsafe extern "C" fn(*mut c_int) -> hipError_t,
        /// `hipError_t hipSetDevice(int)`.
        hipSetDevice: unsafe extern "C" fn(c_int) -> hipError_t,
        /// `hipError_t hipGetDevice(int*)`.
        hipGetDevice: unsafe extern "C" fn(*mut c_int) -> hipError_t,
        /// `hipError_t hipDeviceGetName(char* name, int len, hipDevice_t)`.
        hipDeviceGetName: unsafe extern "C" fn(*mut c_char, c_int, hipDevice_t) -> hipError_t,
        /// `hipError_t hipDeviceGetAttribute(int*, hipDeviceAttribute_t, int)`.
        hipDeviceGetAttribute: unsafe extern "C" fn(*mut c_int, hipDeviceAttribute_t, c_int) -> hipError_t,
        /// `hipError_t hipDeviceTotalMem(size_t*, hipDevice_t)`.
        hipDeviceTotalMem: unsafe extern "C" fn(*mut usize, hipDevice_t) -> hipError_t,
        /// `hipError_t hipMemGetInfo(size_t* free, size_t* total)` (current device).
        hipMemGetInfo: unsafe extern "C" fn(*mut usize, *mut usize) -> hipError_t,
        /// ROCm 5: `hipError_t hipGetDeviceProperties(hipDeviceProp_t*, int)` (R0000 layout).
        /// In ROCm 6 the header maps the name to `hipGetDevicePropertiesR0600`.
        hipGetDeviceProperties: unsafe extern "C" fn(*mut c_void, c_int) -> hipError_t,
        /// ROCm 6 (`hip_deprecated.h`): the R0000 layout under its versioned name. Optional.
        hipGetDevicePropertiesR0000: unsafe extern "C" fn(*mut c_void, c_int) -> hipError_t,
        /// ROCm 6: `hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600*, int)`. Optional.
        hipGetDevicePropertiesR0600: unsafe extern "C" fn(*mut c_void, c_int) -> hipError_t,
        /// `hipError_t hipDeviceSynchronize(void)`.
        hipDeviceSynchronize: unsafe extern "C" fn() -> hipError_t,
        /// `hipError_t hipMalloc(void**, size_t)`.
        hipMalloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> hipError_t,
        /// `hipError_t hipFree(void*)`: implicitly synchronises the device.
        hipFree: unsafe extern "C" fn(*mut c_void) -> hipError_t,
        /// `hipError_t hipHostMalloc(void**, size_t, unsigned int flags)`.
        hipHostMalloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> hipError_t,
        /// `hipError_t hipHostFree(void*)`: implicitly synchronises the device.
        hipHostFree: unsafe extern "C" fn(*mut c_void) -> hipError_t,
        /// `hipError_t hipMemcpy(void*, const void*, size_t, hipMemcpyKind)`.
        hipMemcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, hipMemcpyKind) -> hipError_t,
        /// `hipError_t hipMemcpyAsync(void*, const void*, size_t, hipMemcpyKind, hipStream_t)`.
        hipMemcpyAsync: unsafe extern "C" fn(*mut c_void, *const c_void, usize, hipMemcpyKind, hipStream_t) -> hipError_t,
        /// `hipError_t hipMemset(void*, int, size_t)`.
        hipMemset: unsafe extern "C" fn(*mut c_void, c_int, usize) -> hipError_t,
        /// `hipError_t hipMemsetAsync(void*, int, size_t, hipStream_t)`.
        hipMemsetAsync: unsafe extern "C" fn(*mut c_void, c_int, usize, hipStream_t) -> hipError_t,
        /// `hipError_t hipStreamCreateWithFlags(hipStream_t*, unsigned int)`.
        hipStreamCreateWithFlags: unsafe extern "C" fn(*mut hipStream_t, c_uint) -> hipError_t,
        /// `hipError_t hipStreamDestroy(hipStream_t)`.
        hipStreamDestroy: unsafe extern "C" fn(hipStream_t) -> hipError_t,
        /// `hipError_t hipStreamSynchronize(hipStream_t)`.
        hipStreamSynchronize: unsafe extern "C" fn(hipStream_t) -> hipError_t,
        /// `hipError_t hipStreamQuery(hipStream_t)`: `hipErrorNotReady` while work is pending.
        hipStreamQuery: unsafe extern "C" fn(hipStream_t) -> hipError_t,
        /// `hipError_t hipStreamWaitEvent(hipStream_t, hipEvent_t, unsigned int flags)`.
        hipStreamWaitEvent: unsafe extern "C" fn(hipStream_t, hipEvent_t, c_uint) -> hipError_t,
        /// `hipError_t hipEventCreateWithFlags(hipEvent_t*, unsigned)`.
        hipEventCreateWithFlags: unsafe extern "C" fn(*mut hipEvent_t, c_uint) -> hipError_t,
        /// `hipError_t hipEventRecord(hipEvent_t, hipStream_t)`.
        hipEventRecord: unsafe extern "C" fn(hipEvent_t, hipStream_t) -> hipError_t,
        /// `hipError_t hipEventSynchronize(hipEvent_t)`.
        hipEventSynchronize: unsafe extern "C" fn(hipEvent_t) -> hipError_t,
        /// `hipError_t hipEventQuery(hipEvent_t)`.
        hipEventQuery: unsafe extern "C" fn(hipEvent_t) -> hipError_t,
        /// `hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop)`.
        hipEventElapsedTime: unsafe extern "C" fn(*mut c_float, hipEvent_t, hipEvent_t) -> hipError_t,
        /// `hipError_t hipEventDestroy(hipEvent_t)`.
        hipEventDestroy: unsafe extern "C" fn(hipEvent_t) -> hipError_t,
        /// `hipError_t hipModuleLoadData(hipModule_t*, const void* image)`.
        hipModuleLoadData: unsafe extern "C" fn(*mut hipModule_t, *const c_void) -> hipError_t,
        /// `hipError_t hipModuleGetFunction(hipFunction_t*, hipModule_t, const char*)`.
        hipModuleGetFunction: unsafe extern "C" fn(*mut hipFunction_t, hipModule_t, *const c_char) -> hipError_t,
        /// `hipError_t hipModuleUnload(hipModule_t)`.
        hipModuleUnload: unsafe extern "C" fn(hipModule_t) -> hipError_t,
        /// `hipError_t hipModuleLaunchKernel(hipFunction_t, unsigned gridDimX, gridDimY,
        /// gridDimZ, blockDimX, blockDimY, blockDimZ, unsigned sharedMemBytes, hipStream_t,
        /// void** kernelParams, void** extra)`.
        hipModuleLaunchKernel: unsafe extern "C" fn(
            hipFunction_t, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
            hipStream_t, *mut *mut c_void, *mut *mut c_void,
        ) -> hipError_t,
        /// `hipError_t hipPointerGetAttribute(void* data, hipPointer_attribute attribute,
        /// hipDeviceptr_t ptr)`: one attribute of the allocation holding `ptr` (values in
        /// [`pointer_attribute`]). Optional: only the device-pointer entries need it.
        hipPointerGetAttribute: unsafe extern "C" fn(*mut c_void, c_int, *mut c_void) -> hipError_t,
        /// `hipError_t hipMemGetAddressRange(hipDeviceptr_t* pbase, size_t* psize,
        /// hipDeviceptr_t dptr)`: base and size of the allocation holding `dptr`. Optional.
        hipMemGetAddressRange: unsafe extern "C" fn(*mut *mut c_void, *mut usize, *mut c_void) -> hipError_t,
        /// `hipError_t hipStreamGetDevice(hipStream_t, hipDevice_t*)`: the device of a stream
        /// (ROCm 5.4+). Optional.
        hipStreamGetDevice: unsafe extern "C" fn(hipStream_t, *mut hipDevice_t) -> hipError_t,
    }
}

impl HipApi {
    /// Symbols a runtime may lack without the binding failing: the versioned property calls
    /// exist only in some ROCm versions, and one of the three is enough.
    pub const OPTIONAL: &'static [&'static str] = &[
        "hipGetDeviceProperties",
        "hipGetDevicePropertiesR0000",
        "hipGetDevicePropertiesR0600",
        "hipPointerGetAttribute",
        "hipMemGetAddressRange",
        "hipStreamGetDevice",
    ];

    /// The symbols this runtime lacks that are not [`Self::OPTIONAL`].
    pub fn missing_required(&self) -> Vec<&'static str> {
        self.missing_symbols().into_iter().filter(|s| !Self::OPTIONAL.contains(s)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_table_is_sorted_unique_and_named() {
        for w in HIP_ERROR_NAMES.windows(2) {
            assert!(w[0].0 < w[1].0, "{:?} then {:?}", w[0], w[1]);
        }
        for &(code, name) in HIP_ERROR_NAMES {
            assert!(name == "hipSuccess" || name.starts_with("hipError"), "{code} {name}");
            assert_eq!(error_name(code), Some(name));
        }
        assert_eq!(error_name(HIP_ERROR_NO_DEVICE), Some("hipErrorNoDevice"));
        assert_eq!(error_name(HIP_ERROR_NOT_READY), Some("hipErrorNotReady"));
        assert_eq!(error_name(HIP_ERROR_INVALID_VALUE), Some("hipErrorInvalidValue"));
        assert_eq!(error_name(HIP_ERROR_INVALID_DEVICE), Some("hipErrorInvalidDevice"));
        assert_eq!(error_name(11), None);
        assert_eq!(error_name(-1), None);
    }

    #[test]
    fn symbol_table_lists_every_symbol_once() {
        let syms = HipApi::SYMBOLS;
        let mut sorted = syms.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), syms.len(), "duplicate symbol");
        for s in syms {
            assert!(s.starts_with("hip"), "{s}");
            assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()), "{s}");
        }
        for o in HipApi::OPTIONAL {
            assert!(syms.contains(o), "optional {o} is not in the table");
        }
        // Every call the safe layer makes is in the table.
        for needed in [
            "hipGetDeviceCount",
            "hipDeviceGetName",
            "hipDeviceGetAttribute",
            "hipDeviceTotalMem",
            "hipMalloc",
            "hipFree",
            "hipHostMalloc",
            "hipHostFree",
            "hipMemcpy",
            "hipMemcpyAsync",
            "hipStreamCreateWithFlags",
            "hipEventElapsedTime",
            "hipModuleLoadData",
            "hipModuleGetFunction",
            "hipModuleUnload",
            "hipModuleLaunchKernel",
            "hipRuntimeGetVersion",
            "hipSetDevice",
        ] {
            assert!(syms.contains(&needed), "{needed}");
        }
    }

    #[test]
    fn launch_param_markers_match_the_header() {
        assert_eq!(HIP_LAUNCH_PARAM_BUFFER_POINTER as usize, 1);
        assert_eq!(HIP_LAUNCH_PARAM_BUFFER_SIZE as usize, 2);
        assert_eq!(HIP_LAUNCH_PARAM_END as usize, 3);
    }

    #[test]
    fn property_layouts_fit_the_buffer() {
        const _: () = assert!(DEVICE_PROP_R0000_GCN_ARCH_NAME + DEVICE_PROP_STRING_LEN <= DEVICE_PROP_R0000_SIZE);
        const _: () = assert!(DEVICE_PROP_R0600_GCN_ARCH_NAME + DEVICE_PROP_STRING_LEN <= DEVICE_PROP_R0600_SIZE);
        const _: () = assert!(DEVICE_PROP_R0600_SIZE <= DEVICE_PROP_BUFFER_SIZE);
        assert_eq!(std::mem::align_of::<DevicePropBuffer>(), 8);
        assert_eq!(std::mem::size_of::<DevicePropBuffer>(), DEVICE_PROP_BUFFER_SIZE);
    }
}
