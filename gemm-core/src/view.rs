//! Strided matrix views over slices: element `(i, j)` lives at `i * rs + j * cs`.
//!
//! Every storage order, transpose and leading dimension lowers to one of these, so backends see a
//! single shape of input. Constructors check bounds with checked arithmetic; a mutable view must
//! also be injective (no two elements share a slot) so that parallel writers cannot race.

use crate::error::{Error, Operand, Result};

/// Offset of the last element, or `None` for an empty view; `Err` when it overflows.
fn last_index(rows: usize, cols: usize, rs: usize, cs: usize) -> Result<Option<usize>> {
    if rows == 0 || cols == 0 {
        return Ok(None);
    }
    (rows - 1)
        .checked_mul(rs)
        .and_then(|r| (cols - 1).checked_mul(cs).and_then(|c| r.checked_add(c)))
        .map(Some)
        .ok_or_else(|| Error::Overflow(format!("last index of a {rows}x{cols} view with strides ({rs}, {cs})")))
}

/// Elements a view spans in its slice (0 for an empty view).
pub fn span(rows: usize, cols: usize, rs: usize, cs: usize) -> Result<usize> {
    Ok(match last_index(rows, cols, rs, cs)? {
        None => 0,
        Some(last) => last.checked_add(1).ok_or_else(|| Error::Overflow("view span".into()))?,
    })
}

/// A read-only strided matrix view.
#[derive(Clone, Copy, Debug)]
pub struct MatRef<'a, T> {
    data: &'a [T],
    rows: usize,
    cols: usize,
    rs: usize,
    cs: usize,
}

impl<'a, T: Copy> MatRef<'a, T> {
    /// A view of `rows x cols` elements; fails if the last element lies outside `data`.
    pub fn new(data: &'a [T], rows: usize, cols: usize, rs: usize, cs: usize, operand: Operand) -> Result<Self> {
        let required = span(rows, cols, rs, cs)?;
        if required > data.len() {
            return Err(Error::BufferTooSmall { operand, len: data.len(), required });
        }
        Ok(Self { data, rows, cols, rs, cs })
    }
    pub fn rows(&self) -> usize {
        self.rows
    }
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Row stride in elements.
    pub fn row_stride(&self) -> usize {
        self.rs
    }
    /// Column stride in elements.
    pub fn col_stride(&self) -> usize {
        self.cs
    }
    /// The underlying slice (from the view's first element).
    pub fn data(&self) -> &'a [T] {
        self.data
    }
    /// Element `(i, j)`; panics outside the view, like slice indexing.
    #[inline(always)]
    pub fn get(&self, i: usize, j: usize) -> T {
        assert!(i < self.rows && j < self.cols, "({i}, {j}) outside a {}x{} view", self.rows, self.cols);
        self.data[i * self.rs + j * self.cs]
    }
    /// The transposed view (no copy).
    pub fn t(self) -> Self {
        Self { data: self.data, rows: self.cols, cols: self.rows, rs: self.cs, cs: self.rs }
    }
    /// The sub-view of rows `r0..r0+rows` and columns `c0..c0+cols`.
    pub fn submatrix(&self, r0: usize, c0: usize, rows: usize, cols: usize) -> Self {
        assert!(r0 + rows <= self.rows && c0 + cols <= self.cols, "submatrix out of range");
        let start = if rows == 0 || cols == 0 { 0 } else { r0 * self.rs + c0 * self.cs };
        Self { data: &self.data[start.min(self.data.len())..], rows, cols, rs: self.rs, cs: self.cs }
    }
}

/// A mutable strided matrix view whose elements occupy distinct slots.
#[derive(Debug)]
pub struct MatMut<'a, T> {
    data: &'a mut [T],
    rows: usize,
    cols: usize,
    rs: usize,
    cs: usize,
}

/// Whether distinct `(i, j)` map to distinct offsets: one stride must step over the whole extent
/// of the other (the usual `ld >= rows` rule, in either order).
fn injective(rows: usize, cols: usize, rs: usize, cs: usize) -> bool {
    if rows <= 1 && cols <= 1 {
        return true;
    }
    if rows <= 1 {
        return cs >= 1;
    }
    if cols <= 1 {
        return rs >= 1;
    }
    let col_extent = (rows - 1).saturating_mul(rs).saturating_add(1);
    let row_extent = (cols - 1).saturating_mul(cs).saturating_add(1);
    (rs >= 1 && cs >= col_extent) || (cs >= 1 && rs >= row_extent)
}

impl<'a, T: Copy> MatMut<'a, T> {
    /// A mutable view; fails if it runs past `data` or if two elements would share a slot.
    pub fn new(data: &'a mut [T], rows: usize, cols: usize, rs: usize, cs: usize, operand: Operand) -> Result<Self> {
        let required = span(rows, cols, rs, cs)?;
        if required > data.len() {
            return Err(Error::BufferTooSmall { operand, len: data.len(), required });
        }
        if !injective(rows, cols, rs, cs) {
            return Err(Error::UnsupportedLayout(format!(
                "{operand} view {rows}x{cols} with strides ({rs}, {cs}) maps several elements to one slot"
            )));
        }
        Ok(Self { data, rows, cols, rs, cs })
    }
    pub fn rows(&self) -> usize {
        self.rows
    }
    pub fn cols(&self) -> usize {
        self.cols
    }
    pub fn row_stride(&self) -> usize {
        self.rs
    }
    pub fn col_stride(&self) -> usize {
        self.cs
    }
    /// The underlying slice (from the view's first element).
    pub fn data_mut(&mut self) -> &mut [T] {
        self.data
    }
    /// A read-only view of the same elements.
    pub fn as_ref(&self) -> MatRef<'_, T> {
        MatRef { data: self.data, rows: self.rows, cols: self.cols, rs: self.rs, cs: self.cs }
    }
    /// A shorter-lived mutable view of the same elements.
    pub fn reborrow(&mut self) -> MatMut<'_, T> {
        MatMut { data: self.data, rows: self.rows, cols: self.cols, rs: self.rs, cs: self.cs }
    }
    #[inline(always)]
    pub fn get(&self, i: usize, j: usize) -> T {
        assert!(i < self.rows && j < self.cols, "({i}, {j}) outside a {}x{} view", self.rows, self.cols);
        self.data[i * self.rs + j * self.cs]
    }
    #[inline(always)]
    pub fn set(&mut self, i: usize, j: usize, v: T) {
        assert!(i < self.rows && j < self.cols, "({i}, {j}) outside a {}x{} view", self.rows, self.cols);
        self.data[i * self.rs + j * self.cs] = v;
    }
    /// Splits the view into rows `0..r` and `r..rows` without copying, so threads can own one each.
    /// Only views whose rows are laid out one after another (`rs >= cs`) can be split this way
    /// without the two halves sharing a slice; others return `None`.
    pub fn split_rows(self, r: usize) -> Option<(MatMut<'a, T>, MatMut<'a, T>)> {
        assert!(r <= self.rows);
        if r == 0 || r == self.rows {
            return None;
        }
        if self.cols > 1 && self.rs < (self.cols - 1) * self.cs + 1 {
            return None;
        }
        let at = (r * self.rs).min(self.data.len());
        let (top, bottom) = self.data.split_at_mut(at);
        Some((
            MatMut { data: top, rows: r, cols: self.cols, rs: self.rs, cs: self.cs },
            MatMut { data: bottom, rows: self.rows - r, cols: self.cols, rs: self.rs, cs: self.cs },
        ))
    }
    /// The transposed view (no copy).
    pub fn t(self) -> Self {
        Self { data: self.data, rows: self.cols, cols: self.rows, rs: self.cs, cs: self.rs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_checked() {
        let v = [0f32; 10];
        assert!(MatRef::new(&v, 2, 5, 5, 1, Operand::A).is_ok());
        assert_eq!(
            MatRef::new(&v, 3, 4, 4, 1, Operand::B).unwrap_err(),
            Error::BufferTooSmall { operand: Operand::B, len: 10, required: 12 }
        );
        assert!(MatRef::new(&v, 0, 1_000_000, 7, 1, Operand::A).is_ok(), "empty views need no storage");
        assert!(matches!(MatRef::new(&v, usize::MAX, 2, usize::MAX, 1, Operand::A), Err(Error::Overflow(_))));
    }

    #[test]
    fn mutable_views_must_not_alias() {
        let mut v = [0f32; 16];
        assert!(MatMut::new(&mut v, 4, 4, 4, 1, Operand::C).is_ok());
        assert!(MatMut::new(&mut v, 4, 4, 1, 4, Operand::C).is_ok());
        assert!(matches!(MatMut::new(&mut v, 4, 4, 2, 1, Operand::C), Err(Error::UnsupportedLayout(_))));
        assert!(matches!(MatMut::new(&mut v, 2, 2, 0, 1, Operand::C), Err(Error::UnsupportedLayout(_))));
    }

    #[test]
    fn transpose_and_submatrix() {
        let v: Vec<f32> = (0..12).map(|x| x as f32).collect();
        let m = MatRef::new(&v, 3, 4, 4, 1, Operand::A).unwrap();
        assert_eq!(m.get(2, 1), 9.0);
        assert_eq!(m.t().get(1, 2), 9.0);
        let s = m.submatrix(1, 1, 2, 2);
        assert_eq!(s.get(0, 0), 5.0);
        assert_eq!(s.get(1, 1), 10.0);
    }
}
