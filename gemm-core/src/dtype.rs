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
    /// OCP MX fp6 E2M3 (6 bits; packed as [`crate::mx::pack`] does). Block-scaled GEMMs only.
    Fp6E2M3 = 7,
    /// OCP MX fp6 E3M2 ("bf6"; 6 bits, packed). Block-scaled GEMMs only.
    Fp6E3M2 = 8,
    /// OCP MX fp4 E2M1 (4 bits, two per byte, the lower-indexed element in the low nibble).
    /// Block-scaled GEMMs only.
    Fp4E2M1 = 9,
}

impl DType {
    /// Every dtype with a whole number of bytes per element, in declaration order: the dtypes of
    /// plain GEMMs, batches and kernels, which is what the loops over this list expect (each of
    /// them may call [`Self::size_bytes`]). [`Self::EVERY`] adds the sub-byte ones.
    pub const ALL: [DType; 7] =
        [DType::F32, DType::F16, DType::Bf16, DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz, DType::Fp8E4M3, DType::Fp8E5M2];

    /// The sub-byte dtypes (OCP MX fp6 and fp4): elements of block-scaled GEMMs only
    /// (`gemm_core::block_scaled`), refused by every plain GEMM path ([`Error::SubByteDType`]).
    pub const SUB_BYTE: [DType; 3] = [DType::Fp6E2M3, DType::Fp6E3M2, DType::Fp4E2M1];

    /// Every dtype, in declaration order (= C value order): [`Self::ALL`] then [`Self::SUB_BYTE`].
    pub const EVERY: [DType; 10] = [
        DType::F32,
        DType::F16,
        DType::Bf16,
        DType::Fp8E4M3Fnuz,
        DType::Fp8E5M2Fnuz,
        DType::Fp8E4M3,
        DType::Fp8E5M2,
        DType::Fp6E2M3,
        DType::Fp6E3M2,
        DType::Fp4E2M1,
    ];

    /// Bits per element (fp6 and fp4 are packed: a row of `k` elements is `k * bits / 8` bytes).
    pub const fn bits(self) -> u32 {
        match self {
            DType::F32 => 32,
            DType::F16 | DType::Bf16 => 16,
            DType::Fp8E4M3Fnuz | DType::Fp8E5M2Fnuz | DType::Fp8E4M3 | DType::Fp8E5M2 => 8,
            DType::Fp6E2M3 | DType::Fp6E3M2 => 6,
            DType::Fp4E2M1 => 4,
        }
    }

    /// Whether an element takes less than a byte (fp6, fp4): such a dtype has no
    /// [`Self::size_bytes`], and only block-scaled GEMMs take it.
    pub const fn is_sub_byte(self) -> bool {
        self.bits() < 8
    }

    /// Bytes per element, `None` for the sub-byte dtypes (whose sizes are in [`Self::bits`]).
    pub const fn byte_size(self) -> Option<usize> {
        if self.is_sub_byte() {
            None
        } else {
            Some(self.bits() as usize / 8)
        }
    }

    /// Bytes per element of a byte-sized dtype.
    ///
    /// # Panics
    /// For the sub-byte dtypes (fp6, fp4), which have no whole-byte size: every plain entry point
    /// refuses them first ([`crate::problem::check_dtypes`], called by
    /// [`crate::GemmProblem::validate`] before any size arithmetic, gives
    /// [`Error::SubByteDType`]), so reaching this with one is a bug of the caller, and a wrong
    /// byte count would silently size a buffer wrong. Use [`Self::byte_size`] or [`Self::bits`]
    /// where a sub-byte dtype may arrive.
    pub const fn size_bytes(self) -> usize {
        match self.byte_size() {
            Some(n) => n,
            None => panic!("sub-byte dtype (fp6/fp4) has no size in whole bytes: use DType::bits"),
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
            DType::Fp6E2M3 => "fp6_e2m3",
            DType::Fp6E3M2 => "fp6_e3m2",
            DType::Fp4E2M1 => "fp4_e2m1",
        }
    }

    /// Whether this is one of the 8-bit float kinds.
    pub const fn is_fp8(self) -> bool {
        self.bits() == 8
    }

    /// The OCP MX element format this dtype stores, if it is one (OCP fp8, fp6, fp4; not the
    /// FNUZ fp8 kinds of gfx942, which the MX specification does not define).
    pub const fn mx_format(self) -> Option<crate::mx::MxFormat> {
        use crate::mx::MxFormat;
        match self {
            DType::Fp8E4M3 => Some(MxFormat::E4M3),
            DType::Fp8E5M2 => Some(MxFormat::E5M2),
            DType::Fp6E2M3 => Some(MxFormat::E2M3),
            DType::Fp6E3M2 => Some(MxFormat::E3M2),
            DType::Fp4E2M1 => Some(MxFormat::E2M1),
            _ => None,
        }
    }

    /// The dtype that stores an MX element format.
    pub const fn from_mx_format(f: crate::mx::MxFormat) -> DType {
        use crate::mx::MxFormat;
        match f {
            MxFormat::E4M3 => DType::Fp8E4M3,
            MxFormat::E5M2 => DType::Fp8E5M2,
            MxFormat::E2M3 => DType::Fp6E2M3,
            MxFormat::E3M2 => DType::Fp6E3M2,
            MxFormat::E2M1 => DType::Fp4E2M1,
        }
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
            DType::Fp6E2M3 => 0.125,
            DType::Fp6E3M2 => 0.25,
            DType::Fp4E2M1 => 0.5,
        }
    }

    /// The numeric value of the C ABI's `gemm_dtype_t`.
    pub const fn to_raw(self) -> u32 {
        self as u32
    }

    /// From the C ABI's `gemm_dtype_t`.
    pub fn from_raw(raw: u32) -> Result<Self> {
        Self::EVERY.get(raw as usize).copied().ok_or(Error::UnknownDType(raw))
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
            _ => Self::EVERY.iter().copied().find(|d| d.name() == lower),
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
        for (i, d) in DType::EVERY.into_iter().enumerate() {
            assert_eq!(d.to_raw(), i as u32, "C values follow declaration order");
            assert_eq!(DType::from_raw(d.to_raw()).unwrap(), d);
            assert_eq!(d.name().parse::<DType>().unwrap(), d);
            assert_eq!(d.to_string().to_uppercase().parse::<DType>().unwrap(), d);
        }
        assert_eq!(DType::from_raw(10), Err(Error::UnknownDType(10)));
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

    #[test]
    fn sub_byte_dtypes_have_bits_but_no_byte_size() {
        assert_eq!(DType::ALL.len() + DType::SUB_BYTE.len(), DType::EVERY.len());
        for d in DType::ALL {
            assert!(!d.is_sub_byte());
            assert_eq!(d.byte_size(), Some(d.size_bytes()));
            assert_eq!(d.bits() as usize, 8 * d.size_bytes());
        }
        for (d, bits) in DType::SUB_BYTE.into_iter().zip([6, 6, 4]) {
            assert!(d.is_sub_byte() && !d.is_fp8(), "{d}");
            assert_eq!(d.bits(), bits);
            assert_eq!(d.byte_size(), None);
            let f = d.mx_format().unwrap();
            assert_eq!(f.bits(), bits);
            assert_eq!(DType::from_mx_format(f), d);
            // epsilon is the distance from 1 to the next value of the format.
            assert_eq!(f64::from(f.decode(f.encode(1.0).unwrap() + 1)) - 1.0, d.epsilon(), "{d}");
        }
        assert!(std::panic::catch_unwind(|| DType::Fp4E2M1.size_bytes()).is_err());
        assert_eq!(DType::Fp8E4M3Fnuz.mx_format(), None);
        for f in crate::mx::MxFormat::ALL {
            assert_eq!(DType::from_mx_format(f).mx_format(), Some(f));
        }
    }
}
