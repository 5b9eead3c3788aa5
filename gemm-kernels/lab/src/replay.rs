//! Rerunning logged calls: `gemm bench --from LOG` (or a list of `gemm run ...` lines) parses
//! each command of a call log ([`gemm_dispatch::call_log`]), runs it on fresh seeded data with the same
//! problem, devices and memory placement, times it, checks sampled entries against the f64
//! reference, and writes one CSV row per call (and an SVG bar chart), as `hipblaslt-bench` does
//! for hipBLASLt's log.
//!
//! Device-memory calls (`--resident`) rerun through the device API ([`gemm_dispatch::api::device`]) on a
//! stream of the first listed device: the time is from the call to the stream's completion.
//! Host-memory calls rerun through the [`Context`] entry points, copies included.

use gemm_core::reference::{self, random_values};
use gemm_core::{bf16, f16, DType, Element, Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz, GemmProblem, Layout};
use gemm_core::{StridedBatch, Transpose};
use gemm_dispatch::api::context::Context;
use gemm_dispatch::api::device::GpuStream;
use gemm_dispatch::backends::hip::DeviceSpan;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// The flags of `gemm run` a logged command uses (the same names as the CLI's).
#[derive(clap::Args, Clone, Debug)]
pub struct RunLine {
    #[arg(long)]
    pub m: usize,
    #[arg(long)]
    pub n: usize,
    #[arg(long)]
    pub k: usize,
    #[arg(long, default_value = "f32")]
    pub dtype: DType,
    #[arg(long)]
    pub out_dtype: Option<DType>,
    #[arg(long)]
    pub transa: bool,
    #[arg(long)]
    pub transb: bool,
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub alpha: f32,
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub beta: f32,
    #[command(flatten)]
    pub storage: Storage,
    #[arg(long, default_value_t = 1)]
    pub batch: usize,
    #[arg(long, default_value_t = 5)]
    pub iters: usize,
    #[arg(long, default_value_t = 256)]
    pub samples: usize,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// Storage flags `gemm run` shares with the log: layout, leading dimensions, batch strides and
/// whether the operands live in device memory.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Storage {
    /// Storage order: `row` (default) or `col`.
    #[arg(long, value_parser = ["row", "col"])]
    pub layout: Option<String>,
    /// Leading dimension of A in elements (default: the tight one).
    #[arg(long)]
    pub lda: Option<usize>,
    /// Leading dimension of B in elements (default: the tight one).
    #[arg(long)]
    pub ldb: Option<usize>,
    /// Leading dimension of C in elements (default: the tight one).
    #[arg(long)]
    pub ldc: Option<usize>,
    /// Elements from one batch item's A to the next (default: A's span, back to back).
    #[arg(long)]
    pub stride_a: Option<usize>,
    /// Elements from one batch item's B to the next (default: B's span, back to back).
    #[arg(long)]
    pub stride_b: Option<usize>,
    /// Elements from one batch item's C to the next (default: C's span, back to back).
    #[arg(long)]
    pub stride_c: Option<usize>,
    /// Operands in device memory of the first device (a HIP GPU), through the device API: the
    /// time is the queued GEMM(s) until the stream is done, no copies.
    #[arg(long)]
    pub resident: bool,
}

impl Storage {
    /// `p` (tight, row-major) with this storage's layout and leading dimensions.
    pub fn apply(&self, p: GemmProblem) -> GemmProblem {
        let p = if self.layout.as_deref() == Some("col") { p.with_layout(Layout::ColMajor) } else { p };
        p.with_leading_dims(self.lda.unwrap_or(p.lda), self.ldb.unwrap_or(p.ldb), self.ldc.unwrap_or(p.ldc))
    }

    /// The strided batch of `count` items of `p` with these strides (defaults: back to back);
    /// a batch of 0 items is refused, as every other zero size of the command line is.
    pub fn batch(&self, p: GemmProblem, count: usize) -> Result<StridedBatch, String> {
        if count == 0 {
            return Err("--batch must be at least 1".into());
        }
        let item = p.validate().map_err(|e| e.to_string())?;
        Ok(StridedBatch {
            problem: p,
            count,
            stride_a: self.stride_a.unwrap_or(item.a),
            stride_b: self.stride_b.unwrap_or(item.b),
            stride_c: self.stride_c.unwrap_or(item.c),
        })
    }
}

#[derive(clap::Parser, Debug)]
#[command(name = "gemm")]
struct Line {
    #[arg(long, visible_alias = "device")]
    devices: Option<String>,
    #[command(subcommand)]
    command: LineCommand,
}

#[derive(clap::Subcommand, Debug)]
enum LineCommand {
    Run(RunLine),
}

/// One command to rerun.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// The command as written.
    pub command: String,
    /// `--devices`, if given.
    pub devices: Option<String>,
    pub batch: StridedBatch,
    pub resident: bool,
    pub samples: usize,
    pub seed: u64,
}

/// Parses one `gemm [--devices D] run ...` command.
pub fn parse(args: &[String]) -> Result<RunSpec, String> {
    use clap::Parser as _;
    let line = Line::try_parse_from(args).map_err(|e| e.to_string().lines().next().unwrap_or("").to_string())?;
    let LineCommand::Run(r) = line.command;
    let out = r.out_dtype.unwrap_or(if r.dtype.is_fp8() { DType::F32 } else { r.dtype });
    let p = GemmProblem::new(r.m, r.n, r.k)
        .with_dtypes(r.dtype, r.dtype, out)
        .with_transposes(Transpose::from_bool(r.transa), Transpose::from_bool(r.transb))
        .with_scalars(r.alpha, r.beta);
    let p = r.storage.apply(p);
    Ok(RunSpec {
        command: args.join(" "),
        devices: line.devices,
        batch: r.storage.batch(p, r.batch)?,
        resident: r.storage.resident,
        samples: r.samples,
        seed: r.seed,
    })
}

/// The host memory free for new allocations (`MemAvailable` of `/proc/meminfo`), if known.
pub fn available_host_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Refuses, with the amount, a run that needs more host memory than is available: `need` bytes
/// (as a u128, so that no product overflows) for `what`.
pub fn ensure_host_memory(need: u128, what: &str) -> Result<(), String> {
    let gib = |b: u128| b as f64 / f64::from(1u32 << 30);
    match available_host_memory() {
        Some(avail) if need > u128::from(avail) => Err(format!(
            "{what} needs {:.2} GiB of host memory ({need} bytes); {:.2} GiB are available",
            gib(need),
            gib(u128::from(avail))
        )),
        None if need > u128::from(u64::MAX) => Err(format!("{what} needs {need} bytes of host memory")),
        _ => Ok(()),
    }
}

/// Host bytes a run holds: A and B once, C twice (before and after).
pub fn host_bytes(batch: &StridedBatch) -> Result<u128, String> {
    let p = &batch.problem;
    let spans = batch.validate().map_err(|e| e.to_string())?;
    Ok(spans.a as u128 * p.a_type.size_bytes() as u128
        + spans.b as u128 * p.b_type.size_bytes() as u128
        + 2 * spans.c as u128 * p.c_type.size_bytes() as u128)
}

/// 8-byte aligned storage for `len` bytes of any dtype.
struct Bytes {
    words: Vec<u64>,
    len: usize,
}

impl Bytes {
    fn zeroed(len: usize) -> Result<Self, String> {
        let mut words = Vec::new();
        words.try_reserve_exact(len.div_ceil(8)).map_err(|e| format!("cannot allocate {len} bytes: {e}"))?;
        words.resize(len.div_ceil(8), 0);
        Ok(Self { words, len })
    }
    fn get(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.words)[..self.len]
    }
    fn get_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.words)[..self.len]
    }
}

fn fill<T: Element>(out: &mut [u8], seed: u64) {
    let v: Vec<T> = random_values(out.len() / size_of::<T>(), seed);
    out.copy_from_slice(bytemuck::cast_slice(&v));
}

fn random_bytes(d: DType, elems: usize, seed: u64) -> Result<Bytes, String> {
    let size = d.byte_size().ok_or_else(|| format!("{d} is a sub-byte type: only block-scaled GEMMs take it"))?;
    let mut b = Bytes::zeroed(elems * size)?;
    let out = b.get_mut();
    match d {
        DType::F32 => fill::<f32>(out, seed),
        DType::F16 => fill::<f16>(out, seed),
        DType::Bf16 => fill::<bf16>(out, seed),
        DType::Fp8E4M3Fnuz => fill::<Fp8E4M3Fnuz>(out, seed),
        DType::Fp8E5M2Fnuz => fill::<Fp8E5M2Fnuz>(out, seed),
        DType::Fp8E4M3 => fill::<Fp8E4M3>(out, seed),
        DType::Fp8E5M2 => fill::<Fp8E5M2>(out, seed),
        DType::Fp6E2M3 | DType::Fp6E3M2 | DType::Fp4E2M1 => unreachable!("refused above: no byte size"),
    }
    Ok(b)
}

fn check_typed<A: Element, C: Element>(
    p: &GemmProblem,
    [a, b, c0, c]: [&[u8]; 4],
    entries: &[(usize, usize)],
) -> Result<f64, String> {
    let r = reference::check::<A, A, C>(
        p,
        bytemuck::cast_slice(a),
        bytemuck::cast_slice(b),
        bytemuck::cast_slice(c0),
        bytemuck::cast_slice(c),
        Some(entries),
    )
    .map_err(|e| e.to_string())?;
    Ok(r.max_err_ratio)
}

/// The largest error ratio against the reference on `entries` (<= 1 passes).
fn check(p: &GemmProblem, bufs: [&[u8]; 4], entries: &[(usize, usize)]) -> Result<f64, String> {
    macro_rules! out {
        ($a:ty) => {
            match p.c_type {
                DType::F32 => check_typed::<$a, f32>(p, bufs, entries),
                DType::F16 => check_typed::<$a, f16>(p, bufs, entries),
                DType::Bf16 => check_typed::<$a, bf16>(p, bufs, entries),
                d => Err(format!("no check for output {d}")),
            }
        };
    }
    match p.a_type {
        DType::F32 => out!(f32),
        DType::F16 => out!(f16),
        DType::Bf16 => out!(bf16),
        DType::Fp8E4M3Fnuz => out!(Fp8E4M3Fnuz),
        DType::Fp8E5M2Fnuz => out!(Fp8E5M2Fnuz),
        DType::Fp8E4M3 => out!(Fp8E4M3),
        DType::Fp8E5M2 => out!(Fp8E5M2),
        d @ (DType::Fp6E2M3 | DType::Fp6E3M2 | DType::Fp4E2M1) => Err(format!("no check for input {d}")),
    }
}

/// What rerunning one command measured.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// The device (list) it ran on.
    pub devices: String,
    /// The kernel of the last run on a HIP device, if any.
    pub kernel: Option<String>,
    pub best: Duration,
    pub median: Duration,
    pub runs: usize,
    /// Largest error ratio on the sampled entries of the first and last item (<= 1 passes).
    pub error_ratio: f64,
}

/// Reruns `spec` `iters` times after one warm-up.
pub fn measure(spec: &RunSpec, iters: usize) -> Result<Measurement, String> {
    let ctx = match &spec.devices {
        Some(d) => Context::from_spec(d),
        None => Context::from_env(),
    }
    .map_err(|e| e.to_string())?;
    let batch = &spec.batch;
    let p = batch.problem;
    let spans = batch.validate().map_err(|e| e.to_string())?;
    ensure_host_memory(host_bytes(batch)?, &spec.command)?;
    let a = random_bytes(p.a_type, spans.a, spec.seed)?;
    let b = random_bytes(p.b_type, spans.b, spec.seed + 1)?;
    let c0 = random_bytes(p.c_type, spans.c, spec.seed + 2)?;
    let mut c = random_bytes(p.c_type, spans.c, spec.seed + 2)?;
    let mut times = Vec::with_capacity(iters);
    let mut kernel = None;
    let devices = ctx.devices().iter().map(|d| d.name.clone()).collect::<Vec<_>>().join(",");
    if spec.resident {
        let gpu = ctx.gpu(0).map_err(|e| e.to_string())?;
        let stream = gpu.create_stream().map_err(|e| e.to_string())?;
        let up = |bytes: &Bytes| gpu.upload::<u8>(bytes.get()).map_err(|e| e.to_string());
        let (da, db, mut dc) = (up(&a)?, up(&b)?, up(&c0)?);
        let span = |v: &gemm_dispatch::api::device::DeviceVec<u8>| v.span();
        for it in 0..=iters {
            dc.write(0, c0.get()).map_err(|e| e.to_string())?;
            let start = Instant::now();
            let launched = run_resident(&gpu, &stream, batch, span(&da), span(&db), span(&dc))?;
            stream.synchronize().map_err(|e| e.to_string())?;
            if it > 0 {
                times.push(start.elapsed());
            }
            kernel = launched.map(str::to_owned);
        }
        dc.read(0, c.get_mut()).map_err(|e| e.to_string())?;
        drop((da, db, dc, stream));
    } else {
        for it in 0..=iters {
            c.get_mut().copy_from_slice(c0.get());
            gemm_dispatch::backends::hip::take_last_kernel();
            let start = Instant::now();
            if batch.count == 1 {
                ctx.gemm_bytes(&p, a.get(), b.get(), c.get_mut()).map_err(|e| e.to_string())?;
            } else {
                let report =
                    ctx.gemm_strided_batched_bytes(batch, a.get(), b.get(), c.get_mut()).map_err(|e| e.to_string())?;
                let failure = report.failures().next().map(|(i, e)| format!("batch item {i}: {e}"));
                if let Some(failure) = failure {
                    return Err(failure);
                }
            }
            if it > 0 {
                times.push(start.elapsed());
            }
            kernel = gemm_dispatch::backends::hip::take_last_kernel().map(str::to_owned);
        }
    }
    // Sampled entries of the first and the last item.
    let mut state = spec.seed ^ 0x5bd1_e995;
    let mut next = |bound: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % bound.max(1)
    };
    let item = p.validate().map_err(|e| e.to_string())?;
    let mut error_ratio = 0.0f64;
    let sizes = [p.a_type.size_bytes(), p.b_type.size_bytes(), p.c_type.size_bytes()];
    for i in [0, batch.count - 1] {
        let entries: Vec<(usize, usize)> = (0..spec.samples).map(|_| (next(p.m), next(p.n))).collect();
        let (oa, ob, oc) = batch.offsets(i);
        fn part(buf: &Bytes, off: usize, len: usize, size: usize) -> &[u8] {
            if len == 0 {
                &[]
            } else {
                &buf.get()[off * size..(off + len) * size]
            }
        }
        let bufs = [
            part(&a, oa, item.a, sizes[0]),
            part(&b, ob, item.b, sizes[1]),
            part(&c0, oc, item.c, sizes[2]),
            part(&c, oc, item.c, sizes[2]),
        ];
        // Row-major slices of `len` may start mid-buffer: re-align by copying into owned storage.
        let owned: Vec<Bytes> = bufs
            .iter()
            .map(|s| {
                let mut o = Bytes::zeroed(s.len())?;
                o.get_mut().copy_from_slice(s);
                Ok(o)
            })
            .collect::<Result<_, String>>()?;
        let views = [owned[0].get(), owned[1].get(), owned[2].get(), owned[3].get()];
        error_ratio = error_ratio.max(check(&p, views, &entries)?);
    }
    times.sort();
    Ok(Measurement {
        devices,
        kernel,
        best: times.first().copied().unwrap_or_default(),
        median: times.get(times.len() / 2).copied().unwrap_or_default(),
        runs: times.len(),
        error_ratio,
    })
}

fn run_resident(
    gpu: &gemm_dispatch::api::device::Gpu,
    stream: &GpuStream,
    batch: &StridedBatch,
    a: DeviceSpan,
    b: DeviceSpan,
    c: DeviceSpan,
) -> Result<Option<&'static str>, String> {
    // SAFETY: the spans are whole allocations of `measure`, alive until after the stream is
    // synchronised; nothing else touches them meanwhile.
    let r = unsafe {
        if batch.count == 1 {
            gpu.gemm_raw("gemm_device", stream, &batch.problem, a, b, c)
        } else {
            gpu.strided_raw("gemm_strided_batched_device", stream, batch, a, b, c)
        }
    };
    r.map_err(|e| e.to_string())
}

/// One CSV line per rerun (quoted where needed).
pub fn csv(rows: &[(RunSpec, Result<Measurement, String>)]) -> String {
    let mut out = String::from(
        "index,command,devices,m,n,k,a_type,c_type,layout,trans,batch,memory,kernel,best_ms,median_ms,tflops,error_ratio,status\n",
    );
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    for (i, (spec, r)) in rows.iter().enumerate() {
        let p = &spec.batch.problem;
        let trans: String = [p.trans_a, p.trans_b].iter().map(|t| if t.is_yes() { 'T' } else { 'N' }).collect();
        let layout = if p.layout == Layout::RowMajor { "row" } else { "col" };
        let _ = write!(
            out,
            "{i},{},{},{},{},{},{},{},{layout},{trans},{},{},",
            quote(&spec.command),
            quote(r.as_ref().map_or(spec.devices.as_deref().unwrap_or(""), |m| m.devices.as_str())),
            p.m,
            p.n,
            p.k,
            p.a_type,
            p.c_type,
            spec.batch.count,
            if spec.resident { "device" } else { "host" },
        );
        match r {
            Ok(m) => {
                let secs = m.best.as_secs_f64();
                let tflops = if secs > 0.0 { p.flops() * spec.batch.count as f64 / secs / 1e12 } else { 0.0 };
                let status = if m.error_ratio <= 1.0 { "ok" } else { "mismatch" };
                let _ = writeln!(
                    out,
                    "{},{:.6},{:.6},{tflops:.6},{:.4},{status}",
                    m.kernel.as_deref().unwrap_or("-"),
                    secs * 1e3,
                    m.median.as_secs_f64() * 1e3,
                    m.error_ratio
                );
            }
            Err(e) => {
                let _ = writeln!(out, "-,,,,,{}", quote(&format!("error: {e}")));
            }
        }
    }
    out
}

/// A horizontal bar chart of the best time of each rerun (log-scaled bars), as SVG.
pub fn svg(rows: &[(RunSpec, Result<Measurement, String>)]) -> String {
    let (bar_h, left, width) = (18.0, 420.0, 900.0);
    let height = 40.0 + bar_h * rows.len() as f64 + 20.0;
    let times: Vec<Option<f64>> =
        rows.iter().map(|(_, r)| r.as_ref().ok().map(|m| m.best.as_secs_f64() * 1e3)).collect();
    let max = times.iter().flatten().fold(1e-3f64, |a, &b| a.max(b));
    let min = times.iter().flatten().fold(max, |a, &b| a.min(b)).max(1e-4);
    let span = (max / min).log10().max(1.0);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"monospace\" font-size=\"11\">\n\
         <text x=\"10\" y=\"20\" font-size=\"14\">gemm bench: best time per call (ms, log scale)</text>\n"
    );
    let esc = |t: &str| t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    for (i, ((spec, _), t)) in rows.iter().zip(&times).enumerate() {
        let y = 40.0 + bar_h * i as f64;
        let p = &spec.batch.problem;
        let label = format!(
            "#{i} {}x{}x{} {}->{} b{}{}",
            p.m,
            p.n,
            p.k,
            p.a_type,
            p.c_type,
            spec.batch.count,
            if spec.resident { " dev" } else { "" }
        );
        let _ = writeln!(s, "<text x=\"10\" y=\"{:.1}\">{}</text>", y + 12.0, esc(&label));
        match t {
            Some(ms) => {
                let w = ((ms / min).log10() / span).clamp(0.0, 1.0) * (width - left - 120.0) + 2.0;
                let _ = writeln!(
                    s,
                    "<rect x=\"{left}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"#4a7ebb\"/>\
                     <text x=\"{:.1}\" y=\"{:.1}\">{ms:.3}</text>",
                    bar_h - 4.0,
                    left + w + 4.0,
                    y + 12.0
                );
            }
            None => {
                let _ = writeln!(s, "<text x=\"{left}\" y=\"{:.1}\" fill=\"#b00\">failed</text>", y + 12.0);
            }
        }
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn logged_commands_parse_back_into_their_problem() {
        let spec = parse(&args(
            "gemm --devices host run --m 7 --n 5 --k 3 --dtype bf16 --out-dtype f32 --layout col --lda 9 --ldb 6 \
             --ldc 8 --transb --alpha 1.5 --beta -0.5 --batch 3 --stride-a 70 --stride-b 0 --stride-c 40",
        ))
        .unwrap();
        let p = spec.batch.problem;
        assert_eq!((p.m, p.n, p.k, p.lda, p.ldb, p.ldc), (7, 5, 3, 9, 6, 8));
        assert_eq!((p.layout, p.trans_b, p.alpha, p.beta), (Layout::ColMajor, Transpose::Yes, 1.5, -0.5));
        assert_eq!((p.a_type, p.b_type, p.c_type), (DType::Bf16, DType::Bf16, DType::F32));
        assert_eq!((spec.batch.count, spec.batch.stride_a, spec.batch.stride_b, spec.batch.stride_c), (3, 70, 0, 40));
        assert_eq!(spec.devices.as_deref(), Some("host"));
        assert!(parse(&args("gemm run --m 1 --n 1")).is_err());
    }

    #[test]
    fn reruns_measure_check_and_tabulate() {
        let specs: Vec<RunSpec> = [
            "gemm --devices host run --m 9 --n 7 --k 5 --beta 0.5",
            "gemm --devices host run --m 6 --n 4 --k 3 --dtype bf16 --out-dtype f32 --batch 2 --ldc 5 --stride-c 31",
        ]
        .iter()
        .map(|s| parse(&args(s)).unwrap())
        .collect();
        let rows: Vec<_> = specs.into_iter().map(|s| (s.clone(), measure(&s, 2))).collect();
        for (_, r) in &rows {
            let m = r.as_ref().unwrap();
            assert_eq!(m.runs, 2);
            assert!(m.error_ratio <= 1.0, "{m:?}");
        }
        let table = csv(&rows);
        assert_eq!(table.lines().count(), 3, "{table}");
        assert!(table.lines().skip(1).all(|l| l.ends_with(",ok")), "{table}");
        assert!(svg(&rows).contains("</svg>"));
    }

    #[test]
    fn runs_that_cannot_fit_are_refused_with_their_size() {
        let p = GemmProblem::new(100_000_000, 100_000_000, 10);
        let batch = StridedBatch { problem: p, count: 1, stride_a: 0, stride_b: 0, stride_c: 0 };
        let need = host_bytes(&batch).unwrap();
        assert_eq!(need, (2 * 1_000_000_000 + 2 * 10_000_000_000_000_000u128) * 4);
        let e = ensure_host_memory(need, "the run").unwrap_err();
        assert!(e.contains("GiB of host memory") && e.contains("available"), "{e}");
    }
}
