//! `gemm peers` (issue 24): the foreign kernels of each cell are the right ones, the kept
//! Triton winners load, and the command runs at a small size and prints a well-formed cell whose
//! ratio is ours over the best foreign prediction. No test asserts a predicted TFLOP/s.

use gemm_core::Arch;
use gemm_emu::model_eval::{load_triton, triton_dir};
use gemm_lab::peers::{peers_of, CellKey, Peer, Shape};
use std::process::Command;

fn gemm(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gemm")).args(args).env_remove("GEMM_DEVICES").output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// Every winner named in `peers/winners.txt` is in the manifest (and nothing else), with its
/// layout and options; each (arch, dtype, layout) has Triton peers, the ping-pong joins
/// only gfx950 fp8 Linear cells of a size it was built for, and HipKittens only gfx950 Linear
/// cells of a size built (its bf16 128 tile at 1024^3 and 2048^3, the 256 tile above).
#[test]
fn peers_of_each_cell() {
    let dir = triton_dir().join("peers");
    let triton = load_triton(&dir).unwrap();
    let names: Vec<String> = std::fs::read_to_string(dir.join("winners.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split_whitespace().next().unwrap().to_string() + ".hsaco")
        .collect();
    let mut files: Vec<String> = triton.iter().map(|t| t.file.clone()).collect();
    let mut sorted = names.clone();
    files.sort();
    sorted.sort();
    assert_eq!(files, sorted, "manifest = winners.txt");
    for t in &triton {
        assert!(matches!(t.layout.as_deref(), Some("nn" | "tn")), "{}", t.file);
        assert!(t.matrix_instr_nonkdim.is_some() && t.kpack.is_some() && t.waves_per_eu.is_some(), "{}", t.file);
        assert!(dir.join(&t.file).is_file(), "{}", t.file);
    }
    let cal = gemm_emu::calibration::load_dir(&gemm_emu::calibration::default_dir()).unwrap();
    let cube = |s: usize| Shape { label: format!("{s}^3"), m: s, n: s, k: s };
    for arch in Arch::ALL {
        for dtype in ["bf16", "fp8"] {
            for linear in [true, false] {
                for (shape, built) in [(cube(4096), true), (cube(3072), false), (cube(1024), true)] {
                    let s = shape.m;
                    let key = CellKey { arch, dtype: dtype.into(), linear, shape };
                    let peers = peers_of(&key, &triton, &cal);
                    assert!(matches!(peers[0], Peer::Ours));
                    let tri: Vec<&str> = peers
                        .iter()
                        .filter_map(|p| match p {
                            Peer::Triton(t) => Some(t.file.as_str()),
                            _ => None,
                        })
                        .collect();
                    assert!(!tri.is_empty(), "{arch} {dtype} {linear}: no Triton peer");
                    let tdt = if dtype == "fp8" { "e4m3" } else { dtype };
                    let prefix = format!("triton_{}_{tdt}_{}_", arch.name(), if linear { "tn" } else { "nn" });
                    assert!(tri.iter().all(|f| f.starts_with(&prefix)), "{prefix}: {tri:?}");
                    let with_pp = peers.iter().any(|p| matches!(p, Peer::PingPong));
                    assert_eq!(
                        with_pp,
                        arch == Arch::Gfx950 && dtype == "fp8" && linear && built,
                        "{arch} {dtype} {linear} {built}"
                    );
                    let hk: Vec<&str> = peers
                        .iter()
                        .filter_map(|p| match p {
                            Peer::HipKittens(n) => Some(n.as_str()),
                            _ => None,
                        })
                        .collect();
                    let want = match (arch == Arch::Gfx950 && linear && built, dtype, s) {
                        (false, _, _) => vec![],
                        (true, "bf16", 1024) => vec!["hk_bf16_128"],
                        (true, "bf16", _) => vec!["hk_bf16_256"],
                        (true, _, _) => vec!["hk_fp8_4wave"],
                    };
                    assert_eq!(hk, want, "{arch} {dtype} {linear} {s}");
                }
            }
        }
    }
}

/// The command at 256x256x512 (the ping-pong's test size) on gfx950 fp8 Linear: ours, the best
/// Triton winner and the ping-pong all predicted (HipKittens has no code object at this size:
/// n/a); ratio = ours / max(foreign); the ceiling is the model's fp8 ceiling; `--out` holds the
/// same table.
#[test]
fn peers_prints_a_cell_with_every_peer() {
    let out = std::env::temp_dir().join(format!("gemm-peers-test-{}.txt", std::process::id()));
    let (ok, stdout, stderr) = gemm(&[
        "peers",
        "--shapes",
        "256x256x512",
        "--archs",
        "gfx950",
        "--dtypes",
        "fp8",
        "--layouts",
        "linear",
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let ceiling = Arch::Gfx950.mfma_ceiling_tflops(gemm_core::DType::Fp8E4M3, false);
    assert!(
        stdout.contains(&format!(
            "== gfx950 fp8 linear (Y = X W^T, W row-major N x K; C bf16; MFMA ceiling {ceiling:.0} TFLOP/s) =="
        )),
        "{stdout}"
    );
    let row = stdout.lines().find(|l| l.starts_with("256x256x512")).unwrap_or_else(|| panic!("no row: {stdout}"));
    let f: Vec<&str> = row.split_whitespace().collect();
    let num = |i: usize| f[i].parse::<f64>().unwrap_or_else(|_| panic!("column {i} of {row}"));
    let (ours, triton, pp, ratio) = (num(1), num(2), num(3), num(4));
    assert!(ours > 0.0 && triton > 0.0 && pp > 0.0, "{row}");
    assert!((ratio - ours / triton.max(pp)).abs() < 0.006, "{row}");
    assert!(row.contains("triton_gfx950_e4m3_tn_"), "{row}");
    // No HipKittens code object and no published figure at this size.
    assert_eq!((f[6], f[7], f[8]), ("n/a", "-", "-"), "{row}");
    let file = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert!(stdout.starts_with(&file), "the file is the printed table");
    assert!(stderr.contains("[1/") && stderr.contains("blog ping-pong"), "progress on stderr: {stderr}");
}
