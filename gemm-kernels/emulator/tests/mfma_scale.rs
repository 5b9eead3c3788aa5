//! gfx950's `v_mfma_scale_f32_{16x16x128,32x32x64}_f8f6f4` and their unscaled forms against
//! the reference GEMM of `gemm_core::mx`, bit for bit, for all 25 (A, B) format pairs.
//!
//! The registers are filled here from the documented layout, not from the emulator's code:
//! A[i][k] is in lane `i + M*floor(k/32)`, the lane's 32 k-values packed by
//! `gemm_core::mx::pack` into its 8/6/4 VGPRs (B[k][j] likewise with j); that lane's MX block
//! scale is byte `op_sel[0] + 2*op_sel_hi[0]` of the scale-A VGPR (entry 1 for B); C/D follow
//! ISA.md §1.1 (16x16: lane `j + 16*floor(i/4)`, register `i mod 4`; 32x32: lane
//! `j + 32*(floor(i/4) mod 2)`, register `4*floor(i/8) + i mod 4`). Every kernel is
//! assembled by llvm-mc-22. All random data comes from seeded ChaCha generators.

mod common;
use common::*;
use gemm_core::mx::{mx_gemm, pack, MxFormat, MxMatrix, E8M0, MX_BLOCK};
use gemm_emu::{Arch, Device, EmuError, FaultKind, LaunchOptions};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Dwords per lane in the input buffer: A v[0:7], B v[8:15], C v[16:31], scales v32, v33.
const IN_DWORDS: usize = 34;

/// One MFMA run: `inst` with each lane's registers loaded from `regs`; returns v[16:31] of
/// every lane.
fn run(tag: &str, inst: &str, regs: &[[u32; IN_DWORDS]]) -> Result<Vec<[u32; 16]>, EmuError> {
    let text = format!(
        r#"  .amdgcn_target "amdgcn-amd-amdhsa--gfx950"
  .amdhsa_code_object_version 5
  .text
  .globl k
  .p2align 8
  .type k,@function
k:
  s_load_dwordx4 s[0:3], s[0:1], 0x0
  v_mul_u32_u24_e32 v40, {stride}, v0
  v_lshlrev_b32_e32 v41, 6, v0
  s_waitcnt lgkmcnt(0)
  global_load_dwordx4 v[0:3], v40, s[0:1]
  global_load_dwordx4 v[4:7], v40, s[0:1] offset:16
  global_load_dwordx4 v[8:11], v40, s[0:1] offset:32
  global_load_dwordx4 v[12:15], v40, s[0:1] offset:48
  global_load_dwordx4 v[16:19], v40, s[0:1] offset:64
  global_load_dwordx4 v[20:23], v40, s[0:1] offset:80
  global_load_dwordx4 v[24:27], v40, s[0:1] offset:96
  global_load_dwordx4 v[28:31], v40, s[0:1] offset:112
  global_load_dwordx2 v[32:33], v40, s[0:1] offset:128
  s_waitcnt vmcnt(0)
  s_nop 7
  {inst}
  s_nop 7
  s_nop 7
  s_nop 7
  global_store_dwordx4 v41, v[16:19], s[2:3]
  global_store_dwordx4 v41, v[20:23], s[2:3] offset:16
  global_store_dwordx4 v41, v[24:27], s[2:3] offset:32
  global_store_dwordx4 v41, v[28:31], s[2:3] offset:48
  s_endpgm
  .section .rodata,"a",@progbits
  .p2align 6, 0x0
  .amdhsa_kernel k
    .amdhsa_kernarg_size 16
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_next_free_vgpr 48
    .amdhsa_next_free_sgpr 16
    .amdhsa_accum_offset 48
  .end_amdhsa_kernel
"#,
        stride = IN_DWORDS * 4
    );
    let co = assemble(&text, Arch::Gfx950, &format!("mfma-scale-{tag}"));
    let dev = Device::new(Arch::Gfx950);
    let bytes: Vec<u8> = regs.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
    let pin = upload(&dev, &bytes);
    let pout = dev.alloc(64 * 64).unwrap();
    let args = Args::new().ptr(pin).ptr(pout);
    let r = dev.launch_with(&co, "k", [1, 1, 1], [64, 1, 1], &args.0, &LaunchOptions::default())?;
    assert_clean(&r);
    let out: Vec<u32> = bytemuck::cast_slice(&download(&dev, pout, 64 * 64)).to_vec();
    Ok(out.chunks(16).map(|c| c.try_into().unwrap()).collect())
}

/// (lane, register) of C/D[i][j], ISA.md §1.1.
fn cd_pos(m: usize, i: usize, j: usize) -> (usize, usize) {
    if m == 16 {
        (j + 16 * (i / 4), i % 4)
    } else {
        (j + 32 * ((i / 4) % 2), 4 * (i / 8) + i % 4)
    }
}

/// A random finite code of `f` (NaN and infinity codes are left to the specials test).
fn finite_code(f: MxFormat, rng: &mut ChaCha8Rng) -> u8 {
    loop {
        let c = rng.gen_range(0..f.codes()) as u8;
        if f.decode(c).is_finite() {
            return c;
        }
    }
}

struct Case {
    m: usize,
    k: usize,
    fa: MxFormat,
    fb: MxFormat,
    scaled: bool,
    /// (op_sel, op_sel_hi) bits: entry 0 scale A, entry 1 scale B.
    sel: (u8, u8),
}

impl Case {
    fn shape(&self) -> &'static str {
        if self.m == 16 {
            "16x16x128"
        } else {
            "32x32x64"
        }
    }
    fn inst(&self) -> String {
        // 32 k-values per lane: as many VGPRs as the format has bits.
        let (na, nb) = (self.fa.bits() as usize, self.fb.bits() as usize);
        let d = if self.m == 16 { "v[16:19]" } else { "v[16:31]" };
        let mut s = if self.scaled {
            format!(
                "v_mfma_scale_f32_{}_f8f6f4 {d}, v[0:{}], v[8:{}], {d}, v32, v33 op_sel:[{},{},0] op_sel_hi:[{},{},0]",
                self.shape(),
                na - 1,
                8 + nb - 1,
                self.sel.0 & 1,
                self.sel.0 >> 1 & 1,
                self.sel.1 & 1,
                self.sel.1 >> 1 & 1
            )
        } else {
            format!("v_mfma_f32_{}_f8f6f4 {d}, v[0:{}], v[8:{}], {d}", self.shape(), na - 1, 8 + nb - 1)
        };
        for (key, f) in [("cbsz", self.fa), ("blgp", self.fb)] {
            if f.mfma_code() != 0 {
                s.push_str(&format!(" {key}:{}", f.mfma_code()));
            }
        }
        s
    }
    /// The byte each scale is read from.
    fn byte(&self, which: u8) -> usize {
        ((self.sel.0 >> which & 1) | (self.sel.1 >> which & 1) << 1) as usize
    }
}

/// Places A (`m x k`), B^T (`m x k`, square tiles) and C into lane registers per the module
/// documentation; the scale bytes not selected hold noise.
fn registers(case: &Case, a: &MxMatrix, b: &MxMatrix, c: &[f32], rng: &mut ChaCha8Rng) -> Vec<[u32; IN_DWORDS]> {
    let (m, k) = (case.m, case.k);
    let mut regs = vec![[0u32; IN_DWORDS]; 64];
    for (mat, base, scale_reg, which) in [(a, 0usize, 32usize, 0u8), (b, 8, 33, 1)] {
        for row in 0..m {
            for g in 0..k / MX_BLOCK {
                let lane = row + m * g;
                let codes: Vec<u8> = (0..MX_BLOCK).map(|t| mat.code(row, g * MX_BLOCK + t)).collect();
                let bytes = pack(mat.format(), &codes).unwrap();
                for (d, chunk) in bytes.chunks(4).enumerate() {
                    let mut w = [0u8; 4];
                    w[..chunk.len()].copy_from_slice(chunk);
                    regs[lane][base + d] = u32::from_le_bytes(w);
                }
                let mut s = rng.gen::<u32>();
                let sh = 8 * case.byte(which);
                s = (s & !(0xFF << sh)) | u32::from(mat.scale(row, g * MX_BLOCK).0) << sh;
                regs[lane][scale_reg] = s;
            }
        }
    }
    for i in 0..m {
        for j in 0..m {
            let (lane, r) = cd_pos(m, i, j);
            regs[lane][16 + r] = c[i * m + j].to_bits();
        }
    }
    regs
}

/// Random operands for `case`; when `sweep`, A's and B's codes run through every finite
/// code of their formats (each several times), so every value passes the MFMA path.
fn operands(case: &Case, rng: &mut ChaCha8Rng, sweep: bool) -> (MxMatrix, MxMatrix, Vec<f32>) {
    let (m, k) = (case.m, case.k);
    let mat = |f: MxFormat, rng: &mut ChaCha8Rng| {
        let finite: Vec<u8> = (0..f.codes()).map(|c| c as u8).filter(|&c| f.decode(c).is_finite()).collect();
        let codes: Vec<u8> =
            (0..m * k).map(|t| if sweep { finite[(t * 7 + 3) % finite.len()] } else { finite_code(f, rng) }).collect();
        let scales: Vec<E8M0> = (0..m * k / MX_BLOCK)
            .map(|_| {
                if !case.scaled {
                    E8M0::ONE
                } else {
                    // Mostly moderate exponents; sometimes the extremes 2^-127 and 2^127.
                    match rng.gen_range(0..20) {
                        0 => E8M0::MIN,
                        1 => E8M0::MAX,
                        _ => E8M0(rng.gen_range(127 - 24..=127 + 24)),
                    }
                }
            })
            .collect();
        MxMatrix::new(f, m, k, codes, scales).unwrap()
    };
    let a = mat(case.fa, rng);
    let b = mat(case.fb, rng);
    let c: Vec<f32> = (0..m * m).map(|_| rng.gen_range(-64.0f32..64.0)).collect();
    (a, b, c)
}

fn check(case: &Case, a: &MxMatrix, b: &MxMatrix, c: &[f32], rng: &mut ChaCha8Rng, tag: &str) {
    let m = case.m;
    let regs = registers(case, a, b, c, rng);
    let got = run(tag, &case.inst(), &regs).unwrap();
    let mut want = c.to_vec();
    mx_gemm(a, b, &mut want, 1.0, 1.0).unwrap();
    for i in 0..m {
        for j in 0..m {
            let (lane, r) = cd_pos(m, i, j);
            assert_eq!(
                got[lane][r],
                want[i * m + j].to_bits(),
                "{}: D[{i}][{j}] = {} but the reference says {}",
                case.inst(),
                f32::from_bits(got[lane][r]),
                want[i * m + j]
            );
        }
    }
}

#[test]
fn every_format_pair_matches_the_reference_bit_for_bit() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5CA1ED);
    for (m, k) in [(16, 128), (32, 64)] {
        for fa in MxFormat::ALL {
            for fb in MxFormat::ALL {
                for scaled in [false, true] {
                    let sel = if scaled { (rng.gen_range(0..4), rng.gen_range(0..4)) } else { (0, 0) };
                    let case = Case { m, k, fa, fb, scaled, sel };
                    let sweep = rng.gen_bool(0.5);
                    let (a, b, c) = operands(&case, &mut rng, sweep);
                    let tag = format!("{m}-{}-{}-{}", fa.mfma_code(), fb.mfma_code(), scaled as u8);
                    check(&case, &a, &b, &c, &mut rng, &tag);
                }
            }
        }
    }
}

#[test]
fn every_scale_byte_is_selectable_and_specials_propagate() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xB17E);
    // All four bytes of each scale register, both shapes.
    for (m, k) in [(16, 128), (32, 64)] {
        for sel_a in 0..4u8 {
            let sel_b = 3 - sel_a;
            let case = Case {
                m,
                k,
                fa: MxFormat::E2M1,
                fb: MxFormat::E3M2,
                scaled: true,
                sel: ((sel_a & 1) | (sel_b & 1) << 1, (sel_a >> 1) | (sel_b >> 1) << 1),
            };
            assert_eq!((case.byte(0), case.byte(1)), (sel_a as usize, sel_b as usize));
            let (a, b, c) = operands(&case, &mut rng, false);
            check(&case, &a, &b, &c, &mut rng, &format!("sel-{m}-{sel_a}"));
        }
    }
    // A NaN scale (0xFF) poisons its row; fp8 NaN and E5M2 infinities follow IEEE.
    let case = Case { m: 16, k: 128, fa: MxFormat::E4M3, fb: MxFormat::E5M2, scaled: true, sel: (0, 0) };
    let (a, b, c) = operands(&case, &mut rng, false);
    let mut ac = a.codes().to_vec();
    let mut asc = a.scales().to_vec();
    asc[3 * 4 + 1] = E8M0::NAN; // row 3, block 1
    ac[5 * 128 + 9] = 0x7F; // row 5: an E4M3 NaN
    let a = MxMatrix::new(MxFormat::E4M3, 16, 128, ac, asc).unwrap();
    let mut bc = b.codes().to_vec();
    bc[7 * 128 + 100] = 0x7C; // column 7: +inf in E5M2
    let b = MxMatrix::new(MxFormat::E5M2, 16, 128, bc, b.scales().to_vec()).unwrap();
    let mut want = c.clone();
    mx_gemm(&a, &b, &mut want, 1.0, 1.0).unwrap();
    assert!(want[3 * 16].is_nan() && want[5 * 16 + 2].is_nan());
    assert!(want[7].is_infinite() || want[7].is_nan());
    check(&case, &a, &b, &c, &mut rng, "specials");
}

#[test]
fn reserved_format_codes_are_reported_not_computed() {
    let regs = vec![[0u32; IN_DWORDS]; 64];
    for inst in [
        "v_mfma_scale_f32_16x16x128_f8f6f4 v[16:19], v[0:7], v[8:15], v[16:19], v32, v33 cbsz:5",
        "v_mfma_f32_32x32x64_f8f6f4 v[16:31], v[0:7], v[8:15], v[16:31] blgp:7",
    ]
    .iter()
    .enumerate()
    {
        match run(&format!("reserved-{}", inst.0), inst.1, &regs) {
            Err(EmuError::Fault(f)) => {
                assert!(matches!(&f.kind, FaultKind::Unsupported(m) if m.contains("reserved")), "{}: {f}", inst.1)
            }
            other => panic!("{}: expected an unsupported-format fault, got {:?}", inst.1, other.map(|_| ())),
        }
    }
}

/// Runs an llc-22-compiled kernel `k(in, out)` on the register image `regs` (the layout of
/// [`run`]) and returns the 16 dwords each lane stored.
fn run_llvm(tag: &str, ir: &str, regs: &[[u32; IN_DWORDS]]) -> Vec<[u32; 16]> {
    let asm = llc(ir, Arch::Gfx950, &format!("mfma-scale-{tag}"));
    let co = assemble(&asm, Arch::Gfx950, &format!("mfma-scale-llc-{tag}"));
    let dev = Device::new(Arch::Gfx950);
    let bytes: Vec<u8> = regs.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
    let pin = upload(&dev, &bytes);
    let pout = dev.alloc(64 * 64).unwrap();
    let args = Args::new().ptr(pin).ptr(pout);
    let r = dev.launch_with(&co, "k", [1, 1, 1], [64, 1, 1], &args.0, &LaunchOptions::default()).unwrap();
    assert_clean(&r);
    let out: Vec<u32> = bytemuck::cast_slice(&download(&dev, pout, 64 * 64)).to_vec();
    out.chunks(16).map(|c| c.try_into().unwrap()).collect()
}

/// The LLVM intrinsic `llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4` compiled by llc-22 (its
/// hazard NOPs, register allocation and encoding are LLVM's): its `opsel_a`/`opsel_b`
/// arguments pick the scale byte, and the result equals the reference bit for bit.
#[test]
fn llc_compiled_intrinsic_calls_match_the_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x11C);
    for (fa, fb, opsel_a, opsel_b) in [
        (MxFormat::E4M3, MxFormat::E5M2, 1u8, 2u8),
        (MxFormat::E2M1, MxFormat::E2M3, 3, 0),
        (MxFormat::E3M2, MxFormat::E2M1, 2, 3),
    ] {
        let (na, nb) = (fa.bits(), fb.bits());
        let sel = ((opsel_a & 1) | (opsel_b & 1) << 1, (opsel_a >> 1) | (opsel_b >> 1) << 1);
        let case = Case { m: 16, k: 128, fa, fb, scaled: true, sel };
        let (a, b, c) = operands(&case, &mut rng, false);
        let regs = registers(&case, &a, &b, &c, &mut rng);
        let ir = format!(
            r#"declare i32 @llvm.amdgcn.workitem.id.x()
declare <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v{na}i32.v{nb}i32(<{na} x i32>, <{nb} x i32>, <4 x float>, i32, i32, i32, i32, i32, i32)
define amdgpu_kernel void @k(ptr addrspace(1) %in, ptr addrspace(1) %out) {{
  %lane = call i32 @llvm.amdgcn.workitem.id.x()
  %base = mul i32 %lane, {IN_DWORDS}
  %pa = getelementptr i32, ptr addrspace(1) %in, i32 %base
  %a = load <{na} x i32>, ptr addrspace(1) %pa, align 4
  %ib = add i32 %base, 8
  %pb = getelementptr i32, ptr addrspace(1) %in, i32 %ib
  %b = load <{nb} x i32>, ptr addrspace(1) %pb, align 4
  %ic = add i32 %base, 16
  %pc = getelementptr i32, ptr addrspace(1) %in, i32 %ic
  %c = load <4 x float>, ptr addrspace(1) %pc, align 4
  %isa = add i32 %base, 32
  %psa = getelementptr i32, ptr addrspace(1) %in, i32 %isa
  %sa = load i32, ptr addrspace(1) %psa, align 4
  %isb = add i32 %base, 33
  %psb = getelementptr i32, ptr addrspace(1) %in, i32 %isb
  %sb = load i32, ptr addrspace(1) %psb, align 4
  %r = call <4 x float> @llvm.amdgcn.mfma.scale.f32.16x16x128.f8f6f4.v{na}i32.v{nb}i32(<{na} x i32> %a, <{nb} x i32> %b, <4 x float> %c, i32 {ca}, i32 {cb}, i32 {opsel_a}, i32 %sa, i32 {opsel_b}, i32 %sb)
  %io = mul i32 %lane, 16
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %io
  store <4 x float> %r, ptr addrspace(1) %po, align 4
  ret void
}}
"#,
            ca = fa.mfma_code(),
            cb = fb.mfma_code(),
        );
        let got = run_llvm(&format!("llc-{}{}", fa.mfma_code(), fb.mfma_code()), &ir, &regs);
        let mut want = c.clone();
        mx_gemm(&a, &b, &mut want, 1.0, 1.0).unwrap();
        for i in 0..16 {
            for j in 0..16 {
                let (lane, r) = cd_pos(16, i, j);
                assert_eq!(got[lane][r], want[i * 16 + j].to_bits(), "{fa} x {fb}: D[{i}][{j}]");
            }
        }
    }
}
