//! gfx950 `v_mfma_f32_32x32x64_f8f6f4` / `16x16x128_f8f6f4`: cbsz (A) and blgp (B) pick
//! the input formats, 0 fp8 (OCP E4M3FN) and 1 bf8 (OCP E5M2). With every A byte equal
//! to `a` and every B byte to `b`, each D element is `K * a * b` whatever the register
//! layout, so the format decoding is checked on its own (byte 0x3C is 1.5 as E4M3FN and
//! 1.0 as E5M2). fp6/bf6/fp4 and the scaled forms are checked against the reference GEMM in
//! `mfma_scale.rs`; the reserved format codes 5-7 must be reported, not computed.

mod common;
use common::*;
use gemm_emu::{Arch, Device, EmuError, FaultKind, LaunchOptions};

fn kernel(mfma: &str) -> String {
    format!(
        r#"  .amdgcn_target "amdgcn-amd-amdhsa--gfx950"
  .amdhsa_code_object_version 5
  .text
  .globl k
  .p2align 8
  .type k,@function
k:
  s_load_dwordx2 s[2:3], s[0:1], 0x0
  v_lshlrev_b32_e32 v40, 2, v0
  v_mov_b32_e32 v2, 0x3c3c3c3c
  v_mov_b32_e32 v3, v2
  v_mov_b32_e32 v4, v2
  v_mov_b32_e32 v5, v2
  v_mov_b32_e32 v6, v2
  v_mov_b32_e32 v7, v2
  v_mov_b32_e32 v8, v2
  v_mov_b32_e32 v9, v2
  s_waitcnt lgkmcnt(0)
  s_nop 1
  {mfma}
  s_nop 15
  s_nop 7
  global_store_dword v40, v16, s[2:3]
  s_endpgm
  .section .rodata,"a",@progbits
  .p2align 6, 0x0
  .amdhsa_kernel k
    .amdhsa_kernarg_size 8
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_next_free_vgpr 48
    .amdhsa_next_free_sgpr 8
    .amdhsa_accum_offset 48
  .end_amdhsa_kernel
"#
    )
}

fn run(tag: &str, mfma: &str) -> Result<Vec<f32>, EmuError> {
    let co = assemble(&kernel(mfma), Arch::Gfx950, tag);
    let dev = Device::new(Arch::Gfx950);
    let out = dev.alloc(256).unwrap();
    let r = dev.launch_with(&co, "k", [1, 1, 1], [64, 1, 1], &out.to_le_bytes(), &LaunchOptions::default())?;
    assert_clean(&r);
    Ok(f32s(&download(&dev, out, 256)))
}

#[test]
fn cbsz_and_blgp_select_fp8_or_bf8_per_operand() {
    for (shape, k, dst) in [("32x32x64", 64.0f32, "v[16:31]"), ("16x16x128", 128.0, "v[16:19]")] {
        for (cbsz, blgp, a, b) in [(0, 0, 1.5f32, 1.5f32), (1, 0, 1.0, 1.5), (0, 1, 1.5, 1.0), (1, 1, 1.0, 1.0)] {
            let mfma = format!("v_mfma_f32_{shape}_f8f6f4 {dst}, v[2:9], v[2:9], 0 cbsz:{cbsz} blgp:{blgp}");
            let got = run(&format!("f8f6f4-{shape}-{cbsz}{blgp}"), &mfma).unwrap();
            assert!(got.iter().all(|&x| x == k * a * b), "{mfma}: {:?}, want {}", &got[..4], k * a * b);
        }
    }
}

#[test]
fn reserved_format_codes_are_reported_not_computed() {
    let err = run("f8f6f4-reserved", "v_mfma_f32_32x32x64_f8f6f4 v[16:31], v[2:9], v[2:9], 0 cbsz:5").unwrap_err();
    match err {
        EmuError::Fault(f) => {
            assert!(matches!(&f.kind, FaultKind::Unsupported(m) if m.contains("format code 5")), "{f}")
        }
        e => panic!("expected an unsupported-format fault, got {e}"),
    }
}
