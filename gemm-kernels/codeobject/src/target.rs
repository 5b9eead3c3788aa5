//! Processors and target IDs: what goes into `e_flags` and `amdhsa.target`.
//!
//! AMDGPUUsage "Processors" and "Target ID" sections; the `e_flags` layout is AMDGPUUsage
//! "AMDGPU ELF Header" table "AMDGPU ELF Header e_flags for Code Object V4 and After"
//! (ISA.md 5.1): `EF_AMDGPU_MACH` in bits 7:0, `EF_AMDGPU_FEATURE_XNACK_V4` in 9:8,
//! `EF_AMDGPU_FEATURE_SRAMECC_V4` in 11:10, and (code object v6 only) a generic version in
//! 31:24.

use std::fmt;

/// `EF_AMDGPU_MACH` mask (bits 7:0).
pub const EF_AMDGPU_MACH: u32 = 0xff;
/// `EF_AMDGPU_MACH_AMDGCN_GFX942`.
pub const EF_AMDGPU_MACH_AMDGCN_GFX942: u32 = 0x04c;
/// `EF_AMDGPU_MACH_AMDGCN_GFX950`.
pub const EF_AMDGPU_MACH_AMDGCN_GFX950: u32 = 0x04f;
/// `EF_AMDGPU_FEATURE_XNACK_V4` field mask.
pub const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
/// `EF_AMDGPU_FEATURE_SRAMECC_V4` field mask.
pub const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
/// `EF_AMDGPU_GENERIC_VERSION` (v6) mask.
pub const EF_AMDGPU_GENERIC_VERSION: u32 = 0xff00_0000;

/// The processors this crate writes code objects for: the one `gemm_core::Arch` every crate
/// speaks.
pub use gemm_core::Arch;

/// The `EF_AMDGPU_MACH` value of a processor.
pub const fn elf_mach(arch: Arch) -> u32 {
    match arch {
        Arch::Gfx942 => EF_AMDGPU_MACH_AMDGCN_GFX942,
        Arch::Gfx950 => EF_AMDGPU_MACH_AMDGCN_GFX950,
    }
}

/// The processor for an `EF_AMDGPU_MACH` value, if it is one we know.
pub const fn arch_from_elf_mach(mach: u32) -> Option<Arch> {
    match mach {
        EF_AMDGPU_MACH_AMDGCN_GFX942 => Some(Arch::Gfx942),
        EF_AMDGPU_MACH_AMDGCN_GFX950 => Some(Arch::Gfx950),
        _ => None,
    }
}

/// The setting of a target feature (XNACK, SRAMECC) in a target ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FeatureSetting {
    /// Not named in the target ID: the code runs either way ("any").
    #[default]
    Any,
    /// `feature-`.
    Off,
    /// `feature+`.
    On,
}

/// A processor plus its target-feature settings: a target ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// The processor.
    pub arch: Arch,
    /// XNACK replay setting.
    pub xnack: FeatureSetting,
    /// SRAMECC setting.
    pub sramecc: FeatureSetting,
}

impl Target {
    /// The target with both features "any", which is what LLVM produces for a bare
    /// `-mcpu=gfx942` (e_flags 0x54C / 0x54F, ISA.md 5.1).
    pub const fn new(arch: Arch) -> Target {
        Target { arch, xnack: FeatureSetting::Any, sramecc: FeatureSetting::Any }
    }

    /// The ELF header's `e_flags` for code object v4/v5.
    pub const fn e_flags(&self) -> u32 {
        let xnack = match self.xnack {
            FeatureSetting::Any => 0x100,
            FeatureSetting::Off => 0x200,
            FeatureSetting::On => 0x300,
        };
        let sramecc = match self.sramecc {
            FeatureSetting::Any => 0x400,
            FeatureSetting::Off => 0x800,
            FeatureSetting::On => 0xc00,
        };
        elf_mach(self.arch) | xnack | sramecc
    }

    /// Decodes `e_flags`. Returns the `EF_AMDGPU_MACH` value as the error when it names a
    /// processor this crate does not know. An "unsupported" (0) feature field reads as
    /// [`FeatureSetting::Any`].
    pub const fn from_e_flags(flags: u32) -> Result<Target, u32> {
        let mach = flags & EF_AMDGPU_MACH;
        let Some(arch) = arch_from_elf_mach(mach) else {
            return Err(mach);
        };
        let xnack = match flags & EF_AMDGPU_FEATURE_XNACK_V4 {
            0x200 => FeatureSetting::Off,
            0x300 => FeatureSetting::On,
            _ => FeatureSetting::Any,
        };
        let sramecc = match flags & EF_AMDGPU_FEATURE_SRAMECC_V4 {
            0x800 => FeatureSetting::Off,
            0xc00 => FeatureSetting::On,
            _ => FeatureSetting::Any,
        };
        Ok(Target { arch, xnack, sramecc })
    }

    /// The canonical target ID string for `amdhsa.target` (AMDGPUUsage "Target ID"):
    /// `amdgcn-amd-amdhsa--gfx942`, with `:sramecc±` then `:xnack±` appended for features
    /// that are not "any" (features in alphabetical order).
    pub fn target_id(&self) -> String {
        let mut s = format!("amdgcn-amd-amdhsa--{}", self.arch.name());
        for (name, setting) in [("sramecc", self.sramecc), ("xnack", self.xnack)] {
            match setting {
                FeatureSetting::Any => {}
                FeatureSetting::On => s.push_str(&format!(":{name}+")),
                FeatureSetting::Off => s.push_str(&format!(":{name}-")),
            }
        }
        s
    }

    /// Parses a target ID such as `amdgcn-amd-amdhsa--gfx942:xnack-` (the form in
    /// `amdhsa.target`). `None` for anything else.
    pub fn parse_target_id(id: &str) -> Option<Target> {
        let rest = id.strip_prefix("amdgcn-amd-amdhsa--")?;
        let mut parts = rest.split(':');
        let arch: Arch = parts.next()?.parse().ok()?;
        let mut t = Target::new(arch);
        for p in parts {
            let (name, setting) = if let Some(n) = p.strip_suffix('+') {
                (n, FeatureSetting::On)
            } else if let Some(n) = p.strip_suffix('-') {
                (n, FeatureSetting::Off)
            } else {
                return None;
            };
            match name {
                "xnack" => t.xnack = setting,
                "sramecc" => t.sramecc = setting,
                _ => return None,
            }
        }
        Some(t)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.target_id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e_flags_match_llvm_defaults() {
        // ISA.md 5.1: a bare -mcpu gives xnack=any, sramecc=any.
        assert_eq!(Target::new(Arch::Gfx942).e_flags(), 0x54c);
        assert_eq!(Target::new(Arch::Gfx950).e_flags(), 0x54f);
        let t = Target { arch: Arch::Gfx942, xnack: FeatureSetting::Off, sramecc: FeatureSetting::On };
        assert_eq!(t.e_flags(), 0xe4c);
        assert_eq!(Target::from_e_flags(t.e_flags()), Ok(t));
        assert_eq!(Target::from_e_flags(0x30), Err(0x30));
    }

    #[test]
    fn target_ids_round_trip() {
        assert_eq!(Target::new(Arch::Gfx950).target_id(), "amdgcn-amd-amdhsa--gfx950");
        let t = Target { arch: Arch::Gfx942, xnack: FeatureSetting::Off, sramecc: FeatureSetting::On };
        assert_eq!(t.target_id(), "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-");
        assert_eq!(Target::parse_target_id(&t.target_id()), Some(t));
        assert_eq!(Target::parse_target_id("amdgcn-amd-amdhsa--gfx1100"), None);
        assert_eq!(Target::parse_target_id("amdgcn-amd-amdhsa--gfx942:foo+"), None);
    }
}
