//! gemm-compiler
