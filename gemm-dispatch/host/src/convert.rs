//! Element decoding for the packing routines: every storage type to f32, and bf16/fp8 to bf16 bits.
//!
//! `gemm` is generic over [`Element`] only, so the concrete type behind `T` is recovered with
//! [`Any`] (each call is monomorphised, so the downcasts fold to constants). fp8 decodes through
//! 256-entry tables built once from `gemm_core`'s exact decoder.
//!
//! Every fp8 value (E4M3FN, E5M2, and both FNUZ kinds) is exactly a bf16: their mantissas have 3 or
//! 2 bits (bf16 has 7), the smallest subnormal is 2^-16 (E5M2) or 2^-10 (E4M3FNUZ), far above
//! bf16's smallest normal 2^-126, and the largest finite value is 57344 (E5M2) or 448 (E4M3FN),
//! far below bf16's maximum. So an fp8 decoded to bf16 is a *normal* bf16 (or zero, inf, NaN),
//! which also means the denormal flushing of `vdpbf16ps` never touches fp8 inputs.
//! [`tests::fp8_values_are_exact_bf16`] checks this for all 1024 codes.

use gemm_core::fp8::Fp8Format;
use gemm_core::{bf16, DType, Element, Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz};
use std::any::Any;
use std::sync::OnceLock;

/// The decoded values of all 256 codes of one fp8 format.
pub(crate) struct Fp8Table {
    pub f32: [f32; 256],
    /// The same values as bf16 bit patterns (exact, see the module docs).
    pub bf16: [u16; 256],
}

impl Fp8Table {
    fn build(format: Fp8Format) -> Self {
        let mut f32s = [0f32; 256];
        let mut bf16s = [0u16; 256];
        for code in 0..=255u8 {
            let v = format.decode(code);
            f32s[code as usize] = v;
            bf16s[code as usize] =
                if v.is_nan() { 0x7FC0 | ((v.to_bits() >> 16) as u16 & 0x8000) } else { (v.to_bits() >> 16) as u16 };
        }
        Self { f32: f32s, bf16: bf16s }
    }
}

fn table(dtype: DType) -> &'static Fp8Table {
    static E4M3FNUZ: OnceLock<Fp8Table> = OnceLock::new();
    static E5M2FNUZ: OnceLock<Fp8Table> = OnceLock::new();
    static E4M3FN: OnceLock<Fp8Table> = OnceLock::new();
    static E5M2: OnceLock<Fp8Table> = OnceLock::new();
    match dtype {
        DType::Fp8E4M3Fnuz => E4M3FNUZ.get_or_init(|| Fp8Table::build(Fp8Format::E4M3FNUZ)),
        DType::Fp8E5M2Fnuz => E5M2FNUZ.get_or_init(|| Fp8Table::build(Fp8Format::E5M2FNUZ)),
        DType::Fp8E5M2 => E5M2.get_or_init(|| Fp8Table::build(Fp8Format::E5M2)),
        // Non-fp8 types never index the table; any one will do.
        _ => E4M3FN.get_or_init(|| Fp8Table::build(Fp8Format::E4M3FN)),
    }
}

/// The 8-bit code of an fp8 element (0 for the wider types, which never ask).
#[inline(always)]
fn fp8_code<T: Element>(x: T) -> u8 {
    let any = &x as &dyn Any;
    if let Some(v) = any.downcast_ref::<Fp8E4M3>() {
        v.0
    } else if let Some(v) = any.downcast_ref::<Fp8E5M2>() {
        v.0
    } else if let Some(v) = any.downcast_ref::<Fp8E4M3Fnuz>() {
        v.0
    } else if let Some(v) = any.downcast_ref::<Fp8E5M2Fnuz>() {
        v.0
    } else {
        0
    }
}

/// Decodes elements of one storage type `T` to the panel types. Cheap to copy; built once per
/// operand per GEMM so the hot packing loops do no table look-up set-up.
#[derive(Clone, Copy)]
pub(crate) struct Decoder<T> {
    table: &'static Fp8Table,
    _t: core::marker::PhantomData<fn(T)>,
}

impl<T: Element> Decoder<T> {
    pub fn new() -> Self {
        Self { table: table(T::DTYPE), _t: core::marker::PhantomData }
    }

    /// Exact widening to f32.
    #[inline(always)]
    pub fn f32(&self, x: T) -> f32 {
        if T::DTYPE.is_fp8() {
            self.table.f32[fp8_code(x) as usize]
        } else {
            x.to_f32()
        }
    }

    /// The value as bf16 bits: exact for bf16 and fp8 (the only types the bf16 path packs);
    /// other types round to nearest even.
    #[inline(always)]
    pub fn bf16(&self, x: T) -> u16 {
        if T::DTYPE.is_fp8() {
            self.table.bf16[fp8_code(x) as usize]
        } else if let Some(v) = (&x as &dyn Any).downcast_ref::<bf16>() {
            v.to_bits()
        } else {
            bf16::from_f32(x.to_f32()).to_bits()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_values_are_exact_bf16() {
        for dtype in [DType::Fp8E4M3, DType::Fp8E5M2, DType::Fp8E4M3Fnuz, DType::Fp8E5M2Fnuz] {
            let t = table(dtype);
            for code in 0..256 {
                let v = t.f32[code];
                let w = bf16::from_bits(t.bf16[code]).to_f32();
                assert!(v == w || (v.is_nan() && w.is_nan()), "{dtype} code {code:#x}: {v} vs {w}");
                // Never a bf16 subnormal (vdpbf16ps would flush it).
                assert!(v == 0.0 || !v.is_finite() || v.abs() >= f32::MIN_POSITIVE, "{dtype} {code:#x}");
            }
        }
    }

    #[test]
    fn decoders_agree_with_the_element_trait() {
        let d = Decoder::<Fp8E5M2Fnuz>::new();
        for code in 0..=255u8 {
            let x = Fp8E5M2Fnuz(code);
            let (a, b) = (d.f32(x), x.to_f32());
            assert!(a == b || (a.is_nan() && b.is_nan()));
        }
        let d = Decoder::<bf16>::new();
        assert_eq!(d.bf16(bf16::from_f32(-3.5)), bf16::from_f32(-3.5).to_bits());
        assert_eq!(d.f32(bf16::from_f32(-3.5)), -3.5);
    }
}
