//! Scratch probe: the table's time for a split's partial launch against the timing model, the
//! layer's N varied (so the workgroups vary at the same K chunk and split count).
//!
//! `cargo run --release -p gemm-lab --example comp_probe -- split ARCH DTYPE M N K N2,N3,...`
//! `cargo run --release -p gemm-lab --example comp_probe -- twin KERNEL n K wgs,wgs,...`
//! `cargo run --release -p gemm-lab --example comp_probe -- dump ARCH DTYPE K wgs,wgs,...`: every
//! plain decode kernel of `ARCH` whose name holds `_DTYPE_`: its grids at K (all and one
//! activation column) and, per workgroup count, the table's composition beside the model's
//! prediction (how the decode composition of session 35 was chosen).

use gemm_core::Arch;
use gemm_dispatch::plan::cost_table::{compose_bounded, compose_problem, table, wg_k_seconds, Row};
use gemm_dispatch::plan::kernel_plan;
use gemm_dispatch::plan::splitk::{partial_seconds, plain_twin};
use gemm_lab::decode_table::{dtype_of, linear, plan_without_decode};
use gemm_lab::model::{predict_plan, problem_for};

fn grids(row: &Row, arch: Arch, k: f64, w: f64) {
    let cus = u64::from(arch.caps().compute_units);
    let occ = u64::from(row.occupancy);
    let g = |r: &Row, x: u64| compose_bounded(r, arch, x, k, w) * 1e6;
    let col = row.column();
    let one = row.one_activation_column(false);
    println!(
        "  {} occ {} k {}: S {:.2} H {:.2} F {:.2} R1 {:.2} R3 {:.2} | WF {:.2} W1 {:.2} W3 {:.2} | OS {:.2} OF {:.2} O1 {:.2} O3 {:.2}",
        row.kernel,
        occ,
        k,
        g(row, 8),
        g(row, u64::from(row.h_wgs)),
        g(row, cus),
        g(row, cus * occ),
        g(row, 3 * cus * occ),
        g(&col, cus),
        g(&col, cus * occ),
        g(&col, 3 * cus * occ),
        g(&one, 8),
        g(&one, cus),
        g(&one, cus * occ),
        g(&one, 3 * cus * occ),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let opts = gemm_emu::timing::ModelOptions::default();
    if args[1] == "dump" {
        // dump ARCH DTYPE K wgs,wgs,...: every decode kernel's grids at K (full and one
        // activation column) and the model at each workgroup count, n = 1 and n = TN.
        let arch: Arch = args[2].parse().unwrap();
        let k: u32 = args[4].parse().unwrap();
        let wl: Vec<u64> = args[5].split(',').map(|x| x.parse().unwrap()).collect();
        for e in gemm_kernels::for_arch(arch).filter(|e| e.is_decode() && e.name.contains(&format!("_{}_", args[3]))) {
            let Ok(row) = table().row(e) else { continue };
            if e.split_k != gemm_kernels::SplitRole::None {
                continue;
            }
            let w = wg_k_seconds(e);
            let occ = u64::from(row.occupancy);
            let one = row.one_activation_column(true);
            for (n, r) in [(e.tile.1, row), (1, &one)] {
                let (gs, gf, gh, g1, g3) = r.grids_at(f64::from(k), w);
                let g: Vec<String> = [gs, gh, gf, g1, g3].iter().map(|x| format!("{:.3}", x * 1e6)).collect();
                let mut out = format!("{} n {} occ {} hw {} grids {}", e.name, n, occ, r.h_wgs, g.join(","));
                for &x in &wl {
                    let m = x as u32 * e.tile.0;
                    let prob = problem_for(e, m as usize, n as usize, k as usize);
                    let plan = kernel_plan::plan_for(e, &prob).unwrap();
                    let pr = predict_plan(&plan, &prob, &opts).unwrap();
                    out += &format!(
                        " {}:{:.3}:{:.3}",
                        x,
                        compose_problem(row, e, m, n, 1, f64::from(k)) * 1e6,
                        pr.seconds * 1e6
                    );
                }
                println!("{out}");
            }
        }
        return;
    }
    if args[1] == "twin" {
        let e = gemm_kernels::catalogue().iter().find(|e| e.name == args[2]).expect("kernel");
        let n: u32 = args[3].parse().unwrap();
        let k: u32 = args[4].parse().unwrap();
        let row = table().row(e).unwrap();
        let w = wg_k_seconds(e);
        grids(row, e.arch, f64::from(k), w);
        if e.is_decode() {
            let one = row.one_activation_column(true);
            let d = |r: &Row, x: u64| {
                gemm_dispatch::plan::cost_table::compose_with_tail(r, e.arch, x, f64::from(k), w, None, true) * 1e6
            };
            for (name, r) in [("full", row), ("one", &one)] {
                println!(
                    "  {name}: S {:.2} H {:.2} F {:.2} R1 {:.2} | 448 {:.2}",
                    d(r, 8),
                    d(r, u64::from(r.h_wgs)),
                    d(r, 304),
                    d(r, 304 * u64::from(r.occupancy)),
                    d(r, 448)
                );
            }
        }
        for x in args[5].split(',').map(|x| x.parse::<u64>().unwrap()) {
            let m = x as u32 * e.tile.0;
            let prob = problem_for(e, m as usize, n as usize, k as usize);
            let plan = kernel_plan::plan_for(e, &prob).unwrap();
            let pr = predict_plan(&plan, &prob, &opts).unwrap();
            let t = compose_problem(row, e, m, n, 1, f64::from(k));
            println!(
                "wgs {:<5} n0 {:<2} table {:>8.2} model {:>8.2} err {:>6.1}%",
                x,
                pr.cu_wgs,
                t * 1e6,
                pr.seconds * 1e6,
                100.0 * (t / pr.seconds - 1.0)
            );
        }
        return;
    }
    let arch: Arch = args[2].parse().unwrap();
    let (ab, c) = dtype_of(&args[3], arch).unwrap();
    let d = |i: usize| args[i].parse::<usize>().unwrap();
    let (m, n, k) = (d(4), d(5), d(6));
    let base = plan_without_decode(arch, &linear(m, n, k, ab, c)).unwrap().split.expect("a split");
    let mut ns = vec![n];
    if let Some(x) = args.get(7) {
        ns.extend(x.split(',').map(|x| x.parse::<usize>().unwrap()));
    }
    for (i, &nn) in ns.iter().enumerate() {
        let p = linear(m, nn, k, ab, c);
        let Ok(pl) = plan_without_decode(arch, &p) else { continue };
        let Some(sp) = pl.split else { continue };
        let sp = sp.with_splits(base.splits);
        let twin = plain_twin(sp.partial).unwrap();
        let row = table().row(twin).unwrap();
        if i == 0 {
            grids(row, arch, f64::from(sp.kchunk), wg_k_seconds(twin));
        }
        let pt = partial_seconds(&sp, twin).unwrap();
        let pr = gemm_lab::split_eval::predict_split(&sp, &p, &opts).unwrap();
        let wgs = u64::from(sp.problem.m.div_ceil(sp.partial.tile.0))
            * u64::from(sp.problem.n.div_ceil(sp.partial.tile.1))
            * u64::from(sp.splits);
        println!(
            "N {:<6} {}x{}x{} k{} splits {} wgs {:<5} n0 {:<2} part_tab {:>7.2} part_mod {:>7.2} err {:>6.1}%",
            nn,
            sp.partial.tile.0,
            sp.partial.tile.1,
            sp.partial.tile.2,
            sp.kchunk,
            sp.splits,
            wgs,
            pr[0].cu_wgs,
            pt * 1e6,
            pr[0].seconds * 1e6,
            100.0 * (pt / pr[0].seconds - 1.0)
        );
        if std::env::var("PROBE_WAVES").is_ok() {
            let x = &pr[0];
            let mut per: std::collections::BTreeMap<u64, (u64, u64)> = Default::default();
            for w in &x.waves {
                let e = per.entry(w.wg).or_insert((u64::MAX, 0));
                e.0 = e.0.min(w.start);
                e.1 = e.1.max(w.end);
            }
            let us = |c: u64| c as f64 / x.mhz;
            let v: Vec<String> = per.iter().map(|(g, (s, e))| format!("wg{g} {:.2}-{:.2}", us(*s), us(*e))).collect();
            println!(
                "    mhz {:.0} hits l2 {:.3} mall {:.3} limiter {} | {}",
                x.mhz,
                x.hits.l2,
                x.hits.mall,
                x.limiter,
                v.join(", ")
            );
        }
    }
}
