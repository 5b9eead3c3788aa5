//! Everything clang-22 -O3 emits for small HIP kernels (vector add, f16/bf16 math,
//! a shuffle reduction with LDS and atomics, an MFMA GEMM loop, fp8/bf16 conversions;
//! `tests/data/kernels.hip`) decodes, for gfx942 and gfx950, and prints back to text that
//! llvm-mc-22 assembles to the same bytes.

mod common;
use common::*;
use gemm_isa::{decode_all, Arch};
use std::process::Command;

fn tool(name: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(name).args(args).output().unwrap_or_else(|e| {
        panic!("cannot run {name} ({e}): install Debian's LLVM 22 (`apt-get install llvm-22 clang-22`); this test does not skip")
    });
    assert!(out.status.success(), "{name} {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn clang_kernels_decode_and_round_trip() {
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/kernels.hip");
    let dir = std::env::temp_dir().join(format!("gemm-isa-clang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for arch in Arch::ALL {
        let obj = dir.join(format!("k-{arch}.o"));
        let text = dir.join(format!("k-{arch}.text"));
        let (o, t) = (obj.to_str().unwrap(), text.to_str().unwrap());
        let arch_flag = format!("--offload-arch={arch}");
        let asm = dir.join(format!("k-{arch}.s"));
        let s = asm.to_str().unwrap();
        tool(
            "clang-22",
            &["-x", "hip", &arch_flag, "-nogpulib", "-nogpuinc", "--cuda-device-only", "-O3", "-S", src, "-o", s],
        );
        let mcpu = format!("-mcpu={arch}");
        tool("llvm-mc-22", &["-triple=amdgcn-amd-amdhsa", &mcpu, "-filetype=obj", s, "-o", o]);
        tool("llvm-objcopy-22", &["-O", "binary", "--only-section=.text", o, t]);
        let code = std::fs::read(&text).unwrap();
        assert!(code.len() > 400, "suspiciously little code for {arch}");
        let insts = decode_all(&code, arch).unwrap_or_else(|e| panic!("{arch}: {e}"));
        // s_code_end padding aside, LLVM's own disassembly has the same count.
        let dis = String::from_utf8(tool("llvm-objdump-22", &["-d", &format!("--mcpu={arch}"), o])).unwrap();
        let n_llvm = dis.lines().filter(|l| l.contains("// ") && l.starts_with('\t')).count();
        assert_eq!(insts.len(), n_llvm, "{arch}: instruction count differs from llvm-objdump");
        let lines: Vec<String> = insts.iter().map(|(_, i)| i.to_string()).collect();
        let llvm = llvm_mc(arch, &lines);
        for (((off, inst), line), res) in insts.iter().zip(&lines).zip(llvm) {
            let ours = inst.encode_bytes(arch).unwrap();
            assert_eq!(&code[*off..*off + ours.len()], &ours[..], "{arch} @{off:#x}: `{line}` re-encodes differently");
            assert_eq!(res, Ok(ours), "{arch} @{off:#x}: llvm-mc disagrees on `{line}`");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
