//! Fused epilogues: `C = clamp(act(alpha op(A) op(B) + beta C + bias))`, rounded once to C's
//! dtype, as inference layers need (a linear layer's bias and activation in the GEMM's own
//! pass over C instead of a second kernel).
//!
//! [`Epilogue`] is the option set of both APIs. On a GPU it runs in a catalogue kernel of the
//! `fused` family (gemm-compiler `ir::Fusion`, `lower.rs` `fuse`): [`crate::plan::fused::fused_entry`] finds the one
//! for a problem or says why none fits. On the host ([`crate::backends::host_ops::gemm_epilogue_bytes`]) the GEMM runs with an
//! f32 C through gemm-host and the epilogue is applied to the f32 values with the kernels'
//! formulas before the one rounding to C's dtype, so results agree across devices to the
//! rounding of the activation's `exp` (the kernels use `v_exp_f32`, ISA.md VOP1).
//!
//! Bias axes are in the problem's terms: [`BiasAxis::PerRow`] adds `bias[i]` to row `i` of C
//! (length m), [`BiasAxis::PerColumn`] `bias[j]` to column `j` (length n), whatever the layout.
//! A row-major problem runs as the column-major `C^T` (`kernel_plan`), so its per-row bias is
//! the kernel's per-column one.

use crate::error::{Error, Result};
use gemm_core::{GemmProblem, Layout};

/// Which axis of C a bias vector runs along.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BiasAxis {
    /// `bias[i]` added to every element of row `i` (length m).
    PerRow,
    /// `bias[j]` added to every element of column `j` (length n).
    PerColumn,
}

/// The activation, applied after the bias.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Activation {
    #[default]
    None,
    /// `max(x, 0)`.
    Relu,
    /// `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, computed as `x * sigmoid(2u)`.
    GeluTanh,
    /// `x * sigmoid(x)`.
    Silu,
}

/// A fused epilogue: an optional f32 bias vector (the data is passed beside it), an
/// activation, an optional clamp to `[lo, hi]`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Epilogue {
    pub bias: Option<BiasAxis>,
    pub activation: Activation,
    pub clamp: Option<(f32, f32)>,
}

impl Epilogue {
    /// Nothing after `alpha op(A) op(B) + beta C`.
    pub const NONE: Epilogue = Epilogue { bias: None, activation: Activation::None, clamp: None };

    /// Whether it does nothing.
    pub fn is_none(&self) -> bool {
        *self == Self::NONE
    }

    /// Elements the bias vector needs for `p` (0 without a bias).
    pub fn bias_len(&self, p: &GemmProblem) -> usize {
        match self.bias {
            None => 0,
            Some(BiasAxis::PerRow) => p.m,
            Some(BiasAxis::PerColumn) => p.n,
        }
    }

    /// Checks the options against `p` and a bias vector of `bias_len` elements (`None`: no
    /// vector given): a bias needs a vector that long, no bias needs none; clamp bounds are
    /// numbers with `lo <= hi`.
    pub fn check(&self, p: &GemmProblem, bias_len: Option<usize>) -> Result<()> {
        let bad = |why: String| Error::Invalid(gemm_core::Error::InvalidArgument(why));
        match (self.bias, bias_len) {
            (None, Some(_)) => return Err(bad("a bias vector was given but the epilogue has no bias".into())),
            (Some(axis), None) => return Err(bad(format!("the epilogue's {axis:?} bias needs a bias vector"))),
            (Some(_), Some(len)) if len < self.bias_len(p) => {
                return Err(bad(format!("the bias vector has {len} elements, the problem needs {}", self.bias_len(p))))
            }
            _ => {}
        }
        if let Some((lo, hi)) = self.clamp {
            if lo.is_nan() || hi.is_nan() || lo > hi {
                return Err(bad(format!("clamp bounds [{lo}, {hi}] are not an interval")));
            }
        }
        Ok(())
    }

    /// The epilogue on one f32 value, `bias` the element's bias (0 without one), with the fused
    /// kernels' formulas (`lower.rs` `fuse`): sigmoid as `1 / (1 + 2^(-x log2 e))`, the clamp
    /// as `max(min(x, hi), lo)`.
    pub fn apply(&self, x: f32, bias: f32) -> f32 {
        let x = if self.bias.is_some() { x + bias } else { x };
        let sigmoid_times =
            |x: f32, z: f32, scale: f32| x * (1.0 / (1.0 + (-scale * std::f32::consts::LOG2_E * z).exp2()));
        let y = match self.activation {
            Activation::None => x,
            Activation::Relu => x.max(0.0),
            Activation::Silu => sigmoid_times(x, x, 1.0),
            Activation::GeluTanh => {
                let c0 = (2.0f64 / std::f64::consts::PI).sqrt() as f32;
                let u = (c0 * 0.044715 * x * x + c0) * x;
                sigmoid_times(x, u, 2.0)
            }
        };
        match self.clamp {
            Some((lo, hi)) => y.min(hi).max(lo),
            None => y,
        }
    }

    /// The catalogue's name of this epilogue for a kernel that runs `p` (gemm-compiler
    /// `Fusion::name`, in the kernel's column-major terms: a row-major problem's rows are the
    /// kernel's columns).
    pub fn kernel_name(&self, p: &GemmProblem) -> String {
        let mut parts = vec![];
        let swap = p.layout == Layout::RowMajor;
        match (self.bias, swap) {
            (None, _) => {}
            (Some(BiasAxis::PerRow), false) | (Some(BiasAxis::PerColumn), true) => parts.push("biasrow"),
            _ => parts.push("biascol"),
        }
        match self.activation {
            Activation::None => {}
            Activation::Relu => parts.push("relu"),
            Activation::GeluTanh => parts.push("gelu"),
            Activation::Silu => parts.push("silu"),
        }
        if self.clamp.is_some() {
            parts.push("clamp");
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join("_")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_formulas_are_the_textbook_ones() {
        let gelu = |x: f64| 0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh());
        let silu = |x: f64| x / (1.0 + (-x).exp());
        for x in [-6.0f32, -1.5, -0.1, 0.0, 0.3, 2.0, 9.0] {
            let g = Epilogue { activation: Activation::GeluTanh, ..Epilogue::NONE }.apply(x, 0.0);
            assert!((g as f64 - gelu(x as f64)).abs() <= 1e-5 * (1.0 + x.abs() as f64), "gelu({x}) = {g}");
            let s = Epilogue { activation: Activation::Silu, ..Epilogue::NONE }.apply(x, 0.0);
            assert!((s as f64 - silu(x as f64)).abs() <= 1e-5 * (1.0 + x.abs() as f64), "silu({x}) = {s}");
        }
        let e = Epilogue { bias: Some(BiasAxis::PerRow), activation: Activation::Relu, clamp: Some((-1.0, 2.5)) };
        assert_eq!(e.apply(-3.0, 1.0), 0.0);
        assert_eq!(e.apply(4.0, 1.0), 2.5);
        assert_eq!(e.apply(0.5, 1.0), 1.5);
    }

    #[test]
    fn names_follow_the_kernels_column_major_terms() {
        let col = GemmProblem::new(4, 4, 4).with_layout(Layout::ColMajor);
        let row = GemmProblem::new(4, 4, 4);
        let e = Epilogue { bias: Some(BiasAxis::PerColumn), activation: Activation::GeluTanh, clamp: None };
        assert_eq!(e.kernel_name(&col), "biascol_gelu");
        assert_eq!(e.kernel_name(&row), "biasrow_gelu");
        let r = Epilogue { bias: Some(BiasAxis::PerRow), activation: Activation::Silu, clamp: None };
        assert_eq!(r.kernel_name(&row), "biascol_silu");
        assert_eq!(Epilogue::NONE.kernel_name(&row), "none");
    }

    #[test]
    fn bad_options_are_typed_errors() {
        let p = GemmProblem::new(4, 6, 2);
        let col = Epilogue { bias: Some(BiasAxis::PerColumn), ..Epilogue::NONE };
        assert!(col.check(&p, Some(6)).is_ok());
        assert!(matches!(col.check(&p, Some(5)), Err(Error::Invalid(_))));
        assert!(matches!(col.check(&p, None), Err(Error::Invalid(_))));
        assert!(matches!(Epilogue::NONE.check(&p, Some(6)), Err(Error::Invalid(_))));
        let clamp = Epilogue { clamp: Some((1.0, 0.0)), ..Epilogue::NONE };
        assert!(matches!(clamp.check(&p, None), Err(Error::Invalid(_))));
    }
}
