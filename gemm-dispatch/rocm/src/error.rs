//! The crate's error type: every failure is a value that says what was asked for.

use crate::hip::HipError;
use crate::loader::LoadError;
use crate::nccl::NcclError;

/// Any failure of this crate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A vendor library or one of its symbols could not be had.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A HIP call returned a status other than `hipSuccess`.
    #[error(transparent)]
    Hip(#[from] HipError),
    /// An RCCL/NCCL call returned a status other than `ncclSuccess`.
    #[error(transparent)]
    Nccl(#[from] NcclError),
    /// The caller's arguments were refused before anything was touched.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The loaded runtime cannot answer this question (e.g. an attribute that this ROCm
    /// version's `hipDeviceAttribute_t` lacks).
    #[error("unsupported by this runtime: {0}")]
    Unsupported(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
