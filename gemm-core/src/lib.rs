//! gemm-core
