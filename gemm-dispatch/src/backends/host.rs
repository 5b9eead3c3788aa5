//! The host backend: the CPU as a device, through gemm-host.

use crate::backends::{typed, typed_mut, Backend, DeviceInfo, DeviceKind};
use crate::error::Result;
use gemm_core::{bf16, f16, Element, Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz, GemmProblem, Operand};

/// The CPU, running GEMMs on `threads` worker threads.
#[derive(Debug)]
pub struct HostBackend {
    index: usize,
    threads: usize,
}

impl HostBackend {
    /// Host device number `index` using `threads` threads (at least 1).
    pub fn new(index: usize, threads: usize) -> Self {
        Self { index, threads: threads.max(1) }
    }

    fn run<A: Element, B: Element, C: Element>(&self, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> Result<()> {
        let a = typed::<A>(a, Operand::A, p.a_type)?;
        let b = typed::<B>(b, Operand::B, p.b_type)?;
        let c = typed_mut::<C>(c, Operand::C, p.c_type)?;
        let (av, bv, cv) = p.views(a, b, c)?;
        gemm_host::gemm(p.alpha, av, bv, p.beta, cv, self.threads)?;
        Ok(())
    }
}

/// The CPU's model name from /proc/cpuinfo, if readable; read once per process (it does not
/// change, and reading it costs tens of microseconds, more than a tiny GEMM).
fn cpu_model() -> &'static str {
    static MODEL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MODEL.get_or_init(read_cpu_model)
}

fn read_cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

impl Backend for HostBackend {
    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            name: format!("host:{}", self.index),
            kind: DeviceKind::Host,
            description: format!("{} ({} threads)", cpu_model(), self.threads),
            compute_units: self.threads,
            memory_bytes: 0,
        }
    }

    fn gemm(&self, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> Result<()> {
        // One monomorphic path per supported dtype combination; the rest are refused by
        // `check_dtypes` inside `views` before this match could be reached with them.
        macro_rules! combos {
            ($( ($a:ty, $b:ty, $c:ty) ),* $(,)?) => {
                match (p.a_type, p.b_type, p.c_type) {
                    $( (<$a as Element>::DTYPE, <$b as Element>::DTYPE, <$c as Element>::DTYPE) => self.run::<$a, $b, $c>(p, a, b, c), )*
                    (a_t, b_t, c_t) => {
                        gemm_core::problem::check_dtypes(a_t, b_t, c_t)?;
                        Err(crate::Error::Unsupported { device: self.info().name, why: format!("{a_t} x {b_t} -> {c_t}") })
                    }
                }
            };
        }
        combos!(
            (f32, f32, f32),
            (f16, f16, f16),
            (f16, f16, f32),
            (bf16, bf16, bf16),
            (bf16, bf16, f32),
            (Fp8E4M3Fnuz, Fp8E4M3Fnuz, f32),
            (Fp8E4M3Fnuz, Fp8E4M3Fnuz, f16),
            (Fp8E4M3Fnuz, Fp8E4M3Fnuz, bf16),
            (Fp8E4M3Fnuz, Fp8E5M2Fnuz, f32),
            (Fp8E4M3Fnuz, Fp8E5M2Fnuz, f16),
            (Fp8E4M3Fnuz, Fp8E5M2Fnuz, bf16),
            (Fp8E5M2Fnuz, Fp8E4M3Fnuz, f32),
            (Fp8E5M2Fnuz, Fp8E4M3Fnuz, f16),
            (Fp8E5M2Fnuz, Fp8E4M3Fnuz, bf16),
            (Fp8E5M2Fnuz, Fp8E5M2Fnuz, f32),
            (Fp8E5M2Fnuz, Fp8E5M2Fnuz, f16),
            (Fp8E5M2Fnuz, Fp8E5M2Fnuz, bf16),
            (Fp8E4M3, Fp8E4M3, f32),
            (Fp8E4M3, Fp8E4M3, f16),
            (Fp8E4M3, Fp8E4M3, bf16),
            (Fp8E4M3, Fp8E5M2, f32),
            (Fp8E4M3, Fp8E5M2, f16),
            (Fp8E4M3, Fp8E5M2, bf16),
            (Fp8E5M2, Fp8E4M3, f32),
            (Fp8E5M2, Fp8E4M3, f16),
            (Fp8E5M2, Fp8E4M3, bf16),
            (Fp8E5M2, Fp8E5M2, f32),
            (Fp8E5M2, Fp8E5M2, f16),
            (Fp8E5M2, Fp8E5M2, bf16),
        )
    }

    fn gemm_block_scaled(
        &self,
        p: &gemm_core::BlockScaledProblem,
        bufs: crate::backends::block_scaled::BlockScaledBuffers<'_>,
    ) -> Result<()> {
        crate::backends::block_scaled::host_block_scaled(p, bufs, self.threads)
    }

    fn estimate_seconds(&self, p: &GemmProblem) -> f64 {
        // About 60 GFLOP/s per Zen4 core for f32; good enough to balance batches.
        p.flops() / (60e9 * self.threads as f64) + 2e-6
    }
}
