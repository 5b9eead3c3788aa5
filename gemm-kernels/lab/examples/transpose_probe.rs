//! Issue 24: the transpose pre-pass kernel (catalogue family `transpose`) predicted by the
//! timing model on square byte matrices, beside the dispatcher's cost of it
//! (`gemm_dispatch::plan::transpose::seconds`: the model's one-block time plus the bytes at peak
//! HBM), and the fixed part and bandwidth the first two sizes give.
//!
//! `cargo run --release -p gemm-lab --example transpose_probe -- [ARCH] [S,S,...]`
//! (default: both archs, 4096 and 8192).

use gemm_core::Arch;
use gemm_dispatch::plan::transpose;
use gemm_emu::timing::{Model, ModelOptions, Workload};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let archs: Vec<Arch> = a.get(1).map_or(Arch::ALL.to_vec(), |s| vec![s.parse().unwrap()]);
    let sizes: Vec<u32> = a.get(2).map_or(vec![4096, 8192], |s| s.split(',').map(|x| x.parse().unwrap()).collect());
    let opts = ModelOptions::default();
    for arch in archs {
        let e = transpose::kernel(arch, 1).expect("a transpose kernel");
        let mut points = vec![];
        for &s in &sizes {
            let dev = gemm_emu::Device::new(arch);
            let bytes = u64::from(s) * u64::from(s);
            let (x, y) = (dev.alloc(bytes).unwrap(), dev.alloc(bytes).unwrap());
            let args = gemm_compiler::kernel_args::pack_transpose(x, y, s, s, s, s);
            let (grid, block) = e.launch(s, s);
            let w = Workload {
                code_object: e.code_object,
                kernel: e.name,
                grid,
                block,
                kernarg: &args,
                dynamic_lds: 0,
                flops: 0.0,
            };
            let t = Model::new(arch).predict(dev.memory(), &w, &opts).unwrap().seconds;
            let cost = transpose::seconds(arch, s, s);
            let bw = 2.0 * bytes as f64 / t / 1e12;
            println!(
                "{arch} {s}x{s}: model {:.3} us ({bw:.2} TB/s, {:.0}% of {:.1} TB/s peak); dispatcher's cost {:.3} us ({:+.1}%)",
                t * 1e6,
                100.0 * bw / arch.caps().hbm_tbps,
                arch.caps().hbm_tbps,
                cost * 1e6,
                (cost / t - 1.0) * 100.0
            );
            points.push((2.0 * bytes as f64, t));
        }
        if let [(b0, t0), (b1, t1), ..] = points[..] {
            let per_byte = (t1 - t0) / (b1 - b0);
            let fixed = t0 - per_byte * b0;
            println!(
                "{arch} fit: fixed {:.3} us, {:.2} TB/s ({:.3} of peak HBM)",
                fixed * 1e6,
                1.0 / per_byte / 1e12,
                1.0 / per_byte / 1e12 / arch.caps().hbm_tbps
            );
        }
    }
}
