//! The device-memory API (`gemm_dispatch::api::device`) on two emulated GPUs (gfx942 and gfx950,
//! `libgemm_emu_hip.so`): GEMM, strided batch and grouped GEMM (mixed sizes, an empty group) on
//! device buffers and views at offsets give the reference's results; a library stream and the
//! caller's own raw stream both order the GEMMs with the caller's copies; events order two
//! streams; every bad input is refused with its typed error, launches nothing and leaves device
//! memory as it was.

use gemm_core::reference::{self, random_values};
use gemm_core::{bf16, DType, GemmProblem, Operand, StridedBatch};
use gemm_dispatch::api::device::DeviceGroup;
use gemm_dispatch::backends::hip::{discover_with, HipOptions};
use gemm_dispatch::{Context, DeviceSlice, Error, GroupedError};
use gemm_rocm::hip::Hip;
use std::ffi::{c_char, c_int, CString};
use std::sync::{Mutex, MutexGuard, OnceLock};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn hip() -> Hip {
    static HIP: OnceLock<Hip> = OnceLock::new();
    HIP.get_or_init(|| Hip::load_from(gemm_emu_hip::library_path().expect("libgemm_emu_hip.so")).unwrap()).clone()
}

fn configure(spec: &str) {
    // SAFETY: the control API's prototype (gemm-emu-hip control.rs); the library stays loaded.
    let f: unsafe extern "C" fn(*const c_char) -> c_int =
        unsafe { hip().api().library().symbol("gemm_emu_hip_configure\0") }.unwrap();
    let s = CString::new(spec).unwrap();
    // SAFETY: a NUL-terminated string.
    assert_eq!(unsafe { f(s.as_ptr()) }, 0, "configure({spec})");
}

fn launches(device: i32) -> u64 {
    // SAFETY: as in `configure`.
    let f: unsafe extern "C" fn(c_int, *const c_char) -> u64 =
        unsafe { hip().api().library().symbol("gemm_emu_hip_counter\0") }.unwrap();
    // SAFETY: a NUL-terminated literal.
    unsafe { f(device, c"launches".as_ptr()) }
}

fn context() -> Context {
    let found = discover_with(hip(), &HipOptions::default());
    assert!(found.notes.is_empty(), "{:?}", found.notes);
    Context::from_backends(found.devices).unwrap()
}

fn bf16_problem(m: usize, n: usize, k: usize) -> GemmProblem {
    GemmProblem::new(m, n, k).with_dtypes(DType::Bf16, DType::Bf16, DType::F32)
}

#[test]
fn gemms_on_device_memory_match_the_reference_on_both_gpus() {
    let _s = serial();
    configure("devices=gfx942,gfx950;jitter_us=30;seed=11");
    let ctx = context();
    for index in 0..2 {
        let gpu = ctx.gpu(index).unwrap();
        assert_eq!(gpu.name(), format!("hip:{index}"));
        let stream = gpu.create_stream().unwrap();

        // One GEMM, C padded, beta != 0, A read through a view at an offset of a larger buffer.
        let p = bf16_problem(70, 45, 33).with_leading_dims(33, 45, 48).with_scalars(1.5, -0.5);
        let s = p.validate().unwrap();
        let a: Vec<bf16> = random_values(s.a, 1);
        let b: Vec<bf16> = random_values(s.b, 2);
        let c0: Vec<f32> = random_values(s.c, 3);
        let mut da = gpu.alloc::<bf16>(s.a + 7).unwrap();
        let db = gpu.upload(&b).unwrap();
        let mut dc = gpu.alloc::<f32>(s.c).unwrap();
        // The caller's copies, queued on the same stream as the GEMM.
        stream.write(&mut da.slice_mut(7..7 + s.a).unwrap(), &a).unwrap();
        stream.write(&mut dc.as_mut_slice(), &c0).unwrap();
        let kernel = gpu
            .gemm(&stream, &p, da.slice(7..7 + s.a).unwrap(), db.as_slice(), dc.as_mut_slice())
            .unwrap()
            .expect("a kernel was launched");
        assert!(kernel.contains(gpu.arch().name()), "{kernel}");
        assert_eq!(gemm_dispatch::backends::hip::last_kernel(), Some(kernel));
        let mut c = vec![0f32; s.c];
        stream.read(dc.as_slice(), &mut c).unwrap();
        let r = reference::check(&p, &a, &b, &c0, &c, None).unwrap();
        assert!(r.passed(), "gemm on {index}: {r:?}");

        // A strided batch: B shared, gaps between the C items, beta = 0.
        let q = bf16_problem(24, 40, 16);
        let item = q.validate().unwrap();
        let batch = StridedBatch { problem: q, count: 5, stride_a: item.a, stride_b: 0, stride_c: item.c + 3 };
        let spans = batch.validate().unwrap();
        let (ba, bb, bc0): (Vec<bf16>, Vec<bf16>, Vec<f32>) =
            (random_values(spans.a, 4), random_values(spans.b, 5), random_values(spans.c, 6));
        let (dba, dbb, mut dbc) = (gpu.upload(&ba).unwrap(), gpu.upload(&bb).unwrap(), gpu.upload(&bc0).unwrap());
        gpu.gemm_strided_batched(&stream, &batch, dba.as_slice(), dbb.as_slice(), dbc.as_mut_slice()).unwrap();
        // An event recorded after the batch; a second stream waits for it before reading C.
        let done = stream.record().unwrap();
        let reader = gpu.create_stream().unwrap();
        reader.wait(&done).unwrap();
        let mut bc = vec![0f32; spans.c];
        reader.read(dbc.as_slice(), &mut bc).unwrap();
        assert!(done.is_complete().unwrap());
        for i in 0..batch.count {
            let (oa, _, oc) = batch.offsets(i);
            let r = reference::check(&q, &ba[oa..oa + item.a], &bb, &bc0[oc..oc + item.c], &bc[oc..oc + item.c], None)
                .unwrap();
            assert!(r.passed(), "strided item {i} on {index}: {r:?}");
            if i + 1 < batch.count {
                assert_eq!(&bc[oc + item.c..oc + item.c + 3], &bc0[oc + item.c..oc + item.c + 3], "gap {i}");
            }
        }

        // Grouped: mixed sizes and an empty group, C of all groups in one buffer split into
        // exclusive views. Leading dimensions of 8 elements: one launch of a grouped kernel.
        // Then ragged ones (lda 33, 7): one launch per non-empty group with plain kernels.
        let aligned = [(17, 16, 32), (0, 8, 8), (64, 40, 16), (5, 24, 8), (130, 8, 24)];
        grouped_on(&gpu, &stream, &aligned, 1);
        let ragged = [(17, 9, 33), (0, 12, 8), (64, 40, 16), (5, 33, 7)];
        grouped_on(&gpu, &stream, &ragged, 3);
    }
}

/// Device-resident GEMMs run what the dispatcher plans (`plan_gemm`), splits included: a
/// Llama-70B/8 qkv shard at decode (`y = x W^T`, 1280 weight rows, K = 8192; 1 and 5 tokens)
/// splits K on both GPUs, so each call queues a partial kernel and the reduction (two launches)
/// through the stream's workspace; the strided batch of two such GEMMs (four launches) shares
/// it in stream order; every result matches the reference, beta = 0 over NaN and beta != 0.
#[test]
fn device_gemms_run_the_planned_split() {
    use gemm_core::{Layout, Transpose};
    use gemm_dispatch::plan::gemm_plan::plan_gemm;
    let _s = serial();
    configure("devices=gfx942,gfx950;jitter_us=10;seed=13");
    let ctx = context();
    for index in 0..2 {
        let gpu = ctx.gpu(index).unwrap();
        let stream = gpu.create_stream().unwrap();
        for (i, (m, beta)) in [(1usize, 0.0f32), (5, 0.5)].into_iter().enumerate() {
            let p = GemmProblem::new(m, 1280, 8192)
                .with_layout(Layout::RowMajor)
                .with_transposes(Transpose::No, Transpose::Yes)
                .with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16)
                .with_scalars(1.25, beta);
            let arch = gpu.arch();
            let plan = plan_gemm(arch, arch.caps().compute_units, &p).unwrap().unwrap();
            let split = plan.split.expect("the dispatcher splits a 1280-row decode shard");
            let s = p.validate().unwrap();
            let seed = 40 + 10 * index as u64 + i as u64;
            let (a, b): (Vec<bf16>, Vec<bf16>) = (random_values(s.a, seed), random_values(s.b, seed + 1));
            let c0: Vec<bf16> =
                if beta == 0.0 { vec![bf16::from_f32(f32::NAN); s.c] } else { random_values(s.c, seed + 2) };
            let (da, db, mut dc) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap(), gpu.upload(&c0).unwrap());
            let before = launches(index as i32);
            let kernel = gpu.gemm(&stream, &p, da.as_slice(), db.as_slice(), dc.as_mut_slice()).unwrap();
            assert_eq!(kernel, Some(split.partial.name), "{arch} m = {m}");
            let mut c = vec![bf16::from_f32(0.0); s.c];
            stream.read(dc.as_slice(), &mut c).unwrap();
            assert_eq!(launches(index as i32) - before, 2, "{arch} m = {m}: partial and reduction");
            let r = reference::check(&p, &a, &b, &c0, &c, None).unwrap();
            assert!(r.passed(), "{arch} m = {m}: {r:?}");

            // The same GEMM twice as a strided batch (A and C per item, the weights shared).
            let batch = StridedBatch { problem: p, count: 2, stride_a: s.a, stride_b: 0, stride_c: s.c };
            let spans = batch.validate().unwrap();
            let (ba, bc0): (Vec<bf16>, Vec<bf16>) =
                (random_values(spans.a, seed + 3), random_values(spans.c, seed + 4));
            let (dba, mut dbc) = (gpu.upload(&ba).unwrap(), gpu.upload(&bc0).unwrap());
            let before = launches(index as i32);
            gpu.gemm_strided_batched(&stream, &batch, dba.as_slice(), db.as_slice(), dbc.as_mut_slice()).unwrap();
            let mut bc = vec![bf16::from_f32(0.0); spans.c];
            stream.read(dbc.as_slice(), &mut bc).unwrap();
            assert_eq!(launches(index as i32) - before, 4, "{arch} m = {m}: two splits");
            for j in 0..2 {
                let (oa, oc) = (j * s.a, j * s.c);
                let r =
                    reference::check(&p, &ba[oa..oa + s.a], &b, &bc0[oc..oc + s.c], &bc[oc..oc + s.c], None).unwrap();
                assert!(r.passed(), "{arch} m = {m} item {j}: {r:?}");
            }
        }
    }
}

/// A grouped GEMM of row-major bf16 -> f32 problems of these shapes on `gpu`: every group
/// against the reference, and `launches` kernel launches for the whole call.
fn grouped_on(
    gpu: &gemm_dispatch::Gpu,
    stream: &gemm_dispatch::GpuStream,
    shapes: &[(usize, usize, usize)],
    want: u64,
) {
    let index = gpu.index();
    let problems: Vec<GemmProblem> =
        shapes.iter().map(|&(m, n, k)| bf16_problem(m, n, k).with_scalars(1.0, 1.0)).collect();
    let ga: Vec<Vec<bf16>> =
        problems.iter().enumerate().map(|(i, p)| random_values(p.validate().unwrap().a, 10 + i as u64)).collect();
    let gb: Vec<Vec<bf16>> =
        problems.iter().enumerate().map(|(i, p)| random_values(p.validate().unwrap().b, 20 + i as u64)).collect();
    let c_lens: Vec<usize> = problems.iter().map(|p| p.validate().unwrap().c).collect();
    let gc0: Vec<f32> = random_values(c_lens.iter().sum(), 30);
    let dga: Vec<_> = ga.iter().map(|v| gpu.upload(v).unwrap()).collect();
    let dgb: Vec<_> = gb.iter().map(|v| gpu.upload(v).unwrap()).collect();
    let mut dgc = gpu.upload(&gc0).unwrap();
    let mut rest = dgc.as_mut_slice();
    let mut groups = Vec::new();
    for (i, p) in problems.iter().enumerate() {
        let (mine, tail) = rest.split_at_mut(c_lens[i]).unwrap();
        rest = tail;
        groups.push(DeviceGroup { problem: *p, a: dga[i].as_slice(), b: dgb[i].as_slice(), c: mine });
    }
    let before = launches(gpu.ordinal());
    let kernels = gpu.gemm_grouped(stream, &mut groups).unwrap();
    assert_eq!(kernels.iter().filter(|k| k.is_some()).count(), shapes.len() - 1, "{kernels:?}");
    assert!(kernels[1].is_none());
    let grouped = kernels.iter().flatten().all(|k| k.ends_with("_grouped"));
    assert_eq!(grouped, want == 1, "{kernels:?}");
    assert_eq!(gemm_dispatch::backends::hip::last_kernel(), kernels[shapes.len() - 1]);
    drop(groups);
    stream.synchronize().unwrap();
    assert_eq!(launches(gpu.ordinal()) - before, want, "{kernels:?}");
    let gc = dgc.to_vec().unwrap();
    let mut at = 0;
    for (i, p) in problems.iter().enumerate() {
        let range = at..at + c_lens[i];
        let r = reference::check(p, &ga[i], &gb[i], &gc0[range.clone()], &gc[range.clone()], None).unwrap();
        assert!(r.passed(), "group {i} on {index}: {r:?}");
        at = range.end;
    }
}

#[test]
fn the_callers_raw_stream_orders_the_gemm_with_its_own_copies() {
    let _s = serial();
    configure("devices=gfx942,gfx950;jitter_us=200;seed=3");
    let ctx = context();
    let gpu = ctx.gpu(1).unwrap();
    // A stream the "caller" made with HIP directly, handed over as a raw hipStream_t.
    let own = gpu.backend().device().create_stream().unwrap();
    // SAFETY: `own` is a live stream of this GPU and outlives `stream`.
    let stream = unsafe { gpu.borrow_stream(own.as_raw().cast()) }.unwrap();
    let p = bf16_problem(48, 40, 64).with_scalars(1.0, 1.0);
    let s = p.validate().unwrap();
    let a: Vec<bf16> = random_values(s.a, 7);
    let b: Vec<bf16> = random_values(s.b, 8);
    let c0: Vec<f32> = random_values(s.c, 9);
    let (mut da, mut db, mut dc) =
        (gpu.alloc::<bf16>(s.a).unwrap(), gpu.alloc::<bf16>(s.b).unwrap(), gpu.alloc::<f32>(s.c).unwrap());
    // Three GEMMs accumulate into C on the caller's stream, with the caller's uploads between.
    stream.write(&mut da.as_mut_slice(), &a).unwrap();
    stream.write(&mut db.as_mut_slice(), &b).unwrap();
    stream.write(&mut dc.as_mut_slice(), &c0).unwrap();
    for _ in 0..3 {
        gpu.gemm(&stream, &p, da.as_slice(), db.as_slice(), dc.as_mut_slice()).unwrap();
    }
    own.synchronize().unwrap();
    drop(stream);
    // The borrowed stream was not destroyed: the caller's handle still works.
    own.synchronize().unwrap();
    let c = dc.to_vec().unwrap();
    // C = c0 + 3 A B, against the reference with alpha = 3.
    let r = reference::check(&p.with_scalars(3.0, 1.0), &a, &b, &c0, &c, None).unwrap();
    assert!(r.max_err_ratio <= 3.0, "{r:?}");
}

#[test]
fn bad_input_is_refused_launches_nothing_and_leaves_memory_alone() {
    let _s = serial();
    configure("devices=gfx942,gfx950");
    let ctx = context();
    let (g0, g1) = (ctx.gpu(0).unwrap(), ctx.gpu(1).unwrap());
    let stream = g0.create_stream().unwrap();
    let other_stream = g1.create_stream().unwrap();
    let p = bf16_problem(32, 24, 16);
    let s = p.validate().unwrap();
    let da = g0.upload(&random_values::<bf16>(s.a, 1)).unwrap();
    let db = g0.upload(&random_values::<bf16>(s.b, 2)).unwrap();
    let c0: Vec<f32> = random_values(s.c, 3);
    let mut dc = g0.upload(&c0).unwrap();
    let other = g1.upload(&random_values::<bf16>(s.a, 1)).unwrap();
    let before = launches(0);

    let r = g0.gemm(&other_stream, &p, da.as_slice(), db.as_slice(), dc.as_mut_slice());
    assert!(matches!(r, Err(Error::WrongDevice { found: 1, expected: 0, .. })), "{r:?}");
    let r = g0.gemm(&stream, &p, other.as_slice(), db.as_slice(), dc.as_mut_slice());
    assert!(matches!(r, Err(Error::WrongDevice { found: 1, expected: 0, .. })), "{r:?}");
    let r = g0.gemm(&stream, &p, da.slice(1..s.a).unwrap(), db.as_slice(), dc.as_mut_slice());
    assert!(matches!(r, Err(Error::Invalid(gemm_core::Error::BufferTooSmall { operand: Operand::A, .. }))), "{r:?}");
    let r = g0.gemm(&stream, &p, da.as_slice(), db.as_slice(), dc.slice_mut(0..s.c - 1).unwrap());
    assert!(matches!(r, Err(Error::Invalid(gemm_core::Error::BufferTooSmall { operand: Operand::C, .. }))), "{r:?}");
    // SAFETY: a view one byte into A's allocation, never used past its end (refused).
    let odd = unsafe { DeviceSlice::<bf16>::from_raw(0, da.device_address() + 1, s.a - 1) };
    let r = g0.gemm(&stream, &p, odd, db.as_slice(), dc.as_mut_slice());
    assert!(matches!(r, Err(Error::Misaligned { operand: Operand::A, .. })), "{r:?}");
    let r = g0.gemm(&stream, &p.with_leading_dims(s.a, 3, 24), da.as_slice(), db.as_slice(), dc.as_mut_slice());
    assert!(matches!(r, Err(Error::Invalid(gemm_core::Error::LeadingDimension { .. }))), "{r:?}");
    // Element types that contradict the problem's dtypes.
    let r = g0.gemm(
        &stream,
        &p.with_dtypes(DType::F16, DType::F16, DType::F32),
        da.as_slice(),
        db.as_slice(),
        dc.as_mut_slice(),
    );
    assert!(matches!(r, Err(Error::Invalid(_))), "{r:?}");
    // Strided: overlapping outputs, and a batch past the end of A.
    let batch = StridedBatch { problem: p, count: 2, stride_a: 0, stride_b: 0, stride_c: 10 };
    let r = g0.gemm_strided_batched(&stream, &batch, da.as_slice(), db.as_slice(), dc.as_mut_slice());
    assert!(matches!(r, Err(Error::Invalid(gemm_core::Error::OverlappingOutputs { .. }))), "{r:?}");
    let batch = StridedBatch { problem: p.with_scalars(1.0, 0.0), count: 1, stride_a: 0, stride_b: 0, stride_c: 0 };
    let long = StridedBatch { count: 2, stride_a: s.a, stride_c: s.c, ..batch };
    let r = g0.gemm_strided_batched(&stream, &long, da.as_slice(), db.as_slice(), dc.as_mut_slice());
    assert!(matches!(r, Err(Error::Invalid(gemm_core::Error::BufferTooSmall { operand: Operand::A, .. }))), "{r:?}");
    // Grouped: one bad group refuses the call; the good group is not launched either.
    let (c_a, c_b) = dc.as_mut_slice().split_at_mut(s.c / 2).unwrap();
    let half = bf16_problem(16, 24, 16);
    let mut groups = vec![
        DeviceGroup { problem: half, a: da.as_slice(), b: db.as_slice(), c: c_a },
        DeviceGroup { problem: half, a: other.as_slice(), b: db.as_slice(), c: c_b },
    ];
    let r = g0.gemm_grouped(&stream, &mut groups);
    match r {
        Err(GroupedError { groups, launched_some: false }) => {
            assert!(groups[0].is_none());
            assert!(matches!(groups[1], Some(Error::WrongDevice { .. })), "{groups:?}");
        }
        r => panic!("{r:?}"),
    }
    drop(groups);
    stream.synchronize().unwrap();
    assert_eq!(launches(0), before, "nothing launched");
    assert_eq!(dc.to_vec().unwrap(), c0, "C untouched");
    // A device that is not a GPU, and a device that does not exist.
    let host = Context::host(1);
    assert!(matches!(host.gpu(0), Err(Error::NotAGpu { .. })));
    assert!(matches!(ctx.gpu(2), Err(Error::NoSuchDevice { index: 2, count: 2 })));
    // Memory that is not a live device allocation.
    let host_buf = [0u8; 64];
    assert!(matches!(g0.span_of_pointer("a", host_buf.as_ptr().cast()), Err(Error::NotDeviceMemory { .. })));
    let span = g0.span_of_pointer("a", (da.device_address() + 10) as *const _).unwrap();
    assert_eq!((span.device, span.len), (0, s.a * 2 - 10));
}

/// A fused epilogue on each emulated GPU (one fused kernel) agrees with the host CPU's
/// `Context::gemm_epilogue` on the same problem: a column-major problem with a column bias and
/// GELU, a row-major one with a row bias and SiLU (the kernel's column bias), beta != 0. An
/// epilogue no fused kernel runs on the GPU is `Unsupported`, and a bias on the other GPU
/// `WrongDevice`; neither launches anything.
#[test]
fn epilogues_on_the_gpu_agree_with_the_host() {
    use gemm_core::Layout;
    use gemm_dispatch::{Activation, BiasAxis, Epilogue};
    let _s = serial();
    configure("devices=gfx942,gfx950;jitter_us=10;seed=4");
    let ctx = context();
    let host = Context::host(1);
    let cases = [
        (Layout::ColMajor, (72, 40, 48), BiasAxis::PerColumn, Activation::GeluTanh),
        (Layout::RowMajor, (37, 64, 24), BiasAxis::PerRow, Activation::Silu),
    ];
    for index in 0..2 {
        let gpu = ctx.gpu(index).unwrap();
        let stream = gpu.create_stream().unwrap();
        for (ci, &(layout, (m, n, k), axis, act)) in cases.iter().enumerate() {
            let p = GemmProblem::new(m, n, k)
                .with_layout(layout)
                .with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16)
                .with_scalars(0.75, 0.5);
            let ep = Epilogue { bias: Some(axis), activation: act, clamp: None };
            let s = p.validate().unwrap();
            let a: Vec<bf16> = random_values(s.a, 40 + ci as u64);
            let b: Vec<bf16> = random_values(s.b, 50 + ci as u64);
            let c0: Vec<bf16> = random_values(s.c, 60 + ci as u64);
            let bias: Vec<f32> = random_values(ep.bias_len(&p), 70 + ci as u64);
            let mut want = c0.clone();
            host.gemm_epilogue(&p, &a, &b, &mut want, &ep, Some(&bias)).unwrap();
            let (da, db, dbias) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap(), gpu.upload(&bias).unwrap());
            let mut dc = gpu.upload(&c0).unwrap();
            let kernel = gpu
                .gemm_epilogue(
                    &stream,
                    &p,
                    da.as_slice(),
                    db.as_slice(),
                    dc.as_mut_slice(),
                    &ep,
                    Some(dbias.as_slice()),
                )
                .unwrap()
                .expect("a kernel");
            assert!(kernel.contains(&ep.kernel_name(&p)), "{kernel}");
            stream.synchronize().unwrap();
            let got = dc.to_vec().unwrap();
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                let (g, w) = (g.to_f32(), w.to_f32());
                assert!((g - w).abs() <= 1.6e-2 * (1.0 + w.abs()), "{kernel} case {ci} C[{i}]: gpu {g}, host {w}");
            }
            // A clamp: no fused kernel on the GPU; the host computes it.
            let clamped = Epilogue { clamp: Some((-1.0, 1.0)), ..ep };
            let before = launches(gpu.ordinal());
            let r = gpu.gemm_epilogue(
                &stream,
                &p,
                da.as_slice(),
                db.as_slice(),
                dc.as_mut_slice(),
                &clamped,
                Some(dbias.as_slice()),
            );
            assert!(matches!(r, Err(Error::Unsupported { .. })), "{r:?}");
            let mut hc = c0.clone();
            host.gemm_epilogue(&p, &a, &b, &mut hc, &clamped, Some(&bias)).unwrap();
            assert!(hc.iter().all(|x| (-1.0..=1.0).contains(&x.to_f32())));
            // The bias on the other GPU.
            let other = ctx.gpu(1 - index).unwrap().upload(&bias).unwrap();
            let r = gpu.gemm_epilogue(
                &stream,
                &p,
                da.as_slice(),
                db.as_slice(),
                dc.as_mut_slice(),
                &ep,
                Some(other.as_slice()),
            );
            assert!(matches!(r, Err(Error::WrongDevice { .. })), "{r:?}");
            stream.synchronize().unwrap();
            assert_eq!(launches(gpu.ordinal()), before, "refused calls launched nothing");
            assert_eq!(dc.to_vec().unwrap(), got, "C untouched by the refused calls");
        }
    }
}

/// fp8 GEMMs with scales on each emulated GPU agree bit for bit with the host CPU's
/// `Context::gemm_scaled` (exact inputs: multiples of 1/4 and power-of-two scales): mixed
/// flavours TN with both scale vectors, a row-major problem (the kernel's A is its B, so its row
/// vector is the kernel's column vector) with a row vector only and beta = 0 over NaN, NN with a
/// column vector only. Bad input (a vector of the wrong length, on the other GPU, scales for a
/// bf16 problem) is refused with its typed error, launches nothing and leaves C as it was.
#[test]
fn fp8_scaled_gemms_on_the_gpu_agree_with_the_host() {
    use gemm_core::fp8::{Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz};
    use gemm_core::{Element, Layout, Transpose};
    use gemm_dispatch::{Fp8Scales, ScaleAxis, ScaleError};
    let _s = serial();
    configure("devices=gfx942,gfx950;jitter_us=10;seed=8");
    let ctx = context();
    let host = Context::host(1);
    fn quarter<T: Element>(n: usize, seed: u64) -> Vec<T> {
        (0..n).map(|i| T::from_f32((((i as u64 * 7 + seed * 13) % 17) as f32 - 8.0) * 0.25)).collect()
    }
    fn pow2(n: usize, seed: u64) -> Vec<f32> {
        (0..n)
            .map(|i| {
                ((((i as u64 + seed) % 5) as f32) - 2.0).exp2()
                    * if (i + seed as usize).is_multiple_of(7) { -1.0 } else { 1.0 }
            })
            .collect()
    }
    #[allow(clippy::too_many_arguments)]
    fn case<A: Element, B: Element, C: Element>(
        ctx: &Context,
        host: &Context,
        index: usize,
        p: GemmProblem,
        vectors: (bool, bool),
        seed: u64,
    ) {
        let gpu = ctx.gpu(index).unwrap();
        let stream = gpu.create_stream().unwrap();
        let s = p.validate().unwrap();
        let (a, b): (Vec<A>, Vec<B>) = (quarter(s.a, seed), quarter(s.b, seed + 1));
        let c0: Vec<C> = if p.beta == 0.0 { vec![C::from_f32(f32::NAN); s.c] } else { quarter(s.c, seed + 2) };
        let (row, col) = (pow2(p.m, seed), pow2(p.n, seed + 3));
        let scales = Fp8Scales { a: 2.0, b: 0.25, d: 4.0 };
        let (hr, hc) = (vectors.0.then_some(&row[..]), vectors.1.then_some(&col[..]));
        let mut want = c0.clone();
        host.gemm_scaled(&p, &a, &b, &mut want, &scales, hr, hc).unwrap();
        let (da, db) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
        let (drow, dcol) = (gpu.upload(&row).unwrap(), gpu.upload(&col).unwrap());
        let mut dc = gpu.upload(&c0).unwrap();
        let kernel = gpu
            .gemm_scaled(
                &stream,
                &p,
                da.as_slice(),
                db.as_slice(),
                dc.as_mut_slice(),
                &scales,
                vectors.0.then(|| drow.as_slice()),
                vectors.1.then(|| dcol.as_slice()),
            )
            .unwrap()
            .expect("a kernel");
        stream.synchronize().unwrap();
        let got = dc.to_vec().unwrap();
        let bits = |v: &[C]| bytemuck::cast_slice::<C, u8>(v).to_vec();
        assert_eq!(bits(&got), bits(&want), "{kernel}: GPU and host differ");
        assert!(want.iter().any(|x| x.to_f32() != 0.0 && !x.to_f32().is_nan()), "{kernel}: a trivial result");
        // Refused: a row vector one short, a vector on the other GPU, scales for bf16 inputs.
        let before = launches(gpu.ordinal());
        let short = drow.slice(0..p.m - 1).unwrap();
        let r =
            gpu.gemm_scaled(&stream, &p, da.as_slice(), db.as_slice(), dc.as_mut_slice(), &scales, Some(short), None);
        assert_eq!(
            r.unwrap_err(),
            Error::Scale(ScaleError::VectorLength { axis: ScaleAxis::Row, len: p.m - 1, need: p.m })
        );
        let other = ctx.gpu(1 - index).unwrap().upload(&col).unwrap();
        let r = gpu.gemm_scaled(
            &stream,
            &p,
            da.as_slice(),
            db.as_slice(),
            dc.as_mut_slice(),
            &scales,
            None,
            Some(other.as_slice()),
        );
        assert!(matches!(r, Err(Error::WrongDevice { .. })), "{r:?}");
        let pb = p.with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
        let r = host.gemm_scaled(
            &pb,
            &vec![bf16::ZERO; s.a],
            &vec![bf16::ZERO; s.b],
            &mut vec![0f32; s.c],
            &scales,
            None,
            None,
        );
        assert!(matches!(r, Err(Error::Scale(ScaleError::NotFp8 { .. }))), "{r:?}");
        stream.synchronize().unwrap();
        assert_eq!(launches(gpu.ordinal()), before, "refused calls launched nothing");
        assert_eq!(bits(&dc.to_vec().unwrap()), bits(&got), "C untouched by the refused calls");
    }
    let col_major = |m, n, k, ta, tb, beta: f32| {
        GemmProblem::new(m, n, k).with_layout(Layout::ColMajor).with_transposes(ta, tb).with_scalars(1.5, beta)
    };
    for index in 0..2 {
        let tn = col_major(40, 24, 80, Transpose::Yes, Transpose::No, 0.5);
        // Row-major A B^T: the kernel's TN with A and B swapped.
        let rm = GemmProblem::new(33, 48, 64).with_transposes(Transpose::No, Transpose::Yes).with_scalars(-0.5, 0.0);
        let nn = col_major(48, 20, 96, Transpose::No, Transpose::No, 0.25);
        if index == 0 {
            case::<Fp8E4M3Fnuz, Fp8E5M2Fnuz, bf16>(
                &ctx,
                &host,
                index,
                tn.with_dtypes(DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz, DType::Bf16),
                (true, true),
                1,
            );
            case::<Fp8E4M3Fnuz, Fp8E4M3Fnuz, f32>(
                &ctx,
                &host,
                index,
                rm.with_dtypes(DType::Fp8E4M3Fnuz, DType::Fp8E4M3Fnuz, DType::F32),
                (true, false),
                2,
            );
            case::<Fp8E4M3Fnuz, Fp8E4M3Fnuz, f32>(
                &ctx,
                &host,
                index,
                nn.with_dtypes(DType::Fp8E4M3Fnuz, DType::Fp8E4M3Fnuz, DType::F32),
                (false, true),
                3,
            );
        } else {
            case::<Fp8E5M2, Fp8E4M3, bf16>(
                &ctx,
                &host,
                index,
                tn.with_dtypes(DType::Fp8E5M2, DType::Fp8E4M3, DType::Bf16),
                (true, true),
                4,
            );
            case::<Fp8E4M3, Fp8E4M3, f32>(
                &ctx,
                &host,
                index,
                rm.with_dtypes(DType::Fp8E4M3, DType::Fp8E4M3, DType::F32),
                (true, false),
                5,
            );
            case::<Fp8E4M3, Fp8E4M3, gemm_core::f16>(
                &ctx,
                &host,
                index,
                nn.with_dtypes(DType::Fp8E4M3, DType::Fp8E4M3, DType::F16),
                (false, true),
                6,
            );
        }
    }
}

/// Mixture-of-experts decode through `Gpu::gemm_grouped` on both emulated GPUs: six experts of
/// a Linear layer (`y_g = x_g W_g^T`, row-major bf16 -> bf16 and bf16 -> f32, the activations of all experts in one
/// buffer and the weights in another, each expert a view at its offset; C of every expert a
/// region of one buffer), 0 (first and in the middle), 1, 5, 16 and 3 tokens, weight rows that
/// are not multiples of the 64-row tile, K tails past the kernel's 128-deep step, padded
/// leading dimensions (multiples of 8 elements, the grouped kernels' alignment). The planner's
/// choice (`plan::grouped`, the plain twins' table rows) is the grouped decode-rows kernel
/// (gemm-compiler `catalogue.rs`, `GROUPED_DECODE_ROWS`) on both archs: one launch, every
/// element against the reference, beta = 0 over NaN then beta != 0 over that result, C's
/// padding and the empty experts' regions untouched. Rows: about 5200 per expert, enough
/// that both tables rank the decode-rows kernel (128-row blocks since session 34) above the
/// grouped decode kernels, which run half as many rows (gfx942 16x16x512, gfx950 64x16x512).
#[test]
fn moe_decode_runs_the_grouped_decode_rows_kernel_in_one_launch() {
    let _s = serial();
    configure("devices=gfx942,gfx950;jitter_us=10;seed=23");
    let ctx = context();
    // (tokens, weight rows, K) per expert.
    let experts = [(0, 5128, 264), (1, 5136, 264), (5, 5200, 200), (0, 5008, 264), (16, 5264, 136), (3, 5152, 232)];
    for index in 0..2 {
        let gpu = ctx.gpu(index).unwrap();
        let stream = gpu.create_stream().unwrap();
        moe_decode_on::<bf16>(&gpu, &stream, &experts, 60 + 10 * index as u64);
        moe_decode_on::<f32>(&gpu, &stream, &experts, 65 + 10 * index as u64);
    }
}

/// The mixture-of-experts grouped call of [`moe_decode_runs_the_grouped_decode_rows_kernel_in_one_launch`]
/// on `gpu` with C of type `C`: twice (beta = 0 over NaN, then beta != 0), each one launch of
/// the grouped decode-rows kernel, checked element by element.
fn moe_decode_on<C: gemm_core::Element>(
    gpu: &gemm_dispatch::Gpu,
    stream: &gemm_dispatch::GpuStream,
    experts: &[(usize, usize, usize)],
    seed: u64,
) {
    use gemm_core::Transpose;
    let arch = gpu.arch();
    // An empty expert's C region: rows that must stay as they were.
    const EMPTY_ROWS: usize = 2;
    let problem = |&(m, n, k): &(usize, usize, usize), alpha: f32, beta: f32| {
        GemmProblem::new(m, n, k)
            .with_transposes(Transpose::No, Transpose::Yes)
            .with_dtypes(DType::Bf16, DType::Bf16, C::DTYPE)
            .with_leading_dims(k + 8, k + 16, n + 8)
            .with_scalars(alpha, beta)
    };
    // Each expert's region of the activations, the weights and C (offsets in elements, all
    // multiples of 8: every view 16-byte aligned).
    let mut offsets = vec![];
    let (mut oa, mut ob, mut oc) = (0, 0, 0);
    for &(m, n, k) in experts {
        let (la, lb, lc) = (m * (k + 8), n * (k + 16), m.max(EMPTY_ROWS) * (n + 8));
        offsets.push((oa..oa + la, ob..ob + lb, oc..oc + lc));
        (oa, ob, oc) = (oa + la, ob + lb, oc + lc);
    }
    // Random values in the padding past K too: the kernel must not read them into the sums.
    let x: Vec<bf16> = random_values(oa, seed);
    let w: Vec<bf16> = random_values(ob, seed + 1);
    let (dx, dw) = (gpu.upload(&x).unwrap(), gpu.upload(&w).unwrap());
    let mut c0 = vec![C::from_f32(f32::NAN); oc];
    let mut dc = gpu.upload(&c0).unwrap();
    let bits = |v: &[C]| bytemuck::cast_slice::<C, u8>(v).to_vec();
    for (call, (alpha, beta)) in [(1.25f32, 0.0f32), (-0.75, 0.5)].into_iter().enumerate() {
        let problems: Vec<GemmProblem> = experts.iter().map(|e| problem(e, alpha, beta)).collect();
        let mut groups = Vec::new();
        let mut rest = dc.as_mut_slice();
        for (p, (ra, rb, rc)) in problems.iter().zip(&offsets) {
            let (mine, tail) = rest.split_at_mut(rc.len()).unwrap();
            rest = tail;
            groups.push(DeviceGroup {
                problem: *p,
                a: dx.slice(ra.clone()).unwrap(),
                b: dw.slice(rb.clone()).unwrap(),
                c: mine,
            });
        }
        let before = launches(gpu.ordinal());
        let kernels = gpu.gemm_grouped(stream, &mut groups).unwrap();
        drop(groups);
        stream.synchronize().unwrap();
        assert_eq!(launches(gpu.ordinal()) - before, 1, "{arch} call {call}: {kernels:?}");
        for (i, (&(m, ..), kernel)) in experts.iter().zip(&kernels).enumerate() {
            if m == 0 {
                assert_eq!(*kernel, None, "{arch} expert {i}");
                continue;
            }
            let kernel = kernel.unwrap_or_else(|| panic!("{arch} expert {i}: no kernel"));
            let entry = gemm_kernels::for_arch(arch).find(|e| e.name == kernel).expect("a catalogue kernel");
            assert_eq!(entry.family, "grouped_decode_rows", "{arch} expert {i}: {kernel}");
            assert!(entry.grouped && kernel.ends_with("_grouped") && kernel.contains("_decr"), "{kernel}");
        }
        assert_eq!(gemm_dispatch::backends::hip::last_kernel(), kernels.iter().flatten().next().copied());
        let c = dc.to_vec().unwrap();
        for (i, (p, (ra, rb, rc))) in problems.iter().zip(&offsets).enumerate() {
            let (cb, ca) = (&c0[rc.clone()], &c[rc.clone()]);
            if p.m == 0 {
                assert_eq!(bits(ca), bits(cb), "{arch} call {call}: the empty expert {i} wrote C");
                continue;
            }
            let r = reference::check(p, &x[ra.clone()], &w[rb.clone()], cb, ca, None).unwrap();
            assert!(r.passed() && r.checked == p.m * p.n, "{arch} call {call} expert {i} ({p:?}): {r:?}");
            for row in 0..p.m {
                let pad = row * p.ldc + p.n..(row + 1) * p.ldc;
                assert_eq!(bits(&ca[pad.clone()]), bits(&cb[pad]), "{arch} call {call} expert {i} row {row}: padding");
            }
        }
        c0 = c;
    }
}
