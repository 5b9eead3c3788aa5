//! The physics every predicted time obeys: no kernel computes faster than the chip's matrix
//! pipes at the clock they run at when busy, and none finishes before the bytes it must move
//! have moved.
//!
//! * **MFMA ceiling**: the problem's `2 m n k` flops at [`gemm_core::Arch::mfma_ceiling_tflops`]
//!   (the dtype's peak matrix rate scaled to the loaded clock, ARCH.md and TIMING.md).
//! * **Memory floor**: A and B read once, C written once (and read once more when `beta != 0`),
//!   at the peak HBM bandwidth (ARCH.md "Memory system"): operands that start in HBM, as a
//!   call's first touch of them does (a warm Infinity Cache can beat it only for operands
//!   under its 256 MiB, and only on a repeat of the same call).
//!
//! A prediction below [`Floor::seconds`] is a bug of the composition that made it; the tests
//! here check every cost source of the dispatcher over a sampled grid of shapes.

use gemm_core::{Arch, GemmProblem, Operand};

/// The least time physics allows a GEMM on one device of an architecture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Floor {
    /// The flops at the MFMA ceiling.
    pub mfma_seconds: f64,
    /// The bytes that must move at the peak HBM bandwidth.
    pub memory_seconds: f64,
}

impl Floor {
    /// The binding bound: the larger of the two.
    pub fn seconds(&self) -> f64 {
        self.mfma_seconds.max(self.memory_seconds)
    }
}

/// Bytes a GEMM must move: A and B read once, C written once and read when `beta != 0`
/// (0 for an invalid problem).
pub fn bytes_moved(p: &GemmProblem) -> f64 {
    if p.validate().is_err() {
        return 0.0;
    }
    let elems = |e: usize, o: Operand| (e as u128 * p.dtype(o).size_bytes() as u128) as f64;
    let (m, n, k) = (p.m, p.n, p.k);
    let c_passes = if p.beta != 0.0 { 2.0 } else { 1.0 };
    // The matrices themselves, not their strided spans (padding between rows is not read).
    elems(m * k, Operand::A) + elems(k * n, Operand::B) + c_passes * elems(m * n, Operand::C)
}

/// The floor of `p` on `arch`, for a kernel that multiplies at xf32 precision when `xf32`.
pub fn floor(arch: Arch, p: &GemmProblem, xf32: bool) -> Floor {
    let caps = arch.caps();
    Floor {
        mfma_seconds: p.flops() / (arch.mfma_ceiling_tflops(p.a_type, xf32) * 1e12),
        memory_seconds: bytes_moved(p) / (caps.hbm_tbps * 1e12),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::choice::{CostModel, StaticEstimate, TableModel};
    use crate::plan::sampled::{self, Grid};
    use crate::plan::{kernel_plan, splitk};
    use gemm_core::{DType, Transpose};

    /// Every prediction the dispatcher can make over the sampled grid: the characterisation
    /// table's composition and the static roofline for every kernel that can run the problem,
    /// and the split-K / split-tail estimates; none below the floor.
    #[test]
    fn no_prediction_beats_physics_on_the_sampled_grid() {
        let mut bad = Vec::new();
        let mut checked = 0usize;
        for arch in Arch::ALL {
            for p in sampled::problems(Grid::Full, &sampled::all_dtypes(arch)) {
                for e in gemm_kernels::for_arch(arch) {
                    let Ok(plan) = kernel_plan::plan_for(e, &p) else { continue };
                    let f = floor(arch, &p, e.xf32()).seconds();
                    let mut check = |what: &str, t: f64| {
                        checked += 1;
                        if t < f * (1.0 - 1e-9) {
                            bad.push(format!(
                                "{arch} {}x{}x{} {}{} {}: {what} {:.2} us < floor {:.2} us",
                                p.m,
                                p.n,
                                p.k,
                                p.a_type,
                                if p.trans_b.is_yes() { " x^T" } else { "" },
                                e.name,
                                t * 1e6,
                                f * 1e6
                            ));
                        }
                    };
                    if let Ok(t) = TableModel::composed(&plan, &p) {
                        check("table", t);
                    }
                    check("static", StaticEstimate.predict(&plan, &p));
                    if let Ok(sp) = splitk::choose(arch, &p, Some(&plan)) {
                        check("split estimate", sp.estimate_split);
                    }
                }
            }
        }
        assert!(checked > 4_000, "only {checked} predictions checked");
        assert!(
            bad.is_empty(),
            "{} of {checked} predictions beat physics, e.g.:\n{}",
            bad.len(),
            bad[..bad.len().min(25)].join("\n")
        );
    }

    #[test]
    fn the_floor_is_the_textbook_one() {
        // MI300X bf16 at the loaded clock: 304 CUs x 2048 FLOP x 1207 MHz = 751.5 TFLOP/s.
        let t = Arch::Gfx942.mfma_ceiling_tflops(DType::Bf16, false);
        assert!((t - 304.0 * 2048.0 * 1207e6 / 1e12).abs() < 0.2, "{t}");
        // 1 x 8192 x 12288 f16 reads 201 MB of weights: 38 us at 5.3 TB/s (the figure).
        let p = GemmProblem::new(1, 8192, 12288).with_transposes(Transpose::No, Transpose::Yes).with_dtypes(
            DType::F16,
            DType::F16,
            DType::F16,
        );
        let f = floor(Arch::Gfx942, &p, false);
        assert!((f.memory_seconds * 1e6 - 38.0).abs() < 0.1, "{f:?}");
        assert!(f.mfma_seconds < f.memory_seconds);
        assert_eq!(f.seconds(), f.memory_seconds);
    }
}
