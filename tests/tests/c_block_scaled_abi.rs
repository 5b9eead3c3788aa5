//! Block-scaled GEMMs through the C ABI from C (`tests/c/gemm_block_scaled_test.c`):
//! `gemm_run_block_scaled` on the host against the program's own reference (MX fp4 x fp8 with
//! E8M0 scales, DeepSeek-V3 block fp8 with f32 scales), every refusal's status with Y untouched,
//! and `gemm_run_device_block_scaled` on two emulated GPUs (gfx942: MX refused with the reason;
//! gfx950: no kernel wired yet), nothing launched.

use gemm_tests::compile_and_run_c_with_env;
use std::ffi::OsStr;
use std::path::Path;

#[test]
fn block_scaled_gemms_through_the_c_abi() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let lib = gemm_emu_hip::library_path().expect("libgemm_emu_hip.so is built with the tests");
    let env = [
        ("GEMM_HIP_LIBRARY", Some(lib.as_os_str())),
        ("GEMM_RCCL_LIBRARY", Some(lib.as_os_str())),
        ("GEMM_EMU_HIP", Some(OsStr::new("devices=gfx942,gfx950"))),
        ("GEMM_DEVICES", None),
        ("GEMM_LOG", None),
    ];
    let out = compile_and_run_c_with_env(&root.join("tests/c/gemm_block_scaled_test.c"), "block_scaled", false, &env);
    assert!(out.contains("all checks passed"), "{out}");
}

/// The README's block-scaled C example (its ```c block that calls `gemm_run_block_scaled`)
/// compiles and prints the result it promises.
#[test]
fn readme_block_scaled_c_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let block = readme
        .split("```c\n")
        .skip(1)
        .map(|b| &b[..b.find("```").expect("closed block")])
        .find(|b| b.contains("gemm_run_block_scaled"))
        .expect("README has a block-scaled C example");
    let path = std::env::temp_dir().join(format!("gemm-readme-block-scaled-{}.c", std::process::id()));
    std::fs::write(&path, block).unwrap();
    let out = gemm_tests::compile_and_run_c(&path, "readme_block_scaled", false);
    let _ = std::fs::remove_file(&path);
    assert!(out.contains("Y = [64, 64]"), "{out}");
}
