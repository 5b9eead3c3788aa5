//! The C ABI from C: a program compiled with the system C compiler, linked against the library
//! (shared and static), checks GEMMs against its own reference and bad input against statuses.

use gemm_tests::{compile_and_run_c, compile_and_run_c_with_env};
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

#[test]
fn c_program_against_the_shared_library() {
    let out = compile_and_run_c(&root().join("tests/c/gemm_test.c"), "abi", false);
    assert!(out.contains("all checks passed"), "{out}");
}

#[test]
fn c_program_against_the_static_library() {
    let out = compile_and_run_c(&root().join("tests/c/gemm_test.c"), "abi", true);
    assert!(out.contains("all checks passed"), "{out}");
}

/// The C ABI on HIP devices: the program runs against the emulated HIP runtime
/// (`libgemm_emu_hip.so`, two GPUs), found through `GEMM_HIP_LIBRARY` as the real one would be,
/// and with no `GEMM_DEVICES` its default context is every HIP device.
#[test]
fn c_program_on_emulated_hip_devices() {
    let lib = gemm_emu_hip::library_path().expect("libgemm_emu_hip.so is built with the tests");
    let spec = std::ffi::OsStr::new("devices=gfx942,gfx950;jitter_us=20;seed=3");
    let env = [
        ("GEMM_HIP_LIBRARY", Some(lib.as_os_str())),
        ("GEMM_RCCL_LIBRARY", Some(lib.as_os_str())),
        ("GEMM_EMU_HIP", Some(spec)),
        ("GEMM_DEVICES", None),
    ];
    let out = compile_and_run_c_with_env(&root().join("tests/c/gemm_hip_test.c"), "hip", false, &env);
    assert!(out.contains("all checks passed"), "{out}");
}

/// The README's C example, extracted from its ```c block, compiles and runs.
#[test]
fn readme_c_example() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme.find("```c\n").expect("README has a C example") + 5;
    let end = start + readme[start..].find("```").unwrap();
    let path = std::env::temp_dir().join(format!("gemm-readme-{}.c", std::process::id()));
    std::fs::write(&path, &readme[start..end]).unwrap();
    let out = compile_and_run_c(&path, "readme", false);
    let _ = std::fs::remove_file(&path);
    assert!(out.contains("C[0][0] = 19"), "{out}");
}

/// The tensor-parallel C ABI (`tests/c/gemm_tp_test.c`): the program forks two ranks, each with
/// one emulated GPU whose RCCL talks over TCP (`nccl=tcp`), joined by a unique id that rank 0
/// writes to a file; both run `gemm_tp_row_device` (all-reduce, reduce-scatter) and
/// `gemm_tp_column_device` on odd shapes against the program's own reference, then the
/// refusals (NULL pointers, a rank out of range, bad ids) and an aborted group. The program
/// kills its ranks past 120 s, so a hang fails.
#[test]
fn c_program_runs_two_tensor_parallel_ranks() {
    let lib = gemm_emu_hip::library_path().expect("libgemm_emu_hip.so is built with the tests");
    let spec = std::ffi::OsStr::new("devices=gfx942;nccl=tcp;collective_timeout_ms=20000;launch_threads=1");
    let env = [
        ("GEMM_HIP_LIBRARY", Some(lib.as_os_str())),
        ("GEMM_RCCL_LIBRARY", Some(lib.as_os_str())),
        ("GEMM_EMU_HIP", Some(spec)),
        ("GEMM_DEVICES", None),
    ];
    let start = std::time::Instant::now();
    let out = compile_and_run_c_with_env(&root().join("tests/c/gemm_tp_test.c"), "tp", false, &env);
    assert!(out.contains("all checks passed"), "{out}");
    eprintln!("two tensor-parallel C ranks in {:?}", start.elapsed());
}
