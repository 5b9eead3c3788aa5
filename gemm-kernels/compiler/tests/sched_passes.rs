//! `waitcnt.rs` and `hazard.rs` on small hand-made programs: the waits and NOPs they
//! derive, checked against the rules they implement (ISA.md §3.1, §1.5, LLVM
//! GCNHazardRecognizer for gfx940).

use gemm_compiler::program::Item;
use gemm_compiler::{hazard, waitcnt};
use gemm_isa::operand::{a, ar, int, s, sr, v, vr};
use gemm_isa::{Arch, Inst, Op, Operand};

fn load(dst: u16, addr: u16) -> Item {
    Item::I(Inst::new(Op::BUFFER_LOAD_DWORD, &[v(dst), v(addr), sr(4, 4), int(0)]).offen())
}
fn store(data: u16, addr: u16) -> Item {
    Item::I(Inst::new(Op::BUFFER_STORE_DWORD, &[v(data), v(addr), sr(4, 4), int(0)]).offen())
}
fn add(d: u16, x: u16, y: u16) -> Item {
    Item::I(Inst::new(Op::V_ADD_U32, &[v(d), v(x), v(y)]))
}
fn waits(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::I(i) if i.op == Op::S_WAITCNT => Some(i.to_string()),
            _ => None,
        })
        .collect()
}

#[test]
fn waits_count_only_what_is_needed() {
    let mut p = vec![load(1, 10), load(2, 11), load(3, 12), add(4, 1, 1), add(5, 3, 3)];
    waitcnt::insert_waits(&mut p);
    assert_eq!(waits(&p), ["s_waitcnt vmcnt(2)", "s_waitcnt vmcnt(0)"]);
}

#[test]
fn loads_and_stores_may_pass_each_other() {
    // A store younger than the load does not count towards the load's wait.
    let mut p = vec![load(1, 10), store(7, 11), load(2, 12), add(4, 1, 1)];
    waitcnt::insert_waits(&mut p);
    assert_eq!(waits(&p), ["s_waitcnt vmcnt(1)"]);
    // Overwriting store data needs expcnt.
    let mut p = vec![store(7, 11), add(7, 1, 1)];
    waitcnt::insert_waits(&mut p);
    assert_eq!(waits(&p), ["s_waitcnt expcnt(0)"]);
}

#[test]
fn barrier_waits_for_lds_and_smem_waits_for_zero() {
    let mut p = vec![
        Item::I(Inst::new(Op::S_LOAD_DWORDX2, &[sr(8, 2), sr(0, 2), Operand::Imm(0)])),
        Item::I(Inst::new(Op::DS_WRITE_B32, &[v(1), v(2)])),
        Item::I(Inst::new(Op::S_BARRIER, &[])),
        Item::I(Inst::new(Op::S_ADD_U32, &[s(10), s(8), int(1)])),
    ];
    waitcnt::insert_waits(&mut p);
    assert_eq!(waits(&p), ["s_waitcnt lgkmcnt(0)"], "one wait before the barrier covers both");
}

#[test]
fn waits_hold_around_a_loop() {
    // The load issued at the end of the loop body is used at its top.
    let mut p = vec![
        load(1, 10),
        Item::Label(1),
        add(2, 1, 1),
        load(1, 10),
        Item::I(Inst::new(Op::S_CMP_EQ_U32, &[s(3), int(0)])),
        Item::Branch(Op::S_CBRANCH_SCC0, 1),
        Item::I(Inst::new(Op::S_ENDPGM, &[])),
    ];
    waitcnt::insert_waits(&mut p);
    let pos = p.iter().position(|i| *i == Item::Label(1)).unwrap();
    assert!(matches!(&p[pos + 1], Item::I(i) if i.to_string() == "s_waitcnt vmcnt(0)"), "{p:?}");
}

fn mfma() -> Item {
    Item::I(Inst::new(Op::V_MFMA_F32_32X32X8_BF16, &[ar(0, 16), vr(0, 2), vr(2, 2), ar(0, 16)]))
}
fn nops(items: &[Item]) -> i64 {
    items
        .iter()
        .filter_map(|i| match i {
            Item::I(i) if i.op == Op::S_NOP => match i.operands[0] {
                Operand::Imm(n) => Some(n + 1),
                _ => None,
            },
            _ => None,
        })
        .sum()
}

#[test]
fn mfma_result_read_by_valu_needs_wait_states() {
    for (arch, want) in [(Arch::Gfx942, 19), (Arch::Gfx950, 20)] {
        let mut p = vec![mfma(), Item::I(Inst::new(Op::V_ACCVGPR_READ_B32, &[v(8), a(3)]))];
        hazard::insert_nops(&mut p, arch);
        assert_eq!(nops(&p), want, "{arch}");
    }
    // Independent instructions in between count as wait states.
    let mut p = vec![mfma()];
    p.extend((0..5).map(|i| add(20 + i, 30, 31)));
    p.push(Item::I(Inst::new(Op::V_ACCVGPR_READ_B32, &[v(8), a(3)])));
    hazard::insert_nops(&mut p, Arch::Gfx942);
    assert_eq!(nops(&p), 14);
}

#[test]
fn accumulation_chains_need_none_but_valu_operands_do() {
    let mut p = vec![mfma(), mfma()];
    hazard::insert_nops(&mut p, Arch::Gfx942);
    assert_eq!(nops(&p), 0, "same srcC/vdst tuple is forwarded");
    let mut p = vec![add(1, 30, 31), mfma()];
    hazard::insert_nops(&mut p, Arch::Gfx942);
    assert_eq!(nops(&p), 2, "VALU write of srcA then MFMA");
    let mut p = vec![
        Item::I(Inst::new(Op::V_CMP_LT_I32, &[gemm_isa::operand::VCC, int(3), v(7)])),
        Item::I(Inst::new(Op::V_CNDMASK_B32, &[v(8), v(2), v(1), gemm_isa::operand::VCC])),
    ];
    hazard::insert_nops(&mut p, Arch::Gfx950);
    assert_eq!(nops(&p), 2, "VALU write of VCC then VALU read");
    let mut p = vec![Item::I(Inst::new(Op::V_ACCVGPR_WRITE_B32, &[a(0), int(0)])), mfma()];
    hazard::insert_nops(&mut p, Arch::Gfx942);
    assert_eq!(nops(&p), 2, "accvgpr_write of srcC then MFMA");
}
