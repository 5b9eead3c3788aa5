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

/// The grouped layout the manifest documents is the compiler's.
#[test]
fn grouped_layout_matches_the_compiler() {
    use gemm_compiler::kernel_args as ka;
    assert_eq!(gemm_kernels::MAX_GROUPS, ka::MAX_GROUPS as usize);
    assert_eq!(gemm_kernels::GROUP_ENTRY_BYTES, ka::ENTRY_BYTES as usize);
    assert_eq!(gemm_kernels::GROUP_TILE_START, ka::OFF_TILE_START as usize);
    let e = gemm_kernels::catalogue().iter().find(|e| e.grouped).expect("grouped kernels");
    assert_eq!(e.kernarg_size, ka::SIZE_GROUPED);
    let names: Vec<&str> = e.kernarg.iter().map(|a| a.name).collect();
    assert_eq!(names, ["table", "groups", "tiles"]);
}

#[test]
fn manifest_matches_code_objects() {
    let mut names: Vec<&str> = gemm_kernels::catalogue().iter().map(|e| e.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), gemm_kernels::catalogue().len(), "kernel names are unique");
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
        if e.split_k == gemm_kernels::SplitRole::Transpose {
            // The transpose pre-pass: no main loop, a 16 KiB LDS tile, 128x128-byte blocks.
            assert_eq!(e.family, "transpose", "{}", e.name);
            assert_eq!((e.mfma_per_k_step, e.lds_bytes, e.kernarg_size), (0, 16384, 32), "{}", e.name);
            assert_eq!(e.launch(255, 257), ([2, 3, 1], [256, 1, 1]));
            continue;
        }
        assert_eq!(e.split_k != gemm_kernels::SplitRole::None, e.family.starts_with("splitk"), "{}", e.name);
        if e.split_k == gemm_kernels::SplitRole::Reduce {
            // The split-K reduction: no main loop, no LDS, one element per lane.
            assert_eq!((e.mfma_per_k_step, e.lds_bytes, e.kernarg_size), (0, 0, 48), "{}", e.name);
            assert_eq!(e.launch(255, 257), ([4, 65, 1], [256, 1, 1]));
            continue;
        }
        assert!(e.mfma_per_k_step > 0 && e.mfma_issue_share_permille > 0 && e.mfma_issue_share_permille < 1000);
        let (grid, block) = e.launch(255, 257);
        assert_eq!((grid, block), ([255u32.div_ceil(e.tile.0), 257u32.div_ceil(e.tile.1), 1], [64 * e.waves, 1, 1]));
        if e.schedule.starts_with("decoderows") {
            // Decode kernels with the waves on the rows: each wave its own rows of C.
            assert_eq!(e.wave_grid, (e.waves, 1), "{}", e.name);
        } else if e.is_decode() {
            // Decode kernels: every wave owns the whole block of C and a share of K.
            assert_eq!(e.wave_grid, (1, 1), "{}", e.name);
        } else {
            assert_eq!(e.wave_grid.0 * e.wave_grid.1, e.waves);
        }
        // gfx950 uses its double-rate shapes for 16-bit inputs: K of 16 (32x32) or 32
        // (16x16); gfx942 8 or 16; f32 inputs 2 or 4 on both; xf32 only on gfx942; fp8 below.
        let want_k = match (e.a_type, e.arch, e.mfma.0) {
            // xf32 (gfx942): 32x32x4, 16x16x8.
            (gemm_core::DType::F32, Arch::Gfx942, m) if e.xf32() => 128 / m,
            (gemm_core::DType::F32, _, 32) => 2,
            (gemm_core::DType::F32, _, _) => 4,
            // fp8: gfx942 32x32x16 / 16x16x32; gfx950 the f8f6f4 32x32x64 / 16x16x128.
            (d, Arch::Gfx942, 32) if d.is_fp8() => 16,
            (d, Arch::Gfx942, _) if d.is_fp8() => 32,
            (d, Arch::Gfx950, 32) if d.is_fp8() => 64,
            (d, Arch::Gfx950, _) if d.is_fp8() => 128,
            (_, Arch::Gfx950, 32) => 16,
            (_, Arch::Gfx950, _) => 32,
            (_, _, 32) => 8,
            _ => 16,
        };
        assert_eq!(e.mfma.2, want_k, "{}", e.name);
        assert!(!e.xf32() || e.arch == Arch::Gfx942, "{}", e.name);
        // Every transpose's main loop is free of LDS bank conflicts.
        assert_eq!((e.lds_read_conflicts_per_k_step, e.lds_write_conflicts_per_k_step), (0, 0), "{}", e.name);
        assert!(e.occupancy >= 1 && e.occupancy <= 8, "{}", e.name);
        assert!(e.copy_a.contains(':') && e.copy_b.contains(':'), "{}: the copy choice carries its reason", e.name);
        let grouped_family = [
            gemm_compiler::catalogue::GROUPED,
            gemm_compiler::catalogue::GROUPED_DECODE,
            gemm_compiler::catalogue::GROUPED_DECODE_ROWS,
        ];
        assert_eq!(e.grouped, grouped_family.contains(&e.family), "{}", e.name);
    }
    let mut families = gemm_compiler::catalogue::families();
    families.extend(gemm_compiler::catalogue::split_families());
    for arch in [Arch::Gfx942, Arch::Gfx950] {
        let want: usize =
            gemm_compiler::catalogue::entries().iter().filter(|(f, _)| f.arch.name() == arch.name()).count();
        assert_eq!(per_arch[arch as usize], want);
        assert_eq!(gemm_kernels::for_arch(arch).count(), want);
        for f in families.iter().filter(|f| f.arch.name() == arch.name()) {
            assert!(gemm_kernels::for_arch(arch).any(|e| e.family == f.name), "{arch}: no {} kernel", f.name);
        }
    }
}
