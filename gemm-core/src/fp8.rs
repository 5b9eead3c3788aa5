//! The four 8-bit float storage types of the two architectures.
//!
//! gfx942 (CDNA3) computes on the *FNUZ* kinds: E4M3FNUZ (bias 8) and E5M2FNUZ (bias 16), with no
//! infinities, no negative zero and a single NaN (0x80). gfx950 (CDNA4) computes on the *OCP* kinds
//! (OCP 8-bit floating point specification v1.0): E4M3FN (bias 7, no infinities, NaN = S.1111.111)
//! and E5M2 (bias 15, IEEE-like with infinities). Source: AMD's "Matrix Core Programming on CDNA3
//! and CDNA4" blog, quoted in `shared/reference/ISA.md` §1.5.
//!
//! Decoding is exact (every fp8 value is an f32). Encoding rounds to nearest, ties to even, like
//! the hardware's `v_cvt_pk_fp8_f32` without clamp; [`Fp8Format::encode_saturating`] clamps
//! out-of-range values to the largest finite value instead, like the clamp bit.

/// How a format spends its top exponent and its sign bit on special values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Specials {
    /// IEEE 754 style: top exponent is infinity (mantissa 0) or NaN. (OCP E5M2.)
    Ieee,
    /// "Finite": no infinities; only S.1111.111 is NaN. (OCP E4M3FN.)
    Fn,
    /// "Finite, unsigned zero": no infinities, no -0; 0x80 is the one NaN. (AMD/Graphcore FNUZ.)
    Fnuz,
}

/// A description of one 8-bit float format: 1 sign bit, `exp_bits` exponent bits, `man_bits`
/// mantissa bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp8Format {
    pub name: &'static str,
    pub exp_bits: u32,
    pub man_bits: u32,
    pub bias: i32,
    pub specials: Specials,
}

impl Fp8Format {
    pub const E4M3FNUZ: Fp8Format =
        Fp8Format { name: "fp8_e4m3fnuz", exp_bits: 4, man_bits: 3, bias: 8, specials: Specials::Fnuz };
    pub const E5M2FNUZ: Fp8Format =
        Fp8Format { name: "fp8_e5m2fnuz", exp_bits: 5, man_bits: 2, bias: 16, specials: Specials::Fnuz };
    pub const E4M3FN: Fp8Format =
        Fp8Format { name: "fp8_e4m3fn", exp_bits: 4, man_bits: 3, bias: 7, specials: Specials::Fn };
    pub const E5M2: Fp8Format =
        Fp8Format { name: "fp8_e5m2", exp_bits: 5, man_bits: 2, bias: 15, specials: Specials::Ieee };

    /// The code of the canonical NaN.
    pub const fn nan_code(&self) -> u8 {
        match self.specials {
            Specials::Fnuz => 0x80,
            Specials::Fn | Specials::Ieee => 0x7F,
        }
    }

    /// The largest positive finite code; codes `0..=max_code()` are the non-negative finite values
    /// in increasing order.
    pub const fn max_code(&self) -> u8 {
        match self.specials {
            Specials::Fnuz => 0x7F,
            Specials::Fn => 0x7E,
            // Top exponent is reserved: the largest finite value has the exponent below it.
            Specials::Ieee => (((1u32 << self.exp_bits) - 2) << self.man_bits | ((1 << self.man_bits) - 1)) as u8,
        }
    }

    /// The largest finite value.
    pub fn max_value(&self) -> f32 {
        self.decode(self.max_code())
    }

    /// Exact value of a code.
    pub fn decode(&self, bits: u8) -> f32 {
        let sign = if bits & 0x80 != 0 { -1.0f32 } else { 1.0 };
        let exp_mask = (1u32 << self.exp_bits) - 1;
        let e = (u32::from(bits) >> self.man_bits) & exp_mask;
        let m = u32::from(bits) & ((1 << self.man_bits) - 1);
        match self.specials {
            Specials::Fnuz if bits == 0x80 => return f32::NAN,
            Specials::Fn if e == exp_mask && m == (1 << self.man_bits) - 1 => return f32::NAN,
            Specials::Ieee if e == exp_mask => {
                return if m == 0 { sign * f32::INFINITY } else { f32::NAN };
            }
            _ => {}
        }
        let mb = self.man_bits as i32;
        let magnitude = if e == 0 {
            m as f32 * pow2(1 - self.bias - mb)
        } else {
            ((1u32 << self.man_bits) + m) as f32 * pow2(e as i32 - self.bias - mb)
        };
        sign * magnitude
    }

    /// Round to nearest, ties to even; values beyond the largest finite one become infinity
    /// (E5M2) or NaN (the formats without infinities), as IEEE rounding prescribes.
    pub fn encode(&self, x: f32) -> u8 {
        self.encode_with(x, false)
    }

    /// Round to nearest, ties to even, clamping out-of-range values (and infinities) to the
    /// largest finite value of the right sign. NaN stays NaN.
    pub fn encode_saturating(&self, x: f32) -> u8 {
        self.encode_with(x, true)
    }

    fn encode_with(&self, x: f32, saturate: bool) -> u8 {
        if x.is_nan() {
            return self.nan_code();
        }
        let sign = if x.is_sign_negative() { 0x80 } else { 0 };
        let a = f64::from(x.abs());
        let max = self.max_code();
        // `None` is "past the largest finite value".
        let rounded: Option<u8> = if a.is_infinite() {
            None
        } else {
            // Largest code whose value is <= a (non-negative codes are monotonic in value).
            let (mut lo, mut hi) = (0u8, max);
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if f64::from(self.decode(mid)) <= a {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            let below = f64::from(self.decode(lo));
            // The next value up; past the top, the value an unbounded exponent range would give,
            // so that rounding at the edge follows IEEE 754 (round, then overflow).
            let above =
                if lo < max { f64::from(self.decode(lo + 1)) } else { 2.0 * below - f64::from(self.decode(lo - 1)) };
            let up = if a - below != above - a { a - below > above - a } else { lo % 2 == 1 };
            match (up, lo < max) {
                (false, _) => Some(lo),
                (true, true) => Some(lo + 1),
                (true, false) => None,
            }
        };
        match rounded {
            // FNUZ has no negative zero: 0x80 is its NaN.
            Some(0) if self.specials == Specials::Fnuz => 0,
            Some(code) => code | sign,
            None if saturate => max | sign,
            None => match self.specials {
                Specials::Ieee => (max + 1) | sign, // infinity follows the largest finite code
                Specials::Fn | Specials::Fnuz => self.nan_code(),
            },
        }
    }
}

fn pow2(e: i32) -> f32 {
    // Exact for the exponents fp8 needs (-19..=16).
    f32::from_bits(((e + 127) as u32) << 23)
}

macro_rules! fp8_type {
    ($(#[$doc:meta])* $name:ident, $format:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
        #[repr(transparent)]
        pub struct $name(pub u8);

        impl $name {
            /// The format description.
            pub const FORMAT: Fp8Format = $format;
            /// Round to nearest even (see [`Fp8Format::encode`]).
            pub fn from_f32(x: f32) -> Self {
                Self(Self::FORMAT.encode(x))
            }
            /// Round to nearest even, clamping to the finite range.
            pub fn from_f32_saturating(x: f32) -> Self {
                Self(Self::FORMAT.encode_saturating(x))
            }
            /// The exact value.
            pub fn to_f32(self) -> f32 {
                Self::FORMAT.decode(self.0)
            }
            /// The raw bits.
            pub const fn to_bits(self) -> u8 {
                self.0
            }
            /// From raw bits.
            pub const fn from_bits(bits: u8) -> Self {
                Self(bits)
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}({:#04x} = {})", stringify!($name), self.0, self.to_f32())
            }
        }

        impl core::fmt::Display for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Display::fmt(&self.to_f32(), f)
            }
        }
    };
}

fp8_type!(
    /// gfx942's `fp8`: E4M3FNUZ, bias 8, largest value 240.
    Fp8E4M3Fnuz,
    Fp8Format::E4M3FNUZ
);
fp8_type!(
    /// gfx942's `bf8`: E5M2FNUZ, bias 16, largest value 57344.
    Fp8E5M2Fnuz,
    Fp8Format::E5M2FNUZ
);
fp8_type!(
    /// gfx950's `fp8`: OCP E4M3FN, bias 7, largest value 448.
    Fp8E4M3,
    Fp8Format::E4M3FN
);
fp8_type!(
    /// gfx950's `bf8`: OCP E5M2, bias 15, largest value 57344, with infinities.
    Fp8E5M2,
    Fp8Format::E5M2
);

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Fp8Format; 4] = [Fp8Format::E4M3FNUZ, Fp8Format::E5M2FNUZ, Fp8Format::E4M3FN, Fp8Format::E5M2];

    #[test]
    fn largest_and_smallest_values_match_the_specifications() {
        assert_eq!(Fp8Format::E4M3FNUZ.max_value(), 240.0);
        assert_eq!(Fp8Format::E5M2FNUZ.max_value(), 57344.0);
        assert_eq!(Fp8Format::E4M3FN.max_value(), 448.0);
        assert_eq!(Fp8Format::E5M2.max_value(), 57344.0);
        assert_eq!(Fp8Format::E4M3FNUZ.decode(1), 2f32.powi(-10));
        assert_eq!(Fp8Format::E5M2FNUZ.decode(1), 2f32.powi(-17));
        assert_eq!(Fp8Format::E4M3FN.decode(1), 2f32.powi(-9));
        assert_eq!(Fp8Format::E5M2.decode(1), 2f32.powi(-16));
        assert_eq!(Fp8Format::E4M3FN.decode(0x38), 1.0);
        assert_eq!(Fp8Format::E4M3FNUZ.decode(0x40), 1.0);
        assert_eq!(Fp8Format::E5M2.decode(0x3C), 1.0);
        assert_eq!(Fp8Format::E5M2FNUZ.decode(0x40), 1.0);
    }

    #[test]
    fn specials() {
        assert!(Fp8Format::E4M3FNUZ.decode(0x80).is_nan());
        assert!(Fp8Format::E5M2FNUZ.decode(0x80).is_nan());
        assert!(Fp8Format::E4M3FN.decode(0x7F).is_nan());
        assert!(Fp8Format::E4M3FN.decode(0xFF).is_nan());
        assert_eq!(Fp8Format::E4M3FN.decode(0x80), 0.0);
        assert_eq!(Fp8Format::E5M2.decode(0x7C), f32::INFINITY);
        assert_eq!(Fp8Format::E5M2.decode(0xFC), f32::NEG_INFINITY);
        assert!(Fp8Format::E5M2.decode(0x7D).is_nan());
        for f in ALL {
            assert!(f.decode(f.encode(f32::NAN)).is_nan(), "{}", f.name);
        }
    }

    #[test]
    fn every_code_round_trips_exactly() {
        for f in ALL {
            for code in 0..=255u8 {
                let v = f.decode(code);
                if v.is_nan() {
                    continue;
                }
                let back = f.encode(v);
                // FNUZ has no -0 and E4M3FN/E5M2's -0 is 0x80: both decode to a zero.
                assert_eq!(f.decode(back), v, "{} code {code:#04x}", f.name);
                if v != 0.0 {
                    assert_eq!(back, code, "{} code {code:#04x}", f.name);
                }
            }
        }
    }

    #[test]
    fn rounds_to_nearest_even_between_neighbours() {
        for f in ALL {
            for code in 0..f.max_code() {
                let (lo, hi) = (f.decode(code), f.decode(code + 1));
                let mid = ((f64::from(lo) + f64::from(hi)) / 2.0) as f32;
                let even = if code % 2 == 0 { code } else { code + 1 };
                assert_eq!(f.encode(mid), even, "{} tie between {code:#04x} and next", f.name);
                let below = f32::from_bits(mid.to_bits() - 1);
                let above = f32::from_bits(mid.to_bits() + 1);
                assert_eq!(f.encode(below), code, "{}", f.name);
                assert_eq!(f.encode(above), code + 1, "{}", f.name);
                assert_eq!(f.encode(-above), (code + 1) | 0x80, "{}", f.name);
            }
        }
    }

    #[test]
    fn overflow_follows_the_format() {
        assert_eq!(Fp8Format::E5M2.encode(1e6), 0x7C);
        assert_eq!(Fp8Format::E5M2.encode(-1e6), 0xFC);
        assert!(Fp8Format::E4M3FN.decode(Fp8Format::E4M3FN.encode(1e6)).is_nan());
        assert!(Fp8Format::E4M3FNUZ.decode(Fp8Format::E4M3FNUZ.encode(-1e6)).is_nan());
        // 464 is the midpoint between 448 (mantissa 110, even) and the first value past the range
        // (480): ties to even keeps 448; anything above overflows to NaN.
        assert_eq!(Fp8Format::E4M3FN.encode(464.0), 0x7E);
        assert!(Fp8Format::E4M3FN.decode(Fp8Format::E4M3FN.encode(464.1)).is_nan());
        // E5M2's largest value 57344 (1.11b x 2^15) has an odd mantissa: the midpoint 61440 between it
        // and 2^16 ties up to infinity.
        assert_eq!(Fp8Format::E5M2.encode(61440.0), 0x7C);
        assert_eq!(Fp8Format::E5M2.encode(61439.0), 0x7B);
        for f in ALL {
            assert_eq!(f.decode(f.encode_saturating(1e9)), f.max_value(), "{}", f.name);
            assert_eq!(f.decode(f.encode_saturating(f32::NEG_INFINITY)), -f.max_value(), "{}", f.name);
        }
    }

    #[test]
    fn fnuz_has_no_negative_zero() {
        assert_eq!(Fp8Format::E4M3FNUZ.encode(-0.0), 0);
        assert_eq!(Fp8Format::E5M2FNUZ.encode(-1e-30), 0);
        assert_eq!(Fp8Format::E4M3FN.encode(-0.0), 0x80);
    }
}
