//! Every wait-state rule of the hazard checker against LLVM 22 itself: each case is a
//! producer/consumer pair written twice, as MIR for `llc-22 -run-pass=post-RA-hazard-rec`
//! (GCNHazardRecognizer inserts the `S_NOP`s it needs, counted here at test time) and as
//! assembly for the emulator. With exactly LLVM's wait states the checker must be silent;
//! with one fewer it must fire and name LLVM's number. Cases where LLVM inserts nothing
//! (back-to-back accumulation, SGPR soffset stores, ...) must stay silent with none.
//! (No VALU can write M0 on gfx9: `v_readfirstlane_b32 m0, ...` does not assemble, so the
//! M0 -> LDS-DMA hazard is the SALU one.)

mod common;
use common::*;
use gemm_emu::{Arch, Checker, Device, LaunchOptions};
use std::collections::BTreeMap;
use std::process::Command;

struct Case {
    name: &'static str,
    /// Producer and consumer in MIR (physical registers).
    mir: [&'static str; 2],
    /// The same dependency in assembly.
    asm: [&'static str; 2],
}

const A16: &str = "$agpr0_agpr1_agpr2_agpr3";
const A32: &str =
    "$agpr0_agpr1_agpr2_agpr3_agpr4_agpr5_agpr6_agpr7_agpr8_agpr9_agpr10_agpr11_agpr12_agpr13_agpr14_agpr15";

fn cases() -> Vec<(Case, String, String)> {
    // (case, producer MIR, consumer MIR) with the long register names expanded.
    let c = |name, mir: [&'static str; 2], asm| Case { name, mir, asm };
    let v = vec![
        c(
            "valu_vgpr_mfma",
            ["$vgpr4 = V_MOV_B32_e32 0, implicit $exec", "A16 = V_MFMA_F32_16X16X16BF16_1K_e64 $vgpr4_vgpr5, $vgpr6_vgpr7, 0, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_mov_b32_e32 v4, 0", "v_mfma_f32_16x16x16_bf16 a[0:3], v[4:5], v[6:7], 0"],
        ),
        c(
            "xdl16_srcc_full",
            ["A16 = V_MFMA_F32_16X16X16BF16_1K_e64 $vgpr0_vgpr1, $vgpr2_vgpr3, 0, 0, 0, 0, implicit $mode, implicit $exec", "A16 = V_MFMA_F32_16X16X16BF16_1K_e64 $vgpr0_vgpr1, $vgpr2_vgpr3, A16, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_mfma_f32_16x16x16_bf16 a[0:3], v[0:1], v[2:3], 0", "v_mfma_f32_16x16x16_bf16 a[0:3], v[0:1], v[2:3], a[0:3]"],
        ),
        c(
            "xdl32_srcc_full",
            ["A32 = V_MFMA_F32_32X32X8BF16_1K_e64 $vgpr0_vgpr1, $vgpr2_vgpr3, 0, 0, 0, 0, implicit $mode, implicit $exec", "A32 = V_MFMA_F32_32X32X8BF16_1K_e64 $vgpr0_vgpr1, $vgpr2_vgpr3, A32, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], 0", "v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], a[0:15]"],
        ),
        c(
            "xdl16_into_xdl32_srcc",
            ["A16 = V_MFMA_F32_16X16X16BF16_1K_e64 $vgpr0_vgpr1, $vgpr2_vgpr3, 0, 0, 0, 0, implicit $mode, implicit $exec", "A32 = V_MFMA_F32_32X32X8BF16_1K_e64 $vgpr0_vgpr1, $vgpr2_vgpr3, A32, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_mfma_f32_16x16x16_bf16 a[0:3], v[0:1], v[2:3], 0", "v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], a[0:15]"],
        ),
        c(
            "xdl32_into_xdl16_srcc",
            ["A32 = V_MFMA_F32_32X32X8BF16_1K_e64 $vgpr0_vgpr1, $vgpr2_vgpr3, 0, 0, 0, 0, implicit $mode, implicit $exec", "$agpr4_agpr5_agpr6_agpr7 = V_MFMA_F32_16X16X16BF16_1K_e64 $vgpr0_vgpr1, $vgpr2_vgpr3, $agpr4_agpr5_agpr6_agpr7, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], 0", "v_mfma_f32_16x16x16_bf16 a[4:7], v[0:1], v[2:3], a[4:7]"],
        ),
        c(
            "xdl32_into_smfma_srcc",
            ["A32 = V_MFMA_F32_32X32X8BF16_1K_e64 $vgpr0_vgpr1, $vgpr2_vgpr3, 0, 0, 0, 0, implicit $mode, implicit $exec", "A16 = V_MFMA_F32_16X16X4F32_e64 $vgpr0, $vgpr2, A16, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], 0", "v_mfma_f32_16x16x4_f32 a[0:3], v0, v2, a[0:3]"],
        ),
        c(
            "smfma_into_xdl_srcc",
            ["A16 = V_MFMA_F32_16X16X4F32_e64 $vgpr0, $vgpr2, 0, 0, 0, 0, implicit $mode, implicit $exec", "A32 = V_MFMA_F32_32X32X8BF16_1K_e64 $vgpr0_vgpr1, $vgpr2_vgpr3, A32, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_mfma_f32_16x16x4_f32 a[0:3], v0, v2, 0", "v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], a[0:15]"],
        ),
        c(
            "smfma_srcc_full",
            ["A16 = V_MFMA_F32_16X16X4F32_e64 $vgpr0, $vgpr2, 0, 0, 0, 0, implicit $mode, implicit $exec", "A16 = V_MFMA_F32_16X16X4F32_e64 $vgpr0, $vgpr2, A16, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_mfma_f32_16x16x4_f32 a[0:3], v0, v2, 0", "v_mfma_f32_16x16x4_f32 a[0:3], v0, v2, a[0:3]"],
        ),
        c(
            "xdl16_result_as_srca",
            ["$vgpr8_vgpr9_vgpr10_vgpr11 = V_MFMA_F32_16X16X16BF16_1K_vgprcd_e64 $vgpr0_vgpr1, $vgpr2_vgpr3, 0, 0, 0, 0, implicit $mode, implicit $exec", "$vgpr12_vgpr13_vgpr14_vgpr15 = V_MFMA_F32_16X16X16BF16_1K_vgprcd_e64 $vgpr8_vgpr9, $vgpr2_vgpr3, 0, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_mfma_f32_16x16x16_bf16 v[8:11], v[0:1], v[2:3], 0", "v_mfma_f32_16x16x16_bf16 v[12:15], v[8:9], v[2:3], 0"],
        ),
        c(
            "xdl32_result_as_srcb",
            ["$vgpr16_vgpr17_vgpr18_vgpr19_vgpr20_vgpr21_vgpr22_vgpr23_vgpr24_vgpr25_vgpr26_vgpr27_vgpr28_vgpr29_vgpr30_vgpr31 = V_MFMA_F32_32X32X8BF16_1K_vgprcd_e64 $vgpr0_vgpr1, $vgpr2_vgpr3, 0, 0, 0, 0, implicit $mode, implicit $exec", "$vgpr12_vgpr13_vgpr14_vgpr15 = V_MFMA_F32_16X16X16BF16_1K_vgprcd_e64 $vgpr0_vgpr1, $vgpr30_vgpr31, 0, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_mfma_f32_32x32x8_bf16 v[16:31], v[0:1], v[2:3], 0", "v_mfma_f32_16x16x16_bf16 v[12:15], v[0:1], v[30:31], 0"],
        ),
        c(
            "smfma_result_as_srca",
            ["$vgpr8_vgpr9_vgpr10_vgpr11 = V_MFMA_F32_16X16X4F32_vgprcd_e64 $vgpr0, $vgpr2, 0, 0, 0, 0, implicit $mode, implicit $exec", "$vgpr12_vgpr13_vgpr14_vgpr15 = V_MFMA_F32_16X16X16BF16_1K_vgprcd_e64 $vgpr8_vgpr9, $vgpr2_vgpr3, 0, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_mfma_f32_16x16x4_f32 v[8:11], v0, v2, 0", "v_mfma_f32_16x16x16_bf16 v[12:15], v[8:9], v[2:3], 0"],
        ),
        c(
            "valu_exec_mfma",
            ["$exec = V_CMPX_EQ_U32_e64 $vgpr0, $vgpr1, implicit-def $exec, implicit $exec", "A16 = V_MFMA_F32_16X16X16BF16_1K_e64 $vgpr4_vgpr5, $vgpr6_vgpr7, 0, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_cmpx_eq_u32_e32 vcc, v0, v1", "v_mfma_f32_16x16x16_bf16 a[0:3], v[4:5], v[6:7], 0"],
        ),
        c(
            "valu_sgpr_vmem_soffset",
            ["$sgpr8 = V_READFIRSTLANE_B32 $vgpr0, implicit $exec", "$vgpr1 = BUFFER_LOAD_DWORD_OFFEN $vgpr0, $sgpr12_sgpr13_sgpr14_sgpr15, $sgpr8, 0, 0, 0, implicit $exec"],
            ["v_readfirstlane_b32 s8, v0", "buffer_load_dword v1, v0, s[12:15], s8 offen"],
        ),
        c(
            "valu_sgpr_vmem_rsrc",
            ["$sgpr15 = V_READFIRSTLANE_B32 $vgpr0, implicit $exec", "$vgpr1 = BUFFER_LOAD_DWORD_OFFEN $vgpr0, $sgpr12_sgpr13_sgpr14_sgpr15, 0, 0, 0, 0, implicit $exec"],
            ["v_readfirstlane_b32 s15, v0", "buffer_load_dword v1, v0, s[12:15], 0 offen"],
        ),
        c(
            "valu_sgpr_global_saddr",
            ["$sgpr7 = V_READFIRSTLANE_B32 $vgpr2, implicit $exec", "$vgpr1 = GLOBAL_LOAD_DWORD_SADDR $sgpr6_sgpr7, $vgpr3, 0, 0, implicit $exec"],
            ["v_readfirstlane_b32 s7, v2", "global_load_dword v1, v3, s[6:7]"],
        ),
        c(
            "salu_m0_lds_dma",
            ["$m0 = S_MOV_B32 $sgpr9", "BUFFER_LOAD_DWORD_LDS_OFFEN $vgpr0, $sgpr12_sgpr13_sgpr14_sgpr15, 0, 0, 0, 0, implicit $exec, implicit $m0"],
            ["s_mov_b32 m0, s9", "buffer_load_dword v0, s[12:15], 0 offen lds"],
        ),
        c(
            "salu_m0_global_lds_dma",
            ["$m0 = S_MOV_B32 $sgpr9", "GLOBAL_LOAD_LDS_DWORD_SADDR $sgpr6_sgpr7, $vgpr3, 0, 0, implicit $m0, implicit $exec"],
            ["s_mov_b32 m0, s9", "global_load_lds_dword v3, s[6:7]"],
        ),
        c(
            "valu_sgpr_valu",
            ["$sgpr10_sgpr11 = V_CMP_EQ_U32_e64 $vgpr0, $vgpr1, implicit $exec", "$vgpr3 = V_CNDMASK_B32_e64 0, $vgpr0, 0, $vgpr1, $sgpr10_sgpr11, implicit $exec"],
            ["v_cmp_eq_u32_e64 s[10:11], v0, v1", "v_cndmask_b32_e64 v3, v0, v1, s[10:11]"],
        ),
        c(
            "valu_vgpr_readfirstlane",
            ["$vgpr2 = V_ADD_U32_e32 $vgpr0, $vgpr1, implicit $exec", "$sgpr10 = V_READFIRSTLANE_B32 $vgpr2, implicit $exec"],
            ["v_add_u32_e32 v2, v0, v1", "v_readfirstlane_b32 s10, v2"],
        ),
        c(
            "valu_sgpr_readlane_select",
            ["$sgpr10 = V_READFIRSTLANE_B32 $vgpr3, implicit $exec", "$sgpr11 = V_READLANE_B32 $vgpr4, $sgpr10"],
            ["v_readfirstlane_b32 s10, v3", "v_readlane_b32 s11, v4, s10"],
        ),
        c(
            "valu_exec_readlane",
            ["$exec = V_CMPX_EQ_U32_e64 $vgpr0, $vgpr1, implicit-def $exec, implicit $exec", "$sgpr10 = V_READLANE_B32 $vgpr4, 3"],
            ["v_cmpx_eq_u32_e32 vcc, v0, v1", "v_readlane_b32 s10, v4, 3"],
        ),
        c(
            "valu_vgpr_dpp",
            ["$vgpr2 = V_ADD_U32_e32 $vgpr0, $vgpr1, implicit $exec", "$vgpr5 = V_MOV_B32_dpp $vgpr5, $vgpr2, 273, 15, 15, 0, implicit $exec"],
            ["v_add_u32_e32 v2, v0, v1", "v_mov_b32_dpp v5, v2 row_shr:1 row_mask:0xf bank_mask:0xf"],
        ),
        c(
            "valu_exec_dpp",
            ["$exec = V_CMPX_EQ_U32_e64 $vgpr0, $vgpr1, implicit-def $exec, implicit $exec", "$vgpr5 = V_MOV_B32_dpp $vgpr5, $vgpr2, 273, 15, 15, 0, implicit $exec"],
            ["v_cmpx_eq_u32_e32 vcc, v0, v1", "v_mov_b32_dpp v5, v2 row_shr:1 row_mask:0xf bank_mask:0xf"],
        ),
        c(
            "trans_then_valu",
            ["$vgpr2 = V_EXP_F32_e32 $vgpr0, implicit $mode, implicit $exec", "$vgpr5 = V_ADD_F32_e32 $vgpr2, $vgpr1, implicit $mode, implicit $exec"],
            ["v_exp_f32_e32 v2, v0", "v_add_f32_e32 v5, v2, v1"],
        ),
        c(
            "valu_vcc_div_fmas",
            ["$vcc = V_CMP_EQ_U32_e64 $vgpr0, $vgpr1, implicit $exec", "$vgpr5 = V_DIV_FMAS_F32_e64 0, $vgpr0, 0, $vgpr1, 0, $vgpr2, 0, 0, implicit $mode, implicit $vcc, implicit $exec"],
            ["v_cmp_eq_u32_e64 vcc, v0, v1", "v_div_fmas_f32 v5, v0, v1, v2"],
        ),
        c(
            "buffer_store_x4_then_valu_overwrites_data",
            ["BUFFER_STORE_DWORDX4_OFFEN $vgpr4_vgpr5_vgpr6_vgpr7, $vgpr0, $sgpr12_sgpr13_sgpr14_sgpr15, 0, 0, 0, 0, implicit $exec", "$vgpr5 = V_ADD_U32_e32 $vgpr0, $vgpr1, implicit $exec"],
            ["buffer_store_dwordx4 v[4:7], v0, s[12:15], 0 offen", "v_add_u32_e32 v5, v0, v1"],
        ),
        c(
            "buffer_store_x4_sgpr_soffset",
            ["BUFFER_STORE_DWORDX4_OFFEN $vgpr4_vgpr5_vgpr6_vgpr7, $vgpr0, $sgpr12_sgpr13_sgpr14_sgpr15, $sgpr8, 0, 0, 0, implicit $exec", "$vgpr5 = V_ADD_U32_e32 $vgpr0, $vgpr1, implicit $exec"],
            ["buffer_store_dwordx4 v[4:7], v0, s[12:15], s8 offen", "v_add_u32_e32 v5, v0, v1"],
        ),
        c(
            "global_store_x4_then_valu_overwrites_data",
            ["GLOBAL_STORE_DWORDX4_SADDR $vgpr3, $vgpr4_vgpr5_vgpr6_vgpr7, $sgpr6_sgpr7, 0, 0, implicit $exec", "$vgpr5 = V_ADD_U32_e32 $vgpr0, $vgpr1, implicit $exec"],
            ["global_store_dwordx4 v3, v[4:7], s[6:7]", "v_add_u32_e32 v5, v0, v1"],
        ),
        c(
            "global_store_x2_then_valu",
            ["GLOBAL_STORE_DWORDX2_SADDR $vgpr3, $vgpr4_vgpr5, $sgpr6_sgpr7, 0, 0, implicit $exec", "$vgpr5 = V_ADD_U32_e32 $vgpr0, $vgpr1, implicit $exec"],
            ["global_store_dwordx2 v3, v[4:5], s[6:7]", "v_add_u32_e32 v5, v0, v1"],
        ),
    ];
    v.into_iter()
        .map(|c| {
            let x = |s: &str| s.replace("A32", A32).replace("A16", A16);
            let (p, q) = (x(c.mir[0]), x(c.mir[1]));
            (c, p, q)
        })
        .collect()
}

/// Runs LLVM's hazard recognizer on every case; returns the wait states it put between
/// producer and consumer, per case name.
fn llvm_wait_states(arch: Arch, cases: &[(Case, String, String)]) -> BTreeMap<String, u64> {
    let mut mir = String::new();
    for (c, p, q) in cases.iter() {
        mir += &format!(
            "---\nname: {}\ntracksRegLiveness: false\nbody: |\n  bb.0:\n    {p}\n    {q}\n    S_ENDPGM 0\n...\n",
            c.name
        );
    }
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join(format!("hazard-rules-{}.mir", arch.name()));
    std::fs::write(&path, &mir).unwrap();
    let out = Command::new(tool("llc-22"))
        .args([
            "-mtriple=amdgcn-amd-amdhsa",
            &format!("-mcpu={}", arch.name()),
            "-run-pass=post-RA-hazard-rec",
            "-o",
            "-",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success(), "llc-22 failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut res = BTreeMap::new();
    for doc in text.split("\n---").skip(1) {
        let name = doc.lines().find_map(|l| l.strip_prefix("name:")).unwrap().trim().to_string();
        let body = doc.split("bb.0").nth(1).unwrap();
        let lines: Vec<&str> = body.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        // lines[0] is ":", then producer, nops, consumer, S_ENDPGM.
        let nops: u64 =
            lines.iter().filter_map(|l| l.strip_prefix("S_NOP ")).map(|n| n.trim().parse::<u64>().unwrap() + 1).sum();
        let others = lines
            .iter()
            .filter(|l| {
                !l.starts_with("S_NOP") && l.contains(" = ") || l.starts_with("BUFFER") || l.starts_with("GLOBAL")
            })
            .count();
        assert_eq!(others, 2, "{name}: LLVM changed the sequence:\n{body}");
        res.insert(name, nops);
    }
    assert_eq!(res.len(), cases.len());
    res
}

fn nops(mut n: u64) -> String {
    let mut s = String::new();
    while n > 0 {
        let k = n.min(16);
        s += &format!("  s_nop {}\n", k - 1);
        n -= k;
    }
    s
}

fn kernel(name: &str, body: &str) -> String {
    format!(
        r#"  .text
  .globl {name}
  .p2align 8
  .type {name},@function
{name}:
  s_load_dwordx2 s[6:7], s[0:1], 0x0
  s_mov_b64 s[12:13], 0
  s_mov_b64 s[14:15], 0
  s_mov_b32 s8, 0
  s_mov_b32 s9, 0
  s_mov_b32 m0, 0
  v_mov_b32_e32 v1, v0
  v_mov_b32_e32 v3, 0
  s_waitcnt lgkmcnt(0)
  v_mov_b32_e32 v2, s7
  s_nop 15
  s_nop 15
{body}  s_endpgm
  .section .rodata,"a",@progbits
  .p2align 6, 0x0
  .amdhsa_kernel {name}
    .amdhsa_group_segment_fixed_size 1024
    .amdhsa_kernarg_size 8
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_next_free_vgpr 96
    .amdhsa_next_free_sgpr 16
    .amdhsa_accum_offset 64
  .end_amdhsa_kernel
"#
    )
}

#[test]
fn every_rule_matches_llvm_wait_states_exactly() {
    let cases = cases();
    for arch in Arch::ALL {
        let need = llvm_wait_states(arch, &cases);
        let mut text =
            format!("  .amdgcn_target \"amdgcn-amd-amdhsa--{}\"\n  .amdhsa_code_object_version 5\n", arch.name());
        for (c, _, _) in &cases {
            let n = need[c.name];
            let [p, q] = c.asm;
            text += &kernel(&format!("{}_ok", c.name), &format!("  {p}\n{}  {q}\n", nops(n)));
            if n > 0 {
                text += &kernel(&format!("{}_short", c.name), &format!("  {p}\n{}  {q}\n", nops(n - 1)));
            }
        }
        let co = assemble(&text, arch, "hazard-rules");
        let run = |k: &str| {
            let dev = Device::new(arch);
            let buf = dev.alloc(4096).unwrap();
            let args = buf.to_le_bytes();
            let r = dev.launch_with(&co, k, [1, 1, 1], [64, 1, 1], &args, &LaunchOptions::default()).unwrap();
            r.by_checker(Checker::Hazard).into_iter().cloned().collect::<Vec<_>>()
        };
        let mut nonzero = 0;
        for (c, _, _) in &cases {
            let n = need[c.name];
            let ok = run(&format!("{}_ok", c.name));
            assert!(ok.is_empty(), "{arch} {}: {n} wait states (LLVM's) still reported:\n{}", c.name, ok[0]);
            if n > 0 {
                nonzero += 1;
                let short = run(&format!("{}_short", c.name));
                assert!(
                    short.iter().any(|r| r.message.contains(&format!("needs {n} "))),
                    "{arch} {}: with {} wait states (LLVM needs {n}) the checker {}",
                    c.name,
                    n - 1,
                    if short.is_empty() { "is silent".to_string() } else { format!("says: {}", short[0]) }
                );
            }
        }
        // The oracle must have produced real requirements, and the no-wait cases exist.
        assert!(nonzero >= 20 && nonzero < cases.len(), "{arch}: {nonzero} of {} cases need waits", cases.len());
        for z in ["xdl16_srcc_full", "xdl32_srcc_full", "smfma_into_xdl_srcc", "buffer_store_x4_sgpr_soffset"] {
            assert_eq!(need[z], 0, "{arch} {z}");
        }
    }
}

/// llc-22's own code for kernels that hit the new rules (MFMA result as srcA, chained
/// accumulation, VALU-written SGPR as soffset, DPP after a VALU, readlane chains, M0 set
/// by SALU before LDS-DMA): silent as compiled, and deleting any one of its `s_nop`s
/// must make the checker fire.
const IR: &str = r#"
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16>, <4 x i16>, <4 x float>, i32, i32, i32)
declare i32 @llvm.amdgcn.readfirstlane.i32(i32)
declare i32 @llvm.amdgcn.readlane.i32(i32, i32)
declare i32 @llvm.amdgcn.raw.buffer.load.i32(<4 x i32>, i32, i32, i32)
declare void @llvm.amdgcn.raw.buffer.load.lds(<4 x i32>, ptr addrspace(3), i32, i32, i32, i32, i32)
declare i32 @llvm.amdgcn.update.dpp.i32(i32, i32, i32, i32, i32, i1)
declare i32 @llvm.amdgcn.workitem.id.x()
declare float @llvm.exp2.f32(float)
@lds = internal addrspace(3) global [512 x i32] poison
define amdgpu_kernel void @chain_and_srca(ptr addrspace(1) %p, <4 x i32> %rs, <4 x i16> %a, <4 x i16> %b) {
  %r1 = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16> %a, <4 x i16> %b, <4 x float> zeroinitializer, i32 0, i32 0, i32 0)
  %r2 = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16> %b, <4 x i16> %a, <4 x float> %r1, i32 0, i32 0, i32 0)
  %x = bitcast <4 x float> %r2 to <8 x i16>
  %lo = shufflevector <8 x i16> %x, <8 x i16> poison, <4 x i32> <i32 0, i32 1, i32 2, i32 3>
  %r3 = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16> %lo, <4 x i16> %b, <4 x float> zeroinitializer, i32 0, i32 0, i32 0)
  store <4 x float> %r3, ptr addrspace(1) %p
  ret void
}
define amdgpu_kernel void @sgpr_dpp_lanes(ptr addrspace(1) %p, <4 x i32> %rs, float %f, i32 %k) {
  %t = call i32 @llvm.amdgcn.workitem.id.x()
  %s = call i32 @llvm.amdgcn.readfirstlane.i32(i32 %t)
  %v = call i32 @llvm.amdgcn.raw.buffer.load.i32(<4 x i32> %rs, i32 %t, i32 %s, i32 0)
  %l = getelementptr i32, ptr addrspace(3) @lds, i32 %s
  call void @llvm.amdgcn.raw.buffer.load.lds(<4 x i32> %rs, ptr addrspace(3) %l, i32 4, i32 %t, i32 0, i32 0, i32 0)
  %x = mul i32 %t, %k
  %y = call i32 @llvm.amdgcn.update.dpp.i32(i32 0, i32 %x, i32 273, i32 15, i32 15, i1 false)
  %e = call float @llvm.exp2.f32(float %f)
  %e1 = fadd float %e, 1.0
  %u = fptoui float %e1 to i32
  %r = call i32 @llvm.amdgcn.readlane.i32(i32 %y, i32 %u)
  %z = add i32 %r, %v
  %q = getelementptr i32, ptr addrspace(1) %p, i32 %t
  store i32 %z, ptr addrspace(1) %q
  ret void
}
"#;

#[test]
fn llc_code_hitting_the_rules_is_clean_and_each_nop_matters() {
    for arch in Arch::ALL {
        let text = llc(IR, arch, "hazard-rules-ir");
        for k in ["chain_and_srca", "sgpr_dpp_lanes"] {
            let run = |text: &str, tag: &str| {
                let co = assemble(text, arch, tag);
                let dev = Device::new(arch);
                let buf = dev.alloc(4096).unwrap();
                // p, a zero resource (every buffer access out of range), then zeros.
                let mut args = buf.to_le_bytes().to_vec();
                args.resize(64, 0);
                let r = dev.launch_with(&co, k, [1, 1, 1], [64, 1, 1], &args, &LaunchOptions::default()).unwrap();
                r.by_checker(Checker::Hazard).len()
            };
            assert_eq!(run(&text, &format!("hr-{k}")), 0, "{arch} {k}: checker fires on llc-22's code");
            let lines: Vec<&str> = text.lines().collect();
            let start = lines.iter().position(|l| l.starts_with(&format!("{k}:"))).unwrap();
            let end = start + lines[start..].iter().position(|l| l.trim() == "s_endpgm").unwrap();
            let nop_lines: Vec<usize> = (start..end).filter(|&i| lines[i].trim().starts_with("s_nop")).collect();
            assert!(nop_lines.len() >= 2, "{arch} {k}: expected LLVM to insert hazard NOPs");
            let vmem = |l: &str| l.trim().starts_with("buffer_") || l.trim().starts_with("global_");
            for &i in &nop_lines {
                // Not modelled: the XNACK soft-clause break (`checkSoftClauseHazards`, only
                // with xnack enabled, LLVM's default target id): one wait state between
                // back-to-back VMEM instructions when the later one stores (LDS-DMA does).
                if vmem(lines[i - 1]) && vmem(lines[i + 1]) {
                    continue;
                }
                let cut: String =
                    lines.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, l)| format!("{l}\n")).collect();
                assert!(
                    run(&cut, &format!("hr-{k}-{i}")) > 0,
                    "{arch} {k}: deleting `{}` before `{}` went unnoticed",
                    lines[i].trim(),
                    lines[i + 1].trim()
                );
            }
        }
    }
}

/// The gfx950 `*_f8f6f4` MFMAs (fp8 x fp8, the form Triton's fp8 GEMMs use) against
/// LLVM's recognizer: 16 passes for 32x32x64, 8 for 16x16x128.
#[test]
fn f8f6f4_rules_match_llvm_wait_states_on_gfx950() {
    const V8A: &str = "$vgpr0_vgpr1_vgpr2_vgpr3_vgpr4_vgpr5_vgpr6_vgpr7";
    const V8B: &str = "$vgpr8_vgpr9_vgpr10_vgpr11_vgpr12_vgpr13_vgpr14_vgpr15";
    const D16: &str = "$vgpr16_vgpr17_vgpr18_vgpr19_vgpr20_vgpr21_vgpr22_vgpr23_vgpr24_vgpr25_vgpr26_vgpr27_vgpr28_vgpr29_vgpr30_vgpr31";
    const D4: &str = "$vgpr32_vgpr33_vgpr34_vgpr35";
    const N8: &str = "$vgpr40_vgpr41_vgpr42_vgpr43_vgpr44_vgpr45_vgpr46_vgpr47";
    const V6A: &str = "$vgpr0_vgpr1_vgpr2_vgpr3_vgpr4_vgpr5";
    const V4A: &str = "$vgpr0_vgpr1_vgpr2_vgpr3";
    const V4B: &str = "$vgpr8_vgpr9_vgpr10_vgpr11";
    let c = |name, mir: [&'static str; 2], asm| Case { name, mir, asm };
    let list = vec![
        c(
            "f8f6f4_32_result_valu",
            ["D16 = V_MFMA_F32_32X32X64_F8F6F4_f8_f8_vgprcd_e64 V8A, V8B, 0, 0, 0, implicit $mode, implicit $exec", "$vgpr50 = V_ADD_U32_e32 $vgpr20, $vgpr1, implicit $exec"],
            ["v_mfma_f32_32x32x64_f8f6f4 v[16:31], v[0:7], v[8:15], 0", "v_add_u32_e32 v50, v20, v1"],
        ),
        c(
            "f8f6f4_16_result_valu",
            ["D4 = V_MFMA_F32_16X16X128_F8F6F4_f8_f8_vgprcd_e64 V8A, V8B, 0, 0, 0, implicit $mode, implicit $exec", "$vgpr50 = V_ADD_U32_e32 $vgpr33, $vgpr1, implicit $exec"],
            ["v_mfma_f32_16x16x128_f8f6f4 v[32:35], v[0:7], v[8:15], 0", "v_add_u32_e32 v50, v33, v1"],
        ),
        c(
            "f8f6f4_32_srcc_full",
            ["A32 = V_MFMA_F32_32X32X64_F8F6F4_f8_f8_e64 V8A, V8B, 0, 0, 0, implicit $mode, implicit $exec", "A32 = V_MFMA_F32_32X32X64_F8F6F4_f8_f8_e64 V8A, V8B, A32, 0, 0, implicit $mode, implicit $exec"],
            ["v_mfma_f32_32x32x64_f8f6f4 a[0:15], v[0:7], v[8:15], 0", "v_mfma_f32_32x32x64_f8f6f4 a[0:15], v[0:7], v[8:15], a[0:15]"],
        ),
        c(
            "f8f6f4_32_result_as_srca",
            ["D16 = V_MFMA_F32_32X32X64_F8F6F4_f8_f8_vgprcd_e64 V8A, V8B, 0, 0, 0, implicit $mode, implicit $exec", "D4 = V_MFMA_F32_16X16X128_F8F6F4_f8_f8_vgprcd_e64 $vgpr16_vgpr17_vgpr18_vgpr19_vgpr20_vgpr21_vgpr22_vgpr23, V8B, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_mfma_f32_32x32x64_f8f6f4 v[16:31], v[0:7], v[8:15], 0", "v_mfma_f32_16x16x128_f8f6f4 v[32:35], v[16:23], v[8:15], 0"],
        ),
        c(
            "valu_vgpr_f8f6f4_srcb",
            ["$vgpr44 = V_MOV_B32_e32 0, implicit $exec", "D4 = V_MFMA_F32_16X16X128_F8F6F4_f8_f8_vgprcd_e64 V8A, N8, 0, 0, 0, implicit $mode, implicit $exec"],
            ["v_mov_b32_e32 v44, 0", "v_mfma_f32_16x16x128_f8f6f4 v[32:35], v[0:7], v[40:47], 0"],
        ),
        // fp4/fp6 operands on both sides halve the passes (mfma.rs Shape::of_inst).
        c(
            "f4f4_16_result_valu",
            ["D4 = V_MFMA_F32_16X16X128_F8F6F4_f4_f4_vgprcd_e64 V4A, V4B, 0, 4, 4, implicit $mode, implicit $exec", "$vgpr50 = V_ADD_U32_e32 $vgpr33, $vgpr1, implicit $exec"],
            ["v_mfma_f32_16x16x128_f8f6f4 v[32:35], v[0:3], v[8:11], 0 cbsz:4 blgp:4", "v_add_u32_e32 v50, v33, v1"],
        ),
        c(
            "scale_f4f4_16_result_valu",
            ["D4 = V_MFMA_SCALE_F32_16X16X128_F8F6F4_f4_f4_vgprcd_e64 V4A, V4B, 0, 4, 4, $vgpr48, $vgpr49, 4, 8, implicit $mode, implicit $exec", "$vgpr50 = V_ADD_U32_e32 $vgpr33, $vgpr1, implicit $exec"],
            ["v_mfma_scale_f32_16x16x128_f8f6f4 v[32:35], v[0:3], v[8:11], 0, v48, v49 op_sel:[1,0,0] op_sel_hi:[0,1,0] cbsz:4 blgp:4", "v_add_u32_e32 v50, v33, v1"],
        ),
        c(
            "scale_f8f4_16_result_valu",
            ["D4 = V_MFMA_SCALE_F32_16X16X128_F8F6F4_f8_f4_vgprcd_e64 V8A, V4B, 0, 0, 4, $vgpr48, $vgpr49, 0, 0, implicit $mode, implicit $exec", "$vgpr50 = V_ADD_U32_e32 $vgpr33, $vgpr1, implicit $exec"],
            ["v_mfma_scale_f32_16x16x128_f8f6f4 v[32:35], v[0:7], v[8:11], 0, v48, v49 blgp:4", "v_add_u32_e32 v50, v33, v1"],
        ),
        c(
            "scale_f6f4_32_result_valu",
            ["D16 = V_MFMA_SCALE_F32_32X32X64_F8F6F4_f6_f4_vgprcd_e64 V6A, V4B, 0, 2, 4, $vgpr48, $vgpr49, 0, 0, implicit $mode, implicit $exec", "$vgpr50 = V_ADD_U32_e32 $vgpr20, $vgpr1, implicit $exec"],
            ["v_mfma_scale_f32_32x32x64_f8f6f4 v[16:31], v[0:5], v[8:11], 0, v48, v49 cbsz:2 blgp:4", "v_add_u32_e32 v50, v20, v1"],
        ),
        c(
            "valu_vgpr_scale_operand",
            ["$vgpr49 = V_MOV_B32_e32 0, implicit $exec", "D4 = V_MFMA_SCALE_F32_16X16X128_F8F6F4_f4_f4_vgprcd_e64 V4A, V4B, 0, 4, 4, $vgpr48, $vgpr49, 0, 0, implicit $mode, implicit $exec"],
            ["v_mov_b32_e32 v49, 0", "v_mfma_scale_f32_16x16x128_f8f6f4 v[32:35], v[0:3], v[8:11], 0, v48, v49 cbsz:4 blgp:4"],
        ),
    ];
    let cases: Vec<(Case, String, String)> = list
        .into_iter()
        .map(|c| {
            let x = |s: &str| {
                s.replace("A32", A32)
                    .replace("D16", D16)
                    .replace("D4", D4)
                    .replace("V8A", V8A)
                    .replace("V8B", V8B)
                    .replace("N8", N8)
                    .replace("V6A", V6A)
                    .replace("V4A", V4A)
                    .replace("V4B", V4B)
            };
            let (p, q) = (x(c.mir[0]), x(c.mir[1]));
            (c, p, q)
        })
        .collect();
    let arch = Arch::Gfx950;
    let need = llvm_wait_states(arch, &cases);
    let mut text =
        format!("  .amdgcn_target \"amdgcn-amd-amdhsa--{}\"\n  .amdhsa_code_object_version 5\n", arch.name());
    for (c, _, _) in &cases {
        let n = need[c.name];
        let [p, q] = c.asm;
        text += &kernel(&format!("{}_ok", c.name), &format!("  {p}\n{}  {q}\n", nops(n)));
        if n > 0 {
            text += &kernel(&format!("{}_short", c.name), &format!("  {p}\n{}  {q}\n", nops(n - 1)));
        }
    }
    let co = assemble(&text, arch, "hazard-rules-f8f6f4");
    let run = |k: &str| {
        let dev = Device::new(arch);
        let buf = dev.alloc(4096).unwrap();
        let r = dev.launch_with(&co, k, [1, 1, 1], [64, 1, 1], &buf.to_le_bytes(), &LaunchOptions::default()).unwrap();
        r.by_checker(Checker::Hazard).into_iter().cloned().collect::<Vec<_>>()
    };
    for (c, _, _) in &cases {
        let n = need[c.name];
        let ok = run(&format!("{}_ok", c.name));
        assert!(ok.is_empty(), "{} ({n} wait states, LLVM's) still reported:\n{}", c.name, ok[0]);
        if n > 0 {
            let short = run(&format!("{}_short", c.name));
            assert!(
                short.iter().any(|r| r.message.contains(&format!("needs {n} "))),
                "{}: with {} wait states (LLVM needs {n}) the checker {}",
                c.name,
                n - 1,
                if short.is_empty() { "is silent".to_string() } else { format!("says: {}", short[0]) }
            );
        }
    }
    assert_eq!(need["f8f6f4_32_srcc_full"], 0);
    assert!(need["f8f6f4_32_result_valu"] > need["f8f6f4_16_result_valu"], "{need:?}");
    // fp4 x fp4 waits less than fp8 x fp8; one fp8 operand keeps the fp8 rate.
    assert!(need["f4f4_16_result_valu"] < need["f8f6f4_16_result_valu"], "{need:?}");
    assert_eq!(need["scale_f4f4_16_result_valu"], need["f4f4_16_result_valu"], "{need:?}");
    assert_eq!(need["scale_f8f4_16_result_valu"], need["f8f6f4_16_result_valu"], "{need:?}");
}
