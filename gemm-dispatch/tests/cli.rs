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

/// The rows of `gemm batch`'s per-device table: `(name, items)`.
fn device_rows(out: &str) -> Vec<(String, usize)> {
    out.lines()
        .skip_while(|l| !l.starts_with("device "))
        .skip(1)
        .take_while(|l| !l.starts_with("completion order"))
        .map(|l| {
            let mut cells = l.split_whitespace();
            (cells.next().unwrap().to_string(), cells.next().unwrap().parse().unwrap())
        })
        .collect()
}

#[test]
fn batch_spreads_a_mixed_batch_and_draws_its_schedule() {
    let dir = std::env::temp_dir().join(format!("gemm-cli-batch-{}", std::process::id()));
    let (svg, csv) = (dir.join("plot/batch.svg"), dir.join("batch.csv"));
    let args = [
        "--devices",
        "host,host",
        "batch",
        "--items",
        "8",
        "--seed",
        "7",
        "--max-size",
        "64",
        "--plot",
        svg.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ];
    let (ok, out, err) = gemm(&args);
    assert!(ok, "{out}{err}");
    assert_eq!(err.matches("] item ").count(), 8, "one progress line per item: {err}");
    let rows = device_rows(&out);
    assert_eq!(rows.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(), ["host:0", "host:1"], "{out}");
    assert_eq!(rows.iter().map(|r| r.1).sum::<usize>(), 8, "the device counts sum to the batch: {out}");
    assert!(out.contains("GFLOP/s") && out.contains(": ok"), "{out}");
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<svg") && plot.trim_end().ends_with("</svg>"));
    assert_eq!(plot.matches(r#"<rect class="item""#).count(), 8, "one bar per item");
    let table = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(table.lines().count(), 9, "a header and one row per item: {table}");
    // The completion order lists every item once.
    let order: Vec<usize> = out
        .lines()
        .skip_while(|l| !l.starts_with("completion order"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .flat_map(|l| l.split_whitespace().map(|c| c.split('@').next().unwrap().parse::<usize>().unwrap()))
        .collect();
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..8).collect::<Vec<_>>(), "{out}");
    // The same seed gives the same batch (the same items and flops; times differ).
    let work = |out: &str| {
        let wall = out.lines().find(|l| l.starts_with("wall")).unwrap().to_string();
        wall.split(" for ").nth(1).unwrap().split(':').next().unwrap().to_string()
    };
    let (ok, again, _) = gemm(&args);
    assert!(ok);
    assert_eq!(work(&out), work(&again));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn batch_on_an_emulated_gpu_mixes_only_the_dtypes_it_has_kernels_for() {
    let svg = std::env::temp_dir().join(format!("gemm-cli-batch-emu-{}.svg", std::process::id()));
    let (ok, out, err) = gemm(&[
        "--device",
        "emu:gfx942",
        "batch",
        "--items",
        "3",
        "--max-size",
        "40",
        "--quiet",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&svg);
    assert!(ok, "{out}{err}");
    assert!(err.contains("not mixed in") && err.contains("f32"), "the catalogue has no f32 kernel: {err}");
    assert_eq!(device_rows(&out), [("emu:gfx942".to_string(), 3)], "{out}");
}

#[test]
fn batch_refuses_bad_arguments() {
    for (args, expect) in [
        (vec!["batch", "--min-size", "0"], "--min-size"),
        (vec!["batch", "--min-size", "64", "--max-size", "8"], "--min-size"),
        (vec!["batch", "--dtypes", "f64"], "f64"),
        (vec!["batch", "--dtypes", "f32:bf16"], "not a supported dtype pair"),
        (vec!["batch", "--items", "0"], "items"),
        (vec!["--devices", "emu:gfx942", "batch", "--dtypes", "f32"], "no requested dtype"),
    ] {
        let (ok, out, err) = gemm(&args);
        assert!(!ok && err.contains(expect), "{args:?}: {out}{err}");
    }
}
