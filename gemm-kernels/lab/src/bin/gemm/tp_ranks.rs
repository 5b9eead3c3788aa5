//! `gemm tp --ranks N`: tensor parallelism as a pipeline runs it, one process per GPU. The
//! launcher starts N copies of this binary (or prints their command lines for a cluster
//! launcher); rank 0 makes the unique id and writes it to a file, the only thing the ranks share
//! besides the communicator; each rank joins a [`TpGroup`] on its GPU and runs the layer on its
//! shard of device memory, then prints its time per call and the check of its output against
//! the f64 reference GEMM of the whole layer.
//!
//! Without `GEMM_HIP_LIBRARY` the ranks run on the emulated HIP runtime and RCCL
//! (`libgemm_emu_hip.so`, built with this binary), one emulated gfx942 each, whose RCCL talks
//! over TCP: this works from a fresh clone. With real GPUs each rank takes GPU `rank % count`.

use super::{PlanArg, TpArgs};
use gemm_core::{bf16, reference, DType, Element, GemmProblem};
use gemm_dispatch::{Context, Reduce, TpGroup, TpOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const RANK: &str = "GEMM_TP_RANK";
const RANKS: &str = "GEMM_TP_RANKS";
const ID_FILE: &str = "GEMM_TP_ID_FILE";

/// `libgemm_emu_hip.so` beside this binary (or in its `deps`, where cargo puts a dependency's
/// cdylib).
fn emulated_runtime() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [dir.to_path_buf(), dir.join("deps")].into_iter().map(|d| d.join(gemm_emu_hip::LIBRARY_FILE)).find(|p| p.is_file())
}

/// The launcher, or a rank when `GEMM_TP_RANK` is set.
pub fn run(args: &TpArgs, argv: &[String]) -> Result<(), String> {
    let n = args.ranks.unwrap_or(1) as usize;
    if n == 0 {
        return Err("--ranks must be at least 1".into());
    }
    if let Ok(rank) = std::env::var(RANK) {
        let rank: usize = rank.parse().map_err(|_| format!("{RANK}={rank} is not a rank"))?;
        let ranks: usize = std::env::var(RANKS).ok().and_then(|v| v.parse().ok()).unwrap_or(n);
        let id_file = PathBuf::from(std::env::var(ID_FILE).map_err(|_| format!("{ID_FILE} is not set"))?);
        return with_types(args, rank, ranks, &id_file);
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut env: Vec<(String, String)> = vec![("GEMM_DEVICES".into(), "hip".into())];
    if std::env::var_os("GEMM_HIP_LIBRARY").is_none() {
        let lib = emulated_runtime().ok_or("no GEMM_HIP_LIBRARY and no libgemm_emu_hip.so beside this binary")?;
        let lib = lib.display().to_string();
        env.push(("GEMM_HIP_LIBRARY".into(), lib.clone()));
        env.push(("GEMM_RCCL_LIBRARY".into(), lib));
        env.push(("GEMM_EMU_HIP".into(), "devices=gfx942;nccl=tcp;launch_threads=1".into()));
    }
    if args.print_commands {
        let id_file = std::env::var(ID_FILE).unwrap_or_else(|_| "/shared/job/unique_id".into());
        print!("{}", rank_commands(&env, &exe.display().to_string(), argv, n, &id_file));
        return Ok(());
    }
    let dir = std::env::temp_dir().join(format!("gemm-tp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let id_file = dir.join("unique_id");
    eprintln!("starting {n} ranks, one process and one GPU each; unique id through {}", id_file.display());
    let mut children = Vec::with_capacity(n);
    for r in 0..n {
        let mut c = Command::new(&exe);
        c.args(argv)
            .envs(env.iter().cloned())
            .env(RANK, r.to_string())
            .env(RANKS, n.to_string())
            .env(ID_FILE, &id_file);
        children.push(c.spawn().map_err(|e| format!("start rank {r}: {e}"))?);
    }
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut codes: Vec<Option<i32>> = vec![None; n];
    while codes.iter().any(Option::is_none) {
        for (c, code) in children.iter_mut().zip(codes.iter_mut()) {
            if code.is_none() {
                if let Ok(Some(s)) = c.try_wait() {
                    *code = Some(s.code().unwrap_or(-1));
                }
            }
        }
        if Instant::now() > deadline {
            for (c, code) in children.iter_mut().zip(codes.iter_mut()) {
                if code.is_none() {
                    let _ = c.kill();
                    *code = Some(-9);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let failed: Vec<usize> = codes.iter().enumerate().filter(|(_, c)| **c != Some(0)).map(|(r, _)| r).collect();
    if failed.is_empty() {
        println!("all {n} ranks passed");
        Ok(())
    } else {
        Err(format!("ranks {failed:?} failed (exit codes {codes:?})"))
    }
}

/// `s` as one word of a POSIX shell: unchanged when it holds only characters no shell treats
/// specially, else in single quotes (a `'` inside becomes `'\''`).
fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The per-rank command lines `--print-commands` prints, one a line after a comment: each sets
/// `env`, the rank, the rank count and the id file, then runs `exe` with the launcher's
/// arguments less `--print-commands`, every word quoted for a POSIX shell.
fn rank_commands(env: &[(String, String)], exe: &str, argv: &[String], n: usize, id_file: &str) -> String {
    let vars: String = env.iter().map(|(k, v)| format!("{k}={} ", shell_word(v))).collect();
    let args: Vec<String> = argv.iter().filter(|a| a.as_str() != "--print-commands").map(|a| shell_word(a)).collect();
    let mut out = format!(
        "# one line per rank; the id file ({ID_FILE}, {id_file}) must be on storage every rank sees, fresh per job\n"
    );
    for r in 0..n {
        out += &format!(
            "{vars}{RANK}={r} {RANKS}={n} {ID_FILE}={} {} {}\n",
            shell_word(id_file),
            shell_word(exe),
            args.join(" ")
        );
    }
    out
}

fn with_types(args: &TpArgs, rank: usize, ranks: usize, id_file: &Path) -> Result<(), String> {
    match (args.ops.dtype, args.ops.out_dtype()) {
        (DType::F32, DType::F32) => rank_main::<f32, f32>(args, rank, ranks, id_file),
        (DType::Bf16, DType::F32) => rank_main::<bf16, f32>(args, rank, ranks, id_file),
        (DType::Bf16, DType::Bf16) => rank_main::<bf16, bf16>(args, rank, ranks, id_file),
        (a, c) => Err(format!("--ranks runs f32 -> f32, bf16 -> f32 and bf16 -> bf16 layers, not {a} -> {c}")),
    }
}

fn exchange_id(ctx: &Context, id_file: &Path, rank: usize) -> Result<Vec<u8>, String> {
    if rank == 0 {
        let id = ctx.tp_unique_id(0).map_err(|e| e.to_string())?;
        let tmp = id_file.with_extension("tmp");
        std::fs::write(&tmp, id).map_err(|e| format!("write the unique id to {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, id_file)
            .map_err(|e| format!("rename {} to {}: {e}", tmp.display(), id_file.display()))?;
        return Ok(id.to_vec());
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(b) = std::fs::read(id_file) {
            return Ok(b);
        }
        if Instant::now() > deadline {
            return Err(format!("no unique id in {} after 120 s", id_file.display()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Columns `cols` of a row-major `rows x width` matrix, tight.
fn columns<T: Copy>(full: &[T], rows: usize, width: usize, cols: std::ops::Range<usize>) -> Vec<T> {
    (0..rows).flat_map(|i| cols.clone().map(move |j| full[i * width + j])).collect()
}

fn rank_main<A: Element, C: Element>(args: &TpArgs, rank: usize, ranks: usize, id_file: &Path) -> Result<(), String> {
    let e = |e: gemm_dispatch::Error| format!("rank {rank}: {e}");
    let ctx = Context::from_env().map_err(e)?;
    let device = rank % ctx.device_count().max(1);
    let gpu = ctx.gpu(device).map_err(e)?;
    let id = exchange_id(&ctx, id_file, rank)?;
    let options = TpOptions { overlap: !args.no_overlap, ..TpOptions::default() };
    let group = TpGroup::create(&ctx, device, &id, ranks, rank, options).map_err(e)?;
    let (m, n, k) = (args.m as usize, args.n as usize, args.k as usize);
    let full = GemmProblem::new(m, n, k).with_elements::<A, A, C>().with_scalars(args.ops.alpha, 0.0);
    let a: Vec<A> = reference::random_values(m * k, args.seed);
    let b: Vec<A> = reference::random_values(k * n, args.seed + 1);
    let split = gemm_dispatch::api::parallel::split;
    let stream = gpu.create_stream().map_err(e)?;
    let reps = args.iters as usize;
    let mut times = Vec::with_capacity(reps);
    // Each plan: this rank's shard on the GPU, the call timed `reps` times after a warm-up, and
    // the output with the rows and columns of the whole C it holds.
    let (out, rows, cols): (Vec<C>, std::ops::Range<usize>, std::ops::Range<usize>) = match args.plan {
        PlanArg::Column => {
            let my = split(n, ranks)[rank].clone();
            let p = GemmProblem::new(m, my.len(), k).with_elements::<A, A, C>().with_scalars(args.ops.alpha, 0.0);
            let (dx, dw) = (gpu.upload(&a).map_err(e)?, gpu.upload(&columns(&b, k, n, my.clone())).map_err(e)?);
            let mut shard = gpu.alloc::<C>(m * my.len()).map_err(e)?;
            let mut y = gpu.alloc::<C>(m * n).map_err(e)?;
            for it in 0..=reps {
                let t = Instant::now();
                group
                    .column(&stream, &p, dx.as_slice(), dw.as_slice(), shard.as_mut_slice(), Some(y.as_mut_slice()))
                    .map_err(e)?;
                if it > 0 {
                    times.push(t.elapsed());
                }
            }
            (y.to_vec().map_err(e)?, 0..m, 0..n)
        }
        PlanArg::Row | PlanArg::RowAllreduce => {
            let ks = split(k, ranks)[rank].clone();
            let p = GemmProblem::new(m, n, ks.len()).with_elements::<A, A, C>().with_scalars(args.ops.alpha, 0.0);
            let dx = gpu.upload(&columns(&a, m, k, ks.clone())).map_err(e)?;
            let dw = gpu.upload(&b[ks.start * n..ks.end * n]).map_err(e)?;
            let (reduce, rows) = match args.plan {
                PlanArg::Row => (Reduce::ReduceScatter, group.scatter_rows(m, rank)),
                _ => (Reduce::AllReduce, 0..m),
            };
            let mut y = gpu.alloc::<C>((rows.len() * n).max(1)).map_err(e)?;
            for it in 0..=reps {
                let t = Instant::now();
                group.row(&stream, &p, dx.as_slice(), dw.as_slice(), y.as_mut_slice(), reduce).map_err(e)?;
                if it > 0 {
                    times.push(t.elapsed());
                }
            }
            let mut out = y.to_vec().map_err(e)?;
            out.truncate(rows.len() * n);
            (out, rows, 0..n)
        }
    };
    times.sort();
    let median = times.get(times.len() / 2).copied().unwrap_or_default();
    // The check: this rank's rows of C against the f64 reference of the whole layer.
    let entries: Vec<(usize, usize)> = rows.clone().flat_map(|i| cols.clone().map(move |j| (i, j))).collect();
    let mut whole = vec![C::default(); m * n];
    for (idx, &(i, j)) in entries.iter().enumerate() {
        whole[i * n + j] = out[idx];
    }
    let report = reference::check(&full, &a, &b, &vec![C::default(); m * n], &whole, Some(&entries))
        .map_err(|e| e.to_string())?;
    let ok = report.max_err_ratio <= 1.0;
    let flops = 2.0 * (m * n * k) as f64 / ranks as f64;
    println!(
        "rank {rank}/{ranks} on {} ({:?}, overlap {}): {:.3} ms per call (median of {reps}), {:.2} GFLOP/s of its share; rows {}..{} x cols {}..{} vs the reference: max error {:.3} of allowed, {}",
        gpu.name(),
        args.plan,
        options.overlap,
        median.as_secs_f64() * 1e3,
        flops / median.as_secs_f64().max(1e-12) / 1e9,
        rows.start,
        rows.end,
        cols.start,
        cols.end,
        report.max_err_ratio,
        if ok { "OK" } else { "FAILED" }
    );
    if ok {
        Ok(())
    } else {
        Err(format!("rank {rank}: {report:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `sh` makes of `line`'s words (printed one a line by `printf`).
    fn sh_words(line: &str) -> Vec<String> {
        let out = Command::new("sh").arg("-c").arg(format!("printf '%s\\n' {line}")).output().expect("run sh");
        assert!(out.status.success(), "{line}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect()
    }

    #[test]
    fn shell_words_survive_a_shell() {
        let words = ["plain-word_1.2/x", "devices=gfx942;nccl=tcp", "a b", "it's", "", "$HOME `x` \\ \"q\"", "*"];
        for w in words {
            assert_eq!(sh_words(&shell_word(w)), vec![w.to_string()], "{w:?} quoted as {}", shell_word(w));
        }
        assert_eq!(shell_word("--m"), "--m");
    }

    #[test]
    fn rank_commands_quote_values_and_drop_print_commands() {
        let env = vec![("GEMM_EMU_HIP".to_string(), "devices=gfx942;nccl=tcp".to_string())];
        let argv: Vec<String> =
            ["tp", "--ranks", "2", "--plan", "row", "--print-commands"].iter().map(|s| s.to_string()).collect();
        let text = rank_commands(&env, "/opt/my gemm/gemm", &argv, 2, "/shared/job/id");
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines.len(), 2, "{text}");
        for (r, line) in lines.iter().enumerate() {
            assert!(!line.contains("--print-commands"), "{line}");
            assert!(line.starts_with("GEMM_EMU_HIP='devices=gfx942;nccl=tcp' "), "{line}");
            // The shell sees the assignments and the command as these words.
            let want = [
                "GEMM_EMU_HIP=devices=gfx942;nccl=tcp".to_string(),
                format!("{RANK}={r}"),
                format!("{RANKS}=2"),
                format!("{ID_FILE}=/shared/job/id"),
                "/opt/my gemm/gemm".into(),
                "tp".into(),
                "--ranks".into(),
                "2".into(),
                "--plan".into(),
                "row".into(),
            ];
            assert_eq!(sh_words(line), want, "{line}");
        }
    }
}
