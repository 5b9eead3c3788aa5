//! The vocabulary of a call beyond `gemm-core`'s problem: the options a GEMM may carry (a fused
//! [`epilogue`], fp8 [`scales`]), their validation and their formulas, which every backend
//! computes the same way.

pub mod epilogue;
pub mod scales;
