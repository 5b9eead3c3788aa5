//! The `gemm` command line as a user runs it.

use std::process::Command;

fn gemm(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gemm")).args(args).env_remove("GEMM_DEVICES").output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn devices_lists_the_host_and_says_why_hip_is_not_used() {
    let (ok, out, _) = gemm(&["devices"]);
    assert!(ok);
    assert!(out.contains("host:0"), "{out}");
    // Debian's libamdhip64-5 is installed by scripts/test: it loads and finds no device.
    assert!(out.contains("hip: ") && out.contains("no device"), "{out}");
    let (ok, out, _) = gemm(&["--devices", "host,host,host", "devices"]);
    assert!(ok && out.contains("3 device(s)") && out.contains("host:2"), "{out}");
}

#[test]
fn run_reports_time_speed_and_accuracy() {
    for args in [
        vec!["run", "--m", "17", "--n", "31", "--k", "5"],
        vec!["run", "--m", "64", "--n", "48", "--k", "40", "--dtype", "bf16", "--transa", "--transb"],
        vec!["--devices", "host,host", "run", "--m", "20", "--n", "20", "--k", "20", "--batch", "5", "--beta", "0.5"],
        vec!["run", "--m", "32", "--n", "32", "--k", "32", "--dtype", "fp8_e4m3fnuz", "--out-dtype", "bf16"],
        vec!["run", "--device", "emu:gfx942", "--m", "17", "--n", "33", "--k", "65", "--dtype", "bf16"],
        vec![
            "run",
            "--device",
            "emu:gfx950:random:1",
            "--m",
            "9",
            "--n",
            "5",
            "--k",
            "40",
            "--dtype",
            "f16",
            "--transa",
        ],
    ] {
        let (ok, out, err) = gemm(&args);
        assert!(ok, "{args:?}: {out}{err}");
        assert!(out.contains("TFLOP/s") && out.contains(": ok"), "{args:?}: {out}");
        assert!(err.contains("run 1/5"), "progress lines: {err}");
    }
}

#[test]
fn bad_arguments_are_errors() {
    let (ok, _, err) = gemm(&["run", "--m", "4", "--n", "4", "--k", "4", "--dtype", "f64"]);
    assert!(!ok && err.contains("f64"), "{err}");
    let (ok, _, err) = gemm(&["--devices", "gpu:3", "devices"]);
    assert!(!ok && err.contains("gpu:3"), "{err}");
    let (ok, _, err) = gemm(&["run", "--m", "4", "--n", "4", "--k", "4", "--dtype", "f32", "--out-dtype", "bf16"]);
    assert!(!ok && err.contains("unsupported"), "{err}");
}

#[test]
fn kernels_lists_and_disassembles_the_catalogue() {
    let (ok, out, _) = gemm(&["kernels"]);
    assert!(ok);
    let first = gemm_kernels::catalogue().first().expect("the catalogue is not empty");
    assert!(out.contains(first.name), "{out}");
    let (ok, out, err) = gemm(&["kernels", "--disasm", first.name]);
    assert!(ok, "{err}");
    assert!(out.contains("v_mfma_f32") && out.contains("s_endpgm"), "{out}");
    assert!(out.contains("s_waitcnt") && out.contains("s_barrier"), "{out}");
    let (ok, _, err) = gemm(&["kernels", "--disasm", "no_such_kernel"]);
    assert!(!ok && err.contains("no_such_kernel"), "{err}");
}

#[test]
fn emulate_runs_a_catalogue_kernel_with_its_checkers() {
    let k = gemm_kernels::catalogue().first().expect("the catalogue is not empty");
    let path = std::env::temp_dir().join(format!("gemm-cli-{}.co", std::process::id()));
    std::fs::write(&path, k.code_object).unwrap();
    let bytes = (64 * 64 * 4).to_string();
    let (ok, out, err) = gemm(&[
        "emulate",
        path.to_str().unwrap(),
        "--kernel",
        k.name,
        "--grid",
        "1",
        "--block",
        &k.workgroup_size.to_string(),
        "--buffer",
        &bytes,
        "--buffer",
        &bytes,
        "--buffer",
        &bytes,
        "--args",
        "b0,b1,b2,u32:64,u32:64,u32:64,u32:64,u32:64,u32:64,f32:1,f32:0",
        "--mode",
        "random",
    ]);
    let _ = std::fs::remove_file(&path);
    assert!(ok, "{out}{err}");
    assert!(out.contains("no findings") && out.contains("mfma"), "{out}");
}
