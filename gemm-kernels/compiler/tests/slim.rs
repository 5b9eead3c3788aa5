//! The ping-pong with slim fragments (`Schedule::PingPongSlim`) on gfx950's 8-wave
//! 256x256x128 fp8 tile (the catalogue's `fp8pp`, the tile of AMD's CDNA4 fp8 blog): its
//! fragment registers hold one K step (the slices' reads reuse them, the drain reads and
//! multiplies one piece group at a time), so it is resident with two waves per SIMD; it is
//! right and clean under every scheduling mode on one workgroup with both drains, and the
//! ping-pong's planted bugs (`src/plant.rs`) are caught in it. Edge shapes (tails,
//! padding, beta, scales) run in `tests/fp8.rs` (`fp8_catalogue_kernels`,
//! `fp8_slim_ping_pong_every_mode`).

use gemm_compiler::ir::{Align, Arch, KernelConfig, MfmaShape};
use gemm_compiler::plant::PlantedBug;
use gemm_compiler::schedule::Schedule;
use gemm_compiler::{compile, compile_kernel_with, kernel_args, optimise, CompileError, CompiledKernel, Options};
use gemm_core::fp8::Fp8E4M3;
use gemm_core::{DType, GemmProblem, Layout, Transpose};
use gemm_emu::{Checker, Device, Kind, LaunchOptions, LaunchReport, Mode, Schedule as EmuSchedule};
use rand::{Rng, SeedableRng};

fn config(clusters: u8) -> KernelConfig {
    let arch = Arch::Gfx950;
    let mut c = KernelConfig::new(arch, DType::Fp8E4M3, DType::F32, true, false, Align::Vec8).with_shape(
        (256, 256, 128),
        (2, 4),
        MfmaShape::fp8_32(arch),
        2,
    );
    c.schedule = Schedule::PingPongSlim { clusters };
    c
}

fn build(clusters: u8, plant: Option<PlantedBug>) -> Result<CompiledKernel, CompileError> {
    compile_kernel_with(optimise(config(clusters)).unwrap(), Options { plant, ..Default::default() })
}

/// One workgroup, five K tiles (both LDS buffers, an odd count so both drains run).
const M: usize = 256;
const N: usize = 256;
const K: usize = 640;

/// Runs `k`; returns the report and how many of C's elements are wrong.
fn run(k: &CompiledKernel, mode: Mode) -> (LaunchReport, usize) {
    run_k(k, mode, K)
}

/// [`run`] with `K = k_len`.
fn run_k(k: &CompiledKernel, mode: Mode, k_len: usize) -> (LaunchReport, usize) {
    let cfg = k.config;
    let p = GemmProblem::new(M, N, k_len)
        .with_layout(Layout::ColMajor)
        .with_transposes(Transpose::from_bool(cfg.trans_a), Transpose::from_bool(cfg.trans_b))
        .with_dtypes(DType::Fp8E4M3, DType::Fp8E4M3, DType::F32);
    let spans = p.validate().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    // Small integers: every product and sum is exact in f32.
    let mut fill =
        |n: usize| -> Vec<Fp8E4M3> { (0..n).map(|_| Fp8E4M3::from_f32(rng.gen_range(-2i32..=2) as f32)).collect() };
    let (a, b) = (fill(spans.a), fill(spans.b));
    let c0 = vec![f32::NAN; spans.c];
    let dev = Device::new(cfg.arch);
    let up = |bytes: &[u8]| {
        let ptr = dev.alloc((bytes.len() as u64).next_multiple_of(16)).unwrap();
        dev.copy_in(ptr, bytes).unwrap();
        ptr
    };
    let (pa, pb, pc) = (up(bytemuck::cast_slice(&a)), up(bytemuck::cast_slice(&b)), up(bytemuck::cast_slice(&c0)));
    let mut args = kernel_args::pack(
        pa,
        pb,
        pc,
        M as u32,
        N as u32,
        k_len as u32,
        p.lda as u32,
        p.ldb as u32,
        p.ldc as u32,
        p.alpha,
        p.beta,
    );
    kernel_args::with_scales(&mut args, 1.0, 1.0, 1.0);
    kernel_args::with_scale_vectors(&mut args, 0, 0);
    let (wg, block) = kernel_args::launch_workgroups(M as u32, N as u32, cfg.tile, cfg.threads());
    let opts = LaunchOptions { schedule: EmuSchedule { mode, seed: 5 }, threads: 2, ..Default::default() };
    let r =
        dev.launch_with(&k.code_object, &k.name, wg, block, &args[..kernel_args::size(&cfg) as usize], &opts).unwrap();
    let mut out = vec![0u8; 4 * spans.c];
    dev.copy_out(pc, &mut out).unwrap();
    let c1: Vec<f32> = bytemuck::cast_slice(&out).to_vec();
    let mut wrong = 0;
    for j in 0..N {
        for i in 0..M {
            // A^T B: op(A)(i, l) at l + i*lda, op(B)(l, j) at l + j*ldb.
            let want: f32 = (0..k_len).map(|l| a[l + i * p.lda].to_f32() * b[l + j * p.ldb].to_f32()).sum();
            if c1[i + j * p.ldc] != want {
                wrong += 1;
            }
        }
    }
    eprintln!("{} {mode:?}: {wrong}/{} of C wrong, {} findings", k.name, M * N, r.reports.len());
    for x in r.reports.iter().take(6) {
        eprintln!("  {x}");
    }
    (r, wrong)
}

const RACE: [Kind; 4] = [Kind::ReadAfterWrite, Kind::WriteAfterRead, Kind::WriteAfterWrite, Kind::UninitializedRead];

fn races(r: &LaunchReport) -> bool {
    r.reports.iter().any(|x| x.checker == Checker::Race && RACE.contains(&x.kind))
}

/// The slim fragments are what makes the tile resident: one K step's fragments (48
/// VGPRs) instead of the K tile's (96), and 8 waves fit two per SIMD.
#[test]
fn slim_fragments_make_the_blog_tile_resident() {
    let slim = compile(config(2)).unwrap();
    slim.resident().unwrap();
    let ls = slim.kernel.schedule.as_ref().expect("scheduled");
    assert_eq!(ls.schedule, Schedule::PingPongSlim { clusters: 2 });
    assert!(ls.slices.iter().all(|s| s.pieces.1 - s.pieces.0 == 2), "{:?}", ls.slices);
    assert_eq!(gemm_compiler::schedule::frag_pieces(&slim.config), 2);
    let mut whole = config(2);
    whole.schedule = Schedule::PingPong { clusters: 2 };
    let whole = compile(whole).unwrap();
    assert!(whole.resident().is_err(), "{}: the whole K tile's fragments should not fit", whole.name);
    assert!(slim.name.ends_with("_pps2"), "{}", slim.name);
    // Nothing to save where a slice holds the whole K tile's pieces (16x16x128: one K step).
    let mut one_step = config(2);
    one_step.mfma = MfmaShape::fp8_16(Arch::Gfx950);
    let e = optimise(one_step).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("slim fragments"), "{e}");
}

#[test]
fn unplanted_slim_ping_pong_is_clean_and_right() {
    for clusters in [2, 4] {
        let k = build(clusters, None).unwrap();
        for mode in Mode::ALL {
            let (r, wrong) = run(&k, mode);
            assert!(r.reports.is_empty(), "{r}");
            assert_eq!(wrong, 0, "{} {mode:?}", k.name);
        }
        // K tails of whole 16-byte vectors take the tail tile's vector loads
        // (`schedule::slim_edges`): 80 and 16 bytes past the last whole tile, and a
        // single partial tile; 100 takes the element loads.
        for (i, k_len) in [336, 400, 48, 100].into_iter().enumerate() {
            let (r, wrong) = run_k(&k, Mode::ALL[i % Mode::ALL.len()], k_len);
            assert!(r.reports.is_empty(), "{r}");
            assert_eq!(wrong, 0, "{} K {k_len}", k.name);
        }
    }
}

#[test]
fn planted_barrier_removed_in_slim_ping_pong() {
    let k = build(2, Some(PlantedBug::BarrierRemoved)).unwrap();
    let (r, wrong) = run(&k, Mode::LongestLatency);
    assert!(races(&r), "race detector silent\n{r}");
    assert!(wrong > 0, "longest-latency schedule still right");
}

#[test]
fn planted_weak_vmcnt_in_slim_ping_pong() {
    // The first vmcnt wait of the loop: the one before the barrier that publishes the next
    // tile's LDS-DMA copies.
    let k = build(2, Some(PlantedBug::WeakVmcnt)).unwrap();
    let (r, wrong) = run(&k, Mode::LongestLatency);
    assert!(races(&r), "race detector silent on the DMA read early\n{r}");
    assert!(wrong > 0, "longest-latency schedule still right");
}
