//! `libgemm_emu_hip.so`: an emulated HIP runtime and RCCL over gemm-emu devices.
//!
//! The library exports the HIP and RCCL C functions the GEMM library's bindings (gemm-rocm)
//! resolve, with the signatures of `hip_runtime_api.h` and `nccl.h`. Point
//! `GEMM_HIP_LIBRARY` and `GEMM_RCCL_LIBRARY` at it and the HIP backend's real code (streams,
//! events, pinned double buffers, module loading, launches, collectives) runs on emulated
//! MI300X/MI355X devices: kernels execute in the gemm-emu emulator with its race and hazard
//! checkers on. It answers to the HIP and NCCL documentation, not to what our backend happens
//! to do: it is a checker of that code. See the README for the spec keys, the control API
//! and every place where the documentation is silent and the emulator chose.
//!
//! State is per process: one emulated machine, configured by `GEMM_EMU_HIP` on first use or
//! by `gemm_emu_hip_configure`. Tests that configure differently must serialise.
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod config;
pub mod control;
pub mod device;
pub mod error;
pub mod hip_api;
pub mod host;
pub mod memory;
pub mod module;
pub mod nccl;
pub mod nccl_api;
pub mod nccl_tcp;
pub mod runtime;
pub mod stream;

use std::path::PathBuf;

/// File name of the shared library.
pub const LIBRARY_FILE: &str = "libgemm_emu_hip.so";

/// Finds `libgemm_emu_hip.so` next to the running executable or in its parent directory
/// (test binaries live in `target/<profile>/deps`, the library in `target/<profile>` and
/// `deps`).
pub fn library_path() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let found = [Some(dir), dir.parent()].into_iter().flatten().map(|d| d.join(LIBRARY_FILE)).find(|p| p.is_file());
    found
}
