//! The `gemm-emulate` / `gemm emulate` command: run any kernel of any code object on buffers
//! filled from a seed and print results, checker reports and instruction counts by class.
//!
//! ```text
//! gemm-emulate vadd.co --kernel vadd --grid 4 --block 256 \
//!     --buffer 4096 --buffer 4096 --buffer 4096 --args b0,b1,b2,u32:1000 --dump 2:8
//! ```

use crate::{Arch, Device, LaunchOptions, Mode, Schedule};
use rand::{Rng, SeedableRng};

/// Arguments of `gemm-emulate` and `gemm emulate`.
#[derive(clap::Args, Debug)]
pub struct EmulateArgs {
    /// The code object (ELF) file.
    pub code_object: std::path::PathBuf,
    /// Kernel name (default: the first kernel).
    #[arg(long)]
    pub kernel: Option<String>,
    /// gfx942 or gfx950 (default: the code object's target).
    #[arg(long)]
    pub arch: Option<String>,
    /// Workgroups per dimension: x[,y[,z]].
    #[arg(long, default_value = "1")]
    pub grid: String,
    /// Work-items per workgroup: x[,y[,z]].
    #[arg(long, default_value = "64")]
    pub block: String,
    /// A device buffer of this many bytes, filled with random f32 in [-1, 1) from the seed
    /// (repeat for more buffers; refer to them as b0, b1, ... in --args).
    #[arg(long)]
    pub buffer: Vec<u64>,
    /// Kernel arguments, comma separated: bN (buffer address), u32:V, i32:V, f32:V, u64:V.
    #[arg(long, default_value = "")]
    pub args: String,
    /// Seed for buffer contents and the scheduler.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Scheduling mode: fair, random, longest-latency, reversed.
    #[arg(long, default_value = "fair")]
    pub mode: String,
    /// Print buffer contents as f32 after the run: BUF:COUNT (repeatable).
    #[arg(long)]
    pub dump: Vec<String>,
    /// Disable the LDS race detector.
    #[arg(long)]
    pub no_race: bool,
}

fn dims(s: &str) -> Result<[u32; 3], String> {
    let v: Vec<u32> =
        s.split(',').map(|x| x.trim().parse::<u32>().map_err(|e| format!("{s}: {e}"))).collect::<Result<_, _>>()?;
    Ok([v.first().copied().unwrap_or(1), v.get(1).copied().unwrap_or(1), v.get(2).copied().unwrap_or(1)])
}

fn progress(done: usize, total: usize) {
    if total >= 64 && (done.is_multiple_of((total / 16).max(1)) || done == total) {
        eprintln!("  {done}/{total} workgroups");
    }
}

/// Runs the kernel and prints its report; `Ok(false)` when a checker found something.
pub fn run(cli: EmulateArgs) -> Result<bool, String> {
    let bytes = std::fs::read(&cli.code_object).map_err(|e| format!("{}: {e}", cli.code_object.display()))?;
    let co = gemm_codeobject::CodeObject::parse(&bytes).map_err(|e| e.to_string())?;
    let arch = match cli.arch.as_deref().or(co.arch().map(|a| a.name())) {
        Some("gfx942") => Arch::Gfx942,
        Some("gfx950") => Arch::Gfx950,
        other => return Err(format!("unknown or missing arch {other:?} (use --arch)")),
    };
    let kernel = match &cli.kernel {
        Some(k) => k.clone(),
        None => co.kernels.first().map(|k| k.name.clone()).ok_or("no kernels in the code object")?,
    };
    let mode = Mode::parse(&cli.mode).ok_or_else(|| format!("unknown mode {}", cli.mode))?;
    let dev = Device::new(arch);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(cli.seed);
    let mut bufs = Vec::new();
    for &size in &cli.buffer {
        let p = dev.alloc(size).map_err(|e| e.to_string())?;
        let data: Vec<u8> = (0..size / 4).flat_map(|_| rng.gen_range(-1.0f32..1.0).to_le_bytes()).collect();
        dev.copy_in(p, &data).map_err(|e| e.to_string())?;
        bufs.push((p, size));
    }
    let mut ka: Vec<u8> = Vec::new();
    for a in cli.args.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        let align = |ka: &mut Vec<u8>, n: usize| {
            while !ka.len().is_multiple_of(n) {
                ka.push(0)
            }
        };
        if let Some(i) = a.strip_prefix('b') {
            let i: usize = i.parse().map_err(|_| format!("bad argument {a}"))?;
            let (p, _) = bufs.get(i).ok_or(format!("no buffer {i}"))?;
            align(&mut ka, 8);
            ka.extend_from_slice(&p.to_le_bytes());
        } else if let Some((ty, v)) = a.split_once(':') {
            let err = |_| format!("bad argument {a}");
            match ty {
                "u32" => {
                    align(&mut ka, 4);
                    ka.extend_from_slice(&v.parse::<u32>().map_err(|_| format!("bad {a}"))?.to_le_bytes())
                }
                "i32" => {
                    align(&mut ka, 4);
                    ka.extend_from_slice(&v.parse::<i32>().map_err(|_| format!("bad {a}"))?.to_le_bytes())
                }
                "f32" => {
                    align(&mut ka, 4);
                    ka.extend_from_slice(&v.parse::<f32>().map_err(|_| format!("bad {a}"))?.to_le_bytes())
                }
                "u64" => {
                    align(&mut ka, 8);
                    ka.extend_from_slice(&v.parse::<u64>().map_err(err)?.to_le_bytes())
                }
                _ => return Err(format!("bad argument type in {a}")),
            }
        } else {
            return Err(format!("bad argument {a}"));
        }
    }
    let opts = LaunchOptions {
        schedule: Schedule { mode, seed: cli.seed },
        race_detector: !cli.no_race,
        progress: Some(progress),
        ..Default::default()
    };
    eprintln!(
        "running {kernel} on {arch}, grid {}, block {}, mode {}, seed {}",
        cli.grid,
        cli.block,
        mode.name(),
        cli.seed
    );
    let report =
        dev.launch_with(&bytes, &kernel, dims(&cli.grid)?, dims(&cli.block)?, &ka, &opts).map_err(|e| e.to_string())?;
    print!("{report}");
    for d in &cli.dump {
        let (b, n) = d.split_once(':').ok_or(format!("bad --dump {d}"))?;
        let i: usize = b.trim_start_matches('b').parse().map_err(|_| format!("bad --dump {d}"))?;
        let n: u64 = n.parse().map_err(|_| format!("bad --dump {d}"))?;
        let (p, size) = bufs.get(i).ok_or(format!("no buffer {i}"))?;
        let n = n.min(size / 4);
        let mut out = vec![0u8; 4 * n as usize];
        dev.copy_out(*p, &mut out).map_err(|e| e.to_string())?;
        let vals: Vec<String> =
            out.chunks_exact(4).map(|c| format!("{}", f32::from_le_bytes([c[0], c[1], c[2], c[3]]))).collect();
        println!("b{i}[0..{n}]: {}", vals.join(" "));
    }
    Ok(report.reports.is_empty())
}
