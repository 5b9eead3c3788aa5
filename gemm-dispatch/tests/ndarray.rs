//! The ndarray extension on every kind of view ndarray can make.

use gemm_core::reference::random_values;
use gemm_core::{bf16, f16, Element};
use gemm_dispatch::api::ndarray_ext::gemm_into_with;
use gemm_dispatch::{gemm_into, Context, Error, Gemm};
use ndarray::{s, Array2, ArrayView2, ShapeBuilder};

fn random<T: Element>(rows: usize, cols: usize, seed: u64) -> Array2<T> {
    Array2::from_shape_vec((rows, cols), random_values(rows * cols, seed)).unwrap()
}

/// The product in f64 from the views' logical elements, the yardstick here.
fn naive<A: Element, B: Element>(a: ArrayView2<'_, A>, b: ArrayView2<'_, B>) -> Array2<f64> {
    Array2::from_shape_fn((a.nrows(), b.ncols()), |(i, j)| {
        (0..a.ncols()).map(|l| f64::from(a[[i, l]].to_f32()) * f64::from(b[[l, j]].to_f32())).sum()
    })
}

fn assert_close<C: Element>(got: &Array2<C>, want: &Array2<f64>, tol: f64) {
    assert_eq!(got.dim(), want.dim());
    for ((i, j), w) in want.indexed_iter() {
        let g = f64::from(got[[i, j]].to_f32());
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "({i}, {j}): got {g}, want {w}");
    }
}

#[test]
fn contiguous_transposed_sliced_and_reversed_views() {
    let a: Array2<f32> = random(30, 40, 1);
    let b: Array2<f32> = random(40, 20, 2);
    let bt: Array2<f32> = random(20, 40, 3);
    let big: Array2<f32> = random(90, 70, 4);
    let cases: Vec<(ArrayView2<'_, f32>, ArrayView2<'_, f32>)> = vec![
        (a.view(), b.view()),
        (a.view(), bt.t()),                                         // transposed view (F-contiguous)
        (a.slice(s![..;2, ..]), b.view()),                          // stepped rows
        (big.slice(s![10..40, 5..45]), b.view()),                   // sub-block: leading dimension 70
        (a.slice(s![..;-1, ..]), b.slice(s![.., ..;-1])),           // negative strides
        (big.slice(s![..90;3, ..70;2]), big.slice(s![..35, ..20])), // steps in both axes
    ];
    for (x, y) in cases {
        let got = x.gemm_with(&Context::host(1), &y).unwrap();
        assert_close(&got, &naive(x, y), 1e-5);
    }
}

#[test]
fn sixteen_bit_matrices() {
    let a: Array2<bf16> = random(33, 17, 5);
    let b: Array2<bf16> = random(17, 9, 6);
    assert_close(&a.gemm(&b).unwrap(), &naive(a.view(), b.view()), 1e-2);
    let a: Array2<f16> = random(12, 64, 7);
    let b: Array2<f16> = random(64, 5, 8);
    assert_close(&a.t().to_owned().t().gemm(&b).unwrap(), &naive(a.view(), b.view()), 2e-3);
}

#[test]
fn gemm_into_every_output_layout_with_alpha_and_beta() {
    let ctx = Context::host(2);
    let a: Array2<f32> = random(25, 11, 9);
    let b: Array2<f32> = random(11, 19, 10);
    let c0: Array2<f32> = random(25, 19, 11);
    let want = naive(a.view(), b.view()) * 1.5 + c0.mapv(|x| 0.25 * f64::from(x));

    // Row-major C, column-major C, a transposed C, and a stepped (non-contiguous) C.
    let mut row = c0.clone();
    gemm_into_with(&ctx, 1.5, &a, &b, 0.25, &mut row).unwrap();
    assert_close(&row, &want, 1e-5);

    let mut col = Array2::<f32>::zeros((25, 19).f());
    col.assign(&c0);
    gemm_into_with(&ctx, 1.5, &a, &b, 0.25, &mut col).unwrap();
    assert_close(&col.as_standard_layout().to_owned(), &want, 1e-5);

    let mut holder: Array2<f32> = c0.t().to_owned();
    let mut ct = holder.view_mut().reversed_axes();
    gemm_into_with(&ctx, 1.5, &a, &b, 0.25, &mut ct).unwrap();
    assert_close(&holder.t().to_owned(), &want, 1e-5);

    let mut wide = Array2::<f32>::from_elem((50, 19), -9.0);
    wide.slice_mut(s![..;2, ..]).assign(&c0);
    gemm_into_with(&ctx, 1.5, &a, &b, 0.25, &mut wide.slice_mut(s![..;2, ..])).unwrap();
    assert_close(&wide.slice(s![..;2, ..]).to_owned(), &want, 1e-5);
    assert!(wide.slice(s![1..;2, ..]).iter().all(|&x| x == -9.0), "rows between the view's rows are untouched");

    // bf16 inputs into an f32 output.
    let ab: Array2<bf16> = a.mapv(bf16::from_f32);
    let bb: Array2<bf16> = b.mapv(bf16::from_f32);
    let mut c = Array2::<f32>::from_elem((25, 19), f32::NAN);
    gemm_into(1.0, &ab, &bb, 0.0, &mut c).unwrap();
    assert_close(&c, &naive(ab.view(), bb.view()), 1e-5);
}

#[test]
fn mismatched_shapes_are_errors_and_leave_c_untouched() {
    let a: Array2<f32> = random(4, 5, 1);
    let b: Array2<f32> = random(6, 3, 2);
    assert!(matches!(a.gemm(&b), Err(Error::Invalid(gemm_core::Error::ShapeMismatch(_)))));
    let b: Array2<f32> = random(5, 3, 2);
    let mut c = Array2::<f32>::from_elem((4, 4), 3.0);
    let e = gemm_into(1.0, &a, &b, 1.0, &mut c).unwrap_err();
    assert!(matches!(e, Error::Invalid(gemm_core::Error::ShapeMismatch(_))), "{e}");
    assert!(c.iter().all(|&x| x == 3.0));
}

#[test]
fn empty_matrices() {
    let a = Array2::<f32>::zeros((0, 5));
    let b: Array2<f32> = random(5, 3, 2);
    assert_eq!(a.gemm(&b).unwrap().dim(), (0, 3));
    let a: Array2<f32> = random(4, 0, 1);
    let b = Array2::<f32>::zeros((0, 3));
    let mut c = Array2::<f32>::from_elem((4, 3), 2.0);
    gemm_into(1.0, &a, &b, 0.5, &mut c).unwrap();
    assert!(c.iter().all(|&x| x == 1.0), "k = 0 scales C by beta");
}
