//! The transpose pre-pass (`plan/transpose.rs`) through the emulated device path: an fp8 GEMM
//! whose column-major kernel would read both operands M/N-contiguous (row-major with op(A)
//! transposed), run as a plan that copies one operand transposed into the workspace first
//! (`gemm_plan::prepass_plan`: the table gives small shapes no pre-pass, so the test builds the
//! plan), on both archs, each operand, padded leading dimensions, beta = 0 over NaN and
//! beta != 0; the result must match the host reference. The dispatcher's own choice at 4096^3
//! (`Context::gemm_on` would run it) is checked in `gemm_plan.rs`.

mod common;
use common::quarters;
use gemm_core::reference;
use gemm_core::{Arch, Element, Fp8E4M3, Fp8E4M3Fnuz, GemmProblem, Layout, Operand, Transpose};
use gemm_dispatch::backends::emu::EmuBackend;
use gemm_dispatch::plan::gemm_plan::prepass_plan;
use gemm_emu::{Mode, Schedule};

fn run<T: Element>(arch: Arch, op: Operand, beta: f32, mode: Mode) {
    // Row-major, op(A) transposed: the column-major kernel's A is B (N-contiguous) and its B
    // is A (M-contiguous), the `nt` kernel the pre-pass replaces.
    let (m, n, k) = (72, 40, 100);
    let p = GemmProblem::new(m, n, k)
        .with_elements::<T, T, gemm_core::bf16>()
        .with_layout(Layout::RowMajor)
        .with_transposes(Transpose::Yes, Transpose::No)
        .with_scalars(1.5, beta);
    let p = p.with_leading_dims(p.lda.next_multiple_of(16) + 16, p.ldb.next_multiple_of(16), p.ldc + 3);
    let plan = prepass_plan(arch, arch.caps().compute_units, &p, op).unwrap();
    let tp = plan.prepass.expect("a pre-pass plan");
    assert_eq!(tp.operand, op);
    let names: Vec<&str> = plan.entries().iter().map(|e| e.name).collect();
    assert!(names[0].contains("_transpose_b8_"), "{names:?}");
    assert!(plan.workspace_bytes() >= tp.rows as usize * tp.ldy as usize);
    let s = p.validate().unwrap();
    let (a, b): (Vec<T>, Vec<T>) = (quarters(s.a, 1), quarters(s.b, 2));
    let c0: Vec<gemm_core::bf16> =
        if beta == 0.0 { vec![gemm_core::bf16::from_f32(f32::NAN); s.c] } else { quarters(s.c, 3) };
    let mut c = c0.clone();
    let emu = EmuBackend::new(arch, Schedule { mode, seed: 17 });
    emu.run_gemm_plan(&plan, &p, bytemuck::cast_slice(&a), bytemuck::cast_slice(&b), bytemuck::cast_slice_mut(&mut c))
        .unwrap_or_else(|e| panic!("{arch} {op} {names:?}: {e}"));
    assert_eq!(emu.last_kernels(), names, "{arch}");
    let r = reference::check(&p, &a, &b, &c0, &c, None).unwrap();
    assert!(r.passed(), "{arch} {op} {names:?}: {r:?}");
}

#[test]
fn fp8_nt_through_the_prepass_on_both_archs() {
    run::<Fp8E4M3Fnuz>(Arch::Gfx942, Operand::A, 0.0, Mode::Random);
    run::<Fp8E4M3Fnuz>(Arch::Gfx942, Operand::B, 0.5, Mode::LongestLatency);
    run::<Fp8E4M3>(Arch::Gfx950, Operand::B, 0.0, Mode::Reversed);
}
