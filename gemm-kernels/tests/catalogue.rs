//! The embedded catalogue: same bytes as a fresh compile (every build writes the same
//! bytes), one entry per configuration, manifests that agree with the code objects.

use gemm_codeobject::CodeObject;
use gemm_core::Arch;

#[test]
fn embedded_code_objects_equal_a_fresh_compile() {
    let configs = gemm_compiler::catalogue::configs();
    assert_eq!(configs.len(), gemm_kernels::catalogue().len());
    for (cfg, e) in configs.into_iter().zip(gemm_kernels::catalogue()) {
        let k = gemm_compiler::compile(cfg).unwrap();
        assert_eq!(k.name, e.name);
        assert!(k.code_object == e.code_object, "{}: build output differs from a fresh compile", e.name);
    }
}

#[test]
fn manifest_matches_code_objects() {
    let mut per_arch = [0; 2];
    for e in gemm_kernels::catalogue() {
        per_arch[e.arch as usize] += 1;
        let co = CodeObject::parse(e.code_object).unwrap();
        let k = co.kernel(e.name).unwrap_or_else(|| panic!("{} not in its code object", e.name));
        let md = k.metadata.as_ref().unwrap();
        assert_eq!(md.group_segment_fixed_size, e.lds_bytes);
        assert_eq!(md.kernarg_segment_size, e.kernarg_size);
        assert_eq!(md.agpr_count, Some(e.agprs));
        assert_eq!(md.args.len(), e.kernarg.len());
        for (a, b) in md.args.iter().zip(e.kernarg) {
            assert_eq!((a.offset, a.size, a.name.as_deref()), (b.offset, b.size, Some(b.name)));
        }
        assert!(e.mfma_per_k_step > 0 && e.mfma_issue_share_permille > 0 && e.mfma_issue_share_permille < 1000);
        let (grid, block) = e.launch(255, 257);
        assert_eq!((grid, block), ([2, 3, 1], [256, 1, 1]));
        // gfx950 uses its double-rate shapes.
        assert_eq!(e.mfma.2, if e.arch == Arch::Gfx950 { 16 } else { 8 }, "{}", e.name);
    }
    assert_eq!(per_arch, [32, 32]);
    assert_eq!(gemm_kernels::for_arch(Arch::Gfx950).count(), 32);
}
