//! Time per compiler phase for one catalogue kernel (its index the first argument, 0 by
//! default); build.rs runs the compiler at opt-level 2.
use gemm_compiler::*;
fn main() {
    let i = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    let cfg = catalogue::configs()[i];
    println!("{}", cfg.name());
    let t = std::time::Instant::now();
    let k = optimise(cfg).unwrap();
    let t1 = t.elapsed();
    let mut p = lower::lower(&k).unwrap();
    let t2 = t.elapsed();
    regalloc::allocate(&mut p).unwrap();
    let t3 = t.elapsed();
    waitcnt::insert_waits(&mut p.items);
    let t4 = t.elapsed();
    hazard::insert_nops(&mut p.items, cfg.arch);
    let t5 = t.elapsed();
    let _ = analysis::stats(&k, &p);
    let t6 = t.elapsed();
    let (insts, _) = resolve_branches(&p.items, cfg.arch).unwrap();
    let t7 = t.elapsed();
    println!(
        "passes {t1:?} lower {t2:?} ra {t3:?} wait {t4:?} hazard {t5:?} stats {t6:?} resolve {t7:?} n={}",
        insts.len()
    );
}
