//! The public API as the compiler and the emulator use it, and the typed errors.

use gemm_isa::operand::{a, ar, fold_literal, imm, int, s, sr, v, vr, InlineFloat, VCC};
use gemm_isa::table::{Access, Field};
use gemm_isa::Arch::{Gfx942, Gfx950};
use gemm_isa::{decode_all, DecodeError, Enc, EncodeError, Inst, Op, Operand, Reg, RegFile, Ty};

#[test]
fn builds_and_encodes_an_mfma() {
    let i = Inst::new(Op::V_MFMA_F32_32X32X8_BF16, &[ar(0, 16), vr(0, 2), vr(2, 2), ar(0, 16)]).cbsz_abid_blgp(1, 1, 2);
    assert_eq!(i.encode(Gfx942).unwrap(), vec![0xD3E0_8900, 0x4402_0500]); // ISA.md §4.3
    let i = Inst::new(Op::V_MFMA_F32_32X32X16_BF16, &[ar(16, 16), vr(6, 4), vr(6, 4), ar(0, 16)]);
    assert_eq!(i.encode(Gfx950).unwrap(), vec![0xD3B7_8010, 0x0402_0D06]); // ISA.md §1.3
    assert_eq!(i.encode(Gfx942), Err(EncodeError::NotOnArch { op: "v_mfma_f32_32x32x16_bf16", arch: Gfx942 }));
}

#[test]
fn decodes_a_stream_with_structured_operands() {
    let prog = [
        Inst::new(Op::S_LOAD_DWORDX4, &[sr(0, 4), sr(4, 2), imm(0x10)]),
        Inst::new(Op::V_ADD_CO_U32, &[v(0), VCC, s(1), v(2)]),
        Inst::new(Op::BUFFER_LOAD_DWORD, &[gemm_isa::operand::OFF, sr(4, 4), s(8)]).offset(64).lds(),
        Inst::new(Op::V_MOV_B32, &[v(0), int(0x1234_5678)]),
        Inst::new(Op::V_ACCVGPR_READ_B32, &[v(3), a(7)]),
        Inst::new(Op::S_ENDPGM, &[]),
    ];
    let mut bytes = Vec::new();
    for i in &prog {
        bytes.extend(i.encode_bytes(Gfx942).unwrap_or_else(|e| panic!("{i}: {e}")));
    }
    let decoded = decode_all(&bytes, Gfx942).unwrap();
    let offsets: Vec<usize> = decoded.iter().map(|(o, _)| *o).collect();
    assert_eq!(offsets, vec![0, 8, 12, 20, 28, 36]);
    let insts: Vec<Inst> = decoded.into_iter().map(|(_, i)| i).collect();
    assert_eq!(insts, prog);
    // An emulator reads fields, files and constants without text.
    let mov = &insts[3];
    assert_eq!(mov.operand(Field::Src0), Some(Operand::Lit(0x1234_5678)));
    let load = &insts[2];
    assert!(load.mods.lds && load.operand(Field::Vdata).is_none());
    let slots = insts[4].slots();
    assert_eq!(slots[0].access, Access::Write);
    assert_eq!(insts[4].operands[1], Operand::Reg(Reg { file: RegFile::Agpr, index: 7, count: 1 }));
    assert_eq!(insts[3].to_string(), "v_mov_b32_e32 v0, 0x12345678");
}

#[test]
fn constants_follow_llvm() {
    assert_eq!(fold_literal(0x3E22_F983, Ty::F32), Operand::Float(InlineFloat::InvTwoPi));
    assert_eq!(fold_literal(0x3E22_F983, Ty::B32), Operand::Float(InlineFloat::InvTwoPi));
    assert_eq!(fold_literal(0x3C00, Ty::F16), Operand::Float(InlineFloat::One));
    assert_eq!(fold_literal(0x3FF0_0000, Ty::F64), Operand::Float(InlineFloat::One));
    assert_eq!(fold_literal(0xFFFF_FFF0, Ty::B32), Operand::Int(-16));
    assert_eq!(fold_literal(0x3F80_0001, Ty::F32), Operand::Lit(0x3F80_0001));
    let one = Operand::Float(InlineFloat::One);
    assert_eq!(one.const_bits(Ty::F32), Some(0x3F80_0000));
    assert_eq!(one.const_bits(Ty::F16), Some(0x3C00));
    assert_eq!(one.const_bits(Ty::F64), Some(0x3FF0_0000_0000_0000));
    assert_eq!(Operand::Int(-1).const_bits(Ty::B64), Some(u64::MAX));
    // A literal equal to an inline constant encodes inline (ISA.md §4.5).
    let i = Inst::new(Op::V_MOV_B32, &[v(0), Operand::Lit(0x3E22_F983)]);
    assert_eq!(i.encode(Gfx942).unwrap(), vec![0x7E00_02F8]);
}

#[test]
fn encoder_rejects_what_llvm_rejects() {
    let e = Inst::new(Op::DS_READ_B64, &[vr(1, 2), v(0)]).encode(Gfx942).unwrap_err();
    assert!(matches!(e, EncodeError::Misaligned { index: 0, .. }), "{e}");
    let e = Inst::new(Op::S_LOAD_DWORDX4, &[sr(2, 4), sr(0, 2), imm(0)]).encode(Gfx942).unwrap_err();
    assert!(matches!(e, EncodeError::Misaligned { .. }), "{e}");
    let e = Inst::new(Op::V_ADD_U32, &[v(0), s(1), s(2)]).e64().encode(Gfx942).unwrap_err();
    assert_eq!(e, EncodeError::ConstantBus { op: "v_add_u32" });
    let e = Inst::new(Op::V_ADD_U32, &[v(0), v(1), int(0x1234)]).e64().encode(Gfx942).unwrap_err();
    assert_eq!(e, EncodeError::Literal { op: "v_add_u32" });
    let mut w = Inst::new(Op::DS_WRITE_B32, &[v(1), v(0)]);
    w.mods.gds = true;
    assert!(matches!(w.encode(Gfx950), Err(EncodeError::Modifier { modifier: "gds", .. })));
    let e = Inst::new(Op::BUFFER_LOAD_DWORDX4, &[v(1), sr(4, 4), int(0)]).offen().lds();
    let e2 = Inst::new(Op::BUFFER_LOAD_DWORDX4, &[v(1), sr(4, 4), int(0)]).offen().lds();
    assert!(matches!(e.encode(Gfx942), Err(EncodeError::Modifier { modifier: "lds", .. })));
    assert!(e2.encode(Gfx950).is_ok());
    let mix = Inst::new(Op::V_MFMA_F32_32X32X8_BF16, &[ar(0, 16), vr(0, 2), vr(2, 2), vr(16, 16)]);
    assert!(matches!(mix.encode(Gfx942), Err(EncodeError::InvalidOperand { index: 3, .. })));
    let off = Inst::new(Op::GLOBAL_LOAD_DWORD, &[v(0), vr(2, 2), gemm_isa::operand::OFF]).offset(4096);
    assert!(matches!(off.encode(Gfx942), Err(EncodeError::OutOfRange { what: "offset", .. })));
    let e32 = Inst::new(Op::V_ADD_F32, &[v(0), v(1), s(2)]);
    assert!(matches!(e32.encode(Gfx942), Err(EncodeError::InvalidOperand { index: 2, .. })));
    assert!(e32.e64().encode(Gfx942).is_ok());
    let no = Inst::new(Op::V_FMAMK_F32, &[v(0), v(1), imm(0x4120_0000), v(2)]).e64();
    assert!(matches!(no.encode(Gfx942), Err(EncodeError::NoSuchEncoding { .. })));
    assert_eq!(Inst::new(Op::V_NOP, &[]).e64().enc, Enc::E64);
}

#[test]
fn decoder_errors_name_the_byte_offset() {
    let mut bytes = Inst::new(Op::S_NOP, &[imm(0)]).encode_bytes(Gfx942).unwrap();
    bytes.extend(Inst::new(Op::S_NOP, &[imm(1)]).encode_bytes(Gfx942).unwrap());
    let mut unknown = bytes.clone();
    unknown.extend(0xFFFF_FFFFu32.to_le_bytes());
    assert_eq!(decode_all(&unknown, Gfx942), Err(DecodeError::Unknown { offset: 8, word: 0xFFFF_FFFF }));
    let mut cut = bytes.clone();
    cut.extend(&0xD3E0_8000u32.to_le_bytes()); // first half of an MFMA
    assert_eq!(decode_all(&cut, Gfx942), Err(DecodeError::Truncated { offset: 8, needed: 8 }));
    // gfx950-only opcode on gfx942.
    let mfma = Inst::new(Op::V_MFMA_F32_16X16X32_BF16, &[ar(0, 4), vr(0, 4), vr(4, 4), ar(0, 4)]);
    let b = mfma.encode_bytes(Gfx950).unwrap();
    assert!(matches!(decode_all(&b, Gfx942), Err(DecodeError::Unknown { offset: 0, .. })));
    assert_eq!(decode_all(&b, Gfx950).unwrap()[0].1, mfma);
    // Reserved bits (SOPP with a nonzero immediate where none is defined is fine; an
    // SOP1 s_getpc with a source field set is not canonical).
    let bad = 0xBE80_1C05u32.to_le_bytes();
    assert!(matches!(decode_all(&bad, Gfx942), Err(DecodeError::Invalid { offset: 0, .. })));
}

#[test]
fn agpr_returning_atomics_follow_llvm() {
    let off = gemm_isa::operand::OFF;
    // No AGPR returning form (LLVM: "operands are not valid for this GPU or mode").
    let i = Inst::new(Op::GLOBAL_ATOMIC_ADD_F32, &[a(1), vr(0, 2), a(2), off]).sc0();
    assert!(matches!(i.encode(Gfx942), Err(EncodeError::AgprAtomic { op: "global_atomic_add_f32", .. })));
    // The non-returning AGPR form and the VGPR returning form exist.
    let i = Inst::new(Op::GLOBAL_ATOMIC_ADD_F32, &[vr(0, 2), a(2), off]).sc1();
    assert_eq!(i.encode(Gfx950).unwrap(), vec![0xDF34_8000, 0x00FF_0200]);
    // f64 AGPR returning: sc0 encodes, sc0 sc1 is rejected, and so are its bytes.
    let i = Inst::new(Op::GLOBAL_ATOMIC_ADD_F64, &[ar(2, 2), vr(0, 2), ar(4, 2), off]).sc0();
    assert_eq!(i.encode(Gfx942).unwrap(), vec![0xDD3D_8000, 0x02FF_0400]);
    assert!(matches!(i.clone().sc1().encode(Gfx942), Err(EncodeError::AgprAtomic { .. })));
    let bytes: Vec<u8> = [0xDF3D_8000u32, 0x02FF_0400].iter().flat_map(|w| w.to_le_bytes()).collect();
    assert!(matches!(decode_all(&bytes, Gfx942), Err(DecodeError::Invalid { offset: 0, .. })));
}
