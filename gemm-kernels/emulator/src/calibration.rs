//! The calibration set: foreign GEMM kernels whose real speed on an MI300X/MI355X is
//! published, kept as test data under `tests/data/calibration/` (sources with their
//! attribution, `build.sh`, the code objects, one TOML manifest per kernel in `kernels/`).
//!
//! This module reads the manifests into typed values so that the emulator's tests and the
//! timing model's calibration command iterate the same list: for each kernel, which code
//! object to load for a problem size, how to launch it (grid, block, dynamic LDS, kernel
//! arguments laid out as [`crate::Device::launch_with`] takes them), and the published
//! TFLOP/s with where it was published (issue 10, item 5).
//!
//! ```no_run
//! use gemm_emu::{calibration, Device};
//! let set = calibration::load_dir(&calibration::default_dir()).unwrap();
//! for k in &set {
//!     for p in &k.published {
//!         println!("{} {}x{}x{} {} TFLOP/s on {} ({})", k.name, p.m, p.n, p.k, p.tflops, p.gpu, p.source);
//!         // Buffers (contents do not change the time of these kernels) and the launch.
//!         let dev = Device::new(k.arch);
//!         let [a, b, c] = k.buffer_bytes(p.m, p.n, p.k).map(|n| dev.alloc(n as u64).unwrap());
//!         let plan = k.plan(p.m, p.n, p.k, a, b, c).unwrap();
//!         // plan.code_object, plan.symbol, plan.grid, plan.block, plan.kernarg,
//!         // plan.dynamic_lds and plan.flops are what a timed launch takes.
//!     }
//! }
//! ```

use crate::timing::{CacheState, Params};
use gemm_core::dtype::DType;
use gemm_isa::Arch;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Why a manifest could not be used.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {source}")]
    Toml { path: PathBuf, source: Box<toml::de::Error> },
    #[error("{path}: {field}: {why}")]
    Invalid { path: PathBuf, field: &'static str, why: String },
    #[error("{kernel}: no code object for {m}x{n}x{k} (size-specialised: {sizes:?})")]
    NoCodeObject { kernel: String, m: usize, n: usize, k: usize, sizes: Vec<[usize; 3]> },
    #[error("{kernel}: {m}x{n}x{k}: {why}")]
    BadSize { kernel: String, m: usize, n: usize, k: usize, why: String },
}

/// How the grid follows from the problem size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridKind {
    /// `[ceil(N/tile_n), ceil(M/tile_m), 1]`: blockIdx.x walks columns, blockIdx.y rows.
    Tiles2d,
    /// `[ceil(M/tile_m) * ceil(N/tile_n), 1, 1]`: one linear workgroup id per C tile.
    TilesLinear,
    /// `[CUs, 1, 1]`: persistent workgroups, one per CU of the arch (vLLM's and rocBLAS's
    /// wvSplitK launch `dim3 grid(CuCount)`).
    Cus,
}

/// A buffer a kernel argument points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    A,
    B,
    C,
    /// A null pointer (e.g. Triton's unused scratch pointers).
    Null,
}

/// A problem dimension or a literal, the value of a scalar argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    M,
    N,
    K,
    Int(i64),
    Float(f64),
    /// The arch's CU count (the `CuCount` a host launcher reads from the device).
    Cus,
    /// vLLM's `mindiv(N, div1, div2)` with `div1 = per_cu x CUs`, as its host function
    /// `wvSplitK` computes the waves per workgroup (`manifest: "mindiv(n, 2*cus, 16)"`):
    /// the fewest of `div2, div2-3, ..., div2-9` waves that still need as many rounds of
    /// `div1 x waves` rows as `div2` waves do.
    Mindiv {
        per_cu: i64,
        div2: i64,
    },
}

/// vLLM's `mindiv` (csrc/rocm/skinny_gemms.cu, v0.9.0), re-stated: rounds of `div1 * w`
/// rows for `w = div2` against `w = div2 - 3 ... div2 - 9`; the last `w` with as many
/// rounds as `div2` wins.
pub fn mindiv(n: i64, div1: i64, div2: i64) -> i64 {
    let rounds = |w: i64| if div1 * w > 0 { n / (div1 * w) } else { i64::MAX };
    let r0 = rounds(div2);
    let mut out = div2;
    for d in 3..=9 {
        if rounds(div2 - d) == r0 {
            out = div2 - d;
        }
    }
    out
}

impl Value {
    fn eval(self, m: usize, n: usize, k: usize, cus: u32) -> f64 {
        match self {
            Value::M => m as f64,
            Value::N => n as f64,
            Value::K => k as f64,
            Value::Int(v) => v as f64,
            Value::Float(v) => v,
            Value::Cus => f64::from(cus),
            Value::Mindiv { per_cu, div2 } => mindiv(n as i64, per_cu * i64::from(cus), div2) as f64,
        }
    }
}

/// One kernel argument, in order; laid out with natural alignment as clang and Triton do.
/// A struct passed by value (HipKittens' global layouts) is written as its fields in order,
/// padding included (an `i64` of 0 for 8 bytes of padding).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg {
    /// A 64-bit global pointer.
    Ptr(Buffer),
    I32(Value),
    /// A 64-bit integer (`size_t` fields of a struct argument).
    I64(Value),
    F32(Value),
}

impl Arg {
    /// Bytes, and the alignment: natural.
    pub fn size(&self) -> usize {
        match self {
            Arg::Ptr(_) | Arg::I64(_) => 8,
            Arg::I32(_) | Arg::F32(_) => 4,
        }
    }
}

/// How to launch the kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub block: [u32; 3],
    pub grid: GridKind,
    pub tile_m: usize,
    pub tile_n: usize,
    /// Bytes of dynamic LDS (Triton allocates all its LDS dynamically).
    pub dynamic_lds: u32,
    /// False where the source did not publish the launch and the manifest chose it.
    pub launch_published: bool,
    pub args: Vec<Arg>,
}

/// One code object of a kernel: generic, or specialised to one problem size.
#[derive(Clone, Debug, PartialEq)]
pub struct CodeObject {
    /// Path of the code object (absolute: the manifest directory joined with the file).
    pub path: PathBuf,
    /// Kernel symbol (without `.kd`).
    pub symbol: String,
    /// `[M, N, K]` for a code object compiled for one size (template parameters).
    pub size: Option<[usize; 3]>,
    /// This code object's output tile (M, N), where it is not the launch's (`tile_m`,
    /// `tile_n`): HipKittens' 4-wave fp8 GEMM has a kernel of its own, with its own tile, at
    /// 1024^3 and 2048^3.
    pub tile: Option<[usize; 2]>,
}

/// How the source timed a published figure (manifest `timing`, required on every point): the
/// model predicts the kernel alone, from its first workgroup dispatched to its last wave
/// retired, and a figure that also holds the launch is compared with that plus
/// [`PER_LAUNCH_OVERHEAD_S`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// `per_launch_events`: each launch timed alone between events the host records around it
    /// (hipEventRecord, torch.cuda.Event), with a synchronize between launches, so the GPU
    /// idles while the host makes the launch call and the interval holds the launch overhead:
    /// HipKittens' harnesses, the CDNA4 blog's companion notebook.
    PerLaunchEvents,
    /// `profiler`: the kernel's duration from a profiler's dispatch timestamps (rocprof,
    /// rocprofv3 `--kernel-trace`): the kernel alone (the Gluon tutorials' `bench.py
    /// --rocprof`).
    Profiler,
    /// `back_to_back`: many launches queued back to back and the total divided by their
    /// count (hipblaslt-bench, rocblas-bench): each launch's overhead overlaps the previous
    /// kernel.
    BackToBack,
    /// `not_stated`: the source does not say; compared as the kernel alone, and the point's
    /// notes say so.
    NotStated,
}

impl Timing {
    /// The manifest names, in the order of the variants.
    pub const NAMES: [&'static str; 4] = ["per_launch_events", "profiler", "back_to_back", "not_stated"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The seconds a figure timed this way holds besides the kernel: [`PER_LAUNCH_OVERHEAD_S`]
    /// for a figure timed per launch, else 0.
    pub fn overhead_s(self) -> f64 {
        match self {
            Timing::PerLaunchEvents => PER_LAUNCH_OVERHEAD_S,
            Timing::Profiler | Timing::BackToBack | Timing::NotStated => 0.0,
        }
    }
}

impl std::str::FromStr for Timing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "per_launch_events" => Ok(Timing::PerLaunchEvents),
            "profiler" => Ok(Timing::Profiler),
            "back_to_back" => Ok(Timing::BackToBack),
            "not_stated" => Ok(Timing::NotStated),
            t => Err(format!("`{t}`: expected one of {}", Self::NAMES.join(", "))),
        }
    }
}

/// The launch overhead in a figure timed per launch ([`Timing::PerLaunchEvents`]): 4.0 us,
/// added to the model's kernel time before the comparison (issue 24, item 7d).
///
/// What it is: a harness that records a start event, launches one kernel, records a stop
/// event and synchronizes (HipKittens' `analysis/bf16_gemm/mi350x/test_python.py` and
/// `kernels/gemm/fp8fp32/FP8_4wave/4_wave.cu` `matmul_host`; the CDNA4 blog's companion
/// notebook, ROCm/gpuaidev `fp8_gemm_hip_cdna4.ipynb` cell 5942be1c91 `benchmark_module`)
/// starts its interval when the command processor reaches the start marker, with the GPU
/// otherwise idle, so the interval holds the host's launch call, the processing of the
/// dispatch packet and the stop marker besides the kernel. A profiler's dispatch timestamps,
/// or events carried in the kernel's AQL packet (`hipExtLaunchKernelGGL`), hold the kernel
/// alone, and that is what the model predicts.
///
/// Sources (there is no published figure for gfx950 with both timings of one kernel):
/// - ROCm/TransferBench pull request 297, "Adding 'empty' kernel launch preset" (AMD, 11 May
///   2026), the description's example output: an empty kernel (grid 256, block 256) launched
///   alone between hipEvents, one launch per synchronize (batch size 1): EvtMin 4.04 us.
/// - ROCm/Tensile pull request 1379, "Fix hipErrorInvalidHandle during benchmarks" (22 Jul
///   2021, ROCm 4.2): recording the events around each launch instead of passing them in the
///   launch (`hipExtLaunchKernelGGL`) "adds additional overhead ... about 6 or 7 microseconds
///   per kernel launch based on my brief experiments".
///
/// Chosen: 4.0 us, TransferBench's figure, the one measured with the ROCm generation of the
/// figures timed this way (ROCm 7.x, 2025-26) and with their harness shape (one launch between
/// two events, then a synchronize). As the overhead of a real kernel it errs both ways and by
/// less than a microsecond or two: it includes the empty kernel's own run (the overhead alone is
/// less), and it is the minimum of its runs where the sources average theirs (theirs is more).
/// Tensile's 6-7 us measures exactly the difference wanted but on a runtime five years older;
/// `gemm calibrate` prints the points that move at [`PER_LAUNCH_OVERHEAD_ALT_S`] instead.
/// Consistency with the published times: HipKittens' bf16 1024^3 takes 15.40 us a launch and
/// its fp8 1024^3 7.95 us (270.13 TFLOP/s; `avg_time` 0.008 ms), so the overhead is under 8 us
/// there, which both sources satisfy.
pub const PER_LAUNCH_OVERHEAD_S: f64 = 4.0e-6;

/// Tensile's figure for the same overhead (ROCm/Tensile pull request 1379: "about 6 or 7
/// microseconds per kernel launch", the middle taken), the alternative that `gemm calibrate`
/// prints beside [`PER_LAUNCH_OVERHEAD_S`] as a sensitivity, not used for the error.
pub const PER_LAUNCH_OVERHEAD_ALT_S: f64 = 6.5e-6;

/// A published measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Published {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub tflops: f64,
    /// The published kernel time in milliseconds, where the source gives it (then
    /// `tflops` must equal 2MNK/time to the precision printed: a transcription check).
    pub time_ms: Option<f64>,
    /// The GPU it was measured on (MI300X, MI325X, MI355X).
    pub gpu: String,
    /// The Infinity Cache state the figure was measured in, where the manifest says (the
    /// model predicts the point in that state; GEMMs of the set before the decode kernels
    /// leave it unset: cold, with the MALL sharing of resident workgroups).
    pub cache: Option<CacheState>,
    /// Exactly where: repository + path + commit or URL, and the table or sentence.
    pub source: String,
    /// How the source timed it (manifest `timing`, required).
    pub timing: Timing,
    /// Why this figure is printed beside this kernel but not scored (manifest `not_scored`):
    /// the figure is another kernel's, kept so that the two can be compared. `None`: scored.
    pub not_scored: Option<String>,
    pub notes: String,
}

impl Published {
    /// Whether the figure counts in the score (the ±25 % band, the geometric mean, the order
    /// check and the plot).
    pub fn scored(&self) -> bool {
        self.not_scored.is_none()
    }
}

/// What the functional test expects in the emulator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Runs and matches the reference, with no checker findings.
    Pass,
    /// Refused today; the text is what the refusal must mention (so the test fails, and
    /// must be updated, once the emulator learns it).
    Unsupported(String),
    /// Runs and matches the reference, but the race detector reports LDS races in the
    /// foreign code itself; every finding must be a race whose text contains this.
    KnownRaces(String),
    /// Runs and matches the reference, but the checkers (race, wait, hazard) report findings
    /// in the foreign code itself: every finding's text contains one of these, and there is
    /// at least one (manifest: `known-findings: <text> | <text> ...`).
    KnownFindings(Vec<String>),
}

/// The emulator test case of a kernel (a small size the kernel allows).
#[derive(Clone, Debug, PartialEq)]
pub struct TestCase {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub expect: Expect,
    /// Scheduling modes in which the kernel's own known findings (`known-findings`) make
    /// its result wrong: the test requires the wrong result there (HipKittens' 256-tile
    /// GEMMs read LDS-DMA data they never wait for; in the longest-latency mode it has not
    /// landed).
    pub wrong_result_modes: Vec<crate::Mode>,
}

/// Element types of A, B and C (C = A * B^T: A is M x K, B is N x K, both row-major, C
/// is M x N row-major, for every kernel of the set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DTypes {
    pub a: DType,
    pub b: DType,
    pub c: DType,
}

/// Everything one launch of a calibration kernel needs, in the shape of
/// [`crate::Device::launch_with`]'s arguments (and of the timing model's workload).
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchPlan {
    pub code_object: Vec<u8>,
    pub symbol: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub kernarg: Vec<u8>,
    pub dynamic_lds: u32,
    /// 2MNK.
    pub flops: f64,
}

/// One calibration kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: String,
    pub title: String,
    pub arch: Arch,
    /// Compiler and route that built the code objects.
    pub producer: String,
    /// Source files, relative to the set's directory.
    pub sources: Vec<PathBuf>,
    pub notes: String,
    pub dtype: DTypes,
    pub launch: Launch,
    /// How the order check compares this kernel's points: by TFLOP/s (GEMMs), or by time
    /// (`order_by = "time"`: decode GEMVs, whose published order is one of times).
    pub order_by_time: bool,
    pub code_objects: Vec<CodeObject>,
    pub published: Vec<Published>,
    pub test: TestCase,
    /// The manifest this came from.
    pub manifest: PathBuf,
}

impl Kernel {
    /// The code object to run `m x n x k` with: the one specialised to that size, else the
    /// generic one.
    pub fn code_object(&self, m: usize, n: usize, k: usize) -> Result<&CodeObject, CalibrationError> {
        let exact = self.code_objects.iter().find(|c| c.size == Some([m, n, k]));
        exact.or_else(|| self.code_objects.iter().find(|c| c.size.is_none())).ok_or_else(|| {
            CalibrationError::NoCodeObject {
                kernel: self.name.clone(),
                m,
                n,
                k,
                sizes: self.code_objects.iter().filter_map(|c| c.size).collect(),
            }
        })
    }

    /// Grid in workgroups for `m x n` with the launch's tile.
    pub fn grid(&self, m: usize, n: usize) -> [u32; 3] {
        self.grid_with_tile(m, n, [self.launch.tile_m, self.launch.tile_n])
    }

    /// Grid in workgroups for `m x n` with code object `co` (its own tile where it has one).
    pub fn grid_for(&self, co: &CodeObject, m: usize, n: usize) -> [u32; 3] {
        self.grid_with_tile(m, n, co.tile.unwrap_or([self.launch.tile_m, self.launch.tile_n]))
    }

    fn grid_with_tile(&self, m: usize, n: usize, [tile_m, tile_n]: [usize; 2]) -> [u32; 3] {
        let (tm, tn) = (m.div_ceil(tile_m) as u32, n.div_ceil(tile_n) as u32);
        match self.launch.grid {
            GridKind::Tiles2d => [tn, tm, 1],
            GridKind::TilesLinear => [tm * tn, 1, 1],
            GridKind::Cus => [Params::for_arch(self.arch).cus(), 1, 1],
        }
    }

    /// (byte offset, size) of each argument in the kernarg segment: natural alignment, 8
    /// for pointers and 64-bit scalars and 4 for 32-bit ones, as clang and Triton lay them
    /// out (the test compares this with each code object's metadata).
    pub fn arg_layout(&self) -> Vec<(usize, usize)> {
        let mut end = 0usize;
        self.launch
            .args
            .iter()
            .map(|a| {
                let size = a.size();
                let at = end.next_multiple_of(size);
                end = at + size;
                (at, size)
            })
            .collect()
    }

    /// The kernel-argument bytes for `m x n x k` with A, B, C at the given device
    /// addresses, laid out as [`Kernel::arg_layout`] says.
    pub fn kernarg(&self, m: usize, n: usize, k: usize, a: u64, b: u64, c: u64) -> Result<Vec<u8>, CalibrationError> {
        let mut out = Vec::new();
        let layout = self.arg_layout();
        let cus = Params::for_arch(self.arch).cus();
        for (arg, &(at, _)) in self.launch.args.iter().zip(&layout) {
            out.resize(at, 0);
            match *arg {
                Arg::Ptr(buf) => {
                    let p = match buf {
                        Buffer::A => a,
                        Buffer::B => b,
                        Buffer::C => c,
                        Buffer::Null => 0,
                    };
                    out.extend_from_slice(&p.to_le_bytes());
                }
                Arg::I32(v) | Arg::I64(v) => {
                    let wide = matches!(arg, Arg::I64(_));
                    let x = v.eval(m, n, k, cus);
                    let (lo, hi) = if wide { (-9.0e15, 9.0e15) } else { (f64::from(i32::MIN), f64::from(i32::MAX)) };
                    if x.fract() != 0.0 || x < lo || x > hi {
                        return Err(CalibrationError::BadSize {
                            kernel: self.name.clone(),
                            m,
                            n,
                            k,
                            why: format!("{} argument {v:?} = {x} does not fit", if wide { "i64" } else { "i32" }),
                        });
                    }
                    if wide {
                        out.extend_from_slice(&(x as i64).to_le_bytes());
                    } else {
                        out.extend_from_slice(&(x as i32).to_le_bytes());
                    }
                }
                Arg::F32(v) => {
                    out.extend_from_slice(&(v.eval(m, n, k, cus) as f32).to_le_bytes());
                }
            }
        }
        Ok(out)
    }

    /// 2MNK, the work the published TFLOP/s divide by the time.
    pub fn flops(m: usize, n: usize, k: usize) -> f64 {
        2.0 * m as f64 * n as f64 * k as f64
    }

    /// Bytes of A (M x K), B (N x K) and C (M x N) in their dtypes.
    pub fn buffer_bytes(&self, m: usize, n: usize, k: usize) -> [usize; 3] {
        [m * k * self.dtype.a.size_bytes(), n * k * self.dtype.b.size_bytes(), m * n * self.dtype.c.size_bytes()]
    }

    /// The launch of `m x n x k` with A, B, C at the given device addresses: reads the
    /// code object for that size and lays out the kernel arguments.
    pub fn plan(&self, m: usize, n: usize, k: usize, a: u64, b: u64, c: u64) -> Result<LaunchPlan, CalibrationError> {
        let co = self.code_object(m, n, k)?;
        let code_object =
            std::fs::read(&co.path).map_err(|source| CalibrationError::Io { path: co.path.clone(), source })?;
        Ok(LaunchPlan {
            code_object,
            symbol: co.symbol.clone(),
            grid: self.grid_for(co, m, n),
            block: self.launch.block,
            kernarg: self.kernarg(m, n, k, a, b, c)?,
            dynamic_lds: self.launch.dynamic_lds,
            flops: Self::flops(m, n, k),
        })
    }
}

/// The set's directory in this crate: `tests/data/calibration`.
pub fn default_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/calibration")
}

/// Reads every `kernels/*.toml` of a calibration directory, sorted by name.
pub fn load_dir(dir: &Path) -> Result<Vec<Kernel>, CalibrationError> {
    let kdir = dir.join("kernels");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&kdir)
        .map_err(|source| CalibrationError::Io { path: kdir.clone(), source })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    let mut out = Vec::with_capacity(paths.len());
    for p in paths {
        out.push(load(dir, &p)?);
    }
    Ok(out)
}

/// Reads one manifest; relative paths in it are relative to `dir`.
pub fn load(dir: &Path, manifest: &Path) -> Result<Kernel, CalibrationError> {
    let text =
        std::fs::read_to_string(manifest).map_err(|source| CalibrationError::Io { path: manifest.into(), source })?;
    let raw: RawKernel = toml::from_str(&text)
        .map_err(|source| CalibrationError::Toml { path: manifest.into(), source: Box::new(source) })?;
    let bad = |field: &'static str, why: String| CalibrationError::Invalid { path: manifest.into(), field, why };
    let arch = Arch::ALL
        .into_iter()
        .find(|a| a.name() == raw.arch)
        .ok_or_else(|| bad("arch", format!("unknown arch `{}`", raw.arch)))?;
    let dt = |field: &'static str, s: &str| match s.parse::<DType>() {
        Ok(d) if d.is_sub_byte() => Err(bad(field, format!("{d}: sub-byte types are not calibrated"))),
        r => r.map_err(|e| bad(field, e.to_string())),
    };
    let dtype =
        DTypes { a: dt("dtype.a", &raw.dtype.a)?, b: dt("dtype.b", &raw.dtype.b)?, c: dt("dtype.c", &raw.dtype.c)? };
    let grid = match raw.launch.grid.as_str() {
        "tiles_2d" => GridKind::Tiles2d,
        "tiles_linear" => GridKind::TilesLinear,
        "cus" => GridKind::Cus,
        g => return Err(bad("launch.grid", format!("`{g}`: expected tiles_2d, tiles_linear or cus"))),
    };
    if raw.launch.tile_m == 0 || raw.launch.tile_n == 0 || raw.launch.block.contains(&0) {
        return Err(bad("launch", "tile and block sizes must be positive".into()));
    }
    let value = |s: &str| -> Result<Value, CalibrationError> {
        Ok(match s {
            "m" => Value::M,
            "n" => Value::N,
            "k" => Value::K,
            "cus" => Value::Cus,
            f if f.starts_with("mindiv(") => {
                // mindiv(n, <per_cu>*cus, <div2>)
                let inner = f.strip_prefix("mindiv(").and_then(|r| r.strip_suffix(')'));
                let parts: Vec<&str> = inner.map(|r| r.split(',').map(str::trim).collect()).unwrap_or_default();
                let per_cu = parts.get(1).and_then(|p| p.strip_suffix("*cus")).and_then(|p| p.parse().ok());
                match (parts.first(), per_cu, parts.get(2).and_then(|p| p.parse().ok())) {
                    (Some(&"n"), Some(per_cu), Some(div2)) if parts.len() == 3 => Value::Mindiv { per_cu, div2 },
                    _ => return Err(bad("launch.args", format!("`{f}`: expected mindiv(n, <int>*cus, <int>)"))),
                }
            }
            lit if lit.contains('.') => {
                Value::Float(lit.parse().map_err(|_| bad("launch.args", format!("bad number `{lit}`")))?)
            }
            lit => Value::Int(lit.parse().map_err(|_| bad("launch.args", format!("bad value `{lit}`")))?),
        })
    };
    let mut args = Vec::with_capacity(raw.launch.args.len());
    for a in &raw.launch.args {
        args.push(match a.kind.as_str() {
            "buffer" => Arg::Ptr(match a.value.as_str() {
                "a" => Buffer::A,
                "b" => Buffer::B,
                "c" => Buffer::C,
                "null" => Buffer::Null,
                v => return Err(bad("launch.args", format!("buffer `{v}`: expected a, b, c or null"))),
            }),
            "i32" => Arg::I32(value(&a.value)?),
            "i64" => Arg::I64(value(&a.value)?),
            "f32" => Arg::F32(value(&a.value)?),
            kind => return Err(bad("launch.args", format!("kind `{kind}`: expected buffer, i32, i64 or f32"))),
        });
    }
    if raw.code_object.is_empty() {
        return Err(bad("code_object", "no code object".into()));
    }
    let code_objects = raw
        .code_object
        .into_iter()
        .map(|c| CodeObject { path: dir.join(&c.file), symbol: c.symbol, size: c.size, tile: c.tile })
        .collect::<Vec<_>>();
    if code_objects.iter().any(|c| c.tile.is_some_and(|t| t.contains(&0))) {
        return Err(bad("code_object.tile", "tile sizes must be positive".into()));
    }
    let mut published = Vec::with_capacity(raw.published.len());
    for p in raw.published {
        let cache = match p.cache.as_deref() {
            None => None,
            Some(c) => Some(c.parse::<CacheState>().map_err(|e| bad("published.cache", e))?),
        };
        let timing = p.timing.parse::<Timing>().map_err(|e| bad("published.timing", e))?;
        if p.not_scored.as_deref().is_some_and(|w| w.trim().is_empty()) {
            return Err(bad("published.not_scored", "say why the figure is not scored".into()));
        }
        published.push(Published {
            m: p.m,
            n: p.n,
            k: p.k,
            tflops: p.tflops,
            time_ms: p.time_ms,
            gpu: p.gpu,
            cache,
            source: p.source,
            timing,
            not_scored: p.not_scored,
            notes: p.notes,
        });
    }
    if published.is_empty()
        || published.iter().any(|p| !p.tflops.is_finite() || p.tflops <= 0.0 || p.source.trim().is_empty())
    {
        return Err(bad("published", "each kernel needs a positive published TFLOP/s with its source".into()));
    }
    let order_by_time = match raw.order_by.as_deref() {
        None | Some("tflops") => false,
        Some("time") => true,
        Some(o) => return Err(bad("order_by", format!("`{o}`: expected tflops or time"))),
    };
    let wrong_result_modes = raw
        .test
        .wrong_result_modes
        .iter()
        .map(|m| crate::Mode::parse(m).ok_or_else(|| bad("test.wrong_result_modes", format!("unknown mode `{m}`"))))
        .collect::<Result<Vec<_>, _>>()?;
    let expect = match raw.test.expect.as_str() {
        "pass" => Expect::Pass,
        e => match (e.strip_prefix("unsupported:"), e.strip_prefix("known-races:"), e.strip_prefix("known-findings:")) {
            (Some(why), _, _) if !why.trim().is_empty() => Expect::Unsupported(why.trim().to_string()),
            (_, Some(what), _) if !what.trim().is_empty() => Expect::KnownRaces(what.trim().to_string()),
            (_, _, Some(what)) if what.split('|').all(|w| !w.trim().is_empty()) => {
                Expect::KnownFindings(what.split('|').map(|w| w.trim().to_string()).collect())
            }
            _ => {
                return Err(bad(
                    "test.expect",
                    format!(
                        "`{e}`: expected pass, unsupported: <reason>, known-races: <finding text> or known-findings: <text> | <text> ..."
                    ),
                ))
            }
        },
    };
    Ok(Kernel {
        name: raw.name,
        title: raw.title,
        arch,
        producer: raw.producer,
        sources: raw.sources.into_iter().map(PathBuf::from).collect(),
        notes: raw.notes,
        dtype,
        launch: Launch {
            block: raw.launch.block,
            grid,
            tile_m: raw.launch.tile_m,
            tile_n: raw.launch.tile_n,
            dynamic_lds: raw.launch.dynamic_lds,
            launch_published: raw.launch.launch_published,
            args,
        },
        order_by_time,
        code_objects,
        published,
        test: TestCase { m: raw.test.m, n: raw.test.n, k: raw.test.k, expect, wrong_result_modes },
        manifest: manifest.to_path_buf(),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKernel {
    name: String,
    title: String,
    arch: String,
    producer: String,
    sources: Vec<String>,
    #[serde(default)]
    notes: String,
    dtype: RawDTypes,
    #[serde(default)]
    order_by: Option<String>,
    launch: RawLaunch,
    code_object: Vec<RawCodeObject>,
    published: Vec<RawPublished>,
    test: RawTest,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDTypes {
    a: String,
    b: String,
    c: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLaunch {
    block: [u32; 3],
    grid: String,
    tile_m: usize,
    tile_n: usize,
    dynamic_lds: u32,
    launch_published: bool,
    args: Vec<RawArg>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArg {
    kind: String,
    value: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCodeObject {
    file: String,
    symbol: String,
    size: Option<[usize; 3]>,
    #[serde(default)]
    tile: Option<[usize; 2]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPublished {
    m: usize,
    n: usize,
    k: usize,
    tflops: f64,
    time_ms: Option<f64>,
    gpu: String,
    #[serde(default)]
    cache: Option<String>,
    source: String,
    /// Required: a point without its timing method is refused (issue 24, item 7d).
    timing: String,
    #[serde(default)]
    not_scored: Option<String>,
    #[serde(default)]
    notes: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTest {
    m: usize,
    n: usize,
    k: usize,
    expect: String,
    #[serde(default)]
    wrong_result_modes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
title = "t"
arch = "gfx950"
producer = "p"
sources = []
[dtype]
a = "fp8_e4m3"
b = "fp8_e4m3"
c = "bf16"
[launch]
block = [256, 1, 1]
grid = "tiles_linear"
tile_m = 256
tile_n = 128
dynamic_lds = 0
launch_published = true
args = [
    { kind = "buffer", value = "a" },
    { kind = "i32", value = "k" },
    { kind = "buffer", value = "null" },
    { kind = "f32", value = "0.5" },
]
[[code_object]]
file = "x.co"
symbol = "x"
[[published]]
m = 4096
n = 4096
k = 4096
tflops = 1.0
gpu = "MI355X"
source = "somewhere"
timing = "per_launch_events"
[test]
m = 256
n = 256
k = 256
expect = "pass"
"#;

    /// `text` as a manifest file of its own: one file per call, since the tests run in parallel
    /// and two manifests could share any name derived from their text (a length-and-byte-sum
    /// name did: `per_launch_events` and a same-sum variant raced, one test reading the other's
    /// half-written file).
    fn parse(text: &str) -> Result<Kernel, CalibrationError> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!("gemm-emu-calibration-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{}.toml", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
        std::fs::write(&path, text).unwrap();
        load(&dir, &path)
    }

    #[test]
    fn a_manifest_gives_grid_and_kernarg() {
        let k = parse(GOOD).unwrap();
        assert_eq!(k.grid(512, 384), [2 * 3, 1, 1]);
        assert_eq!(k.arg_layout(), vec![(0, 8), (8, 4), (16, 8), (24, 4)]);
        let args = k.kernarg(512, 384, 96, 0x1000, 0x2000, 0x3000).unwrap();
        assert_eq!(args.len(), 28);
        assert_eq!(u64::from_le_bytes(args[0..8].try_into().unwrap()), 0x1000);
        assert_eq!(i32::from_le_bytes(args[8..12].try_into().unwrap()), 96);
        assert_eq!(u64::from_le_bytes(args[16..24].try_into().unwrap()), 0);
        assert_eq!(f32::from_le_bytes(args[24..28].try_into().unwrap()), 0.5);
        assert_eq!(k.code_object(1, 2, 3).unwrap().symbol, "x");
    }

    /// Struct fields (`i64`) and a code object with a tile of its own (HipKittens).
    #[test]
    fn i64_arguments_and_a_code_object_tile() {
        let text = GOOD
            .replace(r#"{ kind = "i32", value = "k" },"#, r#"{ kind = "i64", value = "k" }, { kind = "i64", value = "0" },"#)
            .replace("symbol = \"x\"\n", "symbol = \"x\"\n[[code_object]]\nfile = \"y.co\"\nsymbol = \"y\"\nsize = [1024, 1024, 1024]\ntile = [64, 64]\n");
        let k = parse(&text).unwrap();
        assert_eq!(k.arg_layout(), vec![(0, 8), (8, 8), (16, 8), (24, 8), (32, 4)]);
        let args = k.kernarg(512, 384, 96, 0x1000, 0, 0).unwrap();
        assert_eq!(i64::from_le_bytes(args[8..16].try_into().unwrap()), 96);
        assert_eq!(i64::from_le_bytes(args[16..24].try_into().unwrap()), 0);
        let y = k.code_object(1024, 1024, 1024).unwrap();
        assert_eq!((y.symbol.as_str(), y.tile), ("y", Some([64, 64])));
        assert_eq!(k.grid_for(y, 1024, 1024), [256, 1, 1]);
        let x = k.code_object(512, 384, 96).unwrap();
        assert_eq!(k.grid_for(x, 512, 384), k.grid(512, 384));
        assert!(parse(&text.replace("tile = [64, 64]", "tile = [0, 64]")).is_err());
    }

    /// vLLM's wvSplitK launch: grid = CU count, and `mindiv(N, 2 x 304, 16)` waves per
    /// workgroup on MI300X, checked against the function's arithmetic done by hand: for N =
    /// 10944, 9728 rows per round of 16 waves give 1 round, and so do 13 (7904), 12, 11, 10
    /// (6080) waves, but 9 (5472) give 2: 10 waves. For 76032 no smaller count keeps 7
    /// rounds: 16.
    #[test]
    fn a_persistent_launch_reads_the_cu_count_and_vllms_mindiv() {
        let text = GOOD.replace("gfx950", "gfx942").replace("tiles_linear", "cus").replace(
            "{ kind = \"f32\", value = \"0.5\" },",
            "{ kind = \"f32\", value = \"0.5\" },\n    { kind = \"i32\", value = \"mindiv(n, 2*cus, 16)\" },\n    { kind = \"i32\", value = \"cus\" },",
        );
        let k = parse(&text).unwrap();
        assert_eq!(k.grid(1, 10944), [304, 1, 1]);
        let args = k.kernarg(1, 10944, 1536, 0, 0, 0).unwrap();
        assert_eq!(i32::from_le_bytes(args[28..32].try_into().unwrap()), 10);
        assert_eq!(i32::from_le_bytes(args[32..36].try_into().unwrap()), 304);
        assert_eq!(mindiv(76032, 608, 16), 16);
        assert_eq!(mindiv(4096, 608, 16), 7);
    }

    /// Every point names how its source timed it; only a figure timed per launch holds the
    /// launch overhead; a `not_scored` point says why.
    #[test]
    fn a_point_needs_its_timing_method() {
        let k = parse(GOOD).unwrap();
        assert_eq!(k.published[0].timing, Timing::PerLaunchEvents);
        assert!(k.published[0].scored());
        // A manifest without a timing method is refused.
        assert!(matches!(
            parse(&GOOD.replace("timing = \"per_launch_events\"\n", "")),
            Err(CalibrationError::Toml { .. })
        ));
        let bad = parse(&GOOD.replace("\"per_launch_events\"", "\"stopwatch\"")).unwrap_err();
        assert!(matches!(bad, CalibrationError::Invalid { field: "published.timing", .. }), "{bad}");
        for name in Timing::NAMES {
            let k = parse(&GOOD.replace("per_launch_events", name)).unwrap();
            assert_eq!(k.published[0].timing.name(), name);
            let want = if name == "per_launch_events" { PER_LAUNCH_OVERHEAD_S } else { 0.0 };
            assert_eq!(k.published[0].timing.overhead_s(), want, "{name}");
        }
        let k =
            parse(&GOOD.replace("source = \"somewhere\"", "source = \"somewhere\"\nnot_scored = \"another kernel's\""))
                .unwrap();
        assert_eq!((k.published[0].scored(), k.published[0].not_scored.as_deref()), (false, Some("another kernel's")));
        assert!(matches!(
            parse(&GOOD.replace("source = \"somewhere\"", "source = \"somewhere\"\nnot_scored = \" \"")),
            Err(CalibrationError::Invalid { field: "published.not_scored", .. })
        ));
    }

    #[test]
    fn bad_manifests_are_typed_errors() {
        let bad = |from: &str, to: &str| parse(&GOOD.replace(from, to)).unwrap_err();
        assert!(matches!(bad("gfx950", "gfx1100"), CalibrationError::Invalid { field: "arch", .. }));
        assert!(matches!(bad("\"bf16\"", "\"bf17\""), CalibrationError::Invalid { field: "dtype.c", .. }));
        assert!(matches!(bad("tiles_linear", "tiles_3d"), CalibrationError::Invalid { field: "launch.grid", .. }));
        assert!(matches!(bad("\"null\"", "\"d\""), CalibrationError::Invalid { field: "launch.args", .. }));
        assert!(matches!(
            bad("source = \"somewhere\"", "source = \" \""),
            CalibrationError::Invalid { field: "published", .. }
        ));
        assert!(matches!(bad("tflops = 1.0", "tflops = 0.0"), CalibrationError::Invalid { field: "published", .. }));
        assert!(matches!(bad("\"pass\"", "\"maybe\""), CalibrationError::Invalid { field: "test.expect", .. }));
        assert!(matches!(
            bad("gpu = \"MI355X\"", "gpu = \"MI355X\"\ncache = \"tepid\""),
            CalibrationError::Invalid { field: "published.cache", .. }
        ));
        assert!(matches!(
            bad("\"0.5\"", "\"mindiv(n, 2*cus)\""),
            CalibrationError::Invalid { field: "launch.args", .. }
        ));
        assert!(matches!(bad("name = \"t\"", "nom = \"t\""), CalibrationError::Toml { .. }));
        let k = parse(&GOOD.replace("\"pass\"", "\"unsupported: scratch\"")).unwrap();
        assert_eq!(k.test.expect, Expect::Unsupported("scratch".into()));
        // A size-specialised code object does not serve another size.
        let k = parse(&GOOD.replace("symbol = \"x\"", "symbol = \"x\"\nsize = [256, 256, 256]")).unwrap();
        assert!(k.code_object(256, 256, 256).is_ok());
        assert!(matches!(k.code_object(512, 256, 256), Err(CalibrationError::NoCodeObject { .. })));
        // An i32 argument that does not fit is an error, not a wrapped value.
        assert!(matches!(parse(GOOD).unwrap().kernarg(1, 1, 1 << 31, 0, 0, 0), Err(CalibrationError::BadSize { .. })));
    }
}
