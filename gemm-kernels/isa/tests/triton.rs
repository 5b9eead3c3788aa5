//! Foreign code through the instruction table: every instruction of the Triton 3.9 GEMM
//! code objects kept as emulator test data (`../emulator/tests/data/triton/`, gfx942 and
//! gfx950: scratch spills, `v_bitop3_b32` with its truth table, `v_mfma_*_f8f6f4`,
//! transpose reads) decodes, re-encodes to the same bytes, and prints text that
//! llvm-mc-22 assembles to those bytes; the instruction count equals llvm-objdump-22's.

mod common;
use common::*;
use gemm_isa::{decode_all, Arch};
use std::path::PathBuf;
use std::process::Command;

fn tool(name: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(name).args(args).output().unwrap_or_else(|e| {
        panic!("cannot run {name} ({e}): install Debian's LLVM 22 (`apt-get install llvm-22`); this test does not skip")
    });
    assert!(out.status.success(), "{name} {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn triton_code_objects_decode_and_round_trip_through_llvm() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../emulator/tests/data/triton");
    let tmp = std::env::temp_dir().join(format!("gemm-isa-triton-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("emulator/tests/data/triton")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "hsaco"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "expected the Triton set in {}", dir.display());
    let (mut total, mut seen_bitop3, mut seen_scratch, mut seen_f8f6f4) = (0, false, false, false);
    for f in &files {
        let name = f.file_name().unwrap().to_str().unwrap();
        let arch = if name.contains("gfx950") { Arch::Gfx950 } else { Arch::Gfx942 };
        let text = tmp.join(format!("{name}.text"));
        let (fs, ts) = (f.to_str().unwrap(), text.to_str().unwrap());
        tool("llvm-objcopy-22", &["-O", "binary", "--only-section=.text", fs, ts]);
        let code = std::fs::read(&text).unwrap();
        let insts = decode_all(&code, arch).unwrap_or_else(|e| panic!("{name}: {e}"));
        let dis = String::from_utf8(tool("llvm-objdump-22", &["-d", &format!("--mcpu={arch}"), fs])).unwrap();
        let n_llvm = dis.lines().filter(|l| l.contains("// ") && l.starts_with('\t')).count();
        assert_eq!(insts.len(), n_llvm, "{name}: instruction count differs from llvm-objdump");
        let lines: Vec<String> = insts.iter().map(|(_, i)| i.to_string()).collect();
        for l in &lines {
            seen_bitop3 |= l.starts_with("v_bitop3_b32") && l.contains("bitop3:");
            seen_scratch |= l.starts_with("scratch_");
            seen_f8f6f4 |= l.contains("_f8f6f4");
        }
        let llvm = llvm_mc(arch, &lines);
        for (((off, inst), line), res) in insts.iter().zip(&lines).zip(llvm) {
            let ours = inst.encode_bytes(arch).unwrap();
            assert_eq!(&code[*off..*off + ours.len()], &ours[..], "{name} @{off:#x}: `{line}` re-encodes differently");
            assert_eq!(res, Ok(ours), "{name} @{off:#x}: llvm-mc-22 disagrees on `{line}`");
        }
        total += insts.len();
    }
    assert!(seen_bitop3 && seen_scratch && seen_f8f6f4, "the set lost bitop3, scratch or f8f6f4 instructions");
    assert!(total > 50_000, "only {total} instructions");
    let _ = std::fs::remove_dir_all(&tmp);
}
