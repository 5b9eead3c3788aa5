//! `gemm-dispatch`: the runtime of the AMD GEMM library.
//!
//! A [`Context`] owns devices (the host CPU, HIP GPUs, emulated GPUs), runs single GEMMs on the best device, and spreads strided and grouped batches over all
//! of them with one result per item. [`ndarray_ext`] adds `a.gemm(&b)` to ndarray matrices.
//! [`device`] runs GEMMs on device memory of a context's GPUs, queued on the caller's stream;
//! [`kernel_choice`] explains which kernel runs; [`call_log`] (`GEMM_LOG=1`) records every call
//! with a `gemm run` line that [`replay`] (`gemm bench --from`) reruns.
//!
//! ```
//! use gemm_dispatch::{Context, GemmProblem};
//! let ctx = Context::host(1);
//! let p = GemmProblem::new(2, 2, 2);
//! let mut c = [0f32; 4];
//! ctx.gemm(&p, &[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], &mut c).unwrap();
//! assert_eq!(c, [19.0, 22.0, 43.0, 50.0]);
//! ```

pub mod backend;
pub mod call_log;
pub mod collective;
pub mod context;
pub mod device;
pub mod emu;
pub mod epilogue;
pub mod error;
pub mod grouped;
pub mod hip;
pub mod host;
pub mod jobs;
pub mod kernel_choice;
pub mod kernel_plan;
pub mod kernel_table;
pub mod model;
pub mod model_eval;
pub mod ndarray_ext;
pub mod parallel;
pub mod replay;
pub mod scales;
pub mod schedule;
pub mod schedule_eval;
pub mod splitk;
pub mod submit;
pub mod sweep;

pub use backend::{Backend, DeviceInfo, DeviceKind};
pub use context::{BatchReport, Context, DeviceUsage, GroupedItem, DEVICES_ENV};
pub use device::{DeviceGroup, DeviceSlice, DeviceSliceMut, DeviceVec, Gpu, GpuEvent, GpuStream, GroupedError};
pub use epilogue::{Activation, BiasAxis, Epilogue};
pub use error::{Error, Result};
pub use gemm_core::{self as core, bf16, f16, DType, Element, GemmProblem, Layout, StridedBatch, Transpose};
pub use ndarray_ext::{gemm_into, Gemm};
pub use parallel::{Reduce, TpPlan};
pub use scales::{Fp8Scales, ScaleAxis, ScaleError};
pub use schedule::{JobOutcome, JobTrace, Observer};
pub use submit::{BatchHandle, OwnedItem};
