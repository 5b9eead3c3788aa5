//! What a device must do: run one validated GEMM on byte buffers.
//!
//! Buffers cross this boundary as bytes tagged by the problem's dtypes, which is what a GPU
//! backend copies anyway and what the C ABI hands us; the host backend views them as typed slices
//! again (checked by `bytemuck`, so a misaligned buffer is an error, not undefined behaviour).
//!
//! The devices: [`host`] (the CPU through gemm-host, with [`host_ops`] for epilogues and fp8
//! scales), [`hip`] (AMD GPUs through `libamdhip64`, loaded at run time), [`emu`] (GPUs
//! emulated on the CPU; the `emu` cargo feature), and the [`collective`]s tensor parallelism
//! combines their results with. A device asks [`crate::plan`] what to launch and executes it.

pub mod block_scaled;
pub mod collective;
#[cfg(feature = "emu")]
pub mod emu;
pub mod hip;
pub mod host;
pub mod host_ops;

use crate::error::{Error, Result};
use gemm_core::{Arch, GemmProblem, Operand};
use std::sync::Arc;

/// The kind of a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// The CPU, through gemm-host.
    Host,
    /// A GPU through HIP.
    Hip { ordinal: usize, arch: Arch },
    /// A GPU emulated on the CPU.
    Emu { arch: Arch },
    /// Anything else (test doubles, future backends).
    Other(String),
}

/// What `gemm devices` and the C ABI report about a device.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    /// Short name such as `host:0`, `hip:1`, `emu:gfx950`.
    pub name: String,
    pub kind: DeviceKind,
    /// Human-readable description (CPU model, GPU name).
    pub description: String,
    /// Worker threads (host) or compute units (GPU).
    pub compute_units: usize,
    /// Bytes of memory the device owns (0 for the host, which shares system memory).
    pub memory_bytes: u64,
}

/// A device that runs GEMMs.
pub trait Backend: Send + Sync {
    fn info(&self) -> DeviceInfo;

    /// Runs one GEMM. `p` has been validated against the buffer lengths (in elements of its
    /// dtypes) and the buffers hold exactly the spans the problem needs or more.
    fn gemm(&self, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> Result<()>;

    /// Runs several jobs, one result per job in order. Backends that can overlap the copies of
    /// one job with the kernel of another (GPU streams with double-buffered workspaces) override
    /// this; the default runs them one after another.
    fn gemm_many(&self, jobs: &mut [Job<'_>]) -> Vec<Result<()>> {
        jobs.iter_mut().map(|j| self.gemm(&j.problem, j.a, j.b, j.c)).collect()
    }

    /// One block-scaled GEMM (MX or block fp8, [`gemm_core::block_scaled`]) on host memory.
    /// The host computes it ([`block_scaled::host_block_scaled`]); emulated and HIP GPUs check
    /// it, stage the buffers and hand the job to [`block_scaled::run_block_scaled`]. Bad input is
    /// an error with Y untouched. The default: this device runs none (`Unsupported`, so a
    /// context tries its next device).
    fn gemm_block_scaled(
        &self,
        p: &gemm_core::BlockScaledProblem,
        bufs: block_scaled::BlockScaledBuffers<'_>,
    ) -> Result<()> {
        let _ = (p, bufs);
        Err(Error::Unsupported { device: self.info().name, why: "this device runs no block-scaled GEMMs".into() })
    }

    /// How many jobs the scheduler hands [`Backend::gemm_many`] at once (1 = no overlap).
    fn jobs_per_call(&self) -> usize {
        1
    }

    /// A rough cost of `p` on this device in seconds, used to split batches. The default is a
    /// flop count at 1 TFLOP/s plus a fixed overhead.
    fn estimate_seconds(&self, p: &GemmProblem) -> f64 {
        p.flops() * 1e-12 + 1e-6
    }

    /// This device as its own type, for what only one kind of device can do (GEMMs on a HIP
    /// GPU's device memory and the device-resident tensor-parallel path:
    /// [`hip::as_hip`] downcasts it). `None` for devices that offer nothing beyond this trait.
    fn as_any(self: Arc<Self>) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        None
    }
}

/// Views a byte buffer as elements of `T`; refuses misaligned or ragged buffers.
/// An empty buffer is always accepted: a zero-sized operand has no address to align.
pub fn typed<T: bytemuck::Pod>(bytes: &[u8], operand: Operand, dtype: gemm_core::DType) -> Result<&[T]> {
    if bytes.is_empty() {
        return Ok(&[]);
    }
    bytemuck::try_cast_slice(bytes).map_err(|_| Error::Misaligned { operand, dtype })
}

/// Mutable version of [`typed`].
pub fn typed_mut<T: bytemuck::Pod>(bytes: &mut [u8], operand: Operand, dtype: gemm_core::DType) -> Result<&mut [T]> {
    if bytes.is_empty() {
        return Ok(&mut []);
    }
    bytemuck::try_cast_slice_mut(bytes).map_err(|_| Error::Misaligned { operand, dtype })
}

/// One GEMM on byte buffers, validated by the caller.
pub struct Job<'a> {
    pub problem: GemmProblem,
    pub a: &'a [u8],
    pub b: &'a [u8],
    pub c: &'a mut [u8],
}

/// Validates a problem against byte buffers: lengths in whole elements, enough of them.
pub fn validate_bytes(p: &GemmProblem, a: usize, b: usize, c: usize) -> Result<()> {
    p.validate()?;
    let mut elems = [0usize; 3];
    for (slot, (operand, bytes)) in [(Operand::A, a), (Operand::B, b), (Operand::C, c)].into_iter().enumerate() {
        let size = p.dtype(operand).size_bytes();
        elems[slot] = bytes / size;
    }
    p.validate_buffers(elems[0], elems[1], elems[2])?;
    Ok(())
}
