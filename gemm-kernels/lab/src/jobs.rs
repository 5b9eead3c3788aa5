//! Work spread over threads: the timing model predicts one launch per thread (each
//! prediction builds its own emulated device), so commands that predict many kernels
//! (`gemm plan --characterise`, `gemm compare --schedules`) run them side by side.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The default thread count: every hardware thread.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `f` over `items` on `jobs` threads (each takes the next item as it finishes one), the
/// results in `items` order.
pub fn map_jobs<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let out: Vec<parking_lot::Mutex<Option<R>>> = items.iter().map(|_| parking_lot::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                *out[i].lock() = Some(r);
            });
        }
    });
    out.into_iter().map(|m| m.into_inner().expect("every item ran")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results come back in order whatever the thread count, each item once.
    #[test]
    fn results_in_item_order() {
        let items: Vec<u64> = (0..97).collect();
        let calls = AtomicUsize::new(0);
        for jobs in [1, 3, 16, 200] {
            calls.store(0, Ordering::SeqCst);
            let r = map_jobs(&items, jobs, |&x| {
                calls.fetch_add(1, Ordering::SeqCst);
                x * x
            });
            assert_eq!(r, items.iter().map(|x| x * x).collect::<Vec<_>>(), "{jobs}");
            assert_eq!(calls.load(Ordering::SeqCst), items.len());
        }
        assert!(map_jobs(&[] as &[u8], 4, |_| 0).is_empty());
    }
}
