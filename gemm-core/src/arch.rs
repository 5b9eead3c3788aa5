//! The two GPU architectures and what a kernel or a report needs to know about them.
//!
//! Figures from `shared/reference/ARCH.md` (ROCm gpu-specs, the AMD matrix-cores blog) and
//! `shared/reference/ISA.md` (LDS sizes checked with llc-22, MFMA cycles from LLVM's SISchedule.td).

use crate::dtype::DType;
use crate::error::{Error, Result};

/// A GPU instruction-set architecture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum Arch {
    /// CDNA3: MI300X, MI325X.
    Gfx942 = 0,
    /// CDNA4: MI350X, MI355X.
    Gfx950 = 1,
}

/// Which fp8 encoding an architecture's matrix cores read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FpFlavour {
    /// E4M3FNUZ / E5M2FNUZ (gfx942).
    Fnuz,
    /// OCP E4M3FN / E5M2 (gfx950).
    Ocp,
}

/// One MFMA shape: `D(m x n, f32) = A(m x k) * B(k x n) + C` per wave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MfmaShape {
    /// LLVM mnemonic.
    pub name: &'static str,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    /// Input family: F32, F16, Bf16, or an fp8 dtype standing for both fp8 kinds of the arch.
    pub input: DType,
    /// Issue cycles (passes x 4).
    pub cycles: u32,
}

/// Capabilities of an architecture (figures for its flagship part).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArchCaps {
    pub arch: Arch,
    pub name: &'static str,
    /// The product the peak figures describe.
    pub product: &'static str,
    pub compute_units: u32,
    /// Accelerator complex dies (XCDs) the compute units are spread over, each with its own L2
    /// (ARCH.md "XCDs x CUs": 8 on both); workgroups are dealt to them round-robin.
    pub xcds: u32,
    /// Bytes of LDS one workgroup may allocate.
    pub lds_bytes: u32,
    pub lds_banks: u32,
    pub peak_clock_mhz: u32,
    /// The engine clock with the matrix pipes fully busy, f16/bf16 (and f32) MFMAs `[0]`, fp8
    /// `[1]`: the clock the peak rate really runs at. gfx942: 1207 / 1230 MHz, the median clocks of
    /// hipBLASLt's max-achievable bf16 / fp8 GEMMs on MI300X (ROCm blog "Measuring Max-Achievable
    /// FLOPs - Part 2", TIMING.md); gfx950: 1536 / 1611 MHz, the lowest clocks that the fastest
    /// published MI355X figures allow: the Gluon tutorial's v8_sliceMN, 1569 TFLOP/s at 97.40%
    /// MFMA busy (f16), and HipKittens' fp8 GEMM, 3377.75 TFLOP/s at 16384^3 (issue 24 item 6;
    /// sources and arithmetic in the emulator's timing/PARAMETERS.md). The timing model's
    /// `Params::loaded_mhz` rows are the same figures (a lab test holds them equal).
    pub loaded_clock_mhz: [f64; 2],
    pub wavefront_size: u32,
    /// Bytes per lane a direct global->LDS load moves (4 on gfx942, 16 on gfx950).
    pub lds_dma_bytes_per_lane: u32,
    pub fp8: FpFlavour,
    /// Peak dense matrix TFLOP/s for f32, f16/bf16 and fp8.
    pub peak_tflops_f32: f64,
    pub peak_tflops_f16: f64,
    pub peak_tflops_fp8: f64,
    pub hbm_bytes: u64,
    pub hbm_tbps: f64,
    pub mfma: &'static [MfmaShape],
}

const fn shape(name: &'static str, m: u32, n: u32, k: u32, input: DType, cycles: u32) -> MfmaShape {
    MfmaShape { name, m, n, k, input, cycles }
}

const GFX942_MFMA: &[MfmaShape] = &[
    shape("v_mfma_f32_32x32x2_f32", 32, 32, 2, DType::F32, 64),
    shape("v_mfma_f32_16x16x4_f32", 16, 16, 4, DType::F32, 32),
    shape("v_mfma_f32_32x32x8_f16", 32, 32, 8, DType::F16, 32),
    shape("v_mfma_f32_16x16x16_f16", 16, 16, 16, DType::F16, 16),
    shape("v_mfma_f32_32x32x8_bf16", 32, 32, 8, DType::Bf16, 32),
    shape("v_mfma_f32_16x16x16_bf16", 16, 16, 16, DType::Bf16, 16),
    shape("v_mfma_f32_32x32x16_fp8_fp8", 32, 32, 16, DType::Fp8E4M3Fnuz, 32),
    shape("v_mfma_f32_16x16x32_fp8_fp8", 16, 16, 32, DType::Fp8E4M3Fnuz, 16),
];

const GFX950_MFMA: &[MfmaShape] = &[
    shape("v_mfma_f32_32x32x2_f32", 32, 32, 2, DType::F32, 64),
    shape("v_mfma_f32_16x16x4_f32", 16, 16, 4, DType::F32, 32),
    shape("v_mfma_f32_32x32x8_f16", 32, 32, 8, DType::F16, 32),
    shape("v_mfma_f32_16x16x16_f16", 16, 16, 16, DType::F16, 16),
    shape("v_mfma_f32_32x32x8_bf16", 32, 32, 8, DType::Bf16, 32),
    shape("v_mfma_f32_16x16x16_bf16", 16, 16, 16, DType::Bf16, 16),
    // The double-rate shapes: twice the K in the same cycles. The old ones run at half peak here.
    shape("v_mfma_f32_32x32x16_f16", 32, 32, 16, DType::F16, 32),
    shape("v_mfma_f32_16x16x32_f16", 16, 16, 32, DType::F16, 16),
    shape("v_mfma_f32_32x32x16_bf16", 32, 32, 16, DType::Bf16, 32),
    shape("v_mfma_f32_16x16x32_bf16", 16, 16, 32, DType::Bf16, 16),
    shape("v_mfma_f32_32x32x16_fp8_fp8", 32, 32, 16, DType::Fp8E4M3, 32),
    shape("v_mfma_f32_16x16x32_fp8_fp8", 16, 16, 32, DType::Fp8E4M3, 16),
    shape("v_mfma_scale_f32_16x16x128_f8f6f4", 16, 16, 128, DType::Fp8E4M3, 32),
    shape("v_mfma_scale_f32_32x32x64_f8f6f4", 32, 32, 64, DType::Fp8E4M3, 64),
];

const GFX942: ArchCaps = ArchCaps {
    arch: Arch::Gfx942,
    name: "gfx942",
    product: "MI300X",
    compute_units: 304,
    xcds: 8,
    lds_bytes: 65536,
    lds_banks: 32,
    peak_clock_mhz: 2100,
    loaded_clock_mhz: [1207.0, 1230.0],
    wavefront_size: 64,
    lds_dma_bytes_per_lane: 4,
    fp8: FpFlavour::Fnuz,
    peak_tflops_f32: 163.4,
    peak_tflops_f16: 1307.4,
    peak_tflops_fp8: 2614.9,
    hbm_bytes: 192_000_000_000,
    hbm_tbps: 5.3,
    mfma: GFX942_MFMA,
};

const GFX950: ArchCaps = ArchCaps {
    arch: Arch::Gfx950,
    name: "gfx950",
    product: "MI355X",
    compute_units: 256,
    xcds: 8,
    lds_bytes: 163840,
    lds_banks: 64,
    peak_clock_mhz: 2400,
    loaded_clock_mhz: [1536.0, 1611.0],
    wavefront_size: 64,
    lds_dma_bytes_per_lane: 16,
    fp8: FpFlavour::Ocp,
    peak_tflops_f32: 157.3,
    peak_tflops_f16: 2516.6,
    peak_tflops_fp8: 5033.0,
    hbm_bytes: 288_000_000_000,
    hbm_tbps: 8.0,
    mfma: GFX950_MFMA,
};

impl Arch {
    pub const ALL: [Arch; 2] = [Arch::Gfx942, Arch::Gfx950];

    pub const fn caps(self) -> &'static ArchCaps {
        match self {
            Arch::Gfx942 => &GFX942,
            Arch::Gfx950 => &GFX950,
        }
    }

    pub const fn name(self) -> &'static str {
        self.caps().name
    }

    /// Parses `gfx942`, or a full target id such as `gfx942:sramecc+:xnack-` as HIP reports it.
    pub fn from_target_id(s: &str) -> Result<Self> {
        let base = s.split(':').next().unwrap_or("").trim().to_ascii_lowercase();
        Self::ALL.into_iter().find(|a| a.name() == base).ok_or_else(|| Error::UnknownArch(s.to_string()))
    }

    /// gfx940 and later have architected flat scratch (AMDGPUUsage "Flat Scratch"): no
    /// flat-scratch-init or private-segment-buffer user SGPRs, and LLVM always reserves 6 extra
    /// SGPRs (VCC, XNACK mask, flat scratch).
    pub const fn has_architected_flat_scratch(self) -> bool {
        true
    }

    /// Highest `.amdhsa_next_free_sgpr` the assembler accepts on GFX9 (102 addressable SGPRs;
    /// the extra VCC/XNACK/flat-scratch SGPRs come on top).
    pub const fn addressable_sgprs(self) -> u32 {
        102
    }

    /// Unified VGPR file per lane on gfx90a/gfx940/gfx950: 256 ArchVGPRs + 256 AccVGPRs.
    pub const fn total_vgprs(self) -> u32 {
        512
    }

    /// At most 16 user SGPRs are initialised (AMDGPUUsage "Initial Kernel Execution State").
    pub const fn max_user_sgprs(self) -> u32 {
        16
    }

    /// gfx940/gfx950 can preload kernel arguments into user SGPRs (AMDGPUUsage "Preloaded
    /// Kernel Arguments").
    pub const fn supports_kernarg_preload(self) -> bool {
        true
    }

    /// Whether the matrix cores read this dtype (fp8 only in the arch's own flavour).
    pub fn supports(self, d: DType) -> bool {
        match d {
            DType::F32 | DType::F16 | DType::Bf16 => true,
            DType::Fp8E4M3Fnuz | DType::Fp8E5M2Fnuz => self.caps().fp8 == FpFlavour::Fnuz,
            DType::Fp8E4M3 | DType::Fp8E5M2 => self.caps().fp8 == FpFlavour::Ocp,
            // Only gfx950's scaled MFMAs read fp6/fp4, and only inside block-scaled GEMMs: no
            // plain GEMM runs them (`crate::block_scaled` checks its own arch rules).
            DType::Fp6E2M3 | DType::Fp6E3M2 | DType::Fp4E2M1 => false,
        }
    }

    /// Peak dense TFLOP/s for inputs of `d`.
    pub fn peak_tflops(self, d: DType) -> f64 {
        let c = self.caps();
        match d {
            DType::F32 => c.peak_tflops_f32,
            DType::F16 | DType::Bf16 => c.peak_tflops_f16,
            _ => c.peak_tflops_fp8,
        }
    }

    /// The dense matrix rate the chip sustains with its matrix pipes fully busy, in TFLOP/s:
    /// [`Self::peak_tflops`] scaled from the peak clock to [`ArchCaps::loaded_clock_mhz`]. No
    /// kernel computes faster; `xf32` multiplies f32 inputs at xf32 precision (gfx942: 4x the
    /// f32 rate, CDNA3 ISA `V_MFMA_F32_*_XF32`).
    pub fn mfma_ceiling_tflops(self, d: DType, xf32: bool) -> f64 {
        let c = self.caps();
        let peak = if xf32 && d == DType::F32 { 4.0 * c.peak_tflops_f32 } else { self.peak_tflops(d) };
        let loaded = c.loaded_clock_mhz[usize::from(d.is_fp8())];
        peak * loaded / f64::from(c.peak_clock_mhz)
    }
}

impl core::fmt::Display for Arch {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl core::str::FromStr for Arch {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::from_target_id(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Peak = 2*M*N*K per MFMA x matrix cores (4 per CU) x clock / cycles, the formula of the AMD
    /// matrix-cores blog; the tabled figures must agree with their own MFMA tables.
    #[test]
    fn peak_figures_follow_from_the_mfma_tables() {
        for arch in Arch::ALL {
            let c = arch.caps();
            let best = |d: DType| {
                c.mfma
                    .iter()
                    .filter(|s| s.input == d || (d.is_fp8() && s.input.is_fp8() && !s.name.contains("scale")))
                    .map(|s| {
                        2.0 * f64::from(s.m * s.n * s.k)
                            * f64::from(4 * c.compute_units)
                            * f64::from(c.peak_clock_mhz)
                            * 1e6
                            / f64::from(s.cycles)
                            / 1e12
                    })
                    .fold(0.0, f64::max)
            };
            assert!((best(DType::Bf16) - c.peak_tflops_f16).abs() / c.peak_tflops_f16 < 0.001, "{arch}");
            assert!((best(DType::F32) - c.peak_tflops_f32).abs() / c.peak_tflops_f32 < 0.001, "{arch}");
        }
    }

    #[test]
    fn target_ids_parse() {
        assert_eq!(Arch::from_target_id("gfx942:sramecc+:xnack-").unwrap(), Arch::Gfx942);
        assert_eq!("gfx950".parse::<Arch>().unwrap(), Arch::Gfx950);
        assert!(Arch::from_target_id("gfx90a").is_err());
        assert!(Arch::Gfx942.supports(DType::Fp8E4M3Fnuz));
        assert!(!Arch::Gfx942.supports(DType::Fp8E4M3));
        assert!(Arch::Gfx950.supports(DType::Fp8E5M2));
    }
}
