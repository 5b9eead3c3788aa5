//! The device-memory C ABI from C (`tests/c/gemm_device_test.c`) on two emulated GPUs, with the
//! call log on; then the log of that run replayed as `gemm bench --from LOG` does
//! (`gemm_lab::replay`, the CLI's own code): every logged call reruns and the CSV has a row
//! for each.

use gemm_dispatch::call_log;
use gemm_lab::replay;
use gemm_tests::compile_and_run_c_with_env;
use std::ffi::OsStr;
use std::path::Path;

const MACHINE: &str = "devices=gfx942,gfx950;jitter_us=20;seed=5";

#[test]
fn device_memory_c_abi_and_its_call_log_replayed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let lib = gemm_emu_hip::library_path().expect("libgemm_emu_hip.so is built with the tests");
    let log = std::env::temp_dir().join(format!("gemm-device-abi-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let env = [
        ("GEMM_HIP_LIBRARY", Some(lib.as_os_str())),
        ("GEMM_RCCL_LIBRARY", Some(lib.as_os_str())),
        ("GEMM_EMU_HIP", Some(OsStr::new(MACHINE))),
        ("GEMM_DEVICES", None),
        ("GEMM_LOG", Some(OsStr::new("1"))),
        ("GEMM_LOG_FILE", Some(log.as_os_str())),
    ];
    let out = compile_and_run_c_with_env(&root.join("tests/c/gemm_device_test.c"), "device", false, &env);
    assert!(out.contains("all checks passed"), "{out}");

    // The log: one record per call that reached a device (2 GPUs x (1 GEMM + 1 strided batch +
    // 2 grouped calls of 4 groups + 2 decode-shaped GEMMs + 2 mixture-of-experts calls of 6
    // groups) good calls, plus the refused ones that got as far as the device checks).
    let text = std::fs::read_to_string(&log).expect("the C run wrote the call log");
    let _ = std::fs::remove_file(&log);
    let records: Vec<&str> = text.lines().filter(|l| l.starts_with("gemm-log ")).collect();
    let commands = call_log::commands(&text);
    assert_eq!(records.len(), commands.len(), "every record has its command:\n{text}");
    let ok: Vec<usize> = (0..records.len()).filter(|&i| records[i].ends_with("status=ok")).collect();
    assert_eq!(ok.len(), 2 * (1 + 1 + 2 * 4 + 2 + 2 * 6), "{text}");
    // The decode-shaped GEMMs ran the decode kernels (gemm-compiler `lower/decode.rs`) and the
    // decode-rows kernels (`lower/decode_rows.rs`) on both GPUs.
    assert_eq!(records.iter().filter(|r| r.contains("m=3 n=300") && r.contains("_dec")).count(), 2, "{text}");
    assert_eq!(records.iter().filter(|r| r.contains("m=24 n=28672") && r.contains("_decr")).count(), 2, "{text}");
    // The mixture-of-experts calls' 4 non-empty experts ran the grouped decode-rows kernel
    // (gemm-compiler `catalogue.rs`, `GROUPED_DECODE_ROWS`), twice on each GPU.
    let moe = |arch: &str| {
        records
            .iter()
            .filter(|r| r.contains("api=gemm_grouped_device[") && r.contains(&format!("gemm_{arch}_bf16_bf16_tn_")))
            .filter(|r| r.contains("_decr") && r.contains("_grouped"))
            .count()
    };
    assert_eq!((moe("gfx942"), moe("gfx950")), (8, 8), "{text}");
    for api in ["api=gemm_run_device", "api=gemm_strided_batched_device", "api=gemm_grouped_device[1/4]"] {
        assert!(records.iter().any(|r| r.contains(api)), "{api} missing:\n{text}");
    }
    assert!(records.iter().any(|r| r.contains("device=hip:1") && r.contains("memory=device")), "{text}");

    // Replay in this process against the same emulated machine.
    std::env::set_var("GEMM_HIP_LIBRARY", &lib);
    std::env::set_var("GEMM_RCCL_LIBRARY", &lib);
    std::env::set_var("GEMM_EMU_HIP", MACHINE);
    std::env::remove_var("GEMM_LOG");
    let rows: Vec<_> = commands
        .iter()
        .map(|c| {
            let spec = replay::parse(c).unwrap_or_else(|e| panic!("`{}` does not parse: {e}", c.join(" ")));
            let measured = replay::measure(&spec, 1);
            (spec, measured)
        })
        .collect();
    for &i in &ok {
        let (spec, r) = &rows[i];
        let m = r.as_ref().unwrap_or_else(|e| panic!("{}: {e}", spec.command));
        assert!(spec.resident, "{}", spec.command);
        assert!(m.error_ratio <= 1.0 && m.runs == 1, "{}: {m:?}", spec.command);
        let logged_kernel = records[i].split(" kernel=").nth(1).and_then(|s| s.split(' ').next()).unwrap();
        if logged_kernel.ends_with("_grouped") {
            // A group of a one-launch grouped call, replayed alone: a plain kernel runs it.
            assert!(m.kernel.as_deref().is_some_and(|k| !k.ends_with("_grouped")), "{}: {m:?}", spec.command);
        } else if logged_kernel != "-" {
            assert_eq!(m.kernel.as_deref(), Some(logged_kernel), "the rerun picks the logged kernel");
        }
    }
    let csv = replay::csv(&rows);
    assert_eq!(csv.lines().count(), rows.len() + 1, "{csv}");
    for &i in &ok {
        assert!(csv.lines().nth(i + 1).unwrap().ends_with(",ok"), "{csv}");
    }
    let path = std::env::temp_dir().join(format!("gemm-device-abi-{}.csv", std::process::id()));
    std::fs::write(&path, &csv).unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() > 0);
    let _ = std::fs::remove_file(&path);
}
