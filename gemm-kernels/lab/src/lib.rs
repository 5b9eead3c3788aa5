//! `gemm-lab`: everything that *evaluates* kernels rather than runs GEMMs, and the `gemm`
//! command line. The runtime (`gemm-dispatch`) is what users link; this crate adds the kernel
//! compiler and the emulator's timing model to it:
//!
//! * [`model`]: the timing model run on a kernel plan or a grouped launch;
//! * [`timing_cost`]: the timing model as a cost source for `gemm plan --model timing`;
//! * [`characterise`]: the characterisation table the runtime embeds
//!   (`gemm plan --characterise`), and the tests that hold the table to the model;
//! * [`split_eval`]: split-K plans predicted by the model (`gemm splitk`);
//! * [`grid_eval`]: the table against the model on a sampled grid of shapes (`gemm plan --grid`);
//! * [`model_eval`], [`schedule_eval`]: `gemm calibrate` and `gemm compare`;
//! * [`peers`]: our plans beside the foreign kernels in one run (`gemm peers`);
//! * [`sweep`]: compiling and ranking configurations of the kernel space (`gemm sweep`);
//! * [`replay`]: rerunning a call log (`gemm bench --from`) and the flags of `gemm run`;
//! * [`jobs`]: independent predictions spread over threads.

pub mod characterise;
pub mod decode_table;
pub mod grid_eval;
pub mod jobs;
pub mod model;
pub mod model_eval;
pub mod mx_table;
pub mod peers;
pub mod replay;
pub mod schedule_eval;
pub mod split_eval;
pub mod sweep;
pub mod timing_cost;
