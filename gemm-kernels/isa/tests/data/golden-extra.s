# Hand-written golden cases (gen-golden.sh asks llvm-mc-22 about each line).
# --- operand rules: tuple alignment, register files, constant bus, literals
v_mfma_f32_32x32x8_bf16 a[0:15], v[1:2], v[2:3], a[0:15]
v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], v[16:31]
v_mfma_f32_32x32x8_bf16 v[0:15], s[0:1], v[2:3], v[0:15]
v_mfma_f32_32x32x8_bf16 a[2:17], v[0:1], v[2:3], a[2:17]
v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], a[4:19]
v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], 0
v_mfma_f32_32x32x8_bf16 v[0:15], v[0:1], v[2:3], 1.0
v_mfma_f32_32x32x8_bf16 a[0:15], v[0:1], v[2:3], a[0:15] cbsz:1 abid:1 blgp:2
v_mfma_f32_32x32x16_bf16 a[16:31], v[6:9], v[6:9], a[0:15]
v_mfma_f32_16x16x32_f16 a[0:3], a[4:7], v[8:11], a[0:3]
# MFMA src2 partially overlapping vdst: accepted for 4-register destinations, rejected above
# 128 bits (AMDGPUAsmParser::validateMFMA); Triton 3.9 emits the first kind.
v_mfma_f32_16x16x16_f16 a[0:3], a[52:53], a[120:121], a[2:5]
v_mfma_f32_16x16x32_f16 a[164:167], a[52:55], a[120:123], a[166:169]
v_mfma_f32_4x4x4_16b_f16 v[0:3], v[52:53], v[120:121], v[1:4]
v_mfma_f32_32x32x8_f16 a[0:15], a[52:53], a[120:121], a[2:17]
v_mfma_f64_16x16x4_f64 a[0:7], a[52:53], a[120:121], a[2:9]
v_mfma_f64_16x16x4_f64 v[0:7], v[8:9], v[10:11], v[0:7] neg:[1,0,1]
ds_read_b64 v[1:2], v0
ds_read_b128 v[1:4], v0
ds_read_b128 a[0:3], v4 offset:65520
ds_write_b32 v1, v0 gds
ds_write_b128 v4, a[0:3]
ds_read2_b32 v[0:1], v2 offset0:1 offset1:255
ds_write2st64_b64 v1, v[22:23], v[24:25] offset1:4
ds_swizzle_b32 v0, v1 offset:swizzle(SWAP,16)
ds_swizzle_b32 v0, v1 offset:swizzle(QUAD_PERM,1,0,3,2)
ds_swizzle_b32 v0, v1 offset:swizzle(BROADCAST,8,3)
ds_swizzle_b32 v0, v1 offset:swizzle(REVERSE,8)
s_load_dwordx2 s[1:2], s[0:1], 0x0
s_load_dwordx4 s[2:5], s[0:1], 0x0
s_load_dwordx8 s[4:11], s[0:1], 0x20
s_load_dword s0, s[4:5], -4
s_load_dword s0, s[4:5], s6 offset:0x10
s_load_dword m0, s[4:5], 0x0
s_buffer_load_dword s0, s[4:7], 0x10 glc
v_add_u32_e64 v0, s1, s2
v_add_u32_e64 v0, s1, s1
v_add_u32_e64 v0, v1, 0x1234
v_add_u32 v0, 0x1234, v1
v_add_u32 v0, v1, 0x1234
v_add_u32 v0, v1, s2
v_cndmask_b32 v0, s1, v2, vcc
v_cndmask_b32_e64 v0, s1, v2, s[4:5]
v_cndmask_b32_e64 v0, v1, v2, s[4:5]
v_addc_co_u32 v0, vcc, s1, v2, vcc
v_addc_co_u32_e64 v0, s[0:1], v1, v2, s[2:3]
v_add_co_u32_e64 v0, s[0:1], s2, v1
v_mad_u64_u32 v[0:1], s[0:1], v2, v3, v[4:5]
v_mad_u64_u32 v[0:1], s[0:1], v2, v3, v[5:6]
v_lshlrev_b64 v[1:2], 2, v[4:5]
v_mov_b64 v[1:2], v[4:5]
v_mov_b32 v0, 0x3e22f983
v_mov_b32 v0, 0x3f800000
v_mov_b32 v0, -16
v_mov_b32 v0, 0xfffffff0
v_add_f16 v0, 0x3c00, v1
v_add_f16 v0, 0x3118, v1
v_add_f64 v[0:1], 0x3ff00000, v[2:3]
v_add_f64 v[0:1], 0.15915494309189532, v[2:3]
s_mov_b64 s[0:1], 0.15915494309189532
s_mov_b32 s0, 0x12345678
s_add_u32 s0, 0x11223344, 0x11223344
s_add_u32 s0, 0x11223344, 0x55667788
v_fma_f32 v0, -v1, |v2|, v3
v_fma_f32 v0, neg(2), -|v2|, v3 clamp mul:2
v_add_f32_e64 v0, neg(3), neg(-2)
v_cmp_lt_u32 s[0:1], v0, v1
v_cmp_gt_i32 vcc, s1, v0
v_cmpx_eq_u32 vcc, v1, v2
v_cmpx_eq_u32_e64 exec, v1, v2
v_readlane_b32 m0, v1, 2
v_readfirstlane_b32 s0, v1
v_writelane_b32 v0, s1, s2
v_writelane_b32 v0, s1, m0
v_div_fmas_f32 v0, s1, v2, v3
v_div_scale_f32 v0, vcc, v1, v2, v3
v_accvgpr_write_b32 a0, v1
v_accvgpr_write_b32 a0, 5
v_accvgpr_read_b32 v0, a1
v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[6:7] op_sel_hi:[1,0,1]
v_pk_mul_f32 v[0:1], v[2:3], v[4:5] neg_lo:[1,0] neg_hi:[0,1]
v_pk_add_f16 v0, v1, v2 op_sel:[1,0] op_sel_hi:[0,1] clamp
v_fma_mix_f32 v0, v1, v2, v3 op_sel_hi:[1,1,0]
v_dot2_f32_f16 v0, v1, v2, v3
v_cvt_pk_fp8_f32 v6, v0, v1
v_cvt_pk_bf8_f32 v6, v2, v3 op_sel:[0,0,1]
v_cvt_sr_fp8_f32 v1, v2, v3 op_sel:[0,0,1,1]
v_cvt_pk_bf16_f32 v0, v1, v2
v_cvt_f32_fp8_sdwa v3, v6 src0_sel:BYTE_1
v_cvt_f32_bf8_e64 v3, v6
v_cvt_pk_f32_fp8_sdwa v[2:3], v6 src0_sel:WORD_1
v_permlane16_swap_b32 v0, v1
v_permlane32_swap_b32_e64 v0, v1
v_add_f32_sdwa v0, v1, v2 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:DWORD
v_add_f32_sdwa v0, -s1, |v2| dst_sel:DWORD dst_unused:UNUSED_PRESERVE src0_sel:WORD_1 src1_sel:DWORD
v_mov_b32_sdwa v0, sext(v1) dst_sel:BYTE_0 dst_unused:UNUSED_SEXT src0_sel:BYTE_1
v_cmp_eq_f32_sdwa s[0:1], v1, v2 src0_sel:WORD_1 src1_sel:BYTE_0
v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf
v_add_f32_dpp v0, v1, v2 row_shr:1 row_mask:0xa bank_mask:0x5 bound_ctrl:1
v_add_f32_dpp v0, -v1, |v2| row_bcast:31 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v0, v1 wave_ror:1 row_mask:0xf bank_mask:0xf
v_mov_b32_dpp v0, v1 row_mirror row_mask:0xf bank_mask:0xf
# --- memory: cache policy bits, lds, offsets
buffer_load_dword v0, v1, s[4:7], 0 offen sc0 sc1 nt
buffer_load_dword v0, v1, s[2:5], 0 offen
buffer_load_dword v0, v1, s[4:7], s8 offen offset:4095
buffer_load_dword off, s[4:7], s8 offset:64 lds
buffer_load_dword v1, s[4:7], 0 offen lds
buffer_load_dwordx2 v1, s[4:7], 0 offen lds
buffer_load_dwordx3 v1, s[4:7], 0 offen lds
buffer_load_dwordx4 v1, s[4:7], 0 idxen lds
buffer_load_ushort v1, s[4:7], 0 offen lds
buffer_load_dwordx4 v[0:3], v[4:5], s[4:7], 0 idxen offen
buffer_load_dwordx4 a[0:3], v4, s[4:7], 0 offen
buffer_load_dwordx2 v[1:2], v0, s[4:7], 0 offen
buffer_store_dwordx4 v[0:3], v4, s[4:7], s9 offen offset:16 nt
buffer_atomic_add v0, v1, s[4:7], 0 offen sc0
buffer_atomic_cmpswap v[0:1], v2, s[4:7], 0 offen sc0
buffer_wbl2 sc1
buffer_inv sc0 sc1
global_load_dwordx4 v[0:3], v4, s[0:1] offset:-4096
global_load_dwordx4 v[0:3], v[4:5], off offset:4095
global_load_dword v0, v[4:5], off offset:4096
global_store_dwordx4 v[4:5], v[0:3], off sc0 sc1 nt
global_store_short_d16_hi v[4:5], v7, off
global_load_lds_dword v[0:1], off
global_load_lds_dwordx4 v0, s[0:1] offset:16
global_load_lds_dwordx3 v[0:1], off
global_atomic_add_f32 v4, v0, s[6:7] sc1
global_atomic_add_f32 v1, v4, v0, s[6:7] sc0
global_atomic_cmpswap_x2 v[0:1], v2, v[4:7], s[6:7] sc0
flat_load_dword v0, v[2:3] offset:4095
flat_load_dword v0, v[2:3] offset:-8
flat_atomic_add v0, v[2:3], v4 sc0
# --- AGPR atomics (LLVM 22, both archs): buffer atomics take AGPR vdata in every form;
# flat/global atomics take AGPR data (and AGPR vdst when returning) except the returning
# global_atomic_add_f32 / global_atomic_pk_add_f16 (rejected), and the returning f64
# add/min/max drop sc1 with AGPRs (we reject; tests/golden.rs checks LLVM's bytes are the
# form without sc1). Data and destination must be in the same file.
buffer_atomic_add a0, v1, s[4:7], 0 offen sc0 sc1 nt
buffer_atomic_pk_add_f16 a0, v1, s[4:7], 0 offen sc0 sc1
buffer_atomic_pk_add_bf16 a0, v1, s[4:7], 0 offen sc0
buffer_atomic_cmpswap_x2 a[0:3], v1, s[4:7], 0 offen sc0 sc1
buffer_atomic_add_f64 a[0:1], v1, s[4:7], 0 idxen sc0 sc1
global_atomic_add a1, v[0:1], a2, off sc0 sc1 nt
global_atomic_add a1, v[0:1], v2, off sc0
global_atomic_add v1, v[0:1], a2, off sc0
global_atomic_add_f32 v[0:1], a2, off sc1
global_atomic_add_f32 a1, v[0:1], a2, off sc0
global_atomic_add_f32 a1, v0, a2, s[6:7] sc0 sc1 nt
global_atomic_pk_add_f16 v[0:1], a2, off sc1 nt
global_atomic_pk_add_f16 a1, v[0:1], a2, off sc0
global_atomic_pk_add_bf16 a1, v[0:1], a2, off sc0 sc1
global_atomic_add_f64 v[0:1], a[2:3], off sc1
global_atomic_add_f64 a[2:3], v[0:1], a[4:5], off sc0
global_atomic_add_f64 a[2:3], v[0:1], a[4:5], off sc0 sc1
global_atomic_min_f64 a[2:3], v0, a[4:5], s[6:7] sc0 sc1 nt
global_atomic_max_f64 a[2:3], v[0:1], a[4:5], off sc0 nt
global_atomic_add_f64 v[2:3], v[0:1], v[4:5], off sc0 sc1
global_atomic_cmpswap_x2 a[2:3], v[0:1], a[4:7], off sc0 sc1
flat_atomic_add_f32 a1, v[0:1], a2 sc0 sc1
flat_atomic_pk_add_f16 a1, v[0:1], a2 sc0 sc1
flat_atomic_pk_add_bf16 a1, v[0:1], a2 sc0
flat_atomic_add_f64 a[2:3], v[0:1], a[4:5] sc0 sc1
flat_atomic_max_f64 a[2:3], v[0:1], a[4:5] sc0
flat_atomic_min_f64 v[0:1], a[4:5] sc1 nt
flat_atomic_swap_x2 a[2:3], v[0:1], a[4:5] sc0 sc1 nt
# --- scalar control
s_waitcnt vmcnt(0) lgkmcnt(0)
s_waitcnt vmcnt(16)
s_waitcnt expcnt(0)
s_waitcnt vmcnt(63) expcnt(7) lgkmcnt(15)
s_getreg_b32 s0, hwreg(HW_REG_HW_ID)
s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0
s_setreg_b32 hwreg(HW_REG_MODE, 4, 2), s3
s_cbranch_scc1 -1
s_branch 0x7fff
s_setprio 3
s_sleep 1
s_nop 7
s_endpgm
s_barrier
s_and_saveexec_b64 s[0:1], vcc
s_mov_b64 exec, -1
s_getpc_b64 s[0:1]
s_setpc_b64 s[0:1]
s_lshl_b64 s[0:1], s[2:3], 2
s_cmpk_eq_u32 s0, 0x10
s_movk_i32 m0, 0x400
s_bitcmp1_b32 s0, 31
s_sched_barrier 0
v_mov_b32 v0, src_lds_direct
# --- what clang-22 -O3 emits for HIP vector-add / reduction / gemm / conversion kernels
s_load_dwordx8 s[4:11], s[0:1], 0x0
s_ashr_i32 s3, s2, 31
s_lshl_b64 s[0:1], s[2:3], 8
v_mov_b32_e32 v1, 0
v_lshl_add_u64 v[0:1], s[0:1], 0, v[0:1]
s_waitcnt lgkmcnt(0)
v_cmp_gt_i64_e32 vcc, s[10:11], v[0:1]
s_and_saveexec_b64 s[0:1], vcc
v_lshlrev_b64 v[0:1], 2, v[0:1]
v_lshl_add_u64 v[4:5], s[4:5], 0, v[0:1]
v_lshl_add_u64 v[2:3], s[6:7], 0, v[0:1]
global_load_dword v6, v[4:5], off
global_load_dword v7, v[2:3], off
v_lshl_add_u64 v[0:1], s[8:9], 0, v[0:1]
s_waitcnt vmcnt(0)
v_add_f32_e32 v2, v6, v7
global_store_dword v[0:1], v2, off
s_endpgm
s_load_dword s3, s[0:1], 0x20
v_lshl_add_u32 v0, s2, 8, v0
v_cmp_gt_i32_e32 vcc, s3, v0
s_and_saveexec_b64 s[2:3], vcc
v_ashrrev_i32_e32 v1, 31, v0
v_lshlrev_b64 v[0:1], 1, v[0:1]
s_movk_i32 s0, 0x7fff
v_lshl_add_u64 v[2:3], s[4:5], 0, v[0:1]
global_load_ushort v6, v[2:3], off
global_load_ushort v7, v[2:3], off
v_lshl_add_u64 v[4:5], s[8:9], 0, v[0:1]
v_lshl_add_u64 v[0:1], s[10:11], 0, v[0:1]
s_waitcnt vmcnt(1)
v_cvt_f32_f16_e32 v8, v6
v_lshlrev_b32_e32 v7, 16, v7
v_mul_f32_e32 v7, v8, v7
v_bfe_u32 v8, v7, 16, 1
v_or_b32_e32 v9, 0x400000, v7
v_add3_u32 v8, v8, v7, s0
v_cmp_u_f32_e32 vcc, v7, v7
s_nop 1
v_cndmask_b32_e32 v7, v8, v9, vcc
global_store_short_d16_hi v[4:5], v7, off
global_load_ushort v2, v[2:3], off
v_lshlrev_b32_e32 v2, 16, v2
v_cvt_f16_f32_e32 v2, v2
v_fma_f16 v2, v6, v2, 1.0
global_store_short v[0:1], v2, off
s_load_dword s8, s[0:1], 0x10
s_load_dwordx4 s[4:7], s[0:1], 0x0
s_lshl_b32 s2, s2, 8
v_add_u32_e32 v4, s2, v0
v_cmp_gt_i32_e32 vcc, s8, v4
v_mov_b32_e32 v5, 0
v_mov_b32_e32 v2, s4
v_mov_b32_e32 v3, s5
v_lshl_add_u64 v[6:7], s[2:3], 0, v[0:1]
v_lshl_add_u64 v[2:3], v[6:7], 2, v[2:3]
s_mov_b64 s[2:3], 0
s_mov_b64 s[4:5], 0x100000
global_load_dword v1, v[2:3], off
v_add_u32_e32 v4, 0x40000, v4
v_cmp_le_i32_e32 vcc, s8, v4
v_lshl_add_u64 v[2:3], v[2:3], 0, s[4:5]
s_or_b64 s[2:3], vcc, s[2:3]
v_add_f32_e32 v5, v5, v1
s_andn2_b64 exec, exec, s[2:3]
s_or_b64 exec, exec, s[2:3]
s_or_b64 exec, exec, s[0:1]
v_and_b32_e32 v3, 63, v0
v_lshlrev_b32_e32 v2, 2, v3
v_xor_b32_e32 v1, 0x80, v2
ds_bpermute_b32 v1, v1, v5
v_xor_b32_e32 v4, 64, v2
v_cmp_eq_u32_e32 vcc, 0, v3
v_add_f32_e32 v1, v5, v1
ds_bpermute_b32 v4, v4, v1
v_xor_b32_e32 v5, 32, v2
v_add_f32_e32 v1, v1, v4
ds_bpermute_b32 v4, v5, v1
v_xor_b32_e32 v5, 16, v2
v_xor_b32_e32 v5, 8, v2
v_xor_b32_e32 v2, 4, v2
ds_bpermute_b32 v2, v2, v1
v_lshrrev_b32_e32 v3, 4, v0
v_add_f32_e32 v1, v1, v2
ds_write_b32 v3, v1
v_cmp_eq_u32_e32 vcc, 0, v0
s_barrier
s_mov_b64 s[0:1], exec
v_mbcnt_lo_u32_b32 v0, s0, 0
v_mbcnt_hi_u32_b32 v0, s1, v0
s_and_b64 s[2:3], exec, vcc
s_mov_b64 exec, s[2:3]
v_mov_b32_e32 v4, 0
ds_read_b128 v[0:3], v4
s_bcnt1_i32_b64 s0, s[0:1]
v_add_f32_e32 v0, v0, v1
v_add_f32_e32 v0, v0, v2
v_add_f32_e32 v0, v0, v3
v_cvt_f32_ubyte0_e32 v1, s0
v_mul_f32_e32 v0, v0, v1
global_atomic_add_f32 v4, v0, s[6:7] sc1
s_load_dwordx4 s[4:7], s[0:1], 0x18
s_load_dwordx4 s[8:11], s[0:1], 0x0
s_load_dwordx2 s[12:13], s[0:1], 0x10
v_mov_b32_e32 v19, 0
s_cmp_lt_i32 s4, 1
v_xor_b32_e32 v2, 1, v0
v_lshlrev_b32_e32 v20, 3, v2
v_xor_b32_e32 v2, 3, v0
s_movk_i32 s1, 0x800
s_mul_i32 s0, s4, s2
v_lshlrev_b32_e32 v1, 3, v0
v_lshl_add_u32 v21, v2, 3, s1
s_mov_b32 s1, 0
v_mov_b32_e32 v2, 0
v_mov_b32_e32 v3, 0
v_mov_b32_e32 v6, 0
v_mov_b32_e32 v7, 0
v_mov_b32_e32 v8, 0
v_mov_b32_e32 v9, 0
v_mov_b32_e32 v10, 0
v_mov_b32_e32 v11, 0
v_mov_b32_e32 v12, 0
v_mov_b32_e32 v13, 0
v_mov_b32_e32 v14, 0
v_mov_b32_e32 v15, 0
v_mov_b32_e32 v16, 0
v_mov_b32_e32 v17, 0
v_mov_b32_e32 v18, v0
v_add_u32_e32 v22, s0, v18
v_ashrrev_i32_e32 v23, 31, v22
v_lshl_add_u64 v[24:25], v[18:19], 3, s[10:11]
v_lshl_add_u64 v[22:23], v[22:23], 3, s[8:9]
global_load_dwordx2 v[24:25], v[24:25], off
s_add_i32 s1, s1, 8
global_load_dwordx2 v[22:23], v[22:23], off
v_add_u32_e32 v18, 0x200, v18
s_cmp_ge_i32 s1, s4
ds_write2st64_b64 v1, v[22:23], v[24:25] offset1:4
ds_read_b64 v[22:23], v20
ds_read_b64 v[24:25], v21
v_mfma_f32_32x32x8_f16 v[2:17], v[22:23], v[24:25], v[2:17]
s_nop 8
v_mov_b32_e32 v19, v17
v_mul_lo_u32 v0, v0, s5
v_lshl_add_u64 v[20:21], v[0:1], 2, s[12:13]
global_load_dword v17, v[20:21], off
s_lshl_b32 s0, s5, 6
v_add_u32_e32 v0, s0, v0
v_lshl_add_u64 v[22:23], v[0:1], 2, s[12:13]
v_mul_f32_e32 v1, s7, v17
v_fmac_f32_e32 v1, s6, v2
global_store_dword v[20:21], v1, off
global_load_dword v2, v[22:23], off
v_mul_f32_e32 v1, s7, v2
v_fmac_f32_e32 v1, s6, v3
global_store_dword v[22:23], v1, off
v_lshl_add_u64 v[2:3], v[0:1], 2, s[12:13]
v_fmac_f32_e32 v1, s6, v4
global_load_dword v4, v[2:3], off
v_mul_f32_e32 v1, s7, v4
v_fmac_f32_e32 v1, s6, v5
global_store_dword v[2:3], v1, off
global_load_dword v4, v[20:21], off
v_fmac_f32_e32 v1, s6, v6
global_load_dword v6, v[2:3], off
v_lshl_add_u64 v[4:5], v[0:1], 2, s[12:13]
v_mul_f32_e32 v1, s7, v6
v_fmac_f32_e32 v1, s6, v7
v_fmac_f32_e32 v1, s6, v8
global_store_dword v[4:5], v1, off
v_fmac_f32_e32 v1, s6, v9
v_fmac_f32_e32 v1, s6, v10
v_fmac_f32_e32 v1, s6, v11
v_fmac_f32_e32 v1, s6, v12
v_fmac_f32_e32 v1, s6, v13
v_fmac_f32_e32 v1, s6, v14
v_fmac_f32_e32 v1, s6, v15
global_load_dword v2, v[4:5], off
v_lshl_add_u64 v[0:1], v[0:1], 2, s[12:13]
v_mul_f32_e32 v2, s7, v2
v_fmac_f32_e32 v2, s6, v16
global_store_dword v[4:5], v2, off
global_load_dword v2, v[0:1], off
v_fmac_f32_e32 v2, s6, v19
s_load_dword s3, s[0:1], 0x10
s_load_dwordx4 s[0:3], s[0:1], 0x0
v_lshlrev_b64 v[4:5], 2, v[0:1]
v_lshl_add_u64 v[6:7], s[0:1], 0, v[4:5]
global_load_dwordx4 v[0:3], v[6:7], off
global_load_dword v8, v[6:7], off offset:20
s_mov_b32 s0, 0x2f800000
s_mov_b32 s1, 0xcf800000
v_cvt_pk_fp8_f32 v6, v0, v1
v_trunc_f32_e32 v0, v0
v_mul_f32_e64 v7, |v0|, s0
v_floor_f32_e32 v7, v7
v_cvt_pk_bf8_f32 v6, v2, v3 op_sel:[0,0,1]
v_fma_f32 v2, v7, s1, |v0|
v_cvt_u32_f32_e32 v2, v2
v_cvt_u32_f32_e32 v1, v8
v_cvt_f32_fp8_sdwa v3, v6 src0_sel:BYTE_1
v_cvt_f32_bf8_sdwa v7, v6 src0_sel:BYTE_2
v_ashrrev_i32_e32 v0, 31, v0
v_xor_b32_e32 v2, v2, v0
v_sub_u32_e32 v0, v2, v0
v_add_u32_e32 v0, v6, v0
v_add_f32_e32 v2, v3, v7
v_add3_u32 v2, v0, v2, v1
v_lshl_add_u64 v[0:1], s[2:3], 0, v[4:5]
v_cvt_pk_bf16_f32 v7, v7, s0
global_store_short v[4:5], v7, off
s_nop 9
# --- gfx950 v_bitop3: the 8-bit truth table in the neg/abs/omod fields (Triton emits it)
v_bitop3_b32 v0, v1, v2, v3 bitop3:1
v_bitop3_b32 v0, v1, v2, v3 bitop3:7
v_bitop3_b32 v0, v1, v2, v3 bitop3:9
v_bitop3_b32 v0, v1, v2, v3 bitop3:15
v_bitop3_b32 v0, v1, v2, v3 bitop3:0x10
v_bitop3_b32 v0, v1, v2, v3 bitop3:0x80
v_bitop3_b32 v0, v1, v2, v3 bitop3:0xff
v_bitop3_b32 v93, v93, v1, s0 bitop3:0x78
v_bitop3_b32 v96, v1, s1, v36 bitop3:0x6c
v_bitop3_b32 v0, s1, 5, v3 bitop3:0x6c
v_bitop3_b32 v0, v1, 0x1234, v3 bitop3:0x6c
v_bitop3_b32 v0, v1, v2, v3 bitop3:0xe8 clamp
v_bitop3_b16 v0, v1, v2, v3 bitop3:0xe8
v_bitop3_b16 v0, v1, v2, v3 bitop3:0xff op_sel:[1,1,1,1]
# --- gfx950 f8f6f4 MFMAs: cbsz/blgp pick the A/B formats and the tuple widths
v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[0:15]
v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[0:15] cbsz:1 blgp:1
v_mfma_f32_32x32x64_f8f6f4 a[0:15], a[16:23], a[24:31], a[0:15] cbsz:1
v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:21], v[24:29], v[0:15] cbsz:2 blgp:3
v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:19], v[24:27], v[0:15] cbsz:4 blgp:4
v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[0:15] abid:1
v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], 0
v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[0:15] cbsz:5
v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[16:23], v[24:31], v[0:3]
v_mfma_f32_16x16x128_f8f6f4 a[0:3], v[16:23], a[24:31], a[0:3] cbsz:1 blgp:0
v_mfma_f32_16x16x128_f8f6f4 v[0:3], v[16:23], v[24:27], v[0:3] blgp:4
# --- gfx950 scaled MFMAs (v_mfma_ld_scale_b32 prefix + MFMA, 128 bits): every format pair's
# tuple widths, the scale byte selects, and the operands llvm-mc-22 refuses (scales are VGPRs only)
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], v24, v25
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], a[4:7], v[12:17], a[20:23], v24, v25 op_sel:[1,0,0] op_sel_hi:[0,1,0] cbsz:4 blgp:2
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], v24, v25 op_sel:[1,1,0] op_sel_hi:[1,1,0]
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], v24, v25 op_sel:[1,1] op_sel_hi:[1,1]
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], v255, v1 cbsz:1 blgp:7
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], 1.0, v2, v1
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[0:3], v2, v1
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], a[0:3], v2, v1
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[5:12], v[12:19], v[20:23], v2, v1
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], s24, v25
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], v24, 9
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], 0x12345, v25
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], a24, v25
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], m0, v25
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], v24, v25 abid:1
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], v24, v25 neg_lo:[1,0,0]
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], v24, v25 clamp
v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[4:11], v[12:19], v[20:23], v24, v25 cbsz:2
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[32:47], v48, v49
v_mfma_scale_f32_32x32x64_f8f6f4 a[0:15], a[16:23], a[24:31], a[32:47], v48, v49 op_sel:[0,1,0] op_sel_hi:[1,0,0]
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:21], v[24:31], v[32:47], v48, v49 cbsz:3 blgp:1
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[32:47], v48, v49 cbsz:5
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[34:49], v48, v49
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], v[24:31], v[2:17], v48, v49
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[16:23], a[0:3], v40, v41
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], a[24:31], v[0:15], v40, v41 op_sel:[1,0,0]
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[16:23], a[0:3], v40, v41 blgp:1
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], a[24:31], v[0:15], v40, v41 op_sel:[1,0,0] blgp:1
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[16:21], a[0:3], v40, v41 blgp:2
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], a[24:29], v[0:15], v40, v41 op_sel:[1,0,0] blgp:2
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[16:21], a[0:3], v40, v41 blgp:3
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], a[24:29], v[0:15], v40, v41 op_sel:[1,0,0] blgp:3
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[16:19], a[0:3], v40, v41 blgp:4
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], a[24:27], v[0:15], v40, v41 op_sel:[1,0,0] blgp:4
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[16:23], a[0:3], v40, v41 cbsz:1
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], a[24:31], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:1
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[16:23], a[0:3], v40, v41 cbsz:1 blgp:1
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], a[24:31], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:1 blgp:1
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[16:21], a[0:3], v40, v41 cbsz:1 blgp:2
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], a[24:29], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:1 blgp:2
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[16:21], a[0:3], v40, v41 cbsz:1 blgp:3
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], a[24:29], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:1 blgp:3
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:11], v[16:19], a[0:3], v40, v41 cbsz:1 blgp:4
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:23], a[24:27], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:1 blgp:4
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:9], v[16:23], a[0:3], v40, v41 cbsz:2
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:21], a[24:31], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:2
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:9], v[16:23], a[0:3], v40, v41 cbsz:2 blgp:1
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:21], a[24:31], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:2 blgp:1
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:9], v[16:21], a[0:3], v40, v41 cbsz:2 blgp:2
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:21], a[24:29], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:2 blgp:2
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:9], v[16:21], a[0:3], v40, v41 cbsz:2 blgp:3
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:21], a[24:29], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:2 blgp:3
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:9], v[16:19], a[0:3], v40, v41 cbsz:2 blgp:4
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:21], a[24:27], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:2 blgp:4
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:9], v[16:23], a[0:3], v40, v41 cbsz:3
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:21], a[24:31], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:3
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:9], v[16:23], a[0:3], v40, v41 cbsz:3 blgp:1
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:21], a[24:31], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:3 blgp:1
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:9], v[16:21], a[0:3], v40, v41 cbsz:3 blgp:2
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:21], a[24:29], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:3 blgp:2
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:9], v[16:21], a[0:3], v40, v41 cbsz:3 blgp:3
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:21], a[24:29], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:3 blgp:3
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:9], v[16:19], a[0:3], v40, v41 cbsz:3 blgp:4
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:21], a[24:27], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:3 blgp:4
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:7], v[16:23], a[0:3], v40, v41 cbsz:4
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:19], a[24:31], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:4
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:7], v[16:23], a[0:3], v40, v41 cbsz:4 blgp:1
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:19], a[24:31], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:4 blgp:1
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:7], v[16:21], a[0:3], v40, v41 cbsz:4 blgp:2
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:19], a[24:29], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:4 blgp:2
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:7], v[16:21], a[0:3], v40, v41 cbsz:4 blgp:3
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:19], a[24:29], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:4 blgp:3
v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:7], v[16:19], a[0:3], v40, v41 cbsz:4 blgp:4
v_mfma_scale_f32_32x32x64_f8f6f4 v[0:15], v[16:19], a[24:27], v[0:15], v40, v41 op_sel:[1,0,0] cbsz:4 blgp:4
# --- scratch (seg = 1): vaddr one VGPR or off (SVE), saddr one SGPR or off
scratch_load_dword v1, v2, off
scratch_load_dword v1, off, s2
scratch_load_dword v1, v2, s3 offset:-8
scratch_load_dword v1, off, off offset:4095
scratch_load_dword v1, off, off offset:-4096
scratch_load_dwordx2 v[2:3], off, off sc0 sc1 nt
scratch_load_dwordx4 a[0:3], off, off offset:16
scratch_store_dword off, v0, off offset:136
scratch_store_dwordx2 v1, v[2:3], s4
scratch_store_dwordx4 off, a[4:7], off
scratch_load_dword v1, off, vcc_lo
scratch_load_dword v1, off, m0
scratch_load_dword v1, off, exec_hi
scratch_load_dword v1, off, s[2:3]
scratch_load_dword v1, v[2:3], off
scratch_load_ubyte v1, v2, off
scratch_store_dwordx3 v2, v[4:6], off
scratch_store_byte off, v1, s5 offset:3
