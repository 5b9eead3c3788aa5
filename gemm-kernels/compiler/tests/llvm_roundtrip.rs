//! LLVM 22 is the oracle for bytes (DESIGN.md rule 3): every catalogue code object
//! disassembles with `llvm-objdump-22 -d` to text that `llvm-mc-22` assembles back to the
//! same `.text` bytes, and `llvm-readelf-22 --notes` reads its metadata. The tools are
//! required: a missing tool fails the test with instructions, it never skips.

use gemm_codeobject::elf::{self, Bytes, FileHeader, SectionHeader};
use gemm_compiler::{catalogue, compile, CompiledKernel};
use std::path::{Path, PathBuf};
use std::process::Command;

fn tool(name: &str) -> PathBuf {
    let p = PathBuf::from("/usr/bin").join(name);
    assert!(
        p.exists(),
        "required LLVM 22 tool {name} not found at {}: install Debian's llvm-22 (apt-get install llvm-22 lld-22). \
         It is the oracle for the compiler's bytes; this test must not be skipped.",
        p.display()
    );
    p
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("warning"), "{cmd:?} warned:\n{err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn section(file: &[u8], name: &str) -> Vec<u8> {
    let b = Bytes::new(file, "file");
    let h = FileHeader::parse(&b).unwrap().expect("ELF");
    let hdrs: Vec<SectionHeader> =
        (0..u64::from(h.shnum)).map(|i| SectionHeader::parse(&b, h.shoff + i * elf::SHDR_SIZE).unwrap()).collect();
    let names = hdrs[usize::from(h.shstrndx)].data(&b).unwrap();
    let s = hdrs.iter().find(|s| names.cstr(s.name.into()).unwrap() == name).expect("section");
    s.data(&b).unwrap().data().to_vec()
}

/// A scratch folder per test (`tag`): the tests of this file run in parallel in one process
/// and each removes its folder at the end.
fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gemm-compiler-rt-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn round_trip(k: &CompiledKernel, dir: &Path) {
    let arch = k.config.arch.name();
    let co = dir.join(format!("{}.co", k.name));
    std::fs::write(&co, &k.code_object).unwrap();
    let dis = run(Command::new(tool("llvm-objdump-22")).arg("-d").arg(format!("--mcpu={arch}")).arg(&co));
    let mut asm = String::from(".text\n");
    let mut n = 0;
    let mut padding = 0;
    for line in dis.lines() {
        if !line.starts_with('\t') {
            continue;
        }
        let insn = line.split("//").next().unwrap().trim();
        // The writer pads .text with s_code_end (0xbf9f0000) as lld does; objdump shows
        // it as data after the kernel's symbol.
        if insn == ".long 0xbf9f0000" {
            padding += 1;
            continue;
        }
        assert_eq!(padding, 0, "{}: instruction after the padding: {line:?}", k.name);
        assert!(!insn.is_empty() && insn != "..." && !insn.contains("<unknown>"), "{}: bad line {line:?}", k.name);
        asm.push_str(insn);
        asm.push('\n');
        n += 1;
    }
    assert_eq!(n, k.insts.len(), "{}: objdump shows {n} instructions, we emitted {}", k.name, k.insts.len());
    let s = dir.join(format!("{}.s", k.name));
    let o = dir.join(format!("{}.o", k.name));
    std::fs::write(&s, &asm).unwrap();
    run(Command::new(tool("llvm-mc-22"))
        .arg("-triple=amdgcn-amd-amdhsa")
        .arg(format!("-mcpu={arch}"))
        .arg("-filetype=obj")
        .arg(&s)
        .arg("-o")
        .arg(&o));
    let text = section(&std::fs::read(&o).unwrap(), ".text");
    assert!(text == k.code, "{}: llvm-mc reassembles different bytes", k.name);
    let notes = run(Command::new(tool("llvm-readelf-22")).arg("--notes").arg(&co));
    for want in [
        format!(".name:           {}", k.name),
        format!(".group_segment_fixed_size: {}", k.lds_bytes),
        format!(".kernarg_segment_size: {}", gemm_compiler::kernel_args::size(&k.config)),
        format!(".agpr_count:     {}", k.usage.agprs),
        // Grouped kernels take a problem table instead of the plain arguments; split-K partial
        // kernels a K range per split instead of alpha and beta.
        match (k.config.grouped, k.config.split) {
            (true, _) => ".name:           table",
            (_, gemm_compiler::ir::SplitK::Partial) => ".name:           kchunk",
            _ => ".name:           alpha",
        }
        .to_string(),
        format!("amdhsa.target:   amdgcn-amd-amdhsa--{arch}"),
    ] {
        assert!(notes.contains(&want), "{}: readelf --notes lacks {want:?}:\n{notes}", k.name);
    }
    // fp8 kernels take the per-tensor scales and the scale vectors; fp8 split-K partial
    // kernels the vectors alone (the reduction's alpha and beta carry the per-tensor scales).
    if k.config.scaled() {
        let partial = k.config.split == gemm_compiler::ir::SplitK::Partial;
        let wants: &[&str] =
            if partial { &["scale_row", "scale_col"] } else { &["scale_a", "scale_b", "scale_d", "scale_row"] };
        for &want in wants {
            let want = format!(".name:           {want}");
            assert!(notes.contains(&want), "{}: readelf --notes lacks {want:?}", k.name);
        }
    }
}

#[test]
fn every_catalogue_kernel_round_trips_through_llvm() {
    let dir = tmpdir("catalogue");
    let configs = catalogue::configs();
    assert!(configs.len() >= 32);
    assert!(configs.iter().any(|c| c.ab_type.is_fp8()), "fp8 kernels are part of the round trip");
    assert!(configs.iter().any(|c| c.block_scale.mx().is_some()), "MX kernels (the scaled MFMA) too");
    for cfg in configs {
        let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        round_trip(&k, &dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

mod stages;

/// The three-stage kernels outside the catalogue (`tests/stages`: LDS-DMA, register-staged,
/// mixed and element copies on both archs): their code objects round-trip too, with the
/// three LDS buffers in the metadata.
#[test]
fn three_stage_kernels_round_trip_through_llvm() {
    let dir = tmpdir("stages");
    for (cfg, _) in stages::samples() {
        let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        assert_eq!(k.lds_bytes, 3 * k.kernel.lds_buffer_bytes());
        round_trip(&k, &dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
