//! Scratch: the timing model on one MX configuration (ignored; `MX_SPEED=...`).

use gemm_compiler::ir::{Align, Arch, KernelConfig, MfmaShape};
use gemm_compiler::schedule::Schedule as Sched;
use gemm_compiler::{compile, kernel_args};
use gemm_core::mx::MxFormat;
use gemm_core::DType;
use gemm_emu::timing::{Model, ModelOptions, Workload};
use gemm_emu::Device;

fn predict(cfg: KernelConfig, s: u32) {
    let t = std::time::Instant::now();
    let k = compile(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
    eprintln!("{}: vgprs {:?} compile {:.1}s", k.name, k.stats, t.elapsed().as_secs_f64());
    eprintln!("usage {:?}", k.usage);
    if let Ok(path) = std::env::var("MX_ASM") {
        let text: String = k.insts.iter().map(|i| format!("{i}\n")).collect();
        std::fs::write(path, text).unwrap();
    }
    let (fa, _) = cfg.block_scale.mx().unwrap();
    let kb = s * fa.bits() / 8;
    let dev = Device::new(cfg.arch);
    let alloc = |b: u64| dev.alloc(b.next_multiple_of(16).max(16)).unwrap();
    let (a, b) = (alloc(u64::from(kb) * u64::from(s)), alloc(u64::from(kb) * u64::from(s)));
    let c = alloc(u64::from(s) * u64::from(s) * u64::from(cfg.c_bytes()));
    let tb = cfg.tile.2 / cfg.mx_block_bytes().unwrap();
    let (sa, sb) = (alloc(u64::from(s / 32) * u64::from(s) + 64), alloc(u64::from(s / 32) * u64::from(s) + 64));
    let mut args = vec![0u8; kernel_args::size(&cfg) as usize];
    for arg in kernel_args::args(&cfg) {
        let bytes: Vec<u8> = match arg.name {
            "a" => a.to_le_bytes().to_vec(),
            "b" => b.to_le_bytes().to_vec(),
            "c" => c.to_le_bytes().to_vec(),
            "bscale_a" => sa.to_le_bytes().to_vec(),
            "bscale_b" => sb.to_le_bytes().to_vec(),
            "m" | "n" | "ldc" => s.to_le_bytes().to_vec(),
            "k" | "lda" | "ldb" => kb.to_le_bytes().to_vec(),
            "ldsa" | "ldsb" => tb.to_le_bytes().to_vec(),
            "alpha" | "scale_a" | "scale_b" | "scale_d" => 1f32.to_le_bytes().to_vec(),
            "gsa" | "gsb" => (tb * s).to_le_bytes().to_vec(),
            "clamp_lo" => f32::NEG_INFINITY.to_le_bytes().to_vec(),
            "clamp_hi" => f32::INFINITY.to_le_bytes().to_vec(),
            _ => vec![0; arg.size as usize],
        };
        args[arg.offset as usize..arg.offset as usize + bytes.len()].copy_from_slice(&bytes);
    }
    let w = Workload {
        code_object: &k.code_object,
        kernel: &k.name,
        grid: [s.div_ceil(cfg.tile.0), s.div_ceil(cfg.tile.1), 1],
        block: [cfg.threads(), 1, 1],
        kernarg: &args,
        dynamic_lds: 0,
        flops: 2.0 * f64::from(s).powi(3),
    };
    let trace = std::env::var("MX_TRACE").ok();
    let opts = ModelOptions { trace_spans: if trace.is_some() { 400_000 } else { 0 }, ..ModelOptions::default() };
    let pr = Model::new(cfg.arch).predict(dev.memory(), &w, &opts).unwrap();
    eprintln!("{pr}");
    eprint!("{}", gemm_emu::timing::alternation::analyse(&pr));
    if let Some(path) = trace {
        let mut out = String::new();
        for sp in &pr.spans {
            out += &format!("{}\t{}\t{}\t{}\n", sp.wave_uid, sp.name, sp.start, sp.dur);
        }
        std::fs::write(path, out).unwrap();
    }
    eprintln!(
        "{} {s}: {:.1} us {:.0} TFLOP/s ({:.1}s)",
        k.name,
        pr.seconds * 1e6,
        pr.tflops,
        t.elapsed().as_secs_f64()
    );
}

#[test]
#[ignore]
fn mx_speed() {
    let arch = Arch::Gfx950;
    let s: u32 = std::env::var("MX_SIZE").ok().and_then(|x| x.parse().ok()).unwrap_or(8192);
    let which = std::env::var("MX_SPEED").unwrap_or_else(|_| "pp4".into());
    for w in which.split(',') {
        let f = if w.ends_with('4') { MxFormat::E2M1 } else { MxFormat::E4M3 };
        let base = KernelConfig::new(arch, DType::Fp8E4M3, DType::Bf16, true, false, Align::Vec8);
        let cfg = match &w[..w.len() - 1] {
            "pp" => {
                let mut c = base.with_shape((256, 256, 128), (2, 4), MfmaShape::fp8_32(arch), 2).with_mx(f, f).unwrap();
                c.schedule = Sched::PingPongSlim { clusters: 2 };
                c
            }
            "il" => {
                let mut c = base.with_shape((256, 256, 128), (2, 2), MfmaShape::fp8_32(arch), 2).with_mx(f, f).unwrap();
                c.schedule = Sched::Interleave { slices: 4 };
                c
            }
            x => panic!("{x}"),
        };
        let mut cfg = cfg;
        cfg.grid = gemm_compiler::grid::GridOrder { chunk: 4, wgm: 8 };
        predict(cfg, s);
    }
}
