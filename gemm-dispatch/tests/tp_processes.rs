//! Tensor-parallel groups with real processes: each test starts 1, 2 or 4 copies of this test
//! binary (the child runs the same test, told its role by environment variables), each with one
//! emulated GPU of `libgemm_emu_hip.so` and its RCCL's TCP transport (`nccl=tcp`). Rank 0 makes
//! the unique id and hands it over through a file, as a launcher would; nothing else crosses the
//! process boundary except through the communicator.
//!
//! The ranks run every plan of [`TpGroup`] on odd shapes, overlap on and off, and write their
//! outputs to files; a reference process computes, on one emulated GPU, every rank's shard GEMM
//! whole (the single-process reference) and reduces in rank order in f32 exactly as the
//! emulated RCCL does, and the parent compares bit for bit. Failures: a rank that dies, a rank
//! that never calls (the timeout), ranks that disagree, bad ids and ranks.
//!
//! Every child runs under a deadline and is killed past it: a failure never hangs CI.

use gemm_core::{bf16, DType, Element, GemmProblem, Transpose};
use gemm_dispatch::{Activation, Context, Error, Reduce, TpError, TpGroup, TpOptions, TpStatus};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROLE: &str = "GEMM_TP_TEST_ROLE";
const DIR: &str = "GEMM_TP_TEST_DIR";
const RANK: &str = "GEMM_TP_TEST_RANK";
const NRANKS: &str = "GEMM_TP_TEST_NRANKS";

/// Every child of one test is killed past this.
const CHILD_DEADLINE: Duration = Duration::from_secs(120);

fn env_usize(k: &str) -> usize {
    std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{k} unset"))
}

/// Starts `roles` (one process each: `(role, rank)`) running `test`, waits for all under the
/// deadline, and returns each one's (success, stderr).
fn spawn(test: &str, dir: &Path, nranks: usize, roles: &[(&str, usize)], timeout_ms: u64) -> Vec<(bool, String)> {
    let lib = gemm_emu_hip::library_path().expect("libgemm_emu_hip.so next to the test binary");
    let exe = std::env::current_exe().unwrap();
    let mut children: Vec<_> = roles
        .iter()
        .map(|&(role, rank)| {
            Command::new(&exe)
                .args([test, "--exact", "--nocapture", "--test-threads=1"])
                .env(ROLE, role)
                .env(DIR, dir)
                .env(RANK, rank.to_string())
                .env(NRANKS, nranks.to_string())
                .env("GEMM_HIP_LIBRARY", &lib)
                .env("GEMM_RCCL_LIBRARY", &lib)
                .env(
                    "GEMM_EMU_HIP",
                    format!("devices=gfx942;nccl=tcp;collective_timeout_ms={timeout_ms};launch_threads=1"),
                )
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start a rank")
        })
        .collect();
    let deadline = Instant::now() + CHILD_DEADLINE;
    let mut done: Vec<Option<bool>> = vec![None; children.len()];
    while done.iter().any(Option::is_none) {
        for (c, d) in children.iter_mut().zip(done.iter_mut()) {
            if d.is_none() {
                if let Some(status) = c.try_wait().unwrap() {
                    *d = Some(status.success());
                }
            }
        }
        if Instant::now() > deadline {
            for (c, d) in children.iter_mut().zip(done.iter_mut()) {
                if d.is_none() {
                    let _ = c.kill();
                    *d = Some(false);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    children
        .into_iter()
        .zip(done)
        .map(|(c, ok)| {
            let out = c.wait_with_output().unwrap();
            (ok.unwrap_or(false), String::from_utf8_lossy(&out.stderr).into_owned())
        })
        .collect()
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gemm-tp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn assert_all_ok(results: &[(bool, String)]) {
    for (i, (ok, err)) in results.iter().enumerate() {
        assert!(ok, "process {i} failed:\n{err}");
    }
}

/// Rank 0 makes the id and publishes it (written then renamed: readers never see half of it);
/// the others wait for the file.
fn exchange_id(ctx: &Context, dir: &Path, rank: usize) -> Vec<u8> {
    let path = dir.join("unique_id");
    if rank == 0 {
        let id = ctx.tp_unique_id(0).unwrap();
        std::fs::write(dir.join("unique_id.tmp"), id).unwrap();
        std::fs::rename(dir.join("unique_id.tmp"), &path).unwrap();
        return id.to_vec();
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(b) = std::fs::read(&path) {
            return b;
        }
        assert!(Instant::now() < deadline, "no unique id from rank 0");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn hip_context() -> Context {
    Context::from_spec("hip").expect("the emulated HIP GPU")
}

/// The layer every rank and the reference compute: sizes and deterministic data.
struct Layer {
    m: usize,
    /// Column plan: output width, split over ranks.
    n: usize,
    /// Column plan: depth.
    k: usize,
    /// Row plan: output width.
    n_row: usize,
    /// Row plan: depth, split over ranks.
    k_row: usize,
}

const LAYER: Layer = Layer { m: 45, n: 29, k: 40, n_row: 24, k_row: 70 };

fn split(len: usize, parts: usize) -> Vec<std::ops::Range<usize>> {
    gemm_dispatch::api::parallel::split(len, parts)
}

fn values<T: Element>(len: usize, seed: u64) -> Vec<T> {
    gemm_core::reference::random_values(len, seed)
}

/// Column `cols` of a row-major `rows x width` matrix, tight.
fn columns<T: Copy>(full: &[T], rows: usize, width: usize, cols: std::ops::Range<usize>) -> Vec<T> {
    (0..rows).flat_map(|i| cols.clone().map(move |j| full[i * width + j])).collect()
}

/// The cases, in the order ranks run them and the reference computes them.
#[derive(Clone, Copy, Debug)]
enum Case {
    /// bf16 in, f32 out, W stored transposed; Y_shard only.
    Column,
    /// bf16 in, bf16 out; all-gathered.
    ColumnGather,
    /// bf16 in, f32 partials, f32 all-reduce.
    RowAllReduceF32,
    /// bf16 in, bf16 partials, bf16 all-reduce (the output dtype).
    RowAllReduceBf16,
    /// bf16 in, f32, reduce-scatter.
    RowReduceScatter,
    /// X (m x k) * W_up shard in bf16, * W_down shard, f32 all-reduce; no activation (the
    /// shards are 15 and 14 wide: no fused kernel; see
    /// `mlp_activations_run_fused_or_are_refused_on_every_rank`).
    Mlp,
}

const CASES: [Case; 6] = [
    Case::Column,
    Case::ColumnGather,
    Case::RowAllReduceF32,
    Case::RowAllReduceBf16,
    Case::RowReduceScatter,
    Case::Mlp,
];

fn bytes_of<T: bytemuck::Pod>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

/// One rank's outputs for `case` (the bytes the parent compares).
fn run_case(ctx: &Context, g: &TpGroup, case: Case) -> Vec<u8> {
    let gpu = ctx.gpu(0).unwrap();
    let s = gpu.create_stream().unwrap();
    let (r, n) = (g.rank(), g.nranks());
    let l = LAYER;
    match case {
        Case::Column | Case::ColumnGather => {
            let cols = split(l.n, n)[r].clone();
            let x = values::<bf16>(l.m * l.k, 1);
            // W is k x n, stored transposed (n x k): this rank's rows of the stored matrix.
            let wt = values::<bf16>(l.n * l.k, 2);
            let wt_shard: Vec<bf16> = wt[cols.start * l.k..cols.end * l.k].to_vec();
            let dx = gpu.upload(&x).unwrap();
            let dw = gpu.upload(&wt_shard).unwrap();
            if matches!(case, Case::Column) {
                let p = GemmProblem::new(l.m, cols.len(), l.k)
                    .with_transposes(Transpose::No, Transpose::Yes)
                    .with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
                let mut y = gpu.upload(&vec![f32::NAN; l.m * cols.len()]).unwrap();
                g.column(&s, &p, dx.as_slice(), dw.as_slice(), y.as_mut_slice(), None).unwrap();
                bytes_of(&y.to_vec().unwrap())
            } else {
                let p = GemmProblem::new(l.m, cols.len(), l.k)
                    .with_transposes(Transpose::No, Transpose::Yes)
                    .with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
                let mut y = gpu.upload(&vec![bf16::NAN; l.m * cols.len()]).unwrap();
                let mut all = gpu.upload(&vec![bf16::NAN; l.m * l.n]).unwrap();
                g.column(&s, &p, dx.as_slice(), dw.as_slice(), y.as_mut_slice(), Some(all.as_mut_slice())).unwrap();
                [bytes_of(&y.to_vec().unwrap()), bytes_of(&all.to_vec().unwrap())].concat()
            }
        }
        Case::RowAllReduceF32 | Case::RowAllReduceBf16 | Case::RowReduceScatter => {
            let ks = split(l.k_row, n)[r].clone();
            let x = values::<bf16>(l.m * l.k_row, 3);
            let w = values::<bf16>(l.k_row * l.n_row, 4);
            let x_shard = columns(&x, l.m, l.k_row, ks.clone());
            let w_shard: Vec<bf16> = w[ks.start * l.n_row..ks.end * l.n_row].to_vec();
            let dx = gpu.upload(&x_shard).unwrap();
            let dw = gpu.upload(&w_shard).unwrap();
            let p = GemmProblem::new(l.m, l.n_row, ks.len()).with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
            match case {
                Case::RowAllReduceF32 => {
                    let mut y = gpu.upload(&vec![f32::NAN; l.m * l.n_row]).unwrap();
                    g.row(&s, &p, dx.as_slice(), dw.as_slice(), y.as_mut_slice(), Reduce::AllReduce).unwrap();
                    bytes_of(&y.to_vec().unwrap())
                }
                Case::RowAllReduceBf16 => {
                    let p = p.with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
                    let mut y = gpu.upload(&vec![bf16::NAN; l.m * l.n_row]).unwrap();
                    g.row(&s, &p, dx.as_slice(), dw.as_slice(), y.as_mut_slice(), Reduce::AllReduce).unwrap();
                    bytes_of(&y.to_vec().unwrap())
                }
                _ => {
                    let rows = g.scatter_rows(l.m, r);
                    let mut y = gpu.upload(&vec![f32::NAN; rows.len().max(1) * l.n_row]).unwrap();
                    g.row(&s, &p, dx.as_slice(), dw.as_slice(), y.as_mut_slice(), Reduce::ReduceScatter).unwrap();
                    let mut out = y.to_vec().unwrap();
                    out.truncate(rows.len() * l.n_row);
                    bytes_of(&out)
                }
            }
        }
        Case::Mlp => {
            // Hidden h = k = 40, ffn f = 29 split over ranks.
            let fs = split(l.n, n)[r].clone();
            let x = values::<bf16>(l.m * l.k, 5);
            let w_up = values::<bf16>(l.k * l.n, 6);
            let w_down = values::<bf16>(l.n * l.k, 7);
            let up_shard = columns(&w_up, l.k, l.n, fs.clone());
            let down_shard: Vec<bf16> = w_down[fs.start * l.k..fs.end * l.k].to_vec();
            let (dx, du, dd) =
                (gpu.upload(&x).unwrap(), gpu.upload(&up_shard).unwrap(), gpu.upload(&down_shard).unwrap());
            let up = GemmProblem::new(l.m, fs.len(), l.k).with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
            let down = GemmProblem::new(l.m, l.k, fs.len()).with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
            let mut y = gpu.upload(&vec![f32::NAN; l.m * l.k]).unwrap();
            g.mlp(&s, &up, &down, dx.as_slice(), du.as_slice(), dd.as_slice(), y.as_mut_slice(), Activation::None)
                .unwrap();
            bytes_of(&y.to_vec().unwrap())
        }
    }
}

/// The emulated RCCL's reduction: f32 accumulation in rank order, one rounding to the type.
fn reduce<T: Element>(parts: &[Vec<T>]) -> Vec<T> {
    (0..parts[0].len())
        .map(|i| {
            let mut acc = f64::from(parts[0][i].to_f32());
            for p in &parts[1..] {
                acc = f64::from((acc + f64::from(p[i].to_f32())) as f32);
            }
            T::from_f32(acc as f32)
        })
        .collect()
}

/// The single-process reference of `case` for rank `r` of `n`: every shard's GEMM whole on
/// one emulated GPU, reductions in rank order.
fn reference_case(ctx: &Context, case: Case, n: usize, r: usize) -> Vec<u8> {
    let gpu = ctx.gpu(0).unwrap();
    let s = gpu.create_stream().unwrap();
    let l = LAYER;
    let shard_gemm = |p: &GemmProblem, a: &[bf16], b: &[bf16]| -> Vec<u8> {
        let (da, db) = (gpu.upload(a).unwrap(), gpu.upload(b).unwrap());
        match p.c_type {
            DType::F32 => {
                let mut c = gpu.upload(&vec![0f32; p.m * p.n]).unwrap();
                gpu.gemm(&s, p, da.as_slice(), db.as_slice(), c.as_mut_slice()).unwrap();
                s.synchronize().unwrap();
                bytes_of(&c.to_vec().unwrap())
            }
            _ => {
                let mut c = gpu.upload(&vec![bf16::ZERO; p.m * p.n]).unwrap();
                gpu.gemm(&s, p, da.as_slice(), db.as_slice(), c.as_mut_slice()).unwrap();
                s.synchronize().unwrap();
                bytes_of(&c.to_vec().unwrap())
            }
        }
    };
    match case {
        Case::Column | Case::ColumnGather => {
            let x = values::<bf16>(l.m * l.k, 1);
            let wt = values::<bf16>(l.n * l.k, 2);
            let out = if matches!(case, Case::Column) { DType::F32 } else { DType::Bf16 };
            let shards: Vec<Vec<u8>> = split(l.n, n)
                .into_iter()
                .map(|cols| {
                    let p = GemmProblem::new(l.m, cols.len(), l.k)
                        .with_transposes(Transpose::No, Transpose::Yes)
                        .with_dtypes(DType::Bf16, DType::Bf16, out);
                    shard_gemm(&p, &x, &wt[cols.start * l.k..cols.end * l.k])
                })
                .collect();
            if matches!(case, Case::Column) {
                return shards[r].clone();
            }
            let es = 2;
            let mut all = Vec::with_capacity(l.m * l.n * es);
            for i in 0..l.m {
                for (q, cols) in split(l.n, n).into_iter().enumerate() {
                    all.extend_from_slice(&shards[q][i * cols.len() * es..(i + 1) * cols.len() * es]);
                }
            }
            [shards[r].clone(), all].concat()
        }
        Case::RowAllReduceF32 | Case::RowAllReduceBf16 | Case::RowReduceScatter => {
            let x = values::<bf16>(l.m * l.k_row, 3);
            let w = values::<bf16>(l.k_row * l.n_row, 4);
            let out = if matches!(case, Case::RowAllReduceBf16) { DType::Bf16 } else { DType::F32 };
            let partials: Vec<Vec<u8>> = split(l.k_row, n)
                .into_iter()
                .map(|ks| {
                    let p = GemmProblem::new(l.m, l.n_row, ks.len()).with_dtypes(DType::Bf16, DType::Bf16, out);
                    shard_gemm(&p, &columns(&x, l.m, l.k_row, ks.clone()), &w[ks.start * l.n_row..ks.end * l.n_row])
                })
                .collect();
            if out == DType::Bf16 {
                let parts: Vec<Vec<bf16>> = partials.iter().map(|b| bytemuck::cast_slice(b).to_vec()).collect();
                return bytes_of(&reduce(&parts));
            }
            let parts: Vec<Vec<f32>> = partials.iter().map(|b| bytemuck::cast_slice(b).to_vec()).collect();
            let sum = reduce(&parts);
            if matches!(case, Case::RowAllReduceF32) {
                // The reference itself against the f64 reference GEMM of the whole layer.
                let p = GemmProblem::new(l.m, l.n_row, l.k_row).with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
                let report = gemm_core::reference::check(&p, &x, &w, &vec![0f32; sum.len()], &sum, None).unwrap();
                assert!(report.max_err_ratio <= 1.0, "{report:?}");
                return bytes_of(&sum);
            }
            // Rank r's rows, as the group assigns them.
            let g = hip_group_rows(n, r);
            bytes_of(&sum[g.start * l.n_row..g.end * l.n_row])
        }
        Case::Mlp => {
            let x = values::<bf16>(l.m * l.k, 5);
            let w_up = values::<bf16>(l.k * l.n, 6);
            let w_down = values::<bf16>(l.n * l.k, 7);
            let partials: Vec<Vec<f32>> = split(l.n, n)
                .into_iter()
                .map(|fs| {
                    let up = GemmProblem::new(l.m, fs.len(), l.k).with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
                    let (dx, du) =
                        (gpu.upload(&x).unwrap(), gpu.upload(&columns(&w_up, l.k, l.n, fs.clone())).unwrap());
                    let mut h = gpu.upload(&vec![bf16::ZERO; l.m * fs.len()]).unwrap();
                    let e = gemm_dispatch::Epilogue { activation: Activation::None, ..gemm_dispatch::Epilogue::NONE };
                    gpu.gemm_epilogue(&s, &up, dx.as_slice(), du.as_slice(), h.as_mut_slice(), &e, None).unwrap();
                    let down = GemmProblem::new(l.m, l.k, fs.len()).with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
                    s.synchronize().unwrap();
                    let hv = h.to_vec().unwrap();
                    bytemuck::cast_slice(&shard_gemm(&down, &hv, &w_down[fs.start * l.k..fs.end * l.k])).to_vec()
                })
                .collect();
            bytes_of(&reduce(&partials))
        }
    }
}

/// The rows the group gives rank `r` in a reduce-scatter of `LAYER.m` rows (asked of a group
/// API that needs no communicator: the same formula).
fn hip_group_rows(n: usize, r: usize) -> std::ops::Range<usize> {
    gemm_dispatch::api::parallel::group::scatter_rows(LAYER.m, n, r, gemm_core::Arch::Gfx942)
}

fn options(overlap: bool, timeout_ms: u64) -> TpOptions {
    TpOptions { timeout: Duration::from_millis(timeout_ms), overlap, chunks: 3 }
}

/// A rank of the plans test: every case, overlap on then off, outputs to files.
fn plans_rank() {
    let (dir, r, n) = (PathBuf::from(std::env::var(DIR).unwrap()), env_usize(RANK), env_usize(NRANKS));
    let ctx = hip_context();
    let id = exchange_id(&ctx, &dir, r);
    for overlap in [true, false] {
        // One group per setting: the same communicator could serve both, but a group's
        // options are fixed at creation, as a pipeline's are.
        let id = if overlap { id.clone() } else { exchange_second_id(&ctx, &dir, r) };
        let g = TpGroup::create(&ctx, 0, &id, n, r, options(overlap, 20_000)).unwrap();
        assert!(g.owns_communicator());
        for case in CASES {
            let out = run_case(&ctx, &g, case);
            std::fs::write(dir.join(format!("{case:?}-{overlap}-{r}")), out).unwrap();
        }
        assert_eq!(g.status(), TpStatus::Ok);
    }
}

/// A second id for the second group (a root serves one communicator).
fn exchange_second_id(ctx: &Context, dir: &Path, r: usize) -> Vec<u8> {
    let sub = dir.join("second");
    std::fs::create_dir_all(&sub).unwrap();
    exchange_id(ctx, &sub, r)
}

fn reference_rank() {
    let (dir, n) = (PathBuf::from(std::env::var(DIR).unwrap()), env_usize(NRANKS));
    let ctx = hip_context();
    for case in CASES {
        for r in 0..n {
            std::fs::write(dir.join(format!("{case:?}-ref-{r}")), reference_case(&ctx, case, n, r)).unwrap();
        }
    }
}

fn plans_against_the_reference(test: &str, nranks: usize) {
    let dir = temp_dir(&format!("plans{nranks}"));
    let start = Instant::now();
    let mut roles: Vec<(&str, usize)> = (0..nranks).map(|r| ("plans", r)).collect();
    roles.push(("reference", 0));
    assert_all_ok(&spawn(test, &dir, nranks, &roles, 20_000));
    for case in CASES {
        for r in 0..nranks {
            let want = std::fs::read(dir.join(format!("{case:?}-ref-{r}"))).unwrap();
            for overlap in [true, false] {
                let got = std::fs::read(dir.join(format!("{case:?}-{overlap}-{r}"))).unwrap();
                assert!(got == want, "{case:?}, rank {r} of {nranks}, overlap {overlap}: not the reference's bits");
            }
        }
    }
    eprintln!("{nranks} ranks: every plan, overlap on and off, bit for bit, in {:?}", start.elapsed());
    let _ = std::fs::remove_dir_all(&dir);
}

fn role() -> Option<String> {
    std::env::var(ROLE).ok()
}

#[test]
fn two_processes_run_every_plan_bit_for_bit() {
    match role().as_deref() {
        Some("plans") => plans_rank(),
        Some("reference") => reference_rank(),
        _ => plans_against_the_reference("two_processes_run_every_plan_bit_for_bit", 2),
    }
}

#[test]
fn four_processes_run_every_plan_bit_for_bit() {
    match role().as_deref() {
        Some("plans") => plans_rank(),
        Some("reference") => reference_rank(),
        _ => plans_against_the_reference("four_processes_run_every_plan_bit_for_bit", 4),
    }
}

/// Rank 0 calls the row plan; rank 1 dies (exits) while rank 0 waits in it. Rank 0 must fail
/// with `PeerLost` well within its timeout and leave Y as it was; its group is aborted after.
fn dead_rank(r: usize, dir: &Path) {
    let ctx = hip_context();
    let id = exchange_id(&ctx, dir, r);
    let timeout_ms = 8_000;
    let g = TpGroup::create(&ctx, 0, &id, 2, r, options(true, timeout_ms)).unwrap();
    if r == 1 {
        std::thread::sleep(Duration::from_millis(300));
        std::process::exit(0);
    }
    let gpu = ctx.gpu(0).unwrap();
    let s = gpu.create_stream().unwrap();
    let p = GemmProblem::new(45, 24, 35).with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
    let dx = gpu.upload(&values::<bf16>(45 * 35, 1)).unwrap();
    let dw = gpu.upload(&values::<bf16>(35 * 24, 2)).unwrap();
    let sentinel = vec![-7.5f32; 45 * 24];
    let mut y = gpu.upload(&sentinel).unwrap();
    let start = Instant::now();
    let e = g.row(&s, &p, dx.as_slice(), dw.as_slice(), y.as_mut_slice(), Reduce::AllReduce).unwrap_err();
    let took = start.elapsed();
    assert!(matches!(e, Error::Tp(TpError::PeerLost(_))), "{e}");
    assert!(took < Duration::from_millis(timeout_ms), "failed after {took:?}");
    assert_eq!(y.to_vec().unwrap(), sentinel, "Y was written by a failed call");
    assert!(matches!(g.status(), TpStatus::Aborted(_)));
    let again = g.row(&s, &p, dx.as_slice(), dw.as_slice(), y.as_mut_slice(), Reduce::AllReduce).unwrap_err();
    assert!(matches!(again, Error::Tp(TpError::Aborted(_))), "{again}");
    // The caller's stream is usable again.
    s.synchronize().unwrap();
    eprintln!("rank 0: {e} after {took:?}");
}

#[test]
fn a_dead_rank_fails_the_others_within_the_timeout() {
    if role().as_deref() == Some("dead") {
        return dead_rank(env_usize(RANK), &PathBuf::from(std::env::var(DIR).unwrap()));
    }
    let dir = temp_dir("dead");
    let start = Instant::now();
    assert_all_ok(&spawn(
        "a_dead_rank_fails_the_others_within_the_timeout",
        &dir,
        2,
        &[("dead", 0), ("dead", 1)],
        20_000,
    ));
    assert!(start.elapsed() < Duration::from_secs(60));
}

/// Rank 1 stays alive but never calls: rank 0's call times out after its 1 s timeout (the
/// emulated RCCL's own would wait 20 s), aborts; rank 1's later call then finds rank 0 gone.
fn silent_rank(r: usize, dir: &Path) {
    let ctx = hip_context();
    let id = exchange_id(&ctx, dir, r);
    let g = TpGroup::create(&ctx, 0, &id, 2, r, options(false, 1_000)).unwrap();
    let gpu = ctx.gpu(0).unwrap();
    let s = gpu.create_stream().unwrap();
    let p = GemmProblem::new(33, 16, 20).with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
    let dx = gpu.upload(&values::<bf16>(33 * 20, 1)).unwrap();
    let dw = gpu.upload(&values::<bf16>(20 * 16, 2)).unwrap();
    let sentinel = vec![3.25f32; 33 * 16];
    let mut y = gpu.upload(&sentinel).unwrap();
    if r == 1 {
        std::fs::write(dir.join("rank1-ready"), b"").unwrap();
        while !dir.join("rank0-done").exists() {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let start = Instant::now();
    let e = g.row(&s, &p, dx.as_slice(), dw.as_slice(), y.as_mut_slice(), Reduce::AllReduce).unwrap_err();
    let took = start.elapsed();
    if r == 0 {
        assert!(matches!(e, Error::Tp(TpError::Timeout { ms: 1000, .. })), "{e}");
        assert!(took >= Duration::from_millis(1000) && took < Duration::from_millis(5000), "{took:?}");
        std::fs::write(dir.join("rank0-done"), b"").unwrap();
    } else {
        assert!(matches!(e, Error::Tp(TpError::PeerLost(_))), "{e}");
        assert!(took < Duration::from_millis(1000), "{took:?}");
    }
    assert_eq!(y.to_vec().unwrap(), sentinel);
    eprintln!("rank {r}: {e} after {took:?}");
}

#[test]
fn a_silent_rank_times_out_and_the_group_aborts() {
    if role().as_deref() == Some("silent") {
        return silent_rank(env_usize(RANK), &PathBuf::from(std::env::var(DIR).unwrap()));
    }
    let dir = temp_dir("silent");
    let r = spawn("a_silent_rank_times_out_and_the_group_aborts", &dir, 2, &[("silent", 0), ("silent", 1)], 20_000);
    assert_all_ok(&r);
}

/// Ranks that disagree on the problem get `Disagree`, then agree and succeed (a disagreement
/// is found before any data moves: the group stays usable).
fn disagreeing_rank(r: usize, dir: &Path) {
    let ctx = hip_context();
    let id = exchange_id(&ctx, dir, r);
    let g = TpGroup::create(&ctx, 0, &id, 2, r, options(true, 10_000)).unwrap();
    let gpu = ctx.gpu(0).unwrap();
    let s = gpu.create_stream().unwrap();
    let m = if r == 0 { 40 } else { 41 };
    let p = GemmProblem::new(m, 16, 24).with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
    let dx = gpu.upload(&values::<bf16>(41 * 24, 1)).unwrap();
    let dw = gpu.upload(&values::<bf16>(24 * 16, 2)).unwrap();
    let mut y = gpu.upload(&vec![0f32; 41 * 16]).unwrap();
    let e = g.row(&s, &p, dx.as_slice(), dw.as_slice(), y.as_mut_slice(), Reduce::AllReduce).unwrap_err();
    assert!(matches!(&e, Error::Tp(TpError::Disagree(w)) if w.starts_with("m:")), "{e}");
    let p = GemmProblem::new(40, 16, 24).with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
    g.row(&s, &p, dx.as_slice(), dw.as_slice(), y.as_mut_slice(), Reduce::AllReduce).unwrap();
    assert_eq!(g.status(), TpStatus::Ok);
}

#[test]
fn ranks_that_disagree_get_a_typed_error() {
    if role().as_deref() == Some("disagree") {
        return disagreeing_rank(env_usize(RANK), &PathBuf::from(std::env::var(DIR).unwrap()));
    }
    let dir = temp_dir("disagree");
    assert_all_ok(&spawn(
        "ranks_that_disagree_get_a_typed_error",
        &dir,
        2,
        &[("disagree", 0), ("disagree", 1)],
        10_000,
    ));
}

/// Bad ids and ranks, in one process of one rank: typed errors, at once.
fn bad_input() {
    let ctx = hip_context();
    let id = ctx.tp_unique_id(0).unwrap();
    let opts = options(true, 3_000);
    let kind = |r: gemm_dispatch::Result<TpGroup>| match r {
        Err(Error::Tp(e)) => e,
        other => panic!("expected a TpError, got {other:?}"),
    };
    assert_eq!(kind(TpGroup::create(&ctx, 0, &id, 2, 2, opts)), TpError::RankOutOfRange { rank: 2, nranks: 2 });
    assert_eq!(kind(TpGroup::create(&ctx, 0, &id, 0, 0, opts)), TpError::RankOutOfRange { rank: 0, nranks: 0 });
    assert!(matches!(kind(TpGroup::create(&ctx, 0, &id[..100], 1, 0, opts)), TpError::UniqueId(_)));
    assert!(matches!(kind(TpGroup::create(&ctx, 0, &[0u8; 128], 1, 0, opts)), TpError::UniqueId(_)));
    let mut damaged = id;
    damaged[20] ^= 0x40;
    assert!(matches!(kind(TpGroup::create(&ctx, 0, &damaged, 1, 0, opts)), TpError::UniqueId(_)));
    // A group of one rank uses the id up; the id is stale afterwards.
    let g = TpGroup::create(&ctx, 0, &id, 1, 0, opts).unwrap();
    drop(g);
    let start = Instant::now();
    assert!(matches!(kind(TpGroup::create(&ctx, 0, &id, 1, 0, opts)), TpError::UniqueId(_)));
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[test]
fn bad_ids_and_ranks_are_typed_errors() {
    if role().as_deref() == Some("bad") {
        return bad_input();
    }
    let dir = temp_dir("bad");
    assert_all_ok(&spawn("bad_ids_and_ranks_are_typed_errors", &dir, 1, &[("bad", 0)], 3_000));
}

/// Each rank makes its own communicator with gemm-rocm (as PyTorch would), lends it to a group,
/// runs the row plan, drops the group, and then uses the communicator again: it was not
/// destroyed.
fn borrowing_rank(r: usize, dir: &Path) {
    let ctx = hip_context();
    let id = exchange_id(&ctx, dir, r);
    let nccl = gemm_rocm::nccl::Nccl::load().unwrap();
    let gpu = ctx.gpu(0).unwrap();
    gpu.backend().device().set_current().unwrap();
    let mut raw: [u8; 128] = [0; 128];
    raw.copy_from_slice(&id);
    let comm = nccl.init_rank(2, &gemm_rocm::nccl::UniqueId::from_bytes(raw), r).unwrap();
    // SAFETY: a live communicator of the same library, alive for the group's life.
    let g = unsafe { TpGroup::from_comm(&ctx, 0, comm.as_raw().cast(), options(true, 10_000)) }.unwrap();
    assert!(!g.owns_communicator());
    assert_eq!((g.rank(), g.nranks()), (r, 2));
    let s = gpu.create_stream().unwrap();
    let p = GemmProblem::new(20, 16, 24).with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
    let dx = gpu.upload(&values::<bf16>(20 * 24, 1)).unwrap();
    let dw = gpu.upload(&values::<bf16>(24 * 16, 2)).unwrap();
    let mut y = gpu.upload(&vec![0f32; 20 * 16]).unwrap();
    g.row(&s, &p, dx.as_slice(), dw.as_slice(), y.as_mut_slice(), Reduce::AllReduce).unwrap();
    drop(g);
    assert_eq!(comm.count().unwrap(), 2);
    let v = gpu.upload(&[r as f32 + 1.0; 4]).unwrap();
    let mut out = gpu.upload(&[0f32; 4]).unwrap();
    // SAFETY: 4 f32 on this GPU each, alive until the stream is synchronised.
    unsafe {
        comm.all_reduce(
            v.device_address() as *const _,
            out.as_mut_slice().device_address() as *mut _,
            4,
            gemm_rocm::nccl::DataType::F32,
            gemm_rocm::nccl::RedOp::Sum,
            s.as_raw(),
        )
    }
    .unwrap();
    s.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![3.0; 4]);
}

#[test]
fn a_borrowed_communicator_outlives_its_group() {
    if role().as_deref() == Some("borrow") {
        return borrowing_rank(env_usize(RANK), &PathBuf::from(std::env::var(DIR).unwrap()));
    }
    let dir = temp_dir("borrow");
    assert_all_ok(&spawn(
        "a_borrowed_communicator_outlives_its_group",
        &dir,
        2,
        &[("borrow", 0), ("borrow", 1)],
        10_000,
    ));
}

/// Host activation of `x` (the formulas of `Activation`'s documentation).
fn host_act(act: Activation, x: f64) -> f64 {
    match act {
        Activation::None => x,
        Activation::Relu => x.max(0.0),
        Activation::GeluTanh => {
            0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x.powi(3))).tanh())
        }
        Activation::Silu => x / (1.0 + (-x).exp()),
    }
}

/// One MLP call of rank `r` of 2 with `f` ffn columns split over the ranks (hidden 40, 45
/// rows, bf16 H, f32 Y), Y starting as a sentinel: the call's result and Y afterwards.
fn mlp_call(g: &TpGroup, ctx: &Context, f: usize, act: Activation) -> (gemm_dispatch::Result<()>, Vec<f32>) {
    let (m, h, r) = (45, 40, g.rank());
    let gpu = ctx.gpu(0).unwrap();
    let s = gpu.create_stream().unwrap();
    let fs = split(f, 2)[r].clone();
    let (x, w_up, w_down) = (values::<bf16>(m * h, 11), values::<bf16>(h * f, 12), values::<bf16>(f * h, 13));
    let up = GemmProblem::new(m, fs.len(), h).with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
    let down = GemmProblem::new(m, h, fs.len()).with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
    let dx = gpu.upload(&x).unwrap();
    let du = gpu.upload(&columns(&w_up, h, f, fs.clone())).unwrap();
    let dd = gpu.upload(&w_down[fs.start * h..fs.end * h]).unwrap();
    let mut y = gpu.upload(&vec![-9.5f32; m * h]).unwrap();
    let res = g.mlp(&s, &up, &down, dx.as_slice(), du.as_slice(), dd.as_slice(), y.as_mut_slice(), act);
    (res, y.to_vec().unwrap())
}

/// The single-process reference of [`mlp_call`] with `f` = 32 on one GPU: each shard's fused up
/// GEMM (the catalogue's `fused` family: bf16 -> bf16, leading dimensions 40 and 16, multiples
/// of 8) and its down GEMM, the f32 partials reduced in rank order. Each shard's fused H is also
/// checked on the host against the activation of the plain GEMM's H, and must differ from it
/// somewhere (the activation ran).
fn mlp_reference(ctx: &Context, act: Activation) -> Vec<f32> {
    let (m, h, f) = (45, 40, 32);
    let gpu = ctx.gpu(0).unwrap();
    let s = gpu.create_stream().unwrap();
    let (x, w_up, w_down) = (values::<bf16>(m * h, 11), values::<bf16>(h * f, 12), values::<bf16>(f * h, 13));
    let dx = gpu.upload(&x).unwrap();
    let parts: Vec<Vec<f32>> = split(f, 2)
        .into_iter()
        .map(|fs| {
            let up = GemmProblem::new(m, fs.len(), h).with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
            let du = gpu.upload(&columns(&w_up, h, f, fs.clone())).unwrap();
            let zeros = gpu.upload(&vec![0f32; m]).unwrap();
            let hidden = |a: Activation| {
                let mut hb = gpu.upload(&vec![bf16::ZERO; m * fs.len()]).unwrap();
                // As the group runs it: a per-row bias of zeros (the fused family's kernels fuse
                // an activation only after a bias).
                let (e, bias) = match a {
                    Activation::None => (gemm_dispatch::Epilogue::NONE, None),
                    _ => (
                        gemm_dispatch::Epilogue {
                            bias: Some(gemm_dispatch::BiasAxis::PerRow),
                            activation: a,
                            clamp: None,
                        },
                        Some(zeros.as_slice()),
                    ),
                };
                gpu.gemm_epilogue(&s, &up, dx.as_slice(), du.as_slice(), hb.as_mut_slice(), &e, bias).unwrap();
                s.synchronize().unwrap();
                hb
            };
            let (fused, plain) = (hidden(act), hidden(Activation::None).to_vec().unwrap());
            let fv = fused.to_vec().unwrap();
            for (i, (&got, &p)) in fv.iter().zip(&plain).enumerate() {
                let want = host_act(act, f64::from(p.to_f32()));
                let err = (f64::from(got.to_f32()) - want).abs();
                assert!(err <= 0.02 * want.abs() + 0.02, "{act:?}: H[{i}] = {got}, host {want} (plain {p})");
            }
            assert!(fv != plain, "{act:?} changed nothing");
            let down = GemmProblem::new(m, h, fs.len()).with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
            let dd = gpu.upload(&w_down[fs.start * h..fs.end * h]).unwrap();
            let mut y = gpu.upload(&vec![0f32; m * h]).unwrap();
            gpu.gemm(&s, &down, fused.as_slice(), dd.as_slice(), y.as_mut_slice()).unwrap();
            s.synchronize().unwrap();
            y.to_vec().unwrap()
        })
        .collect();
    reduce(&parts)
}

/// A rank of the activation test: first the widths without a fused kernel (refused before any
/// data moves, Y untouched), then every activation on widths with one, bit for bit.
fn activation_rank(r: usize, dir: &Path) {
    let ctx = hip_context();
    let id = exchange_id(&ctx, dir, r);
    let g = TpGroup::create(&ctx, 0, &id, 2, r, options(true, 10_000)).unwrap();
    // f = 31: rank 0's shard is 16 wide (a fused kernel), rank 1's 15 (none: not a multiple of 8).
    let (res, y) = mlp_call(&g, &ctx, 31, Activation::Silu);
    match (r, res) {
        (0, Err(Error::Tp(TpError::Disagree(w)))) => assert!(w.starts_with("option"), "{w}"),
        (1, Err(Error::Unsupported { why, .. })) => assert!(why.contains("MLP up projection"), "{why}"),
        (_, other) => panic!("rank {r}, f = 31: {other:?}"),
    }
    assert!(y.iter().all(|&v| v == -9.5), "a refused call wrote Y");
    // f = 30: no rank has a kernel.
    let (res, y) = mlp_call(&g, &ctx, 30, Activation::Relu);
    assert!(matches!(res, Err(Error::Unsupported { .. })), "rank {r}, f = 30: {res:?}");
    assert!(y.iter().all(|&v| v == -9.5), "a refused call wrote Y");
    assert_eq!(g.status(), TpStatus::Ok);
    for act in [Activation::Relu, Activation::GeluTanh, Activation::Silu] {
        let (res, y) = mlp_call(&g, &ctx, 32, act);
        res.unwrap_or_else(|e| panic!("rank {r}, {act:?}: {e}"));
        let want = mlp_reference(&ctx, act);
        assert!(
            bytemuck::cast_slice::<f32, u32>(&y) == bytemuck::cast_slice::<f32, u32>(&want),
            "rank {r}, {act:?}: not the single-process reference's bits"
        );
    }
    assert_eq!(g.status(), TpStatus::Ok);
}

#[test]
fn mlp_activations_run_fused_or_are_refused_on_every_rank() {
    if role().as_deref() == Some("act") {
        return activation_rank(env_usize(RANK), &PathBuf::from(std::env::var(DIR).unwrap()));
    }
    let dir = temp_dir("act");
    let start = Instant::now();
    assert_all_ok(&spawn(
        "mlp_activations_run_fused_or_are_refused_on_every_rank",
        &dir,
        2,
        &[("act", 0), ("act", 1)],
        10_000,
    ));
    eprintln!("2 ranks: MLP activations in {:?}", start.elapsed());
    let _ = std::fs::remove_dir_all(&dir);
}
