//! Streams and events.
//!
//! Every stream, the null stream included, has its own host thread that runs its queue in
//! order, so work on different streams really overlaps and a missing dependency shows up.
//! With `jitter_us` set each operation is preceded by a seeded random sleep.
//!
//! The null stream follows HIP's legacy default-stream semantics (HIP programming guide,
//! "Stream synchronization"; CUDA "Default stream", legacy behaviour): work queued on it waits
//! for all earlier work of the device's blocking streams, and work queued on a blocking stream
//! waits for all earlier work of the null stream. Streams created with
//! `hipStreamNonBlocking` do neither.
//!
//! A failed operation leaves an error on its stream; later operations of that stream are
//! skipped (a real queue stops at a fault) until a synchronising call (`hipStreamSynchronize`,
//! `hipStreamQuery`, `hipDeviceSynchronize`, or a `hipMemcpy` on the null stream) reports it,
//! which clears it. Events recorded after the failure report it too.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::Config;
use crate::error::HipError;
use crate::runtime::{registry, Dev};

/// `hipStreamNonBlocking`.
pub const STREAM_NON_BLOCKING: u32 = 0x1;

/// Work a stream runs.
pub type Work = Box<dyn FnOnce() -> Result<(), HipError> + Send>;

enum Job {
    /// Wait until `stream` has completed operation `seq`.
    Wait(Arc<Stream>, u64),
    /// Run host-side work (a copy, a launch, an event marker, a collective part).
    Run(Work),
}

#[derive(Debug, Default)]
struct Progress {
    submitted: u64,
    completed: u64,
    /// The first failure not yet reported, with the operation number that failed.
    error: Option<(u64, HipError)>,
}

/// One stream: a queue and the thread that runs it.
pub struct Stream {
    /// Unique id.
    pub id: u64,
    /// Device ordinal.
    pub device: usize,
    /// Creation flags.
    pub flags: u32,
    /// Whether this is the device's null stream.
    pub is_null: bool,
    tx: Mutex<Option<mpsc::Sender<(u64, Job)>>>,
    progress: Mutex<Progress>,
    cv: Condvar,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream").field("id", &self.id).field("device", &self.device).finish()
    }
}

impl Stream {
    /// Creates a stream and starts its worker thread.
    pub fn spawn(device: usize, flags: u32, is_null: bool, config: &Config) -> Arc<Self> {
        let id = registry::next_id();
        let (tx, rx) = mpsc::channel::<(u64, Job)>();
        let s = Arc::new(Self {
            id,
            device,
            flags,
            is_null,
            tx: Mutex::new(Some(tx)),
            progress: Mutex::new(Progress::default()),
            cv: Condvar::new(),
        });
        let weak = Arc::downgrade(&s);
        let jitter = config.jitter_us;
        // Per-stream jitter seeded from the machine seed and the stream's creation order.
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ id.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let name = if is_null { format!("hip-null-{device}") } else { format!("hip-stream-{id}") };
        let spawned = std::thread::Builder::new().name(name).spawn(move || {
            for (seq, job) in rx {
                if jitter > 0 {
                    std::thread::sleep(Duration::from_micros(rng.gen_range(0..=jitter)));
                }
                let Some(me) = weak.upgrade() else { return };
                let skip = me.progress.lock().error.is_some();
                let result = if skip {
                    Ok(())
                } else {
                    match job {
                        Job::Wait(other, upto) => {
                            other.wait_for(upto);
                            Ok(())
                        }
                        Job::Run(work) => std::panic::catch_unwind(AssertUnwindSafe(work))
                            .unwrap_or_else(|_| Err(HipError::LaunchFailure("the emulator panicked".into()))),
                    }
                };
                let mut p = me.progress.lock();
                if let Err(e) = result {
                    p.error.get_or_insert((seq, e));
                }
                p.completed = seq;
                me.cv.notify_all();
            }
        });
        if spawned.is_err() {
            // Without a worker nothing would ever complete: fail every operation at once.
            s.progress.lock().error = Some((0, HipError::Unknown("cannot start a stream thread".into())));
            *s.tx.lock() = None;
        }
        s
    }

    fn enqueue(&self, job: Job) -> u64 {
        let mut p = self.progress.lock();
        p.submitted += 1;
        let seq = p.submitted;
        let sent = self.tx.lock().as_ref().map(|tx| tx.send((seq, job)).is_ok()).unwrap_or(false);
        if !sent {
            p.error.get_or_insert((seq, HipError::InvalidHandle("the stream was destroyed".into())));
            p.completed = seq;
            self.cv.notify_all();
        }
        seq
    }

    /// Operations queued so far.
    pub fn submitted(&self) -> u64 {
        self.progress.lock().submitted
    }

    /// Whether every queued operation has finished.
    pub fn idle(&self) -> bool {
        let p = self.progress.lock();
        p.completed >= p.submitted
    }

    /// Waits until operation `seq` has finished.
    pub fn wait_for(&self, seq: u64) {
        let mut p = self.progress.lock();
        while p.completed < seq {
            self.cv.wait(&mut p);
        }
    }

    /// Waits until operation `seq` has finished, at most `timeout`; `false` on timeout.
    pub fn wait_for_timeout(&self, seq: u64, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut p = self.progress.lock();
        while p.completed < seq {
            if self.cv.wait_until(&mut p, deadline).timed_out() {
                return p.completed >= seq;
            }
        }
        true
    }

    /// Waits for everything queued so far, keeping any error.
    pub fn wait_idle(&self) {
        let upto = self.submitted();
        self.wait_for(upto);
    }

    /// `hipStreamSynchronize`: waits, then reports and clears the stream's error.
    pub fn synchronize(&self) -> Result<(), HipError> {
        self.wait_idle();
        self.take_error()
    }

    /// Waits for operation `seq`, then reports and clears the stream's error.
    pub fn synchronize_upto(&self, seq: u64) -> Result<(), HipError> {
        self.wait_for(seq);
        self.take_error()
    }

    /// Reports and clears the pending error.
    pub fn take_error(&self) -> Result<(), HipError> {
        match self.progress.lock().error.take() {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    }

    /// `hipStreamQuery`: `hipErrorNotReady` while work is pending; a pending error is
    /// reported (and cleared) once the queue has drained.
    pub fn query(&self) -> Result<(), HipError> {
        if !self.idle() {
            return Err(HipError::NotReady);
        }
        self.take_error()
    }

    /// The unreported error of an operation numbered `seq` or earlier.
    pub fn error_upto(&self, seq: u64) -> Option<HipError> {
        self.progress.lock().error.as_ref().filter(|(at, _)| *at <= seq).map(|(_, e)| e.clone())
    }

    /// Stops accepting work; the worker finishes what is queued and exits.
    pub fn close(&self) {
        *self.tx.lock() = None;
    }

    fn non_blocking(&self) -> bool {
        self.flags & STREAM_NON_BLOCKING != 0
    }
}

/// Queues `work` on `stream` of `dev` with the null-stream rules; returns its operation
/// number.
pub fn submit(dev: &Dev, stream: &Arc<Stream>, work: Work) -> u64 {
    submit_job(dev, stream, Job::Run(work))
}

/// Queues a wait for operation `seq` of `other` on `stream` (`hipStreamWaitEvent`).
pub fn submit_wait(dev: &Dev, stream: &Arc<Stream>, other: Arc<Stream>, seq: u64) -> u64 {
    submit_job(dev, stream, Job::Wait(other, seq))
}

fn submit_job(dev: &Dev, stream: &Arc<Stream>, job: Job) -> u64 {
    let _order = dev.submit_lock.lock();
    if stream.is_null {
        let blocking: Vec<Arc<Stream>> = {
            let mut list = dev.streams.lock();
            list.retain(|w| w.strong_count() > 0);
            list.iter().filter_map(|w| w.upgrade()).collect()
        };
        for s in blocking {
            let upto = s.submitted();
            if !s.idle() {
                stream.enqueue(Job::Wait(s, upto));
            }
        }
    } else if !stream.non_blocking() && !dev.null_stream.idle() {
        let upto = dev.null_stream.submitted();
        stream.enqueue(Job::Wait(dev.null_stream.clone(), upto));
    }
    stream.enqueue(job)
}

/// `hipEventDisableTiming`.
pub const EVENT_DISABLE_TIMING: u32 = 0x2;
/// Flags `hipEventCreateWithFlags` accepts: `hipEventDefault`, `hipEventBlockingSync` (1),
/// `hipEventDisableTiming` (2), `hipEventInterprocess` (4), and AMD's
/// `hipEventReleaseToDevice`/`hipEventReleaseToSystem` (0x40000000/0x80000000).
pub const EVENT_FLAGS: u32 = 0x1 | 0x2 | 0x4 | 0x4000_0000 | 0x8000_0000;

/// Where an event was last recorded.
#[derive(Clone)]
pub struct Record {
    /// The stream.
    pub stream: Arc<Stream>,
    /// The marker's operation number.
    pub seq: u64,
    /// When the marker ran.
    pub time: Arc<Mutex<Option<Instant>>>,
}

/// One event.
pub struct Event {
    /// Device the event was created on.
    pub device: usize,
    /// Creation flags.
    pub flags: u32,
    /// The last record, if any.
    pub record: Mutex<Option<Record>>,
}

impl Event {
    /// `hipEventQuery`: success when never recorded or completed, `hipErrorNotReady` while
    /// pending, the stream's error when the recorded work failed.
    pub fn query(&self) -> Result<(), HipError> {
        let Some(r) = self.record.lock().clone() else { return Ok(()) };
        if !r.stream.wait_for_timeout(r.seq, Duration::ZERO) {
            return Err(HipError::NotReady);
        }
        r.stream.error_upto(r.seq).map_or(Ok(()), Err)
    }

    /// `hipEventSynchronize`: a never-recorded event is complete at once (HIP and CUDA docs:
    /// "If hipEventRecord() has not been called on event, this function returns immediately").
    pub fn synchronize(&self) -> Result<(), HipError> {
        let Some(r) = self.record.lock().clone() else { return Ok(()) };
        r.stream.wait_for(r.seq);
        r.stream.error_upto(r.seq).map_or(Ok(()), Err)
    }
}
