//! What the CPU offers the kernels: instruction-set features and cache sizes, read once per
//! process.
//!
//! * AVX-512F and AVX512_BF16 come from `is_x86_feature_detected!` (which also checks that the OS
//!   saves the zmm state).
//! * AMX is not covered by the stable `is_x86_feature_detected!` (its names are unstable), so it is
//!   read from CPUID leaf 7 sub-leaf 0, EDX bits 22 (AMX-BF16) and 24 (AMX-TILE) (Intel SDM vol. 2A,
//!   CPUID, "Structured Extended Feature Flags"), and then Linux must grant the process the
//!   tile-data state: `arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)` (Linux
//!   Documentation/arch/x86/xstate.rst); until that call succeeds the first tile instruction
//!   faults. The request is made once, here, and AMX counts as present only if it succeeded.
//! * Cache sizes come from sysfs (`/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}`),
//!   which Linux fills from CPUID leaf 4 (Intel) or 0x8000_001D (AMD); without sysfs a
//!   conservative default is used (32 KiB L1d, 1 MiB L2).

use std::sync::OnceLock;

/// The features the host paths depend on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuFeatures {
    /// AVX-512 Foundation (zmm FMA): the crate's f32 kernel.
    pub avx512f: bool,
    /// AVX512_BF16 (`vdpbf16ps`).
    pub avx512bf16: bool,
    /// AMX-TILE and AMX-BF16 in CPUID, with the OS's permission to use tile data granted.
    pub amx_bf16: bool,
    /// AMX-TILE and AMX-BF16 in CPUID but the OS refused the tile-data permission (why, if so).
    pub amx_refused: Option<&'static str>,
}

impl CpuFeatures {
    /// This CPU's features (detected once; the AMX permission is requested on the first call).
    pub fn detect() -> Self {
        static FEATURES: OnceLock<CpuFeatures> = OnceLock::new();
        *FEATURES.get_or_init(detect)
    }

    /// The names of the detected features, for messages (`avx512f avx512_bf16 amx_bf16`).
    pub fn names(&self) -> String {
        let mut v = Vec::new();
        if self.avx512f {
            v.push("avx512f");
        }
        if self.avx512bf16 {
            v.push("avx512_bf16");
        }
        if self.amx_bf16 {
            v.push("amx_bf16");
        }
        if v.is_empty() {
            "no AVX-512 or AMX".to_string()
        } else {
            v.join(" ")
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn detect() -> CpuFeatures {
    let avx512f = std::arch::is_x86_feature_detected!("avx512f");
    let avx512bf16 = avx512f && std::arch::is_x86_feature_detected!("avx512bf16");
    let (amx_bf16, amx_refused) = if amx_in_cpuid() {
        match amx::request_permission() {
            Ok(()) => (true, None),
            Err(why) => (false, Some(why)),
        }
    } else {
        (false, None)
    };
    CpuFeatures { avx512f, avx512bf16, amx_bf16, amx_refused }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> CpuFeatures {
    CpuFeatures::default()
}

/// CPUID.(EAX=7, ECX=0):EDX bit 22 (AMX-BF16) and bit 24 (AMX-TILE).
#[cfg(target_arch = "x86_64")]
fn amx_in_cpuid() -> bool {
    use core::arch::x86_64::{__cpuid, __cpuid_count};
    // Leaf 0 gives the highest standard leaf; leaf 7 is read only when it exists.
    if __cpuid(0).eax < 7 {
        return false;
    }
    let edx = __cpuid_count(7, 0).edx;
    edx & (1 << 22) != 0 && edx & (1 << 24) != 0
}

#[cfg(target_arch = "x86_64")]
mod amx {
    /// `ARCH_REQ_XCOMP_PERM` (arch/x86/include/uapi/asm/prctl.h).
    const ARCH_REQ_XCOMP_PERM: libc::c_int = 0x1023;
    /// The XSAVE component number of AMX tile data (Intel SDM vol. 1, 13.2).
    const XFEATURE_XTILEDATA: libc::c_ulong = 18;

    /// Asks Linux for permission to use AMX tile data in this process (once per process; the
    /// permission is process-wide and cannot be revoked).
    #[cfg(target_os = "linux")]
    pub(super) fn request_permission() -> Result<(), &'static str> {
        // SAFETY: arch_prctl with ARCH_REQ_XCOMP_PERM takes an integer feature number and writes no
        // memory of ours; it either grants the permission or fails with an errno.
        let rc = unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) };
        if rc == 0 {
            Ok(())
        } else {
            Err("the kernel refused arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)")
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn request_permission() -> Result<(), &'static str> {
        Err("AMX tile data is only requested on Linux")
    }
}

/// Data-cache sizes per core, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheSizes {
    pub l1d: usize,
    pub l2: usize,
    /// Where it came from: `sysfs` or `default`.
    pub source: &'static str,
}

impl CacheSizes {
    /// The sizes when the OS does not say: the smallest L1d (32 KiB) and L2 (1 MiB) of the
    /// AVX-512 CPUs this crate targets (Skylake-SP to Sapphire Rapids, Zen4/Zen5).
    pub const DEFAULT: CacheSizes = CacheSizes { l1d: 32 << 10, l2: 1 << 20, source: "default" };

    /// cpu0's L1 data and L2 sizes (read once per process).
    pub fn detect() -> Self {
        static SIZES: OnceLock<CacheSizes> = OnceLock::new();
        *SIZES.get_or_init(|| read_sysfs().unwrap_or(Self::DEFAULT))
    }
}

/// Parses sysfs sizes such as `48K`, `2048K`, `1M`.
pub(crate) fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, mult) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<usize>().ok().map(|n| n * mult)
}

fn read_sysfs() -> Option<CacheSizes> {
    let (mut l1d, mut l2) = (None, None);
    for index in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
        let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size")) else {
            continue;
        };
        let size = parse_size(&size);
        match (level.trim(), kind.trim()) {
            ("1", "Data") => l1d = size,
            ("2", "Unified" | "Data") => l2 = size,
            _ => {}
        }
    }
    Some(CacheSizes { l1d: l1d?, l2: l2?, source: "sysfs" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_sizes_parse() {
        assert_eq!(parse_size("48K\n"), Some(48 << 10));
        assert_eq!(parse_size("2048K"), Some(2 << 20));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn detected_features_are_consistent() {
        let f = CpuFeatures::detect();
        assert!(!f.avx512bf16 || f.avx512f);
        assert!(!(f.amx_bf16 && f.amx_refused.is_some()));
        let c = CacheSizes::detect();
        assert!(c.l1d >= 8 << 10 && c.l2 >= c.l1d, "{c:?}");
    }
}
