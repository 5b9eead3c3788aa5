//! Running a catalogue-wide test's independent items on all the machine's cores: `cargo test`
//! runs the test binaries one after another and a binary's tests in parallel, so one long test
//! (every catalogue kernel in the emulator, or through LLVM) otherwise leaves all cores but one
//! idle. The items are the same as a serial loop's and their results come back in their order.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// `f` on every item, on `std::thread::available_parallelism()` threads (fewer when there are
/// fewer items), the results in the items' order. A panicking item fails the call with its own
/// panic: the first in the items' order that panicked (once one has, no new item is started).
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, items.len().max(1));
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let mut slots: Vec<Option<std::thread::Result<R>>> = (0..items.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    while !failed.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        let r = catch_unwind(AssertUnwindSafe(|| f(item)));
                        if r.is_err() {
                            failed.store(true, Ordering::Relaxed);
                        }
                        done.push((i, r));
                    }
                    done
                })
            })
            .collect();
        for w in workers {
            for (i, r) in w.join().expect("a worker panicked outside its items") {
                slots[i] = Some(r);
            }
        }
    });
    // Items left unstarted after a panic come after a panicking one in no particular order, so
    // the first panic in the items' order is met before any of them.
    let mut out = Vec::with_capacity(items.len());
    for slot in slots {
        match slot {
            Some(Ok(r)) => out.push(r),
            Some(Err(panic)) => resume_unwind(panic),
            None => unreachable!("an item was skipped without a panic before it"),
        }
    }
    out
}
