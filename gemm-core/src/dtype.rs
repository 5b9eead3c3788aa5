//! Element types and the trait that ties a Rust storage type to its [`DType`].

use crate::error::{Error, Result};
use crate::fp8::{Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz};
use half::{bf16, f16};

/// The element types the library knows. Storage types only: every GEMM accumulates in f32 on the
/// GPU (MFMA accumulates in f32) and the host backend does the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u32)]
pub enum DType {
    F32 = 0,
    F16 = 1,
    Bf16 = 2,
    /// gfx942 fp8 (E4M3FNUZ).
    Fp8E4M3Fnuz = 3,
    /// gfx942 bf8 (E5M2FNUZ).
    Fp8E5M2Fnuz = 4,
    /// gfx950 fp8 (OCP E4M3FN).
    Fp8E4M3 = 5,
    /// gfx950 bf8 (OCP E5M2).
    Fp8E5M2 = 6,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 7] =
        [DType::F32, DType::F16, DType::Bf16, DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz, DType::Fp8E4M3, DType::Fp8E5M2];

    /// Bytes per element.
    pub const fn size_bytes(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F16 | DType::Bf16 => 2,
            DType::Fp8E4M3Fnuz | DType::Fp8E5M2Fnuz | DType::Fp8E4M3 | DType::Fp8E5M2 => 1,
        }
    }

    /// The name used by the CLI, the C header and kernel names.
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::Bf16 => "bf16",
            DType::Fp8E4M3Fnuz => "fp8_e4m3fnuz",
            DType::Fp8E5M2Fnuz => "fp8_e5m2fnuz",
            DType::Fp8E4M3 => "fp8_e4m3",
            DType::Fp8E5M2 => "fp8_e5m2",
        }
    }

    /// Whether this is one of the 8-bit float kinds.
    pub const fn is_fp8(self) -> bool {
        self.size_bytes() == 1
    }

    /// Machine epsilon of the storage type (distance from 1.0 to the next value), the unit of the
    /// tests' tolerances.
    pub const fn epsilon(self) -> f64 {
        match self {
            DType::F32 => 1.1920928955078125e-7,
            DType::F16 => 9.765625e-4,
            DType::Bf16 => 7.8125e-3,
            DType::Fp8E4M3Fnuz | DType::Fp8E4M3 => 0.125,
            DType::Fp8E5M2Fnuz | DType::Fp8E5M2 => 0.25,
        }
    }

    /// The numeric value of the C ABI's `gemm_dtype_t`.
    pub const fn to_raw(self) -> u32 {
        self as u32
    }

    /// From the C ABI's `gemm_dtype_t`.
    pub fn from_raw(raw: u32) -> Result<Self> {
        Self::ALL.get(raw as usize).copied().ok_or(Error::UnknownDType(raw))
    }
}

impl core::fmt::Display for DType {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl core::str::FromStr for DType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let lower = s.to_ascii_lowercase();
        let found = match lower.as_str() {
            "fp8" => Some(DType::Fp8E4M3),
            "bf8" => Some(DType::Fp8E5M2),
            _ => Self::ALL.iter().copied().find(|d| d.name() == lower),
        };
        found.ok_or_else(|| Error::UnknownDTypeName(s.to_string()))
    }
}

/// A Rust type that stores one element of a [`DType`].
///
/// Conversions go through f32 because that is what the hardware does (MFMA reads the storage type
/// and accumulates in f32; results are rounded from f32 to the output type with round-to-nearest
/// even).
pub trait Element: bytemuck::Pod + Send + Sync + Default + PartialEq + core::fmt::Debug + 'static {
    /// The dtype this type stores.
    const DTYPE: DType;
    /// Exact widening to f32.
    fn to_f32(self) -> f32;
    /// Narrowing with round-to-nearest-even.
    fn from_f32(v: f32) -> Self;
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        v
    }
}

macro_rules! element_via {
    ($t:ty, $d:expr) => {
        impl Element for $t {
            const DTYPE: DType = $d;
            #[inline(always)]
            fn to_f32(self) -> f32 {
                <$t>::to_f32(self)
            }
            #[inline(always)]
            fn from_f32(v: f32) -> Self {
                <$t>::from_f32(v)
            }
        }
    };
}

element_via!(f16, DType::F16);
element_via!(bf16, DType::Bf16);
element_via!(Fp8E4M3Fnuz, DType::Fp8E4M3Fnuz);
element_via!(Fp8E5M2Fnuz, DType::Fp8E5M2Fnuz);
element_via!(Fp8E4M3, DType::Fp8E4M3);
element_via!(Fp8E5M2, DType::Fp8E5M2);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_values_round_trip_and_unknown_ones_are_errors() {
        for d in DType::ALL {
            assert_eq!(DType::from_raw(d.to_raw()).unwrap(), d);
            assert_eq!(d.name().parse::<DType>().unwrap(), d);
        }
        assert_eq!(DType::from_raw(7), Err(Error::UnknownDType(7)));
        assert!("f64".parse::<DType>().is_err());
    }

    #[test]
    fn element_types_agree_with_their_dtype_sizes() {
        assert_eq!(core::mem::size_of::<f32>(), f32::DTYPE.size_bytes());
        assert_eq!(core::mem::size_of::<bf16>(), bf16::DTYPE.size_bytes());
        assert_eq!(core::mem::size_of::<f16>(), f16::DTYPE.size_bytes());
        assert_eq!(core::mem::size_of::<Fp8E4M3>(), Fp8E4M3::DTYPE.size_bytes());
        assert_eq!(bf16::from_f32(1.0 + 2f32.powi(-8)).to_f32(), 1.0, "bf16 rounds to nearest even");
    }
}
