//! Live oracle test: our printed text for every table row (canonical operands, every
//! encoding variant) goes through one llvm-mc-22 call per arch; LLVM's bytes must equal
//! our encoder's, and our decoder must read them back to the same instruction.

mod common;
use common::*;
use gemm_isa::sample::canonical;
use gemm_isa::{decode_all, Arch, Enc, Format, TABLE};

#[test]
fn every_row_matches_llvm() {
    let mut failures = Vec::new();
    let mut count = 0;
    for arch in Arch::ALL {
        let mut insts = Vec::new();
        for d in TABLE {
            if d.opcode(arch).is_none() {
                continue;
            }
            let encs: &[Enc] = match d.format {
                Format::Vop1 | Format::Vop2 => &[Enc::Native, Enc::E64, Enc::Sdwa, Enc::Dpp],
                Format::Vopc => &[Enc::Native, Enc::E64, Enc::Sdwa],
                _ => &[Enc::Native],
            };
            for &e in encs {
                if let Some(i) = canonical(d.op, arch, e) {
                    insts.push(i);
                } else if e == Enc::Native || e == Enc::E64 && !d.has(gemm_isa::table::flags::NO_E64) {
                    failures.push(format!("{arch}: no canonical {e:?} instance of {}", d.name));
                }
            }
        }
        let lines: Vec<String> = insts.iter().map(|i| i.to_string()).collect();
        let llvm = llvm_mc(arch, &lines);
        for ((inst, line), res) in insts.iter().zip(&lines).zip(llvm) {
            count += 1;
            let ours = inst.encode_bytes(arch).expect("canonical encodes");
            match res {
                Err(e) => failures.push(format!("{arch}: `{line}`: llvm rejects: {e}")),
                Ok(b) if b != ours => {
                    failures.push(format!("{arch}: `{line}`: llvm {} ours {}", hex_words(&b), hex_words(&ours)))
                }
                Ok(b) => match decode_all(&b, arch) {
                    Ok(v) if v.len() == 1 && v[0].1 == *inst => {}
                    other => failures.push(format!("{arch}: `{line}`: decode gave {other:?}")),
                },
            }
        }
    }
    assert!(count > 2000, "only {count} instructions checked");
    assert!(failures.is_empty(), "{} failures of {count}:\n{}", failures.len(), failures.join("\n"));
}
