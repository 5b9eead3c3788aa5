//! The four MFMAs outside the calculator dump of tests/data: v_mfma_f64_16x16x4_f64,
//! v_mfma_f64_4x4x4_4b_f64 (both archs), v_mfma_f32_16x16x8_xf32, v_mfma_f32_32x32x4_xf32
//! (gfx942). Layouts: AMD's matrix instruction calculator (ROCm/amd_matrix_instruction_calculator,
//! `matrix_calculator.py`, gfx9 `__get_input_reg_lanes` / `__get_output_reg_lanes`, ported
//! below storage slot by storage slot: a 64-bit slot is a VGPR pair). Numbers: llvm-mc-22
//! kernels running one MFMA, checked against products computed here.

mod common;
use common::*;
use gemm_emu::mfma::{round_xf32, Shape};
use gemm_emu::{Arch, Device, LaunchOptions};
use gemm_isa::{Op, TABLE};
use std::collections::HashSet;

const F64_16: &str = "v_mfma_f64_16x16x4_f64";
const F64_4: &str = "v_mfma_f64_4x4x4_4b_f64";
const XF32_16: &str = "v_mfma_f32_16x16x8_xf32";
const XF32_32: &str = "v_mfma_f32_32x32x4_xf32";

fn op(name: &str) -> Op {
    TABLE.iter().find(|d| d.name == name).unwrap().op
}

/// (m, n, k, blocks, input bits, output bits, A/B VGPRs, C/D VGPRs) from the calculator's
/// table (cdna2 f64 entries; CDNA3 xf32 inputs are 32-bit words) and llvm-mc-22's operand
/// widths (`v[0:7], v[8:9], v[10:11]` for 16x16x4_f64 etc., isa table).
fn calc(name: &str) -> (u32, u32, u32, u32, u32, u32, u32, u32) {
    match name {
        F64_16 => (16, 16, 4, 1, 64, 64, 2, 8),
        F64_4 => (4, 4, 4, 4, 64, 64, 2, 2),
        XF32_16 => (16, 16, 8, 1, 32, 32, 2, 4),
        XF32_32 => (32, 32, 4, 1, 32, 32, 2, 16),
        _ => unreachable!(),
    }
}

/// Calculator `__get_input_reg_lanes`: (lane, first VGPR) of A[i][k] (B[k][j] with j).
fn calc_in(name: &str, i: u32, k: u32, b: u32) -> (u32, u32) {
    let (m, _, kk, nb, bits, ..) = calc(name);
    let per = kk / (64 / (m * nb));
    let slot = k % per;
    let lane = b * m + (k / per) * m * nb + i;
    (lane, slot * bits / 32)
}

/// Calculator `__get_output_reg_lanes`: (lane, first VGPR) of D[i][j] in block b.
fn calc_out(name: &str, i: u32, j: u32, b: u32) -> (u32, u32) {
    let (m, n, _, _, _, bits, ..) = calc(name);
    let per_reg = 64 / n;
    let height = if bits == 64 { 1 } else { 4 };
    let bpr = (64f64 / ((n * m / height) as f64)).ceil() as u32;
    let slot = b * (m * n / 64) + i / (height * per_reg) * height + i % height;
    let lane = (b % bpr) * n + (i / height % per_reg) * bpr * n + j;
    (lane, slot * bits / 32)
}

#[test]
fn layouts_match_the_calculator_lane_by_lane() {
    for name in [F64_16, F64_4, XF32_16, XF32_32] {
        let sh = Shape::of(op(name)).unwrap();
        let (m, n, k, nb, bits, obits, ab, cd) = calc(name);
        assert_eq!((sh.m, sh.n, sh.k, sh.blocks, sh.a.bits(), sh.out_bits()), (m, n, k, nb, bits, obits), "{name}");
        assert_eq!((sh.ab_regs(), sh.cd_regs()), (ab, cd), "{name}: register counts");
        let (mut a, mut d) = (HashSet::new(), HashSet::new());
        for b in 0..nb {
            for i in 0..m {
                for kk in 0..k {
                    let (lane, reg) = calc_in(name, i, kk, b);
                    assert_eq!(sh.ab_pos(i, kk, b, bits), (lane, reg, 0), "{name}: A[{i}][{kk}] block {b}");
                    assert!(a.insert((lane, reg)), "{name}: A slot used twice");
                }
                for j in 0..n {
                    let (lane, reg) = calc_out(name, i, j, b);
                    assert_eq!(sh.cd_pos(i, j, b), (lane, reg), "{name}: D[{i}][{j}] block {b}");
                    assert!(d.insert((lane, reg)), "{name}: D slot used twice");
                }
            }
        }
        // Every lane of every register (pair) holds exactly one element.
        let step = bits / 32;
        assert_eq!(a.len() as u32, 64 * ab / step, "{name}: A does not fill its registers");
        assert_eq!(d.len() as u32, 64 * cd / (obits / 32), "{name}: D does not fill its registers");
    }
    // The calculator's printed formulas: 16x16x4f64 D in v[2*floor(i/4)+1 : 2*floor(i/4)],
    // lane j + 16*(i mod 4); A[i][k] in v[1:0] of lane i + 16k.
    let sh = Shape::of(op(F64_16)).unwrap();
    assert_eq!(sh.cd_pos(5, 3, 0), (3 + 16, 2));
    assert_eq!(sh.cd_pos(15, 15, 0), (15 + 48, 6));
    assert_eq!(sh.ab_pos(7, 3, 0, 64), (7 + 48, 0, 0));
    let sh = Shape::of(op(F64_4)).unwrap();
    assert_eq!(sh.cd_pos(2, 1, 3), (1 + 12 + 32, 0));
    assert_eq!(sh.ab_pos(2, 3, 1, 64), (2 + 4 + 48, 0, 0));
}

#[test]
fn xf32_rounding_choice_is_nearest_even_at_ten_mantissa_bits() {
    let one = 1.0f32;
    assert_eq!(round_xf32(one + 2f32.powi(-11)), one, "tie to even (down)");
    assert_eq!(round_xf32(one + 3.0 * 2f32.powi(-11)), one + 2f32.powi(-9), "tie to even (up)");
    assert_eq!(round_xf32(one + 2f32.powi(-11) + 2f32.powi(-20)), one + 2f32.powi(-10));
    assert_eq!(round_xf32(-1.5), -1.5);
    assert!(round_xf32(f32::NAN).is_nan());
}

/// Each lane loads v[0:19] (A v[0:1], B v[2:3], C v[4:19]), runs `inst`, stores v[4:19].
fn run(arch: Arch, tag: &str, inst: &str, regs: &[[u32; 20]]) -> Vec<[u32; 16]> {
    let text = format!(
        r#"  .amdgcn_target "amdgcn-amd-amdhsa--{a}"
  .amdhsa_code_object_version 5
  .text
  .globl k
  .p2align 8
  .type k,@function
k:
  s_load_dwordx4 s[0:3], s[0:1], 0x0
  v_mul_u32_u24_e32 v24, 0x50, v0
  v_lshlrev_b32_e32 v25, 6, v0
  s_waitcnt lgkmcnt(0)
  global_load_dwordx4 v[0:3], v24, s[0:1]
  global_load_dwordx4 v[4:7], v24, s[0:1] offset:16
  global_load_dwordx4 v[8:11], v24, s[0:1] offset:32
  global_load_dwordx4 v[12:15], v24, s[0:1] offset:48
  global_load_dwordx4 v[16:19], v24, s[0:1] offset:64
  s_waitcnt vmcnt(0)
  s_nop 7
  {inst}
  s_nop 7
  s_nop 7
  s_nop 7
  global_store_dwordx4 v25, v[4:7], s[2:3]
  global_store_dwordx4 v25, v[8:11], s[2:3] offset:16
  global_store_dwordx4 v25, v[12:15], s[2:3] offset:32
  global_store_dwordx4 v25, v[16:19], s[2:3] offset:48
  s_endpgm
  .section .rodata,"a",@progbits
  .p2align 6, 0x0
  .amdhsa_kernel k
    .amdhsa_kernarg_size 16
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_next_free_vgpr 32
    .amdhsa_next_free_sgpr 16
    .amdhsa_accum_offset 32
  .end_amdhsa_kernel
"#,
        a = arch.name()
    );
    let co = assemble(&text, arch, &format!("mfma-{tag}"));
    let dev = Device::new(arch);
    let bytes: Vec<u8> = regs.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
    let pin = upload(&dev, &bytes);
    let pout = dev.alloc(64 * 64).unwrap();
    let args = Args::new().ptr(pin).ptr(pout);
    let r = dev.launch_with(&co, "k", [1, 1, 1], [64, 1, 1], &args.0, &LaunchOptions::default()).unwrap();
    assert_clean(&r);
    let out: Vec<u32> = bytemuck::cast_slice(&download(&dev, pout, 64 * 64)).to_vec();
    out.chunks(16).map(|c| c.try_into().unwrap()).collect()
}

/// Small dyadic values: every product and sum below is exact, whatever the order.
fn val(seed: u32) -> f64 {
    (((seed.wrapping_mul(2654435761) >> 7) % 17) as f64 - 8.0) * 0.25
}

/// Runs `name` with A, B, C placed by the calculator's mapping (not the emulator's) and
/// checks D = sa*A * sb*B + sc*C element by element.
fn check_numbers(arch: Arch, name: &str, mods: &str, (sa, sb, sc): (f64, f64, f64)) {
    let (m, n, k, nb, bits, obits, _, cd) = calc(name);
    let a = |b: u32, i: u32, kk: u32| val(1 + b * 1000 + i * 10 + kk);
    let bm = |b: u32, kk: u32, j: u32| val(50_000 + b * 1000 + kk * 40 + j);
    let c = |b: u32, i: u32, j: u32| val(90_000 + b * 1000 + i * 40 + j);
    let mut regs = vec![[0u32; 20]; 64];
    let put = |regs: &mut Vec<[u32; 20]>, lane: u32, reg: u32, v: f64, wide: bool| {
        if wide {
            let x = v.to_bits();
            regs[lane as usize][reg as usize] = x as u32;
            regs[lane as usize][reg as usize + 1] = (x >> 32) as u32;
        } else {
            regs[lane as usize][reg as usize] = (v as f32).to_bits();
        }
    };
    for b in 0..nb {
        for kk in 0..k {
            for i in 0..m {
                let (lane, reg) = calc_in(name, i, kk, b);
                put(&mut regs, lane, reg, a(b, i, kk), bits == 64);
            }
            for j in 0..n {
                let (lane, reg) = calc_in(name, j, kk, b);
                put(&mut regs, lane, 2 + reg, bm(b, kk, j), bits == 64);
            }
        }
        for i in 0..m {
            for j in 0..n {
                let (lane, reg) = calc_out(name, i, j, b);
                put(&mut regs, lane, 4 + reg, c(b, i, j), obits == 64);
            }
        }
    }
    let hi = 4 + cd - 1;
    let inst = format!("{name} v[4:{hi}], v[0:1], v[2:3], v[4:{hi}]{mods}");
    let out = run(arch, &format!("{name}{}", mods.len()), &inst, &regs);
    for b in 0..nb {
        for i in 0..m {
            for j in 0..n {
                let want = (0..k).map(|kk| sa * a(b, i, kk) * sb * bm(b, kk, j)).sum::<f64>() + sc * c(b, i, j);
                let (lane, reg) = calc_out(name, i, j, b);
                let o = &out[lane as usize];
                let got = if obits == 64 {
                    f64::from_bits(u64::from(o[reg as usize]) | (u64::from(o[reg as usize + 1]) << 32))
                } else {
                    f64::from(f32::from_bits(o[reg as usize]))
                };
                assert_eq!(got, want, "{arch} {inst}: D[{i}][{j}] block {b}");
            }
        }
    }
}

#[test]
fn f64_mfmas_compute_on_both_archs() {
    for arch in Arch::ALL {
        for name in [F64_16, F64_4] {
            check_numbers(arch, name, "", (1.0, 1.0, 1.0));
            check_numbers(arch, name, " neg:[1,0,1]", (-1.0, 1.0, -1.0));
        }
    }
}

#[test]
fn xf32_mfmas_compute_on_gfx942() {
    for name in [XF32_16, XF32_32] {
        check_numbers(Arch::Gfx942, name, "", (1.0, 1.0, 1.0));
    }
}
