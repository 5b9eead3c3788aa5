//! gemm-emu
