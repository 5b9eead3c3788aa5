//! The Context end to end on host devices: every layout, transpose, scalar and dtype combination
//! the issue lists, on 1 and on 3 devices, single GEMMs and batches, bad input, and failing devices.

use gemm_core::reference::{self, random_values};
use gemm_core::{
    bf16, f16, DType, Element, Fp8E4M3, Fp8E4M3Fnuz, Fp8E5M2, Fp8E5M2Fnuz, GemmProblem, Layout, Operand, StridedBatch,
    Transpose,
};
use gemm_dispatch::{Backend, Context, DeviceInfo, DeviceKind, Error, GroupedItem};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const SHAPES: [(usize, usize, usize); 6] = [(1, 1, 1), (17, 31, 5), (0, 5, 3), (5, 0, 3), (4, 6, 0), (33, 65, 70)];

/// Runs `p` on `ctx` with seeded data and checks every entry against the reference.
fn check_one<A: Element, B: Element, C: Element>(ctx: &Context, p: &GemmProblem, seed: u64, nan_c: bool) {
    let spans = p.validate().unwrap();
    let a: Vec<A> = random_values(spans.a, seed);
    let b: Vec<B> = random_values(spans.b, seed + 1);
    let c0: Vec<C> = if nan_c { vec![C::from_f32(f32::NAN); spans.c] } else { random_values(spans.c, seed + 2) };
    let mut c = c0.clone();
    ctx.gemm(p, &a, &b, &mut c).unwrap_or_else(|e| panic!("{p:?}: {e}"));
    let r = reference::check(p, &a, &b, &c0, &c, None).unwrap();
    assert!(r.passed(), "{p:?}: {r:?}");
    // Padding between rows (leading dimensions larger than the matrix) is never written.
    let (rows, cols, rs, cs) = p.strides(Operand::C);
    for (idx, (got, before)) in c.iter().zip(&c0).enumerate() {
        let inside = rows > 0 && cols > 0 && {
            let (outer, inner) = if rs >= cs { (idx / rs, idx % rs) } else { (idx / cs, idx % cs) };
            let (i, j) = if rs >= cs { (outer, inner) } else { (inner, outer) };
            i < rows && j < cols
        };
        if !inside {
            assert!(got.to_f32().to_bits() == before.to_f32().to_bits(), "{p:?}: padding at {idx} changed");
        }
    }
}

fn all_problems(a: DType, b: DType, c: DType) -> Vec<(GemmProblem, bool)> {
    let mut out = Vec::new();
    for &(m, n, k) in &SHAPES {
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            for ta in [Transpose::No, Transpose::Yes] {
                for tb in [Transpose::No, Transpose::Yes] {
                    for (alpha, beta, nan_c) in [(1.0, 0.0, true), (0.5, -1.5, false)] {
                        let p = GemmProblem::new(m, n, k)
                            .with_dtypes(a, b, c)
                            .with_layout(layout)
                            .with_transposes(ta, tb)
                            .with_scalars(alpha, beta);
                        out.push((p, nan_c));
                        // Leading dimensions larger than the matrix.
                        let padded = p.with_leading_dims(p.lda + 3, p.ldb + 5, p.ldc + 2);
                        out.push((padded, nan_c));
                    }
                }
            }
        }
    }
    out
}

fn check_all<A: Element, B: Element, C: Element>(ctx: &Context) {
    for (i, (p, nan_c)) in all_problems(A::DTYPE, B::DTYPE, C::DTYPE).into_iter().enumerate() {
        check_one::<A, B, C>(ctx, &p, 1000 + i as u64, nan_c);
    }
}

#[test]
fn f32_every_layout_transpose_and_scalar_on_one_and_three_devices() {
    check_all::<f32, f32, f32>(&Context::host(1));
    check_all::<f32, f32, f32>(&Context::host(3));
}

#[test]
fn sixteen_bit_inputs() {
    let ctx = Context::host(1);
    check_all::<bf16, bf16, bf16>(&ctx);
    check_all::<bf16, bf16, f32>(&ctx);
    check_all::<f16, f16, f16>(&ctx);
    check_all::<f16, f16, f32>(&ctx);
}

#[test]
fn fp8_inputs_of_both_flavours() {
    let ctx = Context::host(1);
    check_all::<Fp8E4M3, Fp8E5M2, f32>(&ctx);
    check_all::<Fp8E4M3Fnuz, Fp8E4M3Fnuz, bf16>(&ctx);
    check_all::<Fp8E5M2Fnuz, Fp8E4M3Fnuz, f16>(&ctx);
}

#[test]
fn beta_zero_ignores_nan_in_c_and_alpha_zero_ignores_nan_in_a() {
    let ctx = Context::host(1);
    let p = GemmProblem::new(8, 8, 8).with_scalars(0.0, 2.0);
    let a = vec![f32::NAN; 64];
    let b = vec![1.0f32; 64];
    let mut c = vec![1.5f32; 64];
    ctx.gemm(&p, &a, &b, &mut c).unwrap();
    assert!(c.iter().all(|&x| x == 3.0), "alpha = 0 must not read A: {c:?}");
    let p = GemmProblem::new(8, 8, 8);
    let mut c = vec![f32::NAN; 64];
    ctx.gemm(&p, &b, &b, &mut c).unwrap();
    assert!(c.iter().all(|&x| x == 8.0));
}

fn strided<A: Element, C: Element>(ctx: &Context, m: usize, n: usize, k: usize, count: usize, share_a: bool) {
    let p = GemmProblem::new(m, n, k).with_elements::<A, A, C>().with_scalars(1.25, 0.5);
    let item = p.validate().unwrap();
    let batch = StridedBatch {
        problem: p,
        count,
        stride_a: if share_a { 0 } else { item.a + 7 },
        stride_b: item.b,
        stride_c: item.c + 3,
    };
    let spans = batch.validate().unwrap();
    let a: Vec<A> = random_values(spans.a, 1);
    let b: Vec<A> = random_values(spans.b, 2);
    let c0: Vec<C> = random_values(spans.c, 3);
    let mut c = c0.clone();
    let report = ctx.gemm_strided_batched(&batch, &a, &b, &mut c).unwrap();
    assert_eq!(report.items.len(), count);
    assert!(report.all_ok(), "{:?}", report.failures().collect::<Vec<_>>());
    assert_items_match(&batch, &a, &b, &c0, &c);
    for i in 0..count {
        let (_, _, oc) = batch.offsets(i);
        if item.c == 0 {
            continue;
        }
        // The gaps between items' C are untouched.
        let gap_end = (oc + batch.stride_c).min(c.len());
        assert_eq!(
            c[oc + item.c..gap_end].iter().map(|x| x.to_f32().to_bits()).collect::<Vec<_>>(),
            c0[oc + item.c..gap_end].iter().map(|x| x.to_f32().to_bits()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn strided_batches_on_one_and_three_devices() {
    for devices in [1, 3] {
        let ctx = Context::host(devices);
        strided::<f32, f32>(&ctx, 17, 31, 5, 7, false);
        strided::<f32, f32>(&ctx, 9, 4, 12, 5, true);
        strided::<bf16, bf16>(&ctx, 24, 40, 33, 6, false);
        strided::<f32, f32>(&ctx, 0, 4, 4, 3, false);
    }
}

#[test]
fn grouped_batch_of_mixed_sizes_with_an_invalid_item() {
    let shapes = [(1, 1, 1), (17, 31, 5), (64, 3, 100), (0, 3, 3), (40, 40, 40), (5, 9, 0), (100, 20, 30)];
    for devices in [1, 3] {
        let ctx = Context::host(devices);
        let problems: Vec<GemmProblem> = shapes.iter().map(|&(m, n, k)| GemmProblem::new(m, n, k)).collect();
        let data: Vec<(Vec<f32>, Vec<f32>, Vec<f32>)> = problems
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let s = p.validate().unwrap();
                (random_values(s.a, i as u64), random_values(s.b, 50 + i as u64), random_values(s.c, 99 + i as u64))
            })
            .collect();
        let mut outputs: Vec<Vec<f32>> = data.iter().map(|d| d.2.clone()).collect();
        // Item 2 gets a C buffer one element short: it alone must fail.
        outputs[2].pop();
        let mut items: Vec<GroupedItem<'_, f32, f32, f32>> = problems
            .iter()
            .zip(&data)
            .zip(outputs.iter_mut())
            .map(|((p, d), c)| GroupedItem { problem: *p, a: &d.0, b: &d.1, c })
            .collect();
        let report = ctx.gemm_grouped(&mut items);
        assert_eq!(report.items.len(), shapes.len());
        for (i, outcome) in report.items.iter().enumerate() {
            if i == 2 {
                assert!(matches!(outcome.result, Err(Error::Invalid(gemm_core::Error::BufferTooSmall { .. }))));
                assert_eq!(outputs[2], data[2].2[..data[2].2.len() - 1], "a refused item's C is untouched");
                continue;
            }
            assert!(outcome.result.is_ok(), "item {i}: {:?}", outcome.result);
            let r = reference::check(&problems[i], &data[i].0, &data[i].1, &data[i].2, &outputs[i], None).unwrap();
            assert!(r.passed(), "item {i}: {r:?}");
        }
    }
}

#[test]
fn bad_input_is_refused_and_leaves_c_untouched() {
    let ctx = Context::host(1);
    let a = vec![1.0f32; 64];
    let b = vec![1.0f32; 64];
    let c0 = vec![7.0f32; 64];
    // (problem, C length, the error expected)
    type Case = (GemmProblem, usize, fn(&Error) -> bool);
    let cases: Vec<Case> = vec![
        (GemmProblem::new(8, 8, 8).with_leading_dims(7, 8, 8), 64, |e| {
            matches!(e, Error::Invalid(gemm_core::Error::LeadingDimension { operand: Operand::A, .. }))
        }),
        (GemmProblem::new(8, 8, 9), 64, |e| matches!(e, Error::Invalid(gemm_core::Error::BufferTooSmall { .. }))),
        (GemmProblem::new(8, 8, 8), 63, |e| {
            matches!(e, Error::Invalid(gemm_core::Error::BufferTooSmall { operand: Operand::C, .. }))
        }),
        (GemmProblem::new(usize::MAX / 4, 8, 8), 64, |e| matches!(e, Error::Invalid(gemm_core::Error::Overflow(_)))),
        (GemmProblem::new(8, 8, 8).with_dtypes(DType::F32, DType::F32, DType::Bf16), 64, |e| {
            matches!(e, Error::Invalid(gemm_core::Error::UnsupportedDTypes { .. }))
        }),
        (GemmProblem::new(8, 8, 8).with_dtypes(DType::Bf16, DType::Bf16, DType::F32), 64, |e| {
            matches!(e, Error::Invalid(gemm_core::Error::DTypeMismatch { .. }))
        }),
    ];
    for (p, c_len, expected) in cases {
        let mut c = c0[..c_len].to_vec();
        let e = ctx.gemm(&p, &a, &b, &mut c).unwrap_err();
        assert!(expected(&e), "{p:?}: {e}");
        assert_eq!(c, c0[..c_len], "{p:?}: C changed");
    }
    // Batches whose outputs overlap, or whose total size overflows.
    let p = GemmProblem::new(4, 4, 4);
    let mut c = c0.clone();
    let overlap = StridedBatch { problem: p, count: 2, stride_a: 0, stride_b: 0, stride_c: 8 };
    assert!(matches!(
        ctx.gemm_strided_batched(&overlap, &a, &b, &mut c),
        Err(Error::Invalid(gemm_core::Error::OverlappingOutputs { .. }))
    ));
    let huge = StridedBatch { problem: p, count: usize::MAX / 2, stride_a: 0, stride_b: 0, stride_c: 16 };
    assert!(matches!(
        ctx.gemm_strided_batched(&huge, &a, &b, &mut c),
        Err(Error::Invalid(gemm_core::Error::Overflow(_)))
    ));
    assert_eq!(c, c0);
    assert!(matches!(ctx.gemm_on(5, &p, &a, &b, &mut c), Err(Error::NoSuchDevice { index: 5, count: 1 })));
}

#[test]
fn device_lists() {
    assert_eq!(Context::from_spec("host,host,host").unwrap().device_count(), 3);
    assert!(matches!(Context::from_spec("gpu:7"), Err(Error::DeviceSpec { .. })));
    assert!(matches!(Context::from_spec(" , "), Err(Error::DeviceSpec { .. })));
    let names: Vec<String> = Context::host(2).devices().into_iter().map(|d| d.name).collect();
    assert_eq!(names, ["host:0", "host:1"]);
}

/// A device that fails (or panics) on some calls and otherwise computes like the host.
struct Flaky {
    name: String,
    calls: AtomicUsize,
    fail_every: usize,
    panic: bool,
    inner: gemm_dispatch::backends::host::HostBackend,
}

impl Flaky {
    fn new(name: &str, fail_every: usize, panic: bool) -> Arc<Self> {
        Arc::new(Self {
            name: name.into(),
            calls: AtomicUsize::new(0),
            fail_every,
            panic,
            inner: gemm_dispatch::backends::host::HostBackend::new(9, 1),
        })
    }
}

impl Backend for Flaky {
    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            name: self.name.clone(),
            kind: DeviceKind::Other("flaky".into()),
            description: "fault injection".into(),
            compute_units: 1,
            memory_bytes: 0,
        }
    }
    fn gemm(&self, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> gemm_dispatch::Result<()> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst);
        if self.fail_every > 0 && call.is_multiple_of(self.fail_every) {
            assert!(!self.panic, "injected panic on call {call}");
            return Err(Error::Device { device: self.name.clone(), message: format!("injected fault on call {call}") });
        }
        self.inner.gemm(p, a, b, c)
    }
}

/// Every item of a strided batch agrees with the reference.
fn assert_items_match<A: Element, C: Element>(batch: &StridedBatch, a: &[A], b: &[A], c0: &[C], c: &[C]) {
    let item = batch.problem.validate().unwrap();
    for i in 0..batch.count {
        if item.c == 0 {
            continue; // nothing to compute, and no storage
        }
        let (oa, ob, oc) = batch.offsets(i);
        let r = reference::check(
            &batch.problem,
            &a[oa..oa + item.a],
            &b[ob..ob + item.b],
            &c0[oc..oc + item.c],
            &c[oc..oc + item.c],
            None,
        )
        .unwrap();
        assert!(r.passed(), "item {i}: {r:?}");
    }
}

fn batch_data(count: usize) -> (StridedBatch, Vec<f32>, Vec<f32>, Vec<f32>) {
    let p = GemmProblem::new(12, 10, 8);
    let s = p.validate().unwrap();
    let batch = StridedBatch { problem: p, count, stride_a: s.a, stride_b: s.b, stride_c: s.c };
    let t = batch.validate().unwrap();
    (batch, random_values(t.a, 5), random_values(t.b, 6), random_values(t.c, 7))
}

/// A host device that starts working only once another device has made its first call, so a
/// test does not depend on which worker thread the OS runs first.
struct AfterFirstCallOf {
    other: Arc<Flaky>,
    inner: gemm_dispatch::backends::host::HostBackend,
}

impl Backend for AfterFirstCallOf {
    fn info(&self) -> DeviceInfo {
        self.inner.info()
    }
    fn gemm(&self, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> gemm_dispatch::Result<()> {
        let start = std::time::Instant::now();
        while self.other.calls.load(Ordering::SeqCst) == 0 && start.elapsed().as_secs() < 20 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        self.inner.gemm(p, a, b, c)
    }
}

#[test]
fn a_failing_device_loses_no_item() {
    let flaky = Flaky::new("flaky", 2, false);
    let host: Arc<dyn Backend> = Arc::new(AfterFirstCallOf {
        other: flaky.clone(),
        inner: gemm_dispatch::backends::host::HostBackend::new(0, 1),
    });
    let ctx = Context::from_backends(vec![flaky.clone(), host]).unwrap();
    let (batch, a, b, c0) = batch_data(40);
    let mut c = c0.clone();
    let report = ctx.gemm_strided_batched(&batch, &a, &b, &mut c).unwrap();
    assert!(report.all_ok(), "{:?}", report.failures().collect::<Vec<_>>());
    assert!(flaky.calls.load(Ordering::SeqCst) > 0, "the flaky device took part");
    assert_items_match(&batch, &a, &b, &c0, &c);
    assert!(report.items.iter().any(|o| o.attempts == 2), "some items were retried elsewhere");
}

#[test]
fn when_every_device_fails_every_item_reports_its_error() {
    let ctx = Context::from_backends(vec![Flaky::new("bad0", 1, false), Flaky::new("bad1", 1, true)]).unwrap();
    let (batch, a, b, c0) = batch_data(9);
    let mut c = c0.clone();
    let report = ctx.gemm_strided_batched(&batch, &a, &b, &mut c).unwrap();
    assert_eq!(report.items.len(), 9);
    for o in &report.items {
        assert_eq!(o.attempts, 2, "each item was tried on both devices");
        assert!(matches!(o.result, Err(Error::Device { .. })), "{:?}", o.result);
    }
    // The single-GEMM path falls back the same way and reports the last failure.
    let single = ctx.gemm(&batch.problem, &a[..96], &b[..80], &mut c[..120]);
    assert!(matches!(single, Err(Error::Device { .. })));
}

#[test]
fn submitted_batches_run_in_the_background_and_return_every_item() {
    let ctx = Context::host(3);
    let (batch, a, b, c0) = batch_data(12);
    let handle = ctx.submit_strided(batch, a.clone(), b.clone(), c0.clone()).unwrap();
    // Meanwhile, a grouped batch of mixed sizes, one of them invalid.
    let items: Vec<gemm_dispatch::OwnedItem<f32, f32, f32>> = [(5, 7, 3), (16, 2, 40), (4, 4, 4)]
        .iter()
        .enumerate()
        .map(|(i, &(m, n, k))| {
            let p = GemmProblem::new(m, n, k);
            let s = p.validate().unwrap();
            let c_len = if i == 2 { s.c - 1 } else { s.c };
            gemm_dispatch::OwnedItem {
                problem: p,
                a: random_values(s.a, i as u64),
                b: random_values(s.b, 10 + i as u64),
                c: vec![0.0; c_len],
            }
        })
        .collect();
    let grouped = ctx.submit_grouped(items).unwrap();
    let (c, report) = handle.wait().unwrap();
    let report = report.unwrap();
    assert_eq!(report.items.len(), 12);
    assert!(report.all_ok());
    assert_items_match(&batch, &a, &b, &c0, &c);
    let (items, report) = grouped.wait().unwrap();
    assert_eq!(report.items.len(), 3);
    assert!(report.items[0].result.is_ok() && report.items[1].result.is_ok());
    assert!(matches!(report.items[2].result, Err(Error::Invalid(gemm_core::Error::BufferTooSmall { .. }))));
    for it in &items[..2] {
        let zeros = vec![0f32; it.c.len()];
        assert!(reference::check(&it.problem, &it.a, &it.b, &zeros, &it.c, None).unwrap().passed());
    }
    // Bad input is refused at submission.
    let bad = StridedBatch { stride_c: 1, ..batch };
    assert!(matches!(
        ctx.submit_strided(bad, a, b, c0),
        Err(Error::Invalid(gemm_core::Error::OverlappingOutputs { .. }))
    ));
}

/// The invariants of a batch trace that hold whatever the thread timing: every run item has a
/// trace inside the batch's wall time, the ranks are a permutation, and the per-device counts
/// add up to the batch.
fn assert_trace_is_consistent(report: &gemm_dispatch::BatchReport, ran: usize) {
    let traces: Vec<_> = report.items.iter().filter_map(|o| o.trace).collect();
    assert_eq!(traces.len(), ran, "every run item has a trace");
    for t in &traces {
        assert!(t.started <= t.finished && t.finished <= report.wall, "{t:?} within {:?}", report.wall);
    }
    let mut ranks: Vec<usize> = traces.iter().map(|t| t.rank).collect();
    ranks.sort_unstable();
    assert_eq!(ranks, (0..ran).collect::<Vec<_>>(), "ranks are a permutation");
    let order = report.completion_order();
    assert_eq!(order.len(), ran);
    for pair in order.windows(2) {
        let (a, b) = (report.items[pair[0]].trace.unwrap(), report.items[pair[1]].trace.unwrap());
        assert!(a.rank < b.rank);
    }
    let usage = report.device_usage();
    assert_eq!(usage.len(), report.devices.len());
    assert_eq!(usage.iter().map(|u| u.items).sum::<usize>(), ran, "items per device sum to the batch");
    for (d, u) in usage.iter().enumerate() {
        assert_eq!(u.items, report.items.iter().filter(|o| o.device == Some(d)).count());
        assert!(u.busy <= report.wall && (0.0..=1.0).contains(&u.utilisation), "{u:?}");
        // One item at a time per host device: its items' intervals do not overlap.
        let mut spans: Vec<_> = report.items.iter().filter(|o| o.device == Some(d)).filter_map(|o| o.trace).collect();
        spans.sort_by_key(|t| t.started);
        for w in spans.windows(2) {
            assert!(w[0].finished <= w[1].started, "device {d}: {w:?}");
        }
    }
}

#[test]
fn batch_reports_trace_when_and_where_each_item_ran() {
    for devices in [1, 3] {
        let ctx = Context::host(devices);
        let (batch, a, b, c0) = batch_data(24);
        let mut c = c0.clone();
        let report = ctx.gemm_strided_batched(&batch, &a, &b, &mut c).unwrap();
        assert!(report.all_ok());
        assert_eq!(report.devices, (0..devices).map(|d| format!("host:{d}")).collect::<Vec<_>>());
        assert_trace_is_consistent(&report, 24);
        if devices == 1 {
            // One device runs the items one after another: ranks follow start times.
            let order = report.completion_order();
            for w in order.windows(2) {
                assert!(report.items[w[0]].trace.unwrap().finished <= report.items[w[1]].trace.unwrap().started);
            }
        }
    }
}

#[test]
fn grouped_traces_leave_out_invalid_items_and_observers_hear_each_item_once() {
    let ctx = Context::host(2);
    let shapes = [(5, 7, 3), (40, 30, 20), (1, 1, 1), (16, 2, 40), (9, 9, 9)];
    let mut data: Vec<gemm_dispatch::OwnedItem<f32, f32, f32>> = shapes
        .iter()
        .enumerate()
        .map(|(i, &(m, n, k))| {
            let p = GemmProblem::new(m, n, k);
            let s = p.validate().unwrap();
            // Item 2's C is too short: it fails validation and never runs.
            let c_len = if i == 2 { s.c - 1 } else { s.c };
            let (a, b) = (random_values(s.a, i as u64), random_values(s.b, 50 + i as u64));
            gemm_dispatch::OwnedItem { problem: p, a, b, c: vec![0.0; c_len] }
        })
        .collect();
    let mut items: Vec<GroupedItem<'_, f32, f32, f32>> =
        data.iter_mut().map(|it| GroupedItem { problem: it.problem, a: &it.a, b: &it.b, c: &mut it.c }).collect();
    let heard = parking_lot::Mutex::new(Vec::new());
    let report = ctx.gemm_grouped_observed(&mut items, &|i, o| heard.lock().push((i, o.trace.unwrap().rank)));
    assert!(report.items[2].trace.is_none() && report.items[2].device.is_none());
    assert_trace_is_consistent(&report, 4);
    let mut heard = heard.into_inner();
    heard.sort_unstable();
    let expected: Vec<(usize, usize)> =
        [0, 1, 3, 4].iter().map(|&i| (i, report.items[i].trace.unwrap().rank)).collect();
    assert_eq!(heard, expected, "the observer hears each valid item once, by the caller's index");
}

#[test]
fn retried_items_are_traced_on_the_device_that_finished_them() {
    let flaky = Flaky::new("flaky", 2, false);
    let host: Arc<dyn Backend> = Arc::new(AfterFirstCallOf {
        other: flaky.clone(),
        inner: gemm_dispatch::backends::host::HostBackend::new(0, 1),
    });
    let ctx = Context::from_backends(vec![flaky.clone(), host]).unwrap();
    let (batch, a, b, c0) = batch_data(40);
    let mut c = c0.clone();
    let report = ctx.gemm_strided_batched(&batch, &a, &b, &mut c).unwrap();
    assert!(report.all_ok());
    assert_trace_is_consistent(&report, 40);
    let retried: Vec<_> = report.items.iter().filter(|o| o.attempts == 2).collect();
    assert!(!retried.is_empty(), "some items were retried elsewhere");
    for o in retried {
        // The flaky device fails every other call, so a retried item failed there first: its
        // outcome and its trace belong to the host, which finished it.
        assert_eq!(o.device, Some(1), "{o:?}");
        assert!(o.trace.is_some());
    }
}

#[test]
fn submitted_batches_count_their_finished_items() {
    let ctx = Context::host(2);
    let (batch, a, b, c0) = batch_data(16);
    let handle = ctx.submit_strided(batch, a, b, c0).unwrap();
    assert_eq!(handle.total(), 16);
    let start = std::time::Instant::now();
    while !handle.is_finished() && start.elapsed().as_secs() < 20 {
        assert!(handle.completed() <= 16);
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(handle.completed(), 16);
    let (_, report) = handle.wait().unwrap();
    assert_trace_is_consistent(&report.unwrap(), 16);

    let bad = gemm_dispatch::OwnedItem {
        problem: GemmProblem::new(4, 4, 4),
        a: vec![0f32; 16],
        b: vec![0f32; 16],
        c: vec![],
    };
    let good = gemm_dispatch::OwnedItem { c: vec![0f32; 16], ..bad.clone() };
    let handle = ctx.submit_grouped(vec![good, bad]).unwrap();
    while !handle.is_finished() {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!((handle.completed(), handle.total()), (2, 2), "an invalid item counts as done");
}
