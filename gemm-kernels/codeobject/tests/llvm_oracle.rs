//! Our writer against LLVM 22 as the oracle (DESIGN.md rule 3, ISA.md 5):
//! * the same kernels, written by us and by `llvm-mc-22` + `ld.lld-22 -shared` from a `.s`
//!   with the equivalent `.amdhsa_kernel` directives and metadata, give identical kernel
//!   descriptors (all 64 bytes, over a range of register counts, AGPR splits, LDS sizes,
//!   user/system SGPRs and modes), and identical loaded sections and program headers;
//! * `llvm-readelf-22 -a --notes` accepts our object and shows the metadata we wrote;
//! * `llvm-objdump-22 -d` disassembles our `.text` to text that `llvm-mc-22` assembles
//!   back to the same bytes.

mod common;

use common::*;
use gemm_codeobject::elf::{self, Bytes, FileHeader, ProgramHeader};
use gemm_codeobject::{
    write_code_object, Arch, CodeObject, FeatureSetting, FloatMode, KernelArg, KernelSpec, RegisterUsage, SystemSgprs,
    Target, UserSgprs, WorkitemIds,
};
use std::process::Command;

/// Real instruction sequences, valid on gfx942 and gfx950, used as kernel bodies.
const BODIES: [&str; 4] = [
    "s_load_dwordx2 s[0:1], s[4:5], 0x0\n\
     s_waitcnt lgkmcnt(0)\n\
     v_mov_b32_e32 v0, s0\n\
     global_load_dwordx4 v[0:3], v4, s[0:1] offset:16\n\
     s_waitcnt vmcnt(0)\n\
     ds_write_b128 v4, v[0:3] offset:256\n\
     s_barrier\n\
     s_endpgm",
    "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]\n\
     s_nop 7\n\
     s_nop 7\n\
     v_accvgpr_read_b32 v0, a0\n\
     buffer_store_dword v0, v1, s[4:7], 0 offen\n\
     s_endpgm",
    "s_mov_b32 s0, 0x12345678\n\
     s_add_u32 s0, s1, s2\n\
     ds_read_b128 v[0:3], v4 offset:8\n\
     s_waitcnt lgkmcnt(0)\n\
     v_add_f32_e32 v0, v1, v0\n\
     s_setprio 2\n\
     s_endpgm",
    "buffer_load_dword v1, s[4:7], 0 offen lds\n\
     s_waitcnt vmcnt(0)\n\
     s_endpgm",
];

/// Kernels spanning the descriptor's input space: the register counts the task names
/// (1, 9, 128, 256 with AGPRs, 512), SGPRs 0..102, accum offsets, LDS sizes, work-item
/// IDs, user/system SGPR combinations, modes; then seeded random ones.
fn kernel_specs(arch: Arch, seed: u64) -> Vec<KernelSpec> {
    let regs = |vgprs, agprs, accum: Option<u32>, sgprs| RegisterUsage {
        vgprs,
        agprs,
        accum_offset: accum,
        sgprs,
        uses_vcc: true,
        uses_flat_scratch: false,
    };
    let fixed = [
        regs(1, 0, None, 8),
        regs(9, 0, None, 16),
        regs(128, 0, None, 24),
        regs(128, 128, None, 40),
        regs(256, 256, None, 96),
        regs(256, 0, None, 102),
        regs(0, 0, None, 0),
        regs(3, 4, None, 3),
        regs(20, 64, Some(32), 10),
        regs(22, 0, Some(24), 11),
        regs(6, 8, Some(256), 101),
        regs(100, 200, Some(104), 55),
    ];
    let lds = [0, 4096, 65536, 163840, 12, 32768];
    let mut rng = Rng(seed);
    let mut specs = Vec::new();
    for i in 0..28 {
        let r = if i < fixed.len() {
            fixed[i]
        } else {
            let vgprs = rng.below(257) as u32;
            let agprs = if rng.bool() { rng.below(257) as u32 } else { 0 };
            let base = vgprs.max(1).next_multiple_of(4);
            let accum = if agprs > 0 && rng.bool() {
                let hi = (512 - agprs).min(256);
                (base <= hi).then(|| base + 4 * rng.below(u64::from((hi - base) / 4 + 1)) as u32)
            } else {
                None
            };
            let mut r = regs(vgprs, agprs, accum, rng.below(103) as u32);
            if r.total_vgprs() > 512 {
                r.agprs = 512 - r.accum_offset();
            }
            r.uses_vcc = rng.bool();
            r
        };
        let mut k = KernelSpec::new(format!("kernel_{}_{i}", arch.name()), Vec::new());
        k.registers = r;
        k.group_segment_fixed_size = lds[i % lds.len()];
        k.workitem_ids = [WorkitemIds::X, WorkitemIds::Xy, WorkitemIds::Xyz][i % 3];
        k.user_sgprs = UserSgprs {
            dispatch_ptr: i % 4 == 1,
            queue_ptr: i % 5 == 2,
            kernarg_segment_ptr: i % 2 == 0,
            dispatch_id: i % 7 == 3,
            private_segment_size: i % 6 == 5,
            kernarg_preload_length: if i % 8 == 4 { 2 + (i as u32 % 3) } else { 0 },
            kernarg_preload_offset: 0,
        };
        k.system_sgprs = SystemSgprs {
            workgroup_id_x: i % 9 != 8,
            workgroup_id_y: i % 2 == 1,
            workgroup_id_z: i % 3 == 2,
            workgroup_info: i % 10 == 7,
            private_segment: i % 4 == 3,
        };
        if k.system_sgprs.private_segment {
            k.private_segment_fixed_size = 16 * i as u32;
            k.uses_dynamic_stack = i % 8 == 7;
        }
        k.float_mode = if i % 2 == 0 {
            FloatMode::LLC_DEFAULT
        } else {
            FloatMode {
                round_mode_32: (i % 4) as u8,
                round_mode_16_64: ((i / 2) % 4) as u8,
                denorm_mode_32: ((i / 3) % 4) as u8,
                denorm_mode_16_64: (i % 3) as u8,
                dx10_clamp: i % 5 != 0,
                ieee_mode: i % 3 != 0,
                fp16_overflow: i % 7 == 0,
            }
        };
        k.exceptions = if i % 5 == 4 { ((i * 37) & 0x7f) as u8 } else { 0 };
        k.tg_split = i % 6 == 1;
        k.max_flat_workgroup_size = [64, 256, 1024][i % 3];
        k.kernarg_size = 24 + 8 * (i as u32 % 3);
        k.kernarg_align = 8;
        k.args = vec![
            KernelArg::global_buffer("out", 0),
            KernelArg::global_buffer("in", 8),
            KernelArg::by_value("n", 16, 4),
            KernelArg::hidden("block_count_x", 20, 4),
        ];
        if i % 3 == 1 {
            k.reqd_workgroup_size = Some([64, 1, 1]);
            k.uniform_work_group_size = true;
        }
        k.sgpr_spill_count = (i % 2) as u32;
        specs.push(k);
    }
    specs
}

struct Pair {
    target: Target,
    specs: Vec<KernelSpec>,
    ours: Vec<u8>,
    llvm: Vec<u8>,
    dir: TempDir,
}

/// Builds the LLVM object from the `.s`, takes the assembled code of each kernel from it
/// (through our reader), and writes our object with that code.
fn build_pair(arch: Arch, seed: u64) -> Pair {
    let target = Target::new(arch);
    let dir = TempDir::new(&format!("oracle-{}", arch.name()));
    let mut specs = kernel_specs(arch, seed);
    let with_asm: Vec<(KernelSpec, String)> =
        specs.iter().enumerate().map(|(i, k)| (k.clone(), BODIES[i % BODIES.len()].to_owned())).collect();
    let src = llvm_source(&target, &with_asm);
    let llvm = assemble_and_link(&target, &src, &dir, "llvm");
    let parsed = CodeObject::parse(&llvm).expect("our reader parses LLVM's object");
    for k in specs.iter_mut() {
        k.code = parsed.kernel(&k.name).expect("kernel in LLVM object").code.clone();
        assert!(!k.code.is_empty());
    }
    // The code must also be what llvm-mc makes of the body on its own.
    let first = assemble_text(&target, BODIES[0], &dir, "body0");
    assert_eq!(specs[0].code, first);
    let ours = write_code_object(&target, &specs).expect("write");
    Pair { target, specs, ours, llvm, dir }
}

fn check_descriptors(p: &Pair) {
    let ours = CodeObject::parse(&p.ours).unwrap();
    let llvm = CodeObject::parse(&p.llvm).unwrap();
    assert_eq!(ours.kernels.len(), p.specs.len());
    assert_eq!(llvm.kernels.len(), p.specs.len());
    for spec in &p.specs {
        let a = ours.kernel(&spec.name).unwrap();
        let b = llvm.kernel(&spec.name).unwrap();
        assert_eq!(
            a.descriptor.to_bytes(),
            b.descriptor.to_bytes(),
            "kernel {} ({:?}):\nours {:#?}\nllvm {:#?}",
            spec.name,
            spec.registers,
            a.descriptor,
            b.descriptor
        );
        assert_eq!(a.descriptor_address, b.descriptor_address);
        assert_eq!(a.entry_address, b.entry_address);
        assert_eq!(a.code, spec.code);
        assert_eq!(a.metadata, b.metadata, "metadata of {}", spec.name);
        assert_eq!(a.metadata.as_ref().unwrap(), &spec.metadata(&p.target));
    }
    assert_eq!(ours.metadata, llvm.metadata);
    assert_eq!(ours.raw_metadata, llvm.raw_metadata);
}

/// The loaded part of the file (ELF header fields, program headers, allocated sections'
/// headers and bytes) must be identical to lld's.
fn check_layout_identical(p: &Pair) {
    let (a, b) = (Bytes::new(&p.ours, "ours"), Bytes::new(&p.llvm, "llvm"));
    let (ha, hb) = (FileHeader::parse(&a).unwrap().unwrap(), FileHeader::parse(&b).unwrap().unwrap());
    assert_eq!(p.ours[..16], p.llvm[..16], "e_ident");
    assert_eq!(
        (ha.e_type, ha.machine, ha.flags, ha.phoff, ha.phnum),
        (hb.e_type, hb.machine, hb.flags, hb.phoff, hb.phnum)
    );
    for i in 0..u64::from(ha.phnum) {
        let pa = ProgramHeader::parse(&a, ha.phoff + i * elf::PHDR_SIZE).unwrap();
        let pb = ProgramHeader::parse(&b, hb.phoff + i * elf::PHDR_SIZE).unwrap();
        assert_eq!(pa, pb, "program header {i}");
    }
    let sa = sections(&p.ours);
    let sb = sections(&p.llvm);
    for name in [".note", ".dynsym", ".gnu.hash", ".hash", ".dynstr", ".rodata", ".text", ".dynamic", ".relro_padding"]
    {
        let (ia, x) = sa.iter().enumerate().find(|(_, s)| s.0 == name).unwrap();
        let (ib, y) = sb.iter().enumerate().find(|(_, s)| s.0 == name).unwrap();
        assert_eq!(ia, ib, "index of {name}");
        let mut x = x.1;
        x.name = y.1.name;
        assert_eq!(x, y.1, "section header {name}");
        assert_eq!(x.data(&a).unwrap().data(), y.1.data(&b).unwrap().data(), "contents of {name}");
    }
}

fn check_readelf(p: &Pair) {
    let path = write_file(&p.dir, "ours.co", &p.ours);
    let out = run_quiet(Command::new(tool("llvm-readelf-22")).arg("-a").arg("--notes").arg(&path));
    let feature = |name: &str, s: FeatureSetting| match s {
        FeatureSetting::Any => name.to_owned(),
        FeatureSetting::On => format!("{name}+"),
        FeatureSetting::Off => format!("{name}-"),
    };
    let flags = format!(
        "{:#x}, {}, {}, {}",
        p.target.e_flags(),
        p.target.arch.name(),
        feature("xnack", p.target.xnack),
        feature("sramecc", p.target.sramecc)
    );
    for want in [
        "OS/ABI:                            AMDGPU - HSA".to_owned(),
        "ABI Version:                       3".to_owned(),
        "Type:                              DYN (Shared object file)".to_owned(),
        format!("Flags:                             {flags}"),
        "NT_AMDGPU_METADATA (AMDGPU Metadata)".to_owned(),
        // YAML quotes the ID when it carries ':'-separated features.
        if p.target.target_id().contains(':') {
            format!("amdhsa.target:   '{}'", p.target.target_id())
        } else {
            format!("amdhsa.target:   {}", p.target.target_id())
        },
        "amdhsa.version:\n  - 1\n  - 2".to_owned(),
    ] {
        assert!(out.contains(&want), "llvm-readelf output lacks {want:?}:\n{out}");
    }
    // Per-kernel metadata values as llvm-readelf renders them.
    for spec in &p.specs {
        let md = spec.metadata(&p.target);
        let block_start = out
            .find(&format!(".name:           {}\n", spec.name))
            .unwrap_or_else(|| panic!("kernel {} not in notes", spec.name));
        // The kernel's map is printed in key order; .name sits between .max_flat... and
        // .private_segment_fixed_size; look at the text around it.
        let from = out[..block_start].rfind("  - .agpr_count:").unwrap();
        let to = out[block_start..].find("  - .agpr_count:").map_or(out.len(), |e| block_start + e);
        let block = &out[from..to];
        let mut expect = vec![
            (".agpr_count:", md.agpr_count.unwrap().to_string()),
            (".vgpr_count:", md.vgpr_count.to_string()),
            (".sgpr_count:", md.sgpr_count.to_string()),
            (".group_segment_fixed_size:", md.group_segment_fixed_size.to_string()),
            (".kernarg_segment_size:", md.kernarg_segment_size.to_string()),
            (".max_flat_workgroup_size:", md.max_flat_workgroup_size.to_string()),
            (".symbol:", format!("{}.kd", spec.name)),
        ];
        for a in &md.args {
            expect.push((".value_kind:", a.value_kind.to_string()));
            expect.push((".offset:", a.offset.to_string()));
        }
        for (key, val) in expect {
            let line = block
                .lines()
                .find(|l| l.trim_start_matches([' ', '-']).starts_with(key) && l.trim_end().ends_with(&val))
                .is_some();
            assert!(line, "kernel {}: {key} {val} not shown:\n{block}", spec.name);
        }
    }
    // Symbols.
    for spec in &p.specs {
        assert!(
            out.lines().any(|l| l.contains("FUNC    GLOBAL PROTECTED") && l.ends_with(&format!(" {}", spec.name))),
            "FUNC symbol {}",
            spec.name
        );
        assert!(
            out.lines()
                .any(|l| l.contains("    64 OBJECT  GLOBAL DEFAULT") && l.ends_with(&format!(" {}.kd", spec.name))),
            "OBJECT symbol {}.kd",
            spec.name
        );
    }
}

fn check_disassembly_round_trip(p: &Pair) {
    let path = write_file(&p.dir, "ours-dis.co", &p.ours);
    let dis = run_quiet(
        Command::new(tool("llvm-objdump-22")).arg("-d").arg(format!("--mcpu={}", p.target.arch.name())).arg(&path),
    );
    let mut asm = String::new();
    let mut labels = 0;
    for line in dis.lines() {
        if line.ends_with(">:") {
            labels += 1;
            continue;
        }
        if !line.starts_with('\t') {
            continue;
        }
        let insn = line.split("//").next().unwrap().trim();
        assert!(!insn.is_empty() && insn != "...", "unexpected line {line:?}");
        asm.push_str(insn);
        asm.push('\n');
    }
    assert_eq!(labels, p.specs.len(), "one label per kernel:\n{dis}");
    for spec in &p.specs {
        assert!(dis.contains(&format!("<{}>:", spec.name)));
    }
    let text = assemble_text(&p.target, &asm, &p.dir, "reassembled");
    let ours_text = section_bytes(&p.ours, ".text").unwrap();
    assert_eq!(text.len(), ours_text.len());
    assert!(text == ours_text, "reassembled .text differs");
    assert!(asm.contains("v_mfma_f32_32x32x8_f16"), "{asm}");
}

fn oracle(arch: Arch, seed: u64) {
    let p = build_pair(arch, seed);
    check_descriptors(&p);
    check_layout_identical(&p);
    check_readelf(&p);
    check_disassembly_round_trip(&p);
}

#[test]
fn gfx942_matches_llvm() {
    oracle(Arch::Gfx942, 0x942);
}

#[test]
fn gfx950_matches_llvm() {
    oracle(Arch::Gfx950, 0x950);
}

/// Two kernels only, with the reference figures of shared/reference (lld put `.text` at
/// 0x1600 for this pair): the small case stays identical too.
#[test]
fn two_kernel_object_matches_llvm() {
    two_kernels(Target::new(Arch::Gfx942));
}

/// Explicit target features: `e_flags` (xnack off 0x200, sramecc on 0xC00), the target ID
/// in the note (`:sramecc+:xnack-`) and the SGPR accounting without XNACK all as LLVM.
#[test]
fn explicit_target_features_match_llvm() {
    for (xnack, sramecc) in [(FeatureSetting::Off, FeatureSetting::On), (FeatureSetting::On, FeatureSetting::Off)] {
        for arch in Arch::ALL {
            two_kernels(Target { arch, xnack, sramecc });
        }
    }
}

fn two_kernels(target: Target) {
    let dir = TempDir::new("two");
    let mut a = KernelSpec::new("k1", assemble_text(&target, BODIES[2], &dir, "a"));
    a.registers = RegisterUsage { vgprs: 9, sgprs: 8, ..Default::default() };
    a.user_sgprs.kernarg_segment_ptr = true;
    a.kernarg_size = 16;
    a.args = vec![KernelArg::global_buffer("p", 0)];
    let mut b = KernelSpec::new("k2", assemble_text(&target, BODIES[1], &dir, "b"));
    b.registers = RegisterUsage { vgprs: 64, agprs: 64, sgprs: 40, ..Default::default() };
    b.group_segment_fixed_size = 4096;
    b.workitem_ids = WorkitemIds::Xyz;
    let specs = vec![a, b];
    let with_asm = vec![(specs[0].clone(), BODIES[2].to_owned()), (specs[1].clone(), BODIES[1].to_owned())];
    let llvm = assemble_and_link(&target, &llvm_source(&target, &with_asm), &dir, "llvm");
    let ours = write_code_object(&target, &specs).unwrap();
    let p = Pair { target, specs, ours, llvm, dir };
    check_descriptors(&p);
    check_layout_identical(&p);
    check_readelf(&p);
    check_disassembly_round_trip(&p);
}
