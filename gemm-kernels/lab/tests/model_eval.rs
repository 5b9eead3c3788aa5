//! `gemm calibrate` and `gemm compare` (the timing model's evaluation commands): the
//! comparison's row set is complete, and both commands run and print well-formed output
//! on a small subset. No test asserts a predicted TFLOP/s.

use gemm_core::{Arch, Transpose};
use gemm_emu::model_eval::{load_triton, triton_dir};
use gemm_lab::model_eval::{compare_rows, family_label, Source};
use std::process::Command;

fn gemm(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gemm")).args(args).env_remove("GEMM_DEVICES").output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Every catalogue kernel belongs to exactly one family row, which holds one kernel per
/// arch the family exists on (its nn member where the family has one); every Triton
/// kernel whose input dtype the catalogue has (fp8 e4m3/e5m2 by the catalogue's fp8
/// families of either flavour) is a row with both archs; the others only with `--all-triton`.
#[test]
fn compare_rows_are_complete() {
    let triton = load_triton(&triton_dir()).unwrap();
    for all in [false, true] {
        let rows = compare_rows(&triton, all);
        let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        let mut dedup = labels.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), labels.len(), "labels are unique");
        for e in gemm_kernels::catalogue() {
            // Fused-epilogue, grouped and split-K kernels are not plain GEMMs: no row.
            let Some(label) = family_label(e) else {
                assert!(!e.is_plain(), "{}", e.name);
                continue;
            };
            let row = rows.iter().find(|r| r.label == label).unwrap_or_else(|| panic!("{}: no row", e.name));
            let Source::Catalogue(members) = &row.source else { panic!("{} is not a catalogue row", row.label) };
            let m = members.iter().find(|x| x.arch == e.arch).expect("a member for the kernel's arch");
            let family_has_nn = gemm_kernels::catalogue().iter().any(|x| {
                family_label(x).as_deref() == Some(row.label.as_str())
                    && x.arch == e.arch
                    && x.trans_a == Transpose::No
                    && x.trans_b == Transpose::No
            });
            assert!(!family_has_nn || (m.trans_a == Transpose::No && m.trans_b == Transpose::No), "{}", m.name);
            let mut archs = row.archs();
            archs.dedup();
            assert_eq!(archs.len(), members.len(), "one member per arch");
        }
        let ours: Vec<String> =
            gemm_kernels::catalogue().iter().map(|e| gemm_lab::model_eval::triton_dtype(e.a_type)).collect();
        let mut triton_rows = 0;
        for t in &triton {
            let row = rows.iter().find(|r| r.label == t.label());
            assert_eq!(row.is_some(), all || ours.contains(&t.dtype), "{}", t.file);
            if let Some(r) = row {
                let mut archs = r.archs();
                archs.sort();
                assert_eq!(archs, Arch::ALL.to_vec(), "{}: both archs", r.label);
            }
        }
        for r in &rows {
            if matches!(r.source, Source::Triton(_)) {
                triton_rows += 1;
            }
        }
        assert_eq!(triton_rows * 2, triton.iter().filter(|t| all || ours.contains(&t.dtype)).count());
    }
}

/// `gemm compare` on one small size: one line per selected row with one cell per arch,
/// each a figure, `refused` (with its reason listed) or `n/a`.
#[test]
fn compare_prints_a_cell_per_row_and_arch() {
    let (ok, out, err) = gemm(&["compare", "--sizes", "256", "--only", "f16->f16", "--jobs", "2"]);
    assert!(ok, "{out}\n{err}");
    // The cells run side by side; the table does not depend on how many threads ran them.
    let (ok1, out1, err1) = gemm(&["compare", "--sizes", "256", "--only", "f16->f16", "--jobs", "1"]);
    assert!(ok1, "{out1}\n{err1}");
    // Everything but the wall times (the run's, and each cell's trailing "(0.1s)").
    let table = |o: &str| {
        o.lines()
            .filter(|l| !l.starts_with("wall time:"))
            .map(|l| match l.rfind(" (") {
                Some(i) if l.ends_with("s)") => &l[..i],
                _ => l,
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(table(&out), table(&out1));
    let head = out.lines().find(|l| l.starts_with("kernel family")).expect("header");
    assert!(head.contains("gfx942 256") && head.contains("gfx950 256"), "{head}");
    // (The footer's notes also begin with "ours ": rows name their dtype.)
    let rows: Vec<&str> =
        out.lines().filter(|l| l.starts_with("ours f16->f16 ") || l.starts_with("triton f16->f16 ")).collect();
    // ours: one row per f16->f16 catalogue family and alignment; triton: the four f16
    // configurations of the set.
    let ours =
        gemm_lab::model_eval::compare_rows(&[], false).iter().filter(|r| r.label.starts_with("ours f16->f16 ")).count();
    assert!(ours >= 2, "{out}");
    assert_eq!(rows.len(), ours + 4, "{out}");
    for r in &rows {
        let cells: Vec<&str> = r.split_whitespace().rev().take(2).collect();
        for c in cells {
            assert!(c == "refused" || c == "n/a" || c.parse::<f64>().is_ok_and(|v| v > 0.0), "{r}");
        }
    }
    if out.contains("refused") {
        assert!(out.contains("refused:\n"), "reasons listed:\n{out}");
    }
    assert!(out.contains("wall time:"));
}

/// `gemm calibrate` on one kernel writes the table and the plot.
#[test]
fn calibrate_prints_the_table_and_writes_the_plot() {
    let plot = std::env::temp_dir().join(format!("gemm-calibrate-{}.svg", std::process::id()));
    let (ok, out, err) = gemm(&["calibrate", "--only", "v4_global_prefetch", "--plot", plot.to_str().unwrap()]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("v4_global_prefetch") && out.contains("MI355X") && out.contains("sources:"), "{out}");
    assert!(out.contains("order of published results:") && out.contains("within ±25%:"), "{out}");
    let svg = std::fs::read_to_string(&plot).unwrap();
    let _ = std::fs::remove_file(&plot);
    assert!(svg.starts_with("<svg") && svg.contains(r#"class="point""#));
    let (ok, _, err) = gemm(&["calibrate", "--only", "no-such-kernel", "--plot", plot.to_str().unwrap()]);
    assert!(!ok && err.contains("no calibration point selected"), "{err}");
}

/// `gemm calibrate --jobs N` predicts the points on N threads and prints the same table (rows in
/// the set's order) as one thread does.
#[test]
fn calibrate_prints_the_same_table_on_any_thread_count() {
    let plot = std::env::temp_dir().join(format!("gemm-calibrate-jobs-{}.svg", std::process::id()));
    let table = |jobs: &str| {
        let (ok, out, err) =
            gemm(&["calibrate", "--only", "_prefetch", "--jobs", jobs, "--plot", plot.to_str().unwrap()]);
        assert!(ok, "{out}\n{err}");
        assert!(err.contains(&format!("on {jobs} thread(s)")), "{err}");
        // Everything but the wall-clock figures (the rows' last column, right-aligned: its
        // padding goes too, so that 3.6s and 10.2s compare equal; the total).
        out.lines()
            .filter(|l| !l.starts_with("wall time") && !l.starts_with("plot:"))
            .map(|l| match l.rsplit_once(' ') {
                Some((head, wall)) if wall.ends_with('s') && wall.trim_end_matches('s').parse::<f64>().is_ok() => {
                    head.trim_end()
                }
                _ => l,
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let two = table("2");
    assert!(two.contains("v4_global_prefetch") && two.contains("v5_local_prefetch"), "{two}");
    assert_eq!(two, table("1"));
    let _ = std::fs::remove_file(&plot);
}
