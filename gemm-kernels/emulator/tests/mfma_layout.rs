//! MFMA register layouts against AMD's matrix instruction calculator output
//! (tests/data/mfma-layouts.txt, a copy of shared/reference/mfma-layouts.txt): every
//! register/lane/bit position of A, B and C/D for every calculator entry, applied to
//! every MFMA of the same shape and element width on both archs; every other modelled
//! shape must at least map its elements one-to-one onto registers.

use gemm_emu::mfma::Shape;
use gemm_isa::{Arch, TABLE};
use std::collections::{HashMap, HashSet};

/// A tiny evaluator for the calculator's formulas (floor, + - * / %, parentheses).
fn eval(e: &str, vars: &HashMap<&str, f64>) -> f64 {
    let toks: Vec<String> = {
        let mut t = Vec::new();
        let mut cur = String::new();
        for ch in e.chars() {
            if ch.is_alphanumeric() || ch == '_' {
                cur.push(ch);
            } else {
                if !cur.is_empty() {
                    t.push(std::mem::take(&mut cur));
                }
                if !ch.is_whitespace() {
                    t.push(ch.to_string());
                }
            }
        }
        if !cur.is_empty() {
            t.push(cur);
        }
        t
    };
    fn expr(t: &[String], p: &mut usize, v: &HashMap<&str, f64>) -> f64 {
        let mut x = term(t, p, v);
        while *p < t.len() && (t[*p] == "+" || t[*p] == "-") {
            let op = t[*p].clone();
            *p += 1;
            let y = term(t, p, v);
            x = if op == "+" { x + y } else { x - y };
        }
        x
    }
    fn term(t: &[String], p: &mut usize, v: &HashMap<&str, f64>) -> f64 {
        let mut x = atom(t, p, v);
        while *p < t.len() && (t[*p] == "*" || t[*p] == "/" || t[*p] == "%") {
            let op = t[*p].clone();
            *p += 1;
            let y = atom(t, p, v);
            x = match op.as_str() {
                "*" => x * y,
                "/" => x / y,
                _ => x.rem_euclid(y),
            };
        }
        x
    }
    fn atom(t: &[String], p: &mut usize, v: &HashMap<&str, f64>) -> f64 {
        let tok = t[*p].clone();
        *p += 1;
        if tok == "(" {
            let x = expr(t, p, v);
            *p += 1;
            x
        } else if tok == "floor" {
            *p += 1;
            let x = expr(t, p, v);
            *p += 1;
            x.floor()
        } else if let Ok(n) = tok.parse::<f64>() {
            n
        } else {
            *v.get(tok.as_str()).unwrap_or_else(|| panic!("unknown variable {tok}"))
        }
    }
    let mut p = 0;
    expr(&toks, &mut p, vars)
}

struct Entry {
    name: String,
    m: u32,
    k: u32,
    bits: u32,
    f: HashMap<String, String>,
}

fn entries() -> Vec<Entry> {
    let text = include_str!("data/mfma-layouts.txt");
    let mut out = Vec::new();
    for block in text.split("=================== ").skip(1) {
        let name = block.lines().next().unwrap().trim().to_string();
        let mut f = HashMap::new();
        let mut in_reverse = false;
        let (mut m, mut k, mut bits) = (0, 0, 0);
        for l in block.lines() {
            let t = l.trim();
            if let Some(v) = t.strip_prefix("M: ") {
                m = v.parse().unwrap();
            }
            if let Some(v) = t.strip_prefix("K: ") {
                k = v.parse().unwrap();
            }
            if t.starts_with("Src0: ") {
                bits = if t.contains("FP8") || t.contains("BF8") {
                    8
                } else if t.contains("FP32") {
                    32
                } else {
                    16
                };
            }
            if t.starts_with("Register to matrix element mapping") {
                in_reverse = true;
                continue;
            }
            if in_reverse {
                if let Some((key, val)) = t.split_once(": ") {
                    f.insert(key.to_string(), val.to_string());
                }
            }
        }
        out.push(Entry { name, m, k, bits, f });
    }
    out
}

fn check_entry(e: &Entry, sh: &Shape, what: &str) {
    let regs_ab = sh.ab_regs();
    for lane in 0..64u32 {
        for reg in 0..regs_ab {
            for pos in 0..32 / e.bits {
                let bitoff = pos * e.bits;
                let vars: HashMap<&str, f64> =
                    [("lane", lane as f64), ("GPR_num", reg as f64), ("GPR_bits", bitoff as f64)].into();
                let i = eval(&e.f["A i"], &vars) as u32;
                let k = eval(&e.f["A k"], &vars) as u32;
                assert_eq!(
                    sh.ab_pos(i, k, 0, e.bits),
                    (lane, reg, bitoff),
                    "{what}: A[{i}][{k}] (calculator: lane {lane} reg {reg} bits {bitoff})"
                );
                let j = eval(&e.f["B j"], &vars) as u32;
                let kb = eval(&e.f["B k"], &vars) as u32;
                assert_eq!(sh.ab_pos(j, kb, 0, e.bits), (lane, reg, bitoff), "{what}: B[{kb}][{j}]");
            }
        }
        for reg in 0..sh.cd_regs() {
            let vars: HashMap<&str, f64> = [("lane", lane as f64), ("GPR_num", reg as f64), ("GPR_bits", 0.0)].into();
            let i = eval(&e.f["C or D i"], &vars) as u32;
            let j = eval(&e.f["C or D j"], &vars) as u32;
            assert_eq!(sh.cd_pos(i, j, 0), (lane, reg), "{what}: D[{i}][{j}]");
        }
    }
}

#[test]
fn every_calculator_shape_on_both_archs() {
    let es = entries();
    assert_eq!(es.len(), 8, "expected the 8 calculator entries");
    let mut checked = HashSet::new();
    for arch in Arch::ALL {
        for def in TABLE.iter().filter(|d| d.name.starts_with("v_mfma_") && d.opcode(arch).is_some()) {
            let Some(sh) = Shape::of(def.op) else { continue };
            let matching: Vec<&Entry> = es
                .iter()
                .filter(|e| {
                    e.m == sh.m && e.k == sh.k && e.bits == sh.a.bits() && sh.blocks == 1 && sh.a.bits() == sh.b.bits()
                })
                .collect();
            if let Some(e) = matching.first() {
                check_entry(e, &sh, &format!("{arch} {} vs {}", def.name, e.name));
                checked.insert((arch, def.name));
            }
        }
    }
    // bf16/f16 32x32x8 and 16x16x16 on both archs, the four fp8/bf8 mixes in two shapes on
    // both, and gfx950's four double-rate shapes.
    assert!(checked.len() >= 2 * (4 + 8) + 4, "only {} MFMAs matched calculator entries: {checked:?}", checked.len());
}

#[test]
fn every_modelled_shape_is_a_bijection() {
    for def in TABLE.iter().filter(|d| d.name.starts_with("v_mfma_")) {
        let Some(sh) = Shape::of(def.op) else { continue };
        let mut seen = HashSet::new();
        for b in 0..sh.blocks {
            for i in 0..sh.m {
                for k in 0..sh.k {
                    let p = sh.ab_pos(i, k, b, sh.a.bits());
                    assert!(p.0 < 64 && p.1 < sh.ab_regs(), "{}: A out of range {p:?}", def.name);
                    assert!(seen.insert(p), "{}: two A elements at {p:?}", def.name);
                }
            }
        }
        assert_eq!(
            seen.len() as u32,
            64 * sh.ab_regs() * 32 / sh.a.bits(),
            "{}: A does not fill its registers",
            def.name
        );
        let mut seen = HashSet::new();
        for b in 0..sh.blocks {
            for i in 0..sh.m {
                for j in 0..sh.n {
                    let p = sh.cd_pos(i, j, b);
                    assert!(p.0 < 64 && p.1 < sh.cd_regs(), "{}: D out of range {p:?}", def.name);
                    assert!(seen.insert(p), "{}: two D elements at {p:?}", def.name);
                }
            }
        }
    }
}
