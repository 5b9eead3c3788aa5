//! gemm-isa
