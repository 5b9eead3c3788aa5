//! Running many GEMMs over the devices of a context: nothing lost, nothing run twice.
//!
//! Jobs are ordered by estimated cost (longest first, the LPT rule, which keeps devices evenly
//! loaded for mixed sizes) and pulled by one worker per device. A job whose device fails with a
//! retryable error goes back to the queue marked with the devices that tried it, so another device
//! runs it; when every device has tried it, its last error is its result. A panic inside a backend
//! becomes an error for that job only. Every job ends with exactly one result.

use crate::backend::Backend;
use crate::error::{Error, Result};
use gemm_core::GemmProblem;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// One GEMM on byte buffers, validated by the caller.
pub struct Job<'a> {
    pub problem: GemmProblem,
    pub a: &'a [u8],
    pub b: &'a [u8],
    pub c: &'a mut [u8],
}

/// Where and how a job ended.
#[derive(Clone, Debug, PartialEq)]
pub struct JobOutcome {
    pub result: Result<()>,
    /// The device that produced the result (the last one tried for a failure).
    pub device: Option<usize>,
    /// How many devices ran it.
    pub attempts: u32,
}

struct Queued<'a> {
    index: usize,
    job: Job<'a>,
    tried: u64,
}

struct State<'a> {
    queue: VecDeque<Queued<'a>>,
    in_flight: usize,
    outcomes: Vec<Option<JobOutcome>>,
}

/// Runs one job on one device, turning a panic into an error.
pub(crate) fn run_one(device: &dyn Backend, job: &mut Job<'_>) -> Result<()> {
    let name = device.info().name;
    catch_unwind(AssertUnwindSafe(|| device.gemm(&job.problem, job.a, job.b, job.c)))
        .unwrap_or_else(|_| Err(Error::Device { device: name, message: "the backend panicked".into() }))
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
    assert!(!devices.is_empty() && devices.len() <= 64, "1..=64 devices");
    if jobs.is_empty() {
        return Vec::new();
    }
    let n = jobs.len();
    let mut order: Vec<(f64, usize, Job<'_>)> =
        jobs.into_iter().enumerate().map(|(i, j)| (devices[0].estimate_seconds(&j.problem), i, j)).collect();
    order.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
    let state = Mutex::new(State {
        queue: order.into_iter().map(|(_, index, job)| Queued { index, job, tried: 0 }).collect(),
        in_flight: 0,
        outcomes: vec![None; n],
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
                    let results = run_chunk(devices[d].as_ref(), &mut jobs);
                    guard = state.lock();
                    guard.in_flight -= jobs.len();
                    for ((job, (index, tried)), result) in jobs.into_iter().zip(meta).zip(results) {
                        let attempts = tried.count_ones();
                        match result {
                            Err(e) if e.is_retryable() && tried != all_devices => {
                                guard.queue.push_front(Queued { index, job, tried });
                            }
                            result => {
                                guard.outcomes[index] = Some(JobOutcome { result, device: Some(d), attempts });
                            }
                        }
                    }
                    wake.notify_all();
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
    state
        .into_inner()
        .outcomes
        .into_iter()
        .map(|o| {
            o.unwrap_or(JobOutcome {
                result: Err(Error::NotRun("lost by the scheduler".into())),
                device: None,
                attempts: 0,
            })
        })
        .collect()
}
