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
    // Which gemm-host path serves each input class, and why (gemm_host::dispatch::summary).
    assert!(out.contains("host paths") && out.contains("bf16/fp8  -> ") && out.contains("f32       -> "), "{out}");
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
    // MX kernels show their formats, not the fp8 storage type their descriptor carries.
    let fp6 = out.lines().find(|l| l.starts_with("gemm_gfx950_mxfp8fp6_bf16_")).expect("an MXFP8 x MXFP6 kernel");
    assert!(fp6.contains("mxfp8_e4m3xmxfp6_e2m3->bf16"), "{fp6}");
    // A reader that stops early (`gemm kernels | head`) ends the listing without a panic.
    let mut child = Command::new(env!("CARGO_BIN_EXE_gemm"))
        .arg("kernels")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let done = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success() && !err.contains("panicked"), "{err}");
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
        "--dtypes",
        "f32,fp8",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&svg);
    assert!(ok, "{out}{err}");
    // f32 runs on gfx942's f32 kernels; OCP fp8 is gfx950's flavour, not gfx942's.
    assert!(err.contains("not mixed in") && err.contains("fp8"), "gfx942 has no OCP fp8 kernel: {err}");
    let refused = err.lines().find(|l| l.starts_with("not mixed in")).unwrap();
    assert_eq!(refused.split(": ").nth(1).map(|l| l.split(", ").count()), Some(1), "only fp8: {refused}");
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
        (vec!["--devices", "emu:gfx942", "batch", "--dtypes", "fp8"], "no requested dtype"),
    ] {
        let (ok, out, err) = gemm(&args);
        assert!(!ok && err.contains(expect), "{args:?}: {out}{err}");
    }
}

#[test]
fn tp_runs_each_plan_and_compares_it_with_one_device() {
    for (plan, split, agree) in [
        ("column", ["host:0         columns 0..20 (20)", "host:1         columns 20..40 (20)"], "bit-identical: 0 of"),
        ("row", ["host:0         K 0..12 (12)", "host:1         K 12..24 (12)"], "within tolerance"),
        ("row-allreduce", ["host:0         K 0..12 (12)", "host:1         K 12..24 (12)"], "within tolerance"),
    ] {
        for dtype in ["f32", "bf16"] {
            let args = [
                "--devices",
                "host,host",
                "tp",
                "--plan",
                plan,
                "--m",
                "33",
                "--n",
                "40",
                "--k",
                "24",
                "--dtype",
                dtype,
                "--reps",
                "2",
                "--beta",
                "0.5",
            ];
            let (ok, out, err) = gemm(&args);
            assert!(ok, "{args:?}: {out}{err}");
            assert!(out.contains("route    host:") && out.contains("host:0 is not a HIP device"), "{out}");
            for line in split {
                assert!(out.contains(line), "{plan}: the split: {out}");
            }
            assert!(out.contains("time     best") && out.contains("per rep over 2 reps"), "{out}");
            assert!(out.contains("TFLOP/s") && out.contains("speedup"), "{out}");
            assert!(out.contains("accuracy") && out.contains(": ok"), "{out}");
            assert!(out.lines().any(|l| l.starts_with("agree") && l.contains(agree)), "{plan}: {out}");
            assert!(err.contains("tp     run 2/2") && err.contains("single run 2/2"), "progress lines: {err}");
        }
    }
    // More devices than columns: the last device is idle and the result is still exact.
    let (ok, out, err) = gemm(&[
        "--devices",
        "host,host,host",
        "tp",
        "--plan",
        "column",
        "--m",
        "5",
        "--n",
        "2",
        "--k",
        "7",
        "--dtype",
        "f16",
        "--out-dtype",
        "f32",
        "--transa",
        "--transb",
        "--reps",
        "1",
    ]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("host:2         columns 2..2 (0, idle)") && out.contains("bit-identical"), "{out}");
}

#[test]
fn tp_refuses_bad_arguments() {
    for (args, expect) in [
        (vec!["tp", "--plan", "diagonal", "--m", "4", "--n", "4", "--k", "4"], "invalid value 'diagonal'"),
        (vec!["tp", "--m", "4", "--n", "4", "--k", "4"], "--plan"),
        (vec!["tp", "--plan", "row", "--m", "0", "--n", "4", "--k", "4"], "--m"),
        // `--reps` is the old name of `--iters` (one name for repetitions across commands).
        (vec!["tp", "--plan", "row", "--m", "4", "--n", "4", "--k", "4", "--reps", "0"], "--iters"),
        (vec!["tp", "--plan", "row", "--m", "4", "--n", "4", "--k", "4", "--iters", "0"], "--iters"),
        (vec!["tp", "--plan", "row", "--m", "4", "--n", "4", "--k", "4", "--dtype", "f64"], "f64"),
        (
            vec!["tp", "--plan", "column", "--m", "4", "--n", "4", "--k", "4", "--out-dtype", "bf16"],
            "not a supported dtype pair",
        ),
        // OCP fp8 is gfx950's flavour: gfx942 has no kernel for it.
        (
            vec![
                "--devices",
                "emu:gfx942,emu:gfx942",
                "tp",
                "--plan",
                "row",
                "--m",
                "4",
                "--n",
                "4",
                "--k",
                "4",
                "--dtype",
                "fp8",
            ],
            "-> f32 is not supported on every device (row plans compute f32 partial products)",
        ),
    ] {
        let (ok, out, err) = gemm(&args);
        assert!(!ok && err.contains(expect), "{args:?}: {out}{err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// `gemm tp` on two GPUs of the emulated HIP runtime and RCCL (`libgemm_emu_hip.so`, loaded as
/// libamdhip64 and librccl would be) takes the device-resident route.
#[test]
fn tp_on_emulated_hip_devices_takes_the_device_route() {
    let lib = gemm_emu_hip::library_path().expect("libgemm_emu_hip.so next to the test binary");
    for plan in ["column", "row"] {
        let out = Command::new(env!("CARGO_BIN_EXE_gemm"))
            .args(["--devices", "hip", "tp", "--plan", plan, "--m", "64", "--n", "96", "--k", "48"])
            .args(["--dtype", "bf16", "--reps", "1"])
            .env_remove("GEMM_DEVICES")
            .env("GEMM_HIP_LIBRARY", &lib)
            .env("GEMM_RCCL_LIBRARY", &lib)
            .env("GEMM_EMU_HIP", "devices=gfx942,gfx942")
            .output()
            .unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{plan}: {stdout}{stderr}");
        assert!(stdout.contains("route    device: every device is a HIP device and RCCL is available"), "{stdout}");
        assert!(stdout.contains("hip:1") && stdout.contains("speedup") && stdout.contains(": ok"), "{stdout}");
        let agree = if plan == "column" { "bit-identical" } else { "within tolerance" };
        assert!(stdout.lines().any(|l| l.starts_with("agree") && l.contains(agree)), "{stdout}");
    }
}

/// `run --batch 0` is refused like every other zero size (it used to run one item).
#[test]
fn run_refuses_an_empty_batch() {
    let out = Command::new(env!("CARGO_BIN_EXE_gemm"))
        .args(["--devices", "host", "run", "--m", "4", "--n", "4", "--k", "4", "--batch", "0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--batch"), "{err}");
}

/// `gemm tp --ranks 2 --print-commands`: the printed lines, run by a shell as a launcher would
/// paste them (each rank its own `sh -c LINE`), join over the emulated HIP runtime and RCCL and
/// pass their checks against the reference. The id file's path has a space (quoted like every
/// word) and comes from `GEMM_TP_ID_FILE`; `GEMM_EMU_HIP`'s `;` must be quoted; the lines must
/// not print commands again. Each shell is killed past 120 s.
#[test]
fn tp_ranks_printed_commands_run_in_a_shell() {
    let dir = std::env::temp_dir().join(format!("gemm-tp-print {}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let id_file = dir.join("unique id");
    let out = Command::new(env!("CARGO_BIN_EXE_gemm"))
        .args(["tp", "--ranks", "2", "--plan", "row-allreduce", "--m", "24", "--n", "16", "--k", "40"])
        .args(["--dtype", "bf16", "--out-dtype", "f32", "--iters", "1", "--print-commands"])
        .env_remove("GEMM_DEVICES")
        .env_remove("GEMM_HIP_LIBRARY")
        .env_remove("GEMM_TP_RANK")
        .env("GEMM_TP_ID_FILE", &id_file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    for line in &lines {
        assert!(!line.contains("--print-commands"), "{line}");
        assert!(line.contains("GEMM_EMU_HIP='devices=gfx942;nccl=tcp;launch_threads=1'"), "{line}");
        assert!(line.contains(&format!("GEMM_TP_ID_FILE='{}'", id_file.display())), "{line}");
    }
    let mut shells: Vec<_> = lines
        .iter()
        .map(|line| {
            Command::new("sh")
                .arg("-c")
                .arg(line)
                .env_remove("GEMM_DEVICES")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start sh")
        })
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while shells.iter_mut().any(|c| c.try_wait().unwrap().is_none()) {
        if std::time::Instant::now() > deadline {
            for c in &mut shells {
                let _ = c.kill();
            }
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for (r, c) in shells.into_iter().enumerate() {
        let o = c.wait_with_output().unwrap();
        let (so, se) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(o.status.success(), "rank {r}: {}\n{so}{se}", lines[r]);
        assert!(so.contains(&format!("rank {r}/2")) && so.trim_end().ends_with("OK"), "rank {r}: {so}{se}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `gemm tp --ranks 2` starts its two ranks itself (emulated HIP and RCCL, the id through a
/// file in a temporary directory), each checks its output against the reference, and the
/// launcher reports them; every plan, overlap on and off.
#[test]
fn tp_ranks_launches_and_checks_every_plan() {
    for plan in ["column", "row", "row-allreduce"] {
        for overlap in [&[][..], &["--no-overlap"][..]] {
            let out = Command::new(env!("CARGO_BIN_EXE_gemm"))
                .args(["tp", "--ranks", "2", "--plan", plan, "--m", "40", "--n", "24", "--k", "48"])
                .args(["--dtype", "bf16", "--out-dtype", "f32", "--iters", "1"])
                .args(overlap)
                .env_remove("GEMM_DEVICES")
                .env_remove("GEMM_HIP_LIBRARY")
                .env_remove("GEMM_TP_RANK")
                .output()
                .unwrap();
            let (so, se) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success(), "{plan} {overlap:?}: {so}{se}");
            assert!(so.contains("all 2 ranks passed"), "{so}");
            for r in 0..2 {
                let line = so.lines().find(|l| l.starts_with(&format!("rank {r}/2"))).unwrap_or_else(|| panic!("{so}"));
                assert!(line.ends_with("OK") && line.contains(&format!("overlap {}", overlap.is_empty())), "{line}");
            }
        }
    }
}
