//! The plans of the options a call may carry beyond a plain GEMM: a fused epilogue
//! ([`crate::ops::epilogue`], run by a `fused` catalogue kernel) and fp8 scales
//! ([`crate::ops::scales`], arguments every fp8 kernel takes): which kernel, and the argument
//! bytes that carry the option.

use crate::ops::epilogue::Epilogue;
use crate::ops::scales::Fp8Scales;
use crate::plan::kernel_plan::{self, KernelPlan};
use gemm_core::{Arch, GemmProblem};
use gemm_kernels::KernelEntry;

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

/// The kernel argument bytes of an fp8 plan with scales: the plain arguments, then the scales
/// and the vectors' device addresses (0: none), swapped for a row-major problem (its A is the
/// kernel's B). `Err` names an argument the entry lacks.
pub fn scaled_kernargs(
    plan: &crate::plan::kernel_plan::KernelPlan,
    p: &GemmProblem,
    addresses: [u64; 3],
    scales: &Fp8Scales,
    row: u64,
    col: u64,
) -> std::result::Result<Vec<u8>, String> {
    let mut args = plan.kernargs(p, addresses[0], addresses[1], addresses[2])?;
    let swap = plan.problem.swap_ab;
    let (sa, sb) = if swap { (scales.b, scales.a) } else { (scales.a, scales.b) };
    let (vr, vc) = if swap { (col, row) } else { (row, col) };
    let want: [(&str, Vec<u8>); 5] = [
        ("scale_a", sa.to_le_bytes().to_vec()),
        ("scale_b", sb.to_le_bytes().to_vec()),
        ("scale_d", scales.d.to_le_bytes().to_vec()),
        ("scale_row", vr.to_le_bytes().to_vec()),
        ("scale_col", vc.to_le_bytes().to_vec()),
    ];
    for (name, bytes) in want {
        let arg = plan
            .entry
            .kernarg
            .iter()
            .find(|a| a.name == name && a.size as usize == bytes.len())
            .ok_or_else(|| format!("kernel {} has no argument {name}", plan.entry.name))?;
        let at = arg.offset as usize;
        args.get_mut(at..at + bytes.len())
            .ok_or_else(|| format!("argument {name} of {} does not fit", plan.entry.name))?
            .copy_from_slice(&bytes);
    }
    Ok(args)
}
