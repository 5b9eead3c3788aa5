//! Golden vectors produced by LLVM 22 (`scripts/gen-golden.sh` → `tests/data/golden.tsv`,
//! and the shared `llvm-mc-22-encodings.tsv`). For every row and arch: our assembler +
//! encoder give LLVM's bytes (or both reject); our decoder reads LLVM's bytes back; the
//! printed text of the decoded instruction assembles to the same bytes again.

mod common;
use common::*;
use gemm_isa::table::flags::*;
use gemm_isa::{decode_all, parse_line, Arch, AsmError, Enc, EncodeError, Format, Op, TABLE};
use std::collections::HashSet;

/// Lines of the shared TSV that are outside an instruction assembler's scope, and why.
const SHARED_EXCLUDED: &[(&str, &str)] = &[(
    "v_mov_b32 v0, 1/(2*pi)",
    "a symbolic expression (`pi` is an undefined symbol): llvm-mc emits a relocation fixup, not an instruction constant",
)];

struct Outcome {
    checked: usize,
    failures: Vec<String>,
    covered: HashSet<(Arch, Op, Enc)>,
}

fn check_tsv(text: &str, excluded: &[(&str, &str)]) -> Outcome {
    let mut out = Outcome { checked: 0, failures: Vec::new(), covered: HashSet::new() };
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.starts_with("asm\t")) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert_eq!(cols.len(), 3, "malformed TSV line `{line}`");
        let asm = cols[0];
        if excluded.iter().any(|(l, _)| *l == asm) {
            continue;
        }
        for (arch, col) in Arch::ALL.into_iter().zip(&cols[1..]) {
            out.checked += 1;
            let ours =
                parse_line(asm, 1, arch).map(|i| i.expect("not blank").encode_bytes(arch).expect("parse_line encodes"));
            let fail = |why: String| format!("{arch}: `{asm}`: {why}");
            if let Some(err) = col.strip_prefix("ERR: ") {
                if let Ok(b) = ours {
                    out.failures.push(fail(format!("LLVM rejects ({err}) but we encode {}", hex_words(&b))));
                }
                continue;
            }
            let llvm = parse_hex_words(col);
            match &ours {
                // llvm-mc-22 assembles `sc1` on the AGPR returning f64 atomics but drops the
                // bit (its disassembler rejects the encoding with it); we reject that form.
                // LLVM's bytes must be exactly those of the line without sc1.
                Err(AsmError::Encode { source: EncodeError::AgprAtomic { .. }, .. }) if asm.contains(" sc1") => {
                    let without = asm.replace(" sc1", "");
                    match parse_line(&without, 1, arch) {
                        Ok(Some(i)) if i.encode_bytes(arch).ok().as_ref() == Some(&llvm) => {}
                        other => out.failures.push(fail(format!("LLVM gives {col}; `{without}` gives {other:?}"))),
                    }
                }
                Err(e) => out.failures.push(fail(format!("we reject ({e}), LLVM gives {col}"))),
                Ok(b) if *b != llvm => out.failures.push(fail(format!("ours {} LLVM {col}", hex_words(b)))),
                Ok(_) => {}
            }
            match decode_all(&llvm, arch) {
                Ok(v) if v.len() == 1 => {
                    let inst = &v[0].1;
                    out.covered.insert((arch, inst.op, inst.enc));
                    let text = inst.to_string();
                    match parse_line(&text, 1, arch) {
                        Ok(Some(p)) if p == *inst && p.encode_bytes(arch).ok().as_ref() == Some(&llvm) => {}
                        other => {
                            out.failures.push(fail(format!("decoded as `{text}`, which re-assembles to {other:?}")))
                        }
                    }
                }
                other => out.failures.push(fail(format!("decoder: {other:?}"))),
            }
        }
    }
    out
}

#[test]
fn golden_tsv_matches_llvm_and_covers_the_table() {
    let text = include_str!("data/golden.tsv");
    let out = check_tsv(text, &[]);
    assert!(out.checked > 10_000, "golden.tsv too small: {} checks", out.checked);
    assert!(out.failures.is_empty(), "{} failures:\n{}", out.failures.len(), out.failures.join("\n"));
    // Every row, on every arch that has it, in every encoding it has.
    let mut missing = Vec::new();
    for d in TABLE {
        for arch in Arch::ALL {
            if d.opcode(arch).is_none() {
                continue;
            }
            let mut want = vec![Enc::Native];
            if matches!(d.format, Format::Vop1 | Format::Vop2 | Format::Vopc) {
                if !d.has(NO_E64) {
                    want.push(Enc::E64);
                }
                if d.has(SDWA) {
                    want.push(Enc::Sdwa);
                }
                if d.has(DPP) {
                    want.push(Enc::Dpp);
                }
            }
            for e in want {
                if !out.covered.contains(&(arch, d.op, e)) {
                    missing.push(format!("{arch} {} {e:?}", d.name));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "golden.tsv lacks {} forms (rerun scripts/gen-golden.sh):\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn shared_reference_encodings_match() {
    let text = include_str!("data/llvm-mc-22-encodings.tsv");
    let out = check_tsv(text, SHARED_EXCLUDED);
    assert!(out.checked > 350, "only {} checks", out.checked);
    assert!(out.failures.is_empty(), "{} failures:\n{}", out.failures.len(), out.failures.join("\n"));
}
