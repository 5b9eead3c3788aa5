//! HIP discovery against this machine's real runtime (Debian's `libamdhip64.so.5`, no GPU):
//! no device, said plainly; `hip` in a device list is a clean error naming why; a missing
//! library names every path tried. This test needs `libamdhip64-5` installed and fails, saying
//! so, without it.

use gemm_dispatch::backends::hip;
use gemm_dispatch::{Context, Error};
use std::process::Command;

#[test]
fn discovery_finds_no_device_and_says_hip_error_no_device() {
    let found = hip::discover();
    assert!(found.devices.is_empty(), "this machine has no AMD GPU");
    let notes = found.notes.join("\n");
    assert!(
        notes.contains("libamdhip64") && notes.contains("hipErrorNoDevice"),
        "needs the HIP runtime (apt-get install libamdhip64-5); notes: {notes}"
    );
}

#[test]
fn a_hip_device_list_is_a_clean_device_spec_error() {
    for spec in ["hip", "hip:0", "host,hip:1"] {
        match Context::from_spec(spec) {
            Err(Error::DeviceSpec { spec: entry, why }) => {
                assert!(entry.starts_with("hip"), "{entry}");
                assert!(why.contains("hipErrorNoDevice"), "{spec}: {why}");
            }
            other => panic!("{spec}: expected a DeviceSpec error, got {other:?}"),
        }
    }
}

/// Runs in a child process (the library override is process-wide state).
#[test]
fn a_missing_library_is_a_note_naming_the_path() {
    const PATH: &str = "/nonexistent/libamdhip64.so";
    if std::env::var("GEMM_HIP_LIBRARY").as_deref() != Ok(PATH) {
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "a_missing_library_is_a_note_naming_the_path", "--nocapture", "--test-threads=1"])
            .env("GEMM_HIP_LIBRARY", PATH)
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && text.contains("1 passed"), "child failed:\n{text}");
        return;
    }
    let found = hip::discover();
    assert!(found.devices.is_empty());
    let notes = found.notes.join("\n");
    assert!(notes.contains("not found") && notes.contains(PATH), "{notes}");
    let Err(Error::DeviceSpec { why, .. }) = Context::from_spec("hip") else { panic!("expected a DeviceSpec error") };
    assert!(why.contains("not found") && why.contains(PATH), "{why}");
    // The default context falls back to the host.
    std::env::remove_var("GEMM_DEVICES");
    let ctx = Context::from_env().unwrap();
    assert_eq!(ctx.devices()[0].name, "host:0");
}
