//! `gemm-kernels`: the catalogue of GPU GEMM kernels.
//!
//! Each entry is a kernel compiled at build time (by the compiler in `gemm-kernels/compiler`, run
//! from `build.rs`) into a gfx942 or gfx950 code object, with the facts the runtime needs to pick
//! and launch it. The compiler has not landed yet, so the catalogue is empty: [`catalogue`]
//! returns no entries and every GEMM runs on the host backend.

use gemm_core::{Arch, DType};

/// One compiled kernel and what it supports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelEntry {
    /// Symbol name in the code object.
    pub name: &'static str,
    pub arch: Arch,
    pub a_type: DType,
    pub b_type: DType,
    pub c_type: DType,
    /// Workgroup tile `(M, N, K)`.
    pub tile: (u32, u32, u32),
    pub waves: u32,
    pub stages: u32,
    /// Schedule name (e.g. `pipelined`, `pingpong8`).
    pub schedule: &'static str,
    /// The code object (ELF) holding the kernel.
    pub code_object: &'static [u8],
}

/// Every kernel built into this library.
pub fn catalogue() -> &'static [KernelEntry] {
    &[]
}

/// The kernels for one architecture.
pub fn for_arch(arch: Arch) -> impl Iterator<Item = &'static KernelEntry> {
    catalogue().iter().filter(move |k| k.arch == arch)
}
