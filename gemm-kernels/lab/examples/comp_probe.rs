//! Scratch probe: the table's time for a split's partial launch against the timing model, the
//! layer's N varied (so the workgroups vary at the same K chunk and split count).
//!
//! `cargo run --release -p gemm-lab --example comp_probe -- split ARCH DTYPE M N K N2,N3,...`
//! `cargo run --release -p gemm-lab --example comp_probe -- twin KERNEL n K wgs,wgs,...`
//! `cargo run --release -p gemm-lab --example comp_probe -- dump ARCH DTYPE K wgs,wgs,...`: every
//! plain decode kernel of `ARCH` whose name holds `_DTYPE_`: its grids at K (all and one
//! activation column) and, per workgroup count, the table's composition beside the model's
//! prediction (how the decode composition of sessions 35 and 36 was chosen).
//! `cargo run --release -p gemm-lab --example comp_probe -- cols ARCH DTYPE K wgs,wgs,...`: every
//! plain decode kernel of more than one activation column, the composition beside the model at
//! 1, 2, 4, ... `TN` columns (how the half-column grids of session 36 were weighed).
//! `cargo run --release -p gemm-lab --example comp_probe -- lda KERNEL n K blocks lda,lda,...`:
//! the model at A's leading dimension padded (a split's chunks read rows `lda` apart: it moves
//! the model's time by 1% at most on the 128x32 decode-rows block).

use gemm_core::Arch;
use gemm_dispatch::plan::cost_table::{table, wg_k_seconds, Row};
use gemm_dispatch::plan::splitk::{partial_seconds, plain_twin};
use gemm_lab::decode_table::{dtype_of, linear, plan_without_decode};

/// The row's grids at `k` as the composition reads them ([`Row::grids_at`]): its own, its
/// one-column arrangement's and its one-activation-column arrangement's.
fn grids(row: &Row, decode: bool, k: f64, w: f64) {
    let us = |r: &Row| {
        let (s, f, h, r1, r3) = r.grids_at(k, w);
        [s, h, f, r1, r3].map(|x| x * 1e6)
    };
    let [s, h, f, r1, r3] = us(row);
    let [_, _, wf, w1, w3] = us(&row.column());
    let [os, oh, of, o1, o3] = us(&row.one_activation_column(decode));
    println!(
        "  {} occ {} k {k}: S {s:.2} H {h:.2} F {f:.2} R1 {r1:.2} R3 {r3:.2} | WF {wf:.2} W1 {w1:.2} W3 {w3:.2} | OS {os:.2} OH {oh:.2} OF {of:.2} O1 {o1:.2} O3 {o3:.2}",
        row.kernel, row.occupancy
    );
}

/// [`gemm_lab::characterise::composed_and_model`] in us.
fn table_and_model(e: &'static gemm_kernels::KernelEntry, blocks: u64, n: u32, k: u32) -> (f64, f64, usize) {
    let (t, m, cu) = gemm_lab::characterise::composed_and_model(e, blocks as u32, n, k).unwrap();
    (t * 1e6, m * 1e6, cu)
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
            let one = row.one_activation_column(true);
            for (n, r) in [(e.tile.1, row), (1, &one)] {
                let (gs, gf, gh, g1, g3) = r.grids_at(f64::from(k), w);
                let g: Vec<String> = [gs, gh, gf, g1, g3].iter().map(|x| format!("{:.3}", x * 1e6)).collect();
                let mut out = format!("{} n {} occ {} hw {} grids {}", e.name, n, row.occupancy, r.h_wgs, g.join(","));
                for &x in &wl {
                    let (t, m, _) = table_and_model(e, x, n, k);
                    out += &format!(" {x}:{t:.3}:{m:.3}");
                }
                println!("{out}");
            }
        }
        return;
    }
    if args[1] == "cols" {
        // cols ARCH DTYPE K wgs,wgs,...: every plain decode kernel of `ARCH` whose name holds
        // `_DTYPE_` and whose block has more than one activation column: per workgroup count,
        // the composition beside the model at n = 1, 2, 4, ... TN activation columns.
        let arch: Arch = args[2].parse().unwrap();
        let k: u32 = args[4].parse().unwrap();
        let wl: Vec<u64> = args[5].split(',').map(|x| x.parse().unwrap()).collect();
        let kernels = gemm_kernels::for_arch(arch)
            .filter(|e| e.is_decode() && e.tile.1 > 1 && e.name.contains(&format!("_{}_", args[3])));
        for e in kernels.filter(|e| e.split_k == gemm_kernels::SplitRole::None) {
            if table().row(e).is_err() {
                continue;
            }
            for &x in &wl {
                let mut out = format!("{} blocks {x}", e.name);
                let mut n = 1;
                while n <= e.tile.1 {
                    let (t, m, _) = table_and_model(e, x, n, k);
                    out += &format!(" {n}:{t:.3}:{m:.3}");
                    n *= 2;
                }
                println!("{out}");
            }
        }
        return;
    }
    if args[1] == "lda" {
        // lda KERNEL n K blocks lda,lda,...: the model on `blocks` blocks at K with A's leading
        // dimension padded (a split's chunk reads its K range of rows `lda` apart).
        let e = gemm_kernels::catalogue().iter().find(|e| e.name == args[2]).expect("kernel");
        let n: usize = args[3].parse().unwrap();
        let k: usize = args[4].parse().unwrap();
        let blocks: usize = args[5].parse().unwrap();
        for lda in args[6].split(',').map(|x| x.parse::<usize>().unwrap()) {
            let p = gemm_lab::model::problem_for(e, blocks * e.tile.0 as usize, n, k);
            let p = p.with_leading_dims(lda, p.ldb, p.ldc);
            let plan = gemm_dispatch::plan::kernel_plan::plan_for(e, &p).unwrap();
            let pr = gemm_lab::model::predict_plan(&plan, &p, &opts).unwrap();
            println!("lda {lda:<6} model {:>8.2} us  mall {:.3} l2 {:.3}", pr.seconds * 1e6, pr.hits.mall, pr.hits.l2);
        }
        return;
    }
    if args[1] == "twin" {
        let e = gemm_kernels::catalogue().iter().find(|e| e.name == args[2]).expect("kernel");
        let n: u32 = args[3].parse().unwrap();
        let k: u32 = args[4].parse().unwrap();
        grids(table().row(e).unwrap(), e.is_decode(), f64::from(k), wg_k_seconds(e));
        for x in args[5].split(',').map(|x| x.parse::<u64>().unwrap()) {
            let (t, m, cu) = table_and_model(e, x, n, k);
            println!("wgs {x:<5} n0 {cu:<2} table {t:>8.2} model {m:>8.2} err {:>6.1}%", 100.0 * (t / m - 1.0));
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
            grids(row, twin.is_decode(), f64::from(sp.kchunk), wg_k_seconds(twin));
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
