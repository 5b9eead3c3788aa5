//! Seeded property test: random valid instructions of every row and encoding round-trip
//! encode → decode → print → llvm-mc-22 → the same bytes (one llvm-mc call per batch
//! of a few hundred lines), and the assembler reads the printed text back to them.
//! `GEMM_ISA_PROP_SEED=<u64>` runs it with another seed.

mod common;
use common::*;
use gemm_isa::sample::{random, Rng};
use gemm_isa::table::flags::ATOMIC;
use gemm_isa::{decode_all, parse_line, Arch, Enc, Format, Inst, RegFile, TABLE};

const SEED: u64 = 0x5EED_0001;
const PER_FORM: usize = 3;
const BATCH: usize = 400;

fn encodings(f: Format) -> &'static [Enc] {
    match f {
        Format::Vop1 | Format::Vop2 => &[Enc::Native, Enc::E64, Enc::Sdwa, Enc::Dpp],
        Format::Vopc => &[Enc::Native, Enc::E64, Enc::Sdwa],
        _ => &[Enc::Native],
    }
}

#[test]
fn random_instructions_round_trip_through_llvm() {
    let seed = std::env::var("GEMM_ISA_PROP_SEED").ok().map_or(SEED, |s| s.parse().expect("GEMM_ISA_PROP_SEED: u64"));
    let mut rng = Rng(seed);
    let mut failures = Vec::new();
    let mut checked = 0usize;
    let (mut agpr_atomics, mut agpr_atomics_rtn) = (0usize, 0usize);
    for arch in Arch::ALL {
        let mut insts: Vec<Inst> = Vec::new();
        for d in TABLE {
            for &e in encodings(d.format) {
                for _ in 0..PER_FORM {
                    if let Some(i) = random(d.op, arch, e, &mut rng) {
                        insts.push(i);
                    }
                }
            }
        }
        for chunk in insts.chunks(BATCH) {
            let lines: Vec<String> = chunk.iter().map(|i| i.to_string()).collect();
            let llvm = llvm_mc(arch, &lines);
            for ((inst, line), res) in chunk.iter().zip(&lines).zip(llvm) {
                checked += 1;
                if inst.op.def().has(ATOMIC)
                    && inst.operands.iter().any(|o| o.reg().is_some_and(|r| r.file == RegFile::Agpr))
                {
                    agpr_atomics += 1;
                    agpr_atomics_rtn += inst.mods.sc0 as usize;
                }
                let ours = inst.encode_bytes(arch).expect("generator yields encodable instructions");
                match res {
                    Err(e) => failures.push(format!("{arch}: `{line}`: llvm rejects: {e}")),
                    Ok(b) if b != ours => {
                        failures.push(format!("{arch}: `{line}`: llvm {} ours {}", hex_words(&b), hex_words(&ours)))
                    }
                    Ok(_) => {}
                }
                match decode_all(&ours, arch) {
                    Ok(v) if v.len() == 1 && v[0].1 == *inst => {
                        if v[0].1.to_string() != *line {
                            failures.push(format!("{arch}: `{line}`: reprinted as `{}`", v[0].1));
                        }
                    }
                    other => failures.push(format!("{arch}: `{line}`: decode gave {other:?}")),
                }
                match parse_line(line, 1, arch) {
                    Ok(Some(p)) if p.encode_bytes(arch).ok() == Some(ours.clone()) => {}
                    other => failures.push(format!("{arch}: `{line}`: assembler gave {other:?}")),
                }
            }
        }
    }
    assert!(checked > 6000, "only {checked} random instructions");
    assert!(agpr_atomics > 50 && agpr_atomics_rtn > 15, "AGPR atomics: {agpr_atomics} ({agpr_atomics_rtn} returning)");
    assert!(failures.is_empty(), "{} failures of {checked}:\n{}", failures.len(), failures.join("\n"));
}
