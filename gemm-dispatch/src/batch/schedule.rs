//! Running many GEMMs over the devices of a context: nothing lost, nothing run twice.
//!
//! Jobs are ordered by estimated cost (longest first, the LPT rule, which keeps devices evenly
//! loaded for mixed sizes) and pulled by one worker per device. A job whose device fails with a
//! retryable error goes back to the queue marked with the devices that tried it, so another device
//! runs it; when every device has tried it, its last error is its result. A panic inside a backend
//! becomes an error for that job only. Every job ends with exactly one result.
//!
//! Each outcome also says when its device started and finished it and in which order outcomes
//! were produced ([`JobTrace`]): what a user needs to see how a batch spread over the devices
//! (a Gantt chart, per-device utilisation) without a profiler. Recording it costs two clock reads
//! per device call and does not change which device takes which job.

use crate::backends::{Backend, Job};
use crate::error::{Error, Result};
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where and how a job ended.
#[derive(Clone, Debug, PartialEq)]
pub struct JobOutcome {
    pub result: Result<()>,
    /// The device that produced the result (the last one tried for a failure).
    pub device: Option<usize>,
    /// How many devices ran it.
    pub attempts: u32,
    /// When and in what order it finished; `None` for an item that never ran (refused by
    /// validation before the batch started, or lost, which the scheduler never does).
    pub trace: Option<JobTrace>,
}

/// When a job ran on the device that produced its result, and in what order it finished.
///
/// Times are measured from the start of the batch (the call into the scheduler). For a retried
/// job they are those of its final attempt, on [`JobOutcome::device`]. A device that takes
/// several jobs per call (GPU streams overlapping copies and kernels) reports the whole call's
/// interval for each job of it, because the jobs genuinely share that time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobTrace {
    /// When the device call that produced the result began.
    pub started: Duration,
    /// When that call returned.
    pub finished: Duration,
    /// 0 for the first outcome the scheduler recorded, 1 for the next, ... The ranks of a batch's
    /// run items are a permutation of `0..run_items`.
    pub rank: usize,
}

impl JobTrace {
    /// How long the device call took.
    pub fn elapsed(&self) -> Duration {
        self.finished.saturating_sub(self.started)
    }
}

/// A batch's outcomes (one per job, in job order) and its wall time.
#[derive(Clone, Debug, PartialEq)]
pub struct Traced {
    pub outcomes: Vec<JobOutcome>,
    /// From the call into the scheduler to its return (every worker joined).
    pub wall: Duration,
}

/// Called once per job as soon as its outcome is final, with the job's index and outcome.
/// It runs on a device's worker thread, outside the scheduler's lock (a slow observer delays
/// that device only); calls from different devices may interleave, so ranks can arrive out of
/// order. A panicking observer is ignored.
pub type Observer<'o> = &'o (dyn Fn(usize, &JobOutcome) + Sync);

struct Queued<'a> {
    index: usize,
    job: Job<'a>,
    tried: u64,
}

struct State<'a> {
    queue: VecDeque<Queued<'a>>,
    in_flight: usize,
    outcomes: Vec<Option<JobOutcome>>,
    /// The rank the next final outcome gets.
    next_rank: usize,
}

/// Runs one job on one device, turning a panic into an error.
///
/// The device's name is asked for only after a panic: `info()` may be slow (the host backend
/// reads /proc/cpuinfo, tens of microseconds), which would dwarf a tiny GEMM.
pub(crate) fn run_one(device: &dyn Backend, job: &mut Job<'_>) -> Result<()> {
    catch_unwind(AssertUnwindSafe(|| device.gemm(&job.problem, job.a, job.b, job.c)))
        .unwrap_or_else(|_| Err(Error::Device { device: device.info().name, message: "the backend panicked".into() }))
}

/// Runs a chunk of jobs on one device, turning a panic (or a wrong number of results) into an
/// error for every job of the chunk.
fn run_chunk(device: &dyn Backend, jobs: &mut [Job<'_>]) -> Vec<Result<()>> {
    if let [job] = jobs {
        return vec![run_one(device, job)];
    }
    let n = jobs.len();
    let fail = |why: &str| vec![Err(Error::Device { device: device.info().name, message: why.into() }); n];
    match catch_unwind(AssertUnwindSafe(|| device.gemm_many(jobs))) {
        Ok(results) if results.len() == n => results,
        Ok(_) => fail("the backend returned a wrong number of results"),
        Err(_) => fail("the backend panicked"),
    }
}

/// Runs `jobs` on `devices` (at most 64) and returns one outcome per job, in job order.
pub fn run(devices: &[Arc<dyn Backend>], jobs: Vec<Job<'_>>) -> Vec<JobOutcome> {
    run_traced(devices, jobs, None).outcomes
}

/// [`run`], also returning the batch's wall time and calling `observer` (if any) as each job's
/// outcome becomes final.
pub fn run_traced(devices: &[Arc<dyn Backend>], jobs: Vec<Job<'_>>, observer: Option<Observer<'_>>) -> Traced {
    assert!(!devices.is_empty() && devices.len() <= 64, "1..=64 devices");
    let batch_start = Instant::now();
    if jobs.is_empty() {
        return Traced { outcomes: Vec::new(), wall: batch_start.elapsed() };
    }
    let n = jobs.len();
    let mut order: Vec<(f64, usize, Job<'_>)> =
        jobs.into_iter().enumerate().map(|(i, j)| (devices[0].estimate_seconds(&j.problem), i, j)).collect();
    order.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
    let state = Mutex::new(State {
        queue: order.into_iter().map(|(_, index, job)| Queued { index, job, tried: 0 }).collect(),
        in_flight: 0,
        outcomes: vec![None; n],
        next_rank: 0,
    });
    let wake = Condvar::new();
    let all_devices: u64 = if devices.len() == 64 { u64::MAX } else { (1u64 << devices.len()) - 1 };

    let worker = |d: usize| {
        let bit = 1u64 << d;
        let mut guard = state.lock();
        loop {
            let want = devices[d].jobs_per_call().max(1);
            let mut chunk: Vec<Queued<'_>> = Vec::new();
            let mut i = 0;
            while i < guard.queue.len() && chunk.len() < want {
                if guard.queue[i].tried & bit == 0 {
                    chunk.push(guard.queue.remove(i).expect("index is in range"));
                } else {
                    i += 1;
                }
            }
            match chunk.is_empty() {
                false => {
                    guard.in_flight += chunk.len();
                    drop(guard);
                    let mut jobs: Vec<Job<'_>> = Vec::with_capacity(chunk.len());
                    let mut meta: Vec<(usize, u64)> = Vec::with_capacity(chunk.len());
                    for q in chunk {
                        meta.push((q.index, q.tried | bit));
                        jobs.push(q.job);
                    }
                    let started = batch_start.elapsed();
                    let results = run_chunk(devices[d].as_ref(), &mut jobs);
                    let finished = batch_start.elapsed();
                    guard = state.lock();
                    guard.in_flight -= jobs.len();
                    let mut done: Vec<(usize, JobOutcome)> = Vec::new();
                    for ((job, (index, tried)), result) in jobs.into_iter().zip(meta).zip(results) {
                        let attempts = tried.count_ones();
                        match result {
                            Err(e) if e.is_retryable() && tried != all_devices => {
                                guard.queue.push_front(Queued { index, job, tried });
                            }
                            result => {
                                let rank = guard.next_rank;
                                guard.next_rank += 1;
                                let trace = Some(JobTrace { started, finished, rank });
                                let outcome = JobOutcome { result, device: Some(d), attempts, trace };
                                if observer.is_some() {
                                    done.push((index, outcome.clone()));
                                }
                                guard.outcomes[index] = Some(outcome);
                            }
                        }
                    }
                    wake.notify_all();
                    if let (Some(observe), false) = (observer, done.is_empty()) {
                        drop(guard);
                        for (index, outcome) in &done {
                            let _ = catch_unwind(AssertUnwindSafe(|| observe(*index, outcome)));
                        }
                        guard = state.lock();
                    }
                }
                true if guard.queue.is_empty() && guard.in_flight == 0 => {
                    wake.notify_all();
                    return;
                }
                true => wake.wait(&mut guard),
            }
        }
    };

    if devices.len() == 1 {
        worker(0);
    } else {
        std::thread::scope(|s| {
            for d in 0..devices.len() {
                let worker = &worker;
                std::thread::Builder::new()
                    .name(format!("gemm-device-{d}"))
                    .spawn_scoped(s, move || worker(d))
                    .expect("spawning a device worker thread");
            }
        });
    }
    let outcomes = state
        .into_inner()
        .outcomes
        .into_iter()
        .map(|o| {
            o.unwrap_or(JobOutcome {
                result: Err(Error::NotRun("lost by the scheduler".into())),
                device: None,
                attempts: 0,
                trace: None,
            })
        })
        .collect();
    Traced { outcomes, wall: batch_start.elapsed() }
}
