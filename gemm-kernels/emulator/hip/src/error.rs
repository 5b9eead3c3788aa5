//! Typed errors of the emulated runtime and their C codes.
//!
//! Codes are those of `hip_runtime_api.h` (`hipError_t`, unchanged from ROCm 5.2 to 6.x) and
//! `nccl.h` (`ncclResult_t`). Inside the crate every failure is a [`HipError`] or
//! [`NcclError`]; the C edge turns it into its number.

use std::ffi::CStr;

/// A `hipError_t` other than `hipSuccess`, with the emulator's explanation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HipError {
    /// `hipErrorInvalidValue` (1).
    #[error("invalid value: {0}")]
    InvalidValue(String),
    /// `hipErrorOutOfMemory` (2).
    #[error("out of memory: {0}")]
    OutOfMemory(String),
    /// `hipErrorInvalidMemcpyDirection` (21).
    #[error("invalid memcpy direction: {0}")]
    InvalidMemcpyDirection(String),
    /// `hipErrorNoDevice` (100).
    #[error("no device")]
    NoDevice,
    /// `hipErrorInvalidDevice` (101).
    #[error("invalid device: {0}")]
    InvalidDevice(String),
    /// `hipErrorInvalidImage` (200): the image is not an ELF file.
    #[error("invalid image: {0}")]
    InvalidImage(String),
    /// `hipErrorNoBinaryForGpu` (209): a code object for another target.
    #[error("no binary for this GPU: {0}")]
    NoBinaryForGpu(String),
    /// `hipErrorInvalidKernelFile` (218): an ELF file that is no readable code object.
    #[error("invalid kernel file: {0}")]
    InvalidKernelFile(String),
    /// `hipErrorInvalidHandle` (400; `hipErrorInvalidResourceHandle`).
    #[error("invalid handle: {0}")]
    InvalidHandle(String),
    /// `hipErrorNotFound` (500).
    #[error("not found: {0}")]
    NotFound(String),
    /// `hipErrorNotReady` (600): not a failure; work is still pending.
    #[error("not ready")]
    NotReady,
    /// `hipErrorLaunchTimeOut` (702): used for a collective whose peers never arrived.
    #[error("launch timed out: {0}")]
    LaunchTimeOut(String),
    /// `hipErrorLaunchFailure` (719): a kernel faulted or a checker reported findings.
    #[error("launch failure: {0}")]
    LaunchFailure(String),
    /// `hipErrorNotSupported` (801).
    #[error("not supported: {0}")]
    NotSupported(String),
    /// `hipErrorUnknown` (999): injected copy failures and lost devices.
    #[error("unknown error: {0}")]
    Unknown(String),
}

impl HipError {
    /// The `hipError_t` value.
    pub fn code(&self) -> i32 {
        match self {
            Self::InvalidValue(_) => 1,
            Self::OutOfMemory(_) => 2,
            Self::InvalidMemcpyDirection(_) => 21,
            Self::NoDevice => 100,
            Self::InvalidDevice(_) => 101,
            Self::InvalidImage(_) => 200,
            Self::NoBinaryForGpu(_) => 209,
            Self::InvalidKernelFile(_) => 218,
            Self::InvalidHandle(_) => 400,
            Self::NotFound(_) => 500,
            Self::NotReady => 600,
            Self::LaunchTimeOut(_) => 702,
            Self::LaunchFailure(_) => 719,
            Self::NotSupported(_) => 801,
            Self::Unknown(_) => 999,
        }
    }

    /// Shorthand for [`HipError::InvalidValue`].
    pub fn invalid(why: impl Into<String>) -> Self {
        Self::InvalidValue(why.into())
    }
}

/// `hipSuccess`.
pub const HIP_SUCCESS: i32 = 0;

/// `hipError_t` values with the name `hipGetErrorName` gives and the text `hipGetErrorString`
/// gives (the HIP runtime's `ihipGetErrorString` wording where we know it).
pub const HIP_ERRORS: &[(i32, &CStr, &CStr)] = &[
    (0, c"hipSuccess", c"no error"),
    (1, c"hipErrorInvalidValue", c"invalid argument"),
    (2, c"hipErrorOutOfMemory", c"out of memory"),
    (3, c"hipErrorNotInitialized", c"initialization error"),
    (4, c"hipErrorDeinitialized", c"driver shutting down"),
    (5, c"hipErrorProfilerDisabled", c"profiler disabled while using external profiling tool"),
    (6, c"hipErrorProfilerNotInitialized", c"profiler is not initialized"),
    (7, c"hipErrorProfilerAlreadyStarted", c"profiler already started"),
    (8, c"hipErrorProfilerAlreadyStopped", c"profiler already stopped"),
    (9, c"hipErrorInvalidConfiguration", c"invalid configuration argument"),
    (12, c"hipErrorInvalidPitchValue", c"invalid pitch argument"),
    (13, c"hipErrorInvalidSymbol", c"invalid device symbol"),
    (17, c"hipErrorInvalidDevicePointer", c"invalid device pointer"),
    (21, c"hipErrorInvalidMemcpyDirection", c"invalid copy direction for memcpy"),
    (35, c"hipErrorInsufficientDriver", c"driver version is insufficient for runtime version"),
    (52, c"hipErrorMissingConfiguration", c"__global__ function call is not configured"),
    (53, c"hipErrorPriorLaunchFailure", c"unspecified launch failure in prior launch"),
    (98, c"hipErrorInvalidDeviceFunction", c"invalid device function"),
    (100, c"hipErrorNoDevice", c"no ROCm-capable device is detected"),
    (101, c"hipErrorInvalidDevice", c"invalid device ordinal"),
    (200, c"hipErrorInvalidImage", c"device kernel image is invalid"),
    (201, c"hipErrorInvalidContext", c"invalid device context"),
    (202, c"hipErrorContextAlreadyCurrent", c"context already current"),
    (205, c"hipErrorMapFailed", c"mapping of buffer object failed"),
    (206, c"hipErrorUnmapFailed", c"unmapping of buffer object failed"),
    (207, c"hipErrorArrayIsMapped", c"array is mapped"),
    (208, c"hipErrorAlreadyMapped", c"resource already mapped"),
    (209, c"hipErrorNoBinaryForGpu", c"no kernel image is available for execution on the device"),
    (210, c"hipErrorAlreadyAcquired", c"resource already acquired"),
    (211, c"hipErrorNotMapped", c"resource not mapped"),
    (212, c"hipErrorNotMappedAsArray", c"resource not mapped as array"),
    (213, c"hipErrorNotMappedAsPointer", c"resource not mapped as pointer"),
    (214, c"hipErrorECCNotCorrectable", c"uncorrectable ECC error encountered"),
    (215, c"hipErrorUnsupportedLimit", c"limit is not supported on this architecture"),
    (216, c"hipErrorContextAlreadyInUse", c"exclusive-thread device already in use by a different thread"),
    (217, c"hipErrorPeerAccessUnsupported", c"peer access is not supported between these two devices"),
    (218, c"hipErrorInvalidKernelFile", c"invalid kernel file"),
    (219, c"hipErrorInvalidGraphicsContext", c"invalid OpenGL or DirectX context"),
    (300, c"hipErrorInvalidSource", c"device kernel image is invalid"),
    (301, c"hipErrorFileNotFound", c"file not found"),
    (302, c"hipErrorSharedObjectSymbolNotFound", c"shared object symbol not found"),
    (303, c"hipErrorSharedObjectInitFailed", c"shared object initialization failed"),
    (304, c"hipErrorOperatingSystem", c"OS call failed or operation not supported on this OS"),
    (400, c"hipErrorInvalidHandle", c"invalid resource handle"),
    (401, c"hipErrorIllegalState", c"the operation cannot be performed in the present state"),
    (500, c"hipErrorNotFound", c"named symbol not found"),
    (600, c"hipErrorNotReady", c"device not ready"),
    (700, c"hipErrorIllegalAddress", c"an illegal memory access was encountered"),
    (701, c"hipErrorLaunchOutOfResources", c"too many resources requested for launch"),
    (702, c"hipErrorLaunchTimeOut", c"the launch timed out and was terminated"),
    (704, c"hipErrorPeerAccessAlreadyEnabled", c"peer access is already enabled"),
    (705, c"hipErrorPeerAccessNotEnabled", c"peer access has not been enabled"),
    (708, c"hipErrorSetOnActiveProcess", c"cannot set while device is active in this process"),
    (709, c"hipErrorContextIsDestroyed", c"context is destroyed"),
    (710, c"hipErrorAssert", c"device-side assert triggered"),
    (712, c"hipErrorHostMemoryAlreadyRegistered", c"part or all of the requested memory range is already mapped"),
    (713, c"hipErrorHostMemoryNotRegistered", c"pointer does not correspond to a registered memory region"),
    (719, c"hipErrorLaunchFailure", c"unspecified launch failure"),
    (720, c"hipErrorCooperativeLaunchTooLarge", c"too many blocks in cooperative launch"),
    (801, c"hipErrorNotSupported", c"operation not supported"),
    (900, c"hipErrorStreamCaptureUnsupported", c"operation not permitted when stream is capturing"),
    (901, c"hipErrorStreamCaptureInvalidated", c"operation failed due to a previous error during capture"),
    (902, c"hipErrorStreamCaptureMerge", c"operation would result in a merge of separate capture sequences"),
    (903, c"hipErrorStreamCaptureUnmatched", c"capture was not ended in the same stream as it began"),
    (904, c"hipErrorStreamCaptureUnjoined", c"capturing stream has unjoined work"),
    (905, c"hipErrorStreamCaptureIsolation", c"dependency created on uncaptured work in another stream"),
    (906, c"hipErrorStreamCaptureImplicit", c"operation would make the legacy stream depend on a capturing blocking stream"),
    (907, c"hipErrorCapturedEvent", c"operation not permitted on an event last recorded in a capturing stream"),
    (908, c"hipErrorStreamCaptureWrongThread", c"attempt to terminate a thread-local capture sequence from another thread"),
    (910, c"hipErrorGraphExecUpdateFailure", c"the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"),
    (999, c"hipErrorUnknown", c"unknown error"),
    (1052, c"hipErrorRuntimeMemory", c"runtime memory call returned error"),
    (1053, c"hipErrorRuntimeOther", c"runtime call other than memory returned error"),
];

/// `hipGetErrorName`: the enumerator's name; for a value the header does not define, HIP
/// answers `hipErrorUnknown`, and so do we.
pub fn hip_error_name(code: i32) -> &'static CStr {
    HIP_ERRORS.iter().find(|e| e.0 == code).map_or(c"hipErrorUnknown", |e| e.1)
}

/// `hipGetErrorString`: the description; `unknown error` for undefined values.
pub fn hip_error_string(code: i32) -> &'static CStr {
    HIP_ERRORS.iter().find(|e| e.0 == code).map_or(c"unknown error", |e| e.2)
}

/// An `ncclResult_t` other than `ncclSuccess`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NcclError {
    /// `ncclUnhandledCudaError` (1; RCCL: "unhandled hip error"): a HIP call under a collective
    /// failed.
    #[error("unhandled HIP error: {0}")]
    UnhandledHip(HipError),
    /// `ncclSystemError` (2).
    #[error("system error: {0}")]
    System(String),
    /// `ncclInternalError` (3).
    #[error("internal error: {0}")]
    Internal(String),
    /// `ncclInvalidArgument` (4).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// `ncclInvalidUsage` (5).
    #[error("invalid usage: {0}")]
    InvalidUsage(String),
    /// `ncclRemoteError` (6): the emulator's answer when peers never arrive.
    #[error("remote error: {0}")]
    Remote(String),
}

impl NcclError {
    /// The `ncclResult_t` value.
    pub fn code(&self) -> i32 {
        match self {
            Self::UnhandledHip(_) => 1,
            Self::System(_) => 2,
            Self::Internal(_) => 3,
            Self::InvalidArgument(_) => 4,
            Self::InvalidUsage(_) => 5,
            Self::Remote(_) => 6,
        }
    }

    /// Shorthand for [`NcclError::InvalidArgument`].
    pub fn invalid(why: impl Into<String>) -> Self {
        Self::InvalidArgument(why.into())
    }
}

/// `ncclGetErrorString`, with NCCL's wording (RCCL says "hip" where NCCL says "cuda").
pub fn nccl_error_string(code: i32) -> &'static CStr {
    match code {
        0 => c"no error",
        1 => c"unhandled hip error (run with NCCL_DEBUG=INFO for details)",
        2 => c"unhandled system error (run with NCCL_DEBUG=INFO for details)",
        3 => c"internal error - please report this issue to the NCCL developers",
        4 => c"invalid argument (run with NCCL_DEBUG=WARN for details)",
        5 => c"invalid usage (run with NCCL_DEBUG=WARN for details)",
        6 => c"remote process exited or there was a network error",
        7 => c"NCCL operation in progress",
        _ => c"unknown result code",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_codes_match_names() {
        for w in HIP_ERRORS.windows(2) {
            assert!(w[0].0 < w[1].0);
        }
        let cases = [
            (HipError::invalid(""), "hipErrorInvalidValue"),
            (HipError::OutOfMemory(String::new()), "hipErrorOutOfMemory"),
            (HipError::InvalidMemcpyDirection(String::new()), "hipErrorInvalidMemcpyDirection"),
            (HipError::NoDevice, "hipErrorNoDevice"),
            (HipError::InvalidDevice(String::new()), "hipErrorInvalidDevice"),
            (HipError::InvalidImage(String::new()), "hipErrorInvalidImage"),
            (HipError::NoBinaryForGpu(String::new()), "hipErrorNoBinaryForGpu"),
            (HipError::InvalidKernelFile(String::new()), "hipErrorInvalidKernelFile"),
            (HipError::InvalidHandle(String::new()), "hipErrorInvalidHandle"),
            (HipError::NotFound(String::new()), "hipErrorNotFound"),
            (HipError::NotReady, "hipErrorNotReady"),
            (HipError::LaunchTimeOut(String::new()), "hipErrorLaunchTimeOut"),
            (HipError::LaunchFailure(String::new()), "hipErrorLaunchFailure"),
            (HipError::NotSupported(String::new()), "hipErrorNotSupported"),
            (HipError::Unknown(String::new()), "hipErrorUnknown"),
        ];
        for (e, name) in cases {
            assert_eq!(hip_error_name(e.code()).to_str().unwrap(), name);
        }
        assert_eq!(hip_error_name(11).to_str().unwrap(), "hipErrorUnknown");
        assert!(nccl_error_string(NcclError::Remote(String::new()).code()).to_str().unwrap().starts_with("remote"));
        assert_eq!(nccl_error_string(8).to_str().unwrap(), "unknown result code");
    }
}
