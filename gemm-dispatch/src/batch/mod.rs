//! Streaming a batch of GEMMs over a context's devices ([`schedule`]): one worker per device,
//! the largest jobs first, a failed device's jobs retried on another, and one outcome per job,
//! in order: nothing submitted is lost.

pub mod schedule;
