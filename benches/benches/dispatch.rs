//! Criterion: host-path dispatch overhead on tiny GEMMs (1, 8, 32; f32 and bf16 -> f32).
//! Per size, side by side in one group: `direct` (gemm_host::gemm, the baseline), `context`
//! (`Context::host(1).gemm`), `batch64 per item` (a 64-item strided batch through the scheduler,
//! time divided by 64) and `direct64 per item` (64 direct calls, divided by 64). `context - direct`
//! is the overhead of one dispatched GEMM; `batch64 - direct64` that of one batch item.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use gemm_benches::dispatch::{dtype_name, Tiny, BATCH, SIZES};
use gemm_core::{bf16, Element};
use gemm_dispatch::Context;
use std::time::{Duration, Instant};

fn group<T: Element>(c: &mut Criterion, ctx: &Context) {
    let mut group = c.benchmark_group(format!("dispatch_{}", dtype_name::<T>()));
    group.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2)).sample_size(30);
    for n in SIZES {
        let mut tiny = Tiny::<T>::new(n, ctx);
        group.bench_function(BenchmarkId::new("direct", n), |b| b.iter(|| tiny.direct()));
        group.bench_function(BenchmarkId::new("context", n), |b| b.iter(|| tiny.context(ctx)));
        // Per item: criterion divides the returned time by the iteration count, so returning
        // the batch time over BATCH reports one item's share.
        group.bench_function(BenchmarkId::new("batch64 per item", n), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    tiny.batch(ctx);
                }
                start.elapsed() / BATCH as u32
            })
        });
        group.bench_function(BenchmarkId::new("direct64 per item", n), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    tiny.direct_loop();
                }
                start.elapsed() / BATCH as u32
            })
        });
    }
    group.finish();
}

fn bench(c: &mut Criterion) {
    let ctx = Context::host(1);
    group::<f32>(c, &ctx);
    group::<bf16>(c, &ctx);
}

criterion_group!(benches, bench);
criterion_main!(benches);
