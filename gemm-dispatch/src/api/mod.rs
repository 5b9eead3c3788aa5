//! What callers hold: the [`Context`](context::Context) and its entry points (single GEMMs,
//! strided and grouped batches, fused epilogues, fp8 scales), GPUs and their device memory
//! ([`device`]), tensor parallelism over a context's devices ([`parallel`]), batches that run in
//! the background ([`submit`]) and the ndarray extension ([`ndarray_ext`]). Every entry point
//! validates before it touches memory, then hands the call to a backend, which plans it.

pub mod context;
pub mod device;
pub mod ndarray_ext;
pub mod parallel;
pub mod submit;
