//! Shared helpers for the LLVM-oracle tests: finding the LLVM 22 tools (a missing tool is
//! a loud failure, never a skip), scratch directories, and turning a [`KernelSpec`] into
//! the `.amdhsa_kernel` directives and `.amdgpu_metadata` YAML that make `llvm-mc-22`
//! produce the same kernel.
#![allow(dead_code)]

use gemm_codeobject::elf::{self, Bytes, FileHeader, SectionHeader};
use gemm_codeobject::msgpack::Value;
use gemm_codeobject::{KernelSpec, Target};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The path of an LLVM 22 tool, or a panic that says how to get it.
pub fn tool(name: &str) -> PathBuf {
    let p = PathBuf::from("/usr/bin").join(name);
    if !p.exists() {
        panic!(
            "required LLVM 22 tool {name} not found at {}: install Debian's llvm-22, lld-22 and \
             clang-22 packages (apt-get install llvm-22 lld-22 clang-22). These tests are the \
             oracle for the code object writer and must not be skipped.",
            p.display()
        );
    }
    p
}

/// Runs a command; panics with its output if it fails. Returns stdout.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{cmd:?} failed with {}\nstdout:\n{}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Like [`run`] but also fails on anything written to stderr (warnings included).
pub fn run_quiet(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || !stderr.trim().is_empty() {
        panic!("{cmd:?} failed or warned ({}):\n{stderr}", out.status);
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A scratch directory removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "gemm-codeobject-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `llvm-mc-22 -filetype=obj` then `ld.lld-22 -shared`: the linked code object's bytes.
pub fn assemble_and_link(target: &Target, src: &str, dir: &TempDir, stem: &str) -> Vec<u8> {
    let s = dir.path(&format!("{stem}.s"));
    let o = dir.path(&format!("{stem}.o"));
    let co = dir.path(&format!("{stem}.co"));
    std::fs::write(&s, src).unwrap();
    run_quiet(
        Command::new(tool("llvm-mc-22"))
            .arg("-triple=amdgcn-amd-amdhsa")
            .arg(format!("-mcpu={}", target.arch.name()))
            .args(mattr(target))
            .arg("-filetype=obj")
            .arg(&s)
            .arg("-o")
            .arg(&o),
    );
    run_quiet(Command::new(tool("ld.lld-22")).arg("-shared").arg(&o).arg("-o").arg(&co));
    std::fs::read(&co).unwrap()
}

/// `-mattr` for the target's explicit XNACK/SRAMECC settings (none for "any").
pub fn mattr(target: &Target) -> Vec<String> {
    use gemm_codeobject::FeatureSetting;
    let mut f = Vec::new();
    for (name, s) in [("xnack", target.xnack), ("sramecc", target.sramecc)] {
        match s {
            FeatureSetting::Any => {}
            FeatureSetting::On => f.push(format!("+{name}")),
            FeatureSetting::Off => f.push(format!("-{name}")),
        }
    }
    if f.is_empty() {
        Vec::new()
    } else {
        vec![format!("-mattr={}", f.join(","))]
    }
}

/// Assembles instructions with `llvm-mc-22 -filetype=obj` and returns the `.text` bytes of
/// the relocatable object.
pub fn assemble_text(target: &Target, asm: &str, dir: &TempDir, stem: &str) -> Vec<u8> {
    let s = dir.path(&format!("{stem}.s"));
    let o = dir.path(&format!("{stem}.o"));
    std::fs::write(&s, format!(".text\n{asm}\n")).unwrap();
    run_quiet(
        Command::new(tool("llvm-mc-22"))
            .arg("-triple=amdgcn-amd-amdhsa")
            .arg(format!("-mcpu={}", target.arch.name()))
            .arg("-filetype=obj")
            .arg(&s)
            .arg("-o")
            .arg(&o),
    );
    let bytes = std::fs::read(&o).unwrap();
    section_bytes(&bytes, ".text").expect("assembled object has .text")
}

/// Section headers by name, from any ELF64 file.
pub fn sections(file: &[u8]) -> Vec<(String, SectionHeader)> {
    let b = Bytes::new(file, "file");
    let h = FileHeader::parse(&b).unwrap().expect("ELF");
    let hdrs: Vec<SectionHeader> =
        (0..u64::from(h.shnum)).map(|i| SectionHeader::parse(&b, h.shoff + i * elf::SHDR_SIZE).unwrap()).collect();
    let names = hdrs[usize::from(h.shstrndx)].data(&b).unwrap();
    hdrs.iter().map(|s| (names.cstr(s.name.into()).unwrap().to_owned(), *s)).collect()
}

/// The bytes of the named section.
pub fn section_bytes(file: &[u8], name: &str) -> Option<Vec<u8>> {
    let b = Bytes::new(file, "file");
    sections(file).into_iter().find(|(n, _)| n == name).map(|(_, s)| s.data(&b).unwrap().data().to_vec())
}

fn b(x: bool) -> u32 {
    x.into()
}

/// The `.amdhsa_kernel` block equivalent to `k`, every directive spelled out.
pub fn amdhsa_directives(k: &KernelSpec) -> String {
    let u = &k.user_sgprs;
    let s = &k.system_sgprs;
    let f = &k.float_mode;
    let r = &k.registers;
    let mut d = vec![
        ("group_segment_fixed_size", k.group_segment_fixed_size),
        ("private_segment_fixed_size", k.private_segment_fixed_size),
        ("kernarg_size", k.kernarg_size),
        ("user_sgpr_dispatch_ptr", b(u.dispatch_ptr)),
        ("user_sgpr_queue_ptr", b(u.queue_ptr)),
        ("user_sgpr_kernarg_segment_ptr", b(u.kernarg_segment_ptr)),
        ("user_sgpr_dispatch_id", b(u.dispatch_id)),
        ("user_sgpr_private_segment_size", b(u.private_segment_size)),
        ("user_sgpr_kernarg_preload_length", u.kernarg_preload_length),
        ("user_sgpr_kernarg_preload_offset", u.kernarg_preload_offset),
        ("uses_dynamic_stack", b(k.uses_dynamic_stack)),
        ("enable_private_segment", b(s.private_segment)),
        ("system_sgpr_workgroup_id_x", b(s.workgroup_id_x)),
        ("system_sgpr_workgroup_id_y", b(s.workgroup_id_y)),
        ("system_sgpr_workgroup_id_z", b(s.workgroup_id_z)),
        ("system_sgpr_workgroup_info", b(s.workgroup_info)),
        ("system_vgpr_workitem_id", k.workitem_ids as u32),
        ("next_free_vgpr", r.total_vgprs()),
        ("next_free_sgpr", r.sgprs),
        ("accum_offset", r.accum_offset()),
        ("reserve_vcc", b(r.uses_vcc)),
        ("float_round_mode_32", f.round_mode_32.into()),
        ("float_round_mode_16_64", f.round_mode_16_64.into()),
        ("float_denorm_mode_32", f.denorm_mode_32.into()),
        ("float_denorm_mode_16_64", f.denorm_mode_16_64.into()),
        ("dx10_clamp", b(f.dx10_clamp)),
        ("ieee_mode", b(f.ieee_mode)),
        ("fp16_overflow", b(f.fp16_overflow)),
        ("tg_split", b(k.tg_split)),
    ];
    let exc = [
        "exception_fp_ieee_invalid_op",
        "exception_fp_denorm_src",
        "exception_fp_ieee_div_zero",
        "exception_fp_ieee_overflow",
        "exception_fp_ieee_underflow",
        "exception_fp_ieee_inexact",
        "exception_int_div_zero",
    ];
    for (i, e) in exc.iter().enumerate() {
        d.push((e, u32::from(k.exceptions >> i) & 1));
    }
    let mut out = format!(".amdhsa_kernel {}\n", k.name);
    for (name, v) in d {
        out.push_str(&format!("  .amdhsa_{name} {v}\n"));
    }
    out.push_str(".end_amdhsa_kernel\n");
    out
}

/// Block-style YAML for a msgpack value, as `.amdgpu_metadata` takes it. Strings are
/// double-quoted so the YAML reader keeps them strings.
pub fn yaml(v: &Value) -> String {
    let mut out = String::from("---\n");
    emit(v, 0, &mut out);
    out.push_str("...\n");
    out
}

fn scalar(v: &Value) -> Option<String> {
    Some(match v {
        Value::UInt(u) => u.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Str(s) => format!("{s:?}"),
        Value::Array(a) if a.is_empty() => "[]".into(),
        _ => return None,
    })
}

fn emit(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Map(entries) => {
            for (k, val) in entries {
                out.push_str(&format!("{pad}{}:", k.as_str().expect("string keys")));
                child(val, indent + 2, out);
            }
        }
        Value::Array(items) => {
            for x in items {
                out.push_str(&format!("{pad}-"));
                child(x, indent + 2, out);
            }
        }
        other => panic!("unexpected top-level {other}"),
    }
}

fn child(v: &Value, indent: usize, out: &mut String) {
    match scalar(v) {
        Some(s) => out.push_str(&format!(" {s}\n")),
        None => {
            out.push('\n');
            emit(v, indent, out);
        }
    }
}

/// A complete `.s` that `llvm-mc-22` + `ld.lld-22` turn into the code object our writer
/// makes from `kernels`: same code (given as assembly), same directives, same metadata,
/// and llc's `s_code_end` tail.
pub fn llvm_source(target: &Target, kernels: &[(KernelSpec, String)]) -> String {
    let mut s = format!(".amdgcn_target \"{}\"\n.amdhsa_code_object_version 5\n.text\n", target.target_id());
    for (k, asm) in kernels {
        let n = &k.name;
        s.push_str(&format!(
            ".globl {n}\n.p2align 8\n.type {n},@function\n{n}:\n{asm}\n.L{n}_end:\n.size {n}, .L{n}_end-{n}\n"
        ));
    }
    s.push_str(".p2alignl 6, 0xbf9f0000\n.fill 256, 4, 0xbf9f0000\n.rodata\n.p2align 6\n");
    for (k, _) in kernels {
        s.push_str(&amdhsa_directives(k));
    }
    let md = gemm_codeobject::Metadata {
        version: gemm_codeobject::metadata::VERSION_V5.to_vec(),
        target: Some(target.target_id()),
        printf: None,
        kernels: kernels.iter().map(|(k, _)| k.metadata(target)).collect(),
    };
    s.push_str(".amdgpu_metadata\n");
    s.push_str(&yaml(&md.to_value()));
    s.push_str(".end_amdgpu_metadata\n");
    s
}

/// Writes `bytes` to `dir/name` and returns the path.
pub fn write_file(dir: &TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.path(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// A deterministic generator (SplitMix64) so the tests are seeded and repeatable.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    pub fn bool(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }
}

/// Not a test helper for paths outside the crate: the crate's own directory.
pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}
