//! The 128-bit `v_mfma_scale_*_f8f6f4` forms through the Rust API: what the encoder refuses,
//! and what the decoder does with prefixes that are not a scaled MFMA of this table. The bytes
//! themselves are checked against llvm-mc-22 in golden.rs.

use gemm_isa::operand::{ar, sr, vr};
use gemm_isa::{decode_all, Arch, DecodeError, EncodeError, Inst, Op};

fn scaled() -> Inst {
    Inst::new(Op::V_MFMA_SCALE_F32_16X16X128_F8F6F4, &[ar(0, 4), vr(4, 4), vr(12, 6), ar(0, 4), vr(24, 1), vr(25, 1)])
        .cbsz_abid_blgp(4, 0, 2)
        .op_sel(0b01)
        .op_sel_hi(0b10)
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

#[test]
fn encodes_the_prefix_then_the_mfma_and_decodes_back() {
    let i = scaled();
    // llvm-mc-22: `... a[0:3], v[4:7], v[12:17], a[0:3], v24, v25 op_sel:[1,0,0]
    // op_sel_hi:[0,1,0] cbsz:4 blgp:2`.
    let w = i.encode(Arch::Gfx950).unwrap();
    assert_eq!(w, vec![0xD3AC0800, 0x10023318, 0xD3AD8C00, 0x44021904]);
    assert_eq!(decode_all(&bytes(&w), Arch::Gfx950).unwrap(), vec![(0, i.clone())]);
    assert_eq!(
        i.to_string(),
        "v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[4:7], v[12:17], a[0:3], v24, v25 op_sel:[1,0,0] op_sel_hi:[0,1,0] cbsz:4 blgp:2"
    );
    assert!(matches!(i.encode(Arch::Gfx942), Err(EncodeError::NotOnArch { .. })));
    assert_eq!(Op::V_MFMA_SCALE_F32_16X16X128_F8F6F4.scale_pair(), Some(Op::V_MFMA_F32_16X16X128_F8F6F4));
    assert_eq!(Op::V_MFMA_F32_32X32X64_F8F6F4.scale_pair(), Some(Op::V_MFMA_SCALE_F32_32X32X64_F8F6F4));
    assert_eq!(Op::V_MFMA_F32_32X32X8_F16.scale_pair(), None);
}

#[test]
fn refuses_what_llvm_refuses_or_drops() {
    // A third op_sel entry: llvm-mc-22 accepts and drops it; no encoding could decode back to it.
    assert!(matches!(scaled().op_sel(0b100).encode(Arch::Gfx950), Err(EncodeError::Modifier { .. })));
    assert!(matches!(scaled().op_sel_hi(0b111).encode(Arch::Gfx950), Err(EncodeError::Modifier { .. })));
    // Scales are VGPRs only (llvm-mc-22: "invalid operand for instruction").
    let mut s = scaled();
    s.operands[4] = sr(24, 1);
    assert!(s.encode(Arch::Gfx950).is_err());
    // abid has no meaning here (bit 11 is the scaled form's marker).
    assert!(scaled().cbsz_abid_blgp(4, 1, 2).encode(Arch::Gfx950).is_err());
}

#[test]
fn prefixes_that_are_not_a_scaled_mfma_are_not_decoded() {
    let good = scaled().encode(Arch::Gfx950).unwrap();
    // The prefix followed by an MFMA without bit 11 (llvm-objdump-22 prints a standalone
    // v_mfma_ld_scale_b32 there, a row this table does not have).
    let mut w = good.clone();
    w[2] &= !(1 << 11);
    assert!(matches!(decode_all(&bytes(&w), Arch::Gfx950), Err(DecodeError::Unknown { offset: 0, .. })));
    // Prefix bits outside the fields (llvm-objdump-22 ignores bit 14): not canonical.
    let mut w = good.clone();
    w[0] |= 1 << 14;
    assert!(matches!(decode_all(&bytes(&w), Arch::Gfx950), Err(DecodeError::Invalid { .. })));
    // A prefix followed by a non-MFMA word, and a truncated instruction.
    assert!(decode_all(&bytes(&[good[0], good[1], 0xBF810000, 0xBF810000]), Arch::Gfx950).is_err());
    assert!(matches!(decode_all(&bytes(&good[..3]), Arch::Gfx950), Err(DecodeError::Truncated { .. })));
    // gfx942 has no such prefix.
    assert!(decode_all(&bytes(&good), Arch::Gfx942).is_err());
}
