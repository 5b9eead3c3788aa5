//! Shared helpers: the library is driven only through dlopen (gemm-rocm and the control API),
//! like any program using it; one process shares one emulated machine, so every test holds
//! [`serial`] and configures the machine first.
#![allow(dead_code)]

use std::ffi::{c_char, c_int, CString};
use std::sync::{Mutex, MutexGuard, OnceLock};

use gemm_core::{DType, GemmProblem, Layout};
use gemm_rocm::hip::{Device, Hip, KernelArgs, LaunchConfig};
use gemm_rocm::nccl::Nccl;

static SERIAL: Mutex<()> = Mutex::new(());

/// Serialises the tests of one binary (they share the process-wide machine).
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn path() -> std::path::PathBuf {
    gemm_emu_hip::library_path().expect("libgemm_emu_hip.so next to the test binary")
}

fn control() -> &'static libloading::Library {
    static LIB: OnceLock<libloading::Library> = OnceLock::new();
    // SAFETY: the library's initialisers are Rust statics; loading it runs no foreign code.
    LIB.get_or_init(|| unsafe { libloading::Library::new(path()) }.expect("dlopen"))
}

pub fn hip() -> Hip {
    static HIP: OnceLock<Hip> = OnceLock::new();
    HIP.get_or_init(|| Hip::load_from(path()).expect("load")).clone()
}

pub fn nccl() -> Nccl {
    static NCCL: OnceLock<Nccl> = OnceLock::new();
    NCCL.get_or_init(|| Nccl::load_from(path()).expect("load")).clone()
}

/// `gemm_emu_hip_configure`; returns its status.
pub fn try_configure(spec: &str) -> c_int {
    let s = CString::new(spec).unwrap();
    // SAFETY: the symbol has this signature (the control API).
    unsafe {
        let f = control().get::<unsafe extern "C" fn(*const c_char) -> c_int>(b"gemm_emu_hip_configure\0").unwrap();
        f(s.as_ptr())
    }
}

/// Configures the machine, panicking on failure; also resets the thread's current device.
pub fn configure(spec: &str) {
    assert_eq!(try_configure(spec), 0, "configure({spec:?})");
    hip().set_device(0).ok();
}

pub fn inject(device: i32, op: &str, after: u64) -> c_int {
    let s = CString::new(op).unwrap();
    // SAFETY: control API signature.
    unsafe {
        let f = control()
            .get::<unsafe extern "C" fn(c_int, *const c_char, u64) -> c_int>(b"gemm_emu_hip_inject_fault\0")
            .unwrap();
        f(device, s.as_ptr(), after)
    }
}

pub fn counter(device: i32, name: &str) -> u64 {
    let s = CString::new(name).unwrap();
    // SAFETY: control API signature.
    unsafe {
        let f = control().get::<unsafe extern "C" fn(c_int, *const c_char) -> u64>(b"gemm_emu_hip_counter\0").unwrap();
        f(device, s.as_ptr())
    }
}

pub fn findings(device: i32) -> String {
    let mut buf = vec![0u8; 4096];
    // SAFETY: control API signature; the buffer holds 4096 bytes.
    let n = unsafe {
        let f = control()
            .get::<unsafe extern "C" fn(c_int, *mut c_char, usize) -> c_int>(b"gemm_emu_hip_last_findings\0")
            .unwrap();
        f(device, buf.as_mut_ptr().cast(), buf.len())
    };
    assert!(n >= 0);
    let end = buf.iter().position(|&b| b == 0).unwrap();
    buf.truncate(end);
    String::from_utf8(buf).unwrap()
}

/// The `hipError_t` of a failed gemm-rocm call.
pub fn code<T: std::fmt::Debug>(r: gemm_rocm::Result<T>) -> i32 {
    match r {
        Err(gemm_rocm::Error::Hip(e)) => e.code,
        other => panic!("expected a HIP error, got {other:?}"),
    }
}

/// A catalogue kernel for `arch` with 16-bit inputs, non-transposed operands.
pub fn kernel_for(arch: gemm_core::Arch) -> &'static gemm_kernels::KernelEntry {
    gemm_kernels::for_arch(arch)
        .find(|e| e.a_type == DType::F16 && e.c_type == DType::F32 && e.trans_a == e.trans_b)
        .or_else(|| gemm_kernels::for_arch(arch).find(|e| e.a_type == DType::F16))
        .expect("an f16 kernel in the catalogue")
}

/// A column-major GEMM of the entry's configuration with small-integer inputs (exact in every
/// type), buffers on `device`.
pub struct Gemm {
    pub entry: &'static gemm_kernels::KernelEntry,
    pub problem: GemmProblem,
    pub a: Vec<half::f16>,
    pub b: Vec<half::f16>,
    pub expected: Vec<f32>,
}

impl Gemm {
    pub fn new(entry: &'static gemm_kernels::KernelEntry, m: usize, n: usize, k: usize, seed: u64) -> Self {
        let ld = |x: usize| x.next_multiple_of(entry.align_elems.max(1) as usize);
        let p = GemmProblem::new(m, n, k)
            .with_layout(Layout::ColMajor)
            .with_transposes(entry.trans_a, entry.trans_b)
            .with_dtypes(entry.a_type, entry.b_type, DType::F32);
        let p = p.with_leading_dims(ld(p.lda), ld(p.ldb), p.ldc);
        let (a_len, b_len) = (
            p.lda * if entry.trans_a == gemm_core::Transpose::No { k } else { m },
            p.ldb * if entry.trans_b == gemm_core::Transpose::No { n } else { k },
        );
        let val = |i: usize| {
            half::f16::from_f32((((i as u64).wrapping_mul(2654435761).wrapping_add(seed) >> 7) % 5) as f32 - 2.0)
        };
        let a: Vec<_> = (0..a_len).map(val).collect();
        let b: Vec<_> = (0..b_len).map(|i| val(i + 7919)).collect();
        let mut expected = vec![0f32; p.ldc * n];
        gemm_core::reference::gemm(&p, &a, &b, &mut expected).unwrap();
        Self { entry, problem: p, a, b, expected }
    }

    pub fn c_len(&self) -> usize {
        self.problem.ldc * self.problem.n
    }

    /// Kernel arguments for buffers at these addresses.
    pub fn args(&self, a: u64, b: u64, c: u64) -> KernelArgs {
        let p = &self.problem;
        let mut bytes = vec![0u8; self.entry.kernarg_size as usize];
        for arg in self.entry.kernarg {
            let v: Vec<u8> = match arg.name {
                "a" => a.to_le_bytes().to_vec(),
                "b" => b.to_le_bytes().to_vec(),
                "c" => c.to_le_bytes().to_vec(),
                "m" => (p.m as u32).to_le_bytes().to_vec(),
                "n" => (p.n as u32).to_le_bytes().to_vec(),
                "k" => (p.k as u32).to_le_bytes().to_vec(),
                "lda" => (p.lda as u32).to_le_bytes().to_vec(),
                "ldb" => (p.ldb as u32).to_le_bytes().to_vec(),
                "ldc" => (p.ldc as u32).to_le_bytes().to_vec(),
                "alpha" => 1f32.to_le_bytes().to_vec(),
                "beta" => 0f32.to_le_bytes().to_vec(),
                other => panic!("unknown argument {other}"),
            };
            bytes[arg.offset as usize..][..v.len()].copy_from_slice(&v);
        }
        let mut k = KernelArgs::new();
        for chunk in bytes.chunks(4) {
            k.push_u32(u32::from_le_bytes(chunk.try_into().unwrap()));
        }
        k
    }

    pub fn launch_config(&self) -> LaunchConfig {
        let (grid, block) = self.entry.launch(self.problem.m as u32, self.problem.n as u32);
        LaunchConfig { grid, block, shared_mem_bytes: 0 }
    }
}

/// Uploads and allocates the GEMM's buffers on `dev`: (a, b, c).
pub fn buffers(dev: &Device, g: &Gemm) -> [gemm_rocm::hip::DeviceBuffer; 3] {
    let mut a = dev.alloc(g.a.len() * 2).unwrap();
    a.write(0, &g.a).unwrap();
    let mut b = dev.alloc(g.b.len() * 2).unwrap();
    b.write(0, &g.b).unwrap();
    let c = dev.alloc(g.c_len() * 4).unwrap();
    [a, b, c]
}
