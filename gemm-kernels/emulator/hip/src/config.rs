//! The emulated machine's description: the `GEMM_EMU_HIP` spec and
//! `gemm_emu_hip_configure`.
//!
//! A spec is `key=value` pairs separated by `;`, applied over the defaults:
//! `devices=gfx942,gfx950` (an empty list: no device), `memory=BYTES` per device,
//! `version=INT` (`hipRuntimeGetVersion`; below 60000000 means the ROCm 5 ABI),
//! `jitter_us=N`, `seed=N`, `mode=fair|random|longest-latency|reversed`, `checkers=on|off`,
//! `collective_timeout_ms=N`, `launch_threads=N`, `cus=N` (the compute units every device
//! reports, as a partitioned GPU does: an MI300X in CPX mode shows 38 per partition; default
//! the whole chip's, 304 on gfx942 and 256 on gfx950), `nccl=local|tcp` (what unique ids
//! `ncclGetUniqueId` makes: for ranks in this process, or for ranks in any process, over TCP;
//! see `nccl_tcp`).

use gemm_emu::{Arch, Mode};

/// `HIP_VERSION` of ROCm 6.3.4 (`hip_version.h`: major * 10^7 + minor * 10^5 + patch).
pub const DEFAULT_VERSION: i32 = 60_342_134;
/// `NCCL_VERSION_CODE` reported by `ncclGetVersion`: RCCL 2.21.5 (ROCm 6.3).
pub const NCCL_VERSION_CODE: i32 = 22_105;

/// One emulated machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// One entry per device ordinal.
    pub devices: Vec<Arch>,
    /// Capacity of each device, bytes (`hipDeviceTotalMem`).
    pub memory: u64,
    /// `hipRuntimeGetVersion` and `hipDriverGetVersion`.
    pub version: i32,
    /// Upper bound of the random sleep before each stream operation, microseconds.
    pub jitter_us: u64,
    /// Seed of the jitter and of the emulator's wave scheduler.
    pub seed: u64,
    /// The emulator's wave scheduling mode.
    pub mode: Mode,
    /// Race detector on, and any checker finding fails the launch.
    pub checkers: bool,
    /// How long a collective waits for the other ranks before it fails.
    pub collective_timeout_ms: u64,
    /// Host threads one emulated launch uses (0: all cores).
    pub launch_threads: usize,
    /// The compute units each device reports (`hipDeviceAttributeMultiprocessorCount`,
    /// `multiProcessorCount`); `None`: the whole chip's.
    pub cus: Option<i32>,
    /// `ncclGetUniqueId` makes ids of the cross-process TCP transport (`nccl=tcp`).
    pub nccl_tcp: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            devices: vec![Arch::Gfx942, Arch::Gfx942],
            memory: 1 << 30,
            version: DEFAULT_VERSION,
            jitter_us: 0,
            seed: 0,
            mode: Mode::Fair,
            checkers: true,
            collective_timeout_ms: 10_000,
            launch_threads: 0,
            cus: None,
            nccl_tcp: false,
        }
    }
}

/// Why a spec was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A pair without `=`.
    #[error("`{0}` is not key=value")]
    NotAPair(String),
    /// A key this library does not know.
    #[error("unknown key `{0}`")]
    UnknownKey(String),
    /// A value that does not parse for its key.
    #[error("bad value `{value}` for `{key}`: {why}")]
    BadValue {
        /// The key.
        key: String,
        /// The value.
        value: String,
        /// Why.
        why: String,
    },
}

impl Config {
    /// Parses `spec` over the defaults.
    pub fn parse(spec: &str) -> Result<Self, ConfigError> {
        let mut c = Self::default();
        for pair in spec.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').ok_or_else(|| ConfigError::NotAPair(pair.into()))?;
            let (key, value) = (key.trim(), value.trim());
            let bad = |why: &str| ConfigError::BadValue { key: key.into(), value: value.into(), why: why.into() };
            let num = || value.parse::<u64>().map_err(|_| bad("not a non-negative integer"));
            match key {
                "devices" => {
                    c.devices = value
                        .split(',')
                        .map(str::trim)
                        .filter(|d| !d.is_empty())
                        .map(|d| match d {
                            "gfx942" => Ok(Arch::Gfx942),
                            "gfx950" => Ok(Arch::Gfx950),
                            _ => Err(bad("devices are gfx942 or gfx950")),
                        })
                        .collect::<Result<_, _>>()?;
                }
                "memory" => c.memory = num()?,
                "version" => c.version = value.parse().map_err(|_| bad("not an int"))?,
                "jitter_us" => c.jitter_us = num()?,
                "seed" => c.seed = num()?,
                "mode" => {
                    c.mode = Mode::parse(value).ok_or_else(|| bad("fair, random, longest-latency or reversed"))?
                }
                "checkers" => {
                    c.checkers = match value {
                        "on" => true,
                        "off" => false,
                        _ => return Err(bad("on or off")),
                    }
                }
                "collective_timeout_ms" => c.collective_timeout_ms = num()?,
                "nccl" => {
                    c.nccl_tcp = match value {
                        "tcp" => true,
                        "local" => false,
                        _ => return Err(bad("local or tcp")),
                    }
                }
                "launch_threads" => c.launch_threads = num()? as usize,
                "cus" => {
                    c.cus = Some(
                        num()?.try_into().ok().filter(|&n: &i32| n >= 1).ok_or_else(|| bad("from 1 to 2^31 - 1"))?,
                    )
                }
                _ => return Err(ConfigError::UnknownKey(key.into())),
            }
        }
        Ok(c)
    }

    /// Whether the configured runtime is ROCm 5 (`hipDeviceProp_t` is the R0000 layout and
    /// some attribute values differ).
    pub fn rocm5(&self) -> bool {
        self.version < 60_000_000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_over_defaults() {
        assert_eq!(Config::parse("").unwrap(), Config::default());
        let c = Config::parse(" devices=gfx950, gfx942 ; memory=4096;version=50221153;jitter_us=5;seed=3;mode=random;checkers=off;collective_timeout_ms=50;").unwrap();
        assert_eq!(c.devices, vec![Arch::Gfx950, Arch::Gfx942]);
        assert_eq!((c.memory, c.version, c.jitter_us, c.seed), (4096, 50_221_153, 5, 3));
        assert_eq!((c.mode, c.checkers, c.collective_timeout_ms), (Mode::Random, false, 50));
        assert!(c.rocm5());
        assert!(Config::parse("devices=").unwrap().devices.is_empty());
        assert_eq!(Config::parse("cus=38").unwrap().cus, Some(38));
        for bad in ["cus=0", "cus=-1", "cus=4294967296"] {
            assert!(matches!(Config::parse(bad), Err(ConfigError::BadValue { .. })), "{bad}");
        }
        assert!(matches!(Config::parse("devices=gfx90a"), Err(ConfigError::BadValue { .. })));
        assert!(matches!(Config::parse("colour=red"), Err(ConfigError::UnknownKey(_))));
        assert!(matches!(Config::parse("memory"), Err(ConfigError::NotAPair(_))));
        assert!(matches!(Config::parse("memory=-1"), Err(ConfigError::BadValue { .. })));
    }
}
