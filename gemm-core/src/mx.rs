//! OCP microscaling (MX) formats: the element types E4M3, E5M2 (fp8), E2M3 (fp6), E3M2 (bf6) and
//! E2M1 (fp4), the shared E8M0 scale, their packing, a host quantiser, and the reference GEMM on
//! block-scaled operands.
//!
//! Source: OCP *Microscaling Formats (MX) Specification* v1.0 (Sept. 2023): an MX block is
//! [`MX_BLOCK`] = 32 elements that share one E8M0 scale `X`; the value of element `i` is
//! `X * P_i`. The element formats (its section 5.3) are:
//!
//! | format | bits | exp bias | largest | smallest subnormal | specials |
//! |---|---|---|---|---|---|
//! | E4M3 | 8 | 7 | 448 | 2^-9 | NaN = S.1111.111, no Inf |
//! | E5M2 | 8 | 15 | 57344 | 2^-16 | IEEE Inf and NaN |
//! | E2M3 | 6 | 1 | 7.5 | 0.125 | none |
//! | E3M2 | 6 | 3 | 28 | 0.0625 | none |
//! | E2M1 | 4 | 1 | 6 | 0.5 | none |
//!
//! E8M0 (its section 5.4) is an unsigned power of two, `2^(code - 127)`, code 0xFF is NaN; there
//! is no zero and no infinity.
//!
//! gfx950 (MI355X) multiplies these in hardware: `v_mfma_[scale_]f32_{16x16x128,32x32x64}_f8f6f4`
//! whose `cbsz` (A) and `blgp` (B) pick the element format ([`MxFormat::mfma_code`], LLVM
//! `AMDGPU::MFMAScaleFormats`).
//!
//! **Conversion** (quantisation, [`MxFormat::encode`], [`MxMatrix::quantize`]) follows the spec's
//! conversion algorithm (its section 6.3): the block scale is
//! `X = 2^(floor(log2(max_i |V_i|)) - emax)` where `emax` is the exponent of the element format's
//! largest normal value ([`MxFormat::emax`]), clamped to E8M0's range; each `V_i / X` is rounded
//! to nearest, ties to even, and values beyond the largest finite element **saturate** to it
//! (the spec's "clamp" for normal numbers). Choices where the spec leaves room, stated here:
//! * a block of zeros gets the smallest scale, 2^-127 (code 0), as the spec's algorithm gives
//!   with `log2(0)` taken as below every exponent;
//! * a block holding a NaN or an infinity gets the NaN scale (0xFF): fp6 and fp4 have no NaN or
//!   infinity, so the scale is the only place to say it; its element codes are then 0;
//! * [`MxFormat::encode`] of a NaN gives the fp8 NaN code (E4M3 0x7F, E5M2 0x7F) and is an error
//!   for fp6/fp4; infinities saturate like any other out-of-range value.

use crate::exact::ExactAccumulator;
use crate::fp8::Fp8Format;
use thiserror::Error;

/// Elements per MX block (OCP MX v1.0: "k = 32" for every concrete MX format).
pub const MX_BLOCK: usize = 32;

/// Errors of the MX formats and the block-scaled references.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum MxError {
    #[error("{format} has no NaN encoding (MX puts NaN in the E8M0 scale)")]
    NoNaN { format: MxFormat },
    #[error("code {code:#x} does not fit {format}'s {bits} bits")]
    BadCode { format: MxFormat, code: u8, bits: u32 },
    #[error("E8M0 exponent {0} is outside -127..=127")]
    ScaleExponent(i32),
    #[error("{what}: expected {expected} values, got {got}")]
    Length { what: &'static str, expected: usize, got: usize },
    #[error("shape mismatch: {0}")]
    Shape(String),
    #[error("MFMA format code {0} is not an MX element format (0..=4)")]
    UnknownMfmaCode(u8),
    #[error("{0}")]
    Exact(#[from] crate::exact::ExactError),
}

/// An MX element format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MxFormat {
    /// MXFP8 E4M3 (OCP fp8 E4M3FN).
    E4M3,
    /// MXFP8 E5M2 (OCP fp8 E5M2).
    E5M2,
    /// MXFP6 E2M3 ("fp6").
    E2M3,
    /// MXFP6 E3M2 ("bf6").
    E3M2,
    /// MXFP4 E2M1 ("fp4").
    E2M1,
}

impl core::fmt::Display for MxFormat {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

impl MxFormat {
    /// Every format, in MFMA code order.
    pub const ALL: [MxFormat; 5] = [MxFormat::E4M3, MxFormat::E5M2, MxFormat::E2M3, MxFormat::E3M2, MxFormat::E2M1];

    /// The name (OCP MX spec's element names, as in `mxfp8_e4m3`).
    pub const fn name(self) -> &'static str {
        match self {
            MxFormat::E4M3 => "mxfp8_e4m3",
            MxFormat::E5M2 => "mxfp8_e5m2",
            MxFormat::E2M3 => "mxfp6_e2m3",
            MxFormat::E3M2 => "mxfp6_e3m2",
            MxFormat::E2M1 => "mxfp4_e2m1",
        }
    }

    /// Bits per element.
    pub const fn bits(self) -> u32 {
        match self {
            MxFormat::E4M3 | MxFormat::E5M2 => 8,
            MxFormat::E2M3 | MxFormat::E3M2 => 6,
            MxFormat::E2M1 => 4,
        }
    }

    /// (exponent bits, mantissa bits, exponent bias).
    pub const fn layout(self) -> (u32, u32, i32) {
        match self {
            MxFormat::E4M3 => (4, 3, 7),
            MxFormat::E5M2 => (5, 2, 15),
            MxFormat::E2M3 => (2, 3, 1),
            MxFormat::E3M2 => (3, 2, 3),
            MxFormat::E2M1 => (2, 1, 1),
        }
    }

    /// The `cbsz`/`blgp` value that selects this format in gfx950's `*_f8f6f4` MFMAs (LLVM
    /// `AMDGPU::MFMAScaleFormats`: 0 fp8, 1 bf8, 2 fp6, 3 bf6, 4 fp4).
    pub const fn mfma_code(self) -> u8 {
        self as u8
    }

    /// The format an MFMA `cbsz`/`blgp` value selects.
    pub fn from_mfma_code(code: u8) -> Result<MxFormat, MxError> {
        MxFormat::ALL.get(code as usize).copied().ok_or(MxError::UnknownMfmaCode(code))
    }

    /// The fp8 description for the two 8-bit formats.
    pub const fn fp8(self) -> Option<Fp8Format> {
        match self {
            MxFormat::E4M3 => Some(Fp8Format::E4M3FN),
            MxFormat::E5M2 => Some(Fp8Format::E5M2),
            _ => None,
        }
    }

    /// Number of codes (`2^bits`).
    pub const fn codes(self) -> u16 {
        1 << self.bits()
    }

    /// Exponent of the largest normal value (`emax_elem` of the spec's conversion): E4M3 8,
    /// E5M2 15, E2M3 2, E3M2 4, E2M1 2.
    pub const fn emax(self) -> i32 {
        match self {
            MxFormat::E4M3 => 8,
            MxFormat::E5M2 => 15,
            MxFormat::E2M3 => 2,
            MxFormat::E3M2 => 4,
            MxFormat::E2M1 => 2,
        }
    }

    /// The largest positive finite code; codes `0..=max_code()` are the non-negative finite
    /// values in increasing order.
    pub const fn max_code(self) -> u8 {
        match self {
            MxFormat::E4M3 => 0x7E,
            MxFormat::E5M2 => 0x7B,
            // No specials: every magnitude code is finite.
            MxFormat::E2M3 | MxFormat::E3M2 => 0x1F,
            MxFormat::E2M1 => 0x7,
        }
    }

    /// The sign bit of a code.
    pub const fn sign_bit(self) -> u8 {
        1 << (self.bits() - 1)
    }

    /// The largest finite value (448, 57344, 7.5, 28, 6).
    pub fn max_value(self) -> f32 {
        self.decode(self.max_code())
    }

    /// The exact value of a code (bits above [`MxFormat::bits`] are ignored).
    pub fn decode(self, code: u8) -> f32 {
        if let Some(f) = self.fp8() {
            return f.decode(code);
        }
        let code = u32::from(code) & (u32::from(self.codes()) - 1);
        let (eb, mb, bias) = self.layout();
        let sign = if code >> (eb + mb) & 1 == 1 { -1.0f32 } else { 1.0 };
        let e = (code >> mb) & ((1 << eb) - 1);
        let m = code & ((1 << mb) - 1);
        // Exact: at most 4 significant bits times a small power of two.
        let mag = if e == 0 {
            m as f32 * pow2(1 - bias - mb as i32)
        } else {
            ((1 << mb) + m) as f32 * pow2(e as i32 - bias - mb as i32)
        };
        sign * mag
    }

    /// Round to nearest, ties to even, saturating to the largest finite value (OCP MX
    /// conversion, module documentation). NaN gives the fp8 NaN code and is an error for fp6 and
    /// fp4, which cannot encode it. A negative value that rounds to zero keeps its sign (-0).
    pub fn encode(self, x: f32) -> Result<u8, MxError> {
        if x.is_nan() {
            return match self.fp8() {
                Some(f) => Ok(f.nan_code()),
                None => Err(MxError::NoNaN { format: self }),
            };
        }
        if let Some(f) = self.fp8() {
            return Ok(f.encode_saturating(x));
        }
        let sign = if x.is_sign_negative() { self.sign_bit() } else { 0 };
        let a = f64::from(x.abs());
        let max = self.max_code();
        if a >= f64::from(self.max_value()) {
            return Ok(max | sign);
        }
        // Largest code whose value is <= a, then round to nearest even between it and the next.
        let lo = (0..=max).rev().find(|&c| f64::from(self.decode(c)) <= a).unwrap_or(0);
        let (below, above) = (f64::from(self.decode(lo)), f64::from(self.decode(lo + 1)));
        let up = if a - below != above - a { a - below > above - a } else { lo % 2 == 1 };
        Ok(if up { lo + 1 } else { lo } | sign)
    }
}

/// `2^e` for the small exponents the element formats need.
fn pow2(e: i32) -> f32 {
    f32::from_bits(((e + 127) as u32) << 23)
}

/// The shared MX scale: an 8-bit biased exponent, value `2^(code - 127)`, 0xFF is NaN (OCP MX
/// v1.0, E8M0 scale). No zero, no sign, no infinity.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct E8M0(pub u8);

impl E8M0 {
    /// The NaN code.
    pub const NAN: E8M0 = E8M0(0xFF);
    /// 2^0.
    pub const ONE: E8M0 = E8M0(127);
    /// The smallest scale, 2^-127.
    pub const MIN: E8M0 = E8M0(0);
    /// The largest scale, 2^127.
    pub const MAX: E8M0 = E8M0(254);

    /// The scale `2^e`, for `-127 <= e <= 127`.
    pub fn from_exponent(e: i32) -> Result<E8M0, MxError> {
        if (-127..=127).contains(&e) {
            Ok(E8M0((e + 127) as u8))
        } else {
            Err(MxError::ScaleExponent(e))
        }
    }

    /// The unbiased exponent; `None` for NaN.
    pub fn exponent(self) -> Option<i32> {
        (self.0 != 0xFF).then_some(i32::from(self.0) - 127)
    }

    pub fn is_nan(self) -> bool {
        self.0 == 0xFF
    }

    /// The exact value (2^-127 is an f32 subnormal, still exact).
    pub fn to_f32(self) -> f32 {
        match self.exponent() {
            None => f32::NAN,
            Some(e) => 2f32.powi(e.max(-126)) * if e == -127 { 0.5 } else { 1.0 },
        }
    }
}

impl core::fmt::Debug for E8M0 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.exponent() {
            Some(e) => write!(f, "E8M0({:#04x} = 2^{e})", self.0),
            None => write!(f, "E8M0(NaN)"),
        }
    }
}

/// Bytes that `n` elements of `format` take packed ([`pack`]).
pub const fn packed_len(format: MxFormat, n: usize) -> usize {
    (n * format.bits() as usize).div_ceil(8)
}

/// Packs element codes as gfx950's `*_f8f6f4` MFMAs read them from a lane's registers: a
/// little-endian bit stream, element `i` at bits `[bits*i, bits*(i+1))`. So fp8 is one code
/// per byte; fp4 is two per byte, the lower-indexed element in the low nibble; fp6 puts four
/// elements in three bytes, and the 32 fp6 elements of one MFMA lane fill its six VGPRs exactly
/// (LLVM's `v_cvt_scalef32_2xpk16_fp6_f32` likewise packs 16 fp6 values into three dwords).
/// Code bits above the format's width are an error.
pub fn pack(format: MxFormat, codes: &[u8]) -> Result<Vec<u8>, MxError> {
    let bits = format.bits();
    let mut out = vec![0u8; packed_len(format, codes.len())];
    for (i, &c) in codes.iter().enumerate() {
        if u16::from(c) >= format.codes() {
            return Err(MxError::BadCode { format, code: c, bits });
        }
        let pos = i * bits as usize;
        let v = u16::from(c) << (pos % 8);
        out[pos / 8] |= v as u8;
        if pos % 8 + bits as usize > 8 {
            out[pos / 8 + 1] |= (v >> 8) as u8;
        }
    }
    Ok(out)
}

/// The first `n` element codes of a packed stream ([`pack`]'s inverse).
pub fn unpack(format: MxFormat, bytes: &[u8], n: usize) -> Result<Vec<u8>, MxError> {
    let need = packed_len(format, n);
    if bytes.len() < need {
        return Err(MxError::Length { what: "packed bytes", expected: need, got: bytes.len() });
    }
    let bits = format.bits() as usize;
    let mask = format.codes() - 1;
    Ok((0..n)
        .map(|i| {
            let pos = i * bits;
            let lo = u16::from(bytes[pos / 8]);
            let hi = bytes.get(pos / 8 + 1).map_or(0, |b| u16::from(*b));
            (((hi << 8 | lo) >> (pos % 8)) & mask) as u8
        })
        .collect())
}

/// A matrix of MX elements blocked along its rows: `rows x k`, the scales running along `k`
/// (the GEMM's reduction dimension) in blocks of [`MX_BLOCK`]; a last partial block is allowed.
/// A is stored this way as M x K; B as its transpose, N x K (one row per column of B), which is
/// how the scales of both operands run along K.
#[derive(Clone, Debug, PartialEq)]
pub struct MxMatrix {
    format: MxFormat,
    rows: usize,
    k: usize,
    /// One code per element, row-major (unpacked).
    codes: Vec<u8>,
    /// `rows x k.div_ceil(MX_BLOCK)`, row-major.
    scales: Vec<E8M0>,
}

impl MxMatrix {
    /// Blocks per row.
    pub fn blocks_per_row(k: usize) -> usize {
        k.div_ceil(MX_BLOCK)
    }

    /// From codes (one per element, row-major) and scales (`rows x ceil(k/32)`, row-major).
    pub fn new(format: MxFormat, rows: usize, k: usize, codes: Vec<u8>, scales: Vec<E8M0>) -> Result<Self, MxError> {
        let n = rows.checked_mul(k).ok_or_else(|| MxError::Shape(format!("{rows} x {k} overflows")))?;
        if codes.len() != n {
            return Err(MxError::Length { what: "element codes", expected: n, got: codes.len() });
        }
        let nb = rows * Self::blocks_per_row(k);
        if scales.len() != nb {
            return Err(MxError::Length { what: "block scales", expected: nb, got: scales.len() });
        }
        if let Some(&c) = codes.iter().find(|&&c| u16::from(c) >= format.codes()) {
            return Err(MxError::BadCode { format, code: c, bits: format.bits() });
        }
        Ok(MxMatrix { format, rows, k, codes, scales })
    }

    /// From packed rows (each row [`pack`]ed on its own, `packed_len(format, k)` bytes per row).
    pub fn from_packed(
        format: MxFormat,
        rows: usize,
        k: usize,
        packed: &[u8],
        scales: Vec<E8M0>,
    ) -> Result<Self, MxError> {
        let per_row = packed_len(format, k);
        if packed.len() != rows * per_row {
            return Err(MxError::Length { what: "packed rows", expected: rows * per_row, got: packed.len() });
        }
        let mut codes = Vec::with_capacity(rows * k);
        for r in 0..rows {
            codes.extend(unpack(format, &packed[r * per_row..][..per_row], k)?);
        }
        Self::new(format, rows, k, codes, scales)
    }

    /// Quantises a row-major `rows x k` f32 matrix block by block (OCP MX conversion, module
    /// documentation).
    pub fn quantize(format: MxFormat, rows: usize, k: usize, values: &[f32]) -> Result<Self, MxError> {
        if values.len() != rows * k {
            return Err(MxError::Length { what: "values", expected: rows * k, got: values.len() });
        }
        let nb = Self::blocks_per_row(k);
        let mut codes = vec![0u8; rows * k];
        let mut scales = Vec::with_capacity(rows * nb);
        for r in 0..rows {
            for b in 0..nb {
                let lo = b * MX_BLOCK;
                let hi = (lo + MX_BLOCK).min(k);
                let block = &values[r * k + lo..r * k + hi];
                let (scale, q) = quantize_block(format, block)?;
                scales.push(scale);
                codes[r * k + lo..r * k + hi].copy_from_slice(&q);
            }
        }
        Self::new(format, rows, k, codes, scales)
    }

    /// [`MxMatrix::quantize`] of bf16 values (exactly widened to f32 first).
    pub fn quantize_bf16(format: MxFormat, rows: usize, k: usize, values: &[half::bf16]) -> Result<Self, MxError> {
        let f: Vec<f32> = values.iter().map(|v| v.to_f32()).collect();
        Self::quantize(format, rows, k, &f)
    }

    pub fn format(&self) -> MxFormat {
        self.format
    }
    pub fn rows(&self) -> usize {
        self.rows
    }
    pub fn k(&self) -> usize {
        self.k
    }
    /// The element codes, row-major.
    pub fn codes(&self) -> &[u8] {
        &self.codes
    }
    /// The block scales, `rows x ceil(k/32)`, row-major.
    pub fn scales(&self) -> &[E8M0] {
        &self.scales
    }
    /// Code of element `(r, kk)`.
    pub fn code(&self, r: usize, kk: usize) -> u8 {
        self.codes[r * self.k + kk]
    }
    /// Scale of the block holding element `(r, kk)`.
    pub fn scale(&self, r: usize, kk: usize) -> E8M0 {
        self.scales[r * Self::blocks_per_row(self.k) + kk / MX_BLOCK]
    }
    /// The element's value without its scale.
    pub fn element(&self, r: usize, kk: usize) -> f32 {
        self.format.decode(self.code(r, kk))
    }
    /// The exact value `scale * element` (f64 holds every one: at most 2^127 * 57344).
    pub fn value(&self, r: usize, kk: usize) -> f64 {
        f64::from(self.scale(r, kk).to_f32()) * f64::from(self.element(r, kk))
    }
    /// Row `r` packed ([`pack`]).
    pub fn packed_row(&self, r: usize) -> Vec<u8> {
        pack(self.format, &self.codes[r * self.k..][..self.k]).expect("codes are validated on construction")
    }
    /// Every row packed, concatenated.
    pub fn packed(&self) -> Vec<u8> {
        (0..self.rows).flat_map(|r| self.packed_row(r)).collect()
    }
}

/// One block: its scale and element codes (module documentation).
fn quantize_block(format: MxFormat, block: &[f32]) -> Result<(E8M0, Vec<u8>), MxError> {
    if block.iter().any(|v| !v.is_finite()) {
        return Ok((E8M0::NAN, vec![0; block.len()]));
    }
    let amax = block.iter().fold(0f32, |m, v| m.max(v.abs()));
    if amax == 0.0 {
        let codes = block.iter().map(|v| format.encode(*v)).collect::<Result<_, _>>()?;
        return Ok((E8M0::MIN, codes));
    }
    // floor(log2(amax)), exact from the f32 bits (subnormals too).
    let b = amax.to_bits();
    let e = ((b >> 23) & 0xFF) as i32;
    let floor_log2 = if e == 0 { -149 + (31 - (b & 0x7F_FFFF).leading_zeros() as i32) } else { e - 127 };
    let shared = (floor_log2 - format.emax()).clamp(-127, 127);
    let scale = E8M0::from_exponent(shared)?;
    // V / X is exact in f64 (a power-of-two division of an f32), then rounded once by encode;
    // f64 -> f32 of it is exact too unless it leaves f32's range, where encode saturates anyway.
    let inv = 2f64.powi(-shared);
    let codes = block.iter().map(|v| format.encode((f64::from(*v) * inv) as f32)).collect::<Result<_, _>>()?;
    Ok((scale, codes))
}

/// The reference GEMM on MX operands: `C = alpha * A * B + beta * C` with `A` an `M x K`
/// [`MxMatrix`], `B` given as its transpose (`N x K`), `C` row-major `M x N` f32. Every
/// product `alpha * (X_a * a) * (X_b * b)` and `beta * c` is summed **exactly** and rounded once
/// to f32 (round to nearest even): the value a GEMM would have with no rounding error, which
/// is what one gfx950 scaled MFMA computes in the emulator (its documented choice), so the two
/// compare bit for bit. `beta == 0` never reads C. NaN and infinities follow IEEE 754
/// ([`ExactAccumulator`]).
pub fn mx_gemm(a: &MxMatrix, b_t: &MxMatrix, c: &mut [f32], alpha: f32, beta: f32) -> Result<(), MxError> {
    if a.k != b_t.k {
        return Err(MxError::Shape(format!("A is {} x {} but B^T is {} x {}", a.rows, a.k, b_t.rows, b_t.k)));
    }
    let (m, n) = (a.rows, b_t.rows);
    if c.len() != m * n {
        return Err(MxError::Length { what: "C", expected: m * n, got: c.len() });
    }
    for i in 0..m {
        for j in 0..n {
            let mut acc = ExactAccumulator::new();
            for kk in 0..a.k {
                acc.add_product(&[
                    alpha,
                    a.scale(i, kk).to_f32(),
                    a.element(i, kk),
                    b_t.scale(j, kk).to_f32(),
                    b_t.element(j, kk),
                ])?;
            }
            if beta != 0.0 {
                acc.add_product(&[beta, c[i * n + j]])?;
            }
            c[i * n + j] = acc.to_f32();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value of each fp6/fp4 format, written out from the OCP MX spec's tables.
    #[test]
    fn every_fp4_and_fp6_code_decodes_to_the_spec_value() {
        let e2m1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
        for (c, v) in e2m1.iter().enumerate() {
            assert_eq!(MxFormat::E2M1.decode(c as u8), *v as f32, "e2m1 {c:#x}");
            let neg = MxFormat::E2M1.decode(c as u8 | 0x8);
            assert_eq!(neg, -(*v as f32));
            assert!(neg.is_sign_negative());
        }
        // E2M3: subnormals m/8 (e = 0); normals (1 + m/8) * 2^(e-1).
        let mut e2m3 = Vec::new();
        for e in 0..4 {
            for m in 0..8 {
                e2m3.push(if e == 0 { m as f64 / 8.0 } else { (1.0 + m as f64 / 8.0) * 2f64.powi(e - 1) });
            }
        }
        // E3M2: subnormals m/4 * 2^-2; normals (1 + m/4) * 2^(e-3).
        let mut e3m2 = Vec::new();
        for e in 0..8 {
            for m in 0..4 {
                e3m2.push(if e == 0 { m as f64 / 16.0 } else { (1.0 + m as f64 / 4.0) * 2f64.powi(e - 3) });
            }
        }
        for (f, table) in [(MxFormat::E2M3, e2m3), (MxFormat::E3M2, e3m2)] {
            assert_eq!(table.len(), 32);
            for (c, v) in table.iter().enumerate() {
                assert_eq!(f64::from(f.decode(c as u8)), *v, "{f} {c:#x}");
                assert_eq!(f64::from(f.decode(c as u8 | 0x20)), -*v, "{f} {:#x}", c | 0x20);
            }
        }
        assert_eq!(MxFormat::E2M1.max_value(), 6.0);
        assert_eq!(MxFormat::E2M3.max_value(), 7.5);
        assert_eq!(MxFormat::E3M2.max_value(), 28.0);
        assert_eq!(MxFormat::E4M3.max_value(), 448.0);
        assert_eq!(MxFormat::E5M2.max_value(), 57344.0);
        // The decoded non-negative codes are strictly increasing (what encode's search needs).
        for f in MxFormat::ALL {
            for c in 0..f.max_code() {
                assert!(f.decode(c) < f.decode(c + 1), "{f} {c:#x}");
            }
            // emax is the exponent of the largest value.
            assert_eq!(f.max_value().log2().floor() as i32, f.emax(), "{f}");
        }
    }

    #[test]
    fn every_code_round_trips_through_encode() {
        for f in MxFormat::ALL {
            for c in 0..f.codes() {
                let c = c as u8;
                let v = f.decode(c);
                if v.is_nan() {
                    assert!(f.decode(f.encode(v).unwrap()).is_nan());
                    continue;
                }
                if v.is_infinite() {
                    // MX conversion saturates: E5M2's infinities come back as the largest value.
                    assert_eq!(f.decode(f.encode(v).unwrap()), v.signum() * f.max_value());
                    continue;
                }
                assert_eq!(f.encode(v).unwrap(), c, "{f} {c:#x} = {v}");
            }
        }
    }

    #[test]
    fn encode_rounds_to_nearest_even_and_saturates() {
        for f in MxFormat::ALL {
            for c in 0..f.max_code() {
                let (lo, hi) = (f.decode(c), f.decode(c + 1));
                let mid = ((f64::from(lo) + f64::from(hi)) / 2.0) as f32;
                let even = if c % 2 == 0 { c } else { c + 1 };
                assert_eq!(f.encode(mid).unwrap(), even, "{f} tie above {c:#x}");
                assert_eq!(f.encode(f32::from_bits(mid.to_bits() - 1)).unwrap(), c, "{f}");
                assert_eq!(f.encode(f32::from_bits(mid.to_bits() + 1)).unwrap(), c + 1, "{f}");
                assert_eq!(f.encode(-mid).unwrap(), even | f.sign_bit(), "{f}");
            }
            let max = f.max_code();
            for big in [f.max_value() * 1.01, 1e30, f32::INFINITY] {
                assert_eq!(f.encode(big).unwrap(), max, "{f} saturates {big}");
                assert_eq!(f.encode(-big).unwrap(), max | f.sign_bit(), "{f}");
            }
            assert_eq!(f.encode(-0.0).unwrap(), f.sign_bit(), "{f} keeps -0");
            // Below half the smallest subnormal: zero.
            let tiny = f.decode(1) / 2.0;
            assert_eq!(f.encode(tiny).unwrap(), 0, "{f} tie to even zero");
        }
        assert_eq!(MxFormat::E2M1.encode(f32::NAN), Err(MxError::NoNaN { format: MxFormat::E2M1 }));
        assert_eq!(MxFormat::E3M2.encode(f32::NAN), Err(MxError::NoNaN { format: MxFormat::E3M2 }));
        assert_eq!(MxFormat::E4M3.encode(f32::NAN), Ok(0x7F));
        assert!(MxFormat::E5M2.decode(MxFormat::E5M2.encode(f32::NAN).unwrap()).is_nan());
        // E2M1 examples: 5 is the tie between 4 and 6 (6 = 0b111 is odd): 4.
        assert_eq!(MxFormat::E2M1.encode(5.0).unwrap(), 0b110);
        assert_eq!(MxFormat::E2M1.encode(2.5).unwrap(), 0b100);
        assert_eq!(MxFormat::E2M1.encode(0.25).unwrap(), 0);
        assert_eq!(MxFormat::E2M1.encode(0.26).unwrap(), 1);
    }

    #[test]
    fn e8m0_sweep_decodes_exactly() {
        for code in 0..=254u8 {
            let s = E8M0(code);
            let e = i32::from(code) - 127;
            assert_eq!(s.exponent(), Some(e));
            assert_eq!(f64::from(s.to_f32()), 2f64.powi(e), "code {code}");
            assert_eq!(E8M0::from_exponent(e), Ok(s));
        }
        assert!(E8M0::NAN.to_f32().is_nan());
        assert_eq!(E8M0::NAN.exponent(), None);
        assert_eq!(E8M0::ONE.to_f32(), 1.0);
        assert_eq!(E8M0::MIN.to_f32(), 2f32.powi(-127));
        assert_eq!(E8M0::MAX.to_f32(), 2f32.powi(127));
        assert_eq!(E8M0::from_exponent(128), Err(MxError::ScaleExponent(128)));
        assert_eq!(E8M0::from_exponent(-128), Err(MxError::ScaleExponent(-128)));
    }

    #[test]
    fn packing_round_trips_and_matches_the_mfma_layout() {
        // fp4: element 0 low nibble.
        assert_eq!(pack(MxFormat::E2M1, &[0x1, 0xF, 0x3]).unwrap(), vec![0xF1, 0x03]);
        // fp6: four elements in three bytes, little-endian bit stream.
        let p = pack(MxFormat::E2M3, &[0x3F, 0x00, 0x01, 0x20]).unwrap();
        assert_eq!(p, vec![0x3F, 0x10, 0x80]);
        assert_eq!(packed_len(MxFormat::E3M2, 32), 24, "one MFMA lane: six VGPRs");
        assert_eq!(packed_len(MxFormat::E2M1, 32), 16, "one MFMA lane: four VGPRs");
        assert!(pack(MxFormat::E2M1, &[0x10]).is_err());
        let mut s = 0x1234_5678u64;
        for f in MxFormat::ALL {
            for n in [0, 1, 3, 4, 5, 31, 32, 33, 100] {
                let codes: Vec<u8> = (0..n)
                    .map(|_| {
                        s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
                        ((s >> 33) % u64::from(f.codes())) as u8
                    })
                    .collect();
                let p = pack(f, &codes).unwrap();
                assert_eq!(p.len(), packed_len(f, n));
                assert_eq!(unpack(f, &p, n).unwrap(), codes, "{f} n={n}");
                // Bit i*bits.. of the stream is element i.
                for (i, c) in codes.iter().enumerate() {
                    let mut v = 0u8;
                    for b in 0..f.bits() as usize {
                        let pos = i * f.bits() as usize + b;
                        v |= ((p[pos / 8] >> (pos % 8)) & 1) << b;
                    }
                    assert_eq!(v, *c);
                }
            }
        }
        assert!(unpack(MxFormat::E2M3, &[0, 0], 4).is_err());
    }

    #[test]
    fn bf16_quantisation_is_that_of_the_widened_values() {
        let v: Vec<half::bf16> = crate::reference::random_values::<half::bf16>(2 * 64, 3);
        let wide: Vec<f32> = v.iter().map(|x| x.to_f32()).collect();
        for f in MxFormat::ALL {
            assert_eq!(MxMatrix::quantize_bf16(f, 2, 64, &v).unwrap(), MxMatrix::quantize(f, 2, 64, &wide).unwrap());
        }
        assert!(matches!(MxMatrix::quantize(MxFormat::E2M1, 2, 64, &wide[1..]), Err(MxError::Length { .. })));
    }

    #[test]
    fn quantise_then_decode_follows_the_spec() {
        // A block with amax 5.5: floor(log2 5.5) = 2, fp4 emax 2 -> X = 2^0; 5.5 rounds to 6
        // (tie between 5 and 6? no: E2M1 neighbours of 5.5 are 4 and 6, 6 is nearer).
        let mut block = [0f32; 32];
        block[0] = 5.5;
        block[1] = -0.75; // tie between 0.5 and 1.0: even is 1.0 (code 2)
        block[2] = 1.25; // tie between 1.0 and 1.5: even is 1.0
        let q = MxMatrix::quantize(MxFormat::E2M1, 1, 32, &block).unwrap();
        assert_eq!(q.scale(0, 0), E8M0::ONE);
        assert_eq!(q.value(0, 0), 6.0);
        assert_eq!(q.value(0, 1), -1.0);
        assert_eq!(q.value(0, 2), 1.0);
        // amax 7.9 -> X = 2^0 (emax 2); 7.9 saturates to 6 in fp4.
        block[0] = 7.9;
        let q = MxMatrix::quantize(MxFormat::E2M1, 1, 32, &block).unwrap();
        assert_eq!(q.value(0, 0), 6.0, "clamped, not infinity");
        // Scales follow the block maximum: 300 * 2^-70 in E4M3 -> X = 2^(8 - 70 - 8), and 300
        // rounds to 288 (E4M3 steps by 32 in [256, 512)).
        let v: Vec<f32> = (0..64).map(|i| if i < 32 { 300.0 * 2f32.powi(-70) } else { 3.0 }).collect();
        let q = MxMatrix::quantize(MxFormat::E4M3, 1, 64, &v).unwrap();
        assert_eq!(q.scale(0, 0).exponent(), Some(8 - 70 - 8));
        assert_eq!(q.scale(0, 40).exponent(), Some(1 - 8));
        assert_eq!(q.value(0, 3), 288.0 * 2f64.powi(-70));
        // E4M3's largest binade holds 1.875 * 2^8 = 480 > 448: such a block maximum saturates.
        let v: Vec<f32> = vec![480.0; 32];
        assert_eq!(MxMatrix::quantize(MxFormat::E4M3, 1, 32, &v).unwrap().value(0, 0), 448.0);
        // Zero block, NaN block, partial block.
        let q = MxMatrix::quantize(MxFormat::E3M2, 2, 40, &[0.0; 80]).unwrap();
        assert_eq!(q.scales(), &[E8M0::MIN; 4]);
        assert!(q.codes().iter().all(|c| *c == 0));
        let mut v = vec![1.0f32; 40];
        v[35] = f32::NAN;
        let q = MxMatrix::quantize(MxFormat::E2M3, 1, 40, &v).unwrap();
        assert_eq!(q.scale(0, 0).exponent(), Some(-2), "amax 1, fp6 emax 2");
        assert!(q.scale(0, 35).is_nan());
        assert!(q.value(0, 39).is_nan());
        // Every value exactly representable in a format with its block scale comes back exactly.
        let mut s = 0xC0FFEEu64;
        for f in MxFormat::ALL {
            let rows = 3;
            let k = 70;
            let mut v = Vec::new();
            for r in 0..rows {
                for b in 0..MxMatrix::blocks_per_row(k) {
                    s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
                    let se = ((s >> 33) % 60) as i32 - 30;
                    for kk in b * 32..(b * 32 + 32).min(k) {
                        s = s.wrapping_mul(6364136223846793005).wrapping_add(1);
                        // The block's first element is the largest value, so the block scale
                        // is exactly 2^se (module documentation).
                        let c = if kk == b * 32 { f.max_code() } else { ((s >> 33) % u64::from(f.codes())) as u8 };
                        let e = f.decode(c);
                        let x = if e.is_finite() { e } else { 0.0 };
                        let _ = (r, kk);
                        v.push(x * 2f32.powi(se));
                    }
                }
            }
            let q = MxMatrix::quantize(f, rows, k, &v).unwrap();
            for r in 0..rows {
                for kk in 0..k {
                    assert_eq!(q.value(r, kk), f64::from(v[r * k + kk]), "{f} ({r}, {kk})");
                }
            }
            let again = MxMatrix::from_packed(f, rows, k, &q.packed(), q.scales().to_vec()).unwrap();
            assert_eq!(again, q);
        }
    }

    #[test]
    fn quantisation_error_is_within_half_an_element_step() {
        // Seeded random values: |V - X*P| <= half a unit in the last place of P's binade (or
        // the clamp), the OCP conversion's rounding bound.
        let vals: Vec<f32> = crate::reference::random_values::<f32>(4 * 96, 7).iter().map(|v| v * 37.0).collect();
        for f in MxFormat::ALL {
            let q = MxMatrix::quantize(f, 4, 96, &vals).unwrap();
            let (_, mb, _) = f.layout();
            let sub = f64::from(f.decode(1));
            let min_normal = sub * 2f64.powi(mb as i32);
            for r in 0..4 {
                for kk in 0..96 {
                    let v = f64::from(vals[r * 96 + kk]);
                    let got = q.value(r, kk);
                    let x = f64::from(q.scale(r, kk).to_f32());
                    // Half a unit in the last place of V / X's binade (the subnormal step below
                    // the normal range), in V's units.
                    let y = v.abs() / x;
                    let ulp = if y >= min_normal { 2f64.powi(y.log2().floor() as i32 - mb as i32) } else { sub };
                    let bound = x * ulp / 2.0;
                    let clamp = x * f64::from(f.max_value());
                    if v.abs() <= clamp {
                        assert!((got - v).abs() <= bound, "{f}: {v} -> {got} (bound {bound})");
                    } else {
                        assert_eq!(got.abs(), clamp);
                    }
                }
            }
        }
    }

    #[test]
    fn mx_gemm_is_exact_and_checks_shapes() {
        // A = [[1, 2]] (fp4, scale 2^3), B^T = [[0.5, 6]] (fp4, scale 2^-2): 8*0.125... exact.
        let a = MxMatrix::new(MxFormat::E2M1, 1, 2, vec![0x2, 0x4], vec![E8M0::from_exponent(3).unwrap()]).unwrap();
        let b = MxMatrix::new(MxFormat::E2M1, 1, 2, vec![0x1, 0x7], vec![E8M0::from_exponent(-2).unwrap()]).unwrap();
        let mut c = [1.0f32];
        mx_gemm(&a, &b, &mut c, 1.0, 0.5).unwrap();
        // (1*0.5 + 2*6) * 2^3 * 2^-2 + 0.5 = 25.5
        assert_eq!(c, [25.5]);
        let mut c = [f32::NAN];
        mx_gemm(&a, &b, &mut c, 2.0, 0.0).unwrap();
        assert_eq!(c, [50.0], "beta = 0 never reads C");
        let b3 = MxMatrix::new(MxFormat::E2M1, 1, 3, vec![0; 3], vec![E8M0::ONE]).unwrap();
        assert!(matches!(mx_gemm(&a, &b3, &mut c, 1.0, 0.0), Err(MxError::Shape(_))));
        assert!(matches!(mx_gemm(&a, &b, &mut [0.0; 2], 1.0, 0.0), Err(MxError::Length { .. })));
        // NaN scale poisons its row only.
        let a2 = MxMatrix::new(MxFormat::E2M1, 2, 2, vec![2, 2, 2, 2], vec![E8M0::NAN, E8M0::ONE]).unwrap();
        let mut c = [0.0f32; 2];
        mx_gemm(&a2, &b, &mut c, 1.0, 0.0).unwrap();
        assert!(c[0].is_nan());
        assert_eq!(c[1], (0.5 + 6.0) * 0.25);
        assert!(MxMatrix::new(MxFormat::E2M1, 1, 2, vec![0x10, 0], vec![E8M0::ONE]).is_err());
        assert!(MxMatrix::new(MxFormat::E2M1, 1, 2, vec![0, 0], vec![]).is_err());
        assert_eq!(MxFormat::from_mfma_code(5), Err(MxError::UnknownMfmaCode(5)));
        for f in MxFormat::ALL {
            assert_eq!(MxFormat::from_mfma_code(f.mfma_code()), Ok(f));
        }
    }
}
