//! `hipError_t` to `Result`: a status other than `hipSuccess` becomes a [`HipError`] that
//! carries the call, the code, and the runtime's own name and description of the code
//! (`hipGetErrorName` / `hipGetErrorString`, `hip_runtime_api.h`).

use std::ffi::{c_char, CStr};

use super::sys::{self, hipError_t, HipApi};

/// A HIP call that did not return `hipSuccess`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed: {name} ({code}): {message}")]
pub struct HipError {
    /// The HIP function that failed.
    pub call: &'static str,
    /// The raw `hipError_t`.
    pub code: hipError_t,
    /// `hipGetErrorName(code)`, or the header's name when the runtime cannot say.
    pub name: String,
    /// `hipGetErrorString(code)`, or empty when the runtime cannot say.
    pub message: String,
}

impl HipError {
    /// Builds the error for `code`, asking the runtime for its name and text when it can.
    pub fn new(api: Option<&HipApi>, call: &'static str, code: hipError_t) -> Self {
        let runtime_name = api
            .and_then(|a| a.hipGetErrorName().ok())
            // SAFETY: `hipGetErrorName` takes any `hipError_t` and returns a pointer to a
            // static NUL-terminated string (or null), per `hip_runtime_api.h`.
            .and_then(|f| unsafe { static_str(f(code)) });
        let name = runtime_name
            .or_else(|| sys::error_name(code).map(str::to_owned))
            .unwrap_or_else(|| format!("hipError({code})"));
        let message = api
            .and_then(|a| a.hipGetErrorString().ok())
            // SAFETY: as above, for `hipGetErrorString`.
            .and_then(|f| unsafe { static_str(f(code)) })
            .unwrap_or_default();
        Self { call, code, name, message }
    }

    /// `hipErrorNoDevice`: the runtime found no GPU.
    pub fn is_no_device(&self) -> bool {
        self.code == sys::HIP_ERROR_NO_DEVICE
    }
}

/// Copies a C string the runtime owns; `None` for null or non-UTF-8.
///
/// # Safety
/// `p` is null or points at a NUL-terminated string that stays valid during the call.
unsafe fn static_str(p: *const c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null and NUL-terminated per the caller.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().ok().map(str::to_owned)
}

/// `Ok(())` for `hipSuccess`, otherwise the described error.
pub fn check(api: &HipApi, call: &'static str, code: hipError_t) -> Result<(), HipError> {
    if code == sys::HIP_SUCCESS {
        Ok(())
    } else {
        Err(HipError::new(Some(api), call, code))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_runtime_the_header_name_is_used() {
        let e = HipError::new(None, "hipGetDeviceCount", sys::HIP_ERROR_NO_DEVICE);
        assert!(e.is_no_device());
        assert_eq!(e.name, "hipErrorNoDevice");
        assert_eq!(e.code, 100);
        assert_eq!(e.to_string(), "hipGetDeviceCount failed: hipErrorNoDevice (100): ");
        let odd = HipError::new(None, "hipMalloc", 12345);
        assert_eq!(odd.name, "hipError(12345)");
        assert!(!odd.is_no_device());
    }
}
