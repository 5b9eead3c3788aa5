//! The hazard checker against llc-22: LLVM's MFMA code (with the s_nop GCNHazardRecognizer
//! inserted) must be silent, and deleting one of its s_nop must make the checker fire.

mod common;
use common::*;
use gemm_emu::{Arch, Checker, Device, LaunchOptions};

const IR_COMMON: &str = r#"
declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x8bf16.1k(<4 x i16>, <4 x i16>, <16 x float>, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16>, <4 x i16>, <4 x float>, i32, i32, i32)
define amdgpu_kernel void @k32(ptr addrspace(1) %p, <4 x i16> %a, <4 x i16> %b) {
  %r = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8bf16.1k(<4 x i16> %a, <4 x i16> %b, <16 x float> zeroinitializer, i32 0, i32 0, i32 0)
  %e = extractelement <16 x float> %r, i32 0
  %f = fadd float %e, 1.0
  store float %f, ptr addrspace(1) %p
  ret void
}
define amdgpu_kernel void @k16(ptr addrspace(1) %p, <4 x i16> %a, <4 x i16> %b) {
  %r = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16> %a, <4 x i16> %b, <4 x float> zeroinitializer, i32 0, i32 0, i32 0)
  %e = extractelement <4 x float> %r, i32 0
  %f = fadd float %e, 1.0
  store float %f, ptr addrspace(1) %p
  ret void
}
"#;

const IR_GFX950: &str = r#"
declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat>, <8 x bfloat>, <16 x float>, i32, i32, i32)
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.f16(<8 x half>, <8 x half>, <4 x float>, i32, i32, i32)
define amdgpu_kernel void @d32(ptr addrspace(1) %p, <8 x bfloat> %a, <8 x bfloat> %b) {
  %r = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x16.bf16(<8 x bfloat> %a, <8 x bfloat> %b, <16 x float> zeroinitializer, i32 0, i32 0, i32 0)
  %e = extractelement <16 x float> %r, i32 0
  %f = fadd float %e, 1.0
  store float %f, ptr addrspace(1) %p
  ret void
}
define amdgpu_kernel void @d16(ptr addrspace(1) %p, <8 x half> %a, <8 x half> %b) {
  %r = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x32.f16(<8 x half> %a, <8 x half> %b, <4 x float> zeroinitializer, i32 0, i32 0, i32 0)
  %e = extractelement <4 x float> %r, i32 0
  %f = fadd float %e, 1.0
  store float %f, ptr addrspace(1) %p
  ret void
}
"#;

fn kernels(arch: Arch) -> (String, Vec<&'static str>) {
    match arch {
        Arch::Gfx942 => (IR_COMMON.to_string(), vec!["k32", "k16"]),
        Arch::Gfx950 => (format!("{IR_COMMON}{IR_GFX950}"), vec!["k32", "k16", "d32", "d16"]),
    }
}

fn hazards(co: &[u8], arch: Arch, kernel: &str) -> usize {
    let dev = Device::new(arch);
    let out = dev.alloc(4).unwrap();
    let mut args = out.to_le_bytes().to_vec();
    args.resize(64, 0x3f);
    let r = dev.launch_with(co, kernel, [1, 1, 1], [64, 1, 1], &args, &LaunchOptions::default()).unwrap();
    r.by_checker(Checker::Hazard).len()
}

/// Deletes the `s_nop` right after (`after = true`) or right before the first MFMA of
/// kernel `kernel`.
fn drop_nop(text: &str, kernel: &str, after: bool) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| l.starts_with(&format!("{kernel}:"))).expect("kernel label");
    let mfma = start + lines[start..].iter().position(|l| l.trim_start().starts_with("v_mfma")).expect("mfma");
    let nop = if after { mfma + 1 } else { mfma - 1 };
    assert!(lines[nop].trim_start().starts_with("s_nop"), "expected s_nop next to the MFMA, got `{}`", lines[nop]);
    lines.iter().enumerate().filter(|(i, _)| *i != nop).map(|(_, l)| *l).collect::<Vec<_>>().join("\n") + "\n"
}

#[test]
fn llvm_mfma_code_is_hazard_free_and_dropping_its_nops_is_caught() {
    for arch in Arch::ALL {
        let (ir, names) = kernels(arch);
        let text = llc(&ir, arch, "hazard");
        let co = assemble(&text, arch, "hazard");
        for k in &names {
            assert_eq!(hazards(&co, arch, k), 0, "{arch} {k}: checker fires on llc-22's own code");
            for after in [true, false] {
                let broken = assemble(&drop_nop(&text, k, after), arch, &format!("hazard-{k}-{after}"));
                assert!(
                    hazards(&broken, arch, k) > 0,
                    "{arch} {k}: removing the s_nop {} the MFMA went unnoticed",
                    if after { "after" } else { "before" }
                );
            }
        }
    }
}
