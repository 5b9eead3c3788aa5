//! GEMM on ndarray matrices: `a.gemm(&b)` and [`gemm_into`].
//!
//! Contiguous matrices in either memory order, and their transposed views (`.t()`), are passed to
//! the backend without copying: one unit stride and a leading dimension describe them exactly.
//! Other views (sliced with steps, sub-blocks of a larger array, negative strides) are copied to a
//! contiguous temporary first (`O(mk + kn)` against the GEMM's `O(mnk)`), and a non-contiguous C is
//! computed in a temporary and assigned back. Safe Rust cannot borrow the memory between a
//! sub-block's rows as a slice (another view may own it), so the copy is the sound way to
//! handle them.

use crate::api::context::Context;
use crate::error::{Error, Result};
use gemm_core::{Element, GemmProblem, Layout, Transpose};
use ndarray::{Array2, ArrayBase, ArrayView2, Data, DataMut, Ix2};
use std::borrow::Cow;

/// An operand as a slice starting at element (0, 0) with non-negative strides.
struct Strided<'a, T: Clone> {
    data: Cow<'a, [T]>,
    rows: usize,
    cols: usize,
    rs: usize,
    cs: usize,
}

fn strided<'a, T: Element>(a: ArrayView2<'a, T>) -> Strided<'a, T> {
    let (rows, cols) = a.dim();
    let s = a.strides();
    if s[0] >= 0 && s[1] >= 0 {
        if let Some(data) = a.to_slice_memory_order() {
            return Strided { data: Cow::Borrowed(data), rows, cols, rs: s[0] as usize, cs: s[1] as usize };
        }
    }
    contiguous_copy(a)
}

/// A row-major copy of the operand.
fn contiguous_copy<'a, T: Element>(a: ArrayView2<'_, T>) -> Strided<'a, T> {
    let (rows, cols) = a.dim();
    Strided { data: Cow::Owned(a.iter().copied().collect()), rows, cols, rs: cols.max(1), cs: 1 }
}

/// `(transpose, ld)` that make `layout` address this operand, if one does.
fn describe(
    rows: usize,
    cols: usize,
    rs: usize,
    cs: usize,
    layout: Layout,
    may_transpose: bool,
) -> Option<(Transpose, usize)> {
    // In row-major storage an untransposed operand has cs = 1 and rs = ld, a transposed one rs = 1
    // and cs = ld; column-major swaps the roles. A dimension of length 1 accepts any stride.
    let unit_cols = cs == 1 || cols <= 1;
    let unit_rows = rs == 1 || rows <= 1;
    let ld_rows = if rows <= 1 { cols.max(1) } else { rs }; // ld when rows are the outer axis
    let ld_cols = if cols <= 1 { rows.max(1) } else { cs }; // ld when columns are the outer axis
    let (plain, flipped) = match layout {
        Layout::RowMajor => ((unit_cols, ld_rows, cols), (unit_rows, ld_cols, rows)),
        Layout::ColMajor => ((unit_rows, ld_cols, rows), (unit_cols, ld_rows, cols)),
    };
    if plain.0 && plain.1 >= plain.2.max(1) {
        return Some((Transpose::No, plain.1));
    }
    if may_transpose && flipped.0 && flipped.1 >= flipped.2.max(1) {
        return Some((Transpose::Yes, flipped.1));
    }
    None
}

/// How an input enters the problem: its transpose and leading dimension, copying it first if its
/// strides cannot be described.
fn input<'a, T: Element>(view: ArrayView2<'a, T>, layout: Layout) -> Result<(Strided<'a, T>, Transpose, usize)> {
    let s = strided(view);
    if let Some((t, ld)) = describe(s.rows, s.cols, s.rs, s.cs, layout, true) {
        return Ok((s, t, ld));
    }
    let s = contiguous_copy(view);
    let (t, ld) = describe(s.rows, s.cols, s.rs, s.cs, layout, true).ok_or_else(|| {
        Error::Invalid(gemm_core::Error::UnsupportedLayout(format!("a {}x{} operand", s.rows, s.cols)))
    })?;
    Ok((s, t, ld))
}

/// Runs `C = alpha * A * B + beta * C` on `ctx`, copying only operands that need it.
fn run<A: Element, B: Element, C: Element>(
    ctx: &Context,
    alpha: f32,
    a: ArrayView2<'_, A>,
    b: ArrayView2<'_, B>,
    beta: f32,
    c: &mut ArrayBase<impl DataMut<Elem = C>, Ix2>,
) -> Result<()> {
    let (m, k) = a.dim();
    let (k2, n) = b.dim();
    if k != k2 || c.dim() != (m, n) {
        return Err(Error::Invalid(gemm_core::Error::ShapeMismatch(format!(
            "A is {m}x{k}, B is {k2}x{n}, C is {}x{}",
            c.nrows(),
            c.ncols()
        ))));
    }
    // C decides the storage order. It is written in place when contiguous with non-negative
    // strides, else through a row-major temporary.
    let st = c.strides();
    let (crs, ccs) = (st[0], st[1]);
    let in_place = crs >= 0 && ccs >= 0 && c.as_slice_memory_order().is_some();
    let c_place = [Layout::RowMajor, Layout::ColMajor].into_iter().find_map(|layout| {
        let (_, ldc) = describe(m, n, crs as usize, ccs as usize, layout, false)?;
        Some((layout, ldc))
    });
    let (layout, ldc) = match c_place {
        Some(place) if in_place => place,
        _ => (Layout::RowMajor, n.max(1)),
    };
    let (sa, ta, lda) = input(a, layout)?;
    let (sb, tb, ldb) = input(b, layout)?;
    let p = GemmProblem::new(m, n, k)
        .with_elements::<A, B, C>()
        .with_scalars(alpha, beta)
        .with_layout(layout)
        .with_transposes(ta, tb)
        .with_leading_dims(lda, ldb, ldc);
    if in_place && c_place.is_some() {
        let data = c.as_slice_memory_order_mut().expect("C was checked to be contiguous");
        return ctx.gemm(&p, &sa.data, &sb.data, data);
    }
    let mut tmp: Array2<C> = if beta == 0.0 { Array2::default((m, n)) } else { c.as_standard_layout().into_owned() };
    let data = tmp.as_slice_mut().expect("a new array is contiguous");
    ctx.gemm(&p, &sa.data, &sb.data, data)?;
    c.assign(&tmp);
    Ok(())
}

/// Matrix products of ndarray matrices on the global [`Context`] (or one you pass).
pub trait Gemm<T: Element> {
    /// `self * rhs` as a new standard-layout matrix, accumulated in f32 and rounded once to `T`.
    fn gemm<S: Data<Elem = T>>(&self, rhs: &ArrayBase<S, Ix2>) -> Result<Array2<T>>;
    /// The same on a given context.
    fn gemm_with<S: Data<Elem = T>>(&self, ctx: &Context, rhs: &ArrayBase<S, Ix2>) -> Result<Array2<T>>;
}

impl<T: Element, S0: Data<Elem = T>> Gemm<T> for ArrayBase<S0, Ix2> {
    fn gemm<S: Data<Elem = T>>(&self, rhs: &ArrayBase<S, Ix2>) -> Result<Array2<T>> {
        self.gemm_with(Context::global(), rhs)
    }

    fn gemm_with<S: Data<Elem = T>>(&self, ctx: &Context, rhs: &ArrayBase<S, Ix2>) -> Result<Array2<T>> {
        let mut out = Array2::<T>::default((self.nrows(), rhs.ncols()));
        run(ctx, 1.0, self.view(), rhs.view(), 0.0, &mut out)?;
        Ok(out)
    }
}

/// `c = alpha * a * b + beta * c` on the global context. Any views: transposed, sliced, strided.
/// `beta == 0` never reads `c`. Mismatched shapes are an error and leave `c` untouched.
pub fn gemm_into<A: Element, B: Element, C: Element>(
    alpha: f32,
    a: &ArrayBase<impl Data<Elem = A>, Ix2>,
    b: &ArrayBase<impl Data<Elem = B>, Ix2>,
    beta: f32,
    c: &mut ArrayBase<impl DataMut<Elem = C>, Ix2>,
) -> Result<()> {
    gemm_into_with(Context::global(), alpha, a, b, beta, c)
}

/// [`gemm_into`] on a given context.
pub fn gemm_into_with<A: Element, B: Element, C: Element>(
    ctx: &Context,
    alpha: f32,
    a: &ArrayBase<impl Data<Elem = A>, Ix2>,
    b: &ArrayBase<impl Data<Elem = B>, Ix2>,
    beta: f32,
    c: &mut ArrayBase<impl DataMut<Elem = C>, Ix2>,
) -> Result<()> {
    run(ctx, alpha, a.view(), b.view(), beta, c)
}
