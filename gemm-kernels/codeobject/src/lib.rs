//! gemm-codeobject
