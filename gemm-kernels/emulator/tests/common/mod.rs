//! Test helpers: compile HIP/assembly with LLVM 22 (failing loudly when it is missing),
//! fill buffers from seeds, launch.
#![allow(dead_code)]

use gemm_emu::{Arch, Device, LaunchOptions, LaunchReport, Mode, Schedule};
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn tool(name: &str) -> PathBuf {
    let p = PathBuf::from("/usr/bin").join(name);
    assert!(
        p.exists(),
        "LLVM 22 tool `{}` not found: install Debian's llvm-22/clang-22 (the emulator's tests compile kernels with it)",
        p.display()
    );
    p
}

/// A fresh directory per call: tests of one binary run on parallel threads and several
/// compile the same kernel, and clang removes its output file before writing it, so a
/// shared path let one test read while another rewrote it.
fn out_dir() -> PathBuf {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gemm-emu-kernels").join(format!("{}-{n}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// Compiles `tests/hip/<name>.hip` for `arch` with clang-22 -O3 (code object v5), with
/// extra `-D` defines; returns the code object bytes.
pub fn hip(name: &str, arch: Arch, defines: &[&str]) -> Vec<u8> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hip").join(format!("{name}.hip"));
    let tag = defines.join("_").replace(['=', '-'], "");
    let out = out_dir().join(format!("{name}-{}-{tag}.co", arch.name()));
    let mut c = Command::new(tool("clang-22"));
    c.args([
        "-x",
        "hip",
        &format!("--offload-arch={}", arch.name()),
        "-nogpulib",
        "-nogpuinc",
        "--cuda-device-only",
        "--no-gpu-bundle-output",
        "-O3",
        "-mcode-object-version=5",
    ]);
    for d in defines {
        c.arg(format!("-D{d}"));
    }
    c.arg("-o").arg(&out).arg(&src);
    run(&mut c);
    std::fs::read(&out).unwrap()
}

/// Compiles HIP to assembly text (to patch it), then assembles and links text.
pub fn hip_asm(name: &str, arch: Arch, defines: &[&str]) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hip").join(format!("{name}.hip"));
    let tag = defines.join("_").replace(['=', '-'], "");
    let out = out_dir().join(format!("{name}-{}-{tag}.s", arch.name()));
    let mut c = Command::new(tool("clang-22"));
    c.args([
        "-x",
        "hip",
        &format!("--offload-arch={}", arch.name()),
        "-nogpulib",
        "-nogpuinc",
        "--cuda-device-only",
        "-O3",
        "-mcode-object-version=5",
        "-S",
    ]);
    for d in defines {
        c.arg(format!("-D{d}"));
    }
    c.arg("-o").arg(&out).arg(&src);
    run(&mut c);
    std::fs::read_to_string(&out).unwrap()
}

/// Assembles with llvm-mc-22 and links with ld.lld-22.
pub fn assemble(text: &str, arch: Arch, tag: &str) -> Vec<u8> {
    let d = out_dir();
    let s = d.join(format!("{tag}-{}.s", arch.name()));
    let o = d.join(format!("{tag}-{}.o", arch.name()));
    let co = d.join(format!("{tag}-{}.co", arch.name()));
    std::fs::write(&s, text).unwrap();
    run(Command::new(tool("llvm-mc-22"))
        .args(["-triple=amdgcn-amd-amdhsa", &format!("-mcpu={}", arch.name()), "-filetype=obj", "-o"])
        .arg(&o)
        .arg(&s));
    run(Command::new(tool("ld.lld-22")).arg("-shared").arg("-o").arg(&co).arg(&o));
    std::fs::read(&co).unwrap()
}

/// llc-22 on LLVM IR text, to assembly.
pub fn llc(ir: &str, arch: Arch, tag: &str) -> String {
    let d = out_dir();
    let ll = d.join(format!("{tag}-{}.ll", arch.name()));
    let s = d.join(format!("{tag}-{}.llc.s", arch.name()));
    std::fs::write(&ll, ir).unwrap();
    run(Command::new(tool("llc-22"))
        .args(["-mtriple=amdgcn-amd-amdhsa", &format!("-mcpu={}", arch.name()), "--amdhsa-code-object-version=5", "-o"])
        .arg(&s)
        .arg(&ll));
    std::fs::read_to_string(&s).unwrap()
}

pub fn schedules(seeds: &[u64]) -> Vec<Schedule> {
    let mut v = Vec::new();
    for &seed in seeds {
        for mode in Mode::ALL {
            v.push(Schedule { mode, seed });
        }
    }
    v
}

pub fn opts(s: Schedule) -> LaunchOptions {
    LaunchOptions { schedule: s, threads: 2, ..Default::default() }
}

pub fn upload(dev: &Device, bytes: &[u8]) -> u64 {
    let p = dev.alloc(bytes.len() as u64).unwrap();
    dev.copy_in(p, bytes).unwrap();
    p
}

pub fn download(dev: &Device, p: u64, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    dev.copy_out(p, &mut v).unwrap();
    v
}

pub fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

pub fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub struct Args(pub Vec<u8>);
impl Args {
    pub fn new() -> Self {
        Args(Vec::new())
    }
    pub fn ptr(mut self, p: u64) -> Self {
        while !self.0.len().is_multiple_of(8) {
            self.0.push(0);
        }
        self.0.extend_from_slice(&p.to_le_bytes());
        self
    }
    pub fn u32(mut self, v: u32) -> Self {
        while !self.0.len().is_multiple_of(4) {
            self.0.push(0);
        }
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
}

pub fn assert_clean(r: &LaunchReport) {
    assert!(r.reports.is_empty(), "unexpected checker findings:\n{r}");
}
