//! Batches that run in the background: submit owned buffers, get a [`BatchHandle`], collect the
//! outputs and one result per item when they are done. The handle owns the data, so the caller
//! is free to prepare the next batch meanwhile (the streaming shape of an inference pipeline).

use crate::context::{BatchReport, Context, GroupedItem};
use crate::error::{Error, Result};
use gemm_core::{Element, GemmProblem, StridedBatch};
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
}

impl<T: Send + 'static> BatchHandle<T> {
    fn spawn(work: impl FnOnce() -> T + Send + 'static) -> Result<Self> {
        let worker = std::thread::Builder::new()
            .name("gemm-batch".into())
            .spawn(work)
            .map_err(|e| Error::NotRun(format!("cannot start a batch thread: {e}")))?;
        Ok(Self { worker: Some(worker) })
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
        BatchHandle::spawn(move || {
            let report = ctx.gemm_strided_batched(&batch, &a, &b, &mut c);
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
        BatchHandle::spawn(move || {
            let mut borrowed: Vec<GroupedItem<'_, A, B, C>> = items
                .iter_mut()
                .map(|it| GroupedItem { problem: it.problem, a: &it.a, b: &it.b, c: &mut it.c })
                .collect();
            let report = ctx.gemm_grouped(&mut borrowed);
            drop(borrowed);
            (items, report)
        })
    }
}
