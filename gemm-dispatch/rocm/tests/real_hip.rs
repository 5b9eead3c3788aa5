//! Against the real HIP runtime of this machine (Debian's `libamdhip64-5`, ROCm 5.2, no GPU):
//! the library loads, every required symbol resolves, the version-specific ones are reported,
//! the error names agree with the runtime's, and the device count is a clean zero.
//!
//! This test needs `libamdhip64.so.5` (`apt-get install libamdhip64-5`); without it, it fails
//! and says which paths it tried.

use gemm_rocm::hip::{sys, Hip, HipAbi, HipError};
use gemm_rocm::Error;

fn hip() -> Hip {
    Hip::load().unwrap_or_else(|e| panic!("this test needs the HIP runtime (apt-get install libamdhip64-5): {e}"))
}

#[test]
fn the_runtime_loads_and_every_required_symbol_resolves() {
    let hip = hip();
    let path = hip.library_path().display().to_string();
    assert!(path.contains("libamdhip64"), "{path}");
    let report = hip.symbol_report();
    eprintln!("{path}: missing optional symbols {:?}", report.missing_optional);
    assert!(report.missing_required.is_empty(), "missing: {:?}", report.missing_required);
    // At least one way to read device properties exists.
    assert!(report.missing_optional.len() < sys::HipApi::OPTIONAL.len());
    // A missing symbol is an error value that names it and the library.
    if report.missing_optional.contains(&"hipGetDevicePropertiesR0600") {
        let err = hip.api().hipGetDevicePropertiesR0600().unwrap_err();
        let text = err.to_string();
        assert!(text.contains("hipGetDevicePropertiesR0600") && text.contains("libamdhip64"), "{text}");
    }
}

#[test]
fn version_and_abi_agree_with_the_symbols() {
    let hip = hip();
    let abi = hip.abi();
    let has_r0600 = hip.api().hipGetDevicePropertiesR0600().is_ok();
    match hip.runtime_version() {
        Ok(v) => {
            eprintln!("HIP runtime {v} -> {abi:?}");
            assert!(v.major >= 5, "{v}");
            assert_eq!(abi, HipAbi::from_version(v));
        }
        Err(e) => eprintln!("hipRuntimeGetVersion: {e}"),
    }
    // Only ROCm 6+ exports the R0600 call, and then the ABI must be ROCm 6.
    assert_eq!(has_r0600, abi == HipAbi::Rocm6);
}

#[test]
fn no_gpu_means_zero_devices_not_a_failure() {
    let hip = hip();
    let n = hip.device_count().expect("hipGetDeviceCount");
    eprintln!("HIP devices: {n}");
    // The raw call on a machine without a GPU answers hipErrorNoDevice (or success with 0).
    let f = hip.api().hipGetDeviceCount().unwrap();
    let mut raw = -1;
    // SAFETY: hipGetDeviceCount(int*) writes one int.
    let code = unsafe { f(&mut raw) };
    eprintln!("raw hipGetDeviceCount: status {code}, count {raw}");
    if n == 0 {
        assert!(code == sys::HIP_ERROR_NO_DEVICE || (code == sys::HIP_SUCCESS && raw == 0), "{code} {raw}");
    }
    if n == 0 {
        match hip.device(0) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("0 present"), "{m}"),
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
        assert!(hip.devices().unwrap().is_empty());
    } else {
        // A machine with GPUs: every device answers.
        for d in hip.devices().unwrap() {
            let info = d.info().unwrap();
            assert!(info.arch_name.starts_with("gfx"), "{info:?}");
            assert!(info.compute_units > 0);
        }
    }
}

#[test]
fn error_names_match_the_runtime() {
    let hip = hip();
    let f = hip.api().hipGetErrorName().unwrap();
    let mut mismatches = Vec::new();
    for &(code, name) in sys::HIP_ERROR_NAMES {
        // SAFETY: hipGetErrorName takes any code and returns a static C string.
        let p = unsafe { f(code) };
        assert!(!p.is_null());
        // SAFETY: non-null static C string.
        let got = unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned();
        if got != name {
            mismatches.push((code, name, got));
        }
    }
    assert!(mismatches.is_empty(), "(code, ours, runtime's): {mismatches:?}");
    let e = HipError::new(Some(hip.api()), "hipGetDeviceCount", sys::HIP_ERROR_NO_DEVICE);
    assert_eq!(e.name, "hipErrorNoDevice");
    assert!(!e.message.is_empty(), "hipGetErrorString gave no text");
    eprintln!("{e}");
}
