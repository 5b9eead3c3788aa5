//! Shared test support: running llvm-mc-22 as the byte oracle.
#![allow(dead_code)]

use gemm_isa::Arch;
use std::io::Write;
use std::process::{Command, Stdio};

pub const LLVM_MC: &str = "llvm-mc-22";

/// Assemble `lines` with one llvm-mc-22 invocation. Each line gives its bytes or
/// LLVM's error message. Panics (test failure) when llvm-mc-22 cannot be run.
pub fn llvm_mc(arch: Arch, lines: &[String]) -> Vec<Result<Vec<u8>, String>> {
    let mut child = Command::new(LLVM_MC)
        .args(["-triple=amdgcn-amd-amdhsa", &format!("-mcpu={}", arch.name()), "-show-encoding"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {LLVM_MC} ({e}). These tests need Debian's LLVM 22 \
                 (`apt-get install llvm-22`, binaries in /usr/bin); they do not skip."
            )
        });
    let mut text = lines.join("\n");
    text.push('\n');
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child.wait_with_output().expect("llvm-mc output");
    writer.join().expect("writer").expect("write to llvm-mc");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut errors = std::collections::HashMap::new();
    for l in stderr.lines() {
        if let Some(rest) = l.strip_prefix("<stdin>:") {
            let mut it = rest.splitn(3, ':');
            let line: usize = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
            let _col = it.next();
            let msg = it.next().unwrap_or("").trim();
            if let Some(m) = msg.strip_prefix("error:") {
                errors.entry(line).or_insert_with(|| m.trim().to_string());
            }
        }
    }
    let mut encs = stdout.lines().filter_map(|l| {
        let p = l.find("encoding: [")?;
        let body = &l[p + 11..l.rfind(']')?];
        Some(
            body.split(',')
                .map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).expect("hex byte"))
                .collect::<Vec<u8>>(),
        )
    });
    (0..lines.len())
        .map(|i| match errors.get(&(i + 1)) {
            Some(e) => Err(e.clone()),
            None if lines[i].trim().is_empty() => Ok(Vec::new()),
            None => Ok(encs.next().expect("llvm-mc printed fewer encodings than lines")),
        })
        .collect()
}

pub fn hex_words(bytes: &[u8]) -> String {
    bytes
        .chunks(4)
        .map(|c| format!("{:08X}", u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn parse_hex_words(s: &str) -> Vec<u8> {
    s.split_whitespace().flat_map(|w| u32::from_str_radix(w, 16).expect("hex dword").to_le_bytes()).collect()
}
