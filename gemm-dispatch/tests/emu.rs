//! Catalogue kernels through the real dispatch path on emulated GPUs: `emu:gfx942` and
//! `emu:gfx950` devices in a Context, row- and column-major problems, every transpose, edge
//! tiles, beta = 0 with NaN in C, batches over emulated and host devices together.

mod common;
use common::quarters;
use gemm_core::reference::{self, random_values};
use gemm_core::Arch;
use gemm_core::{bf16, f16, Element, GemmProblem, Layout, StridedBatch, Transpose};
use gemm_dispatch::backends::emu::EmuBackend;
use gemm_dispatch::backends::host::HostBackend;
use gemm_dispatch::{Backend, Context, DeviceInfo, Error};
use gemm_emu::Schedule;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn check<AB: Element, C: Element>(ctx: &Context, p: &GemmProblem, seed: u64) {
    let s = p.validate().unwrap();
    let a: Vec<AB> = random_values(s.a, seed);
    let b: Vec<AB> = random_values(s.b, seed + 1);
    let c0: Vec<C> = if p.beta == 0.0 { vec![C::from_f32(f32::NAN); s.c] } else { random_values(s.c, seed + 2) };
    let mut c = c0.clone();
    ctx.gemm_on(0, p, &a, &b, &mut c).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    let r = reference::check(p, &a, &b, &c0, &c, None).unwrap();
    assert!(r.passed(), "{p:?}: {r:?}");
}

#[test]
fn both_archs_every_layout_and_transpose() {
    for spec in ["emu:gfx942", "emu:gfx950:random:3"] {
        let ctx = Context::from_spec(spec).unwrap();
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            for ta in [Transpose::No, Transpose::Yes] {
                for tb in [Transpose::No, Transpose::Yes] {
                    for (i, &(m, n, k, beta)) in [(1, 1, 1, 0.0), (17, 33, 65, 0.5)].iter().enumerate() {
                        let p = GemmProblem::new(m, n, k)
                            .with_elements::<bf16, bf16, f32>()
                            .with_layout(layout)
                            .with_transposes(ta, tb)
                            .with_scalars(1.5, beta);
                        check::<bf16, f32>(&ctx, &p, i as u64 * 10);
                    }
                }
            }
        }
        let p = GemmProblem::new(40, 24, 33).with_elements::<f16, f16, f16>().with_scalars(1.0, 0.0);
        let p = p.with_leading_dims(p.lda + 8, p.ldb + 8, p.ldc + 3);
        check::<f16, f16>(&ctx, &p, 99);
    }
}

#[test]
fn problems_without_a_kernel_fall_back_to_the_next_device() {
    // OCP fp8 is gfx950's flavour: gfx942 has no kernel for it, so the emulated device
    // declines and the host runs it.
    use gemm_core::Fp8E4M3;
    let ctx = Context::from_spec("emu:gfx942,host").unwrap();
    let p = GemmProblem::new(9, 7, 5).with_elements::<Fp8E4M3, Fp8E4M3, f32>();
    let a: Vec<Fp8E4M3> = random_values(45, 1);
    let b: Vec<Fp8E4M3> = random_values(35, 2);
    let mut c = vec![0f32; 63];
    ctx.gemm(&p, &a, &b, &mut c).unwrap();
    assert!(reference::check(&p, &a, &b, &[0f32; 63], &c, None).unwrap().passed());
    let only_emu = Context::from_spec("emu:gfx942").unwrap();
    assert!(matches!(only_emu.gemm(&p, &a, &b, &mut c), Err(Error::Unsupported { .. })));
}

/// f32 GEMMs run on the emulated GPUs' f32 kernels, within f32 tolerance, on both archs,
/// every transpose, both layouts, edge tiles and a K tail; with xf32 allowed, gfx942 runs
/// its xf32 kernels within the xf32 bound (`reference::allowed_error`) and gfx950, which
/// has none, full f32.
#[test]
fn f32_problems_run_on_the_gpu_kernels() {
    for (i, spec) in ["emu:gfx942", "emu:gfx950:random:5"].into_iter().enumerate() {
        let ctx = Context::from_spec(spec).unwrap();
        for (j, (ta, tb)) in [(false, false), (false, true), (true, false), (true, true)].into_iter().enumerate() {
            let layout = if j % 2 == 0 { Layout::ColMajor } else { Layout::RowMajor };
            let p = GemmProblem::new(37, 70, 45)
                .with_layout(layout)
                .with_transposes(Transpose::from_bool(ta), Transpose::from_bool(tb))
                .with_scalars(1.0, if j < 2 { 0.0 } else { 0.5 });
            check::<f32, f32>(&ctx, &p, 40 + (i * 4 + j) as u64);
            check::<f32, f32>(&ctx, &p.with_xf32(true), 60 + (i * 4 + j) as u64);
        }
    }
}

/// The emulated GPU, counting the jobs it starts.
struct Counting {
    inner: EmuBackend,
    calls: AtomicUsize,
}

impl Backend for Counting {
    fn info(&self) -> DeviceInfo {
        self.inner.info()
    }
    fn gemm(&self, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> gemm_dispatch::Result<()> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.gemm(p, a, b, c)
    }
}

/// The host, starting only once the emulated GPU has taken a job, so the test does not depend
/// on which worker thread the OS runs first.
struct AfterFirstCallOf {
    other: Arc<Counting>,
    inner: HostBackend,
}

impl Backend for AfterFirstCallOf {
    fn info(&self) -> DeviceInfo {
        self.inner.info()
    }
    fn gemm(&self, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> gemm_dispatch::Result<()> {
        let start = std::time::Instant::now();
        while self.other.calls.load(Ordering::SeqCst) == 0 && start.elapsed().as_secs() < 20 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        self.inner.gemm(p, a, b, c)
    }
}

#[test]
fn a_batch_over_emulated_and_host_devices() {
    let emu =
        Arc::new(Counting { inner: EmuBackend::new(Arch::Gfx950, Schedule::default()), calls: AtomicUsize::new(0) });
    let host = Arc::new(AfterFirstCallOf { other: emu.clone(), inner: HostBackend::new(1, 1) });
    let ctx = Context::from_backends(vec![emu.clone(), host]).unwrap();
    let p = GemmProblem::new(20, 12, 9).with_elements::<bf16, bf16, bf16>().with_scalars(1.0, 1.0);
    let s = p.validate().unwrap();
    let batch = StridedBatch { problem: p, count: 6, stride_a: s.a, stride_b: 0, stride_c: s.c };
    let t = batch.validate().unwrap();
    let a: Vec<bf16> = random_values(t.a, 4);
    let b: Vec<bf16> = random_values(t.b, 5);
    let c0: Vec<bf16> = random_values(t.c, 6);
    let mut c = c0.clone();
    let report = ctx.gemm_strided_batched(&batch, &a, &b, &mut c).unwrap();
    assert!(report.all_ok());
    assert!(report.items.iter().any(|o| o.device == Some(0)), "the emulated GPU ran items");
    assert_eq!(report.items.iter().filter(|o| o.device == Some(0)).count(), emu.calls.load(Ordering::SeqCst));
    for i in 0..6 {
        let (oa, _, oc) = batch.offsets(i);
        let r = reference::check(&p, &a[oa..oa + s.a], &b, &c0[oc..oc + s.c], &c[oc..oc + s.c], None).unwrap();
        assert!(r.passed(), "item {i}: {r:?}");
    }
}

/// A tall-K problem (64x64x65536: one 64x64 tile) on the emulated GPUs runs as split-K: the
/// partial kernel over K ranges of the grid's z dimension into a workspace, then the reduction,
/// in that order; the result matches the reference (beta = 0 over NaN in C, then beta != 0),
/// with the race and hazard checkers silent (a finding fails the call).
#[test]
fn tall_k_runs_split_k() {
    for (i, arch) in Arch::ALL.into_iter().enumerate() {
        let emu = Arc::new(EmuBackend::new(arch, Schedule { mode: gemm_emu::Mode::ALL[i + 1], seed: 5 }));
        let ctx = Context::from_backends(vec![emu.clone()]).unwrap();
        for (j, beta) in [0.0f32, 0.5].into_iter().enumerate() {
            let p = GemmProblem::new(64, 64, 65536)
                .with_elements::<bf16, bf16, bf16>()
                .with_layout(if j == 0 { Layout::ColMajor } else { Layout::RowMajor })
                .with_transposes(Transpose::Yes, Transpose::from_bool(j == 1))
                .with_scalars(0.5, beta);
            // The runtime's plan (`plan_gemm`: the table's kernel, or a tiled split weighed
            // against a decode kernel).
            let split = gemm_dispatch::plan::gemm_plan::plan_gemm(arch, arch.caps().compute_units, &p)
                .unwrap()
                .unwrap()
                .split
                .expect("split-K is chosen for 64x64x65536");
            check::<bf16, bf16>(&ctx, &p, 70 + j as u64);
            let ran = emu.last_kernels();
            assert_eq!(ran, [split.partial.name, split.reduce.name], "{arch}");
            assert!(ran[0].ends_with("_splitk") && ran[1].contains("splitk_reduce"), "{ran:?}");
        }
    }
}

/// A split tail (`splitk::choose_tail_in`) on the emulated gfx942 with gfx942's ping-pong
/// kernel, asking for 4 resident workgroups so that a small problem has a mostly idle last
/// round: 273x612x552 is 2 x 3 tiles of 256x256 (edges in M and N), two rounds of 4; the
/// head runs columns 0..512 plain, the last tile column splits K (552: a K tail) in two.
/// Column- and row-major, nn and tn kernels, padded leading dimensions, beta = 0 over NaN
/// and beta != 0, three
/// scheduling modes: the three launches run in order and C matches the reference, the race
/// and hazard checkers silent (a finding fails the call).
#[test]
fn split_tail_runs_head_partial_reduction() {
    use gemm_dispatch::plan::kernel_plan::plan_for;
    let arch = Arch::Gfx942;
    let cases = [
        (Layout::ColMajor, Transpose::No, Transpose::No, 0.0f32),
        (Layout::ColMajor, Transpose::Yes, Transpose::No, 0.75),
        (Layout::RowMajor, Transpose::No, Transpose::Yes, 0.0),
    ];
    for (i, (layout, ta, tb, beta)) in cases.into_iter().enumerate() {
        let emu = EmuBackend::new(arch, Schedule { mode: gemm_emu::Mode::ALL[i], seed: 21 + i as u64 });
        let (m, n) = if layout == Layout::ColMajor { (273, 612) } else { (612, 273) };
        let p = GemmProblem::new(m, n, 552)
            .with_elements::<bf16, bf16, bf16>()
            .with_layout(layout)
            .with_transposes(ta, tb)
            .with_scalars(1.25, beta);
        // The ping-pong kernels load 16-byte vectors: A and B padded to 8 elements, C by 3.
        let p = p.with_leading_dims(p.lda.next_multiple_of(8), p.ldb.next_multiple_of(8), p.ldc + 3);
        let cm = gemm_dispatch::plan::kernel_plan::column_major(&p).unwrap();
        let pp = gemm_kernels::for_arch(arch)
            .find(|e| {
                e.family == "pingpong"
                    && e.c_type == gemm_core::DType::Bf16
                    && e.a_type == gemm_core::DType::Bf16
                    && (e.trans_a, e.trans_b) == (cm.trans_a, cm.trans_b)
            })
            .expect("a ping-pong kernel");
        let plain = plan_for(pp, &p).unwrap();
        let sp = gemm_dispatch::plan::splitk::choose_tail_in(arch, &p, &plain, 4).unwrap();
        assert_eq!((sp.col0, sp.problem.n, sp.splits), (512, 100, 2), "{layout:?}");
        let s = p.validate().unwrap();
        let a: Vec<bf16> = random_values(s.a, 80 + i as u64);
        let b: Vec<bf16> = random_values(s.b, 90 + i as u64);
        let c0: Vec<bf16> = if beta == 0.0 { vec![bf16::from_f32(f32::NAN); s.c] } else { random_values(s.c, 7) };
        let mut c = c0.clone();
        let mut cb = bytemuck::cast_slice::<bf16, u8>(&c).to_vec();
        emu.run_split(&sp, &p, bytemuck::cast_slice(&a), bytemuck::cast_slice(&b), &mut cb)
            .unwrap_or_else(|e| panic!("{layout:?} {ta:?}{tb:?}: {e}"));
        c.copy_from_slice(bytemuck::cast_slice(&cb));
        assert_eq!(emu.last_kernels(), [pp.name, sp.partial.name, sp.reduce.name]);
        let r = reference::check(&p, &a, &b, &c0, &c, None).unwrap();
        assert!(r.passed(), "{layout:?} {ta:?}{tb:?}: {r:?}");
    }
}

#[test]
fn device_entries() {
    assert!(Context::from_spec("emu:gfx942:longest-latency:7").is_ok());
    for bad in ["emu", "emu:gfx90a", "emu:gfx942:sideways", "emu:gfx942:fair:x"] {
        assert!(matches!(Context::from_spec(bad), Err(Error::DeviceSpec { .. })), "{bad}");
    }
}

/// Decode shapes (a Linear layer's `y = x W^T` with 1..8 rows of x) run the decode kernels
/// (gemm-compiler `lower/decode.rs`), alone or split over K, on both emulated archs from one
/// context of two GPUs: K tails (not a multiple of the kernels' step nor of 8), padded leading
/// dimensions, beta = 0 over NaN and beta != 0, bf16 -> bf16 and f16 -> f32.
#[test]
fn decode_shapes_run_the_decode_kernels_on_two_gpus() {
    use gemm_dispatch::plan::gemm_plan::plan_gemm;
    let ctx = Context::from_spec("emu:gfx942,emu:gfx950:random:7").unwrap();
    let cases = [(1, 1280, 4100, 0.0), (3, 77, 1003, 0.75), (8, 300, 2056, 0.0)];
    for (dev, arch) in [(0, Arch::Gfx942), (1, Arch::Gfx950)] {
        for (i, &(m, n, k, beta)) in cases.iter().enumerate() {
            for f16_in in [false, true] {
                let p = GemmProblem::new(m, n, k)
                    .with_layout(Layout::RowMajor)
                    .with_transposes(Transpose::No, Transpose::Yes)
                    .with_scalars(1.25, beta);
                let p = if f16_in { p.with_elements::<f16, f16, f32>() } else { p.with_elements::<bf16, bf16, bf16>() };
                // Leading dimensions of whole 16-byte vectors (the decode kernels load dwordx4),
                // padded past K.
                let kk = k.next_multiple_of(8);
                let p = p.with_leading_dims(kk + 8 * (i % 2), kk + 16, p.ldc + 3);
                let plan = plan_gemm(arch, arch.caps().compute_units, &p).unwrap().unwrap();
                let e = plan.split.map_or(plan.kernel.entry, |s| s.partial);
                assert!(e.is_decode(), "{arch} {m}x{n}x{k}: {}", e.name);
                let s = p.validate().unwrap();
                let seed = 500 + (dev * 10 + i) as u64;
                if f16_in {
                    let (a, b): (Vec<f16>, Vec<f16>) = (random_values(s.a, seed), random_values(s.b, seed + 1));
                    let c0: Vec<f32> = if beta == 0.0 { vec![f32::NAN; s.c] } else { random_values(s.c, seed + 2) };
                    let mut c = c0.clone();
                    ctx.gemm_on(dev, &p, &a, &b, &mut c).unwrap();
                    assert!(reference::check(&p, &a, &b, &c0, &c, None).unwrap().passed(), "{arch} {p:?}");
                } else {
                    let (a, b): (Vec<bf16>, Vec<bf16>) = (random_values(s.a, seed), random_values(s.b, seed + 1));
                    let c0: Vec<bf16> =
                        if beta == 0.0 { vec![bf16::from_f32(f32::NAN); s.c] } else { random_values(s.c, seed + 2) };
                    let mut c = c0.clone();
                    ctx.gemm_on(dev, &p, &a, &b, &mut c).unwrap();
                    assert!(reference::check(&p, &a, &b, &c0, &c, None).unwrap().passed(), "{arch} {p:?}");
                }
            }
        }
    }
}

/// The decode-rows kernels (gemm-compiler `lower/decode_rows.rs`: the activations' K slice in
/// LDS, each wave on its own weight rows) through the runtime on both emulated archs from one
/// context of two GPUs. They win where the weights have many rows and M is 17..64, so the
/// shapes are Llama-8B gate_up's 28672 weight rows over a short K (the emulator runs each in a
/// few seconds): 24 tokens with K = 136 (a K tail past the 64-element step of the two-load
/// kernel), bf16 -> f32, beta = 0 over NaN; 32 tokens with K = 128, bf16 -> bf16, beta != 0;
/// leading dimensions padded past K and past N.
#[test]
fn decode_rows_shapes_run_on_two_gpus() {
    use gemm_dispatch::plan::gemm_plan::plan_gemm;
    let ctx = Context::from_spec("emu:gfx942,emu:gfx950:random:11").unwrap();
    let cases = [(24, 28672, 136, 0.0, 144), (32, 28672, 128, 0.75, 136)];
    for (dev, arch) in [(0, Arch::Gfx942), (1, Arch::Gfx950)] {
        for (i, &(m, n, k, beta, ld)) in cases.iter().enumerate() {
            let p = GemmProblem::new(m, n, k)
                .with_layout(Layout::RowMajor)
                .with_transposes(Transpose::No, Transpose::Yes)
                .with_scalars(0.75, beta);
            let p =
                if beta == 0.0 { p.with_elements::<bf16, bf16, f32>() } else { p.with_elements::<bf16, bf16, bf16>() };
            let p = p.with_leading_dims(ld, ld, n + 8);
            let plan = plan_gemm(arch, arch.caps().compute_units, &p).unwrap().unwrap();
            let e = plan.split.map_or(plan.kernel.entry, |s| s.partial);
            assert!(e.name.contains("_decr"), "{arch} {m}x{n}x{k}: the plan runs {}", e.name);
            let s = p.validate().unwrap();
            let seed = 900 + (dev * 10 + i) as u64;
            let (a, b): (Vec<bf16>, Vec<bf16>) = (random_values(s.a, seed), random_values(s.b, seed + 1));
            if beta == 0.0 {
                let c0 = vec![f32::NAN; s.c];
                let mut c = c0.clone();
                ctx.gemm_on(dev, &p, &a, &b, &mut c).unwrap();
                assert!(reference::check(&p, &a, &b, &c0, &c, None).unwrap().passed(), "{arch} {p:?}");
            } else {
                let c0: Vec<bf16> = random_values(s.c, seed + 2);
                let mut c = c0.clone();
                ctx.gemm_on(dev, &p, &a, &b, &mut c).unwrap();
                assert!(reference::check(&p, &a, &b, &c0, &c, None).unwrap().passed(), "{arch} {p:?}");
            }
        }
    }
}

/// One fp8 decode shard on an emulated GPU: the dispatcher's plan splits K with an fp8
/// `splitk_decode` or `splitk_decode_rows` partial kernel; the runtime (`Context::gemm_on`) launches partial and
/// reduction and matches the reference; the same split with per-tensor scales and both
/// scale vectors (`EmuBackend::run_split_scaled`) matches the host's scaled GEMM bit for bit
/// (exact inputs and power-of-two scales: every sum is exact).
fn fp8_decode_split<T: Element, C: Element>(arch: Arch, mode: gemm_emu::Mode, p: &GemmProblem) {
    use gemm_dispatch::plan::gemm_plan::plan_gemm;
    let emu = Arc::new(EmuBackend::new(arch, Schedule { mode, seed: 31 }));
    let ctx = Context::from_backends(vec![emu.clone()]).unwrap();
    let plan = plan_gemm(arch, arch.caps().compute_units, p).unwrap().unwrap();
    let sp = plan.split.unwrap_or_else(|| panic!("{arch} {p:?}: {} unsplit", plan.kernel.entry.name));
    // Either decode family's twin: the dispatcher weighs the decode-rows kernels' splits too
    // (`plan_gemm`; by the timing model 70B/8 qkv fp8 at M = 1 on gfx942 runs 4.08 us split over
    // the 64x16 decode-rows kernel against 4.31 with the decode kernel's).
    assert!(sp.partial.is_decode() && sp.partial.family.starts_with("splitk_decode"), "{}", sp.partial.name);
    assert_eq!(sp.partial.a_type, T::DTYPE, "{}", sp.partial.name);
    assert!(sp.splits >= 2, "{}", sp.splits);
    let s = p.validate().unwrap();
    let (a, b): (Vec<T>, Vec<T>) = (quarters(s.a, 1), quarters(s.b, 2));
    let c0: Vec<C> = if p.beta == 0.0 { vec![C::from_f32(f32::NAN); s.c] } else { quarters(s.c, 3) };
    let mut c = c0.clone();
    ctx.gemm_on(0, p, &a, &b, &mut c).unwrap_or_else(|e| panic!("{arch} {p:?}: {e}"));
    assert_eq!(emu.last_kernels(), [sp.partial.name, sp.reduce.name], "{arch}");
    let r = reference::check(p, &a, &b, &c0, &c, None).unwrap();
    assert!(r.passed(), "{arch} {p:?}: {r:?}");
    // Scales: the problem's rows (x, m of them) and columns (W's rows, n).
    let scales = gemm_dispatch::Fp8Scales { a: 0.5, b: 4.0, d: 0.25 };
    let row: Vec<f32> = (0..p.m).map(|i| [0.5, -2.0, 1.0][i % 3]).collect();
    let col: Vec<f32> = (0..p.n).map(|j| [1.0, 0.25, -4.0, 2.0][j % 4]).collect();
    let mut want = bytemuck::cast_slice::<C, u8>(&c0).to_vec();
    let host = Context::from_spec("host").unwrap();
    let (ab, bb) = (bytemuck::cast_slice(&a), bytemuck::cast_slice(&b));
    host.gemm_scaled_bytes(p, ab, bb, &mut want, &scales, Some(&row), Some(&col)).unwrap();
    let mut got = bytemuck::cast_slice::<C, u8>(&c0).to_vec();
    emu.run_split_scaled(&sp, p, ab, bb, &mut got, &scales, Some(&row), Some(&col))
        .unwrap_or_else(|e| panic!("{arch} {p:?}: {e}"));
    assert_eq!(emu.last_kernels(), [sp.partial.name, sp.reduce.name], "{arch}");
    let (g, w): (&[C], &[C]) = (bytemuck::cast_slice(&got), bytemuck::cast_slice(&want));
    for (x, (g, w)) in g.iter().zip(w).enumerate() {
        let same = bytemuck::bytes_of(g) == bytemuck::bytes_of(w) || (g.to_f32().is_nan() && w.to_f32().is_nan());
        assert!(same, "{arch} {p:?} element {x}: {} against the host's {}", g.to_f32(), w.to_f32());
    }
}

/// fp8 decode on tensor-parallel shards (70B/8 qkv: 1280 weight rows, K 8192, one and three
/// rows of x, a K tail, padded leading dimensions) runs split over K on both emulated archs
/// (gfx942 FNUZ e4m3 -> bf16 with beta = 0 over NaN, gfx950 OCP e5m2 -> f32 with beta != 0),
/// with and without fp8 scales; the race and hazard checkers silent (a finding fails the call).
#[test]
fn fp8_decode_shards_split_k() {
    use gemm_core::{Fp8E4M3Fnuz, Fp8E5M2};
    fn shard<T: Element, C: Element>(m: usize, k: usize, beta: f32) -> GemmProblem {
        let p = GemmProblem::new(m, 1280, k)
            .with_layout(Layout::RowMajor)
            .with_transposes(Transpose::No, Transpose::Yes)
            .with_scalars(1.5, beta)
            .with_elements::<T, T, C>();
        // Rows of whole 16-byte vectors (fp8 kernels load dwordx4), padded past K; C padded.
        let kk = k.next_multiple_of(16);
        p.with_leading_dims(kk + 16, kk + 32, p.ldc + 3)
    }
    let p = shard::<Fp8E4M3Fnuz, bf16>(1, 8200, 0.0);
    fp8_decode_split::<Fp8E4M3Fnuz, bf16>(Arch::Gfx942, gemm_emu::Mode::Random, &p);
    let p = shard::<Fp8E5M2, f32>(3, 8192, 0.5);
    fp8_decode_split::<Fp8E5M2, f32>(Arch::Gfx950, gemm_emu::Mode::LongestLatency, &p);
}
