//! LLVM 22 is the oracle for bytes (DESIGN.md rule 3): every catalogue code object
//! disassembles with `llvm-objdump-22 -d` to text that `llvm-mc-22` assembles back to the
//! same `.text` bytes, and `llvm-readelf-22 --notes` reads its metadata. The tools are
//! required: a missing tool fails the test with instructions, it never skips.

use gemm_codeobject::elf::{self, Bytes, FileHeader, SectionHeader};
use gemm_compiler::ir::KernelConfig;
use gemm_compiler::{catalogue, compile, CompiledKernel};
use std::collections::HashMap;
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

/// Every section of an ELF file by name.
fn sections(file: &[u8]) -> HashMap<String, Vec<u8>> {
    let b = Bytes::new(file, "file");
    let h = FileHeader::parse(&b).unwrap().expect("ELF");
    let hdrs: Vec<SectionHeader> =
        (0..u64::from(h.shnum)).map(|i| SectionHeader::parse(&b, h.shoff + i * elf::SHDR_SIZE).unwrap()).collect();
    let names = hdrs[usize::from(h.shstrndx)].data(&b).unwrap();
    hdrs.iter().map(|s| (names.cstr(s.name.into()).unwrap().to_string(), s.data(&b).unwrap().data().to_vec())).collect()
}

/// A scratch folder per test (`tag`): the tests of this file run in parallel in one process
/// and each removes its folder at the end.
fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gemm-compiler-rt-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The kernels of a batch: at most this many, all of one arch.
const BATCH: usize = 48;

/// `configs` cut into batches of one arch and at most [`BATCH`] kernels, in their order.
fn batches(configs: &[KernelConfig]) -> Vec<&[KernelConfig]> {
    let mut out = Vec::new();
    let mut rest = configs;
    while !rest.is_empty() {
        let same = rest.iter().take_while(|c| c.arch == rest[0].arch).count();
        let (batch, tail) = rest.split_at(same.min(BATCH));
        out.push(batch);
        rest = tail;
    }
    out
}

/// The text after each file's header in the output of an LLVM tool given several files: the
/// header is the file's path as the tool prints it (`llvm-objdump`: `PATH:\tfile format ...`,
/// `llvm-readelf`: `File: PATH`, which it leaves out when given one file).
fn per_file(out: &str, files: &[PathBuf], header: impl Fn(&Path) -> String) -> Vec<String> {
    if let [one] = files {
        if !out.lines().any(|l| l == header(one)) {
            return vec![out.to_string()];
        }
    }
    let heads: HashMap<String, usize> = files.iter().enumerate().map(|(i, f)| (header(f), i)).collect();
    let mut texts = vec![None::<String>; files.len()];
    let mut current = None;
    for line in out.lines() {
        if let Some(&i) = heads.get(line) {
            assert!(texts[i].is_none(), "{} appears twice in the tool's output", files[i].display());
            texts[i] = Some(String::new());
            current = Some(i);
        } else if let Some(i) = current {
            let t = texts[i].as_mut().unwrap();
            t.push_str(line);
            t.push('\n');
        }
    }
    texts.into_iter().zip(files).map(|(t, f)| t.unwrap_or_else(|| panic!("no output for {}", f.display()))).collect()
}

/// The round trip of a batch of kernels of one arch (`tag` names its files): one
/// `llvm-objdump-22 -d` of all their code objects, one `llvm-mc-22` assembling every kernel's
/// disassembly into a section of its own (`.text.kN`), one `llvm-readelf-22 --notes`; then every
/// kernel checked on its own as if it had been alone (LLVM's tools start in about 30 ms each,
/// which was 80 s of three runs per kernel on the 792 catalogue kernels).
fn round_trip(ks: &[CompiledKernel], dir: &Path, tag: &str) {
    let arch = ks[0].config.arch;
    assert!(ks.iter().all(|k| k.config.arch == arch), "a batch is of one arch");
    let arch = arch.name();
    let cos: Vec<PathBuf> = ks
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let co = dir.join(format!("{tag}-{i}.co"));
            std::fs::write(&co, &k.code_object).unwrap();
            co
        })
        .collect();
    let dis = run(Command::new(tool("llvm-objdump-22")).arg("-d").arg(format!("--mcpu={arch}")).args(&cos));
    let dis = per_file(&dis, &cos, |co| format!("{}:\tfile format elf64-amdgpu", co.display()));
    let mut asm = String::new();
    for (i, (k, dis)) in ks.iter().zip(&dis).enumerate() {
        asm.push_str(&format!(".section .text.k{i},\"ax\",@progbits\n"));
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
    }
    let s = dir.join(format!("{tag}.s"));
    let o = dir.join(format!("{tag}.o"));
    std::fs::write(&s, &asm).unwrap();
    run(Command::new(tool("llvm-mc-22"))
        .arg("-triple=amdgcn-amd-amdhsa")
        .arg(format!("-mcpu={arch}"))
        .arg("-filetype=obj")
        .arg(&s)
        .arg("-o")
        .arg(&o));
    let texts = sections(&std::fs::read(&o).unwrap());
    let notes = run(Command::new(tool("llvm-readelf-22")).arg("--notes").args(&cos));
    let notes = per_file(&notes, &cos, |co| format!("File: {}", co.display()));
    for (i, (k, notes)) in ks.iter().zip(&notes).enumerate() {
        let text = texts.get(&format!(".text.k{i}")).unwrap_or_else(|| panic!("{}: no section .text.k{i}", k.name));
        assert!(text == &k.code, "{}: llvm-mc reassembles different bytes", k.name);
        check_notes(k, notes);
    }
}

/// What `llvm-readelf-22 --notes` reads of `k`'s metadata.
fn check_notes(k: &CompiledKernel, notes: &str) {
    let arch = k.config.arch.name();
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
            // The transpose pre-pass copies bytes: no alpha.
            (_, gemm_compiler::ir::SplitK::Transpose) => ".name:           ldy",
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

/// Compiles and round-trips `configs` in batches, the batches on all cores (`par::map`).
fn round_trip_all(configs: &[KernelConfig], dir: &Path, check: impl Fn(&CompiledKernel) + Sync) {
    let batches = batches(configs);
    let tags: Vec<(usize, &[KernelConfig])> = batches.into_iter().enumerate().collect();
    par::map(&tags, |&(b, cfgs)| {
        let ks: Vec<CompiledKernel> =
            cfgs.iter().map(|&cfg| compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()))).collect();
        ks.iter().for_each(&check);
        round_trip(&ks, dir, &format!("batch{b}"));
    });
}

#[test]
fn every_catalogue_kernel_round_trips_through_llvm() {
    let dir = tmpdir("catalogue");
    let configs = catalogue::configs();
    assert!(configs.len() >= 32);
    assert!(configs.iter().any(|c| c.ab_type.is_fp8()), "fp8 kernels are part of the round trip");
    assert!(configs.iter().any(|c| c.block_scale.mx().is_some()), "MX kernels (the scaled MFMA) too");
    round_trip_all(&configs, &dir, |_| ());
    let _ = std::fs::remove_dir_all(&dir);
}

mod par;
mod stages;

/// The three-stage kernels outside the catalogue (`tests/stages`: LDS-DMA, register-staged,
/// mixed and element copies on both archs): their code objects round-trip too, with the
/// three LDS buffers in the metadata.
#[test]
fn three_stage_kernels_round_trip_through_llvm() {
    let dir = tmpdir("stages");
    let configs: Vec<KernelConfig> = stages::samples().into_iter().map(|(cfg, _)| cfg).collect();
    round_trip_all(&configs, &dir, |k| assert_eq!(k.lds_bytes, 3 * k.kernel.lds_buffer_bytes()));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The transpose pre-pass kernels (`lower/transpose.rs`) alone: part of the catalogue round trip
/// above, and quick to run on their own after a change to them.
#[test]
fn transpose_kernels_round_trip_through_llvm() {
    let dir = tmpdir("transpose");
    let configs: Vec<KernelConfig> =
        catalogue::configs().into_iter().filter(|c| c.split == gemm_compiler::ir::SplitK::Transpose).collect();
    assert_eq!(configs.len(), 2, "one per arch");
    round_trip_all(&configs, &dir, |k| assert_eq!(k.lds_bytes, gemm_compiler::lower::TRANSPOSE_LDS_BYTES));
    let _ = std::fs::remove_dir_all(&dir);
}
