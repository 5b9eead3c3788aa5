//! The sampled grid of problem shapes every cost source is checked on (issue 28): the physics
//! test of [`crate::plan::bounds`] composes the table on all of it, and the lab's
//! `gemm plan --grid` (`gemm_lab::grid_eval`) runs the timing model on the same shapes. One list,
//! so a shape the table is held to physics on is a shape it is compared with the model on, and
//! the committed grid result speaks of the shapes the tests check. It lives in the runtime
//! because the runtime's tests use it and the runtime cannot depend on the lab.

use gemm_core::{Arch, DType, GemmProblem, Layout, Transpose};

/// Which grid: `Full` (every shape; the lab runs the model on it on many cores) or `Ci` (a
/// subset of `Full` whose model runs take seconds, for unit tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    Ci,
    Full,
}

/// `(m, n, k)` of the grid, from 1 to 65536: squares, wide N, tall M, deep K, an odd shape, and
/// skinny M (decode: M = 1..256 activations against Llama-like weights N x K).
pub fn shapes(grid: Grid) -> Vec<(usize, usize, usize)> {
    if grid == Grid::Ci {
        // Each from `Full`: a square, a deep K, a wide decode shape and a tensor-parallel shard.
        return vec![(1024, 1024, 1024), (128, 128, 65536), (16, 28672, 4096), (1, 1280, 8192)];
    }
    let mut g = Vec::new();
    for s in [64, 256, 1024, 4096, 8192, 16384] {
        g.push((s, s, s));
    }
    g.extend([
        (4096, 57344, 8192),
        (4096, 65536, 1024),
        (65536, 4096, 1024),
        (32768, 256, 4096),
        (128, 128, 65536),
        (1024, 1024, 65536),
        (1000, 1000, 1000),
        (255, 257, 129),
    ]);
    for m in [1, 16, 64, 256] {
        for (n, k) in [(8192, 12288), (76032, 8192), (28672, 4096), (1280, 8192)] {
            g.push((m, n, k));
        }
    }
    g
}

/// bf16 -> bf16 and the arch's fp8 (e4m3, FNUZ on gfx942, OCP on gfx950) -> f32: the dtypes the
/// lab's model comparison covers (each costs a model run per candidate kernel).
pub fn model_dtypes(arch: Arch) -> Vec<(DType, DType)> {
    let fp8 = match arch {
        Arch::Gfx942 => DType::Fp8E4M3Fnuz,
        Arch::Gfx950 => DType::Fp8E4M3,
    };
    vec![(DType::Bf16, DType::Bf16), (fp8, DType::F32)]
}

/// Every `(inputs, output)` dtype pair the physics test covers: bf16, f16, f32 and the arch's
/// fp8 (compositions are cheap, so all of them).
pub fn all_dtypes(arch: Arch) -> Vec<(DType, DType)> {
    let fp8 = match arch {
        Arch::Gfx942 => (DType::Fp8E4M3Fnuz, DType::F32),
        Arch::Gfx950 => (DType::Fp8E4M3, DType::Bf16),
    };
    vec![(DType::Bf16, DType::Bf16), (DType::F16, DType::F32), (DType::F32, DType::F32), fp8]
}

/// The problems of `grid` in `dtypes`, each as a row-major `x * W^T` (a Linear layer) and a
/// plain row-major `A * B`.
pub fn problems(grid: Grid, dtypes: &[(DType, DType)]) -> Vec<GemmProblem> {
    let mut out = Vec::new();
    for (m, n, k) in shapes(grid) {
        for &(ab, c) in dtypes {
            for tb in [Transpose::Yes, Transpose::No] {
                out.push(
                    GemmProblem::new(m, n, k)
                        .with_layout(Layout::RowMajor)
                        .with_transposes(Transpose::No, tb)
                        .with_dtypes(ab, ab, c),
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ci_grid_is_part_of_the_full_one() {
        let full = shapes(Grid::Full);
        for s in shapes(Grid::Ci) {
            assert!(full.contains(&s), "{s:?}");
        }
        // Every regime the table composes: one launch round and many, M = 1, K = 65536.
        assert!(full.iter().any(|s| s.0 == 1) && full.iter().any(|s| s.2 == 65536));
        assert!(full.iter().all(|&(m, n, k)| m.min(n).min(k) >= 1 && m.max(n).max(k) <= 76032));
    }
}
