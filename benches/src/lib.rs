//! Benchmarks of the host GEMM engine (`gemm-host`) side by side with OpenBLAS, `matrixmultiply`
//! and ndarray's `dot`, shared by the criterion bench (`benches/gemm.rs`) and the `gemm-bench`
//! binary. Every implementation computes the same row-major `C = A * B` on the same data, so the
//! ratios compare like with like.
//!
//! bf16: Debian's OpenBLAS exports no `cblas_sbgemm`, and `matrixmultiply`/ndarray have no bf16,
//! so the bf16 rows compare `gemm-host` on bf16 inputs (f32 output) with the baselines' f32 GEMM
//! on the same values widened to f32: what a user without a bf16 GEMM would run.

use gemm_core::{bf16, MatMut, MatRef, Operand};

pub mod dispatch;
use gemm_host::dispatch::Path;
use gemm_host::{KernelChoice, Options};
use rand::{Rng, SeedableRng};

pub mod openblas {
    //! The two OpenBLAS entry points the benchmarks need, declared by hand (linked by `build.rs`).
    use std::os::raw::c_int;

    const ROW_MAJOR: c_int = 101;
    const NO_TRANS: c_int = 111;

    extern "C" {
        fn cblas_sgemm(
            order: c_int,
            trans_a: c_int,
            trans_b: c_int,
            m: c_int,
            n: c_int,
            k: c_int,
            alpha: f32,
            a: *const f32,
            lda: c_int,
            b: *const f32,
            ldb: c_int,
            beta: f32,
            c: *mut f32,
            ldc: c_int,
        );
        fn openblas_set_num_threads(n: c_int);
        fn openblas_get_corename() -> *const std::os::raw::c_char;
    }

    /// The kernel family OpenBLAS picked for this CPU (a build that does not know the CPU falls
    /// back to an old one: Debian's 0.3.21 runs `Prescott` SSE3 kernels on some AMX Xeons).
    pub fn core_name() -> String {
        // SAFETY: returns a pointer to a static NUL-terminated string owned by OpenBLAS (or null).
        let p = unsafe { openblas_get_corename() };
        if p.is_null() {
            return "unknown".into();
        }
        // SAFETY: non-null, NUL-terminated and static (OpenBLAS's corename table).
        unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// Sets OpenBLAS's worker count for the following calls.
    pub fn set_threads(n: usize) {
        let n = c_int::try_from(n.max(1)).expect("thread count fits a C int");
        // SAFETY: plain setter of OpenBLAS's global thread count; takes no pointers.
        unsafe { openblas_set_num_threads(n) }
    }

    /// Row-major `C = A * B` (`A: m x k`, `B: k x n`, tight leading dimensions).
    pub fn sgemm(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
        assert!(a.len() >= m * k && b.len() >= k * n && c.len() >= m * n, "buffers too small");
        let dim = |x: usize| c_int::try_from(x.max(1)).expect("dimension fits a C int");
        // SAFETY: the slices hold m*k, k*n and m*n elements (asserted above), which is what a
        // row-major sgemm with lda = k, ldb = n, ldc = m reads and writes; `c` is borrowed mutably
        // so it aliases neither input.
        unsafe {
            cblas_sgemm(
                ROW_MAJOR,
                NO_TRANS,
                NO_TRANS,
                dim(m),
                dim(n),
                dim(k),
                1.0,
                a.as_ptr(),
                dim(k),
                b.as_ptr(),
                dim(n),
                0.0,
                c.as_mut_ptr(),
                dim(n),
            )
        }
    }
}

/// Element type a benchmark group measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    F32,
    Bf16,
}

impl Dtype {
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::Bf16 => "bf16",
        }
    }
}

/// The implementations compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Impl {
    /// `gemm_host::gemm` on the group's dtype (bf16: vdpbf16ps, f32 output).
    Host,
    /// `gemm_host` with `KernelChoice::F32Panels`: its own AVX-512 f32 kernel (bf16: widened
    /// panels, the fallback without AVX512_BF16).
    HostF32Panels,
    /// `gemm_host` on its other fast path: faer for f32, `vdpbf16ps` for bf16 (not measured where
    /// the CPU lacks it).
    HostAlt,
    OpenBlas,
    MatrixMultiply,
    Ndarray,
}

impl Impl {
    pub const ALL: [Impl; 6] =
        [Impl::Host, Impl::HostF32Panels, Impl::HostAlt, Impl::OpenBlas, Impl::MatrixMultiply, Impl::Ndarray];

    pub fn name(self, dtype: Dtype) -> &'static str {
        match (self, dtype) {
            (Impl::Host, Dtype::F32) => "gemm-host",
            (Impl::Host, Dtype::Bf16) => "gemm-host bf16",
            (Impl::HostF32Panels, Dtype::F32) => "gemm-host own f32 kernel",
            (Impl::HostF32Panels, Dtype::Bf16) => "gemm-host bf16 fallback",
            (Impl::HostAlt, Dtype::F32) => "gemm-host faer",
            (Impl::HostAlt, Dtype::Bf16) => "gemm-host bf16 vdpbf16ps",
            (Impl::OpenBlas, Dtype::F32) => "openblas",
            (Impl::OpenBlas, Dtype::Bf16) => "openblas sgemm (widened)",
            (Impl::MatrixMultiply, Dtype::F32) => "matrixmultiply",
            (Impl::MatrixMultiply, Dtype::Bf16) => "matrixmultiply (widened)",
            (Impl::Ndarray, Dtype::F32) => "ndarray dot",
            (Impl::Ndarray, Dtype::Bf16) => "ndarray dot (widened)",
        }
    }
}

/// A square (or any) problem's inputs in every form the implementations take, and C.
pub struct Problem {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a_bf16: Vec<bf16>,
    pub b_bf16: Vec<bf16>,
    /// The bf16 values widened (so f32 and bf16 runs multiply the same numbers).
    pub a: ndarray::Array2<f32>,
    pub b: ndarray::Array2<f32>,
    pub c: ndarray::Array2<f32>,
}

impl Problem {
    pub fn new(m: usize, n: usize, k: usize, seed: u64) -> Self {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let a_bf16: Vec<bf16> = (0..m * k).map(|_| bf16::from_f32(rng.gen_range(-1.0..1.0))).collect();
        let b_bf16: Vec<bf16> = (0..k * n).map(|_| bf16::from_f32(rng.gen_range(-1.0..1.0))).collect();
        let widen = |v: &[bf16], r, c| {
            ndarray::Array2::from_shape_vec((r, c), v.iter().map(|x| x.to_f32()).collect()).expect("shape")
        };
        Self {
            m,
            n,
            k,
            a: widen(&a_bf16, m, k),
            b: widen(&b_bf16, k, n),
            a_bf16,
            b_bf16,
            c: ndarray::Array2::zeros((m, n)),
        }
    }

    /// Floating-point operations of one GEMM.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// Runs one GEMM with `imp` into `self.c`; an error where the CPU lacks the path `imp` forces.
    pub fn run(&mut self, imp: Impl, dtype: Dtype, threads: usize) -> Result<(), gemm_core::Error> {
        let (m, n, k) = (self.m, self.n, self.k);
        let a = self.a.as_slice().expect("standard layout");
        let b = self.b.as_slice().expect("standard layout");
        match imp {
            Impl::Host | Impl::HostF32Panels | Impl::HostAlt => {
                let kernel = match (imp, dtype) {
                    (Impl::Host, _) => KernelChoice::Auto,
                    (Impl::HostAlt, Dtype::F32) => KernelChoice::Path(Path::Faer),
                    (Impl::HostAlt, Dtype::Bf16) => KernelChoice::Path(Path::Avx512Bf16),
                    _ => KernelChoice::F32Panels,
                };
                let opts = Options { threads, kernel };
                let c = MatMut::new(self.c.as_slice_mut().expect("standard layout"), m, n, n, 1, Operand::C)
                    .expect("C view");
                match dtype {
                    Dtype::F32 => {
                        let av = MatRef::new(a, m, k, k, 1, Operand::A).expect("A view");
                        let bv = MatRef::new(b, k, n, n, 1, Operand::B).expect("B view");
                        gemm_host::gemm_with(1.0, av, bv, 0.0, c, &opts)?;
                    }
                    Dtype::Bf16 => {
                        let av = MatRef::new(&self.a_bf16, m, k, k, 1, Operand::A).expect("A view");
                        let bv = MatRef::new(&self.b_bf16, k, n, n, 1, Operand::B).expect("B view");
                        gemm_host::gemm_with(1.0, av, bv, 0.0, c, &opts)?;
                    }
                }
            }
            Impl::OpenBlas => openblas::sgemm(m, n, k, a, b, self.c.as_slice_mut().expect("standard layout")),
            Impl::MatrixMultiply => {
                let c = self.c.as_slice_mut().expect("standard layout");
                let (k_, n_) = (k as isize, n as isize);
                // SAFETY: row-major m x k, k x n and m x n arrays with tight strides; C is a
                // distinct, mutably borrowed allocation.
                unsafe {
                    matrixmultiply::sgemm(
                        m,
                        k,
                        n,
                        1.0,
                        a.as_ptr(),
                        k_,
                        1,
                        b.as_ptr(),
                        n_,
                        1,
                        0.0,
                        c.as_mut_ptr(),
                        n_,
                        1,
                    )
                };
            }
            Impl::Ndarray => self.c = self.a.dot(&self.b),
        }
        Ok(())
    }
}

/// Sets every baseline's thread count (OpenBLAS now; `matrixmultiply`, which ndarray's `dot`
/// uses too, reads `MATMUL_NUM_THREADS` once, so call this before its first GEMM).
pub fn set_threads(threads: usize) {
    openblas::set_threads(threads);
    std::env::set_var("MATMUL_NUM_THREADS", threads.max(1).to_string());
}

/// The CPU's model name from /proc/cpuinfo (the architecture's name where that is unreadable).
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}
