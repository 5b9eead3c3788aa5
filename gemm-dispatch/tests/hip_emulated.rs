//! The HIP backend's real code — discovery, the streaming pipeline (pinned staging, per-slot
//! streams and events, grow-only workspaces), kernel launches from the catalogue, device-resident
//! GEMMs and tensor parallelism with RCCL — run against `libgemm_emu_hip.so`, the emulated HIP
//! runtime and RCCL (gemm-kernels/emulator/hip), whose devices run the catalogue kernels in the
//! emulator with its race and hazard checkers on.
//!
//! The emulated machine is per process: every test holds [`serial`] and configures it first;
//! contexts are dropped before the next configuration (it refuses while resources are alive).
//! Shapes are small (the emulator runs on the order of 10^8 lane-operations per second).

use gemm_core::reference::{self, random_values};
use gemm_core::{bf16, f16, DType, Element, GemmProblem, Layout, Operand, Transpose};
use gemm_dispatch::api::parallel::TpRoute;
use gemm_dispatch::backends::hip::{discover_with, HipBackend, HipOptions};
use gemm_dispatch::{Context, DeviceKind, Error, Reduce, TpPlan};
use gemm_rocm::hip::Hip;
use gemm_rocm::nccl::Nccl;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::ffi::{c_char, c_int, CString};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn hip() -> Hip {
    static HIP: OnceLock<Hip> = OnceLock::new();
    HIP.get_or_init(|| {
        let path = gemm_emu_hip::library_path().expect("libgemm_emu_hip.so next to the test binary");
        Hip::load_from(path).expect("load the emulated HIP runtime")
    })
    .clone()
}

fn nccl() -> Nccl {
    static NCCL: OnceLock<Nccl> = OnceLock::new();
    NCCL.get_or_init(|| Nccl::load_from(hip().library_path()).expect("load the emulated RCCL")).clone()
}

/// A control function of the emulated runtime, resolved from the library HIP was loaded from.
fn control<T: Copy>(name: &str) -> T {
    static HIP_KEEP: OnceLock<Hip> = OnceLock::new();
    let hip = HIP_KEEP.get_or_init(hip);
    // SAFETY: each caller names `T` as the control API's prototype (gemm-emu-hip's control.rs);
    // the library stays loaded for the process (held in a static).
    unsafe { hip.api().library().symbol::<T>(name) }.unwrap_or_else(|| panic!("{name} missing"))
}

fn configure(spec: &str) {
    let f: unsafe extern "C" fn(*const c_char) -> c_int = control("gemm_emu_hip_configure\0");
    let s = CString::new(spec).unwrap();
    // SAFETY: a NUL-terminated string.
    assert_eq!(unsafe { f(s.as_ptr()) }, 0, "configure({spec:?}) refused (resources alive?)");
}

fn inject(device: i32, op: &str, after: u64) {
    let f: unsafe extern "C" fn(c_int, *const c_char, u64) -> c_int = control("gemm_emu_hip_inject_fault\0");
    let s = CString::new(op).unwrap();
    // SAFETY: a NUL-terminated string.
    assert_eq!(unsafe { f(device, s.as_ptr(), after) }, 0, "inject({device}, {op})");
}

fn counter(device: i32, name: &str) -> u64 {
    let f: unsafe extern "C" fn(c_int, *const c_char) -> u64 = control("gemm_emu_hip_counter\0");
    let s = CString::new(name).unwrap();
    // SAFETY: a NUL-terminated string.
    let v = unsafe { f(device, s.as_ptr()) };
    assert_ne!(v, u64::MAX, "counter({device}, {name})");
    v
}

fn counters(devices: i32, name: &str) -> Vec<u64> {
    (0..devices).map(|d| counter(d, name)).collect()
}

/// A context over every emulated device, RCCL from the same library, an optional budget.
fn context(budget: Option<usize>) -> Context {
    let found = discover_with(hip(), &HipOptions { workspace_budget: budget, rccl: Some(nccl()) });
    assert!(found.notes.is_empty(), "{:?}", found.notes);
    Context::from_backends(found.devices).unwrap()
}

fn backend(ctx: &Context, index: usize) -> Arc<HipBackend> {
    ctx.hip_backend(index).unwrap_or_else(|| panic!("device {index} is not a HIP device"))
}

/// One GEMM on byte buffers, with its C before the call.
struct Item {
    p: GemmProblem,
    a: Vec<u8>,
    b: Vec<u8>,
    c0: Vec<u8>,
    c: Vec<u8>,
}

fn values(dtype: DType, len: usize, seed: u64) -> Vec<u8> {
    match dtype {
        DType::F32 => bytemuck::cast_slice(&random_values::<f32>(len, seed)).to_vec(),
        DType::F16 => bytemuck::cast_slice(&random_values::<f16>(len, seed)).to_vec(),
        DType::Bf16 => bytemuck::cast_slice(&random_values::<bf16>(len, seed)).to_vec(),
        d => panic!("no test values for {d}"),
    }
}

fn item(p: GemmProblem, seed: u64) -> Item {
    let s = p.validate().unwrap();
    let c0 = values(p.c_type, s.c, seed + 2);
    Item { p, a: values(p.a_type, s.a, seed), b: values(p.b_type, s.b, seed + 1), c: c0.clone(), c0 }
}

fn typed<T: Element + bytemuck::Zeroable>(b: &[u8]) -> Vec<T> {
    let mut out = vec![T::zeroed(); b.len() / std::mem::size_of::<T>()];
    bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(b);
    out
}

fn check_typed<A: Element, C: Element>(it: &Item) -> reference::CheckReport {
    reference::check(&it.p, &typed::<A>(&it.a), &typed::<A>(&it.b), &typed::<C>(&it.c0), &typed::<C>(&it.c), None)
        .unwrap()
}

/// The item's C against the f64 reference.
fn check(it: &Item) {
    let r = match (it.p.a_type, it.p.c_type) {
        (DType::Bf16, DType::F32) => check_typed::<bf16, f32>(it),
        (DType::Bf16, DType::Bf16) => check_typed::<bf16, bf16>(it),
        (DType::F16, DType::F32) => check_typed::<f16, f32>(it),
        (DType::F16, DType::F16) => check_typed::<f16, f16>(it),
        t => panic!("no check for {t:?}"),
    };
    assert!(r.passed(), "{:?}: {r:?}", it.p);
}

const TYPES: [(DType, DType); 4] =
    [(DType::Bf16, DType::F32), (DType::F16, DType::F16), (DType::Bf16, DType::Bf16), (DType::F16, DType::F32)];

/// A random problem of the catalogue's dtypes with dims in `lo..hi`, any layout and transposes,
/// sometimes padded leading dimensions and a nonzero beta.
fn random_problem(rng: &mut ChaCha8Rng, lo: usize, hi: usize) -> GemmProblem {
    let (ab, c) = TYPES[rng.gen_range(0..TYPES.len())];
    let layout = if rng.gen_bool(0.5) { Layout::RowMajor } else { Layout::ColMajor };
    let t = |r: &mut ChaCha8Rng| if r.gen_bool(0.5) { Transpose::Yes } else { Transpose::No };
    let (ta, tb) = (t(rng), t(rng));
    let p = GemmProblem::new(rng.gen_range(lo..hi), rng.gen_range(lo..hi), rng.gen_range(lo..hi))
        .with_layout(layout)
        .with_transposes(ta, tb)
        .with_dtypes(ab, ab, c)
        .with_scalars(1.25, if rng.gen_bool(0.5) { 0.0 } else { -0.5 });
    let pad = if rng.gen_bool(0.3) { 8 } else { 0 };
    p.with_leading_dims(p.lda + pad, p.ldb + pad, p.ldc + pad / 2)
}

fn run_grouped(ctx: &Context, items: &mut [Item]) -> gemm_dispatch::BatchReport {
    ctx.gemm_grouped_bytes(items.iter_mut().map(|it| (it.p, &it.a[..], &it.b[..], &mut it.c[..])).collect())
}

/// A tall-K GEMM (64x64x65536: one tile) through the HIP backend's pipeline on the emulated
/// runtime runs as split-K on both archs: exactly two launches (the partial kernel into the
/// slot's workspace region, then the reduction, in order on the compute stream), the result
/// within the reference's bound, the checkers on (a finding fails the launch).
#[test]
fn tall_k_runs_split_k_through_hip() {
    let _s = serial();
    configure("devices=gfx942,gfx950;checkers=on");
    let ctx = context(None);
    for (dev, arch) in gemm_core::Arch::ALL.into_iter().enumerate() {
        let p = GemmProblem::new(64, 64, 65536)
            .with_layout(Layout::RowMajor)
            .with_transposes(Transpose::No, Transpose::Yes)
            .with_dtypes(DType::F16, DType::F16, DType::F32)
            .with_scalars(1.0, 0.5);
        let plain = gemm_dispatch::plan::choice::choose(arch, &p).unwrap();
        let split = gemm_dispatch::plan::splitk::choose(arch, &p, Some(&plain)).expect("split-K for 64x64x65536");
        assert!(split.splits >= 2, "{split:?}");
        let mut it = item(p, 31 + dev as u64);
        let before = counter(dev as i32, "launches");
        let mut c: Vec<f32> = typed(&it.c);
        ctx.gemm_on(dev, &it.p, &typed::<f16>(&it.a), &typed::<f16>(&it.b), &mut c).unwrap();
        it.c = bytemuck::cast_slice(&c).to_vec();
        assert_eq!(counter(dev as i32, "launches") - before, 2, "{arch}: the partial kernel and the reduction");
        assert_eq!(
            gemm_dispatch::backends::hip::last_kernel(),
            Some(split.reduce.name),
            "{arch}: the reduction ran last"
        );
        check(&it);
    }
}

#[test]
fn discovery_reads_names_arch_units_and_memory_in_both_abis() {
    let _s = serial();
    for version in [60_342_134, 50_221_153] {
        configure(&format!("devices=gfx942,gfx950;memory=268435456;version={version}"));
        let found = discover_with(hip(), &HipOptions::default());
        assert!(found.notes.is_empty(), "{:?}", found.notes);
        let infos: Vec<_> = found.devices.iter().map(|d| d.info()).collect();
        assert_eq!(infos.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(), ["hip:0", "hip:1"]);
        for (info, (arch, product, cus)) in
            infos.iter().zip([(gemm_core::Arch::Gfx942, "MI300X", 304), (gemm_core::Arch::Gfx950, "MI355X", 256)])
        {
            assert!(matches!(info.kind, DeviceKind::Hip { arch: a, .. } if a == arch), "{version}: {info:?}");
            assert!(info.description.contains(product), "{version}: {}", info.description);
            assert!(info.description.contains(&format!("{arch}:sramecc+:xnack-")), "{}", info.description);
            assert_eq!((info.compute_units, info.memory_bytes), (cus, 268_435_456));
        }
        // Default budget: a quarter of the memory, at least 64 MiB.
        let b = gemm_dispatch::backends::hip::as_hip(&found.devices[0]).expect("a HIP device");
        assert_eq!(b.workspace_budget(), 64 << 20);
        drop(b);
    }
    // A partitioned chip reports its partition's CUs (an MI300X in CPX mode: 38), which the
    // backend's split choice (`splitk::choose_on`) counts rounds on.
    configure("devices=gfx942;cus=38");
    let found = discover_with(hip(), &HipOptions::default());
    assert_eq!(found.devices[0].info().compute_units, 38);
    drop(found);
    configure("devices=");
    let found = discover_with(hip(), &HipOptions::default());
    assert!(found.devices.is_empty());
    assert!(found.notes.join("\n").contains("no device (hipErrorNoDevice)"), "{:?}", found.notes);
}

#[test]
fn mixed_batches_on_one_and_two_devices_under_jitter() {
    let _s = serial();
    for (spec, devices) in [("devices=gfx950", 1), ("devices=gfx942,gfx950;jitter_us=40;seed=7;mode=random", 2)] {
        configure(spec);
        let ctx = context(None);
        assert_eq!(ctx.device_count(), devices);
        let mut rng = ChaCha8Rng::seed_from_u64(devices as u64);
        let mut items: Vec<Item> = (0..10).map(|i| item(random_problem(&mut rng, 40, 150), 100 + 10 * i)).collect();
        let report = run_grouped(&ctx, &mut items);
        assert!(report.all_ok(), "{spec}: {:?}", report.failures().collect::<Vec<_>>());
        items.iter().for_each(check);
        if devices == 2 {
            let used: std::collections::HashSet<_> = report.items.iter().filter_map(|o| o.device).collect();
            assert_eq!(used.len(), 2, "both devices ran items");
        }
        // A strided batch: four bf16 -> f32 items with a nonzero beta, transposed A.
        let p = GemmProblem::new(70, 90, 50)
            .with_transposes(Transpose::Yes, Transpose::No)
            .with_dtypes(DType::Bf16, DType::Bf16, DType::F32)
            .with_scalars(0.75, 0.5);
        let s = p.validate().unwrap();
        let batch =
            gemm_core::StridedBatch { problem: p, count: 4, stride_a: s.a + 3, stride_b: s.b, stride_c: s.c + 5 };
        let a: Vec<bf16> = random_values(batch.stride_a * 4, 1);
        let b: Vec<bf16> = random_values(batch.stride_b * 4, 2);
        let c0: Vec<f32> = random_values(batch.stride_c * 4, 3);
        let mut c = c0.clone();
        assert!(ctx.gemm_strided_batched(&batch, &a, &b, &mut c).unwrap().all_ok());
        for i in 0..4 {
            let (oa, ob, oc) = batch.offsets(i);
            let r = reference::check(&p, &a[oa..oa + s.a], &b[ob..ob + s.b], &c0[oc..oc + s.c], &c[oc..oc + s.c], None)
                .unwrap();
            assert!(r.passed(), "strided item {i}: {r:?}");
            // The gaps between items are untouched.
            let end = oc + s.c;
            assert_eq!(&c[end..(end + 5).min(c.len())], &c0[end..(end + 5).min(c.len())]);
        }
        drop(ctx);
    }
}

#[test]
fn pinned_and_device_memory_stay_bounded_for_mixed_sizes() {
    let _s = serial();
    configure("devices=gfx942");
    let budget = 1 << 20;
    let ctx = context(Some(budget));
    let normal = |seed: u64| -> Vec<Item> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..12).map(|i| item(random_problem(&mut rng, 20, 130), 7 * i)).collect()
    };
    // Twelve mixed sizes: the slots grow a few times, not per item.
    let mut first = normal(11);
    let report = run_grouped(&ctx, &mut first);
    assert!(report.all_ok(), "{:?}", report.failures().collect::<Vec<_>>());
    first.iter().for_each(check);
    let (malloc1, host1) = (counter(0, "malloc_calls"), counter(0, "host_malloc_calls"));
    assert!(host1 < 12, "pinned allocations grow only: {host1} hipHostMalloc calls for 12 items");
    // The same mix again: the workspaces are large enough already, nothing is allocated.
    let mut again = normal(11);
    assert!(run_grouped(&ctx, &mut again).all_ok());
    assert_eq!((counter(0, "malloc_calls"), counter(0, "host_malloc_calls")), (malloc1, host1));
    // Add one item above a slot's share (it runs alone, the other slot released) and one above
    // the whole budget (refused as Unsupported, C untouched, reported, not lost).
    let mut items = normal(12);
    let big = GemmProblem::new(256, 256, 260).with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
    items.push(item(big, 901));
    let huge = GemmProblem::new(600, 600, 8).with_dtypes(DType::F16, DType::F16, DType::F32);
    items.push(item(huge, 902));
    let report = run_grouped(&ctx, &mut items);
    let last = items.len() - 1;
    for (i, it) in items.iter().enumerate() {
        if i == last {
            let err = report.items[i].result.as_ref().unwrap_err();
            assert!(matches!(err, Error::Unsupported { why, .. } if why.contains("budget")), "{err}");
            assert_eq!(it.c, it.c0, "a refused item's C is untouched");
        } else {
            assert!(report.items[i].result.is_ok(), "item {i}: {:?}", report.items[i].result);
            check(it);
        }
    }
    let peak = counter(0, "peak_bytes");
    eprintln!("12 items: {malloc1} hipMalloc, {host1} hipHostMalloc; with a big item: peak {peak} of {budget} bytes");
    assert!(peak > budget as u64 / 2 && peak <= budget as u64, "peak {peak}, budget {budget}");
    assert_eq!(counter(0, "findings"), 0);
    drop(ctx);
}

#[test]
fn a_device_failing_mid_batch_loses_no_item() {
    let _s = serial();
    configure("devices=gfx942,gfx942;jitter_us=20;seed=3");
    let ctx = context(None);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    // A launch fails on device 0 (its first), then device 1 is lost after a few calls. Which
    // device pulls how many items depends on thread timing, so the retry is asserted whenever
    // the faulted device took part (it ran a launch, or moved bytes, during the batch).
    for (device, op, after) in [(0, "launch", 0), (1, "lost", 8)] {
        let (launches, h2d) = (counter(device, "launches"), counter(device, "h2d_bytes"));
        inject(device, op, after);
        let mut items: Vec<Item> = (0..16).map(|i| item(random_problem(&mut rng, 30, 100), 50 + i)).collect();
        let report = run_grouped(&ctx, &mut items);
        assert!(report.all_ok(), "{op}: {:?}", report.failures().collect::<Vec<_>>());
        items.iter().for_each(check);
        let took_part = counter(device, "launches") > launches || counter(device, "h2d_bytes") > h2d;
        if took_part {
            assert!(report.items.iter().any(|o| o.attempts > 1), "{op}: some item was retried");
        }
        inject(device, "clear", 0);
    }
    // Both devices lost: every item reports its error, none is dropped or left half-written.
    inject(0, "lost", 0);
    inject(1, "lost", 0);
    let mut items: Vec<Item> = (0..4).map(|i| item(random_problem(&mut rng, 30, 60), 90 + i)).collect();
    let report = run_grouped(&ctx, &mut items);
    assert_eq!(report.items.len(), 4);
    for (o, it) in report.items.iter().zip(&items) {
        assert!(matches!(o.result, Err(Error::Device { .. })), "{:?}", o.result);
        assert_eq!(o.attempts, 2);
        assert_eq!(it.c, it.c0);
    }
    inject(0, "clear", 0);
    inject(1, "clear", 0);
    drop(ctx);
}

#[test]
fn gemm_device_runs_on_device_buffers_and_refuses_bad_input() {
    let _s = serial();
    configure("devices=gfx942,gfx950");
    let ctx = context(None);
    let be = backend(&ctx, 1);
    let dev = be.device().clone();
    let stream = dev.create_stream().unwrap();
    let p = GemmProblem::new(100, 72, 40)
        .with_dtypes(DType::F16, DType::F16, DType::F32)
        .with_transposes(Transpose::No, Transpose::Yes)
        .with_scalars(1.5, -1.0);
    let s = p.validate().unwrap();
    let a: Vec<f16> = random_values(s.a, 1);
    let b: Vec<f16> = random_values(s.b, 2);
    let c0: Vec<f32> = random_values(s.c, 3);
    // A at byte 256, B at byte 2 (too little alignment for the vector kernels: the
    // element-load kernel runs), C at byte 64.
    let mut da = dev.alloc(256 + s.a * 2).unwrap();
    let mut db = dev.alloc(2 + s.b * 2 + 2).unwrap();
    let mut dc = dev.alloc(64 + s.c * 4).unwrap();
    da.write(256, &a).unwrap();
    db.write(2, &b).unwrap();
    dc.write(64, &c0).unwrap();
    be.gemm_device(&stream, &p, (&da, 256), (&db, 2), (&mut dc, 64)).unwrap();
    stream.synchronize().unwrap();
    let mut c = vec![0f32; s.c];
    dc.read(64, &mut c).unwrap();
    let r = reference::check(&p, &a, &b, &c0, &c, None).unwrap();
    assert!(r.passed(), "{r:?}");

    let launches = counter(1, "launches");
    let other = backend(&ctx, 0).device().create_stream().unwrap();
    let other_buf = backend(&ctx, 0).device().alloc(s.a * 2 + 256).unwrap();
    let cases: Vec<(&str, Result<(), Error>)> = vec![
        ("A too short after its offset", be.gemm_device(&stream, &p, (&da, 512), (&db, 2), (&mut dc, 64))),
        ("C too small", {
            let mut small = dev.alloc(s.c * 4 - 4).unwrap();
            be.gemm_device(&stream, &p, (&da, 256), (&db, 2), (&mut small, 0))
        }),
        ("odd byte offset", be.gemm_device(&stream, &p, (&da, 257), (&db, 2), (&mut dc, 64))),
        ("stream of another device", be.gemm_device(&other, &p, (&da, 256), (&db, 2), (&mut dc, 64))),
        ("buffer of another device", be.gemm_device(&stream, &p, (&other_buf, 0), (&db, 2), (&mut dc, 64))),
        ("gfx942's fp8 flavour on gfx950 (no kernel)", {
            let q = GemmProblem::new(8, 8, 8).with_dtypes(DType::Fp8E4M3Fnuz, DType::Fp8E4M3Fnuz, DType::F32);
            be.gemm_device(&stream, &q, (&da, 0), (&db, 0), (&mut dc, 0))
        }),
        ("overflowing offset", be.gemm_device(&stream, &p, (&da, usize::MAX - 1), (&db, 2), (&mut dc, 64))),
    ];
    for (what, r) in &cases {
        match (what, r) {
            (w, Err(Error::Invalid(gemm_core::Error::BufferTooSmall { operand, .. })))
                if w.contains("short") || w.contains("overflow") =>
            {
                assert_eq!(*operand, Operand::A)
            }
            (w, Err(Error::Invalid(gemm_core::Error::BufferTooSmall { operand: Operand::C, .. })))
                if w.contains("small") => {}
            (w, Err(Error::Misaligned { operand: Operand::A, dtype: DType::F16 })) if w.contains("odd") => {}
            (w, Err(Error::WrongDevice { found: 0, expected: 1, .. })) if w.contains("another") => {}
            (w, Err(Error::Unsupported { .. })) if w.contains("no kernel") => {}
            (w, r) => panic!("{w}: unexpected {r:?}"),
        }
    }
    stream.synchronize().unwrap();
    assert_eq!(counter(1, "launches"), launches, "nothing launched on bad input");
    // Empty problems launch nothing and succeed.
    be.gemm_device(&stream, &p.with_scalars(1.0, 0.0), (&da, 256), (&db, 2), (&mut dc, 64)).unwrap();
    let empty = GemmProblem::new(0, 5, 5).with_dtypes(DType::F16, DType::F16, DType::F32);
    be.gemm_device(&stream, &empty, (&da, 0), (&db, 0), (&mut dc, 0)).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(counter(1, "launches"), launches + 1);
    drop((be, other, other_buf, da, db, dc, stream, ctx));
}

const PLANS: [TpPlan; 3] =
    [TpPlan::Column, TpPlan::Row { reduce: Reduce::ReduceScatter }, TpPlan::Row { reduce: Reduce::AllReduce }];

fn tp_case<A: Element, C: Element>(ctx: &Context, plan: TpPlan, p: &GemmProblem, seed: u64) {
    let devices = ctx.device_count() as i32;
    let s = p.validate().unwrap();
    let a: Vec<A> = random_values(s.a, seed);
    let b: Vec<A> = random_values(s.b, seed + 1);
    let c0: Vec<C> = random_values(s.c, seed + 2);
    let mut c = c0.clone();
    let (h2d, d2h, coll) =
        (counters(devices, "h2d_bytes"), counters(devices, "d2h_bytes"), counters(devices, "collectives"));
    ctx.gemm_tensor_parallel(plan, p, &a, &b, &mut c).unwrap_or_else(|e| panic!("{plan:?} {p:?}: {e}"));
    let r = reference::check(p, &a, &b, &c0, &c, None).unwrap();
    assert!(r.passed(), "{devices} devices {plan:?} {p:?}: {r:?}");
    // Leading-dimension padding keeps its bits.
    let (rows, cols, rs, cs) = p.strides(Operand::C);
    let mut inside = vec![false; c.len()];
    (0..rows).for_each(|i| (0..cols).for_each(|j| inside[i * rs + j * cs] = true));
    for (k, &inn) in inside.iter().enumerate() {
        if !inn {
            assert_eq!(c[k].to_f32().to_bits(), c0[k].to_f32().to_bits());
        }
    }
    // Only the result came back: C's m * n entries (column) or their f32 sums (row).
    let down: u64 = counters(devices, "d2h_bytes").iter().zip(&d2h).map(|(x, y)| x - y).sum();
    let per = match plan {
        TpPlan::Column => p.c_type.size_bytes(),
        TpPlan::Row { .. } => 4,
    };
    assert_eq!(down, (p.m * p.n * per) as u64, "{plan:?}: device-to-host bytes");
    let up: u64 = counters(devices, "h2d_bytes").iter().zip(&h2d).map(|(x, y)| x - y).sum();
    assert!(up > 0);
    let ran: Vec<u64> = counters(devices, "collectives").iter().zip(&coll).map(|(x, y)| x - y).collect();
    assert!(ran.iter().all(|&n| n >= 1), "every rank took part in a collective: {ran:?}");
    // The same GEMM on one device (after the counters above). A column shard runs the same K loop as the whole GEMM, so
    // its entries are bit for bit those of one device; the row plan sums f32 partials in
    // another order, so it only meets the same tolerance.
    let mut one = c0.clone();
    ctx.gemm_on(0, p, &a, &b, &mut one).unwrap();
    let bits = |v: &[C]| v.iter().map(|x| x.to_f32().to_bits()).collect::<Vec<_>>();
    if plan == TpPlan::Column {
        assert_eq!(bits(&c), bits(&one), "{devices} devices {plan:?} {p:?}: differs from one device");
    } else {
        assert!(reference::check(p, &a, &b, &c0, &one, None).unwrap().passed());
    }
    // One device keeps C's padding too (its download copies C's whole span back).
    for (k, &inn) in inside.iter().enumerate() {
        if !inn {
            assert_eq!(one[k].to_f32().to_bits(), c0[k].to_f32().to_bits(), "one device wrote C's padding");
        }
    }
}

#[test]
fn device_resident_tensor_parallel_matches_the_reference_on_two_and_three_devices() {
    let _s = serial();
    for spec in ["devices=gfx942,gfx942;jitter_us=20;seed=9", "devices=gfx950,gfx950,gfx950"] {
        configure(spec);
        let ctx = context(None);
        assert_eq!(ctx.tensor_parallel_route(), TpRoute::Device);
        for (i, plan) in PLANS.into_iter().enumerate() {
            let p = GemmProblem::new(70, 45, 67)
                .with_dtypes(DType::Bf16, DType::Bf16, DType::F32)
                .with_transposes(Transpose::Yes, Transpose::No)
                .with_scalars(1.0, 0.5);
            tp_case::<bf16, f32>(&ctx, plan, &p, 10 + i as u64);
            let q = GemmProblem::new(33, 64, 40)
                .with_layout(Layout::ColMajor)
                .with_dtypes(DType::F16, DType::F16, DType::F16)
                .with_transposes(Transpose::No, Transpose::Yes)
                .with_scalars(-1.0, 0.0);
            let q = q.with_leading_dims(q.lda + 3, q.ldb, q.ldc + 2);
            tp_case::<f16, f16>(&ctx, plan, &q, 20 + i as u64);
            // k and n smaller than the device count: some ranks compute nothing.
            let tiny = GemmProblem::new(5, 2, 2).with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
            tp_case::<bf16, bf16>(&ctx, plan, &tiny, 30 + i as u64);
        }
        assert_eq!(counters(ctx.device_count() as i32, "findings").iter().sum::<u64>(), 0);
        drop(ctx);
    }
}

#[test]
fn a_failing_device_in_tensor_parallel_leaves_c_untouched() {
    let _s = serial();
    configure("devices=gfx942,gfx942;collective_timeout_ms=2000");
    let ctx = context(None);
    let p = GemmProblem::new(64, 48, 80).with_dtypes(DType::Bf16, DType::Bf16, DType::F32).with_scalars(1.0, 1.0);
    let s = p.validate().unwrap();
    let a: Vec<bf16> = random_values(s.a, 1);
    let b: Vec<bf16> = random_values(s.b, 2);
    let c0: Vec<f32> = random_values(s.c, 3);
    for (plan, op) in PLANS.into_iter().zip(["launch", "malloc", "launch"]) {
        inject(1, op, 0);
        let mut c = c0.clone();
        let err = ctx.gemm_tensor_parallel(plan, &p, &a, &b, &mut c).unwrap_err();
        assert!(matches!(err, Error::Device { .. }), "{plan:?}: {err}");
        assert_eq!(c, c0, "{plan:?}: C untouched");
        inject(1, "clear", 0);
    }
    // After the failures the devices (and fresh communicators) serve again.
    let mut c = c0.clone();
    ctx.gemm_tensor_parallel(TpPlan::Row { reduce: Reduce::AllReduce }, &p, &a, &b, &mut c).unwrap();
    assert!(reference::check(&p, &a, &b, &c0, &c, None).unwrap().passed());
    // Bad input is refused before any device is touched.
    let launches = counters(2, "launches");
    let mut short = vec![0f32; s.c - 1];
    assert!(matches!(ctx.gemm_tensor_parallel(TpPlan::Column, &p, &a, &b, &mut short), Err(Error::Invalid(_))));
    assert_eq!(counters(2, "launches"), launches);
    drop(ctx);
}
