//! Time per compiler phase for one kernel (debug builds are what build.rs runs).
use gemm_compiler::*;
fn main() {
    let cfg = catalogue::configs()[0];
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
