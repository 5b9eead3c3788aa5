//! Tests of the product as its users meet it. The README's Rust examples run as this crate's
//! doc tests (below), its C example and `tests/c/gemm_test.c` are compiled with the system C
//! compiler and linked against the library by `tests/c_abi.rs`.
#![doc = include_str!("../../README.md")]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where cargo put the library's cdylib and staticlib for this build (next to the test binaries).
pub fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("deps directory").to_path_buf();
    for dir in [deps.clone(), deps.parent().map(Path::to_path_buf).unwrap_or_default()] {
        if dir.join("libgemm_ffi.so").exists() && dir.join("libgemm_ffi.a").exists() {
            return dir;
        }
    }
    panic!("libgemm_ffi.so/.a not found next to {}; build gemm-ffi first", exe.display());
}

/// Compiles `source` against the library (shared or static) and runs it; returns its stdout.
pub fn compile_and_run_c(source: &Path, name: &str, link_static: bool) -> String {
    compile_and_run_c_with_env(source, name, link_static, &[])
}

/// As [`compile_and_run_c`], running the program with `env` set (a `None` value removes the
/// variable): the program is a process of its own, so this does not touch the test's environment.
pub fn compile_and_run_c_with_env(
    source: &Path,
    name: &str,
    link_static: bool,
    env: &[(&str, Option<&std::ffi::OsStr>)],
) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf();
    let libdir = library_dir();
    let out = std::env::temp_dir().join(format!("gemm-c-{name}-{}-{}", std::process::id(), link_static));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut cmd = Command::new(&cc);
    cmd.args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror"])
        .arg("-I")
        .arg(root.join("ffi/include"))
        .arg(source)
        .arg("-o")
        .arg(&out);
    if link_static {
        cmd.arg(libdir.join("libgemm_ffi.a")).args(["-lpthread", "-ldl", "-lm"]);
    } else {
        cmd.arg("-L").arg(&libdir).arg("-lgemm_ffi").arg(format!("-Wl,-rpath,{}", libdir.display())).arg("-lm");
    }
    let status = cmd.status().unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e} (install gcc)"));
    assert!(status.success(), "compiling {} failed", source.display());
    let mut program = Command::new(&out);
    // The rpath above names this build's library. `cargo test` puts `target/debug` on
    // LD_LIBRARY_PATH, which the loader searches before a RUNPATH: a libgemm_ffi.so left there
    // by an earlier `cargo build` (older kernels, an older table) would be the one that runs.
    program.env_remove("LD_LIBRARY_PATH");
    for (key, value) in env {
        match value {
            Some(v) => program.env(key, v),
            None => program.env_remove(key),
        };
    }
    let run = program.output().expect("run the C program");
    let _ = std::fs::remove_file(&out);
    let stdout = String::from_utf8_lossy(&run.stdout).to_string();
    assert!(
        run.status.success(),
        "{} failed ({}):\n{}\n{}",
        source.display(),
        run.status,
        stdout,
        String::from_utf8_lossy(&run.stderr)
    );
    stdout
}
