//! Fused epilogues: `C = clamp(act(alpha op(A) op(B) + beta C + bias))`, rounded once to C's
//! dtype, as inference layers need (a linear layer's bias and activation in the GEMM's own
//! pass over C instead of a second kernel).
//!
//! [`Epilogue`] is the option set of both APIs. On a GPU it runs in a catalogue kernel of the
//! `fused` family (gemm-compiler `ir::Fusion`, `lower.rs` `fuse`): [`fused_entry`] finds the one
//! for a problem or says why none fits. On the host ([`host_gemm_bytes`]) the GEMM runs with an
//! f32 C through gemm-host and the epilogue is applied to the f32 values with the kernels'
//! formulas before the one rounding to C's dtype, so results agree across devices to the
//! rounding of the activation's `exp` (the kernels use `v_exp_f32`, ISA.md VOP1).
//!
//! Bias axes are in the problem's terms: [`BiasAxis::PerRow`] adds `bias[i]` to row `i` of C
//! (length m), [`BiasAxis::PerColumn`] `bias[j]` to column `j` (length n), whatever the layout.
//! A row-major problem runs as the column-major `C^T` (`kernel_plan`), so its per-row bias is
//! the kernel's per-column one.

use crate::backend::{typed, typed_mut, Backend};
use crate::error::{Error, Result};
use crate::kernel_plan::{self, KernelPlan};
use gemm_core::{bf16, f16, Arch, DType, GemmProblem, Layout, Operand};
use gemm_kernels::KernelEntry;

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

/// The fused catalogue kernel of `arch` that runs `p` with `ep`, or why there is none (the
/// catalogue's `fused` family covers bf16 -> bf16, column bias with ReLU/GELU/SiLU, NN and TN
/// in column-major terms, `v8`; gemm-compiler `catalogue.rs`).
pub fn fused_entry(arch: Arch, p: &GemmProblem, ep: &Epilogue) -> std::result::Result<KernelPlan, String> {
    let want = ep.kernel_name(p);
    let mut why =
        format!("no {arch} kernel fuses the epilogue `{want}` for {} x {} -> {}", p.a_type, p.b_type, p.c_type);
    for e in gemm_kernels::for_arch(arch).filter(|e| e.epilogue == want) {
        match kernel_plan::plan_fused(e, p) {
            Ok(plan) => return Ok(plan),
            Err(w) => why = format!("{}: {w}", e.name),
        }
    }
    Err(why)
}

/// The kernel arguments of a fused plan: the plain ones, then the bias vector's address and the
/// clamp bounds (infinite without a clamp).
pub fn fused_kernargs(
    plan: &KernelPlan,
    p: &GemmProblem,
    addresses: [u64; 3],
    ep: &Epilogue,
    bias: u64,
) -> std::result::Result<Vec<u8>, String> {
    let mut args = plan.kernargs(p, addresses[0], addresses[1], addresses[2])?;
    let (lo, hi) = ep.clamp.unwrap_or((f32::NEG_INFINITY, f32::INFINITY));
    for arg in plan.entry.kernarg {
        let bytes: Vec<u8> = match arg.name {
            "bias" => bias.to_le_bytes().to_vec(),
            "clamp_lo" => lo.to_le_bytes().to_vec(),
            "clamp_hi" => hi.to_le_bytes().to_vec(),
            _ => continue,
        };
        let at = arg.offset as usize;
        args.get_mut(at..at + bytes.len())
            .ok_or_else(|| format!("argument {} of {} does not fit", arg.name, plan.entry.name))?
            .copy_from_slice(&bytes);
    }
    Ok(args)
}

/// Whether an entry is a fused kernel (its manifest names an epilogue).
pub fn is_fused(e: &KernelEntry) -> bool {
    e.epilogue != "none"
}

/// Element `(i, j)` of C in `p`'s layout.
fn c_index(p: &GemmProblem, i: usize, j: usize) -> usize {
    match p.layout {
        Layout::RowMajor => i * p.ldc + j,
        Layout::ColMajor => i + j * p.ldc,
    }
}

/// `C = clamp(act(alpha op(A) op(B) + beta C + bias))` on the host, on byte buffers of `p`'s
/// dtypes: the GEMM with an f32 C (gemm-host, `threads` threads; C read only when `beta != 0`),
/// then [`Epilogue::apply`] on each element of the `m x n` block and one rounding to C's dtype
/// (f32, f16 or bf16). Elements outside the block (padding) are untouched.
pub fn host_gemm_bytes(
    p: &GemmProblem,
    a: &[u8],
    b: &[u8],
    c: &mut [u8],
    ep: &Epilogue,
    bias: Option<&[f32]>,
    threads: usize,
) -> Result<()> {
    crate::context::validate_bytes(p, a.len(), b.len(), c.len())?;
    ep.check(p, bias.map(<[f32]>::len))?;
    let spans = p.validate()?;
    let read = |c: &[u8]| -> Result<Vec<f32>> {
        Ok(match p.c_type {
            DType::F32 => typed::<f32>(c, Operand::C, p.c_type)?[..spans.c].to_vec(),
            DType::F16 => typed::<f16>(c, Operand::C, p.c_type)?[..spans.c].iter().map(|x| x.to_f32()).collect(),
            DType::Bf16 => typed::<bf16>(c, Operand::C, p.c_type)?[..spans.c].iter().map(|x| x.to_f32()).collect(),
            other => {
                return Err(Error::Unsupported {
                    device: "host".into(),
                    why: format!("epilogues write f32, f16 or bf16, not {other}"),
                })
            }
        })
    };
    // beta == 0 never reads C (it may hold NaN): start from zeros then.
    let mut c32 = if p.beta != 0.0 { read(c)? } else { vec![0f32; spans.c] };
    if p.beta == 0.0 {
        read(&c[..0])?; // the dtype check alone
    }
    let p32 = p.with_dtypes(p.a_type, p.b_type, DType::F32);
    crate::host::HostBackend::new(0, threads).gemm(&p32, a, b, bytemuck::cast_slice_mut(&mut c32))?;
    let bias = bias.unwrap_or(&[]);
    let mut put: Box<dyn FnMut(usize, f32) + '_> = match p.c_type {
        DType::F32 => {
            let out = typed_mut::<f32>(c, Operand::C, p.c_type)?;
            Box::new(move |i, y| out[i] = y)
        }
        DType::F16 => {
            let out = typed_mut::<f16>(c, Operand::C, p.c_type)?;
            Box::new(move |i, y| out[i] = f16::from_f32(y))
        }
        _ => {
            let out = typed_mut::<bf16>(c, Operand::C, p.c_type)?;
            Box::new(move |i, y| out[i] = bf16::from_f32(y))
        }
    };
    for i in 0..p.m {
        for j in 0..p.n {
            let bv = match ep.bias {
                None => 0.0,
                Some(BiasAxis::PerRow) => bias[i],
                Some(BiasAxis::PerColumn) => bias[j],
            };
            let at = c_index(p, i, j);
            put(at, ep.apply(c32[at], bv));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use gemm_core::reference::random_values;

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
    fn host_epilogue_matches_an_f64_reference_and_rounds_once() {
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            let p = GemmProblem::new(13, 9, 21)
                .with_layout(layout)
                .with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16)
                .with_scalars(1.25, 0.5);
            let p = p.with_leading_dims(p.lda, p.ldb, p.ldc + 2);
            let s = p.validate().unwrap();
            let a: Vec<bf16> = random_values(s.a, 1);
            let b: Vec<bf16> = random_values(s.b, 2);
            let c0: Vec<bf16> = random_values(s.c, 3);
            let bias: Vec<f32> = random_values(13, 4);
            let ep = Epilogue { bias: Some(BiasAxis::PerRow), activation: Activation::Silu, clamp: Some((-0.2, 3.0)) };
            let mut c = c0.clone();
            host_gemm_bytes(
                &p,
                bytemuck::cast_slice(&a),
                bytemuck::cast_slice(&b),
                bytemuck::cast_slice_mut(&mut c),
                &ep,
                Some(&bias),
                1,
            )
            .unwrap();
            let (ea, eb) = match layout {
                Layout::RowMajor => ((p.lda, 1), (p.ldb, 1)),
                Layout::ColMajor => ((1, p.lda), (1, p.ldb)),
            };
            for i in 0..p.m {
                for j in 0..p.n {
                    let mut acc = 0f64;
                    for l in 0..p.k {
                        acc += a[i * ea.0 + l * ea.1].to_f32() as f64 * b[l * eb.0 + j * eb.1].to_f32() as f64;
                    }
                    let at = c_index(&p, i, j);
                    let x = 1.25 * acc + 0.5 * c0[at].to_f32() as f64 + bias[i] as f64;
                    let want = (x / (1.0 + (-x).exp())).clamp(-0.2, 3.0);
                    let got = c[at].to_f32() as f64;
                    assert!((got - want).abs() <= 1e-2 * (1.0 + want.abs()), "{layout:?} ({i},{j}): {got} vs {want}");
                }
            }
            // Padding of C (the two extra elements per leading dimension) untouched.
            let pad = c_index(&p, 0, 0) + if layout == Layout::RowMajor { p.n } else { p.m };
            assert_eq!(c[pad].to_bits(), c0[pad].to_bits());
        }
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
