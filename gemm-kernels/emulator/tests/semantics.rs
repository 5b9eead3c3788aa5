//! Instruction semantics that GEMM kernels depend on, one assembled snippet each
//! (llvm-mc-22 + ld.lld-22). Every lane loads four input dwords into v[0:3], runs the
//! snippet, and stores v[4:7]. Expectations are computed here from the ISA definitions
//! (hand-coded encodings, f64/`half` arithmetic), never from the emulator's output.

mod common;
use common::*;
use gemm_emu::{Arch, Device, LaunchOptions};
use half::{bf16, f16};
use rand::{Rng, SeedableRng};

type Lanes = Vec<[u32; 4]>;

fn kernel(arch: Arch, body: &str) -> String {
    format!(
        r#"  .amdgcn_target "amdgcn-amd-amdhsa--{a}"
  .amdhsa_code_object_version 5
  .text
  .globl k
  .p2align 8
  .type k,@function
k:
  s_load_dwordx4 s[0:3], s[0:1], 0x0
  v_lshlrev_b32_e32 v10, 4, v0
  v_lshlrev_b32_e32 v11, 2, v0
  v_mov_b32_e32 v12, v0
  s_waitcnt lgkmcnt(0)
  global_load_dwordx4 v[0:3], v10, s[0:1]
  global_load_dwordx4 v[4:7], v10, s[0:1] offset:1024
  s_waitcnt vmcnt(0)
  s_nop 7
{body}
  s_nop 7
  global_store_dwordx4 v10, v[4:7], s[2:3]
  s_endpgm
  .section .rodata,"a",@progbits
  .p2align 6, 0x0
  .amdhsa_kernel k
    .amdhsa_group_segment_fixed_size 65536
    .amdhsa_kernarg_size 16
    .amdhsa_user_sgpr_count 2
    .amdhsa_user_sgpr_kernarg_segment_ptr 1
    .amdhsa_next_free_vgpr 16
    .amdhsa_next_free_sgpr 16
    .amdhsa_accum_offset 16
  .end_amdhsa_kernel
"#,
        a = arch.name()
    )
}

/// Runs `body` on one wave: v[0:3] = `inp[lane]`, v[4:7] = `old[lane]` on entry
/// (v10 = 16*lane, v11 = 4*lane, v12 = lane); returns v[4:7] per lane.
fn run(arch: Arch, tag: &str, body: &str, inp: &Lanes, old: &Lanes) -> Lanes {
    let co = assemble(&kernel(arch, body), arch, &format!("sem-{tag}"));
    let dev = Device::new(arch);
    let mut bytes: Vec<u8> = inp.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
    bytes.extend(old.iter().flatten().flat_map(|x| x.to_le_bytes()));
    let pin = upload(&dev, &bytes);
    let pout = dev.alloc(1024).unwrap();
    let args = Args::new().ptr(pin).ptr(pout);
    let r = dev.launch_with(&co, "k", [1, 1, 1], [64, 1, 1], &args.0, &LaunchOptions::default()).unwrap();
    assert_clean(&r);
    let out: Vec<u32> = bytemuck::cast_slice(&download(&dev, pout, 1024)).to_vec();
    out.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect()
}

fn random_lanes(seed: u64, f: impl Fn(&mut rand_chacha::ChaCha8Rng) -> u32) -> Lanes {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..64).map(|_| [f(&mut rng), f(&mut rng), f(&mut rng), f(&mut rng)]).collect()
}

fn float_bits(r: &mut rand_chacha::ChaCha8Rng) -> u32 {
    r.gen_range(-100.0f32..100.0).to_bits()
}

fn zeros() -> Lanes {
    vec![[0; 4]; 64]
}

fn f(x: u32) -> f32 {
    f32::from_bits(x)
}

#[test]
fn vop3p_packed_f32_fma_mul_with_op_sel_and_neg() {
    let inp = random_lanes(1, float_bits);
    for arch in Arch::ALL {
        // D.lo = fma(-A[op_sel[0]], B[op_sel[1]], C[op_sel[2]]), D.hi with op_sel_hi, neg_hi.
        let out = run(
            arch,
            "pkfma",
            "  v_pk_fma_f32 v[4:5], v[0:1], v[2:3], v[0:1] op_sel:[1,0,1] op_sel_hi:[0,1,0] neg_lo:[1,0,0] neg_hi:[0,0,1]\n  v_pk_mul_f32 v[6:7], v[0:1], v[2:3] op_sel_hi:[0,1]",
            &inp,
            &zeros(),
        );
        for (l, (i, o)) in inp.iter().zip(&out).enumerate() {
            let lo = (-f(i[1])).mul_add(f(i[2]), f(i[1]));
            let hi = f(i[0]).mul_add(f(i[3]), -f(i[0]));
            assert_eq!([o[0], o[1]], [lo.to_bits(), hi.to_bits()], "{arch} lane {l} v_pk_fma_f32");
            let (mlo, mhi) = (f(i[0]) * f(i[2]), f(i[0]) * f(i[3]));
            assert_eq!([o[2], o[3]], [mlo.to_bits(), mhi.to_bits()], "{arch} lane {l} v_pk_mul_f32");
        }
    }
}

#[test]
fn vop3p_packed_f16_add_with_op_sel_and_neg() {
    let h = |r: &mut rand_chacha::ChaCha8Rng| {
        let a = f16::from_f32(r.gen_range(-60.0..60.0)).to_bits() as u32;
        let b = f16::from_f32(r.gen_range(-1.0..1.0)).to_bits() as u32;
        a | (b << 16)
    };
    let inp = random_lanes(2, h);
    let half_of = |x: u32, hi: bool| f16::from_bits(if hi { (x >> 16) as u16 } else { x as u16 }).to_f64();
    for arch in Arch::ALL {
        let out = run(
            arch,
            "pkaddf16",
            "  v_pk_add_f16 v4, v0, v1 op_sel:[1,0] op_sel_hi:[0,1] neg_lo:[0,1]\n  v_pk_add_f16 v5, v0, v1",
            &inp,
            &zeros(),
        );
        for (l, (i, o)) in inp.iter().zip(&out).enumerate() {
            // f16 + f16 is exact in f64; one RNE rounding to f16.
            let r = |x: f64| f16::from_f64(x).to_bits() as u32;
            let lo = r(half_of(i[0], true) - half_of(i[1], false));
            let hi = r(half_of(i[0], false) + half_of(i[1], true));
            assert_eq!(o[0], lo | (hi << 16), "{arch} lane {l} op_sel/neg");
            let lo = r(half_of(i[0], false) + half_of(i[1], false));
            let hi = r(half_of(i[0], true) + half_of(i[1], true));
            assert_eq!(o[1], lo | (hi << 16), "{arch} lane {l} plain");
        }
    }
}

#[test]
fn cvt_pk_bf16_f32_rounds_to_nearest_even_with_src0_low() {
    let arch = Arch::Gfx950;
    let mut inp = random_lanes(3, float_bits);
    // Ties: 0x3F808000 rounds down to even 0x3F80, 0x3F818000 up to 0x3F82; just above a
    // tie rounds up; just below rounds down.
    let ties = [(0x3F80_8000, 0x3F80), (0x3F81_8000, 0x3F82), (0x3F80_8001, 0x3F81), (0xBF80_7FFF, 0xBF80)];
    for (l, (x, _)) in ties.iter().enumerate() {
        inp[l][0] = *x;
        inp[l][1] = ties[(l + 1) % 4].0;
    }
    let out = run(arch, "cvtpkbf16", "  v_cvt_pk_bf16_f32 v4, v0, v1", &inp, &zeros());
    for (l, (i, o)) in inp.iter().zip(&out).enumerate() {
        // RNE by integer arithmetic (no NaNs among the inputs).
        let rne = |x: u32| (x + 0x7FFF + ((x >> 16) & 1)) >> 16;
        let want = rne(i[0]) | (rne(i[1]) << 16);
        assert_eq!(o[0], want, "lane {l}");
        assert_eq!(want & 0xFFFF, u32::from(bf16::from_f32(f(i[0])).to_bits()));
        if l < 4 {
            assert_eq!(o[0] & 0xFFFF, ties[l].1, "tie lane {l}");
        }
    }
}

#[test]
fn fp8_conversions_per_arch_flavour() {
    // (f32, OCP E4M3FN byte on gfx950, FNUZ E4M3 byte on gfx942), hand-encoded.
    let table: [(f32, u8, u8); 8] = [
        (1.0, 0x38, 0x40),
        (-2.0, 0xC0, 0xC8),
        (0.5, 0x30, 0x38),
        (1.125, 0x39, 0x41),
        (1.0625, 0x38, 0x40), // tie between 1.0 and 1.125: even mantissa
        (1.1875, 0x3A, 0x42), // tie between 1.125 and 1.25: even mantissa
        (-0.75, 0xB4, 0xBC),
        (3.5, 0x46, 0x4E),
    ];
    for arch in Arch::ALL {
        let byte = |k: usize| if arch == Arch::Gfx950 { table[k].1 } else { table[k].2 };
        let mut inp = zeros();
        let mut old = zeros();
        for (l, x) in inp.iter_mut().enumerate() {
            let (a, b) = (l % 8, (l + 3) % 8);
            x[0] = table[a].0.to_bits();
            x[1] = table[b].0.to_bits();
            // Four fp8 bytes to decode.
            x[3] = u32::from_le_bytes([byte(l % 8), byte((l + 1) % 8), byte((l + 2) % 8), byte((l + 5) % 8)]);
            old[l][0] = 0xAABB_CCDD;
        }
        let body = "  v_cvt_pk_fp8_f32 v4, v0, v1 op_sel:[0,0,1]\n  s_nop 0\n  v_cvt_pk_fp8_f32 v4, v1, v0\n  v_cvt_f32_fp8_sdwa v6, v3 src0_sel:BYTE_2\n  v_cvt_f32_fp8_sdwa v7, v3 src0_sel:BYTE_3";
        let out = run(arch, "fp8", body, &inp, &old);
        for (l, o) in out.iter().enumerate() {
            let (a, b) = (l % 8, (l + 3) % 8);
            // op_sel[3] = 1 writes the high word (src0 in byte 2), then the low word; no
            // byte of the old value survives.
            let want = u32::from_le_bytes([byte(b), byte(a), byte(a), byte(b)]);
            assert_eq!(o[0], want, "{arch} lane {l} v_cvt_pk_fp8_f32");
            // The bytes of the two ties decode to the rounded values.
            let decoded = |k: usize| match k {
                4 => 1.0,
                5 => 1.25,
                _ => table[k].0,
            };
            assert_eq!(f(o[2]), decoded((l + 2) % 8), "{arch} lane {l} BYTE_2");
            assert_eq!(f(o[3]), decoded((l + 5) % 8), "{arch} lane {l} BYTE_3");
        }
    }
}

#[test]
fn perm_b32_selects_bytes_signs_and_constants() {
    let mut inp = random_lanes(4, |r| r.gen());
    for (l, x) in inp.iter_mut().enumerate() {
        // Selector bytes 0..15 spread over the lanes (all 16 values appear).
        x[2] = u32::from_le_bytes([(l % 16) as u8, ((l + 5) % 16) as u8, ((l + 9) % 16) as u8, ((l + 13) % 16) as u8]);
    }
    for arch in Arch::ALL {
        let out = run(arch, "perm", "  v_perm_b32 v4, v0, v1, v2", &inp, &zeros());
        for (l, (i, o)) in inp.iter().zip(&out).enumerate() {
            // data = {S0, S1}: bytes 0-3 from S1, 4-7 from S0.
            let data = (u64::from(i[0]) << 32) | u64::from(i[1]);
            let byte = |k: u32| (data >> (8 * k)) as u8;
            let sign = |k: u32| if byte(k) & 0x80 != 0 { 0xFF } else { 0x00 };
            let pick = |s: u8| -> u8 {
                match s {
                    0..=7 => byte(u32::from(s)),
                    8 => sign(1),
                    9 => sign(3),
                    10 => sign(5),
                    11 => sign(7),
                    12 => 0x00,
                    _ => 0xFF,
                }
            };
            let want = u32::from_le_bytes(i[2].to_le_bytes().map(pick));
            assert_eq!(o[0], want, "{arch} lane {l} sel {:#010x}", i[2]);
        }
    }
}

#[test]
fn integer_address_arithmetic() {
    let inp = random_lanes(5, |r| r.gen());
    for arch in Arch::ALL {
        let body = "  v_lshl_add_u32 v4, v0, 5, v1\n  v_add3_u32 v5, v0, v1, v2\n  v_mad_u64_u32 v[6:7], s[8:9], v0, v1, v[2:3]";
        let out = run(arch, "intaddr", body, &inp, &zeros());
        for (l, (i, o)) in inp.iter().zip(&out).enumerate() {
            assert_eq!(o[0], (i[0] << 5).wrapping_add(i[1]), "{arch} lane {l} lshl_add");
            assert_eq!(o[1], i[0].wrapping_add(i[1]).wrapping_add(i[2]), "{arch} lane {l} add3");
            // The sum can exceed 64 bits; the result keeps the low 64.
            let full = u128::from(i[0]) * u128::from(i[1]) + u128::from(u64::from(i[2]) | (u64::from(i[3]) << 32));
            assert_eq!(u64::from(o[2]) | (u64::from(o[3]) << 32), full as u64, "{arch} lane {l} mad_u64_u32");
        }
    }
}

#[test]
fn dpp_row_and_quad_moves_used_by_reductions() {
    let inp: Lanes = (0..64u32).map(|l| [1000 + l, 0, 0, 0]).collect();
    let old: Lanes = (0..64u32).map(|l| [7000 + l, 7100 + l, 7200 + l, 7300 + l]).collect();
    for arch in Arch::ALL {
        let body = "  v_mov_b32_dpp v4, v0 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\n  v_mov_b32_dpp v5, v0 row_shr:3 row_mask:0xf bank_mask:0xf\n  v_mov_b32_dpp v6, v0 row_shr:2 row_mask:0xf bank_mask:0xf bound_ctrl:0\n  v_mov_b32_dpp v7, v0 row_bcast:15 row_mask:0xa bank_mask:0xf";
        let out = run(arch, "dpp", body, &inp, &old);
        for (l, o) in out.iter().enumerate() {
            let l32 = l as u32;
            let src = |k: usize| 1000 + k as u32;
            assert_eq!(o[0], src((l & !3) | [1, 0, 3, 2][l & 3]), "{arch} lane {l} quad_perm");
            // row_shr: lane reads lane-n of its row; out-of-row sources leave the old value,
            // or write 0 with bound_ctrl.
            let r = l % 16;
            assert_eq!(o[1], if r >= 3 { src(l - 3) } else { 7100 + l32 }, "{arch} lane {l} row_shr:3");
            assert_eq!(o[2], if r >= 2 { src(l - 2) } else { 0 }, "{arch} lane {l} row_shr:2 bound_ctrl");
            // row_bcast:15: lane 15 of each row to the whole next row; row_mask 0xa writes
            // rows 1 and 3 only.
            let row = l / 16;
            let want = if row == 1 || row == 3 { src(16 * row - 1) } else { 7300 + l32 };
            assert_eq!(o[3], want, "{arch} lane {l} row_bcast:15");
        }
        let body = "  v_mov_b32_dpp v4, v0 row_bcast:31 row_mask:0xc bank_mask:0xf\n  v_mov_b32_dpp v5, v0 row_ror:4 row_mask:0xf bank_mask:0xf\n  v_mov_b32_dpp v6, v0 wave_shr:1 row_mask:0xf bank_mask:0xf\n  v_mov_b32_dpp v7, v0 row_mirror row_mask:0xf bank_mask:0x5";
        let out = run(arch, "dpp2", body, &inp, &old);
        for (l, o) in out.iter().enumerate() {
            let l32 = l as u32;
            let src = |k: usize| 1000 + k as u32;
            assert_eq!(o[0], if l >= 32 { src(31) } else { 7000 + l32 }, "{arch} lane {l} row_bcast:31");
            assert_eq!(o[1], src((l & !15) | ((l + 12) % 16)), "{arch} lane {l} row_ror:4");
            assert_eq!(o[2], if l > 0 { src(l - 1) } else { 7200 }, "{arch} lane {l} wave_shr:1");
            // bank_mask 0x5: banks 0 and 2 (lanes with (l % 16) / 4 in {0, 2}) are written.
            let bank = (l % 16) / 4;
            let want = if bank == 0 || bank == 2 { src((l & !15) + 15 - l % 16) } else { 7300 + l32 };
            assert_eq!(o[3], want, "{arch} lane {l} row_mirror bank_mask");
        }
    }
}

#[test]
fn ds_read2_write2_st64_and_bpermute() {
    let inp = random_lanes(6, |r| r.gen());
    for arch in Arch::ALL {
        // Each lane writes its v0 at 4*lane and its v1 at 4*lane + 64*4*4 (st64: offsets
        // count 256 bytes) and v2 at 4*lane + 8*4 (offset1 in dwords). Reads come from
        // other lanes' slots.
        let body = "  ds_write2st64_b32 v11, v0, v1 offset1:4\n  ds_write2_b32 v11, v2, v3 offset0:128 offset1:192\n  v_xor_b32_e32 v13, 0x7c, v11\n  s_waitcnt lgkmcnt(0)\n  ds_read2_b32 v[4:5], v13 offset1:128\n  ds_read2st64_b32 v[6:7], v13 offset0:4 offset1:3\n  s_waitcnt lgkmcnt(0)";
        let out = run(arch, "ds2", body, &inp, &zeros());
        for (l, o) in out.iter().enumerate() {
            let other = l ^ 31; // (4*l) ^ 0x7c = 4*(l ^ 31)
            assert_eq!(o[0], inp[other][0], "{arch} lane {l} read2 offset0");
            assert_eq!(o[1], inp[other][2], "{arch} lane {l} read2 offset1 (128 dwords)");
            assert_eq!(o[2], inp[other][1], "{arch} lane {l} read2st64 offset0:4");
            // offset1:3 -> byte 4*other + 768 = dword 192 + other: written by ds_write2's
            // offset1:192 of lane `other`.
            assert_eq!(o[3], inp[other][3], "{arch} lane {l} read2st64 offset1:3");
        }
        // bpermute: lane l reads v0 of lane (addr/4) mod 64.
        let sel: Lanes = (0..64usize).map(|l| [0, (((l * 7 + 3) % 64) * 4 + 256 * (l % 3)) as u32, 0, 0]).collect();
        let mut inp2 = inp.clone();
        for (x, s) in inp2.iter_mut().zip(&sel) {
            x[1] = s[1];
        }
        let out = run(arch, "bperm", "  ds_bpermute_b32 v4, v1, v0\n  s_waitcnt lgkmcnt(0)", &inp2, &zeros());
        for (l, o) in out.iter().enumerate() {
            assert_eq!(o[0], inp2[(l * 7 + 3) % 64][0], "{arch} lane {l} bpermute");
        }
    }
}

#[test]
fn bitop3_applies_its_truth_table_bitwise() {
    // gfx950 v_bitop3_b32: bit i of D is bit (a_i<<2 | b_i<<1 | c_i) of the 8-bit table
    // (LLVM's convention: src0 = 0xf0, src1 = 0xcc, src2 = 0xaa). 0x78 = a ^ (b & c) (the
    // swizzle Triton emits), 0xe8 = majority, 0x96 = a ^ b ^ c, 0x01 = !(a | b | c).
    let inp = random_lanes(7, |r| r.gen());
    let body = "  v_bitop3_b32 v4, v0, v1, v2 bitop3:0x78\n  v_bitop3_b32 v5, v0, v1, v2 bitop3:0xe8\n  v_bitop3_b32 v6, v0, v1, v2 bitop3:0x96\n  v_bitop3_b32 v7, v3, v1, v2 bitop3:1";
    let out = run(Arch::Gfx950, "bitop3", body, &inp, &zeros());
    for (l, (i, o)) in inp.iter().zip(&out).enumerate() {
        let (a, b, c) = (i[0], i[1], i[2]);
        assert_eq!(o[0], a ^ (b & c), "lane {l} bitop3:0x78");
        assert_eq!(o[1], (a & b) | (a & c) | (b & c), "lane {l} bitop3:0xe8");
        assert_eq!(o[2], a ^ b ^ c, "lane {l} bitop3:0x96");
        assert_eq!(o[3], !(i[3] | b | c), "lane {l} bitop3:1");
    }
}

#[test]
fn transpose_reads_hand_each_lane_a_column_of_its_groups_tile() {
    // gfx950 ds_read_b64_tr_b16 / _b8: each lane writes its 64 bits v[0:1] at 8*lane and
    // reads back at the same address; each group of 16 lanes then holds an n x 16 tile
    // (n = 64/bits rows; lane s holds row s/g, elements n*(s%g).., g = 16/n) and lane o
    // receives column o: element e of lane o = element o%n of lane g*e + o/n's data.
    let inp = random_lanes(8, |r| r.gen());
    let body = "  v_lshlrev_b32_e32 v13, 3, v12\n  ds_write_b64 v13, v[0:1]\n  s_waitcnt lgkmcnt(0)\n  ds_read_b64_tr_b16 v[4:5], v13\n  ds_read_b64_tr_b8 v[6:7], v13\n  s_waitcnt lgkmcnt(0)";
    let out = run(Arch::Gfx950, "dstr", body, &inp, &zeros());
    let data = |l: usize| u64::from(inp[l][0]) | u64::from(inp[l][1]) << 32;
    for (o, got) in out.iter().enumerate() {
        let group = o - o % 16;
        let ol = o % 16;
        for (bits, lo) in [(16u32, 0usize), (8, 2)] {
            let n = (64 / bits) as usize;
            let g = 16 / n;
            let mut want = 0u64;
            for e in 0..n {
                let src = data(group + g * e + ol / n);
                let elem = (src >> (bits as usize * (ol % n))) & ((1 << bits) - 1);
                want |= elem << (bits as usize * e);
            }
            let have = u64::from(got[lo]) | u64::from(got[lo + 1]) << 32;
            assert_eq!(have, want, "lane {o} ds_read_b64_tr_b{bits}");
        }
    }
}
