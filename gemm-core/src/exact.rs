//! An exact accumulator: sums of products of f32 values with no rounding at all, rounded once
//! at the end (round to nearest, ties to even).
//!
//! Why: the block-scaled references ([`crate::mx::mx_gemm`], [`crate::block_fp8::block_fp8_gemm`])
//! must be *the* answer, not an answer within a tolerance, so that the emulator's scaled MFMAs
//! can be compared with them bit for bit. An f64 accumulator is not enough: the products of
//! two E5M2 values with two E8M0 scales span 2^-286 .. 2^286, far more than f64's 53 bits can
//! sum exactly. Every f32 is `m * 2^e` with an integer `m < 2^24` and `-149 <= e <= 104`, so a
//! product of at most [`MAX_FACTORS`] of them is an integer times a power of two that a fixed
//! window of bits holds exactly (a Kulisch accumulator).

use thiserror::Error;

/// The most factors one product may have (alpha, two elements, two scales).
pub const MAX_FACTORS: usize = 5;

/// Lowest bit position the window holds: `MAX_FACTORS * -149`, rounded down to a limb.
const LOW: i32 = -768;
/// Limbs of 32 bits: the window covers bit positions `LOW .. LOW + 32 * LIMBS` (2^-768 ..
/// 2^768; a product of five f32 values is below 2^640).
const LIMBS: usize = 48;
/// Products between carry folds (each changes a limb by less than 2^32; 2^12 of them stay far
/// below i64's range).
const FOLD_EVERY: u32 = 1 << 12;

/// Errors of the exact accumulator.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ExactError {
    #[error("a product of {0} factors exceeds the accumulator's window (at most {MAX_FACTORS})")]
    TooManyFactors(usize),
    #[error("n * 2^{0} lies outside the accumulator's window")]
    OutOfRange(i32),
}

/// An exact sum of products of f32 values (see the module documentation). Specials follow IEEE
/// 754: a NaN factor, `inf * 0` or `+inf + -inf` make the sum NaN; otherwise an infinite product
/// makes it infinite; a zero sum is `-0` only when every term was a negative zero.
#[derive(Clone, Debug)]
pub struct ExactAccumulator {
    /// Two's-complement-free signed limbs, each holding a 32-bit digit plus carries (base 2^32,
    /// limb `i` weighs `2^(LOW + 32 i)`); normalised on reading.
    limbs: [i64; LIMBS],
    nan: bool,
    pos_inf: bool,
    neg_inf: bool,
    /// Whether every term so far was a negative zero (and there was at least one).
    all_neg_zero: Option<bool>,
    /// Products added since the last carry fold.
    since_fold: u32,
}

impl Default for ExactAccumulator {
    fn default() -> Self {
        Self::new()
    }
}

/// `x = (-1)^neg * m * 2^e` for a finite f32.
fn split(x: f32) -> (bool, u32, i32) {
    let b = x.to_bits();
    let neg = b >> 31 != 0;
    let exp = ((b >> 23) & 0xFF) as i32;
    let frac = b & 0x7F_FFFF;
    if exp == 0 {
        (neg, frac, -149)
    } else {
        (neg, frac | 0x80_0000, exp - 150)
    }
}

impl ExactAccumulator {
    /// An empty (zero) sum.
    pub fn new() -> Self {
        ExactAccumulator {
            limbs: [0; LIMBS],
            nan: false,
            pos_inf: false,
            neg_inf: false,
            all_neg_zero: None,
            since_fold: 0,
        }
    }

    /// Adds one f32 value.
    pub fn add(&mut self, x: f32) {
        // A single factor never exceeds the window.
        let _ = self.add_product(&[x]);
    }

    /// Adds the exact product of `factors` (at most [`MAX_FACTORS`]).
    pub fn add_product(&mut self, factors: &[f32]) -> Result<(), ExactError> {
        if factors.len() > MAX_FACTORS {
            return Err(ExactError::TooManyFactors(factors.len()));
        }
        let neg = factors.iter().filter(|f| f.is_sign_negative()).count() % 2 == 1;
        if factors.iter().any(|f| f.is_nan()) {
            self.nan = true;
            return Ok(());
        }
        let zero = factors.contains(&0.0);
        if factors.iter().any(|f| f.is_infinite()) {
            if zero {
                self.nan = true;
            } else if neg {
                self.neg_inf = true;
            } else {
                self.pos_inf = true;
            }
            return Ok(());
        }
        if zero {
            self.all_neg_zero = Some(self.all_neg_zero.unwrap_or(true) && neg);
            return Ok(());
        }
        self.all_neg_zero = Some(false);
        let (mut m, mut e) = (1u128, 0i32);
        for &f in factors {
            let (_, fm, fe) = split(f);
            m *= u128::from(fm);
            e += fe;
        }
        // m < 2^(24 * 5) = 2^120, e >= -745: the bits lie in [e, e + 120) within the window.
        self.add_mag(neg, m, e);
        Ok(())
    }

    /// Adds the integer `n` times `2^e` exactly: the fast path of block dot products, whose
    /// integer sums are formed first (a zero `n` counts as a +0 term). `n * 2^e` must lie in
    /// the window (bits `-768 .. 640`).
    pub fn add_scaled(&mut self, n: i128, e: i32) -> Result<(), ExactError> {
        if e < LOW || e + 128 > 640 {
            return Err(ExactError::OutOfRange(e));
        }
        self.all_neg_zero = Some(false);
        if n != 0 {
            self.add_mag(n < 0, n.unsigned_abs(), e);
        }
        Ok(())
    }

    /// Adds `(-1)^neg * m * 2^e` (`m < 2^128`, `LOW <= e`, `e + 128 <= 640`).
    fn add_mag(&mut self, neg: bool, m: u128, e: i32) {
        let pos = (e - LOW) as u32;
        let (limb, shift) = ((pos / 32) as usize, pos % 32);
        // m << shift spans at most 159 bits: five 32-bit digits.
        let lo = m << shift; // the top `shift` bits of m fall out here ...
        let hi = if shift == 0 { 0 } else { m >> (128 - shift) }; // ... and are kept here
        let digits = [lo as u32, (lo >> 32) as u32, (lo >> 64) as u32, (lo >> 96) as u32, hi as u32];
        for (k, d) in digits.iter().enumerate() {
            if *d != 0 {
                let v = i64::from(*d);
                self.limbs[limb + k] += if neg { -v } else { v };
            }
        }
        // Each addition moves a limb by less than 2^32: folding carries every FOLD_EVERY
        // additions keeps every limb far from i64 overflow.
        self.since_fold += 1;
        if self.since_fold == FOLD_EVERY {
            self.normalise();
        }
    }

    /// Propagates carries so that every limb but the top one is in `0 .. 2^32`.
    fn normalise(&mut self) {
        self.since_fold = 0;
        let mut carry = 0i64;
        for l in self.limbs.iter_mut() {
            let v = *l + carry;
            carry = v >> 32; // floor division by 2^32
            *l = v & 0xFFFF_FFFF;
        }
        self.limbs[LIMBS - 1] += carry << 32;
    }

    /// The sum rounded once to f32 (round to nearest, ties to even; overflow to infinity).
    pub fn to_f32(&self) -> f32 {
        if self.nan || (self.pos_inf && self.neg_inf) {
            return f32::NAN;
        }
        if self.pos_inf {
            return f32::INFINITY;
        }
        if self.neg_inf {
            return f32::NEG_INFINITY;
        }
        let mut n = self.clone();
        n.normalise();
        // Digits d_0 .. d_{LIMBS-1} in 0 .. 2^32 and a signed overflow digit: the sum is
        // sum(d_i 2^(32 i)) + over 2^(32 LIMBS) in units of 2^LOW, with over 0 or -1 (every
        // sum the window holds is far below 2^(32 LIMBS)).
        let over = n.limbs[LIMBS - 1] >> 32;
        n.limbs[LIMBS - 1] &= 0xFFFF_FFFF;
        let negative = over < 0;
        let mut mag = [0u32; LIMBS];
        let mut carry = 0i64;
        for (k, l) in n.limbs.iter().enumerate() {
            // Negating digit by digit (with borrows) gives the magnitude of a negative sum.
            let v = if negative { -*l + carry } else { *l };
            carry = v >> 32;
            mag[k] = (v & 0xFFFF_FFFF) as u32;
        }
        let Some(top_digit) = mag.iter().rposition(|d| *d != 0) else {
            return if self.all_neg_zero == Some(true) { -0.0 } else { 0.0 };
        };
        let bit = |p: i64| -> u32 {
            // Bit at absolute position p (relative to LOW).
            if p < 0 {
                return 0;
            }
            let (d, s) = ((p / 32) as usize, (p % 32) as u32);
            mag.get(d).map_or(0, |x| (x >> s) & 1)
        };
        let top = top_digit as i64 * 32 + 31 - i64::from(mag[top_digit].leading_zeros());
        let top_abs = top + i64::from(LOW);
        // Keep 24 significant bits, but never below f32's smallest subnormal bit (2^-149).
        let lsb_abs = (top_abs - 23).max(-149);
        let lsb = lsb_abs - i64::from(LOW);
        // q: bits lsb..=top (at most 24 of them), read a digit pair at a time.
        let window = |p: i64| -> u64 {
            // 32 bits starting at bit p >= 0.
            let (d, sh) = ((p / 32) as usize, (p % 32) as u32);
            let lo = u64::from(mag.get(d).copied().unwrap_or(0));
            let hi = u64::from(mag.get(d + 1).copied().unwrap_or(0));
            ((hi << 32 | lo) >> sh) & 0xFFFF_FFFF
        };
        // (Below f32's smallest subnormal the kept part is empty: q = 0.)
        let mut q = if top >= lsb { window(lsb) & ((1u64 << (top - lsb + 1)) - 1) } else { 0 };
        let half = bit(lsb - 1) == 1;
        // Sticky: any bit below lsb - 1 (whole digits, then the partial one).
        let sticky = lsb > 1 && {
            let below = lsb - 1; // bits 0 .. below
            let (d, sh) = ((below / 32) as usize, (below % 32) as u32);
            mag[..d].iter().any(|x| *x != 0) || mag[d] & ((1u32 << sh) - 1) != 0
        };
        if half && (sticky || q & 1 == 1) {
            q += 1;
        }
        // q <= 2^24 and lsb_abs >= -149: q * 2^lsb_abs is an f64 exactly, and an f32 exactly
        // unless it reaches 2^128, where the cast gives infinity (the IEEE overflow result).
        let v = q as f64 * 2f64.powi(lsb_abs as i32);
        let r = v as f32;
        if negative {
            -r
        } else {
            r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(terms: &[&[f32]]) -> f32 {
        let mut a = ExactAccumulator::new();
        for t in terms {
            a.add_product(t).unwrap();
        }
        a.to_f32()
    }

    #[test]
    fn cancellation_that_f32_and_f64_get_wrong_is_exact() {
        // 2^100 + 1 - 2^100 = 1: every floating-point order loses the 1.
        let big = 2f32.powi(100);
        assert_eq!(sum(&[&[big], &[1.0], &[-big]]), 1.0);
        // 2^-140 survives next to 2^120 cancelled away (a 260-bit span).
        let tiny = 2f32.powi(-140);
        assert_eq!(sum(&[&[2f32.powi(120)], &[tiny], &[-2f32.powi(120)]]), tiny);
        // Products spanning 2^-570 .. 2^500, as two E8M0 scales and three more factors give.
        let t = [2f32.powi(-127), 2f32.powi(-127), 2f32.powi(-127), 2f32.powi(-127), 2f32.powi(-60)];
        let h = [2f32.powi(100); 5];
        let mut a = ExactAccumulator::new();
        a.add_product(&h).unwrap();
        a.add_product(&t).unwrap();
        a.add_product(&[-2f32.powi(100), 2f32.powi(100), 2f32.powi(100), 2f32.powi(100), 2f32.powi(100)]).unwrap();
        assert_eq!(a.to_f32(), 0.0, "2^-568 is below f32's range and rounds to zero");
    }

    #[test]
    fn rounds_once_to_nearest_even() {
        // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even is 1.
        assert_eq!(sum(&[&[1.0], &[2f32.powi(-24)]]), 1.0);
        // A sticky bit far below breaks the tie upwards.
        assert_eq!(sum(&[&[1.0], &[2f32.powi(-24)], &[2f32.powi(-149)]]), 1.0 + 2f32.powi(-23));
        // 1 + 2^-23 + 2^-24 ties to the even neighbour 1 + 2^-22.
        assert_eq!(sum(&[&[1.0 + 2f32.powi(-23)], &[2f32.powi(-24)]]), 1.0 + 2f32.powi(-22));
        // Negative values round symmetrically.
        assert_eq!(sum(&[&[-1.0], &[-(2f32.powi(-24))], &[-(2f32.powi(-149))]]), -(1.0 + 2f32.powi(-23)));
        // Subnormal results keep their bits; below half the smallest subnormal is zero.
        assert_eq!(sum(&[&[2f32.powi(-149)], &[2f32.powi(-148)]]), 3.0 * 2f32.powi(-149));
        assert_eq!(sum(&[&[2f32.powi(-75), 2f32.powi(-75)]]), 0.0);
        // 3 * 2^-150 is 1.5 subnormal units: the tie goes to the even 2 units.
        let t = [2f32.powi(-75), 2f32.powi(-75)];
        assert_eq!(sum(&[&t, &t, &t]), 2f32.powi(-148));
    }

    #[test]
    fn overflow_and_specials_follow_ieee() {
        assert_eq!(sum(&[&[f32::MAX], &[f32::MAX]]), f32::INFINITY);
        assert_eq!(sum(&[&[-f32::MAX, 2.0]]), f32::NEG_INFINITY);
        // MAX + a quarter unit stays MAX; MAX + half a unit ties to the even 2^128: infinity.
        assert_eq!(sum(&[&[f32::MAX], &[2f32.powi(102)]]), f32::MAX);
        assert_eq!(sum(&[&[f32::MAX], &[2f32.powi(103)]]), f32::INFINITY);
        assert!(sum(&[&[f32::INFINITY, 0.0]]).is_nan());
        assert!(sum(&[&[f32::INFINITY], &[f32::NEG_INFINITY]]).is_nan());
        assert!(sum(&[&[1.0], &[f32::NAN]]).is_nan());
        assert_eq!(sum(&[&[f32::INFINITY, -2.0], &[1e30]]), f32::NEG_INFINITY);
        assert_eq!(sum(&[&[-0.0], &[0.0, -1.0]]).to_bits(), (-0.0f32).to_bits());
        assert_eq!(sum(&[&[-0.0], &[0.0]]).to_bits(), 0);
        assert_eq!(sum(&[&[1.0], &[-1.0]]).to_bits(), 0);
        assert_eq!(sum(&[]).to_bits(), 0);
        let mut a = ExactAccumulator::new();
        assert_eq!(a.add_product(&[1.0; 6]), Err(ExactError::TooManyFactors(6)));
        assert_eq!(a.add_scaled(1, -769), Err(ExactError::OutOfRange(-769)));
        assert_eq!(a.add_scaled(1, 513), Err(ExactError::OutOfRange(513)));
    }

    #[test]
    fn integer_terms_equal_the_same_products() {
        // n * 2^e terms (the block fast path) against the products they stand for.
        let mut s = 0xFA57u64;
        for _ in 0..100 {
            let (mut a, mut b) = (ExactAccumulator::new(), ExactAccumulator::new());
            for _ in 0..40 {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let n = ((s >> 20) as i64 % (1 << 40)) - (1 << 39);
                let e = ((s >> 8) % 350) as i32 - 250;
                a.add_scaled(i128::from(n) * 3, e).unwrap();
                // n * 3 * 2^e as f32 factors: n < 2^40 splits into two exact halves.
                let (hi, lo) = (n >> 20, n & 0xF_FFFF);
                let p = 2f32.powi(e.clamp(-126, 127));
                let q = 2f32.powi((e - e.clamp(-126, 127)).clamp(-126, 127));
                b.add_product(&[hi as f32 * 1048576.0, 3.0, p, q]).unwrap();
                b.add_product(&[lo as f32, 3.0, p, q]).unwrap();
            }
            assert_eq!(a.to_f32().to_bits(), b.to_f32().to_bits());
        }
        let mut z = ExactAccumulator::new();
        z.add(-0.0);
        z.add_scaled(0, 0).unwrap();
        assert_eq!(z.to_f32().to_bits(), 0, "a zero integer term is +0");
    }

    #[test]
    fn agrees_with_f64_where_f64_is_exact() {
        // Seeded: small integers times small powers of two sum exactly in f64.
        let mut s = 0x5EED_u64;
        for _ in 0..200 {
            let mut acc = ExactAccumulator::new();
            let mut f = 0f64;
            for _ in 0..64 {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let a = ((s >> 40) as i32 % 256 - 128) as f32 * 2f32.powi((s >> 20) as i32 % 16 - 8);
                let b = ((s >> 8) as i32 % 16 - 8) as f32;
                acc.add_product(&[a, b]).unwrap();
                f += f64::from(a) * f64::from(b);
            }
            assert_eq!(acc.to_f32(), f as f32);
        }
        // Carry folding over many terms (FOLD_EVERY is passed 24 times), positive and negative.
        let x = f32::from_bits(0x4B7F_FFFF); // 2^24 - 1
        for sign in [1.0f32, -1.0] {
            let mut acc = ExactAccumulator::new();
            for _ in 0..100_000 {
                acc.add_product(&[sign * x, x]).unwrap();
            }
            let exact = (16_777_215u128 * 16_777_215 * 100_000) as f32; // integer casts round to nearest
            assert_eq!(acc.to_f32(), sign * exact);
        }
    }
}
