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
        "timing model (gemm_emu::timing: sampled workgroups, 128 KiB footprint prefix, sustained clock)"
    }

    /// Seconds predicted; a kernel the model cannot run gets infinity (never picked).
    fn predict(&self, plan: &KernelPlan, p: &GemmProblem) -> f64 {
        predict_plan(plan, p, &self.opts).map_or(f64::INFINITY, |x| x.seconds)
    }
}

impl Default for TimingModel {
    fn default() -> Self {
        // The footprint's prefix is the model's own (128 KiB of each sampled workgroup's loads;
        // its hit fractions come from the second half). A shorter one saw less than two K steps
        // of a 64x64 bf16 tile (16 KiB a step): its second half held only the operand loaded
        // last in a step, the activations every workgroup shares, so a one-column stream of
        // weights read as 98.7% L2 hits and 64 x 38912 x 4096 predicted 39.6 us, faster than
        // its 318 MB of weights at peak HBM (60.1 us). With the model's prefix: 63.5 us.
        let opts = gemm_emu::timing::ModelOptions { at_peak_clock: false, max_sampled_wgs: 64, ..Default::default() };
        Self { opts }
    }
}
