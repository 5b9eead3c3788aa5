//! Our reader on code objects LLVM made: `clang-22 -x hip ... --cuda-device-only` from
//! `tests/data/kernels.hip` (HIP, AMDGPU builtins, no headers). Names, descriptors and
//! metadata must agree with what LLVM itself says about the same object:
//! * descriptors: rebuilt from the `.amdhsa_*` directives clang emits for the same source
//!   (`-S`), through our LLVM-22 formulas, equal the 64 bytes our reader decoded;
//! * code: the bytes `llvm-objdump-22 -d` prints for each kernel symbol;
//! * metadata: every scalar `llvm-readelf-22 --notes` prints for a kernel or argument is
//!   in our decoded map with the same value.

mod common;

use common::*;
use gemm_codeobject::msgpack::Value;
use gemm_codeobject::{
    Arch, CodeObject, DescriptorConfig, FloatMode, KernelDescriptor, RegisterUsage, SystemSgprs, Target, UserSgprs,
    WorkitemIds,
};
use std::collections::{BTreeMap, HashMap};
use std::process::Command;

const KERNELS: [&str; 5] = ["saxpy", "lds_reverse", "mfma_tile", "grid3d", "scale_by_blockdim"];

fn hip_source() -> std::path::PathBuf {
    crate_dir().join("tests/data/kernels.hip")
}

fn clang(arch: Arch, extra: &[&str], out: &std::path::Path) {
    run_quiet(
        Command::new(tool("clang-22"))
            .args(["-x", "hip"])
            .arg(format!("--offload-arch={}", arch.name()))
            .args(["-nogpulib", "-nogpuinc", "--cuda-device-only", "--no-gpu-bundle-output", "-O3"])
            .args(extra)
            .arg(hip_source())
            .arg("-o")
            .arg(out),
    );
}

/// `.amdhsa_kernel NAME` blocks of an assembly listing: directive name -> value.
fn amdhsa_blocks(asm: &str) -> HashMap<String, HashMap<String, u64>> {
    let mut blocks = HashMap::new();
    let mut cur: Option<(String, HashMap<String, u64>)> = None;
    for line in asm.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix(".amdhsa_kernel ") {
            cur = Some((name.trim().to_owned(), HashMap::new()));
        } else if line.starts_with(".end_amdhsa_kernel") {
            let (n, m) = cur.take().expect("end without begin");
            blocks.insert(n, m);
        } else if let (Some((_, m)), Some(rest)) = (cur.as_mut(), line.strip_prefix(".amdhsa_")) {
            let mut it = rest.split_whitespace();
            let key = it.next().unwrap().to_owned();
            let val = it.next().unwrap().parse::<u64>().unwrap_or_else(|_| panic!("value of {line}"));
            m.insert(key, val);
        }
    }
    blocks
}

/// Our descriptor inputs from clang's directives. The register split only matters through
/// the unified total and accum_offset, which is what the directives give.
fn config_from_directives(d: &HashMap<String, u64>) -> DescriptorConfig {
    let g = |k: &str| -> u32 { u32::try_from(*d.get(k).unwrap_or_else(|| panic!("directive {k}"))).unwrap() };
    let t = |k: &str| g(k) != 0;
    let total = g("next_free_vgpr");
    let accum = g("accum_offset");
    DescriptorConfig {
        group_segment_fixed_size: g("group_segment_fixed_size"),
        private_segment_fixed_size: g("private_segment_fixed_size"),
        kernarg_size: g("kernarg_size"),
        registers: RegisterUsage {
            vgprs: total.min(accum),
            agprs: total.saturating_sub(accum),
            accum_offset: Some(accum),
            sgprs: g("next_free_sgpr"),
            uses_vcc: t("reserve_vcc"),
            uses_flat_scratch: false,
        },
        user_sgprs: UserSgprs {
            dispatch_ptr: t("user_sgpr_dispatch_ptr"),
            queue_ptr: t("user_sgpr_queue_ptr"),
            kernarg_segment_ptr: t("user_sgpr_kernarg_segment_ptr"),
            dispatch_id: t("user_sgpr_dispatch_id"),
            kernarg_preload_length: g("user_sgpr_kernarg_preload_length"),
            kernarg_preload_offset: g("user_sgpr_kernarg_preload_offset"),
            private_segment_size: t("user_sgpr_private_segment_size"),
        },
        system_sgprs: SystemSgprs {
            workgroup_id_x: t("system_sgpr_workgroup_id_x"),
            workgroup_id_y: t("system_sgpr_workgroup_id_y"),
            workgroup_id_z: t("system_sgpr_workgroup_id_z"),
            workgroup_info: t("system_sgpr_workgroup_info"),
            private_segment: t("enable_private_segment"),
        },
        workitem_ids: match g("system_vgpr_workitem_id") {
            0 => WorkitemIds::X,
            1 => WorkitemIds::Xy,
            _ => WorkitemIds::Xyz,
        },
        float_mode: FloatMode {
            round_mode_32: g("float_round_mode_32") as u8,
            round_mode_16_64: g("float_round_mode_16_64") as u8,
            denorm_mode_32: g("float_denorm_mode_32") as u8,
            denorm_mode_16_64: g("float_denorm_mode_16_64") as u8,
            dx10_clamp: t("dx10_clamp"),
            ieee_mode: t("ieee_mode"),
            fp16_overflow: t("fp16_overflow"),
        },
        exceptions: [
            "exception_fp_ieee_invalid_op",
            "exception_fp_denorm_src",
            "exception_fp_ieee_div_zero",
            "exception_fp_ieee_overflow",
            "exception_fp_ieee_underflow",
            "exception_fp_ieee_inexact",
            "exception_int_div_zero",
        ]
        .iter()
        .enumerate()
        .map(|(i, k)| (g(k) as u8) << i)
        .sum(),
        tg_split: t("tg_split"),
        uses_dynamic_stack: t("uses_dynamic_stack"),
    }
}

/// Per-symbol code bytes as `llvm-objdump-22 -d` prints them.
fn objdump_code(arch: Arch, co: &std::path::Path) -> BTreeMap<String, Vec<u8>> {
    let dis = run_quiet(Command::new(tool("llvm-objdump-22")).arg("-d").arg(format!("--mcpu={}", arch.name())).arg(co));
    let mut out = BTreeMap::new();
    let mut cur: Option<String> = None;
    for line in dis.lines() {
        if let Some(l) = line.strip_suffix(">:") {
            let name = l.split('<').nth(1).unwrap().to_owned();
            out.insert(name.clone(), Vec::new());
            cur = Some(name);
        } else if let (Some(name), Some(enc)) = (&cur, line.split("//").nth(1)) {
            let words = enc.split(':').nth(1).expect("address: words");
            // Branches append the target as `<sym+0x..>` after the words.
            for w in words.split_whitespace().take_while(|w| w.len() == 8 && !w.starts_with('<')) {
                let w = u32::from_str_radix(w, 16).unwrap();
                out.get_mut(name).unwrap().extend_from_slice(&w.to_le_bytes());
            }
        }
    }
    out
}

/// Scalars of the `amdhsa.kernels` YAML that `llvm-readelf-22 --notes` prints:
/// per kernel, its own scalar keys and its args' scalar keys.
type Scalars = BTreeMap<String, String>;
fn readelf_kernels(co: &std::path::Path) -> Vec<(Scalars, Vec<Scalars>)> {
    let out = run_quiet(Command::new(tool("llvm-readelf-22")).arg("--notes").arg(co));
    let mut kernels: Vec<(Scalars, Vec<Scalars>)> = Vec::new();
    let mut in_kernels = false;
    for raw in out.lines() {
        if raw.starts_with("amdhsa.kernels:") {
            in_kernels = true;
            continue;
        }
        if !raw.starts_with(' ') {
            in_kernels = false;
        }
        if !in_kernels {
            continue;
        }
        let mut indent = raw.len() - raw.trim_start().len();
        let mut line = raw.trim_start();
        let mut new_item = false;
        if let Some(rest) = line.strip_prefix("- ") {
            indent += 2;
            line = rest;
            new_item = true;
        }
        let Some((key, val)) = line.split_once(':') else { continue };
        let val = val.trim().trim_matches('\'').to_owned();
        match indent {
            4 => {
                if new_item {
                    kernels.push(Default::default());
                }
                if !val.is_empty() {
                    kernels.last_mut().unwrap().0.insert(key.to_owned(), val);
                }
            }
            8 => {
                let k = kernels.last_mut().unwrap();
                if new_item {
                    k.1.push(Default::default());
                }
                if let Some(arg) = k.1.last_mut() {
                    if !val.is_empty() {
                        arg.insert(key.to_owned(), val);
                    }
                }
            }
            _ => {}
        }
    }
    kernels
}

fn render(v: &Value) -> Option<String> {
    match v {
        Value::UInt(u) => Some(u.to_string()),
        Value::Int(i) => Some(i.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Str(s) => Some(s.clone()),
        _ => None,
    }
}

fn check_arch(arch: Arch) {
    let dir = TempDir::new(&format!("hip-{}", arch.name()));
    let asm_path = dir.path("k.s");
    let co_path = dir.path("k.co");
    clang(arch, &["-mcode-object-version=5", "-S"], &asm_path);
    clang(arch, &["-mcode-object-version=5"], &co_path);
    let asm = std::fs::read_to_string(&asm_path).unwrap();
    let co_bytes = std::fs::read(&co_path).unwrap();

    let co = CodeObject::parse(&co_bytes).expect("reader accepts clang's code object");
    assert_eq!(co.version, 5);
    assert_eq!(co.target, Some(Target::new(arch)));
    let mut names: Vec<&str> = co.kernels.iter().map(|k| k.name.as_str()).collect();
    names.sort();
    let mut want = KERNELS.to_vec();
    want.sort();
    assert_eq!(names, want);

    // Descriptors.
    let blocks = amdhsa_blocks(&asm);
    let target = Target::new(arch);
    for name in KERNELS {
        let k = co.kernel(name).unwrap();
        let d = &blocks[name];
        let cfg = config_from_directives(d);
        let rebuilt = KernelDescriptor::build(&target, &cfg, k.descriptor.kernel_code_entry_byte_offset)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(rebuilt, k.descriptor, "{name}: rebuilt {rebuilt:#?}\nread {:#?}", k.descriptor);
        assert_eq!(u64::from(k.descriptor.user_sgpr_count()), d["user_sgpr_count"], "{name}");
        assert_eq!(k.entry_address % 256, 0);
    }
    let grid = co.kernel("grid3d").unwrap();
    assert_eq!(grid.descriptor.workitem_ids(), Some(WorkitemIds::Xyz));
    assert!(grid.descriptor.system_sgprs().workgroup_id_z);
    assert_eq!(co.kernel("lds_reverse").unwrap().descriptor.group_segment_fixed_size, 1024);

    // Code.
    let dumped = objdump_code(arch, &co_path);
    for name in KERNELS {
        let k = co.kernel(name).unwrap();
        let d = &dumped[name];
        let sym = co.symbols.iter().find(|s| s.name == name).unwrap();
        assert_eq!(k.code.len() as u64, sym.symbol.size, "{name}");
        assert_eq!(&d[..k.code.len()], &k.code[..], "{name} code");
        assert!(k.code.ends_with(&0xbf81_0000u32.to_le_bytes()), "{name} ends in s_endpgm");
    }

    // Metadata.
    let shown = readelf_kernels(&co_path);
    assert_eq!(shown.len(), KERNELS.len());
    let md = co.metadata.as_ref().unwrap();
    assert_eq!(md.version, [1, 2]);
    assert_eq!(md.target.as_deref(), Some(target.target_id().as_str()));
    for (scalars, args) in &shown {
        let name = &scalars[".name"];
        let k = co.kernel(name).unwrap();
        let typed = k.metadata.as_ref().unwrap();
        assert_eq!(&typed.name, name);
        assert_eq!(typed.symbol, format!("{name}.kd"));
        let raw = md_raw_kernel(co.raw_metadata.as_ref().unwrap(), name);
        for (key, val) in scalars {
            let ours = raw.get(key).and_then(render);
            assert_eq!(ours.as_deref(), Some(val.as_str()), "{name} {key}");
        }
        assert_eq!(typed.args.len(), args.len(), "{name} args");
        for (i, (a, shown)) in typed.args.iter().zip(args).enumerate() {
            assert_eq!(shown[".offset"], a.offset.to_string(), "{name} arg {i}");
            assert_eq!(shown[".size"], a.size.to_string(), "{name} arg {i}");
            assert_eq!(shown[".value_kind"], a.value_kind.to_string(), "{name} arg {i}");
            if let Some(s) = shown.get(".address_space") {
                assert_eq!(a.address_space.as_ref().unwrap().as_str(), s);
            }
            if let Some(s) = shown.get(".name") {
                assert_eq!(a.name.as_deref(), Some(s.as_str()));
            }
        }
        // Typed counts agree with the descriptor's granules.
        assert_eq!(typed.group_segment_fixed_size, k.descriptor.group_segment_fixed_size);
        assert_eq!(typed.kernarg_segment_size, k.descriptor.kernarg_size);
        assert!(k.descriptor.allocated_vgprs() >= typed.vgpr_count);
        assert_eq!(typed.wavefront_size, 64);
    }
    let saxpy = co.kernel("saxpy").unwrap().metadata.clone().unwrap();
    // float a, const float* x, float* y, int n: HIP names no arguments in metadata.
    let kinds: Vec<(u32, u32, String)> =
        saxpy.args[..4].iter().map(|a| (a.offset, a.size, a.value_kind.to_string())).collect();
    assert_eq!(
        kinds,
        [
            (0, 4, "by_value".to_owned()),
            (8, 8, "global_buffer".to_owned()),
            (16, 8, "global_buffer".to_owned()),
            (24, 4, "by_value".to_owned())
        ]
    );
    // No builtin here needs implicit arguments, so LLVM infers amdgpu-no-implicitarg-ptr
    // and emits no hidden_* args.
    assert_eq!(saxpy.args.len(), 4);
    assert_eq!(co.kernel("lds_reverse").unwrap().metadata.as_ref().unwrap().max_flat_workgroup_size, 256);
    // workgroup_size_x reads hidden_group_size_x from the implicit (v5) arguments.
    let bd = co.kernel("scale_by_blockdim").unwrap().metadata.clone().unwrap();
    let hidden =
        bd.args.iter().find(|a| a.value_kind.to_string() == "hidden_group_size_x").expect("hidden_group_size_x");
    assert_eq!((hidden.offset, hidden.size), (20, 2));
    assert!(bd.kernarg_segment_size > 200, "implicit args are in the segment");
}

fn md_raw_kernel<'a>(root: &'a Value, name: &str) -> &'a Value {
    root.get("amdhsa.kernels")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .find(|k| k.get(".name").and_then(Value::as_str) == Some(name))
        .unwrap()
}

#[test]
fn reads_clang_hip_code_object_gfx942() {
    check_arch(Arch::Gfx942);
}

#[test]
fn reads_clang_hip_code_object_gfx950() {
    check_arch(Arch::Gfx950);
}

/// LLVM 22's default is code object v6 (EI_ABIVERSION 4); the reader takes it too.
#[test]
fn reads_default_v6_code_object() {
    let dir = TempDir::new("hip-v6");
    let co_path = dir.path("k6.co");
    clang(Arch::Gfx942, &[], &co_path);
    let co = CodeObject::parse(&std::fs::read(&co_path).unwrap()).unwrap();
    assert_eq!(co.version, 6);
    assert_eq!(co.arch(), Some(Arch::Gfx942));
    assert_eq!(co.kernels.len(), KERNELS.len());
    assert!(co.kernels.iter().all(|k| k.metadata.is_some() && !k.code.is_empty()));
}
