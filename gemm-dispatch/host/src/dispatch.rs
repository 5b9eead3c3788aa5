//! Which kernel path serves each input type, chosen at run time from the CPU's features, with no
//! measurement at first use unless asked for (`GEMM_HOST_TUNE=1`); a measurement, once made, is
//! kept per user ([`crate::cache`]) and serves every later process on the same CPU.
//!
//! # Rules ([`decide`], a pure function of features and measurements)
//!
//! | inputs | path | when |
//! |---|---|---|
//! | bf16, fp8 | `amx` (`tdpbf16ps` tiles) | AMX-TILE + AMX-BF16 and the OS granted tile data |
//! | | `avx512bf16` (`vdpbf16ps`) | else AVX512_BF16 |
//! | | `avx512` (widened to f32 panels) | else AVX-512F |
//! | | `portable` | otherwise |
//! | f16 | `avx512` (f32 panels) | AVX-512F |
//! | | `portable` | otherwise |
//! | f32 | `faer` | no AVX-512F (faer brings its own AVX2/FMA kernels) |
//! | | `avx512` | AVX-512F, nothing measured (the rule, see below) |
//! | | `avx512` unless `faer` is faster | AVX-512F and a measurement for the thread count and size class |
//!
//! # The first call runs at steady speed
//!
//! Until this version the f32 choice was *measured* at the first call of each (thread count, size
//! class) of every process: 12 GEMMs of 2048^3 before the first 2048^3 call (6.3 s instead of
//! 0.3 s on 2 loaded Zen5 cores, issue 27; 0.57 s against 0.039 s in an idle moment), 18.7 s for
//! `gemm devices`. Now the first call is within noise of a steady one (`examples/first-call.rs`;
//! median first/steady 1.085x over 12 fresh processes idle, 0.975x loaded) and `gemm devices`
//! takes 0.02 s. A measurement cheap enough to cost under 10% of the call it serves cannot be
//! made: the two paths differ by 0-15% on the
//! machines measured, one pair of 2048^3 GEMMs already costs 2 calls, and a pair at a smaller size
//! answers for another size (the winners differ by size, below). Measuring on the caller's own
//! calls (alternating paths) would cost nothing extra but would give the same GEMM different
//! rounding from call to call within a process, which a library must not do. So:
//!
//! * **the rule decides at first use**: with AVX-512F, this crate's kernel (`avx512`). It is never
//!   far from the best where measured: on 2 Zen5 cores it was 1.05-1.4x faer at 2048^3 and 4096^3
//!   (faer 1.05-1.07x it at 512^3); on 2 Zen4 cores within 1-9% of faer either way; on a 16-core
//!   Xeon faer was 4-15% faster from 1024^3 on, but faer's 16-thread split was 3-10x slower at
//!   512^3. The rule's worst case measured is 15% slower; faer's is 3-10x. One path per (thread
//!   count, size class) per process, so a GEMM repeated in a process gives the same bits;
//! * **a measurement, where one is stored, overrides the rule**: `GEMM_HOST_TUNE=1` makes the first
//!   use of each (thread count, size class) in that process measure both paths as described below
//!   (the old behaviour, 0.1-1 s per class on two cores) and store the evidence in the per-user
//!   cache ([`crate::cache`]: keyed by library version, CPU, thread count and size class; safe
//!   under concurrent processes; a corrupt file is ignored). Every later process on that CPU reads
//!   it at first use (a small file read) and runs the measured winner from its first call.
//!   `GEMM_HOST_TUNE=1 gemm devices` measures every size class at once;
//! * `GEMM_HOST_PATH` still forces a path, over both.
//!
//! # The measurement: our kernel unless faer wins by a margin, per size class
//!
//! Which of the two f32 paths is faster depends on the CPU, the thread count and the size; a
//! single timing picked differently from run to run on a noisy 16-core VM (f32 0.89-1.02x
//! OpenBLAS across runs), and one made at 1024^3 kept this crate's kernel on a 16-core Xeon where
//! faer was 5-20% faster at 2048^3 and 4096^3 on 16 threads. The measurement is therefore made
//! robust, biased toward a default, and made at the size of the call:
//!
//! * each call falls in a **size class** by the cube root of `m * n * k` ([`f32_size_class`]:
//!   512, 1024, 2048 or 4096, the nearest on a log scale), and the choice is made once per
//!   process for each (thread count, size class), on the class's GEMM ([`F32_CLASSES`]: its cube,
//!   4096 x 4096 x 512 for the 4096 class);
//! * warm-ups for each path, then the class's number of rounds that time faer and `avx512` back
//!   to back (alternating which goes first), so each pair sees the same machine state;
//! * the statistic is the **median over pairs** of `avx512 time / faer time`: a burst of other
//!   load lands in one or two pairs and moves the median little, where it can move a best-of;
//! * `avx512` (this crate's kernel) is the default and **faer is chosen only if it is faster by
//!   more than [`FAER_MARGIN`]** (2%) in that median, so that a tie does not flip from process to
//!   process; choosing our kernel within the margin costs at most the margin.
//!
//! A measurement of a class costs 22 GEMMs of 512^3 or 1024^3, 12 of 2048^3 or of
//! 4096 x 4096 x 512 (on two Zen4 cores about 0.1 s, 0.3 s, 1 s and 1 s; on 16 Xeon cores a
//! fifth).
//! Why per size: on 2-core Zen5 (previous session, under load 10-14) the median at 512^3 put faer
//! at 1.05-1.07x while at 2048^3 and 4096^3 this crate's kernel was 1.05-1.4x faer; on 2 Zen4
//! cores faer was 1.09x OpenBLAS at 2048^3 and 0.96x at 4096^3, the kernel 0.99x and 1.00x; on
//! the 16-core Xeon the kernel serves 512^3 (faer's 16-thread split is 3-10x slower there) and
//! faer wins by 4-15% from 1024^3 on.
//!
//! # Forcing a path
//!
//! `GEMM_HOST_PATH=f32:faer,bf16:amx,f16:portable` (any subset, comma-separated `class:path`,
//! classes `f32`, `bf16` (bf16 and fp8 inputs), `f16`) replaces the choice for the classes it
//! names. A path the class cannot use or the CPU lacks is refused: every non-empty GEMM then fails
//! with [`gemm_core::Error::InvalidArgument`] naming the variable, the path and the missing feature,
//! and C is left untouched. [`crate::KernelChoice::Path`] forces a path for one call, with the same
//! checks.

use crate::cpu::CpuFeatures;
use gemm_core::DType;
use std::fmt;
use std::sync::OnceLock;

/// The environment variable that forces paths.
pub const ENV: &str = "GEMM_HOST_PATH";
/// The environment variable that asks for the f32 measurement at first use (`1`), stored for later
/// processes (see the module docs).
pub const ENV_TUNE: &str = "GEMM_HOST_TUNE";

/// A kernel path of the host engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Path {
    /// faer's matmul (f32 only).
    Faer,
    /// This crate's AVX-512F f32 kernel (f16/bf16/fp8 inputs are widened to f32 panels).
    Avx512,
    /// AVX512_BF16 `vdpbf16ps` on bf16 pair panels (bf16 and fp8 inputs).
    Avx512Bf16,
    /// AMX `tdpbf16ps` on bf16 tiles (bf16 and fp8 inputs).
    Amx,
    /// Plain Rust on f32 panels (any CPU, any inputs).
    Portable,
}

impl Path {
    pub const ALL: [Path; 5] = [Path::Faer, Path::Avx512, Path::Avx512Bf16, Path::Amx, Path::Portable];

    /// The name used by [`ENV`] and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Path::Faer => "faer",
            Path::Avx512 => "avx512",
            Path::Avx512Bf16 => "avx512bf16",
            Path::Amx => "amx",
            Path::Portable => "portable",
        }
    }

    /// The CPU feature this path needs and `features` lacks, if any.
    pub fn missing(self, features: &CpuFeatures) -> Option<&'static str> {
        match self {
            Path::Faer | Path::Portable => None,
            Path::Avx512 => (!features.avx512f).then_some("avx512f"),
            Path::Avx512Bf16 => (!features.avx512bf16).then_some("avx512_bf16"),
            Path::Amx => (!features.amx_bf16).then_some("amx_bf16 (with the OS's tile-data permission)"),
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The input types that get a path of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    F32,
    /// bf16 and the fp8 formats (decoded exactly to bf16).
    Bf16,
    F16,
}

impl Class {
    pub const ALL: [Class; 3] = [Class::F32, Class::Bf16, Class::F16];

    /// The class of A's type (A and B always share a class, see `check_dtypes`).
    pub fn of(a: DType) -> Self {
        match a {
            DType::F32 => Class::F32,
            DType::F16 => Class::F16,
            _ => Class::Bf16,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Class::F32 => "f32",
            Class::Bf16 => "bf16",
            Class::F16 => "f16",
        }
    }

    /// The paths that can compute this class.
    pub fn paths(self) -> &'static [Path] {
        match self {
            Class::F32 => &[Path::Faer, Path::Avx512, Path::Portable],
            Class::Bf16 => &[Path::Amx, Path::Avx512Bf16, Path::Avx512, Path::Portable],
            Class::F16 => &[Path::Avx512, Path::Portable],
        }
    }
}

/// A path refused or a forcing string that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("{ENV}=`{spec}`: {why} (expected e.g. `f32:faer,bf16:amx`; classes f32, bf16, f16; paths faer, avx512, avx512bf16, amx, portable)")]
    Parse { spec: String, why: String },
    #[error("path `{path}` cannot compute {} inputs (it can: {})", class.name(), paths(*class))]
    WrongClass { class: Class, path: Path },
    #[error("path `{path}` for {} inputs needs {missing}, which this CPU ({have}) lacks", class.name())]
    Unsupported { class: Class, path: Path, missing: &'static str, have: String },
}

fn paths(class: Class) -> String {
    class.paths().iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
}

/// Checks that `path` can serve `class` on a CPU with `features`.
pub fn check(class: Class, path: Path, features: &CpuFeatures) -> Result<Path, PathError> {
    if !class.paths().contains(&path) {
        return Err(PathError::WrongClass { class, path });
    }
    match path.missing(features) {
        Some(missing) => Err(PathError::Unsupported { class, path, missing, have: features.names() }),
        None => Ok(path),
    }
}

/// Parses a [`ENV`] value into `(class, path)` pairs (not yet checked against a CPU).
pub fn parse(spec: &str) -> Result<Vec<(Class, Path)>, PathError> {
    let err = |why: String| PathError::Parse { spec: spec.to_string(), why };
    let mut out: Vec<(Class, Path)> = Vec::new();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (c, p) = item.split_once(':').ok_or_else(|| err(format!("`{item}` is not class:path")))?;
        let class = Class::ALL
            .into_iter()
            .find(|x| x.name() == c.trim())
            .ok_or_else(|| err(format!("unknown class `{}`", c.trim())))?;
        let path = Path::ALL
            .into_iter()
            .find(|x| x.name() == p.trim())
            .ok_or_else(|| err(format!("unknown path `{}`", p.trim())))?;
        if out.iter().any(|&(x, _)| x == class) {
            return Err(err(format!("class `{}` named twice", class.name())));
        }
        out.push((class, path));
    }
    Ok(out)
}

/// Parses and checks a forcing string against `features`.
pub fn forced_from(spec: &str, features: &CpuFeatures) -> Result<Vec<(Class, Path)>, PathError> {
    let pairs = parse(spec)?;
    for &(class, path) in &pairs {
        check(class, path, features).map_err(|e| PathError::Parse { spec: spec.to_string(), why: e.to_string() })?;
    }
    Ok(pairs)
}

/// One class's path and why it was chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub path: Path,
    pub why: String,
}

/// A size class of the f32 rule: the calls whose size (cube root of `m * n * k`) is nearest
/// `side` on a log scale, and the GEMM that stands for them in the measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct F32Class {
    pub side: usize,
    /// The measured `m x n x k`.
    pub shape: (usize, usize, usize),
    /// Back-to-back timing pairs after the warm-ups.
    pub rounds: usize,
}

/// The f32 size classes. Up to 2048 a class is measured on its own cube. The 4096 class is
/// measured on 4096 x 4096 x 512: its `m` and `n` are what exercise the two paths' outer blocking
/// (on 2 Zen4 cores faer was 1.09x this crate's kernel at 2048^3 but 0.96x at 4096^3), and its
/// depth keeps each GEMM at 1/8 of 4096^3's cost. Fewer pairs where each GEMM is long.
pub const F32_CLASSES: [F32Class; 4] = [
    F32Class { side: 512, shape: (512, 512, 512), rounds: 9 },
    F32Class { side: 1024, shape: (1024, 1024, 1024), rounds: 9 },
    F32Class { side: 2048, shape: (2048, 2048, 2048), rounds: 5 },
    F32Class { side: 4096, shape: (4096, 4096, 512), rounds: 5 },
];

/// The size class of an `m x n x k` f32 GEMM: the [`F32_CLASSES`] entry whose side is nearest, on
/// a log scale, to the cube root of `m * n * k` (below 724 -> 512, below 1448 -> 1024, below 2896
/// -> 2048, else 4096).
pub fn f32_size_class(m: usize, n: usize, k: usize) -> F32Class {
    let side = (m as f64 * n as f64 * k as f64).cbrt();
    let distance = |c: &F32Class| (side / c.side as f64).ln().abs();
    F32_CLASSES.into_iter().min_by(|x, y| distance(x).total_cmp(&distance(y))).expect("F32_CLASSES is not empty")
}

/// How much faster (median over pairs) faer must be than this crate's kernel to serve f32: 2%.
/// Where the two are within it the choice could flip from process to process for nothing; above
/// it faer is picked, since on the 16-core Xeon at 2048^3 and 4096^3 faer's median was 4-15%
/// faster than the kernel (`f32-pairs --threads 16`), and a 5% margin kept the kernel once
/// (first-use median 1.03) where it then ran at 0.93x OpenBLAS against faer's 0.99x.
pub const FAER_MARGIN: f64 = 0.02;

/// The two f32 paths timed on the same problem.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct F32Timing {
    /// Best time of each path (seconds), for the explanation.
    pub faer: f64,
    pub avx512: f64,
    /// Median over the back-to-back pairs of `avx512 time / faer time` (above 1: faer faster).
    pub faer_speedup: f64,
    /// The size class measured, threads and the pairs timed, for the explanation.
    pub class: F32Class,
    pub threads: usize,
    pub rounds: usize,
}

impl F32Timing {
    /// Builds the timing from back-to-back `(faer, avx512)` pairs of seconds (`None` if empty).
    pub fn from_pairs(pairs: &[(f64, f64)], class: F32Class, threads: usize) -> Option<Self> {
        if pairs.is_empty() {
            return None;
        }
        let best = |f: fn(&(f64, f64)) -> f64| pairs.iter().map(f).fold(f64::INFINITY, f64::min);
        let mut ratios: Vec<f64> = pairs.iter().map(|&(f, o)| o / f).collect();
        ratios.sort_by(f64::total_cmp);
        let mid = ratios.len() / 2;
        let median = if ratios.len() % 2 == 1 { ratios[mid] } else { 0.5 * (ratios[mid - 1] + ratios[mid]) };
        Some(Self {
            faer: best(|p| p.0),
            avx512: best(|p| p.1),
            faer_speedup: median,
            class,
            threads,
            rounds: pairs.len(),
        })
    }
}

/// Whether an [`F32Timing`] can change what [`decide`] picks for f32 on a CPU with `features` (it
/// can where both f32 paths run: with AVX-512F); without one the rule decides.
pub fn f32_needs_measurement(features: &CpuFeatures) -> bool {
    features.avx512f
}

/// The path for `class` on a CPU with `features`; `f32` is the measurement that decides f32 where
/// [`f32_needs_measurement`] (without one, the rule: this crate's kernel with AVX-512F, else
/// faer).
pub fn decide(class: Class, features: &CpuFeatures, f32: Option<F32Timing>) -> Choice {
    let c = |path: Path, why: String| Choice { path, why };
    match class {
        Class::Bf16 => {
            let refused = features.amx_refused.map(|r| format!(" (AMX in CPUID, but {r})")).unwrap_or_default();
            if features.amx_bf16 {
                c(Path::Amx, "amx_bf16: tdpbf16ps tiles, f32 accumulation".into())
            } else if features.avx512bf16 {
                c(Path::Avx512Bf16, format!("avx512_bf16 without AMX{refused}: vdpbf16ps"))
            } else if features.avx512f {
                c(Path::Avx512, format!("avx512f without avx512_bf16 or AMX{refused}: widened to f32 panels"))
            } else {
                c(Path::Portable, "no AVX-512: portable kernel on f32 panels".into())
            }
        }
        Class::F16 => {
            if features.avx512f {
                c(Path::Avx512, "avx512f: widened to f32 panels".into())
            } else {
                c(Path::Portable, "no AVX-512: portable kernel on f32 panels".into())
            }
        }
        Class::F32 => match f32 {
            _ if !features.avx512f => c(Path::Faer, "no AVX-512: faer's own AVX2/FMA kernels".into()),
            None => c(
                Path::Avx512,
                format!("avx512f, not measured: the rule, this crate's kernel ({ENV_TUNE}=1 measures faer against it)"),
            ),
            Some(t) => {
                let (m, n, k) = t.class.shape;
                let gflops = |s: f64| 2.0 * m as f64 * n as f64 * k as f64 / s * 1e-9;
                let path = if t.faer_speedup > 1.0 + FAER_MARGIN { Path::Faer } else { Path::Avx512 };
                let verdict = if path == Path::Faer {
                    format!("faer faster by more than {:.0}%", FAER_MARGIN * 100.0)
                } else {
                    format!("this crate's kernel unless faer is faster by more than {:.0}%", FAER_MARGIN * 100.0)
                };
                c(
                    path,
                    format!(
                        "avx512f, calls of about {side}^3 on {th} threads, measured ({m}x{n}x{k}, median of {r} pairs): faer/avx512 speed {:.2} ({:.0} vs {:.0} GFLOP/s best): {verdict}",
                        t.faer_speedup,
                        gflops(t.faer),
                        gflops(t.avx512),
                        side = t.class.side,
                        th = t.threads,
                        r = t.rounds
                    ),
                )
            }
        },
    }
}

/// The paths this process uses: forced ones from [`ENV`], the rest decided.
#[derive(Clone, Debug)]
pub struct Plan {
    pub features: CpuFeatures,
    forced: Vec<(Class, Path)>,
    /// [`ENV_TUNE`] is `1`: measure f32 at first use and store the result.
    pub tune: bool,
    /// Where measurements are kept ([`crate::cache::dir`]), if anywhere.
    pub cache_dir: Option<std::path::PathBuf>,
}

/// This process's forced paths (parsed and checked once), or the error every GEMM reports.
pub(crate) fn forced() -> Result<&'static Plan, PathError> {
    static PLAN: OnceLock<Result<Plan, PathError>> = OnceLock::new();
    PLAN.get_or_init(|| {
        let features = CpuFeatures::detect();
        let forced = match std::env::var(ENV) {
            Ok(spec) => forced_from(&spec, &features)?,
            Err(_) => Vec::new(),
        };
        let tune = std::env::var(ENV_TUNE).is_ok_and(|v| v.trim() == "1");
        Ok(Plan { features, forced, tune, cache_dir: crate::cache::dir() })
    })
    .as_ref()
    .map_err(Clone::clone)
}

impl Plan {
    /// A plan with nothing forced, for `features`, measuring at first use if `tune`, keeping
    /// measurements in `cache_dir` (what [`forced`] builds from the environment; for tests).
    pub fn new(features: CpuFeatures, tune: bool, cache_dir: Option<std::path::PathBuf>) -> Self {
        Plan { features, forced: Vec::new(), tune, cache_dir }
    }

    /// The path for `class` on `threads` worker threads for an `m x n x k` GEMM: forced, else
    /// decided (f32 once per process, thread count and size class where the features do not
    /// decide: see [`Plan::f32_choice`]).
    pub fn choice(&self, class: Class, threads: usize, (m, n, k): (usize, usize, usize)) -> Choice {
        if let Some(&(_, path)) = self.forced.iter().find(|&&(c, _)| c == class) {
            return Choice { path, why: format!("forced by {ENV}") };
        }
        if class == Class::F32 && f32_needs_measurement(&self.features) {
            static F32: std::sync::Mutex<Vec<((usize, F32Class), Choice)>> = std::sync::Mutex::new(Vec::new());
            let key = (threads.max(1), f32_size_class(m, n, k));
            // Held while deciding, so concurrent first calls decide once (and, when tuning,
            // measure once and time alone); every later call of the key reuses the choice.
            let mut known = F32.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((_, c)) = known.iter().find(|(x, _)| *x == key) {
                return c.clone();
            }
            let c = self.f32_choice(key.0, key.1, || crate::measure_f32(key.0, key.1));
            known.push((key, c.clone()));
            return c;
        }
        decide(class, &self.features, None)
    }

    /// The f32 choice for `threads` and `class` where both f32 paths run (called once per process
    /// and key by [`Plan::choice`]): with [`Plan::tune`], `measure()` and store the timing in the
    /// cache; else the stored timing for this CPU, version, threads and class if there is one;
    /// else the rule. Costs a small file read without `tune`; never fails (a cache that cannot be
    /// read or written is reported in the explanation and otherwise ignored).
    pub fn f32_choice(&self, threads: usize, class: F32Class, measure: impl FnOnce() -> Option<F32Timing>) -> Choice {
        use crate::cache;
        let cpu = cache::cpu_identity();
        let file = |d: &std::path::Path| d.join(cache::FILE).display().to_string();
        if self.tune {
            let timing = measure();
            let mut c = decide(Class::F32, &self.features, timing);
            if let Some(t) = timing {
                c.why += &match &self.cache_dir {
                    Some(d) => match cache::store(d, &cpu, t) {
                        Ok(()) => format!(" [measured now ({ENV_TUNE}=1), stored in {}]", file(d)),
                        Err(e) => format!(" [measured now ({ENV_TUNE}=1), not stored in {}: {e}]", file(d)),
                    },
                    None => format!(
                        " [measured now ({ENV_TUNE}=1); not stored: no cache directory ({} empty, or no HOME)]",
                        cache::ENV_DIR
                    ),
                };
            }
            return c;
        }
        if let Some(d) = &self.cache_dir {
            if let Some(t) = cache::lookup(d, &cpu, threads, class) {
                let mut c = decide(Class::F32, &self.features, Some(t));
                c.why += &format!(" [stored in {}]", file(d));
                return c;
            }
        }
        let mut c = decide(Class::F32, &self.features, None);
        c.why =
            c.why.replacen("avx512f, ", &format!("avx512f, calls of about {}^3 on {threads} threads, ", class.side), 1);
        c
    }
}

/// One line per class: the path that serves it on `threads` threads and why (for `gemm devices`),
/// or the forcing error. Where both f32 paths run there is one f32 line per size class of
/// [`F32_CLASSES`] (the rule or a stored measurement: nothing is measured unless [`ENV_TUNE`] is
/// `1`, so this takes milliseconds).
pub fn summary(threads: usize) -> Vec<String> {
    match forced() {
        Err(e) => vec![format!("every GEMM is refused: {e}")],
        Ok(plan) => {
            let mut lines = Vec::new();
            for class in Class::ALL {
                let inputs = if class == Class::Bf16 { "bf16/fp8" } else { class.name() };
                let sizes: Vec<usize> = if class == Class::F32 && f32_needs_measurement(&plan.features) {
                    F32_CLASSES.iter().map(|c| c.side).collect()
                } else {
                    vec![F32_CLASSES[0].side]
                };
                for s in sizes {
                    let c = plan.choice(class, threads, (s, s, s));
                    lines.push(format!("{inputs:<9} -> {:<11} {}", c.path.name(), c.why));
                }
            }
            lines
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: CpuFeatures = CpuFeatures { avx512f: false, avx512bf16: false, amx_bf16: false, amx_refused: None };
    const AVX512: CpuFeatures = CpuFeatures { avx512f: true, ..NONE };
    /// Zen4/Zen5.
    const ZEN4: CpuFeatures = CpuFeatures { avx512f: true, avx512bf16: true, ..NONE };
    /// Sapphire Rapids and later.
    const SPR: CpuFeatures = CpuFeatures { avx512f: true, avx512bf16: true, amx_bf16: true, amx_refused: None };
    const SPR_NO_PERMISSION: CpuFeatures = CpuFeatures { amx_bf16: false, amx_refused: Some("refused"), ..SPR };

    fn timing(faer: f64, avx512: f64) -> Option<F32Timing> {
        F32Timing::from_pairs(&[(faer, avx512)], F32_CLASSES[1], 16)
    }

    #[test]
    fn bf16_goes_to_the_best_unit_the_cpu_has() {
        assert_eq!(decide(Class::Bf16, &SPR, None).path, Path::Amx);
        assert_eq!(decide(Class::Bf16, &ZEN4, None).path, Path::Avx512Bf16);
        let no_perm = decide(Class::Bf16, &SPR_NO_PERMISSION, None);
        assert_eq!(no_perm.path, Path::Avx512Bf16);
        assert!(no_perm.why.contains("refused"), "{}", no_perm.why);
        assert_eq!(decide(Class::Bf16, &AVX512, None).path, Path::Avx512);
        assert_eq!(decide(Class::Bf16, &NONE, None).path, Path::Portable);
    }

    #[test]
    fn f16_uses_avx512_where_present() {
        assert_eq!(decide(Class::F16, &SPR, None).path, Path::Avx512);
        assert_eq!(decide(Class::F16, &NONE, None).path, Path::Portable);
    }

    #[test]
    fn f32_is_decided_by_measurement_where_features_do_not_decide() {
        assert!(!f32_needs_measurement(&NONE));
        assert_eq!(decide(Class::F32, &NONE, timing(1.0, 0.5)).path, Path::Faer);
        assert!(f32_needs_measurement(&SPR) && f32_needs_measurement(&ZEN4));
        let own = decide(Class::F32, &SPR, timing(0.010, 0.008));
        assert_eq!(own.path, Path::Avx512);
        assert!(own.why.contains("measured") && own.why.contains("16 threads"), "{}", own.why);
        assert_eq!(decide(Class::F32, &ZEN4, timing(0.008, 0.010)).path, Path::Faer);
        // Nothing measured: the rule, this crate's kernel (no measurement at first use).
        let rule = decide(Class::F32, &ZEN4, None);
        assert_eq!(rule.path, Path::Avx512);
        assert!(rule.why.contains("the rule") && rule.why.contains(ENV_TUNE), "{}", rule.why);
    }

    #[test]
    fn faer_needs_a_clear_margin_in_the_median_pair() {
        // faer 1% faster: within the margin, our kernel stays.
        assert_eq!(decide(Class::F32, &ZEN4, timing(1.0, 1.01)).path, Path::Avx512);
        // faer 20% faster: faer.
        let f = decide(Class::F32, &ZEN4, timing(1.0, 1.2));
        assert_eq!(f.path, Path::Faer);
        assert!(f.why.contains("faster by more than 2%"), "{}", f.why);
        // One pair where a burst slowed our kernel 3x does not decide: the median is of the rest.
        let pairs = [(1.0, 1.0), (1.0, 0.98), (1.0, 3.0), (1.02, 1.0), (1.0, 1.01)];
        let t = F32Timing::from_pairs(&pairs, F32_CLASSES[0], 2).unwrap();
        assert_eq!(t.faer_speedup, 1.0);
        assert_eq!((t.faer, t.avx512, t.rounds), (1.0, 0.98, 5));
        assert_eq!(decide(Class::F32, &ZEN4, Some(t)).path, Path::Avx512);
        // Even pair counts take the mean of the middle two; no pairs, no timing.
        let t = F32Timing::from_pairs(&[(1.0, 1.1), (1.0, 1.3)], F32_CLASSES[0], 2).unwrap();
        assert!((t.faer_speedup - 1.2).abs() < 1e-12);
        assert_eq!(F32Timing::from_pairs(&[], F32_CLASSES[0], 2), None);
    }

    #[test]
    fn f32_is_measured_at_the_size_class_of_the_call() {
        // The nearest class on a log scale: the boundaries are sqrt(512 * 1024) ~ 724.1,
        // sqrt(1024 * 2048) ~ 1448.2 and sqrt(2048 * 4096) ~ 2896.3.
        let side = |m, n, k| f32_size_class(m, n, k).side;
        for (x, class) in [(1, 512), (300, 512), (724, 512), (725, 1024), (1024, 1024), (1448, 1024)] {
            assert_eq!(side(x, x, x), class, "{x}");
        }
        for (x, class) in [(1449, 2048), (2048, 2048), (2896, 2048), (2897, 4096), (4096, 4096), (16384, 4096)] {
            assert_eq!(side(x, x, x), class, "{x}");
        }
        // By volume, not by one side: 16384 x 256 x 256 is 1024^3 of work, 64 x 64 x 65536 is 640^3.
        assert_eq!(side(16384, 256, 256), 1024);
        assert_eq!(side(64, 64, 65536), 512);
        assert_eq!(side(0, 4096, 4096), 512);
        // Each class is measured on its cube, but 4096 on a shallower GEMM; fewer pairs where long.
        for c in F32_CLASSES {
            let (m, n, k) = c.shape;
            assert_eq!((m, n), (c.side, c.side));
            assert_eq!(k, if c.side == 4096 { 512 } else { c.side });
            assert_eq!(c.rounds, if c.side >= 2048 { 5 } else { 9 });
        }
    }

    #[test]
    fn every_decision_is_a_path_the_class_and_cpu_allow() {
        for f in [NONE, AVX512, ZEN4, SPR, SPR_NO_PERMISSION] {
            for class in Class::ALL {
                for t in [None, timing(1.0, 2.0), timing(2.0, 1.0)] {
                    let c = decide(class, &f, t);
                    assert_eq!(check(class, c.path, &f), Ok(c.path), "{f:?} {class:?}");
                }
            }
        }
    }

    #[test]
    fn f32_first_use_measures_only_when_tuning_and_later_processes_reuse_it() {
        let dir = std::env::temp_dir().join(format!("gemm-host-plan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let class = F32_CLASSES[2];
        let never = || -> Option<F32Timing> { panic!("measured without {ENV_TUNE}") };
        // A fresh machine: the rule, without measuring.
        let plain = Plan::new(ZEN4, false, Some(dir.clone()));
        let c = plain.f32_choice(2, class, never);
        assert_eq!(c.path, Path::Avx512);
        assert!(c.why.contains("the rule") && c.why.contains("about 2048^3 on 2 threads"), "{}", c.why);
        // GEMM_HOST_TUNE=1: measured (here faer 10% faster) and stored ...
        let tuning = Plan::new(ZEN4, true, Some(dir.clone()));
        let t = F32Timing::from_pairs(&[(1.0, 1.1)], class, 2);
        let c = tuning.f32_choice(2, class, || t);
        assert_eq!(c.path, Path::Faer);
        assert!(c.why.contains("measured now") && c.why.contains("stored in"), "{}", c.why);
        // ... so a later process picks faer from its first call, without measuring.
        let c = plain.f32_choice(2, class, never);
        assert_eq!(c.path, Path::Faer);
        assert!(c.why.contains("[stored in") && c.why.contains("median of 1 pairs"), "{}", c.why);
        // Only for that thread count and class.
        assert_eq!(plain.f32_choice(4, class, never).path, Path::Avx512);
        assert_eq!(plain.f32_choice(2, F32_CLASSES[3], never).path, Path::Avx512);
        // A corrupt store is ignored; no store at all is the rule.
        std::fs::write(dir.join(crate::cache::FILE), "not\ta cache\n").unwrap();
        assert_eq!(plain.f32_choice(2, class, never).path, Path::Avx512);
        assert_eq!(Plan::new(ZEN4, false, None).f32_choice(2, class, never).path, Path::Avx512);
        // A store that cannot be written is reported, and the measurement still serves.
        let file_as_dir = dir.join(crate::cache::FILE);
        let c = Plan::new(ZEN4, true, Some(file_as_dir)).f32_choice(2, class, || t);
        assert_eq!(c.path, Path::Faer);
        assert!(c.why.contains("not stored"), "{}", c.why);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn forcing_strings_parse_and_are_checked_against_the_cpu() {
        assert_eq!(parse("f32:faer, bf16:amx").unwrap(), vec![(Class::F32, Path::Faer), (Class::Bf16, Path::Amx)]);
        assert_eq!(parse("").unwrap(), vec![]);
        for bad in ["f32", "f64:faer", "f32:fast", "f32:faer,f32:avx512"] {
            assert!(matches!(parse(bad), Err(PathError::Parse { .. })), "{bad}");
        }
        assert_eq!(forced_from("bf16:amx", &SPR).unwrap(), vec![(Class::Bf16, Path::Amx)]);
        let e = forced_from("bf16:amx", &ZEN4).unwrap_err().to_string();
        assert!(e.contains(ENV) && e.contains("amx_bf16") && e.contains("lacks"), "{e}");
        let e = forced_from("f32:amx", &SPR).unwrap_err().to_string();
        assert!(e.contains("cannot compute f32"), "{e}");
        assert!(forced_from("f16:avx512", &NONE).is_err());
        assert!(forced_from("f32:faer,f16:portable,bf16:portable", &NONE).is_ok());
    }
}
