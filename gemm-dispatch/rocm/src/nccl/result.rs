//! `ncclResult_t` to `Result`, with the library's own `ncclGetErrorString` text.

use std::ffi::CStr;

use super::sys::{self, ncclResult_t, NcclApi};

/// An RCCL/NCCL call that did not return `ncclSuccess`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed: {name} ({code}): {message}")]
pub struct NcclError {
    /// The function that failed.
    pub call: &'static str,
    /// The raw `ncclResult_t`.
    pub code: ncclResult_t,
    /// The header name of the code (or `ncclResult(<code>)`).
    pub name: String,
    /// `ncclGetErrorString(code)`, or empty when unavailable.
    pub message: String,
}

impl NcclError {
    /// Builds the error for `code`, asking the library for its text when it can.
    pub fn new(api: Option<&NcclApi>, call: &'static str, code: ncclResult_t) -> Self {
        let name = sys::result_name(code).map(str::to_owned).unwrap_or_else(|| format!("ncclResult({code})"));
        let message = api
            .and_then(|a| a.ncclGetErrorString().ok())
            .and_then(|f| {
                // SAFETY: `ncclGetErrorString` returns a pointer to a static NUL-terminated
                // string for any `ncclResult_t` (`nccl.h`); null is handled.
                let p = unsafe { f(code) };
                // SAFETY: non-null pointers are static C strings, per the above.
                (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
            })
            .unwrap_or_default();
        Self { call, code, name, message }
    }
}

/// `Ok(())` for `ncclSuccess`, otherwise the described error.
pub fn check(api: &NcclApi, call: &'static str, code: ncclResult_t) -> Result<(), NcclError> {
    if code == sys::NCCL_SUCCESS {
        Ok(())
    } else {
        Err(NcclError::new(Some(api), call, code))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_names() {
        let e = NcclError::new(None, "ncclAllReduce", 4);
        assert_eq!(e.name, "ncclInvalidArgument");
        assert_eq!(e.to_string(), "ncclAllReduce failed: ncclInvalidArgument (4): ");
        assert_eq!(NcclError::new(None, "x", 77).name, "ncclResult(77)");
    }
}
