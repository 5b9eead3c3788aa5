//! gemm-host: the CPU GEMM engine.
