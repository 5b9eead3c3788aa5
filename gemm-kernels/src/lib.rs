//! gemm-kernels
