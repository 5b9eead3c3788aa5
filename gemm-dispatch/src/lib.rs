//! gemm-dispatch
