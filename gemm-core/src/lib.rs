//! `gemm-core`: the vocabulary every crate of the library speaks.
//!
//! * [`DType`] and the storage types ([`half::f16`], [`half::bf16`] and the four fp8 kinds in
//!   [`fp8`]), tied together by the [`Element`] trait;
//! * [`MatRef`]/[`MatMut`]: strided, bounds-checked matrix views (every layout and transpose lowers
//!   to one of these);
//! * [`GemmProblem`] with its single [`GemmProblem::validate`], [`StridedBatch`] and grouped
//!   problems;
//! * [`Arch`] and its capabilities;
//! * the typed [`Error`];
//! * [`reference`]: a GEMM that accumulates in f64, the yardstick of every test;
//! * block-scaled formats: [`mx`] (OCP MX: E4M3,
//!   E5M2, E2M3, E3M2, E2M1 elements with E8M0 scales, packing, quantiser, reference GEMM) and
//!   [`block_fp8`] (DeepSeek-V3 1x128 / 128x128 f32-scaled fp8), both summed exactly by
//!   [`exact`];
//! * [`block_scaled`]: the block-scaled GEMM problem (MX or block fp8 operands of the
//!   Linear layer, their scale descriptors, one `validate()`); its sub-byte elements (fp6, fp4)
//!   are [`DType`]s that only it takes.
//!
//! No I/O, no `unsafe`.
#![forbid(unsafe_code)]

pub mod arch;
pub mod block_fp8;
pub mod block_scaled;
pub mod dtype;
pub mod error;
pub mod exact;
pub mod fp8;
pub mod mx;
pub mod problem;
pub mod reference;
pub mod view;

pub use arch::{Arch, FpFlavour};
pub use block_scaled::{BlockScaleError, BlockScaledProblem, BlockShape, ScaleDesc, ScaleKind, ScaleLayout, ScaleType};
pub use dtype::{DType, Element};
pub use error::{Error, Operand, Result};
pub use fp8::{Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz};
pub use half::{bf16, f16};
pub use mx::{MxFormat, MxMatrix, E8M0};
pub use problem::{GemmProblem, Layout, StridedBatch, Transpose};
pub use view::{MatMut, MatRef};
