//! Runs every catalogue kernel (or those whose name contains `--filter`) in the emulator on the
//! large shapes of the compiler issue — 1024x1024x1024, 4096x16x512, 16x4096x512 by default —
//! through the dispatch layer's kernel plan, with the race and hazard checkers on, and checks
//! sampled entries (plus the four corners) against the f64 reference. Too slow for the test
//! suite (about 20 s per kernel at 1024^3), so it is a tool:
//!
//! ```text
//! cargo run --release -p gemm-dispatch --features emu --example verify_catalogue -- [--filter gfx950] [--shapes 1024x1024x1024] [--mode random]
//! ```

use gemm_core::reference::{self, random_values};
use gemm_core::{bf16, f16, DType, Element, GemmProblem, Layout};
use gemm_dispatch::backends::emu::EmuBackend;
use gemm_dispatch::plan::kernel_plan::plan_for;
use gemm_emu::{Mode, Schedule};
use gemm_kernels::KernelEntry;
use std::process::ExitCode;
use std::time::Instant;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn run<AB: Element, C: Element>(
    e: &'static KernelEntry,
    (m, n, k): (usize, usize, usize),
    beta: f32,
    mode: Mode,
) -> Result<f64, String> {
    let align = e.align_elems.max(1) as usize;
    let p = GemmProblem::new(m, n, k)
        .with_layout(Layout::ColMajor)
        .with_transposes(e.trans_a, e.trans_b)
        .with_dtypes(e.a_type, e.b_type, e.c_type)
        .with_scalars(1.5, beta);
    // Leading dimensions larger than the matrix, kept to the kernel's alignment.
    let ld = |x: usize| (x + 8).next_multiple_of(align);
    let p = p.with_leading_dims(ld(p.lda), ld(p.ldb), p.ldc + 3);
    let s = p.validate().map_err(|e| e.to_string())?;
    let seed = (m * 31 + n * 7 + k) as u64;
    let a: Vec<AB> = random_values(s.a, seed);
    let b: Vec<AB> = random_values(s.b, seed + 1);
    let c0: Vec<C> = if beta == 0.0 { vec![C::from_f32(f32::NAN); s.c] } else { random_values(s.c, seed + 2) };
    let mut c = c0.clone();
    let plan = plan_for(e, &p)?;
    let dev = EmuBackend::new(e.arch, Schedule { mode, seed });
    dev.run_plan(&plan, &p, bytemuck::cast_slice(&a), bytemuck::cast_slice(&b), bytemuck::cast_slice_mut(&mut c))
        .map_err(|err| err.to_string())?;
    let mut entries: Vec<(usize, usize)> = (0..512).map(|i| ((i * 7919) % m, (i * 104_729) % n)).collect();
    entries.extend([(0, 0), (m - 1, 0), (0, n - 1), (m - 1, n - 1)]);
    let r = reference::check(&p, &a, &b, &c0, &c, Some(&entries)).map_err(|e| e.to_string())?;
    if r.passed() {
        Ok(r.max_err_ratio)
    } else {
        Err(format!("mismatch: {r:?}"))
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let filter = arg(&args, "--filter").unwrap_or_default();
    let mode = arg(&args, "--mode").and_then(|m| Mode::parse(&m)).unwrap_or(Mode::Random);
    let shapes: Vec<(usize, usize, usize)> = arg(&args, "--shapes")
        .unwrap_or_else(|| "1024x1024x1024,4096x16x512,16x4096x512".into())
        .split(',')
        .map(|s| {
            let v: Vec<usize> = s.split('x').map(|x| x.parse().expect("shapes look like MxNxK")).collect();
            (v[0], v[1], v[2])
        })
        .collect();
    let kernels: Vec<&'static KernelEntry> =
        gemm_kernels::catalogue().iter().filter(|e| e.name.contains(filter.as_str())).collect();
    let total = kernels.len() * shapes.len();
    let (mut done, mut failed) = (0, 0);
    let start = Instant::now();
    for e in kernels {
        for (i, &shape) in shapes.iter().enumerate() {
            let beta = if i == 0 { 0.0 } else { 0.5 };
            let t = Instant::now();
            let result = match (e.a_type, e.c_type) {
                (DType::Bf16, DType::F32) => run::<bf16, f32>(e, shape, beta, mode),
                (DType::Bf16, DType::Bf16) => run::<bf16, bf16>(e, shape, beta, mode),
                (DType::F16, DType::F32) => run::<f16, f32>(e, shape, beta, mode),
                (DType::F16, DType::F16) => run::<f16, f16>(e, shape, beta, mode),
                other => Err(format!("no verification for {other:?}")),
            };
            done += 1;
            let status = match &result {
                Ok(ratio) => format!("ok ({ratio:.3} of the allowed error)"),
                Err(why) => {
                    failed += 1;
                    format!("FAILED: {why}")
                }
            };
            println!(
                "[{done}/{total}] {} {}x{}x{} {}: {status} in {:.1} s",
                e.name,
                shape.0,
                shape.1,
                shape.2,
                mode.name(),
                t.elapsed().as_secs_f64()
            );
        }
    }
    println!("{} runs, {failed} failed, {:.0} s", done, start.elapsed().as_secs_f64());
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
