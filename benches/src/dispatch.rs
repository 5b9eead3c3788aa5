//! What the runtime adds to a GEMM on the host: the same tiny GEMM called directly on the host
//! engine (`gemm_host::gemm`, the baseline), through `Context::gemm` (validation, byte views,
//! device choice, panic guard) and as one item of a strided batch through the scheduler
//! (per-item share of a 64-item batch: job setup, cost ordering, the queue, tracing). Tiny
//! problems make the engine's own time small, so the differences are the dispatch overhead.
//! Shared by the criterion bench (`benches/dispatch.rs`) and the `dispatch-bench` binary.

use gemm_core::{DType, Element, GemmProblem, StridedBatch};
use gemm_dispatch::Context;

/// Items in the strided batch whose per-item cost is measured.
pub const BATCH: usize = 64;

/// The square sizes measured.
pub const SIZES: [usize; 3] = [1, 8, 32];

/// Inputs of one tiny GEMM (A and B of `T`, f32 C) and of a strided batch of [`BATCH`] of them.
pub struct Tiny<T: Element> {
    pub problem: GemmProblem,
    pub batch: StridedBatch,
    pub a: Vec<T>,
    pub b: Vec<T>,
    pub c: Vec<f32>,
    /// A, B and C of the whole batch.
    pub batch_a: Vec<T>,
    pub batch_b: Vec<T>,
    pub batch_c: Vec<f32>,
    /// The worker threads of a one-device host context, given to the direct call too so both run
    /// the engine alike.
    pub threads: usize,
}

impl<T: Element> Tiny<T> {
    /// An `n x n x n` problem (`C = A * B`, row-major) with seeded data.
    pub fn new(n: usize, ctx: &Context) -> Self {
        let problem = GemmProblem::new(n, n, n).with_elements::<T, T, f32>();
        let item = problem.validate().expect("a valid problem");
        let batch = StridedBatch { problem, count: BATCH, stride_a: item.a, stride_b: item.b, stride_c: item.c };
        let spans = batch.validate().expect("a valid batch");
        let values = |len: usize, seed: u64| gemm_core::reference::random_values::<T>(len, seed);
        Self {
            problem,
            batch,
            a: values(item.a, 1),
            b: values(item.b, 2),
            c: vec![0.0; item.c],
            batch_a: values(spans.a, 3),
            batch_b: values(spans.b, 4),
            batch_c: vec![0.0; spans.c],
            threads: ctx.devices()[0].compute_units,
        }
    }

    /// One GEMM on the host engine, as a program without the runtime would call it.
    pub fn direct(&mut self) {
        let p = &self.problem;
        let (a, b, c) = p.views(&self.a, &self.b, &mut self.c).expect("views");
        gemm_host::gemm(p.alpha, a, b, p.beta, c, self.threads).expect("direct gemm");
    }

    /// The same GEMM through the context.
    pub fn context(&mut self, ctx: &Context) {
        ctx.gemm(&self.problem, &self.a, &self.b, &mut self.c).expect("context gemm");
    }

    /// The batch of [`BATCH`] such GEMMs through the context's scheduler.
    pub fn batch(&mut self, ctx: &Context) {
        let report =
            ctx.gemm_strided_batched(&self.batch, &self.batch_a, &self.batch_b, &mut self.batch_c).expect("batch");
        assert!(report.all_ok(), "every batch item succeeds");
    }

    /// [`BATCH`] direct calls back to back, the baseline of the batch.
    pub fn direct_loop(&mut self) {
        let p = self.problem;
        for i in 0..BATCH {
            let (oa, ob, oc) = self.batch.offsets(i);
            let item = p.validate().expect("valid");
            let (a, b, c) = p
                .views(
                    &self.batch_a[oa..oa + item.a],
                    &self.batch_b[ob..ob + item.b],
                    &mut self.batch_c[oc..oc + item.c],
                )
                .expect("views");
            gemm_host::gemm(p.alpha, a, b, p.beta, c, self.threads).expect("direct gemm");
        }
    }
}

/// The f32 and bf16 (f32 output) flavours by name, for tables.
pub fn dtype_name<T: Element>() -> &'static str {
    if T::DTYPE == DType::Bf16 {
        "bf16->f32"
    } else {
        "f32"
    }
}
