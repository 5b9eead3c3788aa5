//! The CLI parts of the device API work: `gemm run` refuses what cannot fit, `gemm plan`
//! explains the kernel choice, `GEMM_LOG` writes a call log whose commands `gemm bench --from`
//! reruns into a CSV and an SVG chart, on the host and on an emulated GPU (device memory).

use std::path::Path;
use std::process::Command;

fn gemm(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gemm"));
    cmd.args(args).env_remove("GEMM_DEVICES").env_remove("GEMM_LOG").env_remove("GEMM_LOG_FILE");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn run_refuses_a_problem_that_cannot_fit_and_says_how_much_it_needs() {
    let (ok, out, err) = gemm(&["run", "--m", "100000000", "--n", "100000000", "--k", "10"], &[]);
    assert!(!ok, "{out}{err}");
    assert!(err.contains("GiB of host memory") && err.contains("available"), "{err}");
    assert!(!err.contains("panicked") && !err.contains("backtrace") && !err.contains("memory allocation of"), "{err}");
}

#[test]
fn plan_explains_square_tall_skinny_and_grouped_problems_on_both_archs() {
    // The characterisation table (the dispatcher's ranking, `--model table`, the default) on the
    // big shapes, and the static roofline; the timing model itself below on small ones (it runs
    // each candidate's sampled workgroups in the emulator).
    for model in ["table", "static"] {
        for args in [
            vec!["plan", "--m", "4096", "--n", "4096", "--k", "4096", "--dtype", "bf16", "--out-dtype", "f32"],
            vec!["plan", "--m", "16384", "--n", "16", "--k", "4096", "--dtype", "f16"],
            vec![
                "plan",
                "--group",
                "512,1024,256",
                "--group",
                "0,1024,256",
                "--group",
                "64,1024,256",
                "--dtype",
                "bf16",
            ],
        ] {
            let args: Vec<&str> = args.into_iter().chain(["--model", model]).collect();
            let (ok, out, err) = gemm(&args, &[]);
            assert!(ok, "{args:?}: {err}");
            let name = if model == "table" { "timing model via the characterisation table" } else { "static estimate" };
            assert!(out.contains(&format!("cost model: {name}")), "{out}");
            for arch in ["gfx942", "gfx950"] {
                assert!(out.contains(&format!("\n{arch}: ")), "{args:?} {arch}: {out}");
            }
            assert!(out.contains(" us") && out.contains("cannot run: "), "{out}");
            assert!(out.contains("pick: gemm_gfx942") && out.contains("pick: gemm_gfx950"), "{out}");
            assert!(out.contains("the dispatcher (characterisation table) runs gemm_"), "{out}");
            // The table's pick is the dispatcher's, for every problem and arch.
            if model == "table" {
                assert!(!out.contains("a different kernel"), "{out}");
                assert!(out.contains("(the same)"), "{out}");
            }
        }
    }
    // The grouped problem in one launch of a grouped kernel (every group's leading dimensions
    // are multiples of 8), predicted by the timing model.
    assert!(gemm(
        &["plan", "--group", "512,1024,256", "--group", "0,1024,256", "--group", "64,1024,256", "--model", "static"],
        &[]
    )
    .1
    .contains("one grouped launch (timing model): gemm_gfx950_bf16_bf16_nn_128x128x64"),);
    let (ok, out, err) =
        gemm(&["plan", "--group", "200,64,64", "--group", "0,8,8", "--group", "64,128,32", "--arch", "gfx950"], &[]);
    assert!(ok, "{err}");
    assert!(out.contains("cost model: timing model"), "{out}");
    assert!(out.contains("pick: none: empty problems launch nothing"), "{out}");
    assert!(out.contains("in 2 launch(es) (sum of the picks)"), "{out}");
    assert!(
        out.contains("one grouped launch (timing model): gemm_gfx950_bf16_bf16_nn_") && out.contains("_grouped"),
        "{out}"
    );
    assert!(out.contains(", 3 workgroups;"), "{out}");
    // A small square problem ranked by the timing model: every runnable candidate has a time.
    let (ok, out, err) =
        gemm(&["plan", "--m", "256", "--n", "256", "--k", "64", "--arch", "gfx942", "--model", "timing"], &[]);
    assert!(ok, "{err}");
    assert!(out.contains("cost model: timing model (gemm_emu::timing"), "{out}");
    assert!(out.contains("pick: gemm_gfx942"), "{out}");
    // Beside each direct prediction, the table's composed one.
    assert!(out.contains("  table "), "{out}");
    assert!(!out.contains("inf us"), "{out}");
    let (ok, _, err) = gemm(&["plan", "--m", "8", "--n", "8", "--k", "8", "--arch", "gfx1100"], &[]);
    assert!(!ok && err.contains("gfx1100"), "{err}");
}

#[test]
fn the_call_log_reruns_with_bench_into_csv_and_svg() {
    let dir = std::env::temp_dir().join(format!("gemm-cli-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("calls.log");
    let lib = gemm_emu_hip::library_path().expect("libgemm_emu_hip.so next to the test binary");
    let env: Vec<(&str, &std::ffi::OsStr)> = vec![
        ("GEMM_LOG", "1".as_ref()),
        ("GEMM_LOG_FILE", log.as_os_str()),
        ("GEMM_HIP_LIBRARY", lib.as_os_str()),
        ("GEMM_EMU_HIP", "devices=gfx942,gfx950".as_ref()),
    ];
    let runs: [&[&str]; 3] = [
        &["--devices", "host", "run", "--m", "9", "--n", "7", "--k", "5", "--beta", "0.5", "--iters", "1"],
        &[
            "--devices",
            "host",
            "run",
            "--m",
            "6",
            "--n",
            "4",
            "--k",
            "3",
            "--batch",
            "3",
            "--iters",
            "1",
            "--layout",
            "col",
        ],
        &[
            "--devices",
            "hip:1",
            "run",
            "--m",
            "40",
            "--n",
            "24",
            "--k",
            "16",
            "--dtype",
            "bf16",
            "--out-dtype",
            "f32",
            "--ldc",
            "30",
            "--resident",
            "--iters",
            "1",
        ],
    ];
    for args in runs {
        let (ok, out, err) = gemm(args, &env);
        assert!(ok, "{args:?}: {out}{err}");
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let records = text.lines().filter(|l| l.starts_with("gemm-log ")).count();
    // 2 host runs of 1 warm-up + 1 timed call each, the resident run likewise.
    assert_eq!(records, 6, "{text}");
    assert!(text.contains("api=gemm ") && text.contains("api=gemm_strided_batched ") && text.contains("memory=device"));
    let csv = dir.join("bench.csv");
    let svg = dir.join("bench.svg");
    let (ok, out, err) = gemm(
        &[
            "bench",
            "--from",
            log.to_str().unwrap(),
            "--iters",
            "1",
            "--csv",
            csv.to_str().unwrap(),
            "--plot",
            svg.to_str().unwrap(),
        ],
        &env[2..],
    );
    assert!(ok, "{out}{err}");
    assert!(out.contains("reran 6 call(s), 6 ok"), "{out}");
    let table = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(table.lines().count(), 7, "{table}");
    assert!(table.lines().skip(1).all(|l| l.ends_with(",ok")), "{table}");
    assert!(table.contains("gemm_gfx950_bf16_f32"), "the resident call reran on the gfx950: {table}");
    assert!(std::fs::read_to_string(&svg).unwrap().contains("</svg>"));
    // A problem list (not a log) works too; a file without commands is an error.
    let list = dir.join("list.txt");
    std::fs::write(&list, "# problems\ngemm --devices host run --m 3 --n 3 --k 3\n").unwrap();
    // `--out` names the folder of both files (created if missing).
    let out_dir = dir.join("out");
    let (ok, out, _) = gemm(&["bench", "--from", list.to_str().unwrap(), "--out", out_dir.to_str().unwrap()], &[]);
    assert!(ok && out.contains("reran 1 call(s), 1 ok"), "{out}");
    assert!(std::fs::read_to_string(out_dir.join("gemm-bench.csv")).unwrap().lines().count() == 2);
    assert!(out_dir.join("gemm-bench.svg").exists());
    std::fs::write(&list, "nothing here\n").unwrap();
    let (ok, _, err) = gemm(&["bench", "--from", list.to_str().unwrap()], &[]);
    assert!(!ok && err.contains("no `gemm run` command"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(Path::new(env!("CARGO_BIN_EXE_gemm")).exists());
}
