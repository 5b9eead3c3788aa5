//! The fp8 scale options of the C ABI from C (`tests/c/gemm_fp8_test.c`): `gemm_run_scaled` on
//! the host and `gemm_run_device_scaled` on two emulated GPUs (gfx942 and gfx950,
//! `libgemm_emu_hip.so`) give the same bits, and bad scales get their statuses with nothing
//! launched.

use gemm_tests::compile_and_run_c_with_env;
use std::ffi::OsStr;
use std::path::Path;

#[test]
fn fp8_scales_through_the_c_abi_agree_on_host_and_emulated_gpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let lib = gemm_emu_hip::library_path().expect("libgemm_emu_hip.so is built with the tests");
    let env = [
        ("GEMM_HIP_LIBRARY", Some(lib.as_os_str())),
        ("GEMM_RCCL_LIBRARY", Some(lib.as_os_str())),
        ("GEMM_EMU_HIP", Some(OsStr::new("devices=gfx942,gfx950;jitter_us=20;seed=9"))),
        ("GEMM_DEVICES", None),
        ("GEMM_LOG", None),
    ];
    let out = compile_and_run_c_with_env(&root.join("tests/c/gemm_fp8_test.c"), "fp8", false, &env);
    assert!(out.contains("all checks passed"), "{out}");
}
