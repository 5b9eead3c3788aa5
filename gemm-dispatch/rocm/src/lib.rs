//! gemm-rocm
