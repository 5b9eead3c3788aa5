//! Runs this crate's RCCL/NCCL binding for real on NVIDIA GPUs: loads `libnccl.so.2` (the
//! API RCCL mirrors) through `Nccl::load_nccl`, creates communicators both ways
//! (`ncclCommInitAll`, and `ncclGetUniqueId` + `ncclCommInitRank` in a group), and checks
//! all-reduce (f32, bf16, f16), all-gather and reduce-scatter against host arithmetic.
//!
//! Device memory comes from a tiny CUDA runtime loader below (the binding itself is
//! runtime-agnostic). `GEMM_RCCL_LIBRARY` names libnccl, `GEMM_CUDART_LIBRARY` libcudart.
//! Exits non-zero on any mismatch.
//!
//! Run on 2 x H200 (NCCL 2.28.3, CUDA 13.0), built here with
//! `cargo build --release -p gemm-rocm --example nccl_collectives` and carried over:
//! `NCCL_NVLS_ENABLE=0 GEMM_RCCL_LIBRARY=/usr/lib/x86_64-linux-gnu/libnccl.so.2
//! GEMM_CUDART_LIBRARY=/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13
//! ./nccl_collectives` printed 0 mismatches for all-reduce (f32, bf16, f16; 2^20 elements),
//! all-gather and reduce-scatter (f32, 2^20 per rank), and for an all-reduce over
//! communicators made with `ncclGetUniqueId` + `ncclCommInitRank`.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::Path;

use gemm_rocm::loader::DynLib;
use gemm_rocm::nccl::{Communicator, DataType, Nccl, RedOp};

type Status = c_int;

/// The few CUDA runtime calls the test needs (`cuda_runtime_api.h`).
struct Cudart {
    _lib: DynLib,
    get_device_count: unsafe extern "C" fn(*mut c_int) -> Status,
    set_device: unsafe extern "C" fn(c_int) -> Status,
    malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> Status,
    free: unsafe extern "C" fn(*mut c_void) -> Status,
    memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> Status,
    stream_create: unsafe extern "C" fn(*mut *mut c_void) -> Status,
    stream_synchronize: unsafe extern "C" fn(*mut c_void) -> Status,
    stream_destroy: unsafe extern "C" fn(*mut c_void) -> Status,
    get_error_string: unsafe extern "C" fn(Status) -> *const c_char,
}

const H2D: c_int = 1;
const D2H: c_int = 2;

impl Cudart {
    fn load() -> Result<Self, String> {
        let candidates: Vec<String> = match std::env::var("GEMM_CUDART_LIBRARY") {
            Ok(p) if !p.is_empty() => vec![p],
            _ => ["libcudart.so", "libcudart.so.13", "libcudart.so.12"].map(String::from).to_vec(),
        };
        let mut errs = Vec::new();
        for c in &candidates {
            match DynLib::open(Path::new(c)) {
                Ok(lib) => return Self::resolve(lib),
                Err(e) => errs.push(e),
            }
        }
        Err(format!("libcudart not found: {errs:?}"))
    }

    fn resolve(lib: DynLib) -> Result<Self, String> {
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the types below are the prototypes of `cuda_runtime_api.h`.
                unsafe { lib.symbol(concat!($name, "\0")) }.ok_or(concat!("missing ", $name))?
            };
        }
        Ok(Self {
            get_device_count: sym!("cudaGetDeviceCount"),
            set_device: sym!("cudaSetDevice"),
            malloc: sym!("cudaMalloc"),
            free: sym!("cudaFree"),
            memcpy: sym!("cudaMemcpy"),
            stream_create: sym!("cudaStreamCreate"),
            stream_synchronize: sym!("cudaStreamSynchronize"),
            stream_destroy: sym!("cudaStreamDestroy"),
            get_error_string: sym!("cudaGetErrorString"),
            _lib: lib,
        })
    }

    fn ok(&self, what: &str, s: Status) -> Result<(), String> {
        if s == 0 {
            return Ok(());
        }
        // SAFETY: cudaGetErrorString returns a static C string for any code.
        let msg = unsafe { CStr::from_ptr((self.get_error_string)(s)) };
        Err(format!("{what}: cuda error {s}: {}", msg.to_string_lossy()))
    }
}

/// One device's buffers and stream.
struct Rank {
    dev: c_int,
    send: *mut c_void,
    recv: *mut c_void,
    stream: *mut c_void,
}

fn upload(rt: &Cudart, dst: *mut c_void, src: &[u8]) -> Result<(), String> {
    // SAFETY: dst has room for src (allocated with the largest size used below).
    rt.ok("cudaMemcpy H2D", unsafe { (rt.memcpy)(dst, src.as_ptr().cast(), src.len(), H2D) })
}

fn download(rt: &Cudart, dst: &mut [u8], src: *const c_void) -> Result<(), String> {
    // SAFETY: src holds at least dst.len() bytes.
    rt.ok("cudaMemcpy D2H", unsafe { (rt.memcpy)(dst.as_mut_ptr().cast(), src, dst.len(), D2H) })
}

fn bf16(x: f32) -> u16 {
    (x.to_bits() >> 16) as u16
}
fn from_bf16(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}
/// Small integers only (exact in f16): sign 0, |x| < 2048.
fn f16(x: f32) -> u16 {
    if x == 0.0 {
        return 0;
    }
    let e = x.abs().log2().floor() as i32;
    let m = ((x.abs() / 2f32.powi(e) - 1.0) * 1024.0).round() as u16;
    ((((e + 15) as u16) << 10) | m) | if x < 0.0 { 0x8000 } else { 0 }
}
fn from_f16(h: u16) -> f32 {
    let e = ((h >> 10) & 0x1f) as i32;
    let m = f32::from(h & 0x3ff);
    let v = if e == 0 { m / 1024.0 * 2f32.powi(-14) } else { (1.0 + m / 1024.0) * 2f32.powi(e - 15) };
    if h & 0x8000 != 0 {
        -v
    } else {
        v
    }
}

fn sync_all(rt: &Cudart, ranks: &[Rank]) -> Result<(), String> {
    for r in ranks {
        // SAFETY: live stream.
        rt.ok("cudaStreamSynchronize", unsafe { (rt.stream_synchronize)(r.stream) })?;
    }
    Ok(())
}

fn run() -> Result<(), String> {
    let rt = Cudart::load()?;
    let nccl = Nccl::load_nccl().map_err(|e| e.to_string())?;
    println!("NCCL library: {}", nccl.library_path().display());
    println!("missing NCCL symbols: {:?}", nccl.missing_symbols());
    println!("ncclGetVersion: {}", nccl.version().map_err(|e| e.to_string())?);

    let mut ndev: c_int = 0;
    // SAFETY: writes one int.
    rt.ok("cudaGetDeviceCount", unsafe { (rt.get_device_count)(&mut ndev) })?;
    println!("CUDA devices: {ndev}");
    if ndev < 2 {
        return Err(format!("need 2 GPUs, found {ndev}"));
    }
    let n = ndev as usize;
    let devs: Vec<c_int> = (0..ndev).collect();
    const COUNT: usize = 1 << 20; // elements per rank
    let max_bytes = COUNT * 4 * n;

    let mut ranks = Vec::new();
    for &dev in &devs {
        // SAFETY: plain CUDA runtime calls with valid out-pointers.
        unsafe {
            rt.ok("cudaSetDevice", (rt.set_device)(dev))?;
            let (mut s, mut r, mut st) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
            rt.ok("cudaMalloc", (rt.malloc)(&mut s, max_bytes))?;
            rt.ok("cudaMalloc", (rt.malloc)(&mut r, max_bytes))?;
            rt.ok("cudaStreamCreate", (rt.stream_create)(&mut st))?;
            ranks.push(Rank { dev, send: s, recv: r, stream: st });
        }
    }

    // Communicators, way 1: ncclCommInitAll.
    let comms = nccl.init_all(&devs).map_err(|e| e.to_string())?;
    for (i, c) in comms.iter().enumerate() {
        let (cnt, dev, rank) = (c.count(), c.device(), c.rank());
        println!("comm {i}: count={cnt:?} device={dev:?} rank={rank:?}");
        if cnt != Ok(n) || dev != Ok(devs[i]) || rank != Ok(i) {
            return Err("ncclCommInitAll communicator facts are wrong".into());
        }
    }
    let input = |rank: usize, i: usize| ((rank + 1) * 3 + (i % 7)) as f32; // small integers

    // All-reduce, sum, f32 / bf16 / f16.
    for dtype in [DataType::F32, DataType::Bf16, DataType::F16] {
        for (r, rk) in ranks.iter().enumerate() {
            let host: Vec<u8> = (0..COUNT)
                .flat_map(|i| {
                    let x = input(r, i);
                    match dtype {
                        DataType::F32 => x.to_le_bytes().to_vec(),
                        DataType::Bf16 => bf16(x).to_le_bytes().to_vec(),
                        _ => f16(x).to_le_bytes().to_vec(),
                    }
                })
                .collect();
            upload(&rt, rk.send, &host)?;
        }
        nccl.group(|| {
            for (c, rk) in comms.iter().zip(&ranks) {
                // SAFETY: send/recv hold COUNT elements on the communicator's device; the
                // stream is that device's; all stay alive until synchronised below.
                unsafe { c.all_reduce(rk.send, rk.recv, COUNT, dtype, RedOp::Sum, rk.stream)? };
            }
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        sync_all(&rt, &ranks)?;
        let mut bad = 0usize;
        for rk in &ranks {
            let mut out = vec![0u8; COUNT * dtype.size()];
            download(&rt, &mut out, rk.recv)?;
            for i in 0..COUNT {
                let want: f32 = (0..n).map(|r| input(r, i)).sum();
                let got = match dtype {
                    DataType::F32 => f32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap()),
                    DataType::Bf16 => from_bf16(u16::from_le_bytes([out[2 * i], out[2 * i + 1]])),
                    _ => from_f16(u16::from_le_bytes([out[2 * i], out[2 * i + 1]])),
                };
                if got != want {
                    bad += 1;
                }
            }
        }
        println!("all_reduce sum {dtype:?} x {COUNT} on {n} GPUs: {} mismatches", bad);
        if bad > 0 {
            return Err(format!("all_reduce {dtype:?} wrong"));
        }
    }

    // All-gather f32: rank r sends COUNT elements; everyone gets n * COUNT in rank order.
    for (r, rk) in ranks.iter().enumerate() {
        let host: Vec<u8> = (0..COUNT).flat_map(|i| input(r, i).to_le_bytes()).collect();
        upload(&rt, rk.send, &host)?;
    }
    nccl.group(|| {
        for (c, rk) in comms.iter().zip(&ranks) {
            // SAFETY: recv holds n * COUNT f32 (max_bytes); see above.
            unsafe { c.all_gather(rk.send, rk.recv, COUNT, DataType::F32, rk.stream)? };
        }
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    sync_all(&rt, &ranks)?;
    let mut bad = 0usize;
    for rk in &ranks {
        let mut out = vec![0u8; n * COUNT * 4];
        download(&rt, &mut out, rk.recv)?;
        for j in 0..n * COUNT {
            let got = f32::from_le_bytes(out[4 * j..4 * j + 4].try_into().unwrap());
            if got != input(j / COUNT, j % COUNT) {
                bad += 1;
            }
        }
    }
    println!("all_gather f32 {COUNT} per rank on {n} GPUs: {bad} mismatches");
    if bad > 0 {
        return Err("all_gather wrong".into());
    }

    // Reduce-scatter f32: each rank sends n * COUNT; rank r gets block r of the sum.
    let big = |r: usize, j: usize| ((r + 1) * (j % 11) + j / COUNT) as f32;
    for (r, rk) in ranks.iter().enumerate() {
        let host: Vec<u8> = (0..n * COUNT).flat_map(|j| big(r, j).to_le_bytes()).collect();
        upload(&rt, rk.send, &host)?;
    }
    nccl.group(|| {
        for (c, rk) in comms.iter().zip(&ranks) {
            // SAFETY: send holds n * COUNT f32, recv COUNT; see above.
            unsafe { c.reduce_scatter(rk.send, rk.recv, COUNT, DataType::F32, RedOp::Sum, rk.stream)? };
        }
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    sync_all(&rt, &ranks)?;
    let mut bad = 0usize;
    for (r, rk) in ranks.iter().enumerate() {
        let mut out = vec![0u8; COUNT * 4];
        download(&rt, &mut out, rk.recv)?;
        for i in 0..COUNT {
            let j = r * COUNT + i;
            let want: f32 = (0..n).map(|s| big(s, j)).sum();
            if f32::from_le_bytes(out[4 * i..4 * i + 4].try_into().unwrap()) != want {
                bad += 1;
            }
        }
    }
    println!("reduce_scatter sum f32 {COUNT} per rank on {n} GPUs: {bad} mismatches");
    if bad > 0 {
        return Err("reduce_scatter wrong".into());
    }
    for c in &comms {
        c.async_error().map_err(|e| e.to_string())?;
    }
    drop(comms);

    // Communicators, way 2: ncclGetUniqueId + ncclCommInitRank for every rank in one group.
    let id = nccl.unique_id().map_err(|e| e.to_string())?;
    let by_rank: Vec<Communicator> = nccl
        .group(|| {
            let mut v = Vec::new();
            for (r, &dev) in devs.iter().enumerate() {
                // SAFETY: plain call; the rank's device must be current for ncclCommInitRank.
                if unsafe { (rt.set_device)(dev) } != 0 {
                    return Err(gemm_rocm::Error::InvalidArgument("cudaSetDevice".into()));
                }
                v.push(nccl.init_rank(n, &id, r)?);
            }
            Ok(v)
        })
        .map_err(|e| e.to_string())?;
    for rk in &ranks {
        let ones: Vec<u8> = (0..COUNT).flat_map(|_| 1f32.to_le_bytes()).collect();
        upload(&rt, rk.send, &ones)?;
    }
    nccl.group(|| {
        for (c, rk) in by_rank.iter().zip(&ranks) {
            // SAFETY: as above.
            unsafe { c.all_reduce(rk.send, rk.recv, COUNT, DataType::F32, RedOp::Sum, rk.stream)? };
        }
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    sync_all(&rt, &ranks)?;
    let mut bad = 0usize;
    for rk in &ranks {
        let mut out = vec![0u8; COUNT * 4];
        download(&rt, &mut out, rk.recv)?;
        bad += out.chunks(4).filter(|c| f32::from_le_bytes((*c).try_into().unwrap()) != n as f32).count();
    }
    println!(
        "ncclCommInitRank ranks={:?}, all_reduce of ones: {bad} mismatches",
        by_rank.iter().map(|c| c.rank()).collect::<Vec<_>>()
    );
    if bad > 0 {
        return Err("init_rank all_reduce wrong".into());
    }
    drop(by_rank);

    // Errors come back as values: a null communicator's query is refused by NCCL.
    let bad_comm = nccl.init_all(&[]).unwrap_err();
    println!("init_all(&[]) -> {bad_comm}");

    for rk in ranks {
        // SAFETY: freed once; all work synchronised above.
        unsafe {
            rt.ok("cudaSetDevice", (rt.set_device)(rk.dev))?;
            rt.ok("cudaFree", (rt.free)(rk.send))?;
            rt.ok("cudaFree", (rt.free)(rk.recv))?;
            rt.ok("cudaStreamDestroy", (rt.stream_destroy)(rk.stream))?;
        }
    }
    Ok(())
}

fn main() {
    match run() {
        Ok(()) => println!("NCCL COLLECTIVES OK"),
        Err(e) => {
            eprintln!("FAILED: {e}");
            std::process::exit(1);
        }
    }
}
