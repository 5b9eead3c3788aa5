//! Host overhead per device-memory GEMM call (validation + kernel choice + launch, no copies),
//! against the emulated HIP runtime's raw `hipModuleLaunchKernel` of the same kernel with the
//! same arguments: `cargo bench -p gemm-dispatch --bench device_overhead`.
//!
//! The runtime is `libgemm_emu_hip.so`. So that only host work is measured, the device's first
//! launch is made to fail (`gemm_emu_hip_inject_fault(0, "launch", 0)`): the stream then skips
//! every later operation (a real queue stops at a fault), so queued kernels cost the worker thread
//! nothing, while every call still pays its full host path, the runtime's checks and enqueue
//! included. Both sides are measured the same way.

use criterion::{criterion_group, criterion_main, Criterion};
use gemm_core::{bf16, DType, GemmProblem, StridedBatch};
use gemm_dispatch::backends::hip::{discover_with, launch_for, HipOptions};
use gemm_dispatch::Context;
use gemm_rocm::hip::{pack_launch_extra, Hip};
use std::ffi::{c_char, c_int, CString};

fn bench(c: &mut Criterion) {
    let hip = Hip::load_from(gemm_emu_hip::library_path().expect("libgemm_emu_hip.so next to the bench")).unwrap();
    // SAFETY: control API prototypes of gemm-emu-hip (control.rs); the library stays loaded.
    let configure: unsafe extern "C" fn(*const c_char) -> c_int =
        unsafe { hip.api().library().symbol("gemm_emu_hip_configure\0") }.unwrap();
    // SAFETY: as above.
    let inject: unsafe extern "C" fn(c_int, *const c_char, u64) -> c_int =
        unsafe { hip.api().library().symbol("gemm_emu_hip_inject_fault\0") }.unwrap();
    let spec = CString::new("devices=gfx942").unwrap();
    // SAFETY: NUL-terminated strings.
    assert_eq!(unsafe { configure(spec.as_ptr()) }, 0);

    let found = discover_with(hip.clone(), &HipOptions::default());
    let ctx = Context::from_backends(found.devices).unwrap();
    let gpu = ctx.gpu(0).unwrap();
    let stream = gpu.create_stream().unwrap();
    let p = GemmProblem::new(256, 256, 256).with_dtypes(DType::Bf16, DType::Bf16, DType::F32);
    let s = p.validate().unwrap();
    let da = gpu.alloc::<bf16>(s.a).unwrap();
    let db = gpu.alloc::<bf16>(s.b).unwrap();
    let mut dc = gpu.alloc::<f32>(s.c * 8).unwrap();

    // Poison the stream with a failing first launch: nothing queued afterwards runs.
    let op = CString::new("launch").unwrap();
    // SAFETY: NUL-terminated strings.
    assert_eq!(unsafe { inject(0, op.as_ptr(), 0) }, 0);
    gpu.gemm(&stream, &p, da.as_slice(), db.as_slice(), dc.slice_mut(0..s.c).unwrap()).unwrap();

    // The raw launch: the kernel the dispatcher picks, its arguments packed once.
    let plan = gpu.backend().plan(&p).unwrap();
    let module = gpu.backend().device().load_module(plan.entry.code_object).unwrap();
    let function = module.function(plan.entry.name).unwrap();
    let (config, args) = launch_for(&plan, &p, da.device_address(), db.device_address(), dc.device_address()).unwrap();
    let launch = hip.api().hipModuleLaunchKernel().unwrap();
    let raw_stream = stream.stream().as_raw();

    let mut group = c.benchmark_group("device call host overhead (bf16 256^3, gfx942, emulated HIP)");
    group.bench_function("raw hipModuleLaunchKernel", |b| {
        b.iter(|| {
            let size = args.len();
            let mut extra = pack_launch_extra(&args, &size);
            let [gx, gy, gz] = config.grid;
            let [bx, by, bz] = config.block;
            // SAFETY: the arguments were packed for this kernel with addresses inside live
            // allocations; the stream is poisoned, so the kernel never runs anyway.
            let code = unsafe {
                launch(
                    function.as_raw(),
                    gx,
                    gy,
                    gz,
                    bx,
                    by,
                    bz,
                    0,
                    raw_stream,
                    std::ptr::null_mut(),
                    extra.as_mut_ptr(),
                )
            };
            assert_eq!(code, 0);
        })
    });
    group.bench_function("Gpu::gemm (validate, choose, launch)", |b| {
        b.iter(|| gpu.gemm(&stream, &p, da.as_slice(), db.as_slice(), dc.slice_mut(0..s.c).unwrap()).unwrap())
    });
    group.bench_function("C ABI path (3 pointer lookups + Gpu::gemm_raw)", |b| {
        b.iter(|| {
            let sa = gpu.span_of_pointer("a", da.device_address() as *const _).unwrap();
            let sb = gpu.span_of_pointer("b", db.device_address() as *const _).unwrap();
            let sc = gpu.span_of_pointer("c", dc.device_address() as *const _).unwrap();
            // SAFETY: spans of live allocations, alive for the whole benchmark.
            unsafe { gpu.gemm_raw("bench", &stream, &p, sa, sb, sc) }.unwrap()
        })
    });
    let batch = StridedBatch { problem: p, count: 8, stride_a: 0, stride_b: 0, stride_c: s.c };
    group.bench_function("Gpu::gemm_strided_batched, 8 items (per call)", |b| {
        b.iter(|| gpu.gemm_strided_batched(&stream, &batch, da.as_slice(), db.as_slice(), dc.as_mut_slice()).unwrap())
    });
    group.finish();
    // The injected failure, reported once; the stream is usable again.
    assert!(stream.synchronize().is_err());
    stream.synchronize().unwrap();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
