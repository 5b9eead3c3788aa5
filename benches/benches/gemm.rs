//! Criterion: host GEMM at 256..4096 for f32 and bf16, side by side with OpenBLAS,
//! `matrixmultiply` and ndarray's `dot` (2 threads each; `GEMM_BENCH_THREADS` overrides).
//! One group per dtype, one `BenchmarkId` per implementation and size, throughput in flops.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gemm_benches::{set_threads, Dtype, Impl, Problem};
use std::time::Duration;

const SIZES: [usize; 5] = [256, 512, 1024, 2048, 4096];

fn threads() -> usize {
    std::env::var("GEMM_BENCH_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(2)
}

fn bench(c: &mut Criterion) {
    let threads = threads();
    set_threads(threads);
    for dtype in [Dtype::F32, Dtype::Bf16] {
        let mut group = c.benchmark_group(format!("gemm_{}", dtype.name()));
        group.sample_size(10).warm_up_time(Duration::from_millis(500));
        for size in SIZES {
            let mut p = Problem::new(size, size, size, size as u64);
            group.throughput(Throughput::Elements(p.flops() as u64));
            // 4096 takes ~0.7 s per GEMM: give it room for its ten samples.
            group.measurement_time(Duration::from_secs(if size >= 4096 { 8 } else { 3 }));
            for imp in Impl::ALL {
                // A path this CPU lacks (vdpbf16ps without AVX512_BF16) is left out.
                if p.run(imp, dtype, threads).is_err() {
                    continue;
                }
                group.bench_function(BenchmarkId::new(imp.name(dtype), size), |bench| {
                    bench.iter(|| p.run(imp, dtype, threads).expect("measured once above"))
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
