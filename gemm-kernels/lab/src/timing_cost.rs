//! The timing model as a cost source of the dispatcher's ranking (`gemm plan --model timing`):
//! what the characterisation table is checked against.

use crate::model::predict_plan;
use gemm_core::GemmProblem;
use gemm_dispatch::plan::choice::CostModel;
use gemm_dispatch::plan::kernel_plan::KernelPlan;

/// The timing model (`gemm_emu::timing`, [`crate::model::predict_plan`]) as a cost source, with
/// options that keep one prediction to a fraction of a second (few sampled workgroups, a short
/// K prefix, one clock): `gemm plan --model timing`. Too slow for a per-call choice (each
/// prediction runs the kernel's sampled workgroups in the emulator), so the dispatcher's
/// [`choose`](gemm_dispatch::plan::choice::choose) ranks by [`TableModel`](gemm_dispatch::plan::choice::TableModel), the same model characterised ahead of time with these
/// options.
#[derive(Clone, Debug)]
pub struct TimingModel {
    pub opts: gemm_emu::timing::ModelOptions,
}

impl CostModel for TimingModel {
    fn name(&self) -> &str {
        "timing model (gemm_emu::timing: sampled workgroups, 16 KiB K prefix, sustained clock)"
    }

    /// Seconds predicted; a kernel the model cannot run gets infinity (never picked).
    fn predict(&self, plan: &KernelPlan, p: &GemmProblem) -> f64 {
        predict_plan(plan, p, &self.opts).map_or(f64::INFINITY, |x| x.seconds)
    }
}

impl Default for TimingModel {
    fn default() -> Self {
        let opts = gemm_emu::timing::ModelOptions {
            at_peak_clock: false,
            prefix_bytes: 16 << 10,
            max_sampled_wgs: 64,
            ..Default::default()
        };
        Self { opts }
    }
}
