//! Tensor-parallel GEMM on 1, 2 and 3 host devices: column- and row-parallel plans against the
//! reference for every layout, transpose and scalar case on shapes that do not split evenly;
//! f32 partial sums; bad input; failing devices; the in-process collectives.

use gemm_core::reference::{self, random_values};
use gemm_core::{bf16, f16, DType, Element, GemmProblem, Layout, Operand, Transpose};
use gemm_dispatch::api::parallel::split;
use gemm_dispatch::backends::collective::{Collective, CollectiveType, HostCollective};
use gemm_dispatch::backends::host::HostBackend;
use gemm_dispatch::{Backend, Context, DeviceInfo, DeviceKind, Error, Reduce, TpPlan};
use parking_lot::Mutex;
use std::sync::Arc;

const PLANS: [TpPlan; 3] =
    [TpPlan::Column, TpPlan::Row { reduce: Reduce::ReduceScatter }, TpPlan::Row { reduce: Reduce::AllReduce }];

/// Shapes that do not divide by 2 or 3, with n < devices and k < devices among them.
const SHAPES: [(usize, usize, usize); 8] =
    [(17, 31, 5), (1, 1, 1), (5, 2, 7), (4, 9, 2), (6, 1, 1), (0, 3, 3), (3, 0, 2), (4, 5, 0)];

fn run_and_check<A: Element, B: Element, C: Element>(
    ctx: &Context,
    plan: TpPlan,
    p: &GemmProblem,
    seed: u64,
    nan_c: bool,
) {
    let spans = p.validate().unwrap();
    let a: Vec<A> = random_values(spans.a, seed);
    let b: Vec<B> = random_values(spans.b, seed + 1);
    let c0: Vec<C> = if nan_c { vec![C::from_f32(f32::NAN); spans.c] } else { random_values(spans.c, seed + 2) };
    let mut c = c0.clone();
    ctx.gemm_tensor_parallel(plan, p, &a, &b, &mut c).unwrap_or_else(|e| panic!("{plan:?} {p:?}: {e}"));
    let r = reference::check(p, &a, &b, &c0, &c, None).unwrap();
    assert!(r.passed(), "{} devices, {plan:?}, {p:?}: {r:?}", ctx.device_count());
    // Entries outside the matrix (leading-dimension padding) keep their bits.
    let (rows, cols, rs, cs) = p.strides(Operand::C);
    let mut inside = vec![false; c.len()];
    for i in 0..rows {
        for j in 0..cols {
            inside[i * rs + j * cs] = true;
        }
    }
    for (idx, (got, before)) in c.iter().zip(&c0).enumerate() {
        if !inside[idx] {
            assert_eq!(got.to_f32().to_bits(), before.to_f32().to_bits(), "{plan:?} {p:?}: padding at {idx} changed");
        }
    }
}

fn sweep<A: Element, B: Element, C: Element>(devices: usize) {
    let ctx = Context::host(devices);
    let mut seed = 0;
    for &(m, n, k) in &SHAPES {
        for layout in [Layout::RowMajor, Layout::ColMajor] {
            for ta in [Transpose::No, Transpose::Yes] {
                for tb in [Transpose::No, Transpose::Yes] {
                    for (alpha, beta, nan_c) in [(1.0, 0.0, true), (0.5, -1.5, false)] {
                        let p = GemmProblem::new(m, n, k)
                            .with_dtypes(A::DTYPE, B::DTYPE, C::DTYPE)
                            .with_layout(layout)
                            .with_transposes(ta, tb)
                            .with_scalars(alpha, beta);
                        let padded = p.with_leading_dims(p.lda + 3, p.ldb + 1, p.ldc + 2);
                        for plan in PLANS {
                            seed += 10;
                            run_and_check::<A, B, C>(&ctx, plan, &p, seed, nan_c);
                            run_and_check::<A, B, C>(&ctx, plan, &padded, seed + 5, nan_c);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn f32_on_one_two_and_three_devices() {
    for devices in [1, 2, 3] {
        sweep::<f32, f32, f32>(devices);
    }
}

#[test]
fn bf16_on_one_two_and_three_devices() {
    for devices in [1, 2, 3] {
        sweep::<bf16, bf16, bf16>(devices);
    }
}

#[test]
fn sixteen_bit_inputs_with_f32_and_f16_outputs() {
    for devices in [2, 3] {
        sweep::<bf16, bf16, f32>(devices);
        sweep::<f16, f16, f16>(devices);
    }
}

#[test]
fn larger_shapes_match_one_device() {
    for devices in [2, 3] {
        let tp = Context::host(devices);
        let one = Context::host(1);
        let p = GemmProblem::new(70, 45, 130).with_scalars(1.25, 0.75);
        let s = p.validate().unwrap();
        let a: Vec<f32> = random_values(s.a, 1);
        let b: Vec<f32> = random_values(s.b, 2);
        let c0: Vec<f32> = random_values(s.c, 3);
        let mut single = c0.clone();
        one.gemm(&p, &a, &b, &mut single).unwrap();
        for plan in PLANS {
            let mut c = c0.clone();
            tp.gemm_tensor_parallel(plan, &p, &a, &b, &mut c).unwrap();
            assert!(reference::check(&p, &a, &b, &c0, &c, None).unwrap().passed(), "{plan:?}");
            let max = c.iter().zip(&single).map(|(x, y)| (x - y).abs()).fold(0f32, f32::max);
            assert!(max < 1e-4, "{plan:?}: {max} from the one-device result");
            if plan == TpPlan::Column {
                // Column blocks are computed by the same kernel over the same K: the same bits.
                assert_eq!(c, single, "column-parallel on {devices} devices");
            }
        }
    }
}

#[test]
fn row_parallel_partials_are_summed_in_f32_and_rounded_once() {
    // op(A) = [1 1 1 1], op(B) = [1, 2^-9, -1, 0]^T; device 0 gets k 0..2, device 1 k 2..4.
    // Device 0's partial 1 + 2^-9 is not a bf16; rounded to bf16 before the sum it would be 1,
    // and C would be 0 instead of 2^-9.
    let ctx = Context::host(2);
    let p = GemmProblem::new(1, 1, 4).with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16);
    let a = [bf16::ONE; 4];
    let b = [bf16::ONE, bf16::from_f32(1.0 / 512.0), bf16::from_f32(-1.0), bf16::ZERO];
    for reduce in [Reduce::ReduceScatter, Reduce::AllReduce] {
        let mut c = [bf16::NAN];
        ctx.gemm_tensor_parallel(TpPlan::Row { reduce }, &p, &a, &b, &mut c).unwrap();
        assert_eq!(c[0].to_f32(), 1.0 / 512.0, "{reduce:?}");
    }
}

/// Records the problems it is given, then computes like the host.
struct Spy {
    seen: Mutex<Vec<GemmProblem>>,
    inner: HostBackend,
}

impl Backend for Spy {
    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            name: "spy".into(),
            kind: DeviceKind::Other("spy".into()),
            description: "records problems".into(),
            compute_units: 1,
            memory_bytes: 0,
        }
    }
    fn gemm(&self, p: &GemmProblem, a: &[u8], b: &[u8], c: &mut [u8]) -> gemm_dispatch::Result<()> {
        self.seen.lock().push(*p);
        self.inner.gemm(p, a, b, c)
    }
}

#[test]
fn devices_see_f32_partials_for_sixteen_bit_outputs_and_column_blocks_in_c_dtype() {
    let spies: Vec<Arc<Spy>> =
        (0..3).map(|i| Arc::new(Spy { seen: Mutex::new(Vec::new()), inner: HostBackend::new(i, 1) })).collect();
    let ctx = Context::from_backends(spies.iter().map(|s| s.clone() as Arc<dyn Backend>).collect()).unwrap();
    let p = GemmProblem::new(5, 7, 8).with_dtypes(DType::Bf16, DType::Bf16, DType::Bf16).with_scalars(2.0, 0.5);
    let s = p.validate().unwrap();
    let (a, b, mut c): (Vec<bf16>, Vec<bf16>, Vec<bf16>) =
        (random_values(s.a, 1), random_values(s.b, 2), random_values(s.c, 3));
    ctx.gemm_tensor_parallel(TpPlan::Row { reduce: Reduce::ReduceScatter }, &p, &a, &b, &mut c).unwrap();
    let ks: Vec<usize> = spies
        .iter()
        .map(|spy| {
            let seen = spy.seen.lock();
            assert_eq!(seen.len(), 1);
            let q = seen[0];
            assert_eq!((q.a_type, q.b_type, q.c_type), (DType::Bf16, DType::Bf16, DType::F32));
            assert_eq!((q.m, q.n, q.alpha, q.beta), (5, 7, 2.0, 0.0), "partials never read C");
            q.k
        })
        .collect();
    assert_eq!(ks, [3, 3, 2]);
    for spy in &spies {
        spy.seen.lock().clear();
    }
    ctx.gemm_tensor_parallel(TpPlan::Column, &p, &a, &b, &mut c).unwrap();
    let ns: Vec<usize> = spies
        .iter()
        .map(|spy| {
            let q = spy.seen.lock()[0];
            assert_eq!((q.c_type, q.k, q.beta), (DType::Bf16, 8, 0.5));
            q.n
        })
        .collect();
    assert_eq!(ns, [3, 2, 2]);
}

#[test]
fn splits_are_even_and_cover_everything() {
    assert_eq!(split(31, 3), [0..11, 11..21, 21..31]);
    assert_eq!(split(2, 3), [0..1, 1..2, 2..2]);
    assert_eq!(split(0, 2), [0..0, 0..0]);
    assert_eq!(split(5, 0), vec![0..5usize; 1]);
    for len in 0..20 {
        for parts in 1..6 {
            let s = split(len, parts);
            assert_eq!(s.len(), parts);
            assert_eq!(s.iter().map(|r| r.len()).sum::<usize>(), len);
            assert!(s.windows(2).all(|w| w[0].end == w[1].start && w[0].len() >= w[1].len()));
            assert!(s[0].len() - s[parts - 1].len() <= 1);
        }
    }
}

#[test]
fn bad_input_is_refused_and_leaves_c_untouched() {
    let ctx = Context::host(3);
    let a = vec![1.0f32; 64];
    let b = vec![1.0f32; 64];
    let c0 = vec![7.0f32; 64];
    for plan in PLANS {
        let cases = [
            (GemmProblem::new(8, 8, 8).with_leading_dims(7, 8, 8), 64),
            (GemmProblem::new(8, 8, 9), 64),
            (GemmProblem::new(8, 8, 8), 63),
            (GemmProblem::new(usize::MAX / 4, 8, 8), 64),
            (GemmProblem::new(8, 8, 8).with_dtypes(DType::Bf16, DType::Bf16, DType::F32), 64),
        ];
        for (p, len) in cases {
            let mut c = c0[..len].to_vec();
            let e = ctx.gemm_tensor_parallel(plan, &p, &a, &b, &mut c).unwrap_err();
            assert!(matches!(e, Error::Invalid(_)), "{plan:?} {p:?}: {e}");
            assert_eq!(c, c0[..len], "{plan:?} {p:?}: C changed");
        }
        // A collective with the wrong number of ranks.
        let mut c = c0.clone();
        let e = ctx
            .gemm_tensor_parallel_with(&HostCollective::new(2), plan, &GemmProblem::new(8, 8, 8), &a, &b, &mut c)
            .unwrap_err();
        assert!(e.to_string().contains("2 ranks for 3 devices"), "{e}");
        assert_eq!(c, c0);
    }
}

/// A device that always fails, or panics.
struct Broken {
    name: &'static str,
    panic: bool,
}

impl Backend for Broken {
    fn info(&self) -> DeviceInfo {
        DeviceInfo {
            name: self.name.into(),
            kind: DeviceKind::Other("broken".into()),
            description: "fault injection".into(),
            compute_units: 1,
            memory_bytes: 0,
        }
    }
    fn gemm(&self, _: &GemmProblem, _: &[u8], _: &[u8], _: &mut [u8]) -> gemm_dispatch::Result<()> {
        assert!(!self.panic, "injected panic");
        Err(Error::Device { device: self.name.into(), message: "injected fault".into() })
    }
}

#[test]
fn a_failing_device_is_reported_and_c_is_untouched() {
    let host = |i| Arc::new(HostBackend::new(i, 1)) as Arc<dyn Backend>;
    let p = GemmProblem::new(9, 10, 11).with_scalars(1.0, 1.0);
    let s = p.validate().unwrap();
    let (a, b, c0): (Vec<f32>, Vec<f32>, Vec<f32>) =
        (random_values(s.a, 1), random_values(s.b, 2), random_values(s.c, 3));
    for panic in [false, true] {
        let ctx = Context::from_backends(vec![host(0), Arc::new(Broken { name: "broken:1", panic }), host(2)]).unwrap();
        for plan in PLANS {
            let mut c = c0.clone();
            let e = ctx.gemm_tensor_parallel(plan, &p, &a, &b, &mut c).unwrap_err();
            match &e {
                Error::Device { device, message } => {
                    assert_eq!(device, "broken:1", "{e}");
                    assert!(message.contains("shard 1 of 3"), "{e}");
                    assert!(message.contains(if panic { "panicked" } else { "injected fault" }), "{e}");
                }
                other => panic!("{plan:?}: expected a device error, got {other:?}"),
            }
            assert_eq!(c, c0, "{plan:?}: C changed");
        }
    }
    // Two failing devices: the first is the error, the second is named in it.
    let ctx = Context::from_backends(vec![
        Arc::new(Broken { name: "bad:0", panic: false }),
        host(1),
        Arc::new(Broken { name: "bad:2", panic: false }),
    ])
    .unwrap();
    let mut c = c0.clone();
    let e = ctx.gemm_tensor_parallel(TpPlan::Column, &p, &a, &b, &mut c).unwrap_err();
    assert!(matches!(&e, Error::Device { device, .. } if device == "bad:0"), "{e}");
    assert!(e.to_string().contains("shard 2 on bad:2"), "{e}");
    assert_eq!(c, c0);
}

/// A collective that fails every call.
struct FailingCollective(usize);

impl Collective for FailingCollective {
    type Buffer = Vec<u8>;
    fn ranks(&self) -> usize {
        self.0
    }
    fn all_gather(&self, _: &[Vec<u8>], _: &mut [Vec<u8>], _: usize, _: CollectiveType) -> gemm_dispatch::Result<()> {
        Err(Error::Device { device: "link".into(), message: "all_gather failed".into() })
    }
    fn reduce_scatter(
        &self,
        _: &[Vec<u8>],
        _: &mut [Vec<u8>],
        _: usize,
        _: CollectiveType,
    ) -> gemm_dispatch::Result<()> {
        Err(Error::Device { device: "link".into(), message: "reduce_scatter failed".into() })
    }
    fn all_reduce(&self, _: &[Vec<u8>], _: &mut [Vec<u8>], _: usize, _: CollectiveType) -> gemm_dispatch::Result<()> {
        Err(Error::Device { device: "link".into(), message: "all_reduce failed".into() })
    }
}

#[test]
fn a_failing_collective_is_reported_and_c_is_untouched() {
    let ctx = Context::host(2);
    let p = GemmProblem::new(4, 4, 4);
    let (a, b, c0) = (vec![1.0f32; 16], vec![1.0f32; 16], vec![3.0f32; 16]);
    for (plan, what) in PLANS.into_iter().zip(["all_gather", "reduce_scatter", "all_reduce"]) {
        let mut c = c0.clone();
        let e = ctx.gemm_tensor_parallel_with(&FailingCollective(2), plan, &p, &a, &b, &mut c).unwrap_err();
        assert!(e.to_string().contains(what), "{e}");
        assert_eq!(c, c0);
    }
}

fn bytes_of(t: CollectiveType, values: &[f32]) -> Vec<u8> {
    match t {
        CollectiveType::F32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        CollectiveType::Bf16 => values.iter().flat_map(|v| bf16::from_f32(*v).to_bits().to_le_bytes()).collect(),
        CollectiveType::F16 => values.iter().flat_map(|v| f16::from_f32(*v).to_bits().to_le_bytes()).collect(),
    }
}

fn values_of(t: CollectiveType, bytes: &[u8]) -> Vec<f32> {
    match t {
        CollectiveType::F32 => bytes.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect(),
        CollectiveType::Bf16 => {
            bytes.chunks(2).map(|c| bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32()).collect()
        }
        CollectiveType::F16 => {
            bytes.chunks(2).map(|c| f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32()).collect()
        }
    }
}

#[test]
fn host_collectives_on_every_type() {
    for t in [CollectiveType::F32, CollectiveType::Bf16, CollectiveType::F16] {
        let coll = HostCollective::new(3);
        // Rank r holds [r, 10 + r, 20 + r, ..] (6 elements).
        let send: Vec<Vec<u8>> =
            (0..3).map(|r| bytes_of(t, &(0..6).map(|e| (10 * e + r) as f32).collect::<Vec<_>>())).collect();
        let mut recv = vec![vec![0u8; 18 * t.size()]; 3];
        coll.all_gather(&send, &mut recv, 6, t).unwrap();
        for out in &recv {
            let got = values_of(t, out);
            let want: Vec<f32> = (0..3).flat_map(|r| (0..6).map(move |e| (10 * e + r) as f32)).collect();
            assert_eq!(got, want, "{t:?}");
        }
        // Sums: element e is 30e + 3.
        let mut recv = vec![vec![0u8; 2 * t.size()]; 3];
        coll.reduce_scatter(&send, &mut recv, 2, t).unwrap();
        for (r, out) in recv.iter().enumerate() {
            let want: Vec<f32> = (2 * r..2 * r + 2).map(|e| (30 * e + 3) as f32).collect();
            assert_eq!(values_of(t, out), want, "{t:?} rank {r}");
        }
        let mut recv = vec![vec![0u8; 6 * t.size()]; 3];
        coll.all_reduce(&send, &mut recv, 6, t).unwrap();
        for out in &recv {
            assert_eq!(values_of(t, out), (0..6).map(|e| (30 * e + 3) as f32).collect::<Vec<_>>(), "{t:?}");
        }
        // Wrong rank counts and short buffers are refused before anything is written.
        let mut short = vec![vec![0xAAu8; 6 * t.size() - 1]; 3];
        assert!(coll.all_reduce(&send, &mut short, 6, t).is_err());
        assert!(short.iter().all(|b| b.iter().all(|&x| x == 0xAA)));
        assert!(coll.all_gather(&send[..2], &mut recv, 2, t).is_err());
        assert!(coll.reduce_scatter(&send, &mut recv, usize::MAX / 2, t).is_err());
    }
    // 16-bit sums are taken in f32 and rounded once: 1 + 3 * 2^-9 is 1 + 2^-7 after one rounding
    // in bf16, but 1 if each addition were rounded to bf16.
    let t = CollectiveType::Bf16;
    let coll = HostCollective::new(4);
    let send = vec![
        bytes_of(t, &[1.0]),
        bytes_of(t, &[1.0 / 512.0]),
        bytes_of(t, &[1.0 / 512.0]),
        bytes_of(t, &[1.0 / 512.0]),
    ];
    let mut recv = vec![vec![0u8; 2]; 4];
    coll.all_reduce(&send, &mut recv, 1, t).unwrap();
    assert_eq!(values_of(t, &recv[0]), [1.0 + 1.0 / 128.0]);
}
