//! The four races of the Mojo ping-pong port (seed 002 §5, §14, §15.13) planted into the
//! compiled 8-wave ping-pong schedule (`Options::plant`, `src/plant.rs`): for each, the
//! emulator's race detector, register-wait checker or barrier checker reports it and the
//! longest-latency scheduling mode produces a wrong number, while the unplanted kernel on
//! the same shape is clean and right.

use gemm_compiler::ir::{Align, Arch, DmaPolicy, KernelConfig, MfmaShape};
use gemm_compiler::passes::buffer_ops::CopyPath;
use gemm_compiler::plant::{PlantError, PlantedBug};
use gemm_compiler::schedule::Schedule;
use gemm_compiler::{compile_kernel_with, kernel_args, optimise, CompileError, CompiledKernel, Options};
use gemm_core::{bf16, DType, GemmProblem, Layout, Transpose};
use gemm_emu::{Checker, Device, Kind, LaunchOptions, LaunchReport, Mode, Schedule as EmuSchedule};
use rand::{Rng, SeedableRng};

/// 8 waves, 256x256x64 bf16 -> f32, two dot clusters per K tile (Triton's Two-PP rule
/// gives two for this tile size). `dma`: A transposed (K-contiguous) so that both operands
/// are copied with LDS-DMA; else A is register-staged (transposing `ds_write_b16`s) and B
/// goes by LDS-DMA.
fn config(arch: Arch, dma: bool) -> KernelConfig {
    let mut c = KernelConfig::new(arch, DType::Bf16, DType::F32, dma, false, Align::Vec8).with_shape(
        (256, 256, 64),
        (2, 4),
        MfmaShape::native_16(arch),
        2,
    );
    c.schedule = Schedule::PingPong { clusters: 2 };
    if dma {
        c.direct_to_lds = DmaPolicy::Always;
    }
    c
}

fn build(arch: Arch, dma: bool, plant: Option<PlantedBug>) -> Result<CompiledKernel, CompileError> {
    let k = optimise(config(arch, dma)).unwrap();
    let dmas = k.copy_paths.iter().filter(|p| **p == CopyPath::DirectToLds).count();
    assert_eq!(dmas, 1 + usize::from(dma), "{:?}", k.copy_paths);
    compile_kernel_with(k, Options { plant, ..Default::default() })
}

/// One workgroup, five K tiles (both LDS buffers, an odd count so both drains run).
const M: usize = 256;
const N: usize = 256;
const K: usize = 320;

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
        .with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
    let spans = p.validate().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut fill =
        |n: usize| -> Vec<bf16> { (0..n).map(|_| bf16::from_f32(rng.gen_range(-2i32..=2) as f32)).collect() };
    let (a, b) = (fill(spans.a), fill(spans.b));
    let c0 = vec![f32::NAN; spans.c];
    let dev = Device::new(cfg.arch);
    let up = |bytes: &[u8]| {
        let ptr = dev.alloc((bytes.len() as u64).next_multiple_of(16)).unwrap();
        dev.copy_in(ptr, bytes).unwrap();
        ptr
    };
    let (pa, pb, pc) = (up(bytemuck::cast_slice(&a)), up(bytemuck::cast_slice(&b)), up(bytemuck::cast_slice(&c0)));
    let args = kernel_args::pack(
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
    let (wg, block) = kernel_args::launch_workgroups(M as u32, N as u32, cfg.tile, cfg.threads());
    let opts = LaunchOptions { schedule: EmuSchedule { mode, seed: 3 }, threads: 2, ..Default::default() };
    let r =
        dev.launch_with(&k.code_object, &k.name, wg, block, &args[..kernel_args::size(&cfg) as usize], &opts).unwrap();
    let mut out = vec![0u8; 4 * spans.c];
    dev.copy_out(pc, &mut out).unwrap();
    let c1: Vec<f32> = bytemuck::cast_slice(&out).to_vec();
    // Small integers: the reference is exact in f32 whatever the summation order.
    let mut wrong = 0;
    for j in 0..N {
        for i in 0..M {
            let at = |l: usize| if cfg.trans_a { a[l + i * p.lda] } else { a[i + l * p.lda] };
            let bt = |l: usize| if cfg.trans_b { b[j + l * p.ldb] } else { b[l + j * p.ldb] };
            let want: f32 = (0..k_len).map(|l| at(l).to_f32() * bt(l).to_f32()).sum();
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

fn any(r: &LaunchReport, checker: Checker, kinds: &[Kind]) -> bool {
    r.reports.iter().any(|x| x.checker == checker && kinds.contains(&x.kind))
}

const RACE: [Kind; 4] = [Kind::ReadAfterWrite, Kind::WriteAfterRead, Kind::WriteAfterWrite, Kind::UninitializedRead];

#[test]
fn unplanted_ping_pong_is_clean_and_right() {
    for dma in [false, true] {
        let k = build(Arch::Gfx950, dma, None).unwrap();
        for mode in [Mode::LongestLatency, Mode::Random] {
            let (r, wrong) = run(&k, mode);
            assert!(r.reports.is_empty(), "{r}");
            assert_eq!(wrong, 0);
        }
    }
}

#[test]
fn planted_shared_buffer_overwritten_early() {
    // A register-staged, B by LDS-DMA: wrong under longest-latency.
    let k = build(Arch::Gfx950, false, Some(PlantedBug::SharedBufferOverwrittenEarly)).unwrap();
    let (r, wrong) = run(&k, Mode::LongestLatency);
    assert!(any(&r, Checker::Race, &RACE), "race detector silent\n{r}");
    assert!(wrong > 0, "longest-latency schedule still right");
    // Both by LDS-DMA: the detector names group 1's DMA and group 0's read of the same
    // bytes under every mode (in either order); longest-latency and random give wrong
    // numbers (longest-latency keeps group 0's reads in flight while group 1 issues the
    // DMA, which lands first: `Mode::LongestLatency`).
    let k = build(Arch::Gfx950, true, Some(PlantedBug::SharedBufferOverwrittenEarly)).unwrap();
    for mode in Mode::ALL {
        let (r, wrong) = run(&k, mode);
        let read0 = |wave: usize, inst: &str| wave < 4 && inst.starts_with("ds_read");
        let dma1 = |wave: usize, inst: &str| wave >= 4 && inst.ends_with(" lds");
        assert!(
            r.by_checker(Checker::Race).iter().any(|x| x.other.as_ref().is_some_and(|o| (read0(x.wave, &x.inst)
                && dma1(o.0, &o.2))
                || (dma1(x.wave, &x.inst) && read0(o.0, &o.2)))),
            "{mode:?}: group 0 reading group 1's DMA early not reported\n{r}"
        );
        if matches!(mode, Mode::Random | Mode::LongestLatency) {
            assert!(wrong > 0, "{mode:?} schedule still right");
        }
    }
}

#[test]
fn planted_weak_vmcnt_on_register_staged_copies() {
    // The first vmcnt wait of the loop guards the staging VGPRs of A's copies.
    let k = build(Arch::Gfx950, false, Some(PlantedBug::WeakVmcnt)).unwrap();
    let (r, wrong) = run(&k, Mode::LongestLatency);
    let w = r.by_checker(Checker::Wait);
    assert!(
        w.iter().any(|x| x.kind == Kind::RegisterBeforeWait
            && x.inst.starts_with("ds_write")
            && x.other.as_ref().is_some_and(|o| o.2.starts_with("buffer_load_dwordx4"))),
        "register checker silent\n{r}"
    );
    assert!(wrong > 0, "longest-latency schedule still right");
}

#[test]
fn planted_weak_vmcnt_on_lds_dma_copies() {
    // The first vmcnt wait of the loop is the one before the barrier that publishes the
    // next tile's LDS-DMA copies.
    let k = build(Arch::Gfx950, true, Some(PlantedBug::WeakVmcnt)).unwrap();
    let (r, wrong) = run(&k, Mode::LongestLatency);
    assert!(
        r.by_checker(Checker::Race).iter().any(|x| {
            let o = x.other.as_ref().map(|o| o.2.as_str()).unwrap_or("");
            (x.inst.starts_with("ds_read") && o.ends_with(" lds"))
                || (x.inst.ends_with(" lds") && o.starts_with("ds_read"))
        }) || any(&r, Checker::Race, &[Kind::UninitializedRead]),
        "race detector silent on the DMA read early\n{r}"
    );
    assert!(wrong > 0, "longest-latency schedule still right");
}

#[test]
fn planted_barrier_removed() {
    for dma in [false, true] {
        let k = build(Arch::Gfx950, dma, Some(PlantedBug::BarrierRemoved)).unwrap();
        let (r, wrong) = run(&k, Mode::LongestLatency);
        assert!(any(&r, Checker::Race, &RACE), "race detector silent\n{r}");
        assert!(wrong > 0, "longest-latency schedule still right");
    }
}

#[test]
fn planted_stagger_barrier_on_the_wrong_side() {
    // Group 0 drains and ends while group 1 waits at its two extra barriers. This kernel's
    // loop pairing is unchanged (one phase apart) and its drain and epilogue share no LDS
    // between the groups, so the numbers stay right: the bug is latent here (in
    // `gemm-emu`'s tests/planted.rs, whose epilogue exchanges data through LDS, it gives
    // wrong numbers), and the barrier-count checker is what finds it.
    for dma in [false, true] {
        let k = build(Arch::Gfx950, dma, Some(PlantedBug::StaggerWrongSide)).unwrap();
        for mode in [Mode::LongestLatency, Mode::Fair] {
            let (r, _) = run(&k, mode);
            let b = r.by_checker(Checker::Barrier);
            assert!(
                b.iter().any(|x| x.kind == Kind::BarrierMismatch
                    && x.wave >= 4
                    && x.inst == "s_barrier"
                    && x.other.as_ref().is_some_and(|o| o.0 < 4 && o.2 == "s_endpgm")),
                "barrier checker silent\n{r}"
            );
        }
    }
}

#[test]
fn stagger_bugs_need_a_staggered_schedule() {
    let mut c = config(Arch::Gfx950, false);
    c.schedule = Schedule::Pipelined;
    let k = optimise(c).unwrap();
    let e = compile_kernel_with(k, Options { plant: Some(PlantedBug::StaggerWrongSide), ..Default::default() });
    assert!(matches!(e, Err(CompileError::Plant(PlantError::NoStagger { .. }))), "{e:?}");
}

/// The timing model's trace of one workgroup of `k` (M = N = 256, `k_len`), and the
/// alternation analysis of it (`gemm_emu::timing::alternation`).
fn alternation(k: &CompiledKernel, k_len: usize) -> gemm_emu::timing::alternation::Alternation {
    use gemm_emu::timing::{Model, ModelOptions, Workload};
    let cfg = k.config;
    let p = GemmProblem::new(M, N, k_len)
        .with_layout(Layout::ColMajor)
        .with_transposes(Transpose::from_bool(cfg.trans_a), Transpose::from_bool(cfg.trans_b))
        .with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
    let spans = p.validate().unwrap();
    let dev = Device::new(cfg.arch);
    let alloc = |n: usize| dev.alloc((n as u64).next_multiple_of(16)).unwrap();
    let (pa, pb, pc) = (alloc(2 * spans.a), alloc(2 * spans.b), alloc(4 * spans.c));
    let args = kernel_args::pack(
        pa,
        pb,
        pc,
        M as u32,
        N as u32,
        k_len as u32,
        p.lda as u32,
        p.ldb as u32,
        p.ldc as u32,
        1.0,
        0.0,
    );
    let (wg, block) = kernel_args::launch_workgroups(M as u32, N as u32, cfg.tile, cfg.threads());
    let w = Workload {
        code_object: &k.code_object,
        kernel: &k.name,
        grid: wg,
        block,
        kernarg: &args[..kernel_args::size(&cfg) as usize],
        dynamic_lds: 0,
        flops: 2.0 * (M * N * k_len) as f64,
    };
    let o = ModelOptions { trace_spans: 1_000_000, resident: Some(1), ..Default::default() };
    let pred = Model::new(cfg.arch).predict(dev.memory(), &w, &o).unwrap();
    let a = gemm_emu::timing::alternation::analyse(&pred);
    eprintln!("{}: {:.0} clk\n{a}", k.name, pred.sim_cycles);
    a
}

#[test]
fn ping_pong_trace_alternates_the_two_waves_of_each_simd() {
    // Each SIMD runs one wave of each group; the stagger puts one in its dot cluster while
    // the other runs its memory cluster. The same tile without the schedule (8 waves, the
    // pipelined loop) is the comparison: its two waves also take turns on the one MFMA
    // pipe (one cluster per K tile each), but far less of the partner's memory runs under
    // them. The tile is the catalogue's gfx942 `pingpong` (256x256x32, 16x16x16 MFMAs):
    // gfx950's 8-wave 256x256x64 cannot be resident, so the timing model refuses it.
    let cfg = |s: Schedule| {
        let mut c = KernelConfig::new(Arch::Gfx942, DType::Bf16, DType::F32, false, false, Align::Vec8).with_shape(
            (256, 256, 32),
            (2, 4),
            MfmaShape::native_16(Arch::Gfx942),
            2,
        );
        c.schedule = s;
        c
    };
    let k =
        compile_kernel_with(optimise(cfg(Schedule::PingPong { clusters: 2 })).unwrap(), Options::default()).unwrap();
    let a = alternation(&k, 1024);
    assert_eq!(a.pairs.len(), 4, "{a}");
    assert_eq!(a.alternating(), 4, "{a}");
    let base = compile_kernel_with(optimise(cfg(Schedule::Pipelined)).unwrap(), Options::default()).unwrap();
    let b = alternation(&base, 1024);
    // 32 K tiles: two dot clusters per tile and wave, strictly alternating.
    assert!(a.pairs.iter().all(|p| p.clusters[0] >= 63 && p.handover_ratio == 1.0), "{a}");
    assert!(a.mean_mem_under_mfma() >= b.mean_mem_under_mfma() + 0.25, "ping-pong {a}\npipelined {b}");
}

/// A too-weak wait planted into three-stage kernels (`passes/pipeline.rs`: three LDS
/// buffers, the copies of the tile after next in flight), which the unplanted kernels run
/// clean and right. LDS-DMA: the first `vmcnt` of the loop is the barrier's `vmcnt(N)`
/// that lets the N copies of the tile after next stay outstanding; one more leaves the
/// last copy of the tile the barrier publishes in flight while the other waves read it.
/// Register-staged: the first `vmcnt` guards the first LDS write of the next tile from
/// the older staging set, with the tile after next's loads younger; one more writes a
/// staging VGPR before its load has landed. Seven K tiles: the loop runs five times, so
/// the planted wait (in the first unrolled body) runs again after the back edge, where
/// two tiles' copies are outstanding at the barrier (on entry only the prefetch is).
#[test]
fn planted_weak_vmcnt_in_three_stage_kernels() {
    const K3: usize = 7 * 64;
    for dma in [true, false] {
        let mut c = KernelConfig::new(Arch::Gfx950, DType::Bf16, DType::F32, dma, false, Align::Vec8).with_shape(
            (128, 128, 64),
            (2, 2),
            MfmaShape::native_32(Arch::Gfx950),
            3,
        );
        c.direct_to_lds = if dma { DmaPolicy::Auto } else { DmaPolicy::Never };
        let k = optimise(c).unwrap();
        assert_eq!(k.lds_buffers, 3);
        let dmas = k.copy_paths.iter().filter(|p| **p == CopyPath::DirectToLds).count();
        assert_eq!(dmas, 2 * usize::from(dma), "{:?}", k.copy_paths);
        let clean = compile_kernel_with(k.clone(), Options::default()).unwrap();
        let (r, wrong) = run_k(&clean, Mode::LongestLatency, K3);
        assert!(r.reports.is_empty(), "{r}");
        assert_eq!(wrong, 0);
        let bad = compile_kernel_with(k, Options { plant: Some(PlantedBug::WeakVmcnt), ..Default::default() }).unwrap();
        let (r, wrong) = run_k(&bad, Mode::LongestLatency, K3);
        if dma {
            assert!(
                r.by_checker(Checker::Race).iter().any(|x| {
                    let o = x.other.as_ref().map(|o| o.2.as_str()).unwrap_or("");
                    (x.inst.starts_with("ds_read") && o.ends_with(" lds"))
                        || (x.inst.ends_with(" lds") && o.starts_with("ds_read"))
                }),
                "race detector silent on the DMA read early\n{r}"
            );
        } else {
            assert!(
                r.by_checker(Checker::Wait).iter().any(|x| x.kind == Kind::RegisterBeforeWait
                    && x.inst.starts_with("ds_write")
                    && x.other.as_ref().is_some_and(|o| o.2.starts_with("buffer_load_dwordx4"))),
                "register checker silent\n{r}"
            );
        }
        assert!(wrong > 0, "longest-latency schedule still right");
    }
}
