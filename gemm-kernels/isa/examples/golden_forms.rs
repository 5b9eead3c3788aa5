//! Prints the generated part of the golden assembly list: for every table row and arch,
//! a canonical instance in every encoding it has, plus two seeded random instances.
//! `scripts/gen-golden.sh` feeds this (and `tests/data/golden-extra.s`) to llvm-mc-22.

use gemm_isa::sample::{canonical, random, Rng};
use gemm_isa::{Arch, Enc, Format, TABLE};
use std::collections::BTreeSet;

fn main() {
    let mut rng = Rng(0x0060_1DE7);
    let mut seen = BTreeSet::new();
    for d in TABLE {
        let encs: &[Enc] = match d.format {
            Format::Vop1 | Format::Vop2 => &[Enc::Native, Enc::E64, Enc::Sdwa, Enc::Dpp],
            Format::Vopc => &[Enc::Native, Enc::E64, Enc::Sdwa],
            _ => &[Enc::Native],
        };
        for arch in Arch::ALL {
            for &e in encs {
                let mut insts = Vec::new();
                insts.extend(canonical(d.op, arch, e));
                for _ in 0..2 {
                    insts.extend(random(d.op, arch, e, &mut rng));
                }
                for i in insts {
                    let line = i.to_string();
                    if seen.insert(line.clone()) {
                        println!("{line}");
                    }
                }
            }
        }
    }
}
