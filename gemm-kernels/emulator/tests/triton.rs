//! Foreign code: the Triton 3.9 GEMM code objects of `tests/data/triton/` (made by its
//! `gen.py`, described by its `manifest.json`) run in the emulator on gfx942 and gfx950,
//! under every scheduling mode, and give the reference GEMM's result bit for bit, with the
//! race and hazard checkers silent. Among them are 256x256 tiles that spill to scratch
//! and gfx950 kernels that use `v_bitop3_b32` and `v_mfma_f32_32x32x64_f8f6f4`.
//!
//! Inputs are multiples of 1/4 in [-4, 4] that the input type holds exactly, so every
//! product and every partial sum is exact in f32 whatever the order of accumulation: the
//! kernel's f32 accumulator then equals the f64 reference exactly, and both round it once
//! to C's type (round to nearest even). Masked kernels get M, N and K that are not
//! multiples of the tile; every kernel gets M and N with partial edge tiles. C is
//! surrounded by sentinel values (ldc > N, rows past M) that must survive.
//!
//! Python is not needed: the code objects and the manifest are test data.

use gemm_core::reference;
use gemm_core::{bf16, f16, Element, Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz, GemmProblem};
use gemm_emu::{Arch, Device, LaunchOptions, Mode, Schedule};
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/triton")
}

fn manifest_in(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("manifest.json"))
        .unwrap_or_else(|e| panic!("{}/manifest.json: {e}", dir.display()));
    serde_json::from_str(&text).expect("manifest.json parses")
}

/// One manifest entry, the fields the launcher needs.
#[derive(Debug)]
struct Kernel {
    /// The folder of the code object: tests/data/triton, or its `peers/` (the sweep's winners).
    dir: PathBuf,
    /// The sweep's `tn` layout: B given as W, N x K row-major (`stride_bn` at run time).
    tn: bool,
    file: String,
    name: String,
    arch: String,
    dtype: String,
    out_dtype: String,
    bm: usize,
    bn: usize,
    bk: usize,
    warps: u32,
    masked: bool,
    dynamic_lds: u32,
    private_bytes: usize,
    kernarg_bytes: usize,
    /// (name, offset, size) of each runtime kernel argument, in Triton's order.
    args: Vec<(String, usize, usize)>,
}

fn kernels() -> Vec<Kernel> {
    kernels_in(&data_dir())
}

fn kernels_in(dir: &Path) -> Vec<Kernel> {
    let m = manifest_in(dir);
    let u = |v: &Value, k: &str| v[k].as_u64().unwrap_or_else(|| panic!("manifest: `{k}` missing")) as usize;
    let s = |v: &Value, k: &str| v[k].as_str().unwrap_or_else(|| panic!("manifest: `{k}` missing")).to_string();
    m["kernels"]
        .as_array()
        .expect("manifest: kernels")
        .iter()
        .map(|k| Kernel {
            dir: dir.to_path_buf(),
            tn: k["layout_kind"].as_str() == Some("tn"),
            file: s(k, "file"),
            name: s(k, "kernel"),
            arch: s(k, "arch"),
            dtype: s(k, "dtype"),
            out_dtype: s(k, "out_dtype"),
            bm: u(k, "block_m"),
            bn: u(k, "block_n"),
            bk: u(k, "block_k"),
            warps: u(k, "num_warps") as u32,
            masked: k["masked"].as_bool().expect("manifest: masked"),
            dynamic_lds: u(k, "dynamic_lds") as u32,
            private_bytes: u(k, "private_segment_fixed_size"),
            kernarg_bytes: u(k, "kernarg_bytes"),
            args: k["args"]
                .as_array()
                .expect("manifest: args")
                .iter()
                .map(|a| (s(a, "name"), u(a, "offset"), u(a, "size")))
                .collect(),
        })
        .collect()
}

/// Multiples of 1/4 in [-4, 4] that `T` holds exactly.
fn exact_values<T: Element>() -> Vec<f32> {
    (-16..=16).map(|q| q as f32 / 4.0).filter(|&v| T::from_f32(v).to_f32() == v).collect()
}

fn fill<T: Element>(len: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<T> {
    let vals = exact_values::<T>();
    assert!(vals.len() >= 16, "too few exact values for {:?}", T::DTYPE);
    (0..len).map(|_| T::from_f32(vals[rng.gen_range(0..vals.len())])).collect()
}

fn round16(x: usize) -> usize {
    x.div_ceil(16) * 16
}

/// The problem a kernel runs: partial edge tiles in M and N; for masked kernels a K that
/// is not a multiple of BLOCK_K. Large tiles get one or two tiles' worth of work, small
/// ones a few tiles so the GROUP_M ordering is exercised.
fn problem_for(k: &Kernel) -> (usize, usize, usize) {
    let big = k.bm * k.bn >= 256 * 128;
    let (m, n) = if big { (k.bm - 19, k.bn - 13) } else { (2 * k.bm + 9, k.bn + 17) };
    let iters = if big { 2 } else { 3 };
    let kk = if k.masked { iters * k.bk + 5 } else { (iters + 1) * k.bk };
    (m, n, kk)
}

fn arch_of(name: &str) -> Arch {
    match name {
        "gfx942" => Arch::Gfx942,
        "gfx950" => Arch::Gfx950,
        a => panic!("manifest: unknown arch {a}"),
    }
}

/// Runs one kernel on its problem under every mode; returns the number of launches.
fn run_kernel<A: Element, C: Element>(k: &Kernel) {
    run_kernel_modes::<A, C>(k, &Mode::ALL)
}

/// [`run_kernel`] under the given scheduling modes.
fn run_kernel_modes<A: Element, C: Element>(k: &Kernel, modes: &[Mode]) {
    let arch = arch_of(&k.arch);
    let co = std::fs::read(k.dir.join(&k.file)).unwrap_or_else(|e| panic!("{}: {e}", k.file));
    let (m, n, kk) = problem_for(k);
    // Leading dimensions: multiples of 16 elements (the manifest's divisibility hints),
    // with room to spare so that writes past N show up in the sentinels.
    // A `tn` kernel reads B as W (N x K row-major, leading dimension ldb >= K).
    let (lda, ldb, ldc) = (round16(kk) + 16, if k.tn { round16(kk) + 16 } else { round16(n) + 16 }, round16(n) + 16);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x7121_7000 ^ (k.bm * 1000 + k.bn + kk) as u64);
    let a: Vec<A> = fill(m * lda, &mut rng);
    let b: Vec<A> = fill(if k.tn { n } else { kk } * ldb, &mut rng);
    let c_rows = m + 3;
    let sentinel = C::from_f32(-1234.5);
    let c0 = vec![sentinel; c_rows * ldc];
    let p = GemmProblem::new(m, n, kk).with_elements::<A, A, C>();
    let p = if k.tn { p.with_transposes(gemm_core::Transpose::No, gemm_core::Transpose::Yes) } else { p };
    let p = p.with_leading_dims(lda, ldb, ldc);
    let mut want = c0.clone();
    reference::gemm(&p, &a, &b, &mut want).expect("reference GEMM");

    // Kernel arguments in Triton's signature order, at the manifest's offsets (which must
    // be the code object's own).
    let dev = Device::new(arch);
    let bytes = |v: &[A]| bytemuck::cast_slice::<A, u8>(v).to_vec();
    let (da, db) =
        (dev.alloc((a.len() * size_of::<A>()) as u64).unwrap(), dev.alloc((b.len() * size_of::<A>()) as u64).unwrap());
    dev.copy_in(da, &bytes(&a)).unwrap();
    dev.copy_in(db, &bytes(&b)).unwrap();
    let dc = dev.alloc((c0.len() * size_of::<C>()) as u64).unwrap();
    let mut ka = vec![0u8; k.kernarg_bytes];
    for (name, off, size) in &k.args {
        let v: u64 = match name.as_str() {
            "a_ptr" => da,
            "b_ptr" => db,
            "c_ptr" => dc,
            "M" => m as u64,
            "N" => n as u64,
            "K" => kk as u64,
            "stride_am" => lda as u64,
            "stride_bk" => ldb as u64,
            "stride_bn" if k.tn => ldb as u64,
            "stride_cm" => ldc as u64,
            // Triton's global and profile scratch pointers: unused (sizes 0).
            "global_scratch" | "profile_scratch" => 0,
            other => panic!("{}: unexpected kernel argument {other}", k.file),
        };
        ka[*off..*off + *size].copy_from_slice(&v.to_le_bytes()[..*size]);
    }
    let meta = gemm_codeobject::CodeObject::parse(&co).expect("code object parses");
    let kmeta = meta.kernel(&k.name).and_then(|x| x.metadata.as_ref().map(|m| m.args.clone())).expect("metadata args");
    for (name, off, size) in &k.args {
        assert!(
            kmeta.iter().any(|a| a.offset as usize == *off && a.size as usize == *size),
            "{}: manifest argument {name} at {off}+{size} is not in the code object's metadata",
            k.file
        );
    }
    let grid = [(m.div_ceil(k.bm) * n.div_ceil(k.bn)) as u32, 1, 1];
    let block = [k.warps * 64, 1, 1];
    for &mode in modes {
        dev.copy_in(dc, bytemuck::cast_slice(&c0)).unwrap();
        let opts = LaunchOptions {
            schedule: Schedule { mode, seed: 0x5EED },
            dynamic_lds: k.dynamic_lds,
            ..Default::default()
        };
        let rep = dev
            .launch_with(&co, &k.name, grid, block, &ka, &opts)
            .unwrap_or_else(|e| panic!("{} ({m}x{n}x{kk}, {}): launch failed: {e}", k.file, mode.name()));
        assert!(rep.reports.is_empty(), "{} ({}): checker findings:\n{rep}", k.file, mode.name());
        let mut got = c0.clone();
        dev.copy_out(dc, bytemuck::cast_slice_mut(&mut got)).unwrap();
        let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
        assert!(
            bad.is_empty(),
            "{} ({m}x{n}x{kk}, {}): {} of {} C entries differ from the reference; first at row {} col {}: got {:?}, want {:?}",
            k.file,
            mode.name(),
            bad.len(),
            got.len(),
            bad[0] / ldc,
            bad[0] % ldc,
            got[bad[0]],
            want[bad[0]]
        );
    }
}

fn run_group(arch: &str, dtype: &str) {
    let ks: Vec<Kernel> = kernels().into_iter().filter(|k| k.arch == arch && k.dtype == dtype).collect();
    assert!(!ks.is_empty(), "manifest has no {arch} {dtype} kernels");
    for k in &ks {
        let t = std::time::Instant::now();
        match (arch, dtype, k.out_dtype.as_str()) {
            (_, "bf16", "bf16") => run_kernel::<bf16, bf16>(k),
            (_, "f16", "f16") => run_kernel::<f16, f16>(k),
            ("gfx942", "e4m3", "f16") => run_kernel::<Fp8E4M3Fnuz, f16>(k),
            ("gfx942", "e5m2", "f16") => run_kernel::<Fp8E5M2Fnuz, f16>(k),
            ("gfx950", "e4m3", "f16") => run_kernel::<Fp8E4M3, f16>(k),
            ("gfx950", "e5m2", "f16") => run_kernel::<Fp8E5M2, f16>(k),
            other => panic!("{}: no element types for {other:?}", k.file),
        }
        eprintln!("{}: 4 modes in {:.1} s", k.file, t.elapsed().as_secs_f64());
    }
}

#[test]
fn the_set_covers_both_archs_every_dtype_large_tiles_and_spills() {
    let ks = kernels();
    for arch in ["gfx942", "gfx950"] {
        for dtype in ["bf16", "f16", "e4m3", "e5m2"] {
            assert!(ks.iter().any(|k| k.arch == arch && k.dtype == dtype), "no {arch} {dtype} kernel");
        }
        let mine: Vec<&Kernel> = ks.iter().filter(|k| k.arch == arch).collect();
        assert!(mine.iter().any(|k| k.masked) && mine.iter().any(|k| !k.masked));
        assert!(mine.iter().any(|k| k.warps == 4) && mine.iter().any(|k| k.warps == 8));
        assert!(mine.iter().any(|k| k.bm == 64 && k.bn == 64) && mine.iter().any(|k| k.bm == 256 && k.bn == 256));
        // Some 256x256 kernels spill: their descriptors ask for a private segment, the
        // same size as the v5 metadata's `.private_segment_fixed_size` and the manifest's,
        // with COMPUTE_PGM_RSRC2.ENABLE_PRIVATE_SEGMENT set.
        let spilling = mine
            .iter()
            .filter(|k| {
                let co = std::fs::read(data_dir().join(&k.file)).unwrap();
                let co = gemm_codeobject::CodeObject::parse(&co).unwrap();
                let kern = co.kernel(&k.name).unwrap();
                let kd = &kern.descriptor;
                let meta = kern.metadata.as_ref().expect("v5 metadata");
                assert_eq!(kd.private_segment_fixed_size, meta.private_segment_fixed_size, "{}", k.file);
                assert_eq!(kd.private_segment_fixed_size as usize, k.private_bytes, "{}: manifest", k.file);
                assert_eq!(kd.system_sgprs().private_segment, kd.private_segment_fixed_size > 0, "{}", k.file);
                kd.private_segment_fixed_size > 0
            })
            .count();
        assert!(spilling >= 2, "{arch}: only {spilling} kernels use scratch");
    }
}

#[test]
fn gfx942_bf16() {
    run_group("gfx942", "bf16");
}
#[test]
fn gfx942_f16() {
    run_group("gfx942", "f16");
}
#[test]
fn gfx942_fp8_e4m3_fnuz() {
    run_group("gfx942", "e4m3");
}
#[test]
fn gfx942_fp8_e5m2_fnuz() {
    run_group("gfx942", "e5m2");
}
#[test]
fn gfx950_bf16() {
    run_group("gfx950", "bf16");
}
#[test]
fn gfx950_f16() {
    run_group("gfx950", "f16");
}
#[test]
fn gfx950_fp8_e4m3() {
    run_group("gfx950", "e4m3");
}
#[test]
fn gfx950_fp8_e5m2() {
    run_group("gfx950", "e5m2");
}

/// The Triton sweep's winners kept for `gemm peers` (`tests/data/triton/peers`, both layouts,
/// C bf16) compute the reference GEMM bit for bit, the `tn` ones reading B as W (N x K), with
/// the checkers silent (one scheduling mode: the layouts' addressing is what is new here).
#[test]
fn peers_winners_match_the_reference() {
    let ks = kernels_in(&data_dir().join("peers"));
    assert!(ks.iter().any(|k| k.tn) && ks.iter().any(|k| !k.tn), "both layouts");
    let mut failed = Vec::new();
    for k in &ks {
        let t = std::time::Instant::now();
        let modes = [Mode::ALL[0]];
        let r = std::panic::catch_unwind(|| match (k.arch.as_str(), k.dtype.as_str(), k.out_dtype.as_str()) {
            (_, "bf16", "bf16") => run_kernel_modes::<bf16, bf16>(k, &modes),
            ("gfx942", "e4m3", "bf16") => run_kernel_modes::<Fp8E4M3Fnuz, bf16>(k, &modes),
            ("gfx950", "e4m3", "bf16") => run_kernel_modes::<Fp8E4M3, bf16>(k, &modes),
            other => panic!("{}: no element types for {other:?}", k.file),
        });
        eprintln!("{}: {} {:.1} s", k.file, if r.is_ok() { "ok" } else { "FAILED" }, t.elapsed().as_secs_f64());
        if r.is_err() {
            failed.push(k.file.clone());
        }
    }
    assert!(failed.is_empty(), "{} of {} differ: {failed:?}", failed.len(), ks.len());
}
