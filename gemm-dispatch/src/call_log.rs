//! The call log: with `GEMM_LOG=1` every GEMM call (Rust or C, host memory or device memory)
//! writes one record to stderr, or appended to the file `GEMM_LOG_FILE`, as hipBLASLt's
//! `HIPBLASLT_LOG_MASK` prints a `hipblaslt-bench` line per call. A record is two lines:
//!
//! ```text
//! gemm-log api=gemm_device device=hip:0 m=70 n=45 k=33 layout=row trans=NN dtypes=bf16,bf16,f32 lda=33 ldb=45 ldc=48 alpha=1.5 beta=-0.5 batch=1 kernel=NAME host_us=41.2 status=ok
//!   gemm --devices hip:0 run --m 70 --n 45 --k 33 --dtype bf16 --out-dtype f32 --layout row --lda 33 --ldb 45 --ldc 48 --alpha=1.5 --beta=-0.5 --resident
//! ```
//!
//! The second line reruns that call alone (`gemm run` with the same problem, device and memory
//! placement, on fresh seeded data); `gemm bench --from LOG` reruns every one of them
//! (`gemm bench --from` in the lab crate). `host_us` is the time the call spent on the host: for device-memory
//! calls, which only queue kernels, that is validation and launch, not the kernel's run time.
//! Grouped calls log one record per group (`api=...[i/n]`), each rerunnable alone. A problem
//! whose A and B dtypes differ has no `gemm run` form yet (`gemm run` takes one input dtype):
//! its command line carries A's dtype and the record says so.

use gemm_core::{GemmProblem, Layout, StridedBatch, Transpose};
use parking_lot::Mutex;
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::OnceLock;

/// `GEMM_LOG`: any value but empty or `0` turns the log on.
pub const LOG_ENV: &str = "GEMM_LOG";
/// `GEMM_LOG_FILE`: the file records are appended to (default: stderr).
pub const LOG_FILE_ENV: &str = "GEMM_LOG_FILE";

/// One call, as logged.
#[derive(Clone, Copy, Debug)]
pub struct CallRecord<'a> {
    /// The entry point, e.g. `gemm_device`, `gemm_run_device`, `gemm` (host memory).
    pub api: &'a str,
    pub problem: &'a GemmProblem,
    /// The strided batch, if the call was one.
    pub batch: Option<&'a StridedBatch>,
    /// The device (or comma-separated devices) the call ran on, as a device list entry.
    pub device: &'a str,
    /// Whether the operands were in device memory.
    pub resident: bool,
    /// The kernel that ran, if known.
    pub kernel: Option<&'a str>,
    pub host_seconds: f64,
    /// `ok` or the error.
    pub status: &'a str,
}

struct Sink {
    enabled: bool,
    file: Option<std::path::PathBuf>,
    lock: Mutex<()>,
}

fn sink() -> &'static Sink {
    static SINK: OnceLock<Sink> = OnceLock::new();
    SINK.get_or_init(|| {
        let enabled = std::env::var(LOG_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
        let file = std::env::var_os(LOG_FILE_ENV).filter(|f| !f.is_empty()).map(Into::into);
        Sink { enabled, file, lock: Mutex::new(()) }
    })
}

/// Whether `GEMM_LOG` is on (read once per process).
pub fn enabled() -> bool {
    sink().enabled
}

fn trans(t: Transpose) -> char {
    if t.is_yes() {
        'T'
    } else {
        'N'
    }
}

/// The `gemm ... run ...` command that reruns `rec` alone.
pub fn command_line(rec: &CallRecord<'_>) -> String {
    let p = rec.problem;
    let mut s = format!("gemm --devices {} run --m {} --n {} --k {}", rec.device, p.m, p.n, p.k);
    let _ = write!(s, " --dtype {} --out-dtype {}", p.a_type, p.c_type);
    let layout = match p.layout {
        Layout::RowMajor => "row",
        Layout::ColMajor => "col",
    };
    let _ = write!(s, " --layout {layout} --lda {} --ldb {} --ldc {}", p.lda, p.ldb, p.ldc);
    if p.trans_a.is_yes() {
        s.push_str(" --transa");
    }
    if p.trans_b.is_yes() {
        s.push_str(" --transb");
    }
    let _ = write!(s, " --alpha={} --beta={}", p.alpha, p.beta);
    if let Some(b) = rec.batch {
        let _ = write!(
            s,
            " --batch {} --stride-a {} --stride-b {} --stride-c {}",
            b.count, b.stride_a, b.stride_b, b.stride_c
        );
    }
    if rec.resident {
        s.push_str(" --resident");
    }
    s
}

/// The record's two lines (ending in a newline).
pub fn format(rec: &CallRecord<'_>) -> String {
    let p = rec.problem;
    let layout = if p.layout == Layout::RowMajor { "row" } else { "col" };
    let mut s = format!(
        "gemm-log api={} device={} m={} n={} k={} layout={layout} trans={}{} dtypes={},{},{} lda={} ldb={} ldc={} alpha={} beta={} batch={}",
        rec.api,
        rec.device,
        p.m,
        p.n,
        p.k,
        trans(p.trans_a),
        trans(p.trans_b),
        p.a_type,
        p.b_type,
        p.c_type,
        p.lda,
        p.ldb,
        p.ldc,
        p.alpha,
        p.beta,
        rec.batch.map_or(1, |b| b.count),
    );
    let _ = write!(
        s,
        " memory={} kernel={} host_us={:.1} status={}",
        if rec.resident { "device" } else { "host" },
        rec.kernel.unwrap_or("-"),
        rec.host_seconds * 1e6,
        rec.status.replace('\n', " ")
    );
    if p.a_type != p.b_type {
        s.push_str(" note=mixed-input-dtypes-not-reproducible-by-gemm-run");
    }
    let _ = writeln!(s, "\n  {}", command_line(rec));
    s
}

/// Writes `rec` to the log if it is on. A log that cannot be written is reported once on stderr
/// and never fails the call.
pub fn record(rec: &CallRecord<'_>) {
    let sink = sink();
    if !sink.enabled {
        return;
    }
    let text = format(rec);
    let _guard = sink.lock.lock();
    match &sink.file {
        None => {
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
        Some(path) => {
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| f.write_all(text.as_bytes()));
            if let Err(e) = written {
                static WARNED: OnceLock<()> = OnceLock::new();
                WARNED.get_or_init(|| eprintln!("gemm: cannot write the call log {}: {e}", path.display()));
            }
        }
    }
}

/// The commands of a log or a problem list: every line that, trimmed, starts with `gemm ` and
/// holds a ` run ` subcommand, split into arguments (whitespace-separated; the log never quotes).
pub fn commands(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with("gemm ") && l.split_whitespace().any(|w| w == "run"))
        .map(|l| l.split_whitespace().map(str::to_owned).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::DType;

    #[test]
    fn records_carry_the_call_and_a_command_that_reruns_it() {
        let p = GemmProblem::new(70, 45, 33)
            .with_dtypes(DType::Bf16, DType::Bf16, DType::F32)
            .with_leading_dims(33, 45, 48)
            .with_scalars(1.5, -0.5)
            .with_transposes(Transpose::No, Transpose::Yes);
        let p = p.with_leading_dims(p.lda, 33, 48);
        let batch = StridedBatch { problem: p, count: 3, stride_a: 70 * 33, stride_b: 0, stride_c: 70 * 48 };
        let rec = CallRecord {
            api: "gemm_strided_batched_device",
            problem: &p,
            batch: Some(&batch),
            device: "hip:1",
            resident: true,
            kernel: Some("k"),
            host_seconds: 12e-6,
            status: "ok",
        };
        let text = format(&rec);
        assert!(text.starts_with("gemm-log api=gemm_strided_batched_device device=hip:1 m=70 n=45 k=33"), "{text}");
        assert!(text.contains("trans=NT dtypes=bf16,bf16,f32 lda=33 ldb=33 ldc=48 alpha=1.5 beta=-0.5 batch=3"));
        assert!(text.contains("kernel=k host_us=12.0 status=ok"), "{text}");
        let cmds = commands(&text);
        assert_eq!(cmds.len(), 1);
        let line = cmds[0].join(" ");
        assert_eq!(
            line,
            "gemm --devices hip:1 run --m 70 --n 45 --k 33 --dtype bf16 --out-dtype f32 --layout row --lda 33 \
             --ldb 33 --ldc 48 --transb --alpha=1.5 --beta=-0.5 --batch 3 --stride-a 2310 --stride-b 0 \
             --stride-c 3360 --resident"
        );
        // Lines that are not commands are skipped; a plain problem list works too.
        assert_eq!(commands("# list\ngemm run --m 1 --n 2 --k 3\ngemm devices\n").len(), 1);
    }
}
