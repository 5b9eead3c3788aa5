//! `gemm-dispatch`: the runtime of the AMD GEMM library, what a Rust program, the C ABI and an
//! inference pipeline link.
//!
//! A [`Context`] owns devices (the host CPU, HIP GPUs, and with the `emu` feature emulated
//! GPUs), runs single GEMMs on the best device, and spreads strided and grouped batches over
//! all of them with one result per item. [`api::ndarray_ext`] adds `a.gemm(&b)` to ndarray
//! matrices; [`api::device`] runs GEMMs on device memory of a context's GPUs, queued on the
//! caller's stream; [`plan::choice`] explains which kernel runs; [`call_log`] (`GEMM_LOG=1`)
//! records every call as a `gemm run` line that the lab's `gemm bench --from` reruns.
//!
//! The runtime holds no compiler, no timing model and no command-line parser: kernels come
//! compiled from `gemm-kernels`, their predicted times from the characterisation table the lab
//! (`gemm-kernels/lab`, the `gemm` binary) writes and this crate embeds.
//!
//! # Layers
//!
//! Modules import downward only (`tests/layers.rs` fails on an import running back up):
//!
//! | layer | owns |
//! |---|---|
//! | [`api`] | what callers hold: [`Context`], [`Gpu`] and device memory, tensor parallelism, async batches, ndarray |
//! | [`batch`] | streaming a batch over devices: one worker per device, retries, nothing lost |
//! | [`backends`] | devices that execute plans: host, HIP (dlopen), emulated (`emu` feature), collectives |
//! | [`plan`] | a call becomes one plan: kernel choice by the cost table, split-K, grouped and fused launches, argument bytes |
//! | [`ops`], [`error`], [`call_log`] | the vocabulary: epilogue and fp8-scale options, errors, the call log |
//!
//! ```
//! use gemm_dispatch::{Context, GemmProblem};
//! let ctx = Context::host(1);
//! let p = GemmProblem::new(2, 2, 2);
//! let mut c = [0f32; 4];
//! ctx.gemm(&p, &[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], &mut c).unwrap();
//! assert_eq!(c, [19.0, 22.0, 43.0, 50.0]);
//! ```

pub mod api;
pub mod backends;
pub mod batch;
pub mod call_log;
pub mod error;
pub mod ops;
pub mod plan;

pub use api::context::{BatchReport, Context, DeviceUsage, GroupedItem, DEVICES_ENV};
pub use api::device::{
    DeviceGroup, DeviceScales, DeviceSlice, DeviceSliceMut, DeviceVec, Gpu, GpuEvent, GpuStream, GroupedError,
};
pub use api::ndarray_ext::{gemm_into, Gemm};
pub use api::parallel::{Reduce, TpGroup, TpOptions, TpPlan, TpStatus};
pub use api::submit::{BatchHandle, OwnedItem};
pub use backends::block_scaled::{BlockScaledJob, ScaleSlice};
pub use backends::{Backend, DeviceInfo, DeviceKind};
pub use batch::schedule::{JobOutcome, JobTrace, Observer};
pub use error::{Error, Result, TpError};
pub use gemm_core::{self as core, bf16, f16, DType, Element, GemmProblem, Layout, StridedBatch, Transpose};
pub use gemm_core::{
    BlockScaleError, BlockScaledProblem, BlockShape, ScaleDesc, ScaleKind, ScaleLayout, ScaleType, E8M0,
};
pub use ops::epilogue::{Activation, BiasAxis, Epilogue};
pub use ops::scales::{Fp8Scales, ScaleAxis, ScaleError};
