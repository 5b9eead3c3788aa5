//! The HIP half of libgemm_emu_hip.so, driven through gemm-rocm's dlopen binding.

mod common;

use std::ffi::{c_int, c_void};

use common::*;
use gemm_core::Arch;
use gemm_rocm::hip::{DeviceAttribute, HipAbi};

fn bytes_of(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn discovery_and_attributes_for_both_archs_and_both_abis() {
    let _s = serial();
    for (version, abi) in [(60_342_134, HipAbi::Rocm6), (50_221_153, HipAbi::Rocm5)] {
        configure(&format!("devices=gfx942,gfx950;memory=1000000;version={version}"));
        let hip = hip();
        assert_eq!(hip.abi(), abi);
        assert_eq!(hip.device_count().unwrap(), 2);
        let d0 = hip.device(0).unwrap();
        let d1 = hip.device(1).unwrap();
        assert_eq!(d0.name().unwrap(), "AMD Instinct MI300X (emulated)");
        assert_eq!(d1.name().unwrap(), "AMD Instinct MI355X (emulated)");
        assert_eq!(d0.arch_name().unwrap(), "gfx942:sramecc+:xnack-");
        assert_eq!(d1.gfx_target().unwrap(), "gfx950");
        assert_eq!(d0.compute_units().unwrap(), 304);
        assert_eq!(d1.compute_units().unwrap(), 256);
        assert_eq!(d0.attribute(DeviceAttribute::LdsPerWorkgroup).unwrap(), 65536);
        assert_eq!(d1.attribute(DeviceAttribute::LdsPerWorkgroup).unwrap(), 163_840);
        assert_eq!(d1.attribute(DeviceAttribute::WarpSize).unwrap(), 64);
        assert_eq!(d1.attribute(DeviceAttribute::MaxThreadsPerBlock).unwrap(), 1024);
        assert_eq!(d0.total_memory().unwrap(), 1_000_000);
        assert_eq!(d1.memory_info().unwrap(), (1_000_000, 1_000_000));
        match abi {
            HipAbi::Rocm5 => {
                assert_eq!(d0.attribute(DeviceAttribute::GcnArch).unwrap(), 942);
                // 10018 is not a ROCm 5 attribute.
                let f = hip.api().hipDeviceGetAttribute().unwrap();
                let mut v = 0;
                // SAFETY: writes one int.
                assert_eq!(unsafe { f(&mut v, 10018, 0) }, 1);
            }
            HipAbi::Rocm6 => {
                assert_eq!(d0.attribute(DeviceAttribute::XccCount).unwrap(), 8);
                assert_eq!(d1.attribute(DeviceAttribute::PhysicalComputeUnits).unwrap(), 256);
                let f = hip.api().hipDeviceGetAttribute().unwrap();
                let mut v = 0;
                // SAFETY: writes one int; 10003 is hipDeviceAttributeUnused4 in ROCm 6.
                assert_eq!(unsafe { f(&mut v, 10003, 0) }, 1);
            }
        }
        assert!(d0.info().is_ok());
    }
    configure("devices=");
    assert_eq!(hip().device_count().unwrap(), 0);
    let f = hip().api().hipGetDeviceCount().unwrap();
    let mut n = -1;
    // SAFETY: writes one int.
    assert_eq!(unsafe { f(&mut n) }, 100, "hipErrorNoDevice");
    assert_eq!(n, 0);
    assert_eq!(code(hip().set_device(0)), 100);
    configure("");
    assert_eq!(hip().device_count().unwrap(), 2);
    assert_eq!(code(hip().set_device(2)), 101, "hipErrorInvalidDevice");
}

#[test]
fn error_names_and_strings() {
    let _s = serial();
    configure("");
    let e = code(hip().device(0).unwrap().alloc(usize::MAX / 2).map(drop));
    assert_eq!(e, 2);
    let e: gemm_rocm::Error = gemm_rocm::hip::HipError::new(Some(hip().api()), "x", 719).into();
    let msg = e.to_string();
    assert!(msg.contains("hipErrorLaunchFailure") && msg.contains("unspecified launch failure"), "{msg}");
}

#[test]
fn current_device_is_per_host_thread() {
    let _s = serial();
    configure("devices=gfx942,gfx950");
    let hip = hip();
    hip.set_device(1).unwrap();
    let get = hip.api().hipGetDevice().unwrap();
    let mut d: c_int = -1;
    // SAFETY: writes one int.
    assert_eq!(unsafe { get(&mut d) }, 0);
    assert_eq!(d, 1);
    let before = (counter(0, "malloc_calls"), counter(1, "malloc_calls"));
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut d: c_int = -1;
            // SAFETY: writes one int.
            assert_eq!(unsafe { get(&mut d) }, 0);
            assert_eq!(d, 0, "a new thread starts on device 0");
            // A raw hipMalloc on this thread lands on device 0, not the main thread's 1.
            let malloc = hip.api().hipMalloc().unwrap();
            let free = hip.api().hipFree().unwrap();
            let mut p: *mut c_void = std::ptr::null_mut();
            // SAFETY: writes one pointer; freed below.
            unsafe {
                assert_eq!(malloc(&mut p, 64), 0);
                assert_eq!(free(p), 0);
            }
        });
    });
    assert_eq!((counter(0, "malloc_calls"), counter(1, "malloc_calls")), (before.0 + 1, before.1));
    hip.set_device(0).unwrap();
}

#[test]
fn malloc_enforces_capacity_and_pointers_are_unique_per_device() {
    let _s = serial();
    configure("devices=gfx942,gfx942;memory=4096");
    let hip = hip();
    let (d0, d1) = (hip.device(0).unwrap(), hip.device(1).unwrap());
    let a = d0.alloc(4000).unwrap();
    assert_eq!(code(d0.alloc(100).map(drop)), 2, "hipErrorOutOfMemory");
    assert_eq!(d0.memory_info().unwrap(), (96, 4096));
    let b = d1.alloc(4000).unwrap();
    assert_ne!(a.device_address(), b.device_address());
    assert_eq!(counter(0, "live_bytes"), 4000);
    drop(a);
    assert_eq!(counter(0, "live_bytes"), 0);
    assert_eq!(counter(0, "peak_bytes"), 4000);
    let c = d0.alloc(4096).unwrap();
    // A pointer the runtime never handed out, and a double free.
    let free = hip.api().hipFree().unwrap();
    // SAFETY: hipFree validates its argument.
    unsafe {
        assert_eq!(free((c.device_address() + 8) as *mut c_void), 1, "hipErrorInvalidValue");
        assert_eq!(free(std::ptr::null_mut()), 0, "hipFree(NULL) is a no-op");
    }
    // Configuration is refused while allocations live.
    assert_ne!(try_configure(""), 0);
    drop((b, c));
    assert_eq!(try_configure("memory=x"), 2);
}

#[test]
fn copies_round_trip_and_refuse_wrong_directions() {
    let _s = serial();
    configure("devices=gfx942,gfx950");
    let hip = hip();
    let (d0, d1) = (hip.device(0).unwrap(), hip.device(1).unwrap());
    let data: Vec<u32> = (0..1000).collect();
    let mut a = d0.alloc(4000).unwrap();
    a.write(0, &data).unwrap();
    let mut back = vec![0u32; 1000];
    a.read(0, &mut back).unwrap();
    assert_eq!(back, data);
    // Device to device, across devices (hipMemcpy kind 3).
    let mut b = d1.alloc(4000).unwrap();
    b.copy_from(&a).unwrap();
    b.read(0, &mut back).unwrap();
    assert_eq!(back, data);
    b.fill(0xab).unwrap();
    b.read(0, &mut back).unwrap();
    assert!(back.iter().all(|&v| v == 0xabab_abab));
    // Pinned, asynchronous, through a stream.
    let s = d0.create_stream().unwrap();
    let mut pin = d0.alloc_pinned(4000).unwrap();
    pin.as_mut_slice().unwrap().copy_from_slice(&bytes_of(&data));
    let mut c = d0.alloc(4000).unwrap();
    s.copy_to_device(&mut c, 0, &mut pin, 0..4000).unwrap();
    let mut pin2 = d0.alloc_pinned(4000).unwrap();
    s.copy_to_host(&mut pin2, 0, &c, 0..4000).unwrap();
    s.synchronize().unwrap();
    assert_eq!(pin2.as_slice().unwrap(), &bytes_of(&data)[..]);
    assert!(counter(0, "h2d_bytes") >= 8000 && counter(0, "d2h_bytes") >= 8000);
    assert_eq!(counter(1, "d2d_bytes"), 4000);
    // Wrong direction: host to device with a device source.
    let memcpy = hip.api().hipMemcpy().unwrap();
    let mut host = [0u8; 16];
    // SAFETY: both ranges are valid for 16 bytes; the runtime refuses the direction.
    unsafe {
        assert_eq!(memcpy(host.as_mut_ptr().cast(), a.as_ptr(), 16, 1), 21, "hipErrorInvalidMemcpyDirection");
        assert_eq!(memcpy(host.as_mut_ptr().cast(), a.as_ptr(), 16, 4), 0, "hipMemcpyDefault infers D2H");
        assert_eq!(memcpy(host.as_mut_ptr().cast(), a.as_ptr(), 8000, 2), 1, "past the allocation");
    }
    assert_eq!(host[..4], 0u32.to_le_bytes());
}

#[test]
fn streams_run_concurrently_and_events_order_them_under_jitter() {
    let _s = serial();
    configure("devices=gfx942;jitter_us=300;seed=11");
    let hip = hip();
    let d = hip.device(0).unwrap();
    let (s1, s2) = (d.create_stream().unwrap(), d.create_stream().unwrap());
    let e = d.create_event(true).unwrap();
    // A never-recorded event: waiting and syncing are no-ops.
    e.synchronize().unwrap();
    assert!(e.is_complete().unwrap());
    s2.wait_event(&e).unwrap();
    let mut dev = d.alloc(4096).unwrap();
    let mut up = d.alloc_pinned(4096).unwrap();
    let mut down = d.alloc_pinned(4096).unwrap();
    for i in 0..12u8 {
        up.as_mut_slice().unwrap().fill(i);
        s1.copy_to_device(&mut dev, 0, &mut up, 0..4096).unwrap();
        e.record(&s1).unwrap();
        s2.wait_event(&e).unwrap();
        s2.copy_to_host(&mut down, 0, &dev, 0..4096).unwrap();
        s2.synchronize().unwrap();
        assert!(down.as_slice().unwrap().iter().all(|&b| b == i), "iteration {i}");
    }
    // Concurrency: s2 blocks on an event of s1 while s1 is held by its own wait on an event
    // recorded later on s3; s3 runs while s2 is blocked, so three queues make progress
    // independently.
    let s3 = d.create_stream().unwrap();
    let (gate, mid) = (d.create_event(false).unwrap(), d.create_event(true).unwrap());
    s3.fill(&mut dev, 7).unwrap();
    gate.record(&s3).unwrap();
    s1.wait_event(&gate).unwrap();
    mid.record(&s1).unwrap();
    s2.wait_event(&mid).unwrap();
    s2.synchronize().unwrap();
    assert!(mid.is_complete().unwrap() && gate.is_complete().unwrap());
    let t = mid.elapsed_ms(&mid).unwrap();
    assert_eq!(t, 0.0);
    assert!(e.elapsed_ms(&mid).unwrap() >= 0.0);
}

#[test]
fn legacy_null_stream_orders_blocking_streams() {
    let _s = serial();
    configure("devices=gfx942;jitter_us=200;seed=5");
    let hip = hip();
    let d = hip.device(0).unwrap();
    let api = hip.api();
    let create = api.hipStreamCreateWithFlags().unwrap();
    let memset_async = api.hipMemsetAsync().unwrap();
    let destroy = api.hipStreamDestroy().unwrap();
    let mut blocking: *mut gemm_rocm::hip::sys::ihipStream_t = std::ptr::null_mut();
    // SAFETY: writes one handle.
    assert_eq!(unsafe { create(&mut blocking, 0) }, 0);
    let mut buf = d.alloc(1 << 16).unwrap();
    for i in 1..8u8 {
        // Blocking stream work, then a synchronous hipMemcpy (null stream): it must see it.
        // SAFETY: the buffer is 64 KiB.
        assert_eq!(unsafe { memset_async(buf.as_mut_ptr(), c_int::from(i), 1 << 16, blocking.cast()) }, 0);
        let mut out = vec![0u8; 1 << 16];
        buf.read(0, &mut out).unwrap();
        assert!(out.iter().all(|&b| b == i));
    }
    // SAFETY: destroyed once.
    assert_eq!(unsafe { destroy(blocking) }, 0);
    // SAFETY: a destroyed handle is refused, not dereferenced.
    assert_eq!(unsafe { destroy(blocking) }, 400, "hipErrorInvalidHandle");
}

#[test]
fn catalogue_kernel_computes_the_reference_gemm() {
    let _s = serial();
    configure("devices=gfx942,gfx950;mode=random;seed=3;jitter_us=100");
    let hip = hip();
    for (ordinal, arch, (m, n, k)) in [(0usize, Arch::Gfx942, (64, 64, 32)), (1, Arch::Gfx950, (70, 33, 40))] {
        let d = hip.device(ordinal).unwrap();
        let g = Gemm::new(kernel_for(arch), m, n, k, 1);
        let [a, b, c] = buffers(&d, &g);
        let module = d.load_module(g.entry.code_object).unwrap();
        let f = module.function(g.entry.name).unwrap();
        let (s1, s2) = (d.create_stream().unwrap(), d.create_stream().unwrap());
        let args = g.args(a.device_address(), b.device_address(), c.device_address());
        let before = counter(ordinal as i32, "launches");
        // SAFETY: the buffers are live and sized for the problem; they outlive the sync.
        unsafe { f.launch(&g.launch_config(), &s1, args.as_bytes()) }.unwrap();
        let done = d.create_event(false).unwrap();
        done.record(&s1).unwrap();
        s2.wait_event(&done).unwrap();
        let mut pinned = d.alloc_pinned(g.c_len() * 4).unwrap();
        s2.copy_to_host(&mut pinned, 0, &c, 0..g.c_len() * 4).unwrap();
        s2.synchronize().unwrap();
        let got: Vec<f32> =
            pinned.as_slice().unwrap().chunks(4).map(|b| f32::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!(got, g.expected, "{} {m}x{n}x{k}", g.entry.name);
        assert_eq!(counter(ordinal as i32, "launches"), before + 1);
        assert_eq!(counter(ordinal as i32, "findings"), 0);
    }
}

#[test]
fn kernel_params_form_packs_from_metadata() {
    let _s = serial();
    configure("devices=gfx942");
    let hip = hip();
    let d = hip.device(0).unwrap();
    let g = Gemm::new(kernel_for(Arch::Gfx942), 40, 24, 16, 9);
    let [a, b, c] = buffers(&d, &g);
    let module = d.load_module(g.entry.code_object).unwrap();
    let _keep = module.function(g.entry.name).unwrap();
    // Raw handles for the kernelParams form.
    let api = hip.api();
    let (load, get, launch, unload) = (
        api.hipModuleLoadData().unwrap(),
        api.hipModuleGetFunction().unwrap(),
        api.hipModuleLaunchKernel().unwrap(),
        api.hipModuleUnload().unwrap(),
    );
    let image: Vec<u64> = g
        .entry
        .code_object
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect();
    let mut m = std::ptr::null_mut();
    let mut f = std::ptr::null_mut();
    let name = std::ffi::CString::new(g.entry.name).unwrap();
    // SAFETY: the image is a complete code object; out-pointers are valid.
    unsafe {
        assert_eq!(load(&mut m, image.as_ptr().cast()), 0);
        assert_eq!(get(&mut f, m, name.as_ptr()), 0);
        let missing = std::ffi::CString::new("no_such_kernel").unwrap();
        let mut f2 = std::ptr::null_mut();
        assert_eq!(get(&mut f2, m, missing.as_ptr()), 500, "hipErrorNotFound");
    }
    let p = &g.problem;
    let (pa, pb, pc) = (a.device_address(), b.device_address(), c.device_address());
    let (mm, nn, kk, lda, ldb, ldc) = (p.m as u32, p.n as u32, p.k as u32, p.lda as u32, p.ldb as u32, p.ldc as u32);
    let (alpha, beta) = (1f32, 0f32);
    let mut values: Vec<*mut c_void> = Vec::new();
    for arg in g.entry.kernarg {
        let ptr: *const c_void = match arg.name {
            "a" => (&pa as *const u64).cast(),
            "b" => (&pb as *const u64).cast(),
            "c" => (&pc as *const u64).cast(),
            "m" => (&mm as *const u32).cast(),
            "n" => (&nn as *const u32).cast(),
            "k" => (&kk as *const u32).cast(),
            "lda" => (&lda as *const u32).cast(),
            "ldb" => (&ldb as *const u32).cast(),
            "ldc" => (&ldc as *const u32).cast(),
            "alpha" => (&alpha as *const f32).cast(),
            "beta" => (&beta as *const f32).cast(),
            other => panic!("{other}"),
        };
        values.push(ptr.cast_mut());
    }
    let cfg = g.launch_config();
    // SAFETY: one pointer per argument, each to a value of its size, alive across the call;
    // the buffers are live until after the synchronisation.
    unsafe {
        let r = launch(
            f,
            cfg.grid[0],
            cfg.grid[1],
            1,
            cfg.block[0],
            1,
            1,
            0,
            std::ptr::null_mut(),
            values.as_mut_ptr(),
            std::ptr::null_mut(),
        );
        assert_eq!(r, 0);
        // Shapes refused at the call.
        let r = launch(f, 0, 1, 1, 256, 1, 1, 0, std::ptr::null_mut(), values.as_mut_ptr(), std::ptr::null_mut());
        assert_eq!(r, 1);
        let r = launch(f, 1, 1, 1, 256, 8, 1, 0, std::ptr::null_mut(), values.as_mut_ptr(), std::ptr::null_mut());
        assert_eq!(r, 1);
        let r = launch(f, 1, 1, 1, 256, 1, 1, 1 << 20, std::ptr::null_mut(), values.as_mut_ptr(), std::ptr::null_mut());
        assert_eq!(r, 1, "LDS beyond the device");
    }
    d.synchronize().unwrap();
    let mut got = vec![0f32; g.c_len()];
    c.read(0, &mut got).unwrap();
    assert_eq!(got, g.expected);
    // SAFETY: unloaded once; the function handle dies with it.
    unsafe {
        assert_eq!(unload(m), 0);
        assert_eq!(unload(m), 400);
    }
}

#[test]
fn wrong_arch_and_garbage_fail_at_load() {
    let _s = serial();
    configure("devices=gfx942,gfx950");
    let hip = hip();
    let d0 = hip.device(0).unwrap();
    let gfx950 = kernel_for(Arch::Gfx950);
    assert_eq!(code(d0.load_module(gfx950.code_object).map(drop)), 209, "hipErrorNoBinaryForGpu");
    assert!(hip.device(1).unwrap().load_module(gfx950.code_object).is_ok());
    let load = hip.api().hipModuleLoadData().unwrap();
    let mut m = std::ptr::null_mut();
    let garbage = [0x55u8; 256];
    // SAFETY: the image pointer is readable for 256 bytes; the runtime reads the magic only.
    assert_eq!(unsafe { load(&mut m, garbage.as_ptr().cast()) }, 200, "hipErrorInvalidImage");
    let mut elf = vec![0u8; 256];
    elf[..4].copy_from_slice(b"\x7fELF");
    elf[4] = 2;
    elf[5] = 1;
    // SAFETY: an ELF header with no tables: the runtime reads 64 bytes.
    assert_eq!(unsafe { load(&mut m, elf.as_ptr().cast()) }, 218, "hipErrorInvalidKernelFile");
}

#[test]
fn a_faulting_launch_fails_at_the_next_synchronisation() {
    let _s = serial();
    configure("devices=gfx942");
    let hip = hip();
    let d = hip.device(0).unwrap();
    let g = Gemm::new(kernel_for(Arch::Gfx942), 64, 64, 32, 2);
    let [a, b, _c] = buffers(&d, &g);
    let small = d.alloc(16).unwrap();
    let module = d.load_module(g.entry.code_object).unwrap();
    let f = module.function(g.entry.name).unwrap();
    let s = d.create_stream().unwrap();
    let args = g.args(a.device_address(), b.device_address(), small.device_address());
    // SAFETY: deliberately wrong: C is 16 bytes. The emulator faults instead of corrupting.
    unsafe { f.launch(&g.launch_config(), &s, args.as_bytes()) }.expect("the launch itself is accepted");
    let e = d.create_event(false).unwrap();
    e.record(&s).unwrap();
    assert_eq!(code(e.synchronize()), 719, "the event after the fault reports it");
    assert_eq!(code(s.synchronize()), 719, "hipErrorLaunchFailure");
    assert!(findings(0).contains(g.entry.name), "{}", findings(0));
    s.synchronize().expect("reported once; the stream is usable again");
    let mut out = vec![0u8; 16];
    small.read(0, &mut out).unwrap();
}

#[test]
fn injected_faults() {
    let _s = serial();
    configure("devices=gfx942,gfx942");
    let hip = hip();
    let d = hip.device(0).unwrap();
    assert_ne!(inject(5, "malloc", 0), 0);
    assert_ne!(inject(0, "explode", 0), 0);
    // malloc: the second allocation fails.
    assert_eq!(inject(0, "malloc", 1), 0);
    let keep = d.alloc(64).unwrap();
    assert_eq!(code(d.alloc(64).map(drop)), 2);
    let mut buf = d.alloc(64).unwrap();
    // memcpy: the next copy fails, the one after works.
    assert_eq!(inject(0, "memcpy", 0), 0);
    assert_eq!(code(buf.write(0, &[1u8; 64])), 999);
    buf.write(0, &[1u8; 64]).unwrap();
    // launch: fails asynchronously, with findings.
    let g = Gemm::new(kernel_for(Arch::Gfx942), 64, 64, 32, 3);
    let [a, b, c] = buffers(&d, &g);
    let module = d.load_module(g.entry.code_object).unwrap();
    let f = module.function(g.entry.name).unwrap();
    let s = d.create_stream().unwrap();
    assert_eq!(inject(0, "launch", 0), 0);
    let args = g.args(a.device_address(), b.device_address(), c.device_address());
    // SAFETY: valid buffers; the injected fault fails it before it runs.
    unsafe { f.launch(&g.launch_config(), &s, args.as_bytes()) }.unwrap();
    assert_eq!(code(s.synchronize()), 719);
    assert!(findings(0).contains("injected"));
    // lost: two more calls pass, then everything touching device 0 fails; device 1 is fine.
    let spare = d.alloc(4096).unwrap();
    assert_eq!(inject(0, "lost", 2), 0);
    buf.write(0, &[2u8; 64]).unwrap();
    assert!(s.synchronize().is_ok());
    assert_eq!(code(buf.write(0, &[3u8; 64])), 999);
    assert_eq!(code(s.synchronize()), 999);
    assert_eq!(code(d.alloc(8).map(drop)), 999);
    // A buffer freed on the lost device goes with it (the free fails, nothing stays alive).
    let live = counter(0, "live_bytes");
    drop(spare);
    assert_eq!(counter(0, "live_bytes"), live - 4096);
    hip.device(1).unwrap().alloc(8).unwrap();
    assert_eq!(inject(0, "clear", 0), 0);
    buf.write(0, &[4u8; 64]).unwrap();
    drop((keep, module, f));
}

#[test]
fn counters_and_unknown_names() {
    let _s = serial();
    configure("devices=gfx942");
    let d = hip().device(0).unwrap();
    assert_eq!(counter(0, "nope"), u64::MAX);
    assert_eq!(counter(3, "launches"), u64::MAX);
    let hm = counter(0, "host_malloc_calls");
    let _p = d.alloc_pinned(128).unwrap();
    assert_eq!(counter(0, "host_malloc_calls"), hm + 1);
    for name in [
        "launches",
        "h2d_bytes",
        "d2h_bytes",
        "d2d_bytes",
        "malloc_calls",
        "live_bytes",
        "peak_bytes",
        "findings",
        "collectives",
    ] {
        assert_ne!(counter(0, name), u64::MAX, "{name}");
    }
}

#[test]
fn pointer_queries_name_the_device_and_the_allocation() {
    let _s = serial();
    configure("devices=gfx942,gfx950");
    let hip = hip();
    let (d0, d1) = (hip.device(0).unwrap(), hip.device(1).unwrap());
    let a = d0.alloc(1001).unwrap();
    let b = d1.alloc(64).unwrap();
    let at = |addr: u64| hip.pointer_info(addr as usize as *const c_void);
    let info = at(a.device_address() + 100).unwrap();
    assert_eq!((info.device, info.base, info.size), (0, a.device_address(), 1001));
    assert_eq!(info.bytes_from(a.device_address() + 100), 901);
    assert_eq!(at(b.device_address()).unwrap().device, 1);
    // Just past the end, host memory and freed memory are not device memory.
    assert_eq!(code(at(a.device_address() + 1001)), 1);
    let host = [0u8; 16];
    assert_eq!(code(hip.pointer_info(host.as_ptr().cast())), 1);
    let freed = b.device_address();
    drop(b);
    assert_eq!(code(at(freed)), 1);
    // hipMemGetAddressRange ignores a NULL out-pointer, as CUDA documents.
    let f = hip.api().hipMemGetAddressRange().unwrap();
    let mut size = 0usize;
    // SAFETY: one size_t out-value; the base out-pointer is NULL.
    let rc = unsafe { f(std::ptr::null_mut(), &mut size, (a.device_address() + 5) as usize as *mut c_void) };
    assert_eq!((rc, size), (0, 1001));
    // Streams report their device; NULL is the current device's null stream.
    let s1 = d1.create_stream().unwrap();
    // SAFETY: live stream handles.
    unsafe {
        assert_eq!(hip.stream_device(s1.as_raw()).unwrap().unwrap(), 1);
        hip.set_device(0).unwrap();
        assert_eq!(hip.stream_device(std::ptr::null_mut()).unwrap().unwrap(), 0);
    }
    drop((a, s1));
}
