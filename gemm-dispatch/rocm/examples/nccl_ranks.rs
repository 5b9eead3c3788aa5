//! The bootstrap of a process-per-GPU tensor-parallel group against a **real** NCCL (RCCL's API
//! is NCCL's): `nccl_ranks` starts one process per GPU (itself, `--rank R`); rank 0 makes the
//! unique id (`ncclGetUniqueId`) and writes it to a file, the others read it — the only thing
//! that crosses the process boundary — and every rank joins with `ncclCommInitRank` on its own
//! GPU. Then each rank runs, on device buffers, the collectives the `TpGroup` plans issue, in
//! the same shapes of call:
//!
//! * the call descriptor all-gather (128 bytes, `ncclUint8`);
//! * column-parallel with gather: an all-gather per chunk of rows (bf16), chunks issued on a
//!   second stream that waits on an event of the GEMM stream (the overlap);
//! * row-parallel: an in-place all-reduce per chunk (f32 and bf16), and a reduce-scatter per
//!   chunk (f32) from a block-per-rank send buffer;
//!
//! checked against the expected sums (small integers: exact). Last, the failure path: rank 1
//! exits without calling; rank 0 issues an all-reduce, watches its stream and
//! `ncclCommGetAsyncError` against a 3 s timeout, then `ncclCommAbort`s — no hang.
//!
//! `GEMM_RCCL_LIBRARY` names libnccl (default `libnccl.so.2`), `GEMM_CUDART_LIBRARY` libcudart.
//! Build here with `cargo build --release -p gemm-rocm --example nccl_ranks`, run on a machine
//! with 2 NVIDIA GPUs: `NCCL_NVLS_ENABLE=0 ./nccl_ranks --ranks 2`. Exits non-zero on any
//! mismatch or rank failure.
//!
//! Ran on 2 x H200 (NCCL 2.28.3), carried over as a release binary:
//! `NCCL_NVLS_ENABLE=0 GEMM_RCCL_LIBRARY=/usr/lib/x86_64-linux-gnu/libnccl.so.2
//! GEMM_CUDART_LIBRARY=/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so ./nccl_ranks --ranks 2`:
//! `ncclCommInitRank` in 0.66 s on both ranks; descriptor all-gather agreed; column all-gather
//! bf16 (4 chunks, overlap), row all-reduce f32 (4 chunks) and bf16, row reduce-scatter f32
//! (4 chunks): 0 mismatches on both ranks; with rank 1 gone, rank 0's all-reduce timed out after
//! 3.0 s and `ncclCommAbort` returned Ok in 0.52 s; `NCCL RANKS OK`, 5.4 s in all.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use gemm_rocm::loader::DynLib;
use gemm_rocm::nccl::{Communicator, DataType, Nccl, RedOp, UniqueId};

type Status = c_int;

/// The CUDA runtime calls the test needs (`cuda_runtime_api.h`).
struct Cudart {
    _lib: DynLib,
    get_device_count: unsafe extern "C" fn(*mut c_int) -> Status,
    set_device: unsafe extern "C" fn(c_int) -> Status,
    malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> Status,
    memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> Status,
    stream_create: unsafe extern "C" fn(*mut *mut c_void) -> Status,
    stream_synchronize: unsafe extern "C" fn(*mut c_void) -> Status,
    stream_query: unsafe extern "C" fn(*mut c_void) -> Status,
    stream_wait_event: unsafe extern "C" fn(*mut c_void, *mut c_void, u32) -> Status,
    event_create: unsafe extern "C" fn(*mut *mut c_void) -> Status,
    event_record: unsafe extern "C" fn(*mut c_void, *mut c_void) -> Status,
    get_error_string: unsafe extern "C" fn(Status) -> *const c_char,
}

const H2D: c_int = 1;
const D2H: c_int = 2;
/// `cudaErrorNotReady`.
const NOT_READY: Status = 600;

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
            memcpy: sym!("cudaMemcpy"),
            stream_create: sym!("cudaStreamCreate"),
            stream_synchronize: sym!("cudaStreamSynchronize"),
            stream_query: sym!("cudaStreamQuery"),
            stream_wait_event: sym!("cudaStreamWaitEvent"),
            event_create: sym!("cudaEventCreate"),
            event_record: sym!("cudaEventRecord"),
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

    fn alloc(&self, bytes: usize) -> Result<*mut c_void, String> {
        let mut p = std::ptr::null_mut();
        // SAFETY: writes one pointer.
        self.ok("cudaMalloc", unsafe { (self.malloc)(&mut p, bytes) })?;
        Ok(p)
    }

    fn upload(&self, dst: *mut c_void, src: &[u8]) -> Result<(), String> {
        // SAFETY: dst was allocated with at least src.len() bytes by the caller.
        self.ok("cudaMemcpy H2D", unsafe { (self.memcpy)(dst, src.as_ptr().cast(), src.len(), H2D) })
    }

    fn download(&self, src: *const c_void, len: usize) -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; len];
        // SAFETY: src holds at least len bytes (the caller's allocation).
        self.ok("cudaMemcpy D2H", unsafe { (self.memcpy)(out.as_mut_ptr().cast(), src, len, D2H) })?;
        Ok(out)
    }

    fn stream(&self) -> Result<*mut c_void, String> {
        let mut s = std::ptr::null_mut();
        // SAFETY: writes one handle.
        self.ok("cudaStreamCreate", unsafe { (self.stream_create)(&mut s) })?;
        Ok(s)
    }

    fn sync(&self, s: *mut c_void) -> Result<(), String> {
        // SAFETY: a live stream.
        self.ok("cudaStreamSynchronize", unsafe { (self.stream_synchronize)(s) })
    }

    /// `to` waits for the work queued on `from` so far (an event between the streams).
    fn handoff(&self, from: *mut c_void, to: *mut c_void) -> Result<(), String> {
        let mut ev = std::ptr::null_mut();
        // SAFETY: plain CUDA calls on live handles.
        unsafe {
            self.ok("cudaEventCreate", (self.event_create)(&mut ev))?;
            self.ok("cudaEventRecord", (self.event_record)(ev, from))?;
            self.ok("cudaStreamWaitEvent", (self.stream_wait_event)(to, ev, 0))
        }
    }
}

fn bf16(x: f32) -> u16 {
    (x.to_bits() >> 16) as u16
}

fn f32s(v: impl Iterator<Item = f32>) -> Vec<u8> {
    v.flat_map(f32::to_le_bytes).collect()
}

fn read_f32(b: &[u8]) -> Vec<f32> {
    b.chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn read_bf16(b: &[u8]) -> Vec<f32> {
    b.chunks(2).map(|c| f32::from_bits(u32::from(u16::from_le_bytes([c[0], c[1]])) << 16)).collect()
}

/// Rows of a layer split into chunks, as the plans split M.
fn chunks(m: usize, n: usize) -> Vec<std::ops::Range<usize>> {
    let (base, extra) = (m / n, m % n);
    let mut start = 0;
    (0..n)
        .map(|i| {
            let len = base + usize::from(i < extra);
            let r = start..start + len;
            start += len;
            r
        })
        .collect()
}

fn check(what: &str, got: &[f32], want: impl Fn(usize) -> f32) -> Result<(), String> {
    let bad = got.iter().enumerate().filter(|(i, &g)| g != want(*i)).count();
    println!("  {what}: {} elements, {bad} mismatches", got.len());
    if bad > 0 {
        return Err(format!("{what}: {bad} mismatches"));
    }
    Ok(())
}

fn exchange_id(nccl: &Nccl, dir: &Path, rank: usize) -> Result<UniqueId, String> {
    let path = dir.join("unique_id");
    if rank == 0 {
        let id = nccl.unique_id().map_err(|e| e.to_string())?;
        std::fs::write(dir.join("unique_id.tmp"), id.to_bytes()).map_err(|e| e.to_string())?;
        std::fs::rename(dir.join("unique_id.tmp"), &path).map_err(|e| e.to_string())?;
        return Ok(id);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(b) = std::fs::read(&path) {
            let bytes: [u8; 128] = b.try_into().map_err(|_| "the id file is not 128 bytes".to_string())?;
            return Ok(UniqueId::from_bytes(bytes));
        }
        if Instant::now() > deadline {
            return Err("no unique id from rank 0".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn rank_main(rank: usize, nranks: usize, dir: &Path) -> Result<(), String> {
    let rt = Cudart::load()?;
    let nccl = Nccl::load_nccl().map_err(|e| e.to_string())?;
    let mut ndev: c_int = 0;
    // SAFETY: writes one int.
    rt.ok("cudaGetDeviceCount", unsafe { (rt.get_device_count)(&mut ndev) })?;
    if (ndev as usize) < nranks {
        return Err(format!("{nranks} ranks need {nranks} GPUs, this process sees {ndev}"));
    }
    // SAFETY: plain call.
    rt.ok("cudaSetDevice", unsafe { (rt.set_device)(rank as c_int) })?;
    let id = exchange_id(&nccl, dir, rank)?;
    let t = Instant::now();
    let comm: Communicator = nccl.init_rank(nranks, &id, rank).map_err(|e| e.to_string())?;
    println!(
        "rank {rank}: {} via {}, ncclCommInitRank in {:?}: count={:?} rank={:?} device={:?}",
        nccl.version().map_err(|e| e.to_string())?,
        nccl.library_path().display(),
        t.elapsed(),
        comm.count(),
        comm.rank(),
        comm.device()
    );
    let gemm_stream = rt.stream()?;
    let comm_stream = rt.stream()?;
    let (m, n) = (1000usize, 512usize);
    let ch = chunks(m, 4);
    let send = rt.alloc(nranks * m * n * 4)?;
    let recv = rt.alloc(nranks * m * n * 4)?;
    let err = |e: gemm_rocm::Error| e.to_string();

    // 1. The descriptor all-gather: 16 u64 words per rank.
    let words: Vec<u8> = (0..16u64).flat_map(|i| (i * 1000).to_le_bytes()).collect();
    rt.upload(send, &words)?;
    // SAFETY: 128 bytes in, 128 * nranks out, device buffers of this rank's GPU, synchronised below.
    unsafe { comm.all_gather(send, recv, 128, DataType::U8, comm_stream) }.map_err(err)?;
    rt.sync(comm_stream)?;
    let got = rt.download(recv, 128 * nranks)?;
    let same = got.chunks(128).all(|c| c == words.as_slice());
    println!("  descriptor all-gather: {} ranks agree: {same}", nranks);
    if !same {
        return Err("descriptor all-gather wrong".into());
    }

    // 2. Column plan with gather: per chunk, all-gather of rows x n bf16 on the comm stream
    //    after an event of the GEMM stream.
    let col = |r: usize, i: usize, j: usize| ((r * 7 + i * 3 + j) % 251) as f32;
    let shard: Vec<u8> = (0..m * n).flat_map(|e| bf16(col(rank, e / n, e % n)).to_le_bytes()).collect();
    rt.upload(send, &shard)?;
    for rows in &ch {
        rt.handoff(gemm_stream, comm_stream)?;
        let at = |p: *mut c_void, off: usize| p.cast::<u8>().wrapping_add(off).cast::<c_void>();
        // SAFETY: chunk rows of the send shard, nranks chunks in recv; alive until synchronised.
        unsafe {
            comm.all_gather(
                at(send, rows.start * n * 2),
                at(recv, nranks * rows.start * n * 2),
                rows.len() * n,
                DataType::Bf16,
                comm_stream,
            )
        }
        .map_err(err)?;
    }
    rt.sync(comm_stream)?;
    let got = read_bf16(&rt.download(recv, nranks * m * n * 2)?);
    check("column all-gather bf16, 4 chunks (overlap)", &got, |e| {
        // Chunk-major: chunk c's block of rank q.
        let mut off = e;
        for rows in &ch {
            let size = nranks * rows.len() * n;
            if off < size {
                let (q, inner) = (off / (rows.len() * n), off % (rows.len() * n));
                return col(q, rows.start + inner / n, inner % n);
            }
            off -= size;
        }
        f32::NAN
    })?;

    // 3. Row plan, all-reduce in place per chunk: f32 then bf16.
    let part = |r: usize, e: usize| ((r + 1) * (e % 13)) as f32;
    let sum = |e: usize| (0..nranks).map(|r| part(r, e)).sum::<f32>();
    rt.upload(send, &f32s((0..m * n).map(|e| part(rank, e))))?;
    for rows in &ch {
        rt.handoff(gemm_stream, comm_stream)?;
        let p = send.cast::<u8>().wrapping_add(rows.start * n * 4).cast::<c_void>();
        // SAFETY: in place on the chunk's rows.
        unsafe { comm.all_reduce(p, p, rows.len() * n, DataType::F32, RedOp::Sum, comm_stream) }.map_err(err)?;
    }
    rt.sync(comm_stream)?;
    check("row all-reduce f32, in place, 4 chunks", &read_f32(&rt.download(send, m * n * 4)?), sum)?;
    rt.upload(send, &(0..m * n).flat_map(|e| bf16(part(rank, e)).to_le_bytes()).collect::<Vec<u8>>())?;
    for rows in &ch {
        let p = send.cast::<u8>().wrapping_add(rows.start * n * 2).cast::<c_void>();
        // SAFETY: as above, bf16.
        unsafe { comm.all_reduce(p, p, rows.len() * n, DataType::Bf16, RedOp::Sum, gemm_stream) }.map_err(err)?;
    }
    rt.sync(gemm_stream)?;
    check("row all-reduce bf16 (output dtype), no overlap", &read_bf16(&rt.download(send, m * n * 2)?), sum)?;

    // 4. Row plan, reduce-scatter: blocks of `per` rows per rank, chunked within the blocks.
    let per = m.div_ceil(nranks);
    let subs = chunks(per, 4);
    let rs = |r: usize, row: usize, j: usize| ((r + 2) * ((row * 5 + j) % 17)) as f32;
    let mut host = vec![0u8; nranks * per * n * 4];
    for sub in &subs {
        for q in 0..nranks {
            for i in sub.clone() {
                let row = q * per + i;
                for j in 0..n {
                    let v = if row < m { rs(rank, row, j) } else { 0.0 };
                    let at = ((nranks * sub.start + q * sub.len() + (i - sub.start)) * n + j) * 4;
                    host[at..at + 4].copy_from_slice(&v.to_le_bytes());
                }
            }
        }
    }
    rt.upload(send, &host)?;
    for sub in &subs {
        let s = send.cast::<u8>().wrapping_add(nranks * sub.start * n * 4).cast::<c_void>();
        let r = recv.cast::<u8>().wrapping_add(sub.start * n * 4).cast::<c_void>();
        // SAFETY: nranks blocks of the chunk in, this rank's sub-rows out.
        unsafe { comm.reduce_scatter(s, r, sub.len() * n, DataType::F32, RedOp::Sum, comm_stream) }.map_err(err)?;
    }
    rt.sync(comm_stream)?;
    let mine = (rank * per).min(m)..((rank + 1) * per).min(m);
    let got = read_f32(&rt.download(recv, mine.len() * n * 4)?);
    check("row reduce-scatter f32, 4 chunks", &got, |e| {
        let (row, j) = (mine.start + e / n, e % n);
        (0..nranks).map(|r| rs(r, row, j)).sum()
    })?;
    comm.async_error().map_err(err)?;

    // 5. A peer gone: rank 1 leaves without calling; rank 0's all-reduce cannot finish. Watch
    //    it against a timeout, then abort.
    if rank != 0 {
        println!("rank {rank}: leaving without the last collective");
        std::process::exit(0);
    }
    // SAFETY: as above.
    unsafe { comm.all_reduce(send, send, n, DataType::F32, RedOp::Sum, comm_stream) }.map_err(err)?;
    let (start, timeout) = (Instant::now(), Duration::from_secs(3));
    let outcome = loop {
        // SAFETY: a live stream.
        let q = unsafe { (rt.stream_query)(comm_stream) };
        if q == 0 {
            break "finished (unexpected: its peer was gone)".to_string();
        }
        if q != NOT_READY {
            break format!("stream error {q}");
        }
        if let Err(e) = comm.async_error() {
            break format!("async error: {e}");
        }
        if start.elapsed() > timeout {
            break format!("timed out after {:?}", start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let t = Instant::now();
    let aborted = comm.abort();
    println!("rank 0: all-reduce with rank 1 gone: {outcome}; ncclCommAbort -> {aborted:?} in {:?}", t.elapsed());
    if !outcome.starts_with("timed out") && !outcome.starts_with("async") {
        return Err(format!("a peer's death went unnoticed: {outcome}"));
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse::<usize>().ok())
    };
    if let (Some(rank), Some(nranks)) = (arg("--rank"), arg("--ranks")) {
        let dir = PathBuf::from(std::env::var("NCCL_RANKS_DIR").unwrap_or_default());
        match rank_main(rank, nranks, &dir) {
            Ok(()) => println!("rank {rank}: OK"),
            Err(e) => {
                eprintln!("rank {rank}: FAILED: {e}");
                std::process::exit(1);
            }
        }
        return;
    }
    let nranks = arg("--ranks").unwrap_or(2);
    let dir = std::env::temp_dir().join(format!("nccl-ranks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let exe = std::env::current_exe().expect("own path");
    println!("starting {nranks} processes, one per GPU; the unique id goes through {}", dir.display());
    let mut children: Vec<_> = (0..nranks)
        .map(|r| {
            Command::new(&exe)
                .args(["--rank", &r.to_string(), "--ranks", &nranks.to_string()])
                .env("NCCL_RANKS_DIR", &dir)
                .spawn()
                .expect("start a rank")
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut codes = vec![None; nranks];
    while codes.iter().any(Option::is_none) {
        for (c, code) in children.iter_mut().zip(codes.iter_mut()) {
            if code.is_none() {
                if let Ok(Some(s)) = c.try_wait() {
                    *code = Some(s.code().unwrap_or(-1));
                }
            }
        }
        if Instant::now() > deadline {
            for (c, code) in children.iter_mut().zip(codes.iter_mut()) {
                if code.is_none() {
                    let _ = c.kill();
                    *code = Some(-9);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("exit codes: {codes:?}");
    if codes.iter().all(|c| *c == Some(0)) {
        println!("NCCL RANKS OK");
    } else {
        println!("NCCL RANKS FAILED");
        std::process::exit(1);
    }
}
