//! The catalogue: every kernel `build.rs` compiles, for gfx942 and gfx950.

use crate::ir::{Align, Arch, KernelConfig};
use gemm_core::DType;

/// All catalogue configurations, in a fixed order: arch, input dtype, output dtype
/// (f32 or the input type), transposes (NN, NT, TN, TT), alignment class.
pub fn configs() -> Vec<KernelConfig> {
    let mut out = vec![];
    for arch in Arch::ALL {
        for ab in [DType::Bf16, DType::F16] {
            for c in [DType::F32, ab] {
                for (ta, tb) in [(false, false), (false, true), (true, false), (true, true)] {
                    for align in [Align::Vec8, Align::Elem] {
                        out.push(KernelConfig::new(arch, ab, c, ta, tb, align));
                    }
                }
            }
        }
    }
    out
}
