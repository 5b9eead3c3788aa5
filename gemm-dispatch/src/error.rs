//! Errors of the runtime: invalid input (from gemm-core), device failures, and configuration.

use gemm_core::{DType, Operand};

/// Everything a GEMM call can report.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Error {
    /// The problem or its buffers are invalid; nothing was touched.
    #[error(transparent)]
    Invalid(#[from] gemm_core::Error),
    /// A buffer's address is not a multiple of its element size.
    #[error("buffer of {operand} is not aligned to the {} bits of {dtype}", dtype.bits())]
    Misaligned { operand: Operand, dtype: DType },
    /// A device failed while running the item. The item may be retried on another device.
    #[error("device {device} failed: {message}")]
    Device { device: String, message: String },
    /// The device cannot run this problem (dtype, arch); another device may.
    #[error("device {device} does not support this problem: {why}")]
    Unsupported { device: String, why: String },
    /// The emulator's race or hazard checker found a bug in the kernel that ran the item. Not
    /// retried: the answer may even be right, but the kernel is wrong.
    #[error("device {device}: checkers found {count} problem(s) in kernel {kernel}:\n{findings}")]
    KernelCheck { device: String, kernel: String, count: usize, findings: String },
    /// A device-resident operand or stream is on another device than the one asked to run the
    /// GEMM; nothing was launched.
    #[error("{what} is on HIP device {found}, the GEMM runs on HIP device {expected}")]
    WrongDevice { what: String, found: i32, expected: i32 },
    /// A device-resident call named a device that is not a HIP GPU.
    #[error("device {device} is not a HIP GPU: device-memory GEMMs need one")]
    NotAGpu { device: String },
    /// A pointer given as device memory is not inside a live device allocation.
    #[error("{what} is not device memory: {why}")]
    NotDeviceMemory { what: String, why: String },
    /// No device with this index.
    #[error("no device {index} (the context has {count})")]
    NoSuchDevice { index: usize, count: usize },
    /// A device list such as `GEMM_DEVICES` could not be parsed or opened.
    #[error("device selection `{spec}`: {why}")]
    DeviceSpec { spec: String, why: String },
    /// fp8 scales that do not fit the problem (not fp8, a scale vector of the wrong length or
    /// alignment); nothing was touched.
    #[error(transparent)]
    Scale(crate::ops::scales::ScaleError),
    /// A block-scaled GEMM (MX or block fp8) that does not fit its rules: formats, block shapes,
    /// K, leading dimensions, alignment, buffer sizes, or the device's architecture (MX on
    /// gfx942); nothing was touched.
    #[error(transparent)]
    BlockScale(#[from] gemm_core::BlockScaleError),
    /// The device has no kernel for this call (yet): it was checked whole and is valid, but no
    /// GPU kernel is wired to run it. Not retried: the caller picks a device that can (the host
    /// computes every block-scaled GEMM).
    #[error("device {device} has no kernel for this: {reason}")]
    NoKernel { device: String, reason: String },
    /// The work was not run because the batch was cancelled or its context shut down.
    #[error("not run: {0}")]
    NotRun(String),
    /// A tensor-parallel group's failure ([`TpError`]).
    #[error(transparent)]
    Tp(#[from] TpError),
}

/// Why a call of a tensor-parallel group ([`crate::api::parallel::group::TpGroup`]) failed. Each
/// is a state the caller can act on: fix the launch (a bad id, a rank out of range, ranks that
/// disagree), or tear the job down (a peer gone, a timeout, an aborted group). After a failure
/// of a collective the group is aborted: its communicator cannot be trusted to be in step.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TpError {
    /// The unique id is malformed (not one RCCL made, damaged on the way) or stale (its
    /// rendezvous is gone: it served another group, or the process that made it ended).
    #[error("unique id refused: {0}")]
    UniqueId(String),
    /// `rank` is not below `nranks` (or `nranks` is 0).
    #[error("rank {rank} is out of range for {nranks} ranks")]
    RankOutOfRange { rank: usize, nranks: usize },
    /// The ranks called with different problems, plans or options (or joined with different
    /// rank counts); `what` names the first difference.
    #[error("the ranks disagree: {0}")]
    Disagree(String),
    /// A peer is gone: its connection closed, or the library reported a remote error.
    #[error("a peer is gone: {0}")]
    PeerLost(String),
    /// The call's collectives did not finish within the group's timeout; the group was aborted.
    #[error("timed out after {ms} ms: {what}")]
    Timeout { ms: u64, what: String },
    /// The group was aborted (by the caller, or by an earlier failure) and cannot run anything.
    #[error("the group was aborted: {0}")]
    Aborted(String),
    /// Another RCCL/NCCL failure.
    #[error("communicator: {0}")]
    Comm(String),
}

impl Error {
    /// Whether running the same item on another device may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Device { .. } | Error::Unsupported { .. })
    }
}

/// Result with the runtime [`Error`].
pub type Result<T, E = Error> = core::result::Result<T, E>;

impl From<crate::ops::scales::ScaleError> for Error {
    fn from(e: crate::ops::scales::ScaleError) -> Self {
        Error::Scale(e)
    }
}
