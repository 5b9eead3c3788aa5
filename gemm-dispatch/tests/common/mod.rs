//! Inputs shared by the emulated-device tests (`emu.rs`, `transpose_prepass.rs`).

use gemm_core::Element;

/// Multiples of 1/4 in [-2, 2] (exact in every fp8 flavour), from `seed`.
pub fn quarters<T: Element>(n: usize, seed: u64) -> Vec<T> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            T::from_f32(((x >> 33) % 17) as f32 * 0.25 - 2.0)
        })
        .collect()
}
