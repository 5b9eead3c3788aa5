//! Batches that run in the background: submit owned buffers, get a [`BatchHandle`], collect the
//! outputs and one result per item when they are done. The handle owns the data, so the caller
//! is free to prepare the next batch meanwhile (the streaming shape of an inference pipeline).
//! [`BatchHandle::completed`] counts finished items while it runs, for progress reports; the
//! report it yields carries each item's device, times and completion rank.

use crate::api::context::{BatchReport, Context, GroupedItem};
use crate::error::{Error, Result};
use gemm_core::{Element, GemmProblem, StridedBatch};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// One item of an owned grouped batch.
#[derive(Clone, Debug)]
pub struct OwnedItem<A, B, C> {
    pub problem: GemmProblem,
    pub a: Vec<A>,
    pub b: Vec<B>,
    pub c: Vec<C>,
}

/// What a grouped batch hands back: its items (C computed) and one result per item.
pub type GroupedOutput<A, B, C> = (Vec<OwnedItem<A, B, C>>, BatchReport);

/// A batch running in the background. Dropping it waits for the batch (buffers are owned by
/// the worker, so nothing can be freed under it).
pub struct BatchHandle<T: Send + 'static> {
    worker: Option<JoinHandle<T>>,
    /// Items with a final outcome so far, counted by the batch's observer.
    done: Arc<AtomicUsize>,
    total: usize,
}

impl<T: Send + 'static> BatchHandle<T> {
    /// Starts `work`, which is given the counter of finished items to advance.
    fn spawn(total: usize, work: impl FnOnce(&AtomicUsize) -> T + Send + 'static) -> Result<Self> {
        let done = Arc::new(AtomicUsize::new(0));
        let counter = done.clone();
        let worker = std::thread::Builder::new()
            .name("gemm-batch".into())
            .spawn(move || work(&counter))
            .map_err(|e| Error::NotRun(format!("cannot start a batch thread: {e}")))?;
        Ok(Self { worker: Some(worker), done, total })
    }

    /// How many items have their final outcome so far (invalid grouped items count from the
    /// start: they are done before anything runs). Reaches [`total`](Self::total) when the
    /// batch is done.
    pub fn completed(&self) -> usize {
        self.done.load(Ordering::Relaxed).min(self.total)
    }

    /// The number of items in the batch.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Whether the batch has finished (then [`wait`](Self::wait) returns at once).
    pub fn is_finished(&self) -> bool {
        self.worker.as_ref().is_none_or(|w| w.is_finished())
    }

    /// Waits for the batch and returns its outputs and report.
    pub fn wait(mut self) -> Result<T> {
        let worker = self.worker.take().ok_or_else(|| Error::NotRun("the batch was already collected".into()))?;
        worker.join().map_err(|_| Error::NotRun("the batch thread panicked".into()))
    }
}

impl<T: Send + 'static> Drop for BatchHandle<T> {
    fn drop(&mut self) {
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

impl Context {
    /// Starts a strided batch on owned buffers. Invalid batches are refused here, before
    /// anything starts; the handle yields C and the batch's result (one outcome per item).
    pub fn submit_strided<A: Element, B: Element, C: Element>(
        &self,
        batch: StridedBatch,
        a: Vec<A>,
        b: Vec<B>,
        mut c: Vec<C>,
    ) -> Result<BatchHandle<(Vec<C>, Result<BatchReport>)>> {
        // Validate before starting anything, so bad input is reported at submission.
        batch.problem.check_elements::<A, B, C>()?;
        batch.validate_buffers(a.len(), b.len(), c.len())?;
        let ctx = self.clone();
        BatchHandle::spawn(batch.count, move |done| {
            let count = |_: usize, _: &_| {
                done.fetch_add(1, Ordering::Relaxed);
            };
            let report = ctx.gemm_strided_batched_observed(&batch, &a, &b, &mut c, &count);
            (c, report)
        })
    }

    /// Starts a grouped batch on owned items. The handle yields the items (with their C
    /// computed) and one result per item.
    pub fn submit_grouped<A: Element, B: Element, C: Element>(
        &self,
        mut items: Vec<OwnedItem<A, B, C>>,
    ) -> Result<BatchHandle<GroupedOutput<A, B, C>>> {
        let ctx = self.clone();
        BatchHandle::spawn(items.len(), move |done| {
            // Invalid items never run, so the observer never hears of them: count them first.
            let invalid = items
                .iter_mut()
                .map(|it| it.problem.views(&it.a, &it.b, &mut it.c).is_err())
                .filter(|&bad| bad)
                .count();
            done.fetch_add(invalid, Ordering::Relaxed);
            let count = |_: usize, _: &_| {
                done.fetch_add(1, Ordering::Relaxed);
            };
            let mut borrowed: Vec<GroupedItem<'_, A, B, C>> = items
                .iter_mut()
                .map(|it| GroupedItem { problem: it.problem, a: &it.a, b: &it.b, c: &mut it.c })
                .collect();
            let report = ctx.gemm_grouped_observed(&mut borrowed, &count);
            drop(borrowed);
            (items, report)
        })
    }
}
